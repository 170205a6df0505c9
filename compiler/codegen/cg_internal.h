/*
 * cg_internal.h -- shared state of the codegen files (never included
 * outside compiler/codegen/).
 *
 * A Cg holds one LLVM module under construction.  Emission works on "items":
 * one item = one double stored into one slot of an output array, computed
 * from Expr(s).  An entry function (residual, jacobian, ...) is a list of
 * items cut into chunk functions of bounded size (Cg.chunk_cap expression
 * nodes); each chunk emits every DAG node once (memo keyed by cg_node,
 * reset per chunk by bumping a stamp).
 *
 * Invariants
 *   - Every function takes its arguments in a fixed order given by its
 *     CgFnSpec; leaves load from the argument of their role (CG_ARG_Y for
 *     EXPR_Y, ...), EXPR_TIME is the double argument CG_ARG_T.
 *   - No fast-math flags anywhere: plain IEEE fadd/fmul/fdiv.
 *   - Chunks are internal, noinline, nounwind; entry functions internal,
 *     nounwind; only `dyad_model` is exported.
 */
#ifndef DYADC_CG_INTERNAL_H
#define DYADC_CG_INTERNAL_H

#include <llvm-c/Core.h>
#include <llvm-c/TargetMachine.h>

#include "codegen.h"

/* argument roles of generated functions */
typedef enum {
    CG_ARG_T,      /* double t (or t0) */
    CG_ARG_Y,      /* double *y */
    CG_ARG_YP,     /* double *yp */
    CG_ARG_P,      /* double *p */
    CG_ARG_Z,      /* double *z */
    CG_ARG_CJ,     /* double cj */
    CG_ARG_GIVEN,  /* const unsigned char *given */
    CG_ARG_OUT,    /* double *r / vals / out / g */
    CG_ARG_TMP,    /* double *tmp: chunks only, pieces of oversized items */
    CG_ARG_COUNT
} CgArg;

/* what a generated function returns */
typedef enum {
    CG_RET_VOID,   /* void */
    CG_RET_STATUS, /* int: 0, or 1 if some stored value is NaN */
    CG_RET_ASSERT  /* int: 0, or 1 + index of the first item equal to 0/NaN */
} CgRet;

typedef struct CgFnSpec {
    const char *name;          /* entry function name; chunks get ".<k>" */
    CgRet ret;
    int nargs;
    CgArg args[6];             /* roles in C parameter order */
    uint32_t leaves;           /* CG_LEAF(kind) bits: leaves its Exprs may read */
    bool cold;                 /* called a few times per simulation (start,
                                  initialization): every chunk goes to the
                                  bulk module when there is one */
} CgFnSpec;

#define CG_LEAF(kind) (1u << (kind))

/* A loop item of the System (SysLoop) as emitted (cg_loop.c): `period`
 * consecutive items, each pointing to this, are one iteration of a nest of
 * sl->ndim loops (dimension 0 innermost, sl->dim_count[d] iterations
 * each); a leaf of the loop (sl->leaf[i]) is read at index + sum over d of
 * i_d * sl->stride[d * nleaf + i]; item r of iteration (i_0, i_1, i_2) is
 * stored at dest_index + sum over d of i_d * dest_step[d], or, with a
 * scatter table, at scatter[that] (its dest_index is r). */
typedef struct CgLoopItem {
    const SysLoop *sl;
    uint16_t period;
    int32_t dest_step[SYS_LOOP_MAX_DIM];
    LLVMValueRef scatter;      /* i32 table (a private global of the main module), or NULL */
} CgLoopItem;

/* One stored value: dest[dest_index] = a + cj*b.  a or b NULL = absent
 * term.  guard_given: store only where !given[dest_index] (param
 * defaults).  copy_arg >= 0: the value is arg[copy_arg][copy_index]
 * instead (init_finish).  loop: part of a loop item (above). */
typedef struct CgItem {
    Expr *a, *b;
    uint32_t dest_index;
    uint8_t dest_arg;          /* CgArg */
    uint8_t guard_given;
    int8_t copy_arg;           /* CgArg or -1 */
    uint32_t copy_index;
    const CgLoopItem *loop;    /* NULL, or the loop item it is part of */
} CgItem;

/* a name list whose pointer array dyad_names_init fills (cg_data.c) */
typedef struct CgNameList {
    LLVMValueRef array, blob;
    uint32_t n;
} CgNameList;

/* An entry function declared by cg_emit_function; its body is emitted by
 * cg_emit_functions once every function's items are known. */
typedef struct CgPending {
    CgFnSpec spec;
    const CgItem *items;
    uint32_t nitems;
    LLVMValueRef fn;
} CgPending;

typedef struct Cg {
    const System *sys;
    const CgOptions *opt;
    Arena *arena;              /* scratch for item lists and memo tables */
    LLVMContextRef ctx;
    LLVMModuleRef mod;
    LLVMModuleRef bulk;        /* NULL, or the module of the bulk chunks,
                                  compiled by the fast back end (cg_emit.c) */
    LLVMModuleRef cur_mod;     /* the module of the function being built */
    bool to_bulk;              /* chunks being emitted go to bulk */
    LLVMBuilderRef bld;
    LLVMTypeRef t_f64, t_i32, t_i8, t_i1, t_ptr;
    uint32_t chunk_cap;        /* node cap per chunk */
    bool big_endian;           /* the target's byte order (tables) */
    Vec(CgNameList) name_lists;

    /* Per-node tables are indexed by node number (cg_node): the nodes
     * reachable from the emitted items, numbered 1..nnodes before any
     * function is emitted (cg_emit_functions), not by Expr.id, which counts
     * every node ever created (3-4x as many). */
    uint32_t *node_of;         /* [expr_count] Expr.id -> node number, 0 = none */
    uint32_t nnodes;           /* tables below hold nnodes + 1 entries */
    Vec(CgPending) pending;    /* entry functions declared, bodies to emit */
    /* per-chunk memo */
    LLVMValueRef *memo;
    uint32_t *memo_stamp;      /* == stamp: memo valid in this chunk */
    uint32_t *count_stamp;     /* == stamp: already counted in this chunk */
    uint32_t stamp;
    Vec(Expr *) stack;         /* explicit DFS stack (deep DAGs) */

    LLVMValueRef args[CG_ARG_COUNT]; /* current function's arguments by role */
    uint32_t leaves;           /* current function's readable leaf kinds */
    const char *fn_name;       /* current entry function, for messages */
    int failed;                /* an internal error was reported */
    /* oversized items (cg_chunk.c): cut nodes are computed by "piece"
     * chunks into tmp[cut_slot[id]] and loaded from there by later chunks */
    int32_t *cut_slot;         /* [nnodes + 1] slot, valid while cut_gen_of[id] == cut_gen */
    uint32_t *cut_gen_of;      /* [nnodes + 1] */
    uint32_t *cut_size;        /* [nnodes + 1] planning: nodes below, cut children = 1 */
    uint32_t *cut_seen;        /* [nnodes + 1] planning visit stamp (== cut_gen) */
    uint32_t cut_gen;          /* bumped per oversized item */
    int32_t cut_limit;         /* cut nodes with slot < cut_limit are loaded from
                                  tmp (computed by an earlier piece); the others
                                  are computed where they are needed */
    /* loops (cg_loop.c): inside a loop chunk, leaf e is read at index
     * e->index + loop_stride[e->id] * loop_j when stride_stamp[id] == loop_gen */
    LLVMValueRef loop_j;       /* i32 iteration number, NULL outside loops */
    int32_t *loop_stride;      /* [nnodes + 1] */
    uint32_t *stride_stamp;    /* [nnodes + 1] */
    uint32_t loop_gen;
    /* nests (cg_loop.c): inside one, leaf e also moves by
     * nest_stride[id] * nest_j when nest_stamp[id] == nest_gen */
    LLVMValueRef nest_j;       /* i32 outer iteration number, NULL outside nests */
    int32_t *nest_stride;      /* [nnodes + 1] */
    uint32_t *nest_stamp;      /* [nnodes + 1] */
    uint32_t nest_gen;
    uint32_t nest_items;       /* items per outer iteration of the current nest */
    /* loop items of more than one dimension: inside one, leaf e also moves
     * by box_stride[(d - 1) * (nnodes + 1) + id] * box_j[d] for d >= 1
     * (dimension 0 is loop_j) when stride_stamp[id] == loop_gen */
    LLVMValueRef box_j[SYS_LOOP_MAX_DIM]; /* [0] unused; NULL outside */
    int32_t *box_stride;       /* [(SYS_LOOP_MAX_DIM - 1) * (nnodes + 1)] */
    /* values shared between chunks (cg_chunk.c): a node first computed by
     * chunk share_owner[id] of the current function (valid while
     * share_gen_of[id] == share_gen) and used by a later chunk is stored
     * by its owner into tmp[share_slot[id]] and loaded by the later ones */
    uint32_t *share_gen_of;    /* [nnodes + 1] */
    uint32_t *share_owner;     /* [nnodes + 1] chunk number of the owner */
    int32_t *share_slot;       /* [nnodes + 1] tmp slot, or -1 (not used later) */
    uint32_t share_gen;        /* bumped per entry function */
    uint32_t nshare;           /* tmp slots of shared values so far */
    uint32_t cur_chunk;        /* chunk being planned or emitted */
    bool share_count;          /* cg_count_new: shared values cost one load */
    uint32_t tmp_base;         /* the cut slots follow the shared ones */
    uint32_t *run;             /* emit_function: run[k] items loop from k */
    uint16_t *period;          /* items per iteration of that run */
    uint32_t *nest;            /* emit_function: nest[k] items are a nest from k */
    uint32_t *nest_period;     /* items per outer iteration of that nest */
    uint32_t nloops;           /* statistics: loops, inner ones of nests too */
    uint32_t nnests;           /* statistics */
    uint32_t nchunks;          /* statistics */
    uint32_t max_chunk_nodes;
} Cg;

/* The node number of e (1..nnodes), the index of every per-node table. */
static inline uint32_t cg_node(const Cg *g, const Expr *e) { return g->node_of[e->id]; }

/* cg_expr.c */
LLVMValueRef cg_expr(Cg *g, Expr *e);
LLVMValueRef cg_load(Cg *g, CgArg arg, uint32_t index);
LLVMValueRef cg_slot(Cg *g, CgArg arg, uint32_t index);
uint32_t cg_count_new(Cg *g, Expr *e);
void cg_memo_set(Cg *g, Expr *e, LLVMValueRef v);
bool cg_is_cut(const Cg *g, const Expr *e);
int32_t cg_shared_slot(const Cg *g, const Expr *e);

/* Shared values per entry function at most (tmp is on the stack: 64 KB);
 * beyond it a later chunk computes the value again. */
#define CG_SHARE_MAX 8192

/* cg_chunk.c: cg_emit_function declares the entry function and keeps its
 * items (alive until cg_emit_functions); cg_emit_functions numbers the
 * nodes of every kept item and emits every body, in declaration order. */
LLVMValueRef cg_emit_function(Cg *g, const CgFnSpec *spec, const CgItem *items,
                              uint32_t nitems);
void cg_emit_functions(Cg *g);
LLVMValueRef cg_item_value(Cg *g, const CgItem *it);

#define CG_LOOP_MAX_PERIOD 512 /* items per loop iteration */
_Static_assert(SYS_LOOP_MAX_ENT <= CG_LOOP_MAX_PERIOD, "a Jacobian loop item is one iteration of nent items");

/* cg_loop.c: runs of items of one shape (run[k] items from k, period[k]
 * per iteration; 0 = no run at k), nests of runs (nest[k] items from k,
 * nest_period[k] per outer iteration, the runs among them in run[]), their
 * strides, one loop or nest.  Loop items (CgItem.loop) are planned as
 * given, also with CgOptions.no_loops. */
void cg_plan_loops(Cg *g, const CgItem *items, uint32_t n, uint32_t *run, uint16_t *period, uint32_t *nest,
                   uint32_t *nest_period);
bool cg_loop_strides(Cg *g, const CgItem *items, uint32_t k0, uint32_t period, int32_t *dest_stride);
bool cg_nest_strides(Cg *g, const CgItem *items, uint32_t first, uint32_t period);
LLVMValueRef cg_emit_loop(Cg *g, const CgFnSpec *spec, const CgItem *items, uint32_t first, uint32_t count,
                          uint32_t period, const int32_t *dstride, LLVMValueRef fn);
LLVMValueRef cg_emit_nest(Cg *g, const CgFnSpec *spec, const CgItem *items, uint32_t first, uint32_t count,
                          uint32_t period, LLVMValueRef fn);
LLVMValueRef cg_loop_index(Cg *g, uint32_t base, int32_t stride);
int32_t cg_leaf_stride(const Cg *g, const Expr *e);
/* the i32 index of leaf e at `index` in the current loop or nest, NULL
 * when it does not move (a plain load) */
LLVMValueRef cg_leaf_index(Cg *g, uint32_t index, const Expr *e);

/* cg_data.c: tables as byte strings, name lists filled at load time by
 * CG_NAMES_INIT (a constructor; cg_jit.c calls it itself) */
#define CG_NAMES_INIT "dyad_names_init"
/* a constant private global (cg_module.c) */
LLVMValueRef cg_private_constant(Cg *g, const char *name, LLVMValueRef init);
LLVMValueRef cg_table(Cg *g, const char *name, const void *elems, uint32_t n, unsigned size);
LLVMValueRef cg_names(Cg *g, const char *name, const char *const *names, uint32_t n);
void cg_emit_names_init(Cg *g);

/* cg_module.c */
int cg_build(Cg *g, const System *s, const CgOptions *o, LLVMContextRef ctx,
             LLVMTargetMachineRef tm, bool split);
void cg_dispose(Cg *g);

/* cg_target.c */
LLVMTargetMachineRef cg_target_machine(const CgOptions *o, int host_cpu);
int cg_optimize(Cg *g, LLVMTargetMachineRef tm);

#endif
