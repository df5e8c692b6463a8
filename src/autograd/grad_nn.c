/*
 * grad_nn.c - gradient formulas of matmul, conv2d, max_pool2d and
 * avg_pool2d.
 *
 * matmul: g @ b^T and a^T @ g, with 1-D operands lifted to matrices and
 * back; the engine sums broadcast batch dims away.
 *
 * conv2d: the input gradient is a transposed convolution, computed as a
 * conv2d of g with the kernel flipped and its in/out channels swapped: for
 * stride 1 (padding <= dilation * (k - 1)) that is one conv2d with padding
 * dilation * (k - 1) - padding; otherwise g is first spread on a zero grid
 * (stride - 1 zeros between its elements, two slice_scatters) and the
 * result is cropped. The weight gradient is the correlation of x with g:
 * without groups one matrix product of g with the matrix of x's windows
 * (built from strided slices of x); with groups, a conv2d whose batch is
 * x's channels, whose channels are x's batch and whose kernel is g (stride
 * and dilation trade places), the groups folded into those channel swaps.
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

/* t reversed along dim (index_select with a descending arange). */
static lt_tensor *flip(lt_tensor *t, int dim)
{
    int64_t n = lt_tensor_size(t, dim);
    return lt_index_select(t, dim, lt_arange((double)(n - 1), -1.0, -1.0, LT_I64, lt_tensor_device(t)));
}

/* The kernel of the transposed convolution: w [O, C/groups, kH, kW] with
 * in/out channels swapped per group -> [C, O/groups, kH, kW], flipped. */
static lt_tensor *transposed_kernel(lt_tensor *w, int64_t groups)
{
    const int64_t *ws = lt_tensor_shape(w);
    lt_tensor *t;
    if (groups == 1) {
        t = lt_transpose(w, 0, 1);
    } else {
        int64_t split[5] = {groups, ws[0] / groups, ws[1], ws[2], ws[3]};
        int64_t merged[4] = {groups * ws[1], ws[0] / groups, ws[2], ws[3]};
        t = lt_reshape(lt_transpose(lt_reshape(w, split, 5), 1, 2), merged, 4);
    }
    return flip(flip(t, 2), 3);
}

/* t placed on zeros: along dims[k], t's element e lands at first[k] +
 * e * step[k] of a dim of size size[k] (two slice_scatters). */
static lt_tensor *place(lt_tensor *t, const int *dims, const int64_t *first, const int64_t *step,
                        const int64_t *size)
{
    lt_tensor *cur = t;
    for (int k = 0; k < 2 && cur; k++) {
        int64_t shape[LT_MAX_DIMS];
        int nd = lt_tensor_ndim(cur);
        for (int d = 0; d < nd; d++)
            shape[d] = lt_tensor_size(cur, d);
        int64_t count = shape[dims[k]];
        shape[dims[k]] = size[k];
        lt_attrs a = lt_attrs_init();
        a.i[0] = dims[k];
        a.i[1] = first[k];
        a.i[2] = count > 0 ? first[k] + (count - 1) * step[k] + 1 : first[k];
        a.i[3] = step[k];
        a.ni = 4;
        lt_tensor *in[2] = {lt_zeros(shape, nd, lt_tensor_dtype(cur), lt_tensor_device(cur)), cur};
        cur = lt_call(LT_OP_SLICE_SCATTER, in, 2, &a, NULL);
    }
    return cur;
}

/*
 * Gradient of conv2d's input x (shape xs) from g, for weight w: the
 * transposed convolution. Position h of the padded input receives
 * sum_{oh, i : oh*s + i*d == h} g[oh] w[i], which is a stride-1 conv of g
 * (placed every s elements, after d*(k-1) zeros) with the flipped kernel.
 */
static lt_tensor *conv_input_grad(lt_tensor *g, lt_tensor *w, const int64_t *xs, const window *win,
                                  int64_t groups)
{
    lt_tensor *wt = transposed_kernel(w, groups);
    int64_t margin[2], pad[2];
    bool direct = true;
    for (int k = 0; k < 2; k++) {
        margin[k] = win->d[k] * (win->k[k] - 1);
        pad[k] = margin[k] - win->p[k];
        direct = direct && win->s[k] == 1 && pad[k] >= 0;
    }
    if (direct)
        return lt_conv2d(g, wt, NULL, NULL, pad, win->d, groups);
    static const int spatial[2] = {2, 3};
    int64_t size[2] = {xs[2] + 2 * win->p[0] + margin[0], xs[3] + 2 * win->p[1] + margin[1]};
    lt_tensor *full = lt_conv2d(place(g, spatial, margin, win->s, size), wt, NULL, NULL, NULL, win->d, groups);
    return lt_narrow(lt_narrow(full, 2, win->p[0], xs[2]), 3, win->p[1], xs[3]);
}

/* Bounds of the patch-matrix path of the weight gradient: kernel
 * positions, and elements of the patch matrix (beyond them the conv2d
 * path, which needs no extra memory, is used). */
#define MAX_PATCH_POSITIONS 64
#define MAX_PATCH_ELEMENTS ((int64_t)1 << 25)

static bool patches_fit(lt_tensor *x, lt_tensor *g, const int64_t *ws)
{
    const int64_t *xs = lt_tensor_shape(x), *gs = lt_tensor_shape(g);
    int64_t positions = ws[2] * ws[3];
    return positions <= MAX_PATCH_POSITIONS &&
           gs[0] * gs[2] * gs[3] <= MAX_PATCH_ELEMENTS / positions / (xs[1] > 0 ? xs[1] : 1);
}

/*
 * Weight gradient of an ungrouped conv2d as one matrix product:
 * grad[o, (i, j, c)] = g [O, N*Ho*Wo] @ patches [N*Ho*Wo, kH*kW*C], where
 * the patches are the strided windows of x (channels last, zero-padded)
 * for each kernel position (i, j).
 */
static lt_tensor *conv_weight_grad_patches(lt_tensor *x, lt_tensor *g, const int64_t *ws, const window *win)
{
    const int64_t *xs = lt_tensor_shape(x), *gs = lt_tensor_shape(g);
    int64_t positions = ws[2] * ws[3], rows = gs[0] * gs[2] * gs[3];
    static const int to_nhwc[4] = {0, 2, 3, 1}, spatial[2] = {1, 2};
    static const int64_t unit[2] = {1, 1};
    lt_tensor *xp = lt_permute(x, to_nhwc, 4);
    if (win->p[0] > 0 || win->p[1] > 0) {
        int64_t size[2] = {xs[2] + 2 * win->p[0], xs[3] + 2 * win->p[1]};
        xp = place(xp, spatial, win->p, unit, size);
    }
    lt_tensor *patches[MAX_PATCH_POSITIONS];
    for (int64_t i = 0; i < ws[2]; i++) {
        for (int64_t j = 0; j < ws[3]; j++) {
            int64_t r0 = i * win->d[0], c0 = j * win->d[1];
            lt_tensor *t = lt_slice(xp, 1, r0, r0 + (gs[2] - 1) * win->s[0] + 1, win->s[0]);
            t = lt_slice(t, 2, c0, c0 + (gs[3] - 1) * win->s[1] + 1, win->s[1]);
            patches[i * ws[3] + j] = lt_unsqueeze(t, 3); /* [N, Ho, Wo, 1, C] */
        }
    }
    int64_t cols_shape[2] = {rows, positions * xs[1]}, g_shape[2] = {ws[0], rows};
    int64_t r_shape[4] = {ws[0], ws[2], ws[3], xs[1]};
    static const int og_first[4] = {1, 0, 2, 3}, to_oihw[4] = {0, 3, 1, 2};
    lt_tensor *cols = lt_reshape(lt_cat(patches, (int)positions, 3), cols_shape, 2);
    lt_tensor *gt = lt_reshape(lt_permute(g, og_first, 4), g_shape, 2);
    lt_tensor *r = lt_reshape(lt_matmul(gt, cols), r_shape, 4);
    return lt_contiguous(lt_permute(r, to_oihw, 4));
}

/*
 * Weight gradient of conv2d (shape ws) from x and g: grad[o, c, i, j] =
 * sum_{n, oh, ow} g[n, o, oh, ow] xpad[n, c, oh*s + i*d, ow*s + j*d]. Without
 * groups: conv_weight_grad_patches. Otherwise (or when that is too big) a
 * conv2d of x' [C/groups, groups*N, H, W] with the kernel g' [O, N, Ho, Wo]
 * (stride d, dilation s, same padding), cropped to the kernel size.
 */
static lt_tensor *conv_weight_grad(lt_tensor *x, lt_tensor *g, const int64_t *ws, const window *win,
                                   int64_t groups)
{
    if (groups == 1 && patches_fit(x, g, ws))
        return conv_weight_grad_patches(x, g, ws, win);
    const int64_t *xs = lt_tensor_shape(x);
    lt_tensor *xt;
    if (groups == 1) {
        xt = lt_transpose(x, 0, 1);
    } else {
        int64_t split[5] = {xs[0], groups, xs[1] / groups, xs[2], xs[3]};
        int64_t merged[4] = {xs[1] / groups, groups * xs[0], xs[2], xs[3]};
        int perm[5] = {2, 1, 0, 3, 4};
        xt = lt_reshape(lt_permute(lt_reshape(x, split, 5), perm, 5), merged, 4);
    }
    lt_tensor *r = lt_conv2d(xt, lt_transpose(g, 0, 1), NULL, win->d, win->p, win->s, groups);
    if (r && (lt_tensor_size(r, 2) != ws[2] || lt_tensor_size(r, 3) != ws[3]))
        r = lt_narrow(lt_narrow(r, 2, 0, ws[2]), 3, 0, ws[3]);
    return lt_transpose(r, 0, 1);
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
    lt_grad_set(LT_OP_MAX_POOL2D, max_pool2d_grad);
    lt_grad_set(LT_OP_AVG_POOL2D, avg_pool2d_grad);
}
