/* EB-50 at one τ over a scalar type: the background, f, and the
 * sensitivities' tangent. builtin_eb50.c defines
 *   T        double, or double complex (complex τ gives ∂/∂τ by complex step)
 *   K        the type of k (double)
 *   BG       the background of that type (bg_r, bg_c)
 *   FN(x)    name mangling (x##_real, x##_cplx)
 * and includes this file once per type, after builtin_eb50_lin_tmpl.h.
 * sqrt and tanh are <tgmath.h>'s: csqrt and ctanh for double complex. */

/* The background at τ: split from the linear part so that the Jacobian's
 * seed evaluations reuse one background. */
static void FN(eb_bg)(const eb50 *E, T tau, BG *bg)
{
    const eb_bg *g = &E->g;
    T a = g->adotrad * tau + (g->g_c + g->g_b) * tau * tau / 12.0;
    bg->Gg = g->g_gam / (a * a), bg->Gn = g->g_nu / (a * a), bg->Gc = g->g_c / a, bg->Gb = g->g_b / a;
    T GL = g->g_L * a * a;
    bg->H = sqrt((bg->Gg + bg->Gn + bg->Gc + bg->Gb + GL) / 3.0);
    T zz = 1.0 / a - 1.0;
    T xe = (1 + g->fHe) / 2 * (1.0 + tanh((zz - 1090.0) / 80.0)) + 2e-4;
    bg->opac = xe * g->akthom / (a * a);
    bg->cs2 = 1.2e-13 / a;
    bg->Rg = bg->Gg / bg->Gb;
    bg->itau = 1.0 / tau;
}

static void FN(eb_f)(const eb50 *E, T tau, const T *y, K k, T *dy)
{
    BG bg;
    FN(eb_bg)(E, tau, &bg);
    FN(eb_lin)(&bg, y, &k, dy);
}

/* The sensitivities' tangent A·v + vp·(∂A/∂k)·y (the sv_ode tangent and
 * tangent_complex callbacks). */
static int FN(eb_tangent)(T t, const T *y, const double *p, const double *v, const double *vp, T *out, void *u)
{
    const eb50 *E = u;
    BG bg;
    T vc[NV], dk[NV];
    FN(eb_bg)(E, t, &bg);
    for (int i = 0; i < NV; i++) vc[i] = v[i];
    FN(eb_lin)(&bg, vc, p, out);
    if (vp) {
        FN(eb_lin_dk)(&bg, y, p, dk);
        for (int i = 0; i < NV; i++) out[i] += vp[0] * dk[i];
    }
    return 0;
}
