/* test_views.c - view ops: view, reshape, permute, transpose, narrow, slice,
 * select, squeeze, unsqueeze, flatten, expand, diagonal. Checks aliasing,
 * strides and offsets (expected values taken from torch 1.13), values, and
 * errors. */
#include "lt_test.h"
#include "eager/eager.h" /* white-box: lt_view_geometry */

/* arange(0, numel) of dtype dt in the given shape (contiguous). */
static lt_tensor *ar(lt_dtype dt, const int64_t *dims, int nd)
{
    int64_t n = 1;
    for (int i = 0; i < nd; i++)
        n *= dims[i];
    return lt_reshape(lt_arange(0, (double)n, 1, dt, lt_test_cpu()), dims, nd);
}
#define AR(dt, ...) LT_OK_T(ar((dt), LT_DIMS(__VA_ARGS__)))

#define ASSERT_STRIDES(t, ...) \
    assert_strides((t), (const int64_t[]){__VA_ARGS__}, \
                   (int)(sizeof((const int64_t[]){__VA_ARGS__}) / sizeof(int64_t)), __FILE__, __LINE__)
static void assert_strides(lt_tensor *t, const int64_t *strides, int nd, const char *file, int line)
{
    if (!t || lt_tensor_ndim(t) != nd) {
        print_error("%s:%d: expected %d dims, got %d\n", file, line, nd, t ? lt_tensor_ndim(t) : -1);
        _fail(file, line);
    }
    for (int i = 0; i < nd; i++) {
        if (lt_tensor_strides(t)[i] != strides[i]) {
            print_error("%s:%d: stride %d is %lld, expected %lld\n", file, line, i,
                        (long long)lt_tensor_strides(t)[i], (long long)strides[i]);
            _fail(file, line);
        }
    }
}

static void test_view_basic(void **state)
{
    (void)state;
    lt_tensor *base = LT_OK_T(lt_arange(0, 12, 1, LT_F32, lt_test_cpu()));
    lt_tensor *v = LT_OK_T(lt_view(base, LT_DIMS(3, 4)));
    LT_ASSERT_SHAPE(v, 3, 4);
    ASSERT_STRIDES(v, 4, 1);
    assert_int_equal(lt_tensor_offset(v), 0);
    assert_true(lt_tensor_shares_storage(v, base));
    LT_ASSERT_VALUES(v, 0, 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11);
    lt_tensor *w = LT_OK_T(lt_view(v, LT_DIMS(2, -1, 3)));
    LT_ASSERT_SHAPE(w, 2, 2, 3);
    ASSERT_STRIDES(w, 6, 3, 1);
    lt_tensor *flat = LT_OK_T(lt_view(w, LT_DIMS(-1)));
    LT_ASSERT_SHAPE(flat, 12);
    /* 0-d <-> [1, 1] */
    lt_tensor *s = LT_OK_T(lt_scalar(5, LT_I64, lt_test_cpu()));
    lt_tensor *s11 = LT_OK_T(lt_view(s, LT_DIMS(1, 1)));
    LT_ASSERT_SHAPE(s11, 1, 1);
    ASSERT_STRIDES(s11, 1, 1);
    lt_tensor *back = LT_OK_T(lt_view(s11, NULL, 0));
    assert_int_equal(lt_tensor_ndim(back), 0);
    LT_ASSERT_VALUES(back, 0, 5);
    LT_ASSERT_SHAPE(LT_OK_T(lt_view(s, LT_DIMS(-1))), 1);
}

static void test_view_errors(void **state)
{
    (void)state;
    lt_tensor *t = AR(LT_F32, 2, 3);
    assert_null(lt_view(t, LT_DIMS(-1, -1)));
    LT_EXPECT_ERROR(LT_ERR_SHAPE, "only one size can be -1");
    assert_null(lt_view(t, LT_DIMS(3, -2)));
    LT_EXPECT_ERROR(LT_ERR_SHAPE, "invalid size -2 at dim 1");
    assert_null(lt_view(t, LT_DIMS(4, -1)));
    LT_EXPECT_ERROR(LT_ERR_SHAPE, "shape [4, -1] is invalid for input of shape [2, 3] (6 elements)");
    assert_null(lt_view(t, LT_DIMS(7)));
    LT_EXPECT_ERROR(LT_ERR_SHAPE, "view: shape [7] is invalid");
    assert_null(lt_view(t, LT_DIMS(0, -1)));
    LT_EXPECT_ERROR(LT_ERR_SHAPE, "view: shape [0, -1] is invalid");
    lt_tensor *e = LT_OK_T(lt_zeros(LT_DIMS(0, 3), LT_F32, lt_test_cpu()));
    assert_null(lt_view(e, LT_DIMS(-1, 0)));
    LT_EXPECT_ERROR(LT_ERR_SHAPE, "ambiguous");
    assert_null(lt_view(t, LT_DIMS(1, 1, 1, 1, 1, 1, 1, 1, 6)));
    LT_EXPECT_ERROR(LT_ERR_SHAPE, "9 dims requested, expected 0..8");
    assert_null(lt_view(t, NULL, 2));
    LT_EXPECT_ERROR(LT_ERR_NULL, "dims is NULL");
    assert_null(lt_view(NULL, LT_DIMS(6)));
    LT_EXPECT_ERROR(LT_ERR_NULL, "view: argument 0 is NULL");
    assert_null(lt_reshape(t, LT_DIMS(5)));
    LT_EXPECT_ERROR(LT_ERR_SHAPE, "reshape: shape [5] is invalid");
    /* a huge product must not overflow into a match */
    assert_null(lt_view(t, LT_DIMS(INT64_MAX, 4, 0, -1)));
    LT_EXPECT_ERROR(LT_ERR_SHAPE, "view:");
}

/* Views of non-contiguous tensors succeed exactly where torch's do. */
static void test_view_non_contiguous(void **state)
{
    (void)state;
    lt_tensor *t = LT_OK_T(lt_transpose(AR(LT_F32, 3, 4), 0, 1)); /* [4, 3], strides [1, 4] */
    ASSERT_STRIDES(t, 1, 4);
    assert_null(lt_view(t, LT_DIMS(12)));
    LT_EXPECT_ERROR(LT_ERR_SHAPE, "is not compatible with the input's strides [1, 4]");
    assert_null(lt_view(t, LT_DIMS(2, 6)));
    LT_EXPECT_ERROR(LT_ERR_SHAPE, "use lt_reshape");
    lt_tensor *u = LT_OK_T(lt_view(t, LT_DIMS(4, 1, 3, 1)));
    ASSERT_STRIDES(u, 1, 12, 4, 4);
    assert_true(lt_tensor_shares_storage(u, t));
    LT_ASSERT_VALUES(u, 0, 0, 4, 8, 1, 5, 9, 2, 6, 10, 3, 7, 11);
    /* [3, 1, 4] transposed (0, 2) viewed as [4, 3] */
    lt_tensor *p = LT_OK_T(lt_transpose(AR(LT_F32, 3, 1, 4), 0, 2));
    ASSERT_STRIDES(LT_OK_T(lt_view(p, LT_DIMS(4, 3))), 1, 4);
    /* a strided slice stays evenly strided: every view works */
    lt_tensor *s = LT_OK_T(lt_slice(AR(LT_F64, 4, 6), 1, 0, 6, 2)); /* [4, 3] strides [6, 2] */
    ASSERT_STRIDES(s, 6, 2);
    lt_tensor *s3 = LT_OK_T(lt_view(s, LT_DIMS(2, 2, 3)));
    ASSERT_STRIDES(s3, 12, 6, 2);
    LT_ASSERT_VALUES(s3, 0, 0, 2, 4, 6, 8, 10, 12, 14, 16, 18, 20, 22);
    ASSERT_STRIDES(LT_OK_T(lt_view(s, LT_DIMS(12))), 2);
    /* a narrowed block is not: merging rows fails, splitting them works */
    lt_tensor *n = LT_OK_T(lt_narrow(AR(LT_F64, 4, 6), 1, 0, 3)); /* strides [6, 1] */
    assert_null(lt_view(n, LT_DIMS(12)));
    LT_EXPECT_ERROR(LT_ERR_SHAPE, "use lt_reshape");
    ASSERT_STRIDES(LT_OK_T(lt_view(n, LT_DIMS(2, 2, 3))), 12, 6, 1);
    /* expanded (stride 0) */
    lt_tensor *e = LT_OK_T(lt_expand(AR(LT_F32, 3), LT_DIMS(2, 3)));
    ASSERT_STRIDES(e, 0, 1);
    assert_null(lt_view(e, LT_DIMS(6)));
    LT_EXPECT_ERROR(LT_ERR_SHAPE, "not compatible");
    ASSERT_STRIDES(LT_OK_T(lt_view(e, LT_DIMS(2, 3, 1))), 0, 1, 1);
    ASSERT_STRIDES(LT_OK_T(lt_view(e, LT_DIMS(2, 1, 3))), 0, 3, 1);
    ASSERT_STRIDES(LT_OK_T(lt_view(e, LT_DIMS(1, 2, 3))), 0, 0, 1);
}

static void test_views_alias_storage(void **state)
{
    (void)state;
    lt_tensor *base = AR(LT_F32, 3, 4);
    lt_tensor *col = LT_OK_T(lt_select(base, 1, 2)); /* base[:, 2] */
    assert_true(lt_tensor_shares_storage(col, base));
    assert_non_null(lt_fill_(col, -1));
    LT_ASSERT_VALUES(base, 0, 0, 1, -1, 3, 4, 5, -1, 7, 8, 9, -1, 11);
    /* writing the base shows through a transposed, sliced view */
    lt_tensor *v = LT_OK_T(lt_slice(LT_OK_T(lt_transpose(base, 0, 1)), 0, 1, 4, 2)); /* rows 1, 3 of base^T */
    LT_ASSERT_SHAPE(v, 2, 3);
    LT_ASSERT_VALUES(v, 0, 1, 5, 9, 3, 7, 11);
    lt_tensor *src = LT_OK_T(lt_full(LT_DIMS(3, 4), 100, LT_F32, lt_test_cpu()));
    assert_non_null(lt_copy_(base, src));
    LT_ASSERT_VALUES(v, 0, 100, 100, 100, 100, 100, 100);
    /* lt_copy_ into a view writes only the viewed elements */
    lt_tensor *row = LT_OK_T(lt_narrow(base, 0, 1, 1));
    assert_non_null(lt_copy_(row, LT_OK_T(lt_arange(0, 4, 1, LT_I64, lt_test_cpu()))));
    LT_ASSERT_VALUES(base, 0, 100, 100, 100, 100, 0, 1, 2, 3, 100, 100, 100, 100);
    /* a view keeps the storage alive after its base is gone */
    lt_tensor *tmp = LT_OK_T(lt_arange(0, 4, 1, LT_F64, lt_test_cpu()));
    lt_tensor *keep = LT_OK_T(lt_view(tmp, LT_DIMS(2, 2)));
    lt_retain(keep);
    lt_scope_end();
    lt_scope_begin();
    LT_ASSERT_VALUES(keep, 0, 0, 1, 2, 3);
    lt_release(keep);
}

static void test_reshape_copies_only_when_needed(void **state)
{
    (void)state;
    lt_tensor *t = AR(LT_I64, 2, 3, 4);
    lt_tensor *r = LT_OK_T(lt_reshape(t, LT_DIMS(6, -1)));
    assert_true(lt_tensor_shares_storage(r, t));
    ASSERT_STRIDES(r, 4, 1);
    /* strided but evenly: still a view */
    lt_tensor *s = LT_OK_T(lt_slice(t, 2, 0, 4, 2)); /* [2, 3, 2] */
    lt_tensor *rs = LT_OK_T(lt_reshape(s, LT_DIMS(12)));
    assert_true(lt_tensor_shares_storage(rs, t));
    ASSERT_STRIDES(rs, 2);
    /* transposed: a copy with the right element order */
    lt_tensor *tt = LT_OK_T(lt_transpose(AR(LT_F32, 3, 4), 0, 1));
    lt_tensor *c = LT_OK_T(lt_reshape(tt, LT_DIMS(12)));
    assert_false(lt_tensor_shares_storage(c, tt));
    assert_true(lt_tensor_is_contiguous(c));
    LT_ASSERT_VALUES(c, 0, 0, 4, 8, 1, 5, 9, 2, 6, 10, 3, 7, 11);
    lt_tensor *c2 = LT_OK_T(lt_reshape(tt, LT_DIMS(2, -1)));
    LT_ASSERT_SHAPE(c2, 2, 6);
    LT_ASSERT_VALUES(c2, 0, 0, 4, 8, 1, 5, 9, 2, 6, 10, 3, 7, 11);
    /* an expanded tensor reshapes through a copy */
    lt_tensor *e = LT_OK_T(lt_expand(LT_T(LT_BOOL, LT_DIMS(2, 1), 1, 0), LT_DIMS(2, 2)));
    lt_tensor *er = LT_OK_T(lt_reshape(e, LT_DIMS(4)));
    assert_int_equal(lt_tensor_dtype(er), LT_BOOL);
    LT_ASSERT_VALUES(er, 0, 1, 1, 0, 0);
}

static void test_permute_and_transpose(void **state)
{
    (void)state;
    lt_tensor *t = AR(LT_F32, 2, 3, 4);
    lt_tensor *p = LT_OK_T(lt_permute(t, (const int[]){2, 0, 1}, 3));
    LT_ASSERT_SHAPE(p, 4, 2, 3);
    ASSERT_STRIDES(p, 1, 12, 4);
    assert_true(lt_tensor_shares_storage(p, t));
    assert_false(lt_tensor_is_contiguous(p));
    /* p[i][j][k] = t[j][k][i] = 12j + 4k + i */
    double expected[24];
    for (int i = 0; i < 4; i++)
        for (int j = 0; j < 2; j++)
            for (int k = 0; k < 3; k++)
                expected[(i * 2 + j) * 3 + k] = 12 * j + 4 * k + i;
    LT_ASSERT_ARRAY(p, expected, 24, 0);
    lt_tensor *neg = LT_OK_T(lt_permute(t, (const int[]){-1, -3, -2}, 3));
    ASSERT_STRIDES(neg, 1, 12, 4);
    lt_tensor *tr = LT_OK_T(lt_transpose(t, -1, 0));
    LT_ASSERT_SHAPE(tr, 4, 3, 2);
    ASSERT_STRIDES(tr, 1, 4, 12);
    lt_tensor *same = LT_OK_T(lt_transpose(t, 1, 1));
    ASSERT_STRIDES(same, 12, 4, 1);
    lt_tensor *s = LT_OK_T(lt_scalar(3, LT_BF16, lt_test_cpu()));
    assert_int_equal(lt_tensor_ndim(LT_OK_T(lt_transpose(s, 0, -1))), 0);
    assert_int_equal(lt_tensor_ndim(LT_OK_T(lt_permute(s, NULL, 0))), 0);
    /* errors */
    assert_null(lt_permute(t, (const int[]){1, 1, 0}, 3));
    LT_EXPECT_ERROR(LT_ERR_ARGUMENT, "permute: dim 1 appears twice");
    assert_null(lt_permute(t, (const int[]){1, 0}, 2));
    LT_EXPECT_ERROR(LT_ERR_ARGUMENT, "permute: 2 dims given for a 3-d tensor");
    assert_null(lt_permute(t, (const int[]){0, 1, 3}, 3));
    LT_EXPECT_ERROR(LT_ERR_INDEX, "permute: dim 3 out of range for a 3-d tensor");
    assert_null(lt_permute(t, NULL, 3));
    LT_EXPECT_ERROR(LT_ERR_NULL, "perm is NULL");
    assert_null(lt_transpose(t, 0, 3));
    LT_EXPECT_ERROR(LT_ERR_INDEX, "transpose: dim 3 out of range for a 3-d tensor (expected -3..2)");
    assert_null(lt_transpose(NULL, 0, 1));
    LT_EXPECT_ERROR(LT_ERR_NULL, "transpose: argument 0 is NULL");
}

static void test_slice_and_narrow(void **state)
{
    (void)state;
    lt_tensor *t = AR(LT_I32, 10);
    lt_tensor *s = LT_OK_T(lt_slice(t, 0, 1, 9, 3));
    LT_ASSERT_VALUES(s, 0, 1, 4, 7);
    ASSERT_STRIDES(s, 3);
    assert_int_equal(lt_tensor_offset(s), 1);
    LT_ASSERT_VALUES(LT_OK_T(lt_slice(t, 0, -3, 100, 1)), 0, 7, 8, 9);
    LT_ASSERT_VALUES(LT_OK_T(lt_slice(t, -1, -100, 3, 1)), 0, 0, 1, 2);
    LT_ASSERT_SHAPE(LT_OK_T(lt_slice(t, 0, 7, 2, 1)), 0);
    LT_ASSERT_VALUES(LT_OK_T(lt_slice(t, 0, 8, INT64_MAX, INT64_MAX)), 0, 8);
    LT_ASSERT_SHAPE(LT_OK_T(lt_slice(t, 0, INT64_MIN, INT64_MIN, 1)), 0);
    /* 2-D: columns 1..3 of a [3, 4] */
    lt_tensor *m = AR(LT_F64, 3, 4);
    lt_tensor *cols = LT_OK_T(lt_slice(m, 1, 1, 4, 2));
    LT_ASSERT_SHAPE(cols, 3, 2);
    ASSERT_STRIDES(cols, 4, 2);
    assert_int_equal(lt_tensor_offset(cols), 1);
    LT_ASSERT_VALUES(cols, 0, 1, 3, 5, 7, 9, 11);
    lt_tensor *n = LT_OK_T(lt_narrow(m, 0, -2, 2));
    assert_int_equal(lt_tensor_offset(n), 4);
    LT_ASSERT_VALUES(n, 0, 4, 5, 6, 7, 8, 9, 10, 11);
    LT_ASSERT_SHAPE(LT_OK_T(lt_narrow(m, 1, 4, 0)), 3, 0);
    /* errors */
    assert_null(lt_slice(t, 0, 0, 5, 0));
    LT_EXPECT_ERROR(LT_ERR_ARGUMENT, "slice: step is 0");
    assert_null(lt_slice(t, 0, 0, 5, -1));
    LT_EXPECT_ERROR(LT_ERR_ARGUMENT, "positive step");
    assert_null(lt_slice(t, 1, 0, 5, 1));
    LT_EXPECT_ERROR(LT_ERR_INDEX, "slice: dim 1 out of range for a 1-d tensor");
    assert_null(lt_narrow(m, 1, 2, 3));
    LT_EXPECT_ERROR(LT_ERR_ARGUMENT, "narrow: start 2 + length 3 does not fit in dim 1 of size 4");
    assert_null(lt_narrow(m, 1, 5, 0));
    LT_EXPECT_ERROR(LT_ERR_INDEX, "narrow: start 5 is out of range for dim 1 of size 4");
    assert_null(lt_narrow(m, 1, 0, -1));
    LT_EXPECT_ERROR(LT_ERR_ARGUMENT, "length -1");
    lt_tensor *s0 = LT_OK_T(lt_scalar(1, LT_F32, lt_test_cpu()));
    assert_null(lt_narrow(s0, 0, 0, 1));
    LT_EXPECT_ERROR(LT_ERR_INDEX, "narrow: cannot be applied to a 0-d tensor");
    assert_null(lt_slice(s0, 0, 0, 1, 1));
    LT_EXPECT_ERROR(LT_ERR_INDEX, "slice: cannot be applied to a 0-d tensor");
}

static void test_select(void **state)
{
    (void)state;
    lt_tensor *t = AR(LT_I64, 2, 3, 4);
    lt_tensor *s = LT_OK_T(lt_select(t, 1, -1));
    LT_ASSERT_SHAPE(s, 2, 4);
    ASSERT_STRIDES(s, 12, 1);
    assert_int_equal(lt_tensor_offset(s), 8);
    LT_ASSERT_VALUES(s, 0, 8, 9, 10, 11, 20, 21, 22, 23);
    lt_tensor *e = LT_OK_T(lt_select(s, 0, 1));
    lt_tensor *x = LT_OK_T(lt_select(e, 0, 3));
    assert_int_equal(lt_tensor_ndim(x), 0);
    assert_int_equal(lt_tensor_offset(x), 23);
    LT_ASSERT_VALUES(x, 0, 23);
    assert_null(lt_select(t, 1, 3));
    LT_EXPECT_ERROR(LT_ERR_INDEX, "select: index 3 is out of range for dim 1 of size 3 (expected -3..2)");
    assert_null(lt_select(t, 2, -5));
    LT_EXPECT_ERROR(LT_ERR_INDEX, "index -5");
    assert_null(lt_select(t, 3, 0));
    LT_EXPECT_ERROR(LT_ERR_INDEX, "select: dim 3 out of range for a 3-d tensor");
    assert_null(lt_select(x, 0, 0));
    LT_EXPECT_ERROR(LT_ERR_INDEX, "select: cannot be applied to a 0-d tensor");
    lt_tensor *z = LT_OK_T(lt_zeros(LT_DIMS(2, 0), LT_F32, lt_test_cpu()));
    LT_ASSERT_SHAPE(LT_OK_T(lt_select(z, 0, 1)), 0);
    assert_null(lt_select(z, 1, 0));
    LT_EXPECT_ERROR(LT_ERR_INDEX, "size 0");
}

/* permute -> slice -> select, checked against torch's geometry. */
static void test_view_chain(void **state)
{
    (void)state;
    lt_tensor *x = AR(LT_F32, 2, 3, 4);
    lt_tensor *p = LT_OK_T(lt_permute(x, (const int[]){2, 0, 1}, 3));
    lt_tensor *s = LT_OK_T(lt_slice(p, 0, 1, 4, 2));
    LT_ASSERT_SHAPE(s, 2, 2, 3);
    ASSERT_STRIDES(s, 2, 12, 4);
    assert_int_equal(lt_tensor_offset(s), 1);
    lt_tensor *c = LT_OK_T(lt_select(s, 1, 1));
    LT_ASSERT_SHAPE(c, 2, 3);
    ASSERT_STRIDES(c, 2, 4);
    assert_int_equal(lt_tensor_offset(c), 13);
    LT_ASSERT_VALUES(c, 0, 13, 17, 21, 15, 19, 23);
    assert_true(lt_tensor_shares_storage(c, x));
    /* write through the end of the chain */
    assert_non_null(lt_fill_(c, -1));
    LT_ASSERT_VALUES(LT_OK_T(lt_select(x, 0, 1)), 0, 12, -1, 14, -1, 16, -1, 18, -1, 20, -1, 22, -1);
    /* a contiguous copy of a chained view */
    lt_tensor *cc = LT_OK_T(lt_contiguous(LT_OK_T(lt_transpose(c, 0, 1))));
    ASSERT_STRIDES(cc, 2, 1);
    LT_ASSERT_VALUES(cc, 0, -1, -1, -1, -1, -1, -1);
}

static void test_squeeze_unsqueeze_flatten(void **state)
{
    (void)state;
    lt_tensor *t = AR(LT_F32, 2, 1, 3, 1);
    lt_tensor *a = LT_OK_T(lt_squeeze_all(t));
    LT_ASSERT_SHAPE(a, 2, 3);
    ASSERT_STRIDES(a, 3, 1);
    assert_true(lt_tensor_shares_storage(a, t));
    LT_ASSERT_SHAPE(LT_OK_T(lt_squeeze(t, 1)), 2, 3, 1);
    LT_ASSERT_SHAPE(LT_OK_T(lt_squeeze(t, -1)), 2, 1, 3);
    lt_tensor *noop = LT_OK_T(lt_squeeze(t, 0)); /* size 2: unchanged view */
    LT_ASSERT_SHAPE(noop, 2, 1, 3, 1);
    assert_true(lt_tensor_shares_storage(noop, t));
    assert_null(lt_squeeze(t, 4));
    LT_EXPECT_ERROR(LT_ERR_INDEX, "squeeze: dim 4 out of range for a 4-d tensor");
    /* squeeze keeps the strides of a transposed tensor */
    lt_tensor *tr = LT_OK_T(lt_transpose(AR(LT_I32, 3, 1, 4), 0, 2)); /* [4, 1, 3] strides [1, 4, 4] */
    lt_tensor *sq = LT_OK_T(lt_squeeze(tr, 1));
    ASSERT_STRIDES(sq, 1, 4);
    LT_ASSERT_VALUES(sq, 0, 0, 4, 8, 1, 5, 9, 2, 6, 10, 3, 7, 11);
    /* unsqueeze: strides as torch's */
    lt_tensor *b = AR(LT_F64, 2, 3, 4);
    ASSERT_STRIDES(LT_OK_T(lt_unsqueeze(b, 1)), 12, 12, 4, 1);
    ASSERT_STRIDES(LT_OK_T(lt_unsqueeze(b, 3)), 12, 4, 1, 1);
    LT_ASSERT_SHAPE(LT_OK_T(lt_unsqueeze(b, -1)), 2, 3, 4, 1);
    LT_ASSERT_SHAPE(LT_OK_T(lt_unsqueeze(b, -4)), 1, 2, 3, 4);
    lt_tensor *u = LT_OK_T(lt_unsqueeze(sq, 0)); /* non-contiguous input */
    LT_ASSERT_SHAPE(u, 1, 4, 3);
    LT_ASSERT_VALUES(u, 0, 0, 4, 8, 1, 5, 9, 2, 6, 10, 3, 7, 11);
    assert_null(lt_unsqueeze(b, 4));
    LT_EXPECT_ERROR(LT_ERR_INDEX, "unsqueeze: dim 4 out of range for a 3-d tensor (expected -4..3)");
    lt_tensor *big = AR(LT_U8, 1, 1, 1, 1, 1, 1, 1, 2);
    assert_null(lt_unsqueeze(big, 0));
    LT_EXPECT_ERROR(LT_ERR_SHAPE, "at most 8 dims");
    lt_tensor *s = LT_OK_T(lt_scalar(2, LT_F32, lt_test_cpu()));
    ASSERT_STRIDES(LT_OK_T(lt_unsqueeze(s, 0)), 1);
    assert_int_equal(lt_tensor_ndim(LT_OK_T(lt_squeeze(s, 0))), 0);
    /* flatten */
    lt_tensor *f = LT_OK_T(lt_flatten(b, 1, -1));
    LT_ASSERT_SHAPE(f, 2, 12);
    assert_true(lt_tensor_shares_storage(f, b));
    LT_ASSERT_SHAPE(LT_OK_T(lt_flatten(b, 0, 1)), 6, 4);
    LT_ASSERT_SHAPE(LT_OK_T(lt_flatten(b, 2, 2)), 2, 3, 4);
    LT_ASSERT_SHAPE(LT_OK_T(lt_flatten(s, 0, -1)), 1);
    lt_tensor *ft = LT_OK_T(lt_flatten(LT_OK_T(lt_transpose(AR(LT_F32, 3, 4), 0, 1)), 0, 1));
    LT_ASSERT_VALUES(ft, 0, 0, 4, 8, 1, 5, 9, 2, 6, 10, 3, 7, 11);
    assert_null(lt_flatten(b, 2, 1));
    LT_EXPECT_ERROR(LT_ERR_ARGUMENT, "flatten: start_dim 2 comes after end_dim 1");
    assert_null(lt_flatten(b, 0, 3));
    LT_EXPECT_ERROR(LT_ERR_INDEX, "flatten: dim 3 out of range");
}

static void test_expand(void **state)
{
    (void)state;
    lt_tensor *t = LT_T(LT_F32, LT_DIMS(3, 1), 1, 2, 3);
    lt_tensor *e = LT_OK_T(lt_expand(t, LT_DIMS(2, 3, 4)));
    LT_ASSERT_SHAPE(e, 2, 3, 4);
    ASSERT_STRIDES(e, 0, 1, 0);
    assert_true(lt_tensor_shares_storage(e, t));
    double expected[24];
    for (int i = 0; i < 24; i++)
        expected[i] = 1 + (i / 4) % 3;
    LT_ASSERT_ARRAY(e, expected, 24, 0);
    lt_tensor *k = LT_OK_T(lt_expand(t, LT_DIMS(-1, 2)));
    LT_ASSERT_SHAPE(k, 3, 2);
    LT_ASSERT_VALUES(k, 0, 1, 1, 2, 2, 3, 3);
    LT_ASSERT_SHAPE(LT_OK_T(lt_expand(t, LT_DIMS(3, 0))), 3, 0);
    /* expanding a non-contiguous view */
    lt_tensor *row = LT_OK_T(lt_slice(AR(LT_I64, 1, 6), 1, 0, 6, 2)); /* [1, 3] values 0 2 4 */
    lt_tensor *re = LT_OK_T(lt_expand(row, LT_DIMS(2, 3)));
    ASSERT_STRIDES(re, 0, 2);
    LT_ASSERT_VALUES(re, 0, 0, 2, 4, 0, 2, 4);
    lt_tensor *s = LT_OK_T(lt_scalar(7, LT_BOOL, lt_test_cpu()));
    lt_tensor *se = LT_OK_T(lt_expand(s, LT_DIMS(2, 2)));
    ASSERT_STRIDES(se, 0, 0);
    LT_ASSERT_VALUES(se, 0, 1, 1, 1, 1);
    /* errors */
    assert_null(lt_expand(t, LT_DIMS(3, 4, 4, 2)));
    LT_EXPECT_ERROR(LT_ERR_SHAPE, "expand: cannot expand shape [3, 1] to [3, 4, 4, 2]: dim 0 has size 3");
    assert_null(lt_expand(t, LT_DIMS(2)));
    LT_EXPECT_ERROR(LT_ERR_SHAPE, "expand: 1 sizes given for a 2-d tensor");
    assert_null(lt_expand(t, LT_DIMS(-1, 3, 2)));
    LT_EXPECT_ERROR(LT_ERR_SHAPE, "-1 is not allowed for the new leading dim 0");
    assert_null(lt_expand(t, LT_DIMS(3, -2)));
    LT_EXPECT_ERROR(LT_ERR_SHAPE, "negative size -2");
}

static void test_diagonal(void **state)
{
    (void)state;
    lt_tensor *m = AR(LT_F32, 3, 4);
    lt_tensor *d = LT_OK_T(lt_diagonal(m, 0, 0, 1));
    LT_ASSERT_VALUES(d, 0, 0, 5, 10);
    ASSERT_STRIDES(d, 5);
    lt_tensor *up = LT_OK_T(lt_diagonal(m, 1, 0, 1));
    LT_ASSERT_VALUES(up, 0, 1, 6, 11);
    assert_int_equal(lt_tensor_offset(up), 1);
    lt_tensor *lo = LT_OK_T(lt_diagonal(m, -1, 0, 1));
    LT_ASSERT_VALUES(lo, 0, 4, 9);
    assert_int_equal(lt_tensor_offset(lo), 4);
    LT_ASSERT_VALUES(LT_OK_T(lt_diagonal(m, 2, -2, -1)), 0, 2, 7);
    LT_ASSERT_SHAPE(LT_OK_T(lt_diagonal(m, -5, 0, 1)), 0);
    LT_ASSERT_SHAPE(LT_OK_T(lt_diagonal(m, INT64_MAX, 0, 1)), 0);
    LT_ASSERT_SHAPE(LT_OK_T(lt_diagonal(m, INT64_MIN, 0, 1)), 0);
    /* transposed plane: dim1 = 1, dim2 = 0 */
    LT_ASSERT_VALUES(LT_OK_T(lt_diagonal(m, 1, 1, 0)), 0, 4, 9);
    /* 3-D: batch dims first, the diagonal last */
    lt_tensor *x = AR(LT_I64, 2, 3, 4);
    LT_ASSERT_VALUES(LT_OK_T(lt_diagonal(x, 0, 1, 2)), 0, 0, 5, 10, 12, 17, 22);
    lt_tensor *y = LT_OK_T(lt_diagonal(x, 1, 0, 2));
    LT_ASSERT_SHAPE(y, 3, 2);
    ASSERT_STRIDES(y, 4, 13);
    assert_int_equal(lt_tensor_offset(y), 1);
    LT_ASSERT_VALUES(y, 0, 1, 14, 5, 18, 9, 22);
    /* the diagonal is a view: fill it */
    lt_tensor *z = LT_OK_T(lt_zeros(LT_DIMS(3, 3), LT_F64, lt_test_cpu()));
    assert_non_null(lt_fill_(LT_OK_T(lt_diagonal(z, 0, 0, 1)), 1));
    LT_ASSERT_VALUES(z, 0, 1, 0, 0, 0, 1, 0, 0, 0, 1);
    assert_null(lt_diagonal(m, 0, 1, 1));
    LT_EXPECT_ERROR(LT_ERR_ARGUMENT, "diagonal: dim1 and dim2 are both dim 1");
    assert_null(lt_diagonal(LT_OK_T(lt_arange(0, 3, 1, LT_F32, lt_test_cpu())), 0, 0, 1));
    LT_EXPECT_ERROR(LT_ERR_SHAPE, "diagonal: input must have at least 2 dims, got a 1-d tensor");
    assert_null(lt_diagonal(m, 0, 0, 2));
    LT_EXPECT_ERROR(LT_ERR_INDEX, "diagonal: dim 2 out of range for a 2-d tensor");
}

/* Views work the same for every dtype (they never touch the data). */
static void test_views_all_dtypes(void **state)
{
    (void)state;
    const lt_dtype dts[] = {LT_F32, LT_F64, LT_I32, LT_I64, LT_U8, LT_BOOL, LT_BF16, LT_F16};
    for (size_t k = 0; k < sizeof dts / sizeof dts[0]; k++) {
        lt_tensor *t = LT_T(dts[k], LT_DIMS(2, 3), 0, 1, 2, 3, 0, 5);
        lt_tensor *v = LT_OK_T(lt_select(LT_OK_T(lt_transpose(t, 0, 1)), 1, 1)); /* t[1, :] */
        assert_int_equal(lt_tensor_dtype(v), dts[k]);
        if (dts[k] == LT_BOOL)
            LT_ASSERT_VALUES(v, 0, 1, 0, 1);
        else
            LT_ASSERT_VALUES(v, 0, 3, 0, 5);
        LT_ASSERT_VALUES(LT_OK_T(lt_reshape(LT_OK_T(lt_transpose(t, 0, 1)), LT_DIMS(6))), 0, 0,
                         dts[k] == LT_BOOL ? 1 : 3, 1, 0, dts[k] == LT_BOOL ? 1 : 2, dts[k] == LT_BOOL ? 1 : 5);
    }
}

static void test_views_size_zero(void **state)
{
    (void)state;
    lt_tensor *z = LT_OK_T(lt_zeros(LT_DIMS(0, 3), LT_F32, lt_test_cpu()));
    LT_ASSERT_SHAPE(LT_OK_T(lt_view(z, LT_DIMS(3, 0))), 3, 0);
    LT_ASSERT_SHAPE(LT_OK_T(lt_view(z, LT_DIMS(3, 0, 5))), 3, 0, 5);
    LT_ASSERT_SHAPE(LT_OK_T(lt_reshape(LT_OK_T(lt_transpose(z, 0, 1)), LT_DIMS(0))), 0);
    LT_ASSERT_SHAPE(LT_OK_T(lt_permute(z, (const int[]){1, 0}, 2)), 3, 0);
    LT_ASSERT_SHAPE(LT_OK_T(lt_expand(z, LT_DIMS(2, 0, 3))), 2, 0, 3);
    LT_ASSERT_SHAPE(LT_OK_T(lt_select(z, 1, 2)), 0);
    LT_ASSERT_SHAPE(LT_OK_T(lt_flatten(z, 0, 1)), 0);
    LT_ASSERT_SHAPE(LT_OK_T(lt_diagonal(z, 0, 0, 1)), 0);
    LT_ASSERT_SHAPE(LT_OK_T(lt_unsqueeze(z, 2)), 0, 3, 1);
}

static void test_views_released_input(void **state)
{
    (void)state;
    lt_tensor *dead = LT_OK_T(lt_arange(0, 4, 1, LT_F32, lt_test_cpu()));
    lt_retain(dead);
    lt_scope_end(); /* drops the scope's reference */
    lt_scope_begin();
    lt_release(dead);
    assert_null(lt_view(dead, LT_DIMS(4)));
    LT_EXPECT_ERROR(LT_ERR_RELEASED, "view: argument 0 was used after its last reference was released");
}

/* lt_view_geometry works on handles without storage and agrees with the
 * eager kernels; it fails only for an impossible VIEW. */
static void test_view_geometry_without_storage(void **state)
{
    (void)state;
    lt_meta m = lt_meta_make(LT_F32, (const int64_t[]){3, 4}, 2);
    lt_tensor *h = lt_tensor_new_handle(&m, lt_test_cpu());
    assert_non_null(h);
    int64_t strides[LT_MAX_DIMS], offset = -1;
    lt_attrs a = lt_attrs_init();
    a.i[0] = 1, a.i[1] = 0, a.ni = 2;
    lt_meta om = lt_meta_make(LT_F32, (const int64_t[]){4, 3}, 2);
    assert_int_equal(lt_view_geometry(LT_OP_PERMUTE, h, &a, &om, strides, &offset), LT_OK);
    assert_true(strides[0] == 1 && strides[1] == 4 && offset == 0);
    a = lt_attrs_init();
    a.i[0] = 1, a.i[1] = 1, a.i[2] = 4, a.i[3] = 2, a.ni = 4;
    om = lt_meta_make(LT_F32, (const int64_t[]){3, 2}, 2);
    assert_int_equal(lt_view_geometry(LT_OP_SLICE, h, &a, &om, strides, &offset), LT_OK);
    assert_true(strides[0] == 4 && strides[1] == 2 && offset == 1);
    /* a transposed handle cannot be viewed flat */
    h->strides[0] = 1, h->strides[1] = 3;
    a = lt_attrs_init();
    a.i[0] = 12, a.ni = 1;
    om = lt_meta_make(LT_F32, (const int64_t[]){12}, 1);
    assert_int_equal(lt_view_geometry(LT_OP_VIEW, h, &a, &om, strides, &offset), LT_ERR_SHAPE);
    LT_EXPECT_ERROR(LT_ERR_SHAPE, "use lt_reshape");
    assert_int_equal(lt_view_geometry(LT_OP_CAT, h, &a, &om, strides, &offset), LT_ERR_ARGUMENT);
    LT_EXPECT_ERROR(LT_ERR_ARGUMENT, "cat is not a view op");
    lt_tensor_unref(h);
}

/* Writing through an expanded view would update one element several
 * times: refused, on both devices, leaving the base unchanged. */
static void test_inplace_on_expanded_view_refused(void **state)
{
    (void)state;
    const char *devices[] = {"cpu", "lazy"};
    for (int k = 0; k < 2; k++) {
        lt_tensor *e = LT_OK_T(lt_to(LT_T(LT_F32, LT_DIMS(1, 3), 0, 1, 2), lt_device_parse(devices[k])));
        lt_tensor *x = LT_OK_T(lt_expand(e, (int64_t[]){2, 3}, 2));
        assert_null(lt_add_scalar_(x, 1));
        LT_EXPECT_ERROR(LT_ERR_UNSUPPORTED, "add_: in-place update of an expanded view is not supported");
        LT_ASSERT_VALUES(e, 0, 0, 1, 2);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        LT_TEST(test_view_basic),
        LT_TEST(test_view_errors),
        LT_TEST(test_view_non_contiguous),
        LT_TEST(test_views_alias_storage),
        LT_TEST(test_reshape_copies_only_when_needed),
        LT_TEST(test_permute_and_transpose),
        LT_TEST(test_slice_and_narrow),
        LT_TEST(test_select),
        LT_TEST(test_view_chain),
        LT_TEST(test_squeeze_unsqueeze_flatten),
        LT_TEST(test_expand),
        LT_TEST(test_diagonal),
        LT_TEST(test_views_all_dtypes),
        LT_TEST(test_views_size_zero),
        LT_TEST(test_views_released_input),
        LT_TEST(test_view_geometry_without_storage),
        LT_TEST(test_inplace_on_expanded_view_refused),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
