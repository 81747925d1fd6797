/* `solvent gds PROJECT.json -o OUT.gds`: a project's metal as a GDSII
 * layout, its merged outlines on one layer (docs/how-to/gds.md). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "solvent/em.h"
#include "solvent/gds.h"
#include "tool_args.h"

const char cmd_gds_summary[] = "write a project's metal as a GDSII layout";

static const char usage_text[] =
    "usage: solvent gds PROJECT.json -o OUT.gds [options]\n\n"
    "Writes the project's metal - its pixels, rectangles or GDSII layer, launches\n"
    "included - as one GDSII structure: one polygon per piece of metal (cells\n"
    "meeting only at a corner are separate pieces), holes joined to the outline by\n"
    "zero-width cut lines. The file is written to a temporary name and renamed,\n"
    "so it is never left half-written.\n\n"
    "  -o PATH          output file\n"
    "  --layer L        GDSII layer, 0 to 32767 (default 1)\n"
    "  --datatype D     GDSII datatype, 0 to 32767 (default 0)\n"
    "  --cell NAME      the structure's name (default TOP)\n"
    "  --db-unit U      database unit in metres, at most 1e-6 (default 1e-9); every grid line\n"
    "                   must be a whole number of them\n\n"
    "Exit codes: 0 success, 1 a failed run, 2 bad arguments.\n";

typedef struct gds_args {
    const char *project, *out, *cell;
    int layer, datatype;
    double db_unit;
} gds_args;

static int parse_int(const char *opt, const char *v, int *out)
{
    char *e;
    long t = strtol(v, &e, 10);
    if (e == v || *e || t < 0 || t > SV_GDS_MAX_LAYER) {
        tool_say("gds", "%s %s: expected an integer from 0 to %d", opt, v, SV_GDS_MAX_LAYER);
        return 2;
    }
    *out = (int)t;
    return 0;
}

static int parse_value(const char *s, const char *v, gds_args *a)
{
    if (!strcmp(s, "-o")) a->out = v;
    else if (!strcmp(s, "--cell")) a->cell = v;
    else if (!strcmp(s, "--layer")) return parse_int(s, v, &a->layer);
    else if (!strcmp(s, "--datatype")) return parse_int(s, v, &a->datatype);
    else if (tool_parse_number(v, &a->db_unit) || !(a->db_unit >= 1e-15 && a->db_unit <= 1e-6)) {
        tool_say("gds", "--db-unit %s: expected a length in metres from 1e-15 to 1e-6 (the user unit, 1 um)", v);
        return 2;
    }
    return 0;
}

/* The command line into a; returns -1 to go on, else the exit code. */
static int parse_args(int argc, char **argv, gds_args *a)
{
    *a = (gds_args){.layer = SV_GDS_DEFAULT_LAYER};
    tool_seen seen = {0};
    static const char *const valued[] = {"-o", "--layer", "--datatype", "--cell", "--db-unit"};
    for (int i = 1; i < argc; i++) {
        const char *s = argv[i];
        if (!strcmp(s, "-h") || !strcmp(s, "--help")) {
            fputs(usage_text, stdout);
            return 0;
        }
        int known = 0;
        for (size_t k = 0; k < SV_COUNT(valued); k++) known |= !strcmp(s, valued[k]);
        if (known) {
            if (i + 1 >= argc) {
                tool_say("gds", "%s needs a value", s);
                return 2;
            }
            int code = tool_seen_once(&seen, "gds", s);
            if (!code) code = parse_value(s, argv[++i], a);
            if (code) return code;
        } else if (s[0] == '-' && s[1]) {
            tool_say("gds", "unknown option '%s' (see solvent gds --help)", s);
            return 2;
        } else if (!a->project) {
            a->project = s;
        } else {
            tool_say("gds", "unexpected argument '%s'", s);
            return 2;
        }
    }
    if (!a->project || !a->out) {
        fputs(usage_text, stderr);
        return 2;
    }
    return -1;
}

/* The project's metal on its mesh grid (the same drawing on any
 * subdivision: the outlines merge the cells). */
static int write_layout(const gds_args *a, sv_ctx *ctx, const sv_em_project *p)
{
    sv_gds_write_options o = {.cell = a->cell, .db_unit_m = a->db_unit};
    if (sv_em_project_write_gds(ctx, p, a->out, a->layer, a->datatype, &o)) {
        tool_say("gds", "%s: %s", a->out, sv_last_error());
        return 1;
    }
    return 0;
}

int cmd_gds_main(int argc, char **argv)
{
    gds_args a;
    int rc = parse_args(argc, argv, &a);
    if (rc >= 0) return rc;
    sv_ctx *ctx = NULL;
    sv_em_project *p = NULL;
    rc = 1;
    if (sv_ctx_create(&ctx)) {
        tool_say("gds", "%s", sv_last_error());
        return 1;
    }
    sv_ctx_set_log(ctx, tool_log_warnings, (void *)"gds");
    if (sv_em_project_read(ctx, a.project, &p)) {
        tool_say("gds", "%s", sv_last_error());
    } else {
        const char *inputs[] = {a.project, sv_em_project_pixels_file(p)};
        rc = tool_check_not_input("gds", "-o", a.out, inputs, inputs[1] ? 2 : 1);
        if (!rc) rc = write_layout(&a, ctx, p);
    }
    sv_em_project_destroy(p);
    sv_ctx_destroy(ctx);
    return rc;
}
