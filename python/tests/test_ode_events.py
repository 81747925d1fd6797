"""Events and per-trajectory spans of solvent.ode.solve against independent
references: the bouncing ball's closed-form impact times, scipy's
solve_ivp (Radau with events, tests/ode/events_refs.h) for a stop event per
trajectory, and separate single-span solves (bit for bit)."""
import re

import numpy as np
import pytest

import solvent
from conftest import REPO, capture_contexts, ctrl_c_after
from solvent import ode
from solvent._native import lib


@pytest.fixture(autouse=True, scope="module")
def fresh_cache(tmp_path_factory):
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("SOLVENT_CACHE", str(tmp_path_factory.mktemp("cache")))
        yield


# ---- the bouncing ball ------------------------------------------------------
# Dropped from H0 at rest, g = 9.81 m/s², restitution e (the parameter): it
# reaches the floor at t1 = sqrt(2·H0/g) with speed v1 = g·t1, and after the
# k-th bounce flies 2·e^k·v1/g.
H0, GRAVITY = 10.0, 9.81

BALL_F = """
int f(double t, const double *y, const double *p, double *dy, void *user)
{
    dy[0] = y[1];
    dy[1] = -9.81;
    return 0;
}
int jac(double t, const double *y, const double *p, double *J, double *dfdt, void *user)
{
    J[0] = 0; J[1] = 1; J[2] = 0; J[3] = 0;
    return 0;
}
"""

BALL_EVENTS = """
int g(double t, const double *y, const double *p, double *g, void *user)
{
    g[0] = y[0];
    return 0;
}
int handler(double t, double *y, double *p, int which, void *user)
{
    y[1] = -p[0] * y[1];
    return 0;
}
"""


def impacts(e, t_end):
    """The closed-form impact times before t_end and the speeds there.
    (Their sum converges: the ball comes to rest at t1·(1 + e)/(1 − e),
    which must lie past t_end for the count to be finite.)"""
    t1 = np.sqrt(2 * H0 / GRAVITY)
    assert t1 * (1 + e) / (1 - e) > t_end + 1
    v1 = GRAVITY * t1
    times, speeds, t, v = [], [], t1, v1
    while t < t_end:
        times.append(t)
        speeds.append(v)
        v *= e
        t += 2 * v / GRAVITY
    return np.array(times), np.array(speeds)


def check_ball(events, e, t_end, tol=1e-10):
    times, speeds = impacts(e, t_end)
    k = times.size
    assert events["nevents"] == k
    np.testing.assert_allclose(events["event_t"][:k], times, rtol=0, atol=tol)
    assert np.all(np.isnan(events["event_t"][k:])) and np.all(events["event_which"][k:] == -1)
    assert np.all(events["event_which"][:k] == 0)
    # the state there, before the handler reverses the velocity
    np.testing.assert_allclose(events["event_y"][:k, 1], -speeds, rtol=1e-9)
    np.testing.assert_allclose(events["event_y"][:k, 0], 0, atol=1e-9)


def test_builtin_ball_bounces_at_the_closed_form_times():
    """"ball" brings its own event, handler and step bound."""
    y, events, stats = ode.solve("ball", return_stats=True)
    assert stats["status"][0] == ode.SUCCESS and stats["nevents"][0] == 7
    check_ball({k: v[0] for k, v in events.items()}, 0.8, 10.0)


def ball_run(events, es, **options):
    return ode.solve(BALL_F, [H0, 0.0], [0, 10.0], np.reshape(es, (-1, 1)), rtol=1e-10, atol=1e-12,
                     max_step=0.01, events=events, **options)


def test_c_source_events_with_a_handler_per_trajectory():
    es = np.array([0.8, 0.85, 0.9, 0.95])
    y, events = ball_run(ode.Events(BALL_EVENTS, direction="falling", action="handle"), es)
    for k, e in enumerate(es):
        check_ball({name: v[k] for name, v in events.items()}, e, 10.0)


def test_python_event_function_and_handler_agree_with_c_bit_for_bit():
    """The slow path: g over whole lanes and the handler in Python (the
    same operations as the C source's), with C f and with a Python f."""
    def g(t, Y, P):
        return Y[:, :1]

    def bounce(t, y, p, which):
        y[1] = -p[0] * y[1]

    es = np.array([0.82, 0.88, 0.95])
    spec = ode.Events(g, direction="falling", action="handle", handler=bounce)
    y_py, events_py = ball_run(spec, es)
    y_c, events_c = ball_run(ode.Events(BALL_EVENTS, direction="falling", action="handle"), es)
    np.testing.assert_array_equal(y_py, y_c)
    for name in events_c:
        np.testing.assert_array_equal(events_py[name], events_c[name])

    def ball_numpy(t, Y, P):
        return np.stack([Y[:, 1], np.full(len(t), -9.81)], axis=1)

    y, events = ode.solve(ball_numpy, [H0, 0.0], [0, 10.0], es.reshape(-1, 1), rtol=1e-10, atol=1e-12,
                          max_step=0.01, events=spec)
    for k, e in enumerate(es):
        check_ball({name: v[k] for name, v in events.items()}, e, 10.0, tol=1e-9)


def test_numba_cfunc_events_agree_with_c_bit_for_bit():
    numba = pytest.importorskip("numba")
    from solvent.numba import EVENT_SIGNATURE, HANDLER_SIGNATURE

    @numba.cfunc(EVENT_SIGNATURE)
    def height(t, y, p, g, user):
        g[0] = y[0]
        return 0

    @numba.cfunc(HANDLER_SIGNATURE)
    def bounce(t, y, p, which, user):
        y[1] = -p[0] * y[1]
        return 0

    es = np.array([0.85, 0.9])
    y_nb, events_nb = ball_run(ode.Events(height, direction="falling", action="handle", handler=bounce), es)
    y_c, events_c = ball_run(ode.Events(BALL_EVENTS, direction="falling", action="handle"), es)
    np.testing.assert_array_equal(y_nb, y_c)
    np.testing.assert_array_equal(events_nb["event_t"], events_c["event_t"])


def test_capacity_keeps_the_first_events_and_counts_them_all():
    y, full = ode.solve("ball")
    y, few, stats = ode.solve("ball", event_capacity=3, return_stats=True)
    assert few["event_t"].shape == (1, 3) and few["nevents"][0] == 7 and stats["nevents"][0] == 7
    np.testing.assert_array_equal(few["event_t"], full["event_t"][:, :3])
    np.testing.assert_array_equal(few["event_y"], full["event_y"][:, :3])


# ---- a stop event per trajectory, against scipy ---------------------------
# Van der Pol from (2, 0) for each mu: stop where y0 rises through 1.5,
# record where y1 rises through 0 (tests/ode/events_refs.h: solve_ivp Radau
# with events at rtol = atol = 1e-13).
VDP_F = """
int f(double t, const double *y, const double *p, double *dy, void *user)
{
    dy[0] = y[1];
    dy[1] = p[0] * (1 - y[0] * y[0]) * y[1] - y[0];
    return 0;
}
int jac(double t, const double *y, const double *p, double *J, double *dfdt, void *user)
{
    J[0] = 0;                               J[1] = 1;
    J[2] = -2 * p[0] * y[0] * y[1] - 1;     J[3] = p[0] * (1 - y[0] * y[0]);
    return 0;
}
"""

VDP_EVENTS = """
int g(double t, const double *y, const double *p, double *g, void *user)
{
    g[0] = y[0] - 1.5;
    g[1] = y[1];
    return 0;
}
int g_batch(int W, const double *t, const double *y, const double *p, double *g, void *user)
{
    for (int w = 0; w < W; w++) {
        g[w] = y[w] - 1.5;
        g[W + w] = y[W + w];
    }
    return 0;
}
"""


def scipy_references():
    """REF_VDP_STOP's rows: mu, t_stop, y0, y1 at the stop, nturn, t_turn."""
    text = (REPO / "tests" / "ode" / "events_refs.h").read_text()
    number = r"\s*([-0-9.eE+]+)\s*"
    rows = re.findall(r"\{" + ",".join([number] * 6) + r"\}", text)
    assert len(rows) == 11
    return np.array(rows, dtype=np.float64)


def vdp_stop(g, method):
    refs = scipy_references()
    spec = ode.Events(g, direction=["rising", "rising"], action=["stop", "record"])
    y, events, stats = ode.solve(VDP_F, [2.0, 0.0], [0, 0.5, 1.0, 20.0, 40.0], refs[:, :1], method=method,
                                 rtol=1e-10, atol=1e-10, events=spec, return_stats=True)
    return refs, y, events, stats


@pytest.mark.parametrize("method", ["rodas5p", "tsit5"])
def test_stop_event_per_trajectory_matches_scipy(method):
    refs, y, events, stats = vdp_stop(VDP_EVENTS, method)
    t_stop, y_stop, nturn, t_turn = refs[:, 1], refs[:, 2:4], refs[:, 4].astype(int), refs[:, 5]
    assert np.all(stats["status"] == ode.STOPPED)
    np.testing.assert_allclose(stats["t_reached"], t_stop, rtol=1e-8)
    last = events["nevents"] - 1
    rows = np.arange(len(refs))
    assert np.all(events["event_which"][rows, last] == 0)
    np.testing.assert_array_equal(events["event_t"][rows, last], stats["t_reached"])
    np.testing.assert_allclose(events["event_y"][rows, last], y_stop, rtol=1e-7, atol=1e-7)
    assert np.all((events["event_which"] == 1).sum(axis=1) == nturn)
    np.testing.assert_allclose(events["event_t"][:, 0], t_turn, rtol=1e-8)
    # saved before the stop, NaN after it (t_stop < 20 for every mu)
    assert np.all(np.isfinite(y[:, :3])) and np.all(np.isnan(y[:, 3:]))


def test_python_event_function_locates_the_same_events_as_c():
    def g(t, Y, P):
        return np.stack([Y[:, 0] - 1.5, Y[:, 1]], axis=1)

    _, y_c, events_c, stats_c = vdp_stop(VDP_EVENTS, "rodas5p")
    _, y_py, events_py, stats_py = vdp_stop(g, "rodas5p")
    np.testing.assert_array_equal(y_py, y_c)
    for name in events_c:
        np.testing.assert_array_equal(events_py[name], events_c[name])


def test_recording_events_leave_the_solution_unchanged():
    mus = np.array([[0.5], [2.0], [5.0]])
    spec = ode.Events(VDP_EVENTS, count=2)  # both recorded, either direction
    y_ev, events = ode.solve(VDP_F, [2.0, 0.0], np.linspace(0, 30, 7), mus, rtol=1e-8, atol=1e-8, events=spec)
    y = ode.solve(VDP_F, [2.0, 0.0], np.linspace(0, 30, 7), mus, rtol=1e-8, atol=1e-8)
    np.testing.assert_array_equal(y_ev, y)
    assert np.all(events["nevents"] > 4)


# ---- per-trajectory spans ---------------------------------------------------


def test_per_trajectory_spans_equal_separate_solves_bit_for_bit():
    starts = np.array([0.0, 0.3, 1.0, 2.5])
    rows = starts[:, None] + np.array([0.0, 0.7, 1.9, 3.1])
    y0 = np.array([[2.0, 0.0], [1.0, 1.0], [-1.5, 0.5], [0.5, -2.0]])
    mus = np.array([[1.0], [3.0], [5.0], [10.0]])
    y = ode.solve(VDP_F, y0, rows, mus, rtol=1e-9, atol=1e-9)
    for k in range(4):
        alone = ode.solve(VDP_F, y0[k], rows[k], mus[k], rtol=1e-9, atol=1e-9)
        np.testing.assert_array_equal(y[k], alone[0])
    # t0 apart from the save times: a shared row of save times after every start
    later = np.array([3.0, 4.0, 6.0])
    y = ode.solve(VDP_F, y0, later, mus, t0=starts, rtol=1e-9, atol=1e-9, method="tsit5")
    for k in range(4):
        alone = ode.solve(VDP_F, y0[k], later, mus[k], t0=starts[k], rtol=1e-9, atol=1e-9, method="tsit5")
        np.testing.assert_array_equal(y[k], alone[0])


def test_spans_give_the_ensemble_its_size():
    rows = np.array([[0.0, 1.0], [0.5, 2.0], [1.0, 3.0]])
    y = ode.solve(VDP_F, [2.0, 0.0], rows, [1.0], rtol=1e-8, atol=1e-8)
    assert y.shape == (3, 2, 2)
    np.testing.assert_array_equal(y[:, 0], np.tile([2.0, 0.0], (3, 1)))


# ---- errors and Ctrl-C ------------------------------------------------------


def test_bad_events_raise_a_clear_message():
    with pytest.raises(solvent.ArgumentError, match="events direction 'up'"):
        ode.Events(VDP_EVENTS, direction="up")
    with pytest.raises(solvent.ArgumentError, match="'handle' but no handler"):
        ode.Events(VDP_EVENTS, action="handle")
    with pytest.raises(solvent.ArgumentError, match="disagree on how many"):
        ode.Events(VDP_EVENTS, count=3, direction=["rising", "rising"])
    with pytest.raises(solvent.ArgumentError, match="defines no function g"):
        ode.Events("int h(void) { return 0; }")
    with pytest.raises(solvent.ArgumentError, match="event_capacity: only with events"):
        ode.solve(VDP_F, [2.0, 0.0], [0, 1], [1.0], event_capacity=4)
    with pytest.raises(solvent.ArgumentError, match="built-in problem .ball. hands its own data"):
        ode.solve("ball", events=lambda t, Y, P: Y[:, :1])
    with pytest.raises(solvent.ArgumentError, match="y0 has 2 trajectories but t_save has 3"):
        ode.solve(VDP_F, np.zeros((2, 2)), np.tile([0.0, 1.0], (3, 1)), [1.0])
    with pytest.raises(solvent.ArgumentError, match=r"tsave_traj\[1\] of trajectory 1 = -1: expected finite and >= t0"):
        ode.solve(VDP_F, [2.0, 0.0], [[0.0, 1.0], [0.0, -1.0]], [1.0])


def test_library_refusals_carry_its_message():
    """Events with forward sensitivities: the library says why not."""
    with pytest.raises(solvent.SolventError, match="(?i)sensitivit"):
        ode.solve(VDP_F, [2.0, 0.0], [0, 1], [1.0], events=VDP_EVENTS, sensitivities="params")


def test_python_event_errors_raise_after_the_solve():
    shape = r"events g\(t, Y, P\) returned shape \(\d+, 2\): expected \(\d+, 1\)"
    with pytest.raises(solvent.ArgumentError, match=shape):
        ode.solve(VDP_F, [2.0, 0.0], [0, 5], [1.0], events=ode.Events(lambda t, Y, P: Y, count=1))

    def bad_handler(t, y, p, which):
        raise ZeroDivisionError("in the user's handler")

    with pytest.raises(ZeroDivisionError, match="user's handler"):
        ball_run(ode.Events(lambda t, Y, P: Y[:, :1], action="handle", handler=bad_handler), [0.8])


def test_ctrl_c_stops_an_ensemble_with_events(monkeypatch):
    contexts = capture_contexts(monkeypatch, ode)

    def interrupted():  # (uninterrupted: minutes)
        ode.solve("ball", np.tile([H0, 0.0], (400_000, 1)), [0, 10.0], progress=lambda phase, f: None)

    assert ctrl_c_after(0.3, interrupted) < 1.0
    assert contexts and lib.sv_ctx_memory_current(contexts[-1]) == 0
