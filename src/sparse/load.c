/* Writing a matrix into the LU buffer: every slot cleared (fill included),
 * then the pattern's values scattered to their slots. The shifted forms
 * build shift·I − J with the diagonal computed as (shift − J_ii) in double
 * and rounded once. */
#include <string.h>

#include "sparse_internal.h"

#define SV_DEFINE_LOAD(T, SFX)                                                                        \
    void sv_sparse_lu_load##SFX(const sv_sparse_lu *lu, const double *values, T *buf)                 \
    {                                                                                                  \
        memset(buf, 0, (size_t)lu->nnz * sizeof *buf);                                                 \
        const int *es = lu->entry_slot;                                                                \
        for (int e = 0; e < lu->pat_nnz; e++) buf[es[e]] = (T)values[e];                               \
    }                                                                                                  \
    void sv_sparse_lu_load_shifted##SFX(const sv_sparse_lu *lu, const double *values, double shift,    \
                                        T *buf)                                                        \
    {                                                                                                  \
        memset(buf, 0, (size_t)lu->nnz * sizeof *buf);                                                 \
        const int *es = lu->entry_slot;                                                                \
        for (int e = 0; e < lu->pat_nnz; e++) buf[es[e]] = (T)-values[e];                              \
        for (int i = 0; i < lu->n; i++) buf[lu->diag_slot[i]] = (T)(shift - values[lu->diag_entry[i]]); \
    }                                                                                                  \
    sv_status sv_sparse_lu_load_lane##SFX(const sv_sparse_lu *lu, int W, int w, const double *values,  \
                                          T *buf)                                                      \
    {                                                                                                  \
        if (!lu || !values || !buf || W < 1 || w < 0 || w >= W)                                        \
            return sv_error(SV_ERR_ARG, "sv_sparse_lu_load_lane: lane %d of W = %d (or a NULL pointer)", \
                            w, W);                                                                     \
        for (int s = 0; s < lu->nnz; s++) buf[(size_t)s * W + w] = 0;                                  \
        const int *es = lu->entry_slot;                                                                \
        for (int e = 0; e < lu->pat_nnz; e++) buf[(size_t)es[e] * W + w] = (T)values[e];               \
        return SV_OK;                                                                                  \
    }                                                                                                  \
    sv_status sv_sparse_lu_load_shifted_lane##SFX(const sv_sparse_lu *lu, int W, int w,                \
                                                  const double *values, double shift, T *buf)          \
    {                                                                                                  \
        if (!lu || !values || !buf || W < 1 || w < 0 || w >= W)                                        \
            return sv_error(SV_ERR_ARG,                                                                \
                            "sv_sparse_lu_load_shifted_lane: lane %d of W = %d (or a NULL pointer)", w, W); \
        for (int s = 0; s < lu->nnz; s++) buf[(size_t)s * W + w] = 0;                                  \
        const int *es = lu->entry_slot;                                                                \
        for (int e = 0; e < lu->pat_nnz; e++) buf[(size_t)es[e] * W + w] = (T)-values[e];              \
        for (int i = 0; i < lu->n; i++)                                                                \
            buf[(size_t)lu->diag_slot[i] * W + w] = (T)(shift - values[lu->diag_entry[i]]);            \
        return SV_OK;                                                                                  \
    }

SV_DEFINE_LOAD(double, )
SV_DEFINE_LOAD(float, _f32)

/* Whole batches: values entry-major (entry e of lane w at e·W + w), so each
 * entry's W lanes move as one contiguous block into its slot. */
#define SV_DEFINE_LOAD_BATCH_W(T, SFX, W)                                                              \
    static void load_batch##SFX##W(const sv_sparse_lu *lu, const double *values, const double *shift,  \
                                   T *restrict buf)                                                    \
    {                                                                                                  \
        memset(buf, 0, (size_t)lu->nnz * W * sizeof *buf);                                             \
        const int *es = lu->entry_slot;                                                                \
        const T sign = shift ? (T)-1 : (T)1;                                                           \
        for (int e = 0; e < lu->pat_nnz; e++) {                                                        \
            T *restrict d = buf + (size_t)es[e] * W;                                                   \
            const double *v = values + (size_t)e * W;                                                  \
            for (int w = 0; w < W; w++) d[w] = sign * (T)v[w];                                         \
        }                                                                                              \
        if (!shift) return;                                                                            \
        for (int i = 0; i < lu->n; i++) {                                                              \
            T *restrict d = buf + (size_t)lu->diag_slot[i] * W;                                        \
            const double *v = values + (size_t)lu->diag_entry[i] * W;                                  \
            for (int w = 0; w < W; w++) d[w] = (T)(shift[w] - v[w]);                                   \
        }                                                                                              \
    }

#define SV_DEFINE_LOAD_BATCH(T, SFX)                                                                   \
    SV_DEFINE_LOAD_BATCH_W(T, SFX, 1)                                                                  \
    SV_DEFINE_LOAD_BATCH_W(T, SFX, 2)                                                                  \
    SV_DEFINE_LOAD_BATCH_W(T, SFX, 4)                                                                  \
    SV_DEFINE_LOAD_BATCH_W(T, SFX, 8)                                                                  \
    static sv_status load_batch_any##SFX(const sv_sparse_lu *lu, int W, const double *values,          \
                                         const double *shift, T *buf, const char *fn)                 \
    {                                                                                                  \
        if (!lu || !values || !buf) return sv_error(SV_ERR_ARG, "%s: lu, values or buf is NULL", fn);  \
        switch (W) {                                                                                   \
        case 1: load_batch##SFX##1(lu, values, shift, buf); break;                                     \
        case 2: load_batch##SFX##2(lu, values, shift, buf); break;                                     \
        case 4: load_batch##SFX##4(lu, values, shift, buf); break;                                     \
        case 8: load_batch##SFX##8(lu, values, shift, buf); break;                                     \
        default: return sv_error(SV_ERR_ARG, "%s: W = %d: expected 1, 2, 4 or 8", fn, W);              \
        }                                                                                              \
        return SV_OK;                                                                                  \
    }

SV_DEFINE_LOAD_BATCH(double, _d)
SV_DEFINE_LOAD_BATCH(float, _f)

sv_status sv_sparse_lu_load_batch(const sv_sparse_lu *lu, int W, const double *values, double *buf)
{
    return load_batch_any_d(lu, W, values, NULL, buf, "sv_sparse_lu_load_batch");
}

sv_status sv_sparse_lu_load_shifted_batch(const sv_sparse_lu *lu, int W, const double *values, const double *shift,
                                          double *buf)
{
    if (!shift) return sv_error(SV_ERR_ARG, "sv_sparse_lu_load_shifted_batch: shift is NULL");
    return load_batch_any_d(lu, W, values, shift, buf, "sv_sparse_lu_load_shifted_batch");
}

sv_status sv_sparse_lu_load_batch_f32(const sv_sparse_lu *lu, int W, const double *values, float *buf)
{
    return load_batch_any_f(lu, W, values, NULL, buf, "sv_sparse_lu_load_batch_f32");
}

sv_status sv_sparse_lu_load_shifted_batch_f32(const sv_sparse_lu *lu, int W, const double *values,
                                              const double *shift, float *buf)
{
    if (!shift) return sv_error(SV_ERR_ARG, "sv_sparse_lu_load_shifted_batch_f32: shift is NULL");
    return load_batch_any_f(lu, W, values, shift, buf, "sv_sparse_lu_load_shifted_batch_f32");
}
