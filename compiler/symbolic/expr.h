/*
 * expr.h -- the symbolic core: a hash-consed expression DAG.
 *
 * Every Expr is created through an ExprCtx and is unique: two structurally
 * equal expressions are the same pointer (so sharing is common-subexpression
 * elimination for free, and == is structural equality).  Constructors
 * simplify: constants fold, neutral elements vanish, commutative operands
 * are ordered by id.  Subtraction is stored as a + (-b), division by a
 * constant as multiplication.
 *
 * Leaves
 *   EXPR_VAR  i   flat variable i (flatten/structure level; parameters too)
 *   EXPR_DER  i   der(flat variable i)
 *   EXPR_Y    i   y[i]  (integrator unknown; codegen level)
 *   EXPR_YP   i   y'[i]
 *   EXPR_P    i   p[i]  (parameter slot)
 *   EXPR_Z    i   z[i]  (initialization-system unknown)
 *   EXPR_MODE k   the mode of event k of the System (0 or 1): a relation
 *                 frozen between events (structure/system.h, events.c)
 *   EXPR_IDX  k   the k-th induction variable (k < 3) of the enclosing
 *                 equation template (flat.h, FlatEq.dom): an integer value
 *   EXPR_TIME     the independent variable
 *   EXPR_CONST    a double
 * Indexed leaves (array-preserving compilation, docs/ARCHITECTURE.md)
 *   EXPR_AT       fn = a leaf kind (VAR, DER, Y, YP, P, Z), args[0] = its
 *                 index, an affine form c0 + c1 IDX(0) + c2 IDX(1) + c3 IDX(2)
 *                 with integer coefficients.  Built only by expr_at, which
 *                 keeps the form canonical and returns the plain leaf for a
 *                 constant index, so substituting constants for the IDX
 *                 leaves (expr_subst) gives exactly the scalar expression.
 *                 A leaf for differentiation and leaf sets: distinct
 *                 accesses are distinct leaves.
 * Leaves of different levels never mix in one expression handed to codegen:
 * the structure phase maps VAR/DER to Y/YP/P/Z (expr_subst).
 */
#ifndef DYADC_EXPR_H
#define DYADC_EXPR_H

#include "support.h"

#define EXPR_KINDS(X)                                  \
    X(EXPR_CONST)  X(EXPR_TIME)                        \
    X(EXPR_VAR)    X(EXPR_DER)                         \
    X(EXPR_Y)      X(EXPR_YP)  X(EXPR_P)  X(EXPR_Z)    \
    X(EXPR_IDX)                                        \
    X(EXPR_MODE)                                       \
    X(EXPR_AT)     /* fn[args[0]]: an indexed leaf */  \
    X(EXPR_ADD)    /* a + b */                         \
    X(EXPR_MUL)    /* a * b */                         \
    X(EXPR_NEG)    /* -a */                            \
    X(EXPR_DIV)    /* a / b */                         \
    X(EXPR_POW)    /* a ^ b */                         \
    X(EXPR_CALL)   /* fn(a [, b]) from the builtin table */ \
    X(EXPR_LT) X(EXPR_LE) X(EXPR_GT) X(EXPR_GE)        \
    X(EXPR_EQ) X(EXPR_NE)                              \
    X(EXPR_AND) X(EXPR_OR) X(EXPR_NOT)                 \
    X(EXPR_IFELSE) /* c ? a : b (a, b both evaluated) */

typedef enum {
#define X(k) k,
    EXPR_KINDS(X)
#undef X
    EXPR_KIND_COUNT
} ExprKind;

/* builtin functions: X(id, dyad name, arity) */
#define EXPR_FNS(X)                                                   \
    X(FN_SIN, "sin", 1) X(FN_COS, "cos", 1) X(FN_TAN, "tan", 1)       \
    X(FN_ASIN, "asin", 1) X(FN_ACOS, "acos", 1) X(FN_ATAN, "atan", 1) \
    X(FN_SINH, "sinh", 1) X(FN_COSH, "cosh", 1) X(FN_TANH, "tanh", 1) \
    X(FN_EXP, "exp", 1) X(FN_LOG, "log", 1) X(FN_LOG10, "log10", 1)   \
    X(FN_SQRT, "sqrt", 1) X(FN_ABS, "abs", 1) X(FN_SIGN, "sign", 1)   \
    X(FN_FLOOR, "floor", 1) X(FN_CEIL, "ceil", 1)                     \
    X(FN_ATAN2, "atan2", 2) X(FN_MIN, "min", 2) X(FN_MAX, "max", 2)   \
    X(FN_MOD, "mod", 2) X(FN_REM, "rem", 2)

typedef enum {
#define X(id, name, arity) id,
    EXPR_FNS(X)
#undef X
    FN_COUNT
} ExprFn;

extern const char *const expr_kind_names[EXPR_KIND_COUNT];
extern const char *const expr_fn_names[FN_COUNT];
extern const int expr_fn_arity[FN_COUNT];
/* builtin lookup by Dyad name; -1 if not a builtin */
int expr_fn_lookup(const char *name);

typedef struct Expr Expr;
struct Expr {
    uint8_t kind;       /* ExprKind */
    uint8_t fn;         /* ExprFn for EXPR_CALL; the leaf kind for EXPR_AT */
    uint8_t nargs;      /* number of used args[] */
    uint8_t lead_kind;  /* kind of the first non-constant leaf in pre-order
                           (itself for a leaf), 0 (EXPR_CONST) when none */
    uint32_t id;        /* creation order, unique per context: stable keys */
    union {
        double value;   /* EXPR_CONST */
        uint32_t index; /* leaves VAR, DER, Y, YP, P, Z; k of IDX */
    };
    Expr *args[3];
    uint32_t shape;     /* hash of the structure with leaf indices left out */
    uint32_t lead;      /* index of that first leaf */
};

/* The canonical order of two nodes (<0, 0 only for a == b, >0): constants
 * first (by value), then leaves (by kind, index), then the others by
 * their first leaf, their shape and their structure.  It depends on the
 * expressions only, never on when a node was created, so a commutative
 * node built from the same operands has the same operand order whatever
 * was built before it (docs/ARCHITECTURE.md, "Arrays": the array path and
 * the scalar path build the same nodes in different orders), and the
 * instances of one template, whose leaves differ by a shift of their
 * indices, order their operands alike (codegen's loops). */
int expr_cmp_canon(const Expr *a, const Expr *b);

typedef struct ExprCtx ExprCtx;

ExprCtx *expr_ctx_new(Arena *a);
uint32_t expr_count(const ExprCtx *c);     /* nodes created so far */
/* No node is created after this: the node table, the leaf caches and the
 * derivative memo (a few hundred MB for a model of 10^6 equations) are
 * given back before code generation, which only reads expressions.  A
 * constructor that would still need a new node afterwards reports an
 * internal error. */
void expr_ctx_seal(ExprCtx *c);
Arena *expr_ctx_arena(ExprCtx *c);          /* the arena nodes live in */

/* leaves */
Expr *expr_const(ExprCtx *c, double v);
Expr *expr_time(ExprCtx *c);
Expr *expr_leaf(ExprCtx *c, ExprKind kind, uint32_t index);
/* The node equal to *tmpl (its kind, fn, nargs, value or index and args)
 * when one has been built, else NULL: nothing is created (NULL after
 * expr_ctx_seal).  Whether an expression exists without building it. */
Expr *expr_find(ExprCtx *c, const Expr *tmpl);
Expr *expr_idx(ExprCtx *c, uint32_t k);     /* IDX(k), k < EXPR_MAXIDX */

/* ---------- indexed leaves (templates) ---------- */
#define EXPR_MAXIDX 3
/* An affine index c[0] + c[1] IDX(0) + c[2] IDX(1) + c[3] IDX(2). */
typedef struct ExprAffine { int64_t c[EXPR_MAXIDX + 1]; } ExprAffine;
/* The canonical expression of an affine form (a constant when c[1..3] = 0). */
Expr *expr_affine_expr(ExprCtx *c, const ExprAffine *a);
/* e as an affine form over IDX with integer coefficients; false when it is
 * not one (a product of two IDX, a fraction, another leaf, ...). */
bool expr_affine_of(const Expr *e, ExprAffine *out);
/* The leaf `kind` at index `index` (an expression over IDX and constants):
 * the plain leaf kind[i] when index is the integer constant i, else EXPR_AT
 * with the canonical affine index; NULL when index is neither (not affine,
 * or a negative or fractional constant). */
Expr *expr_at(ExprCtx *c, ExprKind kind, Expr *index);
/* The value of an affine form at induction values iv[0..2]. */
static inline int64_t expr_affine_at(const ExprAffine *a, const int64_t *iv) {
    return a->c[0] + a->c[1] * iv[0] + a->c[2] * iv[1] + a->c[3] * iv[2];
}
/* e is a leaf for differentiation and leaf sets (a plain leaf or EXPR_AT) */
static inline bool expr_is_leaf_like(const Expr *e) { return e->kind <= EXPR_MODE || e->kind == EXPR_AT; }

/* operators (simplifying) */
Expr *expr_add(ExprCtx *c, Expr *a, Expr *b);
Expr *expr_sub(ExprCtx *c, Expr *a, Expr *b);
Expr *expr_mul(ExprCtx *c, Expr *a, Expr *b);
Expr *expr_div(ExprCtx *c, Expr *a, Expr *b);
Expr *expr_neg(ExprCtx *c, Expr *a);
Expr *expr_pow(ExprCtx *c, Expr *a, Expr *b);
Expr *expr_call(ExprCtx *c, ExprFn fn, Expr *a, Expr *b); /* b NULL for arity 1 */
Expr *expr_cmp(ExprCtx *c, ExprKind kind, Expr *a, Expr *b); /* EXPR_LT..EXPR_NE */
Expr *expr_and(ExprCtx *c, Expr *a, Expr *b);
Expr *expr_or(ExprCtx *c, Expr *a, Expr *b);
Expr *expr_not(ExprCtx *c, Expr *a);
Expr *expr_ifelse(ExprCtx *c, Expr *cond, Expr *a, Expr *b);

static inline bool expr_is_const(const Expr *e) { return e->kind == EXPR_CONST; }
static inline bool expr_is_leaf(const Expr *e) { return e->kind <= EXPR_MODE; }
bool expr_is_const_value(const Expr *e, double v);

/* d e / d leaf, where leaf is any leaf node (VAR, DER, Y, YP, P, Z, TIME, AT).
 * Memoized per (node, leaf) inside the context. */
Expr *expr_diff(ExprCtx *c, Expr *e, Expr *leaf);

/* The same derivative without the context-wide memo (only this call's
 * nodes are memoized): for the many one-off derivatives of a large model,
 * where keeping every (node, leaf) pair alive costs more than it saves. */
Expr *expr_diff_once(ExprCtx *c, Expr *e, Expr *leaf);

/* Total time derivative: d e/dt = sum over leaves L of (de/dL) * dleaf(L),
 * plus de/dTIME.  `dleaf(ud, L)` returns dL/dt, or NULL when L is constant
 * in time (parameters).  Used for der(expression) and index reduction. */
typedef Expr *(*ExprLeafDt)(void *ud, Expr *leaf);
Expr *expr_dt(ExprCtx *c, Expr *e, ExprLeafDt dleaf, void *ud);

/* The operator node e rebuilt with arguments a[0..nargs) through its
 * constructor (which simplifies); a leaf is returned as is. */
Expr *expr_with_args(ExprCtx *c, Expr *e, Expr *const *a);

/* Replace leaves: `map(ud, leaf)` returns the replacement (or the leaf
 * itself).  Memoized per call; shared subexpressions are rebuilt once. */
typedef Expr *(*ExprLeafMap)(void *ud, Expr *leaf);
Expr *expr_subst(ExprCtx *c, Expr *e, ExprLeafMap map, void *ud);
/* The same result without the memo table, walking e as a tree, for the many
 * small expressions of a run or a template (expr_subst beyond `budget` nodes). */
Expr *expr_subst_small(ExprCtx *c, Expr *e, ExprLeafMap map, void *ud, int budget);
/* The same, calling `watch(ud, old, new)` for every operator node of e with
 * the node that replaces it (new == old when nothing below changed). */
typedef void (*ExprNodeWatch)(void *ud, Expr *old, Expr *new_);
Expr *expr_subst_watch(ExprCtx *c, Expr *e, ExprLeafMap map, void *ud, ExprNodeWatch watch);

/* Replace nodes top-down in roots[0..n) (in place): `pre(ud, node)` is
 * asked once per distinct node before its arguments; a non-NULL answer
 * replaces the node (its arguments are not visited), NULL rebuilds it from
 * its replaced arguments (leaves: keeps them).  One memo for all roots:
 * O(size of their union). */
typedef Expr *(*ExprNodeMap)(void *ud, Expr *node);
void expr_replace(ExprCtx *c, Expr **roots, uint32_t n, ExprNodeMap pre, void *ud);

/* Does e contain `leaf`?  (memoized per call; O(size of e)) */
bool expr_contains(ExprCtx *c, Expr *e, Expr *leaf);

/* Every distinct leaf of the given kind in e, in first-visit order (AT
 * leaves are leaves of kind EXPR_AT; their index is not visited). */
typedef Vec(Expr *) ExprVec;
void expr_leaves(ExprCtx *c, Expr *e, ExprKind kind, ExprVec *out);
/* Every distinct leaf other than constants (any kind, AT leaves whole), in
 * one traversal. */
void expr_leaves_any(ExprCtx *c, Expr *e, ExprVec *out);

/* If e is linear in leaf (e = a*leaf + b with a, b free of leaf, a not the
 * constant 0), the solution -b/a of e = 0; otherwise NULL. */
Expr *expr_solve_linear(ExprCtx *c, Expr *e, Expr *leaf);

/* Numeric evaluation; `leaf(ud, e)` gives the value of every leaf other
 * than CONST.  Comparisons give 1.0/0.0. */
typedef double (*ExprLeafValue)(void *ud, const Expr *leaf);
double expr_eval(const Expr *e, ExprLeafValue leaf, void *ud);

/* Deterministic infix printing; `name(ud, leaf)` prints a leaf other than
 * CONST and TIME (NULL: print as kind[index]). */
typedef void (*ExprLeafName)(void *ud, FILE *out, const Expr *leaf);
void expr_print(FILE *out, const Expr *e, ExprLeafName name, void *ud);

/* Size of e printed as a tree (shared nodes counted every time), or cap + 1
 * when larger: O(DAG size).  expr_print output is proportional to it. */
uint64_t expr_tree_size(ExprCtx *c, Expr *e, uint64_t cap);

/* Number of distinct nodes reachable from e (for size caps). */
uint32_t expr_size(ExprCtx *c, Expr *e);

#endif
