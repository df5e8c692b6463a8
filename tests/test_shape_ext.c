/* test_shape_ext.c - the shaping and indexing family (flip ... unique,
 * scatter_reduce): values worked out by hand on cpu and on lazy with both
 * backends, that on the lazy device the compositions trace without a
 * fallback or a sync (only unique, masked_select, where_indices and
 * repeat_interleave_tensor read data), finite-difference gradients, and
 * argument errors. tests/torch_diff compares every sample with torch. */
#include "gradcheck.h"

#include <math.h>

/* Values to a relative 1e-6 (lt_test.h). */
#define EXPECT(t, ...) LT_ASSERT_VALUES((t), 1e-6, __VA_ARGS__)

/* ---- known values ------------------------------------------------------- */

static void check_rearranging(lt_device dev)
{
    lt_tensor *x = lt_to(LT_T(LT_F32, LT_DIMS(2, 3), 1, 2, 3, 4, 5, 6), dev);
    EXPECT(lt_flip(x, (const int[]){0, 1}, 2), 6, 5, 4, 3, 2, 1);
    EXPECT(lt_roll(x, (const int64_t[]){1}, 1, (const int[]){1}, 1), 3, 1, 2, 6, 4, 5);
    EXPECT(lt_roll(x, (const int64_t[]){-2}, 1, NULL, 0), 3, 4, 5, 6, 1, 2);
    lt_tensor *r = lt_rot90(x, 1, 0, 1);
    LT_ASSERT_SHAPE(r, 3, 2);
    EXPECT(r, 3, 6, 2, 5, 1, 4);
    EXPECT(lt_repeat(lt_select(x, 0, 0), (const int64_t[]){2, 2}, 2), 1, 2, 3, 1, 2, 3, 1, 2, 3, 1, 2, 3);
    EXPECT(lt_repeat_interleave(lt_select(x, 1, 0), 2, NULL), 1, 1, 4, 4);
    EXPECT(lt_movedim(x, (const int[]){0}, (const int[]){1}, 1), 1, 4, 2, 5, 3, 6);
    /* reflect: 3 2 | 1 2 3 | 2 ; replicate: 1 1 | 1 2 3 | 3 ; circular: 2 3 | 1 2 3 | 1 */
    lt_tensor *row = lt_view(lt_select(x, 0, 0), LT_DIMS(1, 1, 3));
    EXPECT(lt_pad(row, (const int64_t[]){2, 1}, 2, LT_PAD_REFLECT, 0), 3, 2, 1, 2, 3, 2);
    EXPECT(lt_pad(row, (const int64_t[]){2, 1}, 2, LT_PAD_REPLICATE, 0), 1, 1, 1, 2, 3, 3);
    EXPECT(lt_pad(row, (const int64_t[]){2, 1}, 2, LT_PAD_CIRCULAR, 0), 2, 3, 1, 2, 3, 1);
    EXPECT(lt_pad(row, (const int64_t[]){-1, 1}, 2, LT_PAD_CONSTANT, 9), 2, 3, 9);
}

static void check_indexing(lt_device dev)
{
    lt_tensor *x = lt_to(LT_T(LT_F32, LT_DIMS(2, 3), 1, 2, 3, 4, 5, 6), dev);
    lt_tensor *i = lt_to(LT_T(LT_I64, LT_DIMS(2), 2, 0), dev);
    EXPECT(lt_take(x, lt_to(LT_T(LT_I64, LT_DIMS(3), -1, 0, 4), dev)), 6, 1, 5);
    lt_tensor *src = lt_to(LT_T(LT_F32, LT_DIMS(2, 2), 10, 20, 30, 40), dev);
    EXPECT(lt_index_add(x, 1, i, src, 2.0), 41, 2, 23, 84, 5, 66);
    EXPECT(lt_index_copy(x, 1, i, src), 20, 2, 10, 40, 5, 30);
    EXPECT(lt_index_fill(x, 1, lt_to(LT_T(LT_I64, LT_DIMS(1), -1), dev), 0), 1, 2, 0, 4, 5, 0);
    lt_tensor *rows = lt_to(LT_T(LT_I64, LT_DIMS(3), 1, 1, 0), dev);
    EXPECT(lt_index_put(x, &rows, 1, lt_to(LT_T(LT_F32, LT_DIMS(3), 1, 1, 1), dev), true), 2, 3, 4, 6, 7, 8);
    lt_tensor *mask = lt_to(LT_T(LT_BOOL, LT_DIMS(2, 3), 0, 1, 0, 1, 1, 0), dev);
    EXPECT(lt_masked_scatter(x, mask, lt_to(LT_T(LT_F32, LT_DIMS(4), 7, 8, 9, 10), dev)), 1, 7, 3, 8, 9, 6);
    EXPECT(lt_masked_select(x, mask), 2, 4, 5);
    /* scatter_reduce amax along dim 1: row 0 sends 10, 20 to 2, 0 */
    lt_tensor *idx2 = lt_to(LT_T(LT_I64, LT_DIMS(2, 2), 2, 0, 0, 0), dev);
    EXPECT(lt_scatter_reduce(x, 1, idx2, src, LT_SCATTER_AMAX, false), 20, 2, 10, 40, 5, 6);
    EXPECT(lt_scatter_reduce(x, 1, idx2, src, LT_SCATTER_MEAN, true), 10.5, 2, 6.5, 74.0 / 3, 5, 6);
}

static void check_misc(lt_device dev)
{
    lt_tensor *v = lt_to(LT_T(LT_F32, LT_DIMS(2), 1, 2), dev);
    EXPECT(lt_diag(v, 1), 0, 1, 0, 0, 0, 2, 0, 0, 0);
    lt_tensor *m = lt_to(LT_T(LT_I32, LT_DIMS(2, 2), 1, 2, 3, 4), dev);
    lt_tensor *tr = lt_trace(m);
    assert_int_equal(lt_tensor_dtype(tr), LT_I64);
    EXPECT(tr, 5);
    EXPECT(lt_tril_indices(3, 3, -1, dev), 1, 2, 2, 0, 0, 1);
    lt_tensor *seq = lt_to(LT_T(LT_F32, LT_DIMS(4), 1, 2, 2, 5), dev);
    lt_tensor *vals = lt_to(LT_T(LT_F32, LT_DIMS(5), 0, 2, 3, 9, NAN), dev);
    EXPECT(lt_searchsorted(seq, vals, false, false), 0, 1, 3, 4, 4);
    EXPECT(lt_searchsorted(seq, vals, true, true), 0, 3, 3, 4, 4);
    lt_tensor *inv = NULL, *cnt = NULL;
    lt_tensor *u = lt_unique(lt_to(LT_T(LT_I64, LT_DIMS(5), 3, 1, 3, 3, -2), dev), &inv, &cnt);
    EXPECT(u, -2, 1, 3);
    EXPECT(inv, 2, 1, 2, 2, 0);
    EXPECT(cnt, 1, 1, 3);
}

static void check_all(lt_device dev)
{
    check_rearranging(dev);
    check_indexing(dev);
    check_misc(dev);
}

static void test_known_values_cpu(void **state)
{
    (void)state;
    check_all(lt_device_cpu());
}

static void test_known_values_lazy(void **state)
{
    (void)state;
    lt_test_each_lazy_backend(check_all);
}

/* ---- the lazy device traces the compositions --------------------------------- */

static void test_lazy_traced_without_sync(void **state)
{
    (void)state;
    if (!lt_test_use_backend("cpu"))
        return;
    lt_device lazy = lt_device_parse("lazy");
    lt_tensor *x = lt_to(LT_T(LT_F32, LT_DIMS(2, 3), 1, 2, 3, 4, 5, 6), lazy);
    lt_tensor *i = lt_to(LT_T(LT_I64, LT_DIMS(2, 2), 2, 0, 1, 1), lazy);
    lt_tensor *seq = lt_to(LT_T(LT_F32, LT_DIMS(3), 1, 3, 5), lazy);
    assert_int_equal(lt_mark_step(), LT_OK);
    lt_metrics_reset();
    lt_tensor *parts[] = {
        lt_flip(x, (const int[]){1}, 1),
        lt_roll(x, (const int64_t[]){1}, 1, (const int[]){0}, 1),
        lt_rot90(x, 3, 0, 1),
        lt_tile(x, (const int64_t[]){2, 1}, 2),
        lt_repeat_interleave(x, 2, (const int[]){1}),
        lt_pad(lt_unsqueeze(x, 0), (const int64_t[]){1, 1}, 2, LT_PAD_REFLECT, 0),
        lt_take_along_dim(x, i, (const int[]){1}),
        lt_index_fill(x, 0, lt_to(LT_T(LT_I64, LT_DIMS(1), 1), lazy), -1),
        lt_masked_scatter(x, lt_gt_scalar(x, 3), lt_neg(x)),
        lt_diag_embed(x, 0, 0, 1),
        lt_searchsorted(seq, x, false, false),
        lt_scatter_reduce(x, 1, i, lt_narrow(x, 1, 0, 2), LT_SCATTER_PROD, true),
    };
    for (size_t k = 0; k < sizeof parts / sizeof parts[0]; k++)
        assert_non_null(parts[k]);
    assert_int_equal(lt_metrics_counter("Fallback"), 0);
    assert_int_equal(lt_metrics_counter("Barrier"), 0);
    assert_int_equal(lt_mark_step(), LT_OK);
    assert_int_equal(lt_metrics_counter("Fallback"), 0);
    EXPECT(parts[0], 3, 2, 1, 6, 5, 4);
    EXPECT(parts[11], 2, 2, 3, 4, 5 * 4 * 5, 6); /* row 1 multiplies 4 and 5 into position 1 */
}

/* ---- gradients ------------------------------------------------------------------ */

static lt_tensor *pad_fn(lt_tensor *const *x, const void *ctx)
{
    return lt_pad(x[0], (const int64_t[]){2, 1}, 2, *(const int *)ctx, 0.5);
}

static lt_tensor *scatter_amax_fn(lt_tensor *const *x, const void *ctx)
{
    (void)ctx;
    lt_tensor *idx = lt_to(LT_T(LT_I64, LT_DIMS(2, 3), 0, 2, 0, 1, 1, 3), lt_tensor_device(x[0]));
    return lt_scatter_reduce(x[0], 1, idx, x[1], LT_SCATTER_AMAX, true);
}

static lt_tensor *masked_scatter_fn(lt_tensor *const *x, const void *ctx)
{
    (void)ctx;
    lt_tensor *mask = lt_to(LT_T(LT_BOOL, LT_DIMS(2, 4), 1, 0, 0, 1, 0, 1, 1, 0), lt_tensor_device(x[0]));
    return lt_masked_scatter(x[0], mask, x[1]);
}

static void test_gradients(void **state)
{
    (void)state;
    static const int modes[] = {LT_PAD_CONSTANT, LT_PAD_REFLECT, LT_PAD_REPLICATE, LT_PAD_CIRCULAR};
    for (int k = 0; k < 4; k++)
        GRADCHECK_NAMED("pad", pad_fn, &modes[k], GC_BOTH, GC_UNIFORM(-2, 2, 1, 2, 4));
    GRADCHECK(scatter_amax_fn, NULL, GC_BOTH, GC_DISTINCT(2, 4), GC_UNIFORM(-3, 3, 2, 3));
    GRADCHECK(masked_scatter_fn, NULL, GC_BOTH, GC_UNIFORM(-2, 2, 2, 4), GC_UNIFORM(-2, 2, 5));
}

/* ---- errors -------------------------------------------------------------------- */

static void test_errors(void **state)
{
    (void)state;
    lt_tensor *x = LT_T(LT_F32, LT_DIMS(2, 3), 1, 2, 3, 4, 5, 6);
    lt_tensor *out[4];
    assert_null(lt_flip(x, (const int[]){0, -2}, 2));
    LT_EXPECT_ERROR(LT_ERR_ARGUMENT, "flip: dim 0 appears more than once");
    assert_null(lt_roll(x, (const int64_t[]){1, 2}, 2, (const int[]){0}, 1));
    LT_EXPECT_ERROR(LT_ERR_ARGUMENT, "roll: 2 shifts and 1 dims");
    assert_null(lt_rot90(x, 1, 1, -1));
    LT_EXPECT_ERROR(LT_ERR_ARGUMENT, "rot90: the rotation dims must differ");
    assert_null(lt_repeat(x, (const int64_t[]){2}, 1));
    LT_EXPECT_ERROR(LT_ERR_ARGUMENT, "repeat: 1 repeat counts for a 2-d tensor");
    assert_null(lt_repeat_interleave(x, -1, NULL));
    LT_EXPECT_ERROR(LT_ERR_ARGUMENT, "repeats is -1");
    assert_int_equal(lt_split_sizes(x, (const int64_t[]){1, 1}, 2, 1, out, 4), -1);
    LT_EXPECT_ERROR(LT_ERR_ARGUMENT, "sum to 2, expected exactly 3");
    assert_int_equal(lt_unbind(x, 1, out, 2), -1);
    LT_EXPECT_ERROR(LT_ERR_ARGUMENT, "do not fit in max_out = 2");
    assert_null(lt_pad(x, (const int64_t[]){1}, 1, LT_PAD_CONSTANT, 0));
    LT_EXPECT_ERROR(LT_ERR_ARGUMENT, "pad: 1 pad sizes");
    assert_null(lt_pad(lt_unsqueeze(x, 0), (const int64_t[]){3, 0}, 2, LT_PAD_REFLECT, 0));
    LT_EXPECT_ERROR(LT_ERR_SHAPE, "reflect padding of 3 does not fit");
    assert_null(lt_take(x, x));
    LT_EXPECT_ERROR(LT_ERR_DTYPE, "take: index has dtype f32");
    lt_tensor *i = LT_T(LT_I64, LT_DIMS(1), 0);
    assert_null(lt_index_add(x, 0, i, LT_T(LT_F64, LT_DIMS(1, 3), 1, 1, 1), 1.0));
    LT_EXPECT_ERROR(LT_ERR_DTYPE, "index_add: the input is f32 and source f64");
    assert_null(lt_masked_select(x, x));
    LT_EXPECT_ERROR(LT_ERR_DTYPE, "masked_select: mask has dtype f32");
    assert_null(lt_diag(lt_unsqueeze(x, 0), 0));
    LT_EXPECT_ERROR(LT_ERR_SHAPE, "diag: expects a 1-D or 2-D tensor");
    assert_null(lt_trace(lt_gt_scalar(x, 0)));
    LT_EXPECT_ERROR(LT_ERR_DTYPE, "trace: bool");
    assert_null(lt_tril_indices(-1, 2, 0, lt_device_cpu()));
    LT_EXPECT_ERROR(LT_ERR_ARGUMENT, "row -1");
    assert_int_equal(lt_meshgrid((lt_tensor *[]){i, lt_select(x, 0, 0)}, 2, false, out, 4), -1);
    LT_EXPECT_ERROR(LT_ERR_DTYPE, "meshgrid: tensor 1 is f32 but tensor 0 is i64");
    assert_null(lt_searchsorted(lt_gt_scalar(x, 0), x, false, false));
    LT_EXPECT_ERROR(LT_ERR_DTYPE, "searchsorted: bool");
    assert_null(lt_scatter_reduce(x, 0, lt_view(i, LT_DIMS(1, 1)), x, 7, true));
    LT_EXPECT_ERROR(LT_ERR_ARGUMENT, "reduce 7 is not an LT_SCATTER_* value");
    lt_tensor *inv = x;
    assert_null(lt_unique(NULL, &inv, NULL));
    assert_null(inv);
    assert_null(lt_flip(NULL, NULL, 0));
    assert_null(lt_pad(NULL, NULL, 0, LT_PAD_CONSTANT, 0));
    assert_null(lt_masked_scatter(x, NULL, x));
    lt_clear_error();
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        LT_TEST(test_known_values_cpu), LT_TEST(test_known_values_lazy), LT_TEST(test_lazy_traced_without_sync),
        LT_TEST(test_gradients),        LT_TEST(test_errors),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
