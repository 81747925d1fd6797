"""Many pixel maps on one board (the library's sv_planar_batch,
docs/how-to/run-a-batch.md): the board's shared tables are made once, each
map is a planar job on them, maps run side by side. A map that cannot run
is reported by its index with the library's message; the others go on."""
import threading
from dataclasses import dataclass, field

import numpy as np

from . import planar
from ._core import ArgumentError, new_context, run_stoppable
from ._native import ffi, lib


@dataclass
class BatchResult:
    """f (nf,) in Hz; s (maps, nf, p, p), s[m, k, i, j] = S_ij of map m at
    f[k], NaN for a map that did not run; ok (maps,) True where it ran;
    errors {m: the library's message} of the maps that did not;
    port_names; z0 (p,) in Ω."""
    f: np.ndarray
    s: np.ndarray
    ok: np.ndarray
    port_names: list
    z0: np.ndarray
    errors: dict = field(default_factory=dict)


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
        return BatchResult(f=f, s=s, ok=ok, port_names=project.port_names, z0=z0, errors=self.errors)


@ffi.def_extern()
def sv_py_planar_batch_done(user, k, job, status, message):
    return ffi.from_handle(user).done(k, job, status, message)


def batch(maps, board, *, f=None, band=None, points=None, start_dc=False, tolerance=None, exact_all=False,
          precision="mixed", max_exact=0, device="auto", workers=0, threads=0, memory_limit=None,
          allow_beyond_validity=False, progress=False, client=None, **distributed_options):
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
    client: a dask.distributed Client: the maps run there in chunks
      (solvent.distributed.batch; chunk_size, store).

    Returns a BatchResult: f, s (M, nf, p, p) (NaN for a map that did not
    run), ok, errors {m: the library's message}, port_names, z0. A bad map
    never fails the batch. Ctrl-C stops it within a second."""
    options = dict(f=f, band=band, points=points, start_dc=start_dc, tolerance=tolerance, exact_all=exact_all,
                   precision=precision, max_exact=max_exact, device=device, memory_limit=memory_limit,
                   allow_beyond_validity=allow_beyond_validity)
    if client is not None:
        from . import distributed
        return distributed.batch(maps, board, client=client, threads=threads or None, progress=progress,
                                 **distributed_options, **options)
    if distributed_options:
        raise _arg_error(f"{sorted(distributed_options)}: only with client= (a Dask cluster)")
    maps = as_maps(maps)
    return Batch(board, maps.shape[1:], workers=workers, threads=threads, progress=progress, **options).run(
        maps, progress)
