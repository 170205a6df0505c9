/* test_support.c -- arena, interned names, vectors, hash maps, sources and diagnostics. */
#include <check.h>

#include "../check_run.h"
#include <stdlib.h>
#include <string.h>

#include "support.h"

START_TEST(arena_alloc_is_zeroed_and_aligned) {
    Arena *a = arena_new();
    for (int i = 1; i < 5000; i += 37) {
        unsigned char *p = arena_alloc(a, (size_t)i);
        ck_assert_int_eq((uintptr_t)p % 8, 0);
        char *str = arena_strndup(a, "abc", (size_t)(i % 3)); /* strings pack unaligned */
        ck_assert_uint_eq(strlen(str), (size_t)(i % 3));
        for (int k = 0; k < i; k++) ck_assert_int_eq(p[k], 0);
        memset(p, 0xAB, (size_t)i);
    }
    void *big = arena_alloc(a, 1 << 20); /* larger than a chunk */
    ck_assert_ptr_nonnull(big);
    ck_assert_uint_ge(arena_bytes(a), 1u << 20);
    ck_assert_str_eq(arena_printf(a, "%s.%d", "r", 7), "r.7");
    arena_free(a);
}
END_TEST

START_TEST(intern_gives_one_pointer_per_name) {
    Arena *a = arena_new();
    Interner *in = intern_new(a);
    Sym x = intern_cstr(in, "ω₀");
    char buf[16];
    strcpy(buf, "ω₀");
    ck_assert_ptr_eq(intern_cstr(in, buf), x);
    ck_assert_ptr_ne(intern_cstr(in, "ω₁"), x);
    ck_assert_ptr_eq(intern(in, "abcdef", 3), intern_cstr(in, "abc"));
    /* growth keeps every name */
    Sym names[5000];
    for (int i = 0; i < 5000; i++) names[i] = intern_cstr(in, arena_printf(a, "n%d", i));
    for (int i = 0; i < 5000; i++) ck_assert_ptr_eq(intern_cstr(in, arena_printf(a, "n%d", i)), names[i]);
    arena_free(a);
}
END_TEST

START_TEST(vec_and_hashmap) {
    Arena *a = arena_new();
    Vec(int) v = {0};
    for (int i = 0; i < 10000; i++) vec_push(a, &v, i * 3);
    ck_assert_uint_eq(v.len, 10000);
    ck_assert_int_eq(v.data[9999], 29997);
    HashMap m = {0};
    for (uint64_t k = 1; k <= 20000; k++) hmap_put(a, &m, k * 7919, (void *)(uintptr_t)k);
    for (uint64_t k = 1; k <= 20000; k++) ck_assert_ptr_eq(hmap_get(&m, k * 7919), (void *)(uintptr_t)k);
    ck_assert_ptr_null(hmap_get(&m, 3));
    arena_free(a);
}
END_TEST

START_TEST(diagnostic_has_location_line_and_caret) {
    Arena *a = arena_new();
    const char *text = "component A\n  variable x::Real\nrelations\n  x = yy + 1\nend\n";
    SrcFile *f = src_from_string(a, "dir/a.dyad", text, strlen(text));
    char *buf = NULL;
    size_t len = 0;
    FILE *out = open_memstream(&buf, &len);
    diag_set_output(out);
    diag_reset();
    uint32_t lo = (uint32_t)(strstr(text, "yy") - text);
    diag_error((Span){f->id, lo, lo + 2}, "unknown name `%s`", "yy");
    fclose(out);
    diag_set_output(NULL);
    ck_assert_str_eq(buf, "dir/a.dyad:4:7: error: unknown name `yy`\n"
                          "    4 |   x = yy + 1\n"
                          "      |       ^~\n");
    ck_assert_uint_eq(diag_error_count(), 1);
    free(buf);
    diag_reset();
    src_reset();
    arena_free(a);
}
END_TEST

START_TEST(columns_count_code_points) {
    Arena *a = arena_new();
    const char *text = "Δp = ω₀\n";
    SrcFile *f = src_from_string(a, "u.dyad", text, strlen(text));
    uint32_t line, col;
    src_line_col(f, (uint32_t)(strstr(text, "ω") - text), &line, &col);
    ck_assert_uint_eq(line, 1);
    ck_assert_uint_eq(col, 6);
    src_reset();
    arena_free(a);
}
END_TEST

/* A repeat (same level, span, text) is counted but not printed, nor are the
 * notes after it; a different text at the same span, or the same text
 * elsewhere, is printed. */
START_TEST(repeated_diagnostics_print_once) {
    Arena *a = arena_new();
    const char *text = "component A\n  x = y\nend\n";
    SrcFile *f = src_from_string(a, "r.dyad", text, strlen(text));
    char *buf = NULL;
    size_t len = 0;
    FILE *out = open_memstream(&buf, &len);
    diag_set_output(out);
    diag_reset();
    Span at = {f->id, 14, 15}, other = {f->id, 18, 19};
    for (int i = 0; i < 3; i++) { /* as if reached through three enclosing components */
        diag_error(at, "unknown name `%s`", "x");
        diag_note(other, "first note %d", i);
    }
    diag_error(at, "unknown name `%s`", "z");
    diag_error(other, "unknown name `%s`", "x");
    diag_warning(at, "unknown name `%s`", "x"); /* another level */
    diag_set_output(NULL);
    fclose(out);
    ck_assert_uint_eq(diag_error_count(), 5);
    ck_assert_uint_eq(diag_errors_shown(), 3);
    ck_assert_uint_eq(diag_warnings_shown(), 1);
    int errors = 0, notes = 0;
    for (const char *p = buf; (p = strstr(p, ": error: ")); p++) errors++;
    for (const char *p = buf; (p = strstr(p, ": note: ")); p++) notes++;
    ck_assert_int_eq(errors, 3);
    ck_assert_int_eq(notes, 1);
    ck_assert_ptr_nonnull(strstr(buf, "first note 0"));
    free(buf);
    diag_reset();
    src_reset();
    arena_free(a);
}
END_TEST

START_TEST(suggestions) {
    Sym cands[] = {"Resistor", "Capacitor", "Inductor"};
    ck_assert_str_eq(suggest_name("Resistr", cands, 3), "Resistor");
    ck_assert_ptr_null(suggest_name("Zzz", cands, 3));
}
END_TEST

/* A long list shows DIAG_LIST_SHOWN names and counts the rest with
 * thousands separators; a short one is shown whole, without a hint. */
START_TEST(capped_lists) {
    Arena *a = arena_new();
    DiagList few = {.arena = a};
    diag_list_add(&few, "x");
    diag_list_add(&few, "y");
    ck_assert_str_eq(diag_list_text(&few, "`--list-states`"), "`x`, `y`");
    DiagList many = {.arena = a};
    char name[16];
    for (int i = 1; i <= 20000; i++) {
        snprintf(name, sizeof name, "c%d.v", i);
        diag_list_add(&many, name);
    }
    ck_assert_uint_eq(many.count, 20000);
    ck_assert_str_eq(diag_list_text(&many, "`--list-states`"),
                     "`c1.v`, `c2.v`, `c3.v`, `c4.v`, `c5.v`, `c6.v`, `c7.v`, `c8.v`, `c9.v`, "
                     "`c10.v` ... and 19,990 more; `--list-states` to see all");
    ck_assert_str_eq(fmt_thousands(a, 1234567), "1,234,567");
    ck_assert_str_eq(fmt_thousands(a, 999), "999");
    DiagList empty = {.arena = a};
    ck_assert_str_eq(diag_list_text(&empty, NULL), "");
    arena_free(a);
}
END_TEST

/* json.c: values with their offsets, decoded strings, errors with offsets */
START_TEST(json_values_offsets_errors) {
    Arena *a = arena_new();
    const char *text = "{\"tests\": {\"case1\": {\"stop\": 1.5e1, \"atol\": {\"x\": 1e-3},\n"
                       "  \"expect\": {\"signals\": [\"x\", \"y\"], \"ok\": true, \"no\": null}}},\n"
                       "  \"s\": \"a\\\"b\\u00e9\\ud83d\\ude00\", \"neg\": -0.25}";
    uint32_t off = 0;
    const char *msg = NULL;
    JsonValue *v = json_parse(a, text, strlen(text), &off, &msg);
    ck_assert_ptr_nonnull(v);
    JsonValue *c = json_get(json_get(v, "tests"), "case1");
    ck_assert_int_eq(c->kind, JSON_OBJECT);
    JsonValue *stop = json_get(c, "stop");
    ck_assert_double_eq(stop->num, 15.0);
    ck_assert_int_eq(strncmp(text + stop->lo, "1.5e1", stop->hi - stop->lo), 0);
    ck_assert_int_eq(strncmp(text + stop->key_lo, "\"stop\"", 6), 0);
    JsonValue *sig = json_get(json_get(c, "expect"), "signals");
    ck_assert_int_eq(sig->kind, JSON_ARRAY);
    ck_assert_uint_eq(sig->n, 2);
    ck_assert_str_eq(sig->items[1]->str, "y");
    ck_assert_double_eq(json_get(json_get(c, "expect"), "ok")->num, 1);
    ck_assert_int_eq(json_get(json_get(c, "expect"), "no")->kind, JSON_NULL);
    ck_assert_str_eq(json_get(v, "s")->str, "a\"b\xc3\xa9\xf0\x9f\x98\x80");
    ck_assert_double_eq(json_get(v, "neg")->num, -0.25);
    ck_assert_ptr_null(json_get(v, "absent"));
    static const struct { const char *text; uint32_t off; const char *msg; } bad[] = {
        {"{\"a\": 1,}", 8, "expected a string key"},
        {"{\"a\" 1}", 5, "expected ':'"},
        {"[1, 2", 5, "expected ',' or ']'"},
        {"{\"a\": 01}", 7, "expected ',' or '}'"},
        {"{\"a\": \"x\\q\"}", 10, "invalid escape"},
        {"{\"a\": tru}", 6, "expected a value"},
        {"1 2", 2, "text after"},
        {"-", 1, "invalid number"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        v = json_parse(a, bad[i].text, strlen(bad[i].text), &off, &msg);
        ck_assert_msg(!v, "%s parsed", bad[i].text);
        ck_assert_msg(strstr(msg, bad[i].msg) != NULL, "%s: %s", bad[i].text, msg);
        ck_assert_msg(off == bad[i].off, "%s: offset %u, expected %u", bad[i].text, off, bad[i].off);
    }
    char deep[2000];
    memset(deep, '[', sizeof deep);
    v = json_parse(a, deep, sizeof deep, &off, &msg);
    ck_assert_ptr_null(v);
    ck_assert_str_eq(msg, "nested too deeply");
    arena_free(a);
}
END_TEST

int main(void) {
    Suite *s = suite_create("support");
    TCase *tc = tcase_create("core");
    tcase_add_test(tc, arena_alloc_is_zeroed_and_aligned);
    tcase_add_test(tc, intern_gives_one_pointer_per_name);
    tcase_add_test(tc, vec_and_hashmap);
    tcase_add_test(tc, diagnostic_has_location_line_and_caret);
    tcase_add_test(tc, columns_count_code_points);
    tcase_add_test(tc, repeated_diagnostics_print_once);
    tcase_add_test(tc, suggestions);
    tcase_add_test(tc, capped_lists);
    tcase_add_test(tc, json_values_offsets_errors);
    suite_add_tcase(s, tc);
    int failed = check_failures(s);
    return failed ? 1 : 0;
}
