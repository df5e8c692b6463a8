/*
 * registry.c - the lazy device's live-tensor registry (the paper's
 * DeviceContextArena): every lazy tensor from creation to death, in a
 * doubly linked list in id order, so that a barrier meets its roots in a
 * deterministic order. The links live in each tensor's lt_lazy.
 */
#include "lazy/lazy.h"

static lt_tensor *registry_head, *registry_tail;

static lt_lazy *L(const lt_tensor *t) { return (lt_lazy *)t->lazy; }

/* The registry as this thread sees it: empty unless it owns the device
 * (taking it when nobody does). */
lt_tensor *lt_lazy_registry_first(void) { return lt_lazy_try_own() ? registry_head : NULL; }
lt_tensor *lt_lazy_registry_next(lt_tensor *t) { return L(t)->next; }

void lt_lazy_registry_unlink(lt_tensor *t)
{
    lt_lazy *z = L(t);
    if (z->prev)
        L(z->prev)->next = z->next;
    else
        registry_head = z->next;
    if (z->next)
        L(z->next)->prev = z->prev;
    else
        registry_tail = z->prev;
    z->prev = z->next = NULL;
}

/* New tensors have the newest id: the walk back stops at once for them. */
void lt_lazy_registry_insert(lt_tensor *t)
{
    lt_tensor *after = registry_tail; /* the last tensor with a smaller id */
    while (after && after->id > t->id)
        after = L(after)->prev;
    lt_lazy *z = L(t);
    z->prev = after;
    z->next = after ? L(after)->next : registry_head;
    if (z->next)
        L(z->next)->prev = t;
    else
        registry_tail = t;
    if (after)
        L(after)->next = t;
    else
        registry_head = t;
}

