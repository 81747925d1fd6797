/* Writing a matrix into the LU buffer: every slot cleared (fill included),
 * then the pattern's values scattered to their slots. The shifted forms
 * build shift·I − J with the diagonal computed as (shift − J_ii) in double
 * and rounded once. Each body is written once, as plain C over type and
 * name macros, and included here per precision (load_tmpl.h: one matrix,
 * one lane, a batch's dispatch) and per lane count (load_lanes_tmpl.h: a
 * whole batch, W a compile-time constant). */
#include <string.h>

#include "sparse_internal.h"

/* Double buffers (the unsuffixed public names): a whole batch per lane count, then the rest. */
#define T double
#define W 1
#define FN(x) x##_w1
#include "load_lanes_tmpl.h"
#undef FN
#undef W
#define W 2
#define FN(x) x##_w2
#include "load_lanes_tmpl.h"
#undef FN
#undef W
#define W 4
#define FN(x) x##_w4
#include "load_lanes_tmpl.h"
#undef FN
#undef W
#define W 8
#define FN(x) x##_w8
#include "load_lanes_tmpl.h"
#undef FN
#undef W
#define FN(x) x
#include "load_tmpl.h"
#undef FN
#undef T

/* Single-precision buffers (the _f32 names): a whole batch per lane count, then the rest. */
#define T float
#define W 1
#define FN(x) x##_w1_f32
#include "load_lanes_tmpl.h"
#undef FN
#undef W
#define W 2
#define FN(x) x##_w2_f32
#include "load_lanes_tmpl.h"
#undef FN
#undef W
#define W 4
#define FN(x) x##_w4_f32
#include "load_lanes_tmpl.h"
#undef FN
#undef W
#define W 8
#define FN(x) x##_w8_f32
#include "load_lanes_tmpl.h"
#undef FN
#undef W
#define FN(x) x##_f32
#include "load_tmpl.h"
#undef FN
#undef T
