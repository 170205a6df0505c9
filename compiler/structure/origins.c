/*
 * origins.c -- where the System's values come from, for the runtime's
 * message when a value turns NaN or infinite (system.h "origins"):
 *
 *   eq_src[e]     the relation as written, with its line ("i = v / R
 *                 (rc.dyad:12)"): the source text of the flat equation's
 *                 span, whitespace collapsed, deduplicated (every instance
 *                 of a component shares its lines), so the table grows with
 *                 the source, not with the model;
 *   resid_eq[r]   the equation behind residual row r;
 *   out_eq[j]     the equation that computes output column j (an assigned
 *                 or algebraic unknown), -1 for states, aliases, parameters;
 *   out_rank[j]   the position of that computation in BLT order: of several
 *                 non-finite values the one computed first is where the
 *                 trouble began;
 *   risk          the operations of each equation that turn finite inputs
 *                 into NaN or Inf (a division, sqrt, log, asin/acos, a power
 *                 with a constant exponent) whose argument is one variable
 *                 or parameter, so the runtime can test it with the values
 *                 at hand: "division by zero (R = 0)".
 *
 * Equations e are flat equations, a differentiated one (index reduction)
 * apart; those alias elimination consumed are kept when they hold a risky
 * operation (their values live on in parameter offsets).  O(equations +
 * their DAG sizes, each capped at RISK_SCAN_MAX).
 */
#include "structure_internal.h"

#include <ctype.h>
#include <math.h>
#include <string.h>

/* Longer relations are cut in messages; bigger equation DAGs are not
 * scanned for risky operations beyond this many nodes. */
#define SRC_TEXT_MAX 100
#define RISK_SCAN_MAX 4096

typedef struct {
    St *t;
    HashMap src_of;    /* (file << 32 | lo) + 1 -> src index + 1 */
    Vec(const char *) src;
    int32_t *eq_of;    /* SEq -> equation index, -1 not yet */
    Vec(int32_t) eq_src;
    Vec(SysRisk) risk;
    int32_t *col;      /* flat var -> output column, -1 */
    HashMap seen;      /* risk scan: node ids visited for the current equation */
    const StTmpl *k;   /* scanning a template for one of its instances: */
    const uint32_t *var; /* the variables its leaves read there */
    Arena *scan;       /* the scan's map and stack, reset after each equation */
} Org;

/* "i = v / R (rc.dyad:12)" from the source text of the span */
static const char *span_text(St *t, Span sp, const char *post) {
    SrcFile *f = src_get(sp.file);
    if (!f || sp.hi <= sp.lo || sp.hi > f->len) return NULL;
    char buf[SRC_TEXT_MAX + 8];
    size_t n = 0;
    bool space = false;
    for (uint32_t i = sp.lo; i < sp.hi && n < SRC_TEXT_MAX; i++) {
        unsigned char ch = (unsigned char)f->text[i];
        if (isspace(ch)) { space = n > 0; continue; }
        if (space) buf[n++] = ' ';
        space = false;
        buf[n++] = (char)ch;
    }
    if (n >= SRC_TEXT_MAX) memcpy(buf + n, "...", 4), n += 3;
    buf[n] = 0;
    uint32_t line, col;
    src_line_col(f, sp.lo, &line, &col);
    return arena_printf(t->arena, "%s (%s:%u)%s", buf, f->path, line, post);
}

static int32_t src_index(Org *o, uint32_t flat, bool diff) {
    St *t = o->t;
    FlatEq *f = &t->m->eqs.data[flat];
    uint64_t key = (((uint64_t)f->span.file << 32) | f->span.lo) * 2 + diff + 1;
    void *got = f->span.file ? hmap_get(&o->src_of, key) : NULL;
    if (got) return (int32_t)(uintptr_t)got - 1;
    const char *post = diff ? " (differentiated)" : "";
    const char *text = span_text(t, f->span, post);
    if (!text) text = st_eq_text(t, flat, "", post);
    vec_push(t->arena, &o->src, text);
    if (f->span.file) hmap_put(t->arena, &o->src_of, key, (void *)(uintptr_t)o->src.len);
    return (int32_t)o->src.len - 1;
}

/* the argument of a risky operation as a runtime value: output column
 * (>= 0) or parameter -(p + 1); 0x7fffffff when it is no single one */
static int32_t arg_of(Org *o, const Expr *a) {
    uint32_t v = a->index;
    for (uint32_t j = 0; o->k && j < o->k->nleaves; j++) /* a template's leaf: the instance's */
        if (o->k->leaves[j] == a) {
            if (st_tmpl_leaf_kind(o->k, j) != EXPR_VAR) return INT32_MAX;
            v = o->var[j];
            a = NULL;
        }
    if (a && a->kind != EXPR_VAR) return INT32_MAX;
    St *t = o->t;
    if (o->col[v] >= 0) return o->col[v];
    if (t->pslot[v] >= 0) return -(t->pslot[v] + 1);
    return INT32_MAX;
}

static void add_risk(Org *o, int32_t eq, SysRiskKind kind, const Expr *arg) {
    int32_t a = arg_of(o, arg);
    if (a == INT32_MAX) return;
    SysRisk r = {.eq = (uint32_t)eq, .kind = (uint8_t)kind, .arg = a};
    vec_push(o->t->arena, &o->risk, r);
}

static void risk_of_node(Org *o, int32_t eq, const Expr *e) {
    const Expr *a = e->args[0];
    switch ((ExprKind)e->kind) {
    case EXPR_DIV: add_risk(o, eq, SYS_RISK_DIV, e->args[1]); return;
    case EXPR_POW:
        if (!expr_is_const(e->args[1])) return;
        if (e->args[1]->value < 0) add_risk(o, eq, SYS_RISK_POW_ZERO, a);
        if (floor(e->args[1]->value) != e->args[1]->value) add_risk(o, eq, SYS_RISK_POW_NEG, a);
        return;
    case EXPR_CALL:
        switch ((ExprFn)e->fn) {
        case FN_SQRT: add_risk(o, eq, SYS_RISK_SQRT, a); return;
        case FN_LOG: case FN_LOG10: add_risk(o, eq, SYS_RISK_LOG, a); return;
        case FN_ASIN: case FN_ACOS: add_risk(o, eq, SYS_RISK_ASIN, a); return;
        default: return;
        }
    default: return;
    }
}

/* the risky operations of flat equation q (DFS over its DAG, capped) */
static void scan_risks(Org *o, int32_t eq, const FlatEq *q) {
    if (!o->scan) o->scan = arena_new_in(o->t->arena, 64u << 10);
    memset(&o->seen, 0, sizeof o->seen);
    ExprVec st = {0};
    vec_push(o->scan, &st, q->lhs);
    vec_push(o->scan, &st, q->rhs);
    for (uint32_t n = 0; st.len && n < RISK_SCAN_MAX; n++) {
        Expr *e = st.data[--st.len];
        if (expr_is_leaf(e) || hmap_get(&o->seen, e->id)) continue;
        hmap_put(o->scan, &o->seen, e->id, e);
        risk_of_node(o, eq, e);
        for (int i = 0; i < e->nargs; i++) vec_push(o->scan, &st, e->args[i]);
    }
    memset(&o->seen, 0, sizeof o->seen);
    arena_reset(o->scan);   /* one equation's temporaries: a million would add up */
}

/* may risk_of_node find something in e */
static bool risky(const Expr *e) {
    switch ((ExprKind)e->kind) {
    case EXPR_DIV: return true;
    case EXPR_POW: return expr_is_const(e->args[1]);
    case EXPR_CALL:
        return e->fn == FN_SQRT || e->fn == FN_LOG || e->fn == FN_LOG10 || e->fn == FN_ASIN || e->fn == FN_ACOS;
    default: return false;
    }
}

/* the risky nodes of a uniform template, once (tree walk: templates are
 * small, and a node met twice counts twice, which only errs to the safe
 * side) */
static void scan_template(Org *o, StTmpl *k) {
    ExprVec st = {0};
    k->nrisky = 0;
    vec_push(o->t->arena, &st, k->q->lhs);
    vec_push(o->t->arena, &st, k->q->rhs);
    while (st.len && k->nrisky < 2) {
        Expr *e = st.data[--st.len];
        if (e->kind == EXPR_AT || expr_is_leaf(e)) continue;
        if (risky(e)) k->nrisky++, k->risky = e;
        for (int i = 0; i < e->nargs; i++) vec_push(o->t->arena, &st, e->args[i]);
    }
}

/* An instance of a uniform template with at most one risky node: its
 * risks from the template's, the argument read at the instance (with two
 * or more, their order is the instance's DAG order: scan the instance). */
static bool template_risks(Org *o, int32_t eq, uint32_t flat) {
    St *t = o->t;
    FlatEq *q = &t->m->eqs.data[flat];
    uint32_t var[ST_TMPL_MAX_LEAVES];
    StTmpl *k = st_tmpl(t, q);
    if (!k || q->lhs || !st_tmpl_leaves(t, k, q->inst, var)) return false;
    if (k->nrisky < 0) scan_template(o, k);
    if (k->nrisky > 1) return false;
    if (k->nrisky == 1) {
        o->k = k, o->var = var;
        risk_of_node(o, eq, k->risky);
        o->k = NULL, o->var = NULL;
    }
    return true;
}

/* the equation index of flat equation `flat` (differentiated or not),
 * created with its risks on first use */
static int32_t flat_index(Org *o, uint32_t flat, bool diff) {
    int32_t *slot = &o->eq_of[2 * flat + diff];
    if (*slot >= 0) return *slot;
    int32_t k = (int32_t)o->eq_src.len;
    vec_push(o->t->arena, &o->eq_src, src_index(o, flat, diff));
    *slot = k;
    if (!template_risks(o, k, flat)) scan_risks(o, k, flat_eq_get(o->t->m, flat));
    return k;
}

/* ... of SEq e, -1 without a flat origin */
static int32_t eq_index(Org *o, int32_t e) {
    if (e < 0 || o->t->eq.data[e].flat < 0) return -1;
    const SEq *q = &o->t->eq.data[e];
    return flat_index(o, (uint32_t)q->flat, q->order > 0);
}

/* Equations consumed by alias elimination live on in parameter offsets
 * (`v = 1 / a`): those with a risky operation get an equation too. */
static void alias_risks(Org *o) {
    St *t = o->t;
    for (uint32_t i = 0; i < t->m->eqs.len; i++) {
        if (!t->eq_alias[i] || o->eq_of[2 * i] >= 0) continue;
        uint32_t before = o->risk.len;
        int32_t k = flat_index(o, i, false);
        if (o->risk.len > before) continue;
        o->eq_src.len--;     /* no risk: not needed */
        o->eq_of[2 * i] = -1;
        (void)k;
    }
}

/* BLT position of the block that computes each structural variable */
static int32_t *block_of(St *t) {
    int32_t *b = ARENA_ARRAY(t->arena, int32_t, t->sv.len + 1);
    memset(b, 0xff, sizeof *b * (t->sv.len + 1));
    for (uint32_t i = 0; i < t->blocks.len; i++) {
        Block *k = &t->blocks.data[i];
        for (uint32_t j = 0; j < k->size; j++) b[t->bvars.data[k->first + j]] = (int32_t)i;
    }
    return b;
}

static void outputs(Org *o) {
    St *t = o->t;
    System *s = t->s;
    int32_t *blk = block_of(t);
    s->out_eq = ARENA_ARRAY(t->arena, int32_t, s->nout + 1);
    s->out_rank = ARENA_ARRAY(t->arena, int32_t, s->nout + 1);
    for (uint32_t v = 0; v < t->nflat; v++) {
        int32_t j = o->col[v];
        if (j < 0) continue;
        SVar *sv = &t->sv.data[v];
        bool computed = !t->alias[v] && (sv->role == SR_ASSIGNED || sv->role == SR_ALG);
        s->out_eq[j] = computed ? eq_index(o, t->assign[v]) : -1;
        s->out_rank[j] = computed ? blk[v] : -1;
    }
    arena_release(t->arena, blk, sizeof *blk * ((size_t)t->sv.len + 1));
}

void struct_origins(St *t) {
    System *s = t->s;
    Org o = {.t = t};
    uint32_t nflat_eq = t->m->eqs.len;
    o.eq_of = ARENA_ARRAY(t->arena, int32_t, 2 * nflat_eq + 1);
    memset(o.eq_of, 0xff, sizeof *o.eq_of * (2 * nflat_eq + 1));
    o.col = ARENA_ARRAY(t->arena, int32_t, t->nflat + 1);
    for (uint32_t v = 0, j = 0; v < t->nflat; v++)
        o.col[v] = t->m->vars.data[v].kind == FV_VARIABLE ? (int32_t)j++ : -1;
    s->resid_eq = ARENA_ARRAY(t->arena, int32_t, s->ny + 1);
    for (uint32_t r = 0; r < s->ny && r < t->resid_eq.len; r++)
        s->resid_eq[r] = eq_index(&o, (int32_t)t->resid_eq.data[r]);
    outputs(&o);
    alias_risks(&o);
    s->nsrc = o.src.len;
    s->src_names = o.src.data;
    s->neq = o.eq_src.len;
    s->eq_src = o.eq_src.data;
    s->nrisk = o.risk.len;
    s->risk = o.risk.data;
    /* the temporaries: 16 bytes a flat equation and variable */
    arena_release(t->arena, o.eq_of, sizeof *o.eq_of * (2 * (size_t)nflat_eq + 1));
    arena_release(t->arena, o.col, sizeof *o.col * ((size_t)t->nflat + 1));
    hmap_release(t->arena, &o.src_of);
}
