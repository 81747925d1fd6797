"""Planar EM: projects and their sweeps (the library's planar job)."""
import json
import os
import re
from dataclasses import dataclass, field

import numpy as np

from ._core import ArgumentError, check, new_context, run_stoppable
from ._native import ffi, lib

_PRECISIONS = {"mixed": lib.SV_SWEEP_MIXED, "double": lib.SV_SWEEP_DOUBLE, "lapack": lib.SV_SWEEP_LAPACK}
_DEVICES = {"auto": lib.SV_PLANAR_DEVICE_AUTO, "cpu": lib.SV_PLANAR_DEVICE_CPU, "gpu": lib.SV_PLANAR_DEVICE_GPU}
_OUTPUTS = {"y": lib.SV_PLANAR_OUTPUT_Y, "z": lib.SV_PLANAR_OUTPUT_Z, "y_raw": lib.SV_PLANAR_OUTPUT_Y_RAW}
_TS_FORMATS = {"ri": lib.SV_EM_TS_RI, "ma": lib.SV_EM_TS_MA, "db": lib.SV_EM_TS_DB}
_BYTE_UNITS = {"": 1, "K": 1 << 10, "M": 1 << 20, "G": 1 << 30, "T": 1 << 40}


class Project:
    """A planar project: grid, stack-up, metal, ports, band and effects, as
    a project file holds them (docs/project-files.md). Build one with
    from_file, from_dict, from_json or from_pixels."""

    def __init__(self, _ctx, _handle, name):
        self._ctx = _ctx  # the project's memory belongs to this context: it lives as long
        self._handle = _handle
        self.name = name

    @classmethod
    def _parse(cls, reader, name):
        ctx = new_context()
        out = ffi.new("sv_em_project **")
        check(reader(ctx, out))

        def destroy(handle, ctx=ctx):  # holds ctx until the project is gone
            lib.sv_em_project_destroy(handle)

        return cls(ctx, ffi.gc(out[0], destroy), name)

    @classmethod
    def from_file(cls, path):
        """A project file (JSON; a pixels CSV it names is read relative to it)."""
        path = os.fspath(path)
        return cls._parse(lambda ctx, out: lib.sv_em_project_read(ctx, path.encode(), out), path)

    @classmethod
    def from_json(cls, text, name="<json>"):
        """A project file's text."""
        data = text.encode() if isinstance(text, str) else bytes(text)
        return cls._parse(lambda ctx, out: lib.sv_em_project_parse(ctx, data, len(data), name.encode(), out),
                          name)

    @classmethod
    def from_dict(cls, project, name="<dict>"):
        """A project as the dict a project file's JSON would load to."""
        return cls.from_json(json.dumps(project, allow_nan=False), name)

    @classmethod
    def from_pixels(cls, pixels, board, name="<pixels>"):
        """A 0/1 pixel array (ny, nx) — row 0 the top row, as in a CSV map or
        the file's "pixels" strings — on a board: a project dict without
        its metal (units, substrate, metal, grid's dx and dy, ports, and
        optionally sweep and effects). The grid's nx and ny come from the
        array."""
        pixels = np.asarray(pixels)
        if pixels.ndim != 2 or pixels.size == 0:
            raise ArgumentError(lib.SV_ERR_ARG, f"pixels: expected a non-empty 2-D array, got shape {pixels.shape}")
        if not np.all((pixels == 0) | (pixels == 1)):
            raise ArgumentError(lib.SV_ERR_ARG, "pixels: expected only 0 (no metal) and 1 (metal)")
        project = dict(board)
        grid = dict(project.get("grid", {}))
        grid["ny"], grid["nx"] = (int(n) for n in pixels.shape)
        project["grid"] = grid
        project["pixels"] = ["".join("#" if v else "." for v in row) for row in pixels.tolist()]
        return cls.from_dict(project, name)

    @property
    def port_names(self):
        return [ffi.string(lib.sv_em_project_port_name(self._handle, k)).decode()
                for k in range(lib.sv_em_project_ports(self._handle))]

    def sweep(self, f=None, *, band=None, points=None, start_dc=False, tolerance=None, outputs=(),
              exact_all=False, precision="mixed", max_exact=0, subdivide=0, device="auto", threads=0,
              memory_limit=None, allow_beyond_validity=False, progress=False):
        """S-parameters of the project (see solvent.sweep)."""
        return sweep(self, f, band=band, points=points, start_dc=start_dc, tolerance=tolerance,
                     outputs=outputs, exact_all=exact_all, precision=precision, max_exact=max_exact,
                     subdivide=subdivide, device=device, threads=threads, memory_limit=memory_limit,
                     allow_beyond_validity=allow_beyond_validity, progress=progress)


@dataclass
class SweepResult:
    """A sweep's network: f (nf,) in Hz; s (nf, p, p) with s[k, i, j] = S_ij
    at f[k] (y, z, y_raw likewise when asked for, else None); port_names;
    z0 (p,) in Ω; exact (nf,) True where solved exactly (at 0 Hz: by the
    DC limit); fallback (nf,) True where a mixed-precision solve fell back
    to double; report: what the run did (the library's report as a dict)."""
    f: np.ndarray
    s: np.ndarray
    port_names: list
    z0: np.ndarray
    exact: np.ndarray
    fallback: np.ndarray
    report: dict
    y: np.ndarray = None
    z: np.ndarray = None
    y_raw: np.ndarray = None
    name: str = field(default="solvent")

    def to_network(self, name=None):
        """The S-parameters as a scikit-rf Network (needs scikit-rf)."""
        import skrf
        frequency = skrf.Frequency.from_f(self.f, unit="Hz")
        return skrf.Network(frequency=frequency, s=self.s, z0=self.z0, name=name or self.name)

    def write_touchstone(self, path, *, version=None, format="ri", unit="GHz", comment=None):
        """A Touchstone file of S, as `solvent sweep` writes it (version 1
        when every port has the same z0, else 2 unless given)."""
        path = os.fspath(path)
        p = self.s.shape[1]
        if format not in _TS_FORMATS:
            raise ArgumentError(lib.SV_ERR_ARG, f"format {format!r}: expected one of {sorted(_TS_FORMATS)}")
        keep = []  # the C strings live until the call returns
        opts = ffi.new("sv_em_ts_options *")
        lib.sv_em_ts_options_default(opts)
        opts.version = lib.SV_EM_TS_VERSION_FOR_Z0 if version is None else int(version)
        opts.format = _TS_FORMATS[format]
        opts.unit = _c_string(unit, keep)
        opts.comment = _c_string(comment, keep) if comment else ffi.NULL
        column_major = np.ascontiguousarray(self.s.transpose(0, 2, 1), dtype=np.complex128)
        freq = np.ascontiguousarray(self.f, dtype=np.float64)
        z0 = np.ascontiguousarray(self.z0, dtype=np.float64)
        check(lib.sv_em_touchstone_write(path.encode(), opts, p, len(freq), ffi.from_buffer("double[]", freq),
                                         ffi.from_buffer("double _Complex[]", column_major),
                                         ffi.from_buffer("double[]", z0)))


def sweep(project, f=None, *, band=None, points=None, start_dc=False, tolerance=None, outputs=(),
          exact_all=False, precision="mixed", max_exact=0, subdivide=0, device="auto", threads=0,
          memory_limit=None, allow_beyond_validity=False, progress=False):
    """S-parameters of a project (a Project, a project file's path, or a
    project dict), as `solvent sweep` computes them: calibrated ports,
    the adaptive sweep, the DC point when the band starts at 0.

    f: frequencies in Hz (ascending; 0 allowed first), each solved exactly,
       instead of a band;
    band: (start, stop) in Hz over the project's sweep section; points,
       tolerance: the band's (default: the project's); start_dc: the band
       starts at 0 Hz;
    outputs: any of "y", "z", "y_raw" besides S; exact_all: every band
       frequency solved exactly; precision: "mixed" (default), "double",
       "lapack"; max_exact: cap on the sweep's exact solves (0: 30);
    subdivide: mesh every cell k × k; device: "auto", "cpu", "gpu";
    threads: 0 = all cores; memory_limit: bytes (or "512M", "4G"), default
       the machine's available memory; allow_beyond_validity: solve
       frequencies above the model's limit (refused by default: S may come
       out non-passive there); progress: True for a bar on
       stderr, or a callable(phase, fraction).

    Ctrl-C stops the run within a second and raises KeyboardInterrupt."""
    if not isinstance(project, Project):
        project = Project.from_dict(project) if isinstance(project, dict) else Project.from_file(project)
    keep = []
    opts = _options(f, band, points, start_dc, tolerance, outputs, exact_all, precision, max_exact,
                    subdivide, device, threads, memory_limit, keep)
    opts.allow_beyond_validity = int(bool(allow_beyond_validity))
    ctx = new_context(threads)
    job = ffi.new("sv_planar_job **")
    try:
        run_stoppable(ctx, lambda: lib.sv_planar_job_create(ctx, project._handle, opts, job), progress)
        run_stoppable(ctx, lambda: lib.sv_planar_job_run(job[0]), progress)
        return _result(job[0], project.name)
    finally:
        if job[0] != ffi.NULL:
            lib.sv_planar_job_destroy(job[0])


def _options(f, band, points, start_dc, tolerance, outputs, exact_all, precision, max_exact, subdivide,
             device, threads, memory_limit, keep):
    opts = ffi.new("sv_planar_options *")
    lib.sv_planar_options_default(opts)
    if f is not None:
        if band is not None or points is not None or start_dc:
            raise ArgumentError(lib.SV_ERR_ARG, "give either f (a list of frequencies) or a band, not both")
        freq = np.ascontiguousarray(np.atleast_1d(np.asarray(f, dtype=np.float64)))
        if freq.ndim != 1 or freq.size == 0:
            raise ArgumentError(lib.SV_ERR_ARG, "f: expected a non-empty list of frequencies in Hz")
        keep.append(freq)
        opts.freq_hz = ffi.from_buffer("double[]", freq)
        opts.nfreq = freq.size
    if band is not None:
        start, stop = band
        opts.band.start_hz, opts.band.stop_hz = float(start), float(stop)
    if points is not None:
        opts.band.points = int(points)
    if tolerance is not None:
        opts.band.tolerance = float(tolerance)
    opts.start_dc = int(bool(start_dc))
    opts.exact_all = int(bool(exact_all))
    opts.precision = _choice("precision", precision, _PRECISIONS)
    opts.device = _choice("device", device, _DEVICES)
    opts.max_exact = int(max_exact)
    opts.subdivide = int(subdivide)
    opts.threads = int(threads)
    if memory_limit is not None:
        opts.memory_limit = _bytes(memory_limit)
        opts.memory_limit_name = _c_string("memory_limit", keep)
    for name in ([outputs] if isinstance(outputs, str) else outputs):
        opts.outputs |= _choice("outputs", name, _OUTPUTS)
    return opts


def _choice(what, value, table):
    if value not in table:
        raise ArgumentError(lib.SV_ERR_ARG, f"{what} {value!r}: expected one of {', '.join(table)}")
    return table[value]


def _bytes(limit):
    if isinstance(limit, (int, np.integer)) and limit > 0:
        return int(limit)
    match = re.fullmatch(r"\s*([0-9]+(?:\.[0-9]*)?)\s*([KMGT]?)i?B?\s*", str(limit), re.IGNORECASE)
    if not match or float(match.group(1)) <= 0:
        raise ArgumentError(lib.SV_ERR_ARG,
                            f"memory_limit {limit!r}: expected a positive number of bytes, or one with K, M, G or T")
    return int(float(match.group(1)) * _BYTE_UNITS[match.group(2).upper()])


def _c_string(text, keep):
    c = ffi.new("char[]", str(text).encode())
    keep.append(c)
    return c


def _complex_blocks(pointer, nf, p):
    """nf column-major p × p blocks as an (nf, p, p) array [k, row, column]."""
    if pointer == ffi.NULL:
        return None
    flat = np.frombuffer(ffi.buffer(pointer, 16 * nf * p * p), dtype=np.complex128)
    return flat.reshape(nf, p, p).transpose(0, 2, 1).copy()


def _result(job, name):
    net = lib.sv_planar_job_network(job)
    nf, p = net.nf, net.p
    report = ffi.new("sv_planar_report *")
    check(lib.sv_planar_job_report(job, report))
    return SweepResult(
        f=np.frombuffer(ffi.buffer(net.freq_hz, 8 * nf), dtype=np.float64).copy(),
        s=_complex_blocks(net.s, nf, p),
        y=_complex_blocks(net.y, nf, p),
        z=_complex_blocks(net.z, nf, p),
        y_raw=_complex_blocks(net.y_raw, nf, p),
        port_names=[ffi.string(net.port_names[k]).decode() for k in range(p)],
        z0=np.frombuffer(ffi.buffer(net.z0, 8 * p), dtype=np.float64).copy(),
        exact=np.frombuffer(ffi.buffer(net.exact, nf), dtype=np.uint8).astype(bool),
        fallback=np.frombuffer(ffi.buffer(net.fallback, nf), dtype=np.uint8).astype(bool),
        report=_as_python(report[0]),
        name=os.path.splitext(os.path.basename(name))[0] if name and not name.startswith("<") else "solvent",
    )


def _as_python(value):
    """A cdata struct as nested dicts of plain Python values."""
    if not isinstance(value, ffi.CData):
        return value
    kind = ffi.typeof(value)
    if kind.kind == "struct":
        return {name: _as_python(getattr(value, name)) for name, _ in kind.fields}
    if kind.kind == "array" and kind.item.cname == "char":
        return ffi.string(value).decode("utf-8", "replace")
    return value
