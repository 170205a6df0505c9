/*
 * units.c -- parse unit strings into dimension vectors (units.h).
 *
 * Recursive descent over the grammar in units.h.  A symbol is looked up
 * exactly first (`Pa`, `cd`, `kat`, `min`, `mol` are units, not prefixed
 * ones), then as an SI prefix followed by a prefixable symbol (`mm`, `kN`,
 * `µs`/`us`, `MW`, `mbar`).  The exponent written after a symbol applies to
 * the prefixed unit: `cm3` = (0.01 m)^3.  An affine unit (`degC`) keeps its
 * offset only when it stands alone; in a product it is a temperature
 * difference (`J/degC` = `J/K`).
 */
#include "units.h"

#include "support.h"

#include <ctype.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

const char *const unit_base_names[UNIT_NBASE] = {"kg", "m", "s", "A", "K", "mol", "cd"};

#define UNIT_EXP_MAX 1000 /* bound on any numerator or denominator */
#define UNIT_PI 3.14159265358979323846

typedef struct UnitSym {
    const char *sym;
    int8_t e[UNIT_NBASE];  /* kg m s A K mol cd */
    double scale, offset;
    bool prefixable;
} UnitSym;

static const UnitSym unit_syms[] = {
    /* SI base units (kg takes no prefix: write g) */
    {"kg", {1, 0, 0, 0, 0, 0, 0}, 1, 0, false},
    {"m", {0, 1, 0, 0, 0, 0, 0}, 1, 0, true},
    {"s", {0, 0, 1, 0, 0, 0, 0}, 1, 0, true},
    {"A", {0, 0, 0, 1, 0, 0, 0}, 1, 0, true},
    {"K", {0, 0, 0, 0, 1, 0, 0}, 1, 0, true},
    {"mol", {0, 0, 0, 0, 0, 1, 0}, 1, 0, true},
    {"cd", {0, 0, 0, 0, 0, 0, 1}, 1, 0, true},
    /* derived units with special names */
    {"Hz", {0, 0, -1, 0, 0, 0, 0}, 1, 0, true},
    {"rad", {0, 0, 0, 0, 0, 0, 0}, 1, 0, true},
    {"sr", {0, 0, 0, 0, 0, 0, 0}, 1, 0, true},
    {"N", {1, 1, -2, 0, 0, 0, 0}, 1, 0, true},
    {"Pa", {1, -1, -2, 0, 0, 0, 0}, 1, 0, true},
    {"J", {1, 2, -2, 0, 0, 0, 0}, 1, 0, true},
    {"W", {1, 2, -3, 0, 0, 0, 0}, 1, 0, true},
    {"C", {0, 0, 1, 1, 0, 0, 0}, 1, 0, true},
    {"V", {1, 2, -3, -1, 0, 0, 0}, 1, 0, true},
    {"F", {-1, -2, 4, 2, 0, 0, 0}, 1, 0, true},
    {"\xCE\xA9", {1, 2, -3, -2, 0, 0, 0}, 1, 0, true}, /* Ω U+03A9 */
    {"\xE2\x84\xA6", {1, 2, -3, -2, 0, 0, 0}, 1, 0, true}, /* Ω U+2126 ohm sign */
    {"Ohm", {1, 2, -3, -2, 0, 0, 0}, 1, 0, true},
    {"S", {-1, -2, 3, 2, 0, 0, 0}, 1, 0, true},
    {"Wb", {1, 2, -2, -1, 0, 0, 0}, 1, 0, true},
    {"T", {1, 0, -2, -1, 0, 0, 0}, 1, 0, true},
    {"H", {1, 2, -2, -2, 0, 0, 0}, 1, 0, true},
    {"\xC2\xB0"
     "C", {0, 0, 0, 0, 1, 0, 0}, 1, 273.15, false}, /* °C */
    {"lm", {0, 0, 0, 0, 0, 0, 1}, 1, 0, true},
    {"lx", {0, -2, 0, 0, 0, 0, 1}, 1, 0, true},
    {"Bq", {0, 0, -1, 0, 0, 0, 0}, 1, 0, true},
    {"Gy", {0, 2, -2, 0, 0, 0, 0}, 1, 0, true},
    {"Sv", {0, 2, -2, 0, 0, 0, 0}, 1, 0, true},
    {"kat", {0, 0, -1, 0, 0, 1, 0}, 1, 0, true},
    /* display units */
    {"g", {1, 0, 0, 0, 0, 0, 0}, 1e-3, 0, true},
    {"bar", {1, -1, -2, 0, 0, 0, 0}, 1e5, 0, true},
    {"deg", {0, 0, 0, 0, 0, 0, 0}, UNIT_PI / 180, 0, false},
    {"\xC2\xB0", {0, 0, 0, 0, 0, 0, 0}, UNIT_PI / 180, 0, false}, /* ° */
    {"degC", {0, 0, 0, 0, 1, 0, 0}, 1, 273.15, false},
    {"dB", {0, 0, 0, 0, 0, 0, 0}, 1, 0, false},
    {"min", {0, 0, 1, 0, 0, 0, 0}, 60, 0, false},
    {"h", {0, 0, 1, 0, 0, 0, 0}, 3600, 0, false},
    {"l", {0, 3, 0, 0, 0, 0, 0}, 1e-3, 0, true},
    {"L", {0, 3, 0, 0, 0, 0, 0}, 1e-3, 0, true},
    {"rpm", {0, 0, -1, 0, 0, 0, 0}, 2 * UNIT_PI / 60, 0, false},
};

typedef struct UnitPrefix {
    const char *sym;
    double scale;
} UnitPrefix;

/* two-character spellings first so `da` wins over `d` */
static const UnitPrefix unit_prefixes[] = {
    {"da", 1e1},  {"\xC2\xB5", 1e-6}, {"\xCE\xBC", 1e-6}, /* µ U+00B5, μ U+03BC */
    {"Y", 1e24},  {"Z", 1e21},  {"E", 1e18},  {"P", 1e15},  {"T", 1e12},
    {"G", 1e9},   {"M", 1e6},   {"k", 1e3},   {"h", 1e2},   {"d", 1e-1},
    {"c", 1e-2},  {"m", 1e-3},  {"u", 1e-6},  {"n", 1e-9},  {"p", 1e-12},
    {"f", 1e-15}, {"a", 1e-18}, {"z", 1e-21}, {"y", 1e-24},
};

#define COUNT(a) (sizeof(a) / sizeof((a)[0]))

static Unit from_sym(const UnitSym *s, double prefix);
static const UnitSym *find_sym(const char *s, size_t len);

/* ---------- rationals ---------- */

static long gcd(long a, long b) {
    a = labs(a), b = labs(b);
    while (b) {
        long t = a % b;
        a = b;
        b = t;
    }
    return a ? a : 1;
}

/* n/d reduced; false if out of range (or d == 0) */
static bool rat_make(long n, long d, UnitRat *out) {
    if (d == 0) return false;
    if (d < 0) n = -n, d = -d;
    long g = gcd(n, d);
    n /= g, d /= g;
    if (labs(n) > UNIT_EXP_MAX || d > UNIT_EXP_MAX) return false;
    *out = (UnitRat){(int16_t)n, (int16_t)d};
    return true;
}

static bool rat_add(UnitRat a, UnitRat b, int sign, UnitRat *out) {
    return rat_make((long)a.num * b.den + sign * (long)b.num * a.den, (long)a.den * b.den, out);
}

bool unit_rat_from_double(double v, UnitRat *out) {
    if (!isfinite(v) || fabs(v) > UNIT_EXP_MAX) return false;
    for (int d = 1; d <= 12; d++) {
        double n = v * d;
        if (fabs(n - round(n)) < 1e-9) return rat_make(lround(n), d, out);
    }
    return false;
}

/* ---------- units ---------- */

Unit unit_one(void) {
    Unit u;
    for (int i = 0; i < UNIT_NBASE; i++) u.exp[i] = (UnitRat){0, 1};
    u.scale = 1;
    u.offset = 0;
    return u;
}

bool unit_same_dim(const Unit *a, const Unit *b) {
    for (int i = 0; i < UNIT_NBASE; i++)
        if (a->exp[i].num != b->exp[i].num || a->exp[i].den != b->exp[i].den) return false;
    return true;
}

bool unit_is_dimensionless(const Unit *u) {
    for (int i = 0; i < UNIT_NBASE; i++)
        if (u->exp[i].num) return false;
    return true;
}

/* a * b^sign; false if an exponent leaves the representable range */
static bool combine(const Unit *a, const Unit *b, int sign, Unit *out) {
    Unit r = *a;
    for (int i = 0; i < UNIT_NBASE; i++)
        if (!rat_add(a->exp[i], b->exp[i], sign, &r.exp[i])) return false;
    r.scale = sign > 0 ? a->scale * b->scale : a->scale / b->scale;
    r.offset = 0; /* a product of an affine unit is a difference unit */
    *out = r;
    return true;
}

bool unit_mul(const Unit *a, const Unit *b, Unit *out) { return combine(a, b, 1, out); }
bool unit_div(const Unit *a, const Unit *b, Unit *out) { return combine(a, b, -1, out); }

bool unit_pow(const Unit *a, UnitRat p, Unit *out) {
    Unit r = *a;
    for (int i = 0; i < UNIT_NBASE; i++)
        if (!rat_make((long)a->exp[i].num * p.num, (long)a->exp[i].den * p.den, &r.exp[i]))
            return false;
    r.scale = pow(a->scale, (double)p.num / p.den);
    r.offset = (p.num == p.den) ? a->offset : 0;
    *out = r;
    return true;
}

/* ---------- formatting ---------- */

const char *unit_si_name(const Unit *u) {
    static const char *const named[] = {"N", "Pa", "J", "W", "C", "V", "F", "\xCE\xA9", "S", "Wb", "T", "H"};
    for (size_t i = 0; i < COUNT(named); i++) {
        Unit n = from_sym(find_sym(named[i], strlen(named[i])), 1);
        if (unit_same_dim(&n, u)) return named[i];
    }
    return NULL;
}

static size_t put_term(char *buf, size_t n, size_t at, int i, UnitRat e, bool first) {
    int num = e.num < 0 ? -e.num : e.num;
    const char *sep = first ? "" : ".";
    int k;
    if (e.den != 1) k = snprintf(buf + at, n - at, "%s%s^(%d/%d)", sep, unit_base_names[i], num, e.den);
    else if (num != 1) k = snprintf(buf + at, n - at, "%s%s%d", sep, unit_base_names[i], num);
    else k = snprintf(buf + at, n - at, "%s%s", sep, unit_base_names[i]);
    if (k < 0) return at;
    at += (size_t)k;
    return at < n ? at : n - 1;
}

char *unit_format_dim(const Unit *u, char *buf, size_t n) {
    size_t at = 0;
    int npos = 0, nneg = 0;
    buf[0] = 0;
    for (int i = 0; i < UNIT_NBASE; i++) {
        if (u->exp[i].num > 0) at = put_term(buf, n, at, i, u->exp[i], npos++ == 0);
        else if (u->exp[i].num < 0) nneg++;
    }
    if (!nneg) {
        if (!npos) snprintf(buf, n, "1");
        return buf;
    }
    at += (size_t)snprintf(buf + at, n - at, "%s%s", npos ? "/" : "1/", nneg > 1 ? "(" : "");
    if (at >= n) return buf;
    int k = 0;
    for (int i = 0; i < UNIT_NBASE; i++)
        if (u->exp[i].num < 0) at = put_term(buf, n, at, i, u->exp[i], k++ == 0);
    if (nneg > 1 && at + 1 < n) snprintf(buf + at, n - at, ")");
    return buf;
}

/* ---------- parsing ---------- */

typedef struct UnitParser {
    const char *p;         /* next character */
    char *err;
    size_t errsize;
    bool failed;
} UnitParser;

static bool fail(UnitParser *P, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* the first error wins; always returns false */
static bool fail(UnitParser *P, const char *fmt, ...) {
    if (!P->failed && P->errsize) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(P->err, P->errsize, fmt, ap);
        va_end(ap);
    }
    P->failed = true;
    return false;
}

static Unit from_sym(const UnitSym *s, double prefix) {
    Unit u = unit_one();
    for (int i = 0; i < UNIT_NBASE; i++) u.exp[i] = (UnitRat){s->e[i], 1};
    u.scale = s->scale * prefix;
    u.offset = s->offset;
    return u;
}

static const UnitSym *find_sym(const char *s, size_t len) {
    for (size_t i = 0; i < COUNT(unit_syms); i++)
        if (strlen(unit_syms[i].sym) == len && memcmp(unit_syms[i].sym, s, len) == 0)
            return &unit_syms[i];
    return NULL;
}

/* exact symbol first, then prefix + prefixable symbol */
static bool lookup_symbol(const char *s, size_t len, Unit *out) {
    const UnitSym *u = find_sym(s, len);
    if (u) {
        *out = from_sym(u, 1);
        return true;
    }
    for (size_t i = 0; i < COUNT(unit_prefixes); i++) {
        size_t pl = strlen(unit_prefixes[i].sym);
        if (pl >= len || memcmp(unit_prefixes[i].sym, s, pl) != 0) continue;
        u = find_sym(s + pl, len - pl);
        if (u && u->prefixable) {
            *out = from_sym(u, unit_prefixes[i].scale);
            return true;
        }
    }
    return false;
}

/* the table symbol nearest to an unknown one, for "did you mean" */
static const char *closest_symbol(const char *s, size_t len) {
    char name[64];
    if (len >= sizeof name) return NULL;
    memcpy(name, s, len);
    name[len] = 0;
    const char *cands[COUNT(unit_syms)];
    for (size_t i = 0; i < COUNT(unit_syms); i++) {
        cands[i] = unit_syms[i].sym;
        if (strcasecmp(cands[i], name) == 0) return cands[i]; /* `ohm`, `degc`, `HZ` */
    }
    const char *near = suggest_name(name, cands, (uint32_t)COUNT(unit_syms));
    /* edit distance alone suggests `sr` for `fur`: keep the first letter */
    return near && tolower((unsigned char)near[0]) == tolower((unsigned char)name[0]) ? near : NULL;
}

static bool is_sym_char(unsigned char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c >= 0x80;
}

static bool is_digit(char c) { return c >= '0' && c <= '9'; }

static void skip_space(UnitParser *P) {
    while (*P->p == ' ') P->p++;
}

/* optional exponent; *e = 1 when absent */
static bool parse_exponent(UnitParser *P, long *e) {
    const char *q = P->p;
    *e = 1;
    if (*q == '^') q++;
    int sign = 1;
    if (*q == '-' || *q == '+') sign = *q++ == '-' ? -1 : 1;
    if (!is_digit(*q)) {
        if (q != P->p) return fail(P, "expected an integer exponent after `%.*s`", (int)(q - P->p), P->p);
        return true;
    }
    long v = 0;
    while (is_digit(*q)) {
        v = v * 10 + (*q++ - '0');
        if (v > UNIT_EXP_MAX) return fail(P, "exponent too large in `%.*s`", (int)(q - P->p), P->p);
    }
    if (v == 0) return fail(P, "exponent 0 in `%.*s`", (int)(q - P->p), P->p);
    *e = sign * v;
    P->p = q;
    return true;
}

static bool apply_exponent(UnitParser *P, Unit *u) {
    long e;
    if (!parse_exponent(P, &e)) return false;
    if (e == 1) return true;
    if (!unit_pow(u, (UnitRat){(int16_t)e, 1}, u)) return fail(P, "exponent out of range");
    return true;
}

static bool parse_product(UnitParser *P, Unit *out, int depth);

static bool parse_factor(UnitParser *P, Unit *out, int depth) {
    skip_space(P);
    const char *start = P->p;
    if (*P->p == '(') {
        P->p++;
        if (!parse_product(P, out, depth + 1)) return false;
        skip_space(P);
        if (*P->p != ')') return fail(P, "missing `)` in `%.*s`", (int)(P->p - start), start);
        P->p++;
        return apply_exponent(P, out);
    }
    if (is_digit(*P->p)) { /* "1" as in "1/K"; other numbers are not units */
        while (is_digit(*P->p)) P->p++;
        if (P->p - start != 1 || *start != '1')
            return fail(P, "`%.*s` is not a unit (only 1 may stand as a number)", (int)(P->p - start), start);
        *out = unit_one();
        return true;
    }
    while (is_sym_char((unsigned char)*P->p)) P->p++;
    size_t len = (size_t)(P->p - start);
    if (!len) {
        if (!*start) return fail(P, "expected a unit at the end");
        return fail(P, "expected a unit, found `%.*s`", 1, start);
    }
    if (!lookup_symbol(start, len, out)) {
        const char *near = closest_symbol(start, len);
        if (near) return fail(P, "unknown unit symbol `%.*s` (did you mean `%s`?)", (int)len, start, near);
        return fail(P, "unknown unit symbol `%.*s`", (int)len, start);
    }
    return apply_exponent(P, out);
}

static bool parse_product(UnitParser *P, Unit *out, int depth) {
    if (depth > 32) return fail(P, "parentheses nested too deeply");
    if (!parse_factor(P, out, depth)) return false;
    for (;;) {
        skip_space(P);
        char op = *P->p;
        if (op != '.' && op != '*' && op != '/') return true;
        P->p++;
        Unit f;
        if (!parse_factor(P, &f, depth)) return false;
        if (!combine(out, &f, op == '/' ? -1 : 1, out)) return fail(P, "exponent out of range");
    }
}

bool unit_parse(const char *s, Unit *out, char *err, size_t errsize) {
    UnitParser P = {s, err, errsize, false};
    if (errsize) err[0] = 0;
    skip_space(&P);
    if (!*P.p) return fail(&P, "empty unit string");
    Unit u;
    if (!parse_product(&P, &u, 0)) return false;
    skip_space(&P);
    if (*P.p == ')') return fail(&P, "unbalanced `)`");
    if (*P.p) return fail(&P, "unexpected `%.*s`", 1, P.p);
    *out = u;
    return true;
}
