/*
 * refs.c -- what a name denotes: component references (`a.b[2].c`) into
 * the instance tree, environments (loop indices, function locals),
 * qualified names (`Lib.Enum.Case`), enum values and the cached EXPR_VAR
 * leaf of every flat variable.
 *
 * A reference resolves element by element from the translation context's
 * scope; constant subscripts select one element of a variable or one
 * instance of a component array.  The common subscript forms (`i`, `i-1`,
 * `2*i+1`, `end`) are folded without building expressions, so indexing in
 * a `for` loop over an n-element array stays O(n).
 */
#include "flatten_internal.h"
#include "numfmt.h"

#include <math.h>
#include <string.h>

Env *env_push(Flattener *F, Env *next, Sym name, Val v) {
    Env *e = ARENA_NEW(F->arena, Env);
    e->name = name;
    e->val = v;
    e->next = next;
    return e;
}

Env *env_find(Env *e, Sym name) {
    for (; e; e = e->next)
        if (e->name == name) return e;
    return NULL;
}

/* the names of an AST_IDENT/AST_FIELD chain, outermost first (`A.B.c` ->
 * A, B, c); 0 when it is not such a chain or longer than cap */
uint32_t field_chain_qname(AstNode *e, Sym *q, uint32_t cap) {
    uint32_t n = 0;
    AstNode *x = e;
    for (; x->kind == AST_FIELD; x = x->field.base)
        if (++n >= cap) return 0;
    if (x->kind != AST_IDENT) return 0;
    q[0] = x->ident.name;
    uint32_t i = n;
    for (x = e; x->kind == AST_FIELD; x = x->field.base) q[i--] = x->field.name;
    return n + 1;
}

/* the library names are looked up in: the scope's, else the function's */
Library *tx_lib(Flattener *F, Tx t) {
    Library *lib = t.scope ? t.scope->def->lib : t.lib;
    return lib ? lib : F->prog->root;
}

/* ---------- enums ---------- */

int enum_case_index(Def *en, Sym name) {
    AstList *c = &en->node->enum_.cases;
    for (uint32_t i = 0; i < c->len; i++)
        if (c->items[i]->enumcase.name == name) return (int)i + 1;
    return 0;
}

Def *enum_of_elem(Flattener *F, Elem *el) {
    if (!el || !el->type || el->type->kind != AST_TYPE) return NULL;
    Def *d = sema_try_lookup(F->prog, el->type_lib, &el->type->type.name);
    return d && d->node->kind == AST_ENUM ? d : NULL;
}

/* `E.A` / `Lib.E.A`: the 1-based case index, 0 if not an enum, -1 after
 * reporting an unknown case */
int enum_value(Flattener *F, Tx t, AstNode *e) {
    Sym q[16];
    uint32_t n = field_chain_qname(e, q, 16);
    if (n < 2) return 0;
    AstQName qn = {q, n - 1, e->span};
    Def *d = sema_try_lookup(F->prog, tx_lib(F, t), &qn);
    if (!d || d->node->kind != AST_ENUM) return 0;
    int k = enum_case_index(d, q[n - 1]);
    if (!k) diag_error(e->span, "enum `%s` has no case `%s`", d->qname, q[n - 1]);
    return k ? k : -1;
}

/* ---------- leaves ---------- */

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

/* ---------- references ---------- */

/* After "no element `node`": the note when `node` is the name an older
 * version of the standard library used for an element `inst` has. */
static void note_older_name(Flattener *F, Inst *inst, const char *name, Span at) {
    const char *now = sema_current_name(name);
    if (now && inst && inst_elem(inst, intern_cstr(F->prog->in, now)))
        diag_note(at, "`%s` is a name of an older version of the Dyad standard library; here it is `%s`", name, now);
}

void unknown_name(Flattener *F, Tx t, AstNode *e) {
    SymVec names = {0};
    for (uint32_t i = 0; t.scope && i < t.scope->elems.len; i++)
        vec_push(F->arena, &names, t.scope->elems.data[i]->name);
    for (Env *v = t.env; v; v = v->next) vec_push(F->arena, &names, v->name);
    Sym hint = suggest_name(e->ident.name, names.data, names.len);
    if (hint) diag_error(e->span, "unknown name `%s`; did you mean `%s`?", e->ident.name, hint);
    else diag_error(e->span, "unknown name `%s`", e->ident.name);
    note_older_name(F, t.scope, e->ident.name, e->span);
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

/* the common subscript forms without building expressions */
static bool fast_num(Tx t, AstNode *e, double *out) {
    double a, b;
    switch (e->kind) {
    case AST_NUM: *out = e->num.value; return true;
    case AST_END: *out = t.end; return t.end != 0;
    case AST_IDENT: {
        Env *v = env_find(t.env, e->ident.name);
        if (!v || v->val.nd || v->val.str || !expr_is_const(v->val.s)) return false;
        *out = v->val.s->value;
        return true;
    }
    case AST_UNARY:
        if (e->unary.op != OP_NEG || !fast_num(t, e->unary.lhs, &a)) return false;
        *out = -a;
        return true;
    case AST_BINARY:
        if (!fast_num(t, e->binary.lhs, &a) || !fast_num(t, e->binary.rhs, &b)) return false;
        switch (e->binary.op) {
        case OP_ADD: *out = a + b; return true;
        case OP_SUB: *out = a - b; return true;
        case OP_MUL: *out = a * b; return true;
        default: return false;
        }
    default: return false;
    }
}

/* one scalar subscript of a dimension of size d, evaluated with `end` = d */
static bool subscript(Flattener *F, Tx t, AstNode *s, uint32_t d, double *x) {
    t.end = d;
    if (fast_num(t, s, x)) return true;
    Val v;
    if (!const_val(F, t, s, &v) || v.nd != 0 || v.str) return false; /* not a scalar: a slice */
    *x = v.s->value;
    return true;
}

/* An array expression as written (`x`, `masses[2].q`), for messages. */
const char *ref_text(Flattener *F, const AstNode *e) {
    SrcFile *f = e && e->span.file ? src_get(e->span.file) : NULL;
    if (!f || e->span.hi <= e->span.lo || e->span.hi > f->len) return "the array";
    return arena_printf(F->arena, "`%.*s`", (int)(e->span.hi - e->span.lo), f->text + e->span.lo);
}

/* "index 4 of `x` is out of range 1:3" (and which dimension, of several) */
void ref_range_error(Flattener *F, const AstNode *array, Span at, double x, uint32_t k, uint8_t nd, uint32_t d) {
    if (nd > 1)
        diag_error(at, "index %s of %s is out of range 1:%u (dimension %u of %u)", dyrt_num(x).s,
                   ref_text(F, array), d, k + 1, nd);
    else
        diag_error(at, "index %s of %s is out of range 1:%u", dyrt_num(x).s, ref_text(F, array), d);
}

/* row-major offset of scalar subscripts into an array of shape `dims`
 * (`array`: the expression subscripted, for messages) */
bool ref_const_offset(Flattener *F, Tx t, const AstNode *array, AstList *subs, uint8_t nd, const uint32_t *dims,
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
        double x;
        if (s->kind == AST_COLON || !subscript(F, t, s, dims[k], &x)) return false;
        if (x != floor(x) || x < 1 || x > dims[k]) {
            ref_range_error(F, array, s->span, x, k, nd, dims[k]);
            return false;
        }
        o = o * dims[k] + (uint32_t)x - 1;
    }
    *off = o;
    return true;
}

bool subs_have_slice(AstList *subs) {
    for (uint32_t k = 0; k < subs->len; k++)
        if (subs->items[k]->kind == AST_COLON || subs->items[k]->kind == AST_RANGE) return true;
    return false;
}

static bool ref_field(Flattener *F, Tx t, AstNode *e, bool report, Ref *out) {
    Ref b;
    if (!resolve_ref(F, t, e->field.base, report, &b)) return false;
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
        {
            diag_error(e->span, "`%s` (a `%s`) has no element `%s`", b.inst->path[0] ? b.inst->path : b.inst->def->name,
                       b.inst->def->name, e->field.name);
            note_older_name(F, b.inst, e->field.name, e->span);
        }
        return false;
    }
    return elem_ref(el, e, report, out);
}

static bool ref_index(Flattener *F, Tx t, AstNode *e, bool report, Ref *out) {
    Ref b;
    if (!resolve_ref(F, t, e->index.base, report, &b)) return false;
    if (b.inst || (b.var && b.var->nd == 0)) {
        if (report) diag_error(e->span, "`%s` is not an array", b.inst ? b.inst->path : b.var->name);
        return false;
    }
    if (subs_have_slice(&e->index.subs)) {
        if (report) diag_error(e->span, "a slice is not allowed here; index every dimension");
        return false;
    }
    Elem *a = b.var ? b.var : b.arr;
    uint32_t off;
    if (!ref_const_offset(F, t, e->index.base, &e->index.subs, a->nd, a->dims, &off, report)) return false;
    if (b.var) {
        *out = b;
        out->off = off;
        out->cnt = 1;
    } else {
        out->inst = b.arr->children[off];
    }
    return true;
}

bool resolve_ref(Flattener *F, Tx t, AstNode *e, bool report, Ref *out) {
    memset(out, 0, sizeof *out);
    if (e->kind == AST_IDENT) {
        Elem *el = t.scope ? inst_elem(t.scope, e->ident.name) : NULL;
        if (!el) {
            if (report) unknown_name(F, t, e);
            return false;
        }
        return elem_ref(el, e, report, out);
    }
    if (e->kind == AST_FIELD) return ref_field(F, t, e, report, out);
    if (e->kind == AST_INDEX) return ref_index(F, t, e, report, out);
    if (report) diag_error(e->span, "expected a component reference");
    return false;
}

/* ---------- subscripts of templates ---------- */

/* the least and greatest value of affine form a over the box */
void tmpl_affine_bounds(const FlatDom *d, const ExprAffine *a, int64_t *lo, int64_t *hi) {
    *lo = *hi = a->c[0];
    for (uint32_t k = 0; k < d->nd; k++) {
        int64_t x = a->c[k + 1] * d->lo[k], y = a->c[k + 1] * (d->lo[k] + (int64_t)d->n[k] - 1);
        *lo += x < y ? x : y;
        *hi += x < y ? y : x;
    }
}

/* one subscript as an affine form over the template's IDX, in range
 * 1..d in every instance */
static bool template_subscript(Flattener *F, Tx t, AstNode *s, uint32_t d, ExprAffine *a) {
    double x;
    t.end = d;
    if (fast_num(t, s, &x)) {
        memset(a, 0, sizeof *a);
        if (x != floor(x) || x < 1 || x > d) return false;
        a->c[0] = (int64_t)x;
        return true;
    }
    Val v;
    if (s->kind == AST_COLON || !tr_val(F, tx_structural(t), s, &v) || v.nd || v.str || v.missing) return false;
    int64_t lo, hi;
    if (!expr_affine_of(v.s, a)) return false;
    tmpl_affine_bounds(F->tmpl, a, &lo, &hi);
    return lo >= 1 && hi <= (int64_t)d;
}

int tr_template_index(Flattener *F, Tx t, AstNode *e, Ref *b, Val *out) {
    Elem *el = b->var;
    AstList *subs = &e->index.subs;
    ExprAffine off = {{0}}, s;
    bool symbolic = false;
    for (uint32_t k = 0; k < el->nd; k++) {
        if (!template_subscript(F, t, subs->items[k], el->dims[k], &s)) {
            tmpl_refuse(F, subs->items[k]->span, "a subscript that is not affine in the loop indices, or out of range");
            return -1;
        }
        for (uint32_t j = 0; j <= EXPR_MAXIDX; j++) {
            off.c[j] = off.c[j] * el->dims[k] + s.c[j];
            symbolic |= j > 0 && s.c[j] != 0;
        }
        off.c[0] -= 1;
    }
    if (!symbolic) return 0;
    bool known = elem_is_param_like(el) && (el->is_structural || el->vkind == VAR_CONSTANT);
    if (known || t.structural || el->owner->is_analysis || el->var == NO_VAR) {
        tmpl_refuse(F, e->span, "an indexed value known at compile time");
        return -1;
    }
    off.c[0] += el->var;
    *out = val_scalar(expr_at(F->ctx, EXPR_VAR, expr_affine_expr(F->ctx, &off)));
    return 1;
}
