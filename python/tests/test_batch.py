"""solvent.batch (the library's sv_planar_batch) against separate
solvent.sweep calls on the dataset's board (examples/batch), and a map
that cannot run reported by its index while the others go on."""
import gc
import json

import numpy as np
import pytest

import solvent
from conftest import REPO, capture_contexts, ctrl_c_after
from solvent._native import lib

F = [1e9, 5e9]


@pytest.fixture(scope="module")
def board():
    project = json.loads((REPO / "examples" / "batch" / "board.json").read_text())
    return {key: value for key, value in project.items() if key not in ("pixels", "title")}


@pytest.fixture(scope="module")
def maps():
    """The three Momentum maps, with an empty map (no metal) second."""
    folder = REPO / "examples" / "batch" / "maps"
    out = [np.loadtxt(folder / name, delimiter=",", dtype=np.uint8)
           for name in ("sim106.csv", "sim213.csv", "sim572.csv")]
    out.insert(1, np.zeros_like(out[0]))
    return np.array(out)


def test_batch_matches_separate_sweeps(maps, board):
    result = solvent.batch(maps, board, f=F, threads=2)
    assert result.s.shape == (4, 2, 2, 2) and list(result.ok) == [True, False, True, True]
    np.testing.assert_array_equal(result.f, F)
    for k in (0, 2, 3):
        alone = solvent.sweep(solvent.Project.from_pixels(maps[k], board), f=F, threads=1)
        np.testing.assert_allclose(result.s[k], alone.s, rtol=0, atol=1e-9)
        assert result.port_names == alone.port_names
        np.testing.assert_array_equal(result.z0, alone.z0)
    assert set(result.errors) == {1} and np.isnan(result.s[1]).all()
    with pytest.raises(solvent.SolventError) as refused:
        solvent.sweep(solvent.Project.from_pixels(maps[1], board), f=F)
    assert "metal" in result.errors[1] and "metal" in str(refused.value)


class Stop(Exception):
    pass


def test_a_stopped_stored_batch_resumes_with_what_is_missing(maps, board, tmp_path):
    """A stop in the second chunk keeps the first chunk's part file; the
    second call runs only the maps that are missing, never rewrites a part,
    and its S is the separate sweeps'; load reads the same back."""
    def stop_in_second_chunk(phase, fraction):
        if phase == "batch" and fraction > 0.5:
            raise Stop

    with pytest.raises(Stop):
        solvent.batch(maps, board, f=F, threads=1, store=tmp_path, chunk_size=2, progress=stop_in_second_chunk)
    written = {p.name: p.stat().st_mtime_ns for p in tmp_path.glob("part-*.npz")}
    assert list(written) == ["part-000000000-000000001.npz"]
    result = solvent.batch(maps, board, f=F, threads=1, store=tmp_path, chunk_size=2)
    assert result.computed == 2 and list(result.ok) == [True, False, True, True] and set(result.errors) == {1}
    assert "metal" in result.errors[1] and np.isnan(result.s[1]).all()
    for k in (0, 2, 3):
        alone = solvent.sweep(solvent.Project.from_pixels(maps[k], board), f=F, threads=1)
        np.testing.assert_allclose(result.s[k], alone.s, rtol=0, atol=1e-9)
    assert all(tmp_path.joinpath(name).stat().st_mtime_ns == t for name, t in written.items())
    again = solvent.batch(maps, board, f=F, store=tmp_path, gather=False)
    assert again.computed == 0 and again.s is None and list(again.ok) == list(result.ok)
    assert again.errors == result.errors
    stored = solvent.distributed.load(tmp_path)
    np.testing.assert_array_equal(stored.s, result.s)
    assert stored.errors == result.errors and stored.port_names == result.port_names
    with pytest.raises(solvent.ArgumentError, match="holds another job"):
        solvent.batch(maps[:2], board, f=F, store=tmp_path)


def test_bad_maps_argument_raises(maps, board):
    with pytest.raises(solvent.ArgumentError, match="only 0 .no metal. and 1"):
        solvent.batch(maps * 2, board, f=F)
    with pytest.raises(solvent.ArgumentError, match=r"maps: expected \(maps, ny, nx\)"):
        solvent.batch(np.zeros((2, 3, 4, 5)), board, f=F)
    batch = solvent.planar_batch.Batch(board, maps.shape[1:], f=F)
    with pytest.raises(solvent.ArgumentError, match="each map must be 11 x 35"):
        batch.run(maps[:, :5, :])
    with pytest.raises(solvent.ArgumentError, match="only with store= or client="):
        solvent.batch(maps, board, f=F, chunk_size=2)
    with pytest.raises(solvent.ArgumentError, match="give a store"):
        solvent.batch(maps, board, f=F, gather=False)


def test_ctrl_c_stops_a_batch_and_frees_it(monkeypatch, maps, board):
    """A Ctrl-C 0.5 s into a batch of many maps raises KeyboardInterrupt
    within a second; once the batch is collected its context holds nothing."""
    contexts = capture_contexts(monkeypatch, solvent.planar_batch)
    many = np.tile(maps[[0, 2, 3]], (100, 1, 1))

    def interrupted():  # (uninterrupted: minutes)
        solvent.batch(many, board, points=21, threads=2, progress=lambda phase, f: None)

    assert ctrl_c_after(0.5, interrupted) < 1.0
    gc.collect()
    assert contexts and lib.sv_ctx_memory_current(contexts[-1]) == 0
