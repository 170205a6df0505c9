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
 *                  sign right after the restart can point back, which is what
 *                  made unfrozen relations chatter.  A root within
 *                  DYRT_EVENT_DEBOUNCE of the function's last mode change
 *                  is that jitter and changes nothing.
 *
 * Models without modes (nmodes == 0) compare continuously; these functions
 * then change nothing.
 */
#include <math.h>

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
        if (!pending[k] || s->gbuf[k] == 0)
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
        if (keep && keep[k])
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
    const DyrtModel *m = s->m;
    double window = DYRT_EVENT_DEBOUNCE * fmax(1.0, fabs(t));
    int changed = 0;
    for (int32_t k = 0; k < m->nz; k++) {
        if (s->rootsfound[k] == 0)
            continue;
        if (m->nmodes <= 0) {
            changed = 1;
            continue;
        }
        double want = s->rootsfound[k] > 0 ? 1.0 : 0.0;
        if (s->p[m->np + k] == want || fabs(t - s->zc_last[k]) <= window)
            continue;              /* no change, or jitter: not an event */
        s->p[m->np + k] = want;
        s->zc_last[k] = t;
        changed++;
    }
    return changed;
}
