"""Work-precision diagrams on the Bari test-set problems: the error at the
end point against the time per solve, for Solvent's Rodas5P and Tsit5,
SUNDIALS CVODE (BDF, dense, analytic Jacobian) and scipy's Radau and BDF
(analytic Jacobians), each over a ladder of tolerances, one trajectory,
one thread.

Error: the largest relative error over the components against the Bari
reference (RADAU in extended precision); scd = -log10 of it. POLLU's
smallest component (y16 ~ 4e-18) is measured relative to 1e-10, as its
tolerances cannot control it. Usage (scripts/validation/run passes both):

  ode_workprecision.py ODE_WP_BINARY"""
import os
import subprocess
import sys
import time

import numpy as np
from scipy.integrate import solve_ivp

from common import Report, gnuplot, md_table, write_table
from ode_problems import PROBLEMS, REFERENCE
from sweep import WORK

TOLS = [1e-4, 1e-5, 1e-6, 1e-7, 1e-8, 1e-9, 1e-10]
TSIT5_TOLS = [1e-4, 1e-6, 1e-8]
SCIPY_TOLS = [1e-4, 1e-6, 1e-8, 1e-10]  # reduced: its Python right-hand side makes each solve 0.01-3 s
TSIT5_MAX_STEPS = 200000
FLOOR = {"rober": 0.0, "hires": 0.0, "orego": 0.0, "vdpol": 0.0, "pollu": 1e-10}
METHODS = ["rodas5p", "tsit5", "cvode", "radau", "bdf"]
# Rodas5P's published accepted/rejected steps and scd with the same tableau
# and controller (/work/shared/reference/ode-testset.md, "Known behaviour").
PUBLISHED = {("rober", 1e-6): (313, 2, 5.3), ("rober", 1e-9): (1128, 4, 7.2), ("hires", 1e-6): (65, 11, 3.9),
             ("hires", 1e-9): (271, 26, 7.4), ("orego", 1e-6): (863, 174, 6.2), ("orego", 1e-9): (4558, 189, 9.6),
             ("vdpol", 1e-6): (634, 199, 6.2), ("vdpol", 1e-9): (3498, 240, 8.8)}
LABEL = {"rodas5p": "Solvent Rodas5P", "tsit5": "Solvent Tsit5", "cvode": "CVODE BDF (SUNDIALS 6.4.1)",
         "radau": "scipy Radau", "bdf": "scipy BDF"}


def atol_of(problem, rtol):
    """ROBER's y2 is ~1e-13 at the end: its absolute tolerance is 1e-4·rtol
    (Bari's 1e-6/1e-10 and 1e-9/1e-13 pairs); the others rtol = atol."""
    return rtol * 1e-4 if problem == "rober" else rtol


def error(problem, y):
    ref = np.array(REFERENCE[problem])
    return float(np.max(np.abs(np.asarray(y) - ref) / np.maximum(np.abs(ref), FLOOR[problem])))


def describe(binary, problem):
    out = subprocess.run([binary, problem, "describe"], check=True, capture_output=True, text=True).stdout
    d = {}
    for line in out.splitlines():
        key, *vals = line.split()
        d[key] = [float(v) for v in vals]
    return d


def run_c(binary, problem, method, rtol):
    args = [binary, problem, method, repr(rtol), repr(atol_of(problem, rtol))]
    if method == "tsit5":
        args.append(str(TSIT5_MAX_STEPS))
    v = subprocess.run(args, check=True, capture_output=True, text=True).stdout.split()
    seconds, acc, rej, status = float(v[0]), int(v[1]), int(v[2]), int(v[3])
    return (seconds, acc, rej, [float(x) for x in v[4:]]) if status == 0 else None


def run_scipy(problem, method, rtol, d):
    f, jac = PROBLEMS[problem](d["params"])
    y0, span = d["y0"], (d["t0"][0], d["t1"][0])
    kw = dict(method="Radau" if method == "radau" else "BDF", rtol=rtol, atol=atol_of(problem, rtol), jac=jac)
    times = []
    for _ in range(2):  # the better of two solves
        t0 = time.perf_counter()
        sol = solve_ivp(f, span, y0, **kw)
        times.append(time.perf_counter() - t0)
        if not sol.success:
            return None
    return min(times), sol.t.size - 1, 0, sol.y[:, -1]


def main():
    binary = sys.argv[1]
    rep = Report("ode-work-precision", "ODE work-precision: Rodas5P and Tsit5 against CVODE and scipy on the test set")
    os.makedirs(WORK, exist_ok=True)
    summary_rows, published_rows = [], []
    for problem in PROBLEMS:
        d = describe(binary, problem)
        assert len(d["y0"]) == len(REFERENCE[problem]), problem
        rows, points = [], {m: [] for m in METHODS}
        for method in METHODS:
            tols = TSIT5_TOLS if method == "tsit5" else SCIPY_TOLS if method in ("radau", "bdf") else TOLS
            for rtol in tols:
                r = run_c(binary, problem, method, rtol) if method in ("rodas5p", "tsit5", "cvode") else \
                    run_scipy(problem, method, rtol, d)
                if r is None:
                    rows.append([LABEL[method], "%.0e" % rtol, "%.0e" % atol_of(problem, rtol), "failed" +
                                 (" (over %d steps)" % TSIT5_MAX_STEPS if method == "tsit5" else ""), "", ""])
                    continue
                seconds, acc, rej, y = r
                e = error(problem, y)
                if method == "rodas5p" and (problem, rtol) in PUBLISHED:
                    pa, pr, ps = PUBLISHED[(problem, rtol)]
                    published_rows.append([problem.upper(), "%.0e (atol %.0e)" % (rtol, atol_of(problem, rtol)),
                                           "%.2f" % -np.log10(e), "%.1f" % ps, "%d/%d" % (acc, rej), "%d/%d" % (pa, pr)])
                points[method].append((e, seconds))
                rows.append([LABEL[method], "%.0e" % rtol, "%.0e" % atol_of(problem, rtol), "%.3g" % seconds,
                             "%.2f" % -np.log10(max(e, 1e-17)), "%d/%d" % (acc, rej) if method != "radau" and
                             method != "bdf" else "%d" % acc])
        dats = {}
        for method in METHODS:
            dat = os.path.join(WORK, "wp-%s-%s.dat" % (problem, method))
            write_table(dat, ["error", "seconds"], points[method] or [(float("nan"), float("nan"))])
            dats[method] = dat
        path, rel = rep.image(problem)
        gnuplot("workprecision.gp", out=path, title="%s: error at t1 against time per solve" % problem.upper(),
                d1=dats["rodas5p"], d2=dats["tsit5"], d3=dats["cvode"], d4=dats["radau"], d5=dats["bdf"])
        rep.add("## %s\n\n![%s work-precision](%s)\n\n%s" % (problem.upper(), problem, rel, md_table(
            ["solver", "rtol", "atol", "time per solve (s)", "scd", "steps (accepted/rejected)"], rows)))
        # the summary: time to reach 6 correct digits (first point with scd >= 6)
        cells = []
        for method in METHODS:
            ok = sorted(t for e, t in points[method] if e <= 1e-6)
            cells.append("%.3g" % ok[0] if ok else "not reached")
        summary_rows.append([problem.upper()] + cells)
    rep.parts.insert(0, """## Set-up

One trajectory of each problem from its standard initial state to its standard end time (Bari
test set: ROBER to 10¹¹, HIRES to 321.8122, OREGO to 360, VDPOL (ε = 10⁻⁶) to 2, POLLU to 60), one thread. Tolerances
rtol = atol = 10⁻⁴ … 10⁻¹⁰ in decades (ROBER: atol = 10⁻⁴·rtol); Tsit5, an explicit method,
at 10⁻⁴, 10⁻⁶ and 10⁻⁸ with at most %d steps — on these stiff problems it fails within that
budget except where the table shows a time. Jacobians are analytic for every solver. Times: Solvent and CVODE,
the mean over as many solves as fill 0.1 s, best of five such batches (scripts/validation/ode_wp.c);
scipy, the better of two solves (its Python right-hand side dominates its time), on a reduced
ladder (10⁻⁴, 10⁻⁶, 10⁻⁸, 10⁻¹⁰) to keep the report's run short.
Error: the largest relative error of any component at the end against the Bari reference
(POLLU: relative to max(|ref|, 10⁻¹⁰)); scd = −log₁₀(error). E5 is not among Solvent's built-in
problems and is not run.

### Fastest time to 6 correct digits (s per solve; the first tolerance of the ladder that reaches it)

%s

### Rodas5P against its published figures

The test set's Rodas5P figures (same tableau and step-size controller; ode-testset.md in the
project's shared reference folder, and docs/ode.md): scd and accepted/rejected steps.

%s""" % (TSIT5_MAX_STEPS, md_table(["problem"] + [LABEL[m] for m in METHODS], summary_rows),
       md_table(["problem", "rtol", "scd", "published scd", "steps", "published steps"], published_rows)))
    rep.write("make validation        # or, this report alone (after scripts/validation/run built ode_wp):\n"
              ".venv/bin/python scripts/validation/ode_workprecision.py out/validation/ode_wp\n"
              "# one point by hand: problem, solver, rtol, atol\n"
              "out/validation/ode_wp hires rodas5p 1e-8 1e-8\n"
              "build/solvent ode hires --rtol 1e-8 --atol 1e-8",
              "Error against time for each solver on five stiff problems of the Bari test set. Lower left is "
              "better: less time for the same error.")


if __name__ == "__main__":
    main()
