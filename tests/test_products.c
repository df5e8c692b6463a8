/* test_products.c - the products built on matmul (src/api/api_linalg.c):
 * outer, dot, vdot, addmm, baddbmm, addbmm and kron against values worked
 * out by hand on every device (tests/torch_diff compares them with torch
 * on many more inputs), integer operands keeping their dtype, beta 0
 * ignoring a NaN input, addmm's scaling fused after the product on the
 * lazy device, and every argument error. */
#include "lt_test.h"

#include <math.h>

static lt_tensor *on(lt_tensor *t, lt_device dev) { return LT_OK_T(lt_to(t, dev)); }

static void check_values(lt_device dev)
{
    lt_tensor *a = on(LT_T(LT_F32, LT_DIMS(2), 1, 2), dev), *b = on(LT_T(LT_F32, LT_DIMS(3), 3, 4, 5), dev);
    LT_ASSERT_VALUES(lt_outer(a, b), 0, 3, 4, 5, 6, 8, 10);
    lt_tensor *c = on(LT_T(LT_F32, LT_DIMS(2), -3, 0.5), dev);
    LT_ASSERT_VALUES(lt_dot(a, c), 0, -2);
    LT_ASSERT_VALUES(lt_vdot(a, c), 0, -2);
    /* [[1, 2], [3, 4]] @ [[1, 0], [0, 2]] = [[1, 4], [3, 8]] */
    lt_tensor *m1 = on(LT_T(LT_F32, LT_DIMS(2, 2), 1, 2, 3, 4), dev), *m2 = on(LT_T(LT_F32, LT_DIMS(2, 2), 1, 0, 0, 2), dev);
    lt_tensor *row = on(LT_T(LT_F32, LT_DIMS(2), 10, 20), dev);
    LT_ASSERT_VALUES(lt_addmm(row, m1, m2, 0.5, 2.0), 1e-6, 7, 18, 11, 26);
    lt_tensor *nan = on(LT_T(LT_F32, LT_DIMS(1), NAN), dev);
    LT_ASSERT_VALUES(lt_addmm(nan, m1, m2, 0.0, 1.0), 0, 1, 4, 3, 8);
    /* batch of the same pair twice: baddbmm keeps both, addbmm sums them */
    lt_tensor *b1 = lt_stack((lt_tensor *[]){m1, m1}, 2, 0), *b2 = lt_stack((lt_tensor *[]){m2, m2}, 2, 0);
    LT_ASSERT_VALUES(lt_addbmm(row, b1, b2, 1.0, 1.0), 1e-6, 12, 28, 16, 36);
    LT_ASSERT_SHAPE(lt_baddbmm(row, b1, b2, 1.0, 1.0), 2, 2, 2);
    /* kron([[1, 2]], [[0, 1], [1, 0]]) = [[0, 1, 0, 2], [1, 0, 2, 0]] */
    lt_tensor *k1 = on(LT_T(LT_F32, LT_DIMS(1, 2), 1, 2), dev), *k2 = on(LT_T(LT_F32, LT_DIMS(2, 2), 0, 1, 1, 0), dev);
    LT_ASSERT_VALUES(lt_kron(k1, k2), 0, 0, 1, 0, 2, 1, 0, 2, 0);
    LT_ASSERT_SHAPE(lt_kron(k1, k2), 2, 4);
    /* integers stay integers, with integral scales */
    lt_tensor *i1 = LT_OK_T(lt_to_dtype(m1, LT_I64)), *i2 = LT_OK_T(lt_to_dtype(m2, LT_I64));
    lt_tensor *r = LT_OK_T(lt_addmm(LT_OK_T(lt_to_dtype(row, LT_I64)), i1, i2, 2.0, 3.0));
    assert_int_equal(lt_tensor_dtype(r), LT_I64);
    LT_ASSERT_VALUES(r, 0, 23, 52, 29, 64);
}

static void test_values_on_every_device(void **state)
{
    (void)state;
    const char *backends[] = {NULL, "interp", "cpu"};
    for (int i = 0; i < 3; i++) {
        if (backends[i])
            assert_int_equal(lt_lazy_set_backend(backends[i]), LT_OK);
        print_message("on %s\n", backends[i] ? backends[i] : "cpu device");
        lt_scope_begin();
        check_values(backends[i] ? lt_device_parse("lazy") : lt_device_cpu());
        assert_int_equal(lt_scope_end(), LT_OK);
    }
}

/* On the lazy device addmm is the product (an eager call) and fused
 * kernels for the scaling and the added input. */
static void test_addmm_fuses_on_lazy(void **state)
{
    (void)state;
    assert_int_equal(lt_lazy_set_backend("cpu"), LT_OK);
    lt_device lazy = lt_device_parse("lazy");
    lt_tensor *x = lt_persist(LT_OK_T(lt_randn((int64_t[]){8, 16}, 2, LT_F32, lazy)));
    lt_tensor *w = lt_persist(LT_OK_T(lt_randn((int64_t[]){16, 4}, 2, LT_F32, lazy)));
    lt_tensor *bias = lt_persist(LT_OK_T(lt_randn((int64_t[]){4}, 1, LT_F32, lazy)));
    assert_int_equal(lt_mark_step(), LT_OK);
    lt_metrics_reset();
    lt_tensor *y = LT_OK_T(lt_addmm(bias, x, w, 0.5, 2.0));
    assert_int_equal(lt_mark_step(), LT_OK);
    assert_true(lt_metrics_counter("Kernels") <= 2); /* the scaled input may be a kernel of its own shape */
    assert_int_equal(lt_metrics_counter("KernelCalls"), 1);
    lt_release(y);
    lt_release(x);
    lt_release(w);
    lt_release(bias);
}

static void test_bad_arguments(void **state)
{
    (void)state;
    lt_device cpu = lt_device_cpu();
    lt_tensor *v3 = LT_T(LT_F32, LT_DIMS(3), 1, 2, 3), *v2 = LT_T(LT_F32, LT_DIMS(2), 1, 2);
    lt_tensor *m = LT_OK_T(lt_ones((int64_t[]){2, 3}, 2, LT_F32, cpu));
    lt_tensor *d = LT_OK_T(lt_ones((int64_t[]){3}, 1, LT_F64, cpu));
    assert_null(lt_outer(m, v3));
    LT_EXPECT_ERROR(LT_ERR_SHAPE, "outer: a has shape [2, 3], expected 1 dims");
    assert_null(lt_dot(v3, v2));
    LT_EXPECT_ERROR(LT_ERR_SHAPE, "dot: a has 3 elements and b 2, expected equal lengths");
    assert_null(lt_dot(v3, d));
    LT_EXPECT_ERROR(LT_ERR_DTYPE, "dot: the operands have dtypes f32 and f64, expected one dtype");
    assert_null(lt_addmm(v2, m, m, 1, 1));
    LT_EXPECT_ERROR(LT_ERR_SHAPE, "addmm: cannot multiply [2, 3] by [2, 3]");
    lt_tensor *mt = LT_OK_T(lt_transpose(m, 0, 1));
    assert_null(lt_addmm(v3, m, mt, 1, 1));
    LT_EXPECT_ERROR(LT_ERR_SHAPE, "addmm: input has shape [3], expected a shape that broadcasts to the product's [2, 2]");
    assert_null(lt_addmm(NULL, m, mt, 1, 1));
    LT_EXPECT_ERROR(LT_ERR_NULL, "addmm");
    lt_tensor *im = LT_OK_T(lt_to_dtype(m, LT_I64)), *imt = LT_OK_T(lt_to_dtype(mt, LT_I64));
    assert_null(lt_addmm(LT_OK_T(lt_to_dtype(v2, LT_I64)), im, imt, 0.5, 1));
    LT_EXPECT_ERROR(LT_ERR_ARGUMENT, "addmm: beta is 0.5, expected an integer for i64 operands");
    assert_null(lt_baddbmm(v2, m, mt, 1, 1));
    LT_EXPECT_ERROR(LT_ERR_SHAPE, "baddbmm: the first matrix has shape [2, 3], expected 3 dims");
    lt_tensor *b1 = LT_OK_T(lt_ones((int64_t[]){2, 2, 3}, 3, LT_F32, cpu));
    lt_tensor *b2 = LT_OK_T(lt_ones((int64_t[]){3, 3, 2}, 3, LT_F32, cpu));
    assert_null(lt_addbmm(v2, b1, b2, 1, 1));
    LT_EXPECT_ERROR(LT_ERR_SHAPE, "addbmm: cannot multiply [2, 2, 3] by [3, 3, 2]");
    lt_tensor *five = LT_OK_T(lt_ones((int64_t[]){1, 1, 1, 1, 1}, 5, LT_F32, cpu));
    assert_null(lt_kron(five, v2));
    LT_EXPECT_ERROR(LT_ERR_SHAPE, "kron: operands of 5 and 1 dims need 10 interleaved dims, more than 8");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        LT_TEST(test_values_on_every_device),
        LT_TEST(test_addmm_fuses_on_lazy),
        LT_TEST(test_bad_arguments),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
