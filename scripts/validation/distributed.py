"""The plot of the Dask report (docs/validation/DATE-distributed.md) from
`make bench BENCH=distributed`'s JSON lines (bench/results/distributed.jsonl):
each round's two-worker scaling against the plain processes' ceiling.

    .venv/bin/python scripts/validation/distributed.py [bench/results/distributed.jsonl]"""
import json
import os
import sys

from common import ROOT, Report, gnuplot, write_table


def main():
    path = sys.argv[1] if len(sys.argv) > 1 else os.path.join(ROOT, "bench", "results", "distributed.jsonl")
    lines = {}
    with open(path) as f:
        for text in f:
            line = json.loads(text)
            lines[line["case"]] = line
    ode, maps = lines["rober_scan"], lines["batch_dataset_board"]
    rounds = min(len(ode["scaling_reps"]), len(maps["scaling_reps"]))
    report = Report("distributed", "Dask")
    dat = os.path.join(report.image("scaling")[0] + ".dat")
    write_table(dat, ["round", "ode_scaling", "ode_ceiling", "maps_scaling", "maps_ceiling"],
                [(k + 1, ode["scaling_reps"][k], ode["ceiling_reps"][k], maps["scaling_reps"][k],
                  maps["ceiling_reps"][k]) for k in range(rounds)])
    out, rel = report.image("scaling")
    gnuplot("distributed.gp", data=dat, out=out, title="Two single-threaded workers against one, per round")
    os.unlink(dat)
    print(rel)


if __name__ == "__main__":
    main()
