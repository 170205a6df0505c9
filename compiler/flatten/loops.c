/*
 * loops.c -- orientation potentials and kinematic loops.
 *
 * A connector potential that is a square matrix (Frame3D.R, 3x3) is
 * overdetermined: its n*n entries carry n(n-1)/2 degrees of freedom.  Such
 * a matrix must be computed by exactly one component per connection set
 * (the world, a joint from its other frame, a body with orientation
 * states): that component writes an equation with the matrix entries bare
 * on one side (`RotationMatrix(frame_b.R) = absolute_rotation(frame_a,
 * ...)`), and the matrices of other sets on the other side are where it
 * computes them from.  Dyad's way to close a kinematic loop is explicit:
 * one joint of the loop is the cut (`iscut = true`) and relates the two
 * orientations by three residuals instead of a defining equation.
 *
 * So the pass: (1) unites the connection sets of every such matrix (the
 * sets of its first entry stand for the whole matrix); (2) finds the
 * defining equations and, per set, the first component that defines it
 * and the set it is defined from (a tree towards the root); (3) a second
 * component defining the same set is an error.  Whether it closes a loop
 * is told by a union-find (Tarjan) over the sets plus a ground node, with
 * an edge per defining component between the set it defines and the set
 * it reads (ground, for a root): if the edge joins two sets already
 * connected, it is a loop without a cut, and the error names both
 * components and the chains from each up to their common ancestor; if
 * not, the chain is a tree written against its root (a joint computing
 * the frame its root side already has), and the error says which
 * component to turn (`rooted`).  (4) counts the top-level connector matrices that
 * the component does not define itself: for the balance rule they carry
 * only n(n-1)/2 unknowns (FlatModel.redundant, Modelica's rule for
 * overdetermined connectors).
 *
 * Cost: linear in the equations (leaves of defining equations only).
 */
#include "flatten_internal.h"

#include <string.h>

typedef struct {
    Flattener *F;
    uint32_t *uf;          /* over flat variables: the first entry of each matrix */
    uint32_t *def_count;   /* per set root: defining components seen */
    const char **def_by;   /* per set root: the first one (instance path) */
    Span *def_span;        /* where it is declared (else its equation) */
    uint32_t *parent;      /* per set root: the set it is computed from, or NO_VAR */
    uint32_t *tree;        /* union-find over set roots + a ground node (nkeyvars): sets joined by definitions */
    const char *last_origin;
    uint32_t last_set;
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

static void note_chain(Loops *L, uint32_t s, uint32_t stop) {
    for (uint32_t guard = 0; s != NO_VAR && s != stop && guard < 10000; guard++) {
        diag_note(L->def_span[s], "`%s` computes the orientation of `%s`", L->def_by[s], frame_name(L, s));
        s = L->parent[s];
    }
}

/* the common ancestor of sets a and b in the tree of first definitions */
static uint32_t common_ancestor(Loops *L, uint32_t a, uint32_t b) {
    uint32_t n = L->F->cs.nkeyvars;
    unsigned char *seen = ARENA_ARRAY(L->F->arena, unsigned char, n + 1);
    for (uint32_t s = a, guard = 0; s != NO_VAR && guard < n; s = L->parent[s], guard++) seen[s] = 1;
    for (uint32_t s = b, guard = 0; s != NO_VAR && guard < n; s = L->parent[s], guard++)
        if (seen[s]) return s;
    return NO_VAR;
}

static void report_loop(Loops *L, uint32_t set, uint32_t from, const char *by, Span at) {
    diag_error(at, "kinematic loop without a cut: the orientation of `%s` is computed twice, by `%s` and by `%s`; "
                   "set `iscut = true` on one joint of the loop",
               frame_name(L, set), L->def_by[set], by);
    uint32_t top = from == NO_VAR ? NO_VAR : common_ancestor(L, set, from);
    note_chain(L, set, top);
    if (from != NO_VAR) {
        diag_note(at, "`%s` computes it from `%s`", by, frame_name(L, from));
        note_chain(L, from, top);
    }
}

/* a tree written against its root: `by` computes `set`, which `def_by`
 * has computed already, from `from`, which nothing connects to `set` */
static void report_against_root(Loops *L, uint32_t set, uint32_t from, const char *by, Span at) {
    diag_error(at, "the orientation of `%s` is computed twice, by `%s` and by `%s`, and they close no loop: the "
                   "kinematic tree is written against its root at `%s`; let `%s` compute the orientation of `%s` "
                   "from `%s` instead (a joint's `rooted = RootedFrame.FrameB()`)",
               frame_name(L, set), L->def_by[set], by, by, by, frame_name(L, from), frame_name(L, set));
    note_chain(L, set, NO_VAR);
}

/* joins the sets a and b (NO_VAR: ground) in the forest of definitions;
 * false when they were joined already (the definition closes a loop) */
static bool join(Loops *L, uint32_t a, uint32_t b) {
    uint32_t ra = lf(L->tree, a), rb = lf(L->tree, b == NO_VAR ? L->F->cs.nkeyvars : b);
    if (ra == rb) return false;
    L->tree[ra] = rb;
    return true;
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
    if (L->last_set == set && L->last_origin == q->origin) return; /* the same definition, next entry */
    L->last_set = set;
    L->last_origin = q->origin;
    uint32_t from = source_set(L, other, set);
    const char *by = q->origin[0] ? q->origin : L->F->m->name;
    if (L->def_count[set] == 0) {
        L->def_count[set] = 1;
        L->def_by[set] = by;
        L->def_span[set] = definer_span(L, bare->index, q);
        L->parent[set] = from;
        join(L, set, from);
    } else if (strcmp(L->def_by[set], by) != 0 && L->def_count[set]++ == 1) {
        if (!join(L, set, from) || from == NO_VAR)
            report_loop(L, set, from, by, definer_span(L, bare->index, q));
        else
            report_against_root(L, set, from, by, definer_span(L, bare->index, q));
    }
}

/* top-level connector matrices nobody in the component computes: their
 * entries beyond the degrees of freedom are given from outside */
static uint32_t redundant_entries(Loops *L) {
    FlatModel *m = L->F->m;
    uint32_t r = 0;
    for (uint32_t v = 0; v < L->F->cs.nkeyvars; v++) {
        if (matrix_of(L->F, v) != v || !m->vars.data[v].top_conn || L->def_count[lf(L->uf, v)]) continue;
        uint32_t n = L->F->var_elems.data[v]->dims[0];
        r += n * n - n * (n - 1) / 2;
    }
    return r;
}

void flatten_orientation_loops(Flattener *F) {
    uint32_t n = F->cs.nkeyvars;
    bool any = false;
    for (uint32_t v = 0; v < n && !any; v++) any = matrix_of(F, v) == v;
    if (!any) return;
    flat_scalarize(F->m); /* the defining equations are read per scalar */
    Loops L = {F, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NO_VAR};
    L.uf = ARENA_ARRAY(F->arena, uint32_t, n);
    L.def_count = ARENA_ARRAY(F->arena, uint32_t, n);
    L.def_by = ARENA_ARRAY(F->arena, const char *, n);
    L.def_span = ARENA_ARRAY(F->arena, Span, n);
    L.parent = ARENA_ARRAY(F->arena, uint32_t, n);
    L.tree = ARENA_ARRAY(F->arena, uint32_t, n + 1);
    for (uint32_t v = 0; v < n; v++) {
        L.uf[v] = v;
        L.parent[v] = NO_VAR;
    }
    for (uint32_t v = 0; v <= n; v++) L.tree[v] = v;
    unite_sets(&L);
    for (uint32_t i = 0; i < F->m->eqs.len; i++)
        if (flat_eq_is_regular(F->m->eqs.data[i].kind)) defining(&L, &F->m->eqs.data[i]);
    F->m->redundant = redundant_entries(&L);
}
