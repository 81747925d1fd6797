/* Sparse LU benchmark: refactor + solve of one matrix, and per trajectory in
 * batches of W = 4 and 8, on the patterns, against KLU
 * (klu_refactor + klu_solve, default settings) and dense LAPACK (dgetrf +
 * dgetrs on a fresh copy), all single-threaded and in one run.
 *
 * Every timed call does the whole job a stiff integrator does per step:
 * write new values into the factor's storage, factor, solve. For KLU that
 * is klu_refactor (which scatters Ax itself) + klu_solve on a fresh right
 * side; for Solvent sv_sparse_lu_load + factor + solve; for LAPACK a copy
 * of the dense matrix + dgetrf + dgetrs.
 *
 * usage: bench_sparse [CASE...] [--cache DIR]   (JSON lines on stdout)
 * SV_BENCH_REPS sets the repetitions (default 5); each repetition runs the
 * call in a loop for >= 20 ms and the median over repetitions is reported. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <cblas.h>
#include <klu.h>
#include <lapacke.h>

#include "bench_common.h"
#include "solvent/core.h"
#include "solvent/sparse.h"
#include "sparse_patterns.h"

static uint64_t rng_state = 0x9e3779b97f4a7c15ULL;
static double uni(void)
{
    rng_state ^= rng_state << 13, rng_state ^= rng_state >> 7, rng_state ^= rng_state << 17;
    return (double)(rng_state >> 11) / 9007199254740992.0 * 2 - 1;
}

/* Values on the pattern, diagonally dominant by rows and columns (neither
 * KLU nor LAPACK then exchanges rows, as with M = I/(hγ) − J for small h). */
static double *random_values(const sv_sparse_pattern *p)
{
    int n = sv_sparse_pattern_n(p), m = sv_sparse_pattern_nnz(p);
    const int *rp = sv_sparse_pattern_rowptr(p), *ci = sv_sparse_pattern_colind(p);
    double *v = malloc((size_t)m * sizeof *v), *rs = calloc((size_t)n, sizeof *rs), *cs = calloc((size_t)n, sizeof *cs);
    for (int i = 0; i < n; i++)
        for (int e = rp[i]; e < rp[i + 1]; e++) {
            v[e] = uni();
            if (ci[e] != i) rs[i] += fabs(v[e]), cs[ci[e]] += fabs(v[e]);
        }
    for (int i = 0; i < n; i++)
        for (int e = rp[i]; e < rp[i + 1]; e++)
            if (ci[e] == i) v[e] = rs[i] + cs[i] + 1.0 + fabs(v[e]);
    free(rs), free(cs);
    return v;
}

/* Timing: every contender of a case is timed in each repetition, round
 * robin, so that all of them see the same load on a shared machine; each
 * repetition runs a contender's call in a loop for >= 20 ms; the median
 * over repetitions is reported. */
typedef void (*call_fn)(void *);
typedef struct contender {
    call_fn fn;
    void *arg;
    long k;
    double t[64];
} contender;

static void time_all(contender *c, int nc, int reps)
{
    if (reps > 64) reps = 64;
    for (int x = 0; x < nc; x++) {
        c[x].fn(c[x].arg);
        double t0 = sv_time_now();
        c[x].fn(c[x].arg);
        double one = sv_time_now() - t0;
        c[x].k = one > 0 ? (long)(0.02 / one) + 1 : 100000;
    }
    for (int r = 0; r < reps; r++)
        for (int x = 0; x < nc; x++) {
            double s = sv_time_now();
            for (long i = 0; i < c[x].k; i++) c[x].fn(c[x].arg);
            c[x].t[r] = (sv_time_now() - s) / (double)c[x].k;
        }
    for (int x = 0; x < nc; x++) c[x].t[0] = bench_median(c[x].t, reps);
}

/* ---- the three contenders -------------------------------------------- */
typedef struct job {
    int n, m, nnz, W;
    const sv_sparse_pattern *p;
    sv_sparse_lu *lu;
    double *v, *vt;          /* values CSR; and CSC for KLU */
    int *cp, *ri;            /* CSC pattern for KLU */
    double *buf, *b, *x, *w; /* ours */
    double *bb, *xb, *wb;    /* ours, batched (W lanes) */
    double *vb;              /* batch values, entry-major (e·W + w) */
    klu_symbolic *sym;
    klu_numeric *num;
    klu_common common;
    double *kb;              /* KLU right side / solution */
    double *a, *f;           /* dense copy source and work */
    int *ipiv;
    double *db;
} job;

static void ours_call(void *arg)
{
    job *j = arg;
    sv_sparse_lu_load(j->lu, j->v, j->buf);
    sv_sparse_lu_factor(j->lu, j->buf, NULL);
    sv_sparse_lu_solve(j->lu, j->buf, j->b, j->x, j->w);
}

static void ours_batch_call(void *arg)
{
    job *j = arg;
    sv_sparse_lu_load_batch(j->lu, j->W, j->vb, j->bb);
    sv_sparse_lu_factor_batch(j->lu, j->W, j->bb, NULL);
    sv_sparse_lu_solve_batch(j->lu, j->W, j->bb, j->xb, j->xb, j->wb);
}

static void klu_call(void *arg)
{
    job *j = arg;
    klu_refactor(j->cp, j->ri, j->vt, j->sym, j->num, &j->common);
    memcpy(j->kb, j->b, (size_t)j->n * sizeof *j->kb);
    klu_solve(j->sym, j->num, j->n, 1, j->kb, &j->common);
}

static void dense_call(void *arg)
{
    job *j = arg;
    memcpy(j->f, j->a, (size_t)j->n * j->n * sizeof *j->f);
    memcpy(j->db, j->b, (size_t)j->n * sizeof *j->db);
    LAPACKE_dgetrf_work(LAPACK_COL_MAJOR, j->n, j->n, j->f, j->n, j->ipiv);
    LAPACKE_dgetrs_work(LAPACK_COL_MAJOR, 'N', j->n, 1, j->f, j->n, j->ipiv, j->db, j->n);
}

static void emit(const char *cname, const job *j, const char *kernel, int W, double ours, double klu_s, double dense_s,
                 double rel_err, double bwd)
{
    bench_json js;
    long long fl = sv_sparse_lu_flops(j->lu);
    bench_json_begin(&js, "sparse", cname);
    bench_json_int(&js, "n", j->n);
    bench_json_int(&js, "nnz", j->m);
    bench_json_int(&js, "slots", j->nnz);
    bench_json_int(&js, "madds", fl);
    bench_json_str(&js, "kernel", kernel);
    bench_json_int(&js, "W", W);
    bench_json_num(&js, "ours_s", ours);
    bench_json_str(&js, "anchor", "klu_refactor+klu_solve");
    bench_json_num(&js, "anchor_s", klu_s);
    bench_json_num(&js, "ratio", ours / klu_s);
    bench_json_num(&js, "speedup", klu_s / ours);
    bench_json_num(&js, "ns_per_call", ours * 1e9);
    bench_json_num(&js, "ns_per_madd", ours * 1e9 / (double)fl);
    bench_json_num(&js, "anchor_ns_per_madd", klu_s * 1e9 / (double)fl);
    if (dense_s > 0) {
        bench_json_num(&js, "dense_s", dense_s);
        bench_json_num(&js, "ratio_dense", ours / dense_s);
    }
    bench_json_num(&js, "rel_err", rel_err);
    bench_json_num(&js, "backward_err", bwd);
    bench_json_end(&js);
    fflush(stdout);
}

static void run_case(const char *cname, sv_sparse_pattern *p, const char *cache, int reps)
{
    job j;
    memset(&j, 0, sizeof j);
    j.p = p;
    j.n = sv_sparse_pattern_n(p);
    j.m = sv_sparse_pattern_nnz(p);
    int n = j.n;
    if (sv_sparse_lu_analyse(NULL, p, SV_SPARSE_ORDER_AMD, &j.lu)) {
        fprintf(stderr, "%s: %s\n", cname, sv_last_error());
        return;
    }
    j.nnz = sv_sparse_lu_nnz(j.lu);
    j.v = random_values(p);
    const int *rp = sv_sparse_pattern_rowptr(p), *ci = sv_sparse_pattern_colind(p);
    /* CSC copy for KLU. */
    j.cp = calloc((size_t)n + 1, sizeof(int));
    j.ri = malloc((size_t)j.m * sizeof(int));
    j.vt = malloc((size_t)j.m * sizeof(double));
    for (int e = 0; e < j.m; e++) j.cp[ci[e] + 1]++;
    for (int c = 0; c < n; c++) j.cp[c + 1] += j.cp[c];
    int *next = malloc((size_t)n * sizeof(int));
    memcpy(next, j.cp, (size_t)n * sizeof(int));
    for (int i = 0; i < n; i++)
        for (int e = rp[i]; e < rp[i + 1]; e++) {
            int q = next[ci[e]]++;
            j.ri[q] = i;
            j.vt[q] = j.v[e];
        }
    free(next);
    j.b = malloc((size_t)n * sizeof(double));
    for (int i = 0; i < n; i++) j.b[i] = uni();
    j.x = malloc((size_t)n * sizeof(double));
    j.w = malloc((size_t)n * sizeof(double));
    j.kb = malloc((size_t)n * sizeof(double));
    j.buf = malloc((size_t)j.nnz * sizeof(double));

    klu_defaults(&j.common);
    j.sym = klu_analyze(n, j.cp, j.ri, &j.common);
    j.num = klu_factor(j.cp, j.ri, j.vt, j.sym, &j.common);

    if (n <= 1000) {
        j.a = calloc((size_t)n * n, sizeof(double));
        j.f = malloc((size_t)n * n * sizeof(double));
        j.db = malloc((size_t)n * sizeof(double));
        j.ipiv = malloc((size_t)n * sizeof(int));
        for (int i = 0; i < n; i++)
            for (int e = rp[i]; e < rp[i + 1]; e++) j.a[(size_t)ci[e] * n + i] = j.v[e];
    }

    /* Accuracy of our solution against KLU's and as a backward error. */
    ours_call(&j);
    klu_call(&j);
    double dx = 0, xm = 0, r = 0, am = 0, bm = 0;
    for (int i = 0; i < n; i++) {
        dx = fmax(dx, fabs(j.x[i] - j.kb[i]));
        xm = fmax(xm, fabs(j.kb[i]));
        double s = -j.b[i], rs = 0;
        for (int e = rp[i]; e < rp[i + 1]; e++) s += j.v[e] * j.x[ci[e]], rs += fabs(j.v[e]);
        r = fmax(r, fabs(s));
        am = fmax(am, rs);
        bm = fmax(bm, fabs(j.b[i]));
    }
    double rel = dx / xm, bwd = r / (am * xm + bm);

    /* A second analysis of the same pattern gets the straight-line kernels
     * (runtime path) when they are within the default limits. */
    job g = j;
    g.lu = NULL;
    sv_sparse_lu_analyse(NULL, p, SV_SPARSE_ORDER_AMD, &g.lu);
    sv_sparse_codegen_options opt;
    sv_sparse_codegen_options_default(&opt);
    opt.emit = SV_SPARSE_EMIT_F64 | SV_SPARSE_EMIT_BATCH4_F64 | SV_SPARSE_EMIT_BATCH8_F64;
    double c0 = sv_time_now();
    sv_status st = sv_sparse_lu_compile(g.lu, &opt, cache, NULL);
    double compile_s = sv_time_now() - c0;
    int have_gen = st == SV_OK;
    if (have_gen)
        fprintf(stderr, "# %s: straight-line kernels ready in %.2f s\n", cname, compile_s);
    else
        fprintf(stderr, "# %s: table-driven only (%s)\n", cname, sv_last_error());

    /* Batched jobs: W = 4 and 8, table-driven and generated. */
    const int Ws[2] = {4, 8};
    job bj[2][2];
    for (int k = 0; k < 2; k++)
        for (int gen = 0; gen < 2; gen++) {
            job *q = &bj[k][gen];
            *q = gen ? g : j;
            q->W = Ws[k];
            q->bb = malloc((size_t)j.nnz * q->W * sizeof(double));
            q->xb = malloc((size_t)n * q->W * sizeof(double));
            q->wb = malloc((size_t)n * q->W * sizeof(double));
            q->vb = malloc((size_t)j.m * q->W * sizeof(double));
            for (int e = 0; e < j.m; e++)
                for (int w = 0; w < q->W; w++) q->vb[(size_t)e * q->W + w] = j.v[e];
            for (int i = 0; i < n * q->W; i++) q->xb[i] = j.b[i / q->W];
        }
    contender c[9];
    int nc = 0;
    c[nc++] = (contender){klu_call, &j, 0, {0}};
    if (j.a) c[nc++] = (contender){dense_call, &j, 0, {0}};
    int i_table = nc;
    c[nc++] = (contender){ours_call, &j, 0, {0}};
    c[nc++] = (contender){ours_batch_call, &bj[0][0], 0, {0}};
    c[nc++] = (contender){ours_batch_call, &bj[1][0], 0, {0}};
    int i_gen = nc;
    if (have_gen) {
        c[nc++] = (contender){ours_call, &g, 0, {0}};
        c[nc++] = (contender){ours_batch_call, &bj[0][1], 0, {0}};
        c[nc++] = (contender){ours_batch_call, &bj[1][1], 0, {0}};
    }
    time_all(c, nc, reps);
    double klu_s = c[0].t[0], dense_s = j.a ? c[1].t[0] : 0;
    emit(cname, &j, "table", 1, c[i_table].t[0], klu_s, dense_s, rel, bwd);
    emit(cname, &j, "table", 4, c[i_table + 1].t[0] / 4, klu_s, dense_s, rel, bwd);
    emit(cname, &j, "table", 8, c[i_table + 2].t[0] / 8, klu_s, dense_s, rel, bwd);
    if (have_gen) {
        emit(cname, &g, "generated", 1, c[i_gen].t[0], klu_s, dense_s, rel, bwd);
        emit(cname, &g, "generated", 4, c[i_gen + 1].t[0] / 4, klu_s, dense_s, rel, bwd);
        emit(cname, &g, "generated", 8, c[i_gen + 2].t[0] / 8, klu_s, dense_s, rel, bwd);
    }
    for (int k = 0; k < 2; k++)
        for (int gen = 0; gen < 2; gen++) free(bj[k][gen].bb), free(bj[k][gen].xb), free(bj[k][gen].wb), free(bj[k][gen].vb);
    sv_sparse_lu_destroy(g.lu);

    klu_free_symbolic(&j.sym, &j.common);
    klu_free_numeric(&j.num, &j.common);
    free(j.v), free(j.vt), free(j.cp), free(j.ri), free(j.b), free(j.x), free(j.w), free(j.kb), free(j.buf);
    free(j.a), free(j.f), free(j.db), free(j.ipiv);
    sv_sparse_lu_destroy(j.lu);
}

int main(int argc, char **argv)
{
    sv_threads_serial_begin(); /* single-threaded anchors and kernels: never restored */
    const char *cache = SV_BENCH_CACHE;
    int reps = bench_reps(5);
    const char *only[32];
    int nonly = 0;
    for (int a = 1; a < argc; a++) {
        if (!strcmp(argv[a], "--cache") && a + 1 < argc)
            cache = argv[++a];
        else if (nonly < 32)
            only[nonly++] = argv[a];
    }
    mkdir(cache, 0755);
    struct {
        const char *name;
        sv_sparse_pattern *(*make)(void);
    } cases[] = {
        {"eb50_declared", tp_eb50_declared}, {"eb50_true", tp_eb50_true}, {"pollu", tp_pollu},
        {"hires", tp_hires},                 {"tridiagonal_100", NULL},   {"block_tridiagonal_500", NULL},
        {"brusselator_8x8", NULL},           {"brusselator_32x32", NULL}, {"random_1000", NULL},
    };
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        int want = nonly == 0;
        for (int k = 0; k < nonly; k++) want |= !strcmp(only[k], cases[c].name);
        if (!want) continue;
        sv_sparse_pattern *p;
        switch (c) {
        case 4: p = tp_tridiagonal(100); break;
        case 5: p = tp_block_tridiagonal(100, 5); break;
        case 6: p = tp_brusselator2d(8); break;
        case 7: p = tp_brusselator2d(32); break;
        case 8: p = tp_random(1000, 5, 12345); break;
        default: p = cases[c].make(); break;
        }
        run_case(cases[c].name, p, cache, reps);
        sv_sparse_pattern_destroy(p);
    }
    return 0;
}
