/*
 * expr.c -- construction of the hash-consed expression DAG with
 * simplification on construction.
 *
 * Hash-consing: a node is looked up by (kind, fn, payload, arguments) in
 * an open-addressing table before it is created ("the node table" below),
 * so structurally equal expressions are pointer-equal.  Every constructor
 * is O(1) amortized.  Simplification rules are local (constant folding,
 * neutral and absorbing elements, double negation, x - x, canonical operand
 * order of commutative operators, expr_cmp_canon); no rule can loop
 * because each returns an existing operand or builds a node from strictly
 * smaller parts.
 */
#define _DEFAULT_SOURCE  /* madvise(MADV_HUGEPAGE) beside _POSIX_C_SOURCE */
#include "expr_internal.h"

#include <math.h>
#include <string.h>
#if defined(__linux__)
#include <sys/mman.h>
#endif

const char *const expr_kind_names[EXPR_KIND_COUNT] = {
#define X(k) #k,
    EXPR_KINDS(X)
#undef X
};
const char *const expr_fn_names[FN_COUNT] = {
#define X(id, name, arity) name,
    EXPR_FNS(X)
#undef X
};
const int expr_fn_arity[FN_COUNT] = {
#define X(id, name, arity) arity,
    EXPR_FNS(X)
#undef X
};

int expr_fn_lookup(const char *name) {
    for (int i = 0; i < FN_COUNT; i++)
        if (strcmp(expr_fn_names[i], name) == 0) return i;
    return -1;
}

static uint64_t *table_alloc(Arena *a, uint32_t cap);

ExprCtx *expr_ctx_new(Arena *a) {
    ExprCtx *c = ARENA_NEW(a, ExprCtx);
    c->arena = a;
    c->cap = 1024;
    c->table = table_alloc(a, c->cap);
    return c;
}

/* One scratch arena per context, reset when the outermost walk ends: no
 * malloc/free per walk (a compilation makes millions of them). */
Arena *expr_scratch_enter(ExprCtx *c) {
    if (!c->scratch) c->scratch = arena_new_in(c->arena, 256u << 10);
    c->depth++;
    return c->scratch;
}

void expr_scratch_leave(ExprCtx *c) {
    if (--c->depth > 0) return;
    arena_reset(c->scratch);
}

uint32_t expr_count(const ExprCtx *c) { return c->count; }

void expr_ctx_seal(ExprCtx *c) {
    if (c->sealed) return;
    arena_release(c->arena, c->table, sizeof *c->table * c->cap);
    arena_release(c->arena, c->old, sizeof *c->old * c->old_cap);
    arena_release(c->arena, c->next, sizeof *c->next * c->cap * 2);
    c->table = c->old = c->next = NULL;
    for (int k = 0; k <= EXPR_Z - EXPR_VAR; k++) {
        arena_release(c->arena, c->leaf_cache[k], sizeof(Expr *) * c->leaf_cap[k]);
        c->leaf_cache[k] = NULL;
        c->leaf_cap[k] = 0;
    }
    hmap_release(c->arena, &c->diff_memo);
    c->sealed = true;
}
Arena *expr_ctx_arena(ExprCtx *c) { return c->arena; }

static uint64_t payload_bits(const Expr *e) {
    uint64_t bits = 0;
    if (e->kind == EXPR_CONST) {
        double v = e->value == 0.0 ? 0.0 : e->value; /* -0.0 and 0.0 are one node */
        memcpy(&bits, &v, sizeof bits);
    } else if (expr_is_leaf(e)) {
        bits = e->index;
    }
    return bits;
}

/* ---------- the node table ----------
 * Nodes live in a pool of blocks by id (block k holds 2^k POOL_FIRST
 * nodes), so a node is found from its id without a table of pointers, and
 * nodes made one after the other sit side by side.  The table has one
 * 8-byte slot per entry, (hash << 32 | id) with the low 32 bits of the
 * node's hash: a probe compares hashes in the slot and reads a node only
 * when they are equal (a lookup costs about one cache miss, the slot's
 * line; a table of pointers beside their hashes cost two), and growing
 * reads no node.  Linear probing over the compact array, load at most 3/4
 * (a miss scans a few adjacent slots of one line), doubled when fuller.
 * A large table asks for 2 MB pages: its probes are random, and with 4 KB
 * pages each would be a TLB miss as well.  The hash uses the arguments'
 * ids: where a node sits depends on the expressions only, and nothing
 * walks the table but its growth. */
#define POOL_FIRST 1024u
#define HUGE_PAGE ((size_t)2 << 20)

/* One multiply per argument and a final avalanche (the slot index uses the
 * low bits). */
static uint64_t node_hash(const Expr *e) {
    uint64_t h = ((uint64_t)e->kind << 16 | (uint64_t)e->fn << 8 | e->nargs) * 0x9e3779b97f4a7c15ull;
    h = (h ^ payload_bits(e)) * 0xff51afd7ed558ccdull;
    for (int i = 0; i < e->nargs; i++) h = (h ^ e->args[i]->id) * 0xc4ceb9fe1a85ec53ull;
    h ^= h >> 31;
    h *= 0x9e3779b97f4a7c15ull;
    return h ^ (h >> 29);
}

static bool node_equal(const Expr *a, const Expr *b) {
    if (a->kind != b->kind || a->fn != b->fn || a->nargs != b->nargs) return false;
    if (payload_bits(a) != payload_bits(b)) return false;
    for (int i = 0; i < a->nargs; i++)
        if (a->args[i] != b->args[i]) return false;
    return true;
}

/* the pool entry of node id (ids start at 1): block k, offset */
static Expr *pool_at(ExprCtx *c, uint32_t id) {
    uint64_t j = (uint64_t)id - 1 + POOL_FIRST;
    int k = 63 - __builtin_clzll(j) - 10;   /* POOL_FIRST = 2^10 */
    if (!c->pool[k]) c->pool[k] = ARENA_ARRAY(c->arena, Expr, (size_t)POOL_FIRST << k);
    return &c->pool[k][j - ((uint64_t)POOL_FIRST << k)];
}

static uint64_t *table_alloc(Arena *a, uint32_t cap) {
    uint64_t *t = ARENA_ARRAY(a, uint64_t, cap);
#ifdef MADV_HUGEPAGE
    size_t bytes = sizeof *t * cap;
    uintptr_t lo = ((uintptr_t)t + HUGE_PAGE - 1) & ~(uintptr_t)(HUGE_PAGE - 1);
    uintptr_t hi = ((uintptr_t)t + bytes) & ~(uintptr_t)(HUGE_PAGE - 1);
    if (bytes >= 2 * HUGE_PAGE && hi > lo) madvise((void *)lo, hi - lo, MADV_HUGEPAGE); /* a hint */
#endif
    return t;
}

static void table_put(uint64_t *t, uint32_t mask, uint64_t slot) {
    uint32_t i = (uint32_t)(slot >> 32) & mask;
    while (t[i]) i = (i + 1) & mask;
    t[i] = slot;
}

/* Growing is spread over the nodes created around it, so that it costs
 * each creation a constant instead of costing one creation the size of
 * the model (a step in the time of whichever pass crossed the threshold,
 * at a size that depends on the model).  Both of its costs are spread:
 *   - the pages of the doubled table: a fresh page is zeroed by the
 *     kernel when first written, and the table's writes are random, so
 *     its pages would all be faulted in within a few thousand creations
 *     of the growth (0.1 to 1 ms per MB here).  From load 5/8 on, the
 *     next table is allocated and each creation writes the next of its
 *     pages, in order, so they are all in by load 3/4;
 *   - the copy: after the growth, the outgrown table stays beside the
 *     new one and still answers lookups (nodes made before the growth
 *     are in it, nodes made after are in the new one), and each node
 *     created copies the next MOVE_STEP of its slots over.  The copy ends
 *     after old_cap / MOVE_STEP creations (from load 3/8 of the new
 *     table to 13/32), long before the next table is begun: a short
 *     copy, since a lookup that misses in the new table meanwhile probes
 *     the old one too.  A step's destinations are prefetched before they
 *     are written, so their misses overlap. */
enum { MOVE_STEP = 16, PAGE_SLOTS = 4096 / sizeof(uint64_t) };

static void table_move(ExprCtx *c, uint32_t nslots) {
    uint32_t mask = c->cap - 1, end = c->old_cap - c->moved < nslots ? c->old_cap : c->moved + nslots;
    for (uint32_t i = c->moved; i < end; i++)
        if (c->old[i]) __builtin_prefetch(&c->table[(uint32_t)(c->old[i] >> 32) & mask], 1);
    for (uint32_t i = c->moved; i < end; i++)
        if (c->old[i]) table_put(c->table, mask, c->old[i]);
    c->moved = end;
    if (end < c->old_cap) return;
    arena_release(c->arena, c->old, sizeof *c->old * c->old_cap);
    c->old = NULL;
    c->old_cap = c->moved = 0;
}

/* after a creation: the copy's next step, or the next table's pages as
 * far as the load has come from 5/8 towards 3/4 */
static void table_step(ExprCtx *c) {
    if (c->old) {
        table_move(c, MOVE_STEP);
        return;
    }
    uint64_t load8 = (uint64_t)c->count * 8, cap = c->cap;
    if (load8 < cap * 5) return;
    if (!c->next) c->next = table_alloc(c->arena, cap * 2), c->touched = 0;
    uint64_t want = (load8 - cap * 5) * 2; /* of 2 cap slots at load8 = 6 cap */
    if (want > cap * 2) want = cap * 2;
    for (volatile uint64_t *t = c->next; c->touched < want; c->touched += PAGE_SLOTS) t[c->touched] = 0;
}

static void table_grow(ExprCtx *c) {
    while (c->old) table_move(c, 1u << 16); /* not reached: the last copy is done by now */
    c->old = c->table;
    c->old_cap = c->cap;
    c->moved = 0;
    c->table = c->next ? c->next : table_alloc(c->arena, c->cap * 2);
    c->next = NULL;
    c->cap *= 2;
}

/* Expr.shape and Expr.lead (expr_cmp_canon) from the arguments' */
static void set_canon_keys(Expr *e) {
    uint64_t h = ((uint64_t)e->kind << 16 | (uint64_t)e->fn << 8 | e->nargs) * 0x9e3779b97f4a7c15ull;
    if (e->kind == EXPR_CONST) h = (h ^ payload_bits(e)) * 0xff51afd7ed558ccdull;
    e->lead_kind = EXPR_CONST;
    e->lead = 0;
    if (expr_is_leaf(e) && e->kind != EXPR_CONST) e->lead_kind = e->kind, e->lead = e->index;
    for (int i = 0; i < e->nargs; i++) {
        h = (h ^ e->args[i]->shape) * 0xc4ceb9fe1a85ec53ull;
        if (e->lead_kind == EXPR_CONST) e->lead_kind = e->args[i]->lead_kind, e->lead = e->args[i]->lead;
    }
    h ^= h >> 31;
    e->shape = (uint32_t)(h ^ (h >> 32));
}

static int cmp_u(uint64_t a, uint64_t b) { return a < b ? -1 : a > b; }

/* one level: 0 when only the arguments can tell (same kind, fn, nargs) */
static int cmp_node(const Expr *a, const Expr *b) {
    bool ca = expr_is_const(a), cb = expr_is_const(b);
    if (ca != cb) return ca ? -1 : 1;
    if (ca) return a->value < b->value ? -1 : a->value > b->value ? 1 : cmp_u(payload_bits(a), payload_bits(b));
    bool la = expr_is_leaf(a), lb = expr_is_leaf(b);
    if (la != lb) return la ? -1 : 1;
    if (la) return a->kind != b->kind ? cmp_u(a->kind, b->kind) : cmp_u(a->index, b->index);
    int r = cmp_u(a->lead_kind, b->lead_kind);
    if (!r) r = cmp_u(a->lead, b->lead);
    if (!r) r = cmp_u(a->shape, b->shape);
    if (!r) r = cmp_u(a->kind, b->kind);
    if (!r) r = cmp_u(a->fn, b->fn);
    if (!r) r = cmp_u(a->nargs, b->nargs);
    return r;
}

/* Iterative: equal nodes are one pointer (hash-consing), so the first
 * argument that differs decides; one descent, no recursion. */
int expr_cmp_canon(const Expr *a, const Expr *b) {
    while (a != b) {
        int r = cmp_node(a, b);
        if (r) return r;
        int i = 0;
        while (i < a->nargs && a->args[i] == b->args[i]) i++;
        if (i == a->nargs) return cmp_u(a->id, b->id); /* unreachable for interned nodes */
        a = a->args[i], b = b->args[i];
    }
    return 0;
}

/* The one place nodes are created: find or insert the template. */
/* After expr_ctx_seal: a node of its own, not shared (the compilation
 * fails with the internal error, so nothing relies on it). */
static Expr *sealed_node(ExprCtx *c, const Expr *tmpl) {
    diag_internal("an expression was built after the expression table was given back (expr_ctx_seal)");
    Expr *e = ARENA_NEW(c->arena, Expr);
    *e = *tmpl;
    e->id = ++c->count;
    set_canon_keys(e);
    return e;
}

/* the node equal to tmpl in table t, or NULL with *i at the empty slot
 * that ends its probe sequence (from *i, its home) */
static Expr *table_find(ExprCtx *c, const uint64_t *t, uint32_t cap, uint32_t h, const Expr *tmpl, uint32_t *i) {
    uint32_t mask = cap - 1;
    for (uint64_t s; (s = t[*i]); *i = (*i + 1) & mask) {
        if ((uint32_t)(s >> 32) != h) continue;
        Expr *e = pool_at(c, (uint32_t)s);
        if (node_equal(e, tmpl)) return e;
    }
    return NULL;
}

Expr *expr_intern(ExprCtx *c, const Expr *tmpl) {
    if (c->sealed) return sealed_node(c, tmpl);
    if (((uint64_t)c->count + 1) * 4 > (uint64_t)c->cap * 3) table_grow(c);
    uint32_t h = (uint32_t)node_hash(tmpl), i = h & (c->cap - 1);
    Expr *e = table_find(c, c->table, c->cap, h, tmpl, &i);
    if (!e && c->old) {
        uint32_t j = h & (c->old_cap - 1);
        e = table_find(c, c->old, c->old_cap, h, tmpl, &j);
    }
    if (e) return e;
    e = pool_at(c, c->count + 1);
    *e = *tmpl;
    if (e->kind == EXPR_CONST && e->value == 0.0) e->value = 0.0;
    e->id = ++c->count;
    set_canon_keys(e);
    c->table[i] = (uint64_t)h << 32 | e->id;
    table_step(c);
    return e;
}

static Expr *mk(ExprCtx *c, ExprKind k, int n, Expr *a, Expr *b, Expr *d) {
    Expr t = {.kind = (uint8_t)k, .nargs = (uint8_t)n, .args = {a, b, d}};
    return expr_intern(c, &t);
}

Expr *expr_const(ExprCtx *c, double v) {
    Expr **hot = v == 0.0 ? &c->zero : v == 1.0 ? &c->one : NULL;  /* -0.0 is 0.0 */
    if (hot && *hot) return *hot;
    Expr t = {.kind = EXPR_CONST, .value = v};
    Expr *e = expr_intern(c, &t);
    if (hot) *hot = e;
    return e;
}

Expr *expr_time(ExprCtx *c) { return mk(c, EXPR_TIME, 0, NULL, NULL, NULL); }

/* Indices are dense (slots, flat variables): a cache covers up to a few
 * times the nodes created so far, so an odd large index cannot make it
 * huge; larger ones go through the table only. */
#define LEAF_CACHE_MAX (1u << 28)

/* The cache entry of leaf kind[index] (VAR..Z), grown to cover it; NULL
 * when the leaf is not cached. */
static Expr **leaf_slot(ExprCtx *c, ExprKind kind, uint32_t index) {
    if (kind < EXPR_VAR || kind > EXPR_Z || index >= LEAF_CACHE_MAX || index / 4 > c->count + 1024) return NULL;
    uint32_t k = (uint32_t)(kind - EXPR_VAR), cap = c->leaf_cap[k];
    if (index >= cap) {
        uint32_t nc = cap ? cap : 64;
        while (nc <= index) nc *= 2;
        c->leaf_cache[k] = arena_realloc(c->arena, c->leaf_cache[k], sizeof(Expr *) * cap, sizeof(Expr *) * nc);
        c->leaf_cap[k] = nc;
    }
    return &c->leaf_cache[k][index];
}

Expr *expr_leaf(ExprCtx *c, ExprKind kind, uint32_t index) {
    Expr **slot = leaf_slot(c, kind, index);
    if (slot && *slot) return *slot;
    Expr t = {.kind = (uint8_t)kind, .index = index};
    Expr *e = expr_intern(c, &t);
    if (slot) *slot = e;
    return e;
}

bool expr_is_const_value(const Expr *e, double v) {
    return e->kind == EXPR_CONST && e->value == v;
}

/* commutative operands in canonical order (constants first) */
static void order(Expr **a, Expr **b) {
    if (expr_cmp_canon(*a, *b) > 0) {
        Expr *t = *a;
        *a = *b;
        *b = t;
    }
}

Expr *expr_add(ExprCtx *c, Expr *a, Expr *b) {
    if (expr_is_const(a) && expr_is_const(b)) return expr_const(c, a->value + b->value);
    if (expr_is_const_value(a, 0)) return b;
    if (expr_is_const_value(b, 0)) return a;
    if (b->kind == EXPR_NEG && b->args[0] == a) return expr_const(c, 0);
    if (a->kind == EXPR_NEG && a->args[0] == b) return expr_const(c, 0);
    if (a == b) return expr_mul(c, expr_const(c, 2), a);
    order(&a, &b);
    return mk(c, EXPR_ADD, 2, a, b, NULL);
}

Expr *expr_neg(ExprCtx *c, Expr *a) {
    if (expr_is_const(a)) return expr_const(c, -a->value);
    if (a->kind == EXPR_NEG) return a->args[0];
    if (a->kind == EXPR_MUL && expr_is_const(a->args[0]))
        return expr_mul(c, expr_const(c, -a->args[0]->value), a->args[1]);
    return mk(c, EXPR_NEG, 1, a, NULL, NULL);
}

Expr *expr_sub(ExprCtx *c, Expr *a, Expr *b) {
    if (a == b) return expr_const(c, 0);
    return expr_add(c, a, expr_neg(c, b));
}

Expr *expr_mul(ExprCtx *c, Expr *a, Expr *b) {
    if (expr_is_const(a) && expr_is_const(b)) return expr_const(c, a->value * b->value);
    order(&a, &b);
    if (expr_is_const(a)) {
        if (a->value == 0) return a;
        if (a->value == 1) return b;
        if (a->value == -1) return expr_neg(c, b);
        if (b->kind == EXPR_MUL && expr_is_const(b->args[0]))
            return expr_mul(c, expr_const(c, a->value * b->args[0]->value), b->args[1]);
        if (b->kind == EXPR_NEG) return expr_mul(c, expr_const(c, -a->value), b->args[0]);
    }
    if (a->kind == EXPR_NEG && b->kind == EXPR_NEG) return expr_mul(c, a->args[0], b->args[0]);
    if (a->kind == EXPR_NEG) return expr_neg(c, expr_mul(c, a->args[0], b));
    if (b->kind == EXPR_NEG) return expr_neg(c, expr_mul(c, a, b->args[0]));
    return mk(c, EXPR_MUL, 2, a, b, NULL);
}

Expr *expr_div(ExprCtx *c, Expr *a, Expr *b) {
    if (expr_is_const(a) && expr_is_const(b) && b->value != 0)
        return expr_const(c, a->value / b->value);
    if (expr_is_const_value(b, 1)) return a;
    if (expr_is_const_value(b, -1)) return expr_neg(c, a);
    if (expr_is_const_value(a, 0) && !expr_is_const(b)) return a;
    if (a == b && !expr_is_const(a)) return expr_const(c, 1);
    if (expr_is_const(b) && b->value != 0 && isfinite(1.0 / b->value) &&
        fabs(frexp(b->value, &(int){0})) == 0.5)  /* exact reciprocal: powers of two */
        return expr_mul(c, expr_const(c, 1.0 / b->value), a);
    return mk(c, EXPR_DIV, 2, a, b, NULL);
}

Expr *expr_pow(ExprCtx *c, Expr *a, Expr *b) {
    if (expr_is_const(a) && expr_is_const(b)) return expr_const(c, pow(a->value, b->value));
    if (expr_is_const_value(b, 0)) return expr_const(c, 1);
    if (expr_is_const_value(b, 1)) return a;
    return mk(c, EXPR_POW, 2, a, b, NULL);
}

double expr_apply_fn(ExprFn fn, double x, double y) {
    switch (fn) {
    case FN_SIN: return sin(x);
    case FN_COS: return cos(x);
    case FN_TAN: return tan(x);
    case FN_ASIN: return asin(x);
    case FN_ACOS: return acos(x);
    case FN_ATAN: return atan(x);
    case FN_SINH: return sinh(x);
    case FN_COSH: return cosh(x);
    case FN_TANH: return tanh(x);
    case FN_EXP: return exp(x);
    case FN_LOG: return log(x);
    case FN_LOG10: return log10(x);
    case FN_SQRT: return sqrt(x);
    case FN_ABS: return fabs(x);
    case FN_SIGN: return x > 0 ? 1.0 : x < 0 ? -1.0 : 0.0;
    case FN_FLOOR: return floor(x);
    case FN_CEIL: return ceil(x);
    case FN_ATAN2: return atan2(x, y);
    case FN_MIN: return x < y ? x : y;
    case FN_MAX: return x > y ? x : y;
    case FN_MOD: return x - floor(x / y) * y;
    case FN_REM: return fmod(x, y);
    case FN_COUNT: break;
    }
    return NAN;
}

Expr *expr_call(ExprCtx *c, ExprFn fn, Expr *a, Expr *b) {
    int n = expr_fn_arity[fn];
    if (expr_is_const(a) && (n == 1 || expr_is_const(b))) {
        double v = expr_apply_fn(fn, a->value, n == 2 ? b->value : 0);
        if (isfinite(v)) return expr_const(c, v);
    }
    Expr t = {.kind = EXPR_CALL, .fn = (uint8_t)fn, .nargs = (uint8_t)n,
              .args = {a, n == 2 ? b : NULL, NULL}};
    return expr_intern(c, &t);
}

static double cmp_fold(ExprKind k, double a, double b) {
    switch (k) {
    case EXPR_LT: return a < b;
    case EXPR_LE: return a <= b;
    case EXPR_GT: return a > b;
    case EXPR_GE: return a >= b;
    case EXPR_EQ: return a == b;
    default: return a != b;
    }
}

Expr *expr_cmp(ExprCtx *c, ExprKind k, Expr *a, Expr *b) {
    if (expr_is_const(a) && expr_is_const(b)) return expr_const(c, cmp_fold(k, a->value, b->value));
    return mk(c, k, 2, a, b, NULL);
}

static bool is_true(const Expr *e) { return expr_is_const(e) && e->value != 0; }
static bool is_false(const Expr *e) { return expr_is_const_value(e, 0); }

Expr *expr_and(ExprCtx *c, Expr *a, Expr *b) {
    if (is_false(a) || is_false(b)) return expr_const(c, 0);
    if (is_true(a)) return expr_is_const(b) ? expr_const(c, 1) : b;
    if (is_true(b)) return a;
    order(&a, &b);
    return mk(c, EXPR_AND, 2, a, b, NULL);
}

Expr *expr_or(ExprCtx *c, Expr *a, Expr *b) {
    if (is_true(a) || is_true(b)) return expr_const(c, 1);
    if (is_false(a)) return b;
    if (is_false(b)) return a;
    order(&a, &b);
    return mk(c, EXPR_OR, 2, a, b, NULL);
}

Expr *expr_not(ExprCtx *c, Expr *a) {
    if (expr_is_const(a)) return expr_const(c, a->value == 0);
    if (a->kind == EXPR_NOT) return a->args[0];
    return mk(c, EXPR_NOT, 1, a, NULL, NULL);
}

Expr *expr_ifelse(ExprCtx *c, Expr *cond, Expr *a, Expr *b) {
    if (expr_is_const(cond)) return cond->value != 0 ? a : b;
    if (a == b) return a;
    return mk(c, EXPR_IFELSE, 3, cond, a, b);
}

/* ---------- indexed leaves ---------- */

Expr *expr_idx(ExprCtx *c, uint32_t k) { return expr_leaf(c, EXPR_IDX, k); }

/* c0 + c1 IDX(0) + c2 IDX(1) + c3 IDX(2), always built in this order: with
 * hash-consing, equal forms are one node. */
Expr *expr_affine_expr(ExprCtx *c, const ExprAffine *a) {
    Expr *r = expr_const(c, (double)a->c[0]);
    for (uint32_t k = 0; k < EXPR_MAXIDX; k++)
        if (a->c[k + 1]) r = expr_add(c, r, expr_mul(c, expr_const(c, (double)a->c[k + 1]), expr_idx(c, k)));
    return r;
}

/* integers exact in a double, far from overflowing an affine sum */
static bool small_int(double v) { return v == floor(v) && fabs(v) <= 1e15; }

static bool affine_rec(const Expr *e, int64_t scale, ExprAffine *out, int depth) {
    if (depth > 64) return false;
    switch ((ExprKind)e->kind) {
    case EXPR_CONST:
        if (!small_int(e->value)) return false;
        out->c[0] += scale * (int64_t)e->value;
        return true;
    case EXPR_IDX:
        if (e->index >= EXPR_MAXIDX) return false;
        out->c[e->index + 1] += scale;
        return true;
    case EXPR_ADD:
        return affine_rec(e->args[0], scale, out, depth + 1) && affine_rec(e->args[1], scale, out, depth + 1);
    case EXPR_NEG: return affine_rec(e->args[0], -scale, out, depth + 1);
    case EXPR_MUL: {
        const Expr *k = e->args[0], *x = e->args[1];
        if (!expr_is_const(k)) { k = e->args[1]; x = e->args[0]; }
        if (!expr_is_const(k) || !small_int(k->value) || fabs(k->value) > 1e9) return false;
        return affine_rec(x, scale * (int64_t)k->value, out, depth + 1);
    }
    default: return false;
    }
}

bool expr_affine_of(const Expr *e, ExprAffine *out) {
    memset(out, 0, sizeof *out);
    return affine_rec(e, 1, out, 0);
}

Expr *expr_at(ExprCtx *c, ExprKind kind, Expr *index) {
    if (expr_is_const(index)) {
        double v = index->value;
        if (v != floor(v) || v < 0 || v > 4294967295.0) return NULL;
        return expr_leaf(c, kind, (uint32_t)v);
    }
    ExprAffine a;
    if (!expr_affine_of(index, &a)) return NULL;
    Expr t = {.kind = EXPR_AT, .fn = (uint8_t)kind, .nargs = 1, .args = {expr_affine_expr(c, &a), NULL, NULL}};
    return expr_intern(c, &t);
}
