/* Version and build information. */
#include "solvent/core.h"

#include <stdio.h>

#define SV_STR2(x) #x
#define SV_STR(x) SV_STR2(x)

/* Provided by OpenBLAS; declared here to avoid depending on its headers. */
char *openblas_get_config(void);

const char *sv_version_string(void)
{
    return SV_STR(SV_VERSION_MAJOR) "." SV_STR(SV_VERSION_MINOR) "." SV_STR(SV_VERSION_PATCH);
}

const char *sv_build_info(void)
{
    return openblas_get_config();
}
