/*
 * numfmt.h -- fast, exact double -> text for the result CSV.
 *
 * dyrt_format_double writes exactly what printf("%.17g", x) writes (17
 * significant digits, correctly rounded; "inf", "-inf", "nan", "-nan"),
 * so every value reads back with strtod to the same double and the CSV is
 * byte-identical to the printf version, only about ten times faster.
 */
#ifndef DYRT_NUMFMT_H
#define DYRT_NUMFMT_H

/* Longest output ("-1.2345678901234567e-308") plus the NUL, rounded up. */
#define DYRT_FMT_MAX 32

/* Writes x into buf (at least DYRT_FMT_MAX bytes, NUL-terminated); returns
 * the length. */
int dyrt_format_double(char *buf, double x);

#endif
