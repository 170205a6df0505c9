/*
 * sliding.c -- the zero-crossing functions at tight consistent values: the
 * polish after a restart and the test for a sliding mode (integrate.c).
 *
 * IDA solves the algebraic unknowns only to its tolerances, so near a
 * switching surface the sign of a g_k that reads them can be noise: a
 * diode's g = vs - v is 1e-4 vs while conducting, below the error allowed
 * in v at rtol 1e-3, and IDACalcIC does not even take a Newton step smaller
 * than its tolerance (the algebraic values of the old branch survive a
 * restart into the new one).  Events then repeat at vanishing intervals
 * although neither branch drives the solution back.  Both uses below
 * therefore solve the index-1 system F(t, y, y') = 0 for the algebraic y
 * and the derivatives y' of the differential unknowns (those fixed) to
 * 1e-12 relative (me.c, the solve of FMI Model Exchange):
 *
 *   dyrt_tight_polish -- after every restart of a model with relations
 *     (state sets alone need none): the consistent values IDA starts the
 *     new branch from.
 *   dyrt_tight_sides -- before a repeated switch is called chattering: the
 *     value of g_k on each branch of relation k a look-ahead dt after t
 *     (the differential unknowns advanced by dt y', the others solved
 *     again at t + dt).  Branch m_k = 1 (the side g > 0) drives the
 *     solution back when that value is < 0, branch 0 when it is > 0.  Both
 *     at once is Filippov's sliding condition; otherwise the branch that
 *     keeps its side is the one to go on with.  dt is the span of the
 *     check after a restart (DYRT_EVENT_CHECK x the time scale), the
 *     resolution at which the runtime tells "right after" from "at".
 *   dyrt_tight_keeps_side -- the same for the current branch alone: a
 *     root of a function that just crossed, right after the restart, is
 *     noise of the solution when its branch keeps its side (integrate.c).
 *
 * Cost: a tight solve is a few residual and Jacobian evaluations (O(nnz)
 * each, me.c); polish one per restart, sides four per suspected
 * chattering.  Nothing is allocated after dyrt_tight_setup.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "dyrt_internal.h"

int dyrt_tight_setup(DyrtSim *s)
{
    const DyrtModel *m = s->m;
    int relations = 0;         /* state sets alone: no signs to decide */
    for (int32_t k = 0; k < m->nmodes && !relations; k++)
        relations = dyrt_event_follows_sign(m, k);
    if (!relations || m->ny <= 0 || s->dummy_state)
        return 0;
    size_t n = (size_t)m->ny;
    s->ytight = dyrt_calloc(n, sizeof *s->ytight);
    s->yptight = dyrt_calloc(n, sizeof *s->yptight);
    s->me = dyrt_calloc(1, sizeof *s->me);
    if (!s->ytight || !s->yptight || !s->me || dyrt_me_alloc(s->me, m))
        return DYRT_EXIT_INTERNAL;
    return 0;
}

void dyrt_tight_free(DyrtSim *s)
{
    if (s->me)
        dyrt_me_free(s->me);
    free(s->me);
    free(s->ytight);
    free(s->yptight);
    s->me = NULL;
    s->ytight = s->yptight = NULL;
}

/* (ytight, yptight) := the tight consistent point at t from (y, yp), the
 * differential unknowns kept; 0, or -1 when the solve failed. */
static int solve_at(DyrtSim *s, double t, const double *y, const double *yp)
{
    size_t n = sizeof(double) * (size_t)s->m->ny;
    memmove(s->ytight, y, n);
    memmove(s->yptight, yp, n);
    return dyrt_me_solve(s->me, t, s->ytight, s->yptight, s->p) ? -1 : 0;
}

int dyrt_tight_polish(DyrtSim *s, double t, double *y, double *yp)
{
    if (!s->me || solve_at(s, t, y, yp))
        return 0;
    /* IDACalcIC leaves y' of the algebraic unknowns as it found them (the
     * old branch's): IDA's first predictor y + h y' would carry the old
     * slope into the new branch, an error the error test cannot get below
     * at tight tolerances; the new branch's slopes instead */
    double dt = 6e-6 * (fabs(t) + dyrt_time_scale(s));      /* ~ eps^(1/3) */
    if (dyrt_me_alg_rates(s->me, t, dt, s->ytight, s->yptight, s->p))
        return 0;
    int changed = 0;
    for (int32_t i = 0; i < s->m->ny; i++) {
        if (!isfinite(s->ytight[i]) || !isfinite(s->yptight[i]))
            return 0;
        changed |= s->ytight[i] != y[i] || s->yptight[i] != yp[i];
    }
    if (!changed)
        return 0;
    size_t n = sizeof(double) * (size_t)s->m->ny;
    memcpy(y, s->ytight, n);
    memcpy(yp, s->yptight, n);
    return 1;
}

/* g_k at t + dt on branch `mode` of relation k, from (t, y, yp): 0, or -1
 * when a tight solve failed. */
static int side_value(DyrtSim *s, double t, double dt, const double *y, const double *yp, int k,
                      double mode, double *g)
{
    const DyrtModel *m = s->m;
    double *mk = &s->p[m->np + k], keep = *mk;
    *mk = mode;
    int rc = solve_at(s, t, y, yp);
    for (int32_t i = 0; !rc && i < m->ny; i++) {
        s->ytmp[i] = s->ytight[i] + dt * s->yptight[i]; /* algebraic: the guess */
        s->yptmp[i] = s->yptight[i];
    }
    if (!rc)
        rc = solve_at(s, t + dt, s->ytmp, s->yptmp);
    if (!rc) {
        m->zero_crossings(t + dt, s->ytight, s->yptight, s->p, s->gpert);
        *g = s->gpert[k];
        rc = isfinite(*g) ? 0 : -1;
    }
    *mk = keep;
    return rc;
}

int dyrt_tight_keeps_side(DyrtSim *s, double t, const double *y, const double *yp, int k)
{
    double mode = s->p[s->m->np + k], g = 0;
    if (!s->me || side_value(s, t, DYRT_EVENT_CHECK * dyrt_time_scale(s), y, yp, k, mode, &g))
        return -1;
    return mode != 0 ? g > 0 : g < 0;
}

int dyrt_tight_sides(DyrtSim *s, double t, const double *y, const double *yp, int k, double *mode)
{
    *mode = s->p[s->m->np + k];
    if (!s->me)
        return -1;
    double dt = DYRT_EVENT_CHECK * dyrt_time_scale(s), g1 = 0, g0 = 0;
    if (side_value(s, t, dt, y, yp, k, 1.0, &g1) || side_value(s, t, dt, y, yp, k, 0.0, &g0))
        return -1;
    int back = (g1 < 0 ? DYRT_SIDE_BACK_FROM_1 : 0) | (g0 > 0 ? DYRT_SIDE_BACK_FROM_0 : 0);
    if (back == DYRT_SIDE_BACK_FROM_1)
        *mode = 0.0;
    else if (back == DYRT_SIDE_BACK_FROM_0)
        *mode = 1.0;
    return back;
}
