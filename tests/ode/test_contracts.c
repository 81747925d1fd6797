/* Contracts at the ODE module's edge: what a zero-filled options struct
 * means, the colouring a problem gets (the sparse engine's, on the
 * problem's own pattern), the lane mask of the linear solver's factor, and
 * failures reported by status (a memory budget swept over every size: each
 * call succeeds or returns SV_ERR_BUDGET, and nothing is leaked). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "ode/ode_internal.h"
#include "support_ode.h"
#include "sv_test.h"

/* ROBER's end state and statistics with options o. */
static void run_rober(const sv_ode_options *o, double *y, sv_ode_stats *stats)
{
    sv_ode_builtin *b = NULL;
    assert_int_equal(sv_ode_builtin_create(NULL, "rober", 0, SV_ODE_JAC_ANALYTIC, &b), SV_OK);
    *stats = ode_run_success(b, o, y);
    sv_ode_builtin_destroy(b);
}

/* Zero means the default for every field but the tolerances: a zero-filled
 * struct with rtol and atol set runs exactly as the defaults do. */
static void test_zero_filled_options(void **s)
{
    (void)s;
    sv_ode_options d, z;
    sv_ode_options_default(&d);
    d.rtol = 1e-6, d.atol = 1e-10;
    memset(&z, 0, sizeof z);
    z.rtol = d.rtol, z.atol = d.atol;
    double yd[3], yz[3];
    sv_ode_stats sd, sz;
    run_rober(&d, yd, &sd);
    run_rober(&z, yz, &sz);
    assert_memory_equal(yd, yz, sizeof yd);
    assert_int_equal(sd.accepted, sz.accepted);
    assert_int_equal(sd.rejected, sz.rejected);
    /* beta1 = 0 takes the default gains: beta2 is ignored. */
    z.beta2 = 0.5;
    run_rober(&z, yz, &sz);
    assert_memory_equal(yd, yz, sizeof yd);
    /* With beta1 set, beta2 = 0 is a value (an I controller): other steps. */
    z.beta1 = d.beta1, z.beta2 = 0;
    run_rober(&z, yz, &sz);
    assert_true(sz.accepted != sd.accepted || sz.rejected != sd.rejected);
    /* A zero-filled struct sets no tolerance and is refused. */
    memset(&z, 0, sizeof z);
    sv_ode_builtin *b = NULL;
    assert_int_equal(sv_ode_builtin_create(NULL, "rober", 0, SV_ODE_JAC_ANALYTIC, &b), SV_OK);
    double y[3];
    sv_ode_traj_status st;
    assert_int_equal(ode_run_builtin(b, &z, y, &st, NULL), SV_ERR_ARG);
    assert_non_null(strstr(sv_last_error(), "no error tolerance"));
    sv_ode_options_default(&z);
    z.min_step_rel = NAN;
    assert_int_equal(ode_run_builtin(b, &z, y, &st, NULL), SV_ERR_ARG);
    assert_non_null(strstr(sv_last_error(), "min_step_rel"));
    sv_ode_builtin_destroy(b);
}

static int f_zero(double t, const double *y, const double *p, double *dy, void *u)
{
    (void)t, (void)p, (void)u;
    dy[0] = y[1], dy[1] = y[0], dy[2] = y[3], dy[3] = y[2];
    return 0;
}

/* The problem's colouring is the sparse engine's on the problem's own
 * pattern: a greedy pass by column count, or the engine's best with the
 * diagonal added when that needs fewer colours. Exchanged pairs (no
 * diagonal) need one colour as given and two with the diagonal. */
static void test_problem_coloring(void **s)
{
    (void)s;
    int rp[5] = {0, 1, 2, 3, 4}, ci[4] = {1, 0, 3, 2};
    sv_ode_problem_desc d = {.name = "pairs", .n = 4, .f = f_zero, .jac_source = SV_ODE_JAC_FD, .rowptr = rp,
                             .colind = ci};
    sv_ode_problem *P = NULL;
    assert_int_equal(sv_ode_problem_create(NULL, &d, &P), SV_OK);
    assert_int_equal(sv_ode_problem_ncolors(P), 1);
    sv_ode_problem_destroy(P);
    sv_test_rng rng;
    sv_test_rng_seed(&rng, 3);
    for (int t = 0; t < 40; t++) {
        int n = 3 + (int)(sv_test_rng_next(&rng) % 30), e = 0;
        int *prp = malloc(((size_t)n + 1) * sizeof *prp), *pci = malloc((size_t)n * n * sizeof *pci);
        for (int i = 0; i < n; i++) {
            prp[i] = e;
            for (int j = 0; j < n; j++)
                if (sv_test_rng_next(&rng) % 7 == 0 || (j == i && t % 2)) pci[e++] = j;
        }
        prp[n] = e;
        sv_ode_problem_desc dr = {.name = "random", .n = n, .f = f_zero, .jac_source = SV_ODE_JAC_FD,
                                  .rowptr = prp, .colind = pci};
        assert_int_equal(sv_ode_problem_create(NULL, &dr, &P), SV_OK);
        sv_sparse_color_options o;
        sv_sparse_color_options_default(&o);
        o.order = SV_SPARSE_COLOR_COLUMN_COUNT;
        sv_sparse_coloring *own = NULL, *alt = NULL;
        assert_int_equal(sv_sparse_color_csr(NULL, n, prp, pci, &o, &own), SV_OK);
        o.order = SV_SPARSE_COLOR_BEST;
        o.add_diagonal = 1;
        assert_int_equal(sv_sparse_color_csr(NULL, n, prp, pci, &o, &alt), SV_OK);
        const sv_sparse_coloring *want =
            sv_sparse_coloring_count(alt) < sv_sparse_coloring_count(own) ? alt : own;
        assert_int_equal(sv_ode_problem_ncolors(P), sv_sparse_coloring_count(want));
        assert_memory_equal(P->color, sv_sparse_coloring_colors(want), (size_t)n * sizeof(int));
        sv_sparse_coloring_destroy(own);
        sv_sparse_coloring_destroy(alt);
        sv_ode_problem_destroy(P);
        free(prp), free(pci);
    }
}

/* The factor looks at every lane's pivots but reports only the masked
 * lanes' (an idle lane's stale data must not fail anyone). */
static void test_factor_mask(void **s)
{
    (void)s;
    int rp[2] = {0, 1}, ci[1] = {0};
    sv_ode_problem_desc d = {.name = "one", .n = 1, .f = f_zero, .jac_source = SV_ODE_JAC_FD, .rowptr = rp,
                             .colind = ci};
    sv_ode_problem *P = NULL;
    assert_int_equal(sv_ode_problem_create(NULL, &d, &P), SV_OK);
    for (int single = 0; single < 2; single++) {
        ode_lin *L = NULL;
        assert_int_equal(ode_lin_create(NULL, P, 4, single, &L), SV_OK);
        double jv[4] = {1, 2, 3, 4}, shift[4] = {5, 2, 7, 8}; /* lane 1: 2 − 2 = 0 */
        unsigned char all[4] = {1, 1, 1, 1}, some[4] = {1, 0, 1, 1}, bad[4];
        ode_lin_load(L, jv, shift);
        assert_int_equal(ode_lin_factor(L, some, bad), SV_OK);
        for (int w = 0; w < 4; w++) assert_int_equal(bad[w], 0);
        ode_lin_load(L, jv, shift);
        assert_int_equal(ode_lin_factor(L, all, bad), SV_OK);
        for (int w = 0; w < 4; w++) assert_int_equal(bad[w], w == 1);
        /* The good lanes still solve: x = b / (shift − J). */
        double b[4] = {4, 4, 4, 4}, x[4];
        int sweeps = -1;
        assert_int_equal(ode_lin_solve(L, jv, shift, b, x, &sweeps), SV_OK);
        assert_true(single ? sweeps >= 1 : sweeps == 0);
        for (int w = 0; w < 4; w++)
            if (w != 1) sv_assert_close(x[w], 4 / (shift[w] - jv[w]), 1e-15, 0);
        ode_lin_destroy(L);
    }
    sv_ode_problem_destroy(P);
}

/* Every size of budget: success or SV_ERR_BUDGET with nothing held, for
 * the constructors that used to return NULL (or swallow a failure). */
static void test_budget_sweep(void **s)
{
    (void)s;
    sv_ode_builtin *b = NULL;
    assert_int_equal(sv_ode_builtin_create(NULL, "bruss2d", 4, SV_ODE_JAC_FD, &b), SV_OK);
    const sv_ode_problem *src = b->prob;
    sv_ode_problem_desc d = src->d;
    sv_ctx *ctx = NULL;
    assert_int_equal(sv_ctx_create(&ctx), SV_OK);
    int ok_problem = 0, ok_lin = 0, ok_jw = 0;
    for (size_t limit = 256; limit < (1u << 20) && !(ok_problem && ok_lin && ok_jw); limit += limit / 8) {
        assert_int_equal(sv_ctx_set_memory_limit(ctx, limit), SV_OK);
        sv_ode_problem *P = NULL;
        sv_status st = sv_ode_problem_create(ctx, &d, &P);
        assert_true(st == SV_OK || st == SV_ERR_BUDGET);
        assert_true((st == SV_OK) == (P != NULL));
        sv_ode_problem_destroy(P);
        ok_problem |= st == SV_OK;
        ode_lin *L = NULL;
        st = ode_lin_create(ctx, src, 4, 1, &L);
        assert_true(st == SV_OK || st == SV_ERR_BUDGET);
        assert_true((st == SV_OK) == (L != NULL));
        ode_lin_destroy(L);
        ok_lin |= st == SV_OK;
        ode_jac_work *jw = NULL;
        st = ode_jac_work_create(ctx, src, &jw);
        assert_true(st == SV_OK || st == SV_ERR_BUDGET);
        ode_jac_work_destroy(jw);
        ok_jw |= st == SV_OK;
        assert_int_equal(sv_ctx_memory_current(ctx), 0);
    }
    assert_true(ok_problem && ok_lin && ok_jw);
    sv_ctx_destroy(ctx);
    sv_ode_builtin_destroy(b);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_zero_filled_options),
        cmocka_unit_test(test_problem_coloring),
        cmocka_unit_test(test_factor_mask),
        cmocka_unit_test(test_budget_sweep),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
