/* sim/cpu_state: a new engine holds the state Linux gives a process, read back from the
 * engine's registers and seen by guest code (FXSAVE's image), and a signal handler's FPU
 * state. The expected values are written out here from the Intel SDM and Linux's
 * fpu/init.c, not taken from the module's header. */
#include <check.h>
#include <string.h>
#include <unicorn/unicorn.h>

#include "sim/machine/cpu_state.h"
#include "tests/unit/run_suite.h"

#define CODE 0x10000
#define DATA 0x20000

static uc_engine *engine(void)
{
	uc_engine *uc;
	ck_assert_int_eq(uc_open(UC_ARCH_X86, UC_MODE_64, &uc), UC_ERR_OK);
	ck_assert_int_eq(cpu_state_init(uc), UC_ERR_OK);
	ck_assert_int_eq(uc_mem_map(uc, CODE, 0x1000, UC_PROT_READ | UC_PROT_EXEC), UC_ERR_OK);
	ck_assert_int_eq(uc_mem_map(uc, DATA, 0x1000, UC_PROT_READ | UC_PROT_WRITE), UC_ERR_OK);
	return uc;
}

static void run(uc_engine *uc, const uint8_t *code, size_t len)
{
	ck_assert_int_eq(uc_mem_write(uc, CODE, code, len), UC_ERR_OK);
	ck_assert_int_eq(uc_emu_start(uc, CODE, CODE + len, 0, 0), UC_ERR_OK);
}

START_TEST(registers_as_linux_sets_them)
{
	uc_engine *uc = engine();
	uint64_t cr0 = 0, cr4 = 0, cw = 0, mx = 0;
	uc_reg_read(uc, UC_X86_REG_CR0, &cr0);
	uc_reg_read(uc, UC_X86_REG_CR4, &cr4);
	uc_reg_read(uc, UC_X86_REG_FPCW, &cw);
	uc_reg_read(uc, UC_X86_REG_MXCSR, &mx);
	ck_assert_uint_eq(cr0 & 0x2, 0x2);    /* MP */
	ck_assert_uint_eq(cr0 & 0x20, 0x20);  /* NE */
	ck_assert_uint_eq(cr0 & 0xc, 0);      /* EM and TS clear: x87 and SSE usable */
	ck_assert_uint_eq(cr4 & 0x200, 0x200); /* OSFXSR */
	ck_assert_uint_eq(cr4 & 0x400, 0x400); /* OSXMMEXCPT */
	ck_assert_uint_eq(cr4 & 0x4, 0);      /* TSD clear: rdtsc allowed */
	ck_assert_uint_eq(cw, 0x37f);
	ck_assert_uint_eq(mx, 0x1f80);
	uc_close(uc);
}
END_TEST

/* fnstcw [DATA]; stmxcsr [DATA+4]; movdqu xmm3, [DATA+16]; fxsave64 [DATA+64] */
static const uint8_t probe[] = {
	0xd9, 0x3c, 0x25, 0x00, 0x00, 0x02, 0x00,             /* fnstcw [0x20000] */
	0x0f, 0xae, 0x1c, 0x25, 0x04, 0x00, 0x02, 0x00,       /* stmxcsr [0x20004] */
	0xf3, 0x0f, 0x6f, 0x1c, 0x25, 0x10, 0x00, 0x02, 0x00, /* movdqu xmm3, [0x20010] */
	0x48, 0x0f, 0xae, 0x04, 0x25, 0x40, 0x00, 0x02, 0x00, /* fxsave64 [0x20040] */
};

START_TEST(guest_sees_them_and_fxsave_keeps_xmm)
{
	uc_engine *uc = engine();
	uint8_t pattern[16], mem[64 + 512];
	for (int i = 0; i < 16; i++)
		pattern[i] = (uint8_t)(0xa0 + i);
	ck_assert_int_eq(uc_mem_write(uc, DATA + 16, pattern, 16), UC_ERR_OK);
	run(uc, probe, sizeof(probe));
	ck_assert_int_eq(uc_mem_read(uc, DATA, mem, sizeof(mem)), UC_ERR_OK);
	uint16_t cw;
	uint32_t mx, image_mx;
	memcpy(&cw, mem, 2);
	memcpy(&mx, mem + 4, 4);
	memcpy(&image_mx, mem + 64 + 24, 4); /* FXSAVE image: MXCSR at byte 24 */
	ck_assert_uint_eq(cw, 0x37f);
	ck_assert_uint_eq(mx, 0x1f80);
	ck_assert_uint_eq(image_mx, 0x1f80);
	/* XMM3 at byte 160 + 3 * 16 of the image: there only with CR4.OSFXSR */
	ck_assert_mem_eq(mem + 64 + 160 + 48, pattern, 16);
	uc_close(uc);
}
END_TEST

START_TEST(signal_handler_state)
{
	uc_engine *uc = engine();
	uint64_t cw = 0x27f, mx = 0x7f80, sw = 0x80;
	uint8_t ones[16];
	memset(ones, 0xff, sizeof(ones));
	uc_reg_write(uc, UC_X86_REG_FPCW, &cw);
	uc_reg_write(uc, UC_X86_REG_MXCSR, &mx);
	uc_reg_write(uc, UC_X86_REG_FPSW, &sw);
	uc_reg_write(uc, UC_X86_REG_XMM7, ones);
	ck_assert_int_eq(cpu_state_reset_fpu(uc), UC_ERR_OK);
	uint8_t x[16];
	cw = mx = sw = 1;
	uc_reg_read(uc, UC_X86_REG_FPCW, &cw);
	uc_reg_read(uc, UC_X86_REG_MXCSR, &mx);
	uc_reg_read(uc, UC_X86_REG_FPSW, &sw);
	uc_reg_read(uc, UC_X86_REG_XMM7, x);
	ck_assert_uint_eq(cw, 0x37f);
	ck_assert_uint_eq(mx, 0x1f80);
	ck_assert_uint_eq(sw, 0);
	static const uint8_t zero[16];
	ck_assert_mem_eq(x, zero, 16);
	uc_close(uc);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("cpu_state");
	TCase *tc = tcase_create("cpu_state");
	tcase_add_test(tc, registers_as_linux_sets_them);
	tcase_add_test(tc, guest_sees_them_and_fxsave_keeps_xmm);
	tcase_add_test(tc, signal_handler_state);
	suite_add_tcase(s, tc);
	return run_suite(s);
}
