/*
 * json.c -- a strict JSON reader for metadata (RFC 8259), keeping the byte
 * offset of every value and key so messages can point into the source.
 *
 * Recursive descent, one pass, linear in the text; nesting is capped at
 * JSON_MAX_DEPTH (no stack overflow on hostile input).  Strings are decoded
 * (escapes, \uXXXX with surrogate pairs, to UTF-8); numbers with strtod after
 * checking the JSON grammar.  Everything lives in the arena.
 */
#include "support.h"

#include <stdlib.h>
#include <string.h>

#define JSON_MAX_DEPTH 256

typedef struct {
    Arena *a;
    const char *s;
    size_t n, i;
    const char *err;
    uint32_t err_off;
} Jp;

static JsonValue *value(Jp *p, int depth);

static bool fail(Jp *p, const char *msg) {
    if (!p->err) {
        p->err = msg;
        p->err_off = (uint32_t)p->i;
    }
    return false;
}

static void ws(Jp *p) {
    while (p->i < p->n && (p->s[p->i] == ' ' || p->s[p->i] == '\t' || p->s[p->i] == '\n' || p->s[p->i] == '\r'))
        p->i++;
}

static bool eat(Jp *p, char c) {
    ws(p);
    if (p->i < p->n && p->s[p->i] == c) {
        p->i++;
        return true;
    }
    return false;
}

static JsonValue *node(Jp *p, JsonKind k, size_t lo) {
    JsonValue *v = ARENA_NEW(p->a, JsonValue);
    v->kind = k;
    v->lo = (uint32_t)lo;
    v->hi = (uint32_t)p->i;
    return v;
}

static int hex4(const char *s) {
    int v = 0;
    for (int k = 0; k < 4; k++) {
        char c = s[k];
        int d = c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : c >= 'A' && c <= 'F' ? c - 'A' + 10 : -1;
        if (d < 0) return -1;
        v = v * 16 + d;
    }
    return v;
}

static void put_utf8(char *out, size_t *len, uint32_t cp) {
    if (cp < 0x80) out[(*len)++] = (char)cp;
    else if (cp < 0x800) {
        out[(*len)++] = (char)(0xC0 | (cp >> 6));
        out[(*len)++] = (char)(0x80 | (cp & 0x3F));
    } else if (cp < 0x10000) {
        out[(*len)++] = (char)(0xE0 | (cp >> 12));
        out[(*len)++] = (char)(0x80 | ((cp >> 6) & 0x3F));
        out[(*len)++] = (char)(0x80 | (cp & 0x3F));
    } else {
        out[(*len)++] = (char)(0xF0 | (cp >> 18));
        out[(*len)++] = (char)(0x80 | ((cp >> 12) & 0x3F));
        out[(*len)++] = (char)(0x80 | ((cp >> 6) & 0x3F));
        out[(*len)++] = (char)(0x80 | (cp & 0x3F));
    }
}

/* \uXXXX (and its low surrogate) at p->i (after the backslash-u) */
static bool unicode(Jp *p, char *out, size_t *len) {
    int hi = p->i + 4 <= p->n ? hex4(p->s + p->i) : -1;
    if (hi < 0) return fail(p, "expected four hex digits after \\u");
    p->i += 4;
    uint32_t cp = (uint32_t)hi;
    if (hi >= 0xD800 && hi < 0xDC00) {
        int lo = p->i + 6 <= p->n && p->s[p->i] == '\\' && p->s[p->i + 1] == 'u' ? hex4(p->s + p->i + 2) : -1;
        if (lo < 0xDC00 || lo >= 0xE000) return fail(p, "unpaired surrogate in \\u escape");
        p->i += 6;
        cp = 0x10000 + (((uint32_t)hi - 0xD800) << 10) + ((uint32_t)lo - 0xDC00);
    }
    put_utf8(out, len, cp);
    return true;
}

static bool escape(Jp *p, char *out, size_t *len) {
    static const char from[] = "\"\\/bfnrt", to[] = "\"\\/\b\f\n\r\t";
    if (p->i >= p->n) return fail(p, "unterminated string");
    char c = p->s[p->i++];
    if (c == 'u') return unicode(p, out, len);
    const char *k = strchr(from, c);
    if (!k || !c) return fail(p, "invalid escape in string");
    out[(*len)++] = to[k - from];
    return true;
}

/* a string at p->i (at its opening quote); decoded into *out */
static bool string(Jp *p, const char **out) {
    p->i++;
    char *buf = arena_alloc(p->a, p->n - p->i + 1); /* decoding never grows the text */
    size_t len = 0;
    while (p->i < p->n && p->s[p->i] != '"') {
        unsigned char c = (unsigned char)p->s[p->i++];
        if (c < 0x20) return fail(p, "control character in string");
        if (c == '\\') {
            if (!escape(p, buf, &len)) return false;
        } else {
            buf[len++] = (char)c;
        }
    }
    if (p->i >= p->n) return fail(p, "unterminated string");
    p->i++;
    buf[len] = 0;
    *out = buf;
    return true;
}

static size_t digits(Jp *p) {
    size_t k = 0;
    while (p->i < p->n && p->s[p->i] >= '0' && p->s[p->i] <= '9') p->i++, k++;
    return k;
}

static JsonValue *number(Jp *p) {
    size_t lo = p->i;
    if (p->s[p->i] == '-') p->i++;
    if (p->i < p->n && p->s[p->i] == '0') p->i++;
    else if (!digits(p)) return fail(p, "invalid number"), NULL;
    if (p->i < p->n && p->s[p->i] == '.' && (p->i++, !digits(p))) return fail(p, "digits expected after '.'"), NULL;
    if (p->i < p->n && (p->s[p->i] == 'e' || p->s[p->i] == 'E')) {
        p->i++;
        if (p->i < p->n && (p->s[p->i] == '+' || p->s[p->i] == '-')) p->i++;
        if (!digits(p)) return fail(p, "digits expected in the exponent"), NULL;
    }
    JsonValue *v = node(p, JSON_NUMBER, lo);
    char *tmp = arena_strndup(p->a, p->s + lo, p->i - lo);
    v->num = strtod(tmp, NULL);
    return v;
}

static bool word(Jp *p, const char *w) {
    size_t k = strlen(w);
    if (p->i + k > p->n || memcmp(p->s + p->i, w, k) != 0) return false;
    p->i += k;
    return true;
}

static JsonValue *literal(Jp *p) {
    size_t lo = p->i;
    if (word(p, "true") || word(p, "false")) {
        JsonValue *v = node(p, JSON_BOOL, lo);
        v->num = p->s[lo] == 't';
        return v;
    }
    if (word(p, "null")) return node(p, JSON_NULL, lo);
    fail(p, "expected a value (object, array, string, number, true, false or null)");
    return NULL;
}

typedef struct {
    Vec(JsonValue *) items;
    Vec(const char *) keys;
} Members;

static JsonValue *finish(Jp *p, JsonKind k, size_t lo, Members *m) {
    JsonValue *v = node(p, k, lo);
    v->n = m->items.len;
    v->items = m->items.data;
    v->keys = m->keys.data;
    return v;
}

static JsonValue *array(Jp *p, int depth) {
    size_t lo = p->i++;
    Members m = {0};
    if (eat(p, ']')) return finish(p, JSON_ARRAY, lo, &m);
    do {
        JsonValue *e = value(p, depth + 1);
        if (!e) return NULL;
        vec_push(p->a, &m.items, e);
    } while (eat(p, ','));
    if (!eat(p, ']')) return fail(p, "expected ',' or ']' in array"), NULL;
    return finish(p, JSON_ARRAY, lo, &m);
}

static JsonValue *object(Jp *p, int depth) {
    size_t lo = p->i++;
    Members m = {0};
    if (eat(p, '}')) return finish(p, JSON_OBJECT, lo, &m);
    do {
        ws(p);
        const char *key;
        if (p->i >= p->n || p->s[p->i] != '"') return fail(p, "expected a string key in object"), NULL;
        size_t klo = p->i;
        if (!string(p, &key)) return NULL;
        if (!eat(p, ':')) return fail(p, "expected ':' after the key"), NULL;
        JsonValue *e = value(p, depth + 1);
        if (!e) return NULL;
        e->key_lo = (uint32_t)klo;
        vec_push(p->a, &m.items, e);
        vec_push(p->a, &m.keys, key);
    } while (eat(p, ','));
    if (!eat(p, '}')) return fail(p, "expected ',' or '}' in object"), NULL;
    return finish(p, JSON_OBJECT, lo, &m);
}

static JsonValue *value(Jp *p, int depth) {
    ws(p);
    if (depth > JSON_MAX_DEPTH) return fail(p, "nested too deeply"), NULL;
    if (p->i >= p->n) return fail(p, "unexpected end of text"), NULL;
    char c = p->s[p->i];
    if (c == '{') return object(p, depth);
    if (c == '[') return array(p, depth);
    if (c == '-' || (c >= '0' && c <= '9')) return number(p);
    if (c == '"') {
        size_t lo = p->i;
        const char *str;
        if (!string(p, &str)) return NULL;
        JsonValue *v = node(p, JSON_STRING, lo);
        v->str = str;
        return v;
    }
    return literal(p);
}

JsonValue *json_parse(Arena *a, const char *text, size_t len, uint32_t *err_off, const char **err_msg) {
    Jp p = {a, text, len, 0, NULL, 0};
    JsonValue *v = value(&p, 0);
    ws(&p);
    if (v && p.i < p.n) fail(&p, "text after the JSON value"), v = NULL;
    if (!v) {
        *err_off = p.err_off;
        *err_msg = p.err ? p.err : "invalid JSON";
    }
    return v;
}

JsonValue *json_get(const JsonValue *obj, const char *key) {
    if (!obj || obj->kind != JSON_OBJECT) return NULL;
    for (uint32_t i = 0; i < obj->n; i++)
        if (strcmp(obj->keys[i], key) == 0) return obj->items[i];
    return NULL;
}
