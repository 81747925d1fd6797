"""The numba route against the C route: the same right-hand side written as
C source (compiled by the package) and as Python compiled by numba gives
the same trajectories bit for bit (the same operations in the same order,
the numba route calling f over the lanes through f_batch,
no fused multiply-add on either side), for the plain f, the complex-step
Jacobian and the complex-step sensitivities."""
import numpy as np
import pytest

numba = pytest.importorskip("numba")

import solvent  # noqa: E402
from solvent import ode  # noqa: E402
import solvent.numba as snumba  # noqa: E402


@pytest.fixture(autouse=True, scope="module")
def fresh_cache(tmp_path_factory):
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("SOLVENT_CACHE", str(tmp_path_factory.mktemp("cache")))
        yield


# Van der Pol, y1' = y2, y2' = μ (1 − y1²) y2 − y1, for double, complex
# (t, y) and complex (t, y, p): the C route's f, f_complex and f_complex_p.
# numba multiplies complex numbers as (ac − bd, ad + bc), rounding each
# product; the C route's flags keep GCC to that textbook arithmetic too (its
# SLP vectoriser would fuse the product into one vfmaddsub), which is what
# "the same RHS" means.
VDP_C = """
#include <complex.h>
#define VDP(NAME, T, P)                                               \\
    int NAME(T t, const T *y, const P *p, T *dy, void *user)          \\
    {                                                                 \\
        dy[0] = y[1];                                                 \\
        dy[1] = p[0] * (1 - y[0] * y[0]) * y[1] - y[0];               \\
        return 0;                                                     \\
    }
VDP(f, double, double)
VDP(f_complex, double complex, double)
VDP(f_complex_p, double complex, double complex)
"""

F_ONLY_C = VDP_C.split("VDP(f_complex,")[0]


def vdp(t, y, p, dy):
    dy[0] = y[1]
    dy[1] = p[0] * (1 - y[0] * y[0]) * y[1] - y[0]


MUS = np.array([[5.0], [50.0], [500.0], [1000.0]])
T_SAVE = np.linspace(0, 3, 7)


def test_cfunc_with_complex_step_jacobian_matches_c_source_bit_for_bit():
    """Rodas5P with the exact Jacobian by complex step: numba's f and
    f_complex against the C source's."""
    callbacks = snumba.rhs(vdp, n=2, nparams=1)
    assert set(callbacks) == {"f", "f_batch", "f_complex", "f_complex_p"}
    ours = ode.solve(callbacks, [2.0, 0.0], T_SAVE, MUS, rtol=1e-7, atol=1e-9)
    reference, stats = ode.solve(VDP_C, [2.0, 0.0], T_SAVE, MUS, rtol=1e-7, atol=1e-9, return_stats=True)
    assert np.all(stats["status"] == ode.SUCCESS) and np.all(stats["njac"] > 0)
    np.testing.assert_array_equal(ours, reference)


def test_hand_written_cfunc_is_a_c_function_pointer():
    """A numba.cfunc written by hand with the documented signature, passed
    as rhs alone (finite-difference Jacobian on both sides)."""

    @numba.cfunc(snumba.RHS_SIGNATURE)
    def f(t, y, p, dy, user):
        dy[0] = y[1]
        dy[1] = p[0] * (1 - y[0] * y[0]) * y[1] - y[0]
        return 0

    ours = ode.solve(f, [2.0, 0.0], T_SAVE, MUS[:2], rtol=1e-6, atol=1e-8)
    np.testing.assert_array_equal(ours, ode.solve(F_ONLY_C, [2.0, 0.0], T_SAVE, MUS[:2], rtol=1e-6, atol=1e-8))


def test_complex_step_sensitivities_match_c_source_bit_for_bit():
    """Tsit5 with ∂y/∂μ from f_complex_p on both routes."""
    callbacks = snumba.rhs(vdp, n=2, nparams=1)
    y, S = ode.solve(callbacks, [2.0, 0.0], T_SAVE, MUS[:2], method="tsit5", sensitivities="params")
    y_c, S_c = ode.solve(VDP_C, [2.0, 0.0], T_SAVE, MUS[:2], method="tsit5", sensitivities="params")
    np.testing.assert_array_equal(y, y_c)
    np.testing.assert_array_equal(S, S_c)
    assert np.all(np.isfinite(S)) and np.any(S[:, -1] != 0)


def test_a_body_numba_cannot_compile_says_so():
    def broken(t, y, p, dy):
        dy[0] = y.undefined_attribute

    with pytest.raises(solvent.ArgumentError, match="numba cannot compile f"):
        snumba.rhs(broken, n=1)
    with pytest.raises(solvent.ArgumentError, match="n = 0"):
        snumba.rhs(vdp, n=0)
