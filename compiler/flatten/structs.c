/*
 * structs.c -- struct values.  A struct value is the vector of its scalar
 * fields in declaration order (nested structs flattened in place) and
 * knows its type (Val.sd), so an equation between two struct values holds
 * field by field and a field read keeps its declared shape
 * (`R.R[2, 3]` on a `Real[3, 3]` field).  The layout of a type (offset,
 * size and shape of every field) is computed once per definition.
 *
 * Types with a layout: structs, and connectors and components taken as
 * values (their numeric declarations, inherited ones first), so a
 * connector can be passed to a function argument declared with a struct
 * or connector type.  Sources of struct values: an instance of a struct,
 * a constructor call (`Point(x = 1)`, `RotationMatrix(frame_b.R)`:
 * positional arguments fill the fields in order), an instance passed to a
 * struct-typed function argument, and function arguments, locals and
 * results.  A value of another type converts by field names
 * (struct_coerce), so `absolute_rotation(frame_a, ...)` reads the `R` of
 * the connector `frame_a`.
 *
 * Cost: linear in the number of fields (nested fields counted).
 */
#include "flatten_internal.h"

#include <string.h>

/* a definition usable as the type of a value, or NULL */
Def *struct_type(Flattener *F, Library *lib, AstNode *type) {
    if (!type || type->kind != AST_TYPE) return NULL;
    Def *d = sema_try_lookup(F->prog, lib, &type->type.name);
    if (!d) return NULL;
    AstKind k = d->node->kind;
    if (k == AST_STRUCT || k == AST_COMPONENT || (k == AST_CONNECTOR && !d->node->def.alias)) return d;
    return NULL;
}

/* ---------- layout ---------- */

typedef Vec(StructField) FieldVec;

static bool layout_collect(Flattener *F, Def *sd, FieldVec *fs, uint32_t *n, AstNode *at, int depth);

static bool is_value_decl(AstNode *d) {
    return d->kind == AST_DECL && d->decl.kind != VAR_PATH && !d->decl.cond;
}

static bool field_dims(Flattener *F, Def *sd, AstNode *fd, StructField *f, AstNode *at) {
    f->nd = (uint8_t)fd->decl.dims.len;
    f->n = 1;
    if (f->nd > VAL_MAXD) {
        diag_error(fd->span, "arrays have at most %d dimensions", VAL_MAXD);
        return false;
    }
    for (uint32_t k = 0; k < f->nd; k++) {
        AstNode *d = fd->decl.dims.items[k];
        int64_t m = -1;
        if (d->kind == AST_COLON || !const_int(F, tx_in(NULL, NULL), d, &m) || m < 0) {
            diag_error(at->span, "field `%s` of `%s` needs a constant size to be used as a value", fd->decl.name,
                       sd->name);
            return false;
        }
        f->dims[k] = (uint32_t)m;
        f->n *= (uint32_t)m;
    }
    return true;
}

static bool layout_field(Flattener *F, Def *sd, AstNode *fd, FieldVec *fs, uint32_t *n, AstNode *at, int depth) {
    StructField f = {0};
    f.name = fd->decl.name;
    f.off = *n;
    Def *sub = struct_type(F, sd->lib, fd->decl.type);
    if (sub && sub->node->kind == AST_STRUCT) {
        const StructLayout *l = struct_layout(F, sub, at);
        if (!l || depth > 16) return false;
        if (fd->decl.dims.len) {
            diag_error(fd->span, "arrays of structs are not supported yet");
            return false;
        }
        f.sd = sub;
        f.n = l->n;
    } else if (!field_dims(F, sd, fd, &f, at)) {
        return false;
    }
    *n += f.n;
    vec_push(F->arena, fs, f);
    return true;
}

static bool layout_collect(Flattener *F, Def *sd, FieldVec *fs, uint32_t *n, AstNode *at, int depth) {
    AstNode *node = sd->node;
    if (depth > 32) return false;
    for (uint32_t i = 0; node->kind != AST_STRUCT && i < node->def.extends.len; i++) {
        Def *base = sema_try_lookup(F->prog, sd->lib, &node->def.extends.items[i]->extends.type->type.name);
        if (base && !layout_collect(F, base, fs, n, at, depth + 1)) return false;
    }
    for (uint32_t i = 0; i < node->def.decls.len; i++) {
        AstNode *fd = node->def.decls.items[i];
        if (is_value_decl(fd) && !layout_field(F, sd, fd, fs, n, at, depth)) return false;
    }
    return true;
}

const StructLayout *struct_layout(Flattener *F, Def *sd, AstNode *at) {
    StructLayout *l = hmap_get(&F->layouts, (uint64_t)(uintptr_t)sd);
    if (l) return l;
    FieldVec fs = {0};
    uint32_t n = 0;
    if (!layout_collect(F, sd, &fs, &n, at, 0)) return NULL;
    l = ARENA_NEW(F->arena, StructLayout);
    l->def = sd;
    l->nfields = fs.len;
    l->fields = fs.data;
    l->n = n;
    hmap_put(F->arena, &F->layouts, (uint64_t)(uintptr_t)sd, l);
    return l;
}

static const StructField *layout_find(const StructLayout *l, Sym name) {
    for (uint32_t i = 0; i < l->nfields; i++)
        if (l->fields[i].name == name) return &l->fields[i];
    return NULL;
}

/* ---------- building values ---------- */

static Val struct_new(Flattener *F, const StructLayout *l) {
    uint32_t n = l->n;
    Val r = val_new(F, 1, &n);
    r.sd = l->def;
    return r;
}

static bool shape_fits(const StructField *f, const Val *v) {
    if (f->sd) return v->sd == f->sd;
    if (v->n != f->n || v->str) return false;
    if (v->nd == 0 || f->nd == 0) return v->n == 1;
    if (v->nd != f->nd) return false;
    for (uint8_t k = 0; k < f->nd; k++)
        if (v->dims[k] != f->dims[k]) return false;
    return true;
}

static const char *field_shape(Flattener *F, const StructField *f) {
    if (f->sd) return arena_printf(F->arena, "a `%s`", f->sd->name);
    Val v = {0};
    v.nd = f->nd;
    memcpy(v.dims, f->dims, sizeof v.dims);
    return val_shape_str(F, &v);
}

/* store v as field f of r, checking its shape */
static bool put_field(Flattener *F, Val *r, const StructField *f, Val v, AstNode *at, Def *owner) {
    if (!val_present(&v, at)) return false;
    if (!shape_fits(f, &v)) {
        diag_error(at->span, "field `%s` of `%s` is %s, but the value is %s", f->name, owner->name,
                   field_shape(F, f), v.sd ? arena_printf(F->arena, "a `%s`", v.sd->name) : val_shape_str(F, &v));
        return false;
    }
    for (uint32_t i = 0; i < f->n; i++) r->el[f->off + i] = val_at(&v, i);
    return true;
}

/* the value of instance `inst` as a `sd`: its elements named like the
 * fields of sd (nested struct fields from nested instances) */
bool struct_from_inst(Flattener *F, Tx t, Inst *inst, Def *sd, AstNode *at, Val *out) {
    const StructLayout *l = struct_layout(F, sd, at);
    if (!l) return false;
    Val r = struct_new(F, l);
    for (uint32_t i = 0; i < l->nfields; i++) {
        const StructField *f = &l->fields[i];
        Elem *e = inst_elem(inst, f->name);
        bool fits = e && !e->absent && (f->sd ? e->kind == ELEM_INST && e->child : e->kind == ELEM_VAR);
        if (!fits) {
            diag_error(at->span, "`%s` (a `%s`) has no field `%s` of the `%s` it is used as",
                       inst->path[0] ? inst->path : inst->def->name, inst->def->name, f->name, sd->name);
            return false;
        }
        Val v;
        Ref ref = {e, 0, e->n, NULL, NULL};
        bool ok = f->sd ? struct_from_inst(F, t, e->child, f->sd, at, &v) : tr_var_value(F, t, &ref, true, &v, at);
        if (!ok || !put_field(F, &r, f, v, at, sd)) return false;
    }
    *out = r;
    return true;
}

/* the value of the arguments of a constructor call: positional ones fill
 * the fields in order, named ones by name */
static bool bind_ctor_args(Flattener *F, Tx t, AstNode *call, const StructLayout *l, AstNode **given) {
    AstList *args = &call->call.args;
    for (uint32_t i = 0; i < args->len; i++) {
        AstNode *a = args->items[i];
        uint32_t k = i;
        if (a->arg.name) {
            const StructField *f = layout_find(l, a->arg.name);
            if (!f) {
                diag_error(a->span, "`%s` has no field `%s`", l->def->name, a->arg.name);
                return false;
            }
            k = (uint32_t)(f - l->fields);
        } else if (k >= l->nfields) {
            diag_error(a->span, "`%s` has %u field%s", l->def->name, l->nfields, l->nfields == 1 ? "" : "s");
            return false;
        }
        if (given[k]) {
            diag_error(a->span, "field `%s` is given twice", l->fields[k].name);
            return false;
        }
        given[k] = a->arg.value;
    }
    (void)F;
    (void)t;
    return true;
}

/* the declaration of field `name` of a struct definition (its default) */
static AstNode *field_decl(Def *sd, Sym name) {
    AstList *ds = &sd->node->def.decls;
    for (uint32_t i = 0; i < ds->len; i++)
        if (ds->items[i]->kind == AST_DECL && ds->items[i]->decl.name == name) return ds->items[i];
    return NULL;
}

/* `Point(x = 1, y = 2)`, `RotationMatrix(R)` in an expression: defaults for
 * the fields not given (a default sees constants only) */
bool struct_construct(Flattener *F, Tx t, AstNode *call, Def *sd, Val *out) {
    const StructLayout *l = struct_layout(F, sd, call);
    if (!l) return false;
    AstNode **given = ARENA_ARRAY(F->arena, AstNode *, l->nfields ? l->nfields : 1);
    if (!bind_ctor_args(F, t, call, l, given)) return false;
    Val r = struct_new(F, l);
    for (uint32_t k = 0; k < l->nfields; k++) {
        const StructField *f = &l->fields[k];
        AstNode *fd = field_decl(sd, f->name), *x = given[k] ? given[k] : fd ? fd->decl.value : NULL;
        if (!x || x->kind == AST_MISSING) {
            diag_error(call->span, "`%s(...)` needs a value for field `%s`", sd->name, f->name);
            return false;
        }
        Tx ft = t;
        if (!given[k]) ft.scope = NULL, ft.env = NULL, ft.lib = sd->lib;
        Val v;
        if (!tr_val(F, ft, x, &v)) return false;
        if (f->sd && !struct_coerce(F, v, f->sd, x, arena_printf(F->arena, "field `%s`", f->name), &v)) return false;
        if (!put_field(F, &r, f, v, x, sd)) return false;
    }
    *out = r;
    return true;
}

/* v as a value of type sd: unchanged when it is one, converted by field
 * names when it is another struct; an untyped vector of the right size is
 * taken as one */
bool struct_coerce(Flattener *F, Val v, Def *sd, AstNode *at, const char *what, Val *out) {
    const StructLayout *l = struct_layout(F, sd, at);
    if (!l) return false;
    if (v.sd == sd || (!v.sd && v.nd == 1 && v.n == l->n && !v.str && !v.missing)) {
        *out = v;
        out->sd = sd;
        return true;
    }
    if (!v.sd) {
        diag_error(at->span, "%s must be a `%s` value", what, sd->name);
        return false;
    }
    Val r = struct_new(F, l);
    for (uint32_t i = 0; i < l->nfields; i++) {
        const StructField *f = &l->fields[i];
        Val fv;
        if (!struct_field(F, v, f->name, at, &fv)) {
            diag_note(at->span, "%s is a `%s`, used as a `%s`", what, v.sd->name, sd->name);
            return false;
        }
        if (f->sd && !struct_coerce(F, fv, f->sd, at, what, &fv)) return false;
        if (!put_field(F, &r, f, fv, at, sd)) return false;
    }
    *out = r;
    return true;
}

/* field `name` of struct value v, with its declared shape */
bool struct_field(Flattener *F, Val v, Sym name, AstNode *at, Val *out) {
    if (!v.sd) {
        diag_error(at->span, "`.%s`: the value is not a struct", name);
        return false;
    }
    const StructLayout *l = struct_layout(F, v.sd, at);
    const StructField *f = l ? layout_find(l, name) : NULL;
    if (!f) {
        if (l) diag_error(at->span, "`%s` has no field `%s`", v.sd->name, name);
        return false;
    }
    if (f->nd == 0 && !f->sd) {
        *out = val_scalar(val_at(&v, f->off));
        return true;
    }
    uint32_t n = f->n;
    Val r = f->sd ? val_new(F, 1, &n) : val_new(F, f->nd, f->dims);
    for (uint32_t i = 0; i < f->n; i++) r.el[i] = val_at(&v, f->off + i);
    r.sd = f->sd;
    *out = r;
    return true;
}

/* `p.x.y` where p is a function argument or local */
bool struct_env_field(Flattener *F, Tx t, AstNode *e, Val *out, bool *handled) {
    AstNode *x = e;
    while (x->kind == AST_FIELD) x = x->field.base;
    Env *v = x->kind == AST_IDENT ? env_find(t.env, x->ident.name) : NULL;
    *handled = v != NULL;
    if (!v) return false;
    if (e->kind != AST_FIELD) {
        *out = v->val;
        return true;
    }
    Val base;
    if (!struct_env_field(F, t, e->field.base, &base, handled)) return false;
    return struct_field(F, base, e->field.name, e, out);
}

/* the value of struct instance si (declared with a struct type) */
bool struct_value(Flattener *F, Tx t, Inst *si, AstNode *e, Val *out) {
    return struct_from_inst(F, t, si, si->def, e, out);
}
