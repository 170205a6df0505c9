/*
 * numfmt.c -- printf("%.17g") without printf (see numfmt.h).
 *
 * Method: for finite x != 0 find the decimal exponent e10 with
 * |x| * 10^(16-e10) in [1e16, 1e17) and round that product to the integer
 * N of 17 digits.  The product is computed in long double (64-bit
 * significand): |x| is exact there, 10^k is exact for |k| <= 27 (5^27 <
 * 2^64; we multiply or divide by it, one rounding) and otherwise a
 * correctly rounded table entry (numfmt_pow10.h; two roundings), so the
 * computed s differs from the exact product by less than 2^-63 * s < 0.011
 * (0.0055 with an exact power).  Rounding s to the nearest integer (by
 * adding 2^63, see round_ld) is then
 * the correct rounding of the exact product unless s lies within that
 * error of a half-integer; those rare cases (about 1-2 % of random doubles)
 * and platforms whose long double has fewer than 64 significand bits go to
 * snprintf.  The layout (fixed or exponential, trailing zeros removed)
 * follows C11 7.21.6.1 for %g with precision 17.
 */
#include <float.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "numfmt.h"
#include "numfmt_pow10.h"

#define SIG 17   /* significant digits */

static int slow(char *buf, double x)
{
    return snprintf(buf, DYRT_FMT_MAX, "%.*g", SIG, x);
}

/* |x| * 10^k in long double; *exact: 10^k itself was exact */
static long double scale(double ax, int k, int *exact)
{
    *exact = k >= -27 && k <= 27;
    if (k >= 0 && k <= 27)
        return (long double)ax * dyrt_pow10[k - DYRT_POW10_MIN];
    if (k < 0 && k >= -27)
        return (long double)ax / dyrt_pow10[-k - DYRT_POW10_MIN];
    return (long double)ax * dyrt_pow10[k - DYRT_POW10_MIN];
}

/* round(s) for 0 <= s < 2^62: adding 2^63 leaves no fraction bits in a
 * 64-bit significand, so the sum is rounded to an integer, which the
 * significand then holds exactly (x87 extended format: the low 8 bytes). */
static uint64_t round_ld(long double s, long double *r)
{
    long double t = s + 0x1p63L;
    *r = t - 0x1p63L;
#if LDBL_MANT_DIG == 64
    uint64_t bits;
    memcpy(&bits, &t, sizeof bits);
    return bits - (1ull << 63);
#else
    return (uint64_t)*r;
#endif
}

/* floor(log10(|x|)) or one less, from the binary exponent */
static int estimate_e10(double ax)
{
    uint64_t b;
    memcpy(&b, &ax, sizeof b);
    int e2 = (int)(b >> 52);
    if (e2 == 0)
        frexp(ax, &e2);                 /* subnormal */
    else
        e2 -= 1022;                     /* ax = f * 2^e2, f in [0.5, 1) */
    return ((e2 - 1) * 78913) >> 18;    /* floor((e2-1) log10 2), |e2| < 1650 */
}

/* The 17 digits of |x| and its decimal exponent; 0 when not certain. */
static int digits17(double ax, uint64_t *n, int *e10)
{
    int e = estimate_e10(ax);
    for (int tries = 0; tries < 3; tries++) {
        int k = SIG - 1 - e, exact;
        if (k < DYRT_POW10_MIN || k > DYRT_POW10_MAX)
            return 0;
        long double s = scale(ax, k, &exact);
        if (s >= 1e17L) { e++; continue; }
        if (s < 1e16L) { e--; continue; }
        long double r;
        uint64_t v = round_ld(s, &r);
        long double frac = s - r;       /* in [-0.5, 0.5], exact */
        long double margin = exact ? 0.006L : 0.012L;
        if (frac > 0.5L - margin || frac < -0.5L + margin)
            return 0;                   /* too close to a tie to be sure */
        if (v == 100000000000000000ull) {   /* rounded up to 10^17 */
            v = 10000000000000000ull;
            e++;
        }
        *n = v;
        *e10 = e;
        return 1;
    }
    return 0;
}

/* Copy the digits, dropping trailing zeros after the point. */
static char *put_fraction(char *p, const char *d, int from)
{
    int last = SIG - 1;
    while (last >= from && d[last] == '0')
        last--;
    if (last < from)
        return p;
    *p++ = '.';
    for (int i = from; i <= last; i++)
        *p++ = d[i];
    return p;
}

static char *put_exponent(char *p, int e)
{
    *p++ = 'e';
    *p++ = e < 0 ? '-' : '+';
    unsigned u = (unsigned)(e < 0 ? -e : e);
    if (u >= 100)
        *p++ = (char)('0' + u / 100);
    *p++ = (char)('0' + u / 10 % 10);
    *p++ = (char)('0' + u % 10);
    return p;
}

static int layout(char *buf, int neg, uint64_t n, int e10)
{
    char d[SIG];
    uint32_t hi = (uint32_t)(n / 100000000u), lo = (uint32_t)(n % 100000000u);
    for (int i = SIG - 1; i >= SIG - 8; i--, lo /= 10)   /* two short chains */
        d[i] = (char)('0' + lo % 10);
    for (int i = SIG - 9; i >= 0; i--, hi /= 10)
        d[i] = (char)('0' + hi % 10);
    char *p = buf;
    if (neg)
        *p++ = '-';
    if (e10 < -4 || e10 >= SIG) {           /* style e */
        *p++ = d[0];
        p = put_fraction(p, d, 1);
        p = put_exponent(p, e10);
    } else if (e10 >= 0) {                  /* style f, |x| >= 1 */
        for (int i = 0; i <= e10; i++)
            *p++ = d[i];
        p = put_fraction(p, d, e10 + 1);
    } else {                                /* style f, 1e-4 <= |x| < 1 */
        *p++ = '0';
        *p++ = '.';
        for (int i = 0; i < -e10 - 1; i++)
            *p++ = '0';
        int last = SIG - 1;
        while (d[last] == '0')
            last--;
        for (int i = 0; i <= last; i++)
            *p++ = d[i];
    }
    *p = '\0';
    return (int)(p - buf);
}

int dyrt_format_double(char *buf, double x)
{
    if (LDBL_MANT_DIG < 64 || isnan(x) || isinf(x))
        return slow(buf, x);
    int neg = signbit(x) != 0;
    if (x == 0) {
        strcpy(buf, neg ? "-0" : "0");
        return neg ? 2 : 1;
    }
    uint64_t n;
    int e10;
    if (!digits17(fabs(x), &n, &e10))
        return slow(buf, x);
    return layout(buf, neg, n, e10);
}
