/* flatten_internal.h -- shared by the files of compiler/flatten only.
 *
 * The instance tree: an Inst per component/connector instance, holding its
 * elements (variables, parameters, sub-instances) by name.  Every value that
 * comes from a modifier remembers the instance it must be evaluated in
 * (`Binding.scope`): `Resistor(R = R1)` evaluates `R1` in the parent. */
#ifndef DYADC_FLATTEN_INTERNAL_H
#define DYADC_FLATTEN_INTERNAL_H

#include "flat.h"

typedef struct Inst Inst;

typedef struct Binding {
    AstNode *expr;   /* expression, AST_MISSING, or NULL */
    Inst *scope;     /* where names in expr resolve; NULL = constants only */
    bool is_final;
} Binding;

typedef struct Pending {  /* a modification waiting to be applied */
    AstNode *mod;         /* AST_MOD */
    Inst *scope;
} Pending;
typedef Vec(Pending) PendingVec;

typedef enum { ELEM_VAR, ELEM_INST } ElemKind;

typedef struct Elem {
    ElemKind kind;
    Sym name;
    AstNode *decl;        /* AST_DECL or AST_INSTANCE */
    Inst *owner;
    /* ELEM_VAR */
    VarKind vkind;        /* parameter, variable, potential, flow, input, ... */
    bool is_structural;
    Binding value;        /* `= expr` */
    Binding initial;      /* `initial expr` */
    PendingVec attrs;     /* attribute modifications (units, guess, min, ...) */
    AstNode *type;        /* AST_TYPE of the declaration */
    Library *type_lib;    /* library where `type` is resolved */
    uint32_t var;         /* flat variable index */
    /* ELEM_INST */
    Def *def;             /* the component or connector */
    PendingVec mods;      /* modifications for the child, in order */
    Inst *child;
} Elem;

struct Inst {
    const char *path;     /* dotted path; "" for the top */
    Def *def;
    Inst *parent;
    Vec(Elem *) elems;    /* declaration order (inherited first) */
    HashMap by_name;      /* Sym -> Elem* */
    Vec(AstNode *) relations; /* own and inherited, evaluated in this scope */
    bool is_connector;
};

typedef struct Flattener {
    Program *prog;
    Arena *arena;
    ExprCtx *ctx;
    FlatModel *m;
    Vec(Elem *) var_elems;  /* flat variable index -> element */
    Sym s_der, s_time, s_pi, s_pi_u, s_ifelse, s_Real, s_Integer, s_Boolean, s_String;
    /* connection sets: union-find over keys 2*var + side (0 inside, 1 outside) */
    uint32_t *uf;
    Span *key_span;
    const char **key_origin;
    unsigned char *key_used;
} Flattener;

/* instance.c */
Inst *inst_build_top(Flattener *F, Def *def);
Elem *inst_elem(Inst *inst, Sym name);
const char *inst_child_path(Flattener *F, Inst *parent, Sym name);

/* equations.c */
Expr *tr_expr(Flattener *F, Inst *scope, AstNode *e);
void flatten_bindings(Flattener *F);
void flatten_relations(Flattener *F, Inst *inst);
void flatten_connections(Flattener *F);

#endif
