/*
 * move.c - moving a tensor between devices in place (lt_to_, lt_module_to):
 * the handle keeps its identity and receives the payload of a copy made on
 * the other device. A lazy payload carries the tensor's registry links, so
 * the registry is fixed up around the exchange. Lazy views of a tensor
 * that moves (an autograd tape still holding the transposed weight of a
 * linear layer, say) are first made ordinary tensors holding the values
 * they have, as a cpu view keeps the old storage.
 */
#include "lazy/lazy.h"

#include <stdlib.h>

static lt_lazy *L(const lt_tensor *t) { return (lt_lazy *)t->lazy; }

static void detach_lazy(lt_tensor *t)
{
    if (t->lazy)
        lt_lazy_registry_unlink(t);
}

/* Puts a handle that now carries a lazy payload back into the registry at
 * its own id, forgetting the leaf memoized under the previous owner's id. */
static void attach_lazy(lt_tensor *t)
{
    if (!t->lazy)
        return;
    L(t)->leaf_generation = 0;
    lt_lazy_registry_insert(t);
}

/* Makes the view t an ordinary tensor holding its current value: its data
 * when it has current data, else the value derived from its base now. */
static lt_status make_independent(lt_tensor *t, lt_tensor *base)
{
    lt_lazy *z = L(t);
    bool current_data = t->storage && !z->pending && z->base_version == L(base)->version;
    lt_value v;
    if (!current_data && lt_lazy_value_of(t, &v) != LT_OK)
        return lt_last_status();
    free(z->chain);
    z->chain = NULL;
    z->nchain = 0;
    z->base = NULL;
    /* its own value is contiguous, like every non-view lazy tensor's */
    lt_contiguous_strides(t->shape, t->ndim, t->strides);
    t->offset = 0;
    lt_tensor_drop(base);
    return LT_OK;
}

lt_status lt_lazy_detach_views(lt_tensor *base)
{
    if (lt_lazy_enter("to_") != LT_OK)
        return lt_last_status();
    for (lt_tensor *t = lt_lazy_registry_first(); t; t = lt_lazy_registry_next(t))
        if (L(t)->base == base && make_independent(t, base) != LT_OK)
            return lt_last_status();
    return LT_OK;
}

lt_status lt_lazy_swap_payload(lt_tensor *to, lt_tensor *from)
{
    if (lt_lazy_enter("to_") != LT_OK)
        return lt_last_status();
    /* a payload in flight is waiting for its data: let it arrive first */
    bool in_flight = (to->lazy && L(to)->inflight) || (from->lazy && L(from)->inflight);
    if (in_flight && lt_lazy_wait() != LT_OK)
        return lt_last_status();
    detach_lazy(to);
    detach_lazy(from);
    lt_tensor_swap_payload(to, from);
    attach_lazy(to);
    attach_lazy(from);
    return LT_OK;
}
