/* Solvent design: pixelated circuits designed against masks on |S|.
 *
 * A design is a board (a planar project: grid, stack-up, ports, fixed
 * metal such as the launches), a region of its pixels that may flip, and
 * masks on |S_ij| in dB over frequency bands. Direct binary search (DBS)
 * visits the region's pixels in a random order, flips each (with its
 * mirror partners), and keeps the flip when the cost falls. Every trial is
 * evaluated exactly at the design frequencies by a low-rank update of the
 * current map's solution (docs/design.md, "Method"), never by a fresh
 * assembly and factorisation.
 *
 *     sv_design_spec *spec;
 *     sv_design_spec_read(ctx, "filter.json", &spec);   // the spec file: docs/design.md
 *     sv_design_result *res;
 *     sv_design_run(ctx, spec, &res);                    // progress and cancel on ctx
 *     sv_design_result_map(res)                          // the best map found
 *
 * The pieces are public for callers that search their own way: the cost
 * (sv_design_cost), the evaluator of flips (sv_design_eval_*) and the
 * constraints' check (sv_design_spec_admissible).
 *
 * Maps are the drawing grid's cells, map[i + nx·j], j = 0 the bottom row,
 * nonzero = metal (the layout of sv_em_project_spec.pixels). */
#ifndef SOLVENT_DESIGN_H
#define SOLVENT_DESIGN_H

#include <complex.h>
#include <stddef.h>

#include "solvent/core.h"
#include "solvent/em.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---- the cost --------------------------------------------------------------- */
typedef enum sv_design_sense {
    SV_DESIGN_MAX = 0, /* |S_ij| ≤ bound over the band */
    SV_DESIGN_MIN = 1  /* |S_ij| ≥ bound over the band */
} sv_design_sense;

/* One mask: a bound on |S_{out+1, in+1}| in dB over [start_hz, stop_hz]. */
typedef struct sv_design_mask {
    double start_hz, stop_hz;
    int out, in;        /* 0-based port indices: "S21" is out = 1, in = 0 */
    double bound_db;
    sv_design_sense sense;
    double weight;      /* > 0; 0 means 1 */
} sv_design_mask;

/* The cost of S (nf blocks of p × p, column-major, s[f·p·p + r + c·p]) at
 * freq_hz (nf values): per mask, its weight times the root mean square of
 * the violation in dB (20·log10|S_ij| beyond the bound, 0 where the bound
 * holds) over the frequencies inside its band, summed over the masks. 0
 * means every mask is met. A mask with no frequency inside its band
 * contributes 0. |S| = 0 counts as −600 dB. */
sv_status sv_design_cost(int nmasks, const sv_design_mask *masks, int nf, const double *freq_hz, int p,
                         const double complex *s, double *cost);

/* ---- the spec ----------------------------------------------------------------- */
typedef enum sv_design_symmetry {
    SV_DESIGN_SYM_NONE = 0,
    SV_DESIGN_SYM_X = 1,  /* mirror image left ↔ right (x → −x about the region's centre) */
    SV_DESIGN_SYM_Y = 2,  /* mirror image top ↔ bottom */
    SV_DESIGN_SYM_XY = 3  /* both */
} sv_design_symmetry;

typedef enum sv_design_start {
    SV_DESIGN_START_METAL = 0,  /* every design pixel metal */
    SV_DESIGN_START_MAP = 1,    /* a given map (CSV of the whole board) */
    SV_DESIGN_START_RANDOM = 2  /* random pixels with a seed and a fill fraction */
} sv_design_start;

/* A DC constraint: ports a and b (0-based) joined by metal (required = 1)
 * or not (required = 0). */
typedef struct sv_design_dc {
    int a, b;
    int required;
} sv_design_dc;

typedef struct sv_design_spec sv_design_spec;

/* Read and validate a spec file (JSON, docs/design.md "Spec reference");
 * paths inside it are relative to its folder. Errors (SV_ERR_PARSE,
 * SV_ERR_IO, SV_ERR_ARG) name the field, the value and what was expected. */
sv_status sv_design_spec_read(sv_ctx *ctx, const char *path, sv_design_spec **out);
/* The same from text; `dir` (may be NULL: the working folder) resolves its
 * relative paths and `name` is used in messages. */
sv_status sv_design_spec_parse(sv_ctx *ctx, const char *text, size_t len, const char *name, const char *dir,
                               sv_design_spec **out);
void sv_design_spec_destroy(sv_design_spec *spec);
/* The caller's thread count for the search (a command line's --threads, a
 * Python argument): replaces the spec's "threads" (> 0), or 0 to keep it.
 * Without either the search runs on the context's threads. */
sv_status sv_design_spec_set_threads(sv_design_spec *spec, int threads);

/* The board as read, and the board with every design pixel metal (the
 * model the evaluator restricts to each map). */
const sv_em_project *sv_design_spec_board(const sv_design_spec *spec);
const sv_em_project *sv_design_spec_full(const sv_design_spec *spec);
/* The path of the board's project file as the spec names it, resolved. */
const char *sv_design_spec_board_file(const sv_design_spec *spec);
/* The design region: nx·ny flags (the board's grid), 1 = may flip. */
const unsigned char *sv_design_spec_region(const sv_design_spec *spec);
sv_design_symmetry sv_design_spec_symmetry(const sv_design_spec *spec);
const sv_design_mask *sv_design_spec_masks(const sv_design_spec *spec, int *nmasks);
/* The design frequencies (Hz, ascending). */
const double *sv_design_spec_frequencies(const sv_design_spec *spec, int *nf);
int sv_design_spec_passes(const sv_design_spec *spec);
double sv_design_spec_time_budget(const sv_design_spec *spec); /* s; 0 = none */
int sv_design_spec_threads(const sv_design_spec *spec);        /* 0 = the context's */
/* The start map (nx·ny: the board's fixed cells with the design pixels
 * as the spec's start says). */
const unsigned char *sv_design_spec_start(const sv_design_spec *spec);

/* The constraints' count of violations of a map (0: admissible): each
 * 2 × 2 block of cells whose metal touches only at a corner (unless the spec
 * allows corner contacts) and each DC constraint not met. */
int sv_design_spec_violations(const sv_design_spec *spec, const unsigned char *map);

/* The board with `map`'s metal as a project of its own (nx·ny cells; the
 * board's ports, stack-up, effects and band): the design as a planar job
 * runs it. */
sv_status sv_design_spec_project(sv_ctx *ctx, const sv_design_spec *spec, const unsigned char *map,
                                 sv_em_project **out);
/* The same project as JSON text (malloc'ed, the caller frees): the file
 * `solvent design` writes beside its map. */
sv_status sv_design_spec_project_json(const sv_design_spec *spec, const unsigned char *map, char **out);

/* ---- the evaluator: S of a map and of its flips ------------------------------ */
/* The model of `full` (a board whose design pixels are all metal) at nf
 * design frequencies, restricted exactly to any map that differs from it
 * only in `region`'s pixels: each map's moment matrix is the principal
 * submatrix of the full model's on the rooftops the map has (docs/design.md,
 * "Method"). Effects whose entries depend on a rooftop's neighbours (thick
 * metal's walls, edge profiles, radiation, dispersion) or on the whole map
 * (the dielectric's loss as a ratio of Ψ) are refused, naming the effect
 * and the project field that switches it. */
typedef struct sv_design_eval sv_design_eval;

/* Bytes the evaluator holds for that model and region at nf frequencies,
 * beside the model's terms; for a memory estimate. */
sv_status sv_design_eval_bytes(const sv_em_project *full, const unsigned char *region, int nf, size_t *out);
sv_status sv_design_eval_create(sv_ctx *ctx, const sv_em_project *full, const unsigned char *region, int nf,
                                 const double *freq_hz, sv_design_eval **out);
/* The same with `map` (nx·ny; only the region's cells are read) the
 * current map from the start, as sv_design_eval_set_map would make it but
 * without first solving the full map (NULL: the full map). */
sv_status sv_design_eval_create_at(sv_ctx *ctx, const sv_em_project *full, const unsigned char *region, int nf,
                                   const double *freq_hz, const unsigned char *map, sv_design_eval **out);
void sv_design_eval_destroy(sv_design_eval *ev);
int sv_design_eval_ports(const sv_design_eval *ev);
int sv_design_eval_unknowns(const sv_design_eval *ev);        /* the full model's N */
int sv_design_eval_design_unknowns(const sv_design_eval *ev); /* of which touch the region */
/* Frequencies rebuilt from scratch after accepted flips whose pivots
 * cancelled too many digits (docs/design.md, "Accuracy"), so far. */
long sv_design_eval_rebuilds(const sv_design_eval *ev);

/* Make `map` (nx·ny; only the region's cells are read) the current map,
 * from scratch: at each frequency the fixed unknowns and the map's
 * rooftops eliminated by a factorisation (a fresh evaluation). */
sv_status sv_design_eval_set_map(sv_design_eval *ev, const unsigned char *map);
/* The current map (nx·ny). */
const unsigned char *sv_design_eval_map(const sv_design_eval *ev);
/* S (nf blocks of p × p) of the current map. */
sv_status sv_design_eval_s(const sv_design_eval *ev, double complex *s);
/* S of the current map with the npix cells pix[] (i + nx·j, in the region,
 * distinct) flipped, by a low-rank update; the current map is unchanged. */
sv_status sv_design_eval_trial(sv_design_eval *ev, int npix, const int *pix, double complex *s);
/* Flip them in the current map, updating its solution. */
sv_status sv_design_eval_accept(sv_design_eval *ev, int npix, const int *pix);
/* Rebuild the current map's solution from scratch; *drift (may be NULL)
 * gets the largest |ΔS| between the updated S and the fresh one. */
sv_status sv_design_eval_refresh(sv_design_eval *ev, double *drift);

/* ---- the search --------------------------------------------------------------- */
typedef struct sv_design_report {
    int passes;            /* passes completed (a pass stopped by the budget or a cancel counts not) */
    long tried, accepted;  /* flips evaluated and kept */
    int refreshes;         /* solutions rebuilt from scratch (the start's included) */
    long rebuilds;         /* single frequencies rebuilt after pivots that cancelled many digits */
    double max_drift;      /* the largest |ΔS| a rebuild found between the updated and fresh S */
    double start_cost, cost; /* the start map's and the best map's cost */
    int violations;        /* the best map's constraint violations (0: admissible) */
    int stopped;           /* 1: the time budget ended it; 2: a cancel */
    double seconds, seconds_setup;
    int unknowns, design_unknowns, nfreq;
} sv_design_report;

typedef struct sv_design_result sv_design_result;

/* Run the spec's DBS. The context's progress sees phase "design pass K/P:
 * tried T, accepted A, cost C" with the fraction of the passes done; a
 * stop (or the time budget) ends the search within one trial and the
 * result holds the best map so far (SV_OK, report.stopped says why).
 * Errors: the evaluator's, or SV_ERR_BUDGET before anything large. */
sv_status sv_design_run(sv_ctx *ctx, const sv_design_spec *spec, sv_design_result **out);
/* The search's current map as it goes (for a front end that draws it):
 * called on the searching thread with the start map and after each kept
 * flip — the map (nx·ny, valid during the call only), its cost and its
 * constraint violations. It must return quickly. */
typedef void (*sv_design_watch_fn)(const unsigned char *map, double cost, int violations, void *user);
/* sv_design_run with a watch (NULL: none). */
sv_status sv_design_run_watched(sv_ctx *ctx, const sv_design_spec *spec, sv_design_watch_fn watch, void *user,
                                sv_design_result **out);
void sv_design_result_destroy(sv_design_result *res);
const unsigned char *sv_design_result_map(const sv_design_result *res);
/* S of the best map at the design frequencies (nf blocks of p × p). */
const double complex *sv_design_result_s(const sv_design_result *res, int *nf, int *p);
/* The cost after each accepted flip: n entries of (trials so far, cost). */
const double *sv_design_result_history(const sv_design_result *res, int *n);
void sv_design_result_report(const sv_design_result *res, sv_design_report *out);

#ifdef __cplusplus
}
#endif
#endif
