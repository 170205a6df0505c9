/*
 * dyrt_init.h -- the initialization's Newton state, shared by the
 * whole-system Newton (init.c) and the block-wise solver (initblock.c).
 */
#ifndef DYRT_INIT_H
#define DYRT_INIT_H

#include <klu.h>

#include "dyrt_internal.h"

#define NEWTON_MAXITER 100
#define NEWTON_FTOL 1e-10      /* |r|_inf below this: converged */
#define NEWTON_STEPTOL 1e-14   /* relative step below this ... */
#define NEWTON_FTOL_LOOSE 1e-6 /* ... and |r|_inf below this: converged */
#define NEWTON_MINSTEP 1e-10   /* smallest line-search step factor */
#define NEWTON_PERTURBATIONS 3 /* retries at nearby points when J is singular */
#define CHECK_RTOL 1e-6        /* a check holds: |lhs - rhs| <= this * max(1, |lhs|, |rhs|) */

typedef struct Newton {
    DyrtSim *s;
    const DyrtModel *m;
    const double *p;
    double t0;
    int n;
    int *colptr, *rowidx;      /* int copies of the pattern for KLU */
    double *z, *r, *dz, *zt, *rt, *vals; /* r, rt: [n + 2 * init_ncheck] (checks last) */
    klu_symbolic *sym;         /* analysed when the whole-system Newton first needs it */
    klu_common common;
    long iters, evals;
    /* --initial overrides: row over_row[k] reads z[over_z[k]] - over_val[k] */
    int nover;
    int *over_row, *over_z, *over_pos; /* over_pos: (row, z) entry in vals */
    double *over_val;
    unsigned char *row_over;   /* [n] 1 when the row is overridden */
    int quiet;                 /* a failure is not reported (the homotopy follows) */
    int homotopy;              /* 1 it solved the system, -1 it failed, 0 not tried */
    /* guess rows (initguess.c); map == NULL: the model's pattern, vals in its order */
    int *map;                  /* [init_nnz] position of the model's entry k in vals */
    double *mvals;             /* [init_nnz] the model's Jacobian values */
    int ng, ncand;             /* guess rows, `missing` columns */
    int *g_row, *g_col, *g_orig; /* [ng] row, column it pins now, column the compiler chose */
    int *cand;                 /* [ncand] the `missing` columns */
    double *guess;             /* [n] the starting point */
    int swapped;               /* dyrt_init_swap_guess was tried */
} Newton;

/* What the block-wise pass did (initblock.c). */
typedef struct InitBlocks {
    int nblocks, nlevels;      /* of the model's init BLT */
    long rounds;               /* Newton steps, one per level and iteration */
    int nsparse, largest;      /* blocks it solved by sparse LU; rows of the largest block */
    unsigned char *solved;     /* [n] 1 for the unknowns of the blocks it solved (caller frees) */
    int failed;                /* first block left to the whole system, -1 none */
    int left;                  /* why: DYRT_INIT_LEFT_* */
    char why[1200];            /* why, naming its equations and unknowns */
} InitBlocks;

/* init.c: r = F(z) with the overrides, 0 when finite (the first n rows);
 * the Jacobian at nw->z into nw->vals; the text of one row for messages */
int dyrt_init_eval(Newton *nw, const double *z, double *r);
int dyrt_init_jacobian(Newton *nw);
size_t dyrt_init_describe(const Newton *nw, int row, char *buf, size_t size);

/* initblock.c: solve the init BLT's blocks in order from nw->z; what it
 * leaves (ib->failed >= 0) the caller hands to the whole-system Newton. */
int dyrt_init_blocks(Newton *nw, InitBlocks *ib);

/* inithomotopy.c: from the guesses z0 to a solution in nw->z; 0 when found */
int dyrt_init_homotopy(Newton *nw, const double *z0);

/* initguess.c: J singular: pin another `missing` parameter in a guess row
 * (once per solve); the factorization, or NULL.  The residual and the
 * Jacobian of the rows so moved (dyrt_init_eval, dyrt_init_jacobian). */
klu_numeric *dyrt_init_swap_guess(Newton *nw);
void dyrt_init_guess_residual(const Newton *nw, const double *z, double *r);
void dyrt_init_guess_jacobian(Newton *nw);

#endif
