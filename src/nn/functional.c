/*
 * functional.c - torch.nn.functional's normalizations and dropout as
 * compositions of public ops (so they trace and fuse on the lazy device and
 * autograd differentiates them), with PyTorch's definitions:
 *
 *   layer_norm     over the last dims (normalized_shape), biased variance
 *   group_norm     x [N, C, *] in G groups of C/G channels, statistics per
 *                  (sample, group)
 *   instance_norm  statistics per (sample, channel) over the spatial dims;
 *                  running statistics get the batch mean of them
 *   batch_norm     statistics per channel over every other dim (training)
 *                  or the running statistics (eval)
 *   each: (x - mean) / sqrt(var + eps) [* weight] [+ bias]
 *
 * Running statistics are updated in place without gradient as torch does:
 * r = (1 - momentum) r + momentum s, with the unbiased variance.
 *
 *   dropout        training: x * (u < 1 - p) / (1 - p), u ~ U[0, 1) from
 *                  the global generator; otherwise a copy of x.
 */
#include "lazy/lazy.h"
#include "api/compose.h"
#include "nn/nn_internal.h"

#include <math.h>

#define SHAPE_BUF 160

static const char *shape_of(lt_tensor *t, char *buf, size_t cap)
{
    return lt_shape_str(lt_tensor_shape(t), lt_tensor_ndim(t), buf, cap);
}

/* ---- argument checks -------------------------------------------------------- */

static lt_status check_input(const char *op, lt_tensor *x, int min_ndim, const char *expected)
{
    if (lt_check_tensor(op, x, 0) != LT_OK)
        return lt_last_status();
    if (!lt_dtype_is_floating(lt_tensor_dtype(x)))
        return lt_error(LT_ERR_DTYPE, "%s: input has dtype %s, expected a floating dtype", op,
                        lt_dtype_name(lt_tensor_dtype(x)));
    if (lt_tensor_ndim(x) < min_ndim) {
        char sb[SHAPE_BUF];
        return lt_error(LT_ERR_SHAPE, "%s: input has shape %s, expected %s", op, shape_of(x, sb, sizeof sb),
                        expected);
    }
    return LT_OK;
}

/* An optional per-channel (or per-element) tensor: NULL, or of the input's
 * dtype and device with the given shape. */
static lt_status check_optional(const char *op, lt_tensor *x, lt_tensor *t, int index, const char *name,
                                const int64_t *shape, int ndim)
{
    if (!t)
        return LT_OK;
    if (lt_check_tensor(op, t, index) != LT_OK)
        return lt_last_status();
    char sa[SHAPE_BUF], sb[SHAPE_BUF];
    if (lt_tensor_dtype(t) != lt_tensor_dtype(x))
        return lt_error(LT_ERR_DTYPE, "%s: %s has dtype %s, expected the input's %s", op, name,
                        lt_dtype_name(lt_tensor_dtype(t)), lt_dtype_name(lt_tensor_dtype(x)));
    if (!lt_shape_equal(lt_tensor_shape(t), lt_tensor_ndim(t), shape, ndim))
        return lt_error(LT_ERR_SHAPE, "%s: %s has shape %s, expected %s", op, name, shape_of(t, sa, sizeof sa),
                        lt_shape_str(shape, ndim, sb, sizeof sb));
    if (!lt_device_equal(lt_tensor_device(t), lt_tensor_device(x)))
        return lt_error(LT_ERR_DEVICE, "%s: %s is on another device than the input", op, name);
    return LT_OK;
}

/* weight, bias (and running_mean, running_var when given) of shape [C]. */
static lt_status check_channel_tensors(const char *op, lt_tensor *x, lt_tensor *const *t, const char *const *names,
                                       int n)
{
    int64_t channels = lt_tensor_size(x, 1);
    for (int i = 0; i < n; i++)
        if (check_optional(op, x, t[i], i + 1, names[i], &channels, 1) != LT_OK)
            return lt_last_status();
    return LT_OK;
}

static lt_status check_eps(const char *op, double eps)
{
    if (eps >= 0.0 && isfinite(eps))
        return LT_OK;
    return lt_error(LT_ERR_ARGUMENT, "%s: eps is %g, expected a finite value >= 0", op, eps);
}

static lt_status check_momentum(const char *op, double momentum)
{
    if (momentum >= 0.0 && momentum <= 1.0)
        return LT_OK;
    return lt_error(LT_ERR_ARGUMENT, "%s: momentum is %g, expected a value in [0, 1]", op, momentum);
}

/* ---- shared pieces ------------------------------------------------------------ */

/* (x - mean) / sqrt(var + eps) */
static lt_tensor *standardize(lt_tensor *x, lt_tensor *mean, lt_tensor *var, double eps)
{
    return lt_mul(lt_sub(x, mean), lt_rsqrt(lt_add_scalar(var, eps)));
}

/* t [C] as [1, C, 1, ...] for an input of ndim dims. */
static lt_tensor *per_channel(lt_tensor *t, int64_t channels, int ndim)
{
    int64_t dims[LT_MAX_DIMS];
    for (int d = 0; d < ndim; d++)
        dims[d] = d == 1 ? channels : 1;
    return lt_reshape(t, dims, ndim);
}

/* y * weight + bias, each optional, already broadcastable. */
static lt_tensor *affine(lt_tensor *y, lt_tensor *weight, lt_tensor *bias)
{
    if (weight)
        y = lt_mul(y, weight);
    return bias ? lt_add(y, bias) : y;
}

/* running = (1 - momentum) running + momentum stat, in place, no grad. */
static bool update_running(lt_tensor *running, lt_tensor *stat, double momentum)
{
    lt_no_grad_begin();
    lt_tensor *flat = lt_reshape(lt_detach(stat), lt_tensor_shape(running), lt_tensor_ndim(running));
    bool ok = lt_add_scaled_(lt_mul_scalar_(running, 1.0 - momentum), flat, momentum) != NULL;
    lt_no_grad_end();
    return ok;
}

/* ---- layer norm ------------------------------------------------------------------ */

static lt_status check_layer_norm(lt_tensor *x, const int64_t *shape, int ndims, lt_tensor *weight,
                                  lt_tensor *bias, double eps)
{
    const char *op = "layer_norm";
    if (check_input(op, x, 0, "") != LT_OK || check_eps(op, eps) != LT_OK)
        return lt_last_status();
    if (!shape || ndims < 1 || ndims > LT_MAX_DIMS)
        return lt_error(shape ? LT_ERR_ARGUMENT : LT_ERR_NULL, "%s: normalized_shape has %d dims%s, expected 1 "
                        "to %d", op, ndims, shape ? "" : " and is NULL", LT_MAX_DIMS);
    int nd = lt_tensor_ndim(x);
    char sa[SHAPE_BUF], sb[SHAPE_BUF];
    if (nd < ndims || !lt_shape_equal(lt_tensor_shape(x) + nd - ndims, ndims, shape, ndims))
        return lt_error(LT_ERR_SHAPE, "%s: input has shape %s, expected its last dims to be normalized_shape %s",
                        op, shape_of(x, sa, sizeof sa), lt_shape_str(shape, ndims, sb, sizeof sb));
    if (check_optional(op, x, weight, 3, "weight", shape, ndims) != LT_OK ||
        check_optional(op, x, bias, 4, "bias", shape, ndims) != LT_OK)
        return lt_last_status();
    return LT_OK;
}

lt_tensor *lt_layer_norm(lt_tensor *x, const int64_t *normalized_shape, int ndims, lt_tensor *weight,
                         lt_tensor *bias, double eps)
{
    if (check_layer_norm(x, normalized_shape, ndims, weight, bias, eps) != LT_OK)
        return NULL;
    lt_scope_begin();
    lt_origin caller = lt_origin_enter("layer_norm");
    int dims[LT_MAX_DIMS], nd = lt_tensor_ndim(x);
    for (int i = 0; i < ndims; i++)
        dims[i] = nd - ndims + i;
    lt_tensor *mean = lt_mean(x, dims, ndims, true), *var = lt_var(x, dims, ndims, 0, true);
    return lt_scope_return_from(affine(standardize(x, mean, var, eps), weight, bias), caller);
}

/* ---- group norm -------------------------------------------------------------------- */

lt_tensor *lt_group_norm(lt_tensor *x, int64_t num_groups, lt_tensor *weight, lt_tensor *bias, double eps)
{
    const char *op = "group_norm";
    if (check_input(op, x, 2, "at least 2 dims [N, C, ...]") != LT_OK || check_eps(op, eps) != LT_OK ||
        check_channel_tensors(op, x, (lt_tensor *[]){weight, bias}, (const char *[]){"weight", "bias"}, 2) != LT_OK)
        return NULL;
    int64_t channels = lt_tensor_size(x, 1);
    if (num_groups < 1 || channels % num_groups != 0) {
        lt_error(LT_ERR_ARGUMENT, "%s: num_groups is %lld, expected a positive divisor of the %lld channels", op,
                 (long long)num_groups, (long long)channels);
        return NULL;
    }
    lt_scope_begin();
    lt_origin caller = lt_origin_enter(op);
    int64_t per_group = channels / num_groups;
    for (int d = 2; d < lt_tensor_ndim(x); d++)
        per_group *= lt_tensor_size(x, d);
    int64_t grouped[3] = {lt_tensor_size(x, 0), num_groups, per_group};
    lt_tensor *g = lt_reshape(x, grouped, 3);
    int last = 2;
    lt_tensor *y = standardize(g, lt_mean(g, &last, 1, true), lt_var(g, &last, 1, 0, true), eps);
    y = lt_reshape(y, lt_tensor_shape(x), lt_tensor_ndim(x));
    int nd = lt_tensor_ndim(x);
    lt_tensor *w = weight ? per_channel(weight, channels, nd) : NULL, *b = bias ? per_channel(bias, channels, nd) : NULL;
    return lt_scope_return_from(affine(y, w, b), caller);
}

/* ---- batch norm -------------------------------------------------------------------- */

/* Checks the statistics arguments shared by batch and instance norm. */
static lt_status check_stats_args(const char *op, lt_tensor *x, lt_tensor *running_mean, lt_tensor *running_var,
                                  lt_tensor *weight, lt_tensor *bias, bool need_running, double momentum, double eps)
{
    lt_tensor *t[4] = {running_mean, running_var, weight, bias};
    const char *names[4] = {"running_mean", "running_var", "weight", "bias"};
    if (check_channel_tensors(op, x, t, names, 4) != LT_OK || check_eps(op, eps) != LT_OK ||
        check_momentum(op, momentum) != LT_OK)
        return lt_last_status();
    if (!running_mean != !running_var)
        return lt_error(LT_ERR_ARGUMENT, "%s: running_mean and running_var must be given together", op);
    if (need_running && !running_mean)
        return lt_error(LT_ERR_ARGUMENT, "%s: running_mean and running_var are NULL, expected them when the "
                        "input's statistics are not used", op);
    return LT_OK;
}

/* Every dim but the channel dim (1). */
static int non_channel_dims(lt_tensor *x, int *dims)
{
    int n = 0;
    for (int d = 0; d < lt_tensor_ndim(x); d++)
        if (d != 1)
            dims[n++] = d;
    return n;
}

lt_tensor *lt_batch_norm(lt_tensor *x, lt_tensor *running_mean, lt_tensor *running_var, lt_tensor *weight,
                         lt_tensor *bias, bool training, double momentum, double eps)
{
    const char *op = "batch_norm";
    if (check_input(op, x, 2, "at least 2 dims [N, C, ...]") != LT_OK ||
        check_stats_args(op, x, running_mean, running_var, weight, bias, !training, momentum, eps) != LT_OK)
        return NULL;
    int64_t channels = lt_tensor_size(x, 1), count = channels ? lt_tensor_numel(x) / channels : 0;
    if (training && count < 2) {
        char sb[SHAPE_BUF];
        lt_error(LT_ERR_SHAPE, "%s: input has shape %s, expected more than 1 value per channel when training", op,
                 shape_of(x, sb, sizeof sb));
        return NULL;
    }
    lt_scope_begin();
    lt_origin caller = lt_origin_enter(op);
    int nd = lt_tensor_ndim(x), dims[LT_MAX_DIMS], ndims = non_channel_dims(x, dims);
    lt_tensor *mean, *var;
    if (training) {
        mean = lt_mean(x, dims, ndims, true);
        var = lt_var(x, dims, ndims, 0, true);
        if (running_mean &&
            (!update_running(running_mean, mean, momentum) ||
             !update_running(running_var, lt_mul_scalar(var, (double)count / (double)(count - 1)), momentum)))
            return lt_scope_return_from(NULL, caller);
    } else {
        mean = per_channel(running_mean, channels, nd);
        var = per_channel(running_var, channels, nd);
    }
    lt_tensor *w = weight ? per_channel(weight, channels, nd) : NULL, *b = bias ? per_channel(bias, channels, nd) : NULL;
    return lt_scope_return_from(affine(standardize(x, mean, var, eps), w, b), caller);
}

/* ---- instance norm ------------------------------------------------------------------- */

/* Statistics per (sample, channel) over the spatial dims; the running ones
 * receive their mean over the batch. */
static lt_tensor *instance_stats_norm(lt_tensor *x, lt_tensor *running_mean, lt_tensor *running_var,
                                      double momentum, double eps)
{
    int nd = lt_tensor_ndim(x), dims[LT_MAX_DIMS];
    int64_t count = 1;
    for (int d = 2; d < nd; d++) {
        dims[d - 2] = d;
        count *= lt_tensor_size(x, d);
    }
    lt_tensor *mean = lt_mean(x, dims, nd - 2, true), *var = lt_var(x, dims, nd - 2, 0, true);
    if (running_mean) {
        int batch = 0;
        lt_tensor *unbiased = lt_mul_scalar(var, (double)count / (double)(count - 1));
        if (!update_running(running_mean, lt_mean(mean, &batch, 1, false), momentum) ||
            !update_running(running_var, lt_mean(unbiased, &batch, 1, false), momentum))
            return NULL;
    }
    return standardize(x, mean, var, eps);
}

lt_tensor *lt_instance_norm(lt_tensor *x, lt_tensor *running_mean, lt_tensor *running_var, lt_tensor *weight,
                            lt_tensor *bias, bool use_input_stats, double momentum, double eps)
{
    const char *op = "instance_norm";
    if (check_input(op, x, 3, "at least 3 dims [N, C, L, ...]") != LT_OK ||
        check_stats_args(op, x, running_mean, running_var, weight, bias, !use_input_stats, momentum, eps) != LT_OK)
        return NULL;
    int nd = lt_tensor_ndim(x);
    int64_t channels = lt_tensor_size(x, 1), spatial = 1;
    for (int d = 2; d < nd; d++)
        spatial *= lt_tensor_size(x, d);
    if (use_input_stats && spatial < 2) {
        char sb[SHAPE_BUF];
        lt_error(LT_ERR_SHAPE, "%s: input has shape %s, expected more than 1 spatial element per channel", op,
                 shape_of(x, sb, sizeof sb));
        return NULL;
    }
    lt_scope_begin();
    lt_origin caller = lt_origin_enter(op);
    lt_tensor *y;
    if (use_input_stats)
        y = instance_stats_norm(x, running_mean, running_var, momentum, eps);
    else
        y = standardize(x, per_channel(running_mean, channels, nd), per_channel(running_var, channels, nd), eps);
    if (!y)
        return lt_scope_return_from(NULL, caller);
    lt_tensor *w = weight ? per_channel(weight, channels, nd) : NULL, *b = bias ? per_channel(bias, channels, nd) : NULL;
    return lt_scope_return_from(affine(y, w, b), caller);
}

/* ---- dropout ---------------------------------------------------------------------------- */

lt_tensor *lt_dropout(lt_tensor *x, double p, bool training)
{
    const char *op = "dropout";
    if (check_input(op, x, 0, "") != LT_OK)
        return NULL;
    if (!(p >= 0.0 && p <= 1.0)) {
        lt_error(LT_ERR_ARGUMENT, "%s: p is %g, expected a probability in [0, 1]", op, p);
        return NULL;
    }
    if (!training || p == 0.0)
        return lt_clone(x);
    lt_scope_begin();
    lt_origin caller = lt_origin_enter(op);
    if (p == 1.0)
        return lt_scope_return_from(lt_mul_scalar(x, 0.0), caller);
    /* draw in f32 (f64 for f64 inputs): bf16/f16 uniforms would quantize p */
    lt_dtype udt = lt_tensor_dtype(x) == LT_F64 ? LT_F64 : LT_F32;
    lt_tensor *u = lt_rand(lt_tensor_shape(x), lt_tensor_ndim(x), udt, lt_tensor_device(x));
    lt_tensor *keep = lt_lt_scalar(u, 1.0 - p);
    return lt_scope_return_from(lt_mul_scalar(lt_mul(x, keep), 1.0 / (1.0 - p)), caller);
}
