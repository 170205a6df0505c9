/* flatten_internal.h -- shared by the files of compiler/flatten only.
 *
 * The instance tree: an Inst per component/connector instance, holding its
 * elements (variables, parameters, sub-instances) by name.  Every value that
 * comes from a modifier remembers the instance it must be evaluated in
 * (`Binding.scope`) and the loop indices visible there (`Binding.env`):
 * `Resistor(R = R1)` evaluates `R1` in the parent, `[R(R = i) for i in 1:3]`
 * evaluates `i` in the comprehension.
 *
 * Arrays are scalarized: an array element (variable or parameter) owns `n`
 * consecutive flat variables in row-major order; a component array owns `n`
 * child instances.  Expressions translate to Vals: a shape and one Expr per
 * element (a scalar is a Val with nd = 0).  A `for` equation may instead be
 * translated once as a template over its iteration box (equations.c,
 * try_template; F->tmpl set while it is), its loop indices bound to affine
 * functions of EXPR_IDX.
 *
 * Files, in pipeline order: instance.c (the tree), refs.c (what a name
 * denotes), consts.c (structural values, with ints.c for their exact
 * Integer arithmetic), translate.c (expression -> Val,
 * with val.c for the algebra on Vals, structs.c for struct values,
 * builtins.c and functions.c for calls), equations.c (bindings and
 * relations), connect.c (connection sets), balance.c, units_check.c,
 * analysis.c, scalarize.c (templates -> scalar equations), flatten.c
 * (entry point and dump).  Translation takes its
 * context (Tx) by value; the Flattener holds only what the whole
 * flattening shares (the model, the instance tree, the connection sets). */
#ifndef DYADC_FLATTEN_INTERNAL_H
#define DYADC_FLATTEN_INTERNAL_H

#include "flat.h"

#define VAL_MAXD 4
#define NO_VAR UINT32_MAX
#define INST_SMALL 8       /* instances with fewer elements are searched linearly */

typedef struct Inst Inst;
typedef struct Elem Elem;

typedef struct StructField {  /* one field of a struct value */
    Sym name;
    uint32_t off, n;          /* its scalars in the flattened value */
    uint8_t nd;               /* declared shape (0 = scalar) */
    uint32_t dims[VAL_MAXD];
    Def *sd;                  /* a nested struct, or NULL */
} StructField;

typedef struct StructLayout { /* a struct, connector or component as a value */
    Def *def;
    uint32_t nfields, n;      /* fields; scalars in all */
    StructField *fields;
} StructLayout;

typedef struct Val {
    uint8_t nd;               /* number of dimensions; 0 = scalar */
    uint32_t dims[VAL_MAXD];
    uint32_t n;               /* number of elements (product of dims) */
    Expr **el;                /* row-major elements; NULL for a scalar */
    Expr *s;                  /* the scalar (nd = 0) */
    const char *str;          /* a string value (n = 0), else NULL */
    Def *sd;                  /* a struct (or connector) value: its type; the
                                 elements are its scalar fields (nd = 1) */
    bool missing;             /* `missing` (the literal, or a structural
                                 parameter without value): usable only as a
                                 function argument and in ismissing() */
    int64_t *iv;              /* an Integer (structural values only): the
                                 exact value of each element (ints.c); NULL
                                 for a Real, Boolean or non-constant value */
} Val;

static inline Expr *val_at(const Val *v, uint32_t i) { return v->el ? v->el[i] : v->s; }

typedef struct Ref {          /* what a component reference denotes */
    Elem *var;               /* a variable element, elements [off, off+cnt) */
    uint32_t off, cnt;
    Inst *inst;               /* or one instance */
    Elem *arr;               /* or a whole component array */
} Ref;

typedef struct Env {          /* loop indices and function locals */
    Sym name;
    Val val;
    struct Env *next;
} Env;
typedef Vec(Env *) EnvVec;
typedef Vec(Expr *) ExprPtrVec;

typedef struct Binding {
    AstNode *expr;   /* expression, AST_MISSING, or NULL */
    Inst *scope;     /* where names in expr resolve; NULL = constants only */
    Env *env;        /* loop indices visible to expr */
    bool is_final;
} Binding;

typedef struct Pending {  /* a modification waiting to be applied */
    AstNode *mod;         /* AST_MOD */
    Inst *scope;
    Env *env;
} Pending;
typedef Vec(Pending) PendingVec;

typedef enum { ELEM_VAR, ELEM_INST } ElemKind;

/* structural evaluation of a parameter's value (consts.c) */
typedef enum { CONST_UNSEEN, CONST_BUSY, CONST_DONE, CONST_FAILED } ConstState;

typedef struct Elem {
    ElemKind kind;
    Sym name;
    AstNode *decl;        /* AST_DECL or AST_INSTANCE */
    Inst *owner;
    bool absent;          /* conditional declaration whose condition is false */
    uint8_t nd;           /* array dimensions (0 = scalar) */
    uint32_t dims[VAL_MAXD];
    uint32_t n;           /* number of scalars / child instances */
    /* ELEM_VAR */
    VarKind vkind;        /* parameter, variable, potential, flow, input, ... */
    bool is_structural;
    Binding value;        /* `= expr` */
    Binding initial;      /* `initial expr` */
    PendingVec attrs;     /* attribute modifications (units, guess, min, ...) */
    PendingVec elem_attrs;/* `[RealInput(guess = i) for i in 1:n]`: attributes
                             evaluated once per element, in elem_env[k] */
    Env **elem_env;       /* per-element environments of a comprehension */
    AstNode *type;        /* AST_TYPE of the declaration */
    Library *type_lib;    /* library where `type` is resolved */
    uint32_t var;         /* first flat variable index (NO_VAR before creation) */
    ConstState cstate;    /* structural evaluation of `value` */
    Val *cval;            /* the structural value when cstate == CONST_DONE */
    /* ELEM_INST */
    Def *def;             /* the component or connector */
    Def *constraint;      /* `name::Constraint = ...`, or NULL */
    PendingVec mods;      /* modifications for the child, in order */
    uint32_t nconstraint; /* the first mods come from the constraint's own
                             modifications: defaults every replacement keeps */
    Inst *child;          /* scalar instance */
    Inst **children;      /* component array: n instances (row-major) */
    AstNode *compr;       /* AST_COMPREHENSION of a component array */
    Inst *compr_scope;
    Env *compr_env;
} Elem;

struct Inst {
    const char *path;     /* dotted path; "" for the top */
    Def *def;
    Inst *parent;
    Env *env;             /* loop indices of a comprehension element */
    Vec(Elem *) elems;    /* declaration order (inherited first) */
    HashMap by_name;      /* Sym -> Elem*, only past INST_SMALL elements */
    Vec(AstNode *) relations; /* own and inherited, evaluated in this scope */
    Elem *elem;           /* the declaring element in the parent; NULL for the top */
    bool is_connector;
    bool is_analysis;     /* parameters are evaluated, never flat variables */
};

typedef struct Deferred {   /* a relation translated after all connects */
    AstNode *rel;
    Inst *inst;
    Env *env;
    uint32_t rooted;        /* the branch of `if rooted()` it is in (FlatEq.rooted) */
} Deferred;

/* `if rooted(x.R) ... else ... end` in a relation (loops.c decides it) */
typedef struct RootedIf {
    uint32_t var;           /* the flat variable of x.R's first entry */
    const char *origin;     /* the component that writes it */
    Span span;              /* the condition */
} RootedIf;

typedef struct Flattener Flattener;

/* Creates the helper variable x' for der(der(x)) (equations.c): the only way
 * translation adds a flat variable, and only where its caller allows it. */
typedef uint32_t (*DerHelperFn)(Flattener *F, uint32_t var, Span at);

/* The translation context, passed by value: where names resolve and how.
 * A callee that needs another context changes its own copy; nothing is
 * saved and restored in the Flattener. */
typedef struct Tx {
    Inst *scope;            /* instance where names resolve; NULL in function bodies */
    Env *env;               /* loop indices, function arguments and locals */
    Library *lib;           /* library of the function being inlined (its callees,
                               structs, enums); NULL outside functions */
    DerHelperFn der_helper; /* der(der(x)) allowed (relations); NULL elsewhere */
    uint32_t end;           /* value of `end` in the current subscript; 0 outside */
    uint8_t fn_depth;       /* nested function inlining depth */
    bool structural;        /* parameters evaluate to their values (sizes, ranges,
                               conditions, indices) */
    bool int_literals;      /* integer literals are Integers (ints.c), as in
                               structural values: the value of a parameter
                               declared Integer */
} Tx;

static inline Tx tx_in(Inst *scope, Env *env) { return (Tx){.scope = scope, .env = env}; }
static inline Tx tx_structural(Tx t) { t.structural = true; return t; }

/* Connection sets: union-find over keys 2*var + side (0 inside, 1 outside),
 * owned by connect.c */
typedef struct ConnSets {
    uint32_t nkeyvars;          /* variables that have keys (those of the instance tree) */
    uint32_t *uf;
    Span *key_span;
    const char **key_origin;
    unsigned char *key_used;
    unsigned char *var_defined; /* inputs given an equation outside their owner */
    uint32_t *set_start, *set_count, *set_members; /* keys bucketed by root (after connect_prepare_sets) */
} ConnSets;

struct Flattener {
    Program *prog;
    Arena *arena;           /* flatten's own: the instance tree, environments,
                               connection sets, every temporary; freed when
                               flatten() returns */
    Arena *keep;            /* the FlatModel's (the compilation arena): what
                               flows forward -- its vectors, names, instance
                               paths (FlatEq.origin), domains */
    ExprCtx *ctx;
    FlatModel *m;
    Inst *top;
    Vec(Elem *) var_elems;  /* flat variable index -> element */
    Vec(uint32_t) var_elem_off; /* flat variable index -> offset inside its element */
    Sym s_der, s_time, s_pi, s_pi_u, s_ifelse, s_Real, s_Integer, s_Boolean, s_String;
    Expr **leaf;            /* flat variable -> its EXPR_VAR leaf (cache) */
    uint32_t nleaf;
    Vec(struct Deferred) deferred; /* relations after the connects (instream needs the sets) */
    Vec(RootedIf) rooted_ifs; /* the `if rooted(x.R)` relations, decided by loops.c */
    uint32_t rooted;        /* while a branch of one is walked: FlatEq.rooted of its equations */
    HashMap aux_der;        /* var + 1 -> helper variable index + 1 for der(der(var)) */
    HashMap layouts;        /* Def* -> StructLayout* (structs.c) */
    ConnSets cs;
    struct ClockState *clk; /* clock parameters, links, helpers (clocks.c); NULL until used */
    uint64_t work, work_limit; /* structural work done, and the budget (flat_charge) */
    bool over_budget;       /* the budget ran out (reported once): stop expanding */
    bool no_templates;      /* --scalarize: every `for` iteration translated */
    const FlatDom *tmpl;    /* while a `for` is tried as templates (equations.c):
                               its box; loop indices are affine in EXPR_IDX */
    struct TmplCuts *cuts;  /* in that attempt: where conditions on an index
                               change (equations.c, the box is split there);
                               NULL: such conditions stay `ifelse` over IDX */
    bool speculating;       /* inside that attempt (diag_speculate): running out
                               of budget fails the attempt, not the flattening */
    Vec(Elem *) spec_failed; /* structural values that failed inside it (their
                               errors were not shown): evaluated again after it */
};

/* flatten.c: n more steps of structural work at `at`; false (after one
 * error naming the limit) once the budget is spent. */
bool flat_charge(Flattener *F, uint64_t n, Span at);

/* instance.c */
Inst *inst_build_top(Flattener *F, Def *def);
Inst *inst_build_under(Flattener *F, Def *def, PendingVec *mods);
Elem *inst_elem(Inst *inst, Sym name);
const char *inst_child_path(Flattener *F, Inst *parent, Sym name);
AstNode *mod_from_arg(Flattener *F, AstNode *arg);

/* val.c: Val algebra (shapes, element-wise operators, products, indexing) */
Val val_scalar(Expr *e);
Val val_new(Flattener *F, uint8_t nd, const uint32_t *dims);
Val val_like(Flattener *F, const Val *a);
void val_put(Val *r, uint32_t i, Expr *x);
bool val_present(const Val *v, AstNode *at);
bool val_same_shape(const Val *a, const Val *b);
const char *val_shape_str(Flattener *F, const Val *v);
bool val_binary(Flattener *F, AstNode *e, Val a, Val b, Val *out);
bool val_unary(Flattener *F, AstNode *e, Val a, Val *out);
bool val_ifelse(Flattener *F, AstNode *at, Expr *c, Val a, Val b, Val *out);
bool val_matmul(Flattener *F, Val a, Val b, AstNode *at, Val *out);

/* ints.c: exact Integer arithmetic on structural values */
Val val_int(Flattener *F, int64_t x);
Val val_elem(Flattener *F, const Val *v, uint32_t i);
void val_make_int(Flattener *F, Val *r);
void val_put_int(Flattener *F, Val *r, uint32_t i, int64_t x);
bool int_literal(Flattener *F, AstNode *e, Val *out);
bool int_binary(Flattener *F, AstNode *e, Val a, Val b, Val *out, bool *handled);
bool int_unary(Flattener *F, AstNode *e, Val a, Val *out);
bool int_math(Flattener *F, AstNode *call, int fn, Val a, Val b, Val *out, bool *handled);
bool int_from_real(double x, AstNode *at, const char *what, int64_t *out);
bool val_to_int(Flattener *F, Val *v, AstNode *at, const char *what);

/* refs.c: component references, qualified names, enums, leaves */
bool resolve_ref(Flattener *F, Tx t, AstNode *e, bool report, Ref *out);
bool ref_const_offset(Flattener *F, Tx t, const AstNode *array, AstList *subs, uint8_t nd, const uint32_t *dims,
                      uint32_t *off, bool report);
const char *ref_text(Flattener *F, const AstNode *e);
void ref_range_error(Flattener *F, const AstNode *array, Span at, double x, uint32_t k, uint8_t nd, uint32_t d);
bool subs_have_slice(AstList *subs);
Env *env_push(Flattener *F, Env *next, Sym name, Val v);
Env *env_find(Env *e, Sym name);
uint32_t field_chain_qname(AstNode *e, Sym *q, uint32_t cap); /* `A.B.c` -> [A, B, c] */
Library *tx_lib(Flattener *F, Tx t);
Def *enum_of_elem(Flattener *F, Elem *el);
int enum_case_index(Def *en, Sym name);
int enum_value(Flattener *F, Tx t, AstNode *e);
Expr *var_leaf(Flattener *F, uint32_t v);
void unknown_name(Flattener *F, Tx t, AstNode *e);

/* consts.c: structural (compile-time) values */
bool const_val(Flattener *F, Tx t, AstNode *e, Val *out);
bool const_int(Flattener *F, Tx t, AstNode *e, int64_t *out);
bool elem_const(Flattener *F, Elem *el, Val *out);
bool elem_is_param_like(Elem *el);
bool elem_is_integer(Flattener *F, Elem *el);

/* structs.c: struct values (the vector of their fields) */
Def *struct_type(Flattener *F, Library *lib, AstNode *type);
const StructLayout *struct_layout(Flattener *F, Def *sd, AstNode *at);
bool struct_from_inst(Flattener *F, Tx t, Inst *inst, Def *sd, AstNode *at, Val *out);
bool struct_value(Flattener *F, Tx t, Inst *si, AstNode *e, Val *out);
bool struct_construct(Flattener *F, Tx t, AstNode *call, Def *sd, Val *out);
bool struct_coerce(Flattener *F, Val v, Def *sd, AstNode *at, const char *what, Val *out);
bool struct_field(Flattener *F, Val v, Sym name, AstNode *at, Val *out);
bool struct_env_field(Flattener *F, Tx t, AstNode *e, Val *out, bool *handled);

/* translate.c: AST expression -> Val */
bool tr_val(Flattener *F, Tx t, AstNode *e, Val *out);
/* A structural Integer range `a:b`, `a:s:b` as its first value, step and
 * count, evaluated (and charged) as const_val evaluates it but without
 * building its elements (a `for` template's box needs only these): 1;
 * 0 when evaluating it failed (reported); -1 when e is no range or not
 * one of Integers (nothing reported, nothing charged: evaluate it whole). */
int tr_int_range(Flattener *F, Tx t, AstNode *e, int64_t *first, int64_t *step, uint32_t *n);
Expr *tr_expr(Flattener *F, Tx t, AstNode *e);
bool tr_var_value(Flattener *F, Tx t, Ref *r, bool whole, Val *out, AstNode *e);
Expr *tr_known(Flattener *F, Expr *e); /* structural parameters and constants by value */

/* builtins.c */
bool tr_builtin(Flattener *F, Tx t, AstNode *call, Sym name, Val *out, bool *handled);

/* functions.c */
bool tr_function_call(Flattener *F, Tx t, AstNode *call, Def *fn, Val *out);

/* equations.c */
void add_eq(Flattener *F, FlatEqKind k, Expr *l, Expr *r, const char *origin, Span sp);
void flatten_bindings(Flattener *F);
void flatten_relations(Flattener *F, Inst *inst);
void flatten_deferred(Flattener *F);

/* equations.c: the box of the template being translated fails to be one
 * (a subscript that is not affine, out of range in some instance, ...):
 * the `for` is flattened the ordinary way, which reports what is wrong. */
void tmpl_refuse(Flattener *F, Span at, const char *why);
/* every instance of the box (F->tmpl) reads a flat variable of kind k
 * through the indexed leaf `at`? (none: *none set) */
bool tmpl_all_kind(Flattener *F, const Expr *at, FlatVarKind k, bool *none);
/* translate.c: `x[i]` with a subscript affine in the template's IDX */
int tr_template_index(Flattener *F, Tx t, AstNode *e, Ref *b, Val *out);
/* the least and greatest value of affine form a over box d */
void tmpl_affine_bounds(const FlatDom *d, const ExprAffine *a, int64_t *lo, int64_t *hi);
/* A condition c over the loop indices in the current template's box
 * (equations.c): 1 or 0 when it holds everywhere or nowhere there; -1 when
 * it is no such condition (it stays an expression); -2 after refusing the
 * template because it changes inside the box (the box is then split where
 * it does). */
int tmpl_cond(Flattener *F, Expr *c, Span at);

/* connect.c */
void connect_init(Flattener *F);
void connect_members(Flattener *F, Inst *inst, Env *env, AstNode *r);
void flatten_connections(Flattener *F);
void connect_prepare_sets(Flattener *F);

/* loops.c */
void flatten_orientation_loops(Flattener *F);
bool tr_instream(Flattener *F, Tx t, AstNode *call, bool actual, Val *out);

/* clocks.c (docs/LANGUAGE.md, "Clocks") */
bool tr_at(Flattener *F, Tx t, AstNode *e, Val *out);
bool tr_clock_builtin(Flattener *F, Tx t, AstNode *call, Sym name, Val *out, bool *handled);
bool clock_relation(Flattener *F, Inst *inst, Env *env, AstNode *r);
void clock_bind_instances(Flattener *F, Inst *top);
/* clock_infer.c */
void clock_infer(Flattener *F, uint32_t first_connect_eq);

/* flatten.c */
FlatModel *flatten_model_of(Flattener *F, Def *d, PendingVec *mods);

/* analysis.c */
FlatModel *flatten_analysis(Flattener *F, Def *d);

#endif
