/* Real Debian programs under pmusim, as a user runs them: each row is a shell command
 * run natively and then under pmusim (the shell, its PATH search and every child
 * process simulated) in the same freshly made directory; the stdout bytes, the exit
 * status and every file left in the directory must be the same. Not in make test. */
#include <check.h>
#include <errno.h>
#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "tests/e2e/e2e_util.h"
#include "tests/unit/run_suite.h"
#include "tests/unit/tmp_dir.h"

struct real_case {
	int line;
	const char *name;  /* program and what the row exercises */
	const char *setup; /* extra input files, made natively after the common ones; NULL: none */
	const char *cmd;   /* run by /bin/sh in the directory */
	int status;        /* the native exit status: a missing program (127) fails the row */
};

/* Input files every row gets, made by the shell alone (nothing of the host's such as
 * /usr/share/dict, which a minimal Debian lacks): text, CSV, JSON, every byte value,
 * three little-endian doubles, two files one edit apart and a small tree. */
static const char common_setup[] =
	"printf '%s\\n' banana apple cherry apple date banana apple fig grape kiwi moon book zoo > words.txt\n"
	"i=0; while [ $i -lt 500 ]; do echo \"$i $(( (i * 7919) % 10007 )) alpha beta $((i * i))\"; i=$((i + 1)); "
	"done > big.txt\n"
	"printf 'bob,30,x\\nalice,25,y\\ncarol,30,z\\ndave,7,w\\n' > data.csv\n"
	"printf '{\"v\":[3,1.5,-2,10],\"name\":\"test\",\"nested\":{\"b\":true,\"a\":null}}\\n' > data.json\n"
	"i=0; while [ $i -lt 256 ]; do printf \"\\\\$(printf %03o $i)\"; i=$((i + 1)); done > bin.dat\n"
	"printf '\\000\\000\\000\\000\\000\\000\\360\\077\\232\\231\\231\\231\\231\\231\\271\\077"
	"\\000\\000\\000\\000\\000\\000\\004\\300' > dbl.bin\n"
	"printf 'a=1\\nid=42 x\\nbad line\\nb=22\\nid=7\\nc=333\\n' > kv.txt\n"
	"seq 1 20 > a.txt; seq 1 20 | sed '5s/.*/five/;12d' > b.txt\n"
	"mkdir -p src/sub && printf 'one\\n' > src/f1 && printf 'two\\n' > src/sub/f2 && seq 100 > src/sub/n.txt\n";

/* Every file gets one fixed time after the setup: archives, make and rsync see the
 * same times natively and under pmusim, whenever each setup ran. */
static const char fix_times[] = "find . -exec touch -h -d @1600000000 {} +\n";

static const char makefile_setup[] =
	"printf 'out2: out1 words.txt\\n\\tcat out1 words.txt > out2\\nout1: data.csv\\n\\techo built > out1\\n' > Makefile";

static const char makefile_j_setup[] =
	"printf 'all: p1 p2 p3 p4\\n\\tcat p1 p2 p3 p4 > all\\np%%:\\n\\tseq $* 5000 | sha256sum > $@\\n' > Makefile";

static const char prog_c_setup[] =
	"printf '#include <math.h>\\n#include <stdio.h>\\n"
	"int main(void) { double s = 0; for (int i = 1; i <= 1000; i++) s += 1.0 / i;\\n"
	"printf(\"%%.17g %%.17g %%.17g %%a\\\\n\", s, sqrt(2.0), sin(1e6), exp(-3.5)); return 0; }\\n' > prog.c";

static const char dot_setup[] = "printf 'digraph G { a -> b; b -> c; a -> c; c -> d [label=\"x\"]; }\\n' > g.dot";

#define KEY "000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f"
#define IV "0f0e0d0c0b0a09080706050403020100"

static const struct real_case cases[] = {
	/* python3: floats, JSON, sorting, hashes, zlib, threads, processes */
	{__LINE__, "python3 float math", NULL,
	 "python3 -c 'import math; print(math.sqrt(2), math.pi * 1e10, 1 / 7, math.exp(1.5), "
	 "sum(i * 0.1 for i in range(1000)), math.lgamma(7.5), repr(2.0 ** -1074), float(\"1e308\") * 10)'", 0},
	{__LINE__, "python3 json and sorting", NULL,
	 "python3 -c 'import json; d = json.load(open(\"data.json\")); "
	 "open(\"out.json\", \"w\").write(json.dumps(d, sort_keys=True, indent=1)); "
	 "print(sorted(d[\"v\"]), sorted(open(\"words.txt\").read().split(), key=lambda w: (len(w), w)))'; cat out.json", 0},
	{__LINE__, "python3 hashlib", NULL,
	 "python3 -c 'import hashlib; b = open(\"big.txt\", \"rb\").read(); "
	 "print(hashlib.sha256(b).hexdigest(), hashlib.md5(b).hexdigest(), hashlib.sha3_256(b).hexdigest(), "
	 "hashlib.blake2b(b).hexdigest())'", 0},
	{__LINE__, "python3 subprocess.run /bin/echo", NULL,
	 "python3 -c 'import subprocess; r = subprocess.run([\"/bin/echo\", \"hi\", \"there\"], capture_output=True); "
	 "print(r.returncode, r.stdout); print(subprocess.run([\"false\"]).returncode)'", 0},
	{__LINE__, "python3 zlib and struct", NULL,
	 "python3 -c 'import zlib, struct; open(\"z.bin\", \"wb\").write(zlib.compress(open(\"big.txt\", \"rb\").read(), 9)); "
	 "print(struct.pack(\"<d\", 1.1).hex(), struct.unpack(\"<3d\", open(\"dbl.bin\", \"rb\").read()), "
	 "zlib.crc32(b\"abc\"))'", 0},
	{__LINE__, "python3 threads", NULL,
	 "python3 -c 'from concurrent.futures import ThreadPoolExecutor as T; "
	 "print(list(T(4).map(lambda n: sum(i * i for i in range(n)), range(0, 40000, 5000))))'", 0},
	{__LINE__, "python3 multiprocessing", NULL,
	 "python3 -c 'import multiprocessing as m\nif __name__ == \"__main__\":\n"
	 "    with m.Pool(2) as p: print(p.map(abs, range(-5, 5)))'", 0},

	/* perl */
	{__LINE__, "perl printf sqrt(2)", NULL,
	 "perl -e 'printf \"%.10f %.3e %.17g %s\\n\", sqrt(2), exp(10), atan2(1, 1) * 4, 1 / 3'", 0},
	{__LINE__, "perl regex", NULL, "perl -ne 'print \"$1:$2\\n\" if /^(\\w+)=(\\d+)\\b/' kv.txt", 0},
	{__LINE__, "perl sort", NULL,
	 "perl -e 'print join(\",\", sort { $a <=> $b } map { ($_ * 7919) % 1000 } 1 .. 50), \"\\n\"'; "
	 "perl -e 'print sort { lc($b) cmp lc($a) } <>' words.txt", 0},

	/* gawk */
	{__LINE__, "gawk floating point printf", NULL,
	 "gawk 'BEGIN { for (i = 1; i <= 10; i++) printf \"%.6f %e %g\\n\", i / 3, exp(i), sin(i) }'", 0},
	{__LINE__, "gawk associative arrays", NULL,
	 "gawk '{ c[$1]++ } END { PROCINFO[\"sorted_in\"] = \"@ind_str_asc\"; for (w in c) print w, c[w] }' words.txt; "
	 "gawk '{ s += $2 } END { printf \"%.4f\\n\", s / NR }' big.txt", 0},

	/* text tools */
	{__LINE__, "sed", NULL, "sed -e 's/[aeiou]/#/g' -e '3d' words.txt > out.txt; sed -n '$=' out.txt; "
				"sed -i 's/a/A/g' words.txt; cat words.txt", 0},
	{__LINE__, "grep", NULL, "grep -n -E 'o{2}|^b' words.txt; grep -c 77 big.txt; grep -v -w alpha big.txt; echo $?", 0},
	{__LINE__, "grep -P (PCRE JIT)", NULL, "grep -oP '(?<=id=)\\d+' kv.txt; grep -P '^\\d+ (\\d)\\1' big.txt", 0},
	{__LINE__, "sort", NULL, "sort -t, -k2,2n -k1,1r data.csv; sort -n -k2 big.txt | head -5; sort -R --random-source=big.txt words.txt", 0},
	{__LINE__, "uniq", NULL, "sort words.txt | uniq -c | sort -k1,1nr -k2 | head -5; sort words.txt | uniq -d", 0},
	{__LINE__, "tr", NULL, "tr 'a-z' 'A-Z' < words.txt | tr -d '\\n' | wc -c; tr -s 'p' < words.txt | tr -cd 'a-z\\n'", 0},
	{__LINE__, "cut and wc", NULL, "cut -d, -f2,3 data.csv; cut -c3-7 big.txt | wc -l -w -c; wc big.txt words.txt", 0},
	{__LINE__, "head and tail", NULL, "head -c 100 big.txt | tail -n 3; tail -c 50 big.txt; head -n -495 big.txt; tail -n +498 big.txt", 0},
	{__LINE__, "split, cat, tac, nl, fold", NULL,
	 "split -l 100 big.txt part_ && cat part_* | cmp - big.txt && ls -1 part_*; tac words.txt | nl | fold -w 7", 0},
	{__LINE__, "join, paste, comm", NULL,
	 "sort a.txt > a.s; sort b.txt > b.s; join a.s b.s | head -3; comm -3 a.s b.s; paste -d: a.txt b.txt | tail -4", 0},
	{__LINE__, "shuf with a fixed source, numfmt", NULL,
	 "shuf -n 5 --random-source=big.txt words.txt; numfmt --to=iec 123456789 1000 999999999999; numfmt --from=si 1.5M", 0},

	/* checksums and encodings */
	{__LINE__, "md5sum, sha*sum, b2sum, cksum", NULL,
	 "md5sum big.txt words.txt; sha256sum big.txt; sha1sum bin.dat; sha512sum data.json; b2sum big.txt; cksum big.txt; sum big.txt", 0},
	{__LINE__, "base64 round trip", NULL, "base64 big.txt > b64.txt; base64 -d b64.txt | cmp - big.txt && echo same; base64 -w 20 bin.dat | tail -2; base32 words.txt | head -2", 0},
	{__LINE__, "od", NULL, "od -A x -t x1z -N 64 bin.dat; od -t f8 dbl.bin; od -t d4 -N 16 bin.dat; od -c -j 250 bin.dat", 0},
	{__LINE__, "xxd", NULL, "xxd bin.dat | head -4; xxd -p bin.dat | xxd -r -p > back.dat; cmp bin.dat back.dat && echo ok; xxd -i data.csv", 0},

	/* arithmetic */
	{__LINE__, "bc -l", NULL, "echo 'scale=50; 4*a(1); sqrt(2); 2^200; e(1); l(10)' | bc -l", 0},
	{__LINE__, "dc", NULL, "dc -e '20 k 2 v p 3 40 ^ p 1 7 / p'", 0},
	{__LINE__, "expr, seq, factor", NULL,
	 "expr 123456789 \\* 987654321; expr length hello; seq -w 0.5 0.25 3; seq -f '%.3e' 1 0.7 4; "
	 "factor 600851475143 1234567891011 18446744073709551615", 0},
	{__LINE__, "coreutils printf", NULL, "/usr/bin/printf '%.15g %a %e %.30f %x\\n' 3.14159 0.1 1e300 0.1 255; /usr/bin/printf '%Lf\\n' 1.5", 0},
	/* a file the program makes is not from the future by the clock it reads (make,
	 * find -newer), as natively */
	{__LINE__, "date against a new file's time", NULL,
	 "touch now.txt; [ $(stat -c %Y now.txt) -le $(date +%s) ] && echo not from the future", 0},
	{__LINE__, "date at a fixed time", NULL,
	 "date -u -d @0 '+%Y-%m-%d %H:%M:%S %A %j'; date -u -d @1234567890; date -u -d '2001-09-09 01:46:40' +%s; "
	 "date -u -d '2000-02-28 12:00 + 1 day' +%F", 0},

	/* sqlite3 */
	{__LINE__, "sqlite3 1.0/7", NULL, "sqlite3 :memory: 'select 1.0/7; select 2.0/3*3, round(1e15/7, 3), sqrt(2.0);'", 0},
	{__LINE__, "sqlite3 a small table", NULL,
	 "sqlite3 t.db \"create table t(a int, b text); insert into t values (1,'x'),(2,'y'),(3,'z'); "
	 "create index i on t(b); select sum(a), group_concat(b) from t; select avg(a * 1.5) from t; "
	 "select b from t order by b desc;\"; sqlite3 t.db 'select count(*) from t'", 0},

	/* compressors and archives */
	{__LINE__, "xz and unxz round trip", NULL,
	 "xz -9 -k big.txt && xz -t big.txt.xz && unxz -c big.txt.xz | cmp - big.txt && echo ok; xz -l big.txt.xz | tail -1; "
	 "xz -c -e --check=sha256 words.txt > w.xz; unxz w.xz; cmp w words.txt && echo ok2", 0},
	{__LINE__, "tar -cJf and tar -xf", NULL,
	 "tar --sort=name --owner=0 --group=0 --numeric-owner -cJf a.tar.xz src && mkdir out && tar -xf a.tar.xz -C out && "
	 "tar -tvf a.tar.xz && diff -r src out/src && echo same", 0},
	{__LINE__, "tar -czf, gzip", NULL,
	 "gzip -9 -k big.txt; gzip -l big.txt.gz; zcat big.txt.gz | md5sum; "
	 "tar --sort=name --owner=0 --group=0 --numeric-owner -czf a.tgz src && tar -tzf a.tgz", 0},
	{__LINE__, "bzip2", NULL, "bzip2 -k big.txt && bzcat big.txt.bz2 | wc -c && bzip2 -t big.txt.bz2 && echo ok", 0},
	{__LINE__, "zstd", NULL,
	 "zstd -q -19 big.txt -o big.zst && zstd -q -d big.zst -o back.txt && cmp big.txt back.txt && echo ok; "
	 "zstd -q -c --long -3 src/sub/n.txt | zstd -dc | tail -1", 0},
	{__LINE__, "brotli", NULL, "brotli -q 11 -k big.txt -o big.br && brotli -d -c big.br | cmp - big.txt && echo ok", 0},
	{__LINE__, "lz4", NULL, "lz4 -q -9 big.txt big.lz4 && lz4 -q -d -c big.lz4 | md5sum", 0},
	{__LINE__, "lzip", NULL, "lzip -k big.txt && lzip -t big.txt.lz && lzip -dc big.txt.lz | tail -1", 0},
	{__LINE__, "zip and unzip", NULL, "zip -X -q -r a.zip src words.txt && unzip -Z1 a.zip && unzip -q a.zip -d out && unzip -p a.zip words.txt | md5sum", 0},

	/* openssl */
	{__LINE__, "openssl dgst", NULL, "openssl dgst -sha256 big.txt; openssl dgst -sha512 -r big.txt; openssl dgst -sha3-256 words.txt", 0},
	{__LINE__, "openssl enc aes-256-cbc and ctr, fixed key and iv", NULL,
	 "openssl enc -aes-256-cbc -K " KEY " -iv " IV " -in big.txt -out big.cbc && "
	 "openssl enc -d -aes-256-cbc -K " KEY " -iv " IV " -in big.cbc | cmp - big.txt && echo ok; "
	 "openssl enc -aes-256-ctr -K " KEY " -iv " IV " -in big.txt | sha256sum", 0},
	{__LINE__, "openssl enc -pbkdf2 -nosalt", NULL,
	 "openssl enc -aes-256-cbc -pbkdf2 -iter 1000 -nosalt -pass pass:secret -in words.txt -a", 0},
	/* openssl enc takes no AEAD cipher: GMAC is AES-256-GCM's authentication (GHASH, PCLMULQDQ) */
	{__LINE__, "openssl mac GMAC (aes-256-gcm), fixed key and iv", NULL,
	 "openssl mac -cipher AES-256-GCM -macopt hexkey:" KEY " -macopt hexiv:0f0e0d0c0b0a090807060504 -in big.txt GMAC", 0},

	/* node */
	{__LINE__, "node math and JSON", NULL,
	 "node -e 'console.log(Math.sqrt(2), Math.PI * 1e10, 0.1 + 0.2, Math.exp(1.5), "
	 "JSON.stringify({a: [1, 2, {b: 1.5}], c: \"x\"}), [5, 3, 10, 1].sort((a, b) => a - b))'", 0},
	{__LINE__, "node crypto aes-256-gcm and fs", NULL,
	 "node -e 'const c = require(\"crypto\"), fs = require(\"fs\"); "
	 "const e = c.createCipheriv(\"aes-256-gcm\", Buffer.alloc(32, 7), Buffer.alloc(12, 1)); "
	 "const out = Buffer.concat([e.update(fs.readFileSync(\"big.txt\")), e.final()]); fs.writeFileSync(\"big.gcm\", out); "
	 "console.log(c.createHash(\"sha256\").update(out).digest(\"hex\"), e.getAuthTag().toString(\"hex\"))'", 0},

	/* file copying and listing */
	{__LINE__, "rsync -a between two local directories", NULL,
	 "rsync -a src/ dst/ && find dst -type f -printf '%P %s\\n' | sort && diff -r src dst && echo same", 0},
	{__LINE__, "cp, mv, ln, chmod", NULL,
	 "mkdir -p x/y && cp -r src x/y/ && mv x/y/src x/y/s2 && ln -s s2 x/y/link && chmod 600 x/y/s2/f1 && "
	 "chmod 751 x/y/s2/sub && ls -1R x && cat x/y/link/sub/f2", 0},
	{__LINE__, "find -printf names", NULL, "find . -type f -printf '%P %s\\n' | sort; find . -name '*.txt' | sort; find src -type d | sort", 0},
	{__LINE__, "ls -1", NULL, "ls -1; ls -1a src; ls -1 -S src/sub; ls -1R src", 0},
	{__LINE__, "stat -c", NULL, "stat -c '%n %s %F %a' a.txt bin.dat; stat -c '%n %F %a' src; stat -c %s big.txt", 0},
	{__LINE__, "diff -u", NULL, "diff -u a.txt b.txt", 1},
	{__LINE__, "cmp", NULL, "cmp a.txt b.txt", 1},
	{__LINE__, "file (libmagic)", NULL, "file -b big.txt bin.dat data.json dbl.bin src; file -b --mime-type data.csv", 0},

	/* build tools */
	{__LINE__, "make, two rules", makefile_setup, "make && make; cat out2", 0},
	{__LINE__, "make -j2", makefile_j_setup, "make -s -j2 && cat all", 0},
	/* a source written just before make runs: a clock behind the files' times makes
	 * make warn of files from the future (its warnings are in stdout here) */
	{__LINE__, "make, a source written just before", NULL,
	 "printf 'fresh.out: fresh.in\\n\\tcp fresh.in fresh.out\\n' > M2; echo x > fresh.in; make -f M2 2>&1; cat fresh.out", 0},
	{__LINE__, "gcc compiles and runs a C program", prog_c_setup, "gcc -O2 -o prog prog.c -lm && ./prog", 0},

	/* images and graphs */
	{__LINE__, "ImageMagick convert", NULL,
	 "/usr/bin/convert -size 8x8 xc:red red.ppm && /usr/bin/convert -size 16x4 gradient:white-black -depth 8 g.pgm && "
	 "md5sum red.ppm g.pgm && /usr/bin/convert -size 8x8 gradient: -resize 5x5 -depth 8 txt:- | tail -3", 0},
	{__LINE__, "graphviz dot", dot_setup, "dot -Tplain g.dot; dot -Tsvg g.dot -o g.svg", 0},

	/* jq, busybox, bash */
	{__LINE__, "jq", NULL, "jq -S '.v | map(. * 1.5) | add' data.json; jq -c . data.json; jq -r '.nested | keys[]' data.json", 0},
	{__LINE__, "busybox applets", NULL,
	 "busybox sh -c 'echo $((6 * 7))'; busybox sort -r words.txt | busybox head -3; busybox md5sum big.txt; "
	 "busybox awk 'BEGIN { printf \"%.5f\\n\", 22 / 7; print 1.5 * 3, 10 / 4 }'; busybox gzip -c words.txt | busybox gunzip | busybox wc -l", 0},
	{__LINE__, "bash", NULL,
	 "bash -c 'a=(3 1 2); echo ${#a[@]} ${a[*]}; printf -v x \"%05d\" 42; echo $x $((2 ** 40)); "
	 "while read -r w; do n=$((n + ${#w})); done < words.txt; echo $n; cat <<< here-string'", 0},
};

/* What a run left: the exit status, stdout, and every entry of the directory. */
struct entry {
	char *name; /* relative to the directory */
	char type;  /* f file, d directory, l symbolic link */
	unsigned mode;
	char *data; /* file contents or link target */
	size_t len;
};

struct snap {
	int status;
	char *out;
	size_t outlen;
	char *err;
	struct entry *e;
	size_t n;
	double seconds;
};

/* nftw has no user pointer: the walk fills these */
static struct snap *walking;
static size_t walk_root_len;

static int walk_entry(const char *path, const struct stat *sb, int flag, struct FTW *ftw)
{
	(void)ftw;
	if (strlen(path) <= walk_root_len)
		return 0; /* the directory itself */
	struct entry en = {.name = strdup(path + walk_root_len + 1), .mode = sb->st_mode & 07777};
	if (flag == FTW_SL) {
		char buf[4096];
		ssize_t k = readlink(path, buf, sizeof(buf));
		en.type = 'l';
		en.data = k < 0 ? strdup("?") : strndup(buf, (size_t)k);
		en.len = strlen(en.data);
		en.mode = 0; /* a link's own mode means nothing */
	} else if (flag == FTW_D || flag == FTW_DP) {
		en.type = 'd';
	} else if (S_ISREG(sb->st_mode)) {
		en.type = 'f';
		en.data = slurp(path, &en.len);
	} else {
		en.type = '?';
	}
	walking->e = realloc(walking->e, (walking->n + 1) * sizeof(*walking->e));
	walking->e[walking->n++] = en;
	return 0;
}

static int by_name(const void *a, const void *b)
{
	return strcmp(((const struct entry *)a)->name, ((const struct entry *)b)->name);
}

static void snap_free(struct snap *s)
{
	for (size_t i = 0; i < s->n; i++)
		free(s->e[i].name), free(s->e[i].data);
	free(s->e), free(s->out), free(s->err);
	memset(s, 0, sizeof(*s));
}

static double now(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

/* Empties dir and makes the row's inputs in it, natively. */
static void prepare(const char *dir, const struct real_case *c)
{
	tmp_dir_remove(dir);
	ck_assert_msg(mkdir(dir, 0755) == 0, "mkdir %s: %s", dir, strerror(errno));
	char *script = NULL;
	ck_assert(asprintf(&script, "cd %s || exit 99\n%s%s\n%s", dir, common_setup, c->setup ? c->setup : "",
			   fix_times) > 0);
	char *argv[] = {"/bin/sh", "-e", "-c", script, NULL};
	const char *err = tmp_path("setup.err");
	int st = run_cmd(argv, NULL, NULL, err);
	char *e = slurp(err, NULL);
	ck_assert_msg(st == 0, "line %d: the setup failed with status %d: %s", c->line, st, e);
	free(e), free(script);
}

/* Runs the row's command in dir, natively or under pmusim, and takes what it left. */
static void run_row(const char *dir, const struct real_case *c, int simulated, struct snap *s)
{
	prepare(dir, c);
	char *script = NULL;
	ck_assert(asprintf(&script, "cd %s || exit 99\n%s", dir, c->cmd) > 0);
	char *nargv[] = {"/bin/sh", "-c", script, NULL};
	char *sargv[] = {(char *)pmusim(), "run", "--", "/bin/sh", "-c", script, NULL};
	const char *out = tmp_path("row.out"), *err = tmp_path("row.err");
	double t0 = now();
	memset(s, 0, sizeof(*s));
	s->status = run_cmd(simulated ? sargv : nargv, NULL, out, err);
	s->seconds = now() - t0;
	s->out = slurp(out, &s->outlen);
	s->err = slurp(err, NULL);
	ck_assert_msg(s->out && s->err, "line %d: no output files", c->line);
	walking = s;
	walk_root_len = strlen(dir);
	nftw(dir, walk_entry, 16, FTW_PHYS);
	qsort(s->e, s->n, sizeof(*s->e), by_name);
	free(script);
}

/* Up to 60 bytes before and after off, non-printable bytes escaped. */
static void excerpt(FILE *f, const char *label, const char *b, size_t len, size_t off)
{
	size_t from = off > 60 ? off - 60 : 0, to = off + 60 < len ? off + 60 : len;
	fprintf(f, "  %s [%zu..%zu of %zu]: \"", label, from, to, len);
	for (size_t i = from; i < to; i++) {
		unsigned char ch = (unsigned char)b[i];
		if (ch == '\n')
			fputs("\\n", f);
		else if (ch == '"' || ch == '\\')
			fprintf(f, "\\%c", ch);
		else if (ch < 32 || ch > 126)
			fprintf(f, "\\x%02x", ch);
		else
			fputc(ch, f);
	}
	fputs("\"\n", f);
}

static int same_entry(const struct entry *a, const struct entry *b)
{
	return a->type == b->type && a->mode == b->mode && a->len == b->len &&
	       (a->len == 0 || (a->data && b->data && memcmp(a->data, b->data, a->len) == 0));
}

/* Where two byte strings first differ, with both sides around it. */
static void first_difference(FILE *f, const char *what, const char *x, size_t xl, const char *y, size_t yl,
			     const char *an, const char *bn)
{
	size_t off = 0;
	while (off < xl && off < yl && x[off] == y[off])
		off++;
	fprintf(f, "%s differs at byte %zu (%s %zu bytes, %s %zu bytes):\n", what, off, an, xl, bn, yl);
	excerpt(f, an, x, xl, off);
	excerpt(f, bn, y, yl, off);
}

/* Describes how b differs from a into f; returns the number of differences. */
static int compare(FILE *f, const struct snap *a, const struct snap *b, const char *an, const char *bn)
{
	int diffs = 0;
	if (a->status != b->status) {
		fprintf(f, "exit status: %s %d, %s %d\n", an, a->status, bn, b->status);
		diffs++;
	}
	if (a->outlen != b->outlen || memcmp(a->out, b->out, a->outlen) != 0) {
		first_difference(f, "stdout", a->out, a->outlen, b->out, b->outlen, an, bn);
		diffs++;
	}
	size_t i = 0, j = 0;
	int listed = 0;
	while (i < a->n || j < b->n) {
		int cmp = i == a->n ? 1 : j == b->n ? -1 : strcmp(a->e[i].name, b->e[j].name);
		const char *what = NULL, *name = NULL;
		if (cmp < 0)
			what = bn, name = a->e[i++].name; /* missing in b */
		else if (cmp > 0)
			what = an, name = b->e[j++].name;
		else if (!same_entry(&a->e[i], &b->e[j]))
			what = "", name = a->e[i].name, i++, j++;
		else
			i++, j++;
		if (!name)
			continue;
		diffs++;
		if (listed++ < 12) {
			if (*what)
				fprintf(f, "file %s: missing in the %s run\n", name, what);
			else
				fprintf(f, "file %s: differs (type %c/%c, mode %o/%o, %zu/%zu bytes)\n", name,
					a->e[i - 1].type, b->e[j - 1].type, a->e[i - 1].mode, b->e[j - 1].mode,
					a->e[i - 1].len, b->e[j - 1].len);
			/* the contents of the first two that differ: often a number printed otherwise */
			if (!*what && listed <= 2 && a->e[i - 1].data && b->e[j - 1].data)
				first_difference(f, "  contents", a->e[i - 1].data, a->e[i - 1].len, b->e[j - 1].data,
						 b->e[j - 1].len, an, bn);
		}
	}
	return diffs;
}

/* The lines of pmusim's stderr that pmusim wrote ("pmusim: ..."), then its start and end. */
static void show_stderr(FILE *f, const char *err)
{
	int k = 0;
	for (const char *p = err; p && *p && k < 15;) {
		const char *nl = strchr(p, '\n');
		size_t len = nl ? (size_t)(nl - p) : strlen(p);
		if (strncmp(p, "pmusim", 6) == 0) {
			fprintf(f, "  | %.*s\n", (int)(len > 300 ? 300 : len), p);
			k++;
		}
		p += len + (nl != NULL);
	}
	/* a traceback's last line says the most, a log's first ones too */
	size_t len = err ? strlen(err) : 0;
	if (len <= 1600)
		fprintf(f, "pmusim stderr:\n%s\n", err ? err : "");
	else
		fprintf(f, "pmusim stderr (%zu bytes, the first 500 and the last 1000):\n%.500s\n[...]\n%s\n", len, err,
			err + len - 1000);
}

START_TEST(native_and_pmusim_agree)
{
	const struct real_case *c = &cases[_i];
	char dir[512];
	snprintf(dir, sizeof(dir), "%s", tmp_path("d"));
	struct snap n1, n2, s;
	char *msg = NULL;
	size_t msglen = 0;
	FILE *m = open_memstream(&msg, &msglen);

	run_row(dir, c, 0, &n1);
	ck_assert_msg(n1.status == c->status, "line %d (%s): natively exit status %d, not %d: %.1500s", c->line, c->name,
		      n1.status, c->status, n1.err);
	/* the command itself must be deterministic, or a difference under pmusim means nothing */
	run_row(dir, c, 0, &n2);
	if (compare(m, &n1, &n2, "native", "native again")) {
		fclose(m);
		ck_abort_msg("line %d (%s): not deterministic natively:\n%.6000s", c->line, c->name, msg);
	}
	run_row(dir, c, 1, &s);
	int d = compare(m, &n1, &s, "native", "pmusim");
	if (d)
		show_stderr(m, s.err);
	fclose(m);
	printf("real: line %d %-45s %s (native %.2f s, pmusim %.2f s)\n", c->line, c->name, d ? "FAIL" : "PASS",
	       n1.seconds, s.seconds);
	fflush(stdout);
	ck_assert_msg(d == 0, "line %d (%s): native and pmusim differ:\n%.7000s", c->line, c->name, msg);
	free(msg);
	snap_free(&n1), snap_free(&n2), snap_free(&s);
	tmp_dir_remove(dir);
}
END_TEST

int main(void)
{
	e2e_init();
	Suite *s = suite_create("real");
	TCase *tc = tcase_create("real");
	/* python3, node and cc1 start in seconds natively and take minutes simulated */
	tcase_set_timeout(tc, 600);
	tcase_add_loop_test(tc, native_and_pmusim_agree, 0, (int)(sizeof(cases) / sizeof(cases[0])));
	suite_add_tcase(s, tc);
	return run_suite(s);
}
