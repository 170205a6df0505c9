/*
 * numfmt_bench.c -- nanoseconds per value of dyrt_format_double (the CSV
 * writer's number formatting) against printf's %.17g and a shortest
 * round trip done with printf + strtod (%.15g, %.16g, %.17g until one reads
 * back).  Report only; built and run by bench/numfmt_bench.sh, which also
 * builds it against the formatter of an older commit.
 *   numfmt_bench [N]   (default 2,000,000 values per set)
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "numfmt.h"

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts); /* CPU time: the machine is shared */
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static uint64_t rng = 0x9e3779b97f4a7c15ull;
static uint64_t next_u64(void)
{
    rng ^= rng >> 12;
    rng ^= rng << 25;
    rng ^= rng >> 27;
    return rng * 2685821657736338717ull;
}

static int printf17(char *b, double x) { return snprintf(b, 32, "%.17g", x); }

static int printf_shortest(char *b, double x)
{
    int n = 0;
    for (int p = 15; p <= 17; p++) {
        n = snprintf(b, 32, "%.*g", p, x);
        if (strtod(b, NULL) == x)
            break;
    }
    return n;
}

typedef int (*Fmt)(char *, double);

static double ns_per(Fmt f, const double *v, long n, size_t *bytes)
{
    char buf[64];
    size_t total = 0;
    double best = 1e30;
    for (int rep = 0; rep < 3; rep++) {
        total = 0;
        double t = now();
        for (long i = 0; i < n; i++)
            total += (size_t)f(buf, v[i]);
        t = now() - t;
        if (t < best)
            best = t;
    }
    *bytes = total;
    return 1e9 * best / (double)n;
}

int main(int argc, char **argv)
{
    long n = argc > 1 ? atol(argv[1]) : 2000000;
    double *sim = malloc(sizeof *sim * (size_t)n), *grid = malloc(sizeof *grid * (size_t)n);
    if (!sim || !grid)
        return 1;
    for (long i = 0; i < n; i++) {
        double u = (double)(next_u64() >> 11) * 0x1p-53;
        sim[i] = (u - 0.5) * pow(10.0, (int)(next_u64() % 13) - 6); /* solver values */
        grid[i] = (double)i * 0.002;                                 /* output times */
    }
    static const struct { const char *name; Fmt f; } fmts[] = {
        {"dyrt_format_double", dyrt_format_double}, {"printf %.17g", printf17},
        {"printf shortest (15/16/17 + strtod)", printf_shortest},
    };
    printf("%-38s %14s %12s %14s %12s\n", "formatter", "solver ns/val", "bytes/val", "grid ns/val", "bytes/val");
    for (size_t k = 0; k < sizeof fmts / sizeof fmts[0]; k++) {
        size_t b1, b2;
        double t1 = ns_per(fmts[k].f, sim, n, &b1), t2 = ns_per(fmts[k].f, grid, n, &b2);
        printf("%-38s %14.1f %12.2f %14.1f %12.2f\n", fmts[k].name, t1, (double)b1 / (double)n, t2,
               (double)b2 / (double)n);
    }
    free(sim);
    free(grid);
    return 0;
}
