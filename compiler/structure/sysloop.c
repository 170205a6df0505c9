/*
 * sysloop.c -- the System's loop items (system.h, SysLoop) read as scalar
 * rows: by instance on integers (sys_resid_at, sys_jac_at, sys_at_index)
 * or materialized as the scalar lists (sys_expand).
 *
 * A loop item stands for rows that are one template with its Y, YP and P
 * leaves shifted by a stride per row and dimension of its box (docs/ARCHITECTURE.md, "Arrays",
 * stage 3 step 3).  Renaming those leaves rebuilds the instance through
 * the Expr constructors, which decide from kinds, constants, pointer
 * equality and the canonical order only; the structure phase forms a loop
 * only where the shift keeps that order (runs.c), so the renamed template
 * is the Expr the scalar path builds for the row.
 */
#include "system.h"

typedef struct {
    ExprCtx *c;
    const SysLoop *l;
    uint32_t j;
} Shift;

int64_t sys_loop_offset(const SysLoop *l, uint32_t j, const int32_t *step, uint32_t n, uint32_t k) {
    int64_t off = 0;
    for (uint32_t d = 0; d < l->ndim; d++) {
        off += (int64_t)(j % l->dim_count[d]) * step[d * n + k];
        j /= l->dim_count[d];
    }
    return off;
}

uint32_t sys_loop_row(const SysLoop *l, uint32_t j) {
    int64_t r = l->row;
    for (uint32_t d = 0; d < l->ndim; d++) {
        r += (int64_t)(j % l->dim_count[d]) * l->dim_row[d];
        j /= l->dim_count[d];
    }
    return (uint32_t)r;
}

/* the instance of loop l at row r (a row of it): its multi-index by
 * division, outermost dimension first (dim_row[d] is at least the rows the
 * dimensions below d span) */
static uint32_t loop_instance(const SysLoop *l, uint32_t r) {
    uint32_t off = r - l->row, i[SYS_LOOP_MAX_DIM] = {0}, j = 0;
    for (uint32_t d = l->ndim; d-- > 0;) {
        i[d] = off / l->dim_row[d];
        off -= i[d] * l->dim_row[d];
    }
    for (uint32_t d = l->ndim; d-- > 0;) j = j * l->dim_count[d] + i[d];
    return j;
}

void sys_index_loops(System *s) {
    s->row_loop = NULL;
    if (!s->nloops) return;
    Arena *a = expr_ctx_arena(s->ctx);
    s->row_loop = ARENA_ARRAY(a, uint32_t, s->ny + 1);
    for (uint32_t k = 0; k < s->nloops; k++)
        for (uint32_t j = 0; j < s->loops[k].count; j++) s->row_loop[sys_loop_row(&s->loops[k], j)] = k + 1;
}

uint32_t sys_at_index(const SysAt *at, const Expr *leaf) {
    const SysLoop *l = at->loop;
    if (!l) return leaf->index;
    for (uint32_t i = 0; i < l->nleaf; i++)
        if (l->leaf[i] == leaf)
            return (uint32_t)((int64_t)leaf->index + sys_loop_offset(l, at->j, l->stride, l->nleaf, i));
    return leaf->index;
}

static Expr *shift_leaf(void *ud, Expr *leaf) {
    Shift *p = ud;
    if (leaf->kind != EXPR_Y && leaf->kind != EXPR_YP && leaf->kind != EXPR_P) return leaf;
    SysAt at = {p->l, p->j};
    return expr_leaf(p->c, (ExprKind)leaf->kind, sys_at_index(&at, leaf));
}

static Expr *shifted(Shift *p, Expr *e) { return expr_subst_small(p->c, e, shift_leaf, p, 256); }

void sys_expand(System *s) {
    for (uint32_t k = 0; k < s->nloops; k++) {
        const SysLoop *l = &s->loops[k];
        for (uint32_t j = 0; j < l->count; j++) {
            Shift p = {s->ctx, l, j};
            s->resid[sys_loop_row(l, j)] = shifted(&p, l->res);
            for (uint32_t e = 0; e < l->nent; e++) {
                int32_t pos = l->jac_pos[(size_t)j * l->nent + e];
                s->jac_dy[pos] = shifted(&p, l->dy[e]);
                s->jac_dyp[pos] = shifted(&p, l->dyp[e]);
            }
        }
    }
    s->nloops = 0;
    s->loops = NULL;
    s->row_loop = NULL;
}

/* the loop holding row r, or NULL */
static const SysLoop *loop_of_row(const System *s, uint32_t r) {
    return s->row_loop && s->row_loop[r] ? &s->loops[s->row_loop[r] - 1] : NULL;
}

Expr *sys_resid_at(const System *s, uint32_t r, SysAt *at) {
    *at = (SysAt){NULL, 0};
    if (s->resid[r] || !s->nloops) return s->resid[r];
    const SysLoop *l = loop_of_row(s, r);
    if (!l) return NULL;
    *at = (SysAt){l, loop_instance(l, r)};
    return l->res;
}

Expr *sys_jac_at(const System *s, uint32_t k, bool dyp, SysAt *at) {
    *at = (SysAt){NULL, 0};
    Expr *x = dyp ? s->jac_dyp[k] : s->jac_dy[k];
    if (x || !s->nloops) return x;
    const SysLoop *l = loop_of_row(s, (uint32_t)s->jac_rowidx[k]);
    if (!l) return NULL;
    uint32_t j = loop_instance(l, (uint32_t)s->jac_rowidx[k]);
    for (uint32_t e = 0; e < l->nent; e++)
        if (l->jac_pos[(size_t)j * l->nent + e] == (int32_t)k) {
            *at = (SysAt){l, j};
            return dyp ? l->dyp[e] : l->dy[e];
        }
    return NULL;
}
