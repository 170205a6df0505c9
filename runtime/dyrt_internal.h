/*
 * dyrt_internal.h -- what the runtime's source files share; not installed.
 *
 * A DyrtSim (sim.c) is the solver state of one simulation: parameters,
 * modes, the initialization result, IDA.  It is allocated at dyrt_create and
 * dyrt_init (params.c, init.c, solver.c), used by the integration loop
 * (integrate.c, events.c) without any further allocation, and freed by
 * dyrt_free.  A DyrtRun (simulate.c, output.c, plot.c) is the CSV sink of
 * dyrt_simulate around one DyrtSim.  Every function returns a DYRT_EXIT_*
 * status and prints its own `error: ...` line.
 */
#ifndef DYRT_INTERNAL_H
#define DYRT_INTERNAL_H

#include <stdio.h>

#include <nvector/nvector_serial.h>
#include <sundials/sundials_context.h>
#include <sundials/sundials_linearsolver.h>
#include <sundials/sundials_matrix.h>

#include <klu.h>

#include "dyadrt.h"
#include "numfmt.h"  /* dyrt_num: every number in a message */

/* Only systems with at most this many unknowns and a Jacobian at least a
 * quarter full use a dense matrix and LU; the others a sparse CSC matrix
 * and KLU (solver.c, use_klu). */
#define DYRT_DENSE_MAX 100

/* Events closer than this x (|t| + the time scale) are one instant: the
 * resolution of IDA's root finder, 100 unit roundoffs x (|t| + |h|), with
 * room.  Two events further apart are two instants even when both lie
 * within the tolerances of one true crossing (a diode's switch located by
 * the off branch's g a little early, then by the on branch's exactly). */
#define DYRT_CHATTER_WINDOW 1e-13

/* Chattering at vanishing intervals (Zeno): this many consecutive events
 * within DYRT_EVENT_CHECK x the time scale, the span below which the
 * runtime cannot tell "right after an event" from the event itself. */
#define DYRT_ZENO_EVENTS 50

/* Event iteration: at most this many mode updates + restarts at one instant. */
#define DYRT_MODE_ITER_MAX 20

/* A function whose mode changes this often at one instant (within
 * DYRT_CHATTER_WINDOW) goes back and forth: chattering, an error. */
#define DYRT_FLIP_MAX 3

/* After a restart the integrator goes on by this much (relative to the
 * simulated span) and then checks every mode against the sign of its
 * function (integrate.c: the crossing back that the root finder cannot
 * see).  Far above the root finder's placement error (~1e-14 relative),
 * far below the time scales anyone simulates with a given span. */
#define DYRT_EVENT_CHECK 1e-6

/* A check whose signs are all within the tolerances' uncertainty (events.c,
 * DYRT_MISMATCH_NOISE) is repeated 10 times later, up to this span. */
#define DYRT_EVENT_CHECK_MAX 1e-4
#define DYRT_CROSSED_DEFERRED 2

/* dyrt_tight_sides (sliding.c): the branches of relation k that drive the
 * solution back across its switching surface */
enum { DYRT_SIDE_BACK_FROM_1 = 1, DYRT_SIDE_BACK_FROM_0 = 2 };

/* A relation whose repeated switching the tight test found not sliding
 * (sliding.c) is given the branch that keeps its side and the run goes on;
 * when that happens this often without the run getting DYRT_EVENT_CHECK x
 * the time scale further, the switching is an error after all. */
#define DYRT_RESOLVE_MAX 4

/* s->mismatch[k] (events.c) */
enum { DYRT_MISMATCH = 1, DYRT_MISMATCH_NOISE = 2 };

/* Clock ticks closer than this (relative to max(1, |t|)) are one instant. */
#define DYRT_TICK_EPS 1e-12

/* -v lists the times of the first DYRT_EVENT_LOG events. */
#define DYRT_EVENT_LOG 32

/* why the block-wise initialization left blocks to the whole-system Newton */
enum { DYRT_INIT_LEFT_UNSOLVED, DYRT_INIT_LEFT_BUDGET, DYRT_INIT_LEFT_DEEP };

typedef struct DyrtStats {
    long init_iters;           /* Newton iterations of the initialization */
    long init_res_evals;       /* initialization residual evaluations */
    int init_blocks, init_levels; /* of the init BLT (initblock.c) */
    long init_block_rounds;    /* its Newton steps (one per level and iteration) */
    int init_sparse, init_largest; /* blocks solved by sparse LU; rows of the largest block */
    int init_left;             /* 1 + first block left to the whole-system Newton, 0 none */
    int init_left_why;         /* ... why: DYRT_INIT_LEFT_* */
    int init_homotopy;         /* 1: the homotopy solved it, -1: tried and failed */
    long events;               /* zero crossings handled */
    long reinits;              /* IDAReInit calls (events and tstops) */
    double event_t[DYRT_EVENT_LOG]; /* times of the first events, for -v */
    double t_init;             /* wall seconds in dyrt_init */
} DyrtStats;

/* The clocks of a DyrtSim (clocks.c); all NULL when the model has none. */
typedef struct DyrtClocks {
    double *timing;            /* [2 nclocks] what clock_timing computes */
    double *period, *offset;   /* [nclocks] of the periodic clocks */
    long long *next;           /* [nclocks] k of the next tick start + offset + k period */
    unsigned char *due;        /* [nclocks] zero-crossing clock: its root was found */
    double *zc_mode;           /* [nclocks] mode of its function before a root */
    double *w;                 /* [4 maxnw] Newton: w, r, dw, trial */
    double *jac;               /* [maxnw^2] */
    int32_t *piv;              /* [maxnw] */
    int pending;               /* clocks are due at the current time */
    int stop_at_ticks;         /* dyrt_step_to returns at every tick, leaving it pending */
    long ticks;                /* partition ticks done (statistics) */
    int (*consistent)(void *ud, double t); /* NULL: IDA's restart (dyrt_restart_at); else
                                  what makes the point consistent with new held
                                  values between coinciding ticks (FMI Model Exchange) */
    void *consistent_ud;
} DyrtClocks;

/* Lifecycle of a DyrtSim: settings and parameters are accepted only while
 * CREATED; dyrt_step_to only while READY; a failure is final. */
typedef enum DyrtSimPhase {
    DYRT_SIM_CREATED, DYRT_SIM_READY, DYRT_SIM_FAILED
} DyrtSimPhase;

/* The solver state of one simulation (the handle of dyadrt.h).  Allocated
 * by dyrt_create (parameter arrays) and dyrt_init (initial values, IDA);
 * the integration allocates nothing. */
/* one switch of a state set, for -v */
typedef struct DyrtSetSwitch {
    double t;
    int set;
    const char *from, *to;     /* the first state's candidate before and after */
} DyrtSetSwitch;

/* state sets at run time (stateset.c): scratch and the switches */
typedef struct DyrtSets {
    double *eval;              /* [set_neval] set_eval's output */
    int njac, ncand;           /* its Jacobian entries, candidates */
    double *mat, *lu;          /* elimination scratch */
    int *dummy, *best, *pick;  /* [max ncand] */
    double *qstart;            /* [nsets] the best choice's pivot at the start */
    long switches;
    DyrtSetSwitch log[DYRT_EVENT_LOG];
} DyrtSets;

/* --input FILE.csv (inputs.c) */
typedef struct DyrtInputTable {
    int n;                     /* columns besides time */
    int *slot;                 /* [n] parameter slot of each column */
    long nrows, cursor;        /* rows; the row at or before the last time asked */
    double *rows;              /* [nrows][n + 1]: time, values */
} DyrtInputTable;

typedef struct DyrtMe DyrtMe;

struct DyrtSim {
    const DyrtModel *m;
    DyrtSimPhase phase;
    /* settings */
    double start, stop, rtol, atol, dtmax;
    long max_steps;            /* IDA steps per dyrt_advance, restarts included (dyrt_set_max_steps) */
    long steps_left;           /* of max_steps in the current dyrt_advance */
    int verbose;               /* warnings that only -v shows */
    double t;                  /* current time (IDA's, after dyrt_step_to) */
    /* parameters and state */
    double *p;                 /* [np + nmodes]: parameters, then the modes */
    double *gbuf;              /* [nz] zero-crossing values (mode updates) */
    double *y_event, *yp_event; /* [ny] the point of the last restart, to go back to */
    unsigned char *flips;      /* [nz] mode changes of function k at the instant flip_t */
    double flip_t;             /* the instant (within DYRT_CHATTER_WINDOW) */
    unsigned char *mismatch;   /* [nz] scratch: sign and mode disagree (DYRT_MISMATCH...) */
    unsigned char *pushed;     /* [nz] at flip_t: 1 the check drove k back from mode 1, 2 from 0 */
    unsigned char *crossed;    /* [nz] k's mode was set by its crossing at the restart check_t0 (1);
                                  a root of k before the check was left to it (DYRT_CROSSED_DEFERRED) */
    double *gnoise, *gpert;    /* [nz] scratch: uncertainty of g (events.c, g_noise) */
    double *modes_prev;        /* [nz] scratch: the modes before an update */
    DyrtMe *me;                /* tight consistent values (sliding.c); NULL without relations */
    double *ytight, *yptight;  /* [ny] scratch of sliding.c */
    double resolve_t;          /* where a suspected chattering was last found not sliding */
    int nresolve;              /* ... and how often within DYRT_EVENT_CHECK of it */
    int check_pending;         /* a check after the restart at check_t0 is due at check_t */
    double check_t0, check_t;
    double *ytmp, *yptmp;      /* [ny] look-ahead point (modes at g = 0) */
    unsigned char *given;      /* [np] */
    double *y0, *yp0;          /* [ny] consistent start (before IDA) */
    double *outbuf;            /* [nout] scratch row for dyrt_get */
    DyrtInputTable table;      /* --input; empty: inputs set by dyrt_set_input */
    int input_changed;         /* an input was set since the last step: restart */
    DyrtNameValue *initials;   /* dyrt_set_initial, in call order (owned names) */
    int ninitials;
    /* IDA */
    SUNContext ctx;
    void *ida;
    N_Vector yy, yp, id;
    SUNMatrix A;
    SUNLinearSolver LS;
    int sparse;                /* 1: CSC + KLU, 0: dense */
    int dummy_state;           /* ny == 0 with a zero-crossing clock: IDA gets y' = 0 */
    double *jvals;             /* [jac_nnz] scratch for the dense path */
    int *rootsfound;           /* [nz] */
    double tstop_done;         /* the last model tstop restarted at */
    double event_times[DYRT_ZENO_EVENTS]; /* the last events' times, a ring */
    long nevents;              /* events so far (the ring's next slot: nevents % size) */
    int failed_assert;         /* 1 + index of the assertion that failed at an event */
    DyrtClocks clk;
    DyrtSets sets;
    /* diagnostics */
    int bad_res;               /* index of the last non-finite residual, -1 */
    double bad_t;              /* ... and the point where it was evaluated */
    double *bad_y, *bad_yp;    /* [ny] */
    char ida_msg[256];         /* last message of SUNDIALS' error handler */
    DyrtStats stats;
};

/* The CSV sink of dyrt_simulate: output times, columns, the file, the
 * plot and the progress line, around one DyrtSim. */
typedef struct DyrtRun {
    DyrtSim *sim;
    const DyrtModel *m;
    const DyrtOptions *o;
    double *touts;             /* [ntouts] output times, ascending */
    long ntouts;
    FILE *out;                 /* result CSV */
    int close_out;             /* 1 when out is ours to fclose */
    char out_path[512];        /* its path, for --plot */
    int *cols;                 /* [ncols] indices into outputs */
    int ncols;
    int32_t *col_copy;         /* [ncols] copy-table entry of the column, -1: computed */
    int need_fn;               /* some column is computed by m->outputs */
    double *outbuf;            /* [nout] */
    double *tickbuf;           /* [nout] the values before a clock tick */
    char *rowbuf;              /* one formatted CSV row, written with one fwrite */
    long rows;                 /* rows written */
    double t_begin;            /* wall clock at start, for the progress line */
    double t_progress;         /* wall clock of the last progress line */
    int tty;                   /* stderr is a terminal: progress line */
    int progress_shown;
    double t_setup, t_integrate; /* wall seconds per phase (integration without output) */
    double t_output;           /* wall seconds computing and writing output rows */
    /* -o FILE.mat (matfile.c) */
    int mat;                   /* 1: MAT v4 instead of CSV */
    int mat_begun;             /* the headers are written */
    int mat_nparams, mat_nstored; /* rows of data_1 (after time), of data_2 */
    int *mat_stored;           /* [ncols] the selected columns stored in data_2 */
    double *mat_buf;           /* one data_2 column */
    long mat_cols_at;          /* file offset of data_2's column count */
} DyrtRun;

/* util.c */
void dyrt_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void dyrt_warning(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* `note: ...`, the explanation after an error or warning (the message hook sees kind "note") */
void dyrt_note(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
double dyrt_now(void);
int dyrt_parse_double(const char *s, double *v);
const char *dyrt_closest(const char *name, const char *const *names, int n);
int dyrt_find(const char *name, const char *const *names, int n);
void *dyrt_calloc(size_t n, size_t size);
int dyrt_lu(double *a, int32_t n, int32_t *piv);
void dyrt_lu_solve(const double *a, int32_t n, const int32_t *piv, double *b);
size_t dyrt_location_at(const char *name);
int dyrt_check_model(const DyrtModel *m);
void dyrt_interrupts_catch(void);
void dyrt_interrupts_release(void);
int dyrt_interrupted(void);    /* the signal caught since dyrt_interrupts_catch, 0 */

/* sim.c: 0 when s is in `phase`, else `error: internal: <fn> called ...` */
int dyrt_sim_expect(const DyrtSim *s, DyrtSimPhase phase, const char *fn);
double dyrt_time_scale(const DyrtSim *s);

/* params.c */
int dyrt_params_alloc(DyrtSim *s);
int dyrt_params_defaults(DyrtSim *s);
int dyrt_coef_checks(const DyrtSim *s);
int dyrt_params_check(const DyrtSim *s);
int dyrt_apply_initials(DyrtSim *s);
int dyrt_initial_target(const DyrtSim *s, const DyrtNameValue *nv, int *row, int *z, double *value);

/* inputs.c */
void dyrt_inputs_at(DyrtSim *s, double t);
double dyrt_inputs_next(const DyrtSim *s, double tn);
void dyrt_inputs_free(DyrtSim *s);

/* matfile.c */
int dyrt_mat_wanted(const char *path);
int dyrt_mat_row(DyrtRun *r, double t, const double *vals);
int dyrt_mat_close(DyrtRun *r);

/* columns.c */
int dyrt_select_columns(DyrtRun *r);

/* output.c */
int dyrt_output_setup(DyrtRun *r);
int dyrt_output_row(DyrtRun *r);
int dyrt_output_values(DyrtRun *r, double t, const double *vals);
void dyrt_output_close(DyrtRun *r);

/* init.c */
int dyrt_initialize(DyrtSim *s);

/* plot.c */
int dyrt_plot_check(const char *plot, const char *output);
int dyrt_plot(const DyrtRun *r, const char *csv);

/* events.c */
int dyrt_modes_from_signs(DyrtSim *s, double t, const double *y, const double *yp,
                          const int *keep);
int dyrt_modes_from_roots(DyrtSim *s, double t);
int dyrt_modes_mismatch(DyrtSim *s, double t, const double *y, const double *yp, int *noisy);
const char *dyrt_event_name(const DyrtSim *s, int k, char *buf, size_t n);

/* solver.c */
int dyrt_integrate_setup(DyrtSim *s);
void dyrt_integrate_free(DyrtSim *s);

/* clocks.c */
double dyrt_tick_eps(double t);
int dyrt_clocks_setup(DyrtSim *s);
void dyrt_clocks_free(DyrtSim *s);
double dyrt_clocks_next(const DyrtSim *s);
void dyrt_clocks_snapshot(DyrtSim *s);
int dyrt_clocks_roots(DyrtSim *s);
int dyrt_clocks_tick(DyrtSim *s, double t);

/* integrate.c */
int dyrt_restart_at(DyrtSim *s, double t, const char *why, int events);
int dyrt_initial_values(DyrtSim *s, double tout1);
int dyrt_advance(DyrtSim *s, double tout);
int dyrt_asserts_at(DyrtSim *s, double t, const double *y, const double *yp);

/* blockmap.c: each block's entries in a sparse Jacobian (see there) */
typedef struct DyrtBlockMap {
    int *row_block;            /* [n] the block of each row */
    int *ent_ptr;              /* [nb + 1] into ent_pos, ent_ij */
    int *ent_pos, *ent_ij;     /* CSC index, place in the dense matrix */
    int *a_off;                /* [nb + 1] offset of each dense matrix */
} DyrtBlockMap;
int dyrt_block_map(DyrtBlockMap *bm, int n, int nb, const int32_t *ptr, const int32_t *rows,
                   const int32_t *cols, const int *colptr, const int *rowidx, int max);
void dyrt_block_map_free(DyrtBlockMap *bm);

/* me.c: the index-1 solve for y' of the states and the algebraic y
 * (FMI Model Exchange) and its directional derivatives. */
struct DyrtMe {
    const DyrtModel *m;
    int n;                     /* ny */
    int *colptr, *rowidx;      /* int copies of the Jacobian pattern for KLU */
    double *j0, *j1;           /* [jac_nnz] dF/dy, then the Newton matrix dF/dz */
    double *r, *dz;            /* [n] */
    klu_symbolic *sym;
    klu_numeric *num;
    klu_common common;
    int blockwise;             /* 1: the model's blocks (ode_*) level by level */
    DyrtBlockMap bm;           /* the blocks' dense matrices in j1 */
    double *a;                 /* [bm.a_off[nb]] their LU factors */
    int32_t *piv;              /* [n] pivots, at ode_ptr[b] */
    unsigned char *done;       /* [nb] converged in this solve */
    long nresid, njac, nwhole; /* evaluations (residual, Jacobian pairs) and
                                  whole-system solves, for the statistics */
};
int dyrt_me_alloc(DyrtMe *me, const DyrtModel *m);
void dyrt_me_free(DyrtMe *me);
int dyrt_me_solve(DyrtMe *me, double t, double *y, double *yp, const double *p);
int dyrt_me_directional(DyrtMe *me, double t, const double *y, const double *yp, const double *p,
                        const double *dx, double *dy, double *dyp);
/* y'_i of the algebraic unknowns at a consistent (t, y, yp): the system
 * differentiated along the solution, M (y''_x, y'_a) = -(dF/dt + dF/dx x'),
 * dF/dt by a central difference of step dt; 0, or non-zero (yp unchanged) */
int dyrt_me_alg_rates(DyrtMe *me, double t, double dt, const double *y, double *yp, const double *p);

/* sliding.c */
int dyrt_tight_setup(DyrtSim *s);
void dyrt_tight_free(DyrtSim *s);
int dyrt_tight_polish(DyrtSim *s, double t, double *y, double *yp);
/* 1 when relation k's current branch keeps g_k on its side a look-ahead
 * after t (tight values), 0 when it drives it back, -1 when unknown */
int dyrt_tight_keeps_side(DyrtSim *s, double t, const double *y, const double *yp, int k);
int dyrt_tight_sides(DyrtSim *s, double t, const double *y, const double *yp, int k, double *mode);

/* nonfinite.c */
const char *dyrt_value_word(double x);
void dyrt_explain_point(DyrtSim *s, int row, double t, const double *y, const double *yp);

/* stateset.c */
int dyrt_event_follows_sign(const DyrtModel *m, int k);
int dyrt_sets_setup(DyrtSim *s);
void dyrt_sets_free(DyrtSim *s);
void dyrt_sets_criteria(DyrtSim *s, double t, const double *y, const double *yp, double *g);
int dyrt_sets_switch(DyrtSim *s, double t, double *y, double *yp, const int *roots);
void dyrt_sets_stats(const DyrtSim *s, FILE *f);
void dyrt_sets_explain(DyrtSim *s, double t, const double *y, const double *yp);

/* solver.c: the smallest step that still makes progress at time t */
double dyrt_min_step(double t);

#endif
