/* A batch's state (batch.c makes it, batch_run.c runs its maps). */
#ifndef SV_PLANAR_BATCH_INTERNAL_H
#define SV_PLANAR_BATCH_INTERNAL_H

#include "planar_internal.h"

struct sv_planar_batch {
    sv_ctx *ctx;
    sv_planar_batch_options bo; /* as given */
    sv_planar_options o;        /* each map's job: threads and memory limit resolved */
    sv_em_project *board;       /* the batch's copy */
    sv_em_board *eb;            /* the shared tables; a memo slot per worker */
    int workers, job_threads;
    size_t board_bytes;         /* the board's shared tables, estimated (sv_em_board_bytes) */
    sv_ctx **worker_ctx;        /* one per worker, kept for the batch's life (the calibration lives in one) */
    planar_cal_share share;     /* the port calibration the maps share, from the first run on */
    planar_cal_share *cal_share; /* &share while a run goes on (a caller's own sv_planar_batch_solve: NULL) */
};

#endif
