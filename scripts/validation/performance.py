"""Every benchmark suite's ratios (ours_s / anchor_s: below 1, Solvent is
faster) plotted from the committed bench/results/*.jsonl, one plot per
suite, with the date and commit that recorded each file. The files come
from `make bench` (bench/README or docs: the suites and their anchors);
this report only reads them."""
import glob
import json
import os
import subprocess

from common import ROOT, Report, gnuplot, md_table, write_table
from sweep import WORK


def recorded(path):
    """(date, short commit) of the last commit that changed the file."""
    out = subprocess.run(["git", "-C", ROOT, "log", "-1", "--format=%cs %h", "--", path],
                         capture_output=True, text=True).stdout.split()
    return (out[0], out[1]) if len(out) == 2 else ("uncommitted", "-")


def label(d):
    """A case's name on the plot: the case, and what distinguishes lines of
    the same case (size, lanes, kernel, anchor)."""
    parts = [d["case"]]
    if d["bench"] == "dense":
        parts.append("n%d" % d["n"])
    if "W" in d:
        parts.append("W%d" % d["W"])
    if "kernel" in d:
        parts.append(d["kernel"])
    return "_".join(parts)


def headline(suites):
    """The figures README and the guide quote, computed from the files (one
    source: cite these, do not copy them by hand)."""
    rows = []
    sw = {d["case"]: d for d in suites.get("sweep", [])}
    if "pixel2port_21pts" in sw and "pixel2port_sheet_21pts" in sw:
        a, sh = sw["pixel2port_21pts"], sw["pixel2port_sheet_21pts"]
        rows.append(["sweep: examples/pixel2port.json (2042 unknowns), every effect, 21 points",
                     "%.2f s, %d exact solves, %.1f× faster than OpenBLAS zgesv at every frequency" %
                     (a["ours_s"], a["exact_solves"], a["speedup"])])
        rows.append(["the same against the sheet model (21 points)", "%.2f× its time, %.2f× its counted peak memory" %
                     (a["ours_s"] / sh["ours_s"], a["ours_counted_peak_bytes"] / sh["ours_counted_peak_bytes"])])
        if "pixel2port_1001pts" in sw:
            b = sw["pixel2port_1001pts"]
            rows.append(["every effect, 1001 points", "%.2f s, %d exact solves, %.0f×, max |ΔS| %.1e against solving "
                         "every frequency" % (b["ours_s"], b["exact_solves"], b["speedup"], b["max_abs_dS_vs_anchor"])])
        if "pixel2port_dispersion_21pts" in sw:
            c = sw["pixel2port_dispersion_21pts"]
            rows.append(["with dispersion as well, 21 points", "%.2f s (%.2f× the sheet model's), %.0f MB counted peak" %
                         (c["ours_s"], c["ours_s"] / sh["ours_s"], c["ours_counted_peak_bytes"] / 1e6)])
    od = {d["case"]: d for d in suites.get("ode", [])}
    for n in ("10000", "100000"):
        d = od.get("rober_modax_" + n)
        if d:
            rows.append(["ODE: Robertson, modax's settings, %s trajectories, %d threads" % (n, d["threads"]),
                         "%.0f ms, %.1f ns per trajectory-step" % (1e3 * d["ours_s"], d["ns_per_traj_step"])])
    plain = [1 / d["ratio"] for c, d in od.items() if d.get("ratio", 0) > 0 and "CVODE " in d["anchor"]]
    sens = [1 / d["ratio"] for c, d in od.items() if d.get("ratio", 0) > 0 and "CVODES" in d["anchor"]]
    if plain:
        rows.append(["ODE ensembles against CVODE (per trajectory, equal accuracy)", "%.1f–%.0f× faster" %
                     (min(plain), max(plain))])
    if sens:
        rows.append(["with sensitivities against CVODES", "%.0f–%.0f× faster" % (min(sens), max(sens))])
    for k in ("1", "8"):
        d = od.get("sens_pollu_ens1000_ns" + k)
        if d:
            rows.append(["POLLU, %s sensitivity direction%s: cost over the plain solve" % (k, "s" if k != "1" else ""),
                         "%.2f×" % d["cost_vs_plain"]])
    for d in suites.get("python", []):
        rows.append(["Python package against the tool: %s" % d["case"], "%.2f× the tool's time" % d["ratio"]])
    return md_table(["figure", "value"], rows)


def main():
    rep = Report("performance", "Performance: every benchmark suite's time ratios")
    sections, suites = [], {}
    for path in sorted(glob.glob(os.path.join(ROOT, "bench", "results", "*.jsonl"))):
        suite = os.path.basename(path)[:-len(".jsonl")]
        lines = [json.loads(l) for l in open(path) if l.strip().startswith("{")]
        suites[suite] = lines
        date, commit = recorded(os.path.relpath(path, ROOT))
        anchors = sorted({d["anchor"] for d in lines})
        # several anchors in one suite: each case's label names its anchor's index
        rows, skipped, seen = [], [], {}
        for d in lines:
            if d.get("ratio", 0) <= 0:
                skipped.append(d["case"])
                continue
            name = label(d)
            if len(anchors) > 1:
                name += "_vs%d" % (anchors.index(d["anchor"]) + 1)
            seen[name] = seen.get(name, 0) + 1
            if seen[name] > 1:
                name += "_%d" % seen[name]
            rows.append((name, d["ratio"], d["ours_s"], d["anchor_s"]))
        dat = os.path.join(WORK, "perf-%s.dat" % suite)
        os.makedirs(WORK, exist_ok=True)
        write_table(dat, ["case", "ratio", "ours_s", "anchor_s"], rows)
        img, rel = rep.image(suite)
        gnuplot("performance.gp", data=dat, out=img, width=max(760, 28 * len(rows) + 260),
                title="bench %s: ours / anchor (below 1: Solvent faster), recorded %s (%s)" % (suite, date, commit))
        threads = sorted({d["threads"] for d in lines if "threads" in d})
        text = ["## %s\n" % suite,
                "`bench/results/%s.jsonl`, recorded %s (commit %s)%s. Anchors: %s." %
                (suite, date, commit, ", threads %s" % "/".join(map(str, threads)) if threads else "",
                 "; ".join("(%d) %s" % (k + 1, a) for k, a in enumerate(anchors)) if len(anchors) > 1 else anchors[0]),
                "", "![bench %s](%s)" % (suite, rel), "",
                md_table(["case", "ours (s)", "anchor (s)", "ratio"],
                         [[r[0].replace("_", " "), "%.4g" % r[2], "%.4g" % r[3], "%.4g" % r[1]] for r in rows])]
        if skipped:
            text.append("\nNot plotted (no anchor timed on this machine, ratio 0 in the file): %s." % ", ".join(skipped))
        sections.append("\n".join(text))
    rep.add("""## What is plotted

Each suite's `ratio` field, ours_s / anchor_s, as `make bench` wrote it (bench/common/bench_common.h
defines the fields); a logarithmic axis, 1 marked. The files do not record the machine: they were
measured on the project's development machine at the date given (the commit that last changed the
file), not on the machine named at the top, which only drew the plots. Regenerate the figures with
`make bench` first to measure this machine.""")
    rep.add("## Headline figures\n\nComputed from the files below (the dates there); these are the figures "
            "README and the guide quote.\n\n" + headline(suites))
    for s in sections:
        rep.add(s)
    rep.write("make bench             # re-measure (long; see the suites' own notes)\n"
              "make validation        # or, this report alone:\n"
              ".venv/bin/python scripts/validation/performance.py",
              "Solvent's time against each benchmark's anchor (LAPACK, KLU, CVODE, a naive assembly, the "
              "tool itself for the Python package), as recorded in bench/results.")


if __name__ == "__main__":
    main()
