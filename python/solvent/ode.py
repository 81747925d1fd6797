"""ODE ensembles: Rodas5P and Tsit5 over many trajectories of one system
(the library's sv_ode_solve, docs/ode.md), in modax's shapes: y0 (n,) or
(N, n), params (p,) or (N, p), save times (n_save,) whose first entry is the
start, result (N, n_save, n). docs/python.md, "ODE ensembles", is the guide.

The right-hand side, fastest first: C source text (compiled once, cached),
any C function pointer with the documented signature, a plain Python
function over the whole ensemble (the slow path), or a built-in problem's
name."""
import ctypes
import warnings

import numpy as np

from . import _compile
from ._core import ArgumentError, check, new_context, run_stoppable
from ._native import ffi, lib
from .ode_events import HANDLER_CONTINUE, HANDLER_STOP, EventArrays, Events  # noqa: F401 (public names)
from . import ode_events

_METHODS = {"rodas5p": lib.SV_ODE_RODAS5P, "tsit5": lib.SV_ODE_TSIT5}

# Trajectory statuses (stats["status"]); STATUS_NAMES[k] is the library's word for k.
SUCCESS, MAX_STEPS, STEP_TOO_SMALL, NONFINITE, F_FAILED, NOT_RUN, STOPPED = (
    lib.SV_ODE_SUCCESS, lib.SV_ODE_MAX_STEPS, lib.SV_ODE_STEP_TOO_SMALL, lib.SV_ODE_NONFINITE,
    lib.SV_ODE_F_FAILED, lib.SV_ODE_NOT_RUN, lib.SV_ODE_STOPPED)
STATUS_NAMES = {k: ffi.string(lib.sv_ode_traj_status_string(k)).decode()
                for k in (SUCCESS, MAX_STEPS, STEP_TOO_SMALL, NONFINITE, F_FAILED, NOT_RUN, STOPPED)}

_STATS_COUNTERS = ("accepted", "rejected", "nf", "njac", "nfactor", "nsolve", "nrefine", "nrefused", "nexact",
                   "nsens_rhs", "nsens_jac")

# The callbacks a C right-hand side may define (C source: functions of these
# names; pointers: a dict with these keys) and their C types (ode.h).
C_CALLBACKS = {
    "f": "sv_ode_rhs_fn", "f_batch": "sv_ode_rhs_batch_fn",
    "jac": "sv_ode_jac_fn", "jac_batch": "sv_ode_jac_batch_fn",
    "f_complex": "sv_ode_rhs_complex_fn", "jvp": "sv_ode_jvp_fn",
    "dfdp": "sv_ode_dfdp_fn", "dfdp_batch": "sv_ode_dfdp_batch_fn",
    "f_complex_p": "sv_ode_rhs_complex_p_fn",
    "tangent": "sv_ode_tangent_fn", "tangent_batch": "sv_ode_tangent_batch_fn",
    "tangent_complex": "sv_ode_tangent_complex_fn",
    "jac_dir": "sv_ode_jac_dir_fn", "jac_dir_batch": "sv_ode_jac_dir_batch_fn",
}


def builtin_names():
    """The built-in problems' names (sv_ode_builtin_names)."""
    names, k = [], 0
    table = lib.sv_ode_builtin_names()
    while table[k] != ffi.NULL:
        names.append(ffi.string(table[k]).decode())
        k += 1
    return names


def builtin_defaults(name, arg=None):
    """What a built-in problem brings: y0, params, t_save (its t0 and t1),
    rtol, atol, atol_vec and tstops, as numpy arrays and floats."""
    problem = _builtin_problem(new_context(), name, arg)
    defaults = {key: (value.copy() if isinstance(value, np.ndarray) else value)
                for key, value in problem.defaults.items()}
    _release(problem, problem.handle)
    return defaults


def _arg_error(message):
    return ArgumentError(lib.SV_ERR_ARG, message)


def _owned(ctx, pointer, destroy):
    """pointer, destroyed when collected (or by ffi.release). The library
    frees an object through the context that made it: the destructor holds
    the context, so the context cannot go first."""

    def release(handle, ctx=ctx):
        destroy(handle)

    return ffi.gc(pointer, release)


# ---- the problem ----------------------------------------------------------


class _Problem:
    """A library problem and everything its callbacks need alive: the
    compiled object, the pattern's arrays, a Python right-hand side's
    record. defaults: what a built-in problem brings (y0, params, t0, t1,
    rtol, atol, atol_vec, tstops); empty for the others."""

    def __init__(self, handle, keep, python=None, defaults=None, name="problem", owner=None, events=None,
                 max_step=0.0):
        self.handle = handle
        self.derived = None       # a built-in's problem remade with invariants (then the handle), or None
        self.events = events      # a built-in problem's own sv_ode_events (pointer), or None
        self.max_step = max_step  # the largest step those events need (0: none)
        self.owner = handle if owner is None else owner  # what ffi.release frees
        self.keep = keep
        self.python = python
        self.defaults = defaults or {}
        self.name = name
        self.n = lib.sv_ode_problem_n(handle)
        self.nparams = lib.sv_ode_problem_nparams(handle)


def _make_problem(ctx, rhs, n, nparams, sparsity, jac, nonautonomous, arg, events=None, invariants=None):
    """events: the solve's PythonEvents when a Python function is among
    the event callbacks: it reaches them through the problem's user."""
    if isinstance(rhs, str) and rhs in builtin_names():
        if events is not None:
            raise _arg_error(f"events: a built-in problem ({rhs}) hands its own data to the event callbacks: "
                             "give them as C source or C pointers, or the problem as C source or a Python f")
        return _with_invariants(ctx, _builtin_problem(ctx, rhs, arg), invariants)
    if isinstance(rhs, str) and rhs.isidentifier():  # a name, not source: say which names there are
        raise _arg_error(f"rhs {rhs!r}: not a built-in problem ({', '.join(builtin_names())}), nor C source "
                         "defining f")
    if arg:
        raise _arg_error(f"arg = {arg!r}: only a built-in problem takes an argument")
    if n is None:
        raise _arg_error("y0: required (it gives the state's size n) unless rhs names a built-in problem")
    keep = []
    pattern = _pattern(sparsity, n, keep)
    rows = _invariant_rows(invariants, n, keep)
    if isinstance(rhs, str):
        library = _compile.compile_source(rhs)
        keep.append(library)
        symbols = _source_symbols(library, jac)
        return _c_problem(ctx, symbols, n, nparams, (pattern, rows), nonautonomous, keep, "C source", events)
    if isinstance(rhs, dict):
        symbols = _pointer_symbols(rhs)
        if jac is not None:
            symbols["jac"] = _address(jac, "jac")
        return _c_problem(ctx, symbols, n, nparams, (pattern, rows), nonautonomous, keep, "C callbacks", events)
    if _is_pointer(rhs):
        symbols = {"f": _address(rhs, "rhs")}
        if jac is not None:
            symbols["jac"] = _address(jac, "jac")
        return _c_problem(ctx, symbols, n, nparams, (pattern, rows), nonautonomous, keep, "C function", events)
    if callable(rhs):
        return _python_problem(ctx, rhs, jac, n, nparams, (pattern, rows), nonautonomous, keep, events)
    raise _arg_error(f"rhs: expected C source text, a built-in problem's name ({', '.join(builtin_names())}), "
                     f"a C function pointer or a Python function, got {type(rhs).__name__}")


def _builtin_problem(ctx, name, arg):
    out = ffi.new("sv_ode_builtin **")
    check(lib.sv_ode_builtin_create(ctx, name.encode(), float(arg or 0), lib.SV_ODE_JAC_ANALYTIC, out))
    b = _owned(ctx, out[0], lib.sv_ode_builtin_destroy)
    n, nparams = lib.sv_ode_problem_n(b.prob), lib.sv_ode_problem_nparams(b.prob)
    defaults = {
        "y0": np.frombuffer(ffi.buffer(b.y0, 8 * n), dtype=np.float64).copy(),
        "params": (np.frombuffer(ffi.buffer(b.params, 8 * nparams), dtype=np.float64).copy() if nparams
                   else None),
        "t_save": np.array([b.t0, b.t1]), "rtol": b.rtol, "atol": b.atol,
        "atol_vec": (np.frombuffer(ffi.buffer(b.atol_vec, 8 * n), dtype=np.float64).copy()
                     if b.atol_vec != ffi.NULL else None),
        "tstops": (np.frombuffer(ffi.buffer(b.tstops, 8 * b.ntstops), dtype=np.float64).copy()
                   if b.ntstops else None),
    }
    # The built-in owns its problem: the record lives as long as the handle is used.
    return _Problem(b.prob, [b], defaults=defaults, name=name, owner=b,
                    events=b.events if b.events != ffi.NULL else None, max_step=b.max_step)


def _source_symbols(library, jac):
    """The callbacks C source defines, by name (C_CALLBACKS), as addresses."""
    if jac is not None:
        raise _arg_error("jac: C source defines its Jacobian as a function named jac; the keyword is for "
                         "pointers and Python functions")
    symbols = _compile.symbols(library, C_CALLBACKS)
    if "f" not in symbols:
        raise _arg_error("rhs: the C source defines no function f (int f(double t, const double *y, "
                         "const double *p, double *dydt, void *user), not static)")
    return symbols


def _pointer_symbols(callbacks):
    unknown = sorted(set(callbacks) - set(C_CALLBACKS))
    if unknown:
        raise _arg_error(f"rhs: unknown callbacks {unknown}: expected some of {list(C_CALLBACKS)}")
    if "f" not in callbacks:
        raise _arg_error("rhs: the callbacks have no f")
    return {name: _address(ptr, f"rhs['{name}']") for name, ptr in callbacks.items()}


def _is_pointer(obj):
    return (isinstance(obj, (int, ffi.CData, ctypes._CFuncPtr)) and not isinstance(obj, bool)) or \
        isinstance(getattr(obj, "address", None), int) or _capsule_of(obj) is not None


def _capsule_of(obj):
    """scipy.LowLevelCallable (a tuple subclass) keeps its pointer in a
    capsule, its first item (its .function is what it was made from)."""
    if isinstance(obj, tuple) and obj and type(tuple.__getitem__(obj, 0)).__name__ == "PyCapsule":
        return tuple.__getitem__(obj, 0)
    return None


def _address(obj, what):
    """The address of a C function given as an integer, a ctypes or cffi
    function pointer, a numba cfunc (.address) or a scipy LowLevelCallable."""
    if isinstance(obj, bool):
        address = None
    elif isinstance(obj, int):
        address = obj
    elif isinstance(obj, ffi.CData):
        address = int(ffi.cast("uintptr_t", obj))
    elif isinstance(obj, ctypes._CFuncPtr):
        address = ctypes.cast(obj, ctypes.c_void_p).value
    elif isinstance(getattr(obj, "address", None), int):
        address = obj.address
    elif _capsule_of(obj) is not None:
        address = _capsule_pointer(_capsule_of(obj))
    else:
        address = None
    if not address:
        raise _arg_error(f"{what}: expected a C function pointer (an address, ctypes, cffi, numba cfunc or "
                         f"scipy.LowLevelCallable), got {obj!r}")
    return address


def _capsule_pointer(capsule):
    api = ctypes.pythonapi
    api.PyCapsule_GetName.restype = ctypes.c_char_p
    api.PyCapsule_GetName.argtypes = [ctypes.py_object]
    api.PyCapsule_GetPointer.restype = ctypes.c_void_p
    api.PyCapsule_GetPointer.argtypes = [ctypes.py_object, ctypes.c_char_p]
    return api.PyCapsule_GetPointer(capsule, api.PyCapsule_GetName(capsule))


def _jac_source(symbols):
    """The exact sources first: analytic, complex step, J·v; finite
    differences (inexact: Rodas5P may lose its order) last."""
    if "jac" in symbols or "jac_batch" in symbols:
        return lib.SV_ODE_JAC_ANALYTIC
    if "f_complex" in symbols:
        return lib.SV_ODE_JAC_COMPLEX_STEP
    if "jvp" in symbols:
        return lib.SV_ODE_JAC_JVP
    return lib.SV_ODE_JAC_FD


def _sens_source(symbols):
    if "tangent" in symbols or "tangent_batch" in symbols:
        return lib.SV_ODE_SENS_TANGENT
    if "f_complex_p" in symbols:
        return lib.SV_ODE_SENS_COMPLEX_STEP
    if "dfdp" in symbols or "dfdp_batch" in symbols:
        return lib.SV_ODE_SENS_ANALYTIC
    return lib.SV_ODE_SENS_FD


class _UserRecord:
    """What a C problem's user points to when its event callbacks are Python's."""

    def __init__(self, events):
        self.events = events


def _c_problem(ctx, symbols, n, nparams, structure, nonautonomous, keep, name, events=None):
    """structure: (pattern, invariant rows), each None or cdata."""
    desc = _new_desc(n, nparams, structure, nonautonomous, keep, name)
    if events is not None:
        handle = ffi.new_handle(_UserRecord(events))
        keep.append(handle)
        desc.user = handle
    for field, address in symbols.items():
        setattr(desc, field, ffi.cast(C_CALLBACKS[field], address))
    desc.jac_source = _jac_source(symbols)
    desc.sens_source = _sens_source(symbols)
    return _Problem(_create(ctx, desc), keep, name=name)


def _new_desc(n, nparams, structure, nonautonomous, keep, name):
    pattern, rows = structure
    desc = ffi.new("sv_ode_problem_desc *")
    label = ffi.new("char[]", name.encode())
    keep.append(label)
    desc.name = label
    desc.n, desc.nparams = int(n), int(nparams)
    desc.nonautonomous = int(bool(nonautonomous))
    if pattern is not None:
        desc.rowptr, desc.colind = pattern
    if rows is not None:
        desc.ninvariants, desc.invariants = rows
    return desc


def _create(ctx, desc):
    out = ffi.new("sv_ode_problem **")
    check(lib.sv_ode_problem_create(ctx, desc, out))
    return _owned(ctx, out[0], lib.sv_ode_problem_destroy)


# ---- linear invariants ----------------------------------------------------


def _invariant_rows(invariants, n, keep):
    """(count, row-major values) cdata of the conserved combinations c_k
    (c_k·f = 0, so c_k·y keeps its initial value), given as (k, n) rows or
    one row (n,); None or no rows: none. The library checks the values
    (finite, not all zero, independent) and names a bad row."""
    if invariants is None:
        return None
    rows = _float_array(invariants, "invariants")
    if rows.ndim == 1:
        rows = rows[np.newaxis, :]
    if rows.ndim != 2 or rows.shape[1] != n:
        raise _arg_error(f"invariants: expected rows of n = {n} values, (k, {n}) or ({n},), got shape "
                         f"{np.shape(invariants)}")
    if rows.shape[0] == 0:
        return None
    keep.append(rows)
    return rows.shape[0], ffi.from_buffer("double[]", rows)


def _with_invariants(ctx, problem, invariants):
    """A built-in problem remade with the rows (sv_ode_problem_with_invariants):
    the library made its description, so it adds them."""
    rows = _invariant_rows(invariants, problem.n, problem.keep)
    if rows is None:
        return problem
    out = ffi.new("sv_ode_problem **")
    check(lib.sv_ode_problem_with_invariants(ctx, problem.handle, rows[0], rows[1], out))
    problem.derived = problem.handle = _owned(ctx, out[0], lib.sv_ode_problem_destroy)
    return problem


# ---- sparsity -------------------------------------------------------------


def _pattern(sparsity, n, keep):
    """CSR (rowptr, colind) cdata of a sparsity pattern given as an (n, n)
    boolean mask, a scipy.sparse matrix or (nnz, 2) (row, column) pairs;
    None: dense."""
    if sparsity is None:
        return None
    rows, cols = _pattern_entries(sparsity, n)
    if rows.size and (rows.min() < 0 or rows.max() >= n or cols.min() < 0 or cols.max() >= n):
        raise _arg_error(f"sparsity: entries must lie in 0..{n - 1} (n = {n})")
    order = np.lexsort((cols, rows))
    rows, cols = rows[order], cols[order]
    unique = np.ones(rows.size, dtype=bool)
    unique[1:] = (rows[1:] != rows[:-1]) | (cols[1:] != cols[:-1])
    rows, cols = rows[unique], cols[unique]
    rowptr = np.zeros(n + 1, dtype=np.intc)
    np.cumsum(np.bincount(rows, minlength=n), out=rowptr[1:])
    colind = np.ascontiguousarray(cols, dtype=np.intc)
    keep += [rowptr, colind]
    return ffi.from_buffer("int[]", rowptr), ffi.from_buffer("int[]", colind)


def _pattern_entries(sparsity, n):
    if hasattr(sparsity, "tocoo"):  # scipy.sparse: its stored entries
        coo = sparsity.tocoo()
        if coo.shape != (n, n):
            raise _arg_error(f"sparsity: expected an ({n}, {n}) matrix, got shape {coo.shape}")
        return np.asarray(coo.row, dtype=np.int64), np.asarray(coo.col, dtype=np.int64)
    array = np.asarray(sparsity)
    if array.dtype == bool or (array.shape == (n, n) and n != 2):
        if array.shape != (n, n):
            raise _arg_error(f"sparsity: a mask must have shape ({n}, {n}), got {array.shape}")
        rows, cols = np.nonzero(array)
        return rows.astype(np.int64), cols.astype(np.int64)
    if array.ndim == 2 and array.shape[1] == 2 and np.issubdtype(array.dtype, np.integer):
        return array[:, 0].astype(np.int64), array[:, 1].astype(np.int64)
    raise _arg_error(f"sparsity: expected an ({n}, {n}) boolean mask, a scipy.sparse matrix or integer "
                     f"(nnz, 2) (row, column) pairs, got shape {array.shape} of {array.dtype}")


# ---- a Python right-hand side ---------------------------------------------


class _PythonRhs:
    """f(t, Y, P) and optionally jac(t, Y, P) over W lanes at once, called
    by the solver through cffi callbacks. The first exception is kept (and
    raised after the solve); from then on every call fails at once, so the
    remaining trajectories end quickly instead of raising again."""

    def __init__(self, f, jac, n, nparams, nnz, events=None):
        self.f, self.jac = f, jac
        self.n, self.nparams, self.nnz = n, nparams, nnz
        self.events = events  # Python event callbacks (ode_events.PythonEvents) or None
        self.error = None

    def _lanes(self, W, t, y, p):
        n, m = self.n, self.nparams
        T = np.frombuffer(ffi.buffer(t, 8 * W), dtype=np.float64)
        Y = np.frombuffer(ffi.buffer(y, 8 * n * W), dtype=np.float64).reshape(n, W).T
        P = (np.frombuffer(ffi.buffer(p, 8 * m * W), dtype=np.float64).reshape(m, W).T if m
             else np.empty((W, 0)))
        for a in (T, Y, P):
            a.flags.writeable = False  # the solver's own state: look, do not touch
        return T, Y, P

    def rhs(self, W, t, y, p, dydt):
        if self.error is not None:
            return -1
        try:
            T, Y, P = self._lanes(W, t, y, p)
            out = np.frombuffer(ffi.buffer(dydt, 8 * self.n * W), dtype=np.float64).reshape(self.n, W).T
            out[...] = _shaped(self.f(T, Y, P), (W, self.n), "f(t, Y, P)")
            return 0
        # Whatever f raises (BaseException too: anything escaping a cffi
        # callback would leave dydt unwritten and report success).
        except BaseException as exc:  # noqa: B036
            self.error = exc
            return -1

    def jacobian(self, W, t, y, p, values, dfdt):
        if self.error is not None:
            return -1
        try:
            T, Y, P = self._lanes(W, t, y, p)
            result = self.jac(T, Y, P)
            if dfdt != ffi.NULL:
                result, dt = result
                out = np.frombuffer(ffi.buffer(dfdt, 8 * self.n * W), dtype=np.float64).reshape(self.n, W).T
                out[...] = _shaped(dt, (W, self.n), "jac's df/dt")
            out = np.frombuffer(ffi.buffer(values, 8 * self.nnz * W), dtype=np.float64).reshape(self.nnz, W).T
            out[...] = _shaped(np.reshape(result, (W, -1)), (W, self.nnz), "jac(t, Y, P)")
            return 0
        except BaseException as exc:  # noqa: B036 (as in rhs)
            self.error = exc
            return -1


def _shaped(value, shape, what):
    value = np.asarray(value, dtype=np.float64)
    if value.shape != shape:
        raise _arg_error(f"{what} returned shape {value.shape}: expected {shape}")
    return value


def _scalar_lane(t):
    return ffi.new("double[1]", [t])


@ffi.def_extern()
def sv_py_ode_f_batch(W, t, y, p, dydt, user):
    return ffi.from_handle(user).rhs(W, t, y, p, dydt)


@ffi.def_extern()
def sv_py_ode_f(t, y, p, dydt, user):
    return ffi.from_handle(user).rhs(1, _scalar_lane(t), y, p, dydt)


@ffi.def_extern()
def sv_py_ode_jac_batch(W, t, y, p, values, dfdt, user):
    return ffi.from_handle(user).jacobian(W, t, y, p, values, dfdt)


@ffi.def_extern()
def sv_py_ode_jac(t, y, p, values, dfdt, user):
    return ffi.from_handle(user).jacobian(1, _scalar_lane(t), y, p, values, dfdt)


def _python_problem(ctx, f, jac, n, nparams, structure, nonautonomous, keep, events=None):
    pattern = structure[0]
    nnz = n * n if pattern is None else int(pattern[0][n])
    record = _PythonRhs(f, jac, n, nparams, nnz, events)
    handle = ffi.new_handle(record)
    keep.append(handle)
    desc = _new_desc(n, nparams, structure, nonautonomous, keep, "Python f")
    desc.user = handle
    desc.f, desc.f_batch = lib.sv_py_ode_f, lib.sv_py_ode_f_batch
    if jac is not None:
        if not callable(jac):
            raise _arg_error("jac: with a Python f, expected a Python function jac(t, Y, P)")
        desc.jac, desc.jac_batch = lib.sv_py_ode_jac, lib.sv_py_ode_jac_batch
        desc.jac_source = lib.SV_ODE_JAC_ANALYTIC
    else:
        desc.jac_source = lib.SV_ODE_JAC_FD
    desc.sens_source = lib.SV_ODE_SENS_FD
    return _Problem(_create(ctx, desc), keep, python=record, name="Python f")


# ---- inputs, options, sensitivities ---------------------------------------


class _Inputs:
    """The ensemble's arrays in the library's layout, with N taken from
    whichever of y0, params and t_save is 2-D (or t0 1-D). Without t0 each
    row of t_save starts with its trajectory's start; with t0, t_save holds
    save times only."""

    def __init__(self, problem, y0, t_save, params, t0=None):
        d = problem.defaults
        y0 = d.get("y0") if y0 is None else y0
        params = d.get("params") if params is None else params
        t_save = d.get("t_save") if t_save is None else t_save
        if t_save is None:
            raise _arg_error("t_save: required: the start, then the save times (n_save >= 2 values)")
        self.y0 = _float_array(y0, "y0")
        self.params = None if params is None else _float_array(params, "params")
        self.t_save = _float_array(t_save, "t_save")
        self.t0 = None if t0 is None else _float_array(t0, "t0")
        self._check(problem)
        self._check_spans()

    def _check(self, problem):
        n, m = problem.n, problem.nparams
        if self.y0.ndim not in (1, 2) or self.y0.shape[-1] != n:
            raise _arg_error(f"y0: expected shape ({n},) or (N, {n}) for {problem.name} (n = {n}), "
                             f"got {self.y0.shape}")
        if m == 0 and self.params is not None and self.params.size:
            raise _arg_error(f"params: {problem.name} has no parameters, got shape {self.params.shape}")
        if m and (self.params is None or self.params.ndim not in (1, 2) or self.params.shape[-1] != m):
            shape = None if self.params is None else self.params.shape
            raise _arg_error(f"params: expected shape ({m},) or (N, {m}) for {problem.name}, got {shape}")
        if m == 0:
            self.params = None
        per_traj = {name: a.shape[0] for name, a in (("y0", self.y0), ("params", self.params),
                                                      ("t_save", self.t_save)) if a is not None and a.ndim == 2}
        if self.t0 is not None and self.t0.ndim == 1:
            per_traj["t0"] = self.t0.shape[0]
        (first, count), *others = per_traj.items() or [(None, 1)]
        for name, other in others:
            if other != count:
                raise _arg_error(f"{first} has {count} trajectories but {name} has {other}")
        self.ntraj = per_traj.popitem()[1] if per_traj else 1
        if self.ntraj < 1:
            raise _arg_error("y0, params: an ensemble needs at least one trajectory")

    def _check_spans(self):
        """The starts (t0_shared, or t0_traj per trajectory) and save times
        (tsave_shared, or tsave_traj (N, n_save)); the library checks their order."""
        ts, least = self.t_save, 1 if self.t0 is not None else 2
        what = "the save times" if self.t0 is not None else "the start, then the save times"
        if ts.ndim not in (1, 2) or ts.shape[-1] < least:
            raise _arg_error(f"t_save: expected (n_save,) or (N, n_save) values ({what}; n_save >= {least}), "
                             f"got shape {ts.shape}")
        if self.t0 is not None and self.t0.ndim > 1:
            raise _arg_error(f"t0: expected a number or (N,) starts, got shape {self.t0.shape}")
        starts = ts[..., 0] if self.t0 is None else self.t0
        self.t0_traj = np.ascontiguousarray(starts) if np.ndim(starts) == 1 else None
        self.t0_shared = float(starts[0] if self.t0_traj is not None else starts)
        self.tsave_traj = ts if ts.ndim == 2 else None
        self.tsave_shared = np.ascontiguousarray(ts[0] if ts.ndim == 2 else ts)
        self.nsave = ts.shape[-1]

    def shared(self, array):
        return int(array is not None and array.ndim == 1)


def _float_array(value, what):
    try:
        return np.ascontiguousarray(value, dtype=np.float64)
    except (TypeError, ValueError) as exc:
        raise _arg_error(f"{what}: expected an array of numbers ({exc})") from None


def _options(problem, method, rtol, atol, first_step, max_steps, keep):
    """sv_ode_options from the arguments; None leaves the library's default
    (a built-in problem's suggested tolerances and its tstops)."""
    if method not in _METHODS:
        raise _arg_error(f"method {method!r}: expected one of {sorted(_METHODS)}")
    d = problem.defaults
    opts = ffi.new("sv_ode_options *")
    lib.sv_ode_options_default(opts)
    opts.method = _METHODS[method]
    if rtol is not None or "rtol" in d:
        opts.rtol = float(d["rtol"] if rtol is None else rtol)
    atol_vec = d.get("atol_vec") if atol is None else None
    if atol is not None or "atol" in d:
        atol = d["atol"] if atol is None else atol
        if np.ndim(atol) == 0:
            opts.atol = float(atol)
        else:
            atol_vec = _float_array(atol, "atol")
            if atol_vec.shape != (problem.n,):
                raise _arg_error(f"atol: expected a number or {problem.n} values, got shape {atol_vec.shape}")
    if atol_vec is not None:
        keep.append(atol_vec)
        opts.atol_vec = ffi.from_buffer("double[]", atol_vec)
    if first_step is not None:
        opts.first_step = float(first_step)
    if max_steps is not None:
        opts.max_steps = int(max_steps)
    if d.get("tstops") is not None:
        keep.append(d["tstops"])
        opts.tstops = ffi.from_buffer("double[]", d["tstops"])
        opts.ntstops = d["tstops"].size
    return opts


def _sensitivity_request(sensitivities, n, nparams):
    """(parameter indices, initial-value indices) of the directions asked for."""
    if sensitivities is None:
        return None
    named = {"params": (range(nparams), ()), "y0": ((), range(n)), "both": (range(nparams), range(n))}
    if isinstance(sensitivities, str):
        if sensitivities not in named:
            raise _arg_error(f"sensitivities {sensitivities!r}: expected 'params', 'y0', 'both' or a list of "
                             "parameter indices")
        params, y0 = named[sensitivities]
    else:
        params, y0 = [int(k) for k in np.atleast_1d(sensitivities)], ()
        bad = [k for k in params if not 0 <= k < nparams]
        if bad or len(set(params)) != len(params):
            raise _arg_error(f"sensitivities: parameter indices {list(params)}: expected distinct indices in "
                             f"0..{nparams - 1}")
    if not len(params) + len(y0):
        raise _arg_error("sensitivities: no direction asked for (the problem has no parameters)")
    return list(params), list(y0)


def _with_sens(ctx, problem, request):
    params, y0 = request
    pk = ffi.new("int[]", params or [0])
    yk = ffi.new("int[]", y0 or [0])
    out = ffi.new("sv_ode_problem **")
    check(lib.sv_ode_problem_with_sens(ctx, problem.handle, len(params), pk, len(y0), yk, out))
    return _owned(ctx, out[0], lib.sv_ode_problem_destroy)


# ---- the run --------------------------------------------------------------


class _Run:
    """One sv_ode_solve: the ensemble record, its output arrays and the
    problem it ran (kept for the loss gradient)."""

    def __init__(self, ctx, problem, handle, inputs, opts, nsens, progress, python_events=None,
                 event_capacity=None):
        self.handle = handle
        N, ns, n = inputs.ntraj, inputs.nsave, problem.n
        self.y = np.empty((N, ns, n))
        self.s = np.empty((N, ns, n, nsens)) if nsens else None
        self.status = np.empty(N, dtype=np.intc)
        self.stats = ffi.new("sv_ode_stats[]", N)
        e = self.ens = ffi.new("sv_ode_ensemble *")
        e.ntraj, e.t0, e.nsave = N, inputs.t0_shared, ns
        e.tsave = ffi.from_buffer("double[]", inputs.tsave_shared)
        if inputs.t0_traj is not None:
            e.t0_traj = ffi.from_buffer("double[]", inputs.t0_traj)
        if inputs.tsave_traj is not None:
            e.tsave_traj = ffi.from_buffer("double[]", inputs.tsave_traj)
        self.events = EventArrays(N, event_capacity, n) if event_capacity is not None else None
        if self.events:
            self.events.attach(e)
        e.y0, e.y0_shared = ffi.from_buffer("double[]", inputs.y0), inputs.shared(inputs.y0)
        if inputs.params is not None:
            e.params = ffi.from_buffer("double[]", inputs.params)
            e.params_shared = inputs.shared(inputs.params)
        e.out = ffi.from_buffer("double[]", self.y)
        if nsens:
            e.sens_out = ffi.from_buffer("double[]", self.s)
        e.status = ffi.cast("sv_ode_traj_status *", ffi.from_buffer("int[]", self.status))
        e.stats = self.stats
        self.inputs = inputs  # the buffers above point into its arrays
        run_stoppable(ctx, lambda: lib.sv_ode_solve(ctx, handle, opts, e), progress)
        for record in (problem.python, python_events):
            if record is not None and record.error is not None:
                raise record.error

    def stats_dict(self):
        raw = np.frombuffer(ffi.buffer(self.stats), dtype=_stats_dtype())
        out = {"status": self.status.copy()}
        out.update({name: raw[name].copy() for name in _STATS_COUNTERS})
        out["t_reached"] = raw["t_reached"].copy()
        if self.events:
            out["nevents"] = self.events.nevents.copy()
        return out

    def warn_failures(self):
        t_reached = np.frombuffer(ffi.buffer(self.stats), dtype=_stats_dtype())["t_reached"]
        warn_failures(self.status, t_reached, stacklevel=4)


def warn_failures(status, t_reached, stacklevel):
    """One RuntimeWarning for the trajectories that did not succeed (a stop
    an event asked for is not a failure), naming the first; stacklevel as
    warnings.warn's, counted from here."""
    failed = np.flatnonzero((status != SUCCESS) & (status != STOPPED))
    if failed.size:
        k = int(failed[0])
        warnings.warn(f"solvent.ode: {failed.size} of {status.size} trajectories did not succeed (NaN after their "
                      f"last time reached); trajectory {k}: {STATUS_NAMES[int(status[k])]} at t = {t_reached[k]:g} "
                      "(return_stats=True gives every status)", RuntimeWarning, stacklevel=stacklevel)


def _stats_dtype():
    fields = _STATS_COUNTERS + ("t_reached",)
    return np.dtype({"names": list(fields),
                     "formats": [np.dtype(f"i{ffi.sizeof('long')}")] * len(_STATS_COUNTERS) + [np.float64],
                     "offsets": [ffi.offsetof("sv_ode_stats", f) for f in fields],
                     "itemsize": ffi.sizeof("sv_ode_stats")})


class _EventPlan:
    """The events of one solve: the library's sv_ode_events (a built-in
    problem's own when none are given), the Python callbacks among them,
    and how many are stored per trajectory (None: no events)."""

    def __init__(self, events, event_capacity):
        self.spec = None if events is None else Events.of(events)
        self.python = self.spec.python if self.spec is not None and self.spec.needs_user() else None
        self.capacity = None if events is None else ode_events.capacity(event_capacity)
        self.requested_capacity = event_capacity

    def apply(self, problem, opts, keep):
        """Set opts.events (and a built-in's max_step unless one was asked for)."""
        if self.spec is not None:
            if self.python is not None:
                self.python.n, self.python.nparams = problem.n, problem.nparams
            opts.events = self.spec.c_events(keep)
        elif problem.events is not None:
            opts.events = problem.events
            self.capacity = ode_events.capacity(self.requested_capacity)
            if opts.max_step == 0:
                opts.max_step = problem.max_step
        elif self.requested_capacity is not None:
            raise _arg_error("event_capacity: only with events (or a built-in problem that has its own)")


def _prepare(rhs, y0, t_save, params, method, rtol, atol, first_step, max_steps, sparsity, jac, sensitivities,
             threads, nonautonomous, arg, t0=None, events=None, event_capacity=None, max_step=None, invariants=None):
    ctx = new_context(threads)
    n = None if y0 is None else np.shape(y0)[-1] if np.ndim(y0) else None
    nparams = 0 if params is None else (np.shape(params)[-1] if np.ndim(params) else 1)
    plan = _EventPlan(events, event_capacity)
    problem = _make_problem(ctx, rhs, n, nparams, sparsity, jac, nonautonomous, arg, plan.python, invariants)
    if (problem.python is not None or plan.python is not None) and not threads:
        # Python's lock lets one thread evaluate f at a time: a second thread
        # only waits for it (a 1000-trajectory Van der Pol ensemble took 2.7 s
        # on one thread, 5.0 s on two).
        check(lib.sv_ctx_set_threads(ctx, 1))
    inputs = _Inputs(problem, y0, t_save, params, t0)
    keep = []
    opts = _options(problem, method, rtol, atol, first_step, max_steps, keep)
    if max_step is not None:
        opts.max_step = float(max_step)
    plan.apply(problem, opts, keep)
    request = _sensitivity_request(sensitivities, problem.n, problem.nparams)
    handle = _with_sens(ctx, problem, request) if request else problem.handle
    nsens = len(request[0]) + len(request[1]) if request else 0
    return ctx, problem, inputs, opts, keep, handle, nsens, plan


def solve(rhs, y0=None, t_save=None, params=None, *, method="rodas5p", rtol=None, atol=None, first_step=None,
          max_steps=None, max_step=None, sparsity=None, jac=None, sensitivities=None, return_stats=False, threads=0,
          progress=False, nonautonomous=False, arg=0, t0=None, events=None, event_capacity=None, invariants=None,
          client=None, shard_size=None, store=None):
    """Integrate an ensemble of dy/dt = f(t, y, p).

    rhs: C source text defining f (compiled once, cached), a built-in
      problem's name ("rober", ...), a C function pointer, a dict of C
      callbacks by name, or a Python function f(t, Y, P) -> dY over the
      whole ensemble (t (W,), Y (W, n), P (W, p); the slow path).
    y0: (n,) or (N, n); params: (p,) or (N, p); N comes from whichever is
      2-D (a built-in problem supplies both when left out).
    t_save: (n_save,) increasing; t_save[0] is the start (y there is y0).
      (N, n_save): each trajectory's own save times (row k starts with
      trajectory k's start).
    t0: the start (a number, or (N,) one per trajectory); then t_save
      holds save times only (>= the start), and y[:, 0] is at t_save's
      first time, not necessarily y0.
    method: "rodas5p" (stiff) or "tsit5"; rtol, atol (a number or n
      values), first_step, max_steps, max_step: as sv_ode_options (None:
      the library's default, or a built-in problem's suggested tolerances).
    sparsity: the Jacobian's pattern ((n, n) bool mask, scipy.sparse or
      (nnz, 2) pairs); jac: its values (a C pointer, or a Python function
      jac(t, Y, P) -> (W, nnz) with a Python f).
    sensitivities: None, "params", "y0", "both" or parameter indices.
    nonautonomous: f depends on t explicitly (Rodas5P then needs df/dt).
    arg: a built-in problem's argument (bruss2d's grid, eb50's k).
    events: event functions (solvent.ode.Events, or its g alone: C source,
      C pointers, or a Python g(t, Y, P) -> (W, m)); a built-in problem
      with events of its own ("ball") uses them when this is None.
    event_capacity: events stored per trajectory (default 16; nevents
      counts them all).
    invariants: linear combinations that f conserves (c_k·f(t, y, p) = 0
      for every t, y, p): (k, n) rows or one row (n,). After every step,
      and at every save, y is projected back onto c_k·y = c_k·y0 (the
      least change in units of the tolerances), so rounding cannot pile
      up along them (docs/explanation/simd-lanes.md). Rows must be
      finite, not all zero and independent; refused with sensitivities.

    Returns y (N, n_save, n); with sensitivities (y, S) with S (N, n_save,
    n, n_sens) (parameters first, then initial values); with events a
    dict appended: event_t (N, K) (NaN where none), event_which (N, K)
    (-1 where none), event_y (N, K, n), nevents (N,) (K = event_capacity);
    with return_stats a dict of per-trajectory arrays (status, accepted,
    rejected, nf, ..., nevents) appended. A trajectory that an event
    stopped has status STOPPED and NaN after its stop. A trajectory that fails has NaN after its last time reached
    (a RuntimeWarning says so unless return_stats). Ctrl-C stops the solve
    within a second (KeyboardInterrupt).

    client: a dask.distributed Client: the ensemble runs there in shards
    of shard_size trajectories, each written to the folder store (if
    given) as it finishes (solvent.distributed_ode.ode_solve)."""
    if client is not None:
        from . import distributed_ode
        return distributed_ode.ode_solve(client, rhs, y0, t_save, params, method=method, rtol=rtol, atol=atol,
                                         first_step=first_step, max_steps=max_steps, max_step=max_step,
                                         sparsity=sparsity, jac=jac, sensitivities=sensitivities,
                                         return_stats=return_stats, threads=threads, progress=progress,
                                         nonautonomous=nonautonomous, arg=arg, t0=t0, events=events,
                                         event_capacity=event_capacity, invariants=invariants,
                                         shard_size=shard_size, store=store)
    if shard_size is not None or store is not None:
        raise _arg_error("shard_size, store: only with client= (a Dask cluster)")
    ctx, problem, inputs, opts, keep, handle, nsens, plan = _prepare(
        rhs, y0, t_save, params, method, rtol, atol, first_step, max_steps, sparsity, jac, sensitivities,
        threads, nonautonomous, arg, t0, events, event_capacity, max_step, invariants)
    try:
        run = _Run(ctx, problem, handle, inputs, opts, nsens, progress, plan.python, plan.capacity)
    finally:
        _release(problem, handle)
    result = [run.y] + ([run.s] if nsens else []) + ([run.events.result()] if run.events else [])
    if return_stats:
        result.append(run.stats_dict())
    else:
        run.warn_failures()
    return result[0] if len(result) == 1 else tuple(result)


def _release(problem, handle):
    """Free the library's problems now rather than at the next collection
    (a derived problem before the one it was made from)."""
    if handle is not problem.handle:
        ffi.release(handle)
    if problem.derived is not None:
        ffi.release(problem.derived)
    ffi.release(problem.owner)


def value_and_grad(rhs, y0=None, t_save=None, params=None, data=None, sigma=None, *, wrt="params", **options):
    """The least-squares loss Σ ((y − data)/σ_i)² over the saved states
    (entries where data is NaN left out; σ: n values or None = 1) and its
    gradient, from the library's forward sensitivities
    (sv_ode_loss_gradient): (loss, grad) as scipy.optimize.minimize(...,
    jac=True) wants them.

    data: (N, n_save, n), or (n_save, n) for every trajectory. wrt:
    "params" or "y0" (grad has that argument's shape: summed over the
    trajectories where it is shared, i.e. 1-D), or a list of parameter
    indices (grad (k,) or (N, k)). The other keywords are solve's."""
    if data is None:
        raise _arg_error("data: required (the observed states, (N, n_save, n) or (n_save, n); NaN = missing)")
    if "sensitivities" in options or "return_stats" in options:
        raise _arg_error("value_and_grad: the sensitivities are wrt's; return_stats is not offered here")
    if isinstance(wrt, str) and wrt not in ("params", "y0"):
        raise _arg_error(f"wrt {wrt!r}: expected 'params', 'y0' or a list of parameter indices")
    ctx, problem, inputs, opts, keep, handle, nsens, _ = _prepare(
        rhs, y0, t_save, params, options.pop("method", "rodas5p"), options.pop("rtol", None),
        options.pop("atol", None), options.pop("first_step", None), options.pop("max_steps", None),
        options.pop("sparsity", None), options.pop("jac", None), wrt, options.pop("threads", 0),
        options.pop("nonautonomous", False), options.pop("arg", 0))
    progress = options.pop("progress", False)
    if options:
        raise _arg_error(f"value_and_grad: unknown keywords {sorted(options)}")
    try:
        run = _Run(ctx, problem, handle, inputs, opts, nsens, progress)
        return _loss_and_gradient(problem, handle, run, inputs, data, sigma, wrt, nsens)
    finally:
        _release(problem, handle)


def _loss_and_gradient(problem, handle, run, inputs, data, sigma, wrt, nsens):
    N, shape = inputs.ntraj, run.y.shape[1:]
    data = _float_array(data, "data")
    if data.shape not in (shape, run.y.shape):
        raise _arg_error(f"data: expected shape {run.y.shape} or {shape}, got {data.shape}")
    data = np.ascontiguousarray(np.broadcast_to(data, run.y.shape))
    sigma_c = ffi.NULL
    if sigma is not None:
        sigma = _float_array(sigma, "sigma")
        if sigma.shape != (problem.n,):
            raise _arg_error(f"sigma: expected {problem.n} values, got shape {sigma.shape}")
        sigma_c = ffi.from_buffer("double[]", sigma)
    loss = np.empty(N)
    grad = np.empty((N, nsens))
    check(lib.sv_ode_loss_gradient(handle, run.ens, ffi.from_buffer("double[]", data), sigma_c,
                                   ffi.from_buffer("double[]", loss), ffi.from_buffer("double[]", grad)))
    argument = inputs.y0 if wrt == "y0" else inputs.params
    shared = argument is None or argument.ndim == 1
    return float(loss.sum()), (grad.sum(axis=0) if shared else grad)
