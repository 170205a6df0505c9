/*
 * structure.c -- the structure phase: slots, residuals, Jacobian pattern,
 * start values, outputs, initialization system.  Linear in the size of the
 * equation DAGs (plus one derivative per Jacobian entry).
 */
#include "structure_internal.h"

#include "dyad_model.h"

#include <math.h>
#include <string.h>


static Expr *alias_der(void *ud, Expr *leaf) {
    St *t = ud;
    if (leaf->kind == EXPR_VAR && t->m->vars.data[leaf->index].kind == FV_VARIABLE)
        return expr_leaf(t->c, EXPR_DER, leaf->index);
    return NULL;
}

static Expr *map_leaf(void *ud, Expr *leaf) {
    St *t = ud;
    uint32_t v = leaf->index;
    if ((leaf->kind == EXPR_VAR || leaf->kind == EXPR_DER) && t->alias && t->alias[v]) {
        Expr *a = t->alias[v];
        if (leaf->kind == EXPR_DER) a = expr_dt(t->c, a, alias_der, t);
        return lower(t, a);
    }
    if (leaf->kind == EXPR_VAR && t->pslot[v] >= 0) {
        uint32_t p = (uint32_t)t->pslot[v];
        if (t->to_init && t->pz[p] >= 0) return expr_leaf(t->c, EXPR_Z, (uint32_t)t->pz[p]);
        return expr_leaf(t->c, EXPR_P, p);
    }
    if (leaf->kind == EXPR_VAR && t->yslot[v] >= 0)
        return expr_leaf(t->c, t->to_init ? EXPR_Z : EXPR_Y, (uint32_t)t->yslot[v]);
    if (leaf->kind == EXPR_DER && t->yslot[v] >= 0) {
        uint32_t y = (uint32_t)t->yslot[v];
        if (t->to_init && t->zslot[y] < 0) {
            diag_error((Span){0}, "der(%s) appears in an initial relation, but `%s` is not a state",
                       t->s->y_names[y], t->s->y_names[y]);
            return expr_const(t->c, 0);
        }
        if (t->to_init) return expr_leaf(t->c, EXPR_Z, (uint32_t)t->zslot[y]);
        return expr_leaf(t->c, EXPR_YP, y);
    }
    if (leaf->kind == EXPR_DER) return expr_const(t->c, 0); /* der(parameter) */
    return leaf;
}

Expr *lower(St *t, Expr *e) { return expr_subst(t->c, e, map_leaf, t); }

static void assign_slots(St *t) {
    FlatModel *m = t->m;
    System *s = t->s;
    uint32_t n = m->vars.len;
    t->yslot = ARENA_ARRAY(t->arena, int32_t, n + 1);
    t->pslot = ARENA_ARRAY(t->arena, int32_t, n + 1);
    t->pvar = ARENA_ARRAY(t->arena, uint32_t, n + 1);
    for (uint32_t i = 0; i < n; i++) {
        FlatVar *v = &m->vars.data[i];
        t->yslot[i] = t->pslot[i] = -1;
        if (v->kind == FV_VARIABLE) {
            if (!t->alias[i]) t->yslot[i] = (int32_t)s->ny++;
        } else { t->pvar[s->np] = i; t->pslot[i] = (int32_t)s->np++; }
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
        s->param_flags[p] = (v->is_final || v->kind == FV_CONSTANT ? DYRT_PARAM_FINAL : 0) |
                            (v->kind == FV_PARAM_MISSING ? DYRT_PARAM_MISSING : 0);
        s->param_default[p] = v->value ? lower(t, v->value) : NULL;
        if (v->value && !expr_is_const(s->param_default[p])) s->param_flags[p] |= DYRT_PARAM_DEPENDENT;
        t->pz[p] = -1;
    }
    unsigned char *state = ARENA_ARRAY(t->arena, unsigned char, s->np + 1);
    uint32_t k = 0;
    for (uint32_t p = 0; p < s->np; p++) order_params(t, p, state, &k);
}

/* CSC pattern of d resid / d leaves of `kind`, from each residual's leaves */
typedef struct { uint32_t row, col; } Entry;

static void build_jacobian(St *t) {
    System *s = t->s;
    Vec(Entry) ents = {0};
    for (uint32_t r = 0; r < s->ny; r++) {
        ExprVec ys = {0};
        expr_leaves(t->c, s->resid[r], EXPR_Y, &ys);
        expr_leaves(t->c, s->resid[r], EXPR_YP, &ys);
        /* one entry per distinct column */
        for (uint32_t i = 0; i < ys.len; i++) {
            bool dup = false;
            for (uint32_t j = 0; j < i && !dup; j++) dup = ys.data[j]->index == ys.data[i]->index;
            if (!dup) vec_push(t->arena, &ents, ((Entry){r, ys.data[i]->index}));
        }
    }
    s->jac_nnz = ents.len;
    s->jac_colptr = ARENA_ARRAY(t->arena, int32_t, s->ny + 1);
    s->jac_rowidx = ARENA_ARRAY(t->arena, int32_t, ents.len + 1);
    s->jac_dy = ARENA_ARRAY(t->arena, Expr *, ents.len + 1);
    s->jac_dyp = ARENA_ARRAY(t->arena, Expr *, ents.len + 1);
    for (uint32_t i = 0; i < ents.len; i++) s->jac_colptr[ents.data[i].col + 1]++;
    for (uint32_t c = 0; c < s->ny; c++) s->jac_colptr[c + 1] += s->jac_colptr[c];
    int32_t *fill = ARENA_ARRAY(t->arena, int32_t, s->ny + 1);
    for (uint32_t i = 0; i < ents.len; i++) { /* rows ascend within a column: entries are row-ordered */
        Entry e = ents.data[i];
        int32_t k = s->jac_colptr[e.col] + fill[e.col]++;
        s->jac_rowidx[k] = (int32_t)e.row;
        s->jac_dy[k] = expr_diff(t->c, s->resid[e.row], expr_leaf(t->c, EXPR_Y, e.col));
        s->jac_dyp[k] = expr_diff(t->c, s->resid[e.row], expr_leaf(t->c, EXPR_YP, e.col));
    }
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
    s->resid = ARENA_ARRAY(t->arena, Expr *, s->ny + 1);
    s->y_is_diff = ARENA_ARRAY(t->arena, unsigned char, s->ny + 1);
    s->y_names = ARENA_ARRAY(t->arena, const char *, s->ny + 1);
    uint32_t r = 0;
    for (uint32_t i = 0; i < t->m->eqs.len; i++) {
        FlatEq *q = &t->m->eqs.data[i];
        if (q->kind != FE_NORMAL || t->eq_alias[i]) continue;
        s->resid[r++] = lower(t, expr_sub(t->c, q->lhs, q->rhs));
    }
    for (uint32_t r2 = 0; r2 < s->ny; r2++) {
        ExprVec yp = {0};
        expr_leaves(t->c, s->resid[r2], EXPR_YP, &yp);
        for (uint32_t i = 0; i < yp.len; i++) s->y_is_diff[yp.data[i]->index] = 1;
    }
    for (uint32_t v = 0; v < t->m->vars.len; v++)
        if (t->yslot[v] >= 0) s->y_names[t->yslot[v]] = t->m->vars.data[v].name;
}

static void build_outputs(St *t) {
    System *s = t->s;
    s->out = ARENA_ARRAY(t->arena, Expr *, t->m->vars.len + 1);
    s->out_names = ARENA_ARRAY(t->arena, const char *, t->m->vars.len + 1);
    for (uint32_t v = 0; v < t->m->vars.len; v++) {
        if (t->m->vars.data[v].kind != FV_VARIABLE) continue;
        s->out_names[s->nout] = t->m->vars.data[v].name;
        s->out[s->nout++] = lower(t, expr_leaf(t->c, EXPR_VAR, v));
    }
}

static void build_asserts(St *t) {
    System *s = t->s;
    s->nassert = t->m->asserts.len;
    s->assert_cond = ARENA_ARRAY(t->arena, Expr *, s->nassert + 1);
    s->assert_msg = ARENA_ARRAY(t->arena, const char *, s->nassert + 1);
    for (uint32_t i = 0; i < s->nassert; i++) {
        s->assert_cond[i] = lower(t, t->m->asserts.data[i].cond);
        s->assert_msg[i] = t->m->asserts.data[i].message;
    }
}

System *structure(FlatModel *m) {
    unsigned errors = diag_error_count();
    Arena *arena = NULL;
    /* the System lives in the same arena as the flat model's expressions */
    St t = {0};
    t.m = m;
    t.c = m->ctx;
    arena = expr_ctx_arena(m->ctx);
    t.arena = arena;
    System *s = t.s = ARENA_NEW(arena, System);
    s->ctx = m->ctx;
    s->model_name = m->name;
    s->start_time = 0;
    s->stop_time = 1;
    s->rtol = 1e-6;
    s->atol = 1e-6;
    if (!balance_check(&t)) return NULL;
    struct_alias(&t);
    assign_slots(&t);
    build_params(&t);
    build_residuals(&t);
    build_jacobian(&t);
    build_outputs(&t);
    build_asserts(&t);
    struct_build_init(&t);
    return diag_error_count() > errors ? NULL : s;
}
