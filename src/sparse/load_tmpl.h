/* Every load into an LU buffer of one precision: one matrix, one lane of a
 * batch, a whole batch (by its lane count, through load_lanes_tmpl.h's
 * copies FN(load_batch_w1) … FN(load_batch_w8)). load.c defines
 *   T        the buffer's scalar type (double, float)
 *   FN(x)    the public names' mangling (x, x##_f32)
 * and includes this file once per type, after that type's lane copies. */

void FN(sv_sparse_lu_load)(const sv_sparse_lu *lu, const double *values, T *buf)
{
    memset(buf, 0, (size_t)lu->nnz * sizeof *buf);
    const int *es = lu->entry_slot;
    for (int e = 0; e < lu->pat_nnz; e++) buf[es[e]] = (T)values[e];
}

void FN(sv_sparse_lu_load_shifted)(const sv_sparse_lu *lu, const double *values, double shift, T *buf)
{
    memset(buf, 0, (size_t)lu->nnz * sizeof *buf);
    const int *es = lu->entry_slot;
    for (int e = 0; e < lu->pat_nnz; e++) buf[es[e]] = (T)-values[e];
    for (int i = 0; i < lu->n; i++) buf[lu->diag_slot[i]] = (T)(shift - values[lu->diag_entry[i]]);
}

sv_status FN(sv_sparse_lu_load_lane)(const sv_sparse_lu *lu, int W, int w, const double *values, T *buf)
{
    if (!lu || !values || !buf || W < 1 || w < 0 || w >= W)
        return sv_error(SV_ERR_ARG, "sv_sparse_lu_load_lane: lane %d of W = %d (or a NULL pointer)", w, W);
    for (int s = 0; s < lu->nnz; s++) buf[(size_t)s * W + w] = 0;
    const int *es = lu->entry_slot;
    for (int e = 0; e < lu->pat_nnz; e++) buf[(size_t)es[e] * W + w] = (T)values[e];
    return SV_OK;
}

sv_status FN(sv_sparse_lu_load_shifted_lane)(const sv_sparse_lu *lu, int W, int w, const double *values,
                                              double shift, T *buf)
{
    if (!lu || !values || !buf || W < 1 || w < 0 || w >= W)
        return sv_error(SV_ERR_ARG, "sv_sparse_lu_load_shifted_lane: lane %d of W = %d (or a NULL pointer)", w, W);
    for (int s = 0; s < lu->nnz; s++) buf[(size_t)s * W + w] = 0;
    const int *es = lu->entry_slot;
    for (int e = 0; e < lu->pat_nnz; e++) buf[(size_t)es[e] * W + w] = (T)-values[e];
    for (int i = 0; i < lu->n; i++) buf[(size_t)lu->diag_slot[i] * W + w] = (T)(shift - values[lu->diag_entry[i]]);
    return SV_OK;
}

/* A whole batch by its lane count; fn names the public call for errors. */
static sv_status FN(load_batch_any)(const sv_sparse_lu *lu, int W, const double *values, const double *shift, T *buf,
                                    const char *fn)
{
    if (!lu || !values || !buf) return sv_error(SV_ERR_ARG, "%s: lu, values or buf is NULL", fn);
    switch (W) {
    case 1: FN(load_batch_w1)(lu, values, shift, buf); break;
    case 2: FN(load_batch_w2)(lu, values, shift, buf); break;
    case 4: FN(load_batch_w4)(lu, values, shift, buf); break;
    case 8: FN(load_batch_w8)(lu, values, shift, buf); break;
    default: return sv_error(SV_ERR_ARG, "%s: W = %d: expected 1, 2, 4 or 8", fn, W);
    }
    return SV_OK;
}

sv_status FN(sv_sparse_lu_load_batch)(const sv_sparse_lu *lu, int W, const double *values, T *buf)
{
    return FN(load_batch_any)(lu, W, values, NULL, buf, __func__);
}

sv_status FN(sv_sparse_lu_load_shifted_batch)(const sv_sparse_lu *lu, int W, const double *values, const double *shift,
                                              T *buf)
{
    if (!shift) return sv_error(SV_ERR_ARG, "%s: shift is NULL", __func__);
    return FN(load_batch_any)(lu, W, values, shift, buf, __func__);
}
