/* Calibrated ports (src/em/calibrate.c): a uniform 50 Ω line of any length
 * between calibrated ports is a matched line, |S11| ≤ −35 dB, its S21 phase
 * β·ℓ within 0.5° — β measured independently of any port model, from the
 * trace of M2·M1⁻¹ of two other raw lines; moving the reference planes
 * shortens it by exactly the shift; the raw port stays available; an open
 * stub through a calibrated port is its line plus one open end (closed
 * forms), and the raw port adds one more. The circuits against openEMS:
 * test_circuits.c. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "em/geom.h"
#include "support_em.h"
#include "sv_test.h"

typedef struct line {
    sv_em_project *p;
    sv_em_model *m;
    int n;
} line;

static int line_dispersion = 0; /* effects.dispersion of the next lines */

/* εr 4.4, h 1.6 mm, W = 3.062 mm (HJ 50 Ω) in 10 cells (the mesh's Z0 +0.8 %,
 * docs/em.md), dx 0.5 mm; extra
 * text inserted into both ports. */
static void line_make_metal(line *l, int cells, const char *port_extra, double fmax, const char *metal)
{
    char json[2048];
    double w = 3.062, dx = 0.5;
    snprintf(json, sizeof json,
             "{\"units\": \"mm\", \"effects\": {\"dispersion\": %s}, \"substrate\": {\"thickness\": 1.6, \"eps_r\": 4.4},"
             "\"metal\": %s,"
             "\"grid\": {\"dx\": %.17g, \"dy\": %.17g, \"nx\": %d, \"ny\": 10},"
             "\"rectangles\": [{\"x\": [0, %.17g], \"y\": [0, %.17g]}],"
             "\"ports\": [{\"name\": \"a\", \"side\": \"left\", \"x\": 0, \"y\": [0, %.17g]%s},"
             "            {\"name\": \"b\", \"side\": \"right\", \"x\": %.17g, \"y\": [0, %.17g]%s}]}",
             line_dispersion ? "true" : "false", metal, dx, w / 10, cells, cells * dx, w, w, port_extra, cells * dx, w,
             port_extra);
    l->p = em_test_project(json);
    sv_em_options o = {.max_freq_hz = fmax};
    assert_int_equal(sv_em_model_create(NULL, l->p, &o, &l->m), SV_OK);
    l->n = sv_em_model_unknowns(l->m);
}
static void line_make(line *l, int cells, const char *port_extra, double fmax)
{
    line_make_metal(l, cells, port_extra, fmax, "{\"conductivity\": \"inf\"}");
}

static void line_free(line *l)
{
    sv_em_model_destroy(l->m);
    sv_em_project_destroy(l->p);
}

/* Raw port admittances (radiation on) at nf frequencies, by LAPACK; with
 * dispersion, whose term that path has not got, by the library's solve. */
static void line_raw_y(line *l, int nf, const double *f, double complex *Y)
{
    if (line_dispersion) {
        sv_em_affine *a;
        assert_int_equal(sv_em_affine_create(NULL, l->m, &a), SV_OK);
        assert_true(sv_em_affine_disperses(a));
        for (int i = 0; i < nf; i++) assert_int_equal(sv_em_solve(NULL, a, f[i], Y + 4 * i), SV_OK);
        sv_em_affine_destroy(a);
        return;
    }
    double *L, *P;
    em_test_full(l->m, &L, &P);
    sv_em_csr *G = NULL; /* lossy metal: Zs·G */
    if (isfinite(l->p->st.sigma)) assert_int_equal(sv_em_gram(NULL, l->m, &G), SV_OK);
    sv_em_radiation *rad = NULL;
    if (l->p->radiation)
        assert_int_equal(sv_em_radiation_create(NULL, l->m, sv_em_radiation_design_hz(l->m),
                                                sv_em_radiation_tolerance(l->m), &rad),
                         SV_OK);
    for (int i = 0; i < nf; i++) {
        double *R = rad ? em_test_radiation_full(rad, l->n, f[i]) : NULL;
        em_test_y_rad(l->m, L, P, G, R, f[i], Y + 4 * i);
        free(R);
    }
    sv_em_csr_destroy(G);
    sv_em_radiation_destroy(rad);
    free(L);
    free(P);
}

static void y_to_abcd(const double complex *y, double complex t[4])
{
    t[0] = -y[3] / y[1];
    t[2] = -1 / y[1];
    t[1] = -(y[0] * y[3] - y[2] * y[1]) / y[1];
    t[3] = -y[0] / y[1];
}

/* β (rad/m) from two raw lines of na and nb cells: cosh(γΔℓ) = tr(M2·M1⁻¹)/2. */
static void measure_beta(int na, int nb, int nf, const double *f, double *beta)
{
    line a, b;
    line_make(&a, na, ", \"calibration\": \"none\"", f[nf - 1]);
    line_make(&b, nb, ", \"calibration\": \"none\"", f[nf - 1]);
    double complex ya[4 * 8], yb[4 * 8];
    line_raw_y(&a, nf, f, ya);
    line_raw_y(&b, nf, f, yb);
    for (int i = 0; i < nf; i++) {
        double complex t1[4], t2[4];
        y_to_abcd(ya + 4 * i, t1);
        y_to_abcd(yb + 4 * i, t2);
        double complex det = t1[0] * t1[3] - t1[1] * t1[2];
        double complex tr = (t2[0] * t1[3] - t2[2] * t1[1] - t2[1] * t1[2] + t2[3] * t1[0]) / det;
        double complex g = cacosh(tr / 2);
        beta[i] = fabs(cimag(g)) / ((nb - na) * 0.5e-3);
    }
    line_free(&a);
    line_free(&b);
}

static void check_matched_line(double s11_max, double phase_max_top)
{
    const double f[4] = {0.5e9, 1.5e9, 3e9, 4.5e9};
    int nf = 4;
    double beta[4];
    measure_beta(30, 50, nf, f, beta);
    const int lengths[2] = {23, 61};
    for (int c = 0; c < 2; c++) {
        for (int shifted = 0; shifted < 2; shifted++) {
            line l;
            /* shifted: both planes 2 mm into the line */
            line_make(&l, lengths[c], shifted ? ", \"reference_plane\": 2" : "", f[nf - 1]);
            double complex Y[4 * 4], S[4];
            line_raw_y(&l, nf, f, Y);
            sv_em_calibration *cal = NULL;
            assert_int_equal(sv_em_calibration_create(NULL, l.m, nf, f, &cal), SV_OK);
            double len = lengths[c] * 0.5e-3 - (shifted ? 4e-3 : 0);
            for (int i = 0; i < nf; i++) {
                assert_int_equal(sv_em_calibration_apply(cal, i, Y + 4 * i), SV_OK);
                em_test_s(l.m, Y + 4 * i, S);
                double s11 = 20 * log10(cabs(S[0])), ph = -carg(S[1]), want = fmod(beta[i] * len, 2 * SV_EM_PI);
                double dph = remainder(ph - want, 2 * SV_EM_PI) * 180 / SV_EM_PI;
                double complex box[6];
                assert_int_equal(sv_em_calibration_box(cal, 0, i, box), SV_OK);
                printf("line %2d cells%s f %.1f GHz: |S11| %6.1f dB, |S21| %.4f dB, phase error %+.3f deg; port box "
                       "Ls %.1f pH, Cp %.1f fF, Zc %.2f ohm\n",
                       lengths[c], shifted ? " (planes 2 mm in)" : "", f[i] / 1e9, s11, 20 * log10(cabs(S[1])), dph,
                       cimag(box[1] / box[3]) / (2 * SV_EM_PI * f[i]) * 1e12,
                       cimag(box[2] / box[0]) / (2 * SV_EM_PI * f[i]) * 1e15, creal(box[4]));
                assert_true(s11 <= s11_max);
                assert_true(fabs(dph) <= (f[i] <= 3e9 ? 0.5 : phase_max_top));
            }
            sv_em_calibration_destroy(cal);
            line_free(&l);
        }
    }
}

static void test_matched_line(void **state)
{
    (void)state;
    check_matched_line(-35, 0.5);
}

/* The same with dispersion (its Zc kept from the reference frequency, as
 * without: the charge term's change and β's nearly cancel in Zc = β·p/ω),
 * to the issue's −35 dB and 0.5°: with its far field resummed the ports'
 * boxes are local again (−36.7 dB and 0.31° at worst, at 4.5 GHz; the first
 * order alone, whose c/ρ reaches along the whole line, −34.6 dB and 1.7°;
 * docs/em.md). */
static void test_matched_line_dispersion(void **state)
{
    (void)state;
    line_dispersion = 1;
    check_matched_line(-35, 0.5);
    line_dispersion = 0;
}

/* Low frequencies on copper (35 µm): the line's Zc = Z'/γ grows as its
 * resistance catches up with ωL, and far below the standards' reference
 * frequency their difference sinks towards their own rounding. A calibrated
 * line of 23 cells stays what it is there — at 1 MHz electrically tiny
 * (|γℓ| ~ 1e-3), so |S11| ≈ |Zc/Z0 − Z0/Zc|·|γℓ|/2 ≤ −35 dB and, where the
 * skin depth exceeds the thickness (≤ 3 MHz), |S21| within 1e-5 of the
 * series resistance's 2Z0/(2Z0 + R_dc·ℓ) — and passive, with the
 * box continuous where it changes from extracted to lumped. */
static void test_low_frequency(void **state)
{
    (void)state;
    enum { NF = 7 };
    const double f[NF] = {1e6, 3e6, 1e7, 3e7, 1e8, 3e8, 1e9};
    line l;
    line_make_metal(&l, 23, "", f[NF - 1], "{\"conductivity\": 5.8e7, \"thickness\": 0.035}");
    double complex Y[4 * NF], S[4];
    line_raw_y(&l, NF, f, Y);
    sv_em_calibration *cal = NULL;
    assert_int_equal(sv_em_calibration_create(NULL, l.m, NF, f, &cal), SV_OK);
    const double len = 23 * 0.5e-3, rdc = len / (5.8e7 * 35e-6 * 3.062e-3), s21dc = 100 / (100 + rdc);
    double cp_prev = 0;
    for (int i = 0; i < NF; i++) {
        assert_int_equal(sv_em_calibration_apply(cal, i, Y + 4 * i), SV_OK);
        em_test_s(l.m, Y + 4 * i, S);
        double complex box[6];
        assert_int_equal(sv_em_calibration_box(cal, 0, i, box), SV_OK);
        double cp = cimag(box[2] / box[0]) / (2 * SV_EM_PI * f[i]);
        double smax;
        assert_int_equal(sv_em_max_singular_value(2, S, &smax), SV_OK);
        printf("copper line f %6.0f MHz: |S11| %6.1f dB, |S21| - 1 %+.2e (series R: %+.2e), max sv %.9f; box Cp %.3f "
               "fF, Zc %.2f%+.2fj ohm\n",
               f[i] / 1e6, 20 * log10(cabs(S[0])), cabs(S[1]) - 1, s21dc - 1, smax, cp * 1e15, creal(box[4]),
               cimag(box[4]));
        assert_true(20 * log10(cabs(S[0])) <= -35);
        assert_true(smax <= 1 + 1e-9);
        if (f[i] <= 3e6) assert_true(fabs(cabs(S[1]) - s21dc) <= 1e-5);
        if (i > 0) assert_true(fabs(cp - cp_prev) <= 0.02 * fabs(cp_prev));
        cp_prev = cp;
    }
    sv_em_calibration_destroy(cal);
    line_free(&l);
}

/* The same on a circuit unlike its standards (the bundled pixelated
 * two-port, copper): at 1 and 3 MHz the ports' discontinuity (about 9 fF and
 * −60 pH there: ωC·Z0 ~ 3e-6, ωL/Z0 ~ 8e-6) barely moves S, so the
 * calibrated S stays within 2e-4 of the raw one, and passive. (A box
 * extracted from the standards' noise made its largest singular value 1.0005.) */
static void test_low_frequency_circuit(void **state)
{
    (void)state;
    char *json = sv_test_slurp("examples/pixel2port.json");
    line l = {.p = em_test_project(json)};
    free(json);
    sv_em_options o = {.max_freq_hz = 1e9};
    assert_int_equal(sv_em_model_create(NULL, l.p, &o, &l.m), SV_OK);
    l.n = sv_em_model_unknowns(l.m);
    const double f[2] = {1e6, 3e6};
    double complex Y[8], Yraw[8], S[4], Sraw[4];
    line_raw_y(&l, 2, f, Y);
    memcpy(Yraw, Y, sizeof Y);
    sv_em_calibration *cal = NULL;
    assert_int_equal(sv_em_calibration_create(NULL, l.m, 2, f, &cal), SV_OK);
    for (int i = 0; i < 2; i++) {
        assert_int_equal(sv_em_calibration_apply(cal, i, Y + 4 * i), SV_OK);
        em_test_s(l.m, Y + 4 * i, S);
        em_test_s(l.m, Yraw + 4 * i, Sraw);
        double d = 0;
        for (int q = 0; q < 4; q++) d = fmax(d, cabs(S[q] - Sraw[q]));
        double smax;
        assert_int_equal(sv_em_max_singular_value(2, S, &smax), SV_OK);
        printf("pixel2port f %.0f MHz: calibrated - raw %.2e, max sv %.9f\n", f[i] / 1e6, d, smax);
        assert_true(d <= 2e-4);
        assert_true(smax <= 1 + 1e-9);
    }
    sv_em_calibration_destroy(cal);
    line_free(&l);
}

/* The port of the Momentum circuits' launch (W 56 mil, h 30 mil, εr 4.5,
 * 8-mil cells, a perfect sheet) feeding an open stub of `cells` cells:
 * its capacitance Im(Y)/ω at 100 MHz (βℓ ≤ 0.03: the line's tan is
 * its argument to 3e-4), raw and calibrated, by LAPACK on the quasi-static
 * model. */
static void open_stub_c(int cells, double *c_raw, double *c_cal)
{
    char json[1024];
    snprintf(json, sizeof json,
             "{\"units\": \"mil\", \"substrate\": {\"thickness\": 30, \"eps_r\": 4.5},"
             "\"metal\": {\"conductivity\": \"inf\"}, \"effects\": {\"radiation\": false},"
             "\"grid\": {\"dx\": 8, \"dy\": 8, \"nx\": %d, \"ny\": 11},"
             "\"rectangles\": [{\"x\": [0, %d], \"y\": [16, 72]}],"
             "\"ports\": [{\"name\": \"a\", \"side\": \"left\", \"x\": 0, \"y\": [16, 72]}]}",
             cells + 6, 8 * cells);
    line l = {.p = em_test_project(json)};
    sv_em_options o = {.max_freq_hz = 1e9};
    assert_int_equal(sv_em_model_create(NULL, l.p, &o, &l.m), SV_OK);
    const double f = 1e8, w = 2 * SV_EM_PI * f;
    double complex Y;
    double *L, *P;
    em_test_full(l.m, &L, &P);
    em_test_y(l.m, L, P, NULL, f, &Y);
    *c_raw = cimag(Y) / w;
    sv_em_calibration *cal = NULL;
    assert_int_equal(sv_em_calibration_create(NULL, l.m, 1, &f, &cal), SV_OK);
    assert_int_equal(sv_em_calibration_apply(cal, 0, &Y), SV_OK);
    *c_cal = cimag(Y) / w;
    sv_em_calibration_destroy(cal);
    free(L);
    free(P);
    line_free(&l);
}

/* What the calibration removes, against closed forms: an open stub seen
 * through a calibrated port is its line's C'·ℓ plus one open end, C'·Δl
 * (Hammerstad–Jensen's C' = √εeff/(c·Z0), Kirschning–Jansen–Koster's Δl);
 * the raw edge port adds a second open end, the strip's end where the port
 * sits, and nothing else. C' of the model's line comes from two lengths, so
 * the end is measured apart from the line's own error. */
static void test_open_stub(void **state)
{
    (void)state;
    const double mil = 25.4e-6, w = 56 * mil, h = 30 * mil, er = 4.5;
    double z0, eeff;
    em_test_hj(w, h, er, &z0, &eeff);
    const double c_hj = sqrt(eeff) / (SV_EM_C0 * z0), c_end = c_hj * em_test_open_end_kj(w, h, er);
    double raw1, cal1, raw2, cal2;
    open_stub_c(13, &raw1, &cal1);
    open_stub_c(26, &raw2, &cal2);
    const double len1 = 13 * 8 * mil, c_line = (cal2 - cal1) / len1, end = cal1 - c_line * len1;
    printf("56-mil line: C' %.2f pF/m (HJ %.2f, %+.2f %%); open end %.2f fF (KJK %.2f, %+.1f %%);\n"
           "  raw - calibrated: %.2f fF (13 cells), %.2f fF (26 cells), %+.1f / %+.1f %% of the open end\n",
           c_line * 1e12, c_hj * 1e12, 100 * (c_line / c_hj - 1), end * 1e15, c_end * 1e15,
           100 * (end / c_end - 1), (raw1 - cal1) * 1e15, (raw2 - cal2) * 1e15,
           100 * ((raw1 - cal1) / c_end - 1), 100 * ((raw2 - cal2) / c_end - 1));
    assert_true(fabs(c_line / c_hj - 1) <= 0.015);
    assert_true(fabs(end / c_end - 1) <= 0.10);
    assert_true(fabs((raw1 - cal1) / c_end - 1) <= 0.10);
    assert_true(fabs((raw2 - cal2) / c_end - 1) <= 0.10);
}

/* "calibration": "none" keeps the raw edge port: Y is untouched. */
static void test_raw_port(void **state)
{
    (void)state;
    line l;
    line_make(&l, 20, ", \"calibration\": \"none\"", 2e9);
    assert_int_equal(sv_em_project_calibrated(l.p), 0);
    double f = 1e9;
    double complex Y[4], Y0[4];
    line_raw_y(&l, 1, &f, Y);
    memcpy(Y0, Y, sizeof Y);
    sv_em_calibration *cal = NULL;
    assert_int_equal(sv_em_calibration_create(NULL, l.m, 1, &f, &cal), SV_OK);
    assert_int_equal(sv_em_calibration_apply(cal, 0, Y), SV_OK);
    for (int q = 0; q < 4; q++) assert_true(cabs(Y[q] - Y0[q]) <= 1e-15 * cabs(Y0[q]));
    sv_em_calibration_destroy(cal);
    line_free(&l);
}

/* The standards' memory: what sv_em_calibration_create holds at its peak,
 * counted by its context, is within sv_em_calibration_bytes (the tools'
 * estimate before a run), and a limit below that estimate is refused
 * before any standard is made. */
static void test_bytes(void **state)
{
    (void)state;
    const double f[3] = {1e9, 2e9, 3e9};
    line l, raw;
    line_make(&l, 20, "", f[2]);
    line_make(&raw, 20, ", \"calibration\": \"none\"", f[2]);
    assert_int_equal(sv_em_calibration_bytes(raw.m, 3, f), 0);
    size_t est = sv_em_calibration_bytes(l.m, 3, f);
    sv_ctx *ctx;
    assert_int_equal(sv_ctx_create(&ctx), SV_OK);
    sv_em_calibration *cal = NULL;
    assert_int_equal(sv_em_calibration_create(ctx, l.m, 3, f, &cal), SV_OK);
    size_t peak = sv_ctx_memory_peak(ctx);
    print_message("calibration peak %zu bytes, estimated %zu\n", peak, est);
    assert_true(peak > 0 && peak <= est);
    sv_em_calibration_destroy(cal);
    sv_ctx_destroy(ctx);
    assert_int_equal(sv_ctx_create(&ctx), SV_OK);
    assert_int_equal(sv_ctx_set_memory_limit(ctx, est - 1), SV_OK);
    cal = (sv_em_calibration *)1;
    assert_int_equal(sv_em_calibration_create(ctx, l.m, 3, f, &cal), SV_ERR_BUDGET);
    assert_null(cal);
    assert_non_null(strstr(sv_last_error(), "port calibration"));
    assert_int_equal(sv_ctx_memory_peak(ctx), 0);
    sv_ctx_destroy(ctx);
    line_free(&l);
    line_free(&raw);
}

/* A thru standard's like: a line one cell wide (the edge profile on its
 * cells and port half rooftops), thick metal (its walls) on a lossy
 * substrate, `cells` long, cells dx × dy (mm); sharing the wall tables and
 * edge memo of `like` (when it is not NULL and they fit). */
static void strip_make(line *l, int cells, double dy, const sv_em_model *like)
{
    char json[2048];
    snprintf(json, sizeof json,
             "{\"units\": \"mm\", \"substrate\": {\"thickness\": 0.508, \"eps_r\": 3.66, \"tan_delta\": 0.0037},"
             "\"metal\": {\"conductivity\": 5.8e7, \"thickness\": 0.035},"
             "\"grid\": {\"dx\": 0.25, \"dy\": %.17g, \"nx\": %d, \"ny\": 1},"
             "\"rectangles\": [{\"x\": [0, %.17g], \"y\": [0, %.17g]}],"
             "\"ports\": [{\"name\": \"a\", \"side\": \"left\", \"x\": 0, \"y\": [0, %.17g]},"
             "            {\"name\": \"b\", \"side\": \"right\", \"x\": %.17g, \"y\": [0, %.17g]}]}",
             dy, cells, cells * 0.25, dy, dy, cells * 0.25, dy);
    l->p = em_test_project(json);
    assert_int_equal(sv_em_model_create_sharing(NULL, l->p, NULL, like, &l->m), SV_OK);
    l->n = sv_em_model_unknowns(l->m);
}

static size_t colbase_dense(void *user, int j) { return (size_t)j * (size_t)*(int *)user + (size_t)j; }

/* L, Ψ and Ψ's imaginary part, full n × n (lower triangles filled). */
static double *strip_assemble(const line *l)
{
    int n = l->n;
    double *a = calloc(3 * (size_t)n * n, sizeof(double));
    assert_non_null(a);
    assert_int_equal(sv_em_assemble_raw_lossy(NULL, l->m, a, a + (size_t)n * n, a + 2 * (size_t)n * n, colbase_dense,
                                              &n, NULL),
                     SV_OK);
    return a;
}

/* The standards share the tables that depend on the cell, the stack-up,
 * the effects and the options alone (sv_em_model_create_sharing): each
 * line's matrices are the same bits as when it has its own tables,
 * whichever of the lines sharing them is assembled first; a model of
 * another cell makes its own. */
static void test_shared_tables(void **state)
{
    (void)state;
    line a, b, other, first, second, far;
    strip_make(&a, 6, 0.25, NULL);
    strip_make(&b, 12, 0.25, NULL);
    strip_make(&other, 6, 0.3, NULL);
    assert_true(sv_em_edge_profiled(a.m));
    double *ra = strip_assemble(&a), *rb = strip_assemble(&b), *ro = strip_assemble(&other);
    strip_make(&first, 6, 0.25, NULL);
    strip_make(&second, 12, 0.25, first.m);
    strip_make(&far, 6, 0.3, first.m);
    assert_non_null(first.m->walls);
    assert_non_null(first.m->memo);
    assert_ptr_equal(second.m->walls, first.m->walls);
    assert_ptr_equal(second.m->memo, first.m->memo);
    assert_ptr_not_equal(far.m->walls, first.m->walls);
    assert_ptr_not_equal(far.m->memo, first.m->memo);
    double *s2 = strip_assemble(&second), *s1 = strip_assemble(&first), *sf = strip_assemble(&far);
    assert_memory_equal(s1, ra, 3 * sizeof(double) * (size_t)a.n * a.n);
    assert_memory_equal(s2, rb, 3 * sizeof(double) * (size_t)b.n * b.n);
    assert_memory_equal(sf, ro, 3 * sizeof(double) * (size_t)other.n * other.n);
    free(s2);
    s2 = strip_assemble(&second); /* again, from the changes both found: the same bits */
    assert_memory_equal(s2, rb, 3 * sizeof(double) * (size_t)b.n * b.n);
    free(ra), free(rb), free(ro), free(s1), free(s2), free(sf);
    line_free(&far);
    line_free(&second);
    line_free(&first);
    line_free(&a);
    line_free(&b);
    line_free(&other);
}

/* A model keeps the changes its assemblies found (its next assembly, from
 * them, gives the same bits), and a standard made later shares them: it
 * has the bits of one with tables of its own. */
static void test_kept_tables(void **state)
{
    (void)state;
    line circuit, own, standard;
    strip_make(&circuit, 6, 0.25, NULL);
    strip_make(&own, 12, 0.25, NULL);
    double *c1 = strip_assemble(&circuit), *c2 = strip_assemble(&circuit), *o = strip_assemble(&own);
    assert_memory_equal(c1, c2, 3 * sizeof(double) * (size_t)circuit.n * circuit.n);
    strip_make(&standard, 12, 0.25, circuit.m);
    assert_ptr_equal(standard.m->memo, circuit.m->memo);
    double *lent = strip_assemble(&standard);
    assert_memory_equal(lent, o, 3 * sizeof(double) * (size_t)standard.n * standard.n);
    free(c1), free(c2), free(o), free(lent);
    line_free(&standard);
    line_free(&circuit);
    line_free(&own);
}

/* The edge profile's sub-strips: sv_em_L_strips, which shares the closed
 * form's values between the pairs of sub-strips, gives each pair's
 * sv_em_L_profiles to the bit (port half rooftops, rooftops, both). */
static void test_strips(void **state)
{
    (void)state;
    line l;
    strip_make(&l, 6, 0.25, NULL);
    int port = l.m->nx_edges + l.m->ny_edges, pairs[3][2] = {{port, port}, {port, 1}, {0, 2}};
    for (int k = 0; k < 3; k++)
        for (int exact = 0; exact < 2; exact++) {
            sv_em_profile_t a, b, as, bs;
            sv_em_profile(l.m, pairs[k][0], &a);
            sv_em_profile(l.m, pairs[k][1], &b);
            double ta[9], tb[9], got[64];
            for (int s = 0; s <= 8; s++) {
                ta[s] = a.t1 + 0.5 * (a.t2 - a.t1) * (1 - cos(SV_EM_PI * s / 8));
                tb[s] = b.t1 + 0.5 * (b.t2 - b.t1) * (1 - cos(SV_EM_PI * s / 8));
            }
            sv_em_L_strips(l.m, &a, ta, 8, &b, tb, 8, exact, got);
            as = a, bs = b;
            for (int u = 0; u < 8; u++)
                for (int v = 0; v < 8; v++) {
                    as.t1 = ta[u], as.t2 = ta[u + 1], bs.t1 = tb[v], bs.t2 = tb[v + 1];
                    double want = sv_em_L_profiles(l.m, &as, &bs, exact);
                    assert_memory_equal(&got[u * 8 + v], &want, sizeof want);
                }
        }
    line_free(&l);
}

/* A pair's edge-profile change is computed relative to its first cell:
 * the same bits wherever the pair lies (what lets one memo entry serve
 * every pair of its shape, in any model of the grid), and within rounding
 * of the value in the grid's own coordinates (the closed forms there). */
static void test_dl_translation(void **state)
{
    (void)state;
    line l;
    strip_make(&l, 12, 0.25, NULL);
    int port = l.m->nx_edges + l.m->ny_edges; /* the left port's half rooftop, at cell 0 */
    int port_r = port + 1;                   /* the right one, at cell 11 */
    /* rooftop pairs at offsets 1 and 2, three positions along the strip */
    for (int off = 1; off <= 2; off++) {
        double first = sv_em_edge_dL(l.m, 1, 1 + off, 0);
        assert_true(fabs(first) > 0);
        for (int q = 3; q <= 7; q += 2) {
            double v = sv_em_edge_dL(l.m, q, q + off, 0);
            assert_memory_equal(&v, &first, sizeof v);
        }
    }
    /* the left port's pairs against their mirror images (the right port,
     * rooftops counted from the right: currents reversed, so ΔL changes
     * sign), within the closed forms' rounding of a small difference (ΔL is
     * about 1e-3 of L) */
    assert_int_equal(l.m->basis[port].side, SV_EM_LEFT);
    assert_int_equal(l.m->basis[port_r].side, SV_EM_RIGHT);
    for (int k = 0; k < 3; k++) {
        double left = sv_em_edge_dL(l.m, port, k, 0), right = sv_em_edge_dL(l.m, port_r, 10 - k, 0);
        assert_true(fabs(left) > 0);
        assert_true(fabs(right + left) <= 1e-9 * fabs(left));
    }
    line_free(&l);
}

/* The changes with a port half rooftop take SV_EM_GL_EDGE points on both
 * levels of their nested quadrature: against the same changes with the
 * largest rule, 16 points (the near rule's, which they took before; 12
 * and 16 points agree to 1e-11 in S), within 1e-4 of each change, on the
 * strip's every port pair. */
static void test_dl_edge_rule(void **state)
{
    (void)state;
    line l;
    strip_make(&l, 6, 0.25, NULL);
    int n = l.n, pairs = 0;
    double *fast = malloc(sizeof(double) * (size_t)n * n);
    assert_non_null(fast);
    for (int r = 0; r < n; r++)
        for (int c = 0; c < n; c++) fast[(size_t)r * n + c] = sv_em_edge_dL(l.m, r, c, 0);
    sv_em_gl_make(SV_EM_GL_MAX, 1, &l.m->gl_edge);
    double worst = 0;
    for (int r = 0; r < n; r++)
        for (int c = 0; c < n; c++) {
            if (sv_em_is_rooftop(l.m->basis[r].kind) && sv_em_is_rooftop(l.m->basis[c].kind)) continue;
            double ref = sv_em_edge_dL(l.m, r, c, 0), got = fast[(size_t)r * n + c];
            if (ref == 0) {
                assert_true(got == 0);
                continue;
            }
            worst = fmax(worst, fabs(got - ref) / fabs(ref));
            pairs++;
        }
    printf("edge rule %d points: %d port pairs, worst relative change of dL against 16 points %.2e\n", SV_EM_GL_EDGE,
           pairs, worst);
    assert_true(pairs >= 6);
    assert_true(worst <= 1e-4);
    free(fast);
    line_free(&l);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_matched_line),
        cmocka_unit_test(test_matched_line_dispersion),
        cmocka_unit_test(test_low_frequency),
        cmocka_unit_test(test_low_frequency_circuit),
        cmocka_unit_test(test_open_stub),
        cmocka_unit_test(test_raw_port),
        cmocka_unit_test(test_bytes),
        cmocka_unit_test(test_shared_tables),
        cmocka_unit_test(test_kept_tables),
        cmocka_unit_test(test_strips),
        cmocka_unit_test(test_dl_translation),
        cmocka_unit_test(test_dl_edge_rule),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
