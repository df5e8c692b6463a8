/*
 * grad_collective.c - gradients of the collectives. Each is itself a
 * collective, so every rank must run backward through the same ops in the
 * same order (as data-parallel training does).
 */
#include "autograd/autograd.h"

#define X (c->in[0])
#define G (c->gout[0])

static lt_status no_gradient(const lt_grad_ctx *c)
{
    return lt_error(LT_ERR_UNSUPPORTED,
                    "%s: LT_REDUCE_MAX has no gradient (expected LT_REDUCE_SUM or LT_REDUCE_MEAN for a tensor "
                    "that requires grad)",
                    lt_op_name(c->op));
}

static lt_status all_reduce_grad(const lt_grad_ctx *c, lt_tensor **gin)
{
    if (c->a->i[0] == LT_REDUCE_MAX)
        return no_gradient(c);
    gin[0] = lt_all_reduce(G, (lt_reduce_op)c->a->i[0]);
    return lt_grad_done(c, gin);
}

/* Every rank's gradient flows back to the root's input. */
static lt_status broadcast_grad(const lt_grad_ctx *c, lt_tensor **gin)
{
    lt_tensor *sum = lt_all_reduce(G, LT_REDUCE_SUM);
    if (!sum)
        return lt_last_status();
    gin[0] = lt_dist_rank() == c->a->i[1] ? sum : lt_mul_scalar(sum, 0.0);
    return lt_grad_done(c, gin);
}

static lt_status all_gather_grad(const lt_grad_ctx *c, lt_tensor **gin)
{
    lt_tensor *g = lt_reduce_scatter(G, LT_REDUCE_SUM);
    int64_t scalar_shape[1] = {0};
    gin[0] = lt_tensor_ndim(X) == 0 ? lt_reshape(g, scalar_shape, 0) : g;
    return lt_grad_done(c, gin);
}

static lt_status reduce_scatter_grad(const lt_grad_ctx *c, lt_tensor **gin)
{
    if (c->a->i[0] == LT_REDUCE_MAX)
        return no_gradient(c);
    lt_tensor *g = lt_all_gather(G);
    gin[0] = c->a->i[0] == LT_REDUCE_MEAN ? lt_mul_scalar(g, 1.0 / (double)c->a->i[2]) : g;
    return lt_grad_done(c, gin);
}

void lt_grad_register_collective(void)
{
    lt_grad_set(LT_OP_ALL_REDUCE, all_reduce_grad);
    lt_grad_set(LT_OP_BROADCAST, broadcast_grad);
    lt_grad_set(LT_OP_ALL_GATHER, all_gather_grad);
    lt_grad_set(LT_OP_REDUCE_SCATTER, reduce_scatter_grad);
}
