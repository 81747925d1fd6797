/* The assembly's work on the thread team (its tables, its columns, the side
 * walls' changes and the edge profile's) leaves no mark on its result: L,
 * Ψ and Ψ_im of the pixelated example (thick metal, strips one cell wide, a
 * lossy dielectric) are bit-identical with 1, 2, 3 and 4 threads; so are
 * the walls' update lists an accelerator's plan applies, and the matrices
 * of a second model assembled after the first with the tables they share
 * (as the calibration's standards do: the memo's values then come partly
 * from the first model's assembly). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "solvent/em_assembly.h"
#include "support_em.h"
#include "sv_test.h"

#define RUNS 4

/* A line one cell wide on the example's grid and stack-up: it shares the
 * example's wall tables and edge memo. */
static const char line_json[] =
    "{\"units\": \"mm\", \"substrate\": {\"thickness\": 0.508, \"eps_r\": 3.66, \"tan_delta\": 0.0037},"
    " \"metal\": {\"conductivity\": 5.8e7, \"thickness\": 0.035},"
    " \"grid\": {\"dx\": 0.25, \"dy\": 0.25, \"nx\": 12, \"ny\": 3},"
    " \"rectangles\": [{\"x\": [0, 3], \"y\": [0.25, 0.5]}],"
    " \"ports\": [{\"name\": \"a\", \"side\": \"left\", \"x\": 0, \"y\": [0.25, 0.5]},"
    "           {\"name\": \"b\", \"side\": \"right\", \"x\": 3, \"y\": [0.25, 0.5]}]}";

typedef struct run {
    sv_ctx *ctx;
    sv_dense_sym *t[2][3]; /* per model: L, Ψ, Ψ_im */
    sv_em_walls_updates u;
} run;

static sv_em_project *example(void)
{
    char path[4096];
    snprintf(path, sizeof path, "%s/examples/pixel2port.json", SV_SOURCE_DIR);
    sv_em_project *p = NULL;
    assert_int_equal(sv_em_project_read(NULL, path, &p), SV_OK);
    return p;
}

static void assemble(sv_ctx *ctx, const sv_em_model *m, sv_dense_sym *t[3])
{
    sv_status s = sv_em_assemble_with(ctx, m, 0, NULL, &t[0], &t[1], &t[2], NULL);
    if (s) fail_msg("assembly: %s", sv_last_error());
}

/* Fresh models (their edge memo empty), the example then the line sharing
 * the example's tables, and the example's wall lists. */
static void run_with(int threads, const sv_em_project *pa, const sv_em_project *pb, run *r)
{
    assert_int_equal(sv_ctx_create(&r->ctx), SV_OK);
    assert_int_equal(sv_ctx_set_threads(r->ctx, threads), SV_OK);
    sv_em_model *a = em_test_model(pa), *b = NULL, *c = em_test_model(pa);
    assert_int_equal(sv_em_model_create_sharing(NULL, pb, NULL, a, &b), SV_OK);
    assert_true(b->walls == a->walls && b->memo == a->memo);
    assert_true(sv_em_model_edge_profiled(a) && sv_em_model_edge_profiled(b));
    assert_true(pa->st.thick_metal && pb->st.thick_metal && pa->st.tan_delta > 0);
    assemble(r->ctx, a, r->t[0]);
    assemble(r->ctx, b, r->t[1]);
    assert_int_equal(sv_em_walls_record(r->ctx, c, 1, &r->u), SV_OK);
    sv_em_model_destroy(b);
    sv_em_model_destroy(a);
    sv_em_model_destroy(c);
}

static int same_sym(const sv_dense_sym *x, const sv_dense_sym *y, int n)
{
    size_t len = sv_dense_packed_size(n, sv_dense_sym_block(x)) * sizeof(double);
    return sv_dense_sym_block(x) == sv_dense_sym_block(y) && !memcmp(sv_dense_sym_cdata(x), sv_dense_sym_cdata(y), len);
}

static int same_lists(const sv_em_walls_updates *x, const sv_em_walls_updates *y)
{
    return x->nl == y->nl && x->np == y->np && !memcmp(x->l_r, y->l_r, x->nl * sizeof(int)) &&
           !memcmp(x->l_c, y->l_c, x->nl * sizeof(int)) && !memcmp(x->l_val, y->l_val, x->nl * sizeof(double)) &&
           !memcmp(x->p_r, y->p_r, x->np * sizeof(int)) && !memcmp(x->p_c, y->p_c, x->np * sizeof(int)) &&
           !memcmp(x->p_val, y->p_val, x->np * sizeof(double)) &&
           !memcmp(x->p_val_im, y->p_val_im, x->np * sizeof(double));
}

static void test_threads_leave_no_mark(void **state)
{
    (void)state;
    sv_em_project *pa = example(), *pb = em_test_project(line_json);
    sv_em_model *ma = em_test_model(pa), *mb = em_test_model(pb);
    int n[2] = {ma->n, mb->n};
    sv_em_model_destroy(ma);
    sv_em_model_destroy(mb);
    run r[RUNS];
    for (int k = 0; k < RUNS; k++) run_with(k + 1, pa, pb, &r[k]);
    assert_true(r[0].u.np > 0 && r[0].u.nl > 0);
    for (int k = 1; k < RUNS; k++) {
        for (int q = 0; q < 2; q++)
            for (int t = 0; t < 3; t++)
                if (!same_sym(r[k].t[q][t], r[0].t[q][t], n[q]))
                    fail_msg("%d threads: model %d, matrix %d differs from one thread's", k + 1, q, t);
        if (!same_lists(&r[k].u, &r[0].u)) fail_msg("%d threads: the walls' update lists differ", k + 1);
    }
    print_message("L, Psi, Psi_im (%d and %d unknowns) and the walls' lists (%zu, %zu entries): the same bits "
                  "with 1 to %d threads\n",
                  n[0], n[1], r[0].u.nl, r[0].u.np, RUNS);
    for (int k = 0; k < RUNS; k++) {
        for (int q = 0; q < 2; q++)
            for (int t = 0; t < 3; t++) sv_dense_sym_destroy(r[k].t[q][t]);
        sv_em_walls_updates_free(r[k].ctx, &r[k].u);
        sv_ctx_destroy(r[k].ctx);
    }
    sv_em_project_destroy(pa);
    sv_em_project_destroy(pb);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_threads_leave_no_mark),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
