/*
 * stateset.c -- dynamic state selection at run time (dyad_model.h, "State
 * sets"; compiler/structure/stateset.c builds them).
 *
 * Set k chooses, of its candidates x_1..x_n, nstates as the states; the
 * other candidates' derivatives are determined by its equations, which must
 * be solvable for them: after eliminating the set's fixed columns from its
 * Jacobian (partial pivoting), the rest S (R rows, one column per
 * candidate) restricted to the non-state candidates D must be nonsingular.
 * Its quality is q(D) = |det S[:, D]|; the best choice is the D of largest
 * q (every combination when there are at most DYRT_SET_ENUM_MAX, else a
 * greedy full-pivoting choice).  The criterion
 *     g_k = q(current) / q(best) - DYRT_SET_SWITCH
 * is one more root function of IDA (the first event of the set; its other
 * events stay at 1): it crosses zero when the current choice degrades to
 * DYRT_SET_SWITCH of the best one.  At that root the set switches to the
 * best choice, the set states take the values of the new candidates, and
 * the integrator restarts consistently -- the physical solution does not
 * jump, only its coordinates change.  The ratio leaves hysteresis: right
 * after a switch g = 1 - DYRT_SET_SWITCH.
 *
 * Costs per root evaluation: set_eval, and per set an O(rows^3)
 * elimination plus the combinations (small: sets are one stage component).
 * Scratch is allocated at setup, none while integrating.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "dyrt_internal.h"

/* switch when the current pivot falls below this fraction of the best */
#define DYRT_SET_SWITCH 0.5
/* at an event a set switches below DYRT_SET_SWITCH * (1 + this): IDA
 * places a root within its tolerance on either side */
#define DYRT_SET_ROOT_TOL 1e-3
/* after a failure: every choice is singular when the best pivot is below
 * this fraction of the best at the start */
#define DYRT_SET_SINGULAR 1e-3
/* sets with at most this many choices are searched exhaustively */
#define DYRT_SET_ENUM_MAX 256

typedef struct SetInfo {
    int nrows, nfixed, ncand, nstates, mode_first, jac_first, cand_first, state_first;
} SetInfo;

static SetInfo set_info(const DyrtModel *m, int k)
{
    const int32_t *a = m->set_info + DYRT_SET_INFO * k;
    return (SetInfo){a[0], a[1], a[2], a[3], a[4], a[5], a[6], a[7]};
}

int dyrt_event_follows_sign(const DyrtModel *m, int k)
{
    return !m->event_kind || m->event_kind[k] != DYRT_EVENT_STATESET;
}

static int switch_set(DyrtSim *s, double t, int k, double *y, double *yp);
static int schur(DyrtSim *s, const SetInfo *z);
static double best_choice(DyrtSim *s, const double *S, int R, int ncand, int *best);

/* The compiler chose with the parameters' defaults; with this run's, the
 * start values (initial values, guesses) may call for another choice, and
 * the initialization must not start singular (a pendulum released from the
 * horizontal with the default angle below it). */
static int start_choice(DyrtSim *s)
{
    const DyrtModel *m = s->m;
    double *y = dyrt_calloc((size_t)m->ny + 1, sizeof *y), *yp = dyrt_calloc((size_t)m->ny + 1, sizeof *yp);
    if (!y || !yp) {
        free(y);
        free(yp);
        return DYRT_EXIT_INTERNAL;
    }
    dyrt_model_start(m, s->start, s->p, y, yp);
    m->set_eval(s->start, y, yp, s->p, s->sets.eval);
    for (int k = 0; k < m->nsets; k++) {
        switch_set(s, s->start, k, y, yp);
        SetInfo z = set_info(m, k);
        int R = schur(s, &z);
        if (R > 0 && R <= z.ncand)
            s->sets.qstart[k] = best_choice(s, s->sets.mat, R, z.ncand, s->sets.best);
    }
    s->sets.switches = 0;              /* a choice, not a switch */
    free(y);
    free(yp);
    return 0;
}

/* Scratch and the start's choice (the modes), before initialization. */
int dyrt_sets_setup(DyrtSim *s)
{
    const DyrtModel *m = s->m;
    if (m->nsets <= 0)
        return 0;
    int mat = 1, cand = 1;
    for (int k = 0; k < m->nsets; k++) {
        SetInfo z = set_info(m, k);
        if (z.nrows * (z.nfixed + z.ncand) > mat)
            mat = z.nrows * (z.nfixed + z.ncand);
        if (z.ncand > cand)
            cand = z.ncand;
        for (int j = 0; j < z.nstates; j++)
            s->p[m->np + z.mode_first + j] = m->set_init[z.state_first + j];
    }
    s->sets.ncand = 0;
    for (int k = 0; k < m->nsets; k++)
        s->sets.ncand += set_info(m, k).ncand;
    s->sets.njac = m->set_neval - 2 * s->sets.ncand;
    s->sets.eval = dyrt_calloc((size_t)m->set_neval + 1, sizeof(double));
    s->sets.mat = dyrt_calloc((size_t)mat, sizeof(double));
    s->sets.lu = dyrt_calloc((size_t)cand * (size_t)cand, sizeof(double));
    s->sets.dummy = dyrt_calloc((size_t)cand, sizeof(int));
    s->sets.best = dyrt_calloc((size_t)cand, sizeof(int));
    s->sets.pick = dyrt_calloc((size_t)cand, sizeof(int));
    s->sets.qstart = dyrt_calloc((size_t)m->nsets, sizeof(double));
    if (!s->sets.eval || !s->sets.mat || !s->sets.lu || !s->sets.dummy || !s->sets.best || !s->sets.pick ||
        !s->sets.qstart)
        return DYRT_EXIT_INTERNAL;
    return start_choice(s);
}

void dyrt_sets_free(DyrtSim *s)
{
    free(s->sets.eval);
    free(s->sets.mat);
    free(s->sets.lu);
    free(s->sets.dummy);
    free(s->sets.best);
    free(s->sets.pick);
    free(s->sets.qstart);
}

/* Eliminate the fixed columns of the set's matrix (copied to mat); the R
 * remaining rows, over the candidate columns, are left in mat's first
 * R * ncand entries.  Returns R. */
static int schur(DyrtSim *s, const SetInfo *z)
{
    int nc = z->nfixed + z->ncand;
    double *a = s->sets.mat;
    memcpy(a, s->sets.eval + z->jac_first, sizeof(double) * (size_t)(z->nrows * nc));
    int used[64] = {0}, nused = 0;
    for (int c = 0; c < z->nfixed && c < 64; c++) {
        int br = -1;
        for (int r = 0; r < z->nrows && r < 64; r++)
            if (!used[r] && (br < 0 || fabs(a[r * nc + c]) > fabs(a[br * nc + c])))
                br = r;
        if (br < 0 || a[br * nc + c] == 0)
            continue;
        used[br] = 1;
        nused++;
        for (int r = 0; r < z->nrows; r++) {
            if (used[r] || a[r * nc + c] == 0)
                continue;
            double f = a[r * nc + c] / a[br * nc + c];
            for (int j = c; j < nc; j++)
                a[r * nc + j] -= f * a[br * nc + j];
        }
    }
    int R = 0;
    for (int r = 0; r < z->nrows && r < 64; r++)
        if (!used[r]) {
            memmove(a + R * z->ncand, a + r * nc + z->nfixed, sizeof(double) * (size_t)z->ncand);
            R++;
        }
    return R;
}

/* |det| of the R x R submatrix of S (R x ncand) in the columns cols[] */
static double quality(DyrtSim *s, const double *S, int R, int ncand, const int *cols)
{
    double *lu = s->sets.lu, det = 1;
    for (int r = 0; r < R; r++)
        for (int c = 0; c < R; c++)
            lu[r * R + c] = S[r * ncand + cols[c]];
    for (int c = 0; c < R; c++) {
        int br = c;
        for (int r = c + 1; r < R; r++)
            if (fabs(lu[r * R + c]) > fabs(lu[br * R + c]))
                br = r;
        if (lu[br * R + c] == 0)
            return 0;
        if (br != c)
            for (int j = 0; j < R; j++) {
                double x = lu[c * R + j];
                lu[c * R + j] = lu[br * R + j];
                lu[br * R + j] = x;
            }
        det *= lu[c * R + c];
        for (int r = c + 1; r < R; r++) {
            double f = lu[r * R + c] / lu[c * R + c];
            for (int j = c; j < R; j++)
                lu[r * R + j] -= f * lu[c * R + j];
        }
    }
    return fabs(det);
}

static double binomial(int n, int k)
{
    double b = 1;
    for (int i = 1; i <= k; i++)
        b = b * (n - k + i) / i;
    return b;
}

/* The best R of ncand columns into best[]: every combination when few,
 * else greedy full pivoting.  Returns its quality. */
static double best_choice(DyrtSim *s, const double *S, int R, int ncand, int *best)
{
    int *pick = s->sets.pick;
    if (binomial(ncand, R) <= DYRT_SET_ENUM_MAX) {
        double q = -1;
        for (int i = 0; i < R; i++)
            pick[i] = i;
        for (;;) {
            double qi = quality(s, S, R, ncand, pick);
            if (qi > q) {
                q = qi;
                memcpy(best, pick, sizeof(int) * (size_t)R);
            }
            int i = R - 1;
            while (i >= 0 && pick[i] == ncand - R + i)
                i--;
            if (i < 0)
                return q;
            pick[i]++;
            for (int j = i + 1; j < R; j++)
                pick[j] = pick[j - 1] + 1;
        }
    }
    /* greedy: columns of the largest remaining pivot (on a copy in lu) */
    double *a = s->sets.lu;
    memcpy(a, S, sizeof(double) * (size_t)(R * ncand));
    int usedr[64] = {0}, usedc[64] = {0};
    for (int n = 0; n < R; n++) {
        int br = -1, bc = -1;
        for (int r = 0; r < R; r++)
            for (int c = 0; c < ncand && c < 64; c++)
                if (!usedr[r] && !usedc[c] && (br < 0 || fabs(a[r * ncand + c]) > fabs(a[br * ncand + bc])))
                    br = r, bc = c;
        best[n] = bc;
        usedr[br] = usedc[bc] = 1;
        for (int r = 0; r < R; r++)
            if (!usedr[r] && a[br * ncand + bc] != 0) {
                double f = a[r * ncand + bc] / a[br * ncand + bc];
                for (int c = 0; c < ncand; c++)
                    a[r * ncand + c] -= f * a[br * ncand + c];
            }
    }
    return quality(s, S, R, ncand, best);
}

/* the current dummies of set z (the candidates no state is), ascending */
static int current_dummies(const DyrtSim *s, const SetInfo *z, int *dummy)
{
    const double *mode = s->p + s->m->np + z->mode_first;
    int n = 0;
    for (int i = 0; i < z->ncand; i++) {
        int state = 0;
        for (int j = 0; j < z->nstates; j++)
            state |= mode[j] == i;
        if (!state)
            dummy[n++] = i;
    }
    return n;
}

/* q(current) / q(best) of set z at the point set_eval last saw, and the
 * best choice in s->sets.best; 1 when nothing is known */
static double ratio(DyrtSim *s, const SetInfo *z)
{
    int R = schur(s, z);
    if (R <= 0 || R > z->ncand || current_dummies(s, z, s->sets.dummy) != R)
        return 1;
    double qb = best_choice(s, s->sets.mat, R, z->ncand, s->sets.best);
    double qc = quality(s, s->sets.mat, R, z->ncand, s->sets.dummy);
    return qb > 0 ? fmin(qc / qb, 1.0) : 1;
}

/* The root functions of the sets' events (g already holds the model's). */
void dyrt_sets_criteria(DyrtSim *s, double t, const double *y, const double *yp, double *g)
{
    const DyrtModel *m = s->m;
    if (m->nsets <= 0)
        return;
    m->set_eval(t, y, yp, s->p, s->sets.eval);
    for (int k = 0; k < m->nsets; k++) {
        SetInfo z = set_info(m, k);
        for (int j = 0; j < z.nstates; j++)
            g[z.mode_first + j] = 1;
        g[z.mode_first] = ratio(s, &z) - DYRT_SET_SWITCH;
    }
}

static void log_switch(DyrtSim *s, double t, int k, const SetInfo *z, int from, int to)
{
    long n = s->sets.switches++;
    if (n >= DYRT_EVENT_LOG)
        return;
    const char *const *names = s->m->set_cand_names;
    s->sets.log[n] = (DyrtSetSwitch){t, k, names ? names[z->cand_first + from] : "?",
                                     names ? names[z->cand_first + to] : "?"};
}

/* Set k to the best choice (at the point set_eval last saw, t): modes, and
 * the set states' values and derivatives from the new candidates.  1 when
 * it changed. */
static int switch_set(DyrtSim *s, double t, int k, double *y, double *yp)
{
    const DyrtModel *m = s->m;
    SetInfo z = set_info(m, k);
    if (ratio(s, &z) >= DYRT_SET_SWITCH * (1 + DYRT_SET_ROOT_TOL))
        return 0;
    int R = z.ncand - z.nstates, *best = s->sets.best;
    const double *value = s->sets.eval + s->sets.njac, *der = value + s->sets.ncand;
    double *mode = s->p + m->np + z.mode_first;
    int old = (int)mode[0];
    for (int i = 0, j = 0, b = 0; i < z.ncand; i++) {
        if (b < R && best[b] == i) {
            b++;
            continue;
        }
        int slot = m->set_state_y[z.state_first + j];
        mode[j++] = i;
        y[slot] = value[z.cand_first + i];
        yp[slot] = der[z.cand_first + i];
    }
    log_switch(s, t, k, &z, old, (int)mode[0]);
    return 1;
}

/* Switch the sets whose criterion crossed (roots[mode_first] != 0; every
 * set when roots is NULL) at (t, y, yp), changing y and yp in place for
 * the restart.  Returns the number of sets switched. */
int dyrt_sets_switch(DyrtSim *s, double t, double *y, double *yp, const int *roots)
{
    const DyrtModel *m = s->m;
    if (m->nsets <= 0)
        return 0;
    m->set_eval(t, y, yp, s->p, s->sets.eval);
    int n = 0;
    for (int k = 0; k < m->nsets; k++) {
        SetInfo z = set_info(m, k);
        if (!roots || roots[z.mode_first])
            n += switch_set(s, t, k, y, yp);
    }
    return n;
}

/* "x, y" into buf: candidates cols[0..n) of set z (all when cols NULL) */
static const char *cand_list(const DyrtSim *s, const SetInfo *z, const int *cols, int n, char *buf, size_t size)
{
    const char *const *names = s->m->set_cand_names;
    size_t len = 0;
    buf[0] = '\0';
    for (int i = 0; i < n && len + 1 < size; i++) {
        int c = cols ? cols[i] : i;
        len += (size_t)snprintf(buf + len, size - len, "%s%s", i ? ", " : "", names ? names[z->cand_first + c] : "?");
    }
    return buf;
}

/* After a failed step at (t, y, yp): a note for each set whose equations
 * cannot be solved for any choice of its dummies there (the best pivot is
 * below DYRT_SET_SINGULAR of the best at the start: a singular
 * configuration, which no state selection helps), or whose current choice had
 * degraded below the switching threshold (the failure came first). */
void dyrt_sets_explain(DyrtSim *s, double t, const double *y, const double *yp)
{
    const DyrtModel *m = s->m;
    if (m->nsets <= 0 || !s->sets.eval || !y || !yp)
        return;
    m->set_eval(t, y, yp, s->p, s->sets.eval);
    for (int k = 0; k < m->nsets; k++) {
        SetInfo z = set_info(m, k);
        int R = schur(s, &z);
        if (R <= 0 || R > z.ncand || current_dummies(s, &z, s->sets.dummy) != R)
            continue;
        double qb = best_choice(s, s->sets.mat, R, z.ncand, s->sets.best);
        double qc = quality(s, s->sets.mat, R, z.ncand, s->sets.dummy);
        char all[512], cur[512];
        cand_list(s, &z, NULL, z.ncand, all, sizeof all);
        if (!(qb > DYRT_SET_SINGULAR * s->sets.qstart[k]))
            dyrt_note("state set %d of {%s}: at t = %s its equations can hardly be solved for any %d "
                    "of the candidates: every choice of states is (nearly) singular, the best pivot %.3g of the "
                    "start's (a singular configuration, which no state selection avoids)", k + 1, all,
                    dyrt_num(t).s, R, s->sets.qstart[k] > 0 ? qb / s->sets.qstart[k] : 0.0);
        else if (qc < DYRT_SET_SWITCH * qb)
            dyrt_note("state set %d of {%s}: at t = %s its current dummies {%s} were nearly singular "
                    "(pivot %.3g of the best choice's)", k + 1, all, dyrt_num(t).s,
                    cand_list(s, &z, s->sets.dummy, R, cur, sizeof cur), qc / qb);
    }
}

/* -v: the switches */
void dyrt_sets_stats(const DyrtSim *s, FILE *f)
{
    if (s->m->nsets <= 0)
        return;
    fprintf(f, "  state sets %d, switches %ld\n", s->m->nsets, s->sets.switches);
    for (long i = 0; i < s->sets.switches && i < DYRT_EVENT_LOG; i++) {
        const DyrtSetSwitch *w = &s->sets.log[i];
        fprintf(f, "  state set %d switched at t = %.17g: state %s -> %s\n", w->set + 1, w->t, w->from, w->to);
    }
    if (s->sets.switches > DYRT_EVENT_LOG)
        fprintf(f, "  (%ld more switches)\n", s->sets.switches - DYRT_EVENT_LOG);
}
