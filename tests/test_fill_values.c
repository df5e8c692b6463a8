/* test_fill_values.c - a fill value that an integer dtype cannot hold (NaN,
 * an infinity, out of range) is refused by full, full_like, scalar, fill_
 * and masked_fill with a clear error, as PyTorch refuses it, instead of an
 * undefined float-to-integer conversion; values in range still work. Each
 * case runs on cpu and on the lazy device with both backends. */
#include "lt_test.h"

typedef void (*device_case)(lt_device dev);

static void on_every_device(device_case body)
{
    lt_scope_begin();
    body(lt_device_cpu());
    lt_scope_end();
    static const char *const backends[] = {"interp", "cpu"};
    for (int b = 0; b < 2; b++) {
        if (lt_lazy_set_backend(backends[b]) != LT_OK) {
            print_message("lazy backend %s unavailable (%s): skipped\n", backends[b], lt_last_error());
            lt_clear_error();
            continue;
        }
        lt_scope_begin();
        body(lt_device_parse("lazy"));
        lt_scope_end();
    }
    assert_int_equal(lt_lazy_set_backend("interp"), LT_OK);
}

static void assert_values(lt_tensor *t, double expected, int64_t n)
{
    double v[4];
    assert_true(n <= 4);
    lt_tensor *f = LT_OK_T(lt_to_dtype(LT_OK_T(t), LT_F64));
    assert_int_equal(lt_copy_to_host(f, v, sizeof(double) * (size_t)n), LT_OK);
    for (int64_t k = 0; k < n; k++)
        assert_true(v[k] == expected);
}

static const int64_t two[1] = {2};

static void refused_case(lt_device dev)
{
    static const lt_dtype ints[] = {LT_U8, LT_I32, LT_I64};
    const double bad[] = {NAN, INFINITY, -INFINITY};
    for (size_t d = 0; d < sizeof ints / sizeof ints[0]; d++) {
        for (size_t b = 0; b < sizeof bad / sizeof bad[0]; b++) {
            assert_null(lt_full(two, 1, bad[b], ints[d], dev));
            LT_EXPECT_ERROR(LT_ERR_ARGUMENT, "full: value");
            assert_null(lt_scalar(bad[b], ints[d], dev));
            LT_EXPECT_ERROR(LT_ERR_ARGUMENT, "without overflow");
            lt_tensor *z = LT_OK_T(lt_zeros(two, 1, ints[d], dev));
            assert_null(lt_full_like(z, bad[b]));
            LT_EXPECT_ERROR(LT_ERR_ARGUMENT, "cannot be converted");
            assert_null(lt_fill_(z, bad[b]));
            LT_EXPECT_ERROR(LT_ERR_ARGUMENT, "fill_: value");
            assert_values(z, 0, 2); /* untouched */
        }
    }
    assert_null(lt_full(two, 1, 256, LT_U8, dev));
    LT_EXPECT_ERROR(LT_ERR_ARGUMENT, "expected 0..255");
    assert_null(lt_full(two, 1, -1, LT_U8, dev));
    LT_EXPECT_ERROR(LT_ERR_ARGUMENT, "u8");
    assert_null(lt_full(two, 1, 4294967296.0, LT_I32, dev));
    LT_EXPECT_ERROR(LT_ERR_ARGUMENT, "i32");
    assert_null(lt_full(two, 1, 1e39, LT_F32, dev));
    LT_EXPECT_ERROR(LT_ERR_ARGUMENT, "overflows dtype f32");
    /* arange and linspace: their first and last values bound the rest */
    assert_null(lt_arange(-1, 2, 1, LT_U8, dev));
    LT_EXPECT_ERROR(LT_ERR_ARGUMENT, "arange: value -1");
    assert_null(lt_arange(250, 260, 1, LT_U8, dev));
    LT_EXPECT_ERROR(LT_ERR_ARGUMENT, "arange: value 259");
    assert_null(lt_linspace(0, 3e9, 3, LT_I32, dev));
    LT_EXPECT_ERROR(LT_ERR_ARGUMENT, "linspace: value 3e+09");
}

static void accepted_case(lt_device dev)
{
    assert_values(lt_full(two, 1, 255, LT_U8, dev), 255, 2);
    assert_values(lt_full(two, 1, -2147483648.0, LT_I32, dev), -2147483648.0, 2);
    assert_values(lt_full(two, 1, NAN, LT_BOOL, dev), 1, 2); /* nonzero is true */
    lt_tensor *f = LT_OK_T(lt_full(two, 1, INFINITY, LT_F32, dev));
    double v[2];
    assert_int_equal(lt_copy_to_host(LT_OK_T(lt_to_dtype(f, LT_F64)), v, sizeof v), LT_OK);
    assert_true(isinf(v[0]) && v[1] > 0);
    lt_tensor *z = LT_OK_T(lt_zeros(two, 1, LT_I64, dev));
    LT_OK_T(lt_fill_(z, -7));
    assert_values(z, -7, 2);
    assert_values(lt_arange(255, 256, 1, LT_U8, dev), 255, 1); /* the end itself is not written */
    assert_values(lt_linspace(7, 7, 2, LT_U8, dev), 7, 2);
}

static void test_unrepresentable_fill_values_are_refused(void **state)
{
    (void)state;
    on_every_device(refused_case);
}

static void test_representable_fill_values_work(void **state)
{
    (void)state;
    on_every_device(accepted_case);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        LT_TEST(test_unrepresentable_fill_values_are_refused),
        LT_TEST(test_representable_fill_values_work),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
