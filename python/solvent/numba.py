"""A right-hand side written in Python and compiled by numba to C function
pointers with the library's signatures (ode.h), so the solver calls it with
no Python in the loop.

    def vdp(t, y, p, dy):              # one trajectory; y, p, dy are arrays
        dy[0] = y[1]
        dy[1] = p[0] * (1 - y[0] * y[0]) * y[1] - y[0]

    y = solvent.ode.solve(solvent.numba.rhs(vdp, n=2, nparams=1), y0, t_save, params)

rhs() compiles the one body three times: for double (f), for complex y and
t (f_complex: the exact Jacobian by complex step) and for complex y, t and p
(f_complex_p: exact sensitivity right-hand sides by complex step), as the C
route does with <tgmath.h> (docs/how-to/python-jax.md). Rodas5P with
sensitivities also needs second derivatives, which a complex step on f
cannot give: that case takes C source or solvent.jax.

numba is optional: importing this module without it raises ImportError
naming the package."""
try:
    import numba
    from numba import carray, types
except ImportError as exc:  # the package works without numba; this route needs it
    raise ImportError("solvent.numba needs numba (pip install numba; python/requirements.txt pins it)") from exc

from ._core import ArgumentError
from ._native import lib

_F64, _C128, _INT = types.float64, types.complex128, types.intc
_PTR = types.CPointer

# ode.h's sv_ode_rhs_fn, sv_ode_rhs_complex_fn and sv_ode_rhs_complex_p_fn,
# for writing a numba.cfunc by hand (its .address goes to solvent.ode.solve).
RHS_SIGNATURE = _INT(_F64, _PTR(_F64), _PTR(_F64), _PTR(_F64), types.voidptr)
RHS_COMPLEX_SIGNATURE = _INT(_C128, _PTR(_C128), _PTR(_F64), _PTR(_C128), types.voidptr)
RHS_COMPLEX_P_SIGNATURE = _INT(_C128, _PTR(_C128), _PTR(_C128), _PTR(_C128), types.voidptr)
JAC_SIGNATURE = _INT(_F64, _PTR(_F64), _PTR(_F64), _PTR(_F64), _PTR(_F64), types.voidptr)
# sv_ode_rhs_batch_fn: W lanes, slot-major (entry i of lane w at [i·W + w]).
RHS_BATCH_SIGNATURE = _INT(types.intc, _PTR(_F64), _PTR(_F64), _PTR(_F64), _PTR(_F64), types.voidptr)
# Events (ode.h's sv_ode_event_fn, sv_ode_event_batch_fn and
# sv_ode_event_handler_fn): a cfunc's .address goes to solvent.ode.Events.
EVENT_SIGNATURE = RHS_SIGNATURE
EVENT_BATCH_SIGNATURE = RHS_BATCH_SIGNATURE
HANDLER_SIGNATURE = _INT(_F64, _PTR(_F64), _PTR(_F64), types.intc, types.voidptr)


def rhs(f, n, nparams=0, *, exact_jacobian=True, sensitivities=True):
    """The callbacks of f(t, y, p, dydt) (a plain Python function or a
    numba.njit one, writing dydt in place) as a dict of numba cfuncs by the
    names solvent.ode.solve takes ({"f": ..., "f_batch": ...,
    "f_complex": ..., "f_complex_p": ...}; f_batch loops over the
    solver's lanes in one call, each lane through the same compiled f). n: the state's size; nparams: the parameters'.

    exact_jacobian: also compile f for complex t and y (the solver then
    recovers the Jacobian exactly by complex step; without it, by finite
    differences, which costs Rodas5P its order). sensitivities: also
    compile f for complex parameters (exact sensitivity right-hand sides;
    Tsit5 only, see the module's text). f must then be written so that it
    runs on complex numbers too (arithmetic and cmath-style functions; no
    comparisons of y)."""
    n, nparams = _size(n, "n", 1), _size(nparams, "nparams", 0)
    core = f if isinstance(f, numba.core.dispatcher.Dispatcher) else numba.njit(f)
    callbacks = {"f": _cfunc(core, n, nparams, RHS_SIGNATURE), "f_batch": _batch_cfunc(core, n, nparams)}
    if exact_jacobian:
        callbacks["f_complex"] = _cfunc(core, n, nparams, RHS_COMPLEX_SIGNATURE)
    if sensitivities and nparams:
        callbacks["f_complex_p"] = _cfunc(core, n, nparams, RHS_COMPLEX_P_SIGNATURE)
    return callbacks


def _size(value, what, least):
    if isinstance(value, bool) or not isinstance(value, int) or value < least:
        raise ArgumentError(lib.SV_ERR_ARG, f"{what} = {value!r}: expected an integer >= {least}")
    return value


def _batch_cfunc(core, n, nparams):
    """core over W lanes: each lane's column of the slot-major arrays is a
    strided view, so every lane runs f's own arithmetic (the same rounding
    as the scalar callback) and the loop stays in compiled code."""

    def call(W, t, y, p, dydt, user):
        T, Y, D = carray(t, (W,)), carray(y, (n, W)), carray(dydt, (n, W))
        P = carray(p, (nparams, W))
        for w in range(W):
            core(T[w], Y[:, w], P[:, w], D[:, w])
        return 0

    return _compile(call, RHS_BATCH_SIGNATURE, "double, over lanes")


def _cfunc(core, n, nparams, signature):
    """core(t, y, p, dydt) behind a C signature. n and nparams are frozen
    into the compiled code as constants (numba freezes closure variables),
    so the arrays' sizes cost nothing per call. p is NULL when nparams = 0:
    a zero-length view of it is never read."""

    def call(t, y, p, dydt, user):
        core(t, carray(y, (n,)), carray(p, (nparams,)), carray(dydt, (n,)))
        return 0

    kind = {RHS_SIGNATURE: "double", RHS_COMPLEX_SIGNATURE: "complex t and y",
            RHS_COMPLEX_P_SIGNATURE: "complex t, y and p"}[signature]
    return _compile(call, signature, kind)


def _compile(call, signature, kind):
    try:
        return numba.cfunc(signature, nopython=True)(call)
    except numba.core.errors.TypingError as exc:
        raise ArgumentError(lib.SV_ERR_ARG, f"rhs: numba cannot compile f for {kind}: {exc}") from None
