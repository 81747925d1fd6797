/* POLLU: the chemical part of the RIVM air pollution model (Verwer 1994,
 * SIAM J. Sci. Comput. 15, 1243; Bari test set, Mazzia & Magherini, problem
 * "pollu"): 20 species, 25 reactions, t in [0, 60] minutes. The 25 rate
 * constants are the parameters (an ensemble perturbs them).
 *
 * Written from a reaction table: rate r_k = p_k · y_a (· y_b), and
 * dy/dt = S r with the stoichiometry of the Bari formulation. The Jacobian
 * J = S ∂r/∂y and its pattern are derived from the same table. */
#include <stdlib.h>
#include <string.h>

#include "builtin_internal.h"

enum { NS = 20, NR = 25 };

/* reactants (0-based species; −1: first order) */
static const int react[NR][2] = {
    {0, -1},  {1, 3},   {4, 1},   {6, -1},  {6, -1},  {6, 5},   {8, -1},  {8, 5},   {10, 1},
    {10, 0},  {12, -1}, {9, 1},   {13, -1}, {0, 5},   {2, -1},  {3, -1},  {3, -1},  {15, -1},
    {15, -1}, {16, 5},  {18, -1}, {18, -1}, {0, 3},   {18, 0},  {19, -1},
};
/* stoichiometry: per species, (coefficient, reaction 1-based) pairs, 0-terminated */
static const signed char stoich[NS][26] = {
    {-1, 1, -1, 10, -1, 14, -1, 23, -1, 24, 1, 2, 1, 3, 1, 9, 1, 11, 1, 12, 1, 22, 1, 25, 0},
    {-1, 2, -1, 3, -1, 9, -1, 12, 1, 1, 1, 21, 0},
    {-1, 15, 1, 1, 1, 17, 1, 19, 1, 22, 0},
    {-1, 2, -1, 16, -1, 17, -1, 23, 1, 15, 0},
    {-1, 3, 2, 4, 1, 6, 1, 7, 1, 13, 1, 20, 0},
    {-1, 6, -1, 8, -1, 14, -1, 20, 1, 3, 2, 18, 0},
    {-1, 4, -1, 5, -1, 6, 1, 13, 0},
    {1, 4, 1, 5, 1, 6, 1, 7, 0},
    {-1, 7, -1, 8, 0},
    {-1, 12, 1, 7, 1, 9, 0},
    {-1, 9, -1, 10, 1, 8, 1, 11, 0},
    {1, 9, 0},
    {-1, 11, 1, 10, 0},
    {-1, 13, 1, 12, 0},
    {1, 14, 0},
    {-1, 18, -1, 19, 1, 16, 0},
    {-1, 20, 0},
    {1, 20, 0},
    {-1, 21, -1, 22, -1, 24, 1, 23, 1, 25, 0},
    {-1, 25, 1, 24, 0},
};

typedef struct pollu {
    int rowptr[NS + 1], colind[NS * NS];
    int pos[NS * NS]; /* (i, j) → pattern entry or −1 */
    /* stoichiometry by reaction: species kspecies[q] with coefficient
     * kcoef[q] for q in kptr[k] .. kptr[k + 1] − 1 (∂f/∂p_k's non-zeros) */
    int kptr[NR + 1], kspecies[NS * NR];
    double kcoef[NS * NR];
} pollu;

static int pollu_fb(int W, const double *t, const double *y, const double *p, double *dy, void *u)
{
    (void)t, (void)u;
    for (int w = 0; w < W; w++) {
        double r[NR];
        for (int k = 0; k < NR; k++) {
            r[k] = p[k * W + w] * y[react[k][0] * W + w];
            if (react[k][1] >= 0) r[k] *= y[react[k][1] * W + w];
        }
        for (int i = 0; i < NS; i++) {
            double s = 0;
            for (const signed char *q = stoich[i]; q[0]; q += 2) s += q[0] * r[q[1] - 1];
            dy[i * W + w] = s;
        }
    }
    return 0;
}

static int pollu_jb(int W, const double *t, const double *y, const double *p, double *jv, double *dfdt, void *u)
{
    (void)t, (void)dfdt;
    const pollu *D = u;
    int nnz = D->rowptr[NS];
    for (int w = 0; w < W; w++) {
        for (int e = 0; e < nnz; e++) jv[e * W + w] = 0;
        for (int i = 0; i < NS; i++)
            for (const signed char *q = stoich[i]; q[0]; q += 2) {
                int k = q[1] - 1, a = react[k][0], b = react[k][1];
                double c = q[0] * p[k * W + w];
                /* ∂r/∂y_a = p·y_b (or p), ∂r/∂y_b = p·y_a */
                jv[D->pos[i * NS + a] * W + w] += b >= 0 ? c * y[b * W + w] : c;
                if (b >= 0) jv[D->pos[i * NS + b] * W + w] += c * y[a * W + w];
            }
    }
    return 0;
}
SV_ODE_SCALAR_WRAPPERS(pollu)

/* Sensitivities over W lanes (the scalar callbacks are W = 1), from the
 * same table: ∂f/∂p_k = S_·k·m_k with the monomial m_k = r_k/p_k, the
 * tangent S·dr with dr_k = vp_k·m_k + p_k·dm_k(v), and the Jacobian's
 * derivative along (v, vp). */
#define Y(i) y[(i) * W + w]
#define V(i) v[(i) * W + w]
static double pollu_mono(int k, const double *y, int W, int w)
{
    return react[k][1] >= 0 ? Y(react[k][0]) * Y(react[k][1]) : Y(react[k][0]);
}
static int pollu_dfdp_b(int W, const double *t, const double *y, const double *p, int k, double *out, void *u)
{
    (void)t, (void)p;
    const pollu *D = u;
    for (int i = 0; i < NS * W; i++) out[i] = 0;
    for (int w = 0; w < W; w++) {
        double m = pollu_mono(k, y, W, w);
        for (int q = D->kptr[k]; q < D->kptr[k + 1]; q++) out[D->kspecies[q] * W + w] += D->kcoef[q] * m;
    }
    return 0;
}
SV_ODE_LANES_INLINE int pollu_tangent_lanes(const int W, const double *t, const double *restrict y,
                                             const double *restrict p, const double *restrict v,
                                             const double *restrict vp, double *restrict out, void *u)
{
    (void)t, (void)u;
    double dr[NR * ODE_WMAX];
    for (int k = 0; k < NR; k++) {
        int a = react[k][0], b = react[k][1];
        for (int w = 0; w < W; w++) {
            double dm = b >= 0 ? V(a) * Y(b) + Y(a) * V(b) : V(a);
            dr[k * W + w] = p[k * W + w] * dm + (vp ? vp[k * W + w] * pollu_mono(k, y, W, w) : 0);
        }
    }
    for (int i = 0; i < NS; i++) {
        double acc[ODE_WMAX] = {0};
        for (const signed char *q = stoich[i]; q[0]; q += 2)
            for (int w = 0; w < W; w++) acc[w] += q[0] * dr[(q[1] - 1) * W + w];
        for (int w = 0; w < W; w++) out[i * W + w] = acc[w];
    }
    return 0;
}
SV_ODE_LANES_INLINE int pollu_jac_dir_lanes(const int W, const double *t, const double *restrict y,
                                             const double *restrict p, const double *restrict v,
                                             const double *restrict vp, double *restrict dv, double *ddfdt,
                                             void *u)
{
    (void)t, (void)ddfdt;
    const pollu *D = u;
    for (int e = 0; e < D->rowptr[NS] * W; e++) dv[e] = 0;
    /* lanes innermost: one pass over the table, vectorised across lanes */
    for (int i = 0; i < NS; i++)
        for (const signed char *q = stoich[i]; q[0]; q += 2) {
            int k = q[1] - 1, a = react[k][0], b = react[k][1];
            double *da = dv + (size_t)D->pos[i * NS + a] * W;
            const double *pk = p + (size_t)k * W, *vk = vp ? vp + (size_t)k * W : NULL;
            /* d(c·y_b) = dc·y_b + c·v_b, d(c) = dc, d(c·y_a) = dc·y_a + c·v_a; c = S_ik p_k */
            if (b < 0) {
                if (vk)
                    for (int w = 0; w < W; w++) da[w] += q[0] * vk[w];
                continue;
            }
            double *db = dv + (size_t)D->pos[i * NS + b] * W;
            for (int w = 0; w < W; w++) {
                double c = q[0] * pk[w], dc = vk ? q[0] * vk[w] : 0;
                da[w] += dc * Y(b) + c * V(b);
                db[w] += dc * Y(a) + c * V(a);
            }
        }
    return 0;
}
SV_ODE_SENS_BATCH_BY_LANES(pollu)
#undef Y
#undef V
SV_ODE_SENS_WRAPPERS(pollu)

sv_status ode_builtin_pollu(sv_ode_builtin *b, const char *name, sv_ode_problem_desc *d, double arg)
{
    (void)arg;
    if (strcmp(name, "pollu")) return SV_ERR_UNSUPPORTED;
    pollu *D = calloc(1, sizeof *D);
    if (!D) return sv_error(SV_ERR_NOMEM, "pollu: out of memory");
    ode_builtin_own(b, D, free);
    unsigned char m[NS * NS] = {0};
    for (int i = 0; i < NS; i++)
        for (const signed char *q = stoich[i]; q[0]; q += 2) {
            int k = q[1] - 1;
            m[i * NS + react[k][0]] = 1;
            if (react[k][1] >= 0) m[i * NS + react[k][1]] = 1;
        }
    int e = 0;
    for (int i = 0; i < NS; i++) {
        D->rowptr[i] = e;
        for (int j = 0; j < NS; j++) {
            D->pos[i * NS + j] = m[i * NS + j] ? e : -1;
            if (m[i * NS + j]) D->colind[e++] = j;
        }
    }
    D->rowptr[NS] = e;
    int q = 0;
    for (int k = 0; k < NR; k++) {
        D->kptr[k] = q;
        for (int i = 0; i < NS; i++)
            for (const signed char *c = stoich[i]; c[0]; c += 2)
                if (c[1] - 1 == k) D->kspecies[q] = i, D->kcoef[q++] = c[0];
    }
    D->kptr[NR] = q;
    /* Bari test set rate constants and initial state */
    static const double k[NR] = {.35,   26.6,  1.23e4, 8.6e-4, 8.2e-4,  1.5e4, 1.3e-4, 2.4e4, 1.65e4,
                                 9e3,   .022,  1.2e4,  1.88,   1.63e4,  4.8e6, 3.5e-4, .0175, 1e8,
                                 4.44e11, 1240, 2.1,   5.78,   .0474,   1780,  3.12};
    double y0[NS] = {0};
    y0[1] = 0.2, y0[3] = 0.04, y0[6] = 0.1, y0[7] = 0.3, y0[8] = 0.01, y0[16] = 0.007;
    SV_ODE_FILL(d, pollu, NS, NR);
    d->rowptr = D->rowptr;
    d->colind = D->colind;
    d->user = D;
    d->sens_source = SV_ODE_SENS_ANALYTIC;
    SV_ODE_FILL_SENS(d, pollu);
    return ode_builtin_set(b, d, 0, 60, y0, k, 1e-6, 1e-6);
}
