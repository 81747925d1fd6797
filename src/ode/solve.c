/* The ensemble driver, on top of the module's layers: validates the
 * request, splits trajectories over OpenMP threads and runs each thread's W
 * lanes as a list of phases: refill idle lanes, then one step — prepare (f
 * at the start, first steps), set_steps, the method's attempt for all lanes
 * at once (steppers.h), control (accept or reject, outputs at the save
 * times, completion: phases.h). A problem class with a fused step
 * (fused_rodas5p.h) runs the step in its own routine instead. */
#include <math.h>
#include <omp.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>

#include "events.h"
#include "fused_rodas5p.h"
#include "init.h"
#include "phases.h"
#include "request.h"
#include "sens.h"
#include "span.h"
#include "steppers.h"

typedef struct shared {
    const sv_ode_problem *P;
    const sv_ode_options *o; /* resolved: no zero meaning "default" left */
    sv_ode_ensemble *E;
    sv_ctx *ctx;
    double *atolv, *wts;
    const double *y0;      /* the initial values used: the ensemble's, or a DAE's computed ones */
    int y0_shared;
    int ns;                /* sensitivity directions computed (0: none asked for) */
    atomic_long next;      /* next trajectory to hand out */
    atomic_long done;      /* finished trajectories */
    atomic_int stop;       /* cancel or error: stop handing out */
    sv_status err;
    char msg[512];
} shared;

/* ---- a worker's lanes -------------------------------------------------------- */
static void lanes_free(ode_lanes *L)
{
    sv_free(L->ctx, L->y);
    ode_lin_destroy(L->lin);
    ode_jac_work_destroy(L->jw);
    ode_sens_destroy(L->sens);
    ode_events_destroy(L->ctx, L->ev);
    sv_free(L->ctx, L->inv_target);
}

/* The invariants' per-lane values and the projection's work (m more
 * values for the targets of a lane when m is large). */
static sv_status lanes_invariants(ode_lanes *L)
{
    const ode_invariants *inv = L->P->inv;
    if (!inv) return SV_OK;
    size_t nt = (size_t)inv->m * L->W, nw = ode_invariants_work(inv, L->n) + inv->m;
    L->inv_target = sv_calloc(L->ctx, nt + nw, sizeof(double), "ode invariants per lane");
    if (!L->inv_target) return sv_last_status();
    L->inv_work = L->inv_target + nt;
    L->inv = inv;
    return SV_OK;
}

/* nvec = 1 + ns vectors of n·W values: the state, then the sensitivities. */
static size_t lanes_doubles(const sv_ode_problem *P, int W, int nvec)
{
    size_t n = (size_t)P->n, kst = n * W * nvec;
    /* y ynew f0 U fv rhs dT err (8) + k (8) + p + jv + scratch */
    return 16 * kst + (size_t)(P->np ? P->np : 1) * W + (size_t)(P->nnz ? P->nnz : 1) * W + 3 * n + P->np + 8;
}

/* The slot-major arrays, carved from one allocation: each holds nvec
 * vectors side by side (lanes.h), so that a stage sum or a right-hand side
 * is one pass over the state and its sensitivities. */
static sv_status lanes_arrays(ode_lanes *L)
{
    const sv_ode_problem *P = L->P;
    size_t kst = L->kstride;
    double *base = sv_calloc(L->ctx, lanes_doubles(P, L->W, L->nvec), sizeof(double), "ode lane state");
    if (!base) return sv_last_status();
    /* eight arrays side by side, then the eight stages k */
    double **vec[8] = {&L->y, &L->ynew, &L->f0, &L->U, &L->fv, &L->rhs, &L->dT, &L->err};
    for (int a = 0; a < 8; a++) *vec[a] = base + a * kst;
    L->k = base + 8 * kst;
    L->p = L->k + 8 * kst;
    L->jv = L->p + (size_t)(P->np ? P->np : 1) * L->W;
    L->scratch = L->jv + (size_t)(P->nnz ? P->nnz : 1) * L->W;
    return SV_OK;
}

/* The straight-line LU kernels the options ask for (kernel_cache_dir). */
static void compile_kernels(shared *S, ode_lanes *L)
{
    if (!S->o->kernel_cache_dir || ode_lin_compile(L->lin, S->o->kernel_cache_dir, S->o->kernel_cc) == SV_OK) return;
    /* handled: the table-driven kernels stay, with the same results */
    if (omp_get_thread_num() == 0) sv_log(S->ctx, SV_LOG_WARN, "ode: %s", sv_last_error());
    sv_clear_error();
}

static sv_status lanes_init(shared *S, ode_lanes *L, int W)
{
    const sv_ode_problem *P = S->P;
    memset(L, 0, sizeof *L);
    L->ctx = S->ctx;
    L->P = P;
    L->o = S->o;
    L->E = S->E;
    L->done = &S->done;
    L->W = W;
    L->n = P->n;
    L->np = P->np;
    L->nnz = P->nnz;
    L->rodas = S->o->method == SV_ODE_RODAS5P;
    L->atolv = S->atolv;
    L->wts = S->wts;
    L->nvec = 1 + S->ns;
    L->kstride = (size_t)L->n * W * L->nvec;
    sv_status st = lanes_arrays(L);
    if (st == SV_OK && L->rodas) st = ode_lin_create(S->ctx, P, W, S->o->lu == SV_ODE_LU_SINGLE, &L->lin);
    /* the analytic sensitivity source evaluates Jacobians at Tsit5's stages too */
    if (st == SV_OK && (L->rodas || S->ns)) st = ode_jac_work_create(S->ctx, P, &L->jw);
    if (st == SV_OK && S->ns) st = ode_sens_create(S->ctx, L, &L->sens);
    if (st == SV_OK) st = ode_events_create(S->ctx, P, S->o, W, &L->ev);
    if (st == SV_OK) st = lanes_invariants(L);
    if (st == SV_OK && L->rodas) compile_kernels(S, L);
    if (st == SV_OK && L->rodas) L->step = ode_fused_step_select(L);
    if (st == SV_OK && W > 8 && !L->step) /* choose_lanes gives more than 8 lanes only to a fused step */
        st = sv_error(SV_ERR_INTERNAL, "ode: %d lanes without a fused step", W);
    if (st != SV_OK) {
        lanes_free(L);
        return st;
    }
    volatile double emin = 1e-4; /* computed at run time, as step control always did */
    L->lerr_floor = log(emin);
    for (int w = 0; w < W; w++) {
        L->traj[w] = -1;
        L->h[w] = 1.0;
        L->t[w] = S->E->t0; /* an idle lane's span: set when it takes a trajectory */
        L->tsave[w] = NULL;
        L->tend[w] = S->E->t0;
        L->tcap[w] = INFINITY;
    }
    return SV_OK;
}

/* ---- refill: a new trajectory for an idle lane -------------------------------- */
/* The next trajectory nobody has taken, or -1. */
static long claim_trajectory(shared *S)
{
    if (atomic_load(&S->stop)) return -1;
    long tr = atomic_fetch_add(&S->next, 1);
    return tr < S->E->ntraj ? tr : -1;
}

/* Lane w starts trajectory tr at its t0: span, controller state, y0,
 * parameters. Returns whether y0 is finite. */
static int lane_start(shared *S, ode_lanes *L, int w, long tr)
{
    const sv_ode_ensemble *E = S->E;
    const sv_ode_options *o = S->o;
    const int n = L->n, np = L->np, W = L->W;
    const double *y0 = S->y0 + (S->y0_shared ? 0 : (size_t)tr * n);
    const double *p = np ? E->params + (E->params_shared ? 0 : (size_t)tr * np) : NULL;
    L->traj[w] = tr;
    L->active[w] = 1;
    memset(&L->st[w], 0, sizeof L->st[w]);
    L->t[w] = ode_span_t0(E, tr);
    L->tsave[w] = ode_span_tsave(E, tr);
    L->tend[w] = L->tsave[w][E->nsave - 1];
    L->lerrold[w] = log(1e-4);
    L->lerrolder[w] = log(1e-4);
    L->have_f0[w] = 0;
    L->need_jac[w] = 1;
    L->need_h0[w] = o->fixed_step <= 0 && o->first_step <= 0;
    L->hprop[w] = o->fixed_step > 0 ? o->fixed_step : o->first_step;
    L->nonfinite[w] = 0;
    L->refusals[w] = 0;
    L->stop_idx[w] = 0;
    while (L->stop_idx[w] < o->ntstops && o->tstops[L->stop_idx[w]] <= L->t[w]) L->stop_idx[w]++;
    int finite = 1;
    for (int i = 0; i < n; i++) {
        L->y[(size_t)i * W + w] = y0[i];
        finite &= isfinite(y0[i]) != 0;
    }
    for (int k = 0; k < np; k++) L->p[(size_t)k * W + w] = p[k];
    if (L->sens) finite &= ode_sens_lane_start(L, w, tr);
    if (L->inv) ode_lane_set_invariants(L, w);
    return finite;
}

/* Give idle lane w the next trajectory; returns 0 when none is left. */
static int refill(shared *S, ode_lanes *L, int w)
{
    for (;;) {
        long tr = claim_trajectory(S);
        if (tr < 0) return 0;
        int finite = lane_start(S, L, w, tr);
        ode_phase_save_initial(L, w);
        if (!finite) {
            ode_phase_finish(L, w, SV_ODE_NONFINITE);
            continue;
        }
        if (L->ev && !ode_events_start(L, w)) {
            ode_phase_finish(L, w, SV_ODE_F_FAILED);
            continue;
        }
        if (L->save[w] >= S->E->nsave) {
            ode_phase_finish(L, w, SV_ODE_SUCCESS);
            continue;
        }
        return 1;
    }
}

/* Every idle lane takes the next trajectory, while there are any. */
static void refill_idle(shared *S, ode_lanes *L)
{
    for (int w = 0; w < L->W; w++)
        if (!L->active[w]) refill(S, L, w);
}

/* ---- the worker ------------------------------------------------------------------ */
/* The first error of any worker is the solve's; everyone stops. */
static void record_error(shared *S, sv_status st)
{
#pragma omp critical(sv_ode_err)
    {
        if (S->err == SV_OK) {
            S->err = st;
            snprintf(S->msg, sizeof S->msg, "%s", sv_last_error());
        }
    }
    atomic_store(&S->stop, 1);
}

/* Thread 0 reports progress about every 0.1 s (checked every 256 rounds). */
static void report_progress(shared *S, unsigned *iter, double *last)
{
    if ((++*iter & 255) != 0 || sv_time_now() - *last <= 0.1) return;
    *last = sv_time_now();
    double frac = (double)atomic_load(&S->done) / S->E->ntraj;
    if (sv_progress(S->ctx, "ode", frac) != SV_OK) record_error(S, SV_ERR_CANCELLED);
}

static int count_active(const ode_lanes *L)
{
    int nact = 0;
    for (int w = 0; w < L->W; w++) nact += L->active[w];
    return nact;
}

/* One step of every active lane: the phases around the method's attempt. */
static sv_status step(ode_lanes *L)
{
    ode_phase_prepare(L);
    if (!count_active(L)) return SV_OK;
    ode_phase_set_steps(L);
    sv_status st = ode_attempt(L);
    if (st == SV_OK) ode_phase_control(L, NULL);
    return st;
}

static void worker(shared *S, int W, int tid)
{
    ode_lanes L;
    sv_status st = lanes_init(S, &L, W);
    if (st != SV_OK) {
        record_error(S, st);
        return;
    }
    double last = sv_time_now();
    unsigned iter = 0;
    for (;;) {
        refill_idle(S, &L);
        if (!count_active(&L) || atomic_load(&S->stop)) break;
        st = L.step ? L.step(&L) : step(&L);
        if (st != SV_OK) {
            record_error(S, st);
            break;
        }
        if (tid == 0) report_progress(S, &iter, &last);
    }
    lanes_free(&L);
}

/* ---- the plan: lanes, threads, memory ------------------------------------------- */
/* Lanes per batch and threads: one vector register of doubles by default
 * (8 with AVX-512, else 4), two for the fused step of tiny systems without
 * sensitivities (its stages are chains of dependent operations that a
 * second register's lanes overlap), more than 8 only there; with fewer
 * trajectories than lanes × threads, narrower lanes (results do not depend
 * on W, and idle lanes would only cost time) and no more threads than
 * batches. */
static int choose_lanes(sv_ctx *ctx, const sv_ode_problem *P, const sv_ode_options *o, int sens, long ntraj,
                        int *threads)
{
#if defined(__AVX512F__)
    int W = o->lanes ? o->lanes : 8;
#else
    int W = o->lanes ? o->lanes : 4;
#endif
    int fused_w = ode_fused_lanes(ctx, P, o, sens);
    if (!o->lanes && fused_w) W = fused_w;
    if (W > 8 && !fused_w) W = 8;
    int nthreads = sv_ctx_threads(ctx);
    if (nthreads <= 0) nthreads = sv_threads_team();
    while (W > 1 && (long)(W / 2) * nthreads >= ntraj) W /= 2;
    long maxuse = (ntraj + W - 1) / W;
    if (nthreads > maxuse) nthreads = (int)maxuse;
    if (nthreads < 1) nthreads = 1;
    *threads = nthreads;
    return W;
}

/* Per thread the lane arrays plus the LU buffers, checked against the budget. */
static sv_status check_memory(sv_ctx *ctx, const sv_ode_problem *P, const sv_ode_options *o, int W, int nthreads,
                              int sens)
{
    size_t n = (size_t)P->n, per = lanes_doubles(P, W, 1 + (sens ? P->ns : 0)) * sizeof(double);
    if (o->method == SV_ODE_RODAS5P) per += n * n * W * (sizeof(double) + sizeof(float)) + 8 * n * W * 8;
    if (sens) per += ode_sens_bytes(P, W);
    return sv_mem_check(ctx, per * (size_t)nthreads + 2 * n * sizeof(double), "ode ensemble workspace");
}

/* ---- the solve -------------------------------------------------------------------- */
/* The shared record: tolerance and weight vectors, counters. */
static sv_status shared_init(shared *S, sv_ctx *ctx, const sv_ode_problem *P, const sv_ode_options *o,
                             sv_ode_ensemble *E, const double *y0, int y0_shared)
{
    int n = P->n;
    memset(S, 0, sizeof *S);
    S->P = P;
    S->o = o;
    S->E = E;
    S->ctx = ctx;
    S->ns = E->sens_out ? P->ns : 0;
    S->y0 = y0;
    S->y0_shared = y0_shared;
    S->atolv = sv_alloc(ctx, sizeof(double) * 2 * (size_t)n, "ode tolerances");
    if (!S->atolv) return sv_last_status();
    S->wts = S->atolv + n;
    for (int i = 0; i < n; i++) {
        S->atolv[i] = o->atol_vec ? o->atol_vec[i] : o->atol;
        S->wts[i] = o->weights ? o->weights[i] : 1.0;
    }
    atomic_init(&S->next, 0);
    atomic_init(&S->done, 0);
    atomic_init(&S->stop, 0);
    return SV_OK;
}

/* Every output entry defined before anything runs: save times a trajectory
 * never reaches (it failed, or never ran) keep NaN whatever its status
 * (ode.h), statuses start as "not run", statistics at zero. */
static void clear_outputs(const sv_ode_problem *P, sv_ode_ensemble *E)
{
    if (E->status)
        for (int t = 0; t < E->ntraj; t++) E->status[t] = SV_ODE_NOT_RUN;
    for (size_t k = 0, len = (size_t)E->ntraj * E->nsave * P->n; k < len; k++) E->out[k] = NAN;
    if (E->sens_out)
        for (size_t k = 0, len = (size_t)E->ntraj * E->nsave * P->n * P->ns; k < len; k++) E->sens_out[k] = NAN;
    if (E->stats) memset(E->stats, 0, sizeof(sv_ode_stats) * (size_t)E->ntraj);
    if (E->nevents) memset(E->nevents, 0, sizeof(int) * (size_t)E->ntraj);
}

/* ens->y0_out, when asked for: the initial values each trajectory uses. */
static void report_initial_values(const sv_ode_problem *P, sv_ode_ensemble *E, const double *y0, int y0_shared)
{
    if (!E->y0_out) return;
    const size_t n = (size_t)P->n;
    for (long tr = 0; tr < E->ntraj; tr++) memcpy(E->y0_out + tr * n, y0 + (y0_shared ? 0 : tr * n), sizeof(double) * n);
}

/* The pattern checked at the first trajectory's start, when the solve
 * evaluates Jacobians (Rodas5P, or the analytic sensitivity source). */
static sv_status check_pattern(sv_ctx *ctx, const sv_ode_problem *P, const sv_ode_options *o,
                               const sv_ode_ensemble *E)
{
    int uses_jac = o->method == SV_ODE_RODAS5P || (E->sens_out && P->d.sens_source == SV_ODE_SENS_ANALYTIC);
    if (o->check_pattern != SV_ODE_CHECK_ON || !uses_jac) return SV_OK;
    return ode_check_pattern(ctx, P, ode_span_t0(E, 0), E->y0, E->params);
}

/* The workers over one shared record, with progress from 0 to 1; the first
 * error of any of them is the solve's. */
static sv_status run_workers(sv_ctx *ctx, const sv_ode_problem *P, const sv_ode_options *o, sv_ode_ensemble *E,
                             const double *y0, int y0_shared, int W, int nthreads)
{
    shared S;
    sv_status st = shared_init(&S, ctx, P, o, E, y0, y0_shared);
    if (st != SV_OK) return st;
    st = sv_progress(ctx, "ode", 0.0);
    if (st == SV_OK) {
        sv_threads_saved prev = sv_threads_apply(ctx);
#pragma omp parallel num_threads(nthreads)
        worker(&S, W, omp_get_thread_num());
        sv_threads_restore(prev);
    }
    sv_free(ctx, S.atolv);
    if (st != SV_OK) return st;
    if (S.err != SV_OK) return sv_error(S.err, "%s", S.msg);
    return sv_progress(ctx, "ode", 1.0);
}

sv_status sv_ode_solve(sv_ctx *ctx, const sv_ode_problem *P, const sv_ode_options *opt, sv_ode_ensemble *E)
{
    sv_ode_options o;
    sv_status st = ode_request_check(P, opt, E, &o);
    if (st != SV_OK) return st;
    clear_outputs(P, E);
    if (E->ntraj == 0) return SV_OK;
    st = check_pattern(ctx, P, &o, E);
    if (st != SV_OK) return st;
    int sens = E->sens_out != NULL, nthreads, W = choose_lanes(ctx, P, &o, sens, E->ntraj, &nthreads);
    st = check_memory(ctx, P, &o, W, nthreads, sens);
    if (st != SV_OK) return st;
    double *y0c = NULL;
    int y0c_shared = 0;
    st = ode_init_values(ctx, P, &o, E, &y0c, &y0c_shared);
    if (st != SV_OK) return st;
    const double *y0 = y0c ? y0c : E->y0;
    const int y0_shared = y0c ? y0c_shared : E->y0_shared;
    report_initial_values(P, E, y0, y0_shared);
    st = run_workers(ctx, P, &o, E, y0, y0_shared, W, nthreads);
    sv_free(ctx, y0c);
    return st;
}
