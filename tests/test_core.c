/* test_core.c - handles, scopes, errors, dtypes, devices, allocator,
 * factories, copies and value access. */
#include "lt_test.h"

#include "api/api.h"

static void test_dtype_names_and_sizes(void **state)
{
    (void)state;
    assert_string_equal(lt_dtype_name(LT_F32), "f32");
    assert_string_equal(lt_dtype_name(LT_BF16), "bf16");
    assert_string_equal(lt_dtype_name((lt_dtype)99), "invalid");
    assert_int_equal(lt_dtype_size(LT_F64), 8);
    assert_int_equal(lt_dtype_size(LT_BOOL), 1);
    assert_int_equal(lt_dtype_size(LT_F16), 2);
    assert_true(lt_dtype_is_floating(LT_BF16));
    assert_false(lt_dtype_is_floating(LT_I64));
}

static void test_promotion_matches_pytorch(void **state)
{
    (void)state;
    assert_int_equal(lt_promote_types(LT_I32, LT_F32), LT_F32);
    assert_int_equal(lt_promote_types(LT_U8, LT_I32), LT_I32);
    assert_int_equal(lt_promote_types(LT_BOOL, LT_U8), LT_U8);
    assert_int_equal(lt_promote_types(LT_I64, LT_F16), LT_F16);
    assert_int_equal(lt_promote_types(LT_BF16, LT_F16), LT_F32);
    assert_int_equal(lt_promote_types(LT_F32, LT_F64), LT_F64);
    assert_int_equal(lt_promote_types(LT_I32, LT_I64), LT_I64);
}

static void test_half_conversions(void **state)
{
    (void)state;
    float values[] = {0.0f, 1.0f, -2.5f, 65504.0f, 1.0e-5f, 3.14159f};
    for (size_t i = 0; i < sizeof values / sizeof values[0]; i++) {
        float f = values[i];
        float h = lt_f16_to_f32(lt_f32_to_f16(f));
        assert_true(fabsf(h - f) <= fabsf(f) * 1e-3f + 1e-7f);
        float b = lt_bf16_to_f32(lt_f32_to_bf16(f));
        assert_true(fabsf(b - f) <= fabsf(f) * 8e-3f);
    }
    /* exact known encodings */
    assert_int_equal(lt_f32_to_f16(1.0f), 0x3c00);
    assert_int_equal(lt_f32_to_f16(-2.0f), 0xc000);
    assert_int_equal(lt_f32_to_f16(1e6f), 0x7c00); /* overflow to inf */
    assert_int_equal(lt_f32_to_bf16(1.0f), 0x3f80);
    assert_true(isnan(lt_bf16_to_f32(lt_f32_to_bf16(NAN))));
    assert_true(isnan(lt_f16_to_f32(lt_f32_to_f16(NAN))));
    /* 2^-24 is the smallest f16 subnormal */
    assert_int_equal(lt_f32_to_f16(5.9604645e-8f), 0x0001);
    assert_true(lt_f16_to_f32(0x0001) == 5.9604645e-8f);
}

static void test_device_parse(void **state)
{
    (void)state;
    lt_device d = lt_device_parse("cpu");
    assert_int_equal(d.kind, LT_DEVICE_CPU);
    d = lt_device_parse("cpu:0");
    assert_int_equal(d.kind, LT_DEVICE_CPU);
    d = lt_device_parse("gpu");
    assert_int_equal(d.kind, LT_DEVICE_INVALID);
    LT_EXPECT_ERROR(LT_ERR_DEVICE, "unknown device \"gpu\"");
    d = lt_device_parse("cpu:x");
    assert_int_equal(d.kind, LT_DEVICE_INVALID);
    LT_EXPECT_ERROR(LT_ERR_DEVICE, "cpu:x");
    d = lt_device_parse(NULL);
    LT_EXPECT_ERROR(LT_ERR_NULL, "NULL");
    char buf[32];
    assert_string_equal(lt_device_str(lt_device_cpu(), buf, sizeof buf), "cpu:0");
}

static void test_factories_values(void **state)
{
    (void)state;
    lt_device cpu = lt_test_cpu();
    int64_t dims[2] = {2, 3};
    lt_tensor *z = LT_OK_T(lt_zeros(dims, 2, LT_F32, cpu));
    LT_ASSERT_SHAPE(z, 2, 3);
    LT_ASSERT_VALUES(z, 0, 0, 0, 0, 0, 0, 0);
    LT_ASSERT_VALUES(lt_ones(dims, 2, LT_I64, cpu), 0, 1, 1, 1, 1, 1, 1);
    LT_ASSERT_VALUES(lt_full(dims, 2, 2.5, LT_F64, cpu), 0, 2.5, 2.5, 2.5, 2.5, 2.5, 2.5);
    LT_ASSERT_VALUES(lt_full(dims, 2, 2.5, LT_BF16, cpu), 0, 2.5, 2.5, 2.5, 2.5, 2.5, 2.5);
    LT_ASSERT_VALUES(lt_arange(0, 5, 1, LT_I64, cpu), 0, 0, 1, 2, 3, 4);
    LT_ASSERT_VALUES(lt_arange(1, 2, 0.25, LT_F32, cpu), 1e-7, 1, 1.25, 1.5, 1.75);
    LT_ASSERT_VALUES(lt_arange(5, 0, -2, LT_I32, cpu), 0, 5, 3, 1);
    /* integer dtypes truncate start and step (i64 the end too), as torch */
    LT_ASSERT_VALUES(lt_arange(0.0, -8.000001, -4.0, LT_I64, cpu), 0, 0, -4);
    LT_ASSERT_VALUES(lt_arange(0.1, -7.9, -4, LT_I64, cpu), 0, 0, -4);
    LT_ASSERT_VALUES(lt_arange(0.0, -8.000001, -4.0, LT_I32, cpu), 0, 0, -4, -8);
    LT_ASSERT_VALUES(lt_arange(0.5, 5.7, 1.5, LT_I64, cpu), 0, 0, 1, 2, 3, 4);
    LT_ASSERT_VALUES(lt_arange(0.5, 5.7, 1.5, LT_I32, cpu), 0, 0, 1, 2, 3);
    assert_null(lt_arange(0, 3, 0.5, LT_I64, cpu));
    assert_int_equal(lt_last_status(), LT_ERR_ARGUMENT);
    lt_clear_error();
    LT_ASSERT_VALUES(lt_linspace(0, 1, 5, LT_F64, cpu), 1e-15, 0, 0.25, 0.5, 0.75, 1);
    LT_ASSERT_VALUES(lt_linspace(-1, 1, 1, LT_F32, cpu), 0, -1);
    assert_int_equal(lt_tensor_numel(LT_OK_T(lt_linspace(0, 1, 0, LT_F32, cpu))), 0);
    LT_ASSERT_VALUES(lt_eye(2, 3, LT_F32, cpu), 0, 1, 0, 0, 0, 1, 0);
    LT_ASSERT_VALUES(lt_eye(3, 2, LT_BOOL, cpu), 0, 1, 0, 0, 1, 0, 0);
    lt_tensor *s = LT_OK_T(lt_scalar(7, LT_I32, cpu));
    assert_int_equal(lt_tensor_ndim(s), 0);
    assert_int_equal(lt_tensor_numel(s), 1);
    LT_ASSERT_VALUES(lt_zeros_like(z), 0, 0, 0, 0, 0, 0, 0);
    LT_ASSERT_VALUES(lt_full_like(z, -1), 0, -1, -1, -1, -1, -1, -1);
    assert_int_equal(lt_tensor_dtype(lt_ones_like(s)), LT_I32);
    assert_int_equal(lt_tensor_numel(LT_OK_T(lt_empty_like(z))), 6);
}

static void test_from_data_copies(void **state)
{
    (void)state;
    float data[4] = {1, 2, 3, 4};
    int64_t dims[2] = {2, 2};
    lt_tensor *t = LT_OK_T(lt_from_data(data, dims, 2, LT_F32, lt_test_cpu()));
    data[0] = 100; /* the tensor holds its own copy */
    LT_ASSERT_VALUES(t, 0, 1, 2, 3, 4);
    float out[4];
    assert_int_equal(lt_copy_to_host(t, out, sizeof out), LT_OK);
    assert_true(out[3] == 4.0f);
    assert_int_equal(lt_copy_to_host(t, out, 3), LT_ERR_ARGUMENT);
    LT_EXPECT_ERROR(LT_ERR_ARGUMENT, "too small");
    lt_tensor *e = LT_OK_T(lt_from_data(NULL, (int64_t[]){0, 3}, 2, LT_F32, lt_test_cpu()));
    assert_int_equal(lt_tensor_numel(e), 0);
    assert_null(lt_from_data(NULL, dims, 2, LT_F32, lt_test_cpu()));
    LT_EXPECT_ERROR(LT_ERR_NULL, "data is NULL");
}

static void test_item(void **state)
{
    (void)state;
    double v = 0;
    assert_int_equal(lt_item(LT_OK_T(lt_scalar(3.5, LT_F32, lt_test_cpu())), &v), LT_OK);
    assert_true(v == 3.5);
    int64_t iv = 0;
    assert_int_equal(lt_item_int(LT_OK_T(lt_scalar(-9, LT_I64, lt_test_cpu())), &iv), LT_OK);
    assert_int_equal(iv, -9);
    assert_int_equal(lt_item_int(LT_OK_T(lt_full((int64_t[]){1, 1}, 2, 1, LT_BOOL, lt_test_cpu())), &iv),
                     LT_OK);
    assert_int_equal(iv, 1);
    int64_t big = ((int64_t)1 << 60) + 3; /* exact for i64, not for double */
    lt_tensor *b = LT_OK_T(lt_from_data(&big, NULL, 0, LT_I64, lt_test_cpu()));
    assert_int_equal(lt_item_int(b, &iv), LT_OK);
    assert_true(iv == big);
    lt_tensor *two = LT_OK_T(lt_zeros((int64_t[]){2}, 1, LT_F32, lt_test_cpu()));
    assert_int_equal(lt_item(two, &v), LT_ERR_SHAPE);
    LT_EXPECT_ERROR(LT_ERR_SHAPE, "item: tensor of shape [2] has 2 elements");
    assert_int_equal(lt_item_int(LT_OK_T(lt_scalar(1.5, LT_F32, lt_test_cpu())), &iv), LT_ERR_DTYPE);
    LT_EXPECT_ERROR(LT_ERR_DTYPE, "floating");
}

static void test_cast_all_pairs(void **state)
{
    (void)state;
    const double src[4] = {0, 1, 2, 100};
    for (int a = 0; a < LT_NUM_DTYPES; a++) {
        for (int b = 0; b < LT_NUM_DTYPES; b++) {
            lt_dtype from = (lt_dtype)a, to = (lt_dtype)b;
            double vals[4];
            for (int i = 0; i < 4; i++)
                vals[i] = from == LT_BOOL ? (src[i] != 0) : src[i];
            lt_tensor *t = LT_OK_T(lt_test_tensor(vals, (int64_t[]){4}, 1, from));
            lt_tensor *c = LT_OK_T(lt_to_dtype(t, to));
            assert_int_equal(lt_tensor_dtype(c), to);
            double expect[4];
            for (int i = 0; i < 4; i++)
                expect[i] = to == LT_BOOL ? (vals[i] != 0) : vals[i];
            LT_ASSERT_ARRAY(c, expect, 4, 0);
        }
    }
    /* float -> int truncates toward zero; -> bool is "nonzero" */
    lt_tensor *f = LT_T(LT_F32, LT_DIMS(4), -1.7, -0.2, 0.0, 2.9);
    LT_ASSERT_VALUES(lt_to_dtype(f, LT_I32), 0, -1, 0, 0, 2);
    LT_ASSERT_VALUES(lt_to_dtype(f, LT_BOOL), 0, 1, 1, 0, 1);
}

static void test_copy_and_fill(void **state)
{
    (void)state;
    lt_tensor *dst = LT_OK_T(lt_zeros((int64_t[]){2, 3}, 2, LT_F64, lt_test_cpu()));
    lt_tensor *row = LT_T(LT_I32, LT_DIMS(3), 1, 2, 3);
    assert_ptr_equal(lt_copy_(dst, row), dst); /* broadcast + cast */
    LT_ASSERT_VALUES(dst, 0, 1, 2, 3, 1, 2, 3);
    assert_ptr_equal(lt_fill_(dst, 4), dst);
    LT_ASSERT_VALUES(dst, 0, 4, 4, 4, 4, 4, 4);
    assert_ptr_equal(lt_zero_(dst), dst);
    LT_ASSERT_VALUES(dst, 0, 0, 0, 0, 0, 0, 0);
    lt_tensor *wrong = LT_T(LT_F32, LT_DIMS(2), 1, 2);
    assert_null(lt_copy_(dst, wrong));
    LT_EXPECT_ERROR(LT_ERR_SHAPE, "copy_: shapes [2, 3] and [2] are not broadcastable");
    lt_tensor *c = LT_OK_T(lt_clone(row));
    assert_false(lt_tensor_shares_storage(c, row));
    LT_ASSERT_VALUES(c, 0, 1, 2, 3);
    lt_tensor *same = LT_OK_T(lt_contiguous(row));
    assert_true(lt_tensor_shares_storage(same, row));
    lt_tensor *moved = LT_OK_T(lt_to(row, lt_device_cpu()));
    assert_false(lt_tensor_shares_storage(moved, row));
}

static void test_scopes_and_refcounts(void **state)
{
    (void)state;
    int64_t base = lt_live_tensor_count();
    lt_tensor *kept = NULL;
    lt_scope_begin();
    for (int i = 0; i < 10; i++)
        LT_OK_T(lt_zeros((int64_t[]){4}, 1, LT_F32, lt_test_cpu()));
    kept = lt_keep(LT_OK_T(lt_ones((int64_t[]){4}, 1, LT_F32, lt_test_cpu())));
    assert_int_equal(lt_live_tensor_count(), base + 11);
    assert_int_equal(lt_scope_end(), LT_OK);
    assert_int_equal(lt_live_tensor_count(), base + 1); /* only the kept one */
    LT_ASSERT_VALUES(kept, 0, 1, 1, 1, 1);
    assert_int_equal(lt_tensor_refcount(kept), 1);
    lt_retain(kept);
    assert_int_equal(lt_tensor_refcount(kept), 2);
    lt_release(kept);
    assert_int_equal(lt_tensor_refcount(kept), 1);
}

static void test_no_scope_caller_owns(void **state)
{
    (void)state;
    lt_scope_end(); /* leave the test's scope: the caller owns results now */
    assert_int_equal(lt_scope_depth(), 0);
    int64_t base = lt_live_tensor_count();
    lt_tensor *t = LT_OK_T(lt_ones((int64_t[]){3}, 1, LT_F32, lt_test_cpu()));
    assert_int_equal(lt_live_tensor_count(), base + 1);
    lt_release(t);
    assert_int_equal(lt_live_tensor_count(), base);
    assert_int_equal(lt_scope_end(), LT_ERR_STATE);
    LT_EXPECT_ERROR(LT_ERR_STATE, "no scope is open");
    lt_scope_begin();
}

static void test_use_after_release_is_reported(void **state)
{
    (void)state;
    lt_tensor *t = lt_retain(LT_OK_T(lt_ones((int64_t[]){3}, 1, LT_F32, lt_test_cpu())));
    lt_scope_end();
    lt_release(t); /* last reference */
    assert_int_equal(lt_tensor_ndim(t), -1);
    LT_EXPECT_ERROR(LT_ERR_RELEASED, "used after its last reference was released");
    assert_null(lt_clone(t));
    LT_EXPECT_ERROR(LT_ERR_RELEASED, "clone: argument 0");
    lt_release(t);
    LT_EXPECT_ERROR(LT_ERR_RELEASED, "release");
    lt_scope_begin();
    /* over-release of a scope-owned tensor is reported at scope end */
    lt_scope_begin();
    lt_tensor *u = LT_OK_T(lt_zeros((int64_t[]){1}, 1, LT_F32, lt_test_cpu()));
    lt_release(u);
    assert_int_equal(lt_scope_end(), LT_ERR_RELEASED);
    LT_EXPECT_ERROR(LT_ERR_RELEASED, "one release too many");
}

static void test_null_propagates_first_error(void **state)
{
    (void)state;
    lt_tensor *bad = lt_zeros((int64_t[]){-2}, 1, LT_F32, lt_test_cpu());
    assert_null(bad);
    assert_null(lt_clone(lt_to_dtype(bad, LT_F64)));
    LT_EXPECT_ERROR(LT_ERR_SHAPE, "negative size -2 at dim 0 of shape [-2]");
    assert_null(lt_clone(NULL));
    LT_EXPECT_ERROR(LT_ERR_NULL, "clone: argument 0 is NULL");
}

static void test_bad_factory_arguments(void **state)
{
    (void)state;
    lt_device cpu = lt_test_cpu();
    int64_t huge[3] = {1 << 20, 1 << 20, 1 << 20};
    assert_null(lt_empty(huge, 3, LT_F32, cpu));
    LT_EXPECT_ERROR(LT_ERR_MEMORY, "larger than this machine's memory");
    int64_t overflow[4] = {INT64_MAX / 2, 4, 4, 4};
    assert_null(lt_zeros(overflow, 4, LT_F64, cpu));
    LT_EXPECT_ERROR(LT_ERR_MEMORY, "larger than this machine's memory");
    int64_t nine[9] = {1, 1, 1, 1, 1, 1, 1, 1, 1};
    assert_null(lt_zeros(nine, 9, LT_F32, cpu));
    LT_EXPECT_ERROR(LT_ERR_SHAPE, "9 dims requested");
    assert_null(lt_zeros(NULL, 2, LT_F32, cpu));
    LT_EXPECT_ERROR(LT_ERR_NULL, "dims is NULL");
    assert_null(lt_zeros(nine, 2, (lt_dtype)42, cpu));
    LT_EXPECT_ERROR(LT_ERR_DTYPE, "invalid dtype 42");
    lt_device bad = {LT_DEVICE_INVALID, 0};
    assert_null(lt_zeros(nine, 2, LT_F32, bad));
    LT_EXPECT_ERROR(LT_ERR_DEVICE, "invalid device");
    assert_null(lt_arange(0, 10, 0, LT_F32, cpu));
    LT_EXPECT_ERROR(LT_ERR_ARGUMENT, "step must be nonzero");
    assert_null(lt_arange(0, 10, -1, LT_F32, cpu));
    LT_EXPECT_ERROR(LT_ERR_ARGUMENT, "goes away from end");
    assert_null(lt_arange(0, INFINITY, 1, LT_F32, cpu));
    LT_EXPECT_ERROR(LT_ERR_ARGUMENT, "finite");
    assert_null(lt_linspace(0, 1, -1, LT_F32, cpu));
    LT_EXPECT_ERROR(LT_ERR_ARGUMENT, "steps is -1");
    assert_null(lt_eye(-1, 2, LT_F32, cpu));
    LT_EXPECT_ERROR(LT_ERR_SHAPE, "negative size");
}

static int handler_calls;
static void count_errors(lt_status s, const char *msg, void *user)
{
    (void)s, (void)msg;
    *(int *)user += 1;
}

static void test_error_handler(void **state)
{
    (void)state;
    handler_calls = 0;
    lt_set_error_handler(count_errors, &handler_calls);
    assert_null(lt_zeros((int64_t[]){-1}, 1, LT_F32, lt_test_cpu()));
    lt_set_error_handler(NULL, NULL);
    assert_int_equal(handler_calls, 1);
    lt_clear_error();
    assert_int_equal(lt_last_status(), LT_OK);
    assert_string_equal(lt_last_error(), "");
    assert_string_equal(lt_status_name(LT_ERR_SHAPE), "LT_ERR_SHAPE");
}

static void test_metadata_getters(void **state)
{
    (void)state;
    lt_tensor *t = LT_OK_T(lt_zeros((int64_t[]){2, 3, 4}, 3, LT_F32, lt_test_cpu()));
    assert_int_equal(lt_tensor_ndim(t), 3);
    assert_int_equal(lt_tensor_size(t, -1), 4);
    assert_int_equal(lt_tensor_size(t, 0), 2);
    assert_int_equal(lt_tensor_size(t, 3), -1);
    LT_EXPECT_ERROR(LT_ERR_INDEX, "dim 3 out of range for shape [2, 3, 4]");
    assert_int_equal(lt_tensor_strides(t)[0], 12);
    assert_int_equal(lt_tensor_strides(t)[2], 1);
    assert_int_equal(lt_tensor_offset(t), 0);
    assert_true(lt_tensor_is_contiguous(t));
    assert_int_equal(lt_tensor_device(t).kind, LT_DEVICE_CPU);
    assert_non_null(lt_tensor_data(t));
    assert_int_equal(lt_tensor_ndim(NULL), -1);
    LT_EXPECT_ERROR(LT_ERR_NULL, "tensor_ndim: argument 0 is NULL");
}

/* Steady-state allocation of same-sized tensors takes no fresh OS memory. */
static void test_allocator_reuses_buffers(void **state)
{
    (void)state;
    int64_t dims[1] = {1 << 20};
    for (int i = 0; i < 2; i++) { /* warm up */
        lt_scope_begin();
        LT_OK_T(lt_zeros(dims, 1, LT_F32, lt_test_cpu()));
        LT_OK_T(lt_ones(dims, 1, LT_F32, lt_test_cpu()));
        lt_scope_end();
    }
    lt_mem_stats before, after;
    lt_mem_stats_get(&before);
    for (int i = 0; i < 20; i++) {
        lt_scope_begin();
        LT_OK_T(lt_zeros(dims, 1, LT_F32, lt_test_cpu()));
        LT_OK_T(lt_ones(dims, 1, LT_F32, lt_test_cpu()));
        lt_scope_end();
    }
    lt_mem_stats_get(&after);
    assert_int_equal(after.os_allocs, before.os_allocs);
    assert_true(after.cache_hits >= before.cache_hits + 40);
    assert_true(after.bytes_cached >= 2 * (4 << 20));
    lt_mem_reset_peak();
    lt_mem_stats_get(&after);
    assert_int_equal(after.peak_bytes, after.bytes_in_use);
    lt_mem_trim();
    lt_mem_stats_get(&after);
    assert_int_equal(after.bytes_cached, 0);
}

static void test_version_and_threads(void **state)
{
    (void)state;
    assert_string_equal(lt_version(), "0.1.0");
    int n = lt_get_num_threads();
    lt_set_num_threads(1);
    assert_int_equal(lt_get_num_threads(), 1);
    lt_set_num_threads(n);
    assert_int_equal(lt_get_num_threads(), n);
}

/* The internal dispatcher takes NULL attributes as "none", like its one-
 * and two-input forms (it once read through the NULL pointer). */
static void test_dispatch_without_attributes(void **state)
{
    (void)state;
    lt_tensor *x = LT_T(LT_F32, LT_DIMS(3), 1, -2, 3);
    lt_tensor *in[1] = {x};
    LT_ASSERT_VALUES(lt_call(LT_OP_NEG, in, 1, NULL, NULL), 0, -1, 2, -3);
    lt_tensor *pair[2] = {x, x};
    LT_ASSERT_VALUES(lt_call(LT_OP_ADD, pair, 2, NULL, NULL), 0, 2, -4, 6);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        LT_TEST(test_dtype_names_and_sizes),   LT_TEST(test_promotion_matches_pytorch),
        LT_TEST(test_half_conversions),        LT_TEST(test_device_parse),
        LT_TEST(test_factories_values),        LT_TEST(test_from_data_copies),
        LT_TEST(test_item),                    LT_TEST(test_cast_all_pairs),
        LT_TEST(test_copy_and_fill),           LT_TEST(test_scopes_and_refcounts),
        LT_TEST(test_no_scope_caller_owns),    LT_TEST(test_use_after_release_is_reported),
        LT_TEST(test_null_propagates_first_error), LT_TEST(test_bad_factory_arguments),
        LT_TEST(test_error_handler),           LT_TEST(test_metadata_getters),
        LT_TEST(test_allocator_reuses_buffers), LT_TEST(test_version_and_threads),
        LT_TEST(test_dispatch_without_attributes),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
