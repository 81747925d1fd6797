/* `solvent design`'s pieces (cmd_design.c, design_plot.c). */
#ifndef SV_TOOL_DESIGN_H
#define SV_TOOL_DESIGN_H

#include <complex.h>
#include <stddef.h>

#include "solvent/design.h"

/* DIR/NAME.svg: |S_ij| (i >= j) in dB against frequency with the masks.
 * Returns 0, or -1 with a message in msg. */
int design_plot(const char *dir, const char *name, const char *title, int p, int nf, const double *freq_hz,
                const double complex *s, int nmasks, const sv_design_mask *masks, char *msg, size_t msglen);

#endif
