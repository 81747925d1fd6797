/* Solvent error-free arithmetic: two-sum and two-product (exact error terms
 * of a rounded sum or product) and double-float numbers — unevaluated sums
 * hi + lo of two floats, about 48 significant bits — with dot products and
 * residuals. Hardware that is fast only in single precision (accelerators)
 * can compute double-accurate residuals this way; the CPU versions here are
 * the reference those back ends are tested against.
 *
 * The error terms are protected against compiler simplification (value
 * barriers), so they survive -O3 and -ffast-math. A self-test at first use
 * compares double-float results with double arithmetic on random vectors;
 * if they disagree (a compiler or FPU that breaks the transforms), the
 * double-float routines compute in double instead and sv_dense_eft_enabled()
 * says so. The transforms assume round-to-nearest and gradual underflow:
 * error terms below the smallest normal float are lost under flush-to-zero. */
#ifndef SOLVENT_EFT_H
#define SOLVENT_EFT_H

#ifdef __cplusplus
extern "C" {
#endif

/* s = fl(a + b), e = (a + b) − s exactly. */
void sv_dense_two_sum_f(float a, float b, float *s, float *e);
void sv_dense_two_sum(double a, double b, double *s, double *e);
/* p = fl(a·b), e = a·b − p exactly (with a fused multiply-add). */
void sv_dense_two_prod_f(float a, float b, float *p, float *e);
void sv_dense_two_prod(double a, double b, double *p, double *e);

/* A double-float number: value hi + lo, |lo| ≤ ulp(hi)/2. */
typedef struct sv_df {
    float hi, lo;
} sv_df;
/* A complex double-float number. */
typedef struct sv_dfc {
    sv_df re, im;
} sv_dfc;

sv_df sv_df_from_double(double x);
double sv_df_to_double(sv_df x);
sv_df sv_df_add(sv_df a, sv_df b);
sv_df sv_df_mul(sv_df a, sv_df b);

/* Σ x_i·y_i in double-float. */
sv_df sv_df_dot(int n, const sv_df *x, const sv_df *y);
/* Σ x_i·y_i (no conjugation) for complex vectors. */
sv_dfc sv_dfc_dot(int n, const sv_dfc *x, const sv_dfc *y);
/* r = b − A·x for a full column-major complex matrix A (n × n, lda) in
 * double-float, x, b, r of length n. */
void sv_dfc_residual(int n, const sv_dfc *a, int lda, const sv_dfc *x, const sv_dfc *b, sv_dfc *r);

/* 1 if the double-float path passed its self-test (run once, at the first
 * call of this or of any double-float routine), 0 if it was disabled. */
int sv_dense_eft_enabled(void);

#ifdef __cplusplus
}
#endif
#endif
