/* Lossy lines: the attenuation of a 50 Ω microstrip (εr 4.4, h 1.6 mm,
 * W 3.062 mm, 10 cells across; for α_d also its half-scale twin, h 0.8
 * mm, W 1.531 mm) extracted from two line lengths (the
 * eigenvalues of M2·M1⁻¹ are e^{±γΔl} whatever the ports are), against
 *  - dielectric loss (tan δ 0.02, perfect metal):
 *      αd = k0·εr·(εeff − 1)·tan δ / (2·√εeff·(εr − 1))      within 5 %
 *    where the model holds it (β·h < 0.1; with dispersion, to 3 GHz), the
 *    rest printed as reports;
 *  - conductor loss (copper, 35 µm, lossless dielectric): Hammerstad and
 *    Jensen's αc = Rs·Ki/(Z0·W), Ki = exp(−1.2·(Z0/η0)^0.7), within 15 %,
 *    times the strip's share of it (the model's ground plane is perfect:
 *    docs/em.md) from Wheeler's incremental-inductance rule on HJ's
 *    thickness-corrected air-line impedance (∂Z0air/∂n receding the strip's
 *    surfaces against receding the ground's). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "support_em.h"
#include "sv_test.h"

typedef struct line {
    double h, w, dx; /* mm */
} line;
static const line thick_sub = {1.6, 3.062, 0.5}, thin_sub = {0.8, 1.531, 0.25};

static const char *loss_mode = "true"; /* effects.dielectric_loss of the next lines */
static int loss_dispersion = 0;        /* effects.dispersion of the next lines */

static void line_y(const line *ln, const char *metal, double tan_d, int ncl, double f, double complex *Y)
{
    char json[1200];
    const double h = ln->h, er = 4.4, w = ln->w, dx = ln->dx;
    snprintf(json, sizeof json,
             "{\"units\": \"mm\", \"substrate\": {\"thickness\": %g, \"eps_r\": %g, \"tan_delta\": %g},"
             " \"metal\": {%s}, \"grid\": {\"dx\": %g, \"dy\": %.17g, \"nx\": %d, \"ny\": 10},"
             " \"rectangles\": [{\"x\": [0, %.17g], \"y\": [0, %.17g]}],"
             " \"ports\": [{\"name\": \"a\", \"side\": \"left\", \"x\": 0, \"y\": [0, %.17g]},"
             "            {\"name\": \"b\", \"side\": \"right\", \"x\": %.17g, \"y\": [0, %.17g]}],"
             " \"effects\": {\"dielectric_loss\": %s, \"radiation\": false, \"dispersion\": %s}}",
             h, er, tan_d, metal, dx, w / 10, ncl, ncl * dx, w, w, ncl * dx, w, loss_mode,
             loss_dispersion ? "true" : "false");
    em_test_case c;
    em_test_case_open(&c, json);
    assert_int_equal(sv_em_solve(NULL, c.a, f, Y), SV_OK);
    em_test_case_close(&c);
}

/* α (Np/m) from the two lengths: N = T2·T1⁻¹ has eigenvalues e^{±γΔl}. */
static double attenuation(const line *ln, const char *metal, double tan_d, double f)
{
    const int n1 = 20, n2 = 60;
    double complex Y1[4], Y2[4], T1[4], T2[4];
    line_y(ln, metal, tan_d, n1, f, Y1);
    line_y(ln, metal, tan_d, n2, f, Y2);
    const double complex *Ys[2] = {Y1, Y2};
    double complex *Ts[2] = {T1, T2};
    for (int k = 0; k < 2; k++) { /* ABCD, column-major */
        const double complex *Y = Ys[k];
        Ts[k][0] = -Y[3] / Y[1];
        Ts[k][2] = -1 / Y[1];
        Ts[k][1] = -(Y[0] * Y[3] - Y[2] * Y[1]) / Y[1];
        Ts[k][3] = -Y[0] / Y[1];
    }
    double complex det = T1[0] * T1[3] - T1[1] * T1[2], inv[4] = {T1[3] / det, -T1[1] / det, -T1[2] / det, T1[0] / det};
    double complex N[4];
    for (int r = 0; r < 2; r++)
        for (int c = 0; c < 2; c++) N[r + 2 * c] = T2[r] * inv[2 * c] + T2[r + 2] * inv[1 + 2 * c];
    double complex tr = N[0] + N[3], dn = N[0] * N[3] - N[1] * N[2];
    double complex l1 = tr / 2 + csqrt(tr * tr / 4 - dn), l2 = tr / 2 - csqrt(tr * tr / 4 - dn);
    double lam = fmax(cabs(l1), cabs(l2));
    return log(lam) / ((n2 - n1) * ln->dx * 1e-3);
}

/* The model's α_d of a line against the quasi-TEM formula with HJ's static
 * εeff, or with Kirschning and Jansen's εeff(f) when dispersive: asserted
 * within 5 %, or printed as a report, not a check, where why_not says why
 * the model is not expected to hold there. */
static void alpha_d_check(const char *label, const line *ln, double f, int dispersive, const char *why_not)
{
    const double er = 4.4, td = 0.02;
    double z0, ee;
    em_test_hj(ln->w * 1e-3, ln->h * 1e-3, er, &z0, &ee);
    if (dispersive) ee = em_test_kirschning_jansen(ln->w * 1e-3, ln->h * 1e-3, er, f);
    double k0 = 2 * SV_EM_PI * f / SV_EM_C0;
    double ref = k0 * er * (ee - 1) * td / (2 * sqrt(ee) * (er - 1));
    double got = attenuation(ln, "\"conductivity\": \"inf\"", td, f);
    printf("alpha_d (%s) h %.1f mm at %4.1f GHz: model %.4f Np/m, formula %.4f Np/m (eeff %.3f): %+.2f %%", label,
           ln->h, f / 1e9, got, ref, ee, 100 * (got / ref - 1));
    if (why_not) {
        printf(": report (not asserted: %s)\n", why_not);
        return;
    }
    printf(" (target 5 %%)\n");
    sv_assert_close(got, ref, 0.05, 0);
}

/* β·h of a line at f, β from HJ's static εeff. */
static double beta_h(const line *ln, double f)
{
    double z0, ee;
    em_test_hj(ln->w * 1e-3, ln->h * 1e-3, 4.4, &z0, &ee);
    return 2 * SV_EM_PI * f / SV_EM_C0 * sqrt(ee) * ln->h * 1e-3;
}

/* Both forms of the dielectric's loss: Ψ_im as a multiple of Ψ (the
 * default) and as its own term ("exact"). Where β·h ≥ 0.1 the quasi-static
 * kernel's own dispersion (no retardation: docs/em.md, "Real boards")
 * lowers β, and α with it: those six are reports; the 5 % holds below
 * (the 0.8-mm line to 3 GHz, the 1.6-mm one at 1 GHz). */
static void test_dielectric_loss(void **state)
{
    (void)state;
    const double f[] = {1e9, 3e9, 10e9};
    const line *lines[2] = {&thin_sub, &thick_sub};
    const char *modes[2] = {"true", "\"exact\""};
    for (int md = 0; md < 2; md++)
        for (int l = 0; l < 2; l++) {
            loss_mode = modes[md];
            for (int k = 0; k < 3; k++) {
                char why[160];
                double bh = beta_h(lines[l], f[k]);
                snprintf(why, sizeof why, "beta*h %.2f >= 0.1, the static kernel's own dispersion lowers beta and alpha",
                         bh);
                alpha_d_check(md ? "exact term" : "ratio of Psi", lines[l], f[k], 0, bh < 0.1 ? NULL : why);
            }
        }
    loss_mode = "true";
}

/* With dispersion (effects.dispersion) the line's β rises with frequency
 * as it should, and so does the formula's with Kirschning and Jansen's
 * εeff(f): within the 5 % to 3 GHz on both lines. At 10 GHz they are
 * reports: the 1.6-mm line (k0·h·√εr 0.70) is past the first order's
 * reach (0.45, sv_em_model_dispersion_limit_hz) and the model's (0.5); the
 * 0.8-mm line (0.35) is within it, but its α_d falls short there
 * (docs/em.md, "Real boards": a known gap of the first order). */
static void test_dielectric_loss_dispersion(void **state)
{
    (void)state;
    const double f[] = {1e9, 3e9, 10e9};
    const line *lines[2] = {&thin_sub, &thick_sub};
    const char *top[2] = {"10 GHz, the first order's known gap at the band's top",
                          "10 GHz, k0*h*sqrt(er) 0.70: past the first order's reach"};
    loss_dispersion = 1;
    for (int l = 0; l < 2; l++)
        for (int k = 0; k < 3; k++)
            alpha_d_check("dispersion, against eeff(f)", lines[l], f[k], 1, f[k] <= 3e9 ? NULL : top[l]);
    loss_dispersion = 0;
}

/* Hammerstad–Jensen's air-line impedance of the thick strip. */
static double z0_air(double w, double h, double t)
{
    double z, e;
    em_test_hj_thick(w, h, t, 1, &z, &e);
    return z;
}

static void test_conductor_loss(void **state)
{
    (void)state;
    const double w = 3.062e-3, h = 1.6e-3, t = 35e-6, sigma = 5.8e7, eta0 = 376.730313668, f[] = {1e9, 3e9, 10e9};
    double z0, ee;
    em_test_hj_thick(w, h, t, 4.4, &z0, &ee);
    double dn = 1e-3 * t; /* the strip's surfaces recede by dn: W − 2dn, t − 2dn, h + dn */
    double dzs = (z0_air(w - 2 * dn, h + dn, t - 2 * dn) - z0_air(w + 2 * dn, h - dn, t + 2 * dn)) / (2 * dn);
    double dzg = (z0_air(w, h + dn, t) - z0_air(w, h - dn, t)) / (2 * dn); /* the ground's surface */
    double ki = exp(-1.2 * pow(z0 / eta0, 0.7)); /* HJ's current distribution factor */
    for (int k = 0; k < 3; k++) {
        double rs = creal(sv_em_surface_impedance(sigma, t, f[k]));
        double hj = rs * ki / (z0 * w), share = dzs / (dzs + dzg), wheeler = rs * dzs / (2 * eta0 * z0);
        double got = attenuation(&thick_sub, "\"conductivity\": 5.8e7, \"thickness\": 0.035", 0, f[k]);
        printf("alpha_c at %4.1f GHz: model %.4f Np/m; HJ %.4f Np/m (strip and ground) x the strip's share %.3f "
               "(Wheeler) = %.4f: %+.2f %% (target 15 %%); Wheeler's strip part alone %.4f\n",
               f[k] / 1e9, got, hj, share, hj * share, 100 * (got / (hj * share) - 1), wheeler);
        sv_assert_close(got, hj * share, 0.15, 0);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_dielectric_loss),
        cmocka_unit_test(test_dielectric_loss_dispersion),
        cmocka_unit_test(test_conductor_loss),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
