/* test_torch_semantics.c - calls that follow PyTorch where the library used
 * to refuse them or differ: masked_fill with a mask broadcasting beyond
 * the input, cat with legacy empty 1-D tensors, gather on a 0-d input,
 * unbatched conv2d and pooling, clamp with tensor bounds, clamp with a
 * fractional bound, integer scalars that keep an integer tensor's dtype;
 * each on cpu and
 * on the lazy device (known values; tests/torch_diff checks the same calls
 * against torch itself). */
#include "lt_test.h"

static lt_device dev_of(int k) { return k == 0 ? lt_device_cpu() : lt_device_parse("lazy"); }

static lt_tensor *on(lt_tensor *t, lt_device dev) { return LT_OK_T(lt_to(t, dev)); }

static void test_masked_fill_broadcast(void **state)
{
    (void)state;
    for (int k = 0; k < 2; k++) {
        lt_device d = dev_of(k);
        lt_tensor *x = on(LT_T(LT_F32, LT_DIMS(2), 1, 2), d);
        lt_tensor *m = on(LT_T(LT_BOOL, LT_DIMS(2, 2), 1, 0, 0, 1), d);
        lt_tensor *r = LT_OK_T(lt_masked_fill(x, m, -1));
        LT_ASSERT_SHAPE(r, 2, 2);
        LT_ASSERT_VALUES(r, 0, -1, 2, 1, -1);
    }
}

static void test_cat_legacy_empty(void **state)
{
    (void)state;
    for (int k = 0; k < 2; k++) {
        lt_device d = dev_of(k);
        lt_tensor *e = on(LT_OK_T(lt_zeros((const int64_t[]){0}, 1, LT_F64, lt_device_cpu())), d);
        lt_tensor *a = on(LT_T(LT_F32, LT_DIMS(1, 2), 3, 4), d);
        lt_tensor *ts[3] = {e, a, e};
        lt_tensor *r = LT_OK_T(lt_cat(ts, 3, 1));
        LT_ASSERT_SHAPE(r, 1, 2);
        assert_int_equal(lt_tensor_dtype(r), LT_F64); /* the empty tensors still promote */
        LT_ASSERT_VALUES(r, 0, 3, 4);
        /* a real shape mismatch is still an error */
        lt_tensor *b = on(LT_T(LT_F32, LT_DIMS(2, 1), 3, 4), d);
        lt_tensor *bad[2] = {a, b};
        assert_null(lt_cat(bad, 2, 0));
        lt_clear_error();
    }
}

static void test_gather_zero_dim(void **state)
{
    (void)state;
    for (int k = 0; k < 2; k++) {
        lt_device d = dev_of(k);
        lt_tensor *s = on(LT_OK_T(lt_scalar(5, LT_F32, lt_device_cpu())), d);
        lt_tensor *r = LT_OK_T(lt_gather(s, 0, on(LT_T(LT_I64, LT_DIMS(3), 0, 0, 0), d)));
        LT_ASSERT_SHAPE(r, 3);
        LT_ASSERT_VALUES(r, 0, 5, 5, 5);
    }
    lt_tensor *s = LT_OK_T(lt_scalar(5, LT_F32, lt_device_cpu()));
    assert_null(lt_gather(s, 0, LT_T(LT_I64, LT_DIMS(1), 1))); /* index out of range */
    assert_int_equal(lt_last_status(), LT_ERR_INDEX);
    lt_clear_error();
}

/* Unbatched [C, H, W] inputs give the batch-of-one result without its
 * batch dim. */
static void test_unbatched_nn(void **state)
{
    (void)state;
    for (int k = 0; k < 2; k++) {
        lt_device d = dev_of(k);
        double v[16];
        for (int i = 0; i < 16; i++)
            v[i] = i;
        lt_tensor *x = on(lt_test_tensor(v, LT_DIMS(1, 4, 4), LT_F32), d);
        lt_tensor *w = on(LT_T(LT_F32, LT_DIMS(1, 1, 2, 2), 1, 1, 1, 1), d);
        lt_tensor *c = LT_OK_T(lt_conv2d(x, w, NULL, NULL, NULL, NULL, 1));
        LT_ASSERT_SHAPE(c, 1, 3, 3);
        LT_ASSERT_VALUES(c, 0, 10, 14, 18, 26, 30, 34, 42, 46, 50);
        lt_tensor *idx = NULL;
        lt_tensor *m = LT_OK_T(lt_max_pool2d(x, (const int64_t[]){2, 2}, NULL, NULL, &idx));
        LT_ASSERT_SHAPE(m, 1, 2, 2);
        LT_ASSERT_VALUES(m, 0, 5, 7, 13, 15);
        LT_ASSERT_SHAPE(idx, 1, 2, 2);
        LT_ASSERT_VALUES(idx, 0, 5, 7, 13, 15);
        lt_tensor *a = LT_OK_T(lt_avg_pool2d(x, (const int64_t[]){2, 2}, NULL, NULL, true));
        LT_ASSERT_SHAPE(a, 1, 2, 2);
        LT_ASSERT_VALUES(a, 0, 2.5, 4.5, 10.5, 12.5);
    }
}

static void test_clamp_tensor(void **state)
{
    (void)state;
    for (int k = 0; k < 2; k++) {
        lt_device d = dev_of(k);
        lt_tensor *x = on(LT_T(LT_F32, LT_DIMS(2, 2), -3, 0.5, 2, 9), d);
        lt_tensor *lo = on(LT_T(LT_F32, LT_DIMS(2), -1, 1), d), *hi = on(LT_T(LT_I64, LT_DIMS(2, 1), 0, 5), d);
        LT_ASSERT_VALUES(lt_clamp_tensor(x, lo, hi), 0, -1, 0, 2, 5);
        LT_ASSERT_VALUES(lt_clamp_tensor(x, NULL, hi), 0, -3, 0, 2, 5);
        LT_ASSERT_VALUES(lt_clamp_tensor(x, lo, NULL), 0, -1, 1, 2, 9);
    }
    assert_null(lt_clamp_tensor(LT_T(LT_F32, LT_DIMS(1), 1), NULL, NULL));
    assert_int_equal(lt_last_status(), LT_ERR_NULL);
    lt_clear_error();
}

/* A fractional bound is a Python float: an integer tensor clamped by it
 * gives f32 (and clamp_ refuses, as torch); hardtanh converts its bounds
 * to the integer dtype instead (truncating), as torch. */
static void test_clamp_scalar_bounds(void **state)
{
    (void)state;
    for (int k = 0; k < 2; k++) {
        lt_device d = dev_of(k);
        lt_tensor *x = on(LT_T(LT_I64, LT_DIMS(4), -3, 0, 1, 3), d);
        lt_tensor *c = LT_OK_T(lt_clamp(x, -0.5, 2.0));
        assert_int_equal(lt_tensor_dtype(c), LT_F32);
        LT_ASSERT_VALUES(c, 0, -0.5, 0, 1, 2);
        c = LT_OK_T(lt_clamp(x, -1, 2));
        assert_int_equal(lt_tensor_dtype(c), LT_I64);
        LT_ASSERT_VALUES(c, 0, -1, 0, 1, 2);
        lt_tensor *h = LT_OK_T(lt_hardtanh(x, 0.5, 2.7));
        assert_int_equal(lt_tensor_dtype(h), LT_I64);
        LT_ASSERT_VALUES(h, 0, 0, 0, 1, 2);
        assert_null(lt_clamp_(x, 0.5, 2.0));
        LT_EXPECT_ERROR(LT_ERR_DTYPE, "clamp_: bounds 0.5, 2 on a i64 destination");
        LT_ASSERT_VALUES(x, 0, -3, 0, 1, 3);
    }
}

/* int_tensor + 2 stays an integer tensor; a bool tensor gives i64; a float
 * tensor keeps its dtype; out-of-range values wrap as in torch. */
static void test_integer_scalars(void **state)
{
    (void)state;
    for (int k = 0; k < 2; k++) {
        lt_device d = dev_of(k);
        lt_tensor *i = on(LT_T(LT_I32, LT_DIMS(3), -7, 0, 9), d);
        lt_tensor *r = LT_OK_T(lt_add_iscalar(i, 2));
        assert_int_equal(lt_tensor_dtype(r), LT_I32);
        LT_ASSERT_VALUES(r, 0, -5, 2, 11);
        LT_ASSERT_VALUES(lt_floor_divide_iscalar(i, 2), 0, -4, 0, 4);
        LT_ASSERT_VALUES(lt_remainder_iscalar(i, 4), 0, 1, 0, 1);
        LT_ASSERT_VALUES(lt_rsub_iscalar(i, 1), 0, 8, 1, -8);
        lt_tensor *b = LT_OK_T(lt_mul_iscalar(on(LT_T(LT_BOOL, LT_DIMS(2), 0, 1), d), 3));
        assert_int_equal(lt_tensor_dtype(b), LT_I64);
        LT_ASSERT_VALUES(b, 0, 0, 3);
        lt_tensor *u = LT_OK_T(lt_add_iscalar(on(LT_T(LT_U8, LT_DIMS(2), 1, 250), d), 300));
        assert_int_equal(lt_tensor_dtype(u), LT_U8);
        LT_ASSERT_VALUES(u, 0, 45, 38);
        lt_tensor *f = LT_OK_T(lt_pow_iscalar(on(LT_T(LT_F32, LT_DIMS(2), 2, 0.5), d), -2));
        assert_int_equal(lt_tensor_dtype(f), LT_F32);
        LT_ASSERT_VALUES(f, 0, 0.25, 4);
        lt_tensor *dst = on(LT_T(LT_I64, LT_DIMS(2), 1, 2), d);
        assert_ptr_equal(lt_mul_iscalar_(dst, 5), dst);
        LT_ASSERT_VALUES(dst, 0, 5, 10);
    }
    assert_null(lt_pow_iscalar(LT_T(LT_I64, LT_DIMS(1), 2), -1));
    assert_int_equal(lt_last_status(), LT_ERR_ARGUMENT);
    lt_clear_error();
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        LT_TEST(test_masked_fill_broadcast), LT_TEST(test_cat_legacy_empty), LT_TEST(test_gather_zero_dim),
        LT_TEST(test_unbatched_nn),          LT_TEST(test_clamp_tensor),      LT_TEST(test_integer_scalars),
        LT_TEST(test_clamp_scalar_bounds),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
