/* The context handle: budget settings, threads, callbacks. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

#include "ctx_internal.h"

sv_status sv_ctx_create(sv_ctx **out)
{
    if (!out) return sv_error(SV_ERR_ARG, "sv_ctx_create: out is NULL");
    sv_ctx *ctx = calloc(1, sizeof *ctx);
    if (!ctx) return sv_error(SV_ERR_NOMEM, "sv_ctx_create: cannot allocate the context");
    atomic_init(&ctx->current, 0);
    atomic_init(&ctx->peak, 0);
    *out = ctx;
    return SV_OK;
}

void sv_ctx_destroy(sv_ctx *ctx) { free(ctx); }

sv_status sv_ctx_set_memory_limit(sv_ctx *ctx, size_t bytes)
{
    if (!ctx) return sv_error(SV_ERR_ARG, "sv_ctx_set_memory_limit: ctx is NULL");
    ctx->limit = bytes;
    return SV_OK;
}

size_t sv_ctx_memory_limit(const sv_ctx *ctx) { return ctx ? ctx->limit : 0; }
size_t sv_ctx_memory_current(const sv_ctx *ctx) { return ctx ? atomic_load(&ctx->current) : 0; }
size_t sv_ctx_memory_peak(const sv_ctx *ctx) { return ctx ? atomic_load(&ctx->peak) : 0; }

void sv_ctx_reset_peak(sv_ctx *ctx)
{
    if (ctx) atomic_store(&ctx->peak, atomic_load(&ctx->current));
}

sv_status sv_ctx_set_threads(sv_ctx *ctx, int nthreads)
{
    if (!ctx) return sv_error(SV_ERR_ARG, "sv_ctx_set_threads: ctx is NULL");
    if (nthreads < 0)
        return sv_error(SV_ERR_ARG, "threads = %d: expected 0 (default) or a positive count", nthreads);
    ctx->nthreads = nthreads;
    return SV_OK;
}

int sv_ctx_threads(const sv_ctx *ctx) { return ctx ? ctx->nthreads : 0; }

void sv_ctx_set_log(sv_ctx *ctx, sv_log_fn fn, void *user)
{
    if (!ctx) return;
    ctx->log_fn = fn;
    ctx->log_user = user;
}

void sv_ctx_set_progress(sv_ctx *ctx, sv_progress_fn fn, void *user)
{
    if (!ctx) return;
    ctx->progress_fn = fn;
    ctx->progress_user = user;
}

void sv_log(const sv_ctx *ctx, sv_log_level level, const char *fmt, ...)
{
    if (!ctx || !ctx->log_fn) return;
    char buf[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    ctx->log_fn(ctx->log_user, level, buf);
}
