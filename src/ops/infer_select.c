/*
 * infer_select.c - shape/dtype rules of the selections along one dim:
 * kthvalue, median_dim and mode (the input's dtype and i64 indices, of
 * the input's shape without the dim, size 1 with keepdim), quantile (the
 * values only) and quantile_grad (the input's shape). As in PyTorch: the
 * dim must have a non-zero size, k must lie in 1..size, kthvalue/median
 * refuse bool inputs (mode takes any dtype), quantile wants f32/f64, a
 * non-empty input and q in [0, 1].
 */
#include "ops/ops.h"

static lt_status infer_select(lt_op op, const lt_meta *in, int nin, const lt_attrs *a, lt_meta *out)
{
    (void)nin;
    const char *name = lt_op_name(op);
    lt_dtype dt = (lt_dtype)in[0].dtype;
    if (!lt_dtype_valid(dt))
        return lt_error(LT_ERR_DTYPE, "%s: invalid input dtype %d", name, in[0].dtype);
    if (dt == LT_BOOL && op != LT_OP_MODE)
        return lt_error(LT_ERR_DTYPE, "%s: input dtype bool is not supported, expected a numeric dtype", name);
    bool quantile = op == LT_OP_QUANTILE || op == LT_OP_QUANTILE_GRAD;
    if (quantile && dt != LT_F32 && dt != LT_F64)
        return lt_error(LT_ERR_DTYPE, "%s: input dtype %s is not supported, expected f32 or f64", name,
                        lt_dtype_name(dt));
    if (quantile && !(a->f[0] >= 0 && a->f[0] <= 1))
        return lt_error(LT_ERR_ARGUMENT, "%s: q is %g, expected a value in [0, 1]", name, a->f[0]);
    if (quantile && (a->i[1] < 0 || a->i[1] > 4))
        return lt_error(LT_ERR_ARGUMENT, "%s: interpolation %lld is not one of the lt_quantile_mode values", name,
                        (long long)a->i[1]);
    int64_t dim_attr = op == LT_OP_KTHVALUE ? a->i[1] : a->i[0];
    int d;
    lt_status st = lt_normalize_dim(name, dim_attr, in[0].ndim, &d);
    if (st != LT_OK)
        return st;
    int64_t size = in[0].ndim == 0 ? 1 : in[0].shape[d];
    char s[160];
    lt_shape_str(in[0].shape, in[0].ndim, s, sizeof s);
    if (quantile && lt_shape_numel(in[0].shape, in[0].ndim) == 0)
        return lt_error(LT_ERR_SHAPE, "%s: the input (shape %s) is empty, expected a non-empty input", name, s);
    if (size == 0)
        return lt_error(LT_ERR_SHAPE, "%s: dim %d of the input (shape %s) has size 0, expected a non-zero size",
                        name, d, s);
    if (op == LT_OP_KTHVALUE && (a->i[0] < 1 || a->i[0] > size))
        return lt_error(LT_ERR_ARGUMENT, "%s: k is %lld, expected 1..%lld (the size of dim %d of shape %s)", name,
                        (long long)a->i[0], (long long)size, d, s);
    out[0] = lt_meta_make(dt, NULL, 0);
    int nd = 0;
    for (int k = 0; k < in[0].ndim; k++) {
        if (k != d)
            out[0].shape[nd++] = in[0].shape[k];
        else if (a->flag & 1)
            out[0].shape[nd++] = 1;
    }
    out[0].ndim = nd;
    if (op == LT_OP_QUANTILE_GRAD) {
        if (lt_shape_numel(in[1].shape, in[1].ndim) != lt_shape_numel(out[0].shape, out[0].ndim))
            return lt_error(LT_ERR_SHAPE, "%s: the gradient has %lld elements, expected %lld (quantile of %s)", name,
                            (long long)lt_shape_numel(in[1].shape, in[1].ndim),
                            (long long)lt_shape_numel(out[0].shape, out[0].ndim), s);
        out[0] = lt_meta_make(dt, in[0].shape, in[0].ndim);
    } else if (op != LT_OP_QUANTILE) {
        out[1] = out[0];
        out[1].dtype = LT_I64;
    }
    return LT_OK;
}

void lt_infer_register_select(void)
{
    lt_op_set_infer(LT_OP_KTHVALUE, infer_select);
    lt_op_set_infer(LT_OP_MEDIAN_DIM, infer_select);
    lt_op_set_infer(LT_OP_MODE, infer_select);
    lt_op_set_infer(LT_OP_QUANTILE, infer_select);
    lt_op_set_infer(LT_OP_QUANTILE_GRAD, infer_select);
}
