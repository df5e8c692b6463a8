/*
 * step.c - the training step scope, lt_step_begin / lt_step_end.
 *
 * lt_step_begin opens a scope. lt_step_end closes it first, so the step's
 * activations, tape and temporaries die before the barrier, and then, if
 * any lazy tensor is alive, runs the step barrier (lt_mark_step): the
 * program computes only what outlives the step (parameters, gradients still
 * held, optimizer state, results kept with lt_keep). On the cpu device it
 * only closes the scope.
 *
 * Steps may nest. Each lt_step_end must close the scope its lt_step_begin
 * opened: a scope opened inside the step and still open is an
 * LT_ERR_STATE error (and nothing is closed); a step whose scope was closed
 * with lt_scope_end is ended with an LT_ERR_STATE error (no barrier).
 */
#include "lazy/lazy.h"

/* Scope depth right after each open lt_step_begin (innermost last). */
#define STEP_MAX_NEST 64
static _Thread_local int step_depths[STEP_MAX_NEST];
static _Thread_local int step_count;

void lt_step_begin(void)
{
    lt_scope_begin();
    if (step_count < STEP_MAX_NEST)
        step_depths[step_count] = lt_scope_depth();
    step_count++;
}

/* Closes the step's scope, then runs the step barrier (waiting for its
 * execution or not). */
static lt_status step_end(const char *op, bool wait)
{
    if (step_count == 0)
        return lt_error(LT_ERR_STATE, "%s: no step is open (call lt_step_begin first)", op);
    if (step_count <= STEP_MAX_NEST && lt_scope_depth() != step_depths[step_count - 1]) {
        int extra = lt_scope_depth() - step_depths[step_count - 1];
        if (extra > 0)
            return lt_error(LT_ERR_STATE, "%s: %d scope(s) opened inside the step are still open; "
                            "close them with lt_scope_end first", op, extra);
        step_count--; /* the step is over: its scope is gone */
        return lt_error(LT_ERR_STATE, "%s: the step's scope was already closed by lt_scope_end", op);
    }
    step_count--;
    lt_status status = lt_scope_end();
    if (status != LT_OK)
        return status;
    if (lt_lazy_device_available && lt_lazy_registry_first() != NULL)
        return wait ? lt_mark_step() : lt_barrier(false);
    return LT_OK;
}

lt_status lt_step_end(void) { return step_end("step_end", true); }

lt_status lt_step_end_async(void) { return step_end("step_end_async", false); }
