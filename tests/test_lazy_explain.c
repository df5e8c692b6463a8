/* test_lazy_explain.c - the lazy device says why it compiled a graph (a new
 * shape, dtype, op structure, special scalar, set of live outputs, or a
 * graph dropped from the cache), a cache hit records no cause, and
 * lt_metrics_report flags recompiles after warm-up, fallbacks and a graph
 * that keeps growing, each only when provoked. Each test uses a feature
 * size of its own, so that graphs of earlier tests are never the nearest. */
#include "lt_test.h"

#include "lazy/lazy.h" /* lt_lazy_set_growth_limit (white box), as LT_GRAPH_WARN_NODES would */

static lt_device lazy(void) { return lt_device_parse("lazy"); }

/* A lazy data tensor (a graph input, as a batch from a loader) of the given
 * shape, filled with `value`. */
static lt_tensor *input(int64_t rows, int64_t cols, double value, lt_dtype dt)
{
    lt_tensor *c = LT_OK_T(lt_full((int64_t[]){rows, cols}, 2, value, dt, lt_device_cpu()));
    return LT_OK_T(lt_to(c, lazy()));
}

static lt_compile_cause last_cause(char *text, size_t cap)
{
    int n = lt_lazy_last_compile_cause(text, cap);
    assert_true(n >= 0 && (size_t)n < cap);
    return lt_lazy_last_compile_kind();
}

/* Asserts the text of the latest cause contains `needle`. */
#define ASSERT_CAUSE_HAS(text, needle) \
    do { \
        if (!strstr((text), (needle))) \
            fail_msg("cause \"%s\" lacks \"%s\"", (text), (needle)); \
    } while (0)

/* One training-like step: y = x @ w for a batch of `batch` rows, ended by
 * lt_mark_step; checks the result (3 columns of 0.5 * 0.25 * cols). */
static void matmul_step(lt_tensor *w, int64_t batch, int64_t cols)
{
    lt_scope_begin();
    lt_tensor *y = LT_OK_T(lt_matmul(input(batch, cols, 0.5, LT_F32), w));
    assert_int_equal(lt_mark_step(), LT_OK);
    double v;
    assert_int_equal(lt_item(lt_sum(y, NULL, 0, false), &v), LT_OK);
    assert_true(fabs(v - (double)batch * 3 * 0.125 * (double)cols) < 1e-3);
    lt_scope_end();
}

static void test_first_compile(void **state)
{
    (void)state;
    assert_int_equal(lt_lazy_set_backend("interp"), LT_OK);
    lt_tensor *x = input(2, 2, 1, LT_F32);
    double v;
    assert_int_equal(lt_item(lt_sum(lt_neg(x), NULL, 0, false), &v), LT_OK);
    assert_true(v == -4);
    char text[512];
    assert_int_equal(last_cause(text, sizeof text), LT_COMPILE_FIRST);
    ASSERT_CAUSE_HAS(text, "first graph");
    assert_int_equal(lt_lazy_last_compile_cause(NULL, 0), (int)strlen(text));
    assert_int_equal(lt_lazy_last_compile_cause(NULL, 4), -1);
    LT_EXPECT_ERROR(LT_ERR_NULL, "lazy_last_compile_cause: buf is NULL");
}

/* Batch 128, then a last partial batch of 104: the input and both shapes
 * are named; the same step again hits the cache and records no cause. */
static void shape_case(const char *backend, int64_t cols)
{
    assert_int_equal(lt_lazy_set_backend(backend), LT_OK);
    lt_metrics_reset();
    lt_tensor *w = LT_OK_T(lt_to(lt_full((int64_t[]){cols, 3}, 2, 0.25, LT_F32, lt_device_cpu()), lazy()));
    matmul_step(w, 128, cols);
    matmul_step(w, 128, cols);
    char text[512];
    assert_int_equal(last_cause(text, sizeof text), LT_COMPILE_NONE); /* the read's graph hit too */
    assert_string_equal(text, "");
    int64_t shape_before = lt_metrics_counter("CompileCauseShape");
    lt_scope_begin();
    lt_tensor *y = LT_OK_T(lt_matmul(input(104, cols, 0.5, LT_F32), w));
    assert_int_equal(lt_mark_step(), LT_OK);
    lt_compile_cause shape_cause = last_cause(text, sizeof text);
    if (shape_cause != LT_COMPILE_SHAPE)
        fail_msg("cause %d: %s", (int)shape_cause, text);
    ASSERT_CAUSE_HAS(text, "new shape: input");
    ASSERT_CAUSE_HAS(text, "read by lt_matmul");
    char shapes[96];
    snprintf(shapes, sizeof shapes, "is f32[104, %lld], the cached graph's was f32[128, %lld]", (long long)cols,
             (long long)cols);
    ASSERT_CAUSE_HAS(text, shapes);
    assert_int_equal(lt_metrics_counter("CompileCauseShape"), shape_before + 1);
    LT_ASSERT_SHAPE(y, 104, 3);
    lt_scope_end();
}

static void test_cause_shape(void **state)
{
    (void)state;
    shape_case("interp", 5);
    if (lt_lazy_set_backend("cpu") != LT_OK) {
        print_message("cpu backend unavailable (%s): skipped\n", lt_last_error());
        lt_clear_error();
    } else {
        shape_case("cpu", 4); /* not the graphs interp compiled: those would be "compiled for interp" */
    }
    assert_int_equal(lt_lazy_set_backend("interp"), LT_OK);
}

/* A training step (linear layer, cross-entropy, backward, SGD) on a batch
 * of `batch` rows; returns the cause of the step's compile, if any. */
static lt_compile_cause training_step(lt_module *model, lt_optimizer *opt, int64_t batch, char *text, size_t cap)
{
    lt_scope_begin();
    lt_tensor *x = input(batch, 6, 0.5, LT_F32);
    lt_tensor *labels = LT_OK_T(lt_to(lt_zeros((int64_t[]){batch}, 1, LT_I64, lt_device_cpu()), lazy()));
    lt_tensor *loss = LT_OK_T(lt_cross_entropy(LT_OK_T(lt_module_forward(model, x)), labels, 0.0));
    assert_int_equal(lt_backward(loss, NULL), LT_OK);
    assert_int_equal(lt_optim_step(opt), LT_OK);
    assert_int_equal(lt_optim_zero_grad(opt), LT_OK);
    lt_scope_end();
    assert_int_equal(lt_mark_step(), LT_OK);
    return last_cause(text, cap);
}

/* In a training step a new batch size also changes ops whose shapes are
 * attributes (the loss gradient's); the cause named is an input. */
static void test_cause_shape_training_step(void **state)
{
    (void)state;
    lt_module *model = lt_nn_linear(6, 3, true, lazy());
    assert_non_null(model);
    lt_tensor *params[2];
    assert_int_equal(lt_module_parameters(model, params, NULL, 2), 2);
    lt_optimizer *opt = lt_optim_sgd(params, 2, 0.1, 0.0, 0.0, false);
    assert_non_null(opt);
    char text[512];
    for (int i = 0; i < 2; i++)
        training_step(model, opt, 128, text, sizeof text);
    assert_int_equal(training_step(model, opt, 128, text, sizeof text), LT_COMPILE_NONE);
    assert_int_equal(training_step(model, opt, 104, text, sizeof text), LT_COMPILE_SHAPE);
    ASSERT_CAUSE_HAS(text, "new shape: input ");
    bool labels = strstr(text, "is i64[104], the cached graph's was i64[128]") != NULL;
    bool batch = strstr(text, "is f32[104, 6], the cached graph's was f32[128, 6]") != NULL;
    if (!labels && !batch)
        fail_msg("cause \"%s\" names neither input", text);
    ASSERT_CAUSE_HAS(text, "2 of them inputs");
    lt_optim_free(opt);
    lt_module_free(model);
}

/* y = x * 3 for x of dtype dt, ended by a step. */
static void scaled_step(lt_dtype dt, double scale)
{
    lt_scope_begin();
    lt_tensor *y = LT_OK_T(lt_mul_scalar(input(3, 6, 2, dt), scale));
    assert_int_equal(lt_mark_step(), LT_OK);
    double v;
    assert_int_equal(lt_item(lt_sum(y, NULL, 0, false), &v), LT_OK);
    assert_true(fabs(v - 36 * scale) < 1e-9);
    lt_scope_end();
}

static void test_cause_dtype(void **state)
{
    (void)state;
    scaled_step(LT_F32, 3);
    int64_t before = lt_metrics_counter("CompileCauseDtype");
    scaled_step(LT_F64, 3);
    /* the step compiled for the new dtype; the read after it did too: both dtype */
    assert_int_equal(lt_metrics_counter("CompileCauseDtype"), before + 2);
    char text[512];
    assert_int_equal(last_cause(text, sizeof text), LT_COMPILE_DTYPE);
    ASSERT_CAUSE_HAS(text, "new dtype: input 0 of the graph");
    ASSERT_CAUSE_HAS(text, "is f64, the cached graph's was f32");
}

/* 0.5 -> 2 keeps the program (both are parameters), 0.5 -> 1 does not. */
static void test_cause_special_scalar(void **state)
{
    (void)state;
    lt_tensor *x = input(2, 7, 1, LT_F32);
    lt_tensor *y = LT_OK_T(lt_mul_scalar(x, 0.5));
    assert_int_equal(lt_mark_step(), LT_OK);
    int64_t before = lt_metrics_counter("CompileCauseScalar");
    int64_t hits = lt_metrics_counter("CachedCompile");
    y = LT_OK_T(lt_mul_scalar(x, 2));
    assert_int_equal(lt_mark_step(), LT_OK);
    char text[512];
    assert_int_equal(last_cause(text, sizeof text), LT_COMPILE_NONE);
    assert_int_equal(lt_metrics_counter("CachedCompile"), hits + 1);
    y = LT_OK_T(lt_mul_scalar(x, 1));
    assert_int_equal(lt_mark_step(), LT_OK);
    assert_int_equal(last_cause(text, sizeof text), LT_COMPILE_SCALAR);
    ASSERT_CAUSE_HAS(text, "a scalar became special: the scalar at node 1 (read by lt_mul)");
    ASSERT_CAUSE_HAS(text, "is now 1 (compiled into the program), was 0.5 (a runtime parameter)");
    assert_int_equal(lt_metrics_counter("CompileCauseScalar"), before + 1);
    LT_ASSERT_VALUES(y, 0, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1);
    /* a float attribute (add's alpha) is specialised the same way */
    y = LT_OK_T(lt_add_scaled(x, x, 0.5));
    assert_int_equal(lt_mark_step(), LT_OK);
    y = LT_OK_T(lt_add_scaled(x, x, 0));
    assert_int_equal(lt_mark_step(), LT_OK);
    assert_int_equal(last_cause(text, sizeof text), LT_COMPILE_SCALAR);
    ASSERT_CAUSE_HAS(text, "a scalar became special: node 1 (add, recorded by lt_add) is now 0 (compiled into the "
                           "program), was 0.5 (a runtime parameter)");
    assert_int_equal(lt_metrics_counter("CompileCauseScalar"), before + 2);
    LT_ASSERT_VALUES(y, 0, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1);
}

static void test_cause_structure(void **state)
{
    (void)state;
    lt_tensor *x = input(2, 8, -1, LT_F32);
    lt_tensor *y = LT_OK_T(lt_neg(lt_relu(x)));
    assert_int_equal(lt_mark_step(), LT_OK);
    int64_t before = lt_metrics_counter("CompileCauseStructure");
    y = LT_OK_T(lt_neg(lt_sigmoid(x)));
    assert_int_equal(lt_mark_step(), LT_OK);
    char text[512];
    assert_int_equal(last_cause(text, sizeof text), LT_COMPILE_STRUCTURE);
    ASSERT_CAUSE_HAS(text, "different ops: at node 1 (sigmoid, recorded by lt_sigmoid), the cached graph has "
                           "node 1 (relu, recorded by lt_relu)");
    ASSERT_CAUSE_HAS(text, "another op");
    assert_int_equal(lt_metrics_counter("CompileCauseStructure"), before + 1);
    double v;
    assert_int_equal(lt_item(lt_sum(y, NULL, 0, false), &v), LT_OK);
    assert_true(fabs(v + 16 / (1 + exp(1))) < 1e-5);
}

/* The same ops, one live output less. */
static void test_cause_live_outputs(void **state)
{
    (void)state;
    lt_tensor *x = input(2, 9, 1, LT_F32);
    lt_scope_begin();
    lt_tensor *a = LT_OK_T(lt_mul_scalar(x, 3));
    lt_tensor *b = LT_OK_T(lt_add_scalar(a, 4));
    assert_int_equal(lt_mark_step(), LT_OK);
    LT_ASSERT_VALUES(a, 0, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3);
    lt_scope_end();
    int64_t before = lt_metrics_counter("CompileCauseOutputs");
    a = LT_OK_T(lt_mul_scalar(x, 3));
    b = LT_OK_T(lt_add_scalar(a, 4));
    lt_release(a); /* only b is computed now */
    assert_int_equal(lt_mark_step(), LT_OK);
    char text[512];
    assert_int_equal(last_cause(text, sizeof text), LT_COMPILE_OUTPUTS);
    ASSERT_CAUSE_HAS(text, "different live outputs: 1 now, 2 in the cached graph: node 2 (mul, recorded by "
                           "lt_mul) is no longer one");
    assert_int_equal(lt_metrics_counter("CompileCauseOutputs"), before + 1);
    LT_ASSERT_VALUES(b, 0, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7);
}

/* Ops recorded inside a composite public function are named by it. */
static void test_cause_names_composite_function(void **state)
{
    (void)state;
    char text[512];
    for (int64_t rows = 3; rows <= 4; rows++) {
        lt_scope_begin();
        lt_tensor *loss = LT_OK_T(lt_mse_loss(input(rows, 13, 3, LT_F32), input(rows, 13, 1, LT_F32)));
        assert_int_equal(lt_mark_step(), LT_OK);
        lt_compile_cause cause = last_cause(text, sizeof text); /* before the read's own barrier */
        LT_ASSERT_VALUES(loss, 0, 4);
        lt_scope_end();
        if (rows == 4) {
            assert_int_equal(cause, LT_COMPILE_SHAPE);
            ASSERT_CAUSE_HAS(text, "read by lt_mse_loss) is f32[4, 13], the cached graph's was f32[3, 13]");
        }
    }
}

/* A graph compiled again after the cache dropped it. */
static void test_cause_evicted(void **state)
{
    (void)state;
    assert_int_equal(lt_lazy_set_cache_size(1), LT_OK);
    lt_tensor *x = input(2, 10, 1, LT_F32);
    lt_tensor *y = LT_OK_T(lt_exp(x));
    assert_int_equal(lt_mark_step(), LT_OK);
    y = LT_OK_T(lt_abs(x)); /* evicts exp's program */
    assert_int_equal(lt_mark_step(), LT_OK);
    y = LT_OK_T(lt_exp(x));
    assert_int_equal(lt_mark_step(), LT_OK);
    char text[512];
    assert_int_equal(last_cause(text, sizeof text), LT_COMPILE_EVICTED);
    ASSERT_CAUSE_HAS(text, "dropped from the program cache");
    assert_int_equal(lt_lazy_set_cache_size(1024), LT_OK);
    (void)y;
}

/* ---- lt_metrics_report's problems ----------------------------------------- */

static char report[16384];

static const char *metrics_report(void)
{
    int n = lt_metrics_report(report, sizeof report);
    assert_true(n > 0 && (size_t)n < sizeof report);
    return report;
}

/* Asserts that the report's problems section starts with `expected` (one
 * flag) and flags none of the other problems; returns the report. */
static const char *assert_only_problem(const char *expected)
{
    static const char *const flags[] = {"recompiling:", "fallback:", "growing graph:"};
    const char *r = metrics_report();
    char section[256];
    snprintf(section, sizeof section, "Problems:\n  %s", expected);
    if (!strstr(r, section))
        fail_msg("no \"%s\" in the report:\n%s", section, r);
    for (size_t i = 0; i < sizeof flags / sizeof flags[0]; i++)
        if (strncmp(expected, flags[i], strlen(flags[i])) != 0)
            assert_null(strstr(r, flags[i]));
    return r;
}

/* A step computing x + 1 for a batch of `batch` rows. */
static void add_step(int64_t batch)
{
    lt_scope_begin();
    LT_OK_T(lt_add_scalar(input(batch, 11, 1, LT_F32), 1));
    assert_int_equal(lt_mark_step(), LT_OK);
    lt_scope_end();
}

static void test_report_recompiles(void **state)
{
    (void)state;
    lt_metrics_reset();
    add_step(16);
    add_step(17); /* a compile in warm-up is expected */
    for (int i = 0; i < 3; i++)
        add_step(16);
    assert_int_equal(lt_metrics_counter("Steps"), 5);
    assert_int_equal(lt_metrics_counter("CompilesAfterWarmup"), 0);
    assert_non_null(strstr(metrics_report(), "Problems: none\n"));
    add_step(13); /* one compile after warm-up: a last, smaller batch */
    assert_int_equal(lt_metrics_counter("CompilesAfterWarmup"), 1);
    assert_non_null(strstr(metrics_report(), "Problems: none\n"));
    add_step(12);
    const char *r = assert_only_problem("recompiling: 2 compiles after the warm-up (the first 2 of 7 steps)");
    assert_null(strstr(r, "Problems: none"));
    assert_non_null(strstr(r, "Latest cause: new shape: input 0 of the graph"));
}

static void test_report_fallback(void **state)
{
    (void)state;
    lt_metrics_reset();
    lt_tensor *x = LT_OK_T(lt_to(LT_T(LT_F32, LT_DIMS(4), 3, 1, 4, 2), lazy()));
    LT_OK_T(lt_neg(x));
    assert_non_null(strstr(metrics_report(), "Problems: none\n"));
    lt_tensor *s = LT_OK_T(lt_sort(x, 0, false, NULL)); /* called by the compiled program: no fallback */
    LT_ASSERT_VALUES(s, 0, 1, 2, 3, 4);
    assert_non_null(strstr(metrics_report(), "Problems: none\n"));
    lt_tensor *nz = LT_OK_T(lt_nonzero(x)); /* its size depends on the data */
    LT_ASSERT_SHAPE(nz, 4, 1);
    assert_only_problem("fallback: ops without a lowering ran eagerly on synced inputs (op and runs): nonzero 1;");
}

static void test_report_growing_graph(void **state)
{
    (void)state;
    lt_metrics_reset();
    lt_lazy_set_growth_limit(40, false);
    lt_tensor *x = input(1, 12, 1, LT_F32);
    for (int i = 0; i < 10; i++)
        x = LT_OK_T(lt_add_scalar(x, 1));
    assert_non_null(strstr(metrics_report(), "Problems: none\n"));
    for (int i = 0; i < 30; i++) /* past 40 nodes (each add records a scalar and the add) */
        x = LT_OK_T(lt_add_scalar(x, 1));
    assert_int_equal(lt_metrics_counter("GraphSizeWarnings"), 1);
    assert_only_problem("growing graph: a graph grew past LT_GRAPH_WARN_NODES nodes");
    lt_lazy_set_growth_limit(10000, false);
    assert_int_equal(lt_mark_step(), LT_OK);
    LT_ASSERT_VALUES(x, 0, 41, 41, 41, 41, 41, 41, 41, 41, 41, 41, 41, 41);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        LT_TEST(test_first_compile), /* first: nothing compiled before it */
        LT_TEST(test_cause_shape),
        LT_TEST(test_cause_shape_training_step),
        LT_TEST(test_cause_dtype),
        LT_TEST(test_cause_special_scalar),
        LT_TEST(test_cause_structure),
        LT_TEST(test_cause_live_outputs),
        LT_TEST(test_cause_names_composite_function),
        LT_TEST(test_cause_evicted),
        LT_TEST(test_report_recompiles),
        LT_TEST(test_report_fallback),
        LT_TEST(test_report_growing_graph),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
