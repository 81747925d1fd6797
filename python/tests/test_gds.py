"""Solvent's GDSII files against gdstk (PyPI), both ways.

Out: a project's metal written by `solvent gds` and read by gdstk is one
polygon per 4-connected piece of metal (the pieces counted by
scipy.ndimage.label), each covering exactly its piece's cells (gdstk's
boolean XOR is empty), the areas summing to the metal's.

In: layouts drawn with gdstk — boundaries, paths of each end type, SREF and
AREF with rotations, reflections and magnification, nested — taken by a
project's "gds" key and written back by `solvent gds`: what Solvent
rasterised is exactly what gdstk's own flattening of the layout covers.
"""
import json
import subprocess

import gdstk
import numpy as np
import pytest
from scipy import ndimage

BOARD = {
    "units": "um",
    "effects": {"radiation": False},
    "substrate": {"thickness": 800, "eps_r": 4.4},
    "metal": {"conductivity": "inf"},
}


def run(tool, *args):
    return subprocess.run([str(tool), *map(str, args)], capture_output=True, text=True)


def cell_rects(cells, dx, dy, x0, y0):
    """One gdstk rectangle per metal cell (cells[j, i], j = 0 the bottom row)."""
    return [gdstk.rectangle((x0 + i * dx, y0 + j * dy), (x0 + (i + 1) * dx, y0 + (j + 1) * dy))
            for j, i in zip(*np.nonzero(cells))]


def xor_area(a, b):
    return sum(p.area() for p in gdstk.boolean(a, b, "xor", precision=1e-4))


def centres_inside(polygons, nx, ny, dx, dy, x0, y0):
    """Cells whose centres gdstk finds inside the polygons, as cells[j, i]."""
    jj, ii = np.mgrid[0:ny, 0:nx]
    pts = np.column_stack([x0 + (ii.ravel() + 0.5) * dx, y0 + (jj.ravel() + 0.5) * dy])
    return np.array(gdstk.inside(pts, polygons), dtype=bool).reshape(ny, nx)


def test_solvent_layout_read_by_gdstk(tool, tmp_path):
    rng = np.random.default_rng(36)
    nx, ny, dx, dy, x0, y0 = 35, 11, 765.5, 760.37, 97.0, -1520.741
    cells = rng.random((ny, nx)) < 0.55
    cells[4:7, :3] = True          # the launch, fixed metal drawn as a rectangle below
    cells[4:7, 3] = True
    rows = ["".join("#" if c else "." for c in row) for row in cells[::-1]]
    project = dict(BOARD, grid={"dx": dx, "dy": dy, "nx": nx, "ny": ny, "origin": [x0, y0]},
                   pixels=rows,
                   rectangles=[{"x": [x0, x0 + 3 * dx], "y": [y0 + 4 * dy, y0 + 7 * dy]}],
                   ports=[{"name": "P1", "side": "left", "x": x0, "y": [y0 + 4 * dy, y0 + 7 * dy],
                           "calibration": "none"}])
    (tmp_path / "board.json").write_text(json.dumps(project))
    out = tmp_path / "board.gds"
    r = run(tool, "gds", tmp_path / "board.json", "-o", out, "--layer", 3, "--datatype", 2,
            "--db-unit", "1e-10")
    assert r.returncode == 0, r.stderr

    lib = gdstk.read_gds(str(out))
    assert lib.unit == pytest.approx(1e-6, rel=1e-12)
    assert lib.precision == pytest.approx(1e-10, rel=1e-12)
    (top,) = lib.top_level()
    assert top.name == "TOP"
    polys = top.polygons
    assert all((p.layer, p.datatype) == (3, 2) for p in polys)

    labels, count = ndimage.label(cells, structure=[[0, 1, 0], [1, 1, 1], [0, 1, 0]])
    assert len(polys) == count
    assert sum(p.area() for p in polys) == pytest.approx(cells.sum() * dx * dy, rel=1e-12)
    assert xor_area(polys, cell_rects(cells, dx, dy, x0, y0)) < 1e-6 * dx * dy
    seen = set()
    for p in polys:
        inside = centres_inside([p], nx, ny, dx, dy, x0, y0)
        (label,) = set(labels[inside])           # one piece, all of it
        assert label > 0 and label not in seen
        seen.add(label)
        assert np.array_equal(inside, labels == label)
        assert xor_area([p], cell_rects(labels == label, dx, dy, x0, y0)) < 1e-6 * dx * dy


def gdstk_layout(path):
    """A layout on a 10 µm grid: shapes on layer 1/0 through every kind of
    reference, with decoys on other layers and datatypes (gdstk's default
    layer is 0: every shape names its layer)."""
    lib = gdstk.Library(unit=1e-6, precision=1e-9)
    pad = lib.new_cell("PAD")
    pad.add(gdstk.Polygon([(0, 0), (30, 0), (30, 10), (10, 10), (10, 20), (0, 20)], layer=1))   # an L
    pad.add(gdstk.rectangle((0, 0), (30, 20), layer=1, datatype=5))                     # decoy datatype
    line = lib.new_cell("LINE")
    line.add(gdstk.FlexPath([(0, 5), (45, 5), (45, 50)], 10, ends="flush", simple_path=True, layer=1))
    line.add(gdstk.FlexPath([(65, 5), (85, 5)], 10, ends="extended", simple_path=True, layer=1))
    line.add(gdstk.FlexPath([(60, 35), (90, 35)], 10, ends=(10, 0), simple_path=True, layer=1))
    mid = lib.new_cell("MID")
    mid.add(gdstk.Reference(pad, (10, 0)))
    mid.add(gdstk.Reference(line, (0, 60), rotation=np.pi / 2, x_reflection=True))
    top = lib.new_cell("TOP")
    top.add(gdstk.rectangle((0, 100), (50, 130), layer=1))                              # the feed
    top.add(gdstk.rectangle((0, 0), (400, 300), layer=7))                                # decoy layer
    top.add(gdstk.Reference(pad, (100, 20), rotation=np.pi / 2))
    top.add(gdstk.Reference(pad, (150, 20), rotation=np.pi, x_reflection=True))
    top.add(gdstk.Reference(pad, (150, 160), rotation=3 * np.pi / 2, magnification=2))
    top.add(gdstk.Reference(pad, (200, 10), columns=3, rows=2, spacing=(40, 30)))
    top.add(gdstk.Reference(pad, (330, 200), rotation=np.pi / 2, columns=2, rows=2, spacing=(30, 40)))
    top.add(gdstk.Reference(mid, (250, 150), rotation=np.pi))
    top.add(gdstk.Reference(line, (40, 200)))
    lib.write_gds(str(path))
    return top


def gds_project(tmp_path, **gds):
    project = dict(BOARD, grid={"dx": 10, "dy": 10, "nx": 40, "ny": 30},
                   gds=dict({"file": "layout.gds", "layer": 1, "datatype": 0}, **gds),
                   ports=[{"name": "P1", "side": "left", "x": 0, "y": [100, 130], "calibration": "none"}])
    (tmp_path / "board.json").write_text(json.dumps(project))
    return tmp_path / "board.json"


def test_gdstk_layout_rasterised_by_solvent(tool, tmp_path):
    top = gdstk_layout(tmp_path / "layout.gds")
    want = top.get_polygons(layer=1, datatype=0)
    assert len(want) > 20
    out = tmp_path / "back.gds"
    r = run(tool, "gds", gds_project(tmp_path, cell="TOP"), "-o", out)
    assert r.returncode == 0, r.stderr
    got = gdstk.read_gds(str(out)).top_level()[0].polygons
    assert xor_area(got, want) < 1e-6
    union_area = sum(p.area() for p in gdstk.boolean(want, [], "or"))
    assert sum(p.area() for p in got) == pytest.approx(union_area, rel=1e-12)
    # the top structure is found without its name
    r = run(tool, "gds", gds_project(tmp_path), "-o", tmp_path / "again.gds")
    assert r.returncode == 0, r.stderr
    assert (tmp_path / "again.gds").read_bytes() == out.read_bytes()


def test_off_grid_refused_unless_snapped(tool, tmp_path):
    lib = gdstk.Library(unit=1e-6, precision=1e-9)
    top = lib.new_cell("TOP")
    top.add(gdstk.rectangle((0, 100), (50, 130), layer=1))
    top.add(gdstk.rectangle((103, 47), (187.5, 121), layer=1))       # off the 10 µm grid
    top.add(gdstk.Polygon([(200, 20), (333, 20), (200, 153)], layer=1))  # not Manhattan (no centre on it)
    lib.write_gds(str(tmp_path / "layout.gds"))
    r = run(tool, "gds", gds_project(tmp_path), "-o", tmp_path / "no.gds")
    assert r.returncode == 1
    assert "off the grid's lines" in r.stderr and "0.000103" in r.stderr
    assert not (tmp_path / "no.gds").exists()
    r = run(tool, "gds", gds_project(tmp_path, snap=True), "-o", tmp_path / "snap.gds")
    assert r.returncode == 0, r.stderr
    got = gdstk.read_gds(str(tmp_path / "snap.gds")).top_level()[0].polygons
    solvent_cells = centres_inside(got, 40, 30, 10, 10, 0, 0)
    gdstk_cells = centres_inside(top.get_polygons(layer=1, datatype=0), 40, 30, 10, 10, 0, 0)
    assert np.array_equal(solvent_cells, gdstk_cells)
    assert gdstk_cells.sum() > 100


def test_command_line_refusals(tool, tmp_path):
    gdstk_layout(tmp_path / "layout.gds")
    board = gds_project(tmp_path)
    for args, message in [
        (["-o", tmp_path / "layout.gds"], "is the input file"),       # its own input
        (["-o", tmp_path / "x.gds", "--layer", "40000"], "--layer 40000: expected an integer from 0 to 32767"),
        (["-o", tmp_path / "x.gds", "--db-unit", "2e-6"], "--db-unit 2e-6: expected a length in metres"),
        (["-o", tmp_path / "x.gds", "--layer", "1", "--layer", "2"], "--layer"),
        ([], "usage: solvent gds"),
    ]:
        r = run(tool, "gds", board, *args)
        assert r.returncode == 2, (args, r.stderr)
        assert message in r.stderr, (args, r.stderr)
    assert not (tmp_path / "x.gds").exists()
    # a grid line that is no whole number of database units
    r = run(tool, "gds", board, "-o", tmp_path / "x.gds", "--db-unit", "3e-8")
    assert r.returncode == 1 and "not a whole number of database units" in r.stderr
    assert not (tmp_path / "x.gds").exists()
