/* structure_internal.h -- shared by the files of compiler/structure only.
 *
 * The structure phase works on its own variable table, the "structural
 * variables" (SVar): index i < nflat is flat variable i itself (order 0;
 * parameters included, they are simply never unknowns); indexes above are
 * derivatives x^(k), k >= 1, created on demand (der(x) from the source, and
 * the higher derivatives index reduction needs).  Equations (SEq) are
 * residuals `0 = res` over EXPR_VAR(sv) leaves, TIME and constants; index
 * reduction appends their time derivatives.  Only at the very end are
 * VAR(sv) leaves lowered to the codegen leaves Y/YP/P/Z.
 */
#ifndef DYADC_STRUCTURE_INTERNAL_H
#define DYADC_STRUCTURE_INTERNAL_H

#include "structure.h"

/* role of a structural variable after index reduction and BLT */
typedef enum {
    SR_NONE,      /* parameter, alias-eliminated, or unused */
    SR_STATE,     /* integrator unknown with y_is_diff = 1 */
    SR_DERIV,     /* the derivative of a state: y' of `prim`'s slot */
    SR_ALG,       /* algebraic integrator unknown (incl. dummy derivatives) */
    SR_ASSIGNED   /* computed by an explicit assignment (`value`) */
} SvRole;

/* 40 bytes: one per flat variable and per derivative (1.5 million for
 * the RC ladder of 10^6 equations), so what few have is kept aside: the
 * lowered values of assigned ones (St.lows), the state-set states'
 * coordinates (St.set_state) */
typedef struct {
    Expr *value;       /* SR_ASSIGNED: value over non-assigned svs; SR_DERIV:
                          the explicit value later blocks read instead */
    uint32_t base;     /* flat variable */
    uint32_t order;    /* derivative order */
    int32_t der;       /* sv of d/dt of this one, or -1 */
    int32_t prim;      /* sv this is d/dt of, or -1 (order 0) */
    int32_t yp_of;     /* SR_DERIV: the state sv whose y' this is */
    int32_t slot;      /* y slot (SR_STATE, SR_ALG), else -1 */
    uint32_t low;      /* 1 + index into St.lows (its lowered value), 0 when none yet */
    bool dummy;        /* selected as a dummy derivative */
    uint8_t role;      /* SvRole */
    bool run_value;    /* `value` is its run's representative's renamed, built when
                          asked (st_sv_value, runs.c) */
} SVar;

typedef struct { Expr *low[2]; } StLow; /* a lowered value (normal, init) */

/* has v a value (assigned, or an explicit state derivative)?  Read it
 * through st_sv_value: it may not be built yet */
static inline bool st_has_value(const SVar *v) { return v->value || v->run_value; }

/* 40 bytes, pointers first (no padding) */
typedef struct {
    Expr *res;         /* 0 = res, over VAR(sv); NULL until asked for (st_eq_res)
                          for an instance of a uniform template */
    uint32_t *inc;     /* unknown svs in res (distinct) */
    uint32_t ninc;
    int32_t flat;      /* flat equation it comes from (after differentiation too) */
    uint32_t order;    /* times differentiated */
    int32_t diff;      /* equation index of its derivative, or -1 */
    int32_t prim;      /* equation it is the derivative of, or -1 */
    uint32_t set;      /* 1 + the state set this equation defines a state of, else 0 */
} SEq;

/* one BLT block in sv form (the System gets it as a SysBlock) */
typedef struct {
    uint8_t kind;      /* SysBlockKind */
    uint32_t size;     /* equations = unknowns */
    uint32_t first;    /* into St.bvars / St.beqs */
    uint32_t ntorn;    /* iteration (tearing) variables kept as IDA unknowns */
    uint32_t tfirst;   /* into St.torn */
    uint32_t row;      /* size-1 residual blocks: its residual row (resid_sv[row],
                          st_block_res: 24 bytes a block, a million of them) */
} Block;

/* where a relation was written: its flat form and the equation's span */
typedef struct {
    Expr *flat;
    Span span;
} StRelSrc;

/* a coefficient an equation is divided by, to be checked nonzero once the
 * parameters are known (solve.c) */
typedef struct {
    Expr *coef;        /* over parameters only (VAR(param) or P leaves) */
    Expr *var;         /* the leaf solved for (VAR(sv), Y or YP) */
    int32_t flat;      /* flat equation, -1 when none */
} StCoef;

/* a state set (stateset.c): `ncand` candidate columns (first derivatives
 * c_i of the variables prim[i]) of one selection stage, of which the
 * runtime picks the dummies; the others' primitives are the states */
typedef struct {
    uint32_t *rows, nrows;      /* the stage component's equations */
    uint32_t *fixed, nfixed;    /* its dummies chosen before the set, pivot order */
    uint32_t *cand, ncand;      /* candidate svs c_i */
    uint32_t *prim;             /* [ncand] their primitives x_i */
    uint32_t *init, nstates;    /* candidate index of each state at the start */
    uint32_t *state;            /* [nstates] the set-state svs s_j */
    uint32_t mode_first;        /* mode (event) of state j: mode_first + j */
} StSet;

/* a regular equation template and what is done once for it (templates.c) */
#define ST_TMPL_MAX_LEAVES 16
typedef struct StTmplPat StTmplPat;
typedef struct {
    const FlatEq *q;   /* the template */
    bool uniform;      /* its instances are it with the leaves renamed */
    Expr **leaves;     /* [nleaves] distinct VAR/DER leaves, plain or indexed */
    ExprAffine *aff;   /* [nleaves] the flat variable each reads, over the induction values */
    uint32_t nleaves, nder;
    Expr *res;         /* lhs - rhs of the template (uniform only) */
    /* alias elimination (alias.c): a uniform instance classified as no
     * alias, and which of its leaves are unknowns (bit i: leaves[i]) */
    bool no_alias;
    uint32_t no_alias_unknowns;
    /* origins.c: the template's operations that may fail (-1: not scanned) */
    int32_t nrisky;
    Expr *risky;       /* the one when nrisky == 1 */
    StTmplPat *pat_last; /* the leaf pattern of the last instance (st_tmpl_instance) */
} StTmpl;

/* runs.c: a single BLT block as an instance of a run (one key: the same
 * computation up to an order-preserving renaming of its variables) */
#define ST_RUN_MAX_POS 64  /* positions: template leaves and the values' variables */
_Static_assert(ST_RUN_MAX_POS <= SYS_LOOP_MAX_ENT, "a loop item's entries per row are at most its positions");
#define ST_RUN_MAX_KEY 256
typedef struct StRunEnt StRunEnt;
typedef struct StRunRec StRunRec;
typedef struct StRunRow StRunRow;
typedef struct {
    const StTmpl *k;
    uint32_t e, v, jv;             /* equation, its unknown, v's leaf */
    uint32_t pos[ST_RUN_MAX_POS], cls[ST_RUN_MAX_POS], npos;
    uint32_t dist[ST_RUN_MAX_POS], nd; /* distinct variables of pos, ascending */
    uint32_t key[ST_RUN_MAX_KEY], nkey;
    uint64_t hash;
    StRunEnt *ent;                 /* the run's representative, or NULL */
} StRun;
/* a single block's outcome (blt.c) */
typedef struct {
    uint8_t kind;                  /* SB_ASSIGN, SB_STATE_DER or SB_IMPLICIT */
    Expr *x;                       /* the solution for v, or NULL */
    Expr *r;                       /* the residual row (not SB_ASSIGN) */
    Expr *coef;                    /* the parameter coefficient st_solve checks, or NULL */
    bool later;                    /* x and r are the run's representative's renamed,
                                      built when asked (st_sv_value, st_resid_sv) */
    bool has_x;                    /* later: there is a solution */
} StRunOut;

typedef Vec(SysLoop) SysLoopVec;
#define ST_LOOP_MIN 64     /* rows or entries of a loop item at least (runs.c) */

typedef struct {
    FlatModel *m;
    StructOptions opt;
    System *s;
    Arena *arena;
    ExprCtx *c;
    uint32_t nflat;
    Vec(SVar) sv;
    Vec(StLow) lows;   /* SVar.low: lowered values of assigned svs (normal, init) */
    HashMap set_state; /* sv + 1 -> (1 + its state set) << 32 | which of the set's
                          states, for the state-set states (stateset.c) */
    Vec(SEq) eq;
    uint32_t neq0;     /* equations before index reduction */
    int32_t *assign;   /* sv -> matched equation or -1 (grows with sv) */
    int32_t *match;    /* eq -> matched sv or -1 */
    uint32_t assign_cap, match_cap;
    Vec(Block) blocks;
    U32Vec bvars, beqs, torn;
    ExprVec resid_sv;  /* the residuals handed to IDA, in sv form (NULL: a run's row
                          not built yet, st_resid_sv) */
    U32Vec resid_eq;   /* the equation each residual comes from */
    double *startv;    /* sv -> numeric start (dummy selection) */
    unsigned char *natural;  /* flat var -> a model equation defines der(x)
                                with a constant coefficient (der(s) = v) */
    unsigned char *colconst; /* sv -> its Jacobian column in the current
                                selection stage is free of unknowns */
    /* slots */
    int32_t *pslot;    /* flat var -> p slot or -1 */
    int32_t *zslot;    /* y slot -> z index of y' (init system), -1 if none */
    uint32_t *pvar;    /* p slot -> flat var */
    bool to_init;      /* map to Z leaves (init system) instead of Y/YP/P */
    int32_t *pz;       /* p slot -> z index for missing parameters, -1 otherwise */
    int32_t *init_of;  /* y slot -> flat initial relation giving its value + 1, or 0 */
    Expr **alias;      /* flat var -> its value when eliminated as an alias, else NULL */
    Vec(StCoef) coef;  /* coefficient checks (solve.c) */
    Vec(StSet) sets;   /* state sets (stateset.c) */
    uint32_t nset_modes; /* their states: the first events */
    HashMap coef_seen; /* coefficient id + 1 -> already checked */
    unsigned char *eq_alias; /* flat eq -> 1 when consumed by alias elimination */
    /* relation origins, for the event names (events.c) */
    HashMap rel_src;   /* relation id (any level) -> StRelSrc */
    const Span *rel_span; /* while translating a flat equation: its span */
    HashMap tmpls;     /* template FlatEq pointer -> StTmpl (templates.c) */
    StTmpl *tmpl_last; /* the last one looked up */
    HashMap tmpl_pats; /* hash of (template, leaf ranks) -> StTmplPat chain (templates.c) */
    HashMap runs;      /* key hash -> StRunEnt chain (runs.c) */
    uint32_t nrun_ent;
    Vec(StRunRow *) run_rows; /* resid row -> its run, NULL for the others (runs.c) */
    Arena *run_arena;  /* their records (~60 bytes a row), given back once the
                          initialization system is built (st_run_rows_release) */
    SysLoopVec loops;  /* the System's loop items being built (runs.c, structure.c) */
    uint32_t *row_loop; /* [ny] k + 1: row of loops[k] (System.row_loop), 0: not (yet) */
    uint32_t *run_next; /* row -> the next row of its run, UINT32_MAX: none (runs.c) */
    StRunRec **run_rec; /* sv -> what its value-setting block leaves for readers (runs.c) */
    uint32_t nrun_rec;
    Arena *rec_arena;  /* the records (~30 bytes a value of a run), given back
                          with run_rec once nothing lowers a value
                          (st_run_recs_release) */
    /* Reused leaf lists (len reset by each user): a fresh vector per
     * equation left a million dead ones in the arena.  `leaves` is for
     * loops that call nothing that uses it again; `coef_leaves` only for
     * solve.c's coefficient test (st_solve runs while `leaves` may be live). */
    ExprVec leaves, coef_leaves;
} St;

static inline bool st_is_unknown(const St *t, uint32_t sv) {
    const SVar *v = &t->sv.data[sv];
    return t->m->vars.data[v->base].kind == FV_VARIABLE && !(v->order == 0 && t->alias[v->base]);
}

/* structure.c */
Expr *lower(St *t, Expr *e);            /* VAR(sv) -> Y/YP/P (Z when t->to_init) */
Expr *st_lower_leaf(St *t, uint32_t sv); /* VAR(sv)'s leaf (Y/YP/P), NULL when not a leaf */
/* the same as kind and index in *tmp, not made (not a node: for comparing
 * leaves on integers; a made one in the init system) */
Expr *st_lower_leaf_at(St *t, uint32_t sv, Expr *tmp);
/* the same on integers, without building the leaf: false when none */
bool st_lower_slot(St *t, uint32_t sv, uint32_t *kind, uint32_t *index);
Expr *st_to_sv(St *t, Expr *flat);      /* flat VAR/DER -> VAR(sv), aliases resolved */
Expr *st_to_sv_leaf(St *t, Expr *leaf); /* the same for one leaf */
void st_keep_relation(void *t, Expr *old, Expr *new_); /* ExprNodeWatch: origins */
uint32_t st_der(St *t, uint32_t sv);    /* d/dt of sv (created on demand) */
Expr *st_dt(St *t, Expr *e);            /* total time derivative in sv form */
void st_incidence(St *t, uint32_t e);   /* (re)compute eq[e].inc */
/* solve.c: the solvability rule; the solution of r = 0 for the leaf x, or
 * NULL when r may not be solved for x symbolically (flat: its equation) */
Expr *st_solve(St *t, Expr *r, Expr *x, int32_t flat);
/* the same, with *check = the parameter coefficient it asked to check
 * nonzero (NULL when none) */
Expr *st_solve_coef(St *t, Expr *r, Expr *x, int32_t flat, Expr **check);
void st_coef_check(St *t, Expr *a, Expr *x, int32_t flat); /* check a != 0 (once per a) */
bool st_varies(St *t, Expr *e);          /* e depends on an unknown, time or a mode */
/* templates.c: once per equation template; NULL when q is no instance of
 * a uniform template */
StTmpl *st_tmpl(St *t, const FlatEq *q);
static inline ExprKind st_tmpl_leaf_kind(const StTmpl *k, uint32_t i) {
    return k->leaves[i]->kind == EXPR_AT ? (ExprKind)k->leaves[i]->fn : (ExprKind)k->leaves[i]->kind;
}
/* var[i]: the flat variable leaves[i] reads in instance inst; false when
 * the instance is not uniform (two leaves of one kind read one variable) */
bool st_tmpl_leaves(St *t, const StTmpl *k, uint32_t inst, uint32_t *var);
/* the instance's residual in structural form (st_to_sv of lhs - rhs) */
Expr *st_tmpl_residual(St *t, const StTmpl *k, uint32_t inst, const uint32_t *var);
/* the structural variable of leaf j read at var when st_to_sv makes a
 * plain variable of it (created for a derivative), else -1 */
int64_t st_tmpl_leaf_sv(St *t, const StTmpl *k, uint32_t j, uint32_t var);
/* A uniform instance with plain leaves: its incidence in e from its
 * leaf pattern, its residual (e->res) left NULL except for the pattern's
 * first instance; false when the instance is not one (build it) */
bool st_tmpl_instance(St *t, const StTmpl *k, uint32_t inst, const uint32_t *var, SEq *e);
/* equation e's residual, built now when it was left to be built on demand */
Expr *st_eq_res(St *t, uint32_t e);
/* runs.c: the key of the single block (e, v), false when it is no
 * instance of a uniform template with plain leaves and writers of known
 * runs; the outcome renamed from the run's representative (false: none,
 * or the renaming failed); then record the outcome (applied: it came from
 * st_run_apply) for later blocks */
bool st_run_key(St *t, uint32_t e, uint32_t v, bool one_reader, StRun *r);
bool st_run_apply(St *t, const StRun *r, StRunOut *o);
void st_run_note(St *t, StRun *r, const StRunOut *o, bool applied);
/* Rows of a run: the lowered residual row `row` (rows asked in order):
 * the representative's lowered, another's as the representative's row
 * renamed, or NULL when it is not one (lower it); for the Jacobian, the
 * representative's row when row was so renamed and neither changed since
 * nor is in a loop item (else -1), a column of the
 * representative's row as the same column of `row`, and a derivative of
 * the representative's row renamed (*ok false when that fails) */
Expr *st_run_lower_row(St *t, uint32_t row);
int32_t st_run_jac_row(St *t, uint32_t row, Expr *const *resid);
int64_t st_run_jac_col(St *t, uint32_t row, uint32_t col);
Expr *st_run_jac_entry(St *t, uint32_t row, Expr *e, bool *ok);
/* st_run_loops_begin: row_loop and run_next, before the first st_run_loop.
 * A loop item from row `row` on (its Expr `res` from st_run_lower_row), a
 * box of rows of its run: the number of rows it covers (l filled, its rows
 * marked in row_loop as loop t->loops.len, their Jacobian left to
 * build_jacobian), or 1 (no loop: row stays scalar).  *scanned: the
 * consecutive rows from `row` on that shift alike; a loop starting inside
 * them would end where they end, so the caller tries next at row +
 * *scanned - 1 (linear). */
void st_run_loops_begin(St *t);
uint32_t st_run_loop(St *t, uint32_t row, Expr *res, SysLoop *l, uint32_t *scanned);
/* the lowered value of the assigned sv as its run's representative's
 * renamed, or NULL (lower it) */
Expr *st_run_lower_value(St *t, uint32_t sv);
/* A loop item of the values of svs[at], svs[at + 1], ... (n entries in all;
 * UINT32_MAX: an entry that is no run's value): the number of entries it
 * covers (l filled, l->row = at, the first entry's value lowered), or 1
 * (no loop).  *scanned as st_run_loop's. */
uint32_t st_run_value_loop(St *t, const uint32_t *svs, uint32_t n, uint32_t at, SysLoop *l, uint32_t *scanned);
/* What BLT leaves to be built on demand for the instances of a run: the
 * value of sv (assigned, or an explicit state derivative; NULL when none),
 * residual row r in sv form, the residual of single block b */
Expr *st_sv_value(St *t, uint32_t sv);
Expr *st_resid_sv(St *t, uint32_t r);   /* (not after st_run_rows_release) */
void st_run_rows_release(St *t);        /* the rows' records: the rows are built */
void st_run_recs_release(St *t);        /* the values' records: no value is asked for again */
Expr *st_block_res(St *t, const Block *b);
/* the lowered leaves of a renamed row's representative (from) and of the
 * row (to), from[i] -> to[i] (NULL both: a variable without a leaf, an
 * assigned one; `to` NULL for a row of a loop item: lower vto on
 * integers), and the variables they lower (vfrom[i] -> vto[i],
 * ascending); the representative's row, or -1 when st_run_jac_row gives
 * none.  The leaves of a loop item's row (to) are kinds and indexes, not
 * nodes (st_lower_leaf_at): compare them by their fields. */
typedef struct {
    Expr *const *from, *const *to;
    const uint32_t *vfrom, *vto;
    uint32_t n;
} StRunLeaves;
int32_t st_run_row_leaves(St *t, uint32_t row, Expr *const *resid, StRunLeaves *l);
/* initruns.c: the starting guesses of y' for the state derivatives of
 * runs (init.c's start_derivatives), once per run */
typedef struct StInitRuns StInitRuns;
StInitRuns *st_init_runs(St *t);
void st_init_runs_release(St *t, StInitRuns *r); /* its tables, once the init system is built */
bool st_init_run_start_yp(St *t, StInitRuns *r, uint32_t e, Expr **x);
void st_init_run_note_yp(St *t, StInitRuns *r, uint32_t e, Expr *x);
/* the residual row `row` lowered for the init system (t->to_init): its
 * representative's init row (rows[rep], lowered before) renamed, or
 * lowered here; for the init Jacobian, the representative's row when row
 * was so renamed (else -1), a column of the representative's row as the
 * same column of `row`, and a derivative renamed (*ok false when that
 * fails) */
Expr *st_init_run_row(St *t, StInitRuns *r, uint32_t row, Expr *const *rows);
int32_t st_init_run_jac_row(StInitRuns *r, uint32_t row);
int64_t st_init_run_jac_col(StInitRuns *r, uint32_t row, uint32_t col);
Expr *st_init_run_jac_entry(St *t, StInitRuns *r, uint32_t row, Expr *e, bool *ok);
/* partition.c: clocks and their partitions (after the continuous system and its events) */
void struct_build_clocks(St *t);
/* alias.c, init.c, events.c, origins.c */
void struct_alias(St *t);
void struct_build_init(St *t);
void struct_events(St *t);
void struct_origins(St *t);
/* matching.c: Hopcroft-Karp on a CSR graph (rows = equations, adj = columns) */
typedef struct {
    uint32_t nrows, ncols;
    uint32_t *ptr;     /* [nrows+1] */
    uint32_t *adj;     /* [ptr[nrows]] */
} StGraph;
uint32_t st_bip_match(Arena *a, const StGraph *g, int32_t *row_match, int32_t *col_match);
/* the same from the matching in row_match/col_match (rows matched stay matched) */
uint32_t st_bip_extend(Arena *a, const StGraph *g, int32_t *row_match, int32_t *col_match);
/* initblt.c: Tarjan's components of a graph (rows = nodes, adj = successors),
 * successors first; the initialization system's blocks from its matching */
uint32_t st_scc(Arena *a, const StGraph *g, uint32_t *order, uint32_t *ptr);
void st_init_blocks(St *t, const int32_t *rz);
/* ... over (eqs accepted by `use_eq`, unknown svs accepted by `use_var`) */
typedef bool (*StVarFilter)(St *t, uint32_t sv);
typedef bool (*StEqFilter)(St *t, uint32_t e);
uint32_t st_match(St *t, StEqFilter use_eq, StVarFilter use_var);
bool st_augment(St *t, uint32_t e, StVarFilter use_var, unsigned char *veq, unsigned char *vvar,
                U32Vec *ceq, U32Vec *cvar);
void st_grow_match(St *t);
/* pantelides.c: Pantelides, then struct_select_states */
bool struct_index_reduce(St *t);
void st_singular(St *t, U32Vec *eqs, U32Vec *vars, U32Vec *free, const char *why); /* located error */
/* statesel.c: dummy derivatives, state selection, roles */
bool struct_select_states(St *t);
/* stateset.c: dynamic state selection */
void st_add_set(St *t, const uint32_t *rows, uint32_t nrows, const uint32_t *fixed, uint32_t nfixed,
                const uint32_t *cand, uint32_t ncand, const bool *dummy);
void st_build_sets(St *t);                  /* states and equations of the sets */
/* the state set sv is a state of + 1 (and *j: which of its states), 0 if none */
uint32_t st_sv_set(const St *t, uint32_t sv, uint32_t *j);
const char *st_set_state_name(St *t, uint32_t sv);
void st_report_sets(St *t, FILE *out);
void st_set_events(St *t, Expr **zc, uint8_t *kind, const char **names);
void st_build_set_system(St *t);            /* System.sets */
void st_set_starts(St *t);                  /* start values of set states */
/* blt.c */
bool struct_blt(St *t);
/* dump.c */
void struct_report(St *t);
const char *st_sv_name(St *t, uint32_t sv);
void st_note_eq(St *t, uint32_t e, const char *what);
/* "<pre>lhs[ = rhs] (file:line)" for the runtime's messages; flat
 * expressions when sys is NULL, else over the System's slot names; capped */
const char *st_expr_text(St *t, const Expr *lhs, const System *sys, Span span);
const char *st_eq_text(St *t, uint32_t flat, const char *pre, const char *post);

#endif
