/* Budgeted, counted, 64-byte aligned allocation.
 *
 * Each block carries a 64-byte header with its size so sv_free can return
 * the bytes to the context's running total without the caller passing the
 * size back. Counting uses atomics: OpenMP loops may allocate through one
 * context from several threads.
 *
 * Blocks of SV_MAP_THRESHOLD or more (the planar model's terms, a
 * factorisation: hundreds of MiB) are mapped directly: their pages come
 * zeroed from the kernel when first touched, so sv_calloc writes nothing
 * (0.3 s less per 528 MiB, the square's L, and the cost falls in the loops
 * that fill them, which report progress), and they go back to the system
 * when freed. Huge pages (MADV_HUGEPAGE) would free them 20× faster but
 * cost the kernel's compaction on first touch (+3 % on the square's sweep,
 * up to 2 s per 528 MiB after other processes fragmented memory): not
 * asked for. */
#define _DEFAULT_SOURCE /* MAP_ANONYMOUS */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "ctx_internal.h"

#define SV_ALIGN 64
#define SV_MAP_THRESHOLD ((size_t)32 << 20)

typedef struct block_header {
    size_t bytes;  /* counted in the context */
    size_t mapped; /* bytes mapped for it (0: from aligned_alloc) */
    unsigned char pad[SV_ALIGN - 2 * sizeof(size_t)];
} block_header;

/* A large block mapped directly (NULL when the system refuses). */
static block_header *map_block(size_t total)
{
    size_t page = (size_t)sysconf(_SC_PAGESIZE), len = (total + page - 1) / page * page;
    void *p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED) return NULL;
    block_header *h = p;
    h->mapped = len;
    return h;
}

static block_header *heap_block(size_t total)
{
    /* aligned_alloc needs a size that is a multiple of the alignment. */
    size_t rounded = (total + SV_ALIGN - 1) / SV_ALIGN * SV_ALIGN;
    block_header *h = aligned_alloc(SV_ALIGN, rounded);
    if (h) h->mapped = 0;
    return h;
}

sv_status sv_size_mul(size_t a, size_t b, size_t *out)
{
    if (a != 0 && b > SIZE_MAX / a)
        return sv_error(SV_ERR_ARG, "size overflow: %zu x %zu does not fit in size_t", a, b);
    *out = a * b;
    return SV_OK;
}

static double mib(size_t bytes) { return (double)bytes / (1024.0 * 1024.0); }

sv_status sv_mem_check(const sv_ctx *ctx, size_t bytes, const char *what)
{
    if (!ctx || ctx->limit == 0) return SV_OK;
    size_t cur = atomic_load(&ctx->current);
    if (cur > ctx->limit || bytes > ctx->limit - cur)
        return sv_error(SV_ERR_BUDGET,
                        "%s needs %.1f MiB but only %.1f MiB of the %.1f MiB memory limit are free",
                        what ? what : "allocation", mib(bytes),
                        mib(cur > ctx->limit ? 0 : ctx->limit - cur), mib(ctx->limit));
    return SV_OK;
}

/* Reserve bytes in the context's total, atomically against the limit. */
static int reserve(sv_ctx *ctx, size_t bytes)
{
    size_t cur = atomic_load(&ctx->current);
    for (;;) {
        if (ctx->limit && (cur > ctx->limit || bytes > ctx->limit - cur)) return 0;
        if (atomic_compare_exchange_weak(&ctx->current, &cur, cur + bytes)) break;
    }
    size_t now = cur + bytes;
    size_t peak = atomic_load(&ctx->peak);
    while (now > peak && !atomic_compare_exchange_weak(&ctx->peak, &peak, now)) {
    }
    return 1;
}

#ifdef SV_FAULT_INJECTION
/* Test builds only (SOLVENT_FAULT_INJECTION): the k-th allocation from the
 * moment sv_fault_inject(k) is called fails as if the system had no memory,
 * so that tests can walk every allocation of an operation (SQLite's way). */
static atomic_long fault_countdown; /* 0: no failure pending */
static atomic_long fault_calls;     /* allocations since the last sv_fault_inject */

void sv_fault_inject(long k);
long sv_fault_calls(void);
void sv_fault_inject(long k)
{
    atomic_store(&fault_calls, 0);
    atomic_store(&fault_countdown, k > 0 ? k : 0);
}
long sv_fault_calls(void) { return atomic_load(&fault_calls); }

static int fault_fires(void)
{
    atomic_fetch_add(&fault_calls, 1);
    long c = atomic_load(&fault_countdown);
    while (c > 0 && !atomic_compare_exchange_weak(&fault_countdown, &c, c - 1)) {
    }
    return c == 1;
}
#else
static int fault_fires(void) { return 0; }
#endif

void *sv_alloc(sv_ctx *ctx, size_t bytes, const char *what)
{
    if (fault_fires()) {
        sv_error(SV_ERR_NOMEM, "%s: the system could not provide %.1f MiB (injected failure)",
                 what ? what : "allocation", mib(bytes));
        return NULL;
    }
    if (bytes > SIZE_MAX - 2 * SV_ALIGN) {
        sv_error(SV_ERR_ARG, "%s: request of %zu bytes is too large", what ? what : "allocation", bytes);
        return NULL;
    }
    size_t total = sizeof(block_header) + bytes;
    if (ctx && !reserve(ctx, total)) {
        sv_mem_check(ctx, total, what);
        return NULL;
    }
    block_header *h = total >= SV_MAP_THRESHOLD ? map_block(total) : heap_block(total);
    if (!h) {
        if (ctx) atomic_fetch_sub(&ctx->current, total);
        sv_error(SV_ERR_NOMEM, "%s: the system could not provide %.1f MiB", what ? what : "allocation",
                 mib(bytes));
        return NULL;
    }
    h->bytes = total;
    return h + 1;
}

void *sv_calloc(sv_ctx *ctx, size_t count, size_t size, const char *what)
{
    size_t bytes;
    if (sv_size_mul(count, size, &bytes) != SV_OK) return NULL;
    void *p = sv_alloc(ctx, bytes, what);
    if (p && !((block_header *)p - 1)->mapped) memset(p, 0, bytes); /* mapped pages come zeroed */
    return p;
}

void sv_free(sv_ctx *ctx, void *p)
{
    if (!p) return;
    block_header *h = (block_header *)p - 1;
    if (ctx) atomic_fetch_sub(&ctx->current, h->bytes);
    if (h->mapped) munmap(h, h->mapped);
    else free(h);
}

void sv_free_each(sv_ctx *ctx, void *const *blocks, size_t n)
{
    for (size_t k = 0; k < n; k++) sv_free(ctx, blocks[k]);
}
