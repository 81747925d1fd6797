#!/usr/bin/python3
"""openEMS on the two launches alone (the Momentum circuits' 56-mil lines, 104 mil long,
open ends 72 mil apart, no random region): what this folder's matched-feed ports put at the
board edge, against closed forms (docs/em.md, "Momentum's ports").

  /usr/bin/python3 launches.py [--work /tmp/openems_momentum] [--reuse]

Runs the base mesh's thru (the feed line's calibration) and the launches with port 1
driven (the map is x-symmetric), about 8 minutes on two cores, with make_reference.py's
set-up, and writes launches.txt: port 1's capacitance C = -tan(arg S11 / 2)/(w Z0) at 0.5
and 1 GHz for each V/I plane, and the feed line's own C' = sqrt(eps_eff)/(c Z) times the
launch's length plus one open end (Kirschning, Jansen and Koster, Electronics Letters 17
(1981) 123), which a de-embedded port sees, or plus two, which an edge port at the end of
the strip sees."""
import argparse
import math
import os

import numpy as np

import make_reference as mr

HERE = os.path.dirname(os.path.abspath(__file__))
LAUNCH_MM = 13 * mr.P


def open_end_kj(w, h, er, eeff):
    """Open-end extension (mm) of a strip w wide on h of er with static eps_eff eeff."""
    u = w / h
    x1 = 0.434907 * (eeff ** 0.81 + 0.26) / (eeff ** 0.81 - 0.189) * (u ** 0.8544 + 0.236) / (u ** 0.8544 + 0.87)
    x2 = 1 + u ** 0.371 / (2.358 * er + 1)
    x3 = 1 + 0.5274 * math.atan(0.084 * u ** (1.9413 / x2)) / eeff ** 0.9236
    x4 = 1 + 0.0377 * math.atan(0.067 * u ** 1.456) * (6 - 5 * math.exp(0.036 * (1 - er)))
    x5 = 1 - 0.218 * math.exp(-7.5 * u)
    return h * x1 * x3 * x5 / x4


def main():
    ap = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    ap.add_argument('--work', default='/tmp/openems_momentum', help='folder for the FDTD runs')
    ap.add_argument('--reuse', action='store_true', help='reuse finished runs found in --work')
    args = ap.parse_args()
    for c in ('thru', 'launches'):
        sp = os.path.join(args.work, f'{c}_base_exc1')
        if not (args.reuse and os.path.exists(os.path.join(sp, 'run_wall.json'))):
            mr.run_child({'circuit': c, 'level': 'base', 'exc': 1, 'sim_path': sp, 'max_ts': mr.MAX_TS},
                         os.path.join(args.work, f'{c}_base_exc1.log'), script=mr.__file__)
    f_ghz = mr.FREQS_GHZ
    f_hz = f_ghz * 1e9
    cal = mr.line_calibration(args.work, 'base', f_hz)
    res = mr.analyse(args.work, 'launches', 'base', f_hz, cal, excs=(1,))
    z_hj, e_hj = mr.hammerstad_jensen(mr.W_LINE, mr.H, mr.EPS_R)
    dl = open_end_kj(mr.W_LINE, mr.H, mr.EPS_R, e_hj)
    lines = ['# openEMS (base mesh) on the launches alone: port 1 capacitance, fF (launches.py)',
             f'# launch {LAUNCH_MM:.4f} mm, open end dl {dl:.4f} mm (Kirschning-Jansen-Koster, HJ eps_eff {e_hj:.3f})']
    for fv in (0.5, 1.0):
        i = mr.idx_of(f_ghz, fv)
        w = 2 * math.pi * fv * 1e9
        pl = cal['planes'][mr.PRIMARY]
        z, e = pl['Z_shift'][i], pl['eps_eff'][i]
        c_line = math.sqrt(e) / (mr.C0 * z)
        one, two = c_line * (LAUNCH_MM + dl) * 1e-3, c_line * (LAUNCH_MM + 2 * dl) * 1e-3
        lines.append(f'{fv:g} GHz: feed line {z:.2f} ohm, eps_eff {e:.3f}, C\' {c_line * 1e12:.2f} pF/m; '
                     f'closed form with one open end {one * 1e15:.1f}, with two {two * 1e15:.1f}')
        for key in sorted(k for k in res['S'] if not k.startswith('raw_')):   # raw_*: planes 5, 10 mm out
            s = res['S'][key][i]
            c1 = -math.tan(np.angle(s[0, 0]) / 2) / (w * mr.Z_REF)
            lines.append(f'  V/I {key:10s} C1 {c1 * 1e15:6.1f}   |S21| {abs(s[1, 0]):.5f}')
    open(os.path.join(HERE, 'launches.txt'), 'w').write('\n'.join(lines) + '\n')
    print('\n'.join(lines))


if __name__ == '__main__':
    main()
