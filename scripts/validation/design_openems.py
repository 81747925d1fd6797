"""A filter designed by `solvent design`, checked by openEMS: the map of
tests/em/data/openems/design (spec.json's result, map.csv) swept by Solvent
three ways (the design model, the full default model, openEMS's stack-up)
against that folder's openEMS run (openems.s2p), and each goal mask's margin
in each (goal.json). The FDTD run is not repeated here: it is
make_design_reference.py's, outside the validation (minutes of openEMS)."""
import json
import os
import sys

import numpy as np

from common import ROOT, Report, db, gnuplot, md_table, s2p, write_table
from sweep import WORK, sweep

DESIGN = os.path.join(ROOT, "tests", "em", "data", "openems", "design")
sys.path.insert(0, DESIGN)
import make_design_reference as mdr  # noqa: E402  (the variants and the margins: one owner)

PLOT_COLUMNS = ["solvent_design_model", "solvent_full", "solvent_openems_stackup", "openems"]


def as_2x2(S):
    """nf x 4 [S11, S21, S12, S22] (common.s2p) as S[f, 2, 2]."""
    return np.stack([np.stack([S[:, 0], S[:, 2]], axis=1), np.stack([S[:, 1], S[:, 3]], axis=1)], axis=1)


def runs():
    """{name: (label, f, S[f, 2, 2])}: Solvent's three sweeps of the map and openEMS's run."""
    out = {}
    for name, label, variant in mdr.SOLVENT_VARIANTS:
        f, S, _ = sweep("design-openems-" + name, mdr.solvent_project(variant, os.path.join(DESIGN, "map.csv")))
        out[name] = (label, f, as_2x2(S))
    f, S = s2p(os.path.join(DESIGN, "openems.s2p"))
    out["openems"] = ("openEMS (lossless, sheet PEC)", f, as_2x2(S))
    fine = os.path.join(DESIGN, "openems_fine.s2p")
    if os.path.exists(fine):
        f, S = s2p(fine)
        out["openems_fine"] = ("openEMS, 2x finer mesh (port 1 driven; S11, S21)", f, as_2x2(S))
    for name, (_, fr, _) in out.items():
        assert np.allclose(fr, out["openems"][1]), name + ": not openEMS's frequencies"
    return out


def mask_segments(path, masks, s):
    """The masks on |s| as segments for gnuplot."""
    with open(path, "w") as fo:
        for m in masks:
            if m["s"] == s:
                fo.write("%g %g\n%g %g\n\n" % (m["start"], m["bound_db"], m["stop"], m["bound_db"]))


def plot(rep, data, goal):
    f = data["openems"][1]
    cols = [f]
    for name in PLOT_COLUMNS + ["openems_fine"]:
        if name in data:
            S = data[name][2]
            cols += [db(S[:, 1, 0]), db(S[:, 0, 0])]
        else:
            cols += [np.full(len(f), np.nan)] * 2
    dat = os.path.join(WORK, "design-openems.dat")
    write_table(dat, ["f_GHz"] + ["%s_%s" % (n, s) for n in PLOT_COLUMNS + ["openems_fine"] for s in ("S21_dB", "S11_dB")],
                zip(*cols))
    masks = {}
    for s in ("S21", "S11"):
        masks[s] = os.path.join(WORK, "design-openems-%s-masks.dat" % s)
        mask_segments(masks[s], goal, s)
    path, rel = rep.image("filter")
    title = "designed low-pass filter (tests/em/data/openems/design/map.csv)"
    gnuplot("design_openems.gp", data=dat, s21masks=masks["S21"], s11masks=masks["S11"], out=path, title=title)
    return "![%s](%s)" % (title, rel)


def margin_table(masks, data):
    rows = []
    for n, m in enumerate(masks):
        row = [mdr.mask_name(m)]
        for name in PLOT_COLUMNS:
            r = mdr.margins(masks, data[name][1], data[name][2])[n]
            row.append("%+.2f dB (%.2f GHz)" % (r["margin_dB"], r["at_GHz"]))
        rows.append(row)
    return md_table(["mask", "Solvent, design model", "Solvent, full default model", "Solvent, openEMS's stack-up",
                     "openEMS"], rows)


def the_map():
    rows = [line.strip().split(",") for line in open(os.path.join(DESIGN, "map.csv")) if line.strip()]
    return "\n".join("    " + "".join("#" if v == "1" else "." for v in r) for r in rows)


def main():
    goal = json.load(open(os.path.join(DESIGN, "goal.json")))["masks"]
    spec = json.load(open(os.path.join(DESIGN, "spec.json")))
    oe = json.load(open(os.path.join(DESIGN, "openems.json")))
    data = runs()
    rep = Report("design-openems", "A designed filter checked by openEMS: each mask's margin in both tools")
    rep.add("## The design\n\n`solvent design tests/em/data/openems/design/spec.json` on the Momentum dataset's "
            "board (35 × 11 pixels of 8 mil, 30-mil εr 4.5 substrate; ports de-embedded to the board's edges, as "
            "openEMS's matched feed lines are), the 9 × 11 region between the launches, no symmetry, corner "
            "contacts forbidden, DC path required, random start (seed 5, fill 0.4), %d design frequencies. The goal "
            "(`goal.json`) is the spec's masks with the stop band's bound 2 dB looser: the spec asks "
            "%g dB where the goal asks %g dB, a margin for what the design model leaves out (thickness, "
            "radiation, edge profiles). The map (row 0 at the top; the launches are columns 0–12 and 22–34):\n\n%s"
            % (spec["frequencies"]["points"], spec["masks"][2]["bound_db"], goal[2]["bound_db"], the_map()))
    rep.add("## Margins\n\nEach goal mask's worst margin over the 50-MHz points of its band (positive: met), and "
            "where it is. openEMS is lossless (tan δ = 0, zero-thickness perfect metal): compare it first with "
            "Solvent on openEMS's stack-up; the design model and the full model carry the board's copper and tan δ "
            "0.01.\n\n" + margin_table(goal, data) + "\n\n" + plot(rep, data, goal) +
            "\n\nThe spec's own masks (what DBS was asked), the same way:\n\n" + margin_table(spec["masks"], data))
    ck = oe["checks"]
    sanity = ""
    if "max_singular_value" in ck:
        sanity = (" Largest singular value of S %.4f (a passive circuit's is at most 1), largest |S21 − S12| %.1e."
                  % (ck["max_singular_value"], ck["max_abs_S21_minus_S12"]))
    mesh = ""
    if "mesh_check" in oe:
        mc = oe["mesh_check"]
        mesh = (" On make_reference.py's 2× finer mesh (%.2f M cells; %s) the goal margins go %s; |S21| at 9 GHz "
                "%.2f → %.2f dB." % (mc["cells_fine"] / 1e6, mc["compared"],
                                      ", ".join("%+.2f → %+.2f" % (a, b) for a, b in mc["goal_margins_dB_base_fine"]),
                                      mc["S21_dB_base_fine"]["9"][0], mc["S21_dB_base_fine"]["9"][1]))
    planes = oe["margins_dB"]["openems_other_planes_goal"]
    run_rows = [[name, r["timesteps_run"], "%.1f dB" % r["last_logged_energy_dB"], "%.0f s" % r["wall_runtime_s"]]
                for name, r in oe["runs"].items()]
    rep.add("## How good openEMS's figures are\n\nThe set-up is `tests/em/data/openems/momentum/make_reference.py`'s "
            "(mesh of 4 cells per pixel, 56-mil feed lines through the PML, V/I 5 mm out carried to the board edges "
            "with the thru line's phase and impedance), %.2f M cells; %s. The same run read at the board edge and "
            "10 mm out gives the goal margins %s (port uncertainty). Largest power-balance error of the thru line "
            "(exact 0): %.2f %%.%s%s\n\n%s"
            % (oe["cells"] / 1e6, oe["s_parameters"],
               "; ".join("%s: %s" % (p, ", ".join("%+.2f" % r["margin_dB"] for r in rs)) for p, rs in planes.items()),
               ck["thru_floor_lost_percent_max_abs"], sanity, mesh, md_table(["run", "time steps", "energy at the end", "wall"], run_rows)))
    rep.write("make validation        # or, this report alone:\n"
              "SOLVENT=build/solvent .venv/bin/python scripts/validation/design_openems.py\n"
              "# the openEMS run (minutes; Debian's openems and python3-openems):\n"
              "cd tests/em/data/openems/design && nice -n 10 ./make_design_reference.py --exc 1,2 --fine",
              "A low-pass filter designed by `solvent design` on the Momentum dataset's board, then run in openEMS "
              "(FDTD): each mask's margin in Solvent's design model, in its full default model, in Solvent with "
              "openEMS's stack-up, and in openEMS.")


if __name__ == "__main__":
    main()
