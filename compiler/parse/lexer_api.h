/*
 * lexer_api.h -- run the Dyad scanner alone (unit tests, tools).
 * Internal to compiler/parse and its tests.
 */
#ifndef DYADC_LEXER_API_H
#define DYADC_LEXER_API_H

#include "support.h"

typedef enum {
    LEXK_IDENT, LEXK_NUMBER, LEXK_STRING, LEXK_KEYWORD, LEXK_PUNCT, LEXK_META
} LexClass;

typedef struct LexTok {
    LexClass cls;
    Span span;       /* byte span of the token */
    Sym ident;       /* LEXK_IDENT: the interned name */
    double num;      /* LEXK_NUMBER: value with the SI prefix applied */
    bool is_int;     /* LEXK_NUMBER: written as an integer */
} LexTok;

/* Scan a whole file; returns the token count, tokens in *out (arena). */
uint32_t lex_all(Arena *a, Interner *in, SrcFile *src, LexTok **out);

/* Value of a number literal (`10k`, `1E`, `2.5e-3`); is_int as above. */
double lex_number_value(const char *text, size_t n, bool *is_int);

/* Decode a string token's raw text (quotes included); *bad_escape points at
 * the first invalid escape or is NULL. */
char *lex_decode_string(Arena *a, const char *raw, size_t n, bool triple,
                        uint32_t *out_len, const char **bad_escape);

#endif
