/*
 * test_sgemm.c - the f32 matrix product (src/eager/sgemm.c) against a
 * double-precision reference, with the library that LT_GEMM names.
 *
 * CTest runs this program twice, with LT_GEMM=openblas and LT_GEMM=onednn,
 * so both libraries are checked on every machine whichever one the CPU
 * would pick. Shapes cover every transpose combination, sizes of 0 and 1,
 * leading dimensions wider than the matrix, accumulation (beta 1), a
 * product large enough for matmul to split it over the pool's threads, and
 * the same bits whatever the thread count.
 */
#include "lt_test.h"

#include "eager/nn_kernels.h"

/* Fills n floats with a fixed pseudo-random pattern in [-1, 1). */
static void fill(float *p, int64_t n, uint32_t seed)
{
    uint32_t s = seed * 2654435761u + 1;
    for (int64_t i = 0; i < n; i++) {
        s = s * 1664525u + 1013904223u;
        p[i] = (float)((s >> 8) & 0xffff) / 32768.0f - 1.0f;
    }
}

/* Element (i, j) of op(M), M row-major with leading dimension ld. */
static double at(const float *m, bool trans, int64_t ld, int64_t i, int64_t j)
{
    return trans ? m[j * ld + i] : m[i * ld + j];
}

/* C = alpha op(A) op(B) + beta C, checked element by element against the
 * double reference within the bound of an f32 sum of k products. */
static void check_case(bool ta, bool tb, int64_t m, int64_t n, int64_t k, int64_t pad, float beta)
{
    int64_t lda = (ta ? m : k) + pad, ldb = (tb ? k : n) + pad, ldc = n + pad;
    int64_t arows = ta ? k : m, brows = tb ? n : k;
    float *a = malloc(sizeof(float) * (size_t)(arows * lda + 1));
    float *b = malloc(sizeof(float) * (size_t)(brows * ldb + 1));
    float *c = malloc(sizeof(float) * (size_t)(m * ldc + 1));
    float *c0 = malloc(sizeof(float) * (size_t)(m * ldc + 1));
    assert_non_null(a);
    assert_non_null(b);
    assert_non_null(c);
    assert_non_null(c0);
    fill(a, arows * lda, 1);
    fill(b, brows * ldb, 2);
    fill(c0, m * ldc, 3);
    memcpy(c, c0, sizeof(float) * (size_t)(m * ldc));
    const float alpha = 0.75f;
    lt_sgemm(ta, tb, m, n, k, alpha, a, lda < 1 ? 1 : lda, b, ldb < 1 ? 1 : ldb, beta, c, ldc < 1 ? 1 : ldc);
    for (int64_t i = 0; i < m; i++) {
        for (int64_t j = 0; j < n; j++) {
            double sum = 0, mag = 0;
            for (int64_t p = 0; p < k; p++) {
                double t = at(a, ta, lda, i, p) * at(b, tb, ldb, p, j);
                sum += t;
                mag += fabs(t);
            }
            double want = alpha * sum + beta * c0[i * ldc + j];
            double bound = 4.0 * (double)(k + 2) * 6e-8 * (alpha * mag + fabs(beta * c0[i * ldc + j])) + 1e-30;
            if (fabs(c[i * ldc + j] - want) > bound)
                fail_msg("%s %c%c %lldx%lldx%lld pad %lld beta %g: C[%lld, %lld] = %.9g, want %.9g", lt_sgemm_library(),
                         ta ? 'T' : 'N', tb ? 'T' : 'N', (long long)m, (long long)n, (long long)k, (long long)pad,
                         (double)beta, (long long)i, (long long)j, (double)c[i * ldc + j], want);
        }
        /* the padding columns of C are never written */
        for (int64_t j = n; j < ldc; j++)
            assert_true(c[i * ldc + j] == c0[i * ldc + j]);
    }
    free(a);
    free(b);
    free(c);
    free(c0);
}

static void test_library_is_the_one_asked_for(void **state)
{
    (void)state;
    const char *env = getenv("LT_GEMM");
    if (env && (strcmp(env, "openblas") == 0 || strcmp(env, "onednn") == 0))
        assert_string_equal(lt_sgemm_library(), env);
    else
        assert_true(strcmp(lt_sgemm_library(), "openblas") == 0 || strcmp(lt_sgemm_library(), "onednn") == 0);
}

static void test_every_transpose_and_edge_size(void **state)
{
    (void)state;
    const int64_t sizes[][3] = {{1, 1, 1}, {3, 5, 7}, {17, 33, 9}, {64, 10, 128}, {10, 512, 128}, {0, 4, 3},
                                {4, 0, 3}, {4, 3, 0}, {1, 96, 1}, {37, 1, 61}};
    for (size_t s = 0; s < sizeof sizes / sizeof sizes[0]; s++)
        for (int t = 0; t < 4; t++)
            for (int pad = 0; pad <= 3; pad += 3) {
                check_case(t & 1, t & 2, sizes[s][0], sizes[s][1], sizes[s][2], pad, 0.0f);
                check_case(t & 1, t & 2, sizes[s][0], sizes[s][1], sizes[s][2], pad, 1.0f);
            }
}

/* Through matmul, big enough to be split over the pool, and the same bits
 * as the same product run whole. */
static void test_matmul_split_matches_reference(void **state)
{
    (void)state;
    const int64_t m = 300, k = 257, n = 520;
    float *a = malloc(sizeof(float) * (size_t)(m * k)), *b = malloc(sizeof(float) * (size_t)(k * n));
    float *c = malloc(sizeof(float) * (size_t)(m * n));
    assert_non_null(a);
    assert_non_null(b);
    assert_non_null(c);
    fill(a, m * k, 4);
    fill(b, k * n, 5);
    int64_t sa[2] = {m, k}, sb[2] = {k, n};
    lt_tensor *ta = LT_OK_T(lt_from_data(a, sa, 2, LT_F32, lt_test_cpu()));
    lt_tensor *tb = LT_OK_T(lt_from_data(b, sb, 2, LT_F32, lt_test_cpu()));
    lt_tensor *tc = LT_OK_T(lt_matmul(ta, tb));
    assert_int_equal(lt_copy_to_host(tc, c, sizeof(float) * (size_t)(m * n)), LT_OK);
    for (int64_t i = 0; i < m; i += 7)
        for (int64_t j = 0; j < n; j += 5) {
            double sum = 0, mag = 0;
            for (int64_t p = 0; p < k; p++) {
                sum += (double)a[i * k + p] * b[p * n + j];
                mag += fabs((double)a[i * k + p] * b[p * n + j]);
            }
            assert_true(fabs(c[i * n + j] - sum) <= 4.0 * (double)(k + 2) * 6e-8 * mag);
        }
    free(a);
    free(b);
    free(c);
}

/* The same bits with 1, 2, 3 and 5 threads: matmul splits products into
 * blocks per thread with oneDNN (matmul.c, max_gemm_blocks) and by shape
 * only with OpenBLAS. Shapes split by rows and by columns, with odd sizes. */
static void test_matmul_bits_do_not_depend_on_threads(void **state)
{
    (void)state;
    const int64_t shapes[][3] = {{300, 257, 520}, {2048, 256, 64}, {129, 1000, 33}, {64, 96, 3000}, {1031, 77, 129}};
    int before = lt_get_num_threads();
    for (size_t s = 0; s < sizeof shapes / sizeof shapes[0]; s++) {
        int64_t m = shapes[s][0], k = shapes[s][1], n = shapes[s][2];
        float *a = malloc(sizeof(float) * (size_t)(m * k)), *b = malloc(sizeof(float) * (size_t)(k * n));
        float *first = malloc(sizeof(float) * (size_t)(m * n)), *c = malloc(sizeof(float) * (size_t)(m * n));
        assert_non_null(a);
        assert_non_null(b);
        assert_non_null(first);
        assert_non_null(c);
        fill(a, m * k, 6);
        fill(b, k * n, 7);
        lt_scope_begin();
        lt_tensor *ta = LT_OK_T(lt_from_data(a, (int64_t[]){m, k}, 2, LT_F32, lt_test_cpu()));
        lt_tensor *tb = LT_OK_T(lt_from_data(b, (int64_t[]){k, n}, 2, LT_F32, lt_test_cpu()));
        const int threads[] = {1, 2, 3, 5};
        for (int t = 0; t < 4; t++) {
            lt_set_num_threads(threads[t]);
            lt_tensor *tc = LT_OK_T(lt_matmul(ta, tb));
            assert_int_equal(lt_copy_to_host(tc, t == 0 ? first : c, sizeof(float) * (size_t)(m * n)), LT_OK);
            if (t > 0 && memcmp(first, c, sizeof(float) * (size_t)(m * n)) != 0)
                fail_msg("%s: %lldx%lldx%lld differs between 1 and %d threads", lt_sgemm_library(), (long long)m,
                         (long long)k, (long long)n, threads[t]);
        }
        lt_scope_end();
        free(a);
        free(b);
        free(first);
        free(c);
    }
    lt_set_num_threads(before);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        LT_TEST(test_library_is_the_one_asked_for),
        LT_TEST(test_every_transpose_and_edge_size),
        LT_TEST(test_matmul_split_matches_reference),
        LT_TEST(test_matmul_bits_do_not_depend_on_threads),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
