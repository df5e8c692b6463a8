/*
 * grad_nn.c - gradient formulas of matmul, conv2d, max_pool2d and
 * avg_pool2d.
 *
 * matmul: g @ b^T and a^T @ g, with 1-D operands lifted to matrices and
 * back; the engine sums broadcast batch dims away.
 *
 * conv2d: both gradients are ops of their own, run by the kernels of
 * eager/conv.c: the input gradient (the transposed convolution, w^T g per
 * image folded back onto the input) and the weight gradient (g times x
 * unfolded image by image). The input gradient op, which is also
 * conv_transpose2d, has a gradient of its own (conv2d and the weight
 * gradient again).
 *
 * max_pool2d: g scattered to the argmax positions. avg_pool2d: g divided
 * by each window's divisor and spread over the window (an expand for
 * non-overlapping windows, else the transposed convolution above with a
 * kernel of ones).
 */
#include "autograd/autograd.h"

#define X (c->in[0])
#define G (c->gout[0])

/* ---- matmul ------------------------------------------------------------- */

static lt_tensor *mT(lt_tensor *t) { return lt_transpose(t, -1, -2); }

/* Gradient of b when b is a matrix and a has batch dims: the batch folds
 * into one product a_flat^T @ g_flat instead of a batch summed later. */
static lt_tensor *matrix_b_grad(lt_tensor *a, lt_tensor *g)
{
    int64_t k = lt_tensor_size(a, -1), n = lt_tensor_size(g, -1), rows = 1;
    for (int d = 0; d < lt_tensor_ndim(a) - 1; d++)
        rows *= lt_tensor_size(a, d);
    /* the row count is spelled out: with K or N of 0, -1 would be ambiguous */
    int64_t a_shape[2] = {rows, k}, g_shape[2] = {rows, n};
    return lt_matmul(mT(lt_reshape(a, a_shape, 2)), lt_reshape(g, g_shape, 2));
}

/* True for a matrix stored column-major, such as the transpose of a
 * Linear layer's weight. */
static bool column_major(lt_tensor *t)
{
    const int64_t *st = lt_tensor_strides(t), *sh = lt_tensor_shape(t);
    return lt_tensor_ndim(t) == 2 && sh[1] > 1 && st[0] == 1 && st[1] >= sh[0];
}

static lt_status matmul_grad(const lt_grad_ctx *c, lt_tensor **gin)
{
    lt_tensor *a = c->in[0], *b = c->in[1];
    int na = lt_tensor_ndim(a), nb = lt_tensor_ndim(b);
    if (na == 1 && nb == 1) { /* dot product: g is 0-d */
        gin[0] = c->needs[0] ? lt_mul(G, b) : NULL;
        gin[1] = c->needs[1] ? lt_mul(G, a) : NULL;
        return lt_grad_done(c, gin);
    }
    /* Lift 1-D operands to [1, K] / [K, 1] and g to match. */
    lt_tensor *a2 = na == 1 ? lt_unsqueeze(a, 0) : a;
    lt_tensor *b2 = nb == 1 ? lt_unsqueeze(b, 1) : b;
    lt_tensor *g2 = na == 1 ? lt_unsqueeze(G, -2) : nb == 1 ? lt_unsqueeze(G, -1) : G;
    if (c->needs[0]) {
        lt_tensor *ga = lt_matmul(g2, mT(b2));
        gin[0] = na == 1 ? lt_squeeze(ga, -2) : ga;
    }
    if (c->needs[1]) {
        lt_tensor *gb;
        if (nb == 2 && na >= 3)
            gb = matrix_b_grad(a2, g2);
        else if (na == 2 && column_major(b))
            /* (g^T a)^T: b's gradient then has b's own layout, so the
             * update of the row-major matrix behind b reads it densely */
            gb = mT(lt_matmul(mT(g2), a2));
        else
            gb = lt_matmul(mT(a2), g2);
        gin[1] = nb == 1 ? lt_squeeze(gb, -1) : gb;
    }
    return lt_grad_done(c, gin);
}

/* ---- sliding windows (conv2d, pooling) ------------------------------------ */

/* A 2-D sliding window: kernel, stride, padding, dilation per spatial dim. */
typedef struct window {
    int64_t k[2], s[2], p[2], d[2];
} window;

/* Gradient of conv2d's input x (shape xs) from g, for weight w: the
 * transposed convolution, its own op (col2im of w^T g per image). */
static lt_tensor *conv_input_grad(lt_tensor *g, lt_tensor *w, const int64_t *xs, const window *win,
                                  int64_t groups)
{
    return lt_conv2d_input_grad(g, w, &xs[2], win->s, win->p, win->d, groups);
}

/*
 * Weight gradient of conv2d (shape ws) from x and g: grad[o, c, i, j] =
 * sum_{n, oh, ow} g[n, o, oh, ow] xpad[n, c, oh*s + i*d, ow*s + j*d], one
 * op whose kernel unfolds x image by image (eager/conv.c).
 */
static lt_tensor *conv_weight_grad(lt_tensor *x, lt_tensor *g, const int64_t *ws, const window *win,
                                   int64_t groups)
{
    int64_t kernel[2] = {ws[2], ws[3]};
    return lt_conv2d_weight_grad(x, g, kernel, win->s, win->p, win->d, groups);
}

static lt_status conv2d_grad(const lt_grad_ctx *c, lt_tensor **gin)
{
    lt_tensor *x = X, *w = c->in[1];
    const int64_t *ai = c->a->i;
    window win = {{lt_tensor_size(w, 2), lt_tensor_size(w, 3)}, {ai[0], ai[1]}, {ai[2], ai[3]}, {ai[4], ai[5]}};
    int64_t groups = ai[6];
    if (c->needs[0])
        gin[0] = conv_input_grad(G, w, lt_tensor_shape(x), &win, groups);
    if (c->needs[1])
        gin[1] = conv_weight_grad(x, G, lt_tensor_shape(w), &win, groups);
    if (c->nin > 2 && c->needs[2]) {
        int dims[3] = {0, 2, 3};
        gin[2] = lt_sum(G, dims, 3, false);
    }
    return lt_grad_done(c, gin);
}

/*
 * conv2d_input_grad, y = T(gy, w), the adjoint of conv2d in its input (and
 * so the transposed convolution): <conv2d(z, w), gy> = <z, T(gy, w)> for
 * every z. Its gradient for gy is therefore conv2d of g with w, and for w
 * the weight gradient of a conv2d whose input is g and whose output's
 * gradient is gy.
 */
static lt_status conv2d_input_grad_grad(const lt_grad_ctx *c, lt_tensor **gin)
{
    lt_tensor *gy = c->in[0], *w = c->in[1];
    const int64_t *ai = c->a->i;
    if (c->needs[0])
        gin[0] = lt_conv2d(G, w, NULL, &ai[0], &ai[2], &ai[4], ai[6]);
    if (c->needs[1]) {
        int64_t kernel[2] = {lt_tensor_size(w, 2), lt_tensor_size(w, 3)};
        gin[1] = lt_conv2d_weight_grad(G, gy, kernel, &ai[0], &ai[2], &ai[4], ai[6]);
    }
    return lt_grad_done(c, gin);
}

/* ---- pooling -------------------------------------------------------------- */

/* max_pool2d: g added at each window's argmax (flat h * W + w per plane).
 * The tape keeps no integer outputs, so the indices are recomputed. */
static lt_status max_pool2d_grad(const lt_grad_ctx *c, lt_tensor **gin)
{
    lt_tensor *index = c->nout > 1 ? c->out[1] : NULL;
    if (!index) {
        lt_tensor *x = X;
        lt_tensor *extra[1] = {NULL};
        if (lt_call(LT_OP_MAX_POOL2D, &x, 1, c->a, extra))
            index = extra[0];
    }
    const int64_t *xs = lt_tensor_shape(X), *gs = lt_tensor_shape(G);
    /* sizes spelled out: with an empty batch, -1 would be ambiguous */
    int64_t planes[3] = {xs[0], xs[1], xs[2] * xs[3]}, flat[3] = {gs[0], gs[1], gs[2] * gs[3]};
    lt_tensor *zeros = lt_zeros(planes, 3, lt_tensor_dtype(G), lt_tensor_device(G));
    lt_tensor *r = index ? lt_scatter_add(zeros, 2, lt_reshape(index, flat, 3), lt_reshape(G, flat, 3)) : NULL;
    gin[0] = lt_reshape(r, xs, 4);
    return lt_grad_done(c, gin);
}

/* Each avg_pool2d window's divisor, as a [1, 1, Ho, Wo] tensor (only
 * needed when padded zeros do not count: border windows divide by less). */
static lt_tensor *valid_counts(lt_tensor *x, const lt_attrs *a, lt_tensor *like)
{
    int64_t plane[4] = {1, 1, lt_tensor_size(x, 2), lt_tensor_size(x, 3)};
    lt_tensor *ones = lt_ones(plane, 4, lt_tensor_dtype(like), lt_tensor_device(like));
    lt_tensor *share = lt_avg_pool2d(ones, &a->i[0], &a->i[2], &a->i[4], true);
    return lt_mul_scalar(share, (double)(a->i[0] * a->i[1]));
}

static lt_status avg_pool2d_grad(const lt_grad_ctx *c, lt_tensor **gin)
{
    const lt_attrs *a = c->a;
    const int64_t *xs = lt_tensor_shape(X), *gs = lt_tensor_shape(G);
    window win = {{a->i[0], a->i[1]}, {a->i[2], a->i[3]}, {a->i[4], a->i[5]}, {1, 1}};
    bool padded = win.p[0] > 0 || win.p[1] > 0;
    lt_tensor *g = padded && !(a->flag & 1) ? lt_div(G, valid_counts(X, a, G))
                                             : lt_div_scalar(G, (double)(win.k[0] * win.k[1]));
    bool tiles = !padded && win.s[0] == win.k[0] && win.s[1] == win.k[1] && gs[2] * win.k[0] == xs[2] &&
                 gs[3] * win.k[1] == xs[3];
    if (tiles) { /* windows tile x exactly: every element gets its window's share */
        int64_t split[6] = {gs[0], gs[1], gs[2], 1, gs[3], 1};
        int64_t wide[6] = {gs[0], gs[1], gs[2], win.k[0], gs[3], win.k[1]};
        gin[0] = lt_reshape(lt_expand(lt_reshape(g, split, 6), wide, 6), xs, 4);
    } else { /* the transposed convolution with a kernel of ones, per plane */
        int64_t planes[4] = {xs[0] * xs[1], 1, gs[2], gs[3]}, plane_x[4] = {xs[0] * xs[1], 1, xs[2], xs[3]};
        int64_t kernel[4] = {1, 1, win.k[0], win.k[1]};
        lt_tensor *ones = lt_ones(kernel, 4, lt_tensor_dtype(G), lt_tensor_device(G));
        lt_tensor *r = conv_input_grad(lt_reshape(g, planes, 4), ones, plane_x, &win, 1);
        gin[0] = lt_reshape(r, xs, 4);
    }
    return lt_grad_done(c, gin);
}

void lt_grad_register_nn(void)
{
    lt_grad_set(LT_OP_MATMUL, matmul_grad);
    lt_grad_set(LT_OP_CONV2D, conv2d_grad);
    lt_grad_set(LT_OP_CONV2D_INPUT_GRAD, conv2d_input_grad_grad);
    lt_grad_set(LT_OP_MAX_POOL2D, max_pool2d_grad);
    lt_grad_set(LT_OP_AVG_POOL2D, avg_pool2d_grad);
}
