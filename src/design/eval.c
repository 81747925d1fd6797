/* The evaluator of a design's maps: the full model, its index sets, and
 * the whole-state operations (set a map, S, rebuild); flips are in
 * eval_update.c, the fresh build of one frequency in eval_fresh.c. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#ifdef _OPENMP
#include <omp.h>
#endif

#include "eval_internal.h"
#include "solvent/dense_layout.h"

/* Effects whose entries are not a function of the pair of unknowns alone
 * (docs/design.md, "What the method covers"): refused by name. */
static sv_status check_effects(const sv_em_model *em, const sv_em_affine *aff)
{
    sv_em_stackup st;
    sv_em_project_stackup(sv_em_model_project(em), &st);
    const char *why = NULL;
    if (st.thick_metal)
        why = "thick metal (effects.thick_metal): its side walls' charge and current change with each flipped "
              "pixel's neighbours";
    else if (sv_em_model_edge_profiled(em))
        why = "the edge profile (effects.edge_profile, effects.edge_cells): a cell's profile changes with its "
              "neighbours";
    else if (sv_em_affine_radiates(aff))
        why = "radiation (effects.radiation): its low-rank terms are compressed for one map's metal";
    else if (sv_em_affine_disperses(aff))
        why = "dispersion (effects.dispersion): its far field's terms are fitted to one map's metal";
    else if (st.tan_delta > 0 && !st.exact_dielectric_loss)
        why = "the dielectric's loss as a ratio of the charge term (effects.dielectric_loss): the ratio is an average "
              "over one map's metal (\"dielectric_loss\": \"exact\" makes it exact per pair)";
    if (why)
        return sv_error(SV_ERR_UNSUPPORTED, "design: the board's model has %s, which the design's exact flip updates "
                        "do not follow: switch it off in the board's effects", why);
    return SV_OK;
}

double complex sv_design_eval_z(const sv_design_eval *ev, int fi, int r, int c)
{
    double complex z = 0;
    const double complex *cf = ev->coef + (size_t)fi * ev->nterms;
    for (int k = 0; k < ev->nterms; k++) {
        const sv_sweep_term t = ev->terms[k];
        if (t.kind == SV_SWEEP_TERM_PACKED) {
            z += cf[k] * t.packed[sv_dense_packed_offset(ev->n, t.nb, r, c)];
        } else if (t.kind == SV_SWEEP_TERM_CSR) {
            int lo = t.rowptr[r], hi = t.rowptr[r + 1] - 1; /* columns ascending: binary search */
            while (lo <= hi) {
                int mid = (lo + hi) / 2;
                if (t.colind[mid] == c) {
                    z += cf[k] * t.values[mid];
                    break;
                }
                if (t.colind[mid] < c)
                    lo = mid + 1;
                else
                    hi = mid - 1;
            }
        }
    }
    return z;
}

/* Design unknowns (a cell in the region) and fixed ones, and each cell's
 * design unknowns. */
static sv_status index_sets(sv_design_eval *ev)
{
    int n = ev->n, nc = ev->nx * ev->ny;
    if (!(ev->dfull = malloc(sizeof(int) * n)) || !(ev->dcell = malloc(sizeof(int) * 2 * n)) ||
        !(ev->fixed = malloc(sizeof(int) * n)) || !(ev->cell_off = calloc((size_t)nc + 1, sizeof(int))) ||
        !(ev->cell_d = malloc(sizeof(int) * 2 * n)))
        return sv_error(SV_ERR_NOMEM, "design evaluator: out of memory");
    for (int u = 0; u < n; u++) {
        int kind, i, j, port;
        sv_em_model_unknown(ev->em, u, &kind, &i, &j, &port);
        int c1 = i + ev->nx * j, c2 = kind == 0 ? c1 + 1 : kind == 1 ? c1 + ev->nx : c1;
        if (kind == 2 && ev->region[c1])
            return sv_error(SV_ERR_ARG, "design: port %d touches design pixel (%d, %d): expected ports on fixed metal",
                            port + 1, i, j);
        if (kind != 2 && (ev->region[c1] || ev->region[c2])) {
            ev->dcell[2 * ev->nd] = c1;
            ev->dcell[2 * ev->nd + 1] = c2;
            ev->dfull[ev->nd++] = u;
            ev->cell_off[c1 + 1]++;
            ev->cell_off[c2 + 1]++;
        } else
            ev->fixed[ev->nfix++] = u;
    }
    for (int c = 0; c < nc; c++) ev->cell_off[c + 1] += ev->cell_off[c];
    int *fill = calloc((size_t)nc, sizeof(int));
    if (!fill) return sv_error(SV_ERR_NOMEM, "design evaluator: out of memory");
    for (int d = 0; d < ev->nd; d++)
        for (int e = 0; e < 2; e++) {
            int c = ev->dcell[2 * d + e];
            ev->cell_d[ev->cell_off[c] + fill[c]++] = d;
        }
    free(fill);
    ev->m = ev->nd + ev->p;
    return SV_OK;
}

/* Scratch of one frequency's fresh build (the larger of it and the
 * updates' needs): Z_JJ, its right-hand sides and Z_JU kept, with J at
 * most all unknowns but the ports' and U at most the design ones. */
static size_t work_elements(int n, int nd, int p)
{
    size_t nj = (size_t)n, w = (size_t)nd + p + nd;
    return nj * nj + nj * w + nj * nd + (size_t)nd * (nd + p) + 64;
}

sv_status sv_design_eval_bytes(const sv_em_project *full, const unsigned char *region, int nf, size_t *out)
{
    if (!full || !region || !out || nf < 1) return sv_error(SV_ERR_ARG, "sv_design_eval_bytes: bad argument");
    sv_em_model_size ms;
    sv_status s = sv_em_model_size_of(full, NULL, &ms);
    if (s) return s;
    sv_em_grid g;
    sv_em_project_grid(full, &g);
    /* an upper bound on the design unknowns: two rooftops per design pixel and one more per region row and column */
    size_t nd = 0;
    for (int c = 0; c < g.nx * g.ny; c++) nd += region[c] ? 2 : 0;
    nd += (size_t)g.nx + g.ny;
    if (nd > (size_t)ms.unknowns) nd = (size_t)ms.unknowns;
    int p = sv_em_project_ports(full);
    size_t m = nd + p;
    *out = sizeof(double complex) * (2 * m * m * nf + 2 * work_elements(ms.unknowns, (int)nd, p)) +
           12 * (size_t)ms.unknowns * ms.unknowns /* the model's terms L, Ψ, Ψ_im, packed */ + ms.peak;
    return SV_OK;
}

static sv_status make_model(sv_design_eval *ev, const sv_em_project *full)
{
    sv_em_options o;
    sv_em_options_default(&o);
    o.max_freq_hz = ev->freq[ev->nf - 1];
    sv_status s = sv_em_project_copy(ev->ctx, full, &ev->prj);
    if (!s) s = sv_em_model_create(ev->ctx, ev->prj, &o, &ev->em);
    if (!s) s = sv_em_affine_create(ev->ctx, ev->em, &ev->aff);
    if (!s) s = check_effects(ev->em, ev->aff);
    if (s) return s;
    ev->n = sv_em_model_unknowns(ev->em);
    ev->p = sv_em_model_ports(ev->em);
    ev->nterms = sv_sweep_model_nterms(sv_em_affine_model(ev->aff));
    if (!(ev->coef = malloc(sizeof(double complex) * (size_t)ev->nf * ev->nterms)) ||
        !(ev->B = calloc((size_t)ev->n * ev->p, sizeof(double))) || !(ev->z0 = malloc(sizeof(double) * ev->p)) ||
        !(ev->terms = malloc(sizeof(sv_sweep_term) * ev->nterms)))
        return sv_error(SV_ERR_NOMEM, "design evaluator: out of memory");
    for (int k = 0; k < ev->nterms; k++)
        if ((s = sv_em_affine_term(ev->aff, k, &ev->terms[k]))) return s;
    for (int f = 0; f < ev->nf; f++)
        for (int k = 0; k < ev->nterms; k++) ev->coef[(size_t)f * ev->nterms + k] = sv_em_affine_coefficient(ev->aff, k, ev->freq[f]);
    for (int k = 0; k < ev->p; k++) ev->z0[k] = sv_em_project_port_z0(full, k);
    if ((s = sv_em_port_rhs(ev->em, ev->B, ev->n))) return s;
    if (sv_em_project_calibrated(full)) s = sv_em_calibration_create(ev->ctx, ev->em, ev->nf, ev->freq, &ev->cal);
    return s;
}

static sv_status make_state(sv_design_eval *ev)
{
    size_t cells = (size_t)ev->nx * ev->ny, mm = (size_t)ev->m * ev->m;
    ev->nthreads = sv_threads_team();
    if (ev->nthreads < 1) ev->nthreads = 1;
    ev->work_len = work_elements(ev->n, ev->nd, ev->p);
    if (!(ev->map = calloc(cells, 1)) || !(ev->trial = calloc(cells, 1)) || !(ev->active = calloc((size_t)ev->nd + 1, 1)) ||
        !(ev->jset = malloc(sizeof(int) * ((size_t)ev->nd + 1))) ||
        !(ev->work = calloc((size_t)ev->nthreads, sizeof *ev->work)) ||
        !(ev->diag = malloc(sizeof(double) * ((size_t)ev->nd * ev->nf + 1))) || !(ev->lost = calloc((size_t)ev->nf, sizeof(double))) ||
        !(ev->stale = calloc((size_t)ev->nf, sizeof(int))) || !(ev->since = calloc((size_t)ev->nf, sizeof(int))))
        return sv_error(SV_ERR_NOMEM, "design evaluator: out of memory");
    for (int f = 0; f < ev->nf; f++)
        for (int d = 0; d < ev->nd; d++) ev->diag[(size_t)f * ev->nd + d] = cabs(sv_design_eval_z(ev, f, ev->dfull[d], ev->dfull[d]));
    if (!(ev->M = sv_alloc(ev->ctx, sizeof(double complex) * mm * ev->nf, "design: swept matrices (nd + p)^2 per frequency")) ||
        !(ev->M0 = sv_alloc(ev->ctx, sizeof(double complex) * mm * ev->nf, "design: the fixed part's swept matrices")))
        return sv_last_status();
    for (int t = 0; t < ev->nthreads; t++)
        if (!(ev->work[t] = sv_alloc(ev->ctx, sizeof(double complex) * ev->work_len, "design: a frequency's scratch")))
            return sv_last_status();
    return SV_OK;
}

static sv_status fresh_all(sv_design_eval *ev, int base);

sv_status sv_design_eval_create(sv_ctx *ctx, const sv_em_project *full, const unsigned char *region, int nf,
                                const double *freq_hz, sv_design_eval **out)
{
    return sv_design_eval_create_at(ctx, full, region, nf, freq_hz, NULL, out);
}

sv_status sv_design_eval_create_at(sv_ctx *ctx, const sv_em_project *full, const unsigned char *region, int nf,
                                   const double *freq_hz, const unsigned char *map, sv_design_eval **out)
{
    if (!full || !region || !freq_hz || !out || nf < 1) return sv_error(SV_ERR_ARG, "sv_design_eval_create: bad argument");
    *out = NULL;
    sv_design_eval *ev = calloc(1, sizeof *ev);
    if (!ev) return sv_error(SV_ERR_NOMEM, "design evaluator: out of memory");
    ev->ctx = ctx;
    ev->nf = nf;
    sv_em_grid g;
    sv_em_project_grid(full, &g);
    ev->nx = g.nx;
    ev->ny = g.ny;
    sv_threads_saved th = sv_threads_apply(ctx);
    sv_status s = SV_OK;
    if (!(ev->freq = malloc(sizeof(double) * nf)) || !(ev->region = malloc((size_t)g.nx * g.ny)))
        s = sv_error(SV_ERR_NOMEM, "design evaluator: out of memory");
    for (int f = 0; !s && f < nf; f++)
        if (!(freq_hz[f] >= SV_EM_MIN_FREQ_HZ) || (f && freq_hz[f] <= freq_hz[f - 1]))
            s = sv_error(SV_ERR_ARG, "design evaluator: frequency %d = %g Hz: expected above 0, ascending", f, freq_hz[f]);
    if (!s) {
        memcpy(ev->freq, freq_hz, sizeof(double) * nf);
        for (int c = 0; c < g.nx * g.ny; c++) ev->region[c] = region[c] && sv_em_project_metal(full, c % g.nx, c / g.nx);
        s = make_model(ev, full);
    }
    if (!s) s = index_sets(ev);
    if (!s) s = make_state(ev);
    if (!s) {
        /* the given map, or the full one (every region pixel metal) */
        for (int c = 0; c < g.nx * g.ny; c++)
            ev->map[c] = (unsigned char)(map && ev->region[c] ? !!map[c] : sv_em_project_metal(full, c % g.nx, c / g.nx));
        for (int d = 0; d < ev->nd; d++) ev->active[d] = ev->map[ev->dcell[2 * d]] && ev->map[ev->dcell[2 * d + 1]];
        s = fresh_all(ev, 1);
    }
    sv_threads_restore(th);
    if (s) {
        sv_design_eval_destroy(ev);
        return s;
    }
    *out = ev;
    return SV_OK;
}

void sv_design_eval_destroy(sv_design_eval *ev)
{
    if (!ev) return;
    if (ev->work)
        for (int t = 0; t < ev->nthreads; t++) sv_free(ev->ctx, ev->work[t]);
    free(ev->work);
    sv_free(ev->ctx, ev->M);
    sv_free(ev->ctx, ev->M0);
    sv_em_calibration_destroy(ev->cal);
    sv_em_affine_destroy(ev->aff);
    sv_em_model_destroy(ev->em);
    sv_em_project_destroy(ev->prj);
    free(ev->freq);
    free(ev->z0);
    free(ev->coef);
    free(ev->terms);
    free(ev->B);
    free(ev->region);
    free(ev->map);
    free(ev->trial);
    free(ev->dfull);
    free(ev->dcell);
    free(ev->fixed);
    free(ev->cell_off);
    free(ev->cell_d);
    free(ev->active);
    free(ev->diag);
    free(ev->lost);
    free(ev->stale);
    free(ev->since);
    free(ev->jset);
    free(ev);
}

int sv_design_eval_ports(const sv_design_eval *ev) { return ev ? ev->p : 0; }
int sv_design_eval_unknowns(const sv_design_eval *ev) { return ev ? ev->n : 0; }
int sv_design_eval_design_unknowns(const sv_design_eval *ev) { return ev ? ev->nd : 0; }
long sv_design_eval_rebuilds(const sv_design_eval *ev) { return ev ? ev->rebuilds : 0; }
const unsigned char *sv_design_eval_map(const sv_design_eval *ev) { return ev ? ev->map : NULL; }

/* Every frequency afresh (with base: M0 from the model's terms first), in
 * parallel over the frequencies (each one on one thread: the same bits on
 * any thread count). */
static sv_status fresh_all(sv_design_eval *ev, int base)
{
    sv_threads_saved th = sv_threads_apply(ev->ctx);
    int team = sv_threads_team() < ev->nthreads ? sv_threads_team() : ev->nthreads;
    sv_status st = SV_OK;
    sv_progress_loop loop = sv_progress_loop_begin(ev->ctx, "design: fresh solve", ev->nf);
    int done = 0;
#pragma omp parallel num_threads(team > 0 ? team : 1)
    {
#ifdef _OPENMP
        int t = omp_get_thread_num();
#else
        int t = 0;
#endif
#pragma omp for schedule(dynamic, 1)
        for (int f = 0; f < ev->nf; f++) {
            sv_status s = SV_OK;
            int stop;
#pragma omp atomic read
            stop = done;
            if (!stop && base) s = sv_design_eval_base_one(ev, f, ev->work[t]);
            if (!stop && !s) s = sv_design_eval_rebuild_one(ev, f, ev->work[t]);
            if (s) {
#pragma omp critical(design_fresh)
                if (!st) st = s;
#pragma omp atomic write
                done = 1;
            }
            if (sv_progress_loop_at(&loop, f)) {
#pragma omp atomic write
                done = 1;
            }
        }
    }
    sv_status e = sv_progress_loop_end(&loop);
    sv_threads_restore(th);
    return st ? st : e;
}

sv_status sv_design_eval_set_map(sv_design_eval *ev, const unsigned char *map)
{
    if (!ev || !map) return sv_error(SV_ERR_ARG, "sv_design_eval_set_map: NULL argument");
    for (int c = 0; c < ev->nx * ev->ny; c++)
        if (ev->region[c]) ev->map[c] = !!map[c];
    for (int d = 0; d < ev->nd; d++) ev->active[d] = ev->map[ev->dcell[2 * d]] && ev->map[ev->dcell[2 * d + 1]];
    return fresh_all(ev, 0);
}

sv_status sv_design_eval_y_to_s(const sv_design_eval *ev, int fi, double complex *y, double complex *s)
{
    sv_status st = ev->cal ? sv_em_calibration_apply(ev->cal, fi, y) : SV_OK;
    return st ? st : sv_em_y_to_s(ev->p, y, ev->z0, s);
}

sv_status sv_design_eval_s(const sv_design_eval *ev, double complex *s)
{
    if (!ev || !s) return sv_error(SV_ERR_ARG, "sv_design_eval_s: NULL argument");
    int p = ev->p, m = ev->m;
    double complex y[64];
    if (p > 8) return sv_error(SV_ERR_UNSUPPORTED, "design: %d ports: at most 8", p);
    for (int f = 0; f < ev->nf; f++) {
        const double complex *M = ev->M + (size_t)f * m * m;
        for (int c = 0; c < p; c++)
            for (int r = 0; r < p; r++) y[r + c * p] = -M[(ev->nd + r) + (size_t)m * (ev->nd + c)];
        sv_status st = sv_design_eval_y_to_s(ev, f, y, s + (size_t)f * p * p);
        if (st) return st;
    }
    return SV_OK;
}

sv_status sv_design_eval_refresh(sv_design_eval *ev, double *drift)
{
    if (!ev) return sv_error(SV_ERR_ARG, "sv_design_eval_refresh: NULL argument");
    size_t ns = (size_t)ev->nf * ev->p * ev->p;
    double complex *a = drift ? malloc(sizeof(double complex) * ns) : NULL, *b = drift ? malloc(sizeof(double complex) * ns) : NULL;
    sv_status st = drift && (!a || !b) ? sv_error(SV_ERR_NOMEM, "design: out of memory") : SV_OK;
    if (!st && drift) st = sv_design_eval_s(ev, a);
    if (!st) st = fresh_all(ev, 0);
    if (!st && drift) st = sv_design_eval_s(ev, b);
    if (!st && drift) {
        *drift = 0;
        for (size_t k = 0; k < ns; k++) *drift = fmax(*drift, cabs(a[k] - b[k]));
    }
    free(a);
    free(b);
    return st;
}
