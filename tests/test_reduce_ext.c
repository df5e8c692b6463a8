/* test_reduce_ext.c - nansum, nanmean, count_nonzero, aminmax, the dtype=
 * forms of sum/mean/prod/cumsum and the norms: values worked out by hand
 * (the same on cpu and on lazy with both backends), that a nansum or norm
 * on the lazy cpu backend is one fused kernel with no eager call, finite-
 * difference gradients (eager and lazy), and argument errors. */
#include "gradcheck.h"

#include <math.h>

static const double NaN = NAN, Inf = INFINITY;

/* The values of t (synced if lazy) must equal expected, NaN matching NaN. */
static void expect_values(lt_tensor *t, const double *expected, int64_t n, double tol)
{
    assert_non_null(t);
    assert_int_equal(lt_tensor_numel(t), n);
    double *v = lt_test_values(t);
    for (int64_t i = 0; i < n; i++) {
        if (isnan(expected[i])) {
            if (!isnan(v[i]))
                fail_msg("element %lld: %g, expected NaN", (long long)i, v[i]);
        } else if (!(fabs(v[i] - expected[i]) <= tol * (1 + fabs(expected[i])))) {
            fail_msg("element %lld: %.10g, expected %.10g", (long long)i, v[i], expected[i]);
        }
    }
    free(v);
}
#define EXPECT(t, tol, ...)                                                                                       \
    expect_values((t), (const double[]){__VA_ARGS__}, (int64_t)(sizeof((double[]){__VA_ARGS__}) / sizeof(double)), \
                  (tol))

/* A 2x4 f32 matrix with NaNs and a zero, moved to dev. */
static lt_tensor *nan_matrix(lt_device dev)
{
    lt_tensor *x = LT_T(LT_F32, LT_DIMS(2, 4), 1.5, NaN, -2, 0, NaN, NaN, 4, -0.5);
    return lt_to(x, dev);
}

/* Every op's known values on one device. */
static void check_known_values(lt_device dev)
{
    lt_tensor *x = nan_matrix(dev);
    int d1 = 1, d0 = 0;
    EXPECT(lt_nansum(x, &d1, 1, false), 1e-6, -0.5, 3.5);
    EXPECT(lt_nansum(x, NULL, 0, false), 1e-6, 3.0);
    EXPECT(lt_nanmean(x, &d1, 1, false), 1e-6, -0.5 / 3, 3.5 / 2);
    EXPECT(lt_nanmean(lt_narrow(x, 1, 1, 1), &d0, 1, false), 0, NaN); /* all NaN */
    lt_tensor *cnt = lt_count_nonzero(x, &d0, 1);
    assert_int_equal(lt_tensor_dtype(cnt), LT_I64);
    EXPECT(cnt, 0, 2, 2, 2, 1);
    lt_tensor *y = lt_to(LT_T(LT_I32, LT_DIMS(2, 3), 3, -7, 0, 5, 5, -7), dev);
    lt_tensor *hi = NULL, *lo = lt_aminmax(y, &d1, 1, true, &hi);
    LT_ASSERT_SHAPE(lo, 2, 1);
    assert_int_equal(lt_tensor_dtype(hi), LT_I32);
    EXPECT(lo, 0, -7, -7);
    EXPECT(hi, 0, 3, 5);
    lo = lt_aminmax(y, NULL, 0, false, &hi);
    EXPECT(lo, 0, -7);
    EXPECT(hi, 0, 5);
    /* dtype= forms: 200 + 100 wraps to 44 in u8; 1.5 + 2.5 cast first to i32 */
    lt_tensor *u = lt_to(LT_T(LT_I64, LT_DIMS(2), 200, 100), dev);
    lt_tensor *s = lt_sum_dtype(u, NULL, 0, false, LT_U8);
    assert_int_equal(lt_tensor_dtype(s), LT_U8);
    EXPECT(s, 0, 44);
    lt_tensor *f = lt_to(LT_T(LT_F32, LT_DIMS(2), 1.5, 2.5), dev);
    EXPECT(lt_sum_dtype(f, NULL, 0, false, LT_I32), 0, 3);
    EXPECT(lt_cumsum_dtype(f, 0, LT_I32), 0, 1, 3);
    EXPECT(lt_prod_dtype(u, NULL, 0, false, LT_I32), 0, 20000);
    lt_tensor *m = lt_mean_dtype(u, NULL, 0, false, LT_F64);
    assert_int_equal(lt_tensor_dtype(m), LT_F64);
    EXPECT(m, 0, 150);
    /* norms of [[3, -4, 0], [1, 1, -1]] */
    lt_tensor *v = lt_to(LT_T(LT_F64, LT_DIMS(2, 3), 3, -4, 0, 1, 1, -1), dev);
    EXPECT(lt_vector_norm(v, 2, &d1, 1, false), 1e-12, 5, sqrt(3.0));
    EXPECT(lt_vector_norm(v, 1, &d1, 1, false), 1e-12, 7, 3);
    EXPECT(lt_vector_norm(v, Inf, &d1, 1, false), 0, 4, 1);
    EXPECT(lt_vector_norm(v, -Inf, &d1, 1, false), 0, 0, 1);
    EXPECT(lt_vector_norm(v, 0, &d1, 1, false), 0, 2, 3);
    EXPECT(lt_vector_norm(v, 3, &d1, 1, false), 1e-12, cbrt(91.0), cbrt(3.0));
    EXPECT(lt_vector_norm(v, -1, &d1, 1, false), 1e-12, 0, 1.0 / 3);
    EXPECT(lt_norm(v, 2, NULL, 0, false), 1e-12, sqrt(28.0));
    EXPECT(lt_matrix_norm(v, 1, NULL, 0, false), 0, 5);     /* column sums 4, 5, 1 */
    EXPECT(lt_matrix_norm(v, -1, NULL, 0, false), 0, 1);
    EXPECT(lt_matrix_norm(v, Inf, NULL, 0, false), 0, 7);   /* row sums 7, 3 */
    EXPECT(lt_matrix_norm(v, -Inf, NULL, 0, true), 0, 3);
    EXPECT(lt_matrix_norm_fro(v, NULL, 0, false), 1e-12, sqrt(28.0));
}

static void test_known_values_cpu(void **state)
{
    (void)state;
    check_known_values(lt_device_cpu());
}

static void test_known_values_lazy(void **state)
{
    (void)state;
    lt_test_each_lazy_backend(check_known_values);
}

/* nansum with its NaN masking is one fused reduction kernel; a 2-norm is
 * the fused sum of squares plus at most one pointwise kernel for the root
 * (masking a zero norm). Neither calls an eager kernel. */
static void test_fused_on_lazy(void **state)
{
    (void)state;
    if (!lt_test_use_backend("cpu"))
        return;
    lt_tensor *x = nan_matrix(lt_device_parse("lazy"));
    assert_int_equal(lt_mark_step(), LT_OK);
    int d1 = 1;
    lt_tensor *s = LT_OK_T(lt_nansum(x, &d1, 1, false));
    lt_metrics_reset();
    assert_int_equal(lt_mark_step(), LT_OK);
    assert_int_equal(lt_metrics_counter("Kernels"), 1);
    assert_int_equal(lt_metrics_counter("KernelCalls"), 0);
    EXPECT(s, 1e-6, -0.5, 3.5);
    lt_tensor *n = LT_OK_T(lt_vector_norm(lt_nan_to_num(x, 0, 0, 0), 2, NULL, 0, false));
    lt_metrics_reset();
    assert_int_equal(lt_mark_step(), LT_OK);
    assert_true(lt_metrics_counter("Kernels") <= 2);
    assert_int_equal(lt_metrics_counter("KernelCalls"), 0);
    EXPECT(n, 1e-6, sqrt(1.5 * 1.5 + 4 + 16 + 0.25));
}

/* ---- gradients ----------------------------------------------------------- */

typedef struct norm_case {
    double ord;
    int dims[2], ndims;
    bool keepdim;
} norm_case;

static lt_tensor *vnorm_fn(lt_tensor *const *x, const void *ctx)
{
    const norm_case *c = ctx;
    return lt_vector_norm(x[0], c->ord, c->dims, c->ndims, c->keepdim);
}

static lt_tensor *mnorm_fn(lt_tensor *const *x, const void *ctx)
{
    const norm_case *c = ctx;
    return lt_matrix_norm(x[0], c->ord, c->dims, c->ndims, c->keepdim);
}

static lt_tensor *fro_fn(lt_tensor *const *x, const void *ctx)
{
    (void)ctx;
    return lt_matrix_norm_fro(x[0], NULL, 0, false);
}

static lt_tensor *nansum_fn(lt_tensor *const *x, const void *ctx)
{
    (void)ctx;
    int d = 1;
    return lt_nansum(lt_log(x[0]), &d, 1, false); /* log of a negative value is NaN */
}

static lt_tensor *nanmean_fn(lt_tensor *const *x, const void *ctx)
{
    (void)ctx;
    int d = 0;
    return lt_nanmean(lt_log(x[0]), &d, 1, true); /* log of a negative value is NaN */
}

static lt_tensor *sum_f32_fn(lt_tensor *const *x, const void *ctx)
{
    (void)ctx;
    int d = -1;
    return lt_to_dtype(lt_sum_dtype(x[0], &d, 1, false, LT_F32), LT_F64);
}

static lt_tensor *cumprod_like_fn(lt_tensor *const *x, const void *ctx)
{
    (void)ctx;
    return lt_mul(lt_cumsum_dtype(x[0], 0, LT_F64), lt_prod_dtype(x[0], NULL, 0, false, LT_F64));
}

static void test_gradients(void **state)
{
    (void)state;
    const gc_opts loose = {1e-6, 1e-5, true}, f32 = {1e-3, 1e-3, true};
    static const norm_case vcases[] = {{2, {1}, 1, false}, {1, {0}, 1, true},     {INFINITY, {1}, 1, false},
                                       {-INFINITY, {0}, 1, false}, {3, {0, 1}, 2, false}, {0.5, {1}, 1, false},
                                       {-1.5, {0}, 1, false}, {0, {1}, 1, false}};
    for (size_t k = 0; k < sizeof vcases / sizeof vcases[0]; k++)
        GRADCHECK_NAMED("vector_norm", vnorm_fn, &vcases[k], loose, GC_DISTINCT(3, 4));
    static const norm_case mcases[] = {{1, {0, 1}, 2, false}, {-1, {-1, 0}, 2, true}, {INFINITY, {0}, 0, false},
                                       {-INFINITY, {0}, 0, false}};
    for (size_t k = 0; k < sizeof mcases / sizeof mcases[0]; k++)
        GRADCHECK_NAMED("matrix_norm", mnorm_fn, &mcases[k], loose, GC_DISTINCT(2, 3, 4));
    GRADCHECK(fro_fn, NULL, loose, GC_UNIFORM(-2, 2, 3, 3));
    GRADCHECK(nansum_fn, NULL, GC_BOTH, GC_AWAY(0.5, 2, 3, 4));
    GRADCHECK(nanmean_fn, NULL, GC_BOTH, GC_AWAY(0.5, 2, 4, 3));
    GRADCHECK(sum_f32_fn, NULL, f32, GC_UNIFORM(-2, 2, 2, 3));
    GRADCHECK(cumprod_like_fn, NULL, GC_BOTH, GC_UNIFORM(0.5, 1.5, 4));
}

/* A zero norm (and zero elements for ord < 1) has a zero gradient, as torch. */
static void test_zero_norm_gradient(void **state)
{
    (void)state;
    const double ords[] = {2, 3, 0.5, 1};
    for (int k = 0; k < 4; k++) {
        lt_scope_begin();
        lt_tensor *x = LT_T(LT_F64, LT_DIMS(2, 2), 0, 0, 0, 2);
        assert_int_equal(lt_set_requires_grad(x, true), LT_OK);
        int d = 1;
        lt_tensor *n = lt_vector_norm(x, ords[k], &d, 1, false);
        assert_int_equal(lt_backward(n, lt_ones_like(n)), LT_OK);
        double e[4] = {0, 0, 0, 1};
        expect_values(lt_grad(x), e, 4, 1e-12);
        assert_int_equal(lt_scope_end(), LT_OK);
    }
}

/* ---- errors --------------------------------------------------------------- */

static void test_errors(void **state)
{
    (void)state;
    lt_tensor *i = LT_T(LT_I64, LT_DIMS(2, 2), 1, 2, 3, 4);
    lt_tensor *f = LT_T(LT_F32, LT_DIMS(2, 2), 1, 2, 3, 4);
    lt_tensor *e = lt_zeros(LT_DIMS(0, 3), LT_F32, lt_device_cpu());
    lt_tensor *hi = NULL;
    int bad = 2, dup[2] = {0, -2}, d1 = 1;
    assert_null(lt_nanmean(i, NULL, 0, false));
    LT_EXPECT_ERROR(LT_ERR_DTYPE, "nanmean: input dtype i64");
    assert_null(lt_nansum(f, &bad, 1, false));
    LT_EXPECT_ERROR(LT_ERR_INDEX, "nansum: dim 2 out of range");
    assert_null(lt_count_nonzero(f, dup, 2));
    LT_EXPECT_ERROR(LT_ERR_ARGUMENT, "more than once");
    assert_null(lt_aminmax(f, NULL, 0, false, NULL));
    LT_EXPECT_ERROR(LT_ERR_NULL, "aminmax");
    assert_null(lt_aminmax(f, dup, 2, false, &hi));
    LT_EXPECT_ERROR(LT_ERR_ARGUMENT, "expected 0 (every dim) or 1");
    assert_null(lt_aminmax(e, NULL, 0, false, &hi));
    assert_null(hi);
    LT_EXPECT_ERROR(LT_ERR_SHAPE, "no identity");
    assert_null(lt_mean_dtype(f, NULL, 0, false, LT_I64));
    LT_EXPECT_ERROR(LT_ERR_DTYPE, "mean_dtype: dtype i64");
    assert_null(lt_sum_dtype(f, NULL, 0, false, (lt_dtype)99));
    LT_EXPECT_ERROR(LT_ERR_DTYPE, "sum_dtype");
    assert_null(lt_vector_norm(i, 2, NULL, 0, false));
    LT_EXPECT_ERROR(LT_ERR_DTYPE, "vector_norm: input dtype i64");
    assert_null(lt_vector_norm(e, INFINITY, NULL, 0, false));
    LT_EXPECT_ERROR(LT_ERR_SHAPE, "vector_norm: cannot compute the inf norm");
    assert_null(lt_vector_norm(f, NAN, NULL, 0, false));
    LT_EXPECT_ERROR(LT_ERR_ARGUMENT, "ord is NaN");
    assert_null(lt_matrix_norm(f, 3, NULL, 0, false));
    LT_EXPECT_ERROR(LT_ERR_ARGUMENT, "matrix_norm: ord 3 is not supported");
    assert_null(lt_matrix_norm(lt_select(f, 0, 0), 1, NULL, 0, false));
    LT_EXPECT_ERROR(LT_ERR_SHAPE, "expected a matrix");
    assert_null(lt_matrix_norm(f, 1, &d1, 1, false));
    LT_EXPECT_ERROR(LT_ERR_ARGUMENT, "expected 2");
    assert_null(lt_matrix_norm_fro(f, dup, 2, false));
    LT_EXPECT_ERROR(LT_ERR_ARGUMENT, "same dim");
    assert_null(lt_matrix_norm(lt_zeros(LT_DIMS(3, 0), LT_F32, lt_device_cpu()), 1, NULL, 0, false));
    LT_EXPECT_ERROR(LT_ERR_SHAPE, "no identity");
    /* empty ranges with an identity */
    EXPECT(lt_vector_norm(e, 2, NULL, 0, false), 0, 0);
    EXPECT(lt_nansum(e, NULL, 0, false), 0, 0);
    EXPECT(lt_count_nonzero(e, NULL, 0), 0, 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        LT_TEST(test_known_values_cpu), LT_TEST(test_known_values_lazy), LT_TEST(test_fused_on_lazy),
        LT_TEST(test_gradients),        LT_TEST(test_zero_norm_gradient), LT_TEST(test_errors),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
