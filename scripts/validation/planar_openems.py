"""The planar model against openEMS (FDTD) on the references of
tests/em/data/openems: the quarter-wave stub and Pozar's stepped-impedance
low-pass filter (examples/stub.json, examples/pozar_lpf.json, every default
effect, with and without dispersion), and two of Momentum's pixel maps that
openEMS simulated lossless (sim213, sim572).

The stub's and filter's openEMS ports are microstrip-line ports at the
structure's ends, Solvent's calibrated ports put their planes there too;
features (notch, crossings) are compared directly and magnitudes in dB
where openEMS's |S| > -20 dB, as tests/em/test_fullwave.c does."""
import json
import os

import numpy as np

from common import ROOT, Report, db, gnuplot, md_table, s2p, write_table
from planar_momentum import DATA as MOMENTUM
from sweep import WORK, sweep

OPENEMS = os.path.join(ROOT, "tests", "em", "data", "openems")


def example(name, dispersion):
    with open(os.path.join(ROOT, "examples", name)) as f:
        p = json.load(f)
    p.setdefault("effects", {})["dispersion"] = dispersion
    return p


def at(fr, Sr, f):
    """The reference's S at f (GHz), interpolated linearly (real and imaginary parts)."""
    return np.stack([np.interp(f, fr, Sr[:, k].real) + 1j * np.interp(f, fr, Sr[:, k].imag) for k in range(4)], axis=1)


def notch(f, S):
    """Near the smallest |S21| the complex S21 is about linear in f; |S21| is
    least at the real part of its zero (tests/em/test_fullwave.c)."""
    k = int(np.argmin(np.abs(S[1:-1, 1]))) + 1
    slope = (S[k + 1, 1] - S[k - 1, 1]) / (f[k + 1] - f[k - 1])
    return float((f[k] - S[k, 1] / slope).real)


def crossing(f, S, level):
    """Where |S21| in dB first falls through level (linear between points)."""
    d = db(S[:, 1])
    for i in range(len(f) - 1):
        if d[i] >= level > d[i + 1]:
            return f[i] + (level - d[i]) / (d[i + 1] - d[i]) * (f[i + 1] - f[i])
    return float("nan")


def worst_db(f, S, R, k):
    """Largest |Δ|S_k|| in dB where the reference's |S_k| > -20 dB, and where."""
    keep = db(R[:, k]) > -20
    d = np.where(keep, np.abs(db(S[:, k]) - db(R[:, k])), 0)
    i = int(np.argmax(d))
    return d[i], f[i]


def overlay(rep, tag, title, f, R, runs, ref_label):
    dat = os.path.join(WORK, "openems-%s.dat" % tag)
    cols = [f, db(R[:, 1]), db(R[:, 0])]
    for S in runs.values():
        cols += [db(S[:, 1]), db(S[:, 0])]
    write_table(dat, ["f_GHz", "ref_S21_dB", "ref_S11_dB"] + ["run%d" % i for i in range(2 * len(runs))], zip(*cols))
    path, rel = rep.image(tag)
    labels = list(runs)
    gnuplot("openems.gp", data=dat, out=path, title=title, ref=ref_label, l1=labels[0], l2=labels[1])
    return "![%s](%s)" % (title, rel)


def two_runs(stem, example_name, args):
    runs = {}
    for label, disp in (("Solvent, every default effect", False), ("Solvent + dispersion", True)):
        f, S, _ = sweep("openems-%s-%s" % (stem, "disp" if disp else "plain"), example(example_name, disp), args)
        runs[label] = S
    return f, runs


def stub(rep):
    fr, Rr = s2p(os.path.join(OPENEMS, "stub.s2p"))
    f, runs = two_runs("stub", "stub.json", ["--start", "0.5GHz", "--stop", "4GHz", "--points", "351"])
    R = at(fr, Rr, f)
    ref_notch = 1.9774  # openEMS's, stub.txt (0.03 MHz sampling)
    rows = []
    for label, S in runs.items():
        n = notch(f, S)
        w11, a11 = worst_db(f, S, R, 0)
        w21, a21 = worst_db(f, S, R, 1)
        rows.append([label, "%.4f GHz (%+.2f %%)" % (n, 100 * (n / ref_notch - 1)),
                     "%.2f dB at %.2f GHz" % (w11, a11), "%.2f dB at %.2f GHz" % (w21, a21)])
    rows.insert(0, ["openEMS", "%.4f GHz" % ref_notch, "", ""])
    img = overlay(rep, "stub", "quarter-wave open stub (examples/stub.json)", f, R, runs, "openEMS")
    rep.add("## Quarter-wave open stub\n\n`examples/stub.json` (εr 4.4, h 1.6 mm, perfect metal, lossless), "
            "0.5–4 GHz in 10 MHz steps. Largest |Δ|S|| where openEMS's |S| > −20 dB.\n\n" +
            md_table(["run", "notch", "largest |Δ|S11||", "largest |Δ|S21||"], rows) + "\n\n" + img)


def lowpass(rep):
    fr, Rr = s2p(os.path.join(OPENEMS, "lpf.s2p"))
    f, runs = two_runs("lpf", "pozar_lpf.json", ["--start", "0.5GHz", "--stop", "6GHz", "--points", "221"])
    R = at(fr, Rr, f)
    ref = (crossing(fr, Rr, -3), crossing(fr, Rr, -20))
    rows = [["openEMS", "%.3f GHz" % ref[0], "%.3f GHz" % ref[1], "", ""]]
    for label, S in runs.items():
        c = (crossing(f, S, -3), crossing(f, S, -20))
        w11, a11 = worst_db(f, S, R, 0)
        w21, a21 = worst_db(f, S, R, 1)
        rows.append([label] + ["%.3f GHz (%+.2f %%)" % (c[k], 100 * (c[k] / ref[k] - 1)) for k in range(2)] +
                    ["%.2f dB at %.2f GHz" % (w11, a11), "%.2f dB at %.2f GHz" % (w21, a21)])
    img = overlay(rep, "lpf", "stepped-impedance low-pass filter (examples/pozar_lpf.json)", f, R, runs, "openEMS")
    rep.add("## Stepped-impedance low-pass filter\n\n`examples/pozar_lpf.json` (Pozar's N = 6 design, εr 4.2, "
            "h 1.58 mm, perfect metal, lossless), 0.5–6 GHz in 25 MHz steps. Crossings of |S21| found the "
            "same way on both.\n\n" + md_table(["run", "-3 dB", "-20 dB", "largest |Δ|S11||", "largest |Δ|S21||"], rows) +
            "\n\n" + img)


def pixel_project(sim, calibration):
    """openEMS's assumptions for these runs (openems/momentum/README.md):
    zero-thickness perfect metal, lossless dielectric, radiation on."""
    ports = [{"name": "P1", "side": "left", "x": 0, "y": [16, 72], "calibration": calibration},
             {"name": "P2", "side": "right", "x": 280, "y": [16, 72], "calibration": calibration}]
    return {"units": "mil", "substrate": {"thickness": 30, "eps_r": 4.5, "tan_delta": 0.0},
            "metal": {"conductivity": "inf"}, "grid": {"dx": 8, "dy": 8, "nx": 35, "ny": 11},
            "pixels": {"csv": os.path.join(MOMENTUM, "pixelmaps", "sim%d.csv" % sim)}, "ports": ports,
            "effects": {"radiation": True, "thick_metal": False, "dielectric_loss": False}}


def pixels(rep):
    probes = (1.0, 5.0, 10.0)
    rows, imgs = [], []
    for sim in (213, 572):
        fr, R = s2p(os.path.join(OPENEMS, "momentum", "sim%d.s2p" % sim))
        runs = {}
        for label, cal in (("Solvent, raw ports", "none"), ("Solvent, calibrated ports", "thru")):
            f, S, _ = sweep("openems-sim%d-%s" % (sim, cal), pixel_project(sim, cal),
                            ["--start", "0.05GHz", "--stop", "10GHz", "--points", "200"])
            runs[label] = S
        Rf = at(fr, R, f)
        lost = lambda S: 1 - np.abs(S[:, 0]) ** 2 - np.abs(S[:, 1]) ** 2
        idx = [int(np.argmin(np.abs(f - p))) for p in probes]
        rows.append(["sim%d" % sim, "openEMS (lossless)", "", "", ""] + ["%.2f %%" % (100 * lost(Rf)[i]) for i in idx])
        for label, S in runs.items():
            rows.append(["sim%d" % sim, label, "%.4f" % np.median(np.abs(S[:, 1] - Rf[:, 1])),
                         "%.4f" % np.median(np.abs(S[:, 0] - Rf[:, 0])), "%.4f" % np.max(np.abs(S - Rf))] +
                        ["%.2f %%" % (100 * lost(S)[i]) for i in idx])
        imgs.append(overlay(rep, "sim%d" % sim, "pixel map sim%d, lossless" % sim, f, Rf, runs, "openEMS"))
    rep.add("## Two pixelated two-ports (Momentum's sim213 and sim572), lossless\n\n"
            "openEMS's runs of `tests/em/data/openems/momentum` (zero-thickness perfect metal, tan δ = 0): whatever "
            "power is lost is radiation and surface waves. Solvent with the same stack-up and radiation on, "
            "0.05–10 GHz. Differences are complex and linear; lost power is 1 − |S11|² − |S21|².\n\n" +
            md_table(["circuit", "run", "median |ΔS21|", "median |ΔS11|", "worst |ΔS|", "lost 1 GHz",
                      "lost 5 GHz", "lost 10 GHz"], rows) + "\n\n" + "\n\n".join(imgs))


def recorded_earlier(rep):
    """Radiation figures this script does not re-run (tests/em/test_radiation.c
    and test_feed_continuation.c measure them), as the guide stated them."""
    rows = [["stub: 1 − |S11|² − |S21|² between raw edge ports, 2.25 / 3 / 4 GHz", "openEMS, lumped ports: 1.67 / 2.37 / 4.66 %",
             "1.16 / 2.13 / 4.12 %"],
            ["stub: its own radiation (calibrated ports, less its main line's), 2.25 / 3 / 4 GHz",
             "openEMS, matched feeds: 0.76 / 1.13 / 1.41 %", "0.74 / 1.42 / 1.97 %"],
            ["stub: radiated power with the feeds continued beyond the ports (first order; "
             "tests/em/test_feed_continuation.c, not in the model)", "openEMS, matched feeds: 0.76 / 1.13 / 1.41 %",
             "0.81 / 1.26 / 1.56 %"],
            ["patch 48.4 × 40.5 mm, εr 2.2, h 1.575 mm, 24 × 24 cells, edge-fed: resonance",
             "Hammerstad: 2.4474 GHz", "2.4429 GHz (−0.18 %)"],
            ["the same patch: radiation Q (B slope over G at B = 0)",
             "Jackson & Alexopoulos at the model's resonance: 49.0 (space wave 51.4)", "41.8 (−14.5 %)"]]
    rep.add("## Recorded earlier (not re-run by this report)\n\nRadiation figures measured by tests/em/test_radiation.c "
            "and test_feed_continuation.c with every default effect, as docs/em.md stated them on 2026-12-07 (commit "
            "98e39db); run those tests (`cd build && ctest -R radiation --output-on-failure`) to re-measure.\n\n" +
            md_table(["quantity", "reference", "Solvent"], rows))


def main():
    rep = Report("planar-openems", "Planar model against openEMS: stub, low-pass filter, pixel circuits")
    rep.add("## References\n\nopenEMS 0.0.35 (FDTD, Debian), set-ups and headline figures in "
            "`tests/em/data/openems/*.txt` and `*.json`: lossless dielectric, zero-thickness perfect metal, "
            "infinite substrate, microstrip-line ports at the structure's ends. Its own mesh checks put the "
            "stub's notch within 0.8 MHz and the filter's frequencies within about 0.45 %; below about −30 dB "
            "its filter |S21| carries about ±1 dB.")
    stub(rep)
    lowpass(rep)
    pixels(rep)
    recorded_earlier(rep)
    rep.write("make validation        # or, this report alone:\n"
              "SOLVENT=build/solvent .venv/bin/python scripts/validation/planar_openems.py\n"
              "build/solvent sweep examples/stub.json -o stub.s2p --start 0.5GHz --stop 4GHz --points 351\n"
              "build/solvent sweep examples/pozar_lpf.json -o lpf.s2p --start 0.5GHz --stop 6GHz --points 221",
              "Solvent's S-parameters against openEMS's full-wave FDTD results: the stub's notch, the filter's "
              "crossings, the largest magnitude differences, and the power two pixel circuits radiate.")


if __name__ == "__main__":
    main()
