/*
 * matching.c -- bipartite matching of equations to unknowns.
 *
 * st_match: Hopcroft & Karp, "An n^{5/2} algorithm for maximum matchings
 * in bipartite graphs" (SIAM J. Comput. 2(4), 1973): phases of one BFS that
 * layers the graph from the free equations and one DFS that augments along
 * vertex-disjoint shortest paths; O(E sqrt(V)).  A greedy pass first
 * matches every equation that has a free unknown (most equations of an
 * acausal model), so the phases only repair what is left.  Both searches
 * use explicit stacks: a million-equation chain cannot overflow the C stack.
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
    if (t->sv.len > t->assign_cap) {
        uint32_t cap = t->sv.len * 2 + 16;
        int32_t *a = ARENA_ARRAY(t->arena, int32_t, cap);
        memset(a, 0xff, sizeof *a * cap);
        if (t->assign) memcpy(a, t->assign, sizeof *a * t->assign_cap);
        t->assign = a;
        t->assign_cap = cap;
    }
    if (t->eq.len > t->match_cap) {
        uint32_t cap = t->eq.len * 2 + 16;
        int32_t *a = ARENA_ARRAY(t->arena, int32_t, cap);
        memset(a, 0xff, sizeof *a * cap);
        if (t->match) memcpy(a, t->match, sizeof *a * t->match_cap);
        t->match = a;
        t->match_cap = cap;
    }
}

typedef struct {
    St *t;
    StEqFilter use_eq;
    StVarFilter use_var;
    uint32_t *dist;    /* eq -> BFS layer, INF = unreachable */
    uint32_t *it;      /* eq -> DFS position in inc */
    uint32_t *queue;   /* BFS queue, reused as DFS stack */
} Hk;

#define INF UINT32_MAX

static void greedy(Hk *h) {
    St *t = h->t;
    for (uint32_t e = 0; e < t->eq.len; e++) {
        if (t->match[e] >= 0 || (h->use_eq && !h->use_eq(t, e))) continue;
        SEq *q = &t->eq.data[e];
        for (uint32_t k = 0; k < q->ninc; k++) {
            uint32_t v = q->inc[k];
            if (t->assign[v] < 0 && h->use_var(t, v)) {
                t->assign[v] = (int32_t)e;
                t->match[e] = (int32_t)v;
                break;
            }
        }
    }
}

/* layers from the free equations; true if some free unknown is reachable */
static bool bfs(Hk *h) {
    St *t = h->t;
    uint32_t head = 0, tail = 0;
    bool found = false;
    for (uint32_t e = 0; e < t->eq.len; e++) {
        h->dist[e] = INF;
        if (t->match[e] < 0 && (!h->use_eq || h->use_eq(t, e))) {
            h->dist[e] = 0;
            h->queue[tail++] = e;
        }
    }
    while (head < tail) {
        uint32_t e = h->queue[head++];
        SEq *q = &t->eq.data[e];
        for (uint32_t k = 0; k < q->ninc; k++) {
            uint32_t v = q->inc[k];
            if (!h->use_var(t, v)) continue;
            int32_t e2 = t->assign[v];
            if (e2 < 0) found = true;
            else if (h->dist[e2] == INF) {
                h->dist[e2] = h->dist[e] + 1;
                h->queue[tail++] = (uint32_t)e2;
            }
        }
    }
    return found;
}

/* flip the path held on the stack: each equation takes its current unknown */
static void flip(Hk *h, uint32_t *stack, uint32_t n) {
    St *t = h->t;
    for (uint32_t i = n; i-- > 0;) {
        uint32_t e = stack[i];
        uint32_t v = t->eq.data[e].inc[h->it[e]];
        t->assign[v] = (int32_t)e;
        t->match[e] = (int32_t)v;
    }
}

/* iterative DFS along the layers from free equation `root` */
static bool dfs(Hk *h, uint32_t root) {
    St *t = h->t;
    uint32_t *stack = h->queue, n = 0;
    stack[n++] = root;
    while (n) {
        uint32_t e = stack[n - 1];
        SEq *q = &t->eq.data[e];
        bool pushed = false;
        for (; h->it[e] < q->ninc && !pushed; h->it[e] += !pushed) {
            uint32_t v = q->inc[h->it[e]];
            if (!h->use_var(t, v)) continue;
            int32_t e2 = t->assign[v];
            if (e2 < 0) { flip(h, stack, n); return true; }
            if (h->dist[e2] == h->dist[e] + 1) { stack[n++] = (uint32_t)e2; pushed = true; }
        }
        if (pushed) continue;
        h->dist[e] = INF; /* dead end: never visit again in this phase */
        n--;
        if (n) h->it[stack[n - 1]]++;
    }
    return false;
}

uint32_t st_match(St *t, StEqFilter use_eq, StVarFilter use_var) {
    st_grow_match(t);
    uint32_t ne = t->eq.len;
    Hk h = {t, use_eq, use_var, ARENA_ARRAY(t->arena, uint32_t, ne + 1),
            ARENA_ARRAY(t->arena, uint32_t, ne + 1), ARENA_ARRAY(t->arena, uint32_t, ne + 1)};
    greedy(&h);
    while (bfs(&h)) {
        memset(h.it, 0, sizeof *h.it * ne);
        uint32_t *free_eqs = ARENA_ARRAY(t->arena, uint32_t, ne + 1), nf = 0;
        for (uint32_t e = 0; e < ne; e++)
            if (h.dist[e] == 0) free_eqs[nf++] = e;
        bool any = false;
        for (uint32_t i = 0; i < nf; i++) any |= dfs(&h, free_eqs[i]);
        if (!any) break;
    }
    uint32_t matched = 0;
    for (uint32_t e = 0; e < ne; e++) matched += t->match[e] >= 0;
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
