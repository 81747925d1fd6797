/* Sparse products over the sensitivity directions (sens_eval.c's J·S_j,
 * sens_rodas5p.c's H_j·k): out_r = base_r + Σ_e a_r[e]·x_r[col(e)] row by
 * row over W lanes, for R ≤ ODE_CSR_GROUP directions at once. Each row's
 * sum runs in entry order, as it would for one direction alone (base NULL:
 * from +0); the directions' chains of additions run side by side. One of
 * a and x is usually shared (stride 0), which the inlined copy folds. The
 * partial sums are GCC/Clang vectors of W lanes (as in fused_rodas5p.c):
 * as an array of R·W doubles the compiler kept them in memory, and every
 * chain paid a store and a load per entry. */
#ifndef SV_ODE_SENS_CSR_H
#define SV_ODE_SENS_CSR_H


#include "ode_internal.h"

#define ODE_CSR_GROUP 4

/* Direction r's a at a + r·as, x at x + r·xs, base and out at + r·nw (pattern
 * values and vectors slot-major; out may be base). The sums sit in named
 * variables (those past R are dead code): in an array, or passed to
 * memcpy, GCC kept them in memory. */
#define ODE_DEFINE_CSR_TIMES(W)                                                                                \
    typedef double ode_csrv##W __attribute__((vector_size(8 * W), aligned(8)));                                \
    ODE_INLINE void ode_csr_times_w##W(const sv_ode_problem *P, const double *a, size_t as, const double *x,    \
                                       size_t xs, const double *base, double *out, size_t nw, const int R)     \
    {                                                                                                          \
        const int *rp = P->rowptr, *ci = P->colind;                                                            \
        ode_csrv##W s0, s1, s2, s3;                                                                            \
        for (int i = 0; i < P->n; i++) {                                                                       \
            const size_t o = (size_t)i * W;                                                                    \
            ODE_CSR_EACH(ODE_CSR_INIT, W)                                                                      \
            for (int e = rp[i]; e < rp[i + 1]; e++) {                                                          \
                const double *ae = a + (size_t)e * W, *xe = x + (size_t)ci[e] * W;                             \
                ODE_CSR_EACH(ODE_CSR_UPDATE, W)                                                                \
            }                                                                                                  \
            ODE_CSR_EACH(ODE_CSR_STORE, W)                                                                     \
        }                                                                                                      \
    }
/* W lanes at p as one vector, read or written in place (8-byte aligned, as
 * codegen.c's kernels do): the sums are never address-taken, and no vector
 * crosses a call (whose convention GCC warns about without AVX-512). */
#define ODE_CSR_LD(W, p) (*(ode_csrv##W *)(p))
#define ODE_CSR_EACH(M, W) M(0, W) M(1, W) M(2, W) M(3, W)
#define ODE_CSR_INIT(r, W) if (r < R) s##r = base ? ODE_CSR_LD(W, base + r * nw + o) : (ode_csrv##W){0};
#define ODE_CSR_UPDATE(r, W) if (r < R) s##r += ODE_CSR_LD(W, ae + r * as) * ODE_CSR_LD(W, xe + r * xs);
#define ODE_CSR_STORE(r, W) if (r < R) ODE_CSR_LD(W, out + r * nw + o) = s##r;
ODE_DEFINE_CSR_TIMES(1)
ODE_DEFINE_CSR_TIMES(2)
ODE_DEFINE_CSR_TIMES(4)
ODE_DEFINE_CSR_TIMES(8)
#undef ODE_DEFINE_CSR_TIMES
#undef ODE_CSR_LD
#undef ODE_CSR_EACH
#undef ODE_CSR_INIT
#undef ODE_CSR_UPDATE
#undef ODE_CSR_STORE

/* The product for ns directions, ODE_CSR_GROUP at a time (W: L->W). */
#define ODE_CSR_GROUPS(W, P, ns, a, as, x, xs, base, out, nw)                                                  \
    for (int j_ = 0; j_ < (ns); j_ += ODE_CSR_GROUP) {                                                         \
        const double *a_ = (a) + j_ * (as), *x_ = (x) + j_ * (xs), *b_ = (base) ? (base) + j_ * (nw) : NULL;    \
        double *o_ = (out) + j_ * (nw);                                                                        \
        switch ((ns) - j_) {                                                                                   \
        case 1: ode_csr_times_w##W(P, a_, as, x_, xs, b_, o_, nw, 1); break;                                   \
        case 2: ode_csr_times_w##W(P, a_, as, x_, xs, b_, o_, nw, 2); break;                                   \
        case 3: ode_csr_times_w##W(P, a_, as, x_, xs, b_, o_, nw, 3); break;                                   \
        default: ode_csr_times_w##W(P, a_, as, x_, xs, b_, o_, nw, ODE_CSR_GROUP); break;                      \
        }                                                                                                      \
    }

/* out_j = base_j + A_j·x_j for the directions j < ns over L's lanes. */
ODE_INLINE void ode_csr_times(int W, const sv_ode_problem *P, int ns, const double *a, size_t as, const double *x,
                              size_t xs, const double *base, double *out, size_t nw)
{
    switch (W) {
    case 1: ODE_CSR_GROUPS(1, P, ns, a, as, x, xs, base, out, nw) break;
    case 2: ODE_CSR_GROUPS(2, P, ns, a, as, x, xs, base, out, nw) break;
    case 4: ODE_CSR_GROUPS(4, P, ns, a, as, x, xs, base, out, nw) break;
    default: ODE_CSR_GROUPS(8, P, ns, a, as, x, xs, base, out, nw) break;
    }
}
#undef ODE_CSR_GROUPS

#endif
