/* The planar model as the sweep engine's affine model: the one place that
 * decides which terms Z(f) = Σ c_k(f)·A_k has and what their coefficients
 * are. Everything that sweeps or solves a planar project (the tool, the
 * benchmarks, the tests, sv_em_solve) creates it here.
 *
 * The terms: jω·L, −j·Ψ/ω, Zs(f)·G when the metal is lossy, and Ψ_im/ω
 * (Ψ's imaginary part: the dielectric's conductance) when the substrate is.
 * A new physical effect is a new entry of the term enum and a new case in
 * each function of the first section below (docs/em.md, "Adding a term"). */
#include <math.h>
#include <string.h>

#include "em_internal.h"

enum { TERM_L = 0, TERM_PSI = 1, TERM_G = 2, TERM_PSI_IM = 3, TERM_MAX = 4 };

struct sv_em_affine {
    sv_ctx *ctx;
    const sv_em_model *em;
    sv_em_stackup stackup;       /* owned copy: the coefficients read it */
    int nterms;
    int kind[TERM_MAX];          /* the physical term (TERM_*) of each model term */
    sv_dense_sym *L, *Psi;
    sv_em_csr *G;                /* NULL for lossless metal */
    sv_dense_sym *PsiI;          /* Ψ's imaginary part (exact dielectric loss), else NULL */
    double loss_ratio;           /* otherwise Ψ_im ≈ loss_ratio·Ψ (0 for a lossless dielectric) */
    sv_sweep_term term[TERM_MAX]; /* the sweep's descriptions (arrays borrowed from above) */
    sv_sweep_model *model;
};

/* ---- the physical terms: everything that knows what Z(f) is made of ---- */

/* Whether the stack-up has the physical term t. */
static int has_term(const sv_em_stackup *st, int t)
{
    if (t == TERM_G) return isfinite(st->sigma);
    if (t == TERM_PSI_IM) return st->tan_delta > 0 && st->exact_dielectric_loss;
    return 1;
}

/* Bytes term t's matrix holds. */
static size_t term_bytes(const sv_em_model *em, int t)
{
    switch (t) {
    case TERM_L: return sv_em_assemble_bytes(em, 0) / 2;
    case TERM_PSI:
    case TERM_PSI_IM: return sv_em_assemble_bytes(em, 0) / 2;
    default: return sv_em_gram_bytes(em);
    }
}

/* c(f) of physical term t at f (Hz); Ψ's carries the dielectric's loss as
 * its ratio r when Ψ_im is not a term of its own: (r − j)/ω. */
static double complex term_coefficient(const sv_em_stackup *st, double ratio, int t, double freq_hz)
{
    double w = 2 * SV_EM_PI * freq_hz;
    switch (t) {
    case TERM_L: return I * w;
    case TERM_PSI: return (ratio - I) / w;
    case TERM_PSI_IM: return 1 / w;
    default: return sv_em_surface_impedance(st->sigma, st->t, freq_hz);
    }
}

/* Assemble the matrices of the terms the stack-up has. */
static sv_status assemble_terms(sv_em_affine *a)
{
    sv_status st = sv_em_assemble_terms(a->ctx, a->em, 0, &a->L, &a->Psi,
                                        has_term(&a->stackup, TERM_PSI_IM) ? &a->PsiI : NULL, NULL);
    if (!st && has_term(&a->stackup, TERM_G)) st = sv_em_gram(a->ctx, a->em, &a->G);
    return st;
}

/* The sweep's description of physical term t (arrays borrowed from a). */
static sv_sweep_term describe_term(const sv_em_affine *a, int t)
{
    const sv_dense_sym *packed = t == TERM_L ? a->L : t == TERM_PSI ? a->Psi : a->PsiI;
    if (t == TERM_G)
        return (sv_sweep_term){
            .kind = SV_SWEEP_TERM_CSR, .rowptr = a->G->rowptr, .colind = a->G->col, .values = a->G->val};
    return (sv_sweep_term){
        .kind = SV_SWEEP_TERM_PACKED, .packed = sv_dense_sym_cdata(packed), .nb = sv_dense_sym_block(packed)};
}

/* ---- the object ---- */

/* The sweep model's coefficient callback: model term k. */
static double complex coefficient(void *user, int k, double freq_hz)
{
    const sv_em_affine *a = user;
    return term_coefficient(&a->stackup, a->loss_ratio, a->kind[k], freq_hz);
}

int sv_em_affine_nterms(const sv_em_model *em)
{
    if (!em) return 0;
    int n = 0;
    for (int t = 0; t < TERM_MAX; t++) n += has_term(&em->prj->st, t);
    return n;
}

size_t sv_em_affine_bytes(const sv_em_model *em)
{
    if (!em) return 0;
    size_t bytes = (size_t)em->n * (size_t)em->prj->nports * sizeof(double); /* the model's copy of B */
    for (int t = 0; t < TERM_MAX; t++)
        if (has_term(&em->prj->st, t)) bytes += term_bytes(em, t);
    return bytes;
}

/* The model's terms: those the stack-up has, in enum order. */
static void describe_terms(sv_em_affine *a)
{
    a->nterms = 0;
    for (int t = 0; t < TERM_MAX; t++)
        if (has_term(&a->stackup, t)) {
            a->kind[a->nterms] = t;
            a->term[a->nterms++] = describe_term(a, t);
        }
}

/* The sweep model: the terms, the coefficients and the port excitations. */
static sv_status make_model(sv_em_affine *a)
{
    int n = a->em->n, p = a->em->prj->nports;
    double *b = sv_alloc(a->ctx, sizeof(double) * (size_t)n * (size_t)p, "port excitations");
    if (!b) return sv_last_status();
    describe_terms(a);
    sv_status st = sv_em_port_rhs(a->em, b, n);
    if (!st) st = sv_sweep_model_create(a->ctx, n, a->nterms, a->term, coefficient, a, p, b, n, &a->model);
    sv_free(a->ctx, b); /* the model keeps its own copy */
    return st;
}

sv_status sv_em_affine_create(sv_ctx *ctx, const sv_em_model *em, sv_em_affine **out)
{
    if (!out) return sv_error(SV_ERR_ARG, "sv_em_affine_create: out is NULL");
    *out = NULL;
    if (!em) return sv_error(SV_ERR_ARG, "sv_em_affine_create: em is NULL");
    sv_em_affine *a = sv_calloc(ctx, 1, sizeof(*a), "planar affine model");
    if (!a) return sv_last_status();
    a->ctx = ctx;
    a->em = em;
    sv_em_project_stackup(em->prj, &a->stackup);
    sv_status st = SV_OK;
    if (a->stackup.tan_delta > 0 && !has_term(&a->stackup, TERM_PSI_IM))
        st = sv_em_dielectric_ratio(ctx, em, &a->loss_ratio);
    if (!st) st = assemble_terms(a);
    if (!st) st = make_model(a);
    if (st)
        sv_em_affine_destroy(a); /* what was made so far */
    else
        *out = a;
    return st;
}

void sv_em_affine_destroy(sv_em_affine *a)
{
    if (!a) return;
    sv_sweep_model_destroy(a->model);
    sv_em_csr_destroy(a->G);
    sv_dense_sym_destroy(a->L);
    sv_dense_sym_destroy(a->Psi);
    sv_dense_sym_destroy(a->PsiI);
    sv_free(a->ctx, a);
}

const sv_sweep_model *sv_em_affine_model(const sv_em_affine *a) { return a ? a->model : NULL; }
const sv_em_model *sv_em_affine_em(const sv_em_affine *a) { return a ? a->em : NULL; }

sv_status sv_em_affine_term(const sv_em_affine *a, int k, sv_sweep_term *out)
{
    if (!a || !out) return sv_error(SV_ERR_ARG, "sv_em_affine_term: NULL argument");
    if (k < 0 || k >= a->nterms)
        return sv_error(SV_ERR_ARG, "sv_em_affine_term: k = %d: expected 0 to %d", k, a->nterms - 1);
    *out = a->term[k];
    return SV_OK;
}

double complex sv_em_affine_coefficient(const sv_em_affine *a, int k, double freq_hz)
{
    if (!a || k < 0 || k >= a->nterms) return NAN;
    return term_coefficient(&a->stackup, a->loss_ratio, a->kind[k], freq_hz);
}
