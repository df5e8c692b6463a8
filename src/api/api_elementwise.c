/* api_elementwise.c - public unary, binary, ternary, tensor-with-scalar
 * and in-place elementwise ops (fill_, zero_ and copy_ live in
 * api_tensor.c). */
#include "api/api.h"
#include "api/compose.h"

#include <math.h>

/* ---- unary -------------------------------------------------------------- */

lt_tensor *lt_neg(lt_tensor *t) { return lt_call1(LT_OP_NEG, t, NULL); }
lt_tensor *lt_abs(lt_tensor *t) { return lt_call1(LT_OP_ABS, t, NULL); }
lt_tensor *lt_exp(lt_tensor *t) { return lt_call1(LT_OP_EXP, t, NULL); }
lt_tensor *lt_log(lt_tensor *t) { return lt_call1(LT_OP_LOG, t, NULL); }
lt_tensor *lt_log1p(lt_tensor *t) { return lt_call1(LT_OP_LOG1P, t, NULL); }
lt_tensor *lt_expm1(lt_tensor *t) { return lt_call1(LT_OP_EXPM1, t, NULL); }
lt_tensor *lt_sqrt(lt_tensor *t) { return lt_call1(LT_OP_SQRT, t, NULL); }
lt_tensor *lt_rsqrt(lt_tensor *t) { return lt_call1(LT_OP_RSQRT, t, NULL); }
lt_tensor *lt_sin(lt_tensor *t) { return lt_call1(LT_OP_SIN, t, NULL); }
lt_tensor *lt_cos(lt_tensor *t) { return lt_call1(LT_OP_COS, t, NULL); }
lt_tensor *lt_tanh(lt_tensor *t) { return lt_call1(LT_OP_TANH, t, NULL); }
lt_tensor *lt_sigmoid(lt_tensor *t) { return lt_call1(LT_OP_SIGMOID, t, NULL); }
lt_tensor *lt_relu(lt_tensor *t) { return lt_call1(LT_OP_RELU, t, NULL); }
lt_tensor *lt_gelu(lt_tensor *t) { return lt_call1(LT_OP_GELU, t, NULL); }
lt_tensor *lt_silu(lt_tensor *t) { return lt_call1(LT_OP_SILU, t, NULL); }
lt_tensor *lt_erf(lt_tensor *t) { return lt_call1(LT_OP_ERF, t, NULL); }
lt_tensor *lt_sign(lt_tensor *t) { return lt_call1(LT_OP_SIGN, t, NULL); }
lt_tensor *lt_floor(lt_tensor *t) { return lt_call1(LT_OP_FLOOR, t, NULL); }
lt_tensor *lt_ceil(lt_tensor *t) { return lt_call1(LT_OP_CEIL, t, NULL); }
lt_tensor *lt_round(lt_tensor *t) { return lt_call1(LT_OP_ROUND, t, NULL); }
lt_tensor *lt_reciprocal(lt_tensor *t) { return lt_call1(LT_OP_RECIPROCAL, t, NULL); }
lt_tensor *lt_logical_not(lt_tensor *t) { return lt_call1(LT_OP_LOGICAL_NOT, t, NULL); }

/* Attributes of clamp: f0 lo, f1 hi. As in torch, lo > hi gives hi
 * everywhere: min(max(x, lo), hi), so lo is lowered to hi. */
static lt_attrs clamp_attrs(double lo, double hi)
{
    lt_attrs a = lt_attrs_init();
    a.f[0] = lo > hi ? hi : lo;
    a.f[1] = hi;
    a.nf = 2;
    return a;
}

static bool is_fractional(double v) { return isfinite(v) && v != trunc(v); }

/* A fractional bound is a Python float to torch: clamping an integer tensor
 * by it gives the default float dtype (f32). Integral bounds (an int to
 * torch) and the infinities (no bound) keep the tensor's dtype; bool keeps
 * its own rules. */
static bool bounds_promote(const lt_tensor *t, double lo, double hi)
{
    if (lt_check_tensor("clamp", t, 0) != LT_OK) {
        lt_clear_error(); /* lt_call1 reports the bad handle under its own name */
        return false;
    }
    lt_dtype dt = lt_tensor_dtype(t);
    return !lt_dtype_is_floating(dt) && dt != LT_BOOL && (is_fractional(lo) || is_fractional(hi));
}

lt_tensor *lt_clamp(lt_tensor *t, double lo, double hi)
{
    lt_attrs a = clamp_attrs(lo, hi);
    if (!bounds_promote(t, lo, hi))
        return lt_call1(LT_OP_CLAMP, t, &a);
    lt_scope_begin();
    lt_tensor *as_float = lt_to_dtype(t, LT_F32);
    return lt_scope_return(as_float ? lt_call1(LT_OP_CLAMP, as_float, &a) : NULL);
}

/* ---- binary and ternary ------------------------------------------------- */

/* Attributes of add/sub: f0 alpha. */
static lt_attrs alpha_attrs(double alpha)
{
    lt_attrs a = lt_attrs_init();
    a.f[0] = alpha;
    a.nf = 1;
    return a;
}

lt_tensor *lt_add(lt_tensor *a, lt_tensor *b) { return lt_call2(LT_OP_ADD, a, b, NULL); }
lt_tensor *lt_sub(lt_tensor *a, lt_tensor *b) { return lt_call2(LT_OP_SUB, a, b, NULL); }

lt_tensor *lt_add_scaled(lt_tensor *a, lt_tensor *b, double alpha)
{
    lt_attrs at = alpha_attrs(alpha);
    return lt_call2(LT_OP_ADD, a, b, &at);
}

lt_tensor *lt_sub_scaled(lt_tensor *a, lt_tensor *b, double alpha)
{
    lt_attrs at = alpha_attrs(alpha);
    return lt_call2(LT_OP_SUB, a, b, &at);
}

lt_tensor *lt_mul(lt_tensor *a, lt_tensor *b) { return lt_call2(LT_OP_MUL, a, b, NULL); }
lt_tensor *lt_div(lt_tensor *a, lt_tensor *b) { return lt_call2(LT_OP_DIV, a, b, NULL); }
lt_tensor *lt_pow(lt_tensor *a, lt_tensor *b) { return lt_call2(LT_OP_POW, a, b, NULL); }
lt_tensor *lt_maximum(lt_tensor *a, lt_tensor *b) { return lt_call2(LT_OP_MAXIMUM, a, b, NULL); }
lt_tensor *lt_minimum(lt_tensor *a, lt_tensor *b) { return lt_call2(LT_OP_MINIMUM, a, b, NULL); }
lt_tensor *lt_remainder(lt_tensor *a, lt_tensor *b) { return lt_call2(LT_OP_REMAINDER, a, b, NULL); }
lt_tensor *lt_eq(lt_tensor *a, lt_tensor *b) { return lt_call2(LT_OP_EQ, a, b, NULL); }
lt_tensor *lt_ne(lt_tensor *a, lt_tensor *b) { return lt_call2(LT_OP_NE, a, b, NULL); }
lt_tensor *lt_lt(lt_tensor *a, lt_tensor *b) { return lt_call2(LT_OP_LT, a, b, NULL); }
lt_tensor *lt_le(lt_tensor *a, lt_tensor *b) { return lt_call2(LT_OP_LE, a, b, NULL); }
lt_tensor *lt_gt(lt_tensor *a, lt_tensor *b) { return lt_call2(LT_OP_GT, a, b, NULL); }
lt_tensor *lt_ge(lt_tensor *a, lt_tensor *b) { return lt_call2(LT_OP_GE, a, b, NULL); }
lt_tensor *lt_logical_and(lt_tensor *a, lt_tensor *b) { return lt_call2(LT_OP_LOGICAL_AND, a, b, NULL); }
lt_tensor *lt_logical_or(lt_tensor *a, lt_tensor *b) { return lt_call2(LT_OP_LOGICAL_OR, a, b, NULL); }

lt_tensor *lt_where(lt_tensor *cond, lt_tensor *a, lt_tensor *b)
{
    lt_attrs at = lt_attrs_init();
    lt_tensor *in[3] = {cond, a, b};
    return lt_call(LT_OP_WHERE, in, 3, &at, NULL);
}

/* ---- tensor with a C scalar (a weak f64 0-d tensor: promotes like a
 *      Python float) ------------------------------------------------------ */

lt_tensor *lt_add_scalar(lt_tensor *t, double s) { return lt_call_scalar(LT_OP_ADD, t, s, false, NULL); }
lt_tensor *lt_sub_scalar(lt_tensor *t, double s) { return lt_call_scalar(LT_OP_SUB, t, s, false, NULL); }
lt_tensor *lt_rsub_scalar(lt_tensor *t, double s) { return lt_call_scalar(LT_OP_SUB, t, s, true, NULL); }
lt_tensor *lt_mul_scalar(lt_tensor *t, double s) { return lt_call_scalar(LT_OP_MUL, t, s, false, NULL); }
lt_tensor *lt_div_scalar(lt_tensor *t, double s) { return lt_call_scalar(LT_OP_DIV, t, s, false, NULL); }
lt_tensor *lt_pow_scalar(lt_tensor *t, double s) { return lt_call_scalar(LT_OP_POW, t, s, false, NULL); }
lt_tensor *lt_rpow_scalar(lt_tensor *t, double s) { return lt_call_scalar(LT_OP_POW, t, s, true, NULL); }
lt_tensor *lt_maximum_scalar(lt_tensor *t, double s)
{
    return lt_call_scalar(LT_OP_MAXIMUM, t, s, false, NULL);
}
lt_tensor *lt_minimum_scalar(lt_tensor *t, double s)
{
    return lt_call_scalar(LT_OP_MINIMUM, t, s, false, NULL);
}
lt_tensor *lt_remainder_scalar(lt_tensor *t, double s)
{
    return lt_call_scalar(LT_OP_REMAINDER, t, s, false, NULL);
}
lt_tensor *lt_eq_scalar(lt_tensor *t, double s) { return lt_call_scalar(LT_OP_EQ, t, s, false, NULL); }
lt_tensor *lt_ne_scalar(lt_tensor *t, double s) { return lt_call_scalar(LT_OP_NE, t, s, false, NULL); }
lt_tensor *lt_lt_scalar(lt_tensor *t, double s) { return lt_call_scalar(LT_OP_LT, t, s, false, NULL); }
lt_tensor *lt_le_scalar(lt_tensor *t, double s) { return lt_call_scalar(LT_OP_LE, t, s, false, NULL); }
lt_tensor *lt_gt_scalar(lt_tensor *t, double s) { return lt_call_scalar(LT_OP_GT, t, s, false, NULL); }
lt_tensor *lt_ge_scalar(lt_tensor *t, double s) { return lt_call_scalar(LT_OP_GE, t, s, false, NULL); }

/* ---- in place: dst = op(dst, b), written into dst (possibly a view) ------ */

static lt_tensor *inplace2(lt_op op, lt_tensor *dst, lt_tensor *b, const lt_attrs *a)
{
    lt_attrs none = lt_attrs_init();
    lt_tensor *in[2] = {dst, b};
    return lt_call_inplace(op, dst, in, 2, a ? a : &none);
}

lt_tensor *lt_add_(lt_tensor *dst, lt_tensor *b) { return inplace2(LT_OP_ADD, dst, b, NULL); }
lt_tensor *lt_sub_(lt_tensor *dst, lt_tensor *b) { return inplace2(LT_OP_SUB, dst, b, NULL); }

lt_tensor *lt_add_scaled_(lt_tensor *dst, lt_tensor *b, double alpha)
{
    lt_attrs at = alpha_attrs(alpha);
    return inplace2(LT_OP_ADD, dst, b, &at);
}

lt_tensor *lt_sub_scaled_(lt_tensor *dst, lt_tensor *b, double alpha)
{
    lt_attrs at = alpha_attrs(alpha);
    return inplace2(LT_OP_SUB, dst, b, &at);
}

lt_tensor *lt_mul_(lt_tensor *dst, lt_tensor *b) { return inplace2(LT_OP_MUL, dst, b, NULL); }
lt_tensor *lt_div_(lt_tensor *dst, lt_tensor *b) { return inplace2(LT_OP_DIV, dst, b, NULL); }
lt_tensor *lt_pow_(lt_tensor *dst, lt_tensor *b) { return inplace2(LT_OP_POW, dst, b, NULL); }
lt_tensor *lt_maximum_(lt_tensor *dst, lt_tensor *b) { return inplace2(LT_OP_MAXIMUM, dst, b, NULL); }
lt_tensor *lt_minimum_(lt_tensor *dst, lt_tensor *b) { return inplace2(LT_OP_MINIMUM, dst, b, NULL); }

lt_tensor *lt_add_scalar_(lt_tensor *dst, double s)
{
    return lt_call_scalar_inplace(LT_OP_ADD, dst, s, NULL);
}
lt_tensor *lt_sub_scalar_(lt_tensor *dst, double s)
{
    return lt_call_scalar_inplace(LT_OP_SUB, dst, s, NULL);
}
lt_tensor *lt_mul_scalar_(lt_tensor *dst, double s)
{
    return lt_call_scalar_inplace(LT_OP_MUL, dst, s, NULL);
}
lt_tensor *lt_div_scalar_(lt_tensor *dst, double s)
{
    return lt_call_scalar_inplace(LT_OP_DIV, dst, s, NULL);
}
lt_tensor *lt_pow_scalar_(lt_tensor *dst, double s)
{
    return lt_call_scalar_inplace(LT_OP_POW, dst, s, NULL);
}

lt_tensor *lt_clamp_(lt_tensor *dst, double lo, double hi)
{
    if (bounds_promote(dst, lo, hi)) {
        lt_error(LT_ERR_DTYPE, "clamp_: bounds %g, %g on a %s destination: a fractional bound gives f32 (as torch), "
                 "which the destination cannot hold", lo, hi, lt_dtype_name(lt_tensor_dtype(dst)));
        return NULL;
    }
    lt_attrs a = clamp_attrs(lo, hi);
    return lt_call_inplace(LT_OP_CLAMP, dst, &dst, 1, &a);
}

lt_tensor *lt_neg_(lt_tensor *dst)
{
    lt_attrs a = lt_attrs_init();
    return lt_call_inplace(LT_OP_NEG, dst, &dst, 1, &a);
}

lt_tensor *lt_relu_(lt_tensor *dst)
{
    lt_attrs a = lt_attrs_init();
    return lt_call_inplace(LT_OP_RELU, dst, &dst, 1, &a);
}
