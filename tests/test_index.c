/* test_index.c - lt_index and lt_index_put_: advanced indexing with
 * integer index tensors (PyTorch's t[i0, i1, ...]), on cpu and lazy:
 * values written out by hand, broadcasting of the indices, where the index
 * dims land (adjacent or not), negative indices, writes through views,
 * gradients, and the errors. */
#include "lt_test.h"

static const char *const devices[] = {"cpu", "lazy"};

/* [[0, 1, 2, 3], [4, 5, 6, 7], [8, 9, 10, 11]] on dev. */
static lt_tensor *grid(lt_device dev)
{
    return LT_OK_T(lt_to(LT_T(LT_F32, LT_DIMS(3, 4), 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11), dev));
}

static lt_tensor *idx(lt_device dev, lt_tensor *cpu) { return LT_OK_T(lt_to(cpu, dev)); }

static void test_index_reads(void **state)
{
    (void)state;
    for (int k = 0; k < 2; k++) {
        lt_device dev = lt_device_parse(devices[k]);
        lt_tensor *t = grid(dev);
        /* t[:, [3, -1, 0]] */
        lt_tensor *cols = LT_OK_T(lt_index(t, (lt_tensor *[]){NULL, idx(dev, LT_T(LT_I64, LT_DIMS(3), 3, -1, 0))}, 2));
        LT_ASSERT_SHAPE(cols, 3, 3);
        LT_ASSERT_VALUES(cols, 0, 3, 3, 0, 7, 7, 4, 11, 11, 8);
        /* t[[0, 2], [1, 3]]: one element per index pair */
        lt_tensor *pairs = LT_OK_T(lt_index(t, (lt_tensor *[]){idx(dev, LT_T(LT_I64, LT_DIMS(2), 0, 2)),
                                                                idx(dev, LT_T(LT_I32, LT_DIMS(2), 1, 3))}, 2));
        LT_ASSERT_SHAPE(pairs, 2);
        LT_ASSERT_VALUES(pairs, 0, 1, 11);
        /* t[[[0], [2]], [0, 3]]: the indices broadcast to [2, 2] */
        lt_tensor *b = LT_OK_T(lt_index(t, (lt_tensor *[]){idx(dev, LT_T(LT_I64, LT_DIMS(2, 1), 0, 2)),
                                                            idx(dev, LT_T(LT_I64, LT_DIMS(2), 0, 3))}, 2));
        LT_ASSERT_SHAPE(b, 2, 2);
        LT_ASSERT_VALUES(b, 0, 0, 3, 8, 11);
        /* t[[2, 0]]: rows, the trailing dim taken whole */
        lt_tensor *rows = LT_OK_T(lt_index(t, (lt_tensor *[]){idx(dev, LT_T(LT_I64, LT_DIMS(2), 2, 0))}, 1));
        LT_ASSERT_VALUES(rows, 0, 8, 9, 10, 11, 0, 1, 2, 3);
    }
}

/* x[i, :, j] (index dims not adjacent: they go first) and x[:, [[2, 0]]]
 * (one index dim in the middle: it stays there), x = arange(24) [2, 3, 4]. */
static void test_index_dim_placement(void **state)
{
    (void)state;
    for (int k = 0; k < 2; k++) {
        lt_device dev = lt_device_parse(devices[k]);
        lt_tensor *x = LT_OK_T(lt_reshape(lt_arange(0, 24, 1, LT_F32, dev), LT_DIMS(2, 3, 4)));
        lt_tensor *apart = LT_OK_T(lt_index(x, (lt_tensor *[]){idx(dev, LT_T(LT_I64, LT_DIMS(2), 1, 0)), NULL,
                                                                idx(dev, LT_T(LT_I64, LT_DIMS(2), 2, 3))}, 3));
        LT_ASSERT_SHAPE(apart, 2, 3);
        LT_ASSERT_VALUES(apart, 0, 14, 18, 22, 3, 7, 11);
        lt_tensor *mid = LT_OK_T(lt_index(x, (lt_tensor *[]){NULL, idx(dev, LT_T(LT_I64, LT_DIMS(1, 2), 2, 0))}, 2));
        LT_ASSERT_SHAPE(mid, 2, 1, 2, 4);
        LT_ASSERT_VALUES(lt_select(lt_select(lt_select(mid, 0, 1), 0, 0), 0, 0), 0, 20, 21, 22, 23);
        LT_ASSERT_VALUES(lt_select(lt_select(lt_select(mid, 0, 0), 0, 0), 0, 1), 0, 0, 1, 2, 3);
    }
}

static void test_index_put(void **state)
{
    (void)state;
    for (int k = 0; k < 2; k++) {
        lt_device dev = lt_device_parse(devices[k]);
        lt_tensor *t = LT_OK_T(lt_zeros(LT_DIMS(3, 4), LT_F32, dev));
        lt_tensor *c = idx(dev, LT_T(LT_I64, LT_DIMS(2), 1, -1));
        /* t[:, [1, -1]] = 5 (an f64 0-dim value, converted to t's dtype) */
        assert_ptr_equal(lt_index_put_(t, (lt_tensor *[]){NULL, c}, 2, lt_scalar(5, LT_F64, dev)), t);
        LT_ASSERT_VALUES(t, 0, 0, 5, 0, 5, 0, 5, 0, 5, 0, 5, 0, 5);
        /* t[[0, 2], [0, 2]] = [1, 2] */
        lt_tensor *d = idx(dev, LT_T(LT_I64, LT_DIMS(2), 0, 2));
        LT_OK_T(lt_index_put_(t, (lt_tensor *[]){d, d}, 2, lt_to(LT_T(LT_F32, LT_DIMS(2), 1, 2), dev)));
        LT_ASSERT_VALUES(t, 0, 1, 5, 0, 5, 0, 5, 0, 5, 0, 5, 2, 5);
        /* through a view: base[1][[0, 2]] = 7 writes the base */
        lt_tensor *base = LT_OK_T(lt_zeros(LT_DIMS(2, 3), LT_F32, dev));
        LT_OK_T(lt_index_put_(lt_select(base, 0, 1), (lt_tensor *[]){idx(dev, LT_T(LT_I64, LT_DIMS(2), 0, 2))}, 1,
                              lt_scalar(7, LT_F32, dev)));
        LT_ASSERT_VALUES(base, 0, 0, 0, 0, 7, 0, 7);
    }
}

/* d sum(t[:, [3, -1, 0]]) / dt counts how often each element is taken. */
static void test_index_gradient(void **state)
{
    (void)state;
    for (int k = 0; k < 2; k++) {
        lt_device dev = lt_device_parse(devices[k]);
        lt_tensor *t = grid(dev);
        assert_int_equal(lt_set_requires_grad(t, true), LT_OK);
        lt_tensor *cols = lt_index(t, (lt_tensor *[]){NULL, idx(dev, LT_T(LT_I64, LT_DIMS(3), 3, -1, 0))}, 2);
        assert_int_equal(lt_backward(LT_OK_T(lt_sum(cols, NULL, 0, false)), NULL), LT_OK);
        LT_ASSERT_VALUES(LT_OK_T(lt_grad(t)), 0, 1, 0, 0, 2, 1, 0, 0, 2, 1, 0, 0, 2);
    }
}

static void test_index_errors(void **state)
{
    (void)state;
    lt_device cpu = lt_device_cpu();
    lt_tensor *t = grid(cpu), *i = LT_T(LT_I64, LT_DIMS(1), 0);
    assert_null(lt_index(t, (lt_tensor *[]){LT_T(LT_F32, LT_DIMS(1), 0)}, 1));
    LT_EXPECT_ERROR(LT_ERR_DTYPE, "index: the index of dim 0 is f32, expected an integer tensor");
    assert_null(lt_index(t, (lt_tensor *[]){LT_T(LT_BOOL, LT_DIMS(3), 1, 0, 1)}, 1));
    LT_EXPECT_ERROR(LT_ERR_DTYPE, "lt_nonzero");
    assert_null(lt_index(t, (lt_tensor *[]){LT_T(LT_I64, LT_DIMS(1), 3), LT_T(LT_I64, LT_DIMS(1), 0)}, 2));
    LT_EXPECT_ERROR(LT_ERR_INDEX, "index: index out of range for dim 0 of size 3");
    assert_null(lt_index(t, (lt_tensor *[]){i, i, i}, 3));
    LT_EXPECT_ERROR(LT_ERR_INDEX, "index: 3 index entries for a tensor of 2 dims, expected 1..2");
    assert_null(lt_index(t, (lt_tensor *[]){NULL, NULL}, 2));
    LT_EXPECT_ERROR(LT_ERR_NULL, "every index entry is NULL");
    assert_null(lt_index(t, NULL, 1));
    LT_EXPECT_ERROR(LT_ERR_NULL, "index: indices is NULL");
    assert_null(lt_index(NULL, (lt_tensor *[]){i}, 1));
    LT_EXPECT_ERROR(LT_ERR_NULL, "index: argument 0 is NULL");
    assert_null(lt_index(LT_OK_T(lt_to(t, lt_device_parse("lazy"))), (lt_tensor *[]){i}, 1));
    LT_EXPECT_ERROR(LT_ERR_DEVICE, "index: the index of dim 0 is on another device");
    assert_null(lt_index_put_(t, (lt_tensor *[]){i}, 1, NULL));
    LT_EXPECT_ERROR(LT_ERR_NULL, "index_put_: argument 2 is NULL");
    assert_null(lt_index_put_(t, (lt_tensor *[]){i}, 1, LT_T(LT_F32, LT_DIMS(3), 1, 2, 3)));
    assert_int_equal(lt_last_status(), LT_ERR_SHAPE); /* [3] does not broadcast to [1, 4] */
    lt_clear_error();
    LT_ASSERT_VALUES(t, 0, 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11); /* refused writes change nothing */
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        LT_TEST(test_index_reads),
        LT_TEST(test_index_dim_placement),
        LT_TEST(test_index_put),
        LT_TEST(test_index_gradient),
        LT_TEST(test_index_errors),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
