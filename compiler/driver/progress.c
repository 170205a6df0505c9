/*
 * progress.c -- the phase clock: what dyadc says on stderr while it works.
 *
 * The driver brackets every phase (parse, flatten, units, structure,
 * codegen, jit/emit, link, simulate) with phase_begin/phase_end.
 *   - On a terminal, a phase still running after PHASE_PROGRESS_AFTER
 *     seconds is announced (`dyadc: structure of Model...`) and its time is
 *     printed when it ends: a watcher thread sleeps until the phase's
 *     deadline and prints only if the same phase is still running.  Not on
 *     a pipe or file, so captured diagnostics stay deterministic.
 *   - With -v every announced phase is announced at once, wherever stderr goes.
 *   - With --time-passes every phase ends with a line `time: NAME  T ms
 *     (peak memory M MB)` (timing_phase of support.h, which the phases use
 *     for their sub-passes).
 * The watcher is the only other thread; it touches nothing but this clock
 * and stderr, under the clock's mutex.
 */
#include "driver.h"

#include <pthread.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

struct PhaseClock {
    bool verbose, time_passes, tty;
    const char *what;       /* the model, for the announcement; may be NULL */
    pthread_mutex_t mu;
    pthread_cond_t cv;      /* signalled at every change of phase and at the end */
    pthread_t watcher;
    bool watching, quit;
    const char *phase;      /* the running phase, NULL between phases */
    bool announce;          /* it may be announced */
    bool announced;         /* and was */
    unsigned gen;           /* counts phases, so the watcher knows a new one */
    double t0;              /* its start (CLOCK_MONOTONIC seconds) */
};

static double now(void) { return timing_now(); }

static void say_begin(PhaseClock *c) {
    if (c->what) fprintf(stderr, "dyadc: %s of %s...\n", c->phase, c->what);
    else fprintf(stderr, "dyadc: %s...\n", c->phase);
    c->announced = true;
}

/* The watcher: for each phase, wait until its deadline; announce it if it
 * is still the running phase then. */
static void *watch(void *arg) {
    PhaseClock *c = arg;
    pthread_mutex_lock(&c->mu);
    while (!c->quit) {
        if (!c->phase || c->announced || !c->announce) {
            pthread_cond_wait(&c->cv, &c->mu);
            continue;
        }
        unsigned gen = c->gen;
        double deadline = c->t0 + PHASE_PROGRESS_AFTER;
        struct timespec ts;
        clock_gettime(CLOCK_REALTIME, &ts); /* pthread_cond_timedwait's clock */
        double wait = deadline - now();
        if (wait > 0) {
            ts.tv_sec += (time_t)wait;
            ts.tv_nsec += (long)((wait - (double)(time_t)wait) * 1e9);
            if (ts.tv_nsec >= 1000000000L) ts.tv_sec++, ts.tv_nsec -= 1000000000L;
            pthread_cond_timedwait(&c->cv, &c->mu, &ts);
        }
        if (!c->quit && c->phase && gen == c->gen && !c->announced && now() >= deadline) say_begin(c);
    }
    pthread_mutex_unlock(&c->mu);
    return NULL;
}

PhaseClock *phase_clock_new(bool verbose, bool time_passes, const char *what) {
    PhaseClock *c = calloc(1, sizeof *c);
    if (!c) return NULL;
    c->verbose = verbose;
    c->time_passes = time_passes;
    timing_enable(time_passes); /* the phases' own sub-pass lines too */
    c->tty = isatty(2);
    c->what = what;
    pthread_mutex_init(&c->mu, NULL);
    pthread_cond_init(&c->cv, NULL);
    if (c->tty && !verbose) c->watching = pthread_create(&c->watcher, NULL, watch, c) == 0;
    return c;
}

void phase_begin(PhaseClock *c, const char *phase, bool announce) {
    if (!c) return;
    phase_end(c);
    pthread_mutex_lock(&c->mu);
    c->phase = phase;
    c->announce = announce;
    c->announced = false;
    c->gen++;
    c->t0 = now();
    if (c->verbose && announce) say_begin(c);
    pthread_cond_signal(&c->cv);
    pthread_mutex_unlock(&c->mu);
}

void phase_end(PhaseClock *c) {
    if (!c) return;
    pthread_mutex_lock(&c->mu);
    if (!c->phase) {
        pthread_mutex_unlock(&c->mu);
        return;
    }
    double t0 = c->t0, t = now() - t0;
    if (c->announced && t < 1) fprintf(stderr, "dyadc: %s done in %.0f ms\n", c->phase, 1e3 * t);
    else if (c->announced) fprintf(stderr, "dyadc: %s done in %.1f s\n", c->phase, t);
    if (c->time_passes) timing_phase(c->phase, &t0);
    c->phase = NULL;
    pthread_cond_signal(&c->cv);
    pthread_mutex_unlock(&c->mu);
}

void phase_clock_free(PhaseClock *c) {
    if (!c) return;
    phase_end(c);
    pthread_mutex_lock(&c->mu);
    c->quit = true;
    pthread_cond_signal(&c->cv);
    pthread_mutex_unlock(&c->mu);
    if (c->watching) pthread_join(c->watcher, NULL);
    pthread_mutex_destroy(&c->mu);
    pthread_cond_destroy(&c->cv);
    free(c);
}
