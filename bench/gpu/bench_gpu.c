/* bench_gpu: the GPU back end against the CPU path and against cuSOLVER, in
 * one run, on the cases (docs/gpu.md, "Benchmark").
 *
 * usage: bench_gpu [--big] [--no-cpu]   (SV_BENCH_REPS: repetitions, default 3)
 *   sweeps (bench "gpu", case "<project>_<N>pts"): `solvent sweep`'s work end
 *     to end (read, mesh, assemble on the CPU, set up the device, sweep, S)
 *     with the GPU exact solver, against the same with the CPU exact solver
 *     (the anchor). Cases: examples/pixel2port.json (2042 unknowns) at 21
 *     and 1001 points, examples/square76.json (11402) at 41; with --big also
 *     a solid 123 × 123-cell square (30014 unknowns, written to a temporary
 *     project) at 41. Accuracy: max |S_gpu − S_cpu,double| over exact solves
 *     at every frequency of the 21-point grid (2042) or at 5 frequencies
 *     (the larger cases), GPU (every frequency exact) against the CPU double
 *     path (sv_sweep_solve_exact with SV_SWEEP_DOUBLE).
 *   exact solves (case "exact_<project>"): one exact solve at mid-band (no
 *     derivatives), median of reps: ours on the device (double residuals,
 *     and double-float in its own line) against cuSOLVER's mixed-precision
 *     solver cusolverDnZCgesv (LU in single refined to double; IRS) and its
 *     double LU cusolverDnZgetrf + getrs, all on the full complex double Z
 *     formed on the host and copied to the device beforehand (copies not
 *     timed); backward errors of each from the model's residual in double.
 *   assembly (case "assembly_<project>"): L and Ψ assembled by the GPU
 *     assembler (sv_gpu_assembler: far table entries, folds and fill on the
 *     device, the result copied back) against the CPU's assembly, median of
 *     reps each in one run, with the largest relative difference and the
 *     count of elements not bit for bit equal. Cases: pixel2port, square76;
 *     with --big the 30014-unknown square.
 *   --no-cpu skips the CPU sweeps (the anchor of the sweep lines is then 0). */
#define _POSIX_C_SOURCE 200809L
#include <complex.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <omp.h>
#include <cuda_runtime_api.h>
#include <cusolverDn.h>

#include "bench_common.h"
#include "bench_em.h"
#include "solvent/solvent.h"
#include "solvent/em.h"
#include "solvent/gpu.h"

static void die(const char *what)
{
    fprintf(stderr, "bench_gpu: %s: %s\n", what, sv_last_error());
    exit(1);
}

static void cuda_check(int ok, const char *what)
{
    if (!ok) {
        fprintf(stderr, "bench_gpu: %s failed\n", what);
        exit(1);
    }
}

typedef struct setup {
    sv_ctx *ctx;
    sv_em_project *prj;
    sv_em_model *em;
    sv_em_affine *model;
    double *b, *z0;
    int n, p;
    sv_em_sweep band;
    const sv_sweep_model *m;
    double t_asm;
} setup;

static void setup_build(const char *path, setup *s)
{
    memset(s, 0, sizeof(*s));
    if (sv_ctx_create(&s->ctx)) die("context");
    double t0 = sv_time_now();
    if (sv_em_project_read(s->ctx, path, &s->prj)) die(path);
    if (sv_em_model_create(s->ctx, s->prj, NULL, &s->em)) die("model");
    if (sv_em_affine_create(s->ctx, s->em, &s->model)) die("planar model");
    s->m = sv_em_affine_model(s->model);
    s->n = sv_em_model_unknowns(s->em);
    s->p = sv_em_model_ports(s->em);
    sv_em_project_sweep(s->prj, &s->band);
    s->b = malloc(sizeof(double) * (size_t)s->n * s->p);
    s->z0 = malloc(sizeof(double) * s->p);
    if (!s->b || !s->z0 || sv_em_port_rhs(s->em, s->b, s->n)) die("port rhs");
    for (int k = 0; k < s->p; k++) s->z0[k] = sv_em_project_port_z0(s->prj, k);
    s->t_asm = sv_time_now() - t0;
}

static void setup_free(setup *s)
{
    sv_em_affine_destroy(s->model);
    sv_em_model_destroy(s->em);
    sv_em_project_destroy(s->prj);
    free(s->b);
    free(s->z0);
    sv_ctx_destroy(s->ctx);
}

/* ---- the GPU exact solver: every use of the GPU API is here ---- */
/* On the device or fail (required), refining nderiv derivative orders, with
 * the given residual path. */
static sv_gpu_solver *gpu_create(setup *s, int nderiv, sv_gpu_residual residual)
{
    sv_gpu_options go;
    sv_gpu_options_default(&go);
    go.required = 1;
    go.residual = residual;
    sv_gpu_solver *g;
    if (sv_gpu_solver_create(s->ctx, s->m, nderiv, &go, &g)) die("GPU solver");
    return g;
}

/* The sweep's exact solves on g, with as many derivatives as the tool asks
 * for on a device. */
static void gpu_attach(sv_sweep_options *o, sv_gpu_solver *g)
{
    o->solver = sv_gpu_solver_sweep(g);
    o->derivatives = SV_GPU_MAX_DERIV;
}

/* One exact solve on g at f (no derivatives). */
static void gpu_solve(sv_gpu_solver *g, setup *s, double f, double complex *x)
{
    if (sv_gpu_exact_deriv(g, s->ctx, s->m, f, x, s->n, 0, NULL, 0, NULL)) die("GPU exact solve");
}

/* A sweep end to end (assembly included), GPU or CPU; returns seconds. */
static double run_sweep(const char *path, int nf, int gpu, sv_gpu_report *rep, sv_sweep_result **keep, setup *keep_s)
{
    double t0 = sv_time_now();
    setup s;
    setup_build(path, &s);
    double *f = bench_em_band(nf, &s.band);
    sv_sweep_options o;
    sv_sweep_options_default(&o);
    sv_gpu_solver *g = NULL;
    if (gpu) {
        g = gpu_create(&s, SV_GPU_MAX_DERIV, SV_GPU_RESIDUAL_AUTO);
        gpu_attach(&o, g);
    }
    sv_sweep_result *res;
    if (sv_sweep_run(s.ctx, s.m, nf, f, &o, &res)) die("sweep");
    double complex *S = malloc(sizeof(double complex) * (size_t)nf * s.p * s.p);
    if (sv_em_y_to_s_all(s.p, nf, res->h, s.z0, S, NULL)) die("y to s");
    double t = sv_time_now() - t0;
    if (g && rep) sv_gpu_solver_report(g, rep);
    sv_gpu_solver_destroy(g);
    free(S);
    free(f);
    if (keep) {
        *keep = res;
        *keep_s = s;
    } else {
        sv_sweep_result_destroy(res);
        setup_free(&s);
    }
    return t;
}

/* max |S_gpu − S_cpu,double| over exact solves at nf frequencies. */
static double accuracy(setup *s, sv_gpu_solver *g, int nf)
{
    double *f = bench_em_band(nf, &s->band);
    int n = s->n, p = s->p;
    double complex *x = malloc(sizeof(double complex) * (size_t)n * p), *y = malloc(sizeof(double complex) * (size_t)n * p);
    double worst = 0;
    for (int i = 0; i < nf; i++) {
        double complex h1[64], h2[64], s1[64], s2[64];
        gpu_solve(g, s, f[i], x);
        if (sv_sweep_solve_exact(s->ctx, s->m, f[i], SV_SWEEP_DOUBLE, y, n, NULL)) die("CPU double solve");
        if (sv_em_port_admittance(s->em, x, n, h1) || sv_em_port_admittance(s->em, y, n, h2)) die("admittance");
        if (sv_em_y_to_s(p, h1, s->z0, s1) || sv_em_y_to_s(p, h2, s->z0, s2)) die("y to s");
        for (int k = 0; k < p * p; k++) worst = fmax(worst, cabs(s1[k] - s2[k]));
    }
    free(x);
    free(y);
    free(f);
    return worst;
}

static void sweep_case(const char *name, const char *path, int nf, int acc_points, int reps, int cpu)
{
    double tg[16], tc[16];
    sv_gpu_report rep;
    sv_sweep_result *res = NULL;
    setup s;
    for (int r = 0; r < reps; r++) tg[r] = run_sweep(path, nf, 1, &rep, r == reps - 1 ? &res : NULL, &s);
    for (int r = 0; cpu && r < reps; r++) tc[r] = run_sweep(path, nf, 0, NULL, NULL, NULL);
    double ours = bench_median(tg, reps), anchor = cpu ? bench_median(tc, reps) : 0;
    /* accuracy, on the last run's model */
    sv_gpu_solver *g = gpu_create(&s, 0, SV_GPU_RESIDUAL_AUTO);
    double ds = accuracy(&s, g, acc_points);
    sv_gpu_solver_destroy(g);
    bench_json j;
    char cname[96];
    snprintf(cname, sizeof cname, "%s_%dpts", name, nf);
    bench_json_head(&j, "gpu", cname, ours, "the same sweep with Solvent's CPU exact solver", anchor);
    bench_json_int(&j, "unknowns", s.n);
    bench_json_int(&j, "points", nf);
    bench_json_num(&j, "assembly_s", s.t_asm);
    bench_json_num(&j, "exact_s", res->seconds_exact);
    bench_json_num(&j, "reduced_s", res->seconds_reduced);
    bench_json_int(&j, "exact_solves", res->n_exact);
    bench_json_int(&j, "device_solves", rep.device_solves);
    bench_json_int(&j, "cpu_fallbacks", rep.cpu_fallbacks);
    bench_json_int(&j, "refine_iterations", rep.iterations);
    bench_json_str(&j, "residual", rep.residual == SV_GPU_RESIDUAL_DF ? "double-float" : "double");
    bench_json_num(&j, "selftest_err_double", rep.selftest_err_double);
    bench_json_num(&j, "selftest_err_df", rep.selftest_err_df);
    bench_json_int(&j, "accuracy_points", acc_points);
    bench_json_num(&j, "max_abs_dS_vs_cpu_double", ds);
    bench_json_str(&j, "device", rep.device);
    bench_json_int(&j, "reps", reps);
    bench_json_end(&j);
    sv_sweep_result_destroy(res);
    setup_free(&s);
}

/* Normwise backward error of x (n × p) from the model's residual in double. */
static double berr(const setup *s, double f, const double complex *x)
{
    int n = s->n, p = s->p;
    double complex *r = malloc(sizeof(double complex) * (size_t)n * p);
    if (sv_sweep_model_residual(s->m, f, x, n, r, n)) die("residual");
    double zn = sv_sweep_model_norm_inf(s->m, f), worst = 0;
    for (int c = 0; c < p; c++) {
        double rn = 0, xn = 0, bn = 0;
        for (int i = 0; i < n; i++) {
            rn = fmax(rn, cabs(r[(size_t)c * n + i]));
            xn = fmax(xn, cabs(x[(size_t)c * n + i]));
            bn = fmax(bn, fabs(s->b[(size_t)c * n + i]));
        }
        worst = fmax(worst, rn / (zn * xn + bn));
    }
    free(r);
    return worst;
}

static double now_synced(void)
{
    cudaDeviceSynchronize();
    return sv_time_now();
}

static void exact_case(const char *name, const char *path, int reps)
{
    setup s;
    setup_build(path, &s);
    int n = s.n, p = s.p;
    double f = 0.5 * (s.band.start_hz + s.band.stop_hz);
    double complex *x = malloc(sizeof(double complex) * (size_t)n * p);
    double t[16];
    double ours[2] = {0, 0}, be_ours[2] = {0, 0};
    char dev[200] = "";
    for (int mode = 1; mode <= 2; mode++) {
        sv_gpu_solver *g = gpu_create(&s, 0, (sv_gpu_residual)mode);
        sv_gpu_report rep;
        sv_gpu_solver_report(g, &rep);
        snprintf(dev, sizeof dev, "%s", rep.device);
        gpu_solve(g, &s, f, x); /* warm-up */
        for (int r = 0; r < reps; r++) {
            double t0 = now_synced();
            gpu_solve(g, &s, f, x);
            t[r] = now_synced() - t0;
        }
        ours[mode - 1] = bench_median(t, reps);
        be_ours[mode - 1] = berr(&s, f, x);
        sv_gpu_solver_destroy(g);
    }
    /* cuSOLVER on the full complex double Z */
    size_t nn = (size_t)n * n;
    double complex *z = malloc(sizeof(double complex) * nn);
    if (!z) die("full Z on the host");
    bench_em_full_z(s.model, f, z);
    double complex *bb = malloc(sizeof(double complex) * (size_t)n * p);
    for (size_t e = 0; e < (size_t)n * p; e++) bb[e] = s.b[e];
    cusolverDnHandle_t h;
    cuda_check(cusolverDnCreate(&h) == CUSOLVER_STATUS_SUCCESS, "cusolverDnCreate");
    cuDoubleComplex *dA0, *dA, *dB, *dX;
    int *dipiv, *dinfo;
    cuda_check(cudaMalloc((void **)&dA0, sizeof(cuDoubleComplex) * nn) == cudaSuccess, "cudaMalloc A0");
    cuda_check(cudaMalloc((void **)&dA, sizeof(cuDoubleComplex) * nn) == cudaSuccess, "cudaMalloc A");
    cuda_check(cudaMalloc((void **)&dB, sizeof(cuDoubleComplex) * (size_t)n * p) == cudaSuccess, "cudaMalloc B");
    cuda_check(cudaMalloc((void **)&dX, sizeof(cuDoubleComplex) * (size_t)n * p) == cudaSuccess, "cudaMalloc X");
    cuda_check(cudaMalloc((void **)&dipiv, sizeof(int) * n) == cudaSuccess, "cudaMalloc ipiv");
    cuda_check(cudaMalloc((void **)&dinfo, sizeof(int)) == cudaSuccess, "cudaMalloc info");
    cuda_check(cudaMemcpy(dA0, z, sizeof(cuDoubleComplex) * nn, cudaMemcpyHostToDevice) == cudaSuccess, "copy Z");
    size_t lw = 0;
    cuda_check(cusolverDnZCgesv_bufferSize(h, n, p, dA, n, dipiv, dB, n, dX, n, NULL, &lw) == CUSOLVER_STATUS_SUCCESS,
               "ZCgesv_bufferSize");
    void *dw;
    cuda_check(cudaMalloc(&dw, lw ? lw : 1) == cudaSuccess, "cudaMalloc ZCgesv workspace");
    int iter = 0;
    double zc = 0, lu = 0;
    for (int r = 0; r <= reps; r++) { /* r = 0: warm-up */
        cudaMemcpy(dA, dA0, sizeof(cuDoubleComplex) * nn, cudaMemcpyDeviceToDevice);
        cudaMemcpy(dB, bb, sizeof(cuDoubleComplex) * (size_t)n * p, cudaMemcpyHostToDevice);
        double t0 = now_synced();
        cuda_check(cusolverDnZCgesv(h, n, p, dA, n, dipiv, dB, n, dX, n, dw, lw, &iter, dinfo) ==
                       CUSOLVER_STATUS_SUCCESS, "ZCgesv");
        if (r) t[r - 1] = now_synced() - t0;
    }
    zc = bench_median(t, reps);
    cudaMemcpy(x, dX, sizeof(cuDoubleComplex) * (size_t)n * p, cudaMemcpyDeviceToHost);
    double be_zc = berr(&s, f, x);
    int lwi = 0;
    cuda_check(cusolverDnZgetrf_bufferSize(h, n, n, dA, n, &lwi) == CUSOLVER_STATUS_SUCCESS, "Zgetrf_bufferSize");
    cuDoubleComplex *dwz;
    cuda_check(cudaMalloc((void **)&dwz, sizeof(cuDoubleComplex) * (size_t)(lwi ? lwi : 1)) == cudaSuccess,
               "cudaMalloc getrf workspace");
    for (int r = 0; r <= reps; r++) {
        cudaMemcpy(dA, dA0, sizeof(cuDoubleComplex) * nn, cudaMemcpyDeviceToDevice);
        cudaMemcpy(dB, bb, sizeof(cuDoubleComplex) * (size_t)n * p, cudaMemcpyHostToDevice);
        double t0 = now_synced();
        cuda_check(cusolverDnZgetrf(h, n, n, dA, n, dwz, dipiv, dinfo) == CUSOLVER_STATUS_SUCCESS, "Zgetrf");
        cuda_check(cusolverDnZgetrs(h, CUBLAS_OP_N, n, p, dA, n, dipiv, dB, n, dinfo) == CUSOLVER_STATUS_SUCCESS,
                   "Zgetrs");
        if (r) t[r - 1] = now_synced() - t0;
    }
    lu = bench_median(t, reps);
    cudaMemcpy(x, dB, sizeof(cuDoubleComplex) * (size_t)n * p, cudaMemcpyDeviceToHost);
    double be_lu = berr(&s, f, x);
    for (int mode = 1; mode <= 2; mode++) {
        bench_json j;
        char cname[96];
        snprintf(cname, sizeof cname, "exact_%s%s", name, mode == 2 ? "_df" : "");
        bench_json_head(&j, "gpu", cname, ours[mode - 1],
                        "cusolverDnZCgesv (mixed-precision LU, IRS) on the full complex double Z", zc);
        bench_json_num(&j, "zgetrf_getrs_s", lu);
        bench_json_num(&j, "ratio_vs_zgetrf", ours[mode - 1] / lu);
        bench_json_int(&j, "unknowns", n);
        bench_json_num(&j, "freq_hz", f);
        bench_json_str(&j, "residual", mode == 2 ? "double-float" : "double");
        bench_json_num(&j, "backward_err", be_ours[mode - 1]);
        bench_json_num(&j, "backward_err_zcgesv", be_zc);
        bench_json_int(&j, "zcgesv_iter", iter);
        bench_json_num(&j, "backward_err_zgetrf", be_lu);
        bench_json_str(&j, "device", dev);
        bench_json_int(&j, "reps", reps);
        bench_json_end(&j);
    }
    cudaFree(dA0);
    cudaFree(dA);
    cudaFree(dB);
    cudaFree(dX);
    cudaFree(dipiv);
    cudaFree(dinfo);
    cudaFree(dw);
    cudaFree(dwz);
    cusolverDnDestroy(h);
    free(z);
    free(bb);
    free(x);
    setup_free(&s);
}

/* ---- assembly: the GPU's against the CPU's, the same model ---- */

/* The worst |a − b| / max|b| of two packed arrays of e elements, and how many
 * elements are not bit for bit equal. */
static double packed_diff(size_t e, const double *a, const double *b, size_t *differing)
{
    double d = 0, m = 0;
    for (size_t k = 0; k < e; k++) {
        d = fmax(d, fabs(a[k] - b[k]));
        m = fmax(m, fabs(b[k]));
        *differing += memcmp(&a[k], &b[k], sizeof(double)) != 0;
    }
    return m > 0 ? d / m : d;
}

/* One assembly of L and Ψ (Ψ_im when psi_im) by assembler a (NULL: the CPU);
 * returns seconds, the result in t[] (the caller destroys it). */
static double assemble_once(sv_ctx *ctx, const sv_em_model *m, const sv_em_assembler *a, int psi_im,
                            sv_dense_sym *t[3])
{
    double t0 = sv_time_now();
    t[2] = NULL;
    if (sv_em_assemble_with(ctx, m, 0, a, &t[0], &t[1], psi_im ? &t[2] : NULL, NULL)) die("assembly");
    return sv_time_now() - t0;
}

static void drop(sv_dense_sym *t[3])
{
    for (int k = 0; k < 3; k++) sv_dense_sym_destroy(t[k]);
}

/* L and Ψ (and Ψ_im for "dielectric_loss": "exact") of a project, assembled
 * by the GPU assembler and by the CPU's, median of reps each (the GPU after
 * one warm-up assembly: the CUDA context and the kernels' loading are not
 * the assembly's), and how far apart the results are. */
static void assembly_case(const char *name, const char *path, int reps)
{
    sv_ctx *ctx;
    sv_em_project *prj;
    sv_em_model *m;
    if (sv_ctx_create(&ctx) || sv_em_project_read(ctx, path, &prj) || sv_em_model_create(ctx, prj, NULL, &m))
        die(path);
    sv_em_stackup st;
    sv_em_project_stackup(prj, &st);
    int psi_im = st.tan_delta > 0 && st.exact_dielectric_loss, n = sv_em_model_unknowns(m);
    sv_gpu_options go;
    sv_gpu_options_default(&go);
    go.required = 1;
    sv_gpu_assembler *ga;
    if (sv_gpu_assembler_create(ctx, &go, &ga)) die("GPU assembler");
    const sv_em_assembler *a = sv_gpu_assembler_em(ga);
    sv_dense_sym *tg[3], *tc[3];
    double tgpu[16], tcpu[16];
    assemble_once(ctx, m, a, psi_im, tg); /* warm-up */
    drop(tg);
    for (int r = 0; r < reps; r++) {
        tgpu[r] = assemble_once(ctx, m, a, psi_im, tg);
        if (r < reps - 1) drop(tg);
    }
    sv_gpu_assembly_report rep;
    sv_gpu_assembler_report(ga, &rep);
    for (int r = 0; r < reps; r++) {
        tcpu[r] = assemble_once(ctx, m, NULL, psi_im, tc);
        if (r < reps - 1) drop(tc);
    }
    size_t e = sv_dense_packed_size(n, sv_dense_sym_block(tc[0])), differing = 0;
    double rel = 0;
    for (int k = 0; k < 2 + psi_im; k++)
        rel = fmax(rel, packed_diff(e, sv_dense_sym_cdata(tg[k]), sv_dense_sym_cdata(tc[k]), &differing));
    drop(tg);
    drop(tc);
    bench_json j;
    char cname[96];
    snprintf(cname, sizeof cname, "assembly_%s", name);
    double ours = bench_median(tgpu, reps), anchor = bench_median(tcpu, reps);
    bench_json_head(&j, "gpu", cname, ours, "Solvent's CPU assembly (sv_em_assemble_with, the CPU's assembler)",
                    anchor);
    bench_json_int(&j, "unknowns", n);
    bench_json_int(&j, "terms", 2 + psi_im);
    bench_json_num(&j, "tables_s", rep.seconds_tables);
    bench_json_num(&j, "rows_s", rep.seconds_rows);
    bench_json_num(&j, "device_wait_s", rep.seconds_device);
    bench_json_num(&j, "copy_s", rep.seconds_copy);
    /* the same with L and Ψ left on the device (what a solver there would use) */
    bench_json_num(&j, "without_copy_s", rep.seconds_tables + rep.seconds_rows + rep.seconds_device);
    bench_json_num(&j, "device_gib", rep.device_bytes / 1073741824.0);
    bench_json_int(&j, "device_assemblies", rep.device_assemblies);
    bench_json_int(&j, "cpu_assemblies", rep.cpu_assemblies);
    bench_json_num(&j, "rel_err", rel);
    bench_json_int(&j, "elements_differing", (long long)differing);
    bench_json_int(&j, "elements", (long long)(e * (size_t)(2 + psi_im)));
    bench_json_str(&j, "device", rep.device);
    bench_json_str(&j, "note", rep.note);
    bench_json_int(&j, "reps", reps);
    bench_json_end(&j);
    sv_gpu_assembler_destroy(ga);
    sv_em_model_destroy(m);
    sv_em_project_destroy(prj);
    sv_ctx_destroy(ctx);
}

/* A solid m × m-cell square of 0.5 mm cells with two edge ports, like
 * examples/square76.json (2·m·(m − 1) + 2 unknowns: 30014 for m = 123). */
static void write_square(const char *path, int m)
{
    FILE *fp = fopen(path, "w");
    if (!fp) {
        perror(path);
        exit(1);
    }
    double side = 0.5 * m, mid = 0.5 * (m / 2);
    fprintf(fp,
            "{\"title\": \"Solid %d x %d-cell square\", \"units\": \"mm\",\n"
            " \"substrate\": {\"thickness\": 1.6, \"eps_r\": 4.4},\n"
            " \"metal\": {\"conductivity\": 5.8e7, \"thickness\": 0.035},\n"
            " \"grid\": {\"dx\": 0.5, \"dy\": 0.5, \"nx\": %d, \"ny\": %d},\n"
            " \"rectangles\": [{\"x\": [0, %g], \"y\": [0, %g]}],\n"
            " \"ports\": [{\"name\": \"P1\", \"side\": \"left\", \"x\": 0, \"y\": [%g, %g]},\n"
            "            {\"name\": \"P2\", \"side\": \"right\", \"x\": %g, \"y\": [%g, %g]}],\n"
            " \"sweep\": {\"start\": 0.1, \"stop\": 10, \"points\": 41, \"unit\": \"GHz\"}}\n",
            m, m, m, m, side, side, mid, mid + 0.5, side, mid, mid + 0.5);
    fclose(fp);
}

int main(int argc, char **argv)
{
    int big = 0, cpu = 1;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--big")) big = 1;
        else if (!strcmp(argv[i], "--no-cpu")) cpu = 0;
        else {
            fprintf(stderr, "usage: bench_gpu [--big] [--no-cpu]\n");
            return 2;
        }
    }
    char why[256];
    if (!sv_gpu_available(why, sizeof why)) {
        fprintf(stderr, "bench_gpu: no usable CUDA device: %s\n", why);
        return 1;
    }
    int reps = bench_reps(3);
    if (reps > 16) reps = 16;
    char pix[512], sq[512];
    snprintf(pix, sizeof pix, "%s/examples/pixel2port.json", SV_SOURCE_DIR);
    snprintf(sq, sizeof sq, "%s/examples/square76.json", SV_SOURCE_DIR);
    if (!big) {
        /* the quick cases first, the square's CPU sweep (the slowest) last: a run cut
         * short by its time limit keeps the lines it printed */
        sweep_case("pixel2port", pix, 21, 21, reps, cpu);
        assembly_case("pixel2port", pix, reps);
        assembly_case("square76", sq, reps);
        exact_case("pixel2port", pix, reps);
        exact_case("square76", sq, reps);
        sweep_case("pixel2port", pix, 1001, 21, reps, cpu);
        sweep_case("square76", sq, 41, 5, 1, cpu);
    } else {
        char path[] = "/tmp/bench_gpu_square123_XXXXXX";
        int fd = mkstemp(path);
        if (fd < 0) {
            perror("mkstemp");
            return 1;
        }
        close(fd);
        write_square(path, 123);
        assembly_case("square123", path, 1);
        sweep_case("square123", path, 41, 5, 1, cpu);
        exact_case("square123", path, 1);
        unlink(path);
    }
    return 0;
}
