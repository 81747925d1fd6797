/* Shared internals of the em module: the project and model structures, the
 * Green's functions and the rectangle integrals. */
#ifndef SV_EM_INTERNAL_H
#define SV_EM_INTERNAL_H

#include <stddef.h>

#include "solvent/em.h"
#include "solvent/em_assembly.h"
#include "solvent/em_tables.h" /* the physical constants, the point approximation, the tables */

/* The adaptive sweep's tolerance when neither the caller nor the project gives one. */
#define SV_EM_DEFAULT_TOLERANCE 1e-4

/* An operation's steps as parts of its progress, in turn: sv_em_part
 * closes the previous part and opens the next, `weight` of the parts'
 * total (the rough cost of its step), as a span of the operation's
 * progress (solvent/core.h), which the step's reports, 0 to 1, fill;
 * sv_em_parts_end closes the last. */
typedef struct sv_em_parts {
    sv_ctx *ctx;
    double total, done;
    sv_progress_span enclosing;
    int open;
} sv_em_parts;

static inline sv_em_parts sv_em_parts_begin(sv_ctx *ctx, double total)
{
    return (sv_em_parts){.ctx = ctx, .total = total > 0 ? total : 1};
}

static inline void sv_em_parts_end(sv_em_parts *p)
{
    if (p->open) sv_progress_span_end(p->ctx, p->enclosing);
    p->open = 0;
}

static inline void sv_em_part(sv_em_parts *p, double weight)
{
    sv_em_parts_end(p);
    p->enclosing = sv_progress_span_begin(p->ctx, p->done / p->total, (p->done + weight) / p->total);
    p->open = 1;
    p->done += weight;
}

enum { SV_EM_LEFT = 0, SV_EM_RIGHT = 1, SV_EM_BOTTOM = 2, SV_EM_TOP = 3 };

typedef struct sv_em_port_def {
    char name[64];
    double z0;
    int side;      /* SV_EM_LEFT ... */
    int line;      /* grid line index of the port plane (x line for left/right) */
    int k0, k1;    /* cells k0 .. k1-1 along the port plane */
    int calibrate;     /* 1: thru-line calibrated (default), 0: raw edge port */
    double ref_shift;  /* reference plane moved into the circuit by this length, m */
} sv_em_port_def;

struct sv_em_project {
    sv_ctx *ctx;
    sv_em_stackup st;
    sv_em_grid grid;
    sv_em_sweep sweep;
    unsigned char *metal;   /* nx*ny, index i + nx*j */
    int nports;
    sv_em_port_def *ports;
    int radiation;          /* 1: radiation terms in the affine model (default) */
    int edge_profile;       /* 1: strips one cell wide carry the edge-singular profile (default) */
    int edge_cells;         /* 1: the edge cells of wider strips carry a one-sided edge-singular profile */
    int dispersion;         /* 1: the kernels' first-order k0² change (dispersion.c) in the affine model */
    int dispersion_far;     /* 1 (with dispersion): its far field resummed (dispersion_far.c) */
    char *pixels_file;      /* the CSV pixel map read, or NULL */
    int subdivide;          /* mesh cells per drawing-grid cell along each axis (grid.subdivide; 0, 1: none) */
};

/* One unknown: an x- or y-directed rooftop, or a port half rooftop. */
typedef struct sv_em_basis {
    sv_em_unknown_kind kind;
    int i, j;      /* x/y rooftop: the lower-left of its two cells; port: its cell */
    int side;      /* port: SV_EM_LEFT ...; port index in `port` */
    int port;
} sv_em_basis;

/* The axis of an unknown's current: 0 along x, 1 along y (a rooftop's is
 * its kind's; a port half rooftop's crosses its port's side). */
static inline int sv_em_basis_axis(const sv_em_basis *b)
{
    return sv_em_is_rooftop(b->kind) ? b->kind == SV_EM_UNKNOWN_Y : b->side >= SV_EM_BOTTOM;
}

/* Gauss–Legendre rule on [0, 1] with an end-flattening substitution
 * (geom.c), for the Galerkin inductance integrals: n ≤ SV_EM_GL_MAX points
 * (a larger n gets SV_EM_GL_MAX: the arrays hold no more). */
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
    struct sv_em_radiation *rad; /* the radiation terms of the mesh (NULL when the project has none) */
    struct sv_em_disp_far *disp_far; /* dispersion's far field resummed (NULL without dispersion) */
    sv_em_gl_rule gl_wall;    /* thick metal's side walls (walls.c) */
    sv_em_gl_rule gl_edge;    /* the edge profile's changes with port half rooftops (edges.c) */
    /* What depends on the cell size, the stack-up, the effects and the
     * options alone, not on the mesh, so models alike in those share it
     * (the calibration's thru standards use their circuit's,
     * sv_em_model_create_sharing): thick metal's wall tables (NULL for a
     * sheet), made with the model and read-only since, and the edge
     * profile's memo of changes (NULL without the profiles), which the
     * assemblies fill. A model is const to whoever assembles it; the memo
     * is the one thing its assemblies change, so it is an object of its
     * own that the model points to (not a member written through a cast),
     * handed to one assembly at a time (sv_em_edge_correct). */
    struct sv_em_walls_tables *walls;
    struct sv_em_edge_memo *memo;
    int lent;                 /* 1: walls and memo belong to the model they were shared from */
    /* The board the model's map lies on (board.c; NULL: none): its tables
     * over the whole grid stand in for the assembly's own, lent like the
     * walls (the calibration's standards get their circuit's). */
    const struct sv_em_board *board;
    int on_board;             /* 1: made on the board (its ports), not lent it: the board's port rows hold */
};
/* A model's shape without its parts (model.c): the options resolved, the
 * unknowns and cells counted, prj set, nothing allocated; what the size
 * functions (model_size.c) take. */
sv_status sv_em_model_shape(const sv_em_project *p, const sv_em_options *opts, sv_em_model *shape);

/* ---- Green's functions and integrals (green.c) ---- */
/* F(x, y, z) of the closed-form rectangle integral (even-symmetrised). */
double sv_em_F(double x, double y, double z);
/* ∫∫∫∫ 1/|r − r'| over [x1,x2]×[y1,y2] and [x3,x4]×[y3,y4], vertical gap z. */
double sv_em_rect_exact(double x1, double x2, double y1, double y2, double x3, double x4, double y3, double y4,
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
/* The lossy dielectric's image ratio K = (εr* − 1)/(εr* + 1) and the images
 * its series keeps (|K|ⁿ ≤ accuracy). */
void sv_em_lossy_series(const sv_em_model *m, double complex *K, int *terms);

/* ---- dispersion (dispersion.c) ---- */
/* The exact first-order change of the grounded slab's kernels with k0²,
 * ∂G_A/∂(k0²) and ∂G_φ/∂(k0²) at k0 = 0, as sums of images Σ a_i/√(ρ² + z_i²)
 * fitted to their spectra. */
typedef struct sv_em_dispersion_kernel sv_em_dispersion_kernel;
sv_status sv_em_dispersion_kernel_make(sv_ctx *ctx, double h, double eps_r, sv_em_dispersion_kernel **out);
void sv_em_dispersion_kernel_destroy(sv_ctx *ctx, sv_em_dispersion_kernel *k);
double sv_em_dispersion_FA(const sv_em_dispersion_kernel *k, double rho);
double sv_em_dispersion_Fphi(const sv_em_dispersion_kernel *k, double rho);
/* Dispersion's packed terms (sv_em_dispersion_terms of them) into terms[]:
 * terms[0] = L₂, the current's first order (the term jω³/c²·L₂), with the
 * charge's −Ψ₂/c² added to L (the term −jω·Ψ₂/c² has L's coefficient);
 * terms[1 + m] the far field's term m (dispersion_far.c; coefficient
 * sv_em_dispersion_coef). */
sv_status sv_em_dispersion_assemble(sv_ctx *ctx, const sv_em_model *m, sv_dense_sym *L, sv_dense_sym **terms);
/* How many packed terms dispersion gives (0 without it), their bytes, and
 * the coefficient of term j at f. */
int sv_em_dispersion_terms(const sv_em_model *m);
size_t sv_em_dispersion_bytes(const sv_em_model *m);
double complex sv_em_dispersion_coef(const sv_em_model *m, int j, double freq_hz);

/* ---- dispersion's far field resummed (dispersion_far.c) ---- */
/* The thin slab's reactive retarded change beyond the first order in k0²,
 * ΔG_A = (μ0h²k0³/4π)·H_A(k0ρ) and ΔG_φ = (h²k0³/2πε0)·H_φ(k0ρ), as terms
 * Σ_m w_m(k0)·α_m(ρ), Σ_m w_m(k0)·β_m(ρ) (ΔG_A/k0 and ΔG_φ/k0³) for k0 ≤
 * k0max and ρ ≤ rmax, to tol of the largest. */
#define SV_EM_DISP_FAR_MAX 8
typedef struct sv_em_disp_far sv_em_disp_far;
sv_status sv_em_disp_far_make(sv_ctx *ctx, double h, double eps_r, double k0max, double rmax, double tol,
                              sv_em_disp_far **out);
void sv_em_disp_far_destroy(sv_ctx *ctx, sv_em_disp_far *f);
int sv_em_disp_far_terms(const sv_em_disp_far *f);
double sv_em_disp_far_kernel_A(const sv_em_disp_far *f, int m, double rho);
double sv_em_disp_far_kernel_phi(const sv_em_disp_far *f, int m, double rho);
double sv_em_disp_far_weight(const sv_em_disp_far *f, int m, double k0);
/* The closed forms H_A(x), H_φ(x), and what the terms make of ΔG_A, ΔG_φ. */
double sv_em_disp_far_HA(double x);
double sv_em_disp_far_Hphi(double x, double eps_r);
void sv_em_disp_far_change(const sv_em_disp_far *f, double k0, double rho, double *dA, double *dphi);
/* The far field of model m: its band's top and its grid's diagonal. */
sv_status sv_em_disp_far_for(sv_ctx *ctx, const sv_em_model *m, sv_em_disp_far **out);
/* Bytes sv_em_disp_far_make holds at most while it runs (a constant: its
 * samples and their SVD). */
size_t sv_em_disp_far_build_bytes(void);

/* 1 when port d is off the outline of p's metal (a cell of its span not
 * metal, or metal beyond its edge), with what is wrong in msg (project.c:
 * the one rule the reader and a map on a board, project_map.c, apply). */
int sv_em_port_off_outline(const sv_em_project *p, const sv_em_port_def *d, char *msg, size_t cap);

/* ---- pixel maps from CSV (pixels_csv.c) ---- */
/* Read an nx × ny 0/1 map (first line = top row) into metal[i + nx·j];
 * `field` names the project field in messages. */
sv_status sv_em_pixels_csv_read(const char *path, const char *field, int nx, int ny, unsigned char *metal);

/* ---- the assembly's tables (tables.c; solvent/em_tables.h) ---- */
/* Parts of sv_em_tables besides P (P_im when lossy), Lx, Ly: the folded Ψ
 * tables; the far masks and the unknowns' kinds and cells (a plan). */
enum { SV_EM_TABLES_FOLDED = 1, SV_EM_TABLES_PLAN = 2 };
/* The scalars of m's tables (lossy: P complex, for Ψ's imaginary part). */
void sv_em_tables_describe(const sv_em_model *m, int lossy, sv_em_tables *t);
size_t sv_em_tables_bytes(const sv_em_tables *t, int parts);
sv_status sv_em_tables_alloc(sv_ctx *ctx, sv_em_tables *t, int parts);
void sv_em_tables_free(sv_ctx *ctx, sv_em_tables *t);
/* Every entry of P (P_im), Lx, Ly; near_only: only the near ones (closed
 * forms), the far masks set (SV_EM_TABLES_PLAN). In parallel, reporting
 * progress ("assembly"); SV_ERR_CANCELLED when stopped. */
sv_status sv_em_tables_entries(sv_ctx *ctx, const sv_em_model *m, sv_em_tables *t, int near_only);
/* Sxx, Syy, Sxy (and their imaginary parts) from P (SV_EM_TABLES_FOLDED). */
void sv_em_tables_fold(sv_em_tables *t);
/* The unknowns' kinds and cells (SV_EM_TABLES_PLAN). */
void sv_em_tables_unknowns(const sv_em_model *m, sv_em_tables *t);
/* L between unknowns r and c from their current profiles (the rows of port
 * half rooftops). */
double sv_em_port_inductance(const sv_em_model *m, int r, int c);

/* ---- what models of one cell and stack-up share (model.c, walls.c, edges.c) ---- */
typedef struct sv_em_walls_tables sv_em_walls_tables; /* walls.c: one allocation */
typedef struct sv_em_edge_memo sv_em_edge_memo;       /* edges.c: one allocation */
/* A model of p as sv_em_model_create makes it, sharing `like`'s wall
 * tables and edge memo when they fit it (the same cell size, stack-up,
 * effects and options), else with its own; `like` must outlive it. */
sv_status sv_em_model_create_sharing(sv_ctx *ctx, const sv_em_project *p, const sv_em_options *opts,
                                     const sv_em_model *like, sv_em_model **out);
/* Thick metal's wall tables for models like m (every coefficient the walls
 * tabulate), and their bytes. */
sv_status sv_em_walls_tables_create(sv_ctx *ctx, const sv_em_model *m, sv_em_walls_tables **out);
void sv_em_walls_tables_destroy(sv_ctx *ctx, sv_em_walls_tables *w);
size_t sv_em_walls_tables_bytes(const sv_em_model *m);
/* The edge profile's memo for models like m, every change unknown yet,
 * and its bytes. */
sv_status sv_em_edge_memo_create(sv_ctx *ctx, const sv_em_model *m, sv_em_edge_memo **out);
void sv_em_edge_memo_destroy(sv_ctx *ctx, sv_em_edge_memo *e);
size_t sv_em_edge_memo_bytes(const sv_em_model *m);

/* The board's tables into t (described for a model on the board: its
 * extent, lossy or not; allocated): 1 when the board has them (the same
 * kind, an extent within the board's), else 0 and t untouched (board.c). */
int sv_em_board_tables_take(const sv_em_board *b, sv_em_tables *t);
/* sv_em_port_inductance(m, r, c) of a model made on board b (m->on_board):
 * the board's value (board.c). */
double sv_em_board_port_L(const sv_em_board *b, const sv_em_model *m, int r, int c);

/* ---- assembly internals (assemble.c) ---- */
/* How far a loop over the columns of a packed lower triangle of order n
 * has come before column c: the entries of columns 0 … c − 1, doubled, of
 * n² (column c holds n − c), for sv_progress_loop_at. */
static inline double sv_em_columns_before(int n, int c) { return (double)c * (2.0 * n - c); }
/* The shares of an assembly's progress (sv_em_assemble_with,
 * sv_em_assemble_raw_lossy): its matrices' allocation (their zero fill),
 * the entries (sv_em_assemble_entries: the tables, the fill, the side
 * walls) and the edge profiles' changes; rough costs (docs/em.md,
 * "Progress and cancellation"). */
#define SV_EM_SHARE_ALLOC 0.3
#define SV_EM_SHARE_ENTRIES 0.6
#define SV_EM_SHARE_EDGES 0.1
/* Column j's first element (row j) in the packed arrays: rows j..n-1 of
 * column j are contiguous from there (dense.h's block-column layout). */
typedef size_t (*sv_em_colbase_fn)(void *user, int j);
sv_status sv_em_assemble_raw(sv_ctx *ctx, const sv_em_model *m, double *L, double *Psi, sv_em_colbase_fn colbase,
                             void *user, sv_em_assembly_info *info);
/* The CPU's entries (tables, fill, side walls) without the checks; ctx's
 * threads already applied. */
sv_status sv_em_assemble_entries(sv_ctx *ctx, const sv_em_model *m, double *L, double *Psi, double *PsiI,
                                 sv_em_colbase_fn colbase, void *user);
/* info (may be NULL) of an assembly that started at t0. */
void sv_em_assembly_info_fill(const sv_em_model *m, int psi_im, double t0, sv_em_assembly_info *info);
/* The same with, for a lossy dielectric (tan_delta > 0), Ψ's imaginary part
 * into PsiI (same layout; NULL: not wanted). */
sv_status sv_em_assemble_raw_lossy(sv_ctx *ctx, const sv_em_model *m, double *L, double *Psi, double *PsiI,
                                   sv_em_colbase_fn colbase, void *user, sv_em_assembly_info *info);
/* The assembled diagonal: finite and positive (Ψ_im's ≥ 0), else
 * SV_ERR_NONFINITE (a grid or stack-up out of range). */
sv_status sv_em_check_diagonal(const sv_em_model *m, const double *L, const double *Psi, const double *PsiI,
                               sv_em_colbase_fn colbase, void *user);
/* Thick metal's side walls (walls.c): add δL and δΨ to the assembled L and
 * Ψ (and Ψ's imaginary part when PsiI is not NULL); and to column c of the
 * naive reference (rows c..n−1 in lcol, pcol). Nothing for a sheet. */
sv_status sv_em_walls_add(sv_ctx *ctx, const sv_em_model *m, double *L, double *Psi, double *PsiI,
                          sv_em_colbase_fn colbase, void *user);
void sv_em_walls_column(const sv_em_model *m, int c, double *lcol, double *pcol);
/* The same updates as lists, for an accelerator's assembly
 * (assembly_plan.c): δL at (r, c), r ≥ c, each once; δΨ (and, lossy,
 * δΨ_im) contributions at (r, c) in the order sv_em_walls_add adds them,
 * repeats included. Nothing for a sheet. */
typedef struct sv_em_walls_updates {
    int lossy;
    size_t nl;
    int *l_r, *l_c;
    double *l_val;
    size_t np;
    int *p_r, *p_c;
    double *p_val, *p_val_im;
} sv_em_walls_updates;
sv_status sv_em_walls_record(sv_ctx *ctx, const sv_em_model *m, int lossy, sv_em_walls_updates *u);
void sv_em_walls_updates_free(sv_ctx *ctx, sv_em_walls_updates *u);
/* The walls' range in cells (geom.h): it depends on the cell and the
 * stack-up alone. */
int sv_em_walls_range(const sv_em_project *p);
/* Thick metal's walls' shares (sv_em_options.wall_share, wall_current_share),
 * chosen by Ritz steps (wall_share.c): the charge's and the x- and
 * y-directed currents' for m (1 where the walls are under half a cell
 * tall); a share already set (> 0) is kept. */
sv_status sv_em_walls_choose_shares(sv_ctx *ctx, const sv_em_model *m, double *charge, double currents[2]);
/* Bytes the Ritz steps of sv_em_walls_choose_shares hold at most for m's
 * mesh and options (a dense matrix of its cells or of an axis's rooftops;
 * 0 when no step runs): a size, from the counts alone. */
size_t sv_em_walls_share_bytes(const sv_em_model *m);
/* G's factor for unknowns q and o of one axis on a shared cell: 1 for a
 * sheet; the overlap of their face and wall currents for thick metal. */
double sv_em_walls_gram_factor(const sv_em_model *m, int q, int o);
/* The naive reference: every entry straight from the closed forms (per
 * cell pair, all image terms), for benchmarks and tests. Fills column j
 * of L and Ψ (rows j..n-1) into lcol, pcol. */
void sv_em_naive_column(const sv_em_model *m, int j, double *lcol, double *pcol);

/* ---- strips one cell wide (edges.c): the edge-singular transverse profile ---- */
/* 1 if the model has profiled unknowns or cells. */
int sv_em_edge_profiled(const sv_em_model *m);
/* The profile's change of L between unknowns r and c, of P between cells
 * (ai, aj) and (bi, bj) (0 where it does not apply). */
double sv_em_edge_dL(const sv_em_model *m, int r, int c, int exact);
double sv_em_edge_dP(const sv_em_model *m, int ai, int aj, int bi, int bj, int exact);
/* Adds the changes to assembled L and Ψ (lower triangles through colbase). */
sv_status sv_em_edge_correct(sv_ctx *ctx, const sv_em_model *m, double *L, double *Psi, sv_em_colbase_fn colbase,
                             void *user);

/* X = A⁻¹·X for a small p × p system (network.c; A overwritten). */
sv_status sv_em_solve_small(int p, double complex *a, double complex *x, const char *who, const char *matrix);

/* ---- radiation (radiation.c): the dissipative part of the retarded kernels
 * as low-rank terms Σ_j c_j(f)·U·W_j·Uᵀ (docs/em.md, "Radiation") ---- */
/* The model holds to k0·a ≤ SV_EM_RAD_KA_MAX (a: half-diagonal of the metal's
 * bounding box) and k0·h·√εr ≤ SV_EM_RAD_K1H_MAX (thin substrate). */
#define SV_EM_RAD_KA_MAX 4.0
#define SV_EM_RAD_K1H_MAX 0.5
typedef struct sv_em_radiation sv_em_radiation;
typedef struct sv_em_radiation_info {
    int degree;            /* moments up to this total degree */
    int moments;           /* 2·(degree+1)(degree+2)/2 */
    int moment_rank;       /* independent moments */
    int rank;              /* columns of U: the directions the terms use (≤ moment_rank) */
    int terms;             /* terms j after compression over the band */
    double band_residual;  /* first singular value left out, relative */
    double ka, k1h;        /* k0·a and k0·h·√εr at the design frequency */
    double size_m;         /* a */
    double limit_hz;       /* where k0·a or k0·h·√εr reaches its limit */
    double design_hz;      /* the top of the band the terms were sized for */
} sv_em_radiation_info;
#define SV_EM_RAD_MAX_TERMS 12
/* The design frequency (sv_em_options.max_freq_hz, else the project's sweep
 * stop, else the electrical-size limit) and tolerance of a model's terms. */
double sv_em_radiation_design_hz(const sv_em_model *m);
double sv_em_radiation_tolerance(const sv_em_model *m);
/* Terms accurate to about tol (relative) from 0 to fmax_hz. */
sv_status sv_em_radiation_create(sv_ctx *ctx, const sv_em_model *m, double fmax_hz, double tol,
                                 sv_em_radiation **out);
void sv_em_radiation_destroy(sv_em_radiation *r);
int sv_em_radiation_terms(const sv_em_radiation *r);
void sv_em_radiation_get_info(const sv_em_radiation *r, sv_em_radiation_info *info);
/* c_j(f), real (the terms are resistive). */
double sv_em_radiation_coef(const sv_em_radiation *r, int j, double freq_hz);
/* U (n × rank, ld n, orthonormal columns) and the core W_j (rank × rank,
 * symmetric, both triangles): term j is c_j(f)·U·W_j·Uᵀ. */
const double *sv_em_radiation_basis(const sv_em_radiation *r, int *rank);
const double *sv_em_radiation_core(const sv_em_radiation *r, int j);
/* Bytes the object holds (what sv_em_radiation_create allocates and keeps). */
size_t sv_em_radiation_bytes(const sv_em_radiation *r);
/* Bytes sv_em_radiation_create holds at most, before the mesh exists: n
 * unknowns on metal of half-diagonal a (m), terms to fmax_hz within tol;
 * *moments (may be NULL) gets the moments' count, a bound of the terms' rank. */
size_t sv_em_radiation_build_bytes(int n, double a, double fmax_hz, double tol, int *moments);
/* a (m), and the frequency where the model's electrical size reaches its limit. */
double sv_em_radiation_size(const sv_em_model *m);
double sv_em_radiation_limit_hz(const sv_em_model *m);

/* ---- the charge terms and the low-frequency path (affine.c, lowfreq.c) ---- */
/* 1 if model term k is a charge term (Ψ, Ψ_im: coefficient ∝ 1/ω, null
 * space the loop currents). */
int sv_em_affine_is_charge(const sv_em_affine *a, int k);
/* ω·c_k of charge term k (finite at any f). */
double complex sv_em_affine_charge_coefficient(const sv_em_affine *a, int k);
/* The other terms' share of ‖Z(f)‖∞ against the charge terms'
 * (Σ|c_k|·‖A_k‖∞ of each; ∞ without a charge term). */
double sv_em_affine_others_share(const sv_em_affine *a, double freq_hz);
/* Below this share the residuals a double solve of Z(f) is refined with
 * round Ψ's part beyond the others' (u/share > 1e-7 of ‖Z‖): lowfreq.c solves there. */
#define SV_EM_LOWFREQ_SHARE 2e-9
/* SV_ERR_ARG unless f is finite and from SV_EM_MIN_FREQ_HZ to
 * SV_EM_MAX_FREQ_HZ (what a solve above DC takes); `who` opens the message. */
sv_status sv_em_check_solve_frequency(const char *who, double freq_hz);

#endif
