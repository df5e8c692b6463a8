/* test_multinomial.c - lt_multinomial: frequencies against the given
 * distributions (with and without replacement), categories of weight 0
 * never drawn, distinct samples without replacement, the same draws on
 * cpu and on lazy (both backends) for a seed, and bad input. */
#include "lt_test.h"

#include <string.h>

/* The i64 values of t, malloc'd. */
static int64_t *indices_of(lt_tensor *t)
{
    lt_tensor *c = LT_OK_T(lt_to(t, lt_test_cpu()));
    int64_t n = lt_tensor_numel(c);
    int64_t *v = malloc(sizeof *v * (size_t)(n ? n : 1));
    memcpy(v, lt_tensor_data(LT_OK_T(lt_contiguous(c))), sizeof *v * (size_t)n);
    return v;
}

/* Frequencies of categories 0..k-1 among n samples, each checked to be
 * in range. */
static void frequencies(const int64_t *v, int64_t n, int64_t k, double *freq)
{
    for (int64_t j = 0; j < k; j++)
        freq[j] = 0;
    for (int64_t i = 0; i < n; i++) {
        assert_true(v[i] >= 0 && v[i] < k);
        freq[v[i]] += 1.0 / (double)n;
    }
}

static void test_frequencies_with_replacement(void **state)
{
    (void)state;
    lt_manual_seed(7);
    /* weights need not sum to 1; weight 0 is never drawn */
    lt_tensor *w = LT_T(LT_F32, LT_DIMS(4), 1, 0, 2, 5);
    int64_t n = 40000;
    lt_tensor *s = LT_OK_T(lt_multinomial(w, n, true));
    LT_ASSERT_SHAPE(s, n);
    assert_int_equal(lt_tensor_dtype(s), LT_I64);
    int64_t *v = indices_of(s);
    double f[4], expect[4] = {0.125, 0, 0.25, 0.625};
    frequencies(v, n, 4, f);
    for (int j = 0; j < 4; j++)
        assert_true(fabs(f[j] - expect[j]) < 0.01); /* 4 standard deviations at most 0.0024 */
    assert_true(f[1] == 0);
    free(v);
}

/* Without replacement: every row's samples are distinct, a weight-0
 * category is never drawn, and the first sample follows the
 * distribution. */
static void test_without_replacement(void **state)
{
    (void)state;
    lt_manual_seed(11);
    int64_t rows = 4000;
    double w[5] = {0.5, 0.25, 0.125, 0.125, 0};
    double *all = malloc(sizeof *all * (size_t)(rows * 5));
    for (int64_t r = 0; r < rows; r++)
        memcpy(all + r * 5, w, sizeof w);
    lt_tensor *p = LT_OK_T(lt_test_tensor(all, (int64_t[]){rows, 5}, 2, LT_F64));
    free(all);
    lt_tensor *s = LT_OK_T(lt_multinomial(p, 4, false));
    LT_ASSERT_SHAPE(s, rows, 4);
    int64_t *v = indices_of(s), *first = malloc(sizeof *first * (size_t)rows);
    for (int64_t r = 0; r < rows; r++) {
        bool seen[5] = {false};
        for (int c = 0; c < 4; c++) {
            int64_t x = v[r * 4 + c];
            assert_true(x >= 0 && x < 4); /* the four positive categories */
            assert_false(seen[x]);
            seen[x] = true;
        }
        first[r] = v[r * 4];
    }
    double f[5];
    frequencies(first, rows, 5, f);
    for (int j = 0; j < 5; j++)
        assert_true(fabs(f[j] - w[j]) < 0.035); /* 4 standard deviations at most 0.032 */
    free(v);
    free(first);
}

/* One seed, one result on every device: the same uniform numbers and the
 * same arithmetic on cpu, lazy/interp and lazy/cpu. */
static void test_same_draws_on_every_device(void **state)
{
    (void)state;
    lt_tensor *w = LT_T(LT_F32, LT_DIMS(3, 6), 1, 2, 3, 4, 5, 6, 6, 5, 4, 3, 2, 1, 0, 0, 1, 0, 0, 1);
    int64_t *ref[2] = {NULL, NULL};
    for (int r = 0; r < 2; r++) {
        lt_manual_seed(5);
        ref[r] = indices_of(LT_OK_T(lt_multinomial(w, r ? 2 : 9, r == 0)));
    }
    const char *backends[2] = {"interp", "cpu"};
    for (int b = 0; b < 2; b++) {
        if (!lt_test_use_backend(backends[b]))
            continue;
        lt_tensor *wl = LT_OK_T(lt_to(w, lt_device_parse("lazy")));
        for (int r = 0; r < 2; r++) {
            lt_manual_seed(5);
            lt_tensor *s = LT_OK_T(lt_multinomial(wl, r ? 2 : 9, r == 0));
            int64_t *v = indices_of(s);
            assert_memory_equal(v, ref[r], sizeof *v * (size_t)(r ? 3 * 2 : 3 * 9));
            free(v);
        }
    }
    free(ref[0]);
    free(ref[1]);
}

static void test_bad_input(void **state)
{
    (void)state;
    lt_tensor *ok = LT_T(LT_F32, LT_DIMS(3), 1, 2, 3);
    assert_null(lt_multinomial(NULL, 1, true));
    LT_EXPECT_ERROR(LT_ERR_NULL, "multinomial");
    assert_null(lt_multinomial(ok, 0, true));
    LT_EXPECT_ERROR(LT_ERR_ARGUMENT, "num_samples is 0");
    assert_null(lt_multinomial(ok, 4, false));
    LT_EXPECT_ERROR(LT_ERR_ARGUMENT, "4 samples without replacement from 3 categories");
    assert_null(lt_multinomial(LT_T(LT_F32, LT_DIMS(1, 1, 3), 1, 2, 3), 1, true));
    LT_EXPECT_ERROR(LT_ERR_SHAPE, "expected [K] or [N, K]");
    assert_null(lt_multinomial(LT_T(LT_I64, LT_DIMS(3), 1, 2, 3), 1, true));
    LT_EXPECT_ERROR(LT_ERR_DTYPE, "expected a floating dtype");
    assert_null(lt_multinomial(LT_OK_T(lt_zeros((int64_t[]){2, 0}, 2, LT_F32, lt_test_cpu())), 1, true));
    LT_EXPECT_ERROR(LT_ERR_SHAPE, "no category");
    assert_null(lt_multinomial(LT_T(LT_F32, LT_DIMS(3), 1, -2, 3), 1, true));
    LT_EXPECT_ERROR(LT_ERR_ARGUMENT, "probability [0, 1] is -2");
    assert_null(lt_multinomial(LT_T(LT_F32, LT_DIMS(3), 1, NAN, 3), 1, true));
    LT_EXPECT_ERROR(LT_ERR_ARGUMENT, "probability [0, 1] is nan");
    assert_null(lt_multinomial(LT_T(LT_F32, LT_DIMS(3), 1, INFINITY, 3), 1, true));
    LT_EXPECT_ERROR(LT_ERR_ARGUMENT, "expected a finite value >= 0");
    assert_null(lt_multinomial(LT_T(LT_F32, LT_DIMS(2, 3), 1, 2, 3, 0, 0, 0), 1, true));
    LT_EXPECT_ERROR(LT_ERR_ARGUMENT, "row 1 has 0 categories of positive probability");
    assert_null(lt_multinomial(LT_T(LT_F32, LT_DIMS(3), 1, 0, 3), 3, false));
    LT_EXPECT_ERROR(LT_ERR_ARGUMENT, "expected at least 3");
    /* an empty batch is fine */
    lt_tensor *none = LT_OK_T(lt_multinomial(LT_OK_T(lt_zeros((int64_t[]){0, 3}, 2, LT_F32, lt_test_cpu())), 2, true));
    LT_ASSERT_SHAPE(none, 0, 2);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        LT_TEST(test_frequencies_with_replacement),
        LT_TEST(test_without_replacement),
        LT_TEST(test_same_draws_on_every_device),
        LT_TEST(test_bad_input),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
