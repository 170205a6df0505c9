/*
 * cg_module.c -- a System -> one LLVM module: the model functions, the
 * constant arrays and the exported `const DyrtModel dyad_model`.
 *
 * Input: a System (structure/system.h) whose Exprs use codegen-level leaves.
 * Output: g->mod, not yet verified or optimized.
 *
 * The descriptor's LLVM struct type is built from the X-macro lists below,
 * which name every DyrtModel / DyrtSettings field with its LLVM kind; the
 * values are assigned by field name into arrays indexed by the same lists,
 * and cg_build checks every LLVM field offset and the total size against
 * offsetof/sizeof of the C struct, so the ABI cannot drift silently.
 * Optional functions (zero_crossings, check_asserts, init_*) and empty
 * arrays are null pointers.
 *
 * Data instead of code (ABI 3): the structure phase classified what is
 * data (System.out_copy, param_has_const, start_has_const); here those
 * become the out_copy_* / param_const / start_*_const tables and the rest
 * functions.  Each name list is one string blob plus constant GEPs into it.
 * The System's own enums (parameter flags, event kinds, copy sources) are
 * mapped to the ABI's here, the only place that knows both.
 */
#include <stddef.h>
#include <string.h>

#include "cg_internal.h"

/* ---------- descriptor layout ---------- */

#define MODEL_FIELDS(X)                                                  \
    X(I32, abi_version) X(PTR, name)                                     \
    X(I32, ny) X(I32, np) X(I32, nout) X(I32, nz) X(I32, nassert)        \
    X(PTR, y_names) X(PTR, y_is_diff) X(PTR, param_names)                \
    X(PTR, param_flags) X(PTR, out_names) X(PTR, assert_messages)        \
    X(I32, jac_nnz) X(PTR, jac_colptr) X(PTR, jac_rowidx)                \
    X(PTR, param_defaults) X(PTR, start) X(PTR, residual)                \
    X(PTR, jacobian) X(PTR, outputs) X(PTR, zero_crossings)              \
    X(PTR, check_asserts)                                                \
    X(I32, init_n) X(I32, init_nnz) X(PTR, init_colptr)                  \
    X(PTR, init_rowidx) X(PTR, init_names) X(PTR, init_residual)         \
    X(PTR, init_jacobian) X(PTR, init_guess) X(PTR, init_finish)         \
    X(SETTINGS, defaults)                                                \
    X(PTR, init_eq_names) X(PTR, initial_row) X(PTR, initial_z)         \
    X(I32, nmodes)                                                       \
    X(I32, nout_copy) X(PTR, out_copy_dest) X(PTR, out_copy_kind)        \
    X(PTR, out_copy_index) X(PTR, out_copy_scale) X(PTR, out_copy_offset) \
    X(PTR, param_has_const) X(PTR, param_const)                          \
    X(PTR, start_has_const) X(PTR, start_y_const) X(PTR, start_yp_const) \
    X(PTR, event_kind) X(PTR, event_names)                               \
    X(I32, init_ncheck) X(PTR, init_check_with) \
    X(I32, nclocks) X(PTR, clock_names) X(PTR, clock_kind) X(PTR, clock_zc) \
    X(PTR, clock_order) X(PTR, clock_timing) X(PTR, tick_sample)         \
    X(PTR, tick_nw) X(PTR, tick_w_ptr) X(PTR, tick_w_names)             \
    X(PTR, tick_residual) X(PTR, tick_jacobian) X(PTR, tick_guess)       \
    X(PTR, tick_finish) X(PTR, tick_copy_ptr) X(PTR, tick_copy_dst)      \
    X(PTR, tick_copy_src) \
    X(I32, nsrc) X(PTR, src_names) X(I32, neq) X(PTR, eq_src)            \
    X(PTR, resid_eq) X(PTR, out_eq) X(PTR, out_rank)                     \
    X(I32, nrisk) X(PTR, risk_eq) X(PTR, risk_kind) X(PTR, risk_arg) \
    X(I32, ncoef_check) X(PTR, coef_check_msgs) X(PTR, check_coefs)      \
    X(PTR, out_alias) \
    X(I32, nsets) X(PTR, set_info) X(PTR, set_state_y) X(PTR, set_init)  \
    X(PTR, set_cand_names) X(I32, set_neval) X(PTR, set_eval)            \
    X(PTR, out_conn)                                                     \
    X(I32, init_nblocks) X(PTR, init_block_ptr) X(PTR, init_block_rows)  \
    X(PTR, init_block_cols)                                              \
    X(I32, ode_nblocks) X(I32, ode_nlevels) X(PTR, ode_level_ptr)        \
    X(PTR, ode_ptr) X(PTR, ode_rows) X(PTR, ode_cols) X(PTR, ode_flags)

#define SETTINGS_FIELDS(X)                                               \
    X(F64, start) X(F64, stop) X(F64, interval) X(F64, rtol)             \
    X(F64, atol) X(F64, dtmax) X(I32, ntstops) X(PTR, tstops)

enum {
#define X(kind, f) MF_##f,
    MODEL_FIELDS(X)
#undef X
    MF_COUNT
};
enum {
#define X(kind, f) SF_##f,
    SETTINGS_FIELDS(X)
#undef X
    SF_COUNT
};

typedef enum { I32, PTR, F64, SETTINGS } FieldKind;

static const FieldKind model_kinds[MF_COUNT] = {
#define X(kind, f) kind,
    MODEL_FIELDS(X)
#undef X
};
static const size_t model_offsets[MF_COUNT] = {
#define X(kind, f) offsetof(DyrtModel, f),
    MODEL_FIELDS(X)
#undef X
};
static const FieldKind settings_kinds[SF_COUNT] = {
#define X(kind, f) kind,
    SETTINGS_FIELDS(X)
#undef X
};
static const size_t settings_offsets[SF_COUNT] = {
#define X(kind, f) offsetof(DyrtSettings, f),
    SETTINGS_FIELDS(X)
#undef X
};

static LLVMTypeRef kind_type(Cg *g, FieldKind k, LLVMTypeRef settings) {
    switch (k) {
    case I32: return g->t_i32;
    case PTR: return g->t_ptr;
    case F64: return g->t_f64;
    case SETTINGS: return settings;
    }
    return g->t_i32;
}

static LLVMTypeRef struct_type(Cg *g, const char *name, const FieldKind *kinds, int n,
                               LLVMTypeRef settings) {
    LLVMTypeRef ts[MF_COUNT];
    for (int i = 0; i < n; i++) ts[i] = kind_type(g, kinds[i], settings);
    LLVMTypeRef t = LLVMStructCreateNamed(g->ctx, name);
    LLVMStructSetBody(t, ts, (unsigned)n, 0);
    return t;
}

static int check_layout(LLVMTargetDataRef td, LLVMTypeRef t, const size_t *offs, int n,
                        size_t size, const char *what) {
    for (int i = 0; i < n; i++)
        if (LLVMOffsetOfElement(td, t, (unsigned)i) != offs[i]) {
            diag_internal("codegen: %s field %d at offset %llu, C has %zu", what, i,
                          (unsigned long long)LLVMOffsetOfElement(td, t, (unsigned)i), offs[i]);
            return 1;
        }
    if (LLVMABISizeOfType(td, t) != size) {
        diag_internal("codegen: %s has size %llu, C has %zu", what,
                      (unsigned long long)LLVMABISizeOfType(td, t), size);
        return 1;
    }
    return 0;
}

/* ---------- constant globals ---------- */

static LLVMValueRef null_ptr(Cg *g) { return LLVMConstNull(g->t_ptr); }

LLVMValueRef cg_private_constant(Cg *g, const char *name, LLVMValueRef init) {
    LLVMValueRef gv = LLVMAddGlobal(g->mod, LLVMTypeOf(init), name);
    LLVMSetInitializer(gv, init);
    LLVMSetGlobalConstant(gv, 1);
    LLVMSetLinkage(gv, LLVMPrivateLinkage);
    return gv;
}

/* mergeable: its address is never compared */
static LLVMValueRef const_global(Cg *g, const char *name, LLVMValueRef init) {
    LLVMValueRef gv = cg_private_constant(g, name, init);
    LLVMSetUnnamedAddress(gv, LLVMGlobalUnnamedAddr);
    return gv;
}

static LLVMValueRef string_ptr(Cg *g, const char *s) {
    if (!s) s = "";
    LLVMValueRef init = LLVMConstStringInContext(g->ctx, s, (unsigned)strlen(s), 0);
    return const_global(g, "str", init);
}

static LLVMValueRef array_global(Cg *g, const char *name, LLVMTypeRef elem,
                                 LLVMValueRef *vals, uint32_t n) {
    return const_global(g, name, LLVMConstArray2(elem, vals, n));
}

/* Tables and name lists: cg_data.c */
static LLVMValueRef names_global(Cg *g, const char *name, const char *const *names, uint32_t n) {
    return cg_names(g, name, names, n);
}

static LLVMValueRef u8_global(Cg *g, const char *name, const unsigned char *a, uint32_t n) {
    return cg_table(g, name, a, n, 1);
}

static LLVMValueRef i32_global(Cg *g, const char *name, const int32_t *a, uint32_t n) {
    return cg_table(g, name, a, n, 4);
}

static LLVMValueRef f64_global(Cg *g, const char *name, const double *a, uint32_t n) {
    return cg_table(g, name, a, n, 8);
}

/* ---------- model functions ---------- */

#define L(k) CG_LEAF(EXPR_##k)
#define L_DAE (L(TIME) | L(Y) | L(YP) | L(P))
#define L_MODES (L_DAE | L(MODE))
#define L_INIT (L(TIME) | L(Z) | L(P) | L(MODE)) /* modes: the choices of state sets */

static const CgFnSpec spec_params = {"dyad_param_defaults", CG_RET_VOID, 2,
                                     {CG_ARG_P, CG_ARG_GIVEN}, L(P), true};
static const CgFnSpec spec_start = {"dyad_start", CG_RET_VOID, 4,
                                    {CG_ARG_T, CG_ARG_P, CG_ARG_Y, CG_ARG_YP}, L(TIME) | L(P) | L(MODE), true};
static const CgFnSpec spec_resid = {"dyad_residual", CG_RET_STATUS, 5,
                                    {CG_ARG_T, CG_ARG_Y, CG_ARG_YP, CG_ARG_P, CG_ARG_OUT}, L_MODES, false};
static const CgFnSpec spec_jac = {"dyad_jacobian", CG_RET_STATUS, 6,
                                  {CG_ARG_T, CG_ARG_Y, CG_ARG_YP, CG_ARG_P, CG_ARG_CJ,
                                   CG_ARG_OUT}, L_MODES, false};
static const CgFnSpec spec_out = {"dyad_outputs", CG_RET_VOID, 5,
                                  {CG_ARG_T, CG_ARG_Y, CG_ARG_YP, CG_ARG_P, CG_ARG_OUT}, L_MODES, false};
static const CgFnSpec spec_zc = {"dyad_zero_crossings", CG_RET_VOID, 5,
                                 {CG_ARG_T, CG_ARG_Y, CG_ARG_YP, CG_ARG_P, CG_ARG_OUT}, L_MODES, false};
static const CgFnSpec spec_sets = {"dyad_set_eval", CG_RET_VOID, 5,
                                   {CG_ARG_T, CG_ARG_Y, CG_ARG_YP, CG_ARG_P, CG_ARG_OUT}, L_MODES, false};
static const CgFnSpec spec_coefs = {"dyad_check_coefs", CG_RET_ASSERT, 1, {CG_ARG_P}, L(P), false};
static const CgFnSpec spec_assert = {"dyad_check_asserts", CG_RET_ASSERT, 4,
                                     {CG_ARG_T, CG_ARG_Y, CG_ARG_YP, CG_ARG_P}, L_DAE, false};
static const CgFnSpec spec_iresid = {"dyad_init_residual", CG_RET_STATUS, 4,
                                     {CG_ARG_T, CG_ARG_Z, CG_ARG_P, CG_ARG_OUT}, L_INIT, true};
static const CgFnSpec spec_ijac = {"dyad_init_jacobian", CG_RET_STATUS, 4,
                                   {CG_ARG_T, CG_ARG_Z, CG_ARG_P, CG_ARG_OUT}, L_INIT, true};
static const CgFnSpec spec_iguess = {"dyad_init_guess", CG_RET_VOID, 3,
                                     {CG_ARG_T, CG_ARG_P, CG_ARG_Z}, L(TIME) | L(P) | L(MODE), true};
static const CgFnSpec spec_ifinish = {"dyad_init_finish", CG_RET_VOID, 5,
                                      {CG_ARG_T, CG_ARG_Z, CG_ARG_P, CG_ARG_Y, CG_ARG_YP}, 0, true};

static const CgFnSpec spec_timing = {"dyad_clock_timing", CG_RET_VOID, 2, {CG_ARG_P, CG_ARG_OUT}, L(P), false};
static const CgFnSpec spec_tsample = {"dyad_tick_sample", CG_RET_VOID, 4,
                                      {CG_ARG_T, CG_ARG_Y, CG_ARG_YP, CG_ARG_P}, L_DAE, false};
static const CgFnSpec spec_tresid = {"dyad_tick_residual", CG_RET_STATUS, 4,
                                     {CG_ARG_T, CG_ARG_Z, CG_ARG_P, CG_ARG_OUT}, L_INIT, false};
static const CgFnSpec spec_tjac = {"dyad_tick_jacobian", CG_RET_STATUS, 4,
                                   {CG_ARG_T, CG_ARG_Z, CG_ARG_P, CG_ARG_OUT}, L_INIT, false};
static const CgFnSpec spec_tguess = {"dyad_tick_guess", CG_RET_VOID, 3,
                                     {CG_ARG_T, CG_ARG_P, CG_ARG_Z}, L(TIME) | L(P), false};
static const CgFnSpec spec_tfinish = {"dyad_tick_finish", CG_RET_VOID, 5,
                                      {CG_ARG_T, CG_ARG_Z, CG_ARG_P, CG_ARG_Y, CG_ARG_YP}, L_INIT, false};

static CgItem item(Expr *a, CgArg dest, uint32_t index) {
    return (CgItem){.a = a, .dest_arg = (uint8_t)dest, .dest_index = index, .copy_arg = -1};
}

static CgItem *new_items(Cg *g, uint32_t n) { return ARENA_ARRAY(g->arena, CgItem, n ? n : 1); }

/* out[i] = list[i] for a whole Expr list */
static LLVMValueRef list_fn(Cg *g, const CgFnSpec *spec, Expr **list, uint32_t n,
                            CgArg dest) {
    CgItem *it = new_items(g, n);
    for (uint32_t i = 0; i < n; i++) it[i] = item(list[i], dest, i);
    return cg_emit_function(g, spec, it, n);
}

/* param_defaults: the constant defaults are the param_const table
 * (applied by the runtime first); the function stores only the others. */
static LLVMValueRef params_fn(Cg *g, const System *s, LLVMValueRef *v) {
    CgItem *it = new_items(g, s->np);
    uint32_t n = 0, nconst = 0;
    for (uint32_t k = 0; k < s->np; k++) {
        uint32_t i = s->param_order ? s->param_order[k] : k;
        if (s->param_has_const && s->param_has_const[i]) {
            nconst++;
            continue;
        }
        if (!s->param_default || !s->param_default[i]) continue;
        it[n] = item(s->param_default[i], CG_ARG_P, i);
        it[n++].guard_given = 1;
    }
    if (nconst) {
        v[MF_param_has_const] = u8_global(g, "param_has_const", s->param_has_const, s->np);
        v[MF_param_const] = f64_global(g, "param_const", s->param_const, s->np);
    }
    return cg_emit_function(g, &spec_params, it, n);
}

/* start: the start_*_const tables, and a function for the rest */
static LLVMValueRef start_fn(Cg *g, const System *s, LLVMValueRef *v) {
    uint32_t ny = s->ny, n = 0, nconst = 0;
    CgItem *it = new_items(g, 2 * ny);
    for (int d = 0; d < 2; d++)
        for (uint32_t i = 0; i < ny; i++) {
            Expr **list = d ? s->start_yp : s->start;
            if (s->start_has_const && (s->start_has_const[i] & (1u << d))) {
                nconst++;
                continue;
            }
            if (list && list[i]) it[n++] = item(list[i], d ? CG_ARG_YP : CG_ARG_Y, i);
        }
    if (nconst) {
        v[MF_start_has_const] = u8_global(g, "start_has_const", s->start_has_const, ny);
        v[MF_start_y_const] = f64_global(g, "start_y_const", s->start_y_const, ny);
        v[MF_start_yp_const] = f64_global(g, "start_yp_const", s->start_yp_const, ny);
    }
    return cg_emit_function(g, &spec_start, it, n);
}

/* ---------- outputs: copies as data ---------- */

static uint8_t copy_kind(const SysCopy *c) {
    static const uint8_t src[] = {[SYS_SRC_Y] = DYRT_SRC_Y, [SYS_SRC_YP] = DYRT_SRC_YP,
                                  [SYS_SRC_P] = DYRT_SRC_P, [SYS_SRC_TIME] = DYRT_SRC_TIME,
                                  [SYS_SRC_CONST] = DYRT_SRC_CONST};
    return (uint8_t)(src[c->src] | (c->ops & SYS_OP_NEG ? DYRT_OP_NEG : 0) |
                     (c->ops & SYS_OP_SCALE ? DYRT_OP_SCALE : 0) |
                     (c->ops & SYS_OP_OFFSET ? DYRT_OP_OFFSET : 0));
}

/* The out_copy_* tables, and the outputs function for the other columns
 * (System.out_copy ascends in dest). */
static LLVMValueRef outputs_fn(Cg *g, const System *s, LLVMValueRef *v) {
    uint32_t n = s->nout, ncopy = s->out_copy ? s->nout_copy : 0, nit = 0, c = 0;
    CgItem *it = new_items(g, n);
    int32_t *dest = ARENA_ARRAY(g->arena, int32_t, ncopy + 1);
    int32_t *index = ARENA_ARRAY(g->arena, int32_t, ncopy + 1);
    unsigned char *kind = ARENA_ARRAY(g->arena, unsigned char, ncopy + 1);
    double *scale = ARENA_ARRAY(g->arena, double, ncopy + 1);
    double *offset = ARENA_ARRAY(g->arena, double, ncopy + 1);
    for (uint32_t i = 0; i < n; i++) {
        if (c < ncopy && s->out_copy[c].dest == i) {
            const SysCopy *f = &s->out_copy[c];
            dest[c] = (int32_t)i;
            kind[c] = copy_kind(f);
            index[c] = (int32_t)f->index;
            scale[c] = f->scale;
            offset[c++] = f->offset;
            continue;
        }
        it[nit++] = item(s->out[i], CG_ARG_OUT, i);
    }
    v[MF_nout_copy] = LLVMConstInt(g->t_i32, ncopy, 0);
    v[MF_out_copy_dest] = i32_global(g, "out_copy_dest", dest, ncopy);
    v[MF_out_copy_kind] = u8_global(g, "out_copy_kind", kind, ncopy);
    v[MF_out_copy_index] = i32_global(g, "out_copy_index", index, ncopy);
    v[MF_out_copy_scale] = f64_global(g, "out_copy_scale", scale, ncopy);
    v[MF_out_copy_offset] = f64_global(g, "out_copy_offset", offset, ncopy);
    return cg_emit_function(g, &spec_out, it, nit);
}

static Expr *nonzero(Expr **list, uint32_t k) {
    if (!list || !list[k] || expr_is_const_value(list[k], 0.0)) return NULL;
    return list[k];
}

/* The entries of the scalar rows (CSC order), then each loop item's
 * (system.h: their jac_dy/jac_dyp are NULL), stored through its
 * jac_pos table. */
static LLVMValueRef jacobian_fn(Cg *g, const System *s) {
    uint32_t n = 0;
    for (uint32_t k = 0; k < s->nloops; k++) n += s->loops[k].nent;
    CgItem *it = new_items(g, s->jac_nnz + n);
    n = 0;
    for (uint32_t k = 0; k < s->jac_nnz; k++) {
        if (s->nloops && !s->jac_dy[k] && !s->jac_dyp[k]) continue;
        it[n] = item(nonzero(s->jac_dy, k), CG_ARG_OUT, k);
        it[n++].b = nonzero(s->jac_dyp, k);
    }
    for (uint32_t k = 0; k < s->nloops; k++) {
        const SysLoop *l = &s->loops[k];
        if (!l->nent) continue;
        CgLoopItem *li = ARENA_NEW(g->arena, CgLoopItem);  /* entry r of instance j: scatter[r + nent * j] */
        *li = (CgLoopItem){l, (uint16_t)l->nent, {0},
                           cg_table(g, "jac_scatter", l->jac_pos, l->count * l->nent, sizeof *l->jac_pos)};
        for (uint32_t d = 0, step = l->nent; d < l->ndim; step *= l->dim_count[d++]) li->dest_step[d] = (int32_t)step;
        for (uint32_t e = 0; e < l->nent; e++) {
            it[n] = item(nonzero(l->dy, e), CG_ARG_OUT, e); /* dest_index: the entry, for the scatter table */
            it[n].b = nonzero(l->dyp, e);
            it[n++].loop = li;
        }
    }
    return cg_emit_function(g, &spec_jac, it, n);
}

/* The residual rows: scalar ones and loop items (system.h), a loop item
 * where its first row is (its other rows are skipped). */
static LLVMValueRef residual_fn(Cg *g, const System *s) {
    CgItem *it = new_items(g, s->ny);
    uint32_t n = 0;
    for (uint32_t r = 0; r < s->ny; r++) {
        uint32_t k = s->row_loop ? s->row_loop[r] : 0;
        if (k) {
            const SysLoop *l = &s->loops[k - 1];
            if (r != l->row) continue;
            CgLoopItem *lp = ARENA_NEW(g->arena, CgLoopItem);
            *lp = (CgLoopItem){l, 1, {0}, NULL};
            for (uint32_t d = 0; d < l->ndim; d++) lp->dest_step[d] = (int32_t)l->dim_row[d];
            it[n] = item(l->res, CG_ARG_OUT, r);
            it[n++].loop = lp;
            continue;
        }
        it[n++] = item(s->resid[r], CG_ARG_OUT, r);
    }
    return cg_emit_function(g, &spec_resid, it, n);
}

static CgArg target_arg(uint8_t kind) {
    switch (kind) {
    case EXPR_Y: return CG_ARG_Y;
    case EXPR_YP: return CG_ARG_YP;
    case EXPR_P: return CG_ARG_P;
    default: return CG_ARG_COUNT;
    }
}

static LLVMValueRef init_finish_fn(Cg *g, const System *s) {
    CgItem *it = new_items(g, s->init_n);
    for (uint32_t i = 0; i < s->init_n; i++) {
        CgArg dest = target_arg(s->init_target_kind[i]);
        if (dest == CG_ARG_COUNT) {
            diag_internal("codegen: init unknown %u has target kind %d", i,
                          (int)s->init_target_kind[i]);
            g->failed = 1;
            return NULL;
        }
        it[i] = item(NULL, dest, s->init_target_index[i]);
        it[i].copy_arg = CG_ARG_Z;
        it[i].copy_index = i;
    }
    return cg_emit_function(g, &spec_ifinish, it, s->init_n);
}

/* ---------- clocks (ABI 4) ---------- */

/* one function per clock: `<spec name>.c<k>`; NULL when it has no items */
static LLVMValueRef clock_fn(Cg *g, const CgFnSpec *spec, uint32_t c, CgItem *it, uint32_t n) {
    if (!n) return null_ptr(g);
    CgFnSpec sp = *spec;
    sp.name = arena_printf(g->arena, "%s.c%u", spec->name, c);
    return cg_emit_function(g, &sp, it, n);
}

static LLVMValueRef slots_fn(Cg *g, const CgFnSpec *spec, uint32_t c, const uint32_t *slot, Expr **e,
                             uint32_t n) {
    CgItem *it = new_items(g, n);
    for (uint32_t i = 0; i < n; i++) it[i] = item(e[i], CG_ARG_P, slot[i]);
    return clock_fn(g, spec, c, it, n);
}

static LLVMValueRef list_clock_fn(Cg *g, const CgFnSpec *spec, uint32_t c, Expr **e, uint32_t n, CgArg dest) {
    CgItem *it = new_items(g, n);
    for (uint32_t i = 0; i < n; i++) it[i] = item(e[i], dest, i);
    return clock_fn(g, spec, c, it, n);
}

static LLVMValueRef fn_array(Cg *g, const char *name, LLVMValueRef *fns, uint32_t n) {
    return array_global(g, name, g->t_ptr, fns, n);
}

/* clock_timing: out[2c] = period, out[2c+1] = offset (periodic clocks) */
static LLVMValueRef timing_fn(Cg *g, const System *s) {
    CgItem *it = new_items(g, 2 * s->nclocks);
    uint32_t n = 0;
    for (uint32_t c = 0; c < s->nclocks; c++) {
        if (!s->clocks[c].period) continue;
        it[n++] = item(s->clocks[c].period, CG_ARG_OUT, 2 * c);
        it[n++] = item(s->clocks[c].offset, CG_ARG_OUT, 2 * c + 1);
    }
    return cg_emit_function(g, &spec_timing, it, n);
}

static void tick_functions(Cg *g, const System *s, LLVMValueRef *v) {
    uint32_t n = s->nclocks;
    LLVMValueRef *fs[5];
    for (int k = 0; k < 5; k++) fs[k] = ARENA_ARRAY(g->arena, LLVMValueRef, n);
    for (uint32_t c = 0; c < n; c++) {
        const SysClock *k = &s->clocks[c];
        fs[0][c] = slots_fn(g, &spec_tsample, c, k->sample_slot, k->sample, k->nsample);
        fs[1][c] = list_clock_fn(g, &spec_tresid, c, k->resid, k->nw, CG_ARG_OUT);
        fs[2][c] = list_clock_fn(g, &spec_tjac, c, k->jac, k->nw * k->nw, CG_ARG_OUT);
        fs[3][c] = list_clock_fn(g, &spec_tguess, c, k->guess, k->nw, CG_ARG_Z);
        fs[4][c] = slots_fn(g, &spec_tfinish, c, k->set_slot, k->set, k->nset);
    }
    v[MF_tick_sample] = fn_array(g, "tick_sample", fs[0], n);
    v[MF_tick_residual] = fn_array(g, "tick_residual", fs[1], n);
    v[MF_tick_jacobian] = fn_array(g, "tick_jacobian", fs[2], n);
    v[MF_tick_guess] = fn_array(g, "tick_guess", fs[3], n);
    v[MF_tick_finish] = fn_array(g, "tick_finish", fs[4], n);
    v[MF_clock_timing] = timing_fn(g, s);
}

static void clock_tables(Cg *g, const System *s, LLVMValueRef *v) {
    uint32_t n = s->nclocks, nw = 0, ncopy = 0;
    for (uint32_t c = 0; c < n; c++) nw += s->clocks[c].nw, ncopy += s->clocks[c].ncopy;
    const char **names = ARENA_ARRAY(g->arena, const char *, n), **wn = ARENA_ARRAY(g->arena, const char *, nw + 1);
    unsigned char *kind = ARENA_ARRAY(g->arena, unsigned char, n);
    int32_t *zc = ARENA_ARRAY(g->arena, int32_t, n), *order = ARENA_ARRAY(g->arena, int32_t, n);
    int32_t *nwv = ARENA_ARRAY(g->arena, int32_t, n), *wptr = ARENA_ARRAY(g->arena, int32_t, n + 1);
    int32_t *cptr = ARENA_ARRAY(g->arena, int32_t, n + 1);
    int32_t *dst = ARENA_ARRAY(g->arena, int32_t, ncopy + 1), *src = ARENA_ARRAY(g->arena, int32_t, ncopy + 1);
    for (uint32_t c = 0; c < n; c++) {
        const SysClock *k = &s->clocks[c];
        names[c] = k->name;
        kind[c] = k->kind == SYS_CLOCK_PERIODIC ? DYRT_CLOCK_PERIODIC : DYRT_CLOCK_ZERO_CROSSING;
        zc[c] = k->zc;
        order[c] = (int32_t)s->tick_order[c];
        nwv[c] = (int32_t)k->nw;
        wptr[c + 1] = wptr[c] + (int32_t)k->nw;
        for (uint32_t i = 0; i < k->nw; i++) wn[wptr[c] + i] = k->w_names[i];
        cptr[c + 1] = cptr[c] + (int32_t)k->ncopy;
        for (uint32_t i = 0; i < k->ncopy; i++) {
            dst[cptr[c] + i] = (int32_t)k->copy_dst[i];
            src[cptr[c] + i] = (int32_t)k->copy_src[i];
        }
    }
    v[MF_nclocks] = LLVMConstInt(g->t_i32, n, 0);
    v[MF_clock_names] = names_global(g, "clock_names", names, n);
    v[MF_clock_kind] = u8_global(g, "clock_kind", kind, n);
    v[MF_clock_zc] = i32_global(g, "clock_zc", zc, n);
    v[MF_clock_order] = i32_global(g, "clock_order", order, n);
    v[MF_tick_nw] = i32_global(g, "tick_nw", nwv, n);
    v[MF_tick_w_ptr] = i32_global(g, "tick_w_ptr", wptr, n + 1);
    v[MF_tick_w_names] = names_global(g, "tick_w_names", wn, nw);
    v[MF_tick_copy_ptr] = i32_global(g, "tick_copy_ptr", cptr, n + 1);
    v[MF_tick_copy_dst] = i32_global(g, "tick_copy_dst", dst, ncopy);
    v[MF_tick_copy_src] = i32_global(g, "tick_copy_src", src, ncopy);
}

/* ---------- the descriptor ---------- */

static void fill_functions(Cg *g, const System *s, LLVMValueRef *v) {
    v[MF_param_defaults] = params_fn(g, s, v);
    v[MF_start] = start_fn(g, s, v);
    v[MF_residual] = residual_fn(g, s);
    v[MF_jacobian] = jacobian_fn(g, s);
    v[MF_outputs] = outputs_fn(g, s, v);
    v[MF_zero_crossings] = s->nz ? list_fn(g, &spec_zc, s->zc, s->nz, CG_ARG_OUT) : NULL;
    v[MF_check_asserts] =
        s->nassert ? list_fn(g, &spec_assert, s->assert_cond, s->nassert, CG_ARG_OUT) : NULL;
    v[MF_check_coefs] =
        s->ncoef_check ? list_fn(g, &spec_coefs, s->coef_check, s->ncoef_check, CG_ARG_OUT) : NULL;
    if (s->init_n == 0) return;
    v[MF_init_residual] = list_fn(g, &spec_iresid, s->init_resid, s->init_n + 2 * s->init_ncheck, CG_ARG_OUT);
    CgItem *it = new_items(g, s->init_nnz);
    for (uint32_t k = 0; k < s->init_nnz; k++) it[k] = item(s->init_jac[k], CG_ARG_OUT, k);
    v[MF_init_jacobian] = cg_emit_function(g, &spec_ijac, it, s->init_nnz);
    v[MF_init_guess] = list_fn(g, &spec_iguess, s->init_guess, s->init_n, CG_ARG_Z);
    v[MF_init_finish] = init_finish_fn(g, s);
}

/* The init system's blocks (ABI 6, appended): tables only; the runtime
 * evaluates the whole init residual and Jacobian and solves the blocks
 * level by level (runtime/init.c). */
static void fill_init_blocks(Cg *g, const System *s, LLVMValueRef *v) {
    uint32_t nb = s->init_n ? s->init_nblocks : 0;
    v[MF_init_nblocks] = LLVMConstInt(g->t_i32, nb, 0);
    if (!nb) return;
    v[MF_init_block_ptr] = i32_global(g, "init_block_ptr", (const int32_t *)s->init_block_ptr, nb + 1);
    v[MF_init_block_rows] = i32_global(g, "init_block_rows", (const int32_t *)s->init_block_rows, s->init_n);
    v[MF_init_block_cols] = i32_global(g, "init_block_cols", (const int32_t *)s->init_block_cols, s->init_n);
}

/* F's blocks for Model Exchange (ABI 6, appended; system.h): tables only,
 * runtime/me.c solves them level by level. */
static void fill_ode_blocks(Cg *g, const System *s, LLVMValueRef *v) {
    uint32_t nb = s->ode_nblocks;
    v[MF_ode_nblocks] = LLVMConstInt(g->t_i32, nb, 0);
    v[MF_ode_nlevels] = LLVMConstInt(g->t_i32, nb ? s->ode_nlevels : 0, 0);
    if (!nb) return;
    v[MF_ode_level_ptr] = i32_global(g, "ode_level_ptr", (const int32_t *)s->ode_level_ptr, s->ode_nlevels + 1);
    v[MF_ode_ptr] = i32_global(g, "ode_ptr", (const int32_t *)s->ode_ptr, nb + 1);
    v[MF_ode_rows] = i32_global(g, "ode_rows", (const int32_t *)s->ode_rows, s->ny);
    v[MF_ode_cols] = i32_global(g, "ode_cols", (const int32_t *)s->ode_cols, s->ny);
    v[MF_ode_flags] = u8_global(g, "ode_flags", s->ode_flags, nb);
}

/* State sets (system.h): the info table (8 per set, in SysStateSet's
 * order), the state slots and start choices, and set_eval computing every
 * set's Jacobian entries, then the candidates' values, then their
 * derivatives. */
static void fill_sets(Cg *g, const System *s, LLVMValueRef *v) {
    v[MF_nsets] = LLVMConstInt(g->t_i32, s->nsets, 0);
    if (!s->nsets) return;
    uint32_t njac = 0, ncand = 0, nstate = 0;
    int32_t *info = ARENA_ARRAY(g->arena, int32_t, 8 * s->nsets);
    for (uint32_t k = 0; k < s->nsets; k++) {
        const SysStateSet *z = &s->sets[k];
        int32_t row[8] = {(int32_t)z->nrows, (int32_t)z->nfixed, (int32_t)z->ncand, (int32_t)z->nstates,
                          (int32_t)z->mode_first, (int32_t)z->jac_first, (int32_t)z->cand_first,
                          (int32_t)z->state_first};
        memcpy(info + 8 * k, row, sizeof row);
        njac += z->nrows * (z->nfixed + z->ncand);
        ncand += z->ncand;
        nstate += z->nstates;
    }
    v[MF_set_info] = i32_global(g, "set_info", info, 8 * s->nsets);
    v[MF_set_state_y] = i32_global(g, "set_state_y", (const int32_t *)s->set_state_y, nstate);
    v[MF_set_init] = i32_global(g, "set_init", (const int32_t *)s->set_init, nstate);
    v[MF_set_cand_names] = names_global(g, "set_cand_names", s->set_cand_names, ncand);
    uint32_t n = njac + 2 * ncand;
    CgItem *it = new_items(g, n);
    for (uint32_t i = 0; i < njac; i++) it[i] = item(s->set_jac[i], CG_ARG_OUT, i);
    for (uint32_t i = 0; i < ncand; i++) {
        it[njac + i] = item(s->set_cand_value[i], CG_ARG_OUT, njac + i);
        it[njac + ncand + i] = item(s->set_cand_der[i], CG_ARG_OUT, njac + ncand + i);
    }
    v[MF_set_neval] = LLVMConstInt(g->t_i32, n, 0);
    v[MF_set_eval] = cg_emit_function(g, &spec_sets, it, n);
}

static void fill_clocks(Cg *g, const System *s, LLVMValueRef *v) {
    v[MF_nclocks] = LLVMConstInt(g->t_i32, 0, 0);
    if (!s->nclocks) return;
    clock_tables(g, s, v);
    tick_functions(g, s, v);
}

static LLVMValueRef i32c(Cg *g, uint32_t x) { return LLVMConstInt(g->t_i32, x, 0); }

/* initial_row as given; initial_z[k] = the init unknown whose target is y_k. */
static void initial_tables(Cg *g, const System *s, LLVMValueRef *v) {
    int32_t *z = (int32_t *)arena_alloc(g->arena, sizeof(int32_t) * (s->ny ? s->ny : 1));
    for (uint32_t k = 0; k < s->ny; k++) z[k] = -1;
    for (uint32_t i = 0; i < s->init_n; i++)
        if (s->init_target_kind[i] == EXPR_Y && s->init_target_index[i] < s->ny)
            z[s->init_target_index[i]] = (int32_t)i;
    v[MF_initial_row] = i32_global(g, "initial_row", s->initial_row, s->ny);
    v[MF_initial_z] = i32_global(g, "initial_z", z, s->ny);
}

static LLVMValueRef param_flags(Cg *g, const System *s) {
    if (!s->param_flags) return null_ptr(g);
    unsigned char *f = ARENA_ARRAY(g->arena, unsigned char, s->np + 1);
    for (uint32_t i = 0; i < s->np; i++) {
        unsigned b = s->param_flags[i];
        f[i] = (unsigned char)((b & SYS_PARAM_FINAL ? DYRT_PARAM_FINAL : 0) |
                               (b & SYS_PARAM_MISSING ? DYRT_PARAM_MISSING : 0) |
                               (b & SYS_PARAM_DEPENDENT ? DYRT_PARAM_DEPENDENT : 0) |
                               (b & SYS_PARAM_REQUIRED ? DYRT_PARAM_REQUIRED : 0) |
                               (b & SYS_PARAM_DISCRETE ? DYRT_PARAM_DISCRETE : 0) |
                               (b & SYS_PARAM_INPUT ? DYRT_PARAM_INPUT : 0));
    }
    return u8_global(g, "param_flags", f, s->np);
}

/* event_kind (SysEventKind -> DYRT_EVENT_*) and event_names */
static void event_tables(Cg *g, const System *s, LLVMValueRef *v) {
    static const unsigned char abi[SYS_EV_COUNT] = {
#define X(k, text) [SYS_EV_##k] = DYRT_EVENT_##k,
        SYS_EVENT_KINDS(X)
#undef X
    };
    if (!s->nz || !s->zc_kind) return;
    unsigned char *k = ARENA_ARRAY(g->arena, unsigned char, s->nz);
    for (uint32_t i = 0; i < s->nz; i++) k[i] = abi[s->zc_kind[i]];
    v[MF_event_kind] = u8_global(g, "event_kind", k, s->nz);
    if (s->zc_names) v[MF_event_names] = names_global(g, "event_names", s->zc_names, s->nz);
}

/* origins of the values, for the runtime's message on a NaN or Inf */
static void origin_tables(Cg *g, const System *s, LLVMValueRef *v) {
    static const unsigned char abi[SYS_RISK_COUNT] = {
#define X(k, text) [SYS_RISK_##k] = DYRT_RISK_##k,
        SYS_RISK_KINDS(X)
#undef X
    };
    v[MF_nsrc] = i32c(g, s->nsrc);
    v[MF_src_names] = names_global(g, "src_names", s->src_names, s->nsrc);
    v[MF_neq] = i32c(g, s->neq);
    v[MF_eq_src] = i32_global(g, "eq_src", s->eq_src, s->neq);
    v[MF_resid_eq] = i32_global(g, "resid_eq", s->resid_eq, s->resid_eq ? s->ny : 0);
    v[MF_out_eq] = i32_global(g, "out_eq", s->out_eq, s->out_eq ? s->nout : 0);
    v[MF_out_rank] = i32_global(g, "out_rank", s->out_rank, s->out_rank ? s->nout : 0);
    uint32_t n = s->risk ? s->nrisk : 0;
    int32_t *eq = ARENA_ARRAY(g->arena, int32_t, n + 1), *arg = ARENA_ARRAY(g->arena, int32_t, n + 1);
    unsigned char *kind = ARENA_ARRAY(g->arena, unsigned char, n + 1);
    for (uint32_t i = 0; i < n; i++) {
        eq[i] = (int32_t)s->risk[i].eq;
        kind[i] = abi[s->risk[i].kind];
        arg[i] = s->risk[i].arg;
    }
    v[MF_nrisk] = i32c(g, n);
    v[MF_risk_eq] = i32_global(g, "risk_eq", eq, n);
    v[MF_risk_kind] = u8_global(g, "risk_kind", kind, n);
    v[MF_risk_arg] = i32_global(g, "risk_arg", arg, n);
}

static void fill_data(Cg *g, const System *s, LLVMValueRef *v) {
    v[MF_abi_version] = i32c(g, DYRT_ABI_VERSION);
    v[MF_name] = string_ptr(g, s->model_name);
    v[MF_ny] = i32c(g, s->ny);
    v[MF_np] = i32c(g, s->np);
    v[MF_nout] = i32c(g, s->nout);
    v[MF_nz] = i32c(g, s->nz);
    v[MF_nassert] = i32c(g, s->nassert);
    v[MF_y_names] = names_global(g, "y_names", s->y_names, s->ny);
    v[MF_y_is_diff] = u8_global(g, "y_is_diff", s->y_is_diff, s->ny);
    v[MF_param_names] = names_global(g, "param_names", s->param_names, s->np);
    v[MF_param_flags] = param_flags(g, s);
    v[MF_out_names] = names_global(g, "out_names", s->out_names, s->nout);
    v[MF_out_alias] = i32_global(g, "out_alias", s->out_alias, s->nout);
    v[MF_out_conn] = u8_global(g, "out_conn", s->out_conn, s->out_conn ? s->nout : 0);
    v[MF_assert_messages] = names_global(g, "assert_messages", s->assert_msg, s->nassert);
    v[MF_ncoef_check] = i32c(g, s->ncoef_check);
    v[MF_coef_check_msgs] = names_global(g, "coef_check_msgs", s->coef_check_msg, s->ncoef_check);
    v[MF_jac_nnz] = i32c(g, s->jac_nnz);
    v[MF_jac_colptr] = i32_global(g, "jac_colptr", s->jac_colptr, s->ny + 1);
    v[MF_jac_rowidx] = i32_global(g, "jac_rowidx", s->jac_rowidx, s->jac_nnz);
    uint32_t in = s->init_n;
    v[MF_init_n] = i32c(g, in);
    v[MF_init_nnz] = i32c(g, in ? s->init_nnz : 0);
    v[MF_init_colptr] = in ? i32_global(g, "init_colptr", s->init_colptr, in + 1) : NULL;
    v[MF_init_rowidx] = in ? i32_global(g, "init_rowidx", s->init_rowidx, s->init_nnz) : NULL;
    v[MF_init_names] = in ? names_global(g, "init_names", s->init_names, in) : NULL;
    v[MF_nmodes] = i32c(g, s->nz);
    event_tables(g, s, v);
    origin_tables(g, s, v);
    if (in && s->init_eq_names)
        v[MF_init_eq_names] = names_global(g, "init_eq_names", s->init_eq_names, in + s->init_ncheck);
    v[MF_init_ncheck] = i32c(g, in ? s->init_ncheck : 0);
    if (in && s->init_ncheck)
        v[MF_init_check_with] = names_global(g, "init_check_with", s->init_check_with, s->init_ncheck);
    if (in && s->initial_row) initial_tables(g, s, v);
}

static LLVMValueRef settings_value(Cg *g, const System *s, LLVMTypeRef t) {
    LLVMValueRef v[SF_COUNT];
    v[SF_start] = LLVMConstReal(g->t_f64, s->start_time);
    v[SF_stop] = LLVMConstReal(g->t_f64, s->stop_time);
    v[SF_interval] = LLVMConstReal(g->t_f64, s->interval);
    v[SF_rtol] = LLVMConstReal(g->t_f64, s->rtol);
    v[SF_atol] = LLVMConstReal(g->t_f64, s->atol);
    v[SF_dtmax] = LLVMConstReal(g->t_f64, s->dtmax);
    v[SF_ntstops] = i32c(g, s->ntstops);
    v[SF_tstops] = f64_global(g, "tstops", s->tstops, s->ntstops);
    return LLVMConstNamedStruct(t, v, SF_COUNT);
}

static int emit_descriptor(Cg *g, const System *s, LLVMTargetDataRef td) {
    LLVMTypeRef st = struct_type(g, "DyrtSettings", settings_kinds, SF_COUNT, NULL);
    LLVMTypeRef mt = struct_type(g, "DyrtModel", model_kinds, MF_COUNT, st);
    if (check_layout(td, st, settings_offsets, SF_COUNT, sizeof(DyrtSettings), "DyrtSettings") ||
        check_layout(td, mt, model_offsets, MF_COUNT, sizeof(DyrtModel), "DyrtModel"))
        return 1;
    LLVMValueRef v[MF_COUNT] = {0};
    fill_data(g, s, v);
    fill_functions(g, s, v);
    fill_clocks(g, s, v);
    fill_sets(g, s, v);
    fill_init_blocks(g, s, v);
    fill_ode_blocks(g, s, v);
    cg_emit_functions(g);
    cg_emit_names_init(g);
    if (g->failed) return 1;
    v[MF_defaults] = settings_value(g, s, st);
    for (int i = 0; i < MF_COUNT; i++)
        if (!v[i]) v[i] = null_ptr(g);
    LLVMValueRef gv = LLVMAddGlobal(g->mod, mt, DYRT_MODEL_SYMBOL);
    LLVMSetInitializer(gv, LLVMConstNamedStruct(mt, v, MF_COUNT));
    LLVMSetGlobalConstant(gv, 1);
    return 0;
}

/* ---------- setup ---------- */

/* The scratch arena (items, per-node tables, name blobs) is dead once the
 * module is built: given back before optimization and object emission. */
static void release_scratch(Cg *g) {
    arena_free(g->arena);
    g->arena = NULL;
    g->node_of = NULL;
    g->memo = NULL;
    g->memo_stamp = g->count_stamp = g->stride_stamp = NULL;
    g->loop_stride = g->nest_stride = g->box_stride = NULL;
    g->nest_stamp = NULL;
    g->cut_slot = g->share_slot = NULL;
    g->cut_gen_of = g->cut_size = g->cut_seen = g->share_gen_of = g->share_owner = NULL;
    memset(&g->pending, 0, sizeof g->pending);
    memset(&g->name_lists, 0, sizeof g->name_lists);
    memset(&g->stack, 0, sizeof g->stack);
}

int cg_build(Cg *g, const System *s, const CgOptions *o, LLVMContextRef ctx,
             LLVMTargetMachineRef tm, bool split) {
    memset(g, 0, sizeof *g);
    g->sys = s;
    g->opt = o;
    g->arena = arena_new();
    g->ctx = ctx;
    g->chunk_cap = o && o->chunk_nodes ? o->chunk_nodes : CG_CHUNK_MAX_NODES;
    g->mod = LLVMModuleCreateWithNameInContext(s->model_name ? s->model_name : "model", ctx);
    g->bld = LLVMCreateBuilderInContext(ctx);
    g->t_f64 = LLVMDoubleTypeInContext(ctx);
    g->t_i32 = LLVMInt32TypeInContext(ctx);
    g->t_i8 = LLVMInt8TypeInContext(ctx);
    g->t_i1 = LLVMInt1TypeInContext(ctx);
    g->t_ptr = LLVMPointerTypeInContext(ctx, 0);
    g->cur_mod = g->mod;
    if (split) g->bulk = LLVMModuleCreateWithNameInContext("bulk", ctx);
    char *triple = LLVMGetTargetMachineTriple(tm);
    LLVMTargetDataRef td = LLVMCreateTargetDataLayout(tm);
    g->big_endian = LLVMByteOrder(td) == LLVMBigEndian;
    LLVMModuleRef mods[2] = {g->mod, g->bulk};
    for (int i = 0; i < 2 && mods[i]; i++) {
        LLVMSetTarget(mods[i], triple);
        LLVMSetModuleDataLayout(mods[i], td);
    }
    LLVMDisposeMessage(triple);
    g->stamp = 1;
    g->cut_limit = INT32_MAX;
    int rc = emit_descriptor(g, s, td);
    LLVMDisposeTargetData(td);
    release_scratch(g);
    return rc;
}

void cg_dispose(Cg *g) {
    if (g->bld) LLVMDisposeBuilder(g->bld);
    if (g->mod) LLVMDisposeModule(g->mod);
    if (g->bulk) LLVMDisposeModule(g->bulk);
    if (g->arena) arena_free(g->arena);
    memset(g, 0, sizeof *g);
}
