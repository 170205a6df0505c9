/*
 * numfmt.h -- double -> the shortest text that reads back to the same double.
 *
 * dyrt_format_double writes the decimal with the fewest significant digits
 * that strtod reads back to exactly x (the closest such one when several
 * have that length): 0.04, not 0.040000000000000001; 0.1 + 0.2 as
 * 0.30000000000000004.  Fixed notation for decimal exponents -4..16,
 * otherwise `1.5e-07`, `2e+20` (printf's %g layout); "0", "-0", "inf",
 * "-inf", "nan", "-nan".  Used for every number the runtime writes (the CSV,
 * --list-params, messages) and by the compiler's printers, so a value always
 * reads the same everywhere.  Pure; no allocation, no locale.
 */
#ifndef DYRT_NUMFMT_H
#define DYRT_NUMFMT_H

/* Longest output ("-2.2250738585072014e-308") plus the NUL, rounded up. */
#define DYRT_FMT_MAX 32

/* Writes x into buf (at least DYRT_FMT_MAX bytes, NUL-terminated); returns
 * the length. */
int dyrt_format_double(char *buf, double x);

/* The same as a value, for messages: printf("t = %s", dyrt_num(t).s) (the
 * array lives until the end of the full expression, C11 6.2.4p8). */
typedef struct DyrtNum {
    char s[DYRT_FMT_MAX];
} DyrtNum;
DyrtNum dyrt_num(double x);

#endif
