/*
 * derive.c -- symbolic differentiation of every operator and builtin, as
 * the chain rule applied to the children's derivatives.  Two drivers share
 * the rules: expr_diff (partial derivative w.r.t. one leaf, memoized in the
 * context for the whole compilation) and expr_dt (total time derivative,
 * memoized per call).  Both traverse the DAG iteratively in post-order, so
 * deep expressions cannot overflow the C stack; each node is visited once:
 * O(size of the DAG).
 */
#include "expr_internal.h"

#include <math.h>

/* derivative of node e given the derivatives d[i] of its arguments */
static Expr *chain(ExprCtx *c, Expr *e, Expr *const *d) {
    Expr *a = e->args[0], *b = e->args[1];
    Expr *zero = expr_const(c, 0), *one = expr_const(c, 1);
    switch ((ExprKind)e->kind) {
    case EXPR_ADD: return expr_add(c, d[0], d[1]);
    case EXPR_NEG: return expr_neg(c, d[0]);
    case EXPR_MUL: return expr_add(c, expr_mul(c, d[0], b), expr_mul(c, a, d[1]));
    case EXPR_DIV:
        return expr_sub(c, expr_div(c, d[0], b),
                        expr_div(c, expr_mul(c, a, d[1]), expr_mul(c, b, b)));
    case EXPR_POW:
        if (expr_is_const(b))
            return expr_mul(c, expr_mul(c, b, expr_pow(c, a, expr_const(c, b->value - 1))), d[0]);
        return expr_mul(c, e, expr_add(c, expr_mul(c, d[1], expr_call(c, FN_LOG, a, NULL)),
                                       expr_div(c, expr_mul(c, b, d[0]), a)));
    case EXPR_IFELSE: return expr_ifelse(c, a, d[1], d[2]);
    case EXPR_CALL: break;
    default: return zero; /* comparisons and logic are piecewise constant */
    }
    Expr *g = zero; /* d fn / d a */
    switch ((ExprFn)e->fn) {
    case FN_SIN: g = expr_call(c, FN_COS, a, NULL); break;
    case FN_COS: g = expr_neg(c, expr_call(c, FN_SIN, a, NULL)); break;
    case FN_TAN: {
        Expr *co = expr_call(c, FN_COS, a, NULL);
        g = expr_div(c, one, expr_mul(c, co, co));
        break;
    }
    case FN_ASIN: g = expr_div(c, one, expr_call(c, FN_SQRT, expr_sub(c, one, expr_mul(c, a, a)), NULL)); break;
    case FN_ACOS: g = expr_neg(c, expr_div(c, one, expr_call(c, FN_SQRT, expr_sub(c, one, expr_mul(c, a, a)), NULL))); break;
    case FN_ATAN: g = expr_div(c, one, expr_add(c, one, expr_mul(c, a, a))); break;
    case FN_SINH: g = expr_call(c, FN_COSH, a, NULL); break;
    case FN_COSH: g = expr_call(c, FN_SINH, a, NULL); break;
    case FN_TANH: g = expr_sub(c, one, expr_mul(c, e, e)); break;
    case FN_EXP: g = e; break;
    case FN_LOG: g = expr_div(c, one, a); break;
    case FN_LOG10: g = expr_div(c, expr_const(c, 1 / log(10.0)), a); break;
    case FN_SQRT: g = expr_div(c, expr_const(c, 0.5), e); break;
    case FN_ABS: g = expr_call(c, FN_SIGN, a, NULL); break;
    case FN_SIGN: case FN_FLOOR: case FN_CEIL: return zero;
    case FN_ATAN2: /* atan2(a, b): (b da - a db) / (a^2 + b^2) */
        return expr_div(c, expr_sub(c, expr_mul(c, b, d[0]), expr_mul(c, a, d[1])),
                        expr_add(c, expr_mul(c, a, a), expr_mul(c, b, b)));
    case FN_MIN: return expr_ifelse(c, expr_cmp(c, EXPR_LT, a, b), d[0], d[1]);
    case FN_MAX: return expr_ifelse(c, expr_cmp(c, EXPR_GT, a, b), d[0], d[1]);
    case FN_MOD: /* a - floor(a/b) b */
        return expr_sub(c, d[0], expr_mul(c, expr_call(c, FN_FLOOR, expr_div(c, a, b), NULL), d[1]));
    case FN_REM: /* a - trunc(a/b) b, trunc(a/b) = (a - rem(a,b))/b */
        return expr_sub(c, d[0], expr_mul(c, expr_div(c, expr_sub(c, a, e), b), d[1]));
    case FN_COUNT: return zero;
    }
    return expr_mul(c, g, d[0]);
}

/* One post-order driver for both derivatives.  `leafd` gives a leaf's
 * derivative; `memo` maps node keys to derivatives (key(e) must be nonzero). */
typedef struct {
    ExprCtx *c;
    HashMap *memo;
    Arena *memo_arena;             /* diff: the context (memo kept); dt: scratch */
    uint64_t salt;                 /* diff: leaf id; dt: 0 */
    Expr *(*leafd)(void *ud, Expr *leaf);
    void *ud;
} Deriver;

static uint64_t dkey(const Deriver *d, const Expr *e) { return ((uint64_t)e->id << 32) | d->salt; }

/* The derivative of e is 0 when its arguments' are: chain() would build
 * exactly 0 from them (0 * b, 0 / b, ifelse(c, 0, 0), ... fold to 0 for a
 * non-constant b), but only after building the factors it multiplies by 0
 * (b*b of a quotient, cos(a) of sin(a), log(a) of a power): nodes nobody
 * uses, a hash-table probe each.  Not taken when an argument is a constant
 * whose square is 0, inf or nan, where the folding of 0 * inf or 0 / 0
 * (of b*b in a quotient's rule) decides. */
static bool zero_derivative(ExprCtx *c, const Expr *e, Expr *const *d) {
    Expr *zero = expr_const(c, 0);
    for (int i = 0; i < e->nargs; i++) {
        if (d[i] != zero) return false;
        const Expr *a = e->args[i];
        if (expr_is_const(a) && !isnormal(a->value * a->value)) return false;
    }
    return true;
}

static Expr *derive(Deriver *d, Expr *root) {
    Expr *r = hmap_get(d->memo, dkey(d, root));
    if (r) return r;
    ExprVec st = {0};
    vec_push(d->c->scratch, &st, root);
    while (st.len) {
        Expr *e = st.data[st.len - 1];
        if (hmap_get(d->memo, dkey(d, e))) { st.len--; continue; }
        Expr *da[3] = {0};
        bool ready = true, leaf = !e->nargs || e->kind == EXPR_AT; /* an indexed leaf is a leaf */
        for (int i = 0; i < e->nargs && !leaf; i++) {
            da[i] = hmap_get(d->memo, dkey(d, e->args[i]));
            if (!da[i]) { vec_push(d->c->scratch, &st, e->args[i]); ready = false; }
        }
        if (!ready) continue;
        Expr *v = leaf ? d->leafd(d->ud, e) : zero_derivative(d->c, e, da) ? da[0] : chain(d->c, e, da);
        hmap_put(d->memo_arena, d->memo, dkey(d, e), v);
        st.len--;
    }
    return hmap_get(d->memo, dkey(d, root));
}

static Expr *partial_leaf(void *ud, Expr *e) {
    Expr **leaf = ud; /* leaf[0] = wrt, leaf[1] = 1, leaf[2] = 0 */
    return e == leaf[0] ? leaf[1] : leaf[2];
}

Expr *expr_diff(ExprCtx *c, Expr *e, Expr *leaf) {
    Expr *ctx[3] = {leaf, expr_const(c, 1), expr_const(c, 0)};
    Deriver d = {c, &c->diff_memo, c->arena, leaf->id, partial_leaf, ctx};
    expr_scratch_enter(c);
    Expr *r = derive(&d, e);
    expr_scratch_leave(c);
    return r;
}

Expr *expr_diff_once(ExprCtx *c, Expr *e, Expr *leaf) {
    Expr *ctx[3] = {leaf, expr_const(c, 1), expr_const(c, 0)};
    HashMap memo = {0};
    Deriver d = {c, &memo, expr_scratch_enter(c), leaf->id, partial_leaf, ctx};
    Expr *r = derive(&d, e);
    expr_scratch_leave(c);
    return r;
}

typedef struct {
    ExprCtx *c;
    ExprLeafDt dleaf;
    void *ud;
} DtCtx;

static Expr *dt_leaf(void *ud, Expr *e) {
    DtCtx *t = ud;
    if (e->kind == EXPR_TIME) return expr_const(t->c, 1);
    if (e->kind == EXPR_CONST || e->kind == EXPR_IDX) return expr_const(t->c, 0);
    Expr *r = t->dleaf(t->ud, e);
    return r ? r : expr_const(t->c, 0);
}

Expr *expr_dt(ExprCtx *c, Expr *e, ExprLeafDt dleaf, void *ud) {
    HashMap memo = {0};
    DtCtx t = {c, dleaf, ud};
    Deriver d = {c, &memo, expr_scratch_enter(c), 1, dt_leaf, &t};
    Expr *r = derive(&d, e);
    expr_scratch_leave(c);
    return r;
}
