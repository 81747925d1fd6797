/* Direct binary search over a spec's design region (docs/design.md,
 * "Method"): passes over the mirror classes in a random order drawn from
 * the spec's seed, each class flipped as a trial and kept when the map gets
 * better: fewer constraint violations, or as many and a lower cost. The
 * search is monotone, so the current map is always the best so far; a
 * pass that keeps nothing ends it (a local optimum: no single flip
 * improves), as does a cost of 0 with no violation (the spec met). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "design_internal.h"

struct sv_design_result {
    unsigned char *map;       /* nx·ny */
    double complex *s;        /* nf × p × p */
    int nf, p;
    double *history;          /* 2 per entry: trials so far, cost */
    int nhist, caphist;
    sv_design_report report;
};

typedef struct search {
    sv_ctx *ctx;
    const sv_design_spec *spec;
    sv_design_eval *ev;
    sv_design_result *res;
    int *classes, nclass;     /* each mirror class's lowest cell */
    unsigned char *trial;     /* nx·ny */
    double complex *s;        /* a trial's S */
    double cost;
    int viol;
    double t0, next_report;
    unsigned long long rng;
    sv_design_watch_fn watch;
    void *watch_user;
} search;

static void show(const search *q)
{
    if (q->watch) q->watch(sv_design_eval_map(q->ev), q->cost, q->viol, q->watch_user);
}

/* Strictly better by more than rounding: an update's S carries ~1e-12 of
 * it, and a flip that changes nothing must not be kept on noise. */
static int better(int v, double c, int v0, double c0)
{
    return v < v0 || (v == v0 && c < c0 - 1e-9 * fmax(1.0, c0));
}

static sv_status cost_of(const search *q, const double complex *s, double *cost)
{
    int nm, nf;
    const sv_design_mask *m = sv_design_spec_masks(q->spec, &nm);
    const double *f = sv_design_spec_frequencies(q->spec, &nf);
    return sv_design_cost(nm, m, nf, f, sv_design_eval_ports(q->ev), s, cost);
}

static sv_status add_history(search *q)
{
    sv_design_result *r = q->res;
    if (r->nhist == r->caphist) {
        int cap = r->caphist ? 2 * r->caphist : 256;
        double *h = realloc(r->history, sizeof(double) * 2 * cap);
        if (!h) return sv_error(SV_ERR_NOMEM, "design: cost history: out of memory");
        r->history = h;
        r->caphist = cap;
    }
    r->history[2 * r->nhist] = (double)r->report.tried;
    r->history[2 * r->nhist + 1] = q->cost;
    r->nhist++;
    return SV_OK;
}

static sv_status make_classes(search *q)
{
    const sv_design_spec *s = q->spec;
    size_t cells = (size_t)s->nx * s->ny;
    if (!(q->classes = malloc(sizeof(int) * cells)) || !(q->trial = malloc(cells)))
        return sv_error(SV_ERR_NOMEM, "design: out of memory");
    for (int c = 0; c < (int)cells; c++) {
        if (!s->region[c]) continue;
        int p[4], n = sv_design_partners(s, c, p), lowest = 1;
        for (int t = 1; t < n; t++) lowest &= p[t] > c;
        if (lowest) q->classes[q->nclass++] = c;
    }
    return SV_OK;
}

/* Progress: the passes' fraction, with what the search has done. */
static sv_status report(search *q, int pass, int k, int force)
{
    double now = sv_time_now();
    if (!force && now < q->next_report) return sv_progress_cancelled(q->ctx) ? SV_ERR_CANCELLED : SV_OK;
    q->next_report = now + 0.1;
    const sv_design_report *r = &q->res->report;
    char phase[160];
    snprintf(phase, sizeof phase, "design pass %d/%d: tried %ld, accepted %ld, cost %.6g%s", pass + 1, q->spec->passes,
             r->tried, r->accepted, q->cost, q->viol ? " (constraints violated)" : "");
    double frac = (pass + (double)k / (q->nclass ? q->nclass : 1)) / q->spec->passes;
    return sv_progress(q->ctx, phase, frac > 1 ? 1 : frac);
}

/* One trial of class c: kept if better. */
static sv_status try_class(search *q, int c)
{
    const sv_design_spec *s = q->spec;
    int pix[4], n = sv_design_partners(s, c, pix);
    memcpy(q->trial, sv_design_eval_map(q->ev), (size_t)s->nx * s->ny);
    for (int t = 0; t < n; t++) q->trial[pix[t]] ^= 1;
    int v = sv_design_spec_violations(s, q->trial);
    if (v < 0) return sv_error(SV_ERR_NOMEM, "design: constraints: out of memory");
    if (v > q->viol) return SV_OK; /* worse whatever its cost: not evaluated */
    double cost;
    sv_status st = sv_design_eval_trial(q->ev, n, pix, q->s);
    if (!st) st = cost_of(q, q->s, &cost);
    if (st) return st;
    q->res->report.tried++;
    if (!better(v, cost, q->viol, q->cost)) return SV_OK;
    if ((st = sv_design_eval_accept(q->ev, n, pix))) return st;
    q->viol = v;
    q->cost = cost;
    q->res->report.accepted++;
    if (q->res->report.accepted % s->refresh_every == 0) {
        /* rebuild from scratch, and take the cost from the fresh S */
        double drift;
        if ((st = sv_design_eval_refresh(q->ev, &drift)) || (st = sv_design_eval_s(q->ev, q->s)) ||
            (st = cost_of(q, q->s, &q->cost)))
            return st;
        q->res->report.refreshes++;
        q->res->report.max_drift = fmax(q->res->report.max_drift, drift);
    }
    show(q);
    return add_history(q);
}

/* A random order of the classes (Fisher–Yates on the spec's generator). */
static void shuffle(search *q)
{
    for (int k = q->nclass - 1; k > 0; k--) {
        int r = (int)(sv_design_rand(&q->rng) % (unsigned long long)(k + 1)), t = q->classes[k];
        q->classes[k] = q->classes[r];
        q->classes[r] = t;
    }
}

static sv_status run_passes(search *q)
{
    const sv_design_spec *s = q->spec;
    sv_design_report *r = &q->res->report;
    for (int pass = 0; pass < s->passes; pass++) {
        shuffle(q);
        long kept = r->accepted;
        for (int k = 0; k < q->nclass; k++) {
            if (q->viol == 0 && q->cost == 0) return SV_OK; /* the spec is met */
            if (s->budget_s > 0 && sv_time_now() - q->t0 > s->budget_s) {
                r->stopped = 1;
                return SV_OK;
            }
            sv_status st = report(q, pass, k, 0);
            if (st == SV_ERR_CANCELLED) {
                r->stopped = 2;
                sv_clear_error();
                return SV_OK;
            }
            if (st || (st = try_class(q, q->classes[k]))) return st;
        }
        r->passes++;
        if (report(q, pass, q->nclass, 1) == SV_ERR_CANCELLED) {
            r->stopped = 2;
            sv_clear_error();
            return SV_OK;
        }
        if (r->accepted == kept) return SV_OK; /* a local optimum */
    }
    return SV_OK;
}

static sv_status finish(search *q)
{
    sv_design_result *res = q->res;
    const sv_design_spec *s = q->spec;
    size_t cells = (size_t)s->nx * s->ny;
    res->nf = s->nf;
    res->p = sv_design_eval_ports(q->ev);
    if (!(res->map = malloc(cells)) || !(res->s = malloc(sizeof(double complex) * res->nf * res->p * res->p)))
        return sv_error(SV_ERR_NOMEM, "design: result: out of memory");
    memcpy(res->map, sv_design_eval_map(q->ev), cells);
    sv_status st = sv_design_eval_s(q->ev, res->s);
    if (!st) st = cost_of(q, res->s, &res->report.cost);
    res->report.violations = q->viol;
    res->report.rebuilds = sv_design_eval_rebuilds(q->ev);
    return st;
}

static sv_status search_run(search *q)
{
    const sv_design_spec *s = q->spec;
    sv_design_report *r = &q->res->report;
    /* the evaluator's estimate, refused before anything large is made */
    size_t need;
    sv_status st = sv_design_eval_bytes(s->full, s->region, s->nf, &need);
    if (!st && q->ctx) st = sv_mem_check(q->ctx, need, "design: the evaluator (two swept matrices per design frequency)");
    if (!st) st = sv_design_eval_create_at(q->ctx, s->full, s->region, s->nf, s->freq, s->start, &q->ev);
    if (!st) st = make_classes(q);
    if (!st && !(q->s = malloc(sizeof(double complex) * s->nf * sv_design_eval_ports(q->ev) * sv_design_eval_ports(q->ev))))
        st = sv_error(SV_ERR_NOMEM, "design: out of memory");
    if (!st) st = sv_design_eval_s(q->ev, q->s);
    if (!st) st = cost_of(q, q->s, &q->cost);
    if (st) return st;
    q->viol = sv_design_spec_violations(s, s->start);
    r->refreshes = 1;
    r->start_cost = q->cost;
    r->unknowns = sv_design_eval_unknowns(q->ev);
    r->design_unknowns = sv_design_eval_design_unknowns(q->ev);
    r->nfreq = s->nf;
    r->seconds_setup = sv_time_now() - q->t0;
    q->rng = s->seed;
    show(q);
    if ((st = add_history(q)) || (st = run_passes(q))) return st;
    return finish(q);
}

sv_status sv_design_run(sv_ctx *ctx, const sv_design_spec *spec, sv_design_result **out)
{
    return sv_design_run_watched(ctx, spec, NULL, NULL, out);
}

sv_status sv_design_run_watched(sv_ctx *ctx, const sv_design_spec *spec, sv_design_watch_fn watch, void *user,
                                sv_design_result **out)
{
    if (!spec || !out) return sv_error(SV_ERR_ARG, "sv_design_run: NULL argument");
    *out = NULL;
    search q = {.ctx = ctx, .spec = spec, .t0 = sv_time_now(), .watch = watch, .watch_user = user};
    if (!(q.res = calloc(1, sizeof *q.res))) return sv_error(SV_ERR_NOMEM, "design: out of memory");
    int threads = ctx ? sv_ctx_threads(ctx) : 0;
    if (ctx && spec->threads > 0) sv_ctx_set_threads(ctx, spec->threads);
    sv_status st = search_run(&q);
    if (ctx && spec->threads > 0) sv_ctx_set_threads(ctx, threads);
    q.res->report.seconds = sv_time_now() - q.t0;
    sv_design_eval_destroy(q.ev);
    free(q.classes);
    free(q.trial);
    free(q.s);
    if (st) {
        sv_design_result_destroy(q.res);
        return st;
    }
    *out = q.res;
    return SV_OK;
}

void sv_design_result_destroy(sv_design_result *r)
{
    if (!r) return;
    free(r->map);
    free(r->s);
    free(r->history);
    free(r);
}

const unsigned char *sv_design_result_map(const sv_design_result *r) { return r ? r->map : NULL; }
const double complex *sv_design_result_s(const sv_design_result *r, int *nf, int *p)
{
    if (nf) *nf = r ? r->nf : 0;
    if (p) *p = r ? r->p : 0;
    return r ? r->s : NULL;
}
const double *sv_design_result_history(const sv_design_result *r, int *n)
{
    if (n) *n = r ? r->nhist : 0;
    return r ? r->history : NULL;
}
void sv_design_result_report(const sv_design_result *r, sv_design_report *out)
{
    if (r && out) *out = r->report;
}
