/* infer_collective.c - shape rules of the collectives (all_reduce,
 * broadcast, all_gather, reduce_scatter). The world size the call was
 * traced for is attribute i2, so a rule never reads global state. */
#include "ops/ops.h"

static const char *const reduce_names[] = {"LT_REDUCE_SUM", "LT_REDUCE_MEAN", "LT_REDUCE_MAX"};

static lt_status check_reduce(const char *name, const lt_meta *in, int64_t reduce)
{
    if (reduce < 0 || reduce > 2)
        return lt_error(LT_ERR_ARGUMENT, "%s: reduction %lld is not one of LT_REDUCE_SUM, LT_REDUCE_MEAN, "
                        "LT_REDUCE_MAX", name, (long long)reduce);
    if (reduce == 1 && !lt_dtype_is_floating((lt_dtype)in->dtype))
        return lt_error(LT_ERR_DTYPE, "%s: %s needs a floating tensor (got %s; expected f32, f64, bf16 or f16)",
                        name, reduce_names[reduce], lt_dtype_name((lt_dtype)in->dtype));
    return LT_OK;
}

static lt_status infer_collective(lt_op op, const lt_meta *in, int nin, const lt_attrs *a, lt_meta *out)
{
    (void)nin;
    const char *name = lt_op_name(op);
    int64_t world = a->i[2];
    if (world < 1)
        return lt_error(LT_ERR_ARGUMENT, "%s: world size %lld (expected at least 1)", name, (long long)world);
    out[0] = in[0];
    out[0].weak = 0;
    char s[128];
    switch (op) {
    case LT_OP_ALL_REDUCE:
        return check_reduce(name, in, a->i[0]);
    case LT_OP_BROADCAST:
        if (a->i[1] < 0 || a->i[1] >= world)
            return lt_error(LT_ERR_ARGUMENT, "%s: root %lld is not a rank (expected 0..%lld)", name,
                            (long long)a->i[1], (long long)world - 1);
        return LT_OK;
    case LT_OP_ALL_GATHER:
        if (in->ndim == 0) {
            out[0].ndim = 1;
            out[0].shape[0] = world;
        } else if (__builtin_mul_overflow(in->shape[0], world, &out[0].shape[0])) {
            return lt_error(LT_ERR_MEMORY, "%s: %lld ranks of shape %s overflow", name, (long long)world,
                            lt_shape_str(in->shape, in->ndim, s, sizeof s));
        }
        return lt_check_shape(name, out[0].shape, out[0].ndim, (lt_dtype)out[0].dtype);
    case LT_OP_REDUCE_SCATTER: {
        lt_status st = check_reduce(name, in, a->i[0]);
        if (st != LT_OK)
            return st;
        if (in->ndim == 0 || in->shape[0] % world != 0)
            return lt_error(LT_ERR_SHAPE, "%s: shape %s cannot be split into %lld equal blocks along dim 0 "
                            "(expected a first size divisible by the world size)", name,
                            lt_shape_str(in->shape, in->ndim, s, sizeof s), (long long)world);
        out[0].shape[0] = in->shape[0] / world;
        return LT_OK;
    }
    default:
        return lt_error(LT_ERR_ARGUMENT, "%s: not a collective", name);
    }
}

void lt_infer_register_collective(void)
{
    static const lt_op ops[] = {LT_OP_ALL_REDUCE, LT_OP_BROADCAST, LT_OP_ALL_GATHER, LT_OP_REDUCE_SCATTER};
    for (size_t k = 0; k < sizeof ops / sizeof ops[0]; k++)
        lt_op_set_infer(ops[k], infer_collective);
}
