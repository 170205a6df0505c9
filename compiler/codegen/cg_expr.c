/*
 * cg_expr.c -- one Expr DAG node -> LLVM instructions, inside the current
 * chunk function.
 *
 * Input: an Expr over codegen-level leaves (Y, YP, P, Z, TIME, CONST).
 * Output: an LLVM double.  Each node is emitted once per chunk (memo keyed
 * by node number, cg_node, valid while memo_stamp[node] == stamp).  Traversal uses an
 * explicit stack, so deep DAGs (long sums) cannot overflow the C stack.
 *
 * Semantics follow expr_eval/expr_apply_fn exactly (no fast-math):
 *   comparisons, and/or/not give 0.0/1.0 (a value is true when != 0,
 *   NaN included, as in C); ifelse is a `select` with both branches
 *   evaluated; min/max are `x < y ? x : y` / `x > y ? x : y` (so NaN and
 *   signed-zero behaviour match constant folding); mod(a,b) = a -
 *   floor(a/b)*b; rem = fmod.  pow with constant exponent 2, 3 -> products,
 *   -1 -> 1/x, 0.5 -> sqrt; otherwise llvm.pow.
 */
#include <string.h>

#include "cg_internal.h"

/* ---------- helpers ---------- */

static LLVMValueRef f64(Cg *g, double v) { return LLVMConstReal(g->t_f64, v); }

static bool memo_has(const Cg *g, const Expr *e) {
    return g->memo_stamp[cg_node(g, e)] == g->stamp;
}

void cg_memo_set(Cg *g, Expr *e, LLVMValueRef v) {
    g->memo[cg_node(g, e)] = v;
    g->memo_stamp[cg_node(g, e)] = g->stamp;
}

/* Address of arg[index] for a pointer argument. */
LLVMValueRef cg_slot(Cg *g, CgArg arg, uint32_t index) {
    LLVMValueRef idx = LLVMConstInt(g->t_i32, index, 0);
    LLVMTypeRef elem = arg == CG_ARG_GIVEN ? g->t_i8 : g->t_f64;
    return LLVMBuildInBoundsGEP2(g->bld, elem, g->args[arg], &idx, 1, "");
}

LLVMValueRef cg_load(Cg *g, CgArg arg, uint32_t index) {
    LLVMTypeRef elem = arg == CG_ARG_GIVEN ? g->t_i8 : g->t_f64;
    return LLVMBuildLoad2(g->bld, elem, cg_slot(g, arg, index), "");
}

/* A leaf's load: at its index, or in a loop (nest) at index + stride * j
 * (+ outer stride * J). */
static LLVMValueRef load_leaf(Cg *g, CgArg arg, uint32_t index, const Expr *e) {
    LLVMValueRef idx = cg_leaf_index(g, index, e);
    if (!idx) return cg_load(g, arg, index);
    return LLVMBuildLoad2(g->bld, g->t_f64, LLVMBuildInBoundsGEP2(g->bld, g->t_f64, g->args[arg], &idx, 1, ""), "");
}

/* Declaration of an overloaded (on double) intrinsic such as llvm.sin. */
static LLVMValueRef intrinsic(Cg *g, const char *name, LLVMTypeRef *fty) {
    unsigned id = LLVMLookupIntrinsicID(name, strlen(name));
    *fty = LLVMIntrinsicGetType(g->ctx, id, &g->t_f64, 1);
    return LLVMGetIntrinsicDeclaration(g->cur_mod, id, &g->t_f64, 1);
}

/* Declaration of a libm function double name(double[, double]). */
static LLVMValueRef libm(Cg *g, const char *name, unsigned arity, LLVMTypeRef *fty) {
    LLVMTypeRef ps[2] = {g->t_f64, g->t_f64};
    *fty = LLVMFunctionType(g->t_f64, ps, arity, 0);
    LLVMValueRef f = LLVMGetNamedFunction(g->cur_mod, name);
    if (!f) {
        f = LLVMAddFunction(g->cur_mod, name, *fty);
        unsigned k = LLVMGetEnumAttributeKindForName("nounwind", 8);
        LLVMAddAttributeAtIndex(f, LLVMAttributeFunctionIndex,
                                LLVMCreateEnumAttribute(g->ctx, k, 0));
    }
    return f;
}

static LLVMValueRef call(Cg *g, LLVMValueRef fn, LLVMTypeRef fty, LLVMValueRef *a, unsigned n) {
    return LLVMBuildCall2(g->bld, fty, fn, a, n, "");
}

static LLVMValueRef call_intr(Cg *g, const char *name, LLVMValueRef *a, unsigned n) {
    LLVMTypeRef fty;
    LLVMValueRef fn = intrinsic(g, name, &fty);
    return call(g, fn, fty, a, n);
}

static LLVMValueRef call_libm(Cg *g, const char *name, LLVMValueRef *a, unsigned n) {
    LLVMTypeRef fty;
    LLVMValueRef fn = libm(g, name, n, &fty);
    return call(g, fn, fty, a, n);
}

static LLVMValueRef bool_f64(Cg *g, LLVMValueRef i1) {
    return LLVMBuildUIToFP(g->bld, i1, g->t_f64, "");
}

static LLVMValueRef truth(Cg *g, LLVMValueRef x) {
    return LLVMBuildFCmp(g->bld, LLVMRealUNE, x, f64(g, 0.0), "");
}

static LLVMValueRef cmp_select(Cg *g, LLVMRealPredicate p, LLVMValueRef x, LLVMValueRef y) {
    return LLVMBuildSelect(g->bld, LLVMBuildFCmp(g->bld, p, x, y, ""), x, y, "");
}

/* ---------- operators ---------- */

static LLVMValueRef emit_sign(Cg *g, LLVMValueRef x) {
    LLVMValueRef pos = LLVMBuildFCmp(g->bld, LLVMRealOGT, x, f64(g, 0.0), "");
    LLVMValueRef neg = LLVMBuildFCmp(g->bld, LLVMRealOLT, x, f64(g, 0.0), "");
    LLVMValueRef m = LLVMBuildSelect(g->bld, neg, f64(g, -1.0), f64(g, 0.0), "");
    return LLVMBuildSelect(g->bld, pos, f64(g, 1.0), m, "");
}

static LLVMValueRef emit_mod(Cg *g, LLVMValueRef x, LLVMValueRef y) {
    LLVMValueRef q = LLVMBuildFDiv(g->bld, x, y, "");
    LLVMValueRef f = call_intr(g, "llvm.floor", &q, 1);
    return LLVMBuildFSub(g->bld, x, LLVMBuildFMul(g->bld, f, y, ""), "");
}

static LLVMValueRef emit_call(Cg *g, ExprFn fn, LLVMValueRef x, LLVMValueRef y) {
    LLVMValueRef a[2] = {x, y};
    switch (fn) {
    case FN_SIN: return call_intr(g, "llvm.sin", a, 1);
    case FN_COS: return call_intr(g, "llvm.cos", a, 1);
    case FN_EXP: return call_intr(g, "llvm.exp", a, 1);
    case FN_LOG: return call_intr(g, "llvm.log", a, 1);
    case FN_LOG10: return call_intr(g, "llvm.log10", a, 1);
    case FN_SQRT: return call_intr(g, "llvm.sqrt", a, 1);
    case FN_ABS: return call_intr(g, "llvm.fabs", a, 1);
    case FN_FLOOR: return call_intr(g, "llvm.floor", a, 1);
    case FN_CEIL: return call_intr(g, "llvm.ceil", a, 1);
    case FN_TAN: return call_libm(g, "tan", a, 1);
    case FN_ASIN: return call_libm(g, "asin", a, 1);
    case FN_ACOS: return call_libm(g, "acos", a, 1);
    case FN_ATAN: return call_libm(g, "atan", a, 1);
    case FN_SINH: return call_libm(g, "sinh", a, 1);
    case FN_COSH: return call_libm(g, "cosh", a, 1);
    case FN_TANH: return call_libm(g, "tanh", a, 1);
    case FN_ATAN2: return call_libm(g, "atan2", a, 2);
    case FN_REM: return call_libm(g, "fmod", a, 2);
    case FN_SIGN: return emit_sign(g, x);
    case FN_MIN: return cmp_select(g, LLVMRealOLT, x, y);
    case FN_MAX: return cmp_select(g, LLVMRealOGT, x, y);
    case FN_MOD: return emit_mod(g, x, y);
    case FN_COUNT: break;
    }
    diag_internal("codegen: unknown builtin function %d", (int)fn);
    g->failed = 1;
    return f64(g, 0.0);
}

static LLVMValueRef emit_pow(Cg *g, Expr *e, LLVMValueRef x, LLVMValueRef y) {
    const Expr *b = e->args[1];
    if (expr_is_const(b)) {
        double v = b->value;
        if (v == 2.0) return LLVMBuildFMul(g->bld, x, x, "");
        if (v == 3.0) return LLVMBuildFMul(g->bld, LLVMBuildFMul(g->bld, x, x, ""), x, "");
        if (v == -1.0) return LLVMBuildFDiv(g->bld, f64(g, 1.0), x, "");
        if (v == 0.5) return call_intr(g, "llvm.sqrt", &x, 1);
    }
    LLVMValueRef a[2] = {x, y};
    return call_intr(g, "llvm.pow", a, 2);
}

static LLVMValueRef emit_cmp(Cg *g, ExprKind k, LLVMValueRef x, LLVMValueRef y) {
    LLVMRealPredicate p = LLVMRealOLT;
    switch (k) {
    case EXPR_LT: p = LLVMRealOLT; break;
    case EXPR_LE: p = LLVMRealOLE; break;
    case EXPR_GT: p = LLVMRealOGT; break;
    case EXPR_GE: p = LLVMRealOGE; break;
    case EXPR_EQ: p = LLVMRealOEQ; break;
    case EXPR_NE: p = LLVMRealUNE; break;
    default: break;
    }
    return bool_f64(g, LLVMBuildFCmp(g->bld, p, x, y, ""));
}

static bool uncut_neg(const Cg *g, const Expr *e) {
    return e->kind == EXPR_NEG && !cg_is_cut(g, e);
}

/* Negations folded into their user, as instcombine would (the same IEEE
 * values, fewer instructions, and no instcombine run needed):
 *   a + (-b)        -> fsub a, b   (IEEE defines a - b as a + (-b))
 *   (-a) * (-b), (-a) / (-b) -> a * b, a / b (rounding is sign-symmetric)
 * For such an ADD, returns the index of the NEG operand replaced by its
 * argument; for such a MUL/DIV, 2 (both operands); else -1. */
static int neg_fold(const Cg *g, const Expr *e) {
    if (e->kind == EXPR_ADD) {
        for (int i = 1; i >= 0; i--)
            if (uncut_neg(g, e->args[i])) return i;
        return -1;
    }
    if ((e->kind == EXPR_MUL || e->kind == EXPR_DIV) && uncut_neg(g, e->args[0]) &&
        uncut_neg(g, e->args[1]))
        return 2;
    return -1;
}

/* The node cg_expr must have in the memo before emitting operand i of e. */
static Expr *dep(const Cg *g, Expr *e, int i) {
    int f = neg_fold(g, e);
    return f == i || f == 2 ? e->args[i]->args[0] : e->args[i];
}

static LLVMValueRef emit_neg_fold(Cg *g, Expr *e, int f) {
    LLVMValueRef x = g->memo[cg_node(g, dep(g, e, 0))], y = g->memo[cg_node(g, dep(g, e, 1))];
    if (f == 2)
        return e->kind == EXPR_MUL ? LLVMBuildFMul(g->bld, x, y, "")
                                   : LLVMBuildFDiv(g->bld, x, y, "");
    return f == 1 ? LLVMBuildFSub(g->bld, x, y, "") : LLVMBuildFSub(g->bld, y, x, "");
}

/* A node whose children are all in the memo. */
static LLVMValueRef emit_node(Cg *g, Expr *e) {
    int f = neg_fold(g, e);
    if (f >= 0) return emit_neg_fold(g, e, f);
    LLVMValueRef a[3] = {NULL, NULL, NULL};
    for (int i = 0; i < e->nargs; i++) a[i] = g->memo[cg_node(g, e->args[i])];
    switch ((ExprKind)e->kind) {
    case EXPR_CONST: return f64(g, e->value);
    case EXPR_TIME: return g->args[CG_ARG_T];
    case EXPR_Y: return load_leaf(g, CG_ARG_Y, e->index, e);
    case EXPR_YP: return load_leaf(g, CG_ARG_YP, e->index, e);
    case EXPR_P: return load_leaf(g, CG_ARG_P, e->index, e);
    case EXPR_Z: return load_leaf(g, CG_ARG_Z, e->index, e);
    case EXPR_MODE: return load_leaf(g, CG_ARG_P, g->sys->np + e->index, e); /* dyad_model.h nmodes */
    case EXPR_VAR:
    case EXPR_DER:
    case EXPR_IDX: /* templates are scalarized before the System (array stage 2) */
    case EXPR_AT: break;
    case EXPR_ADD: return LLVMBuildFAdd(g->bld, a[0], a[1], "");
    case EXPR_MUL: return LLVMBuildFMul(g->bld, a[0], a[1], "");
    case EXPR_NEG: return LLVMBuildFNeg(g->bld, a[0], "");
    case EXPR_DIV: return LLVMBuildFDiv(g->bld, a[0], a[1], "");
    case EXPR_POW: return emit_pow(g, e, a[0], a[1]);
    case EXPR_CALL: return emit_call(g, (ExprFn)e->fn, a[0], a[1]);
    case EXPR_LT:
    case EXPR_LE:
    case EXPR_GT:
    case EXPR_GE:
    case EXPR_EQ:
    case EXPR_NE: return emit_cmp(g, (ExprKind)e->kind, a[0], a[1]);
    case EXPR_AND: return bool_f64(g, LLVMBuildAnd(g->bld, truth(g, a[0]), truth(g, a[1]), ""));
    case EXPR_OR: return bool_f64(g, LLVMBuildOr(g->bld, truth(g, a[0]), truth(g, a[1]), ""));
    case EXPR_NOT: return bool_f64(g, LLVMBuildFCmp(g->bld, LLVMRealOEQ, a[0], f64(g, 0.0), ""));
    case EXPR_IFELSE: return LLVMBuildSelect(g->bld, truth(g, a[0]), a[1], a[2], "");
    case EXPR_KIND_COUNT: break;
    }
    diag_internal("codegen: %s leaf reached codegen", expr_kind_names[e->kind]);
    g->failed = 1;
    return f64(g, 0.0);
}

/* May the current function read this leaf?  (CONST and operators: yes.) */
static bool leaf_ok(const Cg *g, const Expr *e) {
    if (!expr_is_leaf(e) || e->kind == EXPR_CONST) return true;
    return (g->leaves & CG_LEAF(e->kind)) != 0;
}

/* Iterative post-order: push children until all are memoized, then emit. */
LLVMValueRef cg_expr(Cg *g, Expr *root) {
    g->stack.len = 0;
    vec_push(g->arena, &g->stack, root);
    while (g->stack.len > 0) {
        Expr *e = g->stack.data[g->stack.len - 1];
        if (memo_has(g, e)) { g->stack.len--; continue; }
        if (cg_is_cut(g, e)) {                      /* computed by an earlier piece */
            g->stack.len--;
            cg_memo_set(g, e, cg_load(g, CG_ARG_TMP, g->tmp_base + (uint32_t)g->cut_slot[cg_node(g, e)]));
            continue;
        }
        int32_t shared = cg_shared_slot(g, e);
        if (shared >= 0 && g->share_owner[cg_node(g, e)] < g->cur_chunk) { /* an earlier chunk's */
            g->stack.len--;
            cg_memo_set(g, e, cg_load(g, CG_ARG_TMP, (uint32_t)shared));
            continue;
        }
        bool ready = true;
        for (int i = e->nargs - 1; i >= 0; i--)
            if (!memo_has(g, dep(g, e, i))) {
                vec_push(g->arena, &g->stack, dep(g, e, i));
                ready = false;
            }
        if (!ready) continue;
        g->stack.len--;
        if (!leaf_ok(g, e)) {
            diag_internal("codegen: %s leaf where it cannot be read (in %s)",
                          expr_kind_names[e->kind], g->fn_name);
            g->failed = 1;
            cg_memo_set(g, e, f64(g, 0.0));
            continue;
        }
        cg_memo_set(g, e, emit_node(g, e));
        if (shared >= 0 && g->share_owner[cg_node(g, e)] == g->cur_chunk) /* a later chunk's too */
            LLVMBuildStore(g->bld, g->memo[cg_node(g, e)], cg_slot(g, CG_ARG_TMP, (uint32_t)shared));
    }
    return g->memo[cg_node(g, root)];
}

/* The tmp slot of a value shared between chunks of the current function,
 * or -1 (never inside a loop or nest: its body stands for every iteration). */
int32_t cg_shared_slot(const Cg *g, const Expr *e) {
    if (g->loop_j || g->nest_j || !g->share_gen_of || g->share_gen_of[cg_node(g, e)] != g->share_gen) return -1;
    return g->share_slot[cg_node(g, e)];
}

/* Planning (Cg.share_count): is e loaded from tmp in the chunk being
 * planned, i.e. computed by an earlier chunk?  Gives it a slot. */
static bool share_load(Cg *g, const Expr *e) {
    if (!g->share_count || g->share_gen_of[cg_node(g, e)] != g->share_gen ||
        g->share_owner[cg_node(g, e)] >= g->cur_chunk)
        return false;
    if (g->share_slot[cg_node(g, e)] < 0) {
        if (g->nshare >= CG_SHARE_MAX) return false;
        g->share_slot[cg_node(g, e)] = (int32_t)g->nshare++;
    }
    return true;
}

bool cg_is_cut(const Cg *g, const Expr *e) {
    return g->cut_gen_of && g->cut_gen != 0 && g->cut_gen_of[cg_node(g, e)] == g->cut_gen &&
           g->cut_slot[cg_node(g, e)] < g->cut_limit;
}

/* Number of nodes of e not yet counted in this chunk (marks them counted);
 * while planning, a value an earlier chunk computes counts one, its
 * operands nothing. */
uint32_t cg_count_new(Cg *g, Expr *root) {
    uint32_t n = 0;
    if (g->count_stamp[cg_node(g, root)] == g->stamp) return 0;
    g->stack.len = 0;
    g->count_stamp[cg_node(g, root)] = g->stamp;
    vec_push(g->arena, &g->stack, root);
    while (g->stack.len > 0) {
        Expr *e = g->stack.data[--g->stack.len];
        n++;
        if (share_load(g, e)) continue;            /* one load, nothing below */
        for (int i = 0; i < e->nargs; i++) {
            Expr *c = e->args[i];
            if (g->count_stamp[cg_node(g, c)] == g->stamp) continue;
            g->count_stamp[cg_node(g, c)] = g->stamp;
            vec_push(g->arena, &g->stack, c);
        }
    }
    return n;
}
