/*
 * layers_conv.c - the convolution layers beyond conv2d: Conv1d and
 * ConvTranspose2d.
 *
 * As in layers.c, the forward functions use the public ops only (they run
 * on every device and autograd records them), and the parameters are f32,
 * initialized like PyTorch: weight and bias U(-1/sqrt(fan_in),
 * 1/sqrt(fan_in)), where fan_in is the weight's size(1) times the kernel's
 * size (for ConvTranspose2d: out_channels / groups * k * k), drawn on the
 * cpu from the global generator and then copied to the device.
 */
#include "nn/nn_internal.h"

#include <math.h>
#include <stdio.h>

/* U(-bound, bound), f32, on dev (a caller-owned reference). */
static lt_tensor *uniform_on(const int64_t *dims, int ndim, double bound, lt_device dev)
{
    lt_scope_begin();
    lt_tensor *u = lt_rand(dims, ndim, LT_F32, lt_device_cpu());
    lt_tensor *t = lt_mul_scalar(lt_sub_scalar(lt_mul_scalar(u, 2.0), 1.0), bound);
    if (t && dev.kind != LT_DEVICE_CPU)
        t = lt_to(t, dev);
    t = t ? lt_retain(t) : NULL;
    lt_scope_end();
    return t;
}

/* The sizes a convolution layer is built from. */
typedef struct conv_layer_args {
    const char *kind;
    int64_t in, out, kernel, stride, padding, output_padding, groups;
} conv_layer_args;

static lt_status check_layer_args(const conv_layer_args *a)
{
    const char *k = a->kind;
    if (a->groups < 1)
        return lt_error(LT_ERR_ARGUMENT, "nn.%s: groups is %lld, expected >= 1", k, (long long)a->groups);
    if (a->in < 1 || a->in % a->groups != 0 || a->out < 1 || a->out % a->groups != 0)
        return lt_error(LT_ERR_ARGUMENT, "nn.%s: in_channels %lld and out_channels %lld, expected positive "
                        "multiples of groups (%lld)", k, (long long)a->in, (long long)a->out, (long long)a->groups);
    if (a->kernel < 1 || a->stride < 1 || a->padding < 0 || a->output_padding < 0)
        return lt_error(LT_ERR_ARGUMENT, "nn.%s: kernel %lld, stride %lld, padding %lld, output_padding %lld: "
                        "expected kernel and stride >= 1, paddings >= 0", k, (long long)a->kernel,
                        (long long)a->stride, (long long)a->padding, (long long)a->output_padding);
    if (a->output_padding > 0 && a->output_padding >= a->stride)
        return lt_error(LT_ERR_ARGUMENT, "nn.%s: output_padding %lld, expected it smaller than the stride %lld", k,
                        (long long)a->output_padding, (long long)a->stride);
    return LT_OK;
}

/* A layer with weight `wdims` (and bias [bias_len]) drawn with the bound
 * 1/sqrt(fan_in); cfg: in, out, kernel, stride, padding, output_padding,
 * groups. */
static lt_module *conv_layer(const conv_layer_args *a, lt_nn_forward_fn forward, const int64_t *wdims, int nd,
                             int64_t fan_in, bool bias, lt_device dev)
{
    char op[48];
    snprintf(op, sizeof op, "nn.%s", a->kind);
    if (check_layer_args(a) != LT_OK || lt_nn_check_device(op, dev) != LT_OK)
        return NULL;
    lt_module *m = lt_nn_module_new(a->kind, forward);
    if (!m)
        return NULL;
    int64_t cfg[7] = {a->in, a->out, a->kernel, a->stride, a->padding, a->output_padding, a->groups};
    for (int i = 0; i < 7; i++)
        m->cfg[i] = cfg[i];
    double bound = 1.0 / sqrt((double)fan_in);
    lt_status s = lt_nn_module_add_tensor(m, "weight", uniform_on(wdims, nd, bound, dev), false);
    if (s == LT_OK && bias)
        s = lt_nn_module_add_tensor(m, "bias", uniform_on(&a->out, 1, bound, dev), false);
    if (s != LT_OK) {
        lt_module_free(m);
        return NULL;
    }
    return m;
}

static lt_tensor *bias_of(lt_module *m) { return m->ntensors > 1 ? m->tensors[1].t : NULL; }

/* ---- Conv1d ------------------------------------------------------------------ */

static lt_tensor *conv1d_forward(lt_module *m, lt_tensor *x)
{
    if (lt_nn_check_same_device(m, x) != LT_OK)
        return NULL;
    return lt_conv1d(x, m->tensors[0].t, bias_of(m), m->cfg[3], m->cfg[4], 1, m->cfg[6]);
}

lt_module *lt_nn_conv1d(int64_t in_channels, int64_t out_channels, int64_t kernel, int64_t stride,
                        int64_t padding, int64_t groups, bool bias, lt_device dev)
{
    conv_layer_args a = {"conv1d", in_channels, out_channels, kernel, stride, padding, 0, groups};
    int64_t wdims[3] = {out_channels, groups > 0 ? in_channels / groups : 0, kernel};
    return conv_layer(&a, conv1d_forward, wdims, 3, wdims[1] * kernel, bias, dev);
}

/* ---- ConvTranspose2d ----------------------------------------------------------- */

static lt_tensor *conv_transpose2d_forward(lt_module *m, lt_tensor *x)
{
    if (lt_nn_check_same_device(m, x) != LT_OK)
        return NULL;
    int64_t stride[2] = {m->cfg[3], m->cfg[3]}, padding[2] = {m->cfg[4], m->cfg[4]};
    int64_t output_padding[2] = {m->cfg[5], m->cfg[5]};
    return lt_conv_transpose2d(x, m->tensors[0].t, bias_of(m), stride, padding, output_padding, m->cfg[6], NULL);
}

lt_module *lt_nn_conv_transpose2d(int64_t in_channels, int64_t out_channels, int64_t kernel, int64_t stride,
                                  int64_t padding, int64_t output_padding, int64_t groups, bool bias, lt_device dev)
{
    conv_layer_args a = {"conv_transpose2d", in_channels, out_channels, kernel, stride, padding, output_padding,
                         groups};
    int64_t wdims[4] = {in_channels, groups > 0 ? out_channels / groups : 0, kernel, kernel};
    return conv_layer(&a, conv_transpose2d_forward, wdims, 4, wdims[1] * kernel * kernel, bias, dev);
}
