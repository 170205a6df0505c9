/* format.c -- ast_format(): canonical formatter (placeholder, being written). */
#include "parse_internal.h"

void ast_format(FILE *out, const AstFile *f) {
    if (f->src) fwrite(f->src->text, 1, f->src->len, out);
}
