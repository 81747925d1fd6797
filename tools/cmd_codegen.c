/* `solvent codegen PATTERN -o NAME.c`: straight-line sparse LU kernels for
 * one sparsity pattern, as a C file to compile into a program. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "solvent/sparse.h"
#include "tool_args.h"

const char cmd_codegen_summary[] = "write straight-line sparse LU kernels for a pattern file (C source)";

static void usage(FILE *f)
{
    fprintf(f,
            "usage: solvent codegen PATTERN -o NAME.c [options]\n\n"
            "Analyses the sparsity pattern in PATTERN (Matrix Market coordinate file:\n"
            "'%%%%MatrixMarket matrix coordinate pattern general', a line 'n n nnz', then\n"
            "1-based 'i j' lines; real/integer values are ignored, symmetric files are\n"
            "mirrored) and writes C code that factorises and solves matrices of exactly\n"
            "that pattern with every index a literal. The file defines\n"
            "    const sv_sparse_kernels NAME;\n"
            "Compile it into your program and call sv_sparse_lu_use_kernels(lu, &NAME) on\n"
            "an analysis of the same pattern with the same ordering (the hash is checked).\n\n"
            "options:\n"
            "  -o FILE            output C file (required); written atomically\n"
            "  --name IDENT       name of the kernel table: a C identifier, not a keyword,\n"
            "                     not starting with _ (default: FILE's base name)\n"
            "  --ordering amd|natural   ordering of the analysis (default amd)\n"
            "  --emit LIST        kernels, comma-separated from f64, f32, b2, b4, b8,\n"
            "                     f32b4, f32b8, all (default f64,f32,b4,b8,f32b8)\n"
            "  --max-updates N    refuse beyond N factor updates (default 50000)\n"
            "  --max-subst N      refuse beyond N substitution terms (default 50000)\n"
            "  --memory-limit B   refuse past B bytes (suffixes K, M, G, T; default: the\n"
            "                     machine's available memory)\n"
            "  --stats            print n, nnz, slots, updates and colours, write nothing\n\n"
            "Exit status: 0 written, 1 bad pattern or limits exceeded, 2 bad arguments.\n");
}

static int parse_emit(const char *s, unsigned *out)
{
    unsigned m = 0;
    char buf[256];
    if (strlen(s) >= sizeof buf) return -1;
    strcpy(buf, s);
    for (char *t = strtok(buf, ","); t; t = strtok(NULL, ",")) {
        if (!strcmp(t, "f64")) m |= SV_SPARSE_EMIT_F64;
        else if (!strcmp(t, "f32")) m |= SV_SPARSE_EMIT_F32;
        else if (!strcmp(t, "b2")) m |= SV_SPARSE_EMIT_BATCH2_F64;
        else if (!strcmp(t, "b4")) m |= SV_SPARSE_EMIT_BATCH4_F64;
        else if (!strcmp(t, "b8")) m |= SV_SPARSE_EMIT_BATCH8_F64;
        else if (!strcmp(t, "f32b4")) m |= SV_SPARSE_EMIT_BATCH4_F32;
        else if (!strcmp(t, "f32b8")) m |= SV_SPARSE_EMIT_BATCH8_F32;
        else if (!strcmp(t, "all")) m |= SV_SPARSE_EMIT_ALL;
        else return -1;
    }
    if (!m) return -1;
    *out = m;
    return 0;
}

/* Default table name: the output's base name without extension, with
 * characters that cannot be in a C identifier replaced by '_', "k" before
 * one that does not start with a letter, and "k_" before one that is still
 * no valid name (a keyword, like "int.c", or one of the file's own). */
static void default_name(const char *path, char *name, size_t cap)
{
    const char *b = strrchr(path, '/');
    b = b ? b + 1 : path;
    char stem[192];
    size_t k = 0;
    if (!((*b >= 'a' && *b <= 'z') || (*b >= 'A' && *b <= 'Z'))) stem[k++] = 'k';
    for (; *b && *b != '.' && k + 1 < sizeof stem; b++)
        stem[k++] = ((*b >= 'a' && *b <= 'z') || (*b >= 'A' && *b <= 'Z') || (*b >= '0' && *b <= '9')) ? *b : '_';
    stem[k] = 0;
    /* a rejected stem is handled here by taking another name: the message
     * was not the user's concern */
    int ok = sv_sparse_codegen_check_name(stem) == SV_OK;
    if (!ok) sv_clear_error();
    snprintf(name, cap, "%s%s", ok ? "" : "k_", stem);
}

/* The command line. */
typedef struct codegen_args {
    const char *in, *outp, *name;
    sv_sparse_ordering ord;
    sv_sparse_codegen_options opt;
    int stats;
    size_t memory_limit;
    char defname[256];
    tool_seen seen;
} codegen_args;

/* One option at argv[*a] (its value taken too); 1 when understood, else 0
 * after a message. */
static int parse_option(codegen_args *A, int argc, char **argv, int *a)
{
    const char *s = argv[*a];
    int has_value = *a + 1 < argc;
    if (strcmp(s, "--stats") && tool_seen_once(&A->seen, "codegen", s)) return 0;
    if (!strcmp(s, "-o") && has_value) {
        A->outp = argv[++*a];
    } else if (!strcmp(s, "--name") && has_value) {
        A->name = argv[++*a];
    } else if (!strcmp(s, "--ordering") && has_value) {
        const char *v = argv[++*a];
        if (!strcmp(v, "amd")) A->ord = SV_SPARSE_ORDER_AMD;
        else if (!strcmp(v, "natural")) A->ord = SV_SPARSE_ORDER_NATURAL;
        else {
            tool_say("codegen", "--ordering '%s': expected amd or natural", v);
            return 0;
        }
    } else if (!strcmp(s, "--emit") && has_value) {
        if (parse_emit(argv[++*a], &A->opt.emit)) {
            tool_say("codegen", "--emit '%s': expected a comma-separated list of f64, f32, b2, b4, b8, f32b4, "
                                "f32b8, all", argv[*a]);
            return 0;
        }
    } else if ((!strcmp(s, "--max-updates") || !strcmp(s, "--max-subst")) && has_value) {
        char *end;
        errno = 0;
        long long v = strtoll(argv[++*a], &end, 10);
        if (errno || end == argv[*a] || *end || v < 0) {
            tool_say("codegen", "%s '%s': expected a non-negative integer", s, argv[*a]);
            return 0;
        }
        if (!strcmp(s, "--max-updates")) A->opt.max_updates = v;
        else A->opt.max_subst = v;
    } else if (!strcmp(s, "--memory-limit") && has_value) {
        if (tool_parse_bytes(argv[++*a], &A->memory_limit)) {
            tool_say("codegen", "--memory-limit '%s': expected %s", argv[*a], TOOL_BYTES_EXPECTED);
            return 0;
        }
    } else if (!strcmp(s, "--stats")) {
        A->stats = 1;
    } else {
        tool_say("codegen", "unknown or incomplete option '%s'", s);
        fputc('\n', stderr);
        usage(stderr);
        return 0;
    }
    return 1;
}

/* Returns -1 when the command should run, else its exit code. */
static int parse_args(int argc, char **argv, codegen_args *A)
{
    memset(A, 0, sizeof *A);
    A->ord = SV_SPARSE_ORDER_AMD;
    sv_sparse_codegen_options_default(&A->opt);
    for (int a = 1; a < argc; a++) {
        const char *s = argv[a];
        if (!strcmp(s, "--help") || !strcmp(s, "-h")) {
            usage(stdout);
            return 0;
        } else if (s[0] == '-' && s[1]) {
            if (!parse_option(A, argc, argv, &a)) return 2;
        } else if (!A->in) {
            A->in = s;
        } else {
            tool_say("codegen", "unexpected argument '%s'", s);
            return 2;
        }
    }
    if (!A->in || (!A->outp && !A->stats)) {
        fprintf(stderr, "solvent codegen: %s\n\n", !A->in ? "missing PATTERN" : "missing -o NAME.c");
        usage(stderr);
        return 2;
    }
    if (A->name && sv_sparse_codegen_check_name(A->name) != SV_OK) {
        tool_say("codegen", "--name: %s", sv_last_error());
        return 2;
    }
    if (!A->name && A->outp) {
        default_name(A->outp, A->defname, sizeof A->defname);
        A->name = A->defname;
    }
    const char *inputs[] = {A->in};
    if (A->outp && !A->stats) return tool_check_not_input("codegen", "-o", A->outp, inputs, 1) ? 2 : -1;
    return -1;
}

/* --stats: the analysis' sizes and the colouring, nothing written. */
static int print_stats(const sv_sparse_pattern *p, const sv_sparse_lu *lu)
{
    sv_sparse_coloring *c = NULL;
    if (sv_sparse_color(NULL, p, &c) != SV_OK) {
        fprintf(stderr, "solvent codegen: %s\n", sv_last_error());
        return 1;
    }
    int colors = sv_sparse_coloring_count(c);
    sv_sparse_coloring_destroy(c);
    printf("n %d\nnnz %d\nslots %d\nupdates %lld\nflops %lld\ncolors %d\nhash %016llx\n", sv_sparse_lu_n(lu),
           sv_sparse_pattern_nnz(p), sv_sparse_lu_nnz(lu), sv_sparse_lu_updates(lu), sv_sparse_lu_flops(lu), colors,
           (unsigned long long)sv_sparse_lu_hash(lu));
    return 0;
}

/* The C file, through a temporary name renamed at the end: never a
 * half-written file. */
static int write_kernels(const codegen_args *A, const sv_sparse_lu *lu)
{
    sv_atomic_file *af;
    sv_status s = sv_atomic_file_open(A->outp, &af);
    if (s == SV_OK) {
        s = sv_sparse_codegen_write(lu, &A->opt, A->name, sv_atomic_file_stream(af));
        sv_status c = sv_atomic_file_close(af, s == SV_OK);
        if (s == SV_OK) s = c;
    }
    if (s) { /* the library's message, naming the file unless it does */
        char shown[256];
        if (strstr(sv_last_error(), sv_escape_text(A->outp, shown, sizeof shown))) tool_say("codegen", "%s", sv_last_error());
        else tool_say("codegen", "-o %s: %s", A->outp, sv_last_error());
        return s == SV_ERR_ARG ? 2 : 1;
    }
    fprintf(stderr, "solvent codegen: wrote %s (table '%s': n = %d, %d slots, %lld updates)\n", A->outp, A->name,
            sv_sparse_lu_n(lu), sv_sparse_lu_nnz(lu), sv_sparse_lu_updates(lu));
    return 0;
}

/* A library call failed: its message, naming the pattern file. */
static void say_failure(const codegen_args *A)
{
    char shown[256];
    if (strstr(sv_last_error(), sv_escape_text(A->in, shown, sizeof shown))) tool_say("codegen", "%s", sv_last_error());
    else tool_say("codegen", "pattern file '%s': %s", A->in, sv_last_error());
}

int cmd_codegen_main(int argc, char **argv)
{
    codegen_args A;
    int rc = parse_args(argc, argv, &A);
    if (rc >= 0) return rc;
    sv_ctx *ctx = NULL;
    sv_sparse_pattern *p = NULL;
    sv_sparse_lu *lu = NULL;
    size_t limit = tool_command_memory_limit(A.memory_limit, NULL);
    rc = 1;
    if (sv_ctx_create(&ctx) || (limit && sv_ctx_set_memory_limit(ctx, limit)) ||
        sv_sparse_pattern_read_mm(ctx, A.in, &p)) {
        say_failure(&A);
    } else if (!A.stats && sv_sparse_pattern_nnz(p) > A.opt.max_subst) {
        /* every entry is at least one substitution term: refused before the analysis */
        tool_say("codegen", "pattern file '%s': %d entries, so at least as many substitution terms: more than "
                 "--max-subst %lld (use the table-driven kernels)", A.in, sv_sparse_pattern_nnz(p), A.opt.max_subst);
    } else if (sv_sparse_lu_analyse(ctx, p, A.ord, &lu)) {
        say_failure(&A);
    } else {
        rc = A.stats ? print_stats(p, lu) : write_kernels(&A, lu);
    }
    sv_sparse_lu_destroy(lu);
    sv_sparse_pattern_destroy(p);
    sv_ctx_destroy(ctx);
    return rc;
}
