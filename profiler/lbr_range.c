/* Walking the code between two taken branches (see lbr_range.h). */
#include "profiler/lbr_range.h"

static int passes_through(int kind)
{
	/* control reaches the next instruction: a branch not taken, a system
	 * call (returns after it), a REP string instruction, a cut run */
	return kind == BK_COND || kind == BK_SYSCALL || kind == BK_REP || kind == BK_NONE;
}

int64_t lbr_range_walk(struct binary *b, uint64_t to, uint64_t from, lbr_range_fn fn, void *ctx)
{
	if (!binary_has_code(b, to) || !binary_has_code(b, from))
		return LBR_RANGE_FOREIGN;
	if (from < to)
		return LBR_RANGE_BACKWARDS;
	uint64_t a = to, n = 0;
	for (;;) {
		const struct block_info *r = binary_run(b, a);
		if (!r || r->kind == BK_TRAP)
			return LBR_RANGE_OFF_TEXT;
		if (from >= r->start && from < r->end) {
			if (from != r->term || !br_kind_is_branch(r->kind))
				return LBR_RANGE_NOT_BRANCH;
			if (fn) {
				int e = fn(ctx, r, r->ninsns);
				if (e)
					return e;
			}
			return (int64_t)(n + r->ninsns);
		}
		if (!passes_through(r->kind))
			return LBR_RANGE_UNCOND;
		n += r->ninsns;
		if (n > LBR_RANGE_MAX)
			return LBR_RANGE_TOO_LONG;
		if (fn) {
			int e = fn(ctx, r, r->ninsns);
			if (e)
				return e;
		}
		a = r->end;
	}
}

const char *lbr_range_err_name(int64_t err)
{
	switch (err) {
	case LBR_RANGE_FOREIGN: return "foreign";
	case LBR_RANGE_BACKWARDS: return "backwards";
	case LBR_RANGE_UNCOND: return "unconditional_inside";
	case LBR_RANGE_NOT_BRANCH: return "not_a_branch";
	case LBR_RANGE_TOO_LONG: return "too_long";
	case LBR_RANGE_OFF_TEXT: return "off_text";
	default: return "error";
	}
}
