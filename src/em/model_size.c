/* What sv_em_model_create will make and hold, from the project and the
 * options alone: a counting pass (the unknowns, the cells) and the sizes of
 * its large parts, so that a job can judge the mesh's memory before any of
 * it exists (src/planar/memory.c refuses on it). */
#include <math.h>

#include "em_internal.h"

/* The small allocations besides the large parts and each one's header. */
#define SMALL_PARTS 16384

/* Its steps in order: the basis list and the tables it keeps, then, one
 * after the other, the walls' Ritz steps, the radiation terms while they
 * are made (what they keep is less), dispersion's far field while it is
 * fitted (beside the radiation terms kept, at most their making's size). */
static void size_parts(const sv_em_model *m, sv_em_model_size *z)
{
    const sv_em_project *p = m->prj;
    z->unknowns = m->n;
    z->cells = m->ncells;
    z->limit_hz = sv_em_radiation_limit_hz(m);
    z->design_hz = sv_em_radiation_design_hz(m);
    z->tables = (p->st.thick_metal ? sv_em_walls_tables_bytes(m) : 0) +
                (p->edge_profile || p->edge_cells ? sv_em_edge_memo_bytes(m) : 0);
    z->wall_shares = sv_em_walls_share_bytes(m);
    z->radiation = p->radiation ? sv_em_radiation_build_bytes(m->n, sv_em_radiation_size(m), z->design_hz,
                                                              sv_em_radiation_tolerance(m), NULL)
                                : 0;
    size_t far = p->dispersion && p->dispersion_far ? sv_em_disp_far_build_bytes() : 0;
    size_t basis = sizeof(sv_em_basis) * (size_t)(m->n > 0 ? m->n : 1);
    size_t kept = SMALL_PARTS + sizeof(sv_em_model) + basis + z->tables;
    size_t step = z->wall_shares > z->radiation ? z->wall_shares : z->radiation;
    z->peak = kept + (step > z->radiation + far ? step : z->radiation + far);
}

sv_status sv_em_model_size_of(const sv_em_project *p, const sv_em_options *opts, sv_em_model_size *out)
{
    if (!out) return sv_error(SV_ERR_ARG, "sv_em_model_size_of: out is NULL");
    *out = (sv_em_model_size){0};
    if (!p) return sv_error(SV_ERR_ARG, "sv_em_model_size_of: project is NULL");
    sv_em_model shape;
    sv_status s = sv_em_model_shape(p, opts, &shape);
    if (!s) size_parts(&shape, out);
    return s;
}

sv_status sv_em_check_validity(const sv_em_project *p, const sv_em_options *opts, double freq_hz)
{
    if (!p) return sv_error(SV_ERR_ARG, "sv_em_check_validity: project is NULL");
    if (!p->radiation || (opts && opts->allow_beyond_validity)) return SV_OK;
    sv_em_model shape = {.prj = p};
    double limit = sv_em_radiation_limit_hz(&shape);
    if (!(freq_hz > limit)) return SV_OK;
    const sv_em_stackup *st = &p->st;
    double k_size = SV_EM_RAD_KA_MAX / sv_em_radiation_size(&shape);
    double k_thin = SV_EM_RAD_K1H_MAX / (st->h * sqrt(st->eps_r));
    const char *bound = k_thin <= k_size ? "the substrate is no longer thin there (k0*h*sqrt(eps_r) = 0.5)"
                                         : "the metal is electrically large there (k0*a = 4, a its half-diagonal)";
    return sv_error(SV_ERR_ARG,
                    "frequency %.6g GHz is above %.4g GHz, the limit of the model's radiation terms: %s, and beyond it "
                    "S can exceed 1 on a lossy circuit; refused unless allowed (allow_beyond_validity, the tool's "
                    "--allow-beyond-validity; docs/em.md, \"Electrical-size limit\")",
                    freq_hz / 1e9, limit / 1e9, bound);
}
