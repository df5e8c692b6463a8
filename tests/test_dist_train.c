/*
 * test_dist_train.c - data-parallel training is the same training as one
 * process with the whole batch.
 *
 * Under `mpirun -np 2` each rank trains with lt_dp (batch B from
 * lt_dataset_shard_batch) and, in the same process, a reference model
 * without any collective, with batch 2B from lt_dataset_batch in the same
 * order. After 20 steps (crossing an epoch, whose last global batch is
 * partial, and a reshuffle) the parameters agree within 1e-5 relative, for
 * the MLP and the CNN on the cpu and lazy devices, and every rank holds
 * the same bits. Alone (ctest's plain run) it checks the world of one.
 * It also checks that ranks which built different models are refused.
 */
#include "lt_test.h"

#define COUNT 200 /* samples: 7 global batches of 32 per epoch, the last of 8 */
#define SIDE 8
#define GLOBAL 32 /* samples per global batch; BATCH = GLOBAL / W per rank */
#define STEPS 20

static int W, R, BATCH;
static lt_dataset data;

static void make_data(void)
{
    data.count = COUNT;
    data.rows = data.cols = SIDE;
    data.images = malloc(COUNT * SIDE * SIDE);
    data.labels = malloc(COUNT);
    for (int i = 0; i < COUNT; i++) {
        data.labels[i] = (uint8_t)(i % 10);
        for (int p = 0; p < SIDE * SIDE; p++)
            data.images[i * SIDE * SIDE + p] = (uint8_t)((i * 31 + p * 17 + data.labels[i] * 50 + (p % 7) * i) % 256);
    }
}

static lt_module *build(bool cnn, int hidden, lt_device dev)
{
    lt_manual_seed(1234);
    if (!cnn) {
        lt_module *l[] = {lt_nn_flatten(), lt_nn_linear(SIDE * SIDE, hidden, true, dev), lt_nn_relu(),
                          lt_nn_linear(hidden, 10, true, dev)};
        return lt_nn_sequential(l, 4);
    }
    lt_module *l[] = {lt_nn_conv2d(1, 4, 3, 1, 1, 1, true, dev), lt_nn_relu(), lt_nn_max_pool2d(2),
                      lt_nn_flatten(), lt_nn_linear(4 * (SIDE / 2) * (SIDE / 2), 10, true, dev)};
    return lt_nn_sequential(l, 5);
}

static lt_optimizer *sgd(lt_module *m)
{
    lt_tensor *p[16];
    int n = lt_module_parameters(m, p, NULL, 16);
    return lt_optim_sgd(p, n, 0.05, 0.9, 0.0, false);
}

/* One step; dp NULL: the whole global batch in this process. */
static void step(lt_module *m, lt_optimizer *o, lt_dp *dp, const int64_t *perm, int64_t index, lt_device dev)
{
    lt_step_begin();
    lt_tensor *x = NULL, *y = NULL;
    int64_t b = dp ? lt_dataset_shard_batch(&data, perm, index, BATCH, R, W, 0.5, 0.25, dev, &x, &y)
                   : lt_dataset_batch(&data, perm, index, BATCH * W, 0.5, 0.25, dev, &x, &y);
    assert_true(b > 0);
    int64_t want = index % 7 == 6 ? 8 / (dp ? W : 1) : BATCH * (dp ? 1 : W);
    assert_int_equal(b, want);
    lt_tensor *loss = LT_OK_T(lt_cross_entropy(lt_module_forward(m, x), y, 0.0));
    assert_int_equal(lt_backward(loss, NULL), LT_OK);
    if (dp)
        assert_int_equal(lt_dp_sync_grads(dp), LT_OK);
    assert_int_equal(lt_optim_step(o), LT_OK);
    assert_int_equal(lt_optim_zero_grad(o), LT_OK);
    assert_int_equal(lt_step_end(), LT_OK);
}

static void train(lt_module *m, lt_dp *dp, lt_device dev)
{
    lt_optimizer *o = sgd(m);
    assert_non_null(o);
    int64_t perm[COUNT], compiled = 0;
    for (int s = 0; s < STEPS; s++) {
        if (s % 7 == 0)
            assert_int_equal(lt_dataset_shuffle(&data, 99 + (uint64_t)(s / 7), perm), LT_OK);
        step(m, o, dp, perm, s % 7, dev);
        if (s == 7) /* a full and a partial batch seen: the step programs exist */
            compiled = lt_metrics_counter("UncachedCompile");
    }
    /* the step programs, collectives included, are reused from then on */
    assert_int_equal(lt_metrics_counter("UncachedCompile"), compiled);
    lt_optim_free(o);
}

static double *host_values(lt_tensor *t)
{
    int64_t n = lt_tensor_numel(t);
    double *v = malloc(sizeof *v * (size_t)n);
    assert_int_equal(lt_copy_to_host(LT_OK_T(lt_to_dtype(t, LT_F64)), v, sizeof *v * (size_t)n), LT_OK);
    return v;
}

/* max |a - b| / max |b| over one parameter. */
static double relative_difference(lt_tensor *a, lt_tensor *b)
{
    int64_t n = lt_tensor_numel(a);
    double *x = host_values(a), *y = host_values(b), diff = 0, scale = 0;
    for (int64_t i = 0; i < n; i++) {
        diff = fmax(diff, fabs(x[i] - y[i]));
        scale = fmax(scale, fabs(y[i]));
    }
    free(x), free(y);
    return diff / fmax(scale, 1e-30);
}

static void equivalence(bool cnn, const char *device)
{
    lt_device dev = lt_device_parse(device);
    lt_module *ref = build(cnn, 32, dev), *par = build(cnn, 32, dev);
    lt_dp *dp = lt_dp_new(par, 512); /* small buckets: several all-reduces per step */
    assert_non_null(dp);
    assert_true(lt_dp_num_buckets(dp) > 1);
    train(ref, NULL, dev);
    train(par, dp, dev);
    lt_tensor *pr[16], *pp[16];
    int n = lt_module_parameters(ref, pr, NULL, 16);
    assert_int_equal(lt_module_parameters(par, pp, NULL, 16), n);
    double worst = 0;
    for (int k = 0; k < n; k++) {
        lt_scope_begin();
        worst = fmax(worst, relative_difference(pp[k], pr[k]));
        /* every rank holds rank 0's bits */
        assert_true(relative_difference(pp[k], LT_OK_T(lt_broadcast(pp[k], 0))) == 0);
        lt_scope_end();
    }
    printf("rank %d: %s on %s, %d ranks x batch %d vs 1 x %d: max relative difference %.2e\n", R,
           cnn ? "cnn" : "mlp", device, W, BATCH, BATCH * W, worst);
    assert_true(worst <= 1e-5);
    /* on cpu the buckets' all-reduces start during backward (overlap) */
    double comm = -1, hidden = -1;
    lt_dp_overlap_stats(dp, &comm, &hidden);
    bool overlapped = W > 1 && !strcmp(device, "cpu");
    assert_true(overlapped ? comm > 0 && hidden >= 0 && hidden <= comm : comm == 0);
    lt_dp_free(dp);
    lt_module_free(ref);
    lt_module_free(par);
}

static void test_mlp_cpu(void **state) { (void)state; equivalence(false, "cpu"); }
static void test_mlp_lazy(void **state) { (void)state; equivalence(false, "lazy"); }
static void test_cnn_cpu(void **state) { (void)state; equivalence(true, "cpu"); }
static void test_cnn_lazy(void **state) { (void)state; equivalence(true, "lazy"); }

/* Shards cover every sample of a global batch once, in order. */
static void test_shards(void **state)
{
    (void)state;
    lt_dataset tiny = {5, 1, 1, (uint8_t[]){0, 1, 2, 3, 4}, (uint8_t[]){0, 1, 2, 3, 4}};
    int64_t perm[5] = {4, 2, 0, 1, 3};
    lt_tensor *x, *y;
    /* world 2, batch 2: global batches {4, 2, 0, 1} and {3, 4 (padding)} */
    assert_int_equal(lt_dataset_shard_batch(&tiny, perm, 0, 2, 1, 2, 0, 1, lt_device_cpu(), &x, &y), 2);
    int64_t l[2];
    assert_int_equal(lt_copy_to_host(y, l, sizeof l), LT_OK);
    assert_true(l[0] == 0 && l[1] == 1);
    assert_int_equal(lt_dataset_shard_batch(&tiny, perm, 1, 2, 1, 2, 0, 1, lt_device_cpu(), &x, &y), 1);
    assert_int_equal(lt_copy_to_host(y, l, sizeof l[0]), LT_OK);
    assert_int_equal(l[0], 4);
    assert_int_equal(lt_dataset_shard_batch(&tiny, perm, 2, 2, 0, 2, 0, 1, lt_device_cpu(), &x, &y), 0);
    assert_int_equal(lt_dataset_shard_batch(&tiny, perm, 0, 2, 2, 2, 0, 1, lt_device_cpu(), &x, &y), -1);
    assert_non_null(strstr(lt_last_error(), "rank 2 is not in a world of 2 ranks"));
    assert_null(lt_dp_new(NULL, 0));
    lt_clear_error();
}

/* With overlap on, a second backward before the sync is refused (its
 * buckets were already sent); with it off, gradients accumulate. */
static void test_two_backwards(void **state)
{
    (void)state;
    lt_module *m = build(false, 32, lt_device_cpu());
    lt_dp *dp = lt_dp_new(m, 0);
    assert_non_null(dp);
    for (int round = 0; round < 2; round++) {
        assert_int_equal(lt_dp_set_overlap(dp, round == 1), LT_OK);
        for (int pass = 0; pass < 2; pass++) {
            lt_tensor *x, *y;
            assert_int_equal(lt_dataset_batch(&data, NULL, R, 8, 0.5, 0.25, lt_device_cpu(), &x, &y), 8);
            assert_int_equal(lt_backward(lt_cross_entropy(lt_module_forward(m, x), y, 0.0), NULL), LT_OK);
        }
        lt_status st = lt_dp_sync_grads(dp);
        if (round == 1 && W > 1) {
            assert_int_equal(st, LT_ERR_STATE);
            assert_non_null(strstr(lt_last_error(), "a second lt_backward before lt_dp_sync_grads"));
            lt_clear_error();
        } else {
            assert_int_equal(st, LT_OK);
        }
        assert_int_equal(lt_module_zero_grad(m), LT_OK);
    }
    lt_dp_free(dp);
    lt_module_free(m);
}

/* Rank 1 builds a wider model: lt_dp_new refuses on every rank. */
static void test_different_model(void **state)
{
    (void)state;
    if (W == 1)
        skip();
    lt_module *m = build(false, R == 1 ? 48 : 32, lt_device_cpu());
    assert_null(lt_dp_new(m, 0));
    assert_int_equal(lt_last_status(), LT_ERR_DIST);
    assert_non_null(strstr(lt_last_error(), "rank 1's model differs from rank 0's"));
    lt_clear_error();
    lt_module_free(m);
}

int main(void)
{
    W = lt_dist_world_size();
    R = lt_dist_rank();
    BATCH = GLOBAL / W;
    make_data();
    const struct CMUnitTest tests[] = {
        LT_TEST(test_shards),   LT_TEST(test_mlp_cpu),  LT_TEST(test_mlp_lazy),
        LT_TEST(test_cnn_cpu),  LT_TEST(test_cnn_lazy), LT_TEST(test_two_backwards),
        LT_TEST(test_different_model),
    };
    int failed = cmocka_run_group_tests(tests, NULL, NULL);
    free(data.images);
    free(data.labels);
    lt_dist_finalize();
    return failed;
}
