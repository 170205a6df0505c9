/*
 * values.c -- expression translation: AST -> Val (a shape and one Expr per
 * element; arrays are scalarized here).
 *
 * Names resolve through the environment (loop indices, function locals),
 * then the instance scope.  A parameter becomes a flat-variable leaf, except
 * in structural mode (F->const_mode > 0), where it evaluates to its value:
 * that is how array sizes, `for` ranges, `if`/`switch` conditions and
 * indices fold to constants.  Structural parameters, constants and
 * parameters of an analysis always evaluate to their value.  Enum values are
 * the 1-based index of their case.
 *
 * Cost: a scalar subscript of an array variable (`x[i]`) resolves directly
 * to one leaf, so a `for` loop over an n-element array is O(n).
 */
#include "flatten_internal.h"

#include <math.h>
#include <string.h>

Val val_scalar(Expr *e) {
    Val v = {0};
    v.n = 1;
    v.s = e;
    return v;
}

Val val_new(Flattener *F, uint8_t nd, const uint32_t *dims) {
    Val v = {0};
    v.nd = nd;
    v.n = 1;
    for (uint8_t k = 0; k < nd; k++) {
        v.dims[k] = dims[k];
        v.n *= dims[k];
    }
    if (nd == 0) return v;
    v.el = ARENA_ARRAY(F->arena, Expr *, v.n ? v.n : 1);
    return v;
}

Env *env_push(Flattener *F, Env *next, Sym name, Val v) {
    Env *e = ARENA_NEW(F->arena, Env); /* sdef NULL: callers set it */
    e->name = name;
    e->val = v;
    e->next = next;
    return e;
}

static Env *env_find(Env *e, Sym name) {
    for (; e; e = e->next)
        if (e->name == name) return e;
    return NULL;
}

static bool same_shape(const Val *a, const Val *b) {
    if (a->nd != b->nd) return false;
    for (uint8_t k = 0; k < a->nd; k++)
        if (a->dims[k] != b->dims[k]) return false;
    return true;
}

static const char *shape_str(Flattener *F, const Val *v) {
    if (v->nd == 0) return "a scalar";
    if (v->nd == 1) return arena_printf(F->arena, "a vector of %u", v->dims[0]);
    if (v->nd == 2) return arena_printf(F->arena, "a %ux%u matrix", v->dims[0], v->dims[1]);
    return arena_printf(F->arena, "a %u-dimensional array", v->nd);
}

/* ---------- enums ---------- */

int enum_case_index(Def *en, Sym name) {
    AstList *c = &en->node->enum_.cases;
    for (uint32_t i = 0; i < c->len; i++)
        if (c->items[i]->enumcase.name == name) return (int)i + 1;
    return 0;
}

Def *enum_of_elem(Flattener *F, Elem *el) {
    for (int depth = 0; el && el->type && el->type->kind == AST_TYPE && depth < 16; depth++) {
        Def *d = sema_try_lookup(F->prog, el->type_lib, &el->type->type.name);
        if (!d) return NULL;
        if (d->node->kind == AST_ENUM) return d;
        return NULL;
    }
    return NULL;
}

/* `E.A` / `Lib.E.A`: the qualified name of an AST_FIELD chain split into
 * the enum (all but the last part) and the case name; 0 if not an enum */
static int enum_value(Flattener *F, Inst *scope, AstNode *e) {
    Sym parts[16];
    uint32_t n = 0;
    AstNode *x = e;
    while (x->kind == AST_FIELD && n < 15) {
        parts[n++] = x->field.name;
        x = x->field.base;
    }
    if (x->kind != AST_IDENT || n == 0) return 0;
    parts[n++] = x->ident.name;
    Sym q[16];
    for (uint32_t i = 0; i < n; i++) q[i] = parts[n - 1 - i];
    AstQName qn = {q, n - 1, e->span};
    Library *lib = scope ? scope->def->lib : F->fn_lib;
    Def *d = sema_try_lookup(F->prog, lib ? lib : F->prog->root, &qn);
    if (!d || d->node->kind != AST_ENUM) return 0;
    int k = enum_case_index(d, q[n - 1]);
    if (!k) diag_error(e->span, "enum `%s` has no case `%s`", d->qname, q[n - 1]);
    return k ? k : -1;
}

/* ---------- references ---------- */

static void unknown_name(Flattener *F, Inst *scope, AstNode *e) {
    SymVec names = {0};
    for (uint32_t i = 0; scope && i < scope->elems.len; i++)
        vec_push(F->arena, &names, scope->elems.data[i]->name);
    for (Env *v = F->env; v; v = v->next) vec_push(F->arena, &names, v->name);
    Sym hint = suggest_name(e->ident.name, names.data, names.len);
    if (hint) diag_error(e->span, "unknown name `%s`; did you mean `%s`?", e->ident.name, hint);
    else diag_error(e->span, "unknown name `%s`", e->ident.name);
}

static bool elem_ref(Elem *el, AstNode *e, bool report, Ref *out) {
    if (el->absent) {
        if (report)
            diag_error(e->span, "`%s` is declared with a condition that is false here, so it does not exist",
                       el->name);
        return false;
    }
    if (el->kind == ELEM_VAR) {
        out->var = el;
        out->off = 0;
        out->cnt = el->n;
    } else if (el->children) {
        out->arr = el;
    } else {
        out->inst = el->child;
    }
    return out->var || out->arr || out->inst;
}

/* the common subscript forms (`i`, `i - 1`, `2 * i + 1`, `end`) without
 * building expressions: indexing in large `for` loops stays cheap */
static bool fast_num(Flattener *F, AstNode *e, double *out) {
    double a, b;
    switch (e->kind) {
    case AST_NUM: *out = e->num.value; return true;
    case AST_END: *out = F->end_val; return F->end_val != 0;
    case AST_IDENT: {
        Env *v = env_find(F->env, e->ident.name);
        if (!v || v->val.nd || v->val.str || !expr_is_const(v->val.s)) return false;
        *out = v->val.s->value;
        return true;
    }
    case AST_UNARY:
        if (e->unary.op != OP_NEG || !fast_num(F, e->unary.lhs, &a)) return false;
        *out = -a;
        return true;
    case AST_BINARY:
        if (!fast_num(F, e->binary.lhs, &a) || !fast_num(F, e->binary.rhs, &b)) return false;
        switch (e->binary.op) {
        case OP_ADD: *out = a + b; return true;
        case OP_SUB: *out = a - b; return true;
        case OP_MUL: *out = a * b; return true;
        default: return false;
        }
    default: return false;
    }
}

/* row-major offset of scalar subscripts into an array of shape `dims` */
static bool const_offset(Flattener *F, Inst *scope, AstList *subs, uint8_t nd, const uint32_t *dims,
                         uint32_t *off, bool report) {
    if (subs->len != nd) {
        if (report)
            diag_error(subs->len ? subs->items[0]->span : (Span){0},
                       "%u subscript%s given for an array with %u dimension%s", subs->len,
                       subs->len == 1 ? "" : "s", nd, nd == 1 ? "" : "s");
        return false;
    }
    uint32_t o = 0;
    for (uint32_t k = 0; k < nd; k++) {
        AstNode *s = subs->items[k];
        if (s->kind == AST_COLON) return false;
        uint32_t save = F->end_val;
        F->end_val = dims[k];
        double x;
        bool ok = fast_num(F, s, &x);
        if (!ok) {
            Val v;
            ok = const_val(F, scope, s, &v);
            if (ok && (v.nd != 0 || v.str)) ok = false; /* a slice */
            if (ok) x = v.s->value;
        }
        F->end_val = save;
        if (!ok) return false;
        if (x != floor(x) || x < 1 || x > dims[k]) {
            diag_error(s->span, "index %g is out of range 1:%u", x, dims[k]);
            return false;
        }
        o = o * dims[k] + (uint32_t)x - 1;
    }
    *off = o;
    return true;
}

static bool has_slice(AstList *subs) {
    for (uint32_t k = 0; k < subs->len; k++)
        if (subs->items[k]->kind == AST_COLON || subs->items[k]->kind == AST_RANGE) return true;
    return false;
}

bool resolve_ref(Flattener *F, Inst *scope, AstNode *e, bool report, Ref *out) {
    memset(out, 0, sizeof *out);
    if (e->kind == AST_IDENT) {
        Elem *el = scope ? inst_elem(scope, e->ident.name) : NULL;
        if (!el) {
            if (report) unknown_name(F, scope, e);
            return false;
        }
        return elem_ref(el, e, report, out);
    }
    if (e->kind == AST_FIELD) {
        Ref b;
        if (!resolve_ref(F, scope, e->field.base, report, &b)) return false;
        if (!b.inst) {
            if (report && b.var)
                diag_error(e->span, "`%s` is a variable and has no field `%s`", b.var->name, e->field.name);
            else if (report)
                diag_error(e->span, "`%s` is an array of components; index it first", b.arr->name);
            return false;
        }
        Elem *el = inst_elem(b.inst, e->field.name);
        if (!el) {
            if (report)
                diag_error(e->span, "`%s` (a `%s`) has no element `%s`", b.inst->path[0] ? b.inst->path : b.inst->def->name,
                           b.inst->def->name, e->field.name);
            return false;
        }
        return elem_ref(el, e, report, out);
    }
    if (e->kind == AST_INDEX) {
        Ref b;
        if (!resolve_ref(F, scope, e->index.base, report, &b)) return false;
        if (b.inst || (b.var && b.var->nd == 0)) {
            if (report) diag_error(e->span, "`%s` is not an array", b.inst ? b.inst->path : b.var->name);
            return false;
        }
        if (has_slice(&e->index.subs)) {
            if (report) diag_error(e->span, "a slice is not allowed here; index every dimension");
            return false;
        }
        Elem *a = b.var ? b.var : b.arr;
        uint32_t off;
        if (!const_offset(F, scope, &e->index.subs, a->nd, a->dims, &off, report)) return false;
        if (b.var) {
            *out = b;
            out->off = off;
            out->cnt = 1;
        } else {
            out->inst = b.arr->children[off];
        }
        return true;
    }
    if (report) diag_error(e->span, "expected a component reference");
    return false;
}

/* ---------- structural values ---------- */

static bool is_param_like(Elem *el) {
    return el->vkind == VAR_PARAMETER || el->vkind == VAR_CONSTANT;
}

static bool all_const(const Val *v) {
    for (uint32_t i = 0; i < v->n; i++)
        if (!expr_is_const(val_at(v, i))) return false;
    return true;
}

bool elem_const(Flattener *F, Elem *el, Val *out) {
    if (el->cstate == 2) {
        *out = *el->cval;
        return true;
    }
    if (el->cstate == 3) return false;
    AstNode *decl = el->decl;
    if (el->cstate == 1) {
        diag_error(decl->span, "the value of `%s` depends on itself", el->name);
        el->cstate = 3;
        return false;
    }
    if (el->kind != ELEM_VAR || !is_param_like(el)) {
        diag_error(decl->span, "`%s` is a variable, but a value known at compile time is needed", el->name);
        el->cstate = 3;
        return false;
    }
    AstNode *x = el->value.expr;
    if (!x || x->kind == AST_MISSING) {
        diag_error(decl->span, "`%s` has no value, but a value known at compile time is needed", el->name);
        el->cstate = 3;
        return false;
    }
    el->cstate = 1;
    Env *save = F->env;
    F->env = el->value.env;
    Val v;
    bool ok = const_val(F, el->value.scope, x, &v);
    if (ok) {
        el->cval = ARENA_NEW(F->arena, Val);
        *el->cval = v;
    }
    F->env = save;
    el->cstate = ok ? 2 : 3;
    if (ok) *out = v;
    return ok;
}

bool const_val(Flattener *F, Inst *scope, AstNode *e, Val *out) {
    F->const_mode++;
    bool ok = tr_val(F, scope, e, out);
    F->const_mode--;
    if (!ok) return false;
    if (!out->str && !all_const(out)) {
        diag_error(e->span, "this must be known when the model is compiled (a structural value), "
                            "but it depends on variables or time");
        return false;
    }
    return true;
}

bool const_int(Flattener *F, Inst *scope, AstNode *e, int64_t *out) {
    Val v;
    if (!const_val(F, scope, e, &v)) return false;
    if (v.nd != 0 || v.str || v.s->value != floor(v.s->value)) {
        diag_error(e->span, "an integer is needed here");
        return false;
    }
    *out = (int64_t)v.s->value;
    return true;
}

/* ---------- names ---------- */

Expr *var_leaf(Flattener *F, uint32_t v) {
    if (v >= F->nleaf) {
        uint32_t n = F->m->vars.len > v ? F->m->vars.len : v + 1;
        Expr **t = ARENA_ARRAY(F->arena, Expr *, n);
        if (F->nleaf) memcpy(t, F->leaf, F->nleaf * sizeof *t);
        F->leaf = t;
        F->nleaf = n;
    }
    if (!F->leaf[v]) F->leaf[v] = expr_leaf(F->ctx, EXPR_VAR, v);
    return F->leaf[v];
}

static Val var_leaves(Flattener *F, Elem *el, uint32_t off, uint32_t cnt, bool whole) {
    if (!whole || el->nd == 0) return val_scalar(var_leaf(F, el->var + off));
    Val v = val_new(F, el->nd, el->dims);
    for (uint32_t i = 0; i < cnt; i++) v.el[i] = var_leaf(F, el->var + off + i);
    return v;
}

static bool val_index(Flattener *F, Inst *scope, Val base, AstNode *e, Val *out);

static bool var_value(Flattener *F, Ref *r, bool whole, Val *out, AstNode *e) {
    Elem *el = r->var;
    bool fold = el->owner->is_analysis || el->var == NO_VAR ||
                (is_param_like(el) && (F->const_mode || el->is_structural || el->vkind == VAR_CONSTANT));
    if (fold) {
        Val v;
        if (!elem_const(F, el, &v)) return false;
        if (whole) *out = v;
        else *out = val_scalar(val_at(&v, r->off));
        return true;
    }
    if (F->const_mode) {
        diag_error(e->span, "`%s` is a variable, but a value known at compile time is needed", el->name);
        return false;
    }
    *out = var_leaves(F, el, r->off, r->cnt, whole);
    return true;
}

/* a struct value is the vector of its scalar fields, in declaration order
 * (nested structs flattened): equations between structs are field-wise */
static bool struct_fields(Flattener *F, Inst *si, AstNode *e, ExprPtrVec *acc) {
    for (uint32_t i = 0; i < si->elems.len; i++) {
        Elem *f = si->elems.data[i];
        if (f->kind == ELEM_INST) {
            if (!f->child || !struct_fields(F, f->child, e, acc)) return false;
            continue;
        }
        Ref r = {f, 0, f->n, NULL, NULL};
        Val v;
        if (!var_value(F, &r, true, &v, e)) return false;
        for (uint32_t k = 0; k < v.n; k++) vec_push(F->arena, acc, val_at(&v, k));
    }
    return true;
}

static bool struct_value(Flattener *F, Inst *si, AstNode *e, Val *out) {
    ExprPtrVec acc = {0};
    if (!struct_fields(F, si, e, &acc)) return false;
    uint32_t n = acc.len;
    Val r = val_new(F, 1, &n);
    for (uint32_t i = 0; i < n; i++) r.el[i] = acc.data[i];
    *out = r;
    return true;
}

/* `Point(x = 1, y = 2)` in an expression: the field values in declaration
 * order (defaults for fields not given) */
static bool tr_constructor(Flattener *F, Inst *scope, AstNode *call, Def *sd, Val *out) {
    AstList *fields = &sd->node->def.decls;
    ExprPtrVec acc = {0};
    for (uint32_t i = 0; i < call->call.args.len; i++) {
        AstNode *a = call->call.args.items[i];
        uint32_t k = 0;
        while (k < fields->len && fields->items[k]->decl.name != a->arg.name) k++;
        if (!a->arg.name || k == fields->len) {
            diag_error(a->span, "`%s` has no field `%s`; give fields by name", sd->name, a->arg.name ? a->arg.name : "?");
            return false;
        }
    }
    for (uint32_t k = 0; k < fields->len; k++) {
        AstNode *fd = fields->items[k], *x = fd->decl.value;
        Inst *xs = NULL;
        bool given = false;
        for (uint32_t i = 0; i < call->call.args.len; i++)
            if (call->call.args.items[i]->arg.name == fd->decl.name) {
                x = call->call.args.items[i]->arg.value;
                xs = scope;
                given = true;
            }
        if (!x) {
            diag_error(call->span, "`%s(...)` needs a value for field `%s`", sd->name, fd->decl.name);
            return false;
        }
        Val v;
        Env *save = F->env;
        if (!given) F->env = NULL; /* a default sees constants only */
        bool ok = tr_val(F, xs, x, &v);
        F->env = save;
        if (!ok) return false;
        for (uint32_t i = 0; i < v.n; i++) vec_push(F->arena, &acc, val_at(&v, i));
    }
    uint32_t n = acc.len;
    Val r = val_new(F, 1, &n);
    for (uint32_t i = 0; i < n; i++) r.el[i] = acc.data[i];
    *out = r;
    return true;
}

/* scalars in one value of struct `sd` (fields in order, nested flattened) */
static bool struct_size(Flattener *F, Def *sd, uint32_t *n, AstNode *at, int depth) {
    AstList *fs = &sd->node->def.decls;
    *n = 0;
    if (depth > 16) return false;
    for (uint32_t k = 0; k < fs->len; k++) {
        uint32_t m;
        Def *sub = NULL;
        if (!struct_field_slice(F, sd, fs->items[k]->decl.name, &m, &m, &sub, at)) return false;
        *n += m;
    }
    return true;
}

static bool field_size(Flattener *F, Def *sd, AstNode *fd, uint32_t *n, Def **sub, AstNode *at) {
    AstNode *t = fd->decl.type;
    Def *d = t && t->kind == AST_TYPE ? sema_try_lookup(F->prog, sd->lib, &t->type.name) : NULL;
    *sub = d && d->node->kind == AST_STRUCT ? d : NULL;
    if (*sub) return struct_size(F, *sub, n, at, 1);
    *n = 1;
    for (uint32_t k = 0; k < fd->decl.dims.len; k++) {
        int64_t m;
        if (!const_int(F, NULL, fd->decl.dims.items[k], &m)) return false;
        *n *= (uint32_t)m;
    }
    return true;
}

/* the position of `field` in a flattened value of struct `sd` */
bool struct_field_slice(Flattener *F, Def *sd, Sym field, uint32_t *off, uint32_t *n, Def **sub, AstNode *at) {
    AstList *fs = &sd->node->def.decls;
    uint32_t o = 0;
    for (uint32_t k = 0; k < fs->len; k++) {
        uint32_t m;
        Def *s2;
        if (!field_size(F, sd, fs->items[k], &m, &s2, at)) return false;
        if (fs->items[k]->decl.name == field) {
            *off = o;
            *n = m;
            *sub = s2;
            return true;
        }
        o += m;
    }
    diag_error(at->span, "struct `%s` has no field `%s`", sd->name, field);
    return false;
}

/* `p.x.y` where p is a struct-typed function argument */
static bool env_field(Flattener *F, AstNode *e, Val *out, bool *handled) {
    AstNode *path[16];
    uint32_t n = 0;
    AstNode *x = e;
    for (; x->kind == AST_FIELD && n < 16; x = x->field.base) path[n++] = x;
    Env *v = x->kind == AST_IDENT ? env_find(F->env, x->ident.name) : NULL;
    *handled = v && v->sdef;
    if (!*handled) return false;
    Def *sd = v->sdef;
    uint32_t off = 0, cnt = v->val.n;
    for (uint32_t i = n; i-- > 0;) {
        uint32_t o, m;
        Def *sub;
        if (!sd) {
            diag_error(path[i]->span, "`%s` is not a struct", path[i]->field.name);
            return false;
        }
        if (!struct_field_slice(F, sd, path[i]->field.name, &o, &m, &sub, path[i])) return false;
        off += o;
        cnt = m;
        sd = sub;
    }
    if (cnt == 1 && !sd) {
        *out = val_scalar(val_at(&v->val, off));
        return true;
    }
    Val r = val_new(F, 1, &cnt);
    for (uint32_t i = 0; i < cnt; i++) r.el[i] = val_at(&v->val, off + i);
    *out = r;
    return true;
}

static bool tr_name(Flattener *F, Inst *scope, AstNode *e, Val *out) {
    if (e->kind == AST_FIELD) {
        bool handled;
        bool ok = env_field(F, e, out, &handled);
        if (handled) return ok;
    }
    if (e->kind == AST_IDENT) {
        Env *v = env_find(F->env, e->ident.name);
        if (v) {
            *out = v->val;
            return true;
        }
        if (!scope || !inst_elem(scope, e->ident.name)) {
            Sym n = e->ident.name;
            if (n == F->s_time) {
                *out = val_scalar(expr_time(F->ctx));
                return true;
            }
            if (n == F->s_pi || n == F->s_pi_u) {
                *out = val_scalar(expr_const(F->ctx, 3.14159265358979323846));
                return true;
            }
        }
    }
    if (e->kind == AST_FIELD) {
        AstNode *root = e;
        while (root->kind == AST_FIELD) root = root->field.base;
        if (root->kind == AST_IDENT && !env_find(F->env, root->ident.name) &&
            !(scope && inst_elem(scope, root->ident.name))) {
            int k = enum_value(F, scope, e);
            if (k < 0) return false;
            if (k > 0) {
                *out = val_scalar(expr_const(F->ctx, k));
                return true;
            }
        }
    }
    if (e->kind == AST_INDEX) {
        Ref b;
        AstNode *base = e->index.base;
        bool direct = !has_slice(&e->index.subs) &&
                      !(base->kind == AST_IDENT && env_find(F->env, base->ident.name));
        if (direct && resolve_ref(F, scope, base, false, &b) && b.var && b.var->nd == e->index.subs.len) {
            uint32_t off;
            if (!const_offset(F, scope, &e->index.subs, b.var->nd, b.var->dims, &off, true)) return false;
            b.off = off;
            b.cnt = 1;
            return var_value(F, &b, false, out, e);
        }
        Val bv;
        if (!tr_val(F, scope, base, &bv)) return false;
        return val_index(F, scope, bv, e, out);
    }
    Ref r;
    if (!resolve_ref(F, scope, e, true, &r)) return false;
    if (r.inst && r.inst->def->node->kind == AST_STRUCT) return struct_value(F, r.inst, e, out);
    if (!r.var) {
        diag_error(e->span, "`%s` is a component, not a value", r.inst ? r.inst->path : r.arr->name);
        return false;
    }
    return var_value(F, &r, true, out, e);
}

/* general subscripts: scalars, `:`, ranges and vectors of indices */
static bool val_index(Flattener *F, Inst *scope, Val base, AstNode *e, Val *out) {
    AstList *subs = &e->index.subs;
    if (subs->len != base.nd) {
        diag_error(e->span, "%u subscript%s given for %s", subs->len, subs->len == 1 ? "" : "s",
                   shape_str(F, &base));
        return false;
    }
    uint32_t *idx[VAL_MAXD], cnt[VAL_MAXD], rdims[VAL_MAXD];
    uint8_t rnd = 0;
    for (uint32_t k = 0; k < subs->len; k++) {
        AstNode *s = subs->items[k];
        uint32_t d = base.dims[k];
        if (s->kind == AST_COLON) {
            idx[k] = ARENA_ARRAY(F->arena, uint32_t, d ? d : 1);
            for (uint32_t i = 0; i < d; i++) idx[k][i] = i;
            cnt[k] = d;
            rdims[rnd++] = d;
            continue;
        }
        uint32_t save = F->end_val;
        F->end_val = d;
        Val v;
        bool ok = const_val(F, scope, s, &v);
        F->end_val = save;
        if (!ok || v.str) return false;
        idx[k] = ARENA_ARRAY(F->arena, uint32_t, v.n ? v.n : 1);
        cnt[k] = v.n;
        for (uint32_t i = 0; i < v.n; i++) {
            double x = val_at(&v, i)->value;
            if (x != floor(x) || x < 1 || x > d) {
                diag_error(s->span, "index %g is out of range 1:%u", x, d);
                return false;
            }
            idx[k][i] = (uint32_t)x - 1;
        }
        if (v.nd) rdims[rnd++] = v.n;
    }
    Val r = val_new(F, rnd, rdims);
    uint32_t pos[VAL_MAXD] = {0};
    for (uint32_t out_i = 0; out_i < r.n; out_i++) {
        uint32_t off = 0;
        for (uint32_t k = 0; k < subs->len; k++) off = off * base.dims[k] + idx[k][pos[k]];
        if (rnd) r.el[out_i] = val_at(&base, off);
        else r.s = val_at(&base, off);
        for (int k = (int)subs->len - 1; k >= 0; k--) {
            if (++pos[k] < cnt[k]) break;
            pos[k] = 0;
        }
    }
    *out = r;
    return true;
}

/* ---------- operators ---------- */

typedef Expr *(*BinFn)(ExprCtx *, Expr *, Expr *);

static Expr *mod_fn(ExprCtx *c, Expr *a, Expr *b) { return expr_call(c, FN_REM, a, b); }
static Expr *lt_fn(ExprCtx *c, Expr *a, Expr *b) { return expr_cmp(c, EXPR_LT, a, b); }
static Expr *le_fn(ExprCtx *c, Expr *a, Expr *b) { return expr_cmp(c, EXPR_LE, a, b); }
static Expr *gt_fn(ExprCtx *c, Expr *a, Expr *b) { return expr_cmp(c, EXPR_GT, a, b); }
static Expr *ge_fn(ExprCtx *c, Expr *a, Expr *b) { return expr_cmp(c, EXPR_GE, a, b); }
static Expr *eq_fn(ExprCtx *c, Expr *a, Expr *b) { return expr_cmp(c, EXPR_EQ, a, b); }
static Expr *ne_fn(ExprCtx *c, Expr *a, Expr *b) { return expr_cmp(c, EXPR_NE, a, b); }

static BinFn bin_fn(AstOp op) {
    switch (op) {
    case OP_ADD: case OP_EADD: return expr_add;
    case OP_SUB: case OP_ESUB: return expr_sub;
    case OP_MUL: case OP_EMUL: return expr_mul;
    case OP_DIV: case OP_EDIV: return expr_div;
    case OP_POW: case OP_EPOW: return expr_pow;
    case OP_MOD: case OP_EMOD: return mod_fn;
    case OP_LT: return lt_fn;
    case OP_LE: return le_fn;
    case OP_GT: return gt_fn;
    case OP_GE: return ge_fn;
    case OP_EQ: return eq_fn;
    case OP_NE: return ne_fn;
    case OP_AND: return expr_and;
    case OP_OR: return expr_or;
    default: return NULL;
    }
}

/* element-wise with scalar broadcasting */
static bool val_map2(Flattener *F, BinFn fn, Val a, Val b, AstNode *at, Val *out) {
    if (a.nd && b.nd && !same_shape(&a, &b)) {
        diag_error(at->span, "the operands have different shapes: %s and %s", shape_str(F, &a),
                   shape_str(F, &b));
        return false;
    }
    Val r = a.nd ? val_new(F, a.nd, a.dims) : b.nd ? val_new(F, b.nd, b.dims) : val_scalar(NULL);
    for (uint32_t i = 0; i < r.n; i++) {
        Expr *x = fn(F->ctx, val_at(&a, a.nd ? i : 0), val_at(&b, b.nd ? i : 0));
        if (r.el) r.el[i] = x;
        else r.s = x;
    }
    *out = r;
    return true;
}

static bool tr_binary(Flattener *F, AstNode *e, Val a, Val b, Val *out) {
    AstOp op = e->binary.op;
    if (a.str || b.str) {
        if ((op == OP_EQ || op == OP_NE) && a.str && b.str) {
            bool eq = strcmp(a.str, b.str) == 0;
            *out = val_scalar(expr_const(F->ctx, (op == OP_EQ) == eq));
            return true;
        }
        diag_error(e->span, "a string is not a number");
        return false;
    }
    if (op == OP_MUL && a.nd && b.nd) return val_matmul(F, a, b, e, out);
    bool elementwise = op == OP_EADD || op == OP_ESUB || op == OP_EMUL || op == OP_EDIV ||
                       op == OP_EPOW || op == OP_EMOD || op == OP_ADD || op == OP_SUB;
    if (!elementwise && (a.nd || b.nd)) {
        bool scale = (op == OP_MUL || op == OP_DIV) && b.nd == 0;
        if (!scale && !(op == OP_MUL && a.nd == 0)) {
            diag_error(e->span, "`%s` is not defined for %s and %s (use the element-wise `.%s`)",
                       ast_op_names[op], shape_str(F, &a), shape_str(F, &b), ast_op_names[op]);
            return false;
        }
    }
    return val_map2(F, bin_fn(op), a, b, e, out);
}

static bool tr_unary(Flattener *F, AstNode *e, Val a, Val *out) {
    if (a.str) {
        diag_error(e->span, "a string is not a number");
        return false;
    }
    Val r = a.nd ? val_new(F, a.nd, a.dims) : val_scalar(NULL);
    for (uint32_t i = 0; i < a.n; i++) {
        Expr *x = val_at(&a, i);
        if (e->unary.op == OP_NEG) x = expr_neg(F->ctx, x);
        else if (e->unary.op == OP_NOT) x = expr_not(F->ctx, x);
        if (r.el) r.el[i] = x;
        else r.s = x;
    }
    *out = r;
    return true;
}

/* ---------- array literals, ranges, comprehensions ---------- */

static bool tr_array(Flattener *F, Inst *scope, AstNode *e, Val *out) {
    AstList *xs = &e->array.elems;
    if (xs->len == 0) {
        uint32_t z = 0;
        *out = val_new(F, 1, &z);
        return true;
    }
    Val *vs = ARENA_ARRAY(F->arena, Val, xs->len);
    for (uint32_t i = 0; i < xs->len; i++) {
        if (!tr_val(F, scope, xs->items[i], &vs[i])) return false;
        if (vs[i].str || !same_shape(&vs[i], &vs[0])) {
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
    uint32_t m = vs[0].n, o = 0;
    for (uint32_t i = 0; i < xs->len; i++)
        for (uint32_t j = 0; j < m; j++) r.el[o++] = val_at(&vs[i], j);
    *out = r;
    return true;
}

static bool tr_range(Flattener *F, Inst *scope, AstNode *e, Val *out) {
    Val a, s = val_scalar(expr_const(F->ctx, 1)), b;
    if (!const_val(F, scope, e->range.start, &a) || !const_val(F, scope, e->range.stop, &b)) return false;
    if (e->range.step && !const_val(F, scope, e->range.step, &s)) return false;
    if (a.nd || b.nd || s.nd || a.str || b.str || s.str) {
        diag_error(e->span, "a range needs scalar bounds");
        return false;
    }
    double x0 = a.s->value, dx = s.s->value, x1 = b.s->value;
    if (dx == 0) {
        diag_error(e->span, "the step of a range cannot be zero");
        return false;
    }
    double cnt = floor((x1 - x0) / dx + 1e-9) + 1;
    if (cnt < 0) cnt = 0;
    if (cnt > 1e8) {
        diag_error(e->span, "this range has %.0f elements; that is too many", cnt);
        return false;
    }
    uint32_t n = (uint32_t)cnt;
    Val r = val_new(F, 1, &n);
    for (uint32_t i = 0; i < n; i++) r.el[i] = expr_const(F->ctx, x0 + dx * i);
    *out = r;
    return true;
}

static bool compr_rec(Flattener *F, Inst *scope, AstNode *e, uint32_t k, ExprPtrVec *acc, uint32_t *dims) {
    if (k == e->compr.iters.len) {
        Val v;
        if (!tr_val(F, scope, e->compr.body, &v)) return false;
        if (v.nd || v.str) {
            diag_error(e->compr.body->span, "a comprehension element must be a scalar");
            return false;
        }
        vec_push(F->arena, acc, v.s);
        return true;
    }
    AstNode *it = e->compr.iters.items[k];
    Val r;
    if (!const_val(F, scope, it->iter.range, &r) || r.str) return false;
    dims[k] = r.n;
    Env *save = F->env;
    bool ok = true;
    for (uint32_t i = 0; ok && i < r.n; i++) {
        F->env = env_push(F, save, it->iter.name, val_scalar(val_at(&r, i)));
        ok = compr_rec(F, scope, e, k + 1, acc, dims);
    }
    F->env = save;
    return ok;
}

static bool tr_comprehension(Flattener *F, Inst *scope, AstNode *e, Val *out) {
    if (e->compr.iters.len > VAL_MAXD) {
        diag_error(e->span, "at most %d `for` clauses", VAL_MAXD);
        return false;
    }
    ExprPtrVec acc = {0};
    uint32_t dims[VAL_MAXD] = {0};
    if (!compr_rec(F, scope, e, 0, &acc, dims)) return false;
    Val r = val_new(F, (uint8_t)e->compr.iters.len, dims);
    for (uint32_t i = 0; i < r.n && i < acc.len; i++) r.el[i] = acc.data[i];
    *out = r;
    return true;
}

/* ---------- calls ---------- */

static Expr *der_leaf(void *ud, Expr *leaf) {
    Flattener *F = ud;
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

/* der(der(x)): the inner derivative becomes a helper variable `x'` with
 * the equation der(x) = x' (one more unknown, one more equation), so the
 * outer der() differentiates an ordinary variable */
static uint32_t aux_der_var(Flattener *F, uint32_t v, AstNode *at) {
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
    fv.name = arena_printf(F->arena, "%s'", F->m->vars.data[v].name); /* never a Dyad name */
    fv.span = at->span;
    fv.min = -__builtin_inf();
    fv.max = __builtin_inf();
    vec_push(F->arena, &F->m->vars, fv);
    vec_push(F->arena, &F->var_elems, e);
    vec_push(F->arena, &F->var_elem_off, 0);
    add_eq(F, FE_NORMAL, var_leaf(F, e->var), expr_leaf(F->ctx, EXPR_DER, v), src->owner->path, at->span);
    hmap_put(F->arena, &F->aux_der, (uint64_t)v + 1, (void *)(uintptr_t)(e->var + 1));
    return e->var;
}

typedef struct { Flattener *F; AstNode *at; } AuxCtx;

static Expr *aux_leaf(void *ud, Expr *leaf) {
    AuxCtx *a = ud;
    if (leaf->kind != EXPR_DER) return leaf;
    return var_leaf(a->F, aux_der_var(a->F, leaf->index, a->at));
}

static bool tr_der(Flattener *F, Inst *scope, AstNode *call, Val *out) {
    if (call->call.args.len != 1) {
        diag_error(call->span, "der() takes exactly one argument");
        return false;
    }
    if (F->const_mode) {
        diag_error(call->span, "der() is not known at compile time");
        return false;
    }
    Val a;
    if (!tr_val(F, scope, call->call.args.items[0]->arg.value, &a)) return false;
    Val r = a.nd ? val_new(F, a.nd, a.dims) : val_scalar(NULL);
    for (uint32_t i = 0; i < a.n; i++) {
        Expr *x = val_at(&a, i);
        if (has_der(F, x)) {
            AuxCtx a = {F, call};
            x = expr_subst(F->ctx, x, aux_leaf, &a);
        }
        if (x->kind == EXPR_VAR && F->m->vars.data[x->index].kind == FV_VARIABLE)
            x = expr_leaf(F->ctx, EXPR_DER, x->index);
        else
            x = expr_dt(F->ctx, x, der_leaf, F);
        if (r.el) r.el[i] = x;
        else r.s = x;
    }
    *out = r;
    return true;
}

static Def *callee_def(Flattener *F, Inst *scope, AstNode *callee) {
    Sym q[16];
    uint32_t n = 0;
    AstNode *x = callee;
    while (x->kind == AST_FIELD && n < 15) {
        q[n++] = x->field.name;
        x = x->field.base;
    }
    if (x->kind != AST_IDENT) return NULL;
    q[n++] = x->ident.name;
    for (uint32_t i = 0; i < n / 2; i++) {
        Sym t = q[i];
        q[i] = q[n - 1 - i];
        q[n - 1 - i] = t;
    }
    AstQName qn = {q, n, callee->span};
    Library *lib = scope ? scope->def->lib : F->fn_lib;
    return sema_try_lookup(F->prog, lib ? lib : F->prog->root, &qn);
}

static bool tr_call(Flattener *F, Inst *scope, AstNode *e, Val *out) {
    AstNode *callee = e->call.callee;
    Sym name = callee->kind == AST_IDENT ? callee->ident.name : NULL;
    if (name && name == F->s_der) return tr_der(F, scope, e, out);
    if (name && (strcmp(name, "instream") == 0 || strcmp(name, "actualstream") == 0))
        return tr_instream(F, scope, e, name[0] == 'a', out);
    Def *d = callee_def(F, scope, callee);
    if (d && d->node->kind == AST_FUNCTION) return tr_function_call(F, scope, e, d, out);
    if (d && d->node->kind == AST_STRUCT) return tr_constructor(F, scope, e, d, out);
    if (callee->kind == AST_FIELD && e->call.args.len == 0) {
        int k = enum_value(F, scope, callee);
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
    bool ok = tr_builtin(F, scope, e, name, out, &handled);
    if (!handled) ok = tr_clock_builtin(F, scope, e, name, out, &handled);
    if (handled) return ok;
    diag_error(callee->span, "unknown function `%s`", name);
    return false;
}

/* ---------- dispatcher ---------- */

bool tr_val(Flattener *F, Inst *scope, AstNode *e, Val *out) {
    Val a, b, c;
    memset(out, 0, sizeof *out);
    if (!e) return false; /* left by syntax-error recovery, already reported */
    switch (e->kind) {
    case AST_NUM: *out = val_scalar(expr_const(F->ctx, e->num.value)); return true;
    case AST_BOOL: *out = val_scalar(expr_const(F->ctx, e->boolean.value)); return true;
    case AST_STR: out->str = e->str.value; return true;
    case AST_IDENT: case AST_FIELD: case AST_INDEX: return tr_name(F, scope, e, out);
    case AST_END:
        if (!F->end_val) {
            diag_error(e->span, "`end` is only allowed inside an index");
            return false;
        }
        *out = val_scalar(expr_const(F->ctx, F->end_val));
        return true;
    case AST_UNARY:
        return tr_val(F, scope, e->unary.lhs, &a) && tr_unary(F, e, a, out);
    case AST_BINARY:
        return tr_val(F, scope, e->binary.lhs, &a) && tr_val(F, scope, e->binary.rhs, &b) &&
               tr_binary(F, e, a, b, out);
    case AST_IFEXPR:
        if (!tr_val(F, scope, e->ifexpr.cond, &c)) return false;
        if (c.nd || c.str) {
            diag_error(e->ifexpr.cond->span, "a condition must be a scalar");
            return false;
        }
        if (expr_is_const(c.s)) return tr_val(F, scope, c.s->value != 0 ? e->ifexpr.then : e->ifexpr.else_, out);
        if (!tr_val(F, scope, e->ifexpr.then, &a) || !tr_val(F, scope, e->ifexpr.else_, &b)) return false;
        if (!same_shape(&a, &b) || a.str || b.str) {
            diag_error(e->span, "both branches must have the same shape: %s and %s", shape_str(F, &a),
                       shape_str(F, &b));
            return false;
        }
        *out = a.nd ? val_new(F, a.nd, a.dims) : val_scalar(NULL);
        for (uint32_t i = 0; i < a.n; i++) {
            Expr *x = expr_ifelse(F->ctx, c.s, val_at(&a, i), val_at(&b, i));
            if (out->el) out->el[i] = x;
            else out->s = x;
        }
        return true;
    case AST_CALL: return tr_call(F, scope, e, out);
    case AST_ARRAY: return tr_array(F, scope, e, out);
    case AST_RANGE: return tr_range(F, scope, e, out);
    case AST_COMPREHENSION: return tr_comprehension(F, scope, e, out);
    case AST_MISSING:
        diag_error(e->span, "`missing` is only allowed as the value of a parameter or variable");
        return false;
    case AST_COLON:
        diag_error(e->span, "`:` is only allowed inside an index");
        return false;
    case AST_AT: return tr_at(F, scope, e, out);
    default:
        diag_error(e->span, "this expression form (%s) is not supported", ast_kind_names[e->kind]);
        return false;
    }
}

Expr *tr_expr(Flattener *F, Inst *scope, AstNode *e) {
    Val v;
    if (!tr_val(F, scope, e, &v)) return NULL;
    if (v.str) {
        diag_error(e->span, "a string is not a number");
        return NULL;
    }
    if (v.nd) {
        diag_error(e->span, "a scalar is needed here, but this is %s", shape_str(F, &v));
        return NULL;
    }
    return v.s;
}
