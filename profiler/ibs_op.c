/* IBS op payloads (profiler/ibs_op.h): the register images of an op sample, bit
 * positions from the kernel's arch/x86/include/asm/amd-ibs.h unions (after AMD's
 * PPR for Family 19h Model 01h, 55898, MSRC001_1033..1037) and the order in which
 * Linux 6.1's perf_ibs_handle_irq copies them; perf 6.1's decoder
 * (tools/perf/util/amd-sample-raw.c) reads the same positions. */
#include "profiler/ibs_op.h"

#include <stdio.h>
#include <string.h>

#include "common/err.h"

/* IbsOpCtl (MSRC001_1033, union ibs_op_ctl) */
#define CTL_MAXCNT_MASK 0xffffull /* 15:0 IbsOpMaxCnt[19:4]: the period >> 4 */
#define CTL_EN (1ull << 17)       /* IbsOpEn: sampling enabled */
#define CTL_VAL (1ull << 18)      /* IbsOpVal: a sample is held (IBS_OP_VAL) */
#define CTL_CNT_CTL (1ull << 19)  /* IbsOpCntCtl: 1 counts dispatched ops, 0 cycles */
#define CTL_MAXCNT_EXT_SHIFT 20   /* 26:20 IbsOpMaxCnt[26:20] (IBS_OP_MAX_CNT_EXT_MASK) */
#define CTL_MAXCNT_EXT_MASK 0x7full
#define CTL_CURCNT_SHIFT 32 /* 58:32 IbsOpCurCnt */
#define CTL_CURCNT_MASK 0x7ffffffull

/* IbsOpData (MSRC001_1035, union ibs_op_data) */
#define DATA_TAG_TO_RET_SHIFT 16    /* 31:16 IbsTagToRetCtr; 15:0 IbsCompToRetCtr */
#define DATA_RETURN (1ull << 34)    /* IbsOpReturn */
#define DATA_TAKEN (1ull << 35)     /* IbsOpBrnTaken */
#define DATA_MISP (1ull << 36)      /* IbsOpBrnMisp */
#define DATA_BRN_RET (1ull << 37)   /* IbsOpBrnRet: a branch retired */
#define DATA_MICROCODE (1ull << 40) /* IbsOpMicrocode */

/* IbsOpData3 (MSRC001_1037, union ibs_op_data3) */
#define DATA3_LD (1ull << 0)         /* IbsLdOp */
#define DATA3_ST (1ull << 1)         /* IbsStOp */
#define DATA3_LIN_VALID (1ull << 17) /* IbsDcLinAddrValid */
#define DATA3_WIDTH_SHIFT 22         /* 25:22 IbsOpMemWidth: bytes = 1 << (w - 1), 0 none */
#define DATA3_WIDTH_MASK 0xfull
#define WIDTH_CODE_MAX 8u /* 128 bytes: the widest a uint8_t holds */

/* Register slots in the payload after caps (MSR order). */
enum { R_CTL, R_RIP, R_DATA, R_DATA2, R_DATA3, R_LINAD, R_PHYSAD, R_BRTARGET };

static uint64_t get64(const uint8_t *p)
{
	uint64_t v;
	memcpy(&v, p, 8); /* perf.data of a little-endian machine; the reader checked it */
	return v;
}

static int is_flag(uint8_t v)
{
	return v <= 1;
}

/* OpMemWidth's code of a width in bytes (perf prints 1 << (code - 1)), or -1. */
static int width_code(uint8_t width)
{
	if (width == 0)
		return 0;
	for (int c = 1; c <= 6; c++)
		if (width == 1u << (c - 1))
			return c;
	return -1;
}

static int encodable(const struct ibs_op *op)
{
	if (op->max_cnt < 16 || op->max_cnt % 16 || op->max_cnt > IBS_OP_MAX_CNT_LIMIT ||
	    op->cur_cnt > IBS_OP_CUR_CNT_LIMIT || op->tag_to_ret > IBS_OP_RET_CTR_LIMIT ||
	    op->comp_to_ret > IBS_OP_RET_CTR_LIMIT)
		return 0;
	if (!is_flag(op->cnt_ctl) || !is_flag(op->branch) || !is_flag(op->taken) ||
	    !is_flag(op->mispredicted) || !is_flag(op->ret) || !is_flag(op->microcoded) ||
	    !is_flag(op->load) || !is_flag(op->store) || !is_flag(op->addr_valid))
		return 0;
	/* The branch facts and IbsBrTarget mean something only for a retired branch op,
	 * the data-cache facts only for a load or store op (PPR IbsOpData, IbsOpData3). */
	if (!op->branch && (op->taken || op->mispredicted || op->ret || op->br_target))
		return 0;
	if (width_code(op->width) < 0 || (!op->load && !op->store && (op->width || op->addr_valid)))
		return 0;
	return op->addr_valid || op->data_addr == 0;
}

size_t ibs_op_encode(const struct ibs_op *op, uint8_t *raw, size_t cap)
{
	if (cap < IBS_OP_RAW_SIZE || !encodable(op))
		return 0;
	uint64_t r[IBS_OP_REGS + 1] = {0}; /* IbsOpData2, IbsDcPhysAd: nothing modelled */
	uint64_t cnt = op->max_cnt >> 4;
	r[R_CTL] = (cnt & CTL_MAXCNT_MASK) |
	           (cnt >> 16 & CTL_MAXCNT_EXT_MASK) << CTL_MAXCNT_EXT_SHIFT | CTL_EN | CTL_VAL |
	           (op->cnt_ctl ? CTL_CNT_CTL : 0) |
	           (op->cur_cnt & CTL_CURCNT_MASK) << CTL_CURCNT_SHIFT;
	r[R_RIP] = op->ip;
	r[R_DATA] = op->comp_to_ret | (uint64_t)op->tag_to_ret << DATA_TAG_TO_RET_SHIFT |
	            (op->ret ? DATA_RETURN : 0) | (op->taken ? DATA_TAKEN : 0) |
	            (op->mispredicted ? DATA_MISP : 0) | (op->branch ? DATA_BRN_RET : 0) |
	            (op->microcoded ? DATA_MICROCODE : 0);
	r[R_DATA3] = (op->load ? DATA3_LD : 0) | (op->store ? DATA3_ST : 0) |
	             (op->addr_valid ? DATA3_LIN_VALID : 0) |
	             (uint64_t)width_code(op->width) << DATA3_WIDTH_SHIFT;
	r[R_LINAD] = op->data_addr;
	r[R_BRTARGET] = op->br_target;
	uint32_t caps = IBS_OP_CAPS;
	memcpy(raw, &caps, 4);
	memcpy(raw + 4, r, sizeof(r));
	return IBS_OP_RAW_SIZE;
}

/* Registers a payload with these caps holds. */
static size_t regs_of(uint32_t caps)
{
	return IBS_OP_REGS + !!(caps & IBS_CAPS_BRNTRGT) + !!(caps & IBS_CAPS_OPDATA4);
}

const char *ibs_op_problem(const uint8_t *raw, size_t size, char *msg, size_t msglen)
{
	uint32_t caps = 0;
	if (size < 4 + 8 * IBS_OP_REGS || !raw) {
		snprintf(msg, msglen,
		         "%zu bytes, fewer than the %u of caps and IbsOpCtl..IbsDcPhysAd",
		         raw ? size : 0, 4 + 8 * IBS_OP_REGS);
		return msg;
	}
	memcpy(&caps, raw, 4);
	size_t n = regs_of(caps);
	if (!(caps & IBS_CAPS_AVAIL))
		snprintf(msg, msglen, "caps %#x lacks IBS_CAPS_AVAIL", caps);
	else if (size != 4 + 8 * n)
		snprintf(msg, msglen, "caps %#x means 4 + 8 * %zu = %zu bytes, found %zu", caps, n,
		         4 + 8 * n, size);
	else if ((get64(raw + 4) & (CTL_EN | CTL_VAL)) != (CTL_EN | CTL_VAL))
		snprintf(msg, msglen, "IbsOpCtl %#llx lacks IbsOpEn or IbsOpVal",
		         (unsigned long long)get64(raw + 4));
	else if ((get64(raw + 4 + 8 * R_DATA3) >> DATA3_WIDTH_SHIFT & DATA3_WIDTH_MASK) >
	         WIDTH_CODE_MAX)
		snprintf(msg, msglen, "IbsOpMemWidth %llu is past 128 bytes",
		         (unsigned long long)(get64(raw + 4 + 8 * R_DATA3) >> DATA3_WIDTH_SHIFT &
		                              DATA3_WIDTH_MASK));
	else
		return NULL;
	return msg;
}

int ibs_op_decode(const uint8_t *raw, size_t size, struct ibs_op *out)
{
	char why[128];
	if (ibs_op_problem(raw, size, why, sizeof(why)))
		return PMUSIM_ERR_FORMAT;
	uint32_t caps;
	memcpy(&caps, raw, 4);
	uint64_t ctl = get64(raw + 4 + 8 * R_CTL), data = get64(raw + 4 + 8 * R_DATA);
	uint64_t data3 = get64(raw + 4 + 8 * R_DATA3);
	memset(out, 0, sizeof(*out));
	out->ip = get64(raw + 4 + 8 * R_RIP);
	out->max_cnt =
	    ((ctl >> CTL_MAXCNT_EXT_SHIFT & CTL_MAXCNT_EXT_MASK) << 16 | (ctl & CTL_MAXCNT_MASK))
	    << 4;
	out->cur_cnt = ctl >> CTL_CURCNT_SHIFT & CTL_CURCNT_MASK;
	out->cnt_ctl = (ctl & CTL_CNT_CTL) != 0;
	out->comp_to_ret = (uint32_t)(data & 0xffff);
	out->tag_to_ret = (uint32_t)(data >> DATA_TAG_TO_RET_SHIFT & 0xffff);
	out->branch = (data & DATA_BRN_RET) != 0;
	if (out->branch) { /* perf's decoder prints these only for a retired branch too */
		out->taken = (data & DATA_TAKEN) != 0;
		out->mispredicted = (data & DATA_MISP) != 0;
		out->ret = (data & DATA_RETURN) != 0;
		if (caps & IBS_CAPS_BRNTRGT)
			out->br_target = get64(raw + 4 + 8 * R_BRTARGET);
	}
	out->microcoded = (data & DATA_MICROCODE) != 0;
	out->load = (data3 & DATA3_LD) != 0;
	out->store = (data3 & DATA3_ST) != 0;
	unsigned w = (unsigned)(data3 >> DATA3_WIDTH_SHIFT & DATA3_WIDTH_MASK);
	out->width = (uint8_t)(w ? 1u << (w - 1) : 0);
	out->addr_valid = (data3 & DATA3_LIN_VALID) != 0;
	if (out->addr_valid)
		out->data_addr = get64(raw + 4 + 8 * R_LINAD);
	return 0;
}
