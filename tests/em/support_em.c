#include "support_em.h"

#include <cblas.h>
#include <lapacke.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sv_test.h"

const char em_test_lossy_project[] =
    "{\"effects\": {\"radiation\": false}, \"units\": \"mm\", \"substrate\": {\"thickness\": 0.8, \"eps_r\": 10.2},"
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

char *em_test_with_effect(const char *json, const char *entry)
{
    /* into the project's "effects" object, or a new one after the top brace */
    const char *eff = strstr(json, "\"effects\"");
    const char *at = eff ? strchr(eff, '{') : strchr(json, '{');
    assert_non_null(at);
    size_t head = (size_t)(at - json) + 1, len = strlen(json) + strlen(entry) + 32;
    char *s = malloc(len);
    assert_non_null(s);
    snprintf(s, len, eff ? "%.*s%s, %s" : "%.*s\"effects\": {%s}, %s", (int)head, json, entry, at + 1);
    return s;
}

char *em_test_quasistatic(const char *json)
{
    if (!strstr(json, "\"radiation\"")) return em_test_with_effect(json, "\"radiation\": false");
    char *s = malloc(strlen(json) + 1);
    assert_non_null(s);
    return strcpy(s, json);
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
    if (G) { /* lossy: the complex system, as with radiation terms but none given */
        em_test_y_rad(m, L, Psi, G, NULL, f, Y);
        return;
    }
    int n = sv_em_model_unknowns(m), np = sv_em_model_ports(m);
    double w = 2 * SV_EM_PI * f;
    double *B = malloc(sizeof(double) * n * np);
    sv_em_port_rhs(m, B, n);
    lapack_int *ipiv = malloc(sizeof(lapack_int) * n);
    double complex *X = malloc(sizeof(double complex) * n * np);
    double *A = malloc(sizeof(double) * n * n);
    for (size_t q = 0; q < (size_t)n * n; q++) A[q] = w * w * L[q] - Psi[q];
    assert_int_equal(LAPACKE_dsysv(LAPACK_COL_MAJOR, 'L', n, np, A, n, ipiv, B, n), 0);
    for (size_t q = 0; q < (size_t)n * np; q++) X[q] = -I * w * B[q];
    free(A);
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

/* M. Kirschning and R. H. Jansen, "Accurate model for effective dielectric
 * constant of microstrip with validity up to millimetre-wave frequencies",
 * Electronics Letters 18 (1982) 272: εeff(f) = εr − (εr − εeff(0))/(1 + P),
 * fn = f·h in GHz·mm, εeff(0) Hammerstad and Jensen's. */
double em_test_kirschning_jansen(double w, double h, double er, double f)
{
    double z0, e0, u = w / h, fn = f / 1e9 * h * 1e3;
    em_test_hj(w, h, er, &z0, &e0);
    double p1 = 0.27488 + (0.6315 + 0.525 / pow(1 + 0.0157 * fn, 20)) * u - 0.065683 * exp(-8.7513 * u);
    double p2 = 0.33622 * (1 - exp(-0.03442 * er));
    double p3 = 0.0363 * exp(-4.6 * u) * (1 - exp(-pow(fn / 38.7, 4.97)));
    double p4 = 1 + 2.751 * (1 - exp(-pow(er / 15.916, 8)));
    double p = p1 * p2 * pow((0.1844 + p3 * p4) * fn, 1.5763);
    return er - (er - e0) / (1 + p);
}

/* M. Kirschning, R. H. Jansen and N. H. L. Koster, "Accurate model for open
 * end effect of microstrip lines", Electronics Letters 17 (1981) 123: the
 * open end's length extension Δl/h = ξ1·ξ3·ξ5/ξ4, with εeff Hammerstad and
 * Jensen's static value (stated accuracy about 2.5 % for 0.01 ≤ W/h ≤ 100,
 * εr ≤ 128). */
double em_test_open_end_kj(double w, double h, double er)
{
    double z0, e, u = w / h;
    em_test_hj(w, h, er, &z0, &e);
    double x1 = 0.434907 * (pow(e, 0.81) + 0.26) / (pow(e, 0.81) - 0.189) * (pow(u, 0.8544) + 0.236) /
                (pow(u, 0.8544) + 0.87);
    double x2 = 1 + pow(u, 0.371) / (2.358 * er + 1);
    double x3 = 1 + 0.5274 * atan(0.084 * pow(u, 1.9413 / x2)) / pow(e, 0.9236);
    double x4 = 1 + 0.0377 * atan(0.067 * pow(u, 1.456)) * (6 - 5 * exp(0.036 * (1 - er)));
    double x5 = 1 - 0.218 * exp(-7.5 * u);
    return h * x1 * x3 * x5 / x4;
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

void em_test_touchstone_at(const sv_em_touchstone *t, double f, double complex S[4])
{
    int i = 0;
    while (i + 2 < t->nf && t->freq_hz[i + 1] < f) i++;
    double u = (f - t->freq_hz[i]) / (t->freq_hz[i + 1] - t->freq_hz[i]);
    for (int q = 0; q < 4; q++) S[q] = (1 - u) * t->data[4 * i + q] + u * t->data[4 * (i + 1) + q];
}

/* The last file read is kept: the tests ask one file at many frequencies. */
void em_test_openems_s(const char *name, double f, double complex S[4])
{
    static sv_em_touchstone *t = NULL;
    static char loaded[128] = "";
    if (strcmp(loaded, name)) {
        sv_em_touchstone_destroy(t);
        char path[512];
        snprintf(path, sizeof path, "%s/tests/em/data/openems/%s", SV_SOURCE_DIR, name);
        assert_int_equal(sv_em_touchstone_read(NULL, path, &t), SV_OK);
        snprintf(loaded, sizeof loaded, "%s", name);
    }
    em_test_touchstone_at(t, f, S);
}

double em_test_openems_loss(const char *name, double f)
{
    double complex S[4];
    em_test_openems_s(name, f, S);
    return 1 - pow(cabs(S[0]), 2) - pow(cabs(S[1]), 2);
}

char *em_test_stub_main_line(void)
{
    char *text = sv_test_slurp("examples/stub.json");
    char *second = strstr(strstr(text, "\"rectangles\""), "},");
    assert_non_null(second);
    char *end = strstr(second, "\n ]"); /* the array's end (the file's indentation) */
    assert_non_null(end);
    memmove(second + 1, end, strlen(end) + 1);
    return text;
}

/* The direct solve (sv_em_solve) at f; optionally compare with
 * LAPACK on a full copy; assert reciprocity, passivity, and unitarity when
 * lossless (strict passivity when lossy). */
void em_test_check_solve(const char *json_or_path, int is_path, double f, int compare)
{
    em_test_case tc;
    char *file = is_path ? sv_test_slurp(json_or_path) : NULL;
    char *text = em_test_quasistatic(file ? file : json_or_path);
    em_test_case_open(&tc, text);
    free(text);
    free(file);
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


void em_test_y_rad(const sv_em_model *m, const double *L, const double *Psi, const sv_em_csr *G, const double *R,
                   double f, double complex *Y)
{
    int n = sv_em_model_unknowns(m), np = sv_em_model_ports(m);
    double w = 2 * SV_EM_PI * f;
    double *B = malloc(sizeof(double) * n * np);
    sv_em_port_rhs(m, B, n);
    lapack_int *ipiv = malloc(sizeof(lapack_int) * n);
    double complex *X = malloc(sizeof(double complex) * n * np);
    double complex *A = malloc(sizeof(double complex) * n * n);
    for (size_t q = 0; q < (size_t)n * n; q++) A[q] = I * (w * L[q] - Psi[q] / w) + (R ? R[q] : 0);
    if (G) {
        sv_em_stackup st;
        sv_em_project_stackup(sv_em_model_project(m), &st);
        double complex zs = sv_em_surface_impedance(st.sigma, st.t, f);
        for (int r = 0; r < n; r++)
            for (int k = G->rowptr[r]; k < G->rowptr[r + 1]; k++) A[r + (size_t)n * G->col[k]] += zs * G->val[k];
    }
    for (size_t q = 0; q < (size_t)n * np; q++) X[q] = B[q];
    assert_int_equal(LAPACKE_zsysv(LAPACK_COL_MAJOR, 'L', n, np, A, n, ipiv, X, n), 0);
    assert_int_equal(sv_em_port_admittance(m, X, n, Y), SV_OK);
    free(A);
    free(X);
    free(ipiv);
    free(B);
}

double *em_test_radiation_full(const sv_em_radiation *rad, int n, double f)
{
    int r;
    const double *u = sv_em_radiation_basis(rad, &r);
    double *R = calloc((size_t)n * n, sizeof(double)), *w = calloc((size_t)r * r + 1, sizeof(double)),
           *t = malloc(sizeof(double) * ((size_t)n * r + 1));
    assert_non_null(R);
    for (int j = 0; j < sv_em_radiation_terms(rad); j++) {
        double c = sv_em_radiation_coef(rad, j, f);
        const double *wj = sv_em_radiation_core(rad, j);
        for (size_t q = 0; q < (size_t)r * r; q++) w[q] += c * wj[q];
    }
    if (r > 0) {
        cblas_dgemm(CblasColMajor, CblasNoTrans, CblasNoTrans, n, r, r, 1, u, n, w, r, 0, t, n);
        cblas_dgemm(CblasColMajor, CblasNoTrans, CblasTrans, n, n, r, 1, t, n, u, n, 0, R, n);
    }
    free(w);
    free(t);
    return R;
}
