/*
 * parse.c -- parse_file(): runs the scanner and the bison parser over one
 * SrcFile, then attaches `#` comments to items.
 *
 * Comment attachment rule (deterministic, so the formatter round-trips):
 *   - a comment with code before it on its line is the `trailing_comment` of
 *     the item that ends last before it on that line;
 *   - else, a comment on the opening line of a block (definition closed by
 *     `end`, `for`, `if`, `switch`, `case`, function) is its `head_comment`;
 *   - every other comment joins the `doc_comment` of the next item that
 *     starts after it inside the innermost enclosing block (items:
 *     definitions, declarations, relations, enum cases, switch cases,
 *     function statements); with no such item it is the block's
 *     `end_comment` (printed before `metadata`/`end`), or at top level the
 *     file's trailing comments.  So a comment never leaves its block.
 * Also: number values (SI prefixes) and string decoding used by the lexer
 * and the constructors.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "parse_internal.h"

/* ---------- numbers ---------- */

static double si_scale(const char *s, size_t n) {
    static const struct { const char *p; double v; } tab[] = {
        {"Q", 1e30}, {"R", 1e27}, {"Y", 1e24}, {"Z", 1e21}, {"E", 1e18}, {"P", 1e15},
        {"T", 1e12}, {"G", 1e9}, {"M", 1e6}, {"k", 1e3}, {"h", 1e2}, {"da", 1e1},
        {"d", 1e-1}, {"c", 1e-2}, {"m", 1e-3}, {"u", 1e-6}, {"\xCE\xBC", 1e-6},
        {"\xC2\xB5", 1e-6}, {"n", 1e-9}, {"p", 1e-12}, {"f", 1e-15}, {"a", 1e-18},
        {"z", 1e-21}, {"y", 1e-24}, {"r", 1e-27}, {"q", 1e-30},
    };
    for (size_t i = 0; i < sizeof tab / sizeof tab[0]; i++)
        if (strlen(tab[i].p) == n && memcmp(tab[i].p, s, n) == 0) return tab[i].v;
    return 1.0;
}

/* Length of the decimal literal at the start of text[0..n): digits, at
 * most one '.', and an exponent `e[+-]digits`; the rest is an SI suffix. */
static size_t number_prefix(const char *text, size_t n, bool *frac, bool *exp) {
    size_t i = 0;
    while (i < n) {
        char c = text[i];
        if (c >= '0' && c <= '9') { i++; continue; }
        if (c == '.' && !*frac && !*exp) { *frac = true; i++; continue; }
        if ((c == 'e' || c == 'E') && !*exp && i + 1 < n &&
            ((text[i + 1] >= '0' && text[i + 1] <= '9') || text[i + 1] == '+' || text[i + 1] == '-')) {
            *exp = true;
            i += 2;
            continue;
        }
        break;
    }
    return i;
}

/* The value of a number token of any length (strtod on a copy of exactly
 * the literal: correctly rounded, however many digits). */
double lex_number_value(const char *text, size_t n, bool *is_int) {
    bool frac = false, exp = false;
    size_t i = number_prefix(text, n, &frac, &exp);
    char small[64];
    char *buf = i < sizeof small ? small : malloc(i + 1);
    if (!buf) return NAN;
    memcpy(buf, text, i);
    buf[i] = '\0';
    double v = strtod(buf, NULL);
    if (buf != small) free(buf);
    double scale = i < n ? si_scale(text + i, n - i) : 1.0;
    *is_int = !frac && !exp && i == n;
    if (scale == 1.0) return v;
    if (scale > 1.0) return v * scale;
    char inv[32]; /* 100n == 1e-7 exactly: divide by the exact power of ten */
    snprintf(inv, sizeof inv, "1e%d", (int)lround(-log10(scale)));
    return v / strtod(inv, NULL);
}

/* ---------- strings ---------- */

static int hexval(char c) {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
}

static int hex4(const char *s, size_t avail) {
    if (avail < 4) return -1;
    int v = 0;
    for (int i = 0; i < 4; i++) {
        int h = hexval(s[i]);
        if (h < 0) return -1;
        v = v * 16 + h;
    }
    return v;
}

static size_t put_utf8(char *o, uint32_t cp) {
    if (cp < 0x80) { o[0] = (char)cp; return 1; }
    if (cp < 0x800) { o[0] = (char)(0xC0 | (cp >> 6)); o[1] = (char)(0x80 | (cp & 0x3F)); return 2; }
    if (cp < 0x10000) {
        o[0] = (char)(0xE0 | (cp >> 12)); o[1] = (char)(0x80 | ((cp >> 6) & 0x3F));
        o[2] = (char)(0x80 | (cp & 0x3F));
        return 3;
    }
    o[0] = (char)(0xF0 | (cp >> 18)); o[1] = (char)(0x80 | ((cp >> 12) & 0x3F));
    o[2] = (char)(0x80 | ((cp >> 6) & 0x3F)); o[3] = (char)(0x80 | (cp & 0x3F));
    return 4;
}

/* Decode one escape at s (s[0] == '\\'); returns bytes consumed, 0 if invalid. */
static size_t decode_escape(const char *s, size_t avail, char *o, size_t *olen) {
    if (avail < 2) return 0;
    char c = s[1];
    const char *simple = "b\bf\fn\nr\rt\tv\v\"\"\\\\//";
    for (const char *q = simple; *q; q += 2)
        if (*q == c) { o[(*olen)++] = q[1]; return 2; }
    if (c != 'u') return 0;
    int cp = hex4(s + 2, avail - 2);
    if (cp < 0) return 0;
    size_t used = 6;
    if (cp >= 0xD800 && cp <= 0xDBFF && avail >= 12 && s[6] == '\\' && s[7] == 'u') {
        int lo = hex4(s + 8, avail - 8);
        if (lo >= 0xDC00 && lo <= 0xDFFF) {
            cp = 0x10000 + ((cp - 0xD800) << 10) + (lo - 0xDC00);
            used = 12;
        }
    }
    if (cp >= 0xD800 && cp <= 0xDFFF) cp = 0xFFFD;
    *olen += put_utf8(o + *olen, (uint32_t)cp);
    return used;
}

char *lex_decode_string(Arena *a, const char *raw, size_t n, bool triple,
                        uint32_t *out_len, const char **bad_escape) {
    size_t q = triple ? 3 : 1;
    const char *s = raw + (n >= q ? q : n);
    size_t len = n >= q ? n - q : 0;
    if (len >= q && memcmp(s + len - q, triple ? "\"\"\"" : "\"", q) == 0 &&
        !(len > q && !triple && s[len - 2] == '\\' && false))
        len -= q;
    char *o = arena_alloc(a, len * 2 + 8);
    size_t ol = 0;
    *bad_escape = NULL;
    for (size_t i = 0; i < len;) {
        if (s[i] != '\\') { o[ol++] = s[i++]; continue; }
        size_t used = decode_escape(s + i, len - i, o, &ol);
        if (used == 0) {
            if (!*bad_escape) *bad_escape = s + i;
            o[ol++] = s[i++];
            if (i < len) o[ol++] = s[i++];
            continue;
        }
        i += used;
    }
    o[ol] = '\0';
    *out_len = (uint32_t)ol;
    return o;
}

/* ---------- comment attachment ---------- */

/* Items are numbered in creation order (inner before outer); the sorted
 * orders are arrays of those numbers, 4 bytes an item.  Merge sort: stable
 * and with the items as context, which qsort has not. */
typedef int (*ItemCmp)(AstNode *const *items, uint32_t a, uint32_t b);

static int by_lo(AstNode *const *it, uint32_t a, uint32_t b) {
    if (it[a]->span.lo != it[b]->span.lo) return it[a]->span.lo < it[b]->span.lo ? -1 : 1;
    return a < b ? 1 : a > b ? -1 : 0; /* outer (later) first */
}

static int by_hi(AstNode *const *it, uint32_t a, uint32_t b) {
    if (it[a]->span.hi != it[b]->span.hi) return it[a]->span.hi < it[b]->span.hi ? -1 : 1;
    return a < b ? -1 : a > b ? 1 : 0;
}

static void sort_items(AstNode *const *it, uint32_t *v, uint32_t *tmp, uint32_t n, ItemCmp cmp) {
    for (uint32_t w = 1; w < n; w *= 2) {
        for (uint32_t lo = 0; lo < n; lo += 2 * w) {
            uint32_t mid = lo + w < n ? lo + w : n, hi = lo + 2 * w < n ? lo + 2 * w : n;
            uint32_t i = lo, j = mid, k = lo;
            while (i < mid && j < hi) tmp[k++] = cmp(it, v[j], v[i]) < 0 ? v[j++] : v[i++];
            while (i < mid) tmp[k++] = v[i++];
            while (j < hi) tmp[k++] = v[j++];
        }
        memcpy(v, tmp, sizeof *v * n);
    }
}

static const char *comment_text(Parser *p, Span sp) {
    const char *t = p->src->text + sp.lo + 1;
    size_t n = sp.hi - sp.lo - 1;
    if (n && t[0] == ' ') { t++; n--; }
    while (n && (t[n - 1] == '\r' || t[n - 1] == ' ' || t[n - 1] == '\t')) n--;
    return arena_strndup(p->arena, t, n);
}

/* Comments that join one field (doc, end and file comments: one line each,
 * a field may gather thousands) are collected as (field, text) pairs and
 * joined once at the end: appending each to a growing string made a file
 * of 40,000 comment lines cost 6 GB and a minute. */
typedef struct Joined {
    const char **field;
    uint32_t order;           /* source order within the field */
    const char *text;
} Joined;
typedef Vec(Joined) JoinedVec;

static void join_later(Parser *p, JoinedVec *v, const char **field, const char *text) {
    vec_push(p->arena, v, ((Joined){field, v->len, text}));
}

static int by_field(const void *a, const void *b) {
    const Joined *x = a, *y = b;
    if (x->field != y->field) return (uintptr_t)x->field < (uintptr_t)y->field ? -1 : 1;
    return x->order < y->order ? -1 : x->order > y->order;
}

/* Each field gets its texts in source order, separated by newlines. */
static void join_all(Parser *p, Joined *v, uint32_t n) {
    if (n == 0) return; /* v is NULL then, which qsort must not see */
    qsort(v, n, sizeof *v, by_field);
    for (uint32_t i = 0, j; i < n; i = j) {
        size_t len = 0;
        for (j = i; j < n && v[j].field == v[i].field; j++) len += strlen(v[j].text) + 1;
        char *s = arena_alloc(p->arena, len), *w = s;
        for (uint32_t k = i; k < j; k++) {
            size_t m = strlen(v[k].text);
            memcpy(w, v[k].text, m);
            w += m;
            *w++ = k + 1 < j ? '\n' : 0;
        }
        *v[i].field = s;
    }
}

static bool same_line(Parser *p, uint32_t from, uint32_t to) {
    for (uint32_t i = from; i < to; i++)
        if (p->src->text[i] == '\n') return false;
    return true;
}

static AstNode *trailing_owner(Parser *p, const uint32_t *hi, uint32_t n, uint32_t at) {
    AstNode *const *it = p->items.data;
    uint32_t lo = 0, top = n;
    while (lo < top) { /* first entry with hi > at */
        uint32_t mid = (lo + top) / 2;
        if (it[hi[mid]]->span.hi <= at) lo = mid + 1;
        else top = mid;
    }
    if (lo == 0) return NULL;
    AstNode *cand = it[hi[lo - 1]];
    return same_line(p, cand->span.hi, at) ? cand : NULL;
}

static AstNode *next_item(AstNode *const *it, const uint32_t *los, uint32_t n, uint32_t at) {
    uint32_t lo = 0, top = n;
    while (lo < top) {
        uint32_t mid = (lo + top) / 2;
        if (it[los[mid]]->span.lo <= at) lo = mid + 1;
        else top = mid;
    }
    return lo < n ? it[los[lo]] : NULL;
}

/* Items closed by `end`: they keep the comments written inside them. */
static bool is_block(const AstNode *n) {
    switch (n->kind) {
    case AST_COMPONENT: case AST_ANALYSIS: case AST_STRUCT: return true;
    case AST_CONNECTOR: return n->def.alias == NULL;
    case AST_FUNCTION: case AST_FOR: case AST_IF: case AST_SWITCH: return true;
    case AST_BRANCH: return true; /* a `case`/`default` clause (items only) */
    default: return false;
    }
}

/* Items containing offset `at`, innermost on top: a sweep over the items in
 * start order (they nest properly) while comments come in source order. */
typedef struct Sweep {
    AstNode *const *items;
    const uint32_t *los;
    uint32_t n, next;
    Vec(AstNode *) stack;     /* as deep as the items nest */
    Arena *arena;
} Sweep;

static AstNode *enclosing_block(Sweep *s, uint32_t at) {
    while (s->next < s->n && s->items[s->los[s->next]]->span.lo <= at) {
        AstNode *it = s->items[s->los[s->next++]];
        while (s->stack.len && s->stack.data[s->stack.len - 1]->span.hi <= it->span.lo) s->stack.len--;
        vec_push(s->arena, &s->stack, it);
    }
    while (s->stack.len && s->stack.data[s->stack.len - 1]->span.hi <= at) s->stack.len--;
    for (uint32_t i = s->stack.len; i-- > 0;)
        if (is_block(s->stack.data[i]) && s->stack.data[i]->span.hi > at) return s->stack.data[i];
    return NULL;
}

/* One comment: trailing comment of the item ending before it on its line;
 * else head comment of the block whose opening line it is on; else doc
 * comment of the next item inside the same block; else end comment of that
 * block; at top level, the file's trailing comments. */
static void attach_one(Parser *p, AstFile *f, const uint32_t *los, const uint32_t *his, uint32_t n,
                       Sweep *sw, Comment *c, JoinedVec *joins) {
    const char *text = comment_text(p, c->span);
    AstNode *block = enclosing_block(sw, c->span.lo);
    AstNode *owner = c->own_line ? NULL : trailing_owner(p, his, n, c->span.lo);
    if (owner && !ast_trivia(owner)->trailing_comment) {
        ast_extra(p, owner)->trivia.trailing_comment = text;
        return;
    }
    if (!c->own_line && block && !ast_trivia(block)->head_comment &&
        same_line(p, block->span.lo, c->span.lo)) {
        ast_extra(p, block)->trivia.head_comment = text;
        return;
    }
    AstNode *next = next_item(p->items.data, los, n, c->span.lo);
    if (next && (!block || next->span.lo < block->span.hi))
        join_later(p, joins, &ast_extra(p, next)->trivia.doc_comment, text);
    else if (block)
        join_later(p, joins, &ast_extra(p, block)->trivia.end_comment, text);
    else
        join_later(p, joins, &f->trailing.doc_comment, text);
}

static void attach_comments(Parser *p, AstFile *f) {
    uint32_t n = p->items.len;
    if (p->comments.len == 0) return;
    uint32_t *los = ARENA_ARRAY(p->arena, uint32_t, n + 1), *his = ARENA_ARRAY(p->arena, uint32_t, n + 1);
    uint32_t *tmp = ARENA_ARRAY(p->arena, uint32_t, n + 1);
    for (uint32_t i = 0; i < n; i++) los[i] = his[i] = i;
    sort_items(p->items.data, los, tmp, n, by_lo);
    sort_items(p->items.data, his, tmp, n, by_hi);
    Sweep sw = {.items = p->items.data, .los = los, .n = n, .arena = p->arena};
    JoinedVec joins = {0};
    for (uint32_t i = 0; i < p->comments.len; i++)
        attach_one(p, f, los, his, n, &sw, &p->comments.data[i], &joins);
    join_all(p, joins.data, joins.len);
}

/* ---------- entry point ---------- */

AstFile *parse_file(Arena *a, Interner *in, SrcFile *src) {
    AstFile *f = ARENA_NEW(a, AstFile);
    f->src = src;
    Parser *p = ARENA_NEW(a, Parser);
    p->arena = a;
    p->in = in;
    p->src = src;
    if (lex_init(p) != 0) {
        diag_internal("cannot create the scanner");
        return f;
    }
    dyadc_yyparse(p, p->scanner);
    lex_done(p);
    attach_comments(p, f);
    f->items = (AstList){p->top.data, p->top.len};
    return f;
}
