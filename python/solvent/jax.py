"""ODE ensembles for JAX programs, in modax's shape:

    import jax, jax.numpy as jnp
    import solvent.jax as sj

    def robertson(y, t, p):                  # modax's argument order
        return (-p[0] * y[0] + p[1] * y[1] * y[2],
                p[0] * y[0] - p[1] * y[1] * y[2] - p[2] * y[1] ** 2,
                p[2] * y[1] ** 2)

    y = sj.solve(robertson, y0, t_span, params)       # (N, n_save, n)
    loss, grad = jax.value_and_grad(lambda p: jnp.sum(sj.solve(robertson, y0, t_span, p) ** 2))(params)

ode_fn is written in jax.numpy for one trajectory. It is traced once to a
jaxpr; jax's own differentiation gives its Jacobian, ∂f/∂t, its tangent
(∂f/∂y)·v + (∂f/∂p)·vp and the Jacobian's derivative along (v, vp) (what
Rodas5P's sensitivities need), and all five are lowered to straight-line C
(solvent._jaxpr_c) and compiled once through the library's C route
(solvent._compile, cached by the source's hash). The solver then runs with
no Python and no XLA in its loop. The Jacobian's sparsity pattern is read
off the lowered Jacobian (entries that are structurally zero).

solve() is a JAX function: it runs inside jax.jit (jax.pure_callback; under
jax.vmap the batch joins the ensemble: one library call) and is
differentiable with respect to y0 and params by jax.jvp, jax.grad,
jax.jacfwd, jax.jacrev and jax.value_and_grad (a custom JVP fed by the
library's forward sensitivities, only for the arguments being
differentiated). Importing it enables jax's float64 (jax_enable_x64), as
modax does: the library computes in double precision."""
import functools
import warnings

import numpy as np

import jax
import jax.numpy as jnp
from jax.custom_derivatives import SymbolicZero

from . import _jaxpr_c as lowering
from . import ode
from ._core import ArgumentError
from ._native import lib

jax.config.update("jax_enable_x64", True)

_STATS = ("status", "accepted", "rejected", "nf", "njac")


def _arg_error(message):
    return ArgumentError(lib.SV_ERR_ARG, message)


# ---- ode_fn to C ----------------------------------------------------------------


class Generated:
    """ode_fn's C source (f, jac, tangent, jac_dir) for n states and
    nparams parameters, its Jacobian pattern as (nnz, 2) (row, column)
    pairs and whether f depends on t."""

    def __init__(self, source, pairs, nonautonomous, n, nparams):
        self.source, self.pairs, self.nonautonomous = source, pairs, nonautonomous
        self.n, self.nparams = n, nparams


def _as_vector(ode_fn, n):
    """ode_fn(y, t, p) as F(t, y, p) -> (n,) float64 (it may return an
    array or a tuple of scalars, as modax's do)."""

    def F(t, y, p):
        out = ode_fn(y, t, p)
        if isinstance(out, (tuple, list)):
            out = jnp.stack([jnp.asarray(o, dtype=jnp.float64) for o in out])
        out = jnp.asarray(out, dtype=jnp.float64)
        if out.shape != (n,):
            raise _arg_error(f"ode_fn returned shape {out.shape}: expected ({n},), one derivative per state")
        return out

    return F


def _symbols(name, size):
    """Inputs are locals (y_3), loaded from the arguments by each form of
    the callback: the scalar one from y[3], the batched one from y[3·W + w]."""
    out = np.empty((size,), dtype=object)
    for i in range(size):
        out[i] = lowering.Sym(f"{name}_{i}")
    return out


def _scalar(name):
    out = np.empty((), dtype=object)
    out[()] = lowering.Sym(f"{name}_")
    return out


def _is_zero(x):
    return lowering.known(x) and x == 0


@functools.lru_cache(maxsize=32)
def generate(ode_fn, n, nparams, pattern=None):
    """ode_fn lowered to the library's C callbacks (cached per function and
    sizes). pattern: the user's (row, column) pairs as a tuple, or None to
    use the structural pattern found."""
    F = _as_vector(ode_fn, n)
    J = jax.jacfwd(F, argnums=1)
    dFdt = jax.jacfwd(F, argnums=0)

    def jac_and_dfdt(t, y, p):
        return J(t, y, p), dFdt(t, y, p)

    def tangent(t, y, p, v, vp):
        return jax.jvp(lambda y_, p_: F(t, y_, p_), (y, p), (v, vp))[1]

    def jac_dir(t, y, p, v, vp):
        return jax.jvp(lambda y_, p_: jac_and_dfdt(t, y_, p_), (y, p), (v, vp))[1]

    base = [(), (n,), (nparams,)]
    ins = [_scalar("t"), _symbols("y", n), _symbols("p", nparams)]
    dirs = [(n,), (nparams,)]
    dins = [_symbols("v", n), _symbols("vp", nparams)]

    fb, (fout,) = lowering.lower(F, base, ins)
    jb, (jout, dtout) = lowering.lower(jac_and_dfdt, base, ins)
    found = [(i, j) for i in range(n) for j in range(n) if not _is_zero(jout[i, j])]
    pairs = _check_pattern(found, pattern, n)
    nonautonomous = not all(_is_zero(x) for x in dtout)
    tb, (tout,) = lowering.lower(tangent, base + dirs, ins + dins)
    db, (dout, ddtout) = lowering.lower(jac_dir, base + dirs, ins + dins)

    rows = [(i, j) for i, j in pairs]
    jac_out = [("values", [jout[i, j] for i, j in rows])] + ([("dfdt", dtout)] if nonautonomous else [])
    dir_out = [("dvals", [dout[i, j] for i, j in rows])] + ([("ddfdt", ddtout)] if nonautonomous else [])
    sizes = {"y": n, "p": nparams, "v": n, "vp": nparams}
    parts = []
    for batched in (False, True):
        parts += [
            _function("f", ["y", "p"], "double *dydt", fb, [("dydt", fout)], sizes, batched),
            _function("jac", ["y", "p"], "double *values, double *dfdt", jb, jac_out, sizes, batched),
            _function("tangent", ["y", "p", "v", "vp"], "const double *v, const double *vp, double *out", tb,
                      [("out", tout)], sizes, batched),
            _function("jac_dir", ["y", "p", "v", "vp"],
                      "const double *v, const double *vp, double *dvals, double *ddfdt", db, dir_out, sizes,
                      batched),
        ]
    header = (f"/* generated by solvent.jax from {getattr(ode_fn, '__qualname__', 'ode_fn')}: n = {n}, "
              f"nparams = {nparams}, {len(pairs)} Jacobian entries */\n")
    return Generated(header + "\n".join(parts), np.array(pairs, dtype=np.int64).reshape(-1, 2), nonautonomous, n,
                     nparams)


def _check_pattern(found, pattern, n):
    if pattern is None:
        return found
    missing = sorted(set(found) - set(pattern))
    if missing:
        raise _arg_error(f"sparsity: misses {len(missing)} entries where ∂f_i/∂y_j is not structurally zero, "
                         f"first (i, j) = {missing[0]}")
    return sorted(set(pattern))


# Outputs the library may pass as NULL (written only when asked for) and
# inputs that may be NULL (vp: a zero parameter direction).
_OPTIONAL_OUT = {"dfdt", "ddfdt"}
_OPTIONAL_IN = {"vp"}


def _function(name, inputs, outputs_decl, builder, stores, sizes, batched):
    """The C text of one callback, scalar (ode.h's sv_ode_*_fn) or batched
    over W lanes, slot-major (sv_ode_*_batch_fn: entry i of lane w at
    [i·W + w]): load the inputs, the builder's statements, the stores. Both
    forms compute the same expressions, so a lane rounds as the scalar
    call does."""
    if batched:
        head = f"int {name}_batch(int W, const double *t, const double *y, const double *p, {outputs_decl}, void *user)"
        at = "{k} * W + w"
        lines = [head, "{", "    (void)p; (void)user;", "    for (int w = 0; w < W; ++w) {",
                 "    const double t_ = t[w];"]
    else:
        head = f"int {name}(double t, const double *y, const double *p, {outputs_decl}, void *user)"
        at = "{k}"
        lines = [head, "{", "    (void)user;", "    {", "    const double t_ = t;"]
    for arg in inputs:
        for k in range(sizes[arg]):
            index = at.format(k=k)
            load = f"({arg} ? {arg}[{index}] : 0.0)" if arg in _OPTIONAL_IN else f"{arg}[{index}]"
            lines.append(f"    const double {arg}_{k} = {load};")
    lines.append("    (void)t_;")
    lines += builder.lines
    for target, values in stores:
        guard = target in _OPTIONAL_OUT
        if guard:
            lines.append(f"    if ({target}) {{")
        for k, x in enumerate(values):
            lines.append(f"    {'    ' if guard else ''}{target}[{at.format(k=k)}] = {lowering.text(x)};")
        if guard:
            lines.append("    }")
    lines += ["    }", "    return 0;", "}", ""]
    return "\n".join(lines)


# ---- the host side -----------------------------------------------------------


def _host(generated, options, which, y0, params, t_save):
    """The library's solve of y0 (..., N, n), params (..., N, p), t_save
    (..., n_save) (leading axes: a jax.vmap batch, joined into one
    ensemble): y, the sensitivities when asked, statistics as floats."""
    y0, params, t_save = np.asarray(y0), np.asarray(params), np.asarray(t_save)
    lead, (N, n), ns = y0.shape[:-2], y0.shape[-2:], t_save.shape[-1]
    times = t_save.reshape(-1, ns)
    if not np.all(times == times[0]):
        raise _arg_error("t_span: solvent.jax.solve under jax.vmap needs the same save times in every batch")
    kwargs = dict(options)
    result = ode.solve(generated.source, y0.reshape(-1, n), times[0],
                       params.reshape(-1, generated.nparams) if generated.nparams else None,
                       sparsity=generated.pairs, nonautonomous=generated.nonautonomous,
                       sensitivities=which, return_stats=True, **kwargs)
    stats = result[-1]
    failed = np.flatnonzero(stats["status"] != ode.SUCCESS)
    if failed.size:
        k = int(failed[0])
        warnings.warn(f"solvent.jax: {failed.size} of {stats['status'].size} trajectories did not succeed (NaN "
                      f"after their last time reached); trajectory {k}: "
                      f"{ode.STATUS_NAMES[int(stats['status'][k])]} at t = {stats['t_reached'][k]:g}",
                      RuntimeWarning, stacklevel=2)
    table = np.stack([stats[name].astype(np.float64) for name in _STATS], axis=-1).reshape(lead + (N, len(_STATS)))
    y = result[0].reshape(lead + (N, ns, n))
    if which is None:
        return y, table
    S = result[1]
    return y, S.reshape(lead + (N, ns, n, S.shape[-1])), table


def _callback(generated, options, which, y0, params, t_save):
    N, n = y0.shape
    ns = t_save.shape[0]
    shapes = [jax.ShapeDtypeStruct((N, ns, n), jnp.float64)]
    if which is not None:
        nsens = {"params": generated.nparams, "y0": n, "both": generated.nparams + n}[which]
        shapes.append(jax.ShapeDtypeStruct((N, ns, n, nsens), jnp.float64))
    shapes.append(jax.ShapeDtypeStruct((N, len(_STATS)), jnp.float64))
    return jax.pure_callback(functools.partial(_host, generated, options, which), tuple(shapes), y0, params, t_save,
                             vmap_method="broadcast_all")


@functools.lru_cache(maxsize=64)
def _differentiable(generated, options):
    """The solve of (y0 (N, n), params (N, p), t_save) -> (y, stats) with
    its JVP from the forward sensitivities of just the arguments whose
    tangents are not zero."""
    m = generated.nparams

    @jax.custom_jvp
    def run(y0, params, t_save):
        return _callback(generated, options, None, y0, params, t_save)

    def run_jvp(primals, tangents):
        y0, params, t_save = primals
        dy0, dp, dt = tangents
        if not isinstance(dt, SymbolicZero):
            raise NotImplementedError("solvent.jax.solve is differentiable with respect to y0 and params, not "
                                      "t_span")
        want_p = m > 0 and not isinstance(dp, SymbolicZero)
        want_y = not isinstance(dy0, SymbolicZero)
        if not (want_p or want_y):
            y, stats = run(y0, params, t_save)
            return (y, stats), (jnp.zeros_like(y), jnp.zeros_like(stats))
        which = "both" if want_p and want_y else "params" if want_p else "y0"
        y, S, stats = _callback(generated, options, which, y0, params, t_save)
        ydot = jnp.zeros_like(y)
        if want_p:  # parameters first (the library's order)
            ydot = ydot + jnp.einsum("isjk,ik->isj", S[..., :m], dp)
        if want_y:
            ydot = ydot + jnp.einsum("isjk,ik->isj", S[..., (m if want_p else 0):], dy0)
        return (y, stats), (ydot, jnp.zeros_like(stats))

    run.defjvp(run_jvp, symbolic_zeros=True)
    return run


def _options(method, rtol, atol, first_step, max_steps, threads):
    if np.ndim(atol):
        atol = tuple(float(a) for a in np.ravel(atol))
    return tuple((k, v) for k, v in (("method", method), ("rtol", rtol), ("atol", atol), ("first_step", first_step),
                                      ("max_steps", max_steps), ("threads", threads)) if v is not None)


def _pattern_key(sparsity, n):
    if sparsity is None:
        return None
    keep = []
    rowptr, colind = ode._pattern(sparsity, n, keep)
    rp, ci = keep
    return tuple((i, int(ci[e])) for i in range(n) for e in range(rp[i], rp[i + 1]))


def solve(ode_fn, y0, t_span, params=None, *, method="rodas5p", rtol=None, atol=None, first_step=None, max_steps=None,
          return_stats=False, sparsity=None, threads=0):
    """Integrate dy/dt = ode_fn(y, t, p) (jax.numpy, one trajectory; an
    array or a tuple of n scalars) over an ensemble.

    y0: (n,) or (N, n); params: (p,) or (N, p) (or None); N comes from
      whichever is 2-D. t_span: (n_save,) save times, the first the start.
    method: "rodas5p" or "tsit5"; rtol, atol, first_step, max_steps: as
      solvent.ode.solve (None: the library's defaults). sparsity: a pattern
      for ∂f/∂y that covers the structural one (None: the structural one).
    threads: the library's worker threads (0: its default).

    Returns y (N, n_save, n); with return_stats, (y, stats) with stats a
    dict of per-trajectory arrays (status, accepted, rejected, nf, njac).
    Differentiable with respect to y0 and params; usable under jax.jit and
    jax.vmap. Trajectories that fail are NaN after their last time reached
    (a RuntimeWarning says which)."""
    y0 = jnp.asarray(y0, dtype=jnp.float64)
    params = jnp.zeros((0,)) if params is None else jnp.asarray(params, dtype=jnp.float64)
    t_span = jnp.asarray(t_span, dtype=jnp.float64)
    if y0.ndim not in (1, 2) or params.ndim not in (1, 2):
        raise _arg_error(f"y0 {y0.shape}, params {params.shape}: expected (n,) or (N, n) and (p,) or (N, p)")
    if t_span.ndim != 1 or t_span.shape[0] < 2:
        raise _arg_error(f"t_span: expected the start and at least one save time, got shape {t_span.shape}")
    n, m = y0.shape[-1], params.shape[-1]
    sizes = {a.shape[0] for a in (y0, params) if a.ndim == 2}
    if len(sizes) > 1:
        raise _arg_error(f"y0 has {y0.shape[0]} trajectories but params has {params.shape[0]}")
    N = sizes.pop() if sizes else 1
    generated = generate(ode_fn, n, m, _pattern_key(sparsity, n))
    run = _differentiable(generated, _options(method, rtol, atol, first_step, max_steps, threads or None))
    y, stats = run(jnp.broadcast_to(y0, (N, n)), jnp.broadcast_to(params, (N, m)), t_span)
    if not return_stats:
        return y
    return y, {name: jax.lax.stop_gradient(stats[:, k]).astype(jnp.int64) for k, name in enumerate(_STATS)}
