/*
 * grad_shape.c - gradient formulas of the views (view, permute, slice,
 * select, expand, diagonal), their inverses (slice/select/diagonal
 * scatter) and the indexing and shaping ops (cat, index_select, gather,
 * scatter, scatter_add, masked_fill, tril, triu, sort, topk, embedding).
 *
 * x: input 0; g: gradient of output 0. The gradient of a view is its
 * scatter into zeros (the matching *_SCATTER op, called with the view's
 * own attributes), and the gradient of an index op routes g back to the
 * positions it was read from (scatter_add into zeros). Integer outputs
 * (sort/topk indices) are not kept on the tape: they are recomputed from x
 * when absent.
 */
#include "autograd/autograd.h"

#define X (c->in[0])
#define G (c->gout[0])

/* Zeros of t's shape in g's dtype and device. */
static lt_tensor *zeros_shaped(lt_tensor *t, lt_tensor *g)
{
    return lt_zeros(lt_tensor_shape(t), lt_tensor_ndim(t), lt_tensor_dtype(g), lt_tensor_device(g));
}

/* Dim i0 (possibly negative) of an op made non-negative for a rank-nd tensor. */
static int dim_attr(const lt_grad_ctx *c, int slot, int nd)
{
    int64_t d = c->a->i[slot];
    return (int)(d < 0 ? d + nd : d);
}

/* ---- views ---------------------------------------------------------------- */

static lt_status view_grad(const lt_grad_ctx *c, lt_tensor **gin)
{
    gin[0] = lt_reshape(G, lt_tensor_shape(X), lt_tensor_ndim(X));
    return lt_grad_done(c, gin);
}

static lt_status permute_grad(const lt_grad_ctx *c, lt_tensor **gin)
{
    int inverse[LT_MAX_DIMS];
    for (int k = 0; k < c->a->ni; k++)
        inverse[c->a->i[k]] = k;
    gin[0] = lt_permute(G, inverse, c->a->ni);
    return lt_grad_done(c, gin);
}

/* The *_SCATTER op inverting a view op. */
static lt_op scatter_of_view(lt_op op)
{
    switch (op) {
    case LT_OP_SLICE: return LT_OP_SLICE_SCATTER;
    case LT_OP_SELECT: return LT_OP_SELECT_SCATTER;
    default: return LT_OP_DIAGONAL_SCATTER;
    }
}

/* slice, select, diagonal: g written into the viewed part of zeros. */
static lt_status strided_view_grad(const lt_grad_ctx *c, lt_tensor **gin)
{
    lt_tensor *in[2] = {zeros_shaped(X, G), G};
    gin[0] = lt_call(scatter_of_view(c->op), in, 2, c->a, NULL);
    return lt_grad_done(c, gin);
}

/* expand: g as is; the engine sums it over the expanded dims. */
static lt_status expand_grad(const lt_grad_ctx *c, lt_tensor **gin)
{
    gin[0] = G;
    return lt_grad_done(c, gin);
}

/* slice/select/diagonal_scatter(base, src): base gets g with the view
 * zeroed, src gets the view of g. */
static lt_status view_scatter_grad(const lt_grad_ctx *c, lt_tensor **gin)
{
    lt_tensor *src = c->in[1];
    if (c->needs[0]) {
        lt_tensor *in[2] = {G, zeros_shaped(src, G)};
        gin[0] = lt_call(c->op, in, 2, c->a, NULL);
    }
    if (c->needs[1])
        gin[1] = lt_call(lt_view_of_scatter(c->op), &G, 1, c->a, NULL);
    return lt_grad_done(c, gin);
}

/* ---- indexing and shaping ------------------------------------------------- */

/* cat: each input gets its slab of g along dim. */
static lt_status cat_grad(const lt_grad_ctx *c, lt_tensor **gin)
{
    int dim = dim_attr(c, 0, lt_tensor_ndim(G));
    int64_t start = 0;
    for (int i = 0; i < c->nin; i++) {
        int64_t len = lt_tensor_size(c->in[i], dim);
        if (c->needs[i])
            gin[i] = lt_narrow(G, dim, start, len);
        start += len;
    }
    return lt_grad_done(c, gin);
}

/* index_select: g's slices added back at their indices (index_add). */
static lt_status index_select_grad(const lt_grad_ctx *c, lt_tensor **gin)
{
    int nd = lt_tensor_ndim(X);
    if (nd == 0) {
        gin[0] = G;
        return lt_grad_done(c, gin);
    }
    int dim = dim_attr(c, 0, nd);
    int64_t shape[LT_MAX_DIMS];
    for (int d = 0; d < nd; d++)
        shape[d] = d == dim ? lt_tensor_numel(c->in[1]) : 1;
    lt_tensor *index = lt_expand(lt_reshape(c->in[1], shape, nd), lt_tensor_shape(G), nd);
    gin[0] = lt_scatter_add(zeros_shaped(X, G), dim, index, G);
    return lt_grad_done(c, gin);
}

/* gather: g added back at the gathered positions. */
static lt_status gather_grad(const lt_grad_ctx *c, lt_tensor **gin)
{
    int nd = lt_tensor_ndim(X);
    gin[0] = nd == 0 ? G : lt_scatter_add(zeros_shaped(X, G), dim_attr(c, 0, nd), c->in[1], G);
    return lt_grad_done(c, gin);
}

/* t ([index shape]) padded with zeros at the end of each dim to shape. */
static lt_tensor *pad_to(lt_tensor *t, const int64_t *shape, int nd)
{
    for (int d = 0; t && d < nd; d++) {
        int64_t have = lt_tensor_size(t, d);
        if (have == shape[d])
            continue;
        int64_t zshape[LT_MAX_DIMS];
        for (int k = 0; k < nd; k++)
            zshape[k] = lt_tensor_size(t, k);
        zshape[d] = shape[d] - have;
        lt_tensor *parts[2] = {t, lt_zeros(zshape, nd, lt_tensor_dtype(t), lt_tensor_device(t))};
        t = lt_cat(parts, 2, d);
    }
    return t;
}

/* scatter(self, index, src) and scatter_add: src gets g at the indexed
 * positions (its elements beyond the index's shape are unused: 0); self
 * gets g, minus the overwritten positions for scatter. */
static lt_status scatter_grad(const lt_grad_ctx *c, lt_tensor **gin)
{
    lt_tensor *index = c->in[1], *src = c->in[2];
    int nd = lt_tensor_ndim(X);
    int dim = nd == 0 ? 0 : dim_attr(c, 0, nd);
    if (c->needs[0])
        gin[0] = c->op == LT_OP_SCATTER_ADD ? G : lt_scatter(G, dim, index, zeros_shaped(index, G));
    if (c->needs[2]) {
        lt_tensor *picked = nd == 0 ? G : lt_gather(G, dim, index);
        gin[2] = pad_to(picked, lt_tensor_shape(src), nd);
    }
    return lt_grad_done(c, gin);
}

/* masked_fill: the filled positions get nothing. */
static lt_status masked_fill_grad(const lt_grad_ctx *c, lt_tensor **gin)
{
    gin[0] = lt_masked_fill(G, c->in[1], 0.0);
    return lt_grad_done(c, gin);
}

/* tril/triu: the kept triangle of g. */
static lt_status triangle_grad(const lt_grad_ctx *c, lt_tensor **gin)
{
    gin[0] = c->op == LT_OP_TRIL ? lt_tril(G, c->a->i[0]) : lt_triu(G, c->a->i[0]);
    return lt_grad_done(c, gin);
}

/* sort/topk: g scattered back to the positions the values came from. */
static lt_status sort_grad(const lt_grad_ctx *c, lt_tensor **gin)
{
    int nd = lt_tensor_ndim(X);
    if (nd == 0) {
        gin[0] = G;
        return lt_grad_done(c, gin);
    }
    lt_tensor *index = c->nout > 1 ? c->out[1] : NULL;
    if (!index) {
        lt_tensor *x = X;
        lt_tensor *extra[1] = {NULL};
        if (lt_call(c->op, &x, 1, c->a, extra))
            index = extra[0];
    }
    int dim = dim_attr(c, c->op == LT_OP_SORT ? 0 : 1, nd);
    gin[0] = index ? lt_scatter(zeros_shaped(X, G), dim, index, G) : NULL;
    return lt_grad_done(c, gin);
}

/* embedding(weight, indices): each row of g is added to the weight row it
 * was read from; indices get no gradient. */
static lt_status embedding_grad(const lt_grad_ctx *c, lt_tensor **gin)
{
    lt_tensor *weight = X, *indices = c->in[1];
    int64_t rows = lt_tensor_numel(indices), width = lt_tensor_size(weight, 1);
    int64_t col_shape[2] = {rows, 1}, row_shape[2] = {rows, width};
    lt_tensor *index = lt_expand(lt_reshape(indices, col_shape, 2), row_shape, 2);
    lt_tensor *g = lt_reshape(G, row_shape, 2);
    gin[0] = lt_scatter_add(zeros_shaped(weight, G), 0, index, g);
    return lt_grad_done(c, gin);
}

void lt_grad_register_shape(void)
{
    lt_grad_set(LT_OP_VIEW, view_grad);
    lt_grad_set(LT_OP_PERMUTE, permute_grad);
    lt_grad_set(LT_OP_SLICE, strided_view_grad);
    lt_grad_set(LT_OP_SELECT, strided_view_grad);
    lt_grad_set(LT_OP_DIAGONAL, strided_view_grad);
    lt_grad_set(LT_OP_EXPAND, expand_grad);
    lt_grad_set(LT_OP_SLICE_SCATTER, view_scatter_grad);
    lt_grad_set(LT_OP_SELECT_SCATTER, view_scatter_grad);
    lt_grad_set(LT_OP_DIAGONAL_SCATTER, view_scatter_grad);
    lt_grad_set(LT_OP_CAT, cat_grad);
    lt_grad_set(LT_OP_INDEX_SELECT, index_select_grad);
    lt_grad_set(LT_OP_GATHER, gather_grad);
    lt_grad_set(LT_OP_SCATTER, scatter_grad);
    lt_grad_set(LT_OP_SCATTER_ADD, scatter_grad);
    lt_grad_set(LT_OP_MASKED_FILL, masked_fill_grad);
    lt_grad_set(LT_OP_TRIL, triangle_grad);
    lt_grad_set(LT_OP_TRIU, triangle_grad);
    lt_grad_set(LT_OP_SORT, sort_grad);
    lt_grad_set(LT_OP_TOPK, sort_grad);
    lt_grad_set(LT_OP_EMBEDDING, embedding_grad);
}
