#!/usr/bin/python3
"""Writes lf_sample.tsv: a sample of the whole Momentum dataset at 0.5 GHz, for
tests/planar/test_momentum_ports.c (docs/em.md, "Momentum's ports").

  /usr/bin/python3 make_lf_sample.py PIXELATEDRF_CHECKOUT [STEP]

PIXELATEDRF_CHECKOUT is a clone of the dataset's repository (README.md, data
commit 93eda3c4: data/small_2port/pixelMaps and spFiles). Every STEP-th circuit
(default 4) in the order of its number, among those with both a 35 x 11 map and
an S-parameter file, gives one line: its number, whether its launches are
DC-connected (edge neighbours only, as Momentum's corner contacts do not
conduct), its map as 11 rows of '#'/'.' (top row first) joined by '/', and
Momentum's S11, S21, S22 at 0.5 GHz (real, imaginary; S12 = S21 as exported)."""
import cmath
import glob
import math
import os
import re
import sys
from collections import deque

NROW, NCOL, F_GHZ = 11, 35, 0.5


def read_map(path):
    rows = [[int(float(v)) for v in line.strip().split(',')] for line in open(path) if line.strip()]
    return rows if len(rows) == NROW and all(len(r) == NCOL for r in rows) else None


def dc_connected(g):
    """The west launch's centre pixel reaches the east launch's, through edge neighbours."""
    start, goal = (4, 0), (4, NCOL - 1)
    seen, todo = {start}, deque([start])
    while todo:
        r, c = todo.popleft()
        for dr, dc in ((0, 1), (1, 0), (0, -1), (-1, 0)):
            n = (r + dr, c + dc)
            if 0 <= n[0] < NROW and 0 <= n[1] < NCOL and g[n[0]][n[1]] and n not in seen:
                seen.add(n)
                todo.append(n)
    return goal in seen


def read_s_at(path, f_ghz):
    """S11, S21, S22 at f_ghz of a Touchstone 1.1 2-port in dB/degrees (4 or 2 lines a frequency)."""
    vals = []
    for line in open(path):
        line = line.strip()
        if line and line[0] not in '!#':
            vals += [float(v) for v in line.split()]
    for k in range(0, len(vals), 9):
        rec = vals[k:k + 9]
        if abs(rec[0] - f_ghz) < 1e-9:
            s = [10 ** (rec[1 + 2 * q] / 20) * cmath.exp(1j * math.radians(rec[2 + 2 * q])) for q in range(4)]
            return s[0], s[2], s[3]
    raise ValueError('%s: no %g GHz' % (path, f_ghz))


STEM = 'randomSmallGDS_pixelSize=8_sim=%d'


def map_path(data, n):
    return os.path.join(data, 'pixelMaps', STEM % n + '.csv')


def s2p_path(data, n):
    return os.path.join(data, 'spFiles', STEM % n + '.s2p')


def usable_circuits(data):
    """The numbers, in order, of the circuits in data (a clone's data/small_2port) that have an
    S-parameter file and a 35 x 11 map."""
    sims = sorted(int(re.search(r'sim=(\d+)\.s2p$', p).group(1)) for p in glob.glob(os.path.join(data, 'spFiles', '*.s2p')))
    return [n for n in sims if os.path.exists(map_path(data, n)) and read_map(map_path(data, n))]


def main():
    data = os.path.join(sys.argv[1], 'data', 'small_2port')
    step = int(sys.argv[2]) if len(sys.argv) > 2 else 4
    usable = usable_circuits(data)
    out = os.path.join(os.path.dirname(os.path.abspath(__file__)), 'lf_sample.tsv')
    with open(out, 'w') as f:
        f.write('# Momentum dataset (github.com/noyades/pixelatedRF, data/small_2port, data commit 93eda3c4, MIT\n'
                '# licence: LICENSE-pixelatedRF.md): every %dth of its %d circuits with a map and S-parameters,\n'
                '# written by make_lf_sample.py. S at %g GHz. Columns:\n'
                '# sim\tdc_connected\tmap\tS11_re\tS11_im\tS21_re\tS21_im\tS22_re\tS22_im\n' % (step, len(usable), F_GHZ))
        for n in usable[::step]:
            g = read_map(map_path(data, n))
            s11, s21, s22 = read_s_at(s2p_path(data, n), F_GHZ)
            m = '/'.join(''.join('#' if v else '.' for v in row) for row in g)
            f.write('%d\t%d\t%s\t%s\n' % (n, dc_connected(g), m,
                                          '\t'.join('%.9e\t%.9e' % (s.real, s.imag) for s in (s11, s21, s22))))


if __name__ == '__main__':
    main()
