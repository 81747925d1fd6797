/* Atomic file output: write to a temporary file beside the target, then
 * rename it over the target only when everything was written, so that a
 * failed run never leaves a half-written file (and never clobbers a good
 * one). The temporary is created by mkstemp (mode 0600); before the rename
 * it gets the mode an ordinary new file would have (0666 less the umask). */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "solvent/core.h"

struct sv_atomic_file {
    FILE *f;
    char *tmp;
    char *path;
};

sv_status sv_atomic_file_open(const char *path, sv_atomic_file **out)
{
    if (!path || !out) return sv_error(SV_ERR_ARG, "sv_atomic_file_open: path or out is NULL");
    *out = NULL;
    size_t len = strlen(path);
    sv_atomic_file *a = calloc(1, sizeof *a);
    char *tmp = malloc(len + 16), *copy = malloc(len + 1);
    if (!a || !tmp || !copy) {
        free(a), free(tmp), free(copy);
        return sv_error(SV_ERR_NOMEM, "%s: no memory for the output file's name", path);
    }
    memcpy(copy, path, len + 1);
    snprintf(tmp, len + 16, "%s.tmpXXXXXX", path);
    int fd = mkstemp(tmp);
    if (fd < 0) {
        sv_status s = sv_error(SV_ERR_IO, "%s: cannot create a temporary file beside it: %s", path, strerror(errno));
        free(a), free(tmp), free(copy);
        return s;
    }
    mode_t mask = umask(0);
    umask(mask);
    if (fchmod(fd, 0666 & ~mask) != 0 || !(a->f = fdopen(fd, "w"))) {
        sv_status s = sv_error(SV_ERR_IO, "%s: cannot open its temporary file: %s", path, strerror(errno));
        close(fd);
        unlink(tmp);
        free(a), free(tmp), free(copy);
        return s;
    }
    a->tmp = tmp;
    a->path = copy;
    *out = a;
    return SV_OK;
}

FILE *sv_atomic_file_stream(sv_atomic_file *a) { return a ? a->f : NULL; }

sv_status sv_atomic_file_close(sv_atomic_file *a, int commit)
{
    if (!a) return SV_OK;
    sv_status s = SV_OK;
    int bad = ferror(a->f) != 0;
    if (fflush(a->f) != 0) bad = 1;
    if (commit && !bad && fsync(fileno(a->f)) != 0) bad = 1;
    if (fclose(a->f) != 0) bad = 1;
    if (commit && bad)
        s = sv_error(SV_ERR_IO, "%s: writing failed: %s", a->path, strerror(errno));
    else if (commit && rename(a->tmp, a->path) != 0)
        s = sv_error(SV_ERR_IO, "%s: cannot rename the finished file into place: %s", a->path, strerror(errno));
    if (!commit || s != SV_OK) unlink(a->tmp);
    free(a->tmp);
    free(a->path);
    free(a);
    return s;
}
