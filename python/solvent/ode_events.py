"""Events of an ODE ensemble (the library's sv_ode_events,
docs/how-to/ode-events.md): event functions g(t, y, p) -> m values, where
each crossing of zero is located, recorded, and then stops the trajectory
or calls a handler that may change its state and parameters.

The event functions come by the right-hand side's routes, fastest first: C
source text defining `g` (and optionally `g_batch` over W lanes and
`handler`), C function pointers (an address, ctypes, cffi, a numba cfunc
with solvent.numba's EVENT_SIGNATURE, a dict {"g", "g_batch", "handler"}),
or a Python function g(t, Y, P) over whole lanes at once (the slow path:
one Python call per accepted step of W lanes)."""

import numpy as np

from . import _compile
from ._core import ArgumentError
from ._native import ffi, lib

_DIRECTIONS = {"either": lib.SV_ODE_EVENT_EITHER, "rising": lib.SV_ODE_EVENT_RISING,
               "falling": lib.SV_ODE_EVENT_FALLING,
               # scipy.integrate.solve_ivp's event.direction: the sign of g's slope at the crossing
               0: lib.SV_ODE_EVENT_EITHER, 1: lib.SV_ODE_EVENT_RISING, -1: lib.SV_ODE_EVENT_FALLING}
_ACTIONS = {"record": lib.SV_ODE_EVENT_RECORD, "stop": lib.SV_ODE_EVENT_STOP, "handle": lib.SV_ODE_EVENT_HANDLE}

# What a handler returns (None means CONTINUE).
HANDLER_CONTINUE, HANDLER_STOP = lib.SV_ODE_HANDLER_CONTINUE, lib.SV_ODE_HANDLER_STOP

# The C callbacks an events' source or dict may define, and their C types (ode.h).
C_CALLBACKS = {"g": "sv_ode_event_fn", "g_batch": "sv_ode_event_batch_fn", "handler": "sv_ode_event_handler_fn"}

# Stored events per trajectory when solve's event_capacity is left out.
DEFAULT_CAPACITY = 16


def _arg_error(message):
    return ArgumentError(lib.SV_ERR_ARG, message)


class Events:
    """Event functions and what their crossings do.

    g: C source text (defining g, optionally g_batch and handler), a C
      function pointer or a dict of them by name, or a Python function
      g(t, Y, P) -> (W, count) over W lanes (t (W,), Y (W, n), P (W, p)).
    count: how many functions g computes (default: the length of
      direction or action when either is a list, else 1).
    direction: per function (or one for all) "either" (default),
      "rising", "falling", or scipy's 0, 1, -1.
    action: per function (or one for all) "record" (default: the crossing
      is stored and the step goes on), "stop" (the trajectory ends there,
      status solvent.ode.STOPPED) or "handle" (then handler is called).
    handler: for "handle": a C function pointer, or a Python function
      handler(t, y, p, which) that changes y (n,) and p (p,) in place and
      returns None (go on) or solvent.ode.HANDLER_STOP; C source g may
      define it instead.
    tolerance: the width in t at which the root finder stops (0: the
      event time to adjacent doubles)."""

    def __init__(self, g, count=None, direction=None, action=None, handler=None, tolerance=0.0):
        self.recipe = (g, count, direction, action, handler, tolerance)
        self.g = g
        self.count = _count(count, direction, action)
        self.direction = _codes(direction, _DIRECTIONS, self.count, "direction")
        self.action = _codes(action, _ACTIONS, self.count, "action")
        self.handler = handler
        self.tolerance = float(tolerance)
        if not self.tolerance >= 0:
            raise _arg_error(f"events tolerance {tolerance!r}: expected a number >= 0 (0: to adjacent doubles)")
        self.symbols, self.keep = _c_symbols(g, handler)
        self.python = PythonEvents(g if callable(g) and not self.symbols.get("g") else None,
                                   handler if callable(handler) and "handler" not in self.symbols else None,
                                   self.count)
        if lib.SV_ODE_EVENT_HANDLE in self.action and not (self.symbols.get("handler") or self.python.handler):
            raise _arg_error("events: an action is 'handle' but no handler is given (handler=, or a function "
                             "named handler in the C source)")

    def __reduce__(self):
        """Events travel to another process (a Dask worker) as what made
        them, and are made again there: C source is compiled there; a C
        function pointer cannot travel."""
        return (Events, self.recipe)

    @classmethod
    def of(cls, events):
        """events as an Events: given one, or its g alone (one function, any direction, recorded)."""
        return events if isinstance(events, Events) else cls(events)

    def needs_user(self):
        """Whether a Python function is among the callbacks (it finds its record through the problem's user)."""
        return self.python.g is not None or self.python.handler is not None

    def c_events(self, keep):
        """The library's sv_ode_events (its arrays kept alive in keep)."""
        ev = ffi.new("sv_ode_events *")
        ev.m, ev.tol = self.count, self.tolerance
        direction = ffi.new("sv_ode_event_direction[]", self.direction)
        action = ffi.new("sv_ode_event_action[]", self.action)
        keep += [ev, direction, action, self.keep]
        ev.direction, ev.action = direction, action
        for name, address in self.symbols.items():
            setattr(ev, name, ffi.cast(C_CALLBACKS[name], address))
        if self.python.g is not None:
            ev.g, ev.g_batch = lib.sv_py_ode_g, lib.sv_py_ode_g_batch
        if self.python.handler is not None:
            ev.handler = lib.sv_py_ode_handler
        return ev


def _count(count, direction, action):
    lengths = {len(a) for a in (direction, action) if a is not None and not isinstance(a, (str, int))}
    if count is not None:
        lengths.add(int(count))
    if len(lengths) > 1:
        raise _arg_error(f"events: count, direction and action disagree on how many functions there are "
                         f"({sorted(lengths)})")
    m = lengths.pop() if lengths else 1
    if m < 1:
        raise _arg_error(f"events count {m}: expected at least one event function")
    return m


def _codes(value, table, m, what):
    if value is None:
        return [0] * m  # EITHER, RECORD: the library's defaults
    values = [value] * m if isinstance(value, (str, int)) else list(value)
    bad = [v for v in values if v not in table]
    if bad:
        names = ", ".join(repr(k) for k in table)
        raise _arg_error(f"events {what} {bad[0]!r}: expected one of {names}")
    return [table[v] for v in values]


def _c_symbols(g, handler):
    """The C callbacks by name (addresses) and what keeps them loaded."""
    from .ode import _address, _is_pointer  # the rhs's routes: one reading of a C function pointer
    symbols, keep = {}, None
    if isinstance(g, str):
        keep = _compile.compile_source(g, "events.c")
        symbols = _source_symbols(keep)
    elif isinstance(g, dict):
        unknown = sorted(set(g) - set(C_CALLBACKS))
        if unknown or "g" not in g:
            raise _arg_error(f"events: a dict of C callbacks needs g and may have {list(C_CALLBACKS)}, got "
                             f"{sorted(g)}")
        symbols = {name: _address(ptr, f"events['{name}']") for name, ptr in g.items()}
    elif _is_pointer(g):
        symbols = {"g": _address(g, "events")}
    elif not callable(g):
        raise _arg_error(f"events: expected C source text, a C function pointer, a dict of them or a Python "
                         f"function g(t, Y, P), got {type(g).__name__}")
    if handler is not None:
        if "handler" in symbols:
            raise _arg_error("handler: the events' C callbacks define one already")
        if _is_pointer(handler):
            symbols["handler"] = _address(handler, "handler")
        elif not callable(handler):
            raise _arg_error(f"handler: expected a C function pointer or a Python function handler(t, y, p, "
                             f"which), got {type(handler).__name__}")
    return symbols, keep


def _source_symbols(library):
    symbols = _compile.symbols(library, C_CALLBACKS)
    if "g" not in symbols:
        raise _arg_error("events: the C source defines no function g (int g(double t, const double *y, "
                         "const double *p, double *g, void *user), not static)")
    return symbols


class PythonEvents:
    """Python event functions and handler, called by the solver through
    cffi callbacks. As with a Python right-hand side, the first exception
    is kept (raised after the solve) and every later call fails at once."""

    def __init__(self, g, handler, m):
        self.g, self.handler, self.m = g, handler, m
        self.n = self.nparams = 0  # the problem's, once it is made
        self.error = None

    def values(self, W, t, y, p, out):
        if self.error is not None:
            return -1
        try:
            n, k = self.n, self.nparams
            T = np.frombuffer(ffi.buffer(t, 8 * W), dtype=np.float64)
            Y = np.frombuffer(ffi.buffer(y, 8 * n * W), dtype=np.float64).reshape(n, W).T
            P = np.frombuffer(ffi.buffer(p, 8 * k * W), dtype=np.float64).reshape(k, W).T if k else np.empty((W, 0))
            for a in (T, Y, P):
                a.flags.writeable = False
            G = np.asarray(self.g(T, Y, P), dtype=np.float64)
            if G.shape != (W, self.m):
                raise _arg_error(f"events g(t, Y, P) returned shape {G.shape}: expected {(W, self.m)}")
            np.frombuffer(ffi.buffer(out, 8 * self.m * W), dtype=np.float64).reshape(self.m, W).T[...] = G
            return 0
        except BaseException as exc:  # noqa: B036 (anything escaping a cffi callback would report success)
            self.error = exc
            return -1

    def handle(self, t, y, p, which):
        if self.error is not None:
            return -1
        try:
            Y = np.frombuffer(ffi.buffer(y, 8 * self.n), dtype=np.float64)
            P = np.frombuffer(ffi.buffer(p, 8 * self.nparams), dtype=np.float64) if self.nparams else np.empty(0)
            answer = self.handler(float(t), Y, P, int(which))
            if answer is None or answer is False:
                return HANDLER_CONTINUE
            if answer is True or answer == HANDLER_STOP:
                return HANDLER_STOP
            if answer == HANDLER_CONTINUE:
                return HANDLER_CONTINUE
            raise _arg_error(f"handler returned {answer!r}: expected None, solvent.ode.HANDLER_CONTINUE or "
                             "solvent.ode.HANDLER_STOP")
        except BaseException as exc:  # noqa: B036 (as in values)
            self.error = exc
            return -1


@ffi.def_extern()
def sv_py_ode_g_batch(W, t, y, p, g, user):
    return ffi.from_handle(user).events.values(W, t, y, p, g)


@ffi.def_extern()
def sv_py_ode_g(t, y, p, g, user):
    return ffi.from_handle(user).events.values(1, ffi.new("double[1]", [t]), y, p, g)


@ffi.def_extern()
def sv_py_ode_handler(t, y, p, which, user):
    return ffi.from_handle(user).events.handle(t, y, p, which)


class EventArrays:
    """Where the library stores each trajectory's events: event_t (N, K)
    and event_which (N, K) (NaN and -1 past what occurred), event_y (N, K,
    n), nevents (N,) (more than K: the rest were not stored)."""

    def __init__(self, ntraj, capacity, n):
        self.event_t = np.full((ntraj, capacity), np.nan)
        self.event_which = np.full((ntraj, capacity), -1, dtype=np.intc)
        self.event_y = np.full((ntraj, capacity, n), np.nan)
        self.nevents = np.zeros(ntraj, dtype=np.intc)

    def attach(self, ens):
        ens.event_capacity = self.event_t.shape[1]
        if self.event_t.size:
            ens.event_t = ffi.from_buffer("double[]", self.event_t)
            ens.event_which = ffi.from_buffer("int[]", self.event_which)
            ens.event_y = ffi.from_buffer("double[]", self.event_y)
        ens.nevents = ffi.from_buffer("int[]", self.nevents)

    def result(self):
        return {"event_t": self.event_t, "event_which": self.event_which, "event_y": self.event_y,
                "nevents": self.nevents}


def capacity(value):
    if value is None:
        return DEFAULT_CAPACITY
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < 0:
        raise _arg_error(f"event_capacity {value!r}: expected a whole number >= 0 (events stored per trajectory)")
    return int(value)
