"""The Touchstone reader of this folder's scripts (compare.py in momentum/,
stub_low_frequency.py): 2-ports whose frequencies are in GHz, as Solvent,
openEMS's scripts and the Momentum dataset write them."""
import cmath
import math


def read_touchstone(path):
    """{frequency in GHz (rounded): [S11, S21, S12, S22]} of a 2-port."""
    fmt, out = "RI", {}
    for line in open(path):
        line = line.strip()
        if not line or line[0] == "!":
            continue
        if line[0] == "#":
            u = line.upper().split()
            fmt = "DB" if "DB" in u else ("MA" if "MA" in u else "RI")
            continue
        v = [float(x) for x in line.split()]
        s = []
        for k in range(4):
            a, b = v[1 + 2 * k], v[2 + 2 * k]
            if fmt == "RI":
                s.append(complex(a, b))
            else:
                mag = 10 ** (a / 20) if fmt == "DB" else a
                s.append(mag * cmath.exp(1j * math.radians(b)))
        out[round(v[0], 4)] = s
    return out
