#include "support_em.h"

#include <lapacke.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sv_test.h"

const char em_test_lossy_project[] =
    "{\"units\": \"mm\", \"substrate\": {\"thickness\": 0.8, \"eps_r\": 10.2},"
    "\"metal\": {\"conductivity\": 1e6, \"thickness\": 0.005},"
    "\"grid\": {\"dx\": 0.3, \"dy\": 0.2, \"nx\": 12, \"ny\": 9},"
    "\"pixels\": [\"....########\", \"....#......#\", \"############\", \"###.........\", \"###..##.....\","
    "             \"#######.....\", \".#..........\", \".####.......\", \"....#.......\"],"
    "\"ports\": [{\"name\": \"L\", \"side\": \"left\", \"x\": 0, \"y\": [0.6, 1.4]},"
    "          {\"name\": \"R\", \"side\": \"right\", \"x\": 3.6, \"y\": [1.2, 1.8]},"
    "          {\"name\": \"B\", \"side\": \"bottom\", \"y\": 0, \"x\": [1.2, 1.5]}]}";

sv_em_project *em_test_project(const char *json)
{
    sv_em_project *p = NULL;
    sv_status s = sv_em_project_parse(NULL, json, strlen(json), "test", &p);
    if (s) fprintf(stderr, "project: %s\n", sv_last_error());
    assert_int_equal(s, SV_OK);
    return p;
}

sv_em_model *em_test_model(const sv_em_project *p)
{
    sv_em_model *m = NULL;
    assert_int_equal(sv_em_model_create(NULL, p, NULL, &m), SV_OK);
    return m;
}

void em_test_case_open(em_test_case *c, const char *json)
{
    c->p = em_test_project(json);
    c->m = em_test_model(c->p);
    assert_int_equal(sv_em_affine_create(NULL, c->m, &c->a), SV_OK);
}

void em_test_case_close(em_test_case *c)
{
    sv_em_affine_destroy(c->a);
    sv_em_model_destroy(c->m);
    sv_em_project_destroy(c->p);
}

static size_t colbase_full(void *user, int j) { return (size_t)j * *(int *)user + j; }

void em_test_full(const sv_em_model *m, double **L, double **Psi)
{
    int n = sv_em_model_unknowns(m);
    *L = calloc((size_t)n * n, sizeof(double));
    *Psi = calloc((size_t)n * n, sizeof(double));
    assert_non_null(*L);
    assert_non_null(*Psi);
    sv_status s = sv_em_assemble_raw(NULL, m, *L, *Psi, colbase_full, &n, NULL);
    if (s) fprintf(stderr, "assemble: %s\n", sv_last_error());
    assert_int_equal(s, SV_OK);
    for (int j = 0; j < n; j++)
        for (int i = j + 1; i < n; i++) {
            (*L)[j + (size_t)n * i] = (*L)[i + (size_t)n * j];
            (*Psi)[j + (size_t)n * i] = (*Psi)[i + (size_t)n * j];
        }
}

void em_test_y(const sv_em_model *m, const double *L, const double *Psi, const sv_em_csr *G, double f,
               double complex *Y)
{
    int n = sv_em_model_unknowns(m), np = sv_em_model_ports(m);
    double w = 2 * SV_EM_PI * f;
    double *B = malloc(sizeof(double) * n * np);
    sv_em_port_rhs(m, B, n);
    lapack_int *ipiv = malloc(sizeof(lapack_int) * n);
    double complex *X = malloc(sizeof(double complex) * n * np);
    if (!G) {
        double *A = malloc(sizeof(double) * n * n);
        for (size_t q = 0; q < (size_t)n * n; q++) A[q] = w * w * L[q] - Psi[q];
        assert_int_equal(LAPACKE_dsysv(LAPACK_COL_MAJOR, 'L', n, np, A, n, ipiv, B, n), 0);
        for (size_t q = 0; q < (size_t)n * np; q++) X[q] = -I * w * B[q];
        free(A);
    } else {
        const sv_em_project *p = sv_em_model_project(m);
        sv_em_stackup st;
        sv_em_project_stackup(p, &st);
        double complex zs = sv_em_surface_impedance(st.sigma, st.t, f);
        double complex *A = malloc(sizeof(double complex) * n * n);
        for (size_t q = 0; q < (size_t)n * n; q++) A[q] = I * (w * L[q] - Psi[q] / w);
        for (int r = 0; r < n; r++)
            for (int k = G->rowptr[r]; k < G->rowptr[r + 1]; k++) A[r + (size_t)n * G->col[k]] += zs * G->val[k];
        for (size_t q = 0; q < (size_t)n * np; q++) X[q] = B[q];
        assert_int_equal(LAPACKE_zsysv(LAPACK_COL_MAJOR, 'L', n, np, A, n, ipiv, X, n), 0);
        free(A);
    }
    assert_int_equal(sv_em_port_admittance(m, X, n, Y), SV_OK);
    free(X);
    free(ipiv);
    free(B);
}

void em_test_s(const sv_em_model *m, const double complex *Y, double complex *S)
{
    int np = sv_em_model_ports(m);
    double z0[64];
    for (int k = 0; k < np; k++) z0[k] = sv_em_project_port_z0(sv_em_model_project(m), k);
    assert_int_equal(sv_em_y_to_s(np, Y, z0, S), SV_OK);
}

/* E. Hammerstad and Ø. Jensen, "Accurate models for microstrip
 * computer-aided design", IEEE MTT-S 1980 (zero-thickness strip). */
void em_test_hj(double w, double h, double er, double *z0, double *eeff)
{
    double u = w / h;
    double a = 1 + log((pow(u, 4) + pow(u / 52, 2)) / (pow(u, 4) + 0.432)) / 49 + log(1 + pow(u / 18.1, 3)) / 18.7;
    double b = 0.564 * pow((er - 0.9) / (er + 3), 0.053);
    double e = (er + 1) / 2 + (er - 1) / 2 * pow(1 + 10 / u, -a * b);
    double fu = 6 + (2 * SV_EM_PI - 6) * exp(-pow(30.666 / u, 0.7528));
    double eta0 = 376.730313668;
    double z01 = eta0 / (2 * SV_EM_PI) * log(fu / u + sqrt(1 + 4 / (u * u)));
    *eeff = e;
    *z0 = z01 / sqrt(e);
}

/* Hammerstad and Jensen's thickness correction (1980): the strip widened by
 * Δu1 (air line) and Δur (dielectric line), u = W/h, tn = t/h. */
void em_test_hj_thick(double w, double h, double t, double er, double *z0, double *eeff)
{
    double u = w / h, tn = t / h, z0a, z0r, ea, er_eff;
    if (tn <= 0) {
        em_test_hj(w, h, er, z0, eeff);
        return;
    }
    double c = 1 / tanh(sqrt(6.517 * u));
    double du1 = tn / SV_EM_PI * log(1 + 4 * exp(1) / (tn * c * c));
    double dur = 0.5 * (1 + 1 / cosh(sqrt(er - 1))) * du1;
    em_test_hj((u + du1) * h, h, 1, &z0a, &ea);
    em_test_hj((u + dur) * h, h, er, &z0r, &er_eff);
    double z01a = z0a * sqrt(ea), z01r = z0r * sqrt(er_eff); /* air-line impedances */
    *z0 = z0r;
    *eeff = er_eff * (z01a / z01r) * (z01a / z01r);
}

char *em_test_slurp(const char *relpath)
{
    char path[1024];
    snprintf(path, sizeof path, "%s/%s", SV_SOURCE_DIR, relpath);
    FILE *f = fopen(path, "rb");
    assert_non_null(f);
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    char *s = malloc((size_t)n + 1);
    assert_int_equal(fread(s, 1, (size_t)n, f), (size_t)n);
    s[n] = 0;
    fclose(f);
    return s;
}

/* The direct solve (sv_em_solve) at f; optionally compare with
 * LAPACK on a full copy; assert reciprocity, passivity, and unitarity when
 * lossless (strict passivity when lossy). */
void em_test_check_solve(const char *json_or_path, int is_path, double f, int compare)
{
    em_test_case tc;
    char *text = is_path ? em_test_slurp(json_or_path) : NULL;
    em_test_case_open(&tc, text ? text : json_or_path);
    free(text);
    const sv_em_project *p = tc.p;
    const sv_em_model *m = tc.m;
    int np = sv_em_model_ports(m);
    sv_em_csr *G;
    assert_int_equal(sv_em_gram(NULL, m, &G), SV_OK);
    double complex Y[16], S[16], Yr[16];
    sv_status s = sv_em_solve(NULL, tc.a, f, Y);
    if (s) printf("%s\n", sv_last_error());
    assert_int_equal(s, SV_OK);
    em_test_s(m, Y, S);
    if (compare) {
        double *Lf, *Pf;
        em_test_full(m, &Lf, &Pf);
        em_test_y(m, Lf, Pf, G, f, Yr);
        double ymax = 0;
        for (int q = 0; q < np * np; q++) ymax = fmax(ymax, cabs(Yr[q]));
        for (int q = 0; q < np * np; q++) assert_true(cabs(Y[q] - Yr[q]) <= 1e-9 * ymax);
        free(Lf);
        free(Pf);
    }
    double rec = sv_em_reciprocity_error(np, S), smax;
    assert_int_equal(sv_em_max_singular_value(np, S, &smax), SV_OK);
    sv_em_stackup st;
    sv_em_project_stackup(p, &st);
    double unit = 0;
    if (isinf(st.sigma))
        for (int r = 0; r < np; r++)
            for (int c = 0; c < np; c++) {
                double complex a = 0;
                for (int k = 0; k < np; k++) a += conj(S[k + np * r]) * S[k + np * c];
                unit = fmax(unit, cabs(a - (r == c)));
            }
    printf("%s at %.3g GHz: N = %d, |S - S^T| = %.1e, smax - 1 = %.1e, |S^H S - I| = %.1e\n",
           is_path ? json_or_path : "inline", f / 1e9, sv_em_model_unknowns(m), rec, smax - 1, unit);
    assert_true(rec <= 1e-10);
    assert_true(smax <= 1 + 1e-10);
    if (isinf(st.sigma)) assert_true(unit <= 1e-8);
    else assert_true(smax < 1 - 1e-6); /* a lossy structure absorbs some power */
    sv_em_csr_destroy(G);
    em_test_case_close(&tc);
}

