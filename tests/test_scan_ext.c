/* test_scan_ext.c - cumprod, cummax/cummin, logcumsumexp and the
 * selections kthvalue, median, mode, quantile, nanquantile: values worked
 * out by hand on cpu and on lazy with both backends (ties, NaN, infinities,
 * integer wrap-around, strided input), that on the compiled backend they
 * run as calls inside the program (no fallback), finite-difference
 * gradients (cumprod through zeros), and argument errors. */
#include "gradcheck.h"

#include <math.h>

static const double NaN = NAN, Inf = INFINITY;

static void expect_values(lt_tensor *t, const double *expected, int64_t n, double tol)
{
    assert_non_null(t);
    assert_int_equal(lt_tensor_numel(t), n);
    double *v = lt_test_values(t);
    for (int64_t i = 0; i < n; i++) {
        bool ok = isnan(expected[i]) ? isnan(v[i])
                                     : v[i] == expected[i] || fabs(v[i] - expected[i]) <= tol * (1 + fabs(expected[i]));
        if (!ok)
            fail_msg("element %lld: %.10g, expected %.10g", (long long)i, v[i], expected[i]);
    }
    free(v);
}
#define EXPECT(t, tol, ...)                                                                                       \
    expect_values((t), (const double[]){__VA_ARGS__}, (int64_t)(sizeof((double[]){__VA_ARGS__}) / sizeof(double)), \
                  (tol))

static void check_known_values(lt_device dev)
{
    /* cumprod: integers give i64 and wrap; along dim 0 of a transposed view */
    lt_tensor *u = lt_to(LT_T(LT_U8, LT_DIMS(2, 3), 2, 3, 4, 5, 6, 7), dev);
    lt_tensor *p = lt_cumprod(lt_transpose(u, 0, 1), 1);
    assert_int_equal(lt_tensor_dtype(p), LT_I64);
    EXPECT(p, 0, 2, 10, 3, 18, 4, 28);
    lt_tensor *big = lt_to(LT_T(LT_I64, LT_DIMS(2), 4294967296.0, 4294967297.0), dev);
    EXPECT(lt_cumprod(big, 0), 0, 4294967296.0, 4294967296.0); /* 2^64 + 2^32 wraps to 2^32 */
    lt_tensor *f = lt_to(LT_T(LT_F32, LT_DIMS(4), 2, 0, 3, -1), dev);
    EXPECT(lt_cumprod(f, -1), 0, 2, 0, 0, -0.0);
    /* cummax: the last index on ties, the latest NaN once one is seen */
    lt_tensor *x = lt_to(LT_T(LT_F64, LT_DIMS(6), 1, 3, 3, NaN, 5, NaN), dev);
    lt_tensor *idx = NULL, *m = lt_cummax(x, 0, &idx);
    EXPECT(m, 0, 1, 3, 3, NaN, NaN, NaN);
    EXPECT(idx, 0, 0, 1, 2, 3, 3, 5);
    lt_tensor *y = lt_to(LT_T(LT_I32, LT_DIMS(2, 3), 2, 1, 1, 5, 7, 0), dev);
    m = lt_cummin(y, 1, &idx);
    assert_int_equal(lt_tensor_dtype(m), LT_I32);
    assert_int_equal(lt_tensor_dtype(idx), LT_I64);
    EXPECT(m, 0, 2, 1, 1, 5, 5, 0);
    EXPECT(idx, 0, 0, 1, 2, 0, 0, 2);
    EXPECT(lt_cummax(y, 1, NULL), 0, 2, 2, 2, 5, 7, 7);
    /* logcumsumexp: exact where infinities decide */
    lt_tensor *z = lt_to(LT_T(LT_F64, LT_DIMS(5), -Inf, -Inf, 0, Inf, 1), dev);
    EXPECT(lt_logcumsumexp(z, 0), 0, -Inf, -Inf, 0, Inf, Inf);
    lt_tensor *w = lt_to(LT_T(LT_F32, LT_DIMS(3), 1000, 1000, 0), dev);
    EXPECT(lt_logcumsumexp(w, 0), 1e-6, 1000, 1000 + log(2.0), 1000 + log(2.0));
}

/* kthvalue, median, mode on one device. */
static void check_selections(lt_device dev)
{
    lt_tensor *x = lt_to(LT_T(LT_F32, LT_DIMS(2, 5), 3, NaN, 1, NaN, 2, 4, 1, 5, 1, 2), dev);
    lt_tensor *idx = NULL;
    EXPECT(lt_median_dim(x, 1, false, &idx), 0, NaN, 2); /* NaN at the first NaN; lower median */
    EXPECT(idx, 0, 1, 4);
    EXPECT(lt_kthvalue(x, 3, 1, true, &idx), 0, 3, 2); /* NaNs sort last */
    LT_ASSERT_SHAPE(idx, 2, 1);
    EXPECT(idx, 0, 0, 4);
    EXPECT(lt_kthvalue(x, 5, -1, false, NULL), 0, NaN, 5);
    EXPECT(lt_median(lt_narrow(x, 0, 1, 1)), 0, 2);
    lt_tensor *y = lt_to(LT_T(LT_I64, LT_DIMS(2, 7), 1, 5, 5, 1, 1, 5, 7, 3, 2, 2, 3, 9, 9, 9), dev);
    lt_tensor *m = lt_mode(y, 1, false, &idx);
    assert_int_equal(lt_tensor_dtype(m), LT_I64);
    EXPECT(m, 0, 1, 9); /* ties in count: the smallest value; its last index */
    EXPECT(idx, 0, 4, 6);
    lt_tensor *b = lt_to(LT_T(LT_BOOL, LT_DIMS(3), 1, 0, 1), dev);
    EXPECT(lt_mode(b, 0, false, &idx), 0, 1);
    EXPECT(idx, 0, 2);
}

/* quantile / nanquantile on one device. */
static void check_quantiles(lt_device dev)
{
    lt_tensor *x = lt_to(LT_T(LT_F64, LT_DIMS(2, 5), 4, 1, NaN, 3, 2, 5, 1, 4, 2, 3), dev);
    int d1 = 1;
    /* sorted row 1: 1 2 3 4 5; q 0.375 -> rank 1.5 */
    EXPECT(lt_quantile(x, 0.375, &d1, false, LT_QUANTILE_LINEAR), 0, NaN, 2.5);
    EXPECT(lt_quantile(x, 0.375, &d1, false, LT_QUANTILE_LOWER), 0, NaN, 2);
    EXPECT(lt_quantile(x, 0.375, &d1, false, LT_QUANTILE_HIGHER), 0, NaN, 3);
    EXPECT(lt_quantile(x, 0.375, &d1, false, LT_QUANTILE_NEAREST), 0, NaN, 3); /* 1.5 rounds to 2 */
    EXPECT(lt_quantile(x, 0.125, &d1, false, LT_QUANTILE_NEAREST), 0, NaN, 1); /* 0.5 rounds to 0 */
    EXPECT(lt_quantile(x, 0.1, &d1, true, LT_QUANTILE_MIDPOINT), 0, NaN, 1.5);
    /* nanquantile: row 0 without its NaN is 1 2 3 4, rank 0.375 * 3 */
    EXPECT(lt_nanquantile(x, 0.375, &d1, false, LT_QUANTILE_LINEAR), 1e-12, 2.125, 2.5);
    lt_tensor *all = lt_nanquantile(lt_narrow(x, 0, 1, 1), 0.5, NULL, true, LT_QUANTILE_LINEAR);
    LT_ASSERT_SHAPE(all, 1, 1);
    EXPECT(all, 0, 3);
}

/* Ops differing only in a flag attribute (ascending / descending sort,
 * quantile / nanquantile) get programs of their own on the lazy device. */
static void test_lazy_flag_in_key(void **state)
{
    (void)state;
    if (!lt_test_use_backend("interp"))
        return;
    lt_tensor *x = lt_to(LT_T(LT_F32, LT_DIMS(3), 2, NaN, 1), lt_device_parse("lazy"));
    int d = 0;
    lt_tensor *up = lt_sort(x, 0, false, NULL);
    lt_tensor *q = lt_quantile(x, 0.5, &d, false, LT_QUANTILE_LINEAR);
    assert_int_equal(lt_mark_step(), LT_OK);
    lt_tensor *down = lt_sort(x, 0, true, NULL);
    lt_tensor *nq = lt_nanquantile(x, 0.5, &d, false, LT_QUANTILE_LINEAR);
    assert_int_equal(lt_mark_step(), LT_OK);
    EXPECT(up, 0, 1, 2, NaN);
    EXPECT(down, 0, NaN, 2, 1);
    EXPECT(q, 0, NaN);
    EXPECT(nq, 0, 1.5);
}

static void test_known_values_cpu(void **state)
{
    (void)state;
    check_known_values(lt_device_cpu());
    check_selections(lt_device_cpu());
    check_quantiles(lt_device_cpu());
}


static void check_all(lt_device dev)
{
    check_known_values(dev);
    check_selections(dev);
    check_quantiles(dev);
}

static void test_known_values_lazy(void **state)
{
    (void)state;
    lt_test_each_lazy_backend(check_all);
}

/* On the compiled backend a scan is a call into its eager kernel inside
 * the program: traced, never a fallback that syncs. */
static void test_lazy_calls_not_fallbacks(void **state)
{
    (void)state;
    if (!lt_test_use_backend("cpu"))
        return;
    lt_tensor *x = lt_to(LT_T(LT_F32, LT_DIMS(2, 3), 1, 2, 3, 4, 5, 6), lt_device_parse("lazy"));
    assert_int_equal(lt_mark_step(), LT_OK);
    lt_metrics_reset();
    lt_tensor *idx = NULL;
    lt_tensor *a = lt_cumprod(lt_mul_scalar(x, 2), 1);
    lt_tensor *b = lt_cummax(lt_neg(x), 0, &idx);
    lt_tensor *c = lt_logcumsumexp(x, 1);
    assert_int_equal(lt_metrics_counter("Fallback"), 0);
    assert_int_equal(lt_mark_step(), LT_OK);
    assert_true(lt_metrics_counter("KernelCalls") >= 3);
    EXPECT(a, 1e-6, 2, 8, 48, 8, 80, 960);
    EXPECT(b, 0, -1, -2, -3, -1, -2, -3);
    EXPECT(idx, 0, 0, 0, 0, 0, 0, 0);
    EXPECT(c, 1e-6, 1, log(exp(1) + exp(2)), log(exp(1) + exp(2) + exp(3)), 4, log(exp(4) + exp(5)),
           log(exp(4) + exp(5) + exp(6)));
}

/* ---- gradients ----------------------------------------------------------- */

static lt_tensor *cumprod_fn(lt_tensor *const *x, const void *ctx)
{
    return lt_cumprod(x[0], *(const int *)ctx);
}

static lt_tensor *cummax_fn(lt_tensor *const *x, const void *ctx)
{
    return lt_cummax(x[0], *(const int *)ctx, NULL);
}

static lt_tensor *cummin_fn(lt_tensor *const *x, const void *ctx)
{
    return lt_cummin(x[0], *(const int *)ctx, NULL);
}

static lt_tensor *lcse_fn(lt_tensor *const *x, const void *ctx)
{
    return lt_logcumsumexp(x[0], *(const int *)ctx);
}

static lt_tensor *kth_fn(lt_tensor *const *x, const void *ctx)
{
    return lt_kthvalue(x[0], 2, *(const int *)ctx, false, NULL);
}

static lt_tensor *median_fn(lt_tensor *const *x, const void *ctx)
{
    return lt_median_dim(x[0], *(const int *)ctx, true, NULL);
}

static lt_tensor *median_all_fn(lt_tensor *const *x, const void *ctx)
{
    (void)ctx;
    return lt_median(x[0]);
}

static lt_tensor *quantile_fn(lt_tensor *const *x, const void *ctx)
{
    int d = 1;
    return lt_quantile(x[0], 0.3, &d, false, *(const int *)ctx);
}

static lt_tensor *nanquantile_fn(lt_tensor *const *x, const void *ctx)
{
    (void)ctx;
    int d = 0;
    return lt_nanquantile(lt_log(x[0]), 0.6, &d, true, LT_QUANTILE_LINEAR); /* log of a negative value is NaN */
}

static void test_gradients(void **state)
{
    (void)state;
    static const int dim0 = 0, dim1 = 1, last = -1;
    GRADCHECK(cumprod_fn, &dim1, GC_BOTH, GC_UNIFORM(-2, 2, 3, 4));
    GRADCHECK(cumprod_fn, &dim0, GC_BOTH, GC_UNIFORM(-2, 2, 3, 4));
    /* zeros: one, two, and one at the end of a line */
    lt_tensor *zeros = LT_T(LT_F64, LT_DIMS(3, 5), 2, 0, 3, 0.5, 4, 1.5, -2, 0, 0, 3, 0.5, 2, 2, -1, 0);
    GRADCHECK(cumprod_fn, &last, GC_BOTH, zeros);
    GRADCHECK(cummax_fn, &dim1, GC_BOTH, GC_DISTINCT(3, 4));
    GRADCHECK(cummin_fn, &dim0, GC_BOTH, GC_DISTINCT(3, 4));
    GRADCHECK(lcse_fn, &dim1, GC_BOTH, GC_UNIFORM(-3, 3, 3, 4));
    GRADCHECK(lcse_fn, &dim0, GC_BOTH, GC_UNIFORM(-3, 3, 2, 3, 2));
    GRADCHECK(kth_fn, &dim1, GC_BOTH, GC_DISTINCT(3, 4));
    GRADCHECK(median_fn, &dim0, GC_BOTH, GC_DISTINCT(5, 2));
    GRADCHECK(median_all_fn, NULL, GC_BOTH, GC_DISTINCT(3, 3));
    static const int modes[] = {LT_QUANTILE_LINEAR, LT_QUANTILE_LOWER, LT_QUANTILE_HIGHER, LT_QUANTILE_NEAREST,
                                LT_QUANTILE_MIDPOINT};
    for (int k = 0; k < 5; k++)
        GRADCHECK_NAMED("quantile", quantile_fn, &modes[k], GC_BOTH, GC_DISTINCT(3, 5));
    GRADCHECK(nanquantile_fn, NULL, GC_BOTH, GC_AWAY(0.5, 2, 6, 3));
    /* mode is piecewise constant in its ties, so no finite differences:
     * its gradient is g at the returned index */
    lt_tensor *x = LT_T(LT_F64, LT_DIMS(2, 4), 1, 2, 2, 1, 3, 3, 0, 3);
    assert_int_equal(lt_set_requires_grad(x, true), LT_OK);
    lt_tensor *m = lt_mode(x, 1, false, NULL);
    assert_int_equal(lt_backward(m, LT_T(LT_F64, LT_DIMS(2), 5, 7)), LT_OK);
    EXPECT(lt_grad(x), 0, 0, 0, 0, 5, 0, 0, 0, 7);
}

static void test_errors(void **state)
{
    (void)state;
    lt_tensor *i = LT_T(LT_I64, LT_DIMS(2), 1, 2);
    int d1 = 1;
    assert_null(lt_logcumsumexp(i, 0));
    LT_EXPECT_ERROR(LT_ERR_DTYPE, "logcumsumexp: input dtype i64");
    assert_null(lt_cumprod(i, 1));
    LT_EXPECT_ERROR(LT_ERR_INDEX, "cumprod: dim 1 out of range");
    lt_tensor *idx = (lt_tensor *)1;
    assert_null(lt_cummax(NULL, 0, &idx));
    assert_null(idx);
    LT_EXPECT_ERROR(LT_ERR_NULL, "cummax");
    lt_tensor *f = LT_T(LT_F32, LT_DIMS(2, 3), 1, 2, 3, 4, 5, 6);
    assert_null(lt_kthvalue(f, 4, 1, false, &idx));
    LT_EXPECT_ERROR(LT_ERR_ARGUMENT, "kthvalue: k is 4, expected 1..3");
    assert_null(lt_median_dim(lt_zeros(LT_DIMS(0, 3), LT_F32, lt_device_cpu()), 0, false, &idx));
    LT_EXPECT_ERROR(LT_ERR_SHAPE, "median_dim: dim 0 of the input (shape [0, 3]) has size 0");
    assert_null(lt_median(lt_to_dtype(f, LT_BOOL)));
    LT_EXPECT_ERROR(LT_ERR_DTYPE, "input dtype bool");
    lt_tensor *nan = lt_median(lt_zeros(LT_DIMS(0), LT_F64, lt_device_cpu()));
    EXPECT(nan, 0, NaN);
    assert_null(lt_quantile(f, 1.5, NULL, false, LT_QUANTILE_LINEAR));
    LT_EXPECT_ERROR(LT_ERR_ARGUMENT, "quantile: q is 1.5, expected a value in [0, 1]");
    assert_null(lt_quantile(f, 0.5, NULL, false, 9));
    LT_EXPECT_ERROR(LT_ERR_ARGUMENT, "interpolation 9");
    assert_null(lt_nanquantile(lt_to_dtype(f, LT_I32), 0.5, NULL, false, LT_QUANTILE_LINEAR));
    LT_EXPECT_ERROR(LT_ERR_DTYPE, "nanquantile: input dtype i32 is not supported, expected f32 or f64");
    assert_null(lt_quantile(lt_zeros(LT_DIMS(2, 0), LT_F32, lt_device_cpu()), 0.5, &d1, false, LT_QUANTILE_LINEAR));
    LT_EXPECT_ERROR(LT_ERR_SHAPE, "is empty");
    /* empty and 0-d inputs */
    lt_tensor *e = lt_zeros(LT_DIMS(0, 3), LT_F32, lt_device_cpu());
    LT_ASSERT_SHAPE(lt_cummin(e, 0, &idx), 0, 3);
    LT_ASSERT_SHAPE(idx, 0, 3);
    lt_tensor *s = lt_scalar(2.5, LT_F32, lt_device_cpu());
    EXPECT(lt_cumprod(s, 0), 0, 2.5);
    EXPECT(lt_cummax(s, -1, &idx), 0, 2.5);
    EXPECT(idx, 0, 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        LT_TEST(test_known_values_cpu), LT_TEST(test_known_values_lazy), LT_TEST(test_lazy_calls_not_fallbacks),
        LT_TEST(test_gradients),        LT_TEST(test_errors),          LT_TEST(test_lazy_flag_in_key),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
