/* Input files read whole (project files, pixel maps, pattern files):
 * regular files only. open() of a FIFO with no writer blocks forever and a
 * directory fails later as a bare "read error", so the file is opened
 * without blocking, checked with fstat, and only then read as usual. */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
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
