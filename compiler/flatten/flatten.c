/*
 * flatten.c -- the phase entry point and the flat-model dump.
 *   flatten(): instance tree -> flat variables -> values and attributes ->
 *   connects (first pass over the relations) -> the other relations ->
 *   connection equations.  An analysis flattens its `model`.
 */
#include "flatten_internal.h"
#include "numfmt.h"

#include <math.h>
#include <string.h>

static uint64_t work_limit = FLAT_WORK_DEFAULT;

void flat_set_work_limit(uint64_t n) { work_limit = n; }

bool flat_charge(Flattener *F, uint64_t n, Span at) {
    if (F->over_budget) return false;
    if (n <= F->work_limit - F->work) {
        F->work += n;
        return true;
    }
    F->over_budget = true;
    diag_error(at, "expanding this exceeds the limit on structural work (%llu array elements, range "
                   "elements, loop iterations and instances per model); raise it with "
                   "--max-structural-work N", (unsigned long long)F->work_limit);
    return false;
}

static void flattener_init(Flattener *F, Program *p, ExprCtx *ctx) {
    F->prog = p;
    F->work_limit = work_limit;
    F->arena = p->arena;
    F->ctx = ctx;
    Interner *in = p->in;
    F->s_der = intern_cstr(in, "der");
    F->s_time = intern_cstr(in, "time");
    F->s_pi = intern_cstr(in, "pi");
    F->s_pi_u = intern_cstr(in, "π");
    F->s_ifelse = intern_cstr(in, "ifelse");
    F->s_Real = intern_cstr(in, "Real");
    F->s_Integer = intern_cstr(in, "Integer");
    F->s_Boolean = intern_cstr(in, "Boolean");
    F->s_String = intern_cstr(in, "String");
}

/* instance tree -> variables -> values -> connects -> equations */
static FlatModel *flatten_from(Flattener *F, Def *d, PendingVec *mods) {
    unsigned errors = diag_error_count();
    Inst *top = inst_build_under(F, d, mods);
    if (diag_error_count() > errors) return NULL;
    connect_init(F);
    clock_bind_instances(F, top);
    flatten_bindings(F);
    flatten_relations(F, top);
    if (F->over_budget) return NULL; /* the relations are incomplete: no follow-on errors */
    connect_prepare_sets(F);
    flatten_deferred(F);
    uint32_t nrel = F->m->eqs.len;
    flatten_connections(F);
    clock_infer(F, nrel);
    flatten_orientation_loops(F);
    flat_mark_inputs(F->m);
    return diag_error_count() > errors ? NULL : F->m;
}

FlatModel *flatten(Program *p, Def *d, ExprCtx *ctx) {
    if (d->node->kind != AST_COMPONENT && d->node->kind != AST_ANALYSIS) {
        diag_error(d->node->span, "`%s` is not a component", d->qname);
        return NULL;
    }
    Flattener F = {0};
    flattener_init(&F, p, ctx);
    F.m = ARENA_NEW(p->arena, FlatModel);
    F.m->ctx = ctx;
    F.m->name = d->qname;
    if (d->node->kind == AST_ANALYSIS) return flatten_analysis(&F, d);
    return flatten_from(&F, d, NULL);
}

FlatModel *flatten_model_of(Flattener *F, Def *d, PendingVec *mods) { return flatten_from(F, d, mods); }

/* ---------- overrides ---------- */

bool flat_add_initial(FlatModel *m, const char *name, double value, Span at, const char *origin) {
    Arena *a = expr_ctx_arena(m->ctx);
    Sym *names = ARENA_ARRAY(a, Sym, m->vars.len + 1);
    uint32_t n = 0;
    for (uint32_t i = 0; i < m->vars.len; i++) {
        FlatVar *v = &m->vars.data[i];
        if (v->kind == FV_VARIABLE || v->kind == FV_PARAM_MISSING) names[n++] = v->name;
        if (strcmp(v->name, name) != 0) continue;
        if (v->kind == FV_PARAMETER || v->kind == FV_CONSTANT) {
            diag_error(at, "%s %s: `%s` is a parameter, not a variable; set it with -p %s=VALUE", origin, name,
                       name, name);
            return false;
        }
        FlatEq q = {.kind = FE_INITIAL, .lhs = expr_leaf(m->ctx, EXPR_VAR, i), .rhs = expr_const(m->ctx, value),
                    .origin = origin, .span = at, .is_override = true};
        vec_push(a, &m->eqs, q);
        return true;
    }
    Sym near = suggest_name(name, names, n);
    if (near) diag_error(at, "%s %s: `%s` is not a variable of `%s`; did you mean `%s`?", origin, name, name, m->name, near);
    else diag_error(at, "%s %s: `%s` is not a variable of `%s`", origin, name, name, m->name);
    return false;
}

/* ---------- constants ---------- */

static Expr *constant_leaf(void *ud, Expr *leaf) {
    FlatModel *m = ud;
    if (leaf->kind != EXPR_VAR || leaf->index >= m->vars.len) return leaf;
    FlatVar *v = &m->vars.data[leaf->index];
    return v->kind == FV_CONSTANT && v->value && expr_is_const(v->value) ? v->value : leaf;
}

static Expr *fold(FlatModel *m, Expr *e) { return e ? expr_subst(m->ctx, e, constant_leaf, m) : NULL; }

void flat_fold_constants(FlatModel *m) {
    bool any = false;
    for (uint32_t i = 0; i < m->vars.len && !any; i++)
        any = m->vars.data[i].kind == FV_CONSTANT && m->vars.data[i].value;
    if (!any) return;
    for (uint32_t i = 0; i < m->eqs.len; i++) {
        m->eqs.data[i].lhs = fold(m, m->eqs.data[i].lhs);
        m->eqs.data[i].rhs = fold(m, m->eqs.data[i].rhs);
    }
    for (uint32_t i = 0; i < m->vars.len; i++) {
        if (m->vars.data[i].kind != FV_CONSTANT) m->vars.data[i].value = fold(m, m->vars.data[i].value);
        m->vars.data[i].guess = fold(m, m->vars.data[i].guess);
    }
    for (uint32_t i = 0; i < m->asserts.len; i++) m->asserts.data[i].cond = fold(m, m->asserts.data[i].cond);
    for (uint32_t i = 0; i < m->clocks.len; i++) {
        m->clocks.data[i].period = fold(m, m->clocks.data[i].period);
        m->clocks.data[i].offset = fold(m, m->clocks.data[i].offset);
    }
}

/* ---------- dump ---------- */

static void leaf_name(void *ud, FILE *out, const Expr *e) {
    const FlatModel *m = ud;
    const char *n = e->index < m->vars.len ? m->vars.data[e->index].name : "?";
    if (e->kind == EXPR_DER) fprintf(out, "der(%s)", n);
    else fputs(n, out);
}

void flat_print_expr(FILE *out, const FlatModel *m, const Expr *e) {
    expr_print(out, e, leaf_name, (void *)m);
}

static const char *kind_name(FlatVarKind k) {
    switch (k) {
    case FV_VARIABLE: return "variable";
    case FV_PARAMETER: return "parameter";
    case FV_PARAM_MISSING: return "parameter(missing)";
    case FV_CONSTANT: return "constant";
    case FV_INPUT: return "input";
    case FV_DISCRETE: return "clocked";
    case FV_HISTORY: return "previous";
    case FV_HOLD: return "held";
    case FV_INTERVAL: return "interval";
    }
    return "?";
}

static const char *conn_name(FlatConn c) {
    switch (c) {
    case FC_NONE: return "";
    case FC_POTENTIAL: return " potential";
    case FC_FLOW: return " flow";
    case FC_STREAM: return " stream";
    case FC_INPUT: return " input";
    case FC_OUTPUT: return " output";
    }
    return "";
}

static void dump_var(FILE *out, const FlatModel *m, const FlatVar *v) {
    fprintf(out, "  %s%s%s %s", v->is_final ? "final " : "", kind_name(v->kind), conn_name(v->conn), v->name);
    if (v->units) fprintf(out, " [%s]", v->units);
    if (v->value) {
        fputs(" = ", out);
        flat_print_expr(out, m, v->value);
    }
    if (v->guess) {
        fputs(" (guess ", out);
        flat_print_expr(out, m, v->guess);
        fputc(')', out);
    }
    if (!isinf(v->min)) fprintf(out, " (min %s)", dyrt_num(v->min).s);
    if (!isinf(v->max)) fprintf(out, " (max %s)", dyrt_num(v->max).s);
    if (v->state_priority) fprintf(out, " (statePriority %d)", v->state_priority);
    if (v->clock) fprintf(out, " @%s", m->clocks.data[v->clock - 1].name);
    fputc('\n', out);
}

static void dump_eq(FILE *out, const FlatModel *m, const FlatEq *q) {
    uint32_t line = 0, col = 0;
    SrcFile *f = src_get(q->span.file);
    if (f) src_line_col(f, q->span.lo, &line, &col);
    fputs(q->kind == FE_INITIAL ? (q->is_override ? "  initial (override) " : "  initial ") : "  ", out);
    if (q->clock) fprintf(out, "@%s: ", m->clocks.data[q->clock - 1].name);
    flat_print_expr(out, m, q->lhs);
    fputs(q->kind == FE_SAMPLE ? " = sample(" : " = ", out);
    flat_print_expr(out, m, q->rhs);
    if (q->kind == FE_SAMPLE) fputc(')', out);
    fprintf(out, "    # %s @%u:%u\n", q->origin[0] ? q->origin : "<top>", line, col);
}

static void dump_settings(FILE *out, const FlatSettings *s) {
    if (!s->has) return;
    fprintf(out, "settings start=%s stop=%s saveat=%s reltol=%s abstol=%s dtmax=%s", dyrt_num(s->start).s,
            dyrt_num(s->stop).s, dyrt_num(s->interval).s, dyrt_num(s->rtol).s, dyrt_num(s->atol).s,
            dyrt_num(s->dtmax).s);
    if (s->alg) fprintf(out, " alg=\"%s\"", s->alg);
    for (uint32_t i = 0; i < s->ntstops; i++) fprintf(out, "%s%s", i ? "," : " tstops=", dyrt_num(s->tstops[i]).s);
    fputc('\n', out);
}

static void dump_clocks(FILE *out, const FlatModel *m) {
    for (uint32_t i = 0; i < m->clocks.len; i++) {
        const FlatClock *c = &m->clocks.data[i];
        fprintf(out, "clock %s = ", c->name);
        if (c->kind == FCLK_ZERO_CROSSING) {
            fputs("zero_crossing_clock(", out);
            flat_print_expr(out, m, c->signal);
        } else {
            fputs("periodic_clock(", out);
            flat_print_expr(out, m, c->period);
            fputs(", ", out);
            flat_print_expr(out, m, c->offset);
        }
        fputs(")\n", out);
    }
}

void flat_dump(FILE *out, const FlatModel *m) {
    fprintf(out, "model %s\n", m->name);
    dump_settings(out, &m->settings);
    dump_clocks(out, m);
    uint32_t neq = 0, nunk = 0;
    for (uint32_t i = 0; i < m->vars.len; i++) {
        dump_var(out, m, &m->vars.data[i]);
        nunk += flat_kind_is_unknown(m->vars.data[i].kind);
    }
    fputs("equations\n", out);
    for (uint32_t i = 0; i < m->eqs.len; i++) {
        dump_eq(out, m, &m->eqs.data[i]);
        neq += flat_eq_is_regular(m->eqs.data[i].kind);
    }
    for (uint32_t i = 0; i < m->asserts.len; i++) {
        fputs("  assert(", out);
        flat_print_expr(out, m, m->asserts.data[i].cond);
        fprintf(out, ", \"%s\")\n", m->asserts.data[i].message);
    }
    fprintf(out, "end  # %u equations, %u unknowns\n", neq, nunk);
}
