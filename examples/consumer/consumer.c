/* A minimal program built against an installed Solvent (see
 * tests/install/test_install.sh): it uses the budgeted allocator and checks
 * that a request past the budget is refused with a clear message. */
#include <solvent/solvent.h>
#include <stdio.h>

int main(void)
{
    sv_ctx *ctx;
    if (sv_ctx_create(&ctx) != SV_OK) return 1;
    sv_ctx_set_memory_limit(ctx, 1 << 20);
    void *ok = sv_alloc(ctx, 1000, "small block");
    void *refused = sv_alloc(ctx, 2 << 20, "large block");
    int good = ok != NULL && refused == NULL && sv_last_status() == SV_ERR_BUDGET;
    printf("solvent %s: budget refusal says: %s\n", sv_version_string(), sv_last_error());
    sv_free(ctx, ok);
    sv_ctx_destroy(ctx);
    return good ? 0 : 1;
}
