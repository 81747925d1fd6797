/* Dispersion: the reactive first-order retardation of the grounded slab's
 * kernels (docs/em.md, "Dispersion").
 *
 * The quasi-static kernels are the slab's at k0 = 0. Their change to first
 * order in k0² is exact in the slab's thickness: the spectral kernels of
 * formulation C, G̃_A = μ0/D_TE and G̃_φ = (u0 + u1·tanh u1h)/(ε0·D_TE·D_TM),
 * differentiated in k0² at k0 = 0 (analytic in k0² there for every kρ > 0:
 * no pole, no branch point; the derivative grows like 1/kρ as kρ → 0, and
 * kρ·∂G̃/∂(k0²) is smooth), Hankel-transformed. The transform is taken by fitting
 * kρ·∂G̃/∂(k0²)/(2π) with a sum of exponentials Σ a_i·e^(−kρ·z_i) on fixed
 * heights z_i, so that the spatial kernel is Σ a_i/√(ρ² + z_i²): smooth,
 * finite at ρ = 0, c/ρ far away. With s = k0² the model gains
 *   jω·s·L₂ = jω³/c²·L₂      (the current's kernel F_A: a term of its own)
 *   −j·s·Ψ₂/ω = −jω·Ψ₂/c²    (the charge's F_φ: folded into L)
 * Both corrections are smooth kernels, so their Galerkin integrals take
 * Gauss–Legendre rules over the basis functions' autocorrelations (rooftop
 * pairs and cell pairs, one table entry per offset) and over the profiles
 * themselves (port half rooftops). They use the sheet's current and charge:
 * thick metal's walls and the edge profile change only the near field of
 * the static kernels, not these smooth corrections; and the real εr (the
 * loss tangent's share of a correction is of second order). The same
 * tables and rules assemble the far field's terms beyond the first order
 * (dispersion_far.c), one packed matrix each, current and charge in one. */
#include <complex.h>
#include <lapacke.h>
#include <math.h>
#include <omp.h>
#include <string.h>

#include "em_internal.h"
#include "geom.h"

/* Heights of the exponential fit: DISP_IMAGES from 10^−1.5·h to 10^2.5·h
 * fit both kernels' spectra over kρ·h in [1e-4, 1e3] to about 1e-4 (F_A)
 * and 3e-4 (F_φ) of their largest value on εr 2.2 … 10.2, the spatial
 * kernels for ρ ≥ 0.3h to about 2e-4 (F_A) and 2.5e-3 (F_φ) of their value
 * at 0 (0.4 % and 1 % at ρ = 0, their cusp; tests/em/test_dispersion.c):
 * ample for a correction of a few per cent. */
#define DISP_IMAGES 17
#define DISP_SAMPLES 600
#define DISP_LOG_Z0 (-1.5)
#define DISP_LOG_Z1 2.5
#define DISP_LOG_K0 (-4.0)
#define DISP_LOG_K1 3.0
/* Gauss–Legendre points per piece of a basis function: near pairs (within
 * DISP_NEAR cells, where the kernel's cusp at ρ = 0 is; 4 per substrate
 * thickness a cell spans, as the kernels vary on the scale of h, up to
 * DISP_GL_NEAR_MAX), and far ones. */
#define DISP_GL_NEAR 4
#define DISP_GL_NEAR_MAX 12
#define DISP_GL_FAR 2
#define DISP_NEAR 3

/* The near and far rules of a model's cells and substrate, made once per
 * assembly for its tables and its port rows. */
typedef struct disp_rules {
    sv_em_gl_rule near, far;
} disp_rules;

static void rules_make(const sv_em_model *m, disp_rules *r)
{
    double cell = fmax(m->prj->grid.dx, m->prj->grid.dy);
    int n = DISP_GL_NEAR * (int)ceil(cell / m->prj->st.h);
    sv_em_gl_make(n < DISP_GL_NEAR ? DISP_GL_NEAR : n > DISP_GL_NEAR_MAX ? DISP_GL_NEAR_MAX : n, 0, &r->near);
    sv_em_gl_make(DISP_GL_FAR, 0, &r->far);
}

struct sv_em_dispersion_kernel {
    int n;
    double z[DISP_IMAGES];     /* m */
    double a_A[DISP_IMAGES];   /* F_A(ρ) = ∂G_A/∂(k0²) = Σ a_A/√(ρ² + z²) */
    double a_phi[DISP_IMAGES]; /* F_φ(ρ) = ∂G_φ/∂(k0²) = Σ a_phi/√(ρ² + z²) */
};

/* ∂/∂σ at σ = 0 of the dimensionless spectral kernels g_A = 1/d_TE and
 * g_φ = n/(d_TE·d_TM) (κ = kρ·h, σ = k0²·h²), by a complex step in σ: the
 * kernels are analytic in σ near 0 for κ > 0, and the step has no
 * subtraction to lose digits to. */
static void spectra_derivative(double kappa, double eps_r, double *dgA, double *dgphi)
{
    double step = 1e-30 * kappa * kappa;
    double complex s = I * step;
    double complex u0 = csqrt(kappa * kappa - s), u1 = csqrt(kappa * kappa - eps_r * s);
    double complex t = ctanh(u1);
    double complex dte = u0 + u1 / t, dtm = eps_r * u0 + u1 * t, num = u0 + u1 * t;
    *dgA = cimag(1 / dte) / step;
    *dgphi = cimag(num / (dte * dtm)) / step;
}

/* min ‖a·x − b‖ for both columns of b (DISP_SAMPLES × DISP_IMAGES, two
 * right-hand sides; x into b's first rows) by dgelsd, its workspace from
 * the context like every other allocation (queried first). */
static sv_status least_squares(sv_ctx *ctx, double *a, double *b, double *sv)
{
    double wq = 0;
    lapack_int rank = 0, iq = 0;
    lapack_int info = LAPACKE_dgelsd_work(LAPACK_COL_MAJOR, DISP_SAMPLES, DISP_IMAGES, 2, a, DISP_SAMPLES, b,
                                          DISP_SAMPLES, sv, 1e-13, &rank, &wq, -1, &iq);
    size_t lwork = (size_t)wq + 1, liwork = (size_t)(iq > 1 ? iq : 1);
    double *work = info ? NULL : sv_alloc(ctx, sizeof(double) * lwork, "dispersion kernel fit workspace");
    lapack_int *iwork = work ? sv_alloc(ctx, sizeof(lapack_int) * liwork, "dispersion kernel fit workspace") : NULL;
    if (!info && !iwork) {
        sv_free(ctx, work);
        return sv_last_status();
    }
    if (!info)
        info = LAPACKE_dgelsd_work(LAPACK_COL_MAJOR, DISP_SAMPLES, DISP_IMAGES, 2, a, DISP_SAMPLES, b, DISP_SAMPLES, sv,
                                   1e-13, &rank, work, (lapack_int)lwork, iwork);
    sv_free(ctx, work);
    sv_free(ctx, iwork);
    if (info) return sv_error(SV_ERR_NOCONV, "dispersion kernel: the exponential fit failed (dgelsd info %d)", (int)info);
    return SV_OK;
}

/* The fit of both spectra, kρ·∂g/∂σ ≈ Σ c_i·e^(−κ·ζ_i) on κ = kρ·h sampled
 * log-uniformly, by least squares (the small singular values of the
 * exponentials' near-collinear columns cut at 1e-13): cA and cphi. */
static sv_status fit_spectra(sv_ctx *ctx, double eps_r, const double *zeta, double *cA, double *cphi)
{
    double *a = sv_alloc(ctx, sizeof(double) * DISP_SAMPLES * DISP_IMAGES, "dispersion kernel fit");
    double *b = sv_alloc(ctx, sizeof(double) * DISP_SAMPLES * 2, "dispersion kernel fit");
    double *sv = sv_alloc(ctx, sizeof(double) * DISP_IMAGES, "dispersion kernel fit");
    sv_status st = a && b && sv ? SV_OK : sv_last_status();
    for (int j = 0; !st && j < DISP_SAMPLES; j++) {
        double kappa = pow(10, DISP_LOG_K0 + (DISP_LOG_K1 - DISP_LOG_K0) * j / (DISP_SAMPLES - 1)), dA, dphi;
        spectra_derivative(kappa, eps_r, &dA, &dphi);
        b[j] = kappa * dA;
        b[j + DISP_SAMPLES] = kappa * dphi;
        for (int i = 0; i < DISP_IMAGES; i++) a[j + (size_t)DISP_SAMPLES * i] = exp(-kappa * zeta[i]);
    }
    if (!st) st = least_squares(ctx, a, b, sv);
    for (int i = 0; !st && i < DISP_IMAGES; i++) {
        cA[i] = b[i];
        cphi[i] = b[i + DISP_SAMPLES];
    }
    sv_free(ctx, a);
    sv_free(ctx, b);
    sv_free(ctx, sv);
    return st;
}

sv_status sv_em_dispersion_kernel_make(sv_ctx *ctx, double h, double eps_r, sv_em_dispersion_kernel **out)
{
    *out = NULL;
    sv_em_dispersion_kernel *k = sv_calloc(ctx, 1, sizeof *k, "dispersion kernel");
    if (!k) return sv_last_status();
    double zeta[DISP_IMAGES], cA[DISP_IMAGES], cphi[DISP_IMAGES];
    for (int i = 0; i < DISP_IMAGES; i++)
        zeta[i] = pow(10, DISP_LOG_Z0 + (DISP_LOG_Z1 - DISP_LOG_Z0) * i / (DISP_IMAGES - 1));
    sv_status st = fit_spectra(ctx, eps_r, zeta, cA, cphi);
    if (st) {
        sv_free(ctx, k);
        return st;
    }
    /* back to metres: G̃_A = μ0·h·g_A, G̃_φ = h·g_φ/ε0, ∂/∂(k0²) = h²·∂/∂σ, and
     * the spatial kernel of e^(−kρ·z) is 1/√(ρ² + z²) */
    k->n = DISP_IMAGES;
    for (int i = 0; i < DISP_IMAGES; i++) {
        k->z[i] = zeta[i] * h;
        k->a_A[i] = SV_EM_MU0 * h * h / (2 * SV_EM_PI) * cA[i];
        k->a_phi[i] = h * h / (2 * SV_EM_PI * SV_EM_EPS0) * cphi[i];
    }
    *out = k;
    return SV_OK;
}

void sv_em_dispersion_kernel_destroy(sv_ctx *ctx, sv_em_dispersion_kernel *k) { sv_free(ctx, k); }

static double kernel_at(const double *a, const double *z, int n, double rho2)
{
    double s = 0;
    for (int i = 0; i < n; i++) s += a[i] / sqrt(rho2 + z[i] * z[i]);
    return s;
}

/* A kernel of the tables: the first order's images or a far-field term's
 * interpolant, at ρ². */
typedef struct disp_kernel {
    const sv_em_dispersion_kernel *images; /* the first order (a_A or a_phi), or NULL */
    const double *a;
    const sv_em_disp_far *far;             /* else far-field term `term`, its current's or charge's part */
    int term, charge;
} disp_kernel;

static double kernel_eval(const disp_kernel *k, double rho2)
{
    if (k->images) return kernel_at(k->a, k->images->z, k->images->n, rho2);
    double rho = sqrt(rho2);
    return k->charge ? sv_em_disp_far_kernel_phi(k->far, k->term, rho) : sv_em_disp_far_kernel_A(k->far, k->term, rho);
}

double sv_em_dispersion_FA(const sv_em_dispersion_kernel *k, double rho)
{
    return kernel_at(k->a_A, k->z, k->n, rho * rho);
}

double sv_em_dispersion_Fphi(const sv_em_dispersion_kernel *k, double rho)
{
    return kernel_at(k->a_phi, k->z, k->n, rho * rho);
}

/* ---- the tables: one entry per offset ---- */

/* The along-axis autocorrelation of two rooftops' triangles of half-width
 * d (a cubic B-spline of integral d²) at v, and the across-axis one of two
 * uniform strips of width w, normalised to integral 1. */
static double tri_autocorrelation(double v, double d)
{
    double t = fabs(v) / d;
    if (t >= 2) return 0;
    if (t <= 1) return d * (2.0 / 3 - t * t + 0.5 * t * t * t);
    return d * (2 - t) * (2 - t) * (2 - t) / 6;
}

static double box_autocorrelation(double v, double w) { return fabs(v) >= w ? 0 : (w - fabs(v)) / (w * w); }

/* ∫∫ wa(v)·wb(t)·F(√((v + D)² + (t + T)²)) over v ∈ [−2d, 2d] (pieces of
 * width d: the B-spline's knots) and t ∈ [−w, w] (pieces of width w): the
 * integrand is smooth on each piece, the kernel's cusp at a corner. */
static double table_integral(const disp_kernel *k, const sv_em_gl_rule *g, int along_pieces, double d, double w,
                             double D, double T, int is_cells)
{
    double s = 0;
    for (int pa = 0; pa < along_pieces; pa++) {
        double v0 = (pa - along_pieces / 2) * d;
        for (int pt = 0; pt < 2; pt++) {
            double t0 = (pt - 1) * w;
            for (int ka = 0; ka < g->n; ka++) {
                double v = v0 + g->t[ka] * d;
                double wa = is_cells ? box_autocorrelation(v, d) : tri_autocorrelation(v, d);
                for (int kt = 0; kt < g->n; kt++) {
                    double t = t0 + g->t[kt] * w, x = v + D, y = t + T;
                    s += g->w[ka] * g->w[kt] * wa * box_autocorrelation(t, w) * kernel_eval(k, x * x + y * y);
                }
            }
        }
    }
    return s * d * w;
}

static const sv_em_gl_rule *rule_for(int di, int dj, const disp_rules *r)
{
    return abs(di) <= DISP_NEAR && abs(dj) <= DISP_NEAR ? &r->near : &r->far;
}

/* P₂ of cell pairs (F_φ), Lx₂ and Ly₂ of parallel rooftops (F_A), by
 * offset, in the static tables' normalisation (sv_em_P_cells,
 * sv_em_L_rooftops): a cell's charge and a rooftop's current across are
 * uniform, so P₂ weighs F_φ with two unit tents (box autocorrelations) and
 * L₂ with the triangles' B-spline along and a unit tent across. */
static sv_status tables_fill(sv_ctx *ctx, const sv_em_model *m, const disp_kernel *kA, const disp_kernel *kP,
                             const disp_rules *rules, sv_em_tables *t)
{
    double dx = m->prj->grid.dx, dy = m->prj->grid.dy;
    int nq = t->nx * t->ny;
    sv_progress_loop loop = sv_progress_loop_begin(ctx, "dispersion", nq);
#pragma omp parallel for schedule(dynamic, 8) num_threads(sv_threads_team())
    for (int q = 0; q < nq; q++) {
        if (sv_progress_loop_at(&loop, q)) continue;
        int di = q % t->nx, dj = q / t->nx;
        const sv_em_gl_rule *g = rule_for(di, dj, rules);
        /* cells: tent along x (width dx) times tent along y, each of integral 1 */
        t->P[q] = table_integral(kP, g, 2, dx, dy, di * dx, dj * dy, 1);
        t->Lx[q] = table_integral(kA, g, 4, dx, dy, di * dx, dj * dy, 0);
        t->Ly[q] = table_integral(kA, g, 4, dy, dx, dj * dy, di * dx, 0);
    }
    return sv_progress_loop_end(&loop);
}

/* ---- port half rooftops: their profiles themselves ---- */

typedef struct profile_points {
    int n;
    double along[2 * DISP_GL_NEAR_MAX * DISP_GL_NEAR_MAX], across[2 * DISP_GL_NEAR_MAX * DISP_GL_NEAR_MAX];
    double w[2 * DISP_GL_NEAR_MAX * DISP_GL_NEAR_MAX];
} profile_points;

/* Quadrature points of a profile: its along pieces (a rooftop's two sides,
 * a half rooftop's one) times its width, weights carrying the profile's
 * value and the 1/width of a unit current. */
static void profile_quadrature(const sv_em_profile_t *p, const sv_em_gl_rule *g, profile_points *out)
{
    double lo[2], hi[2];
    int np = 0;
    if (p->half >= 0) { lo[np] = p->e; hi[np++] = p->e + p->d; }
    if (p->half <= 0) { lo[np] = p->e - p->d; hi[np++] = p->e; }
    double width = p->t2 - p->t1;
    out->n = 0;
    for (int k = 0; k < np; k++)
        for (int a = 0; a < g->n; a++) {
            double x = lo[k] + g->t[a] * (hi[k] - lo[k]);
            double value = 1 - fabs(x - p->e) / p->d; /* the peak 1 at the edge e */
            for (int b = 0; b < g->n; b++) {
                out->along[out->n] = x;
                out->across[out->n] = p->t1 + g->t[b] * width;
                out->w[out->n++] = g->w[a] * (hi[k] - lo[k]) * value * g->w[b];
            }
        }
}

static double port_L2(const sv_em_model *m, const disp_kernel *k, const disp_rules *rules, int r, int c)
{
    sv_em_profile_t a, b;
    sv_em_profile(m, r, &a);
    sv_em_profile(m, c, &b);
    if (a.axis != b.axis) return 0;
    const sv_em_basis *br = &m->basis[r], *bc = &m->basis[c];
    const sv_em_gl_rule *g = rule_for(br->i - bc->i, br->j - bc->j, rules);
    profile_points pa, pb;
    profile_quadrature(&a, g, &pa);
    profile_quadrature(&b, g, &pb);
    double s = 0;
    for (int u = 0; u < pa.n; u++)
        for (int v = 0; v < pb.n; v++) {
            double x = pa.along[u] - pb.along[v], y = pa.across[u] - pb.across[v];
            s += pa.w[u] * pb.w[v] * kernel_eval(k, x * x + y * y);
        }
    return a.sign * b.sign * s;
}

/* Where the expansion keeps εeff within about 2 % of Kirschning and Jansen
 * on the boards measured (tests/em/test_dispersion.c): the first order
 * alone to k0·h·√εr = 0.33, with its far field resummed to 0.45 (the
 * 1.6-mm line: +1.27 % at 6.4 GHz, where the first order alone is −3 %). */
#define DISP_VALID_K0H 0.33
#define DISP_VALID_K0H_FAR 0.45

double sv_em_model_dispersion_limit_hz(const sv_em_model *m)
{
    if (!m || !m->prj->dispersion) return 0;
    const sv_em_stackup *st = &m->prj->st;
    double k0h = sv_em_model_dispersion_far_terms(m) ? DISP_VALID_K0H_FAR : DISP_VALID_K0H;
    return k0h * SV_EM_C0 / (2 * SV_EM_PI * st->h * sqrt(st->eps_r));
}

/* ---- the assembly ---- */

int sv_em_dispersion_terms(const sv_em_model *m)
{
    return m && m->prj->dispersion ? 1 + sv_em_model_dispersion_far_terms(m) : 0;
}

int sv_em_model_dispersion_far_terms(const sv_em_model *m)
{
    return m && m->prj->dispersion ? sv_em_disp_far_terms(m->disp_far) : 0;
}

size_t sv_em_dispersion_bytes(const sv_em_model *m)
{
    return (size_t)sv_em_dispersion_terms(m) * sv_dense_sym_bytes(m ? m->n : 0, SV_DENSE_R64, 0);
}

double complex sv_em_dispersion_coef(const sv_em_model *m, int j, double freq_hz)
{
    double w = 2 * SV_EM_PI * freq_hz, k0 = w / SV_EM_C0;
    if (j == 0) return I * w * k0 * k0; /* jω·k0²·L₂ */
    return I * w * k0 * sv_em_disp_far_weight(m->disp_far, j - 1, k0);
}

/* Every entry (r ≥ c) of a packed term from the tables (rooftop pairs) or
 * the profiles (port rows): the current's part into `term`, the charge's
 * −Ψ/c² into `fold` (L's for the first order, the term's own for the far
 * field's terms, whose coefficient serves both). */
static sv_status fill_columns(sv_ctx *ctx, const sv_em_model *m, const disp_kernel *kA, const disp_rules *rules,
                              const sv_em_tables *t, int nb, double *term, double *fold)
{
    int n = m->n, nrt = m->nx_edges + m->ny_edges;
    const sv_em_basis *B = m->basis;
    const double c2 = SV_EM_C0 * SV_EM_C0;
    sv_progress_loop loop = sv_progress_loop_begin(ctx, "dispersion", (double)n * n);
#pragma omp parallel for schedule(dynamic, 16) num_threads(sv_threads_team())
    for (int c = 0; c < n; c++) {
        if (sv_progress_loop_at(&loop, sv_em_columns_before(n, c))) continue;
        size_t base = sv_dense_packed_offset(n, nb, c, c); /* (r, c) at base + r − c for r ≥ c */
        for (int r = c; r < n; r++) {
            const sv_em_basis *br = &B[r], *bc = &B[c];
            double l, p;
            if (r < nrt) {
                sv_em_tables_pair(t, br->kind, br->i, br->j, bc->kind, bc->i, bc->j, &l, &p, NULL);
            } else {
                l = port_L2(m, kA, rules, r, c);
                p = sv_em_psi_cells(t->P, t->nx, br->kind, br->i, br->j, bc->kind, bc->i, bc->j);
            }
            term[base + (size_t)(r - c)] = l;
            fold[base + (size_t)(r - c)] -= p / c2;
        }
    }
    return sv_progress_loop_end(&loop);
}

/* The shares of a term's progress: its tables (a quadrature per offset),
 * its entries; and of the whole: the kernel's fit with the terms' zero
 * fill, the terms (rough costs). */
#define SHARE_TABLES 1.0
#define SHARE_FILL 1.0
#define SHARE_ALLOC 0.2
#define SHARE_TERMS 0.8

/* One term: its tables by offset, folded, then its entries. */
static sv_status assemble_term(sv_ctx *ctx, const sv_em_model *m, const disp_kernel *kA, const disp_kernel *kP,
                               const disp_rules *rules, sv_em_tables *t, int nb, double *term, double *fold)
{
    sv_em_parts parts = sv_em_parts_begin(ctx, SHARE_TABLES + SHARE_FILL);
    sv_em_part(&parts, SHARE_TABLES);
    sv_status st = tables_fill(ctx, m, kA, kP, rules, t);
    if (!st) sv_em_tables_fold(t);
    sv_em_part(&parts, SHARE_FILL);
    if (!st) st = fill_columns(ctx, m, kA, rules, t, nb, term, fold);
    sv_em_parts_end(&parts);
    return st;
}

/* Every term in turn, each an equal part of the progress: the first
 * order's (its charge's part into L), then the far field's. */
static sv_status assemble_terms(sv_ctx *ctx, const sv_em_model *m, const sv_em_dispersion_kernel *k,
                                sv_em_tables *t, sv_dense_sym *L, sv_dense_sym **terms)
{
    int nt = sv_em_dispersion_terms(m), nb = sv_dense_sym_block(L);
    disp_rules rules;
    rules_make(m, &rules);
    sv_em_parts parts = sv_em_parts_begin(ctx, nt);
    sv_em_part(&parts, 1);
    disp_kernel kA = {.images = k, .a = k->a_A}, kP = {.images = k, .a = k->a_phi};
    sv_status st = assemble_term(ctx, m, &kA, &kP, &rules, t, nb, sv_dense_sym_data(terms[0]), sv_dense_sym_data(L));
    for (int j = 1; j < nt && !st; j++) {
        sv_em_part(&parts, 1);
        double *term = sv_dense_sym_data(terms[j]);
        disp_kernel fA = {.far = m->disp_far, .term = j - 1}, fP = {.far = m->disp_far, .term = j - 1, .charge = 1};
        st = assemble_term(ctx, m, &fA, &fP, &rules, t, nb, term, term);
    }
    sv_em_parts_end(&parts);
    return st;
}

sv_status sv_em_dispersion_assemble(sv_ctx *ctx, const sv_em_model *m, sv_dense_sym *L, sv_dense_sym **terms)
{
    int nt = sv_em_dispersion_terms(m);
    for (int j = 0; j < nt; j++) terms[j] = NULL;
    sv_em_dispersion_kernel *k = NULL;
    sv_em_tables t;
    sv_em_tables_describe(m, 0, &t);
    /* the kernel's fit and the terms' zero fill, then the terms */
    sv_em_parts parts = sv_em_parts_begin(ctx, SHARE_ALLOC + SHARE_TERMS);
    sv_em_part(&parts, SHARE_ALLOC);
    sv_status st = sv_em_dispersion_kernel_make(ctx, m->prj->st.h, m->prj->st.eps_r, &k);
    if (!st) st = sv_mem_check(ctx, sv_em_dispersion_bytes(m), "the dispersion terms (packed)");
    if (!st) st = sv_progress(ctx, "dispersion", 1.0 / (nt + 1));
    for (int j = 0; !st && j < nt; j++) {
        st = sv_dense_sym_create(ctx, m->n, SV_DENSE_R64, sv_dense_sym_block(L), &terms[j]);
        if (!st) st = sv_progress(ctx, "dispersion", (j + 2.0) / (nt + 1));
    }
    if (!st) st = sv_em_tables_alloc(ctx, &t, SV_EM_TABLES_FOLDED);
    sv_em_part(&parts, SHARE_TERMS);
    if (!st) {
        sv_threads_saved prev = sv_threads_apply(ctx);
        st = assemble_terms(ctx, m, k, &t, L, terms);
        sv_threads_restore(prev);
        sv_em_tables_free(ctx, &t);
    }
    sv_em_parts_end(&parts);
    for (int j = 0; j < nt && st; j++) { /* no partial terms */
        sv_dense_sym_destroy(terms[j]);
        terms[j] = NULL;
    }
    sv_em_dispersion_kernel_destroy(ctx, k);
    return st;
}
