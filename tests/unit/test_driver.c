/*
 * test_driver.c -- the phase clock (compiler/driver/progress.c): on a
 * terminal, a phase running longer than PHASE_PROGRESS_AFTER is announced
 * while it runs and its time printed at its end; with -v every phase is
 * announced at its start, on a terminal or not; --time-passes prints one
 * line per phase.  stderr is pointed at a pseudo-terminal or a pipe.
 */
#define _XOPEN_SOURCE 700 /* posix_openpt, grantpt, unlockpt, ptsname */
#include <check.h>

#include "../check_run.h"
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "driver.h"

/* stderr -> the slave side of a new pty (tty) or a pipe; returns the fd to
 * read from, saves the old stderr in *saved */
static int redirect_stderr(bool tty, int *saved) {
    int rd, wr;
    if (tty) {
        rd = posix_openpt(O_RDWR | O_NOCTTY);
        ck_assert_int_ge(rd, 0);
        ck_assert_int_eq(grantpt(rd), 0);
        ck_assert_int_eq(unlockpt(rd), 0);
        wr = open(ptsname(rd), O_RDWR | O_NOCTTY);
    } else {
        int p[2];
        ck_assert_int_eq(pipe(p), 0);
        rd = p[0], wr = p[1];
    }
    ck_assert_int_ge(wr, 0);
    fflush(stderr);
    *saved = dup(2);
    dup2(wr, 2);
    close(wr);
    return rd;
}

static void restore_stderr(int saved) {
    fflush(stderr);
    dup2(saved, 2);
    close(saved);
}

static void read_all(int fd, char *buf, size_t size) {
    fcntl(fd, F_SETFL, O_NONBLOCK);
    size_t len = 0;
    ssize_t n;
    while (len + 1 < size && (n = read(fd, buf + len, size - 1 - len)) > 0) len += (size_t)n;
    buf[len] = 0;
    close(fd);
}

static void sleep_s(double s) {
    struct timespec ts = {(time_t)s, (long)((s - (double)(time_t)s) * 1e9)};
    while (nanosleep(&ts, &ts) != 0) {}
}

START_TEST(long_phase_is_announced_on_a_terminal) {
    int saved, fd = redirect_stderr(true, &saved);
    PhaseClock *c = phase_clock_new(false, false, "Big");
    phase_begin(c, "structure", true);
    sleep_s(PHASE_PROGRESS_AFTER + 1.0);
    phase_begin(c, "simulate", false); /* prints its own progress: never announced */
    sleep_s(PHASE_PROGRESS_AFTER + 0.5);
    phase_clock_free(c);
    restore_stderr(saved);
    char buf[4096];
    read_all(fd, buf, sizeof buf);
    ck_assert_msg(strstr(buf, "dyadc: structure of Big...") != NULL, "got: %s", buf);
    ck_assert_msg(strstr(buf, "dyadc: structure done in ") != NULL, "got: %s", buf);
    ck_assert_msg(strstr(buf, "simulate") == NULL, "got: %s", buf);
}
END_TEST

START_TEST(verbose_and_time_passes_without_a_terminal) {
    int saved, fd = redirect_stderr(false, &saved);
    PhaseClock *c = phase_clock_new(true, true, "M");
    phase_begin(c, "parse", true);
    phase_begin(c, "flatten", true);
    phase_end(c);
    phase_end(c); /* nothing running: no line */
    phase_clock_free(c);
    restore_stderr(saved);
    char buf[4096];
    read_all(fd, buf, sizeof buf);
    const char *p = strstr(buf, "dyadc: parse of M...\n");
    ck_assert_msg(p != NULL, "got: %s", buf);
    p = strstr(p, "time: parse ");
    ck_assert_msg(p != NULL, "got: %s", buf);
    p = strstr(p, "dyadc: flatten of M...\n");
    ck_assert_msg(p != NULL, "got: %s", buf);
    ck_assert_msg(strstr(p, "time: flatten ") != NULL, "got: %s", buf);
    int lines = 0;
    for (const char *q = buf; *q; q++) lines += *q == '\n';
    ck_assert_int_eq(lines, 6); /* announce, done, time for each of the two */
}
END_TEST

START_TEST(quiet_without_a_terminal) {
    int saved, fd = redirect_stderr(false, &saved);
    PhaseClock *c = phase_clock_new(false, false, "M");
    phase_begin(c, "structure", true);
    sleep_s(PHASE_PROGRESS_AFTER + 0.5);
    phase_clock_free(c);
    restore_stderr(saved);
    char buf[256];
    read_all(fd, buf, sizeof buf);
    ck_assert_str_eq(buf, "");
}
END_TEST

int main(void) {
    Suite *s = suite_create("driver");
    TCase *tc = tcase_create("progress");
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, long_phase_is_announced_on_a_terminal);
    tcase_add_test(tc, verbose_and_time_passes_without_a_terminal);
    tcase_add_test(tc, quiet_without_a_terminal);
    suite_add_tcase(s, tc);
    int failed = check_failures(s);
    return failed ? 1 : 0;
}
