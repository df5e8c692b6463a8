/* test_unique_search.c - unique along a dim, unique_consecutive (flat and
 * along a dim), searchsorted with a sorter and a side, and the dtype= forms
 * of the norms and of cumprod: values worked out by hand on cpu and on lazy
 * with both backends, the gradient through a norm's dtype cast, and
 * argument errors. tests/torch_diff compares each with torch. */
#include "gradcheck.h"

#include <math.h>

/* Values worked out by hand: exact up to f32 rounding. */
#define EXPECT(t, ...) LT_ASSERT_VALUES((t), 1e-6, __VA_ARGS__)

/* ---- known values ------------------------------------------------------- */

/* rows 0 and 2 are equal; sorted: [0 5 4] < [0 5 5] < [3 0 9] < [3 1 2] */
static const double ROWS[] = {3, 1, 2, 0, 5, 5, 3, 1, 2, 0, 5, 4, 3, 0, 9};

static void check_unique_dim(lt_device dev)
{
    lt_tensor *x = lt_to(lt_test_tensor(ROWS, LT_DIMS(5, 3), LT_I64), dev), *inv = NULL, *cnt = NULL;
    lt_tensor *u = lt_unique_dim(x, 0, &inv, &cnt);
    LT_ASSERT_SHAPE(u, 4, 3);
    EXPECT(u, 0, 5, 4, 0, 5, 5, 3, 0, 9, 3, 1, 2);
    EXPECT(inv, 3, 1, 3, 0, 2);
    EXPECT(cnt, 1, 1, 1, 2);
    /* columns (3 0 3 0 3), (1 5 1 5 0), (2 5 2 4 9): all distinct, sorted */
    u = lt_unique_dim(x, -1, &inv, NULL);
    LT_ASSERT_SHAPE(u, 5, 3);
    EXPECT(inv, 2, 0, 1);
    EXPECT(lt_select(u, 0, 0), 1, 2, 3);
    /* slices of a 3-D tensor along dim 1; NaN rows are each distinct */
    lt_tensor *nan_rows = lt_to(LT_T(LT_F32, LT_DIMS(3, 2), 1, NAN, 1, NAN, -1, 0), dev);
    u = lt_unique_dim(nan_rows, 0, NULL, &cnt);
    LT_ASSERT_SHAPE(u, 3, 2);
    EXPECT(cnt, 1, 1, 1);
    lt_tensor *cube = lt_to(LT_T(LT_I32, LT_DIMS(1, 3, 2), 1, 2, 0, 0, 1, 2), dev);
    u = lt_unique_dim(cube, 1, &inv, &cnt);
    LT_ASSERT_SHAPE(u, 1, 2, 2);
    EXPECT(u, 0, 0, 1, 2);
    EXPECT(inv, 1, 0, 1);
    EXPECT(cnt, 1, 2);
    /* no slices: an empty result and empty inverse and counts */
    u = lt_unique_dim(lt_zeros(LT_DIMS(0, 2), LT_F32, dev), 0, &inv, &cnt);
    LT_ASSERT_SHAPE(u, 0, 2);
    LT_ASSERT_SHAPE(inv, 0);
    LT_ASSERT_SHAPE(cnt, 0);
}

static void check_unique_consecutive(lt_device dev)
{
    lt_tensor *x = lt_to(LT_T(LT_I64, LT_DIMS(2, 4), 1, 1, 2, 2, 3, 1, 1, 2), dev), *inv = NULL, *cnt = NULL;
    lt_tensor *u = lt_unique_consecutive(x, &inv, &cnt);
    EXPECT(u, 1, 2, 3, 1, 2);
    LT_ASSERT_SHAPE(inv, 2, 4);
    EXPECT(inv, 0, 0, 1, 1, 2, 3, 3, 4);
    EXPECT(cnt, 2, 2, 1, 2, 1);
    /* columns (1 3) (1 1) (2 1) (2 2): four runs of one */
    u = lt_unique_consecutive_dim(x, 1, &inv, &cnt);
    LT_ASSERT_SHAPE(u, 2, 4);
    EXPECT(cnt, 1, 1, 1, 1);
    lt_tensor *runs = lt_to(LT_T(LT_F32, LT_DIMS(3, 2), 5, 6, 5, 6, 5, 7), dev);
    u = lt_unique_consecutive_dim(runs, 0, &inv, &cnt);
    EXPECT(u, 5, 6, 5, 7);
    EXPECT(inv, 0, 0, 1);
    EXPECT(cnt, 2, 1);
    /* a 0-d input: one value, a 0-d inverse */
    u = lt_unique_consecutive(lt_scalar(2.5, LT_F32, dev), &inv, NULL);
    EXPECT(u, 2.5);
    assert_int_equal(lt_tensor_ndim(inv), 0);
}

static void check_searchsorted_sorter(lt_device dev)
{
    lt_tensor *seq = lt_to(LT_T(LT_F32, LT_DIMS(5), 5, 1, 3, 3, -2), dev);
    lt_tensor *sorter = lt_to(LT_T(LT_I64, LT_DIMS(5), 4, 1, 2, 3, 0), dev); /* -2 1 3 3 5 */
    lt_tensor *vals = lt_to(LT_T(LT_F32, LT_DIMS(5), 3, -3, 5, 9, NAN), dev);
    EXPECT(lt_searchsorted_sorter(seq, vals, sorter, false, "left"), 2, 0, 4, 5, 5);
    EXPECT(lt_searchsorted_sorter(seq, vals, sorter, false, NULL), 2, 0, 4, 5, 5);
    lt_tensor *right = lt_searchsorted_sorter(seq, vals, sorter, true, "right");
    assert_int_equal(lt_tensor_dtype(right), LT_I32);
    EXPECT(right, 4, 0, 5, 5, 5);
    /* without a sorter: lt_searchsorted with the side as a string */
    lt_tensor *sorted = lt_to(LT_T(LT_I64, LT_DIMS(3), 1, 3, 3), dev);
    EXPECT(lt_searchsorted_sorter(sorted, lt_to(LT_T(LT_I64, LT_DIMS(2), 3, 4), dev), NULL, false, "right"), 3, 3);
}

static void check_dtype_forms(lt_device dev)
{
    lt_tensor *m = lt_to(LT_T(LT_F32, LT_DIMS(2, 2), 1, -2, 3, 4), dev);
    lt_tensor *n = lt_vector_norm_dtype(m, 2, NULL, 0, false, LT_F64);
    assert_int_equal(lt_tensor_dtype(n), LT_F64);
    EXPECT(n, sqrt(30.0));
    n = lt_matrix_norm_dtype(m, 1, NULL, 0, true, LT_F64);
    LT_ASSERT_SHAPE(n, 1, 1);
    EXPECT(n, 6);
    EXPECT(lt_matrix_norm_fro_dtype(m, NULL, 0, false, LT_F32), sqrt(30.0));
    lt_tensor *big = lt_to(LT_T(LT_I32, LT_DIMS(3), 300, 300, 7), dev);
    lt_tensor *p = lt_cumprod_dtype(big, 0, LT_U8); /* 44, 44 * 44 = 1936 = 144 (mod 256), 144 * 7 = 1008 = 240 */
    assert_int_equal(lt_tensor_dtype(p), LT_U8);
    EXPECT(p, 44, 144, 240);
    p = lt_cumprod_dtype(big, 0, LT_F64);
    assert_int_equal(lt_tensor_dtype(p), LT_F64);
    EXPECT(p, 300, 90000, 630000);
}

static void run_all(lt_device dev)
{
    check_unique_dim(dev);
    check_unique_consecutive(dev);
    check_searchsorted_sorter(dev);
    check_dtype_forms(dev);
}

static void test_known_values_cpu(void **state)
{
    (void)state;
    run_all(lt_device_cpu());
}

static void test_known_values_lazy(void **state)
{
    (void)state;
    lt_test_each_lazy_backend(run_all);
}

/* ---- gradients through the dtype casts ------------------------------------------ */

/* d/dx |x|_2 = x / |x|, computed in f64 and cast back to the f32 input */
static void test_norm_dtype_gradient(void **state)
{
    (void)state;
    lt_tensor *x = lt_to(LT_T(LT_F32, LT_DIMS(2), 3, -4), lt_device_cpu());
    lt_set_requires_grad(x, true);
    assert_int_equal(lt_backward(lt_vector_norm_dtype(x, 2, NULL, 0, false, LT_F64), NULL), LT_OK);
    lt_tensor *g = lt_grad(x);
    assert_int_equal(lt_tensor_dtype(g), LT_F32);
    EXPECT(g, 0.6, -0.8);
}

/* ---- argument errors ------------------------------------------------------------- */

static void test_errors(void **state)
{
    (void)state;
    lt_device cpu = lt_device_cpu();
    lt_tensor *x = LT_T(LT_F32, LT_DIMS(2, 3), 1, 2, 3, 4, 5, 6), *inv = x;
    assert_null(lt_unique_dim(x, 2, &inv, NULL));
    LT_EXPECT_ERROR(LT_ERR_SHAPE, "unique: dim 2 is out of range for a tensor of 2 dims");
    assert_null(inv);
    assert_null(lt_unique_dim(lt_scalar(1, LT_F32, cpu), 0, NULL, NULL));
    LT_EXPECT_ERROR(LT_ERR_SHAPE, "unique: dim 0 given for a 0-d tensor");
    assert_null(lt_unique_consecutive_dim(lt_zeros(LT_DIMS(3, 0), LT_F32, cpu), 0, NULL, NULL));
    LT_EXPECT_ERROR(LT_ERR_SHAPE, "unique_consecutive: dim 1 has size 0 and is not the selected dim 0");
    assert_null(lt_unique_consecutive(NULL, NULL, NULL));
    lt_clear_error();
    lt_tensor *seq = lt_select(x, 0, 0);
    assert_null(lt_searchsorted_sorter(seq, x, NULL, false, "middle"));
    LT_EXPECT_ERROR(LT_ERR_ARGUMENT, "searchsorted: side is 'middle', expected 'left' or 'right'");
    assert_null(lt_searchsorted_sorter(seq, x, LT_T(LT_I32, LT_DIMS(3), 0, 1, 2), false, NULL));
    LT_EXPECT_ERROR(LT_ERR_DTYPE, "searchsorted: sorter has dtype i32, expected i64");
    assert_null(lt_searchsorted_sorter(seq, x, LT_T(LT_I64, LT_DIMS(2), 0, 1), false, NULL));
    LT_EXPECT_ERROR(LT_ERR_SHAPE, "searchsorted: sorter has shape [2], expected the sorted sequence's [3]");
    assert_null(lt_searchsorted_sorter(seq, x, LT_T(LT_I64, LT_DIMS(3), 0, 1, 3), false, NULL));
    LT_EXPECT_ERROR(LT_ERR_INDEX, "gather");
    assert_null(lt_vector_norm_dtype(lt_to_dtype(x, LT_F64), 2, NULL, 0, false, LT_F32));
    LT_EXPECT_ERROR(LT_ERR_DTYPE, "vector_norm_dtype: dtype f32 for an input of dtype f64");
    assert_null(lt_matrix_norm_dtype(lt_to_dtype(x, LT_I64), 1, NULL, 0, false, LT_F64));
    LT_EXPECT_ERROR(LT_ERR_DTYPE, "matrix_norm_dtype: input dtype i64 is not supported");
    assert_null(lt_matrix_norm_fro_dtype(x, NULL, 0, false, LT_I64));
    LT_EXPECT_ERROR(LT_ERR_DTYPE, "matrix_norm_fro_dtype: dtype i64 for an input of dtype f32");
    assert_null(lt_cumprod_dtype(x, 0, LT_BOOL));
    LT_EXPECT_ERROR(LT_ERR_DTYPE, "cumprod_dtype: dtype bool is not supported");
    assert_null(lt_cumprod_dtype(x, 2, LT_F64));
    LT_EXPECT_ERROR(LT_ERR_INDEX, "cumprod_dtype: dim 2 out of range");
}

/* ---- the registry's loss rows take torch's reduction strings ------------------- */

static void test_registry_reduction_strings(void **state)
{
    (void)state;
    lt_tensor *a = LT_T(LT_F32, LT_DIMS(2), 1, -2), *b = LT_T(LT_F32, LT_DIMS(2), 0, 0);
    const lt_op_desc *l1 = lt_op_find("l1_loss");
    assert_non_null(l1);
    lt_arg args[3] = {{.kind = LT_ARG_TENSOR, .t = a}, {.kind = LT_ARG_TENSOR, .t = b}, {.kind = LT_ARG_STRING,
                                                                                          .s = "sum"}};
    lt_arg out[1];
    assert_int_equal(lt_op_call(l1, args, 3, out, 1), 1);
    EXPECT(out[0].t, 3);
    lt_release(out[0].t);
    args[2].s = "batchmean";
    assert_int_equal(lt_op_call(l1, args, 3, out, 1), -1);
    LT_EXPECT_ERROR(LT_ERR_ARGUMENT, "l1_loss: reduction 'batchmean' is not supported, expected 'mean', 'sum' or "
                                     "'none'");
    const lt_op_desc *kl = lt_op_find("kl_div");
    lt_arg kl_args[4] = {args[0], args[1], {.kind = LT_ARG_STRING, .s = "batchmean"}};
    assert_int_equal(lt_op_default(kl, 3, &kl_args[3]), LT_OK);
    assert_int_equal(lt_op_call(kl, kl_args, 4, out, 1), 1);
    lt_release(out[0].t);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        LT_TEST(test_known_values_cpu), LT_TEST(test_known_values_lazy), LT_TEST(test_norm_dtype_gradient),
        LT_TEST(test_errors),           LT_TEST(test_registry_reduction_strings),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
