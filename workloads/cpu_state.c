/* The CPU state a process starts with, as a program sees it: the x87 control word
 * and MXCSR at entry, FXSAVE/FXRSTOR keeping the XMM registers (CR4.OSFXSR), long
 * double precision, the FPU state a signal handler starts with (Linux resets it), and
 * an unmasked x87 exception raising SIGFPE (CR0.NE). Built static and dynamic (the
 * dynamic one's first printf of a double goes through ld.so's lazy-binding trampoline,
 * which saves the argument registers with FXSAVE when CPUID has no XSAVE). Facts a test
 * relies on: the output is the same natively and under pmusim. */
#include <setjmp.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

static uint16_t fpcw(void)
{
	uint16_t cw;
	__asm__ volatile("fnstcw %0" : "=m"(cw));
	return cw;
}

static uint32_t mxcsr(void)
{
	uint32_t m;
	__asm__ volatile("stmxcsr %0" : "=m"(m));
	return m;
}

static volatile uint16_t handler_cw;
static volatile uint32_t handler_mx;

static void on_usr1(int sig)
{
	(void)sig;
	handler_cw = fpcw();
	handler_mx = mxcsr();
}

static sigjmp_buf env;

static void on_fpe(int sig)
{
	siglongjmp(env, sig);
}

/* XMM1 through FXSAVE64 and FXRSTOR64: the image holds it at byte 160+16, and a
 * clobbered XMM1 comes back. */
static int fxsave_keeps_xmm(void)
{
	static uint8_t area[512] __attribute__((aligned(16)));
	static const uint8_t pattern[16] __attribute__((aligned(16))) = {
		0x11, 0x22, 0x33, 0x44, 0x55, 0x66, 0x77, 0x88, 0x99, 0xaa, 0xbb, 0xcc, 0xdd, 0xee, 0xf0, 0x0f};
	uint8_t back[16] __attribute__((aligned(16)));
	memset(area, 0, sizeof(area));
	__asm__ volatile("movdqa %1, %%xmm1\n\t"
	                 "fxsave64 %0\n\t"
	                 "pxor %%xmm1, %%xmm1\n\t"
	                 "fxrstor64 %0\n\t"
	                 "movdqa %%xmm1, %2"
	                 : "+m"(area)
	                 : "m"(pattern), "m"(back)
	                 : "xmm1", "memory");
	uint32_t saved_mxcsr;
	memcpy(&saved_mxcsr, area + 24, 4);
	printf("fxsave: image mxcsr %#x, xmm1 in image %s, xmm1 restored %s\n", saved_mxcsr,
	       memcmp(area + 160 + 16, pattern, 16) == 0 ? "yes" : "no", memcmp(back, pattern, 16) == 0 ? "yes" : "no");
	return 0;
}

int main(void)
{
	printf("at entry: fpcw %#x mxcsr %#x\n", fpcw(), mxcsr());
	printf("double %f, %.17g\n", 2.0, 1.0 / 3);
	volatile long double seven = 7;
	printf("long double 1/7 %.20Lf\n", 1.0L / seven);
	fxsave_keeps_xmm();

	/* the handler starts with Linux's initial FPU state, whatever main set */
	uint16_t cw = 0x27f; /* double precision */
	uint32_t mx = 0x7f80; /* round down */
	__asm__ volatile("fldcw %0" ::"m"(cw));
	__asm__ volatile("ldmxcsr %0" ::"m"(mx));
	signal(SIGUSR1, on_usr1);
	raise(SIGUSR1);
	printf("in a handler: fpcw %#x mxcsr %#x; after it: fpcw %#x mxcsr %#x\n", handler_cw, handler_mx, fpcw(),
	       mxcsr());
	cw = 0x37f, mx = 0x1f80;
	__asm__ volatile("fldcw %0" ::"m"(cw));
	__asm__ volatile("ldmxcsr %0" ::"m"(mx));

	/* zero divide unmasked (ZM, bit 2, clear): the next x87 instruction faults */
	signal(SIGFPE, on_fpe);
	int sig = sigsetjmp(env, 1);
	if (sig == 0) {
		uint16_t unmasked = 0x37b;
		volatile double zero = 0, one = 1, r;
		__asm__ volatile("fldcw %0" ::"m"(unmasked));
		__asm__ volatile("fldl %1\n\tfdivl %2\n\tfstpl %0\n\tfwait" : "=m"(r) : "m"(one), "m"(zero));
		printf("x87 zero divide unmasked: no signal\n");
	} else {
		uint16_t clear = 0x37f;
		__asm__ volatile("fnclex\n\tfldcw %0" ::"m"(clear));
		printf("x87 zero divide unmasked: signal %d\n", sig);
	}
	return 0;
}
