/*
 * dyad_model.h -- the ABI between generated model code and libdyadrt.
 *
 * A compiled model exports exactly one `const DyrtModel` (symbol name
 * DYRT_MODEL_SYMBOL).  The same descriptor serves the standalone simulator
 * (linked against libdyadrt), the in-process JIT path of `dyadc run`, and
 * later FMI export.  Everything the runtime needs is here; nothing else in
 * the generated object is referenced by name.
 *
 * Conventions
 *   - The integrator sees F(t, y, y', p) = 0 with ny unknowns y.
 *   - p holds every parameter (np of them): independent ones, dependent ones
 *     (defaults that are expressions of other parameters) and parameters whose
 *     value is `missing` (solved during initialization, then fixed).
 *   - The Jacobian J = dF/dy + cj * dF/dy' is sparse, in CSC form (columns are
 *     unknowns, rows are residuals); the pattern is data, the values are
 *     computed by `jacobian` in the order of jac_rowidx.
 *   - Generated functions only touch the flat double arrays they are given;
 *     they never allocate, print or call back into the runtime.
 *   - Functions returning int return 0 on success, nonzero on a recoverable
 *     evaluation error (e.g. a domain error), which IDA treats as a failed step.
 *
 * Initialization
 *   If init_n > 0 the model provides an initialization system: unknowns z
 *   (init_n of them; typically y, the derivatives of differential y, and the
 *   `missing` parameters), equations init_residual(t0, z, p) = 0 with a
 *   sparse Jacobian, a starting point init_guess, and init_finish, which
 *   scatters a solution into p, y and y'.  After it, the runtime hands y, y'
 *   to IDA (and may polish them with IDACalcIC).
 *   `--initial NAME=VALUE` on such a model replaces the `initial` relation of
 *   y_i: initial_row[i] is the init equation to replace and initial_z[i] the
 *   init unknown holding y_i; the runtime solves z[initial_z[i]] = VALUE in
 *   that row instead (residual and Jacobian row).  Either table NULL or -1:
 *   no replaceable relation, and --initial is refused with that reason.
 *   Checks: init_ncheck initial relations over-determine the system (a
 *   consistent over-determined initialization is accepted).  init_residual
 *   then writes init_n + 2 * init_ncheck values: the init_n residuals, then
 *   (lhs, rhs) of each check; the runtime solves the square system and
 *   compares each pair: equal within 1e-6 relative, the check is redundant
 *   (a warning names it, init_eq_names[init_n + k]); else the
 *   initialization is inconsistent (an error naming it and
 *   init_check_with[k], the relations that determine its unknowns).
 *   If init_n == 0, the runtime takes `start` as the starting point and lets
 *   IDACalcIC compute the algebraic unknowns and y' with the differential
 *   unknowns fixed (y_is_diff).
 *   Initialization blocks (ABI 6): the square system's BLT, init_nblocks
 *   blocks in dependency order; block b's rows and the unknowns they
 *   determine are init_block_rows/cols[init_block_ptr[b] ..
 *   init_block_ptr[b+1]).  The runtime solves them in that order, each on
 *   its own with the blocks before it fixed, and leaves what it cannot to
 *   the whole-system Newton.
 *
 * State sets (ABI 5): dynamic state selection.  Set k chooses, of its
 * ncand candidate variables x_i, nstates as states; the others are
 * determined by its nrows equations.  set_info[DYRT_SET_INFO * k ..] =
 * {nrows, nfixed, ncand, nstates, mode_first, jac_first, cand_first,
 * state_first}.  Event mode_first + j (DYRT_EVENT_STATESET) has the mode
 * p[np + mode_first + j] = index i of the candidate that is state j; its
 * integrator unknown y[set_state_y[state_first + j]] must then equal x_i.
 * set_eval writes at jac_first the set's Jacobian, nrows x (nfixed +
 * ncand) row-major: its equations in its nfixed fixed columns (eliminated
 * first) and the derivatives of its candidates; the candidates that are
 * not states must leave a nonsingular rest.  The runtime watches that
 * pivot, switches the choice at an event when it degrades and restarts
 * with the set states set to the new candidates' values (set_eval's
 * cand_first entries after the Jacobians, then their derivatives).
 *
 * Data instead of code (ABI 3)
 *   What is only data is a table, applied by the runtime around the
 *   generated functions (runtime/model.c; call dyrt_model_* rather than the
 *   function pointers directly):
 *   - outputs of the form offset + scale * slot (a y, y', p slot, t or a
 *     constant: eliminated aliases) are the out_copy_* table; `outputs`
 *     computes only the other columns;
 *   - constant parameter defaults are param_const (where param_has_const):
 *     the runtime stores them for every !given[i] before calling
 *     param_defaults, which handles only the dependent ones (constants depend
 *     on nothing, so storing them first keeps the dependency order);
 *   - constant starting values are start_y_const / start_yp_const (where
 *     start_has_const bit 1 / bit 2), stored before `start` computes the rest.
 *   Name lists are packed by the compiler into one string blob each; their
 *   types are unchanged.
 *
 * Clocks (ABI 4)
 *   A clocked partition keeps its values in p, in slots flagged
 *   DYRT_PARAM_DISCRETE: the clocked variables (their value since the last
 *   tick), previous values x@(clk-k) and held values; param_defaults gives
 *   their values before the first tick.  The continuous functions read them
 *   like parameters, so they are constant between ticks.  Clock c ticks at
 *   start + offset + k * period (periodic; clock_timing computes period and
 *   offset from p) or at every root of zero-crossing function clock_zc[c].
 *   A tick of clock c at time t, with the continuous point (y, y'):
 *     tick_sample[c](t, y, yp, p)       samples into p;
 *     if tick_nw[c] > 0: Newton on tick_residual[c](t, w, p, r) = 0 with the
 *       dense column-major Jacobian tick_jacobian[c], from tick_guess[c];
 *     tick_finish[c](t, w, p, NULL, NULL) stores the partition's new values;
 *     p[tick_copy_dst[i]] = p[tick_copy_src[i]] for i in
 *       [tick_copy_ptr[c], tick_copy_ptr[c+1]) in order (history, holds).
 *   Clocks ticking at one instant tick in the order clock_order; then the
 *   integrator restarts (consistent values, as after an event).  Any
 *   per-clock function may be NULL (nothing to do).
 */
#ifndef DYAD_MODEL_H
#define DYAD_MODEL_H

#include <stdint.h>

#define DYRT_ABI_VERSION 6
#define DYRT_MODEL_SYMBOL "dyad_model"

/* param_flags bits */
enum {
    DYRT_PARAM_FINAL = 1,       /* `final`: -p may not override it */
    DYRT_PARAM_MISSING = 2,     /* value is `missing`: solved at initialization */
    DYRT_PARAM_DEPENDENT = 4,   /* default is an expression of other parameters */
    DYRT_PARAM_REQUIRED = 8,    /* no value in the model: must be given (-p) */
    DYRT_PARAM_DISCRETE = 16,   /* not a parameter: a value of the clocked world
                                   (see "Clocks"); never set with -p, not listed */
    DYRT_PARAM_INPUT = 32       /* not a parameter: an input of the model, set from
                                   outside while it runs (--input table, FMI
                                   fmi2SetReal); 0 unless given; never -p */
};

/* clock_kind */
enum { DYRT_CLOCK_PERIODIC = 0, DYRT_CLOCK_ZERO_CROSSING = 1 };

/* out_copy_kind: source (low 3 bits) and operations, applied in this order:
 * v = source; if NEG v = -v; if SCALE v = v * scale; if OFFSET v = v + offset.
 * DYRT_SRC_CONST: v = offset, no operations. */
enum {
    DYRT_SRC_Y = 0, DYRT_SRC_YP = 1, DYRT_SRC_P = 2, DYRT_SRC_TIME = 3,
    DYRT_SRC_CONST = 4, DYRT_SRC_MASK = 7,
    DYRT_OP_NEG = 8, DYRT_OP_SCALE = 16, DYRT_OP_OFFSET = 32
};

/* entries of set_info per state set (see "State sets") */
#define DYRT_SET_INFO 8

/* event_kind: what the mode of event k means, so how the runtime sets it
 * (runtime/events.c).  The compiler's twin list is SYS_EVENT_KINDS
 * (compiler/structure/system.h); codegen maps one to the other. */
enum {
    DYRT_EVENT_RELATION = 0,    /* mode = 1 while zero_crossings()[k] > 0 */
    DYRT_EVENT_CLOCK = 1,       /* the same, and a zero-crossing clock ticks at
                                   each crossing (see "Clocks") */
    DYRT_EVENT_STATESET = 2     /* mode = the candidate that is this state of a
                                   state set; chosen by the runtime (see
                                   "State sets") */
};

/* risk_kind: an operation that makes a finite argument NaN or Inf, and the
 * test on the argument that tells (compiler twin: SYS_RISK_KINDS). */
enum {
    DYRT_RISK_DIV = 0,          /* a / x: x == 0 */
    DYRT_RISK_SQRT = 1,         /* sqrt(x): x < 0 */
    DYRT_RISK_LOG = 2,          /* log(x), log10(x): x <= 0 */
    DYRT_RISK_ASIN = 3,         /* asin(x), acos(x): |x| > 1 */
    DYRT_RISK_POW_NEG = 4,      /* x^c, c not an integer: x < 0 */
    DYRT_RISK_POW_ZERO = 5      /* x^c, c < 0: x == 0 */
};

/* Simulation settings; a model carries defaults (from an analysis or the
 * built-in defaults), the command line overrides them. */
typedef struct DyrtSettings {
    double start;          /* start time */
    double stop;           /* stop time */
    double interval;       /* output grid step; 0 = (stop-start)/500 */
    double rtol;           /* relative tolerance */
    double atol;           /* absolute tolerance */
    double dtmax;          /* maximal step; 0 = unlimited */
    int32_t ntstops;       /* number of tstops */
    const double *tstops;  /* times the integrator must step on exactly */
} DyrtSettings;

typedef int (*DyrtResidualFn)(double t, const double *y, const double *yp,
                              const double *p, double *r);
typedef int (*DyrtJacobianFn)(double t, const double *y, const double *yp,
                              const double *p, double cj, double *vals);
typedef void (*DyrtOutputsFn)(double t, const double *y, const double *yp,
                              const double *p, double *out);
typedef void (*DyrtZeroFn)(double t, const double *y, const double *yp,
                           const double *p, double *g);
typedef int (*DyrtAssertFn)(double t, const double *y, const double *yp,
                            const double *p);
typedef void (*DyrtParamFn)(double *p, const unsigned char *given);
typedef int (*DyrtCoefCheckFn)(const double *p);
typedef void (*DyrtStartFn)(double t0, const double *p, double *y, double *yp);
typedef int (*DyrtInitResidualFn)(double t, const double *z, const double *p,
                                  double *r);
typedef int (*DyrtInitJacobianFn)(double t, const double *z, const double *p,
                                  double *vals);
typedef void (*DyrtInitGuessFn)(double t, const double *p, double *z);
typedef void (*DyrtInitFinishFn)(double t, const double *z, double *p,
                                 double *y, double *yp);
typedef void (*DyrtTickSampleFn)(double t, const double *y, const double *yp, double *p);
typedef void (*DyrtClockTimingFn)(const double *p, double *out);

typedef struct DyrtModel {
    uint32_t abi_version;             /* DYRT_ABI_VERSION */
    const char *name;                 /* qualified model name */

    int32_t ny;                       /* unknowns seen by IDA */
    int32_t np;                       /* parameters */
    int32_t nout;                     /* output columns (without time) */
    int32_t nz;                       /* zero-crossing functions */
    int32_t nassert;                  /* assertions */

    const char *const *y_names;       /* [ny] unknown names, for messages */
    const unsigned char *y_is_diff;   /* [ny] 1 when y'[i] occurs in F */
    const char *const *param_names;   /* [np] dotted parameter names */
    const unsigned char *param_flags; /* [np] DYRT_PARAM_* bits */
    const char *const *out_names;     /* [nout] dotted names (CSV header) */
    const char *const *assert_messages; /* [nassert] */

    int32_t jac_nnz;                  /* nonzeros of J */
    const int32_t *jac_colptr;        /* [ny+1] */
    const int32_t *jac_rowidx;        /* [jac_nnz] */

    DyrtParamFn param_defaults;       /* p[i] = default for every !given[i], dependency order */
    DyrtStartFn start;                /* starting y, y' (initial values, guesses) */
    DyrtResidualFn residual;          /* F */
    DyrtJacobianFn jacobian;          /* J values, CSC order */
    DyrtOutputsFn outputs;            /* out[0..nout) for one row */
    DyrtZeroFn zero_crossings;        /* g[0..nz); NULL when nz == 0 */
    DyrtAssertFn check_asserts;       /* 0, or 1 + index of the first failed assert; NULL when nassert == 0 */

    int32_t init_n;                   /* unknowns of the initialization system, 0 = none */
    int32_t init_nnz;
    const int32_t *init_colptr;       /* [init_n+1] */
    const int32_t *init_rowidx;       /* [init_nnz] */
    const char *const *init_names;    /* [init_n] */
    DyrtInitResidualFn init_residual;
    DyrtInitJacobianFn init_jacobian;
    DyrtInitGuessFn init_guess;
    DyrtInitFinishFn init_finish;

    DyrtSettings defaults;            /* default simulation settings */

    /* ABI 2 (appended; every field may be NULL) */
    const char *const *init_eq_names; /* [init_n] each init equation as the modeler
                                         wrote it (with its location), for messages;
                                         "guess of NAME" marks the row pinning the
                                         `missing` parameter NAME at its guess, which
                                         the runtime may move to another `missing`
                                         parameter (init.c, swap_guess) */
    const int32_t *initial_row;       /* [ny] init equation that is y_i's `initial`
                                         relation, -1 none (see --initial above) */
    const int32_t *initial_z;         /* [ny] init unknown that holds y_i, -1 none */
    int32_t nmodes;                   /* 0 or nz: relations are frozen between events.
                                         p then has np + nmodes entries; p[np + k] is
                                         the mode of event k (DYRT_EVENT_RELATION: 1
                                         when zero-crossing function k is positive,
                                         else 0), which the compiler's relations on
                                         continuous values (`a > b`, `a <= b`,
                                         `sign(a)`, ... with g_k = a - b) read in
                                         residual, jacobian, outputs, zero_crossings
                                         instead of comparing (System EXPR_MODE(k)).
                                         The runtime sets the modes from the signs at
                                         the start and from the crossing direction at
                                         each event. */

    /* ABI 3 (appended; arrays NULL when empty; see "Data instead of code") */
    int32_t nout_copy;                /* output columns computed from the table */
    const int32_t *out_copy_dest;     /* [nout_copy] output column */
    const uint8_t *out_copy_kind;     /* [nout_copy] DYRT_SRC_* | DYRT_OP_* */
    const int32_t *out_copy_index;    /* [nout_copy] slot index (Y, YP, P) */
    const double *out_copy_scale;     /* [nout_copy] used with DYRT_OP_SCALE */
    const double *out_copy_offset;    /* [nout_copy] used with DYRT_OP_OFFSET, CONST */
    const unsigned char *param_has_const; /* [np] 1: the default is param_const[i] */
    const double *param_const;        /* [np] */
    const unsigned char *start_has_const; /* [ny] bit 1: y from start_y_const,
                                             bit 2: y' from start_yp_const */
    const double *start_y_const;      /* [ny] */
    const double *start_yp_const;     /* [ny] */

    /* ABI 4 (appended; NULL when nz == 0) */
    const unsigned char *event_kind;  /* [nz] DYRT_EVENT_*: what mode k means */
    const char *const *event_names;   /* [nz] the condition as written, with its
                                         location ("v > 0 (friction.dyad:5)"),
                                         for messages */

    /* also ABI 4 (0 / NULL: none; see "Checks" above) */
    int32_t init_ncheck;              /* over-determining initial relations */
    const char *const *init_check_with; /* [init_ncheck] what determines their unknowns */

    /* ABI 4, appended: clocks (see "Clocks"); NULL arrays when nclocks == 0 */
    int32_t nclocks;
    const char *const *clock_names;   /* [nclocks] */
    const uint8_t *clock_kind;        /* [nclocks] DYRT_CLOCK_* */
    const int32_t *clock_zc;          /* [nclocks] its event (DYRT_EVENT_CLOCK), -1 */
    const int32_t *clock_order;       /* [nclocks] clocks in ticking order */
    DyrtClockTimingFn clock_timing;   /* out[2c] = period, out[2c+1] = offset */
    const DyrtTickSampleFn *tick_sample;       /* [nclocks] */
    const int32_t *tick_nw;                    /* [nclocks] iteration unknowns */
    const int32_t *tick_w_ptr;                 /* [nclocks+1] into tick_w_names */
    const char *const *tick_w_names;           /* what the w are, for messages */
    const DyrtInitResidualFn *tick_residual;   /* [nclocks] */
    const DyrtInitJacobianFn *tick_jacobian;   /* [nclocks] nw*nw, column-major */
    const DyrtInitGuessFn *tick_guess;         /* [nclocks] */
    const DyrtInitFinishFn *tick_finish;       /* [nclocks] */
    const int32_t *tick_copy_ptr;              /* [nclocks+1] */
    const int32_t *tick_copy_dst;
    const int32_t *tick_copy_src;

    /* ABI 5 (appended; NULL/0 when absent): where values come from, for the
     * message on a NaN or Inf.  Equations e are instances of source
     * relations; src_names holds each relation once with its line. */
    int32_t nsrc;
    const char *const *src_names;     /* [nsrc] "i = v / R (rc.dyad:12)" */
    int32_t neq;
    const int32_t *eq_src;            /* [neq] index into src_names */
    const int32_t *resid_eq;          /* [ny] equation of residual row r, -1 */
    const int32_t *out_eq;            /* [nout] equation computing output j, -1
                                         for states, aliases, parameters */
    const int32_t *out_rank;          /* [nout] evaluation order of that
                                         computation (BLT position), -1 */
    int32_t nrisk;                    /* risky operations, ascending risk_eq */
    const int32_t *risk_eq;           /* [nrisk] */
    const unsigned char *risk_kind;   /* [nrisk] DYRT_RISK_* */
    const int32_t *risk_arg;          /* [nrisk] the argument: output column
                                         >= 0, parameter p as -(p + 1) */

    /* ABI 5, appended (0 / NULL: none): coefficient checks.  The model
     * solves some equations symbolically by dividing by an expression of
     * parameters; check_coefs(p) returns 0 when every such coefficient is
     * nonzero and finite, else 1 + the index of the first that is not, whose
     * coef_check_msgs entry names the equation, the variable and the
     * parameters.  The runtime calls it once the parameters are known,
     * before initializing. */
    int32_t ncoef_check;
    const char *const *coef_check_msgs; /* [ncoef_check] */
    DyrtCoefCheckFn check_coefs;

    /* ABI 6, appended (NULL: none): out_alias[k] = +-(j + 1) when output
     * column k always equals column j < k (or its negation): the same
     * expression after alias elimination.  Result files (-o FILE.mat)
     * store such a column as a reference to j. */
    const int32_t *out_alias;         /* [nout] */

    /* ABI 6, appended (0 / NULL: none): state sets, see "State sets". */
    int32_t nsets;
    const int32_t *set_info;          /* [DYRT_SET_INFO * nsets] */
    const int32_t *set_state_y;       /* [sum of nstates] y slot of each set state */
    const int32_t *set_init;          /* [sum of nstates] its candidate at the start */
    const char *const *set_cand_names; /* [sum of ncand] */
    int32_t set_neval;                /* length of set_eval's output */
    DyrtOutputsFn set_eval;           /* every set's Jacobian (row-major), then the
                                         candidates' values, then their derivatives */

    /* ABI 6, appended (NULL: none): out_conn[k] = 1 when output column k
     * is a field of a connector (`r.p.v`) or an input (`g.u`), 0 for a
     * variable a component declares (`r.v`) or a block's output (`g.y`).  The default result columns leave out the
     * connector fields whose value another column already holds
     * (docs/RUNTIME.md, "Output"). */
    const unsigned char *out_conn;    /* [nout] */

    /* ABI 6, appended (0 / NULL: none): the initialization system's BLT,
     * blocks in dependency order (see "Initialization blocks"). */
    int32_t init_nblocks;
    const int32_t *init_block_ptr;    /* [init_nblocks+1] into the next two */
    const int32_t *init_block_rows;   /* [init_n] the block's init equations */
    const int32_t *init_block_cols;   /* [init_n] the unknown each determines */

    /* ABI 6, appended (0 / NULL: none): F's blocks as Model Exchange solves
     * them, the states fixed (runtime/me.c): ode_nblocks blocks grouped by
     * level -- a block's rows read only its own unknowns and those of lower
     * levels -- level l being blocks ode_level_ptr[l] .. ode_level_ptr[l+1];
     * block b's residual rows and the unknowns they determine (index i: y'_i
     * of a differential i, y_i of an algebraic one) are ode_rows/ode_cols
     * [ode_ptr[b] .. ode_ptr[b+1]).  ode_flags[b]: DYRT_ODE_LINEAR when the
     * rows' derivatives in the block's unknowns are free of them,
     * DYRT_ODE_KNOWN when free of every unknown (states, parameters, time,
     * modes only). */
    int32_t ode_nblocks, ode_nlevels;
    const int32_t *ode_level_ptr;     /* [ode_nlevels+1] */
    const int32_t *ode_ptr;           /* [ode_nblocks+1] */
    const int32_t *ode_rows;          /* [ny] */
    const int32_t *ode_cols;          /* [ny] */
    const unsigned char *ode_flags;   /* [ode_nblocks] DYRT_ODE_* */
} DyrtModel;

/* ode_flags bits */
enum { DYRT_ODE_LINEAR = 1, DYRT_ODE_KNOWN = 2 };

#endif
