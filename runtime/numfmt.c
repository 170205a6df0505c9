/*
 * numfmt.c -- double -> the shortest text that reads back to it (numfmt.h).
 *
 * Digits: the Schubfach algorithm (R. Giulietti, "The Schubfach way to
 * render doubles", 2020-2021; written here from the paper).  A finite x > 0
 * is c * 2^q (c the integer significand).  Every decimal in the rounding
 * interval R = [x - u/2, x + u/2] (u = 2^q; the lower half is u/4 when c is
 * a power of two above the smallest normal) reads back to x; the end points
 * count when c is even (strtod rounds ties to even).  With
 * k = floor(log10 u) (floor(log10(3u/4)) for the narrow interval), R is
 * at least 10^k long, so it holds a multiple of 10^k, and shorter than
 * 10^(k+1), so it holds at most one multiple of 10^(k+1).  The algorithm
 * computes x / 10^k and the ends of R / 10^k in fixed point with two
 * fraction bits, each rounded to odd (exact enough to decide every
 * comparison, theorem of the paper), from a 128-bit table of 10^-k rounded
 * up (numfmt_table.h, generated with exact arithmetic by
 * scripts/gen_numfmt_table.py).  Then: a multiple of 10^(k+1) in R if
 * there is one; else the multiples s*10^k or (s+1)*10^k of 10^k in R, the
 * one closer to x (ties to even digit).  That is the shortest decimal in R
 * and, among the shortest, the closest to x.  Three 64x128-bit multiplies,
 * no loop, no fallback.
 *
 * Layout, like printf's %.17g: fixed notation for decimal exponents -4..16
 * (`0.04`, `123.5`, `1e-05` below), else `d.ddde+XX` with at least two
 * exponent digits; trailing zeros removed.  Digits are written two at a time
 * from a table.
 */
#include <math.h>
#include <stdint.h>
#include <string.h>

#include "numfmt.h"
#include "numfmt_table.h"

/* ---------- 64 x 64 -> 128 ---------- */

#if defined(__SIZEOF_INT128__)
__extension__ typedef unsigned __int128 u128;
static inline uint64_t mul_hi(uint64_t a, uint64_t b, uint64_t *lo)
{
    u128 p = (u128)a * b;
    *lo = (uint64_t)p;
    return (uint64_t)(p >> 64);
}
#else
static inline uint64_t mul_hi(uint64_t a, uint64_t b, uint64_t *lo)
{
    uint64_t a0 = (uint32_t)a, a1 = a >> 32, b0 = (uint32_t)b, b1 = b >> 32;
    uint64_t p00 = a0 * b0, p01 = a0 * b1, p10 = a1 * b0, p11 = a1 * b1;
    uint64_t mid = (p00 >> 32) + (uint32_t)p01 + (uint32_t)p10;
    *lo = (mid << 32) | (uint32_t)p00;
    return p11 + (p01 >> 32) + (p10 >> 32) + (mid >> 32);
}
#endif

/* floor(g * cp / 2^128) rounded to odd: the low bit is set when the
 * discarded part is not zero.  g = {hi, lo}, cp < 2^61. */
static inline uint64_t round_to_odd(const uint64_t g[2], uint64_t cp)
{
    uint64_t x_lo, x_hi = mul_hi(g[1], cp, &x_lo);
    uint64_t y_lo, y_hi = mul_hi(g[0], cp, &y_lo);
    uint64_t z = y_lo + x_hi;
    y_hi += z < y_lo;                   /* carry */
    (void)x_lo;
    return y_hi | (z > 1);
}

/* floor(e log10 2), floor(e log10(3/4 * 2)), floor(e log2 10): exact over
 * the exponents of doubles (checked by the table generator). */
static inline int floor_log10_pow2(int e) { return (e * 1262611) >> 22; }
static inline int floor_log10_3q_pow2(int e) { return (e * 1262611 - 524031) >> 22; }
static inline int floor_log2_pow10(int e) { return (e * 1741647) >> 19; }

/* The shortest decimal m * 10^*e10 in the rounding interval of x = c 2^q. */
static uint64_t shortest(uint64_t frac, int bexp, int *e10)
{
    uint64_t c = bexp ? frac | (1ull << 52) : frac;
    int q = bexp ? bexp - 1075 : -1074;
    int narrow = frac == 0 && bexp > 1;
    uint64_t cb = c << 2, cbl = cb - 2 + (uint64_t)narrow, cbr = cb + 2;
    int k = narrow ? floor_log10_3q_pow2(q) : floor_log10_pow2(q);
    int h = q + floor_log2_pow10(-k) + 1;   /* 1..4 */
    const uint64_t *g = dyrt_g[-k - DYRT_G_MIN];
    uint64_t vb = round_to_odd(g, cb << h);
    uint64_t even = (c & 1) == 0;
    uint64_t lower = round_to_odd(g, cbl << h) + !even;
    uint64_t upper = round_to_odd(g, cbr << h) - !even;
    uint64_t s = vb >> 2;
    if (s >= 10) {                      /* a multiple of 10^(k+1) in R? */
        uint64_t sp = s / 10;
        int u_in = lower <= 40 * sp, w_in = 40 * sp + 40 <= upper;
        if (u_in != w_in) {
            *e10 = k + 1;
            return sp + (uint64_t)w_in;
        }
    }
    int u_in = lower <= 4 * s, w_in = 4 * s + 4 <= upper;
    *e10 = k;
    if (u_in != w_in)
        return s + (uint64_t)w_in;
    uint64_t mid = 4 * s + 2;           /* both in R: the closer one */
    return s + (uint64_t)(vb > mid || (vb == mid && (s & 1)));
}

/* ---------- layout ---------- */

static const char pairs[] =
    "00010203040506070809101112131415161718192021222324252627282930313233343536373839"
    "40414243444546474849505152535455565758596061626364656667686970717273747576777879"
    "8081828384858687888990919293949596979899";

static const uint64_t pow10_tab[18] = {
    1ull, 10ull, 100ull, 1000ull, 10000ull, 100000ull, 1000000ull, 10000000ull, 100000000ull,
    1000000000ull, 10000000000ull, 100000000000ull, 1000000000000ull, 10000000000000ull,
    100000000000000ull, 1000000000000000ull, 10000000000000000ull, 100000000000000000ull};

/* decimal digits of 0 < m < 10^17: log10 from the bit length, corrected */
static inline int count_digits(uint64_t m)
{
    int t = (64 - __builtin_clzll(m)) * 1233 >> 12;
    return t + (m >= pow10_tab[t]);
}

/* the digits of m written backwards, ending just before `end`; the eight low
 * ones in 32-bit arithmetic */
static inline void put_digits(char *end, uint64_t m)
{
    if (m >= 100000000) {
        uint32_t lo = (uint32_t)(m % 100000000);
        m /= 100000000;
        for (int i = 0; i < 4; i++, lo /= 100) {
            end -= 2;
            memcpy(end, pairs + 2 * (lo % 100), 2);
        }
    }
    uint32_t v = (uint32_t)m;           /* < 10^9 */
    for (; v >= 100; v /= 100) {
        end -= 2;
        memcpy(end, pairs + 2 * (v % 100), 2);
    }
    if (v >= 10)
        memcpy(end - 2, pairs + 2 * v, 2);
    else
        end[-1] = (char)('0' + v);
}

static char *put_exponent(char *p, int e)
{
    *p++ = 'e';
    *p++ = e < 0 ? '-' : '+';
    unsigned u = (unsigned)(e < 0 ? -e : e);
    if (u >= 100) {
        *p++ = (char)('0' + u / 100);
        u %= 100;
    }
    memcpy(p, pairs + 2 * u, 2);
    return p + 2;
}

/* m * 10^e10 with m > 0, at p (room for DYRT_FMT_MAX - 1 bytes); returns the end */
static char *layout(char *p, uint64_t m, int e10)
{
    while (m % 10 == 0) {               /* at most 16 times */
        m /= 10;
        e10++;
    }
    int n = count_digits(m);
    int x = e10 + n - 1;                /* exponent of the first digit */
    if (x < -4 || x > 16) {             /* d.ddde+XX */
        put_digits(p + 1 + n, m);
        p[0] = p[1];
        p[1] = '.';
        return put_exponent(p + (n > 1 ? n + 1 : 1), x);
    }
    if (x < 0) {                        /* 0.000ddd */
        memcpy(p, "0.000000", 8);
        p += 1 - x;
        put_digits(p + n, m);
        return p + n;
    }
    if (n <= x + 1) {                   /* ddd000 */
        put_digits(p + n, m);
        for (int i = n; i <= x; i++)
            p[i] = '0';
        return p + x + 1;
    }
    put_digits(p + 1 + n, m);           /* ddd.ddd */
    for (int i = 0; i <= x; i++)
        p[i] = p[i + 1];
    p[x + 1] = '.';
    return p + n + 1;
}

int dyrt_format_double(char *buf, double x)
{
    uint64_t bits;
    memcpy(&bits, &x, sizeof bits);
    char *p = buf;
    if (bits >> 63)
        *p++ = '-';
    int bexp = (int)(bits >> 52) & 0x7ff;
    uint64_t frac = bits & ((1ull << 52) - 1);
    if (bexp == 0x7ff) {
        memcpy(p, frac ? "nan" : "inf", 4);
        return (int)(p - buf) + 3;
    }
    if (bexp == 0 && frac == 0) {
        memcpy(p, "0", 2);
        return (int)(p - buf) + 1;
    }
    int e10;
    uint64_t m = shortest(frac, bexp, &e10);
    p = layout(p, m, e10);
    *p = '\0';
    return (int)(p - buf);
}

DyrtNum dyrt_num(double x)
{
    DyrtNum n;
    dyrt_format_double(n.s, x);
    return n;
}
