/*
 * grad_elementwise.c - gradient formulas of the elementwise ops.
 *
 * x, y: inputs; o: output; g: gradient of the output. Results may keep the
 * broadcast shape: the engine sums them down to each input's shape.
 */
#include "autograd/autograd.h"

#include <math.h>

#define X (c->in[0])
#define Y (c->in[1])
#define O (c->out[0])
#define G (c->gout[0])

/* LT_OK if every wanted gradient was produced, else the error of the op
 * that failed. */
lt_status lt_grad_done(const lt_grad_ctx *c, lt_tensor **gin)
{
    for (int i = 0; i < c->nin; i++)
        if (c->needs[i] && !gin[i])
            return lt_last_status() != LT_OK ? lt_last_status()
                                             : lt_error(LT_ERR_STATE, "backward: %s produced no gradient",
                                                        lt_op_name(c->op));
    return LT_OK;
}

/* 1 where cond holds, else 0, in g's dtype. */
static lt_tensor *mask(lt_tensor *cond, lt_tensor *like) { return lt_to_dtype(cond, lt_tensor_dtype(like)); }

static lt_status unary(const lt_grad_ctx *c, lt_tensor **gin)
{
    lt_tensor *r = NULL;
    switch (c->op) {
    case LT_OP_NEG: r = lt_neg(G); break;
    case LT_OP_ABS: r = lt_mul(G, lt_sign(X)); break;
    case LT_OP_EXP: r = lt_mul(G, O); break;
    case LT_OP_LOG: r = lt_div(G, X); break;
    case LT_OP_LOG1P: r = lt_div(G, lt_add_scalar(X, 1)); break;
    case LT_OP_EXPM1: r = lt_mul(G, lt_add_scalar(O, 1)); break;
    case LT_OP_SQRT: r = lt_div(lt_mul_scalar(G, 0.5), O); break;
    case LT_OP_RSQRT: r = lt_mul(lt_mul_scalar(G, -0.5), lt_mul(O, lt_mul(O, O))); break;
    case LT_OP_SIN: r = lt_mul(G, lt_cos(X)); break;
    case LT_OP_COS: r = lt_neg(lt_mul(G, lt_sin(X))); break;
    case LT_OP_TANH: r = lt_mul(G, lt_rsub_scalar(lt_mul(O, O), 1)); break;
    case LT_OP_SIGMOID: r = lt_mul(G, lt_mul(O, lt_rsub_scalar(O, 1))); break;
    case LT_OP_RELU: r = lt_mul(G, mask(lt_gt_scalar(X, 0), G)); break;
    case LT_OP_GELU: { /* Phi(x) + x * phi(x) */
        lt_tensor *cdf = lt_mul_scalar(lt_add_scalar(lt_erf(lt_mul_scalar(X, M_SQRT1_2)), 1), 0.5);
        lt_tensor *pdf = lt_mul_scalar(lt_exp(lt_mul_scalar(lt_mul(X, X), -0.5)), 0.5 * M_2_SQRTPI * M_SQRT1_2);
        r = lt_mul(G, lt_add(cdf, lt_mul(X, pdf)));
        break;
    }
    case LT_OP_SILU: { /* s * (1 + x * (1 - s)) */
        lt_tensor *s = lt_sigmoid(X);
        r = lt_mul(G, lt_mul(s, lt_add_scalar(lt_mul(X, lt_rsub_scalar(s, 1)), 1)));
        break;
    }
    case LT_OP_ERF: r = lt_mul(G, lt_mul_scalar(lt_exp(lt_neg(lt_mul(X, X))), M_2_SQRTPI)); break;
    case LT_OP_RECIPROCAL: r = lt_neg(lt_mul(G, lt_mul(O, O))); break;
    case LT_OP_CAST: r = G; break;
    case LT_OP_CLAMP: /* passes where lo <= x <= hi */
        r = lt_mul(G, mask(lt_logical_and(lt_ge_scalar(X, c->a->f[0]), lt_le_scalar(X, c->a->f[1])), G));
        break;
    default: /* sign, floor, ceil, round: zero almost everywhere */
        return LT_OK;
    }
    gin[0] = r;
    return lt_grad_done(c, gin);
}

static double alpha_of(const lt_grad_ctx *c) { return c->a->nf > 0 ? c->a->f[0] : 1.0; }

/* maximum/minimum: the winner gets g, ties split it evenly (as PyTorch). */
static lt_status extremum(const lt_grad_ctx *c, lt_tensor **gin)
{
    lt_tensor *wins = c->op == LT_OP_MAXIMUM ? lt_gt(X, Y) : lt_lt(X, Y);
    lt_tensor *ties = mask(lt_eq(X, Y), G);
    lt_tensor *half = lt_mul_scalar(ties, 0.5);
    lt_tensor *share_x = lt_add(mask(wins, G), half);
    if (c->needs[0])
        gin[0] = lt_mul(G, share_x);
    if (c->needs[1])
        gin[1] = lt_mul(G, lt_rsub_scalar(share_x, 1));
    return lt_grad_done(c, gin);
}

static lt_status binary(const lt_grad_ctx *c, lt_tensor **gin)
{
    bool nx = c->needs[0], ny = c->needs[1];
    switch (c->op) {
    case LT_OP_ADD:
        gin[0] = nx ? G : NULL;
        gin[1] = ny ? lt_mul_scalar(G, alpha_of(c)) : NULL;
        break;
    case LT_OP_SUB:
        gin[0] = nx ? G : NULL;
        gin[1] = ny ? lt_mul_scalar(G, -alpha_of(c)) : NULL;
        break;
    case LT_OP_MUL:
        gin[0] = nx ? lt_mul(G, Y) : NULL;
        gin[1] = ny ? lt_mul(G, X) : NULL;
        break;
    case LT_OP_DIV:
        gin[0] = nx ? lt_div(G, Y) : NULL;
        gin[1] = ny ? lt_neg(lt_div(lt_mul(G, O), Y)) : NULL;
        break;
    case LT_OP_POW: /* d/dx = y x^(y-1); d/dy = o log(x), 0 where x == 0 */
        gin[0] = nx ? lt_mul(G, lt_mul(Y, lt_pow(X, lt_sub_scalar(Y, 1)))) : NULL;
        if (ny) {
            lt_tensor *d = lt_mul(G, lt_mul(O, lt_log(X)));
            gin[1] = lt_where(lt_eq_scalar(X, 0), lt_zeros_like(d), d);
        }
        break;
    case LT_OP_REMAINDER:
        gin[0] = nx ? G : NULL;
        gin[1] = ny ? lt_neg(lt_mul(G, lt_floor(lt_div(X, Y)))) : NULL;
        break;
    case LT_OP_MAXIMUM:
    case LT_OP_MINIMUM:
        return extremum(c, gin);
    default:
        return lt_error(LT_ERR_UNSUPPORTED, "backward: %s has no gradient", lt_op_name(c->op));
    }
    return lt_grad_done(c, gin);
}

static lt_status where_grad(const lt_grad_ctx *c, lt_tensor **gin)
{
    lt_tensor *cond = c->in[0];
    lt_tensor *zero = lt_zeros_like(G);
    if (c->needs[1])
        gin[1] = lt_where(cond, G, zero);
    if (c->needs[2])
        gin[2] = lt_where(cond, zero, G);
    return lt_grad_done(c, gin);
}

void lt_grad_register_elementwise(void)
{
    static const lt_op unary_ops[] = {
        LT_OP_NEG, LT_OP_ABS, LT_OP_EXP, LT_OP_LOG, LT_OP_LOG1P, LT_OP_EXPM1, LT_OP_SQRT,
        LT_OP_RSQRT, LT_OP_SIN, LT_OP_COS, LT_OP_TANH, LT_OP_SIGMOID, LT_OP_RELU, LT_OP_GELU,
        LT_OP_SILU, LT_OP_ERF, LT_OP_SIGN, LT_OP_FLOOR, LT_OP_CEIL, LT_OP_ROUND, LT_OP_RECIPROCAL,
        LT_OP_CAST, LT_OP_CLAMP};
    for (size_t k = 0; k < sizeof unary_ops / sizeof unary_ops[0]; k++)
        lt_grad_set(unary_ops[k], unary);
    static const lt_op binary_ops[] = {LT_OP_ADD, LT_OP_SUB, LT_OP_MUL, LT_OP_DIV, LT_OP_POW,
                                       LT_OP_MAXIMUM, LT_OP_MINIMUM, LT_OP_REMAINDER};
    for (size_t k = 0; k < sizeof binary_ops / sizeof binary_ops[0]; k++)
        lt_grad_set(binary_ops[k], binary);
    lt_grad_set(LT_OP_WHERE, where_grad);
}
