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
 * element (a scalar is a Val with nd = 0). */
#ifndef DYADC_FLATTEN_INTERNAL_H
#define DYADC_FLATTEN_INTERNAL_H

#include "flat.h"

#define VAL_MAXD 4
#define NO_VAR UINT32_MAX
#define INST_SMALL 8       /* instances with fewer elements are searched linearly */

typedef struct Inst Inst;
typedef struct Elem Elem;

typedef struct Val {
    uint8_t nd;               /* number of dimensions; 0 = scalar */
    uint32_t dims[VAL_MAXD];
    uint32_t n;               /* number of elements (product of dims) */
    Expr **el;                /* row-major elements; NULL for a scalar */
    Expr *s;                  /* the scalar (nd = 0) */
    const char *str;          /* a string value (n = 0), else NULL */
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
    Def *sdef;                /* a struct-typed function argument: its struct */
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
    int cstate;           /* structural evaluation: 0 not yet, 1 busy, 2 done, 3 failed */
    Val *cval;            /* structural value when cstate == 2 */
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
} Deferred;

typedef struct Flattener {
    Program *prog;
    Arena *arena;
    ExprCtx *ctx;
    FlatModel *m;
    Inst *top;
    Vec(Elem *) var_elems;  /* flat variable index -> element */
    Vec(uint32_t) var_elem_off; /* flat variable index -> offset inside its element */
    Sym s_der, s_time, s_pi, s_pi_u, s_ifelse, s_Real, s_Integer, s_Boolean, s_String;
    Expr **leaf;            /* flat variable -> its EXPR_VAR leaf (cache) */
    uint32_t nleaf;
    Env *env;               /* current loop indices / function locals */
    int const_mode;         /* > 0: parameters evaluate to their values */
    uint32_t end_val;       /* value of `end` in the current subscript */
    int fn_depth;           /* nested function inlining depth */
    Library *fn_lib;        /* library of the function being inlined */
    Vec(struct Deferred) deferred; /* relations after the connects (instream needs the sets) */
    /* connection sets: union-find over keys 2*var + side (0 inside, 1 outside) */
    uint32_t nkeyvars;          /* variables that have keys (those of the instance tree) */
    HashMap aux_der;            /* var + 1 -> helper variable index + 1 for der(der(var)) */
    uint32_t *uf;
    Span *key_span;
    const char **key_origin;
    unsigned char *key_used;
    unsigned char *var_defined; /* inputs given an equation outside their owner */
    uint32_t *set_start, *set_count, *set_members; /* keys bucketed by root (after pass 0) */
} Flattener;

/* instance.c */
Inst *inst_build_top(Flattener *F, Def *def);
Inst *inst_build_under(Flattener *F, Def *def, PendingVec *mods);
Elem *inst_elem(Inst *inst, Sym name);
const char *inst_child_path(Flattener *F, Inst *parent, Sym name);
AstNode *mod_from_arg(Flattener *F, AstNode *arg);

/* values.c */
bool resolve_ref(Flattener *F, Inst *scope, AstNode *e, bool report, Ref *out);
Expr *var_leaf(Flattener *F, uint32_t v);
bool tr_val(Flattener *F, Inst *scope, AstNode *e, Val *out);
Expr *tr_expr(Flattener *F, Inst *scope, AstNode *e);
bool const_val(Flattener *F, Inst *scope, AstNode *e, Val *out);  /* structural */
bool const_int(Flattener *F, Inst *scope, AstNode *e, int64_t *out);
bool elem_const(Flattener *F, Elem *el, Val *out);
Val val_scalar(Expr *e);
Val val_new(Flattener *F, uint8_t nd, const uint32_t *dims);
Env *env_push(Flattener *F, Env *next, Sym name, Val v);
Def *enum_of_elem(Flattener *F, Elem *el);
bool struct_field_slice(Flattener *F, Def *sd, Sym field, uint32_t *off, uint32_t *n, Def **sub, AstNode *at);
int enum_case_index(Def *en, Sym name);

/* builtins.c */
bool tr_builtin(Flattener *F, Inst *scope, AstNode *call, Sym name, Val *out, bool *handled);
bool val_matmul(Flattener *F, Val a, Val b, AstNode *at, Val *out);

/* functions.c */
bool tr_function_call(Flattener *F, Inst *scope, AstNode *call, Def *fn, Val *out);

/* equations.c */
void add_eq(Flattener *F, FlatEqKind k, Expr *l, Expr *r, const char *origin, Span sp);
void flatten_bindings(Flattener *F);
void flatten_relations(Flattener *F, Inst *inst);
void flatten_deferred(Flattener *F);

/* connect.c */
void connect_members(Flattener *F, Inst *inst, AstNode *r);
void flatten_connections(Flattener *F);
void connect_prepare_sets(Flattener *F);
bool tr_instream(Flattener *F, Inst *scope, AstNode *call, bool actual, Val *out);

/* flatten.c */
FlatModel *flatten_model_of(Flattener *F, Def *d, PendingVec *mods);

/* analysis.c */
FlatModel *flatten_analysis(Flattener *F, Def *d);

#endif
