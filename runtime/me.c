/*
 * me.c -- the derivatives of the states for FMI Model Exchange: given the
 * time t, the differential unknowns x (y_i with y_is_diff[i]) and p, solve
 * the index-1 system F(t, y, y', p) = 0 for the other unknowns
 *     z_i = y'_i  (differential i),   z_i = y_i  (algebraic i),
 * ny equations in ny unknowns.  The structure phase leaves an index-1
 * system, so dF/dz is regular where the model is.
 *
 * Method: block by block (the model's ode_* tables, dyad_model.h): the
 * structure phase's BLT blocks that have residual rows (explicit
 * assignments are already substituted into the rows that read them, so
 * they are evaluated straight inside the residual), grouped by level.  One
 * evaluation of the whole residual serves every block of a level (their
 * rows read only lower levels, solved before); each block takes Newton
 * steps with its own dense matrix, its rows and columns of
 * M = dF/dz, LU with partial pivoting (dyrt_lu).  M comes from the model's
 * exact Jacobian J(cj) = dF/dy + cj dF/dy' in CSC form: column i from
 * J(1) - J(0) (= dF/dy'_i, up to the rounding of that difference) for a
 * differential i and from J(0) for an algebraic one (y'_i of an algebraic
 * unknown does not occur in F).  A block flagged DYRT_ODE_LINEAR is solved
 * by one step (its matrix does not depend on its unknowns; the levels
 * before are solved); DYRT_ODE_KNOWN (the matrix reads no unknown at all)
 * lets the Jacobian evaluated at the call's start serve every level, so a
 * model of such blocks costs one Jacobian pair and one residual per level.
 * Loops (nonlinear blocks) iterate to |dz_i| <= ATOL + RTOL |z_i| (chord
 * steps, the block refactored every DYRT_ME_CHORD iterations).
 *
 * What the blocks cannot do -- a block of more than DYRT_ME_BLOCK_MAX rows
 * (a torn loop too large for dense LU: SB_SPARSE), more than
 * DYRT_ME_LEVELS levels (each costs a residual evaluation: a deep chain
 * would cost O(levels x n)), no block tables -- is the whole-system
 * Newton: KLU on the whole M (symbolic analysis once, a numeric
 * factorization at the first iteration of every solve, then chord
 * iterations, refactored after DYRT_ME_CHORD iterations), warm-started at
 * the last solution.  It also takes over, from the point reached, when a
 * block is singular, not finite or does not converge.
 *
 * Directional derivatives (fmi2GetDirectionalDerivative): with the
 * factorization at the solution, dz = -M^-1 (dF/dx dx), where dF/dx is
 * J(0) restricted to the differential columns: exact up to rounding.
 *
 * Cost per solve: O(nnz) per residual/Jacobian evaluation, levels + 2
 * (or + 2 per level with blocks not DYRT_ME_KNOWN) of them, plus the
 * blocks' dense LUs; nothing allocated after dyrt_me_alloc.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "dyrt_internal.h"

#define DYRT_ME_MAXITER 30     /* Newton iterations per solve */
#define DYRT_ME_CHORD 4        /* chord iterations before refactoring */
#define DYRT_ME_RTOL 1e-12     /* converged: |dz_i| <= ATOL + RTOL |z_i| */
#define DYRT_ME_ATOL 1e-14
#define DYRT_ME_BLOCK_MAX 64   /* larger blocks: the whole-system Newton */
#define DYRT_ME_LEVELS 16      /* deeper: the whole-system Newton */

/* Block-wise solving when the model's tables allow it (see above). */
static int blocks_alloc(DyrtMe *me)
{
    const DyrtModel *m = me->m;
    int nb = m->ode_nblocks;
    if (nb <= 0 || m->ode_nlevels > DYRT_ME_LEVELS)
        return 0;
    for (int b = 0; b < nb; b++)
        if (m->ode_ptr[b + 1] - m->ode_ptr[b] > DYRT_ME_BLOCK_MAX)
            return 0;
    if (dyrt_block_map(&me->bm, me->n, nb, m->ode_ptr, m->ode_rows, m->ode_cols, me->colptr, me->rowidx,
                       DYRT_ME_BLOCK_MAX))
        return -1;
    me->a = dyrt_calloc((size_t)me->bm.a_off[nb] + 1, sizeof(double));
    me->piv = dyrt_calloc((size_t)me->n, sizeof(int32_t));
    me->done = dyrt_calloc((size_t)nb, 1);
    if (!me->a || !me->piv || !me->done)
        return -1;
    me->blockwise = 1;
    return 0;
}

int dyrt_me_alloc(DyrtMe *me, const DyrtModel *m)
{
    memset(me, 0, sizeof *me);
    me->m = m;
    int n = me->n = m->ny, nnz = m->jac_nnz;
    if (n == 0)
        return 0;
    me->colptr = dyrt_calloc((size_t)n + 1, sizeof(int));
    me->rowidx = dyrt_calloc((size_t)nnz, sizeof(int));
    me->j0 = dyrt_calloc((size_t)nnz, sizeof(double));
    me->j1 = dyrt_calloc((size_t)nnz, sizeof(double));
    me->r = dyrt_calloc((size_t)n, sizeof(double));
    me->dz = dyrt_calloc((size_t)n, sizeof(double));
    if (!me->colptr || !me->rowidx || !me->j0 || !me->j1 || !me->r || !me->dz)
        return DYRT_EXIT_INTERNAL;
    for (int j = 0; j <= n; j++)
        me->colptr[j] = m->jac_colptr[j];
    for (int k = 0; k < nnz; k++)
        me->rowidx[k] = m->jac_rowidx[k];
    klu_defaults(&me->common);
    me->sym = klu_analyze(n, me->colptr, me->rowidx, &me->common);
    if (!me->sym) {
        dyrt_error("internal: KLU analysis of the Jacobian failed (status %d)", me->common.status);
        return DYRT_EXIT_INTERNAL;
    }
    return blocks_alloc(me) ? DYRT_EXIT_INTERNAL : 0;
}

void dyrt_me_free(DyrtMe *me)
{
    if (me->num)
        klu_free_numeric(&me->num, &me->common);
    if (me->sym)
        klu_free_symbolic(&me->sym, &me->common);
    free(me->colptr);
    free(me->rowidx);
    free(me->j0);
    free(me->j1);
    free(me->r);
    free(me->dz);
    dyrt_block_map_free(&me->bm);
    free(me->a);
    free(me->piv);
    free(me->done);
    memset(me, 0, sizeof *me);
}

static int is_diff(const DyrtModel *m, int i)
{
    return !m->y_is_diff || m->y_is_diff[i];
}

/* M = dF/dz at (t, y, yp) into j1 (j0 keeps dF/dy). */
static int newton_matrix(DyrtMe *me, double t, const double *y, const double *yp, const double *p)
{
    const DyrtModel *m = me->m;
    me->njac++;
    if (m->jacobian(t, y, yp, p, 0.0, me->j0) || m->jacobian(t, y, yp, p, 1.0, me->j1))
        return -1;
    for (int j = 0; j < me->n; j++)
        for (int k = me->colptr[j]; k < me->colptr[j + 1]; k++)
            me->j1[k] = is_diff(m, j) ? me->j1[k] - me->j0[k] : me->j0[k];
    return 0;
}

/* M = dF/dz at (t, y, yp) into j1 (j0 keeps dF/dy), factored. */
static int factor(DyrtMe *me, double t, const double *y, const double *yp, const double *p)
{
    if (newton_matrix(me, t, y, yp, p))
        return -1;
    if (me->num)
        klu_free_numeric(&me->num, &me->common);
    me->num = klu_factor(me->colptr, me->rowidx, me->j1, me->sym, &me->common);
    return me->num ? 0 : -1;
}

/* z_i lives in y'_i (differential) or y_i (algebraic). */
static double *zslot(const DyrtModel *m, int i, double *y, double *yp)
{
    return is_diff(m, i) ? &yp[i] : &y[i];
}

/* One Newton update z -= M^-1 r; returns 1 when the update was small. */
static int update(DyrtMe *me, double *y, double *yp)
{
    memcpy(me->dz, me->r, sizeof(double) * (size_t)me->n);
    klu_solve(me->sym, me->num, me->n, 1, me->dz, &me->common);
    int small = 1;
    for (int i = 0; i < me->n; i++) {
        double *z = zslot(me->m, i, y, yp);
        if (!isfinite(me->dz[i]))
            return -1;
        if (fabs(me->dz[i]) > DYRT_ME_ATOL + DYRT_ME_RTOL * fabs(*z))
            small = 0;
        *z -= me->dz[i];
    }
    return small;
}

/* block b's dense matrix from j1, factored in place; 0 when singular or
 * not finite */
static int block_factor(DyrtMe *me, int b)
{
    const DyrtModel *m = me->m;
    int k = m->ode_ptr[b + 1] - m->ode_ptr[b];
    double *a = me->a + me->bm.a_off[b];
    memset(a, 0, sizeof *a * (size_t)(k * k));
    for (int e = me->bm.ent_ptr[b]; e < me->bm.ent_ptr[b + 1]; e++)
        if (!isfinite(a[me->bm.ent_ij[e]] = me->j1[me->bm.ent_pos[e]]))
            return 0;
    return dyrt_lu(a, k, me->piv + m->ode_ptr[b]);
}

/* One Newton (or chord) step of block b with its factors and me->r:
 * 1 when the update was small, 0 when not, -1 when not finite. */
static int block_step(DyrtMe *me, int b, double *y, double *yp)
{
    const DyrtModel *m = me->m;
    int first = m->ode_ptr[b], k = m->ode_ptr[b + 1] - first;
    double *rhs = me->dz + first;
    for (int i = 0; i < k; i++)
        rhs[i] = me->r[m->ode_rows[first + i]];
    dyrt_lu_solve(me->a + me->bm.a_off[b], k, me->piv + first, rhs);
    int small = 1;
    for (int j = 0; j < k; j++) {
        double *z = zslot(m, m->ode_cols[first + j], y, yp);
        if (!isfinite(rhs[j]))
            return -1;
        if (fabs(rhs[j]) > DYRT_ME_ATOL + DYRT_ME_RTOL * fabs(*z))
            small = 0;
        *z -= rhs[j];
    }
    return small;
}

/* The blocks of level l, from the residual at the current point: 0 when
 * solved, 1 when one is singular, not finite or does not converge (the
 * whole-system Newton takes over).  *fresh: j1 holds M at a point where
 * the blocks' matrices flagged DYRT_ODE_KNOWN are exact. */
static int solve_level(DyrtMe *me, int l, double t, double *y, double *yp, const double *p, int *fresh)
{
    const DyrtModel *m = me->m;
    int first = m->ode_level_ptr[l], last = m->ode_level_ptr[l + 1], known = 1;
    for (int b = first; b < last; b++) {
        me->done[b] = 0;
        known &= (m->ode_flags[b] & DYRT_ODE_KNOWN) != 0;
    }
    for (int it = 0; it < DYRT_ME_MAXITER; it++) {
        me->nresid++;
        if (m->residual(t, y, yp, p, me->r) != 0)
            return 1;
        int refactor = it == 0 ? !(known && *fresh) : it % DYRT_ME_CHORD == 0;
        if (refactor && newton_matrix(me, t, y, yp, p))
            return 1;
        *fresh |= refactor;
        int active = 0;
        for (int b = first; b < last; b++) {
            if (me->done[b])
                continue;
            if ((it == 0 || refactor) && !block_factor(me, b))
                return 1;
            int small = block_step(me, b, y, yp);
            if (small < 0)
                return 1;
            me->done[b] = small || (it == 0 && (m->ode_flags[b] & DYRT_ODE_LINEAR));
            active += !me->done[b];
        }
        if (!active)
            return 0;
    }
    return 1;
}

static int solve_whole(DyrtMe *me, double t, double *y, double *yp, const double *p);

int dyrt_me_solve(DyrtMe *me, double t, double *y, double *yp, const double *p)
{
    if (me->n == 0)            /* nothing to solve (a purely clocked model) */
        return 0;
    if (me->blockwise) {
        int fresh = 0, l = 0;
        while (l < me->m->ode_nlevels && !solve_level(me, l, t, y, yp, p, &fresh))
            l++;
        if (l == me->m->ode_nlevels)
            return 0;
    }
    return solve_whole(me, t, y, yp, p);
}

/* Newton on the whole system with KLU, from the point given. */
static int solve_whole(DyrtMe *me, double t, double *y, double *yp, const double *p)
{
    const DyrtModel *m = me->m;
    me->nwhole++;
    for (int it = 0; it < DYRT_ME_MAXITER; it++) {
        me->nresid++;
        if (m->residual(t, y, yp, p, me->r) != 0)
            return DYRT_EXIT_USER;
        if ((it % DYRT_ME_CHORD == 0 || !me->num) && factor(me, t, y, yp, p) != 0)
            return DYRT_EXIT_USER;
        int small = update(me, y, yp);
        if (small < 0)
            return DYRT_EXIT_USER;
        if (small)
            return 0;
    }
    return DYRT_EXIT_USER;
}

int dyrt_me_directional(DyrtMe *me, double t, const double *y, const double *yp, const double *p,
                        const double *dx, double *dy, double *dyp)
{
    const DyrtModel *m = me->m;
    if (me->n == 0)
        return 0;
    if (factor(me, t, y, yp, p) != 0)
        return DYRT_EXIT_USER;
    for (int i = 0; i < me->n; i++)
        me->r[i] = 0;
    for (int j = 0; j < me->n; j++)        /* r = dF/dx dx */
        if (is_diff(m, j) && dx[j] != 0)
            for (int k = me->colptr[j]; k < me->colptr[j + 1]; k++)
                me->r[me->rowidx[k]] += me->j0[k] * dx[j];
    klu_solve(me->sym, me->num, me->n, 1, me->r, &me->common);
    for (int i = 0; i < me->n; i++) {
        dy[i] = is_diff(m, i) ? dx[i] : -me->r[i];
        dyp[i] = is_diff(m, i) ? -me->r[i] : 0.0;
    }
    return 0;
}

int dyrt_me_alg_rates(DyrtMe *me, double t, double dt, const double *y, double *yp, const double *p)
{
    const DyrtModel *m = me->m;
    if (me->n == 0)
        return 0;
    if (factor(me, t, y, yp, p) != 0)
        return DYRT_EXIT_USER;
    me->nresid += 2;           /* dF/dt: central difference, modes frozen */
    if (m->residual(t + dt, y, yp, p, me->r) != 0 || m->residual(t - dt, y, yp, p, me->dz) != 0)
        return DYRT_EXIT_USER;
    for (int i = 0; i < me->n; i++)
        me->r[i] = (me->r[i] - me->dz[i]) / (2 * dt);
    for (int j = 0; j < me->n; j++)        /* + dF/dx x' */
        if (is_diff(m, j) && yp[j] != 0)
            for (int k = me->colptr[j]; k < me->colptr[j + 1]; k++)
                me->r[me->rowidx[k]] += me->j0[k] * yp[j];
    klu_solve(me->sym, me->num, me->n, 1, me->r, &me->common);
    for (int i = 0; i < me->n; i++)
        if (!is_diff(m, i) && !isfinite(me->r[i]))
            return DYRT_EXIT_USER;
    for (int i = 0; i < me->n; i++)
        if (!is_diff(m, i))
            yp[i] = -me->r[i];
    return 0;
}
