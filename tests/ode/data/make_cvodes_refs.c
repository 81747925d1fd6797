/* Reference sensitivities from SUNDIALS CVODES 6.4.1 (BDF, staggered
 * corrector, sensitivities in the error test) for tests/ode/test_sens.c:
 * Robertson with respect to its three rate constants and HIRES with respect
 * to two initial values. Writes tests/ode/cvodes_refs.h. (EB-50 has no
 * CVODES reference: at rtol 1e-10 CVODES takes two million steps before
 * τ = 0.53, even with its stability limit detection; its test uses central
 * differences.) The numbers are committed; rerun only to
 * regenerate them (CVODES is a benchmark-only dependency: scripts/setup
 * --bench installs libsundials-dev). From the repository root:
 *
 *   cc -std=c17 -O2 tests/ode/data/make_cvodes_refs.c -lsundials_cvodes -lsundials_nvecserial \
 *      -lsundials_sunmatrixdense -lsundials_sunlinsoldense -lm -o /tmp/make_cvodes_refs \
 *      && /tmp/make_cvodes_refs
 *
 * Both problems are written here from their definitions (docs/ode.md), with
 * their Jacobians and sensitivity right-hand sides by hand: nothing of
 * Solvent is used. Each case is solved at rtol 1e-12 and 1e-11; their
 * agreement goes into the header. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cvodes/cvodes.h>
#include <nvector/nvector_serial.h>
#include <sundials/sundials_context.h>
#include <sunlinsol/sunlinsol_dense.h>
#include <sunmatrix/sunmatrix_dense.h>

#define MAXN 8
#define MAXS 3

typedef struct problem {
    const char *name;
    int n, ns;
    double t0, p[3];
    double y0[MAXN], s0[MAXS][MAXN];
    CVRhsFn f;
    CVLsJacFn jac;
    CVSensRhs1Fn fs;
    int plist[MAXS]; /* parameter of each direction, or -1 for an initial value */
} problem;

/* ---- Robertson: p = (k1, k2, k3) ---- */
static int rober_f(double t, N_Vector yv, N_Vector dv, void *u)
{
    (void)t;
    const double *p = ((problem *)u)->p, *y = N_VGetArrayPointer(yv);
    double *d = N_VGetArrayPointer(dv);
    d[0] = -p[0] * y[0] + p[1] * y[1] * y[2];
    d[1] = p[0] * y[0] - p[1] * y[1] * y[2] - p[2] * y[1] * y[1];
    d[2] = p[2] * y[1] * y[1];
    return 0;
}
static int rober_jac(double t, N_Vector yv, N_Vector fy, SUNMatrix J, void *u, N_Vector a, N_Vector b, N_Vector c)
{
    (void)t, (void)fy, (void)a, (void)b, (void)c;
    const double *p = ((problem *)u)->p, *y = N_VGetArrayPointer(yv);
    SM_ELEMENT_D(J, 0, 0) = -p[0], SM_ELEMENT_D(J, 0, 1) = p[1] * y[2], SM_ELEMENT_D(J, 0, 2) = p[1] * y[1];
    SM_ELEMENT_D(J, 1, 0) = p[0], SM_ELEMENT_D(J, 1, 1) = -p[1] * y[2] - 2 * p[2] * y[1],
    SM_ELEMENT_D(J, 1, 2) = -p[1] * y[1];
    SM_ELEMENT_D(J, 2, 0) = 0, SM_ELEMENT_D(J, 2, 1) = 2 * p[2] * y[1], SM_ELEMENT_D(J, 2, 2) = 0;
    return 0;
}
static int rober_fs(int ns, double t, N_Vector yv, N_Vector ydot, int is, N_Vector sv, N_Vector sdv, void *u,
                    N_Vector a, N_Vector b)
{
    (void)ns, (void)t, (void)ydot, (void)a, (void)b;
    const double *p = ((problem *)u)->p, *y = N_VGetArrayPointer(yv), *s = N_VGetArrayPointer(sv);
    double *d = N_VGetArrayPointer(sdv);
    double a0 = -p[0] * s[0] + p[1] * (s[1] * y[2] + y[1] * s[2]), c0 = 2 * p[2] * y[1] * s[1];
    if (is == 0) a0 -= y[0];
    if (is == 1) a0 += y[1] * y[2];
    if (is == 2) c0 += y[1] * y[1];
    d[0] = a0, d[1] = -a0 - c0, d[2] = c0;
    return 0;
}

/* ---- HIRES (no parameters) ---- */
static int hires_f(double t, N_Vector yv, N_Vector dv, void *u)
{
    (void)t, (void)u;
    const double *y = N_VGetArrayPointer(yv);
    double *d = N_VGetArrayPointer(dv);
    d[0] = -1.71 * y[0] + 0.43 * y[1] + 8.32 * y[2] + 0.0007;
    d[1] = 1.71 * y[0] - 8.75 * y[1];
    d[2] = -10.03 * y[2] + 0.43 * y[3] + 0.035 * y[4];
    d[3] = 8.32 * y[1] + 1.71 * y[2] - 1.12 * y[3];
    d[4] = -1.745 * y[4] + 0.43 * y[5] + 0.43 * y[6];
    double r = 280.0 * y[5] * y[7];
    d[5] = -r + 0.69 * y[3] + 1.71 * y[4] - 0.43 * y[5] + 0.69 * y[6];
    d[6] = r - 1.81 * y[6];
    d[7] = -r + 1.81 * y[6];
    return 0;
}
static void hires_jv(const double *y, const double *v, double *o)
{
    o[0] = -1.71 * v[0] + 0.43 * v[1] + 8.32 * v[2];
    o[1] = 1.71 * v[0] - 8.75 * v[1];
    o[2] = -10.03 * v[2] + 0.43 * v[3] + 0.035 * v[4];
    o[3] = 8.32 * v[1] + 1.71 * v[2] - 1.12 * v[3];
    o[4] = -1.745 * v[4] + 0.43 * v[5] + 0.43 * v[6];
    double dr = 280.0 * (v[5] * y[7] + y[5] * v[7]);
    o[5] = -dr + 0.69 * v[3] + 1.71 * v[4] - 0.43 * v[5] + 0.69 * v[6];
    o[6] = dr - 1.81 * v[6];
    o[7] = -dr + 1.81 * v[6];
}
static int hires_jac(double t, N_Vector yv, N_Vector fy, SUNMatrix J, void *u, N_Vector a, N_Vector b, N_Vector c)
{
    (void)t, (void)fy, (void)u, (void)a, (void)b, (void)c;
    const double *y = N_VGetArrayPointer(yv);
    for (int j = 0; j < 8; j++) {
        double e[8] = {0}, col[8];
        e[j] = 1;
        hires_jv(y, e, col);
        for (int i = 0; i < 8; i++) SM_ELEMENT_D(J, i, j) = col[i];
    }
    return 0;
}
static int hires_fs(int ns, double t, N_Vector yv, N_Vector ydot, int is, N_Vector sv, N_Vector sdv, void *u,
                    N_Vector a, N_Vector b)
{
    (void)ns, (void)t, (void)ydot, (void)is, (void)u, (void)a, (void)b;
    hires_jv(N_VGetArrayPointer(yv), N_VGetArrayPointer(sv), N_VGetArrayPointer(sdv));
    return 0;
}

/* y(ts[s]) and S(ts[s]) for the problem at tolerance rtol. */
static void solve(problem *P, int nt, const double *ts, double rtol, double atol, double *Y, double *SS)
{
    SUNContext sc;
    SUNContext_Create(NULL, &sc);
    N_Vector y = N_VNew_Serial(P->n, sc);
    N_Vector *yS = N_VCloneVectorArray(P->ns, y);
    memcpy(N_VGetArrayPointer(y), P->y0, sizeof(double) * P->n);
    for (int j = 0; j < P->ns; j++) memcpy(N_VGetArrayPointer(yS[j]), P->s0[j], sizeof(double) * P->n);
    void *mem = CVodeCreate(CV_BDF, sc);
    CVodeInit(mem, P->f, P->t0, y);
    CVodeSetUserData(mem, P);
    CVodeSStolerances(mem, rtol, atol);
    CVodeSetMaxNumSteps(mem, 2000000);
    SUNMatrix A = SUNDenseMatrix(P->n, P->n, sc);
    SUNLinearSolver LS = SUNLinSol_Dense(y, A, sc);
    CVodeSetLinearSolver(mem, LS, A);
    CVodeSetJacFn(mem, P->jac);
    CVodeSensInit1(mem, P->ns, CV_STAGGERED, P->fs, yS);
    double pbar[MAXS];
    for (int j = 0; j < P->ns; j++) pbar[j] = P->plist[j] >= 0 && P->p[P->plist[j]] != 0 ? fabs(P->p[P->plist[j]]) : 1;
    int plist[MAXS];
    for (int j = 0; j < P->ns; j++) plist[j] = P->plist[j] >= 0 ? P->plist[j] : 0;
    CVodeSetSensParams(mem, P->p, pbar, plist);
    CVodeSensEEtolerances(mem);
    CVodeSetSensErrCon(mem, SUNTRUE);
    for (int s = 0; s < nt; s++) {
        double tret;
        int flag = CVode(mem, ts[s], y, &tret, CV_NORMAL);
        if (flag < 0) {
            fprintf(stderr, "%s: CVODE flag %d at t = %g\n", P->name, flag, tret);
            exit(1);
        }
        CVodeGetSens(mem, &tret, yS);
        memcpy(Y + (size_t)s * P->n, N_VGetArrayPointer(y), sizeof(double) * P->n);
        for (int i = 0; i < P->n; i++)
            for (int j = 0; j < P->ns; j++) SS[((size_t)s * P->n + i) * P->ns + j] = N_VGetArrayPointer(yS[j])[i];
    }
    CVodeFree(&mem);
    SUNLinSolFree(LS);
    SUNMatDestroy(A);
    N_VDestroyVectorArray(yS, P->ns);
    N_VDestroy(y);
    SUNContext_Free(&sc);
}

/* The largest disagreement between two runs, relative with the floor the
 * tests use: 1e-3 of |y_i| / |θ_j|. */
static double agree(const problem *P, int nt, const double *Y, const double *A, const double *B)
{
    double m = 0;
    for (int s = 0; s < nt; s++)
        for (int i = 0; i < P->n; i++)
            for (int j = 0; j < P->ns; j++) {
                double th = P->plist[j] >= 0 ? fabs(P->p[P->plist[j]]) : 1;
                size_t q = ((size_t)s * P->n + i) * P->ns + j;
                double fl = 1e-3 * fabs(Y[(size_t)s * P->n + i]) / th;
                m = fmax(m, fabs(A[q] - B[q]) / (fabs(B[q]) + fl + 1e-300));
            }
    return m;
}

static void emit(FILE *o, const char *nm, const problem *P, int nt, const double *ts, double rtol, double atol)
{
    static double Y[8 * MAXN], S12[8 * MAXN * MAXS], S11[8 * MAXN * MAXS];
    solve((problem *)P, nt, ts, rtol, atol, Y, S12);
    solve((problem *)P, nt, ts, rtol * 10, atol * 10, Y, S11);
    fprintf(o, "/* %s: CVODES at rtol %g (atol %g); against ten times both: %.1e */\n", P->name, rtol, atol,
            agree(P, nt, Y, S11, S12));
    fprintf(o, "static const double %s_T[%d] = {", nm, nt);
    for (int s = 0; s < nt; s++) fprintf(o, "%s%.17g", s ? ", " : "", ts[s]);
    fprintf(o, "};\nstatic const double %s_Y[%d][%d] = {\n", nm, nt, P->n);
    for (int s = 0; s < nt; s++) {
        fprintf(o, "    {");
        for (int i = 0; i < P->n; i++) fprintf(o, "%s%.16e", i ? ", " : "", Y[(size_t)s * P->n + i]);
        fprintf(o, "},\n");
    }
    fprintf(o, "};\n/* S[s][i][j] = dy_i/dtheta_j at T[s] */\nstatic const double %s_S[%d][%d][%d] = {\n", nm, nt,
            P->n, P->ns);
    for (int s = 0; s < nt; s++) {
        fprintf(o, "    {");
        for (int i = 0; i < P->n; i++) {
            fprintf(o, "%s{", i ? ", " : "");
            for (int j = 0; j < P->ns; j++)
                fprintf(o, "%s%.16e", j ? ", " : "", S12[((size_t)s * P->n + i) * P->ns + j]);
            fprintf(o, "}");
        }
        fprintf(o, "},\n");
    }
    fprintf(o, "};\n");
}

int main(void)
{
    FILE *o = fopen("tests/ode/cvodes_refs.h", "w");
    if (!o) {
        perror("tests/ode/cvodes_refs.h (run from the repository root)");
        return 1;
    }
    fprintf(o, "/* Generated by tests/ode/data/make_cvodes_refs.c (SUNDIALS CVODES %d.%d.%d): do not edit. */\n",
            SUNDIALS_VERSION_MAJOR, SUNDIALS_VERSION_MINOR, SUNDIALS_VERSION_PATCH);
    fprintf(o, "#ifndef SV_TEST_CVODES_REFS_H\n#define SV_TEST_CVODES_REFS_H\n");
    problem R = {.name = "Robertson, d/d(k1, k2, k3)", .n = 3, .ns = 3, .p = {0.04, 1e4, 3e7}, .y0 = {1, 0, 0},
                 .f = rober_f, .jac = rober_jac, .fs = rober_fs, .plist = {0, 1, 2}};
    const double tr[5] = {1e-2, 1, 1e2, 1e4, 1e6};
    emit(o, "CV_ROBER", &R, 5, tr, 1e-12, 1e-16);
    problem H = {.name = "HIRES, d/d(y1(0), y8(0))", .n = 8, .ns = 2, .y0 = {1, 0, 0, 0, 0, 0, 0, 0.0057},
                 .f = hires_f, .jac = hires_jac, .fs = hires_fs, .plist = {-1, -1}};
    H.s0[0][0] = 1, H.s0[1][7] = 1;
    const double th[4] = {1, 10, 100, 321.8122};
    emit(o, "CV_HIRES", &H, 4, th, 1e-12, 1e-16);
    fprintf(o, "#endif\n");
    fclose(o);
    return 0;
}
