#!/usr/bin/python3
"""Why the stub's |S11| below 1 GHz is 8-15 % under openEMS's (docs/em.md,
"Every effect on"): a transmission-line model of the circuit, built from
each solver's own feed line, reproduces each solver's S11.

Solvent's line: a uniform line of the stub example's mesh (4 cells across,
the same cells and stack-up), swept by `solvent sweep` with calibrated
ports; Zc and eps_eff from its ABCD matrix. openEMS's: its feed line's
V/I figures (stub.txt). Each model: that line from the ports to the
junction (20 mm each side) and an open stub of the same line whose notch is
the solver's own (1.977 GHz openEMS, Solvent's from the swept circuit).

Usage: stub_low_frequency.py SOLVENT_BINARY [SUBDIVIDE]   (from the repository root)
"""
import json
import os
import subprocess
import sys
import tempfile

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from touchstone import read_touchstone  # noqa: E402

C0 = 299792458.0


def read_s2p(path):
    """Frequencies (Hz) and S (rows S11 S21 S12 S22) as arrays."""
    data = read_touchstone(path)
    f = sorted(data)
    return np.array(f) * 1e9, np.array([data[k] for k in f])


def sweep(solvent, project, start, stop, points, subdivide):
    with tempfile.TemporaryDirectory() as d:
        pj, out = os.path.join(d, "p.json"), os.path.join(d, "p.s2p")
        json.dump(project, open(pj, "w"))
        cmd = [solvent, "sweep", pj, "-o", out, "--start", str(start), "--stop", str(stop),
               "--points", str(points), "--quiet"]
        if subdivide > 1:
            cmd += ["--subdivide", str(subdivide)]
        subprocess.run(cmd, check=True)
        return read_s2p(out)


def line_parameters(s, f, length, z0=50.0):
    """Zc and eps_eff of a uniform line from its S (reference z0)."""
    s11, s21, s12, s22 = s
    d = 2 * s21
    a = ((1 + s11) * (1 - s22) + s12 * s21) / d
    b = z0 * ((1 + s11) * (1 + s22) - s12 * s21) / d
    c = ((1 - s11) * (1 - s22) - s12 * s21) / d / z0
    zc = np.sqrt(b / c)
    gamma_l = np.arccosh(a)
    beta = abs(gamma_l.imag) / length
    return zc.real, (beta * C0 / (2 * np.pi * f)) ** 2


def tl_stub_s11(f, zc, eps_eff, notch, half=0.020, z0=50.0):
    """S11 of line(half) - shunt open stub - line(half), ports z0."""
    bl = 2 * np.pi * f * np.sqrt(eps_eff) / C0 * half
    line = np.array([[np.cos(bl), 1j * zc * np.sin(bl)], [1j * np.sin(bl) / zc, np.cos(bl)]])
    stub = np.array([[1, 0], [1j * np.tan(np.pi / 2 * f / notch) / zc, 1]])
    a, b, c, d = (line @ stub @ line).ravel()
    return (a + b / z0 - c * z0 - d) / (a + b / z0 + c * z0 + d)


def main():
    solvent = sys.argv[1]
    subdivide = int(sys.argv[2]) if len(sys.argv) > 2 else 1
    stub = json.load(open("examples/stub.json"))
    g = stub["grid"]
    # the main line's own cells: the stub's grid, 4 rows, metal everywhere
    y = [g["origin"][1], g["origin"][1] + 4 * g["dy"]]
    line = {"title": "the stub's feed line", "units": stub["units"], "substrate": stub["substrate"],
            "metal": stub["metal"], "grid": dict(g, ny=4), "pixels": ["#" * g["nx"]] * 4,
            "ports": [{"name": "a", "side": "left", "x": g["origin"][0], "y": y},
                      {"name": "b", "side": "right", "x": g["origin"][0] + g["nx"] * g["dx"], "y": y}]}
    length = g["nx"] * g["dx"] * 1e-3
    fl, sl = sweep(solvent, line, "0.5GHz", "0.5GHz", 1, subdivide)
    zc, ee = line_parameters(sl[0], fl[0], length)
    # Solvent's notch on the circuit (1 MHz steps around it)
    fn, sn = sweep(solvent, stub, "1.9GHz", "2.1GHz", 201, subdivide)
    notch = fn[np.argmin(abs(sn[:, 1]))]
    fs, ss = sweep(solvent, stub, "0.5GHz", "1GHz", 3, subdivide)
    fo, so = read_s2p(os.path.join(HERE, "stub.s2p"))
    print(f"Solvent's feed line (split {subdivide}): Zc {zc:.2f} ohm, eps_eff {ee:.3f}; notch {notch / 1e9:.3f} GHz")
    print("f GHz | Solvent |S11| | TL, Solvent's line | openEMS |S11| | TL, openEMS's line (49.72 ohm, 3.337, 1.977 GHz) | TL, ideal 50 ohm")
    for f, s in zip(fs, ss):
        ro = np.interp(f, fo, abs(so[:, 0]))
        print(f"{f / 1e9:.2f} | {abs(s[0]):.4f} | {abs(tl_stub_s11(f, zc, ee, notch)):.4f} | {ro:.4f} | "
              f"{abs(tl_stub_s11(f, 49.72, 3.337, 1.977e9)):.4f} | {abs(tl_stub_s11(f, 50.0, 3.337, 1.977e9)):.4f}")


if __name__ == "__main__":
    main()
