/*
 * dyrt_internal.h -- what the runtime's source files share; not installed.
 *
 * One DyrtRun holds everything a simulation needs.  It is allocated and
 * filled at setup (params.c, output.c, init.c, integrate.c), used by the
 * integration loop without any further allocation, and freed at the end
 * (simulate.c).  Every function returns a DYRT_EXIT_* status and prints its
 * own `error: ...` line.
 */
#ifndef DYRT_INTERNAL_H
#define DYRT_INTERNAL_H

#include <stdio.h>

#include <nvector/nvector_serial.h>
#include <sundials/sundials_context.h>
#include <sundials/sundials_linearsolver.h>
#include <sundials/sundials_matrix.h>

#include "dyadrt.h"

/* Systems with at most this many unknowns use a dense matrix and LU; larger
 * ones use a sparse CSC matrix and KLU. */
#define DYRT_DENSE_MAX 100

/* Give up after this many events within DYRT_CHATTER_WINDOW (relative). */
#define DYRT_CHATTER_MAX 100
#define DYRT_CHATTER_WINDOW 1e-10

/* Event iteration: at most this many mode updates + restarts at one instant. */
#define DYRT_MODE_ITER_MAX 20

/* A root of function k this close (relative) to k's last mode change does
 * not change the mode again: IDA places roots within its tolerance on either
 * side, and a g that depends on algebraic unknowns jitters around the
 * restart point. */
#define DYRT_EVENT_DEBOUNCE 1e-9

/* -v lists the times of the first DYRT_EVENT_LOG events. */
#define DYRT_EVENT_LOG 32

typedef struct DyrtStats {
    long init_iters;           /* Newton iterations of the initialization */
    long init_res_evals;       /* initialization residual evaluations */
    long events;               /* zero crossings handled */
    long reinits;              /* IDAReInit calls (events and tstops) */
    double event_t[DYRT_EVENT_LOG]; /* times of the first events, for -v */
    double t_setup, t_init, t_integrate; /* wall seconds per phase (integration
                                            without writing the output) */
    double t_output;           /* wall seconds computing and writing output rows */
} DyrtStats;

typedef struct DyrtRun {
    const DyrtModel *m;
    const DyrtOptions *o;
    /* resolved settings */
    double start, stop, rtol, atol, dtmax;
    double *touts;             /* [ntouts] output times, ascending */
    long ntouts;
    /* parameters and state */
    double *p;                 /* [np + nmodes]: parameters, then the modes */
    double *gbuf;              /* [nz] zero-crossing values (mode updates) */
    double *zc_last;           /* [nz] time of function k's last mode change */
    double *ytmp, *yptmp;      /* [ny] look-ahead point (modes at g = 0) */
    unsigned char *given;      /* [np] */
    double *y0, *yp0;          /* [ny] consistent start (before IDA) */
    /* output */
    FILE *out;                 /* result CSV */
    int close_out;             /* 1 when out is ours to fclose */
    char out_path[512];        /* its path, for --plot */
    int *cols;                 /* [ncols] indices into outputs */
    int ncols;
    double *outbuf;            /* [nout] */
    char *rowbuf;              /* one formatted CSV row, written with one fwrite */
    long rows;                 /* rows written */
    /* IDA */
    SUNContext ctx;
    void *ida;
    N_Vector yy, yp, id;
    SUNMatrix A;
    SUNLinearSolver LS;
    int sparse;                /* 1: CSC + KLU, 0: dense */
    double *jvals;             /* [jac_nnz] scratch for the dense path */
    int *rootsfound;           /* [nz] */
    double tstop_done;         /* the last model tstop restarted at */
    /* diagnostics */
    int bad_res;               /* index of the last non-finite residual, -1 */
    char ida_msg[256];         /* last message of SUNDIALS' error handler */
    double t_begin;            /* wall clock at start, for the progress line */
    double t_progress;         /* wall clock of the last progress line */
    int tty;                   /* stderr is a terminal: progress line */
    int progress_shown;
    DyrtStats stats;
} DyrtRun;

/* util.c */
void dyrt_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void dyrt_warning(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
double dyrt_now(void);
int dyrt_parse_double(const char *s, double *v);
const char *dyrt_closest(const char *name, const char *const *names, int n);
int dyrt_find(const char *name, const char *const *names, int n);
void *dyrt_calloc(size_t n, size_t size);
int dyrt_check_model(const DyrtModel *m);

/* params.c */
int dyrt_params_setup(DyrtRun *r);
int dyrt_params_check(const DyrtRun *r);
void dyrt_params_list(const DyrtRun *r, FILE *f);
int dyrt_apply_initials(DyrtRun *r);
int dyrt_initial_target(const DyrtRun *r, const DyrtNameValue *nv, int *row, int *z);

/* output.c */
int dyrt_output_setup(DyrtRun *r);
int dyrt_output_row(DyrtRun *r, double t, const double *y, const double *yp);
void dyrt_output_close(DyrtRun *r);

/* init.c */
int dyrt_initialize(DyrtRun *r);

/* plot.c */
int dyrt_plot_check(const char *plot, const char *output);
int dyrt_plot(const DyrtRun *r, const char *csv);

/* events.c */
int dyrt_modes_from_signs(DyrtRun *r, double t, const double *y, const double *yp,
                          const int *keep);
int dyrt_modes_from_roots(DyrtRun *r, double t);

/* integrate.c */
int dyrt_integrate_setup(DyrtRun *r);
int dyrt_integrate(DyrtRun *r);
void dyrt_integrate_stats(const DyrtRun *r, FILE *f);
void dyrt_integrate_free(DyrtRun *r);

/* solver.c: the smallest step that still makes progress at time t */
double dyrt_min_step(double t);

#endif
