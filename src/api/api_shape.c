/*
 * api_shape.c - public view functions (view, reshape, permute, transpose,
 * narrow, slice, select, squeeze, unsqueeze, flatten, expand, diagonal) and
 * indexing/shaping functions (cat, stack, split, chunk, index_select,
 * gather, scatter, masked_fill, one_hot, tril, triu, sort, topk, nonzero,
 * embedding).
 *
 * The wrappers validate what only they know (user-facing conventions such
 * as -1 sizes, negative indices, Python slice clamping), normalize it, and
 * pack the attributes documented in ops.def; the shape rules check the rest.
 * Composite functions (reshape, stack, split, ...) run their intermediate
 * calls inside a scope of their own so temporaries never leak.
 */
#include "api/api.h"

#include <limits.h>
#include <stdlib.h>
#include <string.h>


#define SHAPE_BUF 160

/* ---- helpers ------------------------------------------------------------ */

/* Ends the scope a composite opened for its temporaries and returns r with
 * one reference for the caller (NULL if r is NULL). */
static lt_tensor *end_scope_keep(lt_tensor *r)
{
    lt_tensor *kept = r ? lt_keep(r) : NULL;
    lt_scope_end();
    return kept;
}

static lt_status check_not_0d(const char *op, const lt_tensor *t)
{
    if (t->ndim == 0)
        return lt_error(LT_ERR_INDEX, "%s: cannot be applied to a 0-d tensor", op);
    return LT_OK;
}

/* dim made non-negative when it is a valid negative dim, so that attrs are
 * canonical (the lazy layer hashes and inverts them); out-of-range values
 * are left as given for the shape rule to report. */
static int64_t canonical_dim(int64_t dim, int ndim)
{
    return dim < 0 && dim >= -ndim ? dim + ndim : dim;
}

/* Attributes holding a shape in i[0..nd). */
static lt_attrs shape_attrs(const int64_t *shape, int nd)
{
    lt_attrs a = lt_attrs_init();
    if (nd > 0)
        memcpy(a.i, shape, sizeof(int64_t) * (size_t)nd);
    a.ni = nd;
    return a;
}

/* The VIEW op with an already resolved shape. */
static lt_tensor *view_resolved(lt_tensor *t, const int64_t *shape, int nd)
{
    lt_attrs a = shape_attrs(shape, nd);
    return lt_call1(LT_OP_VIEW, t, &a);
}

/* View when t's strides allow it, else a view of a contiguous copy. */
static lt_tensor *reshape_resolved(lt_tensor *t, const int64_t *shape, int nd)
{
    int64_t strides[LT_MAX_DIMS];
    if (lt_view_strides(t->shape, t->strides, t->ndim, shape, nd, strides))
        return view_resolved(t, shape, nd);
    lt_scope_begin();
    return end_scope_keep(view_resolved(lt_contiguous(t), shape, nd));
}

/* Checks the number of dims and the dims pointer of a user shape. */
static lt_status check_dims_arg(const char *op, const int64_t *dims, int ndim)
{
    if (ndim < 0 || ndim > LT_MAX_DIMS)
        return lt_error(LT_ERR_SHAPE, "%s: %d dims requested, expected 0..%d", op, ndim, LT_MAX_DIMS);
    if (ndim > 0 && !dims)
        return lt_error(LT_ERR_NULL, "%s: dims is NULL but ndim is %d", op, ndim);
    return LT_OK;
}

/* Resolves a view/reshape shape for t: at most one -1 (inferred), other
 * sizes >= 0, the same element count as t, and a valid shape
 * (lt_check_shape). */
static lt_status resolve_shape(const char *op, const lt_tensor *t, const int64_t *dims, int ndim, int64_t *out)
{
    lt_status st = check_dims_arg(op, dims, ndim);
    if (st != LT_OK)
        return st;
    char s1[SHAPE_BUF], s2[SHAPE_BUF];
    lt_shape_str(dims, ndim, s1, sizeof s1);
    lt_shape_str(t->shape, t->ndim, s2, sizeof s2);
    int infer = -1;
    for (int i = 0; i < ndim; i++) {
        out[i] = dims[i] == -1 ? 1 : dims[i];
        if (dims[i] == -1 && infer >= 0)
            return lt_error(LT_ERR_SHAPE, "%s: only one size can be -1 (inferred), but dims %d and %d of %s are -1",
                            op, infer, i, s1);
        if (dims[i] == -1)
            infer = i;
        else if (dims[i] < 0)
            return lt_error(LT_ERR_SHAPE, "%s: invalid size %lld at dim %d of shape %s (sizes must be >= 0 or -1)", op,
                            (long long)dims[i], i, s1);
    }
    int64_t known, numel = lt_shape_numel(t->shape, t->ndim);
    bool fits = lt_shape_numel_checked(out, ndim, &known); /* an overflowing count matches no tensor */
    if (fits && infer >= 0 && known == 0 && numel == 0)
        return lt_error(LT_ERR_SHAPE,
                        "%s: cannot reshape a tensor of 0 elements into shape %s: the -1 size is ambiguous", op, s1);
    bool ok = fits && (infer >= 0 ? known != 0 && numel % known == 0 : known == numel);
    if (!ok)
        return lt_error(LT_ERR_SHAPE, "%s: shape %s is invalid for input of shape %s (%lld elements)", op, s1, s2,
                        (long long)numel);
    if (infer >= 0)
        out[infer] = numel / known;
    /* same element count as t, but an empty shape may still span too much */
    return lt_check_shape(op, out, ndim, (lt_dtype)t->dtype);
}

/* ======================================================================= */
/* Views                                                                    */
/* ======================================================================= */

lt_tensor *lt_view(lt_tensor *t, const int64_t *dims, int ndim)
{
    int64_t shape[LT_MAX_DIMS];
    if (lt_check_tensor("view", t, 0) != LT_OK || resolve_shape("view", t, dims, ndim, shape) != LT_OK)
        return NULL;
    return view_resolved(t, shape, ndim);
}

lt_tensor *lt_reshape(lt_tensor *t, const int64_t *dims, int ndim)
{
    int64_t shape[LT_MAX_DIMS];
    if (lt_check_tensor("reshape", t, 0) != LT_OK || resolve_shape("reshape", t, dims, ndim, shape) != LT_OK)
        return NULL;
    return reshape_resolved(t, shape, ndim);
}

lt_tensor *lt_permute(lt_tensor *t, const int *perm, int ndim)
{
    if (lt_check_tensor("permute", t, 0) != LT_OK)
        return NULL;
    if (ndim != t->ndim)
        return lt_error(LT_ERR_ARGUMENT, "permute: %d dims given for a %d-d tensor, expected %d", ndim, t->ndim,
                        t->ndim), NULL;
    if (ndim > 0 && !perm)
        return lt_error(LT_ERR_NULL, "permute: perm is NULL but ndim is %d", ndim), NULL;
    lt_attrs a = lt_attrs_init();
    for (int i = 0; i < ndim; i++)
        a.i[i] = canonical_dim(perm[i], ndim);
    a.ni = ndim;
    return lt_call1(LT_OP_PERMUTE, t, &a);
}

lt_tensor *lt_transpose(lt_tensor *t, int dim0, int dim1)
{
    int d0 = 0, d1 = 0;
    if (lt_check_tensor("transpose", t, 0) != LT_OK || lt_normalize_dim("transpose", dim0, t->ndim, &d0) != LT_OK ||
        lt_normalize_dim("transpose", dim1, t->ndim, &d1) != LT_OK)
        return NULL;
    lt_attrs a = lt_attrs_init();
    for (int i = 0; i < t->ndim; i++)
        a.i[i] = i;
    a.ni = t->ndim;
    if (t->ndim > 0) {
        a.i[d0] = d1;
        a.i[d1] = d0;
    }
    return lt_call1(LT_OP_PERMUTE, t, &a);
}

/* SLICE with normalized start <= end <= size and step > 0. */
static lt_tensor *slice_normalized(lt_tensor *t, int dim, int64_t start, int64_t end, int64_t step)
{
    lt_attrs a = lt_attrs_init();
    a.i[0] = dim;
    a.i[1] = start;
    a.i[2] = end;
    a.i[3] = step;
    a.ni = 4;
    return lt_call1(LT_OP_SLICE, t, &a);
}

lt_tensor *lt_narrow(lt_tensor *t, int dim, int64_t start, int64_t length)
{
    int d = 0;
    if (lt_check_tensor("narrow", t, 0) != LT_OK || check_not_0d("narrow", t) != LT_OK ||
        lt_normalize_dim("narrow", dim, t->ndim, &d) != LT_OK)
        return NULL;
    int64_t size = t->shape[d];
    if (start < -size || start > size)
        return lt_error(LT_ERR_INDEX, "narrow: start %lld is out of range for dim %d of size %lld (expected %lld..%lld)",
                        (long long)start, d, (long long)size, (long long)-size, (long long)size), NULL;
    if (start < 0)
        start += size;
    if (length < 0 || length > size - start)
        return lt_error(LT_ERR_ARGUMENT, "narrow: start %lld + length %lld does not fit in dim %d of size %lld",
                        (long long)start, (long long)length, d, (long long)size), NULL;
    return slice_normalized(t, d, start, start + length, 1);
}

/* Python's clamping of a slice bound into [0, size]. */
static int64_t clamp_bound(int64_t v, int64_t size)
{
    if (v < 0)
        v += size; /* no overflow: size >= 0 */
    return v < 0 ? 0 : v > size ? size : v;
}

lt_tensor *lt_slice(lt_tensor *t, int dim, int64_t start, int64_t end, int64_t step)
{
    int d = 0;
    if (lt_check_tensor("slice", t, 0) != LT_OK || check_not_0d("slice", t) != LT_OK ||
        lt_normalize_dim("slice", dim, t->ndim, &d) != LT_OK)
        return NULL;
    if (step <= 0)
        return lt_error(LT_ERR_ARGUMENT, "slice: step is %lld, expected a positive step", (long long)step), NULL;
    int64_t size = t->shape[d];
    start = clamp_bound(start, size);
    end = clamp_bound(end, size);
    return slice_normalized(t, d, start, end < start ? start : end, step);
}

lt_tensor *lt_select(lt_tensor *t, int dim, int64_t index)
{
    int d = 0;
    if (lt_check_tensor("select", t, 0) != LT_OK || check_not_0d("select", t) != LT_OK ||
        lt_normalize_dim("select", dim, t->ndim, &d) != LT_OK)
        return NULL;
    int64_t size = t->shape[d];
    if (size == 0)
        return lt_error(LT_ERR_INDEX, "select: index %lld is out of range for dim %d of size 0 (no index is valid)",
                        (long long)index, d), NULL;
    if (index < -size || index >= size)
        return lt_error(LT_ERR_INDEX, "select: index %lld is out of range for dim %d of size %lld (expected %lld..%lld)",
                        (long long)index, d, (long long)size, (long long)-size, (long long)size - 1), NULL;
    lt_attrs a = lt_attrs_init();
    a.i[0] = d;
    a.i[1] = index < 0 ? index + size : index;
    a.ni = 2;
    return lt_call1(LT_OP_SELECT, t, &a);
}

lt_tensor *lt_squeeze(lt_tensor *t, int dim)
{
    int d = 0;
    if (lt_check_tensor("squeeze", t, 0) != LT_OK || lt_normalize_dim("squeeze", dim, t->ndim, &d) != LT_OK)
        return NULL;
    int64_t shape[LT_MAX_DIMS];
    int nd = 0;
    for (int k = 0; k < t->ndim; k++)
        if (k != d || t->shape[k] != 1)
            shape[nd++] = t->shape[k];
    return view_resolved(t, shape, nd);
}

lt_tensor *lt_squeeze_all(lt_tensor *t)
{
    if (lt_check_tensor("squeeze_all", t, 0) != LT_OK)
        return NULL;
    int64_t shape[LT_MAX_DIMS];
    int nd = 0;
    for (int k = 0; k < t->ndim; k++)
        if (t->shape[k] != 1)
            shape[nd++] = t->shape[k];
    return view_resolved(t, shape, nd);
}

/* Normalizes a position for a new dim (0..ndim, negative from the end). */
static lt_status normalize_new_dim(const char *op, int dim, int ndim, int *out)
{
    if (ndim >= LT_MAX_DIMS)
        return lt_error(LT_ERR_SHAPE, "%s: a %d-d tensor cannot get another dim (at most %d dims)", op, ndim,
                        LT_MAX_DIMS);
    if (dim < -(ndim + 1) || dim > ndim)
        return lt_error(LT_ERR_INDEX, "%s: dim %d out of range for a %d-d tensor (expected %d..%d)", op, dim, ndim,
                        -(ndim + 1), ndim);
    *out = dim < 0 ? dim + ndim + 1 : dim;
    return LT_OK;
}

lt_tensor *lt_unsqueeze(lt_tensor *t, int dim)
{
    int d = 0;
    if (lt_check_tensor("unsqueeze", t, 0) != LT_OK || normalize_new_dim("unsqueeze", dim, t->ndim, &d) != LT_OK)
        return NULL;
    int64_t shape[LT_MAX_DIMS];
    int nd = 0;
    for (int k = 0; k <= t->ndim; k++) {
        if (k == d)
            shape[nd++] = 1;
        if (k < t->ndim)
            shape[nd++] = t->shape[k];
    }
    return view_resolved(t, shape, nd);
}

lt_tensor *lt_expand(lt_tensor *t, const int64_t *dims, int ndim)
{
    if (lt_check_tensor("expand", t, 0) != LT_OK || check_dims_arg("expand", dims, ndim) != LT_OK)
        return NULL;
    if (ndim < t->ndim)
        return lt_error(LT_ERR_SHAPE, "expand: %d sizes given for a %d-d tensor (expected at least %d)", ndim, t->ndim,
                        t->ndim), NULL;
    int lead = ndim - t->ndim;
    lt_attrs a = shape_attrs(dims, ndim);
    for (int d = 0; d < ndim; d++) {
        if (dims[d] != -1)
            continue;
        if (d < lead)
            return lt_error(LT_ERR_SHAPE, "expand: size -1 is not allowed for the new leading dim %d", d), NULL;
        a.i[d] = t->shape[d - lead];
    }
    return lt_call1(LT_OP_EXPAND, t, &a);
}

lt_tensor *lt_flatten(lt_tensor *t, int start_dim, int end_dim)
{
    int s = 0, e = 0;
    if (lt_check_tensor("flatten", t, 0) != LT_OK || lt_normalize_dim("flatten", start_dim, t->ndim, &s) != LT_OK ||
        lt_normalize_dim("flatten", end_dim, t->ndim, &e) != LT_OK)
        return NULL;
    if (s > e)
        return lt_error(LT_ERR_ARGUMENT, "flatten: start_dim %d comes after end_dim %d", s, e), NULL;
    int64_t shape[LT_MAX_DIMS];
    int nd = 0;
    if (t->ndim == 0) {
        shape[nd++] = 1;
    } else {
        for (int k = 0; k < s; k++)
            shape[nd++] = t->shape[k];
        shape[nd++] = lt_shape_numel(t->shape + s, e - s + 1);
        for (int k = e + 1; k < t->ndim; k++)
            shape[nd++] = t->shape[k];
    }
    return reshape_resolved(t, shape, nd);
}

lt_tensor *lt_diagonal(lt_tensor *t, int64_t offset, int dim1, int dim2)
{
    if (lt_check_tensor("diagonal", t, 0) != LT_OK)
        return NULL;
    lt_attrs a = lt_attrs_init();
    a.i[0] = offset;
    a.i[1] = canonical_dim(dim1, t->ndim);
    a.i[2] = canonical_dim(dim2, t->ndim);
    a.ni = 3;
    return lt_call1(LT_OP_DIAGONAL, t, &a);
}

/* ======================================================================= */
/* Indexing and shaping                                                     */
/* ======================================================================= */

static lt_status check_list(const char *op, lt_tensor *const *ts, int n)
{
    if (n <= 0)
        return lt_error(LT_ERR_ARGUMENT, "%s: expected a non-empty list of tensors, got n = %d", op, n);
    if (!ts)
        return lt_error(LT_ERR_NULL, "%s: the tensor list is NULL", op);
    return LT_OK;
}

/* torch's legacy rule: a 1-D tensor of size 0 may join a cat of tensors of
 * any shape; it adds nothing but its dtype. */
static bool legacy_empty(lt_tensor *t) { return t->ndim == 1 && t->shape[0] == 0; }

/* cat of ts without its legacy empty tensors (when some other is not),
 * in the dtype of all of them. */
static lt_tensor *cat_skipping_empties(lt_tensor *const *ts, int n, int dim, bool *done)
{
    int keep = 0;
    for (int i = 0; i < n; i++) {
        if (lt_check_tensor("cat", ts[i], i) != LT_OK) {
            *done = true;
            return NULL;
        }
        keep += !legacy_empty(ts[i]);
    }
    *done = keep > 0 && keep < n;
    if (!*done)
        return NULL;
    lt_dtype dt = (lt_dtype)ts[0]->dtype;
    lt_tensor **kept = malloc(sizeof *kept * (size_t)keep);
    if (!kept)
        return lt_error(LT_ERR_MEMORY, "cat: out of memory"), NULL;
    for (int i = 0, k = 0; i < n; i++) {
        dt = lt_promote_types(dt, (lt_dtype)ts[i]->dtype);
        if (!legacy_empty(ts[i]))
            kept[k++] = ts[i];
    }
    lt_scope_begin();
    lt_tensor *r = lt_cat(kept, keep, dim);
    if (r && lt_tensor_dtype(r) != dt)
        r = lt_to_dtype(r, dt);
    if (r)
        r = lt_keep(r);
    lt_scope_end();
    free(kept);
    return r;
}

lt_tensor *lt_cat(lt_tensor *const *ts, int n, int dim)
{
    if (check_list("cat", ts, n) != LT_OK)
        return NULL;
    bool done;
    lt_tensor *r = cat_skipping_empties(ts, n, dim, &done);
    if (done)
        return r;
    lt_attrs a = lt_attrs_init();
    a.i[0] = dim;
    a.ni = 1;
    return lt_call(LT_OP_CAT, ts, n, &a, NULL);
}

/* Tensor lists up to this long live on the stack. */
#define SMALL_LIST 16

/* Checks the shape of the result of stacking n tensors along new dim d,
 * so that an oversized result is named as stack's, not cat's. */
static lt_status check_stacked_shape(lt_tensor *const *ts, int n, int d)
{
    int64_t shape[LT_MAX_DIMS];
    lt_dtype dt = (lt_dtype)ts[0]->dtype;
    for (int i = 1; i < n; i++)
        dt = lt_promote_types(dt, (lt_dtype)ts[i]->dtype);
    for (int k = 0, j = 0; k <= ts[0]->ndim; k++)
        shape[k] = k == d ? n : ts[0]->shape[j++];
    return lt_check_shape("stack", shape, ts[0]->ndim + 1, dt);
}

lt_tensor *lt_stack(lt_tensor *const *ts, int n, int dim)
{
    if (check_list("stack", ts, n) != LT_OK)
        return NULL;
    for (int i = 0; i < n; i++)
        if (lt_check_tensor("stack", ts[i], i) != LT_OK)
            return NULL;
    for (int i = 1; i < n; i++) {
        if (!lt_shape_equal(ts[i]->shape, ts[i]->ndim, ts[0]->shape, ts[0]->ndim)) {
            char s1[SHAPE_BUF], s2[SHAPE_BUF];
            return lt_error(LT_ERR_SHAPE, "stack: tensor %d has shape %s but tensor 0 has shape %s (expected equal shapes)",
                            i, lt_shape_str(ts[i]->shape, ts[i]->ndim, s1, sizeof s1),
                            lt_shape_str(ts[0]->shape, ts[0]->ndim, s2, sizeof s2)), NULL;
        }
    }
    int d = 0;
    if (normalize_new_dim("stack", dim, ts[0]->ndim, &d) != LT_OK || check_stacked_shape(ts, n, d) != LT_OK)
        return NULL;
    lt_tensor *small[SMALL_LIST];
    lt_tensor **parts = n <= SMALL_LIST ? small : malloc(sizeof *parts * (size_t)n);
    if (!parts)
        return lt_error(LT_ERR_MEMORY, "stack: out of memory for %d tensors", n), NULL;
    lt_scope_begin();
    lt_tensor *r = NULL;
    bool ok = true;
    for (int i = 0; i < n && ok; i++)
        ok = (parts[i] = lt_unsqueeze(ts[i], d)) != NULL;
    if (ok)
        r = lt_cat(parts, n, d);
    r = end_scope_keep(r);
    if (parts != small)
        free(parts);
    return r;
}

/*
 * Writes `count` views of t along dim: piece i starts at i * piece and is
 * min(piece, size - start) long. Nothing is written (and -1 returned) on
 * error or if out cannot hold them all.
 */
static int split_pieces(const char *op, lt_tensor *t, int dim, int64_t piece, int64_t count, lt_tensor **out,
                        int max_out)
{
    if (count > max_out)
        return lt_error(LT_ERR_ARGUMENT, "%s: %lld pieces do not fit in max_out = %d", op, (long long)count, max_out), -1;
    if (!out)
        return lt_error(LT_ERR_NULL, "%s: out is NULL", op), -1;
    int64_t size = t->shape[dim];
    lt_tensor *small[SMALL_LIST];
    lt_tensor **pieces = count <= SMALL_LIST ? small : malloc(sizeof *pieces * (size_t)count);
    if (!pieces)
        return lt_error(LT_ERR_MEMORY, "%s: out of memory for %lld pieces", op, (long long)count), -1;
    lt_scope_begin();
    bool ok = true;
    for (int64_t i = 0; i < count && ok; i++) {
        int64_t start = i * piece, len = size - start < piece ? size - start : piece;
        ok = (pieces[i] = slice_normalized(t, dim, start, start + len, 1)) != NULL;
    }
    /* hand every piece to the caller only once all exist */
    for (int64_t i = 0; i < count && ok; i++)
        ok = lt_keep(pieces[i]) != NULL;
    if (ok)
        memcpy(out, pieces, sizeof *pieces * (size_t)count);
    lt_scope_end();
    if (pieces != small)
        free(pieces);
    return ok ? (int)count : -1;
}

/* Validates t and dim for split/chunk and returns the normalized dim. */
static lt_status split_prepare(const char *op, lt_tensor *t, int dim, int *d)
{
    if (lt_check_tensor(op, t, 0) != LT_OK)
        return lt_last_status();
    if (t->ndim == 0)
        return lt_error(LT_ERR_INDEX, "%s: expects at least a 1-d tensor, got a 0-d tensor", op);
    return lt_normalize_dim(op, dim, t->ndim, d);
}

int lt_split(lt_tensor *t, int64_t split_size, int dim, lt_tensor **out, int max_out)
{
    int d = 0;
    if (split_prepare("split", t, dim, &d) != LT_OK)
        return -1;
    int64_t size = t->shape[d];
    if (split_size < 0 || (split_size == 0 && size > 0))
        return lt_error(LT_ERR_ARGUMENT, "split: split_size %lld is invalid for dim %d of size %lld "
                                         "(expected > 0; 0 only for an empty dim)",
                        (long long)split_size, d, (long long)size), -1;
    int64_t count = size == 0 ? 1 : size / split_size + (size % split_size != 0);
    return split_pieces("split", t, d, split_size, count, out, max_out);
}

int lt_chunk(lt_tensor *t, int chunks, int dim, lt_tensor **out, int max_out)
{
    int d = 0;
    if (split_prepare("chunk", t, dim, &d) != LT_OK)
        return -1;
    if (chunks <= 0)
        return lt_error(LT_ERR_ARGUMENT, "chunk: chunks is %d, expected > 0", chunks), -1;
    int64_t size = t->shape[d];
    int64_t piece = size / chunks + (size % chunks != 0);
    /* like torch, an empty dim gives `chunks` empty pieces */
    int64_t count = size == 0 ? chunks : size / piece + (size % piece != 0);
    return split_pieces("chunk", t, d, piece, count, out, max_out);
}

lt_tensor *lt_index_select(lt_tensor *t, int dim, lt_tensor *index)
{
    lt_attrs a = lt_attrs_init();
    a.i[0] = dim;
    a.ni = 1;
    return lt_call2(LT_OP_INDEX_SELECT, t, index, &a);
}

lt_tensor *lt_gather(lt_tensor *t, int dim, lt_tensor *index)
{
    lt_attrs a = lt_attrs_init();
    a.i[0] = dim;
    a.ni = 1;
    if (lt_check_tensor("gather", t, 0) != LT_OK || lt_check_tensor("gather", index, 2) != LT_OK)
        return NULL;
    if (t->ndim == 0 && index->ndim == 1 && (dim == 0 || dim == -1)) {
        /* torch: a 0-d input acts as one of shape [1] */
        lt_scope_begin();
        lt_tensor *r = lt_call2(LT_OP_GATHER, lt_reshape(t, (const int64_t[]){1}, 1), index, &a);
        if (r)
            r = lt_keep(r);
        lt_scope_end();
        return r;
    }
    return lt_call2(LT_OP_GATHER, t, index, &a);
}

static lt_tensor *scatter_call(lt_op op, lt_tensor *t, int dim, lt_tensor *index, lt_tensor *src)
{
    lt_attrs a = lt_attrs_init();
    a.i[0] = dim;
    a.ni = 1;
    lt_tensor *in[3] = {t, index, src};
    return lt_call(op, in, 3, &a, NULL);
}

lt_tensor *lt_scatter(lt_tensor *t, int dim, lt_tensor *index, lt_tensor *src)
{
    return scatter_call(LT_OP_SCATTER, t, dim, index, src);
}

lt_tensor *lt_scatter_add(lt_tensor *t, int dim, lt_tensor *index, lt_tensor *src)
{
    return scatter_call(LT_OP_SCATTER_ADD, t, dim, index, src);
}

lt_tensor *lt_masked_fill(lt_tensor *t, lt_tensor *mask, double value)
{
    lt_attrs a = lt_attrs_init();
    a.f[0] = value;
    a.nf = 1;
    if (lt_check_tensor("masked_fill", t, 0) != LT_OK || lt_check_tensor("masked_fill", mask, 1) != LT_OK)
        return NULL;
    lt_meta mt = lt_tensor_meta(t), mm = lt_tensor_meta(mask), both;
    if (lt_broadcast_shapes("masked_fill", &mt, &mm, &both) != LT_OK)
        return NULL;
    if (lt_shape_equal(both.shape, both.ndim, mt.shape, mt.ndim))
        return lt_call2(LT_OP_MASKED_FILL, t, mask, &a);
    /* a mask broadcasting beyond t: t expanded to the common shape, as
     * torch's out-of-place masked_fill */
    lt_scope_begin();
    lt_tensor *wide = lt_expand(t, both.shape, both.ndim);
    lt_tensor *r = wide ? lt_call2(LT_OP_MASKED_FILL, wide, mask, &a) : NULL;
    if (r)
        r = lt_keep(r);
    lt_scope_end();
    return r;
}

lt_tensor *lt_one_hot(lt_tensor *indices, int64_t num_classes)
{
    lt_attrs a = lt_attrs_init();
    a.i[0] = num_classes;
    a.ni = 1;
    return lt_call1(LT_OP_ONE_HOT, indices, &a);
}

static lt_tensor *triangle(lt_op op, lt_tensor *t, int64_t k)
{
    lt_attrs a = lt_attrs_init();
    a.i[0] = k;
    a.ni = 1;
    return lt_call1(op, t, &a);
}

lt_tensor *lt_tril(lt_tensor *t, int64_t k) { return triangle(LT_OP_TRIL, t, k); }
lt_tensor *lt_triu(lt_tensor *t, int64_t k) { return triangle(LT_OP_TRIU, t, k); }

/* Runs a two-output op; the second output goes to *second when asked for
 * (set to NULL on failure). */
static lt_tensor *call_pair(lt_op op, lt_tensor *t, const lt_attrs *a, lt_tensor **second)
{
    lt_tensor *extra[1] = {NULL};
    lt_tensor *r = lt_call(op, &t, 1, a, second ? extra : NULL);
    if (second)
        *second = r ? extra[0] : NULL;
    return r;
}

lt_tensor *lt_sort(lt_tensor *t, int dim, bool descending, lt_tensor **indices)
{
    lt_attrs a = lt_attrs_init();
    a.i[0] = dim;
    a.ni = 1;
    a.flag = descending ? 1 : 0;
    return call_pair(LT_OP_SORT, t, &a, indices);
}

lt_tensor *lt_topk(lt_tensor *t, int64_t k, int dim, bool largest, lt_tensor **indices)
{
    lt_attrs a = lt_attrs_init();
    a.i[0] = k;
    a.i[1] = dim;
    a.ni = 2;
    a.flag = largest ? 1 : 0;
    return call_pair(LT_OP_TOPK, t, &a, indices);
}

lt_tensor *lt_nonzero(lt_tensor *t) { return lt_call1(LT_OP_NONZERO, t, NULL); }

lt_tensor *lt_embedding(lt_tensor *weight, lt_tensor *indices)
{
    return lt_call2(LT_OP_EMBEDDING, weight, indices, NULL);
}
