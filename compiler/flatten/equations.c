/*
 * equations.c -- from the instance tree to flat equations: expression
 * translation (names -> flat variables), parameter values and attributes,
 * relations (equations, initial, guess, assert, connect), and connection
 * sets.
 *
 * Connection sets (Modelica/MTK semantics, LANGUAGE.md §7): a connector
 * appears in a connect() of instance I either as an *outside* element (a
 * connector of I itself) or an *inside* one (a connector of a
 * subcomponent).  Keys are (variable, side); connect() unions keys with
 * union-find (path halving, union by index: near-linear).  Each set with
 * two or more members gives: potentials/signals equal; flows sum to zero
 * with inside members counted +1 and outside members -1.  An inside flow
 * that takes part in no connect() is set to zero.
 */
#include "flatten_internal.h"

#include <math.h>
#include <string.h>

static bool is_param_kind(FlatVarKind k) { return k == FV_PARAMETER || k == FV_CONSTANT; }

/* ---------- references ---------- */

typedef struct {
    Elem *var;   /* a variable, or */
    Inst *inst;  /* a component/connector instance */
} Ref;

static Ref resolve_ref(Flattener *F, Inst *scope, AstNode *e, bool report) {
    Ref r = {0};
    if (e->kind == AST_IDENT) {
        Elem *el = scope ? inst_elem(scope, e->ident.name) : NULL;
        if (!el) {
            if (report) {
                SymVec names = {0};
                for (uint32_t i = 0; scope && i < scope->elems.len; i++)
                    vec_push(F->arena, &names, scope->elems.data[i]->name);
                Sym hint = suggest_name(e->ident.name, names.data, names.len);
                if (hint) diag_error(e->span, "unknown name `%s`; did you mean `%s`?", e->ident.name, hint);
                else diag_error(e->span, "unknown name `%s`", e->ident.name);
            }
            return r;
        }
        if (el->kind == ELEM_VAR) r.var = el;
        else r.inst = el->child;
        return r;
    }
    if (e->kind == AST_FIELD) {
        Ref b = resolve_ref(F, scope, e->field.base, report);
        if (!b.inst) {
            if (b.var && report)
                diag_error(e->span, "`%s` is a variable and has no field `%s`", b.var->name, e->field.name);
            return r;
        }
        Elem *el = inst_elem(b.inst, e->field.name);
        if (!el) {
            if (report)
                diag_error(e->span, "`%s` (a `%s`) has no element `%s`", b.inst->path,
                           b.inst->def->name, e->field.name);
            return r;
        }
        if (el->kind == ELEM_VAR) r.var = el;
        else r.inst = el->child;
        return r;
    }
    if (report) diag_error(e->span, "indexing is not supported yet");
    return r;
}

/* ---------- expressions ---------- */

static Expr *der_leaf(void *ud, Expr *leaf) {
    Flattener *F = ud;
    if (leaf->kind == EXPR_VAR && !is_param_kind(F->m->vars.data[leaf->index].kind))
        return expr_leaf(F->ctx, EXPR_DER, leaf->index);
    if (leaf->kind == EXPR_DER) return NULL; /* reported by the caller */
    return NULL;
}

static bool has_der(Flattener *F, Expr *e) {
    ExprVec v = {0};
    expr_leaves(F->ctx, e, EXPR_DER, &v);
    return v.len > 0;
}

static Expr *tr_der(Flattener *F, Inst *scope, AstNode *call) {
    if (call->call.args.len != 1) {
        diag_error(call->span, "der() takes exactly one argument");
        return NULL;
    }
    Expr *a = tr_expr(F, scope, call->call.args.items[0]->arg.value);
    if (!a) return NULL;
    if (has_der(F, a)) {
        diag_error(call->span, "der(der(...)) is not supported yet; introduce a variable for the inner derivative");
        return NULL;
    }
    return expr_dt(F->ctx, a, der_leaf, F);
}

static Expr *tr_call(Flattener *F, Inst *scope, AstNode *e) {
    AstNode *callee = e->call.callee;
    if (callee->kind != AST_IDENT) {
        diag_error(callee->span, "calls of library functions are not supported yet");
        return NULL;
    }
    Sym name = callee->ident.name;
    if (name == F->s_der) return tr_der(F, scope, e);
    uint32_t n = e->call.args.len;
    Expr *a[3] = {0};
    for (uint32_t i = 0; i < n && i < 3; i++) {
        AstNode *arg = e->call.args.items[i];
        if (arg->arg.name) {
            diag_error(arg->span, "`%s` takes no keyword arguments", name);
            return NULL;
        }
        if (!(a[i] = tr_expr(F, scope, arg->arg.value))) return NULL;
    }
    if (name == F->s_ifelse) {
        if (n != 3) {
            diag_error(e->span, "ifelse(condition, a, b) takes three arguments");
            return NULL;
        }
        return expr_ifelse(F->ctx, a[0], a[1], a[2]);
    }
    int fn = expr_fn_lookup(name);
    if (fn < 0) {
        diag_error(callee->span, "unknown function `%s`", name);
        return NULL;
    }
    if ((int)n != expr_fn_arity[fn]) {
        diag_error(e->span, "`%s` takes %d argument%s, not %u", name, expr_fn_arity[fn],
                   expr_fn_arity[fn] == 1 ? "" : "s", n);
        return NULL;
    }
    return expr_call(F->ctx, (ExprFn)fn, a[0], a[1]);
}

static Expr *tr_binary(Flattener *F, AstOp op, Expr *a, Expr *b) {
    ExprCtx *c = F->ctx;
    switch (op) {
    case OP_ADD: case OP_EADD: return expr_add(c, a, b);
    case OP_SUB: case OP_ESUB: return expr_sub(c, a, b);
    case OP_MUL: case OP_EMUL: return expr_mul(c, a, b);
    case OP_DIV: case OP_EDIV: return expr_div(c, a, b);
    case OP_POW: case OP_EPOW: return expr_pow(c, a, b);
    case OP_MOD: case OP_EMOD: return expr_call(c, FN_REM, a, b);
    case OP_LT: return expr_cmp(c, EXPR_LT, a, b);
    case OP_LE: return expr_cmp(c, EXPR_LE, a, b);
    case OP_GT: return expr_cmp(c, EXPR_GT, a, b);
    case OP_GE: return expr_cmp(c, EXPR_GE, a, b);
    case OP_EQ: return expr_cmp(c, EXPR_EQ, a, b);
    case OP_NE: return expr_cmp(c, EXPR_NE, a, b);
    case OP_AND: return expr_and(c, a, b);
    case OP_OR: return expr_or(c, a, b);
    default: return NULL;
    }
}

static Expr *tr_name(Flattener *F, Inst *scope, AstNode *e) {
    if (e->kind == AST_IDENT && (!scope || !inst_elem(scope, e->ident.name))) {
        Sym n = e->ident.name;
        if (n == F->s_time) return expr_time(F->ctx);
        if (n == F->s_pi || n == F->s_pi_u) return expr_const(F->ctx, 3.14159265358979323846);
    }
    Ref r = resolve_ref(F, scope, e, true);
    if (r.inst) {
        diag_error(e->span, "`%s` is a component, not a value", r.inst->path);
        return NULL;
    }
    return r.var ? expr_leaf(F->ctx, EXPR_VAR, r.var->var) : NULL;
}

Expr *tr_expr(Flattener *F, Inst *scope, AstNode *e) {
    Expr *a, *b, *c;
    switch (e->kind) {
    case AST_NUM: return expr_const(F->ctx, e->num.value);
    case AST_BOOL: return expr_const(F->ctx, e->boolean.value);
    case AST_IDENT: case AST_FIELD: case AST_INDEX: return tr_name(F, scope, e);
    case AST_UNARY:
        if (!(a = tr_expr(F, scope, e->unary.lhs))) return NULL;
        if (e->unary.op == OP_NEG) return expr_neg(F->ctx, a);
        if (e->unary.op == OP_NOT) return expr_not(F->ctx, a);
        return a;
    case AST_BINARY:
        if (!(a = tr_expr(F, scope, e->binary.lhs)) || !(b = tr_expr(F, scope, e->binary.rhs)))
            return NULL;
        return tr_binary(F, e->binary.op, a, b);
    case AST_IFEXPR:
        if (!(c = tr_expr(F, scope, e->ifexpr.cond)) || !(a = tr_expr(F, scope, e->ifexpr.then)) ||
            !(b = tr_expr(F, scope, e->ifexpr.else_)))
            return NULL;
        return expr_ifelse(F->ctx, c, a, b);
    case AST_CALL: return tr_call(F, scope, e);
    case AST_MISSING:
        diag_error(e->span, "`missing` is only allowed as a parameter value");
        return NULL;
    case AST_STR:
        diag_error(e->span, "a string is not a number");
        return NULL;
    default:
        diag_error(e->span, "this expression form (%s) is not supported yet", ast_kind_names[e->kind]);
        return NULL;
    }
}

/* ---------- values and attributes ---------- */

static const char *str_value(AstNode *e) {
    return e && e->kind == AST_STR ? e->str.value : NULL;
}

static void set_attr(Flattener *F, Elem *el, FlatVar *v, AstNode *mod, Inst *scope) {
    const char *n = mod->mod.name;
    AstNode *val = mod->mod.value;
    if (!val && !mod->mod.has_initial) return;
    if (strcmp(n, "units") == 0 || strcmp(n, "displayUnits") == 0 || strcmp(n, "quantity") == 0) {
        if (!str_value(val)) diag_error(mod->span, "`%s` must be a string", n);
        else if (n[0] == 'u') v->units = str_value(val);
        return;
    }
    if (strcmp(n, "initial") == 0) {
        el->initial = (Binding){val, scope, false};
        return;
    }
    Expr *x = tr_expr(F, scope, val);
    if (!x) return;
    if (strcmp(n, "guess") == 0) v->guess = x;
    else if (strcmp(n, "min") == 0 || strcmp(n, "max") == 0 || strcmp(n, "statePriority") == 0 ||
             strcmp(n, "nominal") == 0) {
        if (!expr_is_const(x)) {
            diag_error(mod->span, "`%s` must be a constant", n);
            return;
        }
        if (n[1] == 'i') v->min = x->value;
        else if (n[1] == 'a') v->max = x->value;
        else if (n[0] == 's') v->state_priority = (int)x->value;
    } else if (strcmp(n, "minInclusive") && strcmp(n, "maxInclusive")) {
        diag_error(mod->span, "unknown attribute `%s` (expected units, guess, min, max, "
                              "nominal, statePriority, initial)", n);
    }
}

/* attributes from the type alias chain, base first (derived ones win) */
static void type_attrs(Flattener *F, Elem *el, FlatVar *v, AstNode *type, Library *lib, int depth) {
    if (!type || type->kind != AST_TYPE || depth > 32) return;
    Def *d = sema_try_lookup(F->prog, lib, &type->type.name);
    if (d && d->node->kind == AST_TYPEDEF) type_attrs(F, el, v, d->node->typedef_.type, d->lib, depth + 1);
    else if (!d && type->type.name.len == 1) {
        Sym n = type->type.name.parts[0];
        if (n != F->s_Real && n != F->s_Integer && n != F->s_Boolean && n != F->s_String)
            sema_lookup(F->prog, lib, &type->type.name); /* reports unknown type */
    }
    if (depth > 0)
        for (uint32_t i = 0; i < type->type.mods.len; i++)
            set_attr(F, el, v, type->type.mods.items[i], NULL);
}

static void add_eq(Flattener *F, FlatEqKind k, Expr *l, Expr *r, const char *origin, Span sp) {
    vec_push(F->arena, &F->m->eqs, ((FlatEq){k, l, r, origin, sp}));
}

static void var_binding(Flattener *F, Elem *el, FlatVar *v) {
    AstNode *val = el->value.expr;
    Expr *self = expr_leaf(F->ctx, EXPR_VAR, el->var);
    if (val && val->kind == AST_MISSING) {
        if (v->kind == FV_PARAMETER) v->kind = FV_PARAM_MISSING;
        else diag_error(val->span, "only a parameter can be `missing`");
    } else if (val) {
        Expr *x = tr_expr(F, el->value.scope, val);
        if (x && is_param_kind(v->kind)) v->value = x;
        else if (x) add_eq(F, FE_NORMAL, self, x, el->owner->path, val->span);
    } else if (v->kind == FV_PARAMETER) {
        diag_error(el->decl->span, "parameter `%s` has no value; give it one with a modifier, "
                                   "e.g. `%s = ...`", v->name, el->name);
    }
    AstNode *init = el->initial.expr;
    if (init && init->kind != AST_MISSING) {
        Expr *x = tr_expr(F, el->initial.scope, init);
        if (x) add_eq(F, FE_INITIAL, self, x, el->owner->path, init->span);
    }
}

void flatten_bindings(Flattener *F) {
    for (uint32_t i = 0; i < F->var_elems.len; i++) {
        Elem *el = F->var_elems.data[i];
        FlatVar *v = &F->m->vars.data[i];
        type_attrs(F, el, v, el->type, el->type_lib, 0);
        for (uint32_t k = 0; k < el->attrs.len; k++)
            set_attr(F, el, v, el->attrs.data[k].mod, el->attrs.data[k].scope);
        v->is_final = el->value.is_final;
        var_binding(F, el, v);
    }
}

/* ---------- relations ---------- */

static void tr_equation(Flattener *F, Inst *inst, AstNode *r) {
    Expr *l = tr_expr(F, inst, r->eq.lhs), *rhs = tr_expr(F, inst, r->eq.rhs);
    if (!l || !rhs) return;
    if (r->eq.kind == EQ_GUESS) {
        if (l->kind != EXPR_VAR) {
            diag_error(r->eq.lhs->span, "the left side of `guess` must be a variable");
            return;
        }
        F->m->vars.data[l->index].guess = rhs;
        return;
    }
    add_eq(F, r->eq.kind == EQ_INITIAL ? FE_INITIAL : FE_NORMAL, l, rhs, inst->path, r->span);
}

static void connect_members(Flattener *F, Inst *inst, AstNode *r);

static void tr_relation(Flattener *F, Inst *inst, AstNode *r) {
    switch (r->kind) {
    case AST_EQUATION: tr_equation(F, inst, r); break;
    case AST_CONNECT: connect_members(F, inst, r); break;
    case AST_ASSERT: {
        Expr *c = tr_expr(F, inst, r->assert_.cond);
        if (c) vec_push(F->arena, &F->m->asserts, ((FlatAssert){c, r->assert_.message->str.value, r->span}));
        break;
    }
    case AST_ANALYSIS_POINT: case AST_CONTINUITY: break; /* no equations */
    default:
        diag_error(r->span, "this relation form (%s) is not supported yet", ast_kind_names[r->kind]);
    }
}

void flatten_relations(Flattener *F, Inst *inst) {
    for (uint32_t i = 0; i < inst->relations.len; i++) tr_relation(F, inst, inst->relations.data[i]);
    for (uint32_t i = 0; i < inst->elems.len; i++)
        if (inst->elems.data[i]->child) flatten_relations(F, inst->elems.data[i]->child);
}

/* ---------- connections ---------- */

static uint32_t uf_find(uint32_t *uf, uint32_t x) {
    while (uf[x] != x) x = uf[x] = uf[uf[x]];
    return x;
}

static void uf_union(Flattener *F, uint32_t a, uint32_t b) {
    a = uf_find(F->uf, a);
    b = uf_find(F->uf, b);
    if (a != b) F->uf[a > b ? a : b] = a < b ? a : b;
}

static void use_key(Flattener *F, uint32_t key, Inst *inst, Span sp) {
    if (!F->key_used[key]) {
        F->key_used[key] = 1;
        F->key_span[key] = sp;
        F->key_origin[key] = inst->path;
    }
}

/* union two connector members field by field */
static void connect_pair(Flattener *F, Inst *inst, Ref a, int sa, Ref b, int sb, AstNode *r, AstNode *arg) {
    if (a.var || b.var) {
        if (!a.var || !b.var) {
            diag_error(arg->span, "cannot connect a signal with a composite connector");
            return;
        }
        uint32_t ka = 2 * a.var->var + sa, kb = 2 * b.var->var + sb;
        use_key(F, ka, inst, r->span);
        use_key(F, kb, inst, r->span);
        uf_union(F, ka, kb);
        return;
    }
    if (a.inst->def != b.inst->def && a.inst->elems.len != b.inst->elems.len) {
        diag_error(arg->span, "cannot connect `%s` (a `%s`) with `%s` (a `%s`)", a.inst->path,
                   a.inst->def->name, b.inst->path, b.inst->def->name);
        return;
    }
    for (uint32_t i = 0; i < a.inst->elems.len; i++) {
        Elem *ea = a.inst->elems.data[i], *eb = inst_elem(b.inst, ea->name);
        if (!eb || eb->kind != ea->kind || (ea->kind == ELEM_VAR && ea->vkind != eb->vkind)) {
            diag_error(arg->span, "cannot connect `%s` with `%s`: field `%s` does not match",
                       a.inst->path, b.inst->path, ea->name);
            return;
        }
        Ref fa = {ea->kind == ELEM_VAR ? ea : NULL, ea->child}, fb = {eb->kind == ELEM_VAR ? eb : NULL, eb->child};
        if (ea->kind == ELEM_VAR && (ea->vkind == VAR_PARAMETER || ea->vkind == VAR_PATH)) continue;
        connect_pair(F, inst, fa, sa, fb, sb, r, arg);
    }
}

static bool is_connector_ref(Ref r) {
    if (r.inst) return r.inst->is_connector;
    return r.var && r.var->vkind >= VAR_POTENTIAL && r.var->vkind <= VAR_OUTPUT;
}

static void connect_members(Flattener *F, Inst *inst, AstNode *r) {
    Ref first = {0};
    int first_side = 0;
    for (uint32_t i = 0; i < r->connect.args.len; i++) {
        AstNode *arg = r->connect.args.items[i];
        Ref x = resolve_ref(F, inst, arg, true);
        if (!x.var && !x.inst) return;
        if (!is_connector_ref(x)) {
            diag_error(arg->span, "only connectors can be connected; `%s` is not a connector",
                       x.inst ? x.inst->path : x.var->name);
            return;
        }
        Inst *owner = x.inst ? x.inst->parent : x.var->owner;
        int side = owner == inst ? 1 : 0;
        if (i == 0) {
            first = x;
            first_side = side;
        } else {
            connect_pair(F, inst, first, first_side, x, side, r, arg);
        }
    }
}

static void set_equations(Flattener *F, uint32_t *members, uint32_t n) {
    ExprCtx *c = F->ctx;
    uint32_t k0 = members[0];
    FlatVar *v0 = &F->m->vars.data[k0 / 2];
    if (v0->conn == FC_FLOW || v0->conn == FC_STREAM) {
        if (v0->conn == FC_STREAM) return; /* stream semantics: later */
        Expr *sum = expr_const(c, 0);
        for (uint32_t i = 0; i < n; i++) {
            Expr *x = expr_leaf(c, EXPR_VAR, members[i] / 2);
            sum = members[i] % 2 ? expr_sub(c, sum, x) : expr_add(c, sum, x);
        }
        add_eq(F, FE_NORMAL, sum, expr_const(c, 0), F->key_origin[k0], F->key_span[k0]);
        return;
    }
    Expr *x0 = expr_leaf(c, EXPR_VAR, k0 / 2);
    for (uint32_t i = 1; i < n; i++)
        if (members[i] / 2 != k0 / 2)
            add_eq(F, FE_NORMAL, x0, expr_leaf(c, EXPR_VAR, members[i] / 2), F->key_origin[members[i]],
                   F->key_span[members[i]]);
}

void flatten_connections(Flattener *F) {
    uint32_t nk = 2 * F->m->vars.len;
    /* bucket the used keys by root, in key order: deterministic */
    uint32_t *count = ARENA_ARRAY(F->arena, uint32_t, nk + 1);
    uint32_t *start = ARENA_ARRAY(F->arena, uint32_t, nk + 1);
    uint32_t *members = ARENA_ARRAY(F->arena, uint32_t, nk + 1);
    for (uint32_t k = 0; k < nk; k++)
        if (F->key_used[k]) count[uf_find(F->uf, k)]++;
    for (uint32_t k = 0, s = 0; k < nk; k++) {
        start[k] = s;
        s += count[k];
    }
    uint32_t *fill = ARENA_ARRAY(F->arena, uint32_t, nk + 1);
    for (uint32_t k = 0; k < nk; k++)
        if (F->key_used[k]) {
            uint32_t root = uf_find(F->uf, k);
            members[start[root] + fill[root]++] = k;
        }
    for (uint32_t k = 0; k < nk; k++)
        if (count[k] >= 2) set_equations(F, members + start[k], count[k]);
    /* inside flows in no connection are zero */
    for (uint32_t v = 0; v < F->m->vars.len; v++) {
        FlatVar *fv = &F->m->vars.data[v];
        if (fv->conn == FC_FLOW && !F->key_used[2 * v])
            add_eq(F, FE_NORMAL, expr_leaf(F->ctx, EXPR_VAR, v), expr_const(F->ctx, 0),
                   F->var_elems.data[v]->owner->path, fv->span);
    }
}
