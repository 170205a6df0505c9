/*
 * initblt.c -- block lower triangular form of the initialization system.
 *
 * Input: the square initialization system of the System (init_n rows,
 * the CSC pattern init_colptr/init_rowidx) and the matching row -> z that
 * selected it (init.c).  Output: System.init_blocks, the strongly connected
 * components of the graph "row r uses unknown z, which row m(z) determines"
 * in dependency order, each with its rows and their matched unknowns.  The
 * runtime solves them one after the other (runtime/initblock.c), each by a
 * small Newton iteration of its own, instead of the whole system at once.
 *
 * Tarjan, "Depth-first search and linear graph algorithms" (SIAM J.
 * Comput. 1(2), 1972), iterative (explicit stack: a long chain cannot
 * overflow the C stack); a component is complete when its root is popped,
 * and every component it depends on is complete before it.  O(n + nnz).
 */
#include "structure_internal.h"

#include <string.h>

typedef struct {
    const StGraph *g;
    uint32_t *index, *low; /* DFS number (0 = unvisited), lowest reachable on the stack */
    uint32_t *stack, sp;   /* Tarjan's stack of open nodes */
    uint32_t *path, *pos;  /* the DFS path and the next edge of each node on it */
    bool *on;
    uint32_t next;
    uint32_t *order, norder, *ptr, nscc; /* output */
} Scc;

static void close_component(Scc *s, uint32_t root) {
    uint32_t x;
    do {
        x = s->stack[--s->sp];
        s->on[x] = false;
        s->order[s->norder++] = x;
    } while (x != root);
    s->ptr[++s->nscc] = s->norder;
}

static void visit(Scc *s, uint32_t v) {
    s->index[v] = s->low[v] = ++s->next;
    s->stack[s->sp++] = v;
    s->on[v] = true;
}

static void dfs(Scc *s, uint32_t root) {
    uint32_t depth = 0;
    s->path[depth] = root;
    s->pos[depth++] = s->g->ptr[root];
    visit(s, root);
    while (depth) {
        uint32_t v = s->path[depth - 1];
        if (s->pos[depth - 1] < s->g->ptr[v + 1]) {
            uint32_t w = s->g->adj[s->pos[depth - 1]++];
            if (!s->index[w]) {
                visit(s, w);
                s->path[depth] = w;
                s->pos[depth++] = s->g->ptr[w];
            } else if (s->on[w] && s->index[w] < s->low[v])
                s->low[v] = s->index[w];
            continue;
        }
        if (s->low[v] == s->index[v]) close_component(s, v);
        if (--depth && s->low[v] < s->low[s->path[depth - 1]]) s->low[s->path[depth - 1]] = s->low[v];
    }
}

/* Strongly connected components of g (nodes = rows, adj = successors),
 * successors first: order[ptr[k] .. ptr[k+1]) is component k.  Returns
 * their number. */
uint32_t st_scc(Arena *a, const StGraph *g, uint32_t *order, uint32_t *ptr) {
    uint32_t n = g->nrows;
    Scc s = {.g = g, .order = order, .ptr = ptr};
    s.index = ARENA_ARRAY(a, uint32_t, n + 1);
    s.low = ARENA_ARRAY(a, uint32_t, n + 1);
    s.stack = ARENA_ARRAY(a, uint32_t, n + 1);
    s.path = ARENA_ARRAY(a, uint32_t, n + 1);
    s.pos = ARENA_ARRAY(a, uint32_t, n + 1);
    s.on = ARENA_ARRAY(a, bool, n + 1);
    ptr[0] = 0;
    for (uint32_t v = 0; v < n; v++)
        if (!s.index[v]) dfs(&s, v);
    return s.nscc;
}

/* The init system's blocks from the matching rz (row -> z). */
void st_init_blocks(St *t, const int32_t *rz) {
    System *s = t->s;
    uint32_t n = s->init_n, nnz = s->init_nnz;
    int32_t *zr = ARENA_ARRAY(t->arena, int32_t, n + 1); /* z -> its row */
    for (uint32_t r = 0; r < n; r++) zr[rz[r]] = (int32_t)r;
    /* row -> the rows that determine its unknowns (CSC transposed) */
    StGraph g = {n, n, ARENA_ARRAY(t->arena, uint32_t, n + 1), ARENA_ARRAY(t->arena, uint32_t, nnz + 1)};
    for (uint32_t k = 0; k < nnz; k++) g.ptr[s->init_rowidx[k] + 1]++;
    for (uint32_t r = 0; r < n; r++) g.ptr[r + 1] += g.ptr[r];
    uint32_t *fill = ARENA_ARRAY(t->arena, uint32_t, n + 1);
    memcpy(fill, g.ptr, sizeof *fill * n);
    for (uint32_t z = 0; z < n; z++)
        for (int32_t k = s->init_colptr[z]; k < s->init_colptr[z + 1]; k++)
            g.adj[fill[s->init_rowidx[k]]++] = (uint32_t)zr[z];
    s->init_block_ptr = ARENA_ARRAY(t->arena, uint32_t, n + 1);
    s->init_block_rows = ARENA_ARRAY(t->arena, uint32_t, n + 1);
    s->init_block_cols = ARENA_ARRAY(t->arena, uint32_t, n + 1);
    s->init_nblocks = st_scc(t->arena, &g, s->init_block_rows, s->init_block_ptr);
    for (uint32_t i = 0; i < n; i++) s->init_block_cols[i] = (uint32_t)rz[s->init_block_rows[i]];
}
