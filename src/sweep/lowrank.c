/* Low-rank terms A = U·W·Uᵀ of the affine model (SV_SWEEP_TERM_LOWRANK):
 * validation, the groups of terms that share one U, products, and adding
 * Σ c_k·A_k into Z(f) (packed, for the exact solves, or full, for the
 * LAPACK reference). Only W's lower triangle is read.
 *
 * Nothing of size n × n is stored: a product costs O(n·rank) per column,
 * forming a group into Z(f) n²·k flops for each of the real and imaginary
 * parts of the group's combined core, k ≤ rank its eigenvalues that count. */
#include <math.h>
#include <omp.h>
#include <string.h>
#include <cblas.h>
#include <lapacke.h>

#include "sweep_internal.h"

int sv_sweep_lowrank_ok(int n, const sv_sweep_term *t, int k)
{
    if (!t->u || !t->core) {
        sv_error(SV_ERR_ARG, "terms[%d]: low-rank term needs u and core (got NULL)", k);
        return 0;
    }
    if (t->rank < 1 || t->rank > n) {
        sv_error(SV_ERR_ARG, "terms[%d].rank = %d: expected 1 <= rank <= n = %d", k, t->rank, n);
        return 0;
    }
    int r = t->rank;
    for (size_t e = 0; e < (size_t)n * r; e++)
        if (!isfinite(t->u[e])) {
            sv_error(SV_ERR_NONFINITE, "terms[%d].u entry (%d, %d) is not finite", k, (int)(e % n), (int)(e / n));
            return 0;
        }
    for (int b = 0; b < r; b++)
        for (int a = b; a < r; a++)
            if (!isfinite(t->core[a + (size_t)r * b])) {
                sv_error(SV_ERR_NONFINITE, "terms[%d].core entry (%d, %d) is not finite", k, a, b);
                return 0;
            }
    return 1;
}

/* ---- groups: the terms that share one U ------------------------------------ */
sv_status sv_sweep_lowrank_groups(sv_sweep_model *m)
{
    int K = m->nterms;
    m->term_group = sv_alloc(m->ctx, sizeof(int) * (size_t)K, "low-rank groups");
    m->group_first = sv_alloc(m->ctx, sizeof(int) * (size_t)(K + 1), "low-rank groups");
    m->group_terms = sv_alloc(m->ctx, sizeof(int) * (size_t)(K + 1), "low-rank groups");
    if (!m->term_group || !m->group_first || !m->group_terms) return sv_last_status();
    int ng = 0, at = 0;
    for (int k = 0; k < K; k++) m->term_group[k] = -1;
    for (int k = 0; k < K; k++) {
        const sv_sweep_term *t = &m->terms[k];
        if (t->kind != SV_SWEEP_TERM_LOWRANK || m->term_group[k] >= 0) continue;
        m->group_first[ng] = at;
        for (int j = k; j < K; j++) {
            const sv_sweep_term *o = &m->terms[j];
            if (o->kind != SV_SWEEP_TERM_LOWRANK || o->u != t->u) continue;
            if (o->rank != t->rank)
                return sv_error(SV_ERR_ARG, "terms[%d] and terms[%d] share u but not rank (%d, %d)", k, j, t->rank,
                                o->rank);
            m->term_group[j] = ng;
            m->group_terms[at++] = j;
        }
        ng++;
    }
    m->group_first[ng] = at;
    m->ngroups = ng;
    return SV_OK;
}

/* The first term of group g (its u and rank are the group's). */
static const sv_sweep_term *group_term(const sv_sweep_model *m, int g)
{
    return &m->terms[m->group_terms[m->group_first[g]]];
}

void sv_sweep_lowrank_shape(const sv_sweep_model *m, int *lowrank, int *cols)
{
    *lowrank = m->group_first[m->ngroups];
    *cols = 0;
    for (int g = 0; g < m->ngroups; g++) *cols += group_term(m, g)->rank;
}

/* An upper bound of ‖U·W·Uᵀ‖∞ that costs O(n·rank + rank²): the product of
 * the three norms. It enters only the normwise bound of ‖Z‖ that backward
 * errors are measured with, where the low-rank terms are small. */
double sv_sweep_lowrank_norm_inf(int n, const sv_sweep_term *t)
{
    int r = t->rank;
    double urow = 0, ucol = 0, wrow = 0;
    for (int i = 0; i < n; i++) {
        double s = 0;
        for (int a = 0; a < r; a++) s += fabs(t->u[i + (size_t)n * a]);
        urow = fmax(urow, s);
    }
    for (int a = 0; a < r; a++) {
        double s = 0, w = 0;
        for (int i = 0; i < n; i++) s += fabs(t->u[i + (size_t)n * a]);
        for (int b = 0; b < r; b++) w += fabs(b >= a ? t->core[b + (size_t)r * a] : t->core[a + (size_t)r * b]);
        ucol = fmax(ucol, s);
        wrow = fmax(wrow, w);
    }
    return urow * wrow * ucol;
}

/* ---- products ------------------------------------------------------------------ */
/* Y = U·(W·T) for the r × ncols block T = Uᵀ·X; s: r × ncols workspace. */
static void apply_core(int n, const sv_sweep_term *t, int ncols, const double *tu, double *s, double *y, int ldy)
{
    int r = t->rank;
    cblas_dsymm(CblasColMajor, CblasLeft, CblasLower, r, ncols, 1.0, t->core, r, tu, r, 0.0, s, r);
    cblas_dgemm(CblasColMajor, CblasNoTrans, CblasNoTrans, n, ncols, r, 1.0, t->u, n, s, r, 0.0, y, ldy);
}

sv_status sv_sweep_lowrank_apply(sv_ctx *ctx, int n, const sv_sweep_term *t, int ncols, const double *x, int ldx,
                                 double *y, int ldy)
{
    if (ncols <= 0) return SV_OK;
    int r = t->rank;
    double *tu = sv_alloc(ctx, sizeof(double) * 2 * (size_t)r * (size_t)ncols, "low-rank product workspace");
    if (!tu) return sv_last_status();
    cblas_dgemm(CblasColMajor, CblasTrans, CblasNoTrans, r, ncols, n, 1.0, t->u, n, x, ldx, 0.0, tu, r);
    apply_core(n, t, ncols, tu, tu + (size_t)r * ncols, y, ldy);
    sv_free(ctx, tu);
    return SV_OK;
}

sv_status sv_sweep_lowrank_apply_group(const sv_sweep_model *m, int g, int ncols, const double *x, double *y)
{
    int n = m->n;
    const sv_sweep_term *t0 = group_term(m, g);
    int r = t0->rank;
    double *tu = sv_alloc(m->ctx, sizeof(double) * 2 * (size_t)r * (size_t)ncols, "low-rank product workspace");
    if (!tu) return sv_last_status();
    cblas_dgemm(CblasColMajor, CblasTrans, CblasNoTrans, r, ncols, n, 1.0, t0->u, n, x, n, 0.0, tu, r);
    for (int e = m->group_first[g]; e < m->group_first[g + 1]; e++) {
        int k = m->group_terms[e];
        apply_core(n, &m->terms[k], ncols, tu, tu + (size_t)r * ncols, y + (size_t)k * n * ncols, n);
    }
    sv_free(m->ctx, tu);
    return SV_OK;
}

/* ---- forming Z(f) ---------------------------------------------------------------- */
/* Columns formed at a time: the panel workspace is n × LR_CHUNK (× 2). */
#define LR_CHUNK 16

/* One part (real or imaginary) of a group's combined core Σ_k c_k·W_k in
 * factored form: U·Σ_k c_k·W_k·Uᵀ = P·Λ·Pᵀ with P = U·Q (n × k) from the
 * core's eigenvectors, keeping the k eigenvalues above drop·max|λ|. A
 * single-precision factorisation needs no more (what is dropped is below
 * its rounding of Z, and the residuals use the terms themselves), and at
 * low frequency k is a small fraction of the rank. */
typedef struct lr_part {
    int k;
    double *p, *pl; /* n × k: P and P·Λ */
} lr_part;

typedef struct form_ws {
    lr_part re, im;
    int has_im;
    double *mem;
} form_ws;

/* w (r × r, lower triangle): part of the combined core. */
static void combined_part(const sv_sweep_model *m, int g, const double complex *c, int imag, double *w)
{
    int r = group_term(m, g)->rank;
    memset(w, 0, sizeof(double) * (size_t)r * r);
    for (int e = m->group_first[g]; e < m->group_first[g + 1]; e++) {
        int k = m->group_terms[e];
        const double *wk = m->terms[k].core;
        double ck = imag ? cimag(c[k]) : creal(c[k]);
        if (ck == 0) continue;
        for (int b = 0; b < r; b++)
            for (int a = b; a < r; a++) w[a + (size_t)r * b] += ck * wk[a + (size_t)r * b];
    }
}

/* The factored part from w (destroyed: its eigenvectors); pt->p, pt->pl
 * point at 2·n·r doubles of room. */
static sv_status factor_part(int n, int r, const double *u, double *w, double *lam, double drop, lr_part *pt)
{
    lapack_int info = LAPACKE_dsyevd(LAPACK_COL_MAJOR, 'V', 'L', r, w, r, lam);
    if (info) return sv_error(SV_ERR_NOCONV, "low-rank term: dsyevd info %d on its %d x %d core", (int)info, r, r);
    double mx = 0;
    for (int a = 0; a < r; a++) mx = fmax(mx, fabs(lam[a]));
    int k = 0;
    for (int a = 0; a < r; a++) /* the kept eigenvectors to the front */
        if (mx > 0 && fabs(lam[a]) > drop * mx) {
            if (k != a) memcpy(w + (size_t)r * k, w + (size_t)r * a, sizeof(double) * (size_t)r);
            lam[k++] = lam[a];
        }
    pt->k = k;
    if (k == 0) return SV_OK;
    cblas_dgemm(CblasColMajor, CblasNoTrans, CblasNoTrans, n, k, r, 1.0, u, n, w, r, 0.0, pt->p, n);
    for (int a = 0; a < k; a++)
        for (int i = 0; i < n; i++) pt->pl[i + (size_t)n * a] = pt->p[i + (size_t)n * a] * lam[a];
    return SV_OK;
}

static sv_status form_prepare(const sv_sweep_model *m, int g, const double complex *c, double drop, form_ws *f)
{
    int n = m->n;
    const sv_sweep_term *t0 = group_term(m, g);
    int r = t0->rank;
    f->has_im = 0;
    for (int e = m->group_first[g]; e < m->group_first[g + 1]; e++) f->has_im |= cimag(c[m->group_terms[e]]) != 0;
    size_t rr = (size_t)r * r, nr = (size_t)n * r, parts = 1 + (size_t)f->has_im;
    f->mem = sv_alloc(m->ctx, sizeof(double) * (rr + r + parts * 2 * nr), "low-rank forming workspace");
    if (!f->mem) return sv_last_status();
    double *w = f->mem, *lam = w + rr;
    f->re = (lr_part){.p = lam + r, .pl = lam + r + nr};
    f->im = (lr_part){.p = lam + r + 2 * nr, .pl = lam + r + 3 * nr};
    combined_part(m, g, c, 0, w);
    sv_status st = factor_part(n, r, t0->u, w, lam, drop, &f->re);
    if (!st && f->has_im) {
        combined_part(m, g, c, 1, w);
        st = factor_part(n, r, t0->u, w, lam, drop, &f->im);
    }
    if (!f->has_im) f->im.k = 0;
    if (st) sv_free(m->ctx, f->mem);
    return st;
}

/* panel (rows × wd, ld rows) = rows c0.. of P·Λ times rows c0..c0+wd of P, transposed. */
static void part_panel(int n, const lr_part *pt, int c0, int rows, int wd, double *panel)
{
    if (pt->k == 0) {
        memset(panel, 0, sizeof(double) * (size_t)rows * wd);
        return;
    }
    cblas_dgemm(CblasColMajor, CblasNoTrans, CblasTrans, rows, wd, pt->k, 1.0, pt->pl + c0, n, pt->p + c0, n, 0.0,
                panel, rows);
}

/* Adds a group's Σ c_k·A_k to the lower triangle of columns c0 .. c0 + wd − 1
 * of the block column that starts at b0 (dst: its first entry; ld n − b0).
 * panel: 2·(n − c0)·wd doubles of workspace. */
static void add_columns(int n, const form_ws *f, int b0, int c0, int wd, int single, void *dst, double *panel)
{
    int rows = n - c0, ld = n - b0;
    double *pre = panel, *pim = panel + (size_t)rows * wd;
    part_panel(n, &f->re, c0, rows, wd, pre);
    if (f->has_im) part_panel(n, &f->im, c0, rows, wd, pim);
    for (int jj = 0; jj < wd; jj++)
        for (int i = jj; i < rows; i++) {
            size_t o = (size_t)jj * rows + i, d = (size_t)(c0 - b0 + jj) * ld + (size_t)(c0 - b0) + i;
            double complex v = CMPLX(pre[o], f->has_im ? pim[o] : 0.0);
            if (single)
                ((float complex *)dst)[d] += (float complex)v;
            else
                ((double complex *)dst)[d] += v;
        }
}

size_t sv_sweep_lowrank_form_bytes(int n, int r)
{
    if (n < 1 || r < 1) return 0;
    size_t rr = (size_t)r * r, nr = (size_t)n * r, thr = (size_t)sv_threads_team();
    /* form_prepare's core, eigenvalues and both parts' P, P·Λ; the panels */
    return sizeof(double) * (rr + (size_t)r + 4 * nr + 2 * (size_t)n * LR_CHUNK * thr);
}

sv_status sv_sweep_lowrank_add_packed(sv_ctx *ctx, const sv_sweep_model *m, const double complex *c, int nb,
                                      int single, void *data)
{
    int n = m->n, nblk = (n + nb - 1) / nb;
    size_t esz = single ? sizeof(float complex) : sizeof(double complex);
    /* what a single-precision factorisation cannot see (its unit roundoff) */
    double drop = single ? 6e-8 : 0.0;
    for (int g = 0; g < m->ngroups; g++) {
        form_ws f;
        sv_status st = form_prepare(m, g, c, drop, &f);
        if (st) return st;
        int nthr = sv_threads_team();
        if (nthr > nblk) nthr = nblk;
        size_t psz = 2 * (size_t)n * LR_CHUNK;
        double *panels = sv_alloc(m->ctx, sizeof(double) * psz * (size_t)nthr, "low-rank panels");
        if (!panels) {
            st = sv_last_status();
            sv_free(m->ctx, f.mem);
            return st;
        }
        /* block columns in parallel, each its own, in chunks of columns; the
         * GEMMs inside run on one thread. Block column kb starts after
         * 1 − (1 − kb/nblk)² of the entries. */
        sv_progress_span outer = sv_progress_span_begin(ctx, (double)g / m->ngroups, (g + 1.0) / m->ngroups);
        sv_progress_loop loop = sv_progress_loop_begin(ctx, "forming Z(f)", 1.0);
#pragma omp parallel for num_threads(nthr) schedule(dynamic, 1)
        for (int kb = 0; kb < nblk; kb++) {
            if (sv_progress_loop_at(&loop, 1 - (1 - (double)kb / nblk) * (1 - (double)kb / nblk))) continue;
            int b0 = kb * nb, bend = b0 + nb < n ? b0 + nb : n;
            double *panel = panels + (size_t)omp_get_thread_num() * psz;
            void *dst = (char *)data + esz * sv_dense_packed_offset(n, nb, b0, b0);
            for (int c0 = b0; c0 < bend; c0 += LR_CHUNK)
                add_columns(n, &f, b0, c0, bend - c0 < LR_CHUNK ? bend - c0 : LR_CHUNK, single, dst, panel);
        }
        sv_free(m->ctx, panels);
        sv_free(m->ctx, f.mem);
        st = sv_progress_loop_end(&loop);
        sv_progress_span_end(ctx, outer);
        if (st) return st;
    }
    return SV_OK;
}

sv_status sv_sweep_lowrank_add_full(const sv_sweep_model *m, const double complex *c, double complex *z, int ldz)
{
    int n = m->n;
    for (int g = 0; g < m->ngroups; g++) {
        form_ws f;
        sv_status st = form_prepare(m, g, c, 0.0, &f);
        if (st) return st;
        double *col = sv_alloc(m->ctx, sizeof(double) * 2 * (size_t)n, "low-rank column");
        if (!col) {
            st = sv_last_status();
            sv_free(m->ctx, f.mem);
            return st;
        }
        for (int j = 0; j < n; j++) { /* column j, rows j..n-1 */
            part_panel(n, &f.re, j, n - j, 1, col);
            if (f.has_im) part_panel(n, &f.im, j, n - j, 1, col + n);
            for (int i = j; i < n; i++) z[(size_t)j * ldz + i] += CMPLX(col[i - j], f.has_im ? col[n + i - j] : 0.0);
        }
        sv_free(m->ctx, col);
        sv_free(m->ctx, f.mem);
    }
    return SV_OK;
}
