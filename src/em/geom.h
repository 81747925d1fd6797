/* Geometry helpers shared by the assembly and the naive reference. */
#ifndef SV_EM_GEOM_H
#define SV_EM_GEOM_H

#include "em_internal.h"

/* Quadrature orders (Gauss–Legendre per interval, docs/em.md): near pairs,
 * and pairs beyond the far distance (smooth integrands). */
#define SV_EM_GL_NEAR 16
#define SV_EM_GL_FAR 4
/* Cell (and rooftop) pairs, by Chebyshev distance in cells, whose
 * coefficients thick metal's side walls change (walls.c,
 * sv_em_walls_range): SV_EM_WALL_REACH·√(t·h) — beyond it the walls' raised
 * charge and current change a line's L and 1/C by about t·h/D² of them —
 * in cells, at least SV_EM_WALL_RANGE_MIN, at most SV_EM_WALL_RANGE_MAX. */
#define SV_EM_WALL_REACH 6.0
#define SV_EM_WALL_RANGE_MIN 6
#define SV_EM_WALL_RANGE_MAX 48
/* Gauss–Legendre points (end-flattened) of the walls' integrals over their
 * height and along rooftops: they are corrections of a few per cent. */
#define SV_EM_GL_WALL 8
/* Gauss–Legendre points (end-flattened) of the edge profile's changes of L
 * for pairs with a port half rooftop (edges.c), on both levels of their
 * nested quadrature: a change is the difference of two sums by one rule,
 * whose errors largely cancel (against 16 points: 1e-7–1e-5 of the change,
 * a quarter of the closed forms; docs/em.md). */
#define SV_EM_GL_EDGE 8
_Static_assert(SV_EM_GL_NEAR <= SV_EM_GL_MAX && SV_EM_GL_FAR <= SV_EM_GL_MAX && SV_EM_GL_WALL <= SV_EM_GL_MAX &&
                   SV_EM_GL_EDGE <= SV_EM_GL_MAX,
               "the model's rules fit sv_em_gl_rule");

/* The current profile of one unknown for L. */
typedef struct sv_em_profile_t {
    int axis;        /* 0 x-directed, 1 y-directed */
    int sign;        /* +1, or −1 for right/top port half rooftops */
    int half;        /* 0 rooftop; +1 half rooftop into +axis from e; −1 into −axis */
    double e;        /* m: the rooftop's edge, or the port edge */
    double d;        /* m: cell length along the axis */
    double t1, t2;   /* m: cell extent across the axis */
} sv_em_profile_t;

void sv_em_profile(const sv_em_model *m, int q, sv_em_profile_t *p);
/* The same with the grid's origin moved to cell (i0, j0): the coordinates
 * from the integer offsets, so a pair's profiles relative to one of them
 * are the same numbers wherever the pair sits. */
void sv_em_profile_from(const sv_em_model *m, int q, int i0, int j0, sv_em_profile_t *p);
/* Cells where unknown q has divergence (±1/(dx·dy)); returns 1 or 2. */
int sv_em_div_cells(const sv_em_model *m, int q, int ci[2], int cj[2], int sg[2]);
/* Galerkin L between two profiles (H); exact = 1 forces the closed forms
 * (no far-field form, near quadrature order everywhere). */
double sv_em_L_profiles(const sv_em_model *m, const sv_em_profile_t *a, const sv_em_profile_t *b, int exact);
/* L between the sub-strips of two profiles cut across: a's u (across
 * [ta[u], ta[u+1]], u < na) and b's v, for every pair, into out[u·nb + v]:
 * sv_em_L_profiles of each pair, to the bit, with the closed form's values
 * that pairs share computed once (na, nb ≤ SV_EM_STRIPS_MAX). */
#define SV_EM_STRIPS_MAX 8
void sv_em_L_strips(const sv_em_model *m, const sv_em_profile_t *a, const double *ta, int na,
                    const sv_em_profile_t *b, const double *tb, int nb, int exact, double *out);
/* The same with `near` instead of the near rule for the pairs with a half
 * rooftop (their nested quadrature; rooftop pairs keep the near rule). */
void sv_em_L_strips_rule(const sv_em_model *m, const sv_em_gl_rule *near, const sv_em_profile_t *a, const double *ta,
                         int na, const sv_em_profile_t *b, const double *tb, int nb, int exact, double *out);
/* L between two parallel rooftops of one axis whose cells are (di, dj)
 * cells apart (the assembly's tables). */
double sv_em_L_rooftops(const sv_em_model *m, int axis, int di, int dj, int exact);
/* 1 if the table entry of sv_em_L_rooftops at (di, dj) is a far one
 * (sv_em_L_rooftops_far of solvent/em_tables.h, the far rule). */
int sv_em_L_rooftops_is_far(const sv_em_model *m, int axis, int di, int dj);
/* P between two cells at offset (di, dj) cells (1/F), all image terms. */
double sv_em_P_cells(const sv_em_model *m, int di, int dj, int exact);
/* 1 if that pair of cells is far (then every image term is too: P is
 * sv_em_P_far of solvent/em_tables.h). */
int sv_em_P_cells_is_far(const sv_em_model *m, int di, int dj);
/* The same for the lossy dielectric εr·(1 − j·tanδ) (dielectric.c): the
 * real part returned, the imaginary part (≥ 0 on the diagonal) in *im. */
double sv_em_P_cells_lossy(const sv_em_model *m, int di, int dj, int exact, double *im);

#endif
