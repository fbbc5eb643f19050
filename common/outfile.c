/* Complete-or-absent output files (see common/outfile.h). */
#include "common/outfile.h"

#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <limits.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/err.h"

/* Whether the directory holding path is under /proc (a /proc/PID/fd link: /dev/stdout,
 * /dev/fd/N, /proc/self/fd/N). Renaming there is impossible, and the link's target is
 * whatever the descriptor is open on. */
static int dir_in_proc(const char *path)
{
	char *copy = strdup(path);
	if (!copy)
		return 0;
	char *real = realpath(dirname(copy), NULL);
	int in = real && strncmp(real, "/proc/", 6) == 0;
	free(real);
	free(copy);
	return in;
}

/* Follows path's chain of symbolic links; 1 when some step is a /proc fd link. */
static int via_proc(const char *path)
{
	char cur[PATH_MAX], link[PATH_MAX];
	snprintf(cur, sizeof(cur), "%s", path);
	for (int hops = 0; hops < 40; hops++) {
		if (dir_in_proc(cur))
			return 1;
		struct stat lst;
		if (lstat(cur, &lst) != 0 || !S_ISLNK(lst.st_mode))
			return 0;
		ssize_t n = readlink(cur, link, sizeof(link) - 1);
		if (n < 0)
			return 0;
		link[n] = 0;
		if (link[0] == '/') {
			snprintf(cur, sizeof(cur), "%s", link);
		} else { /* relative to the link's directory */
			char *slash = strrchr(cur, '/');
			if (slash)
				snprintf(slash + 1, sizeof(cur) - (size_t)(slash + 1 - cur), "%s", link);
			else
				snprintf(cur, sizeof(cur), "%s", link);
		}
	}
	return 0;
}

/* The temporaries being written, by device and inode (a process writes a handful). */
#define OUTFILE_MAX_OPEN 64
static struct {
	const struct outfile *o;
	unsigned long long dev, ino;
} open_files[OUTFILE_MAX_OPEN];

static void remember(const struct outfile *o)
{
	struct stat st;
	if (!o->f || fstat(fileno(o->f), &st) != 0)
		return;
	for (size_t i = 0; i < OUTFILE_MAX_OPEN; i++)
		if (!open_files[i].o) {
			open_files[i].o = o;
			open_files[i].dev = (unsigned long long)st.st_dev;
			open_files[i].ino = (unsigned long long)st.st_ino;
			return;
		}
}

static void forget(const struct outfile *o)
{
	struct stat st;
	int known = o->f && fstat(fileno(o->f), &st) == 0;
	for (size_t i = 0; i < OUTFILE_MAX_OPEN; i++)
		if (open_files[i].o == o ||
		    (known && open_files[i].dev == (unsigned long long)st.st_dev &&
		     open_files[i].ino == (unsigned long long)st.st_ino))
			open_files[i].o = NULL;
}

int outfile_owns(unsigned long long dev, unsigned long long ino)
{
	for (size_t i = 0; i < OUTFILE_MAX_OPEN; i++)
		if (open_files[i].o && open_files[i].dev == dev && open_files[i].ino == ino)
			return 1;
	return 0;
}

/* An unnamed temporary file: nothing can open it by name, and it vanishes with pmusim. */
static FILE *anonymous_file(void)
{
	const char *dir = getenv("TMPDIR");
	if (!dir || !*dir)
		dir = "/tmp";
	int fd = open(dir, O_TMPFILE | O_RDWR | O_CLOEXEC, 0600);
	if (fd < 0) { /* a file system without O_TMPFILE */
		char name[PATH_MAX];
		snprintf(name, sizeof(name), "%s/pmusim-out.XXXXXX", dir);
		if ((fd = mkostemp(name, O_CLOEXEC)) >= 0)
			unlink(name);
	}
	FILE *f = fd >= 0 ? fdopen(fd, "w+") : NULL;
	if (!f && fd >= 0)
		close(fd);
	return f;
}

/* The descriptor a name stands for, as shells treat these names: /dev/stdout,
 * /dev/stderr, /dev/fd/N, /proc/self/fd/N (-1 for any other path). Writing to the open
 * descriptor keeps its offset, so what the program printed there stays in front. */
static int named_descriptor(const char *path)
{
	static const char *const dirs[] = {"/dev/fd/", "/proc/self/fd/", "/proc/thread-self/fd/"};
	if (strcmp(path, "/dev/stdout") == 0)
		return 1;
	if (strcmp(path, "/dev/stderr") == 0)
		return 2;
	for (size_t i = 0; i < sizeof(dirs) / sizeof(dirs[0]); i++) {
		size_t n = strlen(dirs[i]);
		if (strncmp(path, dirs[i], n) == 0 && path[n] >= '0' && path[n] <= '9') {
			char *end;
			long fd = strtol(path + n, &end, 10);
			return *end || fd > INT_MAX ? -1 : (int)fd;
		}
	}
	return -1;
}

static int open_in_place(struct outfile *o, const char *path)
{
	/* refuse now, before the program runs, what cannot be written at the end */
	if (access(path, W_OK) != 0)
		return PMUSIM_ERR_IO;
	o->path = strdup(path);
	o->in_place = 1;
	o->fd = named_descriptor(path);
	if (!o->path)
		return PMUSIM_ERR_NOMEM;
	if (!(o->f = anonymous_file())) {
		free(o->path);
		o->path = NULL;
		return PMUSIM_ERR_IO;
	}
	return 0;
}

static int open_renamed(struct outfile *o, const char *path)
{
	struct stat lst, st;
	/* a link to a regular file: replace the file, keep the link */
	if (lstat(path, &lst) == 0 && S_ISLNK(lst.st_mode) && stat(path, &st) == 0)
		o->path = realpath(path, NULL);
	else
		o->path = strdup(path);
	size_t n = o->path ? strlen(o->path) + 16 : 0;
	o->tmp = n ? malloc(n) : NULL;
	if (!o->path || !o->tmp) {
		free(o->path);
		free(o->tmp);
		o->path = o->tmp = NULL;
		return PMUSIM_ERR_NOMEM;
	}
	snprintf(o->tmp, n, "%s.tmp.XXXXXX", o->path);
	int fd = mkstemp(o->tmp);
	if (fd >= 0) { /* mkstemp makes 0600; give the file the usual 0666 & ~umask */
		mode_t um = umask(0);
		umask(um);
		fchmod(fd, 0666 & ~um);
	}
	if (fd < 0 || !(o->f = fdopen(fd, "w"))) {
		int e = errno;
		if (fd >= 0)
			close(fd), unlink(o->tmp);
		free(o->path);
		free(o->tmp);
		o->path = o->tmp = NULL;
		errno = e;
		return PMUSIM_ERR_IO;
	}
	return 0;
}

int outfile_open(struct outfile *o, const char *path)
{
	memset(o, 0, sizeof(*o));
	o->fd = -1;
	if (strcmp(path, "-") == 0) {
		o->f = stdout;
		return 0;
	}
	struct stat st;
	int exists = stat(path, &st) == 0;
	if (exists && S_ISDIR(st.st_mode)) { /* nothing can be written into it, now or at the end */
		errno = EISDIR;
		return PMUSIM_ERR_IO;
	}
	int err = (exists && !S_ISREG(st.st_mode)) || via_proc(path) ? open_in_place(o, path) : open_renamed(o, path);
	if (err < 0) { /* free() keeps errno in glibc, but the contract should not rest on that */
		int e = errno;
		memset(o, 0, sizeof(*o));
		o->fd = -1;
		errno = e;
	} else {
		remember(o);
	}
	return err;
}

/* perf record's backup (tools/perf/util/data.c, check_backup): an existing, non-empty
 * regular file at the path becomes PATH.old, replacing an older one. */
static int backup_old(const char *path)
{
	struct stat st;
	if (stat(path, &st) != 0 || !S_ISREG(st.st_mode) || st.st_size == 0)
		return 0;
	size_t n = strlen(path) + 5;
	char *old = malloc(n);
	if (!old)
		return PMUSIM_ERR_NOMEM;
	snprintf(old, n, "%s.old", path);
	int err = rename(path, old) == 0 ? 0 : PMUSIM_ERR_IO;
	free(old);
	return err;
}

/* Writes all of the anonymous file into the target. A reader that goes away (EPIPE) is
 * an error, not a SIGPIPE that kills pmusim with the program's results. */
static int copy_into_target(struct outfile *o)
{
	int out = o->fd >= 0 ? o->fd : open(o->path, O_WRONLY | O_TRUNC | O_CREAT | O_CLOEXEC, 0666);
	if (out < 0)
		return PMUSIM_ERR_IO;
	struct sigaction ign = {.sa_handler = SIG_IGN}, old;
	sigaction(SIGPIPE, &ign, &old);
	int in = fileno(o->f), err = 0;
	char buf[1 << 16];
	off_t pos = 0;
	for (;;) {
		ssize_t n = pread(in, buf, sizeof(buf), pos);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			err = n < 0;
			break;
		}
		pos += n;
		for (ssize_t done = 0; done < n && !err;) {
			ssize_t w = write(out, buf + done, (size_t)(n - done));
			if (w < 0 && errno != EINTR)
				err = 1;
			done += w > 0 ? w : 0;
		}
		if (err)
			break;
	}
	sigaction(SIGPIPE, &old, NULL);
	if (out != o->fd && close(out) != 0 && errno != EINTR)
		err = 1;
	return err ? PMUSIM_ERR_IO : 0;
}

int outfile_commit(struct outfile *o)
{
	if (o->f == stdout)
		return fflush(stdout) == 0 ? 0 : PMUSIM_ERR_IO;
	forget(o);
	int err = 0;
	if (fflush(o->f) != 0 || ferror(o->f))
		err = PMUSIM_ERR_IO;
	if (o->in_place) {
		if (!err)
			err = copy_into_target(o);
		fclose(o->f);
	} else {
		if (!err && fsync(fileno(o->f)) != 0)
			err = PMUSIM_ERR_IO;
		if (fclose(o->f) != 0)
			err = PMUSIM_ERR_IO;
		if (!err && o->keep_old)
			err = backup_old(o->path);
		if (!err && rename(o->tmp, o->path) != 0)
			err = PMUSIM_ERR_IO;
		if (err)
			unlink(o->tmp);
	}
	free(o->path);
	free(o->tmp);
	memset(o, 0, sizeof(*o));
	return err;
}

void outfile_abort(struct outfile *o)
{
	if (o->f && o->f != stdout) {
		forget(o);
		fclose(o->f);
		if (o->tmp)
			unlink(o->tmp);
	}
	free(o->path);
	free(o->tmp);
	memset(o, 0, sizeof(*o));
}

const char *outfile_name(const struct outfile *o)
{
	return o->tmp ? o->tmp : o->path ? o->path : "-";
}
