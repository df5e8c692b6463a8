/*
 * api_reshape_ext.c - PyTorch's rearranging functions built on the view
 * and indexing ops: flip, roll, rot90, repeat, tile, repeat_interleave,
 * unbind, movedim and split by sizes. (pad is in api_pad.c.)
 *
 * Every function is a composition of ops that the lazy device traces and
 * the compiler lowers (views, index_select, cat, expand plus a copy), so
 * nothing here falls back, and the gradients come from those ops. Only
 * lt_repeat_interleave_tensor reads data: its output size depends on the
 * repeat counts. Intermediates live in a scope of their own.
 */
#include "api/api.h"
#include "api/compose.h"

#include <stdlib.h>
#include <string.h>

/* Checks a list argument: n in 0..LT_MAX_DIMS, and a pointer when n > 0. */
static lt_status check_count(const char *op, const char *what, const void *p, int n, int max)
{
    if (n < 0 || n > max)
        return lt_error(LT_ERR_ARGUMENT, "%s: %d %s given, expected 0..%d", op, n, what, max);
    if (n > 0 && !p)
        return lt_error(LT_ERR_NULL, "%s: %s is NULL but its length is %d", op, what, n);
    return LT_OK;
}

/* Normalizes dims[0..n) for an ndim-d tensor into out, refusing repeats. */
static lt_status normalize_distinct_dims(const char *op, const int *dims, int n, int ndim, int *out)
{
    bool seen[LT_MAX_DIMS] = {false};
    for (int i = 0; i < n; i++) {
        if (lt_normalize_dim(op, dims[i], ndim, &out[i]) != LT_OK)
            return lt_last_status();
        if (seen[out[i]])
            return lt_error(LT_ERR_ARGUMENT, "%s: dim %d appears more than once in the list of dims", op, out[i]);
        seen[out[i]] = true;
    }
    return LT_OK;
}

/* ======================================================================= */
/* flip, roll, rot90                                                        */
/* ======================================================================= */

/* t reversed along dim d (a gather with the indices size-1 .. 0). */
static lt_tensor *reverse_dim(lt_tensor *t, int d)
{
    int64_t size = t->shape[d];
    if (size <= 1)
        return t;
    return lt_index_select(t, d, lt_arange((double)(size - 1), -1.0, -1.0, LT_I64, t->device));
}

lt_tensor *lt_flip(lt_tensor *t, const int *dims, int ndims)
{
    int d[LT_MAX_DIMS];
    if (lt_check_tensor("flip", t, 0) != LT_OK || check_count("flip", "dims", dims, ndims, LT_MAX_DIMS) != LT_OK ||
        normalize_distinct_dims("flip", dims, ndims, t->ndim, d) != LT_OK)
        return NULL;
    lt_scope_begin();
    lt_tensor *r = t;
    for (int i = 0; i < ndims && r && t->ndim > 0; i++)
        r = reverse_dim(r, d[i]);
    return lt_scope_return(r == t ? lt_clone(t) : r);
}

/* t rolled by shift along dim d: the last (shift mod size) slices first. */
static lt_tensor *roll_dim(lt_tensor *t, int64_t shift, int d)
{
    int64_t size = t->shape[d];
    if (size == 0)
        return t;
    int64_t s = ((shift % size) + size) % size;
    if (s == 0)
        return t;
    lt_tensor *parts[2] = {lt_narrow(t, d, size - s, s), lt_narrow(t, d, 0, size - s)};
    return parts[0] && parts[1] ? lt_cat(parts, 2, d) : NULL;
}

static lt_tensor *roll_in_scope(lt_tensor *t, const int64_t *shifts, const int *dims, int ndims)
{
    if (ndims == 0) { /* torch: roll the flattened tensor, keep the shape */
        lt_tensor *flat = lt_reshape(t, (const int64_t[]){-1}, 1);
        lt_tensor *rolled = flat ? roll_dim(flat, shifts[0], 0) : NULL;
        return rolled ? lt_reshape(rolled, t->shape, t->ndim) : NULL;
    }
    lt_tensor *r = t;
    for (int i = 0; i < ndims && r; i++) {
        int d = 0;
        if (lt_normalize_dim("roll", dims[i], t->ndim, &d) != LT_OK)
            return NULL;
        if (t->ndim == 0)
            return lt_error(LT_ERR_INDEX, "roll: dim %d given for a 0-d tensor (use no dims)", dims[i]), NULL;
        r = roll_dim(r, shifts[i], d); /* a dim given twice rolls twice, as torch */
    }
    return r;
}

lt_tensor *lt_roll(lt_tensor *t, const int64_t *shifts, int nshifts, const int *dims, int ndims)
{
    if (lt_check_tensor("roll", t, 0) != LT_OK || check_count("roll", "shifts", shifts, nshifts, LT_MAX_DIMS) != LT_OK ||
        check_count("roll", "dims", dims, ndims, LT_MAX_DIMS) != LT_OK)
        return NULL;
    if (nshifts == 0 || (ndims == 0 ? nshifts != 1 : nshifts != ndims))
        return lt_error(LT_ERR_ARGUMENT, "roll: %d shifts and %d dims given, expected as many shifts as dims (one "
                        "shift when no dims are given)", nshifts, ndims), NULL;
    lt_scope_begin();
    lt_tensor *r = roll_in_scope(t, shifts, dims, ndims);
    return lt_scope_return(r == t ? lt_clone(t) : r);
}

lt_tensor *lt_rot90(lt_tensor *t, int64_t k, int dim0, int dim1)
{
    int d0 = 0, d1 = 0;
    if (lt_check_tensor("rot90", t, 0) != LT_OK)
        return NULL;
    if (t->ndim < 2)
        return lt_error(LT_ERR_SHAPE, "rot90: expects a tensor of at least 2 dims, got %d", t->ndim), NULL;
    if (lt_normalize_dim("rot90", dim0, t->ndim, &d0) != LT_OK || lt_normalize_dim("rot90", dim1, t->ndim, &d1) != LT_OK)
        return NULL;
    if (d0 == d1)
        return lt_error(LT_ERR_ARGUMENT, "rot90: the rotation dims must differ, got %d and %d", dim0, dim1), NULL;
    int turns = (int)(((k % 4) + 4) % 4);
    lt_scope_begin();
    lt_tensor *r;
    if (turns == 1)
        r = lt_transpose(reverse_dim(t, d1), d0, d1);
    else if (turns == 2)
        r = reverse_dim(reverse_dim(t, d0), d1);
    else if (turns == 3)
        r = lt_transpose(reverse_dim(t, d0), d0, d1);
    else
        r = t;
    /* a fresh tensor, as torch (transposes of a gather are views of it) */
    return lt_scope_return(r == t ? lt_clone(t) : lt_contiguous(r));
}

/* ======================================================================= */
/* repeat, tile, repeat_interleave                                          */
/* ======================================================================= */

/* t with every slice along d repeated `times` times in a row
 * (unsqueeze, expand, merge). */
static lt_tensor *interleave_dim(lt_tensor *t, int d, int64_t times)
{
    int64_t wide[LT_MAX_DIMS], merged[LT_MAX_DIMS];
    int nd = t->ndim;
    for (int k = 0, j = 0; k <= nd; k++)
        wide[k] = k == d + 1 ? times : t->shape[j++];
    for (int k = 0; k < nd; k++)
        merged[k] = k == d ? t->shape[d] * times : t->shape[k];
    lt_tensor *e = lt_expand(lt_unsqueeze(t, d + 1), wide, nd + 1);
    return e ? lt_reshape(e, merged, nd) : NULL;
}

/* t with the whole of it repeated `times` times along d. */
static lt_tensor *repeat_dim(lt_tensor *t, int d, int64_t times)
{
    int64_t wide[LT_MAX_DIMS], merged[LT_MAX_DIMS];
    int nd = t->ndim;
    for (int k = 0, j = 0; k <= nd; k++)
        wide[k] = k == d ? times : t->shape[j++];
    for (int k = 0; k < nd; k++)
        merged[k] = k == d ? t->shape[d] * times : t->shape[k];
    lt_tensor *e = lt_expand(lt_unsqueeze(t, d), wide, nd + 1);
    return e ? lt_reshape(e, merged, nd) : NULL;
}

/* The result shape of repeat (reps already as long as the result's rank),
 * checked for size and overflow. */
static lt_status check_repeat_shape(const char *op, const lt_tensor *t, const int64_t *reps, int n)
{
    int64_t shape[LT_MAX_DIMS];
    int lead = n - t->ndim;
    for (int k = 0; k < n; k++) {
        if (reps[k] < 0)
            return lt_error(LT_ERR_ARGUMENT, "%s: repeat count %lld at dim %d is negative, expected >= 0", op,
                            (long long)reps[k], k);
        int64_t s = k < lead ? 1 : t->shape[k - lead];
        if (s != 0 && reps[k] > INT64_MAX / s)
            return lt_error(LT_ERR_SHAPE, "%s: repeating dim %d of size %lld %lld times overflows", op, k,
                            (long long)s, (long long)reps[k]);
        shape[k] = s * reps[k];
    }
    return lt_check_shape(op, shape, n, (lt_dtype)t->dtype);
}

static lt_tensor *repeat_in_scope(lt_tensor *t, const int64_t *reps, int n)
{
    int64_t shape[LT_MAX_DIMS] = {0};
    int lead = n - t->ndim;
    for (int k = 0; k < n; k++)
        shape[k] = k < lead ? 1 : t->shape[k - lead];
    lt_tensor *r = lt_reshape(t, shape, n);
    for (int k = 0; k < n && r; k++)
        if (reps[k] != 1)
            r = repeat_dim(r, k, reps[k]);
    return r;
}

lt_tensor *lt_repeat(lt_tensor *t, const int64_t *repeats, int n)
{
    if (lt_check_tensor("repeat", t, 0) != LT_OK || check_count("repeat", "repeats", repeats, n, LT_MAX_DIMS - 1) != LT_OK)
        return NULL;
    if (n < t->ndim)
        return lt_error(LT_ERR_ARGUMENT, "repeat: %d repeat counts for a %d-d tensor, expected at least %d", n,
                        t->ndim, t->ndim), NULL;
    if (check_repeat_shape("repeat", t, repeats, n) != LT_OK)
        return NULL;
    lt_scope_begin();
    lt_tensor *r = repeat_in_scope(t, repeats, n);
    return lt_scope_return(r ? lt_contiguous(r) : NULL);
}

lt_tensor *lt_tile(lt_tensor *t, const int64_t *reps, int n)
{
    if (lt_check_tensor("tile", t, 0) != LT_OK || check_count("tile", "reps", reps, n, LT_MAX_DIMS - 1) != LT_OK)
        return NULL;
    int64_t full[LT_MAX_DIMS];
    int nd = n > t->ndim ? n : t->ndim, lead = nd - n;
    for (int k = 0; k < nd; k++)
        full[k] = k < lead ? 1 : reps[k - lead];
    if (check_repeat_shape("tile", t, full, nd) != LT_OK)
        return NULL;
    lt_scope_begin();
    lt_tensor *r = repeat_in_scope(t, full, nd);
    return lt_scope_return(r ? lt_contiguous(r) : NULL);
}

/* t flattened when dim is NULL, else t; *d gets the dim to work on. */
static lt_tensor *interleave_input(const char *op, lt_tensor *t, const int *dim, int *d)
{
    if (!dim) {
        *d = 0;
        return lt_reshape(t, (const int64_t[]){-1}, 1);
    }
    if (t->ndim == 0)
        return lt_error(LT_ERR_INDEX, "%s: dim %d given for a 0-d tensor (pass no dim to flatten it)", op, *dim),
               NULL;
    return lt_normalize_dim(op, *dim, t->ndim, d) == LT_OK ? t : NULL;
}

lt_tensor *lt_repeat_interleave(lt_tensor *t, int64_t repeats, const int *dim)
{
    if (lt_check_tensor("repeat_interleave", t, 0) != LT_OK)
        return NULL;
    if (repeats < 0)
        return lt_error(LT_ERR_ARGUMENT, "repeat_interleave: repeats is %lld, expected >= 0", (long long)repeats), NULL;
    lt_scope_begin();
    int d = 0;
    lt_tensor *x = interleave_input("repeat_interleave", t, dim, &d);
    if (x && x->shape[d] != 0 && repeats > INT64_MAX / x->shape[d]) {
        lt_error(LT_ERR_SHAPE, "repeat_interleave: %lld repeats of a dim of size %lld overflow", (long long)repeats,
                 (long long)x->shape[d]);
        x = NULL;
    }
    lt_tensor *r = x ? interleave_dim(x, d, repeats) : NULL;
    return lt_scope_return(r ? lt_contiguous(r) : NULL);
}

/* The repeat counts as host integers (reads the tensor: a sync on the lazy
 * device), checked: integer dtype, 0-d or one per slice, none negative. */
static int64_t *read_counts(lt_tensor *repeats, int64_t slices)
{
    const char *op = "repeat_interleave";
    if (lt_dtype_is_floating(repeats->dtype) || repeats->dtype == LT_BOOL)
        return lt_error(LT_ERR_DTYPE, "%s: repeats has dtype %s, expected an integer tensor", op,
                        lt_dtype_name(repeats->dtype)), NULL;
    int64_t n = lt_tensor_numel(repeats);
    if (repeats->ndim > 1 || (repeats->ndim == 1 && n != slices && n != 1))
        return lt_error(LT_ERR_SHAPE, "%s: repeats has %d dims and %lld elements, expected a 0-d tensor or %lld "
                        "counts (one per slice)", op, repeats->ndim, (long long)n, (long long)slices), NULL;
    int64_t *counts = malloc(sizeof *counts * (size_t)(n > 0 ? n : 1));
    if (!counts)
        return lt_error(LT_ERR_MEMORY, "%s: out of memory for %lld counts", op, (long long)n), NULL;
    lt_tensor *host = lt_to_dtype(lt_to(repeats, lt_device_parse("cpu")), LT_I64);
    if (!host || lt_copy_to_host(host, counts, sizeof *counts * (size_t)n) != LT_OK) {
        free(counts);
        return NULL;
    }
    for (int64_t i = 0; i < n; i++)
        if (counts[i] < 0) {
            lt_error(LT_ERR_ARGUMENT, "%s: repeats[%lld] is %lld, expected >= 0", op, (long long)i,
                     (long long)counts[i]);
            free(counts);
            return NULL;
        }
    return counts;
}

/* The gather indices: slice i written counts[i] times (count[0] for all
 * when there is one count). */
static lt_tensor *interleave_indices(const int64_t *counts, int64_t ncounts, int64_t slices, lt_device dev)
{
    int64_t total = 0;
    for (int64_t i = 0; i < slices; i++) {
        int64_t c = counts[ncounts == 1 ? 0 : i];
        if (c > INT64_MAX / 8 - total)
            return lt_error(LT_ERR_SHAPE, "repeat_interleave: the repeat counts overflow"), NULL;
        total += c;
    }
    int64_t *idx = malloc(sizeof *idx * (size_t)(total > 0 ? total : 1));
    if (!idx)
        return lt_error(LT_ERR_MEMORY, "repeat_interleave: out of memory for %lld indices", (long long)total), NULL;
    for (int64_t i = 0, k = 0; i < slices; i++)
        for (int64_t c = counts[ncounts == 1 ? 0 : i]; c > 0; c--)
            idx[k++] = i;
    lt_tensor *r = lt_from_data(idx, &total, 1, LT_I64, dev);
    free(idx);
    return r;
}

lt_tensor *lt_repeat_interleave_tensor(lt_tensor *t, lt_tensor *repeats, const int *dim)
{
    if (lt_check_tensor("repeat_interleave", t, 0) != LT_OK || lt_check_tensor("repeat_interleave", repeats, 1) != LT_OK)
        return NULL;
    if (!lt_device_equal(t->device, repeats->device))
        return lt_error(LT_ERR_DEVICE, "repeat_interleave: repeats is on another device than the tensor"), NULL;
    lt_scope_begin();
    int d = 0;
    lt_tensor *x = interleave_input("repeat_interleave", t, dim, &d), *r = NULL;
    int64_t *counts = x ? read_counts(repeats, x->shape[d]) : NULL;
    if (counts) {
        int64_t n = lt_tensor_numel(repeats);
        r = lt_index_select(x, d, interleave_indices(counts, n, x->shape[d], t->device));
        free(counts);
    }
    return lt_scope_return(r);
}

/* ======================================================================= */
/* unbind, movedim, split by sizes                                          */
/* ======================================================================= */

/* Hands pieces[0..n) to the caller's scope and copies them to out; the
 * caller's scope_end then drops the temporaries only. */
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

static lt_status check_out(const char *op, lt_tensor **out, int64_t count, int max_out)
{
    if (!out)
        return lt_error(LT_ERR_NULL, "%s: out is NULL", op);
    if (count > max_out)
        return lt_error(LT_ERR_ARGUMENT, "%s: %lld pieces do not fit in max_out = %d", op, (long long)count, max_out);
    return LT_OK;
}

int lt_unbind(lt_tensor *t, int dim, lt_tensor **out, int max_out)
{
    int d = 0;
    if (lt_check_tensor("unbind", t, 0) != LT_OK)
        return -1;
    if (t->ndim == 0)
        return lt_error(LT_ERR_INDEX, "unbind: expects at least a 1-d tensor, got a 0-d tensor"), -1;
    if (lt_normalize_dim("unbind", dim, t->ndim, &d) != LT_OK || check_out("unbind", out, t->shape[d], max_out) != LT_OK)
        return -1;
    int n = (int)t->shape[d];
    lt_tensor **pieces = malloc(sizeof *pieces * (size_t)(n > 0 ? n : 1));
    if (!pieces)
        return lt_error(LT_ERR_MEMORY, "unbind: out of memory for %d pieces", n), -1;
    lt_scope_begin();
    for (int i = 0; i < n; i++)
        pieces[i] = lt_select(t, d, i);
    int r = publish_pieces(pieces, n, out);
    free(pieces);
    return r;
}

lt_tensor *lt_movedim(lt_tensor *t, const int *source, const int *destination, int n)
{
    int src[LT_MAX_DIMS], dst[LT_MAX_DIMS];
    if (lt_check_tensor("movedim", t, 0) != LT_OK || check_count("movedim", "dims", source, n, LT_MAX_DIMS) != LT_OK ||
        check_count("movedim", "dims", destination, n, LT_MAX_DIMS) != LT_OK ||
        normalize_distinct_dims("movedim", source, n, t->ndim, src) != LT_OK ||
        normalize_distinct_dims("movedim", destination, n, t->ndim, dst) != LT_OK)
        return NULL;
    if (t->ndim == 0)
        return lt_view(t, NULL, 0);
    int perm[LT_MAX_DIMS];
    bool placed[LT_MAX_DIMS] = {false}, moved[LT_MAX_DIMS] = {false};
    for (int i = 0; i < n; i++) {
        perm[dst[i]] = src[i];
        placed[dst[i]] = moved[src[i]] = true;
    }
    /* the other dims keep their order in the free positions */
    for (int p = 0, s = 0; p < t->ndim; p++) {
        if (placed[p])
            continue;
        while (moved[s])
            s++;
        perm[p] = s++;
    }
    return lt_permute(t, perm, t->ndim);
}

int lt_split_sizes(lt_tensor *t, const int64_t *sizes, int n, int dim, lt_tensor **out, int max_out)
{
    int d = 0;
    if (lt_check_tensor("split_sizes", t, 0) != LT_OK)
        return -1;
    if (t->ndim == 0)
        return lt_error(LT_ERR_INDEX, "split_sizes: expects at least a 1-d tensor, got a 0-d tensor"), -1;
    if (lt_normalize_dim("split_sizes", dim, t->ndim, &d) != LT_OK || check_out("split_sizes", out, n, max_out) != LT_OK)
        return -1;
    if (n <= 0 || !sizes)
        return lt_error(n <= 0 ? LT_ERR_ARGUMENT : LT_ERR_NULL, "split_sizes: expected a non-empty list of sizes, "
                        "got %d sizes%s", n, sizes ? "" : " (NULL)"), -1;
    int64_t total = 0;
    for (int i = 0; i < n; i++) {
        if (sizes[i] < 0 || sizes[i] > t->shape[d])
            return lt_error(LT_ERR_ARGUMENT, "split_sizes: size %lld at position %d is invalid for dim %d of size "
                            "%lld", (long long)sizes[i], i, d, (long long)t->shape[d]), -1;
        total += sizes[i];
    }
    if (total != t->shape[d])
        return lt_error(LT_ERR_ARGUMENT, "split_sizes: the sizes sum to %lld, expected exactly %lld (the size of "
                        "dim %d)", (long long)total, (long long)t->shape[d], d), -1;
    lt_tensor **pieces = malloc(sizeof *pieces * (size_t)n);
    if (!pieces)
        return lt_error(LT_ERR_MEMORY, "split_sizes: out of memory for %d pieces", n), -1;
    lt_scope_begin();
    int64_t start = 0;
    for (int i = 0; i < n; start += sizes[i], i++)
        pieces[i] = lt_narrow(t, d, start, sizes[i]);
    int r = publish_pieces(pieces, n, out);
    free(pieces);
    return r;
}
