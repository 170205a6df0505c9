/*
 * sema.h -- libraries and name resolution.
 *
 * A Program is a tree of libraries.  The root is anonymous: files given
 * directly on the command line put their definitions there; a folder is a
 * library named after the folder, its sub-folders are sub-libraries (those
 * with a .dyad file somewhere below; others hold data, e.g. golden files)
 * (`Lib.Sub.Name`); files directly in a library folder or under its `dyad/`
 * sub-folder belong to it.  The base library `Dyad` is visible unqualified
 * everywhere.
 *
 * Lookup of a name used inside a definition of library L (LANGUAGE.md §2):
 *   1. a definition of L itself, then of L's enclosing libraries,
 *   2. a name imported by a `using` of L or an enclosing library
 *      (`using Lib: a, b` imports a and b; `using Lib` makes Lib's
 *      definitions visible unqualified),
 *   3. a definition of the base library `Dyad`,
 *   4. a qualified name from the root (`ElectricalComponents.Resistor`).
 */
#ifndef DYADC_SEMA_H
#define DYADC_SEMA_H

#include "ast.h"

typedef struct Library Library;

typedef struct Def {
    Sym name;
    const char *qname;  /* qualified name, e.g. "ElectricalComponents.Resistor" */
    AstNode *node;      /* AST_COMPONENT, AST_CONNECTOR, AST_TYPEDEF, ... */
    Library *lib;       /* where it is defined */
} Def;

struct Library {
    Sym name;           /* NULL for the root */
    const char *qname;  /* "" for the root */
    Library *parent;
    Vec(Def *) defs;    /* in load order */
    Vec(Library *) subs;
    HashMap def_by_name;  /* Sym -> Def* */
    HashMap sub_by_name;  /* Sym -> Library* */
    Vec(AstNode *) usings; /* `using Lib: a, b` / `using Lib` of its files */
};

typedef struct Program {
    Arena *arena;       /* the libraries, definitions and ASTs */
    Arena *sources;     /* where source files are loaded (sema_new: arena); a
                           Program in an arena of its own (the driver frees it
                           once the model is flattened) keeps its sources in
                           the compilation arena, for the diagnostics of the
                           later phases */
    Interner *in;
    Library *root;
    Vec(AstFile *) files;
} Program;

Program *sema_new(Arena *a, Interner *in);
/* Load a .dyad file (into the root library) or a library folder (as a
 * library named after the folder, under the root).  Errors are reported
 * through diag_*; returns false if the path could not be read. */
bool sema_load_path(Program *p, const char *path);
/* Parse the given source text as if it were a file of the root library. */
void sema_load_source(Program *p, SrcFile *src);

/* Resolve a (possibly qualified) name used inside library `from`.
 * Reports "unknown name" (with a suggestion) at `name->span` and returns
 * NULL when it does not resolve. */
Def *sema_lookup(Program *p, Library *from, const AstQName *name);
/* The name our standard library uses for one an older version of the Dyad
 * libraries used (`Node` -> `HeatPort`, `node` -> `port`, `Q` -> `Q_flow`),
 * or NULL: for a note after an unknown name. */
const char *sema_current_name(const char *older);
/* Same, without diagnostics. */
Def *sema_try_lookup(Program *p, Library *from, const AstQName *name);
/* Find a model by qualified name or by a unique simple name. Reports. */
Def *sema_find(Program *p, const char *name);
/* Every definition, in deterministic (load) order, depth-first. */
void sema_each_def(Program *p, void (*fn)(void *ud, Def *d), void *ud);

#endif
