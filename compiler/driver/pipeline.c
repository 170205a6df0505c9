/*
 * pipeline.c -- the command handlers of commands.h: each runs the phases
 * its command needs (load libraries, parse, flatten, units, structure,
 * codegen, jit/emit, link, simulate), stops between phases when an error
 * was reported, and brackets each phase on the phase clock (progress.c:
 * progress on stderr, --time-passes).
 */
#include "driver.h"
#include "outfile.h"

#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static bool dir_exists(const char *p) {
    struct stat st;
    return p && stat(p, &st) == 0 && S_ISDIR(st.st_mode);
}

/* <dir of this executable>/<rel>, if it is a directory */
static const char *beside_exe(Driver *d, const char *rel) {
    char buf[4096];
    ssize_t n = readlink("/proc/self/exe", buf, sizeof buf - 1);
    if (n <= 0) return NULL;
    buf[n] = 0;
    char *slash = strrchr(buf, '/');
    if (slash) *slash = 0;
    const char *p = arena_printf(d->arena, "%s/%s", buf, rel);
    return dir_exists(p) ? p : NULL;
}

const char *driver_stdlib_dir(Driver *d) {
    const char *env = getenv("DYADC_STDLIB");
    if (env && *env) return env;
    const char *p = beside_exe(d, "../share/dyadc/stdlib");
    return p ? p : DYADC_SOURCE_STDLIB;
}

static const char *runtime_dir(Driver *d) {
    const char *env = getenv("DYADC_RUNTIME_DIR");
    if (env && *env) return env;
    const char *p = beside_exe(d, "../lib/dyadc");
    return p ? p : DYADC_BUILD_RUNTIME;
}

/* stdlib: every library folder in it */
static void load_stdlib(Driver *d, Program *p) {
    const char *dir = driver_stdlib_dir(d);
    if (!dir_exists(dir)) {
        diag_warning((Span){0}, "standard library not found at '%s' (set DYADC_STDLIB)", dir);
        return;
    }
    static const char *const libs[] = {"Dyad", "BlockComponents", "ElectricalComponents",
                                       "TranslationalComponents", "RotationalComponents",
                                       "ThermalComponents", "MultibodyComponents", "DiscreteComponents"};
    for (size_t i = 0; i < sizeof libs / sizeof libs[0]; i++) {
        const char *lp = arena_printf(d->arena, "%s/%s", dir, libs[i]);
        if (dir_exists(lp)) sema_load_path(p, lp);
    }
}

/* The libraries, as a Program in arena a; its source files are always in
 * the compilation arena (diagnostics print their lines until the end). */
static Program *load_libs_in(Driver *d, Arena *a) {
    Program *p = sema_new(a, d->in);
    p->sources = d->arena;
    if (!d->no_stdlib) load_stdlib(d, p);
    for (uint32_t i = 0; i < d->libs.len; i++) sema_load_path(p, d->libs.data[i]);
    return p;
}

Program *driver_load_libs(Driver *d) { return load_libs_in(d, d->arena); }

/* libraries and inputs */
static Program *load(Driver *d, Arena *a) {
    Program *p = load_libs_in(d, a);
    for (uint32_t i = 0; i < d->inputs.len; i++) sema_load_path(p, d->inputs.data[i]);
    return p;
}

/* front end (parse/fmt commands): `fmt --check` formats into memory and
 * names each file whose text differs from its canonical form. */
static bool fmt_differs(const SrcFile *src, const AstFile *f) {
    char *buf = NULL;
    size_t len = 0;
    FILE *m = open_memstream(&buf, &len);
    if (!m) return true;
    ast_format(m, f);
    fclose(m);
    bool differs = len != src->len || memcmp(buf, src->text, len) != 0;
    free(buf);
    return differs;
}

static int parse_only(Driver *d) {
    phase_begin(d->clock, "parse", true);
    if (!d->inputs.len) {
        fputs("dyadc: error: no input files\n", stderr);
        return 1;
    }
    unsigned unformatted = 0;
    for (uint32_t i = 0; i < d->inputs.len; i++) {
        SrcFile *src = src_load(d->arena, d->inputs.data[i]);
        if (!src) continue;
        unsigned errors_before = diag_error_count();
        AstFile *f = parse_file(d->arena, d->in, src);
        bool ok = diag_error_count() == errors_before;
        if (d->cmd == CMD_PARSE && d->dump_ast) ast_dump_opts(stdout, f, !d->no_spans);
        if (d->cmd == CMD_FMT && !d->fmt_check && ok) ast_format(stdout, f);
        if (d->cmd == CMD_FMT && d->fmt_check && ok && fmt_differs(src, f)) {
            fprintf(stderr, "%s: not formatted\n", d->inputs.data[i]);
            unformatted++;
        }
    }
    return diag_error_count() || unformatted ? 1 : 0;
}

typedef struct {
    Driver *d;
    Program *p;
    unsigned checked, failed, external;
} CheckCtx;

static void check_def(void *ud, Def *def) {
    CheckCtx *c = ud;
    AstKind k = def->node->kind;
    if ((k != AST_COMPONENT && k != AST_ANALYSIS) || def->node->def.prefix == DEF_PARTIAL) return;
    if (def->node->def.prefix == DEF_EXTERNAL) { /* the body is Julia code */
        c->external++;
        return;
    }
    unsigned errors = diag_error_count();
    ExprCtx *ctx = expr_ctx_new(c->d->arena);
    FlatModel *m = flatten(c->p, def, ctx);
    if (m) flat_check_units(m, c->d->werror_units);
    if (m) flat_check_balance(m, def, true);
    c->checked++;
    c->failed += diag_error_count() > errors;
}

int cmd_parse(Driver *d) { return parse_only(d); }
int cmd_fmt(Driver *d) { return parse_only(d); }

/* "1 error", "2 errors" */
static const char *count(Driver *d, unsigned n, const char *what) {
    return arena_printf(d->arena, "%u %s%s", n, what, n == 1 ? "" : "s");
}

int cmd_check(Driver *d) {
    phase_begin(d->clock, "parse", true);
    Program *p = load(d, d->arena);
    CheckCtx c = {d, p, 0, 0, 0};
    unsigned load_errors = diag_errors_shown();
    phase_begin(d->clock, "check", true);
    sema_each_def(p, check_def, &c);
    phase_end(d->clock);
    fprintf(stderr, "checked %s (%u with errors", count(d, c.checked, "component"), c.failed);
    if (c.external) fprintf(stderr, ", %u external skipped", c.external);
    if (load_errors) fprintf(stderr, ", %s while loading", count(d, load_errors, "error"));
    fprintf(stderr, "): %s, %s\n", count(d, diag_errors_shown(), "error"), count(d, diag_warnings_shown(), "warning"));
    return diag_error_count() ? 1 : 0;
}

/* --initial NAME=VALUE (run, build): initial relations of the flat model
 * that replace the model's own initial values of NAME (any variable) */
static bool add_initials(Driver *d, FlatModel *m) {
    if (!d->initial_args.len) return true;
    Vec(char *) argv = {0};
    vec_push(d->arena, &argv, "dyadc");
    for (uint32_t i = 0; i < d->initial_args.len; i++) vec_push(d->arena, &argv, d->initial_args.data[i]);
    DyrtOptions o;
    dyrt_options_init(&o);
    bool ok = dyrt_options_parse(&o, (int)argv.len, argv.data) == 0;
    for (int i = 0; ok && i < o.ninitials; i++)
        ok = flat_add_initial(m, o.initials[i].name, o.initials[i].value, (Span){0}, "--initial");
    dyrt_options_free(&o);
    return ok;
}

/* parse, flatten, units, and the balance check when the structure phase
 * follows: the FlatModel to structure, or NULL (*flat_out: the one to dump).
 * The Program and its ASTs are in `ast`. */
static FlatModel *front_end(Driver *d, Arena *ast, FlatModel **flat_out) {
    phase_begin(d->clock, "parse", true);
    Program *p = load(d, ast);
    if (diag_error_count()) return NULL;
    Def *def = sema_find(p, d->model);
    if (!def) return NULL;
    phase_begin(d->clock, "flatten", true);
    FlatModel *m = flatten(p, def, expr_ctx_new(d->arena));
    if (!m || !add_initials(d, m)) return NULL;
    phase_begin(d->clock, "units", true);
    flat_check_units(m, d->werror_units);
    phase_end(d->clock);
    if (diag_error_count()) return NULL;
    if (flat_out) *flat_out = m;
    if (d->cmd == CMD_FLATTEN && !d->structure) return NULL;
    phase_begin(d->clock, "structure", true);
    return flat_check_balance(m, def, false) ? m : NULL; /* located, with candidates */
}

static System *compile_to_system(Driver *d, FlatModel **flat_out) {
    /* state sets in every FMU: Co-Simulation switches them inside
     * fmi2DoStep, Model Exchange at events (docs/FMI.md, "State sets") */
    StructOptions so = {.static_states = false, .no_report = !(d->cmd == CMD_FLATTEN && d->structure)};
    if (!d->model) {
        const char *cmd = driver_command_name(d->cmd);
        fprintf(stderr, "dyadc: error: which component? `dyadc %s` needs --model NAME (or --analysis NAME)\n"
                        "(run `dyadc help %s` for usage)\n", cmd, cmd);
        return NULL;
    }
    /* The Program and its ASTs are dead once the model is flattened (the
     * FlatModel points into the compilation arena and the interner only):
     * given back before the structure phase. */
    Arena *ast = arena_new();
    FlatModel *m = front_end(d, ast, flat_out);
    arena_free(ast);
    if (!m) return NULL;
    System *s = structure_with(m, &so);
    phase_end(d->clock);
    return s;
}

int cmd_flatten(Driver *d) {
    FlatModel *m = NULL;
    System *s = compile_to_system(d, &m);
    if (diag_error_count() || !m) return 1;
    if (d->structure && s) struct_dump(stdout, s);
    else flat_dump(stdout, m);
    return 0;
}

/* codegen's machine-code step (CgOptions.on_step) is a phase of its own */
static void codegen_step(void *ctx, const char *step) {
    Driver *d = ctx;
    phase_begin(d->clock, step, true);
}

static System *compile_for_code(Driver *d, CgOptions *o) {
    System *s = compile_to_system(d, NULL);
    if (!s || diag_error_count()) return NULL;
    expr_ctx_seal(s->ctx);   /* codegen only reads the expressions */
    cg_options_init(o);
    o->opt_level = d->opt_level;
    o->on_step = codegen_step;
    o->on_step_ctx = d;
    if (d->emit_llvm) {
        phase_begin(d->clock, "emit-llvm", true);
        cg_dump_ir(s, o, stdout);
    }
    return s;
}

int cmd_build(Driver *d) {
    if (!d->output) {
        fputs("dyadc: error: build needs -o EXE (the simulator to write)\n", stderr);
        return 1;
    }
    OutFile out;
    int rc = outf_open(d->arena, d->output, d->inputs.data, d->inputs.len, &out);   /* before any work: -o DIR refused */
    CgOptions o;
    System *s = rc ? NULL : compile_for_code(d, &o);
    if (s) {
        const char *objs[3] = {outf_scratch(d->arena, &out, "model.o"),
                               outf_scratch(d->arena, &out, "model-bulk.o"), NULL};
        phase_begin(d->clock, "codegen", true);
        rc = cg_emit_object(s, &o, objs[0], objs[1]);
        phase_begin(d->clock, "link", true);
        if (rc == 0) rc = cg_link_executable(objs, out.tmp, runtime_dir(d), out.scratch);
        if (rc == 0) rc = outf_commit(&out);
        phase_end(d->clock);
    }
    outf_close(&out);
    return s ? rc : 1;
}

int cmd_run(Driver *d) {
    CgOptions o;
    System *s = compile_for_code(d, &o);
    if (!s) return 1;
    phase_begin(d->clock, "codegen", true);
    CgJit *j = cg_jit_compile(s, &o);
    phase_end(d->clock);
    if (!j) return DYRT_EXIT_INTERNAL;
    Vec(char *) args = {0};
    vec_push(d->arena, &args, (char *)d->model);
    for (uint32_t i = 0; i < d->sim_args.len; i++) vec_push(d->arena, &args, d->sim_args.data[i]);
    phase_begin(d->clock, "simulate", false); /* the runtime shows its own progress */
    int rc = dyrt_main(cg_jit_model(j), (int)args.len, args.data);
    phase_end(d->clock);
    cg_jit_free(j);
    return rc;
}

/* `dyadc fmu`: modelDescription.xml, object, shared object, zip (docs/FMI.md). */
static int fmu_kind(Driver *d, FmiExport *x) {
    const char *k = d->fmu_kind ? d->fmu_kind : "both";
    if (strcmp(k, "me") && strcmp(k, "cs") && strcmp(k, "both")) {
        fprintf(stderr, "dyadc: error: --kind %s: expected me, cs or both\n", k);
        return 1;
    }
    x->me = strcmp(k, "cs") != 0;
    x->cs = strcmp(k, "me") != 0;
    return 0;
}

static int fmu_write(Driver *d, OutFile *out);

int cmd_fmu(Driver *d) {
    if (!d->output) {
        fputs("dyadc: error: fmu needs -o NAME.fmu (the FMU to write)\n", stderr);
        return 1;
    }
    OutFile out;
    if (outf_open(d->arena, d->output, d->inputs.data, d->inputs.len, &out)) {
        outf_close(&out);
        return 1;
    }
    int rc = fmu_write(d, &out);
    outf_close(&out);
    return rc;
}

static int fmu_write(Driver *d, OutFile *out) {
    FlatModel *m = NULL;
    System *s = compile_to_system(d, &m);
    if (!s || !m || diag_error_count()) return 1;
    FmiExport x = {.model_identifier = fmi_identifier(d->arena, d->output), .version = DYADC_VERSION};
    if (fmu_kind(d, &x)) return 1;
    phase_begin(d->clock, "fmi", true);
    char *xml = NULL;
    size_t len = 0;
    FILE *mem = open_memstream(&xml, &len);
    int rc = mem ? fmi_describe(mem, s, m, &x) : 1;
    if (mem) fclose(mem);
    CgOptions o;
    cg_options_init(&o);
    o.opt_level = d->opt_level;
    o.on_step = codegen_step;
    o.on_step_ctx = d;
    const char *objs[3] = {outf_scratch(d->arena, out, "model.o"),
                           outf_scratch(d->arena, out, "model-bulk.o"), NULL};
    const char *so = outf_scratch(d->arena, out, "model.so");
    phase_begin(d->clock, "codegen", true);
    if (rc == 0) rc = cg_emit_object(s, &o, objs[0], objs[1]);
    phase_begin(d->clock, "link", true);
    if (rc == 0) rc = cg_link_shared(objs, so, runtime_dir(d), out->scratch);
    if (rc == 0) rc = fmi_archive(out->tmp, xml, len, so, &x);
    if (rc == 0) rc = outf_commit(out);
    phase_end(d->clock);
    free(xml);
    return rc ? 1 : 0;
}
