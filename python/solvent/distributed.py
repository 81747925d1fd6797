"""Many planar sweeps, batches of maps and large ODE ensembles on a Dask
cluster (docs/how-to/distributed.md is the guide): the tasks, the state
each worker makes once, the threads per worker; sweeps and batches here,
ensembles in distributed_ode.py.

The work is cut into tasks of several items (chunks of projects or pixel
maps, shards of trajectories) so that Dask's per-task cost is small beside
the task's own; each worker process builds what every task shares (a
board, a compiled right-hand side) once, from one copy the client hands
the cluster; results come back in input order, identical to the
single-machine call. With a store (a folder) every finished task is
written there at once, atomically, so a run that stops resumes with only
what is missing. A worker lost mid-task costs nothing but time: Dask runs
its tasks again elsewhere. An item that fails on bad input is reported
with its index and the library's message; the others go on.

Dask is imported only when a client is given: the package works without it.

A task is one function over a chunk (_sweep_chunk, _batch_chunk; an
ensemble's _ode_shard in distributed_ode.py) with what its items share
built by worker_state once per worker process.
"""
import contextlib
import json
import math
import os
import re
import threading
import uuid
from dataclasses import dataclass, field

import numpy as np

from . import planar
from ._core import ArgumentError, SolventError
from ._native import lib
from .progress import ProgressBar
from .store import Store, missing_runs, open_store
from .store import digest as _digest

# Default task sizes: about TASKS_PER_THREAD tasks for each worker thread
# (enough to even out uneven items and a lost worker), their number a
# multiple of the worker threads (so that no thread is left waiting on the
# last), never more items in one task than the cap (a task's result stays
# small and a resume loses little). A shard of trajectories is also long
# enough to make Dask's cost per task (about 10 ms) small: at least
# TASK_SECONDS of work, as a probe of PROBE_TRAJECTORIES on the client
# times it.
TASKS_PER_THREAD = 4
SWEEP_CHUNK_MAX = 32
ODE_SHARD_MAX = 65536
TASK_SECONDS = 0.5
PROBE_TRAJECTORIES = 64

# Dask settings for workers that run long compute-bound tasks
# (docs/how-to/distributed.md#lean-workers): the sampling profiler, the
# event loops' health ticks and the memory and system monitors cost each
# idle worker and the scheduler a few per cent of a core, which two busy
# workers on two cores cannot spare; and the malloc trim threshold the
# nanny sets (64 KiB, so that workers hand memory back) fixes glibc's
# thresholds, so the library's large work arrays come fresh from the
# kernel at every allocation (about 9 % on the dataset's batch).
WORKER_CONFIG = {
    "distributed.worker.profile.enabled": False,
    "distributed.admin.tick.interval": "1s",
    "distributed.admin.system-monitor.interval": "5s",
    "distributed.worker.memory.monitor-interval": "1s",
    "distributed.nanny.pre-spawn-environ.MALLOC_TRIM_THRESHOLD_": None,
}


def worker_config_yaml():
    """WORKER_CONFIG as a Dask configuration file, for workers started by
    hand or by a batch system (they read ~/.config/dask/*.yaml, or the
    folder DASK_CONFIG names, when they start)."""
    import yaml
    nested = {}
    for dotted, value in WORKER_CONFIG.items():
        *path, last = dotted.split(".")
        node = nested
        for key in path:
            node = node.setdefault(key, {})
        node[last] = value
    return yaml.safe_dump(nested, default_flow_style=False)


def _arg_error(message):
    return ArgumentError(lib.SV_ERR_ARG, message)


# ---- what a worker builds once ------------------------------------------

_state = {}
_state_lock = threading.Lock()
state_builds = 0  # states this process built (one per shared payload and process)


def worker_state(key, build, payload):
    """build(payload), made once per process and content key, then reused by
    every task of this process that names the same key."""
    global state_builds
    with _state_lock:
        if key not in _state:
            _state[key] = build(payload)
            state_builds += 1
        return _state[key]


def _hold(payload):
    """A task whose result is the payload: the cluster keeps it like any
    result (and can make it again from this recipe if every copy is lost)."""
    return payload


@contextlib.contextmanager
def _shared(client, payload, key):
    """One future of payload for the tasks of one call: made on one worker,
    fetched from there by each other worker once, with its first task (no
    copy per task), and let go when the call ends."""
    future = client.submit(_hold, payload, key=f"solvent-shared-{key}", pure=False)
    try:
        yield future
    finally:
        future.release()


# ---- threads ------------------------------------------------------------


def _thread_plan(client, threads):
    """Library threads per task by host: the host's cores shared among
    every worker thread on it, so a node is used once. threads (a number)
    overrides."""
    if threads:
        return {"*": int(threads)}
    workers = client.scheduler_info()["workers"]
    cores = client.run(_worker_cores)  # by worker address
    threads_on, cores_on = {}, {}
    for address, w in workers.items():
        threads_on[w["host"]] = threads_on.get(w["host"], 0) + w["nthreads"]
        cores_on[w["host"]] = cores.get(address, 1)
    return {host: max(1, cores_on[host] // threads_on[host]) for host in threads_on}


def _worker_cores():
    """The cores this process may run on (its affinity: a batch system's share)."""
    return len(os.sched_getaffinity(0))


def _task_threads(plan):
    if "*" in plan:
        return plan["*"]
    from distributed import get_worker
    worker = get_worker()
    host = re.sub(r"^\w+://", "", worker.address).rsplit(":", 1)[0].strip("[]")
    if host in plan:
        return plan[host]
    # A worker that joined after the plan was made: its own cores among its threads.
    return max(1, _worker_cores() // worker.state.nthreads)


def _worker_thread_total(client):
    return sum(w["nthreads"] for w in client.scheduler_info()["workers"].values()) or 1


def _default_size(n, client, high, fewest=1):
    """Items per task: about TASKS_PER_THREAD tasks per worker thread, at
    least fewest and at most high items each, the number of tasks a
    multiple of the threads where the cap allows."""
    threads = _worker_thread_total(client)
    tasks = max(1, min(TASKS_PER_THREAD * threads, n // max(1, fewest)))
    tasks = math.ceil(tasks / threads) * threads
    return max(1, min(high, math.ceil(n / tasks)))


# ---- running tasks ------------------------------------------------------


def _run(client, submit, runs, on_part, progress, phase, total, already):
    """Submit one task per run, hand each finished part to on_part as it
    comes (in completion order), cancel what is left if anything stops the
    loop. Returns the number of items computed."""
    from distributed import as_completed
    bar = ProgressBar.from_argument(progress)
    ranges = {}
    for first, last in runs:
        future = submit(first, last)
        ranges[future.key] = (future, first, last)
    futures = [future for future, _, _ in ranges.values()]
    done, computed = already, 0
    try:
        if bar:
            bar.update(phase, done / total)
        for future in as_completed(futures, loop=client.loop):
            _, first, last = ranges.pop(future.key)
            on_part(first, last, future.result())
            future.release()
            done += last - first + 1
            computed += last - first + 1
            if bar:
                bar.update(phase, done / total)
    finally:
        client.cancel([f for f in futures if not f.done()])
        if bar:
            bar.close()
    return computed


def _submit(client, fn, name, digest, first, last, *args):
    return client.submit(fn, first, last, *args, key=f"{name}-{digest[:12]}-{first}-{last}-{uuid.uuid4().hex[:6]}",
                         pure=False)


# ---- many sweeps --------------------------------------------------------


@dataclass
class ManyResult:
    """sweep_many's answer: results[k] the SweepResult of item k (None if it
    failed), errors {k: the library's message} of the items that failed,
    computed: how many items this call swept (the others were read back
    from the store)."""
    results: list
    errors: dict = field(default_factory=dict)
    computed: int = 0

    def __len__(self):
        return len(self.results)

    def __getitem__(self, k):
        return self.results[k]

    def arrays(self):
        """(f (nf,), s (N, nf, p, p), ok (N,)) for items on one board and
        band: s of a failed item is NaN, ok False."""
        first = next((r for r in self.results if r is not None), None)
        if first is None:
            raise _arg_error("arrays: no item succeeded")
        s = np.full((len(self.results),) + first.s.shape, np.nan, dtype=np.complex128)
        ok = np.zeros(len(self.results), dtype=bool)
        for k, r in enumerate(self.results):
            if r is None:
                continue
            if r.s.shape != first.s.shape or not np.array_equal(r.f, first.f):
                raise _arg_error(f"arrays: item {k} has other frequencies or ports than item "
                                 f"{self.results.index(first)}")
            s[k], ok[k] = r.s, True
        return first.f.copy(), s, ok


def sweep_many(items, *, board=None, client=None, store=None, chunk_size=None, threads=None, progress=False,
               gather=True, **sweep_options):
    """solvent.sweep of every item, in order.

    items: project dicts or project file paths (a path must be readable
      where the sweep runs: on every worker); with board, 0/1 pixel arrays
      (ny, nx) (a list, or an (N, ny, nx) array) on that board (see
      Project.from_pixels).
    client: a dask.distributed Client (None: one after another here, with
      threads as given, default all cores).
    store: a folder: every finished chunk is written there as it completes
      and a second call with the same inputs reads it back instead of
      sweeping again. gather=False keeps nothing in memory (results all
      None; errors: those of the items swept now): for jobs larger than
      memory, read back
      with load() or part by part from Store(store).parts().
    chunk_size: items per task (default: about 4 tasks per worker thread,
      at most 32 items).
    threads: library threads per task (default: the host's cores over the
      worker threads on it).
    progress: True for a bar, or a callable(phase, fraction).
    The other keywords are solvent.sweep's (not threads, progress).

    Returns a ManyResult; an item that fails (a bad project, a map with no
    metal at a port) is in .errors with the library's message."""
    if not gather and store is None:
        raise _arg_error("gather=False: give a store (the results would go nowhere)")
    items = _sweep_items(items, board)
    digest = _digest("sweep_many", [_item_digest(i) for i in items], board, sweep_options)
    n = len(items)
    results, errors = [None] * n, {}
    opened = open_store(store, "sweep_many", n, digest)
    done = opened.done(n) if opened else np.zeros(n, dtype=bool)

    def keep(first, last, part):
        if opened:
            opened.write(first, last, _pack_sweeps(first, part))
        for k, (result, error) in enumerate(part["items"], start=first):
            results[k] = result if gather else None
            if error is not None:
                errors[k] = error

    if client is None:
        computed = _sweep_here(items, board, done, sweep_options, threads or 0, keep)
    else:
        size = chunk_size or _default_size(n, client, SWEEP_CHUNK_MAX)
        plan = _thread_plan(client, threads)
        with _shared(client, {"board": board}, _digest(board)) as shared:

            def submit(first, last):
                return _submit(client, _sweep_chunk, "sweep_many", digest, first, last, items[first:last + 1],
                               shared, _digest(board), sweep_options, plan)

            computed = _run(client, submit, missing_runs(done, size), keep, progress, "sweep_many", n,
                            int(done.sum()))
    if opened and gather:
        _read_sweeps(opened, results, errors, skip=lambda k: results[k] is not None or k in errors)
    return ManyResult(results, errors, computed)


def _sweep_items(items, board):
    if board is not None:
        if isinstance(items, np.ndarray) and items.ndim == 3:
            return [np.ascontiguousarray(m) for m in items]
        return [np.asarray(m) for m in items]
    out = []
    for k, item in enumerate(items):
        if isinstance(item, planar.Project):
            raise _arg_error(f"items[{k}]: a Project cannot travel to a worker; give its dict or file path")
        if not isinstance(item, (dict, str, os.PathLike)):
            raise _arg_error(f"items[{k}]: expected a project dict or a project file path (or pixel maps "
                             f"with board=), got {type(item).__name__}")
        out.append(os.fspath(item) if isinstance(item, os.PathLike) else item)
    return out


def _item_digest(item):
    return _digest(item) if isinstance(item, np.ndarray) else item


def _sweep_here(items, board, done, options, threads, keep):
    computed = 0
    for k in np.flatnonzero(~done):
        keep(int(k), int(k), {"items": [_sweep_one(int(k), items[k], board, options, threads)]})
        computed += 1
    return computed


def _sweep_chunk(first, last, items, shared, key, options, plan):
    """A worker's task: the sweeps of items first..last."""
    board = worker_state(key, lambda payload: payload["board"], shared)
    threads = _task_threads(plan)
    return {"items": [_sweep_one(k, item, board, options, threads) for k, item in enumerate(items, start=first)],
            "threads": threads}


def _sweep_one(k, item, board, options, threads):
    """(SweepResult, None), or (None, message) when the item is refused; a
    message names the item as "item K" (a file by its path)."""
    try:
        if board is not None:
            project = planar.Project.from_pixels(item, board, name=f"item {k}")
        elif isinstance(item, dict):
            project = planar.Project.from_dict(item, name=f"item {k}")
        else:
            project = planar.Project.from_file(item)
        result = planar.sweep(project, threads=threads, **options)
        result.report = json.loads(json.dumps(result.report, default=_report_value))
        return result, None
    except SolventError as exc:
        return None, str(exc)


def _report_value(value):
    """A report field json cannot write (a cffi array of numbers): its list."""
    try:
        return list(value)
    except TypeError:
        return repr(value)


_SWEEP_ARRAYS = ("f", "s", "z0", "exact", "fallback", "y", "z", "y_raw")


def _pack_sweeps(first, part):
    arrays = {}
    for k, (result, error) in enumerate(part["items"], start=first):
        if error is not None:
            arrays[f"{k}_error"] = np.array(error)
            continue
        for name in _SWEEP_ARRAYS:
            if getattr(result, name) is not None:
                arrays[f"{k}_{name}"] = getattr(result, name)
        arrays[f"{k}_port_names"] = np.array(result.port_names)
        arrays[f"{k}_report"] = np.array(json.dumps(result.report))
        arrays[f"{k}_name"] = np.array(result.name)
    return arrays


def _read_sweeps(store, results, errors, skip):
    for first, last, path in store.parts():
        if all(skip(k) for k in range(first, last + 1)):
            continue
        with np.load(path) as data:
            for k in range(first, last + 1):
                if skip(k):
                    continue
                if f"{k}_error" in data:
                    errors[k] = str(data[f"{k}_error"])
                    continue
                arrays = {name: (data[f"{k}_{name}"] if f"{k}_{name}" in data else None) for name in _SWEEP_ARRAYS}
                results[k] = planar.SweepResult(port_names=[str(p) for p in data[f"{k}_port_names"]],
                                                report=json.loads(str(data[f"{k}_report"])),
                                                name=str(data[f"{k}_name"]), **arrays)


def load(store):
    """The results a store holds so far, without a cluster: for
    sweep_many, a ManyResult (computed 0) with None for items not written
    yet; for a batch, a BatchResult with NaN and ok False for maps not
    written yet; for an ODE ensemble, an OdeStored (y, s, events, stats,
    done) with NaN rows for trajectories not written yet."""
    opened = Store(store)
    manifest = opened.manifest()
    if manifest is None:
        raise _arg_error(f"store {store}: no manifest.json: not a solvent.distributed store")
    n = manifest["items"]
    if manifest["kind"] == "sweep_many":
        results, errors = [None] * n, {}
        _read_sweeps(opened, results, errors, skip=lambda k: False)
        return ManyResult(results, errors, 0)
    if manifest["kind"] == "batch":
        from . import planar_batch
        return planar_batch.load(opened)
    from . import distributed_ode
    return distributed_ode.load(opened)


# ---- a batch of maps on one board ---------------------------------------


def batch(maps, board, *, client, store=None, gather=True, chunk_size=None, threads=None, progress=False,
          **options):
    """solvent.batch over a Dask cluster: chunks of chunk_size maps (default:
    about 4 per worker thread, at most SWEEP_CHUNK_MAX), each run by the
    worker's own sv_planar_batch — the board's tables built once per worker
    process and board, keyed by their content, not per task — and gathered
    in order: the BatchResult of the single-machine call. A map that cannot
    run is reported in errors by its index. store, gather: as
    solvent.batch's (each chunk written as it arrives; a second call
    resumes)."""
    from .planar_batch import BatchParts, as_maps, job_key
    maps = as_maps(maps)
    n, shape = len(maps), maps.shape[1:]
    key = job_key(board, shape, options)
    parts = BatchParts(n, open_store(store, "batch", n, _digest(key, maps)), gather)
    plan = _thread_plan(client, threads)
    done = parts.done()
    size = chunk_size or _default_size(n, client, SWEEP_CHUNK_MAX)
    with _shared(client, {"board": board, "shape": shape, "options": options}, key) as shared:

        def submit(first, last):
            return _submit(client, _batch_chunk, "batch", key, first, last, maps[first:last + 1], shared, key, plan)

        _run(client, submit, missing_runs(done, size), parts.keep, progress, "batch", n, int(done.sum()))
    return parts.result()


def _batch_chunk(first, last, maps, shared, key, plan):
    """A worker's task: maps first..last on this process's batch of the board."""
    from .planar_batch import Batch

    def build(payload):
        return Batch(payload["board"], payload["shape"], threads=_task_threads(plan), **payload["options"])

    return worker_state(f"batch-{key}", build, shared).run(maps, first=first)
