/*
 * test_numfmt.c -- dyrt_format_double (runtime/numfmt.c) against strtod and
 * glibc's correctly rounded printf("%.*e"), which are the references:
 *   1. round trip: strtod(text) == x, bit for bit;
 *   2. shortest: no decimal with one digit less reads back to x.  The only
 *      candidates are the two (n-1)-digit decimals around x, i.e. printf's
 *      correctly rounded one and its neighbour on the other side; all are
 *      tried;
 *   3. closest: when printf's correctly rounded n-digit decimal reads back,
 *      the output is that decimal (same digits, ties to even);
 *   4. a decimal of at most 15 significant digits (DBL_DIG: it is the only
 *      such decimal of its double) comes back exactly as written;
 *   5. the layout: fixed for decimal exponents -4..16, else d.ddde+XX, as
 *      printf's %g, on listed values.
 * Values: specials, every power of two (narrow rounding intervals), powers
 * of ten and their neighbours, random bit patterns (every exponent,
 * subnormals), values of simulation size, short decimals.
 */
#include <check.h>

#include "../check_run.h"
#include <float.h>
#include <stdbool.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "numfmt.h"

static uint64_t rng = 0x9e3779b97f4a7c15ull;

static uint64_t next_u64(void) /* xorshift64* */
{
    rng ^= rng >> 12;
    rng ^= rng << 25;
    rng ^= rng >> 27;
    return rng * 2685821657736338717ull;
}

static double from_bits(uint64_t b)
{
    double x;
    memcpy(&x, &b, sizeof x);
    return x;
}

static bool same(double a, double b) { return memcmp(&a, &b, sizeof a) == 0; }

/* A decimal m * 10^e (m > 0), normalized: no trailing zeros in m. */
typedef struct {
    uint64_t m;
    int e;
} Dec;

static Dec norm(Dec d)
{
    while (d.m && d.m % 10 == 0) {
        d.m /= 10;
        d.e++;
    }
    return d;
}

static int ndigits(uint64_t m)
{
    int n = 1;
    while (m >= 10) {
        m /= 10;
        n++;
    }
    return n;
}

/* the decimal a text spells (digits, optional point, optional exponent) */
static Dec parse(const char *s)
{
    Dec d = {0, 0};
    int frac = 0, point = 0;
    if (*s == '-')
        s++;
    for (; *s && *s != 'e'; s++) {
        if (*s == '.') {
            point = 1;
            continue;
        }
        d.m = d.m * 10 + (uint64_t)(*s - '0');
        frac += point;
    }
    d.e = (*s == 'e' ? atoi(s + 1) : 0) - frac;
    return norm(d);
}

/* printf's correctly rounded p-digit decimal of |x| */
static Dec rounded(double x, int p)
{
    char b[64];
    snprintf(b, sizeof b, "%.*e", p - 1, fabs(x));
    return parse(b);
}

static bool reads_back(double x, Dec d)
{
    char b[64];
    snprintf(b, sizeof b, "%s%llue%d", signbit(x) ? "-" : "", (unsigned long long)d.m, d.e);
    return same(strtod(b, NULL), x);
}

/* the two p-digit neighbours of the p-digit decimal r = m 10^e (m has p
 * digits before normalization; below 10^(p-1) the grid is ten times finer) */
static void neighbours(Dec r, int p, Dec out[2])
{
    while (ndigits(r.m) < p) { /* back to p digits */
        r.m *= 10;
        r.e--;
    }
    out[1] = (Dec){r.m + 1, r.e};
    uint64_t low = 1;
    for (int i = 1; i < p; i++)
        low *= 10;
    out[0] = r.m == low ? (Dec){10 * r.m - 1, r.e - 1} : (Dec){r.m - 1, r.e};
}

static long nchecked;

static void check_one(double x)
{
    char got[DYRT_FMT_MAX];
    int len = dyrt_format_double(got, x);
    /* plain ifs: Check records every passing ck_assert (a syscall each) */
    if (len != (int)strlen(got))
        ck_abort_msg("x = %a: length %d for '%s'", x, len, got);
    if (!same(strtod(got, NULL), x))
        ck_abort_msg("x = %a: '%s' reads back as %a", x, got, strtod(got, NULL));
    nchecked++;
    if (x == 0)
        return;
    Dec d = parse(got);
    int n = ndigits(d.m);
    if (n > 1) {
        Dec r = rounded(x, n - 1), nb[2];
        neighbours(r, n - 1, nb);
        if (reads_back(x, r) || reads_back(x, nb[0]) || reads_back(x, nb[1]))
            ck_abort_msg("x = %a: '%s' is not the shortest (%llue%d has %d digits)", x, got,
                         (unsigned long long)r.m, r.e, n - 1);
    }
    Dec r = rounded(x, n);
    if (reads_back(x, r) && (r.m != d.m || r.e != d.e))
        ck_abort_msg("x = %a: '%s' but %llue%d is closer", x, got, (unsigned long long)r.m, r.e);
}

START_TEST(layout)
{
    static const struct {
        double x;
        const char *text;
    } v[] = {
        {0.04, "0.04"}, {0.1 + 0.2, "0.30000000000000004"}, {1.0, "1"}, {-1.5, "-1.5"},
        {100.0, "100"}, {0.0, "0"}, {-0.0, "-0"}, {1e-4, "0.0001"}, {1.2e-4, "0.00012"},
        {1e-5, "1e-05"}, {-2.5e-7, "-2.5e-07"}, {1e16, "10000000000000000"},
        {1.5e16, "15000000000000000"}, {1e17, "1e+17"}, {123456789012345678.0, "1.2345678901234568e+17"},
        {9007199254740992.0, "9007199254740992"}, {0.3, "0.3"}, {2.0 / 3.0, "0.6666666666666666"},
        {5e-324, "5e-324"}, {DBL_MAX, "1.7976931348623157e+308"}, {DBL_MIN, "2.2250738585072014e-308"},
        {1e100, "1e+100"}, {1e23, "1e+23"}, {123.456, "123.456"}, {0.5, "0.5"},
        {INFINITY, "inf"}, {-INFINITY, "-inf"},
    };
    for (size_t i = 0; i < sizeof v / sizeof v[0]; i++) {
        char got[DYRT_FMT_MAX];
        dyrt_format_double(got, v[i].x);
        ck_assert_msg(strcmp(got, v[i].text) == 0, "%a: got '%s', want '%s'", v[i].x, got, v[i].text);
    }
    char got[DYRT_FMT_MAX];
    dyrt_format_double(got, NAN);
    ck_assert(strcmp(got, "nan") == 0 || strcmp(got, "-nan") == 0);
    ck_assert(isnan(strtod(got, NULL)));
    ck_assert_str_eq(dyrt_num(-0.25).s, "-0.25");
}
END_TEST

START_TEST(edges)
{
    for (int e = -1074; e <= 1023; e++) { /* powers of two: the narrow intervals */
        double x = ldexp(1.0, e);
        check_one(x);
        check_one(nextafter(x, 0));
        check_one(nextafter(x, INFINITY));
        check_one(-x);
    }
    for (int e = -325; e <= 309; e++) {
        double x = pow(10.0, e);
        check_one(x);
        check_one(nextafter(x, 0));
        check_one(nextafter(x, INFINITY));
    }
    double v[] = {DBL_MAX, DBL_MIN, DBL_TRUE_MIN, 2.2250738585072009e-308, 9007199254740993.0,
                  4.35, 1e21, 1e22, 1e23, 5e-324, 2.0 / 3.0, 3.14159265358979323846};
    for (size_t i = 0; i < sizeof v / sizeof v[0]; i++) {
        check_one(v[i]);
        check_one(-v[i]);
    }
}
END_TEST

START_TEST(random_bits)
{
    for (long i = 0; i < 600000; i++) {
        double x = from_bits(next_u64());
        if (!isnan(x) && !isinf(x))
            check_one(x);
    }
    for (long i = 0; i < 100000; i++)
        check_one(from_bits(next_u64() & 0x800fffffffffffffull)); /* subnormals */
}
END_TEST

START_TEST(random_simulation_values)
{
    for (long i = 0; i < 300000; i++) {
        double u = (double)(next_u64() >> 11) * 0x1p-53; /* [0, 1) */
        int e = (int)(next_u64() % 25) - 12;
        check_one((u - 0.5) * pow(10.0, e));
        check_one((double)(next_u64() % 100000) / 1000.0);
    }
}
END_TEST

/* Every decimal of at most 15 digits comes back as written. */
START_TEST(short_decimals)
{
    for (long i = 0; i < 300000; i++) {
        int digits = 1 + (int)(next_u64() % 15);
        uint64_t m = 0;
        for (int k = 0; k < digits; k++)
            m = m * 10 + next_u64() % 10;
        if (m == 0)
            continue;
        int e = (int)(next_u64() % 580) - 300; /* 10^-300 .. 10^294 */
        char text[64], got[DYRT_FMT_MAX];
        snprintf(text, sizeof text, "%llue%d", (unsigned long long)m, e);
        double x = strtod(text, NULL);
        dyrt_format_double(got, x);
        Dec want = parse(text), have = parse(got);
        if (want.m != have.m || want.e != have.e)
            ck_abort_msg("%s: got '%s'", text, got);
        nchecked++;
    }
}
END_TEST

static Suite *numfmt_suite(void)
{
    Suite *s = suite_create("numfmt");
    TCase *tc = tcase_create("format");
    tcase_set_timeout(tc, 600);
    tcase_add_test(tc, layout);
    tcase_add_test(tc, edges);
    tcase_add_test(tc, random_bits);
    tcase_add_test(tc, random_simulation_values);
    tcase_add_test(tc, short_decimals);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    int failed = check_failures(numfmt_suite());
    fprintf(stderr, "test_numfmt: %ld values checked\n", nchecked);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
