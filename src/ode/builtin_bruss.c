/* 2D Brusselator on an N×N periodic grid (SciMLBenchmarks StiffODE/Bruss,
 * definition in docs/ode.md): n = 2N², state
 * p = i + N·j (+ N² for v), 0-based; forcing switched on at t = 1.1 (a tstop).
 * Parameters: (A, B, alpha). Sparse pattern: per row the 5-point Laplacian
 * and the u–v cross term, 12 N² entries. */
#include <complex.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "builtin_internal.h"

typedef struct bruss {
    int N;
    double dx;
    unsigned char *patch; /* forcing support, N² */
    int *rowptr, *colind;
    int *pos;             /* per row: entry of self, left, right, down, up, cross */
} bruss;

static int wrap(int i, int N) { return i < 0 ? i + N : i >= N ? i - N : i; }

/* Cell (i, j) and its periodic 5-point neighbours: c, l, r, dn, up. */
#define BRUSS_CELL(N, i, j)                                                                                    \
    int c = (i) + (N) * (j), l = wrap((i) - 1, N) + (N) * (j), r = wrap((i) + 1, N) + (N) * (j),               \
        dn = (i) + (N) * wrap((j) - 1, N), up = (i) + (N) * wrap((j) + 1, N)
/* The Laplacian's stencil sum of x at cell c of BRUSS_CELL, component off
 * (u: 0, v: N²), over W lanes. */
#define BRUSS_LAP(x, off, W, w)                                                                                \
    (x[((off) + l) * W + w] + x[((off) + r) * W + w] + x[((off) + up) * W + w] + x[((off) + dn) * W + w] -     \
     4.0 * x[((off) + c) * W + w])

#define BRUSS_BODY(T, tval, y, p, dy, W, w)                                                                  \
    do {                                                                                                       \
        int N = B->N, M = N * N;                                                                              \
        double A = p[0 * W + w], Bc = p[1 * W + w], a = p[2 * W + w] / (B->dx * B->dx);                        \
        int on = creal(tval) >= 1.1;                                                                           \
        for (int j = 0; j < N; j++)                                                                            \
            for (int i = 0; i < N; i++) {                                                                      \
                BRUSS_CELL(N, i, j);                                                                           \
                T u = y[c * W + w], v = y[(M + c) * W + w];                                                     \
                T lu = BRUSS_LAP(y, 0, W, w), lv = BRUSS_LAP(y, M, W, w);                                      \
                T uuv = u * u * v;                                                                             \
                dy[c * W + w] = a * lu + Bc + uuv - (A + 1) * u + (on && B->patch[c] ? 5.0 : 0.0);             \
                dy[(M + c) * W + w] = a * lv + A * u - uuv;                                                    \
            }                                                                                                  \
    } while (0)

static int bruss_fb(int W, const double *t, const double *y, const double *p, double *dy, void *user)
{
    const bruss *B = user;
    for (int w = 0; w < W; w++) BRUSS_BODY(double, t[w], y, p, dy, W, w);
    return 0;
}
static int bruss_fc(double complex t, const double complex *y, const double *p, double complex *dy, void *user)
{
    const bruss *B = user;
    BRUSS_BODY(double complex, t, y, p, dy, 1, 0);
    return 0;
}
static int bruss_jb(int W, const double *t, const double *y, const double *p, double *jv, double *dfdt, void *u)
{
    (void)t, (void)dfdt;
    const bruss *B = u;
    int N = B->N, M = N * N;
    for (int w = 0; w < W; w++) {
        double A = p[0 * W + w], a = p[2 * W + w] / (B->dx * B->dx);
        for (int c = 0; c < M; c++) {
            double uu = y[c * W + w], v = y[(M + c) * W + w];
            const int *pu = B->pos + 6 * c, *pv = B->pos + 6 * (M + c);
            for (int q = 1; q < 5; q++) {
                jv[pu[q] * W + w] = a;
                jv[pv[q] * W + w] = a;
            }
            jv[pu[0] * W + w] = -4 * a + 2 * uu * v - (A + 1);
            jv[pu[5] * W + w] = uu * uu;
            jv[pv[0] * W + w] = -4 * a - uu * uu;
            jv[pv[5] * W + w] = A - 2 * uu * v;
        }
    }
    return 0;
}
SV_ODE_SCALAR_WRAPPERS(bruss)

/* Sensitivities, p = (A, B, α): ∂f/∂p_k, the tangent (∂f/∂y)·v +
 * (∂f/∂p)·vp over W lanes and at complex y (one type-generic body), and
 * the Jacobian's derivative along (v, vp) in pattern order. The forcing
 * depends on t alone and drops out of all three. */
static int bruss_dfdp_b(int W, const double *t, const double *y, const double *p, int k, double *dy, void *user)
{
    (void)t, (void)p;
    const bruss *B = user;
    int N = B->N, M = N * N;
    double idx2 = 1 / (B->dx * B->dx);
    for (int w = 0; w < W; w++)
        for (int j = 0; j < N; j++)
            for (int i = 0; i < N; i++) {
                BRUSS_CELL(N, i, j);
                double u = y[c * W + w], lu = BRUSS_LAP(y, 0, W, w), lv = BRUSS_LAP(y, M, W, w);
                dy[c * W + w] = k == 0 ? -u : k == 1 ? 1 : lu * idx2;
                dy[(M + c) * W + w] = k == 0 ? u : k == 1 ? 0 : lv * idx2;
            }
    return 0;
}
#define BRUSS_TANGENT(T, y, p, v, vp, out, W, w)                                                              \
    do {                                                                                                       \
        int N = B->N, M = N * N;                                                                              \
        double A = p[0 * W + w], a = p[2 * W + w] / (B->dx * B->dx);                                           \
        double dA = vp ? vp[0 * W + w] : 0, dB = vp ? vp[1 * W + w] : 0;                                       \
        double da = vp ? vp[2 * W + w] / (B->dx * B->dx) : 0;                                                  \
        for (int j = 0; j < N; j++)                                                                            \
            for (int i = 0; i < N; i++) {                                                                      \
                BRUSS_CELL(N, i, j);                                                                           \
                T u = y[c * W + w], vv = y[(M + c) * W + w];                                                    \
                double du = v[c * W + w], dv = v[(M + c) * W + w];                                              \
                T lu = BRUSS_LAP(y, 0, W, w), lv = BRUSS_LAP(y, M, W, w);                                      \
                double ldu = BRUSS_LAP(v, 0, W, w), ldv = BRUSS_LAP(v, M, W, w);                               \
                T duuv = 2.0 * u * vv * du + u * u * dv;                                                       \
                out[c * W + w] = a * ldu + duuv - (A + 1) * du + da * lu + dB - dA * u;                        \
                out[(M + c) * W + w] = a * ldv + A * du - duuv + da * lv + dA * u;                             \
            }                                                                                                  \
    } while (0)
static int bruss_tangent_b(int W, const double *t, const double *y, const double *p, const double *v,
                           const double *vp, double *out, void *user)
{
    (void)t;
    const bruss *B = user;
    for (int w = 0; w < W; w++) BRUSS_TANGENT(double, y, p, v, vp, out, W, w);
    return 0;
}
static int bruss_tangent_c(double complex t, const double complex *y, const double *p, const double *v,
                           const double *vp, double complex *out, void *user)
{
    (void)t;
    const bruss *B = user;
    BRUSS_TANGENT(double complex, y, p, v, vp, out, 1, 0);
    return 0;
}
static int bruss_jac_dir_b(int W, const double *t, const double *y, const double *p, const double *v,
                           const double *vp, double *jv, double *ddfdt, void *user)
{
    (void)t, (void)p, (void)ddfdt;
    const bruss *B = user;
    int N = B->N, M = N * N;
    for (int w = 0; w < W; w++) {
        double dA = vp ? vp[0 * W + w] : 0, da = vp ? vp[2 * W + w] / (B->dx * B->dx) : 0;
        for (int c = 0; c < M; c++) {
            double uu = y[c * W + w], vv = y[(M + c) * W + w], du = v[c * W + w], dv = v[(M + c) * W + w];
            double duv = du * vv + uu * dv;
            const int *pu = B->pos + 6 * c, *pv = B->pos + 6 * (M + c);
            for (int q = 1; q < 5; q++) {
                jv[pu[q] * W + w] = da;
                jv[pv[q] * W + w] = da;
            }
            jv[pu[0] * W + w] = -4 * da + 2 * duv - dA;
            jv[pu[5] * W + w] = 2 * uu * du;
            jv[pv[0] * W + w] = -4 * da - 2 * uu * du;
            jv[pv[5] * W + w] = dA - 2 * duv;
        }
    }
    return 0;
}
SV_ODE_SENS_WRAPPERS(bruss)

static void bruss_free(void *data)
{
    bruss *B = data;
    ode_builtin_free_all((void *[]){B->patch, B->rowptr, B->colind, B->pos, B}, 5);
}

/* Per row the 6 columns with their roles, sorted by column: pos[6r + role]
 * is the entry of role (self, left, right, down, up, cross) in row r. */
static void bruss_pattern(bruss *B)
{
    int N = B->N, M = N * N, n = 2 * M;
    for (int r = 0; r < n; r++) {
        int half = r >= M, c = r - half * M, i = c % N, j = c / N, off = half * M;
        int cols[6] = {r, wrap(i - 1, N) + N * j + off, wrap(i + 1, N) + N * j + off, i + N * wrap(j - 1, N) + off,
                       i + N * wrap(j + 1, N) + off, half ? c : M + c};
        int idx[6] = {0, 1, 2, 3, 4, 5};
        for (int a = 1; a < 6; a++)
            for (int q = a; q > 0 && cols[idx[q]] < cols[idx[q - 1]]; q--) {
                int s = idx[q];
                idx[q] = idx[q - 1];
                idx[q - 1] = s;
            }
        B->rowptr[r] = 6 * r;
        for (int q = 0; q < 6; q++) {
            B->colind[6 * r + q] = cols[idx[q]];
            B->pos[6 * r + idx[q]] = 6 * r + q;
        }
    }
    B->rowptr[n] = 6 * n;
}

/* The forcing patch and the initial state. */
static void bruss_initial(bruss *B, double *y0)
{
    int N = B->N, M = N * N;
    for (int j = 0; j < N; j++)
        for (int i = 0; i < N; i++) {
            double x = i * B->dx, yy = j * B->dx;
            int c = i + N * j;
            B->patch[c] = (x - 0.3) * (x - 0.3) + (yy - 0.6) * (yy - 0.6) <= 0.1 * 0.1;
            y0[c] = 22 * pow(yy * (1 - yy), 1.5);
            y0[M + c] = 27 * pow(x * (1 - x), 1.5);
        }
}

sv_status ode_builtin_bruss(sv_ode_builtin *b, const char *name, sv_ode_problem_desc *d, double arg)
{
    if (strcmp(name, "bruss2d")) return SV_ERR_UNSUPPORTED;
    int N = arg > 0 ? (int)arg : 8;
    if (N < 3 || N > 512 || (double)N != (arg > 0 ? arg : 8))
        return sv_error(SV_ERR_ARG, "bruss2d: grid N = %g: expected an integer in 3..512", arg);
    int M = N * N, n = 2 * M;
    bruss *B = calloc(1, sizeof *B);
    if (!B) return sv_error(SV_ERR_NOMEM, "bruss2d: out of memory");
    ode_builtin_own(b, B, bruss_free);
    B->N = N;
    B->dx = 1.0 / (N - 1);
    B->patch = calloc((size_t)M, 1);
    B->rowptr = malloc(sizeof(int) * (size_t)(n + 1));
    B->colind = malloc(sizeof(int) * (size_t)n * 6);
    B->pos = malloc(sizeof(int) * (size_t)n * 6);
    b->tstops = malloc(sizeof(double));
    double *y0 = malloc(sizeof(double) * (size_t)n);
    if (!B->patch || !B->rowptr || !B->colind || !B->pos || !b->tstops || !y0) {
        free(y0);
        return sv_error(SV_ERR_NOMEM, "bruss2d: out of memory");
    }
    bruss_initial(B, y0);
    bruss_pattern(B);
    b->tstops[0] = 1.1;
    b->ntstops = 1;
    static const double p[3] = {3.4, 1.0, 10.0};
    SV_ODE_FILL(d, bruss, n, 3);
    d->f_complex = bruss_fc;
    d->sens_source = SV_ODE_SENS_TANGENT;
    SV_ODE_FILL_SENS(d, bruss);
    d->tangent_complex = bruss_tangent_c;
    d->rowptr = B->rowptr;
    d->colind = B->colind;
    d->user = B;
    sv_status st = ode_builtin_set(b, d, 0, 11.5, y0, p, 1e-6, 1e-6);
    free(y0);
    return st;
}
