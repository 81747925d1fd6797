/* Internal declarations of the sweep module. */
#ifndef SV_SWEEP_INTERNAL_H
#define SV_SWEEP_INTERNAL_H

#include "solvent/dense.h"
#include "solvent/sweep.h"

struct sv_sweep_model {
    sv_ctx *ctx;
    int n, nterms, nrhs, nout;
    int nb;                  /* block size shared by the packed terms (0 if none) */
    sv_sweep_term *terms;    /* copied descriptors; arrays borrowed */
    double *term_norm;       /* ‖A_k‖∞ */
    sv_sweep_coef_fn coef;
    void *coef_user;
    double *b;               /* n × nrhs */
    double *c;               /* n × nout (points at b when C = B) */
    double *bnorm;           /* ‖b_j‖₂ */
};

/* Y (+)= A·X for real symmetric packed A, real X (n × m). accumulate = 0
 * overwrites Y. Parallel over block columns. */
sv_status sv_sweep_packed_matmul(sv_ctx *ctx, int n, int nb, const double *a, int m, const double *x, int ldx,
                                 double *y, int ldy, int accumulate);
/* ‖A‖∞ of a packed term. */
double sv_sweep_packed_norm_inf(int n, int nb, const double *a);
/* Y += A·X for CSR A (real), real X. */
void sv_sweep_csr_matmul(int n, const int *rowptr, const int *colind, const double *val, int m, const double *x,
                         int ldx, double *y, int ldy);

/* Coefficients c_k(f) for all terms; SV_ERR_NONFINITE if one is not finite. */
sv_status sv_sweep_coefs(const sv_sweep_model *m, double freq, double complex *c);

/* Y = Σ c_k·A_k·X with the given coefficients. */
sv_status sv_sweep_apply_coefs(const sv_sweep_model *m, const double complex *c, int ncols, const double complex *x,
                               int ldx, double complex *y, int ldy);
/* dc_k/df, d²c_k/df² and d³c_k/df³ at freq (central differences of the
 * callback); any output may be NULL. */
sv_status sv_sweep_coef_derivs(const sv_sweep_model *m, double freq, double complex *d1, double complex *d2,
                               double complex *d3);

/* Fill a full column-major n × n complex double matrix with Z(f). */
sv_status sv_sweep_form_full(const sv_sweep_model *m, double freq, double complex *z, int ldz);

/* Normwise backward error of X (max over columns), ∞-norms. */
sv_status sv_sweep_backward_error(const sv_sweep_model *m, double freq, const double complex *x, int ldx,
                                  double *berr);

/* The exact solvers. With nderiv > 0 they also return the derivatives
 * X⁽ᵍ⁾ = d^gX/df^g, g = 1..nderiv (≤ SV_SWEEP_MAX_DERIV), in dx (block g−1
 * at dx + (g−1)·lddx·nrhs), solved with the same factors to about 1e-9
 * (they only orient basis directions). Differentiating Z·X = B g times
 * (Leibniz): Z·X⁽ᵍ⁾ = −Σ_{i=1..g} C(g, i)·Z⁽ⁱ⁾·X⁽ᵍ⁻ⁱ⁾, so Z·X' = −Z'·X,
 * Z·X'' = −(Z''·X + 2·Z'·X'), Z·X''' = −(Z'''·X + 3·Z''·X' + 3·Z'·X''). */
#define SV_SWEEP_MAX_DERIV 3
sv_status sv_sweep_exact_lapack(sv_ctx *ctx, const sv_sweep_model *m, double freq, double complex *x, int ldx,
                                int nderiv, double complex *dx, int lddx, sv_sweep_exact_info *info);
/* tol: refinement target of the mixed path (normwise backward error);
 * 0 = the default 1e-15. */
sv_status sv_sweep_exact_dense(sv_ctx *ctx, const sv_sweep_model *m, double freq, int mixed, double tol,
                               double complex *x, int ldx, int nderiv, double complex *dx, int lddx,
                               sv_sweep_exact_info *info);
/* The right-hand side of derivative `order` (1..SV_SWEEP_MAX_DERIV), from X
 * and the lower derivatives in dx (see above). r: n × nrhs. */
sv_status sv_sweep_deriv_rhs(const sv_sweep_model *m, double freq, int order, const double complex *x, int ldx,
                             const double complex *dx, int lddx, double complex *r, int ldr);

/* Derivative directions are refined to a backward error of 1e-13, at most
 * 3 steps beyond the solution's. They only widen the basis (what the sweep
 * reports is checked by its residual estimate), but their accuracy decides
 * how much a basis direction is worth: inaccurate ones do not deflate and
 * add noise, not information. Exact solves needed at 2042 unknowns for
 * 21/41/201/1001 points with three derivatives: 6/6/7/7 at 1e-9 and at
 * 1e-12, 5/6/7/7 at 1e-13 and at 1e-15; with two derivatives 7/7/8 at 1e-9,
 * 6/6/7/8 at 1e-13. At the low end of a band, where Z is ill-conditioned,
 * a backward error of 5e-11 let a 41-point sweep of a 30 × 30-cell square
 * need 4 exact solves instead of 3. Stopping them 2 steps after the
 * solution instead of 3 saved 18 ms per exact solve at 2042 unknowns but
 * cost an exact solve at 41, 201 and 1001 points. */
#define SWEEP_DERIV_TOL 1e-13
#define SWEEP_DERIV_EXTRA 3

/* Block refinement (refine_block.c) of the solution X of Z(freq)·X = b (b:
 * n × nrhs, ld n) and its nd derivative groups, residuals in double from
 * the products of the terms. products: ts + k·n·ncols ← A_k·xs for every
 * term k (xs n × ncols real, ld n); solve: v ← Z⁻¹·v approximately (the
 * factors), ncols columns, ld ldv. Stops the solution at tol (or when a
 * step gains less than a factor 2; above accept it stops at once and the
 * caller falls back), the derivatives at SWEEP_DERIV_TOL or
 * SWEEP_DERIV_EXTRA steps later, everything after maxit steps. X gets the
 * solution's best iterate, *berr its normwise backward error. */
typedef struct sv_sweep_refine_ops {
    sv_status (*products)(void *user, int ncols, const double *xs, double *ts);
    sv_status (*solve)(void *user, int ncols, double complex *v, int ldv);
    void *user;
} sv_sweep_refine_ops;
sv_status sv_sweep_refine_block(sv_ctx *ctx, const sv_sweep_model *m, double freq, int nd,
                                const sv_sweep_refine_ops *ops, const double complex *b, double complex *x, int ldx,
                                double complex *dx, int lddx, double tol, double accept, int maxit, double *berr,
                                int *its);

/* GMRES-based refinement (gmres.c) of the nrhs columns of X for
 * Z(freq)·X = rhs (rhs n × nrhs, ld n; X ld ldx, the initial guess on entry),
 * right-preconditioned by precond (v ← M⁻¹·v for ncols columns, ld ldv: the
 * single-precision factors), residuals and products in double from the
 * terms. Stops at a normwise backward error ≤ tol (max over columns), after
 * max_steps Krylov steps, or when a restart cycle no longer halves the
 * error; *berr is the final backward error, *steps the steps taken. */
#define SV_SWEEP_GMRES_M 60 /* Krylov vectors per GMRES cycle */
typedef sv_status (*sv_sweep_precond_fn)(void *user, int ncols, double complex *v, int ldv);
sv_status sv_sweep_gmres_refine(sv_ctx *ctx, const sv_sweep_model *m, double freq, sv_sweep_precond_fn precond,
                                void *pre_user, const double complex *rhs, double complex *x, int ldx, double tol,
                                int max_steps, double *berr, int *steps);
/* Bytes an exact solve holds at most beyond the model, for nterms terms
 * (sv_sweep_exact_bytes assumes three). */
size_t sv_sweep_exact_bytes_k(int n, int nterms, int nrhs, int nb, sv_sweep_precision precision);

/* Tests only: after every evaluation of the reduced model, hook receives
 * the basis V (n × q) and the reduced solutions Y (for frequency i at
 * y + i·q·p, q × p; only valid where the result's exact flag is 0). */
typedef void (*sv_sweep_hook)(void *user, const double *V, int n, int q, const double complex *y,
                              const sv_sweep_result *res);
sv_status sv_sweep_run_hooked(sv_ctx *ctx, const sv_sweep_model *m, int nfreq, const double *freq,
                              const sv_sweep_options *opts, sv_sweep_hook hook, void *hook_user,
                              sv_sweep_result **out);

#endif
