/* The guest's executable mappings as perf.data MMAP2 records describe them
 * (mappings.c; sim_exec_mappings and the listeners in sim/sim.h): the system calls
 * that map code tell them here, the block hook tells about code first decoded in
 * anonymous memory. */
#ifndef PMUSIM_SIM_MACHINE_MAPPINGS_H
#define PMUSIM_SIM_MACHINE_MAPPINGS_H

#include <stdint.h>

struct block_info;
struct sim;

/* The guest mapped host file hfd at [addr, addr+len) from offset off
 * with PROT_EXEC: record the mapping, add the file's functions to the symbols,
 * tell the listener. */
void sim_file_exec_mapping(struct sim *s, uint64_t addr, uint64_t len, uint64_t off, int prot, int hfd);
/* Anonymous memory at [addr, addr+len) became executable (mmap with
 * PROT_EXEC, or mprotect adding it): record it as SIM_ANON_PATH, tell the listener. */
void sim_anon_exec_mapping(struct sim *s, uint64_t addr, uint64_t len, int prot);
/* 1 when the newest executable mapping of the current process that
 * covers addr is a file's (code that the profiler can read from that file). */
int sim_addr_in_file_mapping(const struct sim *s, uint64_t addr);
/* Tells the code listener the bytes of run bi, just decoded, when it
 * lies in anonymous executable memory. */
void sim_announce_anon_code(struct sim *s, const struct block_info *bi);

#endif
