/* What the single-precision factors of an exact solve are factors of: Z(f)
 * itself, or at low frequencies a matrix with the same terms and other
 * coefficients (docs/sweep.md, "Low frequencies").
 *
 * As f → 0 one term (the planar model's charge term, −j·Ψ/ω) outgrows the
 * others (jω·L, Zs·G, radiation) until single precision's roundoff of its
 * entries exceeds them: the factors then know nothing of the currents the
 * dominant term does not see (its null space, the loop currents), the
 * LDLᵀ meets a pivot below its precision and the frequency went to a double
 * factorisation. Instead the factors are made of
 *     P = Σ_{k in D} c_k·A_k + β·Σ_{k not in D} c_k·A_k,
 * D the dominant term and those whose coefficients keep a fixed ratio to
 * its own (they share its role at every frequency), β lifting the others'
 * share to SCALE_SHARE, and the refinement solves the true Z(f) with P⁻¹ as
 * its preconditioner: on the dominant term's null space Z·P⁻¹ ≈ 1/β, on its
 * range ≈ 1, two clusters flexible GMRES resolves in a few steps each. */
#include <math.h>

#include "sweep_internal.h"

/* Lift the others when their share is below SCALE_BELOW (about 170 times
 * single precision's roundoff: the plain factors then lose them or need
 * long GMRES runs, docs/sweep.md), to
 * SCALE_SHARE (far enough above the roundoff for the factors to carry them,
 * far enough below 1 for the dominant term's range to stay near 1). */
#define SCALE_BELOW 1e-5
#define SCALE_SHARE 1e-4

/* Whether c_k keeps a fixed ratio to c_d between f and f2 (a coefficient
 * that is not finite at f2 does not). */
static int in_proportion(double complex ck, double complex cd, double complex ck2, double complex cd2)
{
    return cabs(ck2 * cd - ck * cd2) <= 1e-12 * cabs(ck2 * cd);
}

/* The term with the largest |c_k|·‖A_k‖. */
static int dominant_term(const sv_sweep_model *m, const double complex *c)
{
    int d = 0;
    for (int k = 1; k < m->nterms; k++)
        if (cabs(c[k]) * m->term_norm[k] > cabs(c[d]) * m->term_norm[d]) d = k;
    return d;
}

/* The others' share of ‖Z‖: Σ|c_k|·‖A_k‖ over the terms outside the
 * dominant one's family (family[k] = 1 inside) over the same sum inside. */
static double others_share(const sv_sweep_model *m, double freq, const double complex *c, int *family)
{
    int K = m->nterms, d = dominant_term(m, c);
    double complex cd2 = m->coef(m->coef_user, d, 2 * freq);
    double inside = 0, outside = 0;
    for (int k = 0; k < K; k++) {
        family[k] = k == d || in_proportion(c[k], c[d], m->coef(m->coef_user, k, 2 * freq), cd2);
        *(family[k] ? &inside : &outside) += cabs(c[k]) * m->term_norm[k];
    }
    return outside / inside;
}

sv_status sv_sweep_precond_coefs(const sv_sweep_model *m, double freq, double complex *c, double *lift)
{
    *lift = 1;
    sv_status st = sv_sweep_model_coefs(m, freq, c);
    if (st) return st;
    int family[m->nterms];
    double share = others_share(m, freq, c, family);
    if (!(share > 0 && share < SCALE_BELOW)) return SV_OK;
    *lift = SCALE_SHARE / share;
    for (int k = 0; k < m->nterms; k++)
        if (!family[k]) c[k] *= *lift;
    return SV_OK;
}
