/* Ensemble driver: validates the request, splits trajectories over OpenMP
 * threads, and runs each thread's W lanes: refill idle lanes, step
 * attempt for all lanes at once, then per-lane step control (control.h),
 * dense output at the save times, and completion. A problem class with a
 * fused step (driver.h) runs these phases in its own routine instead. */
#include <float.h>
#include <math.h>
#include <omp.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>

#include "control.h"
#include "driver.h"

typedef struct shared {
    const sv_ode_problem *P;
    const sv_ode_options *o;
    sv_ode_ensemble *E;
    sv_ctx *ctx;
    double *atolv, *wts;
    atomic_long next;      /* next trajectory to hand out */
    atomic_long done;      /* finished trajectories */
    atomic_int stop;       /* cancel or error: stop handing out */
    sv_status err;
    char msg[512];
} shared;

double ode_error_norm(const ode_lanes *L, int w, const double *e)
{
    double r[ODE_WMAX];
    ode_error_norms(L, e, r);
    return r[w];
}

static inline __attribute__((always_inline)) void error_norms_w(const ode_lanes *L, const double *e, double *out,
                                                                const int W)
{
    const int n = L->n;
    const double rtol = L->o->rtol;
    double acc[ODE_WMAX] = {0};
    for (int i = 0; i < n; i++) {
        const double *y = L->y + (size_t)i * W, *yn = L->ynew + (size_t)i * W, *ei = e + (size_t)i * W;
        double at = L->atolv[i], wt = L->wts[i];
        for (int w = 0; w < W; w++) {
            double sc = at + ode_max(fabs(y[w]), fabs(yn[w])) * rtol;
            double r = wt * ei[w] / sc;
            acc[w] += r * r;
        }
    }
    for (int w = 0; w < W; w++) out[w] = sqrt(acc[w] / n);
}

void ode_error_norms(const ode_lanes *L, const double *e, double *out)
{
    switch (L->W) {
    case 1: error_norms_w(L, e, out, 1); break;
    case 2: error_norms_w(L, e, out, 2); break;
    case 4: error_norms_w(L, e, out, 4); break;
    default: error_norms_w(L, e, out, 8); break;
    }
}

static void lanes_free(sv_ctx *ctx, ode_lanes *L)
{
    sv_free(ctx, L->y);
    ode_lin_destroy(ctx, L->lin);
    ode_jac_work_destroy(ctx, L->jw);
}

static size_t lanes_doubles(const sv_ode_problem *P, int W)
{
    size_t n = (size_t)P->n, nw = n * W;
    /* y ynew f0 U fv rhs dT err (8) + k (8) + p + jv + scratch */
    return 16 * nw + (size_t)(P->np ? P->np : 1) * W + (size_t)(P->nnz ? P->nnz : 1) * W + 3 * n + P->np + 8;
}

static sv_status lanes_init(sv_ctx *ctx, shared *S, ode_lanes *L, int W)
{
    const sv_ode_problem *P = S->P;
    memset(L, 0, sizeof *L);
    L->P = P;
    L->o = S->o;
    L->E = S->E;
    L->W = W;
    L->n = P->n;
    L->np = P->np;
    L->nnz = P->nnz;
    L->rodas = S->o->method == SV_ODE_RODAS5P;
    L->tend = S->E->tsave[S->E->nsave - 1];
    L->atolv = S->atolv;
    L->wts = S->wts;
    size_t nw = (size_t)P->n * W;
    L->y = sv_calloc(ctx, lanes_doubles(P, W), sizeof(double), "ode lane state");
    if (!L->y) return sv_last_status();
    L->ynew = L->y + nw;
    L->f0 = L->ynew + nw;
    L->U = L->f0 + nw;
    L->fv = L->U + nw;
    L->rhs = L->fv + nw;
    L->dT = L->rhs + nw;
    L->err = L->dT + nw;
    L->k = L->err + nw;
    L->p = L->k + 8 * nw;
    L->jv = L->p + (size_t)(P->np ? P->np : 1) * W;
    L->scratch = L->jv + (size_t)(P->nnz ? P->nnz : 1) * W;
    if (L->rodas) {
        L->lin = ode_lin_create(ctx, P, W, S->o->lu == SV_ODE_LU_SINGLE);
        L->jw = ode_jac_work_create(ctx, P, W);
        if (!L->lin || !L->jw) {
            sv_status st = sv_last_status();
            lanes_free(ctx, L);
            return st == SV_OK ? SV_ERR_NOMEM : st;
        }
        if (S->o->kernel_cache_dir && ode_lin_compile(L->lin, S->o->kernel_cache_dir, S->o->kernel_cc) != SV_OK) {
            /* handled: the table-driven kernels stay, with the same results */
            if (omp_get_thread_num() == 0) sv_log(ctx, SV_LOG_WARN, "ode: %s", sv_last_error());
            sv_clear_error();
        }
        L->step = ode_fused_step_select(L);
        if (W > 8 && !L->step) { /* sv_ode_solve runs more than 8 lanes only with a fused step */
            lanes_free(ctx, L);
            return sv_error(SV_ERR_INTERNAL, "ode: %d lanes without a fused step", W);
        }
    }
    for (int w = 0; w < W; w++) {
        L->traj[w] = -1;
        L->h[w] = 1.0;
        L->t[w] = S->E->t0;
        L->tcap[w] = INFINITY;
    }
    volatile double emin = 1e-4; /* computed at run time, as control always did */
    L->lerr_floor = log(emin);
    return SV_OK;
}

static void finish(shared *S, ode_lanes *L, int w, sv_ode_traj_status status)
{
    long tr = L->traj[w];
    L->st[w].t_reached = L->t[w];
    if (S->E->status) S->E->status[tr] = status;
    if (S->E->stats) S->E->stats[tr] = L->st[w];
    L->active[w] = 0;
    L->traj[w] = -1;
    atomic_fetch_add(&S->done, 1);
}

static double *out_row(shared *S, long tr, int s)
{
    return S->E->out + ((size_t)tr * S->E->nsave + s) * S->P->n;
}

/* Give idle lane w the next trajectory; returns 0 when none is left. */
static int refill(shared *S, ode_lanes *L, int w)
{
    const sv_ode_ensemble *E = S->E;
    const sv_ode_options *o = S->o;
    int n = L->n, np = L->np, W = L->W;
    for (;;) {
        if (atomic_load(&S->stop)) return 0;
        long tr = atomic_fetch_add(&S->next, 1);
        if (tr >= E->ntraj) return 0;
        const double *y0 = E->y0 + (E->y0_shared ? 0 : (size_t)tr * n);
        const double *p = np ? E->params + (E->params_shared ? 0 : (size_t)tr * np) : NULL;
        L->traj[w] = tr;
        L->active[w] = 1;
        memset(&L->st[w], 0, sizeof L->st[w]);
        L->t[w] = E->t0;
        L->lerrold[w] = log(1e-4);
        L->lerrolder[w] = log(1e-4);
        L->have_f0[w] = 0;
        L->need_jac[w] = 1;
        L->need_h0[w] = o->fixed_step <= 0 && o->first_step <= 0;
        L->hprop[w] = o->fixed_step > 0 ? o->fixed_step : o->first_step;
        L->nonfinite[w] = 0;
        L->stop_idx[w] = 0;
        while (L->stop_idx[w] < o->ntstops && o->tstops[L->stop_idx[w]] <= E->t0) L->stop_idx[w]++;
        int finite = 1;
        for (int i = 0; i < n; i++) {
            L->y[(size_t)i * W + w] = y0[i];
            finite &= isfinite(y0[i]) != 0;
        }
        for (int k = 0; k < np; k++) L->p[(size_t)k * W + w] = p[k];
        int s = 0;
        while (s < E->nsave && E->tsave[s] <= E->t0) {
            memcpy(out_row(S, tr, s), y0, sizeof(double) * n);
            s++;
        }
        L->save[w] = s;
        if (!finite) {
            finish(S, L, w, SV_ODE_NONFINITE);
            continue;
        }
        if (s >= E->nsave) {
            finish(S, L, w, SV_ODE_SUCCESS);
            continue;
        }
        return 1;
    }
}

static double rms_scaled(const ode_lanes *L, int w, const double *v, const double *y, double mul)
{
    const int W = L->W, n = L->n;
    double acc = 0;
    for (int i = 0; i < n; i++) {
        size_t q = (size_t)i * W + w;
        double sk = L->atolv[i] + fabs(y[q]) * L->o->rtol;
        double r = L->wts[i] * v[q] * mul / sk;
        acc += r * r;
    }
    return sqrt(acc / n);
}

/* f0 for lanes that lack it; Hairer–Wanner first step for new lanes. */
static void prepare(shared *S, ode_lanes *L)
{
    const int W = L->W, n = L->n;
    unsigned char m[ODE_WMAX];
    int any = 0;
    for (int w = 0; w < W; w++) {
        m[w] = L->active[w] && !L->have_f0[w];
        any |= m[w];
        L->fail[w] = 0;
    }
    if (!any) return;
    ode_eval_f(S->P, W, m, L->t, L->y, L->p, L->f0, L->fail, L->scratch);
    for (int w = 0; w < W; w++) {
        if (!m[w]) continue;
        L->st[w].nf++;
        L->have_f0[w] = 1;
        if (L->fail[w]) {
            finish(S, L, w, SV_ODE_F_FAILED);
            continue;
        }
        for (int i = 0; i < n; i++)
            if (!isfinite(L->f0[(size_t)i * W + w])) {
                finish(S, L, w, SV_ODE_NONFINITE);
                break;
            }
    }
    /* Hairer–Wanner initial step (as OrdinaryDiffEq's initdt, order 5) */
    unsigned char hm[ODE_WMAX];
    double h0[ODE_WMAX], d1[ODE_WMAX], dtmax[ODE_WMAX];
    any = 0;
    for (int w = 0; w < W; w++) {
        hm[w] = L->active[w] && L->need_h0[w];
        if (!hm[w]) continue;
        any = 1;
        dtmax[w] = L->tend - L->t[w];
        if (S->o->max_step > 0) dtmax[w] = fmin(dtmax[w], S->o->max_step);
        double d0 = rms_scaled(L, w, L->y, L->y, 1.0);
        d1[w] = rms_scaled(L, w, L->f0, L->y, 1.0);
        h0[w] = (d0 < 1e-5 || d1[w] < 1e-5) ? 1e-6 : 0.01 * d0 / d1[w];
        h0[w] = fmin(h0[w], dtmax[w]);
        for (int i = 0; i < n; i++) {
            size_t q = (size_t)i * W + w;
            L->U[q] = L->y[q] + h0[w] * L->f0[q];
        }
        L->tstage[w] = L->t[w] + h0[w];
    }
    if (!any) return;
    ode_eval_f(S->P, W, hm, L->tstage, L->U, L->p, L->fv, L->fail, L->scratch);
    for (int w = 0; w < W; w++) {
        if (!hm[w]) continue;
        L->st[w].nf++;
        L->need_h0[w] = 0;
        if (L->fail[w]) {
            finish(S, L, w, SV_ODE_F_FAILED);
            continue;
        }
        int same = 1;
        for (int i = 0; i < n; i++) {
            size_t q = (size_t)i * W + w;
            L->err[q] = L->fv[q] - L->f0[q];
            same &= L->err[q] == 0;
        }
        double h;
        if (same) {
            h = 100 * h0[w];
        } else {
            double d2 = rms_scaled(L, w, L->err, L->y, 1.0) / h0[w];
            double m2 = fmax(d1[w], d2);
            double h1 = m2 <= 1e-15 ? fmax(1e-6, 1e-3 * h0[w]) : pow(0.01 / m2, 1.0 / 5.0);
            h = fmin(100 * h0[w], h1);
        }
        h = fmin(h, dtmax[w]);
        if (!(h > 0) || !isfinite(h)) h = 1e-6;
        L->hprop[w] = h;
    }
}

/* Clip each lane's step to the end and to the next tstop. */
static void set_steps(shared *S, ode_lanes *L)
{
    const sv_ode_options *o = S->o;
    for (int w = 0; w < L->W; w++) {
        if (!L->active[w]) continue;
        double t = L->t[w], h = L->hprop[w];
        if (o->max_step > 0) h = fmin(h, o->max_step);
        L->hits[w] = 0;
        L->tcap[w] = INFINITY;
        if (L->stop_idx[w] < o->ntstops) {
            double ts = o->tstops[L->stop_idx[w]];
            if (ts < L->tend && t + h >= ts) {
                h = ts - t;
                L->hits[w] = 2;
                L->tcap[w] = nextafter(ts, -INFINITY);
            }
        }
        if (L->hits[w] == 0 && t + h >= L->tend) {
            h = L->tend - t;
            L->hits[w] = 1;
        }
        L->h[w] = h;
    }
}

static void control(shared *S, ode_lanes *L, const unsigned char *only)
{
    const sv_ode_options *o = S->o;
    const sv_ode_ensemble *E = S->E;
    const int W = L->W, n = L->n;
    const double qsteady = o->qsteady_max > 0 ? o->qsteady_max : (L->rodas ? 1.2 : 1.0);
    double row[4096 / sizeof(double)];
    double *buf = n <= (int)(sizeof row / sizeof row[0]) ? row : L->err; /* err is free after the attempt */
    for (int w = 0; w < W; w++) {
        if (!L->active[w] || (only && !only[w])) continue;
        sv_ode_stats *st = &L->st[w];
        if (L->fail[w]) {
            finish(S, L, w, SV_ODE_F_FAILED);
            continue;
        }
        double Ee = L->eest[w], h = L->h[w];
        if (!ode_ctrl_accept(o, Ee)) {
            st->rejected++;
            if (!isfinite(Ee)) {
                L->nonfinite[w]++;
                L->hprop[w] = h * o->qmin;
            } else {
                L->nonfinite[w] = 0;
                L->hprop[w] = ode_ctrl_rejected_h(o, h, Ee);
            }
            if (o->fixed_step > 0 || L->nonfinite[w] >= 30) {
                finish(S, L, w, SV_ODE_NONFINITE);
                continue;
            }
        } else {
            L->nonfinite[w] = 0;
            double q = ode_ctrl_accepted_q(o, qsteady, L->lerr_floor, Ee, &L->lerrold[w], &L->lerrolder[w]);
            double t = L->t[w];
            double tn = L->hits[w] == 1 ? L->tend : L->hits[w] == 2 ? o->tstops[L->stop_idx[w]] : t + h;
            long tr = L->traj[w];
            while (L->save[w] < E->nsave && E->tsave[L->save[w]] <= tn) {
                int s = L->save[w]++;
                double *dst = out_row(S, tr, s);
                if (E->tsave[s] == tn) {
                    for (int i = 0; i < n; i++) dst[i] = L->ynew[(size_t)i * W + w];
                } else {
                    double th = (E->tsave[s] - t) / h;
                    if (L->rodas) ode_rodas5p_interp(L, w, th, buf);
                    else ode_tsit5_interp(L, w, th, buf);
                    memcpy(dst, buf, sizeof(double) * n);
                }
            }
            /* Tsit5's last stage is f(t + h, y_new): the next first stage (FSAL),
             * except after a tstop where f may jump. */
            if (!L->rodas && L->hits[w] != 2) {
                const double *k7 = L->k + (size_t)6 * n * W;
                for (int i = 0; i < n; i++) L->f0[(size_t)i * W + w] = k7[(size_t)i * W + w];
                L->have_f0[w] = 1;
            } else {
                L->have_f0[w] = 0;
            }
            for (int i = 0; i < n; i++) L->y[(size_t)i * W + w] = L->ynew[(size_t)i * W + w];
            L->t[w] = tn;
            if (L->hits[w] == 2) L->stop_idx[w]++;
            L->need_jac[w] = 1;
            st->accepted++;
            L->hprop[w] = o->fixed_step > 0 ? o->fixed_step : h / q;
            if (L->hits[w] == 1 || tn >= L->tend) {
                finish(S, L, w, SV_ODE_SUCCESS);
                continue;
            }
        }
        int end = ode_ctrl_limit(o, st, L->t[w], L->hprop[w], L->nonfinite[w]);
        if (end >= 0) finish(S, L, w, (sv_ode_traj_status)end);
    }
}

/* One step of the general phases for every active lane. */
static void step(shared *S, ode_lanes *L)
{
    prepare(S, L);
    int nact = 0;
    for (int w = 0; w < L->W; w++) nact += L->active[w];
    if (!nact) return;
    set_steps(S, L);
    if (L->rodas) ode_rodas5p_attempt(L);
    else ode_tsit5_attempt(L);
    control(S, L, NULL);
}

static void worker(shared *S, int W, int tid)
{
    ode_lanes L;
    sv_status st = lanes_init(S->ctx, S, &L, W);
    if (st != SV_OK) {
#pragma omp critical(sv_ode_err)
        {
            if (S->err == SV_OK) {
                S->err = st;
                snprintf(S->msg, sizeof S->msg, "%s", sv_last_error());
            }
        }
        atomic_store(&S->stop, 1);
        return;
    }
    double last = sv_time_now();
    unsigned iter = 0;
    for (;;) {
        int nact = 0;
        for (int w = 0; w < W; w++) {
            if (!L.active[w] && !refill(S, &L, w)) continue;
            nact++;
        }
        if (!nact || atomic_load(&S->stop)) break;
        if (L.step) L.step(S, &L);
        else step(S, &L);
        if (tid == 0 && (++iter & 255) == 0 && sv_time_now() - last > 0.1) {
            last = sv_time_now();
            double frac = (double)atomic_load(&S->done) / S->E->ntraj;
            if (sv_progress(S->ctx, "ode", frac) != SV_OK) {
#pragma omp critical(sv_ode_err)
                {
                    if (S->err == SV_OK) {
                        S->err = SV_ERR_CANCELLED;
                        snprintf(S->msg, sizeof S->msg, "%s", sv_last_error());
                    }
                }
                atomic_store(&S->stop, 1);
            }
        }
    }
    lanes_free(S->ctx, &L);
}

static sv_status check_request(const sv_ode_problem *P, const sv_ode_options *o, const sv_ode_ensemble *E)
{
    const char *nm = P->d.name ? P->d.name : "problem";
    int n = P->n;
    if (o->method != SV_ODE_RODAS5P && o->method != SV_ODE_TSIT5)
        return sv_error(SV_ERR_ARG, "%s: method = %d: expected Rodas5P (0) or Tsit5 (1)", nm, (int)o->method);
    if (!(o->rtol >= 0) || !isfinite(o->rtol))
        return sv_error(SV_ERR_ARG, "%s: rtol = %g: expected a finite value >= 0", nm, o->rtol);
    if (o->fixed_step <= 0 && o->rtol > 0 && o->rtol < 4 * DBL_EPSILON)
        return sv_error(SV_ERR_ARG, "%s: rtol = %g is below what double precision can deliver (>= %g)", nm, o->rtol,
                        4 * DBL_EPSILON);
    if (o->atol_vec) {
        for (int i = 0; i < n; i++)
            if (!(o->atol_vec[i] >= 0) || !isfinite(o->atol_vec[i]))
                return sv_error(SV_ERR_ARG, "%s: atol_vec[%d] = %g: expected a finite value >= 0", nm, i,
                                o->atol_vec[i]);
    } else if (!(o->atol >= 0) || !isfinite(o->atol)) {
        return sv_error(SV_ERR_ARG, "%s: atol = %g: expected a finite value >= 0", nm, o->atol);
    }
    if (o->rtol == 0 && o->fixed_step <= 0) {
        int allzero = 1;
        for (int i = 0; i < n; i++) allzero &= (o->atol_vec ? o->atol_vec[i] : o->atol) == 0;
        if (allzero) return sv_error(SV_ERR_ARG, "%s: rtol = 0 and atol = 0: no error tolerance to control", nm);
    }
    if (o->weights)
        for (int i = 0; i < n; i++)
            if (!(o->weights[i] >= 0) || !isfinite(o->weights[i]))
                return sv_error(SV_ERR_ARG, "%s: weights[%d] = %g: expected a finite value >= 0", nm, i,
                                o->weights[i]);
    if (o->max_steps < 1) return sv_error(SV_ERR_ARG, "%s: max_steps = %ld: expected >= 1", nm, o->max_steps);
    if (!(o->first_step >= 0) || !(o->max_step >= 0) || !(o->fixed_step >= 0))
        return sv_error(SV_ERR_ARG, "%s: first_step, max_step and fixed_step must be >= 0 (got %g, %g, %g)", nm,
                        o->first_step, o->max_step, o->fixed_step);
    if (!(o->qmin > 0 && o->qmin <= 1) || !(o->qmax >= 1) || !(o->safety > 0 && o->safety <= 1) ||
        !(o->beta1 >= 0) || !(o->beta2 >= 0) || !isfinite(o->beta3))
        return sv_error(SV_ERR_ARG,
                        "%s: controller gains out of range (qmin %g in (0,1], qmax %g >= 1, safety %g in (0,1], "
                        "beta1 %g >= 0, beta2 %g >= 0)",
                        nm, o->qmin, o->qmax, o->safety, o->beta1, o->beta2);
    if (o->lu != SV_ODE_LU_DOUBLE && o->lu != SV_ODE_LU_SINGLE)
        return sv_error(SV_ERR_ARG, "%s: lu = %d: expected double (0) or single (1)", nm, (int)o->lu);
    if (!(o->lanes == 0 || o->lanes == 1 || o->lanes == 2 || o->lanes == 4 || o->lanes == 8 || o->lanes == 16))
        return sv_error(SV_ERR_ARG, "%s: lanes = %d: expected 0 (default), 1, 2, 4, 8 or 16", nm, o->lanes);
    if (o->ntstops < 0 || (o->ntstops > 0 && !o->tstops))
        return sv_error(SV_ERR_ARG, "%s: ntstops = %d with tstops %s", nm, o->ntstops, o->tstops ? "set" : "NULL");
    for (int i = 1; i < o->ntstops; i++)
        if (!(o->tstops[i] > o->tstops[i - 1]))
            return sv_error(SV_ERR_ARG, "%s: tstops must increase (tstops[%d] = %g after %g)", nm, i, o->tstops[i],
                            o->tstops[i - 1]);
    if (E->ntraj < 0) return sv_error(SV_ERR_ARG, "%s: ntraj = %d: expected >= 0", nm, E->ntraj);
    if (E->nsave < 1 || !E->tsave)
        return sv_error(SV_ERR_ARG, "%s: nsave = %d, tsave %s: need at least one save time", nm, E->nsave,
                        E->tsave ? "set" : "NULL");
    if (!isfinite(E->t0)) return sv_error(SV_ERR_ARG, "%s: t0 = %g: expected finite", nm, E->t0);
    for (int s = 0; s < E->nsave; s++) {
        if (!isfinite(E->tsave[s]) || E->tsave[s] < E->t0)
            return sv_error(SV_ERR_ARG, "%s: tsave[%d] = %g: expected finite and >= t0 = %g", nm, s, E->tsave[s],
                            E->t0);
        if (s > 0 && !(E->tsave[s] > E->tsave[s - 1]))
            return sv_error(SV_ERR_ARG, "%s: tsave must increase (tsave[%d] = %g after %g)", nm, s, E->tsave[s],
                            E->tsave[s - 1]);
    }
    if (E->ntraj > 0 && !E->y0) return sv_error(SV_ERR_ARG, "%s: y0 is NULL", nm);
    if (E->ntraj > 0 && P->np > 0 && !E->params)
        return sv_error(SV_ERR_ARG, "%s: params is NULL but the problem has %d parameters", nm, P->np);
    if (E->ntraj > 0 && !E->out) return sv_error(SV_ERR_ARG, "%s: out is NULL", nm);
    return SV_OK;
}

sv_status sv_ode_solve(sv_ctx *ctx, const sv_ode_problem *P, const sv_ode_options *o, sv_ode_ensemble *E)
{
    if (!P || !o || !E)
        return sv_error(SV_ERR_ARG, "sv_ode_solve: %s is NULL", !P ? "prob" : !o ? "opt" : "ens");
    sv_status st = check_request(P, o, E);
    if (st != SV_OK) return st;
    if (o->method == SV_ODE_RODAS5P && P->d.jac_source == SV_ODE_JAC_ANALYTIC && !P->d.jac && !P->d.jac_batch)
        return sv_error(SV_ERR_ARG, "%s: Rodas5P needs a Jacobian source", P->d.name ? P->d.name : "problem");
    int n = P->n;
    if (E->status)
        for (int t = 0; t < E->ntraj; t++) E->status[t] = SV_ODE_NOT_RUN;
    if (E->stats) memset(E->stats, 0, sizeof(sv_ode_stats) * (size_t)E->ntraj);
    if (E->ntraj == 0) return SV_OK;
    /* default lanes: one vector register of doubles (8 with AVX-512, else
     * 4), two for the fused step of tiny systems (its stages are chains of
     * dependent operations that a second register's lanes overlap); more
     * than 8 only there */
#if defined(__AVX512F__)
    int W = o->lanes ? o->lanes : 8;
#else
    int W = o->lanes ? o->lanes : 4;
#endif
    int fused_w = ode_fused_lanes(ctx, P, o);
    if (!o->lanes && fused_w) W = fused_w;
    if (W > 8 && !fused_w) W = 8;
    int nthreads = sv_ctx_threads(ctx);
    if (nthreads <= 0) nthreads = omp_get_max_threads();
    /* Fewer trajectories than lanes × threads: narrower lanes (results do
     * not depend on W, and idle lanes would only cost time). */
    while (W > 1 && (long)(W / 2) * nthreads >= E->ntraj) W /= 2;
    long maxuse = (E->ntraj + W - 1) / W;
    if (nthreads > maxuse) nthreads = (int)maxuse;
    if (nthreads < 1) nthreads = 1;
    /* memory: per thread the lane arrays plus the LU buffers */
    size_t per = lanes_doubles(P, W) * sizeof(double);
    if (o->method == SV_ODE_RODAS5P) per += (size_t)n * n * W * (sizeof(double) + sizeof(float)) + 8 * (size_t)n * W * 8;
    st = sv_mem_check(ctx, per * (size_t)nthreads + 2 * (size_t)n * sizeof(double), "ode ensemble workspace");
    if (st != SV_OK) return st;

    shared S;
    memset(&S, 0, sizeof S);
    S.P = P;
    S.o = o;
    S.E = E;
    S.ctx = ctx;
    S.atolv = sv_alloc(ctx, sizeof(double) * 2 * (size_t)n, "ode tolerances");
    if (!S.atolv) return sv_last_status();
    S.wts = S.atolv + n;
    for (int i = 0; i < n; i++) {
        S.atolv[i] = o->atol_vec ? o->atol_vec[i] : o->atol;
        S.wts[i] = o->weights ? o->weights[i] : 1.0;
    }
    st = sv_progress(ctx, "ode", 0.0);
    if (st != SV_OK) {
        sv_free(ctx, S.atolv);
        return st;
    }
    atomic_init(&S.next, 0);
    atomic_init(&S.done, 0);
    atomic_init(&S.stop, 0);
    sv_threads_saved prev = sv_threads_apply(ctx);
#pragma omp parallel num_threads(nthreads)
    worker(&S, W, omp_get_thread_num());
    sv_threads_restore(prev);
    sv_free(ctx, S.atolv);
    if (S.err != SV_OK) return sv_error(S.err, "%s", S.msg);
    return sv_progress(ctx, "ode", 1.0);
}

/* ---- the phases for a fused step (driver.h) ------------------------------ */
void ode_drv_prepare(ode_shared *S, ode_lanes *L) { prepare(S, L); }
void ode_drv_set_steps(ode_shared *S, ode_lanes *L) { set_steps(S, L); }
void ode_drv_control(ode_shared *S, ode_lanes *L, const unsigned char *only) { control(S, L, only); }
void ode_drv_finish(ode_shared *S, ode_lanes *L, int w, sv_ode_traj_status status) { finish(S, L, w, status); }
