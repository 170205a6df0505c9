/*
 * analysis.c -- `analysis X extends TransientAnalysis(stop = 10, ...)` with
 * `model = M(...)`: the analysis instance is built (inheritance and
 * modifications as for components) but not elaborated; its parameters are
 * evaluated at compile time, and its `model` element is flattened as the
 * top component with the modifications the analysis gives it (which may
 * refer to the analysis' parameters).  The options become FlatSettings:
 * start, stop, saveat (output interval), reltol, abstol, dtmax, tstops, alg.
 */
#include "flatten_internal.h"
#include "numfmt.h"

#include <string.h>

static bool num_option(Flattener *F, Inst *a, const char *name, double *out, bool required) {
    Elem *e = inst_elem(a, intern_cstr(F->prog->in, name));
    if (!e || e->kind != ELEM_VAR) return !required;
    if (!e->value.expr || e->value.expr->kind == AST_MISSING) {
        if (required) diag_error(a->def->node->span, "analysis `%s` needs a value for `%s`", a->def->name, name);
        return !required;
    }
    Val v;
    if (!elem_const(F, e, &v) || !val_present(&v, e->value.expr)) return false;
    if (v.nd || v.str) {
        diag_error(e->value.expr->span, "`%s` must be a number", name);
        return false;
    }
    *out = v.s->value;
    return true;
}

static bool read_tstops(Flattener *F, Inst *a, FlatSettings *s) {
    Elem *e = inst_elem(a, intern_cstr(F->prog->in, "tstops"));
    if (!e || e->kind != ELEM_VAR || !e->value.expr) return true;
    Val v;
    if (!elem_const(F, e, &v) || !val_present(&v, e->value.expr)) return false;
    if (v.str || v.nd > 1) {
        diag_error(e->value.expr->span, "`tstops` must be a vector of times");
        return false;
    }
    s->ntstops = v.n;
    s->tstops = ARENA_ARRAY(F->keep, double, v.n ? v.n : 1);
    for (uint32_t i = 0; i < v.n; i++) s->tstops[i] = val_at(&v, i)->value;
    return true;
}

static void read_alg(Flattener *F, Inst *a, FlatSettings *s) {
    Elem *e = inst_elem(a, intern_cstr(F->prog->in, "alg"));
    Val v;
    if (e && e->kind == ELEM_VAR && e->value.expr && e->value.expr->kind == AST_STR && elem_const(F, e, &v))
        s->alg = intern_cstr(F->prog->in, v.str);
}

static bool read_settings(Flattener *F, Inst *a, FlatSettings *s) {
    s->has = true;
    s->start = 0;
    s->stop = 1;
    s->rtol = s->atol = 1e-6;
    bool ok = num_option(F, a, "start", &s->start, false);
    ok = num_option(F, a, "stop", &s->stop, true) && ok;
    ok = num_option(F, a, "reltol", &s->rtol, false) && ok;
    ok = num_option(F, a, "abstol", &s->atol, false) && ok;
    ok = num_option(F, a, "saveat", &s->interval, false) && ok;
    ok = num_option(F, a, "dtmax", &s->dtmax, false) && ok;
    ok = read_tstops(F, a, s) && ok;
    read_alg(F, a, s);
    if (ok && s->stop < s->start) {
        diag_error(a->def->node->span, "analysis `%s`: `stop` (%s) is before `start` (%s)", a->def->name,
                   dyrt_num(s->stop).s, dyrt_num(s->start).s);
        ok = false;
    }
    return ok;
}

FlatModel *flatten_analysis(Flattener *F, Def *d) {
    unsigned errors = diag_error_count();
    Inst *a = inst_build_top(F, d);
    if (diag_error_count() > errors) return NULL;
    Elem *model = inst_elem(a, intern_cstr(F->prog->in, "model"));
    if (!model || model->kind != ELEM_INST || !strcmp(model->def->name, "EmptyComponent")) {
        diag_error(d->node->span, "analysis `%s` does not say which model to use; add `model = Name(...)`", d->name);
        return NULL;
    }
    FlatSettings s = {0};
    if (!read_settings(F, a, &s)) return NULL;
    F->m->name = intern_cstr(F->prog->in, model->def->qname);
    FlatModel *m = flatten_model_of(F, model->def, &model->mods);
    if (m) m->settings = s;
    return m;
}
