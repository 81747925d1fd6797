/* Solvent sparse engine: an LU compiled for one sparsity pattern, refactored
 * many times with new numbers, and Jacobian colouring.
 *
 * Workflow (done once per pattern):
 *   sv_sparse_pattern_from_csr / _from_coo / _from_mask  -> validated pattern
 *   sv_sparse_lu_analyse                                  -> ordering + exact symbolic LU
 *   sv_sparse_color                                       -> colouring for J recovery
 * Then, millions of times:
 *   write values into the LU buffer (sv_sparse_lu_load / _load_shifted, or a
 *   colour-wise recovery straight into the slots), sv_sparse_lu_factor,
 *   sv_sparse_lu_solve; or the _batch variants over W matrices at once.
 *
 * The pattern must be a SUPERSET of the true nonzeros of every matrix
 * loaded: the symbolic analysis reserves slots only for the entries it is
 * told about and their fill, so a nonzero outside the pattern has nowhere to
 * go (it is dropped, and the factors are those of a different matrix).
 *
 * Buffer layout: one array of nnz(L+U) values in CSR order of the permuted
 * matrix P·A·Pᵀ: in each row, L entries strictly left of the diagonal, then
 * the diagonal, then U to its right. After factorisation the diagonal slot
 * holds 1/U_ii. Batched buffers are slot-major: value of slot s for lane w
 * at s·W + w (likewise vectors: entry i of lane w at i·W + w). */
#ifndef SOLVENT_SPARSE_H
#define SOLVENT_SPARSE_H

#include <stdint.h>
#include <stdio.h>

#include "solvent/core.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---- patterns ----------------------------------------------------------- */
typedef struct sv_sparse_pattern sv_sparse_pattern;

/* n × n pattern in CSR (row pointers of length n+1, column indices). Indices
 * are checked to be in range; duplicates are merged; columns sorted; the
 * diagonal is added where missing. */
sv_status sv_sparse_pattern_from_csr(sv_ctx *ctx, int n, const int *rowptr, const int *colind,
                                     sv_sparse_pattern **out);
/* From nnz coordinate pairs (0-based). */
sv_status sv_sparse_pattern_from_coo(sv_ctx *ctx, int n, int nnz, const int *rows, const int *cols,
                                     sv_sparse_pattern **out);
/* From a dense row-major n × n 0/1 mask (non-zero byte = entry). */
sv_status sv_sparse_pattern_from_mask(sv_ctx *ctx, int n, const unsigned char *mask,
                                      sv_sparse_pattern **out);
/* The full n × n pattern (no structure known). */
sv_status sv_sparse_pattern_dense(sv_ctx *ctx, int n, sv_sparse_pattern **out);
void sv_sparse_pattern_destroy(sv_sparse_pattern *p);
/* Pattern files: Matrix Market coordinate format ("%%MatrixMarket matrix
 * coordinate pattern general", then "n n nnz", then 1-based "i j" lines;
 * real/integer/complex fields are accepted and their values ignored,
 * symmetric files are mirrored). Errors name the file and line. */
sv_status sv_sparse_pattern_read_mm(sv_ctx *ctx, const char *path, sv_sparse_pattern **out);
sv_status sv_sparse_pattern_write_mm(const sv_sparse_pattern *p, FILE *out);

int sv_sparse_pattern_n(const sv_sparse_pattern *p);
int sv_sparse_pattern_nnz(const sv_sparse_pattern *p);
const int *sv_sparse_pattern_rowptr(const sv_sparse_pattern *p);  /* n+1 */
const int *sv_sparse_pattern_colind(const sv_sparse_pattern *p);  /* nnz, sorted per row */
/* Entry index of (i, j) in CSR order, or -1 when (i, j) is not in the pattern. */
int sv_sparse_pattern_find(const sv_sparse_pattern *p, int i, int j);

/* ---- symbolic analysis -------------------------------------------------- */
typedef enum sv_sparse_ordering {
    SV_SPARSE_ORDER_AMD = 0,     /* SuiteSparse AMD on the pattern of S + Sᵀ */
    SV_SPARSE_ORDER_NATURAL = 1  /* the given order */
} sv_sparse_ordering;

typedef struct sv_sparse_lu sv_sparse_lu;

/* Order the pattern and compute the exact L+U pattern, the slot maps and the
 * operation schedule. The analysis keeps no pointer to `pattern`. */
sv_status sv_sparse_lu_analyse(sv_ctx *ctx, const sv_sparse_pattern *pattern, sv_sparse_ordering ordering,
                               sv_sparse_lu **out);
void sv_sparse_lu_destroy(sv_sparse_lu *lu);

int sv_sparse_lu_n(const sv_sparse_lu *lu);
int sv_sparse_lu_nnz(const sv_sparse_lu *lu);           /* slots = nnz(L + U) */
long long sv_sparse_lu_flops(const sv_sparse_lu *lu);   /* multiply-adds per factor + solve */
/* perm[k] = original index of row/column k of P·A·Pᵀ. */
const int *sv_sparse_lu_perm(const sv_sparse_lu *lu);
/* Slot in the buffer of pattern entry e (CSR order of the pattern analysed). */
const int *sv_sparse_lu_entry_slot(const sv_sparse_lu *lu);
/* Slot of the original diagonal entry (i, i), i in original numbering. */
const int *sv_sparse_lu_diag_slot(const sv_sparse_lu *lu);
/* Pattern hash: identifies the slot layout and operation sequence, used to
 * match generated kernels to an analysis. */
uint64_t sv_sparse_lu_hash(const sv_sparse_lu *lu);
/* Structure of L+U in the permuted numbering (CSR, columns sorted):
 * rowptr has n+1 entries, colind nnz. Slot s is colind's position s. */
const int *sv_sparse_lu_rowptr(const sv_sparse_lu *lu);
const int *sv_sparse_lu_colind(const sv_sparse_lu *lu);
/* Multiply-subtract updates in one factorisation (the bulk of the flops). */
long long sv_sparse_lu_updates(const sv_sparse_lu *lu);

/* ---- loading values ----------------------------------------------------- */
/* buf = A: clear every slot (fill included), then scatter the pattern's
 * values (CSR order of the analysed pattern). */
void sv_sparse_lu_load(const sv_sparse_lu *lu, const double *values, double *buf);
/* buf = shift·I − J, J given as pattern values: what M = I/(hγ) − J needs. */
void sv_sparse_lu_load_shifted(const sv_sparse_lu *lu, const double *values, double shift, double *buf);

/* Lane w of a slot-major batch buffer of W lanes (the other lanes are left
 * alone): the same as the two functions above for one lane. */
sv_status sv_sparse_lu_load_lane(const sv_sparse_lu *lu, int W, int w, const double *values, double *buf);
sv_status sv_sparse_lu_load_shifted_lane(const sv_sparse_lu *lu, int W, int w, const double *values, double shift,
                                         double *buf);

/* A whole batch at once: values entry-major (pattern entry e of lane w at
 * e·W + w, the layout a batched Jacobian evaluation writes naturally);
 * shift has W entries (one per lane: h and γ may differ per trajectory).
 * Same results as the per-lane loads, faster for W > 1. */
sv_status sv_sparse_lu_load_batch(const sv_sparse_lu *lu, int W, const double *values, double *buf);
sv_status sv_sparse_lu_load_shifted_batch(const sv_sparse_lu *lu, int W, const double *values, const double *shift,
                                          double *buf);
sv_status sv_sparse_lu_load_batch_f32(const sv_sparse_lu *lu, int W, const double *values, float *buf);
sv_status sv_sparse_lu_load_shifted_batch_f32(const sv_sparse_lu *lu, int W, const double *values,
                                              const double *shift, float *buf);

/* ---- numeric kernels (no pivoting) -------------------------------------- */
/* Factor in place. SV_OK, or SV_ERR_SINGULAR for a zero or non-finite
 * pivot (the message names its row); the factorisation then still completes
 * and the result carries inf/NaN, never a crash. info (may be NULL)
 * receives 0, or 1 + the permuted row of the first bad pivot, as LAPACK's
 * INFO does (and as the batch kernels' flags do per lane). */
sv_status sv_sparse_lu_factor(const sv_sparse_lu *lu, double *buf, int *info);
/* x = A⁻¹ b with b and x in original numbering; x may alias b. work: n doubles. */
void sv_sparse_lu_solve(const sv_sparse_lu *lu, const double *buf, const double *b, double *x, double *work);

/* Single precision versions (same slots and operation order). */
void sv_sparse_lu_load_f32(const sv_sparse_lu *lu, const double *values, float *buf);
void sv_sparse_lu_load_shifted_f32(const sv_sparse_lu *lu, const double *values, double shift, float *buf);
/* (shift − J_ii is formed in double and rounded once to float.) */
sv_status sv_sparse_lu_load_lane_f32(const sv_sparse_lu *lu, int W, int w, const double *values, float *buf);
sv_status sv_sparse_lu_load_shifted_lane_f32(const sv_sparse_lu *lu, int W, int w, const double *values,
                                             double shift, float *buf);
sv_status sv_sparse_lu_factor_f32(const sv_sparse_lu *lu, float *buf, int *info);
void sv_sparse_lu_solve_f32(const sv_sparse_lu *lu, const float *buf, const float *b, float *x, float *work);

/* Batches of W matrices sharing the pattern, slot-major (see above). W is 1,
 * 2, 4 or 8. The lanes are independent matrices, so a bad pivot is a
 * lane's result, not the call's: the factor returns SV_OK for valid
 * arguments and flags[w] receives lane w's info (0, or 1 + the permuted row
 * of its first bad pivot); flags may be NULL. b, x, work: n·W values,
 * slot-major. */
sv_status sv_sparse_lu_factor_batch(const sv_sparse_lu *lu, int W, double *buf, int *flags);
sv_status sv_sparse_lu_solve_batch(const sv_sparse_lu *lu, int W, const double *buf, const double *b, double *x,
                                   double *work);
/* nrhs systems with the same W factors at once (double): right-hand side r
 * at b + r·n·W, its solution at x + r·n·W (x may alias b), work: nrhs·n·W
 * values. Each solution is bit for bit that of its own
 * sv_sparse_lu_solve_batch call; they are faster together because their
 * substitutions overlap (the table-driven kernel, which for several
 * right-hand sides beats one straight-line call each; a lone one takes the
 * straight-line kernel where installed). */
sv_status sv_sparse_lu_solve_batch_multi(const sv_sparse_lu *lu, int W, int nrhs, const double *buf, const double *b,
                                         double *x, double *work);
sv_status sv_sparse_lu_factor_batch_f32(const sv_sparse_lu *lu, int W, float *buf, int *flags);
sv_status sv_sparse_lu_solve_batch_f32(const sv_sparse_lu *lu, int W, const float *buf, const float *b, float *x,
                                       float *work);

/* ---- straight-line kernels ---------------------------------------------- */
/* A table of kernels generated for one analysis (by `solvent codegen` or
 * sv_sparse_codegen_write, compiled into the user's program, or loaded at
 * run time by sv_sparse_lu_compile). Every kernel performs exactly the
 * operations of the table-driven kernel in the same order, so results agree
 * bit for bit. A NULL entry means "use the table-driven kernel".
 * Batched entries are indexed by lanes: [0] W = 1, [1] W = 2, [2] W = 4,
 * [3] W = 8; their flags argument is never NULL. */
#define SV_SPARSE_KERNELS_ABI 1
typedef struct sv_sparse_kernels {
    int abi;        /* SV_SPARSE_KERNELS_ABI of the generator */
    uint64_t hash;  /* sv_sparse_lu_hash of the analysis it was generated for */
    int n, nnz;
    int (*factor)(double *buf); /* returns the info value (0, or 1 + the row of a bad pivot) */
    void (*solve)(const double *buf, const double *b, double *x, double *work);
    int (*factor_f32)(float *buf);
    void (*solve_f32)(const float *buf, const float *b, float *x, float *work);
    void (*factor_batch[4])(double *buf, int *flags);
    void (*solve_batch[4])(const double *buf, const double *b, double *x, double *work);
    void (*factor_batch_f32[4])(float *buf, int *flags);
    void (*solve_batch_f32[4])(const float *buf, const float *b, float *x, float *work);
} sv_sparse_kernels;

/* Use `k` for this analysis from now on (k = NULL: back to the table-driven
 * kernels). Refused with SV_ERR_ARG unless k->abi, hash, n and nnz match.
 * `k` must outlive its use. Not thread-safe against concurrent kernel calls
 * on the same analysis: install kernels before sharing it. */
sv_status sv_sparse_lu_use_kernels(sv_sparse_lu *lu, const sv_sparse_kernels *k);
/* The kernels in use (NULL when table-driven). */
const sv_sparse_kernels *sv_sparse_lu_kernels(const sv_sparse_lu *lu);

/* Which kernels to emit (bit mask) and the size limits of straight-line
 * code: beyond max_updates factor updates or max_subst substitution
 * multiply-adds, generation is refused (SV_ERR_UNSUPPORTED) because the
 * code would be too large to compile or to stay in the instruction cache. */
enum {
    SV_SPARSE_EMIT_F64 = 1,         /* factor + solve, double      */
    SV_SPARSE_EMIT_F32 = 2,         /* factor + solve, float       */
    SV_SPARSE_EMIT_BATCH4_F64 = 4,  /* W = 4 lanes, double         */
    SV_SPARSE_EMIT_BATCH8_F64 = 8,  /* W = 8 lanes, double         */
    SV_SPARSE_EMIT_BATCH8_F32 = 16, /* W = 8 lanes, float          */
    SV_SPARSE_EMIT_BATCH2_F64 = 32, /* W = 2 lanes, double         */
    SV_SPARSE_EMIT_BATCH4_F32 = 64, /* W = 4 lanes, float          */
    SV_SPARSE_EMIT_ALL = 127,
    SV_SPARSE_EMIT_DEFAULT = 31     /* F64 | F32 | BATCH4_F64 | BATCH8_F64 | BATCH8_F32 */
};
/* A zero-filled struct emits the default kernels but with limits of 0, which
 * refuse any pattern with an update: the limits are values, not "unset"
 * (start from sv_sparse_codegen_options_default). */
typedef struct sv_sparse_codegen_options {
    unsigned emit;          /* SV_SPARSE_EMIT_* mask; 0 = SV_SPARSE_EMIT_DEFAULT (the default) */
    long long max_updates;  /* default 50000 */
    long long max_subst;    /* default 50000 */
} sv_sparse_codegen_options;
void sv_sparse_codegen_options_default(sv_sparse_codegen_options *opt);

/* Write straight-line C for `lu` to `out`: a translation unit that defines
 * `const sv_sparse_kernels NAME;` (NAME as sv_sparse_codegen_check_name
 * accepts), to be compiled with the user's program and passed to
 * sv_sparse_lu_use_kernels. opt may be NULL (defaults). */
sv_status sv_sparse_codegen_write(const sv_sparse_lu *lu, const sv_sparse_codegen_options *opt, const char *name,
                                  FILE *out);
/* SV_OK when `name` can name the generated table: a C identifier that is
 * not a keyword (up to C23), not reserved (at file scope: starting with _)
 * and none of the generated file's own names (sv_sparse_kernels, d1_...,
 * f8_...); else SV_ERR_ARG saying which. */
sv_status sv_sparse_codegen_check_name(const char *name);

/* Runtime path: generate the C, compile it with the system C compiler into
 * a shared object in cache_dir (named by the pattern hash, reused when it is
 * already there), load it and install its kernels. cc: absolute path of the
 * compiler (NULL: "/usr/bin/cc"); the library reads no environment, so the
 * caller chooses cache_dir and cc. Returns SV_ERR_UNSUPPORTED (the analysis
 * keeps its table-driven kernels, which are always correct) when there is
 * no compiler, the code would exceed the limits, or loading fails; the
 * message says which. The shared object stays loaded until
 * sv_sparse_lu_destroy or sv_sparse_lu_unload_kernels. */
sv_status sv_sparse_lu_compile(sv_sparse_lu *lu, const sv_sparse_codegen_options *opt, const char *cache_dir,
                               const char *cc);
/* Back to table-driven kernels, unloading a shared object loaded by
 * sv_sparse_lu_compile. */
void sv_sparse_lu_unload_kernels(sv_sparse_lu *lu);

/* ---- colouring ---------------------------------------------------------- */
typedef struct sv_sparse_coloring sv_sparse_coloring;

/* Colour the column intersection graph (columns sharing a row get different
 * colours), trying several orderings and keeping the fewest colours. */
sv_status sv_sparse_color(sv_ctx *ctx, const sv_sparse_pattern *pattern, sv_sparse_coloring **out);

/* Which greedy ordering colours the columns. */
typedef enum sv_sparse_color_order {
    SV_SPARSE_COLOR_BEST = 0,        /* natural, largest-first, smallest-last, incidence-degree and
                                        DSATUR (the last three up to n = 6000); the fewest colours
                                        win, the earlier ordering on a tie */
    SV_SPARSE_COLOR_NATURAL = 1,     /* one greedy pass in column order */
    SV_SPARSE_COLOR_COLUMN_COUNT = 2 /* one greedy pass by decreasing entries per column, ties in
                                        column order */
} sv_sparse_color_order;

/* A zero-filled struct means the defaults. */
typedef struct sv_sparse_color_options {
    sv_sparse_color_order order; /* default SV_SPARSE_COLOR_BEST */
    int add_diagonal;            /* 1: colour as if every (i, i) were an entry (what recovery into
                                    the LU buffer of M = shift·I − J needs); default 0 */
} sv_sparse_color_options;
void sv_sparse_color_options_default(sv_sparse_color_options *opt);

/* Colour an n × n CSR structure as given (no diagonal added unless asked,
 * columns in any order, duplicates allowed): for a Jacobian whose own
 * pattern is not an sv_sparse_pattern, e.g. one lacking diagonal entries.
 * The colouring's entry groups then refer to this structure's entries
 * (e = 0 .. rowptr[n]-1), which sv_sparse_recover_color_values fills.
 * opt may be NULL (defaults). */
sv_status sv_sparse_color_csr(sv_ctx *ctx, int n, const int *rowptr, const int *colind,
                              const sv_sparse_color_options *opt, sv_sparse_coloring **out);
void sv_sparse_coloring_destroy(sv_sparse_coloring *c);
int sv_sparse_coloring_count(const sv_sparse_coloring *c);
const int *sv_sparse_coloring_colors(const sv_sparse_coloring *c);   /* colour of each column */
/* A colouring given by the caller (colors[j] in [0, n)), e.g. one computed
 * elsewhere; only the range is checked here, sv_sparse_coloring_check
 * tells whether it is valid. */
sv_status sv_sparse_coloring_from_colors(sv_ctx *ctx, const sv_sparse_pattern *pattern, const int *colors,
                                         sv_sparse_coloring **out);
/* SV_OK when every colour group is structurally orthogonal, else SV_ERR_PATTERN. */
sv_status sv_sparse_coloring_check(const sv_sparse_coloring *c, const sv_sparse_pattern *pattern);
/* Recovery: jv = J·d_c, d_c the 0/1 seed of colour c (original numbering).
 * For every pattern entry (i, j) with colour(j) = c: buf[slot(i, j)] += alpha·jv[i].
 * (alpha = −1 builds −J; add the shift on the diagonal slots afterwards.)
 * The colouring must be of the pattern `lu` analysed. */
void sv_sparse_recover_color(const sv_sparse_coloring *c, const sv_sparse_lu *lu, int color, const double *jv,
                             double alpha, double *buf);
/* The same into values in the coloured structure's entry order: for every
 * entry e = (i, j) of colour c, values[e] = jv[i], or jv[i] / scale[j] when
 * scale is not NULL (the per-column increments of finite differences or a
 * complex step with a non-unit seed). */
void sv_sparse_recover_color_values(const sv_sparse_coloring *c, int color, const double *jv, const double *scale,
                                    double *values);

#ifdef __cplusplus
}
#endif
#endif
