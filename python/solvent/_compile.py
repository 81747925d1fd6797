"""C source text to a loaded shared object, compiled once per source.

The library's own runtime compiler (sparse.h's sv_sparse_lu_compile) is
specific to the LU kernels it generates, so user source is compiled here,
the same way and with the same flags: the system C compiler, `-O2
-march=native -fPIC -shared -ffp-contract=off -fno-tree-slp-vectorize` (no
fused multiply-adds, so that the compiled f rounds exactly as its source
reads — and as a numpy version of it does; GCC's SLP vectoriser fuses a
complex × complex product into one vfmaddsub even under
-ffp-contract=off, hence the second flag). Objects are cached under a folder named by a hash of
the source, the compiler's identity and the flags, so a second run (or a
second process) loads the object without compiling.
"""
import ctypes
import functools
import hashlib
import os
import pathlib
import shutil
import subprocess
import tempfile

from ._core import ArgumentError
from ._native import lib

FLAGS = ("-O2", "-march=native", "-fPIC", "-shared", "-ffp-contract=off", "-fno-tree-slp-vectorize",
         "-std=gnu17", "-Werror=implicit-function-declaration")

# Put before the user's text; `#line 1` makes the compiler number the
# user's lines from 1 in its messages.
PRELUDE = "#include <math.h>\n#include <stddef.h>\n"


def cache_dir():
    """$SOLVENT_CACHE/ode, else $XDG_CACHE_HOME/solvent/ode, else ~/.cache/solvent/ode."""
    root = os.environ.get("SOLVENT_CACHE")
    if root:
        return pathlib.Path(root) / "ode"
    xdg = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return pathlib.Path(xdg) / "solvent" / "ode"


def compiler():
    """The C compiler: $CC, else cc on PATH."""
    cc = os.environ.get("CC") or shutil.which("cc") or "/usr/bin/cc"
    return cc


@functools.lru_cache(maxsize=8)
def _compiler_identity(cc):
    """The compiler's version text: a compiler upgrade must not reuse old objects."""
    try:
        done = subprocess.run([cc, "--version"], capture_output=True, text=True, timeout=60)
    except OSError as exc:
        raise ArgumentError(lib.SV_ERR_ARG, f"rhs: cannot run the C compiler '{cc}': {exc}") from None
    return done.stdout


def _key(source, name, cc):
    digest = hashlib.sha256()
    for part in (PRELUDE, name, source, cc, _compiler_identity(cc), " ".join(FLAGS)):
        digest.update(part.encode())
        digest.update(b"\0")
    return digest.hexdigest()[:32]


# Objects loaded in this process, by path: a source solved again is neither
# compiled nor loaded again (the loader would hand back the same handle anyway).
_loaded = {}


def compile_source(source, name="rhs.c"):
    """A ctypes.CDLL of `source` compiled as a shared object (cached).
    A compile error raises ArgumentError with the compiler's messages,
    which name the user's lines as name:LINE."""
    cc = compiler()
    folder = cache_dir()
    obj = folder / f"{_key(source, name, cc)}.so"
    if obj in _loaded:
        return _loaded[obj]
    if not obj.exists():
        folder.mkdir(parents=True, exist_ok=True)
        _build(source, name, cc, folder, obj)
    library = _loaded[obj] = ctypes.CDLL(str(obj), mode=ctypes.RTLD_LOCAL)
    return library


def symbols(library, names):
    """The addresses of the functions of `names` that a compiled library
    defines (not static), by name; the ones it lacks are left out."""
    found = {}
    for name in names:
        try:
            found[name] = ctypes.cast(getattr(library, name), ctypes.c_void_p).value
        except AttributeError:
            continue
    return found


def _build(source, name, cc, folder, obj):
    """Compile into a private temporary file, then rename it into place:
    two processes filling the cache never load a half-written object."""
    with tempfile.TemporaryDirectory(dir=folder, prefix=".build-") as tmp:
        src = pathlib.Path(tmp) / "source.c"
        src.write_text(f'{PRELUDE}#line 1 "{name}"\n{source}\n')
        out = pathlib.Path(tmp) / "object.so"
        try:
            done = subprocess.run([cc, *FLAGS, "-o", str(out), str(src), "-lm"], capture_output=True,
                                  text=True, timeout=300)
        except OSError as exc:
            raise ArgumentError(lib.SV_ERR_ARG, f"rhs: cannot run the C compiler '{cc}': {exc}") from None
        if done.returncode != 0:
            messages = (done.stderr or done.stdout).strip()
            raise ArgumentError(lib.SV_ERR_ARG, f"rhs: the C source does not compile ({cc}):\n{messages}")
        os.replace(out, obj)
