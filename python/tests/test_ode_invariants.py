"""Declared linear invariants (solvent.ode.solve's invariants=, ode.h's
ninvariants / invariants) from Python.

E5, the stiff test set's chemical pyrolysis (Bari test set, e5.f), in its
full four-equation form conserves y2 − y3 − y4 = 0; left alone, rounding
along that combination outgrows y2 and y3 by t = 1e13
(docs/explanation/simd-lanes.md). The reference is the test set's own
solution at t = 1e13 (RADAU at rtol 1.1e-18; it carries about 3.1 digits,
tests/ode/test_e5.c), scored as the test set does (scd of y2 and y3).
Robertson (rober.f) with y1 + y2 + y3 = 1 declared gives the answer it
gives without, by every route of the right-hand side, and stays on the
invariant to rounding."""
import logging

import numpy as np
import pytest

from solvent import ArgumentError, _compile, ode


@pytest.fixture(autouse=True, scope="module")
def fresh_cache(tmp_path_factory):
    """Compiled right-hand sides go to a cache of this run's own."""
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("SOLVENT_CACHE", str(tmp_path_factory.mktemp("cache")))
        yield


# e5.f's right-hand side and Jacobian, f3 = f2 − f4 as the test set writes
# it; p = (A, B, CM, C).
E5_SOURCE = """
int f(double t, const double *y, const double *p, double *dy, void *user)
{
    double prod1 = p[0] * y[0], prod2 = p[1] * y[0] * y[2], prod3 = p[2] * y[1] * y[2], prod4 = p[3] * y[3];
    dy[0] = -prod1 - prod2;
    dy[1] = prod1 - prod3;
    dy[3] = prod2 - prod4;
    dy[2] = dy[1] - dy[3];
    return 0;
}

int jac(double t, const double *y, const double *p, double *J, double *dfdt, void *user)
{
    const double A = p[0], B = p[1], CM = p[2], C = p[3];
    const double r1[4] = {-A - B * y[2], 0, -B * y[0], 0};
    const double r2[4] = {A, -CM * y[2], -CM * y[1], 0};
    const double r4[4] = {B * y[2], 0, B * y[0], -C};
    for (int j = 0; j < 4; j++) {
        J[j] = r1[j];
        J[4 + j] = r2[j];
        J[8 + j] = r2[j] - r4[j];
        J[12 + j] = r4[j];
    }
    return 0;
}
"""
E5_PARAMS = [7.89e-10, 1.1e7, 1.13e9, 1.13e3]
E5_Y0 = [1.76e-3, 0.0, 0.0, 0.0]
E5_INVARIANT = [0.0, 1.0, -1.0, -1.0]
# e5.f's reference at t = 1e13 (subroutine solut): y2, y3
BARI_E5_Y23 = np.array([0.8867655517642120e-22, 0.8854814626268838e-22])

ROBER_SOURCE = """
int f(double t, const double *y, const double *p, double *dy, void *user)
{
    double a = 0.04 * y[0], b = 1e4 * y[1] * y[2], c = 3e7 * y[1] * y[1];
    dy[0] = -a + b;
    dy[1] = a - b - c;
    dy[2] = c;
    return 0;
}

int jac(double t, const double *y, const double *p, double *J, double *dfdt, void *user)
{
    J[0] = -0.04; J[1] = 1e4 * y[2];               J[2] = 1e4 * y[1];
    J[3] = 0.04;  J[4] = -1e4 * y[2] - 6e7 * y[1]; J[5] = -1e4 * y[1];
    J[6] = 0;     J[7] = 6e7 * y[1];               J[8] = 0;
    return 0;
}
"""
ROBER_T = np.array([0.0, 0.4, 40.0, 4e3, 4e5, 4e7, 4e9, 1e11])
ROBER_RTOL, ROBER_ATOL = 1e-8, 1e-12


def e5_scd(rtol, invariants):
    y = ode.solve(E5_SOURCE, E5_Y0, [0.0, 1e13], E5_PARAMS, rtol=rtol, atol=1e-24, max_steps=200000,
                  invariants=invariants)
    return -np.log10(np.max(np.abs(y[0, -1, 1:3] - BARI_E5_Y23) / BARI_E5_Y23))


@pytest.mark.parametrize("rtol", [1e-6, 1e-8, 1e-10])
def test_e5_declared_matches_the_test_set(rtol):
    """The test set's three digits (its reference carries about 3.1), as
    tests/ode/test_e5_invariant.c asserts; without the declaration the
    same run misses them by far."""
    declared, plain = e5_scd(rtol, [E5_INVARIANT]), e5_scd(rtol, None)
    print(f"E5, rtol {rtol:g}: scd {declared:.2f} with y2 - y3 - y4 declared, {plain:.2f} without")
    assert declared >= 3.0
    assert declared - plain >= 2.0


def rober_routes():
    """Robertson's f and Jacobian by every route solve takes, by name."""
    library = _compile.compile_source(ROBER_SOURCE)
    symbols = _compile.symbols(library, ["f", "jac"])
    routes = {
        "C source": (ROBER_SOURCE, {}),
        "C callbacks": ({"f": symbols["f"], "jac": symbols["jac"]}, {}),
        "C function": (symbols["f"], {"jac": symbols["jac"]}),
        "Python f": (rober_python, {"jac": rober_python_jac}),
        "built-in": ("rober", {}),
    }
    return library, routes


def rober_python(t, y, p):
    a, b, c = 0.04 * y[:, 0], 1e4 * y[:, 1] * y[:, 2], 3e7 * y[:, 1] ** 2
    return np.stack([-a + b, a - b - c, c], axis=1)


def rober_python_jac(t, y, p):
    z = np.zeros(len(t))
    return np.stack([z - 0.04, 1e4 * y[:, 2], 1e4 * y[:, 1],
                     z + 0.04, -1e4 * y[:, 2] - 6e7 * y[:, 1], -1e4 * y[:, 1],
                     z, 6e7 * y[:, 1], z], axis=1)


def assert_same_as_undeclared(rhs, **route):
    kwargs = dict(rtol=ROBER_RTOL, atol=ROBER_ATOL, max_steps=2000000, **route)
    plain = ode.solve(rhs, [1.0, 0.0, 0.0], ROBER_T, **kwargs)
    declared = ode.solve(rhs, [1.0, 0.0, 0.0], ROBER_T, invariants=[1.0, 1.0, 1.0], **kwargs)
    scale = ROBER_ATOL + ROBER_RTOL * np.abs(plain)
    worst = np.max(np.abs(declared - plain) / scale)
    drift = np.max(np.abs(declared.sum(axis=-1) - 1.0))
    print(f"Robertson: declared vs plain {worst:.1e} tolerance units, |y1 + y2 + y3 - 1| <= {drift:.1e} "
          f"(plain {np.max(np.abs(plain.sum(axis=-1) - 1.0)):.1e})")
    assert worst <= 1.0
    assert drift <= 4e-16


@pytest.mark.parametrize("route", ["C source", "C callbacks", "C function", "Python f", "built-in"])
def test_rober_declared_as_undeclared(route):
    library, routes = rober_routes()
    rhs, extra = routes[route]
    assert_same_as_undeclared(rhs, **extra)


def test_rober_declared_numba():
    numba = pytest.importorskip("numba")
    import solvent.numba as snumba

    @numba.njit
    def rober(t, y, p, dy):
        a, b, c = 0.04 * y[0], 1e4 * y[1] * y[2], 3e7 * y[1] * y[1]
        dy[0] = -a + b
        dy[1] = a - b - c
        dy[2] = c

    assert_same_as_undeclared(snumba.rhs(rober, n=3, sensitivities=False))


def test_builtin_is_not_changed_by_a_derived_problem():
    """The built-in's own problem keeps no invariants: a later solve
    without them is the plain one, bit for bit."""
    first = ode.solve("rober")
    ode.solve("rober", invariants=[1.0, 1.0, 1.0])
    np.testing.assert_array_equal(ode.solve("rober"), first)


E5_BAD = [
    ([[0, 1, -1, np.nan]], "invariants row 0, column 3 = nan: expected a finite value"),
    ([[0, 1, -1, -1], [0, 0, 0, 0]], "invariants row 1 is all zero"),
    ([[0, 1, -1, -1], [0, 2, -2, -2]], "invariants row 1 is a linear combination of rows 0..0"),
]


@pytest.mark.parametrize("rows, message", E5_BAD)
@pytest.mark.parametrize("rhs", [E5_SOURCE, "rober"])
def test_bad_rows_refused_with_the_library_message(rows, message, rhs):
    if rhs == "rober":
        rows = [row[1:] for row in rows]
        message = message.replace("column 3", "column 2")
    with pytest.raises(ArgumentError, match=message):
        ode.solve(rhs, None if rhs == "rober" else E5_Y0, None if rhs == "rober" else [0.0, 1.0],
                  None if rhs == "rober" else E5_PARAMS, invariants=rows)


@pytest.mark.parametrize("rows", [[1.0, 1.0], [[1.0, 1.0, 1.0, 1.0, 1.0]], [[[1.0, 1.0, 1.0]]]])
def test_wrong_length_refused(rows):
    with pytest.raises(ArgumentError, match=r"invariants: expected rows of n = 3 values"):
        ode.solve(ROBER_SOURCE, [1.0, 0.0, 0.0], [0.0, 1.0], invariants=rows)


@pytest.mark.parametrize("rhs", [E5_SOURCE, "rober"])
def test_sensitivities_refused(rhs):
    args = ([E5_Y0, [0.0, 1.0], E5_PARAMS], "params") if rhs == E5_SOURCE else ([], "y0")
    rows = E5_INVARIANT if rhs == E5_SOURCE else [1.0, 1.0, 1.0]
    with pytest.raises(ArgumentError, match="invariants are not supported with sensitivities"):
        ode.solve(rhs, *args[0], invariants=rows, sensitivities=args[1])


def test_dask_bit_for_bit():
    """client= sends the rows with the rest of the options: each shard as
    the single-machine solve, bit for bit."""
    distributed = pytest.importorskip("distributed")
    params = np.array([E5_PARAMS] * 4) * np.array([[1.0], [1.1], [0.9], [1.05]])
    kwargs = dict(rtol=1e-8, atol=1e-24, max_steps=200000, invariants=[E5_INVARIANT])
    here = ode.solve(E5_SOURCE, E5_Y0, [0.0, 1e9, 1e13], params, **kwargs)
    cluster = distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True, host="127.0.0.1",
                                       dashboard_address=":0", silence_logs=logging.ERROR)
    try:
        with distributed.Client(cluster) as client:
            there = ode.solve(E5_SOURCE, E5_Y0, [0.0, 1e9, 1e13], params, client=client, shard_size=2,
                              **kwargs)
    finally:
        cluster.close()
    np.testing.assert_array_equal(there, here)
    kwargs.pop("invariants")  # and the rows did reach the workers: without them E5 ends elsewhere
    assert not np.array_equal(ode.solve(E5_SOURCE, E5_Y0, [0.0, 1e9, 1e13], params, **kwargs), here)
