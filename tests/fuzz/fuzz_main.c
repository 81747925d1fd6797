/* The fuzz campaign of `solvent` (issue 16), as a test: the shipped project
 * and pattern files and a corpus of known hostile inputs, mutated with a
 * fixed seed and run through the tool itself (solve, sweep, codegen), plus
 * runs killed with SIGKILL at random moments. See tests/fuzz/README.md.
 *
 * usage: fuzz_tool --tool SOLVENT --src SOURCE_DIR --work DIR [--seed S]
 *                  [--cases N] [--seconds T] [--timeout T] [--memory B]
 * Cases are numbered; case i's input follows from (seed, i) alone, so a
 * failure is reproduced with --seed S --first i --cases 1. Exit 0 when no
 * case failed, 1 otherwise (the failing inputs are kept in DIR/failures). */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "fuzz_edges.h"
#include "fuzz_run.h"

typedef struct seed_file {
    char name[256];
    fz_buf text;
    int weight; /* how often it is picked: small projects more, they solve fast */
} seed_file;

typedef struct seeds {
    seed_file *f;
    int n, cap, total_weight;
} seeds;

typedef struct counts {
    long cases, by_kind[FZ_KINDS], kills, corpus, symlinked, onto_input;
    long crash, sanitizer, hang, wrong_exit, bad_message, data_lost, failed;
    long exit_code[5]; /* 0, 1, 2, 3, other */
} counts;

typedef struct options {
    const char *tool, *src, *work, *memory;
    unsigned long long seed;
    long cases, first;
    double seconds, timeout;
} options;

static double now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

static void add_seed(seeds *s, const char *dir, const char *name, int weight)
{
    char path[4200];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    FILE *f = fopen(path, "rb");
    if (!f) return;
    if (s->n == s->cap) {
        s->cap = s->cap ? 2 * s->cap : 32;
        s->f = realloc(s->f, sizeof *s->f * (size_t)s->cap);
    }
    seed_file *sf = &s->f[s->n++];
    memset(sf, 0, sizeof *sf);
    snprintf(sf->name, sizeof sf->name, "%s", name);
    char chunk[65536];
    size_t got;
    fz_buf_set(&sf->text, "", 0);
    while ((got = fread(chunk, 1, sizeof chunk, f)) > 0) fz_buf_append(&sf->text, chunk, got);
    fclose(f);
    sf->weight = weight;
    s->total_weight += weight;
}

/* Every file of dir ending in ext. */
static void add_seeds(seeds *s, const char *dir, const char *ext, int (*weight)(const char *))
{
    DIR *d = opendir(dir);
    if (!d) return;
    struct dirent **list = NULL;
    int n = scandir(dir, &list, NULL, alphasort); /* sorted: the same seeds in the same order everywhere */
    closedir(d);
    for (int k = 0; k < n; k++) {
        size_t l = strlen(list[k]->d_name), e = strlen(ext);
        if (l > e && !strcmp(list[k]->d_name + l - e, ext)) add_seed(s, dir, list[k]->d_name, weight(list[k]->d_name));
        free(list[k]);
    }
    free(list);
}

static int project_weight(const char *name)
{
    /* the larger shipped projects mostly meet the memory limit; stub solves in a blink */
    if (!strcmp(name, "stub.json")) return 6;
    if (!strcmp(name, "pozar_lpf.json") || !strcmp(name, "square76.json") || !strcmp(name, "pixel2port.json"))
        return 1;
    return 2;
}

static int pattern_weight(const char *name) { return strncmp(name, "eb50", 4) ? 2 : 1; }

static const seed_file *pick(fz_rng *r, const seeds *s)
{
    int w = (int)fz_below(r, (unsigned)s->total_weight);
    for (int k = 0; k < s->n; k++)
        if ((w -= s->f[k].weight) < 0) return &s->f[k];
    return &s->f[s->n - 1];
}

static void tally(counts *c, fz_kind kind, const fz_verdict *v)
{
    c->cases++;
    c->by_kind[kind]++;
    c->crash += v->crash, c->sanitizer += v->sanitizer, c->hang += v->hang;
    c->wrong_exit += v->wrong_exit, c->bad_message += v->bad_message, c->data_lost += v->data_lost;
    c->exit_code[v->rc >= 0 && v->rc <= 3 ? v->rc : 4]++;
}

static const char *const kind_name[FZ_KINDS] = {"solve", "sweep", "codegen", "ode"};

/* A failing case: its input and what went wrong, kept for the report. */
static void keep_failure(const options *o, counts *c, const char *label, fz_kind kind, const fz_buf *input,
                         const fz_verdict *v, const char *how)
{
    c->failed++;
    char dir[4200], path[4400];
    snprintf(dir, sizeof dir, "%s/failures", o->work);
    mkdir(dir, 0700);
    snprintf(path, sizeof path, "%s/%s%s", dir, label,
             strchr(label, '.') ? "" : kind == FZ_CODEGEN ? ".mtx" : kind == FZ_ODE ? ".txt" : ".json");
    /* corpus labels are file names; an ode case keeps its command line */
    FILE *f = fopen(path, "wb");
    if (f) fwrite(input->data, 1, input->len, f), fclose(f);
    fprintf(stderr, "fuzz: FAIL %s (%s, %s; exit %d after %.2f s): %s\n      input kept as %s\n", label,
            kind_name[kind], how, v->rc, v->seconds, v->why, path);
}

/* The corpus's known outcomes: "file command exit regex" lines. */
static void run_corpus(const options *o, const fz_config *cfg, counts *c)
{
    char mpath[4200], line[2048];
    snprintf(mpath, sizeof mpath, "%s/tests/fuzz/corpus/MANIFEST", o->src);
    FILE *m = fopen(mpath, "r");
    if (!m) {
        fprintf(stderr, "fuzz: no corpus manifest %s\n", mpath);
        exit(2);
    }
    fz_buf out = {0};
    while (fgets(line, sizeof line, m)) {
        char file[256], cmd[32];
        int rc, used = 0;
        if (line[0] == '#' || sscanf(line, "%255s %31s %d %n", file, cmd, &rc, &used) < 3) continue;
        char *regex = line + used;
        regex[strcspn(regex, "\n")] = 0;
        fz_kind kind = !strcmp(cmd, "solve") ? FZ_SOLVE : !strcmp(cmd, "sweep") ? FZ_SWEEP : FZ_CODEGEN;
        seeds one = {0};
        char dir[4200];
        snprintf(dir, sizeof dir, "%s/tests/fuzz/corpus", o->src);
        add_seed(&one, dir, file, 1);
        if (!one.n) {
            fprintf(stderr, "fuzz: the manifest names %s, which is not in %s\n", file, dir);
            exit(2);
        }
        fz_verdict v;
        int bad = fz_run(cfg, kind, FZ_OUT_FILE, &one.f[0].text, NULL, 0, NULL, rc, *regex ? regex : NULL, &v, &out);
        tally(c, kind, &v);
        c->corpus++;
        if (bad) keep_failure(o, c, file, kind, &one.f[0].text, &v, "corpus");
        fz_buf_free(&one.f[0].text);
        free(one.f);
    }
    fclose(m);
    fz_buf_free(&out);
}

/* The kill campaign's runs: a shipped project run to the end once (its
 * output the reference), then killed at random moments of the same run. */
typedef struct kill_target {
    const seed_file *seed;
    fz_kind kind;
    fz_buf reference;
    double seconds;
} kill_target;

static void prepare_kills(const fz_config *cfg, const seeds *projects, kill_target *t, int *nt)
{
    *nt = 0;
    for (int k = 0; k < projects->n && *nt < 4; k++) {
        if (strcmp(projects->f[k].name, "stub.json") && strcmp(projects->f[k].name, "good_line.json")) continue;
        for (int kind = FZ_SOLVE; kind <= FZ_SWEEP; kind++) {
            kill_target *x = &t[(*nt)++];
            memset(x, 0, sizeof *x);
            x->seed = &projects->f[k];
            x->kind = (fz_kind)kind;
            fz_verdict v;
            if (fz_run(cfg, x->kind, FZ_OUT_FILE, &x->seed->text, NULL, 0, NULL, 0, NULL, &v, &x->reference)) {
                fprintf(stderr, "fuzz: the kill campaign's reference run of %s failed: %s\n", x->seed->name, v.why);
                exit(2);
            }
            x->seconds = v.seconds;
        }
    }
}

/* One case of the edge inputs (fuzz_edges.h): frequencies as text, planes
 * and effects, byte-order marks and NULs, CSV maps, inputs that are not
 * regular files, ODE tolerances. */
static void run_edge_case(const options *o, const fz_config *cfg, counts *c, fz_rng *r, const seeds *projects,
                          const seeds *patterns, const char *label, fz_buf *input, fz_buf *out)
{
    fz_extra x = {0};
    fz_buf map = {0};
    fz_kind kind = FZ_SOLVE;
    const seed_file *base = pick(r, projects);
    fz_buf_set(input, base->text.data, base->text.len);
    char freq[256], descr[300];
    const char *how = "", *ode[13];
    switch (fz_below(r, 8)) {
    case 0:
        fz_edge_freq_list(r, freq, sizeof freq);
        x.freq = freq, x.edge_args = 1, how = "--freq at its edges";
        break;
    case 1:
        kind = FZ_SWEEP;
        if (fz_below(r, 2)) x.start = fz_edge_freq(r);
        if (!x.start || fz_below(r, 2)) x.stop = fz_edge_freq(r);
        x.edge_args = 1, how = "--start/--stop at their edges";
        break;
    case 2:
        kind = fz_below(r, 4) ? FZ_SOLVE : FZ_SWEEP;
        how = fz_edge_project(r, input);
        break;
    case 3:
        if (fz_below(r, 3) == 0) {
            kind = FZ_CODEGEN;
            base = pick(r, patterns);
            fz_buf_set(input, base->text.data, base->text.len);
        }
        how = fz_edge_bytes(r, input);
        break;
    case 4:
        how = fz_edge_csv_case(r, input, &map, "map.csv");
        x.map = &map;
        break;
    case 5: {
        unsigned which = fz_below(r, 4);
        kind = which == 0 ? FZ_SWEEP : which == 1 ? FZ_CODEGEN : FZ_SOLVE;
        if (kind == FZ_CODEGEN) fz_buf_set(input, "", 0);
        if (which == 3) { /* the project is fine, its map is not a file */
            fz_edge_csv_case(r, input, &map, "map.csv");
            x.map = &map;
            x.map_as = fz_below(r, 2) ? FZ_IN_FIFO : FZ_IN_DIR;
        } else {
            x.input = fz_below(r, 2) ? FZ_IN_FIFO : FZ_IN_DIR;
        }
        how = x.input == FZ_IN_FIFO || x.map_as == FZ_IN_FIFO ? "a FIFO with no writer" : "a directory";
        break;
    }
    default:
        kind = FZ_ODE;
        x.problem = fz_edge_ode(r, ode);
        x.ode = ode;
        fz_buf_set(input, "", 0);
        for (int k = 0; ode[k]; k++) { /* the command line is the case's record */
            fz_buf_append(input, ode[k], strlen(ode[k]));
            fz_buf_append(input, "\n", 1);
        }
        how = "ode tolerances and arguments";
        break;
    }
    snprintf(descr, sizeof descr, "%s, %s", kind == FZ_ODE ? x.problem : base->name, how);
    fz_verdict v;
    if (fz_run(cfg, kind, FZ_OUT_FILE, input, &x, 0, NULL, -1, NULL, &v, out))
        keep_failure(o, c, label, kind, input, &v, descr);
    tally(c, kind, &v);
    fz_buf_free(&map);
}

static void usage(void)
{
    fprintf(stderr, "usage: fuzz_tool --tool SOLVENT --src SOURCE_DIR --work DIR [--seed S] [--cases N] "
                    "[--first I] [--seconds T] [--timeout T] [--memory B]\n");
    exit(2);
}

static options parse_options(int argc, char **argv)
{
    options o = {.memory = "64M", .seed = 1, .cases = 1000000, .seconds = 40, .timeout = 60};
    for (int k = 1; k < argc; k++) {
        const char *a = argv[k], *v = k + 1 < argc ? argv[k + 1] : NULL;
        if (!v) usage();
        if (!strcmp(a, "--tool")) o.tool = v;
        else if (!strcmp(a, "--src")) o.src = v;
        else if (!strcmp(a, "--work")) o.work = v;
        else if (!strcmp(a, "--memory")) o.memory = v;
        else if (!strcmp(a, "--seed")) o.seed = strtoull(v, NULL, 10);
        else if (!strcmp(a, "--cases")) o.cases = atol(v);
        else if (!strcmp(a, "--first")) o.first = atol(v);
        else if (!strcmp(a, "--seconds")) o.seconds = atof(v);
        else if (!strcmp(a, "--timeout")) o.timeout = atof(v);
        else usage();
        k++;
    }
    if (!o.tool || !o.src || !o.work) usage();
    return o;
}

/* The failures of an earlier run go: what is there after this one is its own. */
static void clear_failures(const char *work)
{
    char dir[4200], path[4500];
    snprintf(dir, sizeof dir, "%s/failures", work);
    DIR *d = opendir(dir);
    if (!d) return;
    for (struct dirent *e; (e = readdir(d));)
        if (e->d_name[0] != '.') snprintf(path, sizeof path, "%s/%s", dir, e->d_name), unlink(path);
    closedir(d);
}

int main(int argc, char **argv)
{
    options o = parse_options(argc, argv);
    mkdir(o.work, 0700);
    clear_failures(o.work);
    fz_config cfg = {.tool = o.tool, .work = o.work, .timeout_s = o.timeout, .memory = o.memory};
    seeds projects = {0}, patterns = {0};
    char dir[4200];
    snprintf(dir, sizeof dir, "%s/examples", o.src);
    add_seeds(&projects, dir, ".json", project_weight);
    snprintf(dir, sizeof dir, "%s/examples/patterns", o.src);
    add_seeds(&patterns, dir, ".mtx", pattern_weight);
    snprintf(dir, sizeof dir, "%s/tests/fuzz/corpus", o.src);
    add_seeds(&projects, dir, ".json", project_weight);
    add_seeds(&patterns, dir, ".mtx", pattern_weight);
    if (!projects.n || !patterns.n) {
        fprintf(stderr, "fuzz: no seed files under %s\n", o.src);
        return 2;
    }
    double t0 = now();
    counts c = {0};
    if (o.first == 0) run_corpus(&o, &cfg, &c);
    kill_target kills[4];
    int nkills;
    prepare_kills(&cfg, &projects, kills, &nkills);

    fz_buf input = {0}, out = {0};
    long last = o.first + o.cases;
    for (long i = o.first; i < last && now() - t0 < o.seconds; i++) {
        fz_rng r = {o.seed * 0x100000001B3ULL + (unsigned long long)i};
        unsigned what = fz_below(&r, 100);
        char label[64];
        snprintf(label, sizeof label, "case%06ld", i);
        fz_verdict v;
        if (what < 5 && nkills) { /* killed at a random moment of a good run */
            kill_target *k = &kills[fz_below(&r, (unsigned)nkills)];
            double at = k->seconds * 1.2 * (double)(fz_next(&r) % 1000) / 1000.0;
            if (fz_run(&cfg, k->kind, FZ_OUT_FILE, &k->seed->text, NULL, at > 0 ? at : 1e-3, &k->reference, -1, NULL,
                       &v, &out))
                keep_failure(&o, &c, label, k->kind, &k->seed->text, &v, "killed");
            tally(&c, k->kind, &v);
            c.kills++;
            continue;
        }
        if (what < 17) { /* an input at its edges */
            run_edge_case(&o, &cfg, &c, &r, &projects, &patterns, label, &input, &out);
            continue;
        }
        fz_kind kind = what < 59 ? FZ_SOLVE : what < 72 ? FZ_SWEEP : FZ_CODEGEN;
        const seeds *s = kind == FZ_CODEGEN ? &patterns : &projects;
        const seed_file *base = pick(&r, s), *other = pick(&r, s);
        fz_buf_set(&input, base->text.data, base->text.len);
        const char *how = "";
        for (unsigned m = 1 + (fz_below(&r, 3) == 0 ? fz_below(&r, 4) : 0); m; m--) {
            unsigned style = fz_below(&r, 10);
            how = kind == FZ_CODEGEN ? (style < 7 ? fz_mutate_pattern(&r, &input) : fz_mutate_bytes(&r, &input, &other->text))
                                     : (style < 6 ? fz_mutate_json(&r, &input) : fz_mutate_bytes(&r, &input, &other->text));
        }
        char descr[300];
        snprintf(descr, sizeof descr, "%s, %s", base->name, how);
        /* a few write through a symlink, a few name the input itself as the output */
        unsigned w = fz_below(&r, 100);
        fz_output where = w < 4 ? FZ_OUT_SYMLINK : w < 7 ? FZ_OUT_INPUT : FZ_OUT_FILE;
        c.symlinked += where == FZ_OUT_SYMLINK, c.onto_input += where == FZ_OUT_INPUT;
        if (fz_run(&cfg, kind, where, &input, NULL, 0, NULL, -1, NULL, &v, &out))
            keep_failure(&o, &c, label, kind, &input, &v, descr);
        tally(&c, kind, &v);
    }
    printf("fuzz: seed %llu: %ld cases (%ld corpus, %ld solve, %ld sweep, %ld codegen, %ld ode; %ld killed on purpose, "
           "%ld written through a symlink, %ld with the input as the output) in %.1f s\n"
           "fuzz: exits 0: %ld, 1: %ld, 2: %ld, 3: %ld, other: %ld\n"
           "fuzz: %ld crashes, %ld sanitizer reports, %ld hangs, %ld wrong exits, %ld bad messages, %ld data lost; "
           "%ld failing cases\n",
           o.seed, c.cases, c.corpus, c.by_kind[FZ_SOLVE], c.by_kind[FZ_SWEEP], c.by_kind[FZ_CODEGEN], c.by_kind[FZ_ODE], c.kills,
           c.symlinked, c.onto_input, now() - t0, c.exit_code[0], c.exit_code[1], c.exit_code[2], c.exit_code[3], c.exit_code[4], c.crash,
           c.sanitizer, c.hang, c.wrong_exit, c.bad_message, c.data_lost, c.failed);
    fflush(stdout); /* before a sanitizer's exit-time check could end the process */
    fz_buf_free(&input);
    fz_buf_free(&out);
    for (int k = 0; k < nkills; k++) fz_buf_free(&kills[k].reference);
    for (int k = 0; k < projects.n; k++) fz_buf_free(&projects.f[k].text);
    for (int k = 0; k < patterns.n; k++) fz_buf_free(&patterns.f[k].text);
    free(projects.f);
    free(patterns.f);
    return c.failed ? 1 : 0;
}
