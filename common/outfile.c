/* Complete-or-absent output files (see common/outfile.h). */
#include "common/outfile.h"

#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/err.h"

int outfile_open(struct outfile *o, const char *path)
{
	memset(o, 0, sizeof(*o));
	if (strcmp(path, "-") == 0) {
		o->f = stdout;
		return 0;
	}
	size_t n = strlen(path) + 16;
	o->path = strdup(path);
	o->tmp = malloc(n);
	if (!o->path || !o->tmp) {
		free(o->path);
		free(o->tmp);
		return PMUSIM_ERR_NOMEM;
	}
	snprintf(o->tmp, n, "%s.tmp.XXXXXX", path);
	int fd = mkstemp(o->tmp);
	if (fd >= 0) { /* mkstemp makes 0600; give the file the usual 0666 & ~umask */
		mode_t um = umask(0);
		umask(um);
		fchmod(fd, 0666 & ~um);
	}
	if (fd < 0 || !(o->f = fdopen(fd, "w"))) {
		if (fd >= 0)
			close(fd), unlink(o->tmp);
		free(o->path);
		free(o->tmp);
		o->path = o->tmp = NULL;
		return PMUSIM_ERR_IO;
	}
	return 0;
}

int outfile_commit(struct outfile *o)
{
	if (o->f == stdout)
		return fflush(stdout) == 0 ? 0 : PMUSIM_ERR_IO;
	int err = 0;
	if (fflush(o->f) != 0 || ferror(o->f) || fsync(fileno(o->f)) != 0)
		err = PMUSIM_ERR_IO;
	if (fclose(o->f) != 0)
		err = PMUSIM_ERR_IO;
	if (!err && rename(o->tmp, o->path) != 0)
		err = PMUSIM_ERR_IO;
	if (err)
		unlink(o->tmp);
	free(o->path);
	free(o->tmp);
	memset(o, 0, sizeof(*o));
	return err;
}

void outfile_abort(struct outfile *o)
{
	if (o->f && o->f != stdout) {
		fclose(o->f);
		unlink(o->tmp);
	}
	free(o->path);
	free(o->tmp);
	memset(o, 0, sizeof(*o));
}
