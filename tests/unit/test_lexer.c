/* test_lexer.c -- the Dyad scanner: SI-suffixed numbers, the `2mm` hazard,
 * UTF-8 identifiers, strings and escapes, metadata blobs, byte spans,
 * the `not` and `state` keywords. */
#include <check.h>

#include "../check_run.h"
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "ast.h"
#include "lexer_api.h"

static Arena *A;
static Interner *I;
static LexTok *T;
static uint32_t N;

static uint32_t lex(const char *s) {
    if (A) {
        src_reset(); /* the source table points into the arena */
        arena_free(A);
    }
    A = arena_new();
    I = intern_new(A);
    SrcFile *f = src_from_string(A, "t.dyad", s, strlen(s));
    N = lex_all(A, I, f, &T);
    return N;
}

static double num1(const char *s) {
    ck_assert_uint_eq(lex(s), 1);
    ck_assert_int_eq(T[0].cls, LEXK_NUMBER);
    return T[0].num;
}

START_TEST(numbers_with_si_suffixes) {
    ck_assert_double_eq(num1("10k"), 10000.0);
    ck_assert_double_eq(num1("1m"), 1e-3);
    ck_assert_double_eq(num1("100n"), 1e-7);
    ck_assert_double_eq(num1("1E"), 1e18);
    ck_assert_double_eq(num1("1da"), 10.0);
    ck_assert_double_eq(num1("1d"), 0.1);
    ck_assert_double_eq(num1("2u"), 2e-6);
    ck_assert_double_eq(num1("2μ"), 2e-6);
    ck_assert_double_eq(num1("1M"), 1e6);
    ck_assert_double_eq(num1("1E3"), 1000.0);
    ck_assert_double_eq(num1("2.5e-3"), 2.5e-3);
    ck_assert_double_eq(num1("0.001m"), 1e-6);
    ck_assert(T[0].is_int == false);
    num1("42");
    ck_assert(T[0].is_int);
}
END_TEST

/* Literals of any length: the value is the correctly rounded one (no
 * 127-character buffer: an `e` at index 126 wrote one byte past it, and
 * `1` with 200 zeros read as 1e126). */
START_TEST(long_literals) {
    char s[512];
    memset(s, '0', sizeof s);
    s[0] = '1';
    s[201] = 0;                              /* 1 and 200 zeros */
    ck_assert_double_eq(num1(s), 1e200);
    memset(s, '1', 126);                     /* 126 ones, then e-120 */
    strcpy(s + 126, "e-120");
    ck_assert_double_eq(num1(s), strtod(s, NULL));
    ck_assert(T[0].is_int == false);
    memset(s, '0', 300);                     /* 0. then 298 zeros then 1: 1e-299 */
    s[0] = '0', s[1] = '.';
    strcpy(s + 300, "1");
    ck_assert_double_eq(num1(s), 1e-299);
    memset(s, '9', 400);                     /* 400 nines then k: 1e400 * 1e3 overflows */
    strcpy(s + 400, "k");
    ck_assert(isinf(num1(s)));
}
END_TEST

START_TEST(exponent_or_prefix_not_both) {
    /* `2mm` is `2m` then the identifier `m` */
    ck_assert_uint_eq(lex("2mm"), 2);
    ck_assert_int_eq(T[0].cls, LEXK_NUMBER);
    ck_assert_double_eq(T[0].num, 2e-3);
    ck_assert_int_eq(T[1].cls, LEXK_IDENT);
    ck_assert_str_eq(T[1].ident, "m");
    /* `1e3k`: exponent, then identifier `k` */
    ck_assert_uint_eq(lex("1e3k"), 2);
    ck_assert_double_eq(T[0].num, 1000.0);
    ck_assert_str_eq(T[1].ident, "k");
    /* `1.` is not a number with a fraction */
    ck_assert_uint_eq(lex("1.x"), 3);
}
END_TEST

START_TEST(utf8_identifiers) {
    ck_assert_uint_eq(lex("ω₀ Δp π k₁ μ_0 🐰 x_1"), 7);
    for (uint32_t i = 0; i < N; i++) ck_assert_int_eq(T[i].cls, LEXK_IDENT);
    ck_assert_str_eq(T[0].ident, "ω₀");
    ck_assert_str_eq(T[1].ident, "Δp");
    ck_assert_str_eq(T[5].ident, "🐰");
    ck_assert_uint_eq(T[0].span.lo, 0);
    ck_assert_uint_eq(T[0].span.hi, 5); /* ω (2 bytes) + ₀ (3 bytes) */
    /* keywords are not identifiers, but longer names are */
    ck_assert_uint_eq(lex("end endx trueValue true"), 4);
    ck_assert_int_eq(T[0].cls, LEXK_KEYWORD);
    ck_assert_int_eq(T[1].cls, LEXK_IDENT);
    ck_assert_int_eq(T[2].cls, LEXK_IDENT);
    ck_assert_int_eq(T[3].cls, LEXK_KEYWORD);
}
END_TEST

/* A UTF-8 byte-order mark at the start is skipped (spans still count its
 * 3 bytes); before, it was part of the first name ("unexpected name"). */
START_TEST(byte_order_mark) {
    ck_assert_uint_eq(lex("\xEF\xBB\xBF" "component M"), 2);
    ck_assert_int_eq(T[0].cls, LEXK_KEYWORD);
    ck_assert_uint_eq(T[0].span.lo, 3);
    ck_assert_int_eq(T[1].cls, LEXK_IDENT);
    ck_assert_str_eq(T[1].ident, "M");
}
END_TEST

START_TEST(strings_and_escapes) {
    ck_assert_uint_eq(lex("\"a\\n\\\"b\\u00e9\" \"\"\"multi\n\"line\"\n\"\"\""), 2);
    ck_assert_int_eq(T[0].cls, LEXK_STRING);
    ck_assert_int_eq(T[1].cls, LEXK_STRING);
    ck_assert_uint_eq(T[1].span.hi, N ? (uint32_t)strlen("\"a\\n\\\"b\\u00e9\" \"\"\"multi\n\"line\"\n\"\"\"") : 0);
    uint32_t len;
    const char *bad;
    const char *raw = "\"a\\n\\\"b\\u00e9\\/\"";
    char *s = lex_decode_string(A, raw, strlen(raw), false, &len, &bad);
    ck_assert_ptr_null(bad);
    ck_assert_str_eq(s, "a\n\"bé/");
    raw = "\"\\q\"";
    lex_decode_string(A, raw, strlen(raw), false, &len, &bad);
    ck_assert_ptr_nonnull(bad);
}
END_TEST

START_TEST(comments_metadata_and_spans) {
    ck_assert_uint_eq(lex("x # comment\n  y {\"a\": {\"b\": \"}\"}} {^id7} [{\"k\": 1}]"), 5);
    ck_assert_uint_eq(T[1].span.lo, 14);
    ck_assert_int_eq(T[2].cls, LEXK_META);
    ck_assert_int_eq(T[3].cls, LEXK_META);
    ck_assert_int_eq(T[4].cls, LEXK_META);
    ck_assert_uint_eq(T[2].span.hi - T[2].span.lo, strlen("{\"a\": {\"b\": \"}\"}}"));
    /* operators */
    ck_assert_uint_eq(lex("a != b <> c :: d => e <= f"), 11);
}
END_TEST

START_TEST(not_and_state_are_keywords) {
    ck_assert_uint_eq(lex("not x state S notx states"), 6);
    ck_assert_int_eq(T[0].cls, LEXK_KEYWORD);
    ck_assert_int_eq(T[1].cls, LEXK_IDENT);
    ck_assert_int_eq(T[2].cls, LEXK_KEYWORD);
    ck_assert_int_eq(T[4].cls, LEXK_IDENT);
    ck_assert_int_eq(T[5].cls, LEXK_IDENT);
}
END_TEST

START_TEST(bad_input_never_loops) {
    diag_set_output(fopen("/dev/null", "w"));
    const char bytes[] = "x\0\xff\xfe \"unterminated\n\"\"\"also {never";
    SrcFile *f;
    if (A) arena_free(A);
    A = arena_new();
    I = intern_new(A);
    f = src_from_string(A, "bad.dyad", bytes, sizeof bytes - 1);
    N = lex_all(A, I, f, &T);
    ck_assert_uint_ge(N, 2);
    AstFile *af = parse_file(A, I, f);
    ck_assert_ptr_nonnull(af);
    diag_set_output(NULL);
}
END_TEST

Suite *lexer_suite(void) {
    Suite *s = suite_create("lexer");
    TCase *tc = tcase_create("core");
    tcase_add_test(tc, numbers_with_si_suffixes);
    tcase_add_test(tc, long_literals);
    tcase_add_test(tc, exponent_or_prefix_not_both);
    tcase_add_test(tc, utf8_identifiers);
    tcase_add_test(tc, byte_order_mark);
    tcase_add_test(tc, strings_and_escapes);
    tcase_add_test(tc, comments_metadata_and_spans);
    tcase_add_test(tc, not_and_state_are_keywords);
    tcase_add_test(tc, bad_input_never_loops);
    suite_add_tcase(s, tc);
    return s;
}

int main(void) {
    int failed = check_failures(lexer_suite());
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
