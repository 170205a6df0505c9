/*
 * blt.c -- block lower triangular form of the index-1 system, explicit
 * assignments and tearing.
 *
 * Input: every equation (original and differentiated), every structural
 * variable with a role from pantelides.c.  States are known; the unknowns
 * are the algebraic variables (dummy derivatives included) and the
 * derivatives of the states.
 *
 * 1. Matching (Hopcroft-Karp, matching.c).  An unmatched equation or
 *    unknown is a structural singularity of the index-reduced system: an
 *    error naming the equations and unknowns, with their source lines.
 * 2. Tarjan, "Depth-first search and linear graph algorithms" (SIAM J.
 *    Comput. 1(2), 1972): strongly connected components of the graph
 *    "equation e uses the unknown matched to equation f", iterative, O(E).
 *    Components come out dependencies first: that is the BLT order.
 * 3. Each block, in order, after substituting the explicit assignments of
 *    the blocks before it (hash-consing shares the substituted DAGs):
 *    - one equation, one unknown v, v an algebraic variable, the equation
 *      solvable for v by the solvability rule (solve.c: a nonzero constant
 *      or a checked parameter coefficient; never a variable or time, so no
 *      division by something that can cross zero): an explicit assignment
 *      v := solution, removed from the integrator;
 *      except when the solution (after substitution) depends on more than
 *      ASSIGN_MAX_SUPPORT unknowns and another equation reads v (a value no
 *      other equation reads, like a ground's current summing every branch,
 *      is never substituted: keeping it implicit would only add a wide
 *      Jacobian row): then v stays an IDA unknown with the
 *      residual v - solution, SB_IMPLICIT, and later blocks read v.  A chain
 *      of assignments (the rotation matrix of link k of a mechanism from link
 *      k - 1's) would otherwise make every later residual a function of all
 *      the chain's unknowns: a dense Jacobian of ever larger entries, cubic in
 *      the chain's length (a 100-link pendulum did not compile);
 *    - one equation for der(state): the state's residual row (IDA needs
 *      one per state), SB_STATE_DER;
 *    - one equation not solvable that way: v stays an IDA unknown with the
 *      equation as residual, SB_IMPLICIT;
 *    - an algebraic loop of at most TEAR_MAX_BLOCK equations is torn (below);
 *      the loop is classified linear (every residual's derivative with
 *      respect to every iteration variable free of iteration variables)
 *      or nonlinear;
 *    - a larger loop is not torn: all its unknowns stay IDA unknowns and
 *      IDA's Newton iteration solves it with the sparse (KLU) Jacobian,
 *      SB_SPARSE.
 *
 * Tearing heuristic (greedy, after Cellier & Kofman, "Continuous System
 * Simulation" §7, and Elmqvist & Otter 1994): derivatives of states are
 * iteration variables from the start (they have to stay IDA unknowns).
 * Then repeat: every equation with exactly one unknown of the block left
 * that it can be solved for by the solvability rule assigns it;
 * when none does, the unknown occurring in the most unused equations of
 * the block (ties: first declared) becomes an iteration variable.  The
 * unused equations are the loop's residuals, as many as iteration
 * variables.  O(b^2) for a block of b equations, b <= TEAR_MAX_BLOCK.
 */
#include "structure_internal.h"

#include <string.h>

#define TEAR_MAX_BLOCK 200
#define ASSIGN_MAX_SUPPORT 16 /* unknowns an explicit assignment may depend on */

static bool blt_var(St *t, uint32_t v) {
    return st_is_unknown(t, v) && (t->sv.data[v].role == SR_ALG || t->sv.data[v].role == SR_DERIV);
}

/* ---------- matching and errors ---------- */

static bool match_all(St *t) {
    st_grow_match(t);
    memset(t->assign, 0xff, sizeof *t->assign * t->assign_cap);
    memset(t->match, 0xff, sizeof *t->match * t->match_cap);
    uint32_t nunk = 0;
    for (uint32_t v = 0; v < t->sv.len; v++) nunk += blt_var(t, v);
    uint32_t matched = st_match(t, NULL, blt_var);
    if (matched == t->eq.len && matched == nunk) return true;
    U32Vec eqs = {0}, vars = {0};
    for (uint32_t e = 0; e < t->eq.len; e++)
        if (t->match[e] < 0) vec_push(t->arena, &eqs, e);
    for (uint32_t v = 0; v < t->sv.len; v++)
        if (blt_var(t, v) && t->assign[v] < 0) vec_push(t->arena, &vars, v);
    Span sp = {0};
    if (eqs.len && t->eq.data[eqs.data[0]].flat >= 0) sp = t->m->eqs.data[t->eq.data[eqs.data[0]].flat].span;
    else if (vars.len) sp = t->m->vars.data[t->sv.data[vars.data[0]].base].span;
    diag_error(sp, "the simulation system of `%s` is structurally singular: %u equation%s cannot be "
                   "assigned an unknown and %u unknown%s no equation",
               t->m->name, eqs.len, eqs.len == 1 ? "" : "s", vars.len, vars.len == 1 ? "" : "s");
    for (uint32_t i = 0; i < eqs.len; i++) st_note_eq(t, eqs.data[i], "equation with no unknown left to determine");
    for (uint32_t i = 0; i < vars.len; i++)
        diag_note(t->m->vars.data[t->sv.data[vars.data[i]].base].span, "no equation determines `%s`",
                  st_sv_name(t, vars.data[i]));
    return false;
}

/* ---------- Tarjan ---------- */

typedef struct {
    uint32_t *index, *low, *stack, *cs, *cpos;
    bool *on;
    uint32_t next, sp;
} Tarjan;

/* the equation that computes the k-th unknown of e, or -1 */
static int32_t succ(St *t, uint32_t e, uint32_t k) {
    uint32_t v = t->eq.data[e].inc[k];
    return blt_var(t, v) ? t->assign[v] : -1;
}

static void emit_scc(St *t, Tarjan *g, uint32_t root) {
    Block b = {.first = t->beqs.len};
    uint32_t x;
    do {
        x = g->stack[--g->sp];
        g->on[x] = false;
        vec_push(t->arena, &t->beqs, x);
        vec_push(t->arena, &t->bvars, (uint32_t)t->match[x]);
        b.size++;
    } while (x != root);
    vec_push(t->arena, &t->blocks, b);
}

static void strongconnect(St *t, Tarjan *g, uint32_t root) {
    uint32_t n = 0;
    g->cs[n] = root;
    g->cpos[n++] = 0;
    g->index[root] = g->low[root] = ++g->next;
    g->stack[g->sp++] = root;
    g->on[root] = true;
    while (n) {
        uint32_t e = g->cs[n - 1], *k = &g->cpos[n - 1];
        bool pushed = false;
        for (; *k < t->eq.data[e].ninc && !pushed; (*k)++) {
            int32_t f = succ(t, e, *k);
            if (f < 0) continue;
            if (!g->index[f]) {
                g->index[f] = g->low[f] = ++g->next;
                g->stack[g->sp++] = (uint32_t)f;
                g->on[f] = true;
                g->cs[n] = (uint32_t)f;
                g->cpos[n++] = 0;
                pushed = true;
            } else if (g->on[f] && g->index[f] < g->low[e]) g->low[e] = g->index[f];
        }
        if (pushed) continue;
        if (g->low[e] == g->index[e]) emit_scc(t, g, e);
        n--;
        if (n) {
            uint32_t p = g->cs[n - 1];
            if (g->low[e] < g->low[p]) g->low[p] = g->low[e];
        }
    }
}

static void tarjan(St *t) {
    uint32_t n = t->eq.len + 1;
    Tarjan g = {ARENA_ARRAY(t->arena, uint32_t, n), ARENA_ARRAY(t->arena, uint32_t, n),
                ARENA_ARRAY(t->arena, uint32_t, n), ARENA_ARRAY(t->arena, uint32_t, n),
                ARENA_ARRAY(t->arena, uint32_t, n), ARENA_ARRAY(t->arena, bool, n), 0, 0};
    for (uint32_t e = 0; e < t->eq.len; e++)
        if (!g.index[e]) strongconnect(t, &g, e);
    uint32_t *a[] = {g.index, g.low, g.stack, g.cs, g.cpos};
    for (uint32_t i = 0; i < sizeof a / sizeof *a; i++) arena_release(t->arena, a[i], sizeof *a[i] * n);
    arena_release(t->arena, g.on, sizeof *g.on * n);
}

/* ---------- assignments ---------- */

/* assigned variables, and state derivatives with an explicit value (below),
 * are replaced by their value in later blocks */
static Expr *assigned_leaf(void *ud, Expr *leaf) {
    St *t = ud;
    if (leaf->kind != EXPR_VAR) return leaf;
    SVar *v = &t->sv.data[leaf->index];
    if (v->role == SR_ASSIGNED || (v->role == SR_DERIV && st_has_value(v))) return st_sv_value(t, leaf->index);
    return leaf;
}

static Expr *substituted(St *t, uint32_t e) {
    return expr_subst_watch(t->c, st_eq_res(t, e), assigned_leaf, t, st_keep_relation);
}

/* the solution of equation e (substituted: r) for the algebraic v, when
 * the solvability rule allows it (solve.c) */
static Expr *solve_for(St *t, uint32_t e, Expr *r, uint32_t v) {
    if (t->sv.data[v].role != SR_ALG) return NULL;
    return st_solve(t, r, expr_leaf(t->c, EXPR_VAR, v), t->eq.data[e].flat);
}

/* does x depend on more than ASSIGN_MAX_SUPPORT unknowns (variables not
 * replaced by their values)?  O(size of x) */
static bool too_wide(St *t, Expr *x) {
    t->leaves.len = 0;
    expr_leaves(t->c, x, EXPR_VAR, &t->leaves);
    return t->leaves.len > ASSIGN_MAX_SUPPORT;
}

static void set_assigned(St *t, uint32_t v, Expr *value) {
    t->sv.data[v].role = SR_ASSIGNED;
    t->sv.data[v].value = value;
}

/* ---------- tearing ---------- */

typedef struct {
    unsigned char *in;     /* sv -> 1 in block, 2 solved, 3 torn */
    bool *used;            /* position in block -> equation assigned */
} Tear;

static bool linear_in(St *t, ExprVec *res, U32Vec *tv) {
    for (uint32_t i = 0; i < res->len; i++)
        for (uint32_t k = 0; k < tv->len; k++) {
            Expr *d = expr_diff_once(t->c, res->data[i], expr_leaf(t->c, EXPR_VAR, tv->data[k]));
            for (uint32_t j = 0; j < tv->len; j++)
                if (expr_contains(t->c, d, expr_leaf(t->c, EXPR_VAR, tv->data[j]))) return false;
        }
    return true;
}

/* the only unknown of the block left in equation e, or -1 */
static int32_t single_left(St *t, Tear *w, uint32_t e) {
    int32_t left = -1;
    SEq *q = &t->eq.data[e];
    for (uint32_t k = 0; k < q->ninc; k++) {
        uint32_t v = q->inc[k];
        if (w->in[v] != 1) continue;
        if (left >= 0 && (uint32_t)left != v) return -1;
        left = (int32_t)v;
    }
    return left;
}

static bool propagate(St *t, Tear *w, Block *b) {
    bool any = false;
    for (bool progress = true; progress;) {
        progress = false;
        for (uint32_t i = 0; i < b->size; i++) {
            uint32_t e = t->beqs.data[b->first + i];
            int32_t v = w->used[i] ? -1 : single_left(t, w, e);
            if (v < 0) continue;
            Expr *x = solve_for(t, e, substituted(t, e), (uint32_t)v);
            if (!x) continue;
            set_assigned(t, (uint32_t)v, x);
            w->in[v] = 2;
            w->used[i] = progress = any = true;
        }
    }
    return any;
}

static uint32_t pick_tear(St *t, Tear *w, Block *b) {
    uint32_t best = UINT32_MAX, bestn = 0;
    for (uint32_t j = 0; j < b->size; j++) {
        uint32_t v = t->bvars.data[b->first + j], n = 0;
        if (w->in[v] != 1) continue;
        for (uint32_t i = 0; i < b->size; i++) {
            if (w->used[i]) continue;
            SEq *q = &t->eq.data[t->beqs.data[b->first + i]];
            for (uint32_t k = 0; k < q->ninc; k++) n += q->inc[k] == v;
        }
        if (best == UINT32_MAX || n > bestn || (n == bestn && v < best)) { best = v; bestn = n; }
    }
    return best;
}

static void tear(St *t, Tear *w, Block *b) {
    U32Vec tv = {0};
    for (uint32_t j = 0; j < b->size; j++) {
        uint32_t v = t->bvars.data[b->first + j];
        w->in[v] = t->sv.data[v].role == SR_DERIV ? 3 : 1;
        if (w->in[v] == 3) vec_push(t->arena, &tv, v);
    }
    memset(w->used, 0, sizeof *w->used * b->size);
    for (;;) {
        propagate(t, w, b);
        uint32_t v = pick_tear(t, w, b);
        if (v == UINT32_MAX) break; /* every unknown assigned or torn */
        w->in[v] = 3;
        vec_push(t->arena, &tv, v);
    }
    ExprVec res = {0};
    for (uint32_t i = 0; i < b->size; i++)
        if (!w->used[i]) {
            vec_push(t->arena, &res, substituted(t, t->beqs.data[b->first + i]));
            vec_push(t->arena, &t->resid_eq, t->beqs.data[b->first + i]);
        }
    b->kind = linear_in(t, &res, &tv) ? SB_LINEAR : SB_NONLINEAR;
    b->ntorn = tv.len;
    b->tfirst = t->torn.len;
    for (uint32_t k = 0; k < tv.len; k++) vec_push(t->arena, &t->torn, tv.data[k]);
    for (uint32_t i = 0; i < res.len; i++) vec_push(t->arena, &t->resid_sv, res.data[i]);
    for (uint32_t j = 0; j < b->size; j++) w->in[t->bvars.data[b->first + j]] = 0;
}

/* A state derivative its equation defines explicitly (der(x) = v) stays
 * IDA's residual row y'(x) - v = 0, and later blocks read v instead of
 * y'(x): the constraints and accelerations of an index-reduced mechanism
 * then depend on the states and the algebraic unknowns only, not on the
 * integrator's difference approximation of x', which keeps IDA's Newton
 * iteration well conditioned. */
static void single_out(St *t, uint32_t e, uint32_t v, bool one_reader, StRunOut *o) {
    Expr *r = substituted(t, e);
    bool deriv = t->sv.data[v].role == SR_DERIV;
    Expr *x = NULL;
    if (deriv || t->sv.data[v].role == SR_ALG)
        x = st_solve_coef(t, r, expr_leaf(t->c, EXPR_VAR, v), t->eq.data[e].flat, &o->coef);
    o->x = x;
    if (x && !deriv && (one_reader || !too_wide(t, x))) {
        o->kind = SB_ASSIGN;
        return;
    }
    o->kind = deriv ? SB_STATE_DER : SB_IMPLICIT;
    o->r = x ? expr_sub(t->c, expr_leaf(t->c, EXPR_VAR, v), x) : r;
}

/* The outcome of an instance of a run is its representative's renamed
 * (runs.c); any other block is computed here. */
static void single(St *t, Block *b, const uint32_t *readers) {
    uint32_t e = t->beqs.data[b->first], v = t->bvars.data[b->first];
    StRun run;
    StRunOut o = {0};
    bool keyed = st_run_key(t, e, v, readers[v] <= 1, &run);
    bool applied = keyed && st_run_apply(t, &run, &o);
    if (!applied) o = (StRunOut){0}, single_out(t, e, v, readers[v] <= 1, &o);
    if (keyed) st_run_note(t, &run, &o, applied);
    t->sv.data[v].run_value = o.later && o.has_x && (o.kind == SB_ASSIGN || o.kind == SB_STATE_DER);
    if (o.kind == SB_ASSIGN) {
        set_assigned(t, v, o.x);
        b->kind = SB_ASSIGN;
        return;
    }
    if (o.x && o.kind == SB_STATE_DER) t->sv.data[v].value = o.x;
    b->kind = o.kind;
    b->row = t->resid_sv.len;
    vec_push(t->arena, &t->resid_sv, o.r);
    vec_push(t->arena, &t->resid_eq, e);
}

static void whole(St *t, Block *b) {
    b->kind = SB_SPARSE;
    for (uint32_t i = 0; i < b->size; i++) {
        vec_push(t->arena, &t->resid_sv, substituted(t, t->beqs.data[b->first + i]));
        vec_push(t->arena, &t->resid_eq, t->beqs.data[b->first + i]);
    }
}

bool struct_blt(St *t) {
    if (!match_all(t)) return false;
    tarjan(t);
    size_t nsv = (size_t)t->sv.len + 1;
    Tear w = {ARENA_ARRAY(t->arena, unsigned char, nsv),
              ARENA_ARRAY(t->arena, bool, TEAR_MAX_BLOCK + 1)};
    /* readers[v]: the equations v occurs in */
    uint32_t *readers = ARENA_ARRAY(t->arena, uint32_t, nsv);
    for (uint32_t e = 0; e < t->eq.len; e++)
        for (uint32_t k = 0; k < t->eq.data[e].ninc; k++) readers[t->eq.data[e].inc[k]]++;
    t->nrun_rec = t->sv.len + 1;
    t->run_rec = ARENA_ARRAY(t->arena, StRunRec *, t->nrun_rec);
    for (uint32_t i = 0; i < t->blocks.len; i++) {
        Block *b = &t->blocks.data[i];
        if (b->size == 1) single(t, b, readers);
        else if (b->size > TEAR_MAX_BLOCK) whole(t, b);
        else tear(t, &w, b);
    }
    arena_release(t->arena, readers, sizeof *readers * nsv); /* temporaries of 5 bytes a variable */
    arena_release(t->arena, w.in, sizeof *w.in * nsv);
    return true;
}
