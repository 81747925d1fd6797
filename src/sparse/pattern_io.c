/* Matrix Market coordinate files as pattern files (the format `solvent
 * codegen` reads): header "%%MatrixMarket matrix coordinate FIELD SYMMETRY"
 * with FIELD pattern, real, integer or complex (values are ignored) and
 * SYMMETRY general, symmetric, skew-symmetric or hermitian (the mirrored
 * entries are added); '%' comment lines; a size line "rows cols entries";
 * then one 1-based "i j [values]" line per entry. The matrix must be square.
 * Reference: NIST Matrix Market exchange formats (Boisvert, Pozo, Remington
 * 1996). Hand-written because the format is a few lines and SuiteSparse's
 * readers (CHOLMOD) would pull in a large dependency for it. */
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "sparse_internal.h"

static int word_is(const char *w, const char *s) { return strcasecmp(w, s) == 0; }

#define MM_LINE_MAX 1024 /* bytes of a line, its newline included */

/* One line into line[MM_LINE_MAX] (*lineno counted); *got = 0 at the end of
 * the file. A line longer than the buffer is an error, never split in two. */
static sv_status read_line(FILE *f, const char *path, char *line, long *lineno, int *got)
{
    *got = fgets(line, MM_LINE_MAX, f) != NULL;
    if (!*got) return SV_OK;
    ++*lineno;
    size_t len = strlen(line);
    if (len < MM_LINE_MAX - 1 || line[len - 1] == '\n') return SV_OK;
    int next = getc(f); /* a line of exactly MM_LINE_MAX - 1 characters ends here */
    if (next != '\n' && next != EOF)
        return sv_error(SV_ERR_PARSE, "pattern file '%s', line %ld: longer than %d characters", path, *lineno,
                        MM_LINE_MAX - 1);
    return SV_OK;
}

/* The next line that is not a comment or blank, leading space skipped, in
 * *out; NULL at the end. */
static sv_status next_line(FILE *f, const char *path, char *line, long *lineno, char **out)
{
    int got;
    sv_status s;
    *out = NULL;
    while ((s = read_line(f, path, line, lineno, &got)) == SV_OK && got) {
        char *c = line;
        while (isspace((unsigned char)*c)) c++;
        if (*c != '%' && *c != 0) {
            *out = c;
            return SV_OK;
        }
    }
    return s;
}

/* Line 1: "%%MatrixMarket matrix coordinate FIELD SYMMETRY"; *mirror for the
 * symmetries whose mirrored entries are implied. */
static sv_status read_header(FILE *f, const char *path, int *mirror)
{
    char line[MM_LINE_MAX], w[5][64];
    long lineno = 0;
    int got;
    sv_status s = read_line(f, path, line, &lineno, &got);
    if (s) return s;
    if (!got ||
        sscanf(line, "%63s %63s %63s %63s %63s", w[0], w[1], w[2], w[3], w[4]) != 5 ||
        !word_is(w[0], "%%MatrixMarket") || !word_is(w[1], "matrix") || !word_is(w[2], "coordinate"))
        return sv_error(SV_ERR_PARSE,
                        "pattern file '%s', line 1: expected '%%%%MatrixMarket matrix coordinate FIELD SYMMETRY'", path);
    if (!word_is(w[3], "pattern") && !word_is(w[3], "real") && !word_is(w[3], "integer") &&
        !word_is(w[3], "complex"))
        return sv_error(SV_ERR_PARSE, "pattern file '%s', line 1: field '%s': expected pattern, real, integer or complex",
                        path, w[3]);
    *mirror = word_is(w[4], "symmetric") || word_is(w[4], "skew-symmetric") || word_is(w[4], "hermitian");
    if (!*mirror && !word_is(w[4], "general"))
        return sv_error(SV_ERR_PARSE, "pattern file '%s', line 1: symmetry '%s': expected general, symmetric, "
                                      "skew-symmetric or hermitian", path, w[4]);
    return SV_OK;
}

#define MM_N_MAX 100000000L       /* rows of a pattern */
#define MM_ENTRIES_MAX 500000000L /* entries of a pattern */

/* One decimal count of the size line at *c (moved past it); *big set when
 * it does not fit a long (its value is then meaningless). 0, or -1 when
 * there is no number. */
static int size_field(const char **c, long *v, int *big)
{
    char *end;
    errno = 0;
    *v = strtol(*c, &end, 10);
    if (end == *c) return -1;
    if (errno == ERANGE) *big = 1;
    *c = end;
    return 0;
}

/* The size line "rows cols entries" of a square matrix. */
static sv_status read_size(FILE *f, const char *path, long *lineno, long *n, long *ne)
{
    char line[MM_LINE_MAX], *first;
    long nr = -1, nc = -1;
    *ne = -1;
    sv_status s = next_line(f, path, line, lineno, &first);
    if (s) return s;
    const char *c = first;
    if (!c) return sv_error(SV_ERR_PARSE, "pattern file '%s': expected 'rows cols entries', found the end of the file", path);
    int big = 0;
    if (size_field(&c, &nr, &big) || size_field(&c, &nc, &big) || size_field(&c, ne, &big))
        return sv_error(SV_ERR_PARSE, "pattern file '%s', line %ld: expected 'rows cols entries'", path, *lineno);
    if (big || nr > MM_N_MAX || nc > MM_N_MAX || *ne > MM_ENTRIES_MAX)
        return sv_error(SV_ERR_PARSE, "pattern file '%s', line %ld: size too large: expected n <= %ld and at most %ld "
                                      "entries", path, *lineno, (long)MM_N_MAX, (long)MM_ENTRIES_MAX);
    if (nr < 1 || nc != nr || *ne < 0)
        return sv_error(SV_ERR_PARSE, "pattern file '%s', line %ld: size %ld x %ld with %ld entries: expected a square "
                                      "matrix, n >= 1", path, *lineno, nr, nc, *ne);
    *n = nr;
    return SV_OK;
}

/* ne 1-based "i j" lines into 0-based rows/cols (mirrored ones added);
 * *m receives the number of pairs. Nothing but comments may follow: an
 * entry beyond the announced count would be silently lost otherwise. */
static sv_status read_entries(FILE *f, const char *path, long *lineno, long n, long ne, int mirror, int *rows,
                              int *cols, long *m)
{
    char line[MM_LINE_MAX], *c;
    long got = 0, size_line = *lineno;
    sv_status s = SV_OK;
    *m = 0;
    for (; got < ne && (s = next_line(f, path, line, lineno, &c)) == SV_OK && c; got++) {
        long i, j;
        if (sscanf(c, "%ld %ld", &i, &j) != 2)
            return sv_error(SV_ERR_PARSE, "pattern file '%s', line %ld: expected 'i j'", path, *lineno);
        if (i < 1 || i > n || j < 1 || j > n)
            return sv_error(SV_ERR_PATTERN, "pattern file '%s', line %ld: entry (%ld, %ld) outside 1..%ld", path,
                            *lineno, i, j, n);
        rows[*m] = (int)(i - 1);
        cols[(*m)++] = (int)(j - 1);
        if (mirror && i != j) {
            rows[*m] = (int)(j - 1);
            cols[(*m)++] = (int)(i - 1);
        }
    }
    if (got < ne && s) return s;
    if (got < ne)
        return sv_error(SV_ERR_PARSE, "pattern file '%s': %ld entries announced, %ld found", path, ne, got);
    if ((s = next_line(f, path, line, lineno, &c))) return s;
    if (c)
        return sv_error(SV_ERR_PARSE, "pattern file '%s', line %ld: more entries than the %ld announced on line %ld",
                        path, *lineno, ne, size_line);
    return SV_OK;
}

sv_status sv_sparse_pattern_read_mm(sv_ctx *ctx, const char *path, sv_sparse_pattern **out)
{
    if (!out) return sv_error(SV_ERR_ARG, "sv_sparse_pattern_read_mm: out is NULL");
    *out = NULL;
    if (!path) return sv_error(SV_ERR_ARG, "sv_sparse_pattern_read_mm: path is NULL");
    char why[160];
    FILE *f = sv_input_file_open(path, why, sizeof why);
    if (!f) return sv_error(SV_ERR_IO, "pattern file '%s': %s", path, why);
    int *rows = NULL, *cols = NULL, mirror = 0;
    long lineno = 1, n = 0, ne = 0, m = 0;
    sv_status st = read_header(f, path, &mirror);
    if (st == SV_OK) st = read_size(f, path, &lineno, &n, &ne);
    if (st == SV_OK) {
        long cap = (mirror ? 2 : 1) * ne;
        rows = sv_alloc(ctx, (size_t)(cap ? cap : 1) * sizeof(int), "pattern file rows");
        cols = sv_alloc(ctx, (size_t)(cap ? cap : 1) * sizeof(int), "pattern file cols");
        st = rows && cols ? read_entries(f, path, &lineno, n, ne, mirror, rows, cols, &m) : sv_last_status();
    }
    if (st == SV_OK) st = sv_sparse_pattern_from_coo(ctx, (int)n, (int)m, rows, cols, out);
    sv_free(ctx, rows);
    sv_free(ctx, cols);
    fclose(f);
    return st;
}

sv_status sv_sparse_pattern_write_mm(const sv_sparse_pattern *p, FILE *out)
{
    if (!p || !out) return sv_error(SV_ERR_ARG, "sv_sparse_pattern_write_mm: pattern or out is NULL");
    int r = fprintf(out, "%%%%MatrixMarket matrix coordinate pattern general\n%d %d %d\n", p->n, p->n, p->nnz);
    for (int i = 0; i < p->n && r >= 0; i++)
        for (int e = p->rowptr[i]; e < p->rowptr[i + 1] && r >= 0; e++) r = fprintf(out, "%d %d\n", i + 1, p->colind[e] + 1);
    if (r < 0 || ferror(out)) return sv_error(SV_ERR_IO, "sv_sparse_pattern_write_mm: write failed");
    return SV_OK;
}
