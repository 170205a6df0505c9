/*
 * commands.h -- the dyadc commands, one entry each:
 *
 *   X(ID, "name", handler, "ARGUMENTS", "one-line summary", "details")
 *
 * Everything about a command is generated from this list: the enum
 * (CMD_<ID>), the dispatch in main.c, the command list of `dyadc help` and
 * the page of `dyadc help NAME` / `dyadc NAME --help` (its synopsis, the
 * details, then every option whose command mask includes CMD_BIT(ID), see
 * the option table in cli.c).  Adding a command is one entry here, its
 * handler `int handler(Driver *)` (declared from this list in driver.h) and,
 * when it has options of its own, their rows in cli.c.  The details are
 * plain text, lines of at most 78 columns, each ending in "\n".
 */
#ifndef DYADC_COMMANDS_H
#define DYADC_COMMANDS_H

#define DYADC_COMMANDS(X)                                                                          \
    X(CHECK, "check", cmd_check, "FILE|DIR...",                                                    \
      "parse, resolve and flatten every component; report all errors",                            \
      "Loads the given files and library folders (and the bundled standard library),\n"            \
      "then flattens every component and analysis that is not partial and checks its\n"            \
      "units and its balance (as many equations as unknowns). Every problem is\n"                  \
      "reported once, with its location; the last line counts components, errors\n"                \
      "and warnings. Exit status 1 when there was an error.\n")                                    \
    X(PARSE, "parse", cmd_parse, "FILE... [--dump-ast [--no-spans]]",                              \
      "parse only; print the syntax tree",                                                         \
      "Parses each file on its own (no libraries, no name resolution) and reports\n"               \
      "syntax errors.\n")                                                                          \
    X(FMT, "fmt", cmd_fmt, "FILE... [--check]", "print the files in canonical style",              \
      "Prints each file in the canonical layout on stdout. With --check nothing is\n"              \
      "printed: the files that are not in canonical form are named, exit status 1.\n")             \
    X(FLATTEN, "flatten", cmd_flatten, "FILE... --model NAME [--structure]",                       \
      "print the flat model (or the structured system)",                                           \
      "Prints the flat model of one component: its variables, parameters and\n"                    \
      "equations with the instance paths they came from, in a stable order. With\n"                \
      "--structure: the system after alias elimination, index reduction, state\n"                  \
      "selection and BLT sorting (docs/STRUCTURE.md).\n")                                          \
    X(BUILD, "build", cmd_build, "FILE... --model NAME -o EXE",                                    \
      "write a standalone simulator executable",                                                   \
      "Compiles the model to native code and links it with the runtime into EXE, which\n"          \
      "depends only on libc and libm and takes the simulator options listed under\n"               \
      "`dyadc help run` (`EXE --help`); parameters can be changed without recompiling.\n")         \
    X(RUN, "run", cmd_run, "FILE... --model NAME [simulator options]",                             \
      "compile in-process and simulate; write the result CSV",                                     \
      "Compiles the model in memory (LLVM ORC JIT) and simulates it with SUNDIALS IDA.\n"          \
      "With --analysis NAME, a TransientAnalysis supplies the model and its settings.\n"           \
      "The result goes to <model name>.csv unless -o says otherwise (docs/RUNTIME.md).\n")     \
    X(TEST, "test", cmd_test, "FILE|DIR... [--filter PATTERN] [--bless] [--coverage]",                          \
      "run the test cases in components' metadata",                                               \
      "Runs every test case (metadata {\"Dyad\": {\"tests\": ...}}) of the components\n"           \
      "defined under the given files and folders (without any, under the -L roots):\n"            \
      "compiles each in memory, simulates it from `start` to `stop` with the case's\n"            \
      "parameters and initial values, and compares expect.initial, expect.final and\n"            \
      "expect.signals (golden files in snapshots/, written by --bless) with the case's\n"         \
      "tolerances. One line per case, then `N passed, M failed`; a failure names the\n"           \
      "variable, the time, the values and the tolerance at the test's source line.\n"             \
      "Exit status 1 when a case failed or none was found (docs/TESTING.md).\n")  \
    X(FMU, "fmu", cmd_fmu, "FILE... --model NAME -o NAME.fmu [--kind me|cs|both]",                \
      "write an FMI 2.0 FMU (Model Exchange and/or Co-Simulation)",                               \
      "Compiles the model and writes a Functional Mock-up Unit for FMI 2.0: a zip with\n"          \
      "modelDescription.xml (parameters, variables, states and derivatives with their\n"          \
      "units and docstrings) and binaries/linux64/NAME.so, also as\n"                            \
      "binaries/x86_64-linux/NAME.so (depends on libc and libm only). --kind chooses\n"          \
      "the interfaces (default both; a model with clocks: cs).\n"                                \
      "docs/FMI.md describes the mapping.\n")

#endif
