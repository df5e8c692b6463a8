/* test_autograd.c - the backward engine: accumulation, broadcasting,
 * shared inputs, no-grad regions, detach, errors, and eager/lazy
 * agreement. Per-op formulas are checked by finite differences in
 * test_gradcheck.c. */
#include "lt_test.h"

static lt_tensor *leaf(lt_device dev, double a, double b, double c)
{
    lt_tensor *t = LT_OK_T(lt_to(LT_T(LT_F64, LT_DIMS(3), a, b, c), dev));
    assert_int_equal(lt_set_requires_grad(t, true), LT_OK);
    return t;
}

/* loss = sum(x * y + x) with x used twice and y broadcast from [1]. */
static void check_basic(lt_device dev)
{
    lt_tensor *x = leaf(dev, 1, 2, 3);
    lt_tensor *y = LT_OK_T(lt_to(LT_T(LT_F64, LT_DIMS(1), 4), dev));
    assert_int_equal(lt_set_requires_grad(y, true), LT_OK);
    lt_tensor *loss = LT_OK_T(lt_sum(lt_add(lt_mul(x, y), x), NULL, 0, false));
    assert_true(lt_requires_grad(loss));
    assert_int_equal(lt_backward(loss, NULL), LT_OK);
    LT_ASSERT_VALUES(lt_grad(x), 0, 5, 5, 5);     /* y + 1 */
    LT_ASSERT_VALUES(lt_grad(y), 0, 6);           /* sum(x), reduced over broadcast */
    /* a second loss accumulates into .grad */
    assert_int_equal(lt_backward(LT_OK_T(lt_sum(lt_mul(x, x), NULL, 0, false)), NULL), LT_OK);
    LT_ASSERT_VALUES(lt_grad(x), 0, 7, 9, 11);    /* + 2x */
    assert_int_equal(lt_zero_grad(x), LT_OK);
    assert_null(lt_grad(x));
    assert_int_equal(lt_last_status(), LT_OK);
}

static void test_basic_cpu(void **state)
{
    (void)state;
    check_basic(lt_device_cpu());
}

static void test_basic_lazy(void **state)
{
    (void)state;
    check_basic(lt_device_parse("lazy"));
}

static void test_chain_and_seed(void **state)
{
    (void)state;
    lt_tensor *x = leaf(lt_device_cpu(), 0.5, -1, 2);
    lt_tensor *y = LT_OK_T(lt_exp(lt_tanh(x)));
    lt_tensor *seed = LT_T(LT_F64, LT_DIMS(3), 1, 2, 3);
    assert_int_equal(lt_backward(y, seed), LT_OK);
    double xs[3] = {0.5, -1, 2}, expect[3];
    for (int i = 0; i < 3; i++) {
        double t = tanh(xs[i]);
        expect[i] = (i + 1) * exp(t) * (1 - t * t);
    }
    LT_ASSERT_ARRAY(lt_grad(x), expect, 3, 1e-12);
}

static void test_no_grad_and_detach(void **state)
{
    (void)state;
    lt_tensor *x = leaf(lt_device_cpu(), 1, 2, 3);
    lt_no_grad_begin();
    assert_false(lt_grad_enabled());
    lt_tensor *y = LT_OK_T(lt_mul(x, x));
    assert_false(lt_requires_grad(y));
    lt_add_scalar_(x, 1); /* allowed: no grad mode */
    lt_no_grad_end();
    assert_true(lt_grad_enabled());
    lt_tensor *d = LT_OK_T(lt_detach(x));
    assert_false(lt_requires_grad(d));
    assert_true(lt_tensor_shares_storage(d, x));
    assert_null(lt_add_scalar_(x, 1));
    LT_EXPECT_ERROR(LT_ERR_STATE, "requires grad while grad mode is on");
    LT_ASSERT_VALUES(x, 0, 2, 3, 4); /* untouched by the refused update */
    lt_no_grad_end();
    LT_EXPECT_ERROR(LT_ERR_STATE, "no no-grad region is open");
}

static void test_errors(void **state)
{
    (void)state;
    lt_tensor *x = leaf(lt_device_cpu(), 1, 2, 3);
    lt_tensor *y = LT_OK_T(lt_mul_scalar(x, 2));
    assert_int_equal(lt_backward(y, NULL), LT_ERR_SHAPE);
    LT_EXPECT_ERROR(LT_ERR_SHAPE, "only for a one-element root; root has shape [3]");
    assert_int_equal(lt_backward(y, LT_T(LT_F64, LT_DIMS(2), 1, 1)), LT_ERR_SHAPE);
    LT_EXPECT_ERROR(LT_ERR_SHAPE, "grad_output shape [2] differs from the root's [3]");
    lt_tensor *s = LT_OK_T(lt_sum(y, NULL, 0, false));
    assert_int_equal(lt_backward(s, NULL), LT_OK);
    assert_int_equal(lt_backward(s, NULL), LT_ERR_STATE);
    LT_EXPECT_ERROR(LT_ERR_STATE, "already used by an earlier lt_backward");
    lt_tensor *plain = LT_T(LT_F64, LT_DIMS(1), 1);
    assert_int_equal(lt_backward(plain, NULL), LT_ERR_STATE);
    LT_EXPECT_ERROR(LT_ERR_STATE, "does not require grad");
    lt_tensor *ints = LT_T(LT_I64, LT_DIMS(1), 1);
    assert_int_equal(lt_set_requires_grad(ints, true), LT_ERR_DTYPE);
    LT_EXPECT_ERROR(LT_ERR_DTYPE, "only floating tensors");
    assert_int_equal(lt_set_requires_grad(y, false), LT_ERR_STATE);
    LT_EXPECT_ERROR(LT_ERR_STATE, "only leaves");
    assert_int_equal(lt_backward(NULL, NULL), LT_ERR_NULL);
    LT_EXPECT_ERROR(LT_ERR_NULL, "backward");
    /* a released root */
    lt_tensor *r = lt_retain(LT_OK_T(lt_sum(x, NULL, 0, false)));
    lt_scope_end();
    lt_release(r);
    assert_int_equal(lt_backward(r, NULL), LT_ERR_RELEASED);
    LT_EXPECT_ERROR(LT_ERR_RELEASED, "backward");
    lt_scope_begin();
}

/* A long chain frees without deep recursion when its root dies. */
static void test_long_tape_is_freed(void **state)
{
    (void)state;
    int64_t before = lt_live_tensor_count();
    lt_scope_begin();
    lt_tensor *x = leaf(lt_device_cpu(), 1, 2, 3);
    lt_tensor *y = x;
    for (int i = 0; i < 20000; i++)
        y = lt_add_scalar(y, 1e-6);
    LT_OK_T(y);
    lt_scope_end();
    assert_int_equal(lt_live_tensor_count(), before);
}

/* Gradients need the values their op saw: an in-place write to a saved
 * tensor afterwards is reported by backward, on both devices. */
static void check_modified_input(lt_device dev)
{
    lt_tensor *w = leaf(dev, 1, 2, 3);
    lt_tensor *x = LT_OK_T(lt_to(LT_T(LT_F64, LT_DIMS(3), 1, 2, 3), dev));
    lt_tensor *loss = LT_OK_T(lt_sum(lt_mul(x, w), NULL, 0, false));
    assert_non_null(lt_add_scalar_(x, 100)); /* x needs no grad: allowed */
    assert_int_equal(lt_backward(loss, NULL), LT_ERR_STATE);
    LT_EXPECT_ERROR(LT_ERR_STATE, "input 0 of mul was modified by an in-place operation");
}

static void test_modified_input_cpu(void **state)
{
    (void)state;
    check_modified_input(lt_device_cpu());
}

static void test_modified_input_lazy(void **state)
{
    (void)state;
    check_modified_input(lt_device_parse("lazy"));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        LT_TEST(test_basic_cpu), LT_TEST(test_basic_lazy), LT_TEST(test_chain_and_seed),
        LT_TEST(test_no_grad_and_detach), LT_TEST(test_errors), LT_TEST(test_long_tape_is_freed),
        LT_TEST(test_modified_input_cpu), LT_TEST(test_modified_input_lazy),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
