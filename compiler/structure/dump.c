/*
 * dump.c -- deterministic text of a System (`dyadc flatten --structure`).
 */
#include "structure.h"


static void leaf_name(void *ud, FILE *out, const Expr *e) {
    const System *s = ud;
    switch ((ExprKind)e->kind) {
    case EXPR_Y: fputs(s->y_names[e->index], out); break;
    case EXPR_YP: fprintf(out, "der(%s)", s->y_names[e->index]); break;
    case EXPR_P: fputs(s->param_names[e->index], out); break;
    case EXPR_Z: fprintf(out, "z[%s]", s->init_names[e->index]); break;
    default: fprintf(out, "%s[%u]", expr_kind_names[e->kind], e->index);
    }
}

static void line(FILE *out, const System *s, const char *pre, const Expr *e) {
    fputs(pre, out);
    expr_print(out, e, leaf_name, (void *)s);
    fputc('\n', out);
}

void struct_dump(FILE *out, const System *s) {
    fprintf(out, "system %s\n", s->model_name);
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
    fprintf(out, "initialization (%u unknowns)\n", s->init_n);
    for (uint32_t i = 0; i < s->init_n; i++) line(out, s, "  0 = ", s->init_resid[i]);
    for (uint32_t y = 0; y < s->ny; y++) {
        fprintf(out, "  start %s = ", s->y_names[y]);
        line(out, s, "", s->start[y]);
    }
}
