/*
 * tables.c -- what in the System is data rather than code (system.h, ABI 3
 * of runtime/dyad_model.h): output columns that are copies
 * `offset + scale * [-]source` of a y, y' or p slot, time or a constant
 * (eliminated aliases, mostly), constant parameter defaults and constant
 * (or absent) start values; output columns that equal, or negate, an
 * earlier column (the same hash-consed expression: result files store them
 * once).  Codegen emits these as tables and the rest as functions; it does
 * not classify.  Works on a finished System (tests build
 * their own).  O(outputs + parameters + unknowns).
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

static void output_copies(System *s, Arena *a) {
    s->out_copy = ARENA_ARRAY(a, SysCopy, s->nout + 1);
    for (uint32_t i = 0; i < s->nout; i++) {
        SysCopy f;
        if (!s->out[i] || !copy_form(s->out[i], &f)) continue;
        f.dest = i;
        s->out_copy[s->nout_copy++] = f;
    }
}

/* out_alias[k] = +-(j + 1) when out[k] is out[j] or -out[j] for a j < k:
 * one hash map from expression to its first column (signed), the operand
 * of a negation registered with the opposite sign; a negation looks its
 * operand up too. */
static void output_aliases(System *s, Arena *a) {
    s->out_alias = ARENA_ARRAY(a, int32_t, s->nout + 1);
    HashMap first = {0};
    for (uint32_t k = 0; k < s->nout; k++) {
        const Expr *e = s->out[k];
        if (!e) continue;
        intptr_t j = (intptr_t)hmap_get(&first, (uint64_t)(uintptr_t)e);
        if (!j && e->kind == EXPR_NEG) /* -x after x */
            j = -(intptr_t)hmap_get(&first, (uint64_t)(uintptr_t)e->args[0]);
        if (j) {
            s->out_alias[k] = (int32_t)j;
            continue;
        }
        hmap_put(a, &first, (uint64_t)(uintptr_t)e, (void *)(intptr_t)(k + 1));
        if (e->kind == EXPR_NEG && !hmap_get(&first, (uint64_t)(uintptr_t)e->args[0]))
            hmap_put(a, &first, (uint64_t)(uintptr_t)e->args[0], (void *)(intptr_t)-(intptr_t)(k + 1));
    }
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

void struct_tables(System *s) {
    Arena *a = expr_ctx_arena(s->ctx);
    output_copies(s, a);
    output_aliases(s, a);
    param_consts(s, a);
    start_consts(s, a);
}
