/* `solvent-run`, the tool: dispatch to the subcommands in tools/cmd_*.c.
 * Users run `solvent`, the launcher beside it (launcher/), which prepares
 * the environment the OpenMP runtime and OpenBLAS read when they load. */
#include <stdio.h>
#include <string.h>

#include "commands.h"
#include "interrupt.h"
#include "solvent/core.h"
#include "start.h"

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
            "            2 bad command-line arguments, 3 (sweep) outputs written but the sweep\n"
            "            stopped at its cap on exact solves, 130 interrupted (Ctrl-C: nothing written).\n");
}

int main(int argc, char **argv)
{
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
    tool_catch_interrupts();
    for (const sv_command *c = sv_commands; c->name; c++)
        if (!strcmp(argv[1], c->name)) return tool_start() ? 1 : c->main(argc - 1, argv + 1);
    fprintf(stderr, "solvent: unknown command '%s'\n\n", argv[1]);
    usage(stderr);
    return 2;
}
