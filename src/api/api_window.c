/*
 * api_window.c - sliding-window ops over [N, C, H, W] images, built on one
 * gather: unfold (im2col) and fold (col2im), pooling with ceil_mode and
 * dilation (lt_max_pool2d_ext, lt_avg_pool2d_ext) and the 1-D poolings.
 *
 * The image is padded (zeros, or -inf for max pooling; beyond the padding
 * when ceil_mode lets the last window hang over), its planes flattened, and
 * an index vector computed on the host from the sizes alone lists, window
 * tap by window tap, the flat position each output reads. index_select
 * then gives every window at once, [N, C, kH*kW, Ho, Wo]: unfold is that
 * tensor reshaped, fold is its adjoint (index_add of the columns into a
 * zero image, then the padding cropped), max pooling a max over the taps
 * (its indices mapped back to the unpadded plane through a second host
 * table), average pooling a sum over the taps divided by torch's divisor
 * per window. So every op here is traced and lowered on the lazy device
 * and differentiable through index_select / index_add.
 *
 * The CNN fast paths stay as they are: pooling without dilation, whose
 * ceil_mode adds no window, runs lt_max_pool2d / lt_avg_pool2d (the 1-D
 * poolings too, on unit-height images).
 */
#include "api/api.h"
#include "api/compose.h"

#include <math.h>
#include <stdlib.h>

/* A 2-D sliding window over planes of in[0] x in[1]. */
typedef struct window2d {
    const char *name;
    int nsp;                  /* spatial dims of the op: 1 (only dim 1 used) or 2 */
    int64_t k[2], s[2], p[2], d[2];
    int64_t in[2], out[2];
    int64_t after[2];         /* padding after the plane: p, or more for ceil_mode */
} window2d;

static int64_t padded_size(const window2d *w, int i) { return w->p[i] + w->in[i] + w->after[i]; }

/* ---- arguments ------------------------------------------------------------------ */

/* Copies a pair (or the fallback when v is NULL). The 1-D ops pass pairs
 * whose first value is the trivial one of the unit height. */
static void set_pair(int64_t *dst, const int64_t *v, int64_t fallback)
{
    dst[0] = v ? v[0] : fallback;
    dst[1] = v ? v[1] : fallback;
}

static lt_status check_values(const window2d *w, const char *what, const int64_t *v, int64_t min)
{
    for (int i = 2 - w->nsp; i < 2; i++)
        if (v[i] < min)
            return lt_error(LT_ERR_ARGUMENT, "%s: %s is %lld, expected >= %lld", w->name, what, (long long)v[i],
                            (long long)min);
    return LT_OK;
}

static lt_status check_window_values(const window2d *w)
{
    lt_status st;
    if ((st = check_values(w, "kernel size", w->k, 1)) != LT_OK || (st = check_values(w, "stride", w->s, 1)) != LT_OK ||
        (st = check_values(w, "padding", w->p, 0)) != LT_OK || (st = check_values(w, "dilation", w->d, 1)) != LT_OK)
        return st;
    return LT_OK;
}

/* x: a floating tensor of nsp + 1 or nsp + 2 dims whose channel and
 * spatial sizes (`last` dims) are not 0. */
static lt_status check_image(const window2d *w, lt_tensor *x, int dims, const char *layout)
{
    char sx[160];
    if (lt_check_tensor(w->name, x, 0) != LT_OK)
        return lt_last_status();
    bool ok = x->ndim == dims || x->ndim == dims - 1;
    for (int i = x->ndim - (dims - 1); ok && i < x->ndim; i++)
        ok = x->shape[i] > 0;
    if (!ok)
        return lt_error(LT_ERR_SHAPE, "%s: input has shape %s, expected %s or without its batch dim, with "
                        "non-zero sizes after the batch", w->name, lt_shape_str(x->shape, x->ndim, sx, sizeof sx),
                        layout);
    if (!lt_dtype_is_floating(x->dtype))
        return lt_error(LT_ERR_DTYPE, "%s: input dtype %s, expected a floating dtype", w->name,
                        lt_dtype_name(x->dtype));
    return LT_OK;
}

/* Output sizes with torch's rule: floor, or ceil where the last window
 * still starts inside the input or its left padding; then the padding
 * after the plane that the last window needs. */
static lt_status window_out(window2d *w, bool ceil_mode)
{
    for (int i = 0; i < 2; i++) {
        int64_t span = w->d[i] * (w->k[i] - 1) + 1, room = w->in[i] + 2 * w->p[i] - span;
        if (room < 0)
            return lt_error(LT_ERR_SHAPE, "%s: input size %lld with padding %lld is smaller than the window "
                            "(kernel %lld, dilation %lld): empty output", w->name, (long long)w->in[i],
                            (long long)w->p[i], (long long)w->k[i], (long long)w->d[i]);
        w->out[i] = (room + (ceil_mode ? w->s[i] - 1 : 0)) / w->s[i] + 1;
        if (ceil_mode && (w->out[i] - 1) * w->s[i] >= w->in[i] + w->p[i])
            w->out[i]--;
        int64_t need = (w->out[i] - 1) * w->s[i] + span - w->in[i] - w->p[i];
        w->after[i] = need > w->p[i] ? need : w->p[i];
    }
    return LT_OK;
}

/* ---- the gather ------------------------------------------------------------------- */

/* i64 [kH*kW * Ho*Wo]: for tap (ki, kj) and output (oh, ow), the flat
 * position in the padded plane that the window reads. */
static lt_tensor *window_index(const window2d *w, lt_device dev)
{
    int64_t taps = w->k[0] * w->k[1], plane = w->out[0] * w->out[1], wp = padded_size(w, 1);
    int64_t *idx = malloc(sizeof(int64_t) * (size_t)(taps * plane));
    if (!idx) {
        lt_error(LT_ERR_MEMORY, "%s: out of memory for the window index", w->name);
        return NULL;
    }
    int64_t *at = idx;
    for (int64_t ki = 0; ki < w->k[0]; ki++)
        for (int64_t kj = 0; kj < w->k[1]; kj++)
            for (int64_t oh = 0; oh < w->out[0]; oh++)
                for (int64_t ow = 0; ow < w->out[1]; ow++)
                    *at++ = (oh * w->s[0] + ki * w->d[0]) * wp + ow * w->s[1] + kj * w->d[1];
    int64_t n = taps * plane;
    lt_tensor *r = lt_from_data(idx, &n, 1, LT_I64, dev);
    free(idx);
    return r;
}

/* x [N, C, H, W] padded with value: p before, w->after after each dim. */
static lt_tensor *pad_plane(lt_tensor *x, const window2d *w, double value)
{
    if (w->p[0] == 0 && w->p[1] == 0 && w->after[0] == 0 && w->after[1] == 0)
        return x;
    int64_t pad[4] = {w->p[1], w->after[1], w->p[0], w->after[0]};
    return lt_pad(x, pad, 4, LT_PAD_CONSTANT, value);
}

/* Every window of the padded xp [N, C, Hp, Wp]: [N, C, kH*kW, Ho, Wo]. */
static lt_tensor *gather_windows(lt_tensor *xp, const window2d *w)
{
    int64_t n = xp->shape[0], c = xp->shape[1];
    int64_t flat[3] = {n, c, xp->shape[2] * xp->shape[3]};
    lt_tensor *cols = lt_index_select(lt_reshape(xp, flat, 3), 2, window_index(w, xp->device));
    int64_t dims[5] = {n, c, w->k[0] * w->k[1], w->out[0], w->out[1]};
    return lt_reshape(cols, dims, 5);
}

/* ---- unfold, fold ------------------------------------------------------------------ */

static lt_status window_from_args(window2d *w, const int64_t *kernel, const int64_t *dilation,
                                  const int64_t *padding, const int64_t *stride)
{
    if (!kernel)
        return lt_error(LT_ERR_NULL, "%s: kernel size is NULL, expected 2 values", w->name);
    set_pair(w->k, kernel, 0);
    set_pair(w->d, dilation, 1);
    set_pair(w->p, padding, 0);
    set_pair(w->s, stride, 1);
    return check_window_values(w);
}

lt_tensor *lt_unfold(lt_tensor *x, const int64_t *kernel, const int64_t *dilation, const int64_t *padding,
                     const int64_t *stride)
{
    window2d w = {.name = "unfold", .nsp = 2};
    if (check_image(&w, x, 4, "[N, C, H, W]") != LT_OK ||
        window_from_args(&w, kernel, dilation, padding, stride) != LT_OK)
        return NULL;
    w.in[0] = x->shape[x->ndim - 2], w.in[1] = x->shape[x->ndim - 1];
    if (window_out(&w, false) != LT_OK)
        return NULL;
    lt_scope_begin();
    bool batched = x->ndim == 4;
    lt_tensor *x4 = batched ? x : lt_unsqueeze(x, 0);
    int64_t dims[3] = {x4->shape[0], x4->shape[1] * w.k[0] * w.k[1], w.out[0] * w.out[1]};
    lt_tensor *y = lt_reshape(gather_windows(pad_plane(x4, &w, 0.0), &w), dims, 3);
    return lt_scope_return(batched ? y : lt_squeeze(y, 0));
}

/* fold's input [N, C*kH*kW, L] against the window: L blocks expected. */
static lt_status check_columns(const window2d *w, lt_tensor *x)
{
    int64_t taps = w->k[0] * w->k[1], rows = x->shape[x->ndim - 2], blocks = x->shape[x->ndim - 1];
    if (rows % taps == 0 && blocks == w->out[0] * w->out[1])
        return LT_OK;
    char sx[160];
    return lt_error(LT_ERR_SHAPE, "fold: input %s, expected [N, C * %lld, %lld] (kernel %lld x %lld sliding "
                    "over an output of %lld x %lld gives %lld x %lld blocks)",
                    lt_shape_str(x->shape, x->ndim, sx, sizeof sx), (long long)taps,
                    (long long)(w->out[0] * w->out[1]), (long long)w->k[0], (long long)w->k[1], (long long)w->in[0],
                    (long long)w->in[1], (long long)w->out[0], (long long)w->out[1]);
}

lt_tensor *lt_fold(lt_tensor *x, const int64_t *output_size, const int64_t *kernel, const int64_t *dilation,
                   const int64_t *padding, const int64_t *stride)
{
    window2d w = {.name = "fold", .nsp = 2};
    if (check_image(&w, x, 3, "[N, C * kH * kW, L]") != LT_OK ||
        window_from_args(&w, kernel, dilation, padding, stride) != LT_OK)
        return NULL;
    if (!output_size || output_size[0] < 1 || output_size[1] < 1) {
        lt_error(output_size ? LT_ERR_ARGUMENT : LT_ERR_NULL, "fold: output size %s, expected 2 values >= 1",
                 output_size ? "has a value below 1" : "is NULL");
        return NULL;
    }
    w.in[0] = output_size[0], w.in[1] = output_size[1];
    if (window_out(&w, false) != LT_OK || check_columns(&w, x) != LT_OK)
        return NULL;
    lt_scope_begin();
    bool batched = x->ndim == 3;
    lt_tensor *x3 = batched ? x : lt_unsqueeze(x, 0);
    int64_t n = x3->shape[0], c = x3->shape[1] / (w.k[0] * w.k[1]);
    int64_t hp = padded_size(&w, 0), wp = padded_size(&w, 1);
    int64_t flat[3] = {n, c, hp * wp}, cols[3] = {n, c, x3->shape[1] / c * x3->shape[2]};
    lt_tensor *zeros = lt_zeros(flat, 3, x->dtype, x->device);
    lt_tensor *img = lt_index_add(zeros, 2, window_index(&w, x->device), lt_reshape(x3, cols, 3), 1.0);
    int64_t dims[4] = {n, c, hp, wp}, crop[4] = {-w.p[1], -w.after[1], -w.p[0], -w.after[0]};
    lt_tensor *y = lt_reshape(img, dims, 4);
    if (w.p[0] || w.p[1])
        y = lt_pad(y, crop, 4, LT_PAD_CONSTANT, 0.0);
    return lt_scope_return(batched ? y : lt_squeeze(y, 0));
}

/* ---- pooling ----------------------------------------------------------------------- */

/* Validates a pooling call on x and fills w (sizes from x's last dims). */
static lt_status pool_window(window2d *w, lt_tensor *x, const int64_t *kernel, const int64_t *stride,
                             const int64_t *padding, const int64_t *dilation, bool ceil_mode)
{
    const char *layout = w->nsp == 1 ? "[N, C, L]" : "[N, C, H, W]";
    if (check_image(w, x, w->nsp + 2, layout) != LT_OK)
        return lt_last_status();
    if (!kernel)
        return lt_error(LT_ERR_NULL, "%s: kernel size is NULL", w->name);
    set_pair(w->k, kernel, 0);
    set_pair(w->s, stride ? stride : kernel, 0);
    set_pair(w->p, padding, 0);
    set_pair(w->d, dilation, 1);
    if (check_window_values(w) != LT_OK)
        return lt_last_status();
    for (int i = 0; i < 2; i++)
        if (w->p[i] > w->k[i] / 2)
            return lt_error(LT_ERR_ARGUMENT, "%s: padding %lld is more than half of the kernel size %lld", w->name,
                            (long long)w->p[i], (long long)w->k[i]);
    w->in[0] = w->nsp == 1 ? 1 : x->shape[x->ndim - 2];
    w->in[1] = x->shape[x->ndim - 1];
    return window_out(w, ceil_mode);
}

/* True when the window is the one of the fast kernels: no dilation and no
 * window added by ceil_mode. */
static bool plain_window(const window2d *w)
{
    window2d floor_w = *w;
    return w->d[0] == 1 && w->d[1] == 1 && window_out(&floor_w, false) == LT_OK && floor_w.out[0] == w->out[0] &&
           floor_w.out[1] == w->out[1];
}

/* i64 [kH*kW, Ho, Wo]: the flat position h * W + w in the unpadded plane
 * of each window tap; a tap on the padding maps to the window's first
 * position inside the plane, the index torch reports for a window of -inf. */
static lt_tensor *argmax_table(const window2d *w, lt_device dev)
{
    int64_t n = w->k[0] * w->k[1] * w->out[0] * w->out[1];
    int64_t *tab = malloc(sizeof(int64_t) * (size_t)n), *at = tab;
    if (!tab) {
        lt_error(LT_ERR_MEMORY, "%s: out of memory for the index table", w->name);
        return NULL;
    }
    for (int64_t ki = 0; ki < w->k[0]; ki++)
        for (int64_t kj = 0; kj < w->k[1]; kj++)
            for (int64_t oh = 0; oh < w->out[0]; oh++)
                for (int64_t ow = 0; ow < w->out[1]; ow++) {
                    int64_t h0 = oh * w->s[0] - w->p[0], w0 = ow * w->s[1] - w->p[1];
                    int64_t ih = h0 + ki * w->d[0], iw = w0 + kj * w->d[1];
                    if (ih < 0 || ih >= w->in[0] || iw < 0 || iw >= w->in[1]) {
                        while (h0 < 0)
                            h0 += w->d[0];
                        while (w0 < 0)
                            w0 += w->d[1];
                        ih = h0, iw = w0;
                    }
                    *at++ = ih * w->in[1] + iw;
                }
    int64_t dims[3] = {w->k[0] * w->k[1], w->out[0], w->out[1]};
    lt_tensor *r = lt_from_data(tab, dims, 3, LT_I64, dev);
    free(tab);
    return r;
}

/* Max pooling of x4 [N, C, H, W] over the windows of w; *indices (when
 * given) receives the flat positions of the maxima. */
static lt_tensor *max_pool_windows(lt_tensor *x4, const window2d *w, lt_tensor **indices)
{
    lt_tensor *taps = NULL;
    lt_tensor *y = lt_max_dim(gather_windows(pad_plane(x4, w, -INFINITY), w), 2, false, indices ? &taps : NULL);
    if (indices && y) {
        int64_t dims[5] = {x4->shape[0], x4->shape[1], w->k[0] * w->k[1], w->out[0], w->out[1]};
        lt_tensor *table = lt_expand(lt_unsqueeze(lt_unsqueeze(argmax_table(w, x4->device), 0), 0), dims, 5);
        *indices = lt_squeeze(lt_gather(table, 2, lt_unsqueeze(taps, 2)), 2);
    }
    return y;
}

/* [Ho, Wo] of x's dtype: torch's divisor of each average-pooling window. */
static lt_tensor *avg_divisors(const window2d *w, bool count_include_pad, int64_t divisor_override, lt_tensor *x)
{
    int64_t n = w->out[0] * w->out[1];
    double *div = malloc(sizeof(double) * (size_t)n), *at = div;
    if (!div) {
        lt_error(LT_ERR_MEMORY, "%s: out of memory for the divisors", w->name);
        return NULL;
    }
    for (int64_t oh = 0; oh < w->out[0]; oh++)
        for (int64_t ow = 0; ow < w->out[1]; ow++) {
            int64_t lo[2] = {oh * w->s[0] - w->p[0], ow * w->s[1] - w->p[1]}, hi[2], pool = 1, inside = 1;
            for (int i = 0; i < 2; i++) {
                hi[i] = lo[i] + w->k[i] < w->in[i] + w->p[i] ? lo[i] + w->k[i] : w->in[i] + w->p[i];
                pool *= hi[i] - lo[i];
                inside *= (hi[i] < w->in[i] ? hi[i] : w->in[i]) - (lo[i] > 0 ? lo[i] : 0);
            }
            *at++ = (double)(divisor_override ? divisor_override : count_include_pad ? pool : inside);
        }
    int64_t dims[2] = {w->out[0], w->out[1]};
    lt_tensor *r = lt_to_dtype(lt_from_data(div, dims, 2, LT_F64, x->device), x->dtype);
    free(div);
    return r;
}

static lt_tensor *avg_pool_windows(lt_tensor *x4, const window2d *w, bool count_include_pad, int64_t divisor_override)
{
    int taps = 2;
    lt_tensor *sums = lt_sum(gather_windows(pad_plane(x4, w, 0.0), w), &taps, 1, false);
    return lt_div(sums, avg_divisors(w, count_include_pad, divisor_override, x4));
}

/* Runs a 2-D pooling of x (batched or not) through the window path. */
static lt_tensor *pool_general(lt_tensor *x, const window2d *w, bool is_max, bool count_include_pad,
                               int64_t divisor_override, lt_tensor **indices)
{
    lt_scope_begin();
    bool batched = x->ndim == 4;
    lt_tensor *x4 = batched ? x : lt_unsqueeze(x, 0);
    lt_tensor *y = is_max ? max_pool_windows(x4, w, indices) : avg_pool_windows(x4, w, count_include_pad, divisor_override);
    if (!batched && y) {
        y = lt_squeeze(y, 0);
        if (indices && *indices)
            *indices = lt_squeeze(*indices, 0);
    }
    return lt_scope_return2(y, indices);
}

lt_tensor *lt_max_pool2d_ext(lt_tensor *x, const int64_t *kernel, const int64_t *stride, const int64_t *padding,
                             const int64_t *dilation, bool ceil_mode, lt_tensor **indices)
{
    if (indices)
        *indices = NULL;
    window2d w = {.name = "max_pool2d", .nsp = 2};
    if (pool_window(&w, x, kernel, stride, padding, dilation, ceil_mode) != LT_OK)
        return NULL;
    if (plain_window(&w))
        return lt_max_pool2d(x, kernel, stride, padding, indices);
    return pool_general(x, &w, true, false, 0, indices);
}

/* x is a valid i64 tensor: torch averages those, truncating the mean
 * toward zero; here through f64 (exact while sums stay below 2^53). */
static bool is_i64(lt_tensor *x) { return x && lt_check_tensor("avg_pool", x, 0) == LT_OK && x->dtype == LT_I64; }

lt_tensor *lt_avg_pool2d_ext(lt_tensor *x, const int64_t *kernel, const int64_t *stride, const int64_t *padding,
                             bool ceil_mode, bool count_include_pad, int64_t divisor_override)
{
    if (is_i64(x)) {
        lt_scope_begin();
        lt_tensor *r = lt_avg_pool2d_ext(lt_to_dtype(x, LT_F64), kernel, stride, padding, ceil_mode,
                                         count_include_pad, divisor_override);
        return lt_scope_return(r ? lt_to_dtype(r, LT_I64) : NULL);
    }
    window2d w = {.name = "avg_pool2d", .nsp = 2};
    if (pool_window(&w, x, kernel, stride, padding, NULL, ceil_mode) != LT_OK)
        return NULL;
    if (divisor_override < 0) {
        lt_error(LT_ERR_ARGUMENT, "avg_pool2d: divisor_override is %lld, expected 0 (none) or more",
                 (long long)divisor_override);
        return NULL;
    }
    if (plain_window(&w) && divisor_override == 0)
        return lt_avg_pool2d(x, kernel, stride, padding, count_include_pad);
    return pool_general(x, &w, false, count_include_pad, divisor_override, NULL);
}

/* ---- 1-D pooling: 2-D pooling of unit-height images ---------------------------------- */

/* x [N, C, L] or [C, L] as [N, C, 1, L] or [C, 1, L]. */
static lt_tensor *lift_1d(lt_tensor *x) { return lt_unsqueeze(x, -2); }

lt_tensor *lt_max_pool1d(lt_tensor *x, int64_t kernel, int64_t stride, int64_t padding, int64_t dilation,
                         bool ceil_mode, lt_tensor **indices)
{
    if (indices)
        *indices = NULL;
    window2d w = {.name = "max_pool1d", .nsp = 1};
    int64_t k2[2] = {1, kernel}, s2[2] = {1, stride ? stride : kernel}, p2[2] = {0, padding}, d2[2] = {1, dilation};
    if (pool_window(&w, x, k2, s2, p2, d2, ceil_mode) != LT_OK)
        return NULL;
    lt_scope_begin();
    lt_tensor *y = plain_window(&w) ? lt_max_pool2d(lift_1d(x), w.k, w.s, w.p, indices)
                                    : pool_general(lift_1d(x), &w, true, false, 0, indices);
    lt_tensor *r = lt_squeeze(y, -2);
    if (indices && *indices)
        *indices = lt_squeeze(*indices, -2);
    return lt_scope_return2(r, indices);
}

lt_tensor *lt_avg_pool1d(lt_tensor *x, int64_t kernel, int64_t stride, int64_t padding, bool ceil_mode,
                         bool count_include_pad)
{
    if (is_i64(x)) {
        lt_scope_begin();
        lt_tensor *r = lt_avg_pool1d(lt_to_dtype(x, LT_F64), kernel, stride, padding, ceil_mode, count_include_pad);
        return lt_scope_return(r ? lt_to_dtype(r, LT_I64) : NULL);
    }
    window2d w = {.name = "avg_pool1d", .nsp = 1};
    int64_t k2[2] = {1, kernel}, s2[2] = {1, stride ? stride : kernel}, p2[2] = {0, padding}, d2[2] = {1, 1};
    if (pool_window(&w, x, k2, s2, p2, d2, ceil_mode) != LT_OK)
        return NULL;
    lt_scope_begin();
    lt_tensor *y = plain_window(&w) ? lt_avg_pool2d(lift_1d(x), w.k, w.s, w.p, count_include_pad)
                                    : pool_general(lift_1d(x), &w, false, count_include_pad, 0, NULL);
    return lt_scope_return(lt_squeeze(y, -2));
}
