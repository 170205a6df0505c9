/*
 * events.c -- the System's events (system.h): relations on continuous
 * values become events with a zero-crossing function and a mode leaf.
 *
 * A relation is a comparison a < b, a <= b, a > b, a >= b, or sign(a)
 * (a > 0 ? 1 : -1 between events), in the lowered residuals, outputs or
 * assertions, whose operands depend on y, y' or time.  Relations on the
 * same pair of operands (g = a - b or b - a: hash-consed, so the same
 * pointer) share one event k:
 *   zc[k]    = g, with the relations inside g replaced in turn;
 *   resid, out: a relation that holds when g > 0 becomes EXPR_MODE(k), one
 *            that holds when g < 0 !EXPR_MODE(k), sign(a) an ifelse of
 *            those; at g == 0 the mode decides (frozen).  Between
 *            events the integrator sees one smooth branch (no chattering
 *            inside a step), the branch changes where the runtime located a
 *            crossing of zc[k];
 *   assertions keep their comparisons (checked on the current values) but
 *            their relations are events too, so the integrator stops where
 *            one turns false.
 * Codegen emits EXPR_MODE(k) as a load of the mode slot the runtime keeps
 * (runtime/dyad_model.h `nmodes`); nothing is matched again later.
 * zc_names[k] is the relation as the modeler wrote it with its location,
 * found through St.rel_src (structure.c: noted while translating the
 * equations, passed on by every rewrite after).
 *
 * The states of state sets (stateset.c) are the first events, relations
 * follow: their modes were created with the set equations, before this.
 *
 * Runs after the residuals, outputs and assertions are lowered and before
 * the Jacobian is derived (the derivative of a mode is 0).  O(total DAG
 * size): every node is visited once per pass (dynamic marks memoized, in
 * a byte per node id).
 */
#include "structure_internal.h"

#include <string.h>

/* per node id (dense: ids are creation order), a byte of marks instead of
 * hash maps keyed by id -- the walks touch every node of the residuals,
 * and a table of them cost a cache miss per node */
enum { M_SEEN = 1, M_DYN_KNOWN = 2, M_DYN = 4 };

typedef struct {
    St *t;
    uint8_t *mark;     /* node id -> M_* bits (M_DYN: depends on Y, YP or TIME) */
    uint32_t nmark;    /* its length */
    HashMap index;     /* id of g -> event k + 1 */
    ExprVec zc;        /* g of each event, in order of discovery */
    ExprVec rel;       /* first relation node of each event (its name) */
    ExprVec st;        /* collection: the DFS stack, reused for every root */
} Ev;

/* the marks of node id (grown when a node is newer than the array) */
static uint8_t *mark(Ev *v, uint32_t id) {
    if (id >= v->nmark) {
        uint32_t n = expr_count(v->t->c) + 1;
        if (n <= id) n = id + 1;
        v->mark = arena_realloc(v->t->arena, v->mark, v->nmark, n);
        v->nmark = n;
    }
    return &v->mark[id];
}

static bool is_cmp(const Expr *e) {
    return e->kind == EXPR_LT || e->kind == EXPR_LE || e->kind == EXPR_GT || e->kind == EXPR_GE;
}

static bool is_sign(const Expr *e) { return e->kind == EXPR_CALL && e->fn == FN_SIGN; }

/* Does e depend on Y, YP or TIME?  Memoized post-order over e. */
static bool dynamic(Ev *v, Expr *root) {
    if (*mark(v, root->id) & M_DYN_KNOWN) return *mark(v, root->id) & M_DYN;
    Arena *a = v->t->arena;
    ExprVec st = {0};
    vec_push(a, &st, root);
    while (st.len) {
        Expr *e = st.data[st.len - 1];
        if (*mark(v, e->id) & M_DYN_KNOWN) { st.len--; continue; }
        bool ready = true, yes = e->kind == EXPR_Y || e->kind == EXPR_YP || e->kind == EXPR_TIME;
        for (int i = 0; i < e->nargs; i++) {
            uint8_t d = *mark(v, e->args[i]->id);
            if (!(d & M_DYN_KNOWN)) { vec_push(a, &st, e->args[i]); ready = false; }
            yes |= (d & M_DYN) != 0;
        }
        if (!ready) continue;
        *mark(v, e->id) |= (uint8_t)(M_DYN_KNOWN | (yes ? M_DYN : 0));
        st.len--;
    }
    vec_release(a, &st);
    return *mark(v, root->id) & M_DYN;
}

/* g of a relation node, or NULL when e is no relation on dynamic values.
 * Of a - b and b - a (exact negatives in IEEE arithmetic) g is the one
 * first in the canonical order (expr_cmp_canon), so `x > y`, `x < y`, `y >= x`, ... share one event;
 * *pos tells whether the relation holds when g > 0 (else when g < 0). */
static Expr *relation_g(Ev *v, Expr *e, bool *pos) {
    Expr *a, *b;
    if (is_cmp(e)) a = e->args[0], b = e->args[1];
    else if (is_sign(e)) a = e->args[0], b = expr_const(v->t->c, 0); /* sign(a) = a > 0 ? 1 : -1 */
    else return NULL;
    if (!dynamic(v, e)) return NULL;
    Expr *ab = expr_sub(v->t->c, a, b), *ba = expr_sub(v->t->c, b, a);
    Expr *g = expr_cmp_canon(ab, ba) < 0 ? ab : ba;
    bool greater = e->kind == EXPR_GT || e->kind == EXPR_GE || is_sign(e);
    *pos = (g == ab) == greater;
    return g;
}

/* Every distinct relation below root, in DFS pre-order (nodes visited once
 * across all roots), gets its event. */
static void collect(Ev *v, Expr *root) {
    if (!root) return; /* a row of a loop item: its template holds no relation (runs.c) */
    Arena *a = v->t->arena;
    ExprVec *st = &v->st;
    st->len = 0;
    vec_push(a, st, root);
    while (st->len) {
        Expr *e = st->data[--st->len];
        if (expr_is_leaf(e) || (*mark(v, e->id) & M_SEEN)) continue;
        *mark(v, e->id) |= M_SEEN;
        bool pos;
        Expr *g = relation_g(v, e, &pos);
        if (g && !hmap_get(&v->index, g->id)) {
            vec_push(a, &v->zc, g);
            vec_push(a, &v->rel, e);
            hmap_put(a, &v->index, g->id, (void *)(uintptr_t)v->zc.len);
        }
        for (int i = e->nargs; i-- > 0;) vec_push(a, st, e->args[i]);
    }
}

/* expr_replace callback: a relation -> its mode expression */
static Expr *to_mode(void *ud, Expr *e) {
    Ev *v = ud;
    if (expr_is_leaf(e)) return e;
    bool pos;
    Expr *g = relation_g(v, e, &pos);
    if (!g) return NULL;
    uint32_t k = (uint32_t)(uintptr_t)hmap_get(&v->index, g->id) - 1;
    ExprCtx *c = v->t->c;
    Expr *m = expr_leaf(c, EXPR_MODE, v->t->nset_modes + k);
    if (!pos) m = expr_not(c, m);
    if (is_sign(e)) return expr_ifelse(c, m, expr_const(c, 1), expr_const(c, -1));
    return m;
}

/* "v > 0 (friction.dyad:5)": the relation as written, else as lowered */
static const char *relation_name(Ev *v, Expr *rel) {
    St *t = v->t;
    const StRelSrc *src = hmap_get(&t->rel_src, rel->id);
    if (src) return st_expr_text(t, src->flat, NULL, src->span);
    return st_expr_text(t, rel, t->s, (Span){0});
}

void struct_events(St *t) {
    System *s = t->s;
    Ev v = {.t = t};
    for (uint32_t r = 0; r < s->ny; r++) collect(&v, s->resid[r]);
    for (uint32_t o = 0; o < s->nout; o++) collect(&v, s->out[o]);
    for (uint32_t a = 0; a < s->nassert; a++) collect(&v, s->assert_cond[a]);
    vec_release(t->arena, &v.st);
    /* the states of state sets first (their modes exist already), then the
     * relations */
    uint32_t ns = t->nset_modes, nrel = v.zc.len;
    s->nz = ns + nrel;
    s->zc = ARENA_ARRAY(t->arena, Expr *, s->nz + 1);
    s->zc_kind = ARENA_ARRAY(t->arena, uint8_t, s->nz + 1);
    s->zc_names = ARENA_ARRAY(t->arena, const char *, s->nz + 1);
    st_set_events(t, s->zc, s->zc_kind, s->zc_names);
    for (uint32_t k = 0; k < nrel; k++) {
        s->zc[ns + k] = v.zc.data[k];
        s->zc_kind[ns + k] = SYS_EV_RELATION;
        s->zc_names[ns + k] = relation_name(&v, v.rel.data[k]);
    }
    if (nrel == 0) {
        arena_release(t->arena, v.mark, v.nmark);
        return;
    }
    /* one rewrite of everything that reads modes: shared nodes once */
    uint32_t n = nrel + s->ny + s->nout;
    Expr **all = ARENA_ARRAY(t->arena, Expr *, n);
    memcpy(all, s->zc + ns, sizeof *all * nrel);
    memcpy(all + nrel, s->resid, sizeof *all * s->ny);
    memcpy(all + nrel + s->ny, s->out, sizeof *all * s->nout);
    for (uint32_t r = 0; r < s->ny + s->nout; r++) /* rows and columns of loop items (NULL) stay so */
        if (!all[nrel + r]) all[nrel + r] = expr_const(t->c, 0);
    expr_replace(t->c, all, n, to_mode, &v);
    memcpy(s->zc + ns, all, sizeof *all * nrel);
    for (uint32_t r = 0; r < s->ny; r++)
        if (s->resid[r]) s->resid[r] = all[nrel + r];
    for (uint32_t o = 0; o < s->nout; o++)
        if (s->out[o]) s->out[o] = all[nrel + s->ny + o];
    arena_release(t->arena, all, sizeof *all * n);
    arena_release(t->arena, v.mark, v.nmark);
    hmap_release(t->arena, &v.index);
}
