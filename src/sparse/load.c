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
