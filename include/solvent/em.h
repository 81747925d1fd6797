/* Solvent planar EM model: one metal layer (a sheet, or t thick: charge and
 * current on each cell's face and exposed side walls) on a grounded
 * dielectric slab (loss tangent tan δ), meshed on a uniform grid of dx × dy
 * cells, rooftop current unknowns, quasi-static Green's functions. At
 * angular frequency ω the moment matrix is
 *
 *     Z(ω) = jω·L − j·Ψ/ω + Zs(ω)·G + Ψ_im/ω    (N × N, complex symmetric)
 *
 * with L, Ψ (= Dᵀ·P·D), G and the dielectric's Ψ_im (a ratio of Ψ, or its
 * own term) real symmetric and frequency independent (docs/em.md); the
 * radiation terms and, with "dispersion", jω³/c²·L₂ and the far field's
 * jω·k0·w_m(k0)·T_m are added to it. The DC
 * limit is the metal's resistor network (sv_em_dc_s).
 *
 * Workflow (see docs/em.md):
 *   sv_em_project_read     project file (JSON) -> project handle
 *   sv_em_model_create     project -> mesh (rooftops, ports)
 *   sv_em_affine_create    mesh -> the planar model Z(f) = Σ c_k(f)·A_k with
 *                          the port excitations B, as the sweep engine's model
 *   sv_sweep_run           Y at many frequencies (adaptive sweep), or
 *   sv_em_solve            Y at one frequency (direct solve)
 *   sv_em_y_to_s_all       S, with reciprocity and passivity checks
 *   sv_em_touchstone_write
 * The pieces of the model (sv_em_assemble for L and Ψ, sv_em_gram for G,
 * sv_em_port_rhs for B, sv_em_surface_impedance for Zs) are public for
 * callers that build their own references.
 *
 * All lengths inside the library are metres, frequencies hertz. */
#ifndef SOLVENT_EM_H
#define SOLVENT_EM_H

#include <complex.h>
#include <stddef.h>

#include "solvent/core.h"
#include "solvent/dense.h"
#include "solvent/gds.h"
#include "solvent/sweep.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---- project files ------------------------------------------------------ */
typedef struct sv_em_project sv_em_project;

/* Read a project file (format: docs/project-files.md). Every error names the
 * field, the value and what was expected (SV_ERR_PARSE, SV_ERR_IO). */
sv_status sv_em_project_read(sv_ctx *ctx, const char *path, sv_em_project **out);
/* Same from text in memory; `name` is used in messages (may be NULL). */
sv_status sv_em_project_parse(sv_ctx *ctx, const char *text, size_t len, const char *name, sv_em_project **out);
void sv_em_project_destroy(sv_em_project *p);
/* A deep copy of p, allocated in ctx. */
sv_status sv_em_project_copy(sv_ctx *ctx, const sv_em_project *p, sv_em_project **out);

/* The stack-up as the model uses it: effects switched off in the project
 * file ("effects", docs/project-files.md) come back switched off here
 * (thick_metal 0, tan_delta 0). A zero-filled struct past sigma and t is
 * the lossless zero-thickness sheet. */
typedef struct sv_em_stackup {
    double h;          /* substrate thickness, m */
    double eps_r;      /* relative permittivity of the substrate */
    double sigma;      /* metal conductivity, S/m; INFINITY = lossless */
    double t;          /* metal thickness, m (Zs; and the geometry when thick_metal) */
    double tan_delta;  /* loss tangent of the substrate: eps_r·(1 − j·tan_delta); 0 = lossless */
    int thick_metal;   /* 1: the metal is t thick in L and in the charge (docs/em.md); 0: a sheet */
    int exact_dielectric_loss; /* with tan_delta > 0: 1 = Ψ's imaginary part as its own term
                                  (4·N² bytes more); 0 = as a multiple of Ψ (docs/em.md) */
} sv_em_stackup;

typedef struct sv_em_grid {
    int nx, ny;        /* cells along x and y */
    double dx, dy;     /* cell size, m */
    double x0, y0;     /* coordinates of the grid's lower-left corner, m */
} sv_em_grid;

/* The highest frequency a project, a band or a solve accepts (Hz), checked
 * after any unit is applied. */
#define SV_EM_MAX_FREQ_HZ 1e15
/* The lowest frequency above DC a solve takes (Hz): below it a planar
 * circuit's S is its DC limit to double precision (its changes are of
 * order ω·L/Z0 and ω·R·C) while a lossless thru's admittance 1/(jωL)
 * heads for overflow; 0 itself is the DC limit (sv_em_dc_s). */
#define SV_EM_MIN_FREQ_HZ 1e-9

/* A frequency band: the project's sweep section, or the band a sweep runs. */
typedef struct sv_em_sweep {
    int present;       /* 1 if the file has a sweep section (or the band is complete) */
    double start_hz, stop_hz;
    int points;        /* output frequencies, ≥ 1 (start = stop when 1) */
    double tolerance;  /* adaptive-sampling tolerance (default 1e-4) */
} sv_em_sweep;

void sv_em_project_stackup(const sv_em_project *p, sv_em_stackup *out);
/* The mesh's grid: the file's grid with each cell split into k × k
 * (k = sv_em_project_subdivide, grid.subdivide in the file). */
void sv_em_project_grid(const sv_em_project *p, sv_em_grid *out);
int sv_em_project_subdivide(const sv_em_project *p);
/* Split every mesh cell into k × k cells of the same metal (ports keep
 * their places): a finer mesh of the same drawing, as if the file's
 * grid.subdivide were k times larger (in all at most 16; at most 1e8
 * cells). For a mesh-convergence check without editing the file. */
sv_status sv_em_project_split_cells(sv_em_project *p, int k);
void sv_em_project_sweep(const sv_em_project *p, sv_em_sweep *out);
int sv_em_project_ports(const sv_em_project *p);
/* The file the metal was read from ("pixels": {"csv": ...} or "gds":
 * {"file": ...}, its path resolved against the project's folder), or NULL:
 * an input too. */
const char *sv_em_project_pixels_file(const sv_em_project *p);
const char *sv_em_project_port_name(const sv_em_project *p, int k);
double sv_em_project_port_z0(const sv_em_project *p, int k);
/* The cells port k sits on (the metal cell inside its plane at each cell of
 * its span, i + nx·j of sv_em_project_grid), up to cap of them into cells
 * (may be NULL with cap 0): returns their count, or −1 for no port k. */
int sv_em_project_port_cells(const sv_em_project *p, int k, int *cells, int cap);
/* 1 if mesh cell (i, j) (0 ≤ i < nx, 0 ≤ j < ny of sv_em_project_grid,
 * j = 0 the bottom row) is metal. */
int sv_em_project_metal(const sv_em_project *p, int i, int j);
/* The project's metal (pixels, rectangles or GDSII layer, launches
 * included) on its grid as a GDSII file's merged outlines on
 * layer/datatype (sv_gds_write_cells): the layout a fabricator takes. */
sv_status sv_em_project_write_gds(sv_ctx *ctx, const sv_em_project *p, const char *path, int layer, int datatype,
                                  const sv_gds_write_options *opts);

/* ---- projects built in memory ------------------------------------------------ */
/* A project from values instead of a file, for programs that draw or
 * generate circuits: the fields of a project file (docs/project-files.md)
 * with lengths in metres, checked by the file reader itself, so the
 * messages name the fields as a file's ("substrate.eps_r", "ports[1].y"). */
typedef enum sv_em_side { SV_EM_SIDE_LEFT = 0, SV_EM_SIDE_RIGHT = 1, SV_EM_SIDE_BOTTOM = 2, SV_EM_SIDE_TOP = 3 } sv_em_side;

typedef struct sv_em_port_spec {
    const char *name;        /* unique, no spaces, '!' or '#' */
    sv_em_side side;         /* the metal's edge it sits on */
    double at;               /* the port plane: x for left and right ports, y for bottom and top, m */
    double from, to;         /* its span along the plane, m (snapped to grid lines) */
    double z0;               /* reference impedance, Ω; 0 = 50 */
    int raw;                 /* 1: a raw edge port (calibration "none"); 0: calibrated on thru lines */
    double reference_plane;  /* calibrated ports: the reference plane moved this far into the circuit, m */
} sv_em_port_spec;

typedef struct sv_em_rectangle {
    double x0, x1, y0, y1;   /* m, snapped to grid lines */
} sv_em_rectangle;

/* The effects of the model: 0 = the default (on where the stack-up gives
 * it something to do; dispersion off), 1 = on, −1 = off. */
typedef struct sv_em_effects {
    int thick_metal, dielectric_loss, radiation, edge_profile, edge_cells, dispersion, dispersion_far_field;
    int exact_dielectric_loss; /* 1: the dielectric's loss as its own term ("dielectric_loss": "exact") */
} sv_em_effects;

typedef struct sv_em_project_spec {
    sv_em_grid grid;                /* nx, ny, dx, dy (m), x0, y0 (m) */
    int subdivide;                  /* mesh cells per grid cell along each axis (0, 1: none) */
    double h, eps_r, tan_delta;     /* the substrate: thickness (m), permittivity, loss tangent */
    double sigma;                   /* metal conductivity, S/m; INFINITY: lossless */
    double t;                       /* metal thickness, m (required for a finite sigma) */
    const unsigned char *pixels;    /* nx·ny values, pixels[i + nx·j] (j = 0 the bottom row), nonzero
                                       = metal; NULL: none */
    const sv_em_rectangle *rects;        /* nrects rectangles of metal (with or without pixels) */
    int nrects;
    const sv_em_port_spec *ports;   /* nports ≥ 1 */
    int nports;
    sv_em_sweep band;               /* the project's band when band.present = 1 */
    sv_em_effects effects;
} sv_em_project_spec;

/* The project of `spec`, allocated in ctx (SV_ERR_PARSE naming the field
 * for a value a project file could not hold). */
sv_status sv_em_project_build(sv_ctx *ctx, const sv_em_project_spec *spec, sv_em_project **out);

/* The band to sweep: each field of `given` (may be NULL) that is > 0 —
 * start_hz, stop_hz, points, tolerance; `present` is ignored — wins over the
 * project's sweep section. A tolerance given nowhere is 1e-4; one point
 * means stop = start. SV_ERR_ARG naming the values when start, stop or
 * points is given nowhere, a frequency is above SV_EM_MAX_FREQ_HZ, stop <
 * start, or start = stop with more than one point. out->present = 1 on
 * success. */
sv_status sv_em_project_band(const sv_em_project *p, const sv_em_sweep *given, sv_em_sweep *out);
/* The band's `points` frequencies, evenly spaced from start_hz to stop_hz. */
sv_status sv_em_band_frequencies(const sv_em_sweep *band, double *freq_hz);

/* ---- mesh --------------------------------------------------------------- */
typedef struct sv_em_model sv_em_model;

/* Options of the mesh's coefficients. A zero-filled struct (or opts = NULL)
 * means the defaults, the same as sv_em_options_default. */
typedef struct sv_em_options {
    /* Target relative accuracy of each coefficient (image-series truncation,
     * near/far switch), in [1e-15, 0.1). 0 = default 1e-8. */
    double accuracy;
    /* Pairs whose centre distance is ≥ far_ratio · max(dx, dy) use the
     * corrected point approximation, ≥ 2; 0 = default: chosen from accuracy
     * (docs/em.md). */
    double far_ratio;
    /* The top of the band the model must hold to, Hz: the radiation terms are
     * sized for it (docs/em.md, "Radiation"). 0 = the project's sweep stop, or
     * without a sweep section the model's electrical-size limit. */
    double max_freq_hz;
    /* Thick metal: the mean charge density of a cell's side walls relative
     * to its face's, > 0; 0 = default: chosen by a Ritz step on the metal's
     * capacitance when the walls are at least half a cell tall, else 1
     * (docs/em.md, "Thick metal"). */
    double wall_share;
    /* The same for the current, [0] of x-directed and [1] of y-directed
     * rooftops: the walls' current density relative to the face's; 0 =
     * default: chosen by a Ritz step on the metal's inductance along that
     * axis when the walls are that tall, else 1. */
    double wall_current_share[2];
    /* 1: solve above sv_em_model_limit_hz with radiation on (sv_em_solve),
     * where the radiation terms' thin-slab expansion no longer holds and S
     * may come out non-passive (|S| > 1 on a lossy circuit); 0 (default):
     * such a frequency is refused, naming the limit. */
    int allow_beyond_validity;
} sv_em_options;
/* accuracy 1e-8, far_ratio 0 (chosen from the accuracy). */
void sv_em_options_default(sv_em_options *opts);

/* Build the mesh: unknowns are ordered x-directed rooftops (row by row),
 * y-directed rooftops, then the port half rooftops (port by port). The
 * model keeps a pointer to the project, which must outlive it. */
sv_status sv_em_model_create(sv_ctx *ctx, const sv_em_project *p, const sv_em_options *opts, sv_em_model **out);
void sv_em_model_destroy(sv_em_model *m);
int sv_em_model_unknowns(const sv_em_model *m);   /* N */
int sv_em_model_ports(const sv_em_model *m);      /* P */
int sv_em_model_cells(const sv_em_model *m);      /* metal cells */
const sv_em_project *sv_em_model_project(const sv_em_model *m);
/* Unknown k (0 ≤ k < N) of the mesh, for callers that work on parts of it
 * (a design's pixels): its kind (0 an x rooftop, 1 a y rooftop, 2 a port
 * half rooftop: sv_em_unknown_kind of em_tables.h), its cell (i, j) — a
 * rooftop's lower-left one of its two, (i + 1, j) or (i, j + 1) the other;
 * a port half rooftop's own — and its port (−1 for a rooftop). */
sv_status sv_em_model_unknown(const sv_em_model *m, int k, int *kind, int *i, int *j, int *port);
/* Bytes sv_em_assemble will allocate for L and Ψ with block size nb (0 = default). */
size_t sv_em_assemble_bytes(const sv_em_model *m, int nb);
/* Bytes it holds besides, only while it runs: its coefficient tables,
 * sized by the metal's bounding box (not the grid). */
size_t sv_em_assemble_work_bytes(const sv_em_model *m);

/* ---- many maps on one board ---------------------------------------------- */
/* A board is a project whose metal each map replaces: the same grid,
 * stack-up, ports, band and effects. */

/* The map's CSV (0/1, comma-separated, one grid row a line, the first line
 * the top row: the pixelated-circuit datasets' form) read for the board's
 * grid into map[i + nx·j] (j = 0 the bottom row); SV_ERR_PARSE naming the
 * file, row and column of what is wrong. */
sv_status sv_em_map_csv_read(const sv_em_project *board, const char *path, unsigned char *map);
/* The board with its metal replaced by map (nx·ny of its grid, nonzero =
 * metal): a project as a file with the map's pixels would give.
 * SV_ERR_ARG when the map cannot run on the board: "no metal cell", or
 * "port 'NAME': cell (i, j) must be metal with no metal beyond the left
 * edge: ..." (a port off the outline of the map's metal). */
sv_status sv_em_project_with_map(sv_ctx *ctx, const sv_em_project *board, const unsigned char *map,
                                 sv_em_project **out);

/* What every map on a board shares, made once: the assembly's coefficient
 * tables over the whole grid, thick metal's wall tables, and `slots` memos
 * of the edge profile's changes (one per map assembled at the same time).
 * A model made on the board takes its coefficients from these instead of
 * computing them: the same bits (every entry depends on the offset, the
 * cell size, the stack-up and the options alone). Read-only after creation
 * but for the memos, each written by the one model that holds its slot. */
typedef struct sv_em_board sv_em_board;
sv_status sv_em_board_create(sv_ctx *ctx, const sv_em_project *board, const sv_em_options *opts, int slots,
                             sv_em_board **out);
void sv_em_board_destroy(sv_em_board *b);
/* Bytes sv_em_board_create holds at most for this board, options and slots,
 * before any of it is made (0 for a NULL board or slots < 1). */
size_t sv_em_board_bytes(const sv_em_project *board, const sv_em_options *opts, int slots);
int sv_em_board_slots(const sv_em_board *b);
/* sv_em_model_create for project p on board b (p's grid must be the
 * board's; opts as the board's), using slot `slot`'s memo: no two models
 * assembled at the same time may hold the same slot. b must outlive it. */
sv_status sv_em_model_create_on(sv_ctx *ctx, const sv_em_project *p, const sv_em_options *opts, sv_em_board *b,
                                int slot, sv_em_model **out);

/* ---- assembly ----------------------------------------------------------- */
typedef struct sv_em_assembly_info {
    int image_terms;          /* terms kept in the dielectric image series */
    int distinct_coeffs;      /* distinct coefficients computed (table entries of P, Lx, Ly) */
    double seconds;
} sv_em_assembly_info;

/* Create and fill L (H) and Ψ (1/F) as SV_DENSE_R64 packed symmetric
 * matrices of order N with block size nb (0 = the dense engine's default).
 * Runs in parallel with ctx's thread count. info may be NULL. */
sv_status sv_em_assemble(sv_ctx *ctx, const sv_em_model *m, int nb, sv_dense_sym **L, sv_dense_sym **Psi,
                         sv_em_assembly_info *info);

/* G (per unit sheet impedance, dimensionless) as a symmetric CSR matrix with
 * both triangles stored, columns ascending in each row. Zs·G is the loss term. */
typedef struct sv_em_csr {
    int n;
    int *rowptr;   /* n + 1 */
    int *col;      /* rowptr[n] */
    double *val;   /* rowptr[n] */
    sv_ctx *ctx;   /* the context it was allocated from (sv_em_csr_destroy) */
} sv_em_csr;
sv_status sv_em_gram(sv_ctx *ctx, const sv_em_model *m, sv_em_csr **G);
void sv_em_csr_destroy(sv_em_csr *G);
/* Bytes sv_em_gram will hold in its result (room for 7 entries a row). */
size_t sv_em_gram_bytes(const sv_em_model *m);

/* B (N × P, column-major, ldb ≥ N): column k has 1 on port k's half rooftops
 * (unit port voltage), 0 elsewhere. */
sv_status sv_em_port_rhs(const sv_em_model *m, double *b, int ldb);

/* Surface impedance (Ω/□) of a metal of conductivity sigma (S/m) and
 * thickness t (m) at freq_hz ≥ 0, current on one face: (k/σ)·coth(k·t),
 * k = (1 + j)/δ; 1/(σ·t) at DC; 0 for sigma = INFINITY. */
double complex sv_em_surface_impedance(double sigma, double t, double freq_hz);

/* ---- the planar model as an affine frequency model --------------------------- */
/* The one object that turns a mesh into the sweep engine's model
 * Z(f) = Σ c_k(f)·A_k with the port excitations B as right-hand sides: it
 * assembles and owns the terms (jω·L, −j·Ψ/ω — (r − j)/ω with the
 * dielectric's loss ratio r —, Zs(f)·G for lossy metal, Ψ_im/ω for
 * "dielectric_loss": "exact", jω·k0²·L₂ for "dispersion", whose charge part
 * −Ψ₂/c² it adds to L: its L term then differs from sv_em_assemble's L;
 * and its far field's terms jω·k0·w_m(k0)·T_m; the radiation terms)
 * and their coefficient function (f in hertz), and keeps a pointer to `em`,
 * which must outlive it. H = Bᵀ·X of a sweep of it is the port admittance
 * matrix Y. On failure nothing is left allocated. Its phases report
 * progress on ctx, and a stop returns SV_ERR_CANCELLED (docs/em.md,
 * "Progress and cancellation"). */
typedef struct sv_em_affine sv_em_affine;
sv_status sv_em_affine_create(sv_ctx *ctx, const sv_em_model *em, sv_em_affine **out);
void sv_em_affine_destroy(sv_em_affine *a);
const sv_sweep_model *sv_em_affine_model(const sv_em_affine *a);
const sv_em_model *sv_em_affine_em(const sv_em_affine *a);
/* Before creating it: the number of terms, their make-up (for
 * sv_sweep_estimate_bytes_shape: the radiation terms are low-rank), and the
 * bytes its terms and excitations will hold. */
int sv_em_affine_nterms(const sv_em_model *em);
void sv_em_affine_shape(const sv_em_model *em, sv_sweep_shape *shape);
size_t sv_em_affine_bytes(const sv_em_model *em);
/* 1 if the model has radiation terms (the project's "radiation" switch). */
int sv_em_affine_radiates(const sv_em_affine *a);
/* 1 if the model has the kernels' first-order k0² change (the project's
 * "dispersion" switch, off by default: docs/em.md, "Dispersion"). */
int sv_em_affine_disperses(const sv_em_affine *a);
/* With "dispersion": how many terms its far field beyond the first order
 * takes over the band ("effects.dispersion_far_field", on with dispersion;
 * 4·N² bytes each); 0 without it. */
int sv_em_model_dispersion_far_terms(const sv_em_model *m);
/* Bytes the mesh's radiation terms hold (made by sv_em_model_create, counted
 * in its context; 0 when the project has none): a memory estimate made
 * after the mesh adds them to sv_em_affine_bytes. */
size_t sv_em_model_radiation_bytes(const sv_em_model *m);
/* 1 if the mesh has strips one cell wide or edge cells of wider strips and
 * the project gives them their edge-singular profiles ("effects.edge_profile",
 * "effects.edge_cells"; docs/em.md). */
int sv_em_model_edge_profiled(const sv_em_model *m);
/* The frequency above which the model no longer holds (electrical size
 * k0·a > 4 with a the half-diagonal of the metal, or a substrate no longer
 * thin, k0·h·√εr > 0.5; docs/em.md, "Radiation"). */
double sv_em_model_limit_hz(const sv_em_model *m);
/* What sv_em_model_create would make and hold for a project and options,
 * from a counting pass over the project (nothing large allocated), so that
 * a caller can refuse a mesh before making it. Bytes as the core
 * allocator counts them. */
typedef struct sv_em_model_size {
    int unknowns, cells;
    double limit_hz;    /* sv_em_model_limit_hz of that model */
    double design_hz;   /* the band top its radiation terms are sized for */
    size_t tables;      /* thick metal's wall tables and the edge memo: kept with the model */
    size_t wall_shares; /* thick metal's Ritz steps while they run (a dense matrix of the metal's
                           cells or of an axis's rooftops; 0 for walls under half a cell tall) */
    size_t radiation;   /* the radiation terms while they are made (0 without radiation) */
    size_t peak;        /* the most the model's creation holds at once */
} sv_em_model_size;
sv_status sv_em_model_size_of(const sv_em_project *p, const sv_em_options *opts, sv_em_model_size *out);
/* SV_ERR_ARG naming freq_hz, the limit and the bound that sets it when the
 * project radiates and freq_hz is above the limit of its model
 * (sv_em_model_limit_hz), unless opts->allow_beyond_validity: beyond the
 * radiation terms' thin-slab expansion a lossy circuit's S can exceed 1
 * (docs/em.md, "Electrical-size limit"). opts may be NULL (the defaults).
 * sv_em_solve and the planar job apply it. */
sv_status sv_em_check_validity(const sv_em_project *p, const sv_em_options *opts, double freq_hz);
/* With "dispersion": the frequency up to which its expansion (the first
 * order in k0², with or without its far field resummed) keeps εeff within
 * about 2 % (k0·h·√εr ≤ 0.45 resummed, 0.33 for the first order alone;
 * docs/em.md, "Dispersion"); 0 without dispersion. */
double sv_em_model_dispersion_limit_hz(const sv_em_model *m);

/* ---- calibrated ports ------------------------------------------------------ */
/* Each calibrated port's error box (its edge discontinuity: a series Zs at
 * the terminal and a shunt Yp), measured at nf frequencies on two thru lines
 * of the port's feed (same grid, stack-up and effects as the circuit), plus
 * the feed line's Zc and γ for moving the reference plane (project fields
 * ports[].calibration and ports[].reference_plane; docs/em.md). Each
 * standard is a part of its progress on ctx; a stop returns
 * SV_ERR_CANCELLED with nothing left allocated. */
typedef struct sv_em_calibration sv_em_calibration;
sv_status sv_em_calibration_create(sv_ctx *ctx, const sv_em_model *m, int nf, const double *freq_hz,
                                   sv_em_calibration **out);
void sv_em_calibration_destroy(sv_em_calibration *c);
/* 1 when sv_em_calibration_create(m, nf, freq_hz) would make c again: the
 * same frequencies, ports (feeds, calibrated or raw, reference planes) and
 * what the thru standards are made of (stack-up, cell, switches, options,
 * thick metal's wall shares) — a circuit's map is not among them, so maps
 * on one board share one calibration (a batch, solvent/planar.h). */
int sv_em_calibration_fits(const sv_em_calibration *c, const sv_em_model *m, int nf, const double *freq_hz);
/* Bytes sv_em_calibration_create holds at most for these frequencies (the
 * largest standard's model and sweep: they are made one at a time; 0 when
 * no port is calibrated), for a memory estimate made before the run. */
size_t sv_em_calibration_bytes(const sv_em_model *m, int nf, const double *freq_hz);
/* Y (P × P) of frequency i, in place: the raw port admittance becomes the
 * circuit's between the calibrated reference planes. */
sv_status sv_em_calibration_apply(const sv_em_calibration *c, int i, double complex *y);
/* Port k's box at frequency i: its ABCD a, b (Ω), c (S), d with ad − bc = 1
 * ([V; I] at the terminal = [a b; c d]·[V; I] into the circuit), then the
 * feed line's Zc (Ω) and γ (1/m). */
sv_status sv_em_calibration_box(const sv_em_calibration *c, int k, int i, double complex box[6]);
/* 1 if any port of the project is calibrated or moves its reference plane. */
int sv_em_project_calibrated(const sv_em_project *p);

/* For callers that form Z(f) themselves (a benchmark's anchor, a reference
 * solver): term k (0 ≤ k < nterms) as the sweep engine takes it, its arrays
 * owned by `a`, and its coefficient c_k(f). */
sv_status sv_em_affine_term(const sv_em_affine *a, int k, sv_sweep_term *out);
double complex sv_em_affine_coefficient(const sv_em_affine *a, int k, double freq_hz);

/* Direct solve at one frequency f > 0 (finite): Z(f)·X = B by the sweep
 * engine's exact double-precision solve (sv_sweep_solve_exact with
 * SV_SWEEP_DOUBLE), or at low frequencies, where the charge term's share of
 * ‖Z(f)‖ swamps the others' beyond what double precision keeps, by the
 * loop–tree basis (docs/em.md, "DC and low frequency"); y gets Y = Bᵀ·X
 * (P × P, column-major). */
sv_status sv_em_solve(sv_ctx *ctx, const sv_em_affine *a, double freq_hz, double complex *y);
/* The same Y by the loop–tree basis at any f > 0 (a dense LDLᵀ of order N
 * in double: what sv_em_solve uses below the threshold; elsewhere a second
 * method to check the first by). */
sv_status sv_em_solve_loop_tree(sv_ctx *ctx, const sv_em_affine *a, double freq_hz, double complex *y);
/* Bytes the loop–tree solve holds: its N × N complex matrix, solutions
 * and graph (its loops' lists, a few MB at most where the matrix takes GB,
 * not counted); for a memory estimate. */
size_t sv_em_loop_tree_bytes(const sv_em_model *m);
/* 1 if f is below the loop–tree path's threshold (sv_em_solve and
 * sv_em_sweep_run solve it there). */
int sv_em_affine_low_frequency(const sv_em_affine *a, double freq_hz);
/* The planar model's sweep: sv_sweep_run over the frequencies above the
 * loop–tree path's threshold, each one below it solved by that path
 * (counted as exact solves); one result for all nfreq frequencies (> 0). */
sv_status sv_em_sweep_run(sv_ctx *ctx, const sv_em_affine *a, int nfreq, const double *freq,
                          const sv_sweep_options *opts, sv_sweep_result **out);

/* ---- DC ---------------------------------------------------------------------- */
/* The DC limit of the model (docs/em.md): the resistive network of the
 * metal. Y (P × P real, column-major): ports on one piece of metal joined
 * by its resistance, ports on separate pieces open (0). Lossy metal only
 * (SV_ERR_ARG for σ = ∞, where connected ports are shorted). */
sv_status sv_em_dc_admittance(sv_ctx *ctx, const sv_em_model *m, double *y);
/* S at DC (P × P, column-major) for references z0 (P values > 0), lossy or
 * lossless metal (connected ports then form an ideal junction). */
sv_status sv_em_dc_s(sv_ctx *ctx, const sv_em_model *m, const double *z0, double complex *s);

/* ---- network parameters -------------------------------------------------- */
/* Y (P × P, column-major) = Bᵀ·X from the solutions X (N × P) of Z·X = B:
 * the port currents for unit port voltages. */
sv_status sv_em_port_admittance(const sv_em_model *m, const double complex *x, int ldx, double complex *y);
/* Z = Y⁻¹ (SV_ERR_SINGULAR if Y is singular). P × P column-major. */
sv_status sv_em_y_to_z(int p, const double complex *y, double complex *z);
/* S = (I − R·Y·R)(I + R·Y·R)⁻¹ with R = diag(√z0_k), z0 > 0 real per port.
 * Where ports are joined by a near short (lossless metal far below its
 * first resonance: |z0·Y| ~ z0/(ωL)), forming I + R·Y·R rounds away the
 * small part of Y that S depends on: when the rounding bound
 * P·ε·max|R·Y·R| exceeds SV_EM_S_ROUNDING_MAX, SV_ERR_SINGULAR naming it
 * (S would be non-reciprocal or active by that much). */
#define SV_EM_S_ROUNDING_MAX 1e-9
sv_status sv_em_y_to_s(int p, const double complex *y, const double *z0, double complex *s);
/* That rounding bound, P·ε·max|R·Y·R|. */
double sv_em_y_to_s_rounding(int p, const double complex *y, const double *z0);
/* max |S − Sᵀ| entrywise. */
double sv_em_reciprocity_error(int p, const double complex *s);
/* Largest singular value of S (passive: ≤ 1). */
sv_status sv_em_max_singular_value(int p, const double complex *s, double *out);

/* What the checks users apply found, over all frequencies. */
typedef struct sv_em_s_checks {
    double reciprocity;  /* max |S − Sᵀ| */
    double max_singular; /* largest singular value of S (passive: ≤ 1) */
} sv_em_s_checks;
/* S at nf frequencies from Y (nf blocks of P × P, y + i·P·P, as a sweep
 * result's h) with references z0 (P values > 0) into s (the same layout);
 * checks (may be NULL: not computed) gets their worst values. The tiny
 * LAPACK calls run on one thread (sv_threads_serial_begin). */
sv_status sv_em_y_to_s_all(int p, int nf, const double complex *y, const double *z0, double complex *s,
                           sv_em_s_checks *checks);

/* ---- Touchstone ----------------------------------------------------------- */
typedef enum sv_em_ts_format { SV_EM_TS_RI = 0, SV_EM_TS_MA = 1, SV_EM_TS_DB = 2 } sv_em_ts_format;
typedef enum sv_em_ts_param { SV_EM_TS_S = 0, SV_EM_TS_Y = 1, SV_EM_TS_Z = 2 } sv_em_ts_param;

/* Options of a Touchstone file. A zero-filled struct (or opts = NULL) means
 * the defaults, the same as sv_em_ts_options_default. */
#define SV_EM_TS_VERSION_FOR_Z0 (-1)
typedef struct sv_em_ts_options {
    int version;               /* 1 (1.1) or 2 (2.0); 0 = 1; SV_EM_TS_VERSION_FOR_Z0: 1 when every
                                  port has the same z0, else 2 (which alone holds several) */
    sv_em_ts_format format;    /* default RI */
    sv_em_ts_param param;      /* default S */
    const char *unit;          /* "Hz", "kHz", "MHz", "GHz" (NULL = "GHz") */
    const char *comment;       /* optional text written as ! lines, one per '\n' (control characters
                                  other than tab written as '?'; NULL = none) */
} sv_em_ts_options;
/* Version 1, RI, S, GHz, no comment. */
void sv_em_ts_options_default(sv_em_ts_options *opts);

/* Write nf frequencies (ascending, Hz) of P × P column-major data (data[f·P·P
 * + i + j·P] = N_ij at freq[f]) with reference z0 (equal for all ports in
 * version 1). Written to a temporary file in the same folder, then renamed. */
sv_status sv_em_touchstone_write(const char *path, const sv_em_ts_options *opts, int p, int nf,
                                 const double *freq_hz, const double complex *data, const double *z0);

/* A Touchstone file read back: data in the layout above, converted to
 * real/imaginary (Y and Z in siemens and ohms whatever the version). */
typedef struct sv_em_touchstone {
    int p, nf;                /* ports, frequencies */
    int version;              /* 1 or 2 */
    sv_em_ts_param param;
    double complex *data;     /* nf × p × p */
    double *freq_hz;          /* nf (in data's allocation) */
    double *z0;               /* p: the reference of each port (in data's allocation) */
    sv_ctx *ctx;              /* the context it was allocated from (sv_em_touchstone_destroy) */
} sv_em_touchstone;
/* Read a Touchstone 1.1 or 2.0 file written in any of the formats above
 * (used by tests). The number of ports comes from [Number of Ports], else
 * from the .sNp extension. Free with sv_em_touchstone_destroy. */
sv_status sv_em_touchstone_read(sv_ctx *ctx, const char *path, sv_em_touchstone **out);
void sv_em_touchstone_destroy(sv_em_touchstone *t);

#ifdef __cplusplus
}
#endif
#endif
