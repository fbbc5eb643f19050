/* Processes (process.c) and execve (exec.c): fork, vfork and clone without
 * CLONE_THREAD copy the address space into a new engine; execve replaces the running
 * process's image once emulation stopped. The machine's entry points (proc_alloc,
 * proc_enter, proc_end, ...) are in linux.h. */
#ifndef PMUSIM_SIM_LINUX_PROCESS_H
#define PMUSIM_SIM_LINUX_PROCESS_H

#include <stdint.h>

struct proc;
struct sim;

/* clone flags (include/uapi/linux/sched.h) */
#define CLONE_VM_F             0x00000100ULL
#define CLONE_SIGHAND_F        0x00000800ULL
#define CLONE_VFORK_F          0x00004000ULL
#define CLONE_THREAD_F         0x00010000ULL
#define CLONE_SETTLS_F         0x00080000ULL
#define CLONE_PARENT_SETTID_F  0x00100000ULL
#define CLONE_CHILD_CLEARTID_F 0x00200000ULL
#define CLONE_CHILD_SETTID_F   0x01000000ULL

/* Closes p's image: its engine, decode cache, symbols, areas and hooks (before an
 * exec'd image replaces it, or when the process ends). */
void proc_image_close(struct sim *s, struct proc *p);
int64_t sys_fork(struct sim *s, uint64_t flags, uint64_t stack, uint64_t ptid, uint64_t ctid);
int64_t sys_execve(struct sim *s, uint64_t path, uint64_t argv, uint64_t envp);
/* Frees a NULL-terminated array of strings and the strings. */
void free_strings(char **v);
/* A vfork parent waiting for child goes on (the child executed a program or ended). */
void release_vfork_parent(struct sim *s, uint32_t child);
/* exec.c. After the stop requested by a successful execve: the new image; returns its entry. */
uint64_t proc_exec(struct sim *s, uint64_t pc);

#endif
