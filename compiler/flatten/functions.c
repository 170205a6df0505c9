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
 * of any rank (shapes checked against the declaration) or structs (a
 * struct value is the vector of its fields and knows its type; `p.x`
 * selects with the field's shape).  A connector or component instance is
 * passed to an argument declared with a struct, connector or component
 * type as the value of that type, field by field by name
 * (`absolute_rotation(frame_a, R_rel)` with `R1::RotationMatrix` reads
 * `frame_a.R`).  `missing` may be passed on; ismissing() tests it at
 * compile time.  `if` expressions select at compile time when their
 * condition is constant.  Cost: proportional to the size of the inlined
 * body per call.
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

/* the struct (connector, component) a parameter or result is declared
 * with, or NULL */
static Def *decl_struct(Flattener *F, Def *fn, AstNode *type) { return struct_type(F, fn->lib, type); }

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

/* an argument: an instance passed to a struct-typed parameter is the value
 * of that type; anything else is translated as an expression */
static bool arg_value(Flattener *F, Tx t, AstNode *x, AstNode *param, Def *psd, Val *out) {
    Ref r;
    bool is_name = x->kind == AST_IDENT || x->kind == AST_FIELD || x->kind == AST_INDEX;
    if (is_name && !(x->kind == AST_IDENT && env_find(t.env, x->ident.name)) && resolve_ref(F, t, x, false, &r) &&
        r.inst && r.inst->def->node->kind != AST_STRUCT) {
        if (psd) return struct_from_inst(F, t, r.inst, psd, x, out);
        diag_error(x->span, "`%s` is a %s; a function takes it only as an argument declared with a struct, "
                            "connector or component type (e.g. `%s::%s`)", r.inst->path,
                   r.inst->is_connector ? "connector" : "component", param->decl.name, r.inst->def->name);
        return false;
    }
    return tr_val(F, t, x, out);
}

static bool bind_args(Flattener *F, Tx t, AstNode *call, Def *def, Val *vals, bool *given) {
    AstNode *fn = def->node;
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
        AstNode *param = fn->func.params.items[k];
        if (!arg_value(F, t, a->arg.value, param, decl_struct(F, def, param->decl.type), &vals[k]))
            return false;
        given[k] = true;
    }
    return true;
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
        if (!st->fstmt.name) {
            Def *rs = decl_struct(F, def, fn->func.result);
            if (rs) return struct_coerce(F, v, rs, st, "the result", out);
            *out = v;
            return check_dims(F, t, &fn->func.result_dims, out, st, "the result");
        }
        t.env = env_push(F, t.env, st->fstmt.name, v);
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
        if (ok && sd) ok = vals[k].missing || struct_coerce(F, vals[k], sd, call, what, &vals[k]);
        else if (ok) ok = check_dims(F, *callee, &p->decl.dims, &vals[k], call, what);
        callee->env = env_push(F, callee->env, p->decl.name, vals[k]);
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
    if (!bind_args(F, t, call, def, vals, given)) return false;
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
