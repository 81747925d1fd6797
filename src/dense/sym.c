/* Packed complex symmetric (or real symmetric) matrices: the lower triangle
 * stored by block columns (layout described in include/solvent/dense.h).
 * One layout for every scalar type, so that element offsets computed once
 * (e.g. by the code that assembles the real terms of a matrix) address the
 * same entry of any matrix of that order and block size. */
#include <cblas.h>
#include <math.h>
#include <stdint.h>
#include <string.h>

#include "dense_internal.h"

size_t sv_dense_elem_bytes(sv_dense_type t)
{
    switch (t) {
    case SV_DENSE_C64: return sizeof(double complex);
    case SV_DENSE_C32: return sizeof(float complex);
    case SV_DENSE_R64: return sizeof(double);
    }
    return 0;
}


static int valid_type(sv_dense_type t) { return t == SV_DENSE_C64 || t == SV_DENSE_C32 || t == SV_DENSE_R64; }

/* Bytes of the packed data, or SIZE_MAX when they do not fit in size_t. */
static size_t packed_bytes(int n, sv_dense_type type, int nb)
{
    size_t elems = sv_dense_packed_size(n, nb), es = sv_dense_elem_bytes(type);
    return elems > (SIZE_MAX - sizeof(sv_dense_sym)) / es ? SIZE_MAX : elems * es;
}

size_t sv_dense_sym_bytes(int n, sv_dense_type type, int nb)
{
    if (n < 0 || nb < 0 || !valid_type(type)) return 0;
    if (nb == 0) nb = sv_dense_default_nb(n);
    size_t bytes = packed_bytes(n, type, nb);
    return bytes == SIZE_MAX ? SIZE_MAX : bytes + sizeof(sv_dense_sym);
}

sv_status sv_dense_sym_create(sv_ctx *ctx, int n, sv_dense_type type, int nb, sv_dense_sym **out)
{
    if (!out) return sv_error(SV_ERR_ARG, "sv_dense_sym_create: out is NULL");
    *out = NULL;
    if (n < 0) return sv_error(SV_ERR_ARG, "sv_dense_sym_create: n = %d: expected >= 0", n);
    if (nb < 0) return sv_error(SV_ERR_ARG, "sv_dense_sym_create: nb = %d: expected >= 0 (0 = default)", nb);
    if (!valid_type(type)) return sv_error(SV_ERR_ARG, "sv_dense_sym_create: type = %d: not a sv_dense_type", (int)type);
    if (nb == 0) nb = sv_dense_default_nb(n);
    if (packed_bytes(n, type, nb) == SIZE_MAX)
        return sv_error(SV_ERR_ARG, "sv_dense_sym_create: n = %d: the packed matrix would exceed the address space", n);
    sv_dense_sym *a = sv_alloc(ctx, sizeof *a, "dense matrix header");
    if (!a) return sv_last_status();
    a->ctx = ctx;
    a->n = n;
    a->nb = nb;
    a->type = type;
    a->size = sv_dense_packed_size(n, nb);
    a->data = NULL;
    if (a->size) {
        /* Zero-filled: the unused upper part of the diagonal blocks then
         * holds zeros, never uninitialised values. */
        a->data = sv_calloc(ctx, a->size, sv_dense_elem_bytes(type), "packed dense matrix");
        if (!a->data) {
            sv_status st = sv_last_status();
            sv_free(ctx, a);
            return st;
        }
    }
    *out = a;
    return SV_OK;
}

void sv_dense_sym_destroy(sv_dense_sym *a)
{
    if (!a) return;
    sv_free(a->ctx, a->data);
    sv_free(a->ctx, a);
}

int sv_dense_sym_order(const sv_dense_sym *a) { return a ? a->n : -1; }
int sv_dense_sym_block(const sv_dense_sym *a) { return a ? a->nb : -1; }
sv_dense_type sv_dense_sym_type(const sv_dense_sym *a) { return a ? a->type : SV_DENSE_C64; }
size_t sv_dense_sym_size(const sv_dense_sym *a) { return a ? a->size : 0; }
void *sv_dense_sym_data(sv_dense_sym *a) { return a ? a->data : NULL; }
const void *sv_dense_sym_cdata(const sv_dense_sym *a) { return a ? a->data : NULL; }

size_t sv_dense_sym_offset(const sv_dense_sym *a, int i, int j)
{
    if (i < j) {
        int t = i;
        i = j;
        j = t;
    }
    int k = j / a->nb, c0 = k * a->nb;
    return sv_dense_packed_block_offset(a->n, a->nb, k) + (size_t)(j - c0) * (size_t)(a->n - c0) + (size_t)(i - c0);
}

double complex sv_dense_sym_get(const sv_dense_sym *a, int i, int j)
{
    if (!a || i < 0 || j < 0 || i >= a->n || j >= a->n) return NAN;
    size_t o = sv_dense_sym_offset(a, i, j);
    switch (a->type) {
    case SV_DENSE_C64: return ((const double complex *)a->data)[o];
    case SV_DENSE_C32: return ((const float complex *)a->data)[o];
    case SV_DENSE_R64: return ((const double *)a->data)[o];
    }
    return NAN;
}

void sv_dense_sym_set(sv_dense_sym *a, int i, int j, double complex v)
{
    if (!a || i < 0 || j < 0 || i >= a->n || j >= a->n) return;
    size_t o = sv_dense_sym_offset(a, i, j);
    switch (a->type) {
    case SV_DENSE_C64: ((double complex *)a->data)[o] = v; break;
    case SV_DENSE_C32: ((float complex *)a->data)[o] = (float complex)v; break;
    case SV_DENSE_R64: ((double *)a->data)[o] = creal(v); break;
    }
}

sv_status sv_dense_sym_from_full(sv_dense_sym *a, const void *full, int lda)
{
    if (!a || (!full && a->n > 0)) return sv_error(SV_ERR_ARG, "sv_dense_sym_from_full: NULL %s", a ? "full" : "a");
    if (lda < (a->n > 1 ? a->n : 1))
        return sv_error(SV_ERR_ARG, "sv_dense_sym_from_full: lda = %d: expected >= n = %d", lda, a->n);
    size_t es = sv_dense_elem_bytes(a->type);
    const char *src = full;
    char *dst = a->data;
    /* Column j of the lower triangle is contiguous in both layouts. */
    for (int j = 0; j < a->n; j++) {
        size_t o = sv_dense_sym_offset(a, j, j);
        memcpy(dst + o * es, src + ((size_t)j * (size_t)lda + (size_t)j) * es, (size_t)(a->n - j) * es);
    }
    return SV_OK;
}

sv_status sv_dense_sym_convert(const sv_dense_sym *src, sv_dense_sym *dst)
{
    if (!src || !dst) return sv_error(SV_ERR_ARG, "sv_dense_sym_convert: NULL %s", src ? "dst" : "src");
    if (src->n != dst->n || src->nb != dst->nb)
        return sv_error(SV_ERR_ARG,
                        "sv_dense_sym_convert: src is order %d block %d, dst is order %d block %d: expected equal",
                        src->n, src->nb, dst->n, dst->nb);
    if (dst->type == SV_DENSE_R64 && src->type != SV_DENSE_R64)
        return sv_error(SV_ERR_ARG, "sv_dense_sym_convert: cannot convert a complex matrix to R64");
    size_t n = src->size;
    if (src->type == dst->type) {
        if (src != dst && n) memcpy(dst->data, src->data, n * sv_dense_elem_bytes(src->type));
        return SV_OK;
    }
    if (src->type == SV_DENSE_C64 && dst->type == SV_DENSE_C32) {
        const double complex *s = src->data;
        float complex *d = dst->data;
#pragma omp parallel for schedule(static) if (n > 65536) num_threads(sv_threads_team())
        for (size_t i = 0; i < n; i++) d[i] = (float complex)s[i];
    } else if (src->type == SV_DENSE_C32 && dst->type == SV_DENSE_C64) {
        const float complex *s = src->data;
        double complex *d = dst->data;
#pragma omp parallel for schedule(static) if (n > 65536) num_threads(sv_threads_team())
        for (size_t i = 0; i < n; i++) d[i] = s[i];
    } else if (src->type == SV_DENSE_R64 && dst->type == SV_DENSE_C64) {
        const double *s = src->data;
        double complex *d = dst->data;
#pragma omp parallel for schedule(static) if (n > 65536) num_threads(sv_threads_team())
        for (size_t i = 0; i < n; i++) d[i] = s[i];
    } else if (src->type == SV_DENSE_R64 && dst->type == SV_DENSE_C32) {
        const double *s = src->data;
        float complex *d = dst->data;
#pragma omp parallel for schedule(static) if (n > 65536) num_threads(sv_threads_team())
        for (size_t i = 0; i < n; i++) d[i] = (float)s[i];
    } else {
        return sv_error(SV_ERR_INTERNAL, "sv_dense_sym_convert: unhandled types %d -> %d", (int)src->type,
                        (int)dst->type);
    }
    return SV_OK;
}

double sv_dense_sym_norm_inf(const sv_dense_sym *a)
{
    if (!a) return NAN;
    int n = a->n;
    if (n == 0) return 0.0;
    double *rs = sv_calloc(NULL, (size_t)n, sizeof(double), "row sums");
    if (!rs) return NAN;
    for (int j = 0; j < n; j++) {
        size_t o = sv_dense_sym_offset(a, j, j);
        double s = 0.0; /* sum over column j below the diagonal = row j's right part */
        for (int i = j; i < n; i++, o++) {
            double v;
            switch (a->type) {
            case SV_DENSE_C64: v = cabs(((const double complex *)a->data)[o]); break;
            case SV_DENSE_C32: v = cabsf(((const float complex *)a->data)[o]); break;
            default: v = fabs(((const double *)a->data)[o]); break;
            }
            if (i > j) {
                rs[i] += v;
                s += v;
            } else {
                s += v;
            }
        }
        rs[j] += s;
    }
    double m = 0.0;
    for (int i = 0; i < n; i++) {
        if (isnan(rs[i])) {
            m = NAN;
            break;
        }
        if (rs[i] > m) m = rs[i];
    }
    sv_free(NULL, rs);
    return m;
}
