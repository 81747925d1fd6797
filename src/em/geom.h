/* Geometry helpers shared by the assembly and the naive reference. */
#ifndef SV_EM_GEOM_H
#define SV_EM_GEOM_H

#include "em_internal.h"

typedef struct sv_em_pulse_t {
    double x1, x2, y1, y2;   /* m, relative to the grid's corner */
    int axis;                /* 0 x-directed, 1 y-directed */
    int sign;                /* +1, or −1 for right/top port half rooftops */
} sv_em_pulse_t;

void sv_em_pulse(const sv_em_model *m, int q, sv_em_pulse_t *p);
/* Cells where unknown q has divergence (±1/(dx·dy)); returns 1 or 2. */
int sv_em_div_cells(const sv_em_model *m, int q, int ci[2], int cj[2], int sg[2]);
/* L between two pulses (H); exact = 1 forces the closed form. */
double sv_em_L_pair(const sv_em_model *m, const sv_em_pulse_t *a, const sv_em_pulse_t *b, int exact);
/* P between two cells at offset (di, dj) cells (1/F), all image terms. */
double sv_em_P_cells(const sv_em_model *m, int di, int dj, int exact);

#endif
