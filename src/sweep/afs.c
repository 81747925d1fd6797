/* Adaptive frequency sampling.
 *
 * V (n × q, real, orthonormal) spans the real and imaginary parts of the
 * exact solutions found so far. With W_k = A_k·V the reduced model is
 * A_k,r = Vᵀ·W_k, B_r = Vᵀ·B, C_r = Vᵀ·C; since V is real, Z_r(f) =
 * Σ c_k(f)·A_k,r is complex symmetric like Z and keeps the sign structure
 * of every term (a positive semidefinite A_k stays so), which is what keeps
 * the reduced outputs reciprocal and passive.
 *
 * Residual estimate. For column j the true residual of the reduced solution
 * y_j is r_j = Σ_k c_k·W_k·y_j − b_j = M·z_j with M = [B W_1 … W_K] and
 * z_j = [−e_j; c_1·y_j; …; c_K·y_j] (any order of the columns will do, as
 * long as z follows it). With the thin QR factorisation M = Q·R,
 * ‖r_j‖ = ‖R·z_j‖: O((Kq + p)²) per column and frequency, independent of n.
 * R is the Cholesky factor of the Gram matrix MᵀM, but forming it by QR
 * rather than from MᵀM keeps the estimate accurate down to about machine
 * precision times the size of the individual terms, instead of its square
 * root (the terms cancel strongly near resonances and at low frequency).
 *
 * Low-rank terms A_k = U·W_k·Uᵀ sharing one U (a group) never store A_k·V:
 * the sweep keeps UᵀV (rank × q) and G_k = W_k·UᵀV, so A_k,r = (UᵀV)ᵀ·G_k,
 * and since every A_k·V of the group lies in span(U), M takes U's columns
 * once, with z's entries Σ_k c_k·G_k·y_j for them: M has p + Σ rank + K'·q
 * columns (K' the other terms) instead of p + K·q. */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <omp.h>
#include <cblas.h>
#include <lapacke.h>

#include "sweep_internal.h"

void sv_sweep_options_default(sv_sweep_options *o)
{
    memset(o, 0, sizeof(*o));
    o->tolerance = 1e-4;
    o->max_exact = 30;
    o->initial = 3;
    o->precision = SV_SWEEP_MIXED;
    o->deflation = 1e-10;
    o->refine_tolerance = 1e-15;
    o->derivatives = 3;
}

static void fill_defaults(const sv_sweep_options *in, sv_sweep_options *o)
{
    sv_sweep_options_default(o);
    if (!in) return;
    *o = *in;
    if (o->tolerance == 0) o->tolerance = 1e-4;
    if (o->max_exact == 0) o->max_exact = 30;
    if (o->initial == 0) o->initial = 3;
    if (o->deflation == 0) o->deflation = 1e-10;
    if (o->refine_tolerance == 0) o->refine_tolerance = 1e-15;
    if (o->derivatives == 0) o->derivatives = 3;
}

static sv_status check_options(const sv_sweep_options *o)
{
    if (!(o->tolerance > 0 && o->tolerance <= SV_SWEEP_TOLERANCE_MAX))
        return sv_error(SV_ERR_ARG, "tolerance = %g: expected a value > 0 and <= %g", o->tolerance,
                        SV_SWEEP_TOLERANCE_MAX);
    if (o->max_exact < 1) return sv_error(SV_ERR_ARG, "max_exact = %d: expected >= 1", o->max_exact);
    if (o->initial < 1) return sv_error(SV_ERR_ARG, "initial = %d: expected >= 1", o->initial);
    if (!(o->deflation > 0 && o->deflation < 1))
        return sv_error(SV_ERR_ARG, "deflation = %g: expected 0 < deflation < 1", o->deflation);
    if (o->derivatives < -1 || o->derivatives > SV_SWEEP_MAX_DERIV)
        return sv_error(SV_ERR_ARG, "derivatives = %d: expected -1 (none), 0 (default), or 1 to %d", o->derivatives,
                        SV_SWEEP_MAX_DERIV);
    if (!(o->refine_tolerance > 0 && o->refine_tolerance < 1e-6))
        return sv_error(SV_ERR_ARG, "refine_tolerance = %g: expected 0 < refine_tolerance < 1e-6", o->refine_tolerance);
    if (o->precision != SV_SWEEP_MIXED && o->precision != SV_SWEEP_DOUBLE && o->precision != SV_SWEEP_LAPACK)
        return sv_error(SV_ERR_ARG, "precision = %d: expected SV_SWEEP_MIXED, _DOUBLE or _LAPACK", (int)o->precision);
    return SV_OK;
}

static int qmax_for(int n, int nrhs, int cap, int nderiv)
{
    long q = 2L * (1 + nderiv) * nrhs * cap;
    return q > n ? n : (int)q;
}

size_t sv_sweep_estimate_bytes(int n, int nterms, int nrhs, int nout, int nb, int nfreq,
                               const sv_sweep_options *opts)
{
    sv_sweep_shape shape = {.nterms = nterms};
    return sv_sweep_estimate_bytes_shape(n, &shape, nrhs, nout, nb, nfreq, opts);
}

size_t sv_sweep_estimate_bytes_shape(int n, const sv_sweep_shape *shape, int nrhs, int nout, int nb, int nfreq,
                                     const sv_sweep_options *opts)
{
    sv_sweep_options o;
    fill_defaults(opts, &o);
    if (!shape) return 0;
    int nterms = shape->nterms;
    if (n < 1 || nterms < 1 || nrhs < 1 || nout < 1 || nfreq < 1) return 0;
    int cap = o.max_exact < nfreq ? o.max_exact : nfreq;
    int nderiv = o.exact_all || o.derivatives < 0 ? 0 : o.derivatives;
    size_t q = o.exact_all ? 0 : (size_t)qmax_for(n, nrhs, cap, nderiv);
    size_t K = (size_t)nterms, N = (size_t)n, P = (size_t)nrhs;
    size_t Kw = K - (size_t)shape->lowrank, R = (size_t)shape->lowrank_cols;
    size_t RG = (size_t)shape->lowrank * R; /* G_k: each low-rank term's rank (at most R) */
    size_t cols = Kw * q + P + R;
    size_t bytes = 0;
    bytes += N * q * 8;                         /* V */
    bytes += Kw * N * q * 8;                    /* W_k */
    bytes += (R + RG) * q * 8;                  /* UᵀV, G_k */
    bytes += q ? N * cols * 8 : 0;              /* QR workspace */
    bytes += cols * 16 + K * q * q * 8;         /* QR scalars and column map, reduced terms */
    bytes += q * (P + (size_t)nout) * 8;        /* B_r, C_r */
    bytes += (size_t)nfreq * ((size_t)nout * P * 16 + K * 16 + 32); /* per frequency */
    bytes += (size_t)(1 + nderiv) * N * P * 16; /* the exact solution and its derivatives */
    /* product workspaces: per-thread accumulators of A_k times at most
     * 2(1 + nderiv)·p real columns, and the real/imaginary split */
    size_t wcols = 2 * (size_t)(1 + nderiv) * P;
    bytes += ((size_t)sv_threads_team() + 2) * N * wcols * 8;
    bytes += N * P * 8 * 2;                     /* the model's B (and C) */
    bytes += sv_sweep_exact_bytes_shape(n, shape, nrhs, nb, o.precision);
    return bytes;
}

/* ---- the sweep's working state ------------------------------------------------ */
typedef struct afs {
    sv_ctx *ctx;
    const sv_sweep_model *m;
    sv_sweep_options o;
    double progress;   /* the sweep's fraction reported so far */
    double solves_left; /* exact solves still expected (plan_from_rate), ≥ 1 */
    int n, K, p, nout, qmax, q, nf;
    int qcap;          /* basis columns V, W_k and M have room for (grown on demand up to qmax) */
    double *V, *W, *M, *tau, *Ar, *Br, *Cr;
    int *colk, *colr;  /* column c of M is A_{colk[c]}·v_{colr[c]}, column colr[c] of B when
                          colk[c] = −1, column colr[c] of group g's U when colk[c] = −2 − g */
    int Kw;            /* terms whose products W_k = A_k·V are stored (not low-rank) */
    int *wslot;        /* K: term k's block of W, −1 for a low-rank term */
    int R;             /* rows of UV: the groups' ranks summed */
    int *uvrow;        /* ngroups: group g's first row in UV (its block: rank × qcap) */
    int *grow;         /* K: low-rank term k's first row in G (its block: rank × qcap) */
    int RG;            /* rows of G */
    double *UV, *G;    /* UᵀV of every group; G_k = W_k·UᵀV of every low-rank term */
    int mcols, mrows;  /* columns of M factorised so far; rows of R (min(n, mcols)) */
    int mq;            /* basis columns already in M */
    double complex *coef; /* nf × K */
    double complex *x;    /* n × p */
    double complex *dx;   /* nderiv blocks n × p: derivative directions */
    int nderiv;
    sv_sweep_result *res;
    sv_sweep_hook hook;
    void *hook_user;
    double complex *hook_y; /* nf × q × p reduced solutions, only with a hook */
    sv_sweep_solver *solver; /* the exact solver: the caller's or own */
    sv_sweep_solver *own;    /* the built-in one, when the caller gave none */
} afs;

/* Group g's U and rank (those of its first term). */
static const sv_sweep_term *group_lead(const afs *s, int g)
{
    return &s->m->terms[s->m->group_terms[s->m->group_first[g]]];
}
static int group_rank(const afs *s, int g) { return group_lead(s, g)->rank; }

/* The caller's exact solver (for this model), or the built-in one. */
static sv_status exact_solver(afs *s)
{
    if (s->o.solver) {
        if (sv_sweep_solver_model(s->o.solver) != s->m)
            return sv_error(SV_ERR_ARG, "options.solver was set up for another model");
        s->solver = s->o.solver;
        return SV_OK;
    }
    sv_status st = sv_sweep_solver_create_builtin(s->ctx, s->m, s->o.precision, s->o.refine_tolerance, &s->own);
    s->solver = s->own;
    return st;
}

static sv_status alloc_all(afs *s)
{
    size_t N = (size_t)s->n, q = (size_t)s->qmax, K = (size_t)s->K, P = (size_t)s->p;
    sv_ctx *ctx = s->ctx;
    s->x = sv_alloc(ctx, N * P * sizeof(double complex), "exact solution");
    s->coef = sv_alloc(ctx, (size_t)s->nf * K * sizeof(double complex), "sweep coefficients");
    if (!s->x || !s->coef) return sv_last_status();
    if (s->nderiv) {
        s->dx = sv_alloc(ctx, (size_t)s->nderiv * N * P * sizeof(double complex), "derivative directions");
        if (!s->dx) return sv_last_status();
    }
    if (s->o.exact_all) return SV_OK;
    if (s->hook) {
        s->hook_y = sv_alloc(ctx, (size_t)s->nf * q * P * sizeof(double complex), "reduced solutions for the hook");
        if (!s->hook_y) return sv_last_status();
    }
    size_t mc = (size_t)s->Kw * q + P + (size_t)s->R;
    s->tau = sv_alloc(ctx, mc * sizeof(double), "residual estimate QR scalars");
    s->colk = sv_alloc(ctx, mc * sizeof(int), "residual estimate column map");
    s->colr = sv_alloc(ctx, mc * sizeof(int), "residual estimate column map");
    s->Br = sv_alloc(ctx, q * P * sizeof(double), "reduced right-hand sides");
    s->Cr = sv_alloc(ctx, q * (size_t)s->nout * sizeof(double), "reduced outputs");
    if (!s->tau || !s->colk || !s->colr || !s->Br || !s->Cr) return sv_last_status();
    return SV_OK;
}

/* Room for `need` basis columns in V, the products W_k = A_k·V (UᵀV and G_k
 * for low-rank terms), the estimator's M and the reduced terms A_k,r. These
 * are the sweep's large arrays (n × q each, K + 2 of them); the worst case qmax (the cap on exact solves times the 2·p·(1 +
 * nderiv) columns each can add) is what the memory estimate reserves, but a
 * sweep uses a fraction of it (about 100 of 480 columns on the 11402-unknown
 * square), so they grow by doubling, keeping their contents. */
static sv_status reserve_basis(afs *s, int need)
{
    if (need > s->qmax) need = s->qmax;
    if (need <= s->qcap) return SV_OK;
    int cap = s->qcap ? 2 * s->qcap : need;
    if (cap < need) cap = need;
    if (cap > s->qmax) cap = s->qmax;
    size_t N = (size_t)s->n, K = (size_t)s->Kw, P = (size_t)s->p, C = (size_t)cap, Q = (size_t)s->q;
    size_t R = (size_t)s->R, RG = (size_t)s->RG, old = (size_t)s->qcap;
    sv_ctx *ctx = s->ctx;
    double *V = sv_alloc(ctx, N * C * sizeof(double), "reduced basis V");
    double *W = V ? sv_alloc(ctx, (K * N + R + RG) * C * sizeof(double), "products A_k V") : NULL;
    double *M = W ? sv_alloc(ctx, N * (K * C + P + R) * sizeof(double), "residual estimate QR factors") : NULL;
    double *Ar = M ? sv_alloc(ctx, (size_t)s->K * C * C * sizeof(double), "reduced terms") : NULL;
    if (!Ar) {
        sv_status st = sv_last_status();
        sv_free(ctx, V);
        sv_free(ctx, W);
        sv_free(ctx, M);
        return st;
    }
    for (size_t k = 0; k < (size_t)s->K; k++) /* the q × q reduced terms, ld the capacity */
        for (size_t c = 0; c < Q; c++) memcpy(Ar + (k * C + c) * C, s->Ar + (k * old + c) * old, Q * sizeof(double));
    if (Q) {
        memcpy(V, s->V, N * Q * sizeof(double));
        for (size_t k = 0; k < K; k++) memcpy(W + k * N * C, s->W + k * N * old, N * Q * sizeof(double));
        /* UV and G: blocks of r rows (ld r) at row offsets times the capacity */
        for (int g = 0; g < s->m->ngroups; g++)
            memcpy(W + K * N * C + (size_t)s->uvrow[g] * C, s->UV + (size_t)s->uvrow[g] * old,
                   (size_t)group_rank(s, g) * Q * sizeof(double));
        for (int k = 0; k < s->K; k++)
            if (s->wslot[k] < 0)
                memcpy(W + (K * N + R) * C + (size_t)s->grow[k] * C, s->G + (size_t)s->grow[k] * old,
                       (size_t)s->m->terms[k].rank * Q * sizeof(double));
    }
    if (s->mcols) memcpy(M, s->M, N * (size_t)s->mcols * sizeof(double));
    sv_free(ctx, s->V);
    sv_free(ctx, s->W);
    sv_free(ctx, s->M);
    sv_free(ctx, s->Ar);
    s->Ar = Ar;
    s->V = V;
    s->W = W;
    s->UV = W + K * N * C;
    s->G = s->UV + R * C;
    s->M = M;
    s->qcap = cap;
    return SV_OK;
}

/* Column r of W_k = A_k·V (k not low-rank). */
static double *Wcol(const afs *s, int k, int r)
{
    return s->W + ((size_t)s->wslot[k] * (size_t)s->qcap + (size_t)r) * (size_t)s->n;
}

/* Group g's UᵀV, and low-rank term k's G_k = W_k·UᵀV: column r of each. */
static double *UVcol(const afs *s, int g, int r)
{
    return s->UV + (size_t)s->uvrow[g] * s->qcap + (size_t)r * group_rank(s, g);
}
static double *Gcol(const afs *s, int k, int r)
{
    return s->G + (size_t)s->grow[k] * s->qcap + (size_t)r * s->m->terms[k].rank;
}

static void free_all(afs *s)
{
    void *const owned[] = {s->x,    s->dx,   s->coef,  s->V,  s->W,  s->M,  s->tau,
                           s->colk, s->colr, s->wslot, s->Ar, s->Br, s->Cr, s->hook_y};
    sv_free_each(s->ctx, owned, SV_COUNT(owned));
    sv_sweep_solver_destroy(s->own);
}

void sv_sweep_result_destroy(sv_sweep_result *r)
{
    if (!r) return;
    void *const owned[] = {r->freq, r->h, r->exact, r->fallback, r->residual, r};
    sv_free_each(r->ctx, owned, SV_COUNT(owned));
}

static sv_status result_create(sv_ctx *ctx, int nf, int nout, int p, const double *freq, sv_sweep_result **out)
{
    sv_sweep_result *r = sv_calloc(ctx, 1, sizeof(*r), "sweep result");
    if (!r) return sv_last_status();
    r->ctx = ctx;
    r->nfreq = nf;
    r->nout = nout;
    r->nrhs = p;
    r->freq = sv_alloc(ctx, sizeof(double) * (size_t)nf, "sweep result frequencies");
    size_t nh = 0;
    if (sv_size_mul((size_t)nf, (size_t)nout, &nh) == SV_OK && sv_size_mul(nh, (size_t)p, &nh) == SV_OK)
        r->h = sv_calloc(ctx, nh, sizeof(double complex), "sweep result outputs");
    r->exact = sv_calloc(ctx, (size_t)nf, 1, "sweep result flags");
    r->fallback = sv_calloc(ctx, (size_t)nf, 1, "sweep result flags");
    r->residual = sv_calloc(ctx, (size_t)nf, sizeof(double), "sweep result residuals");
    if (!r->freq || !r->h || !r->exact || !r->fallback || !r->residual) {
        sv_status st = sv_last_status();
        sv_sweep_result_destroy(r);
        return st;
    }
    memcpy(r->freq, freq, sizeof(double) * (size_t)nf);
    *out = r;
    return SV_OK;
}

/* ---- exact solves -------------------------------------------------------------- */
/* H(f_i) = Cᵀ·X from the exact solution. */
static void exact_outputs(afs *s, int i)
{
    double complex *h = s->res->h + (size_t)i * (size_t)s->nout * (size_t)s->p;
    for (int j = 0; j < s->p; j++)
        for (int a = 0; a < s->nout; a++) {
            double complex acc = 0;
            const double *ca = s->m->c + (size_t)a * s->n;
            const double complex *xj = s->x + (size_t)j * s->n;
            for (int r = 0; r < s->n; r++) acc += ca[r] * xj[r];
            h[(size_t)j * s->nout + a] = acc;
        }
}

/* What the result says about the exact solve at f_i. */
static void exact_record(afs *s, int i, const sv_sweep_exact_info *info)
{
    s->res->exact[i] = 1;
    s->res->fallback[i] = (unsigned char)(info->fell_back != 0);
    s->res->residual[i] = info->backward_error;
    s->res->n_exact++;
    if (info->gmres_steps > 0 && !info->fell_back) {
        s->res->n_gmres++;
        sv_log(s->ctx, SV_LOG_INFO, "f = %g: classical refinement stalled, GMRES refinement took %d steps",
               s->res->freq[i], info->gmres_steps);
    }
    if (info->fell_back) {
        s->res->n_fallback++;
        sv_log(s->ctx, SV_LOG_INFO, "f = %g: mixed-precision refinement failed, solved in double instead",
               s->res->freq[i]);
    }
}

static sv_status solve_exact_at(afs *s, int i)
{
    sv_sweep_exact_info info;
    double t0 = sv_time_now();
    sv_status st = sv_sweep_solver_solve(s->solver, s->ctx, s->res->freq[i], s->x, s->n, s->nderiv, s->dx, s->n, &info);
    s->res->seconds_exact += sv_time_now() - t0;
    if (st) return st;
    for (size_t e = 0; e < (size_t)s->n * (size_t)s->p; e++)
        if (!isfinite(creal(s->x[e])) || !isfinite(cimag(s->x[e])))
            return sv_error(SV_ERR_NONFINITE, "the exact solution at f = %g is not finite", s->res->freq[i]);
    exact_outputs(s, i);
    exact_record(s, i, &info);
    return SV_OK;
}

/* ---- the basis -------------------------------------------------------------------- */
/* Append the exact solution s->x (and its derivatives) to V, then extend
 * W_k, A_k,r, B_r, C_r by the new columns. */
static sv_status orthonormalise_new(afs *s);
static sv_status project_new(afs *s, int q0);
static void extend_lowrank(afs *s, int q0);
/* The products A_k·V_new read every term once (8·N² bytes for two packed
 * terms) and run on the caller's threads; the Gram–Schmidt steps and the
 * small products of the projection run on one (see sv_threads_serial_begin). */
static sv_status extend_basis(afs *s)
{
    int q0 = s->q;
    sv_status st = reserve_basis(s, q0 + 2 * s->p * (1 + s->nderiv));
    if (st) return st;
    sv_threads_saved ss = sv_threads_serial_begin();
    st = orthonormalise_new(s);
    sv_threads_restore(ss);
    int n = s->n, dq = s->q - q0;
    for (int k = 0; k < s->K && !st && dq > 0; k++) {
        if (s->wslot[k] >= 0) st = sv_sweep_model_apply_term(s->m, k, dq, s->V + (size_t)q0 * n, n, Wcol(s, k, q0), n);
        if (!st) st = sv_progress(s->ctx, "reduced model", (k + 1.0) / (s->K + 1.0));
    }
    if (st || dq == 0) return st;
    extend_lowrank(s, q0);
    ss = sv_threads_serial_begin();
    st = project_new(s, q0);
    sv_threads_restore(ss);
    return st;
}

/* Append the real and imaginary parts of the exact solution and its
 * derivatives to V, orthonormalised (classical Gram–Schmidt applied twice)
 * and deflated. */
static sv_status orthonormalise_new(afs *s)
{
    int n = s->n;
    double *tmp = sv_alloc(s->ctx, sizeof(double) * (size_t)(s->qmax > 1 ? s->qmax : 1), "Gram-Schmidt coefficients");
    if (!tmp) return sv_last_status();
    for (int set = 0; set <= s->nderiv; set++)
        for (int j = 0; j < s->p && s->q < s->qmax; j++) {
            /* Deflation is relative to the whole complex column: a part that
             * is only rounding noise of the other (the real part of a
             * lossless model's solution) must not enter the basis. */
            const double complex *xj =
                set ? s->dx + ((size_t)(set - 1) * s->p + (size_t)j) * n : s->x + (size_t)j * n;
            double nrm0 = 0.0;
            for (int r = 0; r < n; r++) nrm0 += creal(xj[r]) * creal(xj[r]) + cimag(xj[r]) * cimag(xj[r]);
            nrm0 = sqrt(nrm0);
            if (!(nrm0 > 0.0) || !isfinite(nrm0)) continue;
            for (int part = 0; part < 2 && s->q < s->qmax; part++) {
                double *v = s->V + (size_t)s->q * n;
                for (int r = 0; r < n; r++) v[r] = part ? cimag(xj[r]) : creal(xj[r]);
                for (int pass = 0; pass < 2 && s->q > 0; pass++) {
                    cblas_dgemv(CblasColMajor, CblasTrans, n, s->q, 1.0, s->V, n, v, 1, 0.0, tmp, 1);
                    cblas_dgemv(CblasColMajor, CblasNoTrans, n, s->q, -1.0, s->V, n, tmp, 1, 1.0, v, 1);
                }
                double nrm = cblas_dnrm2(n, v, 1);
                if (!(nrm > s->o.deflation * nrm0)) continue; /* already spanned: deflate */
                cblas_dscal(n, 1.0 / nrm, v, 1);
                s->q++;
            }
        }
    sv_free(s->ctx, tmp);
    return SV_OK;
}

/* UᵀV and G_k = W_k·UᵀV for the basis columns q0..q (the low-rank terms'
 * share of the projection: O(n·rank) per column). */
static void extend_lowrank(afs *s, int q0)
{
    int n = s->n, dq = s->q - q0;
    for (int g = 0; g < s->m->ngroups; g++) {
        const sv_sweep_term *t = group_lead(s, g);
        cblas_dgemm(CblasColMajor, CblasTrans, CblasNoTrans, t->rank, dq, n, 1.0, t->u, n, s->V + (size_t)q0 * n, n,
                    0.0, UVcol(s, g, q0), t->rank);
    }
    for (int k = 0; k < s->K; k++) {
        if (s->wslot[k] >= 0) continue;
        const sv_sweep_term *t = &s->m->terms[k];
        cblas_dsymm(CblasColMajor, CblasLeft, CblasLower, t->rank, dq, 1.0, t->core, t->rank,
                    UVcol(s, s->m->term_group[k], q0), t->rank, 0.0, Gcol(s, k, q0), t->rank);
    }
}

/* Extend A_k,r, B_r and C_r by the basis columns q0..q (W_k holds A_k·V;
 * for a low-rank term A_k,r = (UᵀV)ᵀ·G_k). */
static sv_status project_new(afs *s, int q0)
{
    int n = s->n, dq = s->q - q0;
    const sv_sweep_model *m = s->m;
    int q = s->q, qm = s->qmax, qc = s->qcap;
    for (int k = 0; k < s->K; k++) {
        /* A_k,r(:, q0:q) = Vᵀ·W_k(:, q0:q), mirrored into the new rows. */
        double *Ak = s->Ar + (size_t)k * qc * qc;
        if (s->wslot[k] >= 0) {
            cblas_dgemm(CblasColMajor, CblasTrans, CblasNoTrans, q, dq, n, 1.0, s->V, n, Wcol(s, k, q0), n, 0.0,
                        Ak + (size_t)q0 * qc, qc);
        } else {
            int r = m->terms[k].rank;
            cblas_dgemm(CblasColMajor, CblasTrans, CblasNoTrans, q, dq, r, 1.0, UVcol(s, m->term_group[k], 0), r,
                        Gcol(s, k, q0), r, 0.0, Ak + (size_t)q0 * qc, qc);
        }
        for (int c = q0; c < q; c++) {
            for (int r = 0; r < q0; r++) Ak[(size_t)r * qc + c] = Ak[(size_t)c * qc + r];
            for (int r = c + 1; r < q; r++) { /* symmetrise the new diagonal block */
                double avg = 0.5 * (Ak[(size_t)c * qc + r] + Ak[(size_t)r * qc + c]);
                Ak[(size_t)c * qc + r] = Ak[(size_t)r * qc + c] = avg;
            }
        }
    }
    /* B_r and C_r: rows q0..q (column-major with leading dimension qmax). */
    cblas_dgemm(CblasColMajor, CblasTrans, CblasNoTrans, dq, s->p, n, 1.0, s->V + (size_t)q0 * n, n, m->b, n, 0.0,
                s->Br + q0, qm);
    cblas_dgemm(CblasColMajor, CblasTrans, CblasNoTrans, dq, s->nout, n, 1.0, s->V + (size_t)q0 * n, n, m->c, n, 0.0,
                s->Cr + q0, qm);
    return SV_OK;
}

/* The thin QR factorisation M = Q·R of M = [B W_1 … W_K], kept up to date as
 * the basis grows: the columns A_k·v of new basis vectors are appended at the
 * end (the order of M's columns is free as long as the residual vector z
 * follows it: colk/colr), the Householder reflectors found so far are
 * applied to them (dormqr) and only their part below the rows already
 * triangularised is factorised (dgeqrf). Refactorising all of M after every
 * exact solve cost O(n·(Kq)²) each time, 40 % of the reduced-model time at
 * 2042 unknowns; the update costs O(n·Kq·K·Δq). R is the upper triangle of
 * M's first mrows rows. */
static sv_status factor_estimator_serial(afs *s);
static sv_status factor_estimator(afs *s)
{
    sv_threads_saved ss = sv_threads_serial_begin();
    sv_status st = factor_estimator_serial(s);
    sv_threads_restore(ss);
    return st;
}

static sv_status factor_estimator_serial(afs *s)
{
    int n = s->n, q = s->q, K = s->K, p = s->p;
    int c0 = s->mcols, c = c0;
    if (c0 == 0) {
        for (int j = 0; j < p; j++, c++) {
            memcpy(s->M + (size_t)c * n, s->m->b + (size_t)j * n, sizeof(double) * (size_t)n);
            s->colk[c] = -1;
            s->colr[c] = j;
        }
        for (int g = 0; g < s->m->ngroups; g++) /* span(U) holds every A_k·V of the group */
            for (int a = 0; a < group_rank(s, g); a++, c++) {
                memcpy(s->M + (size_t)c * n, group_lead(s, g)->u + (size_t)a * n, sizeof(double) * (size_t)n);
                s->colk[c] = -2 - g;
                s->colr[c] = a;
            }
    }
    for (int k = 0; k < K; k++)
        for (int r = s->mq; r < q && s->wslot[k] >= 0; r++, c++) {
            memcpy(s->M + (size_t)c * n, Wcol(s, k, r), sizeof(double) * (size_t)n);
            s->colk[c] = k;
            s->colr[c] = r;
        }
    int nnew = c - c0, r0 = s->mrows;
    if (nnew == 0) return SV_OK;
    double *Mn = s->M + (size_t)c0 * n;
    lapack_int rc = 0;
    if (r0 > 0)
        rc = LAPACKE_dormqr(LAPACK_COL_MAJOR, 'L', 'T', n, nnew, r0, s->M, n, s->tau, Mn, n);
    if (rc)
        return sv_error(SV_ERR_INTERNAL, "dormqr failed (%d) updating the %d x %d estimator matrix", (int)rc, n, c);
    if (n > r0) rc = LAPACKE_dgeqrf(LAPACK_COL_MAJOR, n - r0, nnew, Mn + r0, n, s->tau + r0);
    if (rc) return sv_error(SV_ERR_INTERNAL, "dgeqrf failed (%d) on the %d x %d estimator matrix", (int)rc, n, c);
    s->mcols = c;
    s->mrows = n < c ? n : c;
    s->mq = q;
    return SV_OK;
}

/* ---- the reduced model at every frequency ------------------------------------------ */
/* Z_r(f) = Σ_k c_k·A_k,r (q × q). */
static void reduced_form(const afs *s, const double complex *c, double complex *Z)
{
    int q = s->q, qc = s->qcap;
    for (size_t e = 0; e < (size_t)q * q; e++) Z[e] = 0;
    for (int k = 0; k < s->K; k++) {
        const double *Ak = s->Ar + (size_t)k * qc * qc;
        for (int cc = 0; cc < q; cc++)
            for (int r = 0; r < q; r++) Z[(size_t)cc * q + r] += c[k] * Ak[(size_t)cc * qc + r];
    }
}

/* Y = Z_r⁻¹·B_r (q × p); LAPACK's status (non-zero: Z_r singular). */
static lapack_int reduced_solve(const afs *s, double complex *Z, double complex *Y, lapack_int *ip)
{
    int q = s->q, qm = s->qmax;
    for (int j = 0; j < s->p; j++)
        for (int r = 0; r < q; r++) Y[(size_t)j * q + r] = s->Br[(size_t)j * qm + r];
    return LAPACKE_zgesv(LAPACK_COL_MAJOR, q, s->p, Z, q, ip, Y, q);
}

/* z's entries for the groups' U columns: Σ_{k in g} c_k·G_k·y, group g at
 * zu + uvrow[g]. */
static void lowrank_z(const afs *s, const double complex *c, const double complex *y, double complex *zu)
{
    memset(zu, 0, sizeof(double complex) * (size_t)s->R);
    for (int k = 0; k < s->K; k++) {
        if (s->wslot[k] >= 0 || c[k] == 0) continue;
        int r = s->m->terms[k].rank;
        double complex *z = zu + s->uvrow[s->m->term_group[k]];
        for (int col = 0; col < s->q; col++) {
            const double *gk = Gcol(s, k, col);
            double complex v = c[k] * y[col];
            for (int a = 0; a < r; a++) z[a] += gk[a] * v;
        }
    }
}

/* z_j's entry for column cc of M (the file's head comment). */
static double complex z_entry(const afs *s, int cc, int j, const double complex *c, const double complex *y,
                              const double complex *zu)
{
    int k = s->colk[cc];
    if (k >= 0) return c[k] * y[s->colr[cc]];
    if (k == -1) return s->colr[cc] == j ? -1.0 : 0.0;
    return zu[s->uvrow[-2 - k] + s->colr[cc]];
}

/* The residual estimate max_j ‖R·z_j‖ / ‖b_j‖ (the file's head comment);
 * zv: workspace of cols + rows + R entries. */
static double reduced_residual(const afs *s, const double complex *c, const double complex *Y, double complex *zv)
{
    int q = s->q, rows = s->mrows, cols = s->mcols, n = s->n;
    double complex *zu = zv + cols + rows;
    double worst = 0.0;
    for (int j = 0; j < s->p; j++) {
        const double complex *y = Y + (size_t)j * q;
        lowrank_z(s, c, y, zu);
        for (int cc = 0; cc < cols; cc++) zv[cc] = z_entry(s, cc, j, c, y, zu);
        /* R·z column by column (R's columns are contiguous in M) */
        double complex *acc = zv + cols;
        memset(acc, 0, sizeof(double complex) * (size_t)rows);
        for (int cc = 0; cc < cols; cc++) {
            const double *Rc = s->M + (size_t)cc * n;
            int top = cc < rows - 1 ? cc : rows - 1;
            for (int r = 0; r <= top; r++) acc[r] += Rc[r] * zv[cc];
        }
        double ss = 0.0;
        for (int r = 0; r < rows; r++) ss += creal(acc[r]) * creal(acc[r]) + cimag(acc[r]) * cimag(acc[r]);
        double e = sqrt(ss) / s->m->bnorm[j];
        if (!(e <= worst)) worst = e;
    }
    return worst;
}

/* H(f_i) = C_rᵀ·Y, NaN where the reduced system was singular. */
static void reduced_outputs(afs *s, int i, const double complex *Y, int ok)
{
    int q = s->q, qm = s->qmax, nout = s->nout, p = s->p;
    double complex *h = s->res->h + (size_t)i * nout * p;
    for (int j = 0; j < p; j++)
        for (int a = 0; a < nout; a++) {
            double complex acc = 0;
            if (ok)
                for (int r = 0; r < q; r++) acc += s->Cr[(size_t)a * qm + r] * Y[(size_t)j * q + r];
            else
                acc = NAN;
            h[(size_t)j * nout + a] = acc;
        }
}

/* One frequency: form, solve, estimate, outputs. A singular reduced system
 * gets an infinite estimate, so that the frequency is solved exactly next. */
static void reduced_at(afs *s, int i, double complex *ws, lapack_int *ip)
{
    int q = s->q, p = s->p;
    const double complex *c = s->coef + (size_t)i * s->K;
    double complex *Z = ws, *Y = Z + (size_t)q * q, *zv = Y + (size_t)q * p;
    reduced_form(s, c, Z);
    lapack_int rc = reduced_solve(s, Z, Y, ip);
    double worst = rc == 0 ? reduced_residual(s, c, Y, zv) : INFINITY;
    s->res->residual[i] = isnan(worst) ? INFINITY : worst;
    if (s->hook_y && rc == 0) memcpy(s->hook_y + (size_t)i * q * p, Y, sizeof(double complex) * (size_t)q * p);
    reduced_outputs(s, i, Y, rc == 0);
}

/* The non-exact frequency with the largest estimate (−1: none). */
static void largest_estimate(const afs *s, double *max_res, int *argmax)
{
    *max_res = 0.0;
    *argmax = -1;
    for (int i = 0; i < s->nf; i++)
        if (!s->res->exact[i] && (*argmax < 0 || s->res->residual[i] > *max_res)) {
            *max_res = s->res->residual[i];
            *argmax = i;
        }
}

/* Solve the reduced model at every non-exact frequency: outputs and the
 * residual estimate. One thread unless there is real work: a team's
 * start-up and barrier cost more than small reduced solves. Either way each
 * reduced solve (LAPACK on a q × q matrix) must run on one BLAS thread:
 * inside a parallel region OpenBLAS does that by itself, outside it would
 * start its own team for every tiny call (on a busy machine seconds instead
 * of milliseconds per evaluation). */
static sv_status evaluate_reduced(afs *s, double *max_res, int *argmax)
{
    int q = s->q, p = s->p, nf = s->nf, rows = s->mrows, cols = s->mcols;
    int nthr = (double)nf * q * q * (q + cols) > 4e7 ? sv_threads_team() : 1;
    sv_threads_saved ss = {0};
    if (nthr == 1) ss = sv_threads_serial_begin();
    size_t per = (size_t)q * q + (size_t)q * p + (size_t)cols + (size_t)rows + (size_t)s->R;
    double complex *ws = sv_alloc(s->ctx, sizeof(double complex) * per * (size_t)nthr, "reduced solve workspace");
    lapack_int *piv = sv_alloc(s->ctx, sizeof(lapack_int) * (size_t)q * (size_t)nthr, "reduced solve pivots");
    sv_status st = ws && piv ? SV_OK : sv_last_status();
    if (!st) {
        sv_progress_loop loop = sv_progress_loop_begin(s->ctx, "reduced model", nf);
#pragma omp parallel num_threads(nthr)
        {
            int t = omp_get_thread_num();
#pragma omp for schedule(dynamic, 4)
            for (int i = 0; i < nf; i++)
                if (!sv_progress_loop_at(&loop, i) && !s->res->exact[i])
                    reduced_at(s, i, ws + per * (size_t)t, piv + (size_t)q * t);
        }
        st = sv_progress_loop_end(&loop);
    }
    if (nthr == 1) sv_threads_restore(ss);
    sv_free(s->ctx, ws);
    sv_free(s->ctx, piv);
    if (st) return st;
    largest_estimate(s, max_res, argmax);
    if (s->hook) s->hook(s->hook_user, s->V, s->n, q, s->hook_y, s->res);
    return SV_OK;
}

/* Progress: every exact solve takes an equal share of what is left of the
 * sweep, so the fraction rises with the solves. How many are left is
 * estimated from how fast the largest residual estimate has come down per
 * solve, on a log scale (at least one while it is above the tolerance, at
 * most the cap); before there is a rate, the examples' typical count. */
#define SWEEP_TYPICAL_EXTRA_SOLVES 2 /* the examples need 4 to 7 solves: the initial 3 and 1 to 4 more */

static void plan_from_rate(afs *s, int cap, double first, int solves_at_first, double now)
{
    int done = s->res->n_exact, solved_since = done - solves_at_first;
    double left = s->solves_left;
    if (isfinite(first) && isfinite(now) && now < first && solved_since > 0) {
        double per_solve = log(first / now) / solved_since;
        left = ceil(log(now / s->o.tolerance) / per_solve);
    }
    s->solves_left = fmax(1.0, fmin(left, (double)(cap - done)));
}

static sv_status report(afs *s) { return sv_progress(s->ctx, "sweep", s->progress); }

/* The share of the sweep's progress the next exact solve takes: all of
 * them are known when every frequency is solved exactly; otherwise one
 * more than the planned count shares what is left, so that the fraction
 * nears 1 only when the sweep does. */
static double next_share(const afs *s)
{
    return s->o.exact_all ? 1.0 / s->nf : (1.0 - s->progress) / (s->solves_left + 1.0);
}

/* One exact solve done: one fewer left in the plan. */
static void plan_solved(afs *s) { s->solves_left = fmax(1.0, s->solves_left - 1.0); }

/* ---- the sweep's loop ----------------------------------------------------------- */
/* c_k(f_i) for every frequency, once. */
static sv_status sweep_coefs(afs *s)
{
    for (int i = 0; i < s->nf; i++) {
        sv_status st = sv_sweep_model_coefs(s->m, s->res->freq[i], s->coef + (size_t)i * s->K);
        if (st) return st;
    }
    return SV_OK;
}

/* An exact solve at f_i within its share of the progress. */
static sv_status solve_in_span(afs *s, int i, double share)
{
    sv_progress_span outer = sv_progress_span_begin(s->ctx, s->progress, s->progress + share);
    sv_status st = solve_exact_at(s, i);
    sv_progress_span_end(s->ctx, outer);
    s->progress += share;
    return st;
}

/* An exact solve at f_i whose solution (and derivatives) then widen the basis. */
static sv_status solve_and_extend(afs *s, int i)
{
    double share = next_share(s);
    sv_status st = solve_in_span(s, i, 0.85 * share);
    plan_solved(s);
    if (st) return st;
    double t0 = sv_time_now();
    sv_progress_span outer = sv_progress_span_begin(s->ctx, s->progress, s->progress + 0.15 * share);
    st = extend_basis(s);
    sv_progress_span_end(s->ctx, outer);
    s->progress += 0.15 * share;
    s->res->seconds_reduced += sv_time_now() - t0;
    return st;
}

static sv_status run_exact_all(afs *s)
{
    for (int i = 0; i < s->nf; i++) {
        sv_status st = solve_in_span(s, i, next_share(s));
        if (st) return st;
    }
    s->res->converged = 1;
    return SV_OK;
}

/* Initial samples: the grid frequencies nearest the Chebyshev points of the
 * band, f_a = (lo + hi)/2 − (hi − lo)/2·cos(π(2a + 1)/(2·init)), a = 0 …
 * init − 1 (for 3: 7 %, 50 % and 93 % of the way). Why not the edges: an
 * exact solve's derivatives describe the solution on both sides of it, and
 * at an edge half of that lies outside the band (pixel2port, 21 points:
 * 6 → 5 exact solves with every effect on, 5 with the sheet model either
 * way; docs/sweep.md). A grid point nearest two of them is solved once. */
static sv_status run_initial(afs *s, int cap)
{
    int nf = s->nf, init = s->o.initial < cap ? s->o.initial : cap;
    const double *f = s->res->freq;
    double lo = f[0], hi = f[0];
    for (int i = 1; i < nf; i++) lo = fmin(lo, f[i]), hi = fmax(hi, f[i]);
    sv_status st = SV_OK;
    for (int a = 0; a < init && !st; a++) {
        double want = 0.5 * (lo + hi) - 0.5 * (hi - lo) * cos(3.14159265358979323846 * (2 * a + 1) / (2.0 * init));
        int i = 0;
        for (int k = 1; k < nf; k++)
            if (fabs(f[k] - want) < fabs(f[i] - want)) i = k;
        if (s->res->exact[i]) continue;
        st = solve_and_extend(s, i);
    }
    return st;
}

/* The residual estimate at every frequency not solved exactly: its largest
 * value and where (−1: none left). */
static sv_status estimate(afs *s, double *mx, int *arg)
{
    double t0 = sv_time_now();
    sv_status st = SV_OK;
    *mx = 0.0;
    *arg = -1;
    if (s->q > 0) {
        st = factor_estimator(s);
        if (!st) st = evaluate_reduced(s, mx, arg);
    } else {
        /* Every solution was zero: nothing to project on; solve the rest exactly. */
        for (int i = 0; i < s->nf; i++)
            if (!s->res->exact[i]) {
                s->res->residual[i] = INFINITY;
                if (*arg < 0) *arg = i, *mx = INFINITY;
            }
    }
    s->res->seconds_reduced += sv_time_now() - t0;
    return st;
}

/* Solve exactly where the estimate is largest until every estimate is below
 * the tolerance or the cap is reached. */
static sv_status run_adaptive(afs *s, int cap)
{
    sv_sweep_result *res = s->res;
    double first = -1.0;
    int solves_at_first = 0;
    for (;;) {
        double mx;
        int arg;
        /* the estimate's own reports check for a stop without moving the fraction */
        sv_progress_span outer = sv_progress_span_begin(s->ctx, s->progress, s->progress);
        sv_status st = estimate(s, &mx, &arg);
        sv_progress_span_end(s->ctx, outer);
        if (st) return st;
        res->max_residual = arg < 0 ? 0.0 : mx;
        if (first < 0) first = mx, solves_at_first = res->n_exact;
        if (arg < 0 || mx < s->o.tolerance) {
            res->converged = 1;
            return SV_OK;
        }
        if (res->n_exact >= cap) {
            if (res->n_exact < s->nf)
                sv_log(s->ctx, SV_LOG_WARN,
                       "adaptive sweep stopped at the cap of %d exact solves with residual estimate %.3g > "
                       "tolerance %.3g (at f = %g)",
                       cap, mx, s->o.tolerance, res->freq[arg]);
            res->converged = 0;
            return SV_OK;
        }
        plan_from_rate(s, cap, first, solves_at_first, mx);
        st = report(s);
        if (!st) st = solve_and_extend(s, arg);
        if (st) return st;
    }
}

static sv_status run(afs *s)
{
    sv_status st = sweep_coefs(s);
    if (st || s->o.exact_all) return st ? st : run_exact_all(s);
    int cap = s->o.max_exact < s->nf ? s->o.max_exact : s->nf;
    s->solves_left = fmin((double)cap, (double)(s->o.initial + SWEEP_TYPICAL_EXTRA_SOLVES));
    st = run_initial(s, cap);
    if (!st) st = run_adaptive(s, cap);
    if (st) return st;
    sv_sweep_result *res = s->res;
    res->max_residual = 0.0;
    for (int i = 0; i < s->nf; i++)
        if (!res->exact[i] && !(res->residual[i] <= res->max_residual)) res->max_residual = res->residual[i];
    return sv_progress(s->ctx, "sweep", 1.0);
}

sv_status sv_sweep_run(sv_ctx *ctx, const sv_sweep_model *m, int nfreq, const double *freq,
                       const sv_sweep_options *opts, sv_sweep_result **out)
{
    return sv_sweep_run_hooked(ctx, m, nfreq, freq, opts, NULL, NULL, out);
}

static sv_status check_run(const sv_sweep_model *m, int nfreq, const double *freq, sv_sweep_result **out)
{
    if (!out) return sv_error(SV_ERR_ARG, "out is NULL");
    *out = NULL;
    if (!m) return sv_error(SV_ERR_ARG, "model is NULL");
    if (nfreq < 1) return sv_error(SV_ERR_ARG, "nfreq = %d: expected >= 1", nfreq);
    if (!freq) return sv_error(SV_ERR_ARG, "freq is NULL");
    for (int i = 0; i < nfreq; i++)
        if (!isfinite(freq[i])) return sv_error(SV_ERR_NONFINITE, "freq[%d] = %g: expected a finite value", i, freq[i]);
    return SV_OK;
}

/* The working state's sizes (its arrays come in alloc_all). */
static void afs_init(afs *s, sv_ctx *ctx, const sv_sweep_model *m, int nfreq, sv_sweep_hook hook, void *hook_user)
{
    s->ctx = ctx;
    s->m = m;
    s->n = m->n;
    s->K = m->nterms;
    s->p = m->nrhs;
    s->nout = m->nout;
    s->nf = nfreq;
    s->hook = hook;
    s->hook_user = hook_user;
    int cap = s->o.max_exact < nfreq ? s->o.max_exact : nfreq;
    s->nderiv = s->o.exact_all || s->o.derivatives < 0 ? 0 : s->o.derivatives;
    s->qmax = qmax_for(m->n, m->nrhs, cap, s->nderiv);
}

/* Where each term's products live: W for the others, UV and G for the
 * low-rank ones. */
static sv_status layout_terms(afs *s)
{
    const sv_sweep_model *m = s->m;
    s->wslot = sv_alloc(s->ctx, sizeof(int) * (size_t)(2 * s->K + m->ngroups + 1), "sweep term layout");
    if (!s->wslot) return sv_last_status();
    s->grow = s->wslot + s->K;
    s->uvrow = s->grow + s->K;
    s->Kw = s->R = s->RG = 0;
    for (int g = 0; g < m->ngroups; g++) {
        s->uvrow[g] = s->R;
        s->R += group_rank(s, g);
    }
    for (int k = 0; k < s->K; k++) {
        s->wslot[k] = m->term_group[k] >= 0 ? -1 : s->Kw++;
        s->grow[k] = s->RG;
        if (s->wslot[k] < 0) s->RG += m->terms[k].rank;
    }
    return SV_OK;
}

sv_status sv_sweep_run_hooked(sv_ctx *ctx, const sv_sweep_model *m, int nfreq, const double *freq,
                              const sv_sweep_options *opts, sv_sweep_hook hook, void *hook_user,
                              sv_sweep_result **out)
{
    sv_status st = check_run(m, nfreq, freq, out);
    if (st) return st;
    afs s;
    memset(&s, 0, sizeof(s));
    fill_defaults(opts, &s.o);
    st = check_options(&s.o);
    if (st) return st;
    double t0 = sv_time_now();
    sv_sweep_shape shape;
    sv_sweep_model_shape(m, &shape);
    size_t need = sv_sweep_estimate_bytes_shape(m->n, &shape, m->nrhs, m->nout, m->nb, nfreq, &s.o);
    st = sv_mem_check(ctx, need, "adaptive sweep (basis, reduced model, exact solve)");
    if (st) return st;
    sv_threads_saved prev = sv_threads_apply(ctx);
    sv_progress_span whole = sv_progress_span_begin(ctx, 0, 1);
    afs_init(&s, ctx, m, nfreq, hook, hook_user);
    st = result_create(ctx, nfreq, m->nout, m->nrhs, freq, &s.res);
    if (!st) st = exact_solver(&s);
    if (!st) st = layout_terms(&s);
    if (!st) st = alloc_all(&s);
    if (!st) st = run(&s);
    free_all(&s);
    sv_progress_span_end(ctx, whole);
    sv_threads_restore(prev);
    if (st) {
        sv_sweep_result_destroy(s.res);
        return st;
    }
    s.res->basis_size = s.q;
    s.res->seconds_total = sv_time_now() - t0;
    s.res->peak_bytes = ctx ? sv_ctx_memory_peak(ctx) : 0;
    *out = s.res;
    return SV_OK;
}
