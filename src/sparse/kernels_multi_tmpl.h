/* Up to eight right-hand sides of W lanes each (vector r at b + r·nw),
 * double only: every one takes solve_batch's operations in their order, so
 * its result is that of its own call bit for bit; together they share each
 * factor entry's load and their dependency chains (one per row) overlap.
 * The partial sums are GCC/Clang vectors of W lanes (as in codegen.c) in
 * named variables, one per right-hand side (those past R are dead code):
 * held in an array, or passed to memcpy, GCC kept them in memory, and
 * every chain step paid a store and a load.
 *
 * kernels.c defines
 *   W        lanes (1, 2, 4, 8)
 *   FN(x)    name mangling (x##_d1, ..., x##_d8)
 * and includes this file once per lane count; it includes
 * kernels_multi_rhs_tmpl.h once per group size R (1, 2, 3, 4, 8) and
 * defines FN(solve_multi), which picks one by the group's size. */

#define MV FN(sv_mv)
#if defined(__GNUC__)
/* 8-byte aligned, read and written in place (as codegen.c's kernels): no
 * vector crosses a call, whose convention GCC warns about without AVX-512 */
typedef double MV __attribute__((vector_size(sizeof(double) * W), aligned(sizeof(double))));
#define MV_LD(p) (*(const MV *)(p))
#define MV_ST(p, v) (*(MV *)(p) = (v))
#define MV_SUB_MUL(s, a, b) (s) -= (a) * (b)
#define MV_MUL(s, a) (s) *= (a)
#else
typedef struct { double v[W]; } MV;
static inline MV FN(sv_mv_ld)(const double *p)
{
    MV v;
    memcpy(&v, p, sizeof v);
    return v;
}
static inline void FN(sv_mv_st)(double *p, MV v) { memcpy(p, &v, sizeof v); }
#define MV_LD(p) FN(sv_mv_ld)(p)
#define MV_ST(p, v) FN(sv_mv_st)(p, v)
#define MV_SUB_MUL(s, a, b) for (int w_ = 0; w_ < W; w_++) (s).v[w_] -= (a).v[w_] * (b).v[w_]
#define MV_MUL(s, a) for (int w_ = 0; w_ < W; w_++) (s).v[w_] *= (a).v[w_]
#endif

/* Right-hand side r's steps in kernels_multi_rhs_tmpl.h (R, wi, wc, a, nw
 * in scope), taken for the eight named partial sums s0 … s7. */
#define MV_EACH(step) step(0) step(1) step(2) step(3) step(4) step(5) step(6) step(7)
#define MV_LOAD(r) if (r < R) s##r = MV_LD(wi + r * nw);
#define MV_UPDATE(r) if (r < R) { const MV c_ = MV_LD(wc + r * nw); MV_SUB_MUL(s##r, a, c_); }
#define MV_SCALE(r) if (r < R) MV_MUL(s##r, a);
#define MV_STORE(r) if (r < R) MV_ST(wi + r * nw, s##r);

#define R 1
#define FN_R(x) FN(x##_1)
#include "kernels_multi_rhs_tmpl.h"
#undef FN_R
#undef R
#define R 2
#define FN_R(x) FN(x##_2)
#include "kernels_multi_rhs_tmpl.h"
#undef FN_R
#undef R
#define R 3
#define FN_R(x) FN(x##_3)
#include "kernels_multi_rhs_tmpl.h"
#undef FN_R
#undef R
#define R 4
#define FN_R(x) FN(x##_4)
#include "kernels_multi_rhs_tmpl.h"
#undef FN_R
#undef R
#define R 8
#define FN_R(x) FN(x##_8)
#include "kernels_multi_rhs_tmpl.h"
#undef FN_R
#undef R

/* g right-hand sides (1, 2, 3, 4 or 8: multi_group in kernels.c) at once. */
static void FN(solve_multi)(const sv_sparse_lu *lu, const double *buf, const double *b, double *x, double *wk,
                            size_t nw, int g)
{
    switch (g) {
    case 1: FN(solve_multi_1)(lu, buf, b, x, wk, nw); break;
    case 2: FN(solve_multi_2)(lu, buf, b, x, wk, nw); break;
    case 3: FN(solve_multi_3)(lu, buf, b, x, wk, nw); break;
    case 4: FN(solve_multi_4)(lu, buf, b, x, wk, nw); break;
    default: FN(solve_multi_8)(lu, buf, b, x, wk, nw); break; /* g = 8 */
    }
}

#undef MV_STORE
#undef MV_SCALE
#undef MV_UPDATE
#undef MV_LOAD
#undef MV_EACH
#undef MV_MUL
#undef MV_SUB_MUL
#undef MV_ST
#undef MV_LD
#undef MV
