/* Thick metal's walls: what walls.c (their coefficients, tables and the
 * updates of L and Ψ) shares with wall_share.c (the Ritz steps that choose
 * the walls' shares, over dense matrices built from the same parts).
 * Internal to these two files. */
#ifndef SV_EM_WALLS_PARTS_H
#define SV_EM_WALLS_PARTS_H

#include <complex.h>

#include "em_internal.h"
#include "wall_profile.h"

/* The grounded slab's image series seen from z ≥ h, for heights ζ above
 * the interface: 1/R(ζ − ζ') − K/R(ζ + ζ') − (1 − K²)·Σ_{n≥1}
 * (−K)^{n−1}/R(ζ + ζ' + 2nh), K complex for a lossy dielectric. */
typedef struct sv_em_walls_series {
    double complex K, c0; /* first image −K; images n ≥ 1: cn[n] = −(1 − K²)(−K)^{n−1} */
    double complex *cn;   /* malloc'ed (free it): NULL when out of memory */
    int terms;
    int R; /* the walls' range in cells (sv_em_walls_range) */
    double h, t, far;
    sv_em_wall_heights hz; /* averages over the walls' heights against their charge profile */
} sv_em_walls_series;
void sv_em_walls_series_make(const sv_em_model *m, sv_em_walls_series *s);

/* The charges' part coefficients by offset from cell (0, 0): x walls at
 * line L ∈ [−R, R + 1], row J ∈ [−R, R]; wall pairs by the difference of
 * their addresses (−R−1 .. R+1). A face and a wall keep their coefficient
 * when the pair is mirrored about the face's centre lines: line L and
 * 1 − L, row J and −J (and, for a rooftop's face, along offset D and −D)
 * give one value, so the face–wall tables hold lines 1 … R + 1 and rows
 * 0 … R only (a quarter of the pairs to compute). */
typedef struct sv_em_walls_charge_tables {
    int R;
    const double complex *fw; /* [2][R + 1][R + 1]: face of cell (0,0) – wall of axis k at (fold_line(line), |row|) */
    const double complex *ww; /* [2][2][2R + 3][2R + 3]: wall (axis a, of cell (0,0) at its low side) – wall (axis b) */
} sv_em_walls_charge_tables;

/* The currents' tables by offset (di, dj) of the second rooftop in cells
 * (along, across as for its axis): face of (0,0) against the wall at
 * across line L = dj + side; wall against wall by |di| and |ΔL|. */
typedef struct sv_em_walls_current_tables {
    int R;
    const double *fw; /* [2][R + 1][R + 1] by |di| and fold_line(L) − 1: the mirror images */
    const double *ww; /* [2][R + 1][R + 2] */
    const double *ff; /* [2][R + 1][R + 1] */
} sv_em_walls_current_tables;

/* The parts of a model's wall tables (sv_em_model.walls) as views (p00:
 * the faces' P by |offset|). */
void sv_em_walls_tables_view(const sv_em_walls_tables *w, sv_em_walls_charge_tables *tb,
                             sv_em_walls_current_tables *ct, const double complex **p00);

/* A pair of cells' P apart from the walls' share of their charge. A cell
 * of face area A and wall area T (t times its walls' length), its walls'
 * mean density κ times its face's, gives its face the share A/D and a wall
 * of area Tw the share κ·Tw/D, D = A + κ·T, so
 *   δP(a, b) = (A²/(Da·Db) − 1)·p00 + κ·A·F/(Da·Db) + κ²·W/(Da·Db),
 * F = Σ Tw·P(face, wall) over the walls of each cell against the other's
 * face, W = Σ Tw·Tw'·P(wall, wall'): κ-free, so one pass gives δP for
 * every κ. A rooftop's δL has the same form (A its face's width, T its
 * walls' heights). */
typedef struct sv_em_walls_pair {
    double complex p00, F, W;
    double Ta, Tb;
} sv_em_walls_pair;
/* The parts of cells a and b (p00 their faces' P); 0 when neither has
 * walls (δP = 0). */
int sv_em_walls_pair_make(const sv_em_model *m, const sv_em_walls_series *s, const sv_em_walls_charge_tables *tb,
                          int ai, int aj, int bi, int bj, double complex p00, sv_em_walls_pair *pp);
double complex sv_em_walls_pair_delta(const sv_em_walls_pair *pp, double A, double kappa);
/* Face-to-face P of two cells (1/F, complex for a lossy dielectric). */
double complex sv_em_walls_p_faces(const sv_em_model *m, int di, int dj, int exact);
/* A cell's face area. */
static inline double sv_em_walls_cell_area(const sv_em_model *m) { return m->prj->grid.dx * m->prj->grid.dy; }
/* 1 where cell (i, j) is metal (0 off the grid). */
int sv_em_walls_metal_at(const sv_em_project *p, int i, int j);

/* A rooftop's current in (along, across) coordinates of its axis: along its
 * edge e (a triangle of half-width d), across [c1, c2] on its face, and on
 * the walls along it (planes across = wall[k]) with the shares. */
typedef struct sv_em_walls_current {
    int axis, nw;
    double e, d, c1, c2, wall[2], share[3]; /* share[0] the face's */
} sv_em_walls_current;
void sv_em_walls_rooftop_current(const sv_em_model *m, int q, sv_em_walls_current *c);
/* The parts of δL of rooftops a, b of one axis (b at cell offset (di, dj)
 * from a, along and across), from the tables or, without them (ct NULL),
 * the closed forms. */
void sv_em_walls_current_parts(const sv_em_model *m, const sv_em_walls_series *s,
                               const sv_em_walls_current_tables *ct, const sv_em_walls_current *a,
                               const sv_em_walls_current *b, int di, int dj, sv_em_walls_pair *pp);
/* The rooftop of an axis at cell (i, j), or −1: map[axis·nx·ny + i + nx·j]
 * (allocated in ctx; NULL: no memory). */
int *sv_em_walls_rooftop_map(sv_ctx *ctx, const sv_em_model *m);

#endif
