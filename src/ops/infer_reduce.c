/*
 * infer_reduce.c - shape/dtype rules of the reduce op group: reductions over
 * a set of dims (sum ... any) and the same-shape scans along one dim
 * (cumsum, cumprod, cummax, cummin, logcumsumexp, softmax, log_softmax,
 * cumprod_grad).
 *
 * Reduction attrs: i[0..ni) the reduced dims (ni == 0: every dim), flag
 * bit0 keepdim; max_dim/min_dim/argmax/argmin use i0 as their one dim
 * (argmax/argmin also accept ni == 0: the flattened tensor, like torch's
 * dim=None). Scans: i0 the dim. Dims may be negative; a 0-d tensor accepts
 * dim 0 / -1 (reducing it is a no-op).
 */
#include "ops/ops.h"

#include <string.h>

/* Fills mask[d] for every reduced dim of a tensor with `ndim` dims, checking
 * range and duplicates. Errors name the op, the dim and the tensor's rank. */
static lt_status reduced_mask(const char *name, const lt_meta *in, const lt_attrs *a, bool *mask)
{
    memset(mask, 0, sizeof(bool) * LT_MAX_DIMS);
    if (a->ni < 0 || a->ni > LT_MAX_DIMS)
        return lt_error(LT_ERR_ARGUMENT, "%s: %d reduced dims given, expected 0..%d", name, (int)a->ni,
                        LT_MAX_DIMS);
    if (a->ni == 0) {
        for (int d = 0; d < in->ndim; d++)
            mask[d] = true;
        return LT_OK;
    }
    bool seen[LT_MAX_DIMS] = {false};
    for (int k = 0; k < a->ni; k++) {
        int d;
        lt_status st = lt_normalize_dim(name, a->i[k], in->ndim, &d);
        if (st != LT_OK)
            return st;
        if (seen[d])
            return lt_error(LT_ERR_ARGUMENT,
                            "%s: dim %lld appears more than once in the reduced dims of a %d-d tensor", name,
                            (long long)a->i[k], in->ndim);
        seen[d] = true;
        if (in->ndim > 0)
            mask[d] = true;
    }
    return LT_OK;
}

/* Shape of a reduction result: kept dims, plus size-1 dims if keepdim. */
static void reduced_shape(const lt_meta *in, const bool *mask, bool keepdim, lt_meta *out)
{
    int nd = 0;
    for (int d = 0; d < in->ndim; d++) {
        if (!mask[d])
            out->shape[nd++] = in->shape[d];
        else if (keepdim)
            out->shape[nd++] = 1;
    }
    out->ndim = nd;
}

/* max/min-like reductions have no identity: an empty reduced range is an
 * error (as in PyTorch), even when the output itself is empty. */
static lt_status check_nonempty(const char *name, const lt_meta *in, const bool *mask, bool all)
{
    for (int d = 0; d < in->ndim; d++) {
        if (mask[d] && in->shape[d] == 0) {
            char s[160];
            lt_shape_str(in->shape, in->ndim, s, sizeof s);
            if (all)
                return lt_error(LT_ERR_SHAPE,
                                "%s: cannot reduce the empty tensor of shape %s over all dims "
                                "(the reduction has no identity; expected a non-empty input)",
                                name, s);
            return lt_error(LT_ERR_SHAPE,
                            "%s: cannot reduce over dim %d of size 0 (input shape %s); the reduction "
                            "has no identity, expected a non-zero size",
                            name, d, s);
        }
    }
    return LT_OK;
}

static lt_status require_floating(const char *name, lt_dtype dt)
{
    if (lt_dtype_is_floating(dt))
        return LT_OK;
    return lt_error(LT_ERR_DTYPE, "%s: input dtype %s is not supported, expected a floating dtype "
                                  "(f32, f64, bf16, f16); convert with lt_to_dtype first",
                    name, lt_dtype_name(dt));
}

/* Output dtype of each reduction given the input dtype. */
static lt_status reduce_dtype(lt_op op, lt_dtype in, lt_dtype *out)
{
    const char *name = lt_op_name(op);
    switch (op) {
    case LT_OP_SUM:
    case LT_OP_PROD:
        *out = lt_dtype_is_floating(in) ? in : LT_I64;
        return LT_OK;
    case LT_OP_MEAN:
    case LT_OP_VAR:
    case LT_OP_STD:
        *out = in;
        return require_floating(name, in);
    case LT_OP_LOGSUMEXP: /* integers promote to f32, as torch does */
        *out = lt_dtype_is_floating(in) ? in : LT_F32;
        return LT_OK;
    case LT_OP_ARGMAX:
    case LT_OP_ARGMIN:
        *out = LT_I64;
        return LT_OK;
    case LT_OP_ALL:
    case LT_OP_ANY:
        *out = LT_BOOL;
        return LT_OK;
    default: /* amax, amin, max_dim, min_dim keep the dtype */
        *out = in;
        return LT_OK;
    }
}

static bool is_arg_op(lt_op op)
{
    return op == LT_OP_MAX_DIM || op == LT_OP_MIN_DIM || op == LT_OP_ARGMAX || op == LT_OP_ARGMIN;
}

static bool has_no_identity(lt_op op)
{
    return is_arg_op(op) || op == LT_OP_AMAX || op == LT_OP_AMIN;
}

static lt_status infer_reduce(lt_op op, const lt_meta *in, int nin, const lt_attrs *a, lt_meta *out)
{
    (void)nin;
    const char *name = lt_op_name(op);
    if (!lt_dtype_valid(in[0].dtype))
        return lt_error(LT_ERR_DTYPE, "%s: invalid input dtype %d", name, in[0].dtype);
    if (is_arg_op(op) && a->ni != 1 && !(a->ni == 0 && (op == LT_OP_ARGMAX || op == LT_OP_ARGMIN)))
        return lt_error(LT_ERR_ARGUMENT, "%s: %d dims given, expected exactly one dim", name, (int)a->ni);
    bool mask[LT_MAX_DIMS];
    lt_status st = reduced_mask(name, &in[0], a, mask);
    if (st == LT_OK && has_no_identity(op))
        st = check_nonempty(name, &in[0], mask, a->ni == 0);
    lt_dtype dt = LT_F32;
    if (st == LT_OK)
        st = reduce_dtype(op, (lt_dtype)in[0].dtype, &dt);
    if (st != LT_OK)
        return st;
    out[0] = lt_meta_make(dt, NULL, 0);
    reduced_shape(&in[0], mask, (a->flag & 1) != 0, &out[0]);
    if (op == LT_OP_MAX_DIM || op == LT_OP_MIN_DIM) {
        out[1] = out[0];
        out[1].dtype = LT_I64;
    }
    return LT_OK;
}

/* cumsum, cumprod, cummax/cummin (plus i64 indices), logcumsumexp, softmax,
 * log_softmax, cumprod_grad: the input's shape, along dim i0. */
static lt_status infer_scan(lt_op op, const lt_meta *in, int nin, const lt_attrs *a, lt_meta *out)
{
    (void)nin;
    const char *name = lt_op_name(op);
    lt_dtype dt = (lt_dtype)in[0].dtype;
    if (!lt_dtype_valid(dt))
        return lt_error(LT_ERR_DTYPE, "%s: invalid input dtype %d", name, in[0].dtype);
    if (a->ni != 1)
        return lt_error(LT_ERR_ARGUMENT, "%s: %d dims given, expected exactly one dim", name, (int)a->ni);
    int d;
    lt_status st = lt_normalize_dim(name, a->i[0], in[0].ndim, &d);
    if (st != LT_OK)
        return st;
    if (op == LT_OP_CUMSUM || op == LT_OP_CUMPROD) {
        if (!lt_dtype_is_floating(dt))
            dt = LT_I64;
    } else if (op != LT_OP_CUMMAX && op != LT_OP_CUMMIN) { /* those keep any dtype */
        st = require_floating(name, dt);
        if (st != LT_OK)
            return st;
    }
    if (op == LT_OP_CUMPROD_GRAD && !lt_shape_equal(in[0].shape, in[0].ndim, in[1].shape, in[1].ndim)) {
        char s0[160], s1[160];
        lt_shape_str(in[0].shape, in[0].ndim, s0, sizeof s0);
        lt_shape_str(in[1].shape, in[1].ndim, s1, sizeof s1);
        return lt_error(LT_ERR_SHAPE, "%s: input shape %s and gradient shape %s differ, expected equal shapes", name,
                        s0, s1);
    }
    out[0] = lt_meta_make(dt, in[0].shape, in[0].ndim);
    if (op == LT_OP_CUMMAX || op == LT_OP_CUMMIN)
        out[1] = lt_meta_make(LT_I64, in[0].shape, in[0].ndim);
    return LT_OK;
}

void lt_infer_register_reduce(void)
{
    for (int op = 0; op < LT_OP_COUNT; op++) {
        if (lt_op_infos[op].cls == LT_OPC_REDUCE)
            lt_op_set_infer((lt_op)op, infer_reduce);
        else if (lt_op_infos[op].cls == LT_OPC_SCAN)
            lt_op_set_infer((lt_op)op, infer_scan);
    }
}
