/*
 * refode.h -- independent references for the simulation tests: a
 * classical Runge-Kutta integrator (RK4, fixed step) for small ODE
 * systems y' = f(t, y), used to integrate a mechanism's minimal-coordinate
 * equations in the test itself, at a step far below what the tolerance
 * asks (the global error of RK4 is O(h^4)).  Header-only.
 */
#ifndef DYADC_REFODE_H
#define DYADC_REFODE_H

#include <string.h>

#define REF_MAXN 8

typedef void (*RefRhs)(double t, const double *y, double *dy, void *ctx);

/* one RK4 step of size h from (t, y) */
static void ref_rk4(RefRhs f, void *ctx, int n, double t, double *y, double h) {
    double k1[REF_MAXN], k2[REF_MAXN], k3[REF_MAXN], k4[REF_MAXN], tmp[REF_MAXN];
    f(t, y, k1, ctx);
    for (int i = 0; i < n; i++) tmp[i] = y[i] + h / 2 * k1[i];
    f(t + h / 2, tmp, k2, ctx);
    for (int i = 0; i < n; i++) tmp[i] = y[i] + h / 2 * k2[i];
    f(t + h / 2, tmp, k3, ctx);
    for (int i = 0; i < n; i++) tmp[i] = y[i] + h * k3[i];
    f(t + h, tmp, k4, ctx);
    for (int i = 0; i < n; i++) y[i] += h / 6 * (k1[i] + 2 * k2[i] + 2 * k3[i] + k4[i]);
}

/* out[k * n + i] = y_i(k * dt), k = 0..nout-1, with `sub` RK4 steps per dt */
static void ref_solve(RefRhs f, void *ctx, int n, const double *y0, double dt, int nout, int sub, double *out) {
    double y[REF_MAXN];
    memcpy(y, y0, sizeof(double) * (size_t)n);
    for (int k = 0; k < nout; k++) {
        memcpy(out + (size_t)k * (size_t)n, y, sizeof(double) * (size_t)n);
        for (int s = 0; s < sub; s++) ref_rk4(f, ctx, n, k * dt + s * (dt / sub), y, dt / sub);
    }
}

#endif
