/* The affine model Z(f) = Σ_k c_k(f)·A_k with a real right-hand side B:
 * creation and validation, accessors, products with Z in double from the
 * terms, residuals. */
#include <math.h>
#include <string.h>

#include "sweep_internal.h"

static int csr_ok(int n, const sv_sweep_term *t, int k)
{
    if (!t->rowptr || !t->colind || !t->values) {
        sv_error(SV_ERR_ARG, "terms[%d]: CSR term needs rowptr, colind and values (got NULL)", k);
        return 0;
    }
    if (t->rowptr[0] != 0) {
        sv_error(SV_ERR_PATTERN, "terms[%d].rowptr[0] = %d: expected 0", k, t->rowptr[0]);
        return 0;
    }
    for (int i = 0; i < n; i++) {
        if (t->rowptr[i + 1] < t->rowptr[i]) {
            sv_error(SV_ERR_PATTERN, "terms[%d].rowptr[%d] = %d < rowptr[%d] = %d: expected non-decreasing", k, i + 1,
                     t->rowptr[i + 1], i, t->rowptr[i]);
            return 0;
        }
        for (int e = t->rowptr[i]; e < t->rowptr[i + 1]; e++) {
            if (t->colind[e] < 0 || t->colind[e] >= n) {
                sv_error(SV_ERR_PATTERN, "terms[%d].colind[%d] = %d: expected 0 <= col < %d", k, e, t->colind[e], n);
                return 0;
            }
            if (!isfinite(t->values[e])) {
                sv_error(SV_ERR_NONFINITE, "terms[%d].values[%d] (row %d, col %d) is not finite", k, e, i,
                         t->colind[e]);
                return 0;
            }
        }
    }
    return 1;
}

static int packed_ok(int n, const sv_sweep_term *t, int k)
{
    if (!t->packed) {
        sv_error(SV_ERR_ARG, "terms[%d].packed is NULL", k);
        return 0;
    }
    for (int c0 = 0; c0 < n; c0 += t->nb) {
        int w = n - c0 < t->nb ? n - c0 : t->nb;
        const double *panel = t->packed + sv_dense_packed_offset(n, t->nb, c0, c0);
        for (int jj = 0; jj < w; jj++) {
            const double *col = panel + (size_t)jj * (size_t)(n - c0);
            for (int i = c0 + jj; i < n; i++)
                if (!isfinite(col[i - c0])) {
                    sv_error(SV_ERR_NONFINITE, "terms[%d] entry (%d, %d) is not finite", k, i, c0 + jj);
                    return 0;
                }
        }
    }
    return 1;
}

/* Every term valid; *nb: the packed terms' shared block size (0: none). */
static sv_status check_terms(int n, int nterms, const sv_sweep_term *terms, int *nb)
{
    *nb = 0;
    for (int k = 0; k < nterms; k++) {
        const sv_sweep_term *t = &terms[k];
        if (t->kind == SV_SWEEP_TERM_PACKED) {
            if (t->nb < 1) return sv_error(SV_ERR_ARG, "terms[%d].nb = %d: expected >= 1", k, t->nb);
            if (*nb && t->nb != *nb)
                return sv_error(SV_ERR_ARG, "terms[%d].nb = %d: expected the block size %d of the other packed terms",
                                k, t->nb, *nb);
            *nb = t->nb;
            if (!packed_ok(n, t, k)) return sv_last_status();
        } else if (t->kind == SV_SWEEP_TERM_CSR) {
            if (!csr_ok(n, t, k)) return sv_last_status();
        } else if (t->kind == SV_SWEEP_TERM_LOWRANK) {
            if (!sv_sweep_lowrank_ok(n, t, k)) return sv_last_status();
        } else {
            return sv_error(SV_ERR_ARG, "terms[%d].kind = %d: expected SV_SWEEP_TERM_PACKED, _CSR or _LOWRANK", k,
                            (int)t->kind);
        }
    }
    return SV_OK;
}

/* B copied (ld n) with its column norms; a zero column is refused. */
static sv_status copy_rhs(sv_sweep_model *m, const double *b, int ldb)
{
    int n = m->n;
    for (int j = 0; j < m->nrhs; j++) {
        double s = 0.0;
        for (int i = 0; i < n; i++) {
            double v = b[(size_t)j * ldb + i];
            m->b[(size_t)j * n + i] = v;
            s += v * v;
        }
        if (s == 0.0) return sv_error(SV_ERR_ARG, "b column %d is zero: expected a non-zero excitation", j);
        m->bnorm[j] = sqrt(s);
    }
    m->c = m->b;
    return SV_OK;
}

/* ‖A_k‖∞ of every term. */
/* Each term's norm within its share of the progress: a packed term of an
 * 11 402-unknown model takes a tenth of a second or more to read. */
static sv_status term_norms(sv_ctx *ctx, sv_sweep_model *m)
{
    int n = m->n;
    for (int k = 0; k < m->nterms; k++) {
        const sv_sweep_term *t = &m->terms[k];
        sv_progress_span outer = sv_progress_span_begin(ctx, (double)k / m->nterms, (k + 1.0) / m->nterms);
        sv_progress_loop loop = sv_progress_loop_begin(ctx, "term norms", 1.0);
        if (t->kind == SV_SWEEP_TERM_PACKED) {
            m->term_norm[k] = sv_sweep_packed_norm_inf(&loop, n, t->nb, t->packed);
        } else if (t->kind == SV_SWEEP_TERM_LOWRANK) {
            m->term_norm[k] = sv_sweep_lowrank_norm_inf(n, t);
        } else {
            double mx = 0.0;
            for (int i = 0; i < n; i++) {
                double s = 0.0;
                for (int e = t->rowptr[i]; e < t->rowptr[i + 1]; e++) s += fabs(t->values[e]);
                if (s > mx) mx = s;
            }
            m->term_norm[k] = mx;
        }
        sv_status st = sv_progress_loop_end(&loop);
        sv_progress_span_end(ctx, outer);
        if (st) return st;
        if (m->term_norm[k] < 0) return sv_error(SV_ERR_NOMEM, "no memory for the norm of terms[%d]", k);
    }
    return SV_OK;
}

sv_status sv_sweep_model_create(sv_ctx *ctx, int n, int nterms, const sv_sweep_term *terms, sv_sweep_coef_fn coef,
                                void *coef_user, int nrhs, const double *b, int ldb, sv_sweep_model **out)
{
    if (!out) return sv_error(SV_ERR_ARG, "out is NULL");
    *out = NULL;
    if (n < 1) return sv_error(SV_ERR_ARG, "n = %d: expected >= 1", n);
    if (nterms < 1) return sv_error(SV_ERR_ARG, "nterms = %d: expected >= 1", nterms);
    if (!terms) return sv_error(SV_ERR_ARG, "terms is NULL");
    if (!coef) return sv_error(SV_ERR_ARG, "coef (the coefficient callback) is NULL");
    if (nrhs < 1) return sv_error(SV_ERR_ARG, "nrhs = %d: expected >= 1", nrhs);
    if (!b) return sv_error(SV_ERR_ARG, "b is NULL");
    if (ldb < n) return sv_error(SV_ERR_ARG, "ldb = %d: expected >= n = %d", ldb, n);
    int nb;
    sv_status st = check_terms(n, nterms, terms, &nb);
    if (st) return st;
    for (int j = 0; j < nrhs; j++)
        for (int i = 0; i < n; i++)
            if (!isfinite(b[(size_t)j * ldb + i]))
                return sv_error(SV_ERR_NONFINITE, "b(%d, %d) is not finite", i, j);

    sv_sweep_model *m = sv_calloc(ctx, 1, sizeof(*m), "sweep model");
    if (!m) return sv_last_status();
    *m = (sv_sweep_model){.ctx = ctx, .n = n, .nterms = nterms, .nrhs = nrhs, .nout = nrhs, .nb = nb,
                          .coef = coef, .coef_user = coef_user};
    m->terms = sv_alloc(ctx, sizeof(sv_sweep_term) * (size_t)nterms, "sweep model terms");
    m->term_norm = sv_alloc(ctx, sizeof(double) * (size_t)nterms, "sweep model term norms");
    m->b = sv_alloc(ctx, sizeof(double) * (size_t)n * (size_t)nrhs, "sweep right-hand sides");
    m->bnorm = sv_alloc(ctx, sizeof(double) * (size_t)nrhs, "sweep right-hand side norms");
    st = m->terms && m->term_norm && m->b && m->bnorm ? SV_OK : sv_last_status();
    if (!st) {
        memcpy(m->terms, terms, sizeof(sv_sweep_term) * (size_t)nterms);
        st = copy_rhs(m, b, ldb);
    }
    if (!st) st = term_norms(ctx, m);
    if (!st) st = sv_sweep_lowrank_groups(m);
    if (st) {
        sv_sweep_model_destroy(m);
        return st;
    }
    *out = m;
    return SV_OK;
}

void sv_sweep_model_destroy(sv_sweep_model *m)
{
    if (!m) return;
    void *const owned[] = {m->c != m->b ? m->c : NULL, m->b,           m->bnorm,       m->terms, m->term_norm,
                           m->term_group,              m->group_first, m->group_terms, m};
    sv_free_each(m->ctx, owned, SV_COUNT(owned));
}

sv_status sv_sweep_model_set_output(sv_sweep_model *m, int nout, const double *c, int ldc)
{
    if (!m) return sv_error(SV_ERR_ARG, "model is NULL");
    if (nout < 1) return sv_error(SV_ERR_ARG, "nout = %d: expected >= 1", nout);
    if (!c) return sv_error(SV_ERR_ARG, "c is NULL");
    if (ldc < m->n) return sv_error(SV_ERR_ARG, "ldc = %d: expected >= n = %d", ldc, m->n);
    double *copy = sv_alloc(m->ctx, sizeof(double) * (size_t)m->n * (size_t)nout, "sweep output matrix");
    if (!copy) return sv_last_status();
    for (int j = 0; j < nout; j++)
        for (int i = 0; i < m->n; i++) {
            double v = c[(size_t)j * ldc + i];
            if (!isfinite(v)) {
                sv_free(m->ctx, copy);
                return sv_error(SV_ERR_NONFINITE, "c(%d, %d) is not finite", i, j);
            }
            copy[(size_t)j * m->n + i] = v;
        }
    if (m->c != m->b) sv_free(m->ctx, m->c);
    m->c = copy;
    m->nout = nout;
    return SV_OK;
}

int sv_sweep_model_order(const sv_sweep_model *m) { return m ? m->n : 0; }
int sv_sweep_model_nrhs(const sv_sweep_model *m) { return m ? m->nrhs : 0; }
int sv_sweep_model_nout(const sv_sweep_model *m) { return m ? m->nout : 0; }
int sv_sweep_model_nterms(const sv_sweep_model *m) { return m ? m->nterms : 0; }
int sv_sweep_model_block(const sv_sweep_model *m) { return m ? m->nb : 0; }
const double *sv_sweep_model_rhs(const sv_sweep_model *m) { return m ? m->b : NULL; }

void sv_sweep_model_shape(const sv_sweep_model *m, sv_sweep_shape *shape)
{
    *shape = (sv_sweep_shape){0};
    if (!m) return;
    shape->nterms = m->nterms;
    sv_sweep_lowrank_shape(m, &shape->lowrank, &shape->lowrank_cols);
}

const sv_sweep_term *sv_sweep_model_term(const sv_sweep_model *m, int k)
{
    return m && k >= 0 && k < m->nterms ? &m->terms[k] : NULL;
}

sv_status sv_sweep_model_coefs(const sv_sweep_model *m, double freq, double complex *c)
{
    if (!m || !c) return sv_error(SV_ERR_ARG, "model or c is NULL");
    if (!isfinite(freq)) return sv_error(SV_ERR_NONFINITE, "frequency %g is not finite", freq);
    for (int k = 0; k < m->nterms; k++) {
        c[k] = m->coef(m->coef_user, k, freq);
        if (!isfinite(creal(c[k])) || !isfinite(cimag(c[k])))
            return sv_error(SV_ERR_NONFINITE, "coefficient c_%d(%g) = %g%+gi is not finite", k, freq, creal(c[k]),
                            cimag(c[k]));
    }
    return SV_OK;
}

sv_status sv_sweep_model_apply_term(const sv_sweep_model *m, int k, int ncols, const double *x, int ldx, double *y,
                                    int ldy)
{
    if (!m || !x || !y) return sv_error(SV_ERR_ARG, "model, x or y is NULL");
    if (k < 0 || k >= m->nterms) return sv_error(SV_ERR_ARG, "term %d: expected 0 <= k < %d", k, m->nterms);
    if (ncols < 0 || ldx < m->n || ldy < m->n)
        return sv_error(SV_ERR_ARG, "ncols = %d, ldx = %d, ldy = %d: expected ncols >= 0 and ld >= n = %d", ncols,
                        ldx, ldy, m->n);
    const sv_sweep_term *t = &m->terms[k];
    if (t->kind == SV_SWEEP_TERM_PACKED)
        return sv_sweep_packed_matmul(m->ctx, m->n, t->nb, t->packed, ncols, x, ldx, y, ldy, 0);
    if (t->kind == SV_SWEEP_TERM_LOWRANK) return sv_sweep_lowrank_apply(m->ctx, m->n, t, ncols, x, ldx, y, ldy);
    for (int j = 0; j < ncols; j++) memset(y + (size_t)j * ldy, 0, sizeof(double) * (size_t)m->n);
    sv_sweep_csr_matmul(m->n, t->rowptr, t->colind, t->values, ncols, x, ldx, y, ldy);
    return SV_OK;
}

sv_status sv_sweep_model_apply_terms(const sv_sweep_model *m, int ncols, const double *x, double *y)
{
    if (!m) return sv_error(SV_ERR_ARG, "model is NULL");
    for (int k = 0; k < m->nterms; k++) {
        if (m->term_group[k] >= 0) continue; /* with its group below */
        sv_status st = sv_sweep_model_apply_term(m, k, ncols, x, m->n, y + (size_t)k * m->n * ncols, m->n);
        if (st) return st;
    }
    for (int g = 0; g < m->ngroups; g++) {
        sv_status st = sv_sweep_lowrank_apply_group(m, g, ncols, x, y);
        if (st) return st;
    }
    return SV_OK;
}

/* Y = Σ c_k·A_k·X with the given coefficients. */
static sv_status apply_coefs(const sv_sweep_model *m, const double complex *c, int ncols, const double complex *x,
                             int ldx, double complex *y, int ldy)
{
    int n = m->n;
    sv_status st = SV_OK;
    /* Real and imaginary parts side by side, so each real term is applied
     * once to 2·ncols real columns. */
    size_t sz = (size_t)n * 2 * (size_t)ncols;
    double *xs = sv_alloc(m->ctx, sizeof(double) * sz, "sweep product workspace");
    double *ts = sv_alloc(m->ctx, sizeof(double) * sz, "sweep product workspace");
    if (!xs || !ts) {
        st = sv_last_status();
        sv_free(m->ctx, xs);
        sv_free(m->ctx, ts);
        return st;
    }
    for (int j = 0; j < ncols; j++)
        for (int i = 0; i < n; i++) {
            double complex v = x[(size_t)j * ldx + i];
            xs[(size_t)j * n + i] = creal(v);
            xs[(size_t)(ncols + j) * n + i] = cimag(v);
            y[(size_t)j * ldy + i] = 0.0;
        }
    for (int k = 0; k < m->nterms && !st; k++) {
        if (c[k] == 0) continue;
        st = sv_sweep_model_apply_term(m, k, 2 * ncols, xs, n, ts, n);
        if (st) break;
        for (int j = 0; j < ncols; j++)
            for (int i = 0; i < n; i++)
                y[(size_t)j * ldy + i] += c[k] * CMPLX(ts[(size_t)j * n + i], ts[(size_t)(ncols + j) * n + i]);
    }
    sv_free(m->ctx, xs);
    sv_free(m->ctx, ts);
    return st;
}

sv_status sv_sweep_model_apply(const sv_sweep_model *m, double freq, int ncols, const double complex *x, int ldx,
                               double complex *y, int ldy)
{
    if (!m || !x || !y) return sv_error(SV_ERR_ARG, "model, x or y is NULL");
    if (ncols < 0 || ldx < m->n || ldy < m->n)
        return sv_error(SV_ERR_ARG, "ncols = %d, ldx = %d, ldy = %d: expected ncols >= 0 and ld >= n = %d", ncols,
                        ldx, ldy, m->n);
    double complex c[m->nterms];
    sv_status st = sv_sweep_model_coefs(m, freq, c);
    if (st) return st;
    return apply_coefs(m, c, ncols, x, ldx, y, ldy);
}

sv_status sv_sweep_model_coef_derivs(const sv_sweep_model *m, double freq, double complex *d1, double complex *d2,
                                     double complex *d3)
{
    if (!m) return sv_error(SV_ERR_ARG, "model is NULL");
    /* Central differences: the derivatives only orient basis directions,
     * so their errors are harmless as long as they are small: with
     * h = 1e-4·f the first and second have O(h²) truncation and eps/h²
     * rounding, both about 1e-8 relative; the third takes H = 1e-3·f
     * (truncation about 1e-6, rounding eps/H³ about 1e-7). */
    double h = 1e-4 * fabs(freq);
    if (h == 0) h = 1e-4;
    double complex cp[m->nterms], cm[m->nterms], c0[m->nterms];
    sv_status st = sv_sweep_model_coefs(m, freq + h, cp);
    if (!st) st = sv_sweep_model_coefs(m, freq - h, cm);
    if (!st) st = sv_sweep_model_coefs(m, freq, c0);
    if (st) return st;
    for (int k = 0; k < m->nterms; k++) {
        if (d1) d1[k] = (cp[k] - cm[k]) / (2 * h);
        if (d2) d2[k] = (cp[k] - 2.0 * c0[k] + cm[k]) / (h * h);
    }
    if (!d3) return SV_OK;
    double H = 10 * h;
    double complex p1[m->nterms], p2[m->nterms], m1[m->nterms], m2[m->nterms];
    st = sv_sweep_model_coefs(m, freq + H, p1);
    if (!st) st = sv_sweep_model_coefs(m, freq + 2 * H, p2);
    if (!st) st = sv_sweep_model_coefs(m, freq - H, m1);
    if (!st) st = sv_sweep_model_coefs(m, freq - 2 * H, m2);
    if (st) return st;
    for (int k = 0; k < m->nterms; k++) d3[k] = (p2[k] - 2.0 * p1[k] + 2.0 * m1[k] - m2[k]) / (2 * H * H * H);
    return SV_OK;
}

sv_status sv_sweep_model_residual(const sv_sweep_model *m, double freq, const double complex *x, int ldx,
                                  double complex *r, int ldr)
{
    if (!m) return sv_error(SV_ERR_ARG, "model is NULL");
    sv_status st = sv_sweep_model_apply(m, freq, m->nrhs, x, ldx, r, ldr);
    if (st) return st;
    for (int j = 0; j < m->nrhs; j++)
        for (int i = 0; i < m->n; i++) r[(size_t)j * ldr + i] = m->b[(size_t)j * m->n + i] - r[(size_t)j * ldr + i];
    return SV_OK;
}

double sv_sweep_model_term_norm(const sv_sweep_model *m, int k)
{
    return m && k >= 0 && k < m->nterms ? m->term_norm[k] : -1.0;
}

double sv_sweep_model_norm_inf(const sv_sweep_model *m, double freq)
{
    if (!m) return -1.0;
    double s = 0.0;
    for (int k = 0; k < m->nterms; k++) s += cabs(m->coef(m->coef_user, k, freq)) * m->term_norm[k];
    return s;
}

sv_status sv_sweep_form_full(const sv_sweep_model *m, double freq, double complex *z, int ldz)
{
    int n = m->n;
    double complex c[m->nterms];
    sv_status st = sv_sweep_model_coefs(m, freq, c);
    if (st) return st;
    for (int j = 0; j < n; j++) memset(z + (size_t)j * ldz, 0, sizeof(double complex) * (size_t)n);
    for (int k = 0; k < m->nterms; k++) {
        const sv_sweep_term *t = &m->terms[k];
        if (t->kind == SV_SWEEP_TERM_LOWRANK) continue; /* below, by groups */
        if (t->kind == SV_SWEEP_TERM_PACKED) {
#pragma omp parallel for schedule(dynamic, 16) if (n >= 1024) num_threads(sv_threads_team())
            for (int j = 0; j < n; j++) {
                size_t o = sv_dense_packed_offset(n, t->nb, j, j);
                for (int i = j; i < n; i++) z[(size_t)j * ldz + i] += c[k] * t->packed[o + (size_t)(i - j)];
            }
        } else {
            for (int i = 0; i < n; i++)
                for (int e = t->rowptr[i]; e < t->rowptr[i + 1]; e++)
                    if (t->colind[e] <= i) z[(size_t)t->colind[e] * ldz + i] += c[k] * t->values[e];
        }
    }
    st = sv_sweep_lowrank_add_full(m, c, z, ldz);
    if (st) return st;
    for (int j = 0; j < n; j++)
        for (int i = j + 1; i < n; i++) z[(size_t)i * ldz + j] = z[(size_t)j * ldz + i];
    return SV_OK;
}
