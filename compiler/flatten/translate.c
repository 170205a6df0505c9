/*
 * translate.c -- expression translation: AST -> Val (a shape and one Expr
 * per element; arrays are scalarized here).
 *
 * Everything a translation depends on is in its context (Tx, passed by
 * value): the scope where names resolve, the environment (loop indices,
 * function locals), the library of an inlined function, the value of
 * `end`, and whether the value is structural.  Names resolve through the
 * environment, then the scope.  A parameter becomes a flat-variable leaf,
 * except in a structural context, where it evaluates to its value (that is
 * how array sizes, `for` ranges, `if`/`switch` conditions and indices fold
 * to constants).  Structural parameters, constants and parameters of an
 * analysis always evaluate to their value.  Enum values are the 1-based
 * index of their case.
 *
 * Translation creates no flat variables: der(der(x)) asks the context's
 * der_helper (equations.c) for the helper variable x', and is an error
 * where there is none.
 *
 * Cost: a scalar subscript of an array variable (`x[i]`) resolves directly
 * to one leaf, so a `for` loop over an n-element array is O(n).
 */
#include "flatten_internal.h"
#include "numfmt.h"

#include <math.h>
#include <string.h>

/* ---------- names ---------- */

static Val var_leaves(Flattener *F, Elem *el, uint32_t off, uint32_t cnt, bool whole) {
    if (!whole || el->nd == 0) return val_scalar(var_leaf(F, el->var + off));
    Val v = val_new(F, el->nd, el->dims);
    for (uint32_t i = 0; i < cnt; i++) v.el[i] = var_leaf(F, el->var + off + i);
    return v;
}

/* the value of a variable reference: leaves, or the value of a parameter
 * that folds here (whole: the array, else element r->off) */
bool tr_var_value(Flattener *F, Tx t, Ref *r, bool whole, Val *out, AstNode *e) {
    Elem *el = r->var;
    bool known = elem_is_param_like(el) && (el->is_structural || el->vkind == VAR_CONSTANT);
    bool fold = el->owner->is_analysis || el->var == NO_VAR || (elem_is_param_like(el) && t.structural);
    if (known && !fold) { /* a leaf (units stay checkable), folded before structure; `missing` is passed on */
        Val v;
        if (!elem_const(F, el, &v)) return false;
        fold = v.missing || el->var == NO_VAR;
    }
    if (fold) {
        Val v;
        if (!elem_const(F, el, &v)) return false;
        if (whole) *out = v;
        else *out = val_scalar(val_at(&v, r->off));
        out->missing = v.missing;
        return true;
    }
    if (t.structural) {
        diag_error(e->span, "`%s` is a variable, but a value known at compile time is needed", el->name);
        return false;
    }
    *out = var_leaves(F, el, r->off, r->cnt, whole);
    return true;
}

static bool val_index(Flattener *F, Tx t, Val base, AstNode *e, Val *out);

static bool tr_builtin_name(Flattener *F, Tx t, AstNode *e, Val *out) {
    Sym n = e->ident.name;
    if (n == F->s_time) {
        *out = val_scalar(expr_time(F->ctx));
        return true;
    }
    if (n == F->s_pi || n == F->s_pi_u) {
        *out = val_scalar(expr_const(F->ctx, 3.14159265358979323846));
        return true;
    }
    (void)t;
    return false;
}

/* `E.A` when the chain's root names nothing in scope: an enum value */
static int tr_enum_name(Flattener *F, Tx t, AstNode *e) {
    AstNode *root = e;
    while (root->kind == AST_FIELD) root = root->field.base;
    if (root->kind != AST_IDENT || env_find(t.env, root->ident.name) || (t.scope && inst_elem(t.scope, root->ident.name)))
        return 0;
    return enum_value(F, t, e);
}

static bool tr_index_name(Flattener *F, Tx t, AstNode *e, Val *out) {
    Ref b;
    AstNode *base = e->index.base;
    bool direct = !subs_have_slice(&e->index.subs) && !(base->kind == AST_IDENT && env_find(t.env, base->ident.name));
    if (direct && resolve_ref(F, t, base, false, &b) && b.var && b.var->nd == e->index.subs.len) {
        int tmpl = F->tmpl ? tr_template_index(F, t, e, &b, out) : 0;
        if (tmpl) return tmpl > 0;
        uint32_t off;
        if (!ref_const_offset(F, t, base, &e->index.subs, b.var->nd, b.var->dims, &off, true)) return false;
        b.off = off;
        b.cnt = 1;
        return tr_var_value(F, t, &b, false, out, e);
    }
    Val bv;
    if (!tr_val(F, t, base, &bv) || !val_present(&bv, base)) return false;
    return val_index(F, t, bv, e, out);
}

static bool tr_name(Flattener *F, Tx t, AstNode *e, Val *out) {
    if (e->kind == AST_FIELD) {
        bool handled;
        bool ok = struct_env_field(F, t, e, out, &handled);
        if (handled) return ok;
        if (e->field.base->kind != AST_IDENT && e->field.base->kind != AST_FIELD && e->field.base->kind != AST_INDEX) {
            Val base; /* a field of a computed value: `planar_rotation(e, a, 0).R` */
            return tr_val(F, t, e->field.base, &base) && struct_field(F, base, e->field.name, e, out);
        }
        int k = tr_enum_name(F, t, e);
        if (k < 0) return false;
        if (k > 0) {
            *out = val_scalar(expr_const(F->ctx, k));
            return true;
        }
    }
    if (e->kind == AST_IDENT) {
        Env *v = env_find(t.env, e->ident.name);
        if (v) {
            *out = v->val;
            return true;
        }
        if ((!t.scope || !inst_elem(t.scope, e->ident.name)) && tr_builtin_name(F, t, e, out)) return true;
    }
    if (e->kind == AST_INDEX) return tr_index_name(F, t, e, out);
    Ref r;
    if (!resolve_ref(F, t, e, true, &r)) return false;
    if (r.inst && r.inst->def->node->kind == AST_STRUCT) return struct_value(F, t, r.inst, e, out);
    if (!r.var) {
        diag_error(e->span, "`%s` is a component, not a value", r.inst ? r.inst->path : r.arr->name);
        return false;
    }
    return tr_var_value(F, t, &r, true, out, e);
}

/* the indices one subscript selects in a dimension of size d: all for `:`,
 * else the (structural) value; *is_vec when it keeps the dimension */
static bool subscript_indices(Flattener *F, Tx t, AstNode *e, uint32_t k, uint8_t nd, uint32_t d, uint32_t **idx,
                              uint32_t *cnt, bool *is_vec) {
    AstNode *s = e->index.subs.items[k];
    if (s->kind == AST_COLON) {
        *idx = ARENA_ARRAY(F->arena, uint32_t, d ? d : 1);
        for (uint32_t i = 0; i < d; i++) (*idx)[i] = i;
        *cnt = d;
        *is_vec = true;
        return true;
    }
    t.end = d;
    Val v;
    if (!const_val(F, t, s, &v) || v.str) return false;
    *idx = ARENA_ARRAY(F->arena, uint32_t, v.n ? v.n : 1);
    *cnt = v.n;
    for (uint32_t i = 0; i < v.n; i++) {
        double x = val_at(&v, i)->value;
        if (x != floor(x) || x < 1 || x > d) {
            ref_range_error(F, e->index.base, s->span, x, k, nd, d);
            return false;
        }
        (*idx)[i] = (uint32_t)x - 1;
    }
    *is_vec = v.nd != 0;
    return true;
}

/* general subscripts: scalars, `:`, ranges and vectors of indices */
static bool val_index(Flattener *F, Tx t, Val base, AstNode *e, Val *out) {
    AstList *subs = &e->index.subs;
    if (subs->len != base.nd) {
        diag_error(e->span, "%u subscript%s given for %s", subs->len, subs->len == 1 ? "" : "s",
                   val_shape_str(F, &base));
        return false;
    }
    uint32_t *idx[VAL_MAXD], cnt[VAL_MAXD], rdims[VAL_MAXD];
    uint8_t rnd = 0;
    for (uint32_t k = 0; k < subs->len; k++) {
        bool is_vec;
        if (!subscript_indices(F, t, e, k, base.nd, base.dims[k], &idx[k], &cnt[k], &is_vec)) return false;
        if (is_vec) rdims[rnd++] = cnt[k];
    }
    Val r = val_new(F, rnd, rdims);
    if (base.iv) val_make_int(F, &r);
    uint32_t pos[VAL_MAXD] = {0};
    for (uint32_t out_i = 0; out_i < r.n; out_i++) {
        uint32_t off = 0;
        for (uint32_t k = 0; k < subs->len; k++) off = off * base.dims[k] + idx[k][pos[k]];
        val_put(&r, out_i, val_at(&base, off));
        if (base.iv) r.iv[out_i] = base.iv[off];
        for (int k = (int)subs->len - 1; k >= 0; k--) {
            if (++pos[k] < cnt[k]) break;
            pos[k] = 0;
        }
    }
    *out = r;
    return true;
}

/* ---------- array literals, ranges, comprehensions ---------- */

static bool tr_array(Flattener *F, Tx t, AstNode *e, Val *out) {
    AstList *xs = &e->array.elems;
    if (xs->len == 0) {
        uint32_t z = 0;
        *out = val_new(F, 1, &z);
        return true;
    }
    Val *vs = ARENA_ARRAY(F->arena, Val, xs->len);
    for (uint32_t i = 0; i < xs->len; i++) {
        if (!tr_val(F, t, xs->items[i], &vs[i]) || !val_present(&vs[i], xs->items[i])) return false;
        if (vs[i].str || !val_same_shape(&vs[i], &vs[0])) {
            diag_error(xs->items[i]->span, "the elements of an array literal must have the same shape");
            return false;
        }
    }
    if (vs[0].nd + 1 > VAL_MAXD) {
        diag_error(e->span, "arrays have at most %d dimensions", VAL_MAXD);
        return false;
    }
    uint32_t dims[VAL_MAXD] = {xs->len};
    for (uint8_t k = 0; k < vs[0].nd; k++) dims[k + 1] = vs[0].dims[k];
    Val r = val_new(F, vs[0].nd + 1, dims);
    bool ints = true; /* all Integers: an Integer array */
    for (uint32_t i = 0; i < xs->len; i++) ints &= vs[i].iv != NULL;
    if (ints) val_make_int(F, &r);
    uint32_t m = vs[0].n, o = 0;
    for (uint32_t i = 0; i < xs->len; i++)
        for (uint32_t j = 0; j < m; j++, o++) {
            r.el[o] = val_at(&vs[i], j);
            if (ints) r.iv[o] = vs[i].iv[j];
        }
    *out = r;
    return true;
}

/* the number of elements of the Integer range a:s:b (s != 0), exact */
static double int_range_count(int64_t a, int64_t s, int64_t b) {
    __int128 q = ((__int128)b - a) / s; /* toward zero; negative: empty */
    return q < 0 ? 0 : (double)(q + 1);
}

/* a range's bounds and step evaluated and checked, its elements counted
 * and charged to the budget: all of tr_range but the elements */
static bool range_bounds(Flattener *F, Tx t, AstNode *e, Val *a, Val *s, Val *b, uint32_t *n) {
    *s = val_int(F, 1);
    if (!const_val(F, t, e->range.start, a) || !const_val(F, t, e->range.stop, b)) return false;
    if (e->range.step && !const_val(F, t, e->range.step, s)) return false;
    if (a->nd || b->nd || s->nd || a->str || b->str || s->str) {
        diag_error(e->span, "a range needs scalar bounds");
        return false;
    }
    double x0 = a->s->value, dx = s->s->value, x1 = b->s->value;
    if (dx == 0) {
        diag_error(e->span, "the step of a range cannot be zero");
        return false;
    }
    bool ints = a->iv && b->iv && s->iv; /* an Integer range: its elements exact */
    double cnt = ints ? int_range_count(a->iv[0], s->iv[0], b->iv[0]) : floor((x1 - x0) / dx + 1e-9) + 1;
    if (cnt < 0) cnt = 0;
    if (!(cnt <= 1e18)) cnt = 1e18; /* inf, nan: beyond any budget */
    if (!flat_charge(F, (uint64_t)cnt, e->span)) return false;
    if (cnt > 1e8) {
        diag_error(e->span, "this range has %.0f elements; that is too many", cnt);
        return false;
    }
    *n = (uint32_t)cnt;
    return true;
}

static bool tr_range(Flattener *F, Tx t, AstNode *e, Val *out) {
    Val a, s, b;
    uint32_t n;
    if (!range_bounds(F, t, e, &a, &s, &b, &n)) return false;
    bool ints = a.iv && b.iv && s.iv;
    double x0 = a.s->value, dx = s.s->value;
    Val r = val_new(F, 1, &n);
    if (ints) val_make_int(F, &r); /* in range: a + s*(n-1) lies between a and b */
    for (uint32_t i = 0; i < n; i++)
        if (ints) val_put_int(F, &r, i, (int64_t)((__int128)a.iv[0] + (__int128)s.iv[0] * i));
        else r.el[i] = expr_const(F->ctx, x0 + dx * i);
    *out = r;
    return true;
}

int tr_int_range(Flattener *F, Tx t, AstNode *e, int64_t *first, int64_t *step, uint32_t *n) {
    if (e->kind != AST_RANGE) return -1;
    Val a, s, b;
    Tx st = tx_structural(t); /* as const_val evaluates it */
    if (!range_bounds(F, st, e, &a, &s, &b, n)) return 0;
    if (!a.iv || !b.iv || !s.iv) return -1;
    *first = a.iv[0];
    *step = s.iv[0];
    return 1;
}

static bool compr_rec(Flattener *F, Tx t, AstNode *e, uint32_t k, ExprPtrVec *acc, uint32_t *dims) {
    if (k == e->compr.iters.len) {
        Val v;
        if (!tr_val(F, t, e->compr.body, &v) || !val_present(&v, e->compr.body)) return false;
        if (v.nd || v.str) {
            diag_error(e->compr.body->span, "a comprehension element must be a scalar");
            return false;
        }
        vec_push(F->arena, acc, v.s);
        return true;
    }
    AstNode *it = e->compr.iters.items[k];
    Val r;
    if (!const_val(F, t, it->iter.range, &r) || r.str) return false;
    dims[k] = r.n;
    Tx inner = t;
    for (uint32_t i = 0; i < r.n; i++) {
        if (!flat_charge(F, 1, it->span)) return false;
        inner.env = env_push(F, t.env, it->iter.name, val_elem(F, &r, i));
        if (!compr_rec(F, inner, e, k + 1, acc, dims)) return false;
    }
    return true;
}

static bool tr_comprehension(Flattener *F, Tx t, AstNode *e, Val *out) {
    if (e->compr.iters.len > VAL_MAXD) {
        diag_error(e->span, "at most %d `for` clauses", VAL_MAXD);
        return false;
    }
    ExprPtrVec acc = {0};
    uint32_t dims[VAL_MAXD] = {0};
    if (!compr_rec(F, t, e, 0, &acc, dims)) return false;
    Val r = val_new(F, (uint8_t)e->compr.iters.len, dims);
    for (uint32_t i = 0; i < r.n && i < acc.len; i++) r.el[i] = acc.data[i];
    *out = r;
    return true;
}

/* ---------- der() ---------- */

static Expr *der_leaf(void *ud, Expr *leaf) {
    Flattener *F = ud;
    if (leaf->kind == EXPR_AT) { /* x[i] of a template: der(x)[i] when every x[i] is a variable */
        bool none = false;
        if (leaf->fn == EXPR_VAR && tmpl_all_kind(F, leaf, FV_VARIABLE, &none))
            return expr_at(F->ctx, EXPR_DER, leaf->args[0]);
        if (leaf->fn != EXPR_VAR || !none) tmpl_refuse(F, (Span){0}, "der() of an indexed leaf");
        return NULL;
    }
    if (leaf->kind == EXPR_VAR) {
        FlatVarKind k = F->m->vars.data[leaf->index].kind;
        if (k == FV_VARIABLE) return expr_leaf(F->ctx, EXPR_DER, leaf->index);
    }
    return NULL;
}

/* small expressions are searched directly (no memo tables); -1 when the
 * node budget runs out */
static int find_der(Expr *e, int *budget) {
    if (--*budget < 0) return -1;
    if (e->kind == EXPR_DER) return 1;
    for (int i = 0; i < e->nargs; i++) {
        int r = find_der(e->args[i], budget);
        if (r) return r;
    }
    return 0;
}

static bool has_der(Flattener *F, Expr *e) {
    int budget = 64, r = find_der(e, &budget);
    if (r >= 0) return r == 1;
    ExprVec v = {0};
    expr_leaves(F->ctx, e, EXPR_DER, &v);
    return v.len > 0;
}

typedef struct { Flattener *F; DerHelperFn helper; Span at; } AuxCtx;

static Expr *aux_leaf(void *ud, Expr *leaf) {
    AuxCtx *a = ud;
    if (leaf->kind != EXPR_DER) return leaf;
    return var_leaf(a->F, a->helper(a->F, leaf->index, a->at));
}

/* der(x) of one element; an inner der(y) becomes the helper variable y' */
static Expr *der_elem(Flattener *F, Tx t, AstNode *call, Expr *x) {
    if (has_der(F, x)) {
        if (!t.der_helper) {
            diag_error(call->span, "a second derivative is only allowed in relations and declaration equations");
            return NULL;
        }
        AuxCtx a = {F, t.der_helper, call->span};
        x = expr_subst(F->ctx, x, aux_leaf, &a);
    }
    if (x->kind == EXPR_VAR && F->m->vars.data[x->index].kind == FV_VARIABLE)
        return expr_leaf(F->ctx, EXPR_DER, x->index);
    if (x->kind == EXPR_AT) {
        Expr *d = der_leaf(F, x);
        return d ? d : expr_const(F->ctx, 0);
    }
    return expr_dt(F->ctx, x, der_leaf, F);
}

static bool tr_der(Flattener *F, Tx t, AstNode *call, Val *out) {
    if (call->call.args.len != 1) {
        diag_error(call->span, "der() takes exactly one argument");
        return false;
    }
    if (t.structural) {
        diag_error(call->span, "der() is not known at compile time");
        return false;
    }
    Val a;
    if (!tr_val(F, t, call->call.args.items[0]->arg.value, &a) || !val_present(&a, call)) return false;
    Val r = val_like(F, &a);
    for (uint32_t i = 0; i < a.n; i++) {
        Expr *x = der_elem(F, t, call, val_at(&a, i));
        if (!x) return false;
        val_put(&r, i, x);
    }
    *out = r;
    return true;
}

/* ---------- calls ---------- */

static Def *callee_def(Flattener *F, Tx t, AstNode *callee) {
    Sym q[16];
    uint32_t n = field_chain_qname(callee, q, 16);
    if (!n) return NULL;
    AstQName qn = {q, n, callee->span};
    return sema_try_lookup(F->prog, tx_lib(F, t), &qn);
}

/* outer(world.g, default): the element `world.g` of the top-level model
 * when it has one (Modelica's inner/outer, MTK's GlobalScope: library
 * components read the model's World this way), else `default` */
static bool tr_outer(Flattener *F, Tx t, AstNode *call, Val *out) {
    AstList *args = &call->call.args;
    if (args->len != 2 || args->items[0]->arg.name || args->items[1]->arg.name) {
        diag_error(call->span, "outer(name, default) takes a name and a default value");
        return false;
    }
    AstNode *name = args->items[0]->arg.value;
    Ref r;
    Tx top = tx_in(F->top, NULL);
    top.structural = t.structural;
    if (F->top && resolve_ref(F, top, name, false, &r) && r.var)
        return tr_val(F, top, name, out);
    return tr_val(F, t, args->items[1]->arg.value, out);
}

static bool tr_call(Flattener *F, Tx t, AstNode *e, Val *out) {
    AstNode *callee = e->call.callee;
    Sym name = callee->kind == AST_IDENT ? callee->ident.name : NULL;
    if (name && name == F->s_der) return tr_der(F, t, e, out);
    if (name && strcmp(name, "outer") == 0) return tr_outer(F, t, e, out);
    if (name && (strcmp(name, "instream") == 0 || strcmp(name, "actualstream") == 0))
        return tr_instream(F, t, e, name[0] == 'a', out);
    Def *d = callee_def(F, t, callee);
    if (d && d->node->kind == AST_FUNCTION) return tr_function_call(F, t, e, d, out);
    if (d && d->node->kind == AST_STRUCT) return struct_construct(F, t, e, d, out);
    if (callee->kind == AST_FIELD && e->call.args.len == 0) {
        int k = enum_value(F, t, callee);
        if (k < 0) return false;
        if (k > 0) {
            *out = val_scalar(expr_const(F->ctx, k));
            return true;
        }
    }
    if (!name) {
        diag_error(callee->span, "unknown function; library (Julia) functions cannot be called, "
                                 "write the function in .dyad instead");
        return false;
    }
    bool handled = false;
    bool ok = tr_builtin(F, t, e, name, out, &handled);
    if (!handled) ok = tr_clock_builtin(F, t, e, name, out, &handled);
    if (handled) return ok;
    if (strcmp(name, "rooted") == 0) {
        diag_error(callee->span, "`rooted(x.R)` is a condition of a relation `if` (alone), not a value");
        return false;
    }
    diag_error(callee->span, "unknown function `%s`", name);
    return false;
}

/* ---------- dispatcher ---------- */

/* e with the flat variables of structural parameters and constants replaced by
 * their values (they stay leaves in the flat model) */
static Expr *known_leaf(void *ud, Expr *leaf) {
    Flattener *F = ud;
    if (leaf->kind != EXPR_VAR || leaf->index >= F->var_elems.len) return leaf;
    Elem *el = F->var_elems.data[leaf->index];
    Val v;
    if (!elem_is_param_like(el) || !(el->is_structural || el->vkind == VAR_CONSTANT) || !elem_const(F, el, &v) ||
        v.missing || v.str)
        return leaf;
    return val_at(&v, F->var_elem_off.data[leaf->index]);
}

Expr *tr_known(Flattener *F, Expr *e) { return e && !expr_is_const(e) ? expr_subst(F->ctx, e, known_leaf, F) : e; }

static bool tr_ifexpr(Flattener *F, Tx t, AstNode *e, Val *out) {
    Val a, b, c;
    if (!tr_val(F, t, e->ifexpr.cond, &c)) return false;
    if (c.nd || c.str) {
        diag_error(e->ifexpr.cond->span, "a condition must be a scalar");
        return false;
    }
    if (!val_present(&c, e->ifexpr.cond)) return false;
    c.s = tr_known(F, c.s); /* a structural condition selects now */
    int in_box = F->tmpl && !expr_is_const(c.s) ? tmpl_cond(F, c.s, e->ifexpr.cond->span) : -1;
    if (in_box == -2) return false; /* the box is split where it changes */
    if (in_box >= 0) c.s = expr_const(F->ctx, in_box); /* ... and in a part it selects too */
    if (expr_is_const(c.s)) return tr_val(F, t, c.s->value != 0 ? e->ifexpr.then : e->ifexpr.else_, out);
    return tr_val(F, t, e->ifexpr.then, &a) && tr_val(F, t, e->ifexpr.else_, &b) && val_ifelse(F, e, c.s, a, b, out);
}

bool tr_val(Flattener *F, Tx t, AstNode *e, Val *out) {
    Val a, b;
    memset(out, 0, sizeof *out);
    if (!e) return false; /* left by syntax-error recovery, already reported */
    switch (e->kind) {
    case AST_NUM:
        if ((t.structural || t.int_literals) && e->num.is_int) return int_literal(F, e, out);
        *out = val_scalar(expr_const(F->ctx, e->num.value));
        return true;
    case AST_BOOL: *out = val_scalar(expr_const(F->ctx, e->boolean.value)); return true;
    case AST_STR: out->str = e->str.value; return true;
    case AST_IDENT: case AST_FIELD: case AST_INDEX: return tr_name(F, t, e, out);
    case AST_END:
        if (!t.end) {
            diag_error(e->span, "`end` is only allowed inside an index");
            return false;
        }
        *out = val_int(F, t.end);
        return true;
    case AST_UNARY: return tr_val(F, t, e->unary.lhs, &a) && val_unary(F, e, a, out);
    case AST_BINARY:
        return tr_val(F, t, e->binary.lhs, &a) && tr_val(F, t, e->binary.rhs, &b) && val_binary(F, e, a, b, out);
    case AST_IFEXPR: return tr_ifexpr(F, t, e, out);
    case AST_CALL: return tr_call(F, t, e, out);
    case AST_ARRAY: return tr_array(F, t, e, out);
    case AST_RANGE: return tr_range(F, t, e, out);
    case AST_COMPREHENSION: return tr_comprehension(F, t, e, out);
    case AST_MISSING: /* passed on to a function; every consumer rejects it */
        *out = val_scalar(NULL);
        out->missing = true;
        return true;
    case AST_COLON:
        diag_error(e->span, "`:` is only allowed inside an index");
        return false;
    case AST_AT: return tr_at(F, t, e, out);
    default:
        diag_error(e->span, "this expression form (%s) is not supported", ast_kind_names[e->kind]);
        return false;
    }
}

Expr *tr_expr(Flattener *F, Tx t, AstNode *e) {
    Val v;
    if (!tr_val(F, t, e, &v) || !val_present(&v, e)) return NULL;
    if (v.str) {
        diag_error(e->span, "a string is not a number");
        return NULL;
    }
    if (v.nd) {
        diag_error(e->span, "a scalar is needed here, but this is %s", val_shape_str(F, &v));
        return NULL;
    }
    return v.s;
}
