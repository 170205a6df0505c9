/*
 * init.c -- consistent starting values y0, y'0 for IDA.
 *
 * With an initialization system (init_n > 0) its blocks are solved one
 * level after the other first (initblock.c); what they leave, we solve
 * init_residual(t0, z, p) = 0 for z by Newton's method from there (when
 * they solved everything, one evaluation confirms it), damped by a backtracking line search on the
 * merit function phi(z) = |r(z)|^2 / 2 with the Armijo condition
 * phi(z + s dz) <= (1 - 2e-4 s) phi(z) (Dennis & Schnabel, Alg. A6.3.1,
 * halving s).  The Newton matrix is the model's sparse init Jacobian in CSC
 * form, factored by KLU (symbolic analysis once, numeric factorization per
 * iteration; this runs once, so no refactor tricks).  A Jacobian that is
 * singular at the current point (often a product of two unknowns guessed 0)
 * is retried at slightly perturbed points before giving up.  Then init_finish
 * scatters z into p (the `missing` parameters), y0 and y'0.
 * --initial NAME=VALUE on such a model replaces the `initial` relation of
 * that unknown (row initial_row[i] of the init system) by z[initial_z[i]] =
 * VALUE: the residual row becomes z - VALUE and its Jacobian row the unit
 * vector, both overwritten after the model's functions ran.
 * Then the checks (init_ncheck relations that over-determine the system,
 * dyad_model.h) are compared at the solution: equal within CHECK_RTOL
 * (relative to the larger side, at least 1) they are redundant and dropped
 * with a warning naming them; otherwise an error names each inconsistent
 * one and the relations that determine its unknowns.
 * Without one (init_n == 0) the model's `start` gives y0, y'0, the --initial
 * overrides are applied, and IDACalcIC (integrate.c) completes them.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "dyrt_init.h"

static int newton_alloc(Newton *nw, const DyrtModel *m)
{
    int n = m->init_n, nnz = m->init_nnz;
    nw->n = n;
    nw->colptr = dyrt_calloc((size_t)n + 1, sizeof(int));
    nw->rowidx = dyrt_calloc((size_t)nnz, sizeof(int));
    nw->vals = dyrt_calloc((size_t)nnz, sizeof(double));
    double **vecs[] = {&nw->z, &nw->dz, &nw->zt, &nw->guess, &nw->r, &nw->rt};
    size_t nr = (size_t)n + 2 * (size_t)m->init_ncheck;
    for (int k = 0; k < 6; k++)
        if (!(*vecs[k] = dyrt_calloc(k < 4 ? (size_t)n : nr, sizeof(double))))
            return DYRT_EXIT_INTERNAL;
    if (!nw->colptr || !nw->rowidx || !nw->vals)
        return DYRT_EXIT_INTERNAL;
    for (int j = 0; j <= n; j++)
        nw->colptr[j] = m->init_colptr[j];
    for (int k = 0; k < nnz; k++)
        nw->rowidx[k] = m->init_rowidx[k];
    return 0;
}

static void newton_free(Newton *nw)
{
    free(nw->over_row);
    free(nw->over_z);
    free(nw->over_pos);
    free(nw->over_val);
    free(nw->row_over);
    free(nw->map);
    free(nw->mvals);
    free(nw->cand);
    free(nw->g_row);
    free(nw->g_col);
    free(nw->g_orig);
    free(nw->guess);
    if (nw->sym)
        klu_free_symbolic(&nw->sym, &nw->common);
    free(nw->colptr);
    free(nw->rowidx);
    free(nw->vals);
    free(nw->z);
    free(nw->r);
    free(nw->dz);
    free(nw->zt);
    free(nw->rt);
}

/* r = F(z); 0 when evaluated and finite.  Every row is written either
 * way (the block-wise solver reads the rows it needs). */
int dyrt_init_eval(Newton *nw, const double *z, double *r)
{
    nw->evals++;
    int rc = nw->m->init_residual(nw->t0, z, nw->p, r);
    dyrt_init_guess_residual(nw, z, r);
    for (int k = 0; k < nw->nover; k++)
        r[nw->over_row[k]] = z[nw->over_z[k]] - nw->over_val[k];
    for (int i = 0; i < nw->n; i++)
        if (!isfinite(r[i]))
            return -1;
    return rc ? -1 : 0;
}

static double norm_inf(const double *v, int n)
{
    double s = 0;
    for (int i = 0; i < n; i++)
        if (fabs(v[i]) > s)
            s = fabs(v[i]);
    return s;
}

static double half_sq(const double *v, int n)
{
    double s = 0;
    for (int i = 0; i < n; i++)
        s += v[i] * v[i];
    return 0.5 * s;
}

/* The model's init Jacobian, with the moved guess rows (initguess.c) and the
 * overridden rows replaced by unit rows; every entry is written, -1 when
 * one is NaN. */
int dyrt_init_jacobian(Newton *nw)
{
    int rc = nw->m->init_jacobian(nw->t0, nw->z, nw->p, nw->map ? nw->mvals : nw->vals) != 0 ? -1 : 0;
    dyrt_init_guess_jacobian(nw);
    if (nw->nover == 0)
        return rc;
    int nnz = nw->colptr[nw->n];
    for (int k = 0; k < nnz; k++)
        if (nw->row_over[nw->rowidx[k]])
            nw->vals[k] = 0;
    for (int k = 0; k < nw->nover; k++)
        nw->vals[nw->over_pos[k]] = 1;
    return rc;
}

/* " (unknowns x, der(x))": the unknowns occurring in init equation `row`,
 * from the Jacobian pattern, at most four. */
static size_t row_unknowns(const Newton *nw, int row, char *buf, size_t size)
{
    size_t len = 0;
    int found = 0;
    for (int j = 0; j < nw->n && len < size; j++)
        for (int k = nw->colptr[j]; k < nw->colptr[j + 1]; k++) {
            if (nw->rowidx[k] != row)
                continue;
            const char *nm = nw->m->init_names ? nw->m->init_names[j] : "?";
            if (found < 4)
                len += (size_t)snprintf(buf + len, size - len, "%s%s", found ? ", " : "; unknowns ", nm);
            else if (found == 4)
                len += (size_t)snprintf(buf + len, size - len, ", ...");
            found++;
        }
    return len < size ? len : size - 1;
}

/* One equation for a message: its source text when the model has it. */
size_t dyrt_init_describe(const Newton *nw, int row, char *buf, size_t size)
{
    const char *const *names = nw->m->init_eq_names;
    size_t len;
    if (names && names[row])
        len = (size_t)snprintf(buf, size, "equation %d `%s` (r = %.3g", row, names[row], nw->r[row]);
    else
        len = (size_t)snprintf(buf, size, "equation %d (r = %.3g", row, nw->r[row]);
    if (len >= size)
        return size - 1;
    len += row_unknowns(nw, row, buf + len, size - len);
    if (len + 1 < size) {
        buf[len++] = ')';
        buf[len] = '\0';
    }
    return len;
}

/* The (at most three) equations with the largest |residual| above the tolerance. */
static void largest_residuals(const Newton *nw, char *buf, size_t size)
{
    int used[3] = {-1, -1, -1};
    size_t len = 0;
    buf[0] = '\0';
    for (int k = 0; k < 3 && k < nw->n; k++) {
        int best = -1;
        for (int i = 0; i < nw->n; i++) {
            if (i == used[0] || i == used[1])
                continue;
            if (best < 0 || !(fabs(nw->r[i]) <= fabs(nw->r[best])))
                best = i;
        }
        used[k] = best;
        if (k > 0 && !(fabs(nw->r[best]) > NEWTON_FTOL))
            break;
        if (k > 0)
            len += (size_t)snprintf(buf + len, size - len, "; ");
        if (len >= size)
            break;
        len += dyrt_init_describe(nw, best, buf + len, size - len);
        if (len + 1 >= size)
            break;
    }
}

static int fail(const Newton *nw, const char *why)
{
    if (nw->quiet)
        return DYRT_EXIT_USER;
    char worst[600];
    largest_residuals(nw, worst, sizeof worst);
    dyrt_error("initialization failed: %s: residual norm %.3g after %ld iterations; "
               "largest residuals: %s", why, norm_inf(nw->r, nw->n), nw->iters, worst);
    return DYRT_EXIT_USER;
}

/* The initialization residual is NaN or Inf at z: name those equations
 * and, from the values at z, where the non-finite value began. */
static int nonfinite(const Newton *nw, const char *where)
{
    if (nw->quiet)
        return DYRT_EXIT_USER;
    char rows[700];
    size_t len = 0;
    int n = 0;
    for (int i = 0; i < nw->n && len + 8 < sizeof rows; i++) {
        if (isfinite(nw->r[i]))
            continue;
        if (n++ == 3) {
            len += (size_t)snprintf(rows + len, sizeof rows - len, "; ...");
            break;
        }
        if (n > 1)
            len += (size_t)snprintf(rows + len, sizeof rows - len, "; ");
        len += dyrt_init_describe(nw, i, rows + len, sizeof rows - len);
    }
    dyrt_error("initialization failed: not finite %s: %s", where, n ? rows : "?");
    DyrtSim *s = nw->s;
    nw->m->init_finish(nw->t0, nw->z, s->p, s->y0, s->yp0);
    dyrt_explain_point(s, -1, nw->t0, s->y0, s->yp0);
    return DYRT_EXIT_USER;
}

static int singular(Newton *nw)
{
    char why[160];
    int col = nw->common.singular_col;
    const char *nm = nw->m->init_names && col >= 0 && col < nw->n ? nw->m->init_names[col] : "?";
    snprintf(why, sizeof why, "singular Jacobian (unknown '%s' is not determined)", nm);
    return fail(nw, why);
}

/* Move z off a point where J is singular by value (a product of unknowns
 * that are both zero, say); 0 when the residual is still defined. */
static int perturb(Newton *nw, int attempt)
{
    double scale = 1e-4 * (double)(attempt + 1);
    for (int i = 0; i < nw->n; i++)
        nw->z[i] += scale * (1 + fabs(nw->z[i])) * (i % 2 ? -1.0 : 1.0);
    return dyrt_init_eval(nw, nw->z, nw->r);
}

/* dz = -J^-1 r with KLU.  When J is singular at z, try pinning another
 * `missing` parameter at its guess (initguess.c), then retry at a few
 * nearby points before reporting the unknown of the failing column. */
static int newton_direction(Newton *nw)
{
    klu_numeric *num = NULL;
    if (!nw->sym && !(nw->sym = klu_analyze(nw->n, nw->colptr, nw->rowidx, &nw->common))) {
        dyrt_error("internal: KLU analysis of the initialization Jacobian failed (status %d)",
                   nw->common.status);
        return DYRT_EXIT_INTERNAL;
    }
    for (int attempt = 0; !num; attempt++) {
        if (dyrt_init_jacobian(nw) != 0)
            return fail(nw, "the Jacobian cannot be evaluated");
        num = klu_factor(nw->colptr, nw->rowidx, nw->vals, nw->sym, &nw->common);
        if (!num && !nw->swapped)
            num = dyrt_init_swap_guess(nw);
        if (!num && (attempt == NEWTON_PERTURBATIONS || perturb(nw, attempt) != 0))
            return singular(nw);
    }
    for (int i = 0; i < nw->n; i++)
        nw->dz[i] = -nw->r[i];
    klu_solve(nw->sym, num, nw->n, 1, nw->dz, &nw->common);
    klu_free_numeric(&num, &nw->common);
    return 0;
}

/* Backtracking: accept z + s dz for the largest s = 1, 1/2, ... that
 * satisfies the Armijo condition.  Returns the accepted s, 0 on failure. */
static double line_search(Newton *nw)
{
    double phi = half_sq(nw->r, nw->n);
    for (double s = 1.0; s >= NEWTON_MINSTEP; s *= 0.5) {
        for (int i = 0; i < nw->n; i++)
            nw->zt[i] = nw->z[i] + s * nw->dz[i];
        if (dyrt_init_eval(nw, nw->zt, nw->rt) == 0 && half_sq(nw->rt, nw->n) <= (1 - 2e-4 * s) * phi) {
            memcpy(nw->z, nw->zt, sizeof(double) * (size_t)nw->n);
            memcpy(nw->r, nw->rt, sizeof(double) * (size_t)nw->n);
            return s;
        }
    }
    return 0;
}

/* max_i |s dz_i| / max(|z_i|, 1) */
static double relative_step(const Newton *nw, double s)
{
    double m = 0;
    for (int i = 0; i < nw->n; i++) {
        double d = fabs(s * nw->dz[i]) / fmax(fabs(nw->z[i]), 1.0);
        if (d > m)
            m = d;
    }
    return m;
}

static int newton_solve(Newton *nw)
{
    if (dyrt_init_eval(nw, nw->z, nw->r) != 0)
        return nonfinite(nw, "at the initial guess");
    long first = nw->iters;
    while (norm_inf(nw->r, nw->n) > NEWTON_FTOL) {
        if (nw->iters - first >= NEWTON_MAXITER)
            return fail(nw, "no convergence");
        nw->iters++;
        int rc = newton_direction(nw);
        if (rc)
            return rc;
        if (relative_step(nw, 1.0) < NEWTON_STEPTOL && norm_inf(nw->r, nw->n) <= NEWTON_FTOL_LOOSE)
            break; /* converged to rounding: |r| ~ eps |terms| */
        double s = line_search(nw);
        if (s == 0)
            return fail(nw, "the line search found no decrease");
        if (relative_step(nw, s) < NEWTON_STEPTOL && norm_inf(nw->r, nw->n) <= NEWTON_FTOL_LOOSE)
            break;
    }
    return 0;
}

/* Position of entry (row, col) in the CSC pattern, -1 when structurally 0. */
static int find_entry(const Newton *nw, int row, int col)
{
    for (int k = nw->colptr[col]; k < nw->colptr[col + 1]; k++)
        if (nw->rowidx[k] == row)
            return k;
    return -1;
}

/* The --initial overrides as (row, z, position, value); a repeated row
 * keeps the last value. */
static int setup_overrides(Newton *nw, const DyrtSim *s)
{
    int n = s->ninitials;
    if (n == 0)
        return 0;
    nw->over_row = dyrt_calloc((size_t)n, sizeof(int));
    nw->over_z = dyrt_calloc((size_t)n, sizeof(int));
    nw->over_pos = dyrt_calloc((size_t)n, sizeof(int));
    nw->over_val = dyrt_calloc((size_t)n, sizeof(double));
    nw->row_over = dyrt_calloc((size_t)nw->n, 1);
    if (!nw->over_row || !nw->over_z || !nw->over_pos || !nw->over_val || !nw->row_over)
        return DYRT_EXIT_INTERNAL;
    for (int k = 0; k < n; k++) {
        const DyrtNameValue *nv = &s->initials[k];
        int row, z;
        double value;
        int rc = dyrt_initial_target(s, nv, &row, &z, &value);
        if (rc)
            return rc;
        int pos = find_entry(nw, row, z);
        if (pos < 0) {
            dyrt_error("--initial %s: the `initial` relation recorded for '%s' does not "
                       "involve it (internal inconsistency of the model)", nv->name, nv->name);
            return DYRT_EXIT_INTERNAL;
        }
        int j = 0;
        while (j < nw->nover && nw->over_row[j] != row)
            j++;
        nw->over_row[j] = row;
        nw->over_z[j] = z;
        nw->over_pos[j] = pos;
        nw->over_val[j] = value;
        nw->row_over[row] = 1;
        if (j == nw->nover)
            nw->nover++;
    }
    return 0;
}

/* The checks at the solution: a warning for each that holds, an error for
 * each that does not. */
static int check_relations(Newton *nw)
{
    const DyrtModel *m = nw->m;
    int n = nw->n, bad = 0;
    if (m->init_ncheck <= 0)
        return 0;
    if (dyrt_init_eval(nw, nw->z, nw->r) != 0)
        return fail(nw, "the residual cannot be evaluated at the solution");
    for (int k = 0; k < m->init_ncheck; k++) {
        double a = nw->r[n + 2 * k], b = nw->r[n + 2 * k + 1];
        const char *nm = m->init_eq_names ? m->init_eq_names[n + k] : "?";
        const char *with = m->init_check_with ? m->init_check_with[k] : "the other relations";
        if (fabs(a - b) <= CHECK_RTOL * fmax(1.0, fmax(fabs(a), fabs(b)))) {
            dyrt_warning("redundant initial relation `%s`: it holds already, with its unknowns determined "
                         "by %s; ignored", nm, with);
            continue;
        }
        dyrt_error("inconsistent initialization: `%s` does not hold (its sides are %s and %s) with "
                   "its unknowns determined by %s", nm, dyrt_num(a).s, dyrt_num(b).s, with);
        bad++;
    }
    return bad ? DYRT_EXIT_USER : 0;
}

/* The init BLT stays valid under the --initial overrides when each
 * overridden row determines the unknown it now fixes. */
static int blocks_hold(const Newton *nw)
{
    const DyrtModel *m = nw->m;
    if (m->init_nblocks <= 0 || !m->init_block_ptr)
        return 0;
    for (int k = 0; k < nw->nover; k++) {
        int i = 0;
        while (i < nw->n && m->init_block_rows[i] != nw->over_row[k])
            i++;
        if (i == nw->n || m->init_block_cols[i] != nw->over_z[k])
            return 0;
    }
    return 1;
}

/* The whole-system Newton from where the blocks left it; when it fails,
 * the homotopy (inithomotopy.c) and the Newton once more from its end;
 * when that fails too, the first failure's messages.  The homotopy starts
 * from the values of the blocks solved on their own (the `initial` values
 * and what follows from them) and the guesses z0 of the rest; z0 is
 * overwritten. */
static int whole_system(Newton *nw, const InitBlocks *ib, double *z0)
{
    size_t bytes = sizeof(double) * (size_t)nw->n;
    double *zb = dyrt_calloc((size_t)nw->n, sizeof *zb);
    if (!zb)
        return DYRT_EXIT_INTERNAL;
    memcpy(zb, nw->z, bytes);
    for (int i = 0; ib->solved && i < nw->n; i++)
        if (ib->solved[i])
            z0[i] = zb[i];
    nw->quiet = nw->m->init_nblocks > 0;
    int rc = newton_solve(nw);
    if (rc == DYRT_EXIT_USER && nw->quiet) {
        nw->quiet = 0;
        nw->homotopy = dyrt_init_homotopy(nw, z0) == 0 ? 1 : -1;
        if (nw->homotopy > 0)
            rc = newton_solve(nw);
        if (nw->homotopy < 0 || rc) { /* the original failure, with its messages */
            memcpy(nw->z, zb, bytes);
            rc = newton_solve(nw);
        }
    }
    nw->quiet = 0;
    free(zb);
    if (rc && ib->failed >= 0 && ib->left == DYRT_INIT_LEFT_UNSOLVED)
        dyrt_error("initialization: %s; the whole-system Newton from there failed too", ib->why);
    return rc;
}

static int solve_init_system(DyrtSim *s)
{
    const DyrtModel *m = s->m;
    Newton nw = {.s = s, .m = m, .p = s->p, .t0 = s->start};
    InitBlocks ib = {.failed = -1};
    double *z0 = NULL;         /* the guesses */
    int rc = newton_alloc(&nw, m);
    klu_defaults(&nw.common);
    if (!rc)
        rc = setup_overrides(&nw, s);
    if (!rc) {
        m->init_guess(s->start, s->p, nw.z);
        memcpy(nw.guess, nw.z, sizeof(double) * (size_t)nw.n);
        for (int k = 0; k < nw.nover; k++)
            nw.z[nw.over_z[k]] = nw.over_val[k];
        if (!(z0 = dyrt_calloc((size_t)nw.n, sizeof *z0)))
            rc = DYRT_EXIT_INTERNAL;
        else
            memcpy(z0, nw.z, sizeof *z0 * (size_t)nw.n);
        if (!rc && blocks_hold(&nw))
            rc = dyrt_init_blocks(&nw, &ib);
    }
    if (!rc)
        rc = whole_system(&nw, &ib, z0);
    if (!rc)
        rc = check_relations(&nw);
    if (!rc)
        m->init_finish(s->start, nw.z, s->p, s->y0, s->yp0);
    s->stats.init_iters = nw.iters;
    s->stats.init_res_evals = nw.evals;
    s->stats.init_blocks = ib.nblocks;
    s->stats.init_levels = ib.nlevels;
    s->stats.init_block_rounds = ib.rounds;
    s->stats.init_sparse = ib.nsparse;
    s->stats.init_largest = ib.largest;
    s->stats.init_left = ib.failed + 1;
    s->stats.init_left_why = ib.left;
    s->stats.init_homotopy = nw.homotopy;
    free(ib.solved);
    free(z0);
    newton_free(&nw);
    return rc;
}

static int check_solution(DyrtSim *s)
{
    const DyrtModel *m = s->m;
    for (int i = 0; i < m->np; i++)
        if (!isfinite(s->p[i])) {
            dyrt_error("initialization failed: parameter '%s' is %s", m->param_names[i],
                       dyrt_value_word(s->p[i]));
            return DYRT_EXIT_USER;
        }
    for (int i = 0; i < m->ny; i++) {
        int y_bad = !isfinite(s->y0[i]);
        if (!y_bad && isfinite(s->yp0[i]))
            continue;
        const char *name = m->y_names ? m->y_names[i] : "?";
        double v = y_bad ? s->y0[i] : s->yp0[i];
        if (y_bad)
            dyrt_error("initialization failed: the start value of '%s' is %s", name, dyrt_value_word(v));
        else
            dyrt_error("initialization failed: the start value of der(%s) is %s ('%s' = %s)",
                       name, dyrt_value_word(v), name, dyrt_num(s->y0[i]).s);
        dyrt_explain_point(s, -1, s->start, s->y0, s->yp0);
        return DYRT_EXIT_USER;
    }
    return 0;
}

int dyrt_initialize(DyrtSim *s)
{
    const DyrtModel *m = s->m;
    s->y0 = dyrt_calloc((size_t)m->ny, sizeof *s->y0);
    s->yp0 = dyrt_calloc((size_t)m->ny, sizeof *s->yp0);
    if (!s->y0 || !s->yp0)
        return DYRT_EXIT_INTERNAL;
    int rc;
    if (m->init_n > 0) {
        rc = solve_init_system(s);  /* with the --initial overrides */
    } else {
        if (m->ny > 0)
            dyrt_model_start(m, s->start, s->p, s->y0, s->yp0);
        rc = dyrt_apply_initials(s);
    }
    return rc ? rc : check_solution(s);
}
