/* Parsing of -e lists in perf's event syntax (see eventlist.h). A hand-written
 * scanner: an item ends at the next comma outside {...} and /.../. */
#include "cli/eventlist.h"

#include <ctype.h>
#include <string.h>
#include <strings.h>

#include "common/number.h"

#define PERF_TYPE_HARDWARE 0
#define PERF_TYPE_RAW 4

struct scan {
	struct eventlist *el;
	const char *arg, *cmd;
};

static int fail(const struct scan *s, const char *what, int len, const char *part, const char *hint)
{
	fprintf(stderr, "%s: %s '%.*s' in -e '%s'%s\n", s->cmd, what, len, part, s->arg, hint);
	return -1;
}

#define LIST_HINT " (`pmusim list` shows the modelled events)"

/* Length of the event starting at p: to the next ',' or '}' outside /.../. */
static size_t event_len(const char *p)
{
	size_t n = strcspn(p, ",/{}");
	if (p[n] != '/')
		return n;
	n++;
	n += strcspn(p + n, "/");
	if (p[n] == '/')
		n++;
	return n + strcspn(p + n, ",{}/");
}

static int is_raw(const char *p, size_t n)
{
	if (n < 2 || (p[0] != 'r' && p[0] != 'R'))
		return 0;
	for (size_t i = 1; i < n; i++)
		if (!isxdigit((unsigned char)p[i]))
			return 0;
	return n <= 17;
}

/* The event of a raw config (umask << 8 | event select); 0 or -1 (printed). */
static int raw_event(const struct scan *s, uint64_t config, const char *part, int len, enum pmu_event *ev)
{
	if (pmu_event_by_encoding(config, ev) == 0)
		return 0;
	char hint[160];
	snprintf(hint, sizeof(hint), ": event 0x%02llx, umask 0x%02llx%s is not a modelled encoding%s",
		 (unsigned long long)(config & 0xff), (unsigned long long)((config >> 8) & 0xff),
		 config >> 16 ? " with other bits set" : "", LIST_HINT);
	return fail(s, "raw event", len, part, hint);
}

struct terms {
	int has_event, has_umask, has_config, has_named;
	uint64_t event, umask, config, period;
	enum pmu_event named;
	const char *name;
	size_t name_len;
};

/* One term of pmu/terms/: KEY or KEY=VALUE, VALUE also as a number (st). */
struct term {
	const char *text, *eq;  /* eq: its '=', NULL without one */
	size_t n, klen;         /* the term's length, the key's */
	char val[64];
	uint64_t v;
	int st;                 /* number_parse's verdict on val (NUMBER_SYNTAX without '=') */
};

/* The term at *i of the blen bytes at body into t, *i moved past it and its
 * comma: 1, or 0 at the end. */
static int next_term(const char *body, size_t blen, size_t *i, struct term *t)
{
	if (*i >= blen)
		return 0;
	memset(t, 0, sizeof(*t));
	t->text = body + *i;
	t->n = strcspn(t->text, ",/");
	if (t->n > blen - *i)
		t->n = blen - *i;
	t->eq = memchr(t->text, '=', t->n);
	t->klen = t->eq ? (size_t)(t->eq - t->text) : t->n;
	t->st = NUMBER_SYNTAX;
	if (t->eq) {
		snprintf(t->val, sizeof(t->val), "%.*s", (int)(t->n - t->klen - 1), t->eq + 1);
		t->st = number_parse(t->val, &t->v);
	}
	*i += t->n + (*i + t->n < blen);
	return 1;
}

/* The terms between the slashes of pmu/terms/ or NAME/terms/. */
static int parse_terms(const struct scan *s, const char *body, size_t blen, int pmu, struct terms *t)
{
	memset(t, 0, sizeof(*t));
	if (blen == 0)
		return fail(s, "no terms between the slashes", (int)blen, body, "");
	struct term tm;
	for (size_t i = 0; next_term(body, blen, &i, &tm);) {
		const char *term = tm.text, *eq = tm.eq;
		size_t n = tm.n, klen = tm.klen;
		uint64_t v = tm.v;
		int st = tm.st;
#define KEY(k) (klen == strlen(k) && strncasecmp(term, k, klen) == 0)
		if (eq && KEY("name")) {
			t->name = eq + 1, t->name_len = n - klen - 1;
		} else if (eq && (KEY("event") || KEY("umask") || KEY("config") || KEY("period"))) {
			if (!pmu && !KEY("period"))
				return fail(s, "term", (int)n, term, ": a named event takes period= and name= only");
			if (st != NUMBER_OK) {
				char why[96];
				snprintf(why, sizeof(why), ": the value %s", number_strerror(st));
				return fail(s, "term", (int)n, term, why);
			}
			if (KEY("event"))
				t->has_event = 1, t->event = v;
			else if (KEY("umask"))
				t->has_umask = 1, t->umask = v;
			else if (KEY("config"))
				t->has_config = 1, t->config = v;
			else if (v == 0)
				return fail(s, "term", (int)n, term, ": the period must be positive");
			else
				t->period = v;
		} else if (!eq && pmu && !t->has_named && pmu_event_lookup(term, n, &t->named) == 0) {
			t->has_named = 1;
		} else {
			return fail(s, eq ? "unsupported term" : "unknown event", (int)n, term,
				    pmu ? " (terms: event=, umask=, config=, period=, name=, or an event name)"
					: " (terms: period=, name=)");
		}
#undef KEY
	}
	return 0;
}

/* ibs_op/TERMS/[MODS]: the op sampler (body: the terms, possibly empty). */
static int parse_ibs_op(const struct scan *s, const char *text, size_t len, const char *body, size_t blen,
			const char *mods, size_t mlen)
{
	struct eventlist *el = s->el;
	if (el->op)
		return fail(s, "a second", (int)len, text, ": the model has one op sampling unit");
	struct term tm;
	for (size_t i = 0; next_term(body, blen, &i, &tm);) {
		const char *term = tm.text, *eq = tm.eq;
		size_t n = tm.n, klen = tm.klen;
		uint64_t v = tm.v;
#define KEY(k) (klen == strlen(k) && strncasecmp(term, k, klen) == 0)
		if (eq && KEY("name")) {
			snprintf(el->op_name, EVENTLIST_NAME_MAX, "%.*s", (int)(n - klen - 1), eq + 1);
		} else if (KEY("cnt_ctl") || KEY("config") || KEY("period")) {
			if (!eq)
				v = 1; /* perf: a format term alone is set to 1 */
			else if (tm.st != NUMBER_OK)
				return fail(s, "term", (int)n, term, ": not a number");
			if (KEY("cnt_ctl") && v > 1)
				return fail(s, "term", (int)n, term, ": cnt_ctl is one bit (config:19)");
			if (KEY("config") && (v & ~(1ULL << IBS_OP_CNT_CTL_BIT)))
				return fail(s, "term", (int)n, term,
					    ": only bit 19 (cnt_ctl) is modelled; IbsOpMaxCnt comes from the period");
			if (KEY("period") && !v)
				return fail(s, "term", (int)n, term, ": the period must be positive");
			if (KEY("cnt_ctl"))
				el->op_cnt_ctl = (int)v;
			else if (KEY("config"))
				el->op_cnt_ctl = v != 0;
			else
				el->op_period = v;
		} else if (KEY("l3missonly")) {
			return fail(s, "term", (int)n, term, ": the model has no caches (an op never misses L3)");
		} else {
			return fail(s, "unsupported term", (int)n, term, " (ibs_op terms: cnt_ctl, config, period, name)");
		}
#undef KEY
	}
	for (size_t i = 0; i < mlen; i++)
		if (mods[i] != 'u' && mods[i] != 'p')
			return fail(s, "unknown modifier", 1, mods + i,
				    mods[i] == 'k' || mods[i] == 'h' ? ": the model runs user code only (modifiers: u, p)"
								     : " (modifiers: u, p)");
	if (!el->op_name[0])
		snprintf(el->op_name, EVENTLIST_NAME_MAX, "%.*s", (int)len, text);
	el->op = 1;
	return 0;
}

/* One event (text of length len, no group braces); gmods: the group's modifiers. */
static int parse_event(const struct scan *s, const char *text, size_t len, const char *gmods, size_t gmlen)
{
	struct eventlist *el = s->el;
	if (len == 0)
		return fail(s, "an empty event", 0, text, " (two commas, or a comma at an end)");
	if (len >= EVENTLIST_NAME_MAX)
		return fail(s, "an event name too long", (int)len, text, "");
	if (el->n == PMU_MAX_COUNTERS) {
		fprintf(stderr, "%s: too many events in -e '%s' (at most %d)\n", s->cmd, s->arg, PMU_MAX_COUNTERS);
		return -1;
	}
	size_t i = el->n;
	struct pmu_event_spec *sp = &el->spec[i];
	memset(sp, 0, sizeof(*sp));
	size_t head = strcspn(text, "/:");
	if (head > len)
		head = len;
	const char *mods = text + len, *body = NULL;
	size_t blen = 0;
	if (head < len && text[head] == '/') {
		body = text + head + 1;
		const char *close = memchr(body, '/', len - head - 1);
		if (!close)
			return fail(s, "no closing '/' after", (int)(len - head), text + head, "");
		blen = (size_t)(close - body);
		mods = close + 1 + (close + 1 < text + len && close[1] == ':');
	} else if (head < len) { /* ':' */
		mods = text + head + 1;
		if (mods == text + len)
			return fail(s, "no modifier after ':' of", (int)len, text, "");
	}
	size_t mlen = (size_t)(text + len - mods);
	if (head == 0)
		return fail(s, "no event name in", (int)len, text, "");
	if (head == 6 && strncasecmp(text, "ibs_op", 6) == 0) {
		if (!body)
			return fail(s, "event", (int)len, text, ": the op sampler is ibs_op// (or ibs_op/cnt_ctl=1/)");
		char m[64];
		snprintf(m, sizeof(m), "%.*s%.*s", (int)mlen, mods, (int)gmlen, gmods);
		return parse_ibs_op(s, text, len, body, blen, m, strlen(m));
	}

	struct terms t = {0};
	int pmu = body && head == 3 && strncasecmp(text, "cpu", 3) == 0;
	enum pmu_event named;
	if (body && !pmu && pmu_event_lookup(text, head, &named) < 0)
		return fail(s, "unknown PMU or event", (int)head, text, " (cpu/.../ or an event name before the '/')");
	if (body && parse_terms(s, body, blen, pmu, &t) < 0)
		return -1;
	el->perf_type[i] = PERF_TYPE_RAW;
	if (pmu) {
		if (t.has_named + t.has_event + t.has_config != 1 || (t.has_umask && !t.has_event))
			return fail(s, "event", (int)len, text,
				    ": give one of event= (with umask=), config= or an event name");
		if (t.has_named) {
			sp->ev = t.named;
			el->perf_config[i] = pmu_event_encoding(t.named);
		} else {
			if (t.has_event && (t.event > 0xff || t.umask > 0xff))
				return fail(s, "event", (int)len, text, ": event= and umask= are 8-bit values");
			el->perf_config[i] = t.has_config ? t.config : t.umask << 8 | t.event;
			if (raw_event(s, el->perf_config[i], text, (int)len, &sp->ev) < 0)
				return -1;
		}
	} else if (pmu_event_lookup(text, head, &sp->ev) == 0) {
		const struct pmu_event_desc *d = pmu_event_desc(sp->ev);
		el->perf_type[i] = d->perf_type;
		el->perf_config[i] = d->perf_config;
	} else if (!body && is_raw(text, head)) {
		char hex[20];
		snprintf(hex, sizeof(hex), "0x%.*s", (int)head - 1, text + 1);
		if (number_parse(hex, &el->perf_config[i]) != NUMBER_OK ||
		    raw_event(s, el->perf_config[i], text, (int)head, &sp->ev) < 0)
			return el->perf_config[i] = 0, -1;
	} else {
		return fail(s, "unknown event", (int)head, text, LIST_HINT);
	}
	char m[64];
	const char *bad;
	snprintf(m, sizeof(m), "%.*s%.*s", (int)mlen, mods, (int)gmlen, gmods);
	if (pmu_event_modifiers(m, sp, &bad) < 0)
		return fail(s, "unknown modifier", 1, bad,
			    *bad == 'k' || *bad == 'h'
				    ? ": the model runs user code only (modifiers: u, p, pp, ppp)"
				    : " (modifiers: u, p, pp, ppp)");
	el->period[i] = t.period;
	if (t.name)
		snprintf(el->name[i], EVENTLIST_NAME_MAX, "%.*s", (int)t.name_len, t.name);
	else
		snprintf(el->name[i], EVENTLIST_NAME_MAX, "%.*s", (int)len, text);
	el->n++;
	return 0;
}

/* A group {EV,...}[:MODS] at p (p[0] == '{'); *end: just after it. */
static int parse_group(const struct scan *s, const char *p, const char **end)
{
	const char *close = strchr(p, '}');
	const char *nested = strchr(p + 1, '{');
	if (!close)
		return fail(s, "no closing '}' after", (int)strlen(p), p, "");
	if (nested && nested < close)
		return fail(s, "a group inside a group", (int)(close - nested + 1), nested, "");
	const char *gm = close + 1;
	size_t gmlen = 0;
	if (*gm == ':') {
		gm++;
		gmlen = strcspn(gm, ",{}");
		if (gmlen == 0)
			return fail(s, "no modifier after ':' of", (int)(gm - p), p, "");
	} else if (*gm && *gm != ',') {
		return fail(s, "text after the group", (int)strcspn(gm, ","), gm, " (a ',' or ':MODS' goes there)");
	}
	for (const char *q = p + 1; q < close;) {
		size_t n = event_len(q);
		if (q + n > close)
			n = (size_t)(close - q);
		if (parse_event(s, q, n, gm, gmlen) < 0)
			return -1;
		q += n;
		if (*q == ',' && q + 1 == close)
			return fail(s, "an empty event", 0, q, " (a comma before '}')");
		q += *q == ',';
	}
	if (close == p + 1)
		return fail(s, "an empty group", 2, p, "");
	*end = gm + gmlen;
	return 0;
}

int eventlist_add(struct eventlist *el, const char *arg, const char *cmd)
{
	struct scan s = {el, arg, cmd};
	const char *p = arg;
	for (;;) {
		if (*p == '{') {
			if (parse_group(&s, p, &p) < 0)
				return -1;
		} else if (*p == '}') {
			return fail(&s, "a '}' without '{'", 1, p, "");
		} else {
			size_t n = event_len(p);
			if (parse_event(&s, p, n, "", 0) < 0)
				return -1;
			p += n;
			if (*p == '{' || *p == '}' || *p == '/')
				return fail(&s, "unexpected", 1, p, "");
		}
		if (!*p)
			return 0;
		if (*p != ',')
			return fail(&s, "unexpected", 1, p, "");
		p++;
		if (!*p)
			return fail(&s, "an empty event", 0, p, " (a comma at the end)");
	}
}

void eventlist_print_known(FILE *f)
{
	fprintf(f, "\nList of pre-defined events (to be used in -e):\n\n");
	for (int i = 0; i < EV_COUNT; i++) {
		const struct pmu_event_desc *d = pmu_event_desc((enum pmu_event)i);
		if (d->perf_type != PERF_TYPE_HARDWARE)
			continue;
		char names[128];
		snprintf(names, sizeof(names), "%s%s%s", d->alias2 ? d->alias2 : d->name, d->alias2 ? " OR " : "",
			 d->alias2 ? d->name : "");
		fprintf(f, "  %-50s [Hardware event]\n", names);
	}
	fprintf(f, "  %-50s [Raw hardware event descriptor]\n", "rNNN");
	fprintf(f, "  %-50s [Raw hardware event descriptor]\n", "cpu/t1=v1[,t2=v2,t3 ...]/modifier");
	fprintf(f, "\npmusim (the modelled events; all counts exact, never multiplexed):\n");
	for (int i = 0; i < EV_COUNT; i++) {
		const struct pmu_event_desc *d = pmu_event_desc((enum pmu_event)i);
		uint64_t enc = pmu_event_encoding((enum pmu_event)i);
		const char *intel = d->perf_type == PERF_TYPE_HARDWARE ? d->alias : d->name;
		fprintf(f, "  %s\n       [%c%s%s%s%s%s. cpu/event=0x%02llx,umask=0x%02llx/ = r%04llx]\n",
			intel ? intel : d->name, toupper((unsigned char)d->what[0]), d->what + 1,
			d->perf_type == PERF_TYPE_HARDWARE ? "; also " : "",
			d->perf_type == PERF_TYPE_HARDWARE ? d->name : "", d->amd ? "; AMD: " : "",
			d->amd ? d->amd : "", (unsigned long long)(enc & 0xff),
			(unsigned long long)(enc >> 8), (unsigned long long)enc);
	}
	fprintf(f, "\nModifiers: u (user level: the only one the model runs), p/pp/ppp (precise).\n"
		   "Groups {ev1,ev2} are accepted: pmusim does not multiplex, every event has\n"
		   "a counter of its own and every count is exact.\n");
}
