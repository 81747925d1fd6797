"""An ODE ensemble over a Dask cluster in shards of trajectories
(solvent.ode.solve(..., client=) calls ode_solve): every per-trajectory
input (y0, params, save times, starts) cut by rows, what every shard
shares (the right-hand side, the event functions) made once per worker,
and the outputs (trajectories, sensitivities, events, statistics)
gathered in order, bit for bit the single-machine call's."""
import time
import warnings
from dataclasses import dataclass

import numpy as np

from . import ode
from .distributed import (ODE_SHARD_MAX, PROBE_TRAJECTORIES, TASK_SECONDS, _arg_error, _default_size, _run, _shared,
                          _submit, _task_threads, _thread_plan, worker_state)
from .ode_events import Events
from .store import Store, missing_runs, open_store
from .store import digest as _digest

# What an event output holds where a trajectory has no event (or has not run).
_EVENT_FILL = {"event_t": np.nan, "event_which": -1, "event_y": np.nan, "nevents": 0}


@dataclass
class OdeStored:
    """What an ODE store holds so far (solvent.distributed.load): y, s
    (None without sensitivities), events (None without event functions),
    stats, and done (the trajectories written); NaN rows where not done."""
    y: np.ndarray
    s: np.ndarray
    events: dict
    stats: dict
    done: np.ndarray


class _Inputs:
    """The ensemble's inputs, each shared by every trajectory or one row per
    trajectory (a 2-D y0, params or t_save; a 1-D t0), with a built-in
    problem's defaults filled in."""

    def __init__(self, rhs, y0, t_save, params, t0, arg):
        if isinstance(rhs, str) and rhs in ode.builtin_names():
            d = ode.builtin_defaults(rhs, arg)
            y0 = d["y0"] if y0 is None else y0
            params = d["params"] if params is None else params
            t_save = d["t_save"] if t_save is None else t_save
        self.values = {name: None if value is None else np.ascontiguousarray(value, dtype=np.float64)
                       for name, value in (("y0", y0), ("t_save", t_save), ("params", params), ("t0", t0))}
        rows = {name: len(value) for name, value in self.values.items() if self._per_trajectory(name, value)}
        if len(set(rows.values())) != 1:
            raise _arg_error("y0, params, t_save, t0: with client=, give the trajectories as a 2-D y0, params or "
                             f"t_save or a 1-D t0, of equal N (got {rows or 'none'})")
        self.n = rows.popitem()[1]

    @staticmethod
    def _per_trajectory(name, value):
        return value is not None and value.ndim == (1 if name == "t0" else 2)

    def rows(self, first, last):
        """solve's keyword arguments for trajectories first..last."""
        return {name: value[first:last + 1] if self._per_trajectory(name, value) else value
                for name, value in self.values.items()}

    def key(self):
        """The inputs, for the job's digest."""
        return [self.values[name] for name in ("y0", "t_save", "params", "t0")]


class _Outputs:
    """The ensemble's outputs, filled shard by shard (the part arrays: y,
    s, events_NAME, stats_NAME)."""

    def __init__(self, n, shape, nsens, events):
        self.y = np.full((n,) + tuple(shape), np.nan)
        self.s = np.full((n,) + tuple(shape) + (nsens,), np.nan) if nsens else None
        self.events = (None if events is None else
                       {name: np.full((n,) + tuple(spec["shape"]), _EVENT_FILL[name], dtype=spec["dtype"])
                        for name, spec in events.items()})
        self.stats = {}
        self.filled = np.zeros(n, dtype=bool)

    def put(self, first, last, part):
        rows = slice(first, last + 1)
        self.filled[rows] = True
        self.y[rows] = part["y"]
        if self.s is not None:
            self.s[rows] = part["s"]
        for name, values in part.items():
            if name.startswith("events_"):
                self.events[name[len("events_"):]][rows] = values
            elif name.startswith("stats_"):
                key = name[len("stats_"):]
                if key not in self.stats:
                    self.stats[key] = np.zeros(len(self.y), dtype=values.dtype)
                    if key == "status":
                        self.stats[key][:] = ode.NOT_RUN
                self.stats[key][rows] = values

    def read(self, store):
        """What store holds for the trajectories not filled yet."""
        for first, last, path in store.parts():
            if not self.filled[first]:
                with np.load(path) as data:
                    self.put(first, last, {name: data[name] for name in data.files})


def ode_solve(client, rhs, y0=None, t_save=None, params=None, *, t0=None, events=None, shard_size=None, store=None,
              threads=0, progress=False, return_stats=False, sensitivities=None, **options):
    """solvent.ode.solve over a Dask cluster, in shards of trajectories.
    rhs and events must travel to a worker: C source text, a built-in
    problem's name or Python functions (not C pointers). shard_size:
    trajectories per task (default: about 4 shards per worker thread, each
    at least TASK_SECONDS of work as timed here, at most ODE_SHARD_MAX);
    store: a folder each finished shard is written to (a second call
    resumes). Returns what solve returns, bit for bit."""
    _check_travels(rhs, options.get("jac"), events)
    inputs = _Inputs(rhs, y0, t_save, params, t0, options.get("arg", 0))
    n = inputs.n
    solve_options = dict(options, sensitivities=sensitivities, events=events)
    shape, nsens, event_specs = _probe(rhs, inputs, solve_options)
    size = shard_size or _default_size(n, client, ODE_SHARD_MAX,
                                       _fewest(_seconds_per_trajectory(rhs, inputs, solve_options)))
    shared_key = _digest(_rhs_key(rhs), _events_key(events))
    digest = _digest("ode", _rhs_key(rhs), *inputs.key(), sensitivities, _events_key(events),
                     {k: v for k, v in options.items() if k not in ("jac", "sparsity")})
    opened = open_store(store, "ode", n, digest, shape=list(shape), nsens=nsens, events=event_specs)
    done = opened.done(n) if opened else np.zeros(n, dtype=bool)
    outputs = _Outputs(n, shape, nsens, event_specs)

    def keep(first, last, part):
        if opened:
            opened.write(first, last, part)
        outputs.put(first, last, part)

    plan = _thread_plan(client, threads)
    task_options = dict(options, sensitivities=sensitivities)
    with _shared(client, {"rhs": rhs, "events": events}, shared_key) as shared:

        def submit(first, last):
            return _submit(client, _ode_shard, "ode", digest, first, last, inputs.rows(first, last), shared,
                           shared_key, task_options, plan)

        _run(client, submit, missing_runs(done, size), keep, progress, "ode shards", n, int(done.sum()))
    if opened:
        outputs.read(opened)
    result = [outputs.y] + ([outputs.s] if nsens else []) + ([outputs.events] if event_specs else [])
    if return_stats:
        result.append(outputs.stats)
    else:
        ode.warn_failures(outputs.stats["status"], outputs.stats["t_reached"], stacklevel=4)
    return result[0] if len(result) == 1 else tuple(result)


def _check_travels(rhs, jac, events):
    """Refuse what means nothing in another process: C function pointers."""
    if not (isinstance(rhs, str) or (callable(rhs) and not ode._is_pointer(rhs))):
        raise _arg_error("rhs: with client=, give C source text, a built-in problem's name or a Python function "
                         "(a C function pointer means nothing in another process)")
    if jac is not None and ode._is_pointer(jac):
        raise _arg_error("jac: with client=, a Python function (a C function pointer means nothing in another "
                         "process)")
    if events is None:
        return
    g, handler = (events.recipe[0], events.recipe[4]) if isinstance(events, Events) else (events, None)
    if not (isinstance(g, str) or (callable(g) and not ode._is_pointer(g))) or \
            (handler is not None and ode._is_pointer(handler)):
        raise _arg_error("events: with client=, give g as C source text or a Python function and the handler as a "
                         "Python function or in the source (a C function pointer means nothing in another process)")


def _probe(rhs, inputs, solve_options):
    """The first trajectory solved here: the inputs checked before anything
    is sent, and the outputs' shapes (y's rows, the sensitivities, each
    event output's)."""
    out = ode.solve(rhs, **inputs.rows(0, 0), threads=1, return_stats=True, **solve_options)
    nsens = out[1].shape[-1] if solve_options["sensitivities"] is not None else 0
    has_events = len(out) == 3 + bool(nsens)
    specs = ({name: {"shape": list(a.shape[1:]), "dtype": a.dtype.str} for name, a in out[-2].items()}
             if has_events else None)
    return out[0].shape[1:], nsens, specs


def _seconds_per_trajectory(rhs, inputs, solve_options):
    """One trajectory's time on one core, from the first PROBE_TRAJECTORIES
    solved here (the probe before has compiled what needs it)."""
    rows = inputs.rows(0, min(inputs.n, PROBE_TRAJECTORIES) - 1)
    start = time.perf_counter()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        ode.solve(rhs, **rows, threads=1, return_stats=True, **solve_options)
    return (time.perf_counter() - start) / min(inputs.n, PROBE_TRAJECTORIES)


def _fewest(seconds_per_trajectory):
    """Trajectories that make a shard TASK_SECONDS long."""
    return int(np.ceil(TASK_SECONDS / max(seconds_per_trajectory, 1e-9)))


def _rhs_key(rhs):
    """A right-hand side's identity: its text, or a Python function's
    qualified name (the same in every process, so a store can resume)."""
    return _digest(rhs if isinstance(rhs, str) else _function_name(rhs))


def _events_key(events):
    if events is None:
        return None
    g, count, direction, action, handler, tolerance = events.recipe if isinstance(events, Events) else (
        events, None, None, None, None, 0.0)
    return [g if isinstance(g, str) else _function_name(g), count, direction, action,
            None if handler is None else _function_name(handler), tolerance]


def _function_name(f):
    return f"{f.__module__}.{f.__qualname__}"


def _ode_state(shared):
    """What a worker makes once for a right-hand side and its events: C
    source compiled and loaded (the objects' cache makes later loads free),
    the events made again from what made them."""
    from . import _compile
    rhs, events = shared["rhs"], shared["events"]
    if isinstance(rhs, str) and rhs not in ode.builtin_names():
        _compile.compile_source(rhs)
    return {"rhs": rhs, "events": None if events is None else Events.of(events)}


def _ode_shard(first, last, rows, shared, key, options, plan):
    """A worker's task: trajectories first..last."""
    state = worker_state(key, _ode_state, shared)
    threads = _task_threads(plan)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # failures are reported once, by the client
        out = ode.solve(state["rhs"], **rows, threads=threads, return_stats=True, events=state["events"], **options)
    part = {"y": out[0], "threads": np.array(threads)}
    if options.get("sensitivities") is not None:
        part["s"] = out[1]
    if len(out) == 3 + ("s" in part):
        part.update({f"events_{name}": values for name, values in out[-2].items()})
    part.update({f"stats_{name}": values for name, values in out[-1].items()})
    return part


def load(store):
    """An ODE store's trajectories so far (OdeStored)."""
    opened = store if isinstance(store, Store) else Store(store)
    manifest = opened.manifest()
    outputs = _Outputs(manifest["items"], manifest["shape"], manifest["nsens"], manifest.get("events"))
    outputs.read(opened)
    return OdeStored(y=outputs.y, s=outputs.s, events=outputs.events, stats=outputs.stats,
                     done=opened.done(manifest["items"]))
