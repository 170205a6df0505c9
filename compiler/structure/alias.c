/*
 * alias.c -- alias elimination, before anything else sees the equations.
 *
 * An alias equation relates at most two unknowns with coefficients +-1 and
 * a remainder free of unknowns and time:  x = +-y + c  or  x = c, where c is
 * an expression of parameters.  Such equations make up most of an acausal
 * model (every connection gives some).  They are consumed with a weighted
 * union-find: every unknown x is stored as x = sign * root + offset; an
 * equation between two trees links one root under the other (the better
 * representative stays the root, see better(): deterministic); `x = c`
 * binds a whole tree to a value.  An alias
 * equation whose two ends are already in one tree (or a second binding of a
 * bound tree) is not consumed: it stays a regular equation, where the
 * balance and structural checks see it.  One pass over the equations per
 * round (at most 8 rounds), finds with path compression: O(n log n).
 *
 * Eliminated variables keep their output column: alias_value() rebuilds
 * them from their representative.
 */
#include "structure_internal.h"

#include <math.h>

typedef struct {
    unsigned char *has_der; /* variable appears under der() somewhere */
    uint32_t *parent;   /* union-find parent (self = root) */
    double *sign;       /* x = sign * parent + offset */
    Expr **offset;      /* over parameters */
    Expr **bound;       /* root only: the tree's value, or NULL */
    uint32_t *stamp;    /* root -> `clock` when its tree last changed */
    uint32_t clock;     /* number of equations consumed so far */
    U32Vec path;        /* find()'s scratch stack */
    Expr *zero;
    Arena *scratch;     /* the tables above and Pending's: freed when done */
} Alias;

/* root of x with path compression, iterative (an alias chain can be as long
 * as the model); every node on the path ends up expressed in the root */
static uint32_t find(St *t, Alias *a, uint32_t x) {
    if (a->parent[x] == x) return x;
    a->path.len = 0;
    uint32_t r = x;
    for (; a->parent[r] != r; r = a->parent[r]) vec_push(a->scratch, &a->path, r);
    /* from the node next to the root outwards: y = s_y p + o_y, p = s_p r + o_p
     * => y = s_y s_p r + (s_y o_p + o_y) */
    for (uint32_t i = a->path.len; i-- > 0;) {
        uint32_t y = a->path.data[i], p = a->parent[y];
        if (p != r) {
            a->offset[y] = expr_add(t->c, expr_mul(t->c, expr_const(t->c, a->sign[y]), a->offset[p]), a->offset[y]);
            a->sign[y] *= a->sign[p];
        }
        a->parent[y] = r;
    }
    return r;
}

static bool is_unknown(St *t, uint32_t v) { return t->m->vars.data[v].kind == FV_VARIABLE; }

/* x = sx*root + ox; returns root */
static uint32_t rel(St *t, Alias *a, uint32_t x, double *s, Expr **o) {
    uint32_t r = find(t, a, x);
    *s = r == x ? 1 : a->sign[x];
    *o = r == x ? a->zero : a->offset[x];
    return r;
}

/* The residual as  sum k_i x_i + rest  with the x_i unknowns, read off the
 * top of the DAG (sums, negations, products with a constant) without
 * differentiating: O(1) per alias candidate, a bounded walk otherwise. */
typedef struct {
    uint32_t var[2];
    double k[2];
    int n;
    Expr *rest;           /* terms that are not constant * unknown */
    bool ok;
} Lin;

#define LIN_MAX_TERMS 64

static void lin_walk(St *t, Expr *e, double f, Lin *l, int *budget) {
    if (!l->ok || --*budget < 0) { l->ok = false; return; }
    switch ((ExprKind)e->kind) {
    case EXPR_ADD: lin_walk(t, e->args[0], f, l, budget); lin_walk(t, e->args[1], f, l, budget); return;
    case EXPR_NEG: lin_walk(t, e->args[0], -f, l, budget); return;
    case EXPR_MUL:
        if (expr_is_const(e->args[0])) { lin_walk(t, e->args[1], f * e->args[0]->value, l, budget); return; }
        if (expr_is_const(e->args[1])) { lin_walk(t, e->args[0], f * e->args[1]->value, l, budget); return; }
        break;
    case EXPR_VAR:
        if (!is_unknown(t, e->index)) break;
        for (int i = 0; i < l->n; i++)
            if (l->var[i] == e->index) { l->k[i] += f; return; }
        if (l->n == 2) { l->ok = false; return; }
        l->var[l->n] = e->index;
        l->k[l->n++] = f;
        return;
    default: break;
    }
    l->rest = expr_add(t->c, l->rest, expr_mul(t->c, expr_const(t->c, f), e));
}

/* r = cx*x [+ cy*y] + c: returns the number of unknowns (1 or 2), 0 if not an alias */
static int classify(St *t, Expr *r, uint32_t *x, uint32_t *y, double *cx, double *cy, Expr **c) {
    Lin l = {.rest = expr_const(t->c, 0), .ok = true};
    int budget = LIN_MAX_TERMS;
    lin_walk(t, r, 1, &l, &budget);
    if (!l.ok) return 0;
    int n = 0;
    for (int i = 0; i < l.n; i++) {
        if (l.k[i] == 0) continue;
        if (fabs(l.k[i]) != 1) return 0;
        l.var[n] = l.var[i];
        l.k[n++] = l.k[i];
    }
    if (n == 0) return 0;
    ExprVec *leaves = &t->leaves; /* the rest: parameters and constants only */
    leaves->len = 0;
    expr_leaves_any(t->c, l.rest, leaves);
    for (uint32_t i = 0; i < leaves->len; i++) {
        Expr *e = leaves->data[i];
        if (e->kind != EXPR_VAR || is_unknown(t, e->index)) return 0;
    }
    *c = l.rest;
    *x = l.var[0];
    *cx = l.k[0];
    *y = n == 2 ? l.var[1] : 0;
    *cy = n == 2 ? l.k[1] : 0;
    return n;
}

/* consume cx*x + c = 0 */
static bool bind(St *t, Alias *a, uint32_t x, double cx, Expr *c) {
    double s;
    Expr *o;
    uint32_t r = rel(t, a, x, &s, &o);
    if (a->bound[r]) return false;
    /* x = -c/cx = s r + o  =>  r = (-c/cx - o) / s */
    Expr *xv = expr_mul(t->c, expr_const(t->c, -1 / cx), c);
    a->stamp[r] = a->clock + 1;
    a->bound[r] = expr_mul(t->c, expr_const(t->c, 1 / s), expr_sub(t->c, xv, o));
    return true;
}

/* The representative of an alias set, so that states keep their modeler's
 * names: a variable that appears under der() beats one that does not, then
 * the higher statePriority, then the shorter instance path (fewer dots),
 * then the first declared. */
static uint32_t dots(const char *n) {
    uint32_t k = 0;
    for (; *n; n++) k += *n == '.';
    return k;
}

static bool better(St *t, Alias *a, uint32_t x, uint32_t y) {
    FlatVar *vx = &t->m->vars.data[x], *vy = &t->m->vars.data[y];
    if (a->has_der[x] != a->has_der[y]) return a->has_der[x];
    int px = flat_attr(t->m, vx)->state_priority, py = flat_attr(t->m, vy)->state_priority;
    if (px != py) return px > py;
    if (dots(vx->name) != dots(vy->name)) return dots(vx->name) < dots(vy->name);
    return x < y;
}

/* consume cx*x + cy*y + c = 0 */
static bool link(St *t, Alias *a, uint32_t x, double cx, uint32_t y, double cy, Expr *c) {
    double sx, sy;
    Expr *ox, *oy;
    uint32_t rx = rel(t, a, x, &sx, &ox), ry = rel(t, a, y, &sy, &oy);
    if (rx == ry) return false;
    if (a->bound[rx] && a->bound[ry]) return false;
    /* cx (sx rx + ox) + cy (sy ry + oy) + c = 0 => hang the worse root */
    if (better(t, a, rx, ry)) {
        uint32_t tr = rx; rx = ry; ry = tr;
        double ts = sx; sx = sy; sy = ts;
        Expr *to = ox; ox = oy; oy = to;
        double tc = cx; cx = cy; cy = tc;
    }
    /* rx = -(cy sy ry + cy oy + cx ox + c) / (cx sx) */
    double k = -1 / (cx * sx);
    Expr *off = expr_add(t->c, expr_add(t->c, expr_mul(t->c, expr_const(t->c, cy), oy),
                                        expr_mul(t->c, expr_const(t->c, cx), ox)), c);
    a->parent[rx] = ry;
    a->stamp[ry] = a->stamp[rx] = a->clock + 1;
    a->sign[rx] = k * cy * sy;
    a->offset[rx] = expr_mul(t->c, expr_const(t->c, k), off);
    if (a->bound[rx]) { /* move the binding to the new root */
        Expr *v = expr_mul(t->c, expr_const(t->c, 1 / a->sign[rx]), expr_sub(t->c, a->bound[rx], a->offset[rx]));
        a->bound[ry] = v;
        a->bound[rx] = NULL;
    }
    return true;
}

/* an unknown in terms of its tree: sign * root + offset, or the bound value */
typedef struct {
    St *t;
    Alias *a;
} Current;

static Expr *current_value(void *ud, Expr *leaf) {
    Current *cu = ud;
    St *t = cu->t;
    if (leaf->kind != EXPR_VAR || !is_unknown(t, leaf->index)) return leaf;
    double s;
    Expr *o;
    uint32_t r = rel(t, cu->a, leaf->index, &s, &o);
    if (r == leaf->index && !cu->a->bound[r]) return leaf; /* a root: unchanged */
    Expr *base = cu->a->bound[r] ? cu->a->bound[r] : expr_leaf(t->c, EXPR_VAR, r);
    if (s == 1 && o == cu->a->zero) return base;
    return expr_add(t->c, expr_mul(t->c, expr_const(t->c, s), base), o);
}

static void mark_der(St *t, Alias *a) {
    uint32_t var[ST_TMPL_MAX_LEAVES];
    for (uint32_t i = 0; i < t->m->eqs.len; i++) {
        FlatEq *q = &t->m->eqs.data[i];
        if (q->kind != FE_NORMAL) continue;
        const StTmpl *k = st_tmpl(t, q);
        if (k && st_tmpl_leaves(t, k, q->inst, var)) { /* its derivative leaves, on integers */
            for (uint32_t j = 0; j < k->nleaves; j++)
                if (st_tmpl_leaf_kind(k, j) == EXPR_DER) a->has_der[var[j]] = 1;
            continue;
        }
        q = flat_eq_get(t->m, i);
        ExprVec *d = &t->leaves;
        d->len = 0;
        expr_leaves(t->c, q->lhs, EXPR_DER, d);
        expr_leaves(t->c, q->rhs, EXPR_DER, d);
        for (uint32_t k = 0; k < d->len; k++) a->has_der[d->data[k]->index] = 1;
    }
}

/* Guess values of an alias set: the representative's own guess wins; else
 * the first member (declaration order) with a guess gives it, translated
 * through its alias relation.  A member whose guess disagrees with the
 * chosen one gets a warning.  (The flat model is updated in place: the
 * representative carries the set's guess from here on.) */
static void merge_guesses(St *t) {
    FlatModel *m = t->m;
    uint32_t n = m->vars.len;
    uint32_t *from = ARENA_ARRAY(t->arena, uint32_t, n + 1);
    for (uint32_t v = 0; v < n; v++) from[v] = v;
    for (uint32_t v = 0; v < n; v++) {
        FlatVar *fv = &m->vars.data[v];
        if (!t->alias[v] || !flat_attr(m, fv)->guess || fv->kind != FV_VARIABLE) continue;
        ExprVec r = {0};
        expr_leaves(t->c, t->alias[v], EXPR_VAR, &r);
        uint32_t rep = UINT32_MAX;
        for (uint32_t k = 0; k < r.len; k++)
            if (is_unknown(t, r.data[k]->index)) rep = r.data[k]->index;
        if (rep == UINT32_MAX) continue; /* bound to a value: the guess is moot */
        Expr *g = expr_solve_linear(t->c, expr_sub(t->c, t->alias[v], flat_attr(m, fv)->guess), expr_leaf(t->c, EXPR_VAR, rep));
        if (!g) continue;
        Expr *rg = flat_attr(m, &m->vars.data[rep])->guess;
        if (!rg) { flat_attr_set(m, rep)->guess = g; from[rep] = v; continue; }
        if (rg != g)
            diag_warning(fv->span, "guess of `%s` conflicts with the guess of `%s` (same alias set); "
                                   "using the one of `%s`", fv->name, m->vars.data[from[rep]].name,
                         m->vars.data[from[rep]].name);
    }
}

/* the unknowns of each equation left after pass 0, and when it was last
 * examined (value of Alias.clock) */
typedef struct {
    uint32_t **vars;
    uint32_t *nvars;
    uint32_t *seen;
    Arena *scratch;     /* Alias.scratch */
} Pending;

static void unknown_leaves(St *t, Pending *p, uint32_t i) {
    FlatEq *q = flat_eq_get(t->m, i);
    ExprVec *l = &t->leaves;
    l->len = 0;
    expr_leaves(t->c, q->lhs, EXPR_VAR, l);
    expr_leaves(t->c, q->rhs, EXPR_VAR, l);
    p->vars[i] = ARENA_ARRAY(p->scratch, uint32_t, l->len + 1);
    for (uint32_t k = 0; k < l->len; k++)
        if (is_unknown(t, l->data[k]->index)) p->vars[i][p->nvars[i]++] = l->data[k]->index;
}

/* did the tree of one of the equation's unknowns change since it was seen? */
static bool dirty(St *t, Alias *a, Pending *p, uint32_t i) {
    for (uint32_t k = 0; k < p->nvars[i]; k++)
        if (a->stamp[find(t, a, p->vars[i][k])] > p->seen[i]) return true;
    return false;
}

/* *shape: 0 when equation i is no alias at all (classify) */
static bool try_alias(St *t, Alias *a, uint32_t i, int pass, int *shape) {
    FlatEq *q = flat_eq_get(t->m, i);
    uint32_t x, y;
    double cx, cy;
    Expr *c, *r = expr_sub(t->c, q->lhs, q->rhs);
    Current cur = {t, a};
    if (pass > 0) r = expr_subst(t->c, r, current_value, &cur);
    int k = *shape = classify(t, r, &x, &y, &cx, &cy, &c);
    return (k == 1 && bind(t, a, x, cx, c)) || (k == 2 && link(t, a, x, cx, y, cy, c));
}

/* Pass 0 over an instance of a uniform template (templates.c): classify
 * reads the residual's structure and which leaves are unknowns only, so
 * once one instance is no alias, every instance whose leaves are unknowns
 * in the same places is none either; its unknowns come from the integers.
 * Returns false when the instance must be tried as a scalar equation. */
static bool no_alias_like(St *t, Pending *p, uint32_t i, StTmpl **kp, uint32_t *unk) {
    uint32_t var[ST_TMPL_MAX_LEAVES];
    FlatEq *q = &t->m->eqs.data[i];
    StTmpl *k = *kp = st_tmpl(t, q);
    if (!k || !st_tmpl_leaves(t, k, q->inst, var)) return *kp = NULL, false;
    *unk = 0;
    for (uint32_t j = 0; j < k->nleaves; j++)
        if (is_unknown(t, var[j])) *unk |= 1u << j;
    if (!k->no_alias || k->no_alias_unknowns != *unk) return false;
    p->vars[i] = ARENA_ARRAY(p->scratch, uint32_t, k->nleaves + 1);
    for (uint32_t j = 0; j < k->nleaves; j++)
        if (st_tmpl_leaf_kind(k, j) == EXPR_VAR && (*unk >> j & 1)) p->vars[i][p->nvars[i]++] = var[j];
    return true;
}

void struct_alias(St *t) {
    uint32_t n = t->m->vars.len;
    /* the union-find and the pending unknowns (~70 bytes a variable and
     * an equation) are dead once the values are read off: a scratch arena */
    Arena *sa = arena_new();
    Alias a = {.has_der = ARENA_ARRAY(sa, unsigned char, n + 1),
               .parent = ARENA_ARRAY(sa, uint32_t, n + 1),
               .sign = ARENA_ARRAY(sa, double, n + 1),
               .offset = ARENA_ARRAY(sa, Expr *, n + 1),
               .bound = ARENA_ARRAY(sa, Expr *, n + 1),
               .stamp = ARENA_ARRAY(sa, uint32_t, n + 1),
               .zero = expr_const(t->c, 0),
               .scratch = sa};
    mark_der(t, &a);
    for (uint32_t v = 0; v < n; v++) {
        a.parent[v] = v;
        a.sign[v] = 1;
        a.offset[v] = a.zero;
    }
    t->eq_alias = ARENA_ARRAY(t->arena, unsigned char, t->m->eqs.len + 1);
    /* Passes until nothing new is consumed: an equation with three unknowns
     * becomes an alias once one of them is bound (`v = p.v - n.v` with
     * n.v grounded).  A later pass rewrites an equation through the current
     * trees only when one of its unknowns' trees changed since it was last
     * looked at (stamps); in practice two or three passes suffice, and the
     * loop is capped so a pathological chain cannot make it quadratic. */
    Pending pend = {ARENA_ARRAY(sa, uint32_t *, t->m->eqs.len + 1), ARENA_ARRAY(sa, uint32_t, t->m->eqs.len + 1),
                    ARENA_ARRAY(sa, uint32_t, t->m->eqs.len + 1), sa};
    for (int pass = 0, changed = 1; changed && pass < 8; pass++) {
        changed = 0;
        for (uint32_t i = 0; i < t->m->eqs.len; i++) {
            if (t->m->eqs.data[i].kind != FE_NORMAL || t->eq_alias[i]) continue;
            if (pass > 0 && !dirty(t, &a, &pend, i)) continue;
            StTmpl *k = NULL;
            uint32_t unk = 0;
            if (pass == 0 && no_alias_like(t, &pend, i, &k, &unk)) {
                pend.seen[i] = a.clock;
                continue;
            }
            int shape;
            bool used = try_alias(t, &a, i, pass, &shape);
            if (k && shape == 0 && !k->no_alias) k->no_alias = true, k->no_alias_unknowns = unk;
            t->eq_alias[i] = used;
            changed |= used;
            if (used) a.clock++;
            else if (pass == 0) unknown_leaves(t, &pend, i);
            pend.seen[i] = a.clock;
        }
    }
    /* the value of every eliminated variable, over representatives and parameters */
    t->alias = ARENA_ARRAY(t->arena, Expr *, n + 1);
    for (uint32_t v = 0; v < n; v++) {
        if (!is_unknown(t, v)) continue;
        double s;
        Expr *o;
        uint32_t r = rel(t, &a, v, &s, &o);
        if (a.bound[r])
            t->alias[v] = expr_add(t->c, expr_mul(t->c, expr_const(t->c, s), a.bound[r]), o);
        else if (r != v)
            t->alias[v] = expr_add(t->c, expr_mul(t->c, expr_const(t->c, s), expr_leaf(t->c, EXPR_VAR, r)), o);
    }
    arena_free(sa);
    merge_guesses(t);
}
