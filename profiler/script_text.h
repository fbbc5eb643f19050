/* The text `perf script` prints, read back as samples: the branch stacks of
 * `perf script -F ip,brstack` or `-F pid,ip,brstack` (also `-F pid,tid,…`), and
 * the `--show-mmap-events` lines that say where the program was loaded.
 *
 * One line is one record. A sample line is
 *
 *     [PID[/TID]] IP  0xFROM/0xTO/F/X/A/CYCLES[/TYPE[/…]]  …
 *
 * with IP in hex without "0x" (perf prints "%16lx"), then the branch entries,
 * newest first: F is M (mispredicted), P (predicted) or - (unknown); X is the
 * in-transaction flag (X or -), A the abort flag (A or -), CYCLES decimal
 * (0..65535), TYPE a perf branch type name (COND, UNCOND, IND, CALL, IND_CALL,
 * RET, …; empty or unknown: PERF_BR_UNKNOWN). Further '/'-separated fields
 * (newer perf's speculation state) are ignored. The entries may be absent (an
 * empty branch stack). Side-band lines
 *
 *     [PID[/TID]] PERF_RECORD_MMAP2 PID/TID: [0xADDR(0xLEN) @ PGOFF MAJ:MIN INO GEN]: r-xp PATH
 *     [PID[/TID]] PERF_RECORD_MMAP2 PID/TID: [0xADDR(0xLEN) @ PGOFF <BUILDID>]: r-xp PATH
 *     [PID[/TID]] PERF_RECORD_MMAP PID/TID: [0xADDR(0xLEN) @ PGOFF]: x PATH
 *
 * become MMAP2 / MMAP records (prot from "rwx"; flags MAP_SHARED or MAP_PRIVATE
 * only, as perf prints no other; an MMAP line marked 'r', a data mapping, is
 * skipped); other PERF_RECORD_* lines, blank lines and '#' comments are skipped.
 * Formats: perf 6.1 tools/perf/builtin-script.c (perf_sample__fprintf_brstack,
 * print_bstack_flags) and tools/perf/util/event.c (perf_event__fprintf_mmap2).
 *
 * Text carries no event and no period: samples get period 1, id 0, time 0 and
 * misc 0. The reader holds one line at a time (at most SCRIPT_TEXT_MAX_LINE
 * bytes) and one branch stack (at most SCRIPT_TEXT_MAX_BRANCHES entries), so
 * memory stays bounded whatever the input. */
#ifndef PMUSIM_PROFILER_SCRIPT_TEXT_H
#define PMUSIM_PROFILER_SCRIPT_TEXT_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "profiler/perfdata.h"

#define SCRIPT_TEXT_MAX_LINE 65536
#define SCRIPT_TEXT_MAX_BRANCHES 4096

struct script_text;

/* Opens path for reading. 0, or PMUSIM_ERR_IO / PMUSIM_ERR_NOMEM with a
 * one-line reason in msg. */
int script_text_open(const char *path, struct script_text **out, char *msg, size_t msglen);
/* Reads from f, which stays the caller's (not closed by script_text_close);
 * name (copied) is the file name used in messages. */
int script_text_open_stream(FILE *f, const char *name, struct script_text **out, char *msg,
                            size_t msglen);
void script_text_close(struct script_text *st);

/* Next record: 1 with *rec filled (type PERF_RECORD_SAMPLE, PERF_RECORD_MMAP or
 * PERF_RECORD_MMAP2; rec->offset is the line's byte offset), 0 at the end, or a
 * negative pmusim_err: PMUSIM_ERR_FORMAT for a line that is not perf script text
 * (msg: "NAME:LINE: reason"), PMUSIM_ERR_IO for a read error. Pointers in *rec
 * (the branch entries, the mapped file name) stay valid until the next call.
 * After an error every later call returns the same error. */
int script_text_next(struct script_text *st, struct perf_record *rec, char *msg, size_t msglen);

/* Line number (1-based) of the record last returned or of the line that failed. */
uint64_t script_text_line(const struct script_text *st);

/* The build id of the MMAP2 record last returned when its line gave one
 * ("<hex>"): its length (1..20) with *id set; 0 otherwise. */
size_t script_text_build_id(const struct script_text *st, const uint8_t **id);

#endif
