/*
 * layers.c - the nn layers: linear, conv2d, pooling, flatten, activations,
 * dropout, layer norm, batch norm, embedding, multi-head self-attention and
 * the sequential container.
 *
 * Every forward function is written with the public tensor ops only, so it
 * runs on the cpu and the lazy device alike and autograd records it.
 *
 * Initialization follows PyTorch: linear and conv2d weights and biases are
 * U(-1/sqrt(fan_in), 1/sqrt(fan_in)) (PyTorch's kaiming_uniform(a=sqrt(5))),
 * layer/batch norm weight 1 and bias 0, batch norm running mean 0 and
 * running variance 1, embeddings N(0, 1). Random values are drawn on the
 * cpu from the global generator and then copied to the device, so a cpu
 * and a lazy model built after the same lt_manual_seed start identical.
 * Parameters are f32.
 */
#include "nn/nn_internal.h"

#include <math.h>
#include <stdio.h>

#define SHAPE_BUF 160

/* ---- parameter factories -------------------------------------------------- */

/* Finishes a parameter built on the cpu: copies it to dev and retains it.
 * Runs inside a scope, so only the retained reference survives. */
static lt_tensor *place(lt_tensor *cpu, lt_device dev)
{
    lt_tensor *t = dev.kind == LT_DEVICE_CPU ? cpu : lt_to(cpu, dev);
    return lt_retain(t);
}

/* U(-bound, bound) as f32 on dev (a caller-owned reference). */
static lt_tensor *uniform_param(const int64_t *dims, int ndim, double bound, lt_device dev)
{
    lt_scope_begin();
    lt_tensor *u = lt_rand(dims, ndim, LT_F32, lt_device_cpu());
    lt_tensor *t = place(lt_mul_scalar(lt_sub_scalar(lt_mul_scalar(u, 2.0), 1.0), bound), dev);
    lt_scope_end();
    return t;
}

/* N(0, 1) as f32 on dev. */
static lt_tensor *normal_param(const int64_t *dims, int ndim, lt_device dev)
{
    lt_scope_begin();
    lt_tensor *t = place(lt_randn(dims, ndim, LT_F32, lt_device_cpu()), dev);
    lt_scope_end();
    return t;
}

/* A constant f32 vector of n values on dev. */
static lt_tensor *const_param(int64_t n, double value, lt_device dev)
{
    lt_scope_begin();
    lt_tensor *t = place(lt_full(&n, 1, value, LT_F32, lt_device_cpu()), dev);
    lt_scope_end();
    return t;
}

/* Frees m and returns NULL if status is an error (the error stays set). */
static lt_module *finish(lt_module *m, lt_status status)
{
    if (status == LT_OK)
        return m;
    lt_module_free(m);
    return NULL;
}

/* Sets an argument error naming the layer and returns NULL. */
static lt_module *bad_arg(const char *kind, const char *what, double value, const char *expected)
{
    lt_error(LT_ERR_ARGUMENT, "nn.%s: %s is %g, expected %s", kind, what, value, expected);
    return NULL;
}

/* ---- input checks ------------------------------------------------------------ */

/* x is a floating tensor on the module's device. */
static lt_status check_float_input(lt_module *m, lt_tensor *x)
{
    lt_dtype dt = lt_tensor_dtype(x);
    if (!lt_dtype_is_floating(dt))
        return lt_error(LT_ERR_DTYPE, "nn.%s: input has dtype %s, expected a floating dtype (f32, f64, bf16 "
                        "or f16)", m->kind, lt_dtype_name(dt));
    return lt_nn_check_same_device(m, x);
}

/* x has ndim dims and, when size >= 0, dimension dim of that size. */
static lt_status check_rank(lt_module *m, lt_tensor *x, int ndim, int dim, int64_t size, const char *expected)
{
    int nd = lt_tensor_ndim(x);
    bool ok = (ndim < 0 ? nd >= 1 : nd == ndim) && (size < 0 || lt_tensor_size(x, dim) == size);
    if (ok)
        return LT_OK;
    char sb[SHAPE_BUF];
    return lt_error(LT_ERR_SHAPE, "nn.%s: input has shape %s, expected %s", m->kind,
                    lt_shape_str(lt_tensor_shape(x), nd, sb, sizeof sb), expected);
}

/* ---- linear --------------------------------------------------------------- */

static lt_tensor *linear_forward(lt_module *m, lt_tensor *x)
{
    char want[64];
    snprintf(want, sizeof want, "[..., %lld] (in_features)", (long long)m->cfg[0]);
    if (check_float_input(m, x) != LT_OK || check_rank(m, x, -1, -1, m->cfg[0], want) != LT_OK)
        return NULL;
    lt_tensor *y = lt_matmul(x, lt_transpose(m->tensors[0].t, 0, 1));
    return m->ntensors > 1 ? lt_add(y, m->tensors[1].t) : y;
}

lt_module *lt_nn_linear(int64_t in_features, int64_t out_features, bool bias, lt_device dev)
{
    if (in_features < 1)
        return bad_arg("linear", "in_features", (double)in_features, ">= 1");
    if (out_features < 1)
        return bad_arg("linear", "out_features", (double)out_features, ">= 1");
    if (lt_nn_check_device("nn.linear", dev) != LT_OK)
        return NULL;
    lt_module *m = lt_nn_module_new("linear", linear_forward);
    if (!m)
        return NULL;
    m->cfg[0] = in_features;
    m->cfg[1] = out_features;
    double bound = 1.0 / sqrt((double)in_features);
    lt_status s = lt_nn_module_add_tensor(m, "weight", uniform_param((int64_t[]){out_features, in_features}, 2,
                                                                     bound, dev), false);
    if (s == LT_OK && bias)
        s = lt_nn_module_add_tensor(m, "bias", uniform_param(&out_features, 1, bound, dev), false);
    return finish(m, s);
}

/* ---- conv2d --------------------------------------------------------------- */

/* cfg: in, out, kernel, stride, padding, groups */
static lt_tensor *conv2d_forward(lt_module *m, lt_tensor *x)
{
    char want[64];
    snprintf(want, sizeof want, "[N, %lld, H, W]", (long long)m->cfg[0]);
    if (check_float_input(m, x) != LT_OK || check_rank(m, x, 4, 1, m->cfg[0], want) != LT_OK)
        return NULL;
    int64_t stride[2] = {m->cfg[3], m->cfg[3]}, padding[2] = {m->cfg[4], m->cfg[4]};
    lt_tensor *bias = m->ntensors > 1 ? m->tensors[1].t : NULL;
    return lt_conv2d(x, m->tensors[0].t, bias, stride, padding, NULL, m->cfg[5]);
}

lt_module *lt_nn_conv2d(int64_t in_channels, int64_t out_channels, int64_t kernel, int64_t stride,
                        int64_t padding, int64_t groups, bool bias, lt_device dev)
{
    const char *k = "conv2d";
    if (groups < 1)
        return bad_arg(k, "groups", (double)groups, ">= 1");
    char multiple[64];
    snprintf(multiple, sizeof multiple, "a positive multiple of groups (%lld)", (long long)groups);
    if (in_channels < 1 || in_channels % groups != 0)
        return bad_arg(k, "in_channels", (double)in_channels, multiple);
    if (out_channels < 1 || out_channels % groups != 0)
        return bad_arg(k, "out_channels", (double)out_channels, multiple);
    if (kernel < 1)
        return bad_arg(k, "kernel", (double)kernel, ">= 1");
    if (stride < 1)
        return bad_arg(k, "stride", (double)stride, ">= 1");
    if (padding < 0)
        return bad_arg(k, "padding", (double)padding, ">= 0");
    if (lt_nn_check_device("nn.conv2d", dev) != LT_OK)
        return NULL;
    lt_module *m = lt_nn_module_new(k, conv2d_forward);
    if (!m)
        return NULL;
    int64_t cfg[6] = {in_channels, out_channels, kernel, stride, padding, groups};
    for (int i = 0; i < 6; i++)
        m->cfg[i] = cfg[i];
    int64_t fan_in = in_channels / groups * kernel * kernel;
    double bound = 1.0 / sqrt((double)fan_in);
    int64_t wdims[4] = {out_channels, in_channels / groups, kernel, kernel};
    lt_status s = lt_nn_module_add_tensor(m, "weight", uniform_param(wdims, 4, bound, dev), false);
    if (s == LT_OK && bias)
        s = lt_nn_module_add_tensor(m, "bias", uniform_param(&out_channels, 1, bound, dev), false);
    return finish(m, s);
}

/* ---- pooling, flatten, activations ------------------------------------------- */

static lt_tensor *max_pool_forward(lt_module *m, lt_tensor *x)
{
    int64_t k[2] = {m->cfg[0], m->cfg[0]};
    return lt_max_pool2d(x, k, NULL, NULL, NULL);
}

static lt_tensor *avg_pool_forward(lt_module *m, lt_tensor *x)
{
    int64_t k[2] = {m->cfg[0], m->cfg[0]};
    return lt_avg_pool2d(x, k, NULL, NULL, true);
}

static lt_module *pool_new(const char *kind, lt_nn_forward_fn fwd, int64_t kernel)
{
    if (kernel < 1)
        return bad_arg(kind, "kernel", (double)kernel, ">= 1");
    lt_module *m = lt_nn_module_new(kind, fwd);
    if (m)
        m->cfg[0] = kernel;
    return m;
}

lt_module *lt_nn_max_pool2d(int64_t kernel) { return pool_new("max_pool2d", max_pool_forward, kernel); }
lt_module *lt_nn_avg_pool2d(int64_t kernel) { return pool_new("avg_pool2d", avg_pool_forward, kernel); }

static lt_tensor *flatten_forward(lt_module *m, lt_tensor *x)
{
    if (lt_tensor_ndim(x) < 2) {
        char sb[SHAPE_BUF];
        lt_error(LT_ERR_SHAPE, "nn.%s: input has shape %s, expected at least 2 dims [N, ...]", m->kind,
                 lt_shape_str(lt_tensor_shape(x), lt_tensor_ndim(x), sb, sizeof sb));
        return NULL;
    }
    return lt_flatten(x, 1, -1);
}

lt_module *lt_nn_flatten(void) { return lt_nn_module_new("flatten", flatten_forward); }

static lt_tensor *relu_forward(lt_module *m, lt_tensor *x) { return (void)m, lt_relu(x); }
static lt_tensor *gelu_forward(lt_module *m, lt_tensor *x) { return (void)m, lt_gelu(x); }
static lt_tensor *silu_forward(lt_module *m, lt_tensor *x) { return (void)m, lt_silu(x); }
static lt_tensor *tanh_forward(lt_module *m, lt_tensor *x) { return (void)m, lt_tanh(x); }

lt_module *lt_nn_relu(void) { return lt_nn_module_new("relu", relu_forward); }
lt_module *lt_nn_gelu(void) { return lt_nn_module_new("gelu", gelu_forward); }
lt_module *lt_nn_silu(void) { return lt_nn_module_new("silu", silu_forward); }
lt_module *lt_nn_tanh(void) { return lt_nn_module_new("tanh", tanh_forward); }

/* ---- dropout ----------------------------------------------------------------- */

/* Training: x * (u < 1-p) / (1-p) with u ~ U[0, 1) from the global RNG, so
 * each element is kept with probability 1-p. Eval (or p = 0): x itself. */
static lt_tensor *dropout_forward(lt_module *m, lt_tensor *x)
{
    double p = m->fcfg[0];
    if (!m->training || p == 0.0)
        return x;
    if (check_float_input(m, x) != LT_OK)
        return NULL;
    if (p == 1.0)
        return lt_mul_scalar(x, 0.0);
    /* draw in f32 (f64 for f64 inputs): bf16/f16 uniforms would quantize p */
    lt_dtype udt = lt_tensor_dtype(x) == LT_F64 ? LT_F64 : LT_F32;
    lt_tensor *u = lt_rand(lt_tensor_shape(x), lt_tensor_ndim(x), udt, lt_tensor_device(x));
    lt_tensor *keep = lt_lt_scalar(u, 1.0 - p);
    return lt_mul_scalar(lt_mul(x, keep), 1.0 / (1.0 - p));
}

lt_module *lt_nn_dropout(double p)
{
    if (!(p >= 0.0 && p <= 1.0))
        return bad_arg("dropout", "p", p, "a probability in [0, 1]");
    lt_module *m = lt_nn_module_new("dropout", dropout_forward);
    if (m)
        m->fcfg[0] = p;
    return m;
}

/* ---- layer norm ---------------------------------------------------------------- */

/* (x - mean) / sqrt(var + eps) * weight + bias over the last dim, with the
 * biased variance (as PyTorch). */
static lt_tensor *layer_norm_forward(lt_module *m, lt_tensor *x)
{
    char want[64];
    snprintf(want, sizeof want, "[..., %lld]", (long long)m->cfg[0]);
    if (check_float_input(m, x) != LT_OK || check_rank(m, x, -1, -1, m->cfg[0], want) != LT_OK)
        return NULL;
    int last = -1;
    lt_tensor *mean = lt_mean(x, &last, 1, true);
    lt_tensor *var = lt_var(x, &last, 1, 0, true);
    lt_tensor *norm = lt_mul(lt_sub(x, mean), lt_rsqrt(lt_add_scalar(var, m->fcfg[0])));
    return lt_add(lt_mul(norm, m->tensors[0].t), m->tensors[1].t);
}

lt_module *lt_nn_layer_norm(int64_t dim, double eps, lt_device dev)
{
    if (dim < 1)
        return bad_arg("layer_norm", "dim", (double)dim, ">= 1");
    if (!(eps >= 0.0 && isfinite(eps)))
        return bad_arg("layer_norm", "eps", eps, "a finite value >= 0");
    if (lt_nn_check_device("nn.layer_norm", dev) != LT_OK)
        return NULL;
    lt_module *m = lt_nn_module_new("layer_norm", layer_norm_forward);
    if (!m)
        return NULL;
    m->cfg[0] = dim;
    m->fcfg[0] = eps;
    lt_status s = lt_nn_module_add_tensor(m, "weight", const_param(dim, 1.0, dev), false);
    if (s == LT_OK)
        s = lt_nn_module_add_tensor(m, "bias", const_param(dim, 0.0, dev), false);
    return finish(m, s);
}

/* ---- batch norm ------------------------------------------------------------------ */

#define BN_MOMENTUM 0.1

/* running = (1 - momentum) * running + momentum * batch, in place, no
 * grad; false if an op failed. */
static bool bn_update(lt_tensor *running, lt_tensor *batch_stat, int64_t channels)
{
    lt_tensor *flat = lt_reshape(batch_stat, &channels, 1);
    return lt_add_scaled_(lt_mul_scalar_(running, 1.0 - BN_MOMENTUM), flat, BN_MOMENTUM) != NULL;
}

/* Training: normalizes with the batch mean and biased variance over
 * (N, H, W) and updates the running statistics (the running variance with
 * the unbiased estimate, as PyTorch). Eval: the running statistics. */
static lt_tensor *batch_norm_forward(lt_module *m, lt_tensor *x)
{
    int64_t channels = m->cfg[0];
    char want[64];
    snprintf(want, sizeof want, "[N, %lld, H, W]", (long long)channels);
    if (check_float_input(m, x) != LT_OK || check_rank(m, x, 4, 1, channels, want) != LT_OK)
        return NULL;
    int64_t stat_dims[4] = {1, channels, 1, 1};
    lt_tensor *mean, *var;
    if (m->training) {
        int64_t count = lt_tensor_numel(x) / channels;
        if (count < 2) {
            char sb[SHAPE_BUF];
            lt_error(LT_ERR_SHAPE, "nn.batch_norm2d: input has shape %s, expected more than 1 value per "
                     "channel when training", lt_shape_str(lt_tensor_shape(x), 4, sb, sizeof sb));
            return NULL;
        }
        int dims[3] = {0, 2, 3};
        mean = lt_mean(x, dims, 3, true);
        var = lt_var(x, dims, 3, 0, true);
        lt_no_grad_begin();
        bool ok = bn_update(m->tensors[2].t, mean, channels) &&
                  bn_update(m->tensors[3].t, lt_mul_scalar(var, (double)count / (double)(count - 1)), channels);
        lt_no_grad_end();
        if (!ok)
            return NULL;
    } else {
        mean = lt_reshape(m->tensors[2].t, stat_dims, 4);
        var = lt_reshape(m->tensors[3].t, stat_dims, 4);
    }
    lt_tensor *norm = lt_mul(lt_sub(x, mean), lt_rsqrt(lt_add_scalar(var, m->fcfg[0])));
    lt_tensor *w = lt_reshape(m->tensors[0].t, stat_dims, 4), *b = lt_reshape(m->tensors[1].t, stat_dims, 4);
    return lt_add(lt_mul(norm, w), b);
}

lt_module *lt_nn_batch_norm2d(int64_t channels, double eps, lt_device dev)
{
    if (channels < 1)
        return bad_arg("batch_norm2d", "channels", (double)channels, ">= 1");
    if (!(eps >= 0.0 && isfinite(eps)))
        return bad_arg("batch_norm2d", "eps", eps, "a finite value >= 0");
    if (lt_nn_check_device("nn.batch_norm2d", dev) != LT_OK)
        return NULL;
    lt_module *m = lt_nn_module_new("batch_norm2d", batch_norm_forward);
    if (!m)
        return NULL;
    m->cfg[0] = channels;
    m->fcfg[0] = eps;
    lt_status s = lt_nn_module_add_tensor(m, "weight", const_param(channels, 1.0, dev), false);
    if (s == LT_OK)
        s = lt_nn_module_add_tensor(m, "bias", const_param(channels, 0.0, dev), false);
    if (s == LT_OK)
        s = lt_nn_module_add_tensor(m, "running_mean", const_param(channels, 0.0, dev), true);
    if (s == LT_OK)
        s = lt_nn_module_add_tensor(m, "running_var", const_param(channels, 1.0, dev), true);
    return finish(m, s);
}

/* ---- embedding --------------------------------------------------------------------- */

static lt_tensor *embedding_forward(lt_module *m, lt_tensor *x)
{
    lt_dtype dt = lt_tensor_dtype(x);
    if (dt != LT_I64 && dt != LT_I32) {
        lt_error(LT_ERR_DTYPE, "nn.embedding: indices have dtype %s, expected i64 or i32", lt_dtype_name(dt));
        return NULL;
    }
    if (lt_nn_check_same_device(m, x) != LT_OK)
        return NULL;
    return lt_embedding(m->tensors[0].t, x);
}

lt_module *lt_nn_embedding(int64_t num, int64_t dim, lt_device dev)
{
    if (num < 1)
        return bad_arg("embedding", "num", (double)num, ">= 1");
    if (dim < 1)
        return bad_arg("embedding", "dim", (double)dim, ">= 1");
    if (lt_nn_check_device("nn.embedding", dev) != LT_OK)
        return NULL;
    lt_module *m = lt_nn_module_new("embedding", embedding_forward);
    if (!m)
        return NULL;
    m->cfg[0] = num;
    m->cfg[1] = dim;
    return finish(m, lt_nn_module_add_tensor(m, "weight", normal_param((int64_t[]){num, dim}, 2, dev), false));
}

/* ---- self-attention ------------------------------------------------------------------ */

/* [B, T, D] slice `part` (0 q, 1 k, 2 v) of the packed [B, T, 3D]
 * projection, as heads [B, H, T, D/H]. */
static lt_tensor *split_heads(lt_tensor *packed, int part, const int64_t *bthd)
{
    int64_t d = bthd[2] * bthd[3];
    lt_tensor *slice = lt_narrow(packed, 2, part * d, d);
    lt_tensor *heads = lt_reshape(slice, bthd, 4);
    return lt_permute(heads, (int[]){0, 2, 1, 3}, 4);
}

/* cfg: dim, heads, causal. Children: "qkv" (Linear D -> 3D), "out" (D -> D).
 * softmax(q k^T / sqrt(D/H) [+ causal mask]) v per head, merged, projected. */
static lt_tensor *attention_forward(lt_module *m, lt_tensor *x)
{
    int64_t dim = m->cfg[0], nheads = m->cfg[1];
    char want[64];
    snprintf(want, sizeof want, "[B, T, %lld]", (long long)dim);
    if (check_float_input(m, x) != LT_OK || check_rank(m, x, 3, 2, dim, want) != LT_OK)
        return NULL;
    int64_t batch = lt_tensor_size(x, 0), steps = lt_tensor_size(x, 1), head_dim = dim / nheads;
    int64_t bthd[4] = {batch, steps, nheads, head_dim};
    lt_module *qkv = m->children[0], *out = m->children[1];
    lt_tensor *packed = qkv->forward(qkv, x);
    lt_tensor *q = split_heads(packed, 0, bthd), *k = split_heads(packed, 1, bthd);
    lt_tensor *v = split_heads(packed, 2, bthd);
    lt_tensor *scores = lt_mul_scalar(lt_matmul(q, lt_transpose(k, 2, 3)), 1.0 / sqrt((double)head_dim));
    if (m->cfg[2]) {
        /* mask[i][j] = j > i: a position attends to itself and the past */
        lt_tensor *ones = lt_ones((int64_t[]){steps, steps}, 2, LT_BOOL, lt_tensor_device(x));
        scores = lt_masked_fill(scores, lt_triu(ones, 1), -INFINITY);
    }
    lt_tensor *context = lt_matmul(lt_softmax(scores, -1), v);
    lt_tensor *merged = lt_reshape(lt_permute(context, (int[]){0, 2, 1, 3}, 4), (int64_t[]){batch, steps, dim}, 3);
    if (!merged)
        return NULL;
    return out->forward(out, merged);
}

lt_module *lt_nn_self_attention(int64_t dim, int64_t heads, bool causal, lt_device dev)
{
    if (dim < 1)
        return bad_arg("self_attention", "dim", (double)dim, ">= 1");
    if (heads < 1 || dim % heads != 0)
        return bad_arg("self_attention", "heads", (double)heads, "a positive divisor of dim");
    if (lt_nn_check_device("nn.self_attention", dev) != LT_OK)
        return NULL;
    lt_module *m = lt_nn_module_new("self_attention", attention_forward);
    if (!m)
        return NULL;
    m->cfg[0] = dim;
    m->cfg[1] = heads;
    m->cfg[2] = causal;
    lt_status s = lt_nn_module_add_child(m, "qkv", lt_nn_linear(dim, 3 * dim, true, dev));
    if (s == LT_OK)
        s = lt_nn_module_add_child(m, "out", lt_nn_linear(dim, dim, true, dev));
    return finish(m, s);
}

/* ---- sequential ------------------------------------------------------------------------ */

static lt_tensor *sequential_forward(lt_module *m, lt_tensor *x)
{
    lt_tensor *h = x;
    for (int i = 0; i < m->nchildren && h; i++)
        h = lt_module_forward(m->children[i], h);
    return h;
}

/* lt_nn_sequential takes ownership of the modules even when it fails: they
 * are freed then (except one already owned by another container), so
 * building a model in one expression with a failing constructor leaks
 * nothing. */

/* Frees the modules of a failed lt_nn_sequential call that nobody else
 * owns (each once). */
static void free_given(lt_module *const *mods, int n)
{
    for (int i = 0; i < n; i++) {
        bool seen = false;
        for (int j = 0; j < i; j++)
            seen = seen || mods[j] == mods[i];
        if (!seen && mods[i] && !mods[i]->parent)
            lt_module_free(mods[i]);
    }
}

/* Checks the modules given to lt_nn_sequential. */
static lt_status check_children(lt_module *const *mods, int n)
{
    for (int i = 0; i < n; i++) {
        if (!mods[i])
            return lt_error_pending() ? lt_last_status()
                                      : lt_error(LT_ERR_NULL, "nn.sequential: module %d is NULL", i);
        if (mods[i]->parent)
            return lt_error(LT_ERR_STATE, "nn.sequential: module %d (nn.%s) already belongs to an nn.%s "
                            "container", i, mods[i]->kind, mods[i]->parent->kind);
        for (int j = 0; j < i; j++)
            if (mods[j] == mods[i])
                return lt_error(LT_ERR_ARGUMENT, "nn.sequential: modules %d and %d are the same module", j, i);
    }
    return LT_OK;
}

lt_module *lt_nn_sequential(lt_module *const *mods, int n)
{
    if (n < 0) {
        lt_error(LT_ERR_ARGUMENT, "nn.sequential: n is %d, expected >= 0", n);
        return NULL;
    }
    if (n > 0 && !mods) {
        lt_error(LT_ERR_NULL, "nn.sequential: mods is NULL with n = %d", n);
        return NULL;
    }
    if (check_children(mods, n) != LT_OK) {
        free_given(mods, n);
        return NULL;
    }
    lt_module *m = lt_nn_module_new("sequential", sequential_forward);
    if (!m) {
        free_given(mods, n);
        return NULL;
    }
    lt_status s = LT_OK;
    for (int i = 0; i < n; i++) {
        char name[16];
        snprintf(name, sizeof name, "%d", i);
        if (s == LT_OK)
            s = lt_nn_module_add_child(m, name, mods[i]);
        else
            lt_module_free(mods[i]);
    }
    return finish(m, s);
}
