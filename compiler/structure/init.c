/*
 * init.c -- the initialization system.
 *
 * Starting values: `initial x = e` with e free of unknowns is a start value
 * of x; otherwise the guess, otherwise 0.  When every initial relation is
 * such a start value and no parameter is `missing`, no system is built
 * (init_n = 0): the runtime fixes the differential unknowns at their start
 * and lets IDACalcIC find the algebraic ones and y'.
 *
 * Otherwise the unknowns are z = [y | y' of differential y | missing
 * parameters] and the equations are F(t0, y, y', p) = 0 (the index-reduced
 * residuals, so the differentiated constraints hold at t0 too) plus every
 * initial relation.  Under-determined: differential unknowns that no initial
 * relation mentions are fixed at their start value (a warning lists them).
 * Over-determined: an error that names the initial relations.
 */
#include "structure_internal.h"


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
        ExprVec vs = {0};
        expr_leaves(t->c, r[i], EXPR_VAR, &vs);
        for (uint32_t k = 0; k < vs.len; k++) {
            SVar *v = &t->sv.data[vs.data[k]->index];
            if (!st_is_unknown(t, vs.data[k]->index) || v->role != SR_NONE) continue;
            diag_error(q->span, "`%s` appears in an initial relation, but `%s` is not a state of "
                                "the simulation system", st_sv_name(t, vs.data[k]->index),
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

/* A better first guess of y' for IDACalcIC than 0: where a state's
 * derivative is given by its own equation (`der(x) = v`, BLT block of
 * kind state derivative), its value at the start values of the others. */
static void start_derivatives(St *t) {
    System *s = t->s;
    for (uint32_t i = 0; i < t->blocks.len; i++) {
        Block *b = &t->blocks.data[i];
        if (b->kind != BK_STATE_DER) continue;
        SVar *d = &t->sv.data[t->bvars.data[b->first]];
        uint32_t y = (uint32_t)t->sv.data[d->yp_of].slot;
        Expr *x = expr_solve_linear(t->c, lower(t, b->res), expr_leaf(t->c, EXPR_YP, y));
        if (!x) continue;
        ExprVec l = {0};
        expr_leaves(t->c, x, EXPR_YP, &l);
        if (l.len) continue;
        x = expr_subst(t->c, x, start_leaf, t);
        expr_leaves(t->c, x, EXPR_Y, &l);
        if (!l.len) s->start_yp[y] = x;
    }
}

static void start_values(St *t, Expr **init, bool *explicit_only) {
    System *s = t->s;
    s->start = ARENA_ARRAY(t->arena, Expr *, s->ny + 1);
    s->start_yp = ARENA_ARRAY(t->arena, Expr *, s->ny + 1);
    ExprCtx *c = t->c;
    for (uint32_t i = 0; i < t->sv.len; i++) {
        SVar *v = &t->sv.data[i];
        if (v->slot < 0) continue;
        FlatVar *fv = &t->m->vars.data[v->base];
        s->start[v->slot] = v->order == 0 && fv->guess ? lower(t, fv->guess) : expr_const(c, 0);
        s->start_yp[v->slot] = expr_const(c, 0);
    }
    *explicit_only = true;
    int32_t *by = ARENA_ARRAY(t->arena, int32_t, s->ny + 1); /* slot -> relation that set it + 1 */
    for (uint32_t i = 0; i < t->m->eqs.len; i++) {
        if (t->m->eqs.data[i].kind != FE_INITIAL) continue;
        Expr *r = lower(t, init[i]);
        ExprVec ys = {0}, yps = {0};
        expr_leaves(c, r, EXPR_Y, &ys);
        expr_leaves(c, r, EXPR_YP, &yps);
        Expr *x = ys.len == 1 && yps.len == 0 ? expr_solve_linear(c, r, ys.data[0]) : NULL;
        bool simple = x && s->y_is_diff[ys.data[0]->index];
        if (x && !simple) { /* an algebraic unknown: a good guess, and --initial may replace it */
            s->start[ys.data[0]->index] = x;
            if (!t->init_of[ys.data[0]->index]) t->init_of[ys.data[0]->index] = (int32_t)i + 1;
        }
        if (!simple) { *explicit_only = false; continue; }
        uint32_t y = ys.data[0]->index;
        if (by[y]) { /* a second start value for one alias set: the first relation wins */
            diag_warning(t->m->eqs.data[i].span, "a second initial value for `%s` (aliases of one "
                         "variable); the first one is used", s->y_names[y]);
            diag_note(t->m->eqs.data[by[y] - 1].span, "first initial value");
            init[i] = NULL;
            continue;
        }
        by[y] = (int32_t)i + 1;
        t->init_of[y] = by[y];
        s->start[y] = x;
    }
    start_derivatives(t);
}

/* P(p) -> Z for missing parameters (start values may depend on them) */
static Expr *map_missing(void *ud, Expr *leaf) {
    St *t = ud;
    if (leaf->kind == EXPR_P && t->pz[leaf->index] >= 0) return expr_leaf(t->c, EXPR_Z, (uint32_t)t->pz[leaf->index]);
    return leaf;
}

typedef struct { uint32_t row, col; } Ent;

static void init_jacobian(St *t, ExprVec *rows) {
    System *s = t->s;
    Vec(Ent) ents = {0};
    for (uint32_t r = 0; r < rows->len; r++) {
        ExprVec zs = {0};
        expr_leaves(t->c, rows->data[r], EXPR_Z, &zs);
        for (uint32_t i = 0; i < zs.len; i++) vec_push(t->arena, &ents, ((Ent){r, zs.data[i]->index}));
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
        s->init_jac[k] = expr_diff_once(t->c, rows->data[e.row], expr_leaf(t->c, EXPR_Z, e.col));
    }
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
        s->init_guess[z] = fv->guess ? lower(t, fv->guess) : expr_const(t->c, 0);
        s->init_target_kind[z] = EXPR_P;
        s->init_target_index[z++] = p;
    }
}

/* row origins: an equation of the simulation system (SEq index), an
 * initial relation (ROW_INITIAL | flat index), a fixed state (ROW_FIXED | y) */
#define ROW_INITIAL 0x80000000u
#define ROW_FIXED 0x40000000u

static void row_note(St *t, uint32_t src, const char *what) {
    if (src & ROW_FIXED) diag_note((Span){0}, "%s: the start value of `%s`", what, t->s->y_names[src & ~ROW_FIXED]);
    else if (src & ROW_INITIAL) diag_note(t->m->eqs.data[src & ~ROW_INITIAL].span, "%s (initial relation)", what);
    else st_note_eq(t, src, what);
}

/* Under-determined: every state that no initial relation mentions (neither
 * it nor its derivative) is fixed at its guess/default; one warning lists them. */
static void fix_states(St *t, ExprVec *rows, U32Vec *src, unsigned char *mentioned) {
    System *s = t->s;
    DiagList list = {.arena = t->arena};
    for (uint32_t y = 0; y < s->ny && rows->len < s->init_n; y++) {
        if (!s->y_is_diff[y] || mentioned[y] || mentioned[t->zslot[y]]) continue;
        diag_list_add(&list, s->y_names[y]);
        Expr *zy = expr_leaf(t->c, EXPR_Z, y);
        vec_push(t->arena, rows, expr_sub(t->c, zy, expr_subst(t->c, s->start[y], map_missing, t)));
        vec_push(t->arena, src, ROW_FIXED | y);
    }
    if (list.count)
        diag_warning((Span){0}, "no initial value for the state%s %s of `%s`; starting at the guess/default",
                     list.count > 1 ? "s" : "", diag_list_text(&list, "`dyadc flatten --structure`"),
                     t->m->name);
}

/* Counts, then a matching of rows to z unknowns (Hopcroft-Karp): the
 * equations left unmatched over-determine, the unknowns left unmatched are
 * not determined.  Errors name them. */
static bool init_check(St *t, ExprVec *rows, U32Vec *src) {
    System *s = t->s;
    StGraph g = {rows->len, s->init_n, ARENA_ARRAY(t->arena, uint32_t, rows->len + 1), NULL};
    U32Vec adj = {0};
    for (uint32_t r = 0; r < rows->len; r++) {
        ExprVec zs = {0};
        expr_leaves(t->c, rows->data[r], EXPR_Z, &zs);
        for (uint32_t k = 0; k < zs.len; k++) vec_push(t->arena, &adj, zs.data[k]->index);
        g.ptr[r + 1] = adj.len;
    }
    g.adj = adj.data;
    int32_t *rm = ARENA_ARRAY(t->arena, int32_t, rows->len + 1), *cm = ARENA_ARRAY(t->arena, int32_t, s->init_n + 1);
    uint32_t matched = st_bip_match(t->arena, &g, rm, cm);
    if (rows->len == s->init_n && matched == s->init_n) return true;
    Span sp = {0};
    for (uint32_t i = 0; i < t->m->eqs.len && !sp.file; i++)
        if (t->m->eqs.data[i].kind == FE_INITIAL) sp = t->m->eqs.data[i].span;
    const char *how = rows->len > s->init_n ? "over-determined" : rows->len < s->init_n ? "under-determined"
                                                                                      : "structurally singular";
    diag_error(sp, "the initialization system of `%s` is %s: %u equations (%u of the simulation "
                   "system, %u initial relations) for %u unknowns",
               t->m->name, how, rows->len, s->ny, rows->len - s->ny, s->init_n);
    for (uint32_t r = 0; r < rows->len; r++)
        if (rm[r] < 0) row_note(t, src->data[r], "no unknown left for this equation");
    for (uint32_t z = 0; z < s->init_n; z++)
        if (cm[z] < 0) diag_note((Span){0}, "nothing determines `%s`", s->init_names[z]);
    return false;
}

/* System.init_eq_names and initial_row (the runtime's messages, --initial) */
static void init_names(St *t, U32Vec *src) {
    System *s = t->s;
    s->init_eq_names = ARENA_ARRAY(t->arena, const char *, s->init_n + 1);
    s->initial_row = ARENA_ARRAY(t->arena, int32_t, s->ny + 1);
    int32_t *row_of = ARENA_ARRAY(t->arena, int32_t, t->m->eqs.len + 1); /* flat initial eq -> row + 1 */
    for (uint32_t r = 0; r < src->len; r++) {
        uint32_t o = src->data[r];
        if (o & ROW_FIXED) s->init_eq_names[r] = arena_printf(t->arena, "start value of %s", s->y_names[o & ~ROW_FIXED]);
        else if (o & ROW_INITIAL) {
            s->init_eq_names[r] = st_eq_text(t, o & ~ROW_INITIAL, "initial ", "");
            row_of[o & ~ROW_INITIAL] = (int32_t)r + 1;
        } else {
            SEq *q = &t->eq.data[o];
            s->init_eq_names[r] = q->flat < 0 ? "derivative of a state"
                                  : st_eq_text(t, (uint32_t)q->flat, "", q->order ? " (differentiated)" : "");
        }
    }
    for (uint32_t y = 0; y < s->ny; y++)
        s->initial_row[y] = t->init_of[y] ? row_of[t->init_of[y] - 1] - 1 : -1;
}

/* Nonlinear algebraic blocks are where IDACalcIC alone can fail without
 * being able to say which equation: with an initialization system the
 * runtime's damped Newton solves them and names the equations if it fails. */
static bool has_nonlinear_blocks(St *t) {
    for (uint32_t b = 0; b < t->blocks.len; b++) {
        uint8_t k = t->blocks.data[b].kind;
        if (k == BK_NONLINEAR || k == BK_IMPLICIT || k == BK_SPARSE) return true;
    }
    return false;
}

void struct_build_init(St *t) {
    System *s = t->s;
    bool explicit_only;
    Expr **init = initial_relations(t);
    if (!init) return;
    t->init_of = ARENA_ARRAY(t->arena, int32_t, s->ny + 1);
    start_values(t, init, &explicit_only);
    bool missing = false;
    for (uint32_t p = 0; p < s->np; p++) missing |= (s->param_flags[p] & SYS_PARAM_MISSING) != 0;
    if (explicit_only && !missing && !has_nonlinear_blocks(t)) return;
    init_layout(t);
    t->to_init = true;
    /* rows: the simulation residuals at t0, then the initial relations */
    ExprVec rows = {0};
    U32Vec src = {0}; /* row origin, see row_note() */
    for (uint32_t r = 0; r < t->resid_sv.len; r++) {
        vec_push(t->arena, &rows, lower(t, t->resid_sv.data[r]));
        vec_push(t->arena, &src, t->resid_eq.data[r]);
    }
    unsigned char *mentioned = ARENA_ARRAY(t->arena, unsigned char, s->init_n + 1);
    for (uint32_t i = 0; i < t->m->eqs.len; i++) {
        if (t->m->eqs.data[i].kind != FE_INITIAL || !init[i]) continue;
        vec_push(t->arena, &rows, lower(t, init[i]));
        vec_push(t->arena, &src, ROW_INITIAL | i);
        ExprVec zs = {0};
        expr_leaves(t->c, rows.data[rows.len - 1], EXPR_Z, &zs);
        for (uint32_t k = 0; k < zs.len; k++) mentioned[zs.data[k]->index] = 1;
    }
    fix_states(t, &rows, &src, mentioned);
    t->to_init = false;
    if (!init_check(t, &rows, &src)) return;
    init_names(t, &src);
    s->init_resid = rows.data;
    init_jacobian(t, &rows);
}
