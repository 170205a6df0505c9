/*
 * describe.c -- modelDescription.xml (FMI 2.0.4, chapter 2.2) for a System.
 *
 * ModelVariables, in value-reference order (index = vr + 1 for parameters
 * and variables; derivatives follow in state order):
 *   parameter p_i       causality parameter, variability fixed, initial
 *                       exact, start = its constant default;
 *                       `final`/constant with a constant value: local,
 *                       constant; dependent or `missing`: calculatedParameter,
 *                       initial calculated;
 *   variable k          the component's own RealOutput: causality output,
 *                       else local; variability continuous; initial
 *                       calculated (the initialization computes it);
 *   der(x)              for each state x (a differential unknown y_i whose
 *                       value is variable k exactly): local, continuous,
 *                       <Real derivative="index of k"/>;
 *   a set state y_i     a differential unknown no column is (a state of a
 *                       state set: which candidate it equals changes at
 *                       run time), after the derivatives: its own variable
 *                       named y_i (`$set1[1]`), value reference np + nout
 *                       + ny + i, local, continuous, calculated; its der()
 *                       as above.
 * Units and descriptions come from the flat model (its variables found by
 * name).
 * ModelStructure: Outputs, Derivatives, InitialUnknowns (outputs,
 * calculated parameters, states and derivatives), each ascending; outputs
 * and derivatives with their `dependencies` on the states and inputs
 * (depend.c); of the initial unknowns, the calculated parameters with
 * theirs on the exact parameters and inputs (through their defaults), the
 * rest without (the standard then assumes every known may matter).
 * O(np + nout + ny + number of units^2); the units are few.
 */
#include <string.h>

#include "dyadrt.h"
#include "fmi_internal.h"

typedef struct Desc {
    FILE *out;
    const System *s;
    const FlatModel *m;
    const FlatVar **pvar;      /* [np] flat variable of each parameter slot */
    const FlatVar **ovar;      /* [nout] flat variable of each output column */
    int32_t *state_col;        /* [ny] output column that is y_i, -1 */
    uint32_t *der_idx;         /* [ny] 1-based index of der(y_i) when a state */
    uint32_t *own_idx;         /* [ny] 1-based index of y_i's own variable (a set
                                  state: no column is y_i), 0 */
    uint32_t *col_idx;         /* [nout] 1-based index of column k's variable, 0:
                                  none (an input's column: the input is its slot) */
    unsigned char *is_state;   /* [nout] the column is a state variable */
    const char **units;        /* distinct units */
    uint32_t nunits;
} Desc;

/* XML attribute text. */
static void esc(FILE *f, const char *s)
{
    for (; *s; s++) {
        switch (*s) {
        case '&': fputs("&amp;", f); break;
        case '<': fputs("&lt;", f); break;
        case '>': fputs("&gt;", f); break;
        case '"': fputs("&quot;", f); break;
        case '\n': fputs("&#10;", f); break;
        default: fputc(*s, f); break;
        }
    }
}

static bool ident_char(char c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_' || (c >= '0' && c <= '9');
}

const char *fmi_identifier(Arena *a, const char *fmu_path)
{
    const char *base = strrchr(fmu_path, '/');
    base = base ? base + 1 : fmu_path;
    size_t len = strlen(base);
    if (len > 4 && strcmp(base + len - 4, ".fmu") == 0)
        len -= 4;
    char *id = arena_alloc(a, len + 2);
    size_t n = 0;
    if (len == 0 || (base[0] >= '0' && base[0] <= '9'))
        id[n++] = '_';
    for (size_t i = 0; i < len; i++)
        id[n++] = ident_char(base[i]) ? base[i] : '_';
    id[n] = '\0';
    return id;
}

/* Parameter slots and output columns to flat variables, by name (the
 * System's names are the flat variables' strings; a hash of the text, so
 * no pointer identity is assumed).  O(number of variables). */
static uint64_t name_key(const char *s)
{
    return dyrt_fnv1a(0xcbf29ce484222325ULL, s);
}

static const FlatVar *find_var(const HashMap *h, const char *name)
{
    const FlatVar *v = hmap_get(h, name_key(name));
    return v && strcmp(v->name, name) == 0 ? v : NULL;
}

static int map_vars(Desc *d, Arena *a)
{
    const System *s = d->s;
    HashMap h = {0};
    for (uint32_t i = 0; i < d->m->vars.len; i++)
        hmap_put(a, &h, name_key(d->m->vars.data[i].name), &d->m->vars.data[i]);
    d->pvar = ARENA_ARRAY(a, const FlatVar *, s->np + 1);
    d->ovar = ARENA_ARRAY(a, const FlatVar *, s->nout + 1);
    for (uint32_t p = 0; p < s->np; p++)
        if (!(d->pvar[p] = find_var(&h, s->param_names[p]))) {
            diag_internal("fmi: parameter `%s` is not in the flat model", s->param_names[p]);
            return 1;
        }
    for (uint32_t k = 0; k < s->nout; k++)
        if (!(d->ovar[k] = find_var(&h, s->out_names[k]))) {
            diag_internal("fmi: variable `%s` is not in the flat model", s->out_names[k]);
            return 1;
        }
    return 0;
}

/* The output column that is exactly y_i (the state variable), as the
 * runtime finds it (dyrt_model_output_states: a copy of y_i without
 * operations). */
static void map_states(Desc *d, Arena *a)
{
    const System *s = d->s;
    d->state_col = ARENA_ARRAY(a, int32_t, s->ny + 1);
    for (uint32_t i = 0; i < s->ny; i++)
        d->state_col[i] = -1;
    for (uint32_t k = s->nout_copy; k-- > 0;) {     /* the first column wins */
        const SysCopy *c = &s->out_copy[k];
        if (c->src == SYS_SRC_Y && c->ops == 0 && s->y_is_diff[c->index])
            d->state_col[c->index] = (int32_t)c->dest;
    }
    d->der_idx = ARENA_ARRAY(a, uint32_t, s->ny + 1);
    d->is_state = ARENA_ARRAY(a, unsigned char, s->nout + 1);
    d->col_idx = ARENA_ARRAY(a, uint32_t, s->nout + 1);
    uint32_t n = s->np;
    for (uint32_t k = 0; k < s->nout; k++)
        d->col_idx[k] = d->ovar[k]->kind == FV_INPUT ? 0 : ++n;
    for (uint32_t i = 0; i < s->ny; i++)
        if (d->state_col[i] >= 0) {
            d->der_idx[i] = ++n;
            d->is_state[d->state_col[i]] = 1;
        } else if (s->y_is_diff[i]) {
            d->der_idx[i] = ++n;
        }
    d->own_idx = ARENA_ARRAY(a, uint32_t, s->ny + 1);
    for (uint32_t i = 0; i < s->ny; i++)
        if (s->y_is_diff[i] && d->state_col[i] < 0)
            d->own_idx[i] = ++n;
}

/* the index of state y_i's variable */
static uint32_t state_var(const Desc *d, uint32_t i)
{
    return d->state_col[i] >= 0 ? d->col_idx[d->state_col[i]] : d->own_idx[i];
}

static void collect_unit(Desc *d, Arena *a, const char *u)
{
    if (!u || !*u)
        return;
    for (uint32_t i = 0; i < d->nunits; i++)
        if (strcmp(d->units[i], u) == 0)
            return;
    const char **grown = ARENA_ARRAY(a, const char *, d->nunits + 1);
    if (d->nunits)
        memcpy(grown, d->units, sizeof *grown * d->nunits);
    grown[d->nunits++] = u;
    d->units = grown;
}

static void unit_definitions(Desc *d, Arena *a)
{
    for (uint32_t p = 0; p < d->s->np; p++)
        collect_unit(d, a, d->pvar[p]->units);
    for (uint32_t k = 0; k < d->s->nout; k++)
        collect_unit(d, a, d->ovar[k]->units);
    if (d->nunits == 0)
        return;
    fputs("  <UnitDefinitions>\n", d->out);
    for (uint32_t i = 0; i < d->nunits; i++) {
        fputs("    <Unit name=\"", d->out);
        esc(d->out, d->units[i]);
        fputs("\"/>\n", d->out);
    }
    fputs("  </UnitDefinitions>\n", d->out);
}

static void var_open(Desc *d, const char *name, uint32_t vr, const char *attrs, const char *doc)
{
    fputs("    <ScalarVariable name=\"", d->out);
    esc(d->out, name);
    fprintf(d->out, "\" valueReference=\"%u\" %s", vr, attrs);
    if (doc && *doc) {
        fputs(" description=\"", d->out);
        esc(d->out, doc);
        fputc('"', d->out);
    }
    fputs(">\n      <Real", d->out);
}

static void var_close(Desc *d, const char *unit)
{
    if (unit && *unit) {
        fputs(" unit=\"", d->out);
        esc(d->out, unit);
        fputc('"', d->out);
    }
    fputs("/>\n    </ScalarVariable>\n", d->out);
}

static bool is_calculated_param(const System *s, uint32_t p)
{
    unsigned char f = s->param_flags[p];
    const Expr *def = s->param_default[p];
    return !(f & (SYS_PARAM_DISCRETE | SYS_PARAM_INPUT)) &&
           ((f & (SYS_PARAM_MISSING | SYS_PARAM_DEPENDENT)) || !def || !expr_is_const(def));
}

static int parameter(Desc *d, uint32_t p)
{
    const System *s = d->s;
    const FlatVar *v = d->pvar[p];
    const Expr *def = s->param_default[p];
    if (s->param_flags[p] & SYS_PARAM_INPUT) {        /* start: the value before it is set */
        var_open(d, v->name, p, "causality=\"input\" variability=\"continuous\"", flat_attr(d->m, v)->doc);
        fputs(" start=\"0\"", d->out);
        var_close(d, v->units);
        return 0;
    }
    if (s->param_flags[p] & SYS_PARAM_DISCRETE) {     /* a clocked value */
        var_open(d, v->name, p, "causality=\"local\" variability=\"discrete\" "
                 "initial=\"calculated\"", flat_attr(d->m, v)->doc);
        var_close(d, v->units);
        return 0;
    }
    /* (a structural value known to be `missing`, a constant without a value,
     * is used at compile time only: a calculatedParameter below) */
    if ((s->param_flags[p] & SYS_PARAM_REQUIRED) ||
        (!def && !(s->param_flags[p] & SYS_PARAM_MISSING) && v->kind != FV_CONSTANT)) {
        diag_error(v->span, "parameter `%s` has no value; an FMU needs a start value for every "
                   "parameter: give it one in the model", v->name);
        return 1;
    }
    if (is_calculated_param(s, p)) {
        var_open(d, v->name, p, "causality=\"calculatedParameter\" variability=\"fixed\" "
                 "initial=\"calculated\"", flat_attr(d->m, v)->doc);
    } else {
        bool fin = s->param_flags[p] & SYS_PARAM_FINAL;
        var_open(d, v->name, p, fin ? "causality=\"local\" variability=\"constant\" initial=\"exact\""
                                    : "causality=\"parameter\" variability=\"fixed\" initial=\"exact\"",
                 flat_attr(d->m, v)->doc);
        fprintf(d->out, " start=\"%.17g\"", def->value);
    }
    var_close(d, v->units);
    return 0;
}

static bool is_output(const FlatVar *v)
{
    return v->top_conn && v->conn == FC_OUTPUT;
}

static void variable(Desc *d, uint32_t k)
{
    const FlatVar *v = d->ovar[k];
    var_open(d, v->name, d->s->np + k, is_output(v)
             ? "causality=\"output\" variability=\"continuous\" initial=\"calculated\""
             : "causality=\"local\" variability=\"continuous\" initial=\"calculated\"", flat_attr(d->m, v)->doc);
    var_close(d, v->units);
}

static void derivative(Desc *d, uint32_t i)
{
    const System *s = d->s;
    int32_t col = d->state_col[i];
    char name[1024];
    snprintf(name, sizeof name, "der(%s)", col >= 0 ? d->ovar[col]->name : s->y_names[i]);
    var_open(d, name, s->np + s->nout + i, "causality=\"local\" variability=\"continuous\" "
             "initial=\"calculated\"", NULL);
    fprintf(d->out, " derivative=\"%u\"", state_var(d, i));
    var_close(d, NULL);        /* its unit (unit/s) is not among the declared ones */
}

/* A set state's own variable (see above). */
static void own_state(Desc *d, uint32_t i)
{
    const System *s = d->s;
    var_open(d, s->y_names[i], s->np + s->nout + s->ny + i, "causality=\"local\" "
             "variability=\"continuous\" initial=\"calculated\"",
             "a state of a state set: the candidate the set chose (changes at events)");
    var_close(d, NULL);
}

/* One ModelStructure list; left out when empty (the schema wants at least
 * one Unknown in each).  sets: NULL, or the dependencies of each. */
static void section(Desc *d, const char *name, const uint32_t *idx, uint32_t n, const FmiDeps *deps,
                    const FmiSet *const *sets)
{
    if (n == 0)
        return;
    fprintf(d->out, "    <%s>\n", name);
    for (uint32_t i = 0; i < n; i++) {
        fprintf(d->out, "      <Unknown index=\"%u\"", idx[i]);
        if (sets && sets[i])
            fmi_deps_print(d->out, deps, sets[i]);
        fputs("/>\n", d->out);
    }
    fprintf(d->out, "    </%s>\n", name);
}

/* The expression of output column k (a copy column may have none; a
 * column of a loop item is its template, read where *at says). */
static Expr *column_expr(const System *s, uint32_t k, SysAt *at)
{
    Expr *x = sys_out_at(s, k, at);
    if (x)
        return x;
    for (uint32_t c = 0; c < s->nout_copy; c++) {
        const SysCopy *cp = &s->out_copy[c];
        if (cp->dest != k)
            continue;
        switch ((SysSrc)cp->src) {
        case SYS_SRC_Y: return expr_leaf(s->ctx, EXPR_Y, cp->index);
        case SYS_SRC_YP: return expr_leaf(s->ctx, EXPR_YP, cp->index);
        case SYS_SRC_P: return expr_leaf(s->ctx, EXPR_P, cp->index);
        case SYS_SRC_TIME: return expr_time(s->ctx);
        case SYS_SRC_CONST: return expr_const(s->ctx, cp->offset);
        }
    }
    return expr_const(s->ctx, 0);
}

/* A known of the initialization: an input, or a parameter with
 * causality="parameter" (initial exact). */
static bool init_known(const System *s, uint32_t q)
{
    unsigned char f = s->param_flags[q];
    return (f & SYS_PARAM_INPUT) ||
           (!(f & (SYS_PARAM_DISCRETE | SYS_PARAM_FINAL)) && !is_calculated_param(s, q));
}

/* The dependencies of the calculated parameters on the knowns of the
 * initialization (known q is the parameter slot q, index q + 1),
 * through their defaults in evaluation order; NULL for one computed by the
 * initialization system (`missing`) or reading a clocked value, which get
 * no attribute.  *pd: the numbering, for fmi_deps_print. */
static const FmiSet **param_dependencies(const System *s, Arena *a, FmiDeps *pd)
{
    memset(pd, 0, sizeof *pd);
    pd->nknown = s->np;
    pd->known_index = ARENA_ARRAY(a, uint32_t, s->np + 1);
    pd->a = a;
    pd->stamp = ARENA_ARRAY(a, uint32_t, s->np + 1);
    for (uint32_t q = 0; q < s->np; q++)
        pd->known_index[q] = q + 1;
    const FmiSet **set = ARENA_ARRAY(a, const FmiSet *, s->np + 1);
    for (uint32_t k = 0; k < s->np; k++) {
        uint32_t p = s->param_order ? s->param_order[k] : k;
        if (!is_calculated_param(s, p) || (s->param_flags[p] & SYS_PARAM_MISSING))
            continue;
        fmi_set_begin(pd);
        bool ok = true;
        ExprVec leaves = {0};
        if (s->param_default[p])
            expr_leaves(s->ctx, s->param_default[p], EXPR_P, &leaves);
        for (uint32_t l = 0; l < leaves.len && ok; l++) {
            uint32_t q = leaves.data[l]->index;
            if (init_known(s, q))
                fmi_set_add(pd, q);
            else if (is_calculated_param(s, q) && set[q])
                fmi_set_add_set(pd, set[q]);
            else if (!(s->param_flags[q] & SYS_PARAM_FINAL) || is_calculated_param(s, q))
                ok = false;                /* a clocked value, or unknown here */
        }
        set[p] = ok ? fmi_set_take(pd) : NULL;
    }
    return set;
}

static void model_structure(Desc *d, Arena *a)
{
    const System *s = d->s;
    uint32_t *idx = ARENA_ARRAY(a, uint32_t, s->np + s->nout + s->ny + 1), n = 0;
    const FmiSet **sets = ARENA_ARRAY(a, const FmiSet *, s->np + s->nout + s->ny + 1);
    uint32_t *state_index = ARENA_ARRAY(a, uint32_t, s->ny + 1);
    for (uint32_t i = 0; i < s->ny; i++)
        state_index[i] = s->y_is_diff[i] ? state_var(d, i) : 0;
    FmiDeps deps;
    bool with = fmi_deps_build(&deps, a, s, state_index);
    fputs("  <ModelStructure>\n", d->out);
    for (uint32_t k = 0; k < s->nout; k++)
        if (d->col_idx[k] && is_output(d->ovar[k])) {
            if (with) {
                SysAt at;
                Expr *x = column_expr(s, k, &at);
                fmi_set_begin(&deps);
                fmi_deps_of_expr(&deps, s, x, &at);
                sets[n] = fmi_set_take(&deps);
            }
            idx[n++] = d->col_idx[k];
        }
    section(d, "Outputs", idx, n, &deps, with ? sets : NULL);
    n = 0;
    for (uint32_t i = 0; i < s->ny; i++)
        if (d->der_idx[i]) {
            if (with)
                sets[n] = &deps.z[i];
            idx[n++] = d->der_idx[i];
        }
    section(d, "Derivatives", idx, n, &deps, with ? sets : NULL);
    n = 0;
    FmiDeps pd;
    const FmiSet **pset = param_dependencies(s, a, &pd);
    for (uint32_t p = 0; p < s->np; p++)
        if (is_calculated_param(s, p)) {
            sets[n] = pset[p];
            idx[n++] = p + 1;
        }
    for (uint32_t k = 0; k < s->nout; k++)
        if (d->col_idx[k] && (is_output(d->ovar[k]) || d->is_state[k])) {
            sets[n] = NULL;
            idx[n++] = d->col_idx[k];
        }
    for (uint32_t i = 0; i < s->ny; i++)
        if (d->der_idx[i]) {
            sets[n] = NULL;
            idx[n++] = d->der_idx[i];
        }
    for (uint32_t i = 0; i < s->ny; i++)
        if (d->own_idx[i]) {
            sets[n] = NULL;
            idx[n++] = d->own_idx[i];
        }
    section(d, "InitialUnknowns", idx, n, &pd, sets);
    fputs("  </ModelStructure>\n", d->out);
}

/* dyrt_model_guid over the System's names (the same strings, same order). */
static void guid(const System *s, char *buf)
{
    DyrtModel m = {.name = s->model_name, .np = (int32_t)s->np, .nout = (int32_t)s->nout,
                   .ny = (int32_t)s->ny, .param_names = s->param_names,
                   .out_names = s->out_names, .y_names = s->y_names};
    dyrt_model_guid(&m, buf);
}

static void header(Desc *d, const FmiExport *x)
{
    const System *s = d->s;
    FILE *f = d->out;
    char g[DYRT_GUID_LEN];
    guid(s, g);
    fputs("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<fmiModelDescription fmiVersion=\"2.0\" "
          "modelName=\"", f);
    esc(f, s->model_name);
    fprintf(f, "\" guid=\"%s\" generationTool=\"dyadc %s\" variableNamingConvention=\"flat\" "
            "numberOfEventIndicators=\"%u\">\n", g, x->version, s->nz);
    const char *common = "canNotUseMemoryManagementFunctions=\"true\"";
    if (x->me)
        fprintf(f, "  <ModelExchange modelIdentifier=\"%s\" %s canGetAndSetFMUstate=\"true\" "
                "canSerializeFMUstate=\"true\" providesDirectionalDerivative=\"true\"/>\n",
                x->model_identifier, common);
    if (x->cs)
        fprintf(f, "  <CoSimulation modelIdentifier=\"%s\" %s canGetAndSetFMUstate=\"true\" "
                "canSerializeFMUstate=\"true\" canHandleVariableCommunicationStepSize=\"true\" "
                "providesDirectionalDerivative=\"false\"/>\n", x->model_identifier, common);
}

static void default_experiment(Desc *d)
{
    const System *s = d->s;
    fprintf(d->out, "  <DefaultExperiment startTime=\"%.17g\"", s->start_time);
    if (s->stop_time > s->start_time)
        fprintf(d->out, " stopTime=\"%.17g\"", s->stop_time);
    if (s->rtol > 0)
        fprintf(d->out, " tolerance=\"%.17g\"", s->rtol);
    if (s->interval > 0)
        fprintf(d->out, " stepSize=\"%.17g\"", s->interval);
    fputs("/>\n", d->out);
}

int fmi_describe(FILE *out, const System *s, const FlatModel *m, const FmiExport *x)
{
    Arena *a = arena_new();
    Desc d = {.out = out, .s = s, .m = m};
    int rc = map_vars(&d, a);
    if (!rc) {
        map_states(&d, a);
        header(&d, x);
        unit_definitions(&d, a);
        default_experiment(&d);
        fputs("  <ModelVariables>\n", out);
        for (uint32_t p = 0; p < s->np; p++)
            rc |= parameter(&d, p);
        for (uint32_t k = 0; k < s->nout; k++)
            if (d.ovar[k]->kind != FV_INPUT)       /* the input's own variable is its slot */
                variable(&d, k);
        for (uint32_t i = 0; i < s->ny; i++)
            if (d.der_idx[i])
                derivative(&d, i);
        for (uint32_t i = 0; i < s->ny; i++)
            if (d.own_idx[i])
                own_state(&d, i);
        fputs("  </ModelVariables>\n", out);
        model_structure(&d, a);
        fputs("</fmiModelDescription>\n", out);
    }
    arena_free(a);
    return rc;
}
