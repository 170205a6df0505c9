/*
 * tests.h -- `dyadc test`: test cases from components' metadata
 * (docs/TESTING.md), shared by tests_spec.c (metadata -> cases) and
 * tests_run.c (compile, simulate, compare, bless, report).
 *
 *   metadata {"Dyad": {"tests": {"case1": {
 *       "start": 0, "stop": 10,            simulated span (start defaults to 0)
 *       "params": {"k": 2},                parameter values (-p)
 *       "initial": {"x": 1},               initial values (--initial: any variable)
 *       "atol": 1e-6 | {"x": 1e-6},        comparison tolerances, global or per
 *       "rtol": 1e-6 | {"x": 1e-6},        variable (Julia's isapprox rule)
 *       "abstol": 1e-12, "reltol": 1e-11,  solver tolerances
 *       "expect": {"initial": {"x": 1}, "final": {"x": 0.5}, "signals": ["x"]}}}}}
 */
#ifndef DYADC_TESTS_H
#define DYADC_TESTS_H

#include "driver.h"

/* isapprox: |got - expected| <= max(atol, rtol * max(|got|, |expected|)); when
 * neither is given, rtol = sqrt(eps) (Julia's default, what Dyad's generated
 * tests use); when only atol is given, rtol = 0. */
#define TEST_DEFAULT_RTOL 1.4901161193847656e-08

/* solver tolerances of a case that gives none ("reltol", "abstol") */
#define TEST_SOLVER_RTOL 1e-11
#define TEST_SOLVER_ATOL 1e-12

/* output points of a golden signal file: start + k (stop - start) / N */
#define TEST_GOLDEN_POINTS 100

typedef struct TestValue {
    const char *var;       /* variable (dotted name, trimmed) */
    double value;          /* expected value or the value to set */
    double atol, rtol;     /* comparison tolerances for var */
    Span at;               /* the entry in the metadata */
} TestValue;

typedef Vec(TestValue) TestValues;

typedef struct TestCase {
    Def *def;              /* the component */
    const char *name;      /* case name ("case1") */
    const char *full;      /* "<qualified component>.<case>" (--filter) */
    Span at;               /* the case's key */
    bool bad;              /* its metadata has an error (reported) */
    double start, stop;
    double rtol, atol;     /* solver tolerances */
    TestValues params, initial, expect_initial, expect_final;
    TestValues signals;    /* value unused */
    Span signals_at;       /* "signals" array */
} TestCase;

typedef Vec(TestCase *) TestCases;

/* tests_spec.c: the cases of component d (none when it has no tests
 * metadata); metadata errors are reported and mark the case bad (or add a
 * bad case named after the component when no case can be read). */
void tests_of(Driver *d, Def *def, TestCases *out);

/* tests_run.c: run one case (compile with the JIT, simulate with the
 * DyrtSim handle, compare, bless); true when it passed.  Diagnostics go to
 * the diag stream. */
bool tests_run_case(Driver *d, Program *p, TestCase *c);

#endif
