"""solvent.distributed on a Dask LocalCluster of two worker processes on the
loopback, against the single-machine calls (solvent.sweep of each item,
ode.solve of the whole ensemble): the same S to 1e-12 and the same
trajectories bit for bit, after a worker killed with SIGKILL and after a
resume; bad items reported with their index and the library's message."""
import copy
import logging
import os
import signal

import numpy as np
import pytest

distributed = pytest.importorskip("distributed")

import solvent  # noqa: E402
from conftest import STRIP  # noqa: E402
from solvent import distributed as sd  # noqa: E402
from solvent import ode  # noqa: E402

F = [1e9, 3e9]

# Van der Pol as C source: compiled once per worker process.
VDP = """
int f(double t, const double *y, const double *p, double *dydt, void *user) {
    dydt[0] = y[1];
    dydt[1] = p[0] * ((1 - y[0] * y[0]) * y[1]) - y[0];
    return 0;
}
"""


@pytest.fixture(scope="module")
def client():
    cluster = distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True, host="127.0.0.1",
                                       dashboard_address=":0", silence_logs=logging.ERROR)
    with distributed.Client(cluster) as c:
        yield c
    cluster.close()


@pytest.fixture(scope="module")
def board():
    return copy.deepcopy({key: value for key, value in STRIP.items() if key != "pixels"})


@pytest.fixture(scope="module")
def maps():
    """Six 4 x 6 maps: the strip with random metal above and below it; map 4
    has no metal at the input port (the library refuses it)."""
    rng = np.random.default_rng(7)
    out = []
    for _ in range(6):
        m = rng.integers(0, 2, (4, 6))
        m[1:3, :] = 1
        out.append(m)
    out[4][1:3, 0] = 0
    return out


@pytest.fixture(scope="module")
def direct(maps, board):
    """solvent.sweep of each map on this machine: the reference, or the
    library's message for a map it refuses (sweep_many names map k "item k")."""
    out = []
    for k, m in enumerate(maps):
        try:
            out.append(solvent.sweep(solvent.Project.from_pixels(m, board, name=f"item {k}"), f=F))
        except solvent.SolventError as exc:
            out.append(str(exc))
    return out


def assert_same_sweeps(result, direct):
    assert len(result) == len(direct)
    for k, expected in enumerate(direct):
        if isinstance(expected, str):
            assert result[k] is None and result.errors[k] == expected
            continue
        assert k not in result.errors
        np.testing.assert_array_equal(result[k].f, expected.f)
        np.testing.assert_allclose(result[k].s, expected.s, rtol=0, atol=1e-12)
        assert result[k].port_names == expected.port_names


def builds(client):
    return sum(client.run(lambda: __import__("solvent.distributed").distributed.state_builds).values())


def test_maps_match_the_direct_sweeps(client, maps, board, direct):
    """In order, S to 1e-12, the refused map reported with its index and
    the library's message; the board built once per worker, not per task."""
    assert isinstance(direct[4], str) and direct[4].startswith("item 4: ") and "must be metal" in direct[4]
    before = builds(client)
    result = solvent.sweep_many(maps, board=board, client=client, chunk_size=2, f=F)
    assert_same_sweeps(result, direct)
    assert set(result.errors) == {4} and result.computed == 6
    assert builds(client) - before <= 2  # three tasks, two workers
    f, s, ok = result.arrays()
    assert list(ok) == [True] * 4 + [False, True] and np.isnan(s[4]).all()
    np.testing.assert_allclose(s[5], direct[5].s, rtol=0, atol=1e-12)


def test_project_dicts_and_the_local_path(client, maps, board, direct):
    projects = [dict(board, pixels=["".join("#" if v else "." for v in row) for row in m.tolist()]) for m in maps]
    assert_same_sweeps(solvent.sweep_many(projects, client=client, f=F), direct)
    assert_same_sweeps(solvent.sweep_many(projects, f=F), direct)


def test_each_worker_gets_its_share_of_the_cores(client):
    """Two single-threaded workers on this host: each task runs the library
    on half the cores (at least one), never on all of them."""
    plan = sd._thread_plan(client, None)
    assert plan == {"127.0.0.1": max(1, len(os.sched_getaffinity(0)) // 2)}
    assert sd._thread_plan(client, 3) == {"*": 3}


def test_a_killed_worker_loses_nothing(client, maps, board, direct):
    """SIGKILL a worker process holding a map once the first map is in: its
    tasks run again elsewhere and the result is complete and identical."""
    kill_one, killed = worker_killer(client)
    result = solvent.sweep_many(maps, board=board, client=client, chunk_size=1, progress=kill_one, f=F)
    assert killed
    assert_same_sweeps(result, direct)
    client.wait_for_workers(2, timeout=60)  # the nanny starts a new one


def worker_killer(client):
    """A progress callable that SIGKILLs a worker process holding a task
    once the first task is in, and the list it notes the kill in."""
    pids = client.run(os.getpid)
    killed = []

    def kill_one(phase, fraction):
        if fraction > 0 and not killed:
            busy = [address for address, keys in client.processing().items() if keys and address in pids]
            if busy:  # a worker with a map in hand
                os.kill(pids[busy[0]], signal.SIGKILL)
                killed.append(busy[0])

    return kill_one, killed


class Stop(Exception):
    pass


def stop_after_first(phase, fraction):
    if fraction > 0:
        raise Stop


def parts(store):
    return {p.name: p.stat().st_mtime_ns for p in store.glob("part-*.npz")}


def test_a_stopped_run_resumes_with_what_is_missing(client, maps, board, direct, tmp_path):
    store = tmp_path / "maps"
    with pytest.raises(Stop):
        solvent.sweep_many(maps, board=board, client=client, store=store, chunk_size=1, progress=stop_after_first,
                           f=F)
    written = parts(store)
    assert 1 <= len(written) < 6
    result = solvent.sweep_many(maps, board=board, client=client, store=store, chunk_size=1, f=F)
    assert result.computed == 6 - len(written)
    assert_same_sweeps(result, direct)
    after = parts(store)
    assert len(after) == 6 and all(after[name] == t for name, t in written.items())  # never rewritten
    again = solvent.sweep_many(maps, board=board, client=client, store=store, gather=False, f=F)
    assert again.computed == 0 and again.results == [None] * 6
    assert_same_sweeps(sd.load(store), direct)


def test_a_store_refuses_another_job(client, maps, board, tmp_path):
    solvent.sweep_many(maps[:1], board=board, store=tmp_path, f=F)
    with pytest.raises(solvent.ArgumentError, match="holds another job"):
        solvent.sweep_many(maps[1:2], board=board, store=tmp_path, f=F)


def rober_scan(n):
    rober = ode.builtin_defaults("rober")
    params = rober["params"] * np.random.default_rng(3).uniform(0.9, 1.1, (n, 3))
    return rober["y0"], [0.0, 1.0, 1e2, 1e5], params


def test_ode_shards_are_bit_for_bit(client):
    y0, t_save, params = rober_scan(1500)
    expected, expected_stats = ode.solve("rober", y0, t_save, params, return_stats=True)
    y, stats = ode.solve("rober", y0, t_save, params, client=client, shard_size=400, return_stats=True)
    assert np.array_equal(y, expected)
    for name in ("status", "accepted", "rejected", "nf"):
        assert np.array_equal(stats[name], expected_stats[name])


def test_compiled_rhs_with_sensitivities(client):
    """C source compiled once per worker; y and S bit for bit."""
    mu = np.linspace(0.5, 2.0, 600)[:, None]
    y0, t_save = [2.0, 0.0], np.linspace(0, 3, 7)
    expected = ode.solve(VDP, y0, t_save, mu, sensitivities="params", method="tsit5")
    before = builds(client)
    y, s = ode.solve(VDP, y0, t_save, mu, sensitivities="params", method="tsit5", client=client, shard_size=100)
    assert np.array_equal(y, expected[0]) and np.array_equal(s, expected[1])
    assert builds(client) - before <= 2  # six shards, two workers


def test_ode_resume_computes_only_missing_shards(client, tmp_path):
    y0, t_save, params = rober_scan(1200)
    expected = ode.solve("rober", y0, t_save, params)
    with pytest.raises(Stop):
        ode.solve("rober", y0, t_save, params, client=client, shard_size=200, store=tmp_path,
                  progress=stop_after_first)
    written = parts(tmp_path)
    assert 1 <= len(written) < 6
    y = ode.solve("rober", y0, t_save, params, client=client, shard_size=200, store=tmp_path)
    after = parts(tmp_path)
    assert len(after) == 6 and all(after[name] == t for name, t in written.items())
    assert np.array_equal(y, expected)
    stored = sd.load(tmp_path)
    assert stored.done.all() and np.array_equal(stored.y, expected) and stored.s is None and stored.events is None


def test_ode_refuses_what_cannot_travel(client):
    from solvent._native import ffi
    with pytest.raises(solvent.ArgumentError, match="C function pointer"):
        ode.solve(ffi.cast("void *", 1), [1.0], [0, 1], np.ones((3, 1)), client=client)
    with pytest.raises(solvent.ArgumentError, match="events: with client=.*C function pointer"):
        ode.solve(VDP, [2.0, 0.0], [0, 1], np.ones((3, 1)), events=ffi.cast("void *", 1), client=client)
    with pytest.raises(solvent.ArgumentError, match="only with client"):
        ode.solve("rober", store="somewhere")


def test_batch_matches_the_direct_batch(client, maps, board):
    """solvent.batch with client=: chunks on the workers, each worker's
    board built once, S as the single-machine batch's to 1e-12, the refused
    map reported by its index."""
    direct = solvent.batch(maps, board, f=F, threads=1)
    before = builds(client)
    result = solvent.batch(maps, board, f=F, client=client, chunk_size=2)
    assert builds(client) - before <= 2  # three tasks, two workers: one board each
    assert list(result.ok) == list(direct.ok) and set(result.errors) == {4}
    assert result.errors == direct.errors
    np.testing.assert_array_equal(result.f, direct.f)
    np.testing.assert_allclose(result.s, direct.s, rtol=0, atol=1e-12)
    assert np.isnan(result.s[4]).all()


def assert_same_batch(result, direct):
    assert list(result.ok) == list(direct.ok) and result.errors == direct.errors
    np.testing.assert_array_equal(result.f, direct.f)
    np.testing.assert_allclose(result.s, direct.s, rtol=0, atol=1e-12)
    assert result.port_names == direct.port_names


def test_a_batch_loses_nothing_to_a_killed_worker(client, maps, board):
    direct = solvent.batch(maps, board, f=F, threads=1)
    kill_one, killed = worker_killer(client)
    result = solvent.batch(maps, board, f=F, client=client, chunk_size=1, progress=kill_one)
    assert killed
    assert_same_batch(result, direct)
    client.wait_for_workers(2, timeout=60)


def test_a_stopped_batch_resumes_with_what_is_missing(client, maps, board, tmp_path):
    direct = solvent.batch(maps, board, f=F, threads=1)
    with pytest.raises(Stop):
        solvent.batch(maps, board, f=F, client=client, store=tmp_path, chunk_size=1, progress=stop_after_first)
    written = parts(tmp_path)
    assert 1 <= len(written) < 6
    result = solvent.batch(maps, board, f=F, client=client, store=tmp_path, chunk_size=1)
    assert result.computed == 6 - len(written)
    assert_same_batch(result, direct)
    after = parts(tmp_path)
    assert len(after) == 6 and all(after[name] == t for name, t in written.items())
    assert_same_batch(sd.load(tmp_path), direct)
    again = solvent.batch(maps, board, f=F, client=client, store=tmp_path, gather=False)
    assert again.computed == 0 and again.s is None and again.errors == direct.errors


def test_default_shards_are_long_and_even(client, tmp_path):
    """Without shard_size: Robertson's 1500 trajectories take a few ms in
    all, so one shard would be long enough, but two workers get one shard
    each (the number of shards a multiple of the worker threads)."""
    y0, t_save, params = rober_scan(1500)
    ode.solve("rober", y0, t_save, params, client=client, store=tmp_path)
    assert sorted(parts(tmp_path)) == ["part-000000000-000000749.npz", "part-000000750-000001499.npz"]


# The bouncing ball with a per-trajectory start and save times: y, the
# events and the statistics bit for bit against the single machine.
BALL_EVENTS = """
int g(double t, const double *y, const double *p, double *out, void *user) {
    out[0] = y[0];
    return 0;
}
"""
BALL = """
int f(double t, const double *y, const double *p, double *dydt, void *user) {
    dydt[0] = y[1];
    dydt[1] = -p[0];
    return 0;
}
"""


def bounce(t, y, p, which):
    y[1] = -0.9 * y[1]


def test_events_and_per_trajectory_spans_are_bit_for_bit(client, tmp_path):
    n = 300
    rng = np.random.default_rng(5)
    y0 = np.column_stack([rng.uniform(1, 3, n), np.zeros(n)])
    g = np.full((n, 1), 9.81)
    t0 = rng.uniform(0, 0.5, n)
    t_save = t0[:, None] + np.linspace(0, 3, 7)
    events = ode.Events(BALL_EVENTS, direction="falling", action="handle", handler=bounce)
    options = dict(t0=t0, events=events, event_capacity=8, method="tsit5", rtol=1e-10, atol=1e-12,
                   return_stats=True)
    y, found, stats = ode.solve(BALL, y0, t_save, g, **options)
    assert (found["nevents"] >= 1).all()  # every ball lands at least once
    y_d, found_d, stats_d = ode.solve(BALL, y0, t_save, g, client=client, shard_size=70, store=tmp_path, **options)
    assert np.array_equal(y_d, y, equal_nan=True)
    for name in found:
        assert np.array_equal(found_d[name], found[name], equal_nan=True), name
    assert np.array_equal(stats_d["status"], stats["status"]) and np.array_equal(stats_d["nf"], stats["nf"])
    stored = sd.load(tmp_path)
    assert stored.done.all() and np.array_equal(stored.events["event_t"], found["event_t"], equal_nan=True)


def test_worker_config_as_a_file_is_what_dask_reads(tmp_path):
    """The YAML file for workers started by hand, read back by Dask's own
    configuration loader, gives every WORKER_CONFIG setting."""
    import dask
    (tmp_path / "solvent-workers.yaml").write_text(sd.worker_config_yaml())
    config = dask.config.collect(paths=[str(tmp_path)], env={})
    for dotted, value in sd.WORKER_CONFIG.items():
        node = config
        for key in dotted.split("."):
            node = node[key]
        assert node == value, dotted
