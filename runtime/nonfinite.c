/*
 * nonfinite.c -- the message when a value turns NaN or infinite: which
 * value, the equation (the relation as written, with its line) where it
 * first appeared, and the operation that made it from finite inputs
 * (division by zero, square root of a negative number, ...) with the value
 * of its argument.  From the origin tables of the descriptor
 * (dyad_model.h, ABI 5): out_eq/out_rank say which equation computes an
 * output and when, risk_* which operations of an equation can go wrong.
 *
 * Of several non-finite outputs the origin is the one whose equation has
 * an operation that went wrong on a finite argument, computed first (BLT
 * order); else the one computed first; values downstream inherit it.
 * Only called on a failure: O(nout + nrisk).
 */
#include <math.h>
#include <string.h>

#include "dyrt_internal.h"
#include "numfmt.h"

static const char *const risk_text[] = {
    [DYRT_RISK_DIV] = "division by zero",
    [DYRT_RISK_SQRT] = "square root of a negative number",
    [DYRT_RISK_LOG] = "logarithm of a number <= 0",
    [DYRT_RISK_ASIN] = "asin/acos of a number outside [-1, 1]",
    [DYRT_RISK_POW_NEG] = "non-integer power of a negative number",
    [DYRT_RISK_POW_ZERO] = "zero to a negative power",
};

static int risk_hit(int kind, double x)
{
    switch (kind) {
    case DYRT_RISK_DIV: return x == 0;
    case DYRT_RISK_SQRT: return x < 0;
    case DYRT_RISK_LOG: return x <= 0;
    case DYRT_RISK_ASIN: return fabs(x) > 1;
    case DYRT_RISK_POW_NEG: return x < 0;
    case DYRT_RISK_POW_ZERO: return x == 0;
    default: return 0;
    }
}

static double arg_value(const DyrtSim *s, const double *out, int32_t arg)
{
    const DyrtModel *m = s->m;
    if (arg >= 0)
        return arg < m->nout ? out[arg] : NAN;
    return -arg - 1 < m->np ? s->p[-arg - 1] : NAN;
}

static const char *arg_name(const DyrtSim *s, int32_t arg)
{
    const DyrtModel *m = s->m;
    if (arg >= 0)
        return arg < m->nout && m->out_names ? m->out_names[arg] : "?";
    return -arg - 1 < m->np && m->param_names ? m->param_names[-arg - 1] : "?";
}

/* The first risky operation of equation eq that went wrong on a finite
 * argument (values in out), or -1. */
static int risk_found(const DyrtSim *s, int32_t eq, const double *out)
{
    const DyrtModel *m = s->m;
    if (eq < 0 || !m->risk_eq)
        return -1;
    for (int32_t k = 0; k < m->nrisk; k++) {
        if (m->risk_eq[k] != eq)
            continue;
        double x = arg_value(s, out, m->risk_arg[k]);
        if (isfinite(x) && risk_hit(m->risk_kind[k], x))
            return k;
    }
    return -1;
}

static const char *eq_name(const DyrtSim *s, int32_t eq)
{
    const DyrtModel *m = s->m;
    if (eq < 0 || eq >= m->neq || !m->eq_src || !m->src_names)
        return NULL;
    int32_t k = m->eq_src[eq];
    return k >= 0 && k < m->nsrc ? m->src_names[k] : NULL;
}

const char *dyrt_value_word(double x)
{
    return isnan(x) ? "NaN" : x > 0 ? "Inf" : "-Inf";
}

/* "in `i = v / R` (rc.dyad:12): division by zero (R = 0)" into buf */
static void describe(const DyrtSim *s, int32_t eq, const double *out, char *buf, size_t n)
{
    const char *name = eq_name(s, eq);
    buf[0] = 0;
    if (!name)
        return;
    size_t at = dyrt_location_at(name);
    int w = snprintf(buf, n, " in `%.*s`%s", (int)at, name, name + at);
    int k = risk_found(s, eq, out);
    if (k < 0 || w < 0 || (size_t)w >= n)
        return;
    const DyrtModel *m = s->m;
    char num[DYRT_FMT_MAX];
    dyrt_format_double(num, arg_value(s, out, m->risk_arg[k]));
    snprintf(buf + w, n - (size_t)w, ": %s (%s = %s)", risk_text[m->risk_kind[k]],
             arg_name(s, m->risk_arg[k]), num);
}

/* The output where the non-finite values began (see the file opening). */
static int origin(const DyrtSim *s, const double *out)
{
    const DyrtModel *m = s->m;
    int first = -1, best = -1, best_risk = 0;
    for (int32_t j = 0; j < m->nout; j++) {
        if (isfinite(out[j]))
            continue;
        if (first < 0)
            first = j;
        int32_t eq = m->out_eq ? m->out_eq[j] : -1;
        if (eq < 0)
            continue;
        int risk = risk_found(s, eq, out) >= 0;
        int earlier = best < 0 || m->out_rank[j] < m->out_rank[best];
        if ((risk && (!best_risk || earlier)) || (!risk && !best_risk && earlier)) {
            best = j;
            best_risk = risk;
        }
    }
    return best >= 0 ? best : first;
}

int dyrt_check_outputs(DyrtSim *s, const double *out)
{
    const DyrtModel *m = s->m;
    int32_t j = 0;
    while (j < m->nout && isfinite(out[j]))
        j++;
    if (j == m->nout)
        return 0;
    if (out != s->outbuf) {    /* a row may hold only its columns: all of them */
        dyrt_outputs(s, s->outbuf);
        if (!isfinite(s->outbuf[j]))
            out = s->outbuf;
    }
    j = origin(s, out);
    char why[1024], tnum[DYRT_FMT_MAX];
    describe(s, m->out_eq ? m->out_eq[j] : -1, out, why, sizeof why);
    dyrt_format_double(tnum, s->t);
    dyrt_error("simulation stopped at t = %s: `%s` is %s%s", tnum,
               m->out_names ? m->out_names[j] : "?", dyrt_value_word(out[j]), why);
    s->phase = DYRT_SIM_FAILED;
    return DYRT_EXIT_USER;
}

/* The first risky operation of the model that went wrong on a finite
 * argument (values in out), or -1. */
static int any_risk(const DyrtSim *s, const double *out)
{
    const DyrtModel *m = s->m;
    for (int32_t k = 0; m->risk_eq && k < m->nrisk; k++) {
        double x = arg_value(s, out, m->risk_arg[k]);
        if (isfinite(x) && risk_hit(m->risk_kind[k], x))
            return k;
    }
    return -1;
}

/* After a failure with a non-finite value at (t, y, yp) -- residual row
 * `row` (-1: not a residual): a note on where it began, from the outputs
 * at that point: the first non-finite output and its equation, else the
 * residual's equation or any operation that went wrong there. */
void dyrt_explain_point(DyrtSim *s, int row, double t, const double *y, const double *yp)
{
    const DyrtModel *m = s->m;
    char why[1024], tnum[DYRT_FMT_MAX];
    dyrt_format_double(tnum, t);
    dyrt_model_outputs(m, t, y, yp, s->p, s->outbuf);
    int j = origin(s, s->outbuf);
    if (j >= 0 && m->out_eq && m->out_eq[j] >= 0) {
        describe(s, m->out_eq[j], s->outbuf, why, sizeof why);
        dyrt_note("at t = %s `%s` is %s%s", tnum, m->out_names[j],
                dyrt_value_word(s->outbuf[j]), why);
        return;
    }
    int32_t eq = m->resid_eq && row >= 0 && row < m->ny ? m->resid_eq[row] : -1;
    if (risk_found(s, eq, s->outbuf) < 0) {
        int k = any_risk(s, s->outbuf);
        eq = k >= 0 ? m->risk_eq[k] : -1;
    }
    describe(s, eq, s->outbuf, why, sizeof why);
    if (why[0])
        dyrt_note("at t = %s: not finite%s", tnum, why);
}
