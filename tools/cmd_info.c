/* `solvent info`: version, build and thread configuration. */
#include <omp.h>
#include <stdio.h>
#include <string.h>

#include "solvent/core.h"

const char cmd_info_summary[] = "print version, BLAS build and thread settings";

int cmd_info_main(int argc, char **argv)
{
    if (argc > 1 && (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h"))) {
        printf("usage: solvent info\n\nPrints Solvent's version, the OpenBLAS build it uses and the\n"
               "number of threads a command will run (OMP_NUM_THREADS unless the\n"
               "command is given its own thread count).\n");
        return 0;
    }
    if (argc > 1) {
        fprintf(stderr, "solvent info: unexpected argument '%s'\n", argv[1]);
        return 2;
    }
    printf("solvent %s\n", sv_version_string());
    printf("OpenBLAS: %s\n", sv_build_info());
    printf("threads: %d (OpenMP; OpenBLAS shares the same runtime)\n", omp_get_max_threads());
    return 0;
}
