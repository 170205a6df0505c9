/*
 * model.c -- evaluate a model descriptor: its generated functions plus the
 * data tables that replace code (dyad_model.h, "Data instead of code").
 *
 * Bit-identity with generated code: every table entry stands for the exact
 * IEEE operations the compiler would have emitted (negate, one multiply, one
 * add, in that order).  This file is compiled with -ffp-contract=off (see
 * CMakeLists.txt) so that v * scale + offset is never fused into an FMA.
 */
#include <stdio.h>

#include "dyadrt.h"

void dyrt_model_param_defaults(const DyrtModel *m, double *p, const unsigned char *given)
{
    if (m->param_has_const && m->param_const)
        for (int32_t i = 0; i < m->np; i++)
            if (m->param_has_const[i] && !given[i])
                p[i] = m->param_const[i];
    m->param_defaults(p, given);
}

void dyrt_model_start(const DyrtModel *m, double t0, const double *p, double *y, double *yp)
{
    if (m->start_has_const)
        for (int32_t i = 0; i < m->ny; i++) {
            if (m->start_has_const[i] & 1)
                y[i] = m->start_y_const[i];
            if (m->start_has_const[i] & 2)
                yp[i] = m->start_yp_const[i];
        }
    m->start(t0, p, y, yp);
}

double dyrt_model_copy_value(const DyrtModel *m, int32_t k, double t, const double *y,
                         const double *yp, const double *p)
{
    unsigned kind = m->out_copy_kind[k];
    int32_t i = m->out_copy_index[k];
    double v;
    switch (kind & DYRT_SRC_MASK) {
    case DYRT_SRC_Y: v = y[i]; break;
    case DYRT_SRC_YP: v = yp[i]; break;
    case DYRT_SRC_P: v = p[i]; break;
    case DYRT_SRC_TIME: v = t; break;
    default: return m->out_copy_offset[k];
    }
    if (kind & DYRT_OP_NEG)
        v = -v;
    if (kind & DYRT_OP_SCALE)
        v = v * m->out_copy_scale[k];
    if (kind & DYRT_OP_OFFSET)
        v = v + m->out_copy_offset[k];
    return v;
}

void dyrt_model_outputs(const DyrtModel *m, double t, const double *y, const double *yp,
                        const double *p, double *out)
{
    for (int32_t k = 0; k < m->nout_copy; k++)
        out[m->out_copy_dest[k]] = dyrt_model_copy_value(m, k, t, y, yp, p);
    m->outputs(t, y, yp, p, out);
}

void dyrt_model_output_states(const DyrtModel *m, int32_t *out_state)
{
    for (int32_t k = 0; k < m->nout; k++)
        out_state[k] = -1;
    for (int32_t k = 0; k < m->nout_copy; k++)
        if (m->out_copy_kind[k] == DYRT_SRC_Y)
            out_state[m->out_copy_dest[k]] = m->out_copy_index[k];
}

uint64_t dyrt_fnv1a(uint64_t h, const char *s)
{
    for (; *s; s++) {
        h ^= (unsigned char)*s;
        h *= 0x100000001b3ULL;
    }
    h ^= 0xff;                 /* a separator: ("ab","c") differs from ("a","bc") */
    return h * 0x100000001b3ULL;
}

void dyrt_model_guid(const DyrtModel *m, char *buf)
{
    uint64_t h = dyrt_fnv1a(0xcbf29ce484222325ULL, m->name ? m->name : "");
    for (int32_t i = 0; i < m->np; i++)
        h = dyrt_fnv1a(h, m->param_names[i]);
    for (int32_t i = 0; i < m->nout; i++)
        h = dyrt_fnv1a(h, m->out_names[i]);
    for (int32_t i = 0; i < m->ny; i++)
        h = dyrt_fnv1a(h, m->y_names ? m->y_names[i] : "");
    uint64_t h2 = dyrt_fnv1a(h, "dyadc");
    snprintf(buf, DYRT_GUID_LEN, "{%08x-%04x-%04x-%04x-%012llx}", (unsigned)(h >> 32),
             (unsigned)(h >> 16) & 0xffff, (unsigned)h & 0xffff, (unsigned)(h2 >> 48),
             (unsigned long long)(h2 & 0xffffffffffffULL));
}

void dyrt_model_copy_entries(const DyrtModel *m, int32_t *entry_of)
{
    for (int32_t k = 0; k < m->nout; k++)
        entry_of[k] = -1;
    for (int32_t k = 0; k < m->nout_copy; k++)
        entry_of[m->out_copy_dest[k]] = k;
}
