/*
 * fmi.h -- FMI 2.0 export: the System (+ the flat model, for units,
 * docstrings and which variables are the component's own outputs) ->
 * modelDescription.xml -> the FMU archive around a linked binary.
 *
 * The variables and their value references follow the runtime's layout
 * (runtime/fmi2_fmu.c, docs/FMI.md): parameters [0, np), every model
 * variable [np, np + nout), der(y_i) of each state at np + nout + i.
 * The GUID is dyrt_model_guid's hash of the same names, so a binary and a
 * description from different models refuse each other at fmi2Instantiate.
 */
#ifndef DYADC_FMI_H
#define DYADC_FMI_H

#include <stdbool.h>
#include <stdio.h>

#include "flat.h"
#include "structure/system.h"

typedef struct FmiExport {
    const char *model_identifier; /* C name: binaries/<platform>/<it>.so */
    bool me, cs;                  /* the interfaces described */
    const char *version;          /* generationTool version */
} FmiExport;

/* The identifier for an FMU path: its base name without `.fmu`, every
 * character that is not [A-Za-z0-9_] replaced by `_`, `_` first when it
 * starts with a digit.  Allocated in `a`. */
const char *fmi_identifier(Arena *a, const char *fmu_path);

/* modelDescription.xml.  Returns 0, or 1 after a located diagnostic (a
 * parameter without a value: FMI needs a start value for each). */
int fmi_describe(FILE *out, const System *s, const FlatModel *m, const FmiExport *x);

/* Write the FMU at fmu_path: modelDescription.xml (the text) and the
 * binary at binaries/linux64/ and binaries/x86_64-linux/<identifier>.so.  0, or 1 after an error. */
int fmi_archive(const char *fmu_path, const char *xml, size_t xml_len, const char *so_path,
                const FmiExport *x);

#endif
