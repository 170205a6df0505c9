/*
 * ast.h -- the abstract syntax tree of a .dyad file.
 *
 * Every node is an AstNode: a `kind` from the X-macro list below, a source
 * Span, and a union member named after the kind group.  Lists are AstList.
 * Everything is arena-owned and immutable after parsing.  Names are interned
 * Syms.  Docstrings and metadata are kept verbatim (for the formatter and for
 * later phases that read `tests`, `experiments`, placement, ...).
 *
 * Producers: parse/.  Consumers: sema/, flatten/, the AST printer and the
 * formatter.  Field names are a contract: extend, never rename.
 */
#ifndef DYADC_AST_H
#define DYADC_AST_H

#include "support.h"

/* X(kind, union member) -- one list, so enum, names and dumps cannot drift */
#define AST_KINDS(X)                                                         \
    /* top-level items */                                                    \
    X(AST_USING, using)          /* using Lib: a, b::T                     */ \
    X(AST_TYPEDEF, typedef_)     /* type T = Real(units="V") | func(...)   */ \
    X(AST_STRUCT, def)           /* struct S  fields  end                  */ \
    X(AST_ENUM, enum_)           /* enum E = | A | B(x::Real)              */ \
    X(AST_CONNECTOR, def)        /* connector C  fields  end  | = input T  */ \
    X(AST_COMPONENT, def)        /* [partial|example|test|external] component */ \
    X(AST_ANALYSIS, def)         /* analysis A  extends ...  end           */ \
    X(AST_FUNCTION, func)        /* our extension: pure .dyad function     */ \
    /* parts of definitions */                                               \
    X(AST_EXTENDS, extends)      /* extends Base(mods)                     */ \
    X(AST_DECL, decl)            /* parameter/variable/constant/path/connector field/struct field */ \
    X(AST_INSTANCE, inst)        /* name [:: T(mods)[dims]] = C(mods) | [C(...) for i in r] */ \
    X(AST_CLOCK_PARAM, clockparam) /* @[input clk extends Discrete]        */ \
    X(AST_ENUM_CASE, enumcase)   /* | Name(fields)                         */ \
    X(AST_FUNCTYPE, functype)    /* func(::A, ::B; k::C)::R                */ \
    X(AST_TYPE, type)            /* qualified type name with modifications */ \
    X(AST_MOD, mod)              /* [final] name = value | name(mods) [= value] */ \
    X(AST_ITER, iter)            /* i in expr                              */ \
    X(AST_FUNC_STMT, fstmt)      /* our extension: local assignment in a function */ \
    /* relations */                                                          \
    X(AST_EQUATION, eq)          /* [initial|guess] lhs = rhs              */ \
    X(AST_CONNECT, connect)      /* connect(a, b, ...)                     */ \
    X(AST_CONTINUITY, connect)   /* continuity(a, b, ...)                  */ \
    X(AST_ANALYSIS_POINT, connect) /* analysis_point(a, b)                 */ \
    X(AST_ASSERT, assert_)       /* assert(cond, "message")                */ \
    X(AST_FOR, for_)             /* for i in r, j in s  body  end          */ \
    X(AST_IF, if_)               /* if c body elseif c body else body end  */ \
    X(AST_SWITCH, switch_)       /* switch e  case A ... end  default ... end  end */ \
    X(AST_BRANCH, branch)        /* one arm of AST_IF / AST_SWITCH         */ \
    X(AST_TRANSITION, transition) /* transition(A => B, cond) (legacy)     */ \
    /* expressions */                                                        \
    X(AST_NUM, num)              /* 1, 2.5, 10k, 1e-3                      */ \
    X(AST_STR, str)              /* "..." or """...""" (decoded)           */ \
    X(AST_BOOL, boolean)         /* true / false                           */ \
    X(AST_IDENT, ident)          /* name                                   */ \
    X(AST_FIELD, field)          /* base.name                              */ \
    X(AST_INDEX, index)          /* base[i, j]                             */ \
    X(AST_END, none)             /* `end` inside an index                  */ \
    X(AST_COLON, none)           /* `:` (whole dimension) inside an index or dims */ \
    X(AST_MISSING, none)         /* `missing` (modification/declaration value) */ \
    X(AST_UNARY, unary)          /* -a, +a, !a                             */ \
    X(AST_BINARY, binary)        /* a op b                                 */ \
    X(AST_RANGE, range)          /* a:b, a:step:b                          */ \
    X(AST_IFEXPR, ifexpr)        /* if c then a else b, c ? a : b          */ \
    X(AST_CALL, call)            /* f(args), f(k = v)                      */ \
    X(AST_ARG, arg)              /* one call argument, maybe named         */ \
    X(AST_ARRAY, array)          /* [a, b, c]                              */ \
    X(AST_COMPREHENSION, compr)  /* [e for i in r, j in s]                 */ \
    X(AST_AT, at)                /* x@clk, x@(clk - 1)                     */

typedef enum {
#define X(k, m) k,
    AST_KINDS(X)
#undef X
    AST_KIND_COUNT
} AstKind;

extern const char *const ast_kind_names[AST_KIND_COUNT];

typedef struct AstNode AstNode;
typedef struct AstExtra AstExtra;

typedef struct AstList {
    AstNode **items;
    uint32_t len;
} AstList;

/* A qualified name `A.B.C`: parts in order. */
typedef struct AstQName {
    Sym *parts;
    uint32_t len;
    Span span;
} AstQName;

/* Per-element or definition metadata, kept verbatim. */
typedef enum {
    META_NONE,
    META_OBJECT,     /* { ... }            (3.x inline) or `metadata { ... }` */
    META_BRACKETED,  /* [ { ... } ]        (v0.50) */
    META_LINK        /* {^name}            (link into "_links") */
} MetaKind;

typedef struct AstMeta {
    MetaKind kind;
    const char *text; /* verbatim JSON text incl. braces (OBJECT/BRACKETED) */
    Sym link;         /* META_LINK target */
    Span span;
} AstMeta;

/* Comments: leading `#` lines before an item become its `doc_comment`
 * (text without the `#` markers, lines joined with \n); a trailing comment on
 * the same line after the item is `trailing_comment`.  In a block (definition
 * with `end`, `for`, `if`, `switch`, `case`, function) a comment on the
 * opening line is its `head_comment` and comments after its last inner item
 * are its `end_comment`, so no comment leaves the block it is written in.
 * The exact rule is in parse.c. */
typedef struct AstTrivia {
    const char *doc;              /* string docstring, decoded; NULL if none */
    bool doc_triple;              /* docstring was written """...""" */
    const char *doc_comment;      /* preceding # lines; NULL if none */
    const char *trailing_comment; /* `# ...` after the item on its line */
    Span doc_span;                /* the docstring as written (quotes incl.):
                                     ast_text() gives its spelling */
    const char *head_comment;     /* blocks: `# ...` after the opening line */
    const char *end_comment;      /* blocks: # lines after the last inner item,
                                     before `metadata`/`end` */
} AstTrivia;

typedef enum {
    DEF_PLAIN,
    DEF_PARTIAL,
    DEF_EXAMPLE,
    DEF_TEST,
    DEF_EXTERNAL
} DefPrefix;

typedef enum {
    VAR_PARAMETER,  /* parameter */
    VAR_VARIABLE,   /* variable */
    VAR_CONSTANT,   /* constant */
    VAR_PATH,       /* path (inside a component, or a connector field) */
    VAR_POTENTIAL,  /* connector field qualifiers */
    VAR_FLOW,
    VAR_STREAM,
    VAR_INPUT,
    VAR_OUTPUT,
    VAR_FIELD       /* struct field / enum case payload / function argument */
} VarKind;

typedef enum { EQ_NORMAL, EQ_INITIAL, EQ_GUESS } EqKind;

typedef enum {
    OP_ADD, OP_SUB, OP_MUL, OP_DIV, OP_MOD, OP_POW,
    OP_EADD, OP_ESUB, OP_EMUL, OP_EDIV, OP_EMOD, OP_EPOW,
    OP_LT, OP_LE, OP_GT, OP_GE, OP_EQ, OP_NE,
    OP_AND, OP_OR,
    OP_NEG, OP_PLUS, OP_NOT
} AstOp;

extern const char *const ast_op_names[]; /* "+", "-", ..., "!" */

struct AstNode {
    AstKind kind;
    Span span;
    AstExtra *extra;    /* trivia and metadata (items only), NULL when none */
    union {
        struct {            /* AST_USING */
            AstQName lib;   /* `.` for the current module: len 0 */
            AstList syms;   /* AST_DECL (kind VAR_FIELD; type may be NULL) */
        } using;
        struct {            /* AST_TYPEDEF */
            Sym name;
            AstNode *type;  /* AST_TYPE or AST_FUNCTYPE */
            AstList dims;   /* `type Vec3 = Real[3]` */
        } typedef_;
        struct {            /* AST_STRUCT, AST_CONNECTOR, AST_COMPONENT, AST_ANALYSIS */
            Sym name;
            DefPrefix prefix;
            AstList clock_params; /* AST_CLOCK_PARAM */
            AstList extends;      /* AST_EXTENDS */
            AstList decls;        /* AST_DECL, AST_INSTANCE (in source order) */
            AstList relations;    /* relations (NULL items never) */
            bool has_relations;   /* `relations` keyword present */
            AstNode *alias;       /* connector `= input Real(...)`: AST_DECL
                                     with kind VAR_INPUT/VAR_OUTPUT, name NULL */
        } def;
        struct {            /* AST_ENUM */
            Sym name;
            AstList cases;  /* AST_ENUM_CASE */
        } enum_;
        struct {            /* AST_ENUM_CASE */
            Sym name;
            AstList fields; /* AST_DECL (VAR_FIELD) */
            bool has_parens;
        } enumcase;
        struct {            /* AST_FUNCTION (extension) */
            Sym name;
            AstList params;   /* AST_DECL (VAR_FIELD) */
            AstNode *result;  /* AST_TYPE (with dims on result_dims) */
            AstList result_dims;
            AstList body;     /* AST_FUNC_STMT, last one is the result */
        } func;
        struct {            /* AST_FUNC_STMT */
            Sym name;         /* NULL for the final result expression */
            AstNode *value;
        } fstmt;
        struct {            /* AST_EXTENDS */
            AstNode *type;  /* AST_TYPE */
        } extends;
        struct {            /* AST_DECL */
            Sym name;
            VarKind kind;
            bool is_final;
            bool is_structural;
            AstNode *type;    /* AST_TYPE or AST_FUNCTYPE; NULL for untyped `using` syms */
            AstList dims;     /* array dimensions: expressions or AST_COLON */
            AstNode *value;   /* `= expr` / AST_MISSING; NULL if none */
            AstNode *initial; /* `initial expr` part of `= v initial w`; NULL if none */
            bool has_initial; /* the `initial` keyword was present */
            AstNode *cond;    /* `if cond` conditional declaration */
        } decl;
        struct {            /* AST_INSTANCE */
            Sym name;
            AstNode *constraint;   /* `:: T(mods)`: AST_TYPE or NULL */
            AstList constraint_dims;
            AstNode *value;        /* AST_TYPE (the instantiated component, with
                                      modifications), or AST_COMPREHENSION whose
                                      body is an AST_TYPE */
            AstList clock_args;    /* `@[clk]` arguments: expressions */
            AstNode *cond;         /* `if cond` */
        } inst;
        struct {            /* AST_CLOCK_PARAM */
            bool is_output;
            Sym name;
            Sym base;       /* `extends Discrete`; NULL if none */
        } clockparam;
        struct {            /* AST_FUNCTYPE */
            AstList params;   /* AST_TYPE (positional `::T`) */
            AstList kwparams; /* AST_DECL (VAR_FIELD) after `;` */
            AstList results;  /* AST_TYPE; more than one = tuple */
        } functype;
        struct {            /* AST_TYPE */
            AstQName name;
            AstList mods;   /* AST_MOD */
            bool has_parens;/* `T()` vs `T` */
            AstList clock_args; /* `T@[clk]()` */
        } type;
        struct {            /* AST_MOD */
            bool is_final;
            Sym name;
            AstList mods;     /* nested `name(mods)` */
            bool has_nested;  /* parentheses after the name */
            AstNode *value;   /* expr, AST_MISSING, AST_TYPE (redeclaration), or NULL */
            AstNode *initial; /* after `initial`: expr or AST_MISSING */
            bool has_initial;
        } mod;
        struct {            /* AST_ITER */
            Sym name;
            AstNode *range;
        } iter;
        struct {            /* AST_EQUATION */
            EqKind kind;
            Sym label;
            AstNode *lhs, *rhs;
        } eq;
        struct {            /* AST_CONNECT, AST_CONTINUITY, AST_ANALYSIS_POINT */
            Sym label;
            AstList args;   /* component references */
        } connect;
        struct {            /* AST_ASSERT */
            Sym label;
            AstNode *cond;
            AstNode *message; /* AST_STR */
        } assert_;
        struct {            /* AST_FOR */
            Sym label;
            AstList iters;  /* AST_ITER */
            AstList body;
        } for_;
        struct {            /* AST_IF */
            Sym label;
            AstList branches; /* AST_BRANCH; the last has cond NULL for `else` */
        } if_;
        struct {            /* AST_SWITCH */
            Sym label;
            AstNode *subject;
            AstList cases;  /* AST_BRANCH: name = case name, NULL for `default` */
        } switch_;
        struct {            /* AST_BRANCH */
            AstNode *cond;  /* AST_IF arm condition (NULL = else) */
            Sym name;       /* AST_SWITCH case name (NULL = default) */
            AstList body;
        } branch;
        struct {            /* AST_TRANSITION */
            Sym from, to;
            AstNode *cond;
        } transition;
        struct {            /* AST_NUM */
            double value;
            bool is_int;    /* written without fraction/exponent/prefix */
        } num;              /* spelling: ast_text(src, node span) */
        struct {            /* AST_STR */
            const char *value; /* decoded (UTF-8) */
            uint32_t len;
            bool triple;
        } str;              /* spelling incl. quotes: ast_text(src, node span) */
        struct { bool value; } boolean; /* AST_BOOL */
        struct { Sym name; } ident;     /* AST_IDENT */
        struct {            /* AST_FIELD */
            AstNode *base;
            Sym name;
            uint32_t height; /* tree height below here (parser depth limit) */
        } field;
        struct {            /* AST_INDEX */
            AstNode *base;
            AstList subs;   /* expressions, AST_COLON, AST_END inside */
            uint32_t height; /* tree height below here (parser depth limit) */
        } index;
        struct {            /* AST_UNARY, AST_BINARY */
            AstOp op;
            uint32_t height; /* tree height below here (parser depth limit) */
            AstNode *lhs;   /* operand of a unary */
            AstNode *rhs;
        } unary, binary;
        struct {            /* AST_RANGE */
            AstNode *start, *step, *stop; /* step NULL for a:b */
        } range;
        struct {            /* AST_IFEXPR */
            AstNode *cond, *then, *else_;
            bool ternary;   /* written c ? a : b */
            uint32_t height; /* tree height below here (parser depth limit) */
        } ifexpr;
        struct {            /* AST_CALL */
            AstNode *callee; /* AST_IDENT or AST_FIELD chain */
            AstList args;    /* AST_ARG */
            uint32_t height; /* tree height below here (parser depth limit) */
        } call;
        struct {            /* AST_ARG */
            Sym name;       /* keyword argument name or NULL */
            AstNode *value;
        } arg;
        struct { AstList elems; } array;  /* AST_ARRAY */
        struct {            /* AST_COMPREHENSION */
            AstNode *body;
            AstList iters;  /* AST_ITER */
        } compr;
        struct {            /* AST_AT */
            AstNode *expr;
            AstNode *clock; /* clk or (clk - 1) */
            uint32_t height; /* tree height below here (parser depth limit) */
        } at;
        char none;          /* AST_END, AST_COLON, AST_MISSING */
    };
};

/* The trivia and metadata of an item, allocated only when it has some
 * (most items have none): 100 bytes a node in AstNode would make the tree
 * twice as large (parse memory <= 10x the source, issue 13). */
typedef struct AstExtra {
    AstTrivia trivia;   /* docs and comments attached to this node */
    AstMeta meta;       /* per-element metadata, or the definition's `metadata` */
} AstExtra;

/* A node's trivia and metadata; empty ones (all zero) when it has none.
 * Only items (ast_has_trivia) ever have some. */
const AstTrivia *ast_trivia(const AstNode *n);
/* The source text of a span (not NUL-terminated: `len` bytes): verbatim
 * spellings of numbers, strings and docstrings are not copied. */
const char *ast_text(const SrcFile *src, Span sp, uint32_t *len);
const AstMeta *ast_meta(const AstNode *n);

/* Kinds whose nodes carry `trivia` and `meta`: definitions, declarations,
 * instances, extends, enum cases, relations, branches, function statements. */
bool ast_has_trivia(AstKind k);

/* Bytes a node of kind k occupies (what ast_node allocates). */
size_t ast_node_size(AstKind k);

typedef struct AstFile {
    SrcFile *src;
    AstList items;      /* top-level definitions */
    AstTrivia trailing; /* comments after the last item */
} AstFile;

typedef struct Parser Parser;

/* Parse one file.  Syntax errors are reported through diag_* and recovered
 * from; the result is always a (possibly partial) AstFile, never NULL. */
AstFile *parse_file(Arena *a, Interner *in, SrcFile *src);

/* Deterministic textual dump (golden tests). */
void ast_dump(FILE *out, const AstFile *f);

/* The same dump; with_spans = false omits every span (round-trip checks). */
void ast_dump_opts(FILE *out, const AstFile *f, bool with_spans);

/* Canonical formatting: fmt(fmt(x)) == fmt(x); parse(fmt(x)) == parse(x). */
void ast_format(FILE *out, const AstFile *f);

#endif
