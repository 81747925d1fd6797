/* Quasi-static Green's functions of a grounded slab and the closed-form
 * integrals of 1/R over pairs of parallel rectangles (the formulas and their
 * numerical pitfalls: docs/em.md, "Fast assembly"; the rectangle formula is
 * the classical one used in PEEC, e.g. Ruehli's partial-element papers).
 * The point approximation for far pairs is in solvent/em_tables.h, shared
 * with accelerators. */
#include <math.h>

#include "em_internal.h"

/* y·ln(y + R) without the cancellation of y + R for y < 0, |y| ≈ R:
 * there y + R = (x² + z²)/(R − y). */
static double ylog(double y, double x, double z, double R)
{
    if (y == 0) return 0;
    if (y > 0) return y * log(y + R);
    double q = x * x + z * z;
    if (q == 0) return 0; /* its coefficient (x² − z²)/2 vanishes too */
    return y * (log(q) - log(R - y));
}

double sv_em_F(double x, double y, double z)
{
    double x2 = x * x, y2 = y * y, z2 = z * z;
    double R = sqrt(x2 + y2 + z2);
    if (R == 0) return 0;
    double f = 0.5 * (x2 - z2) * ylog(y, x, z, R) + 0.5 * (y2 - z2) * ylog(x, y, z, R) - (x2 + y2 - 2 * z2) * R / 6;
    if (z != 0 && x != 0 && y != 0) f -= x * y * z * atan(x * y / (z * R));
    return f;
}

double sv_em_rect_exact(double x1, double x2, double y1, double y2, double x3, double x4, double y3, double y4,
                        double z)
{
    const double xa[2] = {x1, x2}, xb[2] = {x3, x4}, ya[2] = {y1, y2}, yb[2] = {y3, y4};
    double s = 0;
    for (int i = 0; i < 2; i++)
        for (int j = 0; j < 2; j++)
            for (int k = 0; k < 2; k++)
                for (int l = 0; l < 2; l++) {
                    /* (−1)^(i+j+k+l) with indices 1,2 / 3,4 as in the reference: signs of i+j+k+l here */
                    double t = sv_em_F(xa[i] - xb[j], ya[k] - yb[l], z);
                    s += ((i + j + k + l) & 1) ? -t : t;
                }
    return s;
}

double sv_em_rect(double x1, double x2, double y1, double y2, double x3, double x4, double y3, double y4, double z,
                  double far_ratio)
{
    if (sv_em_rect_far(x1, x2, y1, y2, x3, x4, y3, y4, z, far_ratio))
        return sv_em_rect_point(x1, x2, y1, y2, x3, x4, y3, y4, z);
    return sv_em_rect_exact(x1, x2, y1, y2, x3, x4, y3, y4, z);
}

int sv_em_image_terms(double eps_r, double accuracy)
{
    double K = (eps_r - 1) / (eps_r + 1);
    if (K <= 0) return 1;
    int n = (int)ceil(log(accuracy) / log(K));
    if (n < 1) n = 1;
    if (n > 100000) n = 100000;
    return n;
}

double sv_em_green_A(double rho, double h)
{
    return SV_EM_MU0 / (4 * SV_EM_PI) * (1 / rho - 1 / sqrt(rho * rho + 4 * h * h));
}

double sv_em_green_phi(double rho, double h, double eps_r, int terms)
{
    double K = (eps_r - 1) / (eps_r + 1), s = 0, w = 1;
    for (int n = 0; n < terms; n++) {
        double z0 = 2 * n * h, z1 = 2 * (n + 1) * h;
        s += w * (1 / sqrt(rho * rho + z0 * z0) - 1 / sqrt(rho * rho + z1 * z1));
        w *= -K;
    }
    return (1 - K) * s / (4 * SV_EM_PI * SV_EM_EPS0);
}

/* With the fourth-order terms the point approximation errs by at most about
 * 1e-2·(a/R)⁶ (measured against the closed form for squares, rectangles and
 * image separations, docs/em.md), so R/a ≥ (1e-2/accuracy)^(1/6) meets the
 * accuracy: 10 sides for 1e-8. The closed form's own cancellation grows like
 * (R/a)⁴·1e-16, about 1e-12 at 10 sides. */
double sv_em_default_far_ratio(double accuracy)
{
    double r = pow(1e-2 / accuracy, 1.0 / 6);
    if (r < 3) r = 3;
    if (r > 60) r = 60;
    return r;
}
