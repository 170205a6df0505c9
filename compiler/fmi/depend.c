/*
 * depend.c -- ModelStructure `dependencies` (FMI 2.0.4, 2.2.8) of the
 * outputs and the state derivatives on the continuous-time knowns: the
 * continuous states and the inputs.
 *
 * In Model Exchange, with t, the states x and the inputs u fixed, the
 * unknowns z (y' of each state, y of each algebraic unknown) solve
 * F(t, x, z, u) = 0 block by block in BLT order (System.blocks): the
 * unknowns of a block depend on the knowns that appear in its residual rows
 * and on what the unknowns of earlier blocks appearing there depend on
 * (structural: a leaf in the expression).  An output column's expression
 * depends on its leaves the same way.  Modes and clocked values are held
 * between events and are not knowns of the continuous-time partials.
 * The sets are sorted lists of known numbers (knowns ordered by FMI
 * index), so a set in order is the ascending list the standard wants; they
 * are gathered with a stamp per known, so a union costs what it adds (the
 * output of a model whose sets are dense is large, but the work stays
 * proportional to it).  The unknowns of one block share one set.
 * The rows of a loop item (system.h) are read as its template with the
 * leaves shifted (sys_resid_at), not expanded.
 * O(rows * leaves + sum of the sets' sizes * log); passes repeat until
 * nothing changes, in case a row reads an unknown of a later block (once
 * when the blocks are in BLT order).
 */
#include <stdlib.h>
#include <string.h>

#include "fmi_internal.h"

static int cmp_u32(const void *x, const void *y)
{
    uint32_t a = *(const uint32_t *)x, b = *(const uint32_t *)y;
    return (a > b) - (a < b);
}

static void set_init(FmiDeps *d, Arena *a)
{
    d->a = a;
    d->stamp = ARENA_ARRAY(a, uint32_t, d->nknown + 1);
    d->cur = 0;
}

void fmi_set_begin(FmiDeps *d)
{
    d->cur++;
    d->items.len = 0;
}

void fmi_set_add(FmiDeps *d, uint32_t k)
{
    if (d->stamp[k] != d->cur) {
        d->stamp[k] = d->cur;
        vec_push(d->a, &d->items, k);
    }
}

void fmi_set_add_set(FmiDeps *d, const FmiSet *set)
{
    for (uint32_t j = 0; j < set->n; j++)
        fmi_set_add(d, set->k[j]);
}

FmiSet *fmi_set_take(FmiDeps *d)
{
    FmiSet *set = ARENA_NEW(d->a, FmiSet);
    uint32_t *k = ARENA_ARRAY(d->a, uint32_t, d->items.len + 1);
    if (d->items.len)
        memcpy(k, d->items.data, sizeof *k * d->items.len);
    qsort(k, d->items.len, sizeof *k, cmp_u32);
    set->k = k;
    set->n = d->items.len;
    return set;
}

/* (FMI index, y) of a state, for sorting the states by index */
typedef struct { uint32_t index, y; } StateKey;

static int cmp_state(const void *x, const void *y)
{
    const StateKey *a = x, *b = y;
    if (a->index != b->index)
        return (a->index > b->index) - (a->index < b->index);
    return (a->y > b->y) - (a->y < b->y);
}

/* The known numbers: the states in the order of their FMI index, then
 * the inputs (their indices, p + 1, are below every variable's). */
static int number_knowns(FmiDeps *d, Arena *a, const System *s, const uint32_t *state_index)
{
    d->known_of_y = ARENA_ARRAY(a, int32_t, s->ny + 1);
    d->known_of_p = ARENA_ARRAY(a, int32_t, s->np + 1);
    d->known_index = ARENA_ARRAY(a, uint32_t, s->ny + s->np + 1);
    uint32_t n = 0;
    for (uint32_t p = 0; p < s->np; p++) {
        d->known_of_p[p] = -1;
        if (s->param_flags[p] & SYS_PARAM_INPUT) {
            d->known_of_p[p] = (int32_t)n;
            d->known_index[n++] = p + 1;
        }
    }
    StateKey *st = ARENA_ARRAY(a, StateKey, s->ny + 1);
    uint32_t nst = 0;
    for (uint32_t i = 0; i < s->ny; i++) {
        d->known_of_y[i] = -1;
        if (!s->y_is_diff[i])
            continue;
        if (!state_index[i])
            return 1;                  /* a state without its variable: cannot say */
        st[nst++] = (StateKey){state_index[i], i};
    }
    qsort(st, nst, sizeof *st, cmp_state);
    for (uint32_t j = 0; j < nst; j++) {
        d->known_of_y[st[j].y] = (int32_t)n;
        d->known_index[n++] = st[j].index;
    }
    d->nknown = n;
    return 0;
}

void fmi_deps_of_expr(FmiDeps *d, const System *s, Expr *e, const SysAt *at)
{
    ExprVec leaves = {0};
    expr_leaves_any(s->ctx, e, &leaves);
    for (uint32_t k = 0; k < leaves.len; k++) {
        const Expr *l = leaves.data[k];
        uint32_t i = at ? sys_at_index(at, l) : l->index;
        switch ((ExprKind)l->kind) {
        case EXPR_Y:
            if (d->known_of_y[i] >= 0)
                fmi_set_add(d, (uint32_t)d->known_of_y[i]);
            else
                fmi_set_add_set(d, &d->z[i]);
            break;
        case EXPR_YP:
            fmi_set_add_set(d, &d->z[i]);
            break;
        case EXPR_P:
            if (d->known_of_p[i] >= 0)
                fmi_set_add(d, (uint32_t)d->known_of_p[i]);
            break;
        default:                       /* time, modes, constants */
            break;
        }
    }
}

/* One pass over the blocks; returns whether a set grew. */
static bool pass(FmiDeps *d, const System *s)
{
    bool grew = false;
    for (uint32_t b = 0; b < s->nblocks; b++) {
        const SysBlock *blk = &s->blocks[b];
        if (blk->ntear == 0)
            continue;
        fmi_set_begin(d);
        FmiSet *old = &d->z[s->block_unknowns[blk->first].index];
        fmi_set_add_set(d, old);       /* the sets only grow */
        for (uint32_t r = 0; r < blk->ntear; r++) {
            SysAt at; /* a row of a loop item: its template, leaves shifted */
            Expr *x = sys_resid_at(s, blk->res_first + r, &at);
            fmi_deps_of_expr(d, s, x, &at);
        }
        if (d->items.len == old->n)
            continue;                  /* the same set: it holds the old one */
        FmiSet now = *fmi_set_take(d);
        for (uint32_t u = 0; u < blk->ntear; u++)
            d->z[s->block_unknowns[blk->first + u].index] = now;
        grew = true;
    }
    return grew;
}

/* The blocks must cover every residual row once, each with Y or YP
 * unknowns. */
static bool blocks_cover(const System *s)
{
    uint32_t rows = 0;
    for (uint32_t b = 0; b < s->nblocks; b++) {
        const SysBlock *blk = &s->blocks[b];
        if (blk->ntear && blk->res_first != rows)
            return false;
        for (uint32_t u = 0; u < blk->ntear; u++)
            if (s->block_unknowns[blk->first + u].kind == SU_ASSIGNED)
                return false;
        rows += blk->ntear;
    }
    return rows == s->ny;
}

bool fmi_deps_build(FmiDeps *d, Arena *a, const System *s, const uint32_t *state_index)
{
    memset(d, 0, sizeof *d);
    if (s->nsets > 0 || !blocks_cover(s) || number_knowns(d, a, s, state_index))
        return false;
    set_init(d, a);
    d->z = ARENA_ARRAY(a, FmiSet, s->ny + 1);
    for (uint32_t it = 0; pass(d, s); it++)
        if (it > s->nblocks)
            return false;              /* cannot happen: the sets only grow */
    d->ok = true;
    return true;
}

/* An FMI index as decimal digits, ending at end; returns the start. */
static char *digits(char *end, uint32_t v)
{
    do
        *--end = (char)('0' + v % 10);
    while (v /= 10);
    return end;
}

void fmi_deps_print(FILE *out, const FmiDeps *d, const FmiSet *set)
{
    char buf[4096];
    size_t len = 0;
    fputs(" dependencies=\"", out);
    for (uint32_t j = 0; j < set->n; j++) {
        if (len > sizeof buf - 16) {
            fwrite(buf, 1, len, out);
            len = 0;
        }
        char num[12], *p = digits(num + sizeof num, d->known_index[set->k[j]]);
        if (j)
            buf[len++] = ' ';
        size_t w = (size_t)(num + sizeof num - p);
        memcpy(buf + len, p, w);
        len += w;
    }
    buf[len++] = '"';
    fwrite(buf, 1, len, out);
}
