#!/usr/bin/python3
"""A filter designed by `solvent design`, checked by openEMS (FDTD) and by Solvent's own full model.

What: spec.json designs a low-pass filter in the 9 x 11 region of the Momentum dataset's board
(board.json: examples/design/board.json with de-embedded ports); map.csv is the map it gives.
goal.json holds the masks the filter is judged by (spec.json asks 2 dB more in the stop band).
This script runs that map in openEMS with the set-up of ../momentum/make_reference.py, reused
function for function (mesh, 56-mil feed lines through the PML, V/I probes 5 mm out carried to
the board edges with the thru line's phase and impedance, lossless substrate, zero-thickness PEC),
sweeps the same map with Solvent three ways (the design model, the full default model, and
openEMS's stack-up), and writes each goal mask's margin in each tool.

Run (Debian: apt-get install openems python3-openems; read ../momentum/README.md first, about
the BLAS alternatives that installing them switches):
    cd tests/em/data/openems/design
    nice -n 10 ./make_design_reference.py [--work DIR] [--reuse] [--exc 1|1,2] [--fine] [--solvent PATH]
    ./make_design_reference.py --design          # first rerun `solvent design spec.json` (map.csv)
Writes openems.s2p (openems_fine.s2p with --fine), openems.json and margins.txt next to itself (the validation
report scripts/validation/design_openems.py plots them). FDTD runs go to --work
(default /tmp/openems_design); --reuse takes finished runs from there. Runs: the base mesh's
thru line (the feed line's calibration) and the map with port 1 driven (--exc 1,2 adds port 2:
the full S; with port 1 alone S11 = b1/a1 and S21 = b2/a1, a2 being the small reflection of the
matched feed line at port 2, reported); --fine adds the map on make_reference's 2x finer mesh,
port 1 driven, compared with the base mesh at the board edges (the mesh check). Not part of any
test suite.
"""

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, '..', 'momentum'))
import make_reference as mr  # noqa: E402  (the Momentum circuits' openEMS set-up, reused as is)

ROOT = os.path.normpath(os.path.join(HERE, '..', '..', '..', '..', '..'))
CIRCUIT = 'design'
S_INDEX = {'S11': (0, 0), 'S21': (1, 0), 'S12': (0, 1), 'S22': (1, 1)}


def read_map(path=os.path.join(HERE, 'map.csv')):
    """The design's map as G[iy][ix], iy = 0 the BOTTOM row (make_reference's convention)."""
    rows = [[int(v) for v in line.split(',')] for line in open(path) if line.strip()]
    g = np.array(rows, int)
    assert g.shape == (mr.NROW, mr.NCOL), g.shape
    return g[::-1, :].copy()


def setup_and_run(cfg):
    """make_reference.setup_and_run with this folder's map instead of a dataset circuit."""
    level, exc_port, sim_path = cfg['level'], cfg['exc'], cfg['sim_path']
    mesh = mr.build_mesh(level)
    m, _ = mr.cell_mask(read_map(), mesh['nsub'], mr.LEVELS[level]['notch'])
    FDTD, CSX = mr.new_simulation(mesh, mr.F0, mr.FC, cfg.get('max_ts', mr.MAX_TS), mr.EPS_R, mr.H)
    x = mesh['x']
    metal = CSX.AddMetal('pec_sheet')
    for (x0, x1, y0, y1) in mr.mask_rectangles(m, mesh['d_board']):
        metal.AddBox([x0, y0, mr.H], [x1, y1, mr.H], priority=10)
    metal.AddBox([x[0], mr.Y0_LINE, mr.H], [0.0, mr.Y1_LINE, mr.H], priority=10)      # west feed line
    metal.AddBox([mr.LX, mr.Y0_LINE, mr.H], [x[-1], mr.Y1_LINE, mr.H], priority=10)   # east feed line
    for port in (1, 2):
        mr.add_feed_probes(CSX, mr.port_geometry(mesh, port), mr.Y0_LINE, mr.Y1_LINE, mr.H, port == exc_port)
    mr.run_and_time(FDTD, sim_path)


def run_all(work, excs, reuse, fine):
    """The thru line (by make_reference itself) and the map, one run at a time; with fine, the
    map again on make_reference's 2x finer mesh, port 1 driven (the mesh check)."""
    plan = [('thru', 'base', 1, mr.__file__)] + [(CIRCUIT, 'base', k, __file__) for k in excs]
    if fine:
        plan += [(CIRCUIT, 'fine', 1, __file__)]
    stats = {}
    for (c, lev, k, script) in plan:
        sim_path = os.path.join(work, f'{c}_{lev}_exc{k}')
        log_path = sim_path + '.log'
        done = os.path.join(sim_path, 'run_wall.json')
        if not (reuse and os.path.exists(done)):
            print(f'[{time.strftime("%H:%M:%S")}] running {c} {lev} exc{k} ...', flush=True)
            mr.run_child({'circuit': c, 'level': lev, 'exc': k, 'sim_path': sim_path, 'max_ts': mr.MAX_TS},
                         log_path, script=script)
        st = mr.parse_log(log_path)
        st.update(json.load(open(done)))
        stats[(c, lev, k)] = st
        print(f'[{time.strftime("%H:%M:%S")}] {c} {lev} exc{k}: {st.get("timesteps_run")} steps, '
              f'{st.get("last_logged_energy_dB")} dB, {st.get("wall_runtime_s", 0):.0f} s', flush=True)
    return stats


# ----------------------------------------------------------------------------------------------
# Solvent: the same map three ways, at openEMS's 200 frequencies (the board's sweep section)

SOLVENT_VARIANTS = [
    ('solvent_design_model', "Solvent, the design model (board.json: copper sheet, tan d 0.01 exact, no radiation, "
                             "no edge profiles)", None),
    ('solvent_full', "Solvent, its full default model (thick copper, tan d 0.01, radiation, edge profiles)",
     {'drop_effects': True}),
    ('solvent_openems_stackup', "Solvent, openEMS's stack-up (perfect sheet metal, lossless, radiation, edge profiles)",
     {'drop_effects': True, 'metal': {'conductivity': 'inf'}, 'tan_delta': 0.0}),
]


def solvent_project(variant, map_csv):
    """board.json with the design's map, changed as the variant says (None: as the design sees it)."""
    p = json.load(open(os.path.join(HERE, 'board.json')))
    p['pixels'] = {'csv': map_csv}
    if variant:
        if variant.get('drop_effects'):
            p.pop('effects', None)
        if 'metal' in variant:
            p['metal'] = variant['metal']
        if 'tan_delta' in variant:
            p['substrate']['tan_delta'] = variant['tan_delta']
    return p


def solvent_sweeps(solvent):
    """The map swept by each variant: {name: (label, S[f, 2, 2])}."""
    out = {}
    with tempfile.TemporaryDirectory() as tmp:
        for name, label, variant in SOLVENT_VARIANTS:
            prj = os.path.join(tmp, name + '.json')
            json.dump(solvent_project(variant, os.path.join(HERE, 'map.csv')), open(prj, 'w'))
            s2p = os.path.join(tmp, name + '.s2p')
            subprocess.run([solvent, 'sweep', prj, '-o', s2p, '--quiet'], check=True)
            f, S = read_s2p(s2p)
            assert np.allclose(f, mr.FREQS_GHZ), 'the sweep is not openEMS\'s 0.05-10 GHz grid'
            out[name] = (label, S)
    return out


def read_s2p(path):
    """Frequencies (GHz) and S[f, 2, 2] of a 2-port Touchstone file in GHz, RI."""
    rows = []
    for line in open(path):
        s = line.strip()
        if not s or s[0] == '!':
            continue
        if s[0] == '#':
            assert s.upper().split()[:5] == ['#', 'GHZ', 'S', 'RI', 'R'], s
            continue
        rows.append([float(v) for v in s.split()])
    d = np.array(rows)
    S = np.zeros((len(d), 2, 2), complex)
    for k, (i, j) in enumerate([(0, 0), (1, 0), (0, 1), (1, 1)]):   # file order S11 S21 S12 S22
        S[:, i, j] = d[:, 1 + 2 * k] + 1j * d[:, 2 + 2 * k]
    return d[:, 0], S


def redesign(solvent):
    """solvent design spec.json into a temporary folder; its map.csv replaces this folder's."""
    with tempfile.TemporaryDirectory() as tmp:
        subprocess.run([solvent, 'design', os.path.join(HERE, 'spec.json'), '-o', tmp, '--threads', '1'], check=True)
        shutil.copy(os.path.join(tmp, 'map.csv'), os.path.join(HERE, 'map.csv'))


# ----------------------------------------------------------------------------------------------
# Margins

def margins(masks, f_ghz, S):
    """Each mask's worst margin in dB over the grid's points in its band (> 0: met), with where."""
    out = []
    for m in masks:
        i, j = S_INDEX[m['s']]
        sel = (f_ghz >= m['start'] - 1e-9) & (f_ghz <= m['stop'] + 1e-9)
        v = mr.db(S[sel, i, j])
        gap = (m['bound_db'] - v) if m['type'] == 'max' else (v - m['bound_db'])
        k = int(np.argmin(gap))
        out.append({'margin_dB': float(gap[k]), 'at_GHz': float(f_ghz[sel][k]), 'value_dB': float(v[k])})
    return out


def mask_name(m):
    rel = '<=' if m['type'] == 'max' else '>='
    return f"|{m['s']}| {rel} {m['bound_db']:g} dB, {m['start']:g}-{m['stop']:g} GHz"


# ----------------------------------------------------------------------------------------------
# openEMS's S and what it rests on

PLANE_NAMES = {'edge': 'board edge (0 mm)', 'shift_m5': '5 mm out, shifted (the s2p)', 'shift_m10': '10 mm out, shifted'}


def openems_s(work, excs, f_hz):
    """S of the map per V/I plane, from both runs (S = B inv(A)) or from port 1's alone."""
    cal = mr.line_calibration(work, 'base', f_hz)
    r = mr.analyse(work, CIRCUIT, 'base', f_hz, cal, excs=tuple(excs))
    S, a2 = {}, None
    for key in PLANE_NAMES:
        if 2 in excs:
            S[key] = mr.s_from_runs(r['VI'][key])
        else:
            s11, s21, a21 = mr.single_run_s(r['VI'][key][1])
            S[key] = np.zeros((len(f_hz), 2, 2), complex)
            S[key][:, 0, 0], S[key][:, 1, 0] = s11, s21
            S[key][:, 0, 1], S[key][:, 1, 1] = np.nan, np.nan
            if key == mr.PK:
                a2 = a21
    thru = mr.analyse(work, 'thru', 'base', f_hz, cal, excs=(1,))
    return {'S': S, 'a2_over_a1': a2, 'cal': cal, 'analysis': r, 'thru_lost': mr.lost(thru['S'][mr.PK])[0]}


def openems_checks(o, excs, f_ghz):
    """Power balance, reciprocity, the thru's floor and the spread over the V/I planes."""
    S = o['S'][mr.PK]
    p1 = 1 - np.abs(S[:, 0, 0]) ** 2 - np.abs(S[:, 1, 0]) ** 2
    ck = {'lost_power_percent_port1_at': {f'{fv:g}': float(100 * mr.at(p1, f_ghz, fv)) for fv in mr.HEAD_F_P},
          'thru_floor_lost_percent_max_abs': float(100 * np.max(np.abs(o['thru_lost']))),
          'max_plane_difference_dB': {
              PLANE_NAMES[k]: {s: float(np.max(np.abs(mr.db(o['S'][k][:, i, j]) - mr.db(S[:, i, j]))))
                               for s, (i, j) in (('S11', (0, 0)), ('S21', (1, 0)))}
              for k in PLANE_NAMES if k != mr.PK}}
    if 2 in excs:
        ck['max_singular_value'] = float(np.max(mr.sv_max(S)))
        ck['max_abs_S21_minus_S12'] = float(np.max(np.abs(S[:, 1, 0] - S[:, 0, 1])))
    else:
        ck['max_abs_a2_over_a1'] = float(np.max(o['a2_over_a1']))
    return ck


def openems_json(o, excs, stats, checks, f_ghz):
    """The complete set-up of the run, as make_reference.py's simN.json has it, and its checks."""
    mesh = o['analysis']['mesh']
    g = read_map()
    m, _ = mr.cell_mask(g, mesh['nsub'], mr.LEVELS['base']['notch'])
    lab, ncomp = mr.metal_connected_components(m)
    iyc = int(mr.YC_LINE / mesh['d_board'])
    z_hj, e_hj = mr.hammerstad_jensen(mr.W_LINE, mr.H, mr.EPS_R)
    deb = subprocess.run(['dpkg-query', '-W', '-f=${Version}', 'openems'], capture_output=True, text=True).stdout.strip()
    return {
        'name': 'design (map.csv from spec.json)',
        'solver': {'name': 'openEMS FDTD', 'debian_package_version': deb, 'threads': mr.THREADS,
                   'probe_oversampling': mr.OVERSAMPLING, 'run_under': 'nice -n 10, one run at a time'},
        'set_up': 'tests/em/data/openems/momentum/make_reference.py (its functions, unchanged): see that '
                  "folder's README.md and simN.json for every choice",
        'units': 'mm, GHz',
        'source_geometry': {'pixelmap': 'tests/em/data/openems/design/map.csv', 'pixel_mm': mr.P,
                            'columns': mr.NCOL, 'rows': mr.NROW, 'metal_pixels': int(g.sum()),
                            'corner_only_contacts': len(mr.corner_contacts(g)),
                            'separate_metal_pieces': int(ncomp),
                            'dc_connected_port_to_port': bool(lab[iyc, 0] == lab[iyc, -1] and lab[iyc, 0] > 0)},
        'stack_up': {'eps_r': mr.EPS_R, 'tan_delta': 0.0, 'h_mm': mr.H,
                     'metal': 'zero-thickness PEC sheet at z = h; PEC ground at z = 0; substrate through the PML'},
        'metal_rectangles_mm_[x0,x1,y0,y1]': [[round(v, 6) for v in rr] for rr in mr.mask_rectangles(m, mesh['d_board'])],
        'ports': [mr.port_json(o['analysis']['ports'][p], z_hj, e_hj) for p in (1, 2)],
        's_parameters': ('S = B inv(A) from the runs driving port 1 and port 2' if 2 in excs else
                         'port 1 driven only: S11 = b1/a1, S21 = b2/a1 (a2: the matched feed line\'s reflection, '
                         'in checks.max_abs_a2_over_a1); S12, S22 not measured'),
        'mesh': {ax: mr.mesh_stats(mesh[ax]) for ax in 'xyz'},
        'cells': int((len(mesh['x']) - 1) * (len(mesh['y']) - 1) * (len(mesh['z']) - 1)),
        'excitation': {'type': 'Gaussian pulse', 'f0_Hz': mr.F0, 'fc_20dB_Hz': mr.FC},
        'end_criterion_energy_dB': 10 * np.log10(mr.END_CRITERIA),
        'runs': {f'{c} {lev} exc{k}': mr.run_stats_json(st, k) for (c, lev, k), st in stats.items()},
        'frequencies_GHz': [float(f_ghz[0]), float(f_ghz[-1]), int(len(f_ghz))],
        'checks': checks}


def mesh_check(work, goal, f_ghz):
    """Port 1's runs on the base and the 2x finer mesh, both read at the board edges themselves
    (V, I measured there: no feed-line shift, so no thru line per mesh): the goal margins and
    |S21|, |S11| from S11 = b1/a1, S21 = b2/a1."""
    single = {}
    for lev in ('base', 'fine'):
        sp = os.path.join(work, f'{CIRCUIT}_{lev}_exc1')
        vi = {}
        for p in (1, 2):
            pd, _ = mr.port_data(sp, p, 'ref', f_ghz * 1e9)
            vi[p] = (pd['VB'], 0.5 * (pd['Ip'] + pd['Im']))      # make_reference.vi_planes' 'edge'
        s11, s21, _ = mr.single_run_s(vi)
        S = np.zeros((len(f_ghz), 2, 2), complex)
        S[:, 0, 0], S[:, 1, 0] = s11, s21
        single[lev] = S
    write_fine_s2p(f_ghz, single['fine'])
    probe = (1.0, 2.0, 5.0, 8.0, 9.0, 9.5, 10.0)
    return {'compared': 'port-1-driven runs read at the board edges (V, I measured there), S11 = b1/a1 and '
                        'S21 = b2/a1, base mesh (4 cells per pixel, 6 in h) vs fine (8 per pixel, 12 in h)',
            'goal_margins_dB_base_fine': [[a['margin_dB'], b['margin_dB']] for a, b in
                                          zip(margins(goal, f_ghz, single['base']), margins(goal, f_ghz, single['fine']))],
            'S21_dB_base_fine': {f'{fv:g}': [mr.db(mr.at(single[lv], f_ghz, fv)[1, 0]) for lv in ('base', 'fine')] for fv in probe},
            'S11_dB_base_fine': {f'{fv:g}': [mr.db(mr.at(single[lv], f_ghz, fv)[0, 0]) for lv in ('base', 'fine')] for fv in probe},
            'cells_fine': int(np.prod([len(mr.build_mesh('fine')[a]) - 1 for a in 'xyz']))}


def write_fine_s2p(f_ghz, S):
    """openems_fine.s2p: the finer mesh's S11 and S21 (port 1 driven, read at the board edges)."""
    S_file = S.copy()
    S_file[:, 0, 1], S_file[:, 1, 1] = S[:, 1, 0], S[:, 0, 0]
    mr.write_s2p(os.path.join(HERE, 'openems_fine.s2p'), f_ghz, S_file, [
        'tests/em/data/openems/design/map.csv: openEMS FDTD on make_reference.py\'s 2x finer mesh (the mesh check)',
        f'LOSSLESS: eps_r={mr.EPS_R}, tan d=0, h={mr.H} mm, zero-thickness PEC strip, infinite PEC ground and substrate',
        'port 1 driven only, V/I measured at the board edges: S11 = b1/a1, S21 = b2/a1; 50 ohm',
        'order S11 S21 S12 S22; S12 := S21 (reciprocity), S22 := S11 (not measured)'])


# ----------------------------------------------------------------------------------------------
# Outputs

def postprocess(args, excs, stats):
    f_ghz = mr.FREQS_GHZ
    o = openems_s(args.work, excs, f_ghz * 1e9)
    S_oe = o['S'][mr.PK]
    header = ['tests/em/data/openems/design/map.csv: openEMS FDTD, make_design_reference.py (make_reference.py set-up)',
              f'LOSSLESS: eps_r={mr.EPS_R}, tan d=0, h={mr.H} mm, zero-thickness PEC strip, infinite PEC ground and substrate',
              'ports: 56-mil microstrip lines into the PML; V/I measured 5 mm out, carried to the board edges; 50 ohm',
              'order S11 S21 S12 S22' + ('' if 2 in excs else '; port 1 driven only: S12 := S21 (reciprocity), '
                                                            'S22 := S11 (not measured, the map is not mirror-symmetric)')]
    S_file = S_oe.copy()
    if 2 not in excs:
        S_file[:, 0, 1], S_file[:, 1, 1] = S_oe[:, 1, 0], S_oe[:, 0, 0]
    mr.write_s2p(os.path.join(HERE, 'openems.s2p'), f_ghz, S_file, header)
    checks = openems_checks(o, excs, f_ghz)
    js = openems_json(o, excs, stats, checks, f_ghz)
    sol = solvent_sweeps(args.solvent)
    goal = json.load(open(os.path.join(HERE, 'goal.json')))['masks']
    spec = json.load(open(os.path.join(HERE, 'spec.json')))['masks']
    tools = [(k, lab, S) for k, (lab, S) in sol.items()] + [('openems', 'openEMS (lossless, sheet PEC)', S_oe)]
    if args.fine:
        js['mesh_check'] = mesh_check(args.work, goal, f_ghz)
    js['margins_dB'] = {'goal': {k: margins(goal, f_ghz, S) for k, _, S in tools},
                        'spec': {k: margins(spec, f_ghz, S) for k, _, S in tools},
                        'openems_other_planes_goal': {PLANE_NAMES[p]: margins(goal, f_ghz, o['S'][p]) for p in PLANE_NAMES}}
    with open(os.path.join(HERE, 'openems.json'), 'w') as fo:
        json.dump(mr.to_py(js), fo, indent=1)
    write_margins_txt(goal, spec, tools, js, f_ghz)
    print(open(os.path.join(HERE, 'margins.txt')).read())


def write_margins_txt(goal, spec, tools, js, f_ghz):
    L = ['# Margins in dB of each mask over the 50-MHz points in its band (> 0: met), and where the worst is.',
         '# goal.json: the filter\'s goal; spec.json: what solvent design was asked (stop band 2 dB tighter).']
    for title, masks, key in (('goal', goal, 'goal'), ('spec', spec, 'spec')):
        L.append(f'{title}:')
        for n, m in enumerate(masks):
            L.append('  ' + mask_name(m))
            for k, lab, _ in tools:
                r = js['margins_dB'][key][k][n]
                L.append(f'    {r["margin_dB"]:+6.2f} dB  (|S| {r["value_dB"]:7.2f} dB at {r["at_GHz"]:5.2f} GHz)  {lab}')
    L.append('openEMS goal margins read at the other V/I planes (port uncertainty):')
    for p, rs in js['margins_dB']['openems_other_planes_goal'].items():
        L.append(f'    {p}: ' + ', '.join(f'{r["margin_dB"]:+.2f}' for r in rs))
    L.append('|S21|, |S11| in dB at ' + ', '.join(f'{fv:g}' for fv in (1, 2, 5, 8, 9, 9.5, 10)) + ' GHz:')
    for k, lab, S in tools:
        L.append(f'    {lab}: ' + '; '.join(f'{mr.db(mr.at(S, f_ghz, fv)[1, 0]):.2f} {mr.db(mr.at(S, f_ghz, fv)[0, 0]):.2f}'
                                             for fv in (1, 2, 5, 8, 9, 9.5, 10)))
    if 'mesh_check' in js:
        mc = js['mesh_check']
        L.append(f'mesh check ({mc["cells_fine"] / 1e6:.2f} M cells; {mc["compared"]}): goal margins base -> fine ' +
                 ', '.join(f'{a:+.2f} -> {b:+.2f}' for a, b in mc['goal_margins_dB_base_fine']) + '; |S21| dB ' +
                 ', '.join(f'{k} GHz {v[0]:.2f} -> {v[1]:.2f}' for k, v in mc['S21_dB_base_fine'].items()) + '; |S11| dB ' +
                 ', '.join(f'{k} GHz {v[0]:.2f} -> {v[1]:.2f}' for k, v in mc['S11_dB_base_fine'].items()))
    c = js['checks']
    L.append('openEMS checks: ' + json.dumps(mr.to_py(c)))
    for name, r in js['runs'].items():
        cells = js['mesh_check']['cells_fine'] if ' fine ' in name else js['cells']
        L.append(f'run {name}: {r["timesteps_run"]} steps, energy {r["last_logged_energy_dB"]} dB '
                 f'(end criterion {"met" if r["end_criterion_met"] else "NOT met"}), wall {r["wall_runtime_s"]:.0f} s, '
                 f'{cells / 1e6:.2f} M cells')
    open(os.path.join(HERE, 'margins.txt'), 'w').write('\n'.join(L) + '\n')


def main():
    ap = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    ap.add_argument('--work', default='/tmp/openems_design', help='folder for the FDTD runs')
    ap.add_argument('--reuse', action='store_true', help='reuse finished runs found in --work')
    ap.add_argument('--exc', default='1', help='driven ports of the map: 1 (S11, S21) or 1,2 (full S)')
    ap.add_argument('--solvent', default=os.path.join(ROOT, 'build', 'solvent'), help='the solvent program')
    ap.add_argument('--fine', action='store_true', help='also the mesh check: the map (port 1) on the 2x finer mesh')
    ap.add_argument('--design', action='store_true', help='first rerun solvent design spec.json (writes map.csv)')
    ap.add_argument('--runs-only', action='store_true', help='do the FDTD runs, write no output files')
    ap.add_argument('--_child', default=None, help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args._child:
        setup_and_run(json.loads(args._child))
        return
    if args.design:
        redesign(args.solvent)
    excs = [int(v) for v in args.exc.split(',') if v]
    stats = run_all(args.work, excs, args.reuse, args.fine)
    if not args.runs_only:
        postprocess(args, excs, stats)


if __name__ == '__main__':
    main()
