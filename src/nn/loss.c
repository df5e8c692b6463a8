/*
 * loss.c - loss functions: cross entropy (with label smoothing), negative
 * log-likelihood and mean squared error, written with public tensor ops so
 * they run on every device and autograd records them.
 *
 * cross_entropy(logits [N, C], targets [N], ls), PyTorch's definition:
 *   logp   = log_softmax(logits, 1)
 *   nll    = -mean_n logp[n, targets[n]]
 *   smooth = -mean_n mean_c logp[n, c]
 *   loss   = (1 - ls) * nll + ls * smooth
 *
 * Target values are checked against [0, C) when the targets live on the cpu.
 * On the lazy device that check would force a barrier, so it is left to the
 * gather kernel, which reports the out-of-range index when the graph runs;
 * the ops are recorded under the function's name, so the barrier's message
 * names it.
 */
#include "lazy/lazy.h"
#include "nn/nn_internal.h"

#include <math.h>

#define SHAPE_BUF 160

static const char *shape_of(lt_tensor *t, char *buf, size_t cap)
{
    return lt_shape_str(lt_tensor_shape(t), lt_tensor_ndim(t), buf, cap);
}

/* Checks cpu target values against [0, classes). */
static lt_status check_target_values(const char *op, lt_tensor *targets, int64_t classes)
{
    if (lt_tensor_device(targets).kind != LT_DEVICE_CPU)
        return LT_OK;
    const char *data = lt_tensor_data(targets);
    int64_t n = lt_tensor_size(targets, 0), stride = lt_tensor_strides(targets)[0];
    bool wide = lt_tensor_dtype(targets) == LT_I64;
    for (int64_t i = 0; i < n; i++) {
        int64_t v = wide ? ((const int64_t *)data)[i * stride] : ((const int32_t *)data)[i * stride];
        if (v < 0 || v >= classes)
            return lt_error(LT_ERR_INDEX, "%s: target %lld at position %lld is out of range, expected a class "
                            "in [0, %lld)", op, (long long)v, (long long)i, (long long)classes);
    }
    return LT_OK;
}

/* Validates scores [N, C] (floating) and targets [N] (i64 or i32). */
static lt_status check_class_inputs(const char *op, lt_tensor *scores, lt_tensor *targets)
{
    if (lt_check_tensor(op, scores, 0) != LT_OK || lt_check_tensor(op, targets, 1) != LT_OK)
        return lt_last_status();
    char sa[SHAPE_BUF], sb[SHAPE_BUF];
    lt_dtype sdt = lt_tensor_dtype(scores), tdt = lt_tensor_dtype(targets);
    if (!lt_dtype_is_floating(sdt))
        return lt_error(LT_ERR_DTYPE, "%s: input has dtype %s, expected a floating dtype", op,
                        lt_dtype_name(sdt));
    if (tdt != LT_I64 && tdt != LT_I32)
        return lt_error(LT_ERR_DTYPE, "%s: targets have dtype %s, expected class indices (i64 or i32)", op,
                        lt_dtype_name(tdt));
    if (lt_tensor_ndim(scores) != 2)
        return lt_error(LT_ERR_SHAPE, "%s: input has shape %s, expected 2 dims [N, C]", op,
                        shape_of(scores, sa, sizeof sa));
    if (lt_tensor_ndim(targets) != 1 || lt_tensor_size(targets, 0) != lt_tensor_size(scores, 0))
        return lt_error(LT_ERR_SHAPE, "%s: targets have shape %s, expected [%lld] to match input %s", op,
                        shape_of(targets, sb, sizeof sb), (long long)lt_tensor_size(scores, 0),
                        shape_of(scores, sa, sizeof sa));
    if (!lt_device_equal(lt_tensor_device(scores), lt_tensor_device(targets))) {
        char da[32], db[32];
        return lt_error(LT_ERR_DEVICE, "%s: input is on %s but targets are on %s", op,
                        lt_device_str(lt_tensor_device(scores), da, sizeof da),
                        lt_device_str(lt_tensor_device(targets), db, sizeof db));
    }
    if (lt_tensor_size(scores, 1) < 1)
        return lt_error(LT_ERR_SHAPE, "%s: input has shape %s, expected at least one class", op,
                        shape_of(scores, sa, sizeof sa));
    return check_target_values(op, targets, lt_tensor_size(scores, 1));
}

/* -mean_n logp[n, targets[n]] */
static lt_tensor *mean_nll(lt_tensor *log_probs, lt_tensor *targets)
{
    lt_tensor *picked = lt_gather(log_probs, 1, lt_unsqueeze(targets, 1));
    return lt_neg(lt_mean(picked, NULL, 0, false));
}

/* Hands r to the caller's scope and closes the function's own scope. */
static lt_tensor *keep_and_close(lt_tensor *r)
{
    if (r)
        r = lt_keep(r);
    lt_scope_end();
    return r;
}

lt_tensor *lt_cross_entropy(lt_tensor *logits, lt_tensor *targets, double label_smoothing)
{
    const char *op = "cross_entropy";
    if (check_class_inputs(op, logits, targets) != LT_OK)
        return NULL;
    if (!(label_smoothing >= 0.0 && label_smoothing < 1.0)) {
        lt_error(LT_ERR_ARGUMENT, "%s: label_smoothing is %g, expected a value in [0, 1)", op, label_smoothing);
        return NULL;
    }
    lt_scope_begin();
    lt_origin caller = lt_origin_enter(op); /* a lazy run-time failure names cross_entropy */
    lt_tensor *logp = lt_log_softmax(logits, 1);
    lt_tensor *loss = mean_nll(logp, targets);
    if (label_smoothing > 0.0) {
        lt_tensor *smooth = lt_neg(lt_mean(logp, NULL, 0, false));
        loss = lt_add(lt_mul_scalar(loss, 1.0 - label_smoothing), lt_mul_scalar(smooth, label_smoothing));
    }
    lt_origin_restore(caller);
    return keep_and_close(loss);
}

lt_tensor *lt_nll_loss(lt_tensor *log_probs, lt_tensor *targets)
{
    if (check_class_inputs("nll_loss", log_probs, targets) != LT_OK)
        return NULL;
    lt_scope_begin();
    lt_origin caller = lt_origin_enter("nll_loss");
    lt_tensor *loss = mean_nll(log_probs, targets);
    lt_origin_restore(caller);
    return keep_and_close(loss);
}

lt_tensor *lt_mse_loss(lt_tensor *input, lt_tensor *target)
{
    const char *op = "mse_loss";
    if (lt_check_tensor(op, input, 0) != LT_OK || lt_check_tensor(op, target, 1) != LT_OK)
        return NULL;
    lt_dtype a = lt_tensor_dtype(input), b = lt_tensor_dtype(target);
    if (!lt_dtype_is_floating(a) || !lt_dtype_is_floating(b)) {
        lt_error(LT_ERR_DTYPE, "%s: input and target have dtypes %s and %s, expected floating dtypes", op,
                 lt_dtype_name(a), lt_dtype_name(b));
        return NULL;
    }
    if (!lt_shape_equal(lt_tensor_shape(input), lt_tensor_ndim(input), lt_tensor_shape(target),
                        lt_tensor_ndim(target))) {
        char sa[SHAPE_BUF], sb[SHAPE_BUF];
        lt_error(LT_ERR_SHAPE, "%s: input has shape %s and target %s, expected equal shapes", op,
                 shape_of(input, sa, sizeof sa), shape_of(target, sb, sizeof sb));
        return NULL;
    }
    lt_scope_begin();
    lt_origin caller = lt_origin_enter(op); /* its ops are named by mse_loss (compile causes) */
    lt_tensor *diff = lt_sub(input, target);
    lt_tensor *loss = lt_mean(lt_mul(diff, diff), NULL, 0, false);
    lt_origin_restore(caller);
    return keep_and_close(loss);
}
