/*
 * system.h -- the System: what the structure phase hands to codegen.
 *
 * Everything is expressed as Expr lists over codegen-level leaves only:
 *   EXPR_Y(i), EXPR_YP(i)  integrator unknowns and their derivatives
 *   EXPR_P(i)              parameter slots
 *   EXPR_Z(i)              initialization-system unknowns (init_* only)
 *   EXPR_MODE(k)           the mode of event k (resid, jac_*, out, zc only)
 *   EXPR_TIME, EXPR_CONST
 * Explicit assignments found by BLT are already substituted into the
 * expressions (the DAG shares them, so codegen computes each once per
 * emitted function).  Codegen is pure emission: it never analyses; what is
 * data (output copies, constant defaults and start values) is classified
 * here, in the tables below.
 *
 * Rows of a run of like template instances may come compressed as loop
 * items (`loops`, SysLoop below): the first row's Expr and a stride per
 * leaf, with their resid[] and jac_dy/jac_dyp[] entries NULL.  Read them
 * per row with sys_resid_at/sys_jac_at/sys_at_index, or call sys_expand
 * for the plain scalar lists (structure/sysloop.c).
 *
 * The BLT block sequence is kept beside the residual form (`blocks`):
 * in BLT order (dependencies first), each block names the unknowns it
 * determines and where its residual rows are, so a consumer can evaluate
 * the system block by block (initialization, model exchange, clocked
 * partitions) instead of as one residual:
 *   SB_ASSIGN         one unknown, no residual row: assigned[k] := value,
 *                     computed from the blocks before it;
 *   SB_STATE_DER      one row: the y' of a state (IDA's residual for it);
 *   SB_IMPLICIT       one row, one unknown kept implicit (solvability rule);
 *   SB_LINEAR, SB_NONLINEAR  a torn algebraic loop: its iteration variables
 *                     (the block's first `ntear` unknowns, IDA unknowns) and
 *                     as many residual rows; the other unknowns are assigned
 *                     inside the loop from the iteration variables;
 *   SB_SPARSE         a loop too large to tear: every unknown an iteration
 *                     variable, one row each.
 * Residual rows of one block are consecutive in `resid`, blocks in order,
 * so resid[res_first .. res_first + ntear) are block b's rows.
 *
 * Events (structure/events.c): every relation on continuous values is an
 * event k with a zero-crossing function zc[k] and a mode, the leaf
 * EXPR_MODE(k): 1 while zc[k] > 0, 0 otherwise, changed only at events
 * located by the integrator.  The simulation expressions (resid, jac_*,
 * out, zc) read the mode instead of comparing; assertions, start values
 * and the initialization system compare directly.  Adding an event kind:
 * a line in SYS_EVENT_KINDS, its DYRT_EVENT_* twin in runtime/dyad_model.h
 * and its mode rule in runtime/events.c.
 *
 * This mirrors runtime/dyad_model.h (DyrtModel) field by field but keeps
 * its own enums (SysParamFlag, SysEventKind, SysSrc), which codegen maps
 * to the ABI's; codegen turns each Expr list into one or more bounded LLVM
 * functions and each array into a constant global.
 */
#ifndef DYADC_SYSTEM_H
#define DYADC_SYSTEM_H

#include "expr.h"
#include "support.h"

#define SYS_BLOCK_KINDS(X)                                        \
    X(SB_ASSIGN, "assignment")                                    \
    X(SB_STATE_DER, "state derivative")                           \
    X(SB_IMPLICIT, "implicit")                                    \
    X(SB_LINEAR, "linear loop")                                   \
    X(SB_NONLINEAR, "nonlinear loop")                             \
    X(SB_SPARSE, "sparse loop")

typedef enum {
#define X(k, name) k,
    SYS_BLOCK_KINDS(X)
#undef X
    SB_KIND_COUNT
} SysBlockKind;

extern const char *const sys_block_kind_names[SB_KIND_COUNT];

/* what a block determines: y[index], y'[index] or assigned[index] */
typedef enum { SU_Y, SU_YP, SU_ASSIGNED } SysUnknownKind;

typedef struct SysUnknown {
    uint8_t kind;                 /* SysUnknownKind */
    uint32_t index;
} SysUnknown;

typedef struct SysBlock {
    uint8_t kind;                 /* SysBlockKind */
    uint32_t first, n;            /* block_unknowns[first .. first + n) */
    uint32_t ntear;               /* the first ntear of them are iteration
                                     variables (Y or YP); as many residual rows */
    uint32_t res_first;           /* resid[res_first .. res_first + ntear) */
} SysBlock;

/* ode_flags bits (System, "The blocks ... as Model Exchange solves them") */
enum { SYS_ODE_LINEAR = 1, SYS_ODE_KNOWN = 2 };

/* param_flags bits */
typedef enum {
    SYS_PARAM_FINAL = 1,       /* `final` or a constant: not overridable */
    SYS_PARAM_MISSING = 2,     /* value `missing`: solved at initialization */
    SYS_PARAM_DEPENDENT = 4,   /* default is an expression of other parameters */
    SYS_PARAM_REQUIRED = 8,    /* no value in the model: must be given (-p) */
    SYS_PARAM_DISCRETE = 16,   /* a value of the clocked world (clocks), not a parameter */
    SYS_PARAM_INPUT = 32       /* an input of the component (FV_INPUT): given from
                                  outside while it runs, not a parameter */
} SysParamFlag;

/* what an event's mode means: X(NAME, description) */
#define SYS_EVENT_KINDS(X) \
    X(RELATION, "relation")    /* a < b, a <= b, a > b, a >= b, sign(a): mode = g > 0 */ \
    X(CLOCK, "clock")          /* a zero-crossing clock ticks at each crossing of g; mode = g > 0 */ \
    X(STATESET, "state set")   /* mode = the candidate that is this state of a set (below) */

typedef enum {
#define X(k, text) SYS_EV_##k,
    SYS_EVENT_KINDS(X)
#undef X
    SYS_EV_COUNT
} SysEventKind;

/* An operation that turns finite inputs into NaN or Inf, with the test
 * the runtime makes on its argument: X(NAME, text) */
#define SYS_RISK_KINDS(X)                                                   \
    X(DIV, "division by zero")                  /* a / x: x == 0 */          \
    X(SQRT, "square root of a negative number") /* x < 0 */                   \
    X(LOG, "logarithm of a number <= 0")        /* log, log10: x <= 0 */      \
    X(ASIN, "asin/acos of a number outside [-1, 1]")                          \
    X(POW_NEG, "non-integer power of a negative number") /* x^c: x < 0 */    \
    X(POW_ZERO, "zero to a negative power")     /* x^c, c < 0: x == 0 */

typedef enum {
#define X(k, text) SYS_RISK_##k,
    SYS_RISK_KINDS(X)
#undef X
    SYS_RISK_COUNT
} SysRiskKind;

typedef struct SysRisk {
    uint32_t eq;               /* the equation (origins below) it is in */
    uint8_t kind;              /* SysRiskKind */
    int32_t arg;               /* its argument: output column >= 0, or
                                  parameter p as -(p + 1) */
} SysRisk;

/* An output column that is a copy: v = source; if NEG v = -v; if SCALE
 * v *= scale; if OFFSET v += offset (SRC_CONST: v = offset). */
typedef enum { SYS_SRC_Y, SYS_SRC_YP, SYS_SRC_P, SYS_SRC_TIME, SYS_SRC_CONST } SysSrc;
enum { SYS_OP_NEG = 1, SYS_OP_SCALE = 2, SYS_OP_OFFSET = 4 };

typedef struct SysCopy {
    uint32_t dest;             /* output column */
    uint8_t src;               /* SysSrc */
    uint8_t ops;               /* SYS_OP_* */
    uint32_t index;            /* slot of SRC_Y, SRC_YP, SRC_P */
    double scale, offset;
} SysCopy;

/* One clock and its partition (docs/STRUCTURE.md, "Clocked partitions").
 * A tick of the clock, at time t with the continuous point (y, y'):
 *   1. p[sample_slot[i]] = sample[i]           (over Y, YP, P, TIME)
 *   2. if nw > 0: solve resid(w) = 0 for the nw iteration unknowns w by
 *      Newton, from w = guess, with the dense Jacobian jac (column-major,
 *      jac[j*nw + i] = d resid[i] / d w[j]); over Z (= w), P, TIME
 *   3. p[set_slot[i]] = set[i]                  (over Z, P, TIME): the new
 *      values of the partition's variables
 *   4. p[copy_dst[i]] = p[copy_src[i]], in order: previous values shift
 *      (x@(clk-k) <- x@(clk-k+1), x@(clk-1) <- x), held values update.
 * The discrete values are parameter slots flagged SYS_PARAM_DISCRETE. */
typedef enum { SYS_CLOCK_PERIODIC, SYS_CLOCK_ZERO_CROSSING } SysClockKind;

typedef struct SysClock {
    const char *name;             /* e.g. "clock.clk" */
    uint8_t kind;                 /* SysClockKind */
    Expr *period, *offset;        /* periodic: over P */
    int32_t zc;                   /* zero-crossing clock: its event (a SYS_EV_CLOCK), else -1 */
    uint32_t nsample;
    uint32_t *sample_slot;        /* [nsample] */
    Expr **sample;                /* [nsample] */
    uint32_t nw;
    const char **w_names;         /* [nw] the variables iterated on */
    Expr **resid;                 /* [nw] */
    Expr **jac;                   /* [nw * nw] */
    Expr **guess;                 /* [nw] over P */
    uint32_t nset;
    uint32_t *set_slot;           /* [nset] */
    Expr **set;                   /* [nset] */
    uint32_t ncopy;
    uint32_t *copy_dst, *copy_src; /* [ncopy] */
} SysClock;

/* A state set (structure/stateset.c): of its ncand candidates x_i the
 * runtime chooses nstates as states; mode mode_first + j (an event of kind
 * SYS_EV_STATESET) is the index of the candidate that is state j, whose
 * integrator unknown is y[set_state_y[state_first + j]] (s_j = x_mode).
 * The pivot criterion: set_jac[jac_first ..] holds the Jacobian of the
 * set's nrows equations in its nfixed fixed columns, then its ncand
 * candidate columns (derivatives of the x_i), row-major; the fixed columns
 * are eliminated first, the candidates not chosen as states must leave a
 * nonsingular rest.  set_cand_value/der[cand_first + i] are x_i and x_i'. */
typedef struct SysStateSet {
    uint32_t nrows, nfixed, ncand, nstates;
    uint32_t mode_first, jac_first, cand_first, state_first;
} SysStateSet;

/* A loop item of the residual (docs/ARCHITECTURE.md, "Arrays", stage 3
 * step 3): `count` residual rows that are one row template read at
 * shifted slots, the rows of a run of like template instances, over a box
 * of up to SYS_LOOP_MAX_DIM dimensions (a line, the lines of a plane, the
 * planes of a block of a 3-D grid).  Instance j of the item has the
 * multi-index (i_0, i_1, i_2) with j = i_0 + dim_count[0] * (i_1 +
 * dim_count[1] * i_2) (dimension 0 innermost); it is row
 *   row + sum over d of i_d * dim_row[d]
 * and that row is `res` with every leaf leaf[i] (a Y, YP or P leaf of res)
 * read at index leaf[i]->index + sum over d of i_d * stride[d * nleaf + i];
 * every other leaf (TIME, constants) as it is.  So each row is exactly the
 * Expr sys_expand builds by that renaming (the same tree the scalar path
 * builds for it).  A 1-D item (a line; dim_row[0] = 1 when its rows are
 * consecutive) is the one-dimensional case, nothing apart.  The rows need
 * not be consecutive: other rows (scalar ones, other items) may lie
 * between them; dim_row[d] is at least the rows spanned by dimensions
 * below d, so a row's multi-index is found by division.  Its Jacobian
 * entries: nent per row, one per distinct column of res in jac_row's
 * order; entry e of instance j is in column col[e] + sum over d of i_d *
 * col_stride[d * nent + e], its derivatives are dy[e], dyp[e] read like
 * res, and it is stored at CSC position jac_pos[j * nent + e] (the
 * positions are not affine where the band meets an edge).  For those
 * rows and positions resid[] and jac_dy/jac_dyp[] are NULL until
 * sys_expand.
 * The same form (one dimension) gives consecutive entries of another Expr
 * list (out, assigned_value: `out_loops`, `asg_loops` below) that are the
 * assigned values of a run: `row` is the first entry, nent = 0 (no
 * Jacobian), and the first entry keeps its Expr (list[row] == res) while
 * the others are NULL until sys_expand. */
#define SYS_LOOP_MAX_ENT 64       /* at most nent (the structure phase's bound;
                                     codegen's loop period must hold it) */
#define SYS_LOOP_MAX_DIM 3
typedef struct SysLoop {
    uint32_t row, count;          /* its first row; instances (the product of dim_count) */
    uint32_t ndim;                /* 1 .. SYS_LOOP_MAX_DIM */
    uint32_t dim_count[SYS_LOOP_MAX_DIM]; /* instances along dimension d */
    uint32_t dim_row[SYS_LOOP_MAX_DIM];   /* row step along dimension d */
    Expr *res;                    /* row `row`, over Y, YP, P, TIME (no MODE,
                                     no relation: events are per row) */
    uint32_t nleaf;
    Expr **leaf;                  /* [nleaf] the distinct Y, YP, P leaves of res */
    int32_t *stride;              /* [ndim * nleaf] index step along each dimension */
    uint32_t nent;
    uint32_t *col;                /* [nent] column of entry e in row `row` */
    int32_t *col_stride;          /* [ndim * nent] */
    Expr **dy, **dyp;             /* [nent] dres/dy_col, dres/dy'_col */
    int32_t *jac_pos;             /* [count * nent] CSC positions */
} SysLoop;

/* Where an Expr of the System is read (sys_jac_at): `loop` NULL for a
 * scalar item, else instance j of that loop. */
typedef struct SysAt {
    const SysLoop *loop;
    uint32_t j;
} SysAt;

typedef struct System {
    ExprCtx *ctx;
    const char *model_name;       /* qualified name */

    /* integrator unknowns */
    uint32_t ny;
    const char **y_names;         /* [ny] */
    unsigned char *y_is_diff;     /* [ny] */
    Expr **start;                 /* [ny] starting value of y (over P, TIME) */
    Expr **start_yp;              /* [ny] starting value of y' (over P, TIME); usually 0 */
    unsigned char *start_has_const; /* [ny] bit 1: start[i] is the constant
                                     start_y_const[i] (or absent: 0), bit 2:
                                     the same for start_yp */
    double *start_y_const, *start_yp_const; /* [ny] */

    /* parameters */
    uint32_t np;
    const char **param_names;     /* [np] */
    unsigned char *param_flags;   /* [np] SysParamFlag bits */
    Expr **param_default;         /* [np] over P (other parameters); NULL = no
                                     default (must be given, or MISSING) */
    uint32_t *param_order;        /* [np] evaluation order of defaults
                                     (dependencies first) */
    unsigned char *param_has_const; /* [np] 1: the default is the constant
                                     param_const[i] (data, not code) */
    double *param_const;          /* [np] */

    /* F(t, y, y', p) = 0 and its Jacobian pattern (CSC: column = unknown) */
    Expr **resid;                 /* [ny] */
    uint32_t jac_nnz;
    int32_t *jac_colptr;          /* [ny+1] */
    int32_t *jac_rowidx;          /* [jac_nnz] */
    Expr **jac_dy;                /* [jac_nnz] dF_row/dy_col */
    Expr **jac_dyp;               /* [jac_nnz] dF_row/dy'_col; J = dy + cj*dyp */
    /* rows given as loop items (SysLoop above), ascending row, disjoint;
     * their resid[] and jac_dy/jac_dyp[] entries are NULL; their rows
     * may interleave (a box's rows around the rows of its boundary) */
    uint32_t nloops;
    SysLoop *loops;               /* [nloops] ascending first row */
    uint32_t *row_loop;           /* [ny] k + 1 for a row of loops[k], 0 for a
                                     scalar row (sys_index_loops) */

    /* the BLT block sequence of F (see above) */
    uint32_t nblocks;
    SysBlock *blocks;             /* [nblocks] in BLT order */
    SysUnknown *block_unknowns;   /* [sum of n] */
    /* The blocks with residual rows as Model Exchange solves them, states
     * fixed (tables.c): ode_nblocks of them grouped by level (a block's
     * rows read only unknowns of blocks of lower levels and its own),
     * level l = blocks ode_level_ptr[l] .. ode_level_ptr[l+1]; block b's
     * rows and the unknowns (y' of a state, y of an algebraic one) they
     * determine are ode_rows/ode_cols[ode_ptr[b] .. ode_ptr[b+1]);
     * ode_flags[b]: SYS_ODE_LINEAR when its rows' derivatives in its own
     * unknowns are free of them, SYS_ODE_KNOWN when free of every unknown
     * (only states, parameters, time, modes): one Newton step with the
     * matrix at the call's start solves it.  ode_nblocks = 0: not given. */
    uint32_t ode_nblocks, ode_nlevels;
    uint32_t *ode_level_ptr;      /* [ode_nlevels+1] */
    uint32_t *ode_ptr;            /* [ode_nblocks+1] */
    uint32_t *ode_rows, *ode_cols; /* [ny] */
    unsigned char *ode_flags;     /* [ode_nblocks] SYS_ODE_* */
    uint32_t nassigned;
    const char **assigned_names;  /* [nassigned] e.g. "r1.i", "der(x)" */
    Expr **assigned_value;        /* [nassigned] over Y, YP, P, TIME (the
                                     earlier assignments substituted) */
    /* assigned values given as loop items (SysLoop above): ascending,
     * disjoint; assigned_value[] NULL after each one's first entry */
    uint32_t nasg_loops;
    SysLoop *asg_loops;           /* [nasg_loops] */

    /* state sets (dynamic state selection, see above) */
    uint32_t nsets;
    SysStateSet *sets;            /* [nsets] */
    Expr **set_jac;               /* over Y, YP, P, TIME, MODE */
    const char **set_cand_names;  /* [sum ncand] */
    Expr **set_cand_value;        /* [sum ncand] */
    Expr **set_cand_der;          /* [sum ncand] */
    uint32_t *set_state_y;        /* [sum nstates] */
    uint32_t *set_init;           /* [sum nstates] the candidate of state j at the start */

    /* outputs: every flat variable, aliases included */
    uint32_t nout;
    const char **out_names;       /* [nout] */
    Expr **out;                   /* [nout] over Y, YP, P, TIME, MODE */
    uint32_t nout_copy;
    SysCopy *out_copy;            /* [nout_copy] the columns that are copies,
                                     ascending dest; the others are computed */
    int32_t *out_alias;           /* [nout] 0, or +-(j + 1): column k is column
                                     j < k (or its negation), the same
                                     expression (tables.c); for result files */
    unsigned char *out_conn;      /* [nout] 1: a field of a connector (`r.p.v`,
                                     an input `g.u`), 0: a variable of a component
                                     (`r.v`) or a block's output (`g.y`); the
                                     default result columns (docs/RUNTIME.md) */
    /* columns given as loop items (SysLoop above): ascending, disjoint;
     * out[] NULL after each one's first column.  Never copies, and no
     * other column equals or negates one of their NULL columns (out_alias
     * is the scalar lists') */
    uint32_t nout_loops;
    SysLoop *out_loops;           /* [nout_loops] */

    /* coefficient checks (structure/solve.c): an equation is solved for a
     * variable by dividing by coef_check[k], an expression of parameters;
     * the runtime stops with coef_check_msg[k] when one is zero or not
     * finite, as soon as the parameter values are known */
    uint32_t ncoef_check;
    Expr **coef_check;            /* [ncoef_check] over P */
    const char **coef_check_msg;  /* [ncoef_check] names the equation, the
                                     variable and the parameters */

    /* events (see above) and checks */
    uint32_t nz;
    Expr **zc;                    /* [nz] zero-crossing functions over Y, YP, P,
                                     TIME and the modes of other events */
    uint8_t *zc_kind;             /* [nz] SysEventKind */
    const char **zc_names;        /* [nz] the condition as written, with its
                                     location: "v > 0 (friction.dyad:5)" */
    uint32_t nassert;
    Expr **assert_cond;           /* [nassert] must be nonzero (true) */
    const char **assert_msg;      /* [nassert] */

    /* initialization system: init_resid(t0, z, p) = 0; 0 unknowns = none */
    uint32_t init_n;
    const char **init_names;      /* [init_n] */
    Expr **init_resid;            /* [init_n] over Z, P, TIME */
    uint32_t init_nnz;
    int32_t *init_colptr;         /* [init_n+1] */
    int32_t *init_rowidx;         /* [init_nnz] */
    Expr **init_jac;              /* [init_nnz] d init_resid_row / d z_col */
    Expr **init_guess;            /* [init_n] over P, TIME */
    uint8_t *init_target_kind;    /* [init_n] EXPR_Y, EXPR_YP or EXPR_P: where
                                     init_finish stores z[i] */
    uint32_t *init_target_index;  /* [init_n] */

    /* origins (origins.c), for the runtime's message on a NaN or Inf:
     * equations e are instances of source relations (src_names, shared by
     * every instance of a component line) */
    uint32_t nsrc;
    const char **src_names;       /* [nsrc] "i = v / R (rc.dyad:12)" */
    uint32_t neq;
    int32_t *eq_src;              /* [neq] its src_names index */
    int32_t *resid_eq;            /* [ny] equation of residual row r, -1 */
    int32_t *out_eq;              /* [nout] equation computing output j, -1 for
                                     states, aliases (copies) and parameters */
    int32_t *out_rank;            /* [nout] BLT position of that computation, -1 */
    uint32_t nrisk;
    SysRisk *risk;                /* [nrisk] ascending eq */

    /* clocks and their partitions (ticks), in clock order; tick_order: the
     * order in which clocks that tick at one instant are handled */
    uint32_t nclocks;
    SysClock *clocks;             /* [nclocks] */
    uint32_t *tick_order;         /* [nclocks] */

    /* what the structural analysis decided (states, dummy derivatives, BLT
     * blocks, torn variables), as deterministic text for `--structure`;
     * NULL when StructOptions.no_report (every other command) */
    const char *report;

    /* default simulation settings (from an analysis, else built-in) */
    double start_time, stop_time, interval, rtol, atol, dtmax;
    uint32_t ntstops;
    double *tstops;

    /* Appended for the runtime's messages and --initial (runtime/dyad_model.h,
     * ABI 2).  Optional: left NULL (the arena zeroes the System), codegen emits
     * null pointers, the runtime then numbers init equations and refuses
     * --initial on models with an initialization system.  Filled by the
     * structure phase (init.c) when it builds the init system: */
    const char **init_eq_names;   /* [init_n] origin text of init_resid[i], e.g.
                                     "initial x = x0 (msd.dyad:62)" */
    int32_t *initial_row;         /* [ny] index i of init_resid that is the
                                     `initial` relation fixing y_k (the one
                                     `--initial y_k=V` replaces by z = V), -1
                                     when y_k has none; codegen derives the
                                     matching z from init_target_kind/index */
    /* Checks: initial relations that over-determine the initialization
     * system (init.c).  init_resid has init_n + 2 * init_ncheck entries: the
     * square system, then (lhs, rhs) of each check, which the runtime
     * compares once the square system is solved; init_eq_names has init_n +
     * init_ncheck. */
    uint32_t init_ncheck;
    const char **init_check_with; /* [init_ncheck] the relations that determine
                                     the check's unknowns, for messages */
    /* The square initialization system's BLT (initblt.c): blocks in
     * dependency order; block b is the rows init_block_rows[k] with their
     * matched unknowns init_block_cols[k], k in [init_block_ptr[b],
     * init_block_ptr[b+1]).  The runtime solves them one by one. */
    uint32_t init_nblocks;
    uint32_t *init_block_ptr;     /* [init_nblocks+1] */
    uint32_t *init_block_rows;    /* [init_n] */
    uint32_t *init_block_cols;    /* [init_n] */
} System;

/* sysloop.c (structure library): the loop items as the scalar lists.
 * sys_expand fills resid[] and jac_dy/jac_dyp[] of every loop's rows and
 * entries, out[] and assigned_value[] of the output and assigned loops
 * (the Exprs the scalar path has there) and leaves nloops, nout_loops and
 * nasg_loops 0: for a consumer that wants every row as an Expr (the
 * `--structure` dump; FMI reads the items in place); it needs an
 * unsealed context.  O(size of the expanded rows). */
void sys_expand(System *s);
/* Fills row_loop from loops (allocated from the context's arena).  O(rows). */
void sys_index_loops(System *s);
/* Row of instance j of loop l, and the offset sum over d of i_d *
 * step[d * n + k] of its multi-index (a leaf's or a column's index step). */
uint32_t sys_loop_row(const SysLoop *l, uint32_t j);
int64_t sys_loop_offset(const SysLoop *l, uint32_t j, const int32_t *step, uint32_t n, uint32_t k);
/* Has instance j of loop item l been built as an Expr (by anyone, for
 * anything)?  Probed node for node, nothing is created.  O(size of l->res);
 * true (unknown) for a template of more than 64 nodes. */
bool sys_loop_instance_exists(ExprCtx *c, const SysLoop *l, uint32_t j);
/* May an instance of loop item a be the same Expr as one of b (their
 * templates one tree up to the shifted leaves' indices, and a pair of
 * instances giving those the same indices)?  O(size of the templates),
 * O(a->count) when the strides are parallel; true (unknown) for a template
 * of more than 64 nodes. */
bool sys_loops_may_meet(const SysLoop *a, const SysLoop *b);
/* The residual row r as a template and where it is read: resid[r] with
 * at->loop NULL, or the loop's res at instance at->j. */
Expr *sys_resid_at(const System *s, uint32_t r, SysAt *at);
/* Jacobian entry k (CSC position), its dF/dy (dyp false) or dF/dy'
 * template, and where it is read. */
Expr *sys_jac_at(const System *s, uint32_t k, bool dyp, SysAt *at);
/* Output column k as a template and where it is read: out[k] with
 * at->loop NULL, or its output loop's res at instance at->j (NULL: a copy
 * column). */
Expr *sys_out_at(const System *s, uint32_t k, SysAt *at);
/* The index a leaf of a template (Y, YP, P) has where at says it is read. */
uint32_t sys_at_index(const SysAt *at, const Expr *leaf);

#endif
