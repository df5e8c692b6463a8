/* test_lazy_trace.c - the short paths of recording on the lazy device give
 * what the general ones give: a tensor-with-scalar op records the scalar
 * as an IR node without a wrapper tensor (same graph, same values as eager,
 * same errors, same owner check), and an op's hash start kept for default
 * attributes gives the key computed from scratch. */
#include "lt_test.h"

#include <math.h>
#include <pthread.h>

static lt_device lazy(void) { return lt_device_parse("lazy"); }

typedef lt_tensor *(*scalar_fn)(lt_tensor *, double);

static const struct {
    const char *name;
    scalar_fn fn;
} scalar_ops[] = {
    {"add_scalar", lt_add_scalar},         {"sub_scalar", lt_sub_scalar},
    {"rsub_scalar", lt_rsub_scalar},       {"mul_scalar", lt_mul_scalar},
    {"div_scalar", lt_div_scalar},         {"pow_scalar", lt_pow_scalar},
    {"rpow_scalar", lt_rpow_scalar},       {"maximum_scalar", lt_maximum_scalar},
    {"minimum_scalar", lt_minimum_scalar},
};
enum { N_SCALAR_OPS = sizeof scalar_ops / sizeof scalar_ops[0] };

static lt_tensor *input(lt_dtype dt, lt_device dev)
{
    lt_tensor *c = LT_OK_T(LT_T(dt, LT_DIMS(2, 3), 1, -2, 3, 4, 0, 7));
    return lt_device_equal(dev, lt_device_cpu()) ? c : LT_OK_T(lt_to(c, dev));
}

/* Asserts a (lazy) and e (eager) have one dtype, one shape and equal values
 * (NaN equal to NaN). */
static void assert_same_result(lt_tensor *a, lt_tensor *e, const char *what)
{
    assert_int_equal(lt_tensor_dtype(a), lt_tensor_dtype(e));
    assert_int_equal(lt_tensor_numel(a), lt_tensor_numel(e));
    double *va = lt_test_values(a), *ve = lt_test_values(e);
    for (int64_t i = 0; i < lt_tensor_numel(e); i++) {
        bool same = (isnan(va[i]) && isnan(ve[i])) || va[i] == ve[i];
        if (!same)
            fail_msg("%s: element %lld is %g on lazy, %g on cpu", what, (long long)i, va[i], ve[i]);
    }
    free(va);
    free(ve);
}

/* Every tensor-with-scalar op, on f32 and i32 inputs (promotion by the
 * weak scalar), with baked (0, 1) and parameter scalars, gives eager's
 * dtype and values. */
static void test_scalar_ops_match_eager(void **state)
{
    (void)state;
    assert_int_equal(lt_lazy_set_backend("interp"), LT_OK);
    const lt_dtype dtypes[] = {LT_F32, LT_I32};
    const double scalars[] = {0.0, 1.0, 2.5, -3.0};
    for (int d = 0; d < 2; d++) {
        lt_tensor *x = input(dtypes[d], lazy()), *xc = input(dtypes[d], lt_device_cpu());
        for (int o = 0; o < N_SCALAR_OPS; o++) {
            for (int s = 0; s < 4; s++) {
                lt_scope_begin();
                lt_tensor *e = scalar_ops[o].fn(xc, scalars[s]);
                lt_tensor *r = scalar_ops[o].fn(x, scalars[s]);
                char what[96];
                snprintf(what, sizeof what, "%s(%s, %g)", scalar_ops[o].name, lt_dtype_name(dtypes[d]),
                         scalars[s]);
                if (!e) { /* refused on cpu: refused alike on lazy */
                    assert_null(r);
                    lt_clear_error();
                } else {
                    assert_non_null(r);
                    assert_same_result(LT_OK_T(lt_to(r, lt_device_cpu())), e, what);
                }
                lt_scope_end();
            }
        }
    }
    assert_int_equal(lt_lazy_set_backend("cpu"), LT_OK);
}

/* The graph behind a scalar op is the one a wrapped scalar tensor gives:
 * with autograd state on the input the op still goes through the wrapper
 * (its gradient keeps the operands), so the two texts must be equal. */
static void test_scalar_op_records_the_wrapper_graph(void **state)
{
    (void)state;
    static char direct[4096], wrapped[4096];
    for (int o = 0; o < N_SCALAR_OPS; o++) {
        lt_scope_begin();
        lt_tensor *x = input(LT_F32, lazy());
        lt_tensor *y = LT_OK_T(lt_relu(x)); /* a pending operand, not only a data leaf */
        lt_tensor *r = LT_OK_T(scalar_ops[o].fn(y, 2.5));
        assert_true(lt_ir_text(&r, 1, direct, sizeof direct) > 0);
        assert_int_equal(lt_set_requires_grad(x, true), LT_OK);
        lt_tensor *gy = LT_OK_T(lt_relu(x));
        lt_tensor *gr = LT_OK_T(scalar_ops[o].fn(gy, 2.5));
        assert_true(lt_ir_text(&gr, 1, wrapped, sizeof wrapped) > 0);
        assert_string_equal(direct, wrapped);
        assert_non_null(strstr(direct, "relu"));
        lt_scope_end();
    }
}

/* The direct path makes one tensor per op, the result; the wrapper path
 * makes two (the wrapper, which autograd may keep, and the result). */
static void test_scalar_op_makes_no_wrapper(void **state)
{
    (void)state;
    lt_tensor *x = input(LT_F32, lazy());
    lt_metrics_reset();
    LT_OK_T(lt_mul_scalar(x, 1.0001));
    LT_OK_T(lt_rsub_scalar(x, 0.5));
    assert_int_equal(lt_metrics_counter("TensorsCreated"), 2);
    assert_int_equal(lt_metrics_counter("TensorsDestroyed"), 0);
    lt_metrics_reset();
    assert_int_equal(lt_set_requires_grad(x, true), LT_OK);
    LT_OK_T(lt_mul_scalar(x, 1.0001));
    assert_true(lt_metrics_counter("TensorsCreated") >= 2);
}

/* Scalar parameters change no key: one compile, then cache hits, and each
 * run reads the value of its own trace. */
static void test_scalar_parameters_hit_the_cache(void **state)
{
    (void)state;
    assert_int_equal(lt_lazy_set_backend("interp"), LT_OK);
    lt_tensor *x = input(LT_F32, lazy());
    assert_int_equal(lt_mark_step(), LT_OK);
    lt_metrics_reset();
    for (int i = 0; i < 3; i++) {
        lt_scope_begin();
        lt_tensor *r = LT_OK_T(lt_add_scalar(lt_mul_scalar(x, 2.0 + i), 0.5));
        assert_int_equal(lt_mark_step(), LT_OK);
        r = LT_OK_T(lt_to(r, lt_device_cpu())); /* data already: no graph of its own */
        double k = 2.0 + i;
        LT_ASSERT_VALUES(r, 0, 1 * k + 0.5, -2 * k + 0.5, 3 * k + 0.5, 4 * k + 0.5, 0.5, 7 * k + 0.5);
        lt_scope_end();
    }
    assert_int_equal(lt_metrics_counter("UncachedCompile"), 1);
    assert_int_equal(lt_metrics_counter("CachedCompile"), 2);
    assert_int_equal(lt_lazy_set_backend("cpu"), LT_OK);
}

/* The first trace of an op computes its hash start, later ones take the
 * kept one: the same graph traced twice must be one compile. hardswish
 * and softsign are used by no other test of this program, so the first
 * trace here is the first of the process. An op with attributes (a
 * leaky_relu slope) hashes them every time and tells slopes apart only
 * as runtime parameters. */
static void test_kept_hash_start_gives_the_computed_key(void **state)
{
    (void)state;
    assert_int_equal(lt_lazy_set_backend("interp"), LT_OK);
    lt_tensor *x = input(LT_F32, lazy());
    assert_int_equal(lt_mark_step(), LT_OK);
    lt_metrics_reset();
    for (int i = 0; i < 2; i++) {
        lt_scope_begin();
        lt_tensor *r = LT_OK_T(lt_softsign(lt_hardswish(x)));
        assert_int_equal(lt_mark_step(), LT_OK);
        r = LT_OK_T(lt_to(r, lt_device_cpu()));
        LT_ASSERT_VALUES(r, 1e-6, 0.4, -1.0 / 3.0 / (1 + 1.0 / 3.0), 0.75, 0.8, 0, 7.0 / 8.0);
        lt_scope_end();
    }
    assert_int_equal(lt_metrics_counter("UncachedCompile"), 1);
    assert_int_equal(lt_metrics_counter("CachedCompile"), 1);
    assert_int_equal(lt_lazy_set_backend("cpu"), LT_OK);
}

/* Argument errors on the direct path: the checks of every op. */
static void test_scalar_op_errors(void **state)
{
    (void)state;
    lt_tensor *x = input(LT_F32, lazy());
    lt_tensor *dead = LT_OK_T(lt_mul_scalar(x, 2));
    assert_non_null(lt_persist(dead));
    lt_release(dead);
    assert_null(lt_mul_scalar(dead, 2));
    LT_EXPECT_ERROR(LT_ERR_RELEASED, "mul: argument 0 was used after its last reference was released");
    assert_null(lt_rsub_scalar(NULL, 2));
    LT_EXPECT_ERROR(LT_ERR_NULL, "sub: argument 0 is NULL");
}

typedef struct other_thread_call {
    lt_tensor *x;
    lt_tensor *result;
    lt_status status;
    char message[512];
} other_thread_call;

static void *call_from_other_thread(void *arg)
{
    other_thread_call *c = arg;
    c->result = lt_mul_scalar(c->x, 3);
    c->status = lt_last_status();
    snprintf(c->message, sizeof c->message, "%s", lt_last_error());
    lt_clear_error();
    return NULL;
}

/* The direct path checks the owner once, before it reads lazy state: a
 * second thread is refused and records nothing. */
static void test_scalar_op_from_another_thread(void **state)
{
    (void)state;
    lt_tensor *x = input(LT_F32, lazy()); /* this thread owns the device */
    LT_OK_T(lt_neg(x));
    char before[4096], after[4096];
    lt_tensor *probe = LT_OK_T(lt_neg(x));
    assert_true(lt_ir_text(&probe, 1, before, sizeof before) > 0);
    other_thread_call c = {.x = x};
    pthread_t th;
    assert_int_equal(pthread_create(&th, NULL, call_from_other_thread, &c), 0);
    pthread_join(th, NULL);
    assert_null(c.result);
    assert_int_equal(c.status, LT_ERR_STATE);
    assert_non_null(strstr(c.message, "mul: the lazy device is in use by thread"));
    assert_true(lt_ir_text(&probe, 1, after, sizeof after) > 0);
    assert_string_equal(before, after);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        LT_TEST(test_scalar_ops_match_eager),
        LT_TEST(test_scalar_op_records_the_wrapper_graph),
        LT_TEST(test_scalar_op_makes_no_wrapper),
        LT_TEST(test_scalar_parameters_hit_the_cache),
        LT_TEST(test_kept_hash_start_gives_the_computed_key),
        LT_TEST(test_scalar_op_errors),
        LT_TEST(test_scalar_op_from_another_thread),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
