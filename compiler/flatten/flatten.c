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
static bool scalarize_all;

void flat_set_work_limit(uint64_t n) { work_limit = n; }
void flat_set_scalarize(bool on) { scalarize_all = on; }

bool flat_charge(Flattener *F, uint64_t n, Span at) {
    if (F->over_budget) return false;
    if (n <= F->work_limit - F->work) {
        F->work += n;
        return true;
    }
    if (F->speculating) { /* a template attempt: the ordinary way reports it */
        diag_error(at, "over the budget of structural work");
        return false;
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
    F->no_templates = scalarize_all;
    F->arena = arena_new();
    F->keep = expr_ctx_arena(ctx); /* the FlatModel lives with its expressions */
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
    /* Variables' leaves are made when something reads them: an element of
     * an array that only templates read never has one (10^6 leaves of 40
     * bytes for a loop over a million elements).  Nothing depends on the
     * order nodes are created in: operand order is canonical
     * (expr_cmp_canon), node ids are only keys. */
    flatten_bindings(F);
    flatten_relations(F, top);
    if (F->over_budget) return NULL; /* the relations are incomplete: no follow-on errors */
    connect_prepare_sets(F);
    flatten_deferred(F);
    if (F->clk) flat_scalarize(F->m); /* clock inference works on scalar equations */
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
    F.m = ARENA_NEW(F.keep, FlatModel);
    F.m->ctx = ctx;
    F.m->name = intern_cstr(p->in, d->qname); /* the FlatModel points to no AST (driver: freed) */
    FlatModel *m = d->node->kind == AST_ANALYSIS ? flatten_analysis(&F, d) : flatten_from(&F, d, NULL);
    arena_free(F.arena); /* the instance tree and the temporaries: m points only into F.keep */
    return m;
}

FlatModel *flatten_model_of(Flattener *F, Def *d, PendingVec *mods) { return flatten_from(F, d, mods); }

/* ---------- rare attributes ---------- */

const FlatVarAttr flat_attr_none = {.min = -__builtin_inf(), .max = __builtin_inf()};

FlatVarAttr *flat_attr_set(FlatModel *m, uint32_t v) {
    FlatVar *fv = &m->vars.data[v];
    if (fv->attr && m->attrs.data[fv->attr - 1].owner == v + 1) return &m->attrs.data[fv->attr - 1];
    FlatVarAttr a = *flat_attr(m, fv); /* copied before the vector may move */
    a.owner = v + 1;
    vec_push(expr_ctx_arena(m->ctx), &m->attrs, a);
    fv->attr = m->attrs.len;
    return &m->attrs.data[m->attrs.len - 1];
}

uint32_t flat_attr_shared(FlatModel *m, const char *doc) {
    if (!doc) return 0;
    FlatVarAttr a = flat_attr_none;
    a.doc = doc;
    vec_push(expr_ctx_arena(m->ctx), &m->attrs, a);
    return m->attrs.len;
}

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
    for (uint32_t i = 0; i < m->vars.len; i++)
        if (m->vars.data[i].kind != FV_CONSTANT) m->vars.data[i].value = fold(m, m->vars.data[i].value);
    for (uint32_t i = 0; i < m->attrs.len; i++) m->attrs.data[i].guess = fold(m, m->attrs.data[i].guess);
    for (uint32_t i = 0; i < m->asserts.len; i++) m->asserts.data[i].cond = fold(m, m->asserts.data[i].cond);
    for (uint32_t i = 0; i < m->clocks.len; i++) {
        m->clocks.data[i].period = fold(m, m->clocks.data[i].period);
        m->clocks.data[i].offset = fold(m, m->clocks.data[i].offset);
    }
}

/* ---------- dump ---------- */

/* `2*i1 - i2 + 1` */
static void print_affine(FILE *out, const ExprAffine *a) {
    bool any = false;
    for (uint32_t k = 1; k <= EXPR_MAXIDX; k++) {
        int64_t c = a->c[k];
        if (!c) continue;
        if (any) fputs(c < 0 ? " - " : " + ", out);
        else if (c < 0) fputc('-', out);
        if (c != 1 && c != -1) fprintf(out, "%lld*", (long long)(c < 0 ? -c : c));
        fprintf(out, "i%u", k);
        any = true;
    }
    if (a->c[0] || !any)
        fprintf(out, any ? (a->c[0] < 0 ? " - %lld" : " + %lld") : "%lld",
                (long long)(any && a->c[0] < 0 ? -a->c[0] : a->c[0]));
}

/* flat offset o (affine over the box dom, from the array's first element)
 * as one 1-based subscript per dimension: each loop index's coefficient goes
 * to the dimension whose stride it is a multiple of, the constants follow
 * from the subscripts at the box's first point; false when a subscript
 * leaves its dimension somewhere in the box (the flat form is printed then) */
static bool subscripts_of(const FlatArray *a, const FlatDom *dom, const ExprAffine *o, ExprAffine *sub) {
    int64_t stride[EXPR_MAXIDX], iv[EXPR_MAXIDX] = {0};
    for (int d = a->nd - 1; d >= 0; d--) stride[d] = d == a->nd - 1 ? 1 : stride[d + 1] * a->dims[d + 1];
    memset(sub, 0, sizeof *sub * a->nd);
    for (uint32_t k = 1; k <= EXPR_MAXIDX; k++) {
        int64_t c = o->c[k];
        if (!c) continue;
        uint32_t d = 0;
        while (d + 1 < a->nd && (c % stride[d] != 0)) d++;
        if (c % stride[d]) return false;
        sub[d].c[k] = c / stride[d];
    }
    flat_dom_point(dom, 0, iv);
    int64_t rest = expr_affine_at(o, iv); /* the element at the first point, mixed radix */
    if (rest < 0 || (uint64_t)rest >= a->n) return false;
    for (uint32_t d = 0; d < a->nd; d++) {
        int64_t digit = rest / stride[d];
        rest -= digit * stride[d];
        sub[d].c[0] = digit + 1 - expr_affine_at(&sub[d], iv);
        int64_t lo = sub[d].c[0], hi = sub[d].c[0]; /* its extremes over the box */
        for (uint32_t k = 0; k < dom->nd; k++) {
            int64_t c = sub[d].c[k + 1], first = dom->lo[k], last = dom->lo[k] + (int64_t)dom->n[k] - 1;
            lo += c * (c < 0 ? last : first);
            hi += c * (c < 0 ? first : last);
        }
        if (lo < 1 || hi > (int64_t)a->dims[d]) return false;
    }
    return true;
}

typedef struct { const FlatModel *m; const FlatDom *dom; } Printing;

/* an indexed leaf: `v[i1 + 1]` (its array found at the box's first point),
 * else the flat form `{offset}` */
static void at_name(FILE *out, const Printing *p, const Expr *e) {
    ExprAffine o, sub[EXPR_MAXIDX];
    const FlatArray *a = NULL;
    bool ok = expr_affine_of(e->args[0], &o);
    if (ok && p->dom) {
        int64_t iv[EXPR_MAXIDX];
        flat_dom_point(p->dom, 0, iv);
        a = flat_array_of(p->m, (uint32_t)expr_affine_at(&o, iv));
    }
    if (e->fn == EXPR_DER) fputs("der(", out);
    if (a) o.c[0] -= a->first;
    if (a && subscripts_of(a, p->dom, &o, sub)) {
        fprintf(out, "%s[", a->name);
        for (uint32_t d = 0; d < a->nd; d++) {
            if (d) fputs(", ", out);
            print_affine(out, &sub[d]);
        }
        fputc(']', out);
    } else {
        fputs(a ? a->name : "", out);
        fputc('{', out);
        if (ok) print_affine(out, &o);
        fputc('}', out);
    }
    if (e->fn == EXPR_DER) fputc(')', out);
}

static void leaf_name(void *ud, FILE *out, const Expr *e) {
    const Printing *p = ud;
    const FlatModel *m = p->m;
    if (e->kind == EXPR_AT) {
        at_name(out, p, e);
        return;
    }
    const char *n = e->index < m->vars.len ? m->vars.data[e->index].name : "?";
    if (e->kind == EXPR_DER) fprintf(out, "der(%s)", n);
    else fputs(n, out);
}

void flat_print_expr_in(FILE *out, const FlatModel *m, const FlatDom *dom, const Expr *e) {
    Printing p = {m, dom};
    expr_print(out, e, leaf_name, &p);
}

void flat_print_expr(FILE *out, const FlatModel *m, const Expr *e) { flat_print_expr_in(out, m, NULL, e); }

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
    const FlatVarAttr *a = flat_attr(m, v);
    if (a->guess) {
        fputs(" (guess ", out);
        flat_print_expr(out, m, a->guess);
        fputc(')', out);
    }
    if (!isinf(a->min)) fprintf(out, " (min %s)", dyrt_num(a->min).s);
    if (!isinf(a->max)) fprintf(out, " (max %s)", dyrt_num(a->max).s);
    if (a->state_priority) fprintf(out, " (statePriority %d)", a->state_priority);
    if (v->clock) fprintf(out, " @%s", m->clocks.data[v->clock - 1].name);
    fputc('\n', out);
}

static void dump_eq(FILE *out, const FlatModel *m, const FlatEq *q) {
    uint32_t line = 0, col = 0;
    SrcFile *f = src_get(q->span.file);
    if (f) src_line_col(f, q->span.lo, &line, &col);
    fputs(q->kind == FE_INITIAL ? (q->is_override ? "  initial (override) " : "  initial ") : "  ", out);
    if (q->clock) fprintf(out, "@%s: ", m->clocks.data[q->clock - 1].name);
    for (uint32_t k = 0; q->dom && k < q->dom->nd; k++)
        fprintf(out, "%si%u in %lld:%lld%s", k ? ", " : "for ", k + 1, (long long)q->dom->lo[k],
                (long long)(q->dom->lo[k] + q->dom->n[k] - 1), k + 1 == q->dom->nd ? ": " : "");
    flat_print_expr_in(out, m, q->dom, q->lhs);
    fputs(q->kind == FE_SAMPLE ? " = sample(" : " = ", out);
    flat_print_expr_in(out, m, q->dom, q->rhs);
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
    uint64_t neq = 0;
    uint32_t nunk = 0;
    for (uint32_t i = 0; i < m->vars.len; i++) {
        dump_var(out, m, &m->vars.data[i]);
        nunk += flat_kind_is_unknown(m->vars.data[i].kind);
    }
    fputs("equations\n", out);
    for (uint32_t i = 0; i < m->eqs.len; i++) {
        dump_eq(out, m, &m->eqs.data[i]);
        neq += flat_eq_is_regular(m->eqs.data[i].kind) * flat_eq_count(&m->eqs.data[i]);
    }
    for (uint32_t i = 0; i < m->asserts.len; i++) {
        fputs("  assert(", out);
        flat_print_expr(out, m, m->asserts.data[i].cond);
        fprintf(out, ", \"%s\")\n", m->asserts.data[i].message);
    }
    fprintf(out, "end  # %llu equations, %u unknowns\n", (unsigned long long)neq, nunk);
}
