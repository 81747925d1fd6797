/* Events and per-trajectory spans (docs/how-to/ode-events.md) against
 * independent references:
 *  - a bouncing ball (free fall, restitution e by a handler): the impact
 *    times in closed form, t_1 = sqrt(2 h0 / g), t_{k+1} = t_k + 2 e^k v_1 / g
 *    with v_1 = g t_1, over 10 bounces to 1e-10, with Rodas5P and Tsit5,
 *    alone and as an ensemble (the fused step's lanes);
 *  - a terminating threshold event in an ensemble of van der Pol
 *    oscillators whose lanes stop at different times, and a recorded
 *    event before it, against scipy's solve_ivp with events (Radau at
 *    1e-13, tests/ode/data/make_event_refs.py → events_refs.h);
 *  - a handler that changes a parameter: y' = −k y with k doubled where y
 *    falls through 1/2, in closed form (t* = ln 2, then y = e^{−2(t − t*)}/2);
 *  - event functions that never fire leave every output bit for bit as
 *    without them; a stop leaves NaN after it; the capacity's overflow is
 *    counted;
 *  - per-trajectory spans: an ensemble with its own t0 and save times per
 *    trajectory against each trajectory run alone with a shared span, bit
 *    for bit;
 *  - bad input named in the error. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "events_refs.h"
#include "support_ode.h"
#include "sv_test.h"

/* ---- bouncing ball ------------------------------------------------------- */
enum { BALL_BOUNCES = 10 };
static const double BALL_G = 9.81, BALL_E = 0.8;

static int ball_f(double t, const double *y, const double *p, double *dy, void *u)
{
    (void)t, (void)p, (void)u;
    dy[0] = y[1];
    dy[1] = -BALL_G;
    return 0;
}

static int ball_jac(double t, const double *y, const double *p, double *v, double *dfdt, void *u)
{
    (void)t, (void)y, (void)p, (void)dfdt, (void)u;
    v[0] = 0, v[1] = 1, v[2] = 0, v[3] = 0;
    return 0;
}

static int ball_g(double t, const double *y, const double *p, double *g, void *u)
{
    (void)t, (void)p, (void)u;
    g[0] = y[0];
    return 0;
}

static int ball_bounce(double t, double *y, double *p, int which, void *u)
{
    (void)t, (void)p, (void)which, (void)u;
    y[1] = -BALL_E * y[1];
    return SV_ODE_HANDLER_CONTINUE;
}

/* The closed-form impact times from height h0 at rest. */
static void ball_impacts(double h0, double *t)
{
    double v = sqrt(2 * h0 * BALL_G);
    t[0] = v / BALL_G;
    for (int k = 1; k < BALL_BOUNCES; k++) {
        v *= BALL_E;
        t[k] = t[k - 1] + 2 * v / BALL_G;
    }
}

static void ball_run(sv_ode_method method, int ntraj)
{
    enum { NT = 8, CAP = 16 };
    sv_ode_problem_desc d = {.name = "ball", .n = 2, .f = ball_f, .jac = ball_jac};
    sv_ode_problem *P = NULL;
    assert_int_equal(sv_ode_problem_create(NULL, &d, &P), SV_OK);
    const sv_ode_event_direction dir = SV_ODE_EVENT_FALLING;
    const sv_ode_event_action act = SV_ODE_EVENT_HANDLE;
    sv_ode_events ev = {.m = 1, .g = ball_g, .direction = &dir, .action = &act, .handler = ball_bounce};
    sv_ode_options o;
    sv_ode_options_default(&o);
    o.method = method;
    o.rtol = 1e-10;
    o.atol = 1e-12;
    o.max_step = 0.05; /* a whole flight inside one step would show no sign change */
    o.events = &ev;
    double y0[2 * NT], t1[NT], ref[NT][BALL_BOUNCES];
    for (int k = 0; k < ntraj; k++) {
        y0[2 * k] = 10.0 + k;
        y0[2 * k + 1] = 0;
        ball_impacts(y0[2 * k], ref[k]);
        t1[k] = ref[k][BALL_BOUNCES - 1] + 1e-3; /* each ball's own end: past its 10th impact, before its 11th */
    }
    double out[2 * NT], et[NT * CAP], ey[NT * CAP * 2];
    int ew[NT * CAP], ne[NT];
    sv_ode_traj_status stt[NT];
    sv_ode_ensemble e = {.ntraj = ntraj, .nsave = 1, .tsave_traj = t1, .y0 = y0, .out = out, .status = stt,
                         .event_capacity = CAP, .event_t = et, .event_which = ew, .event_y = ey, .nevents = ne};
    assert_int_equal(sv_ode_solve(NULL, P, &o, &e), SV_OK);
    for (int k = 0; k < ntraj; k++) {
        assert_int_equal(stt[k], SV_ODE_SUCCESS);
        assert_int_equal(ne[k], BALL_BOUNCES);
        double worst = 0;
        for (int b = 0; b < BALL_BOUNCES; b++) {
            worst = fmax(worst, fabs(et[k * CAP + b] - ref[k][b]));
            assert_int_equal(ew[k * CAP + b], 0);
            assert_true(fabs(ey[(k * CAP + b) * 2]) <= 1e-9); /* on the floor */
        }
        if (k == 0) printf("ball (%s, %d traj): worst impact time error %.2e\n", method ? "Tsit5" : "Rodas5P", ntraj,
                           worst);
        assert_true(worst <= 1e-10);
    }
    sv_ode_problem_destroy(P);
}

static void test_ball_rodas5p(void **s)
{
    (void)s;
    ball_run(SV_ODE_RODAS5P, 1);
    ball_run(SV_ODE_RODAS5P, 8);
}

static void test_ball_tsit5(void **s)
{
    (void)s;
    ball_run(SV_ODE_TSIT5, 1);
    ball_run(SV_ODE_TSIT5, 8);
}

/* ---- van der Pol: a terminating event per lane, against scipy ------------ */
enum { VDP_N = sizeof REF_VDP_STOP / sizeof REF_VDP_STOP[0] };

static int vdp_f(double t, const double *y, const double *p, double *dy, void *u)
{
    (void)t, (void)u;
    dy[0] = y[1];
    dy[1] = p[0] * (1 - y[0] * y[0]) * y[1] - y[0];
    return 0;
}

static int vdp_jac(double t, const double *y, const double *p, double *v, double *dfdt, void *u)
{
    (void)t, (void)dfdt, (void)u;
    v[0] = 0, v[1] = 1;
    v[2] = -2 * p[0] * y[0] * y[1] - 1, v[3] = p[0] * (1 - y[0] * y[0]);
    return 0;
}

static int vdp_g(double t, const double *y, const double *p, double *g, void *u)
{
    (void)t, (void)p, (void)u;
    g[0] = y[0] - 1.5; /* stop: y0 rises through 1.5 */
    g[1] = y[1];     /* record: y1 rises through 0 */
    return 0;
}

/* The same over W lanes (slot-major), the same values. */
static int vdp_g_batch(int W, const double *t, const double *y, const double *p, double *g, void *u)
{
    (void)t, (void)p, (void)u;
    for (int w = 0; w < W; w++) {
        g[w] = y[w] - 1.5;
        g[W + w] = y[W + w];
    }
    return 0;
}

/* Solves the van der Pol ensemble with its stop and record events (g
 * alone, or g_batch too) and checks them against scipy; the event times
 * into et. */
static void vdp_run(sv_ode_method method, double rtol, double tol_t, int batch, double *et)
{
    enum { CAP = 4, NS = 4 };
    sv_ode_problem_desc d = {.name = "vdp", .n = 2, .nparams = 1, .f = vdp_f, .jac = vdp_jac};
    sv_ode_problem *P = NULL;
    assert_int_equal(sv_ode_problem_create(NULL, &d, &P), SV_OK);
    const sv_ode_event_direction dir[2] = {SV_ODE_EVENT_RISING, SV_ODE_EVENT_RISING};
    const sv_ode_event_action act[2] = {SV_ODE_EVENT_STOP, SV_ODE_EVENT_RECORD};
    sv_ode_events ev = {.m = 2, .g = vdp_g, .direction = dir, .action = act, .g_batch = batch ? vdp_g_batch : NULL};
    sv_ode_options o;
    sv_ode_options_default(&o);
    o.method = method;
    o.rtol = rtol;
    o.atol = rtol;
    o.events = &ev;
    double y0[2] = {2, 0}, mu[VDP_N], ts[NS] = {0.5, 1.0, 20.0, EV_VDP_T_END};
    for (int k = 0; k < VDP_N; k++) mu[k] = REF_VDP_STOP[k].mu;
    double out[VDP_N * NS * 2], ey[VDP_N * CAP * 2];
    int ew[VDP_N * CAP], ne[VDP_N];
    sv_ode_traj_status stt[VDP_N];
    sv_ode_stats sts[VDP_N];
    sv_ode_ensemble e = {.ntraj = VDP_N, .nsave = NS, .tsave = ts, .y0 = y0, .y0_shared = 1, .params = mu,
                         .out = out, .status = stt, .stats = sts, .event_capacity = CAP, .event_t = et,
                         .event_which = ew, .event_y = ey, .nevents = ne};
    assert_int_equal(sv_ode_solve(NULL, P, &o, &e), SV_OK);
    double worst = 0;
    for (int k = 0; k < VDP_N; k++) {
        const double *r = &REF_VDP_STOP[k].t_stop;
        assert_int_equal(stt[k], SV_ODE_STOPPED);
        int nt = REF_VDP_STOP[k].nturn;
        assert_int_equal(ne[k], nt + 1); /* the recorded turns, then the stop */
        int last = nt;
        assert_int_equal(ew[k * CAP + last], 0);
        double dt = fabs(et[k * CAP + last] - r[0]);
        worst = fmax(worst, dt / r[0]);
        assert_true(dt <= tol_t * r[0]);
        assert_true(fabs(sts[k].t_reached - et[k * CAP + last]) == 0);
        assert_true(fabs(ey[(k * CAP + last) * 2] - 1.5) <= 1e-12);
        assert_true(fabs(ey[(k * CAP + last) * 2 + 1] - REF_VDP_STOP[k].y1) <= 10 * tol_t * (1 + fabs(r[2])));
        if (nt > 0) {
            assert_int_equal(ew[k * CAP], 1);
            assert_true(fabs(et[k * CAP] - REF_VDP_STOP[k].t_turn) <= tol_t * REF_VDP_STOP[k].t_turn);
        }
        /* saves before the stop are values, the ones after NaN */
        for (int sv = 0; sv < NS; sv++) {
            double v = out[(k * NS + sv) * 2];
            if (ts[sv] <= r[0]) assert_true(isfinite(v));
            else assert_true(isnan(v));
        }
    }
    printf("vdp stop (%s, rtol %g%s): worst relative stop time error %.2e\n", method ? "Tsit5" : "Rodas5P", rtol,
           batch ? ", g_batch" : "", worst);
    sv_ode_problem_destroy(P);
}

static void test_vdp_stop_ensemble(void **s)
{
    (void)s;
    enum { CAP = 4 };
    double a[VDP_N * CAP], b[VDP_N * CAP];
    vdp_run(SV_ODE_RODAS5P, 1e-10, 1e-8, 0, a);
    vdp_run(SV_ODE_RODAS5P, 1e-10, 1e-8, 1, b); /* the batched g: the same events, bit for bit */
    for (int k = 0; k < VDP_N; k++) assert_memory_equal(a + k * CAP, b + k * CAP, sizeof(double) * 2);
    vdp_run(SV_ODE_TSIT5, 1e-10, 1e-8, 0, a);
}

/* ---- a handler that changes a parameter ---------------------------------- */
static int decay_f(double t, const double *y, const double *p, double *dy, void *u)
{
    (void)t, (void)u;
    dy[0] = -p[0] * y[0];
    return 0;
}

static int decay_jac(double t, const double *y, const double *p, double *v, double *dfdt, void *u)
{
    (void)t, (void)y, (void)dfdt, (void)u;
    v[0] = -p[0];
    return 0;
}

static int decay_g(double t, const double *y, const double *p, double *g, void *u)
{
    (void)t, (void)p, (void)u;
    g[0] = y[0] - 0.5;
    return 0;
}

static int decay_double_k(double t, double *y, double *p, int which, void *u)
{
    (void)t, (void)y, (void)which;
    int *calls = u;
    ++*calls;
    p[0] *= 2;
    return SV_ODE_HANDLER_CONTINUE;
}

static void test_handler_changes_parameter(void **s)
{
    (void)s;
    enum { NT = 5 };
    int calls = 0;
    sv_ode_problem_desc d = {.name = "decay", .n = 1, .nparams = 1, .f = decay_f, .jac = decay_jac, .user = &calls};
    sv_ode_problem *P = NULL;
    assert_int_equal(sv_ode_problem_create(NULL, &d, &P), SV_OK);
    const sv_ode_event_action act = SV_ODE_EVENT_HANDLE;
    sv_ode_events ev = {.m = 1, .g = decay_g, .action = &act, .handler = decay_double_k};
    for (int m = 0; m < 2; m++) {
        sv_ode_options o;
        sv_ode_options_default(&o);
        o.method = m ? SV_ODE_TSIT5 : SV_ODE_RODAS5P;
        o.rtol = 1e-11;
        o.atol = 1e-13;
        o.events = &ev;
        double y0 = 1, k = 1, ts[2] = {0.5, 2.0}, out[NT * 2], et[NT];
        int ew[NT], ne[NT];
        calls = 0;
        sv_ode_ensemble e = {.ntraj = NT, .nsave = 2, .tsave = ts, .y0 = &y0, .y0_shared = 1, .params = &k,
                             .params_shared = 1, .out = out, .event_capacity = 1, .event_t = et,
                             .event_which = ew, .nevents = ne};
        assert_int_equal(sv_ode_solve(NULL, P, &o, &e), SV_OK);
        assert_int_equal(calls, NT);
        assert_true(k == 1); /* the ensemble's parameters are not written */
        const double tstar = log(2.0), yend = 0.5 * exp(-2 * (2.0 - tstar));
        for (int tr = 0; tr < NT; tr++) {
            assert_int_equal(ne[tr], 1);
            sv_assert_close(et[tr], tstar, 1e-10, 1);
            sv_assert_close(out[tr * 2], exp(-0.5), 1e-9, 0);
            sv_assert_close(out[tr * 2 + 1], yend, 1e-9, 0);
        }
    }
    sv_ode_problem_destroy(P);
}

/* ---- no firing: the same bits; a stop; overflow ------------------------- */
static int rober_far(double t, const double *y, const double *p, double *g, void *u)
{
    (void)t, (void)p, (void)u;
    g[0] = y[0] + 1;  /* never crosses: y0 in [0, 1] */
    g[1] = 2 - y[2];
    return 0;
}

static void test_silent_events_same_bits(void **s)
{
    (void)s;
    enum { NT = 10, NS = 5 };
    sv_ode_builtin *b = NULL;
    assert_int_equal(sv_ode_builtin_create(NULL, "rober", 0, SV_ODE_JAC_ANALYTIC, &b), SV_OK);
    double y0[3 * NT], ts[NS] = {1, 10, 100, 1e3, 1e4}, a[NT * NS * 3], c[NT * NS * 3];
    for (int k = 0; k < NT; k++) y0[3 * k] = 1 - 0.01 * k, y0[3 * k + 1] = 0, y0[3 * k + 2] = 0.01 * k;
    sv_ode_events ev = {.m = 2, .g = rober_far};
    int ne[NT];
    for (int m = 0; m < 2; m++) {
        sv_ode_options o;
        sv_ode_options_default(&o);
        o.method = m ? SV_ODE_TSIT5 : SV_ODE_RODAS5P;
        o.rtol = 1e-6, o.atol = 1e-10;
        double tsm[NS] = {1e-3, 2e-3, 3e-3, 4e-3, 5e-3}; /* Tsit5: Robertson's stiff part only briefly */
        sv_ode_ensemble e = {.ntraj = NT, .nsave = NS, .tsave = m ? tsm : ts, .y0 = y0, .params = b->params,
                             .params_shared = 1, .out = a};
        assert_int_equal(sv_ode_solve(NULL, b->prob, &o, &e), SV_OK);
        o.events = &ev;
        e.out = c;
        e.nevents = ne;
        assert_int_equal(sv_ode_solve(NULL, b->prob, &o, &e), SV_OK);
        assert_memory_equal(a, c, sizeof a);
        for (int k = 0; k < NT; k++) assert_int_equal(ne[k], 0);
    }
    sv_ode_builtin_destroy(b);
}

static int decay_g_many(double t, const double *y, const double *p, double *g, void *u)
{
    (void)p, (void)u, (void)y;
    g[0] = sin(10 * t); /* crosses every π/10 */
    return 0;
}

static void test_overflow_counted(void **s)
{
    (void)s;
    sv_ode_problem_desc d = {.name = "decay", .n = 1, .nparams = 1, .f = decay_f, .jac = decay_jac};
    sv_ode_problem *P = NULL;
    assert_int_equal(sv_ode_problem_create(NULL, &d, &P), SV_OK);
    sv_ode_events ev = {.m = 1, .g = decay_g_many};
    sv_ode_options o;
    sv_ode_options_default(&o);
    o.rtol = 1e-10;
    o.max_step = 0.1;
    o.events = &ev;
    double y0 = 1, k = 1, t1 = 3.0, out, et[3];
    int ew[3], ne;
    sv_ode_ensemble e = {.ntraj = 1, .nsave = 1, .tsave = &t1, .y0 = &y0, .params = &k, .out = &out,
                         .event_capacity = 3, .event_t = et, .event_which = ew, .nevents = &ne};
    assert_int_equal(sv_ode_solve(NULL, P, &o, &e), SV_OK);
    assert_int_equal(ne, 9); /* kπ/10 < 3 for k = 1 .. 9 */
    for (int j = 0; j < 3; j++) sv_assert_close(et[j], (j + 1) * acos(-1.0) / 10, 1e-12, 1);
    sv_ode_problem_destroy(P);
}

/* ---- per-trajectory spans --------------------------------------------------- */
static void spans_run(sv_ode_method method, const char *name)
{
    enum { NT = 9, NS = 3 };
    sv_ode_builtin *b = NULL;
    assert_int_equal(sv_ode_builtin_create(NULL, name, 0, SV_ODE_JAC_ANALYTIC, &b), SV_OK);
    const int n = sv_ode_problem_n(b->prob);
    assert_true(n <= 3);
    double t0[NT], ts[NT * NS], out[NT * NS * 3], one[NS * 3];
    for (int k = 0; k < NT; k++) {
        t0[k] = 0.1 * k;
        for (int sv = 0; sv < NS; sv++) ts[k * NS + sv] = t0[k] + 0.05 * (sv + 1) * (k + 1);
    }
    sv_ode_options o;
    sv_ode_options_default(&o);
    o.method = method;
    o.rtol = 1e-7, o.atol = 1e-7;
    sv_ode_traj_status st[NT];
    sv_ode_ensemble e = {.ntraj = NT, .nsave = NS, .t0_traj = t0, .tsave_traj = ts, .y0 = b->y0, .y0_shared = 1,
                         .params = b->params, .params_shared = 1, .out = out, .status = st};
    assert_int_equal(sv_ode_solve(NULL, b->prob, &o, &e), SV_OK);
    for (int k = 0; k < NT; k++) {
        assert_int_equal(st[k], SV_ODE_SUCCESS);
        sv_ode_ensemble a = {.ntraj = 1, .t0 = t0[k], .nsave = NS, .tsave = ts + k * NS, .y0 = b->y0,
                             .params = b->params, .out = one};
        assert_int_equal(sv_ode_solve(NULL, b->prob, &o, &a), SV_OK);
        assert_memory_equal(one, out + (size_t)k * NS * n, sizeof(double) * NS * n);
    }
    sv_ode_builtin_destroy(b);
}

static void test_spans_bit_for_bit(void **s)
{
    (void)s;
    spans_run(SV_ODE_RODAS5P, "vdpol"); /* stiff: Rodas5P's fused lanes */
    spans_run(SV_ODE_TSIT5, "lorenz");
}

/* ---- bad input ------------------------------------------------------------ */
static void expect_error(sv_ode_problem *P, const sv_ode_options *o, sv_ode_ensemble *e, sv_status want,
                         const char *phrase)
{
    assert_int_equal(sv_ode_solve(NULL, P, o, e), want);
    if (!strstr(sv_last_error(), phrase)) fail_msg("'%s' does not say '%s'", sv_last_error(), phrase);
}

static void test_refusals(void **s)
{
    (void)s;
    sv_ode_problem_desc d = {.name = "decay", .n = 1, .nparams = 1, .f = decay_f, .jac = decay_jac};
    sv_ode_problem *P = NULL;
    assert_int_equal(sv_ode_problem_create(NULL, &d, &P), SV_OK);
    const sv_ode_event_action act = SV_ODE_EVENT_HANDLE;
    const sv_ode_event_direction bad_dir = (sv_ode_event_direction)7;
    sv_ode_events ev = {.m = 1, .g = decay_g};
    sv_ode_options o;
    sv_ode_options_default(&o);
    o.events = &ev;
    double y0 = 1, k = 1, t1 = 1, out, et;
    int ew, ne;
    sv_ode_ensemble e = {.ntraj = 1, .nsave = 1, .tsave = &t1, .y0 = &y0, .params = &k, .out = &out,
                         .event_capacity = 1, .event_t = &et, .event_which = &ew, .nevents = &ne};
    ev.m = 0;
    expect_error(P, &o, &e, SV_ERR_ARG, "events.m = 0");
    ev.m = 1;
    ev.action = &act;
    expect_error(P, &o, &e, SV_ERR_ARG, "events.handler is NULL");
    ev.action = NULL;
    ev.direction = &bad_dir;
    expect_error(P, &o, &e, SV_ERR_ARG, "events.direction[0] = 7");
    ev.direction = NULL;
    e.nevents = NULL;
    expect_error(P, &o, &e, SV_ERR_ARG, "nevents is NULL");
    e.nevents = &ne;
    e.event_t = NULL;
    expect_error(P, &o, &e, SV_ERR_ARG, "event_t is NULL");
    e.event_t = &et;
    ev.tol = -1;
    expect_error(P, &o, &e, SV_ERR_ARG, "events.tol = -1");
    ev.tol = 0;
    double t0s = 2;
    e.t0_traj = &t0s;
    expect_error(P, &o, &e, SV_ERR_ARG, "tsave[0] of trajectory 0 = 1: expected finite and >= t0 = 2");
    e.t0_traj = NULL;
    double tsb[2] = {1, 0.5};
    e.nsave = 2;
    e.tsave_traj = tsb;
    double out2[2];
    e.out = out2;
    expect_error(P, &o, &e, SV_ERR_ARG, "tsave_traj of trajectory 0 must increase");
    sv_ode_problem_destroy(P);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_ball_rodas5p),           cmocka_unit_test(test_ball_tsit5),
        cmocka_unit_test(test_vdp_stop_ensemble),      cmocka_unit_test(test_handler_changes_parameter),
        cmocka_unit_test(test_silent_events_same_bits), cmocka_unit_test(test_overflow_counted),
        cmocka_unit_test(test_spans_bit_for_bit),      cmocka_unit_test(test_refusals),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
