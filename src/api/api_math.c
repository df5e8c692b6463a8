/*
 * api_math.c - public math and activation ops beyond the basic
 * elementwise set: trigonometric, hyperbolic and logarithm functions,
 * float tests, two-operand math (atan2, hypot, ...), integer bitwise ops,
 * the activations, and the compositions PyTorch also defines as
 * compositions (lerp, addcmul, addcdiv, nan_to_num, hardtanh, relu6, glu,
 * selu, celu).
 *
 * Every op with an op of its own (ops.def) is one node that the compiler
 * fuses. The compositions are built from fusable elementwise ops and
 * views, so on the lazy device a composition is one kernel too; they run
 * in a scope of their own, named after the public function (lazy failures
 * and compile causes name it).
 */
#include "api/api.h"
#include "api/compose.h"

#include <float.h>
#include <math.h>

/* ---- one op each ------------------------------------------------------- */

lt_tensor *lt_tan(lt_tensor *t) { return lt_call1(LT_OP_TAN, t, NULL); }
lt_tensor *lt_asin(lt_tensor *t) { return lt_call1(LT_OP_ASIN, t, NULL); }
lt_tensor *lt_acos(lt_tensor *t) { return lt_call1(LT_OP_ACOS, t, NULL); }
lt_tensor *lt_atan(lt_tensor *t) { return lt_call1(LT_OP_ATAN, t, NULL); }
lt_tensor *lt_sinh(lt_tensor *t) { return lt_call1(LT_OP_SINH, t, NULL); }
lt_tensor *lt_cosh(lt_tensor *t) { return lt_call1(LT_OP_COSH, t, NULL); }
lt_tensor *lt_asinh(lt_tensor *t) { return lt_call1(LT_OP_ASINH, t, NULL); }
lt_tensor *lt_acosh(lt_tensor *t) { return lt_call1(LT_OP_ACOSH, t, NULL); }
lt_tensor *lt_atanh(lt_tensor *t) { return lt_call1(LT_OP_ATANH, t, NULL); }
lt_tensor *lt_log2(lt_tensor *t) { return lt_call1(LT_OP_LOG2, t, NULL); }
lt_tensor *lt_log10(lt_tensor *t) { return lt_call1(LT_OP_LOG10, t, NULL); }
lt_tensor *lt_exp2(lt_tensor *t) { return lt_call1(LT_OP_EXP2, t, NULL); }
lt_tensor *lt_trunc(lt_tensor *t) { return lt_call1(LT_OP_TRUNC, t, NULL); }
lt_tensor *lt_frac(lt_tensor *t) { return lt_call1(LT_OP_FRAC, t, NULL); }
lt_tensor *lt_isnan(lt_tensor *t) { return lt_call1(LT_OP_ISNAN, t, NULL); }
lt_tensor *lt_isinf(lt_tensor *t) { return lt_call1(LT_OP_ISINF, t, NULL); }
lt_tensor *lt_isfinite(lt_tensor *t) { return lt_call1(LT_OP_ISFINITE, t, NULL); }
lt_tensor *lt_bitwise_not(lt_tensor *t) { return lt_call1(LT_OP_BITWISE_NOT, t, NULL); }
lt_tensor *lt_mish(lt_tensor *t) { return lt_call1(LT_OP_MISH, t, NULL); }
lt_tensor *lt_logsigmoid(lt_tensor *t) { return lt_call1(LT_OP_LOGSIGMOID, t, NULL); }
lt_tensor *lt_softsign(lt_tensor *t) { return lt_call1(LT_OP_SOFTSIGN, t, NULL); }
lt_tensor *lt_hardsigmoid(lt_tensor *t) { return lt_call1(LT_OP_HARDSIGMOID, t, NULL); }
lt_tensor *lt_hardswish(lt_tensor *t) { return lt_call1(LT_OP_HARDSWISH, t, NULL); }
lt_tensor *lt_gelu_tanh(lt_tensor *t) { return lt_call1(LT_OP_GELU_TANH, t, NULL); }

lt_tensor *lt_atan2(lt_tensor *a, lt_tensor *b) { return lt_call2(LT_OP_ATAN2, a, b, NULL); }
lt_tensor *lt_hypot(lt_tensor *a, lt_tensor *b) { return lt_call2(LT_OP_HYPOT, a, b, NULL); }
lt_tensor *lt_copysign(lt_tensor *a, lt_tensor *b) { return lt_call2(LT_OP_COPYSIGN, a, b, NULL); }
lt_tensor *lt_xlogy(lt_tensor *a, lt_tensor *b) { return lt_call2(LT_OP_XLOGY, a, b, NULL); }
lt_tensor *lt_logaddexp(lt_tensor *a, lt_tensor *b) { return lt_call2(LT_OP_LOGADDEXP, a, b, NULL); }
lt_tensor *lt_fmod(lt_tensor *a, lt_tensor *b) { return lt_call2(LT_OP_FMOD, a, b, NULL); }
lt_tensor *lt_floor_divide(lt_tensor *a, lt_tensor *b) { return lt_call2(LT_OP_FLOOR_DIVIDE, a, b, NULL); }
lt_tensor *lt_bitwise_and(lt_tensor *a, lt_tensor *b) { return lt_call2(LT_OP_BITWISE_AND, a, b, NULL); }
lt_tensor *lt_bitwise_or(lt_tensor *a, lt_tensor *b) { return lt_call2(LT_OP_BITWISE_OR, a, b, NULL); }
lt_tensor *lt_bitwise_xor(lt_tensor *a, lt_tensor *b) { return lt_call2(LT_OP_BITWISE_XOR, a, b, NULL); }
lt_tensor *lt_bitwise_left_shift(lt_tensor *a, lt_tensor *b) { return lt_call2(LT_OP_SHIFT_LEFT, a, b, NULL); }
lt_tensor *lt_bitwise_right_shift(lt_tensor *a, lt_tensor *b) { return lt_call2(LT_OP_SHIFT_RIGHT, a, b, NULL); }

/* ---- activations with parameters ---------------------------------------- */

static lt_tensor *call_params(lt_op op, lt_tensor *t, double p0, double p1, double p2, int np)
{
    lt_attrs a = lt_attrs_init();
    a.f[0] = p0;
    a.f[1] = p1;
    a.f[2] = p2;
    a.nf = np;
    return lt_call1(op, t, &a);
}

lt_tensor *lt_softplus(lt_tensor *t, double beta, double threshold)
{
    if (beta == 0 || isnan(beta)) {
        lt_error(LT_ERR_ARGUMENT, "softplus: beta is %g, expected a nonzero number", beta);
        return NULL;
    }
    return call_params(LT_OP_SOFTPLUS, t, beta, threshold, 0, 2);
}

lt_tensor *lt_elu(lt_tensor *t, double alpha) { return call_params(LT_OP_ELU, t, alpha, 1, 1, 3); }

lt_tensor *lt_selu(lt_tensor *t)
{
    /* torch's constants (Klambauer et al.) */
    return call_params(LT_OP_ELU, t, 1.6732632423543772848170429916717, 1.0507009873554804934193349852946, 1, 3);
}

lt_tensor *lt_celu(lt_tensor *t, double alpha)
{
    if (alpha == 0 || isnan(alpha)) {
        lt_error(LT_ERR_ARGUMENT, "celu: alpha is %g, expected a nonzero number", alpha);
        return NULL;
    }
    return call_params(LT_OP_ELU, t, alpha, 1, 1 / alpha, 3);
}

lt_tensor *lt_leaky_relu(lt_tensor *t, double negative_slope)
{
    return call_params(LT_OP_LEAKY_RELU, t, negative_slope, 0, 0, 1);
}

/* ---- compositions ------------------------------------------------------- */

lt_tensor *lt_hardtanh(lt_tensor *t, double min_val, double max_val)
{
    if (isnan(min_val) || isnan(max_val)) {
        lt_error(LT_ERR_ARGUMENT, "hardtanh: bounds must not be NaN (got %g, %g)", min_val, max_val);
        return NULL;
    }
    if (lt_check_tensor("hardtanh", t, 0) != LT_OK)
        return NULL;
    if (!lt_dtype_is_floating(lt_tensor_dtype(t))) { /* torch converts the bounds to t's dtype */
        min_val = trunc(min_val);
        max_val = trunc(max_val);
    }
    if (lt_tensor_dtype(t) == LT_U8 && (min_val < 0 || max_val < 0)) { /* as torch */
        lt_error(LT_ERR_ARGUMENT, "hardtanh: bounds %g, %g: an unsigned (u8) input needs bounds >= 0", min_val,
                 max_val);
        return NULL;
    }
    /* torch: min > max gives max everywhere (NaN stays NaN) */
    return lt_clamp(t, min_val > max_val ? max_val : min_val, max_val);
}

lt_tensor *lt_clamp_tensor(lt_tensor *t, lt_tensor *lo, lt_tensor *hi)
{
    if (!lo && !hi) {
        lt_error(LT_ERR_NULL, "clamp_tensor: lo and hi are both NULL, expected at least one bound");
        return NULL;
    }
    lt_scope_begin();
    lt_origin caller = lt_origin_enter("clamp_tensor");
    lt_tensor *r = lo ? lt_maximum(t, lo) : t;
    if (hi)
        r = lt_minimum(r, hi);
    else
        r = lt_clone(r); /* a new tensor, as with both bounds */
    return lt_scope_return_from(r, caller);
}

lt_tensor *lt_relu6(lt_tensor *t) { return lt_hardtanh(t, 0, 6); }

lt_tensor *lt_glu(lt_tensor *t, int dim)
{
    if (lt_check_tensor("glu", t, 0) != LT_OK)
        return NULL;
    int nd = lt_tensor_ndim(t), d = dim < 0 ? dim + nd : dim;
    if (nd == 0 || d < 0 || d >= nd) {
        lt_error(LT_ERR_ARGUMENT, "glu: dim %d is out of range for a tensor of %d dims", dim, nd);
        return NULL;
    }
    int64_t n = lt_tensor_size(t, d);
    if (n % 2 != 0) {
        lt_error(LT_ERR_SHAPE, "glu: dim %d has size %lld, expected an even size", dim, (long long)n);
        return NULL;
    }
    lt_scope_begin();
    lt_origin caller = lt_origin_enter("glu");
    lt_tensor *r = lt_mul(lt_narrow(t, d, 0, n / 2), lt_sigmoid(lt_narrow(t, d, n / 2, n / 2)));
    return lt_scope_return_from(r, caller);
}

lt_tensor *lt_lerp(lt_tensor *start, lt_tensor *end, lt_tensor *weight)
{
    lt_scope_begin();
    lt_origin caller = lt_origin_enter("lerp");
    /* torch's two-sided form: exact at both ends */
    lt_tensor *diff = lt_sub(end, start);
    lt_tensor *low = lt_add(start, lt_mul(weight, diff));
    lt_tensor *high = lt_sub(end, lt_mul(diff, lt_rsub_scalar(weight, 1)));
    lt_tensor *r = lt_where(lt_lt_scalar(lt_abs(weight), 0.5), low, high);
    return lt_scope_return_from(r, caller);
}

lt_tensor *lt_lerp_scalar(lt_tensor *start, lt_tensor *end, double weight)
{
    lt_scope_begin();
    lt_origin caller = lt_origin_enter("lerp");
    lt_tensor *diff = lt_sub(end, start);
    lt_tensor *r = fabs(weight) < 0.5 ? lt_add(start, lt_mul_scalar(diff, weight))
                                      : lt_sub(end, lt_mul_scalar(diff, 1 - weight));
    return lt_scope_return_from(r, caller);
}

/* The dtype the three operands promote to (torch computes value * t1 * t2
 * in it). */
static lt_dtype addc_dtype(lt_tensor *t, lt_tensor *t1, lt_tensor *t2)
{
    return lt_promote_types(lt_promote_types(lt_tensor_dtype(t), lt_tensor_dtype(t1)), lt_tensor_dtype(t2));
}

/* value * t1 in the operands' dtype dt: torch converts value to dt, so an
 * integer dt truncates it (addcmul(i64, ..., value=2.7) scales by 2). */
static lt_tensor *times_value(lt_tensor *t1, double value, lt_dtype dt)
{
    lt_tensor *a = lt_tensor_dtype(t1) == dt ? t1 : lt_to_dtype(t1, dt);
    if (value == 1 || !a)
        return a;
    return lt_dtype_is_floating(dt) ? lt_mul_scalar(a, value) : lt_mul_iscalar(a, (int64_t)trunc(value));
}

/* Checks the three operands and, for integer operands, that value fits
 * an int64. */
static lt_status check_addc(const char *op, lt_tensor *t, lt_tensor *t1, lt_tensor *t2, double value)
{
    lt_tensor *args[3] = {t, t1, t2};
    for (int i = 0; i < 3; i++)
        if (lt_check_tensor(op, args[i], i) != LT_OK)
            return LT_ERR_NULL;
    if (!lt_dtype_is_floating(addc_dtype(t, t1, t2)) && !(fabs(value) < 0x1p63))
        return lt_error(LT_ERR_ARGUMENT, "%s: value %g does not fit the operands' integer dtype %s", op, value,
                        lt_dtype_name(addc_dtype(t, t1, t2)));
    return LT_OK;
}

lt_tensor *lt_addcmul(lt_tensor *t, lt_tensor *t1, lt_tensor *t2, double value)
{
    if (check_addc("addcmul", t, t1, t2, value) != LT_OK)
        return NULL;
    lt_scope_begin();
    lt_origin caller = lt_origin_enter("addcmul");
    return lt_scope_return_from(lt_add(t, lt_mul(times_value(t1, value, addc_dtype(t, t1, t2)), t2)), caller);
}

lt_tensor *lt_addcdiv(lt_tensor *t, lt_tensor *t1, lt_tensor *t2, double value)
{
    if (check_addc("addcdiv", t, t1, t2, value) != LT_OK)
        return NULL;
    if (!lt_dtype_is_floating(lt_tensor_dtype(t1)) && !lt_dtype_is_floating(lt_tensor_dtype(t2))) {
        lt_error(LT_ERR_DTYPE, "addcdiv: tensor1 and tensor2 have dtypes %s and %s; integer division is not "
                 "supported, expected a floating dtype", lt_dtype_name(lt_tensor_dtype(t1)),
                 lt_dtype_name(lt_tensor_dtype(t2)));
        return NULL;
    }
    lt_scope_begin();
    lt_origin caller = lt_origin_enter("addcdiv");
    return lt_scope_return_from(lt_add(t, lt_div(times_value(t1, value, addc_dtype(t, t1, t2)), t2)), caller);
}

/* Largest finite value of a floating dtype. */
static double dtype_max(lt_dtype dt)
{
    switch (dt) {
    case LT_F64: return DBL_MAX;
    case LT_F16: return 65504.0;
    case LT_BF16: return 3.3895313892515355e38;
    default: return FLT_MAX;
    }
}

lt_tensor *lt_nan_to_num(lt_tensor *t, double nan, double posinf, double neginf)
{
    if (lt_check_tensor("nan_to_num", t, 0) != LT_OK)
        return NULL;
    lt_dtype dt = lt_tensor_dtype(t);
    if (!lt_dtype_is_floating(dt)) /* nothing to replace */
        return lt_clone(t);
    if (isinf(posinf))
        posinf = dtype_max(dt);
    if (isinf(neginf))
        neginf = -dtype_max(dt);
    lt_scope_begin();
    lt_origin caller = lt_origin_enter("nan_to_num");
    lt_tensor *r = lt_masked_fill(t, lt_isnan(t), nan);
    r = lt_masked_fill(r, lt_eq_scalar(t, INFINITY), posinf);
    r = lt_masked_fill(r, lt_eq_scalar(t, -INFINITY), neginf);
    return lt_scope_return_from(r, caller);
}
