/*
 * tables.c -- what in the System is data rather than code (system.h, ABI 3
 * of runtime/dyad_model.h): output columns that are copies
 * `offset + scale * [-]source` of a y, y' or p slot, time or a constant
 * (eliminated aliases, mostly), constant parameter defaults and constant
 * (or absent) start values; output columns that equal, or negate, an
 * earlier column (the same hash-consed expression: result files store them
 * once); the residual blocks grouped by level for Model Exchange's
 * block-wise solve, each flagged linear or not.  Codegen emits these as
 * tables and the rest as functions; it does not classify.  Works on a
 * finished System (tests build their own).  O(outputs + parameters +
 * unknowns + Jacobian entries and their expressions).
 */
#include "structure.h"

#include <string.h>

static bool is_const(const Expr *e) { return e && e->kind == EXPR_CONST; }

static bool copy_source(const Expr *e, SysCopy *f) {
    switch ((ExprKind)e->kind) {
    case EXPR_Y: f->src = SYS_SRC_Y; break;
    case EXPR_YP: f->src = SYS_SRC_YP; break;
    case EXPR_P: f->src = SYS_SRC_P; break;
    case EXPR_TIME: f->src = SYS_SRC_TIME; return true;
    default: return false;
    }
    f->index = e->index;
    return true;
}

/* source | -source */
static bool copy_signed(const Expr *e, SysCopy *f) {
    if (e->kind == EXPR_NEG) {
        f->ops |= SYS_OP_NEG;
        return copy_source(e->args[0], f);
    }
    return copy_source(e, f);
}

/* signed | c * signed | signed * c  (IEEE multiplication commutes exactly) */
static bool copy_scaled(const Expr *e, SysCopy *f) {
    if (e->kind == EXPR_MUL) {
        int c = is_const(e->args[0]) ? 0 : is_const(e->args[1]) ? 1 : -1;
        if (c < 0) return false;
        f->ops |= SYS_OP_SCALE;
        f->scale = e->args[c]->value;
        return copy_signed(e->args[1 - c], f);
    }
    return copy_signed(e, f);
}

/* const | scaled | c + scaled | scaled + c */
static bool copy_form(const Expr *e, SysCopy *f) {
    memset(f, 0, sizeof *f);
    if (is_const(e)) {
        f->src = SYS_SRC_CONST;
        f->offset = e->value;
        return true;
    }
    if (e->kind == EXPR_ADD) {
        int c = is_const(e->args[0]) ? 0 : is_const(e->args[1]) ? 1 : -1;
        if (c < 0) return false;
        f->ops |= SYS_OP_OFFSET;
        f->offset = e->args[c]->value;
        return copy_scaled(e->args[1 - c], f);
    }
    return copy_scaled(e, f);
}

bool struct_out_copy(const Expr *e) {
    SysCopy f;
    return copy_form(e, &f);
}

/* one pass over the outputs (each read once: they are scattered in
 * memory), into a table of one row an output, then trimmed to the copies
 * (32 bytes each) */
static void output_copies(System *s, Arena *a) {
    SysCopy *all = ARENA_ARRAY(a, SysCopy, s->nout + 1);
    uint32_t n = 0;
    for (uint32_t i = 0; i < s->nout; i++) {
        if (!s->out[i] || !copy_form(s->out[i], &all[n])) continue;
        all[n++].dest = i;
    }
    s->out_copy = ARENA_ARRAY(a, SysCopy, n + 1);
    memcpy(s->out_copy, all, sizeof *all * n);
    s->nout_copy = n;
    arena_release(a, all, sizeof *all * ((size_t)s->nout + 1));
}

/* out_alias[k] = +-(j + 1) when out[k] is out[j] or -out[j] for a j < k:
 * a map from expression to its first column (signed), the operand of a
 * negation registered with the opposite sign; a negation looks its
 * operand up too.  The map is an array indexed by node id (zeroed pages
 * cost nothing until touched).  O(outputs). */
static void output_aliases(System *s, Arena *a) {
    s->out_alias = ARENA_ARRAY(a, int32_t, s->nout + 1);
    size_t nid = (size_t)expr_count(s->ctx) + 1;
    int32_t *first = ARENA_ARRAY(a, int32_t, nid);
    for (uint32_t k = 0; k < s->nout; k++) {
        const Expr *e = s->out[k];
        if (!e) continue;
        bool neg = e->kind == EXPR_NEG;
        int32_t *fe = &first[e->id], *fa = neg ? &first[e->args[0]->id] : NULL;
        int32_t j = *fe;
        if (!j && neg) j = -*fa; /* -x after x */
        if (j) {
            s->out_alias[k] = j;
            continue;
        }
        *fe = (int32_t)(k + 1);
        if (neg && !*fa) *fa = -(int32_t)(k + 1);
    }
    arena_release(a, first, sizeof *first * nid);
}

static void param_consts(System *s, Arena *a) {
    s->param_has_const = ARENA_ARRAY(a, unsigned char, s->np + 1);
    s->param_const = ARENA_ARRAY(a, double, s->np + 1);
    for (uint32_t i = 0; i < s->np; i++)
        if (s->param_default && is_const(s->param_default[i])) {
            s->param_has_const[i] = 1;
            s->param_const[i] = s->param_default[i]->value;
        }
}

static void start_consts(System *s, Arena *a) {
    s->start_has_const = ARENA_ARRAY(a, unsigned char, s->ny + 1);
    s->start_y_const = ARENA_ARRAY(a, double, s->ny + 1);
    s->start_yp_const = ARENA_ARRAY(a, double, s->ny + 1);
    for (uint32_t i = 0; i < s->ny; i++) {
        Expr *y = s->start ? s->start[i] : NULL, *yp = s->start_yp ? s->start_yp[i] : NULL;
        if (!y || is_const(y)) {
            s->start_has_const[i] |= 1;
            s->start_y_const[i] = y ? y->value : 0.0;
        }
        if (!yp || is_const(yp)) {
            s->start_has_const[i] |= 2;
            s->start_yp_const[i] = yp ? yp->value : 0.0;
        }
    }
}

/* ---------- the blocks as Model Exchange solves them (system.h) ---------- */

#define ODE_FLAGS_MAX 64  /* larger blocks: no flags (the runtime solves them whole) */

/* SYS_ODE_* of block b: the derivative of each of its rows in each of its
 * unknowns (jac_dyp for a state's y', jac_dy for an algebraic y) read
 * against the unknowns.  mark[j] = b + 1 for the block's own columns.
 * O(size of those entries' expressions). */
static unsigned char ode_block_flags(const System *s, uint32_t b, const int32_t *row_block,
                                     const uint32_t *mark, ExprVec *leaves) {
    unsigned char flags = SYS_ODE_LINEAR | SYS_ODE_KNOWN;
    for (uint32_t k = s->ode_ptr[b]; k < s->ode_ptr[b + 1]; k++) {
        uint32_t j = s->ode_cols[k];
        for (int32_t e = s->jac_colptr[j]; e < s->jac_colptr[j + 1]; e++) {
            if (row_block[s->jac_rowidx[e]] != (int32_t)b) continue;
            leaves->len = 0;
            SysAt at;   /* an entry of a loop item: its template, leaves read at the instance */
            expr_leaves_any(s->ctx, sys_jac_at(s, (uint32_t)e, s->y_is_diff[j], &at), leaves);
            for (uint32_t i = 0; i < leaves->len; i++) {
                const Expr *x = leaves->data[i];
                if (x->kind != EXPR_Y && x->kind != EXPR_YP) continue;
                uint32_t xi = sys_at_index(&at, x);
                bool unknown = (x->kind == EXPR_Y && !s->y_is_diff[xi]) || x->kind == EXPR_YP;
                if (!unknown) continue;
                flags &= (unsigned char)~SYS_ODE_KNOWN;
                if (mark[xi] == b + 1) return 0;
            }
        }
    }
    return flags;
}

/* Level of each block: block d depends on b when a row of d reads an
 * unknown of b -- y_j of an algebraic j, y'_j of a state j (a row reading
 * only the state y_j does not); level = 0 without dependencies, else 1 +
 * the highest level among them.  System.blocks need not list a block
 * after every block it reads (an implicit unknown kept for later blocks
 * may come after a loop reading it), so the levels come from Kahn's
 * topological sort (Kahn, CACM 5(11), 1962) of the dependency graph.
 * Returns the number of levels, 0 on a cycle (no block-wise solve).
 * O(nnz). */
static uint32_t ode_levels(const System *s, Arena *a, const uint32_t *blt_ptr, const uint32_t *blt_cols,
                           const int32_t *row_block, uint32_t nb, uint32_t *level) {
    uint32_t *eptr = ARENA_ARRAY(a, uint32_t, nb + 2), *indeg = ARENA_ARRAY(a, uint32_t, nb + 1);
    uint32_t *edst = ARENA_ARRAY(a, uint32_t, s->jac_nnz + 1), ne = 0;
    for (uint32_t b = 0; b < nb; b++) {
        eptr[b] = ne;
        for (uint32_t k = blt_ptr[b]; k < blt_ptr[b + 1]; k++) {
            uint32_t j = blt_cols[k];
            for (int32_t e = s->jac_colptr[j]; e < s->jac_colptr[j + 1]; e++) {
                SysAt at;   /* a template is the constant 0 where its instance is */
                const Expr *dyp = s->y_is_diff[j] ? sys_jac_at(s, (uint32_t)e, true, &at) : NULL;
                if (dyp && dyp->kind == EXPR_CONST && dyp->value == 0) continue;
                uint32_t d = (uint32_t)row_block[s->jac_rowidx[e]];
                if (d == b) continue;
                edst[ne++] = d;
                indeg[d]++;
            }
        }
    }
    eptr[nb] = ne;
    uint32_t *queue = ARENA_ARRAY(a, uint32_t, nb + 1), head = 0, tail = 0, nlev = 0;
    for (uint32_t b = 0; b < nb; b++)
        if (!indeg[b]) queue[tail++] = b;
    while (head < tail) {
        uint32_t b = queue[head++];
        if (level[b] + 1 > nlev) nlev = level[b] + 1;
        for (uint32_t e = eptr[b]; e < eptr[b + 1]; e++) {
            uint32_t d = edst[e];
            if (level[d] < level[b] + 1) level[d] = level[b] + 1;
            if (--indeg[d] == 0) queue[tail++] = d;
        }
    }
    arena_release(a, edst, sizeof *edst * ((size_t)s->jac_nnz + 1));
    arena_release(a, eptr, sizeof *eptr * ((size_t)nb + 2));
    arena_release(a, indeg, sizeof *indeg * ((size_t)nb + 1));
    arena_release(a, queue, sizeof *queue * ((size_t)nb + 1));
    return tail == nb ? nlev : 0;
}

/* The blocks with rows in BLT order (blt_ptr, blt_cols; row_block), then
 * sorted by level (stable).  Leaves ode_nblocks = 0 when a block's unknown
 * is not what Model Exchange solves for (y of a state, y' of an algebraic
 * unknown: state sets). */
static void ode_blocks(System *s, Arena *a) {
    if (!s->blocks || !s->jac_dyp || !s->ny) return;
    uint32_t nb = 0;
    for (uint32_t i = 0; i < s->nblocks; i++) nb += s->blocks[i].ntear > 0;
    uint32_t *blt_ptr = ARENA_ARRAY(a, uint32_t, nb + 1), *blt_cols = ARENA_ARRAY(a, uint32_t, s->ny + 1);
    int32_t *row_block = ARENA_ARRAY(a, int32_t, s->ny + 1);
    uint32_t ob = 0;
    for (uint32_t i = 0; i < s->nblocks; i++) {
        const SysBlock *b = &s->blocks[i];
        if (!b->ntear) continue;
        for (uint32_t k = 0; k < b->ntear; k++) {
            SysUnknown u = s->block_unknowns[b->first + k];
            if (u.kind == SU_ASSIGNED || (u.kind == SU_YP) != (s->y_is_diff[u.index] != 0)) return;
            blt_cols[b->res_first + k] = u.index;
            row_block[b->res_first + k] = (int32_t)ob;
        }
        blt_ptr[++ob] = b->res_first + b->ntear;
    }
    uint32_t *level = ARENA_ARRAY(a, uint32_t, nb + 1);
    s->ode_nlevels = ode_levels(s, a, blt_ptr, blt_cols, row_block, nb, level);
    if (!s->ode_nlevels) goto done;
    s->ode_level_ptr = ARENA_ARRAY(a, uint32_t, s->ode_nlevels + 2);
    for (uint32_t b = 0; b < nb; b++) s->ode_level_ptr[level[b] + 1]++;
    for (uint32_t l = 0; l < s->ode_nlevels; l++) s->ode_level_ptr[l + 1] += s->ode_level_ptr[l];
    uint32_t *fill = ARENA_ARRAY(a, uint32_t, s->ode_nlevels + 1), *order = ARENA_ARRAY(a, uint32_t, nb + 1);
    for (uint32_t b = 0; b < nb; b++) order[s->ode_level_ptr[level[b]] + fill[level[b]]++] = b;
    s->ode_ptr = ARENA_ARRAY(a, uint32_t, nb + 1);
    s->ode_rows = ARENA_ARRAY(a, uint32_t, s->ny + 1);
    s->ode_cols = ARENA_ARRAY(a, uint32_t, s->ny + 1);
    uint32_t at = 0;
    for (uint32_t i = 0; i < nb; i++) {   /* block i of the level order is BLT block order[i] */
        for (uint32_t r = blt_ptr[order[i]]; r < blt_ptr[order[i] + 1]; r++, at++) {
            s->ode_rows[at] = r;
            s->ode_cols[at] = blt_cols[r];
            row_block[r] = (int32_t)i;
        }
        s->ode_ptr[i + 1] = at;
    }
    s->ode_nblocks = nb;
    s->ode_flags = ARENA_ARRAY(a, unsigned char, nb + 1);
    uint32_t *mark = ARENA_ARRAY(a, uint32_t, s->ny + 1);
    ExprVec leaves = {0};
    for (uint32_t b = 0; b < nb; b++) {
        if (s->ode_ptr[b + 1] - s->ode_ptr[b] > ODE_FLAGS_MAX) continue;
        for (uint32_t k = s->ode_ptr[b]; k < s->ode_ptr[b + 1]; k++) mark[s->ode_cols[k]] = b + 1;
        s->ode_flags[b] = ode_block_flags(s, b, row_block, mark, &leaves);
    }
    arena_release(a, mark, sizeof *mark * ((size_t)s->ny + 1));
    arena_release(a, order, sizeof *order * ((size_t)nb + 1));
done: /* the temporaries (36 bytes a row) */
    arena_release(a, level, sizeof *level * ((size_t)nb + 1));
    arena_release(a, row_block, sizeof *row_block * ((size_t)s->ny + 1));
    arena_release(a, blt_cols, sizeof *blt_cols * ((size_t)s->ny + 1));
    arena_release(a, blt_ptr, sizeof *blt_ptr * ((size_t)nb + 1));
}

void struct_tables(System *s) {
    Arena *a = expr_ctx_arena(s->ctx);
    output_copies(s, a);
    output_aliases(s, a);
    param_consts(s, a);
    start_consts(s, a);
    ode_blocks(s, a);
}
