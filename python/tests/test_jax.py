"""solvent.jax against independent references: the generated C callbacks
against jax evaluating the same function (and its jacfwd and jvp), the
trajectories against scipy's Radau at tight tolerance, and the gradients
(jax.jacfwd, jax.grad, jax.value_and_grad through the library's forward
sensitivities) against central differences of Radau's solutions."""
import ctypes

import numpy as np
import pytest
import scipy.integrate

jax = pytest.importorskip("jax")

import jax.numpy as jnp  # noqa: E402

import solvent  # noqa: E402
import solvent.jax as sj  # noqa: E402
from solvent import _compile  # noqa: E402


@pytest.fixture(autouse=True, scope="module")
def fresh_cache(tmp_path_factory):
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("SOLVENT_CACHE", str(tmp_path_factory.mktemp("cache")))
        yield


def forced_vdp(y, t, p):
    """Van der Pol driven at its input: stiff for large μ = p[0],
    non-autonomous (a sin(ω t)), with a transcendental function of y."""
    return (y[1], p[0] * (1 - y[0] ** 2) * y[1] - y[0] + p[1] * jnp.sin(p[2] * t) + 0.1 * jnp.tanh(y[0]))


def forced_vdp_scipy(p):
    def f(t, y):
        return [y[1], p[0] * (1 - y[0] ** 2) * y[1] - y[0] + p[1] * np.sin(p[2] * t) + 0.1 * np.tanh(y[0])]

    def jac(t, y):
        return [[0.0, 1.0], [-2 * p[0] * y[0] * y[1] - 1 + 0.1 / np.cosh(y[0]) ** 2, p[0] * (1 - y[0] ** 2)]]

    return f, jac


def robertson(y, t, p):
    """modax's Robertson, as its users write it (a tuple, (y, t, p))."""
    return (-p[0] * y[0] + p[1] * y[1] * y[2],
            p[0] * y[0] - p[1] * y[1] * y[2] - p[2] * y[1] ** 2,
            p[2] * y[1] ** 2)


T_SAVE = np.linspace(0.0, 2.0, 5)
PARAMS = np.array([[30.0, 0.5, 3.0], [60.0, 1.0, 2.0]])
Y0 = np.array([2.0, 0.0])


def radau(p, y0=Y0, t_save=T_SAVE):
    f, jac = forced_vdp_scipy(p)
    sol = scipy.integrate.solve_ivp(f, (t_save[0], t_save[-1]), y0, method="Radau", t_eval=t_save, rtol=1e-12,
                                    atol=1e-13, jac=jac)
    assert sol.success
    return sol.y.T


def test_generated_callbacks_agree_with_jax():
    """f, the Jacobian (its pattern entries), ∂f/∂t, the tangent and the
    Jacobian's directional derivative, compiled from the generated C and
    called at random points, against jax's own f, jacfwd and jvp."""
    gen = sj.generate(forced_vdp, 2, 3)
    assert gen.nonautonomous and [tuple(e) for e in gen.pairs] == [(0, 1), (1, 0), (1, 1)]
    lib = _compile.compile_source(gen.source)
    D = ctypes.POINTER(ctypes.c_double)
    rng = np.random.default_rng(3)
    F = jax.jit(lambda t, y, p: jnp.stack(forced_vdp(y, t, p)))
    J, dFdt = jax.jit(jax.jacfwd(F, argnums=1)), jax.jit(jax.jacfwd(F, argnums=0))
    tangent = jax.jit(lambda t, y, p, v, vp: jax.jvp(lambda y_, p_: F(t, y_, p_), (y, p), (v, vp))[1])
    jac_dir = jax.jit(lambda t, y, p, v, vp: jax.jvp(lambda y_, p_: (J(t, y_, p_), dFdt(t, y_, p_)), (y, p),
                                                     (v, vp))[1])

    def ptr(a):
        return np.ascontiguousarray(a, dtype=np.float64).ctypes.data_as(D)

    for _ in range(3):
        t, y, p, v, vp = rng.uniform(0.1, 2), rng.normal(size=2), rng.uniform(1, 5, 3), rng.normal(size=2), \
            rng.normal(size=3)
        out, vals, dt = np.empty(2), np.empty(3), np.empty(2)
        lib.f(ctypes.c_double(t), ptr(y), ptr(p), out.ctypes.data_as(D), None)
        np.testing.assert_allclose(out, F(t, y, p), rtol=1e-15, atol=1e-15)
        lib.jac(ctypes.c_double(t), ptr(y), ptr(p), vals.ctypes.data_as(D), dt.ctypes.data_as(D), None)
        Jref = np.asarray(J(t, y, p))
        np.testing.assert_allclose(vals, [Jref[0, 1], Jref[1, 0], Jref[1, 1]], rtol=1e-14)
        np.testing.assert_allclose(dt, dFdt(t, y, p), rtol=1e-14)
        lib.tangent(ctypes.c_double(t), ptr(y), ptr(p), ptr(v), ptr(vp), out.ctypes.data_as(D), None)
        np.testing.assert_allclose(out, tangent(t, y, p, v, vp), rtol=1e-13)
        lib.jac_dir(ctypes.c_double(t), ptr(y), ptr(p), ptr(v), ptr(vp), vals.ctypes.data_as(D),
                    dt.ctypes.data_as(D), None)
        dJ, ddt = jac_dir(t, y, p, v, vp)
        np.testing.assert_allclose(vals, [dJ[0, 1], dJ[1, 0], dJ[1, 1]], rtol=1e-13, atol=1e-14)
        np.testing.assert_allclose(dt, ddt, rtol=1e-13, atol=1e-14)


def test_trajectories_agree_with_radau():
    """Every saved state within 100·(rtol·|y| + atol) of Radau at rtol 1e-12."""
    rtol, atol = 1e-8, 1e-10
    y, stats = sj.solve(forced_vdp, Y0, T_SAVE, PARAMS, rtol=rtol, atol=atol, return_stats=True)
    assert y.shape == (2, 5, 2) and np.all(np.asarray(stats["status"]) == solvent.ode.SUCCESS)
    for k, p in enumerate(PARAMS):
        ref = radau(p)
        err = np.abs(np.asarray(y[k]) - ref) / (rtol * np.abs(ref) + atol)
        assert err.max() < 100, f"trajectory {k}: {err.max():.1f} × (rtol·|y| + atol)"


def radau_sensitivities(p, y0=Y0, t_save=T_SAVE):
    """y, ∂y/∂p and ∂y/∂y0 from Radau on the variational equations
    S' = J·S + ∂f/∂θ (S(0) = 0 for p, I for y0), with J and ∂f/∂p written
    out by hand here."""
    f, jac = forced_vdp_scipy(p)

    def dfdp(t, y):
        return np.array([[0.0, 0.0, 0.0], [(1 - y[0] ** 2) * y[1], np.sin(p[2] * t), p[1] * t * np.cos(p[2] * t)]])

    def rhs(t, z):
        y, S = z[:2], z[2:].reshape(2, 5)
        J = np.asarray(jac(t, y))
        return np.concatenate([f(t, y), (J @ S + np.hstack([dfdp(t, y), np.zeros((2, 2))])).ravel()])

    z0 = np.concatenate([y0, np.hstack([np.zeros((2, 3)), np.eye(2)]).ravel()])
    sol = scipy.integrate.solve_ivp(rhs, (t_save[0], t_save[-1]), z0, method="Radau", t_eval=t_save, rtol=1e-11,
                                    atol=1e-12)
    assert sol.success
    z = sol.y.T
    S = z[:, 2:].reshape(-1, 2, 5)
    return z[:, :2], S[..., :3], S[..., 3:]


def test_jacfwd_and_grad_agree_with_radau_sensitivities():
    """∂y/∂p and ∂y/∂y0 of one trajectory (jax.jacfwd through the
    library's sensitivities) and the gradient of a loss (jax.grad and
    jax.value_and_grad: reverse mode over the same JVP) against Radau on
    the variational equations."""
    p = PARAMS[0]
    kw = dict(rtol=1e-10, atol=1e-12)
    y_ref, dydp_ref, dydy0_ref = radau_sensitivities(p)
    dydp = np.asarray(jax.jacfwd(lambda q: sj.solve(forced_vdp, Y0, T_SAVE, q, **kw)[0])(jnp.asarray(p)))
    assert np.abs(dydp - dydp_ref).max() / np.abs(dydp_ref).max() < 1e-6
    dydy0 = np.asarray(jax.jacfwd(lambda z: sj.solve(forced_vdp, z, T_SAVE, p, **kw)[0])(jnp.asarray(Y0)))
    assert np.abs(dydy0 - dydy0_ref).max() / np.abs(dydy0_ref).max() < 1e-6

    data = y_ref * 1.01 + 0.01

    def loss(q):
        return jnp.sum((sj.solve(forced_vdp, Y0, T_SAVE, q, **kw)[0] - data) ** 2)

    value, grad = jax.value_and_grad(loss)(jnp.asarray(p))
    np.testing.assert_allclose(value, np.sum((y_ref - data) ** 2), rtol=1e-6)
    ref_grad = 2 * np.einsum("si,sik->k", y_ref - data, dydp_ref)
    np.testing.assert_allclose(np.asarray(grad), ref_grad, rtol=1e-6, atol=1e-9 * np.abs(ref_grad).max())
    np.testing.assert_array_equal(np.asarray(jax.grad(loss)(jnp.asarray(p))), np.asarray(grad))


def test_jit_and_vmap_give_the_ensemble_result():
    """Under jax.jit, and under jax.vmap (the batch joins the ensemble), the
    numbers are the plain call's bit for bit: a trajectory's result does not
    depend on which lane ran it."""
    y0 = np.array([[1.0, 0.0, 0.0], [0.9, 0.05, 0.05]])
    t = np.array([0.0, 1e-3, 1.0, 1e2])
    params = np.array([0.04, 1e4, 3e7])
    plain = np.asarray(sj.solve(robertson, y0, t, params, rtol=1e-8, atol=1e-12))
    jitted = jax.jit(lambda z: sj.solve(robertson, z, t, params, rtol=1e-8, atol=1e-12))(y0)
    np.testing.assert_array_equal(np.asarray(jitted), plain)
    batched = jax.vmap(lambda z: sj.solve(robertson, z, t, params, rtol=1e-8, atol=1e-12))(y0)
    assert batched.shape == (2, 1, 4, 3)
    np.testing.assert_array_equal(np.asarray(batched)[:, 0], plain)
    np.testing.assert_allclose(np.asarray(plain).sum(axis=-1), 1.0, rtol=1e-8)  # Robertson conserves mass


def test_bad_input_says_what_is_wrong():
    with pytest.raises(solvent.ArgumentError, match=r"ode_fn returned shape \(1,\): expected \(2,\)"):
        sj.solve(lambda y, t, p: (y[0],), Y0, T_SAVE, PARAMS[0])
    with pytest.raises(NotImplementedError, match="'while'"):
        sj.solve(lambda y, t, p: jax.lax.fori_loop(0, jnp.int32(p[0]), lambda i, z: z * 0.5, y), Y0, T_SAVE,
                 PARAMS[0])
    with pytest.raises(solvent.ArgumentError, match="sparsity: misses"):
        sj.solve(forced_vdp, Y0, T_SAVE, PARAMS[0], sparsity=np.eye(2, dtype=bool))


ROBER_C = """
int f(double t, const double *y, const double *p, double *dy, void *user)
{
    dy[0] = -p[0] * y[0] + p[1] * y[1] * y[2];
    dy[1] = p[0] * y[0] - p[1] * y[1] * y[2] - p[2] * (y[1] * y[1]);
    dy[2] = p[2] * (y[1] * y[1]);
    return 0;
}
int jac(double t, const double *y, const double *p, double *J, double *dfdt, void *user)
{
    J[0] = -p[0];  J[1] = p[1] * y[2];                     J[2] = p[1] * y[1];
    J[3] = p[0];   J[4] = -(p[1] * y[2]) - p[2] * (2 * y[1]); J[5] = -(p[1] * y[1]);
    J[6] = 0;      J[7] = p[2] * (2 * y[1]);               J[8] = 0;
    return 0;
}
"""


def test_generated_robertson_is_the_hand_written_c_bit_for_bit():
    """Where the arithmetic is the same (f as written, the Jacobian's
    entries as jax differentiates them), the generated callbacks and C
    written by hand give the same ensemble bit for bit."""
    rng = np.random.default_rng(5)
    params = np.array([0.04, 1e4, 3e7]) * rng.uniform(0.9, 1.1, (64, 3))
    t = np.array([0.0, 1e-2, 1.0, 1e2, 1e4])
    ours = np.asarray(sj.solve(robertson, np.array([1.0, 0.0, 0.0]), t, params, rtol=1e-8, atol=1e-10))
    by_hand = solvent.ode.solve(ROBER_C, [1.0, 0.0, 0.0], t, params, rtol=1e-8, atol=1e-10)
    np.testing.assert_array_equal(ours, by_hand)
