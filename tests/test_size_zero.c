/* test_size_zero.c - size 0 is a real size: every op on shapes with a
 * size-0 dim (often next to size-1 dims) gives the right shape and values
 * on the cpu device, and the lazy device agrees with it on both backends
 * (interp, and cpu: fused generated C). Reductions over no element give
 * their identity (sum 0, prod 1, all true, any false, logsumexp -inf) or
 * NaN (mean, var, std); the ones without an identity (amax, argmax, max
 * along a dim) fail alike on every device. Named regressions of the
 * compiled backend with size-0 dims are in test_compiler_regress.c. */
#include "lt_test.h"

#include <unistd.h>

/* Deterministic inputs, created on the host and moved to the device under
 * test (as the parity test does). */
static lt_tensor *input(lt_device dev, const int64_t *dims, int ndim, lt_dtype dt, double scale, double shift)
{
    int64_t n = 1;
    for (int i = 0; i < ndim; i++)
        n *= dims[i];
    double *v = malloc(sizeof *v * (size_t)(n ? n : 1));
    for (int64_t i = 0; i < n; i++) {
        double x = sin((double)i * 0.731 + shift) * scale;
        v[i] = dt == LT_BOOL ? (x > 0) : lt_dtype_is_floating(dt) ? x : floor(x);
    }
    lt_tensor *c = lt_test_tensor(v, dims, ndim, dt);
    free(v);
    return lt_to(c, dev);
}

#define D(...) (const int64_t[]){__VA_ARGS__}, (int)(sizeof((const int64_t[]){__VA_ARGS__}) / sizeof(int64_t))
#define F(...) input(dev, D(__VA_ARGS__), LT_F32, 2.0, 0.3)
#define G(...) input(dev, D(__VA_ARGS__), LT_F32, 1.5, 1.1)
#define I(...) input(dev, D(__VA_ARGS__), LT_I64, 5.0, 0.4)
#define IDX0 lt_zeros((int64_t[]){0}, 1, LT_I64, dev)
#define DIMS(...) (int[]){__VA_ARGS__}, (int)(sizeof((int[]){__VA_ARGS__}) / sizeof(int))

typedef lt_tensor *(*case_fn)(lt_device dev);
#define CASE(name, expr) \
    static lt_tensor *case_##name(lt_device dev) { return (expr); }

/* ---- elementwise -------------------------------------------------------- */
CASE(neg, lt_neg(F(2, 0, 3)))
CASE(exp, lt_exp(F(1, 0, 1, 4)))
CASE(abs_int, lt_abs(I(0, 4)))
CASE(relu_sigmoid, lt_sigmoid(lt_relu(F(3, 0))))
CASE(cast_bf16, lt_to_dtype(F(2, 0, 3), LT_BF16))
CASE(cast_int_float, lt_to_dtype(I(0, 1, 3), LT_F64))
CASE(add_row, lt_add(F(2, 0, 3), G(3)))
CASE(mul_outer, lt_mul(F(2, 0, 1), G(1, 4)))
CASE(add_0x1_1x5, lt_add(F(0, 1), G(1, 5)))
CASE(add_3x1_1x0, lt_add(F(3, 1), G(1, 0)))
CASE(sub_scaled, lt_sub_scaled(F(4, 0), G(1, 0), 0.25))
CASE(add_scalar, lt_add_scalar(F(0), 1.5))
CASE(where, lt_where(lt_gt(F(0, 3), G(3)), F(0, 3), G(3)))
CASE(compare, lt_logical_and(lt_eq(I(2, 0), I(1, 0)), lt_ne(F(2, 0), G(2, 1))))
CASE(masked_fill, lt_masked_fill(F(3, 0), lt_lt(G(3, 0), lt_scalar(0, LT_F32, dev)), 2.0))
CASE(clamp_int, lt_clamp(I(0, 3), -1, 1))
CASE(pow, lt_pow(lt_abs(F(0, 2)), G(2)))
CASE(maximum_u8, lt_maximum(lt_to_dtype(I(2, 0), LT_U8), lt_to_dtype(I(2, 1), LT_U8)))
CASE(remainder_int, lt_remainder(I(0, 3), lt_scalar(3, LT_I64, dev)))
CASE(tril, lt_tril(F(0, 3), 0))
CASE(triu, lt_triu(F(2, 3, 0), 1))
CASE(chain, lt_mul(lt_exp(lt_add_scalar(F(2, 0, 1), 1)), lt_tanh(G(1, 0, 5))))

/* A non-empty result computed in the same barrier as empty ones. */
static lt_tensor *case_mixed_barrier(lt_device dev)
{
    lt_tensor *empty = lt_ones((int64_t[]){0, 64, 64}, 3, LT_F32, dev);
    lt_tensor *neg = lt_neg(lt_zeros((int64_t[]){4, 0, 1, 4, 2}, 5, LT_F64, dev));
    lt_tensor *r = lt_add_scalar(lt_ones((int64_t[]){4}, 1, LT_F32, dev), 2);
    return empty && neg ? r : NULL;
}

/* ---- reductions ---------------------------------------------------------- */
CASE(sum_d0, lt_sum(F(2, 0, 3), DIMS(0), false))
CASE(sum_d1, lt_sum(F(2, 0, 3), DIMS(1), false))
CASE(sum_d2, lt_sum(F(2, 0, 3), DIMS(2), false))
CASE(sum_d1_keep, lt_sum(F(2, 0, 3), DIMS(1), true))
CASE(sum_all, lt_sum(F(2, 0, 3), NULL, 0, false))
CASE(sum_int, lt_sum(I(2, 0, 3), DIMS(1), false))
CASE(sum_unit_dims, lt_sum(F(1, 0, 1), DIMS(0, 2), false))
CASE(sum_unit_keep, lt_sum(F(1, 0, 1), DIMS(1), true))
CASE(sum_then_add, lt_add(lt_sum(F(3, 0), DIMS(1), false), G(3)))
CASE(mean_d1, lt_mean(F(2, 0, 3), DIMS(1), false))
CASE(mean_all, lt_mean(F(0, 4), NULL, 0, false))
CASE(mean_nonempty_of_empty, lt_mean(F(0, 1), DIMS(1), false))
CASE(prod_d1, lt_prod(F(2, 0, 3), DIMS(1), false))
CASE(prod_all, lt_prod(F(0), NULL, 0, false))
CASE(prod_int, lt_prod(I(3, 0), DIMS(-1), false))
CASE(amax_d0, lt_amax(F(0, 3), DIMS(1), false))
CASE(amax_empty, lt_amax(F(2, 0, 3), DIMS(1), false))
CASE(amin_all_empty, lt_amin(F(0, 3), NULL, 0, false))
CASE(argmax_d2, lt_argmax(F(2, 0, 3), 2, false))
CASE(argmax_empty, lt_argmax(F(2, 0, 3), 1, false))
CASE(argmin_empty, lt_argmin(F(3, 0), 1, true))
CASE(max_dim_empty, lt_max_dim(F(3, 0), 1, false, NULL))
CASE(max_dim_d0, lt_max_dim(F(0, 3), 1, true, NULL))
CASE(var_d1, lt_var(F(2, 0, 3), DIMS(1), 1, false))
CASE(std_all, lt_std(F(0, 2), NULL, 0, 0, false))
CASE(var_d2, lt_var(F(2, 0, 3), DIMS(2), 1, true))
CASE(logsumexp_d1, lt_logsumexp(F(2, 0, 3), DIMS(1), false))
CASE(logsumexp_d0, lt_logsumexp(F(0, 3), DIMS(1), false))
CASE(all_empty, lt_all(lt_gt(F(3, 0), G(3, 0)), DIMS(1), false))
CASE(any_empty, lt_any(lt_gt(F(3, 0), G(3, 0)), DIMS(1), false))
CASE(cumsum_d0, lt_cumsum(F(2, 0, 3), 0))
CASE(cumsum_d1, lt_cumsum(F(2, 0, 3), 1))
CASE(cumsum_int, lt_cumsum(I(0, 3), 1))
CASE(softmax_d0, lt_softmax(F(2, 0, 3), 0))
CASE(softmax_d1, lt_softmax(F(2, 0, 3), 1))
CASE(softmax_empty_row, lt_softmax(F(3, 0), 1))
CASE(log_softmax, lt_log_softmax(F(0, 5), 1))

CASE(sum_rows_wide, lt_sum(F(0, 300), DIMS(0), false))
CASE(sum_rows_then_scale, lt_mul(lt_sum(F(0, 70), DIMS(0), true), G(2, 70)))
CASE(sum_of_sum, lt_sum(lt_sum(F(2, 0, 3), DIMS(1), false), DIMS(1), false))
CASE(sum_both_empty, lt_sum(F(0, 0), DIMS(1), false))
CASE(sum_large_empty_dim, lt_add_scalar(lt_sum(F(0, 100000), DIMS(0), false), 1))
CASE(center_rows, lt_sub(F(2, 0), lt_mean(F(2, 0), DIMS(1), true)))
CASE(center_empty_batch, lt_sub(F(0, 4), lt_mean(F(0, 4), DIMS(1), true)))
CASE(var_inline, lt_add_scalar(lt_var(F(4, 0), DIMS(1), 0, false), 1))
CASE(argmax_all_empty, lt_argmax(F(0, 3), 0, false))
CASE(logsumexp_all, lt_logsumexp(F(0), DIMS(0), false))
CASE(all_full_empty, lt_all(F(0, 2), NULL, 0, false))
CASE(any_full_empty, lt_any(F(0, 2), NULL, 0, false))
CASE(bool_sum, lt_sum(lt_gt(F(3, 0), G(3, 0)), DIMS(1), false))

/* ---- factories ----------------------------------------------------------------- */
CASE(arange_empty, lt_add_scalar(lt_arange(0, 0, 1, LT_F32, dev), 1))
CASE(arange_sum, lt_sum(lt_arange(3, 3, 1, LT_I64, dev), NULL, 0, false))
CASE(eye_no_rows, lt_neg(lt_eye(0, 3, LT_F32, dev)))
CASE(eye_no_cols, lt_neg(lt_eye(3, 0, LT_F32, dev)))
CASE(full_empty, lt_mul(lt_full((int64_t[]){0, 2}, 2, 2.5, LT_F32, dev), G(2)))
CASE(rand_empty, lt_mul_scalar(lt_rand((int64_t[]){0, 3}, 2, LT_F32, dev), 2))
CASE(linspace_sum, lt_sum(lt_linspace(0, 1, 0, LT_F64, dev), NULL, 0, false))

/* ---- views ----------------------------------------------------------------- */
CASE(narrow_zero, lt_add_scalar(lt_narrow(F(3, 4), 1, 2, 0), 1))
CASE(select, lt_mul_scalar(lt_select(F(2, 0, 3), 0, 1), 2))
CASE(permute, lt_mul_scalar(lt_permute(F(2, 0, 3), (int[]){2, 0, 1}, 3), 2))
CASE(expand, lt_add(lt_expand(F(1, 0), (int64_t[]){5, 0}, 2), G(5, 0)))
CASE(reshape, lt_neg(lt_reshape(F(2, 0, 3), (int64_t[]){0, 6}, 2)))
CASE(reshape_swap, lt_add(lt_reshape(F(0, 4), (int64_t[]){4, 0}, 2), G(4, 0)))
CASE(view_split, lt_exp(lt_view(F(0), (int64_t[]){2, 0, 5}, 3)))
CASE(reshape_ambiguous, lt_reshape(F(2, 0, 3), (int64_t[]){-1, 0}, 2))
CASE(flatten, lt_flatten(lt_neg(F(2, 0, 3)), 0, 2))
CASE(unsqueeze, lt_add(lt_unsqueeze(F(0, 3), 1), G(1, 3)))
CASE(squeeze_all, lt_mul_scalar(lt_squeeze_all(F(1, 0, 1)), 3))
CASE(diagonal, lt_add_scalar(lt_diagonal(F(0, 3), 0, 0, 1), 1))
CASE(diagonal_3d, lt_neg(lt_diagonal(F(2, 0, 3), 0, 0, 2)))
CASE(slice_step, lt_neg(lt_slice(F(2, 0, 6), 2, 1, 6, 2)))
CASE(slice_empty_range, lt_neg(lt_slice(F(3, 4), 0, 2, 2, 1)))
CASE(transpose_contig, lt_sum(lt_contiguous(lt_transpose(F(3, 0), 0, 1)), DIMS(0), false))

CASE(diagonal_offset_out, lt_neg(lt_diagonal(F(3, 4), 4, 0, 1)))
CASE(diagonal_offset_below, lt_neg(lt_diagonal(F(3, 4), -3, 0, 1)))
CASE(reshape_computed, lt_add(lt_reshape(lt_transpose(F(3, 0, 2), 0, 2), (int64_t[]){0, 6}, 2), G(1, 6)))
CASE(select_of_empty_slice, lt_neg(lt_select(lt_slice(F(4, 3), 0, 3, 3, 1), 1, 2)))
CASE(expand_zero_from_one, lt_add(lt_expand(F(3, 1), (int64_t[]){3, 0}, 2), G(3, 0)))

/* ---- cat, stack, indexing ----------------------------------------------------- */
CASE(cat_empty_piece, lt_cat((lt_tensor *[]){F(2, 3), G(0, 3)}, 2, 0))
CASE(cat_all_empty, lt_cat((lt_tensor *[]){F(0, 3), G(0, 3)}, 2, 0))
CASE(cat_dim1, lt_cat((lt_tensor *[]){F(2, 0), G(2, 3), F(2, 0)}, 3, 1))
CASE(stack, lt_stack((lt_tensor *[]){F(0, 3), G(0, 3)}, 2, 1))
CASE(index_select_empty_index, lt_index_select(F(3, 4), 0, IDX0))
CASE(index_select_empty_dim, lt_index_select(F(3, 0), 0, lt_ones((int64_t[]){2}, 1, LT_I64, dev)))
CASE(gather, lt_gather(F(3, 4), 1, lt_zeros((int64_t[]){3, 0}, 2, LT_I64, dev)))
CASE(scatter, lt_scatter(F(3, 4), 1, lt_zeros((int64_t[]){3, 0}, 2, LT_I64, dev), G(3, 0)))
CASE(embedding, lt_embedding(F(5, 3), IDX0))
CASE(one_hot, lt_one_hot(IDX0, 4))
CASE(sort, lt_sort(F(0, 3), 1, false, NULL))
CASE(topk, lt_topk(F(3, 0), 0, 1, true, NULL))
CASE(nonzero, lt_nonzero(F(0, 3)))

/* ---- matmul, conv, pooling ---------------------------------------------------- */
CASE(mm_m0, lt_matmul(F(0, 3), G(3, 4)))
CASE(mm_n0, lt_matmul(F(2, 3), G(3, 0)))
CASE(mm_k0, lt_matmul(F(2, 0), G(0, 4)))
CASE(mm_k0_epilogue, lt_add_scalar(lt_matmul(F(2, 0), G(0, 4)), 1))
CASE(bmm_batch0, lt_matmul(F(0, 2, 3), G(0, 3, 4)))
CASE(bmm_k0, lt_matmul(F(5, 5, 0), G(0, 5)))
CASE(mv_k0, lt_matmul(F(3, 0), G(0)))
CASE(dot_0, lt_matmul(F(0), G(0)))
CASE(matmul_bcast, lt_matmul(F(2, 1, 0, 3), G(4, 3, 5)))
CASE(matmul_int_k0, lt_matmul(I(2, 0), I(0, 3)))
CASE(conv2d_batch0, lt_conv2d(F(0, 2, 5, 5), G(3, 2, 3, 3), G(3), NULL, NULL, NULL, 1))
CASE(conv2d_no_out_channels, lt_conv2d(F(1, 2, 5, 5), G(0, 2, 3, 3), NULL, NULL, NULL, NULL, 1))
CASE(max_pool_batch0, lt_max_pool2d(F(0, 2, 4, 4), (int64_t[]){2, 2}, NULL, NULL, NULL))
CASE(avg_pool_batch0, lt_avg_pool2d(F(0, 2, 4, 4), (int64_t[]){2, 2}, NULL, NULL, true))

/* ---- losses -------------------------------------------------------------------- */
CASE(cross_entropy, lt_cross_entropy(F(0, 5), IDX0, 0.0))
CASE(nll_loss, lt_nll_loss(lt_log_softmax(F(0, 5), 1), IDX0))
CASE(mse_loss, lt_mse_loss(F(0, 3), G(0, 3)))

/* ---- in-place updates of empty views --------------------------------------------- */
static lt_tensor *case_inplace_narrow(lt_device dev)
{
    lt_tensor *x = lt_clone(F(3, 4));
    lt_add_scalar_(lt_narrow(x, 1, 2, 0), 5);
    lt_mul_(lt_narrow(x, 0, 3, 0), G(0, 4));
    lt_copy_(lt_narrow(x, 1, 0, 0), G(3, 0));
    return x;
}

static lt_tensor *case_inplace_select(lt_device dev)
{
    lt_tensor *x = lt_clone(F(2, 0, 3));
    lt_fill_(lt_select(x, 0, 1), 7);
    lt_neg_(lt_permute(x, (int[]){1, 2, 0}, 3));
    return x;
}

static lt_tensor *case_inplace_broadcast(lt_device dev)
{
    lt_tensor *x = lt_clone(F(1, 0, 4));
    lt_mul_(x, G(4));
    lt_clamp_(x, -1, 1);
    return x;
}

/* The linspace of no point, read by a matmul and then updated in place. */
static lt_tensor *case_inplace_after_matmul(lt_device dev)
{
    lt_tensor *x = lt_linspace(-2, 1, 0, LT_F32, dev);
    lt_tensor *y = lt_matmul(x, x);
    lt_div_scalar_(x, 2.5);
    return lt_add(y, lt_sum(x, NULL, 0, false));
}

/* ---- gradients ------------------------------------------------------------------- */

static lt_tensor *leaf(lt_tensor *t)
{
    return t && lt_set_requires_grad(t, true) == LT_OK ? t : NULL;
}

/* Backward from sum(y); NULL on failure. */
static bool backward_sum(lt_tensor *y)
{
    return y && lt_backward(lt_sum(y, NULL, 0, false), NULL) == LT_OK;
}

/* The gradients of a and b flattened into one tensor (a and b may have no
 * element at all). */
static lt_tensor *grads(lt_tensor *a, lt_tensor *b)
{
    lt_tensor *ga = lt_grad(a), *gb = b ? lt_grad(b) : NULL;
    if (!ga || (b && !gb))
        return NULL;
    lt_tensor *fa = lt_flatten(ga, 0, -1);
    return b ? lt_cat((lt_tensor *[]){fa, lt_flatten(gb, 0, -1)}, 2, 0) : fa;
}

#define GRAD_CASE(name, x_expr, y_expr) \
    static lt_tensor *case_##name(lt_device dev) \
    { \
        lt_tensor *x = leaf(x_expr); \
        return x && backward_sum(y_expr) ? lt_grad(x) : NULL; \
    }

GRAD_CASE(grad_mul, F(0, 3), lt_mul_scalar(x, 2))
GRAD_CASE(grad_mean_empty, F(3, 0), lt_mean(x, DIMS(1), false))
GRAD_CASE(grad_prod_empty, F(3, 0), lt_prod(x, DIMS(1), false))
GRAD_CASE(grad_logsumexp_empty, F(3, 0), lt_logsumexp(x, DIMS(1), false))
GRAD_CASE(grad_var_empty_rows, F(0, 3), lt_var(x, DIMS(1), 1, false))
GRAD_CASE(grad_amax_no_rows, F(0, 3), lt_amax(x, DIMS(1), false))
GRAD_CASE(grad_softmax_rows, F(0, 3), lt_mul(lt_softmax(x, 1), G(0, 3)))
GRAD_CASE(grad_softmax_empty_row, F(3, 0), lt_softmax(x, 1))
GRAD_CASE(grad_cumsum, F(2, 0), lt_cumsum(x, 1))
GRAD_CASE(grad_expand, F(1, 0), lt_expand(x, (int64_t[]){5, 0}, 2))
GRAD_CASE(grad_index_select, F(3, 4), lt_index_select(x, 0, IDX0))
GRAD_CASE(grad_cross_entropy, F(0, 5), lt_cross_entropy(x, IDX0, 0.1))
GRAD_CASE(grad_reshape, F(2, 0, 3), lt_exp(lt_reshape(x, (int64_t[]){0, 6}, 2)))

GRAD_CASE(grad_max_pool_batch0, F(0, 2, 4, 4), lt_max_pool2d(x, (int64_t[]){2, 2}, NULL, NULL, NULL))
GRAD_CASE(grad_max_pool_no_channels, F(2, 0, 4, 4), lt_max_pool2d(x, (int64_t[]){2, 2}, NULL, NULL, NULL))
GRAD_CASE(grad_avg_pool_tiles, F(0, 2, 4, 4), lt_avg_pool2d(x, (int64_t[]){2, 2}, NULL, NULL, true))
GRAD_CASE(grad_avg_pool_padded, F(0, 2, 5, 5),
          lt_avg_pool2d(x, (int64_t[]){3, 3}, (int64_t[]){2, 2}, (int64_t[]){1, 1}, false))
GRAD_CASE(grad_conv_strided, F(0, 2, 6, 6),
          lt_conv2d(x, G(3, 2, 3, 3), G(3), (int64_t[]){2, 2}, (int64_t[]){1, 1}, NULL, 1))
GRAD_CASE(grad_conv_groups_weight, G(4, 1, 3, 3),
          lt_conv2d(F(0, 2, 5, 5), x, NULL, NULL, (int64_t[]){1, 1}, NULL, 2))
GRAD_CASE(grad_embedding, F(5, 3), lt_embedding(x, IDX0))
GRAD_CASE(grad_gather, F(3, 4), lt_gather(x, 1, lt_zeros((int64_t[]){3, 0}, 2, LT_I64, dev)))
GRAD_CASE(grad_where, F(0, 3), lt_where(lt_gt(x, G(3)), x, G(0, 3)))
GRAD_CASE(grad_select, F(2, 0, 3), lt_select(x, 2, 1))
GRAD_CASE(grad_slice_empty, F(4, 3), lt_slice(x, 0, 1, 1, 1))
GRAD_CASE(grad_diagonal, F(0, 3), lt_diagonal(x, 0, 0, 1))
GRAD_CASE(grad_std, F(2, 0, 3), lt_std(x, DIMS(0), 1, false))
GRAD_CASE(grad_sum_empty_dim, F(3, 0), lt_mul(lt_sum(x, DIMS(1), true), G(3, 2)))
GRAD_CASE(grad_mse, F(0, 3), lt_mse_loss(x, G(0, 3)))

static lt_tensor *case_grad_cat(lt_device dev)
{
    lt_tensor *a = leaf(F(2, 3)), *b = leaf(G(0, 3));
    return a && b && backward_sum(lt_mul(lt_cat((lt_tensor *[]){a, b}, 2, 0), F(2, 3))) ? grads(a, b) : NULL;
}

static lt_tensor *case_grad_mm_k0(lt_device dev)
{
    lt_tensor *a = leaf(F(5, 5, 0)), *b = leaf(G(0, 5));
    return a && b && backward_sum(lt_matmul(a, b)) ? grads(a, b) : NULL;
}

static lt_tensor *case_grad_mm_k0_a(lt_device dev)
{
    lt_tensor *a = leaf(F(5, 5, 0)), *b = leaf(G(0, 5));
    return a && b && backward_sum(lt_matmul(a, b)) ? lt_grad(a) : NULL;
}

static lt_tensor *case_grad_mv_k0(lt_device dev)
{
    lt_tensor *a = leaf(F(3, 0)), *b = leaf(G(0));
    return a && b && backward_sum(lt_matmul(a, b)) ? grads(a, b) : NULL;
}

static lt_tensor *case_grad_vm_k0(lt_device dev)
{
    lt_tensor *a = leaf(F(0)), *b = leaf(G(0, 5));
    return a && b && backward_sum(lt_matmul(a, b)) ? grads(a, b) : NULL;
}

/* a Linear-style product with the weight's transpose: a column-major b */
static lt_tensor *case_grad_linear_k0(lt_device dev)
{
    lt_tensor *a = leaf(F(3, 0)), *w = leaf(G(5, 0));
    return a && w && backward_sum(lt_matmul(a, lt_transpose(w, 0, 1))) ? grads(a, w) : NULL;
}

static lt_tensor *case_grad_mm_m0(lt_device dev)
{
    lt_tensor *a = leaf(F(0, 3)), *b = leaf(G(3, 4));
    return a && b && backward_sum(lt_matmul(a, b)) ? grads(a, b) : NULL;
}

static lt_tensor *case_grad_bmm_m0(lt_device dev)
{
    lt_tensor *a = leaf(F(2, 0, 3)), *b = leaf(G(3, 4));
    return a && b && backward_sum(lt_matmul(a, b)) ? grads(a, b) : NULL;
}

static lt_tensor *case_grad_conv_batch0(lt_device dev)
{
    lt_tensor *x = leaf(F(0, 2, 5, 5)), *w = leaf(G(3, 2, 3, 3));
    return x && w && backward_sum(lt_conv2d(x, w, NULL, NULL, NULL, NULL, 1)) ? grads(x, w) : NULL;
}

/* Gradients of every parameter of module m (flattened, in order) and of
 * the input x, after backward from sum(m(x)); the module is freed. */
static lt_tensor *module_grads(lt_module *m, lt_tensor *x)
{
    lt_tensor *params[8], *parts[9];
    int n = m && x ? lt_module_parameters(m, params, NULL, 8) : -1;
    lt_tensor *r = NULL;
    if (n >= 0 && n < 8 && backward_sum(lt_module_forward(m, x))) {
        bool ok = true;
        for (int i = 0; i < n && ok; i++)
            ok = (parts[i] = lt_grad(params[i])) != NULL && (parts[i] = lt_flatten(parts[i], 0, -1)) != NULL;
        parts[n] = lt_grad(x) ? lt_flatten(lt_grad(x), 0, -1) : NULL;
        if (ok && parts[n])
            r = lt_to(lt_cat(parts, n + 1, 0), lt_device_cpu()); /* before the module dies */
    }
    lt_module_free(m);
    return r;
}

static lt_tensor *case_grad_linear_batch0(lt_device dev)
{
    lt_manual_seed(7);
    return module_grads(lt_nn_linear(3, 2, true, dev), leaf(F(0, 3)));
}

static lt_tensor *case_grad_layer_norm_batch0(lt_device dev)
{
    return module_grads(lt_nn_layer_norm(1, 1e-5, dev), leaf(F(0, 1)));
}

static lt_tensor *case_grad_layer_norm_rows0(lt_device dev)
{
    return module_grads(lt_nn_layer_norm(4, 1e-5, dev), leaf(F(2, 0, 4)));
}

static lt_tensor *case_grad_attention_seq0(lt_device dev)
{
    lt_manual_seed(11);
    return module_grads(lt_nn_self_attention(8, 2, true, dev), leaf(F(2, 0, 8)));
}

static lt_tensor *case_grad_attention_batch0(lt_device dev)
{
    lt_manual_seed(12);
    return module_grads(lt_nn_self_attention(4, 1, false, dev), leaf(F(0, 3, 4)));
}

static lt_tensor *case_grad_batch_norm_batch0(lt_device dev)
{
    return module_grads(lt_nn_batch_norm2d(3, 1e-5, dev), leaf(F(0, 3, 4, 4)));
}

static lt_tensor *case_dropout_empty(lt_device dev)
{
    lt_manual_seed(13);
    lt_module *m = lt_nn_dropout(0.5);
    lt_tensor *y = m ? lt_module_forward(m, F(2, 0, 3)) : NULL;
    lt_tensor *r = y ? lt_to(y, lt_device_cpu()) : NULL;
    lt_module_free(m);
    return r;
}

/* One optimizer step from the gradients of an empty batch: only weight
 * decay and momentum-free terms move the parameters. */
static lt_tensor *optimizer_step(lt_device dev, bool adam)
{
    lt_manual_seed(14);
    lt_module *lin = lt_nn_linear(3, 2, true, dev);
    lt_tensor *p[2];
    if (!lin || lt_module_parameters(lin, p, NULL, 2) != 2) {
        lt_module_free(lin);
        return NULL;
    }
    lt_optimizer *o = adam ? lt_optim_adam(p, 2, 0.1, 0.9, 0.999, 1e-8, 0.01, true)
                           : lt_optim_sgd(p, 2, 0.1, 0.9, 0.01, false);
    lt_tensor *r = NULL;
    if (o && backward_sum(lt_module_forward(lin, F(0, 3))) && lt_optim_step(o) == LT_OK)
        r = lt_to(lt_cat((lt_tensor *[]){lt_flatten(p[0], 0, -1), p[1]}, 2, 0), lt_device_cpu());
    lt_optim_free(o);
    lt_module_free(lin);
    return r;
}

static lt_tensor *case_sgd_step_batch0(lt_device dev) { return optimizer_step(dev, false); }
static lt_tensor *case_adam_step_batch0(lt_device dev) { return optimizer_step(dev, true); }

/* ---- the table ---------------------------------------------------------------- */

enum { ANY, FILL, FAIL };

typedef struct zcase {
    const char *name;
    case_fn fn;
    int ndim;
    int64_t shape[LT_MAX_DIMS];
    int expect;       /* ANY: values from the cpu device; FILL: every element is value; FAIL: an error */
    double value;
    const char *needle; /* FAIL: in the message on every device */
} zcase;

#define NDIM(...) (int)(sizeof((int64_t[]){__VA_ARGS__}) / sizeof(int64_t))
#define Z(name, ...) {#name, case_##name, NDIM(__VA_ARGS__), {__VA_ARGS__}, ANY, 0, NULL}
#define ZF(name, v, ...) {#name, case_##name, NDIM(__VA_ARGS__), {__VA_ARGS__}, FILL, v, NULL}
#define Z0(name, v) {#name, case_##name, 0, {0}, FILL, v, NULL}
#define ZE(name, needle) {#name, case_##name, 0, {0}, FAIL, 0, needle}

static const zcase cases[] = {
    Z(neg, 2, 0, 3), Z(exp, 1, 0, 1, 4), Z(abs_int, 0, 4), Z(relu_sigmoid, 3, 0), Z(cast_bf16, 2, 0, 3),
    Z(cast_int_float, 0, 1, 3), Z(add_row, 2, 0, 3), Z(mul_outer, 2, 0, 4), Z(add_0x1_1x5, 0, 5),
    Z(add_3x1_1x0, 3, 0), Z(sub_scaled, 4, 0), Z(add_scalar, 0), Z(where, 0, 3), Z(compare, 2, 0),
    Z(masked_fill, 3, 0), Z(clamp_int, 0, 3), Z(pow, 0, 2), Z(maximum_u8, 2, 0), Z(remainder_int, 0, 3),
    Z(tril, 0, 3), Z(triu, 2, 3, 0), Z(chain, 2, 0, 5), ZF(mixed_barrier, 3.0, 4),
    /* reductions */
    Z(sum_d0, 0, 3), ZF(sum_d1, 0.0, 2, 3), Z(sum_d2, 2, 0), ZF(sum_d1_keep, 0.0, 2, 1, 3), Z0(sum_all, 0.0),
    ZF(sum_int, 0.0, 2, 3), Z(sum_unit_dims, 0), ZF(sum_unit_keep, 0.0, 1, 1, 1), Z(sum_then_add, 3),
    ZF(mean_d1, NAN, 2, 3), Z0(mean_all, NAN), Z(mean_nonempty_of_empty, 0), ZF(prod_d1, 1.0, 2, 3),
    Z0(prod_all, 1.0), ZF(prod_int, 1.0, 3), Z(amax_d0, 0), ZE(amax_empty, "no identity"),
    ZE(amin_all_empty, "no identity"), Z(argmax_d2, 2, 0), ZE(argmax_empty, "size 0"),
    ZE(argmin_empty, "size 0"), ZE(max_dim_empty, "size 0"), Z(max_dim_d0, 0, 1), ZF(var_d1, NAN, 2, 3),
    Z0(std_all, NAN), Z(var_d2, 2, 0, 1), ZF(logsumexp_d1, -INFINITY, 2, 3), Z(logsumexp_d0, 0),
    ZF(all_empty, 1.0, 3), ZF(any_empty, 0.0, 3), Z(cumsum_d0, 2, 0, 3), Z(cumsum_d1, 2, 0, 3),
    Z(cumsum_int, 0, 3), Z(softmax_d0, 2, 0, 3), Z(softmax_d1, 2, 0, 3), Z(softmax_empty_row, 3, 0),
    Z(log_softmax, 0, 5),
    ZF(sum_rows_wide, 0.0, 300), ZF(sum_rows_then_scale, 0.0, 2, 70), ZF(sum_of_sum, 0.0, 2), Z(sum_both_empty, 0),
    ZF(sum_large_empty_dim, 1.0, 100000), Z(center_rows, 2, 0), Z(center_empty_batch, 0, 4), ZF(var_inline, NAN, 4),
    ZE(argmax_all_empty, "size 0"), Z0(logsumexp_all, -INFINITY), Z0(all_full_empty, 1.0), Z0(any_full_empty, 0.0),
    ZF(bool_sum, 0.0, 3),
    /* factories */
    Z(arange_empty, 0), Z0(arange_sum, 0.0), Z(eye_no_rows, 0, 3), Z(eye_no_cols, 3, 0), Z(full_empty, 0, 2),
    Z(rand_empty, 0, 3), Z0(linspace_sum, 0.0),
    /* views */
    Z(narrow_zero, 3, 0), Z(select, 0, 3), Z(permute, 3, 2, 0), Z(expand, 5, 0), Z(reshape, 0, 6),
    Z(reshape_swap, 4, 0), Z(view_split, 2, 0, 5), ZE(reshape_ambiguous, "ambiguous"), Z(flatten, 0),
    Z(unsqueeze, 0, 1, 3), Z(squeeze_all, 0), Z(diagonal, 0), Z(diagonal_3d, 0, 2), Z(slice_step, 2, 0, 3),
    Z(slice_empty_range, 0, 4), Z(transpose_contig, 3),
    Z(diagonal_offset_out, 0), Z(diagonal_offset_below, 0), Z(reshape_computed, 0, 6), Z(select_of_empty_slice, 0),
    Z(expand_zero_from_one, 3, 0),
    /* cat, stack, indexing */
    Z(cat_empty_piece, 2, 3), Z(cat_all_empty, 0, 3), Z(cat_dim1, 2, 3), Z(stack, 0, 2, 3),
    Z(index_select_empty_index, 0, 4), Z(index_select_empty_dim, 2, 0), Z(gather, 3, 0), Z(scatter, 3, 4),
    Z(embedding, 0, 3), Z(one_hot, 0, 4), Z(sort, 0, 3), Z(topk, 3, 0), Z(nonzero, 0, 2),
    /* matmul, conv, pooling */
    Z(mm_m0, 0, 4), Z(mm_n0, 2, 0), ZF(mm_k0, 0.0, 2, 4), ZF(mm_k0_epilogue, 1.0, 2, 4), Z(bmm_batch0, 0, 2, 4),
    ZF(bmm_k0, 0.0, 5, 5, 5), ZF(mv_k0, 0.0, 3), Z0(dot_0, 0.0), Z(matmul_bcast, 2, 4, 0, 5),
    ZF(matmul_int_k0, 0.0, 2, 3), Z(conv2d_batch0, 0, 3, 3, 3), ZE(conv2d_no_out_channels, "0 output channels"),
    Z(max_pool_batch0, 0, 2, 2, 2), Z(avg_pool_batch0, 0, 2, 2, 2),
    /* losses */
    Z0(cross_entropy, NAN), Z0(nll_loss, NAN), Z0(mse_loss, NAN),
    /* in-place */
    Z(inplace_narrow, 3, 4), Z(inplace_select, 2, 0, 3), Z(inplace_broadcast, 1, 0, 4),
    Z0(inplace_after_matmul, 0.0),
    /* gradients */
    Z(grad_mul, 0, 3), Z(grad_mean_empty, 3, 0), Z(grad_prod_empty, 3, 0), Z(grad_logsumexp_empty, 3, 0),
    Z(grad_var_empty_rows, 0, 3), Z(grad_amax_no_rows, 0, 3), Z(grad_softmax_rows, 0, 3),
    Z(grad_softmax_empty_row, 3, 0), Z(grad_cumsum, 2, 0), Z(grad_expand, 1, 0), ZF(grad_index_select, 0.0, 3, 4),
    Z(grad_max_pool_batch0, 0, 2, 4, 4), ZE(grad_max_pool_no_channels, "C, H, W >= 1"), Z(grad_avg_pool_tiles, 0, 2, 4, 4),
    Z(grad_avg_pool_padded, 0, 2, 5, 5), Z(grad_conv_strided, 0, 2, 6, 6), ZF(grad_conv_groups_weight, 0.0, 4, 1, 3, 3),
    ZF(grad_embedding, 0.0, 5, 3), ZF(grad_gather, 0.0, 3, 4), Z(grad_where, 0, 3), Z(grad_select, 2, 0, 3),
    ZF(grad_slice_empty, 0.0, 4, 3), Z(grad_diagonal, 0, 3), Z(grad_std, 2, 0, 3), Z(grad_sum_empty_dim, 3, 0),
    Z(grad_mse, 0, 3), Z(grad_cross_entropy, 0, 5), Z(grad_reshape, 2, 0, 3), Z(grad_cat, 6), Z(grad_mm_k0, 0),
    Z(grad_mm_k0_a, 5, 5, 0), Z(grad_mv_k0, 0), Z(grad_vm_k0, 0), Z(grad_linear_k0, 0), ZF(grad_mm_m0, 0.0, 12), ZF(grad_bmm_m0, 0.0, 12),
    ZF(grad_conv_batch0, 0.0, 54), ZF(grad_linear_batch0, 0.0, 8), ZF(grad_layer_norm_batch0, 0.0, 2),
    ZF(grad_layer_norm_rows0, 0.0, 8), Z(grad_attention_seq0, 288), Z(grad_attention_batch0, 80),
    ZE(grad_batch_norm_batch0, "more than 1 value"), Z(dropout_empty, 2, 0, 3), Z(sgd_step_batch0, 8), Z(adam_step_batch0, 8),
};

/* ---- running the table -------------------------------------------------------- */

typedef struct outcome {
    bool ok;
    char error[512];
    lt_dtype dtype;
    int ndim;
    int64_t shape[LT_MAX_DIMS];
    int64_t n;
    double *v;
} outcome;

/* Runs one case inside a scope; a lazy run ends with a step barrier (all
 * live tensors, empty ones included, are computed by one program). */
static outcome run_case(const zcase *c, lt_device dev)
{
    outcome o;
    memset(&o, 0, sizeof o);
    lt_clear_error();
    lt_scope_begin();
    lt_tensor *r = c->fn(dev);
    if (r && dev.kind == LT_DEVICE_LAZY && lt_mark_step() != LT_OK)
        r = NULL;
    lt_tensor *host = r ? lt_to(r, lt_device_cpu()) : NULL;
    if (host) {
        o.ok = true;
        o.dtype = lt_tensor_dtype(host);
        o.ndim = lt_tensor_ndim(host);
        memcpy(o.shape, lt_tensor_shape(host), sizeof(int64_t) * (size_t)o.ndim);
        o.n = lt_tensor_numel(host);
        o.v = lt_test_values(host);
    } else {
        snprintf(o.error, sizeof o.error, "%s", lt_last_error());
    }
    lt_clear_error();
    lt_scope_end(); /* the case's tensors, pending or not, die here */
    return o;
}

static bool same_value(double a, double b, double tol)
{
    return (isnan(a) && isnan(b)) || a == b || fabs(a - b) <= tol * (1 + fabs(a));
}

/* Checks the cpu device's outcome against the table's expectation. */
static bool check_eager(const zcase *c, const outcome *o)
{
    if (c->expect == FAIL) {
        if (o->ok || !strstr(o->error, c->needle)) {
            print_error("%s: expected an error containing \"%s\", got %s\n", c->name, c->needle,
                        o->ok ? "a result" : o->error);
            return false;
        }
        return true;
    }
    if (!o->ok) {
        print_error("%s: failed on the cpu device: %s\n", c->name, o->error);
        return false;
    }
    bool ok = o->ndim == c->ndim;
    for (int d = 0; ok && d < c->ndim; d++)
        ok = o->shape[d] == c->shape[d];
    if (!ok) {
        print_error("%s: wrong shape (%d dims)\n", c->name, o->ndim);
        return false;
    }
    for (int64_t i = 0; c->expect == FILL && i < o->n; i++) {
        if (!same_value(c->value, o->v[i], 0)) {
            print_error("%s: element %lld is %g, expected %g\n", c->name, (long long)i, o->v[i], c->value);
            return false;
        }
    }
    return true;
}

/* The lazy outcome must be the cpu device's: both errors, or equal shapes,
 * dtypes and values. */
static bool check_agree(const zcase *c, const outcome *e, const outcome *l, const char *backend)
{
    if (e->ok != l->ok) {
        print_error("%s on lazy/%s: %s\n", c->name, backend,
                    l->ok ? "succeeded where the cpu device failed" : l->error);
        return false;
    }
    if (!e->ok) {
        if (!strstr(l->error, c->needle ? c->needle : "")) {
            print_error("%s on lazy/%s: error \"%s\" lacks \"%s\"\n", c->name, backend, l->error, c->needle);
            return false;
        }
        return true;
    }
    bool ok = e->dtype == l->dtype && e->ndim == l->ndim && e->n == l->n;
    for (int d = 0; ok && d < e->ndim; d++)
        ok = e->shape[d] == l->shape[d];
    if (!ok) {
        print_error("%s on lazy/%s: shape or dtype differs from the cpu device\n", c->name, backend);
        return false;
    }
    for (int64_t i = 0; i < e->n; i++) {
        if (!same_value(e->v[i], l->v[i], 1e-5)) {
            print_error("%s on lazy/%s: element %lld is %.9g, the cpu device gives %.9g\n", c->name, backend,
                        (long long)i, l->v[i], e->v[i]);
            return false;
        }
    }
    return true;
}

static int run_table(const char *backend)
{
    int failures = 0;
    lt_device lazy = lt_device_parse("lazy");
    assert_int_equal(lt_lazy_set_backend(backend), LT_OK);
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
        const zcase *c = &cases[k];
        outcome e = run_case(c, lt_device_cpu());
        outcome l = run_case(c, lazy);
        bool ok = check_eager(c, &e);
        ok = check_agree(c, &e, &l, backend) && ok;
        failures += !ok;
        free(e.v);
        free(l.v);
    }
    print_message("%zu size-0 cases on the %s backend, %d failures\n", sizeof cases / sizeof cases[0], backend,
                  failures);
    return failures;
}

static bool cpu_backend_available(void)
{
    if (lt_lazy_set_backend("cpu") == LT_OK)
        return true;
    print_message("cpu backend unavailable (%s): skipped\n", lt_last_error());
    lt_clear_error();
    return false;
}

static void test_table_interp(void **state)
{
    (void)state;
    assert_int_equal(run_table("interp"), 0);
}

static void test_table_cpu(void **state)
{
    (void)state;
    if (!cpu_backend_available())
        skip();
    assert_int_equal(run_table("cpu"), 0);
}

int main(void)
{
    /* compiled programs go to a private cache, never to ~/.cache */
    char dir[] = "/tmp/lt_size_zero_cache_XXXXXX";
    if (!mkdtemp(dir))
        return 1;
    setenv("LT_CACHE_DIR", dir, 1);
    const struct CMUnitTest tests[] = {
        LT_TEST(test_table_interp),
        LT_TEST(test_table_cpu),
    };
    int failed = cmocka_run_group_tests(tests, NULL, NULL);
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    if (system(cmd) != 0)
        failed++;
    return failed;
}
