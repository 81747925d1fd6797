/* A built-in problem's record: its standard interval, state, parameters
 * and tolerances, and the data it owns (builtin_internal.h). It sits below
 * the registry (builtin.c), which makes and frees records, and the problem
 * files (builtin_*.c), which fill them. */
#include <stdlib.h>
#include <string.h>

#include "builtin_internal.h"

/* Every sv_ode_builtin is one of these (public part first), so that the
 * data's own free function travels with it. */
typedef struct builtin_rec {
    sv_ode_builtin pub;
    void (*free_data)(void *data);
} builtin_rec;

sv_ode_builtin *ode_builtin_record_new(void)
{
    builtin_rec *rec = calloc(1, sizeof *rec);
    return rec ? &rec->pub : NULL;
}

void ode_builtin_record_free(sv_ode_builtin *b)
{
    builtin_rec *rec = (builtin_rec *)b;
    if (b->data && rec->free_data) rec->free_data(b->data);
    ode_builtin_free_all((void *[]){b->y0, b->params, b->tstops, b->atol_vec, rec}, 5);
}

void ode_builtin_own(sv_ode_builtin *b, void *data, void (*free_data)(void *data))
{
    b->data = data;
    ((builtin_rec *)b)->free_data = free_data;
}

sv_status ode_builtin_set(sv_ode_builtin *b, const sv_ode_problem_desc *d, double t0, double t1, const double *y0,
                          const double *p, double rtol, double atol)
{
    b->t0 = t0;
    b->t1 = t1;
    b->rtol = rtol;
    b->atol = atol;
    b->y0 = malloc(sizeof(double) * (size_t)d->n);
    b->params = malloc(sizeof(double) * (size_t)(d->nparams ? d->nparams : 1));
    if (!b->y0 || !b->params) return sv_error(SV_ERR_NOMEM, "%s: out of memory", b->name);
    memcpy(b->y0, y0, sizeof(double) * (size_t)d->n);
    if (d->nparams) memcpy(b->params, p, sizeof(double) * (size_t)d->nparams);
    return SV_OK;
}
