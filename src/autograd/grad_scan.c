/*
 * grad_scan.c - gradient formulas of the scans added after cumsum:
 * cumprod, cummax/cummin and logcumsumexp, and of the selections
 * kthvalue, median_dim, mode and quantile (the formulas PyTorch uses).
 */
#include "autograd/autograd.h"

#include <float.h>

#define X (c->in[0])
#define O (c->out[0])
#define G (c->gout[0])

/* t reversed along dim (index_select with a descending arange). */
static lt_tensor *flip(lt_tensor *t, int dim)
{
    int64_t n = lt_tensor_size(t, dim);
    lt_tensor *rev = lt_arange((double)(n - 1), -1.0, -1.0, LT_I64, lt_tensor_device(t));
    return lt_index_select(t, dim, rev);
}

/* cumprod: exact, zeros included (the cumprod_grad op). */
static lt_status cumprod_grad(const lt_grad_ctx *c, lt_tensor **gin)
{
    gin[0] = lt_cumprod_grad(X, G, (int)c->a->i[0]);
    return lt_grad_done(c, gin);
}

/* cummax/cummin: g goes to the element each running extremum came from,
 * summed (scatter_add along dim). The tape keeps no integer outputs, so
 * the indices are recomputed when absent. */
static lt_status cumext_grad(const lt_grad_ctx *c, lt_tensor **gin)
{
    if (lt_tensor_ndim(X) == 0) {
        gin[0] = G;
        return lt_grad_done(c, gin);
    }
    int dim = (int)c->a->i[0];
    lt_tensor *index = c->nout > 1 ? c->out[1] : NULL;
    if (!index) {
        if (c->op == LT_OP_CUMMAX)
            lt_cummax(X, dim, &index);
        else
            lt_cummin(X, dim, &index);
    }
    lt_tensor *zeros = lt_zeros(lt_tensor_shape(X), lt_tensor_ndim(X), lt_tensor_dtype(G), lt_tensor_device(G));
    gin[0] = lt_scatter_add(zeros, dim, index, G);
    return lt_grad_done(c, gin);
}

/* log(x) of |g| where g has the wanted sign, the lowest finite value
 * elsewhere (so that exp of it vanishes). */
static lt_tensor *log_of_part(lt_tensor *g, lt_tensor *log_abs, bool positive)
{
    double lowest = lt_tensor_dtype(g) == LT_F64 ? -DBL_MAX : -FLT_MAX;
    lt_tensor *sel = positive ? lt_gt_scalar(g, 0) : lt_lt_scalar(g, 0);
    return lt_where(sel, log_abs, lt_full_like(g, lowest));
}

/* logcumsumexp: sum_{i>=k} g_i exp(x_k - y_i), computed as PyTorch does in
 * log space, the positive and negative parts of g apart:
 * exp(rev_lcse(log g+ - y) + x) - exp(rev_lcse(log g- - y) + x). */
static lt_status logcumsumexp_grad(const lt_grad_ctx *c, lt_tensor **gin)
{
    if (lt_tensor_ndim(G) == 0 || lt_tensor_numel(G) == 0) {
        gin[0] = G;
        return lt_grad_done(c, gin);
    }
    int dim = (int)c->a->i[0];
    lt_tensor *log_abs = lt_log(lt_abs(G));
    lt_tensor *parts[2];
    for (int k = 0; k < 2; k++) {
        lt_tensor *lg = lt_sub(log_of_part(G, log_abs, k == 0), O);
        lt_tensor *rev = flip(lt_logcumsumexp(flip(lg, dim), dim), dim);
        parts[k] = lt_exp(lt_add(rev, X));
    }
    gin[0] = lt_sub(parts[0], parts[1]);
    return lt_grad_done(c, gin);
}

/* kthvalue, median_dim, mode: g goes to the selected element. The tape
 * keeps no integer outputs, so the index is recomputed when absent. */
static lt_status select_grad(const lt_grad_ctx *c, lt_tensor **gin)
{
    if (lt_tensor_ndim(X) == 0) {
        gin[0] = G;
        return lt_grad_done(c, gin);
    }
    bool kth = c->op == LT_OP_KTHVALUE, keep = (c->a->flag & 1) != 0;
    int dim = (int)(kth ? c->a->i[1] : c->a->i[0]);
    lt_tensor *index = c->nout > 1 ? c->out[1] : NULL;
    if (!index) {
        if (kth)
            lt_kthvalue(X, c->a->i[0], dim, keep, &index);
        else if (c->op == LT_OP_MEDIAN_DIM)
            lt_median_dim(X, dim, keep, &index);
        else
            lt_mode(X, dim, keep, &index);
    }
    lt_tensor *g = keep ? G : lt_unsqueeze(G, dim);
    index = keep ? index : lt_unsqueeze(index, dim);
    lt_tensor *zeros = lt_zeros(lt_tensor_shape(X), lt_tensor_ndim(X), lt_tensor_dtype(G), lt_tensor_device(G));
    gin[0] = lt_scatter(zeros, dim, index, g);
    return lt_grad_done(c, gin);
}

/* quantile: the quantile_grad op (the positions are found again). */
static lt_status quantile_grad(const lt_grad_ctx *c, lt_tensor **gin)
{
    lt_tensor *in[2] = {X, G};
    gin[0] = lt_call(LT_OP_QUANTILE_GRAD, in, 2, c->a, NULL);
    return lt_grad_done(c, gin);
}

void lt_grad_register_scan(void)
{
    lt_grad_set(LT_OP_QUANTILE, quantile_grad);
    lt_grad_set(LT_OP_KTHVALUE, select_grad);
    lt_grad_set(LT_OP_MEDIAN_DIM, select_grad);
    lt_grad_set(LT_OP_MODE, select_grad);
    lt_grad_set(LT_OP_CUMPROD, cumprod_grad);
    lt_grad_set(LT_OP_CUMMAX, cumext_grad);
    lt_grad_set(LT_OP_CUMMIN, cumext_grad);
    lt_grad_set(LT_OP_LOGCUMSUMEXP, logcumsumexp_grad);
}
