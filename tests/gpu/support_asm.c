#include "support_asm.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "sv_test.h"

sv_em_project *asm_project(const char *json)
{
    sv_em_project *p = NULL;
    sv_status s = sv_em_project_parse(NULL, json, strlen(json), "test", &p);
    if (s) fprintf(stderr, "project: %s\n", sv_last_error());
    assert_int_equal(s, SV_OK);
    return p;
}

/* Term k of both results over the stored entries (r ≥ c). */
static void compare_term(int n, int nb, const double *x, const double *y, asm_diff *d)
{
    double dmax = 0, ymax = 0;
    for (int c = 0; c < n; c++) {
        size_t base = sv_dense_packed_offset(n, nb, c, c);
        for (int r = c; r < n; r++) {
            double a = x[base + (size_t)(r - c)], b = y[base + (size_t)(r - c)], e = fabs(a - b);
            d->entries++;
            if (memcmp(&a, &b, sizeof a)) d->differing++;
            dmax = fmax(dmax, e);
            ymax = fmax(ymax, fabs(b));
            if (b != 0) d->rel_entry = fmax(d->rel_entry, e / fabs(b));
        }
    }
    d->rel = fmax(d->rel, ymax > 0 ? dmax / ymax : dmax);
}

asm_diff asm_compare(const sv_em_model *m, int nb, int psi_im, const sv_em_assembler *a)
{
    asm_diff d = {.n = sv_em_model_unknowns(m)};
    sv_dense_sym *x[3] = {NULL, NULL, NULL}, *y[3] = {NULL, NULL, NULL};
    sv_status s = sv_em_assemble_with(NULL, m, nb, a, &x[0], &x[1], psi_im ? &x[2] : NULL, NULL);
    if (s) fprintf(stderr, "assembly (%s): %s\n", a ? a->name : "cpu", sv_last_error());
    assert_int_equal(s, SV_OK);
    assert_int_equal(sv_em_assemble_with(NULL, m, nb, NULL, &y[0], &y[1], psi_im ? &y[2] : NULL, NULL), SV_OK);
    int bs = sv_dense_sym_block(y[0]);
    d.identical = 1;
    for (int k = 0; k < 2 + (psi_im != 0); k++) {
        compare_term(d.n, bs, sv_dense_sym_cdata(x[k]), sv_dense_sym_cdata(y[k]), &d);
        if (memcmp(sv_dense_sym_cdata(x[k]), sv_dense_sym_cdata(y[k]), sizeof(double) * sv_dense_packed_size(d.n, bs)))
            d.identical = 0;
    }
    for (int k = 0; k < 3; k++) {
        sv_dense_sym_destroy(x[k]);
        sv_dense_sym_destroy(y[k]);
    }
    return d;
}
