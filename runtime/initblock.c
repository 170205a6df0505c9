/*
 * initblock.c -- the initialization system solved block by block.
 *
 * The structure phase gives the square init system's BLT (dyad_model.h,
 * "Initialization blocks"): blocks in dependency order, each with its rows
 * and the unknowns they determine.  A block depends on the blocks whose
 * unknowns its rows read; its level is 0 without such, else 1 + the highest
 * level among them.  Blocks of one level are independent of each other once
 * the lower levels are solved, so one evaluation of the whole residual (and
 * of the whole Jacobian) serves a Newton step of every block of the level:
 * the cost is levels x iterations evaluations, not one per block.
 *
 * Each block: Newton with its dense Jacobian (LU with partial pivoting),
 * a backtracking line search on its own merit |r_b|^2 / 2 with the Armijo
 * condition, the convergence tests of the whole-system Newton (init.c).
 * The step length is the block's own: a block that needs damping does not
 * hold back the others, and rows of later levels, not yet meaningful at
 * the guess, cannot spoil a step (their NaN or Inf is ignored until their
 * level comes).  A block whose rows are not finite at its starting point,
 * or whose Jacobian is singular there, is retried at nearby points (only
 * its own unknowns moved) first.
 *
 * A block of more than BLOCK_MAX rows takes the same steps with a sparse
 * LU of its own Jacobian (KLU: its CSC pattern and symbolic analysis made
 * once, when its level comes; a numeric factorization per step) instead
 * of the dense one.
 *
 * What it cannot do -- a block still singular, not finite or not
 * converging, a deep chain of levels, levels beyond its evaluation budget
 * (below) -- it leaves, with every block after it, to the whole-system
 * damped Newton, which starts
 * from the point reached (the blocks before are solved); ib->why names
 * the block's equations and unknowns for the message if that fails too.
 * Memory O(n + nnz + sum of the small blocks' sizes squared).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dyrt_init.h"

#define BLOCK_MAX 64            /* larger blocks: sparse LU (KLU) of their own */
/* A deep chain of dependencies (levels ~ n) would cost O(n^2) row
 * evaluations, where the whole-system Newton's KLU factorization handles
 * any depth at once in ~10 evaluations.  So the levels from l on go to the
 * whole system when more than DEEP_LEVELS of them are left and they would
 * cost more than DEEP_WORK row evaluations (levels left x n; small models
 * cost nothing either way); and the pass stops after BUDGET_MIN +
 * BUDGET_ROWS / n evaluations (slowly converging levels). */
#define DEEP_LEVELS 8
#define DEEP_WORK 2e5
#define BUDGET_MIN 50
#define BUDGET_ROWS 1e6

/* a block of more than BLOCK_MAX rows: its Jacobian in CSC form for KLU,
 * set up when its level comes (rows sorted within each column) */
typedef struct Sparse {
    int *ap, *ai, *src;                /* [k + 1], [nnz], [nnz]: entry -> position in nw->vals */
    double *ax, *x;                    /* [nnz] values, [k] right-hand side */
    klu_symbolic *sym;
} Sparse;

typedef struct Bw {
    Newton *nw;
    long evals_max;                    /* nw->evals at which the budget is spent */
    const int32_t *ptr, *rows, *cols;  /* the model's BLT tables */
    int nb, nlev;
    int *level, *lev_ptr, *lev_blk;    /* blocks by level */
    int *row_block;                    /* [n] */
    int *ent_ptr, *ent_pos, *ent_ij;   /* per block: Jacobian entries inside it */
    int *a_off;                        /* [nb + 1] offset of its dense matrix (blockmap.c) */
    double *a, *step, *phi;            /* dense matrices; per block step, merit */
    int32_t *piv;                      /* [n] pivots, at ptr[b] */
    unsigned char *state;              /* per block: ACTIVE, PENDING, DONE */
    unsigned char *tries;              /* per block: moves off a singular Jacobian */
    Sparse *sp;                        /* [nb] big blocks' sparse LU, else zero */
    klu_common common;
} Bw;

enum { ACTIVE, PENDING, DONE };

static int bsize(const Bw *w, int b) { return w->ptr[b + 1] - w->ptr[b]; }

/* levels: one pass in block order (every dependency comes first) */
static void levels(Bw *w) {
    const Newton *nw = w->nw;
    for (int b = 0; b < w->nb; b++)
        for (int k = w->ptr[b]; k < w->ptr[b + 1]; k++)
            for (int e = nw->colptr[w->cols[k]]; e < nw->colptr[w->cols[k] + 1]; e++) {
                int d = w->row_block[nw->rowidx[e]];
                if (d != b && w->level[d] < w->level[b] + 1)
                    w->level[d] = w->level[b] + 1;
            }
    for (int b = 0; b < w->nb; b++) {
        if (w->level[b] + 1 > w->nlev)
            w->nlev = w->level[b] + 1;
        w->lev_ptr[w->level[b] + 1]++;
    }
    for (int l = 0; l < w->nlev; l++)
        w->lev_ptr[l + 1] += w->lev_ptr[l];
    int *fill = calloc((size_t)w->nlev + 1, sizeof *fill);
    for (int b = 0; fill && b < w->nb; b++)
        w->lev_blk[w->lev_ptr[w->level[b]] + fill[w->level[b]]++] = b;
    free(fill);
}

static int bw_alloc(Bw *w, Newton *nw) {
    const DyrtModel *m = nw->m;
    int n = nw->n, nb = m->init_nblocks;
    *w = (Bw){.nw = nw, .ptr = m->init_block_ptr, .rows = m->init_block_rows, .cols = m->init_block_cols, .nb = nb};
    DyrtBlockMap bm;
    if (dyrt_block_map(&bm, n, nb, w->ptr, w->rows, w->cols, nw->colptr, nw->rowidx, BLOCK_MAX))
        return -1;
    w->row_block = bm.row_block, w->ent_ptr = bm.ent_ptr, w->ent_pos = bm.ent_pos;
    w->ent_ij = bm.ent_ij, w->a_off = bm.a_off;
    int **iv[] = {&w->level, &w->lev_ptr, &w->lev_blk};
    size_t len[] = {nb, nb + 1, nb};
    for (int k = 0; k < 3; k++)
        if (!(*iv[k] = dyrt_calloc(len[k], sizeof(int))))
            return -1;
    levels(w);
    w->a = dyrt_calloc((size_t)w->a_off[nb], sizeof(double));
    w->step = dyrt_calloc((size_t)nb, sizeof(double));
    w->phi = dyrt_calloc((size_t)nb, sizeof(double));
    w->piv = dyrt_calloc((size_t)n, sizeof(int32_t));
    w->state = dyrt_calloc((size_t)nb, 1);
    w->tries = dyrt_calloc((size_t)nb, 1);
    w->sp = dyrt_calloc((size_t)nb, sizeof *w->sp);
    klu_defaults(&w->common);
    return w->a && w->step && w->phi && w->piv && w->state && w->tries && w->sp ? 0 : -1;
}

static void bw_free(Bw *w) {
    for (int b = 0; w->sp && b < w->nb; b++) {
        Sparse *sp = &w->sp[b];
        if (sp->sym)
            klu_free_symbolic(&sp->sym, &w->common);
        free(sp->ap), free(sp->ai), free(sp->src), free(sp->ax), free(sp->x);
    }
    void *p[] = {w->level, w->lev_ptr, w->lev_blk, w->row_block, w->ent_ptr, w->ent_pos,
                 w->ent_ij, w->a_off, w->a, w->step, w->phi, w->piv, w->state, w->tries, w->sp};
    for (size_t k = 0; k < sizeof p / sizeof *p; k++)
        free(p[k]);
}

/* |r_b|_inf, NaN when a row is not finite */
static double bnorm(const Bw *w, int b, const double *r) {
    double m = 0;
    for (int k = w->ptr[b]; k < w->ptr[b + 1]; k++) {
        double v = fabs(r[w->rows[k]]);
        if (!isfinite(v))
            return NAN;
        if (v > m)
            m = v;
    }
    return m;
}

static double bhalf_sq(const Bw *w, int b, const double *r) {
    double s = 0;
    for (int k = w->ptr[b]; k < w->ptr[b + 1]; k++)
        s += r[w->rows[k]] * r[w->rows[k]];
    return 0.5 * s;
}

/* ib->why: the block, its equations and unknowns (at most four of each) */
static void name_block(const Bw *w, int b, const char *what, InitBlocks *ib) {
    const Newton *nw = w->nw;
    const char *const *zn = nw->m->init_names;
    size_t len = (size_t)snprintf(ib->why, sizeof ib->why, "block %d of %d (%d equation%s) %s; its equations: ",
                                  b + 1, w->nb, bsize(w, b), bsize(w, b) == 1 ? "" : "s", what);
    for (int k = w->ptr[b]; k < w->ptr[b + 1] && len + 8 < sizeof ib->why; k++) {
        if (k - w->ptr[b] == 4) {
            len += (size_t)snprintf(ib->why + len, sizeof ib->why - len, "; ...");
            break;
        }
        if (k > w->ptr[b])
            len += (size_t)snprintf(ib->why + len, sizeof ib->why - len, "; ");
        len += dyrt_init_describe(nw, w->rows[k], ib->why + len, sizeof ib->why - len);
    }
    for (int k = w->ptr[b]; k < w->ptr[b + 1] && len + 8 < sizeof ib->why; k++) {
        int j = k - w->ptr[b];
        if (j == 4) {
            len += (size_t)snprintf(ib->why + len, sizeof ib->why - len, ", ...");
            break;
        }
        len += (size_t)snprintf(ib->why + len, sizeof ib->why - len, "%s'%s' = %s", j ? ", " : "; its unknowns ",
                                zn ? zn[w->cols[k]] : "?", dyrt_num(nw->z[w->cols[k]]).s);
    }
}

static int give_up(const Bw *w, int b, const char *what, InitBlocks *ib) {
    name_block(w, b, what, ib);
    ib->failed = b;
    return 1;
}

/* move block b's unknowns to a nearby point (attempt 0, 1, ...) */
static void nudge(Bw *w, int b, int attempt) {
    double scale = 1e-4 * (attempt + 1);
    for (int k = w->ptr[b]; k < w->ptr[b + 1]; k++) {
        double *z = &w->nw->z[w->cols[k]];
        *z += scale * (1 + fabs(*z)) * (k % 2 ? -1.0 : 1.0);
    }
}

/* r at z for every block of level l finite, each tried at a few nearby
 * points; 1 (ib set) when one stays non-finite */
static int finite_start(Bw *w, int l, InitBlocks *ib) {
    Newton *nw = w->nw;
    for (int attempt = 0;; attempt++) {
        int bad = -1;
        for (int i = w->lev_ptr[l]; i < w->lev_ptr[l + 1]; i++)
            if (isnan(bnorm(w, w->lev_blk[i], nw->r))) {
                bad = w->lev_blk[i];
                if (attempt < NEWTON_PERTURBATIONS)
                    nudge(w, bad, attempt);
            }
        if (bad < 0)
            return 0;
        if (attempt == NEWTON_PERTURBATIONS)
            return give_up(w, bad, "is not finite at its guess or nearby points", ib);
        dyrt_init_eval(nw, nw->z, nw->r);
    }
}

typedef struct { int row, pos; } Entry;

static int by_row(const void *x, const void *y) {
    const Entry *a = x, *b = y;
    return (a->row > b->row) - (a->row < b->row);
}

/* big block b's CSC pattern (rows sorted in each column, as KLU wants them)
 * and its symbolic analysis; -1 when that fails.  O(nnz log) */
static int sparse_setup(Bw *w, int b) {
    const Newton *nw = w->nw;
    Sparse *sp = &w->sp[b];
    int k = bsize(w, b), nnz = w->ent_ptr[b + 1] - w->ent_ptr[b], q = 0;
    Entry *ent = dyrt_calloc((size_t)nnz + 1, sizeof *ent);
    sp->ap = dyrt_calloc((size_t)k + 1, sizeof(int));
    sp->ai = dyrt_calloc((size_t)nnz + 1, sizeof(int));
    sp->src = dyrt_calloc((size_t)nnz + 1, sizeof(int));
    sp->ax = dyrt_calloc((size_t)nnz + 1, sizeof(double));
    sp->x = dyrt_calloc((size_t)k, sizeof(double));
    if (!ent || !sp->ap || !sp->ai || !sp->src || !sp->ax || !sp->x) {
        free(ent);
        return -1;
    }
    for (int j = 0; j < k; j++) { /* the order of entries(): column by column */
        int z = w->cols[w->ptr[b] + j];
        sp->ap[j] = q;
        for (int e = nw->colptr[z]; e < nw->colptr[z + 1]; e++)
            if (w->row_block[nw->rowidx[e]] == b) {
                ent[q] = (Entry){w->ent_ij[w->ent_ptr[b] + q], e};
                q++;
            }
        qsort(ent + sp->ap[j], (size_t)(q - sp->ap[j]), sizeof *ent, by_row);
    }
    sp->ap[k] = q;
    for (int i = 0; i < q; i++) {
        sp->ai[i] = ent[i].row;
        sp->src[i] = ent[i].pos;
    }
    free(ent);
    sp->sym = klu_analyze(k, sp->ap, sp->ai, &w->common);
    return sp->sym ? 0 : -1;
}

/* the Newton direction of big block b by KLU; 0 when singular */
static int sparse_direction(Bw *w, int b) {
    Newton *nw = w->nw;
    Sparse *sp = &w->sp[b];
    int k = bsize(w, b), first = w->ptr[b];
    for (int q = 0; q < sp->ap[k]; q++)
        if (!isfinite(sp->ax[q] = nw->vals[sp->src[q]]))
            return 0;
    klu_numeric *num = klu_factor(sp->ap, sp->ai, sp->ax, sp->sym, &w->common);
    if (!num)
        return 0;
    for (int i = 0; i < k; i++)
        sp->x[i] = -nw->r[w->rows[first + i]];
    int ok = klu_solve(sp->sym, num, k, 1, sp->x, &w->common);
    klu_free_numeric(&num, &w->common);
    for (int j = 0; j < k; j++)
        nw->dz[w->cols[first + j]] = sp->x[j];
    return ok;
}

/* the Newton direction of active block b into nw->dz (its columns); 0 when
 * its Jacobian is singular */
static int direction(Bw *w, int b) {
    Newton *nw = w->nw;
    int k = bsize(w, b), first = w->ptr[b];
    if (k > BLOCK_MAX)
        return sparse_direction(w, b);
    double *a = w->a + w->a_off[b], rhs[BLOCK_MAX];
    memset(a, 0, sizeof *a * (size_t)(k * k));
    for (int e = w->ent_ptr[b]; e < w->ent_ptr[b + 1]; e++)
        if (!isfinite(a[w->ent_ij[e]] = nw->vals[w->ent_pos[e]]))
            return 0;
    if (!dyrt_lu(a, k, w->piv + first))
        return 0;
    for (int i = 0; i < k; i++)
        rhs[i] = -nw->r[w->rows[first + i]];
    dyrt_lu_solve(a, k, w->piv + first, rhs);
    for (int j = 0; j < k; j++)
        nw->dz[w->cols[first + j]] = rhs[j];
    return 1;
}

/* max_k |s dz_k| / max(|z_k|, 1) over block b */
static double brelative(const Bw *w, int b, double s) {
    double m = 0;
    for (int k = w->ptr[b]; k < w->ptr[b + 1]; k++) {
        int c = w->cols[k];
        double d = fabs(s * w->nw->dz[c]) / fmax(fabs(w->nw->z[c]), 1.0);
        if (d > m)
            m = d;
    }
    return m;
}

/* Backtracking for every PENDING block of level l at once, each with its
 * own step; accepted blocks take the trial point (z, r) and become ACTIVE,
 * or DONE when the step was negligible.  Returns 1 when r is the residual
 * at z in every row afterwards (every block accepted in the last trial). */
static int line_search(Bw *w, int l, InitBlocks *ib, int *failed) {
    Newton *nw = w->nw;
    for (;;) {
        int pending = 0, accepted = 0;
        memcpy(nw->zt, nw->z, sizeof *nw->z * (size_t)nw->n);
        for (int i = w->lev_ptr[l]; i < w->lev_ptr[l + 1]; i++) {
            int b = w->lev_blk[i];
            if (w->state[b] != PENDING)
                continue;
            pending++;
            for (int k = w->ptr[b]; k < w->ptr[b + 1]; k++)
                nw->zt[w->cols[k]] += w->step[b] * nw->dz[w->cols[k]];
        }
        if (!pending)
            return 0;
        dyrt_init_eval(nw, nw->zt, nw->rt);
        for (int i = w->lev_ptr[l]; i < w->lev_ptr[l + 1]; i++) {
            int b = w->lev_blk[i];
            if (w->state[b] != PENDING)
                continue;
            double s = w->step[b];
            if (isnan(bnorm(w, b, nw->rt)) || bhalf_sq(w, b, nw->rt) > (1 - 2e-4 * s) * w->phi[b]) {
                if ((w->step[b] *= 0.5) < NEWTON_MINSTEP) {
                    *failed = give_up(w, b, "found no decrease of its residual", ib);
                    return 0;
                }
                continue;
            }
            accepted++;
            for (int k = w->ptr[b]; k < w->ptr[b + 1]; k++) {
                nw->z[w->cols[k]] = nw->zt[w->cols[k]];
                nw->r[w->rows[k]] = nw->rt[w->rows[k]];
            }
            w->state[b] = brelative(w, b, s) < NEWTON_STEPTOL && bnorm(w, b, nw->r) <= NEWTON_FTOL_LOOSE
                              ? DONE : ACTIVE;
        }
        if (accepted == pending) {
            memcpy(nw->r, nw->rt, sizeof *nw->r * (size_t)nw->n);
            return 1;
        }
    }
}

/* Newton on every block of level l; 0 when all converged */
static int solve_level(Bw *w, int l, int *valid, InitBlocks *ib) {
    Newton *nw = w->nw;
    for (int i = w->lev_ptr[l]; i < w->lev_ptr[l + 1]; i++) {
        int b = w->lev_blk[i];
        if (bsize(w, b) > BLOCK_MAX && !w->sp[b].sym) {
            if (sparse_setup(w, b))
                return give_up(w, b, "could not be set up for a sparse LU of its own", ib);
            ib->nsparse++;
        }
        if (bsize(w, b) > ib->largest)
            ib->largest = bsize(w, b);
        w->state[b] = ACTIVE;
    }
    if (!*valid)
        dyrt_init_eval(nw, nw->z, nw->r);
    *valid = 1;
    if (finite_start(w, l, ib))
        return 1;
    for (int iter = 0;; iter++) {
        if (nw->evals >= w->evals_max) {
            ib->left = DYRT_INIT_LEFT_BUDGET;
            return give_up(w, w->lev_blk[w->lev_ptr[l]], "was left when the block-wise pass had spent its "
                           "evaluations", ib);
        }
        int active = 0;
        for (int i = w->lev_ptr[l]; i < w->lev_ptr[l + 1]; i++) {
            int b = w->lev_blk[i];
            if (w->state[b] == ACTIVE && bnorm(w, b, nw->r) <= NEWTON_FTOL)
                w->state[b] = DONE;
            active += w->state[b] == ACTIVE;
        }
        if (!active)
            return 0;
        if (iter == NEWTON_MAXITER) {
            for (int i = w->lev_ptr[l]; i < w->lev_ptr[l + 1]; i++)
                if (w->state[w->lev_blk[i]] == ACTIVE)
                    return give_up(w, w->lev_blk[i], "did not converge", ib);
        }
        ib->rounds++;
        dyrt_init_jacobian(nw); /* NaN in rows of later levels is no concern here */
        for (int i = w->lev_ptr[l]; i < w->lev_ptr[l + 1]; i++) {
            int b = w->lev_blk[i];
            if (w->state[b] != ACTIVE)
                continue;
            if (!direction(w, b)) { /* retried at nearby points first */
                if (w->tries[b] == NEWTON_PERTURBATIONS)
                    return give_up(w, b, "has a singular or non-finite Jacobian", ib);
                nudge(w, b, w->tries[b]++);
                continue;
            }
            if (brelative(w, b, 1.0) < NEWTON_STEPTOL && bnorm(w, b, nw->r) <= NEWTON_FTOL_LOOSE) {
                w->state[b] = DONE; /* converged to rounding: |r| ~ eps |terms| */
                continue;
            }
            w->state[b] = PENDING;
            w->step[b] = 1.0;
            w->phi[b] = bhalf_sq(w, b, nw->r);
        }
        int failed = 0;
        *valid = line_search(w, l, ib, &failed);
        if (failed)
            return 1;
        if (!*valid) {
            dyrt_init_eval(nw, nw->z, nw->r);
            *valid = 1;
        }
    }
}

int dyrt_init_blocks(Newton *nw, InitBlocks *ib) {
    const DyrtModel *m = nw->m;
    ib->failed = -1;
    ib->nblocks = m->init_nblocks;
    if (m->init_nblocks <= 0 || !m->init_block_ptr)
        return 0;
    Bw w;
    int rc = bw_alloc(&w, nw);
    ib->nlevels = w.nlev;
    w.evals_max = nw->evals + BUDGET_MIN + (long)(BUDGET_ROWS / nw->n);
    int valid = 0;
    for (int l = 0; !rc && l < w.nlev; l++) {
        if (w.nlev - l > DEEP_LEVELS && (double)(w.nlev - l) * nw->n > DEEP_WORK) {
            ib->failed = w.lev_blk[w.lev_ptr[l]];
            ib->left = DYRT_INIT_LEFT_DEEP;
            break;
        }
        if (solve_level(&w, l, &valid, ib))
            break;
    }
    if (!rc && (ib->solved = dyrt_calloc((size_t)nw->n, 1)))
        for (int b = 0; b < w.nb; b++)
            for (int k = w.ptr[b]; w.state[b] == DONE && k < w.ptr[b + 1]; k++)
                ib->solved[w.cols[k]] = 1;
    bw_free(&w);
    return rc ? DYRT_EXIT_INTERNAL : 0;
}
