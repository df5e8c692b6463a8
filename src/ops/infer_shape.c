/*
 * infer_shape.c - shape/dtype rules of the view ops (view, permute, slice,
 * select, expand, diagonal) and of the indexing and shaping ops (cat,
 * index_select, gather, scatter, masked_fill, one_hot, tril/triu, sort,
 * topk, nonzero, embedding).
 *
 * The rules validate every attribute themselves (not only the public
 * wrappers), so an op recorded by a later lazy layer is checked the same
 * way. Value-dependent checks (index ranges, view strides) belong to the
 * kernels.
 */
#include "ops/ops.h"

#include <float.h>
#include <math.h>
#include <string.h>

#define SHAPE_BUF 160

/* Size of dim d of m, treating a 0-d tensor as one element along dim 0. */
static int64_t dim_size(const lt_meta *m, int d) { return m->ndim > 0 ? m->shape[d] : 1; }

static lt_status check_not_0d(const char *op, const lt_meta *m)
{
    if (m->ndim == 0)
        return lt_error(LT_ERR_INDEX, "%s: cannot be applied to a 0-d tensor", op);
    return LT_OK;
}

/* Index tensors must hold i32 or i64 values. */
static lt_status check_index_dtype(const char *op, const lt_meta *m, const char *what)
{
    if (m->dtype == LT_I32 || m->dtype == LT_I64)
        return LT_OK;
    return lt_error(LT_ERR_DTYPE, "%s: %s has dtype %s, expected i32 or i64", op, what,
                    lt_dtype_name((lt_dtype)m->dtype));
}

/* ---- views -------------------------------------------------------------- */

static lt_status infer_view(lt_op op, const lt_meta *in, int nin, const lt_attrs *a, lt_meta *out)
{
    (void)op, (void)nin;
    lt_status st = lt_check_shape("view", a->i, a->ni, (lt_dtype)in[0].dtype);
    if (st != LT_OK)
        return st;
    int64_t n_new = lt_shape_numel(a->i, a->ni), n_old = lt_shape_numel(in[0].shape, in[0].ndim);
    if (n_new != n_old) {
        char s1[SHAPE_BUF], s2[SHAPE_BUF];
        return lt_error(LT_ERR_SHAPE, "view: shape %s (%lld elements) is invalid for input of shape %s (%lld elements)",
                        lt_shape_str(a->i, a->ni, s1, sizeof s1), (long long)n_new,
                        lt_shape_str(in[0].shape, in[0].ndim, s2, sizeof s2), (long long)n_old);
    }
    out[0] = lt_meta_make((lt_dtype)in[0].dtype, a->i, a->ni);
    return LT_OK;
}

static lt_status infer_permute(lt_op op, const lt_meta *in, int nin, const lt_attrs *a, lt_meta *out)
{
    (void)op, (void)nin;
    int nd = in[0].ndim;
    if (a->ni != nd)
        return lt_error(LT_ERR_ARGUMENT, "permute: %d dims given for a %d-d tensor, expected %d", a->ni, nd, nd);
    bool seen[LT_MAX_DIMS] = {false};
    out[0] = lt_meta_make((lt_dtype)in[0].dtype, NULL, 0);
    out[0].ndim = nd;
    for (int i = 0; i < nd; i++) {
        int d;
        lt_status st = lt_normalize_dim("permute", a->i[i], nd, &d);
        if (st != LT_OK)
            return st;
        if (seen[d])
            return lt_error(LT_ERR_ARGUMENT, "permute: dim %d appears twice in the permutation", d);
        seen[d] = true;
        out[0].shape[i] = in[0].shape[d];
    }
    return LT_OK;
}

static lt_status infer_slice(lt_op op, const lt_meta *in, int nin, const lt_attrs *a, lt_meta *out)
{
    (void)op, (void)nin;
    int d;
    lt_status st = check_not_0d("slice", &in[0]);
    if (st == LT_OK)
        st = lt_normalize_dim("slice", a->i[0], in[0].ndim, &d);
    if (st != LT_OK)
        return st;
    int64_t size = in[0].shape[d], start = a->i[1], end = a->i[2], step = a->i[3];
    if (step <= 0)
        return lt_error(LT_ERR_ARGUMENT, "slice: step %lld must be positive", (long long)step);
    if (start < 0 || start > end || end > size)
        return lt_error(LT_ERR_ARGUMENT,
                        "slice: range %lld..%lld is not normalized for dim %d of size %lld "
                        "(expected 0 <= start <= end <= size)",
                        (long long)start, (long long)end, d, (long long)size);
    out[0] = in[0];
    out[0].weak = 0;
    out[0].shape[d] = end == start ? 0 : (end - start - 1) / step + 1;
    return LT_OK;
}

static lt_status infer_select(lt_op op, const lt_meta *in, int nin, const lt_attrs *a, lt_meta *out)
{
    (void)op, (void)nin;
    int d;
    lt_status st = check_not_0d("select", &in[0]);
    if (st == LT_OK)
        st = lt_normalize_dim("select", a->i[0], in[0].ndim, &d);
    if (st != LT_OK)
        return st;
    int64_t size = in[0].shape[d], index = a->i[1];
    if (index < 0 || index >= size)
        return lt_error(LT_ERR_INDEX, "select: index %lld is out of range for dim %d of size %lld (expected 0..%lld)",
                        (long long)index, d, (long long)size, (long long)size - 1);
    out[0] = lt_meta_make((lt_dtype)in[0].dtype, NULL, 0);
    for (int k = 0; k < in[0].ndim; k++)
        if (k != d)
            out[0].shape[out[0].ndim++] = in[0].shape[k];
    return LT_OK;
}

static lt_status infer_expand(lt_op op, const lt_meta *in, int nin, const lt_attrs *a, lt_meta *out)
{
    (void)op, (void)nin;
    const lt_meta *m = &in[0];
    char s1[SHAPE_BUF], s2[SHAPE_BUF];
    if (a->ni < m->ndim || a->ni > LT_MAX_DIMS)
        return lt_error(LT_ERR_SHAPE, "expand: %d sizes given for a %d-d tensor (expected %d..%d)", a->ni,
                        m->ndim, m->ndim, LT_MAX_DIMS);
    lt_status st = lt_check_shape("expand", a->i, a->ni, (lt_dtype)m->dtype);
    if (st != LT_OK)
        return st;
    int lead = a->ni - m->ndim;
    for (int d = 0; d < m->ndim; d++) {
        int64_t from = m->shape[d], to = a->i[lead + d];
        if (from != to && from != 1)
            return lt_error(LT_ERR_SHAPE,
                            "expand: cannot expand shape %s to %s: dim %d has size %lld (only size-1 dims expand)",
                            lt_shape_str(m->shape, m->ndim, s1, sizeof s1), lt_shape_str(a->i, a->ni, s2, sizeof s2),
                            d, (long long)from);
    }
    out[0] = lt_meta_make((lt_dtype)m->dtype, a->i, a->ni);
    return LT_OK;
}

/* Length of the diagonal `offset` of a size1 x size2 plane (no overflow). */
static int64_t diagonal_length(int64_t size1, int64_t size2, int64_t offset)
{
    int64_t n;
    if (offset >= 0)
        n = offset >= size2 ? 0 : (size1 < size2 - offset ? size1 : size2 - offset);
    else
        n = offset <= -size1 ? 0 : (size1 + offset < size2 ? size1 + offset : size2);
    return n;
}

static lt_status infer_diagonal(lt_op op, const lt_meta *in, int nin, const lt_attrs *a, lt_meta *out)
{
    (void)op, (void)nin;
    const lt_meta *m = &in[0];
    if (m->ndim < 2)
        return lt_error(LT_ERR_SHAPE, "diagonal: input must have at least 2 dims, got a %d-d tensor", m->ndim);
    int d1, d2;
    lt_status st = lt_normalize_dim("diagonal", a->i[1], m->ndim, &d1);
    if (st == LT_OK)
        st = lt_normalize_dim("diagonal", a->i[2], m->ndim, &d2);
    if (st != LT_OK)
        return st;
    if (d1 == d2)
        return lt_error(LT_ERR_ARGUMENT, "diagonal: dim1 and dim2 are both dim %d, expected two different dims", d1);
    out[0] = lt_meta_make((lt_dtype)m->dtype, NULL, 0);
    for (int k = 0; k < m->ndim; k++)
        if (k != d1 && k != d2)
            out[0].shape[out[0].ndim++] = m->shape[k];
    out[0].shape[out[0].ndim++] = diagonal_length(m->shape[d1], m->shape[d2], a->i[0]);
    return LT_OK;
}

/* ---- indexing and shaping ---------------------------------------------- */

static lt_status infer_cat(lt_op op, const lt_meta *in, int nin, const lt_attrs *a, lt_meta *out)
{
    (void)op;
    if (nin < 1)
        return lt_error(LT_ERR_ARGUMENT, "cat: expected at least one tensor, got %d", nin);
    const lt_meta *ref = &in[0];
    char s1[SHAPE_BUF], s2[SHAPE_BUF];
    for (int i = 0; i < nin; i++) {
        if (in[i].ndim == 0)
            return lt_error(LT_ERR_SHAPE, "cat: tensor %d is 0-d; 0-d tensors cannot be concatenated", i);
        if (in[i].ndim != ref->ndim)
            return lt_error(LT_ERR_SHAPE, "cat: tensor %d has shape %s but tensor 0 has shape %s (expected the same number of dims)",
                            i, lt_shape_str(in[i].shape, in[i].ndim, s1, sizeof s1),
                            lt_shape_str(ref->shape, ref->ndim, s2, sizeof s2));
    }
    int dim;
    lt_status st = lt_normalize_dim("cat", a->i[0], ref->ndim, &dim);
    if (st != LT_OK)
        return st;
    out[0] = *ref;
    out[0].weak = 0;
    out[0].shape[dim] = 0;
    lt_dtype dt = (lt_dtype)ref->dtype;
    for (int i = 0; i < nin; i++) {
        for (int d = 0; d < ref->ndim; d++)
            if (d != dim && in[i].shape[d] != ref->shape[d])
                return lt_error(LT_ERR_SHAPE,
                                "cat: tensor %d has shape %s but tensor 0 has shape %s; sizes must match except in dim %d",
                                i, lt_shape_str(in[i].shape, in[i].ndim, s1, sizeof s1),
                                lt_shape_str(ref->shape, ref->ndim, s2, sizeof s2), dim);
        if (__builtin_add_overflow(out[0].shape[dim], in[i].shape[dim], &out[0].shape[dim]))
            return lt_error(LT_ERR_SHAPE, "cat: the sizes of %d tensors along dim %d add up to more than 2^63 - 1 "
                                          "(tensor 0 has shape %s)",
                            nin, dim, lt_shape_str(ref->shape, ref->ndim, s2, sizeof s2));
        dt = lt_promote_types(dt, (lt_dtype)in[i].dtype);
    }
    out[0].dtype = (int32_t)dt;
    return lt_check_shape("cat", out[0].shape, out[0].ndim, dt);
}

static lt_status infer_index_select(lt_op op, const lt_meta *in, int nin, const lt_attrs *a, lt_meta *out)
{
    (void)op, (void)nin;
    const lt_meta *self = &in[0], *index = &in[1];
    int dim;
    lt_status st = check_index_dtype("index_select", index, "index");
    if (st == LT_OK)
        st = lt_normalize_dim("index_select", a->i[0], self->ndim, &dim);
    if (st != LT_OK)
        return st;
    char sb[SHAPE_BUF];
    if (index->ndim > 1)
        return lt_error(LT_ERR_SHAPE, "index_select: index has shape %s, expected a 0-d or 1-d tensor",
                        lt_shape_str(index->shape, index->ndim, sb, sizeof sb));
    int64_t n = lt_shape_numel(index->shape, index->ndim);
    if (self->ndim == 0 && n != 1)
        return lt_error(LT_ERR_SHAPE, "index_select: a 0-d input takes exactly one index, got %lld", (long long)n);
    out[0] = *self;
    out[0].weak = 0;
    if (self->ndim > 0)
        out[0].shape[dim] = n;
    return LT_OK;
}

static lt_status infer_gather(lt_op op, const lt_meta *in, int nin, const lt_attrs *a, lt_meta *out)
{
    (void)op, (void)nin;
    const lt_meta *self = &in[0], *index = &in[1];
    int dim;
    lt_status st = check_index_dtype("gather", index, "index");
    if (st == LT_OK)
        st = lt_normalize_dim("gather", a->i[0], self->ndim, &dim);
    if (st != LT_OK)
        return st;
    char s1[SHAPE_BUF], s2[SHAPE_BUF];
    lt_shape_str(index->shape, index->ndim, s1, sizeof s1);
    lt_shape_str(self->shape, self->ndim, s2, sizeof s2);
    if (index->ndim != self->ndim)
        return lt_error(LT_ERR_SHAPE, "gather: index shape %s and input shape %s differ in the number of dims", s1, s2);
    for (int d = 0; d < self->ndim; d++)
        if (d != dim && index->shape[d] > self->shape[d])
            return lt_error(LT_ERR_SHAPE,
                            "gather: index shape %s is larger than input shape %s in dim %d (only dim %d may be larger)",
                            s1, s2, d, dim);
    out[0] = lt_meta_make((lt_dtype)self->dtype, index->shape, index->ndim);
    return LT_OK;
}

/* scatter and scatter_add: in self, index, src. */
static lt_status infer_scatter(lt_op op, const lt_meta *in, int nin, const lt_attrs *a, lt_meta *out)
{
    (void)nin;
    const char *name = lt_op_name(op);
    const lt_meta *self = &in[0], *index = &in[1], *src = &in[2];
    int dim;
    lt_status st = check_index_dtype(name, index, "index");
    if (st == LT_OK)
        st = lt_normalize_dim(name, a->i[0], self->ndim, &dim);
    if (st != LT_OK)
        return st;
    if (src->dtype != self->dtype)
        return lt_error(LT_ERR_DTYPE, "%s: src has dtype %s but the input has dtype %s (expected equal dtypes)", name,
                        lt_dtype_name((lt_dtype)src->dtype), lt_dtype_name((lt_dtype)self->dtype));
    char s1[SHAPE_BUF], s2[SHAPE_BUF], s3[SHAPE_BUF];
    lt_shape_str(index->shape, index->ndim, s1, sizeof s1);
    lt_shape_str(self->shape, self->ndim, s2, sizeof s2);
    lt_shape_str(src->shape, src->ndim, s3, sizeof s3);
    if (index->ndim != self->ndim || src->ndim != self->ndim)
        return lt_error(LT_ERR_SHAPE, "%s: index %s, input %s and src %s must have the same number of dims", name, s1,
                        s2, s3);
    for (int d = 0; d < self->ndim; d++) {
        if (index->shape[d] > src->shape[d] || (d != dim && index->shape[d] > self->shape[d]))
            return lt_error(LT_ERR_SHAPE,
                            "%s: index shape %s must be no larger than src %s in every dim and than input %s "
                            "outside dim %d (dim %d violates this)",
                            name, s1, s3, s2, dim, d);
    }
    out[0] = lt_meta_make((lt_dtype)self->dtype, self->shape, self->ndim);
    return LT_OK;
}

lt_status lt_check_fill_value(const char *op, double v, lt_dtype dt)
{
    double lo, hi;
    switch (dt) {
    case LT_BOOL: return LT_OK;
    case LT_F64: return LT_OK;
    case LT_F32: case LT_BF16: case LT_F16:
        if (!isfinite(v) || (v >= -FLT_MAX && v <= FLT_MAX))
            return LT_OK;
        return lt_error(LT_ERR_ARGUMENT, "%s: value %g overflows dtype %s", op, v, lt_dtype_name(dt));
    case LT_I32: lo = -2147483648.0, hi = 2147483647.0; break;
    case LT_U8: lo = 0.0, hi = 255.0; break;
    default: lo = -9223372036854775808.0, hi = 9223372036854774784.0; break; /* largest double below 2^63 */
    }
    if (v >= lo && v <= hi)
        return LT_OK;
    return lt_error(LT_ERR_ARGUMENT, "%s: value %g cannot be converted to %s without overflow (expected %.0f..%.0f)",
                    op, v, lt_dtype_name(dt), lo, hi);
}

static lt_status infer_masked_fill(lt_op op, const lt_meta *in, int nin, const lt_attrs *a, lt_meta *out)
{
    (void)op, (void)nin;
    const lt_meta *self = &in[0], *mask = &in[1];
    if (mask->dtype != LT_BOOL)
        return lt_error(LT_ERR_DTYPE, "masked_fill: mask has dtype %s, expected bool",
                        lt_dtype_name((lt_dtype)mask->dtype));
    lt_meta b;
    lt_status st = lt_broadcast_shapes("masked_fill", self, mask, &b);
    if (st != LT_OK)
        return st;
    if (!lt_shape_equal(b.shape, b.ndim, self->shape, self->ndim)) {
        char s1[SHAPE_BUF], s2[SHAPE_BUF];
        return lt_error(LT_ERR_SHAPE, "masked_fill: mask shape %s cannot be broadcast to input shape %s",
                        lt_shape_str(mask->shape, mask->ndim, s1, sizeof s1),
                        lt_shape_str(self->shape, self->ndim, s2, sizeof s2));
    }
    st = lt_check_fill_value("masked_fill", a->f[0], (lt_dtype)self->dtype);
    if (st != LT_OK)
        return st;
    out[0] = lt_meta_make((lt_dtype)self->dtype, self->shape, self->ndim);
    return LT_OK;
}

static lt_status infer_one_hot(lt_op op, const lt_meta *in, int nin, const lt_attrs *a, lt_meta *out)
{
    (void)op, (void)nin;
    lt_status st = check_index_dtype("one_hot", &in[0], "indices");
    if (st != LT_OK)
        return st;
    if (a->i[0] < 0)
        return lt_error(LT_ERR_ARGUMENT, "one_hot: num_classes is %lld, expected >= 0", (long long)a->i[0]);
    if (in[0].ndim >= LT_MAX_DIMS)
        return lt_error(LT_ERR_SHAPE, "one_hot: indices have %d dims; the result would exceed %d dims", in[0].ndim,
                        LT_MAX_DIMS);
    out[0] = lt_meta_make(LT_I64, in[0].shape, in[0].ndim);
    out[0].shape[out[0].ndim++] = a->i[0];
    return LT_OK;
}

static lt_status infer_triangle(lt_op op, const lt_meta *in, int nin, const lt_attrs *a, lt_meta *out)
{
    (void)nin, (void)a;
    if (in[0].ndim < 2) {
        char sb[SHAPE_BUF];
        return lt_error(LT_ERR_SHAPE, "%s: input of shape %s has %d dims, expected at least 2", lt_op_name(op),
                        lt_shape_str(in[0].shape, in[0].ndim, sb, sizeof sb), in[0].ndim);
    }
    out[0] = lt_meta_make((lt_dtype)in[0].dtype, in[0].shape, in[0].ndim);
    return LT_OK;
}

static lt_status infer_sort(lt_op op, const lt_meta *in, int nin, const lt_attrs *a, lt_meta *out)
{
    (void)op, (void)nin;
    int dim;
    lt_status st = lt_normalize_dim("sort", a->i[0], in[0].ndim, &dim);
    if (st != LT_OK)
        return st;
    out[0] = lt_meta_make((lt_dtype)in[0].dtype, in[0].shape, in[0].ndim);
    out[1] = lt_meta_make(LT_I64, in[0].shape, in[0].ndim);
    return LT_OK;
}

static lt_status infer_topk(lt_op op, const lt_meta *in, int nin, const lt_attrs *a, lt_meta *out)
{
    (void)op, (void)nin;
    int dim;
    lt_status st = lt_normalize_dim("topk", a->i[1], in[0].ndim, &dim);
    if (st != LT_OK)
        return st;
    int64_t size = dim_size(&in[0], dim), k = a->i[0];
    if (k < 0 || k > size)
        return lt_error(LT_ERR_ARGUMENT, "topk: k = %lld is out of range for dim %d of size %lld (expected 0..%lld)",
                        (long long)k, dim, (long long)size, (long long)size);
    out[0] = lt_meta_make((lt_dtype)in[0].dtype, in[0].shape, in[0].ndim);
    if (in[0].ndim > 0)
        out[0].shape[dim] = k;
    out[1] = out[0];
    out[1].dtype = LT_I64;
    return LT_OK;
}

/* The row count depends on the data: reported as -1. */
static lt_status infer_nonzero(lt_op op, const lt_meta *in, int nin, const lt_attrs *a, lt_meta *out)
{
    (void)op, (void)nin, (void)a;
    int64_t shape[2] = {-1, in[0].ndim};
    out[0] = lt_meta_make(LT_I64, shape, 2);
    return LT_OK;
}

static lt_status infer_embedding(lt_op op, const lt_meta *in, int nin, const lt_attrs *a, lt_meta *out)
{
    (void)op, (void)nin, (void)a;
    const lt_meta *weight = &in[0], *indices = &in[1];
    if (weight->ndim != 2) {
        char sb[SHAPE_BUF];
        return lt_error(LT_ERR_SHAPE, "embedding: weight has shape %s, expected 2 dims [num, dim]",
                        lt_shape_str(weight->shape, weight->ndim, sb, sizeof sb));
    }
    lt_status st = check_index_dtype("embedding", indices, "indices");
    if (st != LT_OK)
        return st;
    if (indices->ndim >= LT_MAX_DIMS)
        return lt_error(LT_ERR_SHAPE, "embedding: indices have %d dims; the result would exceed %d dims",
                        indices->ndim, LT_MAX_DIMS);
    out[0] = lt_meta_make((lt_dtype)weight->dtype, indices->shape, indices->ndim);
    out[0].shape[out[0].ndim++] = weight->shape[1];
    return LT_OK;
}

void lt_infer_register_shape(void)
{
    lt_op_set_infer(LT_OP_VIEW, infer_view);
    lt_op_set_infer(LT_OP_PERMUTE, infer_permute);
    lt_op_set_infer(LT_OP_SLICE, infer_slice);
    lt_op_set_infer(LT_OP_SELECT, infer_select);
    lt_op_set_infer(LT_OP_EXPAND, infer_expand);
    lt_op_set_infer(LT_OP_DIAGONAL, infer_diagonal);
    lt_op_set_infer(LT_OP_CAT, infer_cat);
    lt_op_set_infer(LT_OP_INDEX_SELECT, infer_index_select);
    lt_op_set_infer(LT_OP_GATHER, infer_gather);
    lt_op_set_infer(LT_OP_SCATTER, infer_scatter);
    lt_op_set_infer(LT_OP_SCATTER_ADD, infer_scatter);
    lt_op_set_infer(LT_OP_MASKED_FILL, infer_masked_fill);
    lt_op_set_infer(LT_OP_ONE_HOT, infer_one_hot);
    lt_op_set_infer(LT_OP_TRIL, infer_triangle);
    lt_op_set_infer(LT_OP_TRIU, infer_triangle);
    lt_op_set_infer(LT_OP_SORT, infer_sort);
    lt_op_set_infer(LT_OP_TOPK, infer_topk);
    lt_op_set_infer(LT_OP_NONZERO, infer_nonzero);
    lt_op_set_infer(LT_OP_EMBEDDING, infer_embedding);
}
