/* One fuzz case (fuzz_run.h): the input and a previous output in the work
 * folder, the tool spawned with a time limit, then the checks:
 *   crash        killed by a signal we did not send
 *   sanitizer    an AddressSanitizer / UBSan / LeakSanitizer report
 *   hang         still running at the time limit
 *   wrong exit   an exit code the command does not document for the case,
 *                exit 0 with a missing or non-finite output, a failure
 *                without a message naming the input
 *   bad message  control characters or invalid UTF-8 on stderr
 *   data lost    the input changed, a failed (or killed) run changed the
 *                previous output, or a temporary file was left behind */
#define _GNU_SOURCE
#include "fuzz_run.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <regex.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

extern char **environ;

#define FZ_SANITIZER_EXIT 97 /* ASAN_OPTIONS / UBSAN_OPTIONS exitcode: a report, not a failed run */

static const char previous[] = "solvent fuzz: the previous output, which a failed run must leave alone\n";

static double now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

static int write_file(const char *path, const char *data, size_t len)
{
    FILE *f = fopen(path, "wb");
    if (!f) return -1;
    size_t w = fwrite(data, 1, len, f);
    return fclose(f) == 0 && w == len ? 0 : -1;
}

static int read_file(const char *path, fz_buf *b)
{
    FILE *f = fopen(path, "rb");
    b->len = 0;
    fz_buf_set(b, "", 0);
    if (!f) return -1;
    char chunk[65536];
    size_t got;
    while ((got = fread(chunk, 1, sizeof chunk, f)) > 0) fz_buf_append(b, chunk, got);
    fclose(f);
    return 0;
}

static void flag(fz_verdict *v, int *which, const char *fmt, const char *detail)
{
    *which = 1;
    size_t used = strlen(v->why);
    if (used + 2 < sizeof v->why)
        snprintf(v->why + used, sizeof v->why - used, "%s%s", used ? "; " : "", fmt);
    used = strlen(v->why);
    if (detail && used + 4 < sizeof v->why) snprintf(v->why + used, sizeof v->why - used, " (%.120s)", detail);
}

/* The environment of a run: one thread, passive waiting (no re-exec), and
 * sanitizer reports as a distinct exit code. */
static char **child_environment(void)
{
    size_t n = 0;
    while (environ[n]) n++;
    char **env = calloc(n + 8, sizeof *env);
    size_t k = 0;
    static char asan[1024], ubsan[512];
    const char *a = getenv("ASAN_OPTIONS"), *u = getenv("UBSAN_OPTIONS");
    snprintf(asan, sizeof asan, "ASAN_OPTIONS=exitcode=%d:%s", FZ_SANITIZER_EXIT, a ? a : "");
    snprintf(ubsan, sizeof ubsan, "UBSAN_OPTIONS=exitcode=%d:halt_on_error=1:print_stacktrace=1:%s",
             FZ_SANITIZER_EXIT, u ? u : "");
    for (size_t q = 0; q < n; q++)
        if (strncmp(environ[q], "ASAN_OPTIONS=", 13) && strncmp(environ[q], "UBSAN_OPTIONS=", 14) &&
            strncmp(environ[q], "OMP_", 4) && strncmp(environ[q], "OPENBLAS_NUM_THREADS=", 21) &&
            strncmp(environ[q], "GOMP_", 5))
            env[k++] = environ[q];
    env[k++] = asan;
    env[k++] = ubsan;
    env[k++] = "OMP_WAIT_POLICY=PASSIVE";
    env[k++] = "OMP_NUM_THREADS=1";
    env[k++] = "OPENBLAS_NUM_THREADS=1";
    env[k] = NULL;
    return env;
}

/* Spawn argv with stderr into err_path; wait up to timeout_s (killing it
 * then, or after kill_after_s > 0). Returns the wait status, *timed_out. */
static int run_tool(char *const argv[], const char *err_path, double timeout_s, double kill_after_s, int *timed_out,
                    double *seconds)
{
    static char **env;
    if (!env) env = child_environment();
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_addopen(&fa, STDIN_FILENO, "/dev/null", O_RDONLY, 0);
    posix_spawn_file_actions_addopen(&fa, STDOUT_FILENO, "/dev/null", O_WRONLY, 0);
    posix_spawn_file_actions_addopen(&fa, STDERR_FILENO, err_path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
    pid_t pid;
    double t0 = now();
    int e = posix_spawn(&pid, argv[0], &fa, NULL, argv, env);
    posix_spawn_file_actions_destroy(&fa);
    if (e) {
        fprintf(stderr, "fuzz: cannot run %s: %s\n", argv[0], strerror(e));
        exit(2);
    }
    *timed_out = 0;
    int status = 0, sent = 0;
    for (;;) {
        pid_t w = waitpid(pid, &status, WNOHANG);
        if (w == pid) break;
        if (w < 0 && errno != EINTR) break;
        double t = now() - t0;
        if (!sent && kill_after_s > 0 && t >= kill_after_s) kill(pid, SIGKILL), sent = 1;
        if (!sent && t >= timeout_s) kill(pid, SIGKILL), sent = 1, *timed_out = 1;
        struct timespec nap = {0, t < 0.05 ? 200000 : 2000000};
        nanosleep(&nap, NULL);
    }
    *seconds = now() - t0;
    return status;
}

/* stderr is text a terminal can show: no control characters but the line
 * ends, well-formed UTF-8. Returns 0, or the offset of the first bad byte + 1. */
static size_t bad_text(const fz_buf *b)
{
    const unsigned char *s = (const unsigned char *)b->data;
    for (size_t k = 0; k < b->len;) {
        unsigned c = s[k];
        if (c == '\n' || (c >= 0x20 && c < 0x7f)) {
            k++;
            continue;
        }
        int len = c >= 0xf0 && c <= 0xf4 ? 4 : c >= 0xe0 ? 3 : c >= 0xc2 && c < 0xe0 ? 2 : 0;
        if (!len || k + (size_t)len > b->len) return k + 1;
        for (int q = 1; q < len; q++)
            if ((s[k + q] & 0xc0) != 0x80) return k + 1;
        if (c == 0xc2 && s[k + 1] < 0xa0) return k + 1; /* a C1 control */
        k += (size_t)len;
    }
    return 0;
}

/* A finished Touchstone file: an option line, data lines of finite numbers. */
static const char *touchstone_problem(const fz_buf *out)
{
    if (!strstr(out->data, "\n# ") && strncmp(out->data, "# ", 2)) return "no option line";
    if (out->len == 0 || out->data[out->len - 1] != '\n') return "does not end with a newline";
    for (const char *line = out->data; *line;) {
        const char *end = strchr(line, '\n');
        size_t n = end ? (size_t)(end - line) : strlen(line);
        if (line[0] != '!' && line[0] != '#' && line[0] != '[')
            for (size_t k = 0; k + 2 < n; k++)
                if (!strncasecmp(line + k, "nan", 3) || !strncasecmp(line + k, "inf", 3)) return "a non-finite value";
        line += n + (end != NULL);
    }
    return NULL;
}

/* Files in the work folder that look like temporaries. */
static int leftovers(const char *work, char *name, size_t len)
{
    DIR *d = opendir(work);
    if (!d) return 0;
    int found = 0;
    for (struct dirent *e; (e = readdir(d));)
        if (strstr(e->d_name, ".tmp")) {
            snprintf(name, len, "%s", e->d_name);
            found = 1;
            char p[4200];
            snprintf(p, sizeof p, "%s/%s", work, e->d_name);
            unlink(p); /* reported once, not again by every later case */
        }
    closedir(d);
    return found;
}

static int matches(const char *text, const char *regex)
{
    regex_t re;
    if (regcomp(&re, regex, REG_EXTENDED | REG_NOSUB)) return 0;
    int ok = regexec(&re, text, 0, NULL, 0) == 0;
    regfree(&re);
    return ok;
}

/* The exit codes a run of `kind` may end with (1 for each allowed code). */
static int allowed_exit(fz_kind kind, const fz_extra *x, int rc, const fz_buf *err)
{
    if (rc == 0 || rc == 1) return 1;
    if (kind == FZ_SWEEP && rc == 3) return 1; /* written, tolerance not met */
    /* a mutated port count meets the Touchstone name rule */
    if (kind != FZ_CODEGEN && rc == 2 && strstr(err->data, "-port result needs a name ending in")) return 1;
    /* arguments at their edges: refused as bad arguments, naming the option or the value */
    if (rc == 2 && (kind == FZ_ODE || x->edge_args) && strstr(err->data, "solvent ")) return 1;
    return 0;
}

/* Whatever an earlier case left at path (a file, a FIFO, a folder) goes. */
static void clear_path(const char *path)
{
    if (unlink(path) && errno == EISDIR) rmdir(path);
    rmdir(path);
}

/* path as `as` asks: the bytes of b in a regular file, a FIFO with no
 * writer, or an empty folder. 0 or -1. */
static int make_input(const char *path, fz_input as, const fz_buf *b)
{
    if (as == FZ_IN_FIFO) return mkfifo(path, 0600);
    if (as == FZ_IN_DIR) return mkdir(path, 0700);
    return write_file(path, b->data, b->len);
}

/* The input, and the output's previous state as `where` asks. */
static void prepare(const fz_config *cfg, fz_output where, const char *in, const char *out, const char *real,
                    const char *map, const fz_buf *input, const fz_extra *x)
{
    clear_path(in);
    clear_path(map);
    unlink(out);
    unlink(real);
    int bad = x->problem ? 0 : make_input(in, x->input, input);
    if (x->map) bad |= make_input(map, x->map_as, x->map);
    if (where == FZ_OUT_FILE) bad |= write_file(out, previous, sizeof previous - 1);
    if (where == FZ_OUT_SYMLINK)
        bad |= write_file(real, previous, sizeof previous - 1) | symlink(strrchr(real, '/') + 1, out);
    if (where == FZ_OUT_INPUT) bad |= link(in, out);
    if (bad) {
        fprintf(stderr, "fuzz: cannot prepare the case in %s: %s\n", cfg->work, strerror(errno));
        exit(2);
    }
}

/* The command line of a case: the kind's arguments, the extras, the memory limit. */
static void command_line(const fz_config *cfg, fz_kind kind, const fz_extra *x, const char *in, const char *out,
                         char **argv)
{
    int a = 0;
    argv[a++] = (char *)cfg->tool;
    if (kind == FZ_CODEGEN) {
        char *rest[] = {"codegen", (char *)in, "-o", (char *)out, "--max-updates", "20000", "--max-subst", "20000", NULL};
        for (int k = 0; rest[k]; k++) argv[a++] = rest[k];
    } else if (kind == FZ_SOLVE) {
        char *rest[] = {"solve", (char *)in, "--freq", x->freq ? (char *)x->freq : "1GHz,3.5GHz", "-o", (char *)out,
                        "--threads", "1", NULL};
        for (int k = 0; rest[k]; k++) argv[a++] = rest[k];
    } else if (kind == FZ_SWEEP) {
        char *rest[] = {"sweep", (char *)in, "-o", (char *)out, "--points", "4", "--max-exact", "4", "--threads", "1",
                        "--device", "cpu", "--quiet", NULL};
        for (int k = 0; rest[k]; k++) argv[a++] = rest[k];
        if (x->start) argv[a++] = "--start", argv[a++] = (char *)x->start;
        if (x->stop) argv[a++] = "--stop", argv[a++] = (char *)x->stop;
    } else {
        argv[a++] = "ode";
        argv[a++] = (char *)x->problem;
        for (int k = 0; x->ode && x->ode[k] && k < 12; k++) argv[a++] = (char *)x->ode[k];
        char *rest[] = {"--threads", "1", "--quiet", "--out", (char *)out, NULL};
        for (int k = 0; rest[k]; k++) argv[a++] = rest[k];
        argv[a] = NULL;
        return; /* ode has no --memory-limit */
    }
    if (strcmp(cfg->memory, "none")) { /* "none": for builds older than the option */
        argv[a++] = "--memory-limit";
        argv[a++] = (char *)cfg->memory;
    }
    argv[a] = NULL;
}

/* What a finished run wrote, or why it is no result (NULL: fine). */
static const char *output_problem(fz_kind kind, const fz_buf *output)
{
    if (kind == FZ_CODEGEN) return strstr(output->data, "const sv_sparse_kernels") ? NULL : "no kernel table";
    if (kind != FZ_ODE) return touchstone_problem(output);
    if (strncmp(output->data, "traj,status,t", 13)) return "no CSV header";
    for (size_t k = 0; k + 3 <= output->len; k++)
        if (!strncasecmp(output->data + k, "nan", 3) || !strncasecmp(output->data + k, "inf", 3))
            return "a non-finite value";
    return NULL;
}

/* An input that is not a regular file (the project, or its map) must be
 * refused at once, naming the file and what it is. */
static void check_not_regular(const fz_extra *x, const fz_buf *e, fz_verdict *v)
{
    int project = x->input != FZ_IN_FILE;
    const char *name = project ? "case." : "map.csv";
    if (v->rc != 1 || !strstr(e->data, name) ||
        (!strstr(e->data, "is a directory") && !strstr(e->data, "not a regular file")))
        flag(v, &v->wrong_exit, project ? "a project that is not a regular file was not refused"
                                        : "a map that is not a regular file was not refused",
             e->data);
}

int fz_run(const fz_config *cfg, fz_kind kind, fz_output where, const fz_buf *input, const fz_extra *x,
           double kill_after_s, const fz_buf *reference, int expect_rc, const char *expect_msg, fz_verdict *v,
           fz_buf *output)
{
    static const fz_extra none = {0};
    if (!x) x = &none;
    memset(v, 0, sizeof *v);
    char in[4200], out[4200], real[4200], err[4200], map[4200];
    const char *ext = kind == FZ_CODEGEN ? "c" : kind == FZ_ODE ? "csv" : "s2p";
    snprintf(in, sizeof in, "%s/case.%s", cfg->work, kind == FZ_CODEGEN ? "mtx" : "json");
    snprintf(out, sizeof out, "%s/out.%s", cfg->work, ext);
    snprintf(real, sizeof real, "%s/real.%s", cfg->work, ext);
    snprintf(err, sizeof err, "%s/stderr.txt", cfg->work);
    snprintf(map, sizeof map, "%s/map.csv", cfg->work);
    prepare(cfg, where, in, out, real, map, input, x);
    char *argv[40];
    command_line(cfg, kind, x, in, out, argv);

    int timed_out;
    int status = run_tool(argv, err, cfg->timeout_s, kill_after_s, &timed_out, &v->seconds);
    int regular = x->input == FZ_IN_FILE && (!x->map || x->map_as == FZ_IN_FILE);
    fz_buf e = {0}, now_in = {0};
    read_file(err, &e);
    read_file(out, output); /* through the symlink, when there is one */
    if (x->input == FZ_IN_FILE && !x->problem) read_file(in, &now_in); /* a FIFO would block */
    clear_path(in), clear_path(map); /* no FIFO left for the next case's writer to block on */
    struct stat ls;
    if (where == FZ_OUT_SYMLINK && (lstat(out, &ls) || !S_ISLNK(ls.st_mode)))
        flag(v, &v->data_lost, "the output's symlink was replaced", NULL);
    int killed = WIFSIGNALED(status);
    v->rc = killed ? -WTERMSIG(status) : WEXITSTATUS(status);

    if (timed_out) flag(v, &v->hang, "still running at the time limit", NULL);
    else if (killed && kill_after_s <= 0) flag(v, &v->crash, "killed by a signal", strsignal(WTERMSIG(status)));
    if (v->rc == FZ_SANITIZER_EXIT || strstr(e.data, "AddressSanitizer") || strstr(e.data, "LeakSanitizer") ||
        strstr(e.data, "runtime error:"))
        flag(v, &v->sanitizer, "a sanitizer report", e.data);
    size_t bad = bad_text(&e);
    if (bad) flag(v, &v->bad_message, "a control character or invalid UTF-8 on stderr", e.data + bad - 1);
    if (x->input == FZ_IN_FILE && !x->problem &&
        (now_in.len != input->len || memcmp(now_in.data, input->data, input->len)))
        flag(v, &v->data_lost, "the input file changed", NULL);
    char tmpname[256];
    if (leftovers(cfg->work, tmpname, sizeof tmpname)) flag(v, &v->data_lost, "a temporary file was left", tmpname);
    int unchanged = output->len == sizeof previous - 1 && !memcmp(output->data, previous, output->len);

    if (where == FZ_OUT_INPUT && !killed && !timed_out) {
        if (v->rc != 2 || !strstr(e.data, "is the input file"))
            flag(v, &v->wrong_exit, "an output that is the input was not refused", e.data);
    } else if (killed && kill_after_s > 0 && !timed_out) {
        /* killed on purpose: the previous output, or the whole new one */
        int whole = reference && output->len == reference->len && !memcmp(output->data, reference->data, output->len);
        if (!unchanged && !whole) flag(v, &v->data_lost, "a killed run left a partial output", NULL);
    } else if (!killed && !timed_out && v->rc != FZ_SANITIZER_EXIT) {
        if (!regular) check_not_regular(x, &e, v);
        if (expect_rc >= 0 && v->rc != expect_rc) {
            char d[64];
            snprintf(d, sizeof d, "exit %d, the corpus expects %d", v->rc, expect_rc);
            flag(v, &v->wrong_exit, "a corpus case's exit code", d);
        } else if (expect_rc < 0 && !allowed_exit(kind, x, v->rc, &e)) {
            flag(v, &v->wrong_exit, "an exit code the command does not document here", e.data);
        }
        if (expect_msg && !matches(e.data, expect_msg)) flag(v, &v->wrong_exit, "not the corpus case's message", e.data);
        if (v->rc == 0 || v->rc == 3) {
            const char *why = unchanged ? "the output was not written" : output_problem(kind, output);
            if (why) flag(v, &v->wrong_exit, "exit 0 with a bad output", why);
        } else {
            if (!unchanged) flag(v, &v->data_lost, "a failed run changed the previous output", NULL);
            if (!strstr(e.data, "solvent ")) flag(v, &v->wrong_exit, "a failure without a message", NULL);
            else if (v->rc == 1 && kind != FZ_ODE && !strstr(e.data, "case."))
                flag(v, &v->wrong_exit, "a message not naming the input", e.data);
        }
    }
    fz_buf_free(&e);
    fz_buf_free(&now_in);
    return v->crash | v->sanitizer | v->hang | v->wrong_exit | v->bad_message | v->data_lost;
}
