/*
 * fmi_import.c -- a small FMI 2.0 importer for the tests, independent of
 * the runtime: it unpacks an FMU (libzip), checks its modelDescription.xml,
 * dlopens the binary and drives the standard's calling sequences.
 *
 *   fmi_import FMU check                      description checks; the binary in
 *                                             binaries/linux64 and x86_64-linux
 *                                             (the same bytes) loads
 *   fmi_import FMU unpack DIR                 ... and DIR/modelDescription.xml, DIR/<id>.so
 *   fmi_import FMU cs  STOP DT OUT.csv [TOL]  fmi2DoStep every DT (TOL: the
 *                                             experiment's tolerance)
 *   fmi_import FMU me-rk4 STOP DT OUT.csv H   ME, classic RK4, step H
 *                                             (ME with canGetAndSetFMUstate: the state
 *                                             at the middle saved, serialized, restored
 *                                             after the run and the second half rerun:
 *                                             the same bits at the end)
 *   fmi_import FMU me-dopri STOP DT OUT.csv TOL   ME, Dormand-Prince 5(4),
 *                                             adaptive, |err| <= TOL (1 + |x|)
 *   fmi_import FMU misuse                     wrong call sequences: each
 *                                             must return fmi2Error and log
 *   fmi_import compare A.csv B.csv RTOL [FLOOR]  columns of A vs the same-named
 *                                             columns of B at the same times,
 *                                             relative to max(max |B|, FLOOR = 1e-8)
 *
 * Environment FMI_INPUTS="NAME=VALUE,...": inputs (causality input) set
 * to these constants right after fmi2Instantiate (and checked to be
 * inputs).
 *
 * OUT.csv: time and every continuous variable (the model's variables, by
 * name), one row per multiple of DT up to STOP -- the rows `dyadc run
 * --interval DT` writes.  ME event handling (both integrators): the event
 * indicators are checked after every step; a sign change is located by
 * bisection on the step size (to 1e-12 relative), the step repeated to the
 * event, then Event Mode (fmi2NewDiscreteStates until no new states are
 * needed), as FMI 2.0.4 section 3.2.4 prescribes; time events (
 * nextEventTime) end a step exactly.  Exit status 0 when all went as
 * expected, 1 with a message otherwise.
 */
#include <dlfcn.h>
#include <float.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <time.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zip.h>

#include "fmi2.h"

#define MAXV 20000

typedef struct Var {
    char name[256];
    unsigned vr;
    char causality[32], variability[32], initial[32];
    int derivative;            /* 1-based index of the state, 0 */
    int has_start;
} Var;

typedef struct Model {
    char guid[64], id[128];
    int nz, me, cs;
    int me_state;              /* ModelExchange canGetAndSetFMUstate and canSerializeFMUstate */
    int cs_state;              /* the same for CoSimulation */
    int me_dd;                 /* ModelExchange providesDirectionalDerivative */
    Var *v;
    int nv;
    int *outputs, nout, *ders, nder, *inits, ninit;
    int **out_deps, **der_deps, **init_deps; /* [nout], [nder], [ninit]: the
                                     `dependencies` of each, 0-terminated; NULL
                                     when absent */
} Model;

#define FN_POINTER(name, ret, params) ret (*name) params;
typedef struct Api {
    FMI2_FUNCTIONS(FN_POINTER)
} Api;

static Model M;
static Api F;
static int logged;             /* messages the FMU logged */

static int die(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fputs("fmi_import: ", stderr);
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    va_end(ap);
    exit(1);
}

static void logger(fmi2ComponentEnvironment env, fmi2String name, fmi2Status st, fmi2String cat,
                   fmi2String fmt, ...)
{
    (void)env;
    va_list ap;
    va_start(ap, fmt);
    fprintf(stderr, "  [%s %d %s] ", name, (int)st, cat);
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    va_end(ap);
    logged++;
}

/* ------------------------------------------------------------ unpacking */

static char *unpack(const char *fmu, const char *dir, size_t *xml_len)
{
    int err;
    zip_t *z = zip_open(fmu, ZIP_RDONLY, &err);
    if (!z)
        die("cannot open %s (libzip error %d)", fmu, err);
    char *xml = NULL, *bin[2] = {NULL, NULL};
    size_t bin_size[2] = {0, 0};
    for (zip_int64_t i = 0; i < zip_get_num_entries(z, 0); i++) {
        zip_stat_t st;
        zip_stat_index(z, (zip_uint64_t)i, 0, &st);
        char *buf = malloc(st.size + 1);
        zip_file_t *zf = zip_fopen_index(z, (zip_uint64_t)i, 0);
        if (!buf || !zf || zip_fread(zf, buf, st.size) != (zip_int64_t)st.size)
            die("cannot read %s from %s", st.name, fmu);
        zip_fclose(zf);
        buf[st.size] = '\0';
        const char *base = strrchr(st.name, '/');
        if (strcmp(st.name, "modelDescription.xml") == 0) {
            xml = buf;
            *xml_len = st.size;
            continue;
        }
        int platform = !base ? -1 : strncmp(st.name, "binaries/linux64/", 17) == 0 ? 0
                                  : strncmp(st.name, "binaries/x86_64-linux/", 22) == 0 ? 1 : -1;
        if (platform >= 0) {   /* DIR/<id>.so, DIR/<id>.x86_64-linux.so */
            char path[4096];
            snprintf(path, sizeof path, "%s/%.*s%s", dir, (int)strlen(base + 1) - 3, base + 1,
                     platform ? ".x86_64-linux.so" : ".so");
            FILE *f = fopen(path, "wb");
            if (!f || fwrite(buf, 1, st.size, f) != st.size)
                die("cannot write %s", path);
            fclose(f);
            if (bin[platform])
                die("%s: two binaries in one platform folder", fmu);
            bin[platform] = buf;
            bin_size[platform] = st.size;
            continue;
        }
        free(buf);
    }
    zip_close(z);
    if (!xml)
        die("%s has no modelDescription.xml", fmu);
    /* the same binary under FMI 2.0's folder name and FMI 3.0's (docs/FMI.md) */
    if (!bin[0] || !bin[1])
        die("%s: no binary in binaries/%s", fmu, bin[0] ? "x86_64-linux" : "linux64");
    if (bin_size[0] != bin_size[1] || memcmp(bin[0], bin[1], bin_size[0]) != 0)
        die("%s: binaries/linux64 and binaries/x86_64-linux hold different binaries", fmu);
    free(bin[0]);
    free(bin[1]);
    return xml;
}

/* ----------------------------------------------- modelDescription.xml */

/* The value of attribute `name` within [p, end), or "" (no entities decoded
 * but &quot; is never in our checks' values). */
static void attr(const char *p, const char *end, const char *name, char *out, size_t n)
{
    char key[64];
    snprintf(key, sizeof key, " %s=\"", name);
    out[0] = '\0';
    const char *a = strstr(p, key);
    if (!a || a >= end)
        return;
    a += strlen(key);
    const char *q = strchr(a, '"');
    size_t len = (size_t)(q - a) < n - 1 ? (size_t)(q - a) : n - 1;
    memcpy(out, a, len);
    out[len] = '\0';
}

/* The `dependencies` list of the Unknown at u (0-terminated), or NULL. */
static int *dependencies(const char *u, const char *end)
{
    static char v[1 << 16];
    if (!strstr(u, " dependencies=\"") || strstr(u, " dependencies=\"") > strchr(u, '>'))
        return NULL;
    attr(u, end, "dependencies", v, sizeof v);
    int *d = calloc(strlen(v) / 2 + 2, sizeof *d), n = 0;
    for (char *p = v, *q; *p; p = q) {
        long k = strtol(p, &q, 10);
        if (q == p)
            die("dependencies=\"%s\": not a list of indices", v);
        d[n++] = (int)k;
    }
    return d;
}

static int *unknowns(const char *xml, const char *section, int *n, int ***deps)
{
    char open[64], close[64];
    snprintf(open, sizeof open, "<%s>", section);
    snprintf(close, sizeof close, "</%s>", section);
    int *idx = calloc(MAXV, sizeof *idx);
    if (deps)
        *deps = calloc(MAXV, sizeof **deps);
    *n = 0;
    const char *p = strstr(xml, open), *end = p ? strstr(p, close) : NULL;
    if (p && end && !strstr(p, "<Unknown"))
        die("ModelStructure/%s is empty (the schema wants at least one Unknown)", section);
    for (const char *u = p; u && end && (u = strstr(u, "<Unknown")) && u < end; u++) {
        char v[32];
        attr(u, end, "index", v, sizeof v);
        if (*n < MAXV && deps)
            (*deps)[*n] = dependencies(u, end);
        if (*n < MAXV)
            idx[(*n)++] = atoi(v);
    }
    return idx;
}

static void parse(const char *xml)
{
    const char *root = strstr(xml, "<fmiModelDescription");
    if (!root)
        die("no fmiModelDescription");
    const char *rend = strchr(root, '>');
    char v[64];
    attr(root, rend, "guid", M.guid, sizeof M.guid);
    attr(root, rend, "numberOfEventIndicators", v, sizeof v);
    M.nz = atoi(v);
    const char *me = strstr(xml, "<ModelExchange"), *cs = strstr(xml, "<CoSimulation");
    M.me = me != NULL;
    M.cs = cs != NULL;
    if (me) {
        char a[16], b[16];
        attr(me, strchr(me, '>'), "canGetAndSetFMUstate", a, sizeof a);
        attr(me, strchr(me, '>'), "canSerializeFMUstate", b, sizeof b);
        M.me_state = strcmp(a, "true") == 0 && strcmp(b, "true") == 0;
        attr(me, strchr(me, '>'), "providesDirectionalDerivative", a, sizeof a);
        M.me_dd = strcmp(a, "true") == 0;
    }
    if (cs) {
        char a[16], b[16];
        attr(cs, strchr(cs, '>'), "canGetAndSetFMUstate", a, sizeof a);
        attr(cs, strchr(cs, '>'), "canSerializeFMUstate", b, sizeof b);
        M.cs_state = strcmp(a, "true") == 0 && strcmp(b, "true") == 0;
    }
    const char *k = me ? me : cs;
    attr(k, strchr(k, '>'), "modelIdentifier", M.id, sizeof M.id);
    M.v = calloc(MAXV, sizeof *M.v);
    for (const char *p = xml; (p = strstr(p, "<ScalarVariable")) && M.nv < MAXV; p++) {
        const char *end = strstr(p, "</ScalarVariable>");
        Var *x = &M.v[M.nv++];
        attr(p, end, "name", x->name, sizeof x->name);
        attr(p, end, "valueReference", v, sizeof v);
        x->vr = (unsigned)atol(v);
        attr(p, end, "causality", x->causality, sizeof x->causality);
        attr(p, end, "variability", x->variability, sizeof x->variability);
        attr(p, end, "initial", x->initial, sizeof x->initial);
        attr(p, end, "derivative", v, sizeof v);
        x->derivative = atoi(v);
        attr(p, end, "start", v, sizeof v);
        x->has_start = v[0] != '\0';
    }
    M.outputs = unknowns(xml, "Outputs", &M.nout, &M.out_deps);
    M.ders = unknowns(xml, "Derivatives", &M.nder, &M.der_deps);
    M.inits = unknowns(xml, "InitialUnknowns", &M.ninit, &M.init_deps);
}

static int cmp_uint(const void *a, const void *b)
{
    unsigned x = *(const unsigned *)a, y = *(const unsigned *)b;
    return x < y ? -1 : x > y;
}

/* Index k (1-based) is a continuous state: some derivative's `derivative`. */
static int is_state(int k)
{
    for (int i = 0; i < M.nv; i++)
        if (M.v[i].derivative == k)
            return 1;
    return 0;
}

/* Dependencies (2.2.8): ascending, each a known -- of outputs and
 * derivatives an input or a continuous state, of initial unknowns an input
 * or a parameter with initial="exact". */
static void check_dependencies(const char *section, const int *idx, int n, int **deps)
{
    int init = strcmp(section, "InitialUnknowns") == 0;
    for (int i = 0; i < n; i++)
        for (const int *d = deps[i]; d && *d; d++) {
            if (d != deps[i] && *d <= d[-1])
                die("ModelStructure/%s: the dependencies of %d are not ascending", section, idx[i]);
            const Var *k = *d >= 1 && *d <= M.nv ? &M.v[*d - 1] : NULL;
            int known = k && (strcmp(k->causality, "input") == 0 ||
                              (init ? strcmp(k->causality, "parameter") == 0 && strcmp(k->initial, "exact") == 0
                                    : is_state(*d)));
            if (!known)
                die("ModelStructure/%s: %d depends on %d, which is not a known there", section, idx[i], *d);
        }
}

/* Does the `dependencies` list (NULL: all) hold index k? */
static int depends_on(const int *deps, int k)
{
    if (!deps)
        return 1;
    for (; *deps; deps++)
        if (*deps == k)
            return 1;
    return 0;
}

/* The rules of FMI 2.0.4 section 2.2.8 that our exporter could break. */
static void check_description(void)
{
    unsigned *vrs = calloc((size_t)M.nv + 1, sizeof *vrs);
    for (int i = 0; i < M.nv; i++)
        vrs[i] = M.v[i].vr;
    qsort(vrs, (size_t)M.nv, sizeof *vrs, cmp_uint);
    for (int i = 1; i < M.nv; i++)
        if (vrs[i] == vrs[i - 1])
            die("value reference %u is used twice", vrs[i]);
    free(vrs);
    for (int i = 0; i < M.nout; i++)
        if (M.outputs[i] < 1 || M.outputs[i] > M.nv ||
            strcmp(M.v[M.outputs[i] - 1].causality, "output") != 0)
            die("ModelStructure/Outputs: index %d is not an output", M.outputs[i]);
    int nout = 0;
    for (int i = 0; i < M.nv; i++)
        nout += strcmp(M.v[i].causality, "output") == 0;
    if (nout != M.nout)
        die("%d outputs, %d in ModelStructure/Outputs", nout, M.nout);
    for (int i = 0; i < M.nder; i++) {
        int d = M.ders[i];
        if (d < 1 || d > M.nv || M.v[d - 1].derivative < 1 || M.v[d - 1].derivative > M.nv)
            die("ModelStructure/Derivatives: index %d has no state", d);
        const Var *s = &M.v[M.v[d - 1].derivative - 1];
        if (strcmp(s->variability, "continuous") != 0)
            die("state %s of %s is not continuous", s->name, M.v[d - 1].name);
    }
    check_dependencies("Outputs", M.outputs, M.nout, M.out_deps);
    check_dependencies("Derivatives", M.ders, M.nder, M.der_deps);
    check_dependencies("InitialUnknowns", M.inits, M.ninit, M.init_deps);
    for (int i = 0; i < M.ninit; i++) {
        int k = M.inits[i];
        if (k < 1 || k > M.nv || (i > 0 && k <= M.inits[i - 1]))
            die("ModelStructure/InitialUnknowns: index %d out of range or order", k);
        if (strcmp(M.v[k - 1].initial, "exact") == 0)
            die("InitialUnknowns lists %s, whose initial is exact", M.v[k - 1].name);
    }
    for (int i = 0; i < M.nv; i++) {
        const Var *x = &M.v[i];
        int needs_start = strcmp(x->causality, "parameter") == 0 || strcmp(x->causality, "input") == 0 ||
                          strcmp(x->variability, "constant") == 0;
        if (needs_start != x->has_start && strcmp(x->initial, "calculated") != 0)
            die("%s: start %s", x->name, x->has_start ? "not allowed" : "missing");
        if (strcmp(x->initial, "calculated") == 0 && x->has_start)
            die("%s: initial=calculated with a start value", x->name);
    }
}

/* ----------------------------------------------------------- binding */

/* Both binaries load and say FMI 2.0 (description checks; the runs use <id>.so). */
static void check_loadable(const char *dir)
{
    for (int k = 0; k < 2; k++) {
        char path[4096];
        snprintf(path, sizeof path, "%s/%s%s", dir, M.id, k ? ".x86_64-linux.so" : ".so");
        void *h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
        if (!h)
            die("dlopen %s: %s", path, dlerror());
        const char *(*version)(void);
        *(void **)&version = dlsym(h, "fmi2GetVersion");
        if (!version || strcmp(version(), "2.0") != 0)
            die("%s: fmi2GetVersion missing or not \"2.0\"", path);
        dlclose(h);
    }
}

static void bind(const char *dir)
{
    char path[4096];
    snprintf(path, sizeof path, "%s/%s.so", dir, M.id);
    void *h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    if (!h)
        die("dlopen %s: %s", path, dlerror());
#define BIND(name, ret, params) \
    if (!(*(void **)&F.name = dlsym(h, #name))) die("%s: %s missing", path, #name);
    FMI2_FUNCTIONS(BIND)
#undef BIND
}

static const fmi2CallbackFunctions callbacks = {logger, calloc, free, NULL, NULL};

/* FMI_INPUTS: NAME=VALUE,... set with fmi2SetReal */
static void set_inputs(fmi2Component c)
{
    const char *env = getenv("FMI_INPUTS");
    char buf[1024];
    snprintf(buf, sizeof buf, "%s", env ? env : "");
    for (char *tok = strtok(buf, ","); tok; tok = strtok(NULL, ",")) {
        char *eq = strchr(tok, '=');
        if (!eq)
            die("FMI_INPUTS: %s is not NAME=VALUE", tok);
        *eq = '\0';
        int i = 0;
        while (i < M.nv && strcmp(M.v[i].name, tok) != 0)
            i++;
        if (i == M.nv || strcmp(M.v[i].causality, "input") != 0)
            die("FMI_INPUTS: %s is not an input", tok);
        double v = atof(eq + 1);
        if (F.fmi2SetReal(c, &M.v[i].vr, 1, &v) != fmi2OK)
            die("fmi2SetReal(%s) failed", tok);
    }
}

static fmi2Component instantiate(fmi2Type type)
{
    fmi2Component c = F.fmi2Instantiate("test", type, M.guid, "", &callbacks, 0, 0);
    if (!c)
        die("fmi2Instantiate failed");
    set_inputs(c);
    return c;
}

static void ok(fmi2Status st, const char *what)
{
    if (st != fmi2OK)
        die("%s returned %d", what, (int)st);
}

/* ------------------------------------------------------------- output */

typedef struct Out {
    FILE *f;
    fmi2ValueReference *vr;
    double *val;
    int n;
} Out;

static void out_open(Out *o, const char *path)
{
    o->f = fopen(path, "w");
    o->vr = calloc((size_t)M.nv + 1, sizeof *o->vr);
    o->val = calloc((size_t)M.nv + 1, sizeof *o->val);
    if (!o->f || !o->vr || !o->val)
        die("cannot write %s", path);
    fputs("time", o->f);
    for (int i = 0; i < M.nv; i++)
        if (strcmp(M.v[i].variability, "continuous") == 0 && strncmp(M.v[i].name, "der(", 4) != 0) {
            o->vr[o->n++] = M.v[i].vr;
            fprintf(o->f, ",%s", M.v[i].name);
        }
    fputc('\n', o->f);
}

static void out_close(Out *o)
{
    fclose(o->f);
    free(o->vr);
    free(o->val);
}

static void out_row(Out *o, fmi2Component c, double t)
{
    ok(F.fmi2GetReal(c, o->vr, (size_t)o->n, o->val), "fmi2GetReal");
    fprintf(o->f, "%.17g", t);
    for (int i = 0; i < o->n; i++)
        fprintf(o->f, ",%.17g", o->val[i]);
    fputc('\n', o->f);
}

static void setup(fmi2Component c, double stop, double tol)
{
    ok(F.fmi2SetupExperiment(c, tol > 0, tol, 0.0, fmi2True, stop), "fmi2SetupExperiment");
    ok(F.fmi2EnterInitializationMode(c), "fmi2EnterInitializationMode");
    ok(F.fmi2ExitInitializationMode(c), "fmi2ExitInitializationMode");
}

/* ------------------------------------------------------ Co-Simulation */

/* Every Real variable's value, in M.v order, into v (M.nv values). */
static void all_values(fmi2Component c, double *v)
{
    for (int i = 0; i < M.nv; i++)
        ok(F.fmi2GetReal(c, &M.v[i].vr, 1, &v[i]), "fmi2GetReal");
}

/* CS with canGetAndSetFMUstate: a second instance steps to the middle of
 * the grid, saves its state (serialized and read back), takes
 * CS_REPLAY steps recording every variable, restores the state and takes
 * them again: the same bits. */
#define CS_REPLAY 3
static void cs_rollback(double stop, double dt, double tol)
{
    fmi2Component c = instantiate(fmi2CoSimulation);
    setup(c, stop, tol);
    long n = lround(stop / dt), mid = n / 2;
    for (long k = 0; k < mid; k++)
        ok(F.fmi2DoStep(c, (double)k * dt, dt, fmi2False), "fmi2DoStep");
    double t = (double)mid * dt;
    fmi2FMUstate st = NULL, back = NULL;
    size_t size = 0;
    ok(F.fmi2GetFMUstate(c, &st), "fmi2GetFMUstate");
    ok(F.fmi2SerializedFMUstateSize(c, st, &size), "fmi2SerializedFMUstateSize");
    fmi2Byte *bytes = malloc(size);
    ok(F.fmi2SerializeFMUstate(c, st, bytes, size), "fmi2SerializeFMUstate");
    ok(F.fmi2FreeFMUstate(c, &st), "fmi2FreeFMUstate");
    ok(F.fmi2DeSerializeFMUstate(c, bytes, size, &back), "fmi2DeSerializeFMUstate");
    double *first = calloc((size_t)M.nv * CS_REPLAY + 1, sizeof *first);
    double *again = calloc((size_t)M.nv * CS_REPLAY + 1, sizeof *again);
    for (int pass = 0; pass < 2; pass++) {
        if (pass)
            ok(F.fmi2SetFMUstate(c, back), "fmi2SetFMUstate");
        for (int k = 0; k < CS_REPLAY; k++) {
            double tk = t + k * dt;
            ok(F.fmi2DoStep(c, tk, dt, fmi2False), "fmi2DoStep");
            all_values(c, (pass ? again : first) + (size_t)k * (size_t)M.nv);
        }
    }
    if (memcmp(first, again, sizeof(double) * (size_t)M.nv * CS_REPLAY) != 0)
        die("CS: the steps after fmi2SetFMUstate differ from those after fmi2GetFMUstate");
    fprintf(stderr, "fmi_import: CS state at t = %g (%zu bytes) restored: %d steps, the same %d values\n", t,
            size, CS_REPLAY, M.nv * CS_REPLAY);
    ok(F.fmi2FreeFMUstate(c, &back), "fmi2FreeFMUstate");
    F.fmi2FreeInstance(c);
    free(bytes);
    free(first);
    free(again);
}

static int run_cs(double stop, double dt, const char *csv, double tol)
{
    fmi2Component c = instantiate(fmi2CoSimulation);
    setup(c, stop, tol);
    Out o = {0};
    out_open(&o, csv);
    out_row(&o, c, 0.0);
    long n = lround(stop / dt);
    double t = 0;
    for (long k = 1; k <= n; k++) {
        double tn = k == n ? stop : (double)k * dt;
        ok(F.fmi2DoStep(c, t, tn - t, fmi2True), "fmi2DoStep");
        t = tn;
        out_row(&o, c, t);
    }
    ok(F.fmi2Terminate(c), "fmi2Terminate");
    F.fmi2FreeInstance(c);
    out_close(&o);
    if (M.cs_state && lround(stop / dt) >= 2 * CS_REPLAY)
        cs_rollback(stop, dt, tol);
    return 0;
}

/* ------------------------------------------------------ Model Exchange */

typedef struct Me {
    fmi2Component c;
    int nx, nz;
    double *x, *dx, *k[7], *xt, *x5, *z, *zt;
    double t, tol, h;          /* tol > 0: adaptive */
    long steps, events, state_changes;
} Me;

/* the calls of fmi2GetDerivatives and the time spent in them (reported,
 * never checked: a measurement of the solve's cost) */
static long deriv_calls;
static double deriv_seconds;

static double now_seconds(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static void derivs(Me *s, double t, const double *x, double *dx)
{
    ok(F.fmi2SetTime(s->c, t), "fmi2SetTime");
    ok(F.fmi2SetContinuousStates(s->c, x, (size_t)s->nx), "fmi2SetContinuousStates");
    double t0 = now_seconds();
    ok(F.fmi2GetDerivatives(s->c, dx, (size_t)s->nx), "fmi2GetDerivatives");
    deriv_seconds += now_seconds() - t0;
    deriv_calls++;
}

/* Event iteration in Event Mode (3.2.4); returns the next time event. */
static double event_mode(Me *s)
{
    fmi2EventInfo ei = {.newDiscreteStatesNeeded = fmi2True};
    int changed = 0;           /* any round may change the states (a state set's switch) */
    while (ei.newDiscreteStatesNeeded) {
        ok(F.fmi2NewDiscreteStates(s->c, &ei), "fmi2NewDiscreteStates");
        changed |= ei.valuesOfContinuousStatesChanged;
    }
    if (ei.terminateSimulation)
        die("the FMU asked to terminate at t = %g", s->t);
    if (changed) {
        ok(F.fmi2GetContinuousStates(s->c, s->x, (size_t)s->nx), "fmi2GetContinuousStates");
        s->state_changes++;
    }
    return ei.nextEventTimeDefined ? ei.nextEventTime : INFINITY;
}

/* Classic RK4 step of size h from (t, x) into xt. */
static void rk4(Me *s, double h)
{
    double **k = s->k;
    derivs(s, s->t, s->x, k[0]);
    for (int j = 1; j < 4; j++) {
        double a = j == 3 ? 1.0 : 0.5;
        for (int i = 0; i < s->nx; i++)
            s->xt[i] = s->x[i] + a * h * k[j - 1][i];
        derivs(s, s->t + a * h, s->xt, k[j]);
    }
    for (int i = 0; i < s->nx; i++)
        s->xt[i] = s->x[i] + h / 6 * (k[0][i] + 2 * k[1][i] + 2 * k[2][i] + k[3][i]);
}

/* Dormand-Prince 5(4) (Hairer, Norsett, Wanner, Table II.5.2): xt the
 * 5th-order result; returns the scaled error estimate. */
static double dopri(Me *s, double h)
{
    static const double a[7][6] = {
        {0}, {1.0 / 5}, {3.0 / 40, 9.0 / 40}, {44.0 / 45, -56.0 / 15, 32.0 / 9},
        {19372.0 / 6561, -25360.0 / 2187, 64448.0 / 6561, -212.0 / 729},
        {9017.0 / 3168, -355.0 / 33, 46732.0 / 5247, 49.0 / 176, -5103.0 / 18656},
        {35.0 / 384, 0, 500.0 / 1113, 125.0 / 192, -2187.0 / 6784, 11.0 / 84}};
    static const double c[7] = {0, 0.2, 0.3, 0.8, 8.0 / 9, 1, 1};
    static const double e[7] = {71.0 / 57600, 0, -71.0 / 16695, 71.0 / 1920, -17253.0 / 339200,
                                22.0 / 525, -1.0 / 40};
    derivs(s, s->t, s->x, s->k[0]);
    for (int j = 1; j < 7; j++) {
        for (int i = 0; i < s->nx; i++) {
            double sum = 0;
            for (int l = 0; l < j; l++)
                sum += a[j][l] * s->k[l][i];
            s->xt[i] = s->x[i] + h * sum;
        }
        derivs(s, s->t + c[j] * h, s->xt, s->k[j]);
    }
    double err = 0;
    for (int i = 0; i < s->nx; i++) {
        double ei = 0;
        for (int j = 0; j < 7; j++)
            ei += e[j] * s->k[j][i];
        ei = h * ei / (s->tol * (1 + fmax(fabs(s->x[i]), fabs(s->xt[i]))));
        err = fmax(err, fabs(ei));
    }
    return err;
}

/* One accepted step of at most h (adaptive: adjusts s->h); xt the result. */
static double attempt(Me *s, double hmax)
{
    if (s->tol <= 0) {
        double h = fmin(s->h, hmax);
        rk4(s, h);
        return h;
    }
    for (;;) {
        double h = fmin(s->h, hmax);
        double err = dopri(s, h);
        double fac = err > 0 ? 0.9 * pow(err, -0.2) : 5;
        if (err <= 1) {
            if (h == s->h)     /* not cut by hmax: grow */
                s->h = h * fmin(5, fmax(0.2, fac));
            return h;
        }
        s->h = h * fmax(0.1, fac);
        if (s->h < 1e-14 * fmax(1, fabs(s->t)))
            die("step size underflow at t = %g", s->t);
    }
}

/* One step of exactly h, no step-size control (event location). */
static void single(Me *s, double h)
{
    if (s->tol > 0)
        dopri(s, h);
    else
        rk4(s, h);
}

static int sign_changed(Me *s)
{
    ok(F.fmi2SetTime(s->c, s->t), "fmi2SetTime");
    ok(F.fmi2SetContinuousStates(s->c, s->xt, (size_t)s->nx), "fmi2SetContinuousStates");
    if (s->nz)
        ok(F.fmi2GetEventIndicators(s->c, s->zt, (size_t)s->nz), "fmi2GetEventIndicators");
    for (int i = 0; i < s->nz; i++)
        if ((s->z[i] > 0) != (s->zt[i] > 0))
            return 1;
    return 0;
}

/* Integrate from s->t to tend (<= next time event), locating state events. */
static void advance(Me *s, double tend)
{
    while (s->t < tend) {
        double t0 = s->t, h = attempt(s, tend - s->t);
        s->t = t0 + h;
        s->steps++;
        if (s->nz && sign_changed(s)) {          /* bisect the step to the crossing */
            double lo = 0, hi = h;
            while (hi - lo > 1e-12 * fmax(1, fabs(t0))) {
                double mid = 0.5 * (lo + hi);
                s->t = t0;
                single(s, mid);
                s->t = t0 + mid;
                if (sign_changed(s))
                    hi = mid;
                else
                    lo = mid;
            }
            s->t = t0;
            single(s, hi);
            s->t = t0 + hi;
            memcpy(s->x, s->xt, sizeof(double) * (size_t)s->nx);
            ok(F.fmi2SetTime(s->c, s->t), "fmi2SetTime");
            ok(F.fmi2SetContinuousStates(s->c, s->x, (size_t)s->nx), "fmi2SetContinuousStates");
            ok(F.fmi2EnterEventMode(s->c), "fmi2EnterEventMode");
            event_mode(s);
            ok(F.fmi2EnterContinuousTimeMode(s->c), "fmi2EnterContinuousTimeMode");
            s->events++;
        } else {
            memcpy(s->x, s->xt, sizeof(double) * (size_t)s->nx);
        }
        if (s->nz)
            ok(F.fmi2GetEventIndicators(s->c, s->z, (size_t)s->nz), "fmi2GetEventIndicators");
        fmi2Boolean enter, term;
        ok(F.fmi2SetTime(s->c, s->t), "fmi2SetTime");
        ok(F.fmi2SetContinuousStates(s->c, s->x, (size_t)s->nx), "fmi2SetContinuousStates");
        ok(F.fmi2CompletedIntegratorStep(s->c, fmi2True, &enter, &term), "fmi2CompletedIntegratorStep");
        if (term)
            die("terminated at t = %g", s->t);
    }
}

/* providesDirectionalDerivative: d der(x) / d x_j along each unit seed
 * against central differences of fmi2GetDerivatives (step 1e-6 (1 + |x_j|)):
 * agreement to 1e-6 relative to the column's largest entry.  At the
 * current point; the states are restored after. */
static void check_directional(Me *s)
{
    if (!M.me_dd || s->nx == 0)
        return;
    size_t nx = (size_t)s->nx;
    fmi2ValueReference *xv = calloc(nx, sizeof *xv), *dv = calloc(nx, sizeof *dv);
    double *dd = calloc(nx, sizeof *dd), *fp = calloc(nx, sizeof *fp), *fm = calloc(nx, sizeof *fm),
           *xp = calloc(nx, sizeof *xp), one = 1.0, worst = 0;
    long independent = 0;         /* pairs (derivative, state) outside the dependencies */
    for (int i = 0; i < s->nx; i++) {
        const Var *d = &M.v[M.ders[i] - 1];
        dv[i] = d->vr;
        xv[i] = M.v[d->derivative - 1].vr;
    }
    for (int j = 0; j < s->nx; j++) {
        ok(F.fmi2SetTime(s->c, s->t), "fmi2SetTime");
        ok(F.fmi2SetContinuousStates(s->c, s->x, nx), "fmi2SetContinuousStates");
        ok(F.fmi2GetDirectionalDerivative(s->c, dv, nx, &xv[j], 1, &one, dd), "fmi2GetDirectionalDerivative");
        double h = 1e-6 * (1 + fabs(s->x[j])), scale = 1e-12, err = 0;
        memcpy(xp, s->x, nx * sizeof *xp);
        xp[j] = s->x[j] + h;
        derivs(s, s->t, xp, fp);
        xp[j] = s->x[j] - h;
        derivs(s, s->t, xp, fm);
        for (int i = 0; i < s->nx; i++) {
            double fd = (fp[i] - fm[i]) / (2 * h);
            /* the rounding of the differences: 100 ulps of the values over h */
            double noise = 100 * DBL_EPSILON * fmax(fabs(fp[i]), fabs(fm[i])) / h;
            scale = fmax(scale, fmax(noise, fmax(fabs(fd), fabs(dd[i]))));
            /* a difference within that rounding is no error (a derivative
             * that does not depend on x_j may still differ by an ulp or two
             * between the evaluations, when a block is solved by a Newton
             * step from the previous call's values) */
            err = fmax(err, fabs(fd - dd[i]) - noise);
        }
        worst = fmax(worst, err / scale);
        int xj = M.v[M.ders[j] - 1].derivative;     /* the index of state j */
        for (int i = 0; i < s->nx; i++)
            if (!depends_on(M.der_deps[i], xj) && !(fabs(dd[i]) <= 1e-10 * scale))
                die("%s does not list %s in its dependencies but changes with it (%g)",
                    M.v[M.ders[i] - 1].name, M.v[xj - 1].name, dd[i]);
            else if (!depends_on(M.der_deps[i], xj))
                independent++;
    }
    ok(F.fmi2SetContinuousStates(s->c, s->x, nx), "fmi2SetContinuousStates");
    if (!(worst <= 1e-6))
        die("fmi2GetDirectionalDerivative differs from central differences by %.3g (relative)", worst);
    fprintf(stderr, "fmi_import: directional derivatives of %d derivatives along %d states agree with "
            "central differences to %.2g; %ld pairs outside the dependencies are 0\n", s->nx, s->nx,
            worst, independent);
    free(xv); free(dv); free(dd); free(fp); free(fm); free(xp);
}

/* One output interval: time events up to tout, then to tout.  A time
 * event within rounding after tout (a clock tick k * dt computed by the
 * FMU, 1e-12 relative as dyadc run's ticks) is handled before the row, as
 * dyadc run's row after the tick. */
static void me_interval(Me *s, double *tevent, double tout)
{
    while (*tevent <= tout + 1e-12 * fmax(1, fabs(tout))) {
        advance(s, *tevent);
        ok(F.fmi2EnterEventMode(s->c), "fmi2EnterEventMode");
        *tevent = event_mode(s);
        ok(F.fmi2EnterContinuousTimeMode(s->c), "fmi2EnterContinuousTimeMode");
        s->events++;
    }
    advance(s, tout);
    ok(F.fmi2SetTime(s->c, s->t), "fmi2SetTime");
    ok(F.fmi2SetContinuousStates(s->c, s->x, (size_t)s->nx), "fmi2SetContinuousStates");
}

/* FMU state round trip (canGetAndSetFMUstate, canSerializeFMUstate): the
 * FMU's state at the middle, serialized and read back, and the importer's
 * own; after the run, restore both, run the second half again: the last
 * row must come out bit for bit the same. */
typedef struct Snapshot {
    fmi2Byte *bytes;
    size_t size;
    double t, h, tevent, *x, *z;
    long k;
} Snapshot;

static void snapshot_take(Me *s, Snapshot *sn, double tevent, long k)
{
    if (!M.me_state)
        return;
    fmi2FMUstate st = NULL;
    ok(F.fmi2GetFMUstate(s->c, &st), "fmi2GetFMUstate");
    ok(F.fmi2SerializedFMUstateSize(s->c, st, &sn->size), "fmi2SerializedFMUstateSize");
    sn->bytes = malloc(sn->size);
    ok(F.fmi2SerializeFMUstate(s->c, st, sn->bytes, sn->size), "fmi2SerializeFMUstate");
    ok(F.fmi2FreeFMUstate(s->c, &st), "fmi2FreeFMUstate");
    sn->t = s->t;
    sn->h = s->h;
    sn->tevent = tevent;
    sn->k = k;
    sn->x = malloc(sizeof(double) * ((size_t)s->nx + 1));
    sn->z = malloc(sizeof(double) * ((size_t)s->nz + 1));
    memcpy(sn->x, s->x, sizeof(double) * (size_t)s->nx);
    memcpy(sn->z, s->z, sizeof(double) * (size_t)s->nz);
}

static void snapshot_replay(Me *s, Snapshot *sn, Out *o, long n, double stop, double dt)
{
    double *first = malloc(sizeof(double) * ((size_t)o->n + 1));
    memcpy(first, o->val, sizeof(double) * (size_t)o->n);
    fmi2FMUstate st = NULL;
    ok(F.fmi2DeSerializeFMUstate(s->c, sn->bytes, sn->size, &st), "fmi2DeSerializeFMUstate");
    ok(F.fmi2SetFMUstate(s->c, st), "fmi2SetFMUstate");
    ok(F.fmi2FreeFMUstate(s->c, &st), "fmi2FreeFMUstate");
    s->t = sn->t;
    s->h = sn->h;
    memcpy(s->x, sn->x, sizeof(double) * (size_t)s->nx);
    memcpy(s->z, sn->z, sizeof(double) * (size_t)s->nz);
    double tevent = sn->tevent;
    for (long k = sn->k; k <= n; k++) {    /* the calls of the first run, rows included:
                                              each solve starts from the last one's result */
        me_interval(s, &tevent, k == n ? stop : (double)k * dt);
        ok(F.fmi2GetReal(s->c, o->vr, (size_t)o->n, o->val), "fmi2GetReal");
    }
    for (int i = 0; i < o->n; i++)
        if (memcmp(&first[i], &o->val[i], sizeof(double)) != 0)
            die("FMU state: after restoring the state at t = %g the run ends at %.17g instead of %.17g",
                sn->t, o->val[i], first[i]);
    fprintf(stderr, "fmi_import: FMU state at t = %g restored (%zu bytes): the same %d values at the end\n",
            sn->t, sn->size, o->n);
    free(first);
    free(sn->bytes);
    free(sn->x);
    free(sn->z);
}

static int run_me(double stop, double dt, const char *csv, double param, int adaptive)
{
    Me s = {0};
    s.c = instantiate(fmi2ModelExchange);
    setup(s.c, stop, adaptive ? param : 0);
    s.nx = M.nder;
    s.nz = M.nz;
    s.tol = adaptive ? param : 0;
    s.h = adaptive ? dt / 10 : param;
    size_t nx = (size_t)s.nx + 1, nz = (size_t)s.nz + 1;
    s.x = calloc(nx, sizeof(double));
    s.xt = calloc(nx, sizeof(double));
    for (int j = 0; j < 7; j++)
        s.k[j] = calloc(nx, sizeof(double));
    s.z = calloc(nz, sizeof(double));
    s.zt = calloc(nz, sizeof(double));
    double tevent = event_mode(&s);
    ok(F.fmi2EnterContinuousTimeMode(s.c), "fmi2EnterContinuousTimeMode");
    ok(F.fmi2GetContinuousStates(s.c, s.x, (size_t)s.nx), "fmi2GetContinuousStates");
    if (s.nz)
        ok(F.fmi2GetEventIndicators(s.c, s.z, (size_t)s.nz), "fmi2GetEventIndicators");
    Out o = {0};
    out_open(&o, csv);
    out_row(&o, s.c, 0.0);
    if (!adaptive)
        check_directional(&s);
    long n = lround(stop / dt);
    Snapshot snap = {0};
    for (long k = 1; k <= n; k++) {
        if (k == n / 2 + 1)
            snapshot_take(&s, &snap, tevent, k);
        double tout = k == n ? stop : (double)k * dt;
        me_interval(&s, &tevent, tout);
        out_row(&o, s.c, tout);
    }
    fprintf(stderr, "fmi_import: %s: %ld steps, %ld events (%ld changing the states), %ld fmi2GetDerivatives, "
            "%.2f us each\n", adaptive ? "dopri" : "rk4", s.steps, s.events, s.state_changes, deriv_calls,
            deriv_calls ? 1e6 * deriv_seconds / (double)deriv_calls : 0.0);
    if (M.me_state)
        snapshot_replay(&s, &snap, &o, n, stop, dt);
    ok(F.fmi2Terminate(s.c), "fmi2Terminate");
    F.fmi2FreeInstance(s.c);
    out_close(&o);
    free(s.x);
    free(s.xt);
    for (int j = 0; j < 7; j++)
        free(s.k[j]);
    free(s.z);
    free(s.zt);
    return 0;
}

/* ------------------------------------------------------------- misuse */

#define EXPECT_ERROR(call)                                                     \
    do {                                                                       \
        int before = logged;                                                   \
        fmi2Status st_ = (call);                                               \
        if (st_ != fmi2Error)                                                  \
            die("%s returned %d, expected fmi2Error", #call, (int)st_);        \
        if (logged == before)                                                  \
            die("%s: no message logged", #call);                               \
        checks++;                                                              \
    } while (0)

/* The calculated parameters' dependencies, numerically: changing an exact
 * parameter (up to 60 of them) that a calculated parameter does not list
 * leaves its value unchanged, bit for bit.  An initialization that fails
 * with the changed value is skipped. */
static void check_initial_dependencies(void)
{
    fmi2Type type = M.cs ? fmi2CoSimulation : fmi2ModelExchange;
    unsigned *vr = calloc((size_t)M.ninit + 1, sizeof *vr);
    double *base = calloc((size_t)M.ninit + 1, sizeof *base), *now = calloc((size_t)M.ninit + 1, sizeof *now);
    int n = 0, tried = 0, pairs = 0;
    for (int i = 0; i < M.ninit; i++)
        if (M.init_deps[i] && strcmp(M.v[M.inits[i] - 1].causality, "calculatedParameter") == 0)
            vr[n++] = M.v[M.inits[i] - 1].vr;
    for (int q = -1; n > 0 && q < M.nv && tried < 60; q++) {
        const Var *k = q >= 0 ? &M.v[q] : NULL;
        if (k && (strcmp(k->causality, "parameter") != 0 || strcmp(k->initial, "exact") != 0))
            continue;
        fmi2Component c = instantiate(type);
        double v;
        if (k) {
            ok(F.fmi2GetReal(c, &k->vr, 1, &v), "fmi2GetReal");
            v += 0.5 * (fabs(v) + 1);
            ok(F.fmi2SetReal(c, &k->vr, 1, &v), "fmi2SetReal");
        }
        ok(F.fmi2SetupExperiment(c, fmi2False, 0, 0, fmi2False, 0), "fmi2SetupExperiment");
        if (F.fmi2EnterInitializationMode(c) == fmi2OK && F.fmi2GetReal(c, vr, (size_t)n, k ? now : base) == fmi2OK)
            for (int i = 0, j = 0; k && i < M.ninit; i++) {
                if (!M.init_deps[i] || strcmp(M.v[M.inits[i] - 1].causality, "calculatedParameter") != 0)
                    continue;
                if (!depends_on(M.init_deps[i], q + 1)) {
                    if (memcmp(&now[j], &base[j], sizeof(double)) != 0)
                        die("%s does not list %s in its dependencies but changes with it", M.v[M.inits[i] - 1].name,
                            k->name);
                    pairs++;
                }
                j++;
            }
        F.fmi2FreeInstance(c);
        tried += k != NULL;
    }
    if (n > 0)
        fprintf(stderr, "fmi_import: %d calculated parameters, %d parameters changed: %d pairs outside the "
                "dependencies unchanged\n", n, tried, pairs);
    free(vr);
    free(base);
    free(now);
}

static int run_misuse(void)
{
    int checks = 0;
    double x[1] = {0}, dx[1];
    fmi2ValueReference bad = 1u << 30;
    fmi2EventInfo ei;
    if (F.fmi2Instantiate("bad", fmi2ModelExchange, "{not-the-guid}", "", &callbacks, 0, 0))
        die("fmi2Instantiate accepted a wrong GUID");
    if (F.fmi2DoStep(NULL, 0, 1, 0) != fmi2Error)
        die("fmi2DoStep(NULL) did not return fmi2Error");
    if (M.me) {
        fmi2Component c = instantiate(fmi2ModelExchange);
        EXPECT_ERROR(F.fmi2GetDerivatives(c, dx, 1));          /* before initialization */
        F.fmi2FreeInstance(c);
        c = instantiate(fmi2ModelExchange);
        EXPECT_ERROR(F.fmi2DoStep(c, 0, 1, 0));               /* a CS function */
        F.fmi2FreeInstance(c);
        c = instantiate(fmi2ModelExchange);
        EXPECT_ERROR(F.fmi2NewDiscreteStates(c, &ei));         /* not in Event Mode */
        F.fmi2FreeInstance(c);
        c = instantiate(fmi2ModelExchange);
        setup(c, 1, 0);
        EXPECT_ERROR(F.fmi2SetContinuousStates(c, x, (size_t)M.nder + 1)); /* wrong size */
        F.fmi2FreeInstance(c);
        c = instantiate(fmi2ModelExchange);
        setup(c, 1, 0);
        EXPECT_ERROR(F.fmi2EnterInitializationMode(c));       /* twice */
        F.fmi2FreeInstance(c);
        c = instantiate(fmi2ModelExchange);
        setup(c, 1, 0);
        fmi2FMUstate st = NULL;
        EXPECT_ERROR(F.fmi2DeSerializeFMUstate(c, "garbage", 7, &st)); /* not a state */
        F.fmi2FreeInstance(c);
    }
    if (M.cs) {
        fmi2Component c = instantiate(fmi2CoSimulation);
        EXPECT_ERROR(F.fmi2DoStep(c, 0, 0.1, 0));             /* before initialization */
        F.fmi2FreeInstance(c);
        c = instantiate(fmi2CoSimulation);
        setup(c, 1, 0);
        EXPECT_ERROR(F.fmi2DoStep(c, 0.5, 0.1, 0));           /* not the current time */
        F.fmi2FreeInstance(c);
        c = instantiate(fmi2CoSimulation);
        setup(c, 1, 0);
        EXPECT_ERROR(F.fmi2DoStep(c, 0, 2, 0));               /* past the stop time */
        F.fmi2FreeInstance(c);
        c = instantiate(fmi2CoSimulation);
        EXPECT_ERROR(F.fmi2GetReal(c, &bad, 1, dx));          /* no such variable */
        F.fmi2FreeInstance(c);
        c = instantiate(fmi2CoSimulation);
        EXPECT_ERROR(F.fmi2GetDerivatives(c, dx, 1));          /* an ME function */
        F.fmi2FreeInstance(c);
        c = instantiate(fmi2CoSimulation);
        fmi2FMUstate st = NULL;
        EXPECT_ERROR(F.fmi2GetFMUstate(c, &st));              /* before the initialization */
        F.fmi2FreeInstance(c);
        c = instantiate(fmi2CoSimulation);
        setup(c, 1, 0);
        double junk[8] = {0};
        EXPECT_ERROR(F.fmi2SetFMUstate(c, junk));             /* not a state */
        F.fmi2FreeInstance(c);
    }
    fprintf(stderr, "fmi_import: %d wrong call sequences refused with a message\n", checks);
    check_initial_dependencies();
    return 0;
}

/* ------------------------------------------------------------ compare */

typedef struct Csv {
    int nc, nr;
    char **names;
    double *v;                 /* [nr][nc] */
} Csv;

static void read_csv(const char *path, Csv *c)
{
    FILE *f = fopen(path, "r");
    if (!f)
        die("cannot read %s", path);
    static char line[1 << 20];
    if (!fgets(line, sizeof line, f))
        die("%s is empty", path);
    line[strcspn(line, "\n")] = '\0';
    c->names = calloc(MAXV, sizeof *c->names);
    /* names, split at the commas outside brackets (`frame.R[1,2]` is one) */
    int depth = 0;
    for (char *p = line, *start = line; c->nc < MAXV; p++) {
        depth += (*p == '[') - (*p == ']');
        if (*p != '\0' && (*p != ',' || depth > 0))
            continue;
        int end = *p == '\0';
        *p = '\0';
        c->names[c->nc++] = strdup(start);
        start = p + 1;
        if (end)
            break;
    }
    size_t cap = 1024;
    c->v = malloc(cap * sizeof(double));
    while (fgets(line, sizeof line, f)) {
        char *p = line;
        for (int k = 0; k < c->nc; k++) {
            if ((size_t)(c->nr + 1) * (size_t)c->nc > cap)
                c->v = realloc(c->v, (cap *= 2) * sizeof(double));
            c->v[(size_t)c->nr * (size_t)c->nc + (size_t)k] = strtod(p, &p);
            if (*p == ',')
                p++;
        }
        c->nr++;
    }
    fclose(f);
}

/* Row of B for each row of A: the last one at the same time (B may repeat a
 * time, before and after a jump at a clock tick; A's value is the one after). */
static int *match_rows(const Csv *a, const Csv *b)
{
    int *row = calloc((size_t)a->nr + 1, sizeof *row);
    int j = 0;
    for (int r = 0; r < a->nr; r++) {
        double t = a->v[(size_t)r * (size_t)a->nc];
        while (j < b->nr && b->v[(size_t)j * (size_t)b->nc] < t - 1e-12 * fmax(1, fabs(t)))
            j++;
        if (j == b->nr || fabs(b->v[(size_t)j * (size_t)b->nc] - t) > 1e-12 * fmax(1, fabs(t)))
            die("no row at t = %.17g in the reference", t);
        while (j + 1 < b->nr && b->v[(size_t)(j + 1) * (size_t)b->nc] == b->v[(size_t)j * (size_t)b->nc])
            j++;
        row[r] = j;
    }
    return row;
}

/* For every column of A found in B: max |a - b| over A's rows (matched by
 * time), relative to max(max |b|, floor) (a column that stays at 0
 * compares absolutely; floor 1e-8 unless given).  Fails above rtol. */
static int compare(const char *pa, const char *pb, double rtol, double floor)
{
    Csv a = {0}, b = {0};
    read_csv(pa, &a);
    read_csv(pb, &b);
    int *row = match_rows(&a, &b);
    double worst = 0;
    const char *wname = "";
    int matched = 0;
    for (int ka = 1; ka < a.nc; ka++) {
        int kb = 0;
        while (kb < b.nc && strcmp(a.names[ka], b.names[kb]) != 0)
            kb++;
        if (kb == b.nc)
            continue;
        matched++;
        double d = 0, scale = floor;
        for (int r = 0; r < a.nr; r++) {
            double x = a.v[(size_t)r * (size_t)a.nc + (size_t)ka];
            double y = b.v[(size_t)row[r] * (size_t)b.nc + (size_t)kb];
            d = fmax(d, fabs(x - y));
            scale = fmax(scale, fabs(y));
            if (isnan(x) != isnan(y))
                d = INFINITY;
        }
        if (d / scale > worst || isnan(d)) {
            worst = d / scale;
            wname = a.names[ka];
        }
    }
    printf("compare: %d columns, %d rows, largest relative difference %.3g (%s)\n", matched, a.nr,
           worst, wname);
    if (matched < 1)
        die("no columns in common");
    Csv *both[2] = {&a, &b};
    for (int k = 0; k < 2; k++) {
        for (int i = 0; i < both[k]->nc; i++)
            free(both[k]->names[i]);
        free(both[k]->names);
        free(both[k]->v);
    }
    free(row);
    return !(worst <= rtol);
}

int main(int argc, char **argv)
{
    if (argc >= 5 && strcmp(argv[1], "compare") == 0)
        return compare(argv[2], argv[3], atof(argv[4]), argc >= 6 ? atof(argv[5]) : 1e-8);
    if (argc < 3)
        die("usage: fmi_import FMU check|cs|me-rk4|me-dopri|misuse ...");
    char dir[] = "/tmp/fmi_import_XXXXXX";
    if (!mkdtemp(dir))
        die("mkdtemp failed");
    size_t len = 0;
    char *xml = unpack(argv[1], dir, &len);
    parse(xml);
    check_description();
    int rc = 0;
    const char *mode = argv[2];
    if (strcmp(mode, "unpack") == 0 && argc >= 4) {
        char path[4200], dest[4200];
        snprintf(path, sizeof path, "%s/modelDescription.xml", argv[3]);
        FILE *f = fopen(path, "w");
        if (!f || fwrite(xml, 1, len, f) != len || fclose(f) != 0)
            die("cannot write %s", path);
        snprintf(path, sizeof path, "%s/%s.so", dir, M.id);
        snprintf(dest, sizeof dest, "%s/%s.so", argv[3], M.id);
        if (rename(path, dest) != 0)
            die("cannot move the binary to %s", dest);
    } else if (strcmp(mode, "check") == 0) {
        check_loadable(dir);
    } else {
        bind(dir);
        if (strcmp(mode, "misuse") == 0)
            rc = run_misuse();
        else if (argc < 6)
            die("%s needs STOP DT OUT.csv", mode);
        else if (strcmp(mode, "cs") == 0)
            rc = run_cs(atof(argv[3]), atof(argv[4]), argv[5], argc >= 7 ? atof(argv[6]) : 0);
        else if (strcmp(mode, "me-rk4") == 0 && argc >= 7)
            rc = run_me(atof(argv[3]), atof(argv[4]), argv[5], atof(argv[6]), 0);
        else if (strcmp(mode, "me-dopri") == 0 && argc >= 7)
            rc = run_me(atof(argv[3]), atof(argv[4]), argv[5], atof(argv[6]), 1);
        else
            die("unknown mode %s", mode);
    }
    char path[4200];
    snprintf(path, sizeof path, "%s/%s.so", dir, M.id);
    unlink(path);
    snprintf(path, sizeof path, "%s/%s.x86_64-linux.so", dir, M.id);
    unlink(path);
    rmdir(dir);
    free(xml);
    free(M.v);
    for (int i = 0; i < M.nout; i++)
        free(M.out_deps[i]);
    for (int i = 0; i < M.nder; i++)
        free(M.der_deps[i]);
    for (int i = 0; i < M.ninit; i++)
        free(M.init_deps[i]);
    free(M.init_deps);
    free(M.out_deps);
    free(M.der_deps);
    free(M.outputs);
    free(M.ders);
    free(M.inits);
    return rc;
}
