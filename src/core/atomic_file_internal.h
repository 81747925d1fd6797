/* The atomic file's choice of temporary, for the tests of both kinds. */
#ifndef SV_CORE_ATOMIC_FILE_INTERNAL_H
#define SV_CORE_ATOMIC_FILE_INTERNAL_H

#include "solvent/core.h"

/* sv_atomic_file_open, with anonymous = 0 taking the named temporary that
 * file systems without O_TMPFILE get. */
sv_status sv_atomic_file_open_as(const char *path, int anonymous, sv_atomic_file **out);

#endif
