/*
 * loops.c -- orientation potentials, the spanning tree of the orientation
 * graph, and kinematic loops.
 *
 * A connector potential that is a square matrix (Frame3D.R, 3x3) is
 * overdetermined: its n*n entries carry n(n-1)/2 degrees of freedom.  Such
 * a matrix must be computed by exactly one component per connection set: a
 * root (the world, a fixed frame, a body with orientation states: the
 * entries bare on one side, no other matrix on the other), or an element
 * between two frames that computes one from the other.  The sets (those of
 * each matrix's first entry stand for the whole matrix) are the nodes of
 * the orientation graph (Modelica's virtual connection graph); its edges:
 *   fixed    `RotationMatrix(frame_b.R) = f(frame_a, ...)`: b from a, one
 *            direction only;
 *   equal    `RotationMatrix(frame_b.R) = RotationMatrix(frame_a.R)`: either
 *            side from the other;
 *   rooted   `if rooted(frame_a.R)` (Modelica's Connections.rooted): the
 *            branch `then` computes the other frame from frame_a, the
 *            `else` branch frame_a from it; both were translated, marked
 *            (FlatEq.rooted).
 * The pass builds the spanning forest breadth-first from the roots, in the
 * order of their equations, then from the component's own connector
 * matrices that no root reaches (given from outside when the component is
 * used: Modelica's rule for a checked component).  Every edge is crossed
 * in a direction it allows, away from the root: a chain may be entered at
 * either end.  The tree decides every `if rooted()` (the branch whose
 * frame is on the root side; `then` when no tree edge is its), and the
 * other branch's equations are dropped.  Dyad closes a kinematic loop
 * explicitly: one joint of the loop is the cut (`iscut = true`) and
 * relates the two orientations by three residuals, no edge.  So an edge
 * the tree does not use is an error: between two frames of one tree it
 * closes a loop without a cut (both chains named up to their common
 * ancestor); between two trees it joins two roots; a fixed edge that points at the root side from a frame
 * nothing else reaches is a tree written against its root; edges among
 * frames no root reaches name their components.  Finally the top-level
 * connector matrices that the component does not compute count only their
 * degrees of freedom for the balance rule (FlatModel.redundant).
 *
 * Cost: linear in the equations (leaves of defining equations only) and
 * the edges (breadth-first search over an adjacency array).
 */
#include "flatten_internal.h"

#include <string.h>

typedef enum { EDGE_ROOT, EDGE_FIXED, EDGE_EQUAL, EDGE_ROOTED } EdgeKind;

typedef struct {
    EdgeKind kind;
    uint32_t u, v;         /* sets: v computed from u (ROOT: u = NO_VAR); EQUAL,
                              ROOTED: either way (ROOTED: u is rooted()'s frame) */
    uint32_t rif;          /* ROOTED: index into F->rooted_ifs */
    const char *by;        /* the component */
    Span at;               /* where it is declared */
    bool tree;             /* used by the spanning tree */
} Edge;

typedef struct {           /* what the branches of one `if rooted(a)` compute */
    uint32_t a, b;         /* a: the set of rooted()'s matrix; b: the other (then) */
    uint32_t else_from;    /* the set the else branch computes a from */
    Span at;
    bool bad;              /* a branch computes something else */
    bool take_else;        /* the tree's choice */
} Rif;

#define TOP_ROOT (UINT32_MAX - 1) /* reached_by: a connector matrix given from outside */

typedef struct {
    Flattener *F;
    uint32_t *uf;          /* over flat variables: the first entry of each matrix */
    Vec(Edge) edges;
    Rif *rifs;             /* per `if rooted()` */
    uint32_t *reached_by;  /* per set root: the tree edge, TOP_ROOT, or NO_VAR */
    const char **def_by;   /* per set root: the component computing it (tree) */
    Span *def_span;        /* where it is declared */
    uint32_t *parent;      /* per set root: the set it is computed from, or NO_VAR */
    uint32_t *adj_start, *adj; /* edges incident to each set (CSR) */
    uint32_t *queue, qhead, qtail;
    const char *last_origin; /* the definition being read (its consecutive entries) */
    uint32_t last_set, last_rooted;
} Loops;

static uint32_t lf(uint32_t *uf, uint32_t x) {
    while (uf[x] != x) x = uf[x] = uf[uf[x]];
    return x;
}

/* the first flat variable of the overdetermined matrix v belongs to, or NO_VAR */
static uint32_t matrix_of(Flattener *F, uint32_t v) {
    if (v >= F->cs.nkeyvars) return NO_VAR;
    Elem *e = F->var_elems.data[v];
    bool od = e->kind == ELEM_VAR && e->vkind == VAR_POTENTIAL && e->nd == 2 && e->dims[0] == e->dims[1] &&
              e->dims[0] > 1 && e->owner->is_connector;
    return od ? e->var : NO_VAR;
}

/* the set of a bare matrix entry, or NO_VAR */
static uint32_t set_of(Loops *L, Expr *x) {
    if (x->kind != EXPR_VAR) return NO_VAR;
    uint32_t m = matrix_of(L->F, x->index);
    return m == NO_VAR ? NO_VAR : lf(L->uf, m);
}

/* connection sets of the first entries -> one set per connected matrix */
static void unite_sets(Loops *L) {
    ConnSets *cs = &L->F->cs;
    uint32_t nk = 2 * cs->nkeyvars;
    for (uint32_t k = 0; cs->set_start && k < nk; k++) {
        if (!cs->key_used[k] || lf(cs->uf, k) != k) continue;
        uint32_t lo = cs->set_start[k], hi = lo + cs->set_count[k], first = NO_VAR;
        for (uint32_t i = lo; i < hi; i++) {
            uint32_t v = cs->set_members[i] / 2;
            if (matrix_of(L->F, v) != v) continue;
            if (first == NO_VAR) first = v;
            else L->uf[lf(L->uf, v)] = lf(L->uf, first);
        }
    }
}

/* the other set the defining equation's other side computes from (the
 * first one met), NO_VAR for a root */
static uint32_t source_set(Loops *L, Expr *other, uint32_t self) {
    ExprVec v = {0};
    expr_leaves(L->F->ctx, other, EXPR_VAR, &v);
    for (uint32_t i = 0; i < v.len; i++) {
        uint32_t s = set_of(L, v.data[i]);
        if (s != NO_VAR && s != self) return s;
    }
    return NO_VAR;
}

/* the connector a matrix belongs to, by path (`j4.frame_b`) */
static const char *frame_name(Loops *L, uint32_t v) {
    Inst *c = L->F->var_elems.data[v]->owner;
    return c->path[0] ? c->path : L->F->m->name;
}

/* where the component writing equation q is declared in the flattened
 * model (the user's line); the equation itself when it is the model's own */
static Span definer_span(Loops *L, uint32_t bare_var, const FlatEq *q) {
    Inst *c = L->F->var_elems.data[bare_var]->owner;
    for (; c; c = c->parent)
        if (c->path == q->origin || strcmp(c->path, q->origin) == 0) break;
    while (c && c->parent && c->parent != L->F->top) c = c->parent; /* the model's own component */
    return c && c->elem ? c->elem->decl->span : q->span;
}

/* ---------- the edges, from the defining equations ---------- */

/* one entry of a definition in a branch of `if rooted(a)`: then computes
 * b from a, else a from b (an equality is read in the branch's direction) */
static void rooted_entry(Loops *L, uint32_t mark, uint32_t to, uint32_t from, bool equal, Span at) {
    Rif *r = &L->rifs[(mark - 1) / 2];
    bool then = (mark - 1) % 2 == 0;
    if (r->a == NO_VAR) return; /* rooted() of no orientation matrix: reported */
    if (equal && (then ? to == r->a : from == r->a)) {
        uint32_t t = to;
        to = from;
        from = t;
    }
    if (then) {
        if (r->b == NO_VAR) {
            r->b = to;
            r->at = at;
        }
        r->bad |= from != r->a || to != r->b;
    } else {
        if (r->else_from == NO_VAR) r->else_from = from;
        r->bad |= to != r->a || from != r->else_from;
    }
}

static void add_edge(Loops *L, EdgeKind k, uint32_t u, uint32_t v, uint32_t rif, const char *by, Span at) {
    vec_push(L->F->arena, &L->edges, ((Edge){k, u, v, rif, by, at, false}));
}

static void defining(Loops *L, const FlatEq *q) {
    uint32_t sl = set_of(L, q->lhs), sr = set_of(L, q->rhs), set = sl;
    Expr *other = q->rhs, *bare = q->lhs;
    if (sl == NO_VAR) { /* `x = R[i, j]` defines x; `c = R[i, j]` (c not a variable) defines R */
        if (q->lhs->kind == EXPR_VAR) return;
        set = sr;
        other = q->lhs;
        bare = q->rhs;
    }
    if (set == NO_VAR || sl == sr) return; /* no bare matrix entry, or a connection equation */
    if (L->last_set == set && L->last_origin == q->origin && L->last_rooted == q->rooted) return; /* next entry */
    L->last_set = set;
    L->last_origin = q->origin;
    L->last_rooted = q->rooted;
    bool equal = sl != NO_VAR && sr != NO_VAR;
    uint32_t from = equal ? sr : source_set(L, other, set);
    const char *by = q->origin[0] ? q->origin : L->F->m->name;
    Span at = definer_span(L, bare->index, q);
    if (q->rooted) rooted_entry(L, q->rooted, set, from, equal, at);
    else if (from == NO_VAR) add_edge(L, EDGE_ROOT, NO_VAR, set, 0, by, at);
    else add_edge(L, equal ? EDGE_EQUAL : EDGE_FIXED, from, set, 0, by, at);
}

/* the rooted() frames, and an edge per `if rooted()` whose branches say
 * what it relates */
static void rooted_edges(Loops *L, bool before_equations) {
    Flattener *F = L->F;
    for (uint32_t k = 0; k < F->rooted_ifs.len; k++) {
        RootedIf *ri = &F->rooted_ifs.data[k];
        Rif *r = &L->rifs[k];
        if (before_equations) {
            uint32_t m = matrix_of(F, ri->var);
            *r = (Rif){m == NO_VAR ? NO_VAR : lf(L->uf, m), NO_VAR, NO_VAR, ri->span, false, false};
            if (m == NO_VAR)
                diag_error(ri->span, "`rooted` takes the orientation matrix of a connector (a square potential "
                                     "matrix such as `frame_a.R`)");
            continue;
        }
        if (r->a == NO_VAR) continue;
        if (r->bad || (r->b == NO_VAR) != (r->else_from == NO_VAR) || r->b != r->else_from)
            diag_error(ri->span, "the branches of `if rooted(...)` in `%s` must compute the orientation of one other "
                                 "frame from `%s` (then) and `%s` from that frame (else)",
                       ri->origin, frame_name(L, ri->var), frame_name(L, ri->var));
        else if (r->b != NO_VAR)
            add_edge(L, EDGE_ROOTED, r->a, r->b, k, ri->origin[0] ? ri->origin : F->m->name, r->at);
    }
}

/* ---------- the spanning forest ---------- */

static void adjacency(Loops *L, uint32_t n) {
    L->adj_start = ARENA_ARRAY(L->F->arena, uint32_t, n + 1);
    uint32_t total = 0;
    for (uint32_t e = 0; e < L->edges.len; e++) {
        Edge *x = &L->edges.data[e];
        if (x->kind == EDGE_ROOT) continue;
        L->adj_start[x->u]++;
        L->adj_start[x->v]++;
        total += 2;
    }
    uint32_t sum = 0;
    for (uint32_t s = 0; s <= n; s++) {
        uint32_t c = s < n ? L->adj_start[s] : 0;
        L->adj_start[s] = sum;
        sum += c;
    }
    L->adj = ARENA_ARRAY(L->F->arena, uint32_t, total + 1);
    uint32_t *fill = ARENA_ARRAY(L->F->arena, uint32_t, n + 1);
    for (uint32_t e = 0; e < L->edges.len; e++) {
        Edge *x = &L->edges.data[e];
        if (x->kind == EDGE_ROOT) continue;
        L->adj[L->adj_start[x->u] + fill[x->u]++] = e;
        L->adj[L->adj_start[x->v] + fill[x->v]++] = e;
    }
}

static void reach(Loops *L, uint32_t s, uint32_t by_edge, uint32_t from) {
    L->reached_by[s] = by_edge;
    L->parent[s] = from;
    if (by_edge < L->edges.len) {
        Edge *e = &L->edges.data[by_edge];
        e->tree = true;
        L->def_by[s] = e->by;
        L->def_span[s] = e->at;
    }
    L->queue[L->qtail++] = s;
}

/* breadth-first from the queued sets: each edge crossed away from the root
 * in a direction it allows */
static void grow(Loops *L) {
    while (L->qhead < L->qtail) {
        uint32_t x = L->queue[L->qhead++];
        for (uint32_t i = L->adj_start[x]; i < L->adj_start[x + 1]; i++) {
            Edge *e = &L->edges.data[L->adj[i]];
            uint32_t y = e->u == x ? e->v : e->u;
            if (e->tree || L->reached_by[y] != NO_VAR || (e->kind == EDGE_FIXED && e->u != x)) continue;
            if (e->kind == EDGE_ROOTED) L->rifs[e->rif].take_else = x != e->u;
            reach(L, y, L->adj[i], x);
        }
    }
}

/* the roots in the order of their equations, then the component's own
 * connector matrices no root reaches (those no fixed edge computes first) */
static void span(Loops *L) {
    for (uint32_t e = 0; e < L->edges.len; e++) {
        Edge *x = &L->edges.data[e];
        if (x->kind == EDGE_ROOT && L->reached_by[x->v] == NO_VAR) reach(L, x->v, e, NO_VAR);
    }
    grow(L);
    Flattener *F = L->F;
    unsigned char *fixed_in = ARENA_ARRAY(F->arena, unsigned char, F->cs.nkeyvars + 1);
    for (uint32_t e = 0; e < L->edges.len; e++)
        if (L->edges.data[e].kind == EDGE_FIXED) fixed_in[L->edges.data[e].v] = 1;
    for (int pass = 0; pass < 2; pass++)
        for (uint32_t v = 0; v < F->cs.nkeyvars; v++) {
            if (matrix_of(F, v) != v || !F->m->vars.data[v].top_conn) continue;
            uint32_t s = lf(L->uf, v);
            if (L->reached_by[s] != NO_VAR || (pass == 0 && fixed_in[s])) continue;
            reach(L, s, TOP_ROOT, NO_VAR);
            grow(L);
        }
}

/* ---------- what the tree leaves over ---------- */

static void note_chain(Loops *L, uint32_t s, uint32_t stop) {
    for (uint32_t guard = 0; s != NO_VAR && s != stop && L->def_by[s] && guard < 10000; guard++) {
        diag_note(L->def_span[s], "`%s` computes the orientation of `%s`", L->def_by[s], frame_name(L, s));
        s = L->parent[s];
    }
}

/* the common ancestor of sets a and b in the tree */
static uint32_t common_ancestor(Loops *L, uint32_t a, uint32_t b) {
    uint32_t n = L->F->cs.nkeyvars;
    unsigned char *seen = ARENA_ARRAY(L->F->arena, unsigned char, n + 1);
    for (uint32_t s = a, guard = 0; s != NO_VAR && guard < n; s = L->parent[s], guard++) seen[s] = 1;
    for (uint32_t s = b, guard = 0; s != NO_VAR && guard < n; s = L->parent[s], guard++)
        if (seen[s]) return s;
    return NO_VAR;
}

/* who computes set s in the tree (a connector given from outside: none) */
static const char *definer(Loops *L, uint32_t s) { return L->def_by[s] ? L->def_by[s] : "the user of the component"; }

static void report_loop(Loops *L, uint32_t set, uint32_t from, const char *by, Span at) {
    diag_error(at, "kinematic loop without a cut: the orientation of `%s` is computed twice, by `%s` and by `%s`; "
                   "set `iscut = true` on one joint of the loop",
               frame_name(L, set), definer(L, set), by);
    uint32_t top = from == NO_VAR ? NO_VAR : common_ancestor(L, set, from);
    note_chain(L, set, top);
    if (from != NO_VAR) {
        diag_note(at, "`%s` computes it from `%s`", by, frame_name(L, from));
        note_chain(L, from, top);
    }
}

/* the root of the tree that reached set s */
static uint32_t tree_root(Loops *L, uint32_t s) {
    for (uint32_t guard = 0; L->parent[s] != NO_VAR && guard < L->F->cs.nkeyvars; guard++) s = L->parent[s];
    return s;
}

/* `by` joins two trees (from's, or a root of its own when from is NO_VAR)
 * at set: two roots in one mechanism */
static void report_two_roots(Loops *L, uint32_t set, uint32_t from, const char *by, Span at) {
    uint32_t r1 = tree_root(L, set);
    const char *other = from == NO_VAR ? by : definer(L, tree_root(L, from));
    diag_error(at, "the orientation of `%s` is computed twice, by `%s` and by `%s`: `%s` and `%s` both compute an "
                   "orientation from no other (roots of the kinematic tree) and %s joins their trees; keep one "
                   "root per mechanism (a body connected by joints needs no orientation states), or close the "
                   "loop with a cut joint (`iscut = true`)",
               frame_name(L, set), definer(L, set), by, definer(L, r1), other,
               from == NO_VAR ? "the second one" : arena_printf(L->F->arena, "`%s`", by));
    note_chain(L, set, NO_VAR);
    if (from != NO_VAR) {
        diag_note(at, "`%s` computes it from `%s`", by, frame_name(L, from));
        note_chain(L, from, NO_VAR);
    }
}

/* a fixed edge written against its root: `by` computes `set`, which the
 * tree reaches already, from `from`, which nothing else reaches */
static void report_against_root(Loops *L, uint32_t set, uint32_t from, const char *by, Span at) {
    diag_error(at, "the orientation of `%s` is computed twice, by `%s` and by `%s`, and they close no loop: the "
                   "kinematic tree is written against its root at `%s`, which computes the orientation of `%s` "
                   "from `%s` in that direction only; connect it the other way round (or write its orientation "
                   "relation both ways under `if rooted(...)`)",
               frame_name(L, set), definer(L, set), by, by, frame_name(L, set), frame_name(L, from));
    note_chain(L, set, NO_VAR);
}

/* the sets no root reaches, around set s: one error naming the components
 * that relate them (breadth-first over every edge, either way) */
static void report_unreached(Loops *L, uint32_t s, Span at) {
    const char *names[4];
    uint32_t nnames = 0, more = 0;
    L->qhead = L->qtail = 0;
    L->reached_by[s] = TOP_ROOT;
    L->queue[L->qtail++] = s;
    while (L->qhead < L->qtail) {
        uint32_t x = L->queue[L->qhead++];
        for (uint32_t i = L->adj_start[x]; i < L->adj_start[x + 1]; i++) {
            Edge *e = &L->edges.data[L->adj[i]];
            if (e->tree) continue;
            e->tree = true;
            bool seen = false;
            for (uint32_t k = 0; k < nnames; k++) seen |= strcmp(names[k], e->by) == 0;
            if (!seen && nnames < 4) names[nnames++] = e->by;
            else if (!seen) more++;
            uint32_t y = e->u == x ? e->v : e->u;
            if (L->reached_by[y] != NO_VAR) continue;
            L->reached_by[y] = TOP_ROOT;
            L->queue[L->qtail++] = y;
        }
    }
    char list[512] = "";
    for (uint32_t k = 0; k < nnames; k++)
        snprintf(list + strlen(list), sizeof list - strlen(list), "%s`%s`", k ? ", " : "", names[k]);
    if (more) snprintf(list + strlen(list), sizeof list - strlen(list), " and %u more", more);
    diag_error(at, "no root reaches the orientation of `%s`: %s relate%s it to frames that no World, fixed frame or "
                   "body with orientation states computes, so which way to compute them is not known; connect the "
                   "mechanism to a World (or give one body orientation states)",
               frame_name(L, s), list, nnames + more == 1 ? "s" : "");
}

static bool same_definition(Loops *L, const Edge *e) {
    uint32_t t = L->reached_by[e->v];
    if (t >= L->edges.len) return false;
    const Edge *x = &L->edges.data[t];
    return strcmp(x->by, e->by) == 0 && x->u == e->u;
}

static void leftover_edges(Loops *L) {
    unsigned errors = diag_error_count();
    for (uint32_t i = 0; i < L->edges.len; i++) {
        Edge *e = &L->edges.data[i];
        if (e->tree || same_definition(L, e)) continue;
        bool ru = e->kind == EDGE_ROOT || L->reached_by[e->u] != NO_VAR, rv = L->reached_by[e->v] != NO_VAR;
        if (ru && rv) {
            uint32_t set = e->v, from = e->u;
            if (e->kind != EDGE_FIXED && e->kind != EDGE_ROOT && L->reached_by[set] >= L->edges.len) {
                set = e->u; /* name the frame the tree computes */
                from = e->v;
            }
            if (from == NO_VAR || tree_root(L, set) != tree_root(L, from)) report_two_roots(L, set, from, e->by, e->at);
            else report_loop(L, set, from, e->by, e->at);
        } else if (rv) {
            report_against_root(L, e->v, e->u, e->by, e->at);
        }
    }
    if (diag_error_count() > errors) return;
    for (uint32_t i = 0; i < L->edges.len; i++) {
        Edge *e = &L->edges.data[i];
        if (!e->tree && e->kind != EDGE_ROOT && L->reached_by[e->u] == NO_VAR) report_unreached(L, e->u, e->at);
    }
}

/* ---------- results ---------- */

/* every `if rooted()` keeps the branch the tree chose */
static void drop_branches(Loops *L) {
    FlatModel *m = L->F->m;
    uint32_t w = 0;
    for (uint32_t i = 0; i < m->eqs.len; i++) {
        FlatEq q = m->eqs.data[i];
        if (q.rooted) {
            bool is_else = (q.rooted - 1) % 2 == 1;
            if (is_else != L->rifs[(q.rooted - 1) / 2].take_else) continue;
            q.rooted = 0;
        }
        m->eqs.data[w++] = q;
    }
    m->eqs.len = w;
}

/* top-level connector matrices nobody in the component computes: their
 * entries beyond the degrees of freedom are given from outside */
static uint32_t redundant_entries(Loops *L) {
    FlatModel *m = L->F->m;
    uint32_t r = 0;
    for (uint32_t v = 0; v < L->F->cs.nkeyvars; v++) {
        if (matrix_of(L->F, v) != v || !m->vars.data[v].top_conn || L->reached_by[lf(L->uf, v)] != TOP_ROOT) continue;
        uint32_t n = L->F->var_elems.data[v]->dims[0];
        r += n * n - n * (n - 1) / 2;
    }
    return r;
}

void flatten_orientation_loops(Flattener *F) {
    uint32_t n = F->cs.nkeyvars;
    bool any = F->rooted_ifs.len > 0;
    for (uint32_t v = 0; v < n && !any; v++) any = matrix_of(F, v) == v;
    if (!any) return;
    flat_scalarize(F->m); /* the defining equations are read per scalar */
    Loops L = {.F = F, .last_set = NO_VAR};
    L.uf = ARENA_ARRAY(F->arena, uint32_t, n);
    L.rifs = ARENA_ARRAY(F->arena, Rif, F->rooted_ifs.len + 1);
    L.reached_by = ARENA_ARRAY(F->arena, uint32_t, n + 1);
    L.def_by = ARENA_ARRAY(F->arena, const char *, n + 1);
    L.def_span = ARENA_ARRAY(F->arena, Span, n + 1);
    L.parent = ARENA_ARRAY(F->arena, uint32_t, n + 1);
    L.queue = ARENA_ARRAY(F->arena, uint32_t, n + 1);
    for (uint32_t v = 0; v < n; v++) {
        L.uf[v] = v;
        L.parent[v] = L.reached_by[v] = NO_VAR;
    }
    unite_sets(&L);
    rooted_edges(&L, true);
    for (uint32_t i = 0; i < F->m->eqs.len; i++)
        if (flat_eq_is_regular(F->m->eqs.data[i].kind)) defining(&L, &F->m->eqs.data[i]);
    rooted_edges(&L, false);
    adjacency(&L, n);
    span(&L);
    leftover_edges(&L);
    drop_branches(&L);
    F->m->redundant = redundant_entries(&L);
}
