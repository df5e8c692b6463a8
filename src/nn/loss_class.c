/*
 * loss_class.c - torch.nn.functional's cross_entropy and nll_loss with
 * every option: class weights, ignore_index, reduction, label smoothing and
 * (cross_entropy) probability targets, for inputs [N, C, d1, ...] or an
 * unbatched [C]. Written with public ops, so they trace and fuse on the
 * lazy device and autograd differentiates them. lt_cross_entropy keeps its
 * own short path (loss.c); these are PyTorch's full definitions:
 *
 * class targets t (i64 or i32, shape of the input without dim C):
 *   valid_i = t_i != ignore_index,  w_i = valid_i * weight[t_i]  (weight 1)
 *   nll_i   = -w_i logp[i, t_i]
 *   smooth_i = -valid_i sum_c weight[c] logp[i, c]
 *   loss_i  = (1 - ls) nll_i + ls / C smooth_i
 *   mean    = sum_i loss_i / sum_i w_i          (NaN when every target is
 *                                                ignored, as torch)
 * probability targets p (floating, the input's shape):
 *   q       = (1 - ls) p + ls / C
 *   loss_i  = -sum_c weight[c] q[i, c] logp[i, c]
 *   mean    = sum_i loss_i / (numel / C)
 *
 * cross_entropy's logp is log_softmax over the class dim; nll_loss takes
 * log-probabilities as they are. Targets on the cpu are checked against [0,
 * C) (or ignore_index); on the lazy device the gather kernel reports an out
 * of range class when the graph runs.
 */
#include "lazy/lazy.h"
#include "nn/nn_internal.h"

#include <math.h>
#include <stdlib.h>

#define SHAPE_BUF 160

typedef struct class_loss {
    const char *op;
    lt_tensor *input, *target, *weight;
    int64_t ignore_index;
    lt_loss_reduction reduction;
    double smoothing;
    int class_dim;   /* 1, or 0 for an unbatched [C] input */
    int64_t classes;
    bool probs;      /* probability targets */
} class_loss;

static const char *shape_of(lt_tensor *t, char *buf, size_t cap)
{
    return lt_shape_str(lt_tensor_shape(t), lt_tensor_ndim(t), buf, cap);
}

/* ---- validation ----------------------------------------------------------- */

/* The target shape class indices need: the input's without the class dim. */
static int index_target_shape(const class_loss *c, int64_t *dims)
{
    int nd = 0;
    for (int d = 0; d < lt_tensor_ndim(c->input); d++)
        if (d != c->class_dim)
            dims[nd++] = lt_tensor_size(c->input, d);
    return nd;
}

static lt_status check_target_shape(const class_loss *c)
{
    char si[SHAPE_BUF], st[SHAPE_BUF], sw[SHAPE_BUF];
    const int64_t *ts = lt_tensor_shape(c->target);
    int tnd = lt_tensor_ndim(c->target);
    if (c->probs) {
        if (lt_tensor_dtype(c->target) != lt_tensor_dtype(c->input))
            return lt_error(LT_ERR_DTYPE, "%s: probability targets have dtype %s, expected the input's %s", c->op,
                            lt_dtype_name(lt_tensor_dtype(c->target)), lt_dtype_name(lt_tensor_dtype(c->input)));
        if (lt_shape_equal(ts, tnd, lt_tensor_shape(c->input), lt_tensor_ndim(c->input)))
            return LT_OK;
        return lt_error(LT_ERR_SHAPE, "%s: probability targets have shape %s, expected the input's %s", c->op,
                        shape_of(c->target, st, sizeof st), shape_of(c->input, si, sizeof si));
    }
    int64_t want[LT_MAX_DIMS];
    int nd = index_target_shape(c, want);
    if (lt_shape_equal(ts, tnd, want, nd))
        return LT_OK;
    return lt_error(LT_ERR_SHAPE, "%s: targets have shape %s, expected %s for input %s (class dim %d removed)",
                    c->op, shape_of(c->target, st, sizeof st), lt_shape_str(want, nd, sw, sizeof sw),
                    shape_of(c->input, si, sizeof si), c->class_dim);
}

static lt_status check_weight(const class_loss *c)
{
    if (!c->weight)
        return LT_OK;
    if (lt_check_tensor(c->op, c->weight, 2) != LT_OK)
        return lt_last_status();
    char sw[SHAPE_BUF];
    if (lt_tensor_dtype(c->weight) != lt_tensor_dtype(c->input))
        return lt_error(LT_ERR_DTYPE, "%s: weight has dtype %s, expected the input's %s", c->op,
                        lt_dtype_name(lt_tensor_dtype(c->weight)), lt_dtype_name(lt_tensor_dtype(c->input)));
    if (lt_tensor_ndim(c->weight) != 1 || lt_tensor_size(c->weight, 0) != c->classes)
        return lt_error(LT_ERR_SHAPE, "%s: weight has shape %s, expected [%lld] (one per class)", c->op,
                        shape_of(c->weight, sw, sizeof sw), (long long)c->classes);
    if (!lt_device_equal(lt_tensor_device(c->weight), lt_tensor_device(c->input)))
        return lt_error(LT_ERR_DEVICE, "%s: weight is on another device than the input", c->op);
    return LT_OK;
}

/* Checks cpu class targets against [0, C) or ignore_index. */
static lt_status check_target_values(const class_loss *c)
{
    if (c->probs || lt_tensor_device(c->target).kind != LT_DEVICE_CPU)
        return LT_OK;
    int64_t n = lt_tensor_numel(c->target);
    int64_t *v = malloc((size_t)(n > 0 ? n : 1) * sizeof *v);
    if (!v)
        return lt_error(LT_ERR_MEMORY, "%s: out of memory", c->op);
    lt_scope_begin();
    lt_status s = lt_copy_to_host(lt_to_dtype(c->target, LT_I64), v, (size_t)(n > 0 ? n : 1) * sizeof *v);
    lt_scope_end();
    for (int64_t i = 0; i < n && s == LT_OK; i++)
        if (v[i] != c->ignore_index && (v[i] < 0 || v[i] >= c->classes))
            s = lt_error(LT_ERR_INDEX, "%s: target %lld at flat position %lld is out of range, expected a class "
                         "in [0, %lld) or ignore_index %lld", c->op, (long long)v[i], (long long)i,
                         (long long)c->classes, (long long)c->ignore_index);
    free(v);
    return s;
}

static lt_status check_class_loss(class_loss *c, bool probs_allowed)
{
    const char *op = c->op;
    if (lt_check_tensor(op, c->input, 0) != LT_OK || lt_check_tensor(op, c->target, 1) != LT_OK)
        return lt_last_status();
    char si[SHAPE_BUF];
    lt_dtype idt = lt_tensor_dtype(c->input), tdt = lt_tensor_dtype(c->target);
    if (!lt_dtype_is_floating(idt))
        return lt_error(LT_ERR_DTYPE, "%s: input has dtype %s, expected a floating dtype", op, lt_dtype_name(idt));
    if (lt_tensor_ndim(c->input) < 1)
        return lt_error(LT_ERR_SHAPE, "%s: input has shape %s, expected [C] or [N, C, ...]", op,
                        shape_of(c->input, si, sizeof si));
    c->class_dim = lt_tensor_ndim(c->input) == 1 ? 0 : 1;
    c->classes = lt_tensor_size(c->input, c->class_dim);
    c->probs = lt_dtype_is_floating(tdt);
    if (c->probs && !probs_allowed)
        return lt_error(LT_ERR_DTYPE, "%s: targets have dtype %s, expected class indices (i64 or i32)", op,
                        lt_dtype_name(tdt));
    if (!c->probs && tdt != LT_I64 && tdt != LT_I32)
        return lt_error(LT_ERR_DTYPE, "%s: targets have dtype %s, expected class indices (i64 or i32)%s", op,
                        lt_dtype_name(tdt), probs_allowed ? " or probabilities (the input's dtype)" : "");
    if (!lt_device_equal(lt_tensor_device(c->input), lt_tensor_device(c->target)))
        return lt_error(LT_ERR_DEVICE, "%s: targets are on another device than the input", op);
    if (c->classes < 1)
        return lt_error(LT_ERR_SHAPE, "%s: input has shape %s, expected at least one class", op,
                        shape_of(c->input, si, sizeof si));
    if (c->reduction != LT_LOSS_MEAN && c->reduction != LT_LOSS_SUM && c->reduction != LT_LOSS_NONE)
        return lt_error(LT_ERR_ARGUMENT, "%s: reduction %d is not one of LT_LOSS_MEAN, LT_LOSS_SUM, LT_LOSS_NONE",
                        op, (int)c->reduction);
    if (!(c->smoothing >= 0.0 && c->smoothing <= 1.0))
        return lt_error(LT_ERR_ARGUMENT, "%s: label_smoothing is %g, expected a value in [0, 1]", op,
                        c->smoothing);
    if (c->probs && c->ignore_index >= 0) /* as torch: a class to ignore makes no sense here */
        return lt_error(LT_ERR_ARGUMENT, "%s: ignore_index is %lld with probability targets, expected a negative "
                        "value (not used)", op, (long long)c->ignore_index);
    if (check_target_shape(c) != LT_OK || check_weight(c) != LT_OK)
        return lt_last_status();
    return check_target_values(c);
}

/* ---- the losses ------------------------------------------------------------- */

/* weight as [1, C, 1, ...] (or [C]), broadcasting against the input. */
static lt_tensor *class_weight_view(const class_loss *c)
{
    int64_t dims[LT_MAX_DIMS];
    int nd = lt_tensor_ndim(c->input);
    for (int d = 0; d < nd; d++)
        dims[d] = d == c->class_dim ? c->classes : 1;
    return lt_reshape(c->weight, dims, nd);
}

static lt_tensor *reduce_sum(lt_tensor *t) { return lt_sum(t, NULL, 0, false); }

/* sum_c logp * factor over the class dim (factor NULL: 1). */
static lt_tensor *class_sum(const class_loss *c, lt_tensor *logp, lt_tensor *factor)
{
    lt_tensor *terms = factor ? lt_mul(logp, factor) : logp;
    if (c->weight)
        terms = lt_mul(terms, class_weight_view(c));
    int dim = c->class_dim;
    return lt_neg(lt_sum(terms, &dim, 1, false));
}

/* total / weight_sum; with every target ignored (weight_sum 0) NaN, as
 * torch, but with a zero gradient (torch's too): the NaN is added as a
 * constant to total / 1. */
static lt_tensor *weighted_mean(lt_tensor *total, lt_tensor *weight_sum)
{
    lt_tensor *empty = lt_eq_scalar(weight_sum, 0.0);
    lt_tensor *nan_if_empty = lt_masked_fill(lt_zeros_like(weight_sum), empty, NAN);
    return lt_add(lt_div(total, lt_masked_fill(weight_sum, empty, 1.0)), nan_if_empty);
}

static lt_tensor *index_loss(const class_loss *c, lt_tensor *logp)
{
    lt_tensor *ignored = lt_eq_scalar(c->target, (double)c->ignore_index);
    lt_tensor *safe = lt_masked_fill(c->target, ignored, 0.0); /* ignored positions pick class 0 */
    int dim = c->class_dim;
    lt_tensor *picked = lt_squeeze(lt_gather(logp, dim, lt_unsqueeze(safe, dim)), dim);
    lt_tensor *w;
    if (c->weight) {
        int64_t n = lt_tensor_numel(safe);
        lt_tensor *flat = lt_index_select(c->weight, 0, lt_reshape(safe, &n, 1));
        w = lt_masked_fill(lt_reshape(flat, lt_tensor_shape(safe), lt_tensor_ndim(safe)), ignored, 0.0);
    } else {
        w = lt_to_dtype(lt_logical_not(ignored), lt_tensor_dtype(logp));
    }
    lt_tensor *loss = lt_neg(lt_mul(picked, w));
    if (c->smoothing > 0.0) {
        lt_tensor *smooth = lt_masked_fill(class_sum(c, logp, NULL), ignored, 0.0);
        loss = lt_add(lt_mul_scalar(loss, 1.0 - c->smoothing),
                      lt_mul_scalar(smooth, c->smoothing / (double)c->classes));
    }
    if (c->reduction == LT_LOSS_NONE)
        return loss;
    lt_tensor *total = reduce_sum(loss);
    return c->reduction == LT_LOSS_SUM ? total : weighted_mean(total, reduce_sum(w));
}

static lt_tensor *prob_loss(const class_loss *c, lt_tensor *logp)
{
    lt_tensor *q = c->target;
    if (c->smoothing > 0.0)
        q = lt_add_scalar(lt_mul_scalar(q, 1.0 - c->smoothing), c->smoothing / (double)c->classes);
    lt_tensor *loss = class_sum(c, logp, q);
    if (c->reduction == LT_LOSS_NONE)
        return loss;
    lt_tensor *total = reduce_sum(loss);
    if (c->reduction == LT_LOSS_SUM)
        return total;
    return lt_div_scalar(total, (double)(lt_tensor_numel(c->input) / c->classes));
}

/* Runs the loss in its own scope under the op's name. */
static lt_tensor *class_loss_run(const class_loss *c, bool log_softmax_first)
{
    lt_scope_begin();
    lt_origin caller = lt_origin_enter(c->op);
    lt_tensor *logp = log_softmax_first ? lt_log_softmax(c->input, c->class_dim) : c->input;
    lt_tensor *r = c->probs ? prob_loss(c, logp) : index_loss(c, logp);
    lt_origin_restore(caller);
    if (r)
        r = lt_keep(r);
    lt_scope_end();
    return r;
}

lt_tensor *lt_cross_entropy_ext(lt_tensor *input, lt_tensor *target, lt_tensor *weight, int64_t ignore_index,
                                lt_loss_reduction reduction, double label_smoothing)
{
    class_loss c = {.op = "cross_entropy", .input = input, .target = target, .weight = weight,
                    .ignore_index = ignore_index, .reduction = reduction, .smoothing = label_smoothing};
    if (check_class_loss(&c, true) != LT_OK)
        return NULL;
    return class_loss_run(&c, true);
}

lt_tensor *lt_nll_loss_ext(lt_tensor *input, lt_tensor *target, lt_tensor *weight, int64_t ignore_index,
                           lt_loss_reduction reduction)
{
    class_loss c = {.op = "nll_loss", .input = input, .target = target, .weight = weight,
                    .ignore_index = ignore_index, .reduction = reduction};
    if (check_class_loss(&c, false) != LT_OK)
        return NULL;
    return class_loss_run(&c, false);
}
