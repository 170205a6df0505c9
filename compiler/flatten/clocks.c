/*
 * clocks.c -- the clock constructs of the language, translated into flat
 * model terms plus the clock links that clock_infer.c resolves
 * (docs/LANGUAGE.md, "Clocks").
 *
 *   component C@[input clk, output o]   one slot per (instance, parameter)
 *   u = RealInput@[clk]()               every variable of u is on slot clk
 *   sub = UnitDelay@[clk]()             sub's i-th clock parameter = clk
 *   x@clk                               x itself, on slot clk
 *   x@(clk - k)                         the FV_HISTORY variable of x and k
 *   o = periodic_clock(dt [, offset])   defines the output clock o (our
 *   o = zero_crossing_clock(u)          extension: Dyad's clocks are Julia)
 *   y = sample(u [, y0])                FE_SAMPLE (our extension)
 *   hold(u [, y0])                      an FV_HOLD variable (our extension)
 *   SampleTime()                        an FV_INTERVAL variable
 *
 * Nothing here decides which variables are clocked: that needs every
 * equation and connection, so clock_infer() does it at the end.  Linear in
 * the relations; a history variable is created once per (variable, k).
 */
#include "clocks.h"
#include "numfmt.h"

#include <string.h>

static ClockState *state(Flattener *F) {
    if (!F->clk) F->clk = ARENA_NEW(F->arena, ClockState);
    return F->clk;
}

static void add_link(Flattener *F, uint32_t a, uint32_t b, Span sp) {
    vec_push(F->arena, &state(F)->links, ((ClockLink){a, b, sp}));
}

static void add_mark(Flattener *F, uint32_t node, ClockMarkKind k, Span sp) {
    vec_push(F->arena, &state(F)->marks, ((ClockMark){node, (uint8_t)k, sp}));
}

/* ---------- clock parameters ---------- */

static bool have_param(AstNode **ps, uint32_t n, Sym name) {
    for (uint32_t i = 0; i < n; i++)
        if (ps[i]->clockparam.name == name) return true;
    return false;
}

typedef Vec(AstNode *) NodeVec;

/* d's clock parameters, then those of its `extends` bases not yet named */
static void collect_params(Flattener *F, Def *d, NodeVec *out, int depth) {
    if (!d || !d->node || depth > 32 || d->node->kind == AST_STRUCT) return;
    if (d->node->kind != AST_COMPONENT && d->node->kind != AST_CONNECTOR) return;
    AstList *cp = &d->node->def.clock_params;
    for (uint32_t i = 0; i < cp->len; i++)
        if (!have_param(out->data, out->len, cp->items[i]->clockparam.name))
            vec_push(F->arena, out, cp->items[i]);
    AstList *ex = &d->node->def.extends;
    for (uint32_t i = 0; i < ex->len; i++)
        collect_params(F, sema_try_lookup(F->prog, d->lib, &ex->items[i]->extends.type->type.name), out,
                       depth + 1);
}

/* the slots of inst (allocated on first use); *n = how many */
static uint32_t inst_slots(Flattener *F, Inst *inst, uint32_t *n) {
    ClockState *cs = state(F);
    uintptr_t have = (uintptr_t)hmap_get(&cs->first_slot, (uint64_t)(uintptr_t)inst);
    uint32_t first = have ? (uint32_t)(have - 1) : cs->slots.len;
    if (!have) {
        NodeVec ps = {0};
        collect_params(F, inst->def, &ps, 0);
        for (uint32_t i = 0; i < ps.len; i++) vec_push(F->arena, &cs->slots, ((ClockSlot){inst, ps.data[i], -1}));
        hmap_put(F->arena, &cs->first_slot, (uint64_t)(uintptr_t)inst, (void *)(uintptr_t)(first + 1));
    }
    *n = 0;
    while (first + *n < cs->slots.len && cs->slots.data[first + *n].inst == inst) (*n)++;
    return first;
}

static int32_t slot_named(Flattener *F, Inst *inst, Sym name) {
    uint32_t n, first = inst_slots(F, inst, &n);
    for (uint32_t i = 0; i < n; i++)
        if (F->clk->slots.data[first + i].param->clockparam.name == name) return (int32_t)(first + i);
    return -1;
}

/* `clk` (a clock parameter of the component) or `sub.clk` (of a subcomponent) */
static int32_t clock_ref(Flattener *F, Tx t, AstNode *e) {
    Inst *owner = t.scope;
    Sym name = NULL;
    if (e->kind == AST_IDENT) {
        name = e->ident.name;
    } else if (e->kind == AST_FIELD) {
        Ref r;
        if (!resolve_ref(F, t, e->field.base, true, &r)) return -1;
        owner = r.inst;
        name = e->field.name;
    }
    int32_t s = owner && name ? slot_named(F, owner, name) : -1;
    if (s < 0) {
        if (name && owner) diag_error(e->span, "`%s` is not a clock parameter of `%s`", name, owner->def->name);
        else diag_error(e->span, "a clock is named by a clock parameter, e.g. `clk` of `@[input clk]`");
    }
    return s;
}

/* ---------- helper variables ---------- */

static uint32_t helper_var(Flattener *F, Inst *owner, const char *name, FlatVarKind kind, Span sp) {
    Elem *e = ARENA_NEW(F->arena, Elem);
    e->kind = ELEM_VAR;
    e->name = name;
    e->owner = owner;
    e->vkind = VAR_VARIABLE;
    e->n = 1;
    e->var = F->m->vars.len;
    FlatVar fv = {0};
    fv.name = name;
    fv.kind = kind;
    fv.span = sp;
    vec_push(F->keep, &F->m->vars, fv);
    vec_push(F->arena, &F->var_elems, e);
    vec_push(F->arena, &F->var_elem_off, 0);
    return e->var;
}

uint32_t clock_new_var(Flattener *F, uint32_t like, const char *name, FlatVarKind kind, Span at) {
    return helper_var(F, F->var_elems.data[like]->owner, name, kind, at);
}

uint32_t clock_history_var(Flattener *F, uint32_t v, uint32_t lag, Span at) {
    ClockState *cs = state(F);
    uint64_t key = ((uint64_t)v << 20) | lag;
    uintptr_t have = (uintptr_t)hmap_get(&cs->history, key);
    if (have) return (uint32_t)(have - 1);
    const char *name = arena_printf(F->keep, "%s@(clk-%u)", F->m->vars.data[v].name, lag);
    uint32_t h = helper_var(F, F->var_elems.data[v]->owner, name, FV_HISTORY, at);
    FlatVarAttr *ha = flat_attr_set(F->m, h);
    ha->of = v;
    ha->lag = lag;
    F->m->vars.data[h].units = F->m->vars.data[v].units;
    hmap_put(F->arena, &cs->history, key, (void *)(uintptr_t)(h + 1));
    add_link(F, CLK_NODE_VAR(h), CLK_NODE_VAR(v), at);
    return h;
}

/* ---------- x@clk, x@(clk - k) ---------- */

typedef struct { Flattener *F; uint32_t lag; int32_t slot; Span at; } AtCtx;

static Expr *at_leaf(void *ud, Expr *leaf) {
    AtCtx *a = ud;
    Flattener *F = a->F;
    if (leaf->kind != EXPR_VAR) return leaf;
    FlatVar *fv = &F->m->vars.data[leaf->index];
    if (fv->kind == FV_HISTORY) /* (x@(clk-1))@(clk-1) */
        return a->lag ? var_leaf(F, clock_history_var(F, flat_attr(F->m, fv)->of, flat_attr(F->m, fv)->lag + a->lag, a->at))
                      : leaf;
    if (fv->kind != FV_VARIABLE) return leaf; /* parameters have no clock */
    add_link(F, CLK_NODE_VAR(leaf->index), CLK_NODE_SLOT((uint32_t)a->slot), a->at);
    return a->lag ? var_leaf(F, clock_history_var(F, leaf->index, a->lag, a->at)) : leaf;
}

static bool has_der_leaf(Flattener *F, Expr *x) {
    ExprVec d = {0};
    expr_leaves(F->ctx, x, EXPR_DER, &d);
    return d.len > 0;
}

/* the clock part of `x@clk` / `x@(clk - k)`: the slot and k */
static bool at_clock(Flattener *F, Tx t, AstNode *ck, int32_t *slot, int64_t *lag) {
    *lag = 0;
    if (ck->kind == AST_BINARY && (ck->binary.op == OP_SUB || ck->binary.op == OP_ADD)) {
        if (ck->binary.op == OP_ADD || !const_int(F, t, ck->binary.rhs, lag)) {
            if (ck->binary.op == OP_ADD)
                diag_error(ck->span, "only previous ticks can be referred to: write `x@(clk - k)` with k >= 1");
            return false;
        }
        if (*lag < 0 || *lag > 1000000) {
            diag_error(ck->binary.rhs->span, "k in `x@(clk - k)` must be at least 0 (and at most 10^6), not %lld",
                       (long long)*lag);
            return false;
        }
        ck = ck->binary.lhs;
    }
    *slot = clock_ref(F, t, ck);
    return *slot >= 0;
}

bool tr_at(Flattener *F, Tx t, AstNode *e, Val *out) {
    if (F->tmpl) { /* it creates variables */
        tmpl_refuse(F, e->span, "a clocked value");
        return false;
    }
    if (t.structural) {
        diag_error(e->span, "a clocked value is not known when the model is compiled");
        return false;
    }
    int32_t slot;
    int64_t lag;
    Val v;
    if (!t.scope) {
        diag_error(e->span, "a function has no clocks: pass the clocked values (`x@(clk - 1)`) as arguments");
        return false;
    }
    if (!at_clock(F, t, e->at.clock, &slot, &lag) || !tr_val(F, t, e->at.expr, &v)) return false;
    if (v.str) {
        diag_error(e->span, "a string has no clock");
        return false;
    }
    AtCtx a = {F, (uint32_t)lag, slot, e->span};
    *out = v.nd ? val_new(F, v.nd, v.dims) : val_scalar(NULL);
    for (uint32_t i = 0; i < v.n; i++) {
        Expr *x = val_at(&v, i);
        if (has_der_leaf(F, x)) {
            diag_error(e->span, "der() has no value on a clock: a clocked variable changes only at ticks");
            return false;
        }
        x = expr_subst(F->ctx, x, at_leaf, &a);
        if (out->el) out->el[i] = x;
        else out->s = x;
    }
    return true;
}

/* ---------- builtins ---------- */

static bool param_only(Flattener *F, Expr *x, AstNode *at, const char *what) {
    ExprVec v = {0};
    expr_leaves(F->ctx, x, EXPR_VAR, &v);
    expr_leaves(F->ctx, x, EXPR_DER, &v);
    expr_leaves(F->ctx, x, EXPR_TIME, &v);
    for (uint32_t i = 0; i < v.len; i++) {
        if (v.data[i]->kind == EXPR_VAR) {
            FlatVarKind k = F->m->vars.data[v.data[i]->index].kind;
            if (k == FV_PARAMETER || k == FV_CONSTANT || k == FV_PARAM_MISSING) continue;
        }
        diag_error(at->span, "%s must be given by parameters (it is fixed before the simulation starts)", what);
        return false;
    }
    return true;
}

static Expr *arg_expr(Flattener *F, Tx t, AstNode *call, uint32_t k) {
    return k < call->call.args.len ? tr_known(F, tr_expr(F, t, call->call.args.items[k]->arg.value)) : NULL;
}

static bool nargs_ok(AstNode *call, const char *name, uint32_t lo, uint32_t hi) {
    uint32_t n = call->call.args.len;
    if (n >= lo && n <= hi) return true;
    if (lo == hi) diag_error(call->span, "%s() takes %u argument%s", name, lo, lo == 1 ? "" : "s");
    else diag_error(call->span, "%s() takes %u or %u arguments", name, lo, hi);
    return false;
}

/* hold(u [, y0]): the value of the clocked variable u since its last tick */
static bool tr_hold(Flattener *F, Tx t, AstNode *call, Val *out) {
    if (!nargs_ok(call, "hold", 1, 2)) return false;
    Val u;
    if (!tr_val(F, t, call->call.args.items[0]->arg.value, &u) || u.str) return false;
    Expr *y0 = call->call.args.len > 1 ? arg_expr(F, t, call, 1) : expr_const(F->ctx, 0);
    if (!y0 || !param_only(F, y0, call, "the value of hold() before the first tick")) return false;
    *out = u.nd ? val_new(F, u.nd, u.dims) : val_scalar(NULL);
    for (uint32_t i = 0; i < u.n; i++) {
        Expr *x = val_at(&u, i);
        if (x->kind != EXPR_VAR || F->m->vars.data[x->index].kind != FV_VARIABLE) {
            diag_error(call->call.args.items[0]->span, "hold() takes a variable, e.g. `hold(u)`");
            return false;
        }
        const char *name = arena_printf(F->keep, "hold(%s)", F->m->vars.data[x->index].name);
        uint32_t h = helper_var(F, t.scope ? t.scope : F->top, name, FV_HOLD, call->span);
        flat_attr_set(F->m, h)->of = x->index;
        F->m->vars.data[h].value = y0;
        F->m->vars.data[h].units = F->m->vars.data[x->index].units;
        add_mark(F, CLK_NODE_VAR(x->index), CM_CLOCKED, call->span);
        Expr *leaf = var_leaf(F, h);
        if (out->el) out->el[i] = leaf;
        else out->s = leaf;
    }
    return true;
}

/* SampleTime(): the interval since the previous tick of the equation's clock */
static bool tr_sample_time(Flattener *F, Tx t, AstNode *call, Val *out) {
    if (!nargs_ok(call, "SampleTime", 0, 0)) return false;
    Inst *scope = t.scope;
    if (t.structural || !scope) {
        diag_error(call->span, "SampleTime() is the interval of a clock: it is known at its ticks only");
        return false;
    }
    const char *name = arena_printf(F->keep, "%s%sSampleTime()", scope->path, scope->path[0] ? "." : "");
    uint32_t h = helper_var(F, scope, name, FV_INTERVAL, call->span);
    F->m->vars.data[h].units = "s";
    add_mark(F, CLK_NODE_VAR(h), CM_CLOCKED, call->span);
    *out = val_scalar(var_leaf(F, h));
    return true;
}

bool tr_clock_builtin(Flattener *F, Tx t, AstNode *call, Sym name, Val *out, bool *handled) {
    *handled = true;
    if (F->tmpl && (!strcmp(name, "hold") || !strcmp(name, "SampleTime"))) { /* they create variables */
        tmpl_refuse(F, call->span, "a clock operator");
        return false;
    }
    if (!strcmp(name, "hold")) return tr_hold(F, t, call, out);
    if (!strcmp(name, "SampleTime")) return tr_sample_time(F, t, call, out);
    if (!strcmp(name, "sample")) {
        diag_error(call->span, "sample() is a whole relation: `y = sample(u)` with `y` a variable");
        return false;
    }
    if (!strcmp(name, "periodic_clock") || !strcmp(name, "zero_crossing_clock")) {
        diag_error(call->span, "%s() defines a clock: write `clk = %s(...)` in a component declared with "
                               "`@[output clk]`", name, name);
        return false;
    }
    *handled = false;
    return false;
}

/* ---------- relations: clock definitions and samplers ---------- */

static bool is_call_to(AstNode *e, const char *name) {
    return e && e->kind == AST_CALL && e->call.callee->kind == AST_IDENT && !strcmp(e->call.callee->ident.name, name);
}

static bool define_periodic(Flattener *F, Tx t, AstNode *call, FlatClock *c) {
    if (!nargs_ok(call, "periodic_clock", 1, 2)) return false;
    c->kind = FCLK_PERIODIC;
    c->period = arg_expr(F, t, call, 0);
    c->offset = call->call.args.len > 1 ? arg_expr(F, t, call, 1) : expr_const(F->ctx, 0);
    if (!c->period || !c->offset || !param_only(F, c->period, call, "the period of a clock") ||
        !param_only(F, c->offset, call, "the offset of a clock"))
        return false;
    if (expr_is_const(c->period) && !(c->period->value > 0)) {
        diag_error(call->call.args.items[0]->span, "the period of a clock must be positive, not %s",
                   dyrt_num(c->period->value).s);
        return false;
    }
    if (expr_is_const(c->offset) && !(c->offset->value >= 0)) {
        diag_error(call->call.args.items[1]->span, "the offset of a clock cannot be negative (%s)",
                   dyrt_num(c->offset->value).s);
        return false;
    }
    return true;
}

static bool define_zero_crossing(Flattener *F, Tx t, AstNode *call, FlatClock *c) {
    if (!nargs_ok(call, "zero_crossing_clock", 1, 1)) return false;
    c->kind = FCLK_ZERO_CROSSING;
    c->signal = arg_expr(F, t, call, 0);
    if (!c->signal) return false;
    ExprVec v = {0};
    expr_leaves(F->ctx, c->signal, EXPR_VAR, &v);
    for (uint32_t i = 0; i < v.len; i++)
        if (F->m->vars.data[v.data[i]->index].kind == FV_VARIABLE)
            add_mark(F, CLK_NODE_VAR(v.data[i]->index), CM_CONTINUOUS, call->span);
    return true;
}

/* `o = periodic_clock(...)` / `o = zero_crossing_clock(...)` */
static void define_clock(Flattener *F, Tx t, AstNode *r, int32_t s) {
    Inst *inst = t.scope;
    ClockState *cs = F->clk;
    AstNode *param = cs->slots.data[s].param, *rhs = r->eq.rhs;
    if (r->eq.kind != EQ_NORMAL || !param->clockparam.is_output) {
        diag_error(r->span, "`%s` is %s: a clock is defined by `%s = periodic_clock(dt)` for an output clock "
                            "parameter", param->clockparam.name,
                   param->clockparam.is_output ? "a clock parameter" : "an input clock (given from outside)",
                   param->clockparam.name);
        return;
    }
    if (cs->slots.data[s].def != -1) {
        diag_error(r->span, "clock `%s` is defined twice", param->clockparam.name);
        return;
    }
    FlatClock c = {0};
    c.name = arena_printf(F->keep, "%s%s%s", inst->path, inst->path[0] ? "." : "", param->clockparam.name);
    c.span = r->span;
    bool ok = false;
    if (is_call_to(rhs, "periodic_clock")) ok = define_periodic(F, t, rhs, &c);
    else if (is_call_to(rhs, "zero_crossing_clock")) ok = define_zero_crossing(F, t, rhs, &c);
    else diag_error(rhs->span, "a clock is defined by periodic_clock(dt [, offset]) or zero_crossing_clock(u)");
    if (!ok) {
        cs->slots.data[s].def = CLOCK_DEF_FAILED; /* reported: no "never defined" after it */
        return;
    }
    cs->slots.data[s].def = (int32_t)cs->defs.len;
    vec_push(F->arena, &cs->defs, c);
}

/* `y = sample(u [, y0])`: y on the clock of its context reads u at each tick */
static void tr_sample(Flattener *F, Tx t, AstNode *r) {
    Inst *inst = t.scope;
    AstNode *call = r->eq.rhs;
    if (r->eq.kind != EQ_NORMAL) {
        diag_error(r->span, "sample() belongs in a regular equation `y = sample(u)`");
        return;
    }
    if (!nargs_ok(call, "sample", 1, 2)) return;
    Val y, u;
    if (!tr_val(F, t, r->eq.lhs, &y) || !tr_val(F, t, call->call.args.items[0]->arg.value, &u)) return;
    Expr *y0 = call->call.args.len > 1 ? arg_expr(F, t, call, 1) : NULL;
    if ((call->call.args.len > 1 && !y0) || (y0 && !param_only(F, y0, call, "the value of sample() before the first tick")))
        return;
    if (y.str || u.str || y.n != u.n) {
        diag_error(r->span, "the two sides of `y = sample(u)` must have the same size");
        return;
    }
    for (uint32_t i = 0; i < y.n; i++) {
        Expr *yl = val_at(&y, i), *ue = val_at(&u, i);
        if (yl->kind != EXPR_VAR || F->m->vars.data[yl->index].kind != FV_VARIABLE) {
            diag_error(r->eq.lhs->span, "the left side of `y = sample(u)` must be a variable");
            return;
        }
        if (y0) F->m->vars.data[yl->index].value = y0;
        vec_push(F->keep, &F->m->eqs, ((FlatEq){.kind = FE_SAMPLE, .lhs = yl, .rhs = ue, .origin = inst->path, .span = r->span}));
        add_mark(F, CLK_NODE_VAR(yl->index), CM_CLOCKED, r->span);
        ExprVec v = {0};
        expr_leaves(F->ctx, ue, EXPR_VAR, &v);
        for (uint32_t k = 0; k < v.len; k++)
            if (F->m->vars.data[v.data[k]->index].kind == FV_VARIABLE)
                add_mark(F, CLK_NODE_VAR(v.data[k]->index), CM_CONTINUOUS, r->span);
    }
}

bool clock_relation(Flattener *F, Inst *inst, Env *env, AstNode *r) {
    if (r->kind != AST_EQUATION || r->eq.kind == EQ_GUESS) return false;
    Tx t = tx_in(inst, env);
    if (is_call_to(r->eq.rhs, "sample")) {
        tr_sample(F, t, r);
        return true;
    }
    AstNode *l = r->eq.lhs;
    if (!l || l->kind != AST_IDENT || inst_elem(inst, l->ident.name)) return false;
    uint32_t n;
    inst_slots(F, inst, &n);
    int32_t s = n ? slot_named(F, inst, l->ident.name) : -1;
    if (s < 0) return false;
    define_clock(F, t, r, s);
    return true;
}

/* ---------- instances: `u = RealInput@[clk]()`, `d = UnitDelay@[clk]()` ---------- */

static AstList *clock_args_of(Elem *e) {
    AstNode *d = e->decl;
    if (!d || d->kind != AST_INSTANCE || !d->inst.value) return NULL;
    AstNode *t = d->inst.value;
    if (t->kind == AST_COMPREHENSION) t = t->compr.body;
    if (t->kind != AST_TYPE || !t->type.clock_args.len) return NULL;
    return &t->type.clock_args;
}

static void bind_child(Flattener *F, Inst *inst, Elem *e, Inst *child, AstList *args) {
    uint32_t n, first = inst_slots(F, child, &n);
    if (n != args->len) {
        diag_error(args->items[0]->span, "`%s` has %u clock parameter%s, but %u clock%s given", e->def->name, n,
                   n == 1 ? "" : "s", args->len, args->len == 1 ? " is" : "s are");
        return;
    }
    for (uint32_t i = 0; i < n; i++) {
        int32_t s = clock_ref(F, tx_in(inst, inst->env), args->items[i]);
        if (s >= 0) add_link(F, CLK_NODE_SLOT(first + i), CLK_NODE_SLOT((uint32_t)s), args->items[i]->span);
    }
}

static void bind_elem(Flattener *F, Inst *inst, Elem *e) {
    AstList *args = clock_args_of(e);
    if (!args) return;
    if (e->kind == ELEM_INST) {
        if (e->child) bind_child(F, inst, e, e->child, args);
        for (uint32_t k = 0; e->children && k < e->n; k++) bind_child(F, inst, e, e->children[k], args);
        return;
    }
    if (args->len != 1) {
        diag_error(args->items[0]->span, "a signal is on one clock: `%s@[clk]()`", e->name);
        return;
    }
    int32_t s = clock_ref(F, tx_in(inst, inst->env), args->items[0]);
    for (uint32_t k = 0; s >= 0 && e->var != NO_VAR && k < e->n; k++)
        add_link(F, CLK_NODE_VAR(e->var + k), CLK_NODE_SLOT((uint32_t)s), args->items[0]->span);
}

static void bind_inst(Flattener *F, Inst *inst) {
    for (uint32_t i = 0; i < inst->elems.len; i++) {
        Elem *e = inst->elems.data[i];
        if (e->absent) continue;
        bind_elem(F, inst, e);
        if (e->child) bind_inst(F, e->child);
        for (uint32_t k = 0; e->children && k < e->n; k++) bind_inst(F, e->children[k]);
    }
}

void clock_bind_instances(Flattener *F, Inst *top) {
    if (top) bind_inst(F, top);
}
