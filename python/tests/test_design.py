"""The design binding against independent references: the `solvent design`
tool's own files for the same spec, the masks' cost recomputed in numpy
from a fresh planar sweep of the designed board, and the library's memory
counters."""
import copy
import gc
import json
import subprocess

import numpy as np
import pytest

import solvent
from conftest import capture_contexts
from solvent import design_search
from solvent._native import lib


@pytest.fixture(scope="module")
def lowpass_spec(repo):
    return repo / "examples/design/lowpass.json"


@pytest.fixture(scope="module")
def lowpass(lowpass_spec):
    """The example's design through Python (about 2 s)."""
    return solvent.design(lowpass_spec)


def test_design_equals_the_tool(lowpass, lowpass_spec, tool, tmp_path):
    """The same spec through `solvent design` and through Python: the same
    map.csv, design.json and history.csv, byte for byte (the search is
    seeded, so both runs take the same path)."""
    subprocess.run([tool, "design", lowpass_spec, "-o", tmp_path / "tool", "--no-sweep", "--quiet"], check=True,
                   capture_output=True)
    from_tool = np.loadtxt(tmp_path / "tool/map.csv", delimiter=",", dtype=np.uint8, ndmin=2)
    assert lowpass.map.dtype == np.uint8 and lowpass.map.shape == from_tool.shape == (11, 35)
    assert np.array_equal(lowpass.map, from_tool)
    lowpass.write(tmp_path / "py")
    for name in ("map.csv", "design.json", "history.csv"):
        assert (tmp_path / "py" / name).read_bytes() == (tmp_path / "tool" / name).read_bytes(), name


def test_history_falls_to_the_cost(lowpass):
    h = lowpass.history
    assert h.ndim == 2 and h.shape[1] == 2 and len(h) == lowpass.report["accepted"] + 1  # the start's entry too
    assert tuple(h[0]) == (0, lowpass.start_cost)
    assert np.all(np.diff(h[:, 0]) > 0) and h[-1, 0] <= lowpass.report["tried"]
    # A kept flip lowers the cost, or removes a constraint violation (the
    # random start has some) at a cost that may rise: most lower it.
    assert np.sum(np.diff(h[:, 1]) < 0) >= (len(h) - 1) / 2
    assert h[-1, 1] == pytest.approx(lowpass.cost, rel=1e-9) and lowpass.cost < lowpass.start_cost / 2
    assert lowpass.stopped == "" and lowpass.report["violations"] == 0


def _mask_cost(spec, f, s):
    """The cost as docs/design.md defines it: per mask, the RMS over the
    design frequencies in its band of the dB violation, summed."""
    unit = {"Hz": 1, "kHz": 1e3, "MHz": 1e6, "GHz": 1e9}[spec["unit"]]
    total = 0.0
    for m in spec["masks"]:
        out, into = int(m["s"][1]) - 1, int(m["s"][2]) - 1
        inside = (f >= m["start"] * unit * (1 - 1e-12)) & (f <= m["stop"] * unit * (1 + 1e-12))
        level = 20 * np.log10(np.abs(s[inside, out, into]))
        excess = level - m["bound_db"] if m["type"] == "max" else m["bound_db"] - level
        total += m.get("weight", 1) * np.sqrt(np.mean(np.maximum(excess, 0) ** 2))
    return total


def test_cost_is_the_masks_on_a_fresh_sweep(lowpass, lowpass_spec):
    """The designed board's project, swept by the planar job from scratch at
    the design frequencies, gives the search's S (which came from low-rank
    updates) and, through the masks computed here, its cost."""
    spec = json.loads(lowpass_spec.read_text())
    fresh = solvent.sweep(lowpass.project(), f=lowpass.f, exact_all=True, precision="double")
    assert fresh.s.shape == lowpass.s.shape == (len(lowpass.f), 2, 2) and len(lowpass.f) > 10
    np.testing.assert_allclose(fresh.s, lowpass.s, rtol=0, atol=1e-8)
    assert _mask_cost(spec, lowpass.f, fresh.s) == pytest.approx(lowpass.cost, abs=1e-6)
    assert lowpass.port_names == fresh.port_names


def test_a_bad_spec_names_the_field(lowpass_spec):
    spec = json.loads(lowpass_spec.read_text())
    bad = copy.deepcopy(spec)
    bad["masks"][1]["bound_db"] = "low"
    with pytest.raises(solvent.SolventError, match=r"masks\[1\]\.bound_db"):
        solvent.design(bad, base_dir=lowpass_spec.parent)
    missing = copy.deepcopy(spec)
    missing["board"] = "no-such-board.json"
    with pytest.raises(solvent.SolventError, match="no-such-board.json"):
        solvent.design(missing, base_dir=lowpass_spec.parent)


def test_a_stop_keeps_the_best_map_and_frees_everything(lowpass, lowpass_spec, monkeypatch):
    """A stop once the search has begun (a progress callable raising
    KeyboardInterrupt goes the way of Ctrl-C) ends it through the library's
    cancel: KeyboardInterrupt carries the best map so far — the spec given
    as the dict its file loads to takes the file's seeded path, so its
    history is the start of the full run's — its project runs, and once
    that result is collected the context holds nothing, though the
    search's evaluator was counted in it."""
    contexts = capture_contexts(monkeypatch, design_search)
    spec = json.loads(lowpass_spec.read_text())

    def stop_in_the_search(phase, fraction):
        if phase.startswith("design pass"):
            raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt) as stop:
        solvent.design(spec, progress=stop_in_the_search, base_dir=lowpass_spec.parent)
    result = stop.value.result
    assert result.stopped == "cancelled" and result.map.shape == (11, 35)
    n = len(result.history)
    assert 1 <= n <= len(lowpass.history) and result.report["tried"] < lowpass.report["tried"]
    np.testing.assert_allclose(result.history, lowpass.history[:n], rtol=1e-12)
    assert result.cost == pytest.approx(result.history[-1, 1], rel=1e-9)
    assert result.project().port_names == result.port_names
    ctx = contexts[-1]
    assert lib.sv_ctx_memory_peak(ctx) > 0
    del result, stop
    gc.collect()
    assert lib.sv_ctx_memory_current(ctx) == 0


def test_a_map_of_the_wrong_shape_is_refused(lowpass):
    with pytest.raises(solvent.ArgumentError, match="shape"):
        lowpass.project(np.zeros((3, 3), dtype=np.uint8))

