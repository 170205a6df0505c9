/*
 * main.c -- the entry point of a standalone simulator.  Built into its own
 * static library (dyadrt_main) so that libdyadrt itself has no `main` and
 * can be linked into dyadc; the generated object supplies `dyad_model`.
 */
#include "dyadrt.h"

extern const DyrtModel dyad_model;

int main(int argc, char **argv)
{
    return dyrt_main(&dyad_model, argc, argv);
}
