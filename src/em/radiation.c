/* Radiation of the planar model: the dissipative part of the retarded
 * (e^(−jkR)) kernels of a thin grounded slab, as a few exactly low-rank
 * terms of the affine model (docs/em.md, "Radiation").
 *
 * To second order in the substrate thickness h the odd powers of k0 of the
 * retarded kernels — the only ones that dissipate — are the space wave
 *
 *   Re Z_mn = η0·k0⁴·h²/(4π²) ∫ over the upper hemisphere
 *             [ (f̃_m·ρ̂)(f̃_n·ρ̂)*·(1 − sin²θ/εr)² + (f̃_m·φ̂)(f̃_n·φ̂)*·cos²θ ] dΩ,
 *
 * f̃(k) = ∫ f(r)·e^(jk·r) dS at k = k0·sinθ·(cos φ, sin φ) (Jackson and
 * Alexopoulos' HED on a grounded slab), plus the slab's TM0 surface wave,
 * the leading term in h³:
 *
 *   Re Z_mn += η0·k0⁵·h³·(1 − 1/εr)³/(4π) ∫_0^2π (f̃_m·ρ̂)(f̃_n·ρ̂)* dφ at sinθ = 1.
 *
 * Expanding e^(jk·r) about the centre of the metal in monomials of the
 * scaled coordinates (u, v) = (r − c)/a turns both into
 * Re Z(f) = Mᵀ·W(k0)·M, M the moments of the unknowns (exact, a few hundred
 * rows), W a polynomial in k0 whose coefficients are closed-form angular
 * integrals. In orthonormal coordinates (M = R·Qᵀ) the coefficient matrices
 * are compressed over the band by one SVD: Re Z(f) ≈ Σ_j c_j(f)·Q·W_j·Qᵀ
 * with a handful of terms j, c_j a polynomial in f. */
#include <cblas.h>
#include <lapacke.h>
#include <math.h>
#include <omp.h>
#include <string.h>

#include "em_internal.h"
#include "geom.h"

#define RAD_MAX_DEGREE 24          /* moments up to this total degree (GL rule exact) */
#define RAD_ETA0 376.730313668     /* Ω, μ0·c */

struct sv_em_radiation {
    sv_ctx *ctx;
    int n, rank, nterms, nexp;
    double *u;         /* n × rank, orthonormal columns */
    double *w;         /* nterms blocks rank × rank (symmetric) */
    double *poly;      /* nterms × nexp: c_j(f) = k0⁴·Σ_e poly[j·nexp + e]·(k0/k0_design)^e */
    double k0_design;
    sv_em_radiation_info info;
};

/* ---- geometry of the expansion ------------------------------------------- */

/* Centre and scale of the monomials: the metal's bounding box centre and
 * half-diagonal, so that |u|, |v| ≤ 1 on the metal. */
static void expansion_frame(const sv_em_project *p, double *cx, double *cy, double *a)
{
    const sv_em_grid *g = &p->grid;
    int i0 = g->nx, i1 = -1, j0 = g->ny, j1 = -1;
    for (int j = 0; j < g->ny; j++)
        for (int i = 0; i < g->nx; i++)
            if (p->metal[i + (size_t)g->nx * j]) {
                if (i < i0) i0 = i;
                if (i > i1) i1 = i;
                if (j < j0) j0 = j;
                if (j > j1) j1 = j;
            }
    /* coordinates relative to the grid corner, as sv_em_profile gives them */
    double x0 = i0 * g->dx, x1 = (i1 + 1) * g->dx, y0 = j0 * g->dy, y1 = (j1 + 1) * g->dy;
    *cx = 0.5 * (x0 + x1);
    *cy = 0.5 * (y0 + y1);
    *a = 0.5 * hypot(x1 - x0, y1 - y0);
}

double sv_em_radiation_size(const sv_em_model *m)
{
    double cx, cy, a;
    expansion_frame(m->prj, &cx, &cy, &a);
    return a;
}

double sv_em_radiation_limit_hz(const sv_em_model *m)
{
    const sv_em_stackup *st = &m->prj->st;
    double a = sv_em_radiation_size(m);
    double k_size = SV_EM_RAD_KA_MAX / a, k_thin = SV_EM_RAD_K1H_MAX / (st->h * sqrt(st->eps_r));
    return fmin(k_size, k_thin) * SV_EM_C0 / (2 * SV_EM_PI);
}

/* Monomials u^p·v^q with p + q ≤ D, in order of total degree. */
static int monomials(int D, int *pp, int *qq)
{
    int t = 0;
    for (int s = 0; s <= D; s++)
        for (int q = 0; q <= s; q++) {
            if (pp) {
                pp[t] = s - q;
                qq[t] = q;
            }
            t++;
        }
    return t;
}

/* ∫ Λ(s)·((s − c)/a)^k ds over the support of the profile along its axis
 * for k = 0..D (Λ the triangle or half triangle, peak 1 at e). */
static void along_moments(const sv_em_profile_t *pr, double c, double a, int D, const sv_em_gl_rule *gl,
                          double *out)
{
    memset(out, 0, sizeof(double) * (size_t)(D + 1));
    for (int piece = -1; piece <= 1; piece += 2) {
        if (pr->half && piece != pr->half) continue;
        for (int g = 0; g < gl->n; g++) {
            double t = gl->t[g], s = pr->e + piece * t * pr->d, w = gl->w[g] * pr->d * (1 - t), x = (s - c) / a;
            double xp = 1;
            for (int k = 0; k <= D; k++, xp *= x) out[k] += w * xp;
        }
    }
}

/* (1/w)·∫ ((t − c)/a)^k dt over [t1, t2]: the uniform profile across. */
static void across_moments(double t1, double t2, double c, double a, int D, double *out)
{
    double x1 = (t1 - c) / a, x2 = (t2 - c) / a, p1 = x1, p2 = x2;
    for (int k = 0; k <= D; k++, p1 *= x1, p2 *= x2) out[k] = (p2 - p1) / ((k + 1) * (x2 - x1));
}

/* Mᵀ (n × 2T, column-major): column c·T + t is the moment of component c
 * (0 = x, 1 = y) against monomial t of every unknown. */
static void moment_matrix(const sv_em_model *m, int D, double cx, double cy, double a, double *mt)
{
    int n = m->n, T = monomials(D, NULL, NULL);
    int pp[(RAD_MAX_DEGREE + 1) * (RAD_MAX_DEGREE + 2) / 2], qq[(RAD_MAX_DEGREE + 1) * (RAD_MAX_DEGREE + 2) / 2];
    monomials(D, pp, qq);
    sv_em_gl_rule gl;
    sv_em_gl_make(D / 2 + 2, 0, &gl);
    memset(mt, 0, sizeof(double) * (size_t)n * 2 * T);
    for (int q = 0; q < n; q++) {
        sv_em_profile_t pr;
        sv_em_profile(m, q, &pr);
        double al[RAD_MAX_DEGREE + 1], ac[RAD_MAX_DEGREE + 1];
        int x_axis = pr.axis == 0;
        along_moments(&pr, x_axis ? cx : cy, a, D, &gl, al);
        across_moments(pr.t1, pr.t2, x_axis ? cy : cx, a, D, ac);
        for (int t = 0; t < T; t++) {
            /* p is the power of u (x), q of v (y) */
            double v = x_axis ? al[pp[t]] * ac[qq[t]] : ac[pp[t]] * al[qq[t]];
            mt[q + (size_t)n * (pr.axis * T + t)] = pr.sign * v;
        }
    }
}

/* ---- angular integrals ---------------------------------------------------- */

/* ∫_0^2π cos^a φ · sin^b φ dφ. */
static double phi_integral(int a, int b)
{
    if ((a & 1) || (b & 1)) return 0;
    double r = 2 * SV_EM_PI;
    /* 2π·(a−1)!!·(b−1)!!/(a+b)!! */
    for (int k = a - 1; k > 0; k -= 2) r *= k;
    for (int k = b - 1; k > 0; k -= 2) r *= k;
    for (int k = a + b; k > 0; k -= 2) r /= k;
    return r;
}

/* ∫_0^1 (1 − u²)^k du = (2k)!!/(2k + 1)!!. */
static double beta_integral(int k)
{
    double r = 1;
    for (int i = 1; i <= k; i++) r *= (2.0 * i) / (2.0 * i + 1);
    return r;
}

static double factorial(int k)
{
    double r = 1;
    for (int i = 2; i <= k; i++) r *= i;
    return r;
}

/* The coefficient matrices C_e (2T × 2T) of Re Z = k0⁴·Σ_e k0^e·Mᵀ·C_e·M:
 * space wave at even e = N, surface wave at odd e = N + 1, N the total
 * degree of the two monomials. cs holds nexp = 2D + 2 blocks. */
static void coefficient_matrices(int D, double h, double eps_r, double a, double *cs)
{
    int T = monomials(D, NULL, NULL), Q = 2 * T, nexp = 2 * D + 2;
    int pp[(RAD_MAX_DEGREE + 1) * (RAD_MAX_DEGREE + 2) / 2], qq[(RAD_MAX_DEGREE + 1) * (RAD_MAX_DEGREE + 2) / 2];
    monomials(D, pp, qq);
    memset(cs, 0, sizeof(double) * (size_t)Q * Q * nexp);
    double ksp = RAD_ETA0 * h * h / (4 * SV_EM_PI * SV_EM_PI);
    double kr = 1 - 1 / eps_r, ksw = RAD_ETA0 * h * h * h * kr * kr * kr / (4 * SV_EM_PI);
    for (int c1 = 0; c1 < 2; c1++)
        for (int t1 = 0; t1 < T; t1++)
            for (int c2 = 0; c2 < 2; c2++)
                for (int t2 = 0; t2 < T; t2++) {
                    int d1 = pp[t1] + qq[t1], d2 = pp[t2] + qq[t2], N = d1 + d2;
                    if ((d1 - d2) & 1) continue; /* j^(d1)·(−j)^(d2) imaginary: cancels */
                    double phase = ((d1 - d2) / 2) & 1 ? -1 : 1;
                    int P = pp[t1] + pp[t2], Qy = qq[t1] + qq[t2];
                    /* (ê_c1·ρ̂)(ê_c2·ρ̂) and (ê_c1·φ̂)(ê_c2·φ̂) times cos^P sin^Q */
                    double frho, fphi;
                    if (c1 == 0 && c2 == 0) {
                        frho = phi_integral(P + 2, Qy);
                        fphi = phi_integral(P, Qy + 2);
                    } else if (c1 == 1 && c2 == 1) {
                        frho = phi_integral(P, Qy + 2);
                        fphi = phi_integral(P + 2, Qy);
                    } else {
                        frho = phi_integral(P + 1, Qy + 1);
                        fphi = -frho;
                    }
                    if (frho == 0 && fphi == 0) continue;
                    double scale = phase * pow(a, N) / (factorial(pp[t1]) * factorial(qq[t1]) * factorial(pp[t2]) *
                                                        factorial(qq[t2]));
                    int k = N / 2;
                    double th_sp = beta_integral(k) - 2 / eps_r * beta_integral(k + 1) +
                                   beta_integral(k + 2) / (eps_r * eps_r);
                    double th_cos = beta_integral(k) - beta_integral(k + 1);
                    size_t at = (size_t)(c1 * T + t1) + (size_t)Q * (c2 * T + t2);
                    cs[(size_t)N * Q * Q + at] = scale * ksp * (th_sp * frho + th_cos * fphi);
                    cs[(size_t)(N + 1) * Q * Q + at] = scale * ksw * frho;
                }
}

/* ---- construction ---------------------------------------------------------- */

/* Smallest degree D with κ^(D+1)/(D+1)! ≤ tol: the first moment left out
 * weighs that much against the dipole. */
static int choose_degree(double kappa, double tol)
{
    double t = 1;
    for (int D = 0; D < RAD_MAX_DEGREE; D++) {
        t *= kappa / (D + 1);
        if (t <= tol) return D;
    }
    return RAD_MAX_DEGREE;
}

/* Orthonormal basis of the moments: Mᵀ·Π = U·R (pivoted QR), rank from R's
 * diagonal. r_out: rank × Q with the permutation undone (M = R_out·Uᵀ...). */
static sv_status orthonormalise(sv_ctx *ctx, int n, int Q, double *mt, int *rank, double *r_out)
{
    lapack_int *jpvt = sv_calloc(ctx, (size_t)Q, sizeof(lapack_int), "radiation pivots");
    double *tau = sv_alloc(ctx, sizeof(double) * (size_t)Q, "radiation QR");
    if (!jpvt || !tau) {
        sv_free(ctx, jpvt);
        sv_free(ctx, tau);
        return sv_last_status();
    }
    sv_status st = SV_OK;
    lapack_int info = LAPACKE_dgeqp3(LAPACK_COL_MAJOR, n, Q, mt, n, jpvt, tau);
    int kmax = n < Q ? n : Q, r = 0;
    double r11 = kmax > 0 ? fabs(mt[0]) : 0;
    while (r < kmax && fabs(mt[r + (size_t)n * r]) > 1e-13 * r11) r++;
    if (info) st = sv_error(SV_ERR_INTERNAL, "radiation moments: dgeqp3 info %d", (int)info);
    if (!st) {
        memset(r_out, 0, sizeof(double) * (size_t)kmax * Q);
        for (int j = 0; j < Q; j++)
            for (int i = 0; i < r && i <= j; i++) r_out[i + (size_t)r * (jpvt[j] - 1)] = mt[i + (size_t)n * j];
        info = LAPACKE_dorgqr(LAPACK_COL_MAJOR, n, r, r, mt, n, tau);
        if (info) st = sv_error(SV_ERR_INTERNAL, "radiation moments: dorgqr info %d", (int)info);
    }
    *rank = r;
    sv_free(ctx, jpvt);
    sv_free(ctx, tau);
    return st;
}

/* The expansion: degree D from the electrical size, and the coefficient
 * matrices C_e scaled by (k0d)^e, so that C(x) = Σ_e x^e·C_e, x = k0/k0d. */
typedef struct plan {
    int D, T, Q, nexp;
    double cx, cy, a, k0d;
    double *cs;     /* Q² × nexp */
} plan;

/* Far past the electrical-size limit the expansion's powers (k0·a)^e
 * overflow: the terms cannot be formed at such a frequency, and the refusal
 * says where the model holds instead of a LAPACK code. */
static sv_status beyond_expansion(const sv_em_model *m, double fmax_hz)
{
    return sv_error(SV_ERR_ARG,
                    "radiation at %g Hz: the circuit, %g m across, is %.3g wavelengths there, past what the "
                    "radiation's moment expansion can represent (the model holds up to %g Hz, docs/em.md): "
                    "expected frequencies below that, or effects.radiation false",
                    fmax_hz, 2 * sv_em_radiation_size(m), 2 * sv_em_radiation_size(m) * fmax_hz / SV_EM_C0,
                    sv_em_radiation_limit_hz(m));
}

static int all_finite(const double *v, size_t n)
{
    for (size_t q = 0; q < n; q++)
        if (!isfinite(v[q])) return 0;
    return 1;
}

static sv_status plan_make(sv_ctx *ctx, const sv_em_model *m, double fmax_hz, double tol, plan *pl)
{
    memset(pl, 0, sizeof *pl);
    const sv_em_stackup *st = &m->prj->st;
    expansion_frame(m->prj, &pl->cx, &pl->cy, &pl->a);
    pl->k0d = 2 * SV_EM_PI * fmax_hz / SV_EM_C0;
    pl->D = choose_degree(pl->k0d * pl->a, tol);
    pl->T = monomials(pl->D, NULL, NULL);
    pl->Q = 2 * pl->T;
    pl->nexp = 2 * pl->D + 2;
    size_t qq = (size_t)pl->Q * pl->Q;
    pl->cs = sv_alloc(ctx, sizeof(double) * qq * pl->nexp, "radiation coefficient matrices");
    if (!pl->cs) return sv_last_status();
    coefficient_matrices(pl->D, st->h, st->eps_r, pl->a, pl->cs);
    for (int e = 0; e < pl->nexp; e++) {
        double sc = pow(pl->k0d, e);
        for (size_t q = 0; q < qq; q++) pl->cs[(size_t)e * qq + q] *= sc;
    }
    return all_finite(pl->cs, qq * pl->nexp) ? SV_OK : beyond_expansion(m, fmax_hz);
}

/* The monomials C_e couples: those of total degree lo..hi (N = the pair's
 * total degree, e for the space wave, e − 1 for the surface wave), an
 * interval [i0, i1) of each component's index. */
static void exponent_support(const plan *pl, int e, int *i0, int *i1)
{
    int N = e & 1 ? e - 1 : e, lo = N - pl->D > 0 ? N - pl->D : 0, hi = N < pl->D ? N : pl->D;
    *i0 = lo * (lo + 1) / 2;
    *i1 = (hi + 1) * (hi + 2) / 2;
}

/* S_e = R·C_e·Rᵀ (r × r) for every exponent: the coefficient matrices in
 * the orthonormal coordinates of the mesh's moments, each on the monomials
 * its C_e couples (a fraction of all: the projection's cost). The exponents
 * are independent: they share the team (each thread its own buffers; the
 * products themselves single-threaded, as everywhere in this file): nthr
 * threads, the caller's team outside this file's serial section. */
static sv_status project_coefficients(sv_ctx *ctx, const plan *pl, int r, const double *rr, double *s, int nthr)
{
    int Q = pl->Q, T = pl->T;
    size_t per = (size_t)r * Q * 2 + (size_t)Q * Q;
    double *work = sv_alloc(ctx, sizeof(double) * per * (size_t)nthr, "radiation projection");
    if (!work) return sv_last_status();
#pragma omp parallel for schedule(dynamic, 1) num_threads(nthr)
    for (int e = 0; e < pl->nexp; e++) {
        double *rs = work + per * (size_t)omp_get_thread_num(), *rc = rs + (size_t)r * Q, *cs = rc + (size_t)r * Q;
        int i0, i1;
        exponent_support(pl, e, &i0, &i1);
        int w = i1 - i0, S = 2 * w;
        const double *ce = pl->cs + (size_t)Q * Q * e;
        for (int c = 0; c < 2; c++) /* R's and C_e's columns (and rows) of the support */
            for (int j = 0; j < w; j++) {
                int col = c * T + i0 + j;
                memcpy(rs + (size_t)r * (c * w + j), rr + (size_t)r * col, sizeof(double) * (size_t)r);
                for (int c2 = 0; c2 < 2; c2++)
                    memcpy(cs + (size_t)S * (c * w + j) + (size_t)c2 * w, ce + (size_t)Q * col + c2 * T + i0,
                           sizeof(double) * (size_t)w);
            }
        cblas_dgemm(CblasColMajor, CblasNoTrans, CblasNoTrans, r, S, S, 1, rs, r, cs, S, 0, rc, r);
        cblas_dgemm(CblasColMajor, CblasNoTrans, CblasTrans, r, r, S, 1, rc, r, rs, r, 0, s + (size_t)r * r * e, r);
    }
    sv_free(ctx, work);
    return SV_OK;
}

/* One SVD over the band: S(x) = Σ_e x^e·S_e ≈ Σ_j (Σ_e V_ej·x^e)·W_j with
 * W_j = Σ_e V_ej·S_e, V the leading eigenvectors of the small Gram matrix
 * of the S_e. Over a band the S_e of neighbouring exponents are nearly
 * parallel (the moments of a mesh are far from independent), so a few
 * terms carry them all. */
static sv_status compress_band(sv_em_radiation *rad, int nexp, const double *s, double tol)
{
    sv_ctx *ctx = rad->ctx;
    int r = rad->rank;
    size_t rows = (size_t)r * r;
    double *g = sv_alloc(ctx, sizeof(double) * (size_t)nexp * nexp, "radiation band Gram");
    double *lam = sv_alloc(ctx, sizeof(double) * (size_t)nexp, "radiation band Gram");
    sv_status st = (!g || !lam) ? sv_last_status() : SV_OK;
    int J = 0;
    if (!st) {
        cblas_dgemm(CblasColMajor, CblasTrans, CblasNoTrans, nexp, nexp, (int)rows, 1, s, (int)rows, s, (int)rows, 0,
                    g, nexp);
        /* eigenvalues ascending: σ_j² = lam[nexp − 1 − j] */
        if (!all_finite(g, (size_t)nexp * nexp)) {
            st = SV_ERR_NONFINITE; /* the expansion overflowed: the caller names the frequency */
        } else {
            lapack_int info = LAPACKE_dsyev(LAPACK_COL_MAJOR, 'V', 'L', nexp, g, nexp, lam);
            if (info) st = sv_error(SV_ERR_NOCONV, "radiation band compression: dsyev info %d", (int)info);
        }
    }
    if (!st) {
        double top = fmax(lam[nexp - 1], 0);
        while (J < nexp && J < SV_EM_RAD_MAX_TERMS && top > 0 && lam[nexp - 1 - J] > tol * tol * top) J++;
        rad->info.band_residual = J < nexp && top > 0 ? sqrt(fmax(lam[nexp - 1 - J], 0) / top) : 0;
        rad->w = sv_alloc(ctx, sizeof(double) * rows * (J ? J : 1), "radiation term cores");
        rad->poly = sv_alloc(ctx, sizeof(double) * (size_t)nexp * (J ? J : 1), "radiation coefficients");
        if (!rad->w || !rad->poly) st = sv_last_status();
    }
    if (!st && J > 0) { /* the leading eigenvectors, largest first, then W = [S_e]·V in one product */
        for (int j = 0; j < J; j++)
            memcpy(rad->poly + (size_t)nexp * j, g + (size_t)nexp * (nexp - 1 - j), sizeof(double) * nexp);
        cblas_dgemm(CblasColMajor, CblasNoTrans, CblasNoTrans, (int)rows, J, nexp, 1, s, (int)rows, rad->poly, nexp, 0,
                    rad->w, (int)rows);
    }
    for (int j = 0; j < J && !st; j++) {
        double *wj = rad->w + rows * j;
        for (int b = 0; b < r; b++) /* symmetric up to rounding */
            for (int a2 = b + 1; a2 < r; a2++) {
                double m2 = 0.5 * (wj[a2 + (size_t)r * b] + wj[b + (size_t)r * a2]);
                wj[a2 + (size_t)r * b] = wj[b + (size_t)r * a2] = m2;
            }
    }
    rad->nterms = st ? 0 : J;
    sv_free(ctx, g);
    sv_free(ctx, lam);
    return st;
}

/* The directions the band's terms use: the moments' orthonormal basis Q
 * (n × r) has more than the terms need (every multipole up to the degree,
 * of which the far-field weight falls fast), so U = Q·E with E the
 * eigenvectors of Σ_j W_j² whose weight is above tol relative to the
 * largest, and W_j ← Eᵀ·W_j·E. What is dropped changes every term by less
 * than tol of the largest term. */
static sv_status compress_rank(sv_em_radiation *rad, const double *q, double tol)
{
    sv_ctx *ctx = rad->ctx;
    int n = rad->n, r = rad->rank, J = rad->nterms;
    if (r == 0 || J == 0) return SV_OK;
    size_t rr = (size_t)r * r;
    double *g = sv_alloc(ctx, sizeof(double) * (3 * rr + r), "radiation rank compression");
    if (!g) return sv_last_status();
    double *t = g + rr, *t2 = t + rr, *mu = t2 + rr;
    /* Σ_j W_j² = A·Aᵀ with A = [W_1 … W_J] (r × rJ: the cores as stored; W_j symmetric) */
    cblas_dsyrk(CblasColMajor, CblasLower, CblasNoTrans, r, r * J, 1, rad->w, r, 0, g, r);
    sv_status st = SV_OK;
    lapack_int info = LAPACKE_dsyevd(LAPACK_COL_MAJOR, 'V', 'L', r, g, r, mu);
    if (info) st = sv_error(SV_ERR_NOCONV, "radiation rank compression: dsyevd info %d", (int)info);
    int k = 0;
    double top = st ? 0 : fmax(mu[r - 1], 0);
    while (!st && k < r && mu[r - 1 - k] > tol * tol * top) k++;
    if (!st && k > 0) {
        double *e = g + (size_t)r * (r - k); /* the k largest, ascending: their order does not matter */
        double *u = sv_alloc(ctx, sizeof(double) * (size_t)n * k, "radiation basis");
        double *w = u ? sv_alloc(ctx, sizeof(double) * (size_t)k * k * J, "radiation term cores") : NULL;
        if (!w) st = sv_last_status();
        for (int j = 0; j < J && !st; j++) {
            cblas_dgemm(CblasColMajor, CblasNoTrans, CblasNoTrans, r, k, r, 1, rad->w + rr * j, r, e, r, 0, t, r);
            cblas_dgemm(CblasColMajor, CblasTrans, CblasNoTrans, k, k, r, 1, e, r, t, r, 0, t2, k);
            for (int b = 0; b < k; b++) /* symmetric up to rounding */
                for (int a = b + 1; a < k; a++)
                    t2[a + (size_t)k * b] = t2[b + (size_t)k * a] =
                        0.5 * (t2[a + (size_t)k * b] + t2[b + (size_t)k * a]);
            memcpy(w + (size_t)k * k * j, t2, sizeof(double) * (size_t)k * k);
        }
        if (!st) {
            cblas_dgemm(CblasColMajor, CblasNoTrans, CblasNoTrans, n, k, r, 1, q, n, e, r, 0, u, n);
            sv_free(ctx, rad->u);
            sv_free(ctx, rad->w);
            rad->u = u;
            rad->w = w;
            rad->rank = k;
        } else {
            sv_free(ctx, u);
            sv_free(ctx, w);
        }
    }
    sv_free(ctx, g);
    return st;
}

sv_status sv_em_radiation_create(sv_ctx *ctx, const sv_em_model *m, double fmax_hz, double tol,
                                 sv_em_radiation **out)
{
    if (!out) return sv_error(SV_ERR_ARG, "sv_em_radiation_create: out is NULL");
    *out = NULL;
    if (!m || !(fmax_hz > 0) || !isfinite(fmax_hz) || !(tol > 0 && tol < 1))
        return sv_error(SV_ERR_ARG, "sv_em_radiation_create: fmax %g Hz, tol %g: expected fmax > 0 and 0 < tol < 1",
                        fmax_hz, tol);
    /* small dense steps: one thread each (BLAS teams cost more than they gain
     * here); the projection's independent exponents share the caller's team */
    int team = sv_threads_team();
    sv_threads_saved ts = sv_threads_serial_begin();
    plan pl;
    sv_status s = plan_make(ctx, m, fmax_hz, tol, &pl);
    if (s) {
        sv_threads_restore(ts);
        return s;
    }
    int n = m->n, Q = pl.Q;
    sv_em_radiation *rad = sv_calloc(ctx, 1, sizeof *rad, "radiation terms");
    if (rad) rad->ctx = ctx; /* its destroy frees through it, also on failure */
    double *mt = sv_alloc(ctx, sizeof(double) * (size_t)n * Q, "radiation moments");
    double *rr = sv_alloc(ctx, sizeof(double) * (size_t)Q * Q, "radiation moments R");
    double *sp = NULL;
    if (!rad || !mt || !rr) s = sv_last_status();
    if (!s) {
        rad->n = n;
        rad->nexp = pl.nexp;
        rad->k0_design = pl.k0d;
        moment_matrix(m, pl.D, pl.cx, pl.cy, pl.a, mt);
        s = sv_progress(ctx, "radiation terms", 0.1);
    }
    /* between its steps (LAPACK calls of up to half a second on the
     * 11 402-unknown square: a stop is seen after the one running) */
    if (!s) s = orthonormalise(ctx, n, Q, mt, &rad->rank, rr);
    if (!s) s = sv_progress(ctx, "radiation terms", 0.5);
    if (!s) {
        sp = sv_alloc(ctx, sizeof(double) * (size_t)rad->rank * rad->rank * pl.nexp + 1, "radiation band samples");
        if (!sp) s = sv_last_status();
    }
    if (!s) s = project_coefficients(ctx, &pl, rad->rank, rr, sp, team);
    if (!s) s = compress_band(rad, pl.nexp, sp, tol);
    if (s == SV_ERR_NONFINITE) s = beyond_expansion(m, fmax_hz);
    if (!s) s = sv_progress(ctx, "radiation terms", 0.6);
    if (!s) rad->info.moment_rank = rad->rank;
    if (!s) s = compress_rank(rad, mt, 1e-2 * tol);
    if (!s) s = sv_progress(ctx, "radiation terms", 1.0);
    if (!s && rad->rank > 0 && !rad->u) { /* nothing compressed away: the moments' basis itself */
        rad->u = sv_alloc(ctx, sizeof(double) * (size_t)n * rad->rank, "radiation basis");
        if (!rad->u) s = sv_last_status();
        else memcpy(rad->u, mt, sizeof(double) * (size_t)n * rad->rank);
    }
    if (rad) {
        const sv_em_stackup *st = &m->prj->st;
        rad->info = (sv_em_radiation_info){.degree = pl.D, .moments = Q, .rank = rad->rank, .terms = rad->nterms,
                                           .band_residual = rad->info.band_residual, .moment_rank = rad->info.moment_rank, .ka = pl.k0d * pl.a,
                                           .k1h = pl.k0d * st->h * sqrt(st->eps_r), .size_m = pl.a,
                                           .limit_hz = sv_em_radiation_limit_hz(m), .design_hz = fmax_hz};
    }
    sv_free(ctx, mt);
    sv_free(ctx, rr);
    sv_free(ctx, sp);
    sv_free(ctx, pl.cs);
    sv_threads_restore(ts);
    if (s) {
        sv_em_radiation_destroy(rad);
        return s;
    }
    *out = rad;
    return SV_OK;
}

void sv_em_radiation_destroy(sv_em_radiation *r)
{
    if (!r) return;
    sv_free(r->ctx, r->u);
    sv_free(r->ctx, r->w);
    sv_free(r->ctx, r->poly);
    sv_free(r->ctx, r);
}

int sv_em_radiation_terms(const sv_em_radiation *r) { return r ? r->nterms : 0; }
void sv_em_radiation_get_info(const sv_em_radiation *r, sv_em_radiation_info *info) { *info = r->info; }

double sv_em_radiation_coef(const sv_em_radiation *r, int j, double freq_hz)
{
    double k0 = 2 * SV_EM_PI * freq_hz / SV_EM_C0, x = k0 / r->k0_design, s = 0, xp = 1;
    const double *p = r->poly + (size_t)j * r->nexp;
    for (int e = 0; e < r->nexp; e++, xp *= x) s += p[e] * xp;
    return k0 * k0 * k0 * k0 * s;
}

const double *sv_em_radiation_basis(const sv_em_radiation *r, int *rank)
{
    *rank = r->rank;
    return r->u;
}

const double *sv_em_radiation_core(const sv_em_radiation *r, int j) { return r->w + (size_t)r->rank * r->rank * j; }

double sv_em_radiation_design_hz(const sv_em_model *m)
{
    if (m->opts.max_freq_hz > 0) return m->opts.max_freq_hz;
    if (m->prj->sweep.present && m->prj->sweep.stop_hz > 0) return m->prj->sweep.stop_hz;
    return sv_em_radiation_limit_hz(m);
}

/* Relative accuracy of the terms: far tighter than the physics (the thin-
 * slab expansion is good to O((k0·h)²)), so that the terms never limit the
 * sweep's own accuracy. */
double sv_em_radiation_tolerance(const sv_em_model *m) { return fmax(1e-4, 1e4 * m->opts.accuracy); }

size_t sv_em_radiation_build_bytes(int n, double a, double fmax_hz, double tol, int *moments)
{
    if (moments) *moments = 0;
    if (n < 1 || !(a > 0) || !(fmax_hz > 0)) return 0;
    int D = choose_degree(2 * SV_EM_PI * fmax_hz / SV_EM_C0 * a, tol);
    size_t Q = 2 * (size_t)monomials(D, NULL, NULL), nexp = 2 * (size_t)D + 2;
    if (moments) *moments = (int)Q;
    /* plan_make's coefficient matrices, the moments and their R, the band
     * samples and the compressed basis and cores, all held at once at most,
     * and the projection's buffers (3·Q² per thread of the team) */
    return sizeof(double) * (Q * Q * nexp + (size_t)n * Q + Q * Q + Q * Q * nexp + (size_t)n * Q +
                             Q * Q * SV_EM_RAD_MAX_TERMS + 3 * Q * Q * (size_t)sv_threads_team()) +
           sizeof(lapack_int) * Q;
}

size_t sv_em_model_radiation_bytes(const sv_em_model *m) { return m ? sv_em_radiation_bytes(m->rad) : 0; }

size_t sv_em_radiation_bytes(const sv_em_radiation *r)
{
    if (!r) return 0;
    return sizeof(*r) + sizeof(double) * ((size_t)r->n * (r->rank ? r->rank : 1) +
                                           (size_t)r->rank * r->rank * (r->nterms ? r->nterms : 1) +
                                           (size_t)r->nexp * (r->nterms ? r->nterms : 1));
}
