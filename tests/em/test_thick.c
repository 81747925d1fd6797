/* Thick metal: the model's inductance of a straight bar with uniform (DC)
 * current against Hoer and Love's exact closed form for rectangular bars
 * (J. Res. NBS 69C, 1965: partial self inductance minus the mutual
 * inductance with the ground image), within the 0.5 %; and the
 * sheet limit: thick metal of vanishing thickness gives the sheet's L. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "support_em.h"
#include "sv_test.h"

/* Hoer–Love's f (their eq. 14), written from the paper in its own form. */
static double hl(double x, double y, double z)
{
    double R = sqrt(x * x + y * y + z * z), f = 0;
    if (R == 0) return 0;
    if (y != 0 || z != 0) f += (y * y * z * z / 4 - pow(y, 4) / 24 - pow(z, 4) / 24) * x * log((x + R) / hypot(y, z));
    if (x != 0 || z != 0) f += (x * x * z * z / 4 - pow(x, 4) / 24 - pow(z, 4) / 24) * y * log((y + R) / hypot(x, z));
    if (x != 0 || y != 0) f += (x * x * y * y / 4 - pow(x, 4) / 24 - pow(y, 4) / 24) * z * log((z + R) / hypot(x, y));
    f += (pow(x, 4) + pow(y, 4) + pow(z, 4) - 3 * x * x * y * y - 3 * y * y * z * z - 3 * x * x * z * z) * R / 60;
    if (x != 0 && y != 0 && z != 0)
        f -= x * y * pow(z, 3) / 6 * atan(x * y / (z * R)) + x * pow(y, 3) * z / 6 * atan(x * z / (y * R)) +
             pow(x, 3) * y * z / 6 * atan(y * z / (x * R));
    return f;
}

/* Mutual inductance (H) of two parallel bars along x: bar 1 [0,l]×[0,a]×[0,b],
 * bar 2 [E, E+l2]×[P, P+c]×[Q, Q+d] (the paper's eq. 14 with q, r, s). */
static double hl_mutual(double l, double a, double b, double E, double l2, double P, double c, double Q, double d)
{
    double q[4] = {E - l, E + l2 - l, E + l2, E}, r[4] = {P - a, P + c - a, P + c, P},
           s[4] = {Q - b, Q + d - b, Q + d, Q};
    double sum = 0;
    for (int i = 0; i < 4; i++)
        for (int j = 0; j < 4; j++)
            for (int k = 0; k < 4; k++) sum += (((i + j + k + 3 + 1) & 1) ? -1 : 1) * hl(q[i], r[j], s[k]);
    return 1e-7 * sum / (a * b * c * d);
}

/* Iᵀ·L·I for a uniform current of 1 A along a bar of ncl × ncw cells between
 * its two edge ports. */
static double model_bar_L(double len, double w, int ncl, int ncw, double h, double t, int thick)
{
    char json[1024];
    snprintf(json, sizeof json,
             "{\"units\": \"mm\", \"substrate\": {\"thickness\": %.17g, \"eps_r\": 4.4},"
             " \"metal\": {\"conductivity\": 5.8e7, \"thickness\": %.17g},"
             " \"grid\": {\"dx\": %.17g, \"dy\": %.17g, \"nx\": %d, \"ny\": %d},"
             " \"rectangles\": [{\"x\": [0, %.17g], \"y\": [0, %.17g]}],"
             " \"ports\": [{\"name\": \"a\", \"side\": \"left\", \"x\": 0, \"y\": [0, %.17g]},"
             "            {\"name\": \"b\", \"side\": \"right\", \"x\": %.17g, \"y\": [0, %.17g]}],"
             " \"effects\": {\"thick_metal\": %s}}",
             h, t, len / ncl, w / ncw, ncl, ncw, len, w, w, len, w, thick ? "true" : "false");
    sv_em_project *p = em_test_project(json);
    sv_em_model *m = em_test_model(p);
    int n = sv_em_model_unknowns(m);
    double *L, *P, *cur = calloc((size_t)n, sizeof(double));
    em_test_full(m, &L, &P);
    for (int q = 0; q < n; q++) {
        const sv_em_basis *b = &m->basis[q];
        if (b->kind == 0) cur[q] = 1.0 / ncw;
        if (b->kind == 2) cur[q] = (b->side == SV_EM_LEFT ? 1.0 : -1.0) / ncw;
    }
    double e = 0;
    for (int i = 0; i < n; i++)
        for (int j = 0; j < n; j++) e += cur[i] * L[i + (size_t)n * j] * cur[j];
    free(L);
    free(P);
    free(cur);
    sv_em_model_destroy(m);
    sv_em_project_destroy(p);
    return e;
}

static void test_bar_dc_inductance(void **state)
{
    (void)state;
    /* lengths in mm; bars of t/W 0.1 to 1, over ground at h */
    const struct { double len, w, h, t; int ncl, ncw; } c[] = {
        {10, 0.5, 0.8, 0.05, 20, 2}, {10, 0.5, 0.8, 0.25, 20, 2}, {5, 0.2, 0.762, 0.0711, 25, 1},
        {4, 1.0, 0.5, 0.5, 16, 4},
    };
    for (size_t k = 0; k < sizeof c / sizeof c[0]; k++) {
        double len = c[k].len * 1e-3, w = c[k].w * 1e-3, h = c[k].h * 1e-3, t = c[k].t * 1e-3;
        double self = hl_mutual(len, w, t, 0, len, 0, w, 0, t);
        double image = hl_mutual(len, w, t, 0, len, 0, w, -2 * h - t, t);
        double ref = self - image, got = model_bar_L(c[k].len, c[k].w, c[k].ncl, c[k].ncw, c[k].h, c[k].t, 1);
        double sheet = model_bar_L(c[k].len, c[k].w, c[k].ncl, c[k].ncw, c[k].h, c[k].t, 0);
        printf("bar %g x %g x %g mm over h %g: model %.6g nH, Hoer-Love %.6g nH (%+.2e), sheet model %.6g nH "
               "(%+.1f %%)\n",
               c[k].len, c[k].w, c[k].t, c[k].h, got * 1e9, ref * 1e9, got / ref - 1, sheet * 1e9,
               100 * (sheet / ref - 1));
        sv_assert_close(got, ref, 0.005, 0);
    }
}

/* As t → 0 the bars become the sheet: thick metal of 2e-6 of a cell gives
 * the sheet model's L (to the order of t/side). */
static void test_sheet_limit(void **state)
{
    (void)state;
    double thick = model_bar_L(3, 0.6, 10, 3, 0.5, 0.5e-6, 1), sheet = model_bar_L(3, 0.6, 10, 3, 0.5, 0.5e-6, 0);
    printf("t = 2e-6 of a cell: thick %.12g nH, sheet %.12g nH\n", thick * 1e9, sheet * 1e9);
    sv_assert_close(thick, sheet, 1e-5, 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_bar_dc_inductance),
        cmocka_unit_test(test_sheet_limit),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
