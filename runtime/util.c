/*
 * util.c -- small helpers shared by the runtime: diagnostics on stderr
 * (or to a per-thread hook: the FMI logger),
 * the wall clock, strict number parsing, name lookup with a "did you mean"
 * suggestion (Levenshtein distance), a small dense LU (partition loops,
 * initialization blocks), a sanity check of the model descriptor so that a
 * malformed one is an internal error, not a crash, and the SIGINT/SIGTERM
 * catcher of dyrt_simulate.
 */
#include <ctype.h>
#include <math.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "dyrt_internal.h"

/* Where messages go instead of stderr, per thread (dyrt_set_message_hook). */
static _Thread_local DyrtMessageHook hook_fn;
static _Thread_local void *hook_user;

void dyrt_set_message_hook(DyrtMessageHook fn, void *user)
{
    hook_fn = fn;
    hook_user = user;
}

static void vreport(const char *kind, const char *fmt, va_list ap)
{
    if (hook_fn) {
        char msg[1024];
        vsnprintf(msg, sizeof msg, fmt, ap);
        hook_fn(hook_user, kind, msg);
        return;
    }
    fprintf(stderr, "%s: ", kind);
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    fflush(stderr);
}

void dyrt_error(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vreport("error", fmt, ap);
    va_end(ap);
}

void dyrt_warning(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vreport("warning", fmt, ap);
    va_end(ap);
}

void dyrt_note(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vreport("note", fmt, ap);
    va_end(ap);
}

double dyrt_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* The whole string must be a finite number ("true"/"false" mean 1/0). */
int dyrt_parse_double(const char *s, double *v)
{
    if (strcmp(s, "true") == 0 || strcmp(s, "false") == 0) {
        *v = s[0] == 't' ? 1.0 : 0.0;
        return 0;
    }
    char *end = NULL;
    double x = strtod(s, &end);
    if (end == s || *end != '\0' || !isfinite(x))
        return -1;
    *v = x;
    return 0;
}

/* Levenshtein distance with one rolling row; names are short. */
static size_t edit_distance(const char *a, const char *b)
{
    size_t la = strlen(a), lb = strlen(b);
    if (lb > 255)
        return lb;
    size_t row[256];
    for (size_t j = 0; j <= lb; j++)
        row[j] = j;
    for (size_t i = 1; i <= la; i++) {
        size_t diag = row[0];
        row[0] = i;
        for (size_t j = 1; j <= lb; j++) {
            size_t up = row[j];
            size_t best = diag + (a[i - 1] != b[j - 1]);
            if (up + 1 < best)
                best = up + 1;
            if (row[j - 1] + 1 < best)
                best = row[j - 1] + 1;
            row[j] = best;
            diag = up;
        }
    }
    return row[lb];
}

/* The closest of names[0..n) to `name`, or NULL when none is close (more
 * than a third of the characters, or all of them, would have to change). */
const char *dyrt_closest(const char *name, const char *const *names, int n)
{
    const char *best = NULL;
    size_t bestd = (size_t)-1;
    for (int i = 0; i < n; i++) {
        size_t d = edit_distance(name, names[i]);
        if (d < bestd) {
            bestd = d;
            best = names[i];
        }
    }
    size_t len = strlen(name);
    return bestd <= len / 3 + 1 && bestd < len ? best : NULL;
}

int dyrt_find(const char *name, const char *const *names, int n)
{
    for (int i = 0; i < n; i++)
        if (strcmp(name, names[i]) == 0)
            return i;
    return -1;
}

void *dyrt_calloc(size_t n, size_t size)
{
    void *p = calloc(n ? n : 1, size);
    if (!p)
        dyrt_error("out of memory");
    return p;
}

/* LU with partial pivoting of the column-major n x n matrix a, in place;
 * 0 when singular (a zero or non-finite pivot).  O(n^3). */
int dyrt_lu(double *a, int32_t n, int32_t *piv)
{
    for (int32_t j = 0; j < n; j++) {
        int32_t p = j;
        for (int32_t i = j + 1; i < n; i++)
            if (fabs(a[j * n + i]) > fabs(a[j * n + p]))
                p = i;
        piv[j] = p;
        if (a[j * n + p] == 0 || !isfinite(a[j * n + p]))
            return 0;
        for (int32_t k = 0; k < n; k++) {
            double t = a[k * n + j];
            a[k * n + j] = a[k * n + p];
            a[k * n + p] = t;
        }
        for (int32_t i = j + 1; i < n; i++) {
            double f = a[j * n + i] /= a[j * n + j];
            for (int32_t k = j + 1; k < n; k++)
                a[k * n + i] -= f * a[k * n + j];
        }
    }
    return 1;
}

/* b = A^-1 b from dyrt_lu's factors: P A = L U, the interchanges applied
 * to whole rows (L's columns too), so every interchange is applied to b
 * first, then the substitutions (as LAPACK's getrs). */
void dyrt_lu_solve(const double *a, int32_t n, const int32_t *piv, double *b)
{
    for (int32_t j = 0; j < n; j++) {
        double t = b[j];
        b[j] = b[piv[j]];
        b[piv[j]] = t;
    }
    for (int32_t j = 0; j < n; j++) {
        for (int32_t i = j + 1; i < n; i++)
            b[i] -= a[j * n + i] * b[j];
    }
    for (int32_t j = n - 1; j >= 0; j--) {
        b[j] /= a[j * n + j];
        for (int32_t i = 0; i < j; i++)
            b[i] -= a[j * n + i] * b[j];
    }
}

/* A CSC pattern: colptr[0] = 0, non-decreasing, colptr[n] = nnz, rows in
 * range.  Returns 0 when valid. */
static int bad_csc(int32_t n, int32_t nnz, const int32_t *colptr,
                   const int32_t *rowidx)
{
    if (nnz < 0 || (n > 0 && (!colptr || (nnz > 0 && !rowidx))))
        return 1;
    if (n == 0)
        return 0;
    if (colptr[0] != 0 || colptr[n] != nnz)
        return 1;
    for (int32_t j = 0; j < n; j++)
        if (colptr[j + 1] < colptr[j])
            return 1;
    for (int32_t k = 0; k < nnz; k++)
        if (rowidx[k] < 0 || rowidx[k] >= n)
            return 1;
    return 0;
}

/* initial_row[i], initial_z[i] are -1 or init indices (ABI 2). */
static int bad_initial_tables(const DyrtModel *m)
{
    for (int32_t i = 0; m->initial_row && m->initial_z && i < m->ny; i++)
        if (m->initial_row[i] < -1 || m->initial_row[i] >= m->init_n ||
            m->initial_z[i] < -1 || m->initial_z[i] >= m->init_n)
            return 1;
    return 0;
}

/* out_alias[k] refers to an earlier column (ABI 6). */
static int bad_alias_table(const DyrtModel *m)
{
    for (int32_t k = 0; m->out_alias && k < m->nout; k++) {
        int32_t a = m->out_alias[k] < 0 ? -m->out_alias[k] : m->out_alias[k];
        if (a > k)
            return 1;
    }
    return 0;
}

/* out_copy_*: destinations are output columns, slot indices in range (ABI 3). */
static int bad_copy_table(const DyrtModel *m)
{
    if (m->nout_copy < 0 || m->nout_copy > m->nout)
        return 1;
    if (m->nout_copy > 0 && (!m->out_copy_dest || !m->out_copy_kind || !m->out_copy_index ||
                             !m->out_copy_scale || !m->out_copy_offset))
        return 1;
    for (int32_t k = 0; k < m->nout_copy; k++) {
        int32_t i = m->out_copy_index[k];
        unsigned src = m->out_copy_kind[k] & DYRT_SRC_MASK;
        int32_t n = src == DYRT_SRC_P ? m->np : src <= DYRT_SRC_YP ? m->ny : 1;
        if (m->out_copy_dest[k] < 0 || m->out_copy_dest[k] >= m->nout || src > DYRT_SRC_CONST ||
            (src <= DYRT_SRC_P && (i < 0 || i >= n)))
            return 1;
    }
    return (m->param_has_const && !m->param_const) ||
           (m->start_has_const && (!m->start_y_const || !m->start_yp_const));
}

/* The init BLT: ptr from 0 to init_n, non-decreasing; rows and cols in
 * range (initblock.c indexes with them). */
static int bad_init_blocks(const DyrtModel *m)
{
    int nb = m->init_nblocks;
    if (nb == 0)
        return 0;
    if (nb < 0 || m->init_n == 0 || !m->init_block_ptr || !m->init_block_rows || !m->init_block_cols)
        return 1;
    if (m->init_block_ptr[0] != 0 || m->init_block_ptr[nb] != m->init_n)
        return 1;
    for (int b = 0; b < nb; b++)
        if (m->init_block_ptr[b + 1] <= m->init_block_ptr[b])
            return 1;
    for (int i = 0; i < m->init_n; i++)
        if (m->init_block_rows[i] < 0 || m->init_block_rows[i] >= m->init_n ||
            m->init_block_cols[i] < 0 || m->init_block_cols[i] >= m->init_n)
            return 1;
    return 0;
}

/* The ME blocks: levels and blocks non-empty and ascending, every row and
 * column in range (me.c indexes with them). */
static int bad_ode_blocks(const DyrtModel *m)
{
    int nb = m->ode_nblocks, nl = m->ode_nlevels;
    if (nb == 0)
        return 0;
    if (nb < 0 || nl <= 0 || !m->ode_level_ptr || !m->ode_ptr || !m->ode_rows || !m->ode_cols || !m->ode_flags)
        return 1;
    if (m->ode_level_ptr[0] != 0 || m->ode_level_ptr[nl] != nb || m->ode_ptr[0] != 0 || m->ode_ptr[nb] != m->ny)
        return 1;
    for (int l = 0; l < nl; l++)
        if (m->ode_level_ptr[l + 1] <= m->ode_level_ptr[l])
            return 1;
    for (int b = 0; b < nb; b++)
        if (m->ode_ptr[b + 1] <= m->ode_ptr[b])
            return 1;
    for (int i = 0; i < m->ny; i++)
        if (m->ode_rows[i] < 0 || m->ode_rows[i] >= m->ny || m->ode_cols[i] < 0 || m->ode_cols[i] >= m->ny)
            return 1;
    return 0;
}

static const char *model_problem(const DyrtModel *m)
{
    if (m->abi_version != DYRT_ABI_VERSION)
        return "ABI version mismatch (model and runtime built by different compilers)";
    if (m->ny < 0 || m->np < 0 || m->nout < 0 || m->nz < 0 || m->nassert < 0 || m->init_n < 0)
        return "negative size";
    if ((m->np > 0 && (!m->param_names || !m->param_flags)) || (m->nout > 0 && !m->out_names))
        return "missing name table";
    if (!m->param_defaults || !m->outputs || (m->ny > 0 && (!m->residual || !m->start)))
        return "missing function pointer";
    if ((m->nz > 0 && !m->zero_crossings) || (m->nassert > 0 && !m->check_asserts))
        return "missing zero-crossing or assertion function";
    if (m->ncoef_check < 0 || (m->ncoef_check > 0 && !m->check_coefs))
        return "missing coefficient check function";
    if (bad_csc(m->ny, m->jac_nnz, m->jac_colptr, m->jac_rowidx))
        return "malformed Jacobian pattern";
    if (m->init_n > 0 && (!m->init_residual || !m->init_jacobian || !m->init_guess || !m->init_finish))
        return "missing initialization function";
    if (bad_csc(m->init_n, m->init_nnz, m->init_colptr, m->init_rowidx))
        return "malformed initialization Jacobian pattern";
    if (m->init_ncheck < 0 || (m->init_ncheck > 0 && m->init_n == 0))
        return "initialization checks without an initialization system";
    if (m->nmodes != 0 && m->nmodes != m->nz)
        return "nmodes is neither 0 nor nz";
    if (bad_initial_tables(m))
        return "initial_row/initial_z out of range";
    if (bad_copy_table(m))
        return "malformed output copy or constant tables";
    if (bad_alias_table(m))
        return "out_alias refers to a later column";
    if (bad_init_blocks(m))
        return "malformed initialization blocks";
    if (bad_ode_blocks(m))
        return "malformed Model Exchange blocks";
    return NULL;
}

int dyrt_check_model(const DyrtModel *m)
{
    const char *why = m ? model_problem(m) : "no model";
    if (!why)
        return DYRT_EXIT_OK;
    dyrt_error("internal: bad model descriptor '%s': %s",
               m && m->name ? m->name : "?", why);
    return DYRT_EXIT_INTERNAL;
}

/* Where the location " (file:line)" begins in a name from the compiler
 * ("v > 0 (friction.dyad:8)"), else its end. */
size_t dyrt_location_at(const char *name)
{
    size_t len = strlen(name), i = len;
    if (len < 5 || name[len - 1] != ')')
        return len;
    for (i = len - 1; i > 0 && isdigit((unsigned char)name[i - 1]); i--)
        ;
    if (i == len - 1 || i < 2 || name[i - 1] != ':')
        return len;
    const char *open = NULL;
    for (const char *p = name; (p = strstr(p, " (")) && p < name + i; p++)
        open = p;
    return open ? (size_t)(open - name) : len;
}

/* ---------- SIGINT and SIGTERM during dyrt_simulate ---------- */

static volatile sig_atomic_t caught; /* the signal caught, 0: none */
static struct sigaction old_int, old_term;
static int catching;

static void on_signal(int sig) { caught = sig; }

/* Catch sig unless it is ignored (a background job's SIGINT stays
 * ignored, as shells expect); old: the disposition to put back. */
static void catch_one(int sig, struct sigaction *old)
{
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_signal;
    sa.sa_flags = SA_RESETHAND;
    sigemptyset(&sa.sa_mask);
    if (sigaction(sig, NULL, old) == 0 && old->sa_handler != SIG_IGN)
        sigaction(sig, &sa, NULL);
}

/* From now on SIGINT and SIGTERM only set a flag the integration loop
 * polls (dyrt_interrupted); SA_RESETHAND: a second one ends the process
 * as usual.  dyrt_interrupts_release puts the previous handlers back. */
void dyrt_interrupts_catch(void)
{
    caught = 0;
    catch_one(SIGINT, &old_int);
    catch_one(SIGTERM, &old_term);
    catching = 1;
}

void dyrt_interrupts_release(void)
{
    if (!catching)
        return;
    sigaction(SIGINT, &old_int, NULL);
    sigaction(SIGTERM, &old_term, NULL);
    catching = 0;
}

int dyrt_interrupted(void) { return caught; }
