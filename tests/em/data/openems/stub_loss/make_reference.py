#!/usr/bin/python3
"""openEMS (FDTD) reference for the power the open-stub example radiates.

Why: the stub reference of ../stub.s2p measures V and I at the reference planes themselves, 16 mm
from its absorbing boundary, and its own power balance is good to about 0.5 % (|S11|^2 + |S21|^2
reaches 1.005; its lost power is -0.47 % at 1.5 GHz), the size of the radiated power the issue
compares (0.7-1.1 % at 2.25-4 GHz). This run measures the same circuit the way
../momentum/make_reference.py measures the pixel maps: V/I probes 5 and 10 mm out on the feed
lines, carried to the reference planes with the feed line's own FDTD phase and impedance, the
power-balance floor from a uniform through line on the same mesh, and about a quarter of a
free-space wavelength at 2 GHz between the metal and the absorbing boundary.

What: examples/stub.json's drawing (main line x 0..40 mm, W 3.062 mm centred on y = 0; open stub
x 18.469..21.531 mm, y 1.531..22.061 mm) on h = 1.6 mm, eps_r = 4.4, lossless substrate running
through the PML, infinite PEC ground, zero-thickness PEC metal. The feed lines continue the main
line outward through the x-PML (matched semi-infinite lines); a soft E_z source 25 mm out drives
port 1. The circuit and the mesh are symmetric about x = 20 mm, so port 2's run is port 1's
mirrored (S22 = S11, S12 = S21). S = B inv(A), 50 ohm, 0.5-4 GHz in 5 MHz steps.

Run (Debian bookworm: apt-get install openems python3-openems; see ../momentum/README.md for
the BLAS alternatives that installing them switches):
    cd tests/em/data/openems/stub_loss
    nice -n 10 ./make_reference.py [--work DIR] [--reuse] [--margin-check] [--fine-check]
It writes stub_loss.s2p, stub_loss_edge_ports.s2p, line_edge_ports.s2p, stub_loss.json and
stub_loss.txt next to itself; the runs go to --work (default /tmp/openems_stub_loss). Four runs
(thru and stub with matched feeds, both with lumped edge ports) of under a minute each on 2
cores; --margin-check adds the matched-feed pair with every air margin 1.5 times larger,
--fine-check all four on a mesh twice as fine on and under the metal (about 3 minutes each).
Not part of any test suite.
"""

import argparse
import json
import os
import subprocess
import sys
import time

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, '..', 'momentum'))
# The pixel maps' reference script owns the probe, DFT and S-parameter conventions: reuse them.
import make_reference as mr  # noqa: E402

# ----------------------------------------------------------------------------------------------
# Geometry (mm), examples/stub.json
H = 1.6
EPS_R = 4.4
LX = 40.0                                   # main line x 0..40
W = 3.062
Y0_LINE, Y1_LINE = -W / 2, W / 2
STUB_X = (18.469, 21.531)
STUB_Y1 = 22.061
X_MID = LX / 2                              # the circuit's mirror plane

# Mesh / domain (mm)
D_EDGE = W / 12                             # 12 cells across the strips, lines on the metal edges
DMAX_METAL = 0.75                           # along the strips (lambda_g / 25 at 4 GHz)
DMAX_XY = 1.5                               # in air over the substrate (lambda_0 / 50 at 4 GHz)
DMAX_Z_AIR = 2.5
GRADE = 1.3
N_PML = 8
X_EXC_OUT = 25.0                            # excitation plane, outward from the reference plane
PLANES_OUT = mr.PLANES_OUT                  # V/I planes 5 and 10 mm out (vi_planes reads them)
PRIMARY = mr.PRIMARY
D_PLANE = mr.D_M2                           # uniform probe spacing around every V/I plane
MARGINS = {'x_feed': 30.0, 'y': 38.0, 'z': 36.0}   # metal to PML: ~lambda_0/4 at 2 GHz

F0, FC = 2.25e9, 2.25e9                     # Gaussian: -20 dB at 0 and 4.5 GHz
END_CRITERIA = 1e-5                         # -50 dB energy
MAX_TS = 400000
FREQS_GHZ = np.round(0.5 + 0.005 * np.arange(701), 6)
Z_REF = mr.Z_REF


def half_x_lines(margin, refine):
    """x lines from the PML to the mirror plane x = 20 mm (the other half is mirrored)."""
    xfeed = margin['x_feed']
    dp, de, dm = D_PLANE / refine, D_EDGE / refine, DMAX_METAL / refine
    inner = [0.0, dp, 2 * dp]                                # uniform around the reference plane
    inner += mr.fill(2 * dp, STUB_X[0], dp, de, dm, GRADE)
    n = int(round((X_MID - STUB_X[0]) / de * 2)) // 2        # the stub's half, uniform
    inner += list(np.linspace(STUB_X[0], X_MID, n + 1))
    west = [-dp, -2 * dp]
    prev = west[-1]
    for dist in sorted(PLANES_OUT.values()):
        trip = [-dist + dp, -dist, -dist - dp]
        west += sorted(mr.fill(trip[0], prev, dp, dp, DMAX_XY, GRADE), reverse=True)
        west += trip
        prev = trip[-1]
    xpml = -xfeed
    west += sorted(mr.fill(xpml, prev, DMAX_XY, dp, DMAX_XY, GRADE), reverse=True)
    west += [xpml] + [xpml - DMAX_XY * (i + 1) for i in range(N_PML)]
    return np.array(west + inner)


def build_mesh(margin, refine=1):
    """The mesh for these air margins; refine = 2 halves every cell on and under the metal."""
    half = half_x_lines(margin, refine)
    x = np.unique(np.round(np.concatenate([half, 2 * X_MID - half]), 9))

    de, dm = D_EDGE / refine, DMAX_METAL / refine
    strip = list(np.linspace(Y0_LINE, Y1_LINE, 12 * refine + 1))
    stub = mr.fill(Y1_LINE, STUB_Y1, de, de, dm, GRADE)
    ypml0, ypml1 = Y0_LINE - margin['y'], STUB_Y1 + margin['y']
    south = mr.fill(ypml0, Y0_LINE, DMAX_XY, de, DMAX_XY, GRADE)
    north = mr.fill(STUB_Y1, ypml1, de, DMAX_XY, DMAX_XY, GRADE)
    y = ([ypml0 - DMAX_XY * (i + 1) for i in range(N_PML)] + [ypml0] + south + strip + stub
         + [STUB_Y1] + north + [ypml1] + [ypml1 + DMAX_XY * (i + 1) for i in range(N_PML)])
    y = np.unique(np.round(np.array(y), 9))

    nz = 6 * refine
    dz = H / nz
    zs = [i * dz for i in range(nz + 1)]
    zpml = H + margin['z']
    z = zs + mr.fill(H, zpml, dz, DMAX_Z_AIR, DMAX_Z_AIR, GRADE) + [zpml] + \
        [zpml + DMAX_Z_AIR * (i + 1) for i in range(N_PML)]
    z = np.unique(np.round(np.array(z), 9))
    return {'x': x, 'y': y, 'z': z}


def port_geometry(mesh, port):
    """Probe positions of a port (u points INTO the circuit): the pixel maps' layout of probes."""
    return mr.port_geometry(mesh, port, lx=LX, x_exc_out=X_EXC_OUT)


def setup_and_run(cfg):
    mesh = build_mesh(cfg['margin'], cfg.get('refine', 1))
    FDTD, CSX = mr.new_simulation(mesh, F0, FC, MAX_TS, EPS_R, H)
    x = mesh['x']
    metal = CSX.AddMetal('pec_sheet')
    edge_ports = cfg['circuit'].endswith('_edge')
    if edge_ports:          # Solvent's raw edge ports: the line ends at lumped 50-ohm ports
        metal.AddBox([0.0, Y0_LINE, H], [LX, Y1_LINE, H], priority=10)
    else:                   # matched feed lines through the PML
        metal.AddBox([x[0], Y0_LINE, H], [x[-1], Y1_LINE, H], priority=10)
    if cfg['circuit'].startswith('stub'):
        metal.AddBox([STUB_X[0], Y1_LINE, H], [STUB_X[1], STUB_Y1, H], priority=10)
    if not edge_ports:
        for port in (1, 2):
            mr.add_feed_probes(CSX, port_geometry(mesh, port), Y0_LINE, Y1_LINE, H, port == 1)
        mr.run_and_time(FDTD, cfg['sim_path'])
        return
    # bookworm's openEMS/ports.py still says np.float, which its numpy (1.24) no longer has
    np.float = float
    ports = [FDTD.AddLumpedPort(p, Z_REF, [xp, Y0_LINE, 0.0], [xp, Y1_LINE, H], 'z',
                                excite=1.0 if p == 1 else 0.0, priority=5)
             for p, xp in ((1, 0.0), (2, LX))]
    mr.run_and_time(FDTD, cfg['sim_path'])
    VI = []
    for port in ports:
        port.CalcPort(cfg['sim_path'], FREQS_GHZ * 1e9, ref_impedance=Z_REF)
        VI.append((port.uf_tot, port.if_tot))
    np.save(os.path.join(cfg['sim_path'], 'edge_ports_vi.npy'), np.array(VI))


def edge_port_s(sim_path):
    """S of a run with lumped edge ports (V, I into the circuit from openEMS's own port
    probes), port 2's run as port 1's mirrored."""
    VI = np.load(os.path.join(sim_path, 'edge_ports_vi.npy'))
    runs = {1: {1: tuple(VI[0]), 2: tuple(VI[1])}}
    runs[2] = {1: runs[1][2], 2: runs[1][1]}
    return mr.s_from_runs(runs)


def line_calibration(sim_path, mesh, f_hz):
    """The feed line's phase and impedance between each V/I plane and the reference plane, from
    the thru run's non-driven port 2, where only the outgoing wave is (../momentum's method)."""
    return mr.line_calibration_from(sim_path, port_geometry(mesh, 2), f_hz)


def s_parameters(sim_path, cal, f_hz):
    """S at the reference planes from every V/I plane, port 2's run as port 1's mirrored."""
    planes = ['ref'] + list(PLANES_OUT)
    VI = {}
    for p in (1, 2):
        pd = {pl: mr.port_data(sim_path, p, pl, f_hz)[0] for pl in planes}
        for key, val in mr.vi_planes(pd, cal).items():
            VI.setdefault(key, {1: {}})[1][p] = val
    for key in VI:
        VI[key][2] = {1: VI[key][1][2], 2: VI[key][1][1]}
    return {key: mr.s_from_runs(VI[key]) for key in VI}


def notch(f_ghz, s21):
    i = int(np.argmin(np.abs(s21)))
    a, b, c = np.log(np.abs(s21[i - 1:i + 2]))
    return float(f_ghz[i] + 0.5 * (a - c) / (a - 2 * b + c) * (f_ghz[1] - f_ghz[0]))


def write_s2p(path, f_ghz, S, header):
    mr.write_s2p(path, f_ghz, S, header, f_decimals=4)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    ap.add_argument('--work', default='/tmp/openems_stub_loss')
    ap.add_argument('--reuse', action='store_true', help='reuse finished runs found in --work')
    ap.add_argument('--margin-check', action='store_true', help='rerun with 1.5x air margins')
    ap.add_argument('--fine-check', action='store_true', help='rerun on a 2x finer board mesh')
    ap.add_argument('--_child', default=None, help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args._child:
        setup_and_run(json.loads(args._child))
        return

    # variant: (air margins, mesh refinement, with the lumped-port runs)
    variants = {'base': (MARGINS, 1, True)}
    if args.margin_check:
        variants['wide'] = ({k: 1.5 * v for k, v in MARGINS.items()}, 1, False)
    if args.fine_check:
        variants['fine'] = (MARGINS, 2, True)
    f_hz = FREQS_GHZ * 1e9
    res = {}
    for mname, (margin, refine, edge_runs) in variants.items():
        mesh = build_mesh(margin, refine)
        paths, stats = {}, {}
        circuits = ('thru', 'stub') + (('thru_edge', 'stub_edge') if edge_runs else ())
        for circuit in circuits:
            sp = os.path.join(args.work, f'{circuit}_{mname}')
            log = sp + '.log'
            if not (args.reuse and os.path.exists(os.path.join(sp, 'run_wall.json'))):
                print(f'[{time.strftime("%H:%M:%S")}] running {circuit} ({mname}) ...', flush=True)
                mr.run_child({'circuit': circuit, 'margin': margin, 'refine': refine, 'sim_path': sp}, log,
                             script=__file__)
            st = mr.parse_log(log)
            st.update(json.load(open(os.path.join(sp, 'run_wall.json'))))
            stats[circuit] = {k: st.get(k) for k in ('timesteps_run', 'last_logged_energy_dB',
                                                     'end_criterion_met', 'wall_runtime_s',
                                                     'openems_reported_size_mesh_nodes')}
            paths[circuit] = sp
            print(f'  {circuit}: {stats[circuit]}', flush=True)
        cal = line_calibration(paths['thru'], mesh, f_hz)
        res[mname] = {'mesh': mesh, 'margin': margin, 'stats': stats, 'cal': cal,
                      'thru': s_parameters(paths['thru'], cal, f_hz),
                      'stub': s_parameters(paths['stub'], cal, f_hz)}
        if edge_runs:
            res[mname]['edge'] = {c: edge_port_s(paths[c + '_edge']) for c in ('thru', 'stub')}
    report(res, f_hz)


def report(res, f_hz):
    f_ghz = FREQS_GHZ
    key = 'shift_' + PRIMARY
    base = res['base']
    S = base['stub'][key]
    head_f = [0.5, 1.0, 1.5, 2.0, 2.25, 2.5, 2.75, 3.0, 3.25, 3.5, 3.75, 4.0]
    idx = [int(np.argmin(np.abs(f_ghz - f))) for f in head_f]
    pct = lambda S_: 100 * mr.lost(S_)[0]   # noqa: E731
    def plane(k):
        if k == 'edge':
            return 'V/I at the reference planes'
        how, p = k.split('_')
        return f'V/I {PLANES_OUT[p]:g} mm out' + (', shifted' if how == 'shift' else ', not shifted')
    rows = {f'stub, matched feeds, {plane(k)}': pct(v) for k, v in base['stub'].items()}
    rows.update({f'thru, matched feeds, {plane(k)}': pct(v) for k, v in base['thru'].items()})
    for c in ('stub', 'thru'):
        rows[c + ', lumped edge ports'] = pct(base['edge'][c])
    if 'wide' in res:
        rows[f'stub, matched feeds, {plane(key)}, margins x 1.5'] = pct(res['wide']['stub'][key])
        rows[f'thru, matched feeds, {plane(key)}, margins x 1.5'] = pct(res['wide']['thru'][key])
    if 'fine' in res:
        fine = res['fine']
        rows[f'stub, matched feeds, {plane(key)}, mesh x 2'] = pct(fine['stub'][key])
        rows[f'thru, matched feeds, {plane(key)}, mesh x 2'] = pct(fine['thru'][key])
        rows['stub, lumped edge ports, mesh x 2'] = pct(fine['edge']['stub'])
        rows['thru, lumped edge ports, mesh x 2'] = pct(fine['edge']['thru'])
    sv = np.array([np.linalg.svd(s, compute_uv=False)[0] for s in S])
    n_f = notch(f_ghz, S[:, 1, 0])
    eps = base['cal']['planes'][PRIMARY]['eps_eff']
    zl = base['cal']['planes'][PRIMARY]['Z_shift']
    deb = subprocess.run(['dpkg-query', '-W', '-f=${Version}', 'openems'], capture_output=True,
                         text=True).stdout.strip()
    header = [f'openEMS {deb} FDTD: examples/stub.json, lossless (tests/em/data/openems/stub_loss)',
              f'V/I {PLANES_OUT[PRIMARY]:g} mm out on the feed lines, carried to x = 0 and 40 mm; 50 ohm']
    write_s2p(os.path.join(HERE, 'stub_loss.s2p'), f_ghz, S, header)
    write_s2p(os.path.join(HERE, 'stub_loss_edge_ports.s2p'), f_ghz, base['edge']['stub'],
              header[:1] + ['lumped 50-ohm ports across the line ends at x = 0 and 40 mm (no feed lines)'])
    write_s2p(os.path.join(HERE, 'line_edge_ports.s2p'), f_ghz, base['edge']['thru'],
              [header[0].replace('examples/stub.json', "examples/stub.json's main line alone"),
               'lumped 50-ohm ports across the line ends at x = 0 and 40 mm (no feed lines)'])

    lines = ['stub (examples/stub.json), lossless, openEMS FDTD: lost power 1 - |S11|^2 - |S21|^2, %',
             'f GHz: ' + ' '.join(f'{f:6.2f}' for f in head_f)]
    for name, v in rows.items():
        lines.append(f'{name}: ' + ' '.join(f'{v[i]:6.3f}' for i in idx))
    lines.append(f'notch (min |S21|, parabolic): {n_f:.4f} GHz')
    lines.append(f'max singular value of S: {sv.max():.5f} at {f_ghz[int(np.argmax(sv))]:.3f} GHz')
    lines.append('feed line (thru, port 2, ' + PRIMARY + ' plane): ' + ', '.join(
        f'{f:g} GHz Z {zl[i]:.2f} ohm eps_eff {eps[i]:.3f}' for f, i in
        zip((1.0, 2.0, 4.0), [int(np.argmin(np.abs(f_ghz - f))) for f in (1.0, 2.0, 4.0)])))
    for mname, r in res.items():
        lines.append(f'runs ({mname}): ' + json.dumps(r['stats']))
    open(os.path.join(HERE, 'stub_loss.txt'), 'w').write('\n'.join(lines) + '\n')
    print('\n'.join(lines))

    setup = {'geometry_mm': {'h': H, 'eps_r': EPS_R, 'main_line': [0, LX, Y0_LINE, Y1_LINE],
                             'stub': [STUB_X[0], STUB_X[1], Y1_LINE, STUB_Y1]},
             'mesh': {m: {a: mr.mesh_stats(r['mesh'][a]) for a in 'xyz'} for m, r in res.items()},
             'margins_mm': {m: r['margin'] for m, r in res.items()},
             'excitation': {'f0_Hz': F0, 'fc_Hz': FC, 'plane_out_mm': X_EXC_OUT},
             'vi_planes_out_mm': PLANES_OUT, 'primary_plane': PRIMARY, 'end_criteria': END_CRITERIA,
             'openems_debian_version': deb, 'runs': {m: r['stats'] for m, r in res.items()},
             'lost_power_percent_at_GHz': {name: {f'{head_f[j]:g}': round(float(v[i]), 4)
                                                  for j, i in enumerate(idx)} for name, v in rows.items()},
             'notch_GHz': n_f, 'max_singular_value': float(sv.max())}
    json.dump(setup, open(os.path.join(HERE, 'stub_loss.json'), 'w'), indent=1)


if __name__ == '__main__':
    main()
