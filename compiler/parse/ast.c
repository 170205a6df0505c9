/*
 * ast.c -- AST constructors called from the grammar actions (parser.y),
 * plus the kind and operator name tables.
 *
 * Invariants: every node is arena-allocated, zeroed, and carries a Span;
 * lists are NList while parsing and AstList (a prefix of NList) in the tree;
 * definitions and block relations register themselves on the open-block
 * stack when their head is parsed and leave it when closed.
 */
#include <math.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "parse_internal.h"

const char *const ast_kind_names[AST_KIND_COUNT] = {
#define X(k, m) #k,
    AST_KINDS(X)
#undef X
};

const char *const ast_op_names[] = {
    "+", "-", "*", "/", "%", "^",
    ".+", ".-", ".*", "./", ".%", ".^",
    "<", "<=", ">", ">=", "==", "!=",
    "and", "or",
    "-", "+", "!",
};

/* ---------- lists ---------- */

NList nl_empty(void) { return (NList){0}; }

/* The array a list outgrew goes to a spare list of its capacity (linked
 * through its first slot) for the next list that grows to that size: a
 * long file would otherwise keep every outgrown array (a third of a list's
 * memory).  A list value is used once by the grammar, so the old array is
 * dead when its list has grown. */
static void nl_spare(Parser *p, AstNode **items, uint32_t cap) {
    uint32_t k = (uint32_t)__builtin_ctz(cap);
    *(void **)items = p->nl_spare[k];
    p->nl_spare[k] = items;
}

static AstNode **nl_array(Parser *p, uint32_t cap) {
    uint32_t k = (uint32_t)__builtin_ctz(cap);
    void **a = p->nl_spare[k];
    if (!a) return ARENA_ARRAY(p->arena, AstNode *, cap);
    p->nl_spare[k] = *a;
    return (AstNode **)a;
}

NList nl_push(Parser *p, NList l, AstNode *n) {
    if (!n) return l;
    if (l.len == l.cap) { /* most lists are short: 2, 4, 8, ... */
        uint32_t nc = l.cap ? l.cap * 2 : 2;
        AstNode **a = nl_array(p, nc);
        if (l.len) memcpy(a, l.items, sizeof *a * l.len);
        if (l.cap) nl_spare(p, l.items, l.cap);
        l.items = a;
        l.cap = nc;
    }
    l.items[l.len++] = n;
    return l;
}

NList nl_one(Parser *p, AstNode *n) { return nl_push(p, nl_empty(), n); }

NList nl_cat(Parser *p, NList a, NList b) {
    for (uint32_t i = 0; i < b.len; i++) a = nl_push(p, a, b.items[i]);
    return a;
}

AstList nl_list(NList l) { return (AstList){l.items, l.len}; }

/* ---------- leaves ---------- */

bool ast_has_trivia(AstKind k) {
    if (k >= AST_NUM) return false; /* expressions */
    return k != AST_TYPE && k != AST_MOD && k != AST_ITER && k != AST_FUNCTYPE &&
           k != AST_CLOCK_PARAM;
}

/* Every node ends with its union member (trivia live in AstExtra). */
size_t ast_node_size(AstKind k) {
    static const uint16_t size[AST_KIND_COUNT] = {
#define X(k, m) [k] = (uint16_t)(offsetof(AstNode, m) + sizeof(((AstNode *)0)->m)),
        AST_KINDS(X)
#undef X
    };
    return size[k];
}

static const AstExtra no_extra;

const char *ast_text(const SrcFile *src, Span sp, uint32_t *len) {
    *len = sp.hi - sp.lo;
    return src->text + sp.lo;
}

const AstTrivia *ast_trivia(const AstNode *n) { return n->extra ? &n->extra->trivia : &no_extra.trivia; }
const AstMeta *ast_meta(const AstNode *n) { return n->extra ? &n->extra->meta : &no_extra.meta; }

AstExtra *ast_extra(Parser *p, AstNode *n) {
    if (!n->extra) n->extra = ARENA_NEW(p->arena, AstExtra);
    return n->extra;
}

AstNode *ast_node(Parser *p, AstKind k, Span sp) {
    AstNode *n = arena_alloc(p->arena, ast_node_size(k));
    n->kind = k;
    n->span = sp;
    return n;
}

Sym sym_of(Parser *p, Span sp) {
    return intern(p->in, p->src->text + sp.lo, sp.hi - sp.lo);
}

AstNode *mk_num(Parser *p, Span sp) {
    AstNode *n = ast_node(p, AST_NUM, sp);
    n->num.value = lex_number_value(p->src->text + sp.lo, sp.hi - sp.lo, &n->num.is_int);
    if (isinf(n->num.value)) /* 1e400: the literal names no double; Inf downstream would be a mystery */
        parse_syntax_error(p, sp, "number too large: the largest finite number is 1.7976931348623157e308");
    return n;
}

static bool is_triple(Parser *p, Span sp) {
    return sp.hi - sp.lo >= 6 && strncmp(p->src->text + sp.lo, "\"\"\"", 3) == 0;
}

/* Decode a string token; reports a bad escape in a one-line string. */
static const char *decode(Parser *p, Span sp, bool *triple, uint32_t *len) {
    *triple = is_triple(p, sp);
    const char *bad = NULL;
    char *s = lex_decode_string(p->arena, p->src->text + sp.lo, sp.hi - sp.lo, *triple, len, &bad);
    if (bad && !*triple) {
        uint32_t at = (uint32_t)(bad - p->src->text);
        parse_syntax_error(p, (Span){sp.file, at, at + 2},
                           "invalid escape in string (write a backslash as `\\\\`)");
    }
    return s;
}

AstNode *mk_str(Parser *p, Span sp) {
    AstNode *n = ast_node(p, AST_STR, sp);
    n->str.value = decode(p, sp, &n->str.triple, &n->str.len);
    return n;
}

AstNode *mk_bool(Parser *p, Span sp, bool v) {
    AstNode *n = ast_node(p, AST_BOOL, sp);
    n->boolean.value = v;
    return n;
}

AstNode *mk_ident(Parser *p, Sym name, Span sp) {
    AstNode *n = ast_node(p, AST_IDENT, sp);
    n->ident.name = name;
    return n;
}

AstNode *mk_leaf(Parser *p, AstKind k, Span sp) { return ast_node(p, k, sp); }

/* ---------- expressions ---------- */

/* Expression trees deeper than this are refused: a left-deep chain such as
 * `a + a + ... + a` does not grow the parser stack, but every later
 * recursive walk (dump, formatter, sema, flatten) would overflow the C stack. */
enum { MAX_EXPR_HEIGHT = 3000 };

static uint32_t height(const AstNode *n);

static uint32_t list_height(AstList l) {
    uint32_t h = 0;
    for (uint32_t i = 0; i < l.len; i++) {
        uint32_t k = height(l.items[i]);
        if (k > h) h = k;
    }
    return h;
}

static uint32_t max3(uint32_t a, uint32_t b, uint32_t c) {
    return a > b ? (a > c ? a : c) : (b > c ? b : c);
}

/* Stored for the left-recursive forms; nodes reached through brackets are
 * bounded by the parser stack (YYMAXDEPTH), so one level of looking is enough. */
static uint32_t height(const AstNode *n) {
    if (!n) return 0;
    switch (n->kind) {
    case AST_UNARY: case AST_BINARY: return n->binary.height;
    case AST_FIELD: return n->field.height;
    case AST_INDEX: return n->index.height;
    case AST_CALL: return n->call.height;
    case AST_AT: return n->at.height;
    case AST_IFEXPR: return n->ifexpr.height;
    case AST_ARG: return 1 + height(n->arg.value);
    case AST_RANGE: return 1 + max3(height(n->range.start), height(n->range.step), height(n->range.stop));
    case AST_ARRAY: return 1 + list_height(n->array.elems);
    case AST_COMPREHENSION: return 1 + height(n->compr.body);
    default: return 1;
    }
}

/* n if its tree is shallow enough, else one error and a leaf in its place. */
static AstNode *bounded(Parser *p, AstNode *n, uint32_t h) {
    if (h <= MAX_EXPR_HEIGHT) return n;
    if (!p->deep_reported)
        parse_syntax_error(p, n->span, "expression nested too deeply (more than 3000 levels); "
                                       "split it into several equations");
    p->deep_reported = true;
    return mk_leaf(p, AST_MISSING, n->span);
}

AstNode *mk_field(Parser *p, AstNode *base, Sym name, Span sp) {
    AstNode *n = ast_node(p, AST_FIELD, sp);
    n->field.base = base;
    n->field.name = name;
    n->field.height = 1 + height(base);
    return bounded(p, n, n->field.height);
}

AstNode *mk_index(Parser *p, AstNode *base, NList subs, Span sp) {
    AstNode *n = ast_node(p, AST_INDEX, sp);
    n->index.base = base;
    n->index.subs = nl_list(subs);
    uint32_t hb = height(base), hs = list_height(n->index.subs);
    n->index.height = 1 + (hb > hs ? hb : hs);
    return bounded(p, n, n->index.height);
}

AstNode *mk_call(Parser *p, AstNode *callee, NList args, Span sp) {
    AstNode *n = ast_node(p, AST_CALL, sp);
    n->call.callee = callee;
    n->call.args = nl_list(args);
    uint32_t hc = height(callee), ha = list_height(n->call.args);
    n->call.height = 1 + (hc > ha ? hc : ha);
    return bounded(p, n, n->call.height);
}

AstNode *mk_arg(Parser *p, Sym name, AstNode *value, Span sp) {
    AstNode *n = ast_node(p, AST_ARG, sp);
    n->arg.name = name;
    n->arg.value = value;
    return n;
}

AstNode *mk_unary(Parser *p, AstOp op, AstNode *e, Span sp) {
    AstNode *n = ast_node(p, AST_UNARY, sp);
    n->unary.op = op;
    n->unary.lhs = e;
    n->unary.height = 1 + height(e);
    return bounded(p, n, n->unary.height);
}

AstNode *mk_binary(Parser *p, AstOp op, AstNode *l, AstNode *r, Span sp) {
    AstNode *n = ast_node(p, AST_BINARY, sp);
    n->binary.op = op;
    n->binary.lhs = l;
    n->binary.rhs = r;
    n->binary.height = 1 + max3(height(l), height(r), 0);
    return bounded(p, n, n->binary.height);
}

AstNode *mk_range(Parser *p, AstNode *a, AstNode *step, AstNode *b, Span sp) {
    AstNode *n = ast_node(p, AST_RANGE, sp);
    n->range.start = a;
    n->range.step = step;
    n->range.stop = b;
    return n;
}

AstNode *mk_ifexpr(Parser *p, AstNode *c, AstNode *t, AstNode *e, bool ternary, Span sp) {
    AstNode *n = ast_node(p, AST_IFEXPR, sp);
    n->ifexpr.cond = c;
    n->ifexpr.then = t;
    n->ifexpr.else_ = e;
    n->ifexpr.ternary = ternary;
    n->ifexpr.height = 1 + max3(height(c), height(t), height(e));
    return bounded(p, n, n->ifexpr.height);
}

/* `elseif` arms while parsing: the chain value is the LAST arm and each arm's
 * else_ points back to the previous one (O(1) per arm); mk_ifexpr_chain
 * turns the links around once the final `else` is known. */
AstNode *mk_elif(Parser *p, AstNode *chain, AstNode *c, AstNode *t, Span sp) {
    AstNode *arm = ast_node(p, AST_IFEXPR, sp);
    arm->ifexpr.cond = c;
    arm->ifexpr.then = t;
    arm->ifexpr.else_ = chain;
    return arm;
}

AstNode *mk_ifexpr_chain(Parser *p, AstNode *c, AstNode *t, AstNode *last, AstNode *e, Span sp) {
    AstNode *next = e;
    for (AstNode *arm = last; arm;) { /* innermost (last) arm first */
        AstNode *prev = arm->ifexpr.else_;
        arm->ifexpr.else_ = next;
        arm->span.hi = e->span.hi;
        arm->ifexpr.height = 1 + max3(height(arm->ifexpr.cond), height(arm->ifexpr.then),
                                      height(next));
        next = bounded(p, arm, arm->ifexpr.height);
        arm = prev;
    }
    return mk_ifexpr(p, c, t, next, false, sp);
}

AstNode *mk_array(Parser *p, NList elems, Span sp) {
    AstNode *n = ast_node(p, AST_ARRAY, sp);
    n->array.elems = nl_list(elems);
    return n;
}

AstNode *mk_compr(Parser *p, AstNode *body, NList iters, Span sp) {
    AstNode *n = ast_node(p, AST_COMPREHENSION, sp);
    n->compr.body = body;
    n->compr.iters = nl_list(iters);
    return n;
}

AstNode *mk_at(Parser *p, AstNode *e, AstNode *clk, Span sp) {
    AstNode *n = ast_node(p, AST_AT, sp);
    n->at.expr = e;
    n->at.clock = clk;
    n->at.height = 1 + max3(height(e), height(clk), 0);
    return bounded(p, n, n->at.height);
}

AstNode *mk_iter(Parser *p, Sym name, AstNode *range, Span sp) {
    AstNode *n = ast_node(p, AST_ITER, sp);
    n->iter.name = name;
    n->iter.range = range;
    return n;
}

/* ---------- types, modifications, declarations ---------- */

AstQName mk_qname(Parser *p, Sym first, Span sp) {
    AstQName q = {0};
    q.span = sp;
    if (first) {
        q.parts = ARENA_ARRAY(p->arena, Sym, 1);
        q.parts[0] = first;
        q.len = 1;
    }
    return q;
}

AstQName qname_push(Parser *p, AstQName q, Sym next, Span sp) {
    Sym *parts = ARENA_ARRAY(p->arena, Sym, q.len + 1);
    if (q.len) memcpy(parts, q.parts, sizeof(Sym) * q.len);
    parts[q.len] = next;
    return (AstQName){parts, q.len + 1, sp};
}

AstNode *mk_type(Parser *p, AstQName q, NList clock_args, NList mods, bool has_parens, Span sp) {
    AstNode *n = ast_node(p, AST_TYPE, sp);
    n->type.name = q;
    n->type.clock_args = nl_list(clock_args);
    n->type.mods = nl_list(mods);
    n->type.has_parens = has_parens;
    return n;
}

AstNode *mk_mod(Parser *p, bool fin, Sym name, NList nested, bool has_nested,
                AstNode *value, AstNode *init, bool has_init, Span sp) {
    AstNode *n = ast_node(p, AST_MOD, sp);
    n->mod.is_final = fin;
    n->mod.name = name;
    n->mod.mods = nl_list(nested);
    n->mod.has_nested = has_nested;
    n->mod.value = value;
    n->mod.initial = init;
    n->mod.has_initial = has_init;
    return n;
}

AstNode *mk_decl(Parser *p, int flags, int kind, Sym name, AstNode *type, NList dims,
                 AstNode *value, AstNode *init, bool has_init, AstNode *cond, Span sp) {
    AstNode *n = ast_node(p, AST_DECL, sp);
    n->decl.name = name;
    n->decl.kind = (VarKind)kind;
    n->decl.is_final = (flags & DF_FINAL) != 0;
    n->decl.is_structural = (flags & DF_STRUCTURAL) != 0;
    n->decl.type = type;
    n->decl.dims = nl_list(dims);
    n->decl.value = value;
    n->decl.initial = init;
    n->decl.has_initial = has_init;
    n->decl.cond = cond;
    return n;
}

AstNode *mk_inst(Parser *p, Sym name, AstNode *constraint, NList cdims,
                 AstNode *value, AstNode *cond, Span sp) {
    AstNode *n = ast_node(p, AST_INSTANCE, sp);
    n->inst.name = name;
    n->inst.constraint = constraint;
    n->inst.constraint_dims = nl_list(cdims);
    n->inst.value = value;
    n->inst.cond = cond;
    AstNode *t = value && value->kind == AST_COMPREHENSION ? value->compr.body : value;
    if (t && t->kind == AST_TYPE) n->inst.clock_args = t->type.clock_args;
    return n;
}

AstNode *mk_extends(Parser *p, AstNode *type, Span sp) {
    AstNode *n = ast_node(p, AST_EXTENDS, sp);
    n->extends.type = type;
    return n;
}

AstNode *mk_clockparam(Parser *p, bool out, Sym name, Sym base, Span sp) {
    AstNode *n = ast_node(p, AST_CLOCK_PARAM, sp);
    n->clockparam.is_output = out;
    n->clockparam.name = name;
    n->clockparam.base = base;
    return n;
}

/* ---------- trivia and metadata ---------- */

AstNode *with_meta(Parser *p, AstNode *n, AstMeta m) {
    if (n && m.kind != META_NONE && ast_has_trivia(n->kind)) ast_extra(p, n)->meta = m;
    return n;
}

AstNode *with_doc(Parser *p, AstNode *n, Span doc) {
    if (!n || !ast_has_trivia(n->kind)) return n;
    uint32_t len;
    bool triple;
    AstTrivia *t = &ast_extra(p, n)->trivia;
    t->doc = decode(p, doc, &triple, &len);
    t->doc_triple = triple;
    t->doc_span = doc;
    return n;
}

AstMeta meta_none(void) { return (AstMeta){0}; }

AstMeta mk_meta(Parser *p, int kind, Span sp) {
    AstMeta m = {.kind = (MetaKind)kind, .span = sp};
    const char *t = p->src->text;
    if (kind == META_LINK) {
        uint32_t lo = sp.lo, hi = sp.hi;
        while (lo < hi && t[lo] != '^') lo++;
        lo++;
        while (hi > lo && (t[hi - 1] == '}' || t[hi - 1] == ' ' || t[hi - 1] == '\t' ||
                           (unsigned char)t[hi - 1] == 0xA0 || t[hi - 1] == '\r'))
            hi -= (unsigned char)t[hi - 1] == 0xA0 ? 2 : 1;
        if (hi < lo) hi = lo;
        m.link = intern(p->in, t + lo, hi - lo);
        return m;
    }
    uint32_t lo = sp.lo, hi = sp.hi;
    if (kind == META_BRACKETED) { /* keep the object only: strip [ and ] */
        while (lo < hi && t[lo] != '{') lo++;
        while (hi > lo && t[hi - 1] != '}') hi--;
    }
    m.text = arena_strndup(p->arena, t + lo, hi - lo);
    return m;
}

/* ---------- definitions ---------- */

static const char *def_what(AstKind k) {
    switch (k) {
    case AST_COMPONENT: return "component";
    case AST_CONNECTOR: return "connector";
    case AST_ANALYSIS: return "analysis";
    case AST_STRUCT: return "struct";
    case AST_FUNCTION: return "function";
    default: return "definition";
    }
}

static void block_push(Parser *p, const char *what, Sym name, Span sp, AstNode *n) {
    OpenBlock b = {what, name, sp, n};
    vec_push(p->arena, &p->blocks, b);
}

static void block_close(Parser *p, AstNode *n) {
    for (uint32_t i = p->blocks.len; i-- > 0;) {
        if (p->blocks.data[i].node == n) {
            p->blocks.len = i;
            return;
        }
    }
}

int block_pop(Parser *p) {
    if (p->blocks.len) p->blocks.len--;
    return 0;
}

AstNode *def_open(Parser *p, AstKind k, int prefix, Sym name, NList clocks, Span sp) {
    AstNode *n = ast_node(p, k, sp);
    Sym given = name;
    if (!name) name = intern(p->in, "?", 1); /* head with a syntax error */
    if (k == AST_FUNCTION) {
        n->func.name = name;
    } else {
        n->def.name = name;
        n->def.prefix = (DefPrefix)prefix;
        n->def.clock_params = nl_list(clocks);
    }
    block_push(p, def_what(k), given, sp, n);
    return n;
}

AstNode *def_close(Parser *p, AstNode *def, NList body, NList rels, bool has_rels,
                   AstMeta meta, Span sp) {
    NList ext = {0}, decls = {0};
    for (uint32_t i = 0; i < body.len; i++) {
        if (body.items[i]->kind == AST_EXTENDS) ext = nl_push(p, ext, body.items[i]);
        else decls = nl_push(p, decls, body.items[i]);
    }
    def->def.extends = nl_list(ext);
    def->def.decls = nl_list(decls);
    def->def.relations = nl_list(rels);
    def->def.has_relations = has_rels;
    with_meta(p, def, meta);
    def->span = sp;
    block_close(p, def);
    return def;
}

AstNode *def_alias(Parser *p, AstNode *def, int out, AstNode *type, AstMeta meta, Span sp) {
    def->def.alias = mk_decl(p, 0, out ? VAR_OUTPUT : VAR_INPUT, NULL, type, nl_empty(),
                             NULL, NULL, false, NULL, type->span);
    with_meta(p, def, meta);
    def->span = sp;
    return def;
}

AstNode *mk_typedef(Parser *p, Sym name, AstNode *type, NList dims, AstMeta meta, Span sp) {
    AstNode *n = ast_node(p, AST_TYPEDEF, sp);
    n->typedef_.name = name;
    n->typedef_.type = type;
    n->typedef_.dims = nl_list(dims);
    with_meta(p, n, meta);
    return n;
}

AstNode *mk_functype(Parser *p, NList params, NList results, Span sp) {
    AstNode *n = ast_node(p, AST_FUNCTYPE, sp);
    NList pos = {0}, kw = {0};
    for (uint32_t i = 0; i < params.len; i++) {
        if (params.items[i]->kind == AST_DECL) kw = nl_push(p, kw, params.items[i]);
        else pos = nl_push(p, pos, params.items[i]);
    }
    n->functype.params = nl_list(pos);
    n->functype.kwparams = nl_list(kw);
    n->functype.results = nl_list(results);
    return n;
}

AstNode *mk_enum(Parser *p, Sym name, NList cases, Span sp) {
    AstNode *n = ast_node(p, AST_ENUM, sp);
    n->enum_.name = name;
    n->enum_.cases = nl_list(cases);
    return n;
}

AstNode *mk_enumcase(Parser *p, Sym name, NList fields, bool parens, Span sp) {
    AstNode *n = ast_node(p, AST_ENUM_CASE, sp);
    n->enumcase.name = name;
    n->enumcase.fields = nl_list(fields);
    n->enumcase.has_parens = parens;
    return n;
}

AstNode *mk_using(Parser *p, AstQName lib, NList syms, Span sp) {
    AstNode *n = ast_node(p, AST_USING, sp);
    n->using.lib = lib;
    n->using.syms = nl_list(syms);
    return n;
}

AstNode *mk_function(Parser *p, AstNode *head, NList params, AstNode *result,
                     NList rdims, NList body, Span sp) {
    head->func.params = nl_list(params);
    head->func.result = result;
    head->func.result_dims = nl_list(rdims);
    head->func.body = nl_list(body);
    head->span = sp;
    block_close(p, head);
    return head;
}

AstNode *mk_fstmt(Parser *p, Sym name, AstNode *value, Span sp) {
    AstNode *n = ast_node(p, AST_FUNC_STMT, sp);
    n->fstmt.name = name;
    n->fstmt.value = value;
    return n;
}

void top_add(Parser *p, AstNode *item) {
    if (!item) return;
    vec_push(p->arena, &p->top, item);
    item_add(p, item);
}

AstNode *item_add(Parser *p, AstNode *n) {
    if (n) vec_push(p->arena, &p->items, n);
    return n;
}

/* ---------- relations ---------- */

AstNode *mk_eq(Parser *p, EqKind k, AstNode *l, AstNode *r, Span sp) {
    AstNode *n = ast_node(p, AST_EQUATION, sp);
    n->eq.kind = k;
    n->eq.lhs = l;
    n->eq.rhs = r;
    return n;
}

AstNode *mk_connect(Parser *p, AstKind k, NList args, Span sp) {
    AstNode *n = ast_node(p, k, sp);
    n->connect.args = nl_list(args);
    if (k == AST_ANALYSIS_POINT && args.len != 2)
        parse_syntax_error(p, sp, "`analysis_point` takes exactly two signals");
    else if (k != AST_ANALYSIS_POINT && args.len < 2)
        parse_syntax_error(p, sp, k == AST_CONNECT ? "`connect` needs at least two connectors"
                                                   : "`continuity` needs at least two references");
    return n;
}

AstNode *mk_assert(Parser *p, NList args, Span sp) {
    AstNode *n = ast_node(p, AST_ASSERT, sp);
    if (args.len != 2 || args.items[1]->kind != AST_STR) {
        parse_syntax_error(p, sp, "`assert` takes a condition and a message string");
    }
    n->assert_.cond = args.len > 0 ? args.items[0] : NULL;
    n->assert_.message = args.len > 1 ? args.items[1] : NULL;
    return n;
}

AstNode *mk_label(Parser *p, Sym label, AstNode *rel, Span sp) {
    switch (rel->kind) {
    case AST_EQUATION: rel->eq.label = label; break;
    case AST_CONNECT:
    case AST_CONTINUITY:
    case AST_ANALYSIS_POINT: rel->connect.label = label; break;
    case AST_ASSERT: rel->assert_.label = label; break;
    case AST_FOR: rel->for_.label = label; break;
    case AST_IF: rel->if_.label = label; break;
    case AST_SWITCH: rel->switch_.label = label; break;
    default: parse_syntax_error(p, sp, "this relation cannot have a label"); break;
    }
    rel->span = sp;
    return rel;
}

AstNode *block_open(Parser *p, AstKind k, const char *what, AstNode *cond, Span sp) {
    AstNode *n = ast_node(p, k, sp);
    Sym name = NULL;
    if (k == AST_IF) {
        AstNode *first = ast_node(p, AST_BRANCH, sp);
        first->branch.cond = cond;
        n->if_.branches.items = ARENA_ARRAY(p->arena, AstNode *, 1);
        n->if_.branches.items[0] = first;
        n->if_.branches.len = 1;
    } else if (k == AST_SWITCH) {
        n->switch_.subject = cond;
    } else if (k == AST_BRANCH && cond) {
        name = n->branch.name = cond->ident.name;
    }
    block_push(p, what, name, sp, n);
    return n;
}

AstNode *mk_for(Parser *p, AstNode *head, NList iters, NList body, Span sp) {
    head->for_.iters = nl_list(iters);
    head->for_.body = nl_list(body);
    head->span = sp;
    block_close(p, head);
    return head;
}

AstNode *mk_branch(Parser *p, AstNode *cond, Sym name, NList body, Span sp) {
    AstNode *n = ast_node(p, AST_BRANCH, sp);
    n->branch.cond = cond;
    n->branch.name = name;
    n->branch.body = nl_list(body);
    return n;
}

AstNode *mk_if(Parser *p, AstNode *head, NList body, NList elifs, AstNode *els, Span sp) {
    AstNode *first = head->if_.branches.items[0];
    first->branch.body = nl_list(body);
    if (body.len) first->span.hi = body.items[body.len - 1]->span.hi;
    NList all = nl_cat(p, nl_one(p, first), elifs);
    all = nl_push(p, all, els);
    head->if_.branches = nl_list(all);
    head->span = sp;
    block_close(p, head);
    return head;
}

AstNode *mk_switch(Parser *p, AstNode *head, NList cases, Span sp) {
    head->switch_.cases = nl_list(cases);
    head->span = sp;
    block_close(p, head);
    return head;
}

AstNode *mk_case(Parser *p, AstNode *head, NList body, Span sp) {
    head->branch.body = nl_list(body);
    head->span = sp;
    block_close(p, head);
    return head;
}

AstNode *mk_transition(Parser *p, Sym from, Sym to, AstNode *cond, Span sp) {
    AstNode *n = ast_node(p, AST_TRANSITION, sp);
    n->transition.from = from;
    n->transition.to = to;
    n->transition.cond = cond;
    return n;
}

/* Legacy state machines (LANGUAGE.md 4.12): the block is parsed so that
 * recovery stays in step, reported once at the outermost `state`, and left
 * out of the tree. */
AstNode *state_open(Parser *p, bool initial, Sym name, Span sp) {
    (void)initial;
    if (p->state_depth++ == 0)
        parse_syntax_error(p, sp, "state machines (`state ... end` blocks) are legacy Dyad and "
                                  "not supported by dyadc; use clocked partitions (`@[clk]`)");
    AstNode *n = ast_node(p, AST_BRANCH, sp);
    block_push(p, "state", name, sp, n);
    return n;
}

AstNode *state_close(Parser *p, AstNode *head, Span sp) {
    (void)sp;
    if (p->state_depth > 0) p->state_depth--;
    block_close(p, head);
    return NULL;
}

void parse_syntax_error(Parser *p, Span sp, const char *msg) {
    p->nerrors++;
    diag_error(sp, "%s", msg);
}
