/*
 * structs.c -- struct values.  A struct value is the vector of its scalar
 * fields in declaration order (nested structs flattened in place), so an
 * equation between two struct values holds field by field and a function
 * argument of a struct type is one Val.  A field is a slice of that
 * vector: its offset and size follow from the struct declaration
 * (struct_field_slice).
 *
 * Sources of struct values: an instance of a struct (a parameter or
 * variable declared with a struct type), a constructor call
 * `Point(x = 1)`, and a struct-typed function argument or local (`p.x`).
 * Cost: linear in the number of fields (nested fields counted).
 */
#include "flatten_internal.h"

static bool struct_fields(Flattener *F, Tx t, Inst *si, AstNode *e, ExprPtrVec *acc) {
    for (uint32_t i = 0; i < si->elems.len; i++) {
        Elem *f = si->elems.data[i];
        if (f->kind == ELEM_INST) {
            if (!f->child || !struct_fields(F, t, f->child, e, acc)) return false;
            continue;
        }
        Ref r = {f, 0, f->n, NULL, NULL};
        Val v;
        if (!tr_var_value(F, t, &r, true, &v, e)) return false;
        for (uint32_t k = 0; k < v.n; k++) vec_push(F->arena, acc, val_at(&v, k));
    }
    return true;
}

static Val vector_of(Flattener *F, ExprPtrVec *acc) {
    uint32_t n = acc->len;
    Val r = val_new(F, 1, &n);
    for (uint32_t i = 0; i < n; i++) r.el[i] = acc->data[i];
    return r;
}

/* the value of struct instance si */
bool struct_value(Flattener *F, Tx t, Inst *si, AstNode *e, Val *out) {
    ExprPtrVec acc = {0};
    if (!struct_fields(F, t, si, e, &acc)) return false;
    *out = vector_of(F, &acc);
    return true;
}

/* `Point(x = 1, y = 2)` in an expression: the field values in declaration
 * order (defaults for fields not given; a default sees constants only) */
bool struct_construct(Flattener *F, Tx t, AstNode *call, Def *sd, Val *out) {
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
        Tx ft = t;
        ft.scope = NULL;
        ft.env = NULL;
        for (uint32_t i = 0; i < call->call.args.len; i++)
            if (call->call.args.items[i]->arg.name == fd->decl.name) {
                x = call->call.args.items[i]->arg.value;
                ft = t;
            }
        if (!x) {
            diag_error(call->span, "`%s(...)` needs a value for field `%s`", sd->name, fd->decl.name);
            return false;
        }
        Val v;
        if (!tr_val(F, ft, x, &v)) return false;
        for (uint32_t i = 0; i < v.n; i++) vec_push(F->arena, &acc, val_at(&v, i));
    }
    *out = vector_of(F, &acc);
    return true;
}

/* ---------- layout ---------- */

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
    AstNode *ty = fd->decl.type;
    Def *d = ty && ty->kind == AST_TYPE ? sema_try_lookup(F->prog, sd->lib, &ty->type.name) : NULL;
    *sub = d && d->node->kind == AST_STRUCT ? d : NULL;
    if (*sub) return struct_size(F, *sub, n, at, 1);
    *n = 1;
    for (uint32_t k = 0; k < fd->decl.dims.len; k++) {
        int64_t m;
        if (!const_int(F, tx_in(NULL, NULL), fd->decl.dims.items[k], &m)) return false;
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

/* `p.x.y` where p is a struct-typed function argument or local */
bool struct_env_field(Flattener *F, Tx t, AstNode *e, Val *out, bool *handled) {
    AstNode *path[16];
    uint32_t n = 0;
    AstNode *x = e;
    for (; x->kind == AST_FIELD && n < 16; x = x->field.base) path[n++] = x;
    Env *v = x->kind == AST_IDENT ? env_find(t.env, x->ident.name) : NULL;
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
