/*
 * builtins.c -- the builtin functions of LANGUAGE.md §6.4 over Vals:
 * the scalar math table of compiler/symbolic (applied element-wise),
 * `ifelse`, `clamp` (= min(max(x, lo), hi)), `min`/`max` (two scalars or
 * the reduction of one array), and the array builtins `sum`, `fill`,
 * `zeros`, `ones`, `cross`, `dot`, `length`, `size`, `transpose`, `norm`,
 * `reshape` (column-major, as in Julia).  The matrix product of `*` is
 * in val.c.
 */
#include "flatten_internal.h"

#include <string.h>

static bool args_n(AstNode *call, Sym name, uint32_t lo, uint32_t hi) {
    uint32_t n = call->call.args.len;
    if (n >= lo && n <= hi) return true;
    if (lo == hi) diag_error(call->span, "`%s` takes %u argument%s, not %u", name, lo, lo == 1 ? "" : "s", n);
    else diag_error(call->span, "`%s` takes %u to %u arguments, not %u", name, lo, hi, n);
    return false;
}

static bool arg_val(Flattener *F, Tx t, AstNode *call, uint32_t i, Val *v) {
    AstNode *a = call->call.args.items[i];
    if (a->arg.name) {
        diag_error(a->span, "builtin functions take no keyword arguments");
        return false;
    }
    if (!tr_val(F, t, a->arg.value, v) || !val_present(v, a)) return false;
    if (v->str) {
        diag_error(a->span, "a string is not a number");
        return false;
    }
    return true;
}

static bool fill_val(Flattener *F, Tx t, AstNode *call, Expr *x, uint32_t first, Val *out) {
    uint32_t nd = call->call.args.len - first, dims[VAL_MAXD];
    if (nd == 0 || nd > VAL_MAXD) {
        diag_error(call->span, "give between 1 and %d sizes", VAL_MAXD);
        return false;
    }
    for (uint32_t k = 0; k < nd; k++) {
        int64_t n;
        if (!const_int(F, t, call->call.args.items[first + k]->arg.value, &n)) return false;
        if (n < 0) {
            diag_error(call->call.args.items[first + k]->span, "a size cannot be negative");
            return false;
        }
        if (n > 100000000) {
            diag_error(call->call.args.items[first + k]->span, "at most 10^8 elements are supported");
            return false;
        }
        dims[k] = (uint32_t)n;
    }
    uint64_t total = 1;
    for (uint32_t k = 0; k < nd; k++) total = dims[k] && total > UINT64_MAX / dims[k] ? UINT64_MAX : total * dims[k];
    if (!flat_charge(F, total, call->span)) return false;
    if (total > 100000000u) {
        diag_error(call->span, "at most 10^8 elements are supported");
        return false;
    }
    Val r = val_new(F, (uint8_t)nd, dims);
    if (r.n > 100000000u) {
        diag_error(call->span, "at most 10^8 elements are supported");
        return false;
    }
    for (uint32_t i = 0; i < r.n; i++) r.el[i] = x;
    *out = r;
    return true;
}

/* reshape(A, m, n...): Julia's column-major order on both sides */
static bool tr_reshape(Flattener *F, Tx t, AstNode *call, Val *out) {
    Val a, shape;
    if (!args_n(call, "reshape", 2, 1 + VAL_MAXD) || !arg_val(F, t, call, 0, &a)) return false;
    Val zero = val_scalar(expr_const(F->ctx, 0));
    if (!fill_val(F, t, call, zero.s, 1, &shape)) return false;
    if (shape.n != a.n) {
        diag_error(call->span, "reshape: %u elements cannot be arranged as %u", a.n, shape.n);
        return false;
    }
    uint32_t src[VAL_MAXD], dst[VAL_MAXD];
    for (uint32_t i = 0; i < a.n; i++) { /* i = column-major position */
        uint32_t r = i;
        for (uint32_t k = 0; k < shape.nd; k++) {
            dst[k] = r % shape.dims[k];
            r /= shape.dims[k];
        }
        r = i;
        for (uint32_t k = 0; k < a.nd; k++) {
            src[k] = r % a.dims[k];
            r /= a.dims[k];
        }
        uint32_t so = 0, d = 0;
        for (uint32_t k = 0; k < a.nd; k++) so = so * a.dims[k] + src[k];
        for (uint32_t k = 0; k < shape.nd; k++) d = d * shape.dims[k] + dst[k];
        shape.el[d] = val_at(&a, a.nd ? so : 0);
    }
    *out = shape;
    return true;
}

/* fn over elements [lo, hi) as a balanced tree: depth log n, so passes
 * that recurse over expressions stay shallow on long arrays */
static Expr *reduce_range(Flattener *F, Val *a, Expr *(*fn)(ExprCtx *, Expr *, Expr *), uint32_t lo,
                          uint32_t hi) {
    if (hi - lo == 1) return val_at(a, lo);
    uint32_t mid = lo + (hi - lo) / 2;
    return fn(F->ctx, reduce_range(F, a, fn, lo, mid), reduce_range(F, a, fn, mid, hi));
}

static Expr *reduce(Flattener *F, Val a, Expr *(*fn)(ExprCtx *, Expr *, Expr *), Expr *init) {
    return a.n ? reduce_range(F, &a, fn, 0, a.n) : init;
}

static Expr *min2(ExprCtx *c, Expr *a, Expr *b) { return expr_call(c, FN_MIN, a, b); }
static Expr *max2(ExprCtx *c, Expr *a, Expr *b) { return expr_call(c, FN_MAX, a, b); }

static bool vec3(Val *v, AstNode *call, const char *name) {
    if (v->nd == 1 && v->dims[0] == 3) return true;
    diag_error(call->span, "`%s` needs vectors of 3 elements", name);
    return false;
}

static bool tr_cross(Flattener *F, Val a, Val b, AstNode *call, Val *out) {
    if (!vec3(&a, call, "cross") || !vec3(&b, call, "cross")) return false;
    uint32_t three = 3;
    Val r = val_new(F, 1, &three);
    ExprCtx *c = F->ctx;
    for (uint32_t i = 0; i < 3; i++) {
        uint32_t j = (i + 1) % 3, k = (i + 2) % 3;
        r.el[i] = expr_sub(c, expr_mul(c, a.el[j], b.el[k]), expr_mul(c, a.el[k], b.el[j]));
    }
    *out = r;
    return true;
}

static Expr *dot(Flattener *F, Val a, Val b) {
    Expr *s = expr_const(F->ctx, 0);
    for (uint32_t i = 0; i < a.n; i++) s = expr_add(F->ctx, s, expr_mul(F->ctx, val_at(&a, i), val_at(&b, i)));
    return s;
}

static bool tr_transpose(Flattener *F, Val a, AstNode *call, Val *out) {
    if (a.nd == 0 || a.nd > 2) {
        diag_error(call->span, "`transpose` needs a vector or a matrix");
        return false;
    }
    uint32_t m = a.dims[0], n = a.nd == 2 ? a.dims[1] : 1, dims[2] = {n, m};
    Val r = val_new(F, 2, dims);
    for (uint32_t i = 0; i < m; i++)
        for (uint32_t j = 0; j < n; j++) r.el[j * m + i] = val_at(&a, i * n + j);
    *out = r;
    return true;
}

static bool tr_size(Flattener *F, Tx t, AstNode *call, Val a, Val *out) {
    if (call->call.args.len == 2) {
        int64_t k;
        if (!const_int(F, t, call->call.args.items[1]->arg.value, &k)) return false;
        if (k < 1 || k > a.nd) {
            diag_error(call->span, "dimension %lld does not exist (the array has %u)", (long long)k, a.nd);
            return false;
        }
        *out = val_int(F, a.dims[k - 1]);
        return true;
    }
    uint32_t nd = a.nd;
    Val r = val_new(F, 1, &nd);
    val_make_int(F, &r);
    for (uint32_t k = 0; k < a.nd; k++) val_put_int(F, &r, k, a.dims[k]);
    *out = r;
    return true;
}

static bool tr_math(Flattener *F, Tx t, AstNode *call, int fn, Sym name, Val *out) {
    int ar = expr_fn_arity[fn];
    if ((fn == FN_MIN || fn == FN_MAX) && call->call.args.len == 1) {
        Val a;
        if (!arg_val(F, t, call, 0, &a)) return false;
        if (a.n == 0) {
            diag_error(call->span, "`%s` of an empty array", name);
            return false;
        }
        *out = val_scalar(reduce(F, a, fn == FN_MIN ? min2 : max2, NULL));
        return true;
    }
    if (!args_n(call, name, (uint32_t)ar, (uint32_t)ar)) return false;
    Val a, b = val_scalar(NULL);
    if (!arg_val(F, t, call, 0, &a) || (ar == 2 && !arg_val(F, t, call, 1, &b))) return false;
    if (ar == 2 && (a.nd || b.nd)) {
        diag_error(call->span, "`%s` takes two scalars", name);
        return false;
    }
    if (a.iv && (ar == 1 || b.iv)) { /* Integer arguments: exact */
        bool handled;
        bool ok = int_math(F, call, fn, a, b, out, &handled);
        if (handled) return ok;
    }
    Val r = val_like(F, &a);
    for (uint32_t i = 0; i < a.n; i++) val_put(&r, i, expr_call(F->ctx, (ExprFn)fn, val_at(&a, i), ar == 2 ? b.s : NULL));
    *out = r;
    return true;
}

static bool tr_ifelse(Flattener *F, Tx t, AstNode *call, Val *out) {
    Val c, a, b;
    if (!args_n(call, "ifelse", 3, 3) || !arg_val(F, t, call, 0, &c) || !arg_val(F, t, call, 1, &a) ||
        !arg_val(F, t, call, 2, &b))
        return false;
    if (c.nd || a.nd != b.nd || a.n != b.n) {
        diag_error(call->span, "ifelse(condition, a, b): a scalar condition and branches of the same shape");
        return false;
    }
    int in_box = F->tmpl && !expr_is_const(c.s) ? tmpl_cond(F, c.s, call->span) : -1; /* on loop indices */
    if (in_box == -2) return false;
    if (in_box >= 0) c.s = expr_const(F->ctx, in_box);
    if (expr_is_const(c.s) && a.iv && b.iv) { /* a known condition between Integers */
        *out = c.s->value != 0 ? a : b;
        return true;
    }
    Val r = val_like(F, &a);
    for (uint32_t i = 0; i < a.n; i++) val_put(&r, i, expr_ifelse(F->ctx, c.s, val_at(&a, i), val_at(&b, i)));
    *out = r;
    return true;
}

static bool tr_clamp(Flattener *F, Tx t, AstNode *call, Val *out) {
    Val x, lo, hi;
    if (!args_n(call, "clamp", 3, 3) || !arg_val(F, t, call, 0, &x) || !arg_val(F, t, call, 1, &lo) ||
        !arg_val(F, t, call, 2, &hi))
        return false;
    if (lo.nd || hi.nd) {
        diag_error(call->span, "clamp(x, lo, hi): the bounds must be scalars");
        return false;
    }
    Val r = val_like(F, &x);
    for (uint32_t i = 0; i < x.n; i++)
        val_put(&r, i, expr_call(F->ctx, FN_MIN, expr_call(F->ctx, FN_MAX, val_at(&x, i), lo.s), hi.s));
    *out = r;
    return true;
}

static bool tr_array_fn(Flattener *F, Tx t, AstNode *call, const char *n, Val *out) {
    ExprCtx *c = F->ctx;
    Val a, b;
    if (!strcmp(n, "zeros") || !strcmp(n, "ones"))
        return fill_val(F, t, call, expr_const(c, n[0] == 'o'), 0, out);
    if (!strcmp(n, "fill")) {
        if (!args_n(call, n, 2, 1 + VAL_MAXD) || !arg_val(F, t, call, 0, &a)) return false;
        if (a.nd) {
            diag_error(call->span, "fill(value, sizes...) needs a scalar value");
            return false;
        }
        return fill_val(F, t, call, a.s, 1, out);
    }
    if (!strcmp(n, "reshape")) return tr_reshape(F, t, call, out);
    if (!strcmp(n, "size")) return args_n(call, n, 1, 2) && arg_val(F, t, call, 0, &a) && tr_size(F, t, call, a, out);
    if (!args_n(call, n, !strcmp(n, "cross") || !strcmp(n, "dot") ? 2 : 1, !strcmp(n, "cross") || !strcmp(n, "dot") ? 2 : 1))
        return false;
    if (!arg_val(F, t, call, 0, &a)) return false;
    if (!strcmp(n, "sum")) *out = val_scalar(reduce(F, a, expr_add, expr_const(c, 0)));
    else if (!strcmp(n, "length")) *out = val_int(F, a.nd ? a.n : 1);
    else if (!strcmp(n, "norm")) *out = val_scalar(expr_call(c, FN_SQRT, dot(F, a, a), NULL));
    else if (!strcmp(n, "transpose")) return tr_transpose(F, a, call, out);
    else {
        if (!arg_val(F, t, call, 1, &b)) return false;
        if (!strcmp(n, "cross")) return tr_cross(F, a, b, call, out);
        if (a.nd != 1 || b.nd != 1 || a.n != b.n) {
            diag_error(call->span, "`dot` needs two vectors of the same length");
            return false;
        }
        *out = val_scalar(dot(F, a, b));
    }
    return true;
}

/* ismissing(x): whether x is `missing`, known when the model is compiled */
static bool tr_ismissing(Flattener *F, Tx t, AstNode *call, Val *out) {
    Val a;
    if (!args_n(call, "ismissing", 1, 1) || !tr_val(F, t, call->call.args.items[0]->arg.value, &a)) return false;
    *out = val_scalar(expr_const(F->ctx, a.missing));
    return true;
}

bool tr_builtin(Flattener *F, Tx t, AstNode *call, Sym name, Val *out, bool *handled) {
    static const char *const array_fns[] = {"sum", "fill", "zeros", "ones", "cross", "dot",
                                            "length", "size", "transpose", "norm", "reshape"};
    *handled = true;
    if (name == F->s_ifelse) return tr_ifelse(F, t, call, out);
    if (!strcmp(name, "clamp")) return tr_clamp(F, t, call, out);
    if (!strcmp(name, "ismissing")) return tr_ismissing(F, t, call, out);
    for (size_t i = 0; i < sizeof array_fns / sizeof array_fns[0]; i++)
        if (!strcmp(name, array_fns[i])) return tr_array_fn(F, t, call, name, out);
    int fn = expr_fn_lookup(name);
    if (fn >= 0) return tr_math(F, t, call, fn, name, out);
    *handled = false;
    return false;
}
