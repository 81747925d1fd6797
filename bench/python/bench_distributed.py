"""solvent.distributed's cost and scaling: the same jobs by the direct
call (one library thread) and on a Dask LocalCluster of 1 and of 2
single-threaded worker processes (one library thread per task), at the
default task size, the three in turn each round. JSON lines: wall times
(direct_s, one_worker_s, two_workers_s; overhead_pct: one worker against
the direct call; scaling: one worker's time over two workers'), and CPU
times of every process involved (cpu_overhead_pct, cpu_per_task_ms: what
Dask and the task's packing add, a figure that other work on the machine
moves little), and the share of one worker's run spent outside its tasks
(outside_tasks_pct, outside_per_task_ms: the call's own cost and the gaps
between tasks); load_average says how busy the machine was.

    .venv/bin/python bench/python/bench_distributed.py [--maps 8] [--trajectories 100000] [--reps 3]

Cases: pixel maps on examples/pixel2port.json's board (44 x 44 cells of
0.25 mm, the feed row through the middle, seeded random fill 0.72, two
frequencies each); and a Robertson scan, its parameters spread by up to
±10 %. Each cluster runs a small job first (worker start, imports, the
per-worker state), not timed."""
import argparse
import json
import logging
import math
import os
import pathlib
import statistics
import time

import numpy as np

import solvent
from solvent import distributed as sd
from solvent import ode

REPO = pathlib.Path(__file__).resolve().parents[2]
FREQS = [2e9, 6e9]


def cpu_seconds(client=None):
    """CPU time so far of this process (client and, in a LocalCluster, the
    scheduler) plus, given a client, of every worker process."""
    total = time.process_time()
    if client is not None:
        total += sum(client.run(_process_cpu).values())
    return total


def _process_cpu():
    times = os.times()
    return times.user + times.system


def measure(run, client=None):
    """(wall s, CPU s, s the workers spent in tasks) of one run."""
    from distributed import get_task_stream
    cpu, start = cpu_seconds(client), time.perf_counter()
    if client is None:
        run()
        return time.perf_counter() - start, cpu_seconds() - cpu, 0.0
    with get_task_stream(client) as stream:
        run()
    wall = time.perf_counter() - start
    busy = sum(s["stop"] - s["start"] for task in stream.data for s in task["startstops"] if s["action"] == "compute")
    return wall, cpu_seconds(client) - cpu, busy


def pixel_maps(count):
    project = json.loads((REPO / "examples/pixel2port.json").read_text())
    board = {k: v for k, v in project.items() if k not in ("pixels", "title", "sweep")}
    ny, nx = board["grid"]["ny"], board["grid"]["nx"]
    rng = np.random.default_rng(1)
    maps = (rng.random((count, ny, nx)) < 0.72).astype(np.int8)
    maps[:, 21, :] = 1  # the feed row between the ports (y 5.5 to 5.75 mm)
    return maps, board


def rober_scan(n):
    rober = ode.builtin_defaults("rober")
    params = rober["params"] * np.random.default_rng(1).uniform(0.9, 1.1, (n, 3))
    return rober["y0"], [0.0, 1e5], params


def compare(direct, job, warm, reps):
    """Medians of (wall, CPU) for the direct call and on clusters of 1 and 2
    single-threaded worker processes, the three taken in turn each round
    (so that a change in the machine's load falls on all three alike)."""
    import distributed
    walls, cpus, outside = {"direct": [], 1: [], 2: []}, {"direct": [], 1: [], 2: []}, []

    def cluster(workers):
        return distributed.LocalCluster(n_workers=workers, threads_per_worker=1, processes=True, host="127.0.0.1",
                                        dashboard_address=":0", silence_logs=logging.ERROR)

    with cluster(1) as c1, distributed.Client(c1, set_as_default=False) as one, \
            cluster(2) as c2, distributed.Client(c2, set_as_default=False) as two:
        warm(one)
        warm(two)
        for _ in range(reps):
            for name, client in (("direct", None), (1, one), (2, two)):
                wall, cpu, busy = measure(direct if client is None else (lambda c=client: job(c)), client)
                walls[name].append(wall)
                cpus[name].append(cpu)
                if name == 1:
                    outside.append(wall - busy)  # one worker: the time it was not in a task
    walls["outside"] = statistics.median(outside)
    return ({k: statistics.median(v) if isinstance(v, list) else v for k, v in walls.items()},
            {k: statistics.median(v) for k, v in cpus.items()})


def line(case, items, tasks, walls, cpus, **extra):
    direct, one, two = walls["direct"], walls[1], walls[2]
    print(json.dumps({"bench": "distributed", "case": case, "items": items, "direct_s": round(direct, 3),
                      "one_worker_s": round(one, 3), "two_workers_s": round(two, 3),
                      "overhead_pct": round(100 * (one / direct - 1), 2),
                      "cpu_direct_s": round(cpus["direct"], 3), "cpu_one_worker_s": round(cpus[1], 3),
                      "cpu_overhead_pct": round(100 * (cpus[1] / cpus["direct"] - 1), 2),
                      "tasks_one_worker": tasks, "cpu_per_task_ms": round(1e3 * (cpus[1] - cpus["direct"]) / tasks, 2),
                      "outside_tasks_pct": round(100 * walls["outside"] / one, 2),
                      "outside_per_task_ms": round(1e3 * walls["outside"] / tasks, 2),
                      "scaling": round(one / two, 3), "speedup_vs_direct": round(direct / two, 3),
                      "load_average": round(os.getloadavg()[0], 2), "cores": len(os.sched_getaffinity(0)),
                      **extra}), flush=True)


def maps_case(count, reps):
    maps, board = pixel_maps(count)

    def direct():
        for m in maps:
            solvent.sweep(solvent.Project.from_pixels(m, board), f=FREQS, threads=1)

    def job(client):
        result = solvent.sweep_many(maps, board=board, client=client, threads=1, f=FREQS)
        assert not result.errors, result.errors

    def warm(client):
        solvent.sweep_many(maps[:2], board=board, client=client, threads=1, chunk_size=1, f=FREQS)

    walls, cpus = compare(direct, job, warm, reps)
    tasks = math.ceil(count / min(sd.SWEEP_CHUNK_MAX, max(1, math.ceil(count / sd.TASKS_PER_THREAD))))
    line("pixel_maps_44x44", count, tasks, walls, cpus, frequencies=len(FREQS))


def ode_case(n, reps):
    y0, t_save, params = rober_scan(n)

    def job(client):
        ode.solve("rober", y0, t_save, params, threads=1, client=client)

    def warm(client):
        ode.solve("rober", y0, t_save, params[:1000], threads=1, client=client)

    walls, cpus = compare(lambda: ode.solve("rober", y0, t_save, params, threads=1), job, warm, reps)
    shard = max(1, min(n, max(sd.ODE_SHARD_MIN, min(sd.ODE_SHARD_MAX, math.ceil(n / sd.TASKS_PER_THREAD)))))
    line("rober_scan", n, math.ceil(n / shard), walls, cpus)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--maps", type=int, default=8)
    parser.add_argument("--trajectories", type=int, default=100000)
    parser.add_argument("--reps", type=int, default=3)
    a = parser.parse_args()
    ode_case(a.trajectories, a.reps)
    maps_case(a.maps, max(1, a.reps // 2))


if __name__ == "__main__":
    main()
