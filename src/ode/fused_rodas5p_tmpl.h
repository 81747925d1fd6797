/* The fused Rodas5P attempt for FW lanes, written once over a lane vector
 * (GCC vector extensions: one element per lane, element-wise IEEE
 * arithmetic, so every lane rounds exactly as the scalar code does) and
 * instantiated per lane count by fused_rodas5p.c, which defines
 *   FW       lanes (4 or 8)
 *   FN(x)    name mangling (x##_w4, ...)
 * The state size n is a compile-time constant at each inlined use. A
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
ODE_INLINE VD FN(vsplat)(double x) { return (VD){0} + x; }
/* a < b ? a : b per lane (ode_min), a > b ? a : b (ode_max), |a| */
ODE_INLINE VD FN(vmin)(VD a, VD b)
{
    VL m = a < b;
    return (VD)((m & (VL)a) | (~m & (VL)b));
}
ODE_INLINE VD FN(vmax)(VD a, VD b)
{
    VL m = a > b;
    return (VD)((m & (VL)a) | (~m & (VL)b));
}
ODE_INLINE VD FN(vabs)(VD a) { return (VD)((VL)a & ((VL){0} + 0x7fffffffffffffffLL)); }

/* M = shift·I − J in full storage, fill slots zero (lin.c's load_d). */
ODE_INLINE void FN(load_m)(const ode_lanes *L, VD shift, VD *restrict a, const int n)
{
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
        bad |= (d == 0) | ~(FN(vabs)(d) <= DBL_MAX);
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

/* out = base + Σ_{j<s} c_j k_j, left to right (rodas5p.c's combine). */
ODE_INLINE void FN(stage_sum)(VD *restrict out, const VD *restrict base, const double *c, VD k[8][8], const int s,
                              const int n)
{
    _Pragma("GCC unroll 8") for (int i = 0; i < n; i++) {
        VD acc = base ? base[i] : (VD){0};
        _Pragma("GCC unroll 8") for (int j = 0; j < s; j++) acc = acc + c[j] * k[j][i];
        out[i] = acc;
    }
}

ODE_INLINE void FN(attempt)(ode_lanes *L, const int n)
{
    VD a[64], k[8][8], U[8], fv[8], y[8], dT[8];
    unsigned char em[FW];
    for (int w = 0; w < FW; w++) {
        L->fail[w] = 0;
        L->bad[w] = 0;
    }
    ode_fused_jacobian(L);
    VD h = FN(vld)(L->h), t = FN(vld)(L->t), tcap = FN(vld)(L->tcap);
    VD shift = 1.0 / (h * T.gamma), hinv = 1.0 / h;
    FN(load_m)(L, shift, a, n);
    VL bad = FN(factor)(a, n);
    FN(vst)(L->shift, shift);
    for (int w = 0; w < FW; w++) {
        L->bad[w] = L->active[w] && bad[w];
        em[w] = L->active[w] && !L->bad[w] && !L->fail[w];
    }
    for (int i = 0; i < n; i++) {
        y[i] = FN(vld)(L->y + i * FW);
        dT[i] = FN(vld)(L->dT + i * FW);
    }
    _Pragma("GCC unroll 8") for (int s = 0; s < 8; s++) {
        const VD *f = fv;
        if (s > 0) {
            FN(stage_sum)(U, y, T.a[s], k, s, n);
            VD ts = FN(vmin)(t + T.c[s] * h, tcap);
            ode_eval_f(L->P, FW, em, (const double *)&ts, (const double *)U, L->p, (double *)fv, L->fail,
                       L->scratch);
        } else {
            for (int i = 0; i < n; i++) fv[i] = FN(vld)(L->f0 + i * FW);
        }
        /* rhs = f + h d_s f_t + (1/h) Σ_j C_sj k_j */
        VD hd = h * T.d[s], r[8];
        if (s > 0) {
            FN(stage_sum)(r, NULL, T.C[s], k, s, n);
            for (int i = 0; i < n; i++) r[i] = f[i] + hd * dT[i] + hinv * r[i];
        } else {
            for (int i = 0; i < n; i++) r[i] = f[i] + hd * dT[i];
        }
        FN(solve)(a, r, n);
        for (int i = 0; i < n; i++) k[s][i] = r[i];
    }
    /* y_new = U_8 + k_8; error estimate k_8 in solve.c's weighted RMS */
    const VD rtol = FN(vsplat)(L->o->rtol);
    VD acc = (VD){0};
    for (int i = 0; i < n; i++) {
        VD yn = U[i] + k[7][i];
        FN(vst)(L->ynew + i * FW, yn);
        VD sc = L->atolv[i] + FN(vmax)(FN(vabs)(y[i]), FN(vabs)(yn)) * rtol;
        VD e = L->wts[i] * k[7][i] / sc;
        acc += e * e;
    }
    for (int s = 0; s < 8; s++)
        for (int i = 0; i < n; i++) FN(vst)(L->k + (size_t)(s * n + i) * FW, k[s][i]);
    for (int w = 0; w < FW; w++) {
        if (!L->active[w]) continue;
        double e = sqrt(acc[w] / n);
        L->eest[w] = (L->bad[w] || !isfinite(e)) ? INFINITY : e;
        L->st[w].nfactor++;
        if (em[w]) {
            L->st[w].nf += 7;
            L->st[w].nsolve += 8;
        }
    }
}

#define FUSED(N) \
    static void FN(attempt_##N)(ode_lanes *L) { FN(attempt)(L, N); }
FUSED(2)
FUSED(3)
FUSED(4)
FUSED(5)
FUSED(6)
FUSED(7)
FUSED(8)
#undef FUSED

static void (*const FN(fused_tab)[9])(ode_lanes *) = {NULL, NULL, FN(attempt_2), FN(attempt_3), FN(attempt_4),
                                                      FN(attempt_5), FN(attempt_6), FN(attempt_7), FN(attempt_8)};
#undef VD
#undef VL
