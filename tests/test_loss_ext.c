/* test_loss_ext.c - the regression, binary and embedding losses and the
 * distance functions (src/nn/loss_ext.c): values worked out by hand from
 * PyTorch's formulas (tests/torch_diff compares them with torch itself on
 * many more inputs), the same values on the lazy device with no eager call
 * and a few kernels, gradients at the points a composition gets wrong
 * (zero logits), and every argument error. */
#include "lt_test.h"

#include <math.h>

static lt_tensor *on(lt_tensor *t, lt_device dev) { return LT_OK_T(lt_to(t, dev)); }

/* input [0.5, -1, 2, 0] against target [0, 0, 0.5, 3]: d = 0.5, 1, 1.5, 3 */
#define INPUT(dev) on(LT_T(LT_F32, LT_DIMS(4), 0.5, -1, 2, 0), dev)
#define TARGET(dev) on(LT_T(LT_F32, LT_DIMS(4), 0, 0, 0.5, 3), dev)

static void check_regression(lt_device dev)
{
    LT_ASSERT_VALUES(lt_l1_loss(INPUT(dev), TARGET(dev), LT_LOSS_NONE), 1e-6, 0.5, 1, 1.5, 3);
    LT_ASSERT_VALUES(lt_l1_loss(INPUT(dev), TARGET(dev), LT_LOSS_MEAN), 1e-6, 1.5);
    LT_ASSERT_VALUES(lt_l1_loss(INPUT(dev), TARGET(dev), LT_LOSS_SUM), 1e-6, 6);
    /* beta 1: 0.5 d^2 below 1, d - 0.5 from 1 on */
    LT_ASSERT_VALUES(lt_smooth_l1_loss(INPUT(dev), TARGET(dev), LT_LOSS_NONE, 1.0), 1e-6, 0.125, 0.5, 1, 2.5);
    /* beta 0 is the l1 loss */
    LT_ASSERT_VALUES(lt_smooth_l1_loss(INPUT(dev), TARGET(dev), LT_LOSS_SUM, 0.0), 1e-6, 6);
    /* delta 2: 0.5 d^2 below 2, 2 (d - 1) from 2 on */
    LT_ASSERT_VALUES(lt_huber_loss(INPUT(dev), TARGET(dev), LT_LOSS_NONE, 2.0), 1e-6, 0.125, 0.5, 1.125, 4);
}

static void check_binary(lt_device dev)
{
    lt_tensor *p = on(LT_T(LT_F32, LT_DIMS(3), 0.25, 0.5, 0), dev), *y = on(LT_T(LT_F32, LT_DIMS(3), 1, 0, 0), dev);
    /* -log 0.25, -log 0.5, and 0 * clamped log 0 = 0 */
    LT_ASSERT_VALUES(lt_binary_cross_entropy(p, y, NULL, LT_LOSS_NONE), 1e-6, log(4.0), log(2.0), 0);
    /* a 0 probability with a target of 1: the log is clamped at -100 */
    lt_tensor *one = on(LT_T(LT_F32, LT_DIMS(1), 1), dev), *zero = on(LT_T(LT_F32, LT_DIMS(1), 0), dev);
    LT_ASSERT_VALUES(lt_binary_cross_entropy(zero, one, NULL, LT_LOSS_SUM), 1e-5, 100);
    lt_tensor *w = on(LT_T(LT_F32, LT_DIMS(1), 2), dev);
    LT_ASSERT_VALUES(lt_binary_cross_entropy(p, y, w, LT_LOSS_SUM), 1e-5, 2 * (log(4.0) + log(2.0)));
    /* logits 0 and 2 with targets 1 and 0: log(1 + e^0), log(1 + e^2); a
     * pos_weight of 3 triples the positive term only */
    lt_tensor *x = on(LT_T(LT_F32, LT_DIMS(2), 0, 2), dev), *t = on(LT_T(LT_F32, LT_DIMS(2), 1, 0), dev);
    LT_ASSERT_VALUES(lt_binary_cross_entropy_with_logits(x, t, NULL, NULL, LT_LOSS_NONE), 1e-6, log(2.0),
                     log(1 + exp(2.0)));
    lt_tensor *pw = on(LT_T(LT_F32, LT_DIMS(1), 3), dev);
    LT_ASSERT_VALUES(lt_binary_cross_entropy_with_logits(x, t, NULL, pw, LT_LOSS_NONE), 1e-6, 3 * log(2.0),
                     log(1 + exp(2.0)));
    /* logits of +-100 do not overflow */
    lt_tensor *big = on(LT_T(LT_F32, LT_DIMS(2), 100, -100), dev);
    LT_ASSERT_VALUES(lt_binary_cross_entropy_with_logits(big, t, NULL, NULL, LT_LOSS_NONE), 1e-5, 0, 0);
}

static void check_divergence_and_ranking(lt_device dev)
{
    /* log q = log [0.5, 0.5], p = [1, 0]: 1 * (0 - log 0.5) + 0 */
    lt_tensor *logq = on(LT_T(LT_F32, LT_DIMS(1, 2), log(0.5), log(0.5)), dev);
    lt_tensor *p = on(LT_T(LT_F32, LT_DIMS(1, 2), 1, 0), dev);
    LT_ASSERT_VALUES(lt_kl_div(logq, p, LT_LOSS_NONE, false), 1e-6, log(2.0), 0);
    LT_ASSERT_VALUES(lt_kl_div(logq, p, LT_LOSS_MEAN, false), 1e-6, log(2.0) / 2);
    LT_ASSERT_VALUES(lt_kl_div(logq, p, LT_LOSS_BATCHMEAN, false), 1e-6, log(2.0));
    lt_tensor *logp = on(LT_T(LT_F32, LT_DIMS(1, 2), 0, log(0.5)), dev);
    LT_ASSERT_VALUES(lt_kl_div(logq, logp, LT_LOSS_NONE, true), 1e-6, log(2.0), 0);
    /* max(0, -y (x1 - x2) + 0.5) for x1 - x2 = 1, -1 and y = 1, 1 */
    lt_tensor *a = on(LT_T(LT_F32, LT_DIMS(2), 2, 0), dev), *b = on(LT_T(LT_F32, LT_DIMS(2), 1, 1), dev);
    lt_tensor *ones = on(LT_T(LT_F32, LT_DIMS(2), 1, 1), dev);
    LT_ASSERT_VALUES(lt_margin_ranking_loss(a, b, ones, 0.5, LT_LOSS_NONE), 1e-6, 0, 1.5);
}

static void check_cosine_and_distances(lt_device dev)
{
    lt_tensor *a = on(LT_T(LT_F32, LT_DIMS(2, 2), 3, 4, 1, 0), dev), *b = on(LT_T(LT_F32, LT_DIMS(2, 2), 4, 3, 0, 2), dev);
    LT_ASSERT_VALUES(lt_cosine_similarity(a, b, 1, 1e-8), 1e-6, 24.0 / 25, 0);
    /* y = 1: 1 - cos; y = -1: max(0, cos - 0.1) */
    lt_tensor *y = on(LT_T(LT_F32, LT_DIMS(2), 1, -1), dev);
    LT_ASSERT_VALUES(lt_cosine_embedding_loss(a, b, y, 0.1, LT_LOSS_NONE), 1e-6, 1.0 / 25, 0);
    lt_tensor *y2 = on(LT_T(LT_F32, LT_DIMS(2), -1, 1), dev);
    LT_ASSERT_VALUES(lt_cosine_embedding_loss(a, b, y2, 0.1, LT_LOSS_NONE), 1e-6, 24.0 / 25 - 0.1, 1);
    /* |(3,4) - (4,3)| = sqrt 2, |(1,0) - (0,2)| = sqrt 5 (eps 0) */
    LT_ASSERT_VALUES(lt_pairwise_distance(a, b, 2.0, 0.0, false), 1e-6, sqrt(2.0), sqrt(5.0));
    LT_ASSERT_VALUES(lt_pairwise_distance(a, b, 1.0, 0.0, true), 1e-6, 2, 3);
    LT_ASSERT_VALUES(lt_normalize(a, 2.0, 1, 1e-12), 1e-6, 0.6, 0.8, 1, 0);
    /* a zero row stays zero (divided by eps) */
    lt_tensor *z = on(LT_T(LT_F32, LT_DIMS(1, 2), 0, 0), dev);
    LT_ASSERT_VALUES(lt_normalize(z, 2.0, 1, 1e-12), 0, 0, 0);
}

static void test_values_on_every_device(void **state)
{
    (void)state;
    const char *backends[] = {NULL, "interp", "cpu"};
    for (int i = 0; i < 3; i++) {
        lt_device dev = backends[i] ? lt_device_parse("lazy") : lt_device_cpu();
        if (backends[i])
            assert_int_equal(lt_lazy_set_backend(backends[i]), LT_OK);
        print_message("on %s\n", backends[i] ? backends[i] : "cpu device");
        lt_scope_begin();
        check_regression(dev);
        check_binary(dev);
        check_divergence_and_ranking(dev);
        check_cosine_and_distances(dev);
        assert_int_equal(lt_scope_end(), LT_OK);
    }
}

/* The gradient of the logits loss at a logit of exactly 0 (a zero-
 * initialized last layer) is sigmoid(0) - y, not what a kinked
 * composition gives there. */
static void test_logits_gradient_at_zero(void **state)
{
    (void)state;
    lt_device devs[2] = {lt_device_cpu(), lt_device_parse("lazy")};
    for (int i = 0; i < 2; i++) {
        lt_scope_begin();
        lt_tensor *x = on(LT_T(LT_F32, LT_DIMS(3), 0, 0, 0), devs[i]);
        assert_int_equal(lt_set_requires_grad(x, true), LT_OK);
        lt_tensor *y = on(LT_T(LT_F32, LT_DIMS(3), 1, 0, 0.5), devs[i]);
        lt_tensor *loss = LT_OK_T(lt_binary_cross_entropy_with_logits(x, y, NULL, NULL, LT_LOSS_SUM));
        assert_int_equal(lt_backward(loss, NULL), LT_OK);
        LT_ASSERT_VALUES(lt_grad(x), 1e-6, -0.5, 0.5, 0);
        assert_int_equal(lt_scope_end(), LT_OK);
    }
}

/* On the lazy device a loss is a few fused kernels, never an eager call. */
static void test_lazy_losses_fuse(void **state)
{
    (void)state;
    assert_int_equal(lt_lazy_set_backend("cpu"), LT_OK);
    lt_device lazy = lt_device_parse("lazy");
    lt_tensor *x = lt_persist(on(LT_T(LT_F32, LT_DIMS(2, 3), 0.5, -1, 2, 0, 1, -2), lazy));
    lt_tensor *y = lt_persist(on(LT_T(LT_F32, LT_DIMS(2, 3), 0.2, 0.9, 0.5, 0, 1, 0.3), lazy));
    assert_int_equal(lt_mark_step(), LT_OK);
    lt_metrics_reset();
    lt_scope_begin();
    lt_tensor *total = lt_add(lt_add(lt_smooth_l1_loss(x, y, LT_LOSS_MEAN, 0.5),
                                     lt_binary_cross_entropy_with_logits(x, y, NULL, NULL, LT_LOSS_MEAN)),
                              lt_sum(lt_cosine_similarity(x, y, 1, 1e-8), NULL, 0, false));
    lt_keep(LT_OK_T(total));
    assert_int_equal(lt_scope_end(), LT_OK);
    assert_int_equal(lt_mark_step(), LT_OK);
    assert_int_equal(lt_metrics_counter("KernelCalls"), 0);
    assert_true(lt_metrics_counter("Kernels") <= 3);
    lt_release(total);
    lt_release(x);
    lt_release(y);
}

static void test_bad_arguments(void **state)
{
    (void)state;
    lt_device cpu = lt_device_cpu();
    lt_tensor *a = INPUT(cpu), *b = TARGET(cpu), *m = LT_T(LT_F32, LT_DIMS(2, 2), 1, 2, 3, 4);
    lt_tensor *ints = LT_OK_T(lt_to_dtype(a, LT_I64));
    assert_null(lt_l1_loss(a, m, LT_LOSS_MEAN));
    LT_EXPECT_ERROR(LT_ERR_SHAPE, "l1_loss: input has shape [4] and target [2, 2], expected equal shapes");
    assert_null(lt_l1_loss(ints, b, LT_LOSS_MEAN));
    LT_EXPECT_ERROR(LT_ERR_DTYPE, "l1_loss: input has dtype i64, expected a floating dtype");
    assert_null(lt_l1_loss(a, b, (lt_loss_reduction)7));
    LT_EXPECT_ERROR(LT_ERR_ARGUMENT, "l1_loss: reduction 7 is not one of LT_LOSS_MEAN, LT_LOSS_SUM, LT_LOSS_NONE");
    assert_null(lt_l1_loss(a, b, LT_LOSS_BATCHMEAN));
    LT_EXPECT_ERROR(LT_ERR_ARGUMENT, "l1_loss: reduction 3 is not one of");
    assert_null(lt_l1_loss(NULL, b, LT_LOSS_MEAN));
    LT_EXPECT_ERROR(LT_ERR_NULL, "l1_loss");
    assert_null(lt_smooth_l1_loss(a, b, LT_LOSS_MEAN, -1));
    LT_EXPECT_ERROR(LT_ERR_ARGUMENT, "smooth_l1_loss: beta is -1, expected a finite non-negative number");
    assert_null(lt_huber_loss(a, b, LT_LOSS_MEAN, 0));
    LT_EXPECT_ERROR(LT_ERR_ARGUMENT, "huber_loss: delta is 0, expected a positive number");
    assert_null(lt_binary_cross_entropy(a, b, m, LT_LOSS_MEAN));
    LT_EXPECT_ERROR(LT_ERR_SHAPE, "binary_cross_entropy: weight has shape [2, 2], expected a shape that broadcasts "
                                  "to the input's [4]");
    assert_null(lt_binary_cross_entropy_with_logits(a, b, NULL, ints, LT_LOSS_MEAN));
    LT_EXPECT_ERROR(LT_ERR_DTYPE, "binary_cross_entropy_with_logits: pos_weight has dtype i64");
    assert_null(lt_kl_div(a, b, (lt_loss_reduction)-1, false));
    LT_EXPECT_ERROR(LT_ERR_ARGUMENT, "kl_div: reduction -1 is not one of");
    assert_null(lt_cosine_embedding_loss(m, m, a, 0, LT_LOSS_MEAN));
    LT_EXPECT_ERROR(LT_ERR_SHAPE, "cosine_embedding_loss: x1 and x2 have shape [2, 2] and y [4], expected [N, D] "
                                  "with y [N], or [D] with a 0-d y");
    assert_null(lt_cosine_similarity(m, m, 2, 1e-8));
    LT_EXPECT_ERROR(LT_ERR_ARGUMENT, "cosine_similarity: dim 2 is out of range");
    assert_null(lt_cosine_similarity(m, m, 1, NAN));
    LT_EXPECT_ERROR(LT_ERR_ARGUMENT, "cosine_similarity: eps is nan");
    assert_null(lt_pairwise_distance(m, m, -1, 0, false));
    LT_EXPECT_ERROR(LT_ERR_ARGUMENT, "pairwise_distance: p is -1, expected p >= 0");
    assert_null(lt_normalize(m, 2, -3, 1e-12));
    LT_EXPECT_ERROR(LT_ERR_ARGUMENT, "normalize: dim -3 is out of range for a 2-d tensor");
    assert_null(lt_margin_ranking_loss(a, b, m, 0, LT_LOSS_MEAN));
    LT_EXPECT_ERROR(LT_ERR_SHAPE, "margin_ranking_loss: y has shape [2, 2]");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        LT_TEST(test_values_on_every_device),
        LT_TEST(test_logits_gradient_at_zero),
        LT_TEST(test_lazy_losses_fuse),
        LT_TEST(test_bad_arguments),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
