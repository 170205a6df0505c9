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
 * The sets are bitsets over the knowns, ordered by FMI index, so reading a
 * set's bits in order gives the ascending list the standard wants.
 * The rows of a loop item (system.h) are read as its template with the
 * leaves shifted (sys_resid_at), not expanded.
 * O(rows * leaves + blocks * knowns / 64); passes repeat until nothing
 * changes, in case a row reads an unknown of a later block (once when the
 * blocks are in BLT order).
 */
#include <string.h>

#include "fmi_internal.h"

static void set_or(uint64_t *dst, const uint64_t *src, uint32_t words)
{
    for (uint32_t w = 0; w < words; w++)
        dst[w] |= src[w];
}

static void set_bit(uint64_t *set, uint32_t b)
{
    set[b / 64] |= 1ULL << (b % 64);
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
    uint32_t first_state = n;
    for (uint32_t i = 0; i < s->ny; i++) {
        d->known_of_y[i] = -1;
        if (!s->y_is_diff[i])
            continue;
        if (!state_index[i])
            return 1;                  /* a state without its variable: cannot say */
        d->known_index[n++] = state_index[i];
    }
    /* the states ascending by index (insertion sort: indices are nearly in order) */
    for (uint32_t k = first_state + 1; k < n; k++)
        for (uint32_t j = k; j > first_state && d->known_index[j - 1] > d->known_index[j]; j--) {
            uint32_t t = d->known_index[j];
            d->known_index[j] = d->known_index[j - 1];
            d->known_index[j - 1] = t;
        }
    for (uint32_t i = 0; i < s->ny; i++)
        for (uint32_t k = first_state; s->y_is_diff[i] && k < n; k++)
            if (d->known_index[k] == state_index[i])
                d->known_of_y[i] = (int32_t)k;
    d->nknown = n;
    d->words = (n + 63) / 64;
    return 0;
}

void fmi_deps_of_expr(const FmiDeps *d, const System *s, Expr *e, const SysAt *at, uint64_t *set)
{
    ExprVec leaves = {0};
    expr_leaves_any(s->ctx, e, &leaves);
    for (uint32_t k = 0; k < leaves.len; k++) {
        const Expr *l = leaves.data[k];
        uint32_t i = at ? sys_at_index(at, l) : l->index;
        switch ((ExprKind)l->kind) {
        case EXPR_Y:
            if (d->known_of_y[i] >= 0)
                set_bit(set, (uint32_t)d->known_of_y[i]);
            else
                set_or(set, d->z + (size_t)i * d->words, d->words);
            break;
        case EXPR_YP:
            set_or(set, d->z + (size_t)i * d->words, d->words);
            break;
        case EXPR_P:
            if (d->known_of_p[i] >= 0)
                set_bit(set, (uint32_t)d->known_of_p[i]);
            break;
        default:                       /* time, modes, constants */
            break;
        }
    }
}

/* One pass over the blocks; returns whether a set grew. */
static bool pass(FmiDeps *d, const System *s, uint64_t *row)
{
    bool grew = false;
    for (uint32_t b = 0; b < s->nblocks; b++) {
        const SysBlock *blk = &s->blocks[b];
        if (blk->ntear == 0)
            continue;
        memset(row, 0, sizeof *row * d->words);
        for (uint32_t r = 0; r < blk->ntear; r++) {
            SysAt at; /* a row of a loop item: its template, leaves shifted */
            Expr *x = sys_resid_at(s, blk->res_first + r, &at);
            fmi_deps_of_expr(d, s, x, &at, row);
        }
        for (uint32_t u = 0; u < blk->ntear; u++) {
            uint64_t *z = d->z + (size_t)s->block_unknowns[blk->first + u].index * d->words;
            for (uint32_t w = 0; w < d->words; w++)
                if (row[w] & ~z[w]) {
                    z[w] |= row[w];
                    grew = true;
                }
        }
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
    d->z = ARENA_ARRAY(a, uint64_t, (size_t)s->ny * d->words + 1);
    uint64_t *row = ARENA_ARRAY(a, uint64_t, d->words + 1);
    for (uint32_t it = 0; pass(d, s, row); it++)
        if (it > s->nblocks)
            return false;              /* cannot happen: the sets only grow */
    d->ok = true;
    return true;
}

void fmi_deps_print(FILE *out, const FmiDeps *d, const uint64_t *set)
{
    fputs(" dependencies=\"", out);
    const char *sep = "";
    for (uint32_t k = 0; k < d->nknown; k++)
        if (set[k / 64] >> (k % 64) & 1) {
            fprintf(out, "%s%u", sep, d->known_index[k]);
            sep = " ";
        }
    fputc('"', out);
}
