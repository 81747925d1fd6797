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

sv_status sv_sparse_pattern_read_mm(sv_ctx *ctx, const char *path, sv_sparse_pattern **out)
{
    if (!out) return sv_error(SV_ERR_ARG, "sv_sparse_pattern_read_mm: out is NULL");
    *out = NULL;
    if (!path) return sv_error(SV_ERR_ARG, "sv_sparse_pattern_read_mm: path is NULL");
    FILE *f = fopen(path, "r");
    if (!f) return sv_error(SV_ERR_IO, "pattern file '%s': cannot open: %s", path, strerror(errno));
    char line[1024], w[5][64];
    sv_status s = SV_OK;
    int *rows = NULL, *cols = NULL;
    long lineno = 1;
    if (!fgets(line, sizeof line, f) ||
        sscanf(line, "%63s %63s %63s %63s %63s", w[0], w[1], w[2], w[3], w[4]) != 5 ||
        !word_is(w[0], "%%MatrixMarket") || !word_is(w[1], "matrix") || !word_is(w[2], "coordinate")) {
        s = sv_error(SV_ERR_PARSE,
                     "pattern file '%s', line 1: expected '%%%%MatrixMarket matrix coordinate FIELD SYMMETRY'", path);
        goto done;
    }
    if (!word_is(w[3], "pattern") && !word_is(w[3], "real") && !word_is(w[3], "integer") &&
        !word_is(w[3], "complex")) {
        s = sv_error(SV_ERR_PARSE, "pattern file '%s', line 1: field '%s': expected pattern, real, integer or complex",
                     path, w[3]);
        goto done;
    }
    int mirror = 0;
    if (word_is(w[4], "symmetric") || word_is(w[4], "skew-symmetric") || word_is(w[4], "hermitian"))
        mirror = 1;
    else if (!word_is(w[4], "general")) {
        s = sv_error(SV_ERR_PARSE, "pattern file '%s', line 1: symmetry '%s': expected general, symmetric, "
                                   "skew-symmetric or hermitian", path, w[4]);
        goto done;
    }
    long nr = -1, nc = -1, ne = -1;
    while (fgets(line, sizeof line, f)) {
        lineno++;
        char *c = line;
        while (isspace((unsigned char)*c)) c++;
        if (*c == '%' || *c == 0) continue;
        if (sscanf(c, "%ld %ld %ld", &nr, &nc, &ne) != 3) {
            s = sv_error(SV_ERR_PARSE, "pattern file '%s', line %ld: expected 'rows cols entries'", path, lineno);
            goto done;
        }
        break;
    }
    if (nr < 1 || nc != nr || ne < 0 || nr > 100000000 || ne > 500000000) {
        s = sv_error(SV_ERR_PARSE, "pattern file '%s', line %ld: size %ld x %ld with %ld entries: expected a square "
                                   "matrix, n >= 1", path, lineno, nr, nc, ne);
        goto done;
    }
    long cap = (mirror ? 2 : 1) * ne;
    rows = sv_alloc(ctx, (size_t)(cap ? cap : 1) * sizeof(int), "pattern file rows");
    cols = sv_alloc(ctx, (size_t)(cap ? cap : 1) * sizeof(int), "pattern file cols");
    if (!rows || !cols) {
        s = sv_last_status();
        goto done;
    }
    long m = 0, got = 0;
    while (got < ne && fgets(line, sizeof line, f)) {
        lineno++;
        char *c = line;
        while (isspace((unsigned char)*c)) c++;
        if (*c == '%' || *c == 0) continue;
        long i, j;
        if (sscanf(c, "%ld %ld", &i, &j) != 2) {
            s = sv_error(SV_ERR_PARSE, "pattern file '%s', line %ld: expected 'i j'", path, lineno);
            goto done;
        }
        if (i < 1 || i > nr || j < 1 || j > nr) {
            s = sv_error(SV_ERR_PATTERN, "pattern file '%s', line %ld: entry (%ld, %ld) outside 1..%ld", path, lineno,
                         i, j, nr);
            goto done;
        }
        rows[m] = (int)(i - 1);
        cols[m] = (int)(j - 1);
        m++;
        if (mirror && i != j) {
            rows[m] = (int)(j - 1);
            cols[m] = (int)(i - 1);
            m++;
        }
        got++;
    }
    if (got < ne) {
        s = sv_error(SV_ERR_PARSE, "pattern file '%s': %ld entries announced, %ld found", path, ne, got);
        goto done;
    }
    s = sv_sparse_pattern_from_coo(ctx, (int)nr, (int)m, rows, cols, out);
done:
    sv_free(ctx, rows);
    sv_free(ctx, cols);
    fclose(f);
    return s;
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
