/*
 * timing.c -- `--time-passes`: wall time, CPU time and peak memory of each
 * phase and of the sub-passes a phase chooses to report.  One line per pass
 * on stderr, `time: NAME  MS ms  cpu MS ms  (peak memory MB)` (CPU: user +
 * system of this process and of the children it waited for, e.g. the
 * linker); sub-passes are indented and named `phase.sub`, so scripts reading
 * the phase lines by name (the bench scripts) see the same lines as before.
 * Off unless enabled: a disabled call costs one branch.
 *
 * The callers keep only a wall-clock start (*t0, a value timing_now
 * returned); the CPU time at that instant is found in a small per-thread
 * ring of the last (wall, cpu) pairs timing_now took.
 */
#include "support.h"

#include <sys/resource.h>
#include <time.h>

static bool timing_on;

void timing_enable(bool on) { timing_on = on; }
bool timing_enabled(void) { return timing_on; }

enum { RING = 64 }; /* enough for a phase and all its sub-passes */
static _Thread_local struct { double wall, cpu; } ring[RING]; /* the last timing_now samples */
static _Thread_local unsigned ring_next;

static double tv(struct timeval t) { return (double)t.tv_sec + 1e-6 * (double)t.tv_usec; }

/* CPU seconds of this process and of its waited-for children */
static double cpu_now(void) {
    struct rusage self, kids;
    getrusage(RUSAGE_SELF, &self);
    getrusage(RUSAGE_CHILDREN, &kids);
    return tv(self.ru_utime) + tv(self.ru_stime) + tv(kids.ru_utime) + tv(kids.ru_stime);
}

double timing_now(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    double t = (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
    if (timing_on) {
        ring[ring_next % RING].wall = t;
        ring[ring_next % RING].cpu = cpu_now();
        ring_next++;
    }
    return t;
}

/* the CPU time sampled together with wall time t0; -1 if no longer known */
static double cpu_at(double t0) {
    for (unsigned i = 0; i < RING; i++)
        if (ring[i].wall == t0) return ring[i].cpu;
    return -1;
}

static void report(const char *indent, int width, const char *name, double *t0) {
    double c0 = timing_on ? cpu_at(*t0) : -1;
    double t = timing_now();
    if (timing_on) {
        struct rusage ru;
        getrusage(RUSAGE_SELF, &ru);
        double c = cpu_at(t);
        fprintf(stderr, "time: %s%-*s %8.3f ms  cpu %8.3f ms  (peak memory %ld MB)\n", indent, width, name,
                1e3 * (t - *t0), c0 < 0 ? -1.0 : 1e3 * (c - c0), ru.ru_maxrss / 1024);
    }
    *t0 = t;
}

void timing_phase(const char *name, double *t0) { report("", 10, name, t0); }
void timing_sub(const char *name, double *t0) { report("  ", 22, name, t0); }
