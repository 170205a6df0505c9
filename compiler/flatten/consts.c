/*
 * consts.c -- structural values: what must be known when the model is
 * compiled (array sizes, `for` ranges, relation `if`/`switch` conditions,
 * conditions of conditional declarations, indices, structural parameters).
 *
 * An expression is translated with `structural` set in its context, so
 * every parameter evaluates to its (possibly modified) value; the result
 * must then be constant.  A parameter's value is evaluated once, in the
 * scope and environment of its binding, and cached on its element
 * (ConstState: unseen -> busy -> done | failed); meeting a busy element
 * again is a dependency cycle.
 */
#include "flatten_internal.h"
#include "numfmt.h"

#include <math.h>

bool elem_is_param_like(Elem *el) {
    return el->vkind == VAR_PARAMETER || el->vkind == VAR_CONSTANT;
}

static bool all_const(const Val *v) {
    for (uint32_t i = 0; i < v->n; i++)
        if (!expr_is_const(val_at(v, i))) return false;
    return true;
}

/* el has no structural value: reported once, the state becomes failed --
 * except while a template is tried (the report is not shown then), where
 * it is forgotten when the attempt ends (equations.c, try_template) */
static bool const_failed(Flattener *F, Elem *el) {
    el->cstate = CONST_FAILED;
    if (F->speculating) vec_push(F->arena, &F->spec_failed, el);
    return false;
}

static bool const_refuse(Flattener *F, Elem *el, const char *why) {
    diag_error(el->decl->span, why, el->name);
    return const_failed(F, el);
}

static bool const_eval(Flattener *F, Tx t, AstNode *e, Val *out);

/* the builtin type at the root of el's declared type (through type
 * aliases: `type Count = Integer`), or NULL */
static Sym elem_base_type(Flattener *F, Elem *el) {
    AstNode *type = el->type;
    Library *lib = el->type_lib;
    for (int depth = 0; type && type->kind == AST_TYPE && depth < 32; depth++) {
        Def *d = sema_try_lookup(F->prog, lib, &type->type.name);
        if (!d && type->type.name.len == 1) return type->type.name.parts[0];
        if (!d || d->node->kind != AST_TYPEDEF) return NULL;
        type = d->node->typedef_.type;
        lib = d->lib;
    }
    return NULL;
}

/* the value takes el's declared type: an Integer element converts a Real
 * that is a whole number (else an error naming the value), a Real one
 * makes an Integer value Real */
bool elem_is_integer(Flattener *F, Elem *el) { return elem_base_type(F, el) == F->s_Integer; }

static bool const_typed(Flattener *F, Elem *el, AstNode *x, Val *v) {
    Sym ty = elem_base_type(F, el);
    if (ty == F->s_Real) v->iv = NULL;
    if (ty != F->s_Integer) return true;
    return val_to_int(F, v, x, arena_printf(F->arena, "`%s` is an Integer", el->name));
}

static bool const_done(Flattener *F, Elem *el, Val v, Val *out) {
    el->cval = ARENA_NEW(F->arena, Val);
    *el->cval = v;
    el->cstate = CONST_DONE;
    *out = v;
    return true;
}

/* the structural value of a parameter (`missing` for a structural parameter
 * without value, or bound to one) */
bool elem_const(Flattener *F, Elem *el, Val *out) {
    switch (el->cstate) {
    case CONST_DONE: *out = *el->cval; return true;
    case CONST_FAILED: return false;
    case CONST_BUSY: return const_refuse(F, el, "the value of `%s` depends on itself");
    case CONST_UNSEEN: break;
    }
    if (el->kind != ELEM_VAR || !elem_is_param_like(el))
        return const_refuse(F, el, "`%s` is a variable, but a value known at compile time is needed");
    AstNode *x = el->value.expr;
    if (x && x->kind == AST_MISSING && el->is_structural) { /* known to be missing */
        Val v = el->nd ? val_new(F, el->nd, el->dims) : val_scalar(NULL);
        v.missing = true;
        return const_done(F, el, v, out);
    }
    if (!x || x->kind == AST_MISSING)
        return const_refuse(F, el, "`%s` has no value, but a value known at compile time is needed");
    el->cstate = CONST_BUSY;
    Val v;
    bool ok = const_eval(F, tx_in(el->value.scope, el->value.env), x, &v) && const_typed(F, el, x, &v);
    if (ok) return const_done(F, el, v, out);
    return const_failed(F, el);
}

/* a division of constants by zero in x (the folder leaves it unfolded), or NULL */
static Expr *div_by_zero(Expr *x) {
    if (expr_is_leaf(x)) return NULL;
    if (x->kind == EXPR_DIV && expr_is_const(x->args[0]) && expr_is_const_value(x->args[1], 0)) return x;
    for (uint8_t i = 0; i < 3 && x->args[i]; i++) {
        Expr *d = div_by_zero(x->args[i]);
        if (d) return d;
    }
    return NULL;
}

/* the first entry of v that is not a constant: why (a division by zero,
 * an operation without a finite value, or variables) */
static void why_not_const(Flattener *F, AstNode *e, const Val *v) {
    for (uint32_t i = 0; i < v->n; i++) {
        Expr *x = val_at(v, i);
        if (expr_is_const(x)) continue;
        ExprVec leaves = {0};
        expr_leaves_any(F->ctx, x, &leaves);
        bool only_consts = true;
        for (uint32_t k = 0; k < leaves.len; k++) only_consts &= expr_is_const(leaves.data[k]);
        Expr *d = div_by_zero(x);
        if (d)
            diag_error(e->span, "division by zero (%s / 0) in a value needed when the model is compiled",
                       dyrt_num(d->args[0]->value).s);
        else if (only_consts)
            diag_error(e->span, "this value, needed when the model is compiled, is not a finite number "
                                "(an operation outside its domain)");
        else
            diag_error(e->span, "this must be known when the model is compiled (a structural value), "
                                "but it depends on variables or time");
        return;
    }
}

/* a structural value that may be `missing` (passed on through bindings) */
static bool const_eval(Flattener *F, Tx t, AstNode *e, Val *out) {
    if (!tr_val(F, tx_structural(t), e, out)) return false;
    if (!out->str && !out->missing && !all_const(out)) {
        why_not_const(F, e, out);
        return false;
    }
    return true;
}

bool const_val(Flattener *F, Tx t, AstNode *e, Val *out) {
    return const_eval(F, t, e, out) && val_present(out, e);
}

/* an Integer where one is needed (sizes, dimensions, lags): exact, or a
 * Real that is a whole number inside the 64-bit range */
bool const_int(Flattener *F, Tx t, AstNode *e, int64_t *out) {
    Val v;
    if (!const_val(F, t, e, &v)) return false;
    if (v.nd != 0 || v.str) {
        diag_error(e->span, "an integer is needed here, not %s", v.str ? "a string" : val_shape_str(F, &v));
        return false;
    }
    if (v.iv) {
        *out = v.iv[0];
        return true;
    }
    return int_from_real(v.s->value, e, "an integer is needed here", out);
}
