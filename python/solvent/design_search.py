"""Design: a pixelated circuit searched against masks on |S| (the library's
direct binary search, docs/design.md), as `solvent design` runs it."""
import json
import os
import tempfile
from dataclasses import dataclass, field

import numpy as np

from ._core import ArgumentError, check, new_context, run_stoppable
from ._native import ffi, lib
from .planar import Project, _as_python, _complex_blocks

# report.stopped as the library sets it (include/solvent/design.h)
_STOPPED = {0: "", 1: "time budget", 2: "cancelled"}


class _Spec:
    """A parsed design spec; its memory is released when collected."""

    def __init__(self, ctx, spec, base_dir):
        self.ctx = ctx
        out = ffi.new("sv_design_spec **")
        if isinstance(spec, dict):
            self.name = "<dict>"
            text = json.dumps(spec, allow_nan=False).encode()
            folder = os.fsencode(base_dir) if base_dir is not None else ffi.NULL
            check(lib.sv_design_spec_parse(self.ctx, text, len(text), self.name.encode(), folder, out))
        else:
            self.name = os.fspath(spec)
            check(lib.sv_design_spec_read(self.ctx, self.name.encode(), out))

        def destroy(handle, ctx=self.ctx):  # the spec refers to its context: hold it until the spec is gone
            lib.sv_design_spec_destroy(handle)

        self.handle = ffi.gc(out[0], destroy)
        grid = ffi.new("sv_em_grid *")
        lib.sv_em_project_grid(lib.sv_design_spec_board(self.handle), grid)
        self.nx, self.ny = grid.nx, grid.ny

    def project_json(self, map_top_first):
        """The board with this map (ny × nx, row 0 the top) as a project file's text."""
        bottom_first = np.ascontiguousarray(map_top_first[::-1], dtype=np.uint8)
        out = ffi.new("char **")
        check(lib.sv_design_spec_project_json(self.handle, ffi.from_buffer("unsigned char[]", bottom_first), out))
        try:
            return ffi.string(out[0]).decode()
        finally:
            lib.free(out[0])


@dataclass
class DesignResult:
    """The best map a design search found.

    map: (ny, nx) uint8, 1 = metal, row 0 the top row (as map.csv);
    history: (n, 2), the cost after each kept flip: (trials so far, cost in dB);
    cost, start_cost: the best and the start map's cost in dB (0: every mask met);
    f: the design frequencies (Hz); s: (nf, p, p) S of the best map there;
    stopped: "" (the passes ran out), "time budget" or "cancelled";
    report: every field of the library's report (passes, tried, accepted,
    violations, refreshes, rebuilds, max_drift, seconds, unknowns, ...)."""
    map: np.ndarray
    history: np.ndarray
    cost: float
    start_cost: float
    f: np.ndarray
    s: np.ndarray
    port_names: list
    stopped: str
    report: dict
    _spec: _Spec = field(repr=False, default=None)

    def project(self, map=None):
        """The board with the best map (or `map`, same shape and layout) as
        a Project, ready for solvent.sweep."""
        return Project.from_json(self.project_json(map), "design.json")

    def project_json(self, map=None):
        """That project as a project file's text (design.json)."""
        return self._spec.project_json(self._checked_map(map))

    def write(self, folder):
        """map.csv, design.json and history.csv into folder (created if
        missing), as `solvent design --no-sweep` writes them; each file
        appears whole or not at all."""
        folder = os.fspath(folder)
        os.makedirs(folder, exist_ok=True)
        rows = "".join(",".join(str(int(v)) for v in row) + "\n" for row in self.map)
        history = "trials,cost_db\n" + "".join(f"{t:.0f},{c:.9g}\n" for t, c in self.history)
        for name, text in (("map.csv", rows), ("design.json", self.project_json()), ("history.csv", history)):
            _write_whole(os.path.join(folder, name), text)

    def _checked_map(self, map):
        if map is None:
            return self.map
        map = np.asarray(map)
        if map.shape != self.map.shape:
            raise ArgumentError(lib.SV_ERR_ARG, f"map: expected shape {self.map.shape} (ny, nx), got {map.shape}")
        if not np.all((map == 0) | (map == 1)):
            raise ArgumentError(lib.SV_ERR_ARG, "map: expected only 0 (no metal) and 1 (metal)")
        return map


def design(spec, threads=None, progress=False, base_dir=None):
    """Search a design spec (docs/design.md: a path to its JSON, or the dict
    that JSON loads to) for the pixel map whose |S| best meets its masks,
    as `solvent design` does. Returns a DesignResult.

    threads: threads of the search (default: the spec's "threads", else all
       cores); progress: True for a bar on stderr, or a callable(phase,
       fraction); base_dir: the folder a dict spec's paths (its board,
       CSV maps) are relative to (default: the working folder).

    Ctrl-C stops the search within a trial and raises KeyboardInterrupt;
    its `result` attribute is then the DesignResult of the best map so far
    (None when the search had not begun)."""
    ctx = new_context(threads or 0)  # the spec's and the search's: held by the result through its spec
    spec = _Spec(ctx, spec, base_dir)
    check(lib.sv_design_spec_set_threads(spec.handle, threads or 0))
    out = ffi.new("sv_design_result **")
    try:
        run_stoppable(ctx, lambda: lib.sv_design_run(ctx, spec.handle, out), progress)
        return _result(spec, out[0])
    except KeyboardInterrupt as stop:
        stop.result = _result(spec, out[0]) if out[0] != ffi.NULL else None
        raise
    finally:
        if out[0] != ffi.NULL:
            lib.sv_design_result_destroy(out[0])


def _result(spec, res):
    report = ffi.new("sv_design_report *")
    lib.sv_design_result_report(res, report)
    cells = spec.nx * spec.ny
    bottom_first = np.frombuffer(ffi.buffer(lib.sv_design_result_map(res), cells), dtype=np.uint8)
    n = ffi.new("int *")
    history = lib.sv_design_result_history(res, n)
    nf, p = ffi.new("int *"), ffi.new("int *")
    s = lib.sv_design_result_s(res, nf, p)
    freq = lib.sv_design_spec_frequencies(spec.handle, ffi.new("int *"))
    board = lib.sv_design_spec_board(spec.handle)
    return DesignResult(
        map=(bottom_first.reshape(spec.ny, spec.nx)[::-1] != 0).astype(np.uint8),
        history=(np.frombuffer(ffi.buffer(history, 16 * n[0]), dtype=np.float64).reshape(n[0], 2).copy()
                 if n[0] else np.zeros((0, 2))),
        cost=report.cost,
        start_cost=report.start_cost,
        f=np.frombuffer(ffi.buffer(freq, 8 * nf[0]), dtype=np.float64).copy(),
        s=_complex_blocks(s, nf[0], p[0]),
        port_names=[ffi.string(lib.sv_em_project_port_name(board, k)).decode()
                    for k in range(lib.sv_em_project_ports(board))],
        stopped=_STOPPED.get(report.stopped, str(report.stopped)),
        report=_as_python(report[0]),
        _spec=spec,
    )


def _write_whole(path, text):
    """Write through a temporary file in the same folder, then rename."""
    fd, tmp = tempfile.mkstemp(dir=os.path.dirname(path) or ".", prefix="." + os.path.basename(path))
    try:
        with os.fdopen(fd, "w") as f:
            f.write(text)
        os.chmod(tmp, 0o644)  # mkstemp's 0600 is for the temporary file, not the result
        os.replace(tmp, path)
    except BaseException:
        os.unlink(tmp)
        raise
