/*
 * val.c -- Val algebra: a Val is a shape (up to VAL_MAXD dimensions,
 * row-major) and one Expr per element; a scalar has nd = 0.  This file
 * knows nothing of names or scopes: it builds values and combines them --
 * element-wise operators with scalar broadcasting, the matrix product of
 * `*` on two arrays, `ifelse` over equal shapes.
 *
 * Cost: linear in the number of elements, except the matrix product
 * (m*k*n scalar products).
 */
#include "flatten_internal.h"

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

/* an empty value of a's shape */
Val val_like(Flattener *F, const Val *a) { return a->nd ? val_new(F, a->nd, a->dims) : val_scalar(NULL); }

void val_put(Val *r, uint32_t i, Expr *x) {
    if (r->el) r->el[i] = x;
    else r->s = x;
}

/* a value that is `missing` can only be passed on (to a function) or tested
 * with ismissing(); every consumer of elements checks it first */
bool val_present(const Val *v, AstNode *at) {
    if (!v->missing) return true;
    diag_error(at->span, "this is `missing` (it has no value): `missing` can only be passed to a function "
                         "or tested with ismissing()");
    return false;
}

bool val_same_shape(const Val *a, const Val *b) {
    if (a->nd != b->nd) return false;
    for (uint8_t k = 0; k < a->nd; k++)
        if (a->dims[k] != b->dims[k]) return false;
    return true;
}

const char *val_shape_str(Flattener *F, const Val *v) {
    if (v->nd == 0) return "a scalar";
    if (v->nd == 1) return arena_printf(F->arena, "a vector of %u", v->dims[0]);
    if (v->nd == 2) return arena_printf(F->arena, "a %ux%u matrix", v->dims[0], v->dims[1]);
    return arena_printf(F->arena, "a %u-dimensional array", v->nd);
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
    if (a.nd && b.nd && !val_same_shape(&a, &b)) {
        diag_error(at->span, "the operands have different shapes: %s and %s", val_shape_str(F, &a),
                   val_shape_str(F, &b));
        return false;
    }
    Val r = a.nd ? val_like(F, &a) : val_like(F, &b);
    for (uint32_t i = 0; i < r.n; i++)
        val_put(&r, i, fn(F->ctx, val_at(&a, a.nd ? i : 0), val_at(&b, b.nd ? i : 0)));
    *out = r;
    return true;
}

bool val_binary(Flattener *F, AstNode *e, Val a, Val b, Val *out) {
    AstOp op = e->binary.op;
    if (!val_present(&a, e->binary.lhs) || !val_present(&b, e->binary.rhs)) return false;
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
                       ast_op_names[op], val_shape_str(F, &a), val_shape_str(F, &b), ast_op_names[op]);
            return false;
        }
    }
    if (a.iv && b.iv) { /* two Integers: exact, unless the result is Real */
        bool handled;
        bool ok = int_binary(F, e, a, b, out, &handled);
        if (handled) return ok;
    }
    return val_map2(F, bin_fn(op), a, b, e, out);
}

bool val_unary(Flattener *F, AstNode *e, Val a, Val *out) {
    if (!val_present(&a, e)) return false;
    if (a.str) {
        diag_error(e->span, "a string is not a number");
        return false;
    }
    if (a.iv && e->unary.op != OP_NOT) return int_unary(F, e, a, out);
    Val r = val_like(F, &a);
    for (uint32_t i = 0; i < a.n; i++) {
        Expr *x = val_at(&a, i);
        if (e->unary.op == OP_NEG) x = expr_neg(F->ctx, x);
        else if (e->unary.op == OP_NOT) x = expr_not(F->ctx, x);
        val_put(&r, i, x);
    }
    *out = r;
    return true;
}

/* c ? a : b element by element (a condition that varies at run time) */
bool val_ifelse(Flattener *F, AstNode *at, Expr *c, Val a, Val b, Val *out) {
    if (!val_present(&a, at) || !val_present(&b, at)) return false;
    if (!val_same_shape(&a, &b) || a.str || b.str) {
        diag_error(at->span, "both branches must have the same shape: %s and %s", val_shape_str(F, &a),
                   val_shape_str(F, &b));
        return false;
    }
    Val r = val_like(F, &a);
    for (uint32_t i = 0; i < a.n; i++) val_put(&r, i, expr_ifelse(F->ctx, c, val_at(&a, i), val_at(&b, i)));
    r.sd = a.sd == b.sd ? a.sd : NULL;
    *out = r;
    return true;
}

/* `*` on two arrays: matrix-matrix, matrix-vector, column times row */
bool val_matmul(Flattener *F, Val a, Val b, AstNode *at, Val *out) {
    if (a.nd > 2 || b.nd > 2) {
        diag_error(at->span, "`*` is defined for vectors and matrices only");
        return false;
    }
    if (a.nd == 1 && b.nd == 1) {
        diag_error(at->span, "`*` of two vectors is not defined; use dot(a, b) or the element-wise `.*`");
        return false;
    }
    uint32_t m = a.nd == 2 ? a.dims[0] : 1, k = a.nd == 2 ? a.dims[1] : a.dims[0];
    uint32_t kb = b.dims[0], n = b.nd == 2 ? b.dims[1] : 1;
    if (a.nd == 1) { /* a column vector times a 1xN row */
        m = a.dims[0];
        k = 1;
    }
    if (k != kb) {
        diag_error(at->span, "matrix product of a %ux%u and a %ux%u operand: the inner sizes differ", m, k, kb, n);
        return false;
    }
    uint32_t dims[2] = {m, n};
    Val r = b.nd == 1 ? val_new(F, 1, dims) : val_new(F, 2, dims);
    for (uint32_t i = 0; i < m; i++)
        for (uint32_t j = 0; j < n; j++) {
            Expr *s = expr_const(F->ctx, 0);
            for (uint32_t q = 0; q < k; q++)
                s = expr_add(F->ctx, s, expr_mul(F->ctx, val_at(&a, i * k + q), val_at(&b, q * n + j)));
            r.el[i * n + j] = s;
        }
    *out = r;
    return true;
}
