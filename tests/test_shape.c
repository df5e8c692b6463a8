/* test_shape.c - indexing and shaping ops: cat, stack, split, chunk,
 * index_select, gather, scatter, scatter_add, masked_fill, one_hot, tril,
 * triu, embedding. Expected values are hand-computed or taken from
 * torch 1.13 (hard-coded). Sort, topk and nonzero are in test_shape_sort.c. */
#include "lt_test.h"

static const lt_dtype ALL_DTYPES[] = {LT_F32, LT_F64, LT_I32, LT_I64, LT_U8, LT_BOOL, LT_BF16, LT_F16};
#define N_DTYPES (sizeof ALL_DTYPES / sizeof ALL_DTYPES[0])

/* arange(start, start + numel) of dtype dt in the given shape. */
static lt_tensor *ar_from(double start, lt_dtype dt, const int64_t *dims, int nd)
{
    int64_t n = 1;
    for (int i = 0; i < nd; i++)
        n *= dims[i];
    return lt_reshape(lt_arange(start, start + (double)n, 1, dt, lt_test_cpu()), dims, nd);
}
#define AR(dt, ...) LT_OK_T(ar_from(0, (dt), LT_DIMS(__VA_ARGS__)))

/* Checks t against expected values, seen as (v != 0) for bool tensors, and
 * that t has dtype dt. */
#define ASSERT_DT_VALUES(t, dt, ...) \
    assert_dt_values((t), (dt), (const double[]){__VA_ARGS__}, \
                     (int64_t)(sizeof((const double[]){__VA_ARGS__}) / sizeof(double)), __FILE__, __LINE__)
static void assert_dt_values(lt_tensor *t, lt_dtype dt, const double *expected, int64_t n, const char *file,
                             int line)
{
    if (!t || lt_tensor_dtype(t) != dt) {
        print_error("%s:%d: dtype %s, expected %s (%s)\n", file, line,
                    t ? lt_dtype_name(lt_tensor_dtype(t)) : "NULL", lt_dtype_name(dt), lt_last_error());
        _fail(file, line);
    }
    double *e = malloc(sizeof(double) * (size_t)(n > 0 ? n : 1));
    for (int64_t i = 0; i < n; i++)
        e[i] = dt == LT_BOOL ? (expected[i] != 0) : expected[i];
    lt_test_assert_values(t, e, n, 0, file, line);
    free(e);
}

static lt_tensor *idx64(const int64_t *v, const int64_t *dims, int nd)
{
    return lt_from_data(v, dims, nd, LT_I64, lt_test_cpu());
}
#define IDX(dims, ...) LT_OK_T(idx64((const int64_t[]){__VA_ARGS__}, dims))

/* ======================================================================= */
/* cat, stack                                                               */
/* ======================================================================= */

static void test_cat_all_dtypes(void **state)
{
    (void)state;
    for (size_t k = 0; k < N_DTYPES; k++) {
        lt_dtype dt = ALL_DTYPES[k];
        lt_tensor *a = AR(dt, 2, 3);
        lt_tensor *b = LT_OK_T(ar_from(6, dt, LT_DIMS(1, 3)));
        lt_tensor *r = LT_OK_T(lt_cat((lt_tensor *[]){a, b}, 2, 0));
        LT_ASSERT_SHAPE(r, 3, 3);
        ASSERT_DT_VALUES(r, dt, 0, 1, 2, 3, 4, 5, 6, 7, 8);
        lt_tensor *c = LT_OK_T(ar_from(10, dt, LT_DIMS(2, 2)));
        lt_tensor *r1 = LT_OK_T(lt_cat((lt_tensor *[]){a, c, a}, 3, -1));
        LT_ASSERT_SHAPE(r1, 2, 8);
        ASSERT_DT_VALUES(r1, dt, 0, 1, 2, 10, 11, 0, 1, 2, 3, 4, 5, 12, 13, 3, 4, 5);
        assert_false(lt_tensor_shares_storage(r1, a));
    }
}

static void test_cat_promotes_dtypes(void **state)
{
    (void)state;
    lt_tensor *i = LT_T(LT_I32, LT_DIMS(2), 5, -3);
    lt_tensor *b = LT_T(LT_BOOL, LT_DIMS(2), 1, 0);
    lt_tensor *f = LT_T(LT_F32, LT_DIMS(1), 2.5);
    ASSERT_DT_VALUES(lt_cat((lt_tensor *[]){i, b}, 2, 0), LT_I32, 5, -3, 1, 0);
    ASSERT_DT_VALUES(lt_cat((lt_tensor *[]){b, i, f}, 3, 0), LT_F32, 1, 0, 5, -3, 2.5);
    lt_tensor *h = LT_T(LT_F16, LT_DIMS(1), 0.5);
    lt_tensor *bf = LT_T(LT_BF16, LT_DIMS(1), 1.5);
    ASSERT_DT_VALUES(lt_cat((lt_tensor *[]){h, bf}, 2, 0), LT_F32, 0.5, 1.5);
    lt_tensor *u = LT_T(LT_U8, LT_DIMS(1), 200);
    ASSERT_DT_VALUES(lt_cat((lt_tensor *[]){u, i}, 2, 0), LT_I32, 200, 5, -3);
    lt_tensor *d = LT_T(LT_F64, LT_DIMS(1), 0.1);
    ASSERT_DT_VALUES(lt_cat((lt_tensor *[]){f, d}, 2, 0), LT_F64, 2.5, 0.1);
}

static void test_cat_non_contiguous_and_empty(void **state)
{
    (void)state;
    lt_tensor *m = AR(LT_F32, 3, 2);
    lt_tensor *t = LT_OK_T(lt_transpose(m, 0, 1));                   /* [[0,2,4],[1,3,5]] */
    lt_tensor *s = LT_OK_T(lt_slice(AR(LT_F32, 2, 6), 1, 1, 6, 2));  /* [[1,3,5],[7,9,11]] */
    lt_tensor *e = LT_OK_T(lt_expand(LT_T(LT_F32, LT_DIMS(1, 3), -1, -2, -3), LT_DIMS(2, 3)));
    lt_tensor *z = LT_OK_T(lt_zeros(LT_DIMS(0, 3), LT_F32, lt_test_cpu()));
    lt_tensor *r = LT_OK_T(lt_cat((lt_tensor *[]){t, z, s, e}, 4, 0));
    LT_ASSERT_SHAPE(r, 6, 3);
    LT_ASSERT_VALUES(r, 0, 0, 2, 4, 1, 3, 5, 1, 3, 5, 7, 9, 11, -1, -2, -3, -1, -2, -3);
    lt_tensor *r1 = LT_OK_T(lt_cat((lt_tensor *[]){t, s}, 2, 1));
    LT_ASSERT_VALUES(r1, 0, 0, 2, 4, 1, 3, 5, 1, 3, 5, 7, 9, 11);
    LT_ASSERT_SHAPE(LT_OK_T(lt_cat((lt_tensor *[]){z, z}, 2, 0)), 0, 3);
    lt_tensor *w = LT_OK_T(lt_zeros(LT_DIMS(2, 0), LT_I64, lt_test_cpu()));
    lt_tensor *r2 = LT_OK_T(lt_cat((lt_tensor *[]){w, AR(LT_I64, 2, 2), w}, 3, 1));
    LT_ASSERT_SHAPE(r2, 2, 2);
    LT_ASSERT_VALUES(r2, 0, 0, 1, 2, 3);
    lt_tensor *one = LT_OK_T(lt_cat((lt_tensor *[]){s}, 1, 0));
    assert_false(lt_tensor_shares_storage(one, s));
    LT_ASSERT_VALUES(one, 0, 1, 3, 5, 7, 9, 11);
}

static void test_cat_large_contiguous(void **state)
{
    (void)state;
    lt_tensor *a = AR(LT_F32, 300, 200);
    lt_tensor *b = LT_OK_T(ar_from(60000, LT_F32, LT_DIMS(100, 200)));
    lt_tensor *r = LT_OK_T(lt_cat((lt_tensor *[]){a, b}, 2, 0));
    LT_ASSERT_SHAPE(r, 400, 200);
    double *v = lt_test_values(r);
    for (int64_t i = 0; i < 80000; i++)
        if (v[i] != (double)i)
            fail_msg("element %lld is %g", (long long)i, v[i]);
    free(v);
    lt_tensor *r1 = LT_OK_T(lt_cat((lt_tensor *[]){a, a}, 2, 1));
    LT_ASSERT_SHAPE(r1, 300, 400);
    v = lt_test_values(r1);
    for (int64_t i = 0; i < 300; i++)
        for (int64_t j = 0; j < 400; j++)
            if (v[i * 400 + j] != (double)(i * 200 + j % 200))
                fail_msg("element (%lld, %lld) is %g", (long long)i, (long long)j, v[i * 400 + j]);
    free(v);
}

static void test_cat_errors(void **state)
{
    (void)state;
    lt_tensor *a = AR(LT_F32, 2, 3), *b = AR(LT_F32, 2, 4);
    assert_null(lt_cat((lt_tensor *[]){a, b}, 2, 0));
    LT_EXPECT_ERROR(LT_ERR_SHAPE, "cat: tensor 1 has shape [2, 4] but tensor 0 has shape [2, 3]; sizes must match except in dim 0");
    assert_non_null(lt_cat((lt_tensor *[]){a, b}, 2, 1));
    assert_null(lt_cat((lt_tensor *[]){a, AR(LT_F32, 6)}, 2, 0));
    LT_EXPECT_ERROR(LT_ERR_SHAPE, "cat: tensor 1 has shape [6] but tensor 0 has shape [2, 3] (expected the same number of dims)");
    lt_tensor *s = LT_OK_T(lt_scalar(1, LT_F32, lt_test_cpu()));
    assert_null(lt_cat((lt_tensor *[]){s, s}, 2, 0));
    LT_EXPECT_ERROR(LT_ERR_SHAPE, "cat: tensor 0 is 0-d");
    assert_null(lt_cat((lt_tensor *[]){a, a}, 2, 2));
    LT_EXPECT_ERROR(LT_ERR_INDEX, "cat: dim 2 out of range for a 2-d tensor");
    assert_null(lt_cat((lt_tensor *[]){a, NULL}, 2, 0));
    LT_EXPECT_ERROR(LT_ERR_NULL, "cat: argument 1 is NULL");
    assert_null(lt_cat(NULL, 2, 0));
    LT_EXPECT_ERROR(LT_ERR_NULL, "cat: the tensor list is NULL");
    assert_null(lt_cat((lt_tensor *[]){a}, 0, 0));
    LT_EXPECT_ERROR(LT_ERR_ARGUMENT, "cat: expected a non-empty list of tensors, got n = 0");
}

static void test_stack(void **state)
{
    (void)state;
    lt_tensor *a = LT_T(LT_I64, LT_DIMS(2), 1, 2), *b = LT_T(LT_I64, LT_DIMS(2), 3, 4);
    lt_tensor *c = LT_OK_T(lt_slice(LT_T(LT_I64, LT_DIMS(4), 5, 0, 6, 0), 0, 0, 4, 2)); /* [5, 6] strided */
    lt_tensor *r0 = LT_OK_T(lt_stack((lt_tensor *[]){a, b, c}, 3, 0));
    LT_ASSERT_SHAPE(r0, 3, 2);
    LT_ASSERT_VALUES(r0, 0, 1, 2, 3, 4, 5, 6);
    lt_tensor *r1 = LT_OK_T(lt_stack((lt_tensor *[]){a, b, c}, 3, -1));
    LT_ASSERT_SHAPE(r1, 2, 3);
    LT_ASSERT_VALUES(r1, 0, 1, 3, 5, 2, 4, 6);
    /* many 0-d tensors: more than the small on-stack list */
    lt_tensor *many[20];
    double expected[20];
    for (int i = 0; i < 20; i++) {
        many[i] = LT_OK_T(lt_scalar(i * 0.5, LT_F32, lt_test_cpu()));
        expected[i] = i * 0.5;
    }
    lt_tensor *r2 = LT_OK_T(lt_stack(many, 20, 0));
    LT_ASSERT_SHAPE(r2, 20);
    LT_ASSERT_ARRAY(r2, expected, 20, 0);
    /* mixed dtypes promote like cat */
    lt_tensor *f = LT_T(LT_F32, LT_DIMS(2), 0.5, 1.5);
    ASSERT_DT_VALUES(lt_stack((lt_tensor *[]){a, f}, 2, 1), LT_F32, 1, 0.5, 2, 1.5);
    assert_null(lt_stack((lt_tensor *[]){a, LT_T(LT_I64, LT_DIMS(3), 1, 2, 3)}, 2, 0));
    LT_EXPECT_ERROR(LT_ERR_SHAPE, "stack: tensor 1 has shape [3] but tensor 0 has shape [2]");
    assert_null(lt_stack((lt_tensor *[]){a, b}, 2, 2));
    LT_EXPECT_ERROR(LT_ERR_INDEX, "stack: dim 2 out of range for a 1-d tensor (expected -2..1)");
    assert_null(lt_stack((lt_tensor *[]){a, NULL}, 2, 0));
    LT_EXPECT_ERROR(LT_ERR_NULL, "stack: argument 1 is NULL");
    assert_null(lt_stack(NULL, 0, 0));
    LT_EXPECT_ERROR(LT_ERR_ARGUMENT, "stack: expected a non-empty list");
}

/* ======================================================================= */
/* split, chunk                                                             */
/* ======================================================================= */

static void test_split(void **state)
{
    (void)state;
    lt_tensor *t = AR(LT_F32, 7);
    lt_tensor *out[4] = {NULL};
    assert_int_equal(lt_split(t, 3, 0, out, 4), 3);
    LT_ASSERT_VALUES(out[0], 0, 0, 1, 2);
    LT_ASSERT_VALUES(out[1], 0, 3, 4, 5);
    LT_ASSERT_VALUES(out[2], 0, 6);
    assert_true(lt_tensor_shares_storage(out[1], t));
    assert_int_equal(lt_tensor_offset(out[2]), 6);
    assert_null(out[3]);
    /* along dim 1 of a 2-D tensor */
    lt_tensor *m = AR(LT_I32, 2, 5);
    assert_int_equal(lt_split(m, 2, -1, out, 3), 3);
    LT_ASSERT_SHAPE(out[2], 2, 1);
    LT_ASSERT_VALUES(out[0], 0, 0, 1, 5, 6);
    LT_ASSERT_VALUES(out[2], 0, 4, 9);
    assert_int_equal(lt_split(m, 10, 1, out, 1), 1);
    LT_ASSERT_SHAPE(out[0], 2, 5);
    /* many pieces */
    lt_tensor *pieces[20];
    assert_int_equal(lt_split(AR(LT_I64, 40), 2, 0, pieces, 20), 20);
    LT_ASSERT_VALUES(pieces[19], 0, 38, 39);
    /* empty dim: one empty piece, split_size 0 allowed */
    lt_tensor *e = LT_OK_T(lt_zeros(LT_DIMS(0, 2), LT_F32, lt_test_cpu()));
    assert_int_equal(lt_split(e, 0, 0, out, 4), 1);
    LT_ASSERT_SHAPE(out[0], 0, 2);
    assert_int_equal(lt_split(e, 3, 0, out, 4), 1);
    /* max_out too small: -1, nothing written, nothing leaked (teardown) */
    lt_tensor *sentinel = (lt_tensor *)&out;
    lt_tensor *few[2] = {sentinel, sentinel};
    assert_int_equal(lt_split(t, 3, 0, few, 2), -1);
    LT_EXPECT_ERROR(LT_ERR_ARGUMENT, "split: 3 pieces do not fit in max_out = 2");
    assert_ptr_equal(few[0], sentinel);
    assert_ptr_equal(few[1], sentinel);
    assert_int_equal(lt_split(t, 0, 0, out, 4), -1);
    LT_EXPECT_ERROR(LT_ERR_ARGUMENT, "split: split_size 0 is invalid for dim 0 of size 7");
    assert_int_equal(lt_split(t, -2, 0, out, 4), -1);
    LT_EXPECT_ERROR(LT_ERR_ARGUMENT, "split_size -2");
    assert_int_equal(lt_split(t, 3, 1, out, 4), -1);
    LT_EXPECT_ERROR(LT_ERR_INDEX, "split: dim 1 out of range for a 1-d tensor");
    assert_int_equal(lt_split(LT_OK_T(lt_scalar(1, LT_F32, lt_test_cpu())), 1, 0, out, 4), -1);
    LT_EXPECT_ERROR(LT_ERR_INDEX, "split: expects at least a 1-d tensor");
    assert_int_equal(lt_split(t, 3, 0, NULL, 4), -1);
    LT_EXPECT_ERROR(LT_ERR_NULL, "split: out is NULL");
    assert_int_equal(lt_split(NULL, 3, 0, out, 4), -1);
    LT_EXPECT_ERROR(LT_ERR_NULL, "split: argument 0 is NULL");
}

static void test_chunk(void **state)
{
    (void)state;
    lt_tensor *out[5] = {NULL};
    assert_int_equal(lt_chunk(AR(LT_F64, 5), 3, 0, out, 5), 3);
    LT_ASSERT_VALUES(out[0], 0, 0, 1);
    LT_ASSERT_VALUES(out[1], 0, 2, 3);
    LT_ASSERT_VALUES(out[2], 0, 4);
    /* like torch: 6 elements in 4 chunks gives 3 chunks of 2 */
    assert_int_equal(lt_chunk(AR(LT_BF16, 6), 4, 0, out, 5), 3);
    LT_ASSERT_VALUES(out[2], 0, 4, 5);
    /* an empty dim gives `chunks` empty pieces */
    lt_tensor *e = LT_OK_T(lt_zeros(LT_DIMS(2, 0), LT_F32, lt_test_cpu()));
    assert_int_equal(lt_chunk(e, 3, 1, out, 5), 3);
    LT_ASSERT_SHAPE(out[2], 2, 0);
    /* chunk of a transposed tensor: views with its strides */
    lt_tensor *t = LT_OK_T(lt_transpose(AR(LT_F32, 2, 4), 0, 1)); /* [4, 2] */
    assert_int_equal(lt_chunk(t, 2, 0, out, 2), 2);
    LT_ASSERT_VALUES(out[1], 0, 2, 6, 3, 7);
    assert_int_equal(lt_tensor_offset(out[1]), 2);
    assert_int_equal(lt_chunk(t, 5, 0, out, 3), -1);
    LT_EXPECT_ERROR(LT_ERR_ARGUMENT, "chunk: 4 pieces do not fit in max_out = 3");
    assert_int_equal(lt_chunk(t, 0, 0, out, 5), -1);
    LT_EXPECT_ERROR(LT_ERR_ARGUMENT, "chunk: chunks is 0, expected > 0");
}

/* ======================================================================= */
/* index_select, gather, embedding                                          */
/* ======================================================================= */

static void test_index_select(void **state)
{
    (void)state;
    for (size_t k = 0; k < N_DTYPES; k++) {
        lt_dtype dt = ALL_DTYPES[k];
        lt_tensor *x = AR(dt, 3, 4);
        lt_tensor *r = LT_OK_T(lt_index_select(x, 1, IDX(LT_DIMS(3), 3, 0, 3)));
        LT_ASSERT_SHAPE(r, 3, 3);
        ASSERT_DT_VALUES(r, dt, 3, 0, 3, 7, 4, 7, 11, 8, 11);
        lt_tensor *r0 = LT_OK_T(lt_index_select(x, -2, IDX(LT_DIMS(4), 2, 2, 0, 1)));
        ASSERT_DT_VALUES(r0, dt, 8, 9, 10, 11, 8, 9, 10, 11, 0, 1, 2, 3, 4, 5, 6, 7);
    }
    /* transposed input, i32 index */
    lt_tensor *xt = LT_OK_T(lt_transpose(AR(LT_F32, 3, 4), 0, 1));
    lt_tensor *i32 = LT_T(LT_I32, LT_DIMS(2), 2, 0);
    LT_ASSERT_VALUES(lt_index_select(xt, 0, i32), 0, 2, 6, 10, 0, 4, 8);
    /* 0-d index keeps the dim with size 1; empty index gives size 0 */
    lt_tensor *x = AR(LT_F32, 3, 4);
    lt_tensor *r = LT_OK_T(lt_index_select(x, 1, LT_OK_T(lt_scalar(2, LT_I64, lt_test_cpu()))));
    LT_ASSERT_SHAPE(r, 3, 1);
    LT_ASSERT_VALUES(r, 0, 2, 6, 10);
    lt_tensor *none = LT_OK_T(lt_zeros(LT_DIMS(0), LT_I64, lt_test_cpu()));
    LT_ASSERT_SHAPE(LT_OK_T(lt_index_select(x, 0, none)), 0, 4);
    lt_tensor *s = LT_OK_T(lt_scalar(5, LT_F64, lt_test_cpu()));
    lt_tensor *rs = LT_OK_T(lt_index_select(s, 0, IDX(LT_DIMS(1), 0)));
    assert_int_equal(lt_tensor_ndim(rs), 0);
    LT_ASSERT_VALUES(rs, 0, 5);
    /* wide contiguous rows (block copy) vs a strided view of the same data */
    lt_tensor *w = AR(LT_F32, 4, 64);
    lt_tensor *rw = LT_OK_T(lt_index_select(w, 0, IDX(LT_DIMS(3), 3, 1, 3)));
    lt_tensor *wt = LT_OK_T(lt_transpose(LT_OK_T(lt_contiguous(LT_OK_T(lt_transpose(w, 0, 1)))), 0, 1));
    lt_tensor *rwt = LT_OK_T(lt_index_select(wt, 0, IDX(LT_DIMS(3), 3, 1, 3)));
    double expected[192];
    const int rows[3] = {3, 1, 3};
    for (int i = 0; i < 3; i++)
        for (int j = 0; j < 64; j++)
            expected[i * 64 + j] = rows[i] * 64 + j;
    LT_ASSERT_ARRAY(rw, expected, 192, 0);
    LT_ASSERT_ARRAY(rwt, expected, 192, 0);
    lt_tensor *rw1 = LT_OK_T(lt_index_select(AR(LT_F64, 2, 3, 40), 1, IDX(LT_DIMS(2), 2, 0)));
    LT_ASSERT_SHAPE(rw1, 2, 2, 40);
    double *v = lt_test_values(rw1);
    for (int b = 0; b < 2; b++)
        for (int i = 0; i < 2; i++)
            for (int j = 0; j < 40; j++)
                assert_true(v[(b * 2 + i) * 40 + j] == b * 120 + (i == 0 ? 2 : 0) * 40 + j);
    free(v);
}

static void test_index_select_errors(void **state)
{
    (void)state;
    lt_tensor *x = AR(LT_F32, 3, 4);
    assert_null(lt_index_select(x, 1, IDX(LT_DIMS(3), 0, 4, 1)));
    LT_EXPECT_ERROR(LT_ERR_INDEX, "index_select: index 4 is out of range for dim 1 of size 4 (expected 0..3)");
    assert_null(lt_index_select(x, 0, IDX(LT_DIMS(2), 1, -1)));
    LT_EXPECT_ERROR(LT_ERR_INDEX, "index_select: index -1 is out of range");
    assert_null(lt_index_select(x, 0, LT_T(LT_F32, LT_DIMS(1), 0)));
    LT_EXPECT_ERROR(LT_ERR_DTYPE, "index_select: index has dtype f32, expected i32 or i64");
    assert_null(lt_index_select(x, 0, LT_T(LT_U8, LT_DIMS(1), 0)));
    LT_EXPECT_ERROR(LT_ERR_DTYPE, "index has dtype u8");
    assert_null(lt_index_select(x, 0, IDX(LT_DIMS(1, 1), 0)));
    LT_EXPECT_ERROR(LT_ERR_SHAPE, "index_select: index has shape [1, 1], expected a 0-d or 1-d tensor");
    assert_null(lt_index_select(x, 2, IDX(LT_DIMS(1), 0)));
    LT_EXPECT_ERROR(LT_ERR_INDEX, "index_select: dim 2 out of range for a 2-d tensor");
    assert_null(lt_index_select(x, 0, NULL));
    LT_EXPECT_ERROR(LT_ERR_NULL, "index_select: argument 1 is NULL");
    lt_tensor *e = LT_OK_T(lt_zeros(LT_DIMS(0, 2), LT_F32, lt_test_cpu()));
    assert_null(lt_index_select(e, 0, IDX(LT_DIMS(1), 0)));
    LT_EXPECT_ERROR(LT_ERR_INDEX, "index_select: index 0 is out of range for dim 0 of size 0");
}

static void test_gather(void **state)
{
    (void)state;
    for (size_t k = 0; k < N_DTYPES; k++) {
        lt_dtype dt = ALL_DTYPES[k];
        lt_tensor *x = AR(dt, 3, 4);
        lt_tensor *g1 = LT_OK_T(lt_gather(x, 1, IDX(LT_DIMS(3, 2), 3, 0, 1, 1, 2, 3)));
        LT_ASSERT_SHAPE(g1, 3, 2);
        ASSERT_DT_VALUES(g1, dt, 3, 0, 5, 5, 10, 11);
        lt_tensor *g0 = LT_OK_T(lt_gather(x, 0, IDX(LT_DIMS(2, 4), 2, 0, 1, 0, 1, 1, 1, 2)));
        ASSERT_DT_VALUES(g0, dt, 8, 1, 6, 3, 4, 5, 6, 11);
    }
    /* transposed input, i32 index, non-contiguous index */
    lt_tensor *xt = LT_OK_T(lt_transpose(AR(LT_F32, 3, 4), 0, 1));
    lt_tensor *it = LT_T(LT_I32, LT_DIMS(2, 3), 2, 0, 1, 1, 1, 0);
    LT_ASSERT_VALUES(lt_gather(xt, 0, it), 0, 2, 4, 9, 1, 5, 8);
    lt_tensor *idx_t = LT_OK_T(lt_transpose(IDX(LT_DIMS(2, 3), 3, 1, 2, 0, 1, 3), 0, 1)); /* [[3,0],[1,1],[2,3]] */
    LT_ASSERT_VALUES(lt_gather(AR(LT_F64, 3, 4), 1, idx_t), 0, 3, 0, 5, 5, 10, 11);
    /* 3-D along the middle dim: out[i][j][k] = x[i][idx[i][j][k]][k] */
    lt_tensor *x3 = AR(LT_I64, 2, 3, 2);
    lt_tensor *g3 = LT_OK_T(lt_gather(x3, 1, IDX(LT_DIMS(2, 1, 2), 2, 0, 1, 1)));
    LT_ASSERT_VALUES(g3, 0, 4, 1, 8, 9);
    /* 0-d, empty */
    lt_tensor *s = LT_OK_T(lt_scalar(4, LT_F32, lt_test_cpu()));
    LT_ASSERT_VALUES(lt_gather(s, 0, LT_OK_T(lt_scalar(0, LT_I64, lt_test_cpu()))), 0, 4);
    lt_tensor *ie = LT_OK_T(lt_zeros(LT_DIMS(3, 0), LT_I64, lt_test_cpu()));
    LT_ASSERT_SHAPE(LT_OK_T(lt_gather(AR(LT_F32, 3, 4), 1, ie)), 3, 0);
    /* large, along the last dim (parallel rows) */
    lt_tensor *big = AR(LT_F32, 200, 300);
    lt_tensor *bi = LT_OK_T(lt_to_dtype(LT_OK_T(lt_expand(LT_OK_T(lt_arange(299, -1, -1, LT_I64, lt_test_cpu())),
                                                          LT_DIMS(200, 300))), LT_I64));
    lt_tensor *bg = LT_OK_T(lt_gather(big, 1, bi));
    double *v = lt_test_values(bg);
    for (int i = 0; i < 200; i++)
        for (int j = 0; j < 300; j++)
            if (v[i * 300 + j] != i * 300 + (299 - j))
                fail_msg("gather (%d, %d) is %g", i, j, v[i * 300 + j]);
    free(v);
}

static void test_gather_errors(void **state)
{
    (void)state;
    lt_tensor *x = AR(LT_F32, 2, 2);
    assert_null(lt_gather(x, 1, IDX(LT_DIMS(2, 1), -1, 1)));
    LT_EXPECT_ERROR(LT_ERR_INDEX, "gather: index -1 is out of range for dim 1 of size 2 (expected 0..1)");
    assert_null(lt_gather(x, 0, IDX(LT_DIMS(1, 2), 0, 2)));
    LT_EXPECT_ERROR(LT_ERR_INDEX, "gather: index 2 is out of range for dim 0 of size 2");
    assert_null(lt_gather(x, 1, IDX(LT_DIMS(3, 1), 0, 0, 0)));
    LT_EXPECT_ERROR(LT_ERR_SHAPE, "gather: index shape [3, 1] is larger than input shape [2, 2] in dim 0 (only dim 1 may be larger)");
    assert_null(lt_gather(x, 1, IDX(LT_DIMS(2), 0, 0)));
    LT_EXPECT_ERROR(LT_ERR_SHAPE, "gather: index shape [2] and input shape [2, 2] differ in the number of dims");
    assert_null(lt_gather(x, 1, LT_T(LT_BOOL, LT_DIMS(2, 1), 0, 1)));
    LT_EXPECT_ERROR(LT_ERR_DTYPE, "gather: index has dtype bool, expected i32 or i64");
    assert_null(lt_gather(x, -3, IDX(LT_DIMS(2, 1), 0, 0)));
    LT_EXPECT_ERROR(LT_ERR_INDEX, "gather: dim -3 out of range for a 2-d tensor");
}

static void test_embedding(void **state)
{
    (void)state;
    for (size_t k = 0; k < N_DTYPES; k++) {
        lt_dtype dt = ALL_DTYPES[k];
        lt_tensor *w = AR(dt, 5, 2);
        lt_tensor *e = LT_OK_T(lt_embedding(w, IDX(LT_DIMS(2, 2), 4, 0, 2, 2)));
        LT_ASSERT_SHAPE(e, 2, 2, 2);
        ASSERT_DT_VALUES(e, dt, 8, 9, 0, 1, 4, 5, 4, 5);
    }
    /* non-contiguous weight, i32 indices, 0-d index */
    lt_tensor *wt = LT_OK_T(lt_transpose(AR(LT_F32, 2, 5), 0, 1)); /* row r = [r, r + 5] */
    LT_ASSERT_VALUES(lt_embedding(wt, LT_T(LT_I32, LT_DIMS(3), 1, 4, 1)), 0, 1, 6, 4, 9, 1, 6);
    lt_tensor *e0 = LT_OK_T(lt_embedding(wt, LT_OK_T(lt_scalar(3, LT_I32, lt_test_cpu()))));
    LT_ASSERT_SHAPE(e0, 2);
    LT_ASSERT_VALUES(e0, 0, 3, 8);
    /* wide rows: block copies */
    lt_tensor *ww = AR(LT_F32, 10, 32);
    lt_tensor *ew = LT_OK_T(lt_embedding(ww, IDX(LT_DIMS(2), 9, 0)));
    double expected[64];
    for (int j = 0; j < 32; j++) {
        expected[j] = 9 * 32 + j;
        expected[32 + j] = j;
    }
    LT_ASSERT_ARRAY(ew, expected, 64, 0);
    LT_ASSERT_SHAPE(LT_OK_T(lt_embedding(ww, LT_OK_T(lt_zeros(LT_DIMS(0, 3), LT_I64, lt_test_cpu())))), 0, 3, 32);
    /* errors */
    assert_null(lt_embedding(ww, IDX(LT_DIMS(2), 3, 10)));
    LT_EXPECT_ERROR(LT_ERR_INDEX, "embedding: index 10 is out of range for a weight of 10 rows (expected 0..9)");
    assert_null(lt_embedding(ww, IDX(LT_DIMS(1), -1)));
    LT_EXPECT_ERROR(LT_ERR_INDEX, "embedding: index -1 is out of range");
    assert_null(lt_embedding(AR(LT_F32, 10), IDX(LT_DIMS(1), 0)));
    LT_EXPECT_ERROR(LT_ERR_SHAPE, "embedding: weight has shape [10], expected 2 dims [num, dim]");
    assert_null(lt_embedding(ww, LT_T(LT_F64, LT_DIMS(1), 0)));
    LT_EXPECT_ERROR(LT_ERR_DTYPE, "embedding: indices has dtype f64, expected i32 or i64");
    assert_null(lt_embedding(ww, IDX(LT_DIMS(1, 1, 1, 1, 1, 1, 1, 1), 0)));
    LT_EXPECT_ERROR(LT_ERR_SHAPE, "would exceed 8 dims");
}

/* ======================================================================= */
/* scatter, scatter_add                                                     */
/* ======================================================================= */

static void test_scatter(void **state)
{
    (void)state;
    for (size_t k = 0; k < N_DTYPES; k++) {
        lt_dtype dt = ALL_DTYPES[k];
        lt_tensor *z = LT_OK_T(lt_zeros(LT_DIMS(3, 4), dt, lt_test_cpu()));
        lt_tensor *src = LT_OK_T(ar_from(1, dt, LT_DIMS(3, 4)));
        lt_tensor *idx = IDX(LT_DIMS(3, 2), 3, 0, 1, 1, 2, 3);
        lt_tensor *s = LT_OK_T(lt_scatter(z, 1, idx, src));
        ASSERT_DT_VALUES(s, dt, 2, 0, 0, 1, 0, 6, 0, 0, 0, 0, 9, 10);
        ASSERT_DT_VALUES(z, dt, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0); /* input untouched */
        lt_tensor *sa = LT_OK_T(lt_scatter_add(z, 1, idx, src));
        if (dt == LT_BOOL) /* bool adds are logical or */
            ASSERT_DT_VALUES(sa, dt, 1, 0, 0, 1, 0, 1, 0, 0, 0, 0, 1, 1);
        else
            ASSERT_DT_VALUES(sa, dt, 2, 0, 0, 1, 0, 11, 0, 0, 0, 0, 9, 10);
    }
    /* along dim 0, with a sliced (non-contiguous) src and a transposed self */
    lt_tensor *src = LT_OK_T(lt_slice(LT_OK_T(ar_from(1, LT_F32, LT_DIMS(3, 4))), 1, 0, 3, 1)); /* [3, 3] */
    lt_tensor *ones = LT_OK_T(lt_ones(LT_DIMS(2, 3), LT_F32, lt_test_cpu()));
    lt_tensor *idx0 = IDX(LT_DIMS(3, 3), 0, 1, 0, 0, 0, 1, 1, 1, 1);
    LT_ASSERT_VALUES(lt_scatter_add(ones, 0, idx0, src), 0, 7, 7, 4, 10, 13, 19);
    lt_tensor *self_t = LT_OK_T(lt_transpose(LT_OK_T(lt_zeros(LT_DIMS(3, 2), LT_F32, lt_test_cpu())), 0, 1));
    LT_ASSERT_VALUES(lt_scatter_add(self_t, 0, idx0, src), 0, 6, 6, 3, 9, 12, 18);
    /* index smaller than src in the scatter dim (torch example) */
    lt_tensor *sm = LT_OK_T(lt_scatter(LT_T(LT_I64, LT_DIMS(2, 2), 1, 2, 3, 4), 1, IDX(LT_DIMS(1, 3), 0, 0, 0),
                                       LT_T(LT_I64, LT_DIMS(1, 4), 5, 6, 7, 8)));
    LT_ASSERT_VALUES(sm, 0, 7, 2, 3, 4);
    /* repeated indices: scatter_add accumulates, bf16 through float */
    lt_tensor *acc = LT_OK_T(lt_scatter_add(LT_OK_T(lt_zeros(LT_DIMS(2), LT_BF16, lt_test_cpu())), 0,
                                            IDX(LT_DIMS(4), 1, 1, 1, 0), LT_T(LT_BF16, LT_DIMS(4), 0.5, 0.25, 1, 3)));
    LT_ASSERT_VALUES(acc, 0, 3, 1.75);
    /* 0-d and empty index */
    LT_ASSERT_VALUES(lt_scatter(LT_OK_T(lt_scalar(1, LT_F64, lt_test_cpu())), 0,
                                LT_OK_T(lt_scalar(0, LT_I64, lt_test_cpu())), LT_OK_T(lt_scalar(9, LT_F64, lt_test_cpu()))),
                     0, 9);
    LT_ASSERT_VALUES(lt_scatter(LT_T(LT_F32, LT_DIMS(2), 1, 2), 0, LT_OK_T(lt_zeros(LT_DIMS(0), LT_I64, lt_test_cpu())),
                                LT_T(LT_F32, LT_DIMS(1), 5)),
                     0, 1, 2);
}

static void test_scatter_errors(void **state)
{
    (void)state;
    lt_tensor *z = LT_OK_T(lt_zeros(LT_DIMS(2, 2), LT_F32, lt_test_cpu()));
    lt_tensor *src = LT_OK_T(lt_ones(LT_DIMS(2, 2), LT_F32, lt_test_cpu()));
    assert_null(lt_scatter(z, 1, IDX(LT_DIMS(2, 1), 0, 2), src));
    LT_EXPECT_ERROR(LT_ERR_INDEX, "scatter: index 2 is out of range for dim 1 of size 2 (expected 0..1)");
    assert_null(lt_scatter_add(z, 1, IDX(LT_DIMS(2, 1), -1, 0), src));
    LT_EXPECT_ERROR(LT_ERR_INDEX, "scatter_add: index -1 is out of range");
    LT_ASSERT_VALUES(z, 0, 0, 0, 0, 0);
    assert_null(lt_scatter(z, 1, IDX(LT_DIMS(2, 1), 0, 1), LT_OK_T(lt_ones(LT_DIMS(2, 2), LT_F64, lt_test_cpu()))));
    LT_EXPECT_ERROR(LT_ERR_DTYPE, "scatter: src has dtype f64 but the input has dtype f32");
    assert_null(lt_scatter(z, 1, IDX(LT_DIMS(1, 3), 0, 0, 0), src));
    LT_EXPECT_ERROR(LT_ERR_SHAPE, "scatter: index shape [1, 3] must be no larger than src [2, 2]");
    assert_null(lt_scatter(z, 1, IDX(LT_DIMS(3, 1), 0, 0, 0), LT_OK_T(lt_ones(LT_DIMS(3, 2), LT_F32, lt_test_cpu()))));
    LT_EXPECT_ERROR(LT_ERR_SHAPE, "outside dim 1 (dim 0 violates this)");
    assert_null(lt_scatter(z, 1, IDX(LT_DIMS(2), 0, 0), src));
    LT_EXPECT_ERROR(LT_ERR_SHAPE, "must have the same number of dims");
    assert_null(lt_scatter(z, 1, LT_T(LT_F32, LT_DIMS(2, 1), 0, 0), src));
    LT_EXPECT_ERROR(LT_ERR_DTYPE, "scatter: index has dtype f32");
    assert_null(lt_scatter(z, 2, IDX(LT_DIMS(2, 1), 0, 0), src));
    LT_EXPECT_ERROR(LT_ERR_INDEX, "scatter: dim 2 out of range for a 2-d tensor");
    assert_null(lt_scatter_add(z, 0, IDX(LT_DIMS(2, 1), 0, 0), NULL));
    LT_EXPECT_ERROR(LT_ERR_NULL, "scatter_add: argument 2 is NULL");
}

/* ======================================================================= */
/* masked_fill, one_hot, tril, triu                                         */
/* ======================================================================= */

static void test_masked_fill(void **state)
{
    (void)state;
    lt_tensor *row_mask = LT_T(LT_BOOL, LT_DIMS(3), 1, 0, 1);
    lt_tensor *col_mask = LT_T(LT_BOOL, LT_DIMS(2, 1), 0, 1);
    for (size_t k = 0; k < N_DTYPES; k++) {
        lt_dtype dt = ALL_DTYPES[k];
        lt_tensor *x = AR(dt, 2, 3);
        ASSERT_DT_VALUES(lt_masked_fill(x, row_mask, 7), dt, 7, 1, 7, 7, 4, 7);
        ASSERT_DT_VALUES(lt_masked_fill(x, col_mask, 0), dt, 0, 1, 2, 0, 0, 0);
        ASSERT_DT_VALUES(x, dt, 0, 1, 2, 3, 4, 5);
    }
    /* non-contiguous input and mask, scalar mask */
    lt_tensor *xt = LT_OK_T(lt_transpose(AR(LT_F32, 3, 2), 0, 1)); /* [[0,2,4],[1,3,5]] */
    lt_tensor *mt = LT_OK_T(lt_transpose(LT_T(LT_BOOL, LT_DIMS(3, 2), 1, 0, 0, 1, 0, 0), 0, 1));
    LT_ASSERT_VALUES(lt_masked_fill(xt, mt, -1.5), 0, -1.5, 2, 4, 1, -1.5, 5);
    LT_ASSERT_VALUES(lt_masked_fill(xt, LT_OK_T(lt_scalar(1, LT_BOOL, lt_test_cpu())), INFINITY), 0, INFINITY,
                     INFINITY, INFINITY, INFINITY, INFINITY, INFINITY);
    LT_ASSERT_VALUES(lt_masked_fill(LT_T(LT_F32, LT_DIMS(2), 1, 2), LT_T(LT_BOOL, LT_DIMS(2), 0, 1), NAN), 0, 1, NAN);
    /* values are converted like torch: truncation into integers */
    LT_ASSERT_VALUES(lt_masked_fill(AR(LT_I64, 2), LT_T(LT_BOOL, LT_DIMS(2), 1, 0), 2.7), 0, 2, 1);
    LT_ASSERT_VALUES(lt_masked_fill(AR(LT_U8, 2), LT_T(LT_BOOL, LT_DIMS(2), 1, 0), 255), 0, 255, 1);
    /* 0-d and empty */
    LT_ASSERT_VALUES(lt_masked_fill(LT_OK_T(lt_scalar(3, LT_F64, lt_test_cpu())),
                                    LT_OK_T(lt_scalar(1, LT_BOOL, lt_test_cpu())), 4), 0, 4);
    LT_ASSERT_SHAPE(LT_OK_T(lt_masked_fill(LT_OK_T(lt_zeros(LT_DIMS(0, 3), LT_F32, lt_test_cpu())), row_mask, 1)), 0, 3);
    /* large: the iterator's parallel path */
    lt_tensor *big = AR(LT_F32, 300, 200);
    lt_tensor *bm = LT_OK_T(lt_expand(LT_OK_T(lt_reshape(LT_T(LT_BOOL, LT_DIMS(2), 1, 0), LT_DIMS(1, 2))), LT_DIMS(100, 2)));
    lt_tensor *bmask = LT_OK_T(lt_reshape(bm, LT_DIMS(200)));
    double *v = lt_test_values(LT_OK_T(lt_masked_fill(big, bmask, -1)));
    for (int64_t i = 0; i < 60000; i++)
        if (v[i] != (i % 2 == 0 ? -1.0 : (double)i))
            fail_msg("masked_fill element %lld is %g", (long long)i, v[i]);
    free(v);
}

static void test_masked_fill_errors(void **state)
{
    (void)state;
    lt_tensor *x = AR(LT_I32, 3);
    assert_null(lt_masked_fill(x, LT_T(LT_U8, LT_DIMS(3), 1, 0, 1), 1));
    LT_EXPECT_ERROR(LT_ERR_DTYPE, "masked_fill: mask has dtype u8, expected bool");
    /* a mask with more dims broadcasts the input (as torch) */
    lt_tensor *wide = LT_OK_T(lt_masked_fill(x, LT_T(LT_BOOL, LT_DIMS(2, 3), 1, 0, 1, 0, 1, 0), 7));
    LT_ASSERT_SHAPE(wide, 2, 3);
    LT_ASSERT_VALUES(wide, 0, 7, 1, 7, 0, 7, 2);
    assert_null(lt_masked_fill(x, LT_T(LT_BOOL, LT_DIMS(2), 1, 0), 1));
    LT_EXPECT_ERROR(LT_ERR_SHAPE, "masked_fill: shapes [3] and [2] are not broadcastable");
    lt_tensor *m = LT_T(LT_BOOL, LT_DIMS(3), 1, 0, 1);
    assert_null(lt_masked_fill(x, m, 1e20));
    LT_EXPECT_ERROR(LT_ERR_ARGUMENT, "masked_fill: value 1e+20 cannot be converted to i32 without overflow");
    assert_null(lt_masked_fill(x, m, NAN));
    LT_EXPECT_ERROR(LT_ERR_ARGUMENT, "cannot be converted to i32");
    assert_null(lt_masked_fill(AR(LT_U8, 3), m, -1));
    LT_EXPECT_ERROR(LT_ERR_ARGUMENT, "value -1 cannot be converted to u8");
    assert_null(lt_masked_fill(AR(LT_I64, 3), m, 1e19));
    LT_EXPECT_ERROR(LT_ERR_ARGUMENT, "cannot be converted to i64");
    assert_null(lt_masked_fill(AR(LT_F32, 3), m, 1e300));
    LT_EXPECT_ERROR(LT_ERR_ARGUMENT, "masked_fill: value 1e+300 overflows dtype f32");
    assert_null(lt_masked_fill(NULL, m, 1));
    LT_EXPECT_ERROR(LT_ERR_NULL, "masked_fill: argument 0 is NULL");
}

static void test_one_hot(void **state)
{
    (void)state;
    lt_tensor *r = LT_OK_T(lt_one_hot(IDX(LT_DIMS(2), 0, 2), 3));
    LT_ASSERT_SHAPE(r, 2, 3);
    assert_int_equal(lt_tensor_dtype(r), LT_I64);
    LT_ASSERT_VALUES(r, 0, 1, 0, 0, 0, 0, 1);
    lt_tensor *r2 = LT_OK_T(lt_one_hot(LT_T(LT_I32, LT_DIMS(2, 2), 1, 0, 3, 1), 4));
    LT_ASSERT_SHAPE(r2, 2, 2, 4);
    LT_ASSERT_VALUES(r2, 0, 0, 1, 0, 0, 1, 0, 0, 0, 0, 0, 0, 1, 0, 1, 0, 0);
    /* non-contiguous indices */
    lt_tensor *it = LT_OK_T(lt_transpose(IDX(LT_DIMS(2, 2), 0, 1, 0, 0), 0, 1)); /* [[0,0],[1,0]] */
    LT_ASSERT_VALUES(lt_one_hot(it, 2), 0, 1, 0, 1, 0, 0, 1, 1, 0);
    lt_tensor *s = LT_OK_T(lt_one_hot(LT_OK_T(lt_scalar(1, LT_I64, lt_test_cpu())), 2));
    LT_ASSERT_SHAPE(s, 2);
    LT_ASSERT_VALUES(s, 0, 0, 1);
    LT_ASSERT_SHAPE(LT_OK_T(lt_one_hot(LT_OK_T(lt_zeros(LT_DIMS(0), LT_I64, lt_test_cpu())), 0)), 0, 0);
    assert_null(lt_one_hot(IDX(LT_DIMS(2), 0, 3), 3));
    LT_EXPECT_ERROR(LT_ERR_INDEX, "one_hot: index 3 is out of range for num_classes 3 (expected 0..2)");
    assert_null(lt_one_hot(IDX(LT_DIMS(2), -1, 0), 3));
    LT_EXPECT_ERROR(LT_ERR_INDEX, "one_hot: index -1");
    assert_null(lt_one_hot(IDX(LT_DIMS(1), 0), 0));
    LT_EXPECT_ERROR(LT_ERR_INDEX, "num_classes 0");
    assert_null(lt_one_hot(IDX(LT_DIMS(1), 0), -1));
    LT_EXPECT_ERROR(LT_ERR_ARGUMENT, "one_hot: num_classes is -1, expected >= 0");
    assert_null(lt_one_hot(LT_T(LT_F32, LT_DIMS(1), 0), 2));
    LT_EXPECT_ERROR(LT_ERR_DTYPE, "one_hot: indices has dtype f32, expected i32 or i64");
}

static void test_tril_triu(void **state)
{
    (void)state;
    for (size_t k = 0; k < N_DTYPES; k++) {
        lt_dtype dt = ALL_DTYPES[k];
        lt_tensor *y = AR(dt, 2, 3, 4);
        ASSERT_DT_VALUES(lt_tril(y, 0), dt, 0, 0, 0, 0, 4, 5, 0, 0, 8, 9, 10, 0, 12, 0, 0, 0, 16, 17, 0, 0, 20, 21,
                         22, 0);
        ASSERT_DT_VALUES(lt_triu(y, 1), dt, 0, 1, 2, 3, 0, 0, 6, 7, 0, 0, 0, 11, 0, 13, 14, 15, 0, 0, 18, 19, 0, 0,
                         0, 23);
        ASSERT_DT_VALUES(lt_tril(y, -1), dt, 0, 0, 0, 0, 4, 0, 0, 0, 8, 9, 0, 0, 0, 0, 0, 0, 16, 0, 0, 0, 20, 21, 0,
                         0);
    }
    ASSERT_DT_VALUES(lt_triu(LT_OK_T(ar_from(1, LT_BF16, LT_DIMS(3, 2))), -1), LT_BF16, 1, 2, 3, 4, 0, 6);
    ASSERT_DT_VALUES(lt_tril(LT_OK_T(ar_from(1, LT_U8, LT_DIMS(2, 2))), 0), LT_U8, 1, 0, 3, 4);
    ASSERT_DT_VALUES(lt_tril(LT_OK_T(ar_from(-2, LT_F16, LT_DIMS(2, 2))), 0), LT_F16, -2, 0, 0, 1);
    /* transposed input: tril of x^T */
    lt_tensor *xt = LT_OK_T(lt_transpose(AR(LT_F32, 3, 3), 0, 1)); /* [[0,3,6],[1,4,7],[2,5,8]] */
    LT_ASSERT_VALUES(lt_tril(xt, 0), 0, 0, 0, 0, 1, 4, 0, 2, 5, 8);
    LT_ASSERT_VALUES(lt_triu(xt, 0), 0, 0, 3, 6, 0, 4, 7, 0, 0, 8);
    /* extreme k */
    lt_tensor *m = AR(LT_I64, 2, 3);
    LT_ASSERT_VALUES(lt_tril(m, INT64_MAX), 0, 0, 1, 2, 3, 4, 5);
    LT_ASSERT_VALUES(lt_tril(m, INT64_MIN), 0, 0, 0, 0, 0, 0, 0);
    LT_ASSERT_VALUES(lt_triu(m, INT64_MIN), 0, 0, 1, 2, 3, 4, 5);
    LT_ASSERT_VALUES(lt_triu(m, INT64_MAX), 0, 0, 0, 0, 0, 0, 0);
    LT_ASSERT_SHAPE(LT_OK_T(lt_tril(LT_OK_T(lt_zeros(LT_DIMS(0, 3, 3), LT_F32, lt_test_cpu())), 0)), 0, 3, 3);
    assert_null(lt_tril(AR(LT_F32, 3), 0));
    LT_EXPECT_ERROR(LT_ERR_SHAPE, "tril: input of shape [3] has 1 dims, expected at least 2");
    assert_null(lt_triu(LT_OK_T(lt_scalar(1, LT_F32, lt_test_cpu())), 0));
    LT_EXPECT_ERROR(LT_ERR_SHAPE, "triu: input of shape [] has 0 dims");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        LT_TEST(test_cat_all_dtypes),
        LT_TEST(test_cat_promotes_dtypes),
        LT_TEST(test_cat_non_contiguous_and_empty),
        LT_TEST(test_cat_large_contiguous),
        LT_TEST(test_cat_errors),
        LT_TEST(test_stack),
        LT_TEST(test_split),
        LT_TEST(test_chunk),
        LT_TEST(test_index_select),
        LT_TEST(test_index_select_errors),
        LT_TEST(test_gather),
        LT_TEST(test_gather_errors),
        LT_TEST(test_embedding),
        LT_TEST(test_scatter),
        LT_TEST(test_scatter_errors),
        LT_TEST(test_masked_fill),
        LT_TEST(test_masked_fill_errors),
        LT_TEST(test_one_hot),
        LT_TEST(test_tril_triu),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
