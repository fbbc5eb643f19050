/* Probes of the CPUID contract: for every feature bit CPUID reports, an instruction of
 * that feature runs on fixed inputs and prints its result. Facts a test relies on:
 *   cpu_probe          rows whose bit CPUID reports, then "UNPROBED leaf reg bit" for
 *                      every reported bit with no row (a bit added without a probe);
 *   cpu_probe all      every row, whatever CPUID says (the host's results);
 *   cpu_probe absent   instructions of features pmusim does not report, each under a
 *                      SIGILL handler: "name: SIGILL" or its result;
 *   cpu_probe avx      a VEX-encoded AVX instruction with no handler (dies of SIGILL).
 * A row that is a system feature with no user-mode instruction says so in its result. */
#include <cpuid.h>
#include <setjmp.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

enum reg { EBX, ECX, EDX };
static const char *const reg_names[] = {"ebx", "ecx", "edx"};

struct probe {
	uint32_t leaf;
	enum reg reg;
	int bit;
	const char *name;
	void (*run)(char *out, size_t len);
};

#define U64 unsigned long long

static void p_fpu(char *o, size_t n)
{
	double a = 1.5, b = 2.25, r;
	__asm__ volatile("fldl %1\n\tfmull %2\n\tfsqrt\n\tfstpl %0" : "=m"(r) : "m"(a), "m"(b));
	snprintf(o, n, "%.17g", r);
}

static void p_tsc(char *o, size_t n)
{
	uint32_t lo, hi;
	__asm__ volatile("rdtsc" : "=a"(lo), "=d"(hi));
	snprintf(o, n, "rdtsc %s", (lo | hi) ? "counts" : "zero");
}

static sigjmp_buf env;
static void on_signal(int sig)
{
	siglongjmp(env, sig);
}

/* Runs fn under SIGILL and SIGSEGV handlers; the signal's name if one came. */
static int guarded(void (*fn)(char *, size_t), char *o, size_t n)
{
	signal(SIGILL, on_signal);
	signal(SIGSEGV, on_signal);
	int sig = sigsetjmp(env, 1);
	if (sig == 0)
		fn(o, n);
	else
		snprintf(o, n, "%s", sig == SIGILL ? "SIGILL" : "SIGSEGV");
	signal(SIGILL, SIG_DFL);
	signal(SIGSEGV, SIG_DFL);
	return sig;
}

static void rdmsr_body(char *o, size_t n)
{
	uint32_t lo, hi;
	__asm__ volatile("rdmsr" : "=a"(lo), "=d"(hi) : "c"(0x10));
	snprintf(o, n, "rdmsr ran in user mode");
}

static void p_msr(char *o, size_t n)
{
	char r[32];
	guarded(rdmsr_body, r, sizeof(r));
	snprintf(o, n, "rdmsr in user mode: %s", r);
}

static void p_system(char *o, size_t n)
{
	snprintf(o, n, "a system feature, no user-mode instruction");
}

static void p_cx8(char *o, size_t n)
{
	uint64_t m = 0x1122334455667788ULL;
	uint32_t a = 0x55667788, d = 0x11223344, b = 0xdeadbeef, c = 0x01020304;
	unsigned char ok;
	__asm__ volatile("lock cmpxchg8b %0\n\tsete %1" : "+m"(m), "=q"(ok), "+a"(a), "+d"(d) : "b"(b), "c"(c));
	snprintf(o, n, "%d %llx", ok, (U64)m);
}

static void p_cx16(char *o, size_t n)
{
	static __int128 m __attribute__((aligned(16))) = 5;
	uint64_t a = 5, d = 0, b = 0x1111, c = 0x2222;
	unsigned char ok;
	__asm__ volatile("lock cmpxchg16b %0\n\tsete %1" : "+m"(m), "=q"(ok), "+a"(a), "+d"(d) : "b"(b), "c"(c));
	snprintf(o, n, "%d %llx %llx", ok, (U64)(m >> 64), (U64)m);
}

static void p_cmov(char *o, size_t n)
{
	uint64_t r = 1, x = 7, y = 9;
	__asm__ volatile("cmp %2, %1\n\tcmovb %2, %0" : "+r"(r) : "r"(x), "r"(y));
	snprintf(o, n, "%llu", (U64)r);
}

static void p_clflush(char *o, size_t n)
{
	static volatile int v = 42;
	__asm__ volatile("clflush %0" : "+m"(v));
	snprintf(o, n, "%d", v);
}

static void p_mmx(char *o, size_t n)
{
	uint64_t a = 0x0102030405060708ULL, b = 0x10ff10ff10ff10ffULL, r;
	__asm__ volatile("movq %1, %%mm0\n\tpaddb %2, %%mm0\n\tmovq %%mm0, %0\n\temms" : "=m"(r) : "m"(a), "m"(b) : "mm0");
	snprintf(o, n, "%016llx", (U64)r);
}

static void p_fxsr(char *o, size_t n)
{
	static uint8_t area[512] __attribute__((aligned(16)));
	static const uint64_t v[2] __attribute__((aligned(16))) = {0x0123456789abcdefULL, 0xfedcba9876543210ULL};
	uint64_t back[2];
	__asm__ volatile("movdqa %1, %%xmm5\n\tfxsave64 %0\n\tpxor %%xmm5, %%xmm5\n\tfxrstor64 %0\n\tmovdqu %%xmm5, %2"
	                 : "+m"(area)
	                 : "m"(v), "m"(back)
	                 : "xmm5", "memory");
	uint32_t mx;
	memcpy(&mx, area + 24, 4);
	snprintf(o, n, "%llx %llx mxcsr %x", (U64)back[0], (U64)back[1], mx);
}

static void p_sse(char *o, size_t n)
{
	float a[4] = {1, 2, 3, 4}, b[4] = {0.5f, 0.25f, 8, 16}, r[4];
	__asm__ volatile("movups %1, %%xmm0\n\tmovups %2, %%xmm1\n\tmulps %%xmm1, %%xmm0\n\tsqrtps %%xmm0, %%xmm0\n\t"
	                 "movups %%xmm0, %0" : "=m"(r) : "m"(a), "m"(b) : "xmm0", "xmm1");
	snprintf(o, n, "%.9g %.9g %.9g %.9g", r[0], r[1], r[2], r[3]);
}

static void p_sse2(char *o, size_t n)
{
	double a[2] = {2, 10}, b[2] = {3, 7}, r[2];
	__asm__ volatile("movupd %1, %%xmm0\n\tmovupd %2, %%xmm1\n\tdivpd %%xmm1, %%xmm0\n\tmovupd %%xmm0, %0"
	                 : "=m"(r) : "m"(a), "m"(b) : "xmm0", "xmm1");
	snprintf(o, n, "%.17g %.17g", r[0], r[1]);
}

static void p_sse3(char *o, size_t n)
{
	float a[4] = {1, 2, 3, 4}, r[4];
	__asm__ volatile("movups %1, %%xmm0\n\thaddps %%xmm0, %%xmm0\n\tmovups %%xmm0, %0" : "=m"(r) : "m"(a) : "xmm0");
	snprintf(o, n, "%g %g %g %g", r[0], r[1], r[2], r[3]);
}

static void p_ssse3(char *o, size_t n)
{
	uint8_t a[16], idx[16] = {15, 14, 13, 12, 11, 10, 9, 8, 0x80, 6, 5, 4, 3, 2, 1, 0}, r[16];
	for (int i = 0; i < 16; i++)
		a[i] = (uint8_t)(i * 17);
	__asm__ volatile("movdqu %1, %%xmm0\n\tmovdqu %2, %%xmm1\n\tpshufb %%xmm1, %%xmm0\n\tmovdqu %%xmm0, %0"
	                 : "=m"(r) : "m"(a), "m"(idx) : "xmm0", "xmm1");
	uint64_t lo, hi;
	memcpy(&lo, r, 8);
	memcpy(&hi, r + 8, 8);
	snprintf(o, n, "%016llx%016llx", (U64)hi, (U64)lo);
}

static void p_sse41(char *o, size_t n)
{
	int32_t a[4] = {-5, 7, 100, -100}, b[4] = {3, -9, 50, 0}, r[4];
	__asm__ volatile("movdqu %1, %%xmm0\n\tmovdqu %2, %%xmm1\n\tpminsd %%xmm1, %%xmm0\n\tpmulld %%xmm1, %%xmm0\n\t"
	                 "movdqu %%xmm0, %0" : "=m"(r) : "m"(a), "m"(b) : "xmm0", "xmm1");
	double d = 2.5, rd;
	__asm__ volatile("movsd %1, %%xmm2\n\troundsd $1, %%xmm2, %%xmm2\n\tmovsd %%xmm2, %0" : "=m"(rd) : "m"(d) : "xmm2");
	snprintf(o, n, "%d %d %d %d round-down %g", r[0], r[1], r[2], r[3], rd);
}

static void p_sse42(char *o, size_t n)
{
	uint32_t c = 0xffffffff;
	uint64_t x = 0x0123456789abcdefULL;
	__asm__ volatile("crc32q %1, %q0" : "+r"(c) : "r"(x));
	static const char hay[16] = "hello, world!!!", needle[16] = "wor";
	int idx;
	__asm__ volatile("movdqu %1, %%xmm0\n\tmovdqu %2, %%xmm1\n\tpcmpistri $0x0c, %%xmm0, %%xmm1\n\tmov %%ecx, %0"
	                 : "=r"(idx) : "m"(needle), "m"(hay) : "xmm0", "xmm1", "ecx", "cc");
	snprintf(o, n, "crc32 %08x pcmpistri %d", c, idx);
}

static void p_aes(char *o, size_t n)
{
	uint64_t st[2] = {0x0011223344556677ULL, 0x8899aabbccddeeffULL}, k[2] = {0x0f0e0d0c0b0a0908ULL, 0x0706050403020100ULL}, r[2];
	__asm__ volatile("movdqu %1, %%xmm0\n\tmovdqu %2, %%xmm1\n\taesenc %%xmm1, %%xmm0\n\taesenclast %%xmm1, %%xmm0\n\t"
	                 "aesdec %%xmm1, %%xmm0\n\taesimc %%xmm0, %%xmm2\n\taeskeygenassist $1, %%xmm2, %%xmm0\n\t"
	                 "movdqu %%xmm0, %0" : "=m"(r) : "m"(st), "m"(k) : "xmm0", "xmm1", "xmm2");
	snprintf(o, n, "%016llx%016llx", (U64)r[1], (U64)r[0]);
}

static void p_bmi1(char *o, size_t n)
{
	uint64_t x = 0x00f0f0f000000a00ULL, y = 0xffff0000ffff0000ULL, andn, bextr, blsi, blsmsk, blsr, tz;
	uint64_t ctl = 8 | (12 << 8); /* start 8, length 12 */
	__asm__ volatile("andn %2, %1, %0" : "=r"(andn) : "r"(x), "r"(y));
	__asm__ volatile("bextr %2, %1, %0" : "=r"(bextr) : "r"(x), "r"(ctl));
	__asm__ volatile("blsi %1, %0" : "=r"(blsi) : "r"(x));
	__asm__ volatile("blsmsk %1, %0" : "=r"(blsmsk) : "r"(x));
	__asm__ volatile("blsr %1, %0" : "=r"(blsr) : "r"(x));
	__asm__ volatile("tzcnt %1, %0" : "=r"(tz) : "r"(x));
	snprintf(o, n, "andn %llx bextr %llx blsi %llx blsmsk %llx blsr %llx tzcnt %llu", (U64)andn, (U64)bextr,
	         (U64)blsi, (U64)blsmsk, (U64)blsr, (U64)tz);
}

static void p_bmi2(char *o, size_t n)
{
	uint64_t src = 0x00000000000012abULL, mask = 0xf0f0f0f0f00ff00fULL, dep, ext, bz, rx, sx, lx, hx, lo, hi;
	static const uint64_t mem_mask = 0x0000ffff0000ff00ULL;
	uint64_t dep_mem;
	uint32_t dep32, src32 = 0xabcd, mask32 = 0xff00ff00u;
	__asm__ volatile("pdep %2, %1, %0" : "=r"(dep) : "r"(src), "r"(mask));
	__asm__ volatile("pext %2, %1, %0" : "=r"(ext) : "r"(mask), "r"(0x00ff00ff00ff00ffULL));
	__asm__ volatile("pdep %2, %1, %0" : "=r"(dep_mem) : "r"(src), "m"(mem_mask));
	__asm__ volatile("mov $-1, %q0\n\tpdep %2, %1, %0" : "=&r"(dep32) : "r"(src32), "r"(mask32));
	__asm__ volatile("bzhi %2, %1, %0" : "=r"(bz) : "r"(mask), "r"(20ULL));
	__asm__ volatile("rorx $12, %1, %0" : "=r"(rx) : "r"(mask));
	__asm__ volatile("sarx %2, %1, %0" : "=r"(sx) : "r"(mask), "r"(8ULL));
	__asm__ volatile("shlx %2, %1, %0" : "=r"(lx) : "r"(mask), "r"(4ULL));
	__asm__ volatile("shrx %2, %1, %0" : "=r"(hx) : "r"(mask), "r"(4ULL));
	__asm__ volatile("mulx %3, %0, %1" : "=r"(lo), "=r"(hi) : "d"(mask), "r"(0x1234567ULL));
	snprintf(o, n,
	         "pdep %llx pext %llx pdep-mem %llx pdep32 %x bzhi %llx rorx %llx sarx %llx shlx %llx shrx %llx "
	         "mulx %llx:%llx",
	         (U64)dep, (U64)ext, (U64)dep_mem, dep32, (U64)bz, (U64)rx, (U64)sx, (U64)lx, (U64)hx, (U64)hi, (U64)lo);
}

static void p_erms(char *o, size_t n)
{
	char src[40] = "enhanced rep movsb copies these bytes", dst[40] = {0};
	char *d = dst, *s = src;
	size_t c = sizeof(src);
	__asm__ volatile("rep movsb" : "+D"(d), "+S"(s), "+c"(c) : : "memory");
	snprintf(o, n, "%s", dst);
}

static void p_lahf(char *o, size_t n)
{
	uint64_t r;
	__asm__ volatile("xor %%eax, %%eax\n\tstc\n\tlahf\n\tmov %%rax, %0" : "=r"(r) : : "rax", "cc");
	snprintf(o, n, "%llx", (U64)((r >> 8) & 0xd5));
}

static void p_lzcnt(char *o, size_t n)
{
	uint64_t r, x = 0x0000100000000000ULL;
	uint32_t r32, x32 = 0;
	__asm__ volatile("lzcnt %1, %0" : "=r"(r) : "r"(x));
	__asm__ volatile("lzcnt %1, %0" : "=r"(r32) : "r"(x32));
	snprintf(o, n, "%llu %u", (U64)r, r32);
}

static void p_syscall(char *o, size_t n)
{
	long r;
	__asm__ volatile("syscall" : "=a"(r) : "a"((long)SYS_getppid) : "rcx", "r11", "memory");
	snprintf(o, n, "getppid %s", r > 0 ? "answers" : "fails");
}

static const struct probe probes[] = {
	{1, ECX, 0, "sse3", p_sse3},
	{1, ECX, 9, "ssse3", p_ssse3},
	{1, ECX, 13, "cx16", p_cx16},
	{1, ECX, 19, "sse4.1", p_sse41},
	{1, ECX, 20, "sse4.2", p_sse42},
	{1, ECX, 25, "aes", p_aes},
	{1, EDX, 0, "fpu", p_fpu},
	{1, EDX, 4, "tsc", p_tsc},
	{1, EDX, 5, "msr", p_msr},
	{1, EDX, 6, "pae", p_system},
	{1, EDX, 8, "cx8", p_cx8},
	{1, EDX, 11, "sep", p_system}, /* sysenter: Linux gives 64-bit programs no entry through it */
	{1, EDX, 13, "pge", p_system},
	{1, EDX, 15, "cmov", p_cmov},
	{1, EDX, 19, "clfsh", p_clflush},
	{1, EDX, 23, "mmx", p_mmx},
	{1, EDX, 24, "fxsr", p_fxsr},
	{1, EDX, 25, "sse", p_sse},
	{1, EDX, 26, "sse2", p_sse2},
	{7, EBX, 3, "bmi1", p_bmi1},
	{7, EBX, 8, "bmi2", p_bmi2},
	{7, EBX, 9, "erms", p_erms},
	{0x80000001, ECX, 0, "lahf", p_lahf},
	{0x80000001, ECX, 5, "lzcnt", p_lzcnt},
	{0x80000001, EDX, 11, "syscall", p_syscall},
	{0x80000001, EDX, 20, "nx", p_system},
	{0x80000001, EDX, 29, "lm", p_system},
};
#define NPROBES (sizeof(probes) / sizeof(probes[0]))

static uint32_t feature_reg(uint32_t leaf, enum reg r)
{
	uint32_t a = 0, b = 0, c = 0, d = 0;
	__cpuid_count(leaf, 0, a, b, c, d);
	return r == EBX ? b : r == ECX ? c : d;
}

static int reported(uint32_t leaf, enum reg r, int bit)
{
	uint32_t max = 0, a, b, c, d;
	__cpuid(leaf & 0x80000000u, max, b, c, d);
	(void)a;
	if (leaf > max)
		return 0;
	return (feature_reg(leaf, r) >> bit) & 1;
}

/* Instructions of features pmusim's CPUID does not report. */
static void a_popcnt(char *o, size_t n)
{
	uint64_t r, x = 0xf0f0;
	__asm__ volatile("popcnt %1, %0" : "=r"(r) : "r"(x));
	snprintf(o, n, "%llu", (U64)r);
}

static void a_movbe(char *o, size_t n)
{
	uint32_t r, x = 0x11223344;
	__asm__ volatile("movbe %1, %0" : "=r"(r) : "m"(x));
	snprintf(o, n, "%x", r);
}

static void a_pclmul(char *o, size_t n)
{
	uint64_t a[2] = {3, 0}, b[2] = {5, 0}, r[2];
	__asm__ volatile("movdqu %1, %%xmm0\n\tmovdqu %2, %%xmm1\n\tpclmulqdq $0, %%xmm1, %%xmm0\n\tmovdqu %%xmm0, %0"
	                 : "=m"(r) : "m"(a), "m"(b) : "xmm0", "xmm1");
	snprintf(o, n, "%llx", (U64)r[0]);
}

static void a_vaddps(char *o, size_t n)
{
	float a[4] = {1, 2, 3, 4}, b[4] = {10, 20, 30, 40}, r[4];
	__asm__ volatile("vmovups %1, %%xmm0\n\tvmovups %2, %%xmm1\n\tvaddps %%xmm1, %%xmm0, %%xmm2\n\tvmovups %%xmm2, %0"
	                 : "=m"(r) : "m"(a), "m"(b) : "xmm0", "xmm1", "xmm2");
	snprintf(o, n, "%g", r[0]);
}

static void a_vpxor(char *o, size_t n)
{
	uint64_t a[2] = {1, 2}, b[2] = {4, 8}, r[2];
	__asm__ volatile("movdqu %1, %%xmm0\n\tmovdqu %2, %%xmm1\n\tvpxor %%xmm1, %%xmm0, %%xmm2\n\tmovdqu %%xmm2, %0"
	                 : "=m"(r) : "m"(a), "m"(b) : "xmm0", "xmm1", "xmm2");
	snprintf(o, n, "%llx", (U64)r[0]);
}

static void a_xgetbv(char *o, size_t n)
{
	uint32_t a, d;
	__asm__ volatile("xgetbv" : "=a"(a), "=d"(d) : "c"(0));
	snprintf(o, n, "%x", a);
}

static const struct {
	const char *name;
	void (*run)(char *, size_t);
} absent[] = {
	{"popcnt", a_popcnt}, {"movbe", a_movbe}, {"pclmulqdq", a_pclmul},
	{"vaddps", a_vaddps}, {"vpxor", a_vpxor}, {"xgetbv", a_xgetbv},
};

int main(int argc, char **argv)
{
	const char *mode = argc > 1 ? argv[1] : "";
	char out[512];
	if (strcmp(mode, "absent") == 0) {
		for (size_t i = 0; i < sizeof(absent) / sizeof(absent[0]); i++) {
			guarded(absent[i].run, out, sizeof(out));
			printf("%s: %s\n", absent[i].name, out);
		}
		return 0;
	}
	if (strcmp(mode, "avx") == 0) {
		a_vaddps(out, sizeof(out));
		printf("vaddps ran: %s\n", out);
		return 0;
	}
	int all = strcmp(mode, "all") == 0;
	for (size_t i = 0; i < NPROBES; i++) {
		const struct probe *p = &probes[i];
		if (!all && !reported(p->leaf, p->reg, p->bit))
			continue;
		p->run(out, sizeof(out));
		printf("%s: %s\n", p->name, out);
	}
	if (all)
		return 0;
	static const uint32_t leaves[] = {1, 7, 0x80000001};
	for (size_t l = 0; l < 3; l++)
		for (int r = leaves[l] == 7 ? EBX : ECX; r <= EDX; r++)
			for (int bit = 0; bit < 32; bit++) {
				if (!reported(leaves[l], (enum reg)r, bit))
					continue;
				int found = 0;
				for (size_t i = 0; i < NPROBES; i++)
					found |= probes[i].leaf == leaves[l] && probes[i].reg == (enum reg)r && probes[i].bit == bit;
				if (!found)
					printf("UNPROBED leaf %#x %s bit %d\n", leaves[l], reg_names[r], bit);
			}
	return 0;
}
