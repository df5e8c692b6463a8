/*
 * api_index_ext.c - PyTorch's indexing functions built on gather, scatter
 * and index_select: take, take_along_dim, index_add, index_copy,
 * index_fill, masked_select and masked_scatter.
 *
 * A 1-D index along a dim becomes a full index tensor by a view and an
 * expand (index_add, index_copy), a bool mask becomes positions by a
 * cumulative sum (masked_scatter), so all but masked_select are traced and
 * lowered on the lazy device without reading data. masked_select's result
 * size depends on the mask: it goes through lt_nonzero, which syncs.
 * Gradients come from the ops composed. Intermediates live in a scope of
 * their own. The in-place forms (index_add_ ... scatter_reduce_) copy the
 * out-of-place result into the destination.
 */
#include "api/api.h"
#include "api/compose.h"

static bool is_index_dtype(lt_dtype dt) { return dt == LT_I64 || dt == LT_I32; }

/* Checks that index is an integer tensor on t's device. */
static lt_status check_index(const char *op, const lt_tensor *t, const lt_tensor *index, int arg)
{
    if (lt_check_tensor(op, index, arg) != LT_OK)
        return lt_last_status();
    if (!is_index_dtype((lt_dtype)index->dtype))
        return lt_error(LT_ERR_DTYPE, "%s: index has dtype %s, expected i64 (or i32)", op,
                        lt_dtype_name((lt_dtype)index->dtype));
    if (!lt_device_equal(t->device, index->device))
        return lt_error(LT_ERR_DEVICE, "%s: index is on another device than the input", op);
    return LT_OK;
}

/* i + size where i < 0: indices counted from the end. */
static lt_tensor *wrap_negative(lt_tensor *i, int64_t size)
{
    lt_tensor *shifted = lt_add_iscalar(i, size);
    return lt_where(lt_lt_scalar(i, 0), shifted, i);
}

/* ======================================================================= */
/* take, take_along_dim                                                     */
/* ======================================================================= */

lt_tensor *lt_take(lt_tensor *t, lt_tensor *index)
{
    if (lt_check_tensor("take", t, 0) != LT_OK || check_index("take", t, index, 1) != LT_OK)
        return NULL;
    lt_scope_begin();
    int64_t n = lt_tensor_numel(t);
    lt_tensor *flat = lt_reshape(t, (const int64_t[]){-1}, 1);
    lt_tensor *pos = lt_reshape(wrap_negative(index, n), (const int64_t[]){-1}, 1);
    lt_tensor *r = lt_index_select(flat, 0, pos);
    return lt_scope_return(r ? lt_reshape(r, index->shape, index->ndim) : NULL);
}

/* The shapes t and index expand to for take_along_dim: their broadcast
 * in every dim but d, their own size along d. */
static lt_status along_shapes(const lt_tensor *t, const lt_tensor *index, int d, int64_t *ts, int64_t *is)
{
    for (int k = 0; k < t->ndim; k++) {
        int64_t a = t->shape[k], b = index->shape[k];
        if (k != d && a != b && a != 1 && b != 1)
            return lt_error(LT_ERR_SHAPE, "take_along_dim: dim %d has size %lld in the input and %lld in the "
                            "indices, expected equal sizes or a 1 (broadcast)", k, (long long)a, (long long)b);
        ts[k] = k == d ? a : a == 1 ? b : a;
        is[k] = k == d ? b : a == 1 ? b : a;
    }
    return LT_OK;
}

lt_tensor *lt_take_along_dim(lt_tensor *t, lt_tensor *indices, const int *dim)
{
    const char *op = "take_along_dim";
    if (lt_check_tensor(op, t, 0) != LT_OK || check_index(op, t, indices, 1) != LT_OK)
        return NULL;
    if (!dim) { /* torch: the flattened input along the flattened indices */
        lt_scope_begin();
        lt_tensor *flat = lt_reshape(t, (const int64_t[]){-1}, 1);
        return lt_scope_return(lt_gather(flat, 0, lt_reshape(indices, (const int64_t[]){-1}, 1)));
    }
    int d = 0;
    int64_t ts[LT_MAX_DIMS], is[LT_MAX_DIMS];
    if (indices->ndim != t->ndim)
        return lt_error(LT_ERR_SHAPE, "%s: the input has %d dims and the indices %d, expected the same number", op,
                        t->ndim, indices->ndim), NULL;
    if (lt_normalize_dim(op, *dim, t->ndim, &d) != LT_OK || (t->ndim > 0 && along_shapes(t, indices, d, ts, is) != LT_OK))
        return NULL;
    lt_scope_begin();
    if (t->ndim == 0)
        return lt_scope_return(lt_gather(t, 0, indices));
    return lt_scope_return(lt_gather(lt_expand(t, ts, t->ndim), d, lt_expand(indices, is, t->ndim)));
}

/* ======================================================================= */
/* index_add, index_copy, index_fill                                         */
/* ======================================================================= */

/* Checks the arguments of index_add/index_copy: index 0-d or 1-D with one
 * entry per slice of source along d; source of t's dtype and shape but
 * along d (a 0-d t or source counts as 1-D of size 1). */
static lt_status check_index_source(const char *op, lt_tensor *t, int dim, lt_tensor *index, lt_tensor *source,
                                    int *d)
{
    if (lt_check_tensor(op, t, 0) != LT_OK || check_index(op, t, index, 2) != LT_OK ||
        lt_check_tensor(op, source, 3) != LT_OK || lt_normalize_dim(op, dim, t->ndim, d) != LT_OK)
        return lt_last_status();
    if (index->ndim > 1)
        return lt_error(LT_ERR_SHAPE, "%s: index has %d dims, expected a 0-d or 1-D tensor", op, index->ndim);
    if (source->dtype != t->dtype)
        return lt_error(LT_ERR_DTYPE, "%s: the input is %s and source %s, expected the same dtype", op,
                        lt_dtype_name((lt_dtype)t->dtype), lt_dtype_name((lt_dtype)source->dtype));
    int nd = t->ndim > 0 ? t->ndim : 1, sd = source->ndim > 0 ? source->ndim : 1;
    int64_t n = lt_tensor_numel(index);
    for (int k = 0; k < nd; k++) {
        int64_t tk = t->ndim > 0 ? t->shape[k] : 1;
        int64_t sk = source->ndim > 0 && k < sd ? source->shape[k] : 1;
        if (sd != nd || (k == *d ? sk != n : sk != tk))
            return lt_error(LT_ERR_SHAPE, "%s: source must have the input's shape with %lld (the index count) at dim "
                            "%d; it differs at dim %d", op, (long long)n, *d, k);
    }
    return LT_OK;
}

/* The index of an index_add/index_copy as a full scatter index: index
 * viewed along d and expanded to the shape of source (both at least 1-D). */
static lt_tensor *spread_index(lt_tensor *index, lt_tensor *source, int d)
{
    int64_t shape[LT_MAX_DIMS];
    for (int k = 0; k < source->ndim; k++)
        shape[k] = k == d ? lt_tensor_numel(index) : 1;
    lt_tensor *v = lt_reshape(index, shape, source->ndim);
    return v ? lt_expand(v, source->shape, source->ndim) : NULL;
}

/* t, index and source made at least 1-D (a 0-d tensor counts as [1]). */
static lt_tensor *at_least_1d(lt_tensor *t) { return t->ndim ? t : lt_reshape(t, (const int64_t[]){1}, 1); }

/* scatter or scatter_add of source into t at the positions of a 1-D index
 * along d; the result has t's shape. */
static lt_tensor *index_scatter(lt_tensor *t, int d, lt_tensor *index, lt_tensor *source, bool add)
{
    lt_tensor *t1 = at_least_1d(t), *s1 = at_least_1d(source);
    if (!t1 || !s1)
        return NULL;
    lt_tensor *idx = spread_index(index, s1, d); /* negative indices are refused, as torch */
    lt_tensor *r = add ? lt_scatter_add(t1, d, idx, s1) : lt_scatter(t1, d, idx, s1);
    return r && t->ndim == 0 ? lt_reshape(r, NULL, 0) : r;
}

lt_tensor *lt_index_add(lt_tensor *t, int dim, lt_tensor *index, lt_tensor *source, double alpha)
{
    int d = 0;
    if (check_index_source("index_add", t, dim, index, source, &d) != LT_OK)
        return NULL;
    lt_scope_begin();
    lt_tensor *scaled = source;
    if (alpha != 1.0) /* an integer tensor takes alpha as an integer, as torch */
        scaled = lt_dtype_is_floating((lt_dtype)t->dtype) ? lt_to_dtype(lt_mul_scalar(source, alpha), (lt_dtype)t->dtype)
                                                          : lt_to_dtype(lt_mul_iscalar(source, (int64_t)alpha),
                                                                        (lt_dtype)t->dtype);
    return lt_scope_return(scaled ? index_scatter(t, d, index, scaled, true) : NULL);
}

lt_tensor *lt_index_copy(lt_tensor *t, int dim, lt_tensor *index, lt_tensor *source)
{
    int d = 0;
    if (check_index_source("index_copy", t, dim, index, source, &d) != LT_OK)
        return NULL;
    lt_scope_begin();
    return lt_scope_return(index_scatter(t, d, index, source, false));
}

lt_tensor *lt_index_fill(lt_tensor *t, int dim, lt_tensor *index, double value)
{
    int d = 0;
    if (lt_check_tensor("index_fill", t, 0) != LT_OK || check_index("index_fill", t, index, 2) != LT_OK ||
        lt_normalize_dim("index_fill", dim, t->ndim, &d) != LT_OK)
        return NULL;
    if (index->ndim > 1)
        return lt_error(LT_ERR_SHAPE, "index_fill: index has %d dims, expected a 0-d or 1-D tensor", index->ndim),
               NULL;
    lt_scope_begin();
    /* a bool mask along d: true at the indexed slices */
    int64_t size = t->ndim ? t->shape[d] : 1, n = lt_tensor_numel(index);
    lt_tensor *flat_index = lt_reshape(wrap_negative(index, size), &n, 1);
    lt_tensor *hits = lt_ones(&n, 1, LT_BOOL, t->device);
    lt_tensor *mask = lt_scatter(lt_zeros(&size, 1, LT_BOOL, t->device), 0, flat_index, hits);
    int64_t shape[LT_MAX_DIMS];
    for (int k = 0; k < t->ndim; k++)
        shape[k] = k == d ? size : 1;
    if (mask)
        mask = lt_reshape(mask, shape, t->ndim);
    return lt_scope_return(mask ? lt_masked_fill(t, mask, value) : NULL);
}

/* ======================================================================= */
/* masked_select, masked_scatter                                            */
/* ======================================================================= */

/* Checks a mask (bool, or u8 as torch still accepts) on t's device and
 * broadcasts t and mask together into *tb and *mb (mask as bool). */
static lt_status broadcast_masked(const char *op, lt_tensor *t, lt_tensor *mask, lt_tensor **tb, lt_tensor **mb)
{
    if (lt_check_tensor(op, t, 0) != LT_OK || lt_check_tensor(op, mask, 1) != LT_OK)
        return lt_last_status();
    if (mask->dtype != LT_BOOL && mask->dtype != LT_U8)
        return lt_error(LT_ERR_DTYPE, "%s: mask has dtype %s, expected bool", op, lt_dtype_name((lt_dtype)mask->dtype));
    lt_meta mt = lt_tensor_meta(t), mm = lt_tensor_meta(mask), both;
    if (lt_broadcast_shapes(op, &mt, &mm, &both) != LT_OK)
        return lt_last_status();
    lt_tensor *m = mask->dtype == LT_BOOL ? mask : lt_ne_scalar(mask, 0.0);
    *tb = lt_expand(t, both.shape, both.ndim);
    *mb = m ? lt_expand(m, both.shape, both.ndim) : NULL;
    return *tb && *mb ? LT_OK : lt_last_status();
}

lt_tensor *lt_masked_select(lt_tensor *t, lt_tensor *mask)
{
    lt_scope_begin();
    lt_tensor *tb = NULL, *mb = NULL;
    if (broadcast_masked("masked_select", t, mask, &tb, &mb) != LT_OK)
        return lt_scope_return(NULL);
    lt_tensor *flat = lt_reshape(tb, (const int64_t[]){-1}, 1);
    lt_tensor *pos = lt_nonzero(lt_reshape(mb, (const int64_t[]){-1}, 1)); /* [count, 1]: a sync */
    pos = pos ? lt_reshape(pos, (const int64_t[]){-1}, 1) : NULL;
    return lt_scope_return(lt_index_select(flat, 0, pos));
}

/* masked_scatter when source is empty: t unchanged, provided the mask
 * selects nothing (which is read: a sync on the lazy device). */
static lt_tensor *scatter_nothing(lt_tensor *tb, lt_tensor *mb)
{
    int64_t any = 0;
    if (lt_item_int(lt_any(mb, NULL, 0, false), &any) != LT_OK)
        return NULL;
    if (any)
        return lt_error(LT_ERR_SHAPE, "masked_scatter: source is empty but the mask selects elements"), NULL;
    return lt_contiguous(tb);
}

lt_tensor *lt_masked_scatter(lt_tensor *t, lt_tensor *mask, lt_tensor *source)
{
    const char *op = "masked_scatter";
    if (lt_check_tensor(op, t, 0) != LT_OK || lt_check_tensor(op, source, 2) != LT_OK)
        return NULL;
    if (source->dtype != t->dtype)
        return lt_error(LT_ERR_DTYPE, "%s: the input is %s and source %s, expected the same dtype", op,
                        lt_dtype_name((lt_dtype)t->dtype), lt_dtype_name((lt_dtype)source->dtype)), NULL;
    lt_scope_begin();
    lt_tensor *tb = NULL, *mb = NULL;
    if (broadcast_masked(op, t, mask, &tb, &mb) != LT_OK)
        return lt_scope_return(NULL);
    if (lt_tensor_numel(source) == 0)
        return lt_scope_return(scatter_nothing(tb, mb));
    /* the k-th selected element (row-major) reads source's k-th element;
     * too short a source shows as an index out of range */
    lt_tensor *m = lt_reshape(mb, (const int64_t[]){-1}, 1);
    lt_tensor *rank = lt_sub_iscalar(lt_cumsum_dtype(m, 0, LT_I64), 1);
    lt_tensor *pos = lt_where(m, rank, lt_zeros_like(rank));
    lt_tensor *picked = lt_index_select(lt_reshape(source, (const int64_t[]){-1}, 1), 0, pos);
    lt_tensor *r = lt_where(m, picked, lt_reshape(tb, (const int64_t[]){-1}, 1));
    return lt_scope_return(r ? lt_reshape(r, tb->shape, tb->ndim) : NULL);
}

/* ======================================================================= */
/* In-place forms                                                           */
/* ======================================================================= */

/* Writes the out-of-place result r into t (lt_copy_: t may be a view, and
 * autograd refuses it where torch would); returns t, or NULL. */
static lt_tensor *write_back(lt_tensor *t, lt_tensor *r)
{
    lt_tensor *done = r ? lt_copy_(t, r) : NULL;
    lt_scope_end();
    return done;
}

lt_tensor *lt_index_add_(lt_tensor *t, int dim, lt_tensor *index, lt_tensor *source, double alpha)
{
    lt_scope_begin();
    return write_back(t, lt_index_add(t, dim, index, source, alpha));
}

lt_tensor *lt_index_copy_(lt_tensor *t, int dim, lt_tensor *index, lt_tensor *source)
{
    lt_scope_begin();
    return write_back(t, lt_index_copy(t, dim, index, source));
}

lt_tensor *lt_index_fill_(lt_tensor *t, int dim, lt_tensor *index, double value)
{
    lt_scope_begin();
    return write_back(t, lt_index_fill(t, dim, index, value));
}

lt_tensor *lt_masked_scatter_(lt_tensor *t, lt_tensor *mask, lt_tensor *source)
{
    lt_scope_begin();
    lt_tensor *r = lt_masked_scatter(t, mask, source);
    if (r && !lt_shape_equal(r->shape, r->ndim, t->shape, t->ndim)) {
        lt_error(LT_ERR_SHAPE, "masked_scatter_: the mask broadcasts beyond the destination");
        r = NULL;
    }
    return write_back(t, r);
}

lt_tensor *lt_scatter_reduce_(lt_tensor *t, int dim, lt_tensor *index, lt_tensor *src, int reduce, bool include_self)
{
    lt_scope_begin();
    return write_back(t, lt_scatter_reduce(t, dim, index, src, reduce, include_self));
}
