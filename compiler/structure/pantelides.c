/*
 * pantelides.c -- index reduction (Pantelides' algorithm).
 *
 * Pantelides, "The consistent initialization of differential-algebraic
 * systems" (SIAM J. Sci. Stat. Comput. 9(2), 1988), algorithm of §5:
 * the unknowns of the matching are the highest derivatives of every
 * variable (der(x) stands for x once x appears differentiated).  An
 * equation that cannot be matched (no augmenting path) lies in a
 * structurally singular subset: every equation and unknown the search
 * visited (the coloring) is differentiated once (expr_dt, new derivative
 * variables created in our own table), the matching moves up one level,
 * and the search repeats from the derivative of the equation.  A subset
 * that contains no differentiated variable at all can never be repaired
 * by differentiation: that is a structurally singular model (error naming
 * its equations and unknowns).  Hopcroft-Karp first (matching.c) so that
 * only the unmatched equations of index > 1 parts cost searches:
 * O(E sqrt V) + O(E) per repaired equation.
 *
 * Then statesel.c chooses the dummy derivatives and the states.
 */
#include "structure_internal.h"

#define MAX_DIFF_ORDER 8 /* a model needing more is certainly singular */

static bool pant_var(St *t, uint32_t v) { return st_is_unknown(t, v) && t->sv.data[v].der < 0; }
static bool pant_eq(St *t, uint32_t e) { return t->eq.data[e].diff < 0; }

static uint32_t diff_eq(St *t, uint32_t e) {
    Expr *r = st_dt(t, st_eq_res(t, e));
    SEq d = {.res = r, .flat = t->eq.data[e].flat, .order = t->eq.data[e].order + 1,
             .diff = -1, .prim = (int32_t)e};
    vec_push(t->arena, &t->eq, d);
    uint32_t k = t->eq.len - 1;
    t->eq.data[e].diff = (int32_t)k;
    st_incidence(t, k);
    return k;
}

/* Structural singularity: name the equations and the unknowns of the
 * singular subset and, when given, the unknowns `free` that no equation is
 * left for (the other side of the same defect in a balanced model). */
void st_singular(St *t, U32Vec *eqs, U32Vec *vars, U32Vec *free, const char *why) {
    Span sp = {0};
    for (uint32_t i = 0; i < eqs->len && !sp.file; i++) {
        int32_t f = t->eq.data[eqs->data[i]].flat;
        if (f >= 0) sp = t->m->eqs.data[f].span;
    }
    uint32_t nfree = free ? free->len : 0;
    diag_error(sp, "the simulation system of `%s` is structurally singular: %u equation%s for %u "
                   "unknown%s%s%s%s%s%s%s", t->m->name, eqs->len, eqs->len == 1 ? "" : "s", vars->len,
               vars->len == 1 ? "" : "s", why ? "; " : "", why ? why : "",
               nfree ? "; left without an equation: `" : "", nfree ? st_sv_name(t, free->data[0]) : "",
               nfree ? "`" : "", nfree > 1 ? " and others (notes)" : "");
    for (uint32_t i = 0; i < eqs->len; i++) st_note_eq(t, eqs->data[i], "equation");
    for (uint32_t i = 0; i < vars->len; i++) {
        const SVar *v = &t->sv.data[vars->data[i]];
        diag_note(t->m->vars.data[v->base].span, "unknown `%s`", st_sv_name(t, vars->data[i]));
    }
    for (uint32_t i = 0; i < nfree; i++) {
        const SVar *v = &t->sv.data[free->data[i]];
        diag_note(t->m->vars.data[v->base].span, "no equation is left for unknown `%s`",
                  st_sv_name(t, free->data[i]));
    }
}

/* The unknowns a maximum matching leaves without an equation. */
static U32Vec unmatched_unknowns(St *t) {
    U32Vec free = {0};
    for (uint32_t v = 0; v < t->sv.len; v++)
        if (pant_var(t, v) && t->assign[v] < 0) vec_push(t->arena, &free, v);
    return free;
}

typedef struct {
    unsigned char *veq, *vvar;
    uint32_t ceq, cvar; /* capacities */
} Colors;

static void colors_fit(St *t, Colors *c) {
    if (t->eq.len > c->ceq) {
        c->ceq = t->eq.len * 2 + 16;
        c->veq = ARENA_ARRAY(t->arena, unsigned char, c->ceq);
    }
    if (t->sv.len > c->cvar) {
        c->cvar = t->sv.len * 2 + 16;
        c->vvar = ARENA_ARRAY(t->arena, unsigned char, c->cvar);
    }
}

static void uncolor(Colors *c, U32Vec *eqs, U32Vec *vars) {
    for (uint32_t i = 0; i < eqs->len; i++) c->veq[eqs->data[i]] = 0;
    for (uint32_t i = 0; i < vars->len; i++) c->vvar[vars->data[i]] = 0;
}

/* does differentiating the colored equations bring in new information? */
static bool repairable(St *t, U32Vec *eqs) {
    for (uint32_t i = 0; i < eqs->len; i++) {
        SEq *q = &t->eq.data[eqs->data[i]];
        if (q->order >= MAX_DIFF_ORDER) return false;
        for (uint32_t k = 0; k < q->ninc; k++)
            if (t->sv.data[q->inc[k]].der >= 0) return true;
    }
    return false;
}

static bool pantelides_eq(St *t, Colors *c, uint32_t e0) {
    uint32_t i = e0;
    for (;;) {
        colors_fit(t, c);
        U32Vec eqs = {0}, vars = {0};
        bool found = st_augment(t, i, pant_var, c->veq, c->vvar, &eqs, &vars);
        uncolor(c, &eqs, &vars);
        if (found) return true;
        if (!repairable(t, &eqs)) {
            U32Vec free = unmatched_unknowns(t);
            st_singular(t, &eqs, &vars, &free, "differentiating them does not help (too many "
                                               "equations for these unknowns)");
            return false;
        }
        for (uint32_t k = 0; k < vars.len; k++) st_der(t, vars.data[k]);
        for (uint32_t k = 0; k < eqs.len; k++) diff_eq(t, eqs.data[k]);
        st_grow_match(t);
        for (uint32_t k = 0; k < vars.len; k++) {
            uint32_t j = vars.data[k], dj = (uint32_t)t->sv.data[j].der;
            int32_t dl = t->eq.data[t->assign[j]].diff;
            t->assign[dj] = dl;
            t->match[dl] = (int32_t)dj;
        }
        i = (uint32_t)t->eq.data[i].diff;
    }
}

bool struct_index_reduce(St *t) {
    st_match(t, pant_eq, pant_var);
    Colors c = {0};
    for (uint32_t e = 0; e < t->neq0; e++)
        if (t->match[e] < 0 && !pantelides_eq(t, &c, e)) return false;
    return struct_select_states(t);
}
