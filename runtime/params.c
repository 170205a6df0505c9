/*
 * params.c -- parameter values and --initial overrides.
 *
 * Parameters: every -p NAME=VALUE sets p[i] and given[i] = 1; then the
 * model's param_defaults fills the others in dependency order (so dependent
 * parameters follow their overridden inputs).  `final` parameters cannot be
 * overridden; `missing` ones are unknowns of the initialization system.
 * Parameters without a value in the model (DYRT_PARAM_REQUIRED) must come
 * from -p: dyrt_params_check names every one still missing, in one message,
 * before anything is integrated (after --list-params, which shows them).
 * After param_defaults every parameter that is not `missing` must be finite.
 *
 * --initial NAME=VALUE in a built simulator: NAME is an unknown or a copy
 * of one (an alias, a connector variable).  It replaces the starting value
 * of a differential unknown when the model has no initialization system
 * (init_n == 0); IDACalcIC then keeps it fixed.  With an initialization
 * system it replaces the row that fixes the unknown, its `initial` relation
 * or its start row (init.c, via the descriptor's initial_row/initial_z);
 * here only the name is resolved.  Any other variable needs the compiler
 * (`dyadc run|build --initial`), which makes the value an initial relation.
 */
#include <math.h>
#include <string.h>

#include "dyrt_internal.h"

static void unknown_name(const char *what, const char *name,
                         const char *const *names, int n)
{
    const char *near = names ? dyrt_closest(name, names, n) : NULL;
    if (near)
        dyrt_error("unknown %s '%s'; did you mean '%s'?", what, name, near);
    else
        dyrt_error("unknown %s '%s'", what, name);
}

int dyrt_set_param_index(DyrtSim *s, int i, double value)
{
    const DyrtModel *m = s->m;
    if (dyrt_sim_expect(s, DYRT_SIM_CREATED, "dyrt_set_param"))
        return DYRT_EXIT_INTERNAL;
    if (i < 0 || i >= m->np) {
        dyrt_error("internal: parameter index %d out of range [0, %d)", i, (int)m->np);
        return DYRT_EXIT_INTERNAL;
    }
    if (m->param_flags[i] & DYRT_PARAM_FINAL) {
        dyrt_error("parameter '%s' is final and cannot be changed with -p", m->param_names[i]);
        return DYRT_EXIT_USER;
    }
    if (m->param_flags[i] & DYRT_PARAM_MISSING) {
        dyrt_error("parameter '%s' is missing (computed by the initialization) "
                   "and cannot be set with -p", m->param_names[i]);
        return DYRT_EXIT_USER;
    }
    if (m->param_flags[i] & DYRT_PARAM_INPUT) {
        dyrt_error("'%s' is an input of the model, not a parameter; give it over time with "
                   "--input FILE.csv (columns time,%s)", m->param_names[i], m->param_names[i]);
        return DYRT_EXIT_USER;
    }
    if (m->param_flags[i] & DYRT_PARAM_DISCRETE) {
        dyrt_error("'%s' is a clocked value, computed at the ticks of its clock, not a parameter",
                   m->param_names[i]);
        return DYRT_EXIT_USER;
    }
    s->p[i] = value;
    s->given[i] = 1;
    return 0;
}

/* required[i] and not given: no value at all */
static int unset(const DyrtSim *s, int i)
{
    return (s->m->param_flags[i] & DYRT_PARAM_REQUIRED) && !s->given[i];
}

/* One message naming every required parameter that -p did not give. */
int dyrt_params_check(const DyrtSim *s)
{
    const DyrtModel *m = s->m;
    int n = 0;
    for (int i = 0; i < m->np; i++)
        n += unset(s, i);
    if (n == 0)
        return 0;
    char list[1024], hint[1024];
    size_t ll = 0, hl = 0;
    int shown = 0;
    for (int i = 0; i < m->np && ll < sizeof list && hl < sizeof hint; i++) {
        if (!unset(s, i))
            continue;
        if (shown == 8) {
            ll += (size_t)snprintf(list + ll, sizeof list - ll, ", ... (%d more)", n - shown);
            break;
        }
        ll += (size_t)snprintf(list + ll, sizeof list - ll, "%s'%s'", shown ? ", " : "", m->param_names[i]);
        hl += (size_t)snprintf(hint + hl, sizeof hint - hl, "%s-p %s=VALUE", shown ? " " : "", m->param_names[i]);
        shown++;
    }
    dyrt_error("%d parameter%s of '%s' %s no value: %s; give %s with %s", n, n == 1 ? "" : "s",
               m->name, n == 1 ? "has" : "have", list, n == 1 ? "it" : "them", hint);
    return DYRT_EXIT_USER;
}

int dyrt_set_param(DyrtSim *s, const char *name, double value)
{
    const DyrtModel *m = s->m;
    int i = dyrt_find(name, m->param_names, m->np);
    if (i < 0) {
        unknown_name("parameter", name, m->param_names, m->np);
        return DYRT_EXIT_USER;
    }
    return dyrt_set_param_index(s, i, value);
}

static int check_finite(const DyrtSim *s)
{
    const DyrtModel *m = s->m;
    for (int i = 0; i < m->np; i++) {
        if ((m->param_flags[i] & DYRT_PARAM_MISSING) || unset(s, i) || isfinite(s->p[i]))
            continue;
        dyrt_error("parameter '%s' evaluates to %s", m->param_names[i], dyrt_num(s->p[i]).s);
        return DYRT_EXIT_USER;
    }
    return 0;
}

/* The parameter and mode arrays, at dyrt_create. */
int dyrt_params_alloc(DyrtSim *s)
{
    const DyrtModel *m = s->m;
    s->p = dyrt_calloc((size_t)m->np + (size_t)(m->nmodes > 0 ? m->nmodes : 0), sizeof *s->p);
    s->gbuf = dyrt_calloc((size_t)m->nz, sizeof *s->gbuf);
    s->flips = dyrt_calloc((size_t)m->nz, sizeof *s->flips);
    s->mismatch = dyrt_calloc((size_t)m->nz, sizeof *s->mismatch);
    s->pushed = dyrt_calloc((size_t)m->nz, sizeof *s->pushed);
    s->crossed = dyrt_calloc((size_t)m->nz, sizeof *s->crossed);
    s->gnoise = dyrt_calloc((size_t)m->nz, sizeof *s->gnoise);
    s->gpert = dyrt_calloc((size_t)m->nz, sizeof *s->gpert);
    s->modes_prev = dyrt_calloc((size_t)m->nz, sizeof *s->modes_prev);
    s->ytmp = dyrt_calloc((size_t)m->ny, sizeof *s->ytmp);
    s->yptmp = dyrt_calloc((size_t)m->ny, sizeof *s->yptmp);
    s->y_event = dyrt_calloc((size_t)m->ny, sizeof *s->y_event);
    s->yp_event = dyrt_calloc((size_t)m->ny, sizeof *s->yp_event);
    if (!s->flips || !s->mismatch || !s->pushed || !s->crossed || !s->gnoise || !s->gpert || !s->modes_prev || !s->ytmp || !s->yptmp || !s->y_event || !s->yp_event)
        return DYRT_EXIT_INTERNAL;
    s->given = dyrt_calloc((size_t)m->np, sizeof *s->given);
    if (!s->p || !s->given || !s->gbuf)
        return DYRT_EXIT_INTERNAL;
    return 0;
}

/* Defaults of the parameters not set (idempotent: set ones are kept and
 * dependent ones recomputed from the same inputs). */
int dyrt_params_defaults(DyrtSim *s)
{
    dyrt_model_param_defaults(s->m, s->p, s->given);
    return check_finite(s);
}

/* The coefficients the model divides by (dyad_model.h, check_coefs) must
 * not be zero with the parameter values of this run. */
int dyrt_coef_checks(const DyrtSim *s)
{
    const DyrtModel *m = s->m;
    if (m->ncoef_check <= 0)
        return 0;
    int k = m->check_coefs(s->p);
    if (k <= 0)
        return 0;
    const char *msg = k <= m->ncoef_check && m->coef_check_msgs ? m->coef_check_msgs[k - 1] : "?";
    dyrt_error("%s", msg);
    return DYRT_EXIT_USER;
}

static const char *flag_word(unsigned char flags, const unsigned char *given)
{
    if (flags & DYRT_PARAM_MISSING)
        return "missing";
    if ((flags & DYRT_PARAM_REQUIRED) && !*given)
        return "required";
    if (flags & DYRT_PARAM_FINAL)
        return "final";
    if (*given)
        return "set";
    return flags & DYRT_PARAM_DEPENDENT ? "dependent" : "";
}

/* One line per parameter: name, value, and final/missing/required/dependent/set. */
void dyrt_list_params(const DyrtSim *s, FILE *f)
{
    const DyrtModel *m = s->m;
    int width = 4;
    for (int i = 0; i < m->np; i++)
        if ((int)strlen(m->param_names[i]) > width)
            width = (int)strlen(m->param_names[i]);
    for (int i = 0; i < m->np; i++) {
        if (m->param_flags[i] & (DYRT_PARAM_DISCRETE | DYRT_PARAM_INPUT))
            continue;          /* clocked values and inputs are not parameters */
        const char *w = flag_word(m->param_flags[i], &s->given[i]);
        if ((m->param_flags[i] & DYRT_PARAM_MISSING) || unset(s, i))
            fprintf(f, "%-*s  %-24s  %s\n", width, m->param_names[i], "?", w);
        else
            fprintf(f, "%-*s  %-24s  %s\n", width, m->param_names[i], dyrt_num(s->p[i]).s, w);
    }
}

/* What --initial NAME=VALUE asks of the compiler instead: NAME is no
 * unknown here (a variable computed from others). */
static int needs_compiler(const DyrtSim *s, const DyrtNameValue *nv, const char *why)
{
    dyrt_error("--initial %s: '%s' %s in the compiled model '%s'; give it to the compiler instead "
               "(`dyadc run` or `dyadc build` with --initial %s=VALUE), which makes it an initial relation",
               nv->name, nv->name, why, s->m->name, nv->name);
    return DYRT_EXIT_USER;
}

/* The unknown y that --initial NAME=VALUE sets, and the value it gets: NAME
 * is an unknown, or an output column that copies one (an alias, a connector
 * variable: offset + scale * (+-y), inverted here). */
static int initial_unknown(const DyrtSim *s, const DyrtNameValue *nv, int *y, double *value)
{
    const DyrtModel *m = s->m;
    *value = nv->value;
    *y = m->y_names ? dyrt_find(nv->name, m->y_names, m->ny) : -1;
    if (*y >= 0)
        return 0;
    int c = m->out_names ? dyrt_find(nv->name, m->out_names, m->nout) : -1;
    if (c < 0) {
        unknown_name("variable for --initial", nv->name, m->out_names, m->nout);
        return DYRT_EXIT_USER;
    }
    for (int k = 0; k < m->nout_copy; k++) {
        if (m->out_copy_dest[k] != c)
            continue;
        unsigned kind = m->out_copy_kind[k];
        if ((kind & DYRT_SRC_MASK) != DYRT_SRC_Y)
            break;
        double v = nv->value;
        if (kind & DYRT_OP_OFFSET)
            v -= m->out_copy_offset[k];
        if (kind & DYRT_OP_SCALE)
            v /= m->out_copy_scale[k];
        *value = kind & DYRT_OP_NEG ? -v : v;
        *y = m->out_copy_index[k];
        return 0;
    }
    return needs_compiler(s, nv, "is computed from the unknowns");
}

static int set_initial(DyrtSim *s, const DyrtNameValue *nv)
{
    const DyrtModel *m = s->m;
    int i;
    double v;
    int rc = initial_unknown(s, nv, &i, &v);
    if (rc)
        return rc;
    if (!m->y_is_diff || !m->y_is_diff[i])
        return needs_compiler(s, nv, "is no state (its initial value follows from the equations)");
    s->y0[i] = v;
    return 0;
}

/* The unknown named by --initial, for a model with an initialization
 * system: the row that fixes it (its `initial` relation or its start row),
 * which init.c replaces by z = value. */
int dyrt_initial_target(const DyrtSim *s, const DyrtNameValue *nv, int *row, int *z, double *value)
{
    const DyrtModel *m = s->m;
    int i;
    int rc = initial_unknown(s, nv, &i, value);
    if (rc)
        return rc;
    if (!m->initial_row || !m->initial_z) {
        dyrt_error("--initial %s: not supported for model '%s': its initial values come "
                   "from its initialization system and the compiler did not record which "
                   "`initial` relation belongs to '%s'; change the relation instead",
                   nv->name, m->name, nv->name);
        return DYRT_EXIT_USER;
    }
    *row = m->initial_row[i];
    *z = m->initial_z[i];
    if (*row < 0 || *z < 0)
        return needs_compiler(s, nv, "has no initial relation of its own (its initial value follows from the "
                                     "other relations)");
    return 0;
}

int dyrt_apply_initials(DyrtSim *s)
{
    if (s->ninitials == 0 || s->m->init_n > 0)
        return 0;
    for (int k = 0; k < s->ninitials; k++) {
        int rc = set_initial(s, &s->initials[k]);
        if (rc)
            return rc;
    }
    return 0;
}
