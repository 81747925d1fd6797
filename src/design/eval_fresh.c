/* One frequency's swept matrix built from the model's terms
 * (eval_internal.h): with J the fixed unknowns and the active rooftops and
 * U the design unknowns it lacks, Z_JJ is factorised (LAPACK's complex symmetric
 * Bunch–Kaufman, zsytrf) and
 *
 *     M_KK = −(Z_JJ⁻¹)_KK,   M_KU = (Z_JJ⁻¹ Z_JU)_K,   M_KP = (Z_JJ⁻¹ B_J)_K,
 *     M_UU = Z_UU − Z_UJ Z_JJ⁻¹ Z_JU,   M_UP = −Z_UJ Z_JJ⁻¹ B_J,   M_PP = −B_Jᵀ Z_JJ⁻¹ B_J
 *
 * (K ⊆ J the map's rooftops; the design unknowns carry no port
 * excitation). The evaluator makes M0 so, with no rooftop of the region
 * active (J the fixed unknowns alone), once per frequency; each map's M is
 * then M0 swept on its rooftops (sv_design_eval_rebuild_one). */
#include <complex.h>
#include <stdlib.h>
#include <string.h>

#include <cblas.h>
#include <lapacke.h>

#include "eval_internal.h"

typedef struct sets {
    int nj, nu, nk;
    int *j;   /* nj: full indices (fixed, then the active design unknowns) */
    int *u;   /* nu: design indices of the inactive */
    int *k;   /* nk: design indices of the active (J's rows nfix + t) */
} sets;

static sv_status make_sets(const sv_design_eval *ev, const unsigned char *active, sets *s)
{
    s->j = malloc(sizeof(int) * ((size_t)ev->n + 1));
    s->u = malloc(sizeof(int) * ((size_t)ev->nd + 1));
    s->k = malloc(sizeof(int) * ((size_t)ev->nd + 1));
    if (!s->j || !s->u || !s->k) return sv_error(SV_ERR_NOMEM, "design: fresh solve: out of memory");
    s->nj = s->nu = s->nk = 0;
    for (int t = 0; t < ev->nfix; t++) s->j[s->nj++] = ev->fixed[t];
    for (int d = 0; d < ev->nd; d++)
        if (active[d]) {
            s->k[s->nk++] = d;
            s->j[s->nj++] = ev->dfull[d];
        } else
            s->u[s->nu++] = d;
    return SV_OK;
}

static void free_sets(sets *s)
{
    free(s->j);
    free(s->u);
    free(s->k);
}

/* Z_JJ (lower triangle and its mirror) and the right-hand sides
 * W = [Z_JU, B_J, E_K], with Z_JU kept in zju. */
static void fill_system(const sv_design_eval *ev, int fi, const sets *s, double complex *zjj, double complex *w,
                        double complex *zju)
{
    size_t nj = (size_t)s->nj;
    for (int b = 0; b < s->nj; b++)
        for (int a = b; a < s->nj; a++) zjj[a + nj * b] = zjj[b + nj * a] = sv_design_eval_z(ev, fi, s->j[a], s->j[b]);
    for (int c = 0; c < s->nu; c++)
        for (int a = 0; a < s->nj; a++) w[a + nj * c] = zju[a + nj * c] = sv_design_eval_z(ev, fi, s->j[a], ev->dfull[s->u[c]]);
    for (int k = 0; k < ev->p; k++)
        for (int a = 0; a < s->nj; a++) w[a + nj * (s->nu + k)] = ev->B[s->j[a] + (size_t)ev->n * k];
    for (int c = 0; c < s->nk; c++) {
        double complex *col = w + nj * (s->nu + ev->p + c);
        memset(col, 0, sizeof(double complex) * nj);
        col[ev->nfix + c] = 1;
    }
}

/* M from X = Z_JJ⁻¹ W (in w) and Z_JU. */
static void fill_m(const sv_design_eval *ev, int fi, const sets *s, const double complex *x, const double complex *zju,
                   double complex *c, double complex *M)
{
    int m = ev->m, nd = ev->nd, p = ev->p, nu = s->nu, nk = s->nk;
    size_t nj = (size_t)s->nj;
#define AT(r, q) M[(size_t)(r) + (size_t)m * (q)]
    for (int a = 0; a < nk; a++) {
        const double complex *row = x + ev->nfix + a; /* row K_a of X, stride nj */
        for (int b = 0; b < nk; b++) AT(s->k[a], s->k[b]) = -row[nj * (nu + p + b)];
        for (int q = 0; q < nu; q++) AT(s->k[a], s->u[q]) = AT(s->u[q], s->k[a]) = row[nj * q];
        for (int k = 0; k < p; k++) AT(s->k[a], nd + k) = AT(nd + k, s->k[a]) = row[nj * (nu + k)];
    }
    /* C = [Z_UU, 0] − Z_JUᵀ·[X_U, X_B] (nu × (nu + p)) */
    for (int q = 0; q < nu; q++)
        for (int r = 0; r < nu; r++) c[r + (size_t)nu * q] = sv_design_eval_z(ev, fi, ev->dfull[s->u[r]], ev->dfull[s->u[q]]);
    for (int k = 0; k < p; k++)
        for (int r = 0; r < nu; r++) c[r + (size_t)nu * (nu + k)] = 0;
    const double complex one = 1, minus = -1;
    if (nu > 0 && nj > 0)
        cblas_zgemm(CblasColMajor, CblasTrans, CblasNoTrans, nu, nu + p, (int)nj, &minus, zju, (int)nj, x, (int)nj, &one,
                    c, nu);
    for (int q = 0; q < nu; q++) {
        for (int r = 0; r < nu; r++) AT(s->u[r], s->u[q]) = c[r + (size_t)nu * q];
        for (int k = 0; k < p; k++) AT(s->u[q], nd + k) = AT(nd + k, s->u[q]) = c[q + (size_t)nu * (nu + k)];
    }
    /* M_PP = −B_Jᵀ X_B */
    for (int k = 0; k < p; k++)
        for (int l = 0; l < p; l++) {
            double complex sum = 0;
            for (size_t a = 0; a < nj; a++) sum += ev->B[s->j[a] + (size_t)ev->n * k] * x[a + nj * (nu + l)];
            AT(nd + k, nd + l) = -sum;
        }
#undef AT
}

/* The swept matrix of frequency fi for the rooftops `active` into M. */
static sv_status fresh_one(sv_design_eval *ev, int fi, const unsigned char *active, double complex *M, double complex *work)
{
    sets s = {0};
    sv_status st = make_sets(ev, active, &s);
    if (st) {
        free_sets(&s);
        return st;
    }
    size_t nj = (size_t)s.nj, nrhs = (size_t)s.nu + ev->p + s.nk;
    double complex *zjj = work, *w = zjj + nj * nj, *zju = w + nj * nrhs, *c = zju + nj * s.nu;
    lapack_int *ipiv = malloc(sizeof(lapack_int) * (nj + 1));
    if (!ipiv) st = sv_error(SV_ERR_NOMEM, "design: fresh solve: out of memory");
    if (!st) {
        fill_system(ev, fi, &s, zjj, w, zju);
        if (nj > 0) {
            lapack_int info = LAPACKE_zsytrf(LAPACK_COL_MAJOR, 'L', (lapack_int)nj, zjj, (lapack_int)nj, ipiv);
            if (info > 0)
                st = sv_error(SV_ERR_SINGULAR, "design: the map's matrix at %g Hz is singular (pivot %d)", ev->freq[fi],
                              (int)info);
            else if (info < 0)
                st = sv_error(SV_ERR_INTERNAL, "design: zsytrf argument %d", (int)-info);
            if (!st)
                LAPACKE_zsytrs(LAPACK_COL_MAJOR, 'L', (lapack_int)nj, (lapack_int)nrhs, zjj, (lapack_int)nj, ipiv, w,
                               (lapack_int)nj);
        }
    }
    if (!st) fill_m(ev, fi, &s, w, zju, c, M);
    free(ipiv);
    free_sets(&s);
    return st;
}

sv_status sv_design_eval_base_one(sv_design_eval *ev, int fi, double complex *work)
{
    unsigned char *none = calloc((size_t)ev->nd + 1, 1);
    if (!none) return sv_error(SV_ERR_NOMEM, "design: out of memory");
    sv_status st = fresh_one(ev, fi, none, ev->M0 + (size_t)fi * ev->m * ev->m, work);
    free(none);
    return st;
}

sv_status sv_design_eval_rebuild_one(sv_design_eval *ev, int fi, double complex *work)
{
    size_t mm = (size_t)ev->m * ev->m;
    double complex *M = ev->M + (size_t)fi * mm;
    memcpy(M, ev->M0 + (size_t)fi * mm, sizeof(double complex) * mm);
    int *k = malloc(sizeof(int) * ((size_t)ev->nd + 1)), nk = 0;
    if (!k) return sv_error(SV_ERR_NOMEM, "design: out of memory");
    for (int d = 0; d < ev->nd; d++)
        if (ev->active[d]) k[nk++] = d;
    sv_status st = nk ? sv_design_sweep_block(M, ev->m, nk, k, 1, NULL, work, NULL) : SV_OK;
    ev->lost[fi] = 0;
    ev->since[fi] = 0;
    free(k);
    return st;
}
