/* Y = A·X for a complex packed symmetric matrix, written once and
 * instantiated for double and single precision by matmul.c, which defines
 *   T        scalar type (double complex / float complex)
 *   FN(x)    name mangling (x##_z / x##_c)
 *   BLAS(x)  cblas routine (cblas_z##x / cblas_c##x)
 * and includes this file once per type. */

/* Block column k's contribution to Y. */
static void FN(block)(const sv_dense_sym *a, int k, int p, const T *x, int ldx, T *y, int ldy)
{
    const int n = a->n, nb = a->nb, c0 = k * nb;
    const T one = 1;
    int w = n - c0 < nb ? n - c0 : nb, ld = n - c0, m2 = n - c0 - w;
    const T *blk = (const T *)a->data + sv_dense_packed_block_offset(n, nb, k);
    BLAS(symm)(CblasColMajor, CblasLeft, CblasLower, w, p, &one, blk, ld, x + c0, ldx, &one, y + c0, ldy);
    if (m2 > 0) {
        BLAS(gemm)(CblasColMajor, CblasNoTrans, CblasNoTrans, m2, p, w, &one, blk + w, ld, x + c0, ldx, &one,
                   y + c0 + w, ldy);
        BLAS(gemm)(CblasColMajor, CblasTrans, CblasNoTrans, w, p, m2, &one, blk + w, ld, x + c0 + w, ldx, &one,
                   y + c0, ldy);
    }
}

/* Y = A·X: block columns shared out among threads, each accumulating into
 * its own copy of Y (thread 0 into Y itself), then summed. A product with a
 * few columns is memory bound; running many small single-threaded BLAS
 * calls side by side is faster and far less sensitive to a busy machine
 * than one multi-threaded BLAS call (with its synchronisation) per block. */
static sv_status FN(matmul)(const sv_dense_sym *a, int p, const T *x, int ldx, T *y, int ldy)
{
    const int n = a->n, K = (n + a->nb - 1) / a->nb;
    int nt = sv_threads_team();
    if (nt > K) nt = K;
    if ((size_t)n * n < SV_MATMUL_SERIAL_N * SV_MATMUL_SERIAL_N) nt = 1;
    for (int j = 0; j < p; j++) memset(y + (size_t)j * ldy, 0, (size_t)n * sizeof(T));
    if (nt <= 1) {
        for (int k = 0; k < K; k++) FN(block)(a, k, p, x, ldx, y, ldy);
        return SV_OK;
    }
    size_t per = (size_t)n * p;
    T *priv = sv_calloc(NULL, per * (size_t)(nt - 1), sizeof(T), "matrix product accumulators");
    if (!priv) return sv_last_status();
#pragma omp parallel num_threads(nt)
    {
        int t = omp_get_thread_num();
        T *yt = t == 0 ? y : priv + per * (size_t)(t - 1);
        int ldt = t == 0 ? ldy : n;
#pragma omp for schedule(static, 1)
        for (int k = 0; k < K; k++) FN(block)(a, k, p, x, ldx, yt, ldt);
        /* implicit barrier: every partial sum is complete */
#pragma omp for schedule(static)
        for (int i = 0; i < n; i++)
            for (int c = 0; c < p; c++)
                for (int q = 0; q < nt - 1; q++) y[(size_t)c * ldy + i] += priv[per * q + (size_t)c * n + i];
    }
    sv_free(NULL, priv);
    return SV_OK;
}
