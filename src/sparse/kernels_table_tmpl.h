/* The table-driven LU of one matrix: unpivoted up-looking factorisation in
 * place and the row-oriented triangular solves, in THE operation order
 * (kernels.c). Written once, instantiated per precision by kernels.c, which
 * defines
 *   T        the scalar type (double, float)
 *   FN(x)    name mangling (x##_d, x##_f)
 * and includes this file once per type. */

/* One run of updates: dst[j] -= l * src[j]. dst lies in row i, src in row
 * k < i, so they never overlap. */
static inline void FN(sv_axpy)(T *restrict dst, const T *restrict src, T l, int len)
{
    for (int j = 0; j < len; j++) dst[j] -= l * src[j];
}

/* Factor in place: the multipliers below the diagonal, the inverted
 * pivots on it. Returns the first bad pivot's row (1-based), else 0. */
static int FN(factor_table)(const sv_sparse_lu *lu, T *restrict buf)
{
    const int n = lu->n, *rp = lu->rowptr, *ci = lu->colind, *dg = lu->diag;
    const int *rt = lu->run_t, *rl = lu->run_len;
    const long long *ro = lu->run_off;
    int flag = 0;
    long long x = 0;
    for (int i = 0; i < n; i++) {
        for (int p = rp[i]; p < dg[i]; p++, x++) {
            const int k = ci[p];
            const T l = buf[p] * buf[dg[k]];
            buf[p] = l;
            const T *src = buf + dg[k] + 1;
            for (long long r = ro[x]; r < ro[x + 1]; r++) {
                FN(sv_axpy)(buf + rt[r], src, l, rl[r]);
                src += rl[r];
            }
        }
        const T d = buf[dg[i]];
        if (!flag && SV_BAD_PIVOT(d)) flag = i + 1;
        buf[dg[i]] = (T)1 / d;
    }
    return flag;
}

/* x = A⁻¹·b with the factors; w: n scratch entries. */
static void FN(solve_table)(const sv_sparse_lu *lu, const T *restrict buf, const T *b, T *x, T *restrict w)
{
    const int n = lu->n, *rp = lu->rowptr, *ci = lu->colind, *dg = lu->diag, *pm = lu->perm;
    for (int k = 0; k < n; k++) w[k] = b[pm[k]];
    for (int i = 0; i < n; i++) {
        T s = w[i];
        for (int p = rp[i]; p < dg[i]; p++) s -= buf[p] * w[ci[p]];
        w[i] = s;
    }
    for (int i = n - 1; i >= 0; i--) {
        T s = w[i];
        for (int p = dg[i] + 1; p < rp[i + 1]; p++) s -= buf[p] * w[ci[p]];
        w[i] = s * buf[dg[i]];
    }
    for (int k = 0; k < n; k++) x[pm[k]] = w[k];
}
