/* The planar job's state and its steps (job.c runs them in order). */
#ifndef SV_PLANAR_INTERNAL_H
#define SV_PLANAR_INTERNAL_H

#include <pthread.h>

#include "solvent/gpu.h"
#include "solvent/planar.h"

/* The port calibration the maps of a batch share (batch_run.c): the first
 * one a map makes, used by every later map it fits (sv_em_calibration_fits:
 * the standards do not see the map), in this run and every later one,
 * released with the batch. */
typedef struct planar_cal_share {
    pthread_mutex_t lock;
    sv_em_calibration *cal;
} planar_cal_share;

/* A job's life: made, run once (successfully or not). */
typedef enum planar_state { PLANAR_NEW = 0, PLANAR_DONE = 1, PLANAR_FAILED = 2 } planar_state;

struct sv_planar_job {
    sv_ctx *ctx;
    sv_planar_options o;
    planar_state state;
    sv_em_project *prj;        /* the job's copy */
    sv_em_model *em;           /* the mesh */
    sv_em_affine *model;       /* the affine model */
    sv_gpu_solver *gpu;        /* set when the exact solves run on a device */
    sv_em_calibration *cal;    /* set when a port is calibrated */
    sv_em_model_size mesh_size; /* what the mesh holds (before it is made) */
    sv_sweep_options so;
    sv_sweep_result *res;      /* the solves above DC */
    /* the frequencies (frequencies.c) */
    int nf, dc;                /* dc = 1: freq[0] = 0, from the DC limit; the solves cover the rest */
    double *freq;              /* nf */
    double tolerance;
    /* the network (network.c), nf blocks of p × p each */
    int p;
    double complex *s, *y, *z, *y_raw;
    double *z0;
    const char **names;
    unsigned char *exact, *fallback;
    sv_planar_network net;
    sv_planar_report rep;
    /* a map on a board (batch.c): the mesh made on it with this slot's memo; NULL: alone */
    sv_em_board *board;
    int slot;
    planar_cal_share *cal_share; /* a batch's shared calibration (NULL: none) */
};

/* sv_planar_job_create with the mesh made on board b (its shared tables,
 * memo `slot`), or alone when b is NULL: what a batch's maps run. */
sv_status planar_job_create_on(sv_ctx *ctx, const sv_em_project *project, const sv_planar_options *opts,
                               sv_em_board *b, int slot, sv_planar_job **out);

/* The frequencies: the list given or the band, resolved against the project. */
sv_status planar_frequencies(sv_planar_job *j);
/* The mesh's memory (from j->mesh_size) and the limit in force, into
 * j->rep.estimate, before the mesh is made. */
void planar_estimate_mesh(sv_planar_job *j);
/* SV_ERR_BUDGET naming the mesh's parts when they exceed the limit. */
sv_status planar_check_mesh_memory(const sv_planar_job *j);
/* The run's memory estimate, once the mesh exists (into j->rep.estimate). */
void planar_estimate(sv_planar_job *j);
/* SV_ERR_BUDGET naming the estimate's parts when it exceeds the limit. */
/* Once the model exists: the loop-tree solves' matrix (16·N² bytes) in the
 * solves' part when a frequency falls below the model's low-frequency
 * threshold (known only from its terms' norms). */
void planar_estimate_low_frequencies(sv_planar_job *j);
sv_status planar_check_memory(const sv_planar_job *j);
/* A GPU asked for: refused before any work when none can be used. */
sv_status planar_check_device(const sv_planar_job *j);
/* The device of the exact solves: sets j->so.solver when a GPU takes them,
 * and the report's device line. */
sv_status planar_choose_device(sv_planar_job *j);
/* The raw ports' Y kept, before the calibration, when asked for. */
sv_status planar_keep_raw(sv_planar_job *j);
/* The calibration made at the solved frequencies and applied to their Y. */
sv_status planar_calibrate(sv_planar_job *j);
/* S (and Y, Z on request) at every frequency, DC included, with the checks. */
sv_status planar_network(sv_planar_job *j);
/* Release what planar_network and planar_keep_raw allocated (the pointers
 * set to NULL). */
void planar_network_free(sv_planar_job *j);

#endif
