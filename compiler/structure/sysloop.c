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
    for (int w = 0; w < 2; w++) { /* the output and the assigned values' loops */
        const SysLoop *ls = w ? s->asg_loops : s->out_loops;
        Expr **list = w ? s->assigned_value : s->out;
        for (uint32_t k = 0, n = w ? s->nasg_loops : s->nout_loops; k < n; k++)
            for (uint32_t j = 1; j < ls[k].count; j++) {
                Shift p = {s->ctx, &ls[k], j};
                list[sys_loop_row(&ls[k], j)] = shifted(&p, ls[k].res);
            }
    }
    s->nout_loops = s->nasg_loops = 0;
    s->out_loops = s->asg_loops = NULL;
}

/* The instance is the template rebuilt with its leaves shifted, node for
 * node (the structure phase forms a loop only where the shift keeps the
 * constructors' decisions): each node's image is the node with its
 * arguments' images, looked up (expr_find) in post-order. */
#define PROBE_MAX 64 /* nodes of a template: a larger one is taken to exist (no loop) */
bool sys_loop_instance_exists(ExprCtx *c, const SysLoop *l, uint32_t j) {
    const Expr *node[PROBE_MAX];
    Expr *img[PROBE_MAX];
    uint32_t n = 0, top = 0;
    const Expr *stack[PROBE_MAX];
    uint8_t next[PROBE_MAX];
    stack[top] = l->res, next[top++] = 0;
    while (top) {
        const Expr *e = stack[top - 1];
        if (next[top - 1] < e->nargs) { /* its next argument first, unless done */
            const Expr *a = e->args[next[top - 1]++];
            uint32_t k = 0;
            while (k < n && node[k] != a) k++;
            if (k < n) continue;
            if (top == PROBE_MAX) return true;
            stack[top] = a, next[top++] = 0;
            continue;
        }
        top--;
        uint32_t k = 0;
        while (k < n && node[k] != e) k++;
        if (k < n) continue; /* shared, reached twice */
        if (n == PROBE_MAX) return true;
        Expr t = *e;
        for (int i = 0; i < e->nargs; i++) {
            uint32_t a = 0;
            while (node[a] != e->args[i]) a++;
            t.args[i] = img[a];
        }
        if (e->kind == EXPR_Y || e->kind == EXPR_YP || e->kind == EXPR_P) {
            SysAt at = {l, j};
            t.index = sys_at_index(&at, e);
        }
        node[n] = e;
        img[n] = expr_find(c, &t);
        if (!img[n++]) return false;
    }
    return true;
}

Expr *sys_out_at(const System *s, uint32_t k, SysAt *at) {
    *at = (SysAt){NULL, 0};
    if (s->out[k] || !s->nout_loops) return s->out[k];
    uint32_t lo = 0, hi = s->nout_loops; /* ascending, disjoint */
    while (lo < hi) {
        uint32_t mid = (lo + hi) / 2;
        if (s->out_loops[mid].row + s->out_loops[mid].count <= k) lo = mid + 1;
        else hi = mid;
    }
    const SysLoop *l = lo < s->nout_loops && s->out_loops[lo].row <= k ? &s->out_loops[lo] : NULL;
    if (!l) return NULL;
    *at = (SysAt){l, k - l->row};
    return l->res;
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

/* ---------- can two loop items share an instance? ---------- */

typedef struct {
    int64_t sa, sb, c;     /* sa*a - sb*b = c */
} Meet;

/* the stride of leaf e in l, a one-dimensional item (a leaf not in its
 * list is not shifted) */
static int64_t leaf_stride(const SysLoop *l, const Expr *e) {
    for (uint32_t i = 0; i < l->nleaf; i++)
        if (l->leaf[i] == e) return l->stride[i];
    return 0;
}

/* do instance a of the first loop and some instance b < nb of the
 * second satisfy every equation? */
static bool meet_at(const Meet *m, uint32_t n, int64_t a, uint32_t nb) {
    int64_t b = 0; /* free when no equation holds b */
    for (uint32_t k = 0; k < n; k++)
        if (m[k].sb) {
            int64_t r = m[k].sa * a - m[k].c;
            if (r % m[k].sb) return false;
            b = r / m[k].sb;
            break;
        }
    if (b < 0 || b >= nb) return false;
    for (uint32_t k = 0; k < n; k++)
        if (m[k].sa * a - m[k].sb * b != m[k].c) return false;
    return true;
}

/* Is there an integer a in [0, na) and b in [0, nb) with every
 * sa*a - sb*b = c?  Two independent equations fix (a, b) (Cramer's
 * rule); when all are multiples of one, a is free (no sa) or walked,
 * O(na). */
static bool meet_solvable(const Meet *m, uint32_t n, uint32_t na, uint32_t nb) {
    uint32_t p = 0;
    while (p < n && !m[p].sa && !m[p].sb) p++;
    if (p == n) {
        for (uint32_t k = 0; k < n; k++)
            if (m[k].c) return false;
        return true; /* nothing shifts: every pair meets */
    }
    for (uint32_t q = p + 1; q < n; q++) {
        int64_t det = m[q].sa * m[p].sb - m[p].sa * m[q].sb;
        if (!det) continue;
        int64_t num = m[q].c * m[p].sb - m[p].c * m[q].sb;
        if (num % det) return false;
        int64_t a = num / det;
        return a >= 0 && a < na && meet_at(m, n, a, nb);
    }
    bool free_a = true;
    for (uint32_t k = 0; k < n; k++) free_a &= !m[k].sa;
    if (free_a) return meet_at(m, n, 0, nb);
    for (int64_t a = 0; a < na; a++)
        if (meet_at(m, n, a, nb)) return true;
    return false;
}

bool sys_loops_may_meet(const SysLoop *la, const SysLoop *lb) {
    if (la->ndim != 1 || lb->ndim != 1) return true; /* (value loops are one-dimensional) */
    const Expr *sa[PROBE_MAX], *sb[PROBE_MAX];
    Meet m[PROBE_MAX];
    uint32_t top = 0, n = 0, steps = 0;
    sa[top] = la->res, sb[top++] = lb->res;
    while (top) {
        const Expr *a = sa[--top], *b = sb[top];
        if (++steps > PROBE_MAX) return true; /* large: taken to meet */
        if (a->kind != b->kind || a->fn != b->fn || a->nargs != b->nargs) return false;
        if (a->kind == EXPR_Y || a->kind == EXPR_YP || a->kind == EXPR_P) {
            if (n == PROBE_MAX) return true;
            m[n++] = (Meet){leaf_stride(la, a), leaf_stride(lb, b), (int64_t)b->index - (int64_t)a->index};
            continue;
        }
        if (!a->nargs) {
            if (a != b) return false;  /* constants, time: the same node */
            continue;
        }
        if (a->kind == EXPR_CONST) return a == b;
        for (int i = 0; i < a->nargs; i++) {
            if (top == PROBE_MAX) return true;
            sa[top] = a->args[i], sb[top++] = b->args[i];
        }
    }
    return meet_solvable(m, n, la->count, lb->count);
}
