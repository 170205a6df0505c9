/* expr_internal.h -- shared between the files of compiler/symbolic only. */
#ifndef DYADC_EXPR_INTERNAL_H
#define DYADC_EXPR_INTERNAL_H

#include "expr.h"

#define EXPR_POOL_BLOCKS 23   /* 1024 (2^23 - 1) > 2^32 ids */

struct ExprCtx {
    Arena *arena;
    uint64_t *table;    /* hash-consing table (expr.c, "the node table"):
                           [cap] slots, 0 or (hash << 32 | node id) */
    uint32_t cap, count;
    uint64_t *next;     /* from load 5/8: the table's successor (2 cap
                           slots), its pages written before `touched` */
    uint64_t *old;      /* after a growth: the outgrown table, whose slots
                           before `moved` are copied into `table` */
    uint32_t touched, old_cap, moved;
    Expr *pool[EXPR_POOL_BLOCKS]; /* the nodes by id: block k holds ids
                           from POOL_FIRST (2^k - 1) + 1, 2^k POOL_FIRST of them */
    HashMap diff_memo;  /* (node id << 32 | leaf id) -> derivative */
    Expr **leaf_cache[EXPR_Z - EXPR_VAR + 1]; /* [kind - EXPR_VAR][index]: the
                           plain leaves VAR..Z by index, so the most frequent
                           constructor skips the hash table (a cache miss) */
    uint32_t leaf_cap[EXPR_Z - EXPR_VAR + 1];
    Expr *zero, *one;   /* the constants 0 and 1, as often asked for */
    bool sealed;        /* expr_ctx_seal: the table is gone */
    Arena *scratch;     /* temporaries of the traversal in progress (created on first use) */
    int depth;          /* nesting of traversals (callbacks may start more) */
};

/* Traversal temporaries (memo tables, stacks) live in a scratch arena that
 * is reset when the outermost traversal returns, so a million calls do not
 * keep a million dead hash tables in the compilation arena (and cost no
 * malloc/free each: its first chunk is kept, inside the context's arena). */
Arena *expr_scratch_enter(ExprCtx *c);
void expr_scratch_leave(ExprCtx *c);

Expr *expr_intern(ExprCtx *c, const Expr *tmpl);
double expr_apply_fn(ExprFn fn, double x, double y);

#endif
