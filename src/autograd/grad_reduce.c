/*
 * grad_reduce.c - gradient formulas of the reductions and scans (sum, mean,
 * prod, amax/amin, max_dim/min_dim, var/std, logsumexp, cumsum, softmax,
 * log_softmax).
 *
 * x: the input; o: the output; g: gradient of the output. A reduction's g
 * is first reshaped to "keepdim" form (the input's rank, size 1 at every
 * reduced dim) so that it broadcasts against x; the result must have x's
 * full shape (the engine only ever sums gradients down, it never expands
 * them), so formulas without an x-shaped factor expand explicitly.
 */
#include "autograd/autograd.h"

#define X (c->in[0])
#define O (c->out[0])
#define G (c->gout[0])

/* True if dim d of the input is reduced (ni == 0 reduces every dim). */
static bool is_reduced(const lt_attrs *a, int d)
{
    if (a->ni == 0)
        return true;
    for (int k = 0; k < a->ni; k++)
        if (a->i[k] == d)
            return true;
    return false;
}

/* The input's shape with size 1 at the reduced dims, into shape. */
static int keepdim_shape(const lt_grad_ctx *c, int64_t *shape)
{
    int nd = lt_tensor_ndim(X);
    const int64_t *xs = lt_tensor_shape(X);
    for (int d = 0; d < nd; d++)
        shape[d] = is_reduced(c->a, d) ? 1 : xs[d];
    return nd;
}

/* t (a reduction's output or its gradient) in keepdim form. */
static lt_tensor *keepdim(const lt_grad_ctx *c, lt_tensor *t)
{
    int64_t shape[LT_MAX_DIMS];
    int nd = keepdim_shape(c, shape);
    return lt_reshape(t, shape, nd);
}

/* Number of input elements reduced into each output element. */
static int64_t reduced_count(const lt_grad_ctx *c)
{
    int nd = lt_tensor_ndim(X);
    const int64_t *xs = lt_tensor_shape(X);
    int64_t n = 1;
    for (int d = 0; d < nd; d++)
        if (is_reduced(c->a, d))
            n *= xs[d];
    return n;
}

/* The reduced dims as the int list that lt_sum & co. take. */
static int reduced_dims(const lt_grad_ctx *c, int *dims)
{
    for (int k = 0; k < c->a->ni; k++)
        dims[k] = (int)c->a->i[k];
    return c->a->ni;
}

/* keepdim(t) broadcast to the input's shape (a stride-0 view). */
static lt_tensor *expand_to_input(const lt_grad_ctx *c, lt_tensor *t)
{
    return lt_expand(keepdim(c, t), lt_tensor_shape(X), lt_tensor_ndim(X));
}

static lt_status sum_mean_grad(const lt_grad_ctx *c, lt_tensor **gin)
{
    lt_tensor *g = G;
    if (c->op == LT_OP_MEAN) {
        int64_t n = reduced_count(c);
        g = lt_mul_scalar(g, n > 0 ? 1.0 / (double)n : 0.0);
    }
    gin[0] = expand_to_input(c, g);
    return lt_grad_done(c, gin);
}

/*
 * prod: g * prod / x, written to be exact with zeros (as PyTorch): with no
 * zero in a reduced slice each element gets the product of the others
 * (prod / x); with exactly one zero only that zero gets the product of the
 * others; with two or more every element gets 0.
 */
static lt_status prod_grad(const lt_grad_ctx *c, lt_tensor **gin)
{
    int dims[LT_MAX_DIMS];
    int nd = reduced_dims(c, dims);
    lt_tensor *is_zero = lt_eq_scalar(X, 0);
    lt_tensor *nonzero = lt_masked_fill(X, is_zero, 1.0);
    lt_tensor *prod_nonzero = lt_prod(nonzero, dims, nd, true);
    lt_tensor *zeros = lt_sum(is_zero, dims, nd, true);
    lt_tensor *others_if_none = lt_div(prod_nonzero, nonzero);
    lt_tensor *only_zero = lt_logical_and(is_zero, lt_eq_scalar(zeros, 1));
    lt_tensor *others_if_one = lt_where(only_zero, prod_nonzero, lt_zeros_like(prod_nonzero));
    lt_tensor *others = lt_where(lt_eq_scalar(zeros, 0), others_if_none, others_if_one);
    gin[0] = lt_mul(keepdim(c, G), others);
    return lt_grad_done(c, gin);
}

/* amax/amin: g split evenly among the elements equal to the result. */
static lt_status extremum_grad(const lt_grad_ctx *c, lt_tensor **gin)
{
    int dims[LT_MAX_DIMS];
    int nd = reduced_dims(c, dims);
    lt_tensor *hits = lt_to_dtype(lt_eq(X, keepdim(c, O)), lt_tensor_dtype(G));
    lt_tensor *count = lt_sum(hits, dims, nd, true);
    gin[0] = lt_mul(hits, lt_div(keepdim(c, G), count));
    return lt_grad_done(c, gin);
}

/* max_dim/min_dim: g goes to the first extremum (the index output). The
 * tape keeps no integer outputs, so the index is recomputed when absent. */
static lt_status extremum_dim_grad(const lt_grad_ctx *c, lt_tensor **gin)
{
    if (lt_tensor_ndim(X) == 0) {
        gin[0] = G;
        return lt_grad_done(c, gin);
    }
    int dim = (int)c->a->i[0];
    lt_tensor *index = c->nout > 1 && c->out[1] ? keepdim(c, c->out[1])
                       : c->op == LT_OP_MAX_DIM ? lt_argmax(X, dim, true)
                                                : lt_argmin(X, dim, true);
    lt_tensor *zeros = lt_zeros(lt_tensor_shape(X), lt_tensor_ndim(X), lt_tensor_dtype(G), lt_tensor_device(G));
    gin[0] = lt_scatter(zeros, dim, index, keepdim(c, G));
    return lt_grad_done(c, gin);
}

/* var: g * 2 (x - mean) / (N - correction). std = sqrt(var): g / (2 std)
 * times that, taken as 0 where std is 0 (as PyTorch). */
static lt_status moment_grad(const lt_grad_ctx *c, lt_tensor **gin)
{
    int dims[LT_MAX_DIMS];
    int nd = reduced_dims(c, dims);
    double divisor = (double)reduced_count(c) - c->a->f[0];
    lt_tensor *centered = lt_sub(X, lt_mean(X, dims, nd, true));
    lt_tensor *g = keepdim(c, G);
    if (c->op == LT_OP_VAR) {
        g = lt_mul_scalar(g, 2.0);
    } else {
        lt_tensor *o = keepdim(c, O);
        g = lt_masked_fill(lt_div(g, o), lt_eq_scalar(o, 0), 0.0);
    }
    gin[0] = lt_div_scalar(lt_mul(g, centered), divisor);
    return lt_grad_done(c, gin);
}

/* logsumexp: g * exp(x - o) (the softmax of x over the reduced dims). */
static lt_status logsumexp_grad(const lt_grad_ctx *c, lt_tensor **gin)
{
    gin[0] = lt_mul(keepdim(c, G), lt_exp(lt_sub(X, keepdim(c, O))));
    return lt_grad_done(c, gin);
}

/* t reversed along dim (index_select with a descending arange). */
static lt_tensor *flip(lt_tensor *t, int dim)
{
    int64_t n = lt_tensor_size(t, dim);
    lt_tensor *rev = lt_arange((double)(n - 1), -1.0, -1.0, LT_I64, lt_tensor_device(t));
    return lt_index_select(t, dim, rev);
}

/* cumsum: the reverse cumulative sum of g (exact, unlike total - cumsum). */
static lt_status cumsum_grad(const lt_grad_ctx *c, lt_tensor **gin)
{
    int dim = (int)c->a->i[0];
    gin[0] = lt_tensor_ndim(G) == 0 ? G : flip(lt_cumsum(flip(G, dim), dim), dim);
    return lt_grad_done(c, gin);
}

/* softmax: y (g - sum(g y)); log_softmax: g - exp(y) sum(g). */
static lt_status softmax_grad(const lt_grad_ctx *c, lt_tensor **gin)
{
    int dim = (int)c->a->i[0];
    if (c->op == LT_OP_SOFTMAX)
        gin[0] = lt_mul(O, lt_sub(G, lt_sum(lt_mul(G, O), &dim, 1, true)));
    else
        gin[0] = lt_sub(G, lt_mul(lt_exp(O), lt_sum(G, &dim, 1, true)));
    return lt_grad_done(c, gin);
}

void lt_grad_register_reduce(void)
{
    lt_grad_set(LT_OP_SUM, sum_mean_grad);
    lt_grad_set(LT_OP_MEAN, sum_mean_grad);
    lt_grad_set(LT_OP_PROD, prod_grad);
    lt_grad_set(LT_OP_AMAX, extremum_grad);
    lt_grad_set(LT_OP_AMIN, extremum_grad);
    lt_grad_set(LT_OP_MAX_DIM, extremum_dim_grad);
    lt_grad_set(LT_OP_MIN_DIM, extremum_dim_grad);
    lt_grad_set(LT_OP_VAR, moment_grad);
    lt_grad_set(LT_OP_STD, moment_grad);
    lt_grad_set(LT_OP_LOGSUMEXP, logsumexp_grad);
    lt_grad_set(LT_OP_CUMSUM, cumsum_grad);
    lt_grad_set(LT_OP_SOFTMAX, softmax_grad);
    lt_grad_set(LT_OP_LOG_SOFTMAX, softmax_grad);
}
