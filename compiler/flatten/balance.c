/*
 * balance.c -- equations vs unknowns of a flat model.
 *
 * Unknowns: variables (`missing` parameters are unknowns of the
 * initialization only), except the inputs of the component's own connectors (given by whoever uses it).  Equations: the
 * regular ones (connection and zero-flow equations included; the zero-flow
 * equations of the component's own connectors stand for the equations its
 * user adds, which is Modelica's balance rule).  When the counts differ
 * the report says by how much and lists candidates with their locations:
 * for too few equations, the unknowns that appear in no equation; for too
 * many, the equations that contain no unknown, else the last equations.
 * Linear in the size of the equations.
 */
#define _POSIX_C_SOURCE 200809L
#include "flatten_internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_LISTED 8

typedef struct {
    const FlatModel *m;
    unsigned char *computed; /* top-level inputs given an equation */
} Bal;

static bool is_unknown_at(const Bal *b, uint32_t i) {
    const FlatVar *v = &b->m->vars.data[i];
    if (!flat_kind_is_unknown(v->kind)) return false; /* `missing` parameters: initialization */
    return !(v->top_conn && v->conn == FC_INPUT) || (b->computed && b->computed[i]);
}

/* the flat variable a side that is a bare variable (x, or x[i] of a
 * template at induction values iv) stands for; UINT32_MAX otherwise */
static uint32_t bare_var(const Expr *e, const int64_t *iv) {
    if (e->kind == EXPR_VAR || (e->kind == EXPR_AT && e->fn == EXPR_VAR)) return flat_leaf_var(e, iv);
    return UINT32_MAX;
}

static bool is_bare_input(const FlatModel *m, uint32_t v) {
    return v != UINT32_MAX && m->vars.data[v].conn == FC_INPUT;
}

/* a top-level input equated to a variable inside a subcomponent,
 * `probe = sub.y` (a test harness probing a signal), is computed, so it is
 * an unknown; `u = sub.u` (a connection) and `flange.f = u` are not */
static bool is_probed(const FlatModel *m, uint32_t e) {
    if (e == UINT32_MAX) return false;
    const FlatVar *v = &m->vars.data[e];
    return !v->top_conn && v->conn != FC_INPUT && strchr(v->name, '.'); /* a subcomponent's */
}

/* equation q (each instance of a template) marks the inputs it computes */
static void computed_by(const FlatModel *m, const FlatEq *q, unsigned char *c) {
    int64_t iv[EXPR_MAXIDX] = {0};
    bool bare = bare_var(q->lhs, iv) != UINT32_MAX || bare_var(q->rhs, iv) != UINT32_MAX;
    for (uint64_t p = 0; bare && p < flat_eq_count(q); p++) {
        if (q->dom) flat_dom_point(q->dom, p, iv);
        uint32_t l = bare_var(q->lhs, iv), r = bare_var(q->rhs, iv);
        if (is_bare_input(m, l) && m->vars.data[l].top_conn && is_probed(m, r)) c[l] = 1;
        if (is_bare_input(m, r) && m->vars.data[r].top_conn && is_probed(m, l)) c[r] = 1;
    }
}

static unsigned char *computed_inputs(const FlatModel *m) {
    unsigned char *c = calloc(m->vars.len + 1, 1);
    for (uint32_t i = 0; c && i < m->eqs.len; i++)
        if (flat_eq_is_regular(m->eqs.data[i].kind)) computed_by(m, &m->eqs.data[i], c);
    return c;
}

/* regular scalar equations (a template counts its instances) */
static uint64_t regular_eqs(const FlatModel *m) {
    uint64_t n = 0;
    for (uint32_t i = 0; i < m->eqs.len; i++) n += flat_eq_is_regular(m->eqs.data[i].kind) * flat_eq_count(&m->eqs.data[i]);
    return n;
}

static bool free_input(const FlatModel *m, const unsigned char *computed, uint32_t i) {
    const FlatVar *v = &m->vars.data[i];
    return v->kind == FV_VARIABLE && v->top_conn && v->conn == FC_INPUT && !computed[i];
}

/* The component's own inputs become FV_INPUT (known while it runs, given
 * from outside) when the equations leave them to its user: the model is
 * balanced with them given and not with them as unknowns.  A model whose
 * equations determine its inputs (`u = 1`) keeps them as variables. */
void flat_mark_inputs(FlatModel *m) {
    unsigned char *computed = computed_inputs(m);
    uint32_t nunk = 0, neq = 0, nin = 0;
    for (uint32_t i = 0; computed && i < m->vars.len; i++) {
        nunk += flat_kind_is_unknown(m->vars.data[i].kind);
        nin += free_input(m, computed, i);
    }
    nunk -= m->redundant < nunk ? m->redundant : nunk;
    neq = (uint32_t)regular_eqs(m);
    for (uint32_t i = 0; computed && nin && neq + nin == nunk && i < m->vars.len; i++)
        if (free_input(m, computed, i)) m->vars.data[i].kind = FV_INPUT;
    free(computed);
}

static void mark_leaves(const FlatModel *m, Expr *e, unsigned char *seen) {
    ExprVec v = {0};
    expr_leaves(m->ctx, e, EXPR_VAR, &v);
    for (uint32_t i = 0; i < v.len; i++) seen[v.data[i]->index] = 1;
    v.len = 0;
    expr_leaves(m->ctx, e, EXPR_DER, &v);
    for (uint32_t i = 0; i < v.len; i++) seen[v.data[i]->index] = 1;
}

/* the number of unknowns in no equation, listed as notes */
static uint32_t list_unused(const Bal *b, unsigned char *seen) {
    const FlatModel *m = b->m;
    uint32_t listed = 0, more = 0;
    for (uint32_t i = 0; i < m->vars.len; i++) {
        const FlatVar *v = &m->vars.data[i];
        if (!is_unknown_at(b, i) || seen[i]) continue;
        if (listed++ < MAX_LISTED) diag_note(v->span, "`%s` appears in no equation", v->name);
        else more++;
    }
    if (more) diag_note((Span){0}, "... and %u more unknowns in no equation", more);
    return listed;
}

static bool has_unknown(const Bal *b, const FlatEq *q) {
    const FlatModel *m = b->m;
    ExprVec v = {0};
    expr_leaves(m->ctx, q->lhs, EXPR_VAR, &v);
    expr_leaves(m->ctx, q->rhs, EXPR_VAR, &v);
    for (uint32_t i = 0; i < v.len; i++)
        if (is_unknown_at(b, v.data[i]->index)) return true;
    ExprVec d = {0};
    expr_leaves(m->ctx, q->lhs, EXPR_DER, &d);
    expr_leaves(m->ctx, q->rhs, EXPR_DER, &d);
    return d.len > 0;
}

static void note_eq(const FlatModel *m, const FlatEq *q, const char *why) {
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    if (f) {
        flat_print_expr(f, m, q->lhs);
        fputs(" = ", f);
        flat_print_expr(f, m, q->rhs);
        fclose(f);
    }
    diag_note(q->span, "%s: `%s`", why, buf ? buf : "?");
    free(buf);
}

static void list_extra(const Bal *b, uint32_t excess) {
    const FlatModel *m = b->m;
    uint32_t listed = 0;
    for (uint32_t i = 0; i < m->eqs.len && listed < MAX_LISTED; i++) {
        const FlatEq *q = &m->eqs.data[i];
        if (flat_eq_is_regular(q->kind) && !has_unknown(b, q)) {
            note_eq(m, q, "this equation has no unknown");
            listed++;
        }
    }
    if (listed) return;
    uint32_t n = excess < MAX_LISTED ? excess : MAX_LISTED;
    for (uint32_t i = m->eqs.len; i-- > 0 && listed < n;) {
        const FlatEq *q = &m->eqs.data[i];
        if (!flat_eq_is_regular(q->kind)) continue;
        note_eq(m, q, "candidate");
        listed++;
    }
}

static bool balance_report(const Bal *b, Def *d, bool as_part);

bool flat_check_balance(const FlatModel *m, Def *d, bool as_part) {
    Bal b = {m, computed_inputs(m)};
    uint32_t nunk = 0;
    for (uint32_t i = 0; i < m->vars.len; i++) nunk += is_unknown_at(&b, i);
    nunk -= m->redundant < nunk ? m->redundant : nunk;
    FlatModel scalar;
    if (regular_eqs(m) != nunk && flat_has_templates(m)) { /* the report lists scalar equations */
        scalar = *m;
        flat_scalarize(&scalar);
        b.m = &scalar;
    }
    bool ok = balance_report(&b, d, as_part);
    free(b.computed);
    return ok;
}

static unsigned char *seen_unknowns(const FlatModel *m) {
    unsigned char *seen = calloc(m->vars.len + 1, 1);
    for (uint32_t i = 0; seen && i < m->eqs.len; i++) {
        if (!flat_eq_is_regular(m->eqs.data[i].kind)) continue;
        mark_leaves(m, m->eqs.data[i].lhs, seen);
        mark_leaves(m, m->eqs.data[i].rhs, seen);
    }
    return seen;
}

static bool balance_report(const Bal *b, Def *d, bool as_part) {
    const FlatModel *m = b->m;
    uint32_t neq = 0, nunk = 0;
    for (uint32_t i = 0; i < m->vars.len; i++) nunk += is_unknown_at(b, i);
    nunk -= m->redundant < nunk ? m->redundant : nunk; /* overdetermined connector potentials */
    neq = (uint32_t)regular_eqs(m);
    if (neq == nunk) return true;
    Span at = d ? d->node->span : (Span){0};
    if (neq < nunk) {
        unsigned char *seen = seen_unknowns(m);
        if (!seen) return false;
        uint32_t unused = 0;
        for (uint32_t i = 0; i < m->vars.len; i++) unused += is_unknown_at(b, i) && !seen[i];
        if (as_part && !unused) {
            diag_warning(at, "`%s` is underdetermined: %u equation%s for %u unknowns; whoever uses it must give "
                             "%u more (equations for its variables)", m->name, neq, neq == 1 ? "" : "s", nunk,
                         nunk - neq);
            free(seen);
            return true;
        }
        diag_error(at, "`%s` is underdetermined: %u equation%s for %u unknowns (%u missing)", m->name, neq,
                   neq == 1 ? "" : "s", nunk, nunk - neq);
        if (!list_unused(b, seen))
            diag_note((Span){0}, "every unknown appears in some equation; look for a missing relation");
        free(seen);
    } else {
        diag_error(at, "`%s` is overdetermined: %u equations for %u unknown%s (%u too many)", m->name, neq, nunk,
                   nunk == 1 ? "" : "s", neq - nunk);
        list_extra(b, neq - nunk);
    }
    return false;
}
