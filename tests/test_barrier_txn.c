/* test_barrier_txn.c - a barrier whose program fails at run time (an index
 * out of range in a pending tensor) is a transaction: every tensor keeps
 * the state it had before the barrier, nothing is applied twice and no
 * donated buffer is reused; the message names the public function that
 * recorded the failing op; lt_lazy_discard drops the failing computation so
 * that the next step works. Every case runs with the synchronous and the
 * asynchronous barrier, on both backends (interp and cpu). */
#include "lt_test.h"

#include <pthread.h>
#include <unistd.h>

static lt_device lazy(void) { return lt_device_parse("lazy"); }

static lt_tensor *lazy_f32(const double *v, int64_t n)
{
    lt_tensor *c = LT_OK_T(lt_test_tensor(v, &n, 1, LT_F32));
    return LT_OK_T(lt_to(c, lazy()));
}

/* A pending tensor whose program fails when it runs: gather index 5 from a
 * tensor of 3 elements. */
static lt_tensor *failing_gather(void)
{
    lt_tensor *src = lazy_f32((const double[]){1, 2, 3}, 3);
    lt_tensor *idx = LT_OK_T(lt_to(LT_T(LT_I64, LT_DIMS(2), 0, 5), lazy()));
    return LT_OK_T(lt_gather(src, 0, idx));
}

/* The step barrier over a graph that fails. Synchronous: lt_mark_step
 * reports it. Asynchronous: lt_barrier(false) returns at once and the
 * failure is reported by the next access, which the caller makes. */
static void run_failing_step(bool async)
{
    if (async) {
        assert_int_equal(lt_barrier(false), LT_OK);
        return;
    }
    assert_int_equal(lt_mark_step(), LT_ERR_INDEX);
    /* lt_gather was called directly: the op is the public function */
    assert_true(strncmp(lt_last_error(), "gather: index 5 is out of range", 31) == 0);
    LT_EXPECT_ERROR(LT_ERR_INDEX, "(while running the lazy step forced by lt_mark_step)");
}

/* Reads t (a barrier of its own); after an asynchronous failure the first
 * access reports the failure, with every tensor intact. */
static void read_after_failure(lt_tensor *t, bool async, const double *expected, int64_t n)
{
    if (async) {
        char host[64];
        size_t nbytes = (size_t)lt_tensor_numel(t) * lt_dtype_size(lt_tensor_dtype(t));
        assert_int_equal(lt_copy_to_host(t, host, nbytes), LT_ERR_INDEX);
        LT_EXPECT_ERROR(LT_ERR_INDEX, "(while running the lazy step forced by lt_barrier)");
    }
    LT_ASSERT_ARRAY(t, expected, n, 0);
    LT_ASSERT_ARRAY(t, expected, n, 0); /* a second read changes nothing */
}

/* ---- case 1: a donated parameter updated in place ------------------------ */

/* p += 10 with p's old buffer held by nothing but the graph (donatable), in
 * the same program as a failing gather: p must read [11..14], not the
 * update applied twice. */
static void case_inplace_update(bool async)
{
    lt_tensor *p = lazy_f32((const double[]){1, 2, 3, 4}, 4);
    assert_int_equal(lt_mark_step(), LT_OK);
    LT_OK_T(lt_add_scalar_(p, 10));
    failing_gather();
    run_failing_step(async);
    read_after_failure(p, async, (const double[]){11, 12, 13, 14}, 4);
    /* reads computed copies: p and the gather are still pending */
    assert_int_equal(lt_mark_step(), LT_ERR_INDEX);
    lt_clear_error();
    assert_int_equal(lt_lazy_discard(), 2);
    LT_ASSERT_VALUES(p, 0, 1, 2, 3, 4); /* the failed step's update is dropped */
    LT_OK_T(lt_add_scalar_(p, 10));
    assert_int_equal(lt_mark_step(), LT_OK);
    LT_ASSERT_VALUES(p, 0, 11, 12, 13, 14);
}

/* ---- case 2: an unrelated pending conversion ---------------------------- */

/* y = to_dtype(x) is pending and x is gone, so x's buffer is held by the
 * graph alone and is donated to p's update (same size, computed after y);
 * the failing program must not overwrite it. */
static void case_pending_conversion(bool async)
{
    lt_scope_begin();
    lt_tensor *x = lazy_f32((const double[]){-5, -0.75, 3.5, -4}, 4);
    lt_tensor *y = lt_keep(LT_OK_T(lt_to_dtype(x, LT_F64)));
    lt_scope_end(); /* x dies: only the graph holds its buffer */
    lt_tensor *p = lazy_f32((const double[]){1, 2, 3, 4}, 4);
    LT_OK_T(lt_add_scalar_(p, 10));
    failing_gather();
    run_failing_step(async);
    read_after_failure(y, async, (const double[]){-5, -0.75, 3.5, -4}, 4);
    LT_ASSERT_VALUES(p, 0, 11, 12, 13, 14);
    assert_int_equal(lt_lazy_discard(), 3); /* p, y and the gather */
    LT_ASSERT_VALUES(p, 0, 1, 2, 3, 4);
}

/* ---- case 3: the failing computation is dropped ------------------------- */

/* After a failed step, lt_lazy_discard drops every pending value: p goes
 * back to its data from before the step, a tensor that never had data says
 * it was discarded, and the next step works. */
static void case_discard(bool async)
{
    lt_metrics_reset();
    lt_tensor *p = lazy_f32((const double[]){1, 2, 3, 4}, 4);
    assert_int_equal(lt_mark_step(), LT_OK);
    LT_OK_T(lt_add_scalar_(p, 10));
    LT_OK_T(lt_mul_scalar_(p, 2));
    lt_tensor *bad = failing_gather();
    lt_tensor *q = LT_OK_T(lt_mul_scalar(p, 3));
    run_failing_step(async);
    assert_int_equal(lt_mark_step(), LT_ERR_INDEX); /* still failing: the graph is kept */
    LT_EXPECT_ERROR(LT_ERR_INDEX, "gather");
    assert_int_equal(lt_lazy_discard(), 3); /* p, the gather, q */
    assert_int_equal(lt_metrics_counter("DiscardedValues"), 3);
    assert_int_equal(lt_metrics_counter("FailedExecutions"), async ? 1 : 2); /* async: reported, not rerun */
    LT_ASSERT_VALUES(p, 0, 1, 2, 3, 4);
    double v;
    assert_int_equal(lt_item(lt_sum(bad, NULL, 0, false), &v), LT_ERR_STATE);
    LT_EXPECT_ERROR(LT_ERR_STATE, "discarded by lt_lazy_discard");
    float host[4];
    assert_int_equal(lt_copy_to_host(q, host, sizeof host), LT_ERR_STATE);
    LT_EXPECT_ERROR(LT_ERR_STATE, "discarded");
    LT_OK_T(lt_add_scalar_(p, 10));
    if (async) {
        assert_int_equal(lt_barrier(false), LT_OK);
    } else {
        assert_int_equal(lt_mark_step(), LT_OK);
    }
    LT_ASSERT_VALUES(p, 0, 11, 12, 13, 14);
    assert_int_equal(lt_lazy_discard(), 0); /* nothing pending */
    LT_ASSERT_VALUES(p, 0, 11, 12, 13, 14);
}

/* A tensor overwritten by fill_ or copy_ (which do not read it) also goes
 * back to its data. */
static void case_discard_overwrite(bool async)
{
    lt_tensor *a = lazy_f32((const double[]){1, 2}, 2), *b = lazy_f32((const double[]){3, 4}, 2);
    lt_tensor *c = lazy_f32((const double[]){5, 6}, 2);
    assert_int_equal(lt_mark_step(), LT_OK);
    LT_OK_T(lt_fill_(a, 7));
    LT_OK_T(lt_copy_(b, c));
    failing_gather();
    run_failing_step(async);
    assert_int_equal(lt_lazy_discard(), 3); /* an asynchronous failure is dropped unreported */
    LT_ASSERT_VALUES(a, 0, 1, 2);
    LT_ASSERT_VALUES(b, 0, 3, 4);
}

/* Only the thread that owns the lazy device may discard. */
static void *discard_elsewhere(void *arg)
{
    int64_t *result = arg;
    *result = lt_lazy_discard();
    if (lt_last_status() != LT_ERR_STATE || !strstr(lt_last_error(), "lazy_discard: the lazy device is in use"))
        *result = -2;
    return NULL;
}

static void case_discard_other_thread(bool async)
{
    lt_tensor *p = lazy_f32((const double[]){1, 2, 3, 4}, 4);
    LT_OK_T(lt_add_scalar_(p, 10));
    pthread_t th;
    int64_t result = 0;
    assert_int_equal(pthread_create(&th, NULL, discard_elsewhere, &result), 0);
    pthread_join(th, NULL);
    assert_int_equal(result, -1);
    if (async)
        assert_int_equal(lt_barrier(false), LT_OK);
    else
        assert_int_equal(lt_mark_step(), LT_OK);
    LT_ASSERT_VALUES(p, 0, 11, 12, 13, 14); /* the update was not dropped */
}

/* ---- valid indices keep donation ----------------------------------------- */

/* A step with gathers whose indices are in range still donates: the
 * indices (one a data tensor, one computed from labels) are checked before
 * the program runs. */
static void case_donation_after_index_check(bool async)
{
    lt_metrics_reset();
    lt_tensor *p = lazy_f32((const double[]){1, 2, 3, 4}, 4);
    lt_tensor *src = lazy_f32((const double[]){10, 20, 30}, 3);
    lt_tensor *idx = LT_OK_T(lt_to(LT_T(LT_I64, LT_DIMS(2), 0, 2), lazy()));
    lt_tensor *labels = LT_OK_T(lt_to(LT_T(LT_I64, LT_DIMS(2), 1, -1), lazy()));
    lt_tensor *one = LT_OK_T(lt_to(LT_T(LT_I64, LT_DIMS(2), 1, 1), lazy()));
    LT_OK_T(lt_add_scalar_(p, 10));
    lt_tensor *g1 = LT_OK_T(lt_gather(src, 0, idx));
    lt_tensor *g2 = LT_OK_T(lt_gather(src, 0, lt_add(labels, one))); /* [2, 0] */
    if (async)
        assert_int_equal(lt_barrier(false), LT_OK);
    else
        assert_int_equal(lt_mark_step(), LT_OK);
    LT_ASSERT_VALUES(p, 0, 11, 12, 13, 14);
    LT_ASSERT_VALUES(g1, 0, 10, 30);
    LT_ASSERT_VALUES(g2, 0, 30, 10);
    assert_int_equal(lt_metrics_counter("IndexChecks"), 1);
    assert_int_equal(lt_metrics_counter("DonatedBuffers"), 1); /* p's update reuses p's buffer */
    /* the same step with a computed index out of range: no donation */
    LT_OK_T(lt_add_scalar_(p, 10));
    lt_tensor *bad = LT_OK_T(lt_gather(src, 0, lt_add_scaled(labels, one, 3))); /* [4, 2] */
    assert_int_equal(async ? lt_barrier(false) : lt_mark_step(), async ? LT_OK : LT_ERR_INDEX);
    read_after_failure(p, async, (const double[]){21, 22, 23, 24}, 4);
    assert_int_equal(lt_metrics_counter("IndexChecks"), 2);
    assert_int_equal(lt_metrics_counter("DonatedBuffers"), 1);
    lt_clear_error();
    (void)bad;
    assert_int_equal(lt_lazy_discard(), 3); /* p, the index and the gather */
    LT_ASSERT_VALUES(p, 0, 11, 12, 13, 14);
}

/* ---- the message names the public function ------------------------------ */

static void case_message_names_public_function(bool async)
{
    lt_tensor *logits = lazy_f32((const double[]){1, 2, 3, 4, 5, 6}, 6);
    logits = LT_OK_T(lt_reshape(logits, (int64_t[]){2, 3}, 2));
    lt_tensor *target = LT_OK_T(lt_to(LT_T(LT_I64, LT_DIMS(2), 1, 5), lazy()));
    lt_tensor *loss = LT_OK_T(lt_cross_entropy(logits, target, 0.0));
    const char *forced = async ? "lt_barrier" : "lt_mark_step";
    if (async) {
        assert_int_equal(lt_barrier(false), LT_OK);
        double v;
        assert_int_equal(lt_item(loss, &v), LT_ERR_INDEX);
    } else {
        assert_int_equal(lt_mark_step(), LT_ERR_INDEX);
    }
    char expect[200];
    snprintf(expect, sizeof expect,
             "lt_cross_entropy: failed when run (lowered to gather: index 5 is out of range for dim 1 of size 3 "
             "(expected 0..2)) (while running the lazy step forced by %s)", forced);
    assert_string_equal(lt_last_error(), expect); /* the whole message: it starts with the public function */
    lt_clear_error();
    /* a read names its own call */
    double v;
    assert_int_equal(lt_item(loss, &v), LT_ERR_INDEX);
    LT_EXPECT_ERROR(LT_ERR_INDEX, "lt_cross_entropy: failed when run (lowered to gather: index 5");
    assert_int_equal(lt_item(loss, &v), LT_ERR_INDEX);
    LT_EXPECT_ERROR(LT_ERR_INDEX, "(while running the lazy graph forced by lt_item)");
    assert_int_equal(lt_lazy_discard(), 1);
    /* nll_loss names itself */
    lt_tensor *nll = LT_OK_T(lt_nll_loss(lt_log_softmax(logits, 1), target));
    assert_int_equal(lt_item(nll, &v), LT_ERR_INDEX);
    const char *nll_msg = "lt_nll_loss: failed when run (lowered to gather: index 5 is out of range";
    assert_true(strncmp(lt_last_error(), nll_msg, strlen(nll_msg)) == 0);
    lt_clear_error();
    assert_int_equal(lt_lazy_discard(), 2); /* the log_softmax and the loss */
    /* a function that records one op of its own name: the kernel's message names it */
    lt_tensor *hot = LT_OK_T(lt_one_hot(target, 3));
    assert_int_equal(lt_item(lt_sum(hot, NULL, 0, false), &v), LT_ERR_INDEX);
    assert_true(strncmp(lt_last_error(), "one_hot: ", 9) == 0);
    assert_null(strstr(lt_last_error(), "lowered to"));
    lt_clear_error();
    assert_int_equal(lt_lazy_discard(), 2); /* one_hot and the sum */
}

/* ---- a training loop with one bad batch ---------------------------------- */

#define N_SAMPLES 4
#define N_IN 2
#define N_CLASSES 3
#define N_STEPS 5
#define BAD_STEP 2 /* 0-based: the third step */

static const double inputs[N_STEPS][N_SAMPLES * N_IN] = {
    {0.5, -1.0, 1.5, 0.25, -0.75, 2.0, 1.0, 1.0},
    {-1.5, 0.5, 0.25, -0.5, 2.0, 1.0, -1.0, 0.75},
    {1.0, 2.0, -2.0, 0.5, 0.5, 0.5, -0.25, -1.0},
    {0.75, 0.25, -1.25, 1.5, 1.0, -2.0, 0.5, 0.5},
    {-0.5, -0.5, 1.25, 0.75, -1.0, 1.5, 2.0, -0.25},
};
static const double labels[N_STEPS][N_SAMPLES] = {
    {0, 1, 2, 1}, {2, 0, 1, 1}, {1, 5, 0, 2}, {0, 2, 2, 1}, {1, 0, 2, 0},
};

typedef struct trainer {
    lt_module *model;
    lt_optimizer *opt;
    lt_tensor *params[2];
    lt_device dev;
} trainer;

/* Linear(2 -> 3) with fixed weights, and Adam (stateful: moments and a
 * step count that must not advance in a failed step). */
static void trainer_init(trainer *t, lt_device dev)
{
    static const double w[6] = {0.1, -0.2, 0.3, 0.05, -0.15, 0.25}, b[3] = {0.01, -0.02, 0.03};
    t->dev = dev;
    t->model = lt_nn_linear(N_IN, N_CLASSES, true, dev);
    assert_non_null(t->model);
    assert_int_equal(lt_module_parameters(t->model, t->params, NULL, 2), 2);
    lt_no_grad_begin();
    LT_OK_T(lt_copy_(t->params[0], lt_to(LT_T(LT_F32, LT_DIMS(3, 2), w[0], w[1], w[2], w[3], w[4], w[5]), dev)));
    LT_OK_T(lt_copy_(t->params[1], lt_to(LT_T(LT_F32, LT_DIMS(3), b[0], b[1], b[2]), dev)));
    lt_no_grad_end();
    t->opt = lt_optim_adam(t->params, 2, 0.05, 0.9, 0.999, 1e-8, 0.0, false);
    assert_non_null(t->opt);
}

static void trainer_free(trainer *t)
{
    lt_optim_free(t->opt);
    lt_module_free(t->model);
}

/* Records one step (forward, backward, update); the barrier is the
 * caller's. The loss is kept for the caller. */
static lt_tensor *trainer_step(trainer *t, int step)
{
    lt_scope_begin();
    lt_tensor *x = lt_to(lt_test_tensor(inputs[step], (int64_t[]){N_SAMPLES, N_IN}, 2, LT_F32), t->dev);
    lt_tensor *y = lt_to(lt_test_tensor(labels[step], (int64_t[]){N_SAMPLES}, 1, LT_I64), t->dev);
    assert_int_equal(lt_optim_zero_grad(t->opt), LT_OK);
    lt_tensor *loss = LT_OK_T(lt_cross_entropy(lt_module_forward(t->model, x), y, 0.0));
    assert_int_equal(lt_backward(loss, NULL), LT_OK);
    assert_int_equal(lt_optim_step(t->opt), LT_OK);
    loss = lt_keep(loss);
    lt_scope_end();
    return loss;
}

/* The parameters' values (weight then bias) as doubles. */
static void read_params(trainer *t, double out[9])
{
    double *w = lt_test_values(t->params[0]), *b = lt_test_values(t->params[1]);
    assert_non_null(w);
    assert_non_null(b);
    memcpy(out, w, sizeof *w * 6);
    memcpy(out + 6, b, sizeof *b * 3);
    free(w);
    free(b);
}

static void assert_close(const double *got, const double *want, int n, const char *what, int step)
{
    for (int i = 0; i < n; i++)
        if (fabs(got[i] - want[i]) > 1e-5 * (1 + fabs(want[i])))
            fail_msg("step %d: %s[%d] is %.9g, expected %.9g", step + 1, what, i, got[i], want[i]);
}

static void case_training_loop(bool async)
{
    /* oracle: eager training that skips the bad step */
    trainer eager;
    trainer_init(&eager, lt_device_cpu());
    double eager_params[N_STEPS][9], eager_loss[N_STEPS];
    for (int s = 0; s < N_STEPS; s++) {
        if (s != BAD_STEP) {
            lt_tensor *loss = trainer_step(&eager, s);
            assert_int_equal(lt_item(loss, &eager_loss[s]), LT_OK);
        }
        read_params(&eager, eager_params[s]);
    }
    trainer_free(&eager);

    trainer t;
    trainer_init(&t, lazy());
    assert_int_equal(lt_mark_step(), LT_OK);
    for (int s = 0; s < N_STEPS; s++) {
        int64_t donated_before = lt_metrics_counter("DonatedBuffers");
        lt_scope_begin();
        lt_tensor *loss = trainer_step(&t, s);
        double v = 0;
        lt_status st;
        if (async) {
            assert_int_equal(lt_barrier(false), LT_OK);
            st = lt_item(loss, &v); /* waits: reports the step's failure */
        } else {
            st = lt_mark_step();
            if (st == LT_OK)
                st = lt_item(loss, &v);
        }
        /* a good step reuses the old parameters' buffers, a bad one nothing */
        int64_t donated = lt_metrics_counter("DonatedBuffers") - donated_before;
        if (s == BAD_STEP) {
            assert_int_equal(st, LT_ERR_INDEX);
            LT_EXPECT_ERROR(LT_ERR_INDEX, "cross_entropy");
            assert_int_equal(donated, 0);
            assert_true(lt_lazy_discard() > 0);
        } else {
            if (s > 0) /* the first step creates Adam's state */
                assert_true(donated >= 2);
            if (st != LT_OK)
                fail_msg("step %d: %s", s + 1, lt_last_error());
            assert_close(&v, &eager_loss[s], 1, "loss", s);
        }
        lt_scope_end();
        double got[9];
        read_params(&t, got);
        assert_close(got, eager_params[s], 9, "parameter", s);
    }
    trainer_free(&t);
}

/* ---- case 9: tracing while the step runs ---------------------------------- */

/* After lt_barrier(false), ops that read the step's results are recorded
 * without waiting for it (through placeholders its data arrives in).
 * Success: they compute from the new values, and the parameter's buffer is
 * still donated at the next step. Failure: the failed step's roots are
 * restored, what was recorded from them fails at its barrier with a clear
 * message, and lt_lazy_discard drops it. Synchronous barriers: the same
 * ops simply read data. */
static void case_trace_during_step(bool async)
{
    lt_tensor *p = lazy_f32((const double[]){1, 2, 3, 4}, 4);
    assert_non_null(lt_add_scalar_(p, 10));
    assert_int_equal(async ? lt_barrier(false) : lt_mark_step(), LT_OK);
    int64_t waits = lt_metrics_counter("BarrierWaits");
    lt_tensor *q = LT_OK_T(lt_mul_scalar(p, 2)); /* recorded while p is computed */
    assert_int_equal(lt_metrics_counter("BarrierWaits"), waits);
    assert_non_null(lt_sub_scalar_(p, 1)); /* an update waits for p's data */
    int64_t donated = lt_metrics_counter("DonatedBuffers");
    assert_int_equal(lt_mark_step(), LT_OK);
    assert_true(lt_metrics_counter("DonatedBuffers") > donated);
    LT_ASSERT_VALUES(q, 0, 22, 24, 26, 28);
    LT_ASSERT_VALUES(p, 0, 10, 11, 12, 13);

    /* the step fails: p keeps its pending value, q cannot be computed */
    lt_scope_begin(); /* the failing gather dies with this scope */
    assert_non_null(failing_gather());
    assert_non_null(lt_add_scalar_(p, 100));
    if (!async) {
        run_failing_step(false);
        lt_scope_end();
        LT_ASSERT_VALUES(p, 0, 110, 111, 112, 113);
        return;
    }
    assert_int_equal(lt_barrier(false), LT_OK);
    lt_scope_end();
    lt_tensor *r = LT_OK_T(lt_mul_scalar(p, 2));
    assert_int_equal(lt_mark_step(), LT_ERR_INDEX); /* the step in flight failed */
    LT_EXPECT_ERROR(LT_ERR_INDEX, "(while running the lazy step forced by lt_barrier)");
    assert_int_equal(lt_mark_step(), LT_ERR_STATE); /* r was recorded from it */
    LT_EXPECT_ERROR(LT_ERR_STATE, "as computed by an asynchronous step that failed");
    assert_true(lt_lazy_discard() >= 1);
    char host[16];
    assert_int_equal(lt_copy_to_host(r, host, sizeof host), LT_ERR_STATE);
    LT_EXPECT_ERROR(LT_ERR_STATE, "discarded by lt_lazy_discard");
    LT_ASSERT_VALUES(p, 0, 10, 11, 12, 13); /* its last data */
    LT_ASSERT_VALUES(lt_mul_scalar(p, 3), 0, 30, 33, 36, 39);
}

/* ---- drivers -------------------------------------------------------------- */

typedef void (*txn_case)(bool async);

static void run_all(txn_case c)
{
    const char *backends[2] = {"interp", "cpu"};
    for (int b = 0; b < 2; b++) {
        if (!lt_test_use_backend(backends[b]))
            continue;
        for (int async = 0; async < 2; async++) {
            lt_scope_begin();
            c(async != 0);
            lt_scope_end();
            assert_int_equal(lt_lazy_discard(), 0); /* each case leaves nothing pending */
            assert_int_equal(lt_last_status(), LT_OK);
        }
    }
}

#define TXN_TEST(name) \
    static void test_##name(void **state) \
    { \
        (void)state; \
        run_all(case_##name); \
    }

TXN_TEST(inplace_update)
TXN_TEST(pending_conversion)
TXN_TEST(discard)
TXN_TEST(discard_overwrite)
TXN_TEST(discard_other_thread)
TXN_TEST(donation_after_index_check)
TXN_TEST(message_names_public_function)
TXN_TEST(training_loop)
TXN_TEST(trace_during_step)

int main(void)
{
    /* compiled programs go to a private cache, never to ~/.cache */
    char dir[] = "/tmp/lt_txn_cache_XXXXXX";
    if (!mkdtemp(dir))
        return 1;
    setenv("LT_CACHE_DIR", dir, 1);
    const struct CMUnitTest tests[] = {
        LT_TEST(test_inplace_update),
        LT_TEST(test_pending_conversion),
        LT_TEST(test_discard),
        LT_TEST(test_discard_overwrite),
        LT_TEST(test_discard_other_thread),
        LT_TEST(test_donation_after_index_check),
        LT_TEST(test_message_names_public_function),
        LT_TEST(test_training_loop),
        LT_TEST(test_trace_during_step),
    };
    int failed = cmocka_run_group_tests(tests, NULL, NULL);
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    if (system(cmd) != 0)
        failed++;
    return failed;
}
