/* The fused Rodas5P attempt with forward sensitivities (sens.h's stage
 * equations) for FW ≤ 8 lanes and at most ODE_FUSED_SENS_MAX directions,
 * included by fused_rodas5p_tmpl.h before its attempt (which hands lanes
 * with sensitivities to this one), with its lane vectors, factor and
 * solves. The state's and the directions' stage vectors live in lane-vector
 * arrays here; the callbacks (f, the directions' g, the Jacobian's
 * derivatives) are the general path's own functions, called on these
 * arrays, which are slot-major like the lane arrays (direction j's vector
 * at j·n).
 *
 * Every lane performs the general attempt's operations (rodas5p.c with
 * sens_rodas5p.c) in the same order, so results do not depend on the path.
 * The step's other phases are the fused step's (its control moves the
 * directions' vectors with the state's). */

#define NSF ODE_FUSED_SENS_MAX

/* Σ_{m<s} c_m v_m for one entry, left to right from 0 (ode_stage_sum with
 * no base). */
ODE_INLINE VD FN(dir_sum)(const double *c, VD kd[8][NSF * 8], int s, int q)
{
    VD acc = (VD){0};
    for (int m = 0; m < s; m++) acc = acc + c[m] * kd[m][q];
    return acc;
}

/* Stage s's right-hand side of every direction into r: g_j + h d_s ∂g_j/∂t
 * + (1/h) Σ_m C_sm l_mj (rodas5p.c's pass over the direction vectors), then
 * the coupling dJ_j·k_s with the state's stage in the pattern's order
 * (sens_rodas5p.c). */
ODE_INLINE void FN(dir_rhs)(const ode_lanes *L, VD *restrict r, const VD *restrict g, const VD *restrict gt,
                            VD kd[8][NSF * 8], const VD *restrict ks, VD hd, VD hinv, int s, const int n,
                            const int ns)
{
    const ode_sens *S = L->sens;
    const int *rp = L->P->rowptr, *ci = L->P->colind;
    for (int j = 0; j < ns; j++) {
        const int o = j * n;
        _Pragma("GCC unroll 8") for (int i = 0; i < n; i++) {
            if (s > 0)
                r[o + i] = g[o + i] + hd * gt[o + i] + hinv * FN(dir_sum)(T.C[s], kd, s, o + i);
            else
                r[o + i] = g[o + i] + hd * gt[o + i];
        }
        const double *dJ = S->dJ + (size_t)j * L->nnz * FW;
        _Pragma("GCC unroll 8") for (int i = 0; i < n; i++) {
            VD acc = r[o + i];
            for (int e = rp[i]; e < rp[i + 1]; e++) acc = acc + FN(vld)(dJ + (size_t)e * FW) * ks[ci[e]];
            r[o + i] = acc;
        }
    }
}

/* Whether a lane of em failed (L->fail): the directions' callbacks report
 * only there. */
ODE_INLINE int FN(any_failed)(const ode_lanes *L, const unsigned char *em)
{
    int any = 0;
    for (int w = 0; w < FW; w++) any |= em[w] & L->fail[w];
    return any;
}

/* The directions' error norms (norms.c's, the same operations):
 * eest = max(eest, ‖l_8j‖) over the directions, sc_i = atol_i/scale_j (the
 * lane's atsc) + rtol·max(|S_i|, |S_new,i|); a component with sc_i = 0
 * counts only if its estimate is non-zero. Idle lanes' eest is left as it
 * is. */
ODE_INLINE void FN(sens_error)(ode_lanes *L, const VD *restrict S0, const VD *restrict l8, const int n,
                               const int ns)
{
    const ode_sens *S = L->sens;
    const VD rtol = FN(vsplat)(L->o->rtol), zero = (VD){0}, inf = FN(vsplat)(INFINITY);
    VD eest = FN(vld)(L->eest);
    VL act;
    for (int w = 0; w < FW; w++) act[w] = L->active[w] ? -1 : 0;
    for (int j = 0; j < ns; j++) {
        const int o = j * n;
        VD acc = zero;
        for (int i = 0; i < n; i++) {
            VD sn = FN(vld)(S->Snew + (o + i) * FW), ei = l8[o + i];
            VD sc = FN(vld)(S->atsc + (o + i) * FW) + FN(vmax)(FN(vabs)(S0[o + i]), FN(vabs)(sn)) * rtol;
            VD r = FN(sel)(FN(lt)(zero, sc), L->wts[i] * ei / sc, FN(sel)(FN(eq)(ei, zero), zero, inf));
            acc += r * r;
        }
        double en[FW];
        FN(vst)(en, acc / (double)n);
        for (int w = 0; w < FW; w++) en[w] = sqrt(en[w]);
        VD env = FN(vld)(en);
        VD m = FN(sel)(FN(le)(FN(vabs)(env), FN(vsplat)(DBL_MAX)), FN(vmax)(eest, env), inf);
        eest = FN(sel)(act, m, eest);
    }
    FN(vst)(L->eest, eest);
}

/* The stages as rodas5p.c's stage() runs them with sensitivities: stage
 * values (the directions' S_i beside U_i), f and the directions' g at them,
 * the right-hand sides, the state's solve and the directions' solves. */
ODE_INLINE void FN(sens_stages)(ode_lanes *L, const VD *restrict a, const VL *bad, unsigned char *em, const int n,
                                const int ns, const int xd)
{
    const ode_sens *S = L->sens;
    const int nd = ns * n, kv = n * L->nvec; /* kv: VDs per stage in L->k */
    VD k[8][8], U[8], fv[8], y[8], dT[8], r[8];
    VD kd[8][NSF * 8], SU[NSF * 8], G[NSF * 8], S0[NSF * 8], gt[NSF * 8], rd[NSF * 8];
    VD h = FN(vld)(L->h), t = FN(vld)(L->t), tcap = FN(vld)(L->tcap), hinv = 1.0 / h;
    double ts[FW];
    for (int i = 0; i < n; i++) {
        y[i] = FN(vld)(L->y + i * FW);
        dT[i] = FN(vld)(L->dT + i * FW);
    }
    for (int q = 0; q < nd; q++) {
        S0[q] = FN(vld)(S->S + q * FW);
        gt[q] = FN(vld)(S->gt + q * FW);
    }
    _Pragma("GCC unroll 8") for (int s = 0; s < 8; s++) {
        if (s > 0) {
            FN(stage_values)(U, y, k, s, n);
            if (extends_previous(s)) /* the directions' as the state's */
                for (int q = 0; q < nd; q++) SU[q] = SU[q] + kd[s - 1][q];
            else
                for (int q = 0; q < nd; q++) {
                    VD acc = S0[q];
                    for (int m = 0; m < s; m++) acc = acc + T.a[s][m] * kd[m][q];
                    SU[q] = acc;
                }
            FN(vst)(ts, FN(vmin)(t + T.c[s] * h, tcap));
            int failed = ode_eval_f(L->P, FW, em, ts, (const double *)U, L->p, (double *)fv, L->fail, L->scratch);
            if (__builtin_expect(failed, 0)) FN(stop_failed)(L, em, s);
            ode_sens_rhs(L, em, ts, (const double *)U, (const double *)fv, NULL, (const double *)SU, (double *)G);
            if (__builtin_expect(FN(any_failed)(L, em), 0)) FN(stop_failed)(L, em, s);
        } else {
            for (int i = 0; i < n; i++) fv[i] = FN(vld)(L->f0 + i * FW);
            for (int q = 0; q < nd; q++) G[q] = FN(vld)(S->G0 + q * FW);
        }
        VD hd = h * T.d[s];
        FN(stage_rhs)(r, fv, dT, k, hd, hinv, s, n);
        FN(stage_solve)(L, a, r, n, xd);
        for (int i = 0; i < n; i++) k[s][i] = r[i];
        FN(dir_rhs)(L, rd, G, gt, kd, k[s], hd, hinv, s, n, ns);
        for (int j = 0; j < ns; j++) FN(stage_solve)(L, a, rd + j * n, n, xd);
        for (int q = 0; q < nd; q++) kd[s][q] = rd[q];
    }
    /* y_new = U_8 + k_8 and S_new = S_8 + l_8, the state's error estimate,
     * then the directions' (sens_lanes.c) */
    FN(estimate)(L, y, U, k[7], bad, n);
    for (int q = 0; q < nd; q++) FN(vst)(S->Snew + q * FW, SU[q] + kd[7][q]);
    for (int s = 0; s < 8; s++) {
        for (int i = 0; i < n; i++) FN(vst)(L->k + (size_t)(s * kv + i) * FW, k[s][i]);
        for (int q = 0; q < nd; q++) FN(vst)(L->k + (size_t)(s * kv + n + q) * FW, kd[s][q]);
    }
    if (L->o->sens_errcon != SV_ODE_SENS_ERR_STATE) FN(sens_error)(L, S0, kd[7], n, ns);
}

static __attribute__((noinline, cold)) void FN(sens_stages_exact)(ode_lanes *L, const VD *restrict a,
                                                                   const VL *bad, unsigned char *em, int n)
{
    FN(sens_stages)(L, a, bad, em, n, L->sens->ns, 1);
}

/* One attempt of every lane with sensitivities: rodas5p.c's attempt_w. */
ODE_INLINE sv_status FN(sens_attempt)(ode_lanes *L, const int n)
{
    VD a[64];
    VL bad;
    unsigned char em[FW], jm[FW];
    int anyx;
    ode_jacobian_where_needed(L, FW, jm);
    for (int w = 0; w < FW; w++) jm[w] = jm[w] && !L->fail[w];
    ode_sens_rodas5p_prepare(L, jm);
    sv_status st = FN(load_factor)(L, a, &bad, &anyx, n);
    if (st != SV_OK) return st;
    FN(count_ahead)(L, em);
    if (__builtin_expect(anyx, 0))
        FN(sens_stages_exact)(L, a, &bad, em, n);
    else if (L->sens->ns == 1) /* the common case, its loops unrolled */
        FN(sens_stages)(L, a, &bad, em, n, 1, 0);
    else
        FN(sens_stages)(L, a, &bad, em, n, L->sens->ns, 0);
    return SV_OK;
}

#undef NSF
