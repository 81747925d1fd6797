/* The planar model as the sweep engine's affine model: the one place that
 * decides which terms Z(f) = Σ c_k(f)·A_k has and what their coefficients
 * are. Everything that sweeps or solves a planar project (the tool, the
 * benchmarks, the tests, sv_em_solve) creates it here.
 *
 * The terms: jω·L, −j·Ψ/ω, Zs(f)·G when the metal is lossy, Ψ_im/ω (Ψ's
 * imaginary part: the dielectric's conductance) when the substrate is,
 * jω·k0²·L₂ and the far field's jω·k0·w_m(k0)·T_m (dispersion.c,
 * dispersion_far.c) when the project asks for dispersion, and
 * the radiation terms c_j(f)·U·W_j·Uᵀ (radiation.c) unless the project
 * switches them off. A new physical effect is a new entry of the term enum
 * and a new case in each function of the first section below (docs/em.md,
 * "Adding a term"); an effect may give several model terms (radiation gives
 * J of them). */
#include <math.h>
#include <string.h>

#include "em_internal.h"

enum { TERM_L = 0, TERM_PSI = 1, TERM_G = 2, TERM_PSI_IM = 3, TERM_DISP = 4, TERM_RAD = 5, TERM_MAX = 6 };
#define MODEL_TERMS_MAX (TERM_MAX - 2 + SV_EM_RAD_MAX_TERMS + 1 + SV_EM_DISP_FAR_MAX)

/* Rough costs of the model's steps in units of the assembly of L and Ψ
 * (their shares of its progress; docs/em.md, "Progress and cancellation"):
 * G, each of dispersion's terms, the dielectric's loss ratio, the sweep
 * model (its terms' norms). */
#define WORK_G 0.01
#define WORK_DISP 0.5
#define WORK_LOSS_RATIO 0.05
#define WORK_MODEL 0.35

struct sv_em_affine {
    sv_ctx *ctx;
    const sv_em_model *em;
    sv_em_stackup stackup;       /* owned copy: the coefficients read it */
    int nterms;
    int kind[MODEL_TERMS_MAX];   /* the physical term (TERM_*) of each model term */
    int sub[MODEL_TERMS_MAX];    /* which of its model terms (radiation's j) */
    sv_dense_sym *L, *Psi;
    sv_em_csr *G;                /* NULL for lossless metal */
    sv_dense_sym *PsiI;          /* Ψ's imaginary part (exact dielectric loss), else NULL */
    sv_dense_sym *disp[1 + SV_EM_DISP_FAR_MAX]; /* dispersion: L₂ (the current's first-order k0² change) and
                                                 * the far field's terms; NULL without it */
    double loss_ratio;           /* otherwise Ψ_im ≈ loss_ratio·Ψ (0 for a lossless dielectric) */
    const sv_em_radiation *rad;  /* the mesh's (borrowed; NULL when radiation is off): low-rank terms */
    sv_sweep_term term[MODEL_TERMS_MAX]; /* the sweep's descriptions (arrays borrowed from above) */
    sv_sweep_model *model;
};

/* ---- the physical terms: everything that knows what Z(f) is made of ---- */

/* How many model terms physical term t gives (0: the project has not got it). */
static int term_count(const sv_em_model *em, int t)
{
    const sv_em_stackup *st = &em->prj->st;
    switch (t) {
    case TERM_G: return isfinite(st->sigma);
    case TERM_PSI_IM: return st->tan_delta > 0 && st->exact_dielectric_loss;
    case TERM_DISP: return sv_em_dispersion_terms(em);
    case TERM_RAD: return sv_em_radiation_terms(em->rad);
    default: return 1;
    }
}

/* Bytes term t's matrices hold. */
static size_t term_bytes(const sv_em_model *em, int t)
{
    switch (t) {
    case TERM_L: return sv_em_assemble_bytes(em, 0) / 2;
    case TERM_PSI:
    case TERM_PSI_IM: return sv_em_assemble_bytes(em, 0) / 2;
    case TERM_G: return sv_em_gram_bytes(em);
    case TERM_DISP: return sv_em_dispersion_bytes(em);
    default: return 0; /* the mesh's (sv_em_model_create) */
    }
}

/* The rough cost of assembling term t, in units of the assembly of L and
 * Ψ (its share of sv_em_affine_create's progress; 0 when absent). */
static double term_work(const sv_em_model *em, int t)
{
    switch (t) {
    case TERM_L: return 1; /* L, Ψ and Ψ_im in one assembly */
    case TERM_G: return term_count(em, TERM_G) * WORK_G;
    case TERM_DISP: return term_count(em, TERM_DISP) * WORK_DISP;
    default: return 0; /* Ψ, Ψ_im: with L; radiation: the mesh's */
    }
}

/* c(f) of model term j of physical term t at f (Hz); Ψ's carries the
 * dielectric's loss as its ratio r when Ψ_im is not a term of its own:
 * (r − j)/ω. */
static double complex term_coefficient(const sv_em_affine *a, int t, int j, double freq_hz)
{
    double w = 2 * SV_EM_PI * freq_hz;
    switch (t) {
    case TERM_L: return I * w;
    case TERM_PSI: return (a->loss_ratio - I) / w;
    case TERM_PSI_IM: return 1 / w;
    case TERM_DISP: return sv_em_dispersion_coef(a->em, j, freq_hz);
    case TERM_G: return sv_em_surface_impedance(a->stackup.sigma, a->stackup.t, freq_hz);
    default: return sv_em_radiation_coef(a->rad, j, freq_hz);
    }
}

/* Assemble the matrices of the terms the project has, each as its part of
 * the progress. */
static sv_status assemble_terms(sv_em_affine *a, sv_em_parts *parts)
{
    sv_em_part(parts, term_work(a->em, TERM_L));
    sv_status st = sv_em_assemble_with(a->ctx, a->em, 0, NULL, &a->L, &a->Psi,
                                       term_count(a->em, TERM_PSI_IM) ? &a->PsiI : NULL, NULL);
    sv_em_part(parts, term_work(a->em, TERM_G));
    if (!st && term_count(a->em, TERM_G)) st = sv_em_gram(a->ctx, a->em, &a->G);
    sv_em_part(parts, term_work(a->em, TERM_DISP));
    if (!st && term_count(a->em, TERM_DISP)) st = sv_em_dispersion_assemble(a->ctx, a->em, a->L, a->disp);
    a->rad = a->em->rad;
    return st;
}

/* The sweep's description of model term j of physical term t (arrays
 * borrowed from a). */
static sv_sweep_term describe_term(const sv_em_affine *a, int t, int j)
{
    const sv_dense_sym *packed = t == TERM_L ? a->L : t == TERM_PSI ? a->Psi : t == TERM_DISP ? a->disp[j] : a->PsiI;
    if (t == TERM_G)
        return (sv_sweep_term){
            .kind = SV_SWEEP_TERM_CSR, .rowptr = a->G->rowptr, .colind = a->G->col, .values = a->G->val};
    if (t == TERM_RAD) {
        int rank;
        const double *u = sv_em_radiation_basis(a->rad, &rank);
        return (sv_sweep_term){
            .kind = SV_SWEEP_TERM_LOWRANK, .u = u, .rank = rank, .core = sv_em_radiation_core(a->rad, j)};
    }
    return (sv_sweep_term){
        .kind = SV_SWEEP_TERM_PACKED, .packed = sv_dense_sym_cdata(packed), .nb = sv_dense_sym_block(packed)};
}

/* ---- the object ---- */

/* The sweep model's coefficient callback: model term k. */
static double complex coefficient(void *user, int k, double freq_hz)
{
    const sv_em_affine *a = user;
    return term_coefficient(a, a->kind[k], a->sub[k], freq_hz);
}

int sv_em_affine_nterms(const sv_em_model *em)
{
    sv_sweep_shape shape;
    sv_em_affine_shape(em, &shape);
    return shape.nterms;
}

void sv_em_affine_shape(const sv_em_model *em, sv_sweep_shape *shape)
{
    *shape = (sv_sweep_shape){0};
    if (!em) return;
    for (int t = 0; t < TERM_MAX; t++) shape->nterms += term_count(em, t);
    shape->lowrank = term_count(em, TERM_RAD);
    if (shape->lowrank) sv_em_radiation_basis(em->rad, &shape->lowrank_cols);
}

size_t sv_em_affine_bytes(const sv_em_model *em)
{
    if (!em) return 0;
    size_t bytes = (size_t)em->n * (size_t)em->prj->nports * sizeof(double); /* the model's copy of B */
    for (int t = 0; t < TERM_MAX; t++)
        if (term_count(em, t)) bytes += term_bytes(em, t);
    return bytes;
}

/* The model's terms: those the project has, in enum order. */
static void describe_terms(sv_em_affine *a)
{
    a->nterms = 0;
    for (int t = 0; t < TERM_MAX; t++)
        for (int j = 0; j < term_count(a->em, t); j++) {
            a->kind[a->nterms] = t;
            a->sub[a->nterms] = j;
            a->term[a->nterms++] = describe_term(a, t, j);
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

/* The steps of sv_em_affine_create, each as its part of the progress:
 * the dielectric's loss ratio (when Ψ carries the loss), the terms, the
 * sweep model. */
static sv_status create_steps(sv_em_affine *a)
{
    const sv_em_model *em = a->em;
    int ratio = a->stackup.tan_delta > 0 && !term_count(em, TERM_PSI_IM);
    double total = (ratio ? WORK_LOSS_RATIO : 0) + WORK_MODEL;
    for (int t = 0; t < TERM_MAX; t++) total += term_work(em, t);
    sv_em_parts parts = sv_em_parts_begin(a->ctx, total);
    sv_em_part(&parts, ratio ? WORK_LOSS_RATIO : 0);
    sv_status st = ratio ? sv_em_dielectric_ratio(a->ctx, em, &a->loss_ratio) : SV_OK;
    if (!st) st = assemble_terms(a, &parts);
    sv_em_part(&parts, WORK_MODEL);
    if (!st) st = make_model(a);
    sv_em_parts_end(&parts);
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
    sv_progress_span op = sv_progress_span_begin(ctx, 0, 1);
    sv_status st = create_steps(a);
    if (!st) st = sv_progress(ctx, "model terms", 1.0);
    sv_progress_span_end(ctx, op);
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
    for (int j = 0; j < 1 + SV_EM_DISP_FAR_MAX; j++) sv_dense_sym_destroy(a->disp[j]);
    sv_free(a->ctx, a);
}

const sv_sweep_model *sv_em_affine_model(const sv_em_affine *a) { return a ? a->model : NULL; }
const sv_em_model *sv_em_affine_em(const sv_em_affine *a) { return a ? a->em : NULL; }
int sv_em_affine_radiates(const sv_em_affine *a) { return a && a->rad; }
int sv_em_affine_disperses(const sv_em_affine *a) { return a && a->disp[0]; }
double sv_em_model_limit_hz(const sv_em_model *m) { return m ? sv_em_radiation_limit_hz(m) : 0; }

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
    return term_coefficient(a, a->kind[k], a->sub[k], freq_hz);
}

/* ---- the charge terms (the low-frequency path, lowfreq.c) ---- */

int sv_em_affine_is_charge(const sv_em_affine *a, int k)
{
    return a && k >= 0 && k < a->nterms && (a->kind[k] == TERM_PSI || a->kind[k] == TERM_PSI_IM);
}

/* ω·c_k(f) of a charge term, without the division by ω (finite as f → 0). */
double complex sv_em_affine_charge_coefficient(const sv_em_affine *a, int k)
{
    return a->kind[k] == TERM_PSI ? a->loss_ratio - I : 1;
}

double sv_em_affine_others_share(const sv_em_affine *a, double freq_hz)
{
    double w = 2 * SV_EM_PI * freq_hz, charge = 0, others = 0;
    for (int k = 0; k < a->nterms; k++) {
        double norm = sv_sweep_model_term_norm(a->model, k);
        if (sv_em_affine_is_charge(a, k))
            charge += cabs(sv_em_affine_charge_coefficient(a, k)) * norm; /* ω·share */
        else
            others += w * cabs(term_coefficient(a, a->kind[k], a->sub[k], freq_hz)) * norm;
    }
    return charge > 0 ? others / charge : INFINITY;
}
