/*
 * equations.c -- from the instance tree to flat equations: parameter values
 * and attributes (element-wise for arrays), declaration equations and
 * initial values, and relations.
 *
 * Relations are walked once, expanding the structural forms -- `for`
 * (ranges and array literals, nested), `if`/`elseif`/`else` on structural
 * conditions, `switch` on enum values -- and translating every relation,
 * except those that use instream()/actualstream(): they need the complete
 * connection sets, so they are deferred with their loop environment and
 * translated afterwards (flatten_deferred).  Array equations
 * give one scalar equation per element.  A `for` over variable arrays
 * with affine subscripts gives templates instead (try_template below).  Relations and bindings are the
 * only contexts that may create flat variables: der(der(x)) gets the
 * helper x' (der_helper, handed to translation in the context).  Linear in
 * the expanded relations.
 */
#include "flatten_internal.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static bool is_param_kind(FlatVarKind k) { return k == FV_PARAMETER || k == FV_CONSTANT; }

void add_eq(Flattener *F, FlatEqKind k, Expr *l, Expr *r, const char *origin, Span sp) {
    vec_push(F->keep, &F->m->eqs, ((FlatEq){.kind = k, .dom = F->tmpl, .lhs = l, .rhs = r, .origin = origin, .span = sp,
                                             .rooted = F->rooted}));
}

/* der(der(x)): the inner derivative becomes a helper variable `x'` with
 * the equation x' = der(x) (one more unknown, one more equation), so the
 * outer der() differentiates an ordinary variable.  One helper per x. */
static uint32_t der_helper(Flattener *F, uint32_t v, Span at) {
    if (F->tmpl) { /* a new variable per instance: the ordinary way */
        tmpl_refuse(F, at, "der(der(x)) in a template");
        return v;
    }
    uintptr_t have = (uintptr_t)hmap_get(&F->aux_der, (uint64_t)v + 1);
    if (have) return (uint32_t)(have - 1);
    Elem *src = F->var_elems.data[v];
    Elem *e = ARENA_NEW(F->arena, Elem);
    *e = *src;
    e->name = arena_printf(F->arena, "%s'", src->name);
    e->vkind = VAR_VARIABLE;
    e->nd = 0;
    e->n = 1;
    e->var = F->m->vars.len;
    FlatVar fv = {0};
    fv.name = arena_printf(F->keep, "%s'", F->m->vars.data[v].name); /* never a Dyad name */
    fv.span = at;
    vec_push(F->keep, &F->m->vars, fv);
    vec_push(F->arena, &F->var_elems, e);
    vec_push(F->arena, &F->var_elem_off, 0);
    uint32_t rooted = F->rooted; /* x' = der(x) holds in either branch of `if rooted()` */
    F->rooted = 0;
    add_eq(F, FE_NORMAL, var_leaf(F, e->var), expr_leaf(F->ctx, EXPR_DER, v), src->owner->path, at);
    F->rooted = rooted;
    hmap_put(F->arena, &F->aux_der, (uint64_t)v + 1, (void *)(uintptr_t)(e->var + 1));
    return e->var;
}

/* the context of a relation or a binding: der(der(x)) allowed */
static Tx tx_rel(Inst *scope, Env *env) {
    Tx t = tx_in(scope, env);
    t.der_helper = der_helper;
    return t;
}

/* ---------- values and attributes ---------- */

static const char *str_value(AstNode *e) {
    return e && e->kind == AST_STR ? e->str.value : NULL;
}

static bool is_attr(const char *n, const char *a) { return strcmp(n, a) == 0; }

/* an attribute's value: `guess` may depend on parameters; min, max and
 * statePriority are constants, so parameters fold to their values there */
static bool attr_val(Flattener *F, AstNode *mod, Inst *scope, Env *env, Val *out) {
    Tx t = tx_rel(scope, env);
    bool ok = is_attr(mod->mod.name, "guess") ? tr_val(F, t, mod->mod.value, out) : const_val(F, t, mod->mod.value, out);
    if (!ok || !val_present(out, mod)) return false;
    if (out->str) {
        diag_error(mod->span, "`%s` needs a number", mod->mod.name);
        return false;
    }
    return true;
}

/* elements [lo, hi) of el */
static void set_num_attr(Flattener *F, Elem *el, AstNode *mod, const char *n, Val *v, uint32_t lo, uint32_t hi) {
    for (uint32_t i = lo; i < hi; i++) {
        Expr *x = val_at(v, v->nd ? i - lo : 0);
        if (is_attr(n, "guess")) {
            flat_attr_set(F->m, el->var + i)->guess = x;
            continue;
        }
        if (!expr_is_const(x)) {
            diag_error(mod->span, "`%s` must be a constant", n);
            return;
        }
        if (is_attr(n, "min")) flat_attr_set(F->m, el->var + i)->min = x->value;
        else if (is_attr(n, "max")) flat_attr_set(F->m, el->var + i)->max = x->value;
        else if (is_attr(n, "statePriority")) flat_attr_set(F->m, el->var + i)->state_priority = (int)x->value;
    }
}

static void set_attr(Flattener *F, Elem *el, AstNode *mod, Inst *scope, Env *env, uint32_t lo, uint32_t hi) {
    const char *n = mod->mod.name;
    AstNode *val = mod->mod.value;
    if (!val && !mod->mod.has_initial) return;
    if (is_attr(n, "units") || is_attr(n, "displayUnits") || is_attr(n, "quantity")) {
        const char *units = str_value(val);
        if (!units) diag_error(mod->span, "`%s` must be a string", n);
        else if (n[0] == 'u') {
            units = intern_cstr(F->prog->in, units);   /* the FlatModel points to no AST */
            for (uint32_t i = lo; i < hi; i++) F->m->vars.data[el->var + i].units = units;
        }
        return;
    }
    if (is_attr(n, "initial")) {
        if (hi - lo != el->n) diag_error(mod->span, "`initial` cannot be given per element here; write "
                                                    "`initial` relations in a `for` loop instead");
        else el->initial = (Binding){val, scope, env, false};
        return;
    }
    if (is_attr(n, "minInclusive") || is_attr(n, "maxInclusive") || is_attr(n, "nominal")) return;
    if (!is_attr(n, "guess") && !is_attr(n, "min") && !is_attr(n, "max") && !is_attr(n, "statePriority")) {
        diag_error(mod->span, "unknown attribute `%s` (expected units, guess, min, max, nominal, "
                              "statePriority, initial)", n);
        return;
    }
    Val v;
    if (attr_val(F, mod, scope, env, &v)) {
        if (v.nd && v.n != hi - lo) diag_error(mod->span, "`%s` needs one value per element", n);
        else set_num_attr(F, el, mod, n, &v, lo, hi);
    }
}

/* attributes from the type alias chain, base first (derived ones win) */
static void type_attrs(Flattener *F, Elem *el, AstNode *type, Library *lib, int depth) {
    if (!type || type->kind != AST_TYPE || depth > 32) return;
    Def *d = sema_try_lookup(F->prog, lib, &type->type.name);
    if (d && d->node->kind == AST_TYPEDEF) type_attrs(F, el, d->node->typedef_.type, d->lib, depth + 1);
    else if (!d && type->type.name.len == 1) {
        Sym n = type->type.name.parts[0];
        if (n != F->s_Real && n != F->s_Integer && n != F->s_Boolean && n != F->s_String)
            sema_lookup(F->prog, lib, &type->type.name); /* reports unknown type */
    }
    if (depth > 0)
        for (uint32_t i = 0; i < type->type.mods.len; i++) set_attr(F, el, type->type.mods.items[i], NULL, NULL, 0, el->n);
}

/* the value of an element declared Integer: exact Integer arithmetic on its
 * literals, and a constant must be a whole number (ints.c) */
static bool integer_binding(Flattener *F, Elem *el, Binding *b, Val *out) {
    Tx t = tx_rel(b->scope, b->env);
    t.int_literals = true;
    if (!tr_val(F, t, b->expr, out) || !val_present(out, b->expr)) return false;
    for (uint32_t i = 0; i < out->n && !out->iv && !out->str; i++)
        if (!expr_is_const(val_at(out, i))) return true; /* computed at run time, in Reals */
    return val_to_int(F, out, b->expr, arena_printf(F->arena, "`%s` is an Integer", el->name));
}

static bool binding_val(Flattener *F, Elem *el, Binding *b, Val *out) {
    if (elem_is_integer(F, el) ? !integer_binding(F, el, b, out)
                               : !tr_val(F, tx_rel(b->scope, b->env), b->expr, out) || !val_present(out, b->expr))
        return false;
    if (out->str) {
        diag_error(b->expr->span, "`%s` needs a number, not a string", el->name);
        return false;
    }
    if (out->n != el->n || (out->nd && out->nd != el->nd)) {
        diag_error(b->expr->span, "`%s` has %u element%s but its value has %u", el->name, el->n,
                   el->n == 1 ? "" : "s", out->n);
        return false;
    }
    return true;
}

static void equate(Flattener *F, FlatEqKind k, Elem *el, Val *v, Span sp) {
    for (uint32_t i = 0; i < el->n; i++)
        add_eq(F, k, var_leaf(F, el->var + i), val_at(v, i), el->owner->path, sp);
}

/* a parameter's value may use parameters only (not variables or time) */
static bool param_value_ok(Flattener *F, Elem *el, Expr *x, AstNode *at) {
    if (expr_is_const(x)) return true;
    ExprVec v = {0};
    expr_leaves(F->ctx, x, EXPR_VAR, &v);
    for (uint32_t i = 0; i < v.len; i++) {
        FlatVar *u = &F->m->vars.data[v.data[i]->index];
        if (u->kind == FV_VARIABLE) {
            diag_error(at->span, "the value of parameter `%s` uses the variable `%s`; a parameter's value may "
                                 "only use parameters", el->name, u->name);
            return false;
        }
    }
    ExprVec d = {0};
    expr_leaves(F->ctx, x, EXPR_DER, &d);
    expr_leaves(F->ctx, x, EXPR_TIME, &d);
    if (d.len) {
        diag_error(at->span, "the value of parameter `%s` changes with time; a parameter's value may only use "
                             "parameters", el->name);
        return false;
    }
    return true;
}

static void var_binding(Flattener *F, Elem *el) {
    FlatVar *v = &F->m->vars.data[el->var];
    AstNode *val = el->value.expr;
    Val x;
    if (val && val->kind == AST_MISSING) {
        for (uint32_t i = 0; i < el->n && v->kind == FV_PARAMETER; i++)
            F->m->vars.data[el->var + i].kind = FV_PARAM_MISSING;
        if (v->kind == FV_CONSTANT && !el->is_structural) diag_error(val->span, "a constant cannot be `missing`");
    } else if (val && v->kind == FV_CONSTANT) {
        if (elem_const(F, el, &x) && !x.missing)
            for (uint32_t i = 0; i < el->n; i++) F->m->vars.data[el->var + i].value = val_at(&x, i);
    } else if (val && binding_val(F, el, &el->value, &x)) {
        if (is_param_kind(v->kind)) {
            for (uint32_t i = 0; i < el->n; i++)
                if (param_value_ok(F, el, val_at(&x, i), val)) F->m->vars.data[el->var + i].value = val_at(&x, i);
                else break;
        }
        else equate(F, FE_NORMAL, el, &x, val->span);
    } /* a parameter without a value stays free: -p gives it at run time (params.c) */
    AstNode *init = el->initial.expr;
    if (init && init->kind != AST_MISSING && binding_val(F, el, &el->initial, &x))
        equate(F, FE_INITIAL, el, &x, init->span);
}

void flatten_bindings(Flattener *F) {
    for (uint32_t i = 0; i < F->var_elems.len; i++) {
        if (F->var_elem_off.data[i] != 0) continue;
        Elem *el = F->var_elems.data[i];
        type_attrs(F, el, el->type, el->type_lib, 0);
        for (uint32_t k = 0; k < el->attrs.len; k++)
            set_attr(F, el, el->attrs.data[k].mod, el->attrs.data[k].scope, el->attrs.data[k].env, 0, el->n);
        for (uint32_t k = 0; k < el->elem_attrs.len && el->elem_env; k++)
            for (uint32_t i = 0; i < el->n; i++)
                set_attr(F, el, el->elem_attrs.data[k].mod, el->elem_attrs.data[k].scope, el->elem_env[i], i, i + 1);
        for (uint32_t k = 0; k < el->n; k++) F->m->vars.data[el->var + k].is_final = el->value.is_final;
        var_binding(F, el);
    }
}

/* ---------- deferred relations ---------- */

static const char *shape_of(Flattener *F, Val *v) {
    return v->nd ? arena_printf(F->arena, "%u element%s", v->n, v->n == 1 ? "" : "s") : "a scalar";
}

/* an input written as one side of an equation outside its owner is given
 * (x[i] of a template: in every instance) */
static void mark_defined(Flattener *F, Inst *inst, Expr *x) {
    if (x->kind != EXPR_VAR && !(x->kind == EXPR_AT && x->fn == EXPR_VAR)) return;
    uint64_t n = x->kind == EXPR_AT ? F->tmpl->count : 1;
    int64_t iv[EXPR_MAXIDX] = {0};
    for (uint64_t p = 0; p < n; p++) {
        if (x->kind == EXPR_AT) flat_dom_point(F->tmpl, p, iv);
        uint32_t i = flat_leaf_var(x, iv);
        FlatVar *v = &F->m->vars.data[i];
        if (v->conn == FC_INPUT && F->var_elems.data[i]->owner != inst) F->cs.var_defined[i] = 1;
    }
}

static void tr_guess(Flattener *F, AstNode *r, Val *l, Val *rhs) {
    for (uint32_t i = 0; i < l->n; i++) {
        Expr *x = val_at(l, i);
        if (x->kind != EXPR_VAR) {
            diag_error(r->eq.lhs->span, "the left side of `guess` must be a variable");
            return;
        }
        flat_attr_set(F->m, x->index)->guess = val_at(rhs, rhs->nd ? i : 0);
    }
}

static void tr_equation(Flattener *F, Inst *inst, Env *env, AstNode *r) {
    Val l, rhs;
    Tx t = tx_rel(inst, env);
    if (!tr_val(F, t, r->eq.lhs, &l) || !tr_val(F, t, r->eq.rhs, &rhs)) return;
    if (!val_present(&l, r->eq.lhs) || !val_present(&rhs, r->eq.rhs)) return;
    if (l.sd && rhs.sd && l.sd != rhs.sd) {
        diag_error(r->span, "the two sides are different structs: `%s` and `%s`", l.sd->name, rhs.sd->name);
        return;
    }
    if (l.str || rhs.str) {
        diag_error(r->span, "an equation relates numbers, not strings");
        return;
    }
    if (l.n != rhs.n || (l.nd && rhs.nd && l.nd != rhs.nd)) {
        if (!(r->eq.kind == EQ_GUESS && rhs.nd == 0)) {
            diag_error(r->span, "the two sides have different sizes: %s and %s", shape_of(F, &l), shape_of(F, &rhs));
            return;
        }
    }
    if (r->eq.kind == EQ_GUESS) {
        tr_guess(F, r, &l, &rhs);
        return;
    }
    for (uint32_t i = 0; i < l.n; i++) {
        Expr *a = val_at(&l, i), *b = val_at(&rhs, i);
        mark_defined(F, inst, a);
        mark_defined(F, inst, b);
        add_eq(F, r->eq.kind == EQ_INITIAL ? FE_INITIAL : FE_NORMAL, a, b, inst->path, r->span);
    }
}

static void tr_assert(Flattener *F, Inst *inst, Env *env, AstNode *r) {
    if (!r->assert_.cond) return; /* a syntax error, already reported */
    Expr *c = tr_expr(F, tx_rel(inst, env), r->assert_.cond);
    AstNode *msg = r->assert_.message;
    const char *text = msg && msg->kind == AST_STR ? intern_cstr(F->prog->in, msg->str.value) : "assertion failed";
    if (c) vec_push(F->keep, &F->m->asserts, ((FlatAssert){c, text, r->span}));
}

static bool uses_instream(AstNode *e) {
    if (!e) return false;
    switch (e->kind) {
    case AST_EQUATION: return uses_instream(e->eq.lhs) || uses_instream(e->eq.rhs);
    case AST_ASSERT: return uses_instream(e->assert_.cond);
    case AST_CALL: {
        AstNode *c = e->call.callee;
        if (c->kind == AST_IDENT && (!strcmp(c->ident.name, "instream") || !strcmp(c->ident.name, "actualstream")))
            return true;
        for (uint32_t i = 0; i < e->call.args.len; i++)
            if (uses_instream(e->call.args.items[i]->arg.value)) return true;
        return false;
    }
    case AST_UNARY: return uses_instream(e->unary.lhs);
    case AST_BINARY: return uses_instream(e->binary.lhs) || uses_instream(e->binary.rhs);
    case AST_IFEXPR:
        return uses_instream(e->ifexpr.cond) || uses_instream(e->ifexpr.then) || uses_instream(e->ifexpr.else_);
    case AST_ARRAY:
        for (uint32_t i = 0; i < e->array.elems.len; i++)
            if (uses_instream(e->array.elems.items[i])) return true;
        return false;
    case AST_COMPREHENSION: return uses_instream(e->compr.body);
    default: return false; /* names, literals: instream() cannot hide in them */
    }
}

static void translate(Flattener *F, Inst *inst, Env *env, AstNode *r) {
    if (clock_relation(F, inst, env, r)) return;
    if (r->kind == AST_EQUATION) tr_equation(F, inst, env, r);
    else tr_assert(F, inst, env, r);
}

void flatten_deferred(Flattener *F) {
    for (uint32_t i = 0; i < F->deferred.len; i++) {
        Deferred *d = &F->deferred.data[i];
        F->rooted = d->rooted;
        translate(F, d->inst, d->env, d->rel);
    }
    F->rooted = 0;
}

/* ---------- structural relations ---------- */

static void walk(Flattener *F, Inst *inst, Env *env, AstList *rels);

/* ---------- `for` equations as templates ----------
 *
 * A `for` (or a nest of them, up to EXPR_MAXIDX indices) over ranges of
 * consecutive integers, whose body holds only equations (and structural
 * `if`/`switch` around them), is translated once with each loop index
 * bound to an affine function of EXPR_IDX(k): subscripts affine in the
 * indices become EXPR_AT leaves (refs.c, tr_template_index), and every
 * equation becomes one template over the box (FlatEq.dom).  The attempt is
 * speculative: anything that needs an index as a number (a non-affine or
 * out-of-range subscript, a slice, a component array, der(der(x)), a
 * parameter folded at compile time) refuses it, the equations written so
 * far are dropped and the loop is flattened the ordinary way, which reports
 * whatever is really wrong.  A condition on the indices splits the box
 * instead (below).  A descending
 * range a:-1:b runs IDX from b to a with the index a + b - IDX, so the
 * instances keep the scalar path's order. */

void tmpl_refuse(Flattener *F, Span at, const char *why) {
    (void)F;
    diag_error(at, "cannot be a template: %s", why); /* inside diag_speculate: never shown */
}

bool tmpl_all_kind(Flattener *F, const Expr *at, FlatVarKind k, bool *none) {
    int64_t iv[EXPR_MAXIDX];
    uint64_t hits = 0;
    for (uint64_t p = 0; p < F->tmpl->count; p++) {
        flat_dom_point(F->tmpl, p, iv);
        hits += F->m->vars.data[flat_leaf_var(at, iv)].kind == k;
    }
    *none = hits == 0;
    return hits == F->tmpl->count;
}

static bool is_call_named(AstNode *e, const char *name) {
    return e && e->kind == AST_CALL && e->call.callee->kind == AST_IDENT && !strcmp(e->call.callee->ident.name, name);
}

/* relations a template body may hold: equations (not guesses, instream or
 * clock definitions) and structural if/switch around them */
static bool tmpl_body_ok(Inst *inst, AstList *rels, int depth) {
    for (uint32_t i = 0; i < rels->len; i++) {
        AstNode *r = rels->items[i];
        switch (r->kind) {
        case AST_EQUATION:
            if (r->eq.kind == EQ_GUESS || uses_instream(r) || is_call_named(r->eq.rhs, "sample")) return false;
            if (r->eq.lhs && r->eq.lhs->kind == AST_IDENT && !inst_elem(inst, r->eq.lhs->ident.name)) return false;
            break;
        case AST_IF:
            for (uint32_t b = 0; b < r->if_.branches.len; b++) {
                AstNode *br = r->if_.branches.items[b];
                if (depth > 8 || is_call_named(br->branch.cond, "rooted") || !tmpl_body_ok(inst, &br->branch.body, depth + 1))
                    return false;
            }
            break;
        case AST_SWITCH:
            for (uint32_t b = 0; b < r->switch_.cases.len; b++)
                if (depth > 8 || !tmpl_body_ok(inst, &r->switch_.cases.items[b]->branch.body, depth + 1)) return false;
            break;
        case AST_ANALYSIS_POINT: case AST_CONTINUITY: break;
        default: return false;
        }
    }
    return true;
}

typedef struct {
    AstNode *iter[EXPR_MAXIDX];
    uint32_t n;
    AstList *body;
} ForNest;

/* `for i in .., j in ..` and `for` directly inside `for`: one nest */
static bool for_nest(AstNode *r, ForNest *f) {
    f->n = 0;
    for (;;) {
        for (uint32_t i = 0; i < r->for_.iters.len; i++) {
            if (f->n == EXPR_MAXIDX) return false;
            f->iter[f->n++] = r->for_.iters.items[i];
        }
        f->body = &r->for_.body;
        if (f->body->len != 1 || f->body->items[0]->kind != AST_FOR) return true;
        r = f->body->items[0];
    }
}

/* a range of consecutive integers (step 1 or -1): lo, n and the direction */
static bool unit_range(const Val *v, int64_t *first, uint32_t *n, int *step) {
    if (v->str || v->nd > 1 || v->n == 0) return false;
    double a = val_at(v, 0)->value;
    *step = v->n > 1 && val_at(v, 1)->value < a ? -1 : 1;
    for (uint32_t i = 0; i < v->n; i++) {
        double x = val_at(v, i)->value;
        if (x != floor(x) || fabs(x) > 1e15 || x != a + (double)*step * i) return false;
    }
    *first = (int64_t)a;
    *n = v->n;
    return true;
}

/* a nest index's range as a unit range; an Integer range `a:b` without
 * building its elements (10^6 constants for a loop of 10^6 iterations) */
static bool nest_range(Flattener *F, Tx t, AstNode *e, int64_t *first, uint32_t *n, int *step) {
    int64_t s;
    int r = tr_int_range(F, t, e, first, &s, n);
    if (r == 1) { /* the checks of unit_range, on the bounds */
        *step = *n > 1 ? (int)s : 1;
        return (*n == 1 || s == 1 || s == -1) && *n > 0 && llabs(*first) <= (int64_t)1e15 &&
               llabs(*first + *step * (int64_t)(*n - 1)) <= (int64_t)1e15;
    }
    Val range;
    return r == -1 && const_val(F, t, e, &range) && unit_range(&range, first, n, step);
}

/* bind the nest's indices (structural ranges, each evaluated with the
 * outer indices bound) and fill the box; false if one is not a unit range */
static bool bind_nest(Flattener *F, Inst *inst, Env **env, ForNest *f, FlatDom *d, uint64_t *work) {
    d->nd = (uint8_t)f->n;
    d->count = 1;
    *work = 0;
    for (uint32_t k = 0; k < EXPR_MAXIDX; k++) d->n[k] = 1;
    for (uint32_t k = 0; k < f->n; k++) {
        int64_t first;
        int step;
        if (!nest_range(F, tx_in(inst, *env), f->iter[k]->iter.range, &first, &d->n[k], &step)) return false;
        d->lo[k] = step > 0 ? first : first - (int64_t)d->n[k] + 1;
        d->count *= d->n[k];
        *work += d->count; /* what the ordinary way charges: every iteration of every level */
        Expr *ix = expr_idx(F->ctx, k);
        if (step < 0) ix = expr_sub(F->ctx, expr_const(F->ctx, (double)(first + d->lo[k])), ix);
        *env = env_push(F, *env, f->iter[k]->iter.name, val_scalar(ix));
    }
    return d->count > 1;
}

/* ---------- conditions on the indices: split boxes ----------
 *
 * A condition that compares an affine function of the loop indices with a
 * constant (`i > 1`, `i < N`, `i == 1`, and/or/not of such) is constant in
 * a box or changes where one index crosses a value.  Where one changes
 * inside the box, the template is refused and the box split there
 * (TmplCuts): each part is translated on its own, every such condition is
 * constant in it and selects its branch as the scalar path does, so a
 * branch that reads out of range elsewhere (`T[i - 1]` under `i > 1`) is
 * translated only where it is in range.  The parts (at most
 * TMPL_MAX_PARTS: a 3-D box's interior, faces, edges and corners) are
 * FlatSplit (flat.h); scalarization walks the whole box in order, so the
 * instances are the scalar path's equations in its order. */

#define TMPL_MAX_CUTS 8   /* values per dimension where an interval starts */
#define TMPL_MAX_PARTS 27 /* 3^3 */

typedef struct TmplCuts {
    uint32_t n[EXPR_MAXIDX];
    int64_t at[EXPR_MAXIDX][TMPL_MAX_CUTS]; /* ascending, inside the box */
    bool added;            /* a cut was added in the current attempt */
    bool overflow;         /* more than TMPL_MAX_CUTS in a dimension */
} TmplCuts;

static void add_cut(TmplCuts *c, uint32_t k, int64_t x) {
    uint32_t i = 0;
    while (i < c->n[k] && c->at[k][i] < x) i++;
    if (i < c->n[k] && c->at[k][i] == x) return;
    if (c->n[k] == TMPL_MAX_CUTS) {
        c->overflow = true;
        return;
    }
    memmove(&c->at[k][i + 1], &c->at[k][i], (c->n[k] - i) * sizeof c->at[k][0]);
    c->at[k][i] = x;
    c->n[k]++;
    c->added = true;
}

static uint32_t cut_parts(const TmplCuts *c) { return (c->n[0] + 1) * (c->n[1] + 1) * (c->n[2] + 1); }

static bool rel_holds(ExprKind k, int64_t d) {
    if (k == EXPR_LT) return d < 0;
    if (k == EXPR_LE) return d <= 0;
    if (k == EXPR_GT) return d > 0;
    if (k == EXPR_GE) return d >= 0;
    if (k == EXPR_EQ) return d == 0;
    return d != 0;
}

/* the first index value in (x0, x1] where `f0 + m x REL 0` differs from its
 * value at x0 (monotone in x: bisection) */
static int64_t first_change(ExprKind k, int64_t f0, int64_t m, int64_t x0, int64_t x1) {
    bool t0 = rel_holds(k, f0 + m * x0);
    while (x1 - x0 > 1) {
        int64_t mid = x0 + (x1 - x0) / 2;
        if (rel_holds(k, f0 + m * mid) == t0) x0 = mid;
        else x1 = mid;
    }
    return x1;
}

/* `a REL b` over the box: 1 or 0 when constant, 2 when it changes along
 * one index (cut there if `cuts`), -1 when it is not affine in the indices
 * or changes along several */
static int atom_over_box(const FlatDom *d, const Expr *c, TmplCuts *cuts) {
    ExprAffine a, b, f;
    if (!expr_affine_of(c->args[0], &a) || !expr_affine_of(c->args[1], &b)) return -1;
    int dim = -1, nvar = 0;
    for (uint32_t j = 0; j <= EXPR_MAXIDX; j++) {
        f.c[j] = a.c[j] - b.c[j];
        if (j && f.c[j]) nvar++, dim = (int)j - 1;
    }
    int64_t lo, hi;
    tmpl_affine_bounds(d, &f, &lo, &hi);
    ExprKind k = c->kind;
    bool eq = k == EXPR_EQ || k == EXPR_NE;
    if (!eq && rel_holds(k, lo) == rel_holds(k, hi)) return rel_holds(k, lo);
    if (eq && (lo == hi || lo > 0 || hi < 0)) return rel_holds(k, lo);
    if (nvar != 1 || dim >= d->nd) return -1;
    int64_t m = f.c[dim + 1], x0 = d->lo[dim], x1 = x0 + (int64_t)d->n[dim] - 1;
    if (!eq) {
        if (cuts) add_cut(cuts, (uint32_t)dim, first_change(k, f.c[0], m, x0, x1));
        return 2;
    }
    if (f.c[0] % m) return k == EXPR_NE; /* never zero at an integer */
    int64_t r = -f.c[0] / m;
    if (cuts && r > x0) add_cut(cuts, (uint32_t)dim, r);
    if (cuts && r < x1) add_cut(cuts, (uint32_t)dim, r + 1);
    return 2;
}

/* c over the box: 1/0 constant, 2 changes along single indices (cut), -1
 * otherwise; *splits: some atom changes along one index */
static int cond_over_box(const FlatDom *d, const Expr *c, TmplCuts *cuts, bool *splits) {
    if (expr_is_const(c)) return c->value != 0;
    if (c->kind == EXPR_NOT) {
        int a = cond_over_box(d, c->args[0], cuts, splits);
        return a == 0 || a == 1 ? !a : a;
    }
    if (c->kind == EXPR_AND || c->kind == EXPR_OR) {
        int decisive = c->kind == EXPR_OR;
        int a = cond_over_box(d, c->args[0], cuts, splits), b = cond_over_box(d, c->args[1], cuts, splits);
        if (a == decisive || b == decisive) return decisive;
        if (a == -1 || b == -1) return -1;
        return a == 2 || b == 2 ? 2 : !decisive;
    }
    if (c->kind < EXPR_LT || c->kind > EXPR_NE) return -1;
    int v = atom_over_box(d, c, cuts);
    *splits |= v == 2;
    return v;
}

int tmpl_cond(Flattener *F, Expr *c, Span at) {
    bool splits = false;
    int v = cond_over_box(F->tmpl, c, NULL, &splits);
    if (v == 0 || v == 1) return v;
    if (!splits || !F->cuts) return -1;
    cond_over_box(F->tmpl, c, F->cuts, &splits);
    tmpl_refuse(F, at, "a condition on a loop index that changes inside the box");
    return -2;
}

/* e reads a loop index of the template being translated */
static bool reads_loop_index(Env *env, AstNode *e) {
    if (!e) return false;
    switch (e->kind) {
    case AST_IDENT: {
        Env *v = env_find(env, e->ident.name);
        return v && !v->val.nd && v->val.s && !expr_is_const(v->val.s);
    }
    case AST_UNARY: return reads_loop_index(env, e->unary.lhs);
    case AST_BINARY: return reads_loop_index(env, e->binary.lhs) || reads_loop_index(env, e->binary.rhs);
    case AST_IFEXPR:
        return reads_loop_index(env, e->ifexpr.cond) || reads_loop_index(env, e->ifexpr.then) ||
               reads_loop_index(env, e->ifexpr.else_);
    case AST_CALL:
        for (uint32_t i = 0; i < e->call.args.len; i++)
            if (reads_loop_index(env, e->call.args.items[i]->arg.value)) return true;
        return false;
    case AST_INDEX:
        for (uint32_t i = 0; i < e->index.subs.len; i++)
            if (reads_loop_index(env, e->index.subs.items[i])) return true;
        return reads_loop_index(env, e->index.base);
    case AST_FIELD: return reads_loop_index(env, e->field.base);
    default: return false;
    }
}

/* The condition of a relation `if` in a template that reads a loop index:
 * 1 or 0 when it is constant in the box, -2 after refusing the template
 * (it changes inside: split there; or it is no condition on the indices);
 * -1 when it reads no loop index (evaluated as in the scalar path). */
static int tmpl_branch(Flattener *F, Inst *inst, Env *env, AstNode *cond) {
    if (!F->tmpl || !reads_loop_index(env, cond)) return -1;
    Val c;
    int v = -1;
    if (tr_val(F, tx_structural(tx_in(inst, env)), cond, &c) && !c.nd && !c.str && c.s) {
        Expr *x = tr_known(F, c.s);
        v = expr_is_const(x) ? x->value != 0 : tmpl_cond(F, x, cond->span);
    }
    if (v == -1) tmpl_refuse(F, cond->span, "a relation `if` on a loop index");
    return v == -1 ? -2 : v;
}

/* the parts of box w cut at c; NULL when c cuts nothing */
static const FlatSplit *split_box(Flattener *F, const FlatDom *w, const TmplCuts *c) {
    uint32_t np = cut_parts(c);
    if (np == 1) return NULL;
    FlatSplit *s = ARENA_NEW(F->keep, FlatSplit);
    s->whole = *w;
    s->nparts = np;
    for (uint32_t k = 0; k < EXPR_MAXIDX; k++) {
        s->nint[k] = (uint8_t)(c->n[k] + 1);
        int64_t *st = ARENA_ARRAY(F->keep, int64_t, s->nint[k]);
        st[0] = w->lo[k];
        memcpy(st + 1, c->at[k], c->n[k] * sizeof *st);
        s->start[k] = st;
    }
    FlatDom *parts = ARENA_ARRAY(F->keep, FlatDom, np);
    for (uint32_t p = 0; p < np; p++) {
        FlatDom *d = &parts[p];
        *d = *w;
        d->split = s;
        d->part = p;
        d->count = 1;
        for (int k = EXPR_MAXIDX - 1, r = (int)p; k >= 0; r /= s->nint[k], k--) {
            uint32_t t = (uint32_t)r % s->nint[k];
            int64_t end = t + 1u < s->nint[k] ? s->start[k][t + 1] : w->lo[k] + (int64_t)w->n[k];
            d->lo[k] = s->start[k][t];
            d->n[k] = (uint32_t)(end - d->lo[k]);
            d->count *= d->n[k];
        }
    }
    s->parts = parts;
    return s;
}

typedef struct {
    Inst *inst;
    Env *env;              /* with the nest's indices bound (once bound) */
    ForNest f;
    FlatDom *dom;          /* the whole box */
    bool bound;            /* indices bound, the box is one of unit ranges */
    uint64_t work, work0;  /* what the ordinary way charges; F->work before */
    uint32_t neq, nvar, ndef;
} Attempt;

/* One speculative translation of the nest's body, over the whole box split
 * at `cuts` (NULL: unsplit, conditions on an index stay expressions); on
 * failure the equations it wrote are dropped. */
static bool speculate(Flattener *F, Attempt *a, TmplCuts *cuts) {
    diag_speculate_begin();
    F->speculating = true;
    if (!a->bound)
        a->bound = bind_nest(F, a->inst, &a->env, &a->f, a->dom, &a->work) && a->work <= F->work_limit - F->work;
    bool ok = a->bound;
    const FlatSplit *s = ok && cuts ? split_box(F, a->dom, cuts) : NULL;
    F->cuts = cuts;
    for (uint32_t p = 0; ok && p < (s ? s->nparts : 1); p++) {
        F->tmpl = s ? &s->parts[p] : a->dom;
        walk(F, a->inst, a->env, a->f.body);
    }
    F->tmpl = NULL;
    F->cuts = NULL;
    F->speculating = false;
    for (uint32_t i = 0; i < F->spec_failed.len; i++) F->spec_failed.data[i]->cstate = CONST_UNSEEN;
    F->spec_failed.len = 0;
    ok &= diag_speculate_end() == 0 && F->m->vars.len == a->nvar && F->deferred.len == a->ndef;
    ok &= a->work <= F->work_limit - a->work0;
    F->work = a->work0;
    if (!ok) F->m->eqs.len = a->neq;
    return ok;
}

/* The nest as templates: translated over the whole box, split further
 * wherever a condition on an index turns out to change inside a part, until
 * one translation succeeds (each round adds a cut: bounded), or the parts
 * would be too many (then unsplit, conditions as expressions, as before). */
static bool try_template(Flattener *F, Inst *inst, Env *env, AstNode *r) {
    Attempt a = {.inst = inst, .env = env};
    if (F->no_templates || F->clk || F->tmpl || !for_nest(r, &a.f) || !tmpl_body_ok(inst, a.f.body, 0)) return false;
    a.dom = ARENA_NEW(F->keep, FlatDom);
    a.neq = F->m->eqs.len, a.nvar = F->m->vars.len, a.ndef = F->deferred.len, a.work0 = F->work;
    TmplCuts cuts = {0};
    bool ok = speculate(F, &a, &cuts);
    while (!ok && a.bound && cuts.added && !cuts.overflow && cut_parts(&cuts) <= TMPL_MAX_PARTS) {
        cuts.added = false;
        ok = speculate(F, &a, &cuts);
    }
    if (!ok && a.bound && cut_parts(&cuts) > 1) ok = speculate(F, &a, NULL);
    if (ok) F->work += a.work; /* what the ordinary way charges for the iterations */
    return ok;
}

static void walk_for(Flattener *F, Inst *inst, Env *env, AstNode *r, uint32_t k) {
    if (k == 0 && try_template(F, inst, env, r)) return;
    if (k == r->for_.iters.len) {
        walk(F, inst, env, &r->for_.body);
        return;
    }
    AstNode *it = r->for_.iters.items[k];
    Val range;
    if (!const_val(F, tx_in(inst, env), it->iter.range, &range)) return;
    if (range.str || range.nd > 1) {
        diag_error(it->iter.range->span, "`for` needs a range or a vector");
        return;
    }
    Env *cur = NULL;
    for (uint32_t i = 0; i < range.n; i++) {
        if (!flat_charge(F, 1, it->span)) return;
        uint32_t deferred = F->deferred.len;
        if (!cur) cur = env_push(F, env, it->iter.name, val_elem(F, &range, i));
        else { /* nothing kept the previous one */
            cur->val.s = val_at(&range, i);
            if (range.iv) cur->val.iv[0] = range.iv[i];
        }
        walk_for(F, inst, cur, r, k + 1);
        if (F->deferred.len != deferred) cur = NULL; /* a deferred relation keeps it */
    }
}

static void walk_if_from(Flattener *F, Inst *inst, Env *env, AstNode *r, uint32_t first);

/* `rooted(x.R)`: the flat variable of x.R's first entry (loops.c checks
 * that it is an orientation matrix of a connector), or NO_VAR */
static uint32_t rooted_var(Flattener *F, Inst *inst, Env *env, AstNode *cond) {
    AstList *args = &cond->call.args;
    Val v;
    if (args->len != 1 || args->items[0]->arg.name) {
        diag_error(cond->span, "`rooted` takes one argument: the orientation matrix of a connector (`frame_a.R`)");
        return NO_VAR;
    }
    if (!tr_val(F, tx_in(inst, env), args->items[0]->arg.value, &v)) return NO_VAR;
    if (v.nd != 2 || v.dims[0] != v.dims[1] || val_at(&v, 0)->kind != EXPR_VAR) {
        diag_error(cond->span, "`rooted` takes the orientation matrix of a connector (`frame_a.R`), a square matrix "
                               "variable");
        return NO_VAR;
    }
    return val_at(&v, 0)->index;
}

/* `if rooted(x.R)` (Modelica's Connections.rooted): both branches are
 * translated, their equations marked; the orientation pass (loops.c) keeps
 * the one the spanning tree of the orientation graph chooses */
static void walk_rooted(Flattener *F, Inst *inst, Env *env, AstNode *r, uint32_t i) {
    AstNode *cond = r->if_.branches.items[i]->branch.cond;
    if (F->rooted) {
        diag_error(cond->span, "an `if rooted(...)` inside a branch of another one is not supported");
        return;
    }
    uint32_t var = rooted_var(F, inst, env, cond);
    if (var == NO_VAR) return;
    uint32_t k = F->rooted_ifs.len;
    vec_push(F->arena, &F->rooted_ifs, ((RootedIf){var, inst->path, cond->span}));
    F->rooted = 1 + 2 * k;
    walk(F, inst, env, &r->if_.branches.items[i]->branch.body);
    F->rooted = 2 + 2 * k;
    walk_if_from(F, inst, env, r, i + 1);
    F->rooted = 0;
}

static void walk_if(Flattener *F, Inst *inst, Env *env, AstNode *r) { walk_if_from(F, inst, env, r, 0); }

static void walk_if_from(Flattener *F, Inst *inst, Env *env, AstNode *r, uint32_t first) {
    for (uint32_t i = first; i < r->if_.branches.len; i++) {
        AstNode *b = r->if_.branches.items[i];
        if (is_call_named(b->branch.cond, "rooted")) {
            walk_rooted(F, inst, env, r, i);
            return;
        }
        int in_box = b->branch.cond ? tmpl_branch(F, inst, env, b->branch.cond) : -1;
        if (in_box == -2) return;
        if (in_box == 0) continue;
        if (b->branch.cond && in_box < 0) {
            Val c;
            if (!const_val(F, tx_in(inst, env), b->branch.cond, &c)) return;
            if (c.nd || c.str) {
                diag_error(b->branch.cond->span, "the condition of a relation `if` must be a Boolean");
                return;
            }
            if (c.s->value == 0) continue;
        }
        walk(F, inst, env, &b->branch.body);
        return;
    }
}

static Def *switch_enum(Flattener *F, Tx t, AstNode *subject) {
    Ref ref;
    if ((subject->kind == AST_IDENT || subject->kind == AST_FIELD) && resolve_ref(F, t, subject, false, &ref) &&
        ref.var)
        return enum_of_elem(F, ref.var);
    return NULL;
}

static void walk_switch(Flattener *F, Inst *inst, Env *env, AstNode *r) {
    Val v;
    if (!const_val(F, tx_in(inst, env), r->switch_.subject, &v)) return;
    if (v.nd || v.str) {
        diag_error(r->switch_.subject->span, "`switch` needs an enum value");
        return;
    }
    Def *en = switch_enum(F, tx_in(inst, env), r->switch_.subject);
    AstNode *dflt = NULL, *hit = NULL;
    for (uint32_t i = 0; i < r->switch_.cases.len; i++) {
        AstNode *c = r->switch_.cases.items[i];
        if (!c->branch.name) {
            dflt = c;
            continue;
        }
        int k = en ? enum_case_index(en, c->branch.name) : 0;
        if (en && !k) diag_error(c->span, "enum `%s` has no case `%s`", en->qname, c->branch.name);
        if (!en) {
            diag_error(r->switch_.subject->span, "`switch` needs a parameter of an enum type");
            return;
        }
        if (k == (int)v.s->value && !hit) hit = c;
    }
    if (!hit) hit = dflt;
    if (hit) walk(F, inst, env, &hit->branch.body);
}

static void walk_one(Flattener *F, Inst *inst, Env *env, AstNode *r) {
    switch (r->kind) {
    case AST_EQUATION: case AST_ASSERT:
        if (F->rooted && (r->kind == AST_ASSERT || is_call_named(r->eq.rhs, "sample"))) {
            diag_error(r->span, "a branch of `if rooted(...)` holds equations only (no assertions or `sample`)");
            break;
        }
        if (uses_instream(r)) vec_push(F->arena, &F->deferred, ((Deferred){r, inst, env, F->rooted}));
        else translate(F, inst, env, r);
        break;
    case AST_CONNECT:
        if (F->rooted) diag_error(r->span, "a `connect` cannot depend on `rooted(...)`: connections come first");
        else connect_members(F, inst, env, r);
        break;
    case AST_FOR: walk_for(F, inst, env, r, 0); break;
    case AST_IF: walk_if(F, inst, env, r); break;
    case AST_SWITCH: walk_switch(F, inst, env, r); break;
    case AST_ANALYSIS_POINT: case AST_CONTINUITY: break; /* no equations */
    default:
        diag_error(r->span, "this relation form (%s) is not supported yet", ast_kind_names[r->kind]);
    }
}

static void walk(Flattener *F, Inst *inst, Env *env, AstList *rels) {
    for (uint32_t i = 0; i < rels->len; i++) walk_one(F, inst, env, rels->items[i]);
}

static void walk_inst(Flattener *F, Inst *inst) {
    for (uint32_t i = 0; i < inst->relations.len; i++) walk_one(F, inst, inst->env, inst->relations.data[i]);
    for (uint32_t i = 0; i < inst->elems.len; i++) {
        Elem *e = inst->elems.data[i];
        if (e->absent) continue;
        if (e->child) walk_inst(F, e->child);
        for (uint32_t k = 0; e->children && k < e->n; k++) walk_inst(F, e->children[k]);
    }
}

void flatten_relations(Flattener *F, Inst *inst) { walk_inst(F, inst); }
