/* `solvent batch`'s outputs and its index, so that an interrupted batch
 * restarts where it stopped: a map's outputs are complete before its row
 * is added to the index (a Touchstone file written under a temporary name
 * and renamed; a block of the array written in place and synced), and the
 * index is appended one whole row at a time and synced, so a row means a
 * finished map. A resumed batch skips the maps the index has a row for. */
#define _POSIX_C_SOURCE 200809L
#include <complex.h>
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "batch_tool.h"
#include "npy.h"
#include "solvent/core.h"
#include "solvent/em.h"
#include "tool_args.h"

static const char index_header[] = "row,map,status,message\n";

static char *join(const char *dir, const char *name)
{
    char *p = malloc(strlen(dir) + strlen(name) + 2);
    if (p) sprintf(p, "%s/%s", dir, name);
    return p;
}

/* A CSV field (RFC 4180): quoted when it holds a comma, a quote or a line
 * break, quotes doubled; line breaks become blanks (a row is one line). */
static void put_field(FILE *f, const char *s)
{
    if (!strpbrk(s, ",\"\n\r")) {
        fputs(s, f);
        return;
    }
    fputc('"', f);
    for (; *s; s++) {
        if (*s == '"') fputc('"', f);
        fputc(*s == '\n' || *s == '\r' ? ' ' : *s, f);
    }
    fputc('"', f);
}

/* A row of the index, complete on disk before the call returns. */
static int put_row(batch_out *o, const batch_maps *ms, int k, const char *status, const char *message)
{
    fprintf(o->index, "%d,", k);
    put_field(o->index, ms->m[k].name);
    fprintf(o->index, ",%s,", status);
    put_field(o->index, message);
    fputc('\n', o->index);
    if (fflush(o->index) || fsync(fileno(o->index)))
        return tool_say("batch", "%s/index.csv: cannot write: %s", o->dir, strerror(errno)), 1;
    o->done[k] = 1;
    return 0;
}

/* The leading field of a row up to its comma (a quoted one unquoted) into
 * out; returns the rest after the comma, or NULL. */
static const char *get_field(const char *s, const char *end, char *out, size_t cap)
{
    size_t n = 0;
    int quoted = s < end && *s == '"';
    if (quoted) s++;
    while (s < end) {
        if (quoted && *s == '"' && s + 1 < end && s[1] == '"') s++;
        else if (quoted && *s == '"') { quoted = 0; s++; continue; }
        else if (!quoted && *s == ',') break;
        if (n + 1 < cap) out[n++] = *s;
        s++;
    }
    out[n] = 0;
    return s < end ? s + 1 : NULL;
}

/* One row read back: map k's name must be the maps' k-th (else the index
 * belongs to another list of maps). */
static int take_row(batch_out *o, const batch_maps *ms, const char *s, const char *end, int line)
{
    char row[32], name[4096], status[16] = "";
    s = get_field(s, end, row, sizeof row);
    if (s) s = get_field(s, end, name, sizeof name);
    if (s) get_field(s, end, status, sizeof status);
    char *e;
    long k = strtol(row, &e, 10);
    if (!s || *e || e == row || k < 0 || k >= o->nmaps || strcmp(name, ms->m[k].name)) {
        tool_say("batch", "%s/index.csv, line %d: its row does not match map %s of this batch (the index of another "
                 "list of maps, or another board?): use another output directory", o->dir, line,
                 k >= 0 && k < o->nmaps ? ms->m[k].name : row);
        return 1;
    }
    o->done[k] = 1;
    o->failed_before += strcmp(status, "ok") != 0;
    return 0;
}

/* The index read back: its header, its whole rows; a last row cut short by
 * an interruption is cut off. */
static int read_index(batch_out *o, const batch_maps *ms, const char *path)
{
    char *text = NULL;
    size_t len = 0;
    if (sv_input_file_read(path, path, (size_t)1 << 30, "an index", &text, &len))
        return tool_say("batch", "%s", sv_last_error()), 1;
    size_t hl = strlen(index_header);
    int bad = len < hl || memcmp(text, index_header, hl);
    if (bad) tool_say("batch", "%s: not a batch index (its first line is not '%.*s')", path, (int)hl - 1, index_header);
    size_t q = hl, whole = hl;
    for (int line = 2; !bad && q < len; line++) {
        char *nl = memchr(text + q, '\n', len - q);
        if (!nl) break; /* cut short */
        bad = take_row(o, ms, text + q, nl, line);
        q = whole = (size_t)(nl - text) + 1;
    }
    free(text);
    if (!bad && whole < len && truncate(path, (off_t)whole))
        return tool_say("batch", "%s: cannot cut its last, unfinished row: %s", path, strerror(errno)), 1;
    return bad;
}

static int open_index(batch_out *o, const batch_maps *ms)
{
    char *path = join(o->dir, "index.csv");
    if (!path) return tool_say("batch", "out of memory"), 1;
    struct stat st;
    int resumed = !stat(path, &st);
    int bad = resumed && read_index(o, ms, path);
    if (!bad) {
        o->index = fopen(path, "a");
        if (!o->index) bad = (tool_say("batch", "%s: cannot write: %s", path, strerror(errno)), 1);
        else if (!resumed && (fputs(index_header, o->index) < 0 || fflush(o->index)))
            bad = (tool_say("batch", "%s: cannot write: %s", path, strerror(errno)), 1);
    }
    free(path);
    return bad;
}

/* ---- the array: s.npy, nmaps × nf × p × p complex128 ------------------------ */

static size_t block_bytes(const batch_out *o) { return (size_t)o->nf * o->p * o->p * 16; }

static int array_header(const batch_out *o, char *h, size_t cap, size_t *len)
{
    size_t dims[4] = {(size_t)o->nmaps, (size_t)o->nf, (size_t)o->p, (size_t)o->p};
    return tool_npy_header("<c16", 4, dims, h, cap, len);
}

/* A new array: the header and NaN everywhere (a map not yet solved),
 * written atomically. */
static int make_array(batch_out *o, const char *path)
{
    char h[256];
    size_t hl;
    if (array_header(o, h, sizeof h, &hl)) return tool_say("batch", "the array's header does not fit"), 1;
    sv_atomic_file *a;
    if (sv_atomic_file_open(path, &a)) return tool_say("batch", "%s", sv_last_error()), 1;
    FILE *f = sv_atomic_file_stream(a);
    fwrite(h, 1, hl, f);
    double complex nan_block[64];
    for (int k = 0; k < 64; k++) nan_block[k] = CMPLX(NAN, NAN);
    size_t left = (size_t)o->nmaps * block_bytes(o) / 16;
    while (left) {
        size_t n = left < 64 ? left : 64;
        fwrite(nan_block, 16, n, f);
        left -= n;
    }
    if (sv_atomic_file_close(a, 1)) return tool_say("batch", "%s", sv_last_error()), 1;
    return 0;
}

/* An existing array must have this batch's header and size. */
static int check_array(batch_out *o, const char *path, int fd)
{
    char h[256], old[256];
    size_t hl;
    struct stat st;
    if (array_header(o, h, sizeof h, &hl)) return 1;
    if (pread(fd, old, hl, 0) != (ssize_t)hl || memcmp(h, old, hl) || fstat(fd, &st) ||
        (size_t)st.st_size != hl + (size_t)o->nmaps * block_bytes(o)) {
        tool_say("batch", "%s: not this batch's array (%d maps x %d frequencies x %d x %d complex): use another "
                 "output directory", path, o->nmaps, o->nf, o->p, o->p);
        return 1;
    }
    return 0;
}

static int open_array(batch_out *o)
{
    char h[256];
    char *path = join(o->dir, "s.npy");
    if (!path || array_header(o, h, sizeof h, &o->data_at)) return tool_say("batch", "out of memory"), 1;
    struct stat st;
    int bad = stat(path, &st) ? make_array(o, path) : 0;
    if (!bad) {
        o->fd_s = open(path, O_RDWR);
        if (o->fd_s < 0) bad = (tool_say("batch", "%s: cannot open: %s", path, strerror(errno)), 1);
        else bad = check_array(o, path, o->fd_s);
    }
    free(path);
    return bad;
}

/* freq_hz.npy: the frequencies (Hz) of the array's second axis, once. */
static int write_freq(batch_out *o, const double *freq)
{
    char h[256];
    size_t hl, dims[1] = {(size_t)o->nf};
    char *path = join(o->dir, "freq_hz.npy");
    sv_atomic_file *a = NULL;
    int bad = !path || tool_npy_header("<f8", 1, dims, h, sizeof h, &hl) || sv_atomic_file_open(path, &a);
    if (!bad) {
        FILE *f = sv_atomic_file_stream(a);
        fwrite(h, 1, hl, f);
        fwrite(freq, sizeof(double), (size_t)o->nf, f);
        bad = sv_atomic_file_close(a, 1) != SV_OK;
    }
    if (bad) tool_say("batch", "%s: cannot write: %s", path ? path : "freq_hz.npy", sv_last_error());
    free(path);
    o->have_freq = !bad;
    return bad;
}

/* ---- the outputs ------------------------------------------------------------- */

int batch_out_open(batch_out *o, const batch_maps *ms)
{
    o->fd_s = -1;
    if (mkdir(o->dir, 0777) && errno != EEXIST)
        return tool_say("batch", "-o %s: cannot make the directory: %s", o->dir, strerror(errno)), 1;
    o->done = calloc((size_t)(o->nmaps ? o->nmaps : 1), 1);
    if (!o->done) return tool_say("batch", "out of memory"), 1;
    if (open_index(o, ms)) return 1;
    return o->format == BATCH_NPY ? open_array(o) : 0;
}

static int write_block(batch_out *o, int k, const double complex *s)
{
    size_t bytes = block_bytes(o);
    off_t at = (off_t)(o->data_at + (size_t)k * bytes);
    if (pwrite(o->fd_s, s, bytes, at) != (ssize_t)bytes || fdatasync(o->fd_s))
        return tool_say("batch", "%s/s.npy: cannot write map %d: %s", o->dir, k, strerror(errno)), 1;
    return 0;
}

static int write_touchstone(batch_out *o, const batch_maps *ms, int k, const sv_planar_network *net)
{
    char name[64], comment[4200];
    snprintf(name, sizeof name, ".s%dp", net->p);
    char *file = malloc(strlen(ms->m[k].name) + strlen(name) + 1);
    if (!file) return tool_say("batch", "out of memory"), 1;
    sprintf(file, "%s%s", ms->m[k].name, name);
    char *path = join(o->dir, file);
    free(file);
    if (!path) return tool_say("batch", "out of memory"), 1;
    snprintf(comment, sizeof comment, "solvent batch: map %s on board %s", ms->m[k].path, o->board_name);
    sv_em_ts_options to;
    sv_em_ts_options_default(&to);
    to.version = SV_EM_TS_VERSION_FOR_Z0;
    to.comment = comment;
    sv_status s = sv_em_touchstone_write(path, &to, net->p, net->nf, net->freq_hz, net->s, net->z0);
    if (s) tool_say("batch", "%s", sv_last_error());
    free(path);
    return s != SV_OK;
}

int batch_out_solved(batch_out *o, const batch_maps *ms, int k, const sv_planar_job *job)
{
    const sv_planar_network *net = sv_planar_job_network(job);
    sv_planar_report rep;
    sv_planar_job_report(job, &rep);
    int bad;
    if (o->format == BATCH_NPY) {
        if (net->nf != o->nf || net->p != o->p)
            return tool_say("batch", "map %s: %d frequencies and %d ports, not the array's %d and %d", ms->m[k].name,
                            net->nf, net->p, o->nf, o->p), 1;
        bad = (!o->have_freq && write_freq(o, net->freq_hz)) || write_block(o, k, net->s);
    } else {
        bad = write_touchstone(o, ms, k, net);
    }
    const char *note = rep.converged ? "" : "the adaptive sweep reached its cap on exact solves before every "
                                            "frequency met the tolerance";
    return bad || put_row(o, ms, k, "ok", note);
}

int batch_out_failed(batch_out *o, const batch_maps *ms, int k, const char *message)
{
    return put_row(o, ms, k, "failed", message);
}

void batch_out_close(batch_out *o)
{
    if (o->index) fclose(o->index);
    if (o->fd_s >= 0) close(o->fd_s);
    free(o->done);
    o->index = NULL;
    o->fd_s = -1;
    o->done = NULL;
}
