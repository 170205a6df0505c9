/* outfile.h -- writing the file `-o` names safely (outfile.c): a private
 * scratch directory for intermediates, the result under a temporary name
 * beside the target, renamed over it when complete. */
#ifndef DYADC_OUTFILE_H
#define DYADC_OUTFILE_H

#include "support.h"

typedef struct OutFile {
    const char *target;        /* -o as given */
    char *tmp;                 /* write the result here; NULL once committed */
    char *scratch;             /* private directory for intermediates */
} OutFile;

/* Refuse a directory or one of the ninputs files being compiled, create
 * the temporary name and the scratch directory; 0, or 1 after a message
 * (then outf_close anyway). */
int outf_open(Arena *a, const char *target, const char *const *inputs, uint32_t ninputs, OutFile *f);
/* <scratch>/name */
const char *outf_scratch(Arena *a, const OutFile *f, const char *name);
/* A non-empty result at f->tmp becomes the target (rename); 0 or 1. */
int outf_commit(OutFile *f);
/* Remove the scratch directory and an uncommitted result. */
void outf_close(OutFile *f);

#endif
