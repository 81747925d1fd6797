/* Radiation terms (src/em/radiation.c) against closed forms independent of
 * the code: the space-wave and surface-wave power of a short horizontal
 * dipole on a grounded slab (Jackson & Alexopoulos, IEEE Trans. AP 39
 * (1991) 407), and a rectangular patch's resonance (Hammerstad) and
 * radiation Q (Jackson & Alexopoulos); a stub's lost power against openEMS.
 * Solves: LAPACK zsysv on full copies, and for calibrated ports the planar
 * job as a user runs it, each frequency solved by LAPACK. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "job_em.h"
#include "support_em.h"
#include "sv_test.h"

#define ETA0 376.730313668

static sv_em_model *model_with(const sv_em_project *p, double fmax)
{
    sv_em_model *m = NULL;
    sv_em_options o = {.max_freq_hz = fmax};
    assert_int_equal(sv_em_model_create(NULL, p, &o, &m), SV_OK);
    return m;
}

/* A short strip (one rooftop, d = 0.2 mm) is a dipole of moment d:
 * Re Z = η0·h²·k0⁴·c1·d²/(3π) (space wave, P = ½·Re Z = (1/λ0²)(k0h)²·80π²·c1
 * for a unit dipole) + η0·k0⁵·h³·(1 − 1/εr)³·d²/4 (TM0 surface wave,
 * (1/λ0²)(k0h)³·60π³·(1 − 1/εr)³), c1 = 1 − 1/εr + 2/(5εr²). */
static void test_dipole(void **state)
{
    (void)state;
    const char *json = "{\"units\": \"mm\", \"substrate\": {\"thickness\": 1.6, \"eps_r\": 4.4},"
                       "\"metal\": {\"conductivity\": \"inf\"},"
                       "\"grid\": {\"dx\": 0.2, \"dy\": 0.2, \"nx\": 2, \"ny\": 1},"
                       "\"pixels\": [\"##\"],"
                       "\"ports\": [{\"name\": \"a\", \"side\": \"left\", \"x\": 0, \"y\": [0, 0.2]}]}";
    sv_em_project *p = em_test_project(json);
    sv_em_model *m = model_with(p, 2e9);
    sv_em_radiation *rad = NULL;
    assert_int_equal(sv_em_radiation_create(NULL, m, 2e9, 1e-8, &rad), SV_OK);
    int n = sv_em_model_unknowns(m);
    assert_int_equal(n, 2);
    double er = 4.4, h = 1.6e-3, d = 0.2e-3, c1 = 1 - 1 / er + 2 / (5 * er * er);
    for (double f = 0.5e9; f <= 2e9; f *= 2) {
        double k0 = 2 * SV_EM_PI * f / SV_EM_C0;
        double *R = em_test_radiation_full(rad, n, f);
        double sp = ETA0 * h * h * pow(k0, 4) * c1 / (3 * SV_EM_PI);
        double sw = ETA0 * pow(k0, 5) * pow(h, 3) * pow(1 - 1 / er, 3) / 4;
        /* unknown 0: the rooftop (moment d), 1: the port half rooftop (d/2) */
        double want[4] = {(sp + sw) * d * d, (sp + sw) * d * d / 2, (sp + sw) * d * d / 2, (sp + sw) * d * d / 4};
        for (int q = 0; q < 4; q++) {
            double rel = fabs(R[q] - want[q]) / want[q];
            printf("dipole f %.2f GHz entry %d: %.6e (closed form %.6e), rel %.1e\n", f / 1e9, q, R[q], want[q], rel);
            assert_true(rel < 1e-4); /* higher moments: (k0·a)² ~ 4e-5 */
        }
        free(R);
    }
    sv_em_radiation_destroy(rad);
    sv_em_model_destroy(m);
    sv_em_project_destroy(p);
}

/* Hammerstad–Jensen εeff of a wide strip, and Hammerstad's open-end
 * extension (as used for patch design, e.g. Balanis, Antenna Theory,
 * eq. 14-1, 14-2). */
static double patch_resonance(double W, double L, double h, double er)
{
    double z0, eeff;
    em_test_hj(W, h, er, &z0, &eeff);
    double dl = 0.412 * h * (eeff + 0.3) * (W / h + 0.264) / ((eeff - 0.258) * (W / h + 0.8));
    return SV_EM_C0 / (2 * (L + 2 * dl) * sqrt(eeff));
}

/* Jackson & Alexopoulos' radiation Q of a rectangular patch (TM10), space
 * wave, and the HED radiation efficiency that adds the surface wave. */
static double patch_q(double W, double L, double h, double er, double f, double *q_space)
{
    double k0 = 2 * SV_EM_PI * f / SV_EM_C0, lam = SV_EM_C0 / f;
    double c1 = 1 - 1 / er + 2 / (5 * er * er);
    double a2 = -0.16605, a4 = 0.00761, c2 = -0.0914153, kw = k0 * W, kl = k0 * L;
    double pp = 1 + a2 / 10 * kw * kw + (a2 * a2 + 2 * a4) * 3 / 560 * pow(kw, 4) + c2 / 5 * kl * kl +
                a2 * c2 / 70 * kw * kw * kl * kl;
    double qsp = 3.0 / 16 * er / (pp * c1) * (L / W) * (lam / h);
    double eff = 1 / (1 + 0.75 * SV_EM_PI * k0 * h / c1 * pow(1 - 1 / er, 3));
    *q_space = qsp;
    return qsp * eff;
}

typedef struct patch {
    sv_em_project *p;
    sv_em_model *m;
    sv_em_radiation *rad;
    double *L, *P;
    int n;
} patch;

static double complex patch_y(patch *pt, double f)
{
    double *R = em_test_radiation_full(pt->rad, pt->n, f);
    double complex Y;
    em_test_y_rad(pt->m, pt->L, pt->P, NULL, R, f, &Y);
    free(R);
    return Y;
}

/* A patch of W × L driven across its whole radiating edge at x = 0: near
 * resonance its admittance is G + jB of a parallel resonator, G from
 * radiation alone (perfect metal, lossless slab): f0 where B = 0,
 * Q = f0/(2G)·dB/df there. */
static void test_patch(void **state)
{
    (void)state;
    double er = 2.2, h = 1.575e-3, W = 48.4e-3, L = 40.5e-3;
    int nx = 24, ny = 24;
    char json[1024];
    snprintf(json, sizeof json,
             "{\"units\": \"mm\", \"substrate\": {\"thickness\": %.17g, \"eps_r\": %.17g},"
             "\"metal\": {\"conductivity\": \"inf\"},"
             "\"grid\": {\"dx\": %.17g, \"dy\": %.17g, \"nx\": %d, \"ny\": %d},"
             "\"rectangles\": [{\"x\": [0, %.17g], \"y\": [0, %.17g]}],"
             "\"ports\": [{\"name\": \"a\", \"side\": \"left\", \"x\": 0, \"y\": [0, %.17g]}]}",
             h * 1e3, er, L * 1e3 / nx, W * 1e3 / ny, nx, ny, L * 1e3, W * 1e3, W * 1e3);
    patch pt;
    pt.p = em_test_project(json);
    double fr = patch_resonance(W, L, h, er);
    pt.m = model_with(pt.p, 1.2 * fr);
    pt.n = sv_em_model_unknowns(pt.m);
    assert_int_equal(sv_em_radiation_create(NULL, pt.m, 1.2 * fr, 1e-6, &pt.rad), SV_OK);
    sv_em_radiation_info ri;
    sv_em_radiation_get_info(pt.rad, &ri);
    printf("patch: N %d, radiation degree %d, rank %d, terms %d (band residual %.1e), k0a %.2f\n", pt.n, ri.degree,
           ri.rank, ri.terms, ri.band_residual, ri.ka);
    em_test_full(pt.m, &pt.L, &pt.P);
    if (getenv("PATCH_SCAN"))
        for (double f = 0.5 * fr; f < 1.5 * fr; f += 0.02 * fr) {
            double complex y = patch_y(&pt, f);
            printf("scan %.4f GHz Y %.5e %+.5e  Zin %.2f %+.2f\n", f / 1e9, creal(y), cimag(y), creal(1 / y), cimag(1 / y));
        }
    /* the half-wave resonance: B = 0 (secant on B) */
    double fa = 0.95 * fr, fb = 1.05 * fr, ba = cimag(patch_y(&pt, fa)), bb = cimag(patch_y(&pt, fb));
    assert_true(ba < 0 && bb > 0);
    for (int it = 0; it < 30 && fabs(fb - fa) > 1e-7 * fr; it++) {
        double fc = fb - bb * (fb - fa) / (bb - ba);
        fa = fb;
        ba = bb;
        fb = fc;
        bb = cimag(patch_y(&pt, fb));
    }
    double f0 = fb, df = 1e-4 * f0;
    double complex y0 = patch_y(&pt, f0), yp = patch_y(&pt, f0 + df), ym = patch_y(&pt, f0 - df);
    double q = f0 / (2 * creal(y0)) * (cimag(yp) - cimag(ym)) / (2 * df);
    double qsp, qj = patch_q(W, L, h, er, f0, &qsp);
    printf("patch: resonance %.4f GHz (Hammerstad %.4f GHz, %+.2f %%), R_edge %.1f ohm, Q %.1f (Jackson: space wave "
           "%.1f, with surface wave %.1f, %+.1f %%)\n",
           f0 / 1e9, fr / 1e9, 100 * (f0 / fr - 1), 1 / creal(y0), q, qsp, qj, 100 * (q / qj - 1));
    assert_true(fabs(f0 / fr - 1) < 0.01);
    assert_true(fabs(q / qj - 1) < 0.20);
    free(pt.L);
    free(pt.P);
    sv_em_radiation_destroy(pt.rad);
    sv_em_model_destroy(pt.m);
    sv_em_project_destroy(pt.p);
}

/* 1 − |S11|² − |S21|² of each of nf two-port S blocks. */
static void lost_power(int nf, const double complex *S, double *loss)
{
    for (int i = 0; i < nf; i++) loss[i] = 1 - pow(cabs(S[4 * i]), 2) - pow(cabs(S[4 * i + 1]), 2);
}

/* The lost power of a project (radiation on) at nf frequencies between raw
 * edge ports: LAPACK zsysv on full copies of L, Ψ and R(f). */
static void raw_loss(const char *text, int nf, const double *fr, double *loss)
{
    sv_em_project *p = em_test_project(text);
    sv_em_model *m = model_with(p, fr[nf - 1]);
    int n = sv_em_model_unknowns(m);
    sv_em_radiation *rad = NULL;
    assert_int_equal(sv_em_radiation_create(NULL, m, fr[nf - 1], 1e-6, &rad), SV_OK);
    double *L, *P;
    em_test_full(m, &L, &P);
    double complex *S = malloc(sizeof(double complex) * 4 * nf);
    for (int i = 0; i < nf; i++) {
        double *R = em_test_radiation_full(rad, n, fr[i]);
        double complex Y[4];
        em_test_y_rad(m, L, P, NULL, R, fr[i], Y);
        free(R);
        em_test_s(m, Y, S + 4 * i);
    }
    lost_power(nf, S, loss);
    free(S);
    free(L);
    free(P);
    sv_em_radiation_destroy(rad);
    sv_em_model_destroy(m);
    sv_em_project_destroy(p);
}

/* The same between calibrated ports, as a user gets them: one planar job
 * (its model's own radiation terms), every frequency solved by LAPACK, as
 * the lost power is a small difference of |S|², finer than the adaptive
 * sweep's tolerance. */
static void calibrated_loss(const char *text, int nf, const double *fr, double *loss)
{
    sv_em_project *p = em_test_project(text);
    assert_true(sv_em_project_calibrated(p));
    sv_planar_options o;
    em_test_job_options(&o, nf, fr);
    o.exact_all = 1;
    o.precision = SV_SWEEP_LAPACK;
    double complex *S = malloc(sizeof(double complex) * 4 * nf);
    em_test_job_s(p, &o, S);
    lost_power(nf, S, loss);
    free(S);
    sv_em_project_destroy(p);
}

/* Ratio a/b as a factor at least 1: how far apart two positive losses are. */
static double apart(double a, double b) { return fmax(a / b, b / a); }

/* The stub of shared em-model.md radiates, and so does a line's end where
 * it meets an edge port. tests/em/data/openems/stub_loss ran openEMS on the
 * same drawing twice: with Solvent's raw ports (lumped 50-ohm ports across
 * the line's ends) and with matched feed lines running into its absorbing
 * boundary (no ends; V/I on the feeds; power-balance floor 0.1–0.3 %).
 *
 * Between raw edge ports both solvers' circuits are compared whole, the
 * issue's 1 − |S11|² − |S21|², and so are their main lines alone. Against the
 * matched feeds, which have no ends, the stub's own radiation is compared:
 * its calibrated loss less its main line's (calibration cannot remove the
 * ends: their fields interfere along the line, which no port box can
 * undo). Asserted from 2.25 GHz where openEMS's loss exceeds 0.6 %: at the
 * notch (1.97 GHz) the two solvers' 1 % apart in its frequency moves the
 * loss most. */
static void test_stub_loss(void **state)
{
    (void)state;
    enum { NF = 15 };
    double fr[NF], stub_raw[NF], line_raw[NF], stub_cal[NF], line_cal[NF];
    for (int i = 0; i < NF; i++) fr[i] = 0.5e9 + 0.25e9 * i;
    char *text = sv_test_slurp("examples/stub.json");
    char *line = em_test_stub_main_line();
    raw_loss(text, NF, fr, stub_raw);
    raw_loss(line, NF, fr, line_raw);
    calibrated_loss(text, NF, fr, stub_cal);
    calibrated_loss(line, NF, fr, line_cal);
    free(line);
    free(text);
    printf("lost power 1 - |S11|^2 - |S21|^2 (radiation on), %%; openEMS: tests/em/data/openems/stub_loss\n"
           "         raw edge ports (openEMS: lumped ports)        calibrated (openEMS: matched feeds)\n"
           "  f GHz  stub  openEMS ratio   line  openEMS ratio   stub   line  stub-line openEMS ratio\n");
    int compared = 0;
    double worst_stub = 1, worst_line = 1, worst_own = 1;
    for (int i = 0; i < NF; i++) {
        double f = fr[i];
        double stub_o = em_test_openems_loss("stub_loss/stub_loss_edge_ports.s2p", f);
        double line_o = em_test_openems_loss("stub_loss/line_edge_ports.s2p", f);
        double own_o = em_test_openems_loss("stub_loss/stub_loss.s2p", f);
        double own = stub_cal[i] - line_cal[i];
        printf("  %.2f %6.3f %6.3f %5.2f  %6.3f %6.3f %5.2f  %6.3f %6.3f %6.3f  %6.3f %5.2f\n", f / 1e9,
               100 * stub_raw[i], 100 * stub_o, stub_raw[i] / stub_o, 100 * line_raw[i], 100 * line_o,
               line_raw[i] / line_o, 100 * stub_cal[i], 100 * line_cal[i], 100 * own, 100 * own_o, own / own_o);
        if (f < 2.2e9 || own_o < 0.006) continue;
        compared++;
        worst_stub = fmax(worst_stub, apart(stub_raw[i], stub_o));
        worst_own = fmax(worst_own, apart(own, own_o));
        worst_line = fmax(worst_line, apart(line_raw[i], line_o));
        /* measured: 0.67–1.05; the lines' ends 0.55–0.72 of openEMS's;
         * the stub's own radiation 0.97–1.40 (docs/em.md, Radiation) */
        assert_true(stub_raw[i] / stub_o > 0.6 && stub_raw[i] / stub_o < 1.25);
        assert_true(line_raw[i] / line_o > 0.45 && line_raw[i] / line_o < 1.1);
        assert_true(own / own_o > 0.75 && own / own_o < 1.5);
    }
    printf("  from 2.25 GHz, farthest apart: the stub between raw ports %.2fx, its line alone %.2fx, "
           "the stub's own radiation %.2fx\n", worst_stub, worst_line, worst_own);
    assert_true(compared >= 6);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_dipole),
        cmocka_unit_test(test_patch),
        cmocka_unit_test(test_stub_loss),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
