/*
 * compose.h - the end of a composite op: an op written as a composition of
 * public calls opens a scope (lt_scope_begin) for its intermediates and
 * closes it here, handing its result to the caller's scope.
 */
#ifndef LT_API_COMPOSE_H
#define LT_API_COMPOSE_H

#include "lazy/lazy.h"

/* Ends the composite's scope and returns r with one reference for the
 * caller (NULL if r is NULL: the error of the failing step stays set). */
static inline lt_tensor *lt_scope_return(lt_tensor *r)
{
    lt_tensor *kept = r ? lt_keep(r) : NULL;
    lt_scope_end();
    return kept;
}

/* As lt_scope_return, also handing *extra (when given and r is not NULL)
 * to the caller; *extra becomes NULL when r is NULL. */
static inline lt_tensor *lt_scope_return2(lt_tensor *r, lt_tensor **extra)
{
    if (extra)
        *extra = r && *extra ? lt_keep(*extra) : NULL;
    return lt_scope_return(r);
}

/* As lt_scope_return for a composite that named itself the origin of its
 * lazy nodes (lt_origin_enter): the caller's origin is restored first. */
static inline lt_tensor *lt_scope_return_from(lt_tensor *r, lt_origin caller)
{
    lt_origin_restore(caller);
    return lt_scope_return(r);
}

#endif
