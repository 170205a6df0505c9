/*
 * clock_infer.c -- clock inference: which variables are on which clock.
 *
 * Union-find (union by size, path halving; Tarjan 1975, near-linear) over
 * the nodes of clocks.h: the links recorded by clocks.c, plus, for every
 * continuous-looking equation (FE_NORMAL, connections included), all its
 * variables -- an equation lives on one clock, so do its variables
 * (Modelica's clock partitioning, MLS 3.5 chapter 16.7).  Parameters and
 * held values (FV_HOLD) are on no clock and join nothing; `y = sample(u)`
 * and `hold(u)` are the only bridges between the continuous world and a
 * clock.  Every class then carries:
 *   - the clock defined in it (`clk = periodic_clock(...)`), if any;
 *   - whether it must be clocked (a clock parameter, a previous value, a
 *     sampled or held variable) or continuous (der(), a `Continuous`
 *     clock parameter, the argument of sample() or of a zero-crossing clock).
 * A union that brings two different clocks together, or a continuous value
 * into a clocked class, is an error at the relation that did it.  Then:
 * clocked variables become FV_DISCRETE, their equations FE_CLOCKED, the
 * `initial x@(clk-k) = v` relations the values of the history variables.
 * O(size of the equations) plus the union-find.
 */
#include "clocks.h"
#include "numfmt.h"

#include <string.h>

typedef struct {
    uint32_t *parent, *size;
    int32_t *def;             /* defined clock (ClockState.defs) or -1 */
    uint32_t *def_node;       /* the slot that defines it */
    uint32_t *clk_node;       /* a node that must be clocked, or UINT32_MAX */
    uint32_t *cont_node;      /* a node that must be continuous, or UINT32_MAX */
    unsigned char *reported;  /* an error was reported for the class */
    unsigned char *given;     /* the class holds an input clock parameter of the
                                 flattened component itself: given by its user */
    int32_t *clock_of_def;    /* ClockState.defs index -> FlatModel.clocks index, or -1 */
    uint32_t nn;
} Uf;

static uint32_t find(Uf *u, uint32_t x) {
    while (u->parent[x] != x) {
        u->parent[x] = u->parent[u->parent[x]];
        x = u->parent[x];
    }
    return x;
}

static bool node_ok(const Uf *u, uint32_t n) { return n != UINT32_MAX && n < u->nn; }

static const char *node_name(Flattener *F, uint32_t n) {
    if (n % 2 == 0) return arena_printf(F->arena, "`%s`", F->m->vars.data[n / 2].name);
    ClockSlot *s = &F->clk->slots.data[n / 2];
    return arena_printf(F->arena, "clock parameter `%s` of `%s`", s->param->clockparam.name,
                        s->inst->path[0] ? s->inst->path : s->inst->def->name);
}

static const char *clock_desc(Flattener *F, int32_t def) {
    FlatClock *c = &F->clk->defs.data[def];
    if (c->kind == FCLK_ZERO_CROSSING) return arena_printf(F->arena, "`%s` (zero-crossing clock)", c->name);
    if (expr_is_const(c->period)) return arena_printf(F->arena, "`%s` (every %s)", c->name, dyrt_num(c->period->value).s);
    return arena_printf(F->arena, "`%s` (periodic)", c->name);
}

/* the leaves of both sides (a leaf in both comes twice) */
static void eq_leaves(Flattener *F, const FlatEq *q, ExprVec *out) {
    expr_leaves_any(F->ctx, q->lhs, out);
    expr_leaves_any(F->ctx, q->rhs, out);
}

static bool is_clocked(const Uf *u, uint32_t r) { return u->def[r] >= 0 || u->clk_node[r] != UINT32_MAX; }

/* ---------- marks and unions ---------- */

static void set_continuous(Uf *u, uint32_t node) {
    uint32_t r = find(u, node);
    if (u->cont_node[r] == UINT32_MAX) u->cont_node[r] = node;
}

static void set_clocked(Uf *u, uint32_t node) {
    uint32_t r = find(u, node);
    if (u->clk_node[r] == UINT32_MAX) u->clk_node[r] = node;
}

/* a, b: the nodes the relation unites (in classes ra, rb) */
static void mixed_clocks(Flattener *F, Uf *u, uint32_t a, uint32_t b, Span sp) {
    uint32_t ra = find(u, a), rb = find(u, b);
    diag_error(sp, "this relation puts %s on clock %s and %s on clock %s; an equation cannot mix two clocks "
                   "(move a value between clocks with DiscreteComponents.LastValue, or hold and sample it)",
               node_name(F, a), clock_desc(F, u->def[ra]), node_name(F, b), clock_desc(F, u->def[rb]));
}

static void continuous_in_clocked(Flattener *F, Uf *u, uint32_t rc, uint32_t rd, Span sp) {
    uint32_t c = u->cont_node[rc];
    uint32_t d = u->def[rd] >= 0 ? u->def_node[rd] : u->clk_node[rd];
    const char *on = u->def[rd] >= 0 ? arena_printf(F->arena, "clock %s", clock_desc(F, u->def[rd]))
                                     : arena_printf(F->arena, "the clock of %s", node_name(F, d));
    diag_error(sp, "%s is a continuous-time value, but this relation puts it on %s; a clocked equation reads a "
                   "continuous value only through a sampler (DiscreteComponents.Sampler, `y = sample(u)`), a "
                   "continuous equation a clocked value only through a hold (DiscreteComponents.ZeroOrderHold, "
                   "`hold(u)`)", node_name(F, c), on);
}

static void unite(Flattener *F, Uf *u, uint32_t a, uint32_t b, Span sp) {
    uint32_t ra = find(u, a), rb = find(u, b);
    if (ra == rb) return;
    if (!u->reported[ra] && !u->reported[rb]) {
        if (u->def[ra] >= 0 && u->def[rb] >= 0 && u->def[ra] != u->def[rb]) {
            mixed_clocks(F, u, a, b, sp);
            u->reported[ra] = u->reported[rb] = 1;
        } else if (node_ok(u, u->cont_node[ra]) && is_clocked(u, rb)) {
            continuous_in_clocked(F, u, ra, rb, sp);
            u->reported[ra] = u->reported[rb] = 1;
        } else if (node_ok(u, u->cont_node[rb]) && is_clocked(u, ra)) {
            continuous_in_clocked(F, u, rb, ra, sp);
            u->reported[ra] = u->reported[rb] = 1;
        }
    }
    if (u->size[ra] < u->size[rb]) {
        uint32_t t = ra;
        ra = rb;
        rb = t;
    }
    u->parent[rb] = ra;
    u->size[ra] += u->size[rb];
    if (u->def[ra] < 0) u->def[ra] = u->def[rb], u->def_node[ra] = u->def_node[rb];
    if (u->clk_node[ra] == UINT32_MAX) u->clk_node[ra] = u->clk_node[rb];
    if (u->cont_node[ra] == UINT32_MAX) u->cont_node[ra] = u->cont_node[rb];
    u->reported[ra] |= u->reported[rb];
    u->given[ra] |= u->given[rb];
}

/* variables that share an equation's clock: not parameters, not held values */
static bool joins(const FlatVar *v) {
    return v->kind == FV_VARIABLE || v->kind == FV_HISTORY || v->kind == FV_INTERVAL;
}

static void unite_equation(Flattener *F, Uf *u, FlatEq *q) {
    ExprVec v = {0};
    eq_leaves(F, q, &v);
    uint32_t first = UINT32_MAX;
    for (uint32_t i = 0; i < v.len; i++) {
        Expr *x = v.data[i];
        if (x->kind != EXPR_VAR && x->kind != EXPR_DER) continue;
        if (!joins(&F->m->vars.data[x->index])) continue;
        uint32_t n = CLK_NODE_VAR(x->index);
        if (first == UINT32_MAX) first = n;
        else unite(F, u, first, n, q->span);
    }
}

/* ---------- setup ---------- */

static uint32_t *u32s(Flattener *F, uint32_t n, uint32_t fill) {
    uint32_t *a = ARENA_ARRAY(F->arena, uint32_t, n);
    for (uint32_t i = 0; i < n; i++) a[i] = fill;
    return a;
}

static void uf_init(Flattener *F, Uf *u) {
    uint32_t nv = F->m->vars.len, ns = F->clk->slots.len;
    u->nn = 2 * (nv > ns ? nv : ns) + 2;
    u->parent = u32s(F, u->nn, 0);
    u->size = u32s(F, u->nn, 1);
    u->def = (int32_t *)u32s(F, u->nn, UINT32_MAX);
    u->def_node = u32s(F, u->nn, UINT32_MAX);
    u->clk_node = u32s(F, u->nn, UINT32_MAX);
    u->cont_node = u32s(F, u->nn, UINT32_MAX);
    u->reported = ARENA_ARRAY(F->arena, unsigned char, u->nn);
    u->given = ARENA_ARRAY(F->arena, unsigned char, u->nn);
    u->clock_of_def = (int32_t *)u32s(F, F->clk->defs.len + 1, UINT32_MAX);
    for (uint32_t i = 0; i < u->nn; i++) u->parent[i] = i;
}

static bool base_is(const ClockSlot *s, const char *base) {
    return s->param->clockparam.base && !strcmp(s->param->clockparam.base, base);
}

/* a mark on a node whose class already says the opposite is reported here */
static void apply_mark(Flattener *F, Uf *u, uint32_t node, ClockMarkKind k, Span sp) {
    if (k == CM_CONTINUOUS) set_continuous(u, node);
    else set_clocked(u, node);
    uint32_t r = find(u, node);
    if (u->reported[r] || !node_ok(u, u->cont_node[r]) || !is_clocked(u, r)) return;
    u->reported[r] = 1;
    continuous_in_clocked(F, u, r, r, sp);
}

static void seed(Flattener *F, Uf *u) {
    ClockState *cs = F->clk;
    for (uint32_t s = 0; s < cs->slots.len; s++) {
        uint32_t n = CLK_NODE_SLOT(s);
        if (base_is(&cs->slots.data[s], "Continuous")) u->cont_node[n] = n;
        else u->clk_node[n] = n;
        if (cs->slots.data[s].def >= 0) u->def[n] = cs->slots.data[s].def, u->def_node[n] = n;
        if (cs->slots.data[s].def == CLOCK_DEF_FAILED) u->reported[n] = 1;
        if (cs->slots.data[s].inst == F->top && !cs->slots.data[s].param->clockparam.is_output) u->given[n] = 1;
    }
    for (uint32_t i = 0; i < cs->marks.len; i++)
        apply_mark(F, u, cs->marks.data[i].node, (ClockMarkKind)cs->marks.data[i].kind, cs->marks.data[i].span);
    for (uint32_t i = 0; i < F->m->eqs.len; i++) { /* der(x): x is continuous */
        FlatEq *q = &F->m->eqs.data[i];
        if (q->kind != FE_NORMAL) continue;
        ExprVec d = {0};
        eq_leaves(F, q, &d);
        for (uint32_t k = 0; k < d.len; k++)
            if (d.data[k]->kind == EXPR_DER) apply_mark(F, u, CLK_NODE_VAR(d.data[k]->index), CM_CONTINUOUS, q->span);
    }
}

/* ---------- classification ---------- */

static int32_t clock_index(Flattener *F, Uf *u, int32_t def) {
    if (u->clock_of_def[def] < 0) {
        u->clock_of_def[def] = (int32_t)F->m->clocks.len;
        vec_push(F->keep, &F->m->clocks, F->clk->defs.data[def]);
    }
    return u->clock_of_def[def];
}

/* 1 + the clock of variable v's class, 0 when continuous or undefined */
static uint32_t class_clock(Flattener *F, Uf *u, uint32_t v, bool *clocked) {
    uint32_t r = find(u, CLK_NODE_VAR(v));
    *clocked = is_clocked(u, r);
    if (!*clocked || u->def[r] < 0) return 0;
    return (uint32_t)clock_index(F, u, u->def[r]) + 1;
}

static void undefined_clock(Flattener *F, Uf *u, uint32_t v) {
    uint32_t r = find(u, CLK_NODE_VAR(v));
    if (u->reported[r] || u->given[r]) return; /* given: checked where a simulation needs it */
    u->reported[r] = 1;
    uint32_t why = u->clk_node[r];
    diag_error(F->m->vars.data[v].span, "`%s` is on a clock that is never defined (it comes from %s); connect it "
                                        "to a clock, e.g. DiscreteComponents.PeriodicClock(dt = ...).y",
               F->m->vars.data[v].name, node_ok(u, why) ? node_name(F, why) : "a clocked relation");
}

/* SampleTime() of a periodic clock is its period (a zero-crossing clock's:
 * zero_crossing_intervals, after the classification) */
static void interval_value(Flattener *F, FlatVar *fv) {
    if (!fv->clock) return;
    FlatClock *c = &F->m->clocks.data[fv->clock - 1];
    if (c->kind == FCLK_PERIODIC) fv->value = c->period;
}

/* ---------- helpers of the clocked world made after inference ---------- */

/* a clocked variable `name` on clock c (value 0 before the first tick)
 * computed by `name = value` at each of its ticks */
static uint32_t tick_var(Flattener *F, uint32_t like, const char *name, uint32_t c, Expr *value, Span at) {
    uint32_t v = clock_new_var(F, like, name, FV_DISCRETE, at);
    FlatVar *fv = &F->m->vars.data[v];
    fv->clock = c;
    fv->value = expr_const(F->ctx, 0);
    vec_push(F->keep, &F->m->eqs, ((FlatEq){.kind = FE_CLOCKED, .lhs = var_leaf(F, v), .rhs = value,
                                             .origin = "", .span = at, .clock = c}));
    return v;
}

/* `x@(clk-1)` of a helper x, its value at the first tick `first` (NULL: a
 * first-tick relation `rel`) */
static uint32_t tick_history(Flattener *F, uint32_t x, Expr *first, Expr *rel, Span at) {
    uint32_t h = clock_history_var(F, x, 1, at);
    FlatVar *hv = &F->m->vars.data[h];
    hv->clock = F->m->vars.data[x].clock;
    hv->value = first ? first : expr_const(F->ctx, 0);
    if (rel) {
        hmap_put(F->arena, &F->clk->first_tick, (uint64_t)h + 1, rel);
        vec_push(F->arena, &F->clk->first_vars, h);
    }
    return h;
}

/* `ticked@(clk-1)` of clock c: 0 at its first tick, 1 after (ticked = 1 at
 * every tick) */
static uint32_t ticked_before(Flattener *F, uint32_t c, uint32_t like, Span at) {
    uintptr_t have = (uintptr_t)hmap_get(&F->clk->ticked, (uint64_t)c + 1);
    if (have) return (uint32_t)(have - 1);
    const char *name = arena_printf(F->keep, "%s.ticked", F->m->clocks.data[c - 1].name);
    uint32_t d = tick_var(F, like, name, c, expr_const(F->ctx, 1), at);
    uint32_t h = tick_history(F, d, expr_const(F->ctx, 0), NULL, at);
    hmap_put(F->arena, &F->clk->ticked, (uint64_t)c + 1, (void *)(uintptr_t)(h + 1));
    return h;
}

/* SampleTime() of a zero-crossing clock: the time since its previous tick,
 * 0 at its first tick (Modelica's interval() of an event clock with the
 * default startInterval):  T = time,  SampleTime() = time - T@(clk-1) with
 * the first-tick relation T@(clk-1) = T. */
static void zero_crossing_intervals(Flattener *F) {
    uint32_t nv = F->m->vars.len;
    for (uint32_t v = 0; v < nv; v++) {
        FlatVar *fv = &F->m->vars.data[v];
        if (fv->kind != FV_INTERVAL || !fv->clock || fv->value) continue;
        uint32_t c = fv->clock;
        Span at = fv->span;
        uintptr_t have = (uintptr_t)hmap_get(&F->clk->tick_time, (uint64_t)c + 1);
        if (!have) {
            const char *name = arena_printf(F->keep, "%s.time", F->m->clocks.data[c - 1].name);
            uint32_t t = tick_var(F, v, name, c, expr_time(F->ctx), at);
            have = tick_history(F, t, NULL, var_leaf(F, t), at) + 1;
            hmap_put(F->arena, &F->clk->tick_time, (uint64_t)c + 1, (void *)have);
        }
        fv = &F->m->vars.data[v]; /* (the vector may have grown) */
        fv->kind = FV_DISCRETE;
        fv->value = expr_const(F->ctx, 0);
        Expr *dt = expr_sub(F->ctx, expr_time(F->ctx), var_leaf(F, (uint32_t)(have - 1)));
        vec_push(F->keep, &F->m->eqs, ((FlatEq){.kind = FE_CLOCKED, .lhs = var_leaf(F, v), .rhs = dt,
                                                 .origin = "", .span = at, .clock = c}));
    }
}

/* Every clocked equation reads a history variable x@(clk-k) that has a
 * first-tick relation as ifelse(ticked@(clk-1) > 0.5, x@(clk-k), rel): the
 * relation's value at the first tick (solved with the partition: rel reads
 * the first tick's own values), the shifted history after.  The ifelse
 * keeps the partition's causalization from dividing by a coefficient that
 * is 0 at the first tick (partition.c: coefficients free of ifelse). */
typedef struct { Flattener *F; Expr **repl; } FirstTick;

static Expr *first_tick_leaf(void *ud, Expr *leaf) {
    FirstTick *f = ud;
    if (leaf->kind != EXPR_VAR || !hmap_get(&f->F->clk->first_tick, (uint64_t)leaf->index + 1)) return leaf;
    for (uint32_t i = 0; i < f->F->clk->first_vars.len; i++)
        if (f->F->clk->first_vars.data[i] == leaf->index) return f->repl[i];
    return leaf;
}

static void first_tick_relations(Flattener *F) {
    ClockState *cs = F->clk;
    uint32_t n = cs->first_vars.len;
    if (!n) return;
    FirstTick f = {F, ARENA_ARRAY(F->arena, Expr *, n)};
    for (uint32_t i = 0; i < n; i++) {
        uint32_t h = cs->first_vars.data[i];
        FlatVar *hv = &F->m->vars.data[h];
        uint32_t d = ticked_before(F, hv->clock, h, F->m->vars.data[h].span);
        Expr *cond = expr_cmp(F->ctx, EXPR_GT, var_leaf(F, d), expr_const(F->ctx, 0.5));
        f.repl[i] = expr_ifelse(F->ctx, cond, var_leaf(F, h), hmap_get(&cs->first_tick, (uint64_t)h + 1));
    }
    for (uint32_t i = 0; i < F->m->eqs.len; i++) {
        FlatEq *q = &F->m->eqs.data[i];
        if (q->kind != FE_CLOCKED) continue;
        q->lhs = expr_subst(F->ctx, q->lhs, first_tick_leaf, &f);
        q->rhs = expr_subst(F->ctx, q->rhs, first_tick_leaf, &f);
    }
}

static void classify_vars(Flattener *F, Uf *u) {
    for (uint32_t v = 0; v < F->m->vars.len; v++) {
        FlatVar *fv = &F->m->vars.data[v];
        if (!joins(fv)) continue;
        bool clocked;
        uint32_t c = class_clock(F, u, v, &clocked);
        if (!clocked || u->reported[find(u, CLK_NODE_VAR(v))]) continue; /* reported: no cascade */
        if (!c) undefined_clock(F, u, v);
        if (fv->kind == FV_VARIABLE) fv->kind = FV_DISCRETE;
        fv->clock = c;
    }
    for (uint32_t v = 0; v < F->m->vars.len; v++) {
        FlatVar *fv = &F->m->vars.data[v];
        if (fv->kind == FV_HOLD) fv->clock = F->m->vars.data[flat_attr(F->m, fv)->of].clock;
        if (fv->kind == FV_DISCRETE && !fv->value) fv->value = expr_const(F->ctx, 0); /* before the first tick */
        if (fv->kind == FV_INTERVAL) interval_value(F, fv);
    }
}

static uint32_t eq_clock(Flattener *F, FlatEq *q, bool *any) {
    ExprVec v = {0};
    eq_leaves(F, q, &v);
    *any = false;
    for (uint32_t i = 0; i < v.len; i++) {
        if (v.data[i]->kind != EXPR_VAR) continue;
        FlatVar *fv = &F->m->vars.data[v.data[i]->index];
        if (fv->kind == FV_DISCRETE || fv->kind == FV_HISTORY || fv->kind == FV_INTERVAL) {
            *any = true;
            return fv->clock;
        }
    }
    return 0;
}

/* a leaf the value of a history variable at the first tick may read:
 * 0 no, 1 a parameter, 2 a value of the clock's first tick */
static int first_value_leaf(Flattener *F, const FlatVar *h, const Expr *l) {
    if (l->kind != EXPR_VAR) return l->kind == EXPR_TIME ? 2 : 0;
    const FlatVar *v = &F->m->vars.data[l->index];
    if (v->kind == FV_PARAMETER || v->kind == FV_CONSTANT || v->kind == FV_PARAM_MISSING) return 1;
    return (v->kind == FV_DISCRETE || v->kind == FV_INTERVAL) && v->clock && v->clock == h->clock ? 2 : 0;
}

/* `initial x@(clk-k) = v`: the value of the history variable; v may read
 * parameters, and the first tick's values of x's clock (a first-tick
 * relation, first_tick_relations) */
static bool history_initial(Flattener *F, FlatEq *q) {
    Expr *l = q->lhs, *r = q->rhs;
    if (r->kind == EXPR_VAR && F->m->vars.data[r->index].kind == FV_HISTORY && l->kind != EXPR_VAR) {
        Expr *t = l;
        l = r;
        r = t;
    }
    if (l->kind != EXPR_VAR || F->m->vars.data[l->index].kind != FV_HISTORY) return false;
    FlatVar *h = &F->m->vars.data[l->index];
    ExprVec v = {0};
    expr_leaves_any(F->ctx, r, &v);
    bool current = false;
    for (uint32_t i = 0; i < v.len; i++) {
        int k = first_value_leaf(F, h, v.data[i]);
        current |= k == 2;
        if (k) continue;
        diag_error(q->span, "the value of `%s` at the first tick may read parameters and the values of its "
                            "clock's first tick (`x@clk`), not `%s`", h->name,
                   v.data[i]->kind == EXPR_VAR ? F->m->vars.data[v.data[i]->index].name : "this");
        h->value = expr_const(F->ctx, 0); /* reported; not "missing" as well */
        return true;
    }
    if (h->value || hmap_get(&F->clk->first_tick, (uint64_t)l->index + 1)) {
        diag_error(q->span, "`%s` is given an initial value twice", h->name);
        return true;
    }
    if (current) {
        hmap_put(F->arena, &F->clk->first_tick, (uint64_t)l->index + 1, r);
        vec_push(F->arena, &F->clk->first_vars, l->index);
        h->value = expr_const(F->ctx, 0); /* (read only after the first tick) */
    } else {
        h->value = r;
    }
    return true;
}

static bool clocked_initial(Flattener *F, FlatEq *q) {
    bool any;
    eq_clock(F, q, &any);
    if (!any) return false;
    diag_error(q->span, "an `initial` relation on a clocked variable: clocked variables are computed at each tick; "
                        "give the values of previous ticks as `initial x@(clk - 1) = v`");
    return true;
}

static void classify_eqs(Flattener *F) {
    uint32_t keep = 0;
    for (uint32_t i = 0; i < F->m->eqs.len; i++) {
        FlatEq q = F->m->eqs.data[i];
        bool any;
        if (q.kind == FE_INITIAL && (history_initial(F, &q) || clocked_initial(F, &q))) continue;
        if (q.kind == FE_NORMAL) {
            q.clock = eq_clock(F, &q, &any);
            if (any) q.kind = FE_CLOCKED;
        } else if (q.kind == FE_SAMPLE) {
            q.clock = F->m->vars.data[q.lhs->index].clock;
        }
        F->m->eqs.data[keep++] = q;
    }
    F->m->eqs.len = keep;
}

/* every lag 1..K of a clocked variable exists and has its value at the first tick */
static void complete_history(Flattener *F) {
    uint32_t nv = F->m->vars.len;
    uint32_t *maxlag = ARENA_ARRAY(F->arena, uint32_t, nv + 1);
    uint32_t *user = u32s(F, nv + 1, UINT32_MAX); /* a history variable the model uses, for spans */
    for (uint32_t v = 0; v < nv; v++) {
        FlatVar *h = &F->m->vars.data[v];
        if (h->kind != FV_HISTORY) continue;
        const FlatVarAttr *a = flat_attr(F->m, h);
        if (a->lag > maxlag[a->of]) maxlag[a->of] = a->lag, user[a->of] = v;
    }
    for (uint32_t x = 0; x < nv; x++)
        for (uint32_t k = 1; k <= maxlag[x]; k++) {
            Span at = F->m->vars.data[user[x]].span;
            uint32_t h = clock_history_var(F, x, k, at);
            FlatVar *hv = &F->m->vars.data[h];
            hv->clock = F->m->vars.data[x].clock;
            if (!hv->value)
                diag_error(at, "`%s` needs the value of `%s` at its first tick: add `initial %s = ...`",
                           F->m->vars.data[user[x]].name, hv->name, hv->name);
        }
}

static void check_bases(Flattener *F, Uf *u) {
    ClockState *cs = F->clk;
    for (uint32_t s = 0; s < cs->slots.len; s++) {
        if (!base_is(&cs->slots.data[s], "Periodic")) continue;
        uint32_t r = find(u, CLK_NODE_SLOT(s));
        if (u->def[r] < 0 || cs->defs.data[u->def[r]].kind == FCLK_PERIODIC || u->reported[r]) continue;
        u->reported[r] = 1;
        diag_error(cs->slots.data[s].param->span, "%s must be a periodic clock, but it is %s",
                   node_name(F, CLK_NODE_SLOT(s)), clock_desc(F, u->def[r]));
    }
}

/* Connection equations (from first_connect_eq on) are united first: they
 * carry the clocks from their sources, so a conflict is then reported at the
 * relation that mixes two already clocked signals. */
void clock_infer(Flattener *F, uint32_t first_connect_eq) {
    if (!F->clk) return;
    Uf u = {0};
    uf_init(F, &u);
    seed(F, &u);
    ClockState *cs = F->clk;
    for (uint32_t i = 0; i < cs->links.len; i++) unite(F, &u, cs->links.data[i].a, cs->links.data[i].b, cs->links.data[i].span);
    uint32_t ne = F->m->eqs.len;
    for (uint32_t k = 0; k < ne; k++) {
        uint32_t i = first_connect_eq + k < ne ? first_connect_eq + k : first_connect_eq + k - ne;
        if (F->m->eqs.data[i].kind == FE_NORMAL) unite_equation(F, &u, &F->m->eqs.data[i]);
    }
    classify_vars(F, &u);
    check_bases(F, &u);
    classify_eqs(F);
    zero_crossing_intervals(F);
    complete_history(F);
    first_tick_relations(F);
}
