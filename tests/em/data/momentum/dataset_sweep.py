#!/usr/bin/python3
"""Solvent against ADS Momentum over many circuits of the dataset, the whole band:
what the eight circuits of test_momentum.c say, on a larger sample (docs/em.md,
"Momentum's ports").

  /usr/bin/python3 dataset_sweep.py PIXELATEDRF_CLONE [--step 25] [--subdivide K]
                                      [--ports none,thru] [--only dc|open] [--solvent build/solvent]

Every STEP-th circuit of the dataset (a clone of its repository: README.md; --only keeps
its DC-connected or its capacitively coupled ones) is swept with `solvent sweep` at
Momentum's 200 frequencies (0.05-10 GHz) with the Momentum test's stack-up and every
default effect, the grid's cells split K x K, once for each port model (none: raw, thru:
calibrated).
Prints per circuit the median over the band of |dS21| and |dS11| (complex, linear) and the
worst |dS| of any entry, then for each port model the medians over the circuits, split into
DC-connected and capacitively coupled ones, and the median ratio of the lost power
1 - |S11|^2 - |S21|^2 to Momentum's at 1, 5 and 10 GHz. About two seconds a circuit."""
import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', 'openems'))
from touchstone import read_touchstone  # noqa: E402
import make_lf_sample as sample  # noqa: E402

ROOT = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', '..', '..', '..'))
PROBES = (1.0, 5.0, 10.0)


def project(csv, calibration, subdivide):
    ports = [{'name': 'P1', 'side': 'left', 'x': 0, 'y': [16, 72], 'calibration': calibration},
             {'name': 'P2', 'side': 'right', 'x': 280, 'y': [16, 72], 'calibration': calibration}]
    return {'units': 'mil', 'substrate': {'thickness': 30, 'eps_r': 4.5, 'tan_delta': 0.01},
            'metal': {'conductivity': 5.88e7, 'thickness': 2.8}, 'grid': {'dx': 8, 'dy': 8, 'nx': 35, 'ny': 11, 'subdivide': subdivide},
            'pixels': {'csv': csv}, 'ports': ports, 'sweep': {'start': 0.05e9, 'stop': 10e9, 'points': 200}}


def lost(s):
    return 1 - abs(s[0]) ** 2 - abs(s[1]) ** 2


def compare(a, ref):
    fs = sorted(f for f in a if f in ref and 0.05 <= f <= 10.0001)
    return {'d21': statistics.median(abs(a[f][1] - ref[f][1]) for f in fs),
            'd11': statistics.median(abs(a[f][0] - ref[f][0]) for f in fs),
            'worst': max(abs(a[f][k] - ref[f][k]) for f in fs for k in range(4)),
            'loss': [lost(a[p]) / lost(ref[p]) for p in PROBES]}


def summary(rows):
    return '%.4f %.4f %.3f  %s' % (statistics.median(r['d21'] for r in rows), statistics.median(r['d11'] for r in rows),
                                   max(r['worst'] for r in rows),
                                   ' / '.join('%.2f' % statistics.median(r['loss'][k] for r in rows) for k in range(3)))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    ap.add_argument('clone', help="a clone of the dataset's repository")
    ap.add_argument('--step', type=int, default=25, help='every STEP-th circuit (default 25)')
    ap.add_argument('--subdivide', type=int, default=1, help='grid.subdivide (default 1)')
    ap.add_argument('--ports', default='none,thru', help='port models: none (raw), thru (calibrated)')
    ap.add_argument('--only', choices=('dc', 'open'), help='DC-connected or capacitively coupled circuits alone')
    ap.add_argument('--solvent', default=os.path.join(ROOT, 'build', 'solvent'))
    args = ap.parse_args()
    data = os.path.join(args.clone, 'data', 'small_2port')
    cals = args.ports.split(',')
    dc = {n: sample.dc_connected(sample.read_map(sample.map_path(data, n)))
          for n in sample.usable_circuits(data)[::args.step]}
    sims = [n for n in dc if args.only is None or dc[n] == (args.only == 'dc')]
    out = {cal: [] for cal in cals}
    print('cells split %d x %d; circuit, DC-connected, then for %s: med|dS21| med|dS11| worst'
          % (args.subdivide, args.subdivide, ', '.join(cals)))
    with tempfile.TemporaryDirectory() as tmp:
        for n in sims:
            csv = sample.map_path(data, n)
            ref = read_touchstone(sample.s2p_path(data, n))
            line = '%7d  %d ' % (n, dc[n])
            for cal in cals:
                stem = os.path.join(tmp, '%d_%s' % (n, cal))
                json.dump(project(csv, cal, args.subdivide), open(stem + '.json', 'w'))
                subprocess.run([args.solvent, 'sweep', stem + '.json', '-o', stem + '.s2p', '--quiet'], check=True)
                r = compare(read_touchstone(stem + '.s2p'), ref)
                r['dc'] = dc[n]
                out[cal].append(r)
                line += '   %.4f %.4f %.3f' % (r['d21'], r['d11'], r['worst'])
            print(line, flush=True)
    print('\n%d circuits; medians over circuits of med|dS21| med|dS11|, the worst entry, lost power / Momentum\'s at '
          '1 / 5 / 10 GHz' % len(sims))
    for cal in cals:
        name = {'none': 'raw ports', 'thru': 'calibrated ports'}[cal]
        for sel, what in ((None, 'all'), (1, 'DC-connected'), (0, 'capacitively coupled')):
            rows = [r for r in out[cal] if sel is None or r['dc'] == sel]
            if rows:
                print('  %-17s %-21s (%3d)  %s' % (name, what, len(rows), summary(rows)))


if __name__ == '__main__':
    main()
