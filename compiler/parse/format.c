/*
 * format.c -- ast_format(): the canonical Dyad formatter.
 *
 * Output rules: two-space indentation; one item per line; one blank line
 * between top-level definitions; `# ` comment lines, then the docstring
 * (verbatim), then the item; trailing comments after the item's last line;
 * metadata, numbers and strings verbatim.  Expressions get exactly the
 * parentheses that precedence (LANGUAGE.md 6.1, as parser.y resolves it)
 * requires, so parse(fmt(x)) has the AST of x and fmt is idempotent.
 */
#include <string.h>

#include "parse_internal.h"

typedef struct Fmt {
    FILE *out;
    const SrcFile *src;   /* verbatim spellings (ast_text) */
    int depth;            /* ( and [ open on the current line (put counts them) */
} Fmt;

static void expr(Fmt *f, const AstNode *e, int min);
static void rels(Fmt *f, int ind, AstList l);

/* Precedence levels, loosest first (matches the %left/%right list). */
enum { L_TOP, L_OR, L_AND, L_NOT, L_CMP, L_ADD, L_UNARY, L_MUL, L_POW, L_POST };

static int op_level(AstOp op) {
    switch (op) {
    case OP_OR: return L_OR;
    case OP_AND: return L_AND;
    case OP_NOT: return L_NOT;
    case OP_LT: case OP_LE: case OP_GT: case OP_GE: case OP_EQ: case OP_NE: return L_CMP;
    case OP_ADD: case OP_SUB: case OP_EADD: case OP_ESUB: return L_ADD;
    case OP_NEG: case OP_PLUS: return L_UNARY;
    case OP_MUL: case OP_DIV: case OP_MOD: case OP_EMUL: case OP_EDIV: case OP_EMOD: return L_MUL;
    case OP_POW: case OP_EPOW: return L_POW;
    }
    return L_TOP;
}

static int level(const AstNode *e) {
    switch (e->kind) {
    case AST_BINARY: return op_level(e->binary.op);
    case AST_UNARY: return op_level(e->unary.op);
    case AST_RANGE: case AST_IFEXPR: return L_TOP;
    default: return L_POST;
    }
}

static void put(Fmt *f, const char *s) {
    fputs(s, f->out);
    for (; *s; s++) f->depth += (*s == '(' || *s == '[') - (*s == ')' || *s == ']');
}

static void put_span(Fmt *f, Span sp) {
    uint32_t len;
    const char *t = ast_text(f->src, sp, &len);
    fwrite(t, 1, len, f->out);
}

static void indent(Fmt *f, int ind) {
    for (int i = 0; i < ind; i++) put(f, "  ");
}

static void list(Fmt *f, AstList l, int min) {
    for (uint32_t i = 0; i < l.len; i++) {
        if (i) put(f, ", ");
        expr(f, l.items[i], min);
    }
}

static void qname(Fmt *f, const AstQName *q) {
    if (q->len == 0) put(f, ".");
    for (uint32_t i = 0; i < q->len; i++) fprintf(f->out, "%s%s", i ? "." : "", q->parts[i]);
}

static void iters(Fmt *f, AstList l) {
    for (uint32_t i = 0; i < l.len; i++) {
        fprintf(f->out, "%s%s in ", i ? ", " : "", l.items[i]->iter.name);
        expr(f, l.items[i]->iter.range, L_TOP);
    }
}

static void binary(Fmt *f, const AstNode *e) {
    int l = op_level(e->binary.op);
    bool right = l == L_POW, nonassoc = l == L_CMP;
    expr(f, e->binary.lhs, right || nonassoc ? l + 1 : l);
    bool tight = l == L_POW;
    fprintf(f->out, tight ? "%s" : " %s ", ast_op_names[e->binary.op]);
    expr(f, e->binary.rhs, right ? l : l + 1);
}

static void ifexpr(Fmt *f, const AstNode *e) {
    if (e->ifexpr.ternary) {
        expr(f, e->ifexpr.cond, L_OR);
        put(f, " ? ");
        expr(f, e->ifexpr.then, L_OR);
        put(f, " : ");
        expr(f, e->ifexpr.else_, L_TOP);
        return;
    }
    put(f, "if ");
    expr(f, e->ifexpr.cond, L_TOP);
    put(f, " then ");
    expr(f, e->ifexpr.then, L_TOP);
    const AstNode *r = e->ifexpr.else_;
    while (r && r->kind == AST_IFEXPR && !r->ifexpr.ternary) {
        put(f, " elseif ");
        expr(f, r->ifexpr.cond, L_TOP);
        put(f, " then ");
        expr(f, r->ifexpr.then, L_TOP);
        r = r->ifexpr.else_;
    }
    put(f, " else ");
    expr(f, r, L_TOP);
}

static void args(Fmt *f, AstList l) {
    for (uint32_t i = 0; i < l.len; i++) {
        const AstNode *a = l.items[i];
        if (i) put(f, ", ");
        if (a->kind == AST_ARG && a->arg.name) fprintf(f->out, "%s = ", a->arg.name);
        expr(f, a->kind == AST_ARG ? a->arg.value : a, L_TOP);
    }
}

static void expr_inner(Fmt *f, const AstNode *e) {
    switch (e->kind) {
    case AST_NUM: case AST_STR: put_span(f, e->span); break;
    case AST_BOOL: put(f, e->boolean.value ? "true" : "false"); break;
    case AST_IDENT: put(f, e->ident.name); break;
    case AST_END: put(f, f->depth > 0 ? "end" : "(end)"); break; /* outside brackets `end` closes a block */
    case AST_COLON: put(f, ":"); break;
    case AST_MISSING: put(f, "missing"); break;
    case AST_FIELD:
        expr(f, e->field.base, L_POST);
        fprintf(f->out, ".%s", e->field.name);
        break;
    case AST_INDEX:
        expr(f, e->index.base, L_POST);
        put(f, "[");
        list(f, e->index.subs, L_TOP);
        put(f, "]");
        break;
    case AST_CALL:
        expr(f, e->call.callee, L_POST);
        put(f, "(");
        args(f, e->call.args);
        put(f, ")");
        break;
    case AST_UNARY:
        put(f, ast_op_names[e->unary.op]);
        expr(f, e->unary.lhs, op_level(e->unary.op));
        break;
    case AST_BINARY: binary(f, e); break;
    case AST_RANGE:
        expr(f, e->range.start, L_OR);
        put(f, ":");
        if (e->range.step) {
            expr(f, e->range.step, L_OR);
            put(f, ":");
        }
        expr(f, e->range.stop, L_OR);
        break;
    case AST_IFEXPR: ifexpr(f, e); break;
    case AST_ARRAY:
        put(f, "[");
        list(f, e->array.elems, L_TOP);
        put(f, "]");
        break;
    case AST_COMPREHENSION:
        put(f, "[");
        expr(f, e->compr.body, L_TOP);
        put(f, " for ");
        iters(f, e->compr.iters);
        put(f, "]");
        break;
    case AST_AT:
        expr(f, e->at.expr, L_POST);
        put(f, "@");
        if (e->at.clock->kind == AST_IDENT) put(f, e->at.clock->ident.name);
        else { put(f, "("); expr(f, e->at.clock, L_TOP); put(f, ")"); }
        break;
    case AST_TYPE: {
        qname(f, &e->type.name);
        if (e->type.clock_args.len) { put(f, "@["); list(f, e->type.clock_args, L_TOP); put(f, "]"); }
        if (e->type.has_parens) {
            put(f, "(");
            for (uint32_t i = 0; i < e->type.mods.len; i++) {
                if (i) put(f, ", ");
                expr(f, e->type.mods.items[i], L_TOP);
            }
            put(f, ")");
        }
        break;
    }
    case AST_MOD: {
        fprintf(f->out, "%s%s", e->mod.is_final ? "final " : "", e->mod.name);
        if (e->mod.has_nested) {
            put(f, "(");
            for (uint32_t i = 0; i < e->mod.mods.len; i++) {
                if (i) put(f, ", ");
                expr(f, e->mod.mods.items[i], L_TOP);
            }
            put(f, ")");
        }
        if (e->mod.value || e->mod.has_initial) put(f, " = ");
        if (e->mod.value) expr(f, e->mod.value, L_TOP);
        if (e->mod.has_initial) {
            put(f, e->mod.value ? " initial " : "initial ");
            expr(f, e->mod.initial, L_TOP);
        }
        break;
    }
    case AST_FUNCTYPE: {
        put(f, "func(");
        for (uint32_t i = 0; i < e->functype.params.len; i++) {
            put(f, i ? ", ::" : "::");
            expr(f, e->functype.params.items[i], L_TOP);
        }
        if (e->functype.kwparams.len) {
            put(f, "; ");
            for (uint32_t i = 0; i < e->functype.kwparams.len; i++) {
                const AstNode *d = e->functype.kwparams.items[i];
                if (i) put(f, ", ");
                fprintf(f->out, "%s::", d->decl.name);
                expr(f, d->decl.type, L_TOP);
            }
        }
        put(f, ")::");
        if (e->functype.results.len == 1) {
            expr(f, e->functype.results.items[0], L_TOP);
        } else {
            put(f, "(");
            for (uint32_t i = 0; i < e->functype.results.len; i++) {
                put(f, i ? ", ::" : "::");
                expr(f, e->functype.results.items[i], L_TOP);
            }
            put(f, ")");
        }
        break;
    }
    default: put(f, "?"); break;
    }
}

static void expr(Fmt *f, const AstNode *e, int min) {
    if (!e) return;
    bool paren = level(e) < min;
    if (paren) put(f, "(");
    expr_inner(f, e);
    if (paren) put(f, ")");
}

/* An equation or statement must not start with `-`/`+` (it would continue
 * the previous line's expression), so such a left side is parenthesized.
 * `min` is the level the printer needs at e: a child printed in its own
 * parentheses starts with `(`, not with a sign. */
static bool starts_with_sign(const AstNode *e, int min) {
    while (e && level(e) >= min) {
        switch (e->kind) {
        case AST_UNARY: return e->unary.op != OP_NOT;
        case AST_BINARY: {
            int l = op_level(e->binary.op);
            min = l == L_POW || l == L_CMP ? l + 1 : l;
            e = e->binary.lhs;
            break;
        }
        case AST_FIELD: min = L_POST; e = e->field.base; break;
        case AST_INDEX: min = L_POST; e = e->index.base; break;
        case AST_CALL: min = L_POST; e = e->call.callee; break;
        case AST_AT: min = L_POST; e = e->at.expr; break;
        case AST_RANGE: min = L_OR; e = e->range.start; break;
        default: return false;
        }
    }
    return false;
}

static void lead_expr(Fmt *f, const AstNode *e, int min) {
    if (starts_with_sign(e, min)) {
        put(f, "(");
        expr(f, e, L_TOP);
        put(f, ")");
    } else {
        expr(f, e, min);
    }
}

/* ---------- trivia ---------- */

static void comment_lines(Fmt *f, int ind, const char *s) {
    while (s) {
        const char *nl = strchr(s, '\n');
        size_t n = nl ? (size_t)(nl - s) : strlen(s);
        indent(f, ind);
        if (n) fprintf(f->out, "# %.*s\n", (int)n, s);
        else put(f, "#\n");
        s = nl ? nl + 1 : NULL;
    }
}

static void lead(Fmt *f, int ind, const AstNode *n) {
    comment_lines(f, ind, ast_trivia(n)->doc_comment);
    if (ast_trivia(n)->doc) {
        indent(f, ind);
        put_span(f, ast_trivia(n)->doc_span);
        put(f, "\n");
    }
    indent(f, ind);
}

/* A block's comment on its opening line, then the newline. */
static void head_nl(Fmt *f, const AstNode *n) {
    const char *c = ast_trivia(n)->head_comment;
    if (c) fprintf(f->out, c[0] ? " # %s" : " #", c);
    put(f, "\n");
}

/* A block's comments after its last inner item, before `metadata`/`end`. */
static void end_comments(Fmt *f, int ind, const AstNode *n) {
    comment_lines(f, ind, ast_trivia(n)->end_comment);
}

static void meta(Fmt *f, const AstMeta *m) {
    switch (m->kind) {
    case META_NONE: break;
    case META_OBJECT: fprintf(f->out, " %s", m->text); break;
    case META_BRACKETED: fprintf(f->out, " [%s]", m->text); break;
    case META_LINK: fprintf(f->out, " {^%s}", m->link); break;
    }
}

static void tail(Fmt *f, const AstNode *n) {
    if (ast_trivia(n)->trailing_comment) {
        if (ast_trivia(n)->trailing_comment[0]) fprintf(f->out, " # %s", ast_trivia(n)->trailing_comment);
        else put(f, " #");
    }
    put(f, "\n");
}

/* ---------- declarations ---------- */

static void dims(Fmt *f, AstList d) {
    if (!d.len) return;
    put(f, "[");
    list(f, d, L_TOP);
    put(f, "]");
}

static const char *kind_word(VarKind k) {
    static const char *w[] = {"parameter ", "variable ", "constant ", "path ", "potential ",
                              "flow ", "stream ", "input ", "output ", ""};
    return w[k];
}

static void decl_text(Fmt *f, const AstNode *d) {
    if (d->decl.is_final) put(f, "final ");
    if (d->decl.is_structural) put(f, "structural ");
    fprintf(f->out, "%s%s", kind_word(d->decl.kind), d->decl.name ? d->decl.name : "");
    if (d->decl.type) {
        put(f, "::");
        expr(f, d->decl.type, L_TOP);
        dims(f, d->decl.dims);
    }
    if (d->decl.value || d->decl.has_initial) put(f, " = ");
    if (d->decl.value) expr(f, d->decl.value, L_TOP);
    if (d->decl.has_initial) {
        put(f, d->decl.value ? " initial " : "initial ");
        expr(f, d->decl.initial, L_TOP);
    }
    if (d->decl.cond) {
        put(f, " if ");
        expr(f, d->decl.cond, L_TOP);
    }
}

static void inst_text(Fmt *f, const AstNode *n) {
    put(f, n->inst.name);
    if (n->inst.constraint) {
        put(f, "::");
        expr(f, n->inst.constraint, L_TOP);
        dims(f, n->inst.constraint_dims);
    }
    put(f, " = ");
    expr(f, n->inst.value, L_TOP);
    if (n->inst.cond) {
        put(f, " if ");
        expr(f, n->inst.cond, L_TOP);
    }
}

static void body_item(Fmt *f, int ind, const AstNode *n) {
    lead(f, ind, n);
    switch (n->kind) {
    case AST_EXTENDS: put(f, "extends "); expr(f, n->extends.type, L_TOP); break;
    case AST_DECL: decl_text(f, n); break;
    case AST_INSTANCE: inst_text(f, n); break;
    default: break;
    }
    meta(f, ast_meta(n));
    tail(f, n);
}

/* ---------- relations ---------- */

static void body(Fmt *f, int ind, AstList l) { rels(f, ind, l); }

static void labelled(Fmt *f, Sym label) {
    if (label) fprintf(f->out, "%s: ", label);
}

static void rel(Fmt *f, int ind, const AstNode *n) {
    lead(f, ind, n);
    switch (n->kind) {
    case AST_EQUATION: {
        static const char *k[] = {"", "initial ", "guess "};
        labelled(f, n->eq.label);
        put(f, k[n->eq.kind]);
        if (n->eq.lhs->kind == AST_IFEXPR && !n->eq.lhs->ifexpr.ternary) expr(f, n->eq.lhs, L_TOP);
        else lead_expr(f, n->eq.lhs, L_OR);
        put(f, " = ");
        expr(f, n->eq.rhs, L_TOP);
        break;
    }
    case AST_CONNECT: case AST_CONTINUITY: case AST_ANALYSIS_POINT:
        labelled(f, n->connect.label);
        put(f, n->kind == AST_CONNECT ? "connect(" : n->kind == AST_CONTINUITY ? "continuity(" : "analysis_point(");
        list(f, n->connect.args, L_TOP);
        put(f, ")");
        break;
    case AST_ASSERT:
        labelled(f, n->assert_.label);
        put(f, "assert(");
        expr(f, n->assert_.cond, L_TOP);
        if (n->assert_.message) { put(f, ", "); expr(f, n->assert_.message, L_TOP); }
        put(f, ")");
        break;
    case AST_FOR:
        labelled(f, n->for_.label);
        put(f, "for ");
        iters(f, n->for_.iters);
        head_nl(f, n);
        body(f, ind + 1, n->for_.body);
        end_comments(f, ind + 1, n);
        indent(f, ind);
        put(f, "end");
        break;
    case AST_IF:
        labelled(f, n->if_.label);
        for (uint32_t i = 0; i < n->if_.branches.len; i++) {
            const AstNode *b = n->if_.branches.items[i];
            if (i) indent(f, ind);
            if (b->branch.cond) {
                put(f, i ? "elseif " : "if ");
                expr(f, b->branch.cond, L_TOP);
            } else {
                put(f, "else");
            }
            if (i == 0) head_nl(f, n);
            else put(f, "\n");
            body(f, ind + 1, b->branch.body);
        }
        end_comments(f, ind + 1, n);
        indent(f, ind);
        put(f, "end");
        break;
    case AST_SWITCH:
        labelled(f, n->switch_.label);
        put(f, "switch ");
        expr(f, n->switch_.subject, L_TOP);
        head_nl(f, n);
        for (uint32_t i = 0; i < n->switch_.cases.len; i++) {
            const AstNode *c = n->switch_.cases.items[i];
            lead(f, ind + 1, c);
            if (c->branch.name) fprintf(f->out, "case %s", c->branch.name);
            else put(f, "default");
            head_nl(f, c);
            body(f, ind + 2, c->branch.body);
            end_comments(f, ind + 2, c);
            indent(f, ind + 1);
            put(f, "end");
            tail(f, c);
        }
        end_comments(f, ind + 1, n);
        indent(f, ind);
        put(f, "end");
        break;
    case AST_TRANSITION:
        fprintf(f->out, "transition(%s => %s, ", n->transition.from, n->transition.to);
        expr(f, n->transition.cond, L_TOP);
        put(f, ")");
        break;
    default: break;
    }
    meta(f, ast_meta(n));
    tail(f, n);
}

static void rels(Fmt *f, int ind, AstList l) {
    for (uint32_t i = 0; i < l.len; i++) rel(f, ind, l.items[i]);
}

/* ---------- definitions ---------- */

static void def_meta(Fmt *f, int ind, const AstMeta *m) {
    if (m->kind == META_NONE) return;
    indent(f, ind);
    put(f, "metadata");
    meta(f, m);
    put(f, "\n");
}

static void def(Fmt *f, const AstNode *n) {
    static const char *pre[] = {"", "partial ", "example ", "test ", "external "};
    static const char *kw[] = {[AST_STRUCT] = "struct", [AST_CONNECTOR] = "connector",
                               [AST_COMPONENT] = "component", [AST_ANALYSIS] = "analysis"};
    fprintf(f->out, "%s%s %s", pre[n->def.prefix], kw[n->kind], n->def.name);
    if (n->def.clock_params.len) {
        put(f, "@[");
        for (uint32_t i = 0; i < n->def.clock_params.len; i++) {
            const AstNode *c = n->def.clock_params.items[i];
            fprintf(f->out, "%s%s %s", i ? ", " : "", c->clockparam.is_output ? "output" : "input",
                    c->clockparam.name);
            if (c->clockparam.base) fprintf(f->out, " extends %s", c->clockparam.base);
        }
        put(f, "]");
    }
    if (n->def.alias) {
        fprintf(f->out, " = %s", n->def.alias->decl.kind == VAR_OUTPUT ? "output " : "input ");
        expr(f, n->def.alias->decl.type, L_TOP);
        if (ast_meta(n)->kind != META_NONE) { put(f, " metadata"); meta(f, ast_meta(n)); }
        tail(f, n);
        return;
    }
    head_nl(f, n);
    for (uint32_t i = 0; i < n->def.extends.len; i++) body_item(f, 1, n->def.extends.items[i]);
    for (uint32_t i = 0; i < n->def.decls.len; i++) body_item(f, 1, n->def.decls.items[i]);
    if (n->def.has_relations) {
        put(f, "relations\n");
        rels(f, 1, n->def.relations);
    }
    end_comments(f, 1, n);
    def_meta(f, 0, ast_meta(n));
    put(f, "end");
    tail(f, n);
}

static void fields(Fmt *f, AstList l) {
    for (uint32_t i = 0; i < l.len; i++) {
        if (i) put(f, ", ");
        decl_text(f, l.items[i]);
    }
}

static void item(Fmt *f, const AstNode *n) {
    lead(f, 0, n);
    switch (n->kind) {
    case AST_USING:
        put(f, "using ");
        qname(f, &n->using.lib);
        if (n->using.syms.len) { put(f, ": "); fields(f, n->using.syms); }
        tail(f, n);
        break;
    case AST_TYPEDEF:
        fprintf(f->out, "type %s = ", n->typedef_.name);
        expr(f, n->typedef_.type, L_TOP);
        dims(f, n->typedef_.dims);
        if (ast_meta(n)->kind != META_NONE) { put(f, " metadata"); meta(f, ast_meta(n)); }
        tail(f, n);
        break;
    case AST_ENUM:
        fprintf(f->out, "enum %s =\n", n->enum_.name);
        for (uint32_t i = 0; i < n->enum_.cases.len; i++) {
            const AstNode *c = n->enum_.cases.items[i];
            comment_lines(f, 1, ast_trivia(c)->doc_comment);
            indent(f, 1);
            put(f, "| ");
            if (ast_trivia(c)->doc) {
                put_span(f, ast_trivia(c)->doc_span);
                put(f, " ");
            }
            put(f, c->enumcase.name);
            if (c->enumcase.has_parens) { put(f, "("); fields(f, c->enumcase.fields); put(f, ")"); }
            bool last = i + 1 == n->enum_.cases.len;
            tail(f, last && !ast_trivia(c)->trailing_comment ? n : c);
        }
        break;
    case AST_FUNCTION:
        fprintf(f->out, "function %s(", n->func.name);
        fields(f, n->func.params);
        put(f, ")::");
        expr(f, n->func.result, L_TOP);
        dims(f, n->func.result_dims);
        head_nl(f, n);
        for (uint32_t i = 0; i < n->func.body.len; i++) {
            const AstNode *s = n->func.body.items[i];
            lead(f, 1, s);
            if (s->fstmt.name) { fprintf(f->out, "%s = ", s->fstmt.name); expr(f, s->fstmt.value, L_TOP); }
            else if (starts_with_sign(s->fstmt.value, L_TOP)) { put(f, "("); expr(f, s->fstmt.value, L_TOP); put(f, ")"); }
            else expr(f, s->fstmt.value, L_TOP);
            tail(f, s);
        }
        end_comments(f, 1, n);
        put(f, "end");
        tail(f, n);
        break;
    case AST_STRUCT: case AST_CONNECTOR: case AST_COMPONENT: case AST_ANALYSIS:
        def(f, n);
        break;
    default: tail(f, n); break;
    }
}

void ast_format(FILE *out, const AstFile *file) {
    Fmt f = {out, file->src, 0};
    for (uint32_t i = 0; i < file->items.len; i++) {
        if (i) put(&f, "\n");
        item(&f, file->items.items[i]);
    }
    if (file->trailing.doc_comment) {
        if (file->items.len) put(&f, "\n");
        comment_lines(&f, 0, file->trailing.doc_comment);
    }
}
