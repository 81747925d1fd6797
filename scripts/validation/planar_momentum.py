"""The planar model against ADS Momentum on the eight pixelated two-ports
of tests/em/data/momentum (pixelatedRF dataset, MIT licence): |S21| and
|S11| overlays per circuit and the error statistics, for the model as a
user runs it (every default effect) with Momentum's raw edge ports, with
calibrated ports, and with dispersion added.

Statistics as tests/em/test_momentum.c defines them: per circuit the median
over 0.05-10 GHz of |dS21| and |dS11| (complex, linear), the worst |dS| of
any entry, and the lost power 1 - |S11|^2 - |S21|^2 at 1, 5 and 10 GHz."""
import os

import numpy as np

from common import OUT_DOCS, ROOT, Report, db, gnuplot, md_table, s2p, write_table
from sweep import WORK, sweep

DATA = os.path.join(ROOT, "tests", "em", "data", "momentum")
PROBES = (1.0, 5.0, 10.0)

# (label, key, calibration, dispersion): the variants compared
VARIANTS = [
    ("every default effect, raw edge ports (Momentum's port definition)", "raw", "none", False),
    ("every default effect, calibrated ports (the shipped default)", "cal", "thru", False),
    ("every default effect and dispersion, raw edge ports", "disp", "none", True),
]


def circuits():
    """(sim number, symmetry, DC-connected) in circuits.tsv's order."""
    rows = []
    for line in open(os.path.join(DATA, "circuits.tsv")):
        if line.startswith("#") or not line.strip():
            continue
        sim, sym, dc = line.split()
        rows.append((int(sim), sym, dc == "1"))
    return rows


def project(sim, calibration, dispersion):
    """The dataset's stack-up (data/momentum/README.md): h 30 mil, er 4.5,
    tan d 0.01 (what the open circuits' Y11 points to), copper 5.88e7 S/m
    2.8 mil thick, 8-mil pixels, 50-ohm edge ports across the launches."""
    ports = [{"name": "P1", "side": "left", "x": 0, "y": [16, 72], "calibration": calibration},
             {"name": "P2", "side": "right", "x": 280, "y": [16, 72], "calibration": calibration}]
    return {"title": "Momentum dataset sim%d" % sim, "units": "mil",
            "substrate": {"thickness": 30, "eps_r": 4.5, "tan_delta": 0.01},
            "metal": {"conductivity": 5.88e7, "thickness": 2.8},
            "grid": {"dx": 8, "dy": 8, "nx": 35, "ny": 11},
            "pixels": {"csv": os.path.join(DATA, "pixelmaps", "sim%d.csv" % sim)},
            "ports": ports, "effects": {"dispersion": dispersion}}


def lost(S):
    return 1 - np.abs(S[:, 0]) ** 2 - np.abs(S[:, 1]) ** 2


def stats(f, S, M):
    d21, d11 = np.abs(S[:, 1] - M[:, 1]), np.abs(S[:, 0] - M[:, 0])
    at = [int(np.argmin(np.abs(f - p))) for p in PROBES]
    return {"med21": np.median(d21), "med11": np.median(d11), "worst": np.max(np.abs(S - M)),
            "lost": lost(S)[at], "lost_ref": lost(M)[at]}


def main():
    rep = Report("planar-momentum", "Planar model against ADS Momentum: eight pixelated two-ports")
    results = {key: {} for _, key, _, _ in VARIANTS}
    seconds = {key: 0.0 for _, key, _, _ in VARIANTS}
    refs = {}
    for sim, _, _ in circuits():
        fm, Mall = s2p(os.path.join(DATA, "momentum", "sim%d.s2p" % sim))
        keep = fm >= 0.05 - 1e-9  # Momentum's file starts at DC; the sweep at 50 MHz
        refs[sim] = (fm[keep], Mall[keep])
        for _, key, cal, disp in VARIANTS:
            f, S, t = sweep("momentum-sim%d-%s" % (sim, key), project(sim, cal, disp),
                            ["--start", "0.05GHz", "--stop", "10GHz", "--points", "200"])
            assert np.allclose(f, refs[sim][0]), "the sweep's frequencies are Momentum's"
            results[key][sim] = (S, stats(f, S, refs[sim][1]))
            seconds[key] += t

    overlays = []
    for sim, sym, dc in circuits():
        f, M = refs[sim]
        Sr, Sd = results["raw"][sim][0], results["disp"][sim][0]
        dat = os.path.join(WORK, "momentum-sim%d.dat" % sim)
        write_table(dat, ["f_GHz", "mom_S21_dB", "raw_S21_dB", "disp_S21_dB", "mom_S11_dB", "raw_S11_dB", "disp_S11_dB"],
                    zip(f, db(M[:, 1]), db(Sr[:, 1]), db(Sd[:, 1]), db(M[:, 0]), db(Sr[:, 0]), db(Sd[:, 0])))
        path, rel = rep.image("sim%d" % sim)
        gnuplot("momentum.gp", data=dat, out=path,
                title="sim%d (symmetry %s, %s)" % (sim, sym, "DC-connected" if dc else "no DC path"))
        overlays.append("![sim%d: |S21| and |S11|, Momentum and Solvent](%s)" % (sim, rel))

    rep.add("""## Set-up

The eight circuits of `tests/em/data/momentum` (one per symmetry class and DC connection, from
the public pixelatedRF dataset; Momentum B.12.070, full-wave mode, 50 Ω). Each is written as a
project (below) and swept with `solvent sweep` at Momentum's 200 frequencies, 0.05–10 GHz.
Stack-up from the dataset's generator: h = 30 mil, εr = 4.5, copper σ = 5.88·10⁷ S/m,
t = 2.8 mil; tan δ = 0.01 is assumed (what the open circuits' Y11 at 1–3 GHz points to: the
ADS substrate definition is not in the dataset). Every default effect is on (thick metal,
dielectric loss, edge profiles, radiation). Momentum's ports are raw edge ports
(tests/em/test_momentum_ports.c, 258 circuits), so the raw-port rows compare like with like;
the calibrated rows are the shipped default.

Errors: per circuit, the median over frequency of |ΔS21| and |ΔS11| (complex, linear), the
worst |ΔS| of any entry at any frequency, and the lost power 1 − |S11|² − |S21|² (Momentum's
in brackets).""")

    for label, key, _, _ in VARIANTS:
        rows = []
        for sim, sym, dc in circuits():
            s = results[key][sim][1]
            rows.append(["sim%d" % sim, sym, "yes" if dc else "no", "%.4f" % s["med21"], "%.4f" % s["med11"],
                         "%.4f" % s["worst"]] +
                        ["%.2f %% (%.2f %%)" % (100 * a, 100 * b) for a, b in zip(s["lost"], s["lost_ref"])])
        st = [results[key][sim][1] for sim, _, _ in circuits()]
        ratio = [np.median([s["lost"][k] / s["lost_ref"][k] for s in st]) for k in range(3)]
        rows.append(["**median**", "", "", "%.4f" % np.median([s["med21"] for s in st]),
                     "%.4f" % np.median([s["med11"] for s in st]), "%.4f (max)" % max(s["worst"] for s in st)] +
                    ["lost / Momentum's %.2f" % r for r in ratio])
        rep.add("## %s\n\nSweep time, all eight circuits: %.1f s.\n\n%s" % (label, seconds[key], md_table(
            ["circuit", "symmetry", "DC path", "median abs dS21", "median abs dS11", "worst abs dS",
             "lost 1 GHz", "lost 5 GHz", "lost 10 GHz"], rows)))

    rep.add("## Overlays\n\nMomentum (black), Solvent with raw ports (red) and with dispersion as well "
            "(blue, dashed).\n\n" + "\n\n".join(overlays))
    rep.add("## The project of one circuit (sim572, raw ports)\n\n```json\n%s\n```" %
            open(os.path.join(WORK, "momentum-sim572-raw.json")).read().replace(ROOT + "/", ""))
    rep.write("make validation        # or, this report alone:\n"
              "SOLVENT=build/solvent .venv/bin/python scripts/validation/planar_momentum.py\n"
              "# one circuit by hand (project as above):\n"
              "build/solvent sweep out/validation/momentum-sim572-raw.json -o sim572.s2p "
              "--start 0.05GHz --stop 10GHz --points 200",
              "Solvent's S-parameters of the eight Momentum circuits, with the median and worst "
              "differences from Momentum's and the power each loses. The tables below are this run's.")


if __name__ == "__main__":
    main()
