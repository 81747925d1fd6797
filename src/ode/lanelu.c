/* Lane LU: symbolic analysis (exact fill of a no-pivoting LU in a given
 * order) and the W-lane numeric kernels. See lanelu.h. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "lanelu.h"

void lane_lu_destroy(sv_ctx *ctx, lane_lu *lu)
{
    if (!lu) return;
    int **arrs[] = {&lu->perm, &lu->dslot, &lu->lptr, &lu->lslot, &lu->uptr, &lu->uslot, &lu->upd,
                    &lu->Lrp,  &lu->Lsl,   &lu->Lcol, &lu->Urp,   &lu->Usl,  &lu->Ucol, &lu->slot_of};
    for (size_t k = 0; k < sizeof arrs / sizeof arrs[0]; k++) sv_free(ctx, *arrs[k]);
    sv_free(ctx, lu);
}

int lane_lu_slot(const lane_lu *lu, int i, int j)
{
    /* slot_of is indexed in permuted numbering; iperm is perm's inverse */
    return lu->slot_of[(size_t)lu->perm[lu->n + i] * lu->n + lu->perm[lu->n + j]];
}

#define ALLOC_INTS(p, count)                                                          \
    do {                                                                              \
        (p) = sv_alloc(ctx, sizeof(int) * (size_t)((count) > 0 ? (count) : 1), "ode lane LU"); \
        if (!(p)) goto fail;                                                          \
    } while (0)

sv_status lane_lu_analyse(sv_ctx *ctx, int n, const int *rowptr, const int *colind, const int *perm,
                          long long max_updates, lane_lu **out)
{
    *out = NULL;
    if ((size_t)n * n > (size_t)64 << 20)
        return sv_error(SV_ERR_UNSUPPORTED, "lane LU: n = %d too large for the dense symbolic map", n);
    lane_lu *lu = sv_calloc(ctx, 1, sizeof *lu, "ode lane LU");
    unsigned char *m = NULL;
    if (!lu) return sv_last_status();
    lu->n = n;
    ALLOC_INTS(lu->perm, 2 * n); /* perm, then its inverse */
    for (int k = 0; k < n; k++) lu->perm[k] = perm ? perm[k] : k;
    for (int k = 0; k < n; k++) lu->perm[n + lu->perm[k]] = k;
    lu->identity = 1;
    for (int k = 0; k < n; k++) lu->identity &= lu->perm[k] == k;
    m = sv_calloc(ctx, (size_t)n * n, 1, "ode lane LU symbolic");
    if (!m) goto fail;
    const int *ip = lu->perm + n;
    for (int i = 0; i < n; i++) {
        m[(size_t)ip[i] * n + ip[i]] = 1;
        for (int e = rowptr[i]; e < rowptr[i + 1]; e++) m[(size_t)ip[i] * n + ip[colind[e]]] = 1;
    }
    /* exact fill, right-looking: (i,k) and (k,j) with i,j > k make (i,j) */
    long long nupd = 0;
    for (int k = 0; k < n; k++)
        for (int i = k + 1; i < n; i++) {
            if (!m[(size_t)i * n + k]) continue;
            for (int j = k + 1; j < n; j++)
                if (m[(size_t)k * n + j]) {
                    m[(size_t)i * n + j] = 1;
                    nupd++;
                }
            if (nupd > max_updates) {
                sv_error(SV_ERR_UNSUPPORTED, "lane LU: more than %lld multiply-adds per factorisation",
                         max_updates);
                goto fail;
            }
        }
    lu->nupd = nupd;
    ALLOC_INTS(lu->slot_of, n * n);
    int ns = 0;
    for (size_t q = 0; q < (size_t)n * n; q++) lu->slot_of[q] = m[q] ? ns++ : -1;
    lu->nslots = ns;
    ALLOC_INTS(lu->dslot, n);
    for (int k = 0; k < n; k++) lu->dslot[k] = lu->slot_of[(size_t)k * n + k];
    /* factor program */
    ALLOC_INTS(lu->lptr, n + 1);
    ALLOC_INTS(lu->uptr, n + 1);
    int nl = 0, nu = 0;
    for (int i = 0; i < n; i++)
        for (int j = 0; j < n; j++)
            if (m[(size_t)i * n + j]) {
                if (j < i) nl++;
                if (j > i) nu++;
            }
    ALLOC_INTS(lu->lslot, nl);
    ALLOC_INTS(lu->uslot, nu);
    ALLOC_INTS(lu->upd, nupd);
    ALLOC_INTS(lu->Lrp, n + 1);
    ALLOC_INTS(lu->Lsl, nl);
    ALLOC_INTS(lu->Lcol, nl);
    ALLOC_INTS(lu->Urp, n + 1);
    ALLOC_INTS(lu->Usl, nu);
    ALLOC_INTS(lu->Ucol, nu);
    int a = 0, b = 0;
    long long u = 0;
    for (int k = 0; k < n; k++) {
        lu->lptr[k] = a;
        lu->uptr[k] = b;
        for (int i = k + 1; i < n; i++)
            if (m[(size_t)i * n + k]) lu->lslot[a++] = lu->slot_of[(size_t)i * n + k];
        for (int j = k + 1; j < n; j++)
            if (m[(size_t)k * n + j]) lu->uslot[b++] = lu->slot_of[(size_t)k * n + j];
        for (int i = k + 1; i < n; i++) {
            if (!m[(size_t)i * n + k]) continue;
            for (int j = k + 1; j < n; j++)
                if (m[(size_t)k * n + j]) lu->upd[u++] = lu->slot_of[(size_t)i * n + j];
        }
    }
    lu->lptr[n] = a;
    lu->uptr[n] = b;
    a = b = 0;
    for (int i = 0; i < n; i++) {
        lu->Lrp[i] = a;
        lu->Urp[i] = b;
        for (int j = 0; j < n; j++) {
            int s = lu->slot_of[(size_t)i * n + j];
            if (s < 0) continue;
            if (j < i) lu->Lsl[a] = s, lu->Lcol[a++] = j;
            if (j > i) lu->Usl[b] = s, lu->Ucol[b++] = j;
        }
    }
    lu->Lrp[n] = a;
    lu->Urp[n] = b;
    sv_free(ctx, m);
    /* full pattern, natural order, small: the unrolled dense kernels (slots
     * were numbered row-major above, so slot (i, j) = i·n + j) */
    lu->dense_small = lu->identity && n >= 2 && n <= 8 && ns == n * n;
    *out = lu;
    return SV_OK;
fail:;
    sv_status st = sv_last_status();
    sv_free(ctx, m);
    lane_lu_destroy(ctx, lu);
    return st == SV_OK ? SV_ERR_NOMEM : st;
}

/* Kernels, instantiated per element type and per lane count so that the
 * lane loop has a constant trip count and vectorises. */
#define LANE_KERNELS(T, SUF, WC)                                                                      \
    static void factor_##SUF##_##WC(const lane_lu *lu, T *buf, unsigned char *bad)                   \
    {                                                                                                 \
        enum { W = WC };                                                                              \
        const int *upd = lu->upd;                                                                     \
        for (int k = 0; k < lu->n; k++) {                                                             \
            T *dk = buf + (size_t)lu->dslot[k] * W;                                                   \
            for (int w = 0; w < W; w++) {                                                             \
                if (dk[w] == 0 || !isfinite(dk[w])) bad[w] = 1;                                       \
                dk[w] = (T)1 / dk[w];                                                                 \
            }                                                                                         \
            for (int q = lu->lptr[k]; q < lu->lptr[k + 1]; q++) {                                     \
                T *l = buf + (size_t)lu->lslot[q] * W;                                                \
                for (int w = 0; w < W; w++) l[w] *= dk[w];                                            \
                for (int r = lu->uptr[k]; r < lu->uptr[k + 1]; r++) {                                 \
                    const T *uu = buf + (size_t)lu->uslot[r] * W;                                     \
                    T *dst = buf + (size_t)(*upd++) * W;                                              \
                    for (int w = 0; w < W; w++) dst[w] -= l[w] * uu[w];                               \
                }                                                                                     \
            }                                                                                         \
        }                                                                                             \
    }                                                                                                 \
    static void solve_##SUF##_##WC(const lane_lu *lu, const T *buf, T *x, T *z)                      \
    {                                                                                                 \
        enum { W = WC };                                                                              \
        int n = lu->n;                                                                                \
        if (lu->identity) {                                                                           \
            z = x;                                                                                    \
        } else {                                                                                      \
            for (int k = 0; k < n; k++) {                                                             \
                const T *xs = x + (size_t)lu->perm[k] * W;                                            \
                for (int w = 0; w < W; w++) z[(size_t)k * W + w] = xs[w];                             \
            }                                                                                         \
        }                                                                                             \
        for (int i = 0; i < n; i++) {                                                                 \
            T acc[W];                                                                                 \
            for (int w = 0; w < W; w++) acc[w] = z[(size_t)i * W + w];                                \
            for (int q = lu->Lrp[i]; q < lu->Lrp[i + 1]; q++) {                                       \
                const T *l = buf + (size_t)lu->Lsl[q] * W, *zj = z + (size_t)lu->Lcol[q] * W;         \
                for (int w = 0; w < W; w++) acc[w] -= l[w] * zj[w];                                   \
            }                                                                                         \
            for (int w = 0; w < W; w++) z[(size_t)i * W + w] = acc[w];                                \
        }                                                                                             \
        for (int i = n - 1; i >= 0; i--) {                                                            \
            T acc[W];                                                                                 \
            for (int w = 0; w < W; w++) acc[w] = z[(size_t)i * W + w];                                \
            for (int q = lu->Urp[i]; q < lu->Urp[i + 1]; q++) {                                       \
                const T *uu = buf + (size_t)lu->Usl[q] * W, *zj = z + (size_t)lu->Ucol[q] * W;        \
                for (int w = 0; w < W; w++) acc[w] -= uu[w] * zj[w];                                  \
            }                                                                                         \
            const T *d = buf + (size_t)lu->dslot[i] * W;                                              \
            for (int w = 0; w < W; w++) z[(size_t)i * W + w] = acc[w] * d[w];                         \
        }                                                                                             \
        if (!lu->identity)                                                                            \
            for (int k = 0; k < n; k++) {                                                             \
                T *xs = x + (size_t)lu->perm[k] * W;                                                  \
                for (int w = 0; w < W; w++) xs[w] = z[(size_t)k * W + w];                             \
            }                                                                                         \
    }

LANE_KERNELS(double, d, 1)
LANE_KERNELS(double, d, 2)
LANE_KERNELS(double, d, 4)
LANE_KERNELS(double, d, 8)
LANE_KERNELS(float, f, 1)
LANE_KERNELS(float, f, 2)
LANE_KERNELS(float, f, 4)
LANE_KERNELS(float, f, 8)

/* Dense n ≤ 8 in natural order (slot (i, j) = i·n + j): the same
 * operations as the op-list kernels for a full pattern — L·U elimination in
 * the same order — with n and W compile-time constants, fully unrolled. */
#define DENSE_SMALL(N, WC)                                                                            \
    static void dfactor_##N##_##WC(double *restrict a, unsigned char *bad)                           \
    {                                                                                                 \
        enum { n = N, W = WC };                                                                       \
        for (int k = 0; k < n; k++) {                                                                 \
            double dk[W];                                                                             \
            for (int w = 0; w < W; w++) {                                                             \
                double d = a[(k * n + k) * W + w];                                                    \
                if (d == 0 || !isfinite(d)) bad[w] = 1;                                               \
                dk[w] = 1.0 / d;                                                                      \
                a[(k * n + k) * W + w] = dk[w];                                                       \
            }                                                                                         \
            for (int i = k + 1; i < n; i++) {                                                         \
                double l[W];                                                                          \
                for (int w = 0; w < W; w++) {                                                         \
                    l[w] = a[(i * n + k) * W + w] * dk[w];                                            \
                    a[(i * n + k) * W + w] = l[w];                                                    \
                }                                                                                     \
                for (int j = k + 1; j < n; j++) {                                                     \
                    double u[W], t[W];                                                                \
                    for (int w = 0; w < W; w++) u[w] = a[(k * n + j) * W + w];                        \
                    for (int w = 0; w < W; w++) t[w] = a[(i * n + j) * W + w] - l[w] * u[w];          \
                    for (int w = 0; w < W; w++) a[(i * n + j) * W + w] = t[w];                        \
                }                                                                                     \
            }                                                                                         \
        }                                                                                             \
    }                                                                                                 \
    static void dsolve_##N##_##WC(const double *restrict a, double *restrict x)                      \
    {                                                                                                 \
        enum { n = N, W = WC };                                                                       \
        double z[n][W];                                                                               \
        _Pragma("GCC unroll 8") for (int i = 0; i < n; i++) {                                         \
            for (int w = 0; w < W; w++) z[i][w] = x[i * W + w];                                       \
            _Pragma("GCC unroll 8") for (int j = 0; j < i; j++)                                       \
                for (int w = 0; w < W; w++) z[i][w] -= a[(i * n + j) * W + w] * z[j][w];              \
        }                                                                                             \
        _Pragma("GCC unroll 8") for (int i = n - 1; i >= 0; i--) {                                    \
            _Pragma("GCC unroll 8") for (int j = i + 1; j < n; j++)                                   \
                for (int w = 0; w < W; w++) z[i][w] -= a[(i * n + j) * W + w] * z[j][w];              \
            for (int w = 0; w < W; w++) z[i][w] *= a[(i * n + i) * W + w];                           \
        }                                                                                             \
        for (int i = 0; i < n; i++)                                                                   \
            for (int w = 0; w < W; w++) x[i * W + w] = z[i][w];                                       \
    }
#define DENSE_SMALL_W(N) DENSE_SMALL(N, 1) DENSE_SMALL(N, 2) DENSE_SMALL(N, 4) DENSE_SMALL(N, 8)
DENSE_SMALL_W(2)
DENSE_SMALL_W(3)
DENSE_SMALL_W(4)
DENSE_SMALL_W(5)
DENSE_SMALL_W(6)
DENSE_SMALL_W(7)
DENSE_SMALL_W(8)
#define DENSE_ROW(N) {dfactor_##N##_1, dfactor_##N##_2, dfactor_##N##_4, dfactor_##N##_8}
#define DENSE_SROW(N) {dsolve_##N##_1, dsolve_##N##_2, dsolve_##N##_4, dsolve_##N##_8}
static void (*const dense_factor_tab[9][4])(double *, unsigned char *) = {
    {0}, {0}, DENSE_ROW(2), DENSE_ROW(3), DENSE_ROW(4), DENSE_ROW(5), DENSE_ROW(6), DENSE_ROW(7), DENSE_ROW(8)};
static void (*const dense_solve_tab[9][4])(const double *, double *) = {
    {0}, {0}, DENSE_SROW(2), DENSE_SROW(3), DENSE_SROW(4), DENSE_SROW(5), DENSE_SROW(6), DENSE_SROW(7),
    DENSE_SROW(8)};
static int widx(int W) { return W == 1 ? 0 : W == 2 ? 1 : W == 4 ? 2 : 3; }

#define DISPATCH(fn, SUF, W, ...)                     \
    switch (W) {                                      \
    case 1: fn##_##SUF##_1(__VA_ARGS__); break;      \
    case 2: fn##_##SUF##_2(__VA_ARGS__); break;      \
    case 4: fn##_##SUF##_4(__VA_ARGS__); break;      \
    default: fn##_##SUF##_8(__VA_ARGS__); break;     \
    }

void lane_lu_factor_d(const lane_lu *lu, int W, double *buf, unsigned char *bad)
{
    if (lu->dense_small) {
        dense_factor_tab[lu->n][widx(W)](buf, bad);
        return;
    }
    DISPATCH(factor, d, W, lu, buf, bad)
}
void lane_lu_factor_f(const lane_lu *lu, int W, float *buf, unsigned char *bad) { DISPATCH(factor, f, W, lu, buf, bad) }
void lane_lu_solve_d(const lane_lu *lu, int W, const double *buf, double *x, double *work)
{
    if (lu->dense_small) {
        dense_solve_tab[lu->n][widx(W)](buf, x);
        return;
    }
    DISPATCH(solve, d, W, lu, buf, x, work)
}
void lane_lu_solve_f(const lane_lu *lu, int W, const float *buf, float *x, float *work)
{
    DISPATCH(solve, f, W, lu, buf, x, work)
}
