"""The planar binding against independent references: the tool's own
Touchstone output, closed forms, numpy's linear algebra, and the library's
memory counters."""
import json
import subprocess
import threading

import numpy as np
import pytest
import skrf

import solvent
from conftest import capture_contexts, check_contexts, ctrl_c_after, heap_growth
from solvent import planar
from solvent._native import lib


def test_sweep_equals_the_tool(repo, tool, tmp_path):
    """The same project through `solvent sweep` and through Python: the
    same frequencies and S to the Touchstone file's 16 digits."""
    out = tmp_path / "stub.s2p"
    subprocess.run([tool, "sweep", repo / "examples/stub.json", "-o", out], check=True, capture_output=True)
    from_tool = skrf.Network(str(out))
    result = solvent.sweep(repo / "examples/stub.json")
    network = result.to_network()
    assert network.s.shape == from_tool.s.shape
    np.testing.assert_allclose(network.f, from_tool.f, rtol=1e-14)
    np.testing.assert_allclose(network.s, from_tool.s, rtol=0, atol=1e-12)
    assert result.port_names == ["P1", "P2"] or len(result.port_names) == 2
    assert result.exact.sum() == result.report["exact_solves"]


def test_written_touchstone_reads_back(tmp_path, strip):
    result = solvent.sweep(strip, f=[1e9, 2e9, 3e9])
    result.write_touchstone(tmp_path / "strip.s2p")
    back = skrf.Network(str(tmp_path / "strip.s2p"))
    np.testing.assert_allclose(back.f, result.f, rtol=1e-14)
    np.testing.assert_allclose(back.s, result.s, rtol=0, atol=1e-14)


def test_dc_is_the_strips_resistance(strip):
    """At 0 Hz the strip is a series resistor R = ℓ/(σ·w·t) between 50 Ω
    ports: S21 = 2·Z0/(2·Z0 + R), S11 = R/(2·Z0 + R)."""
    r = 3e-3 / (5.8e7 * 1e-3 * 35e-6)
    result = solvent.sweep(strip, f=[0.0])
    assert result.report["dc"] == 1 and result.exact[0]
    s = result.s[0]
    assert s[1, 0] == pytest.approx(100 / (100 + r), abs=1e-10)
    assert s[0, 0].real == pytest.approx(r / (100 + r), rel=1e-5)
    assert abs(s[0, 0].imag) < 1e-12


def test_network_parameters_agree_with_numpy(strip):
    """Z = Y⁻¹ and S = (1 − Z0·Y)(1 + Z0·Y)⁻¹, by numpy; reciprocal and
    passive."""
    result = solvent.sweep(strip, f=[5e8, 2e9, 6e9], outputs=("y", "z"))
    eye = np.eye(2)
    for k in range(3):
        y, z, s = result.y[k], result.z[k], result.s[k]
        np.testing.assert_allclose(z, np.linalg.inv(y), rtol=1e-10)
        z0y = 50.0 * y
        np.testing.assert_allclose(s, (eye - z0y) @ np.linalg.inv(eye + z0y), atol=1e-12)
        assert np.abs(s - s.T).max() < 1e-10
        assert np.linalg.svd(s, compute_uv=False).max() <= 1 + 1e-12
    assert result.y_raw is None


def test_every_way_to_give_a_project_is_the_same(strip, tmp_path):
    path = tmp_path / "strip.json"
    path.write_text(json.dumps(strip))
    pixels = np.array([[1 if c == "#" else 0 for c in row] for row in strip["pixels"]])
    board = {k: v for k, v in strip.items() if k != "pixels"}
    forms = [solvent.Project.from_file(path), solvent.Project.from_dict(strip),
             solvent.Project.from_json(json.dumps(strip)), solvent.Project.from_pixels(pixels, board)]
    results = [p.sweep(f=[1e9, 4e9]) for p in forms]
    for r in results[1:]:
        assert np.array_equal(r.s, results[0].s)
    assert forms[0].port_names == ["in", "out"]


def test_bad_input_raises_the_librarys_message(strip, tmp_path):
    with pytest.raises(solvent.ParseError, match="substrate"):
        solvent.Project.from_dict({k: v for k, v in strip.items() if k != "substrate"})
    with pytest.raises(solvent.SolventError, match="no-such-file.json"):
        solvent.Project.from_file(tmp_path / "no-such-file.json")
    with pytest.raises(solvent.ArgumentError, match="precision"):
        solvent.sweep(strip, f=[1e9], precision="quad")
    with pytest.raises(solvent.ArgumentError, match="ascending"):
        solvent.sweep(strip, f=[2e9, 1e9])
    with pytest.raises(solvent.BudgetError, match="needs about"):
        solvent.sweep(strip, f=[1e9], memory_limit="1K")
    with pytest.raises(solvent.ArgumentError, match="pixels"):
        solvent.Project.from_pixels(np.full((3, 3), 2), strip)


def test_progress_rises_to_one(strip):
    seen = []
    solvent.sweep(strip, band=(1e9, 5e9), points=41, progress=lambda phase, f: seen.append((phase, f)))
    fractions = [f for _, f in seen]
    assert fractions and fractions[-1] == 1.0
    assert all(phase for phase, _ in seen)


def test_ctrl_c_stops_a_sweep_and_frees_everything(repo, monkeypatch):
    """A Ctrl-C one second into pixel2port's sweep (which runs several
    seconds) raises KeyboardInterrupt within a second, and the library
    holds nothing afterwards."""
    contexts = capture_contexts(monkeypatch, planar)
    project = solvent.Project.from_file(repo / "examples/pixel2port.json")

    def interrupted():
        project.sweep(progress=lambda phase, f: None)

    assert ctrl_c_after(1.0, interrupted) < 1.0
    assert contexts and lib.sv_ctx_memory_current(contexts[-1]) == 0
    assert project.sweep(f=[2e9], exact_all=True).s.shape == (1, 2, 2)  # still usable


def test_the_interpreter_runs_during_a_solve(repo):
    project = solvent.Project.from_file(repo / "examples/stub.json")
    worker = threading.Thread(target=project.sweep)
    worker.start()
    spins = 0
    while worker.is_alive():
        spins += 1
    worker.join()
    assert spins > 10000


def test_repeated_calls_leak_nothing(tiny, monkeypatch):
    """A thousand projects and twenty sweeps, in two equal rounds after a first: Python's
    heap grows no more in the second round than a few objects' worth, and
    every context ends holding nothing (each checked when the next one is
    made)."""
    text = json.dumps(tiny)
    project = solvent.Project.from_json(text)  # its context holds it: made before the checks
    tally = check_contexts(monkeypatch, planar)

    def round_of_calls():
        for _ in range(500):
            assert solvent.Project.from_json(text).port_names == ["in", "out"]
        for _ in range(10):
            project.sweep(f=[1e9])

    assert heap_growth(round_of_calls) < 10_000
    assert tally["checked"] > 1500 and tally["holding"] == 0


def test_beyond_the_models_limit_is_refused_unless_asked(repo):
    """The stub (h = 1.6 mm, εr 4.4) holds to 7.1 GHz: 9 GHz is refused
    with the limit named, and solved when asked."""
    with pytest.raises(solvent.ArgumentError, match="7.1"):
        solvent.sweep(repo / "examples/stub.json", f=[9e9])
    beyond = solvent.sweep(repo / "examples/stub.json", f=[9e9], allow_beyond_validity=True)
    assert beyond.s.shape == (1, 2, 2) and beyond.report["beyond_limit"] == 1
    assert solvent.sweep(repo / "examples/stub.json", f=[7e9]).report["beyond_limit"] == 0
