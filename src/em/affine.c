/* The planar model as the sweep engine's affine model: the one place that
 * decides which terms Z(f) = Σ c_k(f)·A_k has and what their coefficients
 * are. Everything that sweeps or solves a planar project (the tool, the
 * benchmarks, the tests, sv_em_solve) creates it here.
 *
 * Terms: jω·L, −j·Ψ/ω, Zs(f)·G when the metal is lossy, and the radiation
 * terms c_j(f)·A_j (radiation.c) unless the project switches them off. A
 * new physical effect is a new entry in assemble_terms, describe_terms and
 * coefficient. */
#include <math.h>
#include <string.h>

#include "em_internal.h"

struct sv_em_affine {
    sv_ctx *ctx;
    const sv_em_model *em;
    sv_em_stackup stackup;   /* owned copy: the coefficients read it */
    sv_dense_sym *L, *Psi;
    sv_em_csr *G;            /* NULL for lossless metal */
    sv_em_radiation *rad;    /* NULL when radiation is off */
    sv_dense_sym **rad_packed; /* its terms, expanded (until the sweep takes low-rank terms) */
    int first_rad;           /* index of the first radiation term */
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
    default:
        if (k >= a->first_rad) return sv_em_radiation_coef(a->rad, k - a->first_rad, freq_hz);
        return sv_em_surface_impedance(a->stackup.sigma, a->stackup.t, freq_hz);
    }
}

/* The radiation terms a model will get (0 when switched off), built and
 * dropped: their count comes from the band compression of the mesh's own
 * moments. */
static int radiation_terms(const sv_em_model *em)
{
    if (!em->prj->radiation) return 0;
    sv_em_radiation *r = NULL;
    if (sv_em_radiation_create(em->ctx, em, sv_em_radiation_design_hz(em), sv_em_radiation_tolerance(em), &r))
        return 0;
    int j = sv_em_radiation_terms(r);
    sv_em_radiation_destroy(r);
    return j;
}

int sv_em_affine_nterms(const sv_em_model *em)
{
    if (!em) return 0;
    sv_em_stackup st;
    sv_em_project_stackup(em->prj, &st);
    return (lossy(&st) ? 3 : 2) + radiation_terms(em);
}

size_t sv_em_affine_bytes(const sv_em_model *em)
{
    if (!em) return 0;
    size_t n = (size_t)em->n, ports = (size_t)em->prj->nports;
    sv_em_stackup st;
    sv_em_project_stackup(em->prj, &st);
    size_t csr = lossy(&st) ? n * 7 * (sizeof(int) + sizeof(double)) + (n + 1) * sizeof(int) : 0;
    size_t rad = (size_t)radiation_terms(em) * sv_dense_sym_bytes(em->n, SV_DENSE_R64, 0);
    return sv_em_assemble_bytes(em, 0) + csr + rad + n * ports * sizeof(double);
}

/* Assemble the terms' matrices (L, Ψ; G when lossy; radiation). */
static sv_status assemble_terms(sv_em_affine *a)
{
    sv_status st = sv_em_assemble(a->ctx, a->em, 0, &a->L, &a->Psi, NULL);
    if (!st && lossy(&a->stackup)) st = sv_em_gram(a->ctx, a->em, &a->G);
    a->first_rad = a->G ? 3 : 2;
    if (!st && a->em->prj->radiation)
        st = sv_em_radiation_terms_packed(a->ctx, a->em, sv_dense_sym_block(a->L), &a->rad, &a->rad_packed);
    return st;
}

/* The sweep's descriptions of the assembled terms (borrowed arrays). */
static int describe_terms(const sv_em_affine *a, sv_sweep_term *terms)
{
    int nrad = sv_em_radiation_terms(a->rad);
    memset(terms, 0, sizeof(sv_sweep_term) * (size_t)(a->first_rad + nrad));
    for (int j = 0; j < nrad; j++)
        terms[a->first_rad + j] = (sv_sweep_term){.kind = SV_SWEEP_TERM_PACKED,
                                                  .packed = sv_dense_sym_cdata(a->rad_packed[j]),
                                                  .nb = sv_dense_sym_block(a->rad_packed[j])};
    terms[TERM_L] = (sv_sweep_term){.kind = SV_SWEEP_TERM_PACKED,
                                    .packed = sv_dense_sym_cdata(a->L),
                                    .nb = sv_dense_sym_block(a->L)};
    terms[TERM_PSI] = (sv_sweep_term){.kind = SV_SWEEP_TERM_PACKED,
                                      .packed = sv_dense_sym_cdata(a->Psi),
                                      .nb = sv_dense_sym_block(a->Psi)};
    if (a->G)
        terms[TERM_G] = (sv_sweep_term){
            .kind = SV_SWEEP_TERM_CSR, .rowptr = a->G->rowptr, .colind = a->G->col, .values = a->G->val};
    return a->first_rad + nrad;
}

/* The sweep model: the terms, the coefficients and the port excitations. */
static sv_status make_model(sv_em_affine *a)
{
    int n = a->em->n, p = a->em->prj->nports;
    double *b = sv_alloc(a->ctx, sizeof(double) * (size_t)n * (size_t)p, "port excitations");
    if (!b) return sv_last_status();
    sv_sweep_term terms[3 + SV_EM_RAD_MAX_TERMS];
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
    for (int j = 0; a->rad_packed && j < sv_em_radiation_terms(a->rad); j++) sv_dense_sym_destroy(a->rad_packed[j]);
    sv_free(a->ctx, a->rad_packed);
    sv_em_radiation_destroy(a->rad);
    sv_dense_sym_destroy(a->L);
    sv_dense_sym_destroy(a->Psi);
    sv_free(a->ctx, a);
}

const sv_sweep_model *sv_em_affine_model(const sv_em_affine *a) { return a ? a->model : NULL; }
const sv_em_model *sv_em_affine_em(const sv_em_affine *a) { return a ? a->em : NULL; }
int sv_em_affine_radiates(const sv_em_affine *a) { return a && a->rad; }
double sv_em_model_limit_hz(const sv_em_model *m) { return m ? sv_em_radiation_limit_hz(m) : 0; }
