/* The constant mass matrix M of M·y' = f (ode.h, docs/how-to/ode-dae.md):
 * validation, an owned CSR copy, its zero rows and columns (the algebraic
 * equations and variables of a semi-explicit index-1 DAE), M·x for
 * Rodas5P's stage sums, and M⁻¹ for Tsit5 through LAPACK's LU.
 *
 * A singular M is used in one of two forms. Semi-explicit (M = [M_dd 0;
 * 0 0] up to a permutation of rows and of columns, M_dd non-singular, the
 * form of Hairer & Wanner's index-1 theory, Solving ODEs II, chapter VI):
 * its zero rows and columns name the algebraic equations and variables,
 * found from the pattern at any size. Any other singular M (circuits in
 * nodal form: rows such as (−C, C) and (C, −C)): the algebraic
 * constraints are wᵀf = 0 for w in M's left null space, and the variables
 * they fix span its right null space, both from LAPACK's SVD (dense, n ≤
 * ODE_MASS_SVD_MAX). Either tells the initial-value check and Newton's
 * method (init.c) what to solve; Rodas5P needs neither. */
#include <float.h>
#include <lapacke.h>
#include <math.h>
#include <string.h>

#include "ode_internal.h"

/* CSR as the problem's Jacobian pattern is checked (problem.c's rules). */
static sv_status check_csr(const sv_ode_problem_desc *d, const char *nm)
{
    const int n = d->n, *rp = d->mass_rowptr, *ci = d->mass_colind;
    if ((rp == NULL) != (ci == NULL))
        return sv_error(SV_ERR_PATTERN, "%s: mass matrix pattern needs both mass_rowptr and mass_colind (or neither "
                        "for a dense M)", nm);
    if (!rp) {
        if ((long long)n * n > (long long)ODE_MASS_DENSE_MAX * ODE_MASS_DENSE_MAX)
            return sv_error(SV_ERR_ARG, "%s: dense mass matrix with n = %d: give its pattern (mass_rowptr, "
                            "mass_colind) above n = %d", nm, n, ODE_MASS_DENSE_MAX);
        return SV_OK;
    }
    if (rp[0] != 0) return sv_error(SV_ERR_PATTERN, "%s: mass_rowptr[0] = %d: expected 0", nm, rp[0]);
    for (int i = 0; i < n; i++) {
        if (rp[i + 1] < rp[i])
            return sv_error(SV_ERR_PATTERN, "%s: mass_rowptr[%d] = %d < mass_rowptr[%d] = %d: must not decrease", nm,
                            i + 1, rp[i + 1], i, rp[i]);
        for (int e = rp[i]; e < rp[i + 1]; e++) {
            if (ci[e] < 0 || ci[e] >= n)
                return sv_error(SV_ERR_PATTERN, "%s: mass_colind[%d] = %d (row %d): expected 0..%d", nm, e, ci[e], i,
                                n - 1);
            if (e > rp[i] && ci[e] <= ci[e - 1])
                return sv_error(SV_ERR_PATTERN, "%s: mass matrix row %d: columns must be strictly increasing "
                                "(mass_colind[%d] = %d after %d)", nm, i, e, ci[e], ci[e - 1]);
        }
    }
    if ((long long)rp[n] > (long long)n * n)
        return sv_error(SV_ERR_PATTERN, "%s: mass_rowptr[n] = %d exceeds n² = %lld", nm, rp[n], (long long)n * n);
    return SV_OK;
}

/* The owned CSR copy; a dense M keeps its non-zero entries only, so that
 * its pattern adds no structural entry to the stage matrix. */
static sv_status copy_csr(sv_ctx *ctx, const sv_ode_problem_desc *d, ode_mass *m, const char *nm)
{
    const int n = d->n;
    int nnz = 0;
    if (d->mass_rowptr) {
        nnz = d->mass_rowptr[n];
    } else {
        for (long long q = 0; q < (long long)n * n; q++) nnz += d->mass[q] != 0;
    }
    m->nnz = nnz;
    m->rowptr = sv_alloc(ctx, sizeof(int) * (size_t)(n + 1), "ode mass matrix");
    m->colind = sv_alloc(ctx, sizeof(int) * (size_t)(nnz ? nnz : 1), "ode mass matrix");
    m->val = sv_alloc(ctx, sizeof(double) * (size_t)(nnz ? nnz : 1), "ode mass matrix");
    if (!m->rowptr || !m->colind || !m->val) return sv_last_status();
    int e = 0;
    m->rowptr[0] = 0;
    for (int i = 0; i < n; i++) {
        if (d->mass_rowptr) {
            for (int q = d->mass_rowptr[i]; q < d->mass_rowptr[i + 1]; q++, e++) {
                m->colind[e] = d->mass_colind[q];
                m->val[e] = d->mass[q];
            }
        } else {
            for (int j = 0; j < n; j++) {
                double v = d->mass[(size_t)i * n + j];
                if (v == 0) continue;
                m->colind[e] = j;
                m->val[e++] = v;
            }
        }
        m->rowptr[i + 1] = e;
    }
    for (int q = 0; q < nnz; q++)
        if (!isfinite(m->val[q]))
            return sv_error(SV_ERR_ARG, "%s: mass matrix entry %d = %g: expected finite", nm, q, m->val[q]);
    return SV_OK;
}

/* Zero rows and zero columns (entries equal to 0 count as absent) into
 * alg_row and alg_col; *nc: the zero columns (m->nalg: the zero rows). */
static sv_status classify(sv_ctx *ctx, int n, ode_mass *m, int *nc)
{
    unsigned char *colnz = sv_calloc(ctx, (size_t)n, 1, "ode mass matrix");
    m->alg_row = sv_alloc(ctx, sizeof(int) * 2 * (size_t)n, "ode mass matrix");
    if (!colnz || !m->alg_row) {
        sv_free(ctx, colnz);
        return sv_last_status();
    }
    m->alg_col = m->alg_row + n;
    int nr = 0;
    *nc = 0;
    for (int i = 0; i < n; i++) {
        int nz = 0;
        for (int e = m->rowptr[i]; e < m->rowptr[i + 1]; e++)
            if (m->val[e] != 0) nz = 1, colnz[m->colind[e]] = 1;
        if (!nz) m->alg_row[nr++] = i;
    }
    for (int j = 0; j < n; j++)
        if (!colnz[j]) m->alg_col[(*nc)++] = j;
    sv_free(ctx, colnz);
    m->nalg = nr;
    return SV_OK;
}

/* M is taken as singular when its reciprocal condition number is at most
 * n·ε, the threshold null_spaces' SVD ranks it by. LU's exact zero pivot
 * alone misses a singular M whose elimination rounds: the capacitor chain
 * (C1, −C1, 0; −C1, C1 + C2, −C2; 0, −C2, C2) with C1 = 0.1, C2 = 0.2 has
 * the null vector (1, 1, 1) yet its last pivot comes out 2.8e-17. */
static double singular_below(int n) { return n * DBL_EPSILON; }

/* M's block on its non-zero rows and columns (as many of each), column-
 * major, factored by LAPACK; *singular when it is singular to working
 * precision (then M is not semi-explicit). Kept as Tsit5's M⁻¹ when M has
 * no zero row. */
static sv_status factor_block(sv_ctx *ctx, int n, ode_mass *m, int *singular)
{
    const int nd = n - m->nalg;
    *singular = 0;
    if (nd == 0) return SV_OK;
    if (n > ODE_MASS_DENSE_MAX) return SV_OK; /* no dense check: a singular block shows as bad pivots */
    int *pos = sv_alloc(ctx, sizeof(int) * 2 * (size_t)n, "ode mass matrix"); /* row → block row, or −1 */
    double *a = sv_calloc(ctx, (size_t)nd * nd, sizeof(double), "ode mass matrix LU");
    m->ipiv = sv_alloc(ctx, sizeof(int) * (size_t)nd, "ode mass matrix LU");
    if (!pos || !a || !m->ipiv) {
        sv_free_each(ctx, (void *const[]){pos, a}, 2);
        return sv_last_status();
    }
    int *colp = pos + n; /* column → block column, or −1 */
    for (int i = 0, r = 0, k = 0; i < n; i++) pos[i] = (k < m->nalg && m->alg_row[k] == i) ? (k++, -1) : r++;
    for (int j = 0, c = 0, k = 0; j < n; j++) colp[j] = (k < m->nalg && m->alg_col[k] == j) ? (k++, -1) : c++;
    for (int i = 0; i < n; i++)
        for (int e = m->rowptr[i]; e < m->rowptr[i + 1]; e++)
            if (pos[i] >= 0 && colp[m->colind[e]] >= 0) a[pos[i] + (size_t)nd * colp[m->colind[e]]] = m->val[e];
    const double anorm = LAPACKE_dlange(LAPACK_COL_MAJOR, '1', nd, nd, a, nd);
    lapack_int info = LAPACKE_dgetrf(LAPACK_COL_MAJOR, nd, nd, a, nd, m->ipiv);
    sv_free(ctx, pos);
    double rcond = 0;
    /* dgecon's work arrays are LAPACKE's own: without them M is unjudged, not singular */
    lapack_int cinfo = info == 0 ? LAPACKE_dgecon(LAPACK_COL_MAJOR, '1', nd, a, nd, anorm, &rcond) : 0;
    if (cinfo == LAPACK_WORK_MEMORY_ERROR) {
        sv_free_each(ctx, (void *const[]){a, m->ipiv}, 2);
        m->ipiv = NULL;
        return sv_error(SV_ERR_NOMEM, "ode mass matrix: no memory for LAPACK's condition estimate (n = %d)", nd);
    }
    *singular = info > 0 || cinfo != 0 || !(rcond > singular_below(nd));
    if (m->nalg == 0 && !*singular) {
        m->lu = a;
    } else { /* a DAE: the block was only checked */
        sv_free_each(ctx, (void *const[]){a, m->ipiv}, 2);
        m->ipiv = NULL;
    }
    return SV_OK;
}

/* A singular M not in semi-explicit form: its algebraic constraints from
 * the SVD M = U Σ Vᵀ (LAPACK dgesvd): the left singular vectors of the
 * zero singular values (σ ≤ n·ε·σ_max) span Wᵀ M = 0, the right ones
 * M V = 0. Dense, so only up to ODE_MASS_SVD_MAX. */
#define ODE_MASS_SVD_MAX 1024
static sv_status null_spaces(sv_ctx *ctx, int n, ode_mass *m, const char *nm)
{
    sv_free(ctx, m->alg_row);
    m->alg_row = m->alg_col = NULL;
    if (n > ODE_MASS_SVD_MAX)
        return sv_error(SV_ERR_UNSUPPORTED, "%s: singular mass matrix with n = %d not in semi-explicit form (zero "
                        "rows and as many zero columns, the rest non-singular): its null spaces are computed "
                        "densely only up to n = %d", nm, n, ODE_MASS_SVD_MAX);
    const size_t nn = (size_t)n * n;
    double *a = sv_calloc(ctx, 3 * nn + 2 * (size_t)n, sizeof(double), "ode mass matrix SVD");
    if (!a) return sv_last_status();
    double *u = a + nn, *vt = u + nn, *sv = vt + nn, *superb = sv + n;
    for (int i = 0; i < n; i++)
        for (int e = m->rowptr[i]; e < m->rowptr[i + 1]; e++) a[i + (size_t)n * m->colind[e]] = m->val[e];
    lapack_int info = LAPACKE_dgesvd(LAPACK_COL_MAJOR, 'A', 'A', n, n, a, n, sv, u, n, vt, n, superb);
    int rank = 0;
    while (info == 0 && rank < n && sv[rank] > singular_below(n) * sv[0]) rank++;
    const int na = n - rank;
    sv_status st = SV_OK;
    if (info != 0) {
        st = sv_error(SV_ERR_NOCONV, "%s: mass matrix: LAPACK dgesvd did not converge (info %d)", nm, (int)info);
    } else if (na == 0) {
        st = sv_error(SV_ERR_SINGULAR, "%s: mass matrix is ill-conditioned: singular by LU's condition estimate, "
                      "of full rank by the SVD (smallest singular value %.3g of %.3g)", nm, sv[n - 1], sv[0]);
    } else {
        m->wl = sv_alloc(ctx, sizeof(double) * 2 * (size_t)n * na, "ode mass matrix null spaces");
        if (!m->wl) st = sv_last_status();
    }
    if (st == SV_OK) {
        m->vr = m->wl + (size_t)n * na;
        for (int k = 0; k < na; k++)
            for (int i = 0; i < n; i++) {
                m->wl[i + (size_t)n * k] = u[i + (size_t)n * (rank + k)];
                m->vr[i + (size_t)n * k] = vt[(rank + k) + (size_t)n * i];
            }
        m->nalg = na;
    }
    sv_free(ctx, a);
    return st;
}

sv_status ode_mass_create(sv_ctx *ctx, const sv_ode_problem_desc *d, ode_mass **out)
{
    *out = NULL;
    const char *nm = d->name ? d->name : "problem";
    if (!d->mass) {
        if (d->mass_rowptr || d->mass_colind)
            return sv_error(SV_ERR_ARG, "%s: mass matrix pattern given without its values (mass is NULL)", nm);
        return SV_OK;
    }
    sv_status st = check_csr(d, nm);
    if (st != SV_OK) return st;
    ode_mass *m = sv_calloc(ctx, 1, sizeof *m, "ode mass matrix");
    if (!m) return sv_last_status();
    int nc = 0, singular = 0;
    st = copy_csr(ctx, d, m, nm);
    if (st == SV_OK) st = classify(ctx, d->n, m, &nc);
    if (st == SV_OK && m->nalg == nc) st = factor_block(ctx, d->n, m, &singular);
    if (st == SV_OK && (m->nalg != nc || singular)) st = null_spaces(ctx, d->n, m, nm);
    if (st == SV_OK)
        *out = m;
    else
        ode_mass_destroy(ctx, m);
    return st;
}

void ode_mass_destroy(sv_ctx *ctx, ode_mass *m)
{
    if (m) sv_free_each(ctx, (void *const[]){m->rowptr, m->colind, m->val, m->alg_row, m->wl, m->lu, m->ipiv, m}, 8);
}

void ode_mass_mul(const ode_mass *m, int n, int W, const double *x, double *out)
{
    for (int i = 0; i < n; i++) {
        double *o = out + (size_t)i * W;
        for (int w = 0; w < W; w++) o[w] = 0;
        for (int e = m->rowptr[i]; e < m->rowptr[i + 1]; e++) {
            const double v = m->val[e], *xj = x + (size_t)m->colind[e] * W;
            for (int w = 0; w < W; w++) o[w] += v * xj[w];
        }
    }
}

void ode_mass_solve(const ode_mass *m, int n, int W, const unsigned char *mask, double *x, double *work)
{
    for (int w = 0; w < W; w++) {
        if (!mask[w]) continue;
        for (int i = 0; i < n; i++) work[i] = x[(size_t)i * W + w];
        LAPACKE_dgetrs(LAPACK_COL_MAJOR, 'N', n, 1, m->lu, n, m->ipiv, work, n);
        for (int i = 0; i < n; i++) x[(size_t)i * W + w] = work[i];
    }
}
