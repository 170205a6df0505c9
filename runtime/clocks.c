/*
 * clocks.c -- clock ticks of a DyrtSim (dyad_model.h, "Clocks").
 *
 * A periodic clock c ticks at start + offset_c + k * period_c, k = 0, 1,
 * ... (computed from k, never accumulated, so a tick time does not drift);
 * the integrator stops exactly there (a stop time: no root finding).  A
 * zero-crossing clock ticks at each root of its function that IDA locates
 * (events.c, integrate.c).  Ticks closer than DYRT_TICK_EPS (relative) are
 * one instant.
 *
 * At an instant the due clocks tick in the model's clock_order: samples,
 * the partition's equations (Newton on its iteration unknowns when it has
 * an algebraic loop: dense LU with partial pivoting and a halving line
 * search), the new values, then the copies (previous values shift, held
 * values update).  A clock that samples after another one ticked at the
 * same instant first gets consistent algebraic values for the new held
 * values (dyrt_restart_at, or the owner's `consistent` hook: FMI Model
 * Exchange solves its own point).  The caller restarts the integrator after.
 * Every new discrete value must be finite.  Nothing here allocates after
 * dyrt_clocks_setup.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "dyrt_internal.h"

#define NEWTON_MAX_ITER 50
#define NEWTON_MAX_HALVINGS 30

double dyrt_tick_eps(double t)
{
    return DYRT_TICK_EPS * fmax(1.0, fabs(t));
}

static double tick_time(const DyrtSim *s, int32_t c)
{
    const DyrtClocks *k = &s->clk;
    return s->start + k->offset[c] + (double)k->next[c] * k->period[c];
}

int dyrt_clocks_setup(DyrtSim *s)
{
    const DyrtModel *m = s->m;
    DyrtClocks *k = &s->clk;
    if (m->nclocks <= 0)
        return 0;
    int32_t n = m->nclocks, maxnw = 1;
    for (int32_t c = 0; c < n; c++)
        maxnw = m->tick_nw && m->tick_nw[c] > maxnw ? m->tick_nw[c] : maxnw;
    k->timing = dyrt_calloc((size_t)(2 * n), sizeof *k->timing);
    k->period = dyrt_calloc((size_t)n, sizeof *k->period);
    k->offset = dyrt_calloc((size_t)n, sizeof *k->offset);
    k->next = dyrt_calloc((size_t)n, sizeof *k->next);
    k->due = dyrt_calloc((size_t)n, 1);
    k->zc_mode = dyrt_calloc((size_t)n, sizeof *k->zc_mode);
    k->w = dyrt_calloc((size_t)(4 * maxnw), sizeof *k->w);
    k->jac = dyrt_calloc((size_t)maxnw * (size_t)maxnw, sizeof *k->jac);
    k->piv = dyrt_calloc((size_t)maxnw, sizeof *k->piv);
    if (!k->timing || !k->period || !k->offset || !k->next || !k->due || !k->zc_mode || !k->w || !k->jac ||
        !k->piv)
        return DYRT_EXIT_INTERNAL;
    if (m->clock_timing)
        m->clock_timing(s->p, k->timing);
    for (int32_t c = 0; c < n; c++) {
        if (m->clock_kind[c] != DYRT_CLOCK_PERIODIC)
            continue;
        k->period[c] = k->timing[2 * c];
        k->offset[c] = k->timing[2 * c + 1];
        if (!(k->period[c] > 0) || !isfinite(k->period[c]) || !(k->offset[c] >= 0) || !isfinite(k->offset[c])) {
            dyrt_error("clock '%s': the period must be positive and the offset not negative (period %s, offset %s)",
                       m->clock_names[c], dyrt_num(k->period[c]).s, dyrt_num(k->offset[c]).s);
            return DYRT_EXIT_USER;
        }
    }
    k->pending = dyrt_clocks_next(s) <= s->start + dyrt_tick_eps(s->start);
    return 0;
}

void dyrt_clocks_free(DyrtSim *s)
{
    DyrtClocks *k = &s->clk;
    free(k->timing);
    free(k->period);
    free(k->offset);
    free(k->next);
    free(k->due);
    free(k->zc_mode);
    free(k->w);
    free(k->jac);
    free(k->piv);
    memset(k, 0, sizeof *k);
}

double dyrt_clocks_next(const DyrtSim *s)
{
    double best = INFINITY;
    for (int32_t c = 0; c < s->m->nclocks && s->clk.period; c++)
        if (s->m->clock_kind[c] == DYRT_CLOCK_PERIODIC && tick_time(s, c) < best)
            best = tick_time(s, c);
    return best;
}

/* The modes of the zero-crossing clocks' functions before a root. */
void dyrt_clocks_snapshot(DyrtSim *s)
{
    const DyrtModel *m = s->m;
    for (int32_t c = 0; c < m->nclocks && s->clk.zc_mode; c++)
        if (m->clock_zc[c] >= 0 && m->nmodes > 0)
            s->clk.zc_mode[c] = s->p[m->np + m->clock_zc[c]];
}

/* After the modes followed a root: the zero-crossing clocks whose function
 * crossed (its mode changed since dyrt_clocks_snapshot) are due; returns
 * how many. */
int dyrt_clocks_roots(DyrtSim *s)
{
    const DyrtModel *m = s->m;
    int n = 0;
    for (int32_t c = 0; c < m->nclocks && s->clk.due; c++) {
        int32_t k = m->clock_zc[c];
        if (m->clock_kind[c] != DYRT_CLOCK_ZERO_CROSSING || k < 0 || !s->rootsfound[k])
            continue;
        if (m->nmodes > 0 && s->p[m->np + k] == s->clk.zc_mode[c])
            continue;          /* no crossing after all (jitter) */
        s->clk.due[c] = 1;
        n++;
    }
    if (n)
        s->clk.pending = 1;
    return n;
}

static int is_due(const DyrtSim *s, int32_t c, double t)
{
    if (s->m->clock_kind[c] == DYRT_CLOCK_PERIODIC)
        return tick_time(s, c) <= t + dyrt_tick_eps(t);
    return s->clk.due[c];
}

/* ---------- Newton on a partition's loop ---------- */

static double max_abs(const double *v, int32_t n)
{
    double m = 0;
    for (int32_t i = 0; i < n; i++)
        m = fabs(v[i]) > m || isnan(v[i]) ? (isnan(v[i]) ? INFINITY : fabs(v[i])) : m;
    return m;
}

static int newton_failed(const DyrtSim *s, int32_t c, double t, const char *why, double norm)
{
    const DyrtModel *m = s->m;
    dyrt_error("clock '%s' at t = %s: the clocked equations %s (residual %.3g); iteration variables:",
               m->clock_names[c], dyrt_num(t).s, why, norm);
    for (int32_t i = m->tick_w_ptr[c]; i < m->tick_w_ptr[c + 1] && m->tick_w_names; i++)
        fprintf(stderr, "  %s\n", m->tick_w_names[i]);
    return DYRT_EXIT_USER;
}

/* residual norm at w + lambda * dw into trial; r gets the residual */
static double trial_norm(DyrtSim *s, int32_t c, double t, double lambda)
{
    DyrtClocks *k = &s->clk;
    int32_t n = s->m->tick_nw[c];
    double *w = k->w, *r = w + n, *dw = r + n, *trial = dw + n;
    for (int32_t i = 0; i < n; i++)
        trial[i] = w[i] + lambda * dw[i];
    s->m->tick_residual[c](t, trial, s->p, r);
    return max_abs(r, n);
}

static int newton(DyrtSim *s, int32_t c, double t)
{
    const DyrtModel *m = s->m;
    DyrtClocks *k = &s->clk;
    int32_t n = m->tick_nw[c];
    double *w = k->w, *r = w + n, *dw = r + n, *trial = dw + n;
    m->tick_guess[c](t, s->p, w);
    m->tick_residual[c](t, w, s->p, r);
    double norm = max_abs(r, n);
    for (int it = 0; it < NEWTON_MAX_ITER; it++) {
        if (norm == 0)
            return 0;
        m->tick_jacobian[c](t, w, s->p, k->jac);
        if (!dyrt_lu(k->jac, n, k->piv))
            return newton_failed(s, c, t, "have a singular Jacobian", norm);
        for (int32_t i = 0; i < n; i++)
            dw[i] = -r[i];
        dyrt_lu_solve(k->jac, n, k->piv, dw);
        double lambda = 1, tn = trial_norm(s, c, t, lambda);
        for (int h = 0; h < NEWTON_MAX_HALVINGS && !(tn < norm); h++)
            tn = trial_norm(s, c, t, lambda *= 0.5);
        int small = 1;
        for (int32_t i = 0; i < n; i++)
            small &= fabs(trial[i] - w[i]) <= 1e-14 * (1 + fabs(w[i]));
        if (!(tn <= norm) && !small)
            return newton_failed(s, c, t, "found no decrease", norm);
        memcpy(w, trial, sizeof *w * (size_t)n);
        norm = tn;
        if (small)
            return 0;
    }
    return norm <= 1e-10 * (1 + max_abs(w, n)) ? 0 : newton_failed(s, c, t, "did not converge", norm);
}

/* ---------- one tick ---------- */

/* O(np), as the CSV row written after every tick */
static int check_discrete(const DyrtSim *s, int32_t c, double t)
{
    const DyrtModel *m = s->m;
    for (int32_t i = 0; i < m->np; i++)
        if ((m->param_flags[i] & DYRT_PARAM_DISCRETE) && !isfinite(s->p[i])) {
            dyrt_error("clock '%s' at t = %s: '%s' is %s", m->clock_names[c], dyrt_num(t).s, m->param_names[i],
                       dyrt_num(s->p[i]).s);
            return DYRT_EXIT_USER;
        }
    return 0;
}

static int tick_one(DyrtSim *s, int32_t c, double t)
{
    const DyrtModel *m = s->m;
    if (m->tick_sample[c])
        m->tick_sample[c](t, dyrt_y(s), dyrt_yp(s), s->p);
    if (m->tick_nw[c] > 0) {
        int rc = newton(s, c, t);
        if (rc)
            return rc;
    }
    if (m->tick_finish[c])
        m->tick_finish[c](t, s->clk.w, s->p, NULL, NULL);
    for (int32_t i = m->tick_copy_ptr[c]; i < m->tick_copy_ptr[c + 1]; i++)
        s->p[m->tick_copy_dst[i]] = s->p[m->tick_copy_src[i]];
    s->clk.ticks++;
    return check_discrete(s, c, t);
}

/* Every clock due at time t, in clock order. */
int dyrt_clocks_tick(DyrtSim *s, double t)
{
    const DyrtModel *m = s->m;
    DyrtClocks *k = &s->clk;
    int ticked = 0;
    for (int32_t o = 0; o < m->nclocks; o++) {
        int32_t c = m->clock_order[o];
        if (!is_due(s, c, t))
            continue;
        if (ticked && m->tick_sample[c] && (s->ida || k->consistent)) {
            int rc = k->consistent ? k->consistent(k->consistent_ud, t)
                                   : dyrt_restart_at(s, t, "a clock tick", 0);
            if (rc)
                return rc;
        }
        int rc = tick_one(s, c, t);
        if (rc)
            return rc;
        ticked = 1;
        if (m->clock_kind[c] == DYRT_CLOCK_PERIODIC)
            while (tick_time(s, c) <= t + dyrt_tick_eps(t))
                k->next[c]++;
        k->due[c] = 0;
    }
    k->pending = 0;
    return 0;
}
