/*
 * structure.c -- the structure phase driver: from the flat model to the
 * System.
 *
 *   1. alias elimination (alias.c) consumes `a = +-b + c` equations;
 *   2. the remaining equations are rewritten over structural variables
 *      (structure_internal.h), der(x) becoming a variable of its own;
 *   3. index reduction (pantelides.c): Pantelides' algorithm, then dummy
 *      derivatives with static state selection;
 *   4. BLT (blt.c): matching, Tarjan's SCCs, explicit assignments
 *      substituted, algebraic loops torn;
 *   5. here: slots, residuals, outputs, assertions; events.c: relations
 *      become events (modes); then the Jacobian pattern; init.c: start
 *      values and the initialization system; tables.c: what is data.
 * Every step is linear in the size of the equation DAGs (plus one
 * derivative per Jacobian entry), except matching (O(E sqrt V)).
 * See docs/STRUCTURE.md for the residual form.
 */
#include "structure_internal.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* ---------- structural variables ---------- */

static uint32_t new_sv(St *t, uint32_t base, uint32_t order, int32_t prim) {
    SVar v = {.base = base, .order = order, .der = -1, .prim = prim, .yp_of = -1, .slot = -1};
    vec_push(t->arena, &t->sv, v);
    return t->sv.len - 1;
}

uint32_t st_der(St *t, uint32_t sv) {
    if (t->sv.data[sv].der >= 0) return (uint32_t)t->sv.data[sv].der;
    uint32_t d = new_sv(t, t->sv.data[sv].base, t->sv.data[sv].order + 1, (int32_t)sv);
    t->sv.data[sv].der = (int32_t)d;
    return d;
}

/* An input would have to be differentiated (index reduction, or der(u)
 * in an equation): its derivative is not given from outside. */
static void input_differentiated(St *t, uint32_t var) {
    const FlatVar *v = &t->m->vars.data[var];
    diag_error(v->span, "the input `%s` would have to be differentiated (its derivative enters the "
                        "equations), and inputs are given as values only; compute it inside the "
                        "model (e.g. through a first-order filter) or make the equations not need der(%s)",
               v->name, v->name);
}

static Expr *dt_leaf(void *ud, Expr *leaf) {
    St *t = ud;
    if (leaf->kind == EXPR_VAR && t->m->vars.data[t->sv.data[leaf->index].base].kind == FV_INPUT)
        input_differentiated(t, t->sv.data[leaf->index].base);
    if (leaf->kind != EXPR_VAR || t->m->vars.data[t->sv.data[leaf->index].base].kind != FV_VARIABLE)
        return NULL; /* parameters and constants do not change in time */
    return expr_leaf(t->c, EXPR_VAR, st_der(t, leaf->index));
}

Expr *st_dt(St *t, Expr *e) { return expr_dt(t->c, e, dt_leaf, t); }

static Expr *to_sv_leaf(void *ud, Expr *leaf) {
    St *t = ud;
    if (leaf->kind != EXPR_VAR && leaf->kind != EXPR_DER) return leaf;
    uint32_t v = leaf->index;
    bool unknown = t->m->vars.data[v].kind == FV_VARIABLE;
    if (leaf->kind == EXPR_VAR) return unknown && t->alias[v] ? t->alias[v] : leaf;
    if (t->m->vars.data[v].kind == FV_INPUT) input_differentiated(t, v);
    if (!unknown) return expr_const(t->c, 0); /* der(parameter) */
    if (t->alias[v]) return st_dt(t, t->alias[v]);
    return expr_leaf(t->c, EXPR_VAR, st_der(t, v));
}

static bool is_relation(const Expr *e) {
    return (e->kind >= EXPR_LT && e->kind <= EXPR_GE) || (e->kind == EXPR_CALL && e->fn == FN_SIGN);
}

/* Relation origins (for the event names, events.c): translating a flat
 * equation (t->rel_span set) notes where each relation was written; every
 * later rewrite of the expressions (BLT substitution, lowering) passes the
 * origin on from the old node to the one replacing it. */
static void note_relation(void *ud, Expr *flat, Expr *sv) {
    St *t = ud;
    if (!t->rel_span || !is_relation(sv) || hmap_get(&t->rel_src, sv->id)) return;
    StRelSrc *src = ARENA_NEW(t->arena, StRelSrc);
    src->flat = flat;
    src->span = *t->rel_span;
    hmap_put(t->arena, &t->rel_src, sv->id, src);
}

void st_keep_relation(void *ud, Expr *old, Expr *new_) {
    St *t = ud;
    if (old == new_ || !is_relation(new_) || hmap_get(&t->rel_src, new_->id)) return;
    void *src = hmap_get(&t->rel_src, old->id);
    if (src) hmap_put(t->arena, &t->rel_src, new_->id, src);
}

Expr *st_to_sv_leaf(St *t, Expr *leaf) { return to_sv_leaf(t, leaf); }

Expr *st_to_sv(St *t, Expr *flat) { return expr_subst_watch(t->c, flat, to_sv_leaf, t, note_relation); }

static Expr *to_sv_at(St *t, Expr *flat, Span span) {
    t->rel_span = &span;
    Expr *r = st_to_sv(t, flat);
    t->rel_span = NULL;
    return r;
}

void st_incidence(St *t, uint32_t e) {
    SEq *q = &t->eq.data[e];
    ExprVec *vs = &t->leaves;
    vs->len = 0;
    expr_leaves(t->c, st_eq_res(t, e), EXPR_VAR, vs);
    q->inc = ARENA_ARRAY(t->arena, uint32_t, vs->len + 1);
    q->ninc = 0;
    for (uint32_t i = 0; i < vs->len; i++)
        if (st_is_unknown(t, vs->data[i]->index)) q->inc[q->ninc++] = vs->data[i]->index;
}

/* room for the equations and the structural variables they create (a
 * template's instances one derivative each at most): no copies while
 * they grow to a million */
static void reserve_equations(St *t) {
    uint32_t neq = 0, nder = 0;
    for (uint32_t i = 0; i < t->m->eqs.len; i++) {
        const FlatEq *q = &t->m->eqs.data[i];
        if (q->kind != FE_NORMAL || t->eq_alias[i]) continue;
        const StTmpl *k = st_tmpl(t, q);
        neq++, nder += k && k->nder;
    }
    vec_reserve(t->arena, &t->eq, neq + 1);
    vec_reserve(t->arena, &t->sv, t->m->vars.len + nder + 1);
}

static void build_equations(St *t) {
    reserve_equations(t);
    for (uint32_t v = 0; v < t->m->vars.len; v++) new_sv(t, v, 0, -1);
    t->nflat = t->m->vars.len;
    uint32_t var[ST_TMPL_MAX_LEAVES];
    for (uint32_t i = 0; i < t->m->eqs.len; i++) {
        FlatEq *q = &t->m->eqs.data[i];
        if (q->kind != FE_NORMAL || t->eq_alias[i]) continue;
        const StTmpl *k = st_tmpl(t, q);
        SEq e = {.flat = (int32_t)i, .diff = -1, .prim = -1};
        bool uniform = k && st_tmpl_leaves(t, k, q->inst, var);
        if (uniform && st_tmpl_instance(t, k, q->inst, var, &e)) { /* residual on demand (templates.c) */
            vec_push(t->arena, &t->eq, e);
            continue;
        }
        if (uniform) e.res = st_tmpl_residual(t, k, q->inst, var);
        else q = flat_eq_get(t->m, i), e.res = to_sv_at(t, expr_sub(t->c, q->lhs, q->rhs), q->span);
        vec_push(t->arena, &t->eq, e);
        st_incidence(t, t->eq.len - 1);
    }
    t->neq0 = t->eq.len;
}

/* ---------- lowering to codegen leaves ---------- */

/* what VAR(sv) lowers to */
static Expr *map_sv(St *t, uint32_t sv) {
    SVar *v = &t->sv.data[sv];
    int32_t p = sv < t->nflat ? t->pslot[sv] : -1;
    if (p >= 0) {
        if (t->to_init && t->pz[p] >= 0) return expr_leaf(t->c, EXPR_Z, (uint32_t)t->pz[p]);
        return expr_leaf(t->c, EXPR_P, (uint32_t)p);
    }
    switch ((SvRole)v->role) {
    case SR_ASSIGNED: {
        if (!v->low) {
            StLow none = {{NULL, NULL}};
            vec_push(t->arena, &t->lows, none);
            v->low = t->lows.len;
        }
        uint32_t k = v->low - 1; /* lowering may grow t->lows: indexed after each call */
        if (!t->lows.data[k].low[t->to_init] && !t->to_init) {
            Expr *x = st_run_lower_value(t, sv);
            t->lows.data[k].low[0] = x;
        }
        if (!t->lows.data[k].low[t->to_init]) {
            Expr *x = lower(t, st_sv_value(t, sv));
            t->lows.data[k].low[t->to_init] = x;
        }
        return t->lows.data[k].low[t->to_init];
    }
    case SR_STATE:
    case SR_ALG: return expr_leaf(t->c, t->to_init ? EXPR_Z : EXPR_Y, (uint32_t)v->slot);
    case SR_DERIV: {
        uint32_t y = (uint32_t)t->sv.data[v->yp_of].slot;
        if (!t->to_init) return expr_leaf(t->c, EXPR_YP, y);
        if (t->zslot[y] >= 0) return expr_leaf(t->c, EXPR_Z, (uint32_t)t->zslot[y]);
        return expr_const(t->c, 0);
    }
    case SR_NONE: break;
    }
    diag_internal("structure: variable `%s` (derivative order %u) has no value",
                  t->m->vars.data[v->base].name, v->order);
    return expr_const(t->c, 0);
}

static Expr *map_leaf(void *ud, Expr *leaf) {
    St *t = ud;
    if (leaf->kind == EXPR_DER) return expr_const(t->c, 0); /* not produced by st_to_sv */
    return leaf->kind == EXPR_VAR ? map_sv(t, leaf->index) : leaf;
}

Expr *st_lower_leaf_at(St *t, uint32_t sv, Expr *tmp) {
    if (t->to_init) return st_lower_leaf(t, sv);
    SVar *v = &t->sv.data[sv];
    int32_t p = sv < t->nflat ? t->pslot[sv] : -1;
    *tmp = (Expr){.kind = EXPR_P, .index = (uint32_t)p};
    if (p >= 0) return tmp;
    if (v->role == SR_STATE || v->role == SR_ALG) tmp->kind = EXPR_Y, tmp->index = (uint32_t)v->slot;
    else if (v->role == SR_DERIV) tmp->kind = EXPR_YP, tmp->index = (uint32_t)t->sv.data[v->yp_of].slot;
    else return NULL;
    return tmp;
}

/* (no VAR leaf is made for it: a derivative's would be one node per state) */
Expr *st_lower_leaf(St *t, uint32_t sv) {
    SVar *v = &t->sv.data[sv];
    bool leaf = (sv < t->nflat && t->pslot[sv] >= 0) || v->role == SR_STATE || v->role == SR_ALG ||
                v->role == SR_DERIV;
    return leaf ? map_sv(t, sv) : NULL;
}

bool st_lower_slot(St *t, uint32_t sv, uint32_t *kind, uint32_t *index) {
    SVar *v = &t->sv.data[sv];
    int32_t p = sv < t->nflat ? t->pslot[sv] : -1;
    if (t->to_init) {           /* map_leaf's Z leaves: through the Expr */
        Expr *e = st_lower_leaf(t, sv);
        if (e) *kind = e->kind, *index = e->index;
        return e && (e->kind == EXPR_Y || e->kind == EXPR_YP || e->kind == EXPR_P || e->kind == EXPR_Z);
    }
    if (p >= 0) *kind = EXPR_P, *index = (uint32_t)p;
    else if (v->role == SR_STATE || v->role == SR_ALG) *kind = EXPR_Y, *index = (uint32_t)v->slot;
    else if (v->role == SR_DERIV) *kind = EXPR_YP, *index = (uint32_t)t->sv.data[v->yp_of].slot;
    else return false;
    return true;
}

Expr *lower(St *t, Expr *e) {
    if (!e->nargs) /* a leaf: expr_subst's leaf rule, without its memo table */
        return e->kind == EXPR_CONST || e->kind == EXPR_TIME ? e : map_leaf(t, e);
    return expr_subst_watch(t->c, e, map_leaf, t, t->to_init ? NULL : st_keep_relation);
}

/* ---------- slots and parameters ---------- */

const char *st_sv_name(St *t, uint32_t sv) {
    SVar *v = &t->sv.data[sv];
    const char *n = t->m->vars.data[v->base].name;
    uint32_t j;
    if (v->prim >= 0 && st_sv_set(t, (uint32_t)v->prim, &j)) n = st_set_state_name(t, (uint32_t)v->prim);
    if (st_sv_set(t, sv, &j)) n = st_set_state_name(t, sv);
    for (uint32_t k = 0; k < v->order; k++) n = arena_printf(t->arena, "der(%s)", n);
    return n;
}

static void assign_slots(St *t) {
    FlatModel *m = t->m;
    System *s = t->s;
    t->pslot = ARENA_ARRAY(t->arena, int32_t, m->vars.len + 1);
    t->pvar = ARENA_ARRAY(t->arena, uint32_t, m->vars.len + 1);
    for (uint32_t i = 0; i < m->vars.len; i++) {
        t->pslot[i] = -1;
        if (m->vars.data[i].kind != FV_VARIABLE) { t->pvar[s->np] = i; t->pslot[i] = (int32_t)s->np++; }
    }
    for (uint32_t i = 0; i < t->sv.len; i++)
        if (t->sv.data[i].role == SR_STATE || t->sv.data[i].role == SR_ALG) t->sv.data[i].slot = (int32_t)s->ny++;
    s->y_names = ARENA_ARRAY(t->arena, const char *, s->ny + 1);
    s->y_is_diff = ARENA_ARRAY(t->arena, unsigned char, s->ny + 1);
    for (uint32_t i = 0; i < t->sv.len; i++) {
        SVar *v = &t->sv.data[i];
        if (v->slot < 0) continue;
        /* `$der(x)`: a derivative that is an unknown of its own (a dummy
         * derivative), distinct from der(x) = y' of the state x */
        s->y_names[v->slot] = v->order ? arena_printf(t->arena, "$%s", st_sv_name(t, i)) : st_sv_name(t, i);
        s->y_is_diff[v->slot] = v->role == SR_STATE;
    }
}

/* parameters: names, flags, defaults, dependency order (DFS post-order) */
static void order_params(St *t, uint32_t p, unsigned char *state, uint32_t *k) {
    if (state[p] == 2) return;
    if (state[p] == 1) {
        FlatVar *v = &t->m->vars.data[t->pvar[p]];
        diag_error(v->span, "the default of parameter `%s` depends on itself", v->name);
        return;
    }
    state[p] = 1;
    Expr *d = t->s->param_default[p];
    if (d) {
        ExprVec deps = {0};
        expr_leaves(t->c, d, EXPR_P, &deps);
        for (uint32_t i = 0; i < deps.len; i++) order_params(t, deps.data[i]->index, state, k);
    }
    state[p] = 2;
    t->s->param_order[(*k)++] = p;
}

static void build_params(St *t) {
    System *s = t->s;
    s->param_names = ARENA_ARRAY(t->arena, const char *, s->np + 1);
    s->param_flags = ARENA_ARRAY(t->arena, unsigned char, s->np + 1);
    s->param_default = ARENA_ARRAY(t->arena, Expr *, s->np + 1);
    s->param_order = ARENA_ARRAY(t->arena, uint32_t, s->np + 1);
    t->pz = ARENA_ARRAY(t->arena, int32_t, s->np + 1);
    for (uint32_t p = 0; p < s->np; p++) {
        FlatVar *v = &t->m->vars.data[t->pvar[p]];
        s->param_names[p] = v->name;
        s->param_flags[p] = (v->is_final || v->kind == FV_CONSTANT ? SYS_PARAM_FINAL : 0) |
                            (v->kind == FV_PARAM_MISSING ? SYS_PARAM_MISSING : 0) |
                            (flat_kind_is_discrete(v->kind) ? SYS_PARAM_DISCRETE : 0);
        s->param_default[p] = v->value ? lower(t, v->value) : NULL;
        if (!v->value && v->kind == FV_PARAMETER) s->param_flags[p] |= SYS_PARAM_REQUIRED;
        if (v->kind == FV_INPUT) s->param_flags[p] |= SYS_PARAM_INPUT;
        if (v->value && !expr_is_const(s->param_default[p])) s->param_flags[p] |= SYS_PARAM_DEPENDENT;
        t->pz[p] = -1;
    }
    unsigned char *state = ARENA_ARRAY(t->arena, unsigned char, s->np + 1);
    uint32_t k = 0;
    for (uint32_t p = 0; p < s->np; p++) order_params(t, p, state, &k);
}

/* ---------- residuals, Jacobian pattern ---------- */

typedef struct { uint32_t row, col; } Entry;

typedef struct {
    Vec(Entry) ents;   /* row-major */
    ExprVec dy, dyp;   /* their derivatives */
} Jac;

/* row r's entries and derivatives: one per distinct column */
static void jac_row(St *t, Jac *j, uint32_t r, int32_t *seen) {
    System *s = t->s;
    ExprVec *ys = &t->leaves;
    ys->len = 0;
    expr_leaves(t->c, s->resid[r], EXPR_Y, ys);
    expr_leaves(t->c, s->resid[r], EXPR_YP, ys);
    for (uint32_t i = 0; i < ys->len; i++) {
        uint32_t col = ys->data[i]->index;
        if (seen[col] == (int32_t)r) continue;
        seen[col] = (int32_t)r;
        vec_push(t->arena, &j->ents, ((Entry){r, col}));
        vec_push(t->arena, &j->dy, expr_diff_once(t->c, s->resid[r], expr_leaf(t->c, EXPR_Y, col)));
        vec_push(t->arena, &j->dyp, expr_diff_once(t->c, s->resid[r], expr_leaf(t->c, EXPR_YP, col)));
    }
}

/* row r of a run: its representative's (rows [a, b) of j) renamed */
static bool jac_run_row(St *t, Jac *j, uint32_t r, uint32_t a, uint32_t b) {
    uint32_t len = j->ents.len;
    bool ok = true;
    for (uint32_t k = a; k < b && ok; k++) {
        int64_t col = st_run_jac_col(t, r, j->ents.data[k].col);
        ok = col >= 0;
        vec_push(t->arena, &j->ents, ((Entry){r, (uint32_t)col}));
        vec_push(t->arena, &j->dy, st_run_jac_entry(t, r, j->dy.data[k], &ok));
        vec_push(t->arena, &j->dyp, st_run_jac_entry(t, r, j->dyp.data[k], &ok));
    }
    if (!ok) j->ents.len = j->dy.len = j->dyp.len = len;
    return ok;
}

/* A loop item's entries: one per distinct column of its row template, in
 * jac_row's order, each column moving with the steps of its leaf. */
static void jac_loop_template(St *t, SysLoop *l, int32_t *seen) {
    ExprVec *ys = &t->leaves;
    ys->len = 0;
    expr_leaves(t->c, l->res, EXPR_Y, ys);
    expr_leaves(t->c, l->res, EXPR_YP, ys);
    uint32_t *leaf = ARENA_ARRAY(t->arena, uint32_t, ys->len + 1); /* entry -> its leaf in l->leaf */
    l->col = ARENA_ARRAY(t->arena, uint32_t, ys->len + 1);
    l->dy = ARENA_ARRAY(t->arena, Expr *, ys->len + 1);
    l->dyp = ARENA_ARRAY(t->arena, Expr *, ys->len + 1);
    for (uint32_t i = 0; i < ys->len; i++) {
        uint32_t col = ys->data[i]->index;
        if (seen[col] == (int32_t)l->row) continue;
        seen[col] = (int32_t)l->row;
        uint32_t k = 0;
        while (k < l->nleaf && l->leaf[k] != ys->data[i]) k++; /* there: covers() */
        leaf[l->nent] = k;
        l->col[l->nent] = col;
        l->dy[l->nent] = expr_diff_once(t->c, l->res, expr_leaf(t->c, EXPR_Y, col));
        l->dyp[l->nent++] = expr_diff_once(t->c, l->res, expr_leaf(t->c, EXPR_YP, col));
    }
    l->col_stride = ARENA_ARRAY(t->arena, int32_t, (size_t)l->ndim * l->nent + 1);
    for (uint32_t d = 0; d < l->ndim; d++)
        for (uint32_t e = 0; e < l->nent; e++) l->col_stride[d * l->nent + e] = l->stride[d * l->nleaf + leaf[e]];
    l->jac_pos = ARENA_ARRAY(t->arena, int32_t, (size_t)l->count * l->nent + 1);
}

/* column of entry e of instance k of a loop item */
static uint32_t jac_loop_col(const SysLoop *l, uint32_t k, uint32_t e) {
    return (uint32_t)((int64_t)l->col[e] + sys_loop_offset(l, k, l->col_stride, l->nent, e));
}

/* The rows' entries into the CSC arrays (colptr counted), row by row so
 * that rows ascend within a column: the collected ones with their
 * derivatives, a loop item's from its columns (no Expr: NULL; its
 * instances come in row order), their positions to its jac_pos (not
 * affine where the band meets an edge). */
static void jac_scatter(St *t, const Jac *j, const uint32_t *first) {
    System *s = t->s;
    int32_t *fill = ARENA_ARRAY(t->arena, int32_t, s->ny + 1);
    uint32_t *inst = ARENA_ARRAY(t->arena, uint32_t, s->nloops + 1);
    for (uint32_t r = 0; r < s->ny; r++) {
        uint32_t li = s->row_loop ? s->row_loop[r] : 0;
        SysLoop *l = li ? &s->loops[li - 1] : NULL;
        uint32_t n = l ? inst[li - 1]++ : 0;
        for (uint32_t e = 0; l && e < l->nent; e++) {
            uint32_t col = jac_loop_col(l, n, e);
            int32_t k = s->jac_colptr[col] + fill[col]++;
            s->jac_rowidx[k] = (int32_t)r;
            l->jac_pos[(size_t)n * l->nent + e] = k;
        }
        for (uint32_t i = first[r]; !l && i < first[r + 1]; i++) {
            Entry e = j->ents.data[i];
            int32_t k = s->jac_colptr[e.col] + fill[e.col]++;
            s->jac_rowidx[k] = (int32_t)r;
            s->jac_dy[k] = j->dy.data[i];
            s->jac_dyp[k] = j->dyp.data[i];
        }
    }
    arena_release(t->arena, inst, sizeof *inst * (s->nloops + 1));
    arena_release(t->arena, fill, sizeof *fill * ((size_t)s->ny + 1));
}

/* CSC pattern of d resid / d (Y, YP); one entry per distinct column.  The
 * rows of a run rename their representative's entries (runs.c); the rows
 * of a loop item share its templates and are not collected (24 bytes an
 * entry): jac_scatter places them from the loop's columns. */
static void build_jacobian(St *t) {
    System *s = t->s;
    Jac j = {0};
    int32_t *seen = ARENA_ARRAY(t->arena, int32_t, s->ny + 1);
    uint32_t *first = ARENA_ARRAY(t->arena, uint32_t, s->ny + 1);
    s->jac_colptr = ARENA_ARRAY(t->arena, int32_t, s->ny + 1);
    memset(seen, 0xff, sizeof *seen * (s->ny + 1));
    uint32_t *inst = ARENA_ARRAY(t->arena, uint32_t, s->nloops + 1); /* instances seen per loop */
    uint32_t nnz = 0;
    for (uint32_t r = 0; r < s->ny; r++) {
        first[r] = j.ents.len;
        if (s->row_loop && s->row_loop[r]) { /* instances come in row order */
            SysLoop *l = &s->loops[s->row_loop[r] - 1];
            uint32_t k = inst[s->row_loop[r] - 1]++;
            if (!k) jac_loop_template(t, l, seen);
            for (uint32_t e = 0; e < l->nent; e++) s->jac_colptr[jac_loop_col(l, k, e) + 1]++;
            nnz += l->nent;
            continue;
        }
        int32_t rep = st_run_jac_row(t, r, s->resid);
        if (rep < 0 || !jac_run_row(t, &j, r, first[rep], first[rep + 1])) jac_row(t, &j, r, seen);
    }
    first[s->ny] = j.ents.len;
    s->jac_nnz = nnz + j.ents.len;
    s->jac_rowidx = ARENA_ARRAY(t->arena, int32_t, s->jac_nnz + 1);
    s->jac_dy = ARENA_ARRAY(t->arena, Expr *, s->jac_nnz + 1);
    s->jac_dyp = ARENA_ARRAY(t->arena, Expr *, s->jac_nnz + 1);
    for (uint32_t i = 0; i < j.ents.len; i++) s->jac_colptr[j.ents.data[i].col + 1]++;
    for (uint32_t c = 0; c < s->ny; c++) s->jac_colptr[c + 1] += s->jac_colptr[c];
    arena_release(t->arena, inst, sizeof *inst * (s->nloops + 1));
    jac_scatter(t, &j, first);
    arena_release(t->arena, first, sizeof *first * ((size_t)s->ny + 1));
    arena_release(t->arena, seen, sizeof *seen * ((size_t)s->ny + 1));
    vec_release(t->arena, &j.ents);
    vec_release(t->arena, &j.dy);
    vec_release(t->arena, &j.dyp);
}

static bool balance_check(St *t) {
    uint32_t neq = 0, nunk = 0;
    for (uint32_t i = 0; i < t->m->eqs.len; i++) neq += t->m->eqs.data[i].kind == FE_NORMAL;
    for (uint32_t v = 0; v < t->m->vars.len; v++) nunk += t->m->vars.data[v].kind == FV_VARIABLE;
    if (neq == nunk) return true;
    diag_error((Span){0}, "model `%s` is unbalanced: %u equations for %u unknowns (%s by %d)",
               t->m->name, neq, nunk, neq > nunk ? "over-determined" : "under-determined",
               neq > nunk ? (int)(neq - nunk) : (int)(nunk - neq));
    return false;
}

static void build_residuals(St *t) {
    System *s = t->s;
    if (t->resid_sv.len != s->ny) {
        diag_internal("structure: %u residuals for %u integrator unknowns", t->resid_sv.len, s->ny);
        s->ny = 0;
    }
    s->resid = ARENA_ARRAY(t->arena, Expr *, s->ny + 1);
    st_run_loops_begin(t);
    uint32_t next_try = 0; /* rows before it are inside a stretch too short for a loop */
    for (uint32_t r = 0; r < s->ny; r++) { /* a row of a run: its representative's renamed (runs.c) */
        if (t->row_loop[r]) continue;    /* a row of a loop item: l.res shifted, no Expr */
        Expr *x = st_run_lower_row(t, r);
        SysLoop l;
        uint32_t n = 1, scanned = 1;
        if (x && r >= next_try) n = st_run_loop(t, r, x, &l, &scanned);
        if (n == 1 && r >= next_try) next_try = r + (scanned > 1 ? scanned - 1 : 1);
        if (n > 1) { /* a loop item from row r: its rows are marked in row_loop */
            vec_push(t->arena, &t->loops, l);
            continue;
        }
        s->resid[r] = x ? x : lower(t, st_resid_sv(t, r));
    }
    s->nloops = t->loops.len;
    s->loops = t->loops.data;
    s->row_loop = s->nloops ? t->row_loop : NULL;
}

/* ---------- the block sequence ---------- */

const char *const sys_block_kind_names[SB_KIND_COUNT] = {
#define X(k, name) name,
    SYS_BLOCK_KINDS(X)
#undef X
};

/* an unknown of the index-1 system as the System names it (an assigned
 * one's value: asg_sv, lowered by assigned_values) */
static SysUnknown sys_unknown(St *t, uint32_t sv, int32_t *asg, uint32_t *asg_sv) {
    SVar *v = &t->sv.data[sv];
    System *s = t->s;
    switch ((SvRole)v->role) {
    case SR_ALG: return (SysUnknown){SU_Y, (uint32_t)v->slot};
    case SR_DERIV: return (SysUnknown){SU_YP, (uint32_t)t->sv.data[v->yp_of].slot};
    case SR_ASSIGNED:
        if (asg[sv] < 0) {
            asg[sv] = (int32_t)s->nassigned;
            s->assigned_names[s->nassigned] = st_sv_name(t, sv);
            asg_sv[s->nassigned++] = sv;
        }
        return (SysUnknown){SU_ASSIGNED, (uint32_t)asg[sv]};
    case SR_STATE:
    case SR_NONE: break;
    }
    diag_internal("structure: `%s` is in a BLT block but is no unknown", st_sv_name(t, sv));
    return (SysUnknown){SU_Y, 0};
}

/* The loop items of a list of values (svs[k]: the variable of entry k,
 * UINT32_MAX when it is no run's value) and their first entries' Exprs in
 * list[]; the other entries of an item stay NULL, the entries outside
 * items are left to the caller (done[k] = 0).  Linear: a stretch too short
 * for an item is scanned once (st_run_value_loop's *scanned). */
static SysLoopVec value_loops(St *t, const uint32_t *svs, uint32_t n, Expr **list, unsigned char *done) {
    SysLoopVec loops = {0};
    uint32_t next_try = 0;
    for (uint32_t k = 0; k < n;) {
        SysLoop l;
        uint32_t m = 1, scanned = 1;
        if (k >= next_try) m = st_run_value_loop(t, svs, n, k, &l, &scanned);
        if (m == 1 && k >= next_try) next_try = k + (scanned > 1 ? scanned - 1 : 1);
        if (m == 1) {
            k++;
            continue;
        }
        vec_push(t->arena, &loops, l);
        list[k] = l.res;
        memset(done + k, 1, m);
        k += m;
    }
    return loops;
}

static void assigned_values(St *t, const uint32_t *asg_sv) {
    System *s = t->s;
    unsigned char *done = ARENA_ARRAY(t->arena, unsigned char, s->nassigned + 1);
    SysLoopVec loops = value_loops(t, asg_sv, s->nassigned, s->assigned_value, done);
    s->nasg_loops = loops.len;
    s->asg_loops = loops.data;
    for (uint32_t k = 0; k < s->nassigned; k++)
        if (!done[k]) s->assigned_value[k] = lower(t, expr_leaf(t->c, EXPR_VAR, asg_sv[k]));
    arena_release(t->arena, done, (size_t)s->nassigned + 1);
}

/* System.blocks from the BLT blocks: iteration variables first, then the
 * unknowns assigned (inside a loop, or as an assignment block).  O(size). */
static void build_blocks(St *t) {
    System *s = t->s;
    uint32_t nunk = t->bvars.len;
    s->nblocks = t->blocks.len;
    s->blocks = ARENA_ARRAY(t->arena, SysBlock, s->nblocks + 1);
    s->block_unknowns = ARENA_ARRAY(t->arena, SysUnknown, nunk + 1);
    s->assigned_names = ARENA_ARRAY(t->arena, const char *, nunk + 1);
    s->assigned_value = ARENA_ARRAY(t->arena, Expr *, nunk + 1);
    int32_t *asg = ARENA_ARRAY(t->arena, int32_t, t->sv.len + 1);
    uint32_t *asg_sv = ARENA_ARRAY(t->arena, uint32_t, nunk + 1);
    memset(asg, 0xff, sizeof *asg * (t->sv.len + 1));
    uint32_t at = 0, row = 0;
    for (uint32_t i = 0; i < t->blocks.len; i++) {
        Block *b = &t->blocks.data[i];
        SysBlock *o = &s->blocks[i];
        o->kind = b->kind;
        o->first = at;
        o->res_first = row;
        bool torn = b->kind == SB_LINEAR || b->kind == SB_NONLINEAR;
        for (uint32_t k = 0; torn && k < b->ntorn; k++)
            s->block_unknowns[at++] = sys_unknown(t, t->torn.data[b->tfirst + k], asg, asg_sv);
        o->ntear = torn ? b->ntorn : b->kind == SB_ASSIGN ? 0 : b->size;
        for (uint32_t k = 0; k < b->size; k++) {
            uint32_t v = t->bvars.data[b->first + k];
            if (!torn || t->sv.data[v].role == SR_ASSIGNED) s->block_unknowns[at++] = sys_unknown(t, v, asg, asg_sv);
        }
        o->n = at - o->first;
        row += o->ntear;
    }
    if (row != s->ny || at != nunk)
        diag_internal("structure: the BLT blocks have %u rows and %u unknowns for %u residuals and %u "
                      "block unknowns", row, at, s->ny, nunk);
    assigned_values(t, asg_sv);
    arena_release(t->arena, asg_sv, sizeof *asg_sv * ((size_t)nunk + 1));
    arena_release(t->arena, asg, sizeof *asg * ((size_t)t->sv.len + 1));
}

/* ---------- coefficient checks (solve.c) ---------- */

static const char *solved_name(St *t, Expr *x) {
    switch ((ExprKind)x->kind) {
    case EXPR_VAR: return st_sv_name(t, x->index);
    case EXPR_Y: return t->s->y_names[x->index];
    case EXPR_YP: return arena_printf(t->arena, "der(%s)", t->s->y_names[x->index]);
    default: return "?";
    }
}

/* "the coefficient `m` of `der(v)` in `m * der(v) = f` (file:line) ..." */
static const char *coef_message(St *t, StCoef *k, Expr *low) {
    System *s = t->s;
    ExprVec ps = {0};
    expr_leaves(t->c, low, EXPR_P, &ps);
    const char *names = "";
    for (uint32_t i = 0; i < ps.len; i++)
        names = arena_printf(t->arena, "%s%s%s", names, i ? ", " : "", s->param_names[ps.data[i]->index]);
    const char *eq = k->flat >= 0 ? st_eq_text(t, (uint32_t)k->flat, "`", "`") : "an equation";
    return arena_printf(t->arena, "the coefficient `%s` of `%s` in %s is zero or not finite with these "
                        "parameter values (%s); the equation is solved for `%s` by dividing by it",
                        st_expr_text(t, low, s, (Span){0}), solved_name(t, k->var), eq, names,
                        solved_name(t, k->var));
}

static void build_coef_checks(St *t) {
    System *s = t->s;
    s->ncoef_check = t->coef.len;
    s->coef_check = ARENA_ARRAY(t->arena, Expr *, s->ncoef_check + 1);
    s->coef_check_msg = ARENA_ARRAY(t->arena, const char *, s->ncoef_check + 1);
    for (uint32_t i = 0; i < t->coef.len; i++) {
        s->coef_check[i] = lower(t, t->coef.data[i].coef);
        s->coef_check_msg[i] = coef_message(t, &t->coef.data[i], s->coef_check[i]);
    }
}

/* Columns a .. b - 1 of output loop l (a: a column with its Expr) as a
 * loop of their own when long enough, else as Exprs */
static void out_segment(St *t, const SysLoop *l, uint32_t a, uint32_t b, const uint32_t *col_var,
                        SysLoopVec *out) {
    System *s = t->s;
    if (b - a < ST_LOOP_MIN) {
        for (uint32_t k = a + 1; k < b; k++)
            s->out[l->row + k] = lower(t, st_to_sv(t, expr_leaf(t->c, EXPR_VAR, col_var[l->row + k])));
        return;
    }
    SysLoop m = *l;
    m.row = l->row + a, m.count = m.dim_count[0] = b - a, m.res = s->out[m.row]; /* one dimension */
    if (a) { /* the leaves of column a: the first's shifted */
        m.leaf = ARENA_ARRAY(t->arena, Expr *, l->nleaf + 1);
        for (uint32_t i = 0; i < l->nleaf; i++)
            m.leaf[i] = expr_leaf(t->c, (ExprKind)l->leaf[i]->kind,
                                  (uint32_t)((int64_t)l->leaf[i]->index + (int64_t)a * l->stride[i]));
    }
    vec_push(t->arena, out, m);
}

static int by_shape(const void *a, const void *b) {
    const SysLoop *x = *(SysLoop *const *)a, *y = *(SysLoop *const *)b;
    if (x->res->shape != y->res->shape) return x->res->shape < y->res->shape ? -1 : 1;
    return x->row < y->row ? -1 : x->row > y->row;
}

/* Loops of one template shape are compared pairwise up to this many (at
 * most 32 comparisons per loop: linear); a larger group keeps one loop and
 * expands the others.  The shape leaves out the leaves' indices, so the
 * like arrays of a model (one template, their own parameters) share one. */
#define MEET_GROUP_MAX 64

/* Loops whose templates have one shape may share an Expr (two runs
 * computing the same values): the later of two that may
 * (sys_loops_may_meet) gets its columns' Exprs.  True when one did. */
static bool expand_meeting(St *t, SysLoopVec *loops, const uint32_t *col_var) {
    uint32_t n = loops->len;
    SysLoop **by = ARENA_ARRAY(t->arena, SysLoop *, n + 1);
    for (uint32_t i = 0; i < n; i++) by[i] = &loops->data[i];
    qsort(by, n, sizeof *by, by_shape);
    bool any = false;
    for (uint32_t g = 0, e; g < n; g = e) {
        for (e = g + 1; e < n && by[e]->res->shape == by[g]->res->shape; e++) {}
        for (uint32_t j = g + 1; j < e; j++) {
            bool meet = e - g > MEET_GROUP_MAX;
            for (uint32_t i = g; i < j && !meet; i++) meet = by[i]->count > 1 && sys_loops_may_meet(by[i], by[j]);
            if (!meet) continue;
            for (uint32_t k = 1; k < by[j]->count; k++)
                t->s->out[by[j]->row + k] = lower(t, st_to_sv(t, expr_leaf(t->c, EXPR_VAR, col_var[by[j]->row + k])));
            by[j]->count = 1;
            any = true;
        }
    }
    arena_release(t->arena, by, sizeof *by * ((size_t)n + 1));
    uint32_t m = 0;
    for (uint32_t i = 0; i < n; i++)
        if (loops->data[i].count > 1) loops->data[m++] = loops->data[i];
    loops->len = m;
    return any;
}

/* An output loop's columns after the first have no Expr: none may equal
 * another column's (or its operand's, a negation's), or out_alias would
 * differ from the scalar path's.  An Expr equal to one would have been
 * built, so each is probed (sys_loop_instance_exists): a column found
 * built (a scalar row holds the value, another column equals it) gets its
 * Expr and splits its loop; two loops that may share a column (a value
 * neither built) are found on their templates (expand_meeting).  The new
 * Exprs may equal another loop's column: again until nothing changes.
 * Usually two passes: the values the rows outside loop items hold, then
 * none. */
static void check_out_loops(St *t, SysLoopVec *loops, const uint32_t *col_var) {
    for (bool split = true; split;) {
        split = false;
        SysLoopVec next = {0};
        for (uint32_t i = 0; i < loops->len; i++) {
            const SysLoop *l = &loops->data[i];
            uint32_t a = 0;
            for (uint32_t j = 1; j < l->count; j++) {
                if (!sys_loop_instance_exists(t->c, l, j)) continue;
                out_segment(t, l, a, j, col_var, &next);
                t->s->out[l->row + j] = lower(t, st_to_sv(t, expr_leaf(t->c, EXPR_VAR, col_var[l->row + j])));
                a = j;
                split = true;
            }
            out_segment(t, l, a, l->count, col_var, &next);
        }
        vec_release(t->arena, loops);
        *loops = next;
        split |= expand_meeting(t, loops, col_var);
    }
}

/* Every flat variable's column: an assigned variable of a run's instance
 * may be in a loop item (runs.c, value loops), the others get their Exprs */
static void build_outputs(St *t) {
    System *s = t->s;
    uint32_t nv = t->m->vars.len;
    s->out = ARENA_ARRAY(t->arena, Expr *, nv + 1);
    s->out_names = ARENA_ARRAY(t->arena, const char *, nv + 1);
    s->out_conn = ARENA_ARRAY(t->arena, unsigned char, nv + 1);
    uint32_t *col_var = ARENA_ARRAY(t->arena, uint32_t, nv + 1), *col_sv = ARENA_ARRAY(t->arena, uint32_t, nv + 1);
    for (uint32_t v = 0; v < nv; v++) {
        FlatVarKind k = t->m->vars.data[v].kind;
        if (!flat_kind_is_unknown(k) && k != FV_INPUT) continue; /* clocked ones and inputs too */
        s->out_names[s->nout] = t->m->vars.data[v].name;
        FlatConn c = t->m->vars.data[v].conn; /* a block's output is its own variable */
        s->out_conn[s->nout] = c != FC_NONE && c != FC_OUTPUT;
        col_sv[s->nout] = k == FV_VARIABLE && !t->alias[v] ? v : UINT32_MAX;
        col_var[s->nout++] = v;
    }
    unsigned char *done = ARENA_ARRAY(t->arena, unsigned char, s->nout + 1);
    SysLoopVec loops = value_loops(t, col_sv, s->nout, s->out, done);
    for (uint32_t j = 0; j < s->nout; j++)
        if (!done[j]) s->out[j] = lower(t, st_to_sv(t, expr_leaf(t->c, EXPR_VAR, col_var[j])));
    check_out_loops(t, &loops, col_var);
    s->nout_loops = loops.len;
    s->out_loops = loops.data;
    arena_release(t->arena, done, (size_t)s->nout + 1);
    arena_release(t->arena, col_sv, sizeof *col_sv * ((size_t)nv + 1));
    arena_release(t->arena, col_var, sizeof *col_var * ((size_t)nv + 1));
}

/* "message (file:line:col)": where the assertion is written, for the
 * runtime's error when it fails */
static const char *assert_message(St *t, const FlatAssert *a) {
    SrcFile *f = a->span.file ? src_get(a->span.file) : NULL;
    if (!f) return a->message;
    uint32_t line, col;
    src_line_col(f, a->span.lo, &line, &col);
    return arena_printf(t->arena, "%s (%s:%u:%u)", a->message, f->path, line, col);
}

static void build_asserts(St *t) {
    System *s = t->s;
    s->nassert = t->m->asserts.len;
    s->assert_cond = ARENA_ARRAY(t->arena, Expr *, s->nassert + 1);
    s->assert_msg = ARENA_ARRAY(t->arena, const char *, s->nassert + 1);
    for (uint32_t i = 0; i < s->nassert; i++) {
        FlatAssert *a = &t->m->asserts.data[i];
        s->assert_cond[i] = lower(t, to_sv_at(t, a->cond, a->span));
        s->assert_msg[i] = assert_message(t, a);
    }
}

System *structure(FlatModel *m) { return structure_with(m, &(StructOptions){0}); }

/* The phase's own tables are dead once the System is built (it holds
 * copies): give the large ones back before code generation, whose peak
 * comes on top of what is still held. */
static void st_release(St *t) {
    vec_release(t->arena, &t->sv);
    vec_release(t->arena, &t->lows);
    hmap_release(t->arena, &t->set_state);
    vec_release(t->arena, &t->eq);
    vec_release(t->arena, &t->blocks);
    vec_release(t->arena, &t->bvars);
    vec_release(t->arena, &t->beqs);
    vec_release(t->arena, &t->torn);
    vec_release(t->arena, &t->resid_sv);
    vec_release(t->arena, &t->resid_eq);
    st_run_rows_release(t);
    st_run_recs_release(t);
    vec_release(t->arena, &t->coef);
    vec_release(t->arena, &t->leaves);
    vec_release(t->arena, &t->coef_leaves);
    arena_release(t->arena, t->assign, sizeof *t->assign * (size_t)t->assign_cap);
    arena_release(t->arena, t->match, sizeof *t->match * (size_t)t->match_cap);
    t->assign = t->match = NULL;
    hmap_release(t->arena, &t->coef_seen);
    hmap_release(t->arena, &t->rel_src);
    hmap_release(t->arena, &t->runs);
    hmap_release(t->arena, &t->tmpl_pats);
}

System *structure_with(FlatModel *m, const StructOptions *o) {
    unsigned errors = diag_error_count();
    double ts = timing_now();
    flat_fold_constants(m); /* structural parameters by value: their zeros vanish (in templates
                               too: their instances are built from them, on demand) */
    flat_scalarize_lazy(m); /* templates enter as their instances, built on demand (templates.c) */
    timing_sub("structure.scalarize", &ts);
    St t = {0};
    t.m = m;
    t.opt = *o;
    t.c = m->ctx;
    t.arena = expr_ctx_arena(m->ctx); /* the System lives with the flat model's expressions */
    System *s = t.s = ARENA_NEW(t.arena, System);
    s->ctx = m->ctx;
    s->model_name = m->name;
    s->start_time = 0;
    s->stop_time = 1;
    s->rtol = 1e-6;
    s->atol = 1e-6;
    if (m->settings.has) { /* the options of an analysis (flatten/analysis.c) */
        const FlatSettings *f = &m->settings;
        s->start_time = f->start, s->stop_time = f->stop, s->interval = f->interval, s->dtmax = f->dtmax;
        s->rtol = f->rtol, s->atol = f->atol, s->ntstops = f->ntstops, s->tstops = f->tstops;
    }
    if (!balance_check(&t)) return NULL;
    double t0 = timing_now();
    struct_alias(&t);
    timing_sub("structure.alias", &t0);
    build_equations(&t);
    timing_sub("structure.equations", &t0);
    if (!struct_index_reduce(&t)) return NULL;
    timing_sub("structure.index", &t0);
    if (!struct_blt(&t)) return NULL;
    timing_sub("structure.blt", &t0);
    assign_slots(&t);
    build_params(&t);
    build_residuals(&t);
    build_blocks(&t);
    timing_sub("structure.residuals", &t0);
    build_outputs(&t);
    build_asserts(&t);
    timing_sub("structure.outputs", &t0);
    struct_events(&t);
    st_build_set_system(&t);
    timing_sub("structure.events", &t0);
    build_jacobian(&t);
    timing_sub("structure.jacobian", &t0);
    struct_build_clocks(&t);
    timing_sub("structure.clocks", &t0);
    struct_build_init(&t);
    st_run_rows_release(&t); /* every row is built: 60 bytes a row of a run */
    build_coef_checks(&t);
    if (t.opt.no_report) st_run_recs_release(&t); /* no value is lowered again (the report asks) */
    timing_sub("structure.init", &t0);
    struct_tables(s);
    struct_origins(&t);
    timing_sub("structure.tables", &t0);
    if (!t.opt.no_report) struct_report(&t);
    st_release(&t);
    timing_sub("structure.report", &t0);
    return diag_error_count() > errors ? NULL : s;
}
