/*
 * system.h -- the System: what the structure phase hands to codegen.
 *
 * Everything is expressed as Expr lists over codegen-level leaves only:
 *   EXPR_Y(i), EXPR_YP(i)  integrator unknowns and their derivatives
 *   EXPR_P(i)              parameter slots
 *   EXPR_Z(i)              initialization-system unknowns (init_* only)
 *   EXPR_TIME, EXPR_CONST
 * Explicit assignments found by BLT are already substituted into the
 * expressions (the DAG shares them, so codegen computes each once per
 * emitted function).  Codegen is pure emission: it never analyses.
 *
 * This mirrors runtime/dyad_model.h (DyrtModel) field by field; codegen
 * turns each Expr list into one or more bounded LLVM functions and each
 * array into a constant global.
 */
#ifndef DYADC_SYSTEM_H
#define DYADC_SYSTEM_H

#include "expr.h"
#include "support.h"

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
 * The discrete values are parameter slots flagged DYRT_PARAM_DISCRETE. */
typedef struct SysClock {
    const char *name;             /* e.g. "clock.clk" */
    uint8_t kind;                 /* DYRT_CLOCK_PERIODIC / DYRT_CLOCK_ZERO_CROSSING */
    Expr *period, *offset;        /* periodic: over P */
    int32_t zc;                   /* zero-crossing clock: its function in zc[], else -1 */
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

typedef struct System {
    ExprCtx *ctx;
    const char *model_name;       /* qualified name */

    /* integrator unknowns */
    uint32_t ny;
    const char **y_names;         /* [ny] */
    unsigned char *y_is_diff;     /* [ny] */
    Expr **start;                 /* [ny] starting value of y (over P, TIME) */
    Expr **start_yp;              /* [ny] starting value of y' (over P, TIME); usually 0 */

    /* parameters */
    uint32_t np;
    const char **param_names;     /* [np] */
    unsigned char *param_flags;   /* [np] DYRT_PARAM_* */
    Expr **param_default;         /* [np] over P (other parameters); NULL = no
                                     default (must be given, or MISSING) */
    uint32_t *param_order;        /* [np] evaluation order of defaults
                                     (dependencies first) */

    /* F(t, y, y', p) = 0 and its Jacobian pattern (CSC: column = unknown) */
    Expr **resid;                 /* [ny] */
    uint32_t jac_nnz;
    int32_t *jac_colptr;          /* [ny+1] */
    int32_t *jac_rowidx;          /* [jac_nnz] */
    Expr **jac_dy;                /* [jac_nnz] dF_row/dy_col */
    Expr **jac_dyp;               /* [jac_nnz] dF_row/dy'_col; J = dy + cj*dyp */

    /* outputs: every flat variable, aliases included */
    uint32_t nout;
    const char **out_names;       /* [nout] */
    Expr **out;                   /* [nout] over Y, YP, P, TIME */

    /* events and checks */
    uint32_t nz;
    Expr **zc;                    /* [nz] zero-crossing functions */
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

    /* clocks and their partitions (ticks), in clock order; tick_order: the
     * order in which clocks that tick at one instant are handled */
    uint32_t nclocks;
    SysClock *clocks;             /* [nclocks] */
    uint32_t *tick_order;         /* [nclocks] */

    /* what the structural analysis decided (states, dummy derivatives, BLT
     * blocks, torn variables), as deterministic text for `--structure` */
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
} System;

#endif
