/* The guest's executable mappings, as perf.data MMAP2 records describe them:
 * files mapped with PROT_EXEC (their functions join the symbols) and anonymous
 * memory made executable, whose code reaches the code listener as it is first
 * decoded (no file holds it). */
#include "sim/machine/mappings.h"

#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/elf_bias.h"
#include "sim/sim_state.h"

size_t sim_exec_mappings(const struct sim *s, const struct sim_mapping **out)
{
	*out = s->procs[0]->exec_maps;
	return s->procs[0]->image == 0 ? s->procs[0]->nexec_maps : 0;
}

void sim_set_mapping_listener(struct sim *s, void (*fn)(void *ctx, const struct sim_mapping *m),
			      void *ctx)
{
	s->map_listener = fn;
	s->map_listener_ctx = ctx;
}

void sim_set_code_listener(struct sim *s,
			   void (*fn)(void *ctx, uint32_t pid, uint64_t addr, const uint8_t *bytes, size_t len),
			   void *ctx)
{
	s->code_listener = fn;
	s->code_listener_ctx = ctx;
}

int sim_mapping_is_anon(const struct sim_mapping *m)
{
	return strcmp(m->path, SIM_ANON_PATH) == 0;
}

/* The newest executable mapping of the current process covering addr, or NULL. */
static const struct sim_mapping *exec_mapping_at(const struct sim *s, uint64_t addr)
{
	for (size_t i = s->p->nexec_maps; i-- > 0;) {
		const struct sim_mapping *m = &s->p->exec_maps[i];
		if (addr >= m->addr && addr - m->addr < m->len)
			return m;
	}
	return NULL;
}

int sim_addr_in_file_mapping(const struct sim *s, uint64_t addr)
{
	const struct sim_mapping *m = exec_mapping_at(s, addr);
	return m && !sim_mapping_is_anon(m);
}

void sim_anon_exec_mapping(struct sim *s, uint64_t addr, uint64_t len, int prot)
{
	if (s->p->nexec_maps == SIM_MAX_MAPPINGS)
		return;
	struct sim_mapping *m = &s->p->exec_maps[s->p->nexec_maps++];
	*m = (struct sim_mapping){addr, len, addr, prot, SIM_ANON_PATH, s->p->pid};
	if (s->map_listener)
		s->map_listener(s->map_listener_ctx, m);
}

void sim_announce_anon_code(struct sim *s, const struct block_info *bi)
{
	const struct sim_mapping *m = exec_mapping_at(s, bi->start);
	if (!m || !sim_mapping_is_anon(m))
		return;
	uint8_t buf[DECODE_MAX_INSNS * 15];
	size_t len = (size_t)(bi->end - bi->start);
	if (len <= sizeof(buf) && uc_mem_read(s->p->uc, bi->start, buf, len) == UC_ERR_OK)
		s->code_listener(s->code_listener_ctx, s->p->pid, bi->start, buf, len);
}

/* The stored copy of a mapped file's path (one per file), or NULL. */
static const char *map_path(struct sim *s, const char *path, int *is_new)
{
	*is_new = 0;
	for (size_t i = 0; i < s->p->nmap_paths; i++)
		if (strcmp(s->p->map_paths[i], path) == 0)
			return s->p->map_paths[i];
	if (s->p->nmap_paths == SIM_MAX_MAPPINGS || !(s->p->map_paths[s->p->nmap_paths] = strdup(path)))
		return NULL;
	*is_new = 1;
	return s->p->map_paths[s->p->nmap_paths++];
}

void sim_file_exec_mapping(struct sim *s, uint64_t addr, uint64_t len, uint64_t off, int prot, int hfd)
{
	char link[64], path[PATH_MAX];
	snprintf(link, sizeof(link), "/proc/self/fd/%d", hfd);
	ssize_t n = readlink(link, path, sizeof(path) - 1);
	int is_new;
	const char *p = n > 0 ? (path[n] = 0, map_path(s, path, &is_new)) : NULL;
	if (!p || s->p->nexec_maps == SIM_MAX_MAPPINGS)
		return;
	struct sim_mapping *m = &s->p->exec_maps[s->p->nexec_maps++];
	*m = (struct sim_mapping){addr, len, off, prot, p, s->p->pid};
	if (is_new)
		symtab_add_file(s->p->syms, p, elf_mapping_bias(p, addr, off));
	if (s->map_listener)
		s->map_listener(s->map_listener_ctx, m);
}
