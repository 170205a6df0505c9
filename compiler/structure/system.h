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
    /* Checks: initial relations that over-determine the initialization
     * system (init.c).  init_resid has init_n + 2 * init_ncheck entries: the
     * square system, then (lhs, rhs) of each check, which the runtime
     * compares once the square system is solved; init_eq_names has init_n +
     * init_ncheck. */
    uint32_t init_ncheck;
    const char **init_check_with; /* [init_ncheck] the relations that determine
                                     the check's unknowns, for messages */
} System;

#endif
