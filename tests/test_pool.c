/* test_pool.c - the library's worker pool (src/core/pool.h): every index
 * is visited exactly once, chunk boundaries follow the documented rule and
 * do not depend on the thread count, nested and concurrent loops run
 * inline and finish, the thread count can be set and restored, and the
 * results of eager kernels and compiled programs are the same bits with 1,
 * 2 and 4 threads. */
#include "lt_test.h"

#include "core/pool.h"

#include <pthread.h>

/* ---- visiting every index once ------------------------------------------- */

typedef struct visit {
    atomic_int *hits;   /* per index */
    int64_t *chunk_of;  /* per index: the chunk that visited it */
    int64_t align;
    atomic_int bad_chunks; /* chunks whose start is not a multiple of align */
} visit;

static void mark(void *ctx, int64_t begin, int64_t end, int64_t chunk)
{
    visit *v = ctx;
    if (v->align > 1 && begin % v->align != 0)
        atomic_fetch_add(&v->bad_chunks, 1);
    for (int64_t i = begin; i < end; i++) {
        atomic_fetch_add(&v->hits[i], 1);
        v->chunk_of[i] = chunk;
    }
}

static void check_cover(int64_t n, int64_t grain, int64_t align)
{
    visit v = {calloc((size_t)n + 1, sizeof(atomic_int)), calloc((size_t)n + 1, sizeof(int64_t)), align, 0};
    assert_non_null(v.hits);
    lt_parallel_for(n, grain, align, mark, &v);
    int64_t chunks = lt_parallel_chunks(n, grain, align);
    for (int64_t i = 0; i < n; i++) {
        if (atomic_load(&v.hits[i]) != 1) {
            print_error("n=%lld grain=%lld align=%lld: index %lld visited %d times\n", (long long)n,
                        (long long)grain, (long long)align, (long long)i, atomic_load(&v.hits[i]));
            fail();
        }
        assert_true(v.chunk_of[i] >= 0 && v.chunk_of[i] < chunks);
        if (i > 0)
            assert_true(v.chunk_of[i] >= v.chunk_of[i - 1]); /* chunks are ordered ranges */
    }
    assert_int_equal(atomic_load(&v.bad_chunks), 0);
    assert_true(chunks <= 64);
    assert_true(n == 0 ? chunks == 0 : chunks >= 1);
    free(v.hits);
    free(v.chunk_of);
}

static void test_every_index_once(void **state)
{
    (void)state;
    const int64_t sizes[] = {0, 1, 2, 7, 64, 65, 1000, 4097, 100003};
    const int64_t grains[] = {1, 3, 16, 1000, 1 << 20};
    const int64_t aligns[] = {1, 16};
    for (int t = 1; t <= 4; t *= 2) {
        lt_set_num_threads(t);
        for (size_t a = 0; a < sizeof sizes / sizeof *sizes; a++)
            for (size_t g = 0; g < sizeof grains / sizeof *grains; g++)
                for (size_t l = 0; l < sizeof aligns / sizeof *aligns; l++)
                    check_cover(sizes[a], grains[g], aligns[l]);
    }
    lt_set_num_threads(0);
}

/* The documented chunk rule: n / grain chunks, at least 1 and at most 64,
 * whatever the thread count. */
static void test_chunk_count_rule(void **state)
{
    (void)state;
    for (int t = 1; t <= 8; t *= 2) {
        lt_set_num_threads(t);
        assert_int_equal(lt_parallel_chunks(0, 1, 1), 0);
        assert_int_equal(lt_parallel_chunks(10, 100, 1), 1);
        assert_int_equal(lt_parallel_chunks(10, 1, 1), 10);
        assert_int_equal(lt_parallel_chunks(1000, 100, 1), 10);
        assert_int_equal(lt_parallel_chunks(1000000, 1, 1), 64);
        assert_int_equal(lt_parallel_chunks(100, 0, 1), 50); /* grain < 1 counts as 1: 64 chunks of 2 are 50 */
        assert_int_equal(lt_parallel_chunks(1000, 10, 64), 16); /* chunks of 64 */
    }
    lt_set_num_threads(0);
}

/* ---- nesting and concurrency ---------------------------------------------------- */

typedef struct nest {
    atomic_llong total;
} nest;

static void inner_add(void *ctx, int64_t begin, int64_t end, int64_t chunk)
{
    (void)chunk;
    nest *s = ctx;
    for (int64_t i = begin; i < end; i++)
        atomic_fetch_add(&s->total, i);
}

static void outer_nested(void *ctx, int64_t begin, int64_t end, int64_t chunk)
{
    (void)chunk;
    for (int64_t i = begin; i < end; i++)
        lt_parallel_for(1000, 10, 1, inner_add, ctx); /* inside a loop: runs inline */
}

static void test_nested_loops_finish(void **state)
{
    (void)state;
    lt_set_num_threads(2);
    nest s = {0};
    lt_parallel_for(64, 1, 1, outer_nested, &s);
    assert_int_equal(atomic_load(&s.total), 64LL * (999LL * 1000 / 2));
    lt_set_num_threads(0);
}

static void *concurrent_caller(void *arg)
{
    for (int r = 0; r < 50; r++)
        lt_parallel_for(10000, 100, 1, inner_add, arg);
    return NULL;
}

/* Two threads call the pool at once: one gets it, the other runs inline;
 * both finish with every index added. */
static void test_concurrent_callers(void **state)
{
    (void)state;
    lt_set_num_threads(2);
    nest s = {0};
    pthread_t th[3];
    for (int i = 0; i < 3; i++)
        assert_int_equal(pthread_create(&th[i], NULL, concurrent_caller, &s), 0);
    for (int i = 0; i < 3; i++)
        assert_int_equal(pthread_join(th[i], NULL), 0);
    assert_int_equal(atomic_load(&s.total), 3LL * 50 * (9999LL * 10000 / 2));
    lt_set_num_threads(0);
}

static void test_thread_count_setting(void **state)
{
    (void)state;
    int initial = lt_get_num_threads();
    assert_true(initial >= 1);
    lt_set_num_threads(3);
    assert_int_equal(lt_get_num_threads(), 3);
    lt_set_num_threads(1);
    assert_int_equal(lt_get_num_threads(), 1);
    check_cover(5000, 10, 1); /* one thread: everything inline */
    lt_set_num_threads(-5);
    assert_int_equal(lt_get_num_threads(), initial);
    lt_set_num_threads(100000); /* capped */
    assert_true(lt_get_num_threads() >= 1 && lt_get_num_threads() <= 256);
    /* more threads than CPUs still work (not 256: starting that many under
     * the sanitizers on a loaded machine is slow) */
    lt_set_num_threads(8);
    check_cover(5000, 10, 1);
    lt_set_num_threads(0);
    assert_int_equal(lt_get_num_threads(), initial);
}

/* Growing the pool and shrinking it again at once: the workers just
 * started may not have run yet when they are told to stop, and must stop
 * all the same (they once slept forever, and the shrinking loop with
 * them). */
static void test_shrink_right_after_growing(void **state)
{
    (void)state;
    for (int round = 0; round < 200; round++) {
        lt_set_num_threads(6);
        check_cover(1000, 10, 1);
        lt_set_num_threads(2);
        check_cover(1000, 10, 1);
    }
    lt_set_num_threads(0);
}

/* ---- results independent of the thread count ------------------------------------ */

/* A large sum, a softmax, a matmul and a fused compiled kernel on dev:
 * their values as doubles (caller frees). */
static double *workload(lt_device dev, int64_t *n)
{
    lt_scope_begin();
    lt_manual_seed(7);
    lt_tensor *x = lt_to(lt_randn((int64_t[]){512, 384}, 2, LT_F32, lt_device_cpu()), dev);
    lt_tensor *w = lt_to(lt_randn((int64_t[]){384, 256}, 2, LT_F32, lt_device_cpu()), dev);
    lt_tensor *h = lt_relu(lt_add_scalar(lt_matmul(x, w), 0.25));
    lt_tensor *parts[4] = {
        lt_reshape(lt_sum(h, NULL, 0, true), (int64_t[]){1}, 1),
        lt_reshape(lt_sum(h, (int[]){0}, 1, false), (int64_t[]){-1}, 1),
        lt_reshape(lt_softmax(h, 1), (int64_t[]){-1}, 1),
        lt_reshape(lt_mean(lt_mul(x, x), (int[]){1}, 1, false), (int64_t[]){-1}, 1),
    };
    /* a convolution: its products are split in column blocks that the
     * pool's threads hand to BLAS at the same time */
    lt_tensor *img = lt_to(lt_randn((int64_t[]){8, 16, 20, 20}, 4, LT_F32, lt_device_cpu()), dev);
    lt_tensor *ker = lt_to(lt_randn((int64_t[]){48, 16, 3, 3}, 4, LT_F32, lt_device_cpu()), dev);
    lt_tensor *conv = lt_reshape(lt_conv2d(img, ker, NULL, NULL, NULL, NULL, 1), (int64_t[]){-1}, 1);
    lt_tensor *with_conv[2] = {lt_cat(parts, 4, 0), conv};
    lt_tensor *all = lt_cat(with_conv, 2, 0);
    if (dev.kind == LT_DEVICE_LAZY)
        assert_int_equal(lt_mark_step(), LT_OK);
    double *v = lt_test_values(LT_OK_T(all));
    *n = lt_tensor_numel(all);
    lt_scope_end();
    return v;
}

static void same_bits_across_thread_counts(lt_device dev)
{
    int64_t n1 = 0, n = 0;
    lt_set_num_threads(1);
    double *ref = workload(dev, &n1);
    /* 2 threads three times: a race shows as a difference between runs */
    const int threads[] = {2, 2, 2, 4};
    for (int r = 0; r < 4; r++) {
        int t = threads[r];
        lt_set_num_threads(t);
        double *v = workload(dev, &n);
        assert_int_equal(n, n1);
        for (int64_t i = 0; i < n; i++) {
            if (memcmp(&v[i], &ref[i], sizeof(double)) != 0) {
                print_error("%d threads: element %lld is %.17g, with 1 thread %.17g\n", t, (long long)i, v[i],
                            ref[i]);
                fail();
            }
        }
        free(v);
    }
    free(ref);
    lt_set_num_threads(0);
}

static void test_eager_results_same_bits(void **state)
{
    (void)state;
    same_bits_across_thread_counts(lt_device_cpu());
}

static void test_compiled_results_same_bits(void **state)
{
    (void)state;
    if (lt_lazy_set_backend("cpu") != LT_OK) {
        print_message("cpu backend unavailable (%s): skipped\n", lt_last_error());
        lt_clear_error();
        skip();
    }
    same_bits_across_thread_counts(lt_device_parse("lazy"));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        LT_TEST(test_every_index_once),
        LT_TEST(test_chunk_count_rule),
        LT_TEST(test_nested_loops_finish),
        LT_TEST(test_concurrent_callers),
        LT_TEST(test_thread_count_setting),
        LT_TEST(test_shrink_right_after_growing),
        LT_TEST(test_eager_results_same_bits),
        LT_TEST(test_compiled_results_same_bits),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
