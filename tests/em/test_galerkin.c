/* The exact Galerkin inductance of rooftops and half rooftops against an
 * independent quadrature of its 4-D definition.
 *
 * L_mn = μ0/(4π·wm·wn)·∫∫ fm(x)·fn(x')·[1/R − 1/R_image] over the two cells,
 * f the triangle (half triangle) along the current, uniform across. With
 * u = x' − x the along-axis part reduces to the cross-correlation
 * c(u) = ∫ fm(x)·fn(x + u) dx (piecewise cubic; here Milne's open rule on
 * the pieces where both are linear, exact), the across part to the overlap
 * of the two cell widths integrated analytically against 1/R per linear
 * piece, and the u integral is tanh-sinh per piece of c. The code under
 * test instead writes each profile as an average of pulses and uses the
 * closed-form rectangle integrals under Gauss–Legendre quadrature. */
#include <math.h>
#include <stdio.h>

#include "em/geom.h"
#include "support_em.h"
#include "sv_test.h"

typedef struct plin { int n; double x[3], v[3]; } plin; /* zero outside [x0, x(n−1)] */

static double plin_at(const plin *p, double x)
{
    if (x < p->x[0] || x > p->x[p->n - 1]) return 0;
    for (int k = 0; k + 1 < p->n; k++)
        if (x <= p->x[k + 1]) {
            double t = (x - p->x[k]) / (p->x[k + 1] - p->x[k]);
            return p->v[k] + t * (p->v[k + 1] - p->v[k]);
        }
    return 0;
}

static void sort(double *a, int n)
{
    for (int i = 1; i < n; i++)
        for (int j = i; j > 0 && a[j] < a[j - 1]; j--) {
            double t = a[j]; a[j] = a[j - 1]; a[j - 1] = t;
        }
}

/* c(u) = ∫ a(x)·b(x + u) dx: exact per piece between merged breakpoints
 * (the product of two linear functions is quadratic there) */
static double xcorr(const plin *a, const plin *b, double u)
{
    double k[6];
    int n = 0;
    for (int i = 0; i < a->n; i++) k[n++] = a->x[i];
    for (int i = 0; i < b->n; i++) k[n++] = b->x[i] - u;
    sort(k, n);
    double s = 0;
    for (int i = 0; i + 1 < n; i++) {
        double lo = k[i], hi = k[i + 1];
        if (hi <= lo) continue;
        /* open rule at 1/4, 1/2, 3/4 (exact for cubics): the profiles jump
           at their ends, so the piece's end points are never evaluated */
        double f[3];
        for (int q = 0; q < 3; q++) {
            double x = lo + 0.25 * (q + 1) * (hi - lo);
            f[q] = plin_at(a, x) * plin_at(b, x + u);
        }
        s += (hi - lo) * (2 * f[0] - f[1] + 2 * f[2]) / 3;
    }
    return s;
}

/* ∫ wy(v)/sqrt(u² + v² + z²) dv with wy the overlap of [y1,y2] and [y3−v, y4−v] */
static double across(double y1, double y2, double y3, double y4, double u, double z)
{
    double c2 = u * u + z * z, c = sqrt(c2);
    double k[4] = {y3 - y2, y3 - y1, y4 - y2, y4 - y1};
    sort(k, 4);
    double s = 0;
    for (int p = 0; p < 3; p++) {
        double va = k[p], vb = k[p + 1];
        if (vb <= va) continue;
        double wa = fmax(0, fmin(y2, y4 - va) - fmax(y1, y3 - va)), wb = fmax(0, fmin(y2, y4 - vb) - fmax(y1, y3 - vb));
        double beta = (wb - wa) / (vb - va), alpha = wa - beta * va;
        s += alpha * (c > 0 ? asinh(vb / c) - asinh(va / c) : 0) + beta * (sqrt(vb * vb + c2) - sqrt(va * va + c2));
    }
    return s;
}

static double integral(const plin *a, const plin *b, double y1, double y2, double y3, double y4, double z)
{
    double k[10];
    int n = 0;
    for (int i = 0; i < a->n; i++)
        for (int j = 0; j < b->n; j++) k[n++] = b->x[j] - a->x[i];
    if (z == 0) k[n++] = 0;
    sort(k, n);
    double s = 0;
    for (int p = 0; p + 1 < n; p++) {
        double lo = k[p], hi = k[p + 1];
        if (hi - lo <= 1e-15 * (fabs(lo) + fabs(hi))) continue;
        double h = 1.0 / 64, acc = 0;
        for (int q = -300; q <= 300; q++) {
            double t = q * h, sh = 0.5 * SV_EM_PI * sinh(t);
            double w = 0.5 * SV_EM_PI * cosh(t) / (cosh(sh) * cosh(sh));
            double x = sh < 0 ? lo + (hi - lo) / (1 + exp(-2 * sh)) : hi - (hi - lo) / (1 + exp(2 * sh));
            if (!(x > lo && x < hi) || w < 1e-300) continue;
            acc += w * xcorr(a, b, x) * across(y1, y2, y3, y4, x, z);
        }
        s += acc * h * (hi - lo) / 2;
    }
    return s;
}

static plin profile_of(const sv_em_profile_t *p)
{
    if (p->half == 0) return (plin){3, {p->e - p->d, p->e, p->e + p->d}, {0, 1, 0}};
    if (p->half > 0) return (plin){2, {p->e, p->e + p->d}, {1, 0}};
    return (plin){2, {p->e - p->d, p->e}, {0, 1}};
}

static double reference_L(const sv_em_model *m, const sv_em_profile_t *a, const sv_em_profile_t *b)
{
    double h = sv_em_model_project(m)->st.h;
    plin pa = profile_of(a), pb = profile_of(b);
    double i0 = integral(&pa, &pb, a->t1, a->t2, b->t1, b->t2, 0);
    double i1 = integral(&pa, &pb, a->t1, a->t2, b->t1, b->t2, 2 * h);
    return a->sign * b->sign * SV_EM_MU0 / (4 * SV_EM_PI) / ((a->t2 - a->t1) * (b->t2 - b->t1)) * (i0 - i1);
}

/* a 5 × 3 block with ports on all four sides, dx ≠ dy */
static const char *block =
    "{\"units\": \"mm\", \"substrate\": {\"thickness\": 0.8, \"eps_r\": 4.4}, \"metal\": {\"conductivity\": \"inf\"},"
    " \"grid\": {\"dx\": 0.3, \"dy\": 0.45, \"nx\": 40, \"ny\": 4},"
    " \"rectangles\": [{\"x\": [0, 1.5], \"y\": [0, 1.35]}, {\"x\": [1.5, 12], \"y\": [0.45, 0.9]}],"
    " \"ports\": [{\"name\": \"l\", \"side\": \"left\", \"x\": 0, \"y\": [0, 1.35]},"
    "            {\"name\": \"r\", \"side\": \"right\", \"x\": 12, \"y\": [0.45, 0.9]},"
    "            {\"name\": \"b\", \"side\": \"bottom\", \"y\": 0, \"x\": [0, 1.5]},"
    "            {\"name\": \"t\", \"side\": \"top\", \"y\": 1.35, \"x\": [0, 1.5]}]}";

static void test_galerkin_inductance(void **state)
{
    (void)state;
    sv_em_project *p = em_test_project(block);
    sv_em_model *m = em_test_model(p);
    int n = sv_em_model_unknowns(m), checked = 0;
    double worst = 0, worst_fast = 0;
    /* every pair of parallel unknowns whose cells lie within the block, plus
       a few far ones along the line (x > 10 cells away) */
    for (int a = 0; a < n; a++)
        for (int b = a; b < n; b++) {
            sv_em_profile_t pa, pb;
            sv_em_profile(m, a, &pa);
            sv_em_profile(m, b, &pb);
            if (pa.axis != pb.axis) {
                assert_true(sv_em_L_profiles(m, &pa, &pb, 0) == 0);
                continue;
            }
            int far = fabs(pa.e - pb.e) > 3e-3 && pa.axis == 0;
            if (!far && (pa.e > 1.6e-3 && pa.axis == 0)) continue; /* the line: sampled below */
            if (far && (b % 7)) continue;
            double ref = reference_L(m, &pa, &pb);
            double ex = sv_em_L_profiles(m, &pa, &pb, 1), fast = sv_em_L_profiles(m, &pa, &pb, 0);
            double scale = SV_EM_MU0 / (4 * SV_EM_PI) * pa.d; /* ~ the self term's size */
            worst = fmax(worst, fabs(ex - ref) / scale);
            worst_fast = fmax(worst_fast, fabs(fast - ref) / scale);
            if (fabs(ex - ref) > 1e-9 * scale)
                printf("pair %d %d (half %d %d): exact %.12e reference %.12e\n", a, b, pa.half, pb.half, ex, ref);
            checked++;
        }
    printf("Galerkin L: %d pairs, max |error| / (mu0/4pi * d): closed forms %.1e, with far forms %.1e\n", checked,
           worst, worst_fast);
    assert_true(checked > 100);
    assert_true(worst <= 1e-9);
    assert_true(worst_fast <= 1e-8);
    sv_em_model_destroy(m);
    sv_em_project_destroy(p);
}

/* A long line of rooftops carries a uniform current, which the old pulse
 * form represents exactly too: Σ_k L(0, k) over an in-line row must agree
 * between the triangle and the pulse (closed form of one cell against the
 * whole strip), whatever the quadrature. */
static void test_inline_sum(void **state)
{
    (void)state;
    sv_em_project *p = em_test_project(block);
    sv_em_model *m = em_test_model(p);
    double dx = 0.3e-3, dy = 0.45e-3, h = 0.8e-3;
    int K = 200; /* longer strips lose digits to the 16-term cancellation */
    double s = 0;
    for (int k = K; k >= 1; k--) s += 2 * sv_em_L_rooftops(m, 0, k, 0, 0);
    s += sv_em_L_rooftops(m, 0, 0, 0, 0);
    /* one pulse cell [0, dx] against the strip [−K·dx, (K + 1)·dx] */
    double lo = -K * dx, hi = (K + 1) * dx;
    double ref = SV_EM_MU0 / (4 * SV_EM_PI) / (dy * dy) *
                 (sv_em_rect_exact(0, dx, 0, dy, lo, hi, 0, dy, 0) - sv_em_rect_exact(0, dx, 0, dy, lo, hi, 0, dy, 2 * h));
    printf("in-line sum: rooftops %.12e, uniform strip %.12e (rel %.1e)\n", s, ref, fabs(s / ref - 1));
    sv_assert_close(s, ref, 1e-8, 0);
    sv_em_model_destroy(m);
    sv_em_project_destroy(p);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_galerkin_inductance),
        cmocka_unit_test(test_inline_sum),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
