/* The sweep model as the device sees it: its terms (through the sweep
 * module's public accessors), with max|a_ij| of each for the pivot bound
 * and the plan's sizes; SV_ERR_UNSUPPORTED for a model the device cannot
 * form (a term of another kind, too many terms): its solver runs on the
 * CPU. */
#include <math.h>

#include "gpu_internal.h"

/* max|a_ij| of a packed term: column j of its block column is contiguous
 * from row j on. */
static double packed_maxabs(int n, int nb, const double *packed)
{
    double mx = 0;
    for (int c0 = 0; c0 < n; c0 += nb) {
        int w = n - c0 < nb ? n - c0 : nb, ld = n - c0;
        const double *blk = packed + sv_dense_packed_offset(n, nb, c0, c0);
        for (int jj = 0; jj < w; jj++)
            for (int i = jj; i < ld; i++) mx = fmax(mx, fabs(blk[(size_t)jj * ld + i]));
    }
    return mx;
}

sv_status sv_gpu_problem_from_model(const sv_sweep_model *m, sv_gpu_term_view *terms, sv_gpu_problem *p)
{
    if (!m || !terms || !p) return sv_error(SV_ERR_ARG, "model, terms or problem is NULL");
    int n = sv_sweep_model_order(m), nb = sv_sweep_model_block(m);
    p->n = n;
    p->nb = nb > 0 ? nb : 128;
    p->nterms = sv_sweep_model_nterms(m);
    p->terms = terms;
    if (p->nterms > SV_GPU_CUDA_MAX_TERMS)
        return sv_error(SV_ERR_UNSUPPORTED, "the model has %d terms: the device forms Z(f) from at most %d",
                        p->nterms, SV_GPU_CUDA_MAX_TERMS);
    for (int k = 0; k < p->nterms; k++) {
        const sv_sweep_term *t = sv_sweep_model_term(m, k);
        if (t->kind != SV_SWEEP_TERM_PACKED && t->kind != SV_SWEEP_TERM_CSR)
            return sv_error(SV_ERR_UNSUPPORTED, "term %d is of a kind (%d) the device cannot form: packed and CSR "
                                                "terms only", k, (int)t->kind);
        sv_gpu_term_view *v = &terms[k];
        *v = (sv_gpu_term_view){.kind = t->kind, .packed = t->packed, .rowptr = t->rowptr, .colind = t->colind,
                                .values = t->values};
        double mx = 0;
        if (t->kind == SV_SWEEP_TERM_PACKED) {
            mx = packed_maxabs(n, nb, t->packed);
        } else {
            v->nnz = (size_t)t->rowptr[n];
            for (size_t e = 0; e < v->nnz; e++) mx = fmax(mx, fabs(t->values[e]));
        }
        v->maxabs = mx;
    }
    return SV_OK;
}
