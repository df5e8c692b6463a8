/*
 * sample.c - multinomial sampling (torch.multinomial), written with public
 * tensor ops so that it runs on every device.
 *
 * Both forms use the Gumbel-max trick: with g = -log(-log(u)) for uniform
 * u, argmax_j (log p_j + g_j) is category j with probability p_j / sum(p).
 * With replacement every sample draws its own g ([N, S, K] numbers); without
 * replacement one draw per row, and the num_samples largest keys (topk)
 * are a sample without replacement, in the order drawn. No normalization is
 * needed, so any positive scale of a row is the same distribution, and a
 * category of probability 0 (key -inf) is never drawn.
 *
 * The probabilities are checked (finite, not negative, each row with
 * enough positive entries) when they live on the cpu. On the lazy device
 * that check would force a barrier; there an invalid row gives indices
 * that are in range but meaningless, as the header documents.
 */
#include "lazy/lazy.h"
#include "nn/nn_internal.h"

#include <math.h>

/* The shape and dtype rules; probs2 receives probs as [N, K]. */
static lt_status check_sample_args(lt_tensor *probs, int64_t num_samples, bool replacement)
{
    if (lt_check_tensor("multinomial", probs, 0) != LT_OK)
        return lt_last_status();
    char s[160];
    int nd = lt_tensor_ndim(probs);
    const int64_t *shape = lt_tensor_shape(probs);
    if (nd != 1 && nd != 2)
        return lt_error(LT_ERR_SHAPE, "multinomial: probabilities of shape %s, expected [K] or [N, K]",
                        lt_shape_str(shape, nd, s, sizeof s));
    if (!lt_dtype_is_floating(lt_tensor_dtype(probs)))
        return lt_error(LT_ERR_DTYPE, "multinomial: probabilities of dtype %s, expected a floating dtype",
                        lt_dtype_name(lt_tensor_dtype(probs)));
    int64_t k = shape[nd - 1];
    if (k < 1)
        return lt_error(LT_ERR_SHAPE, "multinomial: probabilities of shape %s have no category",
                        lt_shape_str(shape, nd, s, sizeof s));
    if (num_samples < 1)
        return lt_error(LT_ERR_ARGUMENT, "multinomial: num_samples is %lld, expected at least 1",
                        (long long)num_samples);
    if (!replacement && num_samples > k)
        return lt_error(LT_ERR_ARGUMENT, "multinomial: %lld samples without replacement from %lld categories, "
                        "expected at most %lld", (long long)num_samples, (long long)k, (long long)k);
    return LT_OK;
}

/* Row r of a cpu [N, K] tensor holds a distribution to draw `need`
 * distinct categories from (or one, with replacement). */
static lt_status check_cpu_values(lt_tensor *p2, int64_t need)
{
    if (lt_tensor_device(p2).kind != LT_DEVICE_CPU)
        return LT_OK;
    lt_tensor *f = lt_to_dtype(p2, LT_F64);
    if (!f)
        return lt_last_status();
    const int64_t *shape = lt_tensor_shape(f), *st = lt_tensor_strides(f);
    const double *v = lt_tensor_data(f);
    for (int64_t r = 0; r < shape[0]; r++) {
        int64_t positive = 0;
        for (int64_t j = 0; j < shape[1]; j++) {
            double x = v[r * st[0] + j * st[1]];
            if (!(x >= 0) || isinf(x))
                return lt_error(LT_ERR_ARGUMENT, "multinomial: probability [%lld, %lld] is %g, expected a finite "
                                "value >= 0", (long long)r, (long long)j, x);
            positive += x > 0;
        }
        if (positive < need)
            return lt_error(LT_ERR_ARGUMENT, "multinomial: row %lld has %lld categories of positive probability, "
                            "expected at least %lld", (long long)r, (long long)positive, (long long)need);
    }
    return LT_OK;
}

/* Gumbel noise -log(-log(u)) of the given shape, on dev, in dtype dt. */
static lt_tensor *gumbel(const int64_t *dims, int nd, lt_dtype dt, lt_device dev)
{
    return lt_neg(lt_log(lt_neg(lt_log(lt_rand(dims, nd, dt, dev)))));
}

static lt_tensor *draw(lt_tensor *p2, int64_t num_samples, bool replacement)
{
    const int64_t *shape = lt_tensor_shape(p2);
    int64_t n = shape[0], k = shape[1];
    lt_dtype dt = lt_tensor_dtype(p2) == LT_F64 ? LT_F64 : LT_F32;
    lt_device dev = lt_tensor_device(p2);
    lt_tensor *logp = lt_log(lt_to_dtype(p2, dt));
    if (replacement) {
        int64_t dims[3] = {n, num_samples, k};
        lt_tensor *keys = lt_add(lt_unsqueeze(logp, 1), gumbel(dims, 3, dt, dev));
        return lt_argmax(keys, 2, false);
    }
    int64_t dims[2] = {n, k};
    lt_tensor *indices = NULL;
    lt_topk(lt_add(logp, gumbel(dims, 2, dt, dev)), num_samples, 1, true, &indices);
    return indices;
}

lt_tensor *lt_multinomial(lt_tensor *probs, int64_t num_samples, bool replacement)
{
    if (check_sample_args(probs, num_samples, replacement) != LT_OK)
        return NULL;
    lt_scope_begin();
    lt_origin caller = lt_origin_enter("multinomial");
    bool one_row = lt_tensor_ndim(probs) == 1;
    lt_tensor *p2 = one_row ? lt_unsqueeze(probs, 0) : probs;
    lt_tensor *r = NULL;
    if (p2 && check_cpu_values(p2, replacement ? 1 : num_samples) == LT_OK) {
        r = draw(p2, num_samples, replacement);
        if (r && one_row)
            r = lt_squeeze(r, 0);
    }
    lt_origin_restore(caller);
    if (r)
        r = lt_keep(r);
    lt_scope_end();
    return r;
}
