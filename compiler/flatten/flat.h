/*
 * flat.h -- the flat model: scalar variables and equations with origins.
 *
 * flatten() turns one component of a Program into a FlatModel: the instance
 * tree is expanded (extends, modifiers, subcomponents), connections become
 * equations, and every name becomes a dotted path (`r.p.v`).  Expressions are
 * Expr DAGs over EXPR_VAR(i) (flat variable i, parameters included),
 * EXPR_DER(i), EXPR_TIME and constants.
 *
 * Every equation keeps its origin (instance path + source span) so later
 * phases can point at the modeler's line.
 */
#ifndef DYADC_FLAT_H
#define DYADC_FLAT_H

#include "expr.h"
#include "sema.h"

typedef enum {
    FV_VARIABLE,        /* continuous unknown (state candidate or algebraic) */
    FV_PARAMETER,       /* fixed during a run, overridable with -p */
    FV_PARAM_MISSING,   /* parameter with value `missing`: solved at init */
    FV_CONSTANT         /* `constant` or structural: folded */
} FlatVarKind;

typedef enum { FC_NONE, FC_POTENTIAL, FC_FLOW, FC_STREAM, FC_INPUT, FC_OUTPUT } FlatConn;

typedef struct FlatVar {
    const char *name;      /* dotted instance path */
    FlatVarKind kind;
    FlatConn conn;         /* connector field qualifier, if any */
    bool is_final;         /* `final` parameter */
    Expr *value;           /* parameter default (over VAR of parameters), or NULL */
    Expr *guess;           /* guess value (over parameters), or NULL */
    const char *units;     /* NULL if none */
    const char *doc;       /* the declaration's docstring, NULL if none */
    double min, max;       /* -inf/+inf when not given */
    int state_priority;    /* 0 when not given */
    bool top_conn;         /* a connector field of the flattened component
                              itself (balance rule: its flows and inputs are
                              given from outside) */
    Span span;             /* declaration */
} FlatVar;

typedef enum { FE_NORMAL, FE_INITIAL } FlatEqKind;

typedef struct FlatEq {
    FlatEqKind kind;
    Expr *lhs, *rhs;       /* lhs = rhs */
    const char *origin;    /* instance path where it was written ("" = top) */
    Span span;             /* the relation in the source */
} FlatEq;

typedef struct FlatAssert {
    Expr *cond;
    const char *message;
    Span span;
} FlatAssert;

/* Simulation settings of an analysis (`analysis X extends TransientAnalysis(...)`) */
typedef struct FlatSettings {
    bool has;              /* the model was flattened from an analysis */
    double start, stop;    /* time span */
    double interval;       /* `saveat`: output interval, 0 = every step */
    double rtol, atol;     /* `reltol`, `abstol` */
    double dtmax;          /* 0 = unbounded */
    uint32_t ntstops;
    double *tstops;
    const char *alg;       /* `alg`, informative */
} FlatSettings;

typedef struct FlatModel {
    ExprCtx *ctx;
    const char *name;      /* qualified name of the flattened component */
    Vec(FlatVar) vars;
    Vec(FlatEq) eqs;
    Vec(FlatAssert) asserts;
    FlatSettings settings; /* from an analysis; settings.has false otherwise */
} FlatModel;

/* Flatten component (or analysis) `d`.  Errors go through diag_*; returns
 * NULL if any.  A parameter without a value stays free (value NULL): it is
 * given at run time (-p), and the runtime refuses to start without it. */
FlatModel *flatten(Program *p, Def *d, ExprCtx *ctx);

/* Balance: equations vs unknowns, where the flows and inputs of the
 * component's own connectors count as given (Modelica's rule for a
 * component used inside others).  When unbalanced, reports by how much at
 * `d` and lists the candidates (variables in no equation, or the
 * equations) with their locations.  Returns true when balanced. */
bool flat_check_balance(const FlatModel *m, Def *d);

/* Deterministic dump: variables with kinds and attributes, then equations
 * with their origins. */
void flat_dump(FILE *out, const FlatModel *m);

/* Print an expression of the flat model with dotted names. */
void flat_print_expr(FILE *out, const FlatModel *m, const Expr *e);

/* Units (units_check.c, docs/UNITS.md): warnings, errors if as_error; returns how many. */
unsigned flat_check_units(const FlatModel *m, bool as_error);

#endif
