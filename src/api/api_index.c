/*
 * api_index.c - advanced indexing: integer index tensors on some dims of a
 * tensor, read (lt_index) and written (lt_index_put_), with PyTorch's rules
 * for t[i0, i1, ...].
 *
 * The indexed dims are permuted to the front of t and merged into one; the
 * index tensors (broadcast together, negative values counted from the end)
 * become one flat position along that merged dim. Reading is one
 * index_select over it; writing scatters into a copy of it and copies that
 * back through the permuted view, so the write reaches t (on the lazy
 * device through the view's inverse update). Both run their intermediate
 * calls inside a scope of their own.
 */
#include "api/api.h"

#include <string.h>

typedef struct index_plan {
    int nadv;                     /* indexed dims */
    int adv_dim[LT_MAX_DIMS];     /* which dims of t, in order */
    lt_tensor *adv[LT_MAX_DIMS];  /* their index tensors (borrowed) */
    lt_tensor *perm;              /* t with the indexed dims first (a view) */
    lt_tensor *flat;              /* perm with them merged: [N, rest...] */
    lt_tensor *lin;               /* the flat positions, [M] */
    int64_t bshape[LT_MAX_DIMS];  /* the indices' broadcast shape */
    int nb;
    int front;                    /* where the index dims go in the result */
    int order[LT_MAX_DIMS];       /* perm's dims as dims of t */
} index_plan;

static lt_status check_index_args(const char *op, lt_tensor *t, lt_tensor *const *indices, int n, index_plan *p)
{
    if (lt_check_tensor(op, t, 0) != LT_OK)
        return lt_last_status();
    if (n < 1 || n > t->ndim)
        return lt_error(LT_ERR_INDEX, "%s: %d index entries for a tensor of %d dims, expected 1..%d", op, n,
                        t->ndim, t->ndim);
    if (!indices)
        return lt_error(LT_ERR_NULL, "%s: indices is NULL but n is %d", op, n);
    p->nadv = 0;
    for (int d = 0; d < n; d++) {
        lt_tensor *i = indices[d];
        if (!i)
            continue;
        if (lt_check_tensor(op, i, d + 1) != LT_OK)
            return lt_last_status();
        if (lt_dtype_is_floating(i->dtype) || i->dtype == LT_BOOL)
            return lt_error(LT_ERR_DTYPE, "%s: the index of dim %d is %s, expected an integer tensor (a bool "
                            "mask indexes through lt_nonzero)", op, d, lt_dtype_name(i->dtype));
        if (!lt_device_equal(i->device, t->device))
            return lt_error(LT_ERR_DEVICE, "%s: the index of dim %d is on another device than the tensor", op, d);
        p->adv[p->nadv] = i;
        p->adv_dim[p->nadv++] = d;
    }
    if (!p->nadv)
        return lt_error(LT_ERR_NULL, "%s: every index entry is NULL, expected at least one index tensor", op);
    return LT_OK;
}

/* i + size where i < 0: indices counted from the end. */
static lt_tensor *wrap_negative(lt_tensor *i, int64_t size)
{
    lt_tensor *shifted = lt_add(i, lt_scalar((double)size, lt_tensor_dtype(i), lt_tensor_device(i)));
    return lt_where(lt_lt_scalar(i, 0), shifted, i);
}

/* LT_ERR_INDEX if some index lies outside [-size, size) (reads the data). */
static lt_status check_range(const char *op, lt_tensor *i, int64_t size, int dim)
{
    lt_tensor *bad = lt_logical_or(lt_lt_scalar(i, (double)-size), lt_ge_scalar(i, (double)size));
    int64_t any = 0;
    if (lt_item_int(lt_any(bad, NULL, 0, false), &any) != LT_OK)
        return lt_last_status();
    if (any)
        return lt_error(LT_ERR_INDEX, "%s: index out of range for dim %d of size %lld", op, dim, (long long)size);
    return LT_OK;
}

/* The flat position of every indexed element: ((i0 * s1) + i1) * s2 + ... */
static lt_status plan_positions(const char *op, lt_tensor *t, index_plan *p)
{
    lt_tensor *lin = NULL;
    for (int j = 0; j < p->nadv; j++) {
        int d = p->adv_dim[j];
        int64_t size = t->shape[d];
        /* one index is range-checked by index_select itself; with several,
         * a bad one could land inside the merged dim */
        if (p->nadv > 1 && check_range(op, p->adv[j], size, d) != LT_OK)
            return lt_last_status();
        lt_tensor *w = wrap_negative(p->adv[j], size);
        lin = lin ? lt_add(lt_mul(lin, lt_scalar((double)size, LT_I64, t->device)), w) : w;
    }
    if (!lin)
        return lt_last_status();
    p->nb = lin->ndim;
    memcpy(p->bshape, lin->shape, sizeof *p->bshape * (size_t)p->nb);
    p->lin = lt_reshape(lin, (int64_t[]){-1}, 1);
    return p->lin ? LT_OK : lt_last_status();
}

/* perm, flat and lin of the plan; where the index dims go in the result:
 * in place of the indexed dims when those are adjacent, else first. */
static lt_status plan_index(const char *op, lt_tensor *t, index_plan *p)
{
    int nd = t->ndim, order[LT_MAX_DIMS], k = 0;
    bool taken[LT_MAX_DIMS] = {false}, adjacent = true;
    int64_t fshape[LT_MAX_DIMS] = {1};
    for (int j = 0; j < p->nadv; j++) {
        order[k++] = p->adv_dim[j];
        taken[p->adv_dim[j]] = true;
        adjacent = adjacent && (j == 0 || p->adv_dim[j] == p->adv_dim[j - 1] + 1);
        fshape[0] *= t->shape[p->adv_dim[j]];
    }
    int nf = 1;
    for (int i = 0; i < nd; i++)
        if (!taken[i])
            fshape[nf++] = t->shape[order[k++] = i];
    p->front = adjacent ? p->adv_dim[0] : 0;
    memcpy(p->order, order, sizeof order);
    p->perm = lt_permute(t, order, nd);
    p->flat = lt_reshape(p->perm, fshape, nf);
    if (!p->flat)
        return lt_last_status();
    return plan_positions(op, t, p);
}

/* Result dims [B..., rest...] -> rest[:front] + B + rest[front:]. */
static void result_order(const index_plan *p, int nd, int *order)
{
    int k = 0;
    for (int i = 0; i < p->front; i++)
        order[k++] = p->nb + i;
    for (int i = 0; i < p->nb; i++)
        order[k++] = i;
    for (int i = p->nb + p->front; i < nd; i++)
        order[k++] = i;
}

/* The shape of the result before result_order: [B..., rest...]; its ndim,
 * or -1 with an error when it has too many dims. */
static int gathered_shape(const char *op, const index_plan *p, int64_t *shape)
{
    int nr = p->flat->ndim - 1, nd = p->nb + nr;
    if (nd > LT_MAX_DIMS)
        return lt_error(LT_ERR_SHAPE, "%s: the result would have %d dims, at most %d are supported", op, nd,
                        LT_MAX_DIMS),
               -1;
    memcpy(shape, p->bshape, sizeof *shape * (size_t)p->nb);
    memcpy(shape + p->nb, p->flat->shape + 1, sizeof *shape * (size_t)nr);
    return nd;
}

static lt_tensor *index_in_scope(lt_tensor *t, lt_tensor *const *indices, int n)
{
    index_plan p = {0};
    int64_t shape[LT_MAX_DIMS];
    int order[LT_MAX_DIMS], nd;
    if (check_index_args("index", t, indices, n, &p) != LT_OK || plan_index("index", t, &p) != LT_OK ||
        (nd = gathered_shape("index", &p, shape)) < 0)
        return NULL;
    result_order(&p, nd, order);
    return lt_permute(lt_reshape(lt_index_select(p.flat, 0, p.lin), shape, nd), order, nd);
}

lt_tensor *lt_index(lt_tensor *t, lt_tensor *const *indices, int n)
{
    lt_scope_begin();
    lt_tensor *r = index_in_scope(t, indices, n);
    lt_tensor *kept = r ? lt_keep(r) : NULL;
    lt_scope_end();
    return kept;
}

/* The values of lt_index_put as rows of the merged dim: values converted
 * to t's dtype, broadcast to lt_index's result shape, permuted back to
 * [B..., rest...] and flattened to [M, rest...]. *rows_nd gets its rank. */
static lt_tensor *put_rows(lt_tensor *t, const index_plan *p, lt_tensor *values, int nd, const int64_t *shape,
                           int *rows_nd)
{
    int order[LT_MAX_DIMS], inverse[LT_MAX_DIMS];
    int64_t rows_shape[LT_MAX_DIMS], result_shape[LT_MAX_DIMS];
    result_order(p, nd, order);
    int nr = nd - p->nb;
    rows_shape[0] = lt_tensor_numel(p->lin);
    for (int i = 0; i < nr; i++)
        rows_shape[1 + i] = p->flat->shape[1 + i];
    for (int i = 0; i < nd; i++) {
        inverse[order[i]] = i;
        result_shape[i] = shape[order[i]];
    }
    *rows_nd = nr + 1;
    lt_tensor *v = lt_to_dtype(values, (lt_dtype)t->dtype);
    v = v ? lt_contiguous(lt_expand(v, result_shape, nd)) : NULL;
    return v ? lt_reshape(lt_permute(v, inverse, nd), rows_shape, nr + 1) : NULL;
}

/* The merged-dim form of t (p->flat) with the values written (or added)
 * at the indexed positions. */
static lt_tensor *put_flat(lt_tensor *t, lt_tensor *const *indices, int n, lt_tensor *values, bool accumulate,
                           index_plan *p)
{
    const char *op = accumulate ? "index_put (accumulate)" : "index_put_";
    int64_t shape[LT_MAX_DIMS], ones[LT_MAX_DIMS];
    int nd, rows_nd;
    if (check_index_args(op, t, indices, n, p) != LT_OK || lt_check_tensor(op, values, n + 1) != LT_OK ||
        plan_index(op, t, p) != LT_OK || (nd = gathered_shape(op, p, shape)) < 0)
        return NULL;
    lt_tensor *rows = put_rows(t, p, values, nd, shape, &rows_nd);
    if (!rows)
        return NULL;
    ones[0] = rows->shape[0];
    for (int i = 1; i < rows_nd; i++)
        ones[i] = 1;
    lt_tensor *idx = lt_contiguous(lt_expand(lt_view(p->lin, ones, rows_nd), rows->shape, rows_nd));
    return accumulate ? lt_scatter_add(p->flat, 0, idx, rows) : lt_scatter(p->flat, 0, idx, rows);
}

static lt_tensor *index_put_in_scope(lt_tensor *t, lt_tensor *const *indices, int n, lt_tensor *values,
                                     bool accumulate)
{
    index_plan p = {0};
    lt_tensor *scattered = put_flat(t, indices, n, values, accumulate, &p);
    if (!scattered)
        return NULL;
    return lt_copy_(p.perm, lt_reshape(scattered, p.perm->shape, p.perm->ndim)) ? t : NULL;
}

lt_tensor *lt_index_put_(lt_tensor *t, lt_tensor *const *indices, int n, lt_tensor *values)
{
    lt_scope_begin();
    lt_tensor *r = index_put_in_scope(t, indices, n, values, false);
    lt_scope_end();
    return r;
}

lt_tensor *lt_index_put_accumulate_(lt_tensor *t, lt_tensor *const *indices, int n, lt_tensor *values)
{
    lt_scope_begin();
    lt_tensor *r = index_put_in_scope(t, indices, n, values, true);
    lt_scope_end();
    return r;
}

/* The out-of-place form: the scattered merged tensor viewed back through
 * the inverse permutation (no write into t, so it is differentiable in t
 * and values). */
lt_tensor *lt_index_put(lt_tensor *t, lt_tensor *const *indices, int n, lt_tensor *values, bool accumulate)
{
    lt_scope_begin();
    index_plan p = {0};
    lt_tensor *r = put_flat(t, indices, n, values, accumulate, &p);
    if (r) {
        int inverse[LT_MAX_DIMS];
        for (int i = 0; i < p.perm->ndim; i++)
            inverse[p.order[i]] = i;
        r = lt_contiguous(lt_permute(lt_reshape(r, p.perm->shape, p.perm->ndim), inverse, p.perm->ndim));
    }
    lt_tensor *kept = r ? lt_keep(r) : NULL;
    lt_scope_end();
    return kept;
}
