/* test_external.c - lt_from_external: cpu tensors over memory the library
 * does not own (the zero-copy path of the Python front end's numpy and
 * DLPack interop). Checks sharing in both directions, strided layouts, the
 * release callback (called once, when the last view dies), and errors. */
#include "lt_test.h"

static int releases;
static void *released_ctx;
static void count_release(void *ctx)
{
    releases++;
    released_ctx = ctx;
}

static void test_external_shares_memory(void **state)
{
    (void)state;
    float data[6] = {1, 2, 3, 4, 5, 6};
    releases = 0;
    lt_tensor *t = LT_OK_T(lt_from_external(data, LT_DIMS(2, 3), NULL, LT_F32, count_release, data));
    LT_ASSERT_SHAPE(t, 2, 3);
    assert_ptr_equal(lt_tensor_data(t), data);
    LT_ASSERT_VALUES(t, 0, 1, 2, 3, 4, 5, 6);
    LT_OK_T(lt_mul_scalar_(t, 10)); /* writes reach the caller's memory */
    assert_float_equal(data[4], 50, 0);
    data[0] = -1; /* and the caller's writes reach the tensor */
    LT_ASSERT_VALUES(lt_sum(t, NULL, 0, false), 0, 199);
    lt_tensor *v = LT_OK_T(lt_retain(lt_select(t, 0, 1)));
    lt_scope_end(); /* t dies; the view keeps the memory */
    lt_scope_begin();
    assert_int_equal(releases, 0);
    LT_ASSERT_VALUES(v, 0, 40, 50, 60);
    lt_release(v);
    assert_int_equal(releases, 1);
    assert_ptr_equal(released_ctx, data);
}

static void test_external_strided(void **state)
{
    (void)state;
    /* a [3, 2] column view of a row-major [2, 3] int64 array: strides (1, 3) */
    int64_t data[6] = {0, 1, 2, 3, 4, 5};
    lt_tensor *t = LT_OK_T(lt_from_external(data, LT_DIMS(3, 2), (int64_t[]){1, 3}, LT_I64, NULL, NULL));
    assert_false(lt_tensor_is_contiguous(t));
    LT_ASSERT_VALUES(t, 0, 0, 3, 1, 4, 2, 5);
    LT_ASSERT_VALUES(lt_matmul(lt_to_dtype(t, LT_F32), lt_ones(LT_DIMS(2), LT_F32, lt_test_cpu())), 0, 3, 5, 7);
    /* zero strides (a broadcast row) read fine */
    lt_tensor *b = LT_OK_T(lt_from_external(data, LT_DIMS(2, 3), (int64_t[]){0, 1}, LT_I64, NULL, NULL));
    LT_ASSERT_VALUES(b, 0, 0, 1, 2, 0, 1, 2);
    /* no elements, no data */
    LT_ASSERT_SHAPE(LT_OK_T(lt_from_external(NULL, LT_DIMS(0, 4), NULL, LT_F64, NULL, NULL)), 0, 4);
}

static void test_external_lazy_copy(void **state)
{
    (void)state;
    double data[3] = {1, 2, 3};
    lt_tensor *t = LT_OK_T(lt_from_external(data, LT_DIMS(3), NULL, LT_F64, NULL, NULL));
    lt_device lazy = lt_device_parse("lazy");
    lt_tensor *z = LT_OK_T(lt_add_scalar(lt_to(t, lazy), 1));
    data[0] = 100; /* the lazy tensor got a copy at the transfer */
    LT_ASSERT_VALUES(z, 0, 2, 3, 4);
}

static void test_external_errors(void **state)
{
    (void)state;
    float data[4] = {0};
    releases = 0;
    assert_null(lt_from_external(data, LT_DIMS(2, 2), (int64_t[]){-1, 1}, LT_F32, count_release, NULL));
    LT_EXPECT_ERROR(LT_ERR_UNSUPPORTED, "from_external: stride -1 of dim 0 is negative");
    assert_null(lt_from_external((char *)data + 1, LT_DIMS(2), NULL, LT_F32, count_release, NULL));
    LT_EXPECT_ERROR(LT_ERR_ARGUMENT, "is not aligned to the 4-byte elements of f32");
    assert_null(lt_from_external(NULL, LT_DIMS(2), NULL, LT_F32, count_release, NULL));
    LT_EXPECT_ERROR(LT_ERR_NULL, "from_external: data is NULL");
    assert_null(lt_from_external(data, LT_DIMS(2, 2), (int64_t[]){INT64_MAX / 2, 1}, LT_F32, NULL, NULL));
    LT_EXPECT_ERROR(LT_ERR_SHAPE, "span more than 2^59 bytes");
    assert_null(lt_from_external(data, LT_DIMS(-2), NULL, LT_F32, NULL, NULL));
    assert_int_equal(lt_last_status(), LT_ERR_SHAPE);
    lt_clear_error();
    assert_int_equal(releases, 0); /* refused memory stays the caller's */
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        LT_TEST(test_external_shares_memory),
        LT_TEST(test_external_strided),
        LT_TEST(test_external_lazy_copy),
        LT_TEST(test_external_errors),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
