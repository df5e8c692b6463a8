/* infer_elementwise.c - shape/dtype rules of elementwise ops, cast, copy
 * and fill. */
#include "ops/ops.h"

#include <math.h>

/* Ops whose integer/bool inputs produce the default float dtype (f32). */
static bool promotes_int_to_float(lt_op op)
{
    switch (op) {
    case LT_OP_EXP: case LT_OP_LOG: case LT_OP_LOG1P: case LT_OP_EXPM1: case LT_OP_SQRT:
    case LT_OP_RSQRT: case LT_OP_SIN: case LT_OP_COS: case LT_OP_TANH: case LT_OP_SIGMOID:
    case LT_OP_GELU: case LT_OP_SILU: case LT_OP_ERF: case LT_OP_RECIPROCAL: case LT_OP_DIV:
    case LT_OP_TAN: case LT_OP_ASIN: case LT_OP_ACOS: case LT_OP_ATAN: case LT_OP_SINH: case LT_OP_COSH:
    case LT_OP_ASINH: case LT_OP_ACOSH: case LT_OP_ATANH: case LT_OP_LOG2: case LT_OP_LOG10: case LT_OP_EXP2:
    case LT_OP_SOFTPLUS: case LT_OP_MISH: case LT_OP_LOGSIGMOID: case LT_OP_SOFTSIGN: case LT_OP_ELU:
    case LT_OP_LEAKY_RELU: case LT_OP_HARDSIGMOID: case LT_OP_HARDSWISH: case LT_OP_GELU_TANH:
    case LT_OP_ATAN2: case LT_OP_COPYSIGN: case LT_OP_XLOGY:
        return true;
    default:
        return false;
    }
}

static bool returns_bool(lt_op op)
{
    switch (op) {
    case LT_OP_EQ: case LT_OP_NE: case LT_OP_LT: case LT_OP_LE: case LT_OP_GT: case LT_OP_GE:
    case LT_OP_LOGICAL_AND: case LT_OP_LOGICAL_OR: case LT_OP_LOGICAL_NOT:
    case LT_OP_ISNAN: case LT_OP_ISINF: case LT_OP_ISFINITE:
        return true;
    default:
        return false;
    }
}

/* Ops that reject bool inputs, as PyTorch does. */
static bool rejects_bool(lt_op op)
{
    switch (op) {
    case LT_OP_NEG: case LT_OP_SUB: case LT_OP_REMAINDER: case LT_OP_FMOD:
    case LT_OP_FLOOR_DIVIDE: case LT_OP_TRUNC: case LT_OP_SHIFT_LEFT: case LT_OP_SHIFT_RIGHT:
        return true;
    default:
        return false;
    }
}

/* Ops PyTorch defines for floating inputs only (no promotion of integers). */
static bool floating_only(lt_op op)
{
    return op == LT_OP_FRAC || op == LT_OP_HYPOT || op == LT_OP_LOGADDEXP;
}

/* Bitwise ops: integer and bool inputs only. */
static bool integral_only(lt_op op)
{
    switch (op) {
    case LT_OP_BITWISE_NOT: case LT_OP_BITWISE_AND: case LT_OP_BITWISE_OR: case LT_OP_BITWISE_XOR:
    case LT_OP_SHIFT_LEFT: case LT_OP_SHIFT_RIGHT:
        return true;
    default:
        return false;
    }
}

/* Result dtype of an elementwise op given the promoted input dtype. */
static lt_status elementwise_dtype(lt_op op, lt_dtype promoted, lt_dtype *result)
{
    const char *name = lt_op_name(op);
    if (promoted == LT_BOOL && rejects_bool(op))
        return lt_error(LT_ERR_DTYPE, "%s: bool inputs are not supported (use logical ops)", name);
    if (floating_only(op) && !lt_dtype_is_floating(promoted))
        return lt_error(LT_ERR_DTYPE, "%s: inputs of dtype %s are not supported, expected a floating dtype", name,
                        lt_dtype_name(promoted));
    if (integral_only(op) && lt_dtype_is_floating(promoted))
        return lt_error(LT_ERR_DTYPE, "%s: inputs of dtype %s are not supported, expected integer or bool", name,
                        lt_dtype_name(promoted));
    if (returns_bool(op))
        *result = LT_BOOL;
    else if (promotes_int_to_float(op) && !lt_dtype_is_floating(promoted))
        *result = LT_F32;
    else
        *result = promoted;
    return LT_OK;
}

static lt_status infer_elementwise(lt_op op, const lt_meta *in, int nin, const lt_attrs *a, lt_meta *out)
{
    (void)a;
    const char *name = lt_op_name(op);
    lt_meta shape = in[0];
    for (int i = 1; i < nin; i++) {
        if (in[i].ndim == 0 || lt_shape_equal(in[i].shape, in[i].ndim, shape.shape, shape.ndim))
            continue; /* broadcasting against a scalar or an equal shape changes nothing */
        lt_status st = lt_broadcast_shapes(name, &shape, &in[i], &shape);
        if (st != LT_OK)
            return st;
    }
    const lt_meta *values = in;
    int nvalues = nin;
    if (op == LT_OP_WHERE) {
        if (in[0].dtype != LT_BOOL)
            return lt_error(LT_ERR_DTYPE, "where: condition has dtype %s, expected bool",
                            lt_dtype_name((lt_dtype)in[0].dtype));
        values = in + 1;
        nvalues = 2;
    }
    lt_dtype result = LT_F32;
    lt_status st = elementwise_dtype(op, lt_result_type(values, nvalues), &result);
    if (st != LT_OK)
        return st;
    if (op == LT_OP_CLAMP && (isnan(a->f[0]) || isnan(a->f[1])))
        return lt_error(LT_ERR_ARGUMENT, "clamp: bounds must not be NaN (got %g, %g)", a->f[0], a->f[1]);
    if (op == LT_OP_CLAMP && a->f[0] > a->f[1])
        return lt_error(LT_ERR_ARGUMENT, "clamp: lower bound %g is greater than upper bound %g", a->f[0],
                        a->f[1]);
    if (op == LT_OP_CLAMP && in[0].dtype == LT_BOOL)
        return lt_error(LT_ERR_DTYPE, "clamp: bool inputs are not supported");
    if ((op == LT_OP_ADD || op == LT_OP_SUB) && a->nf > 0 && !lt_dtype_is_floating(result)) {
        /* integer results need an integer alpha, as in PyTorch */
        double alpha = a->f[0];
        if (!(alpha == floor(alpha) && fabs(alpha) < 9.2e18))
            return lt_error(LT_ERR_ARGUMENT, "%s: alpha %g must be an integer for a %s result", name, alpha,
                            lt_dtype_name(result));
    }
    out[0] = lt_meta_make(result, shape.shape, shape.ndim);
    return LT_OK;
}

static lt_status infer_cast(lt_op op, const lt_meta *in, int nin, const lt_attrs *a, lt_meta *out)
{
    (void)op, (void)nin;
    if (!lt_dtype_valid(a->dtype))
        return lt_error(LT_ERR_DTYPE, "cast: invalid target dtype %d", a->dtype);
    out[0] = lt_meta_make((lt_dtype)a->dtype, in[0].shape, in[0].ndim);
    return LT_OK;
}

/* copy(dst, src) and fill(dst): the result is dst's meta; src must
 * broadcast to dst's shape. */
static lt_status infer_write(lt_op op, const lt_meta *in, int nin, const lt_attrs *a, lt_meta *out)
{
    if (nin == 2) {
        lt_meta b;
        lt_status st = lt_broadcast_shapes("copy_", &in[0], &in[1], &b);
        if (st != LT_OK)
            return st;
        if (!lt_shape_equal(b.shape, b.ndim, in[0].shape, in[0].ndim)) {
            char s1[160], s2[160];
            return lt_error(LT_ERR_SHAPE, "copy_: source shape %s cannot be broadcast to destination shape %s",
                            lt_shape_str(in[1].shape, in[1].ndim, s1, sizeof s1),
                            lt_shape_str(in[0].shape, in[0].ndim, s2, sizeof s2));
        }
    }
    if (op == LT_OP_FILL) {
        lt_status st = lt_check_fill_value("fill_", a->f[0], (lt_dtype)in[0].dtype);
        if (st != LT_OK)
            return st;
    }
    out[0] = lt_meta_make((lt_dtype)in[0].dtype, in[0].shape, in[0].ndim);
    return LT_OK;
}

void lt_infer_register_elementwise(void)
{
    for (int op = 0; op < LT_OP_COUNT; op++) {
        int cls = lt_op_infos[op].cls;
        if (cls == LT_OPC_UNARY || cls == LT_OPC_BINARY || cls == LT_OPC_TERNARY)
            lt_op_set_infer((lt_op)op, infer_elementwise);
    }
    lt_op_set_infer(LT_OP_CAST, infer_cast);
    lt_op_set_infer(LT_OP_COPY, infer_write);
    lt_op_set_infer(LT_OP_FILL, infer_write);
}
