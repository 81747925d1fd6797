"""Many pixel maps on one board (the library's sv_planar_batch,
docs/how-to/run-a-batch.md): the board's shared tables are made once, each
map is a planar job on them, maps run side by side. A map that cannot run
is reported by its index with the library's message; the others go on.
With a store, each chunk of maps is written as it finishes and a second
call resumes with the maps that are missing."""
import os
import threading
from dataclasses import dataclass, field

import numpy as np

from . import planar
from ._core import ArgumentError, new_context, run_stoppable
from ._native import ffi, lib
from .progress import ProgressBar
from .store import digest, missing_runs, open_store

# Maps per stored chunk on one machine: at least this many, and at least
# CHUNK_PER_THREAD per library thread (so a chunk's last maps leave few
# cores idle); a stop loses at most one chunk's work.
CHUNK_MIN, CHUNK_PER_THREAD = 32, 4


@dataclass
class BatchResult:
    """f (nf,) in Hz; s (maps, nf, p, p), s[m, k, i, j] = S_ij of map m at
    f[k], NaN for a map that did not run; ok (maps,) True where it ran;
    errors {m: the library's message} of the maps that did not;
    port_names; z0 (p,) in Ω; computed: the maps this call ran (the
    others were read back from its store). With gather=False, s is None."""
    f: np.ndarray
    s: np.ndarray
    ok: np.ndarray
    port_names: list
    z0: np.ndarray
    errors: dict = field(default_factory=dict)
    computed: int = 0


def _arg_error(message):
    return ArgumentError(lib.SV_ERR_ARG, message)


def as_maps(maps):
    """maps as a (M, ny, nx) array of 0/1 (row 0 the top row, as
    Project.from_pixels takes them)."""
    try:
        array = np.asarray(maps)
    except ValueError as exc:
        raise _arg_error(f"maps: expected equal-sized 2-D 0/1 arrays ({exc})") from None
    if array.ndim == 2:
        array = array[None]
    if array.ndim != 3 or array.shape[0] == 0 or array.shape[1] == 0 or array.shape[2] == 0:
        raise _arg_error(f"maps: expected (maps, ny, nx) 0/1 values, got shape {array.shape}")
    if not np.all((array == 0) | (array == 1)):
        raise _arg_error("maps: expected only 0 (no metal) and 1 (metal)")
    return array


class Batch:
    """The board's shared tables and the maps' options, made once and run
    on as many maps as asked (solvent.batch makes one per call;
    solvent.distributed one per worker)."""

    def __init__(self, board, shape, *, f=None, band=None, points=None, start_dc=False, tolerance=None,
                 exact_all=False, precision="mixed", max_exact=0, device="auto", workers=0, threads=0,
                 memory_limit=None, allow_beyond_validity=False, progress=False):
        self.shape = tuple(int(n) for n in shape)
        # The board's own metal is not used (sv_planar_batch_create): any map gives its grid.
        self.project = (board if isinstance(board, planar.Project)
                        else planar.Project.from_pixels(np.ones(self.shape, dtype=np.uint8), board, name="board"))
        self.ctx = new_context(threads)
        self.keep = []
        job = planar._options(f, band, points, start_dc, tolerance, (), exact_all, precision, max_exact, 0,
                              device, 0, None, self.keep)
        job.allow_beyond_validity = int(bool(allow_beyond_validity))
        opts = ffi.new("sv_planar_batch_options *")
        lib.sv_planar_batch_options_default(opts)
        opts.job = job[0]
        opts.workers = int(workers)
        if memory_limit is not None:
            opts.memory_limit = planar._bytes(memory_limit)
        out = ffi.new("sv_planar_batch **")
        run_stoppable(self.ctx, lambda: lib.sv_planar_batch_create(self.ctx, self.project._handle, opts, out),
                      progress)

        def destroy(handle, ctx=self.ctx, project=self.project):  # holds what the batch was made on
            lib.sv_planar_batch_destroy(handle)

        self.handle = ffi.gc(out[0], destroy)
        self.lock = threading.Lock()  # one run at a time: the batch's slots are its maps in flight

    def run(self, maps, progress=False, first=0):
        """The maps' S-parameters (a BatchResult); first: the index the
        first map's errors are reported under."""
        maps = as_maps(maps)
        if maps.shape[1:] != self.shape:
            raise _arg_error(f"maps: each map must be {self.shape[0]} x {self.shape[1]} (the board's grid), got "
                             f"{maps.shape[1]} x {maps.shape[2]}")
        # The library's map is map[i + nx·j] with j = 0 the bottom row.
        cells = np.ascontiguousarray(maps[:, ::-1, :].reshape(len(maps), -1), dtype=np.uint8)
        base = ffi.from_buffer("unsigned char[]", cells)
        pointers = ffi.new("unsigned char *[]", [base + k * cells.shape[1] for k in range(len(maps))])
        record = _Collected(len(maps), first)
        handle = ffi.new_handle(record)
        with self.lock:
            run_stoppable(self.ctx, lambda: lib.sv_planar_batch_run(self.handle, len(maps), pointers,
                                                                    lib.sv_py_planar_batch_done, handle), progress)
        if record.error is not None:
            raise record.error
        return record.result(self.project)


class _Collected:
    """What the batch reports after each map (one call at a time)."""

    def __init__(self, count, first):
        self.count, self.first = count, first
        self.sweeps, self.errors, self.error = {}, {}, None

    def done(self, k, job, status, message):
        try:
            if status == lib.SV_OK:
                self.sweeps[k] = planar._result(job, "<batch>")
            else:
                self.errors[self.first + k] = ffi.string(message).decode("utf-8", "replace")
            return 0
        except BaseException as exc:  # noqa: B036 (stop the batch; raised after it)
            self.error = exc
            return 1

    def result(self, project):
        p = len(project.port_names)
        some = next(iter(self.sweeps.values()), None)
        f = some.f if some is not None else np.empty(0)
        s = np.full((self.count, f.size, p, p), np.nan, dtype=np.complex128)
        for k, sweep in self.sweeps.items():
            s[k] = sweep.s
        ok = np.zeros(self.count, dtype=bool)
        ok[list(self.sweeps)] = True
        z0 = some.z0 if some is not None else np.full(p, np.nan)
        return BatchResult(f=f, s=s, ok=ok, port_names=project.port_names, z0=z0, errors=self.errors,
                           computed=self.count)


@ffi.def_extern()
def sv_py_planar_batch_done(user, k, job, status, message):
    return ffi.from_handle(user).done(k, job, status, message)


# ---- a batch's chunks, kept and stored ----------------------------------


def job_key(board, shape, options):
    """What a batch's maps share (board, grid, sweep options), as a content
    hash: a worker's cache key for the board's tables, and with the maps the
    job's identity in a store. Options that cannot change S are left out."""
    if isinstance(board, planar.Project):
        raise _arg_error("board: with store= or client=, give the board as a dict (a Project's handle can be "
                         "neither stored nor sent to another process)")
    f = options.get("f")
    named = {k: v for k, v in options.items() if k not in ("f", "memory_limit", "workers", "threads", "progress")}
    return digest("batch", board, list(shape), named, None if f is None else np.asarray(f, dtype=np.float64))


def pack(part):
    """A chunk's BatchResult as the arrays of its part file."""
    index = np.array(sorted(part.errors), dtype=np.int64)
    return {"f": part.f, "s": part.s, "ok": part.ok, "z0": part.z0, "port_names": np.array(part.port_names),
            "error_index": index, "error_message": np.array([part.errors[int(k)] for k in index], dtype=str)}


def _unpack(data, with_s):
    errors = {int(k): str(m) for k, m in zip(data["error_index"], data["error_message"])}
    return BatchResult(f=data["f"], s=data["s"] if with_s else None, ok=data["ok"],
                       port_names=[str(p) for p in data["port_names"]], z0=data["z0"], errors=errors)


class BatchParts:
    """One batch's chunks as they finish (in any order): each written to
    the store at once (if there is one) and kept in memory when gather;
    result() joins them, with what an earlier call stored, in map order."""

    def __init__(self, n, store=None, gather=True):
        self.n, self.store, self.gather = n, store, gather
        self.parts = {}  # first map -> BatchResult (with s only when gather)
        self.computed = 0

    def done(self):
        """The maps already in the store."""
        return self.store.done(self.n) if self.store else np.zeros(self.n, dtype=bool)

    def keep(self, first, last, part):
        if self.store:
            self.store.write(first, last, pack(part))
        self.computed += last - first + 1
        if not self.gather:
            part = BatchResult(f=part.f, s=None, ok=part.ok, port_names=part.port_names, z0=part.z0,
                               errors=part.errors)
        self.parts[first] = part

    def result(self):
        """The whole batch: s (n, nf, p, p), NaN for a map that did not run
        or is not written yet (its ok False, and not in errors)."""
        if self.store:
            for first, _, path in self.store.parts():
                if first not in self.parts:
                    with np.load(path) as data:
                        self.parts[first] = _unpack(data, self.gather)
        ordered = sorted(self.parts.items())
        if not ordered:  # a store with nothing written yet
            return BatchResult(f=np.empty(0), s=np.full((self.n, 0, 0, 0), np.nan + 0j) if self.gather else None,
                               ok=np.zeros(self.n, dtype=bool), port_names=[], z0=np.empty(0))
        ran = [part for _, part in ordered if part.ok.any()]
        some = ran[0] if ran else ordered[0][1]
        f, p = (some.f if ran else np.empty(0)), len(some.port_names)
        ok = np.zeros(self.n, dtype=bool)
        s = np.full((self.n, f.size, p, p), np.nan + 0j) if self.gather else None
        errors = {}
        for first, part in ordered:
            rows = slice(first, first + len(part.ok))
            ok[rows] = part.ok
            errors.update(part.errors)
            if s is not None and part.ok.any():
                s[rows] = part.s
        return BatchResult(f=f, s=s, ok=ok, port_names=some.port_names, z0=some.z0, errors=dict(sorted(errors.items())),
                           computed=self.computed)


def load(store):
    """A batch's Store so far, without running anything: a BatchResult
    with NaN and ok False for the maps not written yet."""
    return BatchParts(store.manifest()["items"], store).result()


def _run_stored(maps, board, store, gather, chunk_size, workers, threads, progress, options):
    """The batch on this machine in chunks, each stored as it finishes."""
    key = job_key(board, maps.shape[1:], options)
    parts = BatchParts(len(maps), open_store(store, "batch", len(maps), digest(key, maps)), gather)
    stored = parts.done()
    runs = missing_runs(stored, chunk_size or _local_chunk(threads))
    bar = ProgressBar.from_argument(progress)
    try:
        if runs:
            engine = Batch(board, maps.shape[1:], workers=workers, threads=threads,
                           progress=None if bar is None else (lambda phase, fraction: bar.update(phase, fraction)),
                           **options)
        done = int(stored.sum())
        for first, last in runs:
            count = last - first + 1

            def within(phase, fraction, done=done, count=count):
                bar.update("batch", (done + fraction * count) / len(maps))

            parts.keep(first, last, engine.run(maps[first:last + 1], within if bar else None, first=first))
            done += count
    finally:
        if bar:
            bar.close()
    return parts.result()


def _local_chunk(threads):
    return max(CHUNK_MIN, CHUNK_PER_THREAD * (threads or os.cpu_count() or 1))


def batch(maps, board, *, f=None, band=None, points=None, start_dc=False, tolerance=None, exact_all=False,
          precision="mixed", max_exact=0, device="auto", workers=0, threads=0, memory_limit=None,
          allow_beyond_validity=False, progress=False, store=None, gather=True, chunk_size=None, client=None):
    """S-parameters of many pixel maps on one board (sv_planar_batch): the
    board's tables made once, maps solved side by side.

    maps: (M, ny, nx) 0/1 (or a list of (ny, nx) arrays; row 0 the top
      row); board: a project dict without its metal (as
      Project.from_pixels takes it) or a Project on the maps' grid.
    f, band, points, start_dc, tolerance, exact_all, precision, max_exact,
      device, allow_beyond_validity: every map's sweep, as solvent.sweep.
    workers: maps solved at a time (0: one per thread); threads: the
      library's threads (0: all cores); memory_limit: the whole batch's.
    progress: True for a bar, or a callable(phase, fraction).
    store: a folder: the maps are run in chunks of chunk_size, each
      written there as it finishes (one part file per chunk); a second
      call with the same maps, board and options reads them back and runs
      only the maps that are missing. gather=False keeps no S in memory
      (the result's s is None; solvent.distributed.load reads the store).
    client: a dask.distributed Client: the chunks run on its workers
      (solvent.distributed.batch).

    Returns a BatchResult: f, s (M, nf, p, p) (NaN for a map that did not
    run), ok, errors {m: the library's message}, port_names, z0, computed.
    A bad map never fails the batch. Ctrl-C stops it within a second."""
    options = dict(f=f, band=band, points=points, start_dc=start_dc, tolerance=tolerance, exact_all=exact_all,
                   precision=precision, max_exact=max_exact, device=device, memory_limit=memory_limit,
                   allow_beyond_validity=allow_beyond_validity)
    if not gather and store is None:
        raise _arg_error("gather=False: give a store (the results would go nowhere)")
    if client is not None:
        from . import distributed
        return distributed.batch(maps, board, client=client, store=store, gather=gather, chunk_size=chunk_size,
                                 threads=threads or None, progress=progress, **options)
    maps = as_maps(maps)
    if store is not None:
        return _run_stored(maps, board, store, gather, chunk_size, workers, threads, progress, options)
    if chunk_size is not None:
        raise _arg_error("chunk_size: only with store= or client=")
    return Batch(board, maps.shape[1:], workers=workers, threads=threads, progress=progress, **options).run(
        maps, progress)
