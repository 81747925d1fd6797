/* The fused Rodas5P step for FW lanes, written once over a lane vector
 * (GCC vector extensions: one element per lane, element-wise IEEE
 * arithmetic, so every lane rounds exactly as the scalar code does) and
 * instantiated per lane count by fused_rodas5p.c, which defines
 *   FW       lanes (4, 8 or 16)
 *   FN(x)    name mangling (x##_w4, ...)
 * and undefines VD and VL after its last include. The state size n is a
 * compile-time constant at each inlined use. A
 * vector array `vd v[n]` has the slot-major layout of the lane arrays
 * (entry i of lane w at i·FW + w), so it is passed to f as it is. */

typedef double FN(vd) __attribute__((vector_size(8 * FW)));
typedef long long FN(vl) __attribute__((vector_size(8 * FW)));
#define VD FN(vd)
#define VL FN(vl)

ODE_INLINE VD FN(vld)(const double *p)
{
    VD v;
    memcpy(&v, p, sizeof v);
    return v;
}
ODE_INLINE void FN(vst)(double *p, VD v) { memcpy(p, &v, sizeof v); }
ODE_INLINE VD FN(vsplat)(double x)
{
    VD v;
    for (int w = 0; w < FW; w++) v[w] = x;
    return v;
}

/* Comparisons (lane masks): wider than one register they are taken a
 * register at a time, which GCC's generic lowering of vector comparisons
 * would do lane by lane. */
#if FW > ODE_VNAT
#define FN_CMP(name, op)                                                              \
    ODE_INLINE VL FN(name)(VD a, VD b)                                                \
    {                                                                                 \
        union { VD v; ode_vnd h[FW / ODE_VNAT]; } ua = {a}, ub = {b};                 \
        union { VL v; ode_vnl h[FW / ODE_VNAT]; } r;                                  \
        for (int i = 0; i < FW / ODE_VNAT; i++) r.h[i] = ua.h[i] op ub.h[i];          \
        return r.v;                                                                   \
    }
#else
#define FN_CMP(name, op) \
    ODE_INLINE VL FN(name)(VD a, VD b) { return a op b; }
#endif
FN_CMP(lt, <)
FN_CMP(le, <=)
FN_CMP(eq, ==)
#undef FN_CMP
ODE_INLINE VD FN(sel)(VL m, VD a, VD b) { return (VD)((m & (VL)a) | (~m & (VL)b)); }
/* a < b ? a : b per lane (ode_min), a > b ? a : b (ode_max) */
ODE_INLINE VD FN(vmin)(VD a, VD b) { return FN(sel)(FN(lt)(a, b), a, b); }
ODE_INLINE VD FN(vmax)(VD a, VD b) { return FN(sel)(FN(lt)(b, a), a, b); }
ODE_INLINE VD FN(vabs)(VD a) { return (VD)((VL)a & ((VL){0} + 0x7fffffffffffffffLL)); }

/* M = shift·I − J in full storage, fill slots zero (lin.c's load_d). */
ODE_INLINE void FN(load_m)(const ode_lanes *L, VD shift, VD *restrict a, const int n)
{
    if (L->P->dense) { /* J row-major: entry e = i·n + j */
        for (int i = 0; i < n; i++)
            for (int j = 0; j < n; j++) {
                VD v = FN(vld)(L->jv + (size_t)(i * n + j) * FW);
                a[i * n + j] = i == j ? shift - v : -v;
            }
        return;
    }
    const int *rp = L->P->rowptr, *ci = L->P->colind;
    for (int q = 0; q < n * n; q++) a[q] = (VD){0};
    for (int i = 0; i < n; i++) {
        int has_diag = 0;
        for (int e = rp[i]; e < rp[i + 1]; e++) {
            VD v = FN(vld)(L->jv + (size_t)e * FW);
            if (ci[e] == i) {
                has_diag = 1;
                a[i * n + ci[e]] = shift - v;
            } else {
                a[i * n + ci[e]] = -v;
            }
        }
        if (!has_diag) a[i * n + i] = shift;
    }
}

/* dense_small.h's factor over lane vectors; returns the lanes with a zero
 * or non-finite pivot as a mask. */
ODE_INLINE VL FN(factor)(VD *restrict a, const int n)
{
    VL bad = (VL){0};
    _Pragma("GCC unroll 8") for (int k = 0; k < n; k++) {
        VD d = a[k * n + k];
        bad |= FN(eq)(d, (VD){0}) | ~FN(le)(FN(vabs)(d), FN(vsplat)(DBL_MAX));
        VD dk = 1.0 / d;
        a[k * n + k] = dk;
        _Pragma("GCC unroll 8") for (int i = k + 1; i < n; i++) {
            VD l = a[i * n + k] * dk;
            a[i * n + k] = l;
            _Pragma("GCC unroll 8") for (int j = k + 1; j < n; j++) a[i * n + j] = a[i * n + j] - l * a[k * n + j];
        }
    }
    return bad;
}

/* x = M⁻¹ x (dense_small.h's solve). Stages with extra right-hand sides
 * (sensitivities) reuse the factor through this. */
ODE_INLINE void FN(solve)(const VD *restrict a, VD *restrict x, const int n)
{
    _Pragma("GCC unroll 8") for (int i = 0; i < n; i++)
        _Pragma("GCC unroll 8") for (int j = 0; j < i; j++) x[i] -= a[i * n + j] * x[j];
    _Pragma("GCC unroll 8") for (int i = n - 1; i >= 0; i--) {
        _Pragma("GCC unroll 8") for (int j = i + 1; j < n; j++) x[i] -= a[i * n + j] * x[j];
        x[i] *= a[i * n + i];
    }
}

/* lin.c's test for a numerically singular M (ODE_LIN_PIVOT_SHRINK) over
 * lane vectors: d0 holds M's diagonal before the factor, a the factor
 * (1/u_kk on its diagonal); the mask of the lanes beyond the limit. */
ODE_INLINE VL FN(shrunk)(const VD *restrict a, const VD *restrict d0, const int n)
{
    VD worst = (VD){0};
    _Pragma("GCC unroll 8") for (int k = 0; k < n; k++) worst = FN(vmax)(worst, FN(vabs)(d0[k] * a[k * n + k]));
    return FN(lt)(FN(vsplat)(1.0 / ODE_LIN_PIVOT_SHRINK), worst);
}
/* Whether any lane (active or idle: an idle lane's M is stale but finite)
 * is beyond it: the ordinary attempt's whole cost of the test. */
ODE_INLINE int FN(any_shrunk)(const VD *restrict a, const VD *restrict d0, const int n)
{
    VL m = FN(shrunk)(a, d0, n);
#if FW > ODE_VNAT
    /* a register at a time, then across one register */
    union { VL v; ode_vnl h[FW / ODE_VNAT]; } u = {m};
    ode_vnl o = u.h[0];
    for (int i = 1; i < FW / ODE_VNAT; i++) o |= u.h[i];
    long long any = 0;
    for (int i = 0; i < ODE_VNAT; i++) any |= o[i];
#else
    long long any = 0;
    for (int w = 0; w < FW; w++) any |= m[w];
#endif
    return any != 0;
}
/* exact[w] for the active lanes beyond it; returns whether there is any. */
ODE_INLINE int FN(exact_lanes)(const ode_lanes *L, const VD *restrict a, const VD *restrict d0, unsigned char *exact,
                               const int n)
{
    VL big = FN(shrunk)(a, d0, n);
    int any = 0;
    for (int w = 0; w < FW; w++) {
        exact[w] = L->active[w] && big[w];
        any |= exact[w];
    }
    return any;
}

/* out = base + Σ_{j<s} c_j k_j, left to right (rodas5p.c's stage sums). */
ODE_INLINE void FN(stage_sum)(VD *restrict out, const VD *restrict base, const double *c, VD k[8][8], const int s,
                              const int n)
{
    _Pragma("GCC unroll 8") for (int i = 0; i < n; i++) {
        VD acc = base ? base[i] : (VD){0};
        _Pragma("GCC unroll 8") for (int j = 0; j < s; j++) acc = acc + c[j] * k[j][i];
        out[i] = acc;
    }
}

/* Lanes whose f (or a direction's g) refused or failed at stage s take no
 * further stages (the general attempt's rule): they leave em, and the
 * evaluations and solves FN(count_ahead) counted for the stages they skip
 * are taken back. Rare. */
static __attribute__((noinline, cold)) void FN(stop_failed)(ode_lanes *L, unsigned char *em, int s)
{
    for (int w = 0; w < FW; w++)
        if (em[w] && L->fail[w]) {
            em[w] = 0;
            L->st[w].nf -= 7 - s;
            L->st[w].nsolve -= (long)(8 - s) * L->nvec;
        }
}

/* em, the lanes whose stages run (active, good pivots, no failed
 * callback), with their factorisation counted and their seven evaluations
 * and eight solves per vector (the state and each direction) counted
 * ahead; FN(stop_failed) takes back a lane's skipped stages. */
ODE_INLINE void FN(count_ahead)(ode_lanes *L, unsigned char *em)
{
    for (int w = 0; w < FW; w++) {
        em[w] = L->active[w] && !L->bad[w] && !L->fail[w];
        L->st[w].nfactor += L->active[w];
        L->st[w].nf += 7 * em[w];
        L->st[w].nsolve += 8L * L->nvec * em[w];
    }
}

/* The state's stage values U_s (s > 0) = y + Σ_{j<s} a_sj k_j, or, where
 * stage s's sum extends stage s−1's, U_{s−1} + k_{s−1}: the same sum, its
 * last term 1·k. */
ODE_INLINE void FN(stage_values)(VD *restrict U, const VD *restrict y, VD k[8][8], int s, const int n)
{
    if (extends_previous(s))
        for (int i = 0; i < n; i++) U[i] = U[i] + k[s - 1][i];
    else
        FN(stage_sum)(U, y, T.a[s], k, s, n);
}

/* The state's stage right-hand side r = f + h d_s f_t + (1/h) Σ_j C_sj k_j. */
ODE_INLINE void FN(stage_rhs)(VD *restrict r, const VD *restrict f, const VD *restrict dT, VD k[8][8], VD hd,
                              VD hinv, int s, const int n)
{
    if (s > 0) {
        FN(stage_sum)(r, NULL, T.C[s], k, s, n);
        for (int i = 0; i < n; i++) r[i] = f[i] + hd * dT[i] + hinv * r[i];
    } else {
        for (int i = 0; i < n; i++) r[i] = f[i] + hd * dT[i];
    }
}

/* The numerically singular lanes' double-double factors (ode_lin_factor's
 * second half): their pivots decide bad. Rare. */
static __attribute__((noinline, cold)) sv_status FN(factor_exact)(ode_lanes *L, const VD *restrict a,
                                                                   const VD *restrict d0, VL *bad, int *anyx,
                                                                   const int n)
{
    unsigned char exact[FW];
    *anyx = FN(exact_lanes)(L, a, d0, exact, n);
    if (!*anyx) return SV_OK;
    sv_status st = ode_lin_factor_exact(L->lin, exact, L->jv, L->shift, L->bad);
    for (int w = 0; w < FW; w++) {
        L->st[w].nexact += exact[w];
        if (exact[w]) (*bad)[w] = L->bad[w] ? -1 : 0;
    }
    return st;
}

/* M = shift·I − J loaded and factored into a (bad: the lanes with a zero
 * or non-finite pivot) and the numerically singular lanes (anyx) factored
 * in double-double, as ode_lin_factor does. */
ODE_INLINE sv_status FN(load_factor)(ode_lanes *L, VD *restrict a, VL *bad, int *anyx, const int n)
{
    VD d0[8];
    VD shift = 1.0 / (FN(vld)(L->h) * T.gamma);
    FN(load_m)(L, shift, a, n);
    for (int i = 0; i < n; i++) d0[i] = a[i * n + i];
    *bad = FN(factor)(a, n);
    FN(vst)(L->shift, shift);
    for (int w = 0; w < FW; w++) L->bad[w] = L->active[w] && (*bad)[w];
    *anyx = 0;
    if (FN(any_shrunk)(a, d0, n)) return FN(factor_exact)(L, a, d0, bad, anyx, n);
    return SV_OK;
}

/* J where needed, M loaded and factored (FN(load_factor)), and em, the
 * lanes whose stages run (FN(count_ahead)). */
ODE_INLINE sv_status FN(factor_m)(ode_lanes *L, VD *restrict a, VL *bad, unsigned char *em, int *anyx, const int n)
{
    unsigned char jm[FW];
    ode_jacobian_where_needed(L, FW, jm);
    sv_status st = FN(load_factor)(L, a, bad, anyx, n);
    if (st == SV_OK) FN(count_ahead)(L, em);
    return st;
}

/* x = M⁻¹ x with the factor a; xd: the exact lanes' solve in double-double
 * through the lane arrays rhs and err (free in this step), as
 * ode_lin_solve does. */
ODE_INLINE void FN(stage_solve)(ode_lanes *L, const VD *restrict a, VD *restrict x, const int n, const int xd)
{
    if (xd)
        for (int i = 0; i < n; i++) FN(vst)(L->rhs + i * FW, x[i]);
    FN(solve)(a, x, n);
    if (xd) {
        for (int i = 0; i < n; i++) FN(vst)(L->err + i * FW, x[i]);
        ode_lin_solve_exact(L->lin, L->rhs, L->err);
        for (int i = 0; i < n; i++) x[i] = FN(vld)(L->err + i * FW);
    }
}

/* y_new = U_8 + k_8 into L->ynew and the error estimate k_8 in norms.c's
 * weighted RMS into L->eest (INFINITY for a bad pivot or a non-finite norm). */
ODE_INLINE void FN(estimate)(ode_lanes *L, const VD *restrict y, const VD *restrict U, const VD *restrict k8,
                             const VL *bad, const int n)
{
    const VD rtol = FN(vsplat)(L->o->rtol);
    VD acc = (VD){0};
    for (int i = 0; i < n; i++) {
        VD yn = U[i] + k8[i];
        FN(vst)(L->ynew + i * FW, yn);
        VD sc = L->atolv[i] + FN(vmax)(FN(vabs)(y[i]), FN(vabs)(yn)) * rtol;
        VD e = L->wts[i] * k8[i] / sc;
        acc += e * e;
    }
    double e[FW];
    FN(vst)(e, acc / (double)n);
    for (int w = 0; w < FW; w++) e[w] = sqrt(e[w]); /* vectorises (no errno: module.cmake) */
    VD ev = FN(vld)(e);
    FN(vst)(L->eest, FN(sel)(*bad | ~FN(le)(FN(vabs)(ev), FN(vsplat)(DBL_MAX)), FN(vsplat)(INFINITY), ev));
}

/* The eight stages, y_new = U_8 + k_8 and the error estimate k_8 in
 * norms.c's weighted RMS (INFINITY for a bad pivot or a non-finite norm).
 * xd: the exact lanes' stage solves in double-double, through the lane
 * arrays rhs and err (free in this step); a compile-time constant at each
 * use, so that the ordinary attempt keeps its vectors in registers. */
ODE_INLINE void FN(stages)(ode_lanes *L, const VD *restrict a, const VL *bad, unsigned char *em, const int n,
                           const int xd)
{
    VD k[8][8], U[8], fv[8], y[8], dT[8];
    VD h = FN(vld)(L->h), t = FN(vld)(L->t), tcap = FN(vld)(L->tcap), hinv = 1.0 / h;
    for (int i = 0; i < n; i++) {
        y[i] = FN(vld)(L->y + i * FW);
        dT[i] = FN(vld)(L->dT + i * FW);
    }
    _Pragma("GCC unroll 8") for (int s = 0; s < 8; s++) {
        if (s > 0) {
            FN(stage_values)(U, y, k, s, n);
            VD ts = FN(vmin)(t + T.c[s] * h, tcap);
            if (__builtin_expect(ode_eval_f(L->P, FW, em, (const double *)&ts, (const double *)U, L->p,
                                            (double *)fv, L->fail, L->scratch), 0))
                FN(stop_failed)(L, em, s);
        } else {
            for (int i = 0; i < n; i++) fv[i] = FN(vld)(L->f0 + i * FW);
        }
        VD r[8];
        FN(stage_rhs)(r, fv, dT, k, h * T.d[s], hinv, s, n);
        FN(stage_solve)(L, a, r, n, xd);
        for (int i = 0; i < n; i++) k[s][i] = r[i];
    }
    FN(estimate)(L, y, U, k[7], bad, n);
    for (int s = 0; s < 8; s++)
        for (int i = 0; i < n; i++) FN(vst)(L->k + (size_t)(s * n + i) * FW, k[s][i]);
}

/* The attempt with double-double lanes, out of line (n at run time: the
 * same operations, only less unrolled). */
static __attribute__((noinline, cold)) void FN(stages_exact)(ode_lanes *L, const VD *restrict a, const VL *bad,
                                                              unsigned char *em, int n)
{
    FN(stages)(L, a, bad, em, n, 1);
}

#if FW <= 8
#include "fused_rodas5p_sens_tmpl.h"
#endif

/* One attempt of every lane: rodas5p.c's phases. */
ODE_INLINE sv_status FN(attempt)(ode_lanes *L, const int n)
{
    VD a[64];
    VL bad;
    unsigned char em[FW];
    int anyx;
#if FW <= 8
    if (L->sens) return FN(sens_attempt)(L, n);
#endif
    sv_status st = FN(factor_m)(L, a, &bad, em, &anyx, n);
    if (st != SV_OK) return st;
    if (__builtin_expect(anyx, 0))
        FN(stages_exact)(L, a, &bad, em, n);
    else
        FN(stages)(L, a, &bad, em, n, 0);
    return SV_OK;
}

/* f(t, y) for the lanes that moved: phases.c's start_f over lane vectors (a
 * lane whose f fails or is not finite ends there); its prepare runs instead
 * when a new lane needs its first-step estimate. */
ODE_INLINE void FN(f0)(ode_lanes *L, const int n)
{
    unsigned char m[FW];
    int any = 0;
    for (int w = 0; w < FW; w++) {
        m[w] = L->active[w] && !L->have_f0[w];
        any |= m[w];
        L->fail[w] = 0;
    }
    if (!any) return;
    ode_eval_f(L->P, FW, m, L->t, L->y, L->p, L->f0, L->fail, L->scratch);
    VL bad = (VL){0};
    for (int i = 0; i < n; i++) bad |= ~FN(le)(FN(vabs)(FN(vld)(L->f0 + i * FW)), FN(vsplat)(DBL_MAX));
    for (int w = 0; w < FW; w++) {
        if (!m[w]) continue;
        L->st[w].nf++;
        L->have_f0[w] = 1;
        if (L->fail[w]) {
            /* a refusal at an accepted state is final (phases.c's eval_masked) */
            L->st[w].nrefused += L->fail[w] == ODE_FAIL_REFUSED;
            ode_phase_finish(L, w, SV_ODE_F_FAILED);
        } else if (bad[w]) {
            ode_phase_finish(L, w, SV_ODE_NONFINITE);
        }
    }
}

/* The step to attempt: the proposal, clipped to the end (phases.c's
 * set_steps without tstops and max_step, which take that path). */
ODE_INLINE void FN(clip)(ode_lanes *L)
{
    VD t = FN(vld)(L->t), hp = FN(vld)(L->hprop), tend = FN(vld)(L->tend);
    VL end = FN(le)(tend, t + hp);
    for (int w = 0; w < FW; w++)
        if (L->active[w]) {
            L->h[w] = end[w] ? tend[w] - t[w] : hp[w];
            L->hits[w] = end[w] ? ODE_HITS_END : ODE_HITS_NOTHING;
            L->tcap[w] = INFINITY;
        }
}

/* Lanes in mask (accepted, no other reason for phases.c's control) whose
 * step has an event crossing, or whose g failed, join `other`: phases.c's
 * control locates and acts on it (events.h's screen). */
ODE_INLINE void FN(event_lanes)(ode_lanes *L, VL mask, VD tn, VL *other)
{
    unsigned char cand[FW], fire[FW];
    double tnv[FW];
    for (int w = 0; w < FW; w++) cand[w] = mask[w] != 0;
    FN(vst)(tnv, tn);
    ode_events_screen(L, cand, tnv, fire);
    for (int w = 0; w < FW; w++)
        if (fire[w]) (*other)[w] = -1;
}

/* Accept or reject each lane's attempt. Lanes without an event (a save
 * time, the end, a tstop, a refused or failed callback, a non-finite
 * error, fixed steps) here,
 * over lane vectors: control.h's formulas in the same operations (the
 * tests hold this path and the general one to the same bits), with only
 * log and exp per lane. The others through phases.c's control. */
ODE_INLINE void FN(control)(ode_lanes *L, const int n)
{
    const sv_ode_options *o = L->o;
    const sv_ode_ensemble *E = L->E;
    const double qsteady = o->qsteady_max;
    VD e = FN(vld)(L->eest), h = FN(vld)(L->h), t = FN(vld)(L->t), tn = t + h, next;
    VL act, other;
    for (int w = 0; w < FW; w++) {
        act[w] = L->active[w] ? -1 : 0;
        other[w] = L->fail[w] || L->hits[w] != ODE_HITS_NOTHING ? -1 : 0;
        next[w] = L->active[w] && L->save[w] < E->nsave ? L->tsave[w][L->save[w]] : INFINITY;
    }
    VL acc = FN(le)(e, FN(vsplat)(1.0));
    other |= ~FN(le)(FN(vabs)(e), FN(vsplat)(DBL_MAX)) | (acc & FN(le)(next, tn));
    if (o->fixed_step > 0) other = act;
    other &= act;
    if (L->ev) FN(event_lanes)(L, act & acc & ~other, tn, &other);
    const VL plain = act & ~other, took = plain & acc;
    /* accepted: q = clamp(E^β1 E_old^−β2 E_older^β3 / safety), as
     * ode_ctrl_accepted_q (E = 0: 1/qmax), and the error history */
    const VD lo = FN(vld)(L->lerrold), loo = FN(vld)(L->lerrolder);
    VD le = (VD){0}, ex = (VD){0};
    for (int w = 0; w < FW; w++)
        if (took[w] && e[w] != 0) le[w] = log(e[w]);
    VD arg = o->beta1 * le - o->beta2 * lo + o->beta3 * loo;
    for (int w = 0; w < FW; w++)
        if (took[w] && e[w] != 0) ex[w] = exp(arg[w]);
    VD q = ex / o->safety, qlo = FN(vsplat)(1.0 / o->qmax), qhi = FN(vsplat)(1.0 / o->qmin);
    const VD one = FN(vsplat)(1.0);
    q = FN(sel)(FN(lt)(q, qhi), q, qhi);
    q = FN(sel)(FN(lt)(qlo, q), q, qlo);
    q = FN(sel)(FN(le)(one, q) & FN(le)(q, FN(vsplat)(qsteady)), one, q);
    q = FN(sel)(FN(eq)(e, (VD){0}), qlo, q);
    VD hp = FN(sel)(took, h / q, FN(vld)(L->hprop));
    FN(vst)(L->lerrolder, FN(sel)(took, lo, loo));
    FN(vst)(L->lerrold, FN(sel)(took, FN(sel)(FN(lt)(FN(vsplat)(1e-4), e), le, FN(vsplat)(L->lerr_floor)), lo));
    FN(vst)(L->t, FN(sel)(took, tn, t));
    for (int i = 0; i < n; i++)
        FN(vst)(L->y + i * FW, FN(sel)(took, FN(vld)(L->ynew + i * FW), FN(vld)(L->y + i * FW)));
    if (L->inv) /* the accepted states on the invariants: phases.c's advance, the same call */
        for (int w = 0; w < FW; w++)
            if (took[w]) ode_lane_project(L, w, L->y + w, FW, L->y + w, FW);
    if (L->sens) /* the directions' vectors follow the state's (phases.c's advance) */
        for (int i = n; i < n * L->nvec; i++)
            FN(vst)(L->y + i * FW, FN(sel)(took, FN(vld)(L->ynew + i * FW), FN(vld)(L->y + i * FW)));
    /* rejected with a finite error */
    for (int w = 0; w < FW; w++)
        if (plain[w] && !took[w]) hp[w] = ode_ctrl_rejected_h(o, h[w], e[w]);
    FN(vst)(L->hprop, hp);
    /* then both: the limits of ode_ctrl_limit */
    VD tt = FN(vld)(L->t);
    VL small = ~FN(lt)(o->min_step_rel * FN(vabs)(tt), hp) | ~FN(lt)(FN(vsplat)(1e-300), hp) | FN(eq)(tt + hp, tt);
    unsigned char rest[FW];
    int nrest = 0;
    for (int w = 0; w < FW; w++) {
        rest[w] = other[w] != 0;
        nrest += rest[w];
        if (!plain[w]) continue;
        sv_ode_stats *st = &L->st[w];
        L->nonfinite[w] = 0;
        if (took[w]) {
            L->have_f0[w] = 0;
            L->need_jac[w] = 1;
            L->refusals[w] = 0;
            st->accepted++;
        } else {
            st->rejected++;
        }
        if (st->accepted + st->rejected >= o->max_steps) ode_phase_finish(L, w, SV_ODE_MAX_STEPS);
        else if (small[w]) ode_phase_finish(L, w, ode_ctrl_too_small(L->refusals[w], 0));
    }
    if (nrest) ode_phase_control(L, rest);
}

/* One step of every lane: the driver's phases (phases.c, around the
 * attempt as solve.c runs them) for this class. */
ODE_INLINE sv_status FN(step)(ode_lanes *L, const int n)
{
    int h0 = 0, nact = 0;
    for (int w = 0; w < FW; w++) h0 |= L->active[w] && L->need_h0[w];
    if (h0) ode_phase_prepare(L);
    FN(f0)(L, n);
    for (int w = 0; w < FW; w++) nact += L->active[w];
    if (!nact) return SV_OK;
    if (L->o->ntstops > 0 || L->o->max_step > 0) ode_phase_set_steps(L);
    else FN(clip)(L);
    sv_status st = FN(attempt)(L, n);
    if (st == SV_OK) FN(control)(L, n);
    return st;
}

#define FUSED(N) \
    static sv_status FN(step_##N)(ode_lanes *L) { return FN(step)(L, N); }
FUSED(2)
FUSED(3)
FUSED(4)
FUSED(5)
FUSED(6)
FUSED(7)
FUSED(8)
#undef FUSED

static sv_status (*const FN(fused_tab)[9])(ode_lanes *) = {
    NULL, NULL, FN(step_2), FN(step_3), FN(step_4), FN(step_5), FN(step_6), FN(step_7), FN(step_8)};
