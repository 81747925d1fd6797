"""The Python package's overhead: the same jobs from Python and from the
`solvent` tool built from the same library, in one run, medians of a few
repetitions. JSON lines: ours_s (Python), anchor_s (the tool), ratio.

    .venv/bin/python bench/python/bench_python.py --tool build/solvent [--reps 5]

Cases: the 10 000-trajectory Robertson ensemble (modax's case size) with
the built-in problem, its parameters perturbed by up to ±10 % as the tool
does (the same spread, not the same draws); and a sweep of
examples/pixel2port.json. The tool's times include its process start and
its output file; Python's include building the arrays it returns."""
import argparse
import json
import os
import pathlib
import statistics
import subprocess
import sys
import tempfile
import time

import numpy as np

import solvent
from solvent import ode

REPO = pathlib.Path(__file__).resolve().parents[2]


def timed(run, reps):
    times = []
    for _ in range(reps):
        start = time.perf_counter()
        run()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def line(case, ours, anchor, **extra):
    print(json.dumps({"bench": "python", "case": case, "ours_s": round(ours, 4), "anchor": "solvent tool",
                      "anchor_s": round(anchor, 4), "ratio": round(ours / anchor, 3), **extra}), flush=True)


def robertson(tool, reps, trajectories=10_000):
    rng = np.random.default_rng(1)
    rober = ode.builtin_defaults("rober")
    y0 = np.tile(rober["y0"], (trajectories, 1))

    def from_python():
        ode.solve("rober", y0, [0.0, 1e5], rober["params"] * rng.uniform(0.9, 1.1, (trajectories, 3)))

    def from_tool():
        subprocess.run([tool, "ode", "rober", "--ensemble", str(trajectories), "--t1", "1e5", "--quiet"], check=True,
                       capture_output=True)

    line("rober_10000", timed(from_python, reps), timed(from_tool, reps), trajectories=trajectories)


def sweep(tool, reps):
    project = REPO / "examples/pixel2port.json"
    with tempfile.TemporaryDirectory() as work:
        out = os.path.join(work, "p.s2p")

        def from_tool():
            subprocess.run([tool, "sweep", project, "-o", out, "--quiet"], check=True, capture_output=True)

        line("sweep_pixel2port", timed(lambda: solvent.sweep(project), reps), timed(from_tool, reps))


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tool", default=str(REPO / "build/solvent"))
    parser.add_argument("--reps", type=int, default=5)
    a = parser.parse_args()
    if not os.access(a.tool, os.X_OK):
        sys.exit(f"bench_python: {a.tool} is not the solvent tool (build it: make build)")
    robertson(a.tool, a.reps)
    sweep(a.tool, max(1, a.reps // 2))


if __name__ == "__main__":
    main()
