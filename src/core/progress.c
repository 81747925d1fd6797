/* Progress reports and cancellation: the callback sees one rising fraction
 * of the operation under way, whatever steps it is made of (spans), and
 * one request to stop ends every step (the flag that loops' threads read). */
#include <omp.h>

#include "ctx_internal.h"

/* How often a loop's first thread reports, seconds: often enough for a
 * prompt cancel, rarely enough to cost nothing. */
#define SV_PROGRESS_LOOP_INTERVAL 0.005

sv_status sv_progress(sv_ctx *ctx, const char *phase, double fraction)
{
    if (!ctx || !ctx->progress_fn) return SV_OK;
    if (ctx->span_depth > 0 && atomic_load(&ctx->cancelled)) return sv_error(SV_ERR_CANCELLED, "%s: cancelled by the progress callback", phase);
    double f = fraction < 0 ? 0 : fraction > 1 ? 1 : fraction;
    if (ctx->span_depth > 0) {
        f = ctx->span_lo + f * (ctx->span_hi - ctx->span_lo);
        if (f < ctx->reported) f = ctx->reported; /* the caller's bar only rises */
        ctx->reported = f;
    }
    if (ctx->progress_fn(ctx->progress_user, phase, f) == 0) return SV_OK;
    if (ctx->span_depth > 0) atomic_store(&ctx->cancelled, 1);
    return sv_error(SV_ERR_CANCELLED, "%s: cancelled by the progress callback", phase);
}

sv_progress_span sv_progress_span_begin(sv_ctx *ctx, double lo, double hi)
{
    if (!ctx) return (sv_progress_span){0, 1, 0};
    sv_progress_span enclosing = {ctx->span_lo, ctx->span_hi, ctx->span_depth};
    if (ctx->span_depth == 0) { /* a new operation: its own report */
        enclosing.lo = 0;
        enclosing.hi = 1;
        ctx->reported = 0;
        atomic_store(&ctx->cancelled, 0);
    }
    double a = lo < 0 ? 0 : lo > 1 ? 1 : lo, b = hi < a ? a : hi > 1 ? 1 : hi;
    ctx->span_lo = enclosing.lo + a * (enclosing.hi - enclosing.lo);
    ctx->span_hi = enclosing.lo + b * (enclosing.hi - enclosing.lo);
    ctx->span_depth++;
    return enclosing;
}

void sv_progress_span_end(sv_ctx *ctx, sv_progress_span enclosing)
{
    if (!ctx) return;
    ctx->span_lo = enclosing.lo;
    ctx->span_hi = enclosing.hi;
    ctx->span_depth = enclosing.depth;
}

int sv_progress_cancelled(const sv_ctx *ctx) { return ctx ? atomic_load(&ctx->cancelled) : 0; }

sv_progress_loop sv_progress_loop_begin(sv_ctx *ctx, const char *phase, double total)
{
    return (sv_progress_loop){ctx, phase, total > 0 ? total : 1, sv_time_now() + SV_PROGRESS_LOOP_INTERVAL};
}

int sv_progress_loop_at(sv_progress_loop *loop, double done)
{
    sv_ctx *ctx = loop->ctx;
    if (!ctx || !ctx->progress_fn) return 0;
    if (omp_get_thread_num() != 0) return atomic_load(&ctx->cancelled);
    double now = sv_time_now();
    if (now < loop->next_report) return atomic_load(&ctx->cancelled);
    loop->next_report = now + SV_PROGRESS_LOOP_INTERVAL;
    if (sv_progress(ctx, loop->phase, done / loop->total) == SV_OK) return 0;
    atomic_store(&ctx->cancelled, 1); /* the team's other threads stop too, span or not */
    return 1;
}

sv_status sv_progress_loop_end(sv_progress_loop *loop)
{
    sv_ctx *ctx = loop->ctx;
    if (!sv_progress_cancelled(ctx)) return sv_progress(ctx, loop->phase, 1.0);
    if (ctx->span_depth == 0) atomic_store(&ctx->cancelled, 0); /* outside spans each report asks anew */
    return sv_error(SV_ERR_CANCELLED, "%s: cancelled by the progress callback", loop->phase);
}
