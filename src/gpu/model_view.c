/* The sweep model as the accelerator back end sees it: its terms, its
 * coefficients and their derivatives, its right-hand sides. This is the one
 * file of src/gpu that reads the sweep module's internal header; if the
 * sweep grows public accessors for these, only this file changes. */
#include <math.h>

#include "gpu_internal.h"
#include "sweep/sweep_internal.h"

int sv_gpu_model_nterms(const sv_sweep_model *m)
{
    return m ? m->nterms : 0;
}

sv_status sv_gpu_problem_from_model(const sv_sweep_model *m, sv_gpu_term_view *terms, sv_gpu_problem *p)
{
    if (!m || !terms || !p) return sv_error(SV_ERR_ARG, "model, terms or problem is NULL");
    p->n = m->n;
    p->nb = m->nb > 0 ? m->nb : 128;
    p->nterms = m->nterms;
    p->terms = terms;
    for (int k = 0; k < m->nterms; k++) {
        const sv_sweep_term *t = &m->terms[k];
        sv_gpu_term_view *v = &terms[k];
        v->kind = t->kind;
        v->packed = t->packed;
        v->rowptr = t->rowptr;
        v->colind = t->colind;
        v->values = t->values;
        v->nnz = 0;
        double mx = 0;
        if (t->kind == SV_SWEEP_TERM_PACKED) {
            /* column j of its block column is contiguous from row j on */
            int n = m->n, nb = m->nb;
            for (int c0 = 0; c0 < n; c0 += nb) {
                int w = n - c0 < nb ? n - c0 : nb, ld = n - c0;
                const double *blk = t->packed + sv_dense_packed_offset(n, nb, c0, c0);
                for (int jj = 0; jj < w; jj++)
                    for (int i = jj; i < ld; i++) mx = fmax(mx, fabs(blk[(size_t)jj * ld + i]));
            }
        } else {
            v->nnz = (size_t)t->rowptr[m->n];
            for (size_t e = 0; e < v->nnz; e++) mx = fmax(mx, fabs(t->values[e]));
        }
        v->maxabs = mx;
    }
    return SV_OK;
}

sv_status sv_gpu_model_coefs(const sv_sweep_model *m, double freq, double complex *c)
{
    return sv_sweep_coefs(m, freq, c);
}

sv_status sv_gpu_model_coef_derivs(const sv_sweep_model *m, double freq, double complex *d1, double complex *d2,
                                   double complex *d3)
{
    return sv_sweep_coef_derivs(m, freq, d1, d2, d3);
}

const double *sv_gpu_model_rhs(const sv_sweep_model *m)
{
    return m->b;
}

sv_status sv_gpu_model_refine_block(sv_ctx *ctx, const sv_sweep_model *m, double freq, int nd,
                                    sv_status (*products)(void *, int, const double *, double *),
                                    sv_status (*solve)(void *, int, double complex *, int), void *user, double tol,
                                    int maxit, double complex *x, int ldx, double complex *dx, int lddx, double *berr,
                                    int *its)
{
    sv_sweep_refine_ops ops = {.products = products, .solve = solve, .user = user};
    double complex *b = sv_alloc(ctx, sizeof(double complex) * (size_t)m->n * (size_t)m->nrhs, "right-hand sides");
    if (!b) return sv_last_status();
    for (size_t i = 0; i < (size_t)m->n * (size_t)m->nrhs; i++) b[i] = m->b[i];
    sv_status st = sv_sweep_refine_block(ctx, m, freq, nd, &ops, b, x, ldx, dx, lddx, tol, tol, maxit, berr, its);
    sv_free(ctx, b);
    return st;
}
