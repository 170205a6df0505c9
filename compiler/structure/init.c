/*
 * init.c -- the initialization system.
 *
 * Starting values: `initial x = e` with e free of unknowns is a start value
 * of x; otherwise the guess, otherwise 0.  When every initial relation is
 * such a start value and no parameter is `missing`, no system is built
 * (init_n = 0): the runtime fixes the differential unknowns at their start
 * and lets IDACalcIC find the algebraic ones and y'.
 *
 * Overrides (FlatEq.is_override: --initial, a test case's `initial` map) may
 * name any variable and replace the model's own initial values of the same
 * variable: a relation whose left side lowers to the same expression (the
 * variable or an alias of it) or that fixes the same slot.  Two start values
 * of one slot (aliases): the same expression is redundant (a warning), two
 * different constants are an error naming both; otherwise both stay and the
 * runtime decides (below).
 *
 * Otherwise the unknowns are z = [y | y' of differential y | missing
 * parameters] and the candidate rows come in classes, by priority:
 *   1. F(t0, y, y', p) = 0 (the index-reduced residuals, so the
 *      differentiated constraints hold at t0 too);
 *   2. the overrides;
 *   3. the model's initial relations;
 *   4. start rows z_y = start(y), one per state.
 * A maximum matching of rows to z, extended class by class (Hopcroft-Karp
 * continued from the previous classes' matching, so no row of a higher
 * class loses its unknown), selects the square system; start rows only
 * fill what classes 1-3 leave free (one warning lists those states).  Rows
 * of classes 2-3 left over over-determine it: they become checks, which the
 * runtime evaluates once the square system is solved -- consistent ones are
 * dropped with a warning naming them, an inconsistent one is an error naming
 * it and the relations that determine its unknowns, with their locations
 * (constant ones are decided here).  Unknowns left unmatched: an error
 * naming them.  O(E sqrt V) for the matching, linear otherwise.  The
 * selected system's BLT (initblt.c) goes with it, for the runtime's
 * block-wise solve.
 */
#include "structure_internal.h"
#include "numfmt.h"

#include <stdlib.h>
#include <string.h>

/* initial relations in structural form; NULL (with an error) when one
 * mentions a derivative that is not a variable of the simulation system */
static Expr **initial_relations(St *t) {
    Expr **r = ARENA_ARRAY(t->arena, Expr *, t->m->eqs.len + 1);
    for (uint32_t i = 0; i < t->m->eqs.len; i++) {
        FlatEq *q = &t->m->eqs.data[i];
        if (q->kind != FE_INITIAL) continue;
        r[i] = st_to_sv(t, expr_sub(t->c, q->lhs, q->rhs));
        ExprVec *vs = &t->leaves; /* reused: a vector per relation was 64 bytes each */
        vs->len = 0;
        expr_leaves(t->c, r[i], EXPR_VAR, vs);
        for (uint32_t k = 0; k < vs->len; k++) {
            SVar *v = &t->sv.data[vs->data[k]->index];
            if (!st_is_unknown(t, vs->data[k]->index) || v->role != SR_NONE) continue;
            diag_error(q->span, "`%s` appears in an initial relation, but `%s` is not a state of "
                                "the simulation system", st_sv_name(t, vs->data[k]->index),
                       t->m->vars.data[v->base].name);
            return NULL;
        }
    }
    return r;
}

/* Y -> its start value (start_yp must be over P and TIME) */
static Expr *start_leaf(void *ud, Expr *leaf) {
    St *t = ud;
    return leaf->kind == EXPR_Y ? t->s->start[leaf->index] : leaf;
}

/* The one equation of block b solved for `target` and evaluated at the start
 * values of the others; NULL when it does not solve or the solution still
 * needs a y' or a y. */
static Expr *solved_at_start(St *t, Block *b, Expr *target) {
    uint32_t e = t->beqs.data[b->first];
    Expr *x = st_solve(t, lower(t, st_block_res(t, b)), target, t->eq.data[e].flat);
    if (!x) return NULL;
    ExprVec l = {0};
    expr_leaves(t->c, x, EXPR_YP, &l);
    if (l.len) return NULL;
    x = expr_subst(t->c, x, start_leaf, t);
    expr_leaves(t->c, x, EXPR_Y, &l);
    return l.len ? NULL : x;
}

/* The explicit value of a state derivative (blt.c: SVar.value, what its
 * block's residual y' - value = 0 solves to) at the start values of the
 * others; NULL when it still needs a y' or a y.  One substitution: the
 * block's residual need not be lowered and solved again. */
typedef struct {
    St *t;
    bool bad;          /* a y' in the value, or a y in a start value */
} AtStart;

static Expr *value_leaf(void *ud, Expr *leaf) {
    AtStart *a = ud;
    if (leaf->kind == EXPR_YP) a->bad = true;
    if (leaf->kind != EXPR_Y) return leaf;
    Expr *x = a->t->s->start[leaf->index];
    if (!expr_is_const(x)) {
        ExprVec l = {0};
        expr_leaves(a->t->c, x, EXPR_Y, &l);
        a->bad |= l.len > 0;
    }
    return x;
}

static Expr *value_at_start(St *t, Expr *value) {
    AtStart a = {t, false};
    Expr *x = expr_subst(t->c, lower(t, value), value_leaf, &a);
    return a.bad ? NULL : x;
}

/* A better first guess of y' for IDACalcIC than 0: where a state's
 * derivative is given by its own equation (`der(x) = v`, BLT block of
 * kind state derivative), its value at the start values of the others
 * (an instance of a run: its representative's, initruns.c). */
static void start_derivatives(St *t, StInitRuns *runs) {
    System *s = t->s;
    for (uint32_t i = 0; i < t->blocks.len; i++) {
        Block *b = &t->blocks.data[i];
        if (b->kind != SB_STATE_DER) continue;
        SVar *d = &t->sv.data[t->bvars.data[b->first]];
        uint32_t y = (uint32_t)t->sv.data[d->yp_of].slot, e = t->beqs.data[b->first];
        Expr *x;
        if (!st_has_value(d)) x = solved_at_start(t, b, expr_leaf(t->c, EXPR_YP, y));
        else if (!st_init_run_start_yp(t, runs, e, &x))
            st_init_run_note_yp(t, runs, e, x = value_at_start(t, st_sv_value(t, t->bvars.data[b->first])));
        if (x) s->start_yp[y] = x;
    }
}

/* The start value of an unknown kept implicit although its equation gives
 * it explicitly (blt.c: a solution depending on too many unknowns) and
 * with neither a guess nor an initial relation: that solution at the start
 * values of the others, in BLT order (so a chain of them starts assembled). */
static void start_implicit(St *t) {
    System *s = t->s;
    for (uint32_t i = 0; i < t->blocks.len; i++) {
        Block *b = &t->blocks.data[i];
        if (b->kind != SB_IMPLICIT) continue;
        SVar *v = &t->sv.data[t->bvars.data[b->first]];
        if (v->role != SR_ALG || v->slot < 0 || t->init_of[v->slot] || flat_attr(t->m, &t->m->vars.data[v->base])->guess) continue;
        Expr *x = solved_at_start(t, b, expr_leaf(t->c, EXPR_Y, (uint32_t)v->slot));
        if (x) s->start[v->slot] = x;
    }
}

/* initial relation `init` (flat equation `flat`) as a start value: the one
 * y it mentions (no y'), with *value solved for it by the solvability rule;
 * -1 when it is not of that form */
static int32_t start_of(St *t, Expr *init, uint32_t flat, Expr **value) {
    Expr *r = lower(t, init);
    if (r->kind == EXPR_Y) { /* y = 0 (`initial x = 0`): expr_solve_linear's -(0) / 1, without the walks */
        *value = expr_div(t->c, expr_neg(t->c, expr_const(t->c, 0)), expr_const(t->c, 1));
        return (int32_t)r->index;
    }
    ExprVec *l = &t->leaves; /* reused (one relation per variable of a million-cell model) */
    l->len = 0;
    expr_leaves(t->c, r, EXPR_Y, l);
    Expr *y = l->len == 1 ? l->data[0] : NULL;
    l->len = 0;
    expr_leaves(t->c, r, EXPR_YP, l);
    *value = y && l->len == 0 ? st_solve(t, r, y, (int32_t)flat) : NULL;
    return *value ? (int32_t)y->index : -1;
}

/* the left side of initial relation i lowered, when it is one variable */
static Expr *init_lhs(St *t, uint32_t i) {
    FlatEq *q = &t->m->eqs.data[i];
    return q->lhs->kind == EXPR_VAR ? lower(t, st_to_sv(t, q->lhs)) : NULL;
}

static bool has_y(St *t, Expr *e) {
    ExprVec l = {0};
    expr_leaves(t->c, e, EXPR_Y, &l);
    expr_leaves(t->c, e, EXPR_YP, &l);
    return l.len > 0;
}

/* the y slot a lowered variable is (an alias of: +-y + offset), else -1 */
static int32_t alias_slot(St *t, Expr *l) {
    while (l && (l->kind == EXPR_NEG || l->kind == EXPR_ADD)) {
        if (l->kind == EXPR_NEG) { l = l->args[0]; continue; }
        bool a0 = has_y(t, l->args[0]), a1 = has_y(t, l->args[1]);
        if (a0 == a1) return -1;
        l = a0 ? l->args[0] : l->args[1];
    }
    return l && l->kind == EXPR_Y ? (int32_t)l->index : -1;
}

typedef struct {
    HashMap lhs;            /* lowered left side of an override -> itself */
    unsigned char *slot;    /* y slot -> an override sets it (or an alias of it) */
    uint32_t n;             /* overrides */
} Overrides;

static Overrides find_overrides(St *t, Expr **init) {
    Overrides o = {{0}, ARENA_ARRAY(t->arena, unsigned char, t->s->ny + 1), 0};
    for (uint32_t i = 0; i < t->m->eqs.len; i++) {
        FlatEq *q = &t->m->eqs.data[i];
        if (q->kind != FE_INITIAL || !q->is_override || !init[i]) continue;
        o.n++;
        Expr *l = init_lhs(t, i);
        if (l) hmap_put(t->arena, &o.lhs, l->id + 1, l);
        int32_t y = alias_slot(t, l);
        if (y >= 0) o.slot[y] = 1;
    }
    return o;
}

/* a model relation that an override replaces (none without overrides: the
 * relation is not lowered and solved here a second time) */
static bool replaced(St *t, const Overrides *o, Expr **init, uint32_t i) {
    if (!o->n || t->m->eqs.data[i].is_override) return false;
    Expr *l = init_lhs(t, i), *x;
    if (l && hmap_get(&o->lhs, l->id + 1)) return true;
    int32_t y = start_of(t, init[i], i, &x);
    return y >= 0 && o->slot[y];
}

/* A second start value x for slot y (first from relation `first`):
 * true when decided here -- the same value (redundant, dropped with a
 * warning) or two different constants (an error naming both); false when
 * it depends on parameters: both stay, the runtime checks them. */
static bool second_start(St *t, uint32_t y, uint32_t first, uint32_t i, Expr *x) {
    Expr *x0 = t->s->start[y];
    FlatEq *q = &t->m->eqs.data[i];
    if (x == x0) {
        diag_warning(q->span, "redundant initial value for `%s`: %s repeats %s (aliases of one variable); "
                     "ignored", t->s->y_names[y], st_eq_text(t, i, "`initial ", "`"), st_eq_text(t, first, "`initial ", "`"));
        return true;
    }
    if (!expr_is_const(x) || !expr_is_const(x0)) return false;
    diag_error(q->span, "conflicting initial values for `%s` (aliases of one variable): %s gives %s, %s gives "
               "%s", t->s->y_names[y], st_eq_text(t, first, "`initial ", "`"), dyrt_num(x0->value).s,
               st_eq_text(t, i, "`initial ", "`"), dyrt_num(x->value).s);
    diag_note(t->m->eqs.data[first].span, "the other initial value");
    return true;
}

static void start_values(St *t, Expr **init, StInitRuns *runs, bool *explicit_only) {
    System *s = t->s;
    s->start = ARENA_ARRAY(t->arena, Expr *, s->ny + 1);
    s->start_yp = ARENA_ARRAY(t->arena, Expr *, s->ny + 1);
    ExprCtx *c = t->c;
    for (uint32_t i = 0; i < t->sv.len; i++) {
        SVar *v = &t->sv.data[i];
        if (v->slot < 0) continue;
        FlatVar *fv = &t->m->vars.data[v->base];
        Expr *g = flat_attr(t->m, fv)->guess;
        s->start[v->slot] = v->order == 0 && g ? lower(t, g) : expr_const(c, 0);
        s->start_yp[v->slot] = expr_const(c, 0);
    }
    *explicit_only = true;
    Overrides ov = find_overrides(t, init);
    int32_t *by = ARENA_ARRAY(t->arena, int32_t, s->ny + 1); /* slot -> relation that set it + 1 */
    for (uint32_t i = 0; i < t->m->eqs.len; i++) {
        if (t->m->eqs.data[i].kind != FE_INITIAL || !init[i]) continue;
        if (replaced(t, &ov, init, i)) { init[i] = NULL; continue; }
        Expr *x;
        int32_t y = start_of(t, init[i], i, &x);
        bool simple = y >= 0 && s->y_is_diff[y];
        if (y >= 0 && !simple) { /* an algebraic unknown: a good guess, and --initial may replace it */
            s->start[y] = x;
            if (!t->init_of[y]) t->init_of[y] = (int32_t)i + 1;
        }
        if (!simple) { *explicit_only = false; continue; }
        if (by[y]) { /* a second start value for one alias set */
            if (second_start(t, (uint32_t)y, (uint32_t)by[y] - 1, i, x)) init[i] = NULL;
            else *explicit_only = false;
            continue;
        }
        by[y] = (int32_t)i + 1;
        t->init_of[y] = by[y];
        s->start[y] = x;
    }
    arena_release(t->arena, by, sizeof *by * ((size_t)s->ny + 1));
    hmap_release(t->arena, &ov.lhs);
    st_set_starts(t);
    start_implicit(t);
    start_derivatives(t, runs);
}

/* P(p) -> Z for missing parameters (start values may depend on them) */
static Expr *map_missing(void *ud, Expr *leaf) {
    St *t = ud;
    if (leaf->kind == EXPR_P && t->pz[leaf->index] >= 0) return expr_leaf(t->c, EXPR_Z, (uint32_t)t->pz[leaf->index]);
    return leaf;
}

/* row origins: an equation of the simulation system (SEq index), an
 * initial relation (ROW_INITIAL | flat index), a start row of a state
 * (ROW_FIXED | y), of a `missing` parameter with a guess (ROW_GUESS | p) */
#define ROW_INITIAL 0x80000000u
#define ROW_FIXED 0x40000000u
#define ROW_GUESS 0x20000000u
#define ROW_INDEX 0x1fffffffu

typedef struct {
    uint32_t row, col;
    Expr *d;               /* d row / d z_col */
} Ent;

typedef Vec(Ent) EntVec;

static void jac_row(St *t, ExprVec *rows, uint32_t r, EntVec *ents) {
    ExprVec *zs = &t->leaves;
    zs->len = 0;
    expr_leaves(t->c, rows->data[r], EXPR_Z, zs);
    for (uint32_t i = 0; i < zs->len; i++) {
        uint32_t col = zs->data[i]->index;
        vec_push(t->arena, ents, ((Ent){r, col, expr_diff_once(t->c, rows->data[r], expr_leaf(t->c, EXPR_Z, col))}));
    }
}

/* row r, model row `row` of a run: its representative's entries
 * [a, b) renamed (initruns.c) */
static bool jac_run_row(St *t, StInitRuns *runs, uint32_t r, uint32_t row, EntVec *ents, uint32_t a, uint32_t b) {
    uint32_t len = ents->len;
    bool ok = true;
    for (uint32_t k = a; k < b && ok; k++) {
        int64_t col = st_init_run_jac_col(runs, row, ents->data[k].col);
        ok = col >= 0;
        vec_push(t->arena, ents, ((Ent){r, (uint32_t)col, st_init_run_jac_entry(t, runs, row, ents->data[k].d, &ok)}));
    }
    if (!ok) ents->len = len;
    return ok;
}

/* The CSC pattern of d rows / d z and its entries, row by row; rows that
 * are model rows of a run rename their representative's (cand: row ->
 * its candidate, the residual row for the first nmodel; sel: residual
 * row -> row) */
static void init_jacobian(St *t, ExprVec *rows, const uint32_t *cand, const int32_t *sel, uint32_t nmodel,
                          StInitRuns *runs) {
    System *s = t->s;
    EntVec ents = {0};
    uint32_t *first = ARENA_ARRAY(t->arena, uint32_t, rows->len + 1);
    for (uint32_t r = 0; r < rows->len; r++) {
        first[r] = ents.len;
        int32_t rep = cand[r] < nmodel ? st_init_run_jac_row(runs, cand[r]) : -1;
        if (rep >= 0) rep = sel[rep];
        if (rep < 0 || !jac_run_row(t, runs, r, cand[r], &ents, first[rep], first[rep + 1])) jac_row(t, rows, r, &ents);
    }
    s->init_nnz = ents.len;
    s->init_colptr = ARENA_ARRAY(t->arena, int32_t, s->init_n + 1);
    s->init_rowidx = ARENA_ARRAY(t->arena, int32_t, ents.len + 1);
    s->init_jac = ARENA_ARRAY(t->arena, Expr *, ents.len + 1);
    for (uint32_t i = 0; i < ents.len; i++) s->init_colptr[ents.data[i].col + 1]++;
    for (uint32_t c = 0; c < s->init_n; c++) s->init_colptr[c + 1] += s->init_colptr[c];
    int32_t *fill = ARENA_ARRAY(t->arena, int32_t, s->init_n + 1);
    for (uint32_t i = 0; i < ents.len; i++) {
        Ent e = ents.data[i];
        int32_t k = s->init_colptr[e.col] + fill[e.col]++;
        s->init_rowidx[k] = (int32_t)e.row;
        s->init_jac[k] = e.d;
    }
    arena_release(t->arena, fill, sizeof *fill * ((size_t)s->init_n + 1));
    arena_release(t->arena, first, sizeof *first * ((size_t)rows->len + 1));
    vec_release(t->arena, &ents);
}

/* z layout and targets */
static void init_layout(St *t) {
    System *s = t->s;
    uint32_t nd = 0, nmiss = 0;
    for (uint32_t y = 0; y < s->ny; y++) nd += s->y_is_diff[y];
    for (uint32_t p = 0; p < s->np; p++) nmiss += (s->param_flags[p] & SYS_PARAM_MISSING) != 0;
    s->init_n = s->ny + nd + nmiss;
    s->init_names = ARENA_ARRAY(t->arena, const char *, s->init_n + 1);
    s->init_guess = ARENA_ARRAY(t->arena, Expr *, s->init_n + 1);
    s->init_target_kind = ARENA_ARRAY(t->arena, uint8_t, s->init_n + 1);
    s->init_target_index = ARENA_ARRAY(t->arena, uint32_t, s->init_n + 1);
    t->zslot = ARENA_ARRAY(t->arena, int32_t, s->ny + 1);
    uint32_t z = 0;
    for (uint32_t y = 0; y < s->ny; y++, z++) {
        s->init_names[z] = s->y_names[y];
        s->init_guess[z] = s->start[y];
        s->init_target_kind[z] = EXPR_Y;
        s->init_target_index[z] = y;
    }
    for (uint32_t y = 0; y < s->ny; y++) {
        t->zslot[y] = -1;
        if (!s->y_is_diff[y]) continue;
        t->zslot[y] = (int32_t)z;
        s->init_names[z] = arena_printf(t->arena, "der(%s)", s->y_names[y]);
        s->init_guess[z] = s->start_yp[y];
        s->init_target_kind[z] = EXPR_YP;
        s->init_target_index[z++] = y;
    }
    for (uint32_t p = 0; p < s->np; p++) {
        if (!(s->param_flags[p] & SYS_PARAM_MISSING)) continue;
        FlatVar *fv = &t->m->vars.data[t->pvar[p]];
        t->pz[p] = (int32_t)z;
        s->init_names[z] = s->param_names[p];
        Expr *g = flat_attr(t->m, fv)->guess;
        s->init_guess[z] = g ? lower(t, g) : expr_const(t->c, 0);
        s->init_target_kind[z] = EXPR_P;
        s->init_target_index[z++] = p;
    }
}

/* candidate rows by class (see the opening comment), in this order */
typedef enum { RC_MODEL, RC_OVERRIDE, RC_INITIAL, RC_START, RC_COUNT } RowClass;

typedef struct {
    ExprVec rows;           /* residuals over Z, P, TIME */
    U32Vec src;             /* origin of each row */
    uint32_t end[RC_COUNT]; /* class c: rows [end[c-1], end[c]) */
    int32_t *rm, *cm;       /* matching: row -> z, z -> row, -1 = none */
} Cand;

static const char *row_name(St *t, uint32_t o) {
    if (o & ROW_FIXED) return arena_printf(t->arena, "start value of %s", t->s->y_names[o & ROW_INDEX]);
    if (o & ROW_GUESS) return arena_printf(t->arena, "guess of %s", t->s->param_names[o & ROW_INDEX]);
    if (o & ROW_INITIAL) return st_eq_text(t, o & ROW_INDEX, "initial ", "");
    SEq *q = &t->eq.data[o];
    return q->flat < 0 ? "derivative of a state" : st_eq_text(t, (uint32_t)q->flat, "", q->order ? " (differentiated)" : "");
}

static void add_row(St *t, Cand *c, Expr *r, uint32_t src) {
    vec_push(t->arena, &c->rows, r);
    vec_push(t->arena, &c->src, src);
}

/* every candidate row, class by class (t->to_init is set) */
static void candidates(St *t, Expr **init, StInitRuns *runs, Cand *c) {
    System *s = t->s;
    for (uint32_t r = 0; r < t->resid_sv.len; r++) /* a row of a run: its representative's renamed */
        add_row(t, c, st_init_run_row(t, runs, r, c->rows.data), t->resid_eq.data[r]);
    c->end[RC_MODEL] = c->rows.len;
    for (int pass = 0; pass < 2; pass++) { /* the overrides, then the model's own */
        for (uint32_t i = 0; i < t->m->eqs.len; i++) {
            FlatEq *q = &t->m->eqs.data[i];
            if (q->kind == FE_INITIAL && init[i] && q->is_override == (pass == 0))
                add_row(t, c, lower(t, init[i]), ROW_INITIAL | i);
        }
        c->end[RC_OVERRIDE + pass] = c->rows.len;
    }
    for (uint32_t y = 0; y < s->ny; y++)
        if (s->y_is_diff[y])
            add_row(t, c, expr_sub(t->c, expr_leaf(t->c, EXPR_Z, y), expr_subst(t->c, s->start[y], map_missing, t)),
                    ROW_FIXED | y);
    for (uint32_t p = 0; p < s->np; p++) { /* a `missing` parameter nothing else determines: its guess */
        FlatVar *fv = &t->m->vars.data[t->pvar[p]];
        Expr *g = flat_attr(t->m, fv)->guess;
        if (t->pz[p] >= 0 && g)
            add_row(t, c, expr_sub(t->c, expr_leaf(t->c, EXPR_Z, (uint32_t)t->pz[p]), lower(t, g)), ROW_GUESS | p);
    }
    c->end[RC_START] = c->rows.len;
}

/* maximum matching of rows to z, extended class by class */
static void select_rows(St *t, Cand *c) {
    uint32_t n = t->s->init_n, nr = c->rows.len;
    StGraph g = {nr, n, ARENA_ARRAY(t->arena, uint32_t, nr + 1), NULL};
    U32Vec adj = {0};
    for (uint32_t r = 0; r < nr; r++) {
        ExprVec zs = {0};
        expr_leaves(t->c, c->rows.data[r], EXPR_Z, &zs);
        for (uint32_t k = 0; k < zs.len; k++) vec_push(t->arena, &adj, zs.data[k]->index);
        g.ptr[r + 1] = adj.len;
    }
    g.adj = adj.data;
    c->rm = ARENA_ARRAY(t->arena, int32_t, nr + 1);
    c->cm = ARENA_ARRAY(t->arena, int32_t, n + 1);
    memset(c->rm, 0xff, sizeof *c->rm * (nr + 1));
    memset(c->cm, 0xff, sizeof *c->cm * (n + 1));
    for (int k = 0; k < RC_COUNT; k++) {
        g.nrows = c->end[k];
        st_bip_extend(t->arena, &g, c->rm, c->cm);
    }
}

/* Which unknown to call free, of several that could be: a `missing`
 * parameter (3) rather than a state (2), an algebraic unknown (1) or a
 * derivative (0), which the model's equations determine once the others
 * are known. */
static int free_rank(const System *s, uint32_t z) {
    if (s->init_target_kind[z] == EXPR_P) return 3;
    if (s->init_target_kind[z] == EXPR_YP) return 0;
    return s->y_is_diff[s->init_target_index[z]] ? 2 : 1;
}

typedef struct {
    uint32_t *ptr, *rows;          /* z -> the selected rows that contain it (CSC) */
    int32_t *prev_row, *prev_z;    /* search tree: how z was reached */
    uint32_t *queue;
} FreeSearch;

static void free_search_init(St *t, Cand *c, FreeSearch *f) {
    uint32_t n = t->s->init_n;
    U32Vec zr = {0}, rz = {0};
    for (uint32_t r = 0; r < c->rows.len; r++) {
        if (c->rm[r] < 0) continue;
        ExprVec zs = {0};
        expr_leaves(t->c, c->rows.data[r], EXPR_Z, &zs);
        for (uint32_t k = 0; k < zs.len; k++) {
            vec_push(t->arena, &zr, zs.data[k]->index);
            vec_push(t->arena, &rz, r);
        }
    }
    f->ptr = ARENA_ARRAY(t->arena, uint32_t, n + 2);
    f->rows = ARENA_ARRAY(t->arena, uint32_t, zr.len + 1);
    for (uint32_t k = 0; k < zr.len; k++) f->ptr[zr.data[k] + 2]++;
    for (uint32_t z = 0; z < n; z++) f->ptr[z + 2] += f->ptr[z + 1];
    for (uint32_t k = 0; k < zr.len; k++) f->rows[f->ptr[zr.data[k] + 1]++] = rz.data[k];
    f->prev_row = ARENA_ARRAY(t->arena, int32_t, n + 1);
    f->prev_z = ARENA_ARRAY(t->arena, int32_t, n + 1);
    f->queue = ARENA_ARRAY(t->arena, uint32_t, n + 1);
}

/* From the free unknown z0, an alternating path (a row containing z, the
 * unknown that row is matched to, ...) to the matched unknown of the highest
 * free_rank above z0's; if one exists, shift the matching along it so that
 * unknown is free instead (the same rows stay selected).  Breadth-first,
 * O(E) per free unknown; only on the error path. */
static void prefer_free(St *t, Cand *c, FreeSearch *f, uint32_t z0) {
    const System *s = t->s;
    memset(f->prev_z, 0xff, sizeof *f->prev_z * s->init_n);
    uint32_t head = 0, tail = 0, best = z0;
    f->queue[tail++] = z0;
    f->prev_z[z0] = (int32_t)z0;
    while (head < tail) {
        uint32_t z = f->queue[head++];
        for (uint32_t k = f->ptr[z]; k < f->ptr[z + 1]; k++) {
            uint32_t r = f->rows[k], z2 = (uint32_t)c->rm[r];
            if (f->prev_z[z2] >= 0) continue;
            f->prev_z[z2] = (int32_t)z;
            f->prev_row[z2] = (int32_t)r;
            f->queue[tail++] = z2;
            if (free_rank(s, z2) > free_rank(s, best)) best = z2;
        }
    }
    if (best == z0) return;
    c->cm[best] = -1;
    for (uint32_t z = best; z != z0;) {
        uint32_t r = (uint32_t)f->prev_row[z], prev = (uint32_t)f->prev_z[z];
        c->rm[r] = (int32_t)prev;
        c->cm[prev] = (int32_t)r;
        z = prev;
    }
}

/* The declaration of unknown z, for the error's location. */
static Span z_decl(St *t, uint32_t z) {
    const System *s = t->s;
    uint32_t i = s->init_target_index[z];
    if (s->init_target_kind[z] == EXPR_P) return t->m->vars.data[t->pvar[i]].span;
    for (uint32_t v = 0; v < t->sv.len; v++)
        if (t->sv.data[v].slot == (int32_t)i && st_is_unknown(t, v)) return t->m->vars.data[t->sv.data[v].base].span;
    return (Span){0};
}

/* Unknowns no row determines: an error naming them (the `missing`
 * parameters and states among the candidates, prefer_free), at the first
 * one's declaration. */
static bool all_determined(St *t, Cand *c) {
    System *s = t->s;
    uint32_t free = 0;
    for (uint32_t z = 0; z < s->init_n; z++) free += c->cm[z] < 0;
    if (!free) return true;
    FreeSearch fs;
    free_search_init(t, c, &fs);
    for (uint32_t z = 0; z < s->init_n; z++)
        if (c->cm[z] < 0 && free_rank(s, z) < 3) prefer_free(t, c, &fs, z);
    Span sp = {0};
    for (uint32_t z = 0; z < s->init_n && !sp.file; z++)
        if (c->cm[z] < 0) sp = z_decl(t, z);
    DiagList vars = {.arena = t->arena}, params = {.arena = t->arena};
    for (uint32_t z = 0; z < s->init_n; z++)
        if (c->cm[z] < 0) diag_list_add(s->init_target_kind[z] == EXPR_P ? &params : &vars, s->init_names[z]);
    const char *hint = "`dyadc flatten --structure`";
    diag_error(sp, "the initialization system of `%s` is under-determined: nothing determines %s%s%s%s%s", t->m->name,
               vars.count ? diag_list_text(&vars, hint) : "", vars.count && params.count ? " and " : "",
               params.count ? "the `missing` parameter" : "", params.count > 1 ? "s " : params.count ? " " : "",
               params.count ? diag_list_text(&params, hint) : "");
    return false;
}

/* Warnings: the states and the `missing` parameters whose start row was
 * needed (nothing else sets them). */
static void warn_started(St *t, Cand *c) {
    DiagList states = {.arena = t->arena}, params = {.arena = t->arena};
    for (uint32_t r = c->end[RC_INITIAL]; r < c->end[RC_START]; r++) {
        uint32_t o = c->src.data[r];
        if (c->rm[r] >= 0 && (o & ROW_FIXED)) diag_list_add(&states, t->s->y_names[o & ROW_INDEX]);
        if (c->rm[r] >= 0 && (o & ROW_GUESS)) diag_list_add(&params, t->s->param_names[o & ROW_INDEX]);
    }
    const char *hint = "`dyadc flatten --structure`";
    if (states.count)
        diag_warning((Span){0}, "no initial value for the state%s %s of `%s`; starting at the guess/default",
                     states.count > 1 ? "s" : "", diag_list_text(&states, hint), t->m->name);
    if (params.count)
        diag_warning((Span){0}, "nothing determines the `missing` parameter%s %s of `%s` at initialization; "
                     "using %s guess", params.count > 1 ? "s" : "", diag_list_text(&params, hint), t->m->name,
                     params.count > 1 ? "their" : "its");
}

/* the selected rows that determine the unknowns of row r, for messages */
static const char *determined_by(St *t, Cand *c, uint32_t r) {
    ExprVec zs = {0};
    expr_leaves(t->c, c->rows.data[r], EXPR_Z, &zs);
    char *list = NULL;
    for (uint32_t k = 0; k < zs.len && k < 4; k++) {
        int32_t by = c->cm[zs.data[k]->index];
        if (by < 0) continue;
        const char *nm = row_name(t, c->src.data[by]);
        list = list ? arena_printf(t->arena, "%s; `%s`", list, nm) : arena_printf(t->arena, "`%s`", nm);
    }
    if (zs.len > 4) list = arena_printf(t->arena, "%s; ...", list ? list : "");
    return list ? list : "nothing (it involves no unknown)";
}

typedef struct {
    ExprVec pairs;          /* lhs, rhs of each check, over Z, P, TIME */
    Vec(const char *) names, with;
} Checks;

/* Row r is left over: a check for the runtime, or decided here when it is
 * constant.  False after an error. */
static bool add_check(St *t, Cand *c, uint32_t r, Checks *k) {
    uint32_t o = c->src.data[r];
    if (!(o & ROW_INITIAL)) {
        diag_internal("structure: equation `%s` of the simulation system left out of the initialization system",
                      row_name(t, o));
        return false;
    }
    FlatEq *q = &t->m->eqs.data[o & ROW_INDEX];
    Expr *l = lower(t, st_to_sv(t, q->lhs)), *rhs = lower(t, st_to_sv(t, q->rhs));
    const char *nm = row_name(t, o), *with = determined_by(t, c, r);
    if (expr_is_const(l) && expr_is_const(rhs)) {
        if (l->value == rhs->value) {
            diag_warning(q->span, "redundant initial relation `%s`: it holds already, with its unknowns "
                                  "determined by %s; ignored", nm, with);
            return true;
        }
        diag_error(q->span, "inconsistent initialization: `%s` cannot hold (its sides are %s and %s) with "
                            "its unknowns determined by %s", nm, dyrt_num(l->value).s, dyrt_num(rhs->value).s, with);
        return false;
    }
    vec_push(t->arena, &k->pairs, l);
    vec_push(t->arena, &k->pairs, rhs);
    vec_push(t->arena, &k->names, nm);
    vec_push(t->arena, &k->with, with);
    return true;
}

/* The selected rows as the System's init system, the left-over relations
 * as its checks; names and initial_row (the runtime's messages, --initial). */
static bool emit_rows(St *t, Cand *c, StInitRuns *runs) {
    System *s = t->s;
    ExprVec sel = {0};
    Checks k = {0};
    s->init_eq_names = ARENA_ARRAY(t->arena, const char *, s->init_n + 1);
    s->initial_row = ARENA_ARRAY(t->arena, int32_t, s->ny + 1);
    for (uint32_t y = 0; y < s->ny; y++) s->initial_row[y] = -1;
    int32_t *row_of = ARENA_ARRAY(t->arena, int32_t, t->m->eqs.len + 1); /* flat initial eq -> row + 1 */
    int32_t *rz = ARENA_ARRAY(t->arena, int32_t, s->init_n + 1); /* selected row -> its z */
    uint32_t *cand = ARENA_ARRAY(t->arena, uint32_t, s->init_n + 1); /* selected row -> candidate */
    int32_t *selr = ARENA_ARRAY(t->arena, int32_t, c->end[RC_MODEL] + 1); /* model row -> selected row */
    memset(selr, 0xff, sizeof *selr * (c->end[RC_MODEL] + 1));
    bool ok = true;
    for (uint32_t r = 0; r < c->rows.len; r++) {
        uint32_t o = c->src.data[r];
        if (c->rm[r] < 0) {
            if (r < c->end[RC_INITIAL]) ok &= add_check(t, c, r, &k);
            continue;
        }
        uint32_t row = sel.len;
        rz[row] = c->rm[r];
        cand[row] = r;
        if (r < c->end[RC_MODEL]) selr[r] = (int32_t)row;
        vec_push(t->arena, &sel, c->rows.data[r]);
        s->init_eq_names[row] = row_name(t, o);
        if (o & ROW_FIXED) s->initial_row[o & ROW_INDEX] = (int32_t)row;
        if (o & ROW_INITIAL) row_of[o & ROW_INDEX] = (int32_t)row + 1;
    }
    if (!ok) return false;
    for (uint32_t y = 0; y < s->ny; y++) /* the relation --initial replaces, else the start row */
        if (t->init_of[y] && row_of[t->init_of[y] - 1]) s->initial_row[y] = row_of[t->init_of[y] - 1] - 1;
    init_jacobian(t, &sel, cand, selr, c->end[RC_MODEL], runs);
    s->init_ncheck = k.names.len;
    s->init_resid = ARENA_ARRAY(t->arena, Expr *, sel.len + k.pairs.len + 1);
    if (sel.len) memcpy(s->init_resid, sel.data, sizeof *sel.data * sel.len);
    if (k.pairs.len) memcpy(s->init_resid + sel.len, k.pairs.data, sizeof *k.pairs.data * k.pairs.len);
    const char **names = ARENA_ARRAY(t->arena, const char *, s->init_n + k.names.len + 1);
    memcpy(names, s->init_eq_names, sizeof *names * s->init_n);
    if (k.names.len) memcpy(names + s->init_n, k.names.data, sizeof *names * k.names.len);
    s->init_eq_names = names;
    s->init_check_with = k.with.data;
    st_init_blocks(t, rz);
    return true;
}

/* Nonlinear algebraic blocks are where IDACalcIC alone can fail without
 * being able to say which equation: with an initialization system the
 * runtime's damped Newton solves them and names the equations if it fails. */
static bool has_nonlinear_blocks(St *t) {
    for (uint32_t b = 0; b < t->blocks.len; b++) {
        uint8_t k = t->blocks.data[b].kind;
        if (k == SB_NONLINEAR || k == SB_IMPLICIT || k == SB_SPARSE) return true;
    }
    return false;
}

void struct_build_init(St *t) {
    System *s = t->s;
    bool explicit_only;
    Expr **init = initial_relations(t);
    if (!init) return;
    StInitRuns *runs = st_init_runs(t);
    t->init_of = ARENA_ARRAY(t->arena, int32_t, s->ny + 1);
    unsigned errors = diag_error_count();
    start_values(t, init, runs, &explicit_only);
    if (diag_error_count() > errors) return;
    bool missing = false;
    for (uint32_t p = 0; p < s->np; p++) missing |= (s->param_flags[p] & SYS_PARAM_MISSING) != 0;
    if (explicit_only && !missing && !has_nonlinear_blocks(t)) {
        arena_release(t->arena, init, sizeof *init * ((size_t)t->m->eqs.len + 1));
        st_init_runs_release(t, runs);
        return;
    }
    init_layout(t);
    t->to_init = true;
    Cand c = {0};
    candidates(t, init, runs, &c);
    select_rows(t, &c);
    bool ok = all_determined(t, &c);
    if (ok) warn_started(t, &c);
    if (ok) ok = emit_rows(t, &c, runs);
    t->to_init = false;
    if (!ok) s->init_n = 0;
    arena_release(t->arena, init, sizeof *init * ((size_t)t->m->eqs.len + 1));
    st_init_runs_release(t, runs);
}
