/*
 * grad_elementwise_ext.c - gradient formulas of the trigonometric,
 * hyperbolic and logarithm family, the activations and the two-operand
 * math ops (atan2, hypot, copysign, xlogy, logaddexp, fmod). Written with
 * the public ops, like grad_elementwise.c, and matching PyTorch's
 * derivatives.yaml formulas (boundary conventions included: leaky_relu and
 * elu use the x > 0 branch only for x > 0, hardswish's middle branch is
 * -3 <= x <= 3, hardsigmoid passes strictly inside (-3, 3)).
 */
#include "autograd/autograd.h"

#include <math.h>

#define X (c->in[0])
#define Y (c->in[1])
#define O (c->out[0])
#define G (c->gout[0])

/* 1 where cond holds, else 0, in like's dtype. */
static lt_tensor *mask(lt_tensor *cond, lt_tensor *like) { return lt_to_dtype(cond, lt_tensor_dtype(like)); }

/* 1 - x^2 */
static lt_tensor *one_minus_sq(lt_tensor *x) { return lt_rsub_scalar(lt_mul(x, x), 1); }

static lt_tensor *activation_grad(const lt_grad_ctx *c);

/* The gradient of a unary op of this file. */
static lt_tensor *unary_grad(const lt_grad_ctx *c)
{
    switch (c->op) {
    case LT_OP_TAN: return lt_mul(G, lt_add_scalar(lt_mul(O, O), 1));
    case LT_OP_ASIN: return lt_mul(G, lt_rsqrt(one_minus_sq(X)));
    case LT_OP_ACOS: return lt_neg(lt_mul(G, lt_rsqrt(one_minus_sq(X))));
    case LT_OP_ATAN: return lt_div(G, lt_add_scalar(lt_mul(X, X), 1));
    case LT_OP_SINH: return lt_mul(G, lt_cosh(X));
    case LT_OP_COSH: return lt_mul(G, lt_sinh(X));
    case LT_OP_ASINH: return lt_mul(G, lt_rsqrt(lt_add_scalar(lt_mul(X, X), 1)));
    case LT_OP_ACOSH: return lt_mul(G, lt_rsqrt(lt_mul(lt_sub_scalar(X, 1), lt_add_scalar(X, 1))));
    case LT_OP_ATANH: return lt_div(G, one_minus_sq(X));
    case LT_OP_LOG2: return lt_div(G, lt_mul_scalar(X, M_LN2));
    case LT_OP_LOG10: return lt_div(G, lt_mul_scalar(X, M_LN10));
    case LT_OP_EXP2: return lt_mul(G, lt_mul_scalar(O, M_LN2));
    case LT_OP_TRUNC: return lt_zeros_like(G);
    case LT_OP_FRAC: return G;
    default: return activation_grad(c);
    }
}

/* gelu with the tanh approximation: torch's GeluBackward formula. */
static lt_tensor *gelu_tanh_grad(const lt_grad_ctx *c)
{
    const double beta = 0.7978845608028654, kappa = 0.044715;
    lt_tensor *x2 = lt_mul(X, X);
    lt_tensor *inner = lt_mul_scalar(lt_add(X, lt_mul_scalar(lt_mul(x2, X), kappa)), beta);
    lt_tensor *th = lt_tanh(inner);
    lt_tensor *left = lt_mul_scalar(lt_add_scalar(th, 1), 0.5);
    lt_tensor *right = lt_mul(lt_mul(lt_mul_scalar(X, 0.5), one_minus_sq(th)),
                              lt_mul_scalar(lt_add_scalar(lt_mul_scalar(x2, 3 * kappa), 1), beta));
    return lt_mul(G, lt_add(left, right));
}

static lt_tensor *activation_grad(const lt_grad_ctx *c)
{
    const double *f = c->a->f;
    switch (c->op) {
    case LT_OP_SOFTPLUS: { /* sigmoid(beta x), 1 above the threshold */
        lt_tensor *bx = lt_mul_scalar(X, f[0]);
        return lt_mul(G, lt_where(lt_gt_scalar(bx, f[1]), lt_ones_like(bx), lt_sigmoid(bx)));
    }
    case LT_OP_MISH: { /* tanh(sp) + x sigmoid(x) (1 - tanh(sp)^2) */
        lt_tensor *tsp = lt_tanh(lt_softplus(X, 1, 20));
        return lt_mul(G, lt_add(tsp, lt_mul(lt_mul(X, lt_sigmoid(X)), one_minus_sq(tsp))));
    }
    case LT_OP_LOGSIGMOID: return lt_mul(G, lt_sigmoid(lt_neg(X)));
    case LT_OP_SOFTSIGN: {
        lt_tensor *d = lt_add_scalar(lt_abs(X), 1);
        return lt_div(G, lt_mul(d, d));
    }
    case LT_OP_ELU: { /* scale, or alpha scale input_scale exp(input_scale x) */
        lt_tensor *neg = lt_mul_scalar(lt_exp(lt_mul_scalar(X, f[2])), f[0] * f[1] * f[2]);
        return lt_mul(G, lt_where(lt_gt_scalar(X, 0), lt_full_like(X, f[1]), neg));
    }
    case LT_OP_LEAKY_RELU:
        return lt_mul(G, lt_where(lt_gt_scalar(X, 0), lt_ones_like(X), lt_full_like(X, f[0])));
    case LT_OP_HARDSIGMOID:
        return lt_mul(G, lt_mul_scalar(mask(lt_logical_and(lt_gt_scalar(X, -3), lt_lt_scalar(X, 3)), G), 1.0 / 6));
    case LT_OP_HARDSWISH: {
        lt_tensor *mid = lt_add_scalar(lt_div_scalar(X, 3), 0.5);
        lt_tensor *d = lt_where(lt_lt_scalar(X, -3), lt_zeros_like(X),
                                lt_where(lt_le_scalar(X, 3), mid, lt_ones_like(X)));
        return lt_mul(G, d);
    }
    case LT_OP_GELU_TANH: return gelu_tanh_grad(c);
    default:
        lt_error(LT_ERR_UNSUPPORTED, "backward: %s has no gradient", lt_op_name(c->op));
        return NULL;
    }
}

static lt_status unary_ext(const lt_grad_ctx *c, lt_tensor **gin)
{
    gin[0] = unary_grad(c);
    return lt_grad_done(c, gin);
}

static lt_status binary_ext(const lt_grad_ctx *c, lt_tensor **gin)
{
    bool nx = c->needs[0], ny = c->needs[1];
    switch (c->op) {
    case LT_OP_ATAN2: { /* (y, -x) / (x^2 + y^2) for atan2(x, y) */
        lt_tensor *den = lt_add(lt_mul(X, X), lt_mul(Y, Y));
        gin[0] = nx ? lt_div(lt_mul(G, Y), den) : NULL;
        gin[1] = ny ? lt_neg(lt_div(lt_mul(G, X), den)) : NULL;
        break;
    }
    case LT_OP_HYPOT:
        gin[0] = nx ? lt_div(lt_mul(G, X), O) : NULL;
        gin[1] = ny ? lt_div(lt_mul(G, Y), O) : NULL;
        break;
    case LT_OP_COPYSIGN: { /* result / x, 0 where x == 0; none for the sign */
        lt_tensor *ratio = lt_div(O, X);
        gin[0] = nx ? lt_mul(G, lt_where(lt_eq_scalar(X, 0), lt_zeros_like(ratio), ratio)) : NULL;
        gin[1] = ny ? lt_zeros_like(lt_mul(G, Y)) : NULL;
        break;
    }
    case LT_OP_XLOGY: { /* log(y), 0 where x == 0 and y <= 0; x / y */
        if (nx) {
            lt_tensor *d = lt_xlogy(G, Y);
            gin[0] = lt_where(lt_logical_and(lt_eq_scalar(X, 0), lt_le_scalar(Y, 0)), lt_zeros_like(d), d);
        }
        gin[1] = ny ? lt_div(lt_mul(G, X), Y) : NULL;
        break;
    }
    case LT_OP_LOGADDEXP:
        gin[0] = nx ? lt_mul(G, lt_exp(lt_sub(X, O))) : NULL;
        gin[1] = ny ? lt_mul(G, lt_exp(lt_sub(Y, O))) : NULL;
        break;
    case LT_OP_FMOD: /* x - trunc(x / y) y */
        gin[0] = nx ? G : NULL;
        gin[1] = ny ? lt_neg(lt_mul(G, lt_trunc(lt_div(X, Y)))) : NULL;
        break;
    default:
        return lt_error(LT_ERR_UNSUPPORTED, "backward: %s has no gradient", lt_op_name(c->op));
    }
    return lt_grad_done(c, gin);
}

void lt_grad_register_elementwise_ext(void)
{
    static const lt_op unary_ops[] = {
        LT_OP_TAN, LT_OP_ASIN, LT_OP_ACOS, LT_OP_ATAN, LT_OP_SINH, LT_OP_COSH, LT_OP_ASINH,
        LT_OP_ACOSH, LT_OP_ATANH, LT_OP_LOG2, LT_OP_LOG10, LT_OP_EXP2, LT_OP_TRUNC, LT_OP_FRAC,
        LT_OP_SOFTPLUS, LT_OP_MISH, LT_OP_LOGSIGMOID, LT_OP_SOFTSIGN, LT_OP_ELU, LT_OP_LEAKY_RELU,
        LT_OP_HARDSIGMOID, LT_OP_HARDSWISH, LT_OP_GELU_TANH};
    for (size_t k = 0; k < sizeof unary_ops / sizeof unary_ops[0]; k++)
        lt_grad_set(unary_ops[k], unary_ext);
    static const lt_op binary_ops[] = {LT_OP_ATAN2, LT_OP_HYPOT, LT_OP_COPYSIGN,
                                       LT_OP_XLOGY, LT_OP_LOGADDEXP, LT_OP_FMOD};
    for (size_t k = 0; k < sizeof binary_ops / sizeof binary_ops[0]; k++)
        lt_grad_set(binary_ops[k], binary_ext);
}
