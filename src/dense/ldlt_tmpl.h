/* Blocked LDLᵀ without pivoting for complex symmetric packed matrices,
 * written once and instantiated for double (ldlt_z.c) and single
 * (ldlt_c.c) precision. The including file defines:
 *   T        scalar type (double complex / float complex)
 *   R        its real type
 *   FN(x)    name mangling (x##_z / x##_c)
 *   BLAS(x)  cblas routine (cblas_z##x / cblas_c##x)
 *   ABS1(x)  max(|Re x|, |Im x|)
 *   CSQRT(x) complex square root
 *
 * Algorithm (right-looking, one block column of width nb per step):
 *   1. factor the diagonal block A11 = L11·D1·L11ᵀ (recursive, level 3);
 *   2. W21 = A21·L11⁻ᵀ (trsm), scaled to X = W21·D1^(−1/2) = L21·D1^(1/2);
 *   3. for every later block column j: A_j −= X(rows ≥ j) · X(block j)ᵀ,
 *      a syrk for its diagonal block and gemms (K = nb) below it, both
 *      operands read from the panel in place: no panel-sized workspace.
 *      The gemms use OpenBLAS's 3M method (three real products per complex
 *      product instead of four; Higham, "Stability of a method for
 *      multiplying complex matrices with three real matrix
 *      multiplications", SIAM J. Matrix Anal. Appl. 13 (1992) 681): about a
 *      third faster, normwise as stable (see docs/dense.md);
 *   4. the panel is scaled to L21 = X·D1^(−1/2).
 * Block column k+1 is updated and factored first by one thread while the
 * others update the rest (look-ahead), so the panel work overlaps the gemms.
 * Complex symmetric matrices need the transpose (not the conjugate
 * transpose) everywhere, which is why this is not zpotrf or zhetrf. */

#include <cblas.h>
#include <math.h>
#include <omp.h>
#include <string.h>

#define MINW(a, b) ((a) < (b) ? (a) : (b))

/* C = alpha·A·Bᵀ + C with the 3M method when allowed. Only where OpenBLAS
 * runs the call on one thread (inside an active parallel region, or with one
 * thread): its multi-threaded gemm3m (OpenBLAS 0.3.21, OpenMP build) was
 * seen to deadlock in exec_blas, so threaded calls take the plain gemm. */
static void FN(gemm_nt)(int use3m, int m, int n, int k, const T *alpha, const T *a, int lda, const T *b, int ldb,
                        T *c, int ldc)
{
    const T one = 1;
    if (use3m && (omp_in_parallel() || sv_threads_team() == 1))
        BLAS(gemm3m)(CblasColMajor, CblasNoTrans, CblasTrans, m, n, k, alpha, a, lda, b, ldb, &one, c, ldc);
    else
        BLAS(gemm)(CblasColMajor, CblasNoTrans, CblasTrans, m, n, k, alpha, a, lda, b, ldb, &one, c, ldc);
}

/* Leaf of the diagonal-block recursion: right-looking unblocked LDLᵀ on an
 * n × n block (n small). W = L·D of each column is kept in the strictly upper
 * part (workspace) so that the update reads it without a division.
 * Returns the index of the first pivot with |d| < thr (or non-finite), or −1. */
static int FN(ldlt_leaf)(int n, T *a, int ld, R thr, R *minpiv)
{
    for (int j = 0; j < n; j++) {
        T d = a[(size_t)j * ld + j];
        R ad = ABS1(d);
        if (!(ad >= thr) || !isfinite(ad)) return j;
        if (ad < *minpiv) *minpiv = ad;
        T dinv = 1 / d;
        for (int i = j + 1; i < n; i++) {
            T wv = a[(size_t)j * ld + i];
            a[(size_t)i * ld + j] = wv; /* W in the upper part: row j, column i */
            a[(size_t)j * ld + i] = wv * dinv;
        }
        for (int c = j + 1; c < n; c++) {
            T wc = a[(size_t)c * ld + j];
            T *col = a + (size_t)c * ld;
            const T *l = a + (size_t)j * ld;
            for (int i = c; i < n; i++) col[i] -= l[i] * wc;
        }
    }
    return -1;
}

/* Recursive LDLᵀ of a diagonal block, in place. The strictly upper part is
 * used as workspace: A12 receives W21ᵀ so that the Schur update is a plain
 * gemm without transposes or extra memory. */
static int FN(ldlt_diag)(int n, T *a, int ld, R thr, R *minpiv)
{
    if (n <= 24) return FN(ldlt_leaf)(n, a, ld, thr, minpiv);
    int n1 = n / 2, n2 = n - n1;
    int bad = FN(ldlt_diag)(n1, a, ld, thr, minpiv);
    if (bad >= 0) return bad;
    T *a11 = a, *a21 = a + n1, *a12 = a + (size_t)n1 * ld, *a22 = a12 + n1;
    const T one = 1, mone = -1;
    BLAS(trsm)(CblasColMajor, CblasRight, CblasLower, CblasTrans, CblasUnit, n2, n1, &one, a11, ld, a21, ld);
    for (int j = 0; j < n1; j++) {
        T dinv = 1 / a11[(size_t)j * ld + j];
        for (int i = 0; i < n2; i++) {
            T wv = a21[(size_t)j * ld + i];
            a12[(size_t)i * ld + j] = wv;
            a21[(size_t)j * ld + i] = wv * dinv;
        }
    }
    BLAS(gemm)(CblasColMajor, CblasNoTrans, CblasNoTrans, n2, n2, n1, &mone, a21, ld, a12, ld, &one, a22, ld);
    bad = FN(ldlt_diag)(n2, a22, ld, thr, minpiv);
    return bad >= 0 ? n1 + bad : -1;
}

/* Step 1 and 2 for block column k: factor its diagonal block (after saving
 * it, so a failure can restore it), solve the panel to W21 = L21·D1 and
 * scale it to X = L21·D1^(1/2).
 * Returns the local index of a tiny pivot, or −1. */
static int FN(panel_factor)(T *ak, int m, int w, T *backup, R thr, R *minpiv, int use3m)
{
    int ld = m;
    for (int j = 0; j < w; j++) memcpy(backup + (size_t)j * w, ak + (size_t)j * ld, sizeof(T) * (size_t)w);
    int bad = FN(ldlt_diag)(w, ak, ld, thr, minpiv);
    if (bad >= 0) {
        for (int j = 0; j < w; j++) memcpy(ak + (size_t)j * ld, backup + (size_t)j * w, sizeof(T) * (size_t)w);
        return bad;
    }
    if (m > w) {
        const T one = 1, mone = -1;
        /* W21 = A21·L11⁻ᵀ in two halves, so that the coupling product runs
         * as a (3M) gemm: X1 = A1·La⁻ᵀ, A2 −= X1·Lbᵀ, X2 = A2·Lc⁻ᵀ. */
        int w1 = w / 2, w2 = w - w1;
        T *p1 = ak + w, *p2 = ak + w + (size_t)w1 * ld;
        if (use3m && w1 >= 32) {
            BLAS(trsm)(CblasColMajor, CblasRight, CblasLower, CblasTrans, CblasUnit, m - w, w1, &one, ak, ld, p1, ld);
            FN(gemm_nt)(use3m, m - w, w2, w1, &mone, p1, ld, ak + w1, ld, p2, ld);
            BLAS(trsm)(CblasColMajor, CblasRight, CblasLower, CblasTrans, CblasUnit, m - w, w2, &one,
                       ak + (size_t)w1 * ld + w1, ld, p2, ld);
        } else {
            BLAS(trsm)(CblasColMajor, CblasRight, CblasLower, CblasTrans, CblasUnit, m - w, w, &one, ak, ld, ak + w, ld);
        }
        for (int c = 0; c < w; c++) { /* W21 → X = W21·D1^(−1/2) */
            T f = 1 / CSQRT(ak[(size_t)c * ld + c]);
            T *col = ak + (size_t)c * ld;
            for (int i = w; i < m; i++) col[i] *= f;
        }
    }
    return -1;
}

/* Step 3 for rows [r0, r1) (global, r0 ≥ first row of block column j) of
 * one target block column j, from the panel of block column k, which holds
 * X = L21·D1^(1/2) at this point (complex square roots: the matrix is
 * symmetric, not Hermitian, so L·D·Lᵀ = X·Xᵀ without conjugation). That
 * makes the diagonal block's update a syrk (lower triangle only, no wasted
 * upper half) and the rest a gemm whose operands both come straight from the
 * panel, with no scaled copy. sign = −1 updates, +1 undoes an update (when
 * recovering A). Row chunks let the threads share out the work evenly: one
 * gemm per block column would leave a thread idle for up to a whole column's
 * gemm at the end of every step. */
static void FN(update_rows)(const sv_dense_sym *a, int k, int j, int r0, int r1, T sign, int use3m)
{
    const int n = a->n, nb = a->nb;
    T *d = a->data;
    int c0 = k * nb, w = MINW(nb, n - c0), ldk = n - c0;
    int c0j = j * nb, wj = MINW(nb, n - c0j), ldj = n - c0j;
    const T *pk = d + sv_dense_packed_block_offset(n, nb, k);
    T *aj = d + sv_dense_packed_block_offset(n, nb, j);
    const T *xj = pk + (c0j - c0); /* X rows of block j */
    const T one = 1;
    if (r0 == c0j) {
        /* Diagonal block: its lower-left quarter by gemm (3M when enabled),
         * the two triangles by syrk, so only a quarter of the block runs
         * at syrk's (conventional) speed and nothing above the diagonal is
         * computed. */
        int h1 = wj / 2, h2 = wj - h1;
        if (use3m && h1 >= 32) {
            BLAS(syrk)(CblasColMajor, CblasLower, CblasNoTrans, h1, w, &sign, xj, ldk, &one, aj, ldj);
            FN(gemm_nt)(use3m, h2, h1, w, &sign, xj + h1, ldk, xj, ldk, aj + h1, ldj);
            BLAS(syrk)(CblasColMajor, CblasLower, CblasNoTrans, h2, w, &sign, xj + h1, ldk, &one,
                       aj + (size_t)h1 * ldj + h1, ldj);
        } else {
            BLAS(syrk)(CblasColMajor, CblasLower, CblasNoTrans, wj, w, &sign, xj, ldk, &one, aj, ldj);
        }
        r0 += wj;
    }
    if (r1 > r0) FN(gemm_nt)(use3m, r1 - r0, wj, w, &sign, pk + (r0 - c0), ldk, xj, ldk, aj + (r0 - c0j), ldj);
}

static void FN(update_col)(const sv_dense_sym *a, int k, int j, T sign, int use3m)
{
    FN(update_rows)(a, k, j, j * a->nb, a->n, sign, use3m);
}

/* Row chunks of block column j: about SV_DENSE_CHUNK rows each. */
#define SV_DENSE_CHUNK 768
static int FN(nchunks)(int rows) { return rows <= SV_DENSE_CHUNK ? 1 : (rows + SV_DENSE_CHUNK - 1) / SV_DENSE_CHUNK; }

/* Rows [r0, r1) of the panel below the diagonal block multiplied by
 * D1^(−1/2) (inverse = 1) or D1^(1/2) (inverse = 0). */
static void FN(panel_scale)(const sv_dense_sym *a, int k, int r0, int r1, int inverse)
{
    const int n = a->n, nb = a->nb;
    int c0 = k * nb, w = MINW(nb, n - c0), ld = n - c0;
    T *pk = (T *)a->data + sv_dense_packed_block_offset(n, nb, k);
    for (int c = 0; c < w; c++) {
        T sq = CSQRT(pk[(size_t)c * ld + c]);
        T f = inverse ? 1 / sq : sq;
        T *col = pk + (size_t)c * ld;
        for (int i = w + r0; i < w + r1; i++) col[i] *= f;
    }
}

/* Undo panel_factor on block column k (its panel still holding X):
 * X → W21 → A21 = W21·L11ᵀ, and the diagonal block from its saved copy. */
static void FN(panel_unfactor)(const sv_dense_sym *a, int k, const T *backup)
{
    const int n = a->n, nb = a->nb;
    int c0 = k * nb, w = MINW(nb, n - c0), ld = n - c0;
    T *pk = (T *)a->data + sv_dense_packed_block_offset(n, nb, k);
    if (ld > w) {
        const T one = 1;
        FN(panel_scale)(a, k, 0, ld - w, 0);
        BLAS(trmm)(CblasColMajor, CblasRight, CblasLower, CblasTrans, CblasUnit, ld - w, w, &one, pk, ld, pk + w, ld);
    }
    for (int j = 0; j < w; j++) memcpy(pk + (size_t)j * ld, backup + (size_t)j * w, sizeof(T) * (size_t)w);
}

/* Largest |Re|, |Im| over the stored lower triangle; −1 if an entry is not
 * finite (its position in *bi, *bj). */
static R FN(amax)(const sv_dense_sym *a, int *bi, int *bj)
{
    const int n = a->n;
    const T *d = a->data;
    R m = 0;
    int bad = 0;
#pragma omp parallel for schedule(dynamic, 16) reduction(max : m) reduction(| : bad) if (n > 256) num_threads(sv_threads_team())
    for (int j = 0; j < n; j++) {
        const T *col = d + sv_dense_sym_offset(a, j, j);
        R cm = 0;
        int cbad = 0;
        for (int i = 0; i < n - j; i++) {
            R re = fabs(creal(col[i])), im = fabs(cimag(col[i]));
            R v = re > im ? re : im;
            cbad |= !isfinite(re) || !isfinite(im);
            cm = v > cm ? v : cm;
        }
        if (cbad) bad = 1;
        m = cm > m ? cm : m;
    }
    if (bad) {
        for (int j = 0; j < n; j++)
            for (int i = j; i < n; i++) {
                T v = d[sv_dense_sym_offset(a, i, j)];
                if (!isfinite(creal(v)) || !isfinite(cimag(v))) {
                    *bi = i;
                    *bj = j;
                    return -1;
                }
            }
    }
    return m;
}

/* Factor in place. On a tiny pivot returns its global index in *bad_index
 * and the first block column not factored in *kfail (block columns before
 * it hold L and D, block columns from it on hold the partially updated
 * trailing matrix). If ctx's progress callback asks to stop, *bad_index is
 * −2 and *kfail the first block column not factored; with stop_midway (the
 * caller discards A) the stop may also come inside a step's trailing
 * update, which then leaves A half updated. scratch: nb² elements; task0:
 * one int per block column plus one. */
static void FN(ldlt_factor)(sv_dense_sym *a, R thr, T *scratch, int *task0, int nthreads, int use3m,
                            int stop_midway, sv_ctx *ctx, int *bad_index, int *kfail, R *minpiv)
{
    const int n = a->n, nb = a->nb;
    const int K = (n + nb - 1) / nb;
    T *d = a->data;
    T *backup = scratch;
    *bad_index = -1;
    *kfail = -1;
    if (K == 0) return;
    R mp = *minpiv;
    int bad = FN(panel_factor)(d, n, MINW(nb, n), backup, thr, &mp, use3m);
    if (bad >= 0) {
        *bad_index = bad;
        *kfail = 0;
        *minpiv = mp;
        return;
    }
    double done = 0; /* the fraction of the work done before step k */
    for (int k = 0; k < K - 1; k++) {
        int next_bad = -1;
        int c1 = (k + 1) * nb, rows = n - c1;
        /* Progress by work done: after this step block columns up to k+1
         * are factored; the trailing matrix after them holds (rows left / n)³
         * of the work. Stopping midway, the step's tasks report within it. */
        double left = (double)(rows > nb ? rows - nb : 0) / n, done_after = 1 - left * left * left;
        sv_progress_span step = {0, 1, 0};
        sv_progress_loop loop = {0};
        /* Tasks of this step: row chunks of block columns k+2 … K−1. */
        int ntasks = 0;
        for (int j = k + 2; j < K; j++) {
            task0[j - k - 2] = ntasks;
            ntasks += FN(nchunks)(n - j * nb);
        }
        task0[K - k - 2 > 0 ? K - k - 2 : 0] = ntasks;
        if (stop_midway) {
            step = sv_progress_span_begin(ctx, done, done_after);
            loop = sv_progress_loop_begin(ctx, "dense LDLT factorisation", ntasks);
        }
        R mp_next = mp;
        int par = nthreads > 1 && (size_t)rows * rows > 64 * 64;
#pragma omp parallel num_threads(nthreads) if (par)
        {
#pragma omp single nowait
            {
                FN(update_col)(a, k, k + 1, -1, use3m);
                int c0n = (k + 1) * nb;
                next_bad = FN(panel_factor)(d + sv_dense_packed_block_offset(n, nb, k + 1), n - c0n, MINW(nb, n - c0n), backup,
                                            thr, &mp_next, use3m);
            }
#pragma omp for schedule(dynamic, 1) nowait
            for (int t = 0; t < ntasks; t++) {
                if (stop_midway && sv_progress_loop_at(&loop, t)) continue;
                int j = k + 2;
                while (t >= task0[j - k - 2 + 1]) j++;
                int c0j = j * nb, rows_j = n - c0j, nc = task0[j - k - 2 + 1] - task0[j - k - 2], q = t - task0[j - k - 2];
                int r0 = c0j + (int)((long long)rows_j * q / nc), r1 = c0j + (int)((long long)rows_j * (q + 1) / nc);
                FN(update_rows)(a, k, j, r0, r1, -1, use3m);
            }
#pragma omp barrier
            int nt = omp_get_num_threads(), t = omp_get_thread_num();
            int r0 = (int)((long long)rows * t / nt), r1 = (int)((long long)rows * (t + 1) / nt);
            FN(panel_scale)(a, k, r0, r1, 1);
        }
        mp = mp_next < mp ? mp_next : mp;
        sv_status st = SV_OK;
        if (stop_midway) {
            st = sv_progress_loop_end(&loop);
            sv_progress_span_end(ctx, step);
        }
        if (next_bad >= 0 && !st) {
            *bad_index = c1 + next_bad;
            *kfail = k + 1;
            break;
        }
        if (!stop_midway) st = sv_progress(ctx, "dense LDLT factorisation", done_after);
        if (st != SV_OK) {
            /* Cancelled: undo the look-ahead factorisation of block
             * column k+1, so that block columns from k+1 on hold the
             * updated trailing matrix, as after a tiny pivot (a matrix
             * stopped midway is discarded as it is). */
            if (!stop_midway) FN(panel_unfactor)(a, k + 1, backup);
            *bad_index = -2;
            *kfail = k + 1;
            break;
        }
        done = done_after;
    }
    *minpiv = mp;
}

/* Undo block columns kfail−1 … 0 of a stopped factorisation so that A holds
 * (up to rounding in the products) the matrix it held before. */
/* scratch: 3 · nb² elements. */
static void FN(ldlt_recover)(sv_dense_sym *a, int kfail, T *scratch)
{
    const int n = a->n, nb = a->nb;
    const int K = (n + nb - 1) / nb;
    T *d = a->data;
    T *s = scratch, *b = scratch + (size_t)nb * nb, *c = scratch + 2 * (size_t)nb * nb;
    const T one = 1, zero = 0;
    for (int k = kfail - 1; k >= 0; k--) {
        int c0 = k * nb, w = MINW(nb, n - c0), ld = n - c0;
        T *pk = d + sv_dense_packed_block_offset(n, nb, k);
        FN(panel_scale)(a, k, 0, ld - w, 0);                        /* panel = X again */
        for (int j = k + 1; j < K; j++) FN(update_col)(a, k, j, 1, 0); /* add the update back */
        FN(panel_scale)(a, k, 0, ld - w, 0);                        /* panel = W21 */
        if (ld > w)                                               /* A21 = W21·L11ᵀ */
            BLAS(trmm)(CblasColMajor, CblasRight, CblasLower, CblasTrans, CblasUnit, ld - w, w, &one, pk, ld,
                       pk + w, ld);
        /* A11 = L11·D1·L11ᵀ through b = L11·D1 (unit lower, zero upper) and c = L11ᵀ. */
        for (int jj = 0; jj < w; jj++) {
            T dd = pk[(size_t)jj * ld + jj];
            for (int i = 0; i < w; i++) {
                T l = i > jj ? pk[(size_t)jj * ld + i] : (i == jj ? 1 : 0);
                b[(size_t)jj * w + i] = l * dd;
                c[(size_t)i * w + jj] = l;
            }
        }
        BLAS(gemm)(CblasColMajor, CblasNoTrans, CblasNoTrans, w, w, w, &one, b, w, c, w, &zero, s, w);
        for (int jj = 0; jj < w; jj++)
            for (int i = jj; i < w; i++) pk[(size_t)jj * ld + i] = s[(size_t)jj * w + i];
    }
}

/* X ← D⁻¹·X on the rows of block column k. */
static void FN(solve_diag)(const sv_dense_sym *a, int k, int p, T *x, int ldx)
{
    const int n = a->n, nb = a->nb, c0 = k * nb, w = MINW(nb, n - c0), ld = n - c0;
    const T *pk = (const T *)a->data + sv_dense_packed_block_offset(n, nb, k);
    for (int i = 0; i < w; i++) {
        T dinv = 1 / pk[(size_t)i * ld + i];
        for (int c = 0; c < p; c++) x[(size_t)c * ldx + c0 + i] *= dinv;
    }
}

/* Solve L·D·Lᵀ·X = B in place with the packed factors. */
static void FN(ldlt_solve)(const sv_dense_sym *a, int p, T *x, int ldx)
{
    const int n = a->n, nb = a->nb;
    const int K = (n + nb - 1) / nb;
    const T *d = a->data;
    const T one = 1, mone = -1;
    for (int k = 0; k < K; k++) { /* L·Y = B */
        int c0 = k * nb, w = MINW(nb, n - c0), ld = n - c0;
        const T *pk = d + sv_dense_packed_block_offset(n, nb, k);
        BLAS(trsm)(CblasColMajor, CblasLeft, CblasLower, CblasNoTrans, CblasUnit, w, p, &one, pk, ld, x + c0, ldx);
        if (ld > w)
            BLAS(gemm)(CblasColMajor, CblasNoTrans, CblasNoTrans, ld - w, p, w, &mone, pk + w, ld, x + c0, ldx, &one,
                       x + c0 + w, ldx);
    }
    for (int k = 0; k < K; k++) FN(solve_diag)(a, k, p, x, ldx); /* Z = D⁻¹·Y */
    for (int k = K - 1; k >= 0; k--) { /* Lᵀ·X = Z */
        int c0 = k * nb, w = MINW(nb, n - c0), ld = n - c0;
        const T *pk = d + sv_dense_packed_block_offset(n, nb, k);
        if (ld > w)
            BLAS(gemm)(CblasColMajor, CblasTrans, CblasNoTrans, w, p, ld - w, &mone, pk + w, ld, x + c0 + w, ldx, &one,
                       x + c0, ldx);
        BLAS(trsm)(CblasColMajor, CblasLeft, CblasLower, CblasTrans, CblasUnit, w, p, &one, pk, ld, x + c0, ldx);
    }
}

/* The same solve with few right-hand sides on a team of nthr threads. Such
 * a solve is memory bound: every block column of the factors is read once
 * per sweep for a thin product. Each thread takes a slice of the rows
 * below the diagonal block (single-threaded BLAS inside the region), so
 * the threads stream disjoint parts of the factors; the small triangular
 * solves on the diagonal blocks run on one thread between barriers. In the
 * backward sweep each thread's slice gives a partial w × p product, summed
 * before the triangular solve. part: nthr · nb · p elements. Measured at
 * N = 2042 with 6 right-hand sides on two cores: about 3 ms against 5 ms
 * for one thread. */
static void FN(ldlt_solve_team)(const sv_dense_sym *a, int p, T *x, int ldx, int nthr, T *part)
{
    const int n = a->n, nb = a->nb;
    const int K = (n + nb - 1) / nb;
    const T *d = a->data;
    const T one = 1, mone = -1, zero = 0;
#pragma omp parallel num_threads(nthr)
    {
        const int t = omp_get_thread_num(), nt = omp_get_num_threads();
        T *mine = part + (size_t)t * nb * p;
        for (int k = 0; k < K; k++) { /* L·Y = B */
            int c0 = k * nb, w = MINW(nb, n - c0), ld = n - c0, below = ld - w;
            const T *pk = d + sv_dense_packed_block_offset(n, nb, k);
#pragma omp single
            BLAS(trsm)(CblasColMajor, CblasLeft, CblasLower, CblasNoTrans, CblasUnit, w, p, &one, pk, ld, x + c0,
                       ldx);
            int lo = (int)((long)below * t / nt), hi = (int)((long)below * (t + 1) / nt);
            if (hi > lo)
                BLAS(gemm)(CblasColMajor, CblasNoTrans, CblasNoTrans, hi - lo, p, w, &mone, pk + w + lo, ld, x + c0,
                           ldx, &one, x + c0 + w + lo, ldx);
#pragma omp barrier
        }
#pragma omp for schedule(static)
        for (int k = 0; k < K; k++) FN(solve_diag)(a, k, p, x, ldx); /* Z = D⁻¹·Y */
        for (int k = K - 1; k >= 0; k--) { /* Lᵀ·X = Z */
            int c0 = k * nb, w = MINW(nb, n - c0), ld = n - c0, below = ld - w;
            const T *pk = d + sv_dense_packed_block_offset(n, nb, k);
            int lo = (int)((long)below * t / nt), hi = (int)((long)below * (t + 1) / nt);
            if (hi > lo)
                BLAS(gemm)(CblasColMajor, CblasTrans, CblasNoTrans, w, p, hi - lo, &mone, pk + w + lo, ld,
                           x + c0 + w + lo, ldx, &zero, mine, w);
            else
                memset(mine, 0, sizeof(T) * (size_t)w * p);
#pragma omp barrier
#pragma omp single
            {
                for (int u = 0; u < nt; u++)
                    for (int c = 0; c < p; c++)
                        for (int i = 0; i < w; i++)
                            x[(size_t)c * ldx + c0 + i] += part[(size_t)u * nb * p + (size_t)c * w + i];
                BLAS(trsm)(CblasColMajor, CblasLeft, CblasLower, CblasTrans, CblasUnit, w, p, &one, pk, ld, x + c0,
                           ldx);
            }
        }
    }
}

#undef MINW
