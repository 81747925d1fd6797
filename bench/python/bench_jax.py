"""The right-hand-side routes and the JAX peers on modax's Robertson case,
in one run on this machine: medians of a few repetitions, JSON lines.

    .venv/bin/python bench/python/bench_jax.py [--trajectories 10000] [--peer-trajectories 100] [--reps 3]

Robertson as modax's tests write it (y, t, p) with rates k1 = 0.04,
k2 = 1e4, k3 = 3e7 each perturbed by up to ±10 % per trajectory, y0 =
(1, 0, 0), saved at 0, 1e-2, 1, 1e2, 1e4, 1e5, rtol 1e-8, atol 1e-10
(modax's defaults). Accuracy: the largest |y − ref| / (|ref| + atol) over
the first few trajectories against scipy's Radau at rtol 1e-12.

Lines (ours / anchor):
  rober_route_*     one route of the right-hand side (C source text with an
                    analytic Jacobian, or with f_complex as the numba route
                    has it; numba cfunc; solvent.jax) against the built-in
                    Robertson (hand-written C with its analytic Jacobian);
                    setup_s: generating and compiling it, outside ours_s.
  rober_peer_*      solvent.jax per trajectory against a peer per
                    trajectory: diffrax Kvaerno5 under jax.vmap (jit-ed,
                    timed after its compile), scipy Radau one by one.
  rober_grad_diffrax jax.grad of a least-squares loss through solvent.jax
                    (forward sensitivities) and through diffrax Kvaerno5
                    (its default adjoint), and how far apart the two are.
  rober_peer_modax  whether modax (PyPI modax-solvers) runs here."""
import argparse
import importlib.metadata
import json
import statistics
import time

import numpy as np
import scipy.integrate

import jax
import jax.numpy as jnp

import solvent.jax as sj
import solvent.numba as snumba
from solvent import ode

T_SAVE = np.array([0.0, 1e-2, 1.0, 1e2, 1e4, 1e5])
RTOL, ATOL = 1e-8, 1e-10
K = np.array([0.04, 1e4, 3e7])


def robertson(y, t, p):
    return (-p[0] * y[0] + p[1] * y[1] * y[2],
            p[0] * y[0] - p[1] * y[1] * y[2] - p[2] * y[1] ** 2,
            p[2] * y[1] ** 2)


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
    J[0] = -p[0];  J[1] = p[1] * y[2];                           J[2] = p[1] * y[1];
    J[3] = p[0];   J[4] = -p[1] * y[2] - 2 * p[2] * y[1];       J[5] = -p[1] * y[1];
    J[6] = 0;      J[7] = 2 * p[2] * y[1];                       J[8] = 0;
    return 0;
}
"""

# The numba route's callbacks written in C: f and its complex twin, the
# Jacobian by complex step (like for like with rober_route_numba_cfunc).
ROBER_C_COMPLEX = """
#include <complex.h>
#define ROBER(NAME, T)                                                          \\
    int NAME(T t, const T *y, const double *p, T *dy, void *user)              \\
    {                                                                           \\
        dy[0] = -p[0] * y[0] + p[1] * y[1] * y[2];                              \\
        dy[1] = p[0] * y[0] - p[1] * y[1] * y[2] - p[2] * (y[1] * y[1]);        \\
        dy[2] = p[2] * (y[1] * y[1]);                                           \\
        return 0;                                                               \\
    }
ROBER(f, double)
ROBER(f_complex, double complex)
"""


def rober_numba(t, y, p, dy):
    dy[0] = -p[0] * y[0] + p[1] * y[1] * y[2]
    dy[1] = p[0] * y[0] - p[1] * y[1] * y[2] - p[2] * (y[1] * y[1])
    dy[2] = p[2] * (y[1] * y[1])


def timed(run, reps):
    times = []
    for _ in range(reps):
        start = time.perf_counter()
        out = run()
        times.append(time.perf_counter() - start)
    return statistics.median(times), out


def line(case, ours, anchor, anchor_s, **extra):
    print(json.dumps({"bench": "jax", "case": case, "ours_s": round(ours, 5), "anchor": anchor,
                      "anchor_s": None if anchor_s is None else round(anchor_s, 5),
                      "ratio": None if anchor_s is None else round(ours / anchor_s, 4), **extra}), flush=True)


def reference(params, count):
    """Radau at rtol 1e-12 (analytic Jacobian) for the first `count` trajectories."""
    out = []
    for k1, k2, k3 in params[:count]:
        def f(t, y):
            return [-k1 * y[0] + k2 * y[1] * y[2], k1 * y[0] - k2 * y[1] * y[2] - k3 * y[1] ** 2, k3 * y[1] ** 2]

        def jac(t, y):
            return [[-k1, k2 * y[2], k2 * y[1]], [k1, -k2 * y[2] - 2 * k3 * y[1], -k2 * y[1]], [0, 2 * k3 * y[1], 0]]

        sol = scipy.integrate.solve_ivp(f, (0, T_SAVE[-1]), [1.0, 0.0, 0.0], method="Radau", t_eval=T_SAVE, jac=jac,
                                        rtol=1e-12, atol=1e-16)
        out.append(sol.y.T)
    return np.array(out)


def error(y, ref):
    y = np.asarray(y)[:len(ref)]
    return float(np.max(np.abs(y - ref) / (np.abs(ref) + ATOL)))


def routes(params, ref, reps):
    y0 = np.tile([1.0, 0.0, 0.0], (len(params), 1))
    kw = dict(rtol=RTOL, atol=ATOL)
    anchor_s, y_b = timed(lambda: ode.solve("rober", y0, T_SAVE, params, **kw), reps)
    start = time.perf_counter()
    numba_rhs = snumba.rhs(rober_numba, n=3, nparams=3, sensitivities=False)
    numba_setup = time.perf_counter() - start
    start = time.perf_counter()
    sj.generate(robertson, 3, 3)
    from solvent import _compile
    _compile.compile_source(sj.generate(robertson, 3, 3).source)
    jax_setup = time.perf_counter() - start
    cases = [("c_source", lambda: ode.solve(ROBER_C, y0, T_SAVE, params, **kw), None),
             ("c_source_complex_step", lambda: ode.solve(ROBER_C_COMPLEX, y0, T_SAVE, params, **kw), None),
             ("numba_cfunc", lambda: ode.solve(numba_rhs, y0, T_SAVE, params, **kw), numba_setup),
             ("solvent_jax", lambda: sj.solve(robertson, y0, T_SAVE, params, **kw).block_until_ready(), jax_setup)]
    for source in (ROBER_C, ROBER_C_COMPLEX):  # compile the C sources outside the timing
        ode.solve(source, y0[:2], T_SAVE, params[:2], **kw)
    per_traj = None
    for name, run, setup in cases:
        ours, y = timed(run, reps)
        extra = {"setup_s": round(setup, 3)} if setup is not None else {}
        line(f"rober_route_{name}", ours, "built-in rober (C, analytic Jacobian)", anchor_s,
             trajectories=len(params), rel_err=error(y, ref), anchor_rel_err=error(y_b, ref), **extra)
        if name == "solvent_jax":
            per_traj = ours / len(params)
    return per_traj, error(y, ref)


def diffrax_solver(trajectories_params):
    import diffrax

    term = diffrax.ODETerm(lambda t, y, p: jnp.stack(robertson(y, t, p)))

    def one(p):
        sol = diffrax.diffeqsolve(term, diffrax.Kvaerno5(), 0.0, T_SAVE[-1], 1e-6, jnp.array([1.0, 0.0, 0.0]), args=p,
                                  saveat=diffrax.SaveAt(ts=jnp.asarray(T_SAVE)),
                                  stepsize_controller=diffrax.PIDController(rtol=RTOL, atol=ATOL),
                                  max_steps=100_000)
        return sol.ys

    return one


def peers(params, ref, ours_per_traj, ours_err, reps):
    try:
        import diffrax  # noqa: F401
    except ImportError:
        line("rober_peer_diffrax_kvaerno5", ours_per_traj, "diffrax (not installed)", None)
    else:
        one = diffrax_solver(params)
        batch = jax.jit(jax.vmap(one))
        p = jnp.asarray(params)
        start = time.perf_counter()
        batch(p).block_until_ready()
        compile_s = time.perf_counter() - start
        anchor_s, y = timed(lambda: batch(p).block_until_ready(), reps)
        line("rober_peer_diffrax_kvaerno5", ours_per_traj, "diffrax Kvaerno5, jax.vmap, CPU (per trajectory)",
             anchor_s / len(params), peer_trajectories=len(params), rel_err=ours_err,
             anchor_rel_err=error(y, ref), anchor_compile_s=round(compile_s, 2))
    count = min(3, len(params))

    def radau():
        for k1, k2, k3 in params[:count]:
            scipy.integrate.solve_ivp(
                lambda t, y: [-k1 * y[0] + k2 * y[1] * y[2], k1 * y[0] - k2 * y[1] * y[2] - k3 * y[1] ** 2,
                              k3 * y[1] ** 2], (0, T_SAVE[-1]), [1.0, 0.0, 0.0], method="Radau", t_eval=T_SAVE,
                rtol=RTOL, atol=ATOL)

    anchor_s, _ = timed(radau, 1)
    line("rober_peer_scipy_radau", ours_per_traj, "scipy solve_ivp Radau, one by one (per trajectory)",
         anchor_s / count, rel_err=ours_err)


def gradient(params, reps):
    """jax.grad of Σ (y − data)² over the ensemble with respect to the
    rates, through both solvers."""
    try:
        import diffrax  # noqa: F401
    except ImportError:
        return
    p = jnp.asarray(params)
    data = np.asarray(sj.solve(robertson, np.array([1.0, 0.0, 0.0]), T_SAVE, p * 1.02, rtol=1e-10, atol=1e-12))
    batch = jax.vmap(diffrax_solver(params))

    def ours(q):
        return jnp.sum((sj.solve(robertson, np.array([1.0, 0.0, 0.0]), T_SAVE, q, rtol=RTOL, atol=ATOL) - data) ** 2)

    def theirs(q):
        return jnp.sum((batch(q) - data) ** 2)

    g_ours = jax.jit(jax.grad(ours))
    g_theirs = jax.jit(jax.grad(theirs))
    g_theirs(p).block_until_ready()
    g_ours(p).block_until_ready()
    ours_s, a = timed(lambda: g_ours(p).block_until_ready(), reps)
    anchor_s, b = timed(lambda: g_theirs(p).block_until_ready(), reps)
    a, b = np.asarray(a), np.asarray(b)
    line("rober_grad_diffrax", ours_s, "jax.grad through diffrax Kvaerno5 (vmap, CPU)", anchor_s,
         trajectories=len(params), grad_rel_diff=float(np.max(np.abs(a - b)) / np.max(np.abs(b))))


def modax():
    try:
        version = importlib.metadata.version("modax-solvers")
    except importlib.metadata.PackageNotFoundError:
        version = None
    reason = ("not installed: modax-solvers 0.0.4 needs numba-cuda-mlir and numba-enzyme-cuda (CUDA kernels; no "
              "CPU back end), and its build downloads files" if version is None else f"installed {version}")
    print(json.dumps({"bench": "jax", "case": "rober_peer_modax", "ours_s": None, "anchor": "modax", "anchor_s": None,
                      "ratio": None, "skipped": reason}), flush=True)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--trajectories", type=int, default=10_000)
    parser.add_argument("--peer-trajectories", type=int, default=100)
    parser.add_argument("--reps", type=int, default=3)
    a = parser.parse_args()
    rng = np.random.default_rng(1)
    params = K * rng.uniform(0.9, 1.1, (a.trajectories, 3))
    ref = reference(params, 3)
    per_traj, err = routes(params, ref, a.reps)
    peer_params = params[:a.peer_trajectories]
    peers(peer_params, ref, per_traj, err, a.reps)
    gradient(params[:min(20, a.peer_trajectories)], a.reps)
    modax()


if __name__ == "__main__":
    main()
