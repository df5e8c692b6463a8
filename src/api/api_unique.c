/*
 * api_unique.c - unique elements and slices: unique (torch.unique),
 * unique along a dim (torch.unique(dim=)), and the consecutive forms
 * (torch.unique_consecutive).
 *
 * Every form works on rows: the flat tensor as [n, 1], or the slices along
 * dim as [n, m] (dim moved first, the rest flattened). Rows are put in
 * lexicographic order by stable sorts of their columns, from the last to
 * the first (the consecutive forms keep the given order); a row starts a
 * new group where it differs from the one before (NaN differs from
 * everything, as in torch); the starts are selected (a sync on the lazy
 * device: the result size depends on the data) and a running count of the
 * starts numbers each row's group for the inverse and the counts.
 * Intermediates live in a scope of their own.
 */
#include "api/api.h"
#include "api/compose.h"

#include <stdlib.h>

/* The outputs a caller asked for (NULL: not wanted). */
typedef struct {
    lt_tensor **inverse;
    lt_tensor **counts;
} unique_outs;

/* The row order that sorts rows [n, m] lexicographically: stable sorts by
 * each column, the last first, so that earlier columns decide. */
static lt_tensor *lexicographic_order(lt_tensor *rows)
{
    int64_t n = rows->shape[0];
    lt_tensor *order = lt_arange(0, (double)n, 1, LT_I64, rows->device);
    for (int64_t col = rows->shape[1] - 1; col >= 0 && order; col--) {
        lt_tensor *perm = NULL;
        lt_tensor *key = lt_index_select(lt_select(rows, 1, col), 0, order);
        if (!key || !lt_sort(key, 0, false, &perm))
            return NULL;
        order = lt_index_select(order, 0, perm);
    }
    return order;
}

/* Where each row of s [n > 0, m] differs from the one before (the first
 * row always starts a group). */
static lt_tensor *group_starts(lt_tensor *s)
{
    int64_t n = s->shape[0];
    int cols = 1;
    lt_tensor *differs = lt_any(lt_ne(lt_narrow(s, 0, 1, n - 1), lt_narrow(s, 0, 0, n - 1)), &cols, 1, false);
    lt_tensor *first = lt_ones((const int64_t[]){1}, 1, LT_BOOL, s->device);
    return differs ? lt_cat((lt_tensor *[]){first, differs}, 2, 0) : NULL;
}

/* The distinct rows of rows [n > 0, m] in lexicographic order (sort) or
 * one per run of equal rows (consecutive). *inverse gets each row's group
 * (i64 [n]) and *counts each group's size (i64 [k]) when asked for. */
static lt_tensor *unique_rows(lt_tensor *rows, bool sort, lt_tensor **inverse, lt_tensor **counts)
{
    int64_t n = rows->shape[0];
    lt_tensor *order = sort ? lexicographic_order(rows) : NULL;
    lt_tensor *s = sort ? (order ? lt_index_select(rows, 0, order) : NULL) : rows;
    lt_tensor *starts = s ? group_starts(s) : NULL;
    lt_tensor *first_rows = starts ? lt_nonzero(starts) : NULL; /* a sync on the lazy device */
    lt_tensor *values = first_rows ? lt_index_select(s, 0, lt_select(first_rows, 1, 0)) : NULL;
    lt_tensor *group = values ? lt_sub_iscalar(lt_cumsum_dtype(starts, 0, LT_I64), 1) : NULL;
    if (!group)
        return NULL;
    if (inverse)
        *inverse = sort ? lt_scatter(lt_zeros(&n, 1, LT_I64, rows->device), 0, order, group) : group;
    if (counts) {
        int64_t k = values->shape[0];
        *counts = lt_scatter_add(lt_zeros(&k, 1, LT_I64, rows->device), 0, group,
                                 lt_ones(&n, 1, LT_I64, rows->device));
    }
    return values;
}

/* The result of zero rows: the rows themselves and empty inverse/counts. */
static lt_tensor *no_rows(lt_tensor *rows, const int64_t *inverse_shape, int inverse_ndim, lt_tensor **inverse,
                          lt_tensor **counts)
{
    int64_t zero = 0;
    if (inverse)
        *inverse = lt_zeros(inverse_shape, inverse_ndim, LT_I64, rows->device);
    if (counts)
        *counts = lt_zeros(&zero, 1, LT_I64, rows->device);
    return rows;
}

/* Hands the result and the asked-for outputs to the caller's scope (all or
 * none) and ends the composite's scope. */
static lt_tensor *publish(lt_tensor *r, lt_tensor *inv, lt_tensor *cnt, unique_outs outs)
{
    bool ok = r && (!outs.inverse || inv) && (!outs.counts || cnt);
    lt_tensor *kept = ok ? lt_keep(lt_detach(r)) : NULL;
    if (ok && outs.inverse)
        *outs.inverse = lt_keep(inv);
    if (ok && outs.counts)
        *outs.counts = lt_keep(cnt);
    lt_scope_end();
    return kept;
}

static lt_status begin(const char *op, lt_tensor *t, unique_outs outs)
{
    if (outs.inverse)
        *outs.inverse = NULL;
    if (outs.counts)
        *outs.counts = NULL;
    return lt_check_tensor(op, t, 0);
}

/* unique / unique_consecutive of the flattened t; the inverse has t's shape. */
static lt_tensor *unique_flat(const char *op, lt_tensor *t, bool sort, unique_outs outs)
{
    if (begin(op, t, outs) != LT_OK)
        return NULL;
    lt_scope_begin();
    int64_t n = lt_tensor_numel(t), column[2] = {n, 1};
    lt_tensor *rows = lt_reshape(t, column, 2), *inv = NULL, *cnt = NULL, *r = NULL;
    if (rows && n == 0)
        r = no_rows(rows, t->shape, t->ndim, &inv, &cnt);
    else if (rows)
        r = unique_rows(rows, sort, outs.inverse ? &inv : NULL, outs.counts ? &cnt : NULL);
    r = r ? lt_reshape(r, (const int64_t[]){-1}, 1) : NULL;
    inv = inv ? lt_reshape(inv, t->shape, t->ndim) : NULL;
    return publish(r, inv, cnt, outs);
}

/* t's slices along dim as rows [size(dim), rest]. */
static lt_tensor *slices_as_rows(const char *op, lt_tensor *t, int dim)
{
    int64_t n = t->shape[dim], m = 1;
    for (int k = 0; k < t->ndim; k++)
        if (k != dim) {
            if (t->shape[k] == 0 && n > 0)
                return lt_error(LT_ERR_SHAPE, "%s: dim %d has size 0 and is not the selected dim %d (torch "
                                "refuses such slices too)", op, k, dim), NULL;
            m *= t->shape[k];
        }
    int zero = 0;
    return lt_reshape(lt_movedim(t, &dim, &zero, 1), (const int64_t[]){n, m}, 2);
}

/* The unique rows back as slices along dim. */
static lt_tensor *rows_as_slices(lt_tensor *rows, const lt_tensor *t, int dim)
{
    int64_t shape[LT_MAX_DIMS];
    shape[0] = rows->shape[0];
    for (int k = 0, j = 1; k < t->ndim; k++)
        if (k != dim)
            shape[j++] = t->shape[k];
    int zero = 0;
    return lt_contiguous(lt_movedim(lt_reshape(rows, shape, t->ndim), &zero, &dim, 1));
}

static lt_tensor *unique_along(const char *op, lt_tensor *t, int dim, bool sort, unique_outs outs)
{
    if (begin(op, t, outs) != LT_OK)
        return NULL;
    if (t->ndim == 0)
        return lt_error(LT_ERR_SHAPE, "%s: dim %d given for a 0-d tensor (as torch, a dim needs at least 1 "
                        "dim)", op, dim), NULL;
    if (dim < -t->ndim || dim >= t->ndim)
        return lt_error(LT_ERR_SHAPE, "%s: dim %d is out of range for a tensor of %d dims", op, dim, t->ndim),
               NULL;
    dim = dim < 0 ? dim + t->ndim : dim;
    lt_scope_begin();
    lt_tensor *rows = slices_as_rows(op, t, dim), *inv = NULL, *cnt = NULL, *r = NULL;
    if (rows && rows->shape[0] == 0)
        r = no_rows(rows, (const int64_t[]){0}, 1, &inv, &cnt);
    else if (rows)
        r = unique_rows(rows, sort, outs.inverse ? &inv : NULL, outs.counts ? &cnt : NULL);
    return publish(r ? rows_as_slices(r, t, dim) : NULL, inv, cnt, outs);
}

lt_tensor *lt_unique(lt_tensor *t, lt_tensor **inverse, lt_tensor **counts)
{
    return unique_flat("unique", t, true, (unique_outs){inverse, counts});
}

lt_tensor *lt_unique_dim(lt_tensor *t, int dim, lt_tensor **inverse, lt_tensor **counts)
{
    return unique_along("unique", t, dim, true, (unique_outs){inverse, counts});
}

lt_tensor *lt_unique_consecutive(lt_tensor *t, lt_tensor **inverse, lt_tensor **counts)
{
    return unique_flat("unique_consecutive", t, false, (unique_outs){inverse, counts});
}

lt_tensor *lt_unique_consecutive_dim(lt_tensor *t, int dim, lt_tensor **inverse, lt_tensor **counts)
{
    return unique_along("unique_consecutive", t, dim, false, (unique_outs){inverse, counts});
}
