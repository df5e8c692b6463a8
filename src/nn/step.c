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
 * lt_step_end_read is lt_step_end that also reads scalar results of the
 * step (the loss) as doubles: the one call replaces keep(detach(loss)),
 * step_end, item and release.
 *
 * Steps may nest. Each lt_step_end must close the scope its lt_step_begin
 * opened: a scope opened inside the step and still open is an
 * LT_ERR_STATE error (and nothing is closed); a step whose scope was closed
 * with lt_scope_end is ended with an LT_ERR_STATE error (no barrier).
 */
#include "lazy/lazy.h"

#include <stdlib.h>

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

/* Each of scalars[0..n) is a live tensor of one element. */
static lt_status check_scalars(const char *op, lt_tensor *const *scalars, const double *values, int n)
{
    if (n < 0)
        return lt_error(LT_ERR_ARGUMENT, "%s: n is %d, expected >= 0", op, n);
    if (n > 0 && (!scalars || !values))
        return lt_error(LT_ERR_NULL, "%s: %s is NULL with n = %d", op, scalars ? "values" : "scalars", n);
    for (int i = 0; i < n; i++) {
        if (lt_check_tensor(op, scalars[i], i) != LT_OK)
            return lt_last_status();
        if (lt_tensor_numel(scalars[i]) != 1) {
            char sb[160];
            return lt_error(LT_ERR_SHAPE, "%s: tensor %d has shape %s (%lld elements), expected one element",
                            op, i, lt_shape_str(lt_tensor_shape(scalars[i]), lt_tensor_ndim(scalars[i]), sb,
                                                sizeof sb), (long long)lt_tensor_numel(scalars[i]));
        }
    }
    return LT_OK;
}

lt_status lt_step_end_read(lt_tensor *const *scalars, double *values, int n)
{
    const char *op = "step_end_read";
    if (check_scalars(op, scalars, values, n) != LT_OK)
        return lt_last_status();
    /* Detached aliases outlive the step's scope, so the step's program
     * computes them; once it ran they hold data and reading them syncs
     * nothing more. */
    lt_tensor **kept = calloc((size_t)n + 1, sizeof *kept);
    double *read = calloc((size_t)n + 1, sizeof *read);
    lt_status st = kept && read ? LT_OK : lt_error(LT_ERR_MEMORY, "%s: out of memory", op);
    for (int i = 0; i < n && st == LT_OK; i++)
        if (!(kept[i] = lt_retain(lt_detach(scalars[i]))))
            st = lt_last_status();
    if (st == LT_OK)
        st = step_end(op, true);
    for (int i = 0; i < n && st == LT_OK; i++)
        st = lt_item(kept[i], &read[i]);
    for (int i = 0; i < n && st == LT_OK; i++)
        values[i] = read[i];
    for (int i = 0; i < n && kept; i++)
        lt_release(kept[i]);
    free(kept);
    free(read);
    return st;
}
