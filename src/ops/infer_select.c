/*
 * infer_select.c - shape/dtype rules of the selections along one dim:
 * kthvalue, median_dim and mode. Each gives the input's dtype and i64
 * indices, of the input's shape without the dim (size 1 with keepdim).
 * As in PyTorch: the dim must have a non-zero size, k must lie in
 * 1..size, and kthvalue/median refuse bool inputs (mode takes any dtype).
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
    int64_t dim_attr = op == LT_OP_KTHVALUE ? a->i[1] : a->i[0];
    int d;
    lt_status st = lt_normalize_dim(name, dim_attr, in[0].ndim, &d);
    if (st != LT_OK)
        return st;
    int64_t size = in[0].ndim == 0 ? 1 : in[0].shape[d];
    char s[160];
    lt_shape_str(in[0].shape, in[0].ndim, s, sizeof s);
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
    out[1] = out[0];
    out[1].dtype = LT_I64;
    return LT_OK;
}

void lt_infer_register_select(void)
{
    lt_op_set_infer(LT_OP_KTHVALUE, infer_select);
    lt_op_set_infer(LT_OP_MEDIAN_DIM, infer_select);
    lt_op_set_infer(LT_OP_MODE, infer_select);
}
