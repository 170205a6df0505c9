/*
 * dump.c -- ast_dump(): a deterministic, indented text dump of an AstFile
 * for golden tests.  One node per line: `field: KIND attrs @L:C-L:C`, then
 * its trivia and children indented by two spaces.  No pointers, no hash
 * order; spans are optional (ast_dump_opts) so a formatter round trip can be
 * compared modulo positions.
 */
#include <string.h>

#include "parse_internal.h"
#include "numfmt.h"

typedef struct Dump {
    FILE *out;
    const AstFile *f;
    bool spans;
} Dump;

static void node(Dump *d, int ind, const char *label, const AstNode *n);

static void quoted(FILE *out, const char *s) {
    fputc('"', out);
    for (const unsigned char *c = (const unsigned char *)s; c && *c; c++) {
        if (*c == '"' || *c == '\\') fprintf(out, "\\%c", *c);
        else if (*c == '\n') fputs("\\n", out);
        else if (*c == '\t') fputs("\\t", out);
        else if (*c < 0x20 || *c == 0x7f) fprintf(out, "\\x%02x", *c);
        else fputc(*c, out);
    }
    fputc('"', out);
}

static void pad(Dump *d, int ind) {
    for (int i = 0; i < ind; i++) fputs("  ", d->out);
}

static void span(Dump *d, Span sp) {
    if (!d->spans || !d->f->src) return;
    uint32_t l1, c1, l2, c2;
    src_line_col(d->f->src, sp.lo, &l1, &c1);
    src_line_col(d->f->src, sp.hi, &l2, &c2);
    fprintf(d->out, " @%u:%u-%u:%u", l1, c1, l2, c2);
}

static void qname(Dump *d, const AstQName *q) {
    if (q->len == 0) fputc('.', d->out);
    for (uint32_t i = 0; i < q->len; i++) fprintf(d->out, "%s%s", i ? "." : "", q->parts[i]);
}

static void list(Dump *d, int ind, const char *label, AstList l) {
    if (l.len == 0) return;
    pad(d, ind);
    fprintf(d->out, "%s: [%u]\n", label, l.len);
    for (uint32_t i = 0; i < l.len; i++) node(d, ind + 1, "-", l.items[i]);
}

static void text(Dump *d, int ind, const char *label, const char *s) {
    if (!s) return;
    pad(d, ind);
    fprintf(d->out, "%s: ", label);
    quoted(d->out, s);
    fputc('\n', d->out);
}

static void trivia(Dump *d, int ind, const AstNode *n) {
    if (!ast_has_trivia(n->kind)) return; /* allocated without trivia */
    text(d, ind, ast_trivia(n)->doc_triple ? "doc\"\"\"" : "doc", ast_trivia(n)->doc);
    text(d, ind, "doc#", ast_trivia(n)->doc_comment);
    text(d, ind, "trailing#", ast_trivia(n)->trailing_comment);
    text(d, ind, "head#", ast_trivia(n)->head_comment);
    text(d, ind, "end#", ast_trivia(n)->end_comment);
    static const char *mk[] = {"", "meta", "meta[]", "meta^"};
    if (ast_meta(n)->kind == META_LINK) {
        pad(d, ind);
        fprintf(d->out, "meta^: %s\n", ast_meta(n)->link);
    } else if (ast_meta(n)->kind != META_NONE) {
        text(d, ind, mk[ast_meta(n)->kind], ast_meta(n)->text);
    }
}

static const char *var_kind(VarKind k) {
    static const char *names[] = {"parameter", "variable", "constant", "path", "potential",
                                  "flow", "stream", "input", "output", "field"};
    return names[k];
}

static const char *prefix_name(DefPrefix p) {
    static const char *names[] = {"", " partial", " example", " test", " external"};
    return names[p];
}

static void attrs(Dump *d, const AstNode *n) {
    FILE *o = d->out;
    switch (n->kind) {
    case AST_USING: fputc(' ', o); qname(d, &n->using.lib); break;
    case AST_TYPEDEF: fprintf(o, " %s", n->typedef_.name); break;
    case AST_STRUCT: case AST_CONNECTOR: case AST_COMPONENT: case AST_ANALYSIS:
        fprintf(o, " %s%s%s", n->def.name, prefix_name(n->def.prefix),
                n->def.has_relations ? " relations" : "");
        break;
    case AST_ENUM: fprintf(o, " %s", n->enum_.name); break;
    case AST_FUNCTION: fprintf(o, " %s", n->func.name); break;
    case AST_EXTENDS: break;
    case AST_DECL:
        fprintf(o, " %s %s%s%s%s", n->decl.name ? n->decl.name : "_", var_kind(n->decl.kind),
                n->decl.is_final ? " final" : "", n->decl.is_structural ? " structural" : "",
                n->decl.has_initial ? " has_initial" : "");
        break;
    case AST_INSTANCE: fprintf(o, " %s", n->inst.name); break;
    case AST_CLOCK_PARAM:
        fprintf(o, " %s %s", n->clockparam.is_output ? "output" : "input", n->clockparam.name);
        if (n->clockparam.base) fprintf(o, " extends %s", n->clockparam.base);
        break;
    case AST_ENUM_CASE:
        fprintf(o, " %s%s", n->enumcase.name, n->enumcase.has_parens ? " ()" : "");
        break;
    case AST_FUNCTYPE: break;
    case AST_TYPE:
        fputc(' ', o);
        qname(d, &n->type.name);
        if (n->type.has_parens) fputs(" ()", o);
        break;
    case AST_MOD:
        fprintf(o, " %s%s%s%s", n->mod.name, n->mod.is_final ? " final" : "",
                n->mod.has_nested ? " ()" : "", n->mod.has_initial ? " has_initial" : "");
        break;
    case AST_ITER: fprintf(o, " %s", n->iter.name); break;
    case AST_FUNC_STMT: if (n->fstmt.name) fprintf(o, " %s", n->fstmt.name); break;
    case AST_EQUATION: {
        static const char *k[] = {"", " initial", " guess"};
        fputs(k[n->eq.kind], o);
        if (n->eq.label) fprintf(o, " label=%s", n->eq.label);
        break;
    }
    case AST_CONNECT: case AST_CONTINUITY: case AST_ANALYSIS_POINT:
        if (n->connect.label) fprintf(o, " label=%s", n->connect.label);
        break;
    case AST_ASSERT: if (n->assert_.label) fprintf(o, " label=%s", n->assert_.label); break;
    case AST_FOR: if (n->for_.label) fprintf(o, " label=%s", n->for_.label); break;
    case AST_IF: if (n->if_.label) fprintf(o, " label=%s", n->if_.label); break;
    case AST_SWITCH: if (n->switch_.label) fprintf(o, " label=%s", n->switch_.label); break;
    case AST_BRANCH:
        if (n->branch.name) fprintf(o, " case %s", n->branch.name);
        break;
    case AST_TRANSITION: fprintf(o, " %s => %s", n->transition.from, n->transition.to); break;
    case AST_NUM: {
        uint32_t len;
        const char *t = ast_text(d->f->src, n->span, &len);
        fprintf(o, " %.*s = %s%s", (int)len, t, dyrt_num(n->num.value).s, n->num.is_int ? " int" : "");
        break;
    }
    case AST_STR: fputc(' ', o); quoted(o, n->str.value); if (n->str.triple) fputs(" triple", o); break;
    case AST_BOOL: fputs(n->boolean.value ? " true" : " false", o); break;
    case AST_IDENT: fprintf(o, " %s", n->ident.name); break;
    case AST_FIELD: fprintf(o, " .%s", n->field.name); break;
    case AST_INDEX: case AST_END: case AST_COLON: case AST_MISSING: break;
    case AST_UNARY: fprintf(o, " %s", ast_op_names[n->unary.op]); break;
    case AST_BINARY: fprintf(o, " %s", ast_op_names[n->binary.op]); break;
    case AST_RANGE: break;
    case AST_IFEXPR: if (n->ifexpr.ternary) fputs(" ternary", o); break;
    case AST_CALL: break;
    case AST_ARG: if (n->arg.name) fprintf(o, " %s=", n->arg.name); break;
    case AST_ARRAY: case AST_COMPREHENSION: case AST_AT: break;
    case AST_KIND_COUNT: break;
    }
}

static void children(Dump *d, int ind, const AstNode *n) {
    switch (n->kind) {
    case AST_USING: list(d, ind, "syms", n->using.syms); break;
    case AST_TYPEDEF:
        node(d, ind, "type", n->typedef_.type);
        list(d, ind, "dims", n->typedef_.dims);
        break;
    case AST_STRUCT: case AST_CONNECTOR: case AST_COMPONENT: case AST_ANALYSIS:
        list(d, ind, "clocks", n->def.clock_params);
        list(d, ind, "extends", n->def.extends);
        list(d, ind, "decls", n->def.decls);
        list(d, ind, "relations", n->def.relations);
        node(d, ind, "alias", n->def.alias);
        break;
    case AST_ENUM: list(d, ind, "cases", n->enum_.cases); break;
    case AST_FUNCTION:
        list(d, ind, "params", n->func.params);
        node(d, ind, "result", n->func.result);
        list(d, ind, "result_dims", n->func.result_dims);
        list(d, ind, "body", n->func.body);
        break;
    case AST_EXTENDS: node(d, ind, "type", n->extends.type); break;
    case AST_DECL:
        node(d, ind, "type", n->decl.type);
        list(d, ind, "dims", n->decl.dims);
        node(d, ind, "value", n->decl.value);
        node(d, ind, "initial", n->decl.initial);
        node(d, ind, "if", n->decl.cond);
        break;
    case AST_INSTANCE:
        node(d, ind, "constraint", n->inst.constraint);
        list(d, ind, "constraint_dims", n->inst.constraint_dims);
        node(d, ind, "value", n->inst.value);
        node(d, ind, "if", n->inst.cond);
        break;
    case AST_CLOCK_PARAM: case AST_ENUM_CASE:
        if (n->kind == AST_ENUM_CASE) list(d, ind, "fields", n->enumcase.fields);
        break;
    case AST_FUNCTYPE:
        list(d, ind, "params", n->functype.params);
        list(d, ind, "kwparams", n->functype.kwparams);
        list(d, ind, "results", n->functype.results);
        break;
    case AST_TYPE:
        list(d, ind, "clock_args", n->type.clock_args);
        list(d, ind, "mods", n->type.mods);
        break;
    case AST_MOD:
        list(d, ind, "mods", n->mod.mods);
        node(d, ind, "value", n->mod.value);
        node(d, ind, "initial", n->mod.initial);
        break;
    case AST_ITER: node(d, ind, "in", n->iter.range); break;
    case AST_FUNC_STMT: node(d, ind, "value", n->fstmt.value); break;
    case AST_EQUATION:
        node(d, ind, "lhs", n->eq.lhs);
        node(d, ind, "rhs", n->eq.rhs);
        break;
    case AST_CONNECT: case AST_CONTINUITY: case AST_ANALYSIS_POINT:
        list(d, ind, "args", n->connect.args);
        break;
    case AST_ASSERT:
        node(d, ind, "cond", n->assert_.cond);
        node(d, ind, "message", n->assert_.message);
        break;
    case AST_FOR:
        list(d, ind, "iters", n->for_.iters);
        list(d, ind, "body", n->for_.body);
        break;
    case AST_IF: list(d, ind, "branches", n->if_.branches); break;
    case AST_SWITCH:
        node(d, ind, "subject", n->switch_.subject);
        list(d, ind, "cases", n->switch_.cases);
        break;
    case AST_BRANCH:
        node(d, ind, "cond", n->branch.cond);
        list(d, ind, "body", n->branch.body);
        break;
    case AST_TRANSITION: node(d, ind, "cond", n->transition.cond); break;
    case AST_NUM: case AST_STR: case AST_BOOL: case AST_IDENT:
    case AST_END: case AST_COLON: case AST_MISSING:
        break;
    case AST_FIELD: node(d, ind, "base", n->field.base); break;
    case AST_INDEX:
        node(d, ind, "base", n->index.base);
        list(d, ind, "subs", n->index.subs);
        break;
    case AST_UNARY: node(d, ind, "operand", n->unary.lhs); break;
    case AST_BINARY:
        node(d, ind, "lhs", n->binary.lhs);
        node(d, ind, "rhs", n->binary.rhs);
        break;
    case AST_RANGE:
        node(d, ind, "start", n->range.start);
        node(d, ind, "step", n->range.step);
        node(d, ind, "stop", n->range.stop);
        break;
    case AST_IFEXPR:
        node(d, ind, "cond", n->ifexpr.cond);
        node(d, ind, "then", n->ifexpr.then);
        node(d, ind, "else", n->ifexpr.else_);
        break;
    case AST_CALL:
        node(d, ind, "callee", n->call.callee);
        list(d, ind, "args", n->call.args);
        break;
    case AST_ARG: node(d, ind, "value", n->arg.value); break;
    case AST_ARRAY: list(d, ind, "elems", n->array.elems); break;
    case AST_COMPREHENSION:
        node(d, ind, "body", n->compr.body);
        list(d, ind, "iters", n->compr.iters);
        break;
    case AST_AT:
        node(d, ind, "expr", n->at.expr);
        node(d, ind, "clock", n->at.clock);
        break;
    case AST_KIND_COUNT: break;
    }
}

static void node(Dump *d, int ind, const char *label, const AstNode *n) {
    if (!n) return;
    pad(d, ind);
    fprintf(d->out, "%s %s", label, ast_kind_names[n->kind] + 4);
    attrs(d, n);
    span(d, n->span);
    fputc('\n', d->out);
    trivia(d, ind + 1, n);
    children(d, ind + 1, n);
}

void ast_dump_opts(FILE *out, const AstFile *f, bool with_spans) {
    Dump d = {out, f, with_spans};
    fprintf(out, "FILE %u items\n", f->items.len);
    for (uint32_t i = 0; i < f->items.len; i++) node(&d, 1, "-", f->items.items[i]);
    text(&d, 1, "trailing#", f->trailing.doc_comment);
}

void ast_dump(FILE *out, const AstFile *f) { ast_dump_opts(out, f, true); }
