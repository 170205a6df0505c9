/*
 * stateset.c -- state sets: dynamic state selection (Mattsson & Söderlind's
 * dummy derivatives with run-time pivoting, in the formulation of
 * Mattsson, Olsson & Elmqvist, "Dynamic selection of states in Dymola",
 * Modelica Workshop 2000).
 *
 * statesel.c finds, in a stage of the dummy-derivative selection, a class of
 * candidate columns c_1..c_n (first derivatives of variables x_1..x_n) of
 * which m must be dummies, where the choice depends on the configuration:
 * the pivots vary with the unknowns (a pendulum: 2x and 2y).  Instead of a
 * fixed choice, st_add_set records a set, and st_build_sets makes every
 * candidate a dummy and adds k = n - m new states s_1..s_k with
 *     s_j = sum_i [mode_j == i] x_i,      der(s_j) = sum_i [mode_j == i] c_i
 * where mode_j (EXPR_MODE, an event of kind SYS_EV_STATESET) is the index of
 * the candidate that is the j-th state.  The physical unknowns x_i stay
 * algebraic; the structure of the index-1 system does not depend on the
 * modes (the set equations are never solved symbolically: their
 * coefficients are modes), so changing a mode is only a change of
 * coordinates: the runtime switches a set at an event when the pivot of the
 * current choice degrades against the best alternative, sets s_j to the
 * value of the new candidate and restarts IDA -- no jump in x.
 *
 * For the runtime's pivot criterion the System carries each set's rows (the
 * stage's equations), its fixed columns (the stage's dummies chosen before
 * the set, eliminated first) and its candidates, with the Jacobian entries
 * of the rows in those columns as expressions (set_jac), and the values and
 * derivatives of the candidates (to restart).  Modes of state sets come
 * first among the events (events.c numbers relations after them).
 *
 * Cost: linear in the sets' sizes; a set's matrix is dense (rows x columns
 * of one stage component, at most DENSE_STAGE_MAX rows).
 */
#include "structure_internal.h"

#include <string.h>

static uint32_t *copy_u32(St *t, const uint32_t *a, uint32_t n) {
    uint32_t *r = ARENA_ARRAY(t->arena, uint32_t, n + 1);
    if (n) memcpy(r, a, n * sizeof *r);
    return r;
}

void st_add_set(St *t, const uint32_t *rows, uint32_t nrows, const uint32_t *fixed, uint32_t nfixed,
                const uint32_t *cand, uint32_t ncand, const bool *dummy) {
    StSet z = {.rows = copy_u32(t, rows, nrows), .nrows = nrows, .fixed = copy_u32(t, fixed, nfixed),
               .nfixed = nfixed, .cand = copy_u32(t, cand, ncand), .ncand = ncand,
               .init = ARENA_ARRAY(t->arena, uint32_t, ncand + 1)};
    for (uint32_t i = 0; i < ncand; i++)
        if (!dummy[i]) z.init[z.nstates++] = i; /* the start's choice: the non-dummies are states */
    vec_push(t->arena, &t->sets, z);
}

static uint32_t new_state(St *t, uint32_t set, uint32_t j, uint32_t base) {
    SVar v = {.base = base, .der = -1, .prim = -1, .yp_of = -1, .slot = -1};
    vec_push(t->arena, &t->sv, v);
    hmap_put(t->arena, &t->set_state, t->sv.len, (void *)(uintptr_t)((uint64_t)(set + 1) << 32 | j));
    return t->sv.len - 1;
}

/* s - sum_i [mode == i] x_i over the given svs */
static Expr *set_row(St *t, uint32_t s, uint32_t mode, const uint32_t *x, uint32_t n) {
    ExprCtx *c = t->c;
    Expr *sum = expr_const(c, 0), *m = expr_leaf(c, EXPR_MODE, mode);
    for (uint32_t i = 0; i < n; i++) {
        Expr *sel = expr_cmp(c, EXPR_EQ, m, expr_const(c, i));
        sum = expr_add(c, sum, expr_mul(c, sel, expr_leaf(c, EXPR_VAR, x[i])));
    }
    return expr_sub(c, expr_leaf(c, EXPR_VAR, s), sum);
}

static uint32_t add_eq(St *t, Expr *res, uint32_t set) {
    SEq q = {.res = res, .flat = -1, .diff = -1, .prim = -1, .set = set + 1};
    vec_push(t->arena, &t->eq, q);
    st_incidence(t, t->eq.len - 1);
    return t->eq.len - 1;
}

/* Every candidate a dummy, the set's states and their two equations each. */
void st_build_sets(St *t) {
    for (uint32_t k = 0; k < t->sets.len; k++) {
        StSet *z = &t->sets.data[k];
        z->prim = ARENA_ARRAY(t->arena, uint32_t, z->ncand + 1);
        z->state = ARENA_ARRAY(t->arena, uint32_t, z->nstates + 1);
        for (uint32_t i = 0; i < z->ncand; i++) {
            t->sv.data[z->cand[i]].dummy = true;
            z->prim[i] = (uint32_t)t->sv.data[z->cand[i]].prim;
        }
        z->mode_first = t->nset_modes;
        t->nset_modes += z->nstates;
        for (uint32_t j = 0; j < z->nstates; j++) {
            uint32_t s = new_state(t, k, j, t->sv.data[z->prim[z->init[j]]].base);
            uint32_t ds = st_der(t, s);
            z->state[j] = s;
            uint32_t e = add_eq(t, set_row(t, s, z->mode_first + j, z->prim, z->ncand), k);
            uint32_t de = add_eq(t, set_row(t, ds, z->mode_first + j, z->cand, z->ncand), k);
            t->eq.data[e].diff = (int32_t)de;
            t->eq.data[de].prim = (int32_t)e;
            t->eq.data[de].order = 1;
        }
    }
}

uint32_t st_sv_set(const St *t, uint32_t sv, uint32_t *j) {
    uint64_t x = (uint64_t)(uintptr_t)hmap_get(&t->set_state, (uint64_t)sv + 1);
    *j = (uint32_t)x;
    return (uint32_t)(x >> 32);
}

const char *st_set_state_name(St *t, uint32_t sv) {
    uint32_t j, set = st_sv_set(t, sv, &j);
    return arena_printf(t->arena, "$set%u[%u]", set, j + 1);
}

/* "x, y" */
static const char *cand_list(St *t, const StSet *z) {
    const char *r = "";
    for (uint32_t i = 0; i < z->ncand; i++)
        r = arena_printf(t->arena, "%s%s%s", r, i ? ", " : "", st_sv_name(t, z->prim[i]));
    return r;
}

/* --structure: one line per set */
void st_report_sets(St *t, FILE *out) {
    if (!t->sets.len) return;
    fprintf(out, "state sets (%u)\n", t->sets.len);
    for (uint32_t k = 0; k < t->sets.len; k++) {
        StSet *z = &t->sets.data[k];
        fprintf(out, "  set %u: %u state%s of {%s}, chosen at run time by the pivots of", k + 1, z->nstates,
                z->nstates == 1 ? "" : "s", cand_list(t, z));
        for (uint32_t r = 0; r < z->nrows; r++) {
            fputs(r ? ", " : " ", out);
            Expr *res = st_eq_res(t, z->rows[r]);
            SEq *q = &t->eq.data[z->rows[r]];
            fputs(q->flat >= 0 ? st_eq_text(t, (uint32_t)q->flat, "`", q->order ? "` (differentiated)" : "`")
                               : st_expr_text(t, res, NULL, (Span){0}), out);
        }
        fputs("; at the start:", out);
        for (uint32_t j = 0; j < z->nstates; j++) fprintf(out, " %s", st_sv_name(t, z->prim[z->init[j]]));
        fputc('\n', out);
    }
}

/* Events of kind SYS_EV_STATESET, one per set state, first in the event
 * list: zc[k] is a placeholder (the runtime computes the pivot criterion). */
void st_set_events(St *t, Expr **zc, uint8_t *kind, const char **names) {
    for (uint32_t k = 0; k < t->sets.len; k++) {
        StSet *z = &t->sets.data[k];
        for (uint32_t j = 0; j < z->nstates; j++) {
            uint32_t e = z->mode_first + j;
            zc[e] = expr_const(t->c, 1);
            kind[e] = SYS_EV_STATESET;
            names[e] = arena_printf(t->arena, "%u {%s}, state %u", k + 1, cand_list(t, z), j + 1);
        }
    }
}

/* System.sets: the lowered Jacobian of each set's rows in its fixed and
 * candidate columns (row-major), the candidates' values and derivatives,
 * the slots of the set states and the start's choice. */
void st_build_set_system(St *t) {
    System *s = t->s;
    uint32_t njac = 0, ncand = 0, nstate = 0;
    for (uint32_t k = 0; k < t->sets.len; k++) {
        StSet *z = &t->sets.data[k];
        njac += z->nrows * (z->nfixed + z->ncand);
        ncand += z->ncand;
        nstate += z->nstates;
    }
    s->nsets = t->sets.len;
    s->sets = ARENA_ARRAY(t->arena, SysStateSet, s->nsets + 1);
    s->set_jac = ARENA_ARRAY(t->arena, Expr *, njac + 1);
    s->set_cand_names = ARENA_ARRAY(t->arena, const char *, ncand + 1);
    s->set_cand_value = ARENA_ARRAY(t->arena, Expr *, ncand + 1);
    s->set_cand_der = ARENA_ARRAY(t->arena, Expr *, ncand + 1);
    s->set_state_y = ARENA_ARRAY(t->arena, uint32_t, nstate + 1);
    s->set_init = ARENA_ARRAY(t->arena, uint32_t, nstate + 1);
    njac = ncand = nstate = 0;
    for (uint32_t k = 0; k < t->sets.len; k++) {
        StSet *z = &t->sets.data[k];
        s->sets[k] = (SysStateSet){z->nrows, z->nfixed, z->ncand, z->nstates, z->mode_first, njac, ncand, nstate};
        for (uint32_t r = 0; r < z->nrows; r++)
            for (uint32_t c = 0; c < z->nfixed + z->ncand; c++) {
                uint32_t col = c < z->nfixed ? z->fixed[c] : z->cand[c - z->nfixed];
                Expr *d = expr_diff_once(t->c, st_eq_res(t, z->rows[r]), expr_leaf(t->c, EXPR_VAR, col));
                s->set_jac[njac++] = lower(t, d);
            }
        for (uint32_t i = 0; i < z->ncand; i++, ncand++) {
            s->set_cand_names[ncand] = st_sv_name(t, z->prim[i]);
            s->set_cand_value[ncand] = lower(t, expr_leaf(t->c, EXPR_VAR, z->prim[i]));
            s->set_cand_der[ncand] = lower(t, expr_leaf(t->c, EXPR_VAR, z->cand[i]));
        }
        for (uint32_t j = 0; j < z->nstates; j++, nstate++) {
            s->set_state_y[nstate] = (uint32_t)t->sv.data[z->state[j]].slot;
            s->set_init[nstate] = z->init[j];
        }
    }
}

/* The start value of a set state: that of the candidate it starts as (its
 * slot's start, or the guess of an assigned candidate). */
void st_set_starts(St *t) {
    System *s = t->s;
    for (uint32_t k = 0; k < t->sets.len; k++) {
        StSet *z = &t->sets.data[k];
        for (uint32_t j = 0; j < z->nstates; j++) {
            SVar *x = &t->sv.data[z->prim[z->init[j]]];
            FlatVar *fv = &t->m->vars.data[x->base];
            Expr *g = flat_attr(t->m, fv)->guess;
            Expr *v = x->slot >= 0 ? s->start[x->slot] : g ? lower(t, g) : expr_const(t->c, 0);
            s->start[t->sv.data[z->state[j]].slot] = v;
        }
    }
}
