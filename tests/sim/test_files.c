/*
 * test_files.c -- what dyadc and its simulators write and spawn (issue 14):
 *   - `build -o X`: intermediates in a private directory removed afterwards
 *     (a user's X.o untouched, nothing left in TMPDIR or beside X), the
 *     result renamed into place (a symbolic link at X replaced, its target
 *     untouched; a failed build leaves the old X), `-o DIR` refused;
 *   - the linker and gnuplot are the ones found at configure time: a `cc`
 *     or `gnuplot` first on PATH is never run;
 *   - `--plot` names reach gnuplot as data: a newline and `!cmd` in the
 *     plot file name run nothing.
 * Every case works in its own mkdtemp directory.
 */
#define _XOPEN_SOURCE 700 /* nftw */
#include <check.h>

#include "../check_run.h"
#include <dirent.h>
#include <ftw.h>
#include <sys/stat.h>

#include "simtest.h"

#define DYADC st_path("DYADC_BUILD_DIR", "dyadc")
#define SRC(rel) st_path("DYADC_SOURCE_DIR", rel)
#define MODEL SRC("tests/sim/e2e/friction.dyad")

static char *path_in(const char *dir, const char *name) {
    static char buf[8][4096];
    static int k;
    char *b = buf[k++ % 8];
    snprintf(b, 4096, "%s/%s", dir, name);
    return b;
}

static char *new_dir(void) {
    char tmpl[] = "/tmp/dyadc_files_XXXXXX";
    char *d = mkdtemp(tmpl);
    ck_assert_ptr_nonnull(d);
    return strdup(d);
}

static int remove_one(const char *path, const struct stat *st, int flag, struct FTW *f) {
    (void)st, (void)flag, (void)f;
    return remove(path);
}

/* rm -r dir (the case's own directory) */
static void remove_tree(const char *dir) { nftw(dir, remove_one, 16, FTW_DEPTH | FTW_PHYS); }

static void write_file(const char *path, const char *text, int mode) {
    FILE *f = fopen(path, "w");
    ck_assert_ptr_nonnull(f);
    fputs(text, f);
    fclose(f);
    chmod(path, (mode_t)mode);
}

static int exists(const char *path) {
    struct stat st;
    return lstat(path, &st) == 0;
}

/* the names in dir, comma separated, sorted by readdir order */
static int count_entries(const char *dir) {
    DIR *d = opendir(dir);
    int n = 0;
    for (struct dirent *e; d && (e = readdir(d));)
        n += strcmp(e->d_name, ".") != 0 && strcmp(e->d_name, "..") != 0;
    if (d) closedir(d);
    return n;
}

static void assert_contains(const char *text, const char *needle) {
    ck_assert_msg(strstr(text, needle) != NULL, "expected \"%s\" in:\n%s", needle, text);
}

/* A directory holding fake `cc` and `gnuplot` that leave `marker` behind
 * and exit 0 without doing anything; put first on PATH. */
static char *fake_tools(const char *dir, const char *marker) {
    char *bin = strdup(path_in(dir, "fakebin"));
    mkdir(bin, 0755);
    char script[4200];
    snprintf(script, sizeof script, "#!/bin/sh\ntouch '%s'\nexit 0\n", marker);
    write_file(path_in(bin, "cc"), script, 0755);
    write_file(path_in(bin, "gnuplot"), script, 0755);
    char path[8192];
    snprintf(path, sizeof path, "%s:%s", bin, getenv("PATH") ? getenv("PATH") : "/usr/bin");
    setenv("PATH", path, 1);
    return bin;
}

static int build(const char *out, const char *model, const char *log) {
    char *argv[] = {(char *)DYADC, "build", (char *)MODEL, "--no-stdlib", "--model", (char *)model,
                    "-o", (char *)out, NULL};
    return st_run(argv, log);
}

static int runs(const char *exe, const char *dir) {
    char *argv[] = {(char *)exe, "--stop", "1", "-o", path_in(dir, "run.csv"), NULL};
    return st_run(argv, path_in(dir, "run.log"));
}

START_TEST(build_output_is_safe) {
    char *dir = new_dir(), *tmp = strdup(path_in(dir, "tmp"));
    mkdir(tmp, 0700);
    setenv("TMPDIR", tmp, 1);
    char *old_path = strdup(getenv("PATH") ? getenv("PATH") : "/usr/bin");
    char *marker = strdup(path_in(dir, "fake_tool_ran"));
    char *bin = fake_tools(dir, marker);
    /* X.o of the user's stays; the link is the configured one, not PATH's cc */
    char *exe = strdup(path_in(dir, "sim")), *obj = strdup(path_in(dir, "sim.o"));
    write_file(obj, "mine\n", 0644);
    ck_assert_int_eq(build(exe, "Friction", path_in(dir, "b1.log")), 0);
    char *text = st_slurp(obj);
    ck_assert_str_eq(text, "mine\n");
    free(text);
    ck_assert_msg(!exists(marker), "a cc found on PATH was run");
    ck_assert_int_eq(runs(exe, dir), 0);   /* friction up to t = 1: no event yet */
    /* nothing left behind: the private directory is gone, no temporary beside exe */
    ck_assert_int_eq(count_entries(tmp), 0);
    /* dir: tmp, fakebin, sim, sim.o, b1.log, run.csv, run.log */
    ck_assert_int_eq(count_entries(dir), 7);
    /* a failed build leaves the old executable as it was */
    struct stat before, after;
    ck_assert_int_eq(stat(exe, &before), 0);
    ck_assert_int_ne(build(exe, "NoSuchModel", path_in(dir, "b2.log")), 0);
    ck_assert_int_eq(stat(exe, &after), 0);
    ck_assert(before.st_ino == after.st_ino && before.st_size == after.st_size);
    ck_assert_int_eq(count_entries(tmp), 0);
    /* -o DIR: refused before any work, nothing written into or beside it */
    char *sub = strdup(path_in(dir, "sub"));
    mkdir(sub, 0755);
    ck_assert_int_eq(build(sub, "Friction", path_in(dir, "b3.log")), 1);
    text = st_slurp(path_in(dir, "b3.log"));
    assert_contains(text, "is a directory");
    free(text);
    ck_assert_int_eq(count_entries(sub), 0);
    ck_assert(!exists(path_in(dir, "sub.o")));
    /* -o a symbolic link: the link is replaced, its target never written */
    char *target = strdup(path_in(dir, "target")), *link_path = strdup(path_in(dir, "link"));
    write_file(target, "target\n", 0644);
    ck_assert_int_eq(symlink(target, link_path), 0);
    ck_assert_int_eq(build(link_path, "Friction", path_in(dir, "b4.log")), 0);
    text = st_slurp(target);
    ck_assert_str_eq(text, "target\n");
    free(text);
    struct stat ls;
    ck_assert_int_eq(lstat(link_path, &ls), 0);
    ck_assert(S_ISREG(ls.st_mode) && (ls.st_mode & S_IXUSR));
    ck_assert_int_eq(count_entries(tmp), 0);
    setenv("PATH", old_path, 1);
    unsetenv("TMPDIR");
    free(sub), free(target), free(link_path), free(exe), free(obj), free(bin), free(marker);
    remove_tree(dir);
    free(old_path), free(tmp), free(dir);
}
END_TEST

/* -o naming the source being compiled (by another path, a symbolic link
 * included): refused, the source untouched (before: replaced by the
 * executable). */
START_TEST(build_output_is_not_the_source) {
    char *dir = new_dir();
    char *src = strdup(path_in(dir, "m.dyad")), *alias = strdup(path_in(dir, "alias.dyad"));
    char *text = st_slurp(MODEL);
    write_file(src, text, 0644);
    ck_assert_int_eq(symlink(src, alias), 0);
    const char *outs[] = {src, alias};
    for (int i = 0; i < 2; i++) {
        char *argv[] = {(char *)DYADC, "build", src, "--no-stdlib", "--model", "Friction", "-o",
                        (char *)outs[i], NULL};
        ck_assert_int_eq(st_run(argv, path_in(dir, "b.log")), 1);
        char *log = st_slurp(path_in(dir, "b.log"));
        assert_contains(log, "is the source file");
        free(log);
        char *now = st_slurp(src);
        ck_assert_str_eq(now, text);
        free(now);
    }
    ck_assert_int_eq(count_entries(dir), 3);   /* m.dyad, alias.dyad, b.log */
    free(text), free(src), free(alias);
    remove_tree(dir);
    free(dir);
}
END_TEST

/* ---- --plot ---------------------------------------------------------------- */

static int file_starts_with(const char *path, const char *magic, size_t n) {
    FILE *f = fopen(path, "rb");
    if (!f) return 0;
    char buf[16] = {0};
    size_t got = fread(buf, 1, n, f);
    fclose(f);
    return got == n && memcmp(buf, magic, n) == 0;
}

static int plot(const char *dir, const char *csv, const char *png, const char *log) {
    char *argv[] = {(char *)DYADC, "run", "--model", "ElectricalComponents.Examples.RLC", "--vars",
                    "capacitor.v,inductor.i", "-o", path_in(dir, csv), "--plot", (char *)png, NULL};
    return st_run(argv, path_in(dir, log));
}

START_TEST(plot_names_are_data) {
    char *dir = new_dir();
    char *old_path = strdup(getenv("PATH") ? getenv("PATH") : "/usr/bin");
    char *marker = strdup(path_in(dir, "fake_tool_ran"));
    char *bin = fake_tools(dir, marker);
    char *png = strdup(path_in(dir, "plot.png"));
    int rc = plot(dir, "a.csv", png, "a.log");
    char *text = st_slurp(path_in(dir, "a.log"));
    if (rc == 1 && strstr(text, "gnuplot was not found when this runtime was configured")) {
        fprintf(stderr, "plot: no gnuplot at configure time, only the message is checked\n");
        free(text);
        setenv("PATH", old_path, 1);
        remove_tree(dir);
        return;
    }
    ck_assert_msg(rc == 0, "--plot failed:\n%s", text);
    free(text);
    ck_assert(file_starts_with(png, "\x89PNG", 4));
    ck_assert_msg(!exists(marker), "a gnuplot found on PATH was run");
    /* a newline and a gnuplot shell escape in the name: just a name */
    char *evil = strdup(path_in(dir, "p'q\n!touch pwned\n.png"));
    char *pwned = strdup(path_in(dir, "pwned"));
    ck_assert_int_eq(plot(dir, "b.csv", evil, "b.log"), 0);
    ck_assert_msg(!exists(pwned) && !exists("pwned"), "the plot file name ran a command");
    ck_assert(file_starts_with(evil, "\x89PNG", 4));
    char *svg = strdup(path_in(dir, "plot.svg"));
    ck_assert_int_eq(plot(dir, "c.csv", svg, "c.log"), 0);
    ck_assert(file_starts_with(svg, "<?xml", 5));
    /* a format gnuplot is not asked for */
    ck_assert_int_eq(plot(dir, "d.csv", "x.pdf", "d.log"), 1);
    text = st_slurp(path_in(dir, "d.log"));
    assert_contains(text, "must end in .png or .svg");
    free(text);
    setenv("PATH", old_path, 1);
    remove_tree(dir);
    free(evil), free(pwned), free(svg), free(png), free(bin), free(marker), free(old_path), free(dir);
}
END_TEST

static Suite *suite(void) {
    Suite *s = suite_create("files");
    TCase *tc = tcase_create("files");
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, build_output_is_safe);
    tcase_add_test(tc, build_output_is_not_the_source);
    tcase_add_test(tc, plot_names_are_data);
    suite_add_tcase(s, tc);
    return s;
}

int main(void) {
    int failed = check_failures(suite());
    return failed ? 1 : 0;
}
