/* Shared internals of the em module: the project and model structures, the
 * Green's functions and the rectangle integrals. */
#ifndef SV_EM_INTERNAL_H
#define SV_EM_INTERNAL_H

#include <stddef.h>

#include "solvent/em.h"

#define SV_EM_MU0 1.25663706212e-6    /* H/m (CODATA 2018) */
#define SV_EM_EPS0 8.8541878128e-12   /* F/m (CODATA 2018) */
#define SV_EM_C0 299792458.0          /* m/s */
#define SV_EM_PI 3.14159265358979323846

/* The adaptive sweep's tolerance when neither the caller nor the project gives one. */
#define SV_EM_DEFAULT_TOLERANCE 1e-4

enum { SV_EM_LEFT = 0, SV_EM_RIGHT = 1, SV_EM_BOTTOM = 2, SV_EM_TOP = 3 };

typedef struct sv_em_port_def {
    char name[64];
    double z0;
    int side;      /* SV_EM_LEFT ... */
    int line;      /* grid line index of the port plane (x line for left/right) */
    int k0, k1;    /* cells k0 .. k1-1 along the port plane */
} sv_em_port_def;

struct sv_em_project {
    sv_ctx *ctx;
    sv_em_stackup st;
    sv_em_grid grid;
    sv_em_sweep sweep;
    unsigned char *metal;   /* nx*ny, index i + nx*j */
    int nports;
    sv_em_port_def *ports;
    char *pixels_file;      /* the CSV pixel map read, or NULL */
};

/* One unknown: an x- or y-directed rooftop, or a port half rooftop. */
typedef struct sv_em_basis {
    int kind;      /* 0 x rooftop, 1 y rooftop, 2 port half rooftop */
    int i, j;      /* x/y rooftop: the lower-left of its two cells; port: its cell */
    int side;      /* port: SV_EM_LEFT ...; port index in `port` */
    int port;
} sv_em_basis;

/* Gauss–Legendre rule on [0, 1] with an end-flattening substitution
 * (geom.c), for the Galerkin inductance integrals. */
#define SV_EM_GL_MAX 16
typedef struct sv_em_gl_rule {
    int n;
    double t[SV_EM_GL_MAX], w[SV_EM_GL_MAX];
} sv_em_gl_rule;
void sv_em_gl_make(int n, int flatten, sv_em_gl_rule *r);

struct sv_em_model {
    sv_ctx *ctx;
    const sv_em_project *prj;
    sv_em_options opts;
    int n, nx_edges, ny_edges, ncells;
    sv_em_basis *basis;       /* n */
    sv_em_gl_rule gl_near, gl_far;
    sv_em_gl_rule gl_wall;    /* thick metal's side walls (walls.c) */
};

/* ---- Green's functions and integrals (green.c) ---- */
/* F(x, y, z) of the closed-form rectangle integral (even-symmetrised). */
double sv_em_F(double x, double y, double z);
/* ∫∫∫∫ 1/|r − r'| over [x1,x2]×[y1,y2] and [x3,x4]×[y3,y4], vertical gap z. */
double sv_em_rect_exact(double x1, double x2, double y1, double y2, double x3, double x4, double y3, double y4,
                        double z);
/* The same integral by the point approximation with the second- and
 * fourth-order corrections (green.c). */
double sv_em_rect_point(double x1, double x2, double y1, double y2, double x3, double x4, double y3, double y4,
                        double z);
/* Exact for near pairs, corrected point for R ≥ far_ratio·(largest side). */
double sv_em_rect(double x1, double x2, double y1, double y2, double x3, double x4, double y3, double y4,
                  double z, double far_ratio);
/* Number of image terms so that K^n ≤ accuracy (≥ 1). */
int sv_em_image_terms(double eps_r, double accuracy);
/* Point Green's functions on the interface (ρ > 0). */
double sv_em_green_A(double rho, double h);
double sv_em_green_phi(double rho, double h, double eps_r, int terms);
/* Far ratio used for an accuracy (documented in docs/em.md). */
double sv_em_default_far_ratio(double accuracy);

/* ---- lossy dielectric (dielectric.c) ---- */
/* Σ P_im / Σ P_re over all pairs of metal cells: the loss ratio of the
 * metal's uniform static charge, Ψ_im ≈ ratio·Ψ_re. */
sv_status sv_em_dielectric_ratio(sv_ctx *ctx, const sv_em_model *m, double *ratio);

/* ---- pixel maps from CSV (pixels_csv.c) ---- */
/* Read an nx × ny 0/1 map (first line = top row) into metal[i + nx·j];
 * `field` names the project field in messages. */
sv_status sv_em_pixels_csv_read(const char *path, const char *field, int nx, int ny, unsigned char *metal);

/* ---- assembly internals (assemble.c) ---- */
/* Column j's first element (row j) in the packed arrays: rows j..n-1 of
 * column j are contiguous from there (dense.h's block-column layout). */
typedef size_t (*sv_em_colbase_fn)(void *user, int j);
sv_status sv_em_assemble_raw(sv_ctx *ctx, const sv_em_model *m, double *L, double *Psi, sv_em_colbase_fn colbase,
                             void *user, sv_em_assembly_info *info);
/* The same with, for a lossy dielectric (tan_delta > 0), Ψ's imaginary part
 * into PsiI (same layout; NULL: not wanted). */
sv_status sv_em_assemble_raw_lossy(sv_ctx *ctx, const sv_em_model *m, double *L, double *Psi, double *PsiI,
                                   sv_em_colbase_fn colbase, void *user, sv_em_assembly_info *info);
/* Thick metal's side walls (walls.c): add δL and δΨ to the assembled L and
 * Ψ (and Ψ's imaginary part when PsiI is not NULL); and to column c of the
 * naive reference (rows c..n−1 in lcol, pcol). Nothing for a sheet. */
sv_status sv_em_walls_add(sv_ctx *ctx, const sv_em_model *m, double *L, double *Psi, double *PsiI,
                          sv_em_colbase_fn colbase, void *user);
void sv_em_walls_column(const sv_em_model *m, int c, double *lcol, double *pcol);
/* G's factor for unknowns q and o of one axis on a shared cell: 1 for a
 * sheet; the overlap of their face and wall currents for thick metal. */
double sv_em_walls_gram_factor(const sv_em_model *m, int q, int o);
/* sv_em_assemble with, when PsiI is not NULL (lossy dielectric), Ψ's
 * imaginary part as a third packed matrix (dense_glue.c). */
sv_status sv_em_assemble_terms(sv_ctx *ctx, const sv_em_model *m, int nb, sv_dense_sym **L, sv_dense_sym **Psi,
                               sv_dense_sym **PsiI, sv_em_assembly_info *info);
/* The naive reference: every entry straight from the closed forms (per
 * cell pair, all image terms), for benchmarks and tests. Fills column j
 * of L and Ψ (rows j..n-1) into lcol, pcol. */
void sv_em_naive_column(const sv_em_model *m, int j, double *lcol, double *pcol);

#endif
