/* Error-free transforms and double-float arithmetic (see solvent/eft.h).
 *
 * Two-sum is Knuth's branch-free algorithm, two-product uses a fused
 * multiply-add, and the double-float addition is the accurate ("IEEE")
 * variant of Hida, Li & Bailey's QD library (Proc. ARITH-15, 2001), with
 * relative error about 2·2⁻⁴⁸. Written here because no packaged library
 * offers double-float arithmetic in C.
 *
 * Every intermediate whose rounding error is the point of the algorithm
 * passes through SV_OPAQUE, an empty asm statement that tells the compiler
 * the value may have changed: it can then neither reassociate (a + b) − a
 * into b nor fold fma(a, b, −a·b) into 0, even under -ffast-math. */
#include <math.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#include "eft_internal.h"
#include "solvent/eft.h"

#if defined(__GNUC__) && (defined(__x86_64__) || (defined(__i386__) && defined(__SSE2__)))
#define SV_OPAQUE(x) __asm__ volatile("" : "+x"(x))
#elif defined(__GNUC__) && defined(__aarch64__)
#define SV_OPAQUE(x) __asm__ volatile("" : "+w"(x))
#else
#define SV_OPAQUE(x)                     \
    do {                                 \
        volatile __typeof__(x) sv_v_ = (x); \
        (x) = sv_v_;                     \
    } while (0)
#endif

/* ---- the transforms ------------------------------------------------------ */
/* Two-sum and two-product in single and in double precision (eft_pair_tmpl.h). */
#define T float
#define FN(x) x##_f
#define FMA fmaf
#include "eft_pair_tmpl.h"
#undef T
#undef FN
#undef FMA

#define T double
#define FN(x) x
#define FMA fma
#include "eft_pair_tmpl.h"
#undef T
#undef FN
#undef FMA

/* |a| ≥ |b| (or a = 0): s = fl(a + b), e exact, three operations. */
static inline void fast_two_sum_f(float a, float b, float *s_out, float *e_out)
{
    float s = a + b;
    SV_OPAQUE(s);
    float bv = s - a;
    SV_OPAQUE(bv);
    *s_out = s;
    *e_out = b - bv;
}

/* ---- double-float arithmetic ------------------------------------------- */
sv_df sv_df_from_double(double x)
{
    sv_df r;
    r.hi = (float)x;
    r.lo = (float)(x - (double)r.hi);
    return r;
}

double sv_df_to_double(sv_df x) { return (double)x.hi + (double)x.lo; }

static sv_df df_add(sv_df a, sv_df b)
{
    float s1, s2, t1, t2;
    sv_dense_two_sum_f(a.hi, b.hi, &s1, &s2);
    sv_dense_two_sum_f(a.lo, b.lo, &t1, &t2);
    s2 += t1;
    fast_two_sum_f(s1, s2, &s1, &s2);
    s2 += t2;
    sv_df r;
    fast_two_sum_f(s1, s2, &r.hi, &r.lo);
    return r;
}

static sv_df df_mul(sv_df a, sv_df b)
{
    float p, e;
    sv_dense_two_prod_f(a.hi, b.hi, &p, &e);
    e += a.hi * b.lo + a.lo * b.hi;
    sv_df r;
    fast_two_sum_f(p, e, &r.hi, &r.lo);
    return r;
}

static sv_df df_neg(sv_df a)
{
    a.hi = -a.hi;
    a.lo = -a.lo;
    return a;
}

/* ---- self-test ------------------------------------------------------------ */
/* A small local generator: the test is deterministic and touches no state. */
static double lcg_uniform(uint64_t *s)
{
    *s = *s * 6364136223846793005ULL + 1442695040888963407ULL;
    return (double)(*s >> 11) * 0x1.0p-53 * 2.0 - 1.0;
}

static sv_df dot_df_raw(int n, const sv_df *x, const sv_df *y)
{
    sv_df acc = {0.0f, 0.0f};
    for (int i = 0; i < n; i++) acc = df_add(acc, df_mul(x[i], y[i]));
    return acc;
}

int sv_dense_eft_check(sv_eft_pair_fn two_sum, sv_eft_pair_fn two_prod)
{
    uint64_t seed = 0x5eed5eedULL;
    /* Transforms: exact against double arithmetic, where sums and products
     * of floats within 2^±10 of each other are exact. */
    for (int k = 0; k < 512; k++) {
        float a = (float)(lcg_uniform(&seed) * ldexp(1.0, (int)(lcg_uniform(&seed) * 10)));
        float b = (float)(lcg_uniform(&seed) * ldexp(1.0, (int)(lcg_uniform(&seed) * 10)));
        float s, e;
        two_sum(a, b, &s, &e);
        if ((double)s + (double)e != (double)a + (double)b || s != a + b) return 0;
        two_prod(a, b, &s, &e);
        if ((double)s + (double)e != (double)a * (double)b) return 0;
    }
    /* Dot products of random double-float vectors against double. */
    enum { N = 256 };
    sv_df x[N], y[N];
    for (int rep = 0; rep < 4; rep++) {
        double ref = 0, mag = 0;
        for (int i = 0; i < N; i++) {
            x[i] = sv_df_from_double(lcg_uniform(&seed));
            y[i] = sv_df_from_double(lcg_uniform(&seed) * 1e3);
            double p = sv_df_to_double(x[i]) * sv_df_to_double(y[i]);
            ref += p;
            mag += fabs(p);
        }
        double got = sv_df_to_double(dot_df_raw(N, x, y));
        if (!(fabs(got - ref) <= 1e-12 * mag)) return 0;
    }
    return 1;
}

/* −1 untested, 0 disabled, 1 enabled. The only state here: the result of a
 * deterministic test, written once (a race just runs the test twice). */
static atomic_int eft_state = -1;

void sv_dense_eft_force_state(int state) { atomic_store(&eft_state, state); }

int sv_dense_eft_enabled(void)
{
    int s = atomic_load(&eft_state);
    if (s < 0) {
        s = sv_dense_eft_check(sv_dense_two_sum_f, sv_dense_two_prod_f);
        atomic_store(&eft_state, s);
    }
    return s;
}

/* ---- public double-float routines ------------------------------------------ */
sv_df sv_df_add(sv_df a, sv_df b)
{
    if (!sv_dense_eft_enabled()) return sv_df_from_double(sv_df_to_double(a) + sv_df_to_double(b));
    return df_add(a, b);
}

sv_df sv_df_mul(sv_df a, sv_df b)
{
    if (!sv_dense_eft_enabled()) return sv_df_from_double(sv_df_to_double(a) * sv_df_to_double(b));
    return df_mul(a, b);
}

sv_df sv_df_dot(int n, const sv_df *x, const sv_df *y)
{
    if (n <= 0 || !x || !y) return (sv_df){0.0f, 0.0f};
    if (!sv_dense_eft_enabled()) {
        double acc = 0;
        for (int i = 0; i < n; i++) acc += sv_df_to_double(x[i]) * sv_df_to_double(y[i]);
        return sv_df_from_double(acc);
    }
    return dot_df_raw(n, x, y);
}

/* acc += x·y (complex, double-float). */
static void dfc_fma(sv_dfc *acc, sv_dfc x, sv_dfc y, int subtract)
{
    sv_df rr = df_mul(x.re, y.re), ii = df_mul(x.im, y.im), ri = df_mul(x.re, y.im), ir = df_mul(x.im, y.re);
    if (subtract) {
        acc->re = df_add(df_add(acc->re, df_neg(rr)), ii);
        acc->im = df_add(df_add(acc->im, df_neg(ri)), df_neg(ir));
    } else {
        acc->re = df_add(df_add(acc->re, rr), df_neg(ii));
        acc->im = df_add(df_add(acc->im, ri), ir);
    }
}

sv_dfc sv_dfc_dot(int n, const sv_dfc *x, const sv_dfc *y)
{
    sv_dfc acc = {{0.0f, 0.0f}, {0.0f, 0.0f}};
    if (n <= 0 || !x || !y) return acc;
    if (!sv_dense_eft_enabled()) {
        double re = 0, im = 0;
        for (int i = 0; i < n; i++) {
            double xr = sv_df_to_double(x[i].re), xi = sv_df_to_double(x[i].im);
            double yr = sv_df_to_double(y[i].re), yi = sv_df_to_double(y[i].im);
            re += xr * yr - xi * yi;
            im += xr * yi + xi * yr;
        }
        acc.re = sv_df_from_double(re);
        acc.im = sv_df_from_double(im);
        return acc;
    }
    for (int i = 0; i < n; i++) dfc_fma(&acc, x[i], y[i], 0);
    return acc;
}

void sv_dfc_residual(int n, const sv_dfc *a, int lda, const sv_dfc *x, const sv_dfc *b, sv_dfc *r)
{
    if (n <= 0 || !a || !x || !b || !r || lda < n) return;
    for (int i = 0; i < n; i++) r[i] = b[i];
    if (!sv_dense_eft_enabled()) {
        for (int i = 0; i < n; i++) {
            double re = sv_df_to_double(b[i].re), im = sv_df_to_double(b[i].im);
            for (int j = 0; j < n; j++) {
                sv_dfc aij = a[(size_t)j * lda + i];
                double ar = sv_df_to_double(aij.re), ai = sv_df_to_double(aij.im);
                double xr = sv_df_to_double(x[j].re), xi = sv_df_to_double(x[j].im);
                re -= ar * xr - ai * xi;
                im -= ar * xi + ai * xr;
            }
            r[i].re = sv_df_from_double(re);
            r[i].im = sv_df_from_double(im);
        }
        return;
    }
    for (int j = 0; j < n; j++)
        for (int i = 0; i < n; i++) dfc_fma(&r[i], a[(size_t)j * lda + i], x[j], 1);
}
