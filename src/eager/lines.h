/*
 * lines.h - private helpers of the kernels that work line by line along one
 * dim of a contiguous tensor (scan.c, select.c, quantile.c): the lines'
 * geometry, and (value, index) pairs ordered with NaN last and ties by
 * index.
 */
#ifndef LT_EAGER_LINES_H
#define LT_EAGER_LINES_H

#include "eager/eager.h"

#include <math.h>
#include <stdbool.h>

/* outer blocks of len elements `stride` apart (a line), stride lines each. */
typedef struct line_walk {
    int64_t outer, len, stride;
} line_walk;

/* The lines of contiguous t along dim d (0-d: one line of 1). */
static inline line_walk lines_of(const lt_tensor *t, int d)
{
    line_walk w = {1, 1, 1};
    for (int k = 0; k < t->ndim; k++) {
        if (k < d)
            w.outer *= t->shape[k];
        else if (k == d)
            w.len = t->shape[k];
        else
            w.stride *= t->shape[k];
    }
    return w;
}

/* A floating value and its index along the line. */
typedef struct pair_f64 {
    double v;
    int64_t i;
} pair_f64;

/* qsort order of pair_f64: ascending, NaN last, equal values by index. */
static inline int cmp_pair_f64(const void *pa, const void *pb)
{
    const pair_f64 *a = pa, *b = pb;
    bool na = isnan(a->v), nb = isnan(b->v);
    if (na != nb)
        return na ? 1 : -1;
    if (!na && a->v != b->v)
        return a->v < b->v ? -1 : 1;
    return (a->i > b->i) - (a->i < b->i);
}

#endif
