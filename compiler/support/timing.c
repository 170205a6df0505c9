/*
 * timing.c -- `--time-passes`: wall time and peak memory of each phase and
 * of the sub-passes a phase chooses to report.  One line per pass on
 * stderr, `time: NAME  MS ms  (peak memory MB)`; sub-passes are indented
 * and named `phase.sub`, so scripts reading the phase lines by name
 * (the bench scripts) see the same lines as before.  Off unless enabled: a
 * disabled call costs one branch.
 */
#include "support.h"

#include <sys/resource.h>
#include <time.h>

static bool timing_on;

void timing_enable(bool on) { timing_on = on; }
bool timing_enabled(void) { return timing_on; }

double timing_now(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static void report(const char *indent, int width, const char *name, double *t0) {
    double t = timing_now();
    if (timing_on) {
        struct rusage ru;
        getrusage(RUSAGE_SELF, &ru);
        fprintf(stderr, "time: %s%-*s %8.3f ms  (peak memory %ld MB)\n", indent, width, name,
                1e3 * (t - *t0), ru.ru_maxrss / 1024);
    }
    *t0 = t;
}

void timing_phase(const char *name, double *t0) { report("", 10, name, t0); }
void timing_sub(const char *name, double *t0) { report("  ", 22, name, t0); }
