/*
 * test_dist_collectives.c - the collectives on every dtype and device,
 * sizes from 0 elements to 64 MB, in-place and view arguments, gradients,
 * compile counts on the lazy device, and errors (bad arguments; ranks that
 * disagree on dtype or shape).
 *
 * ctest runs it alone (a world of one: no MPI is loaded) and under
 * `mpirun -np 2` and `-np 3`. Every rank makes the same calls in the same
 * order; the values each rank contributes depend on its rank, and the
 * expected results are computed here from that formula.
 */
#include "lt_test.h"

static int W, R; /* world size, rank */

static const lt_dtype all_dtypes[] = {LT_F32, LT_F64, LT_I32, LT_I64, LT_U8, LT_BOOL, LT_BF16, LT_F16};

/* Element i of rank r's input: small integers, exact in every dtype. */
static double value(lt_dtype dt, int r, int64_t i)
{
    if (dt == LT_BOOL)
        return (i + r) % 3 == 0;
    double v = (double)((i * 7 + r * 3) % 11);
    return dt == LT_U8 ? v : v - 5;
}

static lt_tensor *make(lt_dtype dt, lt_device dev, const int64_t *dims, int ndim, int r)
{
    int64_t n = 1;
    for (int d = 0; d < ndim; d++)
        n *= dims[d];
    double *host = malloc(sizeof *host * (size_t)(n + 1));
    for (int64_t i = 0; i < n; i++)
        host[i] = value(dt, r, i);
    lt_tensor *t = lt_to(lt_to_dtype(lt_from_data(host, dims, ndim, LT_F64, lt_device_cpu()), dt), dev);
    free(host);
    return LT_OK_T(t);
}

/* t's values as doubles (caller frees). */
static double *read_values(lt_tensor *t)
{
    int64_t n = lt_tensor_numel(t);
    double *v = malloc(sizeof *v * (size_t)(n + 1));
    lt_tensor *f = LT_OK_T(lt_to_dtype(t, LT_F64));
    assert_int_equal(lt_copy_to_host(f, v, sizeof *v * (size_t)n), LT_OK);
    return v;
}

static double reduce_expected(lt_dtype dt, int op, int64_t i)
{
    double acc = op == LT_REDUCE_MAX ? -1e300 : 0;
    for (int r = 0; r < W; r++) {
        double v = value(dt, r, i);
        acc = op == LT_REDUCE_MAX ? fmax(acc, v) : acc + v;
    }
    if (dt == LT_BOOL)
        return acc > 0;
    return op == LT_REDUCE_MEAN ? acc / W : acc;
}

static void expect_close(const double *got, const double *want, int64_t n, lt_dtype dt, const char *what)
{
    double tol = dt == LT_BF16 ? 1e-2 : dt == LT_F16 ? 1e-3 : dt == LT_F32 ? 1e-6 : 1e-12;
    for (int64_t i = 0; i < n; i++) {
        if (fabs(got[i] - want[i]) > tol * fmax(1, fabs(want[i]))) {
            print_error("%s (%s, rank %d of %d): element %lld is %g, expected %g\n", what, lt_dtype_name(dt), R,
                        W, (long long)i, got[i], want[i]);
            fail();
        }
    }
}

static void check_reduce(lt_dtype dt, lt_device dev, int64_t n, int op)
{
    lt_tensor *x = make(dt, dev, &n, 1, R);
    lt_tensor *y = LT_OK_T(lt_all_reduce(x, (lt_reduce_op)op));
    assert_int_equal(lt_tensor_dtype(y), dt);
    double *got = read_values(y), *want = malloc(sizeof *want * (size_t)(n + 1));
    for (int64_t i = 0; i < n; i++)
        want[i] = reduce_expected(dt, op, i);
    expect_close(got, want, n, dt, "all_reduce");
    free(got), free(want);
}

static void check_broadcast(lt_dtype dt, lt_device dev, int64_t n)
{
    int root = W - 1;
    lt_tensor *y = LT_OK_T(lt_broadcast(make(dt, dev, &n, 1, R), root));
    double *got = read_values(y), *want = malloc(sizeof *want * (size_t)(n + 1));
    for (int64_t i = 0; i < n; i++)
        want[i] = value(dt, root, i);
    expect_close(got, want, n, dt, "broadcast");
    free(got), free(want);
}

static void check_all_gather(lt_dtype dt, lt_device dev, int64_t n)
{
    lt_tensor *y = LT_OK_T(lt_all_gather(make(dt, dev, &n, 1, R)));
    assert_int_equal(lt_tensor_shape(y)[0], n * W);
    double *got = read_values(y), *want = malloc(sizeof *want * (size_t)(n * W + 1));
    for (int r = 0; r < W; r++)
        for (int64_t i = 0; i < n; i++)
            want[r * n + i] = value(dt, r, i);
    expect_close(got, want, n * W, dt, "all_gather");
    free(got), free(want);
}

static void check_reduce_scatter(lt_dtype dt, lt_device dev, int64_t n, int op)
{
    int64_t total = n * W;
    lt_tensor *y = LT_OK_T(lt_reduce_scatter(make(dt, dev, &total, 1, R), (lt_reduce_op)op));
    assert_int_equal(lt_tensor_shape(y)[0], n);
    double *got = read_values(y), *want = malloc(sizeof *want * (size_t)(n + 1));
    for (int64_t i = 0; i < n; i++)
        want[i] = reduce_expected(dt, op, R * n + i);
    expect_close(got, want, n, dt, "reduce_scatter");
    free(got), free(want);
}

static void every_collective(lt_device dev)
{
    static const int64_t sizes[] = {0, 1, 5, 1000};
    for (size_t d = 0; d < sizeof all_dtypes / sizeof all_dtypes[0]; d++) {
        lt_dtype dt = all_dtypes[d];
        bool floating = lt_dtype_is_floating(dt);
        for (size_t s = 0; s < sizeof sizes / sizeof sizes[0]; s++) {
            lt_scope_begin();
            int64_t n = sizes[s];
            check_reduce(dt, dev, n, LT_REDUCE_SUM);
            check_reduce(dt, dev, n, LT_REDUCE_MAX);
            if (floating)
                check_reduce(dt, dev, n, LT_REDUCE_MEAN);
            check_broadcast(dt, dev, n);
            check_all_gather(dt, dev, n);
            check_reduce_scatter(dt, dev, n, LT_REDUCE_SUM);
            if (floating)
                check_reduce_scatter(dt, dev, n, LT_REDUCE_MEAN);
            lt_scope_end();
        }
    }
}

static void test_world(void **state)
{
    (void)state;
    assert_int_equal(lt_dist_init(), LT_OK);
    const char *env = getenv("OMPI_COMM_WORLD_SIZE");
    assert_int_equal(W, env ? atoi(env) : 1);
    assert_true(R >= 0 && R < W);
    assert_string_equal(lt_dist_backend(), env ? "mpi" : "single");
    assert_true(lt_dist_local_rank() >= 0 && lt_dist_local_rank() < W);
    assert_int_equal(lt_barrier_all(), LT_OK);
}

static void test_every_collective_cpu(void **state)
{
    (void)state;
    every_collective(lt_device_cpu());
}

static void test_every_collective_lazy(void **state)
{
    (void)state;
    assert_int_equal(lt_lazy_set_backend("interp"), LT_OK);
    every_collective(lt_device_parse("lazy"));
    assert_int_equal(lt_lazy_set_backend("cpu"), LT_OK);
    lt_scope_begin();
    check_reduce(LT_F32, lt_device_parse("lazy"), 1000, LT_REDUCE_SUM);
    check_all_gather(LT_I64, lt_device_parse("lazy"), 7);
    check_reduce_scatter(LT_BF16, lt_device_parse("lazy"), 3, LT_REDUCE_MEAN);
    lt_scope_end();
}

/* [2, 3] gathers to [2W, 3]; a 0-d tensor to [W]. */
static void test_shapes(void **state)
{
    (void)state;
    int64_t dims[2] = {2, 3};
    lt_tensor *g = LT_OK_T(lt_all_gather(make(LT_F32, lt_device_cpu(), dims, 2, R)));
    assert_int_equal(lt_tensor_ndim(g), 2);
    assert_int_equal(lt_tensor_shape(g)[0], 2 * W);
    assert_int_equal(lt_tensor_shape(g)[1], 3);
    lt_tensor *s = LT_OK_T(lt_all_gather(lt_scalar((double)R, LT_I32, lt_device_cpu())));
    assert_int_equal(lt_tensor_ndim(s), 1);
    assert_int_equal(lt_tensor_shape(s)[0], W);
    double *v = read_values(s);
    for (int r = 0; r < W; r++)
        assert_true(v[r] == r);
    free(v);
}

/* A transposed narrow view of a [4, 6] tensor: only its elements change. */
static void inplace_view(lt_device dev)
{
    int64_t dims[2] = {4, 6};
    lt_tensor *base = make(LT_F32, dev, dims, 2, R);
    lt_tensor *view = LT_OK_T(lt_transpose(lt_narrow(base, 1, 2, 3), 0, 1)); /* [3, 4] */
    assert_ptr_equal(lt_all_reduce_(view, LT_REDUCE_SUM), view);
    double *got = read_values(base);
    for (int64_t i = 0; i < 24; i++) {
        int64_t col = i % 6;
        double want = col >= 2 && col < 5 ? reduce_expected(LT_F32, LT_REDUCE_SUM, i) : value(LT_F32, R, i);
        assert_true(got[i] == want);
    }
    free(got);
    lt_tensor *b2 = make(LT_I64, dev, dims, 2, R);
    lt_tensor *row = LT_OK_T(lt_select(b2, 0, 1));
    assert_ptr_equal(lt_broadcast_(row, 0), row);
    got = read_values(b2);
    for (int64_t i = 0; i < 24; i++)
        assert_true(got[i] == value(LT_I64, i / 6 == 1 ? 0 : R, i));
    free(got);
}

static void test_inplace_views(void **state)
{
    (void)state;
    inplace_view(lt_device_cpu());
    inplace_view(lt_device_parse("lazy"));
}

/* 64 MB of f32 in one all-reduce (each rank contributes rank + 1). */
static void test_large(void **state)
{
    (void)state;
    int64_t n = 16 << 20;
    lt_tensor *x = LT_OK_T(lt_full(&n, 1, (double)(R + 1), LT_F32, lt_device_cpu()));
    lt_tensor *y = LT_OK_T(lt_all_reduce(x, LT_REDUCE_SUM));
    double lo, hi, want = W * (W + 1) / 2.0;
    assert_int_equal(lt_item(lt_amin(y, NULL, 0, false), &lo), LT_OK);
    assert_int_equal(lt_item(lt_amax(y, NULL, 0, false), &hi), LT_OK);
    assert_true(lo == want && hi == want);
}

/* A training-like step with a collective compiles once and is reused. */
static void test_compiled_once(void **state)
{
    (void)state;
    lt_device lazy = lt_device_parse("lazy");
    static const char *const backends[] = {"cpu", "interp"};
    for (int b = 0; b < 2; b++) {
        assert_int_equal(lt_lazy_set_backend(backends[b]), LT_OK);
        int64_t before = 0;
        for (int step = 0; step < 4; step++) {
            lt_scope_begin();
            int64_t n = 64;
            lt_tensor *x = make(LT_F32, lazy, &n, 1, R + step);
            lt_tensor *y = LT_OK_T(lt_all_reduce(lt_mul_scalar(lt_relu(x), 1.5 + step), LT_REDUCE_MEAN));
            lt_tensor *z = lt_keep(LT_OK_T(lt_add_scalar(y, 1.0)));
            lt_scope_end();
            assert_int_equal(lt_mark_step(), LT_OK);
            double v;
            assert_int_equal(lt_item(lt_select(z, 0, 3), &v), LT_OK);
            double want = 0;
            for (int r = 0; r < W; r++)
                want += fmax(0, value(LT_F32, r + step, 3)) * (1.5 + step);
            assert_true(fabs(v - (want / W + 1)) < 1e-5);
            if (step == 0)
                before = lt_metrics_counter("UncachedCompile");
        }
        assert_int_equal(lt_metrics_counter("UncachedCompile"), before);
    }
}

static void test_gradients(void **state)
{
    (void)state;
    int64_t n = 4;
    lt_tensor *x = make(LT_F64, lt_device_cpu(), &n, 1, R);
    assert_int_equal(lt_set_requires_grad(x, true), LT_OK);
    /* loss_r = sum((r + 1) * all_reduce(x)): d loss / dx = sum_r (r + 1) */
    lt_tensor *loss = lt_sum(lt_mul_scalar(lt_all_reduce(x, LT_REDUCE_SUM), R + 1), NULL, 0, false);
    assert_int_equal(lt_backward(loss, NULL), LT_OK);
    double g;
    assert_int_equal(lt_item(lt_select(lt_grad(x), 0, 2), &g), LT_OK);
    assert_true(g == W * (W + 1) / 2.0);
    lt_zero_grad(x);
    /* all_gather: rank r's block of the gathered gradient is sum over ranks */
    loss = lt_sum(lt_mul_scalar(lt_all_gather(x), R + 1), NULL, 0, false);
    assert_int_equal(lt_backward(loss, NULL), LT_OK);
    assert_int_equal(lt_item(lt_select(lt_grad(x), 0, 0), &g), LT_OK);
    assert_true(g == W * (W + 1) / 2.0);
    lt_zero_grad(x);
    /* broadcast from rank 0: the root gets every rank's gradient */
    loss = lt_sum(lt_mul_scalar(lt_broadcast(x, 0), R + 1), NULL, 0, false);
    assert_int_equal(lt_backward(loss, NULL), LT_OK);
    lt_tensor *gx = lt_grad(x);
    double want = R == 0 ? W * (W + 1) / 2.0 : 0.0;
    assert_int_equal(lt_item(lt_select(gx, 0, 1), &g), LT_OK);
    assert_true(g == want);
    lt_zero_grad(x);
    /* MAX has no gradient */
    loss = lt_sum(lt_all_reduce(x, LT_REDUCE_MAX), NULL, 0, false);
    assert_int_equal(lt_backward(loss, NULL), LT_ERR_UNSUPPORTED);
    assert_non_null(strstr(lt_last_error(), "LT_REDUCE_MAX has no gradient"));
    lt_clear_error();
}

static void test_bad_arguments(void **state)
{
    (void)state;
    int64_t n = 5;
    lt_tensor *i = make(LT_I32, lt_device_cpu(), &n, 1, R);
    assert_null(lt_all_reduce(NULL, LT_REDUCE_SUM));
    assert_int_equal(lt_last_status(), LT_ERR_NULL);
    assert_null(lt_all_reduce(i, (lt_reduce_op)7));
    assert_non_null(strstr(lt_last_error(), "reduction 7"));
    assert_null(lt_all_reduce(i, LT_REDUCE_MEAN));
    assert_non_null(strstr(lt_last_error(), "LT_REDUCE_MEAN needs a floating tensor (got i32"));
    assert_null(lt_broadcast(i, W));
    assert_non_null(strstr(lt_last_error(), "is not a rank"));
    assert_null(lt_broadcast(i, -1));
    int64_t odd = W * 2 + 1;
    if (W > 1) {
        assert_null(lt_reduce_scatter(make(LT_F32, lt_device_cpu(), &odd, 1, R), LT_REDUCE_SUM));
        assert_non_null(strstr(lt_last_error(), "cannot be split into"));
    }
    assert_null(lt_reduce_scatter(lt_scalar(1, LT_F32, lt_device_cpu()), LT_REDUCE_SUM));
    assert_int_equal(lt_last_status(), LT_ERR_SHAPE);
    lt_clear_error();
}

/* Ranks that disagree on dtype or shape get an error on every rank. */
static void test_mismatch(void **state)
{
    (void)state;
    if (W == 1)
        skip();
    int64_t n = 6, m = R == 1 ? 7 : 6;
    lt_tensor *x = make(R == 1 ? LT_F64 : LT_F32, lt_device_cpu(), &n, 1, R);
    assert_null(lt_all_reduce(x, LT_REDUCE_SUM));
    assert_int_equal(lt_last_status(), LT_ERR_DIST);
    assert_non_null(strstr(lt_last_error(), "rank 0 calls all_reduce(sum) of f32 [6]"));
    assert_non_null(strstr(lt_last_error(), "rank 1 calls all_reduce(sum) of f64 [6]"));
    lt_tensor *y = make(LT_F32, lt_device_cpu(), &m, 1, R);
    assert_null(lt_all_gather(y));
    assert_non_null(strstr(lt_last_error(), "rank 1 calls all_gather of f32 [7]"));
    lt_clear_error();
    /* the world still works afterwards */
    check_reduce(LT_F32, lt_device_cpu(), 3, LT_REDUCE_SUM);
}

int main(void)
{
    W = lt_dist_world_size();
    R = lt_dist_rank();
    const struct CMUnitTest tests[] = {
        LT_TEST(test_world),        LT_TEST(test_every_collective_cpu), LT_TEST(test_every_collective_lazy),
        LT_TEST(test_shapes),       LT_TEST(test_inplace_views),        LT_TEST(test_large),
        LT_TEST(test_compiled_once), LT_TEST(test_gradients),           LT_TEST(test_bad_arguments),
        LT_TEST(test_mismatch),
    };
    int failed = cmocka_run_group_tests(tests, NULL, NULL);
    lt_dist_finalize();
    return failed;
}
