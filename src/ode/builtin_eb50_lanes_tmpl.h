/* EB-50 over WC lanes at once: the linear part over lane vectors (the same
 * operations as the scalar bodies in every lane, so the same numbers as
 * lane by lane), the background, with its tanh and sqrt, per lane.
 * Slot-major arrays are arrays of lane vectors. builtin_eb50.c defines
 *   T        the lane vector (eb_v4, eb_v8)
 *   BG       its background (bg_v4, bg_v8)
 *   WC       lanes (4, 8)
 *   FN(x)    name mangling (x##_4, x##_8)
 * and includes this file once per lane count, after
 * builtin_eb50_lin_tmpl.h for T and builtin_eb50_scalar_tmpl.h for double. */

/* The background of each lane packed into lane vectors. */
ODE_INLINE void FN(eb_bg_lanes)(const eb50 *E, const double *t, BG *bgv)
{
    for (int w = 0; w < WC; w++) {
        bg_r b1;
        eb_bg_real(E, t[w], &b1);
        bgv->Gg[w] = b1.Gg, bgv->Gn[w] = b1.Gn, bgv->Gc[w] = b1.Gc, bgv->Gb[w] = b1.Gb;
        bgv->H[w] = b1.H, bgv->opac[w] = b1.opac, bgv->cs2[w] = b1.cs2, bgv->Rg[w] = b1.Rg;
        bgv->itau[w] = b1.itau;
    }
}

/* The pattern values of J (EB_MAP_J) or ∂J/∂k (EB_MAP_DJ_DK), one seed
 * evaluation per colour: entry (i, j) of colour c takes row i of the map
 * times the unit seed of colour c. */
ODE_INLINE void FN(eb_by_colour)(const eb50 *E, const double *t, const double *p, eb_map map, double *vals)
{
    BG bg;
    T k, seed[NV], col[NV];
    FN(eb_bg_lanes)(E, t, &bg);
    memcpy(&k, p, sizeof k);
    for (int c = 0; c < E->ncol; c++) {
        for (int j = 0; j < NV; j++) seed[j] = (T){0} + (E->color[j] == c);
        if (map == EB_MAP_J)
            FN(eb_lin)(&bg, seed, &k, col);
        else
            FN(eb_lin_dk)(&bg, seed, &k, col);
        for (int i = 0; i < NV; i++)
            for (int e = E->rowptr[i]; e < E->rowptr[i + 1]; e++)
                if (E->color[E->colind[e]] == c) memcpy(vals + (size_t)e * WC, &col[i], sizeof(T));
    }
}

/* J's pattern values over the lanes (eb_jb's seeds in each lane). */
static void FN(eb_jvals)(const eb50 *E, const double *t, const double *p, double *jv)
{
    FN(eb_by_colour)(E, t, p, EB_MAP_J, jv);
}

/* The tangent (eb_tangent_real's operations in each lane). */
static void FN(eb_tangent)(const eb50 *E, const double *t, const double *y, const double *p, const double *v,
                           const double *vp, double *out)
{
    BG bg;
    T vs[NV], os[NV], k;
    FN(eb_bg_lanes)(E, t, &bg);
    memcpy(vs, v, sizeof vs);
    memcpy(&k, p, sizeof k);
    FN(eb_lin)(&bg, vs, &k, os);
    if (vp) {
        T ys[NV], dk[NV], vk;
        memcpy(ys, y, sizeof ys);
        memcpy(&vk, vp, sizeof vk);
        FN(eb_lin_dk)(&bg, ys, &k, dk);
        for (int i = 0; i < NV; i++) os[i] += vk * dk[i];
    }
    memcpy(out, os, sizeof os);
}

/* f over the lanes: the system is linear, so f = A·y is the tangent at
 * v = y without a parameter direction. */
static void FN(eb_fb)(const eb50 *E, const double *t, const double *y, const double *p, double *dy)
{
    FN(eb_tangent)(E, t, NULL, p, y, NULL, dy);
}

/* vp·∂A/∂k (eb_jac_dir's seeds and products in each lane). */
static void FN(eb_djdk)(const eb50 *E, const double *t, const double *p, const double *vp, double *dv)
{
    FN(eb_by_colour)(E, t, p, EB_MAP_DJ_DK, dv);
    for (int e = 0; e < E->rowptr[NV]; e++)
        for (int w = 0; w < WC; w++) dv[(size_t)e * WC + w] *= vp[w];
}
