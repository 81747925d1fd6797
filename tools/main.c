/* `solvent`: dispatch to the subcommands in tools/cmd_*.c. */
#define _POSIX_C_SOURCE 200809L /* setenv, execv */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "commands.h"
#include "solvent/core.h"

static void usage(FILE *out)
{
    fprintf(out,
            "usage: solvent COMMAND [ARGS...]\n"
            "       solvent --version | --help\n\n"
            "commands:\n");
    for (const sv_command *c = sv_commands; c->name; c++) fprintf(out, "  %-10s %s\n", c->name, c->summary);
    fprintf(out,
            "\n'solvent COMMAND --help' describes a command.\n"
            "Exit codes: 0 success, 1 a failed run (bad input, no convergence, memory),\n"
            "            2 bad command-line arguments.\n");
}

/* OpenMP threads that wait at a barrier spin for a while before they sleep
 * (libgomp: about 300 000 spins by default). On a machine shared with other
 * busy processes a spinning thread holds a core that the thread it waits
 * for needs: the 21-point sweep of the bundled example took 3–12 s instead
 * of 0.8 s with two threads while another program kept both cores busy,
 * 1.6 s with passive waiting. The OpenMP runtime reads its settings when it
 * loads, so the tool sets them and starts itself again, unless the user
 * chose a policy. */
static void prefer_short_spinning(char **argv)
{
    if (getenv("OMP_WAIT_POLICY") || getenv("GOMP_SPINCOUNT")) return;
    setenv("OMP_WAIT_POLICY", "passive", 1);
    execv("/proc/self/exe", argv); /* returns only on failure: carry on as we are */
    unsetenv("OMP_WAIT_POLICY");
}

int main(int argc, char **argv)
{
    prefer_short_spinning(argv);
    if (argc < 2) {
        usage(stderr);
        return 2;
    }
    if (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h") || !strcmp(argv[1], "help")) {
        usage(stdout);
        return 0;
    }
    if (!strcmp(argv[1], "--version")) {
        printf("solvent %s\nOpenBLAS: %s\n", sv_version_string(), sv_build_info());
        return 0;
    }
    for (const sv_command *c = sv_commands; c->name; c++)
        if (!strcmp(argv[1], c->name)) return c->main(argc - 1, argv + 1);
    fprintf(stderr, "solvent: unknown command '%s'\n\n", argv[1]);
    usage(stderr);
    return 2;
}
