/*
 * api_shape_misc.c - diagonals, index grids and binary search: diag,
 * diag_embed, trace, tril_indices, triu_indices, meshgrid, cartesian_prod,
 * where with one argument, searchsorted (with a sorter) and bucketize.
 * unique is in api_unique.c.
 *
 * All are compositions. diag_embed gathers along the last dim with an
 * index and a mask computed on the host from the sizes; searchsorted
 * counts, for each value, the sequence elements before its insertion point
 * (a fused compare and sum instead of a binary search: O(n m) work, but
 * traced and lowered like any reduction). Only the data-dependent result
 * syncs on the lazy device: where with one argument (through lt_nonzero).
 * Intermediates live in a scope of their own.
 */
#include "api/api.h"
#include "api/compose.h"

#include <stdlib.h>
#include <string.h>

/* Hands pieces[0..n) to the caller's scope, copies them to out and ends
 * the composite's scope. Returns n, or -1 if a piece is missing. */
static int publish_pieces(lt_tensor **pieces, int n, lt_tensor **out)
{
    bool ok = true;
    for (int i = 0; i < n && ok; i++)
        ok = pieces[i] && lt_keep(pieces[i]) != NULL;
    if (ok && n > 0)
        memcpy(out, pieces, sizeof *pieces * (size_t)n);
    lt_scope_end();
    return ok ? n : -1;
}

static const int64_t FLAT[1] = {-1};

/* ======================================================================= */
/* diag_embed, diag, trace                                                  */
/* ======================================================================= */

/* Host tables of an m x m plane holding a diagonal of n at offset: idx[r,c]
 * is the diagonal position read (0 off the diagonal), mask[r,c] whether
 * (r, c) lies on it. */
static void diagonal_tables(int64_t m, int64_t offset, int64_t *idx, bool *mask)
{
    for (int64_t r = 0; r < m; r++)
        for (int64_t c = 0; c < m; c++) {
            mask[r * m + c] = c - r == offset;
            idx[r * m + c] = mask[r * m + c] ? (offset >= 0 ? r : c) : 0;
        }
}

/* t's last dim (size n > 0) spread on the diagonal of an m x m plane in the
 * last two dims of the result. */
static lt_tensor *embed_last(lt_tensor *t, int64_t offset, int64_t m)
{
    int64_t cells = m * m;
    int64_t *idx = malloc(sizeof *idx * (size_t)cells);
    bool *mask = malloc(sizeof *mask * (size_t)cells);
    lt_tensor *r = NULL;
    if (!idx || !mask) {
        lt_error(LT_ERR_MEMORY, "diag_embed: out of memory for a %lld x %lld plane", (long long)m, (long long)m);
    } else {
        diagonal_tables(m, offset, idx, mask);
        int64_t plane[2] = {m, m}, shape[LT_MAX_DIMS];
        memcpy(shape, t->shape, sizeof *shape * (size_t)(t->ndim - 1));
        shape[t->ndim - 1] = shape[t->ndim] = m;
        lt_tensor *vals = lt_index_select(t, t->ndim - 1, lt_from_data(idx, &cells, 1, LT_I64, t->device));
        lt_tensor *on = lt_from_data(mask, plane, 2, LT_BOOL, t->device);
        lt_tensor *zero = lt_scalar(0.0, (lt_dtype)t->dtype, t->device);
        r = vals ? lt_where(on, lt_reshape(vals, shape, t->ndim + 1), zero) : NULL;
    }
    free(idx);
    free(mask);
    return r;
}

lt_tensor *lt_diag_embed(lt_tensor *t, int64_t offset, int dim1, int dim2)
{
    int d1 = 0, d2 = 0;
    if (lt_check_tensor("diag_embed", t, 0) != LT_OK)
        return NULL;
    if (t->ndim == 0 || t->ndim >= LT_MAX_DIMS)
        return lt_error(LT_ERR_SHAPE, "diag_embed: expects a tensor of 1 to %d dims, got %d", LT_MAX_DIMS - 1,
                        t->ndim), NULL;
    int nd = t->ndim + 1;
    if (lt_normalize_dim("diag_embed", dim1, nd, &d1) != LT_OK || lt_normalize_dim("diag_embed", dim2, nd, &d2) != LT_OK)
        return NULL;
    if (d1 == d2)
        return lt_error(LT_ERR_ARGUMENT, "diag_embed: the diagonal dims must differ, got %d and %d", dim1, dim2), NULL;
    int64_t n = t->shape[t->ndim - 1], off = offset < 0 ? -offset : offset;
    if (off > (int64_t)1 << 20 || n > ((int64_t)1 << 31) - off)
        return lt_error(LT_ERR_SHAPE, "diag_embed: a diagonal of %lld at offset %lld is too large", (long long)n,
                        (long long)offset), NULL;
    int64_t m = n + off;
    lt_scope_begin();
    lt_tensor *r;
    if (n == 0) {
        /* all zeros, made from t (an empty sum) so that autograd sees t */
        int64_t shape[LT_MAX_DIMS];
        memcpy(shape, t->shape, sizeof *shape * (size_t)(t->ndim - 1));
        shape[nd - 2] = shape[nd - 1] = m;
        lt_tensor *zero = lt_sum(lt_unsqueeze(t, -1), (const int[]){-1, -2}, 2, true);
        r = lt_contiguous(lt_expand(lt_to_dtype(zero, (lt_dtype)t->dtype), shape, nd));
    } else {
        r = embed_last(t, offset, m);
    }
    /* the plane's rows go to dim1, its columns to dim2 */
    r = r ? lt_movedim(r, (const int[]){nd - 2, nd - 1}, (const int[]){d1, d2}, 2) : NULL;
    return lt_scope_return(r ? lt_contiguous(r) : NULL);
}

lt_tensor *lt_diag(lt_tensor *t, int64_t offset)
{
    if (lt_check_tensor("diag", t, 0) != LT_OK)
        return NULL;
    if (t->ndim == 1)
        return lt_diag_embed(t, offset, 0, 1);
    if (t->ndim != 2)
        return lt_error(LT_ERR_SHAPE, "diag: expects a 1-D or 2-D tensor, got %d dims", t->ndim), NULL;
    lt_scope_begin();
    return lt_scope_return(lt_contiguous(lt_diagonal(t, offset, 0, 1)));
}

lt_tensor *lt_trace(lt_tensor *t)
{
    if (lt_check_tensor("trace", t, 0) != LT_OK)
        return NULL;
    if (t->ndim != 2)
        return lt_error(LT_ERR_SHAPE, "trace: expects a matrix, got %d dims", t->ndim), NULL;
    if (t->dtype == LT_BOOL)
        return lt_error(LT_ERR_DTYPE, "trace: bool tensors are not accepted (as torch)"), NULL;
    lt_scope_begin();
    return lt_scope_return(lt_sum(lt_diagonal(t, 0, 0, 1), NULL, 0, false));
}

/* ======================================================================= */
/* tril_indices, triu_indices                                               */
/* ======================================================================= */

/* [2, count] i64 coordinates, row-major, of the cells of a row x col
 * matrix with c - r <= offset (lower) or >= offset (upper). */
static lt_tensor *triangle_indices(const char *op, int64_t row, int64_t col, int64_t offset, bool lower,
                                   lt_device dev)
{
    if (row < 0 || col < 0)
        return lt_error(LT_ERR_ARGUMENT, "%s: row %lld and col %lld, expected both >= 0", op, (long long)row,
                        (long long)col), NULL;
    if (row > ((int64_t)1 << 24) || col > ((int64_t)1 << 24) || row * col > ((int64_t)1 << 28))
        return lt_error(LT_ERR_MEMORY, "%s: a %lld x %lld matrix is too large", op, (long long)row, (long long)col),
               NULL;
    int64_t cells = row * col, count = 0;
    int64_t *rc = malloc(sizeof *rc * (size_t)(2 * cells + 1));
    if (!rc)
        return lt_error(LT_ERR_MEMORY, "%s: out of memory", op), NULL;
    for (int64_t r = 0; r < row; r++)
        for (int64_t c = 0; c < col; c++)
            if (lower ? c - r <= offset : c - r >= offset) {
                rc[count] = r;
                rc[cells + count++] = c;
            }
    memmove(rc + count, rc + cells, sizeof *rc * (size_t)count);
    int64_t shape[2] = {2, count};
    lt_tensor *t = lt_from_data(rc, shape, 2, LT_I64, dev);
    free(rc);
    return t;
}

lt_tensor *lt_tril_indices(int64_t row, int64_t col, int64_t offset, lt_device dev)
{
    return triangle_indices("tril_indices", row, col, offset, true, dev);
}

lt_tensor *lt_triu_indices(int64_t row, int64_t col, int64_t offset, lt_device dev)
{
    return triangle_indices("triu_indices", row, col, offset, false, dev);
}

/* ======================================================================= */
/* meshgrid, cartesian_prod                                                 */
/* ======================================================================= */

/* Checks a list of 1-D (or, unless need_1d, 0-d) tensors of one dtype and
 * device. */
static lt_status check_grid_list(const char *op, lt_tensor *const *ts, int n, bool need_1d)
{
    if (n <= 0 || n > LT_MAX_DIMS)
        return lt_error(LT_ERR_ARGUMENT, "%s: %d tensors given, expected 1..%d", op, n, LT_MAX_DIMS);
    if (!ts)
        return lt_error(LT_ERR_NULL, "%s: the tensor list is NULL", op);
    for (int i = 0; i < n; i++) {
        if (lt_check_tensor(op, ts[i], i) != LT_OK)
            return lt_last_status();
        if (ts[i]->ndim > 1 || (need_1d && ts[i]->ndim != 1))
            return lt_error(LT_ERR_SHAPE, "%s: tensor %d has %d dims, expected a %s", op, i, ts[i]->ndim,
                            need_1d ? "1-D tensor" : "0-d or 1-D tensor");
        if (ts[i]->dtype != ts[0]->dtype)
            return lt_error(LT_ERR_DTYPE, "%s: tensor %d is %s but tensor 0 is %s, expected one dtype", op, i,
                            lt_dtype_name((lt_dtype)ts[i]->dtype), lt_dtype_name((lt_dtype)ts[0]->dtype));
        if (!lt_device_equal(ts[i]->device, ts[0]->device))
            return lt_error(LT_ERR_DEVICE, "%s: tensor %d is on another device than tensor 0", op, i);
    }
    return LT_OK;
}

/* The grids of meshgrid (views) into grids[0..n), in the caller's scope. */
static void make_grids(lt_tensor *const *ts, int n, bool xy, lt_tensor **grids)
{
    int64_t shape[LT_MAX_DIMS];
    int axis[LT_MAX_DIMS];
    for (int i = 0; i < n; i++) {
        axis[i] = xy && n >= 2 && i < 2 ? 1 - i : i; /* 'xy': the first two swap places */
        shape[axis[i]] = lt_tensor_numel(ts[i]);
    }
    for (int i = 0; i < n; i++) {
        int64_t along[LT_MAX_DIMS];
        for (int k = 0; k < n; k++)
            along[k] = k == axis[i] ? shape[k] : 1;
        grids[i] = lt_expand(lt_reshape(ts[i], along, n), shape, n);
    }
}

int lt_meshgrid(lt_tensor *const *ts, int n, bool indexing_xy, lt_tensor **out, int max_out)
{
    if (check_grid_list("meshgrid", ts, n, false) != LT_OK)
        return -1;
    if (!out || max_out < n)
        return lt_error(out ? LT_ERR_ARGUMENT : LT_ERR_NULL, "meshgrid: room for %d results needed, out has %d%s",
                        n, max_out, out ? "" : " (NULL)"), -1;
    lt_tensor *grids[LT_MAX_DIMS];
    lt_scope_begin();
    make_grids(ts, n, indexing_xy, grids);
    return publish_pieces(grids, n, out);
}

lt_tensor *lt_cartesian_prod(lt_tensor *const *ts, int n)
{
    if (check_grid_list("cartesian_prod", ts, n, true) != LT_OK)
        return NULL;
    if (n == 1)
        return lt_clone(ts[0]);
    lt_tensor *grids[LT_MAX_DIMS];
    lt_scope_begin();
    make_grids(ts, n, false, grids);
    for (int i = 0; i < n; i++)
        grids[i] = grids[i] ? lt_reshape(grids[i], FLAT, 1) : NULL;
    bool ok = true;
    for (int i = 0; i < n; i++)
        ok = ok && grids[i];
    return lt_scope_return(ok ? lt_stack(grids, n, 1) : NULL);
}

/* ======================================================================= */
/* where with one argument                                                  */
/* ======================================================================= */

int lt_where_indices(lt_tensor *t, lt_tensor **out, int max_out)
{
    if (lt_check_tensor("where_indices", t, 0) != LT_OK)
        return -1;
    int n = t->ndim > 0 ? t->ndim : 1;
    if (!out || max_out < n)
        return lt_error(out ? LT_ERR_ARGUMENT : LT_ERR_NULL, "where_indices: room for %d results needed, out has "
                        "%d%s", n, max_out, out ? "" : " (NULL)"), -1;
    lt_tensor *cols[LT_MAX_DIMS];
    lt_scope_begin();
    lt_tensor *x = t->ndim > 0 ? t : lt_reshape(t, (const int64_t[]){1}, 1); /* torch: 0-d as [1] */
    lt_tensor *nz = x ? lt_nonzero(x) : NULL; /* [count, n]: a sync */
    for (int d = 0; d < n; d++)
        cols[d] = nz ? lt_contiguous(lt_select(nz, 1, d)) : NULL;
    return publish_pieces(cols, n, out);
}

/* ======================================================================= */
/* searchsorted, bucketize                                                  */
/* ======================================================================= */

/* Checks that sorted is 1-D or has values' leading dims. */
static lt_status check_sorted_shape(const char *op, const lt_tensor *sorted, const lt_tensor *values)
{
    if (sorted->ndim == 0)
        return lt_error(LT_ERR_SHAPE, "%s: the sorted sequence is 0-d, expected at least 1 dim", op);
    if (sorted->ndim == 1)
        return LT_OK;
    bool same = values->ndim == sorted->ndim;
    for (int k = 0; same && k < sorted->ndim - 1; k++)
        same = values->shape[k] == sorted->shape[k];
    if (!same)
        return lt_error(LT_ERR_SHAPE, "%s: a sorted sequence of %d dims needs values with the same leading dims "
                        "(or a 1-D sequence)", op, sorted->ndim);
    return LT_OK;
}

/* The insertion points: for each value, the count of sequence elements
 * that are not >= it (left) or not > it (right); the same as a binary
 * search over an ascending sequence, NaN values included (they go last). */
static lt_tensor *insertion_points(lt_tensor *sorted, lt_tensor *values, bool right, lt_dtype out_dt)
{
    lt_tensor *seq = lt_unsqueeze(sorted, -2), *v = lt_unsqueeze(values, -1);
    lt_tensor *after = right ? lt_gt(seq, v) : lt_ge(seq, v);
    lt_tensor *count = lt_sum_dtype(lt_logical_not(after), (const int[]){-1}, 1, false, out_dt);
    return count ? lt_reshape(count, values->shape, values->ndim) : NULL;
}

static lt_tensor *search(const char *op, lt_tensor *sorted, lt_tensor *values, bool out_int32, bool right)
{
    if (lt_check_tensor(op, sorted, 0) != LT_OK || lt_check_tensor(op, values, 1) != LT_OK ||
        check_sorted_shape(op, sorted, values) != LT_OK)
        return NULL;
    if (sorted->dtype == LT_BOOL || values->dtype == LT_BOOL)
        return lt_error(LT_ERR_DTYPE, "%s: bool tensors are not accepted (as torch)", op), NULL;
    if (values->ndim >= LT_MAX_DIMS)
        return lt_error(LT_ERR_SHAPE, "%s: values have %d dims, at most %d are supported", op, values->ndim,
                        LT_MAX_DIMS - 1), NULL;
    lt_scope_begin();
    return lt_scope_return(insertion_points(sorted, values, right, out_int32 ? LT_I32 : LT_I64));
}

lt_tensor *lt_searchsorted(lt_tensor *sorted, lt_tensor *values, bool out_int32, bool right)
{
    return search("searchsorted", sorted, values, out_int32, right);
}

/* The sequence sorter puts in order: sorted gathered along its last dim. */
static lt_status check_sorter(const lt_tensor *sorted, const lt_tensor *sorter)
{
    if (lt_check_tensor("searchsorted", sorter, 2) != LT_OK)
        return LT_ERR_NULL;
    if (sorter->dtype != LT_I64)
        return lt_error(LT_ERR_DTYPE, "searchsorted: sorter has dtype %s, expected i64 (as torch)",
                        lt_dtype_name(sorter->dtype));
    bool same = sorter->ndim == sorted->ndim;
    for (int k = 0; same && k < sorted->ndim; k++)
        same = sorter->shape[k] == sorted->shape[k];
    if (!same) {
        char a[160], b[160];
        return lt_error(LT_ERR_SHAPE, "searchsorted: sorter has shape %s, expected the sorted sequence's %s",
                        lt_shape_str(sorter->shape, sorter->ndim, a, sizeof a),
                        lt_shape_str(sorted->shape, sorted->ndim, b, sizeof b));
    }
    return LT_OK;
}

lt_tensor *lt_searchsorted_sorter(lt_tensor *sorted, lt_tensor *values, lt_tensor *sorter, bool out_int32,
                                  const char *side)
{
    const char *op = "searchsorted";
    bool right = side && !strcmp(side, "right");
    if (side && !right && strcmp(side, "left"))
        return lt_error(LT_ERR_ARGUMENT, "%s: side is '%s', expected 'left' or 'right'", op, side), NULL;
    if (!sorter)
        return search(op, sorted, values, out_int32, right);
    if (lt_check_tensor(op, sorted, 0) != LT_OK || check_sorter(sorted, sorter) != LT_OK)
        return NULL;
    lt_scope_begin();
    lt_tensor *in_order = lt_gather(sorted, -1, sorter);
    return lt_scope_return(in_order ? search(op, in_order, values, out_int32, right) : NULL);
}

lt_tensor *lt_bucketize(lt_tensor *t, lt_tensor *boundaries, bool out_int32, bool right)
{
    if (lt_check_tensor("bucketize", boundaries, 1) != LT_OK)
        return NULL;
    if (boundaries->ndim != 1)
        return lt_error(LT_ERR_SHAPE, "bucketize: boundaries have %d dims, expected a 1-D tensor",
                        boundaries->ndim), NULL;
    return search("bucketize", boundaries, t, out_int32, right);
}
