/*
 * parse_internal.h -- shared state of the lexer, the bison parser and the
 * AST constructors (ast.c).  Not a public header: only compiler/parse/ and
 * its tests include it.
 *
 * The Parser owns everything a parse needs: the arena, the interner, the
 * source, the comment list the lexer collects (attached to items after the
 * parse, see parse.c), and the stack of open blocks (`component X`, `for`,
 * `if`, ...) used for "expected `end` to close ..." messages and recovery.
 */
#ifndef DYADC_PARSE_INTERNAL_H
#define DYADC_PARSE_INTERNAL_H

#include "ast.h"

/* A growable node list used while parsing; its prefix is an AstList. */
typedef struct NList {
    AstNode **items;
    uint32_t len, cap;
} NList;

/* One `#` comment as the lexer saw it. */
typedef struct Comment {
    Span span;         /* the `#...` text, without the newline */
    bool own_line;     /* nothing but whitespace before it on its line */
    bool used;
} Comment;

/* One open block (definition, for, if, switch, case, function). */
typedef struct OpenBlock {
    const char *what;  /* "component", "`for`", ... */
    Sym name;          /* definition name or NULL */
    Span span;         /* the opening keyword */
    AstNode *node;     /* the node the block builds (popped by identity) */
} OpenBlock;

/* Flags for declaration heads (final / structural). */
enum { DF_FINAL = 1, DF_STRUCTURAL = 2 };

typedef struct Parser {
    Arena *arena;
    Interner *in;
    SrcFile *src;
    void *scanner;
    Vec(AstNode *) top;       /* top-level items, in source order */
    Vec(AstNode *) items;     /* every item that can carry trivia */
    Vec(Comment) comments;
    Vec(OpenBlock) blocks;
    uint32_t pending_ends;    /* synthetic `end`s the lexer still has to emit */
    uint32_t pending_tok;     /* token to return after them (0 = none) */
    Span pending_span;
    bool last_synthetic;      /* last token returned was a synthetic `end` */
    bool deep_reported;       /* "nesting too deep" already reported */
    int state_depth;          /* open legacy `state` blocks */
    unsigned nerrors;
    /* lexer position state */
    uint32_t off;             /* byte offset of the next unread byte */
    uint32_t read_off;     /* bytes of src handed to the scanner (lex_read) */
    void *nl_spare[32];       /* outgrown list arrays by log2(capacity) (nl_push) */
    uint32_t tok_start;       /* start of a multi-rule token (strings, metadata) */
    uint32_t bad_end;         /* end of the last reported invalid byte run */
    int depth;                /* open ( and [ -- `end` inside is AST_END */
    int meta_depth;           /* { nesting inside a metadata blob */
    int meta_kind;            /* token to return for the blob */
    bool nl;                  /* a newline since the last token */
    bool line_has_code;       /* a token already on the current line */
    bool tok_first;           /* the last token was the first on its line */
    bool skip_line;           /* after an error: drop the rest of the line */
    bool held;                /* held_tok is the next token (read while skipping) */
    int held_tok;
    Span held_span;
} Parser;

/* ---- lexer side (lexer.l) ---- */
typedef union YYSTYPE YYSTYPE;
int lex_init(Parser *p);                 /* 0 on success */
void lex_done(Parser *p);
int yylex(YYSTYPE *lval, Span *lloc, void *scanner);
double lex_number_value(const char *text, size_t n, bool *is_int);
char *lex_decode_string(Arena *a, const char *raw, size_t n, bool triple,
                        uint32_t *out_len, const char **bad_escape);

/* ---- parser side ---- */
int dyadc_yyparse(Parser *p, void *scanner);
void parse_syntax_error(Parser *p, Span sp, const char *msg);

/* ---- constructors (ast.c); grammar actions call exactly one of these ---- */
AstNode *ast_node(Parser *p, AstKind k, Span sp);
NList nl_empty(void);
NList nl_one(Parser *p, AstNode *n);
NList nl_push(Parser *p, NList l, AstNode *n);
NList nl_cat(Parser *p, NList a, NList b);
AstList nl_list(NList l);
Sym sym_of(Parser *p, Span sp);

AstNode *mk_num(Parser *p, Span sp);
AstNode *mk_str(Parser *p, Span sp);
AstNode *mk_bool(Parser *p, Span sp, bool v);
AstNode *mk_ident(Parser *p, Sym name, Span sp);
AstNode *mk_leaf(Parser *p, AstKind k, Span sp);
AstNode *mk_field(Parser *p, AstNode *base, Sym name, Span sp);
AstNode *mk_index(Parser *p, AstNode *base, NList subs, Span sp);
AstNode *mk_call(Parser *p, AstNode *callee, NList args, Span sp);
AstNode *mk_arg(Parser *p, Sym name, AstNode *value, Span sp);
AstNode *mk_unary(Parser *p, AstOp op, AstNode *e, Span sp);
AstNode *mk_binary(Parser *p, AstOp op, AstNode *l, AstNode *r, Span sp);
AstNode *mk_range(Parser *p, AstNode *a, AstNode *step, AstNode *b, Span sp);
AstNode *mk_ifexpr(Parser *p, AstNode *c, AstNode *t, AstNode *e, bool ternary, Span sp);
AstNode *mk_array(Parser *p, NList elems, Span sp);
AstNode *mk_compr(Parser *p, AstNode *body, NList iters, Span sp);
AstNode *mk_at(Parser *p, AstNode *e, AstNode *clk, Span sp);
AstNode *mk_iter(Parser *p, Sym name, AstNode *range, Span sp);

AstNode *mk_ifexpr_chain(Parser *p, AstNode *c, AstNode *t, AstNode *elifs,
                         AstNode *e, Span sp);
AstNode *mk_elif(Parser *p, AstNode *chain, AstNode *c, AstNode *t, Span sp);

AstQName mk_qname(Parser *p, Sym first, Span sp);
AstQName qname_push(Parser *p, AstQName q, Sym next, Span sp);
AstNode *mk_type(Parser *p, AstQName q, NList clock_args, NList mods, bool has_parens, Span sp);
AstNode *mk_mod(Parser *p, bool fin, Sym name, NList nested, bool has_nested,
                AstNode *value, AstNode *init, bool has_init, Span sp);
AstNode *mk_decl(Parser *p, int flags, int kind, Sym name, AstNode *type, NList dims,
                 AstNode *value, AstNode *init, bool has_init, AstNode *cond, Span sp);
AstNode *mk_inst(Parser *p, Sym name, AstNode *constraint, NList cdims,
                 AstNode *value, AstNode *cond, Span sp);
AstNode *mk_extends(Parser *p, AstNode *type, Span sp);
AstNode *mk_clockparam(Parser *p, bool out, Sym name, Sym base, Span sp);
AstNode *with_meta(Parser *p, AstNode *n, AstMeta m);
AstExtra *ast_extra(Parser *p, AstNode *n);    /* allocated on first use */
AstNode *with_doc(Parser *p, AstNode *n, Span doc);
AstMeta mk_meta(Parser *p, int kind, Span sp);
AstMeta meta_none(void);

AstNode *def_open(Parser *p, AstKind k, int prefix, Sym name, NList clocks, Span sp);
AstNode *def_close(Parser *p, AstNode *def, NList body, NList rels, bool has_rels,
                   AstMeta meta, Span sp);
int block_pop(Parser *p);
AstNode *def_alias(Parser *p, AstNode *def, int out, AstNode *type, AstMeta meta, Span sp);
AstNode *mk_typedef(Parser *p, Sym name, AstNode *type, NList dims, AstMeta meta, Span sp);
AstNode *mk_functype(Parser *p, NList params, NList results, Span sp);
AstNode *mk_enum(Parser *p, Sym name, NList cases, Span sp);
AstNode *mk_enumcase(Parser *p, Sym name, NList fields, bool parens, Span sp);
AstNode *mk_using(Parser *p, AstQName lib, NList syms, Span sp);
AstNode *mk_function(Parser *p, AstNode *head, NList params, AstNode *result,
                     NList rdims, NList body, Span sp);
AstNode *mk_fstmt(Parser *p, Sym name, AstNode *value, Span sp);
void top_add(Parser *p, AstNode *item);

AstNode *mk_eq(Parser *p, EqKind k, AstNode *l, AstNode *r, Span sp);
AstNode *mk_connect(Parser *p, AstKind k, NList args, Span sp);
AstNode *mk_assert(Parser *p, NList args, Span sp);
AstNode *mk_label(Parser *p, Sym label, AstNode *rel, Span sp);
AstNode *block_open(Parser *p, AstKind k, const char *what, AstNode *cond, Span sp);
AstNode *mk_for(Parser *p, AstNode *head, NList iters, NList body, Span sp);
AstNode *mk_if(Parser *p, AstNode *head, NList body, NList elifs, AstNode *els, Span sp);
AstNode *mk_branch(Parser *p, AstNode *cond, Sym name, NList body, Span sp);
AstNode *mk_switch(Parser *p, AstNode *head, NList cases, Span sp);
AstNode *mk_case(Parser *p, AstNode *head, NList body, Span sp);
AstNode *mk_transition(Parser *p, Sym from, Sym to, AstNode *cond, Span sp);
AstNode *item_add(Parser *p, AstNode *n);
AstNode *state_open(Parser *p, bool initial, Sym name, Span sp);
AstNode *state_close(Parser *p, AstNode *head, Span sp);

#endif
