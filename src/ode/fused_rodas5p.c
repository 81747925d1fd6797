/* Rodas5P's step attempt for tiny dense systems (2 ≤ n ≤ 8, double LU, the
 * class lin.c holds in full storage) in one routine per (n, W): the lanes'
 * M, its factor and the stages are lane vectors the compiler keeps in
 * registers and L1, the tableau is folded into the code as constants, and
 * there are no per-stage calls besides the user's f.
 *
 * Every lane performs exactly the operations of the general attempt
 * (rodas5p.c with lin.c's dense kernels) in the same order: the same
 * left-to-right stage sums, M loaded as shift − J, the factor and solves of
 * dense_small.h, the same error norm, the same test for a numerically
 * singular M and lin.c's double-double factor and solves for such lanes.
 * So a trajectory's numbers do not depend on which path ran it, and the two
 * paths can be chosen per (n, W) freely: W = 4, 8 and 16 are fused, the
 * narrow lane counts of small ensembles take the general path. Solves with
 * up to ODE_FUSED_SENS_MAX sensitivity directions take the fused step in 4
 * and 8 lanes, its attempt carrying the directions beside the state
 * (fused_rodas5p_sens_tmpl.h); with more, the general path. */
#include <float.h>
#include <math.h>
#include <string.h>

#include "control.h"
#include "dense_small.h"
#include "events.h"
#include "fused_rodas5p.h"
#include "phases.h"
#include "sens.h"
#include "tableau_rodas5p.h"

/* Lane vectors are passed only to inlined functions: no calling convention
 * (whose rules for 64-byte vectors GCC warns about without AVX-512) is
 * involved. */
#pragma GCC diagnostic ignored "-Wpsabi"

static const rodas5p_tab T = ODE_RODAS5P_TABLEAU;

/* The most sensitivity directions the fused attempt carries in its lane
 * vectors (more take the general path). */
#define ODE_FUSED_SENS_MAX 8

/* Whether stage s's sum is stage s−1's with one more term 1·k_{s−1}
 * (Rodas5P's last three stages): then U_s = U_{s−1} + k_{s−1} is the same
 * sum, rounding included. A constant wherever s is. */
static inline int extends_previous(int s)
{
    if (s < 2 || T.a[s][s - 1] != 1.0) return 0;
    for (int j = 0; j < s - 1; j++)
        if (T.a[s][j] != T.a[s - 1][j]) return 0;
    return 1;
}

/* Doubles in one vector register of this machine. */
#if defined(__AVX512F__)
#define ODE_VNAT 8
#elif defined(__AVX__)
#define ODE_VNAT 4
#else
#define ODE_VNAT 2
#endif
typedef double ode_vnd __attribute__((vector_size(8 * ODE_VNAT)));
typedef long long ode_vnl __attribute__((vector_size(8 * ODE_VNAT)));

#define FW 4
#define FN(x) x##_w4
#include "fused_rodas5p_tmpl.h"
#undef VD
#undef VL
#undef FN
#undef FW
#define FW 8
#define FN(x) x##_w8
#include "fused_rodas5p_tmpl.h"
#undef VD
#undef VL
#undef FN
#undef FW
#define FW 16
#define FN(x) x##_w16
#include "fused_rodas5p_tmpl.h"
#undef VD
#undef VL
#undef FN
#undef FW

sv_status (*ode_fused_step_select(const ode_lanes *L))(ode_lanes *L)
{
    /* the fused stages are written for M = I (a mass matrix takes the general step) */
    if (!L->rodas || !L->lin || L->P->mass || !ode_lin_is_dense(L->lin) || L->n < 2 || L->n > 8) return NULL;
    if (L->sens && (L->nvec - 1 > ODE_FUSED_SENS_MAX || L->W > 8)) return NULL;
    switch (L->W) {
    case 4: return fused_tab_w4[L->n];
    case 8: return fused_tab_w8[L->n];
    case 16: return fused_tab_w16[L->n];
    default: return NULL;
    }
}

int ode_fused_lanes(sv_ctx *ctx, const sv_ode_problem *P, const sv_ode_options *o, int sens)
{
    if (sens || P->mass || o->method != SV_ODE_RODAS5P || o->lu != SV_ODE_LU_DOUBLE || P->n < 2 || P->n > 8) return 0;
    ode_lin *lin;
    if (ode_lin_create(ctx, P, 1, 0, &lin) != SV_OK) {
        /* handled: the workers create their solver again and report this */
        sv_clear_error();
        return 0;
    }
    int dense = ode_lin_is_dense(lin);
    ode_lin_destroy(lin);
    return dense ? 2 * ODE_VNAT : 0;
}
