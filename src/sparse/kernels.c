/* Table-driven numeric kernels: unpivoted up-looking LU in place and the
 * row-oriented triangular solves, for one matrix or W lanes (slot-major),
 * in double and single precision. The operation order here is THE order:
 * codegen.c emits the very same operations as straight-line code, and the
 * tests check that both agree bit for bit. Contraction into FMA is disabled
 * (see module.cmake) so the order and rounding of every operation is what
 * the source says, whichever compiler builds either emission. */
#include <math.h>
#include <string.h>

#include "sparse_internal.h"

#if defined(__clang__)
#pragma STDC FP_CONTRACT OFF
#endif

/* A pivot is bad when it is zero or not finite; the first bad row (1-based)
 * is reported, elimination goes on and the inf/NaN propagate. */
#define SV_BAD_PIVOT(d) (!((d) != 0) || !isfinite(d))

/* One run of updates: dst[j] -= l * src[j]. dst lies in row i, src in row
 * k < i, so they never overlap. */
static inline void sv_axpy_d(double *restrict dst, const double *restrict src, double l, int len)
{
    for (int j = 0; j < len; j++) dst[j] -= l * src[j];
}
static inline void sv_axpy_f(float *restrict dst, const float *restrict src, float l, int len)
{
    for (int j = 0; j < len; j++) dst[j] -= l * src[j];
}

#define SV_DEFINE_SCALAR(T, SFX)                                                                        \
    static int factor_table##SFX(const sv_sparse_lu *lu, T *restrict buf)                                \
    {                                                                                                    \
        const int n = lu->n, *rp = lu->rowptr, *ci = lu->colind, *dg = lu->diag;                        \
        const int *rt = lu->run_t, *rl = lu->run_len;                                                    \
        const long long *ro = lu->run_off;                                                               \
        int flag = 0;                                                                                    \
        long long x = 0;                                                                                 \
        for (int i = 0; i < n; i++) {                                                                    \
            for (int p = rp[i]; p < dg[i]; p++, x++) {                                                   \
                const int k = ci[p];                                                                     \
                const T l = buf[p] * buf[dg[k]];                                                         \
                buf[p] = l;                                                                              \
                const T *src = buf + dg[k] + 1;                                                          \
                for (long long r = ro[x]; r < ro[x + 1]; r++) {                                          \
                    sv_axpy##SFX(buf + rt[r], src, l, rl[r]);                                            \
                    src += rl[r];                                                                        \
                }                                                                                        \
            }                                                                                            \
            const T d = buf[dg[i]];                                                                      \
            if (!flag && SV_BAD_PIVOT(d)) flag = i + 1;                                                  \
            buf[dg[i]] = (T)1 / d;                                                                       \
        }                                                                                                \
        return flag;                                                                                     \
    }                                                                                                    \
    static void solve_table##SFX(const sv_sparse_lu *lu, const T *restrict buf, const T *b, T *x,       \
                                 T *restrict w)                                                          \
    {                                                                                                    \
        const int n = lu->n, *rp = lu->rowptr, *ci = lu->colind, *dg = lu->diag, *pm = lu->perm;        \
        for (int k = 0; k < n; k++) w[k] = b[pm[k]];                                                     \
        for (int i = 0; i < n; i++) {                                                                    \
            T s = w[i];                                                                                  \
            for (int p = rp[i]; p < dg[i]; p++) s -= buf[p] * w[ci[p]];                                  \
            w[i] = s;                                                                                    \
        }                                                                                                \
        for (int i = n - 1; i >= 0; i--) {                                                               \
            T s = w[i];                                                                                  \
            for (int p = dg[i] + 1; p < rp[i + 1]; p++) s -= buf[p] * w[ci[p]];                          \
            w[i] = s * buf[dg[i]];                                                                       \
        }                                                                                                \
        for (int k = 0; k < n; k++) x[pm[k]] = w[k];                                                     \
    }

SV_DEFINE_SCALAR(double, _d)
SV_DEFINE_SCALAR(float, _f)

/* W lanes side by side: every scalar operation becomes a loop over lanes
 * with W a compile-time constant, which the compiler turns into vector
 * instructions (one AVX2 register holds 4 doubles or 8 floats). */
#define SV_DEFINE_BATCH(T, W, SFX)                                                                      \
    static void factor_batch##SFX(const sv_sparse_lu *lu, T *restrict buf, int *flags)                   \
    {                                                                                                    \
        const int n = lu->n, *rp = lu->rowptr, *ci = lu->colind, *dg = lu->diag;                        \
        const int *rt = lu->run_t, *rl = lu->run_len;                                                    \
        const long long *ro = lu->run_off;                                                               \
        for (int w = 0; w < W; w++) flags[w] = 0;                                                        \
        long long x = 0;                                                                                 \
        for (int i = 0; i < n; i++) {                                                                    \
            for (int p = rp[i]; p < dg[i]; p++, x++) {                                                   \
                const int k = ci[p];                                                                     \
                T l[W];                                                                                  \
                T *restrict bp = buf + (size_t)p * W;                                                    \
                const T *restrict bd = buf + (size_t)dg[k] * W;                                          \
                for (int w = 0; w < W; w++) l[w] = bp[w] * bd[w];                                        \
                for (int w = 0; w < W; w++) bp[w] = l[w];                                                \
                const T *src = buf + (size_t)(dg[k] + 1) * W;                                            \
                for (long long r = ro[x]; r < ro[x + 1]; r++) {                                          \
                    T *restrict dst = buf + (size_t)rt[r] * W;                                           \
                    const T *restrict sr = src;                                                          \
                    const int len = rl[r];                                                               \
                    for (int j = 0; j < len; j++)                                                        \
                        for (int w = 0; w < W; w++) dst[j * W + w] -= l[w] * sr[j * W + w];              \
                    src += (size_t)len * W;                                                              \
                }                                                                                        \
            }                                                                                            \
            T *restrict bd = buf + (size_t)dg[i] * W;                                                    \
            for (int w = 0; w < W; w++) {                                                                \
                const T d = bd[w];                                                                       \
                if (!flags[w] && SV_BAD_PIVOT(d)) flags[w] = i + 1;                                      \
                bd[w] = (T)1 / d;                                                                        \
            }                                                                                            \
        }                                                                                                \
    }                                                                                                    \
    static void solve_batch##SFX(const sv_sparse_lu *lu, const T *restrict buf, const T *b, T *x,       \
                                 T *restrict wk)                                                         \
    {                                                                                                    \
        const int n = lu->n, *rp = lu->rowptr, *ci = lu->colind, *dg = lu->diag, *pm = lu->perm;        \
        for (int k = 0; k < n; k++)                                                                      \
            for (int w = 0; w < W; w++) wk[(size_t)k * W + w] = b[(size_t)pm[k] * W + w];               \
        for (int i = 0; i < n; i++) {                                                                    \
            T s[W];                                                                                      \
            for (int w = 0; w < W; w++) s[w] = wk[(size_t)i * W + w];                                    \
            for (int p = rp[i]; p < dg[i]; p++) {                                                        \
                const T *restrict bp = buf + (size_t)p * W, *restrict wc = wk + (size_t)ci[p] * W;       \
                for (int w = 0; w < W; w++) s[w] -= bp[w] * wc[w];                                       \
            }                                                                                            \
            for (int w = 0; w < W; w++) wk[(size_t)i * W + w] = s[w];                                    \
        }                                                                                                \
        for (int i = n - 1; i >= 0; i--) {                                                               \
            T s[W];                                                                                      \
            for (int w = 0; w < W; w++) s[w] = wk[(size_t)i * W + w];                                    \
            for (int p = dg[i] + 1; p < rp[i + 1]; p++) {                                                \
                const T *restrict bp = buf + (size_t)p * W, *restrict wc = wk + (size_t)ci[p] * W;       \
                for (int w = 0; w < W; w++) s[w] -= bp[w] * wc[w];                                       \
            }                                                                                            \
            const T *restrict bd = buf + (size_t)dg[i] * W;                                              \
            for (int w = 0; w < W; w++) wk[(size_t)i * W + w] = s[w] * bd[w];                            \
        }                                                                                                \
        for (int k = 0; k < n; k++)                                                                      \
            for (int w = 0; w < W; w++) x[(size_t)pm[k] * W + w] = wk[(size_t)k * W + w];               \
    }

SV_DEFINE_BATCH(double, 1, _d1)
SV_DEFINE_BATCH(double, 2, _d2)
SV_DEFINE_BATCH(double, 4, _d4)
SV_DEFINE_BATCH(double, 8, _d8)
SV_DEFINE_BATCH(float, 1, _f1)
SV_DEFINE_BATCH(float, 2, _f2)
SV_DEFINE_BATCH(float, 4, _f4)
SV_DEFINE_BATCH(float, 8, _f8)

/* R ≤ 8 right-hand sides of W lanes each (vector r at b + r·nw), double
 * only: every one takes solve_batch's operations in their order, so its
 * result is that of its own call bit for bit; together they share each
 * factor entry's load and their dependency chains (one per row) overlap.
 * The partial sums are GCC/Clang vectors of W lanes (as in codegen.c) in
 * named variables, one per right-hand side (those past R are dead code):
 * held in an array, or passed to memcpy, GCC kept them in memory, and
 * every chain step paid a store and a load. */
#if defined(__GNUC__)
/* 8-byte aligned, read and written in place (as codegen.c's kernels): no
 * vector crosses a call, whose convention GCC warns about without AVX-512 */
#define SV_MULTI_TYPE(W) typedef double sv_mv##W __attribute__((vector_size(8 * W), aligned(8)));
#define SV_MV_LD(W, p) (*(const sv_mv##W *)(p))
#define SV_MV_ST(W, p, v) (*(sv_mv##W *)(p) = (v))
#define SV_MV_SUB_MUL(W, s, a, b) (s) -= (a) * (b)
#define SV_MV_MUL(W, s, a) (s) *= (a)
#define SV_MULTI_LDST(W)
#else
#define SV_MULTI_TYPE(W) typedef struct { double v[W]; } sv_mv##W;
#define SV_MV_LD(W, p) sv_mv_ld##W(p)
#define SV_MV_ST(W, p, v) sv_mv_st##W(p, v)
#define SV_MV_SUB_MUL(W, s, a, b) for (int w_ = 0; w_ < W; w_++) (s).v[w_] -= (a).v[w_] * (b).v[w_]
#define SV_MV_MUL(W, s, a) for (int w_ = 0; w_ < W; w_++) (s).v[w_] *= (a).v[w_]
#define SV_MULTI_LDST(W) \
    static inline sv_mv##W sv_mv_ld##W(const double *p) \
    { \
        sv_mv##W v; \
        memcpy(&v, p, sizeof v); \
        return v; \
    } \
    static inline void sv_mv_st##W(double *p, sv_mv##W v) { memcpy(p, &v, sizeof v); }
#endif
SV_MULTI_TYPE(1)
SV_MULTI_TYPE(2)
SV_MULTI_TYPE(4)
SV_MULTI_TYPE(8)
SV_MULTI_LDST(1)
SV_MULTI_LDST(2)
SV_MULTI_LDST(4)
SV_MULTI_LDST(8)
#define SV_EACH8(M, W) M(0, W) M(1, W) M(2, W) M(3, W) M(4, W) M(5, W) M(6, W) M(7, W)

#define SV_DEFINE_MULTI(W, R, SFX)                                                                       \
    static void solve_multi##SFX(const sv_sparse_lu *lu, const double *restrict buf, const double *b,    \
                                 double *x, double *restrict wk, size_t nw)                              \
    {                                                                                                    \
        const int n = lu->n, *rp = lu->rowptr, *ci = lu->colind, *dg = lu->diag, *pm = lu->perm;        \
        const int R_ = R, W_ = W; /* for the steps below */                                              \
        (void)W_;                                                                                        \
        sv_mv##W s0, s1, s2, s3, s4, s5, s6, s7, a;                                                      \
        const double *wc;                                                                                \
        for (int r = 0; r < R; r++)                                                                      \
            for (int k = 0; k < n; k++)                                                                  \
                memcpy(wk + r * nw + (size_t)k * W, b + r * nw + (size_t)pm[k] * W, sizeof(sv_mv##W));   \
        for (int i = 0; i < n; i++) {                                                                    \
            double *wi = wk + (size_t)i * W;                                                             \
            SV_EACH8(SV_MV_LOAD, W)                                                                      \
            for (int p = rp[i]; p < dg[i]; p++) {                                                        \
                wc = wk + (size_t)ci[p] * W;                                                             \
                a = SV_MV_LD(W, buf + (size_t)p * W);                                                    \
                SV_EACH8(SV_MV_UPDATE, W)                                                                \
            }                                                                                            \
            SV_EACH8(SV_MV_STORE, W)                                                                     \
        }                                                                                                \
        for (int i = n - 1; i >= 0; i--) {                                                               \
            double *wi = wk + (size_t)i * W;                                                             \
            SV_EACH8(SV_MV_LOAD, W)                                                                      \
            for (int p = dg[i] + 1; p < rp[i + 1]; p++) {                                                \
                wc = wk + (size_t)ci[p] * W;                                                             \
                a = SV_MV_LD(W, buf + (size_t)p * W);                                                    \
                SV_EACH8(SV_MV_UPDATE, W)                                                                \
            }                                                                                            \
            a = SV_MV_LD(W, buf + (size_t)dg[i] * W);                                                    \
            SV_EACH8(SV_MV_SCALE, W)                                                                     \
            SV_EACH8(SV_MV_STORE, W)                                                                     \
        }                                                                                                \
        for (int r = 0; r < R; r++)                                                                      \
            for (int k = 0; k < n; k++)                                                                  \
                memcpy(x + r * nw + (size_t)pm[k] * W, wk + r * nw + (size_t)k * W, sizeof(sv_mv##W));   \
    }
/* Right-hand side r's steps inside SV_DEFINE_MULTI (R_, W_, wi, wc, a in scope). */
#define SV_MV_LOAD(r, W) if (r < R_) s##r = SV_MV_LD(W, wi + r * nw);
#define SV_MV_UPDATE(r, W) \
    if (r < R_) { \
        const sv_mv##W c_ = SV_MV_LD(W, wc + r * nw); \
        SV_MV_SUB_MUL(W_, s##r, a, c_); \
    }
#define SV_MV_SCALE(r, W) if (r < R_) SV_MV_MUL(W_, s##r, a);
#define SV_MV_STORE(r, W) if (r < R_) SV_MV_ST(W, wi + r * nw, s##r);
#define SV_DEFINE_MULTI_W(W)                                                                             \
    SV_DEFINE_MULTI(W, 1, _d##W##_1)                                                                     \
    SV_DEFINE_MULTI(W, 2, _d##W##_2)                                                                     \
    SV_DEFINE_MULTI(W, 3, _d##W##_3)                                                                     \
    SV_DEFINE_MULTI(W, 4, _d##W##_4)                                                                     \
    SV_DEFINE_MULTI(W, 8, _d##W##_8)                                                                     \
    static void solve_multi_d##W(const sv_sparse_lu *lu, const double *buf, const double *b, double *x,   \
                                 double *wk, size_t nw, int g)                                           \
    {                                                                                                    \
        switch (g) {                                                                                     \
        case 1: solve_multi_d##W##_1(lu, buf, b, x, wk, nw); break;                                      \
        case 2: solve_multi_d##W##_2(lu, buf, b, x, wk, nw); break;                                      \
        case 3: solve_multi_d##W##_3(lu, buf, b, x, wk, nw); break;                                      \
        case 4: solve_multi_d##W##_4(lu, buf, b, x, wk, nw); break;                                      \
        default: solve_multi_d##W##_8(lu, buf, b, x, wk, nw); break; /* g = 8 */                         \
        }                                                                                                \
    }
SV_DEFINE_MULTI_W(1)
SV_DEFINE_MULTI_W(2)
SV_DEFINE_MULTI_W(4)
SV_DEFINE_MULTI_W(8)

/* ---- public entry points ------------------------------------------------- */
static int lane_index(int W)
{
    switch (W) {
    case 1: return 0;
    case 2: return 1;
    case 4: return 2;
    case 8: return 3;
    default: return -1;
    }
}

/* Lane index of W for valid arguments, else -1 with the error recorded. */
static int check_batch(const sv_sparse_lu *lu, const void *buf, int W, const char *fn)
{
    if (!lu || !buf) {
        sv_error(SV_ERR_ARG, "%s: lu or buf is NULL", fn);
        return -1;
    }
    int li = lane_index(W);
    if (li < 0) sv_error(SV_ERR_ARG, "%s: W = %d: expected 1, 2, 4 or 8", fn, W);
    return li;
}

/* The scalar factor's result as a status, the kernel's flag as info. */
static sv_status pivot_status(const sv_sparse_lu *lu, int flag, int *info, const char *fn)
{
    if (info) *info = flag;
    if (!flag) return SV_OK;
    return sv_error(SV_ERR_SINGULAR, "%s: zero or non-finite pivot in row %d of the permuted matrix (original row %d)",
                    fn, flag - 1, lu->perm[flag - 1]);
}

/* One set of entry points per precision: generated kernels when installed
 * (KF names their table fields), else the table-driven ones (TAB, BAT). */
#define SV_DEFINE_ENTRIES(T, PUB, KF, TAB, BAT)                                                          \
    sv_status sv_sparse_lu_factor##PUB(const sv_sparse_lu *lu, T *buf, int *info)                        \
    {                                                                                                    \
        int flag = lu->kern && lu->kern->factor##KF ? lu->kern->factor##KF(buf) : factor_table##TAB(lu, buf); \
        return pivot_status(lu, flag, info, "sv_sparse_lu_factor" #PUB);                                 \
    }                                                                                                    \
    void sv_sparse_lu_solve##PUB(const sv_sparse_lu *lu, const T *buf, const T *b, T *x, T *work)        \
    {                                                                                                    \
        if (lu->kern && lu->kern->solve##KF)                                                             \
            lu->kern->solve##KF(buf, b, x, work);                                                        \
        else                                                                                             \
            solve_table##TAB(lu, buf, b, x, work);                                                       \
    }                                                                                                    \
    sv_status sv_sparse_lu_factor_batch##PUB(const sv_sparse_lu *lu, int W, T *buf, int *flags)          \
    {                                                                                                    \
        int li = check_batch(lu, buf, W, "sv_sparse_lu_factor_batch" #PUB), f[8];                        \
        if (li < 0) return SV_ERR_ARG;                                                                   \
        if (lu->kern && lu->kern->factor_batch##KF[li])                                                  \
            lu->kern->factor_batch##KF[li](buf, f);                                                      \
        else                                                                                             \
            switch (W) {                                                                                 \
            case 1: factor_batch##BAT##1(lu, buf, f); break;                                             \
            case 2: factor_batch##BAT##2(lu, buf, f); break;                                             \
            case 4: factor_batch##BAT##4(lu, buf, f); break;                                             \
            default: factor_batch##BAT##8(lu, buf, f); break;                                            \
            }                                                                                            \
        if (flags) memcpy(flags, f, (size_t)W * sizeof(int));                                            \
        return SV_OK;                                                                                    \
    }                                                                                                    \
    sv_status sv_sparse_lu_solve_batch##PUB(const sv_sparse_lu *lu, int W, const T *buf, const T *b, T *x, \
                                            T *work)                                                     \
    {                                                                                                    \
        int li = check_batch(lu, buf, W, "sv_sparse_lu_solve_batch" #PUB);                               \
        if (li < 0) return SV_ERR_ARG;                                                                   \
        if (!b || !x || !work)                                                                           \
            return sv_error(SV_ERR_ARG, "sv_sparse_lu_solve_batch" #PUB ": b, x or work is NULL");       \
        if (lu->kern && lu->kern->solve_batch##KF[li]) {                                                 \
            lu->kern->solve_batch##KF[li](buf, b, x, work);                                              \
            return SV_OK;                                                                                \
        }                                                                                                \
        switch (W) {                                                                                     \
        case 1: solve_batch##BAT##1(lu, buf, b, x, work); break;                                         \
        case 2: solve_batch##BAT##2(lu, buf, b, x, work); break;                                         \
        case 4: solve_batch##BAT##4(lu, buf, b, x, work); break;                                         \
        default: solve_batch##BAT##8(lu, buf, b, x, work); break;                                        \
        }                                                                                                \
        return SV_OK;                                                                                    \
    }

SV_DEFINE_ENTRIES(double, , , _d, _d)
SV_DEFINE_ENTRIES(float, _f32, _f32, _f, _f)

/* Right-hand sides per pass: 8, else 4, else what is left. Eight chains
 * cover a subtraction's latency and, at W = 8 with AVX-512, still keep
 * their partial sums in registers. */
static int multi_group(int left) { return left >= 8 ? 8 : left >= 4 ? 4 : left; }

sv_status sv_sparse_lu_solve_batch_multi(const sv_sparse_lu *lu, int W, int nrhs, const double *buf, const double *b,
                                         double *x, double *work)
{
    int li = check_batch(lu, buf, W, "sv_sparse_lu_solve_batch_multi");
    if (li < 0) return SV_ERR_ARG;
    if (nrhs < 0) return sv_error(SV_ERR_ARG, "sv_sparse_lu_solve_batch_multi: nrhs = %d: expected ≥ 0", nrhs);
    if (nrhs > 0 && (!b || !x || !work))
        return sv_error(SV_ERR_ARG, "sv_sparse_lu_solve_batch_multi: b, x or work is NULL");
    const size_t nw = (size_t)lu->n * W;
    for (int r0 = 0, g; r0 < nrhs; r0 += g) {
        g = multi_group(nrhs - r0);
        const double *bg = b + (size_t)r0 * nw;
        double *xg = x + (size_t)r0 * nw;
        if (g == 1 && lu->kern && lu->kern->solve_batch[li]) {
            lu->kern->solve_batch[li](buf, bg, xg, work); /* alone: straight-line code is faster */
            continue;
        }
        switch (W) {
        case 1: solve_multi_d1(lu, buf, bg, xg, work, nw, g); break;
        case 2: solve_multi_d2(lu, buf, bg, xg, work, nw, g); break;
        case 4: solve_multi_d4(lu, buf, bg, xg, work, nw, g); break;
        default: solve_multi_d8(lu, buf, bg, xg, work, nw, g); break;
        }
    }
    return SV_OK;
}
