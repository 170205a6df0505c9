/*
 * inithomotopy.c -- the last resort of the initialization: a homotopy from
 * a problem whose solution is the starting point.
 *
 * When the damped Newton fails (a local minimum of |F|, say), the runtime
 * follows from z0 -- the values of the init blocks solved on their own
 * (initblock.c: the `initial` values and what follows from them), the
 * guesses of the rest -- the solutions of
 *     H_r(z, lam) = lam F_r(z) + (1 - lam) (z_m(r) - z0_m(r)) = 0
 * from lam = 0 (z = z0) to lam = 1 (F = 0), m(r) the unknown that row r
 * determines in the init BLT's matching (a structural nonzero, so
 * dH/dz = lam J + (1 - lam) P keeps the pattern of J and is nonsingular
 * at lam = 0).  This is the fixed-point ("Newton") homotopy of Allgower &
 * Georg, "Introduction to Numerical Continuation Methods", §1; the
 * simplified problem of OpenModelica's `homotopy` initialization is the
 * model's own choice (Dyad has no such operator), ours is z = z0.  Natural-parameter continuation:
 * steps in lam (start 0.1, doubled after a success up to 0.5, halved after
 * a failure down to 1e-6), each corrected by at most HOM_NEWTON undamped
 * Newton iterations with KLU from the previous point.  It cannot pass a
 * turning point of the path (lam not monotone along it): then it fails
 * and the caller reports the whole-system Newton's failure.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "dyrt_init.h"

#define HOM_NEWTON 8
#define HOM_MIN_STEP 1e-6

typedef struct Hom {
    Newton *nw;
    const double *z0;
    int *col;                  /* [n] m(r), the unknown of row r */
    int *pos;                  /* [n] the CSC position of (r, m(r)) */
} Hom;

/* H(z, lam) into nw->r (the first n rows); 0 when finite */
static int h_eval(Hom *h, double lam, const double *z) {
    Newton *nw = h->nw;
    dyrt_init_eval(nw, z, nw->r);
    for (int r = 0; r < nw->n; r++) {
        nw->r[r] = lam * nw->r[r] + (1 - lam) * (z[h->col[r]] - h->z0[h->col[r]]);
        if (!isfinite(nw->r[r]))
            return -1;
    }
    return 0;
}

/* undamped Newton on H(., lam) from nw->z; 0 when converged */
static int correct(Hom *h, double lam) {
    Newton *nw = h->nw;
    int n = nw->n, nnz = nw->colptr[n];
    for (int it = 0; it < HOM_NEWTON; it++) {
        if (h_eval(h, lam, nw->z) != 0)
            return -1;
        double norm = 0;
        for (int r = 0; r < n; r++)
            norm = fmax(norm, fabs(nw->r[r]));
        if (norm <= NEWTON_FTOL)
            return 0;
        if (dyrt_init_jacobian(nw) != 0)
            return -1;
        for (int k = 0; k < nnz; k++)
            nw->vals[k] *= lam;
        for (int r = 0; r < n; r++)
            nw->vals[h->pos[r]] += 1 - lam;
        klu_numeric *num = klu_factor(nw->colptr, nw->rowidx, nw->vals, nw->sym, &nw->common);
        if (!num)
            return -1;
        for (int r = 0; r < n; r++)
            nw->dz[r] = -nw->r[r];
        klu_solve(nw->sym, num, n, 1, nw->dz, &nw->common);
        klu_free_numeric(&num, &nw->common);
        for (int i = 0; i < n; i++)
            nw->z[i] += nw->dz[i];
        nw->iters++;
    }
    return -1;
}

static int positions(Hom *h) {
    Newton *nw = h->nw;
    const DyrtModel *m = nw->m;
    for (int i = 0; i < nw->n; i++) {
        int r = m->init_block_rows[i], c = m->init_block_cols[i];
        h->col[r] = c;
        h->pos[r] = -1;
        for (int k = nw->colptr[c]; k < nw->colptr[c + 1]; k++)
            if (nw->rowidx[k] == r)
                h->pos[r] = k;
        if (h->pos[r] < 0)
            return -1;
    }
    return 0;
}

int dyrt_init_homotopy(Newton *nw, const double *z0) {
    const DyrtModel *m = nw->m;
    int n = nw->n;
    if (m->init_nblocks <= 0 || !m->init_block_ptr || n <= 0)
        return -1;
    if (!nw->sym && !(nw->sym = klu_analyze(n, nw->colptr, nw->rowidx, &nw->common)))
        return -1;
    Hom h = {.nw = nw, .z0 = z0};
    h.col = dyrt_calloc((size_t)n, sizeof(int));
    h.pos = dyrt_calloc((size_t)n, sizeof(int));
    double *zacc = dyrt_calloc((size_t)n, sizeof(double));
    int rc = !h.col || !h.pos || !zacc || positions(&h) ? -1 : 0;
    if (!rc)
        memcpy(zacc, z0, sizeof(double) * (size_t)n);
    for (double lam = 0, dl = 0.1; !rc && lam < 1;) {
        double lt = fmin(1.0, lam + dl);
        memcpy(nw->z, zacc, sizeof(double) * (size_t)n);
        if (correct(&h, lt) == 0) {
            memcpy(zacc, nw->z, sizeof(double) * (size_t)n);
            lam = lt;
            dl = fmin(2 * dl, 0.5);
        } else if ((dl *= 0.5) < HOM_MIN_STEP) {
            rc = -1;
        }
    }
    if (!rc)
        memcpy(nw->z, zacc, sizeof(double) * (size_t)n);
    free(h.col);
    free(h.pos);
    free(zacc);
    return rc;
}
