"""A folder that holds one long job's results as they finish, so that a
job stopped at any point (Ctrl-C, a crashed client, a batch system's time
limit) resumes with only what is missing (solvent.distributed and
solvent.batch's store=)."""
import hashlib
import json
import os
import pathlib
import re
import tempfile

import numpy as np

from ._core import ArgumentError
from ._native import lib


def _arg_error(message):
    return ArgumentError(lib.SV_ERR_ARG, message)


def digest(*parts):
    """A content hash of JSON-able values and arrays: a job's identity in
    its manifest, the same in every process."""
    h = hashlib.sha256()
    for part in parts:
        if isinstance(part, np.ndarray):
            h.update(str((part.dtype.str, part.shape)).encode())
            h.update(np.ascontiguousarray(part).tobytes())
        else:
            h.update(json.dumps(part, sort_keys=True, default=_jsonable).encode())
        h.update(b"\0")
    return h.hexdigest()[:24]


def _jsonable(value):
    if isinstance(value, np.ndarray):  # inside a list or dict: by its bytes too (a list of numbers is slow)
        return {"ndarray": digest(value)}
    if isinstance(value, (np.integer, np.floating)):
        return value.item()
    if isinstance(value, os.PathLike):
        return os.fspath(value)
    raise TypeError(f"cannot describe {type(value).__name__} in a job's manifest")


class Store:
    """A folder of one job's results: manifest.json (what the job is) and
    one part-FIRST-LAST.npz per finished task (items FIRST..LAST), each
    written whole under a temporary name and renamed into place. The part
    files' names are the index of what is done."""

    PART = re.compile(r"part-(\d{9})-(\d{9})\.npz")

    def __init__(self, path, manifest=None):
        """Open path; with a manifest, make the folder (or check that it
        holds the same job: another one is refused, naming what differs)."""
        self.path = pathlib.Path(path)
        if manifest is None:
            return
        self.path.mkdir(parents=True, exist_ok=True)
        existing = self.manifest()
        if existing is None:
            self._write_atomic("manifest.json", lambda f: f.write(json.dumps(manifest, indent=1).encode()))
        elif existing != manifest:
            differ = sorted(k for k in set(existing) | set(manifest) if existing.get(k) != manifest.get(k))
            raise _arg_error(f"store {self.path}: holds another job (its {', '.join(differ)} differ); give "
                             "a new folder, or the same inputs and options to resume")

    def manifest(self):
        path = self.path / "manifest.json"
        return json.loads(path.read_text()) if path.exists() else None

    def parts(self):
        """(first, last, path) of every finished part, in order."""
        found = []
        for entry in os.scandir(self.path):
            match = self.PART.fullmatch(entry.name)
            if match:
                found.append((int(match.group(1)), int(match.group(2)), pathlib.Path(entry.path)))
        return sorted(found)

    def done(self, n):
        mask = np.zeros(n, dtype=bool)
        for first, last, _ in self.parts():
            mask[first:last + 1] = True
        return mask

    def write(self, first, last, arrays):
        self._write_atomic(f"part-{first:09d}-{last:09d}.npz", lambda f: np.savez(f, **arrays))

    def _write_atomic(self, name, write):
        fd, tmp = tempfile.mkstemp(dir=self.path, prefix=f".{name}.", suffix=".tmp")
        try:
            with os.fdopen(fd, "wb") as f:
                write(f)
                f.flush()
                os.fsync(f.fileno())
            os.replace(tmp, self.path / name)
        except BaseException:
            os.unlink(tmp)
            raise


def open_store(path, kind, n, job, **extra):
    """The Store of a job of kind over n items (None when path is None)."""
    return None if path is None else Store(path, {"kind": kind, "items": n, "job": job, **extra})


def missing_runs(done, size):
    """(first, last) of tasks of at most size items covering every item not done."""
    runs, k, n = [], 0, len(done)
    while k < n:
        if done[k]:
            k += 1
            continue
        first = k
        while k < n and not done[k] and k - first < size:
            k += 1
        runs.append((first, k - 1))
    return runs
