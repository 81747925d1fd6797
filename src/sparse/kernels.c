/* Table-driven numeric kernels: unpivoted up-looking LU in place and the
 * row-oriented triangular solves, for one matrix or W lanes (slot-major),
 * in double and single precision. The operation order here is THE order:
 * codegen.c emits the very same operations as straight-line code, and the
 * tests check that both agree bit for bit. Contraction into FMA is disabled
 * (see module.cmake) so the order and rounding of every operation is what
 * the source says, whichever compiler builds either emission.
 *
 * Each body is written once, as plain C over type and name macros, in a
 * template this file includes per precision and lane count (W stays a
 * compile-time constant in every copy, so the lane loops vectorise):
 *   kernels_table_tmpl.h      one matrix (factor_table, solve_table)
 *   kernels_lanes_tmpl.h      W lanes (factor_batch, solve_batch)
 *   kernels_multi_tmpl.h      W lanes, several right-hand sides (solve_multi;
 *                             its body per group size in kernels_multi_rhs_tmpl.h)
 *   kernels_entry_tmpl.h      the public calls of one precision
 * The templates are included here, not compiled apart, so that they take
 * this file's compile options (module.cmake). */
#include <math.h>
#include <string.h>

#include "sparse_internal.h"

#if defined(__clang__)
#pragma STDC FP_CONTRACT OFF
#endif

/* A pivot is bad when it is zero or not finite; the first bad row (1-based)
 * is reported, elimination goes on and the inf/NaN propagate. */
#define SV_BAD_PIVOT(d) (!((d) != 0) || !isfinite(d))

/* The most lanes a batch call takes (check_batch). */
#define SV_BATCH_WMAX 8

/* Double: one matrix; W lanes with one and with several right-hand sides. */
#define T double
#define FN(x) x##_d
#include "kernels_table_tmpl.h"
#undef FN
#define W 1
#define FN(x) x##_d1
#include "kernels_lanes_tmpl.h"
#include "kernels_multi_tmpl.h"
#undef FN
#undef W
#define W 2
#define FN(x) x##_d2
#include "kernels_lanes_tmpl.h"
#include "kernels_multi_tmpl.h"
#undef FN
#undef W
#define W 4
#define FN(x) x##_d4
#include "kernels_lanes_tmpl.h"
#include "kernels_multi_tmpl.h"
#undef FN
#undef W
#define W 8
#define FN(x) x##_d8
#include "kernels_lanes_tmpl.h"
#include "kernels_multi_tmpl.h"
#undef FN
#undef W
#undef T

/* Single: one matrix; W lanes. */
#define T float
#define FN(x) x##_f
#include "kernels_table_tmpl.h"
#undef FN
#define W 1
#define FN(x) x##_f1
#include "kernels_lanes_tmpl.h"
#undef FN
#undef W
#define W 2
#define FN(x) x##_f2
#include "kernels_lanes_tmpl.h"
#undef FN
#undef W
#define W 4
#define FN(x) x##_f4
#include "kernels_lanes_tmpl.h"
#undef FN
#undef W
#define W 8
#define FN(x) x##_f8
#include "kernels_lanes_tmpl.h"
#undef FN
#undef W
#undef T

/* ---- public entry points ------------------------------------------------- */
static int lane_index(int W)
{
    switch (W) {
    case 1: return 0;
    case 2: return 1;
    case 4: return 2;
    case 8: return 3;
    default: return -1;
    }
}

/* Lane index of W for valid arguments, else -1 with the error recorded. */
static int check_batch(const sv_sparse_lu *lu, const void *buf, int W, const char *fn)
{
    if (!lu || !buf) {
        sv_error(SV_ERR_ARG, "%s: lu or buf is NULL", fn);
        return -1;
    }
    int li = lane_index(W);
    if (li < 0) sv_error(SV_ERR_ARG, "%s: W = %d: expected 1, 2, 4 or 8", fn, W);
    return li;
}

/* The scalar factor's result as a status, the kernel's flag as info. */
static sv_status pivot_status(const sv_sparse_lu *lu, int flag, int *info, const char *fn)
{
    if (info) *info = flag;
    if (!flag) return SV_OK;
    return sv_error(SV_ERR_SINGULAR, "%s: zero or non-finite pivot in row %d of the permuted matrix (original row %d)",
                    fn, flag - 1, lu->perm[flag - 1]);
}

/* The public calls: double, then single precision (the _f32 names). */
#define T double
#define FN(x) x##_d
#define FNW(x, w) x##_d##w
#define PUB(x) x
#include "kernels_entry_tmpl.h"
#undef PUB
#undef FNW
#undef FN
#undef T

#define T float
#define FN(x) x##_f
#define FNW(x, w) x##_f##w
#define PUB(x) x##_f32
#include "kernels_entry_tmpl.h"
#undef PUB
#undef FNW
#undef FN
#undef T

/* Right-hand sides per pass: 8, else 4, else what is left. Eight chains
 * cover a subtraction's latency and, at W = 8 with AVX-512, still keep
 * their partial sums in registers. */
static int multi_group(int left) { return left >= 8 ? 8 : left >= 4 ? 4 : left; }

sv_status sv_sparse_lu_solve_batch_multi(const sv_sparse_lu *lu, int W, int nrhs, const double *buf, const double *b,
                                         double *x, double *work)
{
    int li = check_batch(lu, buf, W, "sv_sparse_lu_solve_batch_multi");
    if (li < 0) return SV_ERR_ARG;
    if (nrhs < 0) return sv_error(SV_ERR_ARG, "sv_sparse_lu_solve_batch_multi: nrhs = %d: expected ≥ 0", nrhs);
    if (nrhs > 0 && (!b || !x || !work))
        return sv_error(SV_ERR_ARG, "sv_sparse_lu_solve_batch_multi: b, x or work is NULL");
    const size_t nw = (size_t)lu->n * W;
    for (int r0 = 0, g; r0 < nrhs; r0 += g) {
        g = multi_group(nrhs - r0);
        const double *bg = b + (size_t)r0 * nw;
        double *xg = x + (size_t)r0 * nw;
        if (g == 1 && lu->kern && lu->kern->solve_batch[li]) {
            lu->kern->solve_batch[li](buf, bg, xg, work); /* alone: straight-line code is faster */
            continue;
        }
        switch (W) {
        case 1: solve_multi_d1(lu, buf, bg, xg, work, nw, g); break;
        case 2: solve_multi_d2(lu, buf, bg, xg, work, nw, g); break;
        case 4: solve_multi_d4(lu, buf, bg, xg, work, nw, g); break;
        default: solve_multi_d8(lu, buf, bg, xg, work, nw, g); break;
        }
    }
    return SV_OK;
}
