/* EB-50's linear right-hand side given the background, and its derivative
 * in k, over one value type. builtin_eb50.c defines
 *   T        the value type: double, double complex (complex τ or y, for a
 *            complex step), or a lane vector eb_v4 / eb_v8 (the same
 *            operations in every lane)
 *   K        the type of k: double, and the lane vector for lanes
 *   BG       the background of that type (bg_r, bg_c, bg_v4, bg_v8)
 *   FN(x)    name mangling (x##_real, x##_cplx, x##_4, x##_8)
 * and includes this file once per type. Always inlined, k by address: a
 * lane vector must not cross a call (its convention needs AVX-512), and
 * GCC notes that convention for a lane-vector parameter even inlined. */

/* f = A(τ, k)·y with A's τ-dependence in bg. */
ODE_INLINE void FN(eb_lin)(const BG *bg, const T *y, const K *kp, T *dy)
{
    const K k = *kp;
    T dgrho = bg->Gb * y[2] + bg->Gc * y[1] + bg->Gg * y[TI(0)] + bg->Gn * y[NI(0)];
    T dgq = bg->Gb * y[3] + bg->Gg * y[TI(1)] + bg->Gn * y[NI(1)];
    T z = (dgrho / (2 * k) + y[0]) / bg->H;
    T sigma = z + 1.5 * dgq / (k * k);
    T Pi = y[TI(2)] / 10.0 + (9.0 / 15.0) * y[EI(2)];
    T opac = bg->opac;
    dy[0] = dgq / 2.0;
    dy[1] = -k * z;
    dy[2] = -k * (z + y[3]);
    T vbp = -bg->H * y[3] + k * bg->cs2 * y[2] - bg->Rg * opac * (4.0 / 3.0 * y[3] - y[TI(1)]);
    dy[3] = vbp;
    dy[TI(0)] = -k * (4.0 / 3.0 * z + y[TI(1)]);
    dy[TI(1)] = (-vbp - bg->H * y[3] + k * bg->cs2 * y[2]) / bg->Rg + k * y[TI(0)] / 3.0 - 2 * k * y[TI(2)] / 3.0;
    dy[TI(2)] = 2 * k * y[TI(1)] / 5.0 - 3 * k * y[TI(3)] / 5.0 - opac * (y[TI(2)] - Pi) + 8 * k * sigma / 15.0;
    for (int l = 3; l < LMAX; l++)
        dy[TI(l)] = k * (l * y[TI(l - 1)] - (l + 1) * y[TI(l + 1)]) / (2 * l + 1) - opac * y[TI(l)];
    dy[TI(LMAX)] = k * y[TI(LMAX - 1)] - (LMAX + 1) * y[TI(LMAX)] * bg->itau - opac * y[TI(LMAX)];
    dy[EI(2)] = -opac * (y[EI(2)] - Pi) - k * y[EI(3)] / 3.0;
    for (int l = 3; l < LMAX; l++)
        dy[EI(l)] = -opac * y[EI(l)] +
                    k * (l * y[EI(l - 1)] - ((l + 3.0) * (l - 1.0) / (l + 1.0)) * y[EI(l + 1)]) / (2 * l + 1);
    dy[EI(LMAX)] = -opac * y[EI(LMAX)] + k * LMAX * y[EI(LMAX - 1)] / (2 * LMAX + 1) -
                   (LMAX + 3) * y[EI(LMAX)] * bg->itau;
    dy[NI(0)] = -k * (4.0 / 3.0 * z + y[NI(1)]);
    dy[NI(1)] = k * (y[NI(0)] - 2 * y[NI(2)]) / 3.0;
    dy[NI(2)] = 2 * k * y[NI(1)] / 5.0 - 3 * k * y[NI(3)] / 5.0 + 8 * k * sigma / 15.0;
    for (int l = 3; l < LMAX; l++) dy[NI(l)] = k * (l * y[NI(l - 1)] - (l + 1) * y[NI(l + 1)]) / (2 * l + 1);
    dy[NI(LMAX)] = k * y[NI(LMAX - 1)] - (LMAX + 1) * y[NI(LMAX)] * bg->itau;
}

/* ∂f/∂k given the background: f = A(τ, k)·y is a polynomial in k and
 * 1/k, differentiated term by term from eb_lin (the sensitivities to k). */
ODE_INLINE void FN(eb_lin_dk)(const BG *bg, const T *y, const K *kp, T *dy)
{
    const K k = *kp;
    T dgrho = bg->Gb * y[2] + bg->Gc * y[1] + bg->Gg * y[TI(0)] + bg->Gn * y[NI(0)];
    T dgq = bg->Gb * y[3] + bg->Gg * y[TI(1)] + bg->Gn * y[NI(1)];
    T z = (dgrho / (2 * k) + y[0]) / bg->H;
    T zk = -dgrho / (2 * k * k * bg->H);
    T sigma = z + 1.5 * dgq / (k * k), sigk = zk - 3.0 * dgq / (k * k * k);
    dy[0] = (T){0};
    dy[1] = -z - k * zk;
    dy[2] = -(z + y[3]) - k * zk;
    dy[3] = bg->cs2 * y[2];
    dy[TI(0)] = -(4.0 / 3.0 * z + y[TI(1)]) - k * (4.0 / 3.0) * zk;
    dy[TI(1)] = y[TI(0)] / 3.0 - 2 * y[TI(2)] / 3.0;
    dy[TI(2)] = 2 * y[TI(1)] / 5.0 - 3 * y[TI(3)] / 5.0 + 8 * sigma / 15.0 + 8 * k * sigk / 15.0;
    for (int l = 3; l < LMAX; l++) dy[TI(l)] = (l * y[TI(l - 1)] - (l + 1) * y[TI(l + 1)]) / (2 * l + 1);
    dy[TI(LMAX)] = y[TI(LMAX - 1)];
    dy[EI(2)] = -y[EI(3)] / 3.0;
    for (int l = 3; l < LMAX; l++)
        dy[EI(l)] = (l * y[EI(l - 1)] - ((l + 3.0) * (l - 1.0) / (l + 1.0)) * y[EI(l + 1)]) / (2 * l + 1);
    dy[EI(LMAX)] = LMAX * y[EI(LMAX - 1)] / (2 * LMAX + 1);
    dy[NI(0)] = -(4.0 / 3.0 * z + y[NI(1)]) - k * (4.0 / 3.0) * zk;
    dy[NI(1)] = (y[NI(0)] - 2 * y[NI(2)]) / 3.0;
    dy[NI(2)] = 2 * y[NI(1)] / 5.0 - 3 * y[NI(3)] / 5.0 + 8 * sigma / 15.0 + 8 * k * sigk / 15.0;
    for (int l = 3; l < LMAX; l++) dy[NI(l)] = (l * y[NI(l - 1)] - (l + 1) * y[NI(l + 1)]) / (2 * l + 1);
    dy[NI(LMAX)] = y[NI(LMAX - 1)];
}
