/* test_shape_sort.c - sort, topk and nonzero: stability with ties, NaN
 * ordering (greatest, like torch), every dtype, strided inputs, size-0 and
 * 0-d tensors, large inputs checked against an independent test in plain C,
 * and errors. */
#include "lt_test.h"

static const lt_dtype ALL_DTYPES[] = {LT_F32, LT_F64, LT_I32, LT_I64, LT_U8, LT_BOOL, LT_BF16, LT_F16};
#define N_DTYPES (sizeof ALL_DTYPES / sizeof ALL_DTYPES[0])


/* ======================================================================= */
/* sort                                                                     */
/* ======================================================================= */

static void test_sort_nan_ties_stable(void **state)
{
    (void)state;
    /* torch 1.13 (stable=True): NaN sorts as the greatest value, -0 == 0 */
    lt_tensor *v = LT_T(LT_F32, LT_DIMS(8), 3, 1, NAN, 1, 2, NAN, -0.0, 0);
    lt_tensor *idx = NULL;
    lt_tensor *s = LT_OK_T(lt_sort(v, 0, false, &idx));
    LT_ASSERT_VALUES(s, 0, -0.0, 0, 1, 1, 2, 3, NAN, NAN);
    assert_int_equal(lt_tensor_dtype(idx), LT_I64);
    LT_ASSERT_VALUES(idx, 0, 6, 7, 1, 3, 4, 0, 2, 5);
    lt_tensor *d = LT_OK_T(lt_sort(v, -1, true, &idx));
    LT_ASSERT_VALUES(d, 0, NAN, NAN, 3, 2, 1, 1, -0.0, 0);
    LT_ASSERT_VALUES(idx, 0, 2, 5, 0, 4, 1, 3, 6, 7);
    /* the sign of -0 is kept: the values are copied, not recomputed */
    float got[8];
    assert_int_equal(lt_copy_to_host(s, got, sizeof got), LT_OK);
    assert_true(signbit(got[0]) && !signbit(got[1]));
    /* indices may be omitted */
    LT_ASSERT_VALUES(lt_sort(LT_T(LT_F64, LT_DIMS(3), 2, -INFINITY, INFINITY), 0, false, NULL), 0, -INFINITY, 2,
                     INFINITY);
}

static void test_sort_all_dtypes(void **state)
{
    (void)state;
    for (size_t k = 0; k < N_DTYPES; k++) {
        lt_dtype dt = ALL_DTYPES[k];
        lt_tensor *idx = NULL;
        if (dt == LT_BOOL) {
            lt_tensor *b = LT_T(LT_BOOL, LT_DIMS(4), 1, 0, 1, 0);
            LT_ASSERT_VALUES(lt_sort(b, 0, false, &idx), 0, 0, 0, 1, 1);
            LT_ASSERT_VALUES(idx, 0, 1, 3, 0, 2);
            LT_ASSERT_VALUES(lt_sort(b, 0, true, &idx), 0, 1, 1, 0, 0);
            LT_ASSERT_VALUES(idx, 0, 0, 2, 1, 3);
            continue;
        }
        /* [[3, 1, 2], [1, 1, 0]] along dim 0 (torch: values [1,1,0,3,1,2], indices [1,0,1,0,1,0]) */
        lt_tensor *m = LT_T(dt, LT_DIMS(2, 3), 3, 1, 2, 1, 1, 0);
        lt_tensor *s = LT_OK_T(lt_sort(m, 0, false, &idx));
        assert_int_equal(lt_tensor_dtype(s), dt);
        LT_ASSERT_VALUES(s, 0, 1, 1, 0, 3, 1, 2);
        LT_ASSERT_VALUES(idx, 0, 1, 0, 1, 0, 1, 0);
        /* along dim 1, descending */
        LT_ASSERT_VALUES(lt_sort(m, 1, true, &idx), 0, 3, 2, 1, 1, 1, 0);
        LT_ASSERT_VALUES(idx, 0, 0, 2, 1, 0, 1, 2);
    }
    /* negative integers and values beyond 2^53 sort exactly */
    const int64_t big[4] = {(int64_t)1 << 60, -5, ((int64_t)1 << 60) + 1, ((int64_t)1 << 60) - 1};
    lt_tensor *b = LT_OK_T(lt_from_data(big, LT_DIMS(4), LT_I64, lt_test_cpu()));
    lt_tensor *idx = NULL;
    lt_tensor *sb = LT_OK_T(lt_sort(b, 0, true, &idx));
    int64_t got[4];
    assert_int_equal(lt_copy_to_host(sb, got, sizeof got), LT_OK);
    assert_true(got[0] == big[2] && got[1] == big[0] && got[2] == big[3] && got[3] == -5);
    LT_ASSERT_VALUES(idx, 0, 2, 0, 3, 1);
    /* bf16 and f16 with NaN */
    LT_ASSERT_VALUES(lt_sort(LT_T(LT_BF16, LT_DIMS(3), NAN, -1.5, 0.5), 0, false, NULL), 0, -1.5, 0.5, NAN);
    LT_ASSERT_VALUES(lt_sort(LT_T(LT_F16, LT_DIMS(3), 2, NAN, -7), 0, true, NULL), 0, NAN, 2, -7);
    LT_ASSERT_VALUES(lt_sort(LT_T(LT_U8, LT_DIMS(3), 200, 3, 255), 0, false, NULL), 0, 3, 200, 255);
}

static void test_sort_strided_and_small(void **state)
{
    (void)state;
    /* transposed input: sort each column of m, i.e. rows of m^T */
    lt_tensor *m = LT_T(LT_F32, LT_DIMS(3, 2), 5, 0, 4, 9, 6, 1); /* m^T = [[5,4,6],[0,9,1]] */
    lt_tensor *idx = NULL;
    lt_tensor *s = LT_OK_T(lt_sort(LT_OK_T(lt_transpose(m, 0, 1)), 1, false, &idx));
    LT_ASSERT_SHAPE(s, 2, 3);
    LT_ASSERT_VALUES(s, 0, 4, 5, 6, 0, 1, 9);
    LT_ASSERT_VALUES(idx, 0, 1, 0, 2, 0, 2, 1);
    /* expanded input (stride 0) */
    lt_tensor *e = LT_OK_T(lt_expand(LT_T(LT_I32, LT_DIMS(3, 1), 2, 1, 3), LT_DIMS(3, 2)));
    LT_ASSERT_VALUES(lt_sort(e, 0, false, &idx), 0, 1, 1, 2, 2, 3, 3);
    LT_ASSERT_VALUES(idx, 0, 1, 1, 0, 0, 2, 2);
    /* 0-d, size-1 and size-0 */
    lt_tensor *z = LT_OK_T(lt_scalar(3, LT_F32, lt_test_cpu()));
    lt_tensor *sz = LT_OK_T(lt_sort(z, 0, false, &idx));
    assert_int_equal(lt_tensor_ndim(sz), 0);
    LT_ASSERT_VALUES(sz, 0, 3);
    LT_ASSERT_VALUES(idx, 0, 0);
    lt_tensor *empty = LT_OK_T(lt_zeros(LT_DIMS(2, 0), LT_F32, lt_test_cpu()));
    LT_ASSERT_SHAPE(LT_OK_T(lt_sort(empty, 1, false, &idx)), 2, 0);
    LT_ASSERT_SHAPE(idx, 2, 0);
    LT_ASSERT_SHAPE(LT_OK_T(lt_sort(empty, 0, true, NULL)), 2, 0);
    /* errors */
    idx = (lt_tensor *)&idx;
    assert_null(lt_sort(m, 2, false, &idx));
    LT_EXPECT_ERROR(LT_ERR_INDEX, "sort: dim 2 out of range for a 2-d tensor");
    assert_null(idx);
    assert_null(lt_sort(NULL, 0, false, NULL));
    LT_EXPECT_ERROR(LT_ERR_NULL, "sort: argument 0 is NULL");
}

/* Checks one sorted slice: ordered, stable among ties, a permutation, and
 * values[j] == input[indices[j]]. Values are small integers (exact). */
static void check_sorted_slice(const double *in, const double *val, const double *pos, int64_t n, bool desc)
{
    bool *seen = calloc((size_t)n, 1);
    for (int64_t j = 0; j < n; j++) {
        int64_t p = (int64_t)pos[j];
        assert_true(p >= 0 && p < n && !seen[p]);
        seen[p] = true;
        assert_true(val[j] == in[p]);
        if (j > 0) {
            bool ordered = desc ? val[j - 1] >= val[j] : val[j - 1] <= val[j];
            assert_true(ordered);
            if (val[j - 1] == val[j])
                assert_true(pos[j - 1] < pos[j]); /* stable */
        }
    }
    free(seen);
}

/* Large enough for the parallel path; many ties (values 0..9). */
static void test_sort_large_against_checker(void **state)
{
    (void)state;
    const int64_t rows = 400, cols = 150;
    lt_manual_seed(7);
    lt_tensor *r = LT_OK_T(lt_randint(0, 10, LT_DIMS(rows, cols), LT_I32, lt_test_cpu()));
    for (int desc = 0; desc < 2; desc++) {
        for (int dim = 0; dim < 2; dim++) {
            lt_tensor *idx = NULL;
            lt_tensor *s = LT_OK_T(lt_sort(r, dim, desc, &idx));
            double *in = lt_test_values(r), *val = lt_test_values(s), *pos = lt_test_values(idx);
            int64_t n = dim == 1 ? cols : rows, slices = dim == 1 ? rows : cols;
            double *a = malloc(sizeof(double) * (size_t)n * 3);
            for (int64_t sl = 0; sl < slices; sl++) {
                for (int64_t j = 0; j < n; j++) {
                    int64_t flat = dim == 1 ? sl * cols + j : j * cols + sl;
                    a[j] = in[flat];
                    a[n + j] = val[flat];
                    a[2 * n + j] = pos[flat];
                }
                check_sorted_slice(a, a + n, a + 2 * n, n, desc);
            }
            free(a);
            free(in);
            free(val);
            free(pos);
        }
    }
    /* one long f64 row with NaNs sprinkled in: NaNs last, others ordered */
    const int64_t n = 40000;
    double *data = malloc(sizeof(double) * (size_t)n);
    for (int64_t i = 0; i < n; i++)
        data[i] = i % 97 == 0 ? NAN : (double)((i * 7919) % 1000) - 500;
    lt_tensor *t = LT_OK_T(lt_from_data(data, LT_DIMS(n), LT_F64, lt_test_cpu()));
    double *v = lt_test_values(LT_OK_T(lt_sort(t, 0, false, NULL)));
    int64_t nans = 0;
    for (int64_t i = 0; i < n; i++)
        nans += isnan(data[i]);
    for (int64_t i = 0; i < n - nans; i++) {
        assert_false(isnan(v[i]));
        if (i > 0)
            assert_true(v[i - 1] <= v[i]);
    }
    for (int64_t i = n - nans; i < n; i++)
        assert_true(isnan(v[i]));
    free(v);
    free(data);
}

/* ======================================================================= */
/* topk                                                                     */
/* ======================================================================= */

static void test_topk(void **state)
{
    (void)state;
    lt_tensor *t = LT_T(LT_F32, LT_DIMS(2, 4), 5, 1, 4, 1, 2, 2, 9, 0);
    lt_tensor *idx = NULL;
    LT_ASSERT_VALUES(lt_topk(t, 2, 1, true, &idx), 0, 5, 4, 9, 2);
    LT_ASSERT_VALUES(idx, 0, 0, 2, 2, 0); /* ties: the first occurrence first */
    LT_ASSERT_VALUES(lt_topk(t, 2, -1, false, &idx), 0, 1, 1, 0, 2);
    LT_ASSERT_VALUES(idx, 0, 1, 3, 3, 0);
    lt_tensor *k0 = LT_OK_T(lt_topk(t, 2, 0, true, &idx));
    LT_ASSERT_SHAPE(k0, 2, 4);
    LT_ASSERT_VALUES(k0, 0, 5, 2, 9, 1, 2, 1, 4, 0);
    LT_ASSERT_VALUES(idx, 0, 0, 1, 1, 0, 1, 0, 0, 1);
    /* k = 0 and k = size */
    lt_tensor *none = LT_OK_T(lt_topk(t, 0, 1, true, &idx));
    LT_ASSERT_SHAPE(none, 2, 0);
    LT_ASSERT_SHAPE(idx, 2, 0);
    lt_tensor *all = LT_OK_T(lt_topk(t, 4, 1, false, &idx));
    LT_ASSERT_VALUES(all, 0, 1, 1, 4, 5, 0, 2, 2, 9);
    LT_ASSERT_VALUES(idx, 0, 1, 3, 2, 0, 3, 0, 1, 2);
    /* NaN is the largest; every dtype; strided input */
    LT_ASSERT_VALUES(lt_topk(LT_T(LT_F64, LT_DIMS(4), 1, NAN, 3, 2), 2, 0, true, &idx), 0, NAN, 3);
    LT_ASSERT_VALUES(idx, 0, 1, 2);
    for (size_t k = 0; k < N_DTYPES; k++) {
        lt_dtype dt = ALL_DTYPES[k];
        lt_tensor *x = LT_OK_T(lt_transpose(LT_T(dt, LT_DIMS(3, 2), 0, 6, 5, 2, 1, 1), 0, 1)); /* [[0,5,1],[6,2,1]] */
        lt_tensor *r = LT_OK_T(lt_topk(x, 1, 1, true, &idx));
        assert_int_equal(lt_tensor_dtype(r), dt);
        if (dt == LT_BOOL) {
            LT_ASSERT_VALUES(r, 0, 1, 1);
            LT_ASSERT_VALUES(idx, 0, 1, 0);
        } else {
            LT_ASSERT_VALUES(r, 0, 5, 6);
            LT_ASSERT_VALUES(idx, 0, 1, 0);
        }
    }
    /* 0-d: k is 0 or 1 (like torch, the result keeps the element) */
    lt_tensor *s = LT_OK_T(lt_scalar(3, LT_F32, lt_test_cpu()));
    lt_tensor *ts = LT_OK_T(lt_topk(s, 1, 0, true, &idx));
    assert_int_equal(lt_tensor_ndim(ts), 0);
    LT_ASSERT_VALUES(ts, 0, 3);
    LT_ASSERT_VALUES(idx, 0, 0);
    LT_ASSERT_VALUES(lt_topk(s, 0, -1, false, NULL), 0, 3);
    /* empty dim with k = 0 */
    LT_ASSERT_SHAPE(LT_OK_T(lt_topk(LT_OK_T(lt_zeros(LT_DIMS(3, 0), LT_I64, lt_test_cpu())), 0, 1, true, NULL)), 3, 0);
    /* errors */
    assert_null(lt_topk(t, 5, 1, true, &idx));
    LT_EXPECT_ERROR(LT_ERR_ARGUMENT, "topk: k = 5 is out of range for dim 1 of size 4 (expected 0..4)");
    assert_null(idx);
    assert_null(lt_topk(t, -1, 1, true, NULL));
    LT_EXPECT_ERROR(LT_ERR_ARGUMENT, "topk: k = -1");
    assert_null(lt_topk(s, 2, 0, true, NULL));
    LT_EXPECT_ERROR(LT_ERR_ARGUMENT, "of size 1 (expected 0..1)");
    assert_null(lt_topk(t, 1, 2, true, NULL));
    LT_EXPECT_ERROR(LT_ERR_INDEX, "topk: dim 2 out of range for a 2-d tensor");
}

/* topk equals the first k of the stable sort, for small k (selection) and
 * large k (full sort), with many ties and NaNs. */
static void test_topk_matches_sort_prefix(void **state)
{
    (void)state;
    const int64_t rows = 300, cols = 150;
    lt_manual_seed(11);
    lt_tensor *ri = LT_OK_T(lt_randint(0, 12, LT_DIMS(rows, cols), LT_I64, lt_test_cpu()));
    double *vals = lt_test_values(ri);
    for (int64_t i = 0; i < rows * cols; i += 37)
        vals[i] = NAN;
    lt_tensor *rf = LT_OK_T(lt_from_data(vals, LT_DIMS(rows, cols), LT_F64, lt_test_cpu()));
    free(vals);
    const int64_t ks[] = {1, 5, 32, 33, 150};
    lt_tensor *inputs[2] = {ri, rf};
    for (int which = 0; which < 2; which++) {
        for (int largest = 0; largest < 2; largest++) {
            lt_tensor *sidx = NULL;
            lt_tensor *sorted = LT_OK_T(lt_sort(inputs[which], 1, largest, &sidx));
            double *sv = lt_test_values(sorted), *si = lt_test_values(sidx);
            for (size_t q = 0; q < sizeof ks / sizeof ks[0]; q++) {
                int64_t k = ks[q];
                lt_tensor *tidx = NULL;
                lt_tensor *top = LT_OK_T(lt_topk(inputs[which], k, 1, largest, &tidx));
                double *tv = lt_test_values(top), *ti = lt_test_values(tidx);
                for (int64_t r = 0; r < rows; r++) {
                    for (int64_t j = 0; j < k; j++) {
                        double a = tv[r * k + j], b = sv[r * cols + j];
                        if (!(a == b || (isnan(a) && isnan(b))) || ti[r * k + j] != si[r * cols + j])
                            fail_msg("input %d largest %d k %lld row %lld pos %lld: %g@%g vs %g@%g", which, largest,
                                     (long long)k, (long long)r, (long long)j, a, ti[r * k + j], b, si[r * cols + j]);
                    }
                }
                free(tv);
                free(ti);
            }
            free(sv);
            free(si);
        }
    }
}

/* ======================================================================= */
/* nonzero                                                                  */
/* ======================================================================= */

static void test_nonzero(void **state)
{
    (void)state;
    /* NaN is nonzero, -0 is zero (torch: [[0, 1], [1, 0]]) */
    lt_tensor *t = LT_T(LT_F32, LT_DIMS(2, 3), 0, 1.5, 0, NAN, 0, -0.0);
    lt_tensor *nz = LT_OK_T(lt_nonzero(t));
    LT_ASSERT_SHAPE(nz, 2, 2);
    assert_int_equal(lt_tensor_dtype(nz), LT_I64);
    LT_ASSERT_VALUES(nz, 0, 0, 1, 1, 0);
    for (size_t k = 0; k < N_DTYPES; k++) {
        lt_dtype dt = ALL_DTYPES[k];
        lt_tensor *x = LT_T(dt, LT_DIMS(2, 2, 2), 0, 1, 0, 0, 2, 0, 0, 3);
        lt_tensor *r = LT_OK_T(lt_nonzero(x));
        LT_ASSERT_SHAPE(r, 3, 3);
        LT_ASSERT_VALUES(r, 0, 0, 0, 1, 1, 0, 0, 1, 1, 1);
    }
    /* -0 in the half types is zero */
    LT_ASSERT_SHAPE(LT_OK_T(lt_nonzero(LT_T(LT_BF16, LT_DIMS(2), -0.0, 0))), 0, 1);
    LT_ASSERT_SHAPE(LT_OK_T(lt_nonzero(LT_T(LT_F16, LT_DIMS(2), -0.0, 1e-7))), 1, 1);
    /* strided input: coordinates in the view's own index space */
    lt_tensor *xt = LT_OK_T(lt_transpose(LT_T(LT_I32, LT_DIMS(2, 3), 0, 4, 0, 5, 0, 6), 0, 1)); /* [[0,5],[4,0],[0,6]] */
    LT_ASSERT_VALUES(lt_nonzero(xt), 0, 0, 1, 1, 0, 2, 1);
    /* 0-d: [1, 0] or [0, 0]; empty: [0, ndim] */
    LT_ASSERT_SHAPE(LT_OK_T(lt_nonzero(LT_OK_T(lt_scalar(3, LT_F32, lt_test_cpu())))), 1, 0);
    LT_ASSERT_SHAPE(LT_OK_T(lt_nonzero(LT_OK_T(lt_scalar(0, LT_I64, lt_test_cpu())))), 0, 0);
    LT_ASSERT_SHAPE(LT_OK_T(lt_nonzero(LT_OK_T(lt_zeros(LT_DIMS(2, 0), LT_F32, lt_test_cpu())))), 0, 2);
    LT_ASSERT_SHAPE(LT_OK_T(lt_nonzero(LT_OK_T(lt_zeros(LT_DIMS(4, 5), LT_BOOL, lt_test_cpu())))), 0, 2);
    /* large: every third element */
    const int64_t n = 50000;
    uint8_t *flags = malloc((size_t)n);
    for (int64_t i = 0; i < n; i++)
        flags[i] = i % 3 == 0;
    lt_tensor *big = LT_OK_T(lt_from_data(flags, LT_DIMS(250, 200), LT_BOOL, lt_test_cpu()));
    free(flags);
    lt_tensor *bn = LT_OK_T(lt_nonzero(big));
    LT_ASSERT_SHAPE(bn, (n + 2) / 3, 2);
    double *v = lt_test_values(bn);
    for (int64_t i = 0; i < (n + 2) / 3; i++) {
        int64_t flat = 3 * i;
        assert_true(v[2 * i] == flat / 200 && v[2 * i + 1] == flat % 200);
    }
    free(v);
    assert_null(lt_nonzero(NULL));
    LT_EXPECT_ERROR(LT_ERR_NULL, "nonzero: argument 0 is NULL");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        LT_TEST(test_sort_nan_ties_stable),
        LT_TEST(test_sort_all_dtypes),
        LT_TEST(test_sort_strided_and_small),
        LT_TEST(test_sort_large_against_checker),
        LT_TEST(test_topk),
        LT_TEST(test_topk_matches_sort_prefix),
        LT_TEST(test_nonzero),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
