/*
 * matching.c -- bipartite matching of equations to unknowns.
 *
 * st_bip_match / st_match: Hopcroft & Karp, "An n^{5/2} algorithm for maximum matchings
 * in bipartite graphs" (SIAM J. Comput. 2(4), 1973): phases of one BFS that
 * layers the graph from the free equations and one DFS that augments along
 * vertex-disjoint shortest paths; O(E sqrt(V)).  A greedy pass first
 * matches every equation that has a free unknown (most equations of an
 * acausal model), so the phases only repair what is left.  Both searches
 * use explicit stacks: a million-equation chain cannot overflow the C stack.
 *
 * st_bip_extend continues from a given matching (the initialization
 * system matches its rows by priority, each class extending the last).
 *
 * st_augment: one augmenting-path search from one equation with the
 * coloring Pantelides' algorithm needs (every visited equation and unknown
 * stays marked, so the caller sees the structurally singular subset when
 * no path exists; the colored equations and unknowns are also listed in
 * ceq/cvar so the caller can clear the markers).  O(E) per call.
 *
 * Invariant: t->match[e] == v  <=>  t->assign[v] == e.
 */
#include "structure_internal.h"

#include <string.h>

void st_grow_match(St *t) {
    if (!t->assign || t->sv.len > t->assign_cap) { /* never NULL, even for no variables */
        uint32_t cap = t->sv.len * 2 + 16;
        int32_t *a = ARENA_ARRAY(t->arena, int32_t, cap);
        memset(a, 0xff, sizeof *a * cap);
        if (t->assign) memcpy(a, t->assign, sizeof *a * t->assign_cap);
        t->assign = a;
        t->assign_cap = cap;
    }
    if (!t->match || t->eq.len > t->match_cap) {
        uint32_t cap = t->eq.len * 2 + 16;
        int32_t *a = ARENA_ARRAY(t->arena, int32_t, cap);
        memset(a, 0xff, sizeof *a * cap);
        if (t->match) memcpy(a, t->match, sizeof *a * t->match_cap);
        t->match = a;
        t->match_cap = cap;
    }
}

/* ---------- Hopcroft-Karp on a CSR graph (rows = equations) ---------- */

typedef struct {
    const StGraph *g;
    int32_t *rm, *cm;  /* row -> column, column -> row, -1 = free */
    uint32_t *dist;    /* row -> BFS layer, INF = unreachable */
    uint32_t *it;      /* row -> DFS position in its adjacency */
    uint32_t *queue;   /* BFS queue, reused as DFS stack */
} Hk;

#define INF UINT32_MAX

static void greedy(Hk *h) {
    const StGraph *g = h->g;
    for (uint32_t r = 0; r < g->nrows; r++)
        for (uint32_t k = g->ptr[r]; k < g->ptr[r + 1] && h->rm[r] < 0; k++)
            if (h->cm[g->adj[k]] < 0) {
                h->cm[g->adj[k]] = (int32_t)r;
                h->rm[r] = (int32_t)g->adj[k];
            }
}

/* layers from the free rows; true if some free column is reachable */
static bool bfs(Hk *h) {
    const StGraph *g = h->g;
    uint32_t head = 0, tail = 0;
    bool found = false;
    for (uint32_t r = 0; r < g->nrows; r++) {
        h->dist[r] = INF;
        if (h->rm[r] < 0) { h->dist[r] = 0; h->queue[tail++] = r; }
    }
    while (head < tail) {
        uint32_t r = h->queue[head++];
        for (uint32_t k = g->ptr[r]; k < g->ptr[r + 1]; k++) {
            int32_t r2 = h->cm[g->adj[k]];
            if (r2 < 0) found = true;
            else if (h->dist[r2] == INF) {
                h->dist[r2] = h->dist[r] + 1;
                h->queue[tail++] = (uint32_t)r2;
            }
        }
    }
    return found;
}

/* flip the path held on the stack: each row takes its current column */
static void flip(Hk *h, uint32_t *stack, uint32_t n) {
    for (uint32_t i = n; i-- > 0;) {
        uint32_t r = stack[i], c = h->g->adj[h->g->ptr[r] + h->it[r]];
        h->cm[c] = (int32_t)r;
        h->rm[r] = (int32_t)c;
    }
}

/* iterative DFS along the layers from free row `root` */
static bool dfs(Hk *h, uint32_t root) {
    const StGraph *g = h->g;
    uint32_t *stack = h->queue, n = 0;
    stack[n++] = root;
    while (n) {
        uint32_t r = stack[n - 1], deg = g->ptr[r + 1] - g->ptr[r];
        bool pushed = false;
        for (; h->it[r] < deg && !pushed; h->it[r] += !pushed) {
            int32_t r2 = h->cm[g->adj[g->ptr[r] + h->it[r]]];
            if (r2 < 0) { flip(h, stack, n); return true; }
            if (h->dist[r2] == h->dist[r] + 1) { stack[n++] = (uint32_t)r2; pushed = true; }
        }
        if (pushed) continue;
        h->dist[r] = INF; /* dead end: never visit again in this phase */
        n--;
        if (n) h->it[stack[n - 1]]++;
    }
    return false;
}

uint32_t st_bip_match(Arena *a, const StGraph *g, int32_t *rm, int32_t *cm) {
    if (g->nrows) memset(rm, 0xff, sizeof *rm * g->nrows); /* rm may be NULL when empty */
    if (g->ncols) memset(cm, 0xff, sizeof *cm * g->ncols);
    return st_bip_extend(a, g, rm, cm);
}

/* Hopcroft-Karp from the matching already in rm/cm: augmenting paths only
 * re-pair matched rows, so every row matched before stays matched. */
uint32_t st_bip_extend(Arena *a, const StGraph *g, int32_t *rm, int32_t *cm) {
    uint32_t n = g->nrows + 1;
    Hk h = {g, rm, cm, ARENA_ARRAY(a, uint32_t, n), ARENA_ARRAY(a, uint32_t, n), ARENA_ARRAY(a, uint32_t, n)};
    greedy(&h);
    while (bfs(&h)) {
        memset(h.it, 0, sizeof *h.it * g->nrows);
        bool any = false;
        for (uint32_t r = 0; r < g->nrows; r++)
            if (h.dist[r] == 0) any |= dfs(&h, r);
        if (!any) break;
    }
    uint32_t matched = 0;
    for (uint32_t r = 0; r < g->nrows; r++) matched += rm[r] >= 0;
    arena_release(a, h.dist, sizeof *h.dist * n); /* a million rows: 12 MB left behind per call */
    arena_release(a, h.it, sizeof *h.it * n);
    arena_release(a, h.queue, sizeof *h.queue * n);
    return matched;
}

/* the equations accepted by use_eq and their unknowns accepted by use_var,
 * as a CSR graph over all equation and variable indexes */
uint32_t st_match(St *t, StEqFilter use_eq, StVarFilter use_var) {
    st_grow_match(t);
    StGraph g = {t->eq.len, t->sv.len, ARENA_ARRAY(t->arena, uint32_t, t->eq.len + 1), NULL};
    uint32_t nnz = 0;
    for (uint32_t e = 0; e < t->eq.len; e++) nnz += t->eq.data[e].ninc;
    g.adj = ARENA_ARRAY(t->arena, uint32_t, nnz + 1);
    for (uint32_t e = 0, k = 0; e < t->eq.len; e++) {
        g.ptr[e] = k;
        for (uint32_t i = 0; i < t->eq.data[e].ninc && (!use_eq || use_eq(t, e)); i++)
            if (use_var(t, t->eq.data[e].inc[i])) g.adj[k++] = t->eq.data[e].inc[i];
        g.ptr[e + 1] = k;
    }
    uint32_t matched = st_bip_match(t->arena, &g, t->match, t->assign);
    arena_release(t->arena, g.adj, sizeof *g.adj * ((size_t)nnz + 1));
    arena_release(t->arena, g.ptr, sizeof *g.ptr * ((size_t)t->eq.len + 1));
    return matched;
}

/* Pantelides' AUGMENTPATH(e), iterative; colors stay set in veq/vvar */
bool st_augment(St *t, uint32_t e0, StVarFilter use_var, unsigned char *veq, unsigned char *vvar,
                U32Vec *ceq, U32Vec *cvar) {
    st_grow_match(t);
    U32Vec stack = {0}, pos = {0}; /* equation, position of the unknown being tried */
    vec_push(t->arena, &stack, e0);
    vec_push(t->arena, &pos, 0);
    veq[e0] = 1;
    vec_push(t->arena, ceq, e0);
    SEq *q0 = &t->eq.data[e0];
    for (uint32_t k = 0; k < q0->ninc; k++) { /* lookahead: a free unknown */
        uint32_t v = q0->inc[k];
        if (use_var(t, v) && t->assign[v] < 0) {
            t->assign[v] = (int32_t)e0;
            t->match[e0] = (int32_t)v;
            return true;
        }
    }
    while (stack.len) {
        uint32_t e = stack.data[stack.len - 1];
        SEq *q = &t->eq.data[e];
        uint32_t *p = &pos.data[pos.len - 1];
        bool pushed = false;
        for (; *p < q->ninc && !pushed; (*p) += !pushed) {
            uint32_t v = q->inc[*p];
            if (!use_var(t, v) || vvar[v]) continue;
            vvar[v] = 1;
            vec_push(t->arena, cvar, v);
            int32_t e2 = t->assign[v];
            if (e2 < 0) {
                for (uint32_t i = stack.len; i-- > 0;) { /* flip the path */
                    uint32_t ei = stack.data[i], vi = t->eq.data[ei].inc[pos.data[i]];
                    t->assign[vi] = (int32_t)ei;
                    t->match[ei] = (int32_t)vi;
                }
                return true;
            }
            if (!veq[e2]) {
                veq[e2] = 1;
                vec_push(t->arena, ceq, (uint32_t)e2);
                vec_push(t->arena, &stack, (uint32_t)e2);
                vec_push(t->arena, &pos, 0);
                pushed = true;
            }
        }
        if (pushed) continue;
        stack.len--;
        pos.len--;
        if (pos.len) pos.data[pos.len - 1]++;
    }
    return false;
}
