#!/usr/bin/python3
"""openEMS (FDTD) full-wave reference for two ADS-Momentum pixelated two-ports.

What: sim213 (capacitively coupled) and sim572 (DC-connected) from
tests/em/data/momentum/pixelmaps/ on h = 30 mil, eps_r = 4.5, LOSSLESS substrate (tan d = 0,
laterally infinite through the PML), infinite PEC ground, zero-thickness PEC metal, to answer how
much power these circuits lose to radiation and surface waves: 1-|S11|^2-|S21|^2 and
1-|S12|^2-|S22|^2. Corner-only pixel contacts are broken by a one-cell notch in each pixel.
Ports: openEMS-style microstrip-line ports (V = E_z line integral at the strip centre, I = closed
H loop around the strip) on 56-mil feed lines that continue the launches through the absorbing
boundary; V/I measured 5 mm out on the feed lines and carried to the board edges (x = 0 and
x = 280 mil) as a lossless line with the feed line's FDTD phase and impedance; S = B*inv(A) from
one run per excited port, 50 ohm. Checks made by the same script: V/I planes at the board edge
and 10 mm out (port uncertainty), a uniform through line on the same mesh (power-balance floor
and feed-line Z0/eps_eff), a 2x larger corner notch (sim213), sim213 on a 2x finer board mesh.

Run (Debian bookworm: apt-get install openems python3-openems):
    cd tests/em/data/openems/momentum
    nice -n 10 ./make_reference.py [--work DIR] [--reuse] [--skip-fine] [--skip-notch]
It writes sim213.s2p/.json/.txt and sim572.s2p/.json/.txt next to itself. The FDTD runs go to
--work (default /tmp/openems_momentum, about 0.3 GB); --reuse takes finished runs from there
instead of rerunning them. Runs are done one at a time in child processes (openEMS, 2 threads).
Time, on 2 cores shared with another job: 7 runs of 0.66 M cells (thru, sim213 x 2, sim572 x 2,
sim213 with the larger notch x 2) of 1.7-2.9 min each, then 3 runs of 2.0 M cells on the fine
mesh (thru, sim213 x 2) of 7-8 min each: about 40 min in all (the figures of the runs that made
the committed files are in simN.json: "runs", "mesh_check"); --reuse post-processing: seconds.
"""

import argparse
import json
import os
import re
import subprocess
import sys
import time

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
MOMENTUM_DIR = os.path.normpath(os.path.join(HERE, '..', '..', 'momentum'))

# ----------------------------------------------------------------------------------------------
# Geometry (mm)
MIL = 0.0254
P = 8 * MIL                   # pixel 0.2032 mm
NCOL, NROW = 35, 11           # board 280 x 88 mil
LX, LY = NCOL * P, NROW * P   # 7.112 x 2.2352 mm
H = 30 * MIL                  # substrate 0.762 mm
EPS_R = 4.5
LAUNCH_ROWS = range(2, 9)     # CSV rows 2..8 (row 0 = top)
Y0_LINE, Y1_LINE = 2 * P, 9 * P   # launch / feed line y-extent (16..72 mil)
W_LINE = Y1_LINE - Y0_LINE    # 56 mil = 1.4224 mm
YC_LINE = 0.5 * (Y0_LINE + Y1_LINE)

# Mesh / domain parameters (mm)
C0 = 299792458.0
F_MAX = 10e9
LAM0_MM = C0 / F_MAX * 1e3                 # 29.98 mm
DMAX_XY = 0.70                             # <= lambda/20 in the substrate at 10 GHz (0.707 mm)
DMAX_Z_AIR = 1.50                          # <= lambda/20 in air at 10 GHz (1.499 mm)
GRADE = 1.3                                # max growth ratio of neighbouring cells
N_PML = 8
X_FEED_TO_PML = 23.0                       # board edge -> PML inner face along the feed line
Y_TO_PML = 8.0                             # board edge (y=0 / y=LY) -> PML inner face
Z_AIR_TO_PML = 12.0                        # substrate top -> PML inner face
X_EXC_OUT = 20.0                           # excitation plane, distance outward from board edge
PLANES_OUT = {'m5': 5.0, 'm10': 10.0}      # V/I planes on the feed lines, distance outward (mm)
PRIMARY = 'm5'                             # the plane whose shifted V/I define the S-parameters
D_M2 = 0.5                                 # local uniform probe spacing around those planes
N_UNIF_OUT = 3                             # uniform board cells continued past the board edge

# mesh levels: nsub board cells per pixel, nz_sub cells through the substrate, notch = size (in
# board cells) of the square removed from each pixel at a corner-only contact; 'mesh' names the
# mesh (the thru line that calibrates the feed line is run once per mesh)
LEVELS = {
    'base': {'nsub': 4, 'nz_sub': 6, 'notch': 1, 'mesh': 'base'},     # 50.8 um cells, 6 in h
    'fine': {'nsub': 8, 'nz_sub': 12, 'notch': 1, 'mesh': 'fine'},    # 2x finer board + substrate
    'base_notch2': {'nsub': 4, 'nz_sub': 6, 'notch': 2, 'mesh': 'base'},  # corner notch 2x larger
}

F0, FC = 5e9, 5e9                          # Gaussian: f0 = 5 GHz, -20 dB at 0 and 10 GHz
END_CRITERIA = 1e-5                        # -50 dB energy
MAX_TS = 400000
THREADS = 2
OVERSAMPLING = 8
FREQS_GHZ = np.round(np.arange(1, 201) * 0.05, 6)   # 0.05 .. 10 GHz, 50 MHz steps
Z_REF = 50.0


X_SYMMETRIC = ('thru', 'launches')   # maps whose port-2-driven run mirrors the port-1-driven one


def read_pixelmap(name):
    """Return G[iy][ix] (iy = 0 at the BOTTOM, y in [iy*P, (iy+1)*P]), 0/1 ints."""
    if name in ('thru', 'launches'):
        # a uniform line, or the two launches alone (open ends 72 mil apart): launches.py
        g = np.zeros((NROW, NCOL), int)
        for r in LAUNCH_ROWS:
            g[r, :] = 1
        if name == 'launches':
            g[:, 13:22] = 0
    else:
        rows = []
        with open(os.path.join(MOMENTUM_DIR, 'pixelmaps', name + '.csv')) as f:
            for line in f:
                line = line.strip()
                if line:
                    rows.append([int(v) for v in line.split(',')])
        g = np.array(rows, int)
        assert g.shape == (NROW, NCOL), g.shape
    return g[::-1, :].copy()        # CSV row 0 is the top row


def extended_map(g):
    """Pixel map with one virtual column on each side holding the feed lines (rows 2-8)."""
    e = np.zeros((NROW, NCOL + 2), int)
    e[:, 1:-1] = g
    for r in LAUNCH_ROWS:
        e[NROW - 1 - r, 0] = 1
        e[NROW - 1 - r, -1] = 1
    return e


def corner_contacts(g):
    """Nodes where two metal pixels touch only at a corner (both edge neighbours empty).

    Returns a list of dicts with the node (in pixel units, x = column index of the node,
    y = row index from the bottom) and the two pixels (iy, ix)."""
    e = extended_map(g)
    out = []
    for iy in range(NROW - 1):
        for jx in range(NCOL + 1):
            bl, br = e[iy, jx], e[iy, jx + 1]
            tl, tr = e[iy + 1, jx], e[iy + 1, jx + 1]
            node = (jx, iy + 1)     # node x index in board pixel units = jx (virtual col shift)
            if bl and tr and not br and not tl:
                out.append({'node_px': node, 'kind': 'diagonal (bottom-left / top-right)',
                            'pixels_iy_ix': [(iy, jx - 1), (iy + 1, jx)]})
            if br and tl and not bl and not tr:
                out.append({'node_px': node, 'kind': 'anti-diagonal (top-left / bottom-right)',
                            'pixels_iy_ix': [(iy + 1, jx - 1), (iy, jx)]})
    for c in out:
        for (iy, ix) in c['pixels_iy_ix']:
            assert 0 <= ix < NCOL, 'corner contact involving a feed line: not handled'
    return out


def cell_mask(g, nsub, notch=1):
    """Metal mask on the board mesh cells (nsub x nsub cells per pixel), corner cells removed
    at every corner-only contact: each of the two pixels loses the notch x notch block of mesh
    cells that touches the shared node, so no metal edge of the FDTD grid ends on that node."""
    assert 1 <= notch <= nsub // 2
    m = np.kron(g, np.ones((nsub, nsub), int))
    removed = []
    for c in corner_contacts(g):
        jx, jy = c['node_px']
        nx, ny = jx * nsub, jy * nsub          # node index on the cell grid
        # the four cells around the node: (ny-1, nx-1) BL, (ny-1, nx) BR, (ny, nx-1) TL, (ny, nx) TR
        r = range(notch)
        if c['kind'].startswith('diagonal'):
            cells = [(ny - 1 - i, nx - 1 - j) for i in r for j in r] + [(ny + i, nx + j) for i in r for j in r]
        else:
            cells = [(ny + i, nx - 1 - j) for i in r for j in r] + [(ny - 1 - i, nx + j) for i in r for j in r]
        for (cy, cx) in cells:
            assert m[cy, cx] == 1
            m[cy, cx] = 0
            removed.append((cy, cx))
    return m, removed


def mask_rectangles(m, d):
    """Decompose the cell mask into closed rectangles [x0,x1]x[y0,y1] (mm): row runs merged
    vertically."""
    ny, nx = m.shape
    runs_prev = {}
    rects = []
    for iy in range(ny + 1):
        runs = {}
        if iy < ny:
            ix = 0
            while ix < nx:
                if m[iy, ix]:
                    j = ix
                    while j < nx and m[iy, j]:
                        j += 1
                    runs[(ix, j)] = None
                    ix = j
                else:
                    ix += 1
        new_prev = {}
        for key in runs:
            new_prev[key] = runs_prev.get(key, iy)
        for key, start in runs_prev.items():
            if key not in runs:
                rects.append((key[0] * d, key[1] * d, start * d, iy * d))
        runs_prev = new_prev
    return rects


def metal_connected_components(m):
    """4-connected components of the cell mask (to document DC connectivity)."""
    lab = np.zeros(m.shape, int)
    n = 0
    for iy in range(m.shape[0]):
        for ix in range(m.shape[1]):
            if m[iy, ix] and not lab[iy, ix]:
                n += 1
                stack = [(iy, ix)]
                lab[iy, ix] = n
                while stack:
                    a, b = stack.pop()
                    for da, db in ((1, 0), (-1, 0), (0, 1), (0, -1)):
                        u, v = a + da, b + db
                        if 0 <= u < m.shape[0] and 0 <= v < m.shape[1] and m[u, v] and not lab[u, v]:
                            lab[u, v] = n
                            stack.append((u, v))
    return lab, n


# ----------------------------------------------------------------------------------------------
# Mesh

def fill(a, b, da, db, dmax, r):
    """Interior lines for the open interval (a, b), a < b: cells growing geometrically (ratio r)
    from about da at a and db at b, capped at dmax, then scaled to fit exactly."""
    L = b - a
    left, right = [], []
    sl, sr = da, db
    tot = 0.0
    while tot < L - 1e-12:
        nl, nr = min(sl * r, dmax), min(sr * r, dmax)
        if nl <= nr:
            left.append(nl)
            sl = nl
            tot += nl
        else:
            right.append(nr)
            sr = nr
            tot += nr
    cells = np.array(left + right[::-1])
    cells = cells * (L / cells.sum())
    pos = a + np.cumsum(cells)[:-1]
    return list(pos)


def build_mesh(level):
    nsub = LEVELS[level]['nsub']
    nz_sub = LEVELS[level]['nz_sub']
    d = P / nsub
    dz = H / nz_sub

    # x: board lines, plus the west side built outward and mirrored to the east.
    board_x = [i * d for i in range(NCOL * nsub + 1)]
    west = [-i * d for i in range(1, N_UNIF_OUT + 1)]                  # uniform continuation
    prev, dprev = west[-1], d
    for dist in sorted(PLANES_OUT.values()):
        trip = [-dist + D_M2, -dist, -dist - D_M2]
        west += sorted(fill(trip[0], prev, D_M2, dprev, DMAX_XY, GRADE), reverse=True)
        west += trip
        prev, dprev = trip[-1], D_M2
    xpml = -X_FEED_TO_PML
    west += sorted(fill(xpml, prev, DMAX_XY, dprev, DMAX_XY, GRADE), reverse=True)
    west += [xpml]
    west += [xpml - DMAX_XY * (i + 1) for i in range(N_PML)]
    west = np.array(west)
    east = LX - west
    x = np.unique(np.round(np.concatenate([west, board_x, east]), 9))

    # y: board lines, outward on both sides (mirror about the board centre).
    board_y = [i * d for i in range(NROW * nsub + 1)]
    ypml = -Y_TO_PML
    south = sorted(fill(ypml, 0.0, DMAX_XY, d, DMAX_XY, GRADE), reverse=True)
    south += [ypml] + [ypml - DMAX_XY * (i + 1) for i in range(N_PML)]
    south = np.array(south)
    north = LY - south
    y = np.unique(np.round(np.concatenate([south, board_y, north]), 9))

    # z: uniform in the substrate, graded in air, PML on top.
    zs = [i * dz for i in range(nz_sub + 1)]
    zpml = H + Z_AIR_TO_PML
    zair = fill(H, zpml, dz, DMAX_Z_AIR, DMAX_Z_AIR, GRADE)
    z = zs + zair + [zpml] + [zpml + DMAX_Z_AIR * (i + 1) for i in range(N_PML)]
    z = np.unique(np.round(np.array(z), 9))
    return {'x': x, 'y': y, 'z': z, 'd_board': d, 'dz_sub': dz, 'nsub': nsub, 'nz_sub': nz_sub}


def mesh_stats(lines):
    dl = np.diff(lines)
    ratio = np.maximum(dl[1:] / dl[:-1], dl[:-1] / dl[1:])
    return {'n': int(len(lines)), 'min': float(dl.min()), 'max': float(dl.max()),
            'max_ratio': float(ratio.max()), 'range': [float(lines[0]), float(lines[-1])]}


def nearest(lines, v):
    i = int(np.argmin(np.abs(lines - v)))
    return i, float(lines[i])


# ----------------------------------------------------------------------------------------------
# Ports / probes

def port_geometry(mesh, port, lx=LX, x_exc_out=X_EXC_OUT):
    """Probe positions for a port. u is the local coordinate pointing INTO the structure.
    Ports at x = 0 and x = lx; the source x_exc_out outward (../stub_loss shares this)."""
    x = mesh['x']
    if port == 1:
        x_ref, sgn = 0.0, +1.0
    else:
        x_ref, sgn = lx, -1.0
    iref, xr = nearest(x, x_ref)
    assert abs(xr - x_ref) < 1e-9
    planes = {}
    for key, xc in [('ref', x_ref)] + [(k, x_ref - sgn * v) for k, v in PLANES_OUT.items()]:
        i, xb = nearest(x, xc)
        assert abs(xb - xc) < 1e-9, (key, xb, xc)
        xa, xcc = x[i - int(sgn)], x[i + int(sgn)]          # A outward, C inward
        delta = abs(xb - xa)
        assert abs(abs(xcc - xb) - delta) < 1e-9, 'probe spacing not uniform'
        planes[key] = {'x_V_A_out': float(xa), 'x_V_B': float(xb), 'x_V_C_in': float(xcc),
                       'x_I_minus_out': float(0.5 * (xa + xb)), 'x_I_plus_in': float(0.5 * (xb + xcc)),
                       'delta_mm': float(delta),
                       'distance_to_ref_plane_mm': float(abs(xb - x_ref))}
    iexc, xexc = nearest(x, x_ref - sgn * x_exc_out)
    return {'number': port, 'x_ref': x_ref, 'sgn': sgn, 'planes': planes, 'x_exc': xexc}


def probe_names(port, key):
    return {'VA': f'p{port}_{key}_VA', 'VB': f'p{port}_{key}_VB', 'VC': f'p{port}_{key}_VC',
            'Im': f'p{port}_{key}_Im', 'Ip': f'p{port}_{key}_Ip'}


# ----------------------------------------------------------------------------------------------
# One FDTD run (executed in a child process)

def setup_and_run(cfg):
    circuit, level, exc_port, sim_path = cfg['circuit'], cfg['level'], cfg['exc'], cfg['sim_path']
    mesh = build_mesh(level)
    g = read_pixelmap(circuit)
    m, _ = cell_mask(g, mesh['nsub'], LEVELS[level]['notch'])
    rects = mask_rectangles(m, mesh['d_board'])

    FDTD, CSX = new_simulation(mesh, F0, FC, cfg.get('max_ts', MAX_TS), EPS_R, H)
    x = mesh['x']
    metal = CSX.AddMetal('pec_sheet')
    for (x0, x1, y0, y1) in rects:
        metal.AddBox([x0, y0, H], [x1, y1, H], priority=10)
    metal.AddBox([x[0], Y0_LINE, H], [0.0, Y1_LINE, H], priority=10)      # west feed line
    metal.AddBox([LX, Y0_LINE, H], [x[-1], Y1_LINE, H], priority=10)      # east feed line

    for port in (1, 2):
        add_feed_probes(CSX, port_geometry(mesh, port), Y0_LINE, Y1_LINE, H, port == exc_port)
    run_and_time(FDTD, sim_path)


def new_simulation(mesh, f0, fc, max_ts, eps_r, h):
    """An openEMS run on this mesh (mm): Gaussian f0, fc; PML but for the PEC ground at z = 0;
    the substrate of eps_r and height h over the whole domain (through the PML)."""
    from CSXCAD import ContinuousStructure
    from openEMS import openEMS
    FDTD = openEMS(NrTS=max_ts, EndCriteria=END_CRITERIA, OverSampling=OVERSAMPLING)
    FDTD.SetGaussExcite(f0, fc)
    FDTD.SetBoundaryCond(['PML_8', 'PML_8', 'PML_8', 'PML_8', 'PEC', 'PML_8'])
    CSX = ContinuousStructure()
    FDTD.SetCSX(CSX)
    grid = CSX.GetGrid()
    grid.SetDeltaUnit(1e-3)
    for a in 'xyz':
        grid.SetLines(a, mesh[a])
    x, y = mesh['x'], mesh['y']
    sub = CSX.AddMaterial('substrate', epsilon=eps_r)
    sub.AddBox([x[0], y[0], 0.0], [x[-1], y[-1], h], priority=0)
    return FDTD, CSX


def add_feed_probes(CSX, pg, y0, y1, h, excite):
    """The V/I probes of one port's planes (pg from port_geometry) on a feed line y0..y1 at
    height h, and with excite its soft E_z source."""
    port, yc = pg['number'], 0.5 * (y0 + y1)
    for key, pl in pg['planes'].items():
        nm = probe_names(port, key)
        for tag, xx in (('VA', pl['x_V_A_out']), ('VB', pl['x_V_B']), ('VC', pl['x_V_C_in'])):
            # same orientation as openEMS's MSLPort (start at the strip, stop at ground, weight -1)
            pr = CSX.AddProbe(nm[tag], p_type=0, weight=-1)
            pr.AddBox([xx, yc, h], [xx, yc, 0.0])
        for tag, xx in (('Im', pl['x_I_minus_out']), ('Ip', pl['x_I_plus_in'])):
            # closed H loop around the strip (dual grid); weight = direction INTO the structure
            pr = CSX.AddProbe(nm[tag], p_type=1, weight=pg['sgn'], norm_dir=0)
            pr.AddBox([xx, y0, h], [xx, y1, h])
    if excite:
        exc = CSX.AddExcitation(f'excite_{port}', exc_type=0, exc_val=[0, 0, 1.0])
        exc.AddBox([pg['x_exc'], y0, h], [pg['x_exc'], y1, 0.0], priority=5)


def run_and_time(FDTD, sim_path):
    """Run, and write the wall time to run_wall.json (the sign that the run finished)."""
    t0 = time.time()
    FDTD.Run(sim_path, cleanup=True, numThreads=THREADS, verbose=1)
    with open(os.path.join(sim_path, 'run_wall.json'), 'w') as f:
        json.dump({'wall_runtime_s': time.time() - t0}, f)


def run_child(cfg, log_path, script=__file__):
    """Run one FDTD simulation in a child process (`script --_child CFG`), stdout/stderr to
    log_path."""
    os.makedirs(os.path.dirname(log_path), exist_ok=True)
    with open(log_path, 'w') as log:
        p = subprocess.run([sys.executable, os.path.abspath(script), '--_child', json.dumps(cfg)],
                           stdout=log, stderr=subprocess.STDOUT)
    if p.returncode != 0:
        raise RuntimeError(f'openEMS run failed ({cfg}), see {log_path}')


def parse_log(log_path):
    txt = open(log_path, errors='replace').read()
    st = {}
    mm = re.search(r'openEMS\s+\S+\s+--\s+version\s+(\S+)', txt)
    if mm:
        st['openems_banner_version'] = mm.group(1)
    mm = re.search(r'FDTD simulation size:\s*(\d+)x(\d+)x(\d+)\s*-->\s*([\d.e+]+)', txt)
    if mm:
        st['openems_reported_size'] = [int(mm.group(i)) for i in (1, 2, 3)]
        st['openems_reported_cells'] = float(mm.group(4))
    mm = re.search(r'FDTD timestep is:\s*([\d.e+-]+)', txt)
    if mm:
        st['dt_s'] = float(mm.group(1))
    mm = re.search(r'Excitation signal length is:\s*(\d+)', txt)
    if mm:
        st['excitation_length_timesteps'] = int(mm.group(1))
    en = re.findall(r'Timestep:\s*(\d+).*?Speed:\s*([\d.]+)\s*MC/s.*?Energy:\s*~?\s*([\d.e+-]+)\s*\(\s*-?\s*([\d.]+)\s*dB\)', txt)
    if en:
        st['last_logged_timestep'] = int(en[-1][0])
        st['last_logged_energy_dB'] = -float(en[-1][3])
    mm = re.search(r'Time for\s*(\d+)\s*iterations with\s*([\d.e+]+)\s*cells\s*:\s*([\d.e+]+)\s*sec', txt)
    if mm:
        st['timesteps_run'] = int(mm.group(1))
        st['openems_reported_size_mesh_nodes'] = float(mm.group(2))
        st['solver_time_s'] = float(mm.group(3))
    mm = re.search(r'Speed:\s*([\d.]+)\s*MCells/s', txt)
    if mm:
        st['solver_speed_MCells_s'] = float(mm.group(1))
    st['max_timesteps_reached'] = bool('Max. number of timesteps was reached' in txt)
    if 'dt_s' in st and 'timesteps_run' in st:
        st['simulated_time_ns'] = st['dt_s'] * st['timesteps_run'] * 1e9
    st['end_criterion_met'] = bool(st.get('last_logged_energy_dB', 0.0) <= 10 * np.log10(END_CRITERIA) + 1e-9
                                   and not st['max_timesteps_reached'])
    return st


# ----------------------------------------------------------------------------------------------
# Post-processing

def load_probe(sim_path, name):
    a = np.loadtxt(os.path.join(sim_path, name), comments='%')
    return a[:, 0], a[:, 1]


def dft(t, v, f_hz):
    dt = t[1] - t[0]
    return np.exp(-2j * np.pi * np.outer(f_hz, t)) @ v * dt


def port_data(sim_path, port, key, f_hz, keep=1.0):
    """DFT of the five probes of one port plane; keep < 1 drops the end of the record."""
    nm = probe_names(port, key)
    out, tails = {}, {}
    for tag, n in nm.items():
        t, v = load_probe(sim_path, n)
        nt = max(10, int(round(keep * len(v))))
        out[tag] = dft(t[:nt], v[:nt], f_hz)
        peak = np.max(np.abs(v))
        tails[tag] = float(20 * np.log10(max(np.max(np.abs(v[int(0.95 * len(v)):])), 1e-300) / peak))
    return out, tails


def three_point(pd, delta_mm, f_hz):
    """Exact single-mode relations on a uniform grid (any forward/backward mix):
    cos(beta*delta) = (VA+VC)/(2VB);  Z^2 = VB (VC-VA) / (Ip^2 - Im^2)."""
    cosbd = (pd['VA'] + pd['VC']) / (2 * pd['VB'])
    beta = np.arccos(np.clip(np.real(cosbd), -1, 1)) / (delta_mm * 1e-3)     # rad/m
    Z = np.sqrt(pd['VB'] * (pd['VC'] - pd['VA']) / (pd['Ip'] ** 2 - pd['Im'] ** 2))
    Z = np.where(np.real(Z) < 0, -Z, Z)
    k0 = 2 * np.pi * f_hz / C0
    return beta, Z, (beta / k0) ** 2


def line_calibration(work, mesh_level, f_hz):
    """Feed-line data from the thru run (port 1 driven) of this mesh, at its NON-driven port 2,
    where only the outgoing wave is present and no structure is near. Per plane P (5 and 10 mm
    out): the phase theta_P = beta*l_P of the outgoing wave between P and the board edge, the
    line impedance Z = -V/I at P and at the edge, and the exact three-point beta, Z at P."""
    return line_calibration_from(os.path.join(work, f'thru_{mesh_level}_exc1'),
                                 port_geometry(build_mesh(mesh_level), 2), f_hz)


def line_calibration_from(sp, pg, f_hz):
    """line_calibration from the thru run in folder sp, pg its port 2's geometry."""
    k0 = 2 * np.pi * f_hz / C0
    d_ref, _ = port_data(sp, 2, 'ref', f_hz)
    z_ref = -d_ref['VB'] / (0.5 * (d_ref['Ip'] + d_ref['Im']))
    out = {'Z_ref': z_ref, 'planes': {}}
    for key in PLANES_OUT:
        d_p, _ = port_data(sp, 2, key, f_hz)
        pl = pg['planes'][key]
        ell = pl['distance_to_ref_plane_mm'] * 1e-3
        theta = np.unwrap(-np.angle(d_p['VB'] / d_ref['VB']))     # outgoing: V_P = V_edge e^{-j theta}
        beta = theta / ell
        cor = np.cos(beta * pl['delta_mm'] * 1e-3 / 2)
        z_p = -d_p['VB'] / (0.5 * (d_p['Ip'] + d_p['Im']) / cor)
        b3, z3, e3 = three_point(d_p, pl['delta_mm'], f_hz)
        out['planes'][key] = {'theta': theta, 'beta': beta, 'eps_eff': (beta / k0) ** 2, 'Z_plane': z_p,
                              'Z_shift': np.real(0.5 * (z_p + z_ref)), 'ell_m': ell, 'cos_corr': cor,
                              'beta_3pt': b3, 'Z_3pt': z3, 'eps_eff_3pt': e3}
    return out


def vi_planes(pd, cal):
    """V, I (into the structure) at the board edge from each probe plane.
    'edge':     measured at the board edge itself: V = VB, I = mean of the loops at +-d/2.
    'shift_P':  measured at plane P on the feed line (I corrected for the loop averaging,
                1/cos(beta delta/2)) and carried to the board edge as a lossless line with the
                thru's theta_P = beta*l_P and REAL Z (a lossless transform keeps Re(V I*), so the
                lost power does not depend on it).
    'raw_P':    the same without the transform (reference plane at P)."""
    out = {'edge': (pd['ref']['VB'], 0.5 * (pd['ref']['Ip'] + pd['ref']['Im']))}
    for key in PLANES_OUT:
        cl = cal['planes'][key]
        V = pd[key]['VB']
        I = 0.5 * (pd[key]['Ip'] + pd[key]['Im']) / cl['cos_corr']
        c, s, Z = np.cos(cl['theta']), np.sin(cl['theta']), cl['Z_shift']
        out['shift_' + key] = (V * c - 1j * Z * I * s, I * c - 1j * V / Z * s)
        out['raw_' + key] = (V, I)
    return out


def s_from_runs(VI):
    """VI[k][j] = (V, I) at port j (1,2) for the run exciting port k. S = B inv(A)."""
    nf = len(VI[1][1][0])
    A = np.zeros((nf, 2, 2), complex)
    B = np.zeros((nf, 2, 2), complex)
    for k in (1, 2):
        for j in (1, 2):
            V, I = VI[k][j]
            A[:, j - 1, k - 1] = (V + Z_REF * I) / (2 * np.sqrt(Z_REF))
            B[:, j - 1, k - 1] = (V - Z_REF * I) / (2 * np.sqrt(Z_REF))
    return np.einsum('fij,fjk->fik', B, np.linalg.inv(A))


def single_run_s(VI1):
    """From the port-1-driven run only: S11 ~ b1/a1, S21 ~ b2/a1 (and |a2/a1|)."""
    a = {j: (VI1[j][0] + Z_REF * VI1[j][1]) / (2 * np.sqrt(Z_REF)) for j in (1, 2)}
    b = {j: (VI1[j][0] - Z_REF * VI1[j][1]) / (2 * np.sqrt(Z_REF)) for j in (1, 2)}
    return b[1] / a[1], b[2] / a[1], np.abs(a[2] / a[1])


def lost(S):
    p1 = 1 - np.abs(S[:, 0, 0]) ** 2 - np.abs(S[:, 1, 0]) ** 2
    p2 = 1 - np.abs(S[:, 0, 1]) ** 2 - np.abs(S[:, 1, 1]) ** 2
    return p1, p2


def read_momentum(name):
    d = []
    with open(os.path.join(MOMENTUM_DIR, 'momentum', name + '.s2p')) as f:
        for line in f:
            s = line.strip()
            if not s or s[0] in '!#':
                continue
            d.append([float(v) for v in s.split()])
    d = np.array(d)

    def c(dbv, ph):
        return 10 ** (dbv / 20) * np.exp(1j * np.deg2rad(ph))
    S = np.zeros((len(d), 2, 2), complex)
    S[:, 0, 0] = c(d[:, 1], d[:, 2])     # file order: S11 S21 S12 S22
    S[:, 1, 0] = c(d[:, 3], d[:, 4])
    S[:, 0, 1] = c(d[:, 5], d[:, 6])
    S[:, 1, 1] = c(d[:, 7], d[:, 8])
    return d[:, 0], S


def hammerstad_jensen(w, h, er):
    """Quasi-static microstrip Z0 and eps_eff (Hammerstad-Jensen, zero thickness)."""
    u = w / h
    eta0 = 376.730313668
    fu = 6 + (2 * np.pi - 6) * np.exp(-(30.666 / u) ** 0.7528)
    z01 = eta0 / (2 * np.pi) * np.log(fu / u + np.sqrt(1 + (2 / u) ** 2))
    a = 1 + np.log((u ** 4 + (u / 52) ** 2) / (u ** 4 + 0.432)) / 49 + np.log(1 + (u / 18.1) ** 3) / 18.7
    b = 0.564 * ((er - 0.9) / (er + 3)) ** 0.053
    ee = (er + 1) / 2 + (er - 1) / 2 * (1 + 10 / u) ** (-a * b)
    return float(z01 / np.sqrt(ee)), float(ee)


def write_s2p(path, f_ghz, S, header, f_decimals=2):
    with open(path, 'w') as fo:
        for h in header:
            fo.write('! ' + h + '\n')
        fo.write('# GHz S RI R 50\n')
        for n, f in enumerate(f_ghz):
            s = S[n]
            vals = [s[0, 0], s[1, 0], s[0, 1], s[1, 1]]
            fo.write(f'{f:.{f_decimals}f} ' + ' '.join(f'{v.real: .9e} {v.imag: .9e}' for v in vals) + '\n')


def idx_of(f_ghz, fv):
    i = int(np.argmin(np.abs(f_ghz - fv)))
    assert abs(f_ghz[i] - fv) < 1e-6
    return i


def db(x):
    return float(20 * np.log10(np.abs(x))) if np.ndim(x) == 0 else 20 * np.log10(np.abs(x))


# ----------------------------------------------------------------------------------------------

def plan_runs(circuits, skip_fine, fine_exc, skip_notch):
    plan = [('thru', 'base', 1)]
    for c in circuits:
        plan += [(c, 'base', 1), (c, 'base', 2)]
    if 'sim213' in circuits and not skip_notch:
        plan += [('sim213', 'base_notch2', 1), ('sim213', 'base_notch2', 2)]
    if 'sim213' in circuits and not skip_fine:
        plan += [('thru', 'fine', 1)] + [('sim213', 'fine', k) for k in fine_exc]
    return plan


def main():
    ap = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    ap.add_argument('--work', default='/tmp/openems_momentum', help='folder for the FDTD runs')
    ap.add_argument('--reuse', action='store_true', help='reuse finished runs found in --work')
    ap.add_argument('--only', default='sim213,sim572', help='circuits (default sim213,sim572)')
    ap.add_argument('--skip-fine', action='store_true', help='no fine-mesh check')
    ap.add_argument('--skip-notch', action='store_true', help='no corner-notch sensitivity runs')
    ap.add_argument('--fine-exc', default='1,2', help='excitations of the fine-mesh check (1 or 1,2)')
    ap.add_argument('--runs-only', action='store_true', help='do the runs, write no output files')
    ap.add_argument('--max-ts', type=int, default=MAX_TS, help='(testing) max timesteps per run')
    ap.add_argument('--_child', default=None, help=argparse.SUPPRESS)
    args = ap.parse_args()

    if args._child:
        setup_and_run(json.loads(args._child))
        return

    circuits = [c for c in args.only.split(',') if c]
    fine_exc = [int(v) for v in args.fine_exc.split(',') if v]
    plan = plan_runs(circuits, args.skip_fine, fine_exc, args.skip_notch)
    run_stats = {}
    for (c, lev, k) in plan:
        sim_path = os.path.join(args.work, f'{c}_{lev}_exc{k}')
        log_path = os.path.join(args.work, f'{c}_{lev}_exc{k}.log')
        done = os.path.join(sim_path, 'run_wall.json')
        if not (args.reuse and os.path.exists(done)):
            print(f'[{time.strftime("%H:%M:%S")}] running {c} {lev} exc{k} ...', flush=True)
            run_child({'circuit': c, 'level': lev, 'exc': k, 'sim_path': sim_path,
                       'max_ts': args.max_ts}, log_path)
        st = parse_log(log_path)
        st.update(json.load(open(done)))
        run_stats[(c, lev, k)] = st
        print(f'[{time.strftime("%H:%M:%S")}] {c} {lev} exc{k}: {st.get("timesteps_run")} steps, '
              f'{st.get("last_logged_energy_dB")} dB, {st.get("wall_runtime_s", 0):.0f} s', flush=True)
    if not args.runs_only:
        postprocess(args, circuits, run_stats, fine_exc)


def analyse(work, c, lev, f_hz, cal, excs=(1, 2), keep=1.0):
    """S-parameters of one circuit on one mesh level, for every measurement variant."""
    mesh = build_mesh(lev)
    planes = ['ref'] + list(PLANES_OUT)
    pd, tails, VI = {}, {}, {}
    for k in excs:
        sp = os.path.join(work, f'{c}_{lev}_exc{k}')
        for p in (1, 2):
            for plane in planes:
                pd[(k, p, plane)], tails[(k, p, plane)] = port_data(sp, p, plane, f_hz, keep)
            v = vi_planes({pl: pd[(k, p, pl)] for pl in planes}, cal)
            for key, val in v.items():
                VI.setdefault(key, {}).setdefault(k, {})[p] = val
    if c in X_SYMMETRIC:                         # x-symmetric circuit on an x-symmetric mesh
        for key in VI:
            VI[key][2] = {1: VI[key][1][2], 2: VI[key][1][1]}
    S = {key: s_from_runs(VI[key]) for key in VI} if (2 in VI['edge']) else None
    return {'mesh': mesh, 'ports': {p: port_geometry(mesh, p) for p in (1, 2)}, 'pd': pd,
            'tails': tails, 'VI': VI, 'S': S}


def run_stats_json(st, k):
    keys = ['timesteps_run', 'solver_time_s', 'last_logged_energy_dB', 'dt_s', 'wall_runtime_s',
            'max_timesteps_reached', 'end_criterion_met', 'simulated_time_ns', 'openems_reported_size',
            'openems_reported_cells', 'openems_reported_size_mesh_nodes', 'solver_speed_MCells_s',
            'excitation_length_timesteps', 'openems_banner_version']
    return dict({'driven_port': k}, **{kk: st.get(kk) for kk in keys})


def sv_max(S):
    return np.array([np.linalg.svd(s, compute_uv=False)[0] for s in S])


PK = 'shift_' + PRIMARY
HEAD_F_S = [0.5, 1.0, 2.0, 5.0, 7.5, 10.0]
HEAD_F_P = [1.0, 2.0, 3.0, 5.0, 7.5, 10.0]


def at(arr, f_ghz, fv):
    return arr[idx_of(f_ghz, fv)]


def postprocess(args, circuits, run_stats, fine_exc):
    f_ghz = FREQS_GHZ
    f_hz = f_ghz * 1e9
    z_hj, e_hj = hammerstad_jensen(W_LINE, H, EPS_R)
    deb_ver = subprocess.run(['dpkg-query', '-W', '-f=${Version}', 'openems'],
                             capture_output=True, text=True).stdout.strip()
    have_fine = ('sim213' in circuits and not args.skip_fine)
    have_notch = ('sim213' in circuits and not args.skip_notch)

    cal = {'base': line_calibration(args.work, 'base', f_hz)}
    if have_fine:
        cal['fine'] = line_calibration(args.work, 'fine', f_hz)
    thru = {'base': analyse(args.work, 'thru', 'base', f_hz, cal['base'], excs=(1,))}
    if have_fine:
        thru['fine'] = analyse(args.work, 'thru', 'fine', f_hz, cal['fine'], excs=(1,))
    thru_lost = {m_: {key: lost(thru[m_]['S'][key])[0] for key in thru[m_]['S']} for m_ in thru}

    def feed_json(m_):
        cl = cal[m_]
        out = {}
        for fv in (1.0, 5.0, 10.0):
            i = idx_of(f_ghz, fv)
            ent = {'Z_ohm_board_edge_plane': [float(cl['Z_ref'][i].real), float(cl['Z_ref'][i].imag)]}
            for key, cp in cl['planes'].items():
                ent[key] = {'Z_ohm': [float(cp['Z_plane'][i].real), float(cp['Z_plane'][i].imag)],
                            'eps_eff_from_phase_to_edge': float(cp['eps_eff'][i]),
                            'theta_rad': float(cp['theta'][i]),
                            'three_point': {'Z_ohm': [float(cp['Z_3pt'][i].real), float(cp['Z_3pt'][i].imag)],
                                            'eps_eff': float(np.real(cp['eps_eff_3pt'][i]))}}
            out[f'{fv:g} GHz'] = ent
        return out

    for c in circuits:
        r = analyse(args.work, c, 'base', f_hz, cal['base'])
        S = r['S'][PK]
        p1, p2 = lost(S)
        sv = sv_max(S)
        recip = np.abs(S[:, 1, 0] - S[:, 0, 1])
        variants = ['edge'] + ['shift_' + k for k in PLANES_OUT]          # the three V/I planes
        lv = {v: lost(r['S'][v]) for v in variants}
        spread = [np.max([lv[v][q] for v in variants], axis=0) - np.min([lv[v][q] for v in variants], axis=0)
                  for q in (0, 1)]
        vname = {'edge': 'board edge (0 mm)'}
        vname.update({'shift_' + k: f'{d:g} mm out, shifted' for k, d in PLANES_OUT.items()})
        fm, Sm = read_momentum(c)
        im = {fv: int(np.argmin(np.abs(fm - fv))) for fv in sorted(set(HEAD_F_P + HEAD_F_S))}
        pm1, pm2 = lost(Sm)
        rt = analyse(args.work, c, 'base', f_hz, cal['base'], keep=0.8)
        t1, t2 = lost(rt['S'][PK])

        write_s2p(os.path.join(HERE, c + '.s2p'), f_ghz, S, [
            f'{c} (tests/em/data/momentum/pixelmaps/{c}.csv): openEMS FDTD reference, make_reference.py',
            f'LOSSLESS: eps_r={EPS_R}, tan d=0, h={H} mm, zero-thickness PEC strip, infinite PEC ground and substrate',
            'ports: 56-mil microstrip lines into the PML; V/I measured 5 mm out, carried to the board edges',
            f'(x=0 and x={LX:.4f} mm) as a lossless line (FDTD beta, Z of the thru run); S = B inv(A), 50 ohm',
            'order S11 S21 S12 S22'])

        g = read_pixelmap(c)
        mesh = r['mesh']
        cc = corner_contacts(g)
        m, removed = cell_mask(g, mesh['nsub'], LEVELS['base']['notch'])
        rects = mask_rectangles(m, mesh['d_board'])
        lab, ncomp = metal_connected_components(m)
        iyc = int(YC_LINE / mesh['d_board'])
        dc_connected = bool(lab[iyc, 0] == lab[iyc, -1] and lab[iyc, 0] > 0)

        js = {'name': c,
              'question': 'power lost to radiation and surface waves by the lossless structure: '
                          '1-|S11|^2-|S21|^2 (port 1 driven) and 1-|S12|^2-|S22|^2 (port 2 driven)'}
        js['solver'] = {'name': 'openEMS FDTD', 'debian_package_version': deb_ver,
                        'openems_version_banner': run_stats[(c, 'base', 1)].get('openems_banner_version'),
                        'python_interface': 'python3-openems (Debian bookworm), CSXCAD for the geometry',
                        'threads': THREADS, 'engine': 'openEMS default (compressed SSE multithreaded)',
                        'timestep_method': 'openEMS default (Rennings_2)', 'probe_oversampling': OVERSAMPLING,
                        'run_under': 'nice -n 10, one run at a time'}
        js['units'] = 'mm, GHz'
        js['source_geometry'] = {
            'pixelmap': f'tests/em/data/momentum/pixelmaps/{c}.csv', 'pixel_mm': P,
            'columns': NCOL, 'rows': NROW, 'board_mm': [LX, LY],
            'orientation': 'CSV row 0 = top row (largest y), column 0 at x = 0; pixel (row r, col c) covers '
                           'x in [c*P,(c+1)*P], y in [(10-r)*P,(11-r)*P]',
            'launches': 'rows 2-8 (y = 0.4064..1.8288 mm, 56 mil) over columns 0-12 and 22-34',
            'metal_pixels': int(g.sum()),
            'dc_connected_port_to_port_after_corner_handling': dc_connected}
        js['stackup'] = {
            'ground': 'perfect electric conductor at z=0 (FDTD zmin boundary = PEC; infinite)',
            'substrate': {'eps_r': EPS_R, 'loss_tangent': 0.0, 'z_bottom': 0.0, 'z_top': H,
                          'lateral_extent': 'entire computational domain including the PML (laterally infinite slab)'},
            'metal': 'zero-thickness PEC sheets at z=h (openEMS 2D metal on the z=h mesh plane), lossless',
            'above': 'air eps_r=1 from z=h to the top boundary'}
        js['coordinate_system'] = ('x along the through direction (port 1 at x=0, port 2 at x=%.4f), y across '
                                   '(board y in [0, %.4f]), z up; rectangles at z=h as [x0,x1,y0,y1]' % (LX, LY))
        js['corner_contacts'] = {
            'rule': 'pixels touching only at a corner are NOT connected (Momentum: DC |S21| < -220 dB for such maps)',
            'problem': 'in FDTD two PEC rectangles meeting at one mesh node are connected (both put PEC on the '
                       'grid edges that end on that node)',
            'method': ('each of the two pixels loses the one board mesh cell (d x d, d = pixel/%d = %.4f mm) that '
                       'touches the shared corner node, so no PEC edge of the FDTD grid ends on that node; the two '
                       'pixels are then separated by a gap of 2d along the grid lines through the corner (sqrt(2) d '
                       'diagonally). All other pixel edges stay on mesh lines; each notched pixel loses 1/%d of its '
                       'area. On the fine mesh the notch is one fine cell (half the size); a sensitivity run with '
                       'a 2x2-cell notch (2d = %.4f mm square) is in "corner_notch_sensitivity" (sim213).'
                       % (mesh['nsub'], mesh['d_board'], mesh['nsub'] ** 2, 2 * mesh['d_board'])),
            'count': len(cc),
            'contacts': [{'node_xy_mm': [round(k['node_px'][0] * P, 6), round(k['node_px'][1] * P, 6)],
                          'kind': k['kind'],
                          'pixels_csv_row_col': [[NROW - 1 - iy, ix] for (iy, ix) in k['pixels_iy_ix']]}
                         for k in cc],
            'removed_cells_mm_[x0,x1,y0,y1]': [[round(cx * mesh['d_board'], 6), round((cx + 1) * mesh['d_board'], 6),
                                                round(cy * mesh['d_board'], 6), round((cy + 1) * mesh['d_board'], 6)]
                                               for (cy, cx) in removed],
            'separate_metal_pieces_on_board_after_notching': int(ncomp),
            'verified': 'the 4-connected components of the notched cell mask: port 1 and port 2 launches are '
                        + ('connected' if dc_connected else 'NOT connected') + ' (the pixel map itself is '
                        + ('DC-connected' if c == 'sim572' else 'not DC-connected') + ' by 4-neighbour rules)'}
        js['metal_rectangles_mm'] = {
            'note': 'board metal after the corner notches as closed rectangles [x0,x1,y0,y1] at z=h, plus the feed lines',
            'board': [[round(v, 6) for v in rr] for rr in rects],
            'feed_lines': [{'name': 'west feed (port 1)', 'x0': float(mesh['x'][0]), 'x1': 0.0, 'y0': Y0_LINE, 'y1': Y1_LINE},
                           {'name': 'east feed (port 2)', 'x0': LX, 'x1': float(mesh['x'][-1]), 'y0': Y0_LINE, 'y1': Y1_LINE}]}
        js['ports'] = [port_json(r['ports'][p], z_hj, e_hj) for p in (1, 2)]
        js['s_parameter_definition'] = {
            'waves': 'a=(V+50*I)/(2*sqrt(50)), b=(V-50*I)/(2*sqrt(50)), V,I at the reference planes (board edges), I into the structure',
            'method': 'two FDTD runs (port 1 driven, port 2 driven; the other port is a matched line into the PML); '
                      'S = B*inv(A), exact w.r.t. 50 ohm at the planes whatever the feed-line impedance',
            'reference_planes': 'V/I measured 5 mm out on the feed lines (7.6 mm = 10 h from the random region, 15 mm '
                                'from the source), carried to the board edges x=0 and x=%.4f as a lossless line with the '
                                'FDTD phase theta(f) = beta*5 mm and real Z(f) of the feed line, both from the thru run '
                                '(see "line_calibration"). The same S from V/I measured directly at the board edges and '
                                '10 mm out is in "sanity.measurement_plane_check".' % LX,
            'dft': 'rectangle-rule DFT of the recorded probe signals on their own time axes (H probes half a step '
                   'later), no tail extrapolation',
            'touchstone': f'{c}.s2p, Touchstone v1, # GHz S RI R 50, order S11 S21 S12 S22',
            'frequencies_GHz': [float(f_ghz[0]), float(f_ghz[-1]), int(len(f_ghz))]}
        js['mesh'] = {ax: dict(mesh_stats(mesh[ax]), lines_mm=[round(float(v), 6) for v in mesh[ax]]) for ax in 'xyz'}
        js['mesh']['cells'] = int((len(mesh['x']) - 1) * (len(mesh['y']) - 1) * (len(mesh['z']) - 1))
        js['mesh']['description'] = (
            f'graded rectilinear mesh. Board: uniform d = {mesh["d_board"]:.4f} mm in x and y ({mesh["nsub"]} cells '
            'per pixel, every pixel edge on a mesh line), continued for 3 cells past the board ends. No thirds rule: '
            'a pixel edge of the random region has metal on one side in some rows and on the other side in others, '
            'and extra lines at d/3 would cut the time step about 3x; the cost is a strip that is effectively a '
            f'little wider (feed-line Z {np.real(at(cal["base"]["Z_ref"], f_ghz, 1.0)):.1f} ohm at 1 GHz instead of the '
            f'quasi-static {z_hj:.1f} ohm on this mesh, see "line_calibration"). '
            f'{mesh["nz_sub"]} uniform cells through the substrate (dz = {mesh["dz_sub"]:.4f} mm). Growth ratio '
            f'<= {GRADE} outward to {DMAX_XY} mm laterally (lambda/20 in the substrate at 10 GHz = '
            f'{LAM0_MM / np.sqrt(EPS_R) / 20:.3f} mm) and {DMAX_Z_AIR} mm in the air (lambda/20 = {LAM0_MM / 20:.3f} mm); '
            f'locally uniform {D_M2} mm spacing at the V/I measurement planes; PML 8 cells. Board edge to PML: '
            f'{X_FEED_TO_PML} mm along the feed lines, {Y_TO_PML} mm in y, {Z_AIR_TO_PML} mm of air above the '
            f'substrate ({Y_TO_PML / H:.1f} h and {Z_AIR_TO_PML / H:.1f} h; stub.json used ~10 h; '
            f'lambda0/{LAM0_MM / Z_AIR_TO_PML:.1f} at 10 GHz, lambda0/{10 * LAM0_MM / Z_AIR_TO_PML:.0f} at 1 GHz: '
            'the PML is in the near field at low frequency, where little is radiated; in a development test (thru '
            'line, source 7 mm out), 14 mm in y and 20 mm of air instead changed the lost power by less than 0.1 '
            '%-points at the 11 frequencies compared, 0.05-10 GHz)')
        js['domain'] = {'x': [float(mesh['x'][0]), float(mesh['x'][-1])],
                        'y': [float(mesh['y'][0]), float(mesh['y'][-1])],
                        'z': [float(mesh['z'][0]), float(mesh['z'][-1])],
                        'pml_inner_faces': {'x': [float(mesh['x'][N_PML]), float(mesh['x'][-1 - N_PML])],
                                            'y': [float(mesh['y'][N_PML]), float(mesh['y'][-1 - N_PML])],
                                            'z_top': float(mesh['z'][-1 - N_PML])}}
        js['boundaries'] = {'xmin': 'PML_8', 'xmax': 'PML_8', 'ymin': 'PML_8', 'ymax': 'PML_8',
                            'zmin': 'PEC (ground plane)', 'zmax': 'PML_8',
                            'note': '8-cell uniaxial PML; the feed-line strips and the substrate run into the x-PML, '
                                    'the substrate into the y-PML'}
        js['excitation'] = {'type': 'Gaussian pulse (openEMS SetGaussExcite)', 'f0_Hz': F0, 'fc_20dB_Hz': FC,
                            'note': 'spectrum -20 dB at 0 and 10 GHz relative to its peak at 5 GHz'}
        js['end_criterion'] = {'energy_decay_dB': 10 * np.log10(END_CRITERIA), 'max_timesteps': MAX_TS,
                               'all_runs_converged': bool(all(run_stats[(c, 'base', k)]['end_criterion_met'] for k in (1, 2)))}
        js['runs'] = [dict(run_stats_json(run_stats[(c, 'base', k)], k),
                           probe_tail_last5pct_rel_peak_dB={f'port{p}_{pl}_{tag}': v for p in (1, 2) for pl in ['ref'] + list(PLANES_OUT)
                                                            for tag, v in r['tails'][(k, p, pl)].items()})
                      for k in (1, 2)]
        js['line_calibration'] = {
            'description': 'feed line (56 mil on h=0.762, eps_r=4.5) from the thru run on the same mesh, at its '
                           'non-driven port: theta_P = -arg(V(P)/V(edge)) of the outgoing wave for the planes P 5 and '
                           '10 mm out, eps_eff = (theta_P/(k0 l_P))^2, Z = -V/I at each plane (I corrected by '
                           '1/cos(beta delta/2) at the 0.5-mm-spaced planes); the shift from P uses the mean real Z of P '
                           'and the edge plane. The exact three-point '
                           'relations (cos(beta delta) = (VA+VC)/(2VB), Z^2 = VB(VC-VA)/(Ip^2-Im^2)) at the measurement '
                           'plane are listed as a check (ill-conditioned below ~2 GHz).',
            'quasi_static_hammerstad_jensen': {'Z0_ohm': z_hj, 'eps_eff': e_hj},
            'base_mesh': feed_json('base'),
            **({'fine_mesh': feed_json('fine')} if have_fine else {})}

        hl = {'S11_S21_dB_at': {}, 'S22_S12_dB_at': {}, 'lost_power_percent': {}}
        for fv in HEAD_F_S:
            hl['S11_S21_dB_at'][str(fv)] = [db(at(S, f_ghz, fv)[0, 0]), db(at(S, f_ghz, fv)[1, 0])]
            hl['S22_S12_dB_at'][str(fv)] = [db(at(S, f_ghz, fv)[1, 1]), db(at(S, f_ghz, fv)[0, 1])]
        for fv in HEAD_F_P:
            hl['lost_power_percent'][str(fv)] = {
                'port1_1-|S11|^2-|S21|^2': 100 * at(p1, f_ghz, fv), 'port2_1-|S12|^2-|S22|^2': 100 * at(p2, f_ghz, fv),
                'all_planes_port1_port2': {vname[v]: [100 * at(lv[v][0], f_ghz, fv), 100 * at(lv[v][1], f_ghz, fv)]
                                           for v in variants},
                'plane_spread_port1_port2': [100 * at(spread[0], f_ghz, fv), 100 * at(spread[1], f_ghz, fv)],
                'thru_floor': 100 * at(thru_lost['base'][PK], f_ghz, fv),
                'thru_floor_all_planes': {vname[v]: 100 * at(thru_lost['base'][v], f_ghz, fv) for v in variants},
                'momentum_port1': 100 * pm1[im[fv]], 'momentum_port2': 100 * pm2[im[fv]]}
        js['headline'] = hl
        imax = int(np.argmax(sv))
        irec = int(np.argmax(recip))
        tl = thru_lost['base']
        js['sanity'] = {
            'max_singular_value': float(sv[imax]), 'f_at_max_singular_value_GHz': float(f_ghz[imax]),
            'min_lost_power_percent_port1_port2': [float(100 * p1.min()), float(100 * p2.min())],
            'f_at_min_lost_GHz': [float(f_ghz[np.argmin(p1)]), float(f_ghz[np.argmin(p2)])],
            'max_abs_S21_minus_S12': float(recip[irec]), 'f_at_max_abs_S21_minus_S12_GHz': float(f_ghz[irec]),
            'max_rel_S21_minus_S12': float(np.max(recip / np.abs(S[:, 1, 0]))),
            'S21_S11_at_0.05GHz_dB': [db(S[0, 1, 0]), db(S[0, 0, 0])],
            'lost_power_difference_unshifted_vs_shifted_max_percent': float(100 * max(
                np.max(np.abs(lost(r['S']['raw_' + PRIMARY])[0] - p1)), np.max(np.abs(lost(r['S']['raw_' + PRIMARY])[1] - p2)))),
            'measurement_plane_check': {
                'description': 'the same S from the other V/I planes: directly at the board edges (2.64 mm = 3.5 h from '
                               'the random region, so its near field reaches that plane) and 10 mm out (shifted like the '
                               '5 mm plane). Waves scattered by the structure into the substrate and the air (surface '
                               'and space waves) travel along the feed lines at other speeds than the microstrip mode '
                               'and beat with it at the V/I probes, so the lost power read at different planes differs '
                               'by more than the thru floor at high frequency: the spread over the three planes is the '
                               'port uncertainty of the lost power.',
                **{vname[v]: {'max_abs_lost_diff_vs_primary_percent_port1_port2':
                              [float(100 * np.max(np.abs(lv[v][0] - p1))), float(100 * np.max(np.abs(lv[v][1] - p2)))],
                              'max_abs_S_diff_vs_primary': float(np.max(np.abs(r['S'][v] - S))),
                              'max_abs_S21_minus_S12': float(np.max(np.abs(r['S'][v][:, 1, 0] - r['S'][v][:, 0, 1]))),
                              'max_rel_S21_minus_S12': float(np.max(np.abs(r['S'][v][:, 1, 0] - r['S'][v][:, 0, 1])
                                                                    / np.abs(r['S'][v][:, 1, 0]))),
                              'max_singular_value': float(np.max(sv_max(r['S'][v])))}
                   for v in variants if v != PK},
                'max_plane_spread_of_lost_percent_port1_port2': {
                    'below_5GHz': [float(100 * np.max(spread[q][f_ghz < 5 - 1e-9])) for q in (0, 1)],
                    '5_to_10GHz': [float(100 * np.max(spread[q][f_ghz >= 5 - 1e-9])) for q in (0, 1)]}},
            'thru_power_balance_floor': {
                'description': 'uniform 56-mil line from port to port (board metal = rows 2-8 over all 35 columns) on the '
                               'same mesh and ports, port 1 driven, S from that run and its mirror image (x-symmetric mesh). '
                               'Exact answer 0: this is the noise floor of the lost power (source and PML residue, DFT '
                               'truncation of a slow low-frequency tail, V/I definition)',
                'lost_percent_at': {str(fv): float(100 * at(tl[PK], f_ghz, fv)) for fv in HEAD_F_P},
                'lost_percent_at_other_planes': {vname[v]: {str(fv): float(100 * at(tl[v], f_ghz, fv)) for fv in HEAD_F_P}
                                                 for v in variants if v != PK},
                'max_abs_lost_percent_0.05_10GHz': float(100 * np.max(np.abs(tl[PK]))),
                'max_abs_lost_percent_0.05_10GHz_all_planes': {vname[v]: float(100 * np.max(np.abs(tl[v]))) for v in variants},
                'max_abs_lost_percent_below_and_above_5GHz': [float(100 * np.max(np.abs(tl[PK][f_ghz < 5 - 1e-9]))),
                                                             float(100 * np.max(np.abs(tl[PK][f_ghz >= 5 - 1e-9])))],
                'S11_dB_at': {str(fv): db(at(thru['base']['S'][PK], f_ghz, fv)[0, 0]) for fv in HEAD_F_S},
                'run': run_stats_json(run_stats[('thru', 'base', 1)], 1)},
            'truncation_check': {
                'description': 'lost power with the last 20 % of every probe record dropped (percentage points change)',
                'max_abs_change_percent_port1_port2': [float(100 * np.max(np.abs(t1 - p1))), float(100 * np.max(np.abs(t2 - p2)))],
                'change_percent_at': {str(fv): [float(100 * (at(t1, f_ghz, fv) - at(p1, f_ghz, fv))),
                                                float(100 * (at(t2, f_ghz, fv) - at(p2, f_ghz, fv)))] for fv in HEAD_F_P}},
        }
        js['momentum_comparison'] = {
            'file': f'tests/em/data/momentum/momentum/{c}.s2p',
            'note': 'Momentum includes copper (t = 2.8 mil) and an unknown loss tangent (~0.01); this FDTD run is '
                    'lossless, so the difference in lost power is conductor + dielectric loss (plus model differences)',
            'lost_percent': {str(fv): {'openems_port1': 100 * at(p1, f_ghz, fv), 'openems_port2': 100 * at(p2, f_ghz, fv),
                                       'momentum_port1': 100 * pm1[im[fv]], 'momentum_port2': 100 * pm2[im[fv]]}
                             for fv in HEAD_F_P},
            'S_dB_at': {str(fv): {'openems_S11_S21_S22': [db(at(S, f_ghz, fv)[0, 0]), db(at(S, f_ghz, fv)[1, 0]), db(at(S, f_ghz, fv)[1, 1])],
                                  'momentum_S11_S21_S22': [db(Sm[im[fv], 0, 0]), db(Sm[im[fv], 1, 0]), db(Sm[im[fv], 1, 1])],
                                  'openems_S21_phase_deg': float(np.angle(at(S, f_ghz, fv)[1, 0], deg=True)),
                                  'momentum_S21_phase_deg': float(np.angle(Sm[im[fv], 1, 0], deg=True))}
                        for fv in HEAD_F_S}}

        if c == 'sim213' and have_notch:
            rn = analyse(args.work, c, 'base_notch2', f_hz, cal['base'])
            Sn = rn['S'][PK]
            n1, n2 = lost(Sn)
            js['corner_notch_sensitivity'] = {
                'description': 'same base mesh, every corner notch 2x2 cells (0.1016 mm square) instead of 1 cell',
                'lost_percent_port1_port2_base_vs_notch2': {str(fv): [100 * at(p1, f_ghz, fv), 100 * at(n1, f_ghz, fv),
                                                                      100 * at(p2, f_ghz, fv), 100 * at(n2, f_ghz, fv)] for fv in HEAD_F_P},
                'S21_dB_base_vs_notch2': {str(fv): [db(at(S, f_ghz, fv)[1, 0]), db(at(Sn, f_ghz, fv)[1, 0])] for fv in HEAD_F_S},
                'S11_dB_base_vs_notch2': {str(fv): [db(at(S, f_ghz, fv)[0, 0]), db(at(Sn, f_ghz, fv)[0, 0])] for fv in HEAD_F_S},
                'runs': [run_stats_json(run_stats[(c, 'base_notch2', k)], k) for k in (1, 2)]}

        if c == 'sim213' and have_fine:
            rf = analyse(args.work, c, 'fine', f_hz, cal['fine'], excs=tuple(fine_exc))
            mc = {'description': ('sim213 on a 2x finer mesh: %d cells per pixel (d = %.4f mm), %d substrate cells, corner '
                                  'notch one fine cell; same outer grading, domain, ports and method; the feed line '
                                  'calibrated by a thru run on the fine mesh. Note: the capacitive coupling |S21| of '
                                  'this map runs through its corner gaps and pixel gaps and is NOT mesh-converged '
                                  '(see S21_dB); the lost power is.'
                                  % (LEVELS['fine']['nsub'], P / LEVELS['fine']['nsub'], LEVELS['fine']['nz_sub'])),
                  'mesh_fine': {ax: mesh_stats(rf['mesh'][ax]) for ax in 'xyz'},
                  'cells_fine': int((len(rf['mesh']['x']) - 1) * (len(rf['mesh']['y']) - 1) * (len(rf['mesh']['z']) - 1)),
                  'runs_fine': [run_stats_json(run_stats[(c, 'fine', k)], k) for k in fine_exc],
                  'thru_fine_run': run_stats_json(run_stats[('thru', 'fine', 1)], 1),
                  'thru_floor_fine_percent_at': {str(fv): float(100 * at(thru_lost['fine'][PK], f_ghz, fv)) for fv in HEAD_F_P},
                  'thru_floor_fine_max_abs_percent': float(100 * np.max(np.abs(thru_lost['fine'][PK])))}
            if rf['S'] is not None:
                Sf = rf['S'][PK]
                f1, f2 = lost(Sf)
                mc['compared'] = 'full S = B inv(A), base vs fine'
                mc['lost_percent_port1'] = {str(fv): [100 * at(p1, f_ghz, fv), 100 * at(f1, f_ghz, fv)] for fv in HEAD_F_P}
                mc['lost_percent_port2'] = {str(fv): [100 * at(p2, f_ghz, fv), 100 * at(f2, f_ghz, fv)] for fv in HEAD_F_P}
                mc['S21_dB'] = {str(fv): [db(at(S, f_ghz, fv)[1, 0]), db(at(Sf, f_ghz, fv)[1, 0])] for fv in HEAD_F_S}
                mc['S11_dB'] = {str(fv): [db(at(S, f_ghz, fv)[0, 0]), db(at(Sf, f_ghz, fv)[0, 0])] for fv in HEAD_F_S}
                mc['S22_dB'] = {str(fv): [db(at(S, f_ghz, fv)[1, 1]), db(at(Sf, f_ghz, fv)[1, 1])] for fv in HEAD_F_S}
                mc['S21_phase_deg'] = {str(fv): [float(np.angle(at(S, f_ghz, fv)[1, 0], deg=True)),
                                                 float(np.angle(at(Sf, f_ghz, fv)[1, 0], deg=True))] for fv in HEAD_F_S}
                mc['max_abs_change_0.05_10GHz'] = {
                    'lost_percent_points_port1_port2': [float(100 * np.max(np.abs(f1 - p1))), float(100 * np.max(np.abs(f2 - p2)))],
                    'S21_dB': float(np.max(np.abs(db(Sf[:, 1, 0]) - db(S[:, 1, 0])))),
                    'S11_dB': float(np.max(np.abs(db(Sf[:, 0, 0]) - db(S[:, 0, 0])))),
                    'abs_dS': float(np.max(np.abs(Sf - S)))}
                mc['fine_sanity'] = {'max_singular_value': float(np.max(sv_max(Sf))),
                                     'max_abs_S21_minus_S12': float(np.max(np.abs(Sf[:, 1, 0] - Sf[:, 0, 1])))}
                lvf = {v: lost(rf['S'][v]) for v in variants}
                sprf = [np.max([lvf[v][q] for v in variants], axis=0) - np.min([lvf[v][q] for v in variants], axis=0)
                        for q in (0, 1)]
                mc['fine_all_planes_lost_percent_port1_port2'] = {
                    str(fv): {vname[v]: [100 * at(lvf[v][0], f_ghz, fv), 100 * at(lvf[v][1], f_ghz, fv)] for v in variants}
                    for fv in HEAD_F_P}
                mc['fine_plane_spread_max_percent_port1_port2'] = {
                    'below_5GHz': [float(100 * np.max(sprf[q][f_ghz < 5 - 1e-9])) for q in (0, 1)],
                    '5_to_10GHz': [float(100 * np.max(sprf[q][f_ghz >= 5 - 1e-9])) for q in (0, 1)]}
            else:
                s11b, s21b, _ = single_run_s(r['VI'][PK][1])
                s11f, s21f, _ = single_run_s(rf['VI'][PK][1])
                lb = 1 - np.abs(s11b) ** 2 - np.abs(s21b) ** 2
                lf = 1 - np.abs(s11f) ** 2 - np.abs(s21f) ** 2
                mc['compared'] = 'single-run S11 = b1/a1, S21 = b2/a1 from the port-1-driven runs, base vs fine'
                mc['lost_percent_port1'] = {str(fv): [100 * at(lb, f_ghz, fv), 100 * at(lf, f_ghz, fv)] for fv in HEAD_F_P}
                mc['S21_dB'] = {str(fv): [db(at(s21b, f_ghz, fv)), db(at(s21f, f_ghz, fv))] for fv in HEAD_F_S}
                mc['S11_dB'] = {str(fv): [db(at(s11b, f_ghz, fv)), db(at(s11f, f_ghz, fv))] for fv in HEAD_F_S}
            js['mesh_check'] = mc

        with open(os.path.join(HERE, c + '.json'), 'w') as fo:
            json.dump(to_py(js), fo, indent=1)
        write_txt(os.path.join(HERE, c + '.txt'), c, js)
        print(open(os.path.join(HERE, c + '.txt')).read())


def port_json(pg, z_hj, e_hj):
    x_ref = pg['x_ref']
    return {
        'number': pg['number'],
        'type': 'microstrip-line port built like openEMS MSLPort (quasi-TEM V/I), own probes and post-processing',
        'reference_plane_x_mm': x_ref,
        'strip_width_mm': W_LINE, 'strip_y_mm': [Y0_LINE, Y1_LINE], 'strip_centre_y_mm': YC_LINE,
        'reference_impedance_ohm': Z_REF,
        'feed_line_quasistatic_HJ': {'Z0_ohm': z_hj, 'eps_eff': e_hj},
        'port_line': 'uniform 56-mil line continuing the launch from the board edge outward through the PML '
                     '(matched semi-infinite line)',
        'excitation_plane_x_mm': pg['x_exc'],
        'excitation': 'soft E_z source over the strip footprint (y0..y1, z=0..h), Gaussian pulse',
        'distance_excitation_to_reference_plane_mm': abs(pg['x_exc'] - x_ref),
        'voltage_probe': 'E_z line integral from z=h to z=0 (weight -1, as MSLPort) at the strip centre '
                         f'y={YC_LINE:.4f}, on three mesh lines: VA (outward), VB (the plane), VC (inward)',
        'current_probe': 'closed H loop around the strip (dual grid) at the two half-cell positions VA-VB and '
                         'VB-VC, weight +1/-1 so that I flows INTO the structure',
        'planes': pg['planes'],
        'measurement': 'V = VB, I = (Im+Ip)/2/cos(beta delta/2) on the plane 5 mm out on the feed line (locally '
                       'uniform 0.5 mm spacing), carried to the reference plane as a lossless line (thru-calibrated '
                       'theta = beta*5 mm and real Z)',
        'check_planes': 'the same probes at the reference plane itself (uniform board spacing d, no shift) and 10 mm '
                        'out (shifted like the 5 mm plane)',
        'current_sign': 'into the structure'}


def to_py(o):
    if isinstance(o, dict):
        return {str(k): to_py(v) for k, v in o.items()}
    if isinstance(o, (list, tuple)):
        return [to_py(v) for v in o]
    if isinstance(o, np.ndarray):
        return to_py(o.tolist())
    if isinstance(o, np.bool_):
        return bool(o)
    if isinstance(o, np.integer):
        return int(o)
    if isinstance(o, (np.floating, float)):
        return float(o)
    if isinstance(o, complex):
        return [o.real, o.imag]
    return o


def write_txt(path, c, js):
    L = []
    L.append(f'{c} (ADS-Momentum pixel map; openEMS FDTD, LOSSLESS: eps_r={EPS_R}, tan d=0, h={H} mm, '
             'zero-thickness PEC, infinite substrate and ground; 50-ohm MSL ports, reference planes at the board edges)')
    hs = js['headline']
    L.append('|S11|,|S21| dB: ' + ', '.join(f'{k} GHz: {v[0]:.2f}, {v[1]:.2f}' for k, v in hs['S11_S21_dB_at'].items()))
    L.append('|S22|,|S12| dB: ' + ', '.join(f'{k} GHz: {v[0]:.2f}, {v[1]:.2f}' for k, v in hs['S22_S12_dB_at'].items()))
    names = list(next(iter(hs['lost_power_percent'].values()))['all_planes_port1_port2'])
    L.append('lost power % = 1-|S11|^2-|S21|^2 | 1-|S12|^2-|S22|^2 (V/I 5 mm out, shifted: the s2p)   '
             '[Momentum, lossy Cu + tan d]   {other V/I planes: ' + '; '.join(n for n in names if '5 mm' not in n) +
             '}   <thru floor>')
    for k, h in hs['lost_power_percent'].items():
        oth = '; '.join(f'{v[0]:6.3f} | {v[1]:6.3f}' for n, v in h['all_planes_port1_port2'].items() if '5 mm' not in n)
        L.append(f'  {float(k):4g} GHz: {h["port1_1-|S11|^2-|S21|^2"]:6.3f} | {h["port2_1-|S12|^2-|S22|^2"]:6.3f}   '
                 f'[{h["momentum_port1"]:6.3f} | {h["momentum_port2"]:6.3f}]   {{{oth}}}   <{h["thru_floor"]:6.3f}>')
    s = js['sanity']
    L.append(f'sanity: max singular value of S {s["max_singular_value"]:.4f} (at {s["f_at_max_singular_value_GHz"]:.2f} GHz); '
             f'min lost power {s["min_lost_power_percent_port1_port2"][0]:.3f} / {s["min_lost_power_percent_port1_port2"][1]:.3f} % '
             f'(at {s["f_at_min_lost_GHz"][0]:.2f} / {s["f_at_min_lost_GHz"][1]:.2f} GHz); max |S21-S12| '
             f'{s["max_abs_S21_minus_S12"]:.1e} (at {s["f_at_max_abs_S21_minus_S12_GHz"]:.2f} GHz; max relative '
             f'{s["max_rel_S21_minus_S12"]:.1e}); |S21|, |S11| at 0.05 GHz {s["S21_S11_at_0.05GHz_dB"][0]:.2f}, '
             f'{s["S21_S11_at_0.05GHz_dB"][1]:.3f} dB')
    t = s['thru_power_balance_floor']
    L.append('power-balance floor (uniform thru line, same mesh and ports; exact 0): lost % ' +
             ', '.join(f'{k} GHz: {v:.3f}' for k, v in t['lost_percent_at'].items()) +
             f'; max |lost| below / from 5 GHz {t["max_abs_lost_percent_below_and_above_5GHz"][0]:.3f} / '
             f'{t["max_abs_lost_percent_below_and_above_5GHz"][1]:.3f} % (all planes: ' +
             ', '.join(f'{n} {v:.3f}' for n, v in t['max_abs_lost_percent_0.05_10GHz_all_planes'].items()) + ')')
    mp = s['measurement_plane_check']
    sp = mp['max_plane_spread_of_lost_percent_port1_port2']
    L.append(f'port uncertainty: spread of the lost power over the three V/I planes, max below 5 GHz '
             f'{sp["below_5GHz"][0]:.3f} / {sp["below_5GHz"][1]:.3f}, 5-10 GHz {sp["5_to_10GHz"][0]:.3f} / '
             f'{sp["5_to_10GHz"][1]:.3f} %-points (port 1 / port 2)')
    for n, v in mp.items():
        if isinstance(v, dict) and 'max_abs_S_diff_vs_primary' in v:
            L.append(f'   {n}: max |delta S| {v["max_abs_S_diff_vs_primary"]:.4f}, max |S21-S12| {v["max_abs_S21_minus_S12"]:.1e} '
                     f'(relative {v["max_rel_S21_minus_S12"]:.1e}), max singular value {v["max_singular_value"]:.4f}')
    tc = s['truncation_check']
    L.append(f'truncation: dropping the last 20 % of the records changes the lost power by at most '
             f'{tc["max_abs_change_percent_port1_port2"][0]:.3f} / {tc["max_abs_change_percent_port1_port2"][1]:.3f} %-points')
    for r in js['runs']:
        L.append(f'run exc port {r["driven_port"]}: {r["timesteps_run"]} steps ({r["simulated_time_ns"]:.2f} ns), energy '
                 f'{r["last_logged_energy_dB"]:.1f} dB (end criterion -50 dB {"met" if r["end_criterion_met"] else "NOT met"}), '
                 f'wall {r["wall_runtime_s"]:.0f} s, {js["mesh"]["cells"] / 1e6:.2f} M cells')
    lc = js['line_calibration']
    L.append('feed line (thru run, non-driven port): ' +
             ', '.join(f'{k}: Z={v["Z_ohm_board_edge_plane"][0]:.2f} ohm (5 mm out {v["m5"]["Z_ohm"][0]:.2f}), '
                       f'eeff={v["m5"]["eps_eff_from_phase_to_edge"]:.3f}' for k, v in lc['base_mesh'].items()) +
             f'; quasi-static HJ {lc["quasi_static_hammerstad_jensen"]["Z0_ohm"]:.2f} ohm, '
             f'{lc["quasi_static_hammerstad_jensen"]["eps_eff"]:.3f}')
    if 'fine_mesh' in lc:
        L.append('   on the fine mesh: ' + ', '.join(f'{k}: Z={v["Z_ohm_board_edge_plane"][0]:.2f} ohm, '
                                                   f'eeff={v["m5"]["eps_eff_from_phase_to_edge"]:.3f}'
                                                   for k, v in lc['fine_mesh'].items()))
    cc = js['corner_contacts']
    L.append(f'corner-only contacts: {cc["count"]}, each broken by removing the one mesh cell of each pixel at the shared '
             f'node; launches DC-connected after that: {js["source_geometry"]["dc_connected_port_to_port_after_corner_handling"]}')
    if 'corner_notch_sensitivity' in js:
        ns = js['corner_notch_sensitivity']
        L.append('corner notch 2x2 cells instead of 1 (base mesh): lost % port 1 ' +
                 ', '.join(f'{k}: {v[0]:.3f} -> {v[1]:.3f}' for k, v in ns['lost_percent_port1_port2_base_vs_notch2'].items()) +
                 '; |S21| dB ' + ', '.join(f'{k}: {v[0]:.2f} -> {v[1]:.2f}' for k, v in ns['S21_dB_base_vs_notch2'].items()))
    if 'mesh_check' in js:
        mc = js['mesh_check']
        L.append(f'mesh check (2x finer board mesh and substrate, {mc["cells_fine"] / 1e6:.2f} M cells; {mc["compared"]}): '
                 'lost % port 1 ' + ', '.join(f'{k}: {v[0]:.3f} -> {v[1]:.3f}' for k, v in mc['lost_percent_port1'].items()))
        if 'lost_percent_port2' in mc:
            L.append('   lost % port 2 ' + ', '.join(f'{k}: {v[0]:.3f} -> {v[1]:.3f}' for k, v in mc['lost_percent_port2'].items()))
        L.append('   |S21| dB ' + ', '.join(f'{k}: {v[0]:.2f} -> {v[1]:.2f}' for k, v in mc['S21_dB'].items()) +
                 '; |S11| dB ' + ', '.join(f'{k}: {v[0]:.2f} -> {v[1]:.2f}' for k, v in mc['S11_dB'].items()))
        if 'max_abs_change_0.05_10GHz' in mc:
            m_ = mc['max_abs_change_0.05_10GHz']
            L.append(f'   max changes 0.05-10 GHz: lost {m_["lost_percent_points_port1_port2"][0]:.3f} / '
                     f'{m_["lost_percent_points_port1_port2"][1]:.3f} %-points, |S21| {m_["S21_dB"]:.2f} dB, '
                     f'|S11| {m_["S11_dB"]:.2f} dB; fine thru floor max {mc["thru_floor_fine_max_abs_percent"]:.3f} %; '
                     f'fine max singular value {mc["fine_sanity"]["max_singular_value"]:.4f}')
        if 'fine_plane_spread_max_percent_port1_port2' in mc:
            q = mc['fine_plane_spread_max_percent_port1_port2']
            L.append(f'   fine mesh plane spread of the lost power: below 5 GHz {q["below_5GHz"][0]:.3f} / {q["below_5GHz"][1]:.3f}, '
                     f'5-10 GHz {q["5_to_10GHz"][0]:.3f} / {q["5_to_10GHz"][1]:.3f} %-points')
        L.append('   fine runs: ' + '; '.join(f'exc {r["driven_port"]}: {r["timesteps_run"]} steps, {r["last_logged_energy_dB"]} dB, '
                                            f'{r["wall_runtime_s"]:.0f} s' for r in mc['runs_fine']) +
                 f'; fine thru: {mc["thru_fine_run"]["timesteps_run"]} steps, {mc["thru_fine_run"]["wall_runtime_s"]:.0f} s')
    with open(path, 'w') as fo:
        fo.write('\n'.join(L) + '\n')


if __name__ == '__main__':
    main()
