/* expr_internal.h -- shared between the files of compiler/symbolic only. */
#ifndef DYADC_EXPR_INTERNAL_H
#define DYADC_EXPR_INTERNAL_H

#include "expr.h"

struct ExprCtx {
    Arena *arena;
    Expr **table;       /* hash-consing table, open addressing */
    uint32_t cap, count;
    HashMap diff_memo;  /* (node id << 32 | leaf id) -> derivative */
};

Expr *expr_intern(ExprCtx *c, const Expr *tmpl);
double expr_apply_fn(ExprFn fn, double x, double y);

#endif
