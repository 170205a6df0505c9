/*
 * instance.c -- building the instance tree: inheritance, declarations,
 * modifications, subcomponents.  Each instance is built in three steps:
 *   1. collect: elements and relations of every `extends` base (depth
 *      first, with the extends-clause modifications applied), then its own;
 *      an `extends` cycle is reported at the clause that closes it;
 *   2. apply the modifications handed down by the instantiating parent
 *      (outer modifications override inner ones; `final` forbids it; a
 *      component element may be replaced, also by a call-shaped value
 *      `source = CurrentSource(I = 1)`, within its type constraint);
 *   3. elaborate, in declaration order: evaluate conditions of conditional
 *      declarations, evaluate array sizes, create the flat variables
 *      (scalarized: `x[1]`, `R[1,2]`), build each subcomponent (and every
 *      element of a component array) recursively.
 * Linear in the size of the expanded tree.
 */
#include "flatten_internal.h"

#include <string.h>

#define MAX_DEPTH 64

Elem *inst_elem(Inst *inst, Sym name) {
    if (inst->elems.len <= INST_SMALL) {
        for (uint32_t i = 0; i < inst->elems.len; i++)
            if (inst->elems.data[i]->name == name) return inst->elems.data[i];
        return NULL;
    }
    return hmap_get(&inst->by_name, (uint64_t)(uintptr_t)name);
}

static void index_elems(Flattener *F, Inst *inst) {
    if (inst->elems.len == INST_SMALL + 1 && !inst->by_name.len)
        for (uint32_t i = 0; i < inst->elems.len; i++)
            hmap_put(F->arena, &inst->by_name, (uint64_t)(uintptr_t)inst->elems.data[i]->name, inst->elems.data[i]);
    else if (inst->elems.len > INST_SMALL + 1)
        hmap_put(F->arena, &inst->by_name, (uint64_t)(uintptr_t)inst->elems.data[inst->elems.len - 1]->name,
                 inst->elems.data[inst->elems.len - 1]);
}

const char *inst_child_path(Flattener *F, Inst *parent, Sym name) {
    if (!parent->path[0]) return name;
    return arena_printf(F->keep, "%s.%s", parent->path, name);
}

/* an analysis may redeclare an inherited element (`model = M()` replaces
 * the base's `model::EmptyComponent`) */
static bool redeclare(Flattener *F, Inst *inst, Elem *old, Elem *e) {
    if (!inst->is_analysis || old->kind != e->kind) return false;
    for (uint32_t i = 0; i < inst->elems.len; i++)
        if (inst->elems.data[i] == old) inst->elems.data[i] = e;
    e->owner = inst;
    if (inst->elems.len > INST_SMALL) hmap_put(F->arena, &inst->by_name, (uint64_t)(uintptr_t)e->name, e);
    return true;
}

static void add_elem(Flattener *F, Inst *inst, Elem *e) {
    Elem *old = inst_elem(inst, e->name);
    if (old && redeclare(F, inst, old, e)) return;
    if (old) {
        diag_error(e->decl->span, "`%s` is declared twice in `%s`", e->name, inst->def->name);
        diag_note(old->decl->span, "the first declaration is here");
        return;
    }
    e->owner = inst;
    vec_push(F->arena, &inst->elems, e);
    index_elems(F, inst);
}

static void add_mods(Flattener *F, PendingVec *v, AstNode *type, Inst *scope, Env *env) {
    if (!type || type->kind != AST_TYPE) return;
    for (uint32_t i = 0; i < type->type.mods.len; i++)
        vec_push(F->arena, v, ((Pending){type->type.mods.items[i], scope, env}));
}

/* `f(k = v)` argument -> the modification `k = v` */
AstNode *mod_from_arg(Flattener *F, AstNode *arg) {
    AstNode *m = ARENA_NEW(F->arena, AstNode);
    m->kind = AST_MOD;
    m->span = arg->span;
    m->mod.name = arg->arg.name;
    m->mod.value = arg->arg.value;
    return m;
}

/* a call-shaped component value `Name(k = v, ...)` -> AST_TYPE; NULL if the
 * callee is not a (qualified) name or an argument is positional */
static AstNode *call_as_type(Flattener *F, AstNode *call) {
    Sym parts[16];
    uint32_t n = field_chain_qname(call->kind == AST_CALL ? call->call.callee : call, parts, 16);
    if (!n) return NULL;
    AstNode *t = ARENA_NEW(F->arena, AstNode);
    t->kind = AST_TYPE;
    t->span = call->span;
    t->type.name.parts = ARENA_ARRAY(F->arena, Sym, n);
    for (uint32_t i = 0; i < n; i++) t->type.name.parts[i] = parts[i];
    t->type.name.len = n;
    t->type.name.span = call->kind == AST_CALL ? call->call.callee->span : call->span;
    t->type.has_parens = call->kind == AST_CALL;
    if (call->kind != AST_CALL) return t;
    AstList *args = &call->call.args;
    t->type.mods.items = ARENA_ARRAY(F->arena, AstNode *, args->len ? args->len : 1);
    for (uint32_t i = 0; i < args->len; i++) {
        if (!args->items[i]->arg.name) {
            diag_error(args->items[i]->span, "give component arguments by name, e.g. `R = 100`");
            return NULL;
        }
        t->type.mods.items[t->type.mods.len++] = mod_from_arg(F, args->items[i]);
    }
    return t;
}

/* A connector of the form `connector RealInput = input Real`. */
static AstNode *scalar_connector(Def *d) {
    if (!d || d->node->kind != AST_CONNECTOR) return NULL;
    return d->node->def.alias;
}

static Elem *elem_new(Flattener *F, ElemKind k, Sym name, AstNode *decl) {
    flat_charge(F, 1, decl ? decl->span : (Span){0}); /* instances: checked where they are expanded */
    Elem *e = ARENA_NEW(F->arena, Elem);
    e->kind = k;
    e->name = name;
    e->decl = decl;
    e->var = NO_VAR;
    return e;
}

static Def *struct_def(Flattener *F, Library *lib, AstNode *type) {
    if (!type || type->kind != AST_TYPE) return NULL;
    Def *d = sema_try_lookup(F->prog, lib, &type->type.name);
    return d && d->node->kind == AST_STRUCT ? d : NULL;
}

/* `parameter g::Geometry = Geometry(length = 2)`: an instance of the struct
 * whose fields take the declaration's kind; the constructor's arguments are
 * modifications of the fields */
static Elem *struct_elem(Flattener *F, Inst *inst, AstNode *decl, Def *sd) {
    Elem *e = elem_new(F, ELEM_INST, decl->decl.name, decl);
    e->def = sd;
    e->vkind = decl->decl.kind;
    e->is_structural = decl->decl.is_structural;
    e->value.is_final = decl->decl.is_final;
    AstNode *v = decl->decl.value;
    if (decl->decl.dims.len) diag_error(decl->span, "arrays of structs are not supported yet");
    if (v && (v->kind == AST_CALL || v->kind == AST_IDENT || v->kind == AST_FIELD)) {
        AstNode *t = call_as_type(F, v);
        Def *d = t ? sema_try_lookup(F->prog, inst->def->lib, &t->type.name) : NULL;
        if (d != sd) diag_error(v->span, "`%s` needs a `%s(...)` value", decl->decl.name, sd->name);
        else add_mods(F, &e->mods, t, inst, NULL);
    } else if (v) {
        diag_error(v->span, "`%s` needs a `%s(...)` value", decl->decl.name, sd->name);
    }
    return e;
}

static Elem *var_elem(Flattener *F, Inst *inst, AstNode *decl) {
    Def *sd = struct_def(F, inst->def->lib, decl->decl.type);
    if (sd) return struct_elem(F, inst, decl, sd);
    Elem *e = elem_new(F, ELEM_VAR, decl->decl.name, decl);
    e->vkind = decl->decl.kind;
    e->is_structural = decl->decl.is_structural;
    e->value = (Binding){decl->decl.value, inst, NULL, decl->decl.is_final};
    if (decl->decl.has_initial) e->initial = (Binding){decl->decl.initial, inst, NULL, false};
    e->type = decl->decl.type;
    e->type_lib = inst->def->lib;
    add_mods(F, &e->attrs, decl->decl.type, inst, NULL);
    return e;
}

/* `u = RealInput()` where RealInput is a scalar connector: a variable
 * (an array of them for `u = [RealInput() for i in 1:n]`) */
static Elem *scalar_conn_elem(Flattener *F, Inst *inst, AstNode *decl, AstNode *t, Def *d) {
    AstNode *alias = scalar_connector(d);
    Elem *e = elem_new(F, ELEM_VAR, decl->inst.name, decl);
    e->vkind = alias->decl.kind;
    e->type = alias->decl.type;
    e->type_lib = d->lib;
    add_mods(F, &e->attrs, alias->decl.type, NULL, NULL);
    if (decl->inst.value->kind == AST_COMPREHENSION) {
        e->compr = decl->inst.value;
        e->compr_scope = inst;
        add_mods(F, &e->elem_attrs, t, inst, NULL); /* may use the loop variables */
    } else {
        add_mods(F, &e->attrs, t, inst, NULL);
    }
    return e;
}

static Def *lookup_component(Flattener *F, Library *lib, AstNode *t) {
    Def *d = sema_lookup(F->prog, lib, &t->type.name);
    if (!d) return NULL;
    if (d->node->kind != AST_COMPONENT && d->node->kind != AST_CONNECTOR && d->node->kind != AST_STRUCT) {
        diag_error(t->span, "`%s` is not a component or connector", d->qname);
        return NULL;
    }
    return d;
}

static Elem *inst_elem_new(Flattener *F, Inst *inst, AstNode *decl) {
    AstNode *v = decl->inst.value, *t = v;
    if (v && v->kind == AST_COMPREHENSION) t = v->compr.body;
    if (t && t->kind == AST_CALL) t = call_as_type(F, t);
    if (!t || t->kind != AST_TYPE) {
        diag_error(decl->span, "expected a component, e.g. `%s = Name(...)`", decl->inst.name);
        return NULL;
    }
    Def *d = lookup_component(F, inst->def->lib, t);
    if (!d) return NULL;
    if (scalar_connector(d)) return scalar_conn_elem(F, inst, decl, t, d);
    Elem *e = elem_new(F, ELEM_INST, decl->inst.name, decl);
    e->def = d;
    if (decl->inst.constraint) {
        e->constraint = sema_lookup(F->prog, inst->def->lib, &decl->inst.constraint->type.name);
        /* `r::TwoPin(R = 200) = Resistor(...)`: the constraint's modifications
         * come first, so the component's own win */
        add_mods(F, &e->mods, decl->inst.constraint, inst, NULL);
        e->nconstraint = e->mods.len;
    }
    if (v->kind == AST_COMPREHENSION) {
        e->compr = v;
        e->compr_scope = inst;
    } else {
        add_mods(F, &e->mods, t, inst, NULL);
    }
    return e;
}

static void apply_mod(Flattener *F, Inst *inst, AstNode *mod, Inst *scope, Env *env);

typedef struct { Def *defs[MAX_DEPTH + 1]; int len; } DefStack;

static bool on_stack(DefStack *st, Def *d) {
    for (int i = 0; i < st->len; i++)
        if (st->defs[i] == d) return true;
    return false;
}

static void collect(Flattener *F, Inst *inst, Def *def, DefStack *st) {
    AstNode *n = def->node;
    st->defs[st->len++] = def;
    for (uint32_t i = 0; i < n->def.extends.len; i++) {
        AstNode *t = n->def.extends.items[i]->extends.type;
        Def *base = sema_lookup(F->prog, def->lib, &t->type.name);
        if (!base) continue;
        if (on_stack(st, base)) {
            diag_error(t->span, "`extends` cycle: `%s` extends `%s`, which (indirectly) extends `%s`",
                       def->qname, base->qname, def->qname);
            continue;
        }
        bool analysis_base = n->kind == AST_ANALYSIS && base->node->kind == AST_ANALYSIS;
        if (base->node->kind != n->kind && !analysis_base) {
            diag_error(t->span, "`%s` cannot extend `%s`: it is not a %s", def->name, base->qname,
                       n->kind == AST_CONNECTOR ? "connector" : "component");
            continue;
        }
        if (st->len > MAX_DEPTH) {
            diag_error(t->span, "`extends` nested deeper than %d levels", MAX_DEPTH);
            continue;
        }
        collect(F, inst, base, st);
        for (uint32_t k = 0; k < t->type.mods.len; k++) apply_mod(F, inst, t->type.mods.items[k], inst, NULL);
    }
    for (uint32_t i = 0; i < n->def.decls.len && !F->over_budget; i++) {
        AstNode *d = n->def.decls.items[i];
        Elem *e = d->kind == AST_DECL ? var_elem(F, inst, d) : inst_elem_new(F, inst, d);
        if (e) add_elem(F, inst, e);
    }
    for (uint32_t i = 0; i < n->def.relations.len; i++)
        vec_push(F->arena, &inst->relations, n->def.relations.items[i]);
    st->len--;
}

static void apply_var_mod(Flattener *F, Elem *e, AstNode *mod, Inst *scope, Env *env) {
    if (mod->mod.value && mod->mod.value->kind == AST_TYPE) {
        diag_error(mod->span, "`%s` is a variable; it cannot be replaced by a component", e->name);
        return;
    }
    if (mod->mod.value) {
        if (e->value.is_final) {
            diag_error(mod->span, "`%s` is final and cannot be modified", e->name);
            diag_note(e->decl->span, "`%s` is declared here", e->name);
            return;
        }
        e->value = (Binding){mod->mod.value, scope, env, mod->mod.is_final};
        e->cstate = 0;
    }
    if (mod->mod.has_initial) e->initial = (Binding){mod->mod.initial, scope, env, false};
    for (uint32_t i = 0; i < mod->mod.mods.len; i++)
        vec_push(F->arena, &e->attrs, ((Pending){mod->mod.mods.items[i], scope, env}));
}

static bool def_extends(Flattener *F, Def *d, Def *base, int depth) {
    if (d == base) return true;
    if (depth > MAX_DEPTH || !d->node || d->node->kind != AST_COMPONENT) return false;
    AstList *ex = &d->node->def.extends;
    for (uint32_t i = 0; i < ex->len; i++) {
        Def *b = sema_try_lookup(F->prog, d->lib, &ex->items[i]->extends.type->type.name);
        if (b && def_extends(F, b, base, depth + 1)) return true;
    }
    return false;
}

static bool check_constraint(Flattener *F, Elem *e, Def *d, Span at) {
    if (!e->constraint || def_extends(F, d, e->constraint, 0)) return true;
    diag_error(at, "`%s` does not extend `%s`, the declared type of `%s`", d->qname, e->constraint->qname, e->name);
    return false;
}

static void apply_inst_mod(Flattener *F, Elem *e, AstNode *mod, Inst *scope, Env *env) {
    AstNode *v = mod->mod.value;
    if (v && (v->kind == AST_CALL || v->kind == AST_IDENT || v->kind == AST_FIELD)) v = call_as_type(F, v);
    if (v && v->kind == AST_TYPE) { /* replace the subcomponent */
        Def *d = lookup_component(F, scope->def->lib, v);
        if (!d || !check_constraint(F, e, d, v->span)) return;
        if (scalar_connector(d)) {
            diag_error(v->span, "`%s` cannot be replaced by the signal `%s`", e->name, d->qname);
            return;
        }
        e->def = d;
        e->mods.len = e->nconstraint;
        add_mods(F, &e->mods, v, scope, env);
    } else if (mod->mod.value) {
        diag_error(mod->mod.value->span, "`%s` is a component; give it a component, e.g. `%s = Name(...)`",
                   e->name, e->name);
    }
    for (uint32_t i = 0; i < mod->mod.mods.len; i++)
        vec_push(F->arena, &e->mods, ((Pending){mod->mod.mods.items[i], scope, env}));
}

static void apply_mod(Flattener *F, Inst *inst, AstNode *mod, Inst *scope, Env *env) {
    Elem *e = inst_elem(inst, mod->mod.name);
    if (!e) {
        SymVec names = {0};
        for (uint32_t i = 0; i < inst->elems.len; i++) vec_push(F->arena, &names, inst->elems.data[i]->name);
        Sym hint = suggest_name(mod->mod.name, names.data, names.len);
        diag_error(mod->span, "`%s` has no element named `%s`%s%s%s", inst->def->name, mod->mod.name,
                   hint ? "; did you mean `" : "", hint ? hint : "", hint ? "`?" : "");
        return;
    }
    if (e->kind == ELEM_VAR) apply_var_mod(F, e, mod, scope, env);
    else apply_inst_mod(F, e, mod, scope, env);
}

/* ---------- elaboration ---------- */

static bool numeric_type(Flattener *F, AstNode *type, Library *lib) {
    for (int depth = 0; type && depth < 32; depth++) {
        if (type->kind == AST_FUNCTYPE) return false;
        if (type->kind != AST_TYPE) return true;
        if (type->type.name.len == 1) {
            const char *n = type->type.name.parts[0];
            if (!strcmp(n, "Real") || !strcmp(n, "Integer") || !strcmp(n, "Boolean")) return true;
            if (!strcmp(n, "String") || !strcmp(n, "Native")) return false;
        }
        Def *d = sema_try_lookup(F->prog, lib, &type->type.name);
        if (!d || d->node->kind != AST_TYPEDEF) return d == NULL;
        type = d->node->typedef_.type;
        lib = d->lib;
    }
    return true;
}

/* `base[i1,i2]`, the name of element i (row-major) of e, in F->keep;
 * written by hand: a million elements' names through printf were a
 * quarter of flatten's time */
static const char *elem_name(Flattener *F, const char *base, size_t blen, const Elem *e, uint32_t i) {
    uint32_t idx[VAL_MAXD];
    for (int k = e->nd - 1; k >= 0; k--) {
        idx[k] = i % e->dims[k] + 1;
        i /= e->dims[k];
    }
    char tail[VAL_MAXD * 11 + 2], *p = tail;
    for (uint32_t k = 0; k < e->nd; k++) {
        char dig[10];
        int nd = 0;
        uint32_t u = idx[k];
        do dig[nd++] = (char)('0' + u % 10); while (u /= 10);
        *p++ = k ? ',' : '[';
        while (nd) *p++ = dig[--nd];
    }
    *p++ = ']';
    size_t tlen = (size_t)(p - tail);
    char buf[256];
    if (blen + tlen > sizeof buf) return arena_printf(F->keep, "%s%.*s", base, (int)tlen, tail);
    memcpy(buf, base, blen);
    memcpy(buf + blen, tail, tlen);
    return arena_strndup(F->keep, buf, blen + tlen);
}

static void new_flat_vars(Flattener *F, Inst *inst, Elem *e) {
    FlatVar v = {0};
    const char *base = inst_child_path(F, inst, e->name);
    v.span = e->decl->span;
    const char *doc = ast_trivia(e->decl)->doc;
    v.attr = flat_attr_shared(F->m, doc ? intern_cstr(F->prog->in, doc) : NULL); /* no pointer into the AST */
    v.top_conn = inst == F->top || (inst->is_connector && inst->parent == F->top);
    switch (e->vkind) {
    case VAR_PARAMETER: v.kind = e->is_structural ? FV_CONSTANT : FV_PARAMETER; break;
    case VAR_CONSTANT: v.kind = FV_CONSTANT; break;
    case VAR_POTENTIAL: v.conn = FC_POTENTIAL; break;
    case VAR_FLOW: v.conn = FC_FLOW; break;
    case VAR_STREAM: v.conn = FC_STREAM; break;
    case VAR_INPUT: v.conn = FC_INPUT; break;
    case VAR_OUTPUT: v.conn = FC_OUTPUT; break;
    default: v.top_conn = false; break;
    }
    e->var = F->m->vars.len;
    size_t blen = strlen(base);
    vec_reserve(F->keep, &F->m->vars, F->m->vars.len + e->n);
    for (uint32_t i = 0; i < e->n; i++) {
        v.name = e->nd ? elem_name(F, base, blen, e, i) : base;
        vec_push(F->keep, &F->m->vars, v);
        vec_push(F->arena, &F->var_elems, e);
        vec_push(F->arena, &F->var_elem_off, i);
    }
    if (e->nd >= 1 && e->nd <= EXPR_MAXIDX && e->n) { /* its shape (flat.h, FlatArray) */
        FlatArray a = {.name = base, .first = e->var, .n = e->n, .nd = e->nd};
        for (uint32_t k = 0; k < e->nd; k++) a.dims[k] = e->dims[k];
        vec_push(F->keep, &F->m->arrays, a);
    }
}

static bool set_dims(Elem *e, uint32_t nd, const uint32_t *dims, Span at) {
    if (nd > VAL_MAXD) {
        diag_error(at, "arrays have at most %d dimensions", VAL_MAXD);
        return false;
    }
    uint64_t n = 1;
    for (uint32_t k = 0; k < nd; k++) n *= dims[k] ? dims[k] : 1;
    if (n > 100000000u) {
        diag_error(at, "this array has %llu elements; at most 10^8 are supported", (unsigned long long)n);
        return false;
    }
    e->nd = (uint8_t)nd;
    e->n = 1;
    for (uint32_t k = 0; k < nd; k++) {
        e->dims[k] = dims[k];
        e->n *= dims[k];
    }
    return true;
}

/* sizes of an array declaration; `:` takes the size of the value */
static bool eval_dims(Flattener *F, Inst *inst, Elem *e, AstList *dl) {
    uint32_t dims[VAL_MAXD] = {0};
    uint64_t total = 1;        /* elements, for the budget (saturating) */
    bool colon = false;
    if (dl->len > VAL_MAXD) return set_dims(e, dl->len, dims, e->decl->span);
    for (uint32_t k = 0; k < dl->len; k++) {
        if (dl->items[k]->kind == AST_COLON) {
            colon = true;
            continue;
        }
        int64_t n;
        if (!const_int(F, tx_in(inst, inst->env), dl->items[k], &n)) return false;
        if (n < 0) {
            diag_error(dl->items[k]->span, "an array size cannot be negative (%lld)", (long long)n);
            return false;
        }
        if (n > 100000000) {
            diag_error(dl->items[k]->span, "an array size of %lld is too large (at most 10^8)", (long long)n);
            return false;
        }
        dims[k] = (uint32_t)n;
        total = n && total > UINT64_MAX / (uint64_t)n ? UINT64_MAX : total * (uint64_t)n;
    }
    if (!flat_charge(F, total, e->decl->span)) return false;
    if (colon) {
        Val v;
        AstNode *x = e->value.expr;
        if (!x || x->kind == AST_MISSING || e->vkind == VAR_VARIABLE) {
            diag_error(e->decl->span, "give the size of `%s` (`:` needs a value to take it from)", e->name);
            return false;
        }
        if (!elem_const(F, e, &v) || !val_present(&v, x)) return false;
        if (v.nd != dl->len) {
            diag_error(x->span, "`%s` has %u dimension%s but its value has %u", e->name, dl->len,
                       dl->len == 1 ? "" : "s", v.nd);
            return false;
        }
        for (uint32_t k = 0; k < dl->len; k++) dims[k] = v.dims[k];
    }
    return set_dims(e, dl->len, dims, e->decl->span);
}

/* iterate the `for` clauses of a comprehension: the shape and the Env of
 * every element (row-major) */
static bool compr_envs(Flattener *F, Inst *inst, AstNode *c, Elem *e, EnvVec *envs) {
    uint32_t ni = c->compr.iters.len, dims[VAL_MAXD] = {0};
    Val r[VAL_MAXD];
    if (ni > VAL_MAXD) return set_dims(e, ni, dims, c->span);
    for (uint32_t k = 0; k < ni; k++) {
        if (!const_val(F, tx_in(inst, inst->env), c->compr.iters.items[k]->iter.range, &r[k]) || r[k].str) return false;
        dims[k] = r[k].n;
    }
    if (!set_dims(e, ni, dims, c->span)) return false;
    uint32_t pos[VAL_MAXD] = {0};
    for (uint32_t i = 0; i < e->n; i++) {
        Env *env = inst->env;
        for (uint32_t k = 0; k < ni; k++)
            env = env_push(F, env, c->compr.iters.items[k]->iter.name, val_elem(F, &r[k], pos[k]));
        vec_push(F->arena, envs, env);
        for (int k = (int)ni - 1; k >= 0; k--) {
            if (++pos[k] < dims[k]) break;
            pos[k] = 0;
        }
    }
    return true;
}

static void build(Flattener *F, Inst *inst, PendingVec *mods, int depth);

static Inst *new_child(Flattener *F, Inst *inst, Elem *e, const char *path, Env *env, PendingVec *mods, int depth) {
    Inst *c = ARENA_NEW(F->arena, Inst);
    c->path = path;
    c->def = e->def;
    c->parent = inst;
    c->env = env;
    c->elem = e;
    c->is_connector = e->def->node->kind == AST_CONNECTOR;
    if (e->def->node->kind != AST_STRUCT && e->def->node->def.prefix == DEF_PARTIAL)
        diag_error(e->decl->span, "`%s` is a partial component and cannot be instantiated", e->def->qname);
    build(F, c, mods, depth + 1);
    return c;
}

static void elaborate_array(Flattener *F, Inst *inst, Elem *e, int depth) {
    EnvVec envs = {0};
    AstNode *body = e->compr->compr.body;
    if (body->kind == AST_CALL) body = call_as_type(F, body);
    if (!body || !compr_envs(F, inst, e->compr, e, &envs)) return;
    e->children = ARENA_ARRAY(F->arena, Inst *, e->n ? e->n : 1);
    const char *base = inst_child_path(F, inst, e->name);
    size_t blen = strlen(base);
    for (uint32_t i = 0; i < e->n; i++) {
        PendingVec mods = {0};
        uint32_t nm = e->nconstraint + body->type.mods.len; /* exact size: arrays can be large */
        if (nm) {
            mods.data = ARENA_ARRAY(F->arena, Pending, nm);
            mods.cap = nm;
        }
        for (uint32_t k = 0; k < e->nconstraint; k++) mods.data[mods.len++] = e->mods.data[k];
        add_mods(F, &mods, body, inst, envs.data[i]);
        e->children[i] = new_child(F, inst, e, elem_name(F, base, blen, e, i), envs.data[i], &mods, depth);
    }
}

static bool cond_false(Flattener *F, Inst *inst, AstNode *cond) {
    if (!cond) return false;
    Val v;
    if (!const_val(F, tx_in(inst, inst->env), cond, &v)) return true;
    if (v.nd || v.str) {
        diag_error(cond->span, "the condition of a conditional declaration must be a Boolean");
        return true;
    }
    return v.s->value == 0;
}

static void elaborate_var(Flattener *F, Inst *inst, Elem *e) {
    AstNode *d = e->decl;
    e->n = 1;
    if (d->kind == AST_DECL && d->decl.dims.len && !eval_dims(F, inst, e, &d->decl.dims)) return;
    if (d->kind == AST_INSTANCE && e->compr) {
        EnvVec envs = {0};
        if (!compr_envs(F, inst, e->compr, e, &envs)) return;
        e->elem_env = envs.data;
    }
    if (e->vkind == VAR_PATH || !numeric_type(F, e->type, e->type_lib)) return;
    new_flat_vars(F, inst, e);
}

static void elaborate_children(Flattener *F, Inst *inst, int depth) {
    for (uint32_t i = 0; i < inst->elems.len; i++) {
        Elem *e = inst->elems.data[i];
        AstNode *cond = e->decl->kind == AST_DECL ? e->decl->decl.cond : e->decl->inst.cond;
        if ((e->absent = cond_false(F, inst, cond))) continue;
        if (e->kind == ELEM_VAR) elaborate_var(F, inst, e);
        else if (e->compr) elaborate_array(F, inst, e, depth);
        else e->child = new_child(F, inst, e, inst_child_path(F, inst, e->name), NULL, &e->mods, depth);
    }
}

static void build(Flattener *F, Inst *inst, PendingVec *mods, int depth) {
    if (depth > MAX_DEPTH) {
        diag_error(inst->def->node->span, "components nested deeper than %d levels (recursive?)", MAX_DEPTH);
        return;
    }
    DefStack st = {{0}, 0};
    collect(F, inst, inst->def, &st);
    if (inst->def->node->kind == AST_STRUCT && inst->elem)
        for (uint32_t i = 0; i < inst->elems.len; i++) {
            Elem *f = inst->elems.data[i];
            f->vkind = inst->elem->vkind == VAR_FIELD ? VAR_VARIABLE : inst->elem->vkind;
            if (f->kind != ELEM_VAR) continue;
            f->is_structural = inst->elem->is_structural;
            if (inst->elem->value.is_final) f->value.is_final = true;
            if (f->vkind == VAR_VARIABLE) f->value.expr = NULL; /* field defaults are for values */
        }
    for (uint32_t i = 0; mods && i < mods->len; i++)
        apply_mod(F, inst, mods->data[i].mod, mods->data[i].scope, mods->data[i].env);
    if (!inst->is_analysis) elaborate_children(F, inst, depth);
}

Inst *inst_build_under(Flattener *F, Def *def, PendingVec *mods) {
    Inst *top = ARENA_NEW(F->arena, Inst);
    top->path = "";
    top->def = def;
    top->is_connector = def->node->kind == AST_CONNECTOR;
    top->is_analysis = def->node->kind == AST_ANALYSIS;
    if (!top->is_analysis) F->top = top;
    build(F, top, mods, 0);
    return top;
}

Inst *inst_build_top(Flattener *F, Def *def) { return inst_build_under(F, def, NULL); }
