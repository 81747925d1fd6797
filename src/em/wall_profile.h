/* Thick metal: how a side wall's charge is spread over its height, and the
 * quadrature rules of the walls' integrals against that spread. */
#ifndef SV_EM_WALL_PROFILE_H
#define SV_EM_WALL_PROFILE_H

#include "em_internal.h"

/* A wall's charge density along its height, relative to its mean: of
 * u = ζ/t ∈ (0, 1], the foot's corner singularity
 *   p(u) = (2/3)·u^(−1/3),   ∫_0^1 p = 1
 * (docs/em.md, "Thick metal"). */
double sv_em_wall_profile(double u);

/* Rules for averages over the heights of one or two walls, each rule's
 * weights summing to 1 (the profile's charge, exactly):
 *   one_near, one_far   ∫ p(u)·f(u) du              nodes u ∈ (0, 1)
 *   diff                ∫∫ p(u)p(u')·f(|u − u'|)    nodes in (0, 1)
 *   sum_near, sum_far   ∫∫ p(u)p(u')·f(u + u')      nodes in (0, 2)
 * near for integrands that are singular or steep at the walls' feet (an
 * 8-point rule, SV_EM_GL_WALL; the offsets' rules end-flattened), far for
 * smooth ones (SV_EM_GL_FAR points; sums twice as many). */
typedef struct sv_em_wall_heights {
    sv_em_gl_rule one_near, one_far, diff, sum_near, sum_far;
} sv_em_wall_heights;

void sv_em_wall_heights_make(sv_em_wall_heights *h);

#endif
