/* Circuits against the full-wave (openEMS) references listed in docs/em.md
 * (Validation): the quarter-wave stub's |S21| notch
 * (1.977 GHz, within 2 %) and the −3 dB / −20 dB crossings of Pozar's
 * stepped-impedance low-pass filter (2.231 / 3.398 GHz, within 3 %).
 * Edge ports are not matched-line ports, so feature frequencies are
 * compared, not magnitudes. Solves: LAPACK on full copies (lossless:
 * real symmetric ω²L − Ψ). */
#include <cblas.h>
#include <lapacke.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "support_em.h"
#include "sv_test.h"

typedef struct circuit {
    sv_em_project *p;
    sv_em_model *m;
    int n, np;
    double *L, *P, *B; /* n × n, n × n, n × np */
    int evals;
} circuit;

static void load(circuit *c, const char *rel)
{
    char *text = sv_test_slurp(rel);
    c->p = em_test_project(text);
    free(text);
    c->m = em_test_model(c->p);
    c->n = sv_em_model_unknowns(c->m);
    c->np = sv_em_model_ports(c->m);
    em_test_full(c->m, &c->L, &c->P);
    c->B = malloc(sizeof(double) * c->n * c->np);
    sv_em_port_rhs(c->m, c->B, c->n);
    c->evals = 0;
}

static void unload(circuit *c)
{
    free(c->L);
    free(c->P);
    free(c->B);
    sv_em_model_destroy(c->m);
    sv_em_project_destroy(c->p);
}

/* Y = −jω·Bᵀ(ω²L − Ψ)⁻¹B, S for the project's references. */
static void circuit_s(circuit *c, double f, double complex *S)
{
    int n = c->n, np = c->np;
    double w = 2 * SV_EM_PI * f;
    double *A = malloc(sizeof(double) * n * n), *X = malloc(sizeof(double) * n * np);
    lapack_int *ip = malloc(sizeof(lapack_int) * n);
    for (size_t q = 0; q < (size_t)n * n; q++) A[q] = w * w * c->L[q] - c->P[q];
    memcpy(X, c->B, sizeof(double) * n * np);
    assert_int_equal(LAPACKE_dsysv(LAPACK_COL_MAJOR, 'L', n, np, A, n, ip, X, n), 0);
    double complex Y[16];
    for (int a = 0; a < np; a++)
        for (int b = 0; b < np; b++)
            Y[a + np * b] = -I * w * cblas_ddot(n, c->B + (size_t)n * a, 1, X + (size_t)n * b, 1);
    em_test_s(c->m, Y, S);
    free(A);
    free(X);
    free(ip);
    c->evals++;
}

static double complex s21(circuit *c, double f)
{
    double complex S[4];
    circuit_s(c, f, S);
    return S[1];
}

/* A lossless stub's transmission zero is a simple zero of the analytic
 * S21(f) on the real axis: complex secant steps converge to it (Im Z21 would
 * do too, but it has poles at the line's resonances nearby). */
static double notch(circuit *c, double f0, double f1)
{
    double complex s0 = s21(c, f0), s1 = s21(c, f1);
    for (int it = 0; it < 20 && fabs(f1 - f0) > 1e-6 * f1; it++) {
        double f2 = creal(f1 - s1 * (f1 - f0) / (s1 - s0));
        f0 = f1;
        s0 = s1;
        f1 = f2;
        s1 = s21(c, f1);
    }
    return f1;
}

static double s21_db(circuit *c, double f) { return 20 * log10(cabs(s21(c, f))); }


/* Reduced-order model for many frequencies of one lossless circuit:
 * A(s) = s·L − Ψ (s = ω²) is real symmetric; one factorisation of A(s0)
 * builds the block Krylov space of A(s0)⁻¹·L on A(s0)⁻¹·B (orthonormalised
 * twice), and the congruence Lr = VᵀLV, Ψr = VᵀΨV, Br = VᵀB keeps the
 * response symmetric and matches its moments at s0. Crossing frequencies
 * found on the model are then checked by direct solves of the full model. */
typedef struct rom {
    int k, np;
    double *Lr, *Pr, *Br; /* k × k, k × k, k × np */
} rom;

static void rom_build(circuit *c, double f0, int blocks, rom *r)
{
    int n = c->n, np = c->np, k = blocks * np;
    double s0 = pow(2 * SV_EM_PI * f0, 2);
    double *A = malloc(sizeof(double) * n * n), *V = malloc(sizeof(double) * n * k), *W = malloc(sizeof(double) * n);
    lapack_int *ip = malloc(sizeof(lapack_int) * n);
    for (size_t q = 0; q < (size_t)n * n; q++) A[q] = s0 * c->L[q] - c->P[q];
    assert_int_equal(LAPACKE_dsytrf(LAPACK_COL_MAJOR, 'L', n, A, n, ip), 0);
    const double *B = c->B;
    for (int col = 0; col < k; col++) {
        double *v = V + (size_t)n * col;
        if (col < np) memcpy(v, B + (size_t)n * col, sizeof(double) * n);
        else cblas_dgemv(CblasColMajor, CblasNoTrans, n, n, 1, c->L, n, V + (size_t)n * (col - np), 1, 0, v, 1);
        assert_int_equal(LAPACKE_dsytrs(LAPACK_COL_MAJOR, 'L', n, 1, A, n, ip, v, n), 0);
        for (int pass = 0; pass < 2; pass++)
            for (int q = 0; q < col; q++) {
                double d = cblas_ddot(n, V + (size_t)n * q, 1, v, 1);
                cblas_daxpy(n, -d, V + (size_t)n * q, 1, v, 1);
            }
        double nv = cblas_dnrm2(n, v, 1);
        cblas_dscal(n, 1 / nv, v, 1);
    }
    r->k = k;
    r->np = np;
    r->Lr = malloc(sizeof(double) * k * k);
    r->Pr = malloc(sizeof(double) * k * k);
    r->Br = malloc(sizeof(double) * k * np);
    double *T = malloc(sizeof(double) * n * k);
    cblas_dgemm(CblasColMajor, CblasNoTrans, CblasNoTrans, n, k, n, 1, c->L, n, V, n, 0, T, n);
    cblas_dgemm(CblasColMajor, CblasTrans, CblasNoTrans, k, k, n, 1, V, n, T, n, 0, r->Lr, k);
    cblas_dgemm(CblasColMajor, CblasNoTrans, CblasNoTrans, n, k, n, 1, c->P, n, V, n, 0, T, n);
    cblas_dgemm(CblasColMajor, CblasTrans, CblasNoTrans, k, k, n, 1, V, n, T, n, 0, r->Pr, k);
    cblas_dgemm(CblasColMajor, CblasTrans, CblasNoTrans, k, np, n, 1, V, n, B, n, 0, r->Br, k);
    (void)W;
    free(T);
    free(W);
    free(ip);
    free(V);
    free(A);
}

static void rom_free(rom *r)
{
    free(r->Lr);
    free(r->Pr);
    free(r->Br);
}

static rom *the_rom;

static double rom_s21_db(circuit *c, double f)
{
    rom *r = the_rom;
    int k = r->k, np = r->np;
    double w = 2 * SV_EM_PI * f;
    double *A = malloc(sizeof(double) * k * k), *X = malloc(sizeof(double) * k * np);
    lapack_int *ip = malloc(sizeof(lapack_int) * k);
    for (int q = 0; q < k * k; q++) A[q] = w * w * r->Lr[q] - r->Pr[q];
    memcpy(X, r->Br, sizeof(double) * k * np);
    assert_int_equal(LAPACKE_dsysv(LAPACK_COL_MAJOR, 'L', k, np, A, k, ip, X, k), 0);
    double complex Y[4], S[4];
    for (int a = 0; a < np; a++)
        for (int b = 0; b < np; b++) {
            double s = 0;
            for (int q = 0; q < k; q++) s += r->Br[q + (size_t)k * a] * X[q + (size_t)k * b];
            Y[a + np * b] = -I * w * s;
        }
    em_test_s(c->m, Y, S);
    free(A);
    free(X);
    free(ip);
    return 20 * log10(cabs(S[1]));
}

/* Root of g(f) − target in [a, b] (Illinois false position). */
static double root(circuit *c, double (*g)(circuit *, double), double target, double a, double b)
{
    double fa = g(c, a) - target, fb = g(c, b) - target;
    assert_true(fa * fb < 0);
    int side = 0;
    for (int it = 0; it < 40 && (b - a) > 1e-5 * b; it++) {
        double x = (a * fb - b * fa) / (fb - fa), fx = g(c, x) - target;
        if (fx * fb > 0) {
            b = x;
            fb = fx;
            if (side == -1) fa /= 2;
            side = -1;
        } else {
            a = x;
            fa = fx;
            if (side == 1) fb /= 2;
            side = 1;
        }
        if (fabs(fx) < 1e-9) return x;
    }
    return (a * fb - b * fa) / (fb - fa);
}

static void test_stub_notch(void **state)
{
    (void)state;
    circuit c;
    load(&c, "examples/stub.json");
    double f = notch(&c, 1.9e9, 2.0e9);
    printf("stub: %d unknowns, notch %.4f GHz (full-wave 1.977, %+.2f %%), %d solves\n",
           sv_em_model_unknowns(c.m), f / 1e9, 100 * (f / 1.977e9 - 1), c.evals);
    sv_assert_close(f, 1.977e9, 0.02, 0);
    /* it is a notch: |S21| tiny there, near 0 dB far below it */
    assert_true(s21_db(&c, f) < -40);
    assert_true(s21_db(&c, 0.3e9) > -1);
    unload(&c);
}

static void test_lowpass_crossings(void **state)
{
    (void)state;
    circuit c;
    load(&c, "examples/pozar_lpf.json");
    rom r;
    rom_build(&c, 3e9, 30, &r);
    the_rom = &r;
    double f3 = root(&c, rom_s21_db, -3, 1.8e9, 2.8e9);
    double f20 = root(&c, rom_s21_db, -20, 2.9e9, 4.2e9);
    /* the model against direct solves at the crossings */
    double d3 = s21_db(&c, f3), d20 = s21_db(&c, f20);
    printf("low-pass: direct |S21| at the model's crossings: %.4f dB, %.4f dB\n", d3, d20);
    sv_assert_close(d3, -3, 1e-3, 0);
    sv_assert_close(d20, -20, 1e-3, 0);
    rom_free(&r);
    printf("low-pass: %d unknowns, -3 dB at %.4f GHz (full-wave 2.231, %+.2f %%), -20 dB at %.4f GHz "
           "(3.398, %+.2f %%), %d solves\n",
           sv_em_model_unknowns(c.m), f3 / 1e9, 100 * (f3 / 2.231e9 - 1), f20 / 1e9, 100 * (f20 / 3.398e9 - 1),
           c.evals);
    /* the 3 % for both crossings */
    sv_assert_close(f3, 2.231e9, 0.03, 0);
    sv_assert_close(f20, 3.398e9, 0.03, 0);
    unload(&c);
}

/* The examples too large for the quick tests: reciprocity, passivity (and
 * unitarity for the lossless filter) of the dense-engine solve. */
static void test_large_examples_checks(void **state)
{
    (void)state;
    em_test_check_solve("examples/pozar_lpf.json", 1, 3e9, 0);
    em_test_check_solve("examples/square76.json", 1, 3e9, 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_stub_notch),
        cmocka_unit_test(test_lowpass_crossings),
        cmocka_unit_test(test_large_examples_checks),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
