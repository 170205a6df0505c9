/*
 * units.h -- unit strings (LANGUAGE.md §11) as dimension vectors.
 *
 * A Unit is seven rational exponents over the SI base units
 * (kg, m, s, A, K, mol, cd) plus the factor that converts a value in the unit
 * to SI (`mm`: 1e-3) and an offset for affine units (`degC`: 273.15).  Only
 * the exponents matter for dimensional consistency; scale and offset are kept
 * for display-unit conversions.  `rad` and `sr` are dimensionless.
 *
 * Grammar (docs/UNITS.md):
 *   units   := "1" | product
 *   product := factor (('.' | '*' | '/') factor)*     '/' divides by the next factor only
 *   factor  := '(' product ')' exponent? | symbol exponent? | '1'
 *   exponent:= '^'? ('+' | '-')? digits
 *   symbol  := an exact unit symbol, or an SI prefix + a prefixable symbol
 *
 * This module is pure: no diagnostics, no allocation (errors are returned
 * as text).
 */
#ifndef DYADC_UNITS_H
#define DYADC_UNITS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

enum { UNIT_KG, UNIT_M, UNIT_S, UNIT_A, UNIT_K, UNIT_MOL, UNIT_CD, UNIT_NBASE };

typedef struct UnitRat {
    int16_t num, den;      /* den > 0, gcd(num, den) = 1 */
} UnitRat;

typedef struct Unit {
    UnitRat exp[UNIT_NBASE]; /* exponents of kg m s A K mol cd */
    double scale;            /* SI value = scale * value + offset */
    double offset;           /* nonzero only for a lone affine unit (degC) */
} Unit;

extern const char *const unit_base_names[UNIT_NBASE];

Unit unit_one(void);                               /* dimensionless, scale 1 */

/* Parse a unit string.  On failure returns false and writes a message
 * ("unknown unit symbol `xyz`") into err. */
bool unit_parse(const char *s, Unit *out, char *err, size_t errsize);

bool unit_same_dim(const Unit *a, const Unit *b);  /* exponents equal */
bool unit_is_dimensionless(const Unit *u);
/* a*b, a/b, a^p; false if an exponent leaves the representable range
 * (|numerator|, denominator <= 1000) */
bool unit_mul(const Unit *a, const Unit *b, Unit *out);
bool unit_div(const Unit *a, const Unit *b, Unit *out);
bool unit_pow(const Unit *a, UnitRat p, Unit *out);
/* display-unit conversion: a value in u to SI and back (`degC`: +273.15,
 * `bar`: *1e5) */
static inline double unit_to_si(const Unit *u, double v) { return u->scale * v + u->offset; }
static inline double unit_from_si(const Unit *u, double v) { return (v - u->offset) / u->scale; }

/* v as a fraction with a small denominator (<= 12), if it is one */
bool unit_rat_from_double(double v, UnitRat *out);

/* The SI derived unit with a special name (N Pa J W C V F Ω S Wb T H) of
 * this dimension, or NULL. */
const char *unit_si_name(const Unit *u);

/* The dimension in SI base units, e.g. "kg.m2/(s3.A)"; "1" when
 * dimensionless.  Returns buf. */
char *unit_format_dim(const Unit *u, char *buf, size_t n);

#endif
