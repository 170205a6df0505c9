/*
 * connect.c -- connection sets (Modelica/MTK semantics, LANGUAGE.md §7).
 *
 * A connector appears in a connect() of instance I either as an *outside*
 * element (a connector of I itself) or an *inside* one (a connector of a
 * subcomponent).  Keys are (variable, side): 2*var + side.  connect()
 * unions keys with union-find (path halving, union by index: near-linear);
 * connector arrays and array fields connect element by element.  Each set
 * with two or more members gives: potentials and signals equal; flows sum
 * to zero with inside members counted +1 and outside members -1; a stream
 * set with one outside member equates it to the mix of the inside ones.
 * An inside flow in no connect() is zero.  A set may have one source of a
 * signal (an inside output or an outside input); an input of a
 * subcomponent must be connected or written in an equation.
 *
 * instream(h) (h a stream variable of an inside connector) is the mix of
 * the other members' stream values weighted by the flow leaving them,
 * max(-m, 0) (the partner's value when there is one partner, h itself when
 * unconnected); actualstream(h) = ifelse(m > 0, instream(h), h).
 */
#include "flatten_internal.h"

#include <string.h>

/* one key per (variable, side) for the variables of the instance tree;
 * variables created later (der(der(x)) helpers) are never connected */
void connect_init(Flattener *F) {
    ConnSets *cs = &F->cs;
    cs->nkeyvars = F->m->vars.len;
    uint32_t nk = 2 * F->m->vars.len + 1;
    cs->uf = ARENA_ARRAY(F->arena, uint32_t, nk);
    for (uint32_t k = 0; k < nk; k++) cs->uf[k] = k;
    cs->key_span = ARENA_ARRAY(F->arena, Span, nk);
    cs->key_origin = ARENA_ARRAY(F->arena, const char *, nk);
    cs->key_used = ARENA_ARRAY(F->arena, unsigned char, nk);
    cs->var_defined = ARENA_ARRAY(F->arena, unsigned char, nk);
}

static uint32_t uf_find(uint32_t *uf, uint32_t x) {
    while (uf[x] != x) x = uf[x] = uf[uf[x]];
    return x;
}

static void uf_union(Flattener *F, uint32_t a, uint32_t b) {
    a = uf_find(F->cs.uf, a);
    b = uf_find(F->cs.uf, b);
    if (a != b) F->cs.uf[a > b ? a : b] = a < b ? a : b;
}

static void use_key(Flattener *F, uint32_t key, Inst *inst, Span sp) {
    if (!F->cs.key_used[key]) {
        F->cs.key_used[key] = 1;
        F->cs.key_span[key] = sp;
        F->cs.key_origin[key] = inst->path;
    }
}

/* one connect() argument, expanded to its connectors */
typedef struct {
    uint32_t var;  /* a scalar signal / field variable, or NO_VAR */
    Inst *inst;    /* a composite connector instance */
    int side;      /* 1 outside, 0 inside */
} Member;
typedef Vec(Member) MemberVec;

static const char *arg_text(Flattener *F, Member *m) {
    if (m->inst) return m->inst->path;
    return F->m->vars.data[m->var].name;
}

static bool pair_vars(Flattener *F, Inst *inst, Elem *a, uint32_t ia, int sa, Elem *b, uint32_t ib, int sb,
                      AstNode *r) {
    uint32_t ka = 2 * (a->var + ia) + (uint32_t)sa, kb = 2 * (b->var + ib) + (uint32_t)sb;
    use_key(F, ka, inst, r->span);
    use_key(F, kb, inst, r->span);
    uf_union(F, ka, kb);
    return true;
}

static bool connect_insts(Flattener *F, Inst *inst, Inst *a, int sa, Inst *b, int sb, AstNode *r, AstNode *arg);

static bool pair_elems(Flattener *F, Inst *inst, Elem *ea, int sa, Elem *eb, int sb, AstNode *r, AstNode *arg) {
    if (ea->kind == ELEM_VAR) {
        if (ea->vkind == VAR_PARAMETER || ea->vkind == VAR_PATH || ea->vkind == VAR_CONSTANT || ea->var == NO_VAR)
            return true;
        for (uint32_t i = 0; i < ea->n; i++) pair_vars(F, inst, ea, i, sa, eb, i, sb, r);
        return true;
    }
    if (ea->child && eb->child) return connect_insts(F, inst, ea->child, sa, eb->child, sb, r, arg);
    for (uint32_t i = 0; ea->children && i < ea->n; i++)
        if (!connect_insts(F, inst, ea->children[i], sa, eb->children[i], sb, r, arg)) return false;
    return true;
}

static bool fields_match(Elem *ea, Elem *eb) {
    if (!eb || eb->kind != ea->kind || eb->n != ea->n || eb->absent != ea->absent) return false;
    return ea->kind != ELEM_VAR || ea->vkind == eb->vkind ||
           (ea->vkind == VAR_INPUT && eb->vkind == VAR_OUTPUT) || (ea->vkind == VAR_OUTPUT && eb->vkind == VAR_INPUT);
}

static bool connect_insts(Flattener *F, Inst *inst, Inst *a, int sa, Inst *b, int sb, AstNode *r, AstNode *arg) {
    if (a->def != b->def && a->elems.len != b->elems.len) {
        diag_error(arg->span, "cannot connect `%s` (a `%s`) with `%s` (a `%s`)", a->path, a->def->name, b->path,
                   b->def->name);
        return false;
    }
    for (uint32_t i = 0; i < a->elems.len; i++) {
        Elem *ea = a->elems.data[i], *eb = inst_elem(b, ea->name);
        if (!fields_match(ea, eb)) {
            diag_error(arg->span, "cannot connect `%s` (a `%s`) with `%s` (a `%s`): field `%s` does not match",
                       a->path, a->def->name, b->path, b->def->name, ea->name);
            return false;
        }
        if (!ea->absent && !pair_elems(F, inst, ea, sa, eb, sb, r, arg)) return false;
    }
    return true;
}

static bool is_connector_elem(Elem *e) {
    return e->vkind >= VAR_POTENTIAL && e->vkind <= VAR_OUTPUT;
}

static bool expand_ref(Flattener *F, Inst *inst, Ref x, AstNode *arg, MemberVec *out);

/* `arr.field` where arr is a component array: the field of every element */
static bool expand_array_field(Flattener *F, Tx t, AstNode *arg, MemberVec *out, bool *done) {
    Inst *inst = t.scope;
    Ref b;
    *done = false;
    if (arg->kind != AST_FIELD || !resolve_ref(F, t, arg->field.base, false, &b) || !b.arr) return true;
    *done = true;
    for (uint32_t i = 0; i < b.arr->n; i++) {
        Elem *el = inst_elem(b.arr->children[i], arg->field.name);
        if (!el || el->absent) {
            diag_error(arg->span, "`%s` has no element `%s`", b.arr->children[i]->path, arg->field.name);
            return false;
        }
        Ref x = {0};
        if (el->kind == ELEM_VAR) {
            x.var = el;
            x.cnt = el->n;
        } else if (el->children) {
            x.arr = el;
        } else {
            x.inst = el->child;
        }
        if (!expand_ref(F, inst, x, arg, out)) return false;
    }
    return true;
}

static bool expand_arg(Flattener *F, Tx t, AstNode *arg, MemberVec *out) {
    bool done;
    if (!expand_array_field(F, t, arg, out, &done)) return false;
    if (done) return true;
    Ref x;
    if (!resolve_ref(F, t, arg, true, &x)) return false;
    return expand_ref(F, t.scope, x, arg, out);
}

static bool expand_ref(Flattener *F, Inst *inst, Ref x, AstNode *arg, MemberVec *out) {
    if (x.var) {
        if (!is_connector_elem(x.var)) {
            diag_error(arg->span, "only connectors can be connected; `%s` is a %s", x.var->name,
                       x.var->vkind == VAR_PARAMETER ? "parameter" : "variable");
            return false;
        }
        int side = x.var->owner == inst;
        for (uint32_t i = 0; i < x.cnt && x.var->var != NO_VAR; i++)
            vec_push(F->arena, out, ((Member){x.var->var + x.off + i, NULL, side}));
        return true;
    }
    uint32_t n = x.inst ? 1 : x.arr->n;
    for (uint32_t i = 0; i < n; i++) {
        Inst *c = x.inst ? x.inst : x.arr->children[i];
        if (!c->is_connector) {
            diag_error(arg->span, "only connectors can be connected; `%s` is a component (a `%s`)", c->path,
                       c->def->name);
            return false;
        }
        vec_push(F->arena, out, ((Member){NO_VAR, c, c->parent == inst}));
    }
    return true;
}

static void connect_two(Flattener *F, Inst *inst, Member *a, Member *b, AstNode *r, AstNode *arg) {
    if ((a->inst == NULL) != (b->inst == NULL)) {
        diag_error(arg->span, "cannot connect a signal with a composite connector (`%s` and `%s`)", arg_text(F, a),
                   arg_text(F, b));
        return;
    }
    if (a->inst) {
        connect_insts(F, inst, a->inst, a->side, b->inst, b->side, r, arg);
        return;
    }
    uint32_t ka = 2 * a->var + (uint32_t)a->side, kb = 2 * b->var + (uint32_t)b->side;
    use_key(F, ka, inst, r->span);
    use_key(F, kb, inst, r->span);
    uf_union(F, ka, kb);
}

static bool skip_absent(Flattener *F, Inst *inst, AstNode *arg) {
    /* connects to a conditional element whose condition is false vanish */
    AstNode *x = arg;
    while (x->kind == AST_FIELD || x->kind == AST_INDEX) x = x->kind == AST_FIELD ? x->field.base : x->index.base;
    if (x->kind != AST_IDENT) return false;
    Elem *e = inst_elem(inst, x->ident.name);
    (void)F;
    return e && e->absent;
}

void connect_members(Flattener *F, Inst *inst, Env *env, AstNode *r) {
    MemberVec first = {0};
    for (uint32_t i = 0; i < r->connect.args.len; i++)
        if (skip_absent(F, inst, r->connect.args.items[i])) return;
    for (uint32_t i = 0; i < r->connect.args.len; i++) {
        AstNode *arg = r->connect.args.items[i];
        MemberVec cur = {0};
        if (!expand_arg(F, tx_in(inst, env), arg, &cur)) return;
        if (i == 0) {
            first = cur;
            continue;
        }
        if (cur.len != first.len) {
            diag_error(arg->span, "cannot connect %u connector%s with %u", first.len, first.len == 1 ? "" : "s",
                       cur.len);
            return;
        }
        for (uint32_t k = 0; k < cur.len; k++) connect_two(F, inst, &first.data[k], &cur.data[k], r, arg);
    }
}

/* ---------- sets ---------- */

/* bucket the used keys by root, in key order: deterministic */
void connect_prepare_sets(Flattener *F) {
    uint32_t nk = 2 * F->cs.nkeyvars;
    uint32_t *count = F->cs.set_count = ARENA_ARRAY(F->arena, uint32_t, nk + 1);
    F->cs.set_start = ARENA_ARRAY(F->arena, uint32_t, nk + 2);
    F->cs.set_members = ARENA_ARRAY(F->arena, uint32_t, nk + 1);
    for (uint32_t k = 0; k < nk; k++)
        if (F->cs.key_used[k]) count[uf_find(F->cs.uf, k)]++;
    for (uint32_t k = 0, s = 0; k <= nk; k++) {
        F->cs.set_start[k] = s;
        if (k < nk) s += count[k];
    }
    uint32_t *fill = ARENA_ARRAY(F->arena, uint32_t, nk + 1);
    for (uint32_t k = 0; k < nk; k++)
        if (F->cs.key_used[k]) {
            uint32_t root = uf_find(F->cs.uf, k);
            F->cs.set_members[F->cs.set_start[root] + fill[root]++] = k;
        }
    F->cs.set_start[nk + 1] = F->cs.set_start[nk];
}

/* the flow variable of the connector that holds stream variable v */
static Expr *flow_of(Flattener *F, uint32_t v) {
    Inst *c = F->var_elems.data[v]->owner;
    for (uint32_t i = 0; i < c->elems.len; i++) {
        Elem *e = c->elems.data[i];
        if (e->kind == ELEM_VAR && e->vkind == VAR_FLOW && e->var != NO_VAR && e->n == 1)
            return var_leaf(F, e->var);
    }
    return NULL;
}

/* members of the set of key k: [*lo, *hi) in set_members */
static void set_range(Flattener *F, uint32_t key, uint32_t *lo, uint32_t *hi) {
    uint32_t root = uf_find(F->cs.uf, key);
    *lo = F->cs.set_start[root];
    *hi = *lo + F->cs.set_count[root];
}

/* mix of the stream values of the members other than `self` */
static Expr *stream_mix(Flattener *F, uint32_t self, uint32_t lo, uint32_t hi, AstNode *at) {
    ExprCtx *c = F->ctx;
    uint32_t others = 0, last = 0;
    for (uint32_t i = lo; i < hi; i++)
        if (F->cs.set_members[i] != self) {
            others++;
            last = F->cs.set_members[i];
        }
    if (others == 1) return var_leaf(F, last / 2);
    Expr *num = expr_const(c, 0), *den = expr_const(c, 0);
    for (uint32_t i = lo; i < hi; i++) {
        uint32_t k = F->cs.set_members[i];
        if (k == self) continue;
        Expr *m = flow_of(F, k / 2);
        if (!m) {
            diag_error(at->span, "stream variable `%s` has no flow variable beside it in its connector",
                       F->m->vars.data[k / 2].name);
            return NULL;
        }
        Expr *out = k % 2 ? m : expr_neg(c, m); /* flow leaving toward the set */
        Expr *w = expr_call(c, FN_MAX, out, expr_const(c, 1e-12));
        num = expr_add(c, num, expr_mul(c, w, var_leaf(F, k / 2)));
        den = expr_add(c, den, w);
    }
    return expr_div(c, num, den);
}

bool tr_instream(Flattener *F, Tx t, AstNode *call, bool actual, Val *out) {
    Inst *scope = t.scope;
    const char *fn = actual ? "actualstream" : "instream";
    if (call->call.args.len != 1) {
        diag_error(call->span, "%s() takes one stream variable", fn);
        return false;
    }
    AstNode *arg = call->call.args.items[0]->arg.value;
    Ref r;
    if (!resolve_ref(F, t, arg, true, &r)) return false;
    if (!r.var || r.var->vkind != VAR_STREAM || r.cnt != 1 || r.var->var == NO_VAR) {
        diag_error(arg->span, "%s() needs a stream variable of a connector", fn);
        return false;
    }
    if (t.structural || !F->cs.set_start) {
        diag_error(call->span, "%s() is not known at compile time", fn);
        return false;
    }
    uint32_t v = r.var->var + r.off, key = 2 * v + (r.var->owner->parent == scope ? 0 : 1);
    Expr *h = var_leaf(F, v), *in = h;
    if (F->cs.key_used[key]) {
        uint32_t lo, hi;
        set_range(F, key, &lo, &hi);
        if (!(in = stream_mix(F, key, lo, hi, call))) return false;
    }
    if (actual) {
        Expr *m = flow_of(F, v);
        if (!m) {
            diag_error(arg->span, "`%s` has no flow variable beside it in its connector", r.var->name);
            return false;
        }
        in = expr_ifelse(F->ctx, expr_cmp(F->ctx, EXPR_GT, m, expr_const(F->ctx, 0)), in, h);
    }
    *out = val_scalar(in);
    return true;
}

/* ---------- equations of the sets ---------- */

static bool is_source(FlatVar *v, uint32_t key) {
    return (v->conn == FC_OUTPUT && key % 2 == 0) || (v->conn == FC_INPUT && key % 2 == 1);
}

static void check_sources(Flattener *F, uint32_t *members, uint32_t n) {
    uint32_t first = NO_VAR;
    for (uint32_t i = 0; i < n; i++) {
        if (!is_source(&F->m->vars.data[members[i] / 2], members[i])) continue;
        if (first == NO_VAR) {
            first = members[i];
            continue;
        }
        diag_error(F->cs.key_span[members[i]], "two outputs are connected: `%s` and `%s`; a signal needs exactly one source",
                   F->m->vars.data[first / 2].name, F->m->vars.data[members[i] / 2].name);
        return;
    }
}

static void stream_equations(Flattener *F, uint32_t *members, uint32_t n) {
    uint32_t outside = NO_VAR, nout = 0;
    for (uint32_t i = 0; i < n; i++)
        if (members[i] % 2) {
            outside = members[i];
            nout++;
        }
    if (nout != 1 || n < 2) return;
    uint32_t lo = (uint32_t)(members - F->cs.set_members);
    AstNode dummy = {0};
    dummy.span = F->cs.key_span[outside];
    Expr *mix = stream_mix(F, outside, lo, lo + n, &dummy);
    if (mix)
        add_eq(F, FE_NORMAL, var_leaf(F, outside / 2), mix, F->cs.key_origin[outside],
               F->cs.key_span[outside]);
}

/* sum of +-flow over members[lo, hi), as a balanced tree: depth log n, so
 * a node with 100,000 members (a shared ground) stays shallow for every
 * recursive pass after flattening */
static Expr *flow_sum(Flattener *F, const uint32_t *members, uint32_t lo, uint32_t hi) {
    if (hi - lo == 1) {
        Expr *x = var_leaf(F, members[lo] / 2);
        return members[lo] % 2 ? expr_neg(F->ctx, x) : x;
    }
    uint32_t mid = lo + (hi - lo) / 2;
    return expr_add(F->ctx, flow_sum(F, members, lo, mid), flow_sum(F, members, mid, hi));
}

static void set_equations(Flattener *F, uint32_t *members, uint32_t n) {
    ExprCtx *c = F->ctx;
    uint32_t k0 = members[0];
    FlatVar *v0 = &F->m->vars.data[k0 / 2];
    if (v0->conn == FC_STREAM) {
        stream_equations(F, members, n);
        return;
    }
    if (v0->conn == FC_FLOW) {
        add_eq(F, FE_NORMAL, flow_sum(F, members, 0, n), expr_const(c, 0), F->cs.key_origin[k0], F->cs.key_span[k0]);
        return;
    }
    check_sources(F, members, n);
    Expr *x0 = var_leaf(F, k0 / 2);
    for (uint32_t i = 1; i < n; i++)
        if (members[i] / 2 != k0 / 2)
            add_eq(F, FE_NORMAL, x0, var_leaf(F, members[i] / 2), F->cs.key_origin[members[i]],
                   F->cs.key_span[members[i]]);
}

static Span inst_span(Inst *c, Span dflt) {
    while (c && c->parent && !c->elem) c = c->parent;
    return c && c->elem ? c->elem->decl->span : dflt;
}

static void check_inputs(Flattener *F) {
    for (uint32_t v = 0; v < F->cs.nkeyvars; v++) {
        FlatVar *fv = &F->m->vars.data[v];
        if (fv->conn != FC_INPUT || fv->top_conn || F->cs.key_used[2 * v] || F->cs.var_defined[v]) continue;
        Elem *e = F->var_elems.data[v];
        Inst *owner = e->owner;
        if (owner->is_connector) owner = owner->parent;
        if (owner == F->top) continue;
        diag_error(inst_span(owner, fv->span), "input `%s` is neither connected nor given an equation", fv->name);
    }
}

void flatten_connections(Flattener *F) {
    uint32_t nk = 2 * F->cs.nkeyvars;
    for (uint32_t k = 0; k < nk; k++) {
        if (!F->cs.key_used[k] || uf_find(F->cs.uf, k) != k) continue;
        uint32_t lo, hi;
        set_range(F, k, &lo, &hi);
        if (hi - lo >= 2) set_equations(F, F->cs.set_members + lo, hi - lo);
    }
    /* inside flows in no connection are zero */
    for (uint32_t v = 0; v < F->cs.nkeyvars; v++) {
        FlatVar *fv = &F->m->vars.data[v];
        if (fv->conn == FC_FLOW && !F->cs.key_used[2 * v])
            add_eq(F, FE_NORMAL, var_leaf(F, v), expr_const(F->ctx, 0),
                   F->var_elems.data[v]->owner->path, fv->span);
    }
    check_inputs(F);
}
