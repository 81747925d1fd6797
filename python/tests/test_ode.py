"""The ODE binding against independent references: scipy's Radau at tight
tolerance, the `solvent ode` tool's output, central differences of the
solution and of the loss, and the library's memory counters."""
import csv
import ctypes
import subprocess

import numpy as np
import pytest
import scipy.integrate

import solvent
from conftest import capture_contexts, check_contexts, ctrl_c_after, heap_growth
from solvent import _compile, ode
from solvent._native import ffi, lib

@pytest.fixture(autouse=True, scope="module")
def fresh_cache(tmp_path_factory):
    """Compiled right-hand sides go to a cache of this run's own: the first
    solve of each source compiles it, as on a fresh machine."""
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("SOLVENT_CACHE", str(tmp_path_factory.mktemp("cache")))
        yield


# Van der Pol in its classic form (the built-in vdpol is the ε form with
# rescaled time):  y1' = y2,  y2' = μ (1 − y1²) y2 − y1,  stiff for μ = 1000
# along its slow phase.
VDP_F = """
int f(double t, const double *y, const double *p, double *dy, void *user)
{
    dy[0] = y[1];
    dy[1] = p[0] * (1 - y[0] * y[0]) * y[1] - y[0];
    return 0;
}
"""

VDP_JAC = VDP_F + """
int jac(double t, const double *y, const double *p, double *J, double *dfdt, void *user)
{
    J[0] = 0;                               J[1] = 1;
    J[2] = -2 * p[0] * y[0] * y[1] - 1;     J[3] = p[0] * (1 - y[0] * y[0]);
    return 0;
}
"""

# f and the tangent written once over double and double complex
# (<tgmath.h>): the complex versions give the exact Jacobian and the
# sensitivities' second order by complex step (docs/ode.md).
VDP_SENS = """
#include <complex.h>
#include <tgmath.h>
#define VDP(NAME, T)                                                  \\
    int NAME(T t, const T *y, const double *p, T *dy, void *user)     \\
    {                                                                 \\
        dy[0] = y[1];                                                 \\
        dy[1] = p[0] * (1 - y[0] * y[0]) * y[1] - y[0];               \\
        return 0;                                                     \\
    }
VDP(f, double)
VDP(f_complex, double complex)
#define VDP_TANGENT(NAME, T)                                                              \\
    int NAME(T t, const T *y, const double *p, const double *v, const double *vp, T *out,  \\
             void *user)                                                                  \\
    {                                                                                     \\
        out[0] = v[1];                                                                    \\
        out[1] = p[0] * (-2 * y[0] * v[0] * y[1] + (1 - y[0] * y[0]) * v[1]) - v[0];      \\
        if (vp) out[1] += vp[0] * (1 - y[0] * y[0]) * y[1];                               \\
        return 0;                                                                         \\
    }
VDP_TANGENT(tangent, double)
VDP_TANGENT(tangent_complex, double complex)
"""


def vdp_numpy(t, Y, P):
    """The same f over the ensemble, the same operations in the same order."""
    y1, y2, mu = Y[:, 0], Y[:, 1], P[:, 0]
    return np.stack([y2, mu * (1 - y1 * y1) * y2 - y1], axis=1)


def vdp_scipy(mu):
    def f(t, y):
        return [y[1], mu * (1 - y[0] * y[0]) * y[1] - y[0]]

    def jac(t, y):
        return [[0, 1], [-2 * mu * y[0] * y[1] - 1, mu * (1 - y[0] * y[0])]]

    return f, jac


def test_stiff_c_source_agrees_with_radau():
    """Van der Pol, μ = 1000 and 800, along the slow phase (stiffness
    ratio ~ 3μ): every saved state within 100·(rtol·|y| + atol) of scipy's
    Radau at rtol 1e-10, atol 1e-12."""
    mus = np.array([[1000.0], [800.0]])
    t_save = np.linspace(0, 500, 11)
    rtol, atol = 1e-7, 1e-9
    y, stats = ode.solve(VDP_JAC, [2.0, 0.0], t_save, mus, rtol=rtol, atol=atol, return_stats=True)
    assert y.shape == (2, 11, 2) and np.all(stats["status"] == ode.SUCCESS)
    for k, (mu,) in enumerate(mus):
        f, jac = vdp_scipy(mu)
        ref = scipy.integrate.solve_ivp(f, (0, 500), [2.0, 0.0], method="Radau", t_eval=t_save, rtol=1e-10,
                                        atol=1e-12, jac=jac)
        assert ref.success
        err = np.abs(y[k] - ref.y.T) / (rtol * np.abs(ref.y.T) + atol)
        assert err.max() < 100, f"μ = {mu}: error {err.max():.1f} × (rtol·|y| + atol)"
    np.testing.assert_array_equal(y[:, 0], [[2.0, 0.0], [2.0, 0.0]])  # t_save[0] is the start: y0


RHS_PROTOTYPE = ctypes.CFUNCTYPE(ctypes.c_int, ctypes.c_double, ctypes.POINTER(ctypes.c_double),
                                 ctypes.POINTER(ctypes.c_double), ctypes.POINTER(ctypes.c_double), ctypes.c_void_p)


def test_c_source_is_compiled_once():
    """One object per source in the cache, named by its hash; solving the
    same source again (in a new process too: the file is looked up first)
    compiles nothing."""
    source = VDP_F + "/* compiled once */\n"
    folder = _compile.cache_dir()
    before = set(folder.glob("*.so")) if folder.exists() else set()
    ode.solve(source, [2.0, 0.0], [0, 0.1], [5.0])
    made = set(folder.glob("*.so")) - before
    assert len(made) == 1
    stamp = next(iter(made)).stat().st_mtime_ns
    _compile._loaded.clear()  # as a new process would: only the file remains
    ode.solve(source, [2.0, 0.0], [0, 0.1], [5.0])
    assert set(folder.glob("*.so")) - before == made and next(iter(made)).stat().st_mtime_ns == stamp


def test_every_rhs_form_gives_the_same_trajectories():
    """C source, the same compiled f as a ctypes, cffi, integer and
    LowLevelCallable pointer, and numpy's f (the same arithmetic, no fused
    multiply-add on either side): bit for bit."""
    mus = np.array([[5.0], [50.0], [500.0], [1000.0], [20.0]])
    t_save = np.linspace(0, 3, 7)
    common = dict(rtol=1e-6, atol=1e-8)
    from_source = ode.solve(VDP_F, [2.0, 0.0], t_save, mus, **common)
    library = _compile.compile_source(VDP_F)  # the cached object the solve above loaded
    address = ctypes.cast(library.f, ctypes.c_void_p).value
    typed = RHS_PROTOTYPE(address)
    pointers = [library.f, typed, address, ffi.cast("sv_ode_rhs_fn", address), scipy.LowLevelCallable(typed)]
    for pointer in pointers:
        np.testing.assert_array_equal(ode.solve(pointer, [2.0, 0.0], t_save, mus, **common), from_source)
    from_python = ode.solve(vdp_numpy, [2.0, 0.0], t_save, mus, **common)
    np.testing.assert_array_equal(from_python, from_source)
    assert np.all(np.isfinite(from_source))


def test_jacobian_forms_agree():
    """The analytic Jacobian from C source, as a pointer, and from Python:
    bit for bit."""
    mus = np.array([[10.0], [1000.0]])
    t_save = [0, 0.5, 2]
    library = _compile.compile_source(VDP_JAC)
    from_source = ode.solve(VDP_JAC, [2.0, 0.0], t_save, mus)
    from_pointers = ode.solve(library.f, [2.0, 0.0], t_save, mus, jac=library.jac)

    def jac(t, Y, P):
        y1, y2, mu = Y[:, 0], Y[:, 1], P[:, 0]
        return np.stack([0 * y1, 0 * y1 + 1, -2 * mu * y1 * y2 - 1, mu * (1 - y1 * y1)], axis=1)

    from_python = ode.solve(vdp_numpy, [2.0, 0.0], t_save, mus, jac=jac)
    np.testing.assert_array_equal(from_pointers, from_source)
    np.testing.assert_array_equal(from_python, from_source)


VDP_BATCH = VDP_JAC + """
int f_batch(int W, const double *t, const double *restrict y, const double *restrict p, double *restrict dy,
            void *user)
{
    for (int w = 0; w < W; w++) {
        double y1 = y[w], y2 = y[W + w];
        dy[w] = y2;
        dy[W + w] = p[w] * (1 - y1 * y1) * y2 - y1;
    }
    return 0;
}
int jac_batch(int W, const double *t, const double *restrict y, const double *restrict p, double *restrict J,
              double *dfdt, void *user)
{
    for (int w = 0; w < W; w++) {
        double y1 = y[w], y2 = y[W + w];
        J[w] = 0;                              J[W + w] = 1;
        J[2 * W + w] = -2 * p[w] * y1 * y2 - 1;  J[3 * W + w] = p[w] * (1 - y1 * y1);
    }
    return 0;
}
"""


def test_batched_c_callbacks_give_the_scalar_ones_results():
    """f_batch and jac_batch from C source (one call per batch of lanes)
    against f and jac alone: bit for bit."""
    mus = np.array([[10.0], [1000.0], [3.0], [300.0], [30.0]])
    t_save = [0, 0.5, 2]
    np.testing.assert_array_equal(ode.solve(VDP_BATCH, [2.0, 0.0], t_save, mus),
                                  ode.solve(VDP_JAC, [2.0, 0.0], t_save, mus))


def _read_tool_csv(path):
    with open(path) as fh:
        rows = list(csv.reader(fh))
    header, body = rows[0], np.array([[float(v) for v in row] for row in rows[1:]])
    return header, body


def test_builtin_equals_the_tool(tool, tmp_path):
    """Robertson through `solvent ode` and from Python (four copies of the
    trajectory in lanes side by side): the same states, and with the three
    rates' sensitivities the same states and sensitivities, bit for bit
    (the tool writes 17 digits)."""
    runs = {}
    for label, extra in (("plain", []), ("sens", ["--sens", "p1,p2,p3"])):
        out = tmp_path / f"{label}.csv"
        subprocess.run([tool, "ode", "rober", "--t1", "1e4", "--save", "4", *extra, "--out", out, "--quiet"],
                       check=True)
        runs[label] = _read_tool_csv(out)
    header, plain = runs["plain"]
    t_save = np.concatenate([[0.0], plain[:, 2]])
    y0 = np.tile([1.0, 0.0, 0.0], (4, 1))
    y = ode.solve("rober", y0, t_save)
    ys, s = ode.solve("rober", y0, t_save, sensitivities="params")
    header, sens = runs["sens"]
    assert header[6:9] == ["dy1/dp1", "dy1/dp2", "dy1/dp3"]
    for k in range(4):
        np.testing.assert_array_equal(y[k, 1:], plain[:, 3:6])
        np.testing.assert_array_equal(ys[k, 1:], sens[:, 3:6])
        np.testing.assert_array_equal(s[k, 1:].reshape(4, 9), sens[:, 6:15])
    assert not np.array_equal(y, ys)  # the sensitivities' error control took other steps


def _central(fun, x, k, h):
    xp, xm = x.copy(), x.copy()
    xp[k] += h
    xm[k] -= h
    return (fun(xp) - fun(xm)) / (2 * h)


def test_sensitivities_match_central_differences():
    """∂y/∂μ and ∂y/∂y0 of Van der Pol (C source: f, the tangent and their
    complex versions) against central differences of solutions at rtol
    1e-11."""
    mu, y0 = np.array([8.0]), np.array([2.0, 0.5])
    t_save = np.linspace(0, 4, 9)
    y, s = ode.solve(VDP_SENS, y0, t_save, mu, sensitivities="both", rtol=1e-9, atol=1e-11)
    assert s.shape == (1, 9, 2, 3)
    tight = dict(rtol=1e-11, atol=1e-13)
    by_mu = _central(lambda m: ode.solve(VDP_SENS, y0, t_save, m, **tight)[0], mu, 0, 1e-4 * mu[0])
    fd = [by_mu] + [_central(lambda v: ode.solve(VDP_SENS, v, t_save, mu, **tight)[0], y0, i, 1e-5)
                    for i in range(2)]
    for j, reference in enumerate(fd):
        scale = np.abs(reference).max()
        assert np.abs(s[0, :, :, j] - reference).max() < 1e-5 * scale, f"direction {j}"


def test_value_and_grad_matches_central_differences_of_the_loss():
    """Robertson's rates from data: the loss as numpy computes it from the
    solution, the gradient against central differences of the loss (in
    each rate, relative step 1e-4, at rtol 1e-10)."""
    t_save = np.array([0, 1e-2, 1, 10, 100, 1e3])
    truth = np.array([0.04, 1e4, 3e7])
    data = ode.solve("rober", t_save=t_save, params=truth, rtol=1e-10, atol=1e-14)[0]
    sigma = np.array([1e-3, 1e-7, 1e-3])
    guess = truth * [1.3, 0.8, 1.2]
    tight = dict(rtol=1e-10, atol=1e-14)
    loss, grad = ode.value_and_grad("rober", None, t_save, guess, data, sigma, **tight)
    y = ode.solve("rober", t_save=t_save, params=guess, **tight)[0]
    # (the sensitivities' error control takes other steps than the plain solve: rtol-sized differences)
    assert loss == pytest.approx(np.sum(((y - data) / sigma) ** 2), rel=1e-8)
    assert grad.shape == (3,)

    def loss_at(p):
        return ode.value_and_grad("rober", None, t_save, p, data, sigma, **tight)[0]

    for k in range(3):
        fd = _central(loss_at, guess, k, 1e-4 * guess[k])
        assert grad[k] == pytest.approx(fd, rel=1e-5), f"rate {k + 1}"
    # With respect to the initial state (y0 1-D: the gradient's shape (3,)).
    # y2(0) acts through the fast initial transient: differences of adaptive
    # solutions scatter by ~1e-5 there (h from 1e-6 to 1e-8), hence 1e-4.
    y0 = np.array([1.0, 0.0, 0.0])
    _, grad_y0 = ode.value_and_grad("rober", y0, t_save, guess, data, sigma, wrt="y0", **tight)

    def loss_from(v):
        return ode.value_and_grad("rober", v, t_save, guess, data, sigma, wrt="y0", **tight)[0]

    for i in range(3):
        assert grad_y0[i] == pytest.approx(_central(loss_from, y0, i, 1e-6), rel=1e-4), f"y0[{i}]"
    # An ensemble of two experiments sharing the rates: their gradients add up.
    y0s = np.array([[1.0, 0.0, 0.0], [0.5, 0.0, 0.5]])
    data2 = ode.solve("rober", y0s, t_save, truth, **tight)
    loss2, grad2 = ode.value_and_grad("rober", y0s, t_save, guess, data2, sigma, **tight)
    parts = [ode.value_and_grad("rober", y0s[i], t_save, guess, data2[i], sigma, **tight) for i in range(2)]
    assert loss2 == pytest.approx(parts[0][0] + parts[1][0], rel=1e-12)
    np.testing.assert_allclose(grad2, parts[0][1] + parts[1][1], rtol=1e-12)


def test_bad_input_raises_the_librarys_message():
    with pytest.raises(solvent.ArgumentError, match=r"y0: expected shape \(3,\) or \(N, 3\).*rober.*\(4,\)"):
        ode.solve("rober", [1.0, 0, 0, 0], [0, 1])
    with pytest.raises(solvent.ArgumentError, match="y0 has 3 trajectories but params has 2"):
        ode.solve(VDP_F, np.zeros((3, 2)), [0, 1], np.ones((2, 1)))
    with pytest.raises(solvent.ArgumentError, match=r"rtol = 1e\+300: expected a value >= 0 and <= 0.1"):
        ode.solve("rober", t_save=[0, 1], rtol=1e300)
    with pytest.raises(solvent.ArgumentError, match=r"tsave must increase"):
        ode.solve("rober", t_save=[0, 2, 1])
    broken = "int f(double t, const double *y, const double *p, double *dy, void *u)\n{\n    dy[0] = oops;\n}\n"
    with pytest.raises(solvent.ArgumentError, match=r"rhs\.c:3:\d+: error: .oops. undeclared"):
        ode.solve(broken, [1.0], [0, 1])
    with pytest.raises(solvent.ArgumentError, match="defines no function f"):
        ode.solve("int g(void) { return 0; }", [1.0], [0, 1])
    with pytest.raises(solvent.ArgumentError, match="method 'bdf'"):
        ode.solve("rober", t_save=[0, 1], method="bdf")


def test_a_failing_python_f_raises_its_exception():
    def f(t, Y, P):
        raise ZeroDivisionError("in the user's f")

    with pytest.raises(ZeroDivisionError, match="user's f"):
        ode.solve(f, [1.0], [0, 1])


def test_failed_trajectories_are_reported():
    y, stats = ode.solve("rober", np.tile([1.0, 0, 0], (3, 1)), [0, 1e5], max_steps=20, return_stats=True)
    assert np.all(stats["status"] == ode.MAX_STEPS) and np.all(np.isnan(y[:, 1]))
    assert np.all(stats["accepted"] + stats["rejected"] == 20)
    with pytest.warns(RuntimeWarning, match="3 of 3 trajectories did not succeed.*maximum number of steps"):
        ode.solve("rober", np.tile([1.0, 0, 0], (3, 1)), [0, 1e5], max_steps=20)


def test_repeated_calls_leak_nothing(monkeypatch):
    """Two equal rounds of solves (C source, built-in with sensitivities,
    Python f) after a first: Python's heap grows by less than a few
    objects' worth, and every context ends holding nothing (each checked
    when the next one is made)."""
    tally = check_contexts(monkeypatch, ode)

    def round_of_calls():
        for _ in range(40):
            ode.solve(VDP_F, [2.0, 0.0], [0, 0.1], [5.0])
            ode.solve("rober", t_save=[0, 1], sensitivities="params")
            ode.solve(vdp_numpy, [2.0, 0.0], [0, 0.01], [5.0])

    assert heap_growth(round_of_calls) < 10_000
    assert tally["checked"] >= 359 and tally["holding"] == 0


def test_ctrl_c_stops_a_long_ensemble(monkeypatch):
    """A Ctrl-C 0.3 s into an ensemble that runs many seconds raises
    KeyboardInterrupt within a second and leaves the context holding
    nothing."""
    contexts = capture_contexts(monkeypatch, ode)

    def interrupted():  # (uninterrupted it takes about a minute here)
        ode.solve("orego", np.tile([1.0, 2.0, 3.0], (400_000, 1)), [0, 360], progress=lambda phase, f: None)

    assert ctrl_c_after(0.3, interrupted) < 1.0
    assert contexts and lib.sv_ctx_memory_current(contexts[-1]) == 0


# A nonlinear chain: y_i' = p (y_{i-1} − 2 y_i + y_{i+1}) − y_i³ (zero
# beyond the ends), whose Jacobian is tridiagonal.
CHAIN = """
int f(double t, const double *y, const double *p, double *dy, void *user)
{
    for (int i = 0; i < 6; i++) {
        double left = i > 0 ? y[i - 1] : 0, right = i < 5 ? y[i + 1] : 0;
        dy[i] = p[0] * (left - 2 * y[i] + right) - y[i] * y[i] * y[i];
    }
    return 0;
}
"""


def test_sparsity_forms_agree_and_a_missing_entry_is_named():
    """The same tridiagonal pattern as a mask, a scipy.sparse matrix and
    (row, column) pairs: bit for bit; against the dense solve within the
    tolerance; a pattern without the off-diagonals: the library's message
    naming the missing entries."""
    import scipy.sparse

    mask = np.eye(6, dtype=bool) | np.eye(6, k=1, dtype=bool) | np.eye(6, k=-1, dtype=bool)
    pairs = np.argwhere(mask)
    y0 = np.linspace(1, 2, 6)
    t_save = [0, 0.1, 1, 5]
    params = np.array([[100.0], [1000.0]])
    common = dict(rtol=1e-8, atol=1e-10)
    y_mask = ode.solve(CHAIN, y0, t_save, params, sparsity=mask, **common)
    for pattern in (scipy.sparse.csr_matrix(mask.astype(float)), pairs, pairs[::-1]):
        np.testing.assert_array_equal(ode.solve(CHAIN, y0, t_save, params, sparsity=pattern, **common), y_mask)
    dense = ode.solve(CHAIN, y0, t_save, params, **common)
    np.testing.assert_allclose(y_mask, dense, rtol=1e-6, atol=1e-9)
    with pytest.raises(solvent.SolventError, match=r"pattern misses .*\(0, 1\)"):
        ode.solve(CHAIN, y0, t_save, params, sparsity=np.eye(6, dtype=bool))
    with pytest.raises(solvent.ArgumentError, match=r"sparsity: a mask must have shape \(6, 6\)"):
        ode.solve(CHAIN, y0, t_save, params, sparsity=np.ones((5, 5), dtype=bool))
    with pytest.raises(solvent.ArgumentError, match=r"sparsity: entries must lie in 0..5"):
        ode.solve(CHAIN, y0, t_save, params, sparsity=np.array([[0, 6]]))


CHAIN_JAC = CHAIN + """
int jac(double t, const double *y, const double *p, double *J, double *dfdt, void *user)
{
    int e = 0;                          /* the tridiagonal pattern's entries, row by row */
    for (int i = 0; i < 6; i++) {
        if (i > 0) J[e++] = p[0];
        J[e++] = -2 * p[0] - 3 * y[i] * y[i];
        if (i < 5) J[e++] = p[0];
    }
    return 0;
}
"""


def chain_numpy(t, Y, P):
    left = np.pad(Y, ((0, 0), (1, 0)))[:, :-1]
    right = np.pad(Y, ((0, 0), (0, 1)))[:, 1:]
    return P[:, :1] * (left - 2 * Y + right) - Y * Y * Y


def chain_jac_numpy(t, Y, P):
    p = P[:, 0]
    values = []
    for i in range(6):
        values += ([p] if i > 0 else []) + [-2 * p - 3 * Y[:, i] * Y[:, i]] + ([p] if i < 5 else [])
    return np.stack(values, axis=1)


def test_sparse_jacobian_from_c_source_and_from_python_agree():
    mask = np.eye(6, dtype=bool) | np.eye(6, k=1, dtype=bool) | np.eye(6, k=-1, dtype=bool)
    y0, t_save, params = np.linspace(1, 2, 6), [0, 0.1, 1, 5], np.array([[100.0], [1000.0]])
    from_source = ode.solve(CHAIN_JAC, y0, t_save, params, sparsity=mask)
    from_python = ode.solve(chain_numpy, y0, t_save, params, sparsity=mask, jac=chain_jac_numpy)
    np.testing.assert_array_equal(from_python, from_source)


def test_builtin_defaults_are_robertsons():
    """Robertson (1966): y0 = (1, 0, 0), rate constants 0.04, 3e7 and 1e4."""
    rober = ode.builtin_defaults("rober")
    np.testing.assert_array_equal(rober["y0"], [1.0, 0.0, 0.0])
    assert sorted(rober["params"]) == [0.04, 1e4, 3e7]
