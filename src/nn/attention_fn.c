/*
 * attention_fn.c - scaled dot-product attention and embedding with
 * padding_idx and max_norm, torch.nn.functional's definitions written with
 * public ops (traced and fused on the lazy device, differentiated by
 * autograd):
 *
 *   sdpa(q, k, v) = dropout(softmax(q k^T scale + bias)) v
 *     scale 1 / sqrt(E) unless given; bias -inf where a bool mask is false
 *     or above the diagonal (causal), or an additive float mask.
 *
 *   embedding: rows of weight; the padding row's gradient is 0 (the output
 *     is taken from a detached copy there). With max_norm, every row that
 *     the indices reference and whose p-norm exceeds max_norm is scaled in
 *     place, before the lookup, by max_norm / (norm + 1e-7), as torch's
 *     embedding_renorm_.
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

/* ---- scaled dot-product attention --------------------------------------------- */

static lt_status check_qkv(const char *op, lt_tensor *const *qkv)
{
    static const char *names[3] = {"query", "key", "value"};
    char sb[SHAPE_BUF];
    for (int i = 0; i < 3; i++) {
        if (lt_check_tensor(op, qkv[i], i) != LT_OK)
            return lt_last_status();
        lt_dtype dt = lt_tensor_dtype(qkv[i]);
        if (!lt_dtype_is_floating(dt) || dt != lt_tensor_dtype(qkv[0]))
            return lt_error(LT_ERR_DTYPE, "%s: %s has dtype %s, expected a floating dtype shared by query, key and "
                            "value (query: %s)", op, names[i], lt_dtype_name(dt), lt_dtype_name(lt_tensor_dtype(qkv[0])));
        if (lt_tensor_ndim(qkv[i]) < 2)
            return lt_error(LT_ERR_SHAPE, "%s: %s has shape %s, expected at least 2 dims [..., L, E]", op, names[i],
                            shape_of(qkv[i], sb, sizeof sb));
        if (!lt_device_equal(lt_tensor_device(qkv[i]), lt_tensor_device(qkv[0])))
            return lt_error(LT_ERR_DEVICE, "%s: %s is on another device than query", op, names[i]);
    }
    char sq[SHAPE_BUF], sk[SHAPE_BUF], sv[SHAPE_BUF];
    if (lt_tensor_size(qkv[0], -1) != lt_tensor_size(qkv[1], -1) || lt_tensor_size(qkv[1], -2) != lt_tensor_size(qkv[2], -2))
        return lt_error(LT_ERR_SHAPE, "%s: query %s, key %s and value %s, expected query [..., L, E], key [..., S, E] "
                        "and value [..., S, Ev]", op, shape_of(qkv[0], sq, sizeof sq), shape_of(qkv[1], sk, sizeof sk),
                        shape_of(qkv[2], sv, sizeof sv));
    return LT_OK;
}

/* The mask is bool or the query's dtype, and its last two dims broadcast
 * to [L, S]. */
static lt_status check_mask(const char *op, lt_tensor *mask, lt_tensor *q, lt_tensor *k, bool causal)
{
    if (!mask)
        return LT_OK;
    if (lt_check_tensor(op, mask, 3) != LT_OK)
        return lt_last_status();
    if (causal)
        return lt_error(LT_ERR_ARGUMENT, "%s: a mask and causal were both given, expected one of them", op);
    lt_dtype dt = lt_tensor_dtype(mask);
    if (dt != LT_BOOL && dt != lt_tensor_dtype(q))
        return lt_error(LT_ERR_DTYPE, "%s: mask has dtype %s, expected bool or the query's %s", op, lt_dtype_name(dt),
                        lt_dtype_name(lt_tensor_dtype(q)));
    int nd = lt_tensor_ndim(mask), qnd = lt_tensor_ndim(q), knd = lt_tensor_ndim(k);
    int64_t l = lt_tensor_size(q, -2), s = lt_tensor_size(k, -2);
    int64_t ml = nd >= 2 ? lt_tensor_size(mask, -2) : 1, ms = nd >= 1 ? lt_tensor_size(mask, -1) : 1;
    char sb[SHAPE_BUF];
    if (nd > (qnd > knd ? qnd : knd) || (ml != 1 && ml != l) || (ms != 1 && ms != s))
        return lt_error(LT_ERR_SHAPE, "%s: mask has shape %s, expected a shape that broadcasts to the scores' [..., "
                        "%lld, %lld]", op, shape_of(mask, sb, sizeof sb), (long long)l, (long long)s);
    if (!lt_device_equal(lt_tensor_device(mask), lt_tensor_device(q)))
        return lt_error(LT_ERR_DEVICE, "%s: mask is on another device than query", op);
    return LT_OK;
}

/* scores with the causal mask or the given mask applied. */
static lt_tensor *masked_scores(lt_tensor *scores, lt_tensor *mask, bool causal)
{
    if (causal) {
        int64_t ls[2] = {lt_tensor_size(scores, -2), lt_tensor_size(scores, -1)};
        lt_tensor *above = lt_triu(lt_ones(ls, 2, LT_BOOL, lt_tensor_device(scores)), 1);
        return lt_masked_fill(scores, above, -INFINITY);
    }
    if (!mask)
        return scores;
    if (lt_tensor_dtype(mask) != LT_BOOL)
        return lt_add(scores, mask);
    /* where broadcasts both: the mask's batch sizes may exceed the scores' */
    lt_tensor *neg_inf = lt_full_like(scores, -INFINITY);
    return lt_where(mask, scores, neg_inf);
}

lt_tensor *lt_scaled_dot_product_attention(lt_tensor *q, lt_tensor *k, lt_tensor *v, lt_tensor *mask,
                                           double dropout_p, bool causal, double scale)
{
    const char *op = "scaled_dot_product_attention";
    if (check_qkv(op, (lt_tensor *[]){q, k, v}) != LT_OK || check_mask(op, mask, q, k, causal) != LT_OK)
        return NULL;
    if (!(dropout_p >= 0.0 && dropout_p <= 1.0)) {
        lt_error(LT_ERR_ARGUMENT, "%s: dropout_p is %g, expected a probability in [0, 1]", op, dropout_p);
        return NULL;
    }
    if (isinf(scale)) {
        lt_error(LT_ERR_ARGUMENT, "%s: scale is %g, expected a finite value (NAN for 1 / sqrt(E))", op, scale);
        return NULL;
    }
    if (isnan(scale))
        scale = 1.0 / sqrt((double)lt_tensor_size(q, -1));
    lt_scope_begin();
    lt_origin caller = lt_origin_enter(op);
    lt_tensor *scores = lt_mul_scalar(lt_matmul(q, lt_transpose(k, -2, -1)), scale);
    lt_tensor *attn = lt_softmax(masked_scores(scores, mask, causal), -1);
    if (dropout_p > 0.0)
        attn = lt_dropout(attn, dropout_p, true);
    return lt_scope_return_from(lt_matmul(attn, v), caller);
}

/* ---- embedding with padding_idx and max_norm ------------------------------------ */

static lt_status check_embedding(const char *op, lt_tensor *weight, lt_tensor *indices, int64_t *padding_idx,
                                 double max_norm, double norm_type)
{
    if (lt_check_tensor(op, weight, 0) != LT_OK || lt_check_tensor(op, indices, 1) != LT_OK)
        return lt_last_status();
    char sb[SHAPE_BUF];
    if (lt_tensor_ndim(weight) != 2 || !lt_dtype_is_floating(lt_tensor_dtype(weight)))
        return lt_error(LT_ERR_SHAPE, "%s: weight is %s %s, expected a floating [num, dim] matrix", op,
                        lt_dtype_name(lt_tensor_dtype(weight)), shape_of(weight, sb, sizeof sb));
    lt_dtype idt = lt_tensor_dtype(indices);
    if (idt != LT_I64 && idt != LT_I32)
        return lt_error(LT_ERR_DTYPE, "%s: indices have dtype %s, expected i64 or i32", op, lt_dtype_name(idt));
    int64_t num = lt_tensor_size(weight, 0);
    if (*padding_idx != LT_NO_PADDING) {
        if (*padding_idx < -num || *padding_idx >= num)
            return lt_error(LT_ERR_ARGUMENT, "%s: padding_idx is %lld, expected a row in [%lld, %lld) or "
                            "LT_NO_PADDING", op, (long long)*padding_idx, (long long)-num, (long long)num);
        if (*padding_idx < 0)
            *padding_idx += num;
    }
    if (!isnan(max_norm) && !(max_norm >= 0.0 && isfinite(max_norm)))
        return lt_error(LT_ERR_ARGUMENT, "%s: max_norm is %g, expected a finite value >= 0 (NAN: none)", op,
                        max_norm);
    if (!isnan(max_norm) && !(norm_type > 0.0))
        return lt_error(LT_ERR_ARGUMENT, "%s: norm_type is %g, expected a value > 0", op, norm_type);
    if (!lt_device_equal(lt_tensor_device(weight), lt_tensor_device(indices)))
        return lt_error(LT_ERR_DEVICE, "%s: indices are on another device than weight", op);
    return LT_OK;
}

/* Scales the rows of weight that indices reference down to max_norm, in
 * place and without gradient. */
static bool renorm_rows(lt_tensor *weight, lt_tensor *indices, double max_norm, double norm_type)
{
    lt_no_grad_begin();
    int64_t n = lt_tensor_numel(indices);
    lt_tensor *flat = lt_reshape(indices, &n, 1);
    lt_tensor *rows = lt_index_select(weight, 0, flat);
    int row_dim = 1;
    lt_tensor *norms = lt_norm(rows, norm_type, &row_dim, 1, true);
    lt_tensor *factor = lt_where(lt_gt_scalar(norms, max_norm),
                                 lt_reciprocal(lt_div_scalar(lt_add_scalar(norms, 1e-7), max_norm)),
                                 lt_ones_like(norms));
    bool ok = lt_index_copy_(weight, 0, flat, lt_mul(rows, factor)) != NULL;
    lt_no_grad_end();
    return ok;
}

lt_tensor *lt_embedding_ext(lt_tensor *weight, lt_tensor *indices, int64_t padding_idx, double max_norm,
                            double norm_type)
{
    const char *op = "embedding";
    if (check_embedding(op, weight, indices, &padding_idx, max_norm, norm_type) != LT_OK)
        return NULL;
    lt_scope_begin();
    lt_origin caller = lt_origin_enter(op);
    if (!isnan(max_norm) && lt_tensor_numel(indices) > 0 && !renorm_rows(weight, indices, max_norm, norm_type))
        return lt_scope_return_from(NULL, caller);
    lt_tensor *out = lt_embedding(weight, indices);
    if (out && padding_idx != LT_NO_PADDING) {
        lt_tensor *pad = lt_unsqueeze(lt_eq_scalar(indices, (double)padding_idx), -1);
        out = lt_where(pad, lt_detach(out), out);
    }
    return lt_scope_return_from(out, caller);
}
