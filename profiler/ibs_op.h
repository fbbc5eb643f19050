/* AMD IBS op samples (instruction-based sampling, "ibs_op" PMU) as perf.data
 * carries them: the PERF_SAMPLE_RAW payload Linux 6.1's perf_ibs_handle_irq
 * (arch/x86/events/amd/ibs.c) writes for an ibs_op event, encoded from and
 * decoded into one neutral record. Plain C, no I/O, no pmu_model/.
 *
 * The payload, little endian (docs/ibs.md has the sources bit by bit):
 *
 *     u32 caps                  IBS capabilities: CPUID Fn8000_001B EAX
 *                               (the kernel's ibs_caps)
 *     u64 IbsOpCtl              MSRC001_1033
 *     u64 IbsOpRip              MSRC001_1034
 *     u64 IbsOpData             MSRC001_1035
 *     u64 IbsOpData2            MSRC001_1036
 *     u64 IbsOpData3            MSRC001_1037
 *     u64 IbsDcLinAd            MSRC001_1038
 *     u64 IbsDcPhysAd           MSRC001_1039
 *     u64 IbsBrTarget           MSRC001_103B, when caps has IBS_CAPS_BRNTRGT
 *     u64 IbsOpData4            MSRC001_103D, when caps has IBS_CAPS_OPDATA4
 *
 * The kernel reads the seven registers from IbsOpCtl on in MSR order
 * (perf_ibs_op.offset_max = MSR_AMD64_IBSOP_REG_COUNT) whenever the event has
 * PERF_SAMPLE_RAW, then the two optional ones "separately depending on their
 * availability". 4 + 8n bytes: with the u32 size in front the record stays
 * 8-byte aligned, so no padding follows. pmusim writes IBS_OP_CAPS. */
#ifndef PMUSIM_PROFILER_IBS_OP_H
#define PMUSIM_PROFILER_IBS_OP_H

#include <stddef.h>
#include <stdint.h>

/* One IBS op sample as the hardware reports it, before encoding. */
/* clang-format off */
struct ibs_op {
	uint64_t ip;           /* IbsOpRip: the tagged instruction */
	uint64_t max_cnt;      /* the period (IbsOpMaxCnt, in ops or cycles; a multiple of 16) */
	uint64_t cur_cnt;      /* IbsOpCurCnt when the sample was taken (0 if not modelled) */
	uint8_t cnt_ctl;       /* 1: counts dispatched ops (cnt_ctl=1), 0: cycles */
	uint32_t tag_to_ret;   /* IbsTagToRetCtr: cycles from tag to retirement */
	uint32_t comp_to_ret;  /* IbsCompToRetCtr: 0 */
	uint8_t branch, taken, mispredicted, ret; /* IbsOpBrnRet, IbsOpBrnTaken, IbsOpBrnMisp, IbsOpReturn */
	uint8_t microcoded;    /* IbsOpMicrocode (pmusim: a REP string instruction is one microcoded op) */
	uint64_t br_target;    /* IbsBrTarget (branch: where it went) */
	uint8_t load, store;   /* IbsLdOp, IbsStOp */
	uint8_t width;         /* bytes accessed: 1,2,4,8,16,32 (0: unknown/none) */
	uint8_t addr_valid;    /* IbsDcLinAddrValid */
	uint64_t data_addr;    /* IbsDcLinAd (0 unless addr_valid) */
};
/* clang-format on */

/* Capability bits of caps (the kernel's arch/x86/include/asm/perf_event.h
 * IBS_CAPS_*, the bits of CPUID Fn8000_001B EAX, bit 0 "IBS exists"). */
#define IBS_CAPS_AVAIL (1u << 0)
#define IBS_CAPS_FETCHSAM (1u << 1)
#define IBS_CAPS_OPSAM (1u << 2)
#define IBS_CAPS_RDWROPCNT (1u << 3)
#define IBS_CAPS_OPCNT (1u << 4)
#define IBS_CAPS_BRNTRGT (1u << 5)
#define IBS_CAPS_OPCNTEXT (1u << 6)
#define IBS_CAPS_RIPINVALIDCHK (1u << 7)
#define IBS_CAPS_OPBRNFUSE (1u << 8)
#define IBS_CAPS_FETCHCTLEXTD (1u << 9)
#define IBS_CAPS_OPDATA4 (1u << 10)

/* What pmusim's payloads say: 0x3ff, the value a Zen 2 part reports (bits 0-9:
 * IbsBrTarget present, the 7-bit MaxCnt extension, no IbsOpData4, no Zen 4
 * extensions), so a payload is the seven registers and IbsBrTarget. */
#define IBS_OP_CAPS 0x3ffu
#define IBS_OP_REGS 7u      /* IbsOpCtl .. IbsDcPhysAd, always there */
#define IBS_OP_RAW_SIZE 68u /* pmusim's payload: caps and eight registers */

/* Field limits of the registers (amd-ibs.h union layouts): a record whose fields do
 * not fit is refused by ibs_op_encode; the caller saturates counters. */
#define IBS_OP_MAX_CNT_LIMIT (((uint64_t)1 << 27) - 16) /* 16+7 bits of MaxCnt, times 16 */
#define IBS_OP_CUR_CNT_LIMIT (((uint64_t)1 << 27) - 1)  /* IbsOpCurCnt, bits 32-58 */
#define IBS_OP_RET_CTR_LIMIT 0xffffu                    /* IbsTagToRetCtr, IbsCompToRetCtr */

/* The ibs_op PMU as perf record sees it: attr.config bit 19 is cnt_ctl
 * (/sys/bus/event_source/devices/ibs_op/format/cnt_ctl "config:19",
 * IBS_OP_CNT_CTL), attr.type the PMU's dynamic type. pmusim's machine says 11,
 * with ibs_fetch at 10, as a Zen 2 machine's perf.data does (docs/ibs.md). */
#define IBS_OP_PMU_NAME "ibs_op"
#define IBS_OP_PMU_TYPE 11u
#define IBS_FETCH_PMU_NAME "ibs_fetch"
#define IBS_FETCH_PMU_TYPE 10u
#define IBS_OP_CONFIG_CNT_CTL (1ull << 19)

/* The payload of op into raw (cap bytes): its size (IBS_OP_RAW_SIZE), or 0 when
 * cap is too small or op is not a record the hardware could report: max_cnt not
 * a multiple of 16 in [16, IBS_OP_MAX_CNT_LIMIT], a counter past its limit, a
 * flag other than 0/1, taken/mispredicted/ret/br_target without branch, width
 * not 0/1/2/4/8/16/32, width or addr_valid without load or store, data_addr
 * without addr_valid. Bits pmusim does not model are 0 (docs/ibs.md). */
size_t ibs_op_encode(const struct ibs_op *op, uint8_t *raw, size_t cap);

/* Decodes a payload (pmusim's or a real kernel's: any caps, IbsOpData4 ignored)
 * into *out: 0, or PMUSIM_ERR_FORMAT when ibs_op_problem() names a problem.
 * Fields a register does not hold are 0: br_target unless IbsOpBrnRet (and
 * IbsBrTarget present), data_addr unless IbsDcLinAddrValid. */
int ibs_op_decode(const uint8_t *raw, size_t size, struct ibs_op *out);

/* Why a payload cannot be decoded, as a short phrase ("4 + 8 * 8 = 68 bytes
 * expected, 60 found"), into msg; NULL (msg untouched) when it can. */
const char *ibs_op_problem(const uint8_t *raw, size_t size, char *msg, size_t msglen);

#endif
