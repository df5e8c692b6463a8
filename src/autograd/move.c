/*
 * move.c - moving tensors to another device in place (lt_to_ and, for a
 * whole model, lt_module_to through lt_move_tensors).
 *
 * Like PyTorch's module.to(), the tensors keep their handles: every pointer
 * to a parameter (an optimizer's, a user module's own fields) still names
 * it after the move, now on the new device. Each tensor is copied to the
 * target device first (all copies, or none if one fails), then each handle
 * exchanges its payload with its copy's (lt_tensor_swap_payload; the lazy
 * layer keeps its registry in order) and the copy, now holding the old
 * data, is released. A gradient moves with its tensor the same way.
 */
#include "autograd/autograd.h"

#include <stdlib.h>

/* A tensor can move in place unless it is a lazy view (its value is
 * derived from its base). Lazy views of it keep the value they have now. */
static lt_status check_movable(const char *op, lt_tensor *t, int index)
{
    lt_lazy *z = t->lazy;
    if (!z)
        return LT_OK;
    if (lt_lazy_enter(op) != LT_OK || (z->inflight && lt_lazy_wait() != LT_OK))
        return lt_last_status();
    if (z->base)
        return lt_error(LT_ERR_STATE, "%s: tensor %d is a view of another lazy tensor and cannot move by "
                        "itself (move its base, or lt_to a copy)", op, index);
    if (lt_lazy_detach_views(t) != LT_OK)
        return lt_last_status();
    if (atomic_load(&t->holds) > 1) /* not reached: views and executions no longer hold it */
        return lt_error(LT_ERR_STATE, "%s: tensor %d is still held by the lazy device", op, index);
    return LT_OK;
}

typedef struct move_plan {
    lt_tensor **handles, **copies;
    int count;
} move_plan;

static bool planned(const move_plan *p, const lt_tensor *t)
{
    for (int i = 0; i < p->count; i++)
        if (p->handles[i] == t)
            return true;
    return false;
}

/* Adds t (and its gradient) to the plan with a copy on dev, unless it is
 * there already. */
static lt_status plan_one(const char *op, move_plan *p, lt_tensor *t, int index, lt_device dev)
{
    if (lt_check_tensor(op, t, index) != LT_OK)
        return lt_last_status();
    if (lt_device_equal(t->device, dev) || planned(p, t))
        return LT_OK;
    if (check_movable(op, t, index) != LT_OK)
        return lt_last_status();
    lt_scope_begin();
    lt_tensor *copy = lt_retain(lt_to(t, dev));
    lt_scope_end();
    if (!copy)
        return lt_last_status();
    p->handles[p->count] = t;
    p->copies[p->count++] = copy;
    lt_ag *ag = t->autograd;
    return ag && ag->grad ? plan_one(op, p, ag->grad, index, dev) : LT_OK;
}

static void release_copies(move_plan *p)
{
    for (int i = 0; i < p->count; i++)
        lt_release(p->copies[i]);
}

lt_status lt_move_tensors(const char *op, lt_tensor *const *ts, int n, lt_device dev)
{
    if (lt_device_check_available(op, dev) != LT_OK)
        return lt_last_status();
    if (n < 0 || (n > 0 && !ts))
        return lt_error(n < 0 ? LT_ERR_ARGUMENT : LT_ERR_NULL, "%s: %d tensors at %p", op, n, (void *)ts);
    /* each tensor may bring its gradient */
    move_plan p = {calloc((size_t)n * 2 + 1, sizeof *p.handles), calloc((size_t)n * 2 + 1, sizeof *p.copies), 0};
    lt_status st = p.handles && p.copies ? LT_OK : lt_error(LT_ERR_MEMORY, "%s: out of memory", op);
    lt_no_grad_begin();
    for (int i = 0; i < n && st == LT_OK; i++)
        st = plan_one(op, &p, ts[i], i, dev);
    lt_no_grad_end();
    for (int i = 0; i < p.count && st == LT_OK; i++) {
        lt_tensor *t = p.handles[i], *c = p.copies[i];
        if (t->lazy || c->lazy)
            st = lt_lazy_swap_payload(t, c); /* waits were done by check_movable: cannot fail here */
        else
            lt_tensor_swap_payload(t, c);
    }
    release_copies(&p);
    free(p.handles);
    free(p.copies);
    return st;
}

lt_tensor *lt_to_(lt_tensor *t, lt_device dev)
{
    return lt_move_tensors("to_", &t, 1, dev) == LT_OK ? t : NULL;
}
