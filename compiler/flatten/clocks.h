/* clocks.h -- what clocks.c (translation) hands to clock_infer.c
 * (inference); included by those two files only.
 *
 * Nodes of the clock inference are flat variables (node 2*v) and clock
 * parameter slots (node 2*s + 1): one slot per (instance, clock parameter
 * name), so a component and its `extends` bases share a parameter by name.
 * Translation records links (two nodes on one clock, with the span that
 * says why), marks (a node is continuous, or must be on some clock) and the
 * clocks defined by `clk = periodic_clock(...)` relations; clock_infer()
 * unites them with the variables of every equation. */
#ifndef DYADC_FLATTEN_CLOCKS_H
#define DYADC_FLATTEN_CLOCKS_H

#include "flatten_internal.h"

#define CLK_NODE_VAR(v) (2u * (v))
#define CLK_NODE_SLOT(s) (2u * (s) + 1u)

#define CLOCK_DEF_FAILED (-2)

typedef struct ClockSlot {
    Inst *inst;          /* the instance whose component declares the parameter */
    AstNode *param;      /* AST_CLOCK_PARAM */
    int32_t def;         /* index into ClockState.defs when defined here, else -1,
                            or CLOCK_DEF_FAILED (a wrong definition, reported) */
} ClockSlot;

typedef struct ClockLink {
    uint32_t a, b;       /* nodes */
    Span span;           /* the relation or declaration that relates them */
} ClockLink;

typedef enum {
    CM_CONTINUOUS,       /* a continuous-time value (der(), a `Continuous` clock, sampled) */
    CM_CLOCKED           /* needs a clock (previous values, held, sampled into) */
} ClockMarkKind;

typedef struct ClockMark {
    uint32_t node;
    uint8_t kind;        /* ClockMarkKind */
    Span span;
} ClockMark;

typedef struct ClockState {
    HashMap first_slot;  /* Inst* -> 1 + its first slot (slots of one instance are contiguous) */
    Vec(ClockSlot) slots;
    Vec(FlatClock) defs; /* defined clocks (kind, name, period/offset or signal, span) */
    Vec(ClockLink) links;
    Vec(ClockMark) marks;
    HashMap history;     /* (var << 20 | lag) -> 1 + the FV_HISTORY variable */
    /* first-tick relations (`initial x@(clk-1) = <first tick's values>`) */
    HashMap first_tick;  /* 1 + history variable -> its value at the first tick */
    U32Vec first_vars;   /* those history variables, in order */
    HashMap ticked;      /* 1 + clock -> 1 + `ticked@(clk-1)`: 0 at the first tick, then 1 */
    HashMap tick_time;   /* 1 + clock -> 1 + `time@(clk-1)` (zero-crossing SampleTime) */
} ClockState;

/* a variable made after inference, named `name`, owned where `like` is:
 * kind, on no clock yet, no value */
uint32_t clock_new_var(Flattener *F, uint32_t like, const char *name, FlatVarKind kind, Span at);

/* the FV_HISTORY variable of `v@(clk-lag)` (created on first use) */
uint32_t clock_history_var(Flattener *F, uint32_t v, uint32_t lag, Span at);

#endif
