/*
 * ints.c -- exact Integer arithmetic on structural values.
 *
 * A structural value of type Integer (an integer literal, `end`, `size`,
 * `length`, an index of an Integer range, a parameter declared Integer, and
 * what +, -, *, ^, % and the integer builtins make of them) carries its
 * exact 64-bit value in Val.iv beside the Expr constant (the nearest
 * double, which is what later phases see).  Arithmetic on two Integers is
 * done in int64 with overflow detected (__builtin_*_overflow) and reported
 * at the operation, naming it and the operands; `/` gives a Real, as in
 * Julia; a division by an Integer zero (`/`, `%`, mod, rem) is named.
 * An Integer meeting a Real becomes a Real (Val.iv dropped), and a Real
 * becomes an Integer only where one is declared or needed, when it is a
 * whole number inside the 64-bit range (int_from_real).
 *
 * Cost: linear in the number of elements.
 */
#include "flatten_internal.h"
#include "numfmt.h"

#include <math.h>
#include <string.h>

#define INT_RANGE "the 64-bit Integer range, -9223372036854775808 to 9223372036854775807"

Val val_int(Flattener *F, int64_t x) {
    Val v = val_scalar(expr_const(F->ctx, (double)x));
    v.iv = ARENA_NEW(F->arena, int64_t);
    v.iv[0] = x;
    return v;
}

/* element i of v as a scalar (an Integer stays one) */
Val val_elem(Flattener *F, const Val *v, uint32_t i) {
    return v->iv ? val_int(F, v->iv[i]) : val_scalar(val_at(v, i));
}

/* r (a new value) takes Integer elements */
void val_make_int(Flattener *F, Val *r) { r->iv = ARENA_ARRAY(F->arena, int64_t, r->n ? r->n : 1); }

void val_put_int(Flattener *F, Val *r, uint32_t i, int64_t x) {
    r->iv[i] = x;
    val_put(r, i, expr_const(F->ctx, (double)x));
}

/* an integer literal (in a structural value): its exact value, or an error
 * naming it when it does not fit in 64 bits */
bool int_literal(Flattener *F, AstNode *e, Val *out) {
    double v = e->num.value;
    if (fabs(v) < 9007199254740992.0) { /* below 2^53 the double is exact */
        *out = val_int(F, (int64_t)v);
        return true;
    }
    uint32_t len = 0;
    SrcFile *src = src_get(e->span.file);
    const char *s = src ? ast_text(src, e->span, &len) : NULL;
    uint64_t x = 0;
    bool over = !s || len == 0;
    for (uint32_t i = 0; i < len && !over; i++)
        over = s[i] < '0' || s[i] > '9' || __builtin_mul_overflow(x, 10u, &x) ||
               __builtin_add_overflow(x, (uint64_t)(s[i] - '0'), &x);
    if (!over && x <= (uint64_t)INT64_MAX) {
        *out = val_int(F, (int64_t)x);
        return true;
    }
    if (s && len > 40)
        diag_error(e->span, "the integer literal %.20s... (%u digits) does not fit in " INT_RANGE
                            "; write it with a decimal point for a Real", s, len);
    else
        diag_error(e->span, "the integer literal %.*s does not fit in " INT_RANGE
                            "; write %.*s.0 for a Real", (int)len, s ? s : "", (int)len, s ? s : "");
    return false;
}

/* `a op b`, or `op(a, b)` for a function (min, mod, ...) */
static const char *int_op_text(Flattener *F, const char *op, int64_t a, int64_t b) {
    bool fn = op[0] >= 'a' && op[0] <= 'z';
    return fn ? arena_printf(F->arena, "%s(%lld, %lld)", op, (long long)a, (long long)b)
              : arena_printf(F->arena, "%lld %s %lld", (long long)a, op, (long long)b);
}

static bool int_overflow(Flattener *F, AstNode *at, const char *op, int64_t a, int64_t b) {
    diag_error(at->span, "Integer overflow: %s is outside " INT_RANGE, int_op_text(F, op, a, b));
    return false;
}

static bool int_div_zero(Flattener *F, AstNode *at, const char *op, int64_t a) {
    diag_error(at->span, "division by zero: %s", int_op_text(F, op, a, 0));
    return false;
}

/* a ^ b for b >= 0 by repeated squaring; false on overflow */
static bool int_pow(int64_t a, int64_t b, int64_t *r) {
    int64_t acc = 1, base = a;
    while (b > 0) {
        if ((b & 1) && __builtin_mul_overflow(acc, base, &acc)) return false;
        b >>= 1;
        if (b > 0 && __builtin_mul_overflow(base, base, &base)) return false;
    }
    *r = acc;
    return true;
}

/* Julia's rem (sign of a) and mod (sign of b); b != 0 */
static int64_t int_rem(int64_t a, int64_t b) { return b == -1 ? 0 : a % b; }
static int64_t int_mod(int64_t a, int64_t b) {
    int64_t r = int_rem(a, b);
    return r != 0 && ((r < 0) != (b < 0)) ? r + b : r;
}

typedef enum { IOP_ADD, IOP_SUB, IOP_MUL, IOP_POW, IOP_REM, IOP_MOD, IOP_MIN, IOP_MAX, IOP_CMP } IntOp;

/* one element: a op b; false after the error */
static bool int_apply(Flattener *F, IntOp op, AstOp cmp, const char *name, AstNode *at, int64_t a, int64_t b, int64_t *r) {
    switch (op) {
    case IOP_ADD: return !__builtin_add_overflow(a, b, r) || int_overflow(F, at, name, a, b);
    case IOP_SUB: return !__builtin_sub_overflow(a, b, r) || int_overflow(F, at, name, a, b);
    case IOP_MUL: return !__builtin_mul_overflow(a, b, r) || int_overflow(F, at, name, a, b);
    case IOP_POW: return int_pow(a, b, r) || int_overflow(F, at, name, a, b);
    case IOP_REM:
    case IOP_MOD:
        if (b == 0) return int_div_zero(F, at, name, a);
        *r = op == IOP_REM ? int_rem(a, b) : int_mod(a, b);
        return true;
    case IOP_MIN: *r = a < b ? a : b; return true;
    case IOP_MAX: *r = a > b ? a : b; return true;
    case IOP_CMP:
        *r = cmp == OP_LT ? a < b : cmp == OP_LE ? a <= b : cmp == OP_GT ? a > b
           : cmp == OP_GE ? a >= b : cmp == OP_EQ ? a == b : a != b;
        return true;
    }
    return false;
}

/* a op b element-wise with scalar broadcasting (shapes already checked);
 * a comparison gives Booleans (no iv) */
static bool int_map2(Flattener *F, IntOp op, AstOp cmp, const char *name, AstNode *at, Val a, Val b, Val *out) {
    Val r = a.nd ? val_like(F, &a) : val_like(F, &b);
    if (op != IOP_CMP) val_make_int(F, &r);
    for (uint32_t i = 0; i < r.n; i++) {
        int64_t x = 0;
        if (!int_apply(F, op, cmp, name, at, a.iv[a.nd ? i : 0], b.iv[b.nd ? i : 0], &x)) return false;
        if (op == IOP_CMP) val_put(&r, i, expr_const(F->ctx, (double)x));
        else val_put_int(F, &r, i, x);
    }
    *out = r;
    return true;
}

static bool any_negative(const Val *v) {
    for (uint32_t i = 0; i < v->n; i++)
        if (v->iv[i] < 0) return true;
    return false;
}

/* a op b on two Integer values; *handled false when the result is not an
 * Integer (`/`, a negative exponent, and/or): the caller computes it as Real */
bool int_binary(Flattener *F, AstNode *e, Val a, Val b, Val *out, bool *handled) {
    AstOp op = e->binary.op;
    const char *name = ast_op_names[op];
    *handled = true;
    if (a.nd && b.nd && !val_same_shape(&a, &b)) {
        *handled = false; /* reported by the Real path */
        return false;
    }
    switch (op) {
    case OP_ADD: case OP_EADD: return int_map2(F, IOP_ADD, op, name, e, a, b, out);
    case OP_SUB: case OP_ESUB: return int_map2(F, IOP_SUB, op, name, e, a, b, out);
    case OP_MUL: case OP_EMUL: return int_map2(F, IOP_MUL, op, name, e, a, b, out);
    case OP_MOD: case OP_EMOD: return int_map2(F, IOP_REM, op, name, e, a, b, out);
    case OP_POW: case OP_EPOW:
        if (any_negative(&b)) break; /* 2^-1 is the Real 0.5 */
        return int_map2(F, IOP_POW, op, name, e, a, b, out);
    case OP_DIV: case OP_EDIV: /* a Real quotient, but a zero divisor is named here */
        for (uint32_t i = 0; i < b.n; i++)
            if (b.iv[i] == 0) return int_div_zero(F, e, name, a.iv[a.nd ? i : 0]);
        break;
    case OP_LT: case OP_LE: case OP_GT: case OP_GE: case OP_EQ: case OP_NE:
        return int_map2(F, IOP_CMP, op, name, e, a, b, out);
    default: break;
    }
    *handled = false;
    return false;
}

/* -a, +a of an Integer */
bool int_unary(Flattener *F, AstNode *e, Val a, Val *out) {
    Val r = val_like(F, &a);
    val_make_int(F, &r);
    for (uint32_t i = 0; i < a.n; i++) {
        int64_t x = a.iv[i];
        if (e->unary.op == OP_NEG && __builtin_sub_overflow((int64_t)0, a.iv[i], &x)) {
            diag_error(e->span, "Integer overflow: -(%lld) is outside " INT_RANGE, (long long)a.iv[i]);
            return false;
        }
        val_put_int(F, &r, i, x);
    }
    *out = r;
    return true;
}

/* abs, sign, floor, ceil, min, max, mod, rem of Integers; *handled false
 * for the others (Real functions) */
bool int_math(Flattener *F, AstNode *call, int fn, Val a, Val b, Val *out, bool *handled) {
    *handled = true;
    switch (fn) {
    case FN_MIN: return int_map2(F, IOP_MIN, OP_LT, "min", call, a, b, out);
    case FN_MAX: return int_map2(F, IOP_MAX, OP_LT, "max", call, a, b, out);
    case FN_MOD: return int_map2(F, IOP_MOD, OP_LT, "mod", call, a, b, out);
    case FN_REM: return int_map2(F, IOP_REM, OP_LT, "rem", call, a, b, out);
    case FN_ABS: case FN_SIGN: case FN_FLOOR: case FN_CEIL: break;
    default: *handled = false; return false;
    }
    Val r = val_like(F, &a);
    val_make_int(F, &r);
    for (uint32_t i = 0; i < a.n; i++) {
        int64_t x = a.iv[i];
        if (fn == FN_SIGN) x = (x > 0) - (x < 0);
        if (fn == FN_ABS && x < 0 && __builtin_sub_overflow((int64_t)0, x, &x)) {
            diag_error(call->span, "Integer overflow: abs(%lld) is outside " INT_RANGE, (long long)a.iv[i]);
            return false;
        }
        val_put_int(F, &r, i, x);
    }
    *out = r;
    return true;
}

/* the Integer a Real constant x stands for, where one is needed: a whole
 * number inside the 64-bit range; else an error at `at` naming x (`what`
 * says where it goes, e.g. "`N` is an Integer") */
bool int_from_real(double x, AstNode *at, const char *what, int64_t *out) {
    if (x != x || x != floor(x)) {
        diag_error(at->span, "%s, but this value is %s, not a whole number", what, dyrt_num(x).s);
        return false;
    }
    if (!(x >= -9223372036854775808.0 && x < 9223372036854775808.0)) {
        diag_error(at->span, "%s, but this value, %s, is outside " INT_RANGE, what, dyrt_num(x).s);
        return false;
    }
    *out = (int64_t)x;
    return true;
}

/* v (a constant value) as an Integer value, each element converted */
bool val_to_int(Flattener *F, Val *v, AstNode *at, const char *what) {
    if (v->iv || v->str || v->missing || v->sd) return true;
    Val r = *v;
    val_make_int(F, &r);
    for (uint32_t i = 0; i < v->n; i++)
        if (!int_from_real(val_at(v, i)->value, at, what, &r.iv[i])) return false;
    *v = r;
    return true;
}
