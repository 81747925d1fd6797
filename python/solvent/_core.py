"""What every binding shares: errors, contexts, and running a library call
on a worker thread that a Ctrl-C stops through the library's cancel."""
import threading

from ._native import ffi, lib
from .progress import ProgressBar


class SolventError(Exception):
    """A Solvent call failed; the message is the library's."""

    def __init__(self, status, message):
        self.status = status
        self.status_text = ffi.string(lib.sv_status_string(status)).decode()
        super().__init__(message or self.status_text)


class ArgumentError(SolventError, ValueError):
    """A bad argument or band (SV_ERR_ARG)."""


class ParseError(SolventError, ValueError):
    """A malformed project or text (SV_ERR_PARSE)."""


class BudgetError(SolventError, MemoryError):
    """The job would not fit its memory limit (SV_ERR_BUDGET, SV_ERR_NOMEM)."""


def _error_class(status):
    return {lib.SV_ERR_ARG: ArgumentError, lib.SV_ERR_PARSE: ParseError,
            lib.SV_ERR_BUDGET: BudgetError, lib.SV_ERR_NOMEM: BudgetError}.get(status, SolventError)


def last_error_message():
    """The calling thread's last library message (read on the thread that failed)."""
    return ffi.string(lib.sv_last_error()).decode("utf-8", "replace")


def check(status):
    """Raise the library's error for a non-zero status of a call made on this thread."""
    if status != lib.SV_OK:
        raise _error_class(status)(status, last_error_message())


def raise_status(status, message):
    raise _error_class(status)(status, message)


def new_context(threads=0):
    """A library context released when collected."""
    out = ffi.new("sv_ctx **")
    check(lib.sv_ctx_create(out))
    ctx = ffi.gc(out[0], lib.sv_ctx_destroy)
    if threads:
        check(lib.sv_ctx_set_threads(ctx, int(threads)))
    return ctx


# How often the waiting thread looks at the worker and the progress, s.
_POLL_SECONDS = 0.05


def run_stoppable(ctx, call, progress=None):
    """Run call() (a library call on ctx returning a status) on a worker
    thread with the interpreter released, showing its progress; a Ctrl-C
    asks the library to stop, waits for it to let go of everything, and
    raises KeyboardInterrupt. Raises the library's error on failure."""
    watch = lib.sv_py_watch_create()
    if watch == ffi.NULL:
        raise MemoryError("solvent: no memory for a progress watch")
    lib.sv_py_watch_attach(ctx, watch)
    outcome = {}
    done = threading.Event()

    def work():
        try:
            status = call()
            outcome["status"] = status
            outcome["message"] = last_error_message() if status else ""
        finally:
            done.set()

    bar = ProgressBar.from_argument(progress)
    phase = ffi.new("char[96]")
    worker = threading.Thread(target=work, name="solvent", daemon=True)
    try:
        worker.start()
        while not done.wait(_POLL_SECONDS):
            _show(bar, watch, phase)
        _show(bar, watch, phase)  # the last report (1 when the call finished)
    except BaseException:
        # Ctrl-C, or an exception from a progress callable: stop the library
        # and let it release everything before the exception goes on.
        lib.sv_py_watch_stop(watch)
        raise
    finally:
        if worker.ident is not None:
            _wait_out(done, worker)
        lib.sv_py_watch_detach(ctx)
        lib.sv_py_watch_destroy(watch)
        if bar:
            bar.close()
    if outcome["status"] != lib.SV_OK:
        raise_status(outcome["status"], outcome["message"])


def _show(bar, watch, phase):
    if bar:
        fraction = lib.sv_py_watch_read(watch, phase, len(phase))
        if fraction >= 0:
            bar.update(ffi.string(phase).decode("utf-8", "replace"), fraction)


def _wait_out(done, worker):
    """Wait for the worker to finish, whatever Ctrl-C the user presses
    meanwhile (the library frees what it holds before it returns). On the
    event, not Thread.join: a join that a KeyboardInterrupt interrupts can
    report a running thread as finished (CPython 3.11)."""
    while True:
        try:
            while not done.is_set():
                done.wait(_POLL_SECONDS)
            worker.join()  # it has only to return now
            return
        except KeyboardInterrupt:
            continue
