/* perf.data, the file `perf record` writes ("PERFILE2"), written and read by
 * pmusim. The writer streams records to a temporary file and renames it into
 * place when closed, so a recording is complete or absent; the reader accepts
 * pmusim's files and real perf's (several attrs, sample_id_all trailers, MMAP
 * and MMAP2, feature sections).
 *
 * Layout facts come from Linux tools/perf/Documentation/perf.data-file-format.txt
 * and include/uapi/linux/perf_event.h (perf 6.1); field order of a sample is the
 * order of its PERF_SAMPLE_* bits. Plain C, no Unicorn, no pmu_model/: the
 * profiler stands alone and the front end converts the hardware model's records. */
#ifndef PMUSIM_PROFILER_PERFDATA_H
#define PMUSIM_PROFILER_PERFDATA_H

#include <stddef.h>
#include <stdint.h>

/* perf_event.h: perf_type_id, sample_type bits, branch_sample_type bits. */
#define PERF_TYPE_HARDWARE 0u
#define PERF_TYPE_SOFTWARE 1u
#define PERF_TYPE_TRACEPOINT 2u
#define PERF_TYPE_RAW 4u
#define PERF_TYPE_BREAKPOINT 5u
#define PERF_TYPE_MAX 6u /* dynamic PMUs (ibs_op, uncore ...) get types from here on */
#define PERF_COUNT_HW_CPU_CYCLES 0u
#define PERF_COUNT_HW_INSTRUCTIONS 1u
#define PERF_COUNT_HW_BRANCH_INSTRUCTIONS 4u
#define PERF_COUNT_HW_BRANCH_MISSES 5u

#define PERF_SAMPLE_IP (1u << 0)
#define PERF_SAMPLE_TID (1u << 1)
#define PERF_SAMPLE_TIME (1u << 2)
#define PERF_SAMPLE_ADDR (1u << 3)
#define PERF_SAMPLE_READ (1u << 4)
#define PERF_SAMPLE_CALLCHAIN (1u << 5)
#define PERF_SAMPLE_ID (1u << 6)
#define PERF_SAMPLE_CPU (1u << 7)
#define PERF_SAMPLE_PERIOD (1u << 8)
#define PERF_SAMPLE_STREAM_ID (1u << 9)
#define PERF_SAMPLE_RAW (1u << 10)
#define PERF_SAMPLE_BRANCH_STACK (1u << 11)
#define PERF_SAMPLE_REGS_USER (1u << 12)
#define PERF_SAMPLE_STACK_USER (1u << 13)
#define PERF_SAMPLE_IDENTIFIER (1u << 16)
#define PERF_SAMPLE_REGS_ABI_64 2u  /* perf_event.h: enum perf_sample_regs_abi */

#define PERF_SAMPLE_BRANCH_USER (1u << 0)
#define PERF_SAMPLE_BRANCH_KERNEL (1u << 1)
#define PERF_SAMPLE_BRANCH_HV (1u << 2)
#define PERF_SAMPLE_BRANCH_ANY (1u << 3)
#define PERF_SAMPLE_BRANCH_ANY_CALL (1u << 4)
#define PERF_SAMPLE_BRANCH_ANY_RETURN (1u << 5)
#define PERF_SAMPLE_BRANCH_IND_CALL (1u << 6)
#define PERF_SAMPLE_BRANCH_COND (1u << 10)
#define PERF_SAMPLE_BRANCH_IND_JUMP (1u << 12)
#define PERF_SAMPLE_BRANCH_CALL (1u << 13)
#define PERF_SAMPLE_BRANCH_TYPE_SAVE (1u << 16)

/* perf_event.h enum perf_branch_type (the 4-bit `type` of a branch entry). */
enum perf_br_type {
	PERF_BR_UNKNOWN = 0,
	PERF_BR_COND = 1,
	PERF_BR_UNCOND = 2,
	PERF_BR_IND = 3,
	PERF_BR_CALL = 4,
	PERF_BR_IND_CALL = 5,
	PERF_BR_RET = 6,
};

/* Record types (perf_event.h enum perf_event_type; 67+ are perf's user records). */
#define PERF_RECORD_MMAP 1u
#define PERF_RECORD_COMM 3u
#define PERF_RECORD_EXIT 4u
#define PERF_RECORD_FORK 7u
#define PERF_RECORD_SAMPLE 9u
#define PERF_RECORD_MMAP2 10u
#define PERF_RECORD_TEXT_POKE 20u
#define PERF_RECORD_FINISHED_ROUND 68u

#define PERF_RECORD_MISC_USER 2u
#define PERF_RECORD_MISC_COMM_EXEC (1u << 13)

/* One branch-stack entry as perf_branch_entry: flags word bit 0 mispred,
 * bit 1 predicted, bits 4..19 cycles, bits 20..23 type; all other bits zero. */
struct perf_branch {
	uint64_t from, to;
	uint16_t cycles;   /* cycles since the previous entry; 0 = not known */
	uint8_t mispred;   /* 1: mispredicted */
	uint8_t predicted; /* 1: predicted correctly */
	uint8_t type;      /* enum perf_br_type */
};

/* One event of a recording (one perf_event_attr). */
struct perfdata_event {
	const char *name;           /* as the user gave it ("cycles:u"), for EVENT_DESC */
	uint32_t type;              /* PERF_TYPE_* */
	uint64_t config;
	uint64_t sample_period;     /* fixed period (freq = 0), or samples per second (freq = 1) */
	uint64_t sample_type;       /* PERF_SAMPLE_* */
	uint64_t branch_sample_type;/* PERF_SAMPLE_BRANCH_*, 0 without a branch stack */
	uint64_t id;                /* unique sample id of the event (>= 1) */
	uint8_t precise_ip;         /* 0..3 */
	uint64_t sample_regs_user;  /* PERF_SAMPLE_REGS_USER: which registers (perf_regs.h bits) */
	uint32_t sample_stack_user; /* PERF_SAMPLE_STACK_USER: bytes of stack per sample */
	uint8_t freq;               /* attr.freq: sample_period is a frequency (perf record -F) */
	const char *pmu;            /* the PMU of a dynamic type (type >= PERF_TYPE_MAX), as
	                             * /sys/bus/event_source/devices names it ("ibs_op");
	                             * NULL for perf_event.h's fixed types. Read: from the
	                             * file's PMU_MAPPINGS, NULL when it has none */
};

/* A decoded PERF_RECORD_SAMPLE (fields absent from sample_type are 0). */
struct perf_sample {
	uint64_t id;                /* IDENTIFIER/ID: which event */
	uint64_t ip, time, period, addr;
	uint32_t pid, tid, cpu;
	uint16_t misc;              /* cpumode in the low 3 bits (PERF_RECORD_MISC_USER) */
	uint64_t nbr;               /* branch-stack entries, newest first */
	const struct perf_branch *br;
	uint32_t raw_size;          /* PERF_SAMPLE_RAW: bytes at raw (read: as stored, padding
	                             * included; written: padded so that 4 + size is a
	                             * multiple of 8, as the kernel does) */
	const uint8_t *raw;
	uint64_t nchain;            /* PERF_SAMPLE_CALLCHAIN: entries, context markers such as
	                             * PERF_CONTEXT_USER included, innermost first (at most
	                             * PERFDATA_MAX_CHAIN when written) */
	const uint64_t *chain;
	uint64_t regs_abi;          /* PERF_SAMPLE_REGS_USER: 0 none, else one u64 per bit of */
	const uint64_t *regs;       /*   the event's sample_regs_user, in bit order */
	uint64_t stack_size;        /* PERF_SAMPLE_STACK_USER: bytes at stack (the event's
	                             * sample_stack_user, or 0: none), of which stack_dyn are
	                             * valid (perf_event.h: size, data[size], dyn_size) */
	const uint8_t *stack;
	uint64_t stack_dyn;
};
/* pmusim's PERF_SAMPLE_RAW payload of a hardware event's sample with a branch
 * stack: facts no perf field holds (docs/cycle-windows.md), 16 bytes, little
 * endian: u32 tag PERFDATA_RAW_LBR_TAG; u32 flags: bit 0 (PERFDATA_RAW_IP_AFTER)
 * set when the instruction at the sample IP is not the newest entry's branch but
 * retired after it (a branch not taken, a same branch taken earlier); s64 cycles
 * from the newest entry's retirement to the counter's overflow (cycles samples;
 * pmu_model/pmu.h ovf_after_newest), else 0. Samples without a branch stack
 * carry an empty payload. */
#define PERFDATA_RAW_LBR_TAG 0x6c726270u /* "pbrl" */
#define PERFDATA_RAW_LBR_SIZE 16u
#define PERFDATA_RAW_IP_AFTER 1u

/* Longest callchain a sample can carry (perf_event_header.size is a u16). */
#define PERFDATA_MAX_CHAIN 8000u

#define PERF_CONTEXT_USER ((uint64_t)-512) /* perf_event.h: the user part of a callchain */
#define PERF_CONTEXT_MAX ((uint64_t)-4095) /* perf_event.h: chain entries from here up are context markers */

/* What a recording says about itself (feature sections). */
struct perfdata_info {
	const char *hostname, *os_release, *version, *arch, *cpudesc, *cpuid;
	uint32_t nr_cpus;
	uint64_t total_mem_kb;
	const char *const *cmdline; /* argv of the command that recorded */
	size_t ncmdline;
};

/* ---- writing ---- */

struct perfdata_writer;

/* Opens path for writing (under a temporary name: path.tmp.XXXXXX) with the
 * given events; every event gets the same sample_type, which must include
 * PERF_SAMPLE_IDENTIFIER when there are several. An event of a dynamic type
 * names its PMU (ev->pmu; only then): the file then has a PMU_MAPPINGS feature
 * listing "software" 1, "tracepoint" 2, "cpu" 4, "breakpoint" 5 (every x86
 * Linux registers them), the events' PMUs and, beside "ibs_op", "ibs_fetch"
 * (IBS_FETCH_PMU_TYPE: perf 6.1 takes any event of type ibs_fetch_type, 0 when
 * unmapped, for an IBS fetch event, so without it every hardware event's payload
 * would be printed as one); recordings without such events have no PMU_MAPPINGS.
 * An "ibs_op" event needs PERF_SAMPLE_RAW and an info whose cpuid starts with
 * "AuthenticAMD" (PERFDATA_IBS_CPUID), which perf 6.1 needs to decode it. Attr flags written: disabled,
 * exclude_kernel, exclude_hv, mmap, comm, enable_on_exec, task, sample_id_all,
 * exclude_guest, mmap2, comm_exec (as `perf record` of a user program). Returns
 * 0 or a negative pmusim_err, with a one-line reason in msg. */
int perfdata_writer_open(struct perfdata_writer **out, const char *path,
			 const struct perfdata_event *ev, size_t nev,
			 const struct perfdata_info *info, char *msg, size_t msglen);
/* The same into an output already opened (common/outfile.h; "-" is refused): the
 * writer takes *of over, whatever the result (on failure it is removed). */
struct outfile;
int perfdata_writer_open_file(struct perfdata_writer **out, struct outfile *of,
			      const struct perfdata_event *ev, size_t nev,
			      const struct perfdata_info *info, char *msg, size_t msglen);

/* Records, in time order. The sample_id_all trailer is added from the first
 * event's sample_type (its id is used). Strings are padded to 8 bytes. After a
 * write error every later call returns PMUSIM_ERR_IO: stop writing and close. */
int perfdata_write_comm(struct perfdata_writer *w, uint32_t pid, uint32_t tid,
			const char *comm, uint64_t time);
/* COMM of a process that executed a program (misc PERF_RECORD_MISC_COMM_EXEC). */
int perfdata_write_comm_exec(struct perfdata_writer *w, uint32_t pid, uint32_t tid,
			     const char *comm, uint64_t time);
/* FORK (type PERF_RECORD_FORK: a thread or process was created) or EXIT
 * record: pid, ppid, tid, ptid, time (perf_event.h, struct of PERF_RECORD_FORK). */
int perfdata_write_task(struct perfdata_writer *w, uint32_t type, uint32_t pid, uint32_t ppid,
			uint32_t tid, uint32_t ptid, uint64_t time);
/* MMAP2 with misc = USER; maj/min/ino/ino_generation 0 (reproducible bytes). */
int perfdata_write_mmap2(struct perfdata_writer *w, uint32_t pid, uint32_t tid, uint64_t addr,
			 uint64_t len, uint64_t pgoff, uint32_t prot, uint32_t flags,
			 const char *filename, uint64_t time);
/* TEXT_POKE (perf_event.h: addr, old_len, new_len, old then new bytes) with
 * misc = USER and no old bytes: len bytes of code at addr in process pid that
 * no file holds (written at run time, e.g. by a JIT compiler). perf handles
 * TEXT_POKE of kernel text only and skips these; pmusim's profiler reads them
 * to walk that code. */
int perfdata_write_text_poke(struct perfdata_writer *w, uint32_t pid, uint32_t tid, uint64_t addr,
			     const uint8_t *bytes, size_t len, uint64_t time);
/* A sample of event s->id, fields per that event's sample_type. */
int perfdata_write_sample(struct perfdata_writer *w, const struct perf_sample *s);
/* A build id (up to 20 bytes) for a file, written to the BUILD_ID feature. */
int perfdata_add_build_id(struct perfdata_writer *w, const char *filename,
			  const uint8_t *id, size_t idlen);

/* Writes the feature sections and the final header, then renames the file into
 * place. After a write error (e.g. a full disk) it cuts the data back to the last
 * complete record and still tries to finish the file. Frees w. 0 or a negative
 * pmusim_err. */
int perfdata_writer_close(struct perfdata_writer *w);
/* Removes the temporary file and frees w (nothing reaches the path). */
void perfdata_writer_abort(struct perfdata_writer *w);

/* Records written so far, by kind. */
uint64_t perfdata_writer_samples(const struct perfdata_writer *w);
/* Bytes of records handed to the file so far (header and features come at the close). */
uint64_t perfdata_writer_bytes(const struct perfdata_writer *w);

/* ---- reading ---- */

struct perfdata;

/* One record of the data section. Pointers stay valid until the next call. */
struct perf_record {
	uint32_t type;   /* PERF_RECORD_* */
	uint16_t misc;
	uint64_t offset; /* file offset of the record */
	union {
		struct perf_sample sample;
		struct {
			uint32_t pid, tid;
			const char *comm;
		} comm;
		struct { /* MMAP and MMAP2 */
			uint32_t pid, tid;
			uint64_t addr, len, pgoff;
			uint32_t prot, flags; /* MMAP2 only */
			const char *filename;
		} mmap;
		struct { /* FORK and EXIT */
			uint32_t pid, ppid, tid, ptid;
		} task;
		struct { /* TEXT_POKE: the new bytes (pid and tid from the trailer, else 0) */
			uint32_t pid, tid;
			uint64_t addr;
			const uint8_t *bytes;
			uint16_t len;
		} poke;
	} u;
	uint64_t time;   /* sample time, or the sample_id_all trailer's */
};

/* Opens and checks a perf.data file (header, attrs, ids, section bounds).
 * 0 or a negative pmusim_err (PMUSIM_ERR_FORMAT for a corrupt or truncated
 * file, PMUSIM_ERR_IO when unreadable, PMUSIM_ERR_UNSUPPORTED for big-endian,
 * pipe-mode or compressed files) with a one-line reason in msg. */
int perfdata_open(const char *path, struct perfdata **out, char *msg, size_t msglen);
void perfdata_close(struct perfdata *pd);

size_t perfdata_nevents(const struct perfdata *pd);
/* Event i as stored (name from EVENT_DESC when present, else NULL). */
const struct perfdata_event *perfdata_event(const struct perfdata *pd, size_t i);
/* The event index of a sample id, or -1. */
int perfdata_event_of_id(const struct perfdata *pd, uint64_t id);

/* Next SAMPLE, COMM, MMAP, MMAP2, FORK, EXIT or TEXT_POKE record of the data
 * section (other types are skipped) in perf's order, not the file's: records with a
 * time by time (equal times in file order), each round (FINISHED_ROUND) flushed up to
 * the previous round's latest time, records without one (time 0) at once
 * (perfdata_order.c has perf's rules). A file written in time order, as pmusim's are,
 * comes out in file order. Memory: 16 bytes per record queued, about two rounds.
 * 1 and *rec filled, 0 at the end, or a negative pmusim_err (message in msg) when a
 * record is corrupt; after that error the next call goes on with the records after
 * it, or, after a bad record size, with those read before it and still queued. */
int perfdata_next(struct perfdata *pd, struct perf_record *rec, char *msg, size_t msglen);

/* The name of PMU type `type` in the file's PMU_MAPPINGS ("cpu" for 4 when mapped),
 * or NULL when the file has no such mapping. */
const char *perfdata_pmu_name(const struct perfdata *pd, uint32_t type);

/* The HOSTNAME and VERSION features ("pmusim" and "pmusim 0.1" in pmusim's
 * recordings), or NULL when the file has none. */
const char *perfdata_hostname(const struct perfdata *pd);
const char *perfdata_version(const struct perfdata *pd);

/* Build ids of the BUILD_ID feature: count, and the i-th (id bytes, length, file). */
size_t perfdata_nbuild_ids(const struct perfdata *pd);
int perfdata_build_id(const struct perfdata *pd, size_t i, const uint8_t **id, size_t *idlen,
		      const char **filename);

/* ---- IBS op events (profiler/ibs_op.h, docs/ibs.md) ---- */

/* What an ibs_op event's samples carry: the sample IP is IbsOpRip, ADDR the data
 * address when IbsDcLinAddrValid (else 0, as the 6.1 kernel leaves it), RAW the
 * payload of ibs_op_encode(). */
#define PERFDATA_IBS_OP_SAMPLE_TYPE                                                                \
	(PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_TIME | PERF_SAMPLE_ADDR |                  \
	 PERF_SAMPLE_PERIOD | PERF_SAMPLE_RAW)
/* HEADER_CPUID of a recording with ibs_op events: vendor,family,model,stepping of
 * an AMD Family 19h Model 01h part (Zen 3; the PPR amd-ibs.h follows). perf 6.1
 * decodes IBS payloads only when the cpuid starts with AuthenticAMD; its family
 * and model choose the decoder's erratum paths, which fields pmusim leaves 0 never
 * reach (docs/ibs.md). Recordings without ibs_op events say GenuineIntel. */
#define PERFDATA_IBS_CPUID "AuthenticAMD,25,1,1"

/* Fills *ev as `perf record -e ibs_op// -c PERIOD` (cnt_ctl 1: -e
 * ibs_op/cnt_ctl=1/) sets the attr: type IBS_OP_PMU_TYPE, pmu "ibs_op", config
 * bit 19 = cnt_ctl, a fixed sample_period, sample_type PERFDATA_IBS_OP_SAMPLE_TYPE
 * (the caller may add bits every event of the recording shares), name perf's
 * ("ibs_op//", "ibs_op/cnt_ctl=1/") unless given. 0, or PMUSIM_ERR_ARG when the
 * period is not a multiple of 16 in [16, IBS_OP_MAX_CNT_LIMIT], cnt_ctl is not
 * 0/1 or id is 0. */
int perfdata_ibs_op_event(struct perfdata_event *ev, uint64_t period, int cnt_ctl, uint64_t id,
			  const char *name);

#endif
