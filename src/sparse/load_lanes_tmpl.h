/* A whole batch of W matrices into the LU buffer (slot-major), from values
 * entry-major (entry e of lane w at e·W + w), so that each entry's W lanes
 * move as one contiguous block into its slot; with shift, shift·I − J.
 * load.c defines
 *   T        the buffer's scalar type (double, float)
 *   W        lanes (1, 2, 4, 8)
 *   FN(x)    name mangling (x##_w1, ..., x##_w8_f32)
 * and includes this file once per type and lane count. */
static void FN(load_batch)(const sv_sparse_lu *lu, const double *values, const double *shift, T *restrict buf)
{
    memset(buf, 0, (size_t)lu->nnz * W * sizeof *buf);
    const int *es = lu->entry_slot;
    const T sign = shift ? (T)-1 : (T)1;
    for (int e = 0; e < lu->pat_nnz; e++) {
        T *restrict d = buf + (size_t)es[e] * W;
        const double *v = values + (size_t)e * W;
        for (int w = 0; w < W; w++) d[w] = sign * (T)v[w];
    }
    if (!shift) return;
    for (int i = 0; i < lu->n; i++) {
        T *restrict d = buf + (size_t)lu->diag_slot[i] * W;
        const double *v = values + (size_t)lu->diag_entry[i] * W;
        for (int w = 0; w < W; w++) d[w] = (T)(shift[w] - v[w]);
    }
}
