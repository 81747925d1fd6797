/* The planar model as the sweep engine's affine model: the one place that
 * decides which terms Z(f) = Σ c_k(f)·A_k has and what their coefficients
 * are. Everything that sweeps or solves a planar project (the tool, the
 * benchmarks, the tests, sv_em_solve) creates it here.
 *
 * The terms: jω·L, −j·Ψ/ω, Zs(f)·G when the metal is lossy, and Ψ_im/ω
 * (Ψ's imaginary part) when the dielectric is. A new physical effect is a
 * new kind of term here: assembled, described and given its coefficient. */
#include <math.h>
#include <string.h>

#include "em_internal.h"

/* The kinds of term, in the order they appear in the model. */
enum { TERM_L = 0, TERM_PSI = 1, TERM_G = 2, TERM_PSI_IM = 3, TERM_MAX = 4 };

struct sv_em_affine {
    sv_ctx *ctx;
    const sv_em_model *em;
    sv_em_stackup stackup;   /* owned copy: the coefficients read it */
    sv_dense_sym *L, *Psi;
    sv_em_csr *G;            /* NULL for lossless metal */
    sv_dense_sym *PsiI;      /* Ψ's imaginary part; NULL for a lossless dielectric */
    int nterms, kind[TERM_MAX];
    sv_sweep_model *model;
};

static int lossy_metal(const sv_em_stackup *st) { return isfinite(st->sigma); }
static int lossy_dielectric(const sv_em_stackup *st) { return st->tan_delta > 0; }

/* c_k(f) of term k at f (Hz). */
static double complex coefficient(void *user, int k, double freq_hz)
{
    const sv_em_affine *a = user;
    double w = 2 * SV_EM_PI * freq_hz;
    switch (a->kind[k]) {
    case TERM_L: return I * w;
    case TERM_PSI: return -I / w;
    case TERM_PSI_IM: return 1 / w;
    default: return sv_em_surface_impedance(a->stackup.sigma, a->stackup.t, freq_hz);
    }
}

/* The kinds of term a stack-up needs, in model order; returns their number. */
static int term_kinds(const sv_em_stackup *st, int *kind)
{
    int n = 0;
    kind[n++] = TERM_L;
    kind[n++] = TERM_PSI;
    if (lossy_metal(st)) kind[n++] = TERM_G;
    if (lossy_dielectric(st)) kind[n++] = TERM_PSI_IM;
    return n;
}

int sv_em_affine_nterms(const sv_em_model *em)
{
    if (!em) return 0;
    int kind[TERM_MAX];
    return term_kinds(&em->prj->st, kind);
}

size_t sv_em_affine_bytes(const sv_em_model *em)
{
    if (!em) return 0;
    const sv_em_stackup *st = &em->prj->st;
    size_t n = (size_t)em->n, ports = (size_t)em->prj->nports;
    size_t csr = lossy_metal(st) ? n * 7 * (sizeof(int) + sizeof(double)) + (n + 1) * sizeof(int) : 0;
    size_t packed = sv_em_assemble_bytes(em, 0) / 2 * (lossy_dielectric(st) ? 3 : 2);
    return packed + csr + n * ports * sizeof(double);
}

/* Assemble the terms' matrices (L, Ψ; G for lossy metal; Ψ_im for a lossy
 * dielectric). */
static sv_status assemble_terms(sv_em_affine *a)
{
    sv_status st = sv_em_assemble_terms(a->ctx, a->em, 0, &a->L, &a->Psi,
                                        lossy_dielectric(&a->stackup) ? &a->PsiI : NULL, NULL);
    if (!st && lossy_metal(&a->stackup)) st = sv_em_gram(a->ctx, a->em, &a->G);
    return st;
}

static sv_sweep_term packed_term(const sv_dense_sym *A)
{
    return (sv_sweep_term){.kind = SV_SWEEP_TERM_PACKED, .packed = sv_dense_sym_cdata(A), .nb = sv_dense_sym_block(A)};
}

/* The sweep's descriptions of the assembled terms (borrowed arrays). */
static void describe_terms(const sv_em_affine *a, sv_sweep_term *terms)
{
    memset(terms, 0, sizeof(sv_sweep_term) * TERM_MAX);
    for (int k = 0; k < a->nterms; k++) switch (a->kind[k]) {
        case TERM_L: terms[k] = packed_term(a->L); break;
        case TERM_PSI: terms[k] = packed_term(a->Psi); break;
        case TERM_PSI_IM: terms[k] = packed_term(a->PsiI); break;
        default:
            terms[k] = (sv_sweep_term){
                .kind = SV_SWEEP_TERM_CSR, .rowptr = a->G->rowptr, .colind = a->G->col, .values = a->G->val};
        }
}

/* The sweep model: the terms, the coefficients and the port excitations. */
static sv_status make_model(sv_em_affine *a)
{
    int n = a->em->n, p = a->em->prj->nports;
    double *b = sv_alloc(a->ctx, sizeof(double) * (size_t)n * (size_t)p, "port excitations");
    if (!b) return sv_last_status();
    sv_sweep_term terms[TERM_MAX];
    describe_terms(a, terms);
    sv_status st = sv_em_port_rhs(a->em, b, n);
    if (!st) st = sv_sweep_model_create(a->ctx, n, a->nterms, terms, coefficient, a, p, b, n, &a->model);
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
    a->nterms = term_kinds(&a->stackup, a->kind);
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
    sv_dense_sym_destroy(a->PsiI);
    sv_free(a->ctx, a);
}

const sv_sweep_model *sv_em_affine_model(const sv_em_affine *a) { return a ? a->model : NULL; }
const sv_em_model *sv_em_affine_em(const sv_em_affine *a) { return a ? a->em : NULL; }
