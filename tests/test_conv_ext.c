/* test_conv_ext.c - the convolution, pooling and resampling family beyond
 * conv2d (conv1d ... interpolate, and the Conv1d / ConvTranspose2d
 * layers): values worked out by hand on cpu and on lazy with both
 * backends, that on the lazy device the compositions trace without a
 * fallback or a sync, finite-difference gradients, and argument errors.
 * tests/torch_diff (specs_conv.py) compares every sample with torch. */
#include "gradcheck.h"

#include <math.h>

/* Values to a relative 1e-6 (lt_test.h). */
#define EXPECT(t, ...) LT_ASSERT_VALUES((t), 1e-6, __VA_ARGS__)

#define PAIR(a, b) ((const int64_t[]){(a), (b)})

/* ---- known values ------------------------------------------------------- */

static void check_convolutions(lt_device dev)
{
    lt_tensor *x = lt_to(LT_T(LT_F32, LT_DIMS(1, 1, 4), 1, 2, 3, 4), dev);
    lt_tensor *diff = lt_to(LT_T(LT_F32, LT_DIMS(1, 1, 2), 1, -1), dev);
    /* padded 0 1 2 3 4 0: each window a - b */
    EXPECT(lt_conv1d(x, diff, NULL, 1, 1, 1, 1), -1, -1, -1, -1, 4);
    EXPECT(lt_conv1d(lt_squeeze(x, 0), diff, lt_to(LT_T(LT_F32, LT_DIMS(1), 10), dev), 2, 0, 1, 1), 9, 9);
    /* transposed, stride 2: 1 -> [1 1 1] at 0, 2 -> [2 2 2] at 2 */
    lt_tensor *ones3 = lt_to(LT_T(LT_F32, LT_DIMS(1, 1, 3), 1, 1, 1), dev);
    lt_tensor *y = lt_conv_transpose1d(lt_narrow(x, 2, 0, 2), ones3, NULL, 2, 0, 0, 1, 1);
    LT_ASSERT_SHAPE(y, 1, 1, 5);
    EXPECT(y, 1, 1, 3, 2, 2);
    /* each pixel spread over a 2 x 2 block; output_padding adds a zero row and column */
    lt_tensor *img = lt_to(LT_T(LT_F32, LT_DIMS(1, 1, 2, 2), 1, 2, 3, 4), dev);
    lt_tensor *ones22 = lt_ones(LT_DIMS(1, 1, 2, 2), LT_F32, dev);
    EXPECT(lt_conv_transpose2d(img, ones22, NULL, PAIR(2, 2), NULL, NULL, 1, NULL), 1, 1, 2, 2, 1, 1, 2, 2, 3, 3,
           4, 4, 3, 3, 4, 4);
    y = lt_conv_transpose2d(img, ones22, NULL, PAIR(2, 2), PAIR(1, 1), PAIR(1, 1), 1, NULL);
    LT_ASSERT_SHAPE(y, 1, 1, 3, 3);
    EXPECT(y, 1, 2, 2, 3, 4, 4, 3, 4, 4);
    /* a 2 x 2 x 2 kernel of ones over 1..8: the sum, plus the bias */
    lt_tensor *cube = lt_to(LT_T(LT_F32, LT_DIMS(1, 1, 2, 2, 2), 1, 2, 3, 4, 5, 6, 7, 8), dev);
    lt_tensor *k3 = lt_ones(LT_DIMS(2, 1, 2, 2, 2), LT_F32, dev);
    y = lt_conv3d(cube, k3, lt_to(LT_T(LT_F32, LT_DIMS(2), 0, 100), dev), NULL, NULL, NULL, 1);
    LT_ASSERT_SHAPE(y, 1, 2, 1, 1, 1);
    EXPECT(y, 36, 136);
}

static void check_unfold_shuffle(lt_device dev)
{
    lt_tensor *x = lt_to(LT_T(LT_F32, LT_DIMS(1, 1, 3, 3), 1, 2, 3, 4, 5, 6, 7, 8, 9), dev);
    lt_tensor *cols = lt_unfold(x, PAIR(2, 2), NULL, NULL, NULL);
    LT_ASSERT_SHAPE(cols, 1, 4, 4);
    EXPECT(cols, 1, 2, 4, 5, 2, 3, 5, 6, 4, 5, 7, 8, 5, 6, 8, 9);
    /* fold sums the overlaps: x times the number of windows covering each pixel */
    EXPECT(lt_fold(cols, PAIR(3, 3), PAIR(2, 2), NULL, NULL, NULL), 1, 4, 3, 8, 20, 12, 7, 16, 9);
    /* padding 1, stride 2: the four corners of the padded image */
    EXPECT(lt_unfold(x, PAIR(1, 1), NULL, PAIR(1, 1), PAIR(2, 2)), 0, 0, 0, 0, 5, 0, 0, 0, 0);
    lt_tensor *ch = lt_to(LT_T(LT_F32, LT_DIMS(1, 4, 1, 2), 1, 2, 3, 4, 5, 6, 7, 8), dev);
    lt_tensor *up = lt_pixel_shuffle(ch, 2);
    LT_ASSERT_SHAPE(up, 1, 1, 2, 4);
    EXPECT(up, 1, 3, 2, 4, 5, 7, 6, 8);
    EXPECT(lt_pixel_unshuffle(up, 2), 1, 2, 3, 4, 5, 6, 7, 8);
}

static void check_pooling(lt_device dev)
{
    lt_tensor *x = lt_to(LT_T(LT_F32, LT_DIMS(1, 1, 5), 1, 3, 2, 5, 4), dev);
    lt_tensor *idx = NULL;
    /* ceil_mode adds the window [4] hanging over the edge */
    EXPECT(lt_max_pool1d(x, 2, 2, 0, 1, true, &idx), 3, 5, 4);
    EXPECT(idx, 1, 3, 4);
    EXPECT(lt_max_pool1d(x, 2, 1, 0, 3, false, NULL), 5, 4); /* taps 0 and 3, 1 and 4 */
    EXPECT(lt_avg_pool1d(x, 2, 2, 0, true, true), 2, 3.5, 4);
    lt_tensor *sq = lt_to(lt_view(lt_arange(1, 17, 1, LT_F32, lt_device_cpu()), LT_DIMS(1, 1, 4, 4)), dev);
    EXPECT(lt_max_pool2d_ext(sq, PAIR(2, 2), PAIR(1, 1), NULL, PAIR(2, 2), false, &idx), 11, 12, 15, 16);
    EXPECT(idx, 10, 11, 14, 15);
    /* ceil_mode with padding 1: windows start at -1, 1, 3; the last one keeps 1 column */
    EXPECT(lt_avg_pool2d_ext(lt_narrow(sq, 2, 0, 1), PAIR(1, 2), PAIR(1, 2), PAIR(0, 1), true, false, 0), 1, 2.5, 4);
    EXPECT(lt_avg_pool2d_ext(lt_narrow(sq, 2, 0, 1), PAIR(1, 2), PAIR(1, 2), PAIR(0, 1), true, true, 0), 0.5, 2.5, 2);
    EXPECT(lt_avg_pool2d_ext(sq, PAIR(2, 2), NULL, NULL, false, true, 1), 14, 22, 46, 54);
    /* adaptive: cells [0, 3) and [2, 5) of 5; [0, 2) and [1, 3) of 3 */
    EXPECT(lt_adaptive_avg_pool1d(x, 2), 2, 11.0 / 3);
    lt_tensor *x9 = lt_narrow(lt_narrow(sq, 2, 0, 3), 3, 0, 3); /* 1 2 3 / 5 6 7 / 9 10 11 */
    EXPECT(lt_adaptive_avg_pool2d(x9, PAIR(2, 2)), 3.5, 4.5, 7.5, 8.5);
    EXPECT(lt_adaptive_max_pool2d(x9, PAIR(2, 2), &idx), 6, 7, 10, 11);
    EXPECT(idx, 4, 5, 7, 8);
    EXPECT(lt_adaptive_max_pool1d(x, 2, &idx), 3, 5);
    EXPECT(idx, 1, 3);
}

static void check_interpolate(lt_device dev)
{
    lt_tensor *x = lt_to(LT_T(LT_F32, LT_DIMS(1, 1, 2), 0, 4), dev);
    EXPECT(lt_interpolate(x, (const int64_t[]){4}, NULL, LT_INTERP_NEAREST, false), 0, 0, 4, 4);
    EXPECT(lt_interpolate(x, (const int64_t[]){3}, NULL, LT_INTERP_LINEAR, true), 0, 2, 4);
    /* half-pixel centers: sources -0.25 (clamped to 0), 0.25, 0.75, 1.25 */
    EXPECT(lt_interpolate(x, NULL, (const double[]){2.0}, LT_INTERP_LINEAR, false), 0, 1, 3, 4);
    lt_tensor *img = lt_to(LT_T(LT_F32, LT_DIMS(1, 1, 2, 2), 0, 1, 2, 3), dev);
    EXPECT(lt_interpolate(img, PAIR(3, 3), NULL, LT_INTERP_BILINEAR, true), 0, 0.5, 1, 1, 1.5, 2, 2, 2.5, 3);
    EXPECT(lt_interpolate(img, NULL, (const double[]){1.0, 1.5}, LT_INTERP_NEAREST, false), 0, 0, 1, 2, 2, 3);
}

/* Integer inputs keep their dtype (torch's results: 1 2 3 / 4 5 -7 / 7 8 9
 * against 1 -2 / 3 4, and avg_pool2d's mean truncated toward zero). */
static void check_integer(lt_device dev)
{
    lt_tensor *x = lt_to(LT_T(LT_I64, LT_DIMS(1, 1, 3, 3), 1, 2, 3, 4, 5, -7, 7, 8, 9), dev);
    lt_tensor *w = lt_to(LT_T(LT_I64, LT_DIMS(1, 1, 2, 2), 1, -2, 3, 4), dev);
    lt_tensor *y = lt_conv2d(x, w, lt_to(LT_T(LT_I64, LT_DIMS(1), 5), dev), NULL, NULL, NULL, 1);
    assert_int_equal(lt_tensor_dtype(y), LT_I64);
    EXPECT(y, 34, -12, 52, 84);
    y = lt_avg_pool2d(x, PAIR(2, 2), PAIR(1, 1), NULL, true);
    assert_int_equal(lt_tensor_dtype(y), LT_I64);
    EXPECT(y, 3, 0, 6, 3); /* 12/4, 3/4, 24/4, 15/4 */
    lt_tensor *xu = lt_to(LT_T(LT_U8, LT_DIMS(1, 1, 4), 200, 100, 1, 2), dev);
    y = lt_conv1d(xu, lt_to(LT_T(LT_U8, LT_DIMS(1, 1, 2), 1, 1), dev), NULL, 1, 0, 1, 1);
    assert_int_equal(lt_tensor_dtype(y), LT_U8);
    EXPECT(y, 44, 101, 3); /* 300 wraps to 44 */
    y = lt_conv_transpose1d(lt_to(LT_T(LT_I64, LT_DIMS(1, 1, 2), 3, -4), dev),
                            lt_to(LT_T(LT_I64, LT_DIMS(1, 1, 2), 1, 2), dev), NULL, 1, 0, 0, 1, 1);
    assert_int_equal(lt_tensor_dtype(y), LT_I64);
    EXPECT(y, 3, 2, -8);
    lt_tensor *xi = lt_to(LT_T(LT_I32, LT_DIMS(1, 1, 2), 3, -4), dev);
    assert_null(lt_conv_transpose1d(xi, lt_to(LT_T(LT_I32, LT_DIMS(1, 1, 2), 1, 2), dev), NULL, 1, 0, 0, 1, 1));
    LT_EXPECT_ERROR(LT_ERR_DTYPE, "conv_transpose1d: input i32, weight i32: expected one floating or integer dtype");
}

static void check_all(lt_device dev)
{
    check_integer(dev);
    check_convolutions(dev);
    check_unfold_shuffle(dev);
    check_pooling(dev);
    check_interpolate(dev);
}

static void test_known_values_cpu(void **state)
{
    (void)state;
    check_all(lt_device_cpu());
}

static void test_known_values_lazy(void **state)
{
    (void)state;
    lt_test_each_lazy_backend(check_all);
}

/* ---- the lazy device traces the compositions --------------------------------- */

static void test_lazy_traced_without_sync(void **state)
{
    (void)state;
    if (!lt_test_use_backend("cpu"))
        return;
    lt_device lazy = lt_device_parse("lazy");
    lt_tensor *x = lt_to(lt_rand(LT_DIMS(2, 4, 6, 6), LT_F32, lt_device_cpu()), lazy);
    lt_tensor *w = lt_to(lt_rand(LT_DIMS(4, 2, 3, 3), LT_F32, lt_device_cpu()), lazy);
    lt_tensor *line = lt_select(x, 2, 0), *idx = NULL;
    assert_int_equal(lt_mark_step(), LT_OK);
    lt_metrics_reset();
    lt_tensor *parts[] = {
        lt_conv1d(line, lt_select(w, 2, 0), NULL, 2, 1, 1, 2),
        lt_conv3d(lt_unsqueeze(x, 2), lt_unsqueeze(w, 2), NULL, NULL, NULL, NULL, 2),
        lt_conv_transpose2d(x, w, NULL, PAIR(2, 2), PAIR(1, 1), PAIR(1, 1), 2, NULL),
        lt_fold(lt_unfold(x, PAIR(2, 3), PAIR(2, 1), PAIR(1, 1), NULL), PAIR(6, 6), PAIR(2, 3), PAIR(2, 1), PAIR(1, 1),
                NULL),
        lt_pixel_unshuffle(lt_pixel_shuffle(x, 2), 2),
        lt_max_pool2d_ext(x, PAIR(3, 3), PAIR(2, 2), PAIR(1, 1), PAIR(2, 1), true, &idx),
        idx,
        lt_avg_pool1d(line, 4, 3, 2, true, false),
        lt_adaptive_max_pool2d(x, PAIR(4, 5), &idx),
        idx,
        lt_adaptive_avg_pool1d(line, 4),
        lt_interpolate(x, PAIR(9, 4), NULL, LT_INTERP_BILINEAR, false),
    };
    for (size_t k = 0; k < sizeof parts / sizeof parts[0]; k++)
        assert_non_null(parts[k]);
    assert_int_equal(lt_metrics_counter("Fallback"), 0);
    assert_int_equal(lt_metrics_counter("Barrier"), 0);
    assert_int_equal(lt_mark_step(), LT_OK);
    assert_int_equal(lt_metrics_counter("Fallback"), 0);
}

/* ---- gradients ------------------------------------------------------------------ */

static lt_tensor *conv_transpose_fn(lt_tensor *const *x, const void *ctx)
{
    const int64_t *op = ctx; /* output_padding 1: below the stride 2, or below the dilation 2 with stride 1 */
    int64_t stride = op[0] ? 2 : 1, dilation = op[0] ? 1 : 2;
    return lt_conv_transpose2d(x[0], x[1], x[2], PAIR(stride, stride), PAIR(1, 0), PAIR(1, 1), 2,
                               PAIR(dilation, dilation));
}

static lt_tensor *conv3d_fn(lt_tensor *const *x, const void *ctx)
{
    (void)ctx;
    return lt_conv3d(x[0], x[1], x[2], (const int64_t[]){2, 1, 1}, (const int64_t[]){1, 0, 1},
                     (const int64_t[]){1, 2, 1}, 1);
}

static lt_tensor *fold_fn(lt_tensor *const *x, const void *ctx)
{
    (void)ctx;
    return lt_fold(x[0], PAIR(4, 5), PAIR(2, 2), PAIR(1, 2), PAIR(1, 1), PAIR(2, 1));
}

static lt_tensor *max_pool_fn(lt_tensor *const *x, const void *ctx)
{
    (void)ctx;
    return lt_max_pool2d_ext(x[0], PAIR(2, 3), PAIR(2, 2), PAIR(1, 1), PAIR(2, 1), true, NULL);
}

static lt_tensor *avg_pool_fn(lt_tensor *const *x, const void *ctx)
{
    (void)ctx;
    return lt_avg_pool2d_ext(x[0], PAIR(3, 2), PAIR(2, 2), PAIR(1, 1), true, false, 0);
}

static lt_tensor *adaptive_max_fn(lt_tensor *const *x, const void *ctx)
{
    (void)ctx;
    return lt_adaptive_max_pool2d(x[0], PAIR(2, 3), NULL);
}

static lt_tensor *bilinear_fn(lt_tensor *const *x, const void *ctx)
{
    return lt_interpolate(x[0], PAIR(5, 3), NULL, LT_INTERP_BILINEAR, *(const bool *)ctx);
}

static void test_gradients(void **state)
{
    (void)state;
    static const int64_t below_stride = 1, below_dilation = 0;
    GRADCHECK_NAMED("conv_transpose2d", conv_transpose_fn, &below_stride, GC_BOTH, GC_UNIFORM(-1, 1, 1, 4, 3, 3),
                    GC_UNIFORM(-1, 1, 4, 1, 2, 3), GC_UNIFORM(-1, 1, 2));
    GRADCHECK_NAMED("conv_transpose2d", conv_transpose_fn, &below_dilation, GC_BOTH, GC_UNIFORM(-1, 1, 1, 4, 3, 3),
                    GC_UNIFORM(-1, 1, 4, 1, 2, 3), GC_UNIFORM(-1, 1, 2));
    GRADCHECK(conv3d_fn, NULL, GC_BOTH, GC_UNIFORM(-1, 1, 1, 2, 4, 3, 3), GC_UNIFORM(-1, 1, 2, 2, 2, 2, 2),
              GC_UNIFORM(-1, 1, 2));
    GRADCHECK(fold_fn, NULL, GC_BOTH, GC_UNIFORM(-1, 1, 2, 8, 15));
    GRADCHECK(max_pool_fn, NULL, GC_BOTH, GC_DISTINCT(1, 2, 5, 6));
    GRADCHECK(avg_pool_fn, NULL, GC_BOTH, GC_UNIFORM(-1, 1, 1, 2, 5, 6));
    GRADCHECK(adaptive_max_fn, NULL, GC_BOTH, GC_DISTINCT(1, 2, 5, 7));
    static const bool align[2] = {false, true};
    for (int a = 0; a < 2; a++)
        GRADCHECK_NAMED("bilinear", bilinear_fn, &align[a], GC_BOTH, GC_UNIFORM(-1, 1, 1, 2, 3, 4));
}

/* ---- layers ---------------------------------------------------------------------- */

static void test_layers(void **state)
{
    (void)state;
    lt_manual_seed(3);
    lt_module *conv = lt_nn_conv1d(4, 6, 3, 2, 1, 2, true, lt_device_cpu());
    assert_non_null(conv);
    lt_tensor *w = lt_module_tensor(conv, "weight"), *b = lt_module_tensor(conv, "bias");
    LT_ASSERT_SHAPE(w, 6, 2, 3);
    /* PyTorch's bound 1 / sqrt(fan_in), fan_in = 2 * 3 */
    double bound = 1 / sqrt(6.0), wmax = 0;
    assert_int_equal(lt_item(lt_amax(lt_abs(w), NULL, 0, false), &wmax), LT_OK);
    assert_true(wmax <= bound && wmax > bound / 2);
    lt_tensor *x = lt_rand(LT_DIMS(2, 4, 9), LT_F32, lt_device_cpu());
    lt_tensor *y = lt_module_forward(conv, x);
    LT_ASSERT_SHAPE(y, 2, 6, 5);
    double diff = 1;
    lt_tensor *ref = lt_conv1d(x, w, b, 2, 1, 1, 2);
    assert_int_equal(lt_item(lt_amax(lt_abs(lt_sub(y, ref)), NULL, 0, false), &diff), LT_OK);
    assert_true(diff == 0);
    lt_module_free(conv);

    lt_module *up = lt_nn_conv_transpose2d(4, 6, 3, 2, 1, 1, 2, false, lt_device_cpu());
    assert_non_null(up);
    LT_ASSERT_SHAPE(lt_module_tensor(up, "weight"), 4, 3, 3, 3);
    assert_null(lt_module_tensor(up, "bias"));
    lt_clear_error();
    y = lt_module_forward(up, lt_rand(LT_DIMS(1, 4, 5, 5), LT_F32, lt_device_cpu()));
    LT_ASSERT_SHAPE(y, 1, 6, 10, 10);
    lt_module_free(up);

    assert_null(lt_nn_conv_transpose2d(4, 6, 3, 2, 1, 2, 2, false, lt_device_cpu()));
    LT_EXPECT_ERROR(LT_ERR_ARGUMENT, "nn.conv_transpose2d: output_padding 2");
    assert_null(lt_nn_conv1d(3, 6, 3, 1, 0, 2, true, lt_device_cpu()));
    LT_EXPECT_ERROR(LT_ERR_ARGUMENT, "expected positive multiples of groups (2)");
}

/* ---- errors -------------------------------------------------------------------- */

static void test_errors(void **state)
{
    (void)state;
    lt_tensor *x = lt_zeros(LT_DIMS(1, 4, 5), LT_F32, lt_device_cpu());
    lt_tensor *img = lt_zeros(LT_DIMS(1, 4, 5, 5), LT_F32, lt_device_cpu());
    assert_null(lt_conv1d(x, lt_zeros(LT_DIMS(2, 3, 2), LT_F32, lt_device_cpu()), NULL, 1, 0, 1, 1));
    LT_EXPECT_ERROR(LT_ERR_SHAPE, "conv1d: input [1, 4, 5] and weight [2, 3, 2] with groups 1");
    assert_null(lt_conv1d(x, lt_zeros(LT_DIMS(2, 4, 9), LT_F32, lt_device_cpu()), NULL, 1, 0, 1, 1));
    LT_EXPECT_ERROR(LT_ERR_SHAPE, "give an empty output");
    assert_null(lt_conv1d(x, lt_zeros(LT_DIMS(2, 4, 2), LT_F64, lt_device_cpu()), NULL, 1, 0, 1, 1));
    LT_EXPECT_ERROR(LT_ERR_DTYPE, "conv1d: input f32, weight f64: expected one floating or integer dtype");
    assert_null(lt_conv3d(x, lt_zeros(LT_DIMS(2, 4, 1, 1, 1), LT_F32, lt_device_cpu()), NULL, NULL, NULL, NULL, 1));
    LT_EXPECT_ERROR(LT_ERR_SHAPE, "conv3d: input has shape [1, 4, 5], expected 5 dims");
    lt_tensor *w = lt_zeros(LT_DIMS(4, 2, 3, 3), LT_F32, lt_device_cpu());
    assert_null(lt_conv_transpose2d(img, w, NULL, PAIR(2, 2), NULL, PAIR(2, 0), 1, NULL));
    LT_EXPECT_ERROR(LT_ERR_ARGUMENT, "output_padding[0] is 2, expected it smaller than the stride (2) or the dilation");
    assert_null(lt_conv_transpose2d(img, w, lt_zeros(LT_DIMS(3), LT_F32, lt_device_cpu()), NULL, NULL, NULL, 1, NULL));
    LT_EXPECT_ERROR(LT_ERR_SHAPE, "conv_transpose2d: bias has shape [3], expected [2]");
    assert_null(lt_unfold(img, NULL, NULL, NULL, NULL));
    LT_EXPECT_ERROR(LT_ERR_NULL, "unfold: kernel size is NULL");
    assert_null(lt_unfold(lt_zeros(LT_DIMS(1, 4, 5, 5), LT_I64, lt_device_cpu()), PAIR(2, 2), NULL, NULL, NULL));
    LT_EXPECT_ERROR(LT_ERR_DTYPE, "unfold: input dtype i64, expected a floating dtype");
    assert_null(lt_fold(x, PAIR(3, 3), PAIR(2, 2), NULL, NULL, NULL));
    LT_EXPECT_ERROR(LT_ERR_SHAPE, "fold: input [1, 4, 5], expected [N, C * 4, 4]");
    assert_null(lt_pixel_shuffle(img, 3));
    LT_EXPECT_ERROR(LT_ERR_SHAPE, "pixel_shuffle: input [1, 4, 5, 5] has 4 channels, expected a multiple of 9");
    assert_null(lt_max_pool1d(x, 2, 0, 2, 1, false, NULL));
    LT_EXPECT_ERROR(LT_ERR_ARGUMENT, "max_pool1d: padding 2 is more than half of the kernel size 2");
    assert_null(lt_max_pool2d_ext(img, PAIR(2, 2), NULL, NULL, PAIR(0, 1), false, NULL));
    LT_EXPECT_ERROR(LT_ERR_ARGUMENT, "max_pool2d: dilation is 0, expected >= 1");
    assert_null(lt_avg_pool2d_ext(img, PAIR(2, 2), NULL, NULL, false, true, -1));
    LT_EXPECT_ERROR(LT_ERR_ARGUMENT, "divisor_override is -1");
    assert_null(lt_adaptive_avg_pool2d(img, PAIR(0, 2)));
    LT_EXPECT_ERROR(LT_ERR_ARGUMENT, "adaptive_avg_pool2d: output size 0");
    assert_null(lt_interpolate(img, PAIR(2, 2), (const double[]){2, 2}, LT_INTERP_BILINEAR, false));
    LT_EXPECT_ERROR(LT_ERR_ARGUMENT, "interpolate: expected either a size or a scale factor (both given)");
    assert_null(lt_interpolate(img, PAIR(2, 2), NULL, LT_INTERP_NEAREST, true));
    LT_EXPECT_ERROR(LT_ERR_ARGUMENT, "align_corners applies to the linear modes only");
    assert_null(lt_interpolate(img, (const int64_t[]){2}, NULL, LT_INTERP_LINEAR, false));
    LT_EXPECT_ERROR(LT_ERR_SHAPE, "interpolate: input has shape [1, 4, 5, 5], expected 3 dims [N, C, L]");
    assert_null(lt_conv1d(NULL, NULL, NULL, 1, 0, 1, 1));
    assert_null(lt_adaptive_max_pool2d(NULL, PAIR(1, 1), NULL));
    lt_clear_error();
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        LT_TEST(test_known_values_cpu), LT_TEST(test_known_values_lazy), LT_TEST(test_lazy_traced_without_sync),
        LT_TEST(test_gradients),        LT_TEST(test_layers),             LT_TEST(test_errors),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
