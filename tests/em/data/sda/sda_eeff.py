#!/usr/bin/python3
"""Full-wave εeff(f) of an infinite microstrip by the spectral-domain method.

A second method for the dispersion of docs/em.md ("Dispersion"): Galerkin with one
basis function (Jx across the strip in Maxwell's edge distribution, J̃ = J0(ky·W/2);
Jy = 0), formulation C's exact grounded-slab kernels

    g_A = 1/D_TE,  g_φ = (u0 + u1·tanh u1h)/(D_TE·D_TM),
    D_TE = u0 + u1·coth u1h,  D_TM = εr·u0 + u1·tanh u1h,  u_i = √(kρ² − εr_i·k0²),

and Ex = 0 on the strip:  β² = k0²·⟨g_A⟩/⟨g_φ⟩ with ⟨g⟩ = ∫ g(√(β² + ky²))·J̃² dky,
solved by fixed-point iteration. The bound mode has β above every surface wave's
wavenumber, so the kernels are real on the whole path. The same equation with the
kernels at k0 = 0 (the quasi-static model's own dispersion) and with their Taylor
series in k0² to order 1, 2, 3 (Cauchy's formula on a circle in k0²) shows what
each order of dispersion.c's expansion gives an infinite line, and "resummed" the
first order with the thin slab's far field beyond it (dispersion_far.c): the
kernels' h² terms −h²·u0 (g_A) and −(h²/εr²)·[u0 + (εr − 1)²·k0²/u0] (g_φ) less their
values and first k0² derivatives at k0 = 0.

Needs Debian's python3-numpy and python3-scipy; the whole table takes a long while (the
series' Cauchy circles: 32 kernel evaluations a sample), `sda_eeff.py resummed 100001` about 11 minutes. Prints the
change of εeff from its static value, %, against Kirschning and Jansen's formula
(Electronics Letters 18 (1982) 272) with the same static value.
"""
import numpy as np
from scipy.special import j0

C0 = 299792458.0


def kernels(kr, s, h, er):
    """g_A, g_φ (complex) at wavenumbers kr for s = k0² (complex)."""
    kr = kr.astype(complex)
    u0 = np.sqrt(kr**2 - s)
    u1 = np.sqrt(kr**2 - er * s)
    th = u1 * np.tanh(u1 * h)
    dte = u0 + u1 / np.tanh(u1 * h)
    dtm = er * u0 + th
    return 1 / dte, (u0 + th) / (dte * dtm)


def kernels_series(kr, s, h, er, order, points=32):
    """The kernels' Taylor series in s about 0 to `order`, coefficients by Cauchy's
    formula on |s| = 0.05·kr² (inside the nearest singularity at every kr)."""
    r = 0.05 * kr**2
    theta = 2 * np.pi * np.arange(points) / points
    A = np.empty((points,) + kr.shape, complex)
    P = np.empty_like(A)
    for i, t in enumerate(theta):
        A[i], P[i] = kernels(kr, r * np.exp(1j * t), h, er)
    gA = np.zeros(kr.shape)
    gP = np.zeros(kr.shape)
    for m in range(order + 1):
        e = np.exp(-1j * m * theta)[:, None]
        gA += (np.mean(A * e, axis=0) / r**m * s**m).real
        gP += (np.mean(P * e, axis=0) / r**m * s**m).real
    return gA, gP


def kernels_resummed(kr, s, h, er):
    """The first order in s plus the thin slab's change beyond it."""
    gA, gP = kernels_series(kr, s, h, er, 1)
    u0 = np.sqrt(kr**2 - s)
    tA = u0 - kr + s / (2 * kr)
    tP = tA + (er - 1) ** 2 * s * (1 / u0 - 1 / kr)
    return gA - h * h * tA, gP - h * h / er**2 * tP


POINTS = 400001  # samples of ky on [0, K/W]


def eps_eff(f, W, h, er, mode="full", order=1, K=4000.0):
    k0 = 2 * np.pi * f / C0
    s = k0**2
    ky = np.linspace(0, K / W, POINTS)[1:]
    w = j0(ky * W / 2) ** 2
    ee = (er + 1) / 2
    for _ in range(80):
        kr = np.sqrt(ee * s + ky**2)
        if mode == "full":
            gA, gP = (g.real for g in kernels(kr, s, h, er))
        elif mode == "static":
            gA, gP = (g.real for g in kernels(kr, 0, h, er))
        elif mode == "resummed":
            gA, gP = kernels_resummed(kr, s, h, er)
        else:
            gA, gP = kernels_series(kr, s, h, er, order)
        # the tail beyond K/W: g_A → 1/(2kρ), g_φ → 1/((1 + εr)kρ), J̃² → 2/(π·ky·W/2) on average
        tail = 1 / (np.pi * W * ky[-1])
        new = (np.trapz(gA * w, ky) + tail) / (np.trapz(gP * w, ky) + tail * 2 / (1 + er))
        if abs(new - ee) < 1e-10:
            break
        ee = 0.5 * (ee + new)
    return ee


def kirschning_jansen(f, W, h, er, e0):
    fn = f / 1e9 * h * 1e3  # GHz·mm
    u = W / h
    P1 = 0.27488 + (0.6315 + 0.525 / (1 + 0.0157 * fn) ** 20) * u - 0.065683 * np.exp(-8.7513 * u)
    P2 = 0.33622 * (1 - np.exp(-0.03442 * er))
    P3 = 0.0363 * np.exp(-4.6 * u) * (1 - np.exp(-((fn / 38.7) ** 4.97)))
    P4 = 1 + 2.751 * (1 - np.exp(-((er / 15.916) ** 8)))
    P = P1 * P2 * ((0.1844 + P3 * P4) * fn) ** 1.5763
    return er - (er - e0) / (1 + P)


def columns(f, W, h, er, e0, only, K=4000.0):
    """The table's row at f: every column, or with `only` ("resummed") the
    full-wave, first-order and resummed ones."""
    if only == "resummed":
        return [eps_eff(f, W, h, er, m, 1, K) for m in ("full", "series", "resummed")]
    row = [eps_eff(f, W, h, er, "full"), kirschning_jansen(f, W, h, er, e0), eps_eff(f, W, h, er, "static")]
    row += [eps_eff(f, W, h, er, "series", o) for o in (1, 2, 3)]
    return row + [eps_eff(f, W, h, er, "resummed")]


if __name__ == "__main__":
    # the 50 Ω lines of tests/em/test_dispersion.c: 1.6-mm FR-4 and the Momentum boards' 56-mil launch;
    # `sda_eeff.py resummed [POINTS]` prints the full-wave, first-order and resummed columns alone,
    # at 1, 3.4, 6.5 and 10 GHz, on POINTS samples of ky (default 400001)
    import sys

    only = sys.argv[1] if len(sys.argv) > 1 else None
    if len(sys.argv) > 2:
        POINTS = int(sys.argv[2])
    freqs = [1e9, 3.4e9, 6.5e9, 10e9] if only else [1e9, 2.3e9, 3.4e9, 4.5e9, 6.5e9, 10e9]
    for W, h, er in [(3.062e-3, 1.6e-3, 4.4), (1.4224e-3, 0.762e-3, 4.5)]:
        e0 = eps_eff(1e3, W, h, er, "static")
        print(f"W {W*1e3:.4f} mm, h {h*1e3:.3f} mm, eps_r {er}: static eps_eff {e0:.4f}")
        head = "full  order 1  resummed" if only else "full  K-J  quasi-static  order 1  order 2  order 3  resummed"
        print(f"  f GHz   {head}  (% from the static value)")
        for f in freqs:
            row = columns(f, W, h, er, e0, only)
            print(f"  {f/1e9:5.1f} " + " ".join(f"{100*(x/e0-1):+6.2f}" for x in row), flush=True)
