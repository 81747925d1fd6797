/* Low-rank terms (SV_SWEEP_TERM_LOWRANK, U·W_k·Uᵀ sharing one U) against
 * the same terms given as packed matrices, which the test builds itself
 * from U and W_k: products, residuals, exact solves (mixed, double,
 * LAPACK) and their derivatives, the adaptive sweep's outputs, its residual
 * estimate against the true residual (computed here from full matrices),
 * its memory estimate, and the validation of the terms. */
#include <lapacke.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "support_synth.h"
#include "sv_test.h"
#include "sweep/sweep_internal.h"

#define NLR 3 /* low-rank terms */
#define RANK 7

typedef struct lr_case {
    synth s;
    double *u, *w[NLR], *full[NLR], *packed[NLR];
    sv_sweep_term terms[3 + NLR];
    sv_sweep_model *lowrank, *dense; /* the same Z(f): low-rank terms, or packed */
} lr_case;

/* c_k: the synthetic model's three, then a resistive f⁴-like term, one
 * rising with f and one complex (so that forming takes an imaginary part). */
static double complex lr_coef(void *user, int k, double f)
{
    lr_case *c = user;
    if (k < 3) return synth_coef(&c->s, k, f);
    double x = f / 1e9;
    switch (k - 3) {
    case 0: return 0.4 * x * x * x * x / (1 + 0.01 * x * x * x * x);
    case 1: return 2.0 * x;
    default: return (0.3 + 0.2 * I) * x * x;
    }
}

static void lr_open(lr_case *c, int n, int nb, unsigned long long seed)
{
    memset(c, 0, sizeof *c);
    synth_create(&c->s, n, nb, 2, 3, 0.05, seed);
    sv_test_rng r;
    sv_test_rng_seed(&r, seed + 1);
    c->u = malloc(sizeof(double) * n * RANK);
    for (int e = 0; e < n * RANK; e++) c->u[e] = sv_test_uniform(&r) - 0.5;
    for (int k = 0; k < NLR; k++) {
        /* W_k = G·Gᵀ (positive semidefinite, like radiation) for k = 0, indefinite else;
         * the upper triangle is NaN: only the lower one may be read */
        double *g = malloc(sizeof(double) * RANK * RANK);
        for (int e = 0; e < RANK * RANK; e++) g[e] = sv_test_uniform(&r) - 0.5;
        c->w[k] = malloc(sizeof(double) * RANK * RANK);
        for (int b = 0; b < RANK; b++)
            for (int a = 0; a < RANK; a++) {
                double v = 0;
                if (k == 0)
                    for (int t = 0; t < RANK; t++) v += g[a + RANK * t] * g[b + RANK * t];
                else
                    v = 0.5 * (g[a + RANK * b] + g[b + RANK * a]);
                c->w[k][a + RANK * b] = a >= b ? v * 0.1 : NAN; /* a few per cent of ωL at the top */
            }
        free(g);
        /* the full U·W·Uᵀ, computed here entry by entry */
        c->full[k] = malloc(sizeof(double) * n * n);
        for (int j = 0; j < n; j++)
            for (int i = 0; i < n; i++) {
                double v = 0;
                for (int a = 0; a < RANK; a++)
                    for (int b = 0; b < RANK; b++) {
                        double wab = a >= b ? c->w[k][a + RANK * b] : c->w[k][b + RANK * a];
                        v += c->u[i + n * a] * wab * c->u[j + n * b];
                    }
                c->full[k][i + (size_t)n * j] = v;
            }
        c->packed[k] = synth_pack(n, nb, c->full[k]);
    }
    memcpy(c->terms, c->s.terms, sizeof(sv_sweep_term) * 3);
    for (int k = 0; k < NLR; k++)
        c->terms[3 + k] = (sv_sweep_term){.kind = SV_SWEEP_TERM_LOWRANK, .u = c->u, .rank = RANK, .core = c->w[k]};
    assert_int_equal(sv_sweep_model_create(NULL, n, 3 + NLR, c->terms, lr_coef, c, 2, c->s.b, n, &c->lowrank),
                     SV_OK);
    sv_sweep_term dense[3 + NLR];
    memcpy(dense, c->terms, sizeof dense);
    for (int k = 0; k < NLR; k++) dense[3 + k] = (sv_sweep_term){.kind = SV_SWEEP_TERM_PACKED, .packed = c->packed[k], .nb = nb};
    assert_int_equal(sv_sweep_model_create(NULL, n, 3 + NLR, dense, lr_coef, c, 2, c->s.b, n, &c->dense), SV_OK);
}

static void lr_close(lr_case *c)
{
    sv_sweep_model_destroy(c->lowrank);
    sv_sweep_model_destroy(c->dense);
    for (int k = 0; k < NLR; k++) {
        free(c->w[k]);
        free(c->full[k]);
        free(c->packed[k]);
    }
    free(c->u);
    synth_destroy(&c->s);
}

/* Full Z(f), from the test's own matrices. */
static void lr_full_z(const lr_case *c, double f, double complex *z)
{
    int n = c->s.n;
    synth_full_z(&c->s, f, z);
    for (int k = 0; k < NLR; k++) {
        double complex ck = lr_coef((void *)c, 3 + k, f);
        for (size_t e = 0; e < (size_t)n * n; e++) z[e] += ck * c->full[k][e];
    }
}

static double rel_diff(size_t len, const double complex *a, const double complex *b)
{
    double d = 0, m = 0;
    for (size_t e = 0; e < len; e++) {
        d = fmax(d, cabs(a[e] - b[e]));
        m = fmax(m, cabs(b[e]));
    }
    return d / m;
}

static void test_products(void **state)
{
    (void)state;
    lr_case c;
    int n = 70;
    lr_open(&c, n, 16, 11);
    int nc = 5;
    double *x = malloc(sizeof(double) * n * nc), *y1 = malloc(sizeof(double) * n * nc * (3 + NLR)),
           *y2 = malloc(sizeof(double) * n * nc * (3 + NLR));
    for (int e = 0; e < n * nc; e++) x[e] = cos(0.37 * e);
    assert_int_equal(sv_sweep_model_apply_terms(c.lowrank, nc, x, y1), SV_OK);
    assert_int_equal(sv_sweep_model_apply_terms(c.dense, nc, x, y2), SV_OK);
    for (int k = 0; k < 3 + NLR; k++) { /* each term against its packed self */
        double d = 0, m = 0;
        for (int e = k * n * nc; e < (k + 1) * n * nc; e++) {
            d = fmax(d, fabs(y1[e] - y2[e]));
            m = fmax(m, fabs(y2[e]));
        }
        print_message("A_%d·X: low-rank vs packed %.1e (relative)\n", k, d / m);
        assert_true(d <= 1e-13 * m);
    }
    assert_int_equal(sv_sweep_model_apply_term(c.lowrank, 4, nc, x, n, y1, n), SV_OK);
    double m4 = 0;
    for (int e = 0; e < n * nc; e++) m4 = fmax(m4, fabs(y2[(size_t)4 * n * nc + e]));
    for (int e = 0; e < n * nc; e++) assert_true(fabs(y1[e] - y2[(size_t)4 * n * nc + e]) <= 1e-13 * m4);
    double complex *xc = malloc(sizeof(double complex) * n * 2), *r1 = malloc(sizeof(double complex) * n * 2),
                   *r2 = malloc(sizeof(double complex) * n * 2);
    for (int e = 0; e < n * 2; e++) xc[e] = CMPLX(sin(0.2 * e), cos(0.3 * e));
    assert_int_equal(sv_sweep_model_residual(c.lowrank, 3.3e9, xc, n, r1, n), SV_OK);
    assert_int_equal(sv_sweep_model_residual(c.dense, 3.3e9, xc, n, r2, n), SV_OK);
    assert_true(rel_diff((size_t)n * 2, r1, r2) <= 1e-12);
    sv_sweep_shape sh;
    sv_sweep_model_shape(c.lowrank, &sh);
    assert_int_equal(sh.nterms, 3 + NLR);
    assert_int_equal(sh.lowrank, NLR);
    assert_int_equal(sh.lowrank_cols, RANK);
    sv_sweep_model_shape(c.dense, &sh);
    assert_int_equal(sh.lowrank, 0);
    /* the norm bound is an upper bound */
    double z1 = sv_sweep_model_norm_inf(c.lowrank, 5e9), z2 = sv_sweep_model_norm_inf(c.dense, 5e9);
    assert_true(z1 >= z2 * (1 - 1e-12));
    free(x);
    free(y1);
    free(y2);
    free(xc);
    free(r1);
    free(r2);
    lr_close(&c);
}

/* Exact solves of every precision, and derivatives, against LAPACK on the
 * full matrix. */
static void test_exact_solves(void **state)
{
    (void)state;
    lr_case c;
    int n = 90, p = 2;
    lr_open(&c, n, 16, 23);
    double complex *z = malloc(sizeof(double complex) * n * n), *xr = malloc(sizeof(double complex) * n * p),
                   *x = malloc(sizeof(double complex) * n * p), *dx = malloc(sizeof(double complex) * n * p * 3),
                   *dxd = malloc(sizeof(double complex) * n * p * 3), *xd = malloc(sizeof(double complex) * n * p);
    lapack_int *ip = malloc(sizeof(lapack_int) * n);
    const double fs[3] = {0.7e9, 4.4e9, 9.5e9};
    for (int i = 0; i < 3; i++) {
        lr_full_z(&c, fs[i], z);
        for (int e = 0; e < n * p; e++) xr[e] = c.s.b[e];
        assert_int_equal(LAPACKE_zgesv(LAPACK_COL_MAJOR, n, p, z, n, ip, xr, n), 0);
        const sv_sweep_precision pr[3] = {SV_SWEEP_MIXED, SV_SWEEP_DOUBLE, SV_SWEEP_LAPACK};
        for (int q = 0; q < 3; q++) {
            sv_sweep_exact_info info;
            assert_int_equal(sv_sweep_solve_exact(NULL, c.lowrank, fs[i], pr[q], x, n, &info), SV_OK);
            double d = rel_diff((size_t)n * p, x, xr);
            print_message("f = %.2g GHz, precision %d: |X - X_lapack| %.1e, backward error %.1e, %d iterations\n",
                          fs[i] / 1e9, q, d, info.backward_error, info.iterations);
            assert_true(d < 3e-9); /* as the packed terms' solves (test_exact_dense.c): Z's conditioning */
            if (pr[q] == SV_SWEEP_MIXED) assert_true(info.backward_error <= 1e-15);
        }
        assert_int_equal(sv_sweep_solve_exact_deriv(NULL, c.lowrank, fs[i], SV_SWEEP_MIXED, 0, x, n, 3, dx, n, NULL),
                         SV_OK);
        assert_int_equal(sv_sweep_solve_exact_deriv(NULL, c.dense, fs[i], SV_SWEEP_MIXED, 0, xd, n, 3, dxd, n, NULL),
                         SV_OK);
        for (int g = 0; g < 3; g++)
            assert_true(rel_diff((size_t)n * p, dx + (size_t)g * n * p, dxd + (size_t)g * n * p) <= 1e-6);
    }
    free(z);
    free(xr);
    free(x);
    free(dx);
    free(dxd);
    free(xd);
    free(ip);
    lr_close(&c);
}

/* ---- the adaptive sweep ---------------------------------------------------------- */
typedef struct probe {
    const lr_case *c;
    int calls, checked;
    double worst_rel, worst_abs;
} probe;

/* The estimate against the true residual ‖Z·V·y − b‖ / ‖b‖ from the full Z. */
static void hook(void *user, const double *V, int n, int q, const double complex *y, const sv_sweep_result *res)
{
    probe *pr = user;
    int p = 2;
    pr->calls++;
    double complex *z = malloc(sizeof(double complex) * n * n), *x = malloc(sizeof(double complex) * n * p);
    for (int i = 0; i < res->nfreq; i += 4) {
        if (res->exact[i]) continue;
        synth_basis_x(V, n, q, p, y + (size_t)i * q * p, x);
        lr_full_z(pr->c, res->freq[i], z);
        double t = synth_residual_of(n, p, z, pr->c->s.b, x);
        double e = res->residual[i];
        pr->worst_abs = fmax(pr->worst_abs, fabs(e - t));
        if (t > 1e-8) {
            pr->worst_rel = fmax(pr->worst_rel, fabs(e - t) / t);
            pr->checked++;
        }
    }
    free(z);
    free(x);
}

static void test_sweep(void **state)
{
    (void)state;
    lr_case c;
    int n = 110, nf = 41;
    lr_open(&c, n, 16, 37);
    double f[41];
    for (int i = 0; i < nf; i++) f[i] = 1e9 + 9e9 * i / (nf - 1);
    sv_sweep_options o;
    sv_sweep_options_default(&o);
    o.tolerance = 1e-12; /* keep iterating: the estimate is checked at every stage */
    o.max_exact = 10;
    o.derivatives = -1;
    probe pr = {&c, 0, 0, 0, 0};
    sv_sweep_result *r1 = NULL, *r2 = NULL;
    sv_ctx *ctx;
    assert_int_equal(sv_ctx_create(&ctx), SV_OK);
    assert_int_equal(sv_sweep_run_hooked(ctx, c.lowrank, nf, f, &o, hook, &pr, &r1), SV_OK);
    print_message("estimate: %d evaluations, %d checked above 1e-8, worst relative error %.2e, worst absolute %.2e\n",
                  pr.calls, pr.checked, pr.worst_rel, pr.worst_abs);
    assert_true(pr.calls >= 5);
    assert_true(pr.checked > 20);
    assert_true(pr.worst_rel < 1e-3);
    assert_true(pr.worst_abs < 1e-10);
    sv_sweep_shape sh;
    sv_sweep_model_shape(c.lowrank, &sh);
    assert_true(r1->peak_bytes <= sv_sweep_estimate_bytes_shape(n, &sh, 2, 2, 16, nf, &o));
    sv_sweep_result_destroy(r1);
    /* one exact solve alone, forming the low-rank terms into Z(f): within
     * its own estimate, which counts that forming */
    double complex *x = malloc(sizeof *x * (size_t)n * 2);
    sv_sweep_exact_info info;
    sv_ctx_reset_peak(ctx);
    size_t base = sv_ctx_memory_current(ctx), est = sv_sweep_exact_bytes_shape(n, &sh, 2, 16, SV_SWEEP_MIXED);
    assert_int_equal(sv_sweep_solve_exact(ctx, c.lowrank, 5e9, SV_SWEEP_MIXED, x, n, &info), SV_OK);
    print_message("exact solve: peak %zu bytes, estimated %zu\n", sv_ctx_memory_peak(ctx) - base, est);
    assert_true(sv_ctx_memory_peak(ctx) - base <= est);
    sv_sweep_shape packed = {.nterms = sh.nterms};
    assert_true(est > sv_sweep_exact_bytes_shape(n, &packed, 2, 16, SV_SWEEP_MIXED));
    free(x);
    sv_ctx_destroy(ctx);
    /* the default sweep: the same outputs as with the terms packed */
    sv_sweep_options_default(&o);
    assert_int_equal(sv_sweep_run(NULL, c.lowrank, nf, f, &o, &r2), SV_OK);
    sv_sweep_result *r3 = NULL;
    assert_int_equal(sv_sweep_run(NULL, c.dense, nf, f, &o, &r3), SV_OK);
    double d = rel_diff((size_t)nf * 4, r2->h, r3->h);
    print_message("sweep: %d / %d exact solves, |H_lowrank - H_packed| %.1e (relative)\n", r2->n_exact, r3->n_exact, d);
    assert_true(r2->converged);
    assert_true(d <= 1e-8);
    sv_sweep_result_destroy(r2);
    sv_sweep_result_destroy(r3);
    lr_close(&c);
}

static double complex one(void *user, int k, double f)
{
    (void)user;
    (void)k;
    (void)f;
    return 1.0;
}

static void test_validation(void **state)
{
    (void)state;
    int n = 6, r = 2;
    double u[12], w[4] = {1, 0.5, NAN, 2}, w2[4] = {1, 0.5, NAN, 2}, b[6] = {1, 0, 0, 0, 0, 0};
    for (int e = 0; e < 12; e++) u[e] = e + 1;
    sv_sweep_term t = {.kind = SV_SWEEP_TERM_LOWRANK, .u = u, .rank = r, .core = w};
    sv_sweep_model *m = NULL;
    assert_int_equal(sv_sweep_model_create(NULL, n, 1, &t, one, NULL, 1, b, n, &m), SV_OK); /* upper NaN: unread */
    sv_sweep_model_destroy(m);
    t.rank = 0;
    assert_int_equal(sv_sweep_model_create(NULL, n, 1, &t, one, NULL, 1, b, n, &m), SV_ERR_ARG);
    t.rank = 7;
    assert_int_equal(sv_sweep_model_create(NULL, n, 1, &t, one, NULL, 1, b, n, &m), SV_ERR_ARG);
    t.rank = r;
    t.u = NULL;
    assert_int_equal(sv_sweep_model_create(NULL, n, 1, &t, one, NULL, 1, b, n, &m), SV_ERR_ARG);
    t.u = u;
    w2[1] = NAN;
    t.core = w2;
    assert_int_equal(sv_sweep_model_create(NULL, n, 1, &t, one, NULL, 1, b, n, &m), SV_ERR_NONFINITE);
    t.core = w;
    u[3] = INFINITY;
    assert_int_equal(sv_sweep_model_create(NULL, n, 1, &t, one, NULL, 1, b, n, &m), SV_ERR_NONFINITE);
    u[3] = 4;
    sv_sweep_term two[2] = {t, t};
    two[1].rank = 1; /* same U, other rank */
    assert_int_equal(sv_sweep_model_create(NULL, n, 2, two, one, NULL, 1, b, n, &m), SV_ERR_ARG);
    assert_null(m);
    /* two groups: their columns add up */
    double u2[6] = {1, 2, 3, 4, 5, 6};
    two[1] = (sv_sweep_term){.kind = SV_SWEEP_TERM_LOWRANK, .u = u2, .rank = 1, .core = w};
    assert_int_equal(sv_sweep_model_create(NULL, n, 2, two, one, NULL, 1, b, n, &m), SV_OK);
    sv_sweep_shape sh;
    sv_sweep_model_shape(m, &sh);
    assert_int_equal(sh.lowrank, 2);
    assert_int_equal(sh.lowrank_cols, 3);
    sv_sweep_model_destroy(m);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_products),
        cmocka_unit_test(test_exact_solves),
        cmocka_unit_test(test_sweep),
        cmocka_unit_test(test_validation),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
