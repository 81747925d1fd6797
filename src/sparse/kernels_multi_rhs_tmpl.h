/* R right-hand sides of W lanes each through the factors at once: the
 * body of kernels_multi_tmpl.h for one group size, which defines
 *   R        right-hand sides (1, 2, 3, 4, 8)
 *   FN_R(x)  name mangling (x##_1_d4, ...)
 * besides its own W, FN, MV and step macros. wk: nw·R scratch entries. */
static void FN_R(solve_multi)(const sv_sparse_lu *lu, const double *restrict buf, const double *b, double *x,
                              double *restrict wk, size_t nw)
{
    const int n = lu->n, *rp = lu->rowptr, *ci = lu->colind, *dg = lu->diag, *pm = lu->perm;
    MV s0, s1, s2, s3, s4, s5, s6, s7, a;
    const double *wc;
    for (int r = 0; r < R; r++)
        for (int k = 0; k < n; k++)
            memcpy(wk + r * nw + (size_t)k * W, b + r * nw + (size_t)pm[k] * W, sizeof(MV));
    for (int i = 0; i < n; i++) {
        double *wi = wk + (size_t)i * W;
        MV_EACH(MV_LOAD)
        for (int p = rp[i]; p < dg[i]; p++) {
            wc = wk + (size_t)ci[p] * W;
            a = MV_LD(buf + (size_t)p * W);
            MV_EACH(MV_UPDATE)
        }
        MV_EACH(MV_STORE)
    }
    for (int i = n - 1; i >= 0; i--) {
        double *wi = wk + (size_t)i * W;
        MV_EACH(MV_LOAD)
        for (int p = dg[i] + 1; p < rp[i + 1]; p++) {
            wc = wk + (size_t)ci[p] * W;
            a = MV_LD(buf + (size_t)p * W);
            MV_EACH(MV_UPDATE)
        }
        a = MV_LD(buf + (size_t)dg[i] * W);
        MV_EACH(MV_SCALE)
        MV_EACH(MV_STORE)
    }
    for (int r = 0; r < R; r++)
        for (int k = 0; k < n; k++)
            memcpy(x + r * nw + (size_t)pm[k] * W, wk + r * nw + (size_t)k * W, sizeof(MV));
}
