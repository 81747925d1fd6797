/* The job's memory: estimated from the mesh before anything large is
 * allocated, refused past the limit with a message naming its parts — the
 * one place where a planar run's memory is judged. */
#include <stdio.h>

#include "planar_internal.h"

/* The solves above DC, each at the job's frequencies. */
static int solved(const sv_planar_job *j) { return j->nf - j->dc; }

/* The network parameters kept per frequency: S, and each asked for. */
static int outputs_kept(const sv_planar_job *j)
{
    unsigned o = j->o.outputs;
    return 1 + !!(o & SV_PLANAR_OUTPUT_Y) + !!(o & SV_PLANAR_OUTPUT_Z) + !!(o & SV_PLANAR_OUTPUT_Y_RAW);
}

/* The limit a job is held to: its own, the context's budget, or what the
 * machine has available. */
static size_t limit_in_force(const sv_planar_job *j)
{
    size_t budget = sv_ctx_memory_limit(j->ctx);
    return j->o.memory_limit ? j->o.memory_limit : budget ? budget : sv_mem_available();
}

void planar_estimate_mesh(sv_planar_job *j)
{
    sv_planar_memory *m = &j->rep.estimate;
    m->mesh = j->mesh_size.peak;
    m->total = m->mesh;
    m->limit = limit_in_force(j);
}

void planar_estimate(sv_planar_job *j)
{
    sv_planar_memory *m = &j->rep.estimate;
    const sv_em_model *em = j->em;
    int n = sv_em_model_unknowns(em), p = sv_em_model_ports(em), nf = solved(j);
    m->model = sv_em_affine_bytes(em) + sv_em_assemble_work_bytes(em) + sv_em_model_radiation_bytes(em) +
               j->mesh_size.tables;
    sv_sweep_shape shape;
    sv_em_affine_shape(em, &shape);
    m->solves = nf > 0 ? sv_sweep_estimate_bytes_shape(n, &shape, p, p, 0, nf, &j->so) : 0;
    /* the ports' thru standards run after the solves, beside the model */
    m->calibration = nf > 0 ? sv_em_calibration_bytes(em, nf, j->freq + j->dc) : 0;
    /* the mesh; per frequency S and the Y it comes from, and each further output */
    m->small = (size_t)n * 64 + (size_t)j->nf * p * p * 16 * (size_t)(1 + outputs_kept(j));
    size_t run = m->model + (m->solves > m->calibration ? m->solves : m->calibration) + m->small;
    m->total = run > m->mesh ? run : m->mesh;
    m->limit = limit_in_force(j);
}

void planar_estimate_low_frequencies(sv_planar_job *j)
{
    sv_planar_memory *m = &j->rep.estimate;
    int low = 0;
    for (int i = j->dc; i < j->nf && !low; i++) low = sv_em_affine_low_frequency(j->model, j->freq[i]);
    if (!low) return;
    /* the loop-tree solves run one frequency at a time, apart from the sweep's */
    size_t loop_tree = sv_em_loop_tree_bytes(j->em);
    if (loop_tree > m->solves) m->solves = loop_tree;
    size_t run = m->model + (m->solves > m->calibration ? m->solves : m->calibration) + m->small;
    if (run > m->total) m->total = run;
}

/* How a refusal names the limit. */
static const char *limit_name(const sv_planar_job *j)
{
    if (j->o.memory_limit_name) return j->o.memory_limit_name;
    if (j->o.memory_limit) return "the memory limit";
    return sv_ctx_memory_limit(j->ctx) ? "the context's memory budget" : "available memory";
}

/* The mesh's largest part, named for a refusal. */
static void mesh_part(const sv_em_model_size *z, char *buf, size_t len)
{
    char b[32];
    if (z->wall_shares >= z->radiation && z->wall_shares > 0)
        snprintf(buf, len, "thick metal's wall shares %s: a dense matrix over the metal's %d cells",
                 sv_format_bytes(z->wall_shares, b, sizeof b), z->cells);
    else if (z->radiation > 0)
        snprintf(buf, len, "the radiation terms %s while they are made", sv_format_bytes(z->radiation, b, sizeof b));
    else
        snprintf(buf, len, "its tables %s", sv_format_bytes(z->tables, b, sizeof b));
}

sv_status planar_check_mesh_memory(const sv_planar_job *j)
{
    const sv_planar_memory *m = &j->rep.estimate;
    if (!m->limit || m->mesh <= m->limit) return SV_OK;
    char need[32], limit[32], part[160];
    mesh_part(&j->mesh_size, part, sizeof part);
    return sv_error(SV_ERR_BUDGET, "the mesh of %d unknowns needs about %s (%s), more than the %s limit (%s)",
                    j->mesh_size.unknowns, sv_format_bytes(m->mesh, need, sizeof need), part,
                    sv_format_bytes(m->limit, limit, sizeof limit), limit_name(j));
}

sv_status planar_check_memory(const sv_planar_job *j)
{
    const sv_planar_memory *m = &j->rep.estimate;
    if (!m->limit || m->total <= m->limit) return SV_OK;
    char total[32], model[32], solves[32], limit[32], standards[32], cal[96] = "";
    int direct = j->so.exact_all;
    if (m->calibration)
        snprintf(cal, sizeof cal, "; after %s the ports' calibration standards %s", direct ? "them" : "it",
                 sv_format_bytes(m->calibration, standards, sizeof standards));
    return sv_error(SV_ERR_BUDGET,
                    "%s need%s about %s (the model's terms %s, %s %s%s) for %d unknowns, more than the %s limit (%s)",
                    direct ? "the solves" : "this sweep", direct ? "" : "s", sv_format_bytes(m->total, total, sizeof total),
                    sv_format_bytes(m->model, model, sizeof model), direct ? "the solves" : "solves and reduced model",
                    sv_format_bytes(m->solves, solves, sizeof solves), cal, sv_em_model_unknowns(j->em),
                    sv_format_bytes(m->limit, limit, sizeof limit), limit_name(j));
}
