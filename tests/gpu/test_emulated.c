/* The back end through its CPU emulation: the blocked LDLᵀ without pivoting
 * and its solves against LAPACK, the products in double and double-float
 * against long double, and the exact solver (set-up, refinement, fallbacks,
 * report) through sv_sweep_run against LAPACK solves of the full matrix. */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <lapacke.h>

#include "sv_test.h"
#include "support_gpu.h"
#include "gpu/gpu_internal.h"

/* A device as the tests pretend it: an H200's ratio, memory to spare. */
static sv_gpu_device_info fake_device(size_t free_bytes, int ratio)
{
    sv_gpu_device_info d;
    memset(&d, 0, sizeof(d));
    d.built = d.available = 1;
    strcpy(d.name, "emulated device");
    d.cc_major = 9;
    d.total_bytes = d.free_bytes = free_bytes;
    d.fp32_per_fp64 = ratio;
    return d;
}

static sv_gpu_problem problem_of(synth *s, sv_gpu_term_view *v)
{
    sv_gpu_problem p;
    assert_int_equal(sv_gpu_problem_from_model(s->model, v, &p), SV_OK);
    return p;
}

/* Factor Z(f) of the synthetic model in complex single on the emulated
 * device and solve: the solution agrees with LAPACK's zgesv of the full
 * double matrix to single-precision accuracy (times the condition). Block
 * sizes that divide n and that do not, and n below one block. */
static void test_factor_solve_vs_lapack(void **state)
{
    (void)state;
    int cases[][2] = {{120, 16}, {131, 32}, {50, 64}};
    for (int t = 0; t < 3; t++) {
        int n = cases[t][0], nb = cases[t][1], p = 2;
        synth s;
        synth_create(&s, n, nb, p, 3, 0.02, 11 + t);
        double f = 5.5e9;
        sv_gpu_term_view v[3];
        sv_gpu_problem prob = problem_of(&s, v);
        sv_gpu_backend *b;
        assert_int_equal(sv_gpu_backend_emulated(NULL, NULL, 0, &b), SV_OK);
        assert_int_equal(b->upload(b, &prob, 1, 2 * p), SV_OK);
        double complex c[3];
        for (int k = 0; k < 3; k++) c[k] = synth_coef(&s, k, f);
        assert_int_equal(b->form(b, c), SV_OK);
        assert_int_equal(b->factor(b, 0.0), SV_OK);
        float complex *v32 = malloc(sizeof(float complex) * n * p);
        for (int i = 0; i < n * p; i++) v32[i] = (float)s.b[i];
        assert_int_equal(b->solve(b, p, v32), SV_OK);
        double complex *x = malloc(sizeof(double complex) * n * p), *xr = malloc(sizeof(double complex) * n * p);
        for (int i = 0; i < n * p; i++) x[i] = v32[i];
        synth_solve(&s, f, xr);
        double e = rel_diff(n * p, x, xr);
        assert_true(e < 1e-3);
        assert_true(e > 0); /* single precision: not bit-identical to the double solve */
        /* a pivot threshold above every pivot: refused as singular */
        assert_int_equal(b->form(b, c), SV_OK);
        assert_int_equal(b->factor(b, 1e300), SV_ERR_SINGULAR);
        assert_non_null(strstr(sv_last_error(), "pivot 0"));
        b->destroy(b);
        free(v32);
        free(x);
        free(xr);
        synth_destroy(&s);
    }
}

/* Products A_k·X in both modes against long double sums over the full copies. */
static void test_products(void **state)
{
    (void)state;
    int n = 77, nb = 16, nc = 3;
    synth s;
    synth_create(&s, n, nb, 2, 2, 0.02, 5);
    sv_gpu_term_view v[3];
    sv_gpu_problem prob = problem_of(&s, v);
    sv_gpu_backend *b;
    assert_int_equal(sv_gpu_backend_emulated(NULL, NULL, 0, &b), SV_OK);
    assert_int_equal(b->upload(b, &prob, 3, nc), SV_OK);
    sv_test_rng r;
    sv_test_rng_seed(&r, 3);
    double *x = malloc(sizeof(double) * n * nc), *y = malloc(sizeof(double) * n * nc * 3);
    for (int i = 0; i < n * nc; i++) x[i] = sv_test_uniform(&r);
    for (int mode = 1; mode <= 2; mode++) {
        assert_int_equal(b->products(b, (sv_gpu_residual)mode, nc, x, y), SV_OK);
        for (int k = 0; k < 3; k++)
            for (int c = 0; c < nc; c++) {
                double worst = 0, scale = 0;
                for (int i = 0; i < n; i++) {
                    long double acc = 0, mag = 0;
                    for (int j = 0; j < n; j++) {
                        long double a = k == 0 ? s.Lf[(size_t)j * n + i] : k == 1 ? s.Pf[(size_t)j * n + i] : 0;
                        if (k == 2)
                            for (int e = s.rowptr[i]; e < s.rowptr[i + 1]; e++)
                                if (s.colind[e] == j) a = s.gval[e];
                        acc += a * x[c * n + j];
                        mag += fabsl(a * x[c * n + j]);
                    }
                    worst = fmax(worst, (double)fabsl(y[(k * nc + c) * n + i] - acc));
                    scale = fmax(scale, (double)mag);
                }
                /* double: n·2⁻⁵³; double-float: about 2⁻⁴⁶ */
                assert_true(worst <= (mode == 1 ? 1e-14 : 1e-13) * scale);
            }
    }
    /* a mode that was not uploaded is refused */
    assert_int_equal(b->upload(b, &prob, 1, nc), SV_OK);
    assert_int_equal(b->products(b, SV_GPU_RESIDUAL_DF, nc, x, y), SV_ERR_ARG);
    assert_int_equal(b->products(b, SV_GPU_RESIDUAL_DOUBLE, nc + 1, x, y), SV_ERR_ARG);
    b->destroy(b);
    free(x);
    free(y);
    synth_destroy(&s);
}

typedef struct sweep_case {
    synth s;
    int nf;
    double *f;
} sweep_case;

static void sweep_case_init(sweep_case *c, int n, int nb, int nf)
{
    synth_create(&c->s, n, nb, 2, 3, 0.02, 21);
    c->nf = nf;
    c->f = malloc(sizeof(double) * nf);
    for (int i = 0; i < nf; i++) c->f[i] = 1e9 + 9e9 * i / (nf - 1);
}

static void sweep_case_free(sweep_case *c)
{
    synth_destroy(&c->s);
    free(c->f);
}

/* H = Bᵀ·X at every frequency against LAPACK: max relative difference. */
static double h_error(sweep_case *c, const sv_sweep_result *res)
{
    int n = c->s.n, p = c->s.p;
    double complex *x = malloc(sizeof(double complex) * n * p);
    double worst = 0;
    for (int i = 0; i < c->nf; i++) {
        synth_solve(&c->s, c->f[i], x);
        double complex h[4];
        for (int j = 0; j < p; j++)
            for (int a = 0; a < p; a++) {
                double complex acc = 0;
                for (int r = 0; r < n; r++) acc += c->s.b[(size_t)a * n + r] * x[(size_t)j * n + r];
                h[j * p + a] = acc;
            }
        worst = fmax(worst, rel_diff(p * p, res->h + (size_t)i * p * p, h));
    }
    free(x);
    return worst;
}

static sv_sweep_result *run_with(sweep_case *c, sv_gpu_solver *g, int exact_all)
{
    sv_sweep_options o;
    sv_sweep_options_default(&o);
    o.solver = sv_gpu_solver_sweep(g);
    o.derivatives = SV_GPU_MAX_DERIV; /* as the tool does on a device */
    o.exact_all = exact_all;
    o.tolerance = 1e-8;
    sv_sweep_result *res = NULL;
    assert_int_equal(sv_sweep_run(NULL, c->s.model, c->nf, c->f, &o, &res), SV_OK);
    return res;
}

/* The exact solver on the emulated device through the adaptive sweep, with
 * each residual path: every exact solve stays on the device, and H agrees
 * with LAPACK. */
static void test_sweep_on_device(void **state)
{
    (void)state;
    sweep_case c;
    sweep_case_init(&c, 150, 32, 41);
    int ratios[] = {2, 64};
    for (int t = 0; t < 2; t++) {
        sv_gpu_device_info d = fake_device((size_t)1 << 34, ratios[t]);
        sv_gpu_solver *g;
        assert_int_equal(
            sv_gpu_solver_create_with(NULL, c.s.model, SV_GPU_MAX_DERIV, NULL, &d, sv_gpu_backend_emulated, NULL, &g),
            SV_OK);
        assert_true(sv_gpu_solver_on_device(g));
        sv_gpu_report rep;
        sv_gpu_solver_report(g, &rep);
        assert_int_equal(rep.residual, t == 0 ? SV_GPU_RESIDUAL_DOUBLE : SV_GPU_RESIDUAL_DF);
        assert_int_equal(rep.selftest_double, 1);
        assert_int_equal(rep.selftest_df, 1);
        sv_sweep_result *res = run_with(&c, g, 0);
        sv_gpu_solver_report(g, &rep);
        assert_true(res->converged);
        assert_int_equal(rep.solves, res->n_exact);
        assert_int_equal(rep.device_solves, res->n_exact);
        assert_int_equal(rep.cpu_fallbacks, 0);
        assert_int_equal(res->n_fallback, 0);
        assert_true(rep.iterations >= res->n_exact);
        double e = h_error(&c, res);
        assert_true(e < 1e-7); /* the sweep's tolerance is 1e-8 on residuals */
        sv_sweep_result_destroy(res);
        /* every frequency exact: H to double accuracy (cond ~1e3–1e5) */
        res = run_with(&c, g, 1);
        e = h_error(&c, res);
        print_message("%s residuals, every frequency exact: H vs LAPACK %.2e\n", t == 0 ? "double" : "double-float", e);
        /* forward error ≈ cond × backward error, cond up to ~1e6 near the
         * low band edge of this model (the CPU mixed path differs from
         * LAPACK by 1.3e-10 at 1 GHz): double refines to 1e-15, double-float
         * to 2e-14 (its arithmetic carries about 2⁻⁴⁶) */
        assert_true(e < (t == 0 ? 2e-9 : 5e-8));
        for (int i = 0; i < c.nf; i++) assert_true(res->residual[i] <= (t == 0 ? 1e-15 : 2e-14));
        assert_int_equal(res->n_fallback, 0);
        sv_sweep_result_destroy(res);
        sv_gpu_solver_destroy(g);
    }
    sweep_case_free(&c);
}

/* Derivatives from the device's factors against the CPU's LAPACK path (a
 * second method: LU of the full double matrix). */
static void test_derivatives(void **state)
{
    (void)state;
    sweep_case c;
    sweep_case_init(&c, 120, 16, 3);
    int n = c.s.n, p = c.s.p;
    sv_gpu_device_info d = fake_device((size_t)1 << 34, 2);
    sv_gpu_solver *g;
    assert_int_equal(
        sv_gpu_solver_create_with(NULL, c.s.model, SV_GPU_MAX_DERIV, NULL, &d, sv_gpu_backend_emulated, NULL, &g),
        SV_OK);
    double complex *x = malloc(sizeof(double complex) * n * p), *dx = malloc(sizeof(double complex) * n * p * 3);
    double complex *xr = malloc(sizeof(double complex) * n * p), *dxr = malloc(sizeof(double complex) * n * p * 3);
    sv_sweep_exact_info info;
    assert_int_equal(sv_gpu_exact_deriv(g, NULL, c.s.model, 4e9, x, n, 3, dx, n, &info), SV_OK);
    assert_int_equal(info.fell_back, 0);
    assert_true(info.backward_error <= 1e-15);
    assert_int_equal(sv_sweep_solve_exact_deriv(NULL, c.s.model, 4e9, SV_SWEEP_LAPACK, 0, xr, n, 3, dxr, n, NULL),
                     SV_OK);
    double e0 = rel_diff(n * p, x, xr), e1 = rel_diff(n * p, dx, dxr), e2 = rel_diff(n * p, dx + n * p, dxr + n * p),
           e3 = rel_diff(n * p, dx + 2 * n * p, dxr + 2 * n * p);
    print_message("device vs LAPACK path: X %.2e, X' %.2e, X'' %.2e, X''' %.2e\n", e0, e1, e2, e3);
    assert_true(e0 < 1e-11);
    assert_true(e1 < 1e-8);
    assert_true(e2 < 1e-7);
    assert_true(e3 < 1e-6);
    /* argument checks */
    assert_int_equal(sv_gpu_exact_deriv(g, NULL, c.s.model, 4e9, x, n - 1, 0, NULL, 0, NULL), SV_ERR_ARG);
    assert_int_equal(sv_gpu_exact_deriv(g, NULL, c.s.model, 4e9, x, n, 1, NULL, n, NULL), SV_ERR_ARG);
    assert_int_equal(sv_gpu_exact_deriv(g, NULL, c.s.model, NAN, x, n, 0, NULL, 0, NULL), SV_ERR_NONFINITE);
    synth other;
    synth_create(&other, 20, 16, 2, 1, 0.02, 2);
    assert_int_equal(sv_gpu_exact_deriv(g, NULL, other.model, 4e9, x, n, 0, NULL, 0, NULL), SV_ERR_ARG);
    assert_non_null(strstr(sv_last_error(), "another model"));
    synth_destroy(&other);
    sv_gpu_solver_destroy(g);
    free(x);
    free(dx);
    free(xr);
    free(dxr);
    sweep_case_free(&c);
}

/* A factory whose first backend (the self-test's) is sound and whose later
 * ones (the model's) factorise wrongly: a device that passes its start-up
 * test and then goes wrong on the real matrix. */
typedef struct two_faced {
    int calls;
    sv_gpu_emu_options bad;
} two_faced;

static sv_status two_faced_factory(void *user, sv_ctx *ctx, int device, sv_gpu_backend **out)
{
    two_faced *t = user;
    return sv_gpu_backend_emulated(t->calls++ ? &t->bad : NULL, ctx, device, out);
}

/* Pivots off by up to 60 %: refinement does not converge, every frequency
 * goes to the CPU double path, the results are still right and the report
 * and the sweep say so. */
static void test_fallback_refinement(void **state)
{
    (void)state;
    sweep_case c;
    sweep_case_init(&c, 100, 16, 9);
    sv_gpu_device_info d = fake_device((size_t)1 << 34, 2);
    two_faced tf = {.calls = 0, .bad = {.factor_noise = 0.6}};
    sv_gpu_solver *g;
    assert_int_equal(sv_gpu_solver_create_with(NULL, c.s.model, SV_GPU_MAX_DERIV, NULL, &d, two_faced_factory, &tf, &g),
                     SV_OK);
    assert_int_equal(tf.calls, 2);
    assert_true(sv_gpu_solver_on_device(g));
    sv_sweep_result *res = run_with(&c, g, 1);
    sv_gpu_report rep;
    sv_gpu_solver_report(g, &rep);
    assert_int_equal(rep.solves, c.nf);
    assert_int_equal(rep.cpu_fallbacks, c.nf);
    assert_int_equal(rep.singular_fallbacks, 0);
    assert_int_equal(rep.device_solves, 0);
    assert_int_equal(res->n_fallback, c.nf);
    assert_true(h_error(&c, res) < 1e-10);
    sv_sweep_result_destroy(res);
    sv_gpu_solver_destroy(g);

    /* the same wrong factors from the start: the self-test's solve check
     * catches them and the solver never uses the device */
    assert_int_equal(
        sv_gpu_solver_create_with(NULL, c.s.model, SV_GPU_MAX_DERIV, NULL, &d, sv_gpu_backend_emulated, &tf.bad, &g),
        SV_OK);
    sv_gpu_solver_report(g, &rep);
    assert_false(rep.on_device);
    assert_non_null(strstr(rep.note, "factorisation failed its self-test"));
    sv_gpu_solver_destroy(g);
    sweep_case_free(&c);
}

/* The device stops working mid-sweep (its solves fail from the 12th on):
 * that frequency and every later one go to the CPU, the sweep completes
 * with the right answers, and the report says what happened. */
static void test_device_error_mid_sweep(void **state)
{
    (void)state;
    sweep_case c;
    sweep_case_init(&c, 100, 16, 9);
    sv_gpu_device_info d = fake_device((size_t)1 << 34, 2);
    two_faced tf = {.calls = 0, .bad = {.fail_solve_after = 12}};
    sv_gpu_solver *g;
    assert_int_equal(sv_gpu_solver_create_with(NULL, c.s.model, SV_GPU_MAX_DERIV, NULL, &d, two_faced_factory, &tf, &g),
                     SV_OK);
    assert_true(sv_gpu_solver_on_device(g));
    sv_sweep_result *res = run_with(&c, g, 1);
    sv_gpu_report rep;
    sv_gpu_solver_report(g, &rep);
    assert_int_equal(rep.device_errors, 1);
    assert_false(rep.on_device);
    assert_non_null(strstr(rep.note, "device error at f = "));
    assert_non_null(strstr(rep.note, "launch failure"));
    assert_true(rep.device_solves >= 1 && rep.device_solves < c.nf - 1);
    assert_int_equal(rep.cpu_fallbacks, 1); /* the solve that met the error */
    assert_int_equal(rep.solves, c.nf);     /* the rest: the CPU's default path */
    assert_true(res->n_fallback >= 1);
    assert_true(h_error(&c, res) < 2e-9);
    sv_sweep_result_destroy(res);
    sv_gpu_solver_destroy(g);
    sweep_case_free(&c);
}

/* A pivot below single precision (at 1 MHz −jΨ/ω swamps jωL by 10⁸ and the
 * loop-current null space of Ψ leaves pivots of jωL size): the device
 * refuses the factorisation, the CPU double path solves it. */
static void test_fallback_singular(void **state)
{
    (void)state;
    sweep_case c;
    sweep_case_init(&c, 90, 16, 3);
    c.f[0] = 1e6;
    c.f[1] = 2e6;
    c.f[2] = 3e6;
    sv_gpu_device_info d = fake_device((size_t)1 << 34, 2);
    sv_gpu_solver *g;
    assert_int_equal(
        sv_gpu_solver_create_with(NULL, c.s.model, SV_GPU_MAX_DERIV, NULL, &d, sv_gpu_backend_emulated, NULL, &g),
        SV_OK);
    sv_sweep_result *res = run_with(&c, g, 1);
    sv_gpu_report rep;
    sv_gpu_solver_report(g, &rep);
    assert_int_equal(rep.cpu_fallbacks, c.nf);
    assert_true(rep.singular_fallbacks + (rep.cpu_fallbacks - rep.singular_fallbacks) == c.nf);
    assert_true(rep.singular_fallbacks >= 1);
    assert_int_equal(res->n_fallback, c.nf);
    /* the fallback is the CPU double path: the same numbers */
    int n = c.s.n, p = c.s.p;
    double complex *x = malloc(sizeof(double complex) * n * p), *h = malloc(sizeof(double complex) * p * p);
    for (int i = 0; i < c.nf; i++) {
        assert_int_equal(
            sv_sweep_solve_exact_deriv(NULL, c.s.model, c.f[i], SV_SWEEP_DOUBLE, 0, x, n, 0, NULL, 0, NULL), SV_OK);
        for (int j = 0; j < p; j++)
            for (int a = 0; a < p; a++) {
                double complex acc = 0;
                for (int r = 0; r < n; r++) acc += c.s.b[(size_t)a * n + r] * x[(size_t)j * n + r];
                h[j * p + a] = acc;
            }
        assert_true(rel_diff(p * p, res->h + (size_t)i * p * p, h) < 1e-12);
    }
    free(x);
    free(h);
    /* and LAPACK (cond ~1e11 at 1 MHz: both lose digits) */
    assert_true(h_error(&c, res) < 1e-4);
    sv_sweep_result_destroy(res);
    sv_gpu_solver_destroy(g);
    sweep_case_free(&c);
}

/* Not enough device memory: the plan sends the solver to the CPU (a note
 * says why) or, when the device is required, refuses. */
static void test_plan_fallback_and_refusal(void **state)
{
    (void)state;
    sweep_case c;
    sweep_case_init(&c, 60, 16, 5);
    sv_gpu_device_info d = fake_device((size_t)64 << 20, 2); /* 64 MiB: below the fixed reserve */
    sv_gpu_solver *g;
    assert_int_equal(
        sv_gpu_solver_create_with(NULL, c.s.model, SV_GPU_MAX_DERIV, NULL, &d, sv_gpu_backend_emulated, NULL, &g),
        SV_OK);
    assert_false(sv_gpu_solver_on_device(g));
    sv_gpu_report rep;
    sv_gpu_solver_report(g, &rep);
    assert_int_equal(rep.plan.decision, SV_GPU_FALLBACK);
    assert_non_null(strstr(rep.note, "more than the"));
    sv_sweep_result *res = run_with(&c, g, 1); /* the CPU path answers */
    assert_true(h_error(&c, res) < 1e-10);
    sv_gpu_solver_report(g, &rep);
    assert_int_equal(rep.device_solves, 0);
    sv_sweep_result_destroy(res);
    sv_gpu_solver_destroy(g);

    sv_gpu_options o;
    sv_gpu_options_default(&o);
    o.required = 1;
    assert_int_equal(
        sv_gpu_solver_create_with(NULL, c.s.model, SV_GPU_MAX_DERIV, &o, &d, sv_gpu_backend_emulated, NULL, &g),
        SV_ERR_BUDGET);
    assert_null(g);
    assert_non_null(strstr(sv_last_error(), "does not fit"));

    /* no device at all */
    sv_gpu_device_info none;
    memset(&none, 0, sizeof(none));
    strcpy(none.reason, "no CUDA-capable device is detected");
    assert_int_equal(
        sv_gpu_solver_create_with(NULL, c.s.model, SV_GPU_MAX_DERIV, NULL, &none, sv_gpu_backend_emulated, NULL, &g),
        SV_OK);
    sv_gpu_solver_report(g, &rep);
    assert_false(rep.on_device);
    assert_string_equal(rep.note, "no CUDA device: no CUDA-capable device is detected");
    sv_gpu_solver_destroy(g);
    assert_int_equal(
        sv_gpu_solver_create_with(NULL, c.s.model, SV_GPU_MAX_DERIV, &o, &none, sv_gpu_backend_emulated, NULL, &g),
        SV_ERR_UNSUPPORTED);

    /* the device runs out of memory while the terms go up */
    sv_gpu_emu_options eo = {.fail_upload = 1};
    d = fake_device((size_t)1 << 34, 2);
    assert_int_equal(
        sv_gpu_solver_create_with(NULL, c.s.model, SV_GPU_MAX_DERIV, NULL, &d, sv_gpu_backend_emulated, &eo, &g),
        SV_OK);
    sv_gpu_solver_report(g, &rep);
    assert_false(rep.on_device);
    assert_non_null(strstr(rep.note, "out of device memory"));
    sv_gpu_solver_destroy(g);
    assert_int_equal(
        sv_gpu_solver_create_with(NULL, c.s.model, SV_GPU_MAX_DERIV, &o, &d, sv_gpu_backend_emulated, &eo, &g),
        SV_ERR_BUDGET);
    sweep_case_free(&c);
}

/* A native-double kernel that is slightly wrong (relative error 1e-9):
 * the self-test disables that path and the solver uses double-float. */
static void test_selftest_disables_double(void **state)
{
    (void)state;
    sweep_case c;
    sweep_case_init(&c, 80, 16, 5);
    sv_gpu_device_info d = fake_device((size_t)1 << 34, 2);
    sv_gpu_emu_options eo = {.break_double = 1};
    sv_gpu_solver *g;
    assert_int_equal(
        sv_gpu_solver_create_with(NULL, c.s.model, SV_GPU_MAX_DERIV, NULL, &d, sv_gpu_backend_emulated, &eo, &g),
        SV_OK);
    sv_gpu_report rep;
    sv_gpu_solver_report(g, &rep);
    assert_true(rep.on_device);
    assert_int_equal(rep.selftest_double, 0);
    assert_true(rep.selftest_err_double > 1e-10);
    assert_int_equal(rep.selftest_df, 1);
    assert_int_equal(rep.residual, SV_GPU_RESIDUAL_DF);
    sv_sweep_result *res = run_with(&c, g, 1);
    assert_true(h_error(&c, res) < 5e-8); /* double-float: see test_sweep_on_device */
    sv_sweep_result_destroy(res);
    sv_gpu_solver_destroy(g);
    /* asked for double explicitly: no silent switch, the CPU instead */
    sv_gpu_options o;
    sv_gpu_options_default(&o);
    o.residual = SV_GPU_RESIDUAL_DOUBLE;
    assert_int_equal(
        sv_gpu_solver_create_with(NULL, c.s.model, SV_GPU_MAX_DERIV, &o, &d, sv_gpu_backend_emulated, &eo, &g), SV_OK);
    sv_gpu_solver_report(g, &rep);
    assert_false(rep.on_device);
    assert_non_null(strstr(rep.note, "failed its self-test"));
    sv_gpu_solver_destroy(g);
    sweep_case_free(&c);
}

static void test_options(void **state)
{
    (void)state;
    sweep_case c;
    sweep_case_init(&c, 40, 16, 3);
    sv_gpu_device_info d = fake_device((size_t)1 << 34, 2);
    sv_gpu_solver *g;
    sv_gpu_options o;
    sv_gpu_options_default(&o);
    o.refine_tol = 1e-3;
    assert_int_equal(
        sv_gpu_solver_create_with(NULL, c.s.model, SV_GPU_MAX_DERIV, &o, &d, sv_gpu_backend_emulated, NULL, &g),
        SV_ERR_ARG);
    assert_non_null(strstr(sv_last_error(), "refine_tol"));
    sv_gpu_options_default(&o);
    o.device = -1;
    assert_int_equal(
        sv_gpu_solver_create_with(NULL, c.s.model, SV_GPU_MAX_DERIV, &o, &d, sv_gpu_backend_emulated, NULL, &g),
        SV_ERR_ARG);
    assert_int_equal(
        sv_gpu_solver_create_with(NULL, c.s.model, SV_GPU_MAX_DERIV + 1, NULL, &d, sv_gpu_backend_emulated, NULL, &g),
        SV_ERR_ARG);
    assert_int_equal(sv_gpu_solver_create_with(NULL, NULL, 2, NULL, &d, sv_gpu_backend_emulated, NULL, &g), SV_ERR_ARG);
    /* a zero-filled struct is the defaults, and the same solver as NULL options */
    sv_gpu_options zero;
    memset(&zero, 0, sizeof zero);
    sv_gpu_options_default(&o);
    assert_memory_equal(&zero, &o, sizeof o);
    sv_gpu_solver *gz, *gn;
    assert_int_equal(
        sv_gpu_solver_create_with(NULL, c.s.model, SV_GPU_MAX_DERIV, &zero, &d, sv_gpu_backend_emulated, NULL, &gz),
        SV_OK);
    assert_int_equal(
        sv_gpu_solver_create_with(NULL, c.s.model, SV_GPU_MAX_DERIV, NULL, &d, sv_gpu_backend_emulated, NULL, &gn),
        SV_OK);
    sv_gpu_report rz, rn;
    sv_gpu_solver_report(gz, &rz);
    sv_gpu_solver_report(gn, &rn);
    assert_true(rz.on_device && rn.on_device);
    assert_int_equal(rz.residual, rn.residual);
    int n = c.s.n, p = c.s.p;
    double complex *xz = malloc(sizeof *xz * (size_t)n * p), *xn = malloc(sizeof *xn * (size_t)n * p);
    assert_int_equal(sv_sweep_solver_solve(sv_gpu_solver_sweep(gz), NULL, 3e9, xz, n, 0, NULL, 0, NULL), SV_OK);
    assert_int_equal(sv_gpu_exact_deriv(gn, NULL, c.s.model, 3e9, xn, n, 0, NULL, 0, NULL), SV_OK);
    assert_memory_equal(xz, xn, sizeof *xz * (size_t)n * p);
    assert_null(sv_gpu_solver_sweep(NULL));
    free(xz);
    free(xn);
    sv_gpu_solver_destroy(gz);
    sv_gpu_solver_destroy(gn);
    sweep_case_free(&c);
}

static double complex coef_one(void *user, int k, double f)
{
    (void)user;
    return (k + 1) * (1 + 1e-10 * f) + I * 1e-9 * f;
}

/* A model the device cannot form (more terms than it takes): the solver is
 * created on the CPU, says why before any self-test or upload, and
 * solves there with the CPU's numbers; with the device required, an error. */
static void test_model_the_device_cannot_form(void **state)
{
    (void)state;
    int n = 30, nb = 8, nt = SV_GPU_CUDA_MAX_TERMS + 1;
    sv_dense_sym *a;
    assert_int_equal(sv_dense_sym_create(NULL, n, SV_DENSE_R64, nb, &a), SV_OK);
    for (int j = 0; j < n; j++)
        for (int i = j; i < n; i++) sv_dense_sym_set(a, i, j, i == j ? 4.0 + j : 1.0 / (1 + i + j));
    sv_sweep_term t[SV_GPU_CUDA_MAX_TERMS + 1];
    for (int k = 0; k < nt; k++)
        t[k] = (sv_sweep_term){.kind = SV_SWEEP_TERM_PACKED, .packed = sv_dense_sym_cdata(a), .nb = nb};
    double b[30];
    for (int i = 0; i < n; i++) b[i] = 1.0 / (1 + i);
    sv_sweep_model *m;
    assert_int_equal(sv_sweep_model_create(NULL, n, nt, t, coef_one, NULL, 1, b, n, &m), SV_OK);
    sv_gpu_device_info d = fake_device((size_t)1 << 34, 2);
    sv_gpu_solver *g;
    assert_int_equal(sv_gpu_solver_create_with(NULL, m, 1, NULL, &d, sv_gpu_backend_emulated, NULL, &g), SV_OK);
    sv_gpu_report rep;
    sv_gpu_solver_report(g, &rep);
    assert_false(rep.on_device);
    assert_int_equal(rep.selftest_double, -1); /* decided before the self-test */
    assert_non_null(strstr(rep.note, "at most 8"));
    double complex x[30], xr[30];
    assert_int_equal(sv_gpu_exact_deriv(g, NULL, m, 2e9, x, n, 0, NULL, 0, NULL), SV_OK);
    assert_int_equal(sv_sweep_solve_exact(NULL, m, 2e9, SV_SWEEP_MIXED, xr, n, NULL), SV_OK);
    assert_memory_equal(x, xr, sizeof x);
    sv_gpu_solver_destroy(g);
    sv_gpu_options o;
    sv_gpu_options_default(&o);
    o.required = 1;
    assert_int_equal(sv_gpu_solver_create_with(NULL, m, 1, &o, &d, sv_gpu_backend_emulated, NULL, &g),
                     SV_ERR_UNSUPPORTED);
    assert_non_null(strstr(sv_last_error(), "at most 8"));
    sv_sweep_model_destroy(m);
    sv_dense_sym_destroy(a);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_factor_solve_vs_lapack),
        cmocka_unit_test(test_products),
        cmocka_unit_test(test_sweep_on_device),
        cmocka_unit_test(test_derivatives),
        cmocka_unit_test(test_fallback_refinement),
        cmocka_unit_test(test_device_error_mid_sweep),
        cmocka_unit_test(test_fallback_singular),
        cmocka_unit_test(test_plan_fallback_and_refusal),
        cmocka_unit_test(test_selftest_disables_double),
        cmocka_unit_test(test_options),
        cmocka_unit_test(test_model_the_device_cannot_form),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
