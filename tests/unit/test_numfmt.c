/*
 * test_numfmt.c -- dyrt_format_double (runtime/numfmt.c): byte-identical to
 * printf("%.17g") and exact on round trip (strtod(text) == x, bit for bit),
 * on special values, edge exponents and millions of random doubles: random
 * bit patterns (every exponent, subnormals included), values of simulation
 * magnitude, and near-ties (integers + 0.5 scaled, short decimals).
 */
#include <check.h>

#include "../check_run.h"
#include <float.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "numfmt.h"

static uint64_t rng = 0x9e3779b97f4a7c15ull;

static uint64_t next_u64(void)   /* xorshift64* */
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

static long nchecked;

static void check_one(double x)
{
    char got[DYRT_FMT_MAX], want[64];
    int n = dyrt_format_double(got, x);
    snprintf(want, sizeof want, "%.17g", x);
    /* plain ifs: Check records every passing ck_assert (a syscall each) */
    if (strcmp(got, want) != 0)
        ck_abort_msg("x = %a: got '%s', printf '%s'", x, got, want);
    if (n != (int)strlen(got))
        ck_abort_msg("x = %a: length %d for '%s'", x, n, got);
    if (!isnan(x)) {
        double back = strtod(got, NULL);
        if (memcmp(&back, &x, sizeof x) != 0)
            ck_abort_msg("x = %a: '%s' reads back as %a", x, got, back);
    }
    nchecked++;
}

START_TEST(specials)
{
    double v[] = {0.0, -0.0, 1.0, -1.0, 0.5, 0.1, 1e-4, 9.9999999999999991e-5, 1e-5,
                  1e16, 1e17, 9.9999999999999984e16, 1e21, 1e22, 1e23, 123456789012345678.0,
                  DBL_MAX, -DBL_MAX, DBL_MIN, DBL_TRUE_MIN, -DBL_TRUE_MIN, 2.2250738585072009e-308,
                  5e-324, 1.7976931348623157e308, 0.3, 2.0 / 3.0, 3.14159265358979323846, 1e300, 1e-300,
                  9007199254740993.0, 9007199254740992.0, 4.35, 0.1 + 0.2};
    for (size_t i = 0; i < sizeof v / sizeof v[0]; i++) {
        check_one(v[i]);
        check_one(-v[i]);
    }
    for (int e = -330; e <= 310; e++) {
        check_one(pow(10.0, e));
        check_one(nextafter(pow(10.0, e), 0));
        check_one(nextafter(pow(10.0, e), INFINITY));
    }
    for (int e = -1074; e <= 1023; e++)
        check_one(ldexp(1.0, e));
    char buf[DYRT_FMT_MAX];
    dyrt_format_double(buf, INFINITY);
    ck_assert_str_eq(buf, "inf");
    dyrt_format_double(buf, -INFINITY);
    ck_assert_str_eq(buf, "-inf");
    dyrt_format_double(buf, NAN);
    ck_assert(strcmp(buf, "nan") == 0 || strcmp(buf, "-nan") == 0);
    check_one(NAN);
    check_one(-NAN);
}
END_TEST

START_TEST(random_bits)
{
    for (long i = 0; i < 2000000; i++) {
        double x = from_bits(next_u64());
        if (isnan(x))
            continue;
        check_one(x);
    }
}
END_TEST

START_TEST(random_subnormals)
{
    for (long i = 0; i < 200000; i++)
        check_one(from_bits(next_u64() & 0x800fffffffffffffull));
}
END_TEST

START_TEST(random_simulation_values)
{
    for (long i = 0; i < 1000000; i++) {
        double u = (double)(next_u64() >> 11) * 0x1p-53;     /* [0, 1) */
        int e = (int)(next_u64() % 25) - 12;
        check_one((u - 0.5) * pow(10.0, e));
    }
}
END_TEST

/* Values whose 17-digit rounding is close to a tie, and short decimals
 * (what parameters and output grids look like). */
START_TEST(near_ties)
{
    for (long i = 0; i < 500000; i++) {
        uint64_t m = next_u64() % 100000000000000000ull;
        int e = (int)(next_u64() % 40) - 20;
        double x = ((double)m + 0.5) * pow(10.0, e);
        check_one(x);
        check_one(nextafter(x, 0));
        check_one((double)(next_u64() % 100000) / 1000.0);
    }
}
END_TEST

static Suite *numfmt_suite(void)
{
    Suite *s = suite_create("numfmt");
    TCase *tc = tcase_create("format");
    tcase_set_timeout(tc, 600);
    tcase_add_test(tc, specials);
    tcase_add_test(tc, random_bits);
    tcase_add_test(tc, random_subnormals);
    tcase_add_test(tc, random_simulation_values);
    tcase_add_test(tc, near_ties);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    int failed = check_failures(numfmt_suite());
    fprintf(stderr, "test_numfmt: %ld values checked\n", nchecked);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
