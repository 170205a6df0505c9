/*
 * functions.c -- pure functions written in .dyad (our extension, see
 * docs/LANGUAGE.md), inlined at each call:
 *
 *   function f(x::Real, v::Real[3])::Real
 *     a = x * 2          # local assignment
 *     a + v[1]           # the last line is the result
 *   end
 *
 * The arguments are translated in the caller's scope; the body is then
 * translated with only the parameters and locals in scope (no access to the
 * caller's variables), so the result is an ordinary expression the later
 * phases can differentiate.  Arguments and results may be scalars, arrays
 * or structs (a struct value is the vector of its fields; `p.x` selects); `if` expressions select at compile time when their condition is
 * constant.  Cost: proportional to the size of the inlined body per call.
 */
#include "flatten_internal.h"

#define MAX_FN_DEPTH 32

static AstNode *find_param(AstNode *fn, Sym name, uint32_t *index) {
    for (uint32_t i = 0; i < fn->func.params.len; i++)
        if (fn->func.params.items[i]->decl.name == name) {
            *index = i;
            return fn->func.params.items[i];
        }
    return NULL;
}

/* the struct a parameter or result is declared with, or NULL */
static Def *decl_struct(Flattener *F, Def *fn, AstNode *type) {
    if (!type || type->kind != AST_TYPE) return NULL;
    Def *d = sema_try_lookup(F->prog, fn->lib, &type->type.name);
    return d && d->node->kind == AST_STRUCT ? d : NULL;
}

/* a struct value is the vector of its fields: check its length */
static bool check_struct(Flattener *F, Def *sd, Val *v, AstNode *at, const char *what) {
    uint32_t n = 0, off, m;
    Def *sub;
    AstList *fs = &sd->node->def.decls;
    for (uint32_t k = 0; k < fs->len; k++) {
        if (!struct_field_slice(F, sd, fs->items[k]->decl.name, &off, &m, &sub, at)) return false;
        n = off + m;
    }
    if (v->nd == 1 && v->n == n) return true;
    diag_error(at->span, "%s must be a `%s` value", what, sd->name);
    return false;
}

/* check a value against declared dimensions (evaluated in the callee env) */
static bool check_dims(Flattener *F, Tx t, AstList *dims, Val *v, AstNode *at, const char *what) {
    if (!dims->len) {
        if (v->nd == 0) return true;
        diag_error(at->span, "%s is declared as a scalar but gets an array", what);
        return false;
    }
    if (dims->len != v->nd) {
        diag_error(at->span, "%s is declared with %u dimension%s but gets %u", what, dims->len,
                   dims->len == 1 ? "" : "s", v->nd);
        return false;
    }
    for (uint32_t k = 0; k < dims->len; k++) {
        AstNode *d = dims->items[k];
        if (d->kind == AST_COLON) continue;
        int64_t n;
        if (!const_int(F, t, d, &n)) return false;
        if ((uint32_t)n != v->dims[k]) {
            diag_error(at->span, "%s: dimension %u must be %lld, but it is %u", what, k + 1, (long long)n,
                       v->dims[k]);
            return false;
        }
    }
    return true;
}

static bool bind_args(Flattener *F, Tx t, AstNode *call, AstNode *fn, Val *vals, bool *given) {
    uint32_t np = fn->func.params.len;
    for (uint32_t i = 0; i < call->call.args.len; i++) {
        AstNode *a = call->call.args.items[i];
        uint32_t k = i;
        if (a->arg.name && !find_param(fn, a->arg.name, &k)) {
            diag_error(a->span, "function `%s` has no argument `%s`", fn->func.name, a->arg.name);
            return false;
        }
        if (k >= np) {
            diag_error(a->span, "function `%s` takes %u argument%s", fn->func.name, np, np == 1 ? "" : "s");
            return false;
        }
        if (given[k]) {
            diag_error(a->span, "argument `%s` is given twice", fn->func.params.items[k]->decl.name);
            return false;
        }
        if (!tr_val(F, t, a->arg.value, &vals[k])) return false;
        given[k] = true;
    }
    return true;
}

/* a local assigned a constructor call `q = Point(...)` is struct-typed */
static Def *decl_struct_value(Flattener *F, Tx t, AstNode *call) {
    AstNode *c = call->call.callee;
    if (c->kind != AST_IDENT) return NULL;
    AstQName q = {&c->ident.name, 1, c->span};
    Def *d = sema_try_lookup(F->prog, tx_lib(F, t), &q);
    return d && d->node->kind == AST_STRUCT ? d : NULL;
}

/* the body, in the callee's context t (its arguments bound in t.env) */
static bool run_body(Flattener *F, Tx t, Def *def, Val *out) {
    AstNode *fn = def->node;
    AstList *body = &fn->func.body;
    if (!body->len || body->items[body->len - 1]->fstmt.name) {
        diag_error(fn->span, "function `%s` must end with its result expression", fn->func.name);
        return false;
    }
    for (uint32_t i = 0; i < body->len; i++) {
        AstNode *st = body->items[i];
        Val v;
        if (!tr_val(F, t, st->fstmt.value, &v)) return false;
        Def *sd = st->fstmt.value->kind == AST_CALL ? decl_struct_value(F, t, st->fstmt.value) : NULL;
        if (!st->fstmt.name) {
            *out = v;
            Def *rs = decl_struct(F, def, fn->func.result);
            if (rs) return check_struct(F, rs, out, st, "the result");
            return check_dims(F, t, &fn->func.result_dims, out, st, "the result");
        }
        t.env = env_push(F, t.env, st->fstmt.name, v);
        t.env->sdef = sd;
    }
    return false;
}

/* bind the parameters in order (a default sees the earlier ones) */
static bool bind_params(Flattener *F, Tx *callee, AstNode *call, Def *def, Val *vals, bool *given) {
    AstNode *fn = def->node;
    bool ok = true;
    for (uint32_t k = 0; ok && k < fn->func.params.len; k++) {
        AstNode *p = fn->func.params.items[k];
        if (!given[k] && p->decl.value) {
            ok = tr_val(F, *callee, p->decl.value, &vals[k]);
        } else if (!given[k]) {
            diag_error(call->span, "function `%s` needs argument `%s`", fn->func.name, p->decl.name);
            ok = false;
        }
        const char *what = arena_printf(F->arena, "argument `%s`", p->decl.name);
        Def *sd = decl_struct(F, def, p->decl.type);
        if (ok) ok = sd ? check_struct(F, sd, &vals[k], call, what) : check_dims(F, *callee, &p->decl.dims, &vals[k], call, what);
        callee->env = env_push(F, callee->env, p->decl.name, vals[k]);
        callee->env->sdef = sd;
    }
    return ok;
}

bool tr_function_call(Flattener *F, Tx t, AstNode *call, Def *def, Val *out) {
    AstNode *fn = def->node;
    if (t.fn_depth >= MAX_FN_DEPTH) {
        diag_error(call->span, "function `%s` calls itself (recursion is not supported)", fn->func.name);
        return false;
    }
    uint32_t np = fn->func.params.len;
    Val *vals = ARENA_ARRAY(F->arena, Val, np ? np : 1);
    bool *given = ARENA_ARRAY(F->arena, bool, np ? np : 1);
    if (!bind_args(F, t, call, fn, vals, given)) return false;
    Tx callee = t; /* keeps `structural` and the der() helper */
    callee.scope = NULL;
    callee.env = NULL;
    callee.lib = def->lib;
    callee.end = 0;
    callee.fn_depth = (uint8_t)(t.fn_depth + 1);
    bool ok = bind_params(F, &callee, call, def, vals, given) && run_body(F, callee, def, out);
    if (!ok && t.fn_depth == 0) diag_note(fn->span, "in the call of function `%s` defined here", fn->func.name);
    return ok;
}
