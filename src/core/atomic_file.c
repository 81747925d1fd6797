/* Atomic file output: a failed run never leaves a half-written file and
 * never clobbers a good one.
 *
 * A regular file (or a path that does not exist yet) is written to an
 * anonymous file in the target's folder (O_TMPFILE) that is linked into
 * place only when everything was written: a process killed mid-write
 * leaves nothing behind. Where the file system has no O_TMPFILE, a named
 * temporary "<target>.tmpXXXXXX" beside it is renamed over the target; it
 * is locked (flock) while its writer lives, so the next open of the same
 * target removes temporaries of that name whose writer died.
 *
 * A symlink is followed and the file at the end of it replaced (the link
 * stays a link). A device, FIFO or other special file is written through,
 * never replaced: `-o /dev/null` discards, a FIFO streams.
 *
 * New files get the mode an ordinary new file would have (0666 less the
 * umask). */
#define _GNU_SOURCE /* O_TMPFILE, flock */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "atomic_file_internal.h"

typedef enum af_mode {
    AF_ANON,   /* O_TMPFILE, linked into place on commit */
    AF_NAMED,  /* mkstemp beside the target, renamed on commit */
    AF_STREAM  /* a special file, written through */
} af_mode;

struct sv_atomic_file {
    FILE *f;
    char *path;   /* as given, for messages */
    char *target; /* what is replaced: path, or the end of its symlink chain */
    char *tmp;    /* AF_NAMED: the temporary's name */
    af_mode mode;
};

#define AF_TMP_TAG ".tmp"
#define AF_TMP_RANDOM 6 /* mkstemp's XXXXXX */
#define AF_MAX_LINKS 40 /* symlinks followed, as the kernel's limit */

static char *dup_str(const char *s)
{
    size_t n = strlen(s) + 1;
    char *d = malloc(n);
    if (d) memcpy(d, s, n);
    return d;
}

/* The folder part of path ("." when there is none), malloc'ed. */
static char *dir_of(const char *path)
{
    const char *slash = strrchr(path, '/');
    if (!slash) return dup_str(".");
    size_t n = slash == path ? 1 : (size_t)(slash - path);
    char *d = malloc(n + 1);
    if (d) memcpy(d, path, n), d[n] = 0;
    return d;
}

static const char *base_of(const char *path)
{
    const char *slash = strrchr(path, '/');
    return slash ? slash + 1 : path;
}

/* The end of path's symlink chain (path itself when it is no link), which
 * need not exist: a dangling link names the file to create. */
static sv_status resolve_target(const char *path, char **out)
{
    char *cur = dup_str(path);
    for (int hops = 0; cur; hops++) {
        struct stat sb;
        if (lstat(cur, &sb) != 0 || !S_ISLNK(sb.st_mode)) {
            *out = cur;
            return SV_OK;
        }
        if (hops == AF_MAX_LINKS) {
            free(cur);
            return sv_error(SV_ERR_IO, "%s: more than %d symbolic links in a chain", path, AF_MAX_LINKS);
        }
        char link[4096];
        ssize_t n = readlink(cur, link, sizeof link - 1);
        if (n < 0) {
            sv_status s = sv_error(SV_ERR_IO, "%s: cannot read the symbolic link %s: %s", path, cur, strerror(errno));
            free(cur);
            return s;
        }
        link[n] = 0;
        char *dir = link[0] == '/' ? NULL : dir_of(cur);
        size_t len = (dir ? strlen(dir) + 1 : 0) + (size_t)n + 1;
        char *next = (link[0] == '/' || dir) ? malloc(len) : NULL;
        if (next) snprintf(next, len, "%s%s%s", dir ? dir : "", dir ? "/" : "", link);
        free(dir);
        free(cur);
        cur = next;
    }
    return sv_error(SV_ERR_NOMEM, "%s: no memory for the output file's name", path);
}

/* name == base + ".tmp" + six characters of mkstemp's alphabet? */
static int is_our_temporary(const char *name, const char *base, size_t blen)
{
    if (strncmp(name, base, blen) || strncmp(name + blen, AF_TMP_TAG, strlen(AF_TMP_TAG))) return 0;
    const char *r = name + blen + strlen(AF_TMP_TAG);
    if (strlen(r) != AF_TMP_RANDOM) return 0;
    for (; *r; r++)
        if (!((*r >= 'a' && *r <= 'z') || (*r >= 'A' && *r <= 'Z') || (*r >= '0' && *r <= '9'))) return 0;
    return 1;
}

/* Remove the temporaries of target's name left by writers that died: ours
 * (same owner), regular files, and unlocked (a live writer holds its lock). */
static void clean_stale(const char *target)
{
    char *dir = dir_of(target);
    DIR *d = dir ? opendir(dir) : NULL;
    free(dir);
    if (!d) return; /* nothing to clean that we could reach: not an error */
    const char *base = base_of(target);
    size_t blen = strlen(base);
    int dfd = dirfd(d);
    for (struct dirent *e; (e = readdir(d));) {
        if (!is_our_temporary(e->d_name, base, blen)) continue;
        int fd = openat(dfd, e->d_name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
        if (fd < 0) continue;
        struct stat sb, now;
        if (fstat(fd, &sb) == 0 && S_ISREG(sb.st_mode) && sb.st_uid == geteuid() &&
            flock(fd, LOCK_EX | LOCK_NB) == 0 && fstatat(dfd, e->d_name, &now, AT_SYMLINK_NOFOLLOW) == 0 &&
            now.st_ino == sb.st_ino && now.st_dev == sb.st_dev)
            unlinkat(dfd, e->d_name, 0);
        close(fd);
    }
    closedir(d);
}

/* Six characters of mkstemp's alphabet, different for each attempt. */
static void random_suffix(char *out, unsigned attempt)
{
    static const char alphabet[] = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789";
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    uint64_t x = (uint64_t)ts.tv_nsec ^ ((uint64_t)ts.tv_sec << 30) ^ ((uint64_t)getpid() << 40) ^
                 (uint64_t)(uintptr_t)out ^ ((uint64_t)attempt * 0x9E3779B97F4A7C15ULL);
    for (int k = 0; k < AF_TMP_RANDOM; k++) {
        x ^= x >> 31, x *= 0xBF58476D1CE4E5B9ULL, x ^= x >> 29; /* splitmix64's finaliser */
        out[k] = alphabet[x % (sizeof alphabet - 1)];
    }
    out[AF_TMP_RANDOM] = 0;
}

/* "<target>.tmp" + six characters, malloc'ed (XXXXXX when random is NULL). */
static char *temporary_name(const char *target, const char *random)
{
    size_t len = strlen(target) + strlen(AF_TMP_TAG) + AF_TMP_RANDOM + 1;
    char *t = malloc(len);
    if (t) snprintf(t, len, "%s%s%s", target, AF_TMP_TAG, random ? random : "XXXXXX");
    return t;
}

/* An anonymous file in the target's folder, or -1 where the file system
 * (or a missing /proc, needed to link it) does not allow it. */
static int open_anonymous(const char *target)
{
#ifdef O_TMPFILE
    if (access("/proc/self/fd", X_OK) != 0) return -1;
    char *dir = dir_of(target);
    int fd = dir ? open(dir, O_TMPFILE | O_WRONLY | O_CLOEXEC, 0666) : -1;
    free(dir);
    return fd;
#else
    (void)target;
    return -1;
#endif
}

/* A named temporary beside the target, locked, mode 0666 less the umask. */
static sv_status open_named(sv_atomic_file *a, int *fd_out)
{
    for (int attempt = 0; attempt < 8; attempt++) {
        char *tmp = temporary_name(a->target, NULL);
        if (!tmp) return sv_error(SV_ERR_NOMEM, "%s: no memory for the output file's name", a->path);
        int fd = mkstemp(tmp);
        if (fd < 0) {
            sv_status s = sv_error(SV_ERR_IO, "%s: cannot create a temporary file beside it: %s", a->path,
                                   strerror(errno));
            free(tmp);
            return s;
        }
        /* a cleaner may have taken it between mkstemp and the lock: then
         * the name no longer refers to this file, and we try another */
        struct stat mine, named;
        (void)flock(fd, LOCK_EX); /* without locks (ENOLCK) the temporary is merely never cleaned */
        if (fstat(fd, &mine) == 0 && stat(tmp, &named) == 0 && mine.st_ino == named.st_ino &&
            mine.st_dev == named.st_dev) {
            mode_t mask = umask(0);
            umask(mask);
            if (fchmod(fd, 0666 & ~mask) != 0) {
                sv_status s = sv_error(SV_ERR_IO, "%s: cannot set its temporary file's mode: %s", a->path,
                                       strerror(errno));
                close(fd), unlink(tmp), free(tmp);
                return s;
            }
            a->tmp = tmp;
            *fd_out = fd;
            return SV_OK;
        }
        close(fd);
        free(tmp);
    }
    return sv_error(SV_ERR_IO, "%s: its temporary files keep disappearing", a->path);
}

/* A special file (device, FIFO): written through as it is. */
static sv_status open_stream(sv_atomic_file *a, int *fd_out)
{
    int fd = open(a->path, O_WRONLY | O_NOCTTY | O_CLOEXEC);
    if (fd < 0) return sv_error(SV_ERR_IO, "%s: cannot open for writing: %s", a->path, strerror(errno));
    *fd_out = fd;
    return SV_OK;
}

/* Where the output goes, and an open descriptor for it. */
static sv_status open_output(sv_atomic_file *a, int anonymous, int *fd)
{
    struct stat sb;
    if (stat(a->path, &sb) == 0 && !S_ISREG(sb.st_mode)) {
        if (S_ISDIR(sb.st_mode)) return sv_error(SV_ERR_IO, "%s: is a directory, expected a file name", a->path);
        a->mode = AF_STREAM;
        return open_stream(a, fd);
    }
    sv_status s = resolve_target(a->path, &a->target);
    if (s) return s;
    clean_stale(a->target);
    if (anonymous && (*fd = open_anonymous(a->target)) >= 0) {
        (void)flock(*fd, LOCK_EX); /* guards the moment it has a temporary name (link_into_place) */
        a->mode = AF_ANON;
        return SV_OK;
    }
    a->mode = AF_NAMED;
    return open_named(a, fd);
}

static void release(sv_atomic_file *a)
{
    free(a->path);
    free(a->target);
    free(a->tmp);
    free(a);
}

sv_status sv_atomic_file_open_as(const char *path, int anonymous, sv_atomic_file **out)
{
    if (!path || !out) return sv_error(SV_ERR_ARG, "sv_atomic_file_open: path or out is NULL");
    *out = NULL;
    if (!path[0]) return sv_error(SV_ERR_ARG, "sv_atomic_file_open: the path is empty");
    sv_atomic_file *a = calloc(1, sizeof *a);
    if (!a || !(a->path = dup_str(path))) {
        free(a);
        return sv_error(SV_ERR_NOMEM, "%s: no memory for the output file's name", path);
    }
    int fd = -1;
    sv_status s = open_output(a, anonymous, &fd);
    if (s == SV_OK && !(a->f = fdopen(fd, "w")))
        s = sv_error(SV_ERR_IO, "%s: cannot open its stream: %s", path, strerror(errno));
    if (s) {
        if (fd >= 0 && !a->f) close(fd);
        if (a->tmp) unlink(a->tmp);
        release(a);
        return s;
    }
    *out = a;
    return SV_OK;
}

sv_status sv_atomic_file_open(const char *path, sv_atomic_file **out)
{
    return sv_atomic_file_open_as(path, 1, out);
}

FILE *sv_atomic_file_stream(sv_atomic_file *a) { return a ? a->f : NULL; }

/* Link the finished anonymous file (open as fd) at the target: directly
 * when the name is free, else under a temporary name renamed over it. */
static sv_status link_into_place(const sv_atomic_file *a, int fd)
{
    char proc[64];
    snprintf(proc, sizeof proc, "/proc/self/fd/%d", fd);
    if (linkat(AT_FDCWD, proc, AT_FDCWD, a->target, AT_SYMLINK_FOLLOW) == 0) return SV_OK;
    for (unsigned attempt = 0; errno == EEXIST && attempt < 100; attempt++) {
        char random[AF_TMP_RANDOM + 1];
        random_suffix(random, attempt);
        char *tmp = temporary_name(a->target, random);
        if (!tmp) return sv_error(SV_ERR_NOMEM, "%s: no memory for the output file's name", a->path);
        if (linkat(AT_FDCWD, proc, AT_FDCWD, tmp, AT_SYMLINK_FOLLOW) == 0) {
            sv_status s = SV_OK;
            if (rename(tmp, a->target) != 0) {
                s = sv_error(SV_ERR_IO, "%s: cannot rename the finished file into place: %s", a->path,
                             strerror(errno));
                unlink(tmp);
            }
            free(tmp);
            return s;
        }
        free(tmp);
    }
    return sv_error(SV_ERR_IO, "%s: cannot link the finished file into place: %s", a->path, strerror(errno));
}

/* Flush and close the stream (syncing it first when it is to be kept);
 * returns 0, or -1 with errno set. The descriptor in *keep stays open
 * (-1 when none is needed). */
static int finish_stream(sv_atomic_file *a, int commit, int *keep)
{
    int fd = fileno(a->f), bad = ferror(a->f) != 0, err = bad ? EIO : 0;
    *keep = a->mode == AF_ANON && commit ? dup(fd) : -1;
    if (a->mode == AF_ANON && commit && *keep < 0) bad = 1, err = errno;
    if (fflush(a->f) != 0) bad = 1, err = errno;
    if (commit && !bad && a->mode != AF_STREAM && fsync(fd) != 0) bad = 1, err = errno;
    if (fclose(a->f) != 0 && !bad) bad = 1, err = errno;
    errno = err;
    return bad ? -1 : 0;
}

sv_status sv_atomic_file_close(sv_atomic_file *a, int commit)
{
    if (!a) return SV_OK;
    sv_status s = SV_OK;
    int keep = -1;
    if (finish_stream(a, commit, &keep) != 0 && commit)
        s = sv_error(SV_ERR_IO, "%s: writing failed: %s", a->path, strerror(errno));
    else if (commit && a->mode == AF_ANON)
        s = link_into_place(a, keep);
    else if (commit && a->mode == AF_NAMED && rename(a->tmp, a->target) != 0)
        s = sv_error(SV_ERR_IO, "%s: cannot rename the finished file into place: %s", a->path, strerror(errno));
    if (keep >= 0) close(keep);
    if (a->tmp && (!commit || s != SV_OK)) unlink(a->tmp);
    release(a);
    return s;
}
