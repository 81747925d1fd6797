/* Double-float arithmetic for the device's residual products, written once
 * for both compilers: as plain C it runs on the CPU (the tests and the CPU
 * emulation of the device), as CUDA it is the device kernel's arithmetic
 * (src/gpu/cuda/products.cu includes this file). The same source on both
 * sides is what lets the CPU tests stand for the device code.
 *
 * A double-float number is an unevaluated sum hi + lo of two floats with
 * |lo| ≤ ulp(hi)/2: about 48 significant bits. The building blocks are the
 * error-free transforms
 *   two-sum (Knuth; TAOCP vol. 2, 4.2.2, Theorem B): s = fl(a + b),
 *     e = (a − (s − b')) + (b − b'), b' = s − a, so that s + e = a + b exactly;
 *   two-product with a fused multiply-add: p = fl(a·b), e = fma(a, b, −p);
 * and the double-float sum and product built from them as in
 * Joldes, Muller, Popescu, "Tight and rigorous error bounds for basic
 * building blocks of double-word arithmetic", ACM TOMS 44 (2017),
 * Algorithms 6 (sum, "AccurateDWPlusDW") and 12 (product, "DWTimesDW3").
 * The CPU reference of the same transforms is src/dense/eft.c.
 *
 * SV_GPU_BREAK_EFT (tests only) compiles the transforms as a compiler that
 * simplified (a + b) − a to b would: every error term becomes 0, and the
 * double-float results fall to single precision. The start-up self-test must
 * catch that and disable the path (tests/gpu/test_selftest.c). */
#ifndef SV_GPU_DF_KERNEL_H
#define SV_GPU_DF_KERNEL_H

#include <stddef.h>

#if defined(__CUDACC__)
#define SV_GPU_HD __host__ __device__ __forceinline__
#else
#include <math.h>
#define SV_GPU_HD static inline
#endif

/* the packed layout, callable on the device too */
#if defined(__CUDACC__)
#define SV_LAYOUT_FN SV_GPU_HD
#endif
#include "solvent/dense_layout.h"

typedef struct sv_gpu_df {
    float hi, lo;
} sv_gpu_df;

/* s + e = a + b exactly (round to nearest). */
SV_GPU_HD void sv_gpu_two_sum(float a, float b, float *s, float *e)
{
    float sum = a + b;
#ifdef SV_GPU_BREAK_EFT
    /* what an algebraic simplifier makes of it: b' = (a + b) − a = b, e = 0 */
    *s = sum;
    *e = 0.0f;
    (void)b;
#else
    float bv = sum - a;
    float av = sum - bv;
    *s = sum;
    *e = (a - av) + (b - bv);
#endif
}

/* s + e = a + b exactly, given |a| ≥ |b| (or a = 0). */
SV_GPU_HD void sv_gpu_fast_two_sum(float a, float b, float *s, float *e)
{
    float sum = a + b;
    *s = sum;
#ifdef SV_GPU_BREAK_EFT
    *e = 0.0f;
    (void)b;
#else
    *e = b - (sum - a);
#endif
}

/* p + e = a·b exactly (barring underflow). */
SV_GPU_HD void sv_gpu_two_prod(float a, float b, float *p, float *e)
{
    float prod = a * b;
    *p = prod;
#ifdef SV_GPU_BREAK_EFT
    *e = 0.0f;
#else
    *e = fmaf(a, b, -prod);
#endif
}

SV_GPU_HD sv_gpu_df sv_gpu_df_from_double(double x)
{
    sv_gpu_df r;
    r.hi = (float)x;
    r.lo = (float)(x - (double)r.hi);
    return r;
}

SV_GPU_HD double sv_gpu_df_to_double(sv_gpu_df x)
{
    return (double)x.hi + (double)x.lo;
}

/* Joldes–Muller–Popescu Algorithm 6: relative error ≤ 3u² + 13u³ (u = 2⁻²⁴). */
SV_GPU_HD sv_gpu_df sv_gpu_df_add(sv_gpu_df x, sv_gpu_df y)
{
    float sh, sl, th, tl, c, v, w;
    sv_gpu_two_sum(x.hi, y.hi, &sh, &sl);
    sv_gpu_two_sum(x.lo, y.lo, &th, &tl);
    c = sl + th;
    sv_gpu_fast_two_sum(sh, c, &v, &w);
    w = tl + w;
    sv_gpu_df r;
    sv_gpu_fast_two_sum(v, w, &r.hi, &r.lo);
    return r;
}

/* Joldes–Muller–Popescu Algorithm 12 (with FMA): relative error ≤ 5u². */
SV_GPU_HD sv_gpu_df sv_gpu_df_mul(sv_gpu_df x, sv_gpu_df y)
{
    float ch, cl1, tl0, tl1, cl2, cl3;
    sv_gpu_two_prod(x.hi, y.hi, &ch, &cl1);
    tl0 = x.lo * y.lo;
    tl1 = fmaf(x.hi, y.lo, tl0);
    cl2 = fmaf(x.lo, y.hi, tl1);
    cl3 = cl1 + cl2;
    sv_gpu_df r;
    sv_gpu_fast_two_sum(ch, cl3, &r.hi, &r.lo);
    return r;
}

/* Row i of Y = A·X for one column of X, A real symmetric in packed layout
 * stored as double-float pairs (ahi, alo at the same offsets), x as pairs
 * too; the sum in double-float, returned rounded to double. */
SV_GPU_HD double sv_gpu_df_packed_row(int n, int nb, const float *ahi, const float *alo, const float *xhi,
                                      const float *xlo, int i)
{
    sv_gpu_df acc;
    acc.hi = 0.0f;
    acc.lo = 0.0f;
    for (int j = 0; j < n; j++) {
        size_t o = sv_dense_packed_offset(n, nb, i, j);
        sv_gpu_df a, x;
        a.hi = ahi[o];
        a.lo = alo[o];
        x.hi = xhi[j];
        x.lo = xlo[j];
        acc = sv_gpu_df_add(acc, sv_gpu_df_mul(a, x));
    }
    return sv_gpu_df_to_double(acc);
}

/* Row i of Y = A·X for one column, A in CSR (both triangles) as pairs. */
SV_GPU_HD double sv_gpu_df_csr_row(const int *rowptr, const int *colind, const float *vhi, const float *vlo,
                                   const float *xhi, const float *xlo, int i)
{
    sv_gpu_df acc;
    acc.hi = 0.0f;
    acc.lo = 0.0f;
    for (int e = rowptr[i]; e < rowptr[i + 1]; e++) {
        sv_gpu_df a, x;
        a.hi = vhi[e];
        a.lo = vlo[e];
        x.hi = xhi[colind[e]];
        x.lo = xlo[colind[e]];
        acc = sv_gpu_df_add(acc, sv_gpu_df_mul(a, x));
    }
    return sv_gpu_df_to_double(acc);
}

#endif
