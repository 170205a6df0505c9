/*
 * instance.c -- building the instance tree: inheritance, declarations,
 * modifications, subcomponents.  Each instance is built in three steps:
 *   1. collect: elements and relations of every `extends` base (depth
 *      first, with the extends-clause modifications applied), then its own;
 *   2. apply the modifications handed down by the instantiating parent
 *      (outer modifications override inner ones; `final` forbids it);
 *   3. create flat variables for its variables, then elaborate every
 *      subcomponent recursively.
 * Linear in the size of the expanded tree.
 */
#include "flatten_internal.h"

#include <string.h>

#define MAX_DEPTH 64

Elem *inst_elem(Inst *inst, Sym name) {
    return hmap_get(&inst->by_name, (uint64_t)(uintptr_t)name);
}

const char *inst_child_path(Flattener *F, Inst *parent, Sym name) {
    if (!parent->path[0]) return name;
    return arena_printf(F->arena, "%s.%s", parent->path, name);
}

static void add_elem(Flattener *F, Inst *inst, Elem *e) {
    Elem *old = inst_elem(inst, e->name);
    if (old) {
        diag_error(e->decl->span, "`%s` is declared twice in `%s`", e->name, inst->def->name);
        diag_note(old->decl->span, "the first declaration is here");
        return;
    }
    e->owner = inst;
    vec_push(F->arena, &inst->elems, e);
    hmap_put(F->arena, &inst->by_name, (uint64_t)(uintptr_t)e->name, e);
}

static void add_mods(Flattener *F, PendingVec *v, AstNode *type, Inst *scope) {
    if (!type || type->kind != AST_TYPE) return;
    for (uint32_t i = 0; i < type->type.mods.len; i++)
        vec_push(F->arena, v, ((Pending){type->type.mods.items[i], scope}));
}

/* A connector of the form `connector RealInput = input Real`. */
static AstNode *scalar_connector(Def *d) {
    if (!d || d->node->kind != AST_CONNECTOR) return NULL;
    return d->node->def.alias;
}

static Elem *var_elem(Flattener *F, Inst *inst, AstNode *decl) {
    Elem *e = ARENA_NEW(F->arena, Elem);
    e->kind = ELEM_VAR;
    e->name = decl->decl.name;
    e->decl = decl;
    e->vkind = decl->decl.kind;
    e->is_structural = decl->decl.is_structural;
    e->value = (Binding){decl->decl.value, inst, decl->decl.is_final};
    if (decl->decl.has_initial) e->initial = (Binding){decl->decl.initial, inst, false};
    e->type = decl->decl.type;
    e->type_lib = inst->def->lib;
    add_mods(F, &e->attrs, decl->decl.type, inst);
    if (decl->decl.dims.len)
        diag_error(decl->span, "array declarations are not supported yet");
    return e;
}

/* `u = RealInput()` where RealInput is a scalar connector: a variable */
static Elem *scalar_conn_elem(Flattener *F, Inst *inst, AstNode *decl, Def *d) {
    AstNode *alias = scalar_connector(d);
    Elem *e = ARENA_NEW(F->arena, Elem);
    e->kind = ELEM_VAR;
    e->name = decl->inst.name;
    e->decl = decl;
    e->vkind = alias->decl.kind;
    e->type = alias->decl.type;
    e->type_lib = d->lib;
    add_mods(F, &e->attrs, alias->decl.type, NULL);
    AstNode *t = decl->inst.value;
    for (uint32_t i = 0; t && i < t->type.mods.len; i++) {
        AstNode *m = t->type.mods.items[i];
        vec_push(F->arena, &e->attrs, ((Pending){m, inst}));
    }
    return e;
}

static Elem *inst_elem_new(Flattener *F, Inst *inst, AstNode *decl) {
    AstNode *t = decl->inst.value;
    if (!t || t->kind != AST_TYPE) {
        diag_error(decl->span, "component arrays are not supported yet");
        return NULL;
    }
    Def *d = sema_lookup(F->prog, inst->def->lib, &t->type.name);
    if (!d) return NULL;
    if (scalar_connector(d)) return scalar_conn_elem(F, inst, decl, d);
    if (d->node->kind != AST_COMPONENT && d->node->kind != AST_CONNECTOR) {
        diag_error(t->span, "`%s` is not a component or connector", d->qname);
        return NULL;
    }
    Elem *e = ARENA_NEW(F->arena, Elem);
    e->kind = ELEM_INST;
    e->name = decl->inst.name;
    e->decl = decl;
    e->def = d;
    add_mods(F, &e->mods, t, inst);
    return e;
}

static void apply_mod(Flattener *F, Inst *inst, AstNode *mod, Inst *scope);

static void collect(Flattener *F, Inst *inst, Def *def, int depth) {
    AstNode *n = def->node;
    if (depth > MAX_DEPTH) {
        diag_error(n->span, "`extends` cycle through `%s`", def->qname);
        return;
    }
    for (uint32_t i = 0; i < n->def.extends.len; i++) {
        AstNode *t = n->def.extends.items[i]->extends.type;
        Def *base = sema_lookup(F->prog, def->lib, &t->type.name);
        if (!base) continue;
        if (base->node->kind != n->kind) {
            diag_error(t->span, "`%s` cannot extend `%s`: it is not a %s", def->name,
                       base->qname, n->kind == AST_CONNECTOR ? "connector" : "component");
            continue;
        }
        collect(F, inst, base, depth + 1);
        for (uint32_t k = 0; k < t->type.mods.len; k++)
            apply_mod(F, inst, t->type.mods.items[k], inst);
    }
    for (uint32_t i = 0; i < n->def.decls.len; i++) {
        AstNode *d = n->def.decls.items[i];
        Elem *e = d->kind == AST_DECL ? var_elem(F, inst, d) : inst_elem_new(F, inst, d);
        if (e) add_elem(F, inst, e);
    }
    for (uint32_t i = 0; i < n->def.relations.len; i++)
        vec_push(F->arena, &inst->relations, n->def.relations.items[i]);
}

static void apply_var_mod(Flattener *F, Elem *e, AstNode *mod, Inst *scope) {
    if (mod->mod.value) {
        if (e->value.is_final) {
            diag_error(mod->span, "`%s` is final and cannot be modified", e->name);
            return;
        }
        e->value = (Binding){mod->mod.value, scope, mod->mod.is_final};
    }
    if (mod->mod.has_initial) e->initial = (Binding){mod->mod.initial, scope, false};
    for (uint32_t i = 0; i < mod->mod.mods.len; i++)
        vec_push(F->arena, &e->attrs, ((Pending){mod->mod.mods.items[i], scope}));
}

static void apply_inst_mod(Flattener *F, Elem *e, AstNode *mod, Inst *scope) {
    AstNode *v = mod->mod.value;
    if (v && v->kind == AST_TYPE) { /* replace the subcomponent */
        Def *d = sema_lookup(F->prog, scope->def->lib, &v->type.name);
        if (!d) return;
        e->def = d;
        e->mods.len = 0;
        add_mods(F, &e->mods, v, scope);
    } else if (v) {
        diag_error(v->span, "`%s` is a component; give it a component, e.g. `%s = Name(...)`",
                   e->name, e->name);
    }
    for (uint32_t i = 0; i < mod->mod.mods.len; i++)
        vec_push(F->arena, &e->mods, ((Pending){mod->mod.mods.items[i], scope}));
}

static void apply_mod(Flattener *F, Inst *inst, AstNode *mod, Inst *scope) {
    Elem *e = inst_elem(inst, mod->mod.name);
    if (!e) {
        SymVec names = {0};
        for (uint32_t i = 0; i < inst->elems.len; i++)
            vec_push(F->arena, &names, inst->elems.data[i]->name);
        Sym hint = suggest_name(mod->mod.name, names.data, names.len);
        diag_error(mod->span, "`%s` has no element named `%s`%s%s%s", inst->def->name,
                   mod->mod.name, hint ? "; did you mean `" : "", hint ? hint : "",
                   hint ? "`?" : "");
        return;
    }
    if (e->kind == ELEM_VAR) apply_var_mod(F, e, mod, scope);
    else apply_inst_mod(F, e, mod, scope);
}

static void new_flat_var(Flattener *F, Inst *inst, Elem *e) {
    FlatVar v = {0};
    v.name = inst_child_path(F, inst, e->name);
    v.span = e->decl->span;
    v.min = -__builtin_inf();
    v.max = __builtin_inf();
    switch (e->vkind) {
    case VAR_PARAMETER: v.kind = FV_PARAMETER; break;
    case VAR_CONSTANT: v.kind = FV_CONSTANT; break;
    case VAR_POTENTIAL: v.conn = FC_POTENTIAL; break;
    case VAR_FLOW: v.conn = FC_FLOW; break;
    case VAR_STREAM: v.conn = FC_STREAM; break;
    case VAR_INPUT: v.conn = FC_INPUT; break;
    case VAR_OUTPUT: v.conn = FC_OUTPUT; break;
    default: break;
    }
    e->var = F->m->vars.len;
    vec_push(F->arena, &F->m->vars, v);
    vec_push(F->arena, &F->var_elems, e);
}

static void build(Flattener *F, Inst *inst, PendingVec *mods, int depth);

static void elaborate_children(Flattener *F, Inst *inst, int depth) {
    for (uint32_t i = 0; i < inst->elems.len; i++) {
        Elem *e = inst->elems.data[i];
        if (e->kind == ELEM_VAR) {
            if (e->vkind != VAR_PATH) new_flat_var(F, inst, e);
            continue;
        }
        Inst *c = ARENA_NEW(F->arena, Inst);
        c->path = inst_child_path(F, inst, e->name);
        c->def = e->def;
        c->parent = inst;
        c->is_connector = e->def->node->kind == AST_CONNECTOR;
        e->child = c;
        if (e->def->node->def.prefix == DEF_PARTIAL)
            diag_error(e->decl->span, "`%s` is a partial component and cannot be instantiated",
                       e->def->qname);
        build(F, c, &e->mods, depth + 1);
    }
}

static void build(Flattener *F, Inst *inst, PendingVec *mods, int depth) {
    if (depth > MAX_DEPTH) {
        diag_error(inst->def->node->span, "components nested deeper than %d levels (recursive?)",
                   MAX_DEPTH);
        return;
    }
    collect(F, inst, inst->def, 0);
    for (uint32_t i = 0; mods && i < mods->len; i++)
        apply_mod(F, inst, mods->data[i].mod, mods->data[i].scope);
    elaborate_children(F, inst, depth);
}

Inst *inst_build_top(Flattener *F, Def *def) {
    Inst *top = ARENA_NEW(F->arena, Inst);
    top->path = "";
    top->def = def;
    top->is_connector = def->node->kind == AST_CONNECTOR;
    build(F, top, NULL, 0);
    return top;
}
