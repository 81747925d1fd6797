/* The planar model as the sweep engine's affine model: the one place that
 * decides which terms Z(f) = Σ c_k(f)·A_k has and what their coefficients
 * are. Everything that sweeps or solves a planar project (the tool, the
 * benchmarks, the tests, sv_em_solve) creates it here.
 *
 * Today's terms: jω·L, −j·Ψ/ω, and Zs(f)·G when the metal is lossy. A new
 * physical effect is a new entry in build_terms and in coefficient. */
#include <math.h>
#include <string.h>

#include "em_internal.h"

struct sv_em_affine {
    sv_ctx *ctx;
    const sv_em_model *em;
    sv_em_stackup stackup;   /* owned copy: the coefficients read it */
    sv_dense_sym *L, *Psi;
    sv_em_csr *G;            /* NULL for lossless metal */
    sv_sweep_model *model;
};

enum { TERM_L = 0, TERM_PSI = 1, TERM_G = 2 };

static int lossy(const sv_em_stackup *st) { return isfinite(st->sigma); }

/* c_k(f) of term k at f (Hz). */
static double complex coefficient(void *user, int k, double freq_hz)
{
    const sv_em_affine *a = user;
    double w = 2 * SV_EM_PI * freq_hz;
    switch (k) {
    case TERM_L: return I * w;
    case TERM_PSI: return -I / w;
    default: return sv_em_surface_impedance(a->stackup.sigma, a->stackup.t, freq_hz);
    }
}

int sv_em_affine_nterms(const sv_em_model *em)
{
    if (!em) return 0;
    sv_em_stackup st;
    sv_em_project_stackup(em->prj, &st);
    return lossy(&st) ? 3 : 2;
}

size_t sv_em_affine_bytes(const sv_em_model *em)
{
    if (!em) return 0;
    size_t n = (size_t)em->n, ports = (size_t)em->prj->nports;
    size_t csr = sv_em_affine_nterms(em) > 2 ? n * 7 * (sizeof(int) + sizeof(double)) + (n + 1) * sizeof(int) : 0;
    return sv_em_assemble_bytes(em, 0) + csr + n * ports * sizeof(double);
}

/* Assemble the terms' matrices (L, Ψ; G when lossy). */
static sv_status assemble_terms(sv_em_affine *a)
{
    sv_status st = sv_em_assemble(a->ctx, a->em, 0, &a->L, &a->Psi, NULL);
    if (!st && lossy(&a->stackup)) st = sv_em_gram(a->ctx, a->em, &a->G);
    return st;
}

/* The sweep's descriptions of the assembled terms (borrowed arrays). */
static int describe_terms(const sv_em_affine *a, sv_sweep_term *terms)
{
    memset(terms, 0, sizeof(sv_sweep_term) * 3);
    terms[TERM_L] = (sv_sweep_term){.kind = SV_SWEEP_TERM_PACKED,
                                    .packed = sv_dense_sym_cdata(a->L),
                                    .nb = sv_dense_sym_block(a->L)};
    terms[TERM_PSI] = (sv_sweep_term){.kind = SV_SWEEP_TERM_PACKED,
                                      .packed = sv_dense_sym_cdata(a->Psi),
                                      .nb = sv_dense_sym_block(a->Psi)};
    if (!a->G) return 2;
    terms[TERM_G] = (sv_sweep_term){
        .kind = SV_SWEEP_TERM_CSR, .rowptr = a->G->rowptr, .colind = a->G->col, .values = a->G->val};
    return 3;
}

/* The sweep model: the terms, the coefficients and the port excitations. */
static sv_status make_model(sv_em_affine *a)
{
    int n = a->em->n, p = a->em->prj->nports;
    double *b = sv_alloc(a->ctx, sizeof(double) * (size_t)n * (size_t)p, "port excitations");
    if (!b) return sv_last_status();
    sv_sweep_term terms[3];
    int nterms = describe_terms(a, terms);
    sv_status st = sv_em_port_rhs(a->em, b, n);
    if (!st) st = sv_sweep_model_create(a->ctx, n, nterms, terms, coefficient, a, p, b, n, &a->model);
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
    sv_status st = assemble_terms(a);
    if (!st) st = make_model(a);
    if (st) {
        sv_em_affine_destroy(a);
        return st;
    }
    *out = a;
    return SV_OK;
}

void sv_em_affine_destroy(sv_em_affine *a)
{
    if (!a) return;
    sv_sweep_model_destroy(a->model);
    sv_em_csr_destroy(a->G);
    sv_dense_sym_destroy(a->L);
    sv_dense_sym_destroy(a->Psi);
    sv_free(a->ctx, a);
}

const sv_sweep_model *sv_em_affine_model(const sv_em_affine *a) { return a ? a->model : NULL; }
const sv_em_model *sv_em_affine_em(const sv_em_affine *a) { return a ? a->em : NULL; }
