/*
 * dump.c -- deterministic text of the structural result
 * (`dyadc flatten --structure`): the analysis report (alias elimination,
 * index reduction, states, dummy derivatives, BLT blocks, torn variables),
 * then the System (unknowns, parameters, residuals, initialization).
 * Stable order everywhere: variables by index, blocks in BLT order.
 */
#include "structure_internal.h"

#include "dyad_model.h"

#include <stdlib.h>

void st_note_eq(St *t, uint32_t e, const char *what) {
    SEq *q = &t->eq.data[e];
    if (q->flat < 0) return;
    FlatEq *f = &t->m->eqs.data[q->flat];
    if (q->order) diag_note(f->span, "%s (differentiated %u time%s)", what, q->order, q->order == 1 ? "" : "s");
    else diag_note(f->span, "%s", what);
}

static void sv_leaf(void *ud, FILE *out, const Expr *e) {
    St *t = ud;
    if (e->kind == EXPR_VAR) fputs(st_sv_name(t, e->index), out);
    else fprintf(out, "%s[%u]", expr_kind_names[e->kind], e->index);
}

/* Expressions are printed as trees: a shared DAG can print exponentially
 * long, and the printer recurses.  Beyond this many tree nodes the dump
 * says how big the expression is instead. */
#define DUMP_MAX_TREE 2000

static void print_capped(FILE *out, ExprCtx *c, const Expr *e, ExprLeafName name, void *ud) {
    uint64_t n = expr_tree_size(c, (Expr *)e, DUMP_MAX_TREE);
    if (n > DUMP_MAX_TREE) fprintf(out, "<expression of %u distinct nodes>", expr_size(c, (Expr *)e));
    else expr_print(out, e, name, ud);
}

/* ---------- texts for the runtime's messages ---------- */

/* Longer expressions are named by their size in messages. */
#define TEXT_MAX_TREE 200

static void leaf_name(void *ud, FILE *out, const Expr *e);

static void text_expr(FILE *f, St *t, const Expr *e, const System *sys) {
    if (expr_tree_size(t->c, (Expr *)e, TEXT_MAX_TREE) > TEXT_MAX_TREE)
        fprintf(f, "<expression of %u distinct nodes>", expr_size(t->c, (Expr *)e));
    else if (sys) expr_print(f, e, leaf_name, (void *)sys);
    else flat_print_expr(f, t->m, e);
}

static void text_where(FILE *f, Span span) {
    SrcFile *src = span.file ? src_get(span.file) : NULL;
    if (!src) return;
    uint32_t line, col;
    src_line_col(src, span.lo, &line, &col);
    fprintf(f, " (%s:%u)", src->path, line);
}

static const char *text_close(St *t, FILE *f, char **buf, size_t *len) {
    fclose(f);
    const char *r = arena_strndup(t->arena, *buf, *len);
    free(*buf);
    return r;
}

const char *st_expr_text(St *t, const Expr *e, const System *sys, Span span) {
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    if (!f) return "?";
    text_expr(f, t, e, sys);
    text_where(f, span);
    return text_close(t, f, &buf, &len);
}

const char *st_eq_text(St *t, uint32_t flat, const char *pre, const char *post) {
    FlatEq *q = flat_eq_get(t->m, flat);
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    if (!f) return pre;
    fputs(pre, f);
    text_expr(f, t, q->lhs, NULL);
    fputs(" = ", f);
    text_expr(f, t, q->rhs, NULL);
    text_where(f, q->span);
    if (!q->span.file && q->is_override) fprintf(f, " (%s)", q->origin); /* --initial */
    fputs(post, f);
    return text_close(t, f, &buf, &len);
}

static void report_blocks(St *t, FILE *out) {
    fprintf(out, "blt blocks (%u)\n", t->blocks.len);
    for (uint32_t i = 0; i < t->blocks.len; i++) {
        Block *b = &t->blocks.data[i];
        fprintf(out, "  %u %s", i + 1, sys_block_kind_names[b->kind]);
        if (b->size > 1) fprintf(out, " (size %u)", b->size);
        fputc(':', out);
        for (uint32_t k = 0; k < b->size && k < 12; k++) fprintf(out, " %s", st_sv_name(t, t->bvars.data[b->first + k]));
        if (b->size > 12) fprintf(out, " ...");
        if (b->kind == SB_ASSIGN) {
            fputs(" := ", out);
            print_capped(out, t->c, st_sv_value(t, t->bvars.data[b->first]), sv_leaf, t);
        }
        fputc('\n', out);
        if (b->ntorn && b->kind != SB_SPARSE) {
            fputs("    iteration variables:", out);
            for (uint32_t k = 0; k < b->ntorn; k++) fprintf(out, " %s", st_sv_name(t, t->torn.data[b->tfirst + k]));
            fputc('\n', out);
        }
    }
}

static void report_vars(St *t, FILE *out, const char *title, int role, bool dummy) {
    uint32_t n = 0;
    for (uint32_t i = 0; i < t->sv.len; i++)
        n += dummy ? t->sv.data[i].dummy : t->sv.data[i].role == role;
    fprintf(out, "%s (%u)", title, n);
    for (uint32_t i = 0; i < t->sv.len; i++)
        if (dummy ? t->sv.data[i].dummy : t->sv.data[i].role == role) fprintf(out, " %s", st_sv_name(t, i));
    fputc('\n', out);
}

void struct_report(St *t) {
    char *buf = NULL;
    size_t len = 0;
    FILE *out = open_memstream(&buf, &len);
    if (!out) return;
    uint32_t nal = 0, neal = 0, maxo = 0;
    for (uint32_t v = 0; v < t->nflat; v++) nal += t->alias[v] != NULL;
    for (uint32_t i = 0; i < t->m->eqs.len; i++) neal += t->eq_alias[i];
    for (uint32_t e = 0; e < t->eq.len; e++) maxo = t->eq.data[e].order > maxo ? t->eq.data[e].order : maxo;
    fprintf(out, "alias elimination: %u equations, %u variables removed\n", neal, nal);
    fprintf(out, "index reduction: %u equations differentiated (highest order %u)\n", t->eq.len - t->neq0, maxo);
    for (uint32_t e = t->neq0; e < t->eq.len; e++) {
        if (t->eq.data[e].flat < 0) continue;
        fputs("  0 = ", out);
        print_capped(out, t->c, st_eq_res(t, e), sv_leaf, t);
        fputc('\n', out);
    }
    report_vars(t, out, "states", SR_STATE, false);
    report_vars(t, out, "dummy derivatives", 0, true);
    st_report_sets(t, out);
    report_blocks(t, out);
    fclose(out);
    t->s->report = arena_strndup(t->arena, buf, len);
    free(buf);
}

static void leaf_name(void *ud, FILE *out, const Expr *e) {
    const System *s = ud;
    switch ((ExprKind)e->kind) {
    case EXPR_Y: fputs(s->y_names[e->index], out); break;
    case EXPR_YP: fprintf(out, "der(%s)", s->y_names[e->index]); break;
    case EXPR_P: fputs(s->param_names[e->index], out); break;
    case EXPR_Z: fprintf(out, "z[%s]", s->init_names && e->index < s->init_n ? s->init_names[e->index] : "?"); break;
    case EXPR_MODE: fprintf(out, "mode%u", e->index); break;
    default: fprintf(out, "%s[%u]", expr_kind_names[e->kind], e->index);
    }
}

static const char *const event_kind_names[SYS_EV_COUNT] = {
#define X(k, text) text,
    SYS_EVENT_KINDS(X)
#undef X
};

static void line(FILE *out, const System *s, const char *pre, const Expr *e) {
    fputs(pre, out);
    print_capped(out, s->ctx, e, leaf_name, (void *)s);
    fputc('\n', out);
}

typedef struct { const System *s; const SysClock *c; } TickNames;

/* in a tick, z[j] is the j-th iteration variable of the partition */
static void tick_leaf(void *ud, FILE *out, const Expr *e) {
    const TickNames *n = ud;
    if (e->kind == EXPR_Z && e->index < n->c->nw) fprintf(out, "w[%s]", n->c->w_names[e->index]);
    else leaf_name((void *)n->s, out, e);
}

static void tick_line(FILE *out, const TickNames *n, const char *pre, const Expr *e) {
    fputs(pre, out);
    print_capped(out, n->s->ctx, e, tick_leaf, (void *)n);
    fputc('\n', out);
}

static void dump_clock(FILE *out, const System *s, const SysClock *c) {
    TickNames tn = {s, c};
    fprintf(out, "  clock %s ", c->name);
    if (c->kind == DYRT_CLOCK_ZERO_CROSSING) {
        fprintf(out, "at the roots of zero crossing %d\n", c->zc);
    } else {
        fputs("periodic ", out);
        print_capped(out, s->ctx, c->period, leaf_name, (void *)s);
        line(out, s, ", offset ", c->offset);
    }
    for (uint32_t i = 0; i < c->nsample; i++) {
        fprintf(out, "    sample %s = ", s->param_names[c->sample_slot[i]]);
        line(out, s, "", c->sample[i]);
    }
    for (uint32_t i = 0; i < c->nw; i++) fprintf(out, "    iterate %s (guess its previous value)\n", c->w_names[i]);
    for (uint32_t i = 0; i < c->nw; i++) tick_line(out, &tn, "    0 = ", c->resid[i]);
    for (uint32_t i = 0; i < c->nset; i++) {
        fprintf(out, "    %s := ", s->param_names[c->set_slot[i]]);
        tick_line(out, &tn, "", c->set[i]);
    }
    for (uint32_t i = 0; i < c->ncopy; i++)
        fprintf(out, "    %s <- %s\n", s->param_names[c->copy_dst[i]], s->param_names[c->copy_src[i]]);
}

static void dump_clocks(FILE *out, const System *s) {
    if (!s->nclocks) return;
    fprintf(out, "clocks (%u), ticking order", s->nclocks);
    for (uint32_t k = 0; k < s->nclocks; k++) fprintf(out, " %s", s->clocks[s->tick_order[k]].name);
    fputc('\n', out);
    for (uint32_t c = 0; c < s->nclocks; c++) dump_clock(out, s, &s->clocks[c]);
}

void struct_dump(FILE *out, System *s) {
    sys_expand(s);
    fprintf(out, "system %s\n", s->model_name);
    if (s->report) fputs(s->report, out);
    fprintf(out, "unknowns (%u)\n", s->ny);
    for (uint32_t y = 0; y < s->ny; y++)
        fprintf(out, "  %s %s\n", s->y_is_diff[y] ? "state    " : "algebraic", s->y_names[y]);
    fprintf(out, "parameters (%u)\n", s->np);
    for (uint32_t p = 0; p < s->np; p++) {
        fprintf(out, "  %s", s->param_names[p]);
        if (s->param_default[p]) line(out, s, " = ", s->param_default[p]);
        else fputs(" (no default)\n", out);
    }
    fprintf(out, "residuals (%u), jacobian nonzeros %u\n", s->ny, s->jac_nnz);
    for (uint32_t r = 0; r < s->ny; r++) line(out, s, "  0 = ", s->resid[r]);
    if (s->ncoef_check) fprintf(out, "coefficient checks (%u)\n", s->ncoef_check);
    for (uint32_t k = 0; k < s->ncoef_check; k++) line(out, s, "  nonzero: ", s->coef_check[k]);
    fprintf(out, "events (%u)\n", s->nz);
    for (uint32_t z = 0; z < s->nz; z++) {
        fprintf(out, "  mode%u: %s %s, zero crossing ", z, event_kind_names[s->zc_kind[z]], s->zc_names[z]);
        line(out, s, "", s->zc[z]);
    }
    dump_clocks(out, s);
    fprintf(out, "initialization (%u unknowns)\n", s->init_n);
    for (uint32_t i = 0; i < s->init_n; i++) line(out, s, "  0 = ", s->init_resid[i]);
    for (uint32_t y = 0; y < s->ny; y++) {
        fprintf(out, "  start %s = ", s->y_names[y]);
        line(out, s, "", s->start[y]);
    }
}
