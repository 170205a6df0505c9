/*
 * solver.c -- SUNDIALS IDA set-up for one run: the callbacks that adapt the
 * model's flat-array functions to N_Vector/SUNMatrix, the linear solver
 * choice (KLU, dense LU for small dense Jacobians: use_klu), root
 * finding for zero crossings, statistics and tear-down.
 *
 * Everything is allocated here, before the integration loop; the callbacks
 * allocate nothing.  Residual evaluation errors (nonzero return, NaN/Inf)
 * are reported to IDA as recoverable (return 1) so it retries with a smaller
 * step; the index of the offending residual is kept for the error message.
 */
#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <ida/ida.h>
#include <sunlinsol/sunlinsol_dense.h>
#include <sunlinsol/sunlinsol_klu.h>
#include <sunmatrix/sunmatrix_dense.h>
#include <sunmatrix/sunmatrix_sparse.h>

#include "dyrt_internal.h"

static int residual_cb(sunrealtype t, N_Vector yy, N_Vector yp, N_Vector rr, void *user)
{
    DyrtSim *s = user;
    double *res = N_VGetArrayPointer(rr);
    dyrt_inputs_at(s, t);
    if (s->dummy_state) {      /* y' = 0: lets IDA locate the roots of a model without unknowns */
        res[0] = N_VGetArrayPointer(yp)[0];
        return 0;
    }
    int rc = s->m->residual(t, N_VGetArrayPointer(yy), N_VGetArrayPointer(yp), s->p, res) != 0;
    for (int32_t i = 0; i < s->m->ny; i++)
        if (!isfinite(res[i])) {  /* kept for the message if IDA gives up */
            s->bad_res = i;
            s->bad_t = t;
            memcpy(s->bad_y, N_VGetArrayPointer(yy), sizeof(double) * (size_t)s->m->ny);
            memcpy(s->bad_yp, N_VGetArrayPointer(yp), sizeof(double) * (size_t)s->m->ny);
            return 1;
        }
    return rc;
}

/* CSC: IDA zeroes J (pattern included) before each call, so the pattern is
 * written every time; the model writes the values straight into J. */
static int jac_sparse(DyrtSim *s, double t, double cj, N_Vector yy, N_Vector yp, SUNMatrix J)
{
    const DyrtModel *m = s->m;
    sunindextype *colptr = SUNSparseMatrix_IndexPointers(J);
    sunindextype *rowidx = SUNSparseMatrix_IndexValues(J);
    for (int32_t j = 0; j <= m->ny; j++)
        colptr[j] = m->jac_colptr[j];
    for (int32_t k = 0; k < m->jac_nnz; k++)
        rowidx[k] = m->jac_rowidx[k];
    return m->jacobian(t, N_VGetArrayPointer(yy), N_VGetArrayPointer(yp), s->p, cj,
                       SUNSparseMatrix_Data(J));
}

/* Dense: the model writes CSC values into a scratch array; scatter them. */
static int jac_dense(DyrtSim *s, double t, double cj, N_Vector yy, N_Vector yp, SUNMatrix J)
{
    const DyrtModel *m = s->m;
    int rc = m->jacobian(t, N_VGetArrayPointer(yy), N_VGetArrayPointer(yp), s->p, cj, s->jvals);
    if (rc)
        return rc;
    SUNMatZero(J);
    for (int32_t j = 0; j < m->ny; j++) {
        double *col = SUNDenseMatrix_Column(J, j);
        for (int32_t k = m->jac_colptr[j]; k < m->jac_colptr[j + 1]; k++)
            col[m->jac_rowidx[k]] = s->jvals[k];
    }
    return 0;
}

static int jacobian_cb(sunrealtype t, sunrealtype cj, N_Vector yy, N_Vector yp, N_Vector rr,
                       SUNMatrix J, void *user, N_Vector t1, N_Vector t2, N_Vector t3)
{
    (void)rr; (void)t1; (void)t2; (void)t3;
    DyrtSim *s = user;
    dyrt_inputs_at(s, t);
    int rc = s->sparse ? jac_sparse(s, t, cj, yy, yp, J) : jac_dense(s, t, cj, yy, yp, J);
    return rc ? 1 : 0;
}

static int roots_cb(sunrealtype t, N_Vector yy, N_Vector yp, sunrealtype *g, void *user)
{
    DyrtSim *s = user;
    dyrt_inputs_at(s, t);
    s->m->zero_crossings(t, N_VGetArrayPointer(yy), N_VGetArrayPointer(yp), s->p, g);
    dyrt_sets_criteria(s, t, N_VGetArrayPointer(yy), N_VGetArrayPointer(yp), g);
    return 0;
}

/* Keep SUNDIALS quiet; its last message is shown with -v. */
static void error_cb(int code, const char *module, const char *function, char *msg, void *user)
{
    (void)code;
    DyrtSim *s = user;
    snprintf(s->ida_msg, sizeof s->ida_msg, "%s/%s: %s", module, function, msg);
}

static int vectors(DyrtSim *s)
{
    const DyrtModel *m = s->m;
    sunindextype n = s->dummy_state ? 1 : m->ny;
    s->yy = N_VNew_Serial(n, s->ctx);
    s->yp = N_VNew_Serial(n, s->ctx);
    s->id = N_VNew_Serial(n, s->ctx);
    s->rootsfound = dyrt_calloc((size_t)m->nz, sizeof *s->rootsfound);
    s->bad_y = dyrt_calloc((size_t)m->ny, sizeof *s->bad_y);
    s->bad_yp = dyrt_calloc((size_t)m->ny, sizeof *s->bad_yp);
    if (!s->yy || !s->yp || !s->id || !s->rootsfound || !s->bad_y || !s->bad_yp)
        return -1;
    memcpy(N_VGetArrayPointer(s->yy), s->y0, sizeof(double) * (size_t)m->ny);
    memcpy(N_VGetArrayPointer(s->yp), s->yp0, sizeof(double) * (size_t)m->ny);
    double *id = N_VGetArrayPointer(s->id);
    for (int32_t i = 0; i < m->ny; i++)
        id[i] = m->y_is_diff && !m->y_is_diff[i] ? 0.0 : 1.0;
    if (s->dummy_state)
        N_VGetArrayPointer(s->yy)[0] = N_VGetArrayPointer(s->yp)[0] = id[0] = 1.0;
    return 0;
}

/* KLU unless the Jacobian is small and dense.  Measured (callgrind and
 * perf task-clock, bench chains, tests/sim/index): on sparse Jacobians KLU
 * wins from 5 unknowns up (RC ladder N = 100: 4.1 ms vs 12 ms dense; mass
 * chain N = 5: 2.7 vs 3.1 ms); on the dense index-reduced mechanisms
 * (7-11 unknowns, 40-70% nonzero) the two are equal within 3%.  Dense LU
 * costs n^3/3 per factorization whatever the pattern. */
static int use_klu(const DyrtModel *m)
{
    if (!m->jacobian)
        return 0;
    double n = (double)m->ny;
    return m->ny > DYRT_DENSE_MAX || 4.0 * (double)m->jac_nnz < n * n;
}

static int linear_solver(DyrtSim *s)
{
    const DyrtModel *m = s->m;
    s->sparse = !s->dummy_state && use_klu(m);
    sunindextype n = s->dummy_state ? 1 : m->ny;
    if (s->sparse) {
        sunindextype nnz = m->jac_nnz > 0 ? m->jac_nnz : 1;
        s->A = SUNSparseMatrix(m->ny, m->ny, nnz, CSC_MAT, s->ctx);
        s->LS = s->A ? SUNLinSol_KLU(s->yy, s->A, s->ctx) : NULL;
    } else {
        s->jvals = dyrt_calloc((size_t)m->jac_nnz + 1, sizeof *s->jvals);
        s->A = SUNDenseMatrix(n, n, s->ctx);
        s->LS = s->A ? SUNLinSol_Dense(s->yy, s->A, s->ctx) : NULL;
    }
    if (!s->A || !s->LS || (!s->sparse && !s->jvals))
        return -1;
    if (IDASetLinearSolver(s->ida, s->LS, s->A) != IDA_SUCCESS)
        return -1;
    return m->jacobian && !s->dummy_state ? IDASetJacFn(s->ida, jacobian_cb) : 0;
}

/* Steps shorter than ~100 ulp of t mean no progress: fail instead of
 * creeping towards a singularity with millions of steps.  Relative to the
 * current t, not the final one: a stiff start on a long horizon (Robertson
 * to t = 4e10) needs steps of 1e-6 near t = 0.  Updated on every stretch
 * of integration (dyrt_update_min_step). */
double dyrt_min_step(double t)
{
    return 100 * DBL_EPSILON * fabs(t);
}

static double min_step(const DyrtSim *s)
{
    return dyrt_min_step(s->start);
}

static int ida_options(DyrtSim *s)
{
    const DyrtModel *m = s->m;
    int bad = 0;
    bad |= IDASetErrHandlerFn(s->ida, error_cb, s);
    bad |= IDAInit(s->ida, residual_cb, s->start, s->yy, s->yp);
    bad |= IDASStolerances(s->ida, s->rtol, s->atol);
    bad |= IDASetUserData(s->ida, s);
    bad |= IDASetMaxNumSteps(s->ida, s->max_steps);
    bad |= IDASetId(s->ida, s->id);
    /* Every unknown stays in the local error test.  (Keeping algebraic ones
     * out, IDASetSuppressAlg, let the history of an algebraic unknown that
     * no state drives grow without bound -- a loop with a time-varying
     * coefficient read 1e100 between steps -- and made outputs between
     * steps uncontrolled interpolants.  Index-reduced mechanisms, for which
     * it was once needed, converge since explicit state derivatives are
     * substituted in the structure phase.) */
    bad |= IDASetMinStep(s->ida, min_step(s));
    /* IDACalcIC leaves y' of algebraic unknowns at its guess, so the first
     * step after a (re)start may need many reductions when an algebraic
     * unknown moves fast and atol is tight (a diode's voltage under a sine
     * source at atol 1e-10 failed after the default 10). */
    bad |= IDASetMaxErrTestFails(s->ida, 20);
    if (s->dtmax > 0)
        bad |= IDASetMaxStep(s->ida, s->dtmax);
    if (m->nz > 0) {
        bad |= IDARootInit(s->ida, m->nz, roots_cb);
        bad |= IDASetNoInactiveRootWarn(s->ida);
    }
    return bad;
}

/* A model without unknowns but with a zero-crossing clock still needs the
 * integrator to locate the clock's roots: it gets one dummy unknown. */
static int needs_dummy_state(const DyrtModel *m)
{
    for (int32_t c = 0; m->ny == 0 && c < m->nclocks; c++)
        if (m->clock_kind[c] == DYRT_CLOCK_ZERO_CROSSING)
            return 1;
    return 0;
}

int dyrt_integrate_setup(DyrtSim *s)
{
    s->bad_res = -1;
    s->dummy_state = needs_dummy_state(s->m);
    if (s->m->ny == 0 && !s->dummy_state)
        return 0;              /* nothing to integrate: outputs of t and p */
    if (SUNContext_Create(NULL, &s->ctx) != 0) {
        dyrt_error("internal: cannot create the SUNDIALS context");
        return DYRT_EXIT_INTERNAL;
    }
    s->ida = IDACreate(s->ctx);
    if (!s->ida || vectors(s) || ida_options(s) || linear_solver(s) || dyrt_tight_setup(s)) {
        dyrt_error("internal: setting up IDA failed%s%s", s->ida_msg[0] ? ": " : "", s->ida_msg);
        return DYRT_EXIT_INTERNAL;
    }
    return 0;
}

void dyrt_print_stats(const DyrtSim *s, FILE *f)
{
    long nst = 0, nre = 0, nje = 0, nls = 0, nni = 0, nnf = 0, netf = 0, nge = 0;
    if (s->ida) {
        IDAGetNumSteps(s->ida, &nst);
        IDAGetNumResEvals(s->ida, &nre);
        IDAGetNumJacEvals(s->ida, &nje);
        IDAGetNumLinSolvSetups(s->ida, &nls);
        IDAGetNumNonlinSolvIters(s->ida, &nni);
        IDAGetNumNonlinSolvConvFails(s->ida, &nnf);
        IDAGetNumErrTestFails(s->ida, &netf);
        IDAGetNumGEvals(s->ida, &nge);
    }
    fprintf(f, "statistics for %s (%d unknowns, %s linear solver, %d zero-crossing functions, "
            "%d assertions):\n", s->m->name, (int)s->m->ny, s->sparse ? "KLU sparse" : "dense",
            (int)s->m->nz, (int)s->m->nassert);
    fprintf(f, "  steps %ld, residual evals %ld, Jacobian evals %ld, linear setups %ld\n",
            nst, nre, nje, nls);
    fprintf(f, "  Newton iterations %ld, convergence failures %ld, error test failures %ld\n",
            nni, nnf, netf);
    fprintf(f, "  events %ld, re-initializations %ld, zero-crossing evals %ld\n",
            s->stats.events, s->stats.reinits, nge);
    for (long k = 0; k < s->stats.events && k < DYRT_EVENT_LOG; k++)
        fprintf(f, "  event at t = %s\n", dyrt_num(s->stats.event_t[k]).s);
    if (s->stats.events > DYRT_EVENT_LOG)
        fprintf(f, "  (%ld more events)\n", s->stats.events - DYRT_EVENT_LOG);
    dyrt_sets_stats(s, f);
    if (s->m->nclocks > 0)
        fprintf(f, "  clocks %d, partition ticks %ld\n", (int)s->m->nclocks, s->clk.ticks);
    if (s->stats.init_sparse > 0)
        fprintf(f, "  initialization: %d block%s by sparse LU (the largest %d equations)\n", s->stats.init_sparse,
                s->stats.init_sparse == 1 ? "" : "s", s->stats.init_largest);
    if (s->stats.init_blocks > 0 && !s->stats.init_left)
        fprintf(f, "  initialization: %d blocks in %d levels, %ld block Newton steps, "
                "whole-system Newton not needed\n", s->stats.init_blocks, s->stats.init_levels,
                s->stats.init_block_rounds);
    else if (s->stats.init_blocks > 0)
        fprintf(f, "  initialization: %d blocks in %d levels, %ld block Newton steps, "
                "whole-system Newton from block %d (%s)\n", s->stats.init_blocks, s->stats.init_levels,
                s->stats.init_block_rounds, s->stats.init_left,
                s->stats.init_left_why == DYRT_INIT_LEFT_DEEP     ? "a deep chain of levels"
                : s->stats.init_left_why == DYRT_INIT_LEFT_BUDGET ? "evaluation budget spent"
                                                                  : "not solved on its own");
    if (s->stats.init_homotopy)
        fprintf(f, "  initialization: the whole-system Newton failed; the homotopy from the blocks "
                "solved on their own and the guesses of the rest %s\n",
                s->stats.init_homotopy > 0 ? "solved it" : "failed too");
    fprintf(f, "  initialization: %ld Newton iterations, %ld residual evals\n",
            s->stats.init_iters, s->stats.init_res_evals);
}

void dyrt_integrate_free(DyrtSim *s)
{
    dyrt_tight_free(s);
    if (s->ida)
        IDAFree(&s->ida);
    if (s->LS)
        SUNLinSolFree(s->LS);
    if (s->A)
        SUNMatDestroy(s->A);
    N_Vector *vecs[] = {&s->yy, &s->yp, &s->id};
    for (int k = 0; k < 3; k++)
        if (*vecs[k]) {
            N_VDestroy(*vecs[k]);
            *vecs[k] = NULL;
        }
    if (s->ctx)
        SUNContext_Free(&s->ctx);
    free(s->jvals);
    free(s->rootsfound);
    free(s->bad_y);
    free(s->bad_yp);
    s->bad_y = s->bad_yp = NULL;
    s->LS = NULL;
    s->A = NULL;
    s->jvals = NULL;
    s->rootsfound = NULL;
}
