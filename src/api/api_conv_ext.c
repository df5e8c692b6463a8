/*
 * api_conv_ext.c - the convolutions beyond conv2d: conv1d, conv3d,
 * conv_transpose1d and conv_transpose2d, and pixel_shuffle /
 * pixel_unshuffle. All are compositions of conv2d's ops and views:
 *
 *   conv1d            conv2d of a unit-height image.
 *   conv3d            one conv2d: the kD depth taps are strided depth
 *                     slices stacked into the channels ([N*Do, C*kD, H, W]
 *                     against the weight reshaped to [O, C/groups*kD, kH,
 *                     kW]), so the taps of one group stay together.
 *   conv_transpose2d  conv2d's input gradient (the adjoint of conv2d), with
 *                     the weight [Cin, Cout/groups, kH, kW] in the place of
 *                     conv2d's [O, C/groups, kH, kW]. An output_padding
 *                     below the stride is an output size that conv2d maps
 *                     back to x's; a larger one (allowed when below the
 *                     dilation) runs unpadded and crops / extends after.
 *   conv_transpose1d  conv_transpose2d of a unit-height image.
 *
 * So the lazy device traces them as conv2d ops and views, and autograd
 * differentiates them through conv2d's formulas (the input-gradient op has
 * its own gradient, grad_nn.c). Each function first checks its arguments
 * against torch's rules, so that errors name the op that was called.
 */
#include "api/api.h"
#include "api/compose.h"

static const char *shape_of(const lt_tensor *t, char *buf, size_t cap)
{
    return lt_shape_str(t->shape, t->ndim, buf, cap);
}

/* One convolution call: its name, spatial dims and attributes. */
typedef struct conv_spec {
    const char *name;
    int nsp; /* spatial dims: 1, 2 or 3 */
    bool transposed;
    int64_t stride[3], padding[3], dilation[3], output_padding[3], groups;
    int64_t out[3]; /* output spatial sizes, set by check_conv */
} conv_spec;

/* Copies n values of an optional array into out (NULL: fallback). */
static void read_sizes(int64_t *out, const int64_t *v, int n, int64_t fallback)
{
    for (int i = 0; i < n; i++)
        out[i] = v ? v[i] : fallback;
}

static lt_status check_attr(const conv_spec *c, const char *what, const int64_t *v, int64_t min)
{
    for (int i = 0; i < c->nsp; i++)
        if (v[i] < min)
            return lt_error(LT_ERR_ARGUMENT, "%s: %s[%d] is %lld, expected >= %lld", c->name, what, i,
                            (long long)v[i], (long long)min);
    return LT_OK;
}

static lt_status check_attrs(const conv_spec *c)
{
    if (c->groups < 1)
        return lt_error(LT_ERR_ARGUMENT, "%s: groups is %lld, expected >= 1", c->name, (long long)c->groups);
    lt_status st;
    if ((st = check_attr(c, "stride", c->stride, 1)) != LT_OK ||
        (st = check_attr(c, "padding", c->padding, 0)) != LT_OK ||
        (st = check_attr(c, "dilation", c->dilation, 1)) != LT_OK ||
        (st = check_attr(c, "output_padding", c->output_padding, 0)) != LT_OK)
        return st;
    for (int i = 0; i < c->nsp; i++)
        if (c->output_padding[i] >= c->stride[i] && c->output_padding[i] >= c->dilation[i])
            return lt_error(LT_ERR_ARGUMENT, "%s: output_padding[%d] is %lld, expected it smaller than the "
                            "stride (%lld) or the dilation (%lld)", c->name, i, (long long)c->output_padding[i],
                            (long long)c->stride[i], (long long)c->dilation[i]);
    return LT_OK;
}

/* Input and weight ranks, floating dtypes and the channel rule. */
static lt_status check_operands(const conv_spec *c, const lt_tensor *x, const lt_tensor *w, const lt_tensor *bias)
{
    char sx[160], sw[160];
    int nd = c->nsp + 2;
    if (x->ndim != nd && x->ndim != nd - 1)
        return lt_error(LT_ERR_SHAPE, "%s: input has shape %s, expected %d dims [N, C, ...] or %d [C, ...]",
                        c->name, shape_of(x, sx, sizeof sx), nd, nd - 1);
    if (w->ndim != nd)
        return lt_error(LT_ERR_SHAPE, "%s: weight has shape %s, expected %d dims", c->name,
                        shape_of(w, sw, sizeof sw), nd);
    /* as torch: integer convolutions in i32, i64 and u8, transposed ones in i64 only */
    bool numeric = lt_dtype_is_floating(x->dtype) || x->dtype == LT_I64 ||
                   (!c->transposed && (x->dtype == LT_I32 || x->dtype == LT_U8));
    if (!numeric || x->dtype != w->dtype || (bias && bias->dtype != x->dtype))
        return lt_error(LT_ERR_DTYPE, "%s: input %s, weight %s%s%s: expected one floating or integer dtype "
                        "(i32, i64, u8; transposed: i64)", c->name,
                        lt_dtype_name(x->dtype), lt_dtype_name(w->dtype), bias ? ", bias " : "",
                        bias ? lt_dtype_name(bias->dtype) : "");
    int64_t cin = x->shape[x->ndim - c->nsp - 1];
    int64_t expect = c->transposed ? w->shape[0] : w->shape[1] * c->groups;
    if (cin != expect || w->shape[0] % c->groups != 0)
        return lt_error(LT_ERR_SHAPE, "%s: input %s and weight %s with groups %lld: expected %s, and the "
                        "weight's first dim divisible by groups", c->name, shape_of(x, sx, sizeof sx),
                        shape_of(w, sw, sizeof sw), (long long)c->groups,
                        c->transposed ? "weight [C, C_out/groups, k...] for input channels C"
                                      : "weight [O, C/groups, k...] for input channels C");
    for (int i = 0; i < c->nsp; i++)
        if (w->shape[2 + i] < 1)
            return lt_error(LT_ERR_SHAPE, "%s: weight %s has an empty kernel", c->name, shape_of(w, sw, sizeof sw));
    int64_t cout = c->transposed ? w->shape[1] * c->groups : w->shape[0];
    if (bias && (bias->ndim != 1 || bias->shape[0] != cout))
        return lt_error(LT_ERR_SHAPE, "%s: bias has shape %s, expected [%lld]", c->name,
                        shape_of(bias, sx, sizeof sx), (long long)cout);
    return LT_OK;
}

/* Validates a call and fills c->out; the error names the op. */
static lt_status check_conv(conv_spec *c, lt_tensor *x, lt_tensor *w, lt_tensor *bias)
{
    lt_status st;
    if ((st = lt_check_tensor(c->name, x, 0)) != LT_OK || (st = lt_check_tensor(c->name, w, 1)) != LT_OK ||
        (bias && (st = lt_check_tensor(c->name, bias, 2)) != LT_OK) || (st = check_attrs(c)) != LT_OK ||
        (st = check_operands(c, x, w, bias)) != LT_OK)
        return st;
    for (int i = 0; i < c->nsp; i++) {
        int64_t in = x->shape[x->ndim - c->nsp + i], span = c->dilation[i] * (w->shape[2 + i] - 1);
        c->out[i] = c->transposed ? (in - 1) * c->stride[i] - 2 * c->padding[i] + span + c->output_padding[i] + 1
                                  : (in + 2 * c->padding[i] - span - 1) / c->stride[i] + 1;
        if (c->out[i] < 1 || (!c->transposed && in + 2 * c->padding[i] - span - 1 < 0)) {
            char sx[160], sw[160];
            return lt_error(LT_ERR_SHAPE, "%s: input %s and weight %s (stride %lld, padding %lld, dilation %lld "
                            "in spatial dim %d) give an empty output", c->name, shape_of(x, sx, sizeof sx),
                            shape_of(w, sw, sizeof sw), (long long)c->stride[i], (long long)c->padding[i],
                            (long long)c->dilation[i], i);
        }
    }
    return LT_OK;
}

/* Integer operands, which torch accepts (sums wrap like the type), run in
 * f64 and convert back: torch's results while the sums stay below 2^53 in
 * magnitude. */
static bool integer_operands(const lt_tensor *x) { return !lt_dtype_is_floating(x->dtype); }
static lt_tensor *as_f64(lt_tensor *t) { return t ? lt_to_dtype(t, LT_F64) : NULL; }
static lt_tensor *integer_result(lt_tensor *r, lt_dtype dt) { return lt_scope_return(r ? lt_to_dtype(r, dt) : NULL); }

/* ---- conv1d, conv3d ---------------------------------------------------------- */

lt_tensor *lt_conv1d(lt_tensor *x, lt_tensor *w, lt_tensor *bias, int64_t stride, int64_t padding,
                     int64_t dilation, int64_t groups)
{
    conv_spec c = {.name = "conv1d", .nsp = 1, .stride = {stride}, .padding = {padding}, .dilation = {dilation},
                   .groups = groups};
    if (check_conv(&c, x, w, bias) != LT_OK)
        return NULL;
    if (integer_operands(x)) {
        lt_scope_begin();
        return integer_result(lt_conv1d(as_f64(x), as_f64(w), as_f64(bias), stride, padding, dilation, groups), x->dtype);
    }
    lt_scope_begin();
    bool batched = x->ndim == 3;
    lt_tensor *x4 = lt_unsqueeze(batched ? x : lt_unsqueeze(x, 0), 2);
    int64_t s[2] = {1, stride}, p[2] = {0, padding}, d[2] = {1, dilation};
    lt_tensor *y = lt_squeeze(lt_conv2d(x4, lt_unsqueeze(w, 2), bias, s, p, d, groups), 2);
    return lt_scope_return(batched ? y : lt_squeeze(y, 0));
}

/* x [N, C, D, H, W] with its depth taps stacked into the channels:
 * [N * Do, C * kD, H, W], channel c * kD + tap holding depth
 * od * stride + tap * dilation - padding of channel c. */
static lt_tensor *depth_taps(lt_tensor *x, int64_t kd, const conv_spec *c)
{
    int64_t pd = c->padding[0];
    if (pd > 0) {
        int64_t pad[6] = {0, 0, 0, 0, pd, pd};
        x = lt_pad(x, pad, 6, LT_PAD_CONSTANT, 0.0);
    }
    lt_tensor *taps[64] = {NULL}, *stacked;
    lt_tensor **all = kd <= 64 ? taps : lt_alloc(sizeof(lt_tensor *) * (size_t)kd, "conv3d");
    if (!all)
        return NULL;
    for (int64_t k = 0; k < kd; k++) {
        int64_t start = k * c->dilation[0];
        all[k] = lt_slice(x, 2, start, start + (c->out[0] - 1) * c->stride[0] + 1, c->stride[0]);
    }
    stacked = lt_stack(all, (int)kd, 3); /* [N, C, Do, kD, H, W] */
    if (all != taps)
        lt_free(all);
    int perm[6] = {0, 2, 1, 3, 4, 5};
    const int64_t *xs = x->shape;
    int64_t dims[4] = {xs[0] * c->out[0], xs[1] * kd, xs[3], xs[4]};
    return lt_reshape(lt_permute(stacked, perm, 6), dims, 4);
}

lt_tensor *lt_conv3d(lt_tensor *x, lt_tensor *w, lt_tensor *bias, const int64_t *stride, const int64_t *padding,
                     const int64_t *dilation, int64_t groups)
{
    conv_spec c = {.name = "conv3d", .nsp = 3, .groups = groups};
    read_sizes(c.stride, stride, 3, 1);
    read_sizes(c.padding, padding, 3, 0);
    read_sizes(c.dilation, dilation, 3, 1);
    if (check_conv(&c, x, w, bias) != LT_OK)
        return NULL;
    if (integer_operands(x)) {
        lt_scope_begin();
        return integer_result(lt_conv3d(as_f64(x), as_f64(w), as_f64(bias), stride, padding, dilation, groups), x->dtype);
    }
    lt_scope_begin();
    bool batched = x->ndim == 5;
    lt_tensor *x5 = batched ? x : lt_unsqueeze(x, 0);
    const int64_t *ws = w->shape;
    int64_t n = x5->shape[0], w4[4] = {ws[0], ws[1] * ws[2], ws[3], ws[4]};
    lt_tensor *y = lt_conv2d(depth_taps(x5, ws[2], &c), lt_reshape(w, w4, 4), bias, &c.stride[1], &c.padding[1],
                             &c.dilation[1], groups); /* [N * Do, O, Ho, Wo] */
    int64_t split[5] = {n, c.out[0], ws[0], c.out[1], c.out[2]};
    int perm[5] = {0, 2, 1, 3, 4};
    y = lt_contiguous(lt_permute(lt_reshape(y, split, 5), perm, 5));
    return lt_scope_return(batched ? y : lt_squeeze(y, 0));
}

/* ---- transposed convolutions --------------------------------------------------- */

/* conv_transpose2d of a batched x [N, Cin, H, W] (arguments checked). */
static lt_tensor *transpose2d(lt_tensor *x, lt_tensor *w, lt_tensor *bias, const conv_spec *c)
{
    bool direct = c->output_padding[0] < c->stride[0] && c->output_padding[1] < c->stride[1];
    lt_tensor *y;
    if (direct) {
        y = lt_conv2d_input_grad(x, w, c->out, c->stride, c->padding, c->dilation, c->groups);
    } else { /* the whole unpadded output, then cropped by the padding and extended by output_padding */
        int64_t full[2], zero[2] = {0, 0};
        for (int i = 0; i < 2; i++)
            full[i] = (x->shape[2 + i] - 1) * c->stride[i] + c->dilation[i] * (w->shape[2 + i] - 1) + 1;
        y = lt_conv2d_input_grad(x, w, full, c->stride, zero, c->dilation, c->groups);
        int64_t pad[4] = {-c->padding[1], c->output_padding[1] - c->padding[1], -c->padding[0],
                          c->output_padding[0] - c->padding[0]};
        y = lt_pad(y, pad, 4, LT_PAD_CONSTANT, 0.0);
    }
    if (bias) {
        int64_t b4[4] = {1, bias->shape[0], 1, 1};
        y = lt_add(y, lt_reshape(bias, b4, 4));
    }
    return y;
}

lt_tensor *lt_conv_transpose2d(lt_tensor *x, lt_tensor *w, lt_tensor *bias, const int64_t *stride,
                               const int64_t *padding, const int64_t *output_padding, int64_t groups,
                               const int64_t *dilation)
{
    conv_spec c = {.name = "conv_transpose2d", .nsp = 2, .transposed = true, .groups = groups};
    read_sizes(c.stride, stride, 2, 1);
    read_sizes(c.padding, padding, 2, 0);
    read_sizes(c.output_padding, output_padding, 2, 0);
    read_sizes(c.dilation, dilation, 2, 1);
    if (check_conv(&c, x, w, bias) != LT_OK)
        return NULL;
    if (integer_operands(x)) {
        lt_scope_begin();
        return integer_result(lt_conv_transpose2d(as_f64(x), as_f64(w), as_f64(bias), stride, padding, output_padding, groups, dilation), x->dtype);
    }
    lt_scope_begin();
    bool batched = x->ndim == 4;
    lt_tensor *y = transpose2d(batched ? x : lt_unsqueeze(x, 0), w, bias, &c);
    return lt_scope_return(batched ? y : lt_squeeze(y, 0));
}

lt_tensor *lt_conv_transpose1d(lt_tensor *x, lt_tensor *w, lt_tensor *bias, int64_t stride, int64_t padding,
                               int64_t output_padding, int64_t groups, int64_t dilation)
{
    conv_spec c = {.name = "conv_transpose1d", .nsp = 1, .transposed = true, .stride = {stride},
                   .padding = {padding}, .dilation = {dilation}, .output_padding = {output_padding},
                   .groups = groups};
    if (check_conv(&c, x, w, bias) != LT_OK)
        return NULL;
    if (integer_operands(x)) {
        lt_scope_begin();
        return integer_result(lt_conv_transpose1d(as_f64(x), as_f64(w), as_f64(bias), stride, padding, output_padding, groups, dilation), x->dtype);
    }
    lt_scope_begin();
    bool batched = x->ndim == 3;
    lt_tensor *x4 = lt_unsqueeze(batched ? x : lt_unsqueeze(x, 0), 2);
    conv_spec c2 = {.name = c.name, .nsp = 2, .transposed = true, .stride = {1, stride}, .padding = {0, padding},
                    .dilation = {1, dilation}, .output_padding = {0, output_padding}, .groups = groups,
                    .out = {1, c.out[0]}};
    lt_tensor *y = lt_squeeze(transpose2d(x4, lt_unsqueeze(w, 2), bias, &c2), 2);
    return lt_scope_return(batched ? y : lt_squeeze(y, 0));
}

/* ---- pixel_shuffle, pixel_unshuffle -------------------------------------------- */

/* Checks x [..., C, H, W] (3 dims at least) and the factor r. */
static lt_status check_shuffle(const char *name, lt_tensor *x, int64_t r)
{
    char sx[160];
    if (lt_check_tensor(name, x, 0) != LT_OK)
        return lt_last_status();
    if (r < 1)
        return lt_error(LT_ERR_ARGUMENT, "%s: factor %lld, expected >= 1", name, (long long)r);
    if (x->ndim < 3 || x->ndim > LT_MAX_DIMS - 2)
        return lt_error(LT_ERR_SHAPE, "%s: input has shape %s, expected [..., C, H, W] (3 to %d dims)", name,
                        shape_of(x, sx, sizeof sx), LT_MAX_DIMS - 2);
    return LT_OK;
}

/* x [lead..., C*r*r, H, W] -> [lead..., C, H*r, W*r]: out[c, h*r + i, w*r +
 * j] = x[c*r*r + i*r + j, h, w]. */
lt_tensor *lt_pixel_shuffle(lt_tensor *x, int64_t r)
{
    if (check_shuffle("pixel_shuffle", x, r) != LT_OK)
        return NULL;
    int nd = x->ndim, lead = nd - 3;
    int64_t c = x->shape[lead], h = x->shape[lead + 1], w = x->shape[lead + 2];
    if (c % (r * r) != 0) {
        char sx[160];
        lt_error(LT_ERR_SHAPE, "pixel_shuffle: input %s has %lld channels, expected a multiple of %lld (factor "
                 "%lld squared)", shape_of(x, sx, sizeof sx), (long long)c, (long long)(r * r), (long long)r);
        return NULL;
    }
    int64_t split[LT_MAX_DIMS], merged[LT_MAX_DIMS];
    int perm[LT_MAX_DIMS];
    for (int i = 0; i < lead; i++)
        split[i] = merged[i] = x->shape[i], perm[i] = i;
    int64_t tail[5] = {c / (r * r), r, r, h, w};
    int order[5] = {0, 3, 1, 4, 2}; /* [C, H, r, W, r] */
    for (int i = 0; i < 5; i++)
        split[lead + i] = tail[i], perm[lead + i] = lead + order[i];
    merged[lead] = c / (r * r), merged[lead + 1] = h * r, merged[lead + 2] = w * r;
    lt_scope_begin();
    lt_tensor *y = lt_reshape(lt_permute(lt_reshape(x, split, nd + 2), perm, nd + 2), merged, nd);
    return lt_scope_return(y);
}

/* The inverse: [lead..., C, H*r, W*r] -> [lead..., C*r*r, H, W]. */
lt_tensor *lt_pixel_unshuffle(lt_tensor *x, int64_t r)
{
    if (check_shuffle("pixel_unshuffle", x, r) != LT_OK)
        return NULL;
    int nd = x->ndim, lead = nd - 3;
    int64_t c = x->shape[lead], h = x->shape[lead + 1], w = x->shape[lead + 2];
    if (h % r != 0 || w % r != 0) {
        char sx[160];
        lt_error(LT_ERR_SHAPE, "pixel_unshuffle: input %s, expected height and width divisible by the factor %lld",
                 shape_of(x, sx, sizeof sx), (long long)r);
        return NULL;
    }
    int64_t split[LT_MAX_DIMS], merged[LT_MAX_DIMS];
    int perm[LT_MAX_DIMS];
    for (int i = 0; i < lead; i++)
        split[i] = merged[i] = x->shape[i], perm[i] = i;
    int64_t tail[5] = {c, h / r, r, w / r, r};
    int order[5] = {0, 2, 4, 1, 3}; /* [C, r, r, H, W] */
    for (int i = 0; i < 5; i++)
        split[lead + i] = tail[i], perm[lead + i] = lead + order[i];
    merged[lead] = c * r * r, merged[lead + 1] = h / r, merged[lead + 2] = w / r;
    lt_scope_begin();
    lt_tensor *y = lt_reshape(lt_permute(lt_reshape(x, split, nd + 2), perm, nd + 2), merged, nd);
    return lt_scope_return(y);
}
