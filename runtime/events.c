/*
 * events.c -- the modes of frozen relations (dyad_model.h, `nmodes`).
 *
 * Between events every relation on continuous values reads a mode
 * m_k = p[np + k] instead of comparing, so the residual is smooth and the
 * branch changes only at a crossing IDA located.  Two ways to set modes:
 *
 *   from signs  -- m_k = (g_k > 0) at a point; at the start, and after a
 *                  restart for the functions that did not just cross (a
 *                  branch change may move other functions across zero:
 *                  event iteration).  g_k == 0 at the start (a source that
 *                  starts at 0) is decided by looking ahead along y' to
 *                  t + 1e-6 (stop - start): IDA never reports a root for a
 *                  function that leaves zero, so the mode must be right.
 *   from roots  -- m_k from the direction IDA reports (+1 rising: 1,
 *                  -1 falling: 0).  Not from the sign after the restart:
 *                  IDA places a root within its tolerance on either side, and
 *                  with a branch-dependent g (a diode: g = v_source - v) the
 *                  sign right after the restart can point back.
 *   mismatches  -- a function whose sign disagrees with its mode at a point
 *                  (g == 0 agrees with both): after a restart, the crossing
 *                  back that IDA cannot report because it began within the
 *                  root tolerance of the restart point (integrate.c).  Only
 *                  a sign beyond the uncertainty the tolerances leave in g
 *                  counts: at default tolerances a diode's g = vs - v right
 *                  after its event is smaller than the error allowed in v.
 *
 * Models without modes (nmodes == 0) compare continuously; these functions
 * then change nothing.  The modes of state sets (DYRT_EVENT_STATESET) are
 * no signs: stateset.c chooses them, these functions leave them alone.  dyrt_event_name names function k for messages.
 */
#include <math.h>
#include <string.h>

#include "dyrt_internal.h"

/* Signs just after t along y' for the functions that are exactly 0 at t
 * (pending[k]); returns the number of modes changed. */
static int look_ahead(DyrtSim *s, double t, const double *y, const double *yp,
                      const unsigned char *pending)
{
    const DyrtModel *m = s->m;
    double dt = 1e-6 * dyrt_time_scale(s);
    for (int32_t i = 0; y && yp && i < m->ny; i++) {
        s->ytmp[i] = y[i] + dt * yp[i];
        s->yptmp[i] = yp[i];
    }
    m->zero_crossings(t + dt, y ? s->ytmp : NULL, yp ? s->yptmp : NULL, s->p, s->gbuf);
    double *mode = s->p + m->np;
    int changed = 0;
    for (int32_t k = 0; k < m->nmodes; k++) {
        if (!pending[k] || s->gbuf[k] == 0 || !dyrt_event_follows_sign(m, k))
            continue;
        double want = s->gbuf[k] > 0 ? 1.0 : 0.0;
        if (mode[k] != want) {
            mode[k] = want;
            changed++;
        }
    }
    return changed;
}

/* Modes from the signs of g at (t, y, yp), except where keep[k] != 0.
 * keep == NULL means the start: every function, and those exactly 0 are
 * decided by look_ahead (the first 256; more is a model we have not met).
 * Returns the number of modes changed. */
int dyrt_modes_from_signs(DyrtSim *s, double t, const double *y, const double *yp,
                          const int *keep)
{
    const DyrtModel *m = s->m;
    if (m->nmodes <= 0)
        return 0;
    m->zero_crossings(t, y, yp, s->p, s->gbuf);
    double *mode = s->p + m->np;
    unsigned char pending[256] = {0};
    int changed = 0, any_pending = 0;
    for (int32_t k = 0; k < m->nmodes; k++) {
        if ((keep && keep[k]) || !dyrt_event_follows_sign(m, k))
            continue;
        if (s->gbuf[k] == 0) {
            if (!keep && k < 256)
                pending[k] = any_pending = 1;
            continue;
        }
        double want = s->gbuf[k] > 0 ? 1.0 : 0.0;
        if (mode[k] != want) {
            mode[k] = want;
            changed++;
        }
    }
    if (any_pending && m->nmodes <= 256)
        changed += look_ahead(s, t, y, yp, pending);
    return changed;
}

/* Modes of the functions in s->rootsfound (IDAGetRootInfo) from the
 * crossing direction.  Returns the number of modes changed; without modes,
 * 1 when any root was found (so the caller restarts as before). */
int dyrt_modes_from_roots(DyrtSim *s, double t)
{
    (void)t;
    const DyrtModel *m = s->m;
    int changed = 0;
    for (int32_t k = 0; k < m->nz; k++) {
        if (s->rootsfound[k] == 0 || !dyrt_event_follows_sign(m, k))
            continue;
        if (m->nmodes <= 0) {
            changed = 1;
            continue;
        }
        double want = s->rootsfound[k] > 0 ? 1.0 : 0.0;
        if (s->p[m->np + k] == want)
            continue;              /* crossing back into its branch: no change */
        s->p[m->np + k] = want;
        changed++;
    }
    return changed;
}

/* The uncertainty of each g_k at (t, y, yp) that the tolerances allow:
 * IDA keeps every error |e_i| below about w_i = rtol |y_i| + atol, so g_k is
 * known to sum_i |g_k(y + w_i u_i) - g_k(y)| (one finite difference per
 * unknown, the linearization of g around y).  Written to s->gnoise for the
 * functions marked in s->mismatch; s->gbuf must hold g(t, y, yp). */
static void g_noise(DyrtSim *s, double t, const double *y, const double *yp)
{
    const DyrtModel *m = s->m;
    for (int32_t k = 0; k < m->nmodes; k++)
        s->gnoise[k] = 0.0;
    for (int32_t i = 0; y && i < m->ny; i++)
        s->ytmp[i] = y[i];
    for (int32_t i = 0; y && i < m->ny; i++) {
        double w = s->rtol * fabs(y[i]) + s->atol;
        s->ytmp[i] = y[i] + w;
        m->zero_crossings(t, s->ytmp, yp, s->p, s->gpert);
        s->ytmp[i] = y[i];
        for (int32_t k = 0; k < m->nmodes; k++)
            if (s->mismatch[k])
                s->gnoise[k] += fabs(s->gpert[k] - s->gbuf[k]);
    }
}

/* s->mismatch[k] where g_k at (t, y, yp) is nonzero and its sign disagrees
 * with mode k: DYRT_MISMATCH when |g_k| is beyond what the tolerances
 * allow (g_noise), DYRT_MISMATCH_NOISE when it is within (the sign is not
 * known: an error of the solution may be all there is).  Returns the
 * number of decisive mismatches; *noisy (if not NULL) the others. */
int dyrt_modes_mismatch(DyrtSim *s, double t, const double *y, const double *yp, int *noisy)
{
    const DyrtModel *m = s->m;
    if (noisy)
        *noisy = 0;
    if (m->nmodes <= 0)
        return 0;
    m->zero_crossings(t, y, yp, s->p, s->gbuf);
    const double *mode = s->p + m->np;
    int any = 0;
    for (int32_t k = 0; k < m->nmodes; k++) {
        double g = s->gbuf[k];
        s->mismatch[k] = dyrt_event_follows_sign(m, k) && ((g > 0 && mode[k] == 0) || (g < 0 && mode[k] != 0));
        any |= s->mismatch[k];
    }
    if (!any)
        return 0;
    g_noise(s, t, y, yp);
    m->zero_crossings(t, y, yp, s->p, s->gbuf);
    int n = 0;
    for (int32_t k = 0; k < m->nmodes; k++) {
        if (!s->mismatch[k])
            continue;
        if (fabs(s->gbuf[k]) > s->gnoise[k]) {
            s->mismatch[k] = DYRT_MISMATCH;
            n++;
        } else {
            s->mismatch[k] = DYRT_MISMATCH_NOISE;
            if (noisy)
                (*noisy)++;
        }
    }
    return n;
}

/* "the condition `v > 0` (friction.dyad:8)", or by number without names */
const char *dyrt_event_name(const DyrtSim *s, int k, char *buf, size_t n)
{
    const DyrtModel *m = s->m;
    if (!m->event_names || !m->event_names[k]) {
        snprintf(buf, n, "zero-crossing function %d", k);
        return buf;
    }
    const char *name = m->event_names[k];
    size_t at = dyrt_location_at(name);
    snprintf(buf, n, "the condition `%.*s`%s", (int)at, name, name + at);
    return buf;
}
