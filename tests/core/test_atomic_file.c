/* sv_atomic_file against what a hostile or unlucky run does to an output
 * path: symlinks (followed, their target replaced), special files (written
 * through, never replaced: a FIFO, and a private device node as root),
 * a directory, a writer killed by SIGKILL (nothing left behind), and the
 * named temporaries of file systems without O_TMPFILE (stale ones cleaned
 * on the next open, live ones left alone). */
#define _GNU_SOURCE
#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/wait.h>
#include <unistd.h>

#include "core/atomic_file_internal.h"
#include "sv_test.h"

typedef struct fixture {
    char dir[64];
} fixture;

static int setup(void **state)
{
    fixture *fx = calloc(1, sizeof *fx);
    snprintf(fx->dir, sizeof fx->dir, "/tmp/sv_atomic_XXXXXX");
    if (!mkdtemp(fx->dir)) return -1;
    *state = fx;
    return 0;
}

static int teardown(void **state)
{
    fixture *fx = *state;
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", fx->dir);
    if (system(cmd) != 0) return -1;
    free(fx);
    return 0;
}

static void in_dir(const fixture *fx, const char *name, char *out, size_t len)
{
    snprintf(out, len, "%s/%s", fx->dir, name);
}

static void write_text(const char *path, const char *text, int commit)
{
    sv_atomic_file *a;
    assert_int_equal(sv_atomic_file_open(path, &a), SV_OK);
    fputs(text, sv_atomic_file_stream(a));
    assert_int_equal(sv_atomic_file_close(a, commit), SV_OK);
}

static void assert_content(const char *path, const char *want)
{
    char buf[256] = {0};
    FILE *f = fopen(path, "r");
    assert_non_null(f);
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    fclose(f);
    buf[n] = 0;
    assert_string_equal(buf, want);
}

/* Entries of the fixture's folder other than . and .. */
static int count_entries(const fixture *fx)
{
    DIR *d = opendir(fx->dir);
    assert_non_null(d);
    int n = 0;
    for (struct dirent *e; (e = readdir(d));) n += strcmp(e->d_name, ".") && strcmp(e->d_name, "..");
    closedir(d);
    return n;
}

static void test_symlinks_followed(void **state)
{
    fixture *fx = *state;
    char real[128], rel[128], abs[128], chain[128], dangling[128], created[128];
    in_dir(fx, "real.txt", real, sizeof real);
    in_dir(fx, "rel.txt", rel, sizeof rel);
    in_dir(fx, "abs.txt", abs, sizeof abs);
    in_dir(fx, "chain.txt", chain, sizeof chain);
    in_dir(fx, "dangling.txt", dangling, sizeof dangling);
    in_dir(fx, "created.txt", created, sizeof created);
    write_text(real, "old\n", 1);
    assert_int_equal(symlink("real.txt", rel), 0);
    assert_int_equal(symlink(real, abs), 0);
    assert_int_equal(symlink("rel.txt", chain), 0);
    assert_int_equal(symlink("created.txt", dangling), 0);
    const char *through[] = {rel, abs, chain};
    for (int k = 0; k < 3; k++) {
        char text[32];
        snprintf(text, sizeof text, "new %d\n", k);
        write_text(through[k], text, 1);
        struct stat sb;
        assert_int_equal(lstat(through[k], &sb), 0);
        assert_true(S_ISLNK(sb.st_mode)); /* the link stays a link */
        assert_content(real, text);       /* and its target was replaced */
    }
    /* a link to a file not there yet: the file is created, the link kept */
    write_text(dangling, "made\n", 1);
    struct stat sb;
    assert_int_equal(lstat(dangling, &sb), 0);
    assert_true(S_ISLNK(sb.st_mode));
    assert_content(created, "made\n");
    /* a loop of links: an error naming the path */
    char loop_a[128], loop_b[128];
    in_dir(fx, "loop_a", loop_a, sizeof loop_a);
    in_dir(fx, "loop_b", loop_b, sizeof loop_b);
    assert_int_equal(symlink("loop_b", loop_a), 0);
    assert_int_equal(symlink("loop_a", loop_b), 0);
    sv_atomic_file *a;
    assert_int_equal(sv_atomic_file_open(loop_a, &a), SV_ERR_IO);
    assert_non_null(strstr(sv_last_error(), "loop_a"));
}

static void test_fifo_streamed(void **state)
{
    fixture *fx = *state;
    char fifo[128];
    in_dir(fx, "out.fifo", fifo, sizeof fifo);
    assert_int_equal(mkfifo(fifo, 0600), 0);
    /* a reader that is there before the writer (and never blocks the test) */
    int rd = open(fifo, O_RDONLY | O_NONBLOCK);
    assert_true(rd >= 0);
    write_text(fifo, "streamed\n", 1);
    char got[64] = {0};
    ssize_t n = read(rd, got, sizeof got - 1);
    close(rd);
    assert_true(n >= 0);
    assert_string_equal(got, "streamed\n");
    struct stat sb;
    assert_int_equal(lstat(fifo, &sb), 0);
    assert_true(S_ISFIFO(sb.st_mode));
    assert_int_equal(count_entries(fx), 1);
}

/* Root only: a private copy of /dev/null (char 1, 3) stays a device node
 * when written to, through itself and through a symlink. */
static void test_device_node_kept(void **state)
{
    fixture *fx = *state;
    if (geteuid() != 0) {
        print_message("not root: mknod needs root, device-node check skipped\n");
        skip();
    }
    char node[128], link[128];
    in_dir(fx, "null", node, sizeof node);
    in_dir(fx, "null.s2p", link, sizeof link);
    assert_int_equal(mknod(node, S_IFCHR | 0666, makedev(1, 3)), 0);
    assert_int_equal(symlink("null", link), 0);
    write_text(node, "discarded\n", 1);
    write_text(link, "discarded\n", 1);
    write_text(node, "dropped\n", 0);
    struct stat sb;
    assert_int_equal(lstat(node, &sb), 0);
    assert_true(S_ISCHR(sb.st_mode));
    assert_int_equal(sb.st_rdev, makedev(1, 3));
    assert_int_equal(lstat(link, &sb), 0);
    assert_true(S_ISLNK(sb.st_mode));
    assert_int_equal(count_entries(fx), 2);
}

static void test_directory_refused(void **state)
{
    fixture *fx = *state;
    sv_atomic_file *a;
    assert_int_equal(sv_atomic_file_open(fx->dir, &a), SV_ERR_IO);
    assert_non_null(strstr(sv_last_error(), "is a directory"));
    assert_int_equal(sv_atomic_file_open("", &a), SV_ERR_ARG);
}

/* A child writes half a file and is killed; returns its wait status. */
static int killed_writer(const char *path, int anonymous)
{
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        sv_atomic_file *a;
        if (sv_atomic_file_open_as(path, anonymous, &a) != SV_OK) _exit(3);
        fputs("half a file", sv_atomic_file_stream(a));
        fflush(sv_atomic_file_stream(a));
        raise(SIGKILL);
        _exit(4);
    }
    int ws;
    assert_int_equal(waitpid(pid, &ws, 0), pid);
    return ws;
}

static void test_kill_leaves_nothing(void **state)
{
    fixture *fx = *state;
    char out[128];
    in_dir(fx, "out.s2p", out, sizeof out);
    write_text(out, "previous\n", 1);
    int ws = killed_writer(out, 1);
    assert_true(WIFSIGNALED(ws) && WTERMSIG(ws) == SIGKILL);
    assert_int_equal(count_entries(fx), 1); /* no temporary beside it */
    assert_content(out, "previous\n");
}

static void test_named_temporaries_cleaned(void **state)
{
    fixture *fx = *state;
    char out[128], live[128], other[128], shortname[128];
    in_dir(fx, "out.s2p", out, sizeof out);
    write_text(out, "previous\n", 1);
    /* the named fallback leaves its temporary when killed ... */
    int ws = killed_writer(out, 0);
    assert_true(WIFSIGNALED(ws) && WTERMSIG(ws) == SIGKILL);
    assert_int_equal(count_entries(fx), 2);
    assert_content(out, "previous\n");
    /* ... a live writer's temporary (locked), another target's and a name
     * not of our pattern are left alone by the next open ... */
    in_dir(fx, "out.s2p.tmpLive00", live, sizeof live);
    in_dir(fx, "other.s2p.tmpAbCdEf", other, sizeof other);
    in_dir(fx, "out.s2p.tmpAbC", shortname, sizeof shortname);
    int fd = open(live, O_CREAT | O_WRONLY, 0600);
    assert_true(fd >= 0);
    assert_int_equal(flock(fd, LOCK_EX), 0);
    for (int k = 0; k < 2; k++) {
        int g = open(k ? shortname : other, O_CREAT | O_WRONLY, 0600);
        assert_true(g >= 0);
        close(g);
    }
    assert_int_equal(count_entries(fx), 5);
    /* ... which removes the dead writer's, in either kind of open */
    sv_atomic_file *a;
    assert_int_equal(sv_atomic_file_open_as(out, 0, &a), SV_OK);
    fputs("next\n", sv_atomic_file_stream(a));
    assert_int_equal(sv_atomic_file_close(a, 1), SV_OK);
    assert_content(out, "next\n");
    assert_int_equal(count_entries(fx), 4);
    assert_int_equal(access(live, F_OK), 0);
    assert_int_equal(access(other, F_OK), 0);
    assert_int_equal(access(shortname, F_OK), 0);
    /* the live writer died: now its temporary goes too */
    close(fd);
    ws = killed_writer(out, 0);
    assert_true(WIFSIGNALED(ws));
    write_text(out, "last\n", 1);
    assert_int_equal(count_entries(fx), 3);
    assert_int_equal(access(live, F_OK), -1);
    assert_content(out, "last\n");
}

/* Both kinds of temporary: discarded leaves nothing, committed replaces
 * the file with an ordinary mode. */
static void test_both_kinds_commit_and_discard(void **state)
{
    fixture *fx = *state;
    char out[128];
    in_dir(fx, "out.txt", out, sizeof out);
    mode_t mask = umask(0);
    umask(mask);
    for (int anonymous = 0; anonymous < 2; anonymous++) {
        sv_atomic_file *a;
        int before = count_entries(fx);
        assert_int_equal(sv_atomic_file_open_as(out, anonymous, &a), SV_OK);
        fputs("half", sv_atomic_file_stream(a));
        assert_int_equal(sv_atomic_file_close(a, 0), SV_OK);
        assert_int_equal(count_entries(fx), before);
        assert_int_equal(sv_atomic_file_open_as(out, anonymous, &a), SV_OK);
        fputs(anonymous ? "anonymous\n" : "named\n", sv_atomic_file_stream(a));
        assert_int_equal(sv_atomic_file_close(a, 1), SV_OK);
        assert_content(out, anonymous ? "anonymous\n" : "named\n");
        struct stat sb;
        assert_int_equal(stat(out, &sb), 0);
        assert_int_equal(sb.st_mode & 0777, 0666 & ~mask);
        assert_int_equal(count_entries(fx), 1);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_symlinks_followed, setup, teardown),
        cmocka_unit_test_setup_teardown(test_fifo_streamed, setup, teardown),
        cmocka_unit_test_setup_teardown(test_device_node_kept, setup, teardown),
        cmocka_unit_test_setup_teardown(test_directory_refused, setup, teardown),
        cmocka_unit_test_setup_teardown(test_kill_leaves_nothing, setup, teardown),
        cmocka_unit_test_setup_teardown(test_named_temporaries_cleaned, setup, teardown),
        cmocka_unit_test_setup_teardown(test_both_kinds_commit_and_discard, setup, teardown),
    };
    return cmocka_run_group_tests_name("atomic_file", tests, NULL, NULL);
}
