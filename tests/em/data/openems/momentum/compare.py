#!/usr/bin/python3
"""Solvent and ADS Momentum against this folder's openEMS runs of sim213
and sim572 (docs/em.md, "The Momentum comparison": a second full-wave peer).

  /usr/bin/python3 tests/em/data/openems/momentum/compare.py [build/solvent]

Writes the projects to a temporary folder, sweeps each with `solvent sweep`
at Momentum's 200 frequencies (0.05-10 GHz) and prints the lost power
1 - |S11|^2 - |S21|^2 at 1/2/3/5/7.5/10 GHz and the medians over the band of
|dS21| and |dS11| (complex, linear) and the worst |dS| against openEMS.
About a minute."""
import json, os, statistics, subprocess, sys, tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))
from touchstone import read_touchstone  # noqa: E402 (the folder above)
ROOT = os.path.normpath(os.path.join(HERE, "..", "..", "..", "..", ".."))
MOMENTUM = os.path.join(ROOT, "tests", "em", "data", "momentum")
PROBES = [1.0, 2.0, 3.0, 5.0, 7.5, 10.0]

# Solvent's variants: openEMS's assumptions (zero-thickness perfect metal,
# lossless dielectric, radiation on) with raw and with calibrated ports, and
# the Momentum test's (thick copper, tan d 0.01) with raw ports.
VARIANTS = [
    ("Solvent, openEMS's stack-up, raw ports", {"conductivity": "inf"}, 0.0, "none"),
    ("Solvent, openEMS's stack-up, calibrated ports", {"conductivity": "inf"}, 0.0, "thru"),
    ("Solvent, Momentum test's stack-up, raw ports", {"conductivity": 5.88e7, "thickness": 2.8}, 0.01, "none"),
]


def project(sim, metal, tan_delta, calibration):
    ports = [{"name": "P1", "side": "left", "x": 0, "y": [16, 72], "calibration": calibration},
             {"name": "P2", "side": "right", "x": 280, "y": [16, 72], "calibration": calibration}]
    effects = {"radiation": True}
    if "thickness" not in metal:
        effects.update({"thick_metal": False, "dielectric_loss": False})
    return {"units": "mil", "substrate": {"thickness": 30, "eps_r": 4.5, "tan_delta": tan_delta}, "metal": metal,
            "grid": {"dx": 8, "dy": 8, "nx": 35, "ny": 11},
            "pixels": {"csv": os.path.join(MOMENTUM, "pixelmaps", "sim%d.csv" % sim)}, "ports": ports,
            "effects": effects, "sweep": {"start": 0.05e9, "stop": 10e9, "points": 200}}


def lost(s):
    return 100 * (1 - abs(s[0]) ** 2 - abs(s[1]) ** 2), 100 * (1 - abs(s[2]) ** 2 - abs(s[3]) ** 2)


def against(a, ref):
    fs = sorted(f for f in a if f in ref and 0.05 <= f <= 10.0001)
    d21 = statistics.median(abs(a[f][1] - ref[f][1]) for f in fs)
    d11 = statistics.median(abs(a[f][0] - ref[f][0]) for f in fs)
    worst = max(abs(a[f][k] - ref[f][k]) for f in fs for k in range(4))
    return d21, d11, worst


def main():
    solvent = sys.argv[1] if len(sys.argv) > 1 else os.path.join(ROOT, "build", "solvent")
    with tempfile.TemporaryDirectory() as tmp:
        for sim in (213, 572):
            ref = read_touchstone(os.path.join(HERE, "sim%d.s2p" % sim))
            rows = [("openEMS (lossless, sheet)", ref),
                    ("ADS Momentum (its own set-up)", read_touchstone(os.path.join(MOMENTUM, "momentum", "sim%d.s2p" % sim)))]
            for k, (name, metal, td, cal) in enumerate(VARIANTS):
                stem = os.path.join(tmp, "sim%d_%d" % (sim, k))
                json.dump(project(sim, metal, td, cal), open(stem + ".json", "w"))
                subprocess.run([solvent, "sweep", stem + ".json", "-o", stem + ".s2p", "--quiet"], check=True)
                rows.append((name, read_touchstone(stem + ".s2p")))
            print("sim%d: lost power %% (port 1 / port 2) at %s GHz; against openEMS: median |dS21|, median |dS11|, worst"
                  % (sim, " / ".join("%g" % f for f in PROBES)))
            for name, data in rows:
                loss = "  ".join("%.2f/%.2f" % lost(data[round(f, 4)]) for f in PROBES)
                cmp = "" if data is ref else "   %.4f %.4f %.3f" % against(data, ref)
                print("  %-48s %s%s" % (name, loss, cmp))


if __name__ == "__main__":
    main()
