/* The tool's start: what it prepares before a subcommand runs (start.c). */
#ifndef SV_TOOL_START_H
#define SV_TOOL_START_H

#include <stddef.h>

/* Under an address-space limit (ulimit -v): map OpenBLAS's buffers for the
 * threads that may call it and keep the rest of the room as the memory
 * budget. Returns 0, or 1 after a message when the buffers do not fit. */
int tool_start(void);
/* The budget under the limit (bytes), 0 when there is no limit. */
size_t tool_memory_budget(void);
/* The memory limit a context gets: `requested` (0 = none) capped by the
 * budget. */
size_t tool_memory_limit(size_t requested);

#endif
