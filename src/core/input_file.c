/* Input files read whole (project files, pixel maps, pattern files):
 * regular files only. open() of a FIFO with no writer blocks forever and a
 * directory fails later as a bare "read error", so the file is opened
 * without blocking, checked with fstat, and only then read as usual. */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "solvent/core.h"

/* What a file of this mode is, for the refusal; NULL for a regular file. */
static const char *not_regular(mode_t mode)
{
    if (S_ISREG(mode)) return NULL;
    if (S_ISDIR(mode)) return "is a directory, not a file";
    if (S_ISFIFO(mode)) return "is a FIFO (named pipe), not a regular file";
    if (S_ISCHR(mode) || S_ISBLK(mode)) return "is a device, not a regular file";
    if (S_ISSOCK(mode)) return "is a socket, not a regular file";
    return "is not a regular file";
}

FILE *sv_input_file_open(const char *path, char *why, size_t cap)
{
    if (!path) {
        snprintf(why, cap, "no file name");
        return NULL;
    }
    int fd = open(path, O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
    if (fd < 0) {
        snprintf(why, cap, "cannot open: %s", strerror(errno));
        return NULL;
    }
    struct stat sb;
    const char *kind = fstat(fd, &sb) ? "cannot be examined (fstat failed)" : not_regular(sb.st_mode);
    int flags = kind ? 0 : fcntl(fd, F_GETFL);
    FILE *f = NULL;
    if (!kind && flags >= 0 && fcntl(fd, F_SETFL, flags & ~O_NONBLOCK) == 0) f = fdopen(fd, "rb");
    if (!f) {
        if (kind) snprintf(why, cap, "%s", kind);
        else snprintf(why, cap, "cannot open: %s", strerror(errno));
        close(fd);
    }
    return f;
}

/* "64 MiB", "2 GiB" or "1000 bytes", for the refusal of a longer file. */
static void size_text(size_t bytes, char *out, size_t cap)
{
    const size_t mib = (size_t)1 << 20, gib = (size_t)1 << 30;
    if (bytes && bytes % gib == 0) snprintf(out, cap, "%zu GiB", bytes / gib);
    else if (bytes && bytes % mib == 0) snprintf(out, cap, "%zu MiB", bytes / mib);
    else snprintf(out, cap, "%zu bytes", bytes);
}

sv_status sv_input_file_read(const char *path, const char *label, size_t max_bytes, const char *kind, char **out,
                             size_t *len)
{
    *out = NULL;
    *len = 0;
    char why[160];
    FILE *f = sv_input_file_open(path, why, sizeof why);
    if (!f) return sv_error(SV_ERR_IO, "%s: %s", label, why);
    /* the buffer grows by doubling up to max_bytes + 1: a file that fills
     * that is longer than allowed, so exactly max_bytes still fits */
    size_t cap = max_bytes < 4096 ? max_bytes + 1 : 4096, n = 0;
    char *buf = malloc(cap + 1);
    int nomem = !buf, big = 0;
    while (buf) {
        n += fread(buf + n, 1, cap - n, f);
        if (n < cap) break;
        if (cap > max_bytes) {
            big = 1;
            break;
        }
        size_t next = cap > max_bytes / 2 ? max_bytes + 1 : 2 * cap;
        char *nb = realloc(buf, next + 1);
        if (!nb) {
            nomem = 1;
            break;
        }
        buf = nb;
        cap = next;
    }
    int err = ferror(f);
    fclose(f);
    if (nomem || err || big) {
        free(buf);
        if (nomem) return sv_error(SV_ERR_NOMEM, "%s: no memory to read the file", label);
        if (err) return sv_error(SV_ERR_IO, "%s: read error", label);
        char limit[32];
        size_text(max_bytes, limit, sizeof limit);
        return sv_error(SV_ERR_PARSE, "%s: larger than %s: not %s", label, limit, kind);
    }
    buf[n] = 0;
    *out = buf;
    *len = n;
    return SV_OK;
}
