/*
 * me.c -- the derivatives of the states for FMI Model Exchange: given the
 * time t, the differential unknowns x (y_i with y_is_diff[i]) and p, solve
 * the index-1 system F(t, y, y', p) = 0 for the other unknowns
 *     z_i = y'_i  (differential i),   z_i = y_i  (algebraic i),
 * ny equations in ny unknowns.  The structure phase leaves an index-1
 * system, so dF/dz is regular where the model is.
 *
 * Method: Newton on the residual with the model's exact Jacobian.  The
 * model computes J(cj) = dF/dy + cj dF/dy' in CSC form; the Newton matrix
 * M = dF/dz takes column i from J(1) - J(0) (= dF/dy'_i, up to the rounding
 * of that difference) for a differential i and from J(0) for an algebraic
 * one (y'_i of an algebraic unknown does not occur in F).  KLU: symbolic
 * analysis once, a numeric factorization at the first iteration of every
 * solve, then chord iterations with it (refactored after
 * DYRT_ME_CHORD iterations without convergence).  A system linear in z (most
 * models) converges in one step and the second one confirms it.  The
 * BLT block sequence (assignments solved in order) would avoid the
 * factorization; until the System carries it this is the documented method.
 *
 * Directional derivatives (fmi2GetDirectionalDerivative): with the
 * factorization at the solution, dz = -M^-1 (dF/dx dx), where dF/dx is
 * J(0) restricted to the differential columns: exact up to rounding.
 *
 * Cost per solve: O(nnz) per residual/Jacobian evaluation plus KLU's
 * factorization; nothing allocated after dyrt_me_alloc.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "dyrt_internal.h"

#define DYRT_ME_MAXITER 30     /* Newton iterations per solve */
#define DYRT_ME_CHORD 4        /* chord iterations before refactoring */
#define DYRT_ME_RTOL 1e-12     /* converged: |dz_i| <= ATOL + RTOL |z_i| */
#define DYRT_ME_ATOL 1e-14

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
    return 0;
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
    memset(me, 0, sizeof *me);
}

static int is_diff(const DyrtModel *m, int i)
{
    return !m->y_is_diff || m->y_is_diff[i];
}

/* M = dF/dz at (t, y, yp) into j1 (j0 keeps dF/dy), factored. */
static int factor(DyrtMe *me, double t, const double *y, const double *yp, const double *p)
{
    const DyrtModel *m = me->m;
    if (m->jacobian(t, y, yp, p, 0.0, me->j0) || m->jacobian(t, y, yp, p, 1.0, me->j1))
        return -1;
    for (int j = 0; j < me->n; j++)
        for (int k = me->colptr[j]; k < me->colptr[j + 1]; k++)
            me->j1[k] = is_diff(m, j) ? me->j1[k] - me->j0[k] : me->j0[k];
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

int dyrt_me_solve(DyrtMe *me, double t, double *y, double *yp, const double *p)
{
    const DyrtModel *m = me->m;
    if (me->n == 0)            /* nothing to solve (a purely clocked model) */
        return 0;
    for (int it = 0; it < DYRT_ME_MAXITER; it++) {
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
