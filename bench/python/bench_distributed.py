"""solvent.distributed's cost and scaling: the same job by the direct call
(one library thread) and on Dask LocalClusters of 1 and of 2
single-threaded worker processes (one library thread per task), at the
default task size; and, as the ceiling of what any scheduler could reach
here, the job cut in two halves run by two plain processes at once against
one process running it whole. Every round takes them in turn (so that
a change in the machine's load falls on all alike); the JSON line gives
medians.

    .venv/bin/python bench/python/bench_distributed.py [--maps 128] [--trajectories 400000] [--reps 7]
                                                       [--dask-defaults] [--cases ode,maps]

Fields: direct_s, one_worker_s, two_workers_s (wall); overhead_pct (one
worker against the direct call: Dask's cost per task and per call);
scaling (one worker's time over two workers'); one_process_s,
two_processes_s and ceiling (the plain processes' scaling);
overhead_reps, scaling_reps and ceiling_reps (each round's);
overhead_sandwich_pct (each one-worker run against the mean of the direct
runs just before and just after it, median over the rounds; a slow drift
of the machine's speed cancels) and its rounds; cpu_overhead_pct and cpu_per_task_ms
(the CPU of every process involved, the client and scheduler included,
against the direct call's: a figure other work on the machine moves
little); tasks_one_worker, tasks_two_workers; load_average.

The clusters' workers run with solvent.distributed.WORKER_CONFIG (the
settings docs/how-to/distributed.md recommends for compute-bound
workers); --dask-defaults runs them with Dask's defaults instead.

Cases: a batch of maps on the Momentum dataset's board
(examples/batch/board.json: every default effect, 200 points; sim213's
launches with the 9 x 11 region between them random, seeded), its tables
built once per process before timing as each worker does; and a Robertson
scan, its rate constants spread by up to ±10 %."""
import argparse
import json
import logging
import multiprocessing
import os
import pathlib
import statistics
import time

import numpy as np

REPO = pathlib.Path(__file__).resolve().parents[2]


# ---- the two jobs, made alike in every process ----------------------------


def dataset_maps(count):
    board = json.loads((REPO / "examples/batch/board.json").read_text())
    board.pop("title", None)
    launches = np.loadtxt(REPO / "examples/batch/maps/sim213.csv", delimiter=",", dtype=np.uint8)
    rng = np.random.default_rng(1)
    maps = np.repeat(launches[None], count, axis=0)
    maps[:, :, 13:22] = rng.integers(0, 2, (count, launches.shape[0], 9), dtype=np.uint8)
    return maps, board


def rober_scan(n):
    from solvent import ode
    rober = ode.builtin_defaults("rober")
    params = rober["params"] * np.random.default_rng(1).uniform(0.9, 1.1, (n, 3))
    return rober["y0"], [0.0, 1e5], params


class MapsCase:
    name, unit = "batch_dataset_board", "maps"

    def __init__(self, count):
        self.count = count
        self.maps, self.board = dataset_maps(count)

    def prepare(self):
        """What a worker builds once: the board's tables and, with its first
        map, the ports' calibration (not timed)."""
        from solvent.planar_batch import Batch
        self.engine = Batch(self.board, self.maps.shape[1:], threads=1)
        self.engine.run(self.maps[:1])

    def direct(self, rows=slice(None)):
        result = self.engine.run(self.maps[rows])
        assert result.ok.all(), result.errors

    def job(self, client):
        import solvent
        result = solvent.batch(self.maps, self.board, client=client, threads=1)
        assert result.ok.all(), result.errors

    def warm(self, client):
        import solvent
        solvent.batch(self.maps[:4], self.board, client=client, threads=1, chunk_size=1)


class OdeCase:
    name, unit = "rober_scan", "trajectories"

    def __init__(self, count):
        self.count = count
        self.y0, self.t_save, self.params = rober_scan(count)

    def prepare(self):
        self.direct(slice(0, 100))

    def direct(self, rows=slice(None)):
        from solvent import ode
        ode.solve("rober", self.y0, self.t_save, self.params[rows], threads=1)

    def job(self, client):
        from solvent import ode
        ode.solve("rober", self.y0, self.t_save, self.params, threads=1, client=client)

    def warm(self, client):
        from solvent import ode
        ode.solve("rober", self.y0, self.t_save, self.params[:1000], threads=1, client=client)


CASES = {"maps": MapsCase, "ode": OdeCase}


# ---- the ceiling: plain processes -------------------------------------------


def _plain_process(kind, count, half, barrier, ends):
    case = CASES[kind](count)
    case.prepare()
    rows = slice(None) if half is None else slice(half * count // 2, (half + 1) * count // 2)
    barrier.wait()
    case.direct(rows)
    ends.put(time.perf_counter())


def plain_processes(kind, count, halves):
    """Wall time of len(halves) processes, each running its part at once
    (set-up, imports and the board excluded: they wait on a barrier)."""
    spawn = multiprocessing.get_context("spawn")
    barrier, ends = spawn.Barrier(len(halves) + 1), spawn.Queue()
    processes = [spawn.Process(target=_plain_process, args=(kind, count, half, barrier, ends)) for half in halves]
    for p in processes:
        p.start()
    barrier.wait()
    start = time.perf_counter()
    finished = [ends.get() for _ in processes]
    for p in processes:
        p.join()
    return max(finished) - start


# ---- measuring --------------------------------------------------------------


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
    """(wall s, CPU s, tasks run) of one run."""
    from distributed import get_task_stream
    cpu, start = cpu_seconds(client), time.perf_counter()
    if client is None:
        run()
        return time.perf_counter() - start, cpu_seconds() - cpu, 0
    with get_task_stream(client) as stream:
        run()
    wall = time.perf_counter() - start
    tasks = sum(1 for task in stream.data if not task["key"].startswith("solvent-shared"))
    return wall, cpu_seconds(client) - cpu, tasks


def cluster(workers):
    import distributed
    return distributed.LocalCluster(n_workers=workers, threads_per_worker=1, processes=True, host="127.0.0.1",
                                    dashboard_address=":0", silence_logs=logging.ERROR)


def bench_case(kind, count, reps, config_name):
    import distributed
    case = CASES[kind](count)
    case.prepare()
    walls = {name: [] for name in ("direct", 1, "direct_after", 2, "one_process", "two_processes")}
    cpus, tasks = {"direct": [], 1: []}, {1: 0, 2: 0}
    with cluster(1) as c1, distributed.Client(c1, set_as_default=False) as one, \
            cluster(2) as c2, distributed.Client(c2, set_as_default=False) as two:
        case.warm(one)
        case.warm(two)
        for _ in range(reps):
            wall, cpu, _ = measure(case.direct)
            walls["direct"].append(wall)
            cpus["direct"].append(cpu)
            for workers, client in ((1, one), (2, two)):
                wall, cpu, tasks[workers] = measure(lambda c=client: case.job(c), client)
                walls[workers].append(wall)
                if workers == 1:
                    cpus[1].append(cpu)
                    walls["direct_after"].append(measure(case.direct)[0])
            walls["one_process"].append(plain_processes(kind, count, [None]))
            walls["two_processes"].append(plain_processes(kind, count, [0, 1]))
    med = {name: statistics.median(values) for name, values in walls.items()}
    cpu = {name: statistics.median(values) for name, values in cpus.items()}
    scaling_reps = [a / b for a, b in zip(walls[1], walls[2])]
    overhead_reps = [100 * (a / b - 1) for a, b in zip(walls[1], walls["direct"])]
    # each one-worker run against the direct runs just before and just after it
    sandwich_reps = [100 * (2 * a / (b + c) - 1) for a, b, c in zip(walls[1], walls["direct"], walls["direct_after"])]
    ceiling_reps = [a / b for a, b in zip(walls["one_process"], walls["two_processes"])]
    print(json.dumps({
        "bench": "distributed", "case": case.name, case.unit: count, "dask_config": config_name,
        "direct_s": round(med["direct"], 3), "one_worker_s": round(med[1], 3), "two_workers_s": round(med[2], 3),
        "overhead_pct": round(100 * (med[1] / med["direct"] - 1), 2),
        "scaling": round(statistics.median(scaling_reps), 3),
        "one_process_s": round(med["one_process"], 3), "two_processes_s": round(med["two_processes"], 3),
        "ceiling": round(statistics.median(ceiling_reps), 3),
        "overhead_reps": [round(x, 1) for x in overhead_reps],
        "overhead_sandwich_pct": round(statistics.median(sandwich_reps), 2),
        "overhead_sandwich_reps": [round(x, 1) for x in sandwich_reps],
        "scaling_reps": [round(x, 3) for x in scaling_reps], "ceiling_reps": [round(x, 3) for x in ceiling_reps],
        "cpu_direct_s": round(cpu["direct"], 3), "cpu_one_worker_s": round(cpu[1], 3),
        "cpu_overhead_pct": round(100 * (cpu[1] / cpu["direct"] - 1), 2),
        "tasks_one_worker": tasks[1], "tasks_two_workers": tasks[2],
        "cpu_per_task_ms": round(1e3 * (cpu[1] - cpu["direct"]) / max(1, tasks[1]), 2),
        "reps": reps, "load_average": round(os.getloadavg()[0], 2), "cores": len(os.sched_getaffinity(0))}),
        flush=True)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--maps", type=int, default=128)
    parser.add_argument("--trajectories", type=int, default=400000)
    parser.add_argument("--reps", type=int, default=7)
    parser.add_argument("--dask-defaults", action="store_true", help="the workers with Dask's default settings")
    parser.add_argument("--cases", default="ode,maps", help="which cases, comma-separated (ode, maps)")
    a = parser.parse_args()
    import dask
    from solvent import distributed as sd
    if not a.dask_defaults:
        dask.config.set(sd.WORKER_CONFIG)  # the workers inherit the settings of the process that starts them
    config_name = "dask defaults" if a.dask_defaults else "WORKER_CONFIG"
    for kind in a.cases.split(","):
        bench_case(kind, {"ode": a.trajectories, "maps": a.maps}[kind], a.reps, config_name)


if __name__ == "__main__":
    main()
