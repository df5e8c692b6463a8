/*
 * api_scatter_reduce.c - lt_scatter_reduce, torch.scatter_reduce with the
 * reductions sum, prod, mean, amax and amin, as a composition.
 *
 * sum and mean scatter_add the sources (and a count of them) into zeros.
 * prod, amax and amin have no scatter kernel: they compare the index with
 * every position j along dim (an [.., J, K, ..] mask), fill the
 * non-matching cells with the reduction's identity and reduce over K. That
 * is O(J K) work per line instead of O(K), but it is elementwise plus a
 * reduction, so it fuses on the lazy device, and its gradient is exactly
 * torch's: with include_self the input joins the reduction as J extra
 * sources (one per position), so ties and zeros are shared among the
 * input and the sources as torch shares them. Positions no index points at
 * keep the input's value.
 */
#include "api/api.h"
#include "api/compose.h"

#include <math.h>

/* torch's rules: an integer index, t, index and src of one rank, index no
 * larger than src anywhere nor than t outside dim, src of t's dtype; the
 * rank below LT_MAX_DIMS (the mask needs one more dim). */
static lt_status check_args(lt_tensor *t, int dim, lt_tensor *index, lt_tensor *src, int reduce, int *d)
{
    const char *op = "scatter_reduce";
    if (lt_check_tensor(op, t, 0) != LT_OK || lt_check_tensor(op, index, 2) != LT_OK ||
        lt_check_tensor(op, src, 3) != LT_OK || lt_normalize_dim(op, dim, t->ndim, d) != LT_OK)
        return lt_last_status();
    if (reduce < LT_SCATTER_SUM || reduce > LT_SCATTER_AMIN)
        return lt_error(LT_ERR_ARGUMENT, "%s: reduce %d is not an LT_SCATTER_* value", op, reduce);
    if (src->dtype != t->dtype)
        return lt_error(LT_ERR_DTYPE, "%s: the input is %s and src %s, expected one dtype", op,
                        lt_dtype_name((lt_dtype)t->dtype), lt_dtype_name((lt_dtype)src->dtype));
    if (t->dtype == LT_BOOL && reduce == LT_SCATTER_MEAN)
        return lt_error(LT_ERR_DTYPE, "%s: mean of bool tensors is not defined (as torch)", op);
    if (index->dtype != LT_I64 && index->dtype != LT_I32)
        return lt_error(LT_ERR_DTYPE, "%s: index has dtype %s, expected i64", op, lt_dtype_name((lt_dtype)index->dtype));
    if (t->ndim >= LT_MAX_DIMS || index->ndim != t->ndim || src->ndim != t->ndim)
        return lt_error(LT_ERR_SHAPE, "%s: the input, index and src have %d, %d and %d dims, expected one rank below "
                        "%d", op, t->ndim, index->ndim, src->ndim, LT_MAX_DIMS);
    for (int k = 0; k < t->ndim; k++)
        if (index->shape[k] > src->shape[k] || (k != *d && index->shape[k] > t->shape[k]))
            return lt_error(LT_ERR_SHAPE, "%s: index is larger than src, or than the input outside dim %d, at dim %d",
                            op, *d, k);
    return LT_OK;
}

/* x narrowed to the sizes of `like` in every dim but skip (-1: none). */
static lt_tensor *narrow_to(lt_tensor *x, const lt_tensor *like, int skip)
{
    for (int k = 0; k < x->ndim && x; k++)
        if (k != skip && x->shape[k] != like->shape[k])
            x = lt_narrow(x, k, 0, like->shape[k]);
    return x;
}

/* How many sources land on each position of t (i64, t's shape). */
static lt_tensor *hit_counts(lt_tensor *t, int d, lt_tensor *index)
{
    lt_tensor *ones = lt_ones(index->shape, index->ndim, LT_I64, t->device);
    return lt_scatter_add(lt_zeros(t->shape, t->ndim, LT_I64, t->device), d, index, ones);
}

/* sum and mean: scatter_add into zeros; the input joins when include_self. */
static lt_tensor *reduce_additive(lt_tensor *t, int d, lt_tensor *index, lt_tensor *src, bool mean, bool include_self,
                                  lt_tensor *count)
{
    lt_tensor *total = lt_scatter_add(lt_zeros_like(t), d, index, src);
    if (include_self)
        total = lt_add(total, t);
    if (!mean)
        return total;
    lt_tensor *n = include_self ? lt_add_iscalar(count, 1) : lt_maximum_iscalar(count, 1);
    lt_tensor *q = lt_dtype_is_floating((lt_dtype)t->dtype) ? lt_div(total, n) : lt_floor_divide(total, n);
    return lt_to_dtype(q, (lt_dtype)t->dtype);
}

/* The identity of prod/amax/amin in t's dtype, 0-d: 1, the lowest value,
 * the highest value (integers made exactly, from an i64 on the host). */
static lt_tensor *identity_of(int reduce, lt_tensor *t)
{
    lt_dtype dt = (lt_dtype)t->dtype;
    if (lt_dtype_is_floating(dt)) {
        double v = reduce == LT_SCATTER_PROD ? 1.0 : reduce == LT_SCATTER_AMAX ? -INFINITY : INFINITY;
        return lt_scalar(v, dt, t->device);
    }
    int64_t lo = dt == LT_U8 ? 0 : dt == LT_I32 ? INT32_MIN : INT64_MIN;
    int64_t hi = dt == LT_U8 ? 255 : dt == LT_I32 ? INT32_MAX : INT64_MAX;
    int64_t v = reduce == LT_SCATTER_PROD ? 1 : reduce == LT_SCATTER_AMAX ? lo : hi;
    return lt_to_dtype(lt_from_data(&v, NULL, 0, LT_I64, t->device), dt);
}

/* The sources and their indices, with the input appended as one source
 * per position when include_self (t narrowed to index's extent). */
static void gather_sources(lt_tensor *t, int d, lt_tensor *index, lt_tensor *src, bool include_self,
                           lt_tensor **idx_out, lt_tensor **src_out)
{
    lt_tensor *s = narrow_to(src, index, -1), *i = index;
    if (include_self) {
        lt_tensor *self = narrow_to(t, index, d);
        int64_t along[LT_MAX_DIMS];
        for (int k = 0; k < t->ndim; k++)
            along[k] = k == d ? t->shape[d] : 1;
        lt_tensor *pos = lt_reshape(lt_arange(0, (double)t->shape[d], 1, (lt_dtype)index->dtype, t->device), along,
                                    t->ndim);
        lt_tensor *self_idx = self && pos ? lt_expand(pos, self->shape, self->ndim) : NULL;
        s = lt_cat((lt_tensor *[]){s, self}, 2, d);
        i = lt_cat((lt_tensor *[]){i, self_idx}, 2, d);
    }
    *idx_out = i;
    *src_out = s;
}

/* prod, amax, amin: the [.., J, K, ..] match of every source with every
 * position j along d, the identity where it does not match, reduced over
 * K; then padded up to t's extent in the other dims. */
static lt_tensor *reduce_dense(lt_tensor *t, int d, lt_tensor *index, lt_tensor *src, int reduce, bool include_self)
{
    lt_tensor *idx = NULL, *s = NULL;
    gather_sources(t, d, index, src, include_self, &idx, &s);
    if (!idx || !s)
        return NULL;
    int nd = t->ndim + 1;
    int64_t along[LT_MAX_DIMS];
    for (int k = 0; k < nd; k++)
        along[k] = k == d ? t->shape[d] : 1;
    lt_tensor *j = lt_reshape(lt_arange(0, (double)t->shape[d], 1, (lt_dtype)idx->dtype, t->device), along, nd);
    lt_tensor *match = lt_eq(lt_unsqueeze(idx, d), j);
    lt_tensor *cells = lt_where(match, lt_unsqueeze(s, d), identity_of(reduce, t));
    int k_dim[1] = {d + 1};
    lt_tensor *r = reduce == LT_SCATTER_PROD ? lt_prod(cells, k_dim, 1, false)
                   : reduce == LT_SCATTER_AMAX ? lt_amax(cells, k_dim, 1, false)
                                               : lt_amin(cells, k_dim, 1, false);
    if (!r)
        return NULL;
    int64_t pad[2 * LT_MAX_DIMS];
    bool padded = false;
    for (int k = 0; k < t->ndim; k++) { /* (before, after) from the last dim */
        pad[2 * k] = 0;
        pad[2 * k + 1] = t->shape[t->ndim - 1 - k] - r->shape[t->ndim - 1 - k];
        padded = padded || pad[2 * k + 1];
    }
    return padded ? lt_pad(r, pad, 2 * t->ndim, LT_PAD_CONSTANT, 0.0) : r;
}

static lt_tensor *scatter_reduce_in_scope(lt_tensor *t, int d, lt_tensor *index, lt_tensor *src, int reduce,
                                          bool include_self)
{
    if (t->ndim == 0) { /* torch: a 0-d tensor acts as one of shape [1] */
        const int64_t one[1] = {1};
        lt_tensor *r = scatter_reduce_in_scope(lt_reshape(t, one, 1), 0, lt_reshape(index, one, 1),
                                               lt_reshape(src, one, 1), reduce, include_self);
        return r ? lt_reshape(r, NULL, 0) : NULL;
    }
    if (t->dtype == LT_BOOL) { /* as 0/1: sum and amax are or, prod and amin and */
        lt_tensor *r = scatter_reduce_in_scope(lt_to_dtype(t, LT_I64), d, index, lt_to_dtype(src, LT_I64), reduce,
                                               include_self);
        return r ? lt_to_dtype(r, LT_BOOL) : NULL;
    }
    if (lt_tensor_numel(index) == 0)
        return lt_clone(t); /* nothing is scattered */
    lt_tensor *count = hit_counts(t, d, index);
    lt_tensor *r = reduce == LT_SCATTER_SUM || reduce == LT_SCATTER_MEAN
                       ? reduce_additive(t, d, index, src, reduce == LT_SCATTER_MEAN, include_self, count)
                       : reduce_dense(t, d, index, src, reduce, include_self);
    /* prod of integers comes back as i64: its low bits are the wrapped product */
    r = r ? lt_to_dtype(r, (lt_dtype)t->dtype) : NULL;
    return count && r ? lt_where(lt_gt_scalar(count, 0), r, t) : NULL;
}

lt_tensor *lt_scatter_reduce(lt_tensor *t, int dim, lt_tensor *index, lt_tensor *src, int reduce, bool include_self)
{
    int d = 0;
    if (check_args(t, dim, index, src, reduce, &d) != LT_OK)
        return NULL;
    lt_scope_begin();
    return lt_scope_return(scatter_reduce_in_scope(t, d, index, src, reduce, include_self));
}
