/*
 * solver.c -- SUNDIALS IDA set-up for one run: the callbacks that adapt the
 * model's flat-array functions to N_Vector/SUNMatrix, the linear solver
 * choice (dense LU up to DYRT_DENSE_MAX unknowns, CSC + KLU above), root
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

#define DYRT_MAX_STEPS 500000L /* per IDASolve call, i.e. per output interval */

static int residual_cb(sunrealtype t, N_Vector yy, N_Vector yp, N_Vector rr, void *user)
{
    DyrtRun *r = user;
    double *res = N_VGetArrayPointer(rr);
    if (r->m->residual(t, N_VGetArrayPointer(yy), N_VGetArrayPointer(yp), r->p, res) != 0)
        return 1;
    for (int32_t i = 0; i < r->m->ny; i++)
        if (!isfinite(res[i])) {
            r->bad_res = i;
            return 1;
        }
    return 0;
}

/* CSC: IDA zeroes J (pattern included) before each call, so the pattern is
 * written every time; the model writes the values straight into J. */
static int jac_sparse(DyrtRun *r, double t, double cj, N_Vector yy, N_Vector yp, SUNMatrix J)
{
    const DyrtModel *m = r->m;
    sunindextype *colptr = SUNSparseMatrix_IndexPointers(J);
    sunindextype *rowidx = SUNSparseMatrix_IndexValues(J);
    for (int32_t j = 0; j <= m->ny; j++)
        colptr[j] = m->jac_colptr[j];
    for (int32_t k = 0; k < m->jac_nnz; k++)
        rowidx[k] = m->jac_rowidx[k];
    return m->jacobian(t, N_VGetArrayPointer(yy), N_VGetArrayPointer(yp), r->p, cj,
                       SUNSparseMatrix_Data(J));
}

/* Dense: the model writes CSC values into a scratch array; scatter them. */
static int jac_dense(DyrtRun *r, double t, double cj, N_Vector yy, N_Vector yp, SUNMatrix J)
{
    const DyrtModel *m = r->m;
    int rc = m->jacobian(t, N_VGetArrayPointer(yy), N_VGetArrayPointer(yp), r->p, cj, r->jvals);
    if (rc)
        return rc;
    SUNMatZero(J);
    for (int32_t j = 0; j < m->ny; j++) {
        double *col = SUNDenseMatrix_Column(J, j);
        for (int32_t k = m->jac_colptr[j]; k < m->jac_colptr[j + 1]; k++)
            col[m->jac_rowidx[k]] = r->jvals[k];
    }
    return 0;
}

static int jacobian_cb(sunrealtype t, sunrealtype cj, N_Vector yy, N_Vector yp, N_Vector rr,
                       SUNMatrix J, void *user, N_Vector t1, N_Vector t2, N_Vector t3)
{
    (void)rr; (void)t1; (void)t2; (void)t3;
    DyrtRun *r = user;
    int rc = r->sparse ? jac_sparse(r, t, cj, yy, yp, J) : jac_dense(r, t, cj, yy, yp, J);
    return rc ? 1 : 0;
}

static int roots_cb(sunrealtype t, N_Vector yy, N_Vector yp, sunrealtype *g, void *user)
{
    DyrtRun *r = user;
    r->m->zero_crossings(t, N_VGetArrayPointer(yy), N_VGetArrayPointer(yp), r->p, g);
    return 0;
}

/* Keep SUNDIALS quiet; its last message is shown with -v. */
static void error_cb(int code, const char *module, const char *function, char *msg, void *user)
{
    (void)code;
    DyrtRun *r = user;
    snprintf(r->ida_msg, sizeof r->ida_msg, "%s/%s: %s", module, function, msg);
}

static int vectors(DyrtRun *r)
{
    const DyrtModel *m = r->m;
    r->yy = N_VNew_Serial(m->ny, r->ctx);
    r->yp = N_VNew_Serial(m->ny, r->ctx);
    r->id = N_VNew_Serial(m->ny, r->ctx);
    r->rootsfound = dyrt_calloc((size_t)m->nz, sizeof *r->rootsfound);
    if (!r->yy || !r->yp || !r->id || !r->rootsfound)
        return -1;
    memcpy(N_VGetArrayPointer(r->yy), r->y0, sizeof(double) * (size_t)m->ny);
    memcpy(N_VGetArrayPointer(r->yp), r->yp0, sizeof(double) * (size_t)m->ny);
    double *id = N_VGetArrayPointer(r->id);
    for (int32_t i = 0; i < m->ny; i++)
        id[i] = m->y_is_diff && !m->y_is_diff[i] ? 0.0 : 1.0;
    return 0;
}

static int linear_solver(DyrtRun *r)
{
    const DyrtModel *m = r->m;
    r->sparse = m->ny > DYRT_DENSE_MAX && m->jacobian != NULL;
    if (r->sparse) {
        sunindextype nnz = m->jac_nnz > 0 ? m->jac_nnz : 1;
        r->A = SUNSparseMatrix(m->ny, m->ny, nnz, CSC_MAT, r->ctx);
        r->LS = r->A ? SUNLinSol_KLU(r->yy, r->A, r->ctx) : NULL;
    } else {
        r->jvals = dyrt_calloc((size_t)m->jac_nnz, sizeof *r->jvals);
        r->A = SUNDenseMatrix(m->ny, m->ny, r->ctx);
        r->LS = r->A ? SUNLinSol_Dense(r->yy, r->A, r->ctx) : NULL;
    }
    if (!r->A || !r->LS || (!r->sparse && !r->jvals))
        return -1;
    if (IDASetLinearSolver(r->ida, r->LS, r->A) != IDA_SUCCESS)
        return -1;
    return m->jacobian ? IDASetJacFn(r->ida, jacobian_cb) : 0;
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

static double min_step(const DyrtRun *r)
{
    return dyrt_min_step(r->start);
}

static int has_state(const DyrtModel *m)
{
    for (int32_t i = 0; i < m->ny; i++)
        if (!m->y_is_diff || m->y_is_diff[i])
            return 1;
    return 0;
}

static int ida_options(DyrtRun *r)
{
    const DyrtModel *m = r->m;
    int bad = 0;
    bad |= IDASetErrHandlerFn(r->ida, error_cb, r);
    bad |= IDAInit(r->ida, residual_cb, r->start, r->yy, r->yp);
    bad |= IDASStolerances(r->ida, r->rtol, r->atol);
    bad |= IDASetUserData(r->ida, r);
    bad |= IDASetMaxNumSteps(r->ida, DYRT_MAX_STEPS);
    bad |= IDASetId(r->ida, r->id);
    /* Algebraic unknowns out of the local error test (they follow from the
     * differential ones through the index-1 constraints): the chains take
     * 88 instead of 132 steps (RC ladder) and 120 instead of 154 (masses) at
     * the same accuracy of the states (RC ladder N = 100: checksum error
     * 1.7e-7 vs 1.3e-7 at rtol 1e-6).  Not with zero crossings, whose
     * functions often read algebraic unknowns through IDA's interpolant
     * (event times), nor without states (nothing would control the step). */
    if (m->nz == 0 && has_state(m))
        bad |= IDASetSuppressAlg(r->ida, SUNTRUE);
    bad |= IDASetMinStep(r->ida, min_step(r));
    /* IDACalcIC leaves y' of algebraic unknowns at its guess, so the first
     * step after a (re)start may need many reductions when an algebraic
     * unknown moves fast and atol is tight (a diode's voltage under a sine
     * source at atol 1e-10 failed after the default 10). */
    bad |= IDASetMaxErrTestFails(r->ida, 20);
    if (r->dtmax > 0)
        bad |= IDASetMaxStep(r->ida, r->dtmax);
    if (m->nz > 0) {
        bad |= IDARootInit(r->ida, m->nz, roots_cb);
        bad |= IDASetNoInactiveRootWarn(r->ida);
    }
    return bad;
}

int dyrt_integrate_setup(DyrtRun *r)
{
    r->bad_res = -1;
    if (r->m->ny == 0)
        return 0;              /* nothing to integrate: outputs of t and p */
    if (SUNContext_Create(NULL, &r->ctx) != 0) {
        dyrt_error("internal: cannot create the SUNDIALS context");
        return DYRT_EXIT_INTERNAL;
    }
    r->ida = IDACreate(r->ctx);
    if (!r->ida || vectors(r) || ida_options(r) || linear_solver(r)) {
        dyrt_error("internal: setting up IDA failed%s%s", r->ida_msg[0] ? ": " : "", r->ida_msg);
        return DYRT_EXIT_INTERNAL;
    }
    return 0;
}

void dyrt_integrate_stats(const DyrtRun *r, FILE *f)
{
    long nst = 0, nre = 0, nje = 0, nls = 0, nni = 0, nnf = 0, netf = 0, nge = 0;
    if (r->ida) {
        IDAGetNumSteps(r->ida, &nst);
        IDAGetNumResEvals(r->ida, &nre);
        IDAGetNumJacEvals(r->ida, &nje);
        IDAGetNumLinSolvSetups(r->ida, &nls);
        IDAGetNumNonlinSolvIters(r->ida, &nni);
        IDAGetNumNonlinSolvConvFails(r->ida, &nnf);
        IDAGetNumErrTestFails(r->ida, &netf);
        IDAGetNumGEvals(r->ida, &nge);
    }
    fprintf(f, "statistics for %s (%d unknowns, %s linear solver, %d zero-crossing functions, "
            "%d assertions):\n", r->m->name, (int)r->m->ny, r->sparse ? "KLU sparse" : "dense",
            (int)r->m->nz, (int)r->m->nassert);
    fprintf(f, "  steps %ld, residual evals %ld, Jacobian evals %ld, linear setups %ld\n",
            nst, nre, nje, nls);
    fprintf(f, "  Newton iterations %ld, convergence failures %ld, error test failures %ld\n",
            nni, nnf, netf);
    fprintf(f, "  events %ld, re-initializations %ld, zero-crossing evals %ld\n",
            r->stats.events, r->stats.reinits, nge);
    for (long k = 0; k < r->stats.events && k < DYRT_EVENT_LOG; k++)
        fprintf(f, "  event at t = %.17g\n", r->stats.event_t[k]);
    if (r->stats.events > DYRT_EVENT_LOG)
        fprintf(f, "  (%ld more events)\n", r->stats.events - DYRT_EVENT_LOG);
    fprintf(f, "  initialization: %ld Newton iterations, %ld residual evals\n",
            r->stats.init_iters, r->stats.init_res_evals);
    fprintf(f, "  rows written %ld\n", r->rows);
    fprintf(f, "  time: setup %.3f s, initialization %.3f s, integration %.3f s, output %.3f s\n",
            r->stats.t_setup, r->stats.t_init, r->stats.t_integrate, r->stats.t_output);
    if (r->ida_msg[0])
        fprintf(f, "  last SUNDIALS message: %s\n", r->ida_msg);
}

void dyrt_integrate_free(DyrtRun *r)
{
    if (r->ida)
        IDAFree(&r->ida);
    if (r->LS)
        SUNLinSolFree(r->LS);
    if (r->A)
        SUNMatDestroy(r->A);
    N_Vector *vecs[] = {&r->yy, &r->yp, &r->id};
    for (int k = 0; k < 3; k++)
        if (*vecs[k]) {
            N_VDestroy(*vecs[k]);
            *vecs[k] = NULL;
        }
    if (r->ctx)
        SUNContext_Free(&r->ctx);
    free(r->jvals);
    free(r->rootsfound);
    r->LS = NULL;
    r->A = NULL;
    r->jvals = NULL;
    r->rootsfound = NULL;
}
