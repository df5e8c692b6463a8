/*
 * loss_ext.c - the regression, binary and embedding losses and the
 * distance functions of torch.nn.functional, written with public tensor
 * ops (PyTorch's own formulas), so they run on every device, fuse into one
 * or two kernels on the lazy device and autograd differentiates them:
 *
 *   l1            |x - y|
 *   smooth_l1     d < beta ? 0.5 d^2 / beta : d - 0.5 beta       (d = |x - y|)
 *   huber         d < delta ? 0.5 d^2 : delta (d - 0.5 delta)
 *   bce           -w (y max(log x, -100) + (1 - y) max(log(1 - x), -100))
 *   bce_logits    w ((1 - y) x + (1 + (pw - 1) y) log(1 + exp(-x)))
 *   kl_div        xlogy(y, y) - y x, or exp(y) (y - x) for a log target
 *   margin_rank   max(0, -y (x1 - x2) + margin)
 *   cosine_embed  y = 1: 1 - cos;  y = -1: max(0, cos - margin)
 *                 cos = sum(x1 x2) / sqrt((|x1|^2 + 1e-12)(|x2|^2 + 1e-12))
 *
 * and cosine_similarity (sum(x1 x2) / sqrt(max(|x1|^2 |x2|^2, eps^2))),
 * pairwise_distance (|x1 - x2 + eps|_p over the last dim) and normalize
 * (x / max(|x|_p, eps)). Each loss then takes the mean, the sum, nothing,
 * or (kl_div) the sum over the batch size.
 */
#include "lazy/lazy.h"
#include "api/compose.h"
#include "nn/nn_internal.h"

#include <math.h>

#define SHAPE_BUF 160

static lt_tensor *reduce_loss(lt_tensor *loss, lt_loss_reduction reduction)
{
    switch (reduction) {
    case LT_LOSS_MEAN:
        return lt_mean(loss, NULL, 0, false);
    case LT_LOSS_SUM:
        return lt_sum(loss, NULL, 0, false);
    case LT_LOSS_BATCHMEAN: {
        int64_t batch = lt_tensor_ndim(loss) > 0 ? lt_tensor_size(loss, 0) : 1;
        return lt_div_scalar(lt_sum(loss, NULL, 0, false), (double)batch);
    }
    default:
        return loss;
    }
}

static lt_status check_reduction(const char *op, lt_loss_reduction r, bool batchmean_ok)
{
    if (r == LT_LOSS_MEAN || r == LT_LOSS_SUM || r == LT_LOSS_NONE || (batchmean_ok && r == LT_LOSS_BATCHMEAN))
        return LT_OK;
    return lt_error(LT_ERR_ARGUMENT, "%s: reduction %d is not one of %s", op, (int)r,
                    batchmean_ok ? "LT_LOSS_MEAN, LT_LOSS_SUM, LT_LOSS_NONE, LT_LOSS_BATCHMEAN"
                                 : "LT_LOSS_MEAN, LT_LOSS_SUM, LT_LOSS_NONE");
}

/* t (argument `index` of op, called `name`) is a floating tensor. */
static lt_status check_floating(const char *op, lt_tensor *t, int index, const char *name)
{
    if (lt_check_tensor(op, t, index) != LT_OK)
        return lt_last_status();
    lt_dtype dt = lt_tensor_dtype(t);
    if (!lt_dtype_is_floating(dt))
        return lt_error(LT_ERR_DTYPE, "%s: %s has dtype %s, expected a floating dtype", op, name, lt_dtype_name(dt));
    return LT_OK;
}

/* a and b are floating tensors of one shape (torch warns and broadcasts;
 * a mismatch is almost always a bug, so it is refused as mse_loss does). */
static lt_status check_pair(const char *op, lt_tensor *a, lt_tensor *b, const char *na, const char *nb)
{
    if (check_floating(op, a, 0, na) != LT_OK || check_floating(op, b, 1, nb) != LT_OK)
        return lt_last_status();
    if (!lt_shape_equal(lt_tensor_shape(a), lt_tensor_ndim(a), lt_tensor_shape(b), lt_tensor_ndim(b))) {
        char sa[SHAPE_BUF], sb[SHAPE_BUF];
        return lt_error(LT_ERR_SHAPE, "%s: %s has shape %s and %s %s, expected equal shapes", op, na,
                        lt_shape_str(lt_tensor_shape(a), lt_tensor_ndim(a), sa, sizeof sa), nb,
                        lt_shape_str(lt_tensor_shape(b), lt_tensor_ndim(b), sb, sizeof sb));
    }
    return LT_OK;
}

static lt_status check_finite(const char *op, const char *name, double v, bool nonnegative)
{
    if (isfinite(v) && (!nonnegative || v >= 0))
        return LT_OK;
    return lt_error(LT_ERR_ARGUMENT, "%s: %s is %g, expected a finite%s number", op, name, v,
                    nonnegative ? " non-negative" : "");
}

/* ---- regression losses ---------------------------------------------------- */

lt_tensor *lt_l1_loss(lt_tensor *input, lt_tensor *target, lt_loss_reduction reduction)
{
    const char *op = "l1_loss";
    if (check_pair(op, input, target, "input", "target") != LT_OK || check_reduction(op, reduction, false) != LT_OK)
        return NULL;
    lt_scope_begin();
    lt_origin caller = lt_origin_enter(op);
    return lt_scope_return_from(reduce_loss(lt_abs(lt_sub(input, target)), reduction), caller);
}

/* 0.5 d^2 / scale below the threshold, d - 0.5 threshold above it, times
 * `factor`: smooth_l1 is (beta, beta, 1), huber (delta, 1, delta). */
static lt_tensor *piecewise_quadratic(lt_tensor *input, lt_tensor *target, double threshold, double scale,
                                      double factor)
{
    lt_tensor *d = lt_abs(lt_sub(input, target));
    lt_tensor *quadratic = lt_div_scalar(lt_mul_scalar(lt_mul(d, d), 0.5), scale);
    lt_tensor *linear = lt_mul_scalar(lt_sub_scalar(d, 0.5 * threshold), factor);
    return lt_where(lt_lt_scalar(d, threshold), quadratic, linear);
}

lt_tensor *lt_smooth_l1_loss(lt_tensor *input, lt_tensor *target, lt_loss_reduction reduction, double beta)
{
    const char *op = "smooth_l1_loss";
    if (check_pair(op, input, target, "input", "target") != LT_OK || check_reduction(op, reduction, false) != LT_OK ||
        check_finite(op, "beta", beta, true) != LT_OK)
        return NULL;
    if (beta == 0) /* torch: plain l1 (the quadratic part would divide by 0) */
        return lt_l1_loss(input, target, reduction);
    lt_scope_begin();
    lt_origin caller = lt_origin_enter(op);
    return lt_scope_return_from(reduce_loss(piecewise_quadratic(input, target, beta, beta, 1.0), reduction), caller);
}

lt_tensor *lt_huber_loss(lt_tensor *input, lt_tensor *target, lt_loss_reduction reduction, double delta)
{
    const char *op = "huber_loss";
    if (check_pair(op, input, target, "input", "target") != LT_OK || check_reduction(op, reduction, false) != LT_OK ||
        check_finite(op, "delta", delta, true) != LT_OK)
        return NULL;
    if (delta == 0) {
        lt_error(LT_ERR_ARGUMENT, "%s: delta is 0, expected a positive number", op);
        return NULL;
    }
    lt_scope_begin();
    lt_origin caller = lt_origin_enter(op);
    return lt_scope_return_from(reduce_loss(piecewise_quadratic(input, target, delta, 1.0, delta), reduction), caller);
}

/* ---- binary cross entropy ------------------------------------------------- */

/* weight (NULL allowed) broadcasts to the shape of like, like stays. */
static lt_status check_weight(const char *op, lt_tensor *weight, lt_tensor *like, int index, const char *name)
{
    if (!weight)
        return LT_OK;
    if (check_floating(op, weight, index, name) != LT_OK)
        return lt_last_status();
    int wn = lt_tensor_ndim(weight), ln = lt_tensor_ndim(like);
    bool fits = wn <= ln;
    for (int k = 1; fits && k <= wn; k++) {
        int64_t w = lt_tensor_size(weight, wn - k), l = lt_tensor_size(like, ln - k);
        fits = w == 1 || w == l;
    }
    if (!fits) {
        char sw[SHAPE_BUF], sl[SHAPE_BUF];
        return lt_error(LT_ERR_SHAPE, "%s: %s has shape %s, expected a shape that broadcasts to the input's %s", op,
                        name, lt_shape_str(lt_tensor_shape(weight), wn, sw, sizeof sw),
                        lt_shape_str(lt_tensor_shape(like), ln, sl, sizeof sl));
    }
    return LT_OK;
}

static lt_tensor *weighted(lt_tensor *loss, lt_tensor *weight) { return weight ? lt_mul(loss, weight) : loss; }

lt_tensor *lt_binary_cross_entropy(lt_tensor *input, lt_tensor *target, lt_tensor *weight,
                                   lt_loss_reduction reduction)
{
    const char *op = "binary_cross_entropy";
    if (check_pair(op, input, target, "input", "target") != LT_OK || check_weight(op, weight, input, 2, "weight") ||
        check_reduction(op, reduction, false) != LT_OK)
        return NULL;
    lt_scope_begin();
    lt_origin caller = lt_origin_enter(op);
    /* torch clamps each log at -100, so that 0 and 1 give finite losses */
    lt_tensor *log_p = lt_clamp(lt_log(input), -100.0, INFINITY);
    lt_tensor *log_q = lt_clamp(lt_log(lt_rsub_scalar(input, 1.0)), -100.0, INFINITY);
    lt_tensor *pos = lt_mul(target, log_p), *neg = lt_mul(lt_rsub_scalar(target, 1.0), log_q);
    lt_tensor *loss = weighted(lt_neg(lt_add(pos, neg)), weight);
    return lt_scope_return_from(reduce_loss(loss, reduction), caller);
}

lt_tensor *lt_binary_cross_entropy_with_logits(lt_tensor *input, lt_tensor *target, lt_tensor *weight,
                                               lt_tensor *pos_weight, lt_loss_reduction reduction)
{
    const char *op = "binary_cross_entropy_with_logits";
    if (check_pair(op, input, target, "input", "target") != LT_OK || check_weight(op, weight, input, 2, "weight") ||
        check_weight(op, pos_weight, input, 3, "pos_weight") || check_reduction(op, reduction, false) != LT_OK)
        return NULL;
    lt_scope_begin();
    lt_origin caller = lt_origin_enter(op);
    /* log(1 + exp(-x)) as -logsigmoid(x): it never overflows, and its
     * gradient is right at x = 0 (a composition with |x| and max(-x, 0)
     * has a kink there, and zero logits are common at initialization) */
    lt_tensor *softplus_neg = lt_neg(lt_logsigmoid(input));
    lt_tensor *log_weight =
        pos_weight ? lt_add_scalar(lt_mul(lt_sub_scalar(pos_weight, 1.0), target), 1.0) : NULL;
    lt_tensor *scaled = log_weight ? lt_mul(log_weight, softplus_neg) : softplus_neg;
    lt_tensor *loss = weighted(lt_add(lt_mul(lt_rsub_scalar(target, 1.0), input), scaled), weight);
    return lt_scope_return_from(reduce_loss(loss, reduction), caller);
}

/* ---- kl_div, margin ranking ----------------------------------------------- */

lt_tensor *lt_kl_div(lt_tensor *input, lt_tensor *target, lt_loss_reduction reduction, bool log_target)
{
    const char *op = "kl_div";
    if (check_pair(op, input, target, "input", "target") != LT_OK || check_reduction(op, reduction, true) != LT_OK)
        return NULL;
    lt_scope_begin();
    lt_origin caller = lt_origin_enter(op);
    lt_tensor *loss = log_target ? lt_mul(lt_exp(target), lt_sub(target, input))
                                 : lt_sub(lt_xlogy(target, target), lt_mul(target, input));
    return lt_scope_return_from(reduce_loss(loss, reduction), caller);
}

lt_tensor *lt_margin_ranking_loss(lt_tensor *x1, lt_tensor *x2, lt_tensor *y, double margin,
                                  lt_loss_reduction reduction)
{
    const char *op = "margin_ranking_loss";
    if (check_pair(op, x1, x2, "x1", "x2") != LT_OK || check_weight(op, y, x1, 2, "y") != LT_OK ||
        check_finite(op, "margin", margin, false) != LT_OK || check_reduction(op, reduction, false) != LT_OK)
        return NULL;
    lt_scope_begin();
    lt_origin caller = lt_origin_enter(op);
    lt_tensor *loss = lt_relu(lt_add_scalar(lt_neg(lt_mul(y, lt_sub(x1, x2))), margin));
    return lt_scope_return_from(reduce_loss(loss, reduction), caller);
}

/* ---- cosine similarity and embedding loss --------------------------------- */

static lt_tensor *sum_over(lt_tensor *t, int dim) { return lt_sum(t, &dim, 1, false); }

lt_tensor *lt_cosine_similarity(lt_tensor *x1, lt_tensor *x2, int dim, double eps)
{
    const char *op = "cosine_similarity";
    if (check_floating(op, x1, 0, "x1") != LT_OK || check_floating(op, x2, 1, "x2") != LT_OK ||
        check_finite(op, "eps", eps, true) != LT_OK)
        return NULL;
    lt_scope_begin();
    lt_origin caller = lt_origin_enter(op);
    /* both operands at their broadcast shape, which dim indexes */
    lt_tensor *product = lt_mul(x1, x2), *r = NULL;
    if (product) {
        int nd = lt_tensor_ndim(product);
        lt_tensor *a = lt_expand(x1, lt_tensor_shape(product), nd), *b = lt_expand(x2, lt_tensor_shape(product), nd);
        int d = dim < 0 ? dim + nd : dim;
        if (d < 0 || d >= nd)
            lt_error(LT_ERR_ARGUMENT, "%s: dim %d is out of range for the inputs' broadcast %d-d shape", op, dim, nd);
        else
            r = lt_div(sum_over(product, d),
                       lt_sqrt(lt_clamp(lt_mul(sum_over(lt_mul(a, a), d), sum_over(lt_mul(b, b), d)), eps * eps,
                                        INFINITY)));
    }
    return lt_scope_return_from(r, caller);
}

lt_tensor *lt_cosine_embedding_loss(lt_tensor *x1, lt_tensor *x2, lt_tensor *y, double margin,
                                    lt_loss_reduction reduction)
{
    const char *op = "cosine_embedding_loss";
    if (check_pair(op, x1, x2, "x1", "x2") != LT_OK || check_floating(op, y, 2, "y") != LT_OK ||
        check_finite(op, "margin", margin, false) != LT_OK || check_reduction(op, reduction, false) != LT_OK)
        return NULL;
    int nd = lt_tensor_ndim(x1);
    bool shapes_ok = (nd == 1 && lt_tensor_ndim(y) == 0) ||
                     (nd == 2 && lt_tensor_ndim(y) == 1 && lt_tensor_size(y, 0) == lt_tensor_size(x1, 0));
    if (!shapes_ok) {
        char sx[SHAPE_BUF], sy[SHAPE_BUF];
        lt_error(LT_ERR_SHAPE, "%s: x1 and x2 have shape %s and y %s, expected [N, D] with y [N], or [D] with a 0-d y",
                 op, lt_shape_str(lt_tensor_shape(x1), nd, sx, sizeof sx),
                 lt_shape_str(lt_tensor_shape(y), lt_tensor_ndim(y), sy, sizeof sy));
        return NULL;
    }
    lt_scope_begin();
    lt_origin caller = lt_origin_enter(op);
    const double tiny = 1e-12; /* torch's EPSILON for this loss */
    int last = nd - 1;
    lt_tensor *dot = sum_over(lt_mul(x1, x2), last);
    lt_tensor *m1 = lt_add_scalar(sum_over(lt_mul(x1, x1), last), tiny);
    lt_tensor *m2 = lt_add_scalar(sum_over(lt_mul(x2, x2), last), tiny);
    lt_tensor *cos = lt_div(dot, lt_sqrt(lt_mul(m1, m2)));
    lt_tensor *zero = lt_zeros_like(cos);
    lt_tensor *similar = lt_where(lt_eq_scalar(y, 1), lt_rsub_scalar(cos, 1.0), zero);
    lt_tensor *apart = lt_where(lt_eq_scalar(y, -1), lt_relu(lt_sub_scalar(cos, margin)), zero);
    return lt_scope_return_from(reduce_loss(lt_add(similar, apart), reduction), caller);
}

/* ---- distances ---------------------------------------------------------- */

lt_tensor *lt_pairwise_distance(lt_tensor *x1, lt_tensor *x2, double p, double eps, bool keepdim)
{
    const char *op = "pairwise_distance";
    if (check_floating(op, x1, 0, "x1") != LT_OK || check_floating(op, x2, 1, "x2") != LT_OK ||
        check_finite(op, "eps", eps, false) != LT_OK)
        return NULL;
    if (!(p >= 0) || isnan(p)) {
        lt_error(LT_ERR_ARGUMENT, "%s: p is %g, expected p >= 0", op, p);
        return NULL;
    }
    lt_scope_begin();
    lt_origin caller = lt_origin_enter(op);
    lt_tensor *diff = lt_add_scalar(lt_sub(x1, x2), eps);
    int nd = diff ? lt_tensor_ndim(diff) : 0;
    int last = nd > 0 ? nd - 1 : 0;
    lt_tensor *r = nd > 0 ? lt_vector_norm(diff, p, &last, 1, keepdim) : lt_vector_norm(diff, p, NULL, 0, false);
    return lt_scope_return_from(r, caller);
}

lt_tensor *lt_normalize(lt_tensor *x, double p, int dim, double eps)
{
    const char *op = "normalize";
    if (check_floating(op, x, 0, "x") != LT_OK || check_finite(op, "eps", eps, true) != LT_OK)
        return NULL;
    if (!(p >= 0) || isnan(p)) {
        lt_error(LT_ERR_ARGUMENT, "%s: p is %g, expected p >= 0", op, p);
        return NULL;
    }
    int nd = lt_tensor_ndim(x) > 0 ? lt_tensor_ndim(x) : 1, d = dim < 0 ? dim + nd : dim;
    if (d < 0 || d >= nd) {
        lt_error(LT_ERR_ARGUMENT, "%s: dim %d is out of range for a %d-d tensor", op, dim,
                        lt_tensor_ndim(x));
        return NULL;
    }
    lt_scope_begin();
    lt_origin caller = lt_origin_enter(op);
    lt_tensor *norm = lt_tensor_ndim(x) > 0 ? lt_vector_norm(x, p, &d, 1, true) : lt_vector_norm(x, p, NULL, 0, false);
    return lt_scope_return_from(lt_div(x, lt_clamp(norm, eps, INFINITY)), caller);
}
