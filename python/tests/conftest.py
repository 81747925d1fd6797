"""Where the tests find the repository's tool and examples."""
import _thread
import os
import pathlib
import threading
import time
import tracemalloc

import pytest

REPO = pathlib.Path(__file__).resolve().parents[2]


@pytest.fixture(scope="session")
def repo():
    return REPO


@pytest.fixture(scope="session")
def tool():
    """The `solvent` program of the build the package was made against."""
    build = pathlib.Path(os.environ.get("SOLVENT_BUILD_DIR", REPO / "build"))
    path = build / "solvent"
    if not path.exists():
        pytest.fail(f"{path} not found: build Solvent first (make build)")
    return path


# A two-port on a 6 x 4 grid of 0.5 mm cells: a 3 mm strip, 1 mm wide,
# along the middle rows, raw edge ports at both ends, no radiation — small
# enough for a thousand runs.
STRIP = {
    "units": "mm",
    "effects": {"radiation": False},
    "substrate": {"thickness": 0.8, "eps_r": 4.4, "tan_delta": 0.02},
    "metal": {"conductivity": 5.8e7, "thickness": 0.035},
    "grid": {"dx": 0.5, "dy": 0.5, "nx": 6, "ny": 4},
    "pixels": ["......", "######", "######", "......"],
    "ports": [{"name": "in", "side": "left", "x": 0, "y": [0.5, 1.5], "calibration": "none"},
              {"name": "out", "side": "right", "x": 3, "y": [0.5, 1.5], "calibration": "none"}],
}


@pytest.fixture
def strip():
    import copy
    return copy.deepcopy(STRIP)


@pytest.fixture
def tiny(strip):
    """The strip cut to one row of four cells: the cheapest two-port."""
    strip["grid"].update(nx=4, ny=1)
    strip["pixels"] = ["####"]
    for port in strip["ports"]:
        port["y"] = [0, 0.5]
    strip["ports"][1]["x"] = 2
    return strip


def ctrl_c_after(delay, call):
    """Presses Ctrl-C (interrupts the main thread) delay seconds into
    call(), which must raise KeyboardInterrupt; returns the seconds from the
    press to the raise."""
    asked = []

    def press_ctrl_c():
        asked.append(time.monotonic())
        _thread.interrupt_main()

    timer = threading.Timer(delay, press_ctrl_c)
    timer.start()
    with pytest.raises(KeyboardInterrupt):
        call()
    stopped = time.monotonic()
    timer.join()
    assert asked
    return stopped - asked[0]


def capture_contexts(monkeypatch, module):
    """Every library context `module` makes from now on, in a list (for a
    few calls: the list keeps them alive)."""
    contexts = []
    make = module.new_context

    def capture(threads=0):
        ctx = make(threads)
        contexts.append(ctx)
        return ctx

    monkeypatch.setattr(module, "new_context", capture)
    return contexts


def check_contexts(monkeypatch, module):
    """A tally of the contexts `module` makes from now on: each is checked
    for memory it still holds when the next one is made (so that none is
    kept alive). Returns {"checked": …, "holding": …}."""
    make = module.new_context
    tally = {"last": None, "checked": 0, "holding": 0}

    def checking(threads=0):
        from solvent._native import lib
        if tally["last"] is not None:
            tally["checked"] += 1
            tally["holding"] += lib.sv_ctx_memory_current(tally["last"]) != 0
        tally["last"] = make(threads)
        return tally["last"]

    monkeypatch.setattr(module, "new_context", checking)
    return tally


def heap_growth(round_of_calls):
    """Bytes Python's heap grows in the third of three equal rounds over
    the second (the first fills caches)."""
    round_of_calls()
    tracemalloc.start()
    round_of_calls()
    first = tracemalloc.get_traced_memory()[0]
    round_of_calls()
    second = tracemalloc.get_traced_memory()[0]
    tracemalloc.stop()
    return second - first
