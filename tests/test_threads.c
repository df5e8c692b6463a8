/* test_threads.c - the thread rules of the public header (THREADS, under
 * Devices): the cpu device works from several threads at once; the lazy
 * device belongs to one thread at a time, refuses every other thread with
 * LT_ERR_STATE (changing nothing), and is handed over by
 * lt_lazy_release_thread() or by the owner's exit.
 *
 * This program is also meant to be built by hand with -fsanitize=thread
 * (see the command in docs/architecture.md, "Threads"). */
#include "lt_test.h"

#include <pthread.h>
#include <unistd.h>

#define WORKERS 4

static lt_device lazy_dev(void) { return lt_device_parse("lazy"); }

/* Asserts from a worker thread: cmocka's assertions are not thread-safe,
 * so workers count failures and the main thread checks the count. */
static atomic_int worker_failures;
#define CHECK(cond)                                                                            \
    do {                                                                                       \
        if (!(cond)) {                                                                         \
            fprintf(stderr, "%s:%d: check failed: %s (%s)\n", __FILE__, __LINE__, #cond, lt_last_error()); \
            atomic_fetch_add(&worker_failures, 1);                                             \
        }                                                                                      \
    } while (0)

static bool refused(void)
{
    bool ok = lt_last_status() == LT_ERR_STATE && strstr(lt_last_error(), "the lazy device is in use by thread");
    lt_clear_error();
    return ok;
}

/* sum(0..n-1) * scale, computed on dev, read back. */
static double arange_sum(lt_device dev, int64_t n, double scale)
{
    double v = NAN;
    lt_scope_begin();
    lt_tensor *s = lt_sum(lt_mul_scalar(lt_arange(0, (double)n, 1, LT_F64, dev), scale), NULL, 0, false);
    if (!s || lt_item(s, &v) != LT_OK)
        v = NAN;
    lt_scope_end();
    return v;
}

static void run_workers(void *(*fn)(void *), void *arg)
{
    pthread_t th[WORKERS];
    for (int i = 0; i < WORKERS; i++)
        assert_int_equal(pthread_create(&th[i], NULL, fn, arg), 0);
    for (int i = 0; i < WORKERS; i++)
        assert_int_equal(pthread_join(th[i], NULL), 0);
}

/* ---- the cpu device from several threads ------------------------------- */

static void *cpu_worker(void *arg)
{
    lt_tensor *shared = arg; /* read by every thread at once */
    for (int k = 0; k < 50; k++) {
        lt_scope_begin();
        lt_tensor *x = lt_arange(0, 64, 1, LT_F32, lt_device_cpu());
        lt_tensor *y = lt_add(lt_view(x, LT_DIMS(8, 8)), shared);
        lt_tensor *m = lt_matmul(y, lt_transpose(y, 0, 1));
        double s = 0;
        CHECK(m && lt_item(lt_sum(m, NULL, 0, false), &s) == LT_OK);
        /* sum_ij (y y^T)_ij = sum_k (sum_i y_ik)^2 with y_ik = 8i + k + 1 */
        double want = 0;
        for (int kk = 0; kk < 8; kk++) {
            double col = 0;
            for (int i = 0; i < 8; i++)
                col += 8 * i + kk + 1;
            want += col * col;
        }
        CHECK(s == want);
        /* errors are per thread */
        CHECK(lt_view(x, LT_DIMS(7)) == NULL && lt_last_status() == LT_ERR_SHAPE);
        lt_clear_error();
        CHECK(lt_last_status() == LT_OK);
        lt_scope_end();
    }
    return NULL;
}

static void test_cpu_device_from_threads(void **state)
{
    (void)state;
    atomic_store(&worker_failures, 0);
    lt_tensor *shared = LT_OK_T(lt_ones(LT_DIMS(8, 8), LT_F32, lt_device_cpu()));
    run_workers(cpu_worker, shared);
    assert_int_equal(atomic_load(&worker_failures), 0);
}

/* ---- the lazy device refuses a second thread --------------------------- */

static void *refused_worker(void *arg)
{
    lt_tensor *owned = arg; /* a lazy tensor of the owning thread */
    int refcount = lt_tensor_refcount(owned);
    for (int k = 0; k < 20; k++) {
        CHECK(lt_full(LT_DIMS(2), 1.0, LT_F32, lazy_dev()) == NULL && refused());
        CHECK(lt_add_scalar(owned, 1) == NULL && refused());
        CHECK(lt_mul_scalar_(owned, 2) == NULL && refused());
        CHECK(lt_neg(owned) == NULL && refused());
        double v;
        CHECK(lt_item(lt_select(owned, 0, 0), &v) != LT_OK);
        lt_clear_error();
        CHECK(lt_copy_to_host(owned, (float[4]){0}, sizeof(float[4])) == LT_ERR_STATE && refused());
        CHECK(lt_to(owned, lt_device_cpu()) == NULL && refused());
        lt_tensor *c = lt_ones(LT_DIMS(2), LT_F32, lt_device_cpu());
        CHECK(lt_to(c, lazy_dev()) == NULL && refused());
        lt_release(c);
        CHECK(lt_mark_step() == LT_ERR_STATE && refused());
        CHECK(lt_barrier(false) == LT_ERR_STATE && refused());
        CHECK(lt_lazy_release_thread() == LT_ERR_STATE);
        lt_clear_error();
        /* releasing the owner's tensor is refused too: it stays alive */
        lt_release(owned);
        CHECK(refused());
        CHECK(lt_tensor_refcount(owned) == refcount);
        /* metadata works from any thread */
        CHECK(lt_tensor_ndim(owned) == 1 && lt_tensor_shape(owned)[0] == 4);
        /* and the cpu device as usual */
        CHECK(arange_sum(lt_device_cpu(), 10, 1.0) == 45.0);
    }
    return NULL;
}

static void test_lazy_refuses_other_threads(void **state)
{
    (void)state;
    atomic_store(&worker_failures, 0);
    lt_tensor *x = LT_OK_T(lt_full(LT_DIMS(4), 1.0, LT_F32, lazy_dev()));
    assert_non_null(lt_add_scalar_(x, 1)); /* a pending value while the workers run */
    pthread_t th[WORKERS];
    for (int i = 0; i < WORKERS; i++)
        assert_int_equal(pthread_create(&th[i], NULL, refused_worker, x), 0);
    /* the owner keeps working meanwhile */
    for (int k = 0; k < 20; k++) {
        assert_non_null(lt_add_scalar_(x, 1));
        assert_int_equal(lt_mark_step(), LT_OK);
    }
    for (int i = 0; i < WORKERS; i++)
        assert_int_equal(pthread_join(th[i], NULL), 0);
    assert_int_equal(atomic_load(&worker_failures), 0);
    LT_ASSERT_VALUES(x, 0, 22, 22, 22, 22);
}

/* ---- handing the lazy device over --------------------------------------- */

typedef struct handover {
    lt_tensor *x;
    pthread_mutex_t lock;
    pthread_cond_t cond;
    int stage; /* 1: the worker owns the device; 2: the main thread checked */
    bool release_explicitly;
} handover;

static void set_stage(handover *h, int stage)
{
    pthread_mutex_lock(&h->lock);
    h->stage = stage;
    pthread_cond_broadcast(&h->cond);
    pthread_mutex_unlock(&h->lock);
}

static void wait_stage(handover *h, int stage)
{
    pthread_mutex_lock(&h->lock);
    while (h->stage < stage)
        pthread_cond_wait(&h->cond, &h->lock);
    pthread_mutex_unlock(&h->lock);
}

static void *handover_worker(void *arg)
{
    handover *h = arg;
    CHECK(lt_mul_scalar_(h->x, 3) == h->x); /* takes the device */
    set_stage(h, 1);
    wait_stage(h, 2);
    double v = 0;
    lt_scope_begin();
    CHECK(lt_item(lt_select(h->x, 0, 1), &v) == LT_OK && v == 6.0);
    CHECK(lt_scope_end() == LT_OK);
    CHECK(arange_sum(lazy_dev(), 5, 2.0) == 20.0);
    CHECK(lt_barrier(false) == LT_OK);
    if (h->release_explicitly)
        CHECK(lt_lazy_release_thread() == LT_OK);
    return NULL; /* otherwise the device goes back when this thread exits */
}

static void test_lazy_hand_over(void **state)
{
    (void)state;
    for (int explicitly = 0; explicitly < 2; explicitly++) {
        atomic_store(&worker_failures, 0);
        handover h = {.stage = 0, .release_explicitly = explicitly};
        pthread_mutex_init(&h.lock, NULL);
        pthread_cond_init(&h.cond, NULL);
        h.x = LT_OK_T(lt_full(LT_DIMS(3), 2.0, LT_F32, lazy_dev()));
        assert_int_equal(lt_barrier(false), LT_OK); /* in flight while handing over */
        assert_int_equal(lt_lazy_release_thread(), LT_OK);
        assert_int_equal(lt_lazy_release_thread(), LT_OK); /* nobody owns it: nothing to do */
        pthread_t th;
        assert_int_equal(pthread_create(&th, NULL, handover_worker, &h), 0);
        wait_stage(&h, 1);
        float got[3];
        assert_int_equal(lt_copy_to_host(h.x, got, sizeof got), LT_ERR_STATE);
        assert_true(refused());
        assert_int_equal(lt_lazy_release_thread(), LT_ERR_STATE);
        LT_EXPECT_ERROR(LT_ERR_STATE, "lazy_release_thread: the lazy device is owned by thread");
        set_stage(&h, 2);
        assert_int_equal(pthread_join(th, NULL), 0);
        assert_int_equal(atomic_load(&worker_failures), 0);
        /* the main thread takes it back */
        LT_ASSERT_VALUES(h.x, 0, 6, 6, 6);
        pthread_mutex_destroy(&h.lock);
        pthread_cond_destroy(&h.cond);
    }
}

/* A scope ended on a thread that does not own the device keeps its lazy
 * tensors (and says so); ended after the device comes back, it frees them. */
static void *owner_for_a_while(void *arg)
{
    handover *h = arg;
    lt_tensor *t = lt_full(LT_DIMS(2), 1.0, LT_F32, lazy_dev());
    CHECK(t != NULL);
    set_stage(h, 1);
    wait_stage(h, 2);
    lt_release(t);
    CHECK(lt_last_status() == LT_OK);
    return NULL;
}

static void test_scope_end_on_other_thread(void **state)
{
    (void)state;
    atomic_store(&worker_failures, 0);
    handover h = {.stage = 0};
    pthread_mutex_init(&h.lock, NULL);
    pthread_cond_init(&h.cond, NULL);
    lt_scope_begin();
    lt_tensor *mine = LT_OK_T(lt_full(LT_DIMS(2), 5.0, LT_F32, lazy_dev()));
    (void)lt_retain(mine);
    assert_int_equal(lt_lazy_release_thread(), LT_OK);
    pthread_t th;
    assert_int_equal(pthread_create(&th, NULL, owner_for_a_while, &h), 0);
    wait_stage(&h, 1);
    assert_int_equal(lt_scope_end(), LT_ERR_STATE);
    LT_EXPECT_ERROR(LT_ERR_STATE, "scope_end: 1 tensors of this scope were not released");
    assert_int_equal(lt_tensor_refcount(mine), 2);
    set_stage(&h, 2);
    assert_int_equal(pthread_join(th, NULL), 0);
    assert_int_equal(atomic_load(&worker_failures), 0);
    lt_release(mine);
    lt_release(mine);
    assert_int_equal(lt_last_status(), LT_OK);
    pthread_mutex_destroy(&h.lock);
    pthread_cond_destroy(&h.cond);
}

/* ---- contention: every thread tries to take the device ------------------ */

#define SESSIONS 5
static atomic_int sessions, refusals;

/* Runs SESSIONS sessions on the lazy device, each as its owner, retrying
 * while another thread owns it. */
static void *contender(void *arg)
{
    (void)arg;
    int done = 0;
    for (int attempt = 0; done < SESSIONS && attempt < 20000; attempt++) {
        lt_scope_begin();
        lt_tensor *t = lt_full(LT_DIMS(8), 1.0, LT_F32, lazy_dev());
        if (!t) {
            CHECK(refused());
            atomic_fetch_add(&refusals, 1);
            lt_scope_end();
            usleep(200);
            continue;
        }
        /* this thread owns the device for the whole session */
        lt_tensor *v = lt_narrow(t, 0, 2, 4);
        CHECK(lt_add_scalar_(v, 4) == v);
        double s = 0;
        CHECK(lt_item(lt_sum(t, NULL, 0, false), &s) == LT_OK && s == 24.0);
        CHECK(lt_mark_step() == LT_OK);
        CHECK(lt_scope_end() == LT_OK);
        CHECK(lt_lazy_release_thread() == LT_OK);
        atomic_fetch_add(&sessions, 1);
        done++;
        usleep(200); /* let the others in */
    }
    CHECK(done == SESSIONS);
    return NULL;
}

static void test_lazy_contention(void **state)
{
    (void)state;
    atomic_store(&worker_failures, 0);
    atomic_store(&sessions, 0);
    atomic_store(&refusals, 0);
    assert_int_equal(lt_lazy_release_thread(), LT_OK);
    run_workers(contender, NULL);
    assert_int_equal(atomic_load(&worker_failures), 0);
    assert_int_equal(atomic_load(&sessions), WORKERS * SESSIONS);
    print_message("%d sessions, %d refusals\n", atomic_load(&sessions), atomic_load(&refusals));
    /* the device is free again */
    assert_true(arange_sum(lazy_dev(), 4, 1.0) == 6.0);
}

/* The lazy backend of the current run: interp, then cpu (compiled C). */
static const char *backend_name;

static int use_backend(void **state)
{
    (void)state;
    print_message("lazy backend: %s\n", backend_name);
    return lt_lazy_set_backend(backend_name) == LT_OK ? 0 : -1;
}

int main(void)
{
    /* compiled programs go to a private cache, never to ~/.cache */
    char dir[] = "/tmp/lt_threads_cache_XXXXXX";
    if (!mkdtemp(dir))
        return 1;
    setenv("LT_CACHE_DIR", dir, 1);
    const struct CMUnitTest tests[] = {
        LT_TEST(test_cpu_device_from_threads),   LT_TEST(test_lazy_refuses_other_threads),
        LT_TEST(test_lazy_hand_over),            LT_TEST(test_scope_end_on_other_thread),
        LT_TEST(test_lazy_contention),
    };
    backend_name = "interp";
    int failed = cmocka_run_group_tests(tests, use_backend, NULL);
    backend_name = "cpu";
    if (lt_lazy_set_backend("cpu") == LT_OK)
        failed += cmocka_run_group_tests(tests, use_backend, NULL);
    else
        print_message("cpu backend unavailable (%s): its run is skipped\n", lt_last_error());
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    if (system(cmd) != 0)
        fprintf(stderr, "could not remove %s\n", dir);
    return failed;
}
