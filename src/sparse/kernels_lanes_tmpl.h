/* The table-driven LU of W matrices side by side (slot-major: slot s of
 * lane w at s·W + w): every scalar operation of kernels_table_tmpl.h
 * becomes a loop over lanes, in the same order. W is a compile-time
 * constant in each copy, so the compiler turns those loops into vector
 * instructions (one AVX2 register holds 4 doubles or 8 floats). kernels.c
 * defines
 *   T        the scalar type (double, float)
 *   W        lanes (1, 2, 4, 8)
 *   FN(x)    name mangling (x##_d4, x##_f8, ...)
 * and includes this file once per type and lane count. */

/* Factor the W matrices in place; flags[w]: lane w's first bad pivot's row
 * (1-based), else 0. */
static void FN(factor_batch)(const sv_sparse_lu *lu, T *restrict buf, int *flags)
{
    const int n = lu->n, *rp = lu->rowptr, *ci = lu->colind, *dg = lu->diag;
    const int *rt = lu->run_t, *rl = lu->run_len;
    const long long *ro = lu->run_off;
    for (int w = 0; w < W; w++) flags[w] = 0;
    long long x = 0;
    for (int i = 0; i < n; i++) {
        for (int p = rp[i]; p < dg[i]; p++, x++) {
            const int k = ci[p];
            T l[W];
            T *restrict bp = buf + (size_t)p * W;
            const T *restrict bd = buf + (size_t)dg[k] * W;
            for (int w = 0; w < W; w++) l[w] = bp[w] * bd[w];
            for (int w = 0; w < W; w++) bp[w] = l[w];
            const T *src = buf + (size_t)(dg[k] + 1) * W;
            for (long long r = ro[x]; r < ro[x + 1]; r++) {
                T *restrict dst = buf + (size_t)rt[r] * W;
                const T *restrict sr = src;
                const int len = rl[r];
                for (int j = 0; j < len; j++)
                    for (int w = 0; w < W; w++) dst[j * W + w] -= l[w] * sr[j * W + w];
                src += (size_t)len * W;
            }
        }
        T *restrict bd = buf + (size_t)dg[i] * W;
        for (int w = 0; w < W; w++) {
            const T d = bd[w];
            if (!flags[w] && SV_BAD_PIVOT(d)) flags[w] = i + 1;
            bd[w] = (T)1 / d;
        }
    }
}

/* x = A⁻¹·b in every lane; wk: n·W scratch entries. */
static void FN(solve_batch)(const sv_sparse_lu *lu, const T *restrict buf, const T *b, T *x, T *restrict wk)
{
    const int n = lu->n, *rp = lu->rowptr, *ci = lu->colind, *dg = lu->diag, *pm = lu->perm;
    for (int k = 0; k < n; k++)
        for (int w = 0; w < W; w++) wk[(size_t)k * W + w] = b[(size_t)pm[k] * W + w];
    for (int i = 0; i < n; i++) {
        T s[W];
        for (int w = 0; w < W; w++) s[w] = wk[(size_t)i * W + w];
        for (int p = rp[i]; p < dg[i]; p++) {
            const T *restrict bp = buf + (size_t)p * W, *restrict wc = wk + (size_t)ci[p] * W;
            for (int w = 0; w < W; w++) s[w] -= bp[w] * wc[w];
        }
        for (int w = 0; w < W; w++) wk[(size_t)i * W + w] = s[w];
    }
    for (int i = n - 1; i >= 0; i--) {
        T s[W];
        for (int w = 0; w < W; w++) s[w] = wk[(size_t)i * W + w];
        for (int p = dg[i] + 1; p < rp[i + 1]; p++) {
            const T *restrict bp = buf + (size_t)p * W, *restrict wc = wk + (size_t)ci[p] * W;
            for (int w = 0; w < W; w++) s[w] -= bp[w] * wc[w];
        }
        const T *restrict bd = buf + (size_t)dg[i] * W;
        for (int w = 0; w < W; w++) wk[(size_t)i * W + w] = s[w] * bd[w];
    }
    for (int k = 0; k < n; k++)
        for (int w = 0; w < W; w++) x[(size_t)pm[k] * W + w] = wk[(size_t)k * W + w];
}
