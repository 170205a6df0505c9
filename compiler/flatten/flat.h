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
 *
 * Arrays (docs/ARCHITECTURE.md, "Arrays: array-preserving compilation"):
 * variables stay one FlatVar per scalar (x[1] .. x[n] consecutive,
 * row-major), and FlatModel.arrays gives the shape of every declared array
 * variable.  An equation with a domain (FlatEq.dom != NULL) is a template:
 * it stands for one scalar equation per point of its iteration box, the
 * template with EXPR_IDX(k) = lo[k] + i_k, over EXPR_AT leaves whose index
 * is affine in the IDX.  Consecutive templates with the same dom pointer
 * are the body of one loop: scalarized instance-major (instance 0 of each,
 * then instance 1 of each, ...), the order the scalar path writes them in.
 * Code that walks `eqs` handles templates (flat_eq_count, the instance
 * helpers below) or calls flat_scalarize first.  After the structure
 * entry (flat_scalarize_lazy) an instance of a regular equation may have
 * no sides yet: read them through flat_eq_get.
 *
 * Clocks (docs/LANGUAGE.md, "Clocks"): after clock inference every variable
 * is continuous (clock 0) or on one clock (1 + index into `clocks`).  A
 * clocked variable has kind FV_DISCRETE and is computed by the equations of
 * its clock's partition (FE_CLOCKED, FE_SAMPLE); the continuous equations
 * never mention it.  The clocked world reaches the continuous one only
 * through FV_HOLD variables (the value of a clocked variable held since its
 * last tick) and is read from it only by FE_SAMPLE equations.  Previous
 * values `x@(clk-k)` are FV_HISTORY variables.
 */
#ifndef DYADC_FLAT_H
#define DYADC_FLAT_H

#include "expr.h"
#include "sema.h"

typedef enum {
    FV_VARIABLE,        /* continuous unknown (state candidate or algebraic) */
    FV_PARAMETER,       /* fixed during a run, overridable with -p */
    FV_PARAM_MISSING,   /* parameter with value `missing`: solved at init */
    FV_CONSTANT,        /* `constant` or structural: folded */
    FV_INPUT,           /* an input of the flattened component's own connectors
                           that no equation computes: given from outside while
                           it runs (dyadc run --input, an FMI input) */
    /* clocks: known between ticks, changed only at the ticks of `clock` */
    FV_DISCRETE,        /* clocked variable: an unknown of its clock's partition;
                           `value` = its value before the first tick */
    FV_HISTORY,         /* `of@(clk-lag)`; `value` = its value at the first tick */
    FV_HOLD,            /* `of` held since its last tick (zero-order hold);
                           `value` = its value before the first tick */
    FV_INTERVAL         /* SampleTime(): time since the previous tick of `clock` */
} FlatVarKind;

/* a clocked-world kind: a value the runtime keeps between ticks */
static inline bool flat_kind_is_discrete(FlatVarKind k) { return k >= FV_DISCRETE; }

typedef enum { FC_NONE, FC_POTENTIAL, FC_FLOW, FC_STREAM, FC_INPUT, FC_OUTPUT } FlatConn;

/* What few variables have (a guess, a docstring, bounds, a state priority,
 * a clocked variable's origin), kept beside the variables (FlatVar.attr):
 * most variables have none, and the elements of one declaration share
 * one entry until an element gets a value of its own (flat_attr_set). */
typedef struct FlatVarAttr {
    Expr *guess;           /* guess value (over parameters), or NULL */
    const char *doc;       /* the declaration's docstring, NULL if none */
    double min, max;       /* -inf/+inf when not given */
    int state_priority;    /* 0 when not given */
    uint32_t of;           /* FV_HISTORY, FV_HOLD: the clocked variable */
    uint32_t lag;          /* FV_HISTORY: k of `of@(clk-k)` */
    uint32_t owner;        /* 1 + the one variable it belongs to; 0: shared */
} FlatVarAttr;

/* One scalar variable: 48 bytes (a million of them for a loop over a
 * million elements). */
typedef struct FlatVar {
    const char *name;      /* dotted instance path */
    Expr *value;           /* parameter default (over VAR of parameters), or NULL */
    const char *units;     /* NULL if none */
    Span span;             /* declaration */
    uint32_t clock;        /* 0: continuous; else 1 + index into FlatModel.clocks */
    uint32_t attr;         /* 1 + index into FlatModel.attrs; 0: none (flat_attr) */
    uint8_t kind;          /* FlatVarKind */
    uint8_t conn;          /* FlatConn: connector field qualifier, if any */
    bool is_final;         /* `final` parameter */
    bool top_conn;         /* a connector field of the flattened component
                              itself (balance rule: its flows and inputs are
                              given from outside) */
} FlatVar;

typedef enum {
    FE_NORMAL,             /* continuous equation */
    FE_INITIAL,            /* `initial` relation (continuous initialization) */
    FE_CLOCKED,            /* equation of the partition of `clock` */
    FE_SAMPLE              /* lhs (a variable of `clock`) = rhs (over continuous
                              variables) read at each tick */
} FlatEqKind;

/* The iteration box of a template: IDX(k) runs over lo[k] .. lo[k]+n[k]-1
 * (unit stride), the last dimension fastest; instance number
 * ((i0 n1 + i1) n2 + i2) with 0 <= ik < n[k]. */
typedef struct FlatDom {
    uint8_t nd;            /* 1..EXPR_MAXIDX */
    int64_t lo[EXPR_MAXIDX];
    uint32_t n[EXPR_MAXIDX]; /* n[k] = 1 for k >= nd */
    uint64_t count;        /* n[0] n[1] n[2] */
    const struct FlatSplit *split; /* a part of a split loop box, else NULL */
    uint32_t part;         /* ... its number there */
} FlatDom;

/* A loop box split where conditions on its indices change (`i > 1`,
 * `i == N`): the product of intervals per dimension, each part a box in
 * which every such condition is constant (docs/ARCHITECTURE.md, "Arrays",
 * "Split boxes").  The parts' templates follow each other in `eqs` (part 0's
 * loop body, then part 1's, ...); they scalarize in the order of the whole
 * box, each point by the body of the part it lies in. */
typedef struct FlatSplit {
    FlatDom whole;         /* the loop's box */
    uint8_t nint[EXPR_MAXIDX]; /* intervals per dimension (1 for k >= nd) */
    const int64_t *start[EXPR_MAXIDX]; /* their first values, ascending
                              (start[k][0] = whole.lo[k]) */
    uint32_t nparts;       /* nint[0] nint[1] nint[2] */
    const FlatDom *parts;  /* the part boxes, the last dimension's interval
                              fastest */
} FlatSplit;

/* The shape of a declared array variable: element (s1, .., s_nd) (1-based)
 * is flat variable first + row-major offset. */
typedef struct FlatArray {
    const char *name;      /* dotted path of the array (`ladder.v`) */
    uint32_t first;        /* its first flat variable */
    uint32_t n;            /* number of elements */
    uint8_t nd;            /* 1..3 (arrays of more dimensions are not listed) */
    uint32_t dims[EXPR_MAXIDX];
} FlatArray;

typedef struct FlatEq {   /* 72 bytes, pointers first (no padding) */
    const FlatDom *dom;    /* NULL: a scalar equation; else a template */
    Expr *lhs, *rhs;       /* lhs = rhs */
    const char *origin;    /* instance path where it was written ("" = top);
                              for an override, where it came from ("--initial") */
    const struct FlatEq *tmpl; /* an instance of this template (flat_scalarize_lazy),
                              else NULL */
    Span span;             /* the relation in the source (none for --initial) */
    uint32_t inst;         /* tmpl: the instance number */
    uint32_t clock;        /* FE_CLOCKED, FE_SAMPLE: 1 + index into clocks */
    uint32_t rooted;       /* inside flatten only (0 once it returns): written
                              in a branch of `if rooted(x.R)`, 1 + 2 * its index
                              + (0 then, 1 else); the orientation pass keeps the
                              branch the spanning tree chooses (docs/LANGUAGE.md) */
    FlatEqKind kind;
    bool is_override;      /* FE_INITIAL set from outside (--initial, a test
                              case): replaces the model's own initial values of
                              the same variable (aliases included) */
} FlatEq;

/* an equation that determines an unknown (balance, counts) */
static inline bool flat_eq_is_regular(FlatEqKind k) { return k != FE_INITIAL; }
/* an unknown of the continuous system or of a clock partition */
static inline bool flat_kind_is_unknown(FlatVarKind k) { return k == FV_VARIABLE || k == FV_DISCRETE; }

typedef enum { FCLK_PERIODIC, FCLK_ZERO_CROSSING } FlatClockKind;

/* A clock, defined by a relation `clk = periodic_clock(dt, offset)` or
 * `clk = zero_crossing_clock(u)` of a component with `@[output clk]`. */
typedef struct FlatClock {
    FlatClockKind kind;
    const char *name;      /* instance path of the defining component + `.clk` */
    Expr *period, *offset; /* FCLK_PERIODIC: over parameters */
    Expr *signal;          /* FCLK_ZERO_CROSSING: over continuous variables */
    Span span;             /* the defining relation */
} FlatClock;

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
    Vec(FlatVarAttr) attrs; /* the variables' rare attributes (FlatVar.attr) */
    Vec(FlatEq) eqs;
    Vec(FlatArray) arrays; /* shapes of declared array variables, by first */
    Vec(FlatAssert) asserts;
    Vec(FlatClock) clocks;
    FlatSettings settings; /* from an analysis; settings.has false otherwise */
    uint32_t redundant;    /* entries of top-level connector matrices beyond their
                              degrees of freedom (Frame3D.R: 9 entries, 3 degrees
                              of freedom) that the component does not compute: the
                              balance rule does not count them as unknowns */
} FlatModel;

/* ---------- rare attributes (flatten.c) ---------- */

/* The attributes of v (the defaults when it has none: no guess, no doc,
 * min -inf, max +inf, priority 0). */
extern const FlatVarAttr flat_attr_none;
static inline const FlatVarAttr *flat_attr(const FlatModel *m, const FlatVar *v) {
    return v->attr ? &m->attrs.data[v->attr - 1] : &flat_attr_none;
}
/* Variable v's own attributes, to change (a copy of shared ones);
 * invalidated by the next call. */
FlatVarAttr *flat_attr_set(FlatModel *m, uint32_t v);
/* An entry with doc (NULL: none) to share among the elements of a
 * declaration: its attr value, 0 when doc is NULL. */
uint32_t flat_attr_shared(FlatModel *m, const char *doc);

/* ---------- templates (scalarize.c) ---------- */

/* Scalar equations q stands for: 1, or its domain's count. */
static inline uint64_t flat_eq_count(const FlatEq *q) { return q->dom ? q->dom->count : 1; }
/* The induction values iv[0..2] of instance `inst` of dom. */
void flat_dom_point(const FlatDom *dom, uint64_t inst, int64_t *iv);
/* The flat variable an indexed leaf (EXPR_AT of VAR or DER) or a plain
 * VAR/DER leaf reads at induction values iv. */
uint32_t flat_leaf_var(const Expr *leaf, const int64_t *iv);
/* Instance `inst` of template q as a scalar equation (q itself when scalar),
 * built with the ordinary constructors: the equation the scalar path writes. */
FlatEq flat_scalarize_eq(FlatModel *m, const FlatEq *q, uint64_t inst);
/* Every template of m replaced by its scalar equations, in the scalar
 * path's order (`--scalarize`; the structure phase's entry).  Linear in
 * the scalar equations. */
void flat_scalarize(FlatModel *m);
/* The same, but an instance of a regular equation (FE_NORMAL) keeps its
 * template and instance number (tmpl, inst) and gets its sides (lhs, rhs)
 * only from flat_eq_get: the structure phase builds what it needs of an
 * instance from the template (structure/templates.c). */
void flat_scalarize_lazy(FlatModel *m);
/* Equation i of m with its sides built (an instance's on first use). */
FlatEq *flat_eq_get(FlatModel *m, uint32_t i);
/* `--scalarize`: flatten() forms no templates, it translates every `for`
 * iteration (the scalar path, the reference the array path is compared
 * with: its equations are what the templates' instances must be). */
void flat_set_scalarize(bool on);
/* Does m hold any template? */
bool flat_has_templates(const FlatModel *m);
/* The array whose elements include flat variable v, or NULL (binary search). */
const FlatArray *flat_array_of(const FlatModel *m, uint32_t v);

/* The component's own inputs (not probes `u = sub.y`) become FV_INPUT when
 * the equations leave them to its user (balanced with them given, not
 * with them as unknowns); flatten calls it. */
void flat_mark_inputs(FlatModel *m);

/* Flatten component (or analysis) `d`.  Errors go through diag_*; returns
 * NULL if any.  The FlatModel and what it points to live in ctx's arena
 * and the interner: nothing points into the Program or its ASTs, which the
 * caller may free afterwards (the driver does).  A parameter without a value stays free (value NULL): it is
 * given at run time (-p), and the runtime refuses to start without it. */
FlatModel *flatten(Program *p, Def *d, ExprCtx *ctx);

/* The budget of structural work per flatten: array and range elements,
 * `for` and comprehension iterations, instances.  Past it flatten stops
 * with one error naming the limit and the option that raises it
 * (`--max-structural-work N`), so compile time and memory stay bounded on
 * any input.  The default allows models far beyond the benchmarks (the
 * 5,000-section line: ~10^5; bench/flatten_gen.sh 1000000: ~4 x 10^6).  On
 * hostile input the budget bounds a compile to ~1 GB and ~10 s. */
#define FLAT_WORK_DEFAULT 10000000ull
void flat_set_work_limit(uint64_t n);

/* `initial NAME = value` from outside the model (--initial, a test case's
 * `initial` map), as an override (FlatEq.is_override).  NAME is any
 * variable of m: a state, an algebraic variable, an alias, a connector
 * variable.  False, with an error at `at` naming the nearest variable, when
 * NAME is none. */
bool flat_add_initial(FlatModel *m, const char *name, double value, Span at, const char *origin);

/* Balance: equations vs unknowns, where the flows and inputs of the
 * component's own connectors count as given (Modelica's rule for a
 * component used inside others).  When unbalanced, reports by how much at
 * `d` and lists the candidates (variables in no equation, or the
 * equations) with their locations.  Returns true when balanced.
 * `as_part`: `d` is checked as a part of other models (`dyadc check`), so a
 * shortfall of equations whose unknowns all appear in equations is only a
 * warning: Dyad lets the user of a component write equations for its
 * variables (the length-constraint joints leave `r_a`, `r_b` to their
 * assembly). */
bool flat_check_balance(const FlatModel *m, Def *d, bool as_part);

/* Deterministic dump: variables with kinds and attributes, then equations
 * with their origins. */
void flat_dump(FILE *out, const FlatModel *m);

/* Structural parameters and constants are leaves of the flat model (their
 * units stay checkable); this replaces every such leaf whose value is a
 * constant by that constant, in equations, parameter values, guesses and
 * assertions, so the structure phase sees their zeros.  structure() calls it
 * first.  Linear in the size of the model. */
void flat_fold_constants(FlatModel *m);

/* Print an expression of the flat model with dotted names. */
void flat_print_expr(FILE *out, const FlatModel *m, const Expr *e);
/* The same for an expression of a template over `dom` (indexed leaves as
 * `x[i1 + 1]`); dom NULL: as flat_print_expr. */
void flat_print_expr_in(FILE *out, const FlatModel *m, const FlatDom *dom, const Expr *e);

/* Units (units_check.c, docs/UNITS.md): warnings, errors if as_error; returns how many. */
unsigned flat_check_units(const FlatModel *m, bool as_error);

#endif
