/*
 * test_train_state.c - the training loop's bookkeeping in one call each:
 * lt_checkpoint_save / lt_checkpoint_load (model, optimizer, learning rate
 * and random generator; bit-identical resume, bad files change nothing)
 * and lt_step_end_read (the step's loss as a double), on cpu and on the
 * lazy device (interp and compiled backends).
 */
#include "lt_test.h"

#include <unistd.h>

static lt_device cpu(void) { return lt_device_cpu(); }
static lt_device lazy(void) { return lt_device_parse("lazy"); }

/* Runs body(dev) on cpu, then on lazy with each backend. */
static void on_every_device(void (*body)(lt_device dev))
{
    body(cpu());
    const char *backends[2] = {"interp", "cpu"};
    for (int b = 0; b < 2; b++) {
        if (lt_test_use_backend(backends[b]))
            body(lazy());
    }
}

static void temp_path(char *path, size_t cap)
{
    snprintf(path, cap, "/tmp/lt_train_state_XXXXXX");
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    close(fd);
}

/* ---- a model with dropout, trained with Adam ---------------------------------- */

typedef struct run {
    lt_module *model;
    lt_optimizer *opt;
    lt_tensor *x, *y;
} run;

static run run_new(lt_device dev, uint64_t seed)
{
    lt_manual_seed(seed);
    run r;
    r.model = lt_nn_sequential((lt_module *[]){lt_nn_linear(5, 16, true, dev), lt_nn_gelu(), lt_nn_dropout(0.3),
                                               lt_nn_linear(16, 3, true, dev)}, 4);
    lt_tensor *ps[4];
    int n = lt_module_parameters(r.model, ps, NULL, 4);
    r.opt = lt_optim_adam(ps, n, 0.01, 0.9, 0.999, 1e-8, 0.0, false);
    /* the data does not depend on the seed */
    lt_manual_seed(77);
    r.x = lt_persist(lt_to(lt_randn(LT_DIMS(12, 5), LT_F32, cpu()), dev));
    r.y = lt_persist(lt_to(lt_randint(0, 3, LT_DIMS(12), LT_I64, cpu()), dev));
    lt_manual_seed(seed + 1000);
    return r;
}

static void run_free(run *r)
{
    lt_release(r->x);
    lt_release(r->y);
    lt_optim_free(r->opt);
    lt_module_free(r->model);
}

/* `steps` training steps; losses[i] receives each step's loss. */
static void train(run *r, int steps, double *losses)
{
    for (int s = 0; s < steps; s++) {
        lt_step_begin();
        lt_tensor *loss = lt_cross_entropy(lt_module_forward(r->model, r->x), r->y, 0.0);
        assert_int_equal(lt_backward(loss, NULL), LT_OK);
        assert_int_equal(lt_optim_step(r->opt), LT_OK);
        assert_int_equal(lt_optim_zero_grad(r->opt), LT_OK);
        assert_int_equal(lt_step_end_read(&loss, &losses[s], 1), LT_OK);
    }
}

/* The f32 parameters, concatenated (malloc'd), for exact comparison. */
static float *params_of(run *r, int *count)
{
    lt_tensor *ps[4];
    int n = lt_module_parameters(r->model, ps, NULL, 4), total = 0;
    for (int i = 0; i < n; i++)
        total += (int)lt_tensor_numel(ps[i]);
    float *out = malloc(sizeof(float) * (size_t)total);
    for (int i = 0, at = 0; i < n; at += (int)lt_tensor_numel(ps[i]), i++)
        assert_int_equal(lt_copy_to_host(ps[i], out + at, sizeof(float) * (size_t)lt_tensor_numel(ps[i])), LT_OK);
    *count = total;
    return out;
}

enum { N_STEPS = 3, M_STEPS = 4 };

static void resume_on(lt_device dev)
{
    char path[64];
    temp_path(path, sizeof path);
    run a = run_new(dev, 5);
    double first[N_STEPS], cont[M_STEPS], resumed[M_STEPS];
    train(&a, N_STEPS, first);
    assert_int_equal(lt_optim_set_lr(a.opt, 0.02), LT_OK);
    assert_int_equal(lt_checkpoint_save(path, a.model, a.opt), LT_OK);
    train(&a, M_STEPS, cont);
    int na, nb;
    float *wa = params_of(&a, &na);

    run b = run_new(dev, 6); /* other initial weights and generator */
    assert_int_equal(lt_checkpoint_load(path, b.model, b.opt), LT_OK);
    assert_true(lt_optim_lr(b.opt) == 0.02);
    train(&b, M_STEPS, resumed);
    float *wb = params_of(&b, &nb);
    assert_int_equal(na, nb);
    for (int s = 0; s < M_STEPS; s++)
        assert_memory_equal(&cont[s], &resumed[s], sizeof(double));
    assert_memory_equal(wa, wb, sizeof(float) * (size_t)na);
    assert_true(cont[M_STEPS - 1] < first[0]); /* it did train */
    free(wa);
    free(wb);
    run_free(&a);
    run_free(&b);
    unlink(path);
}

static void test_resume_is_bit_identical(void **state)
{
    (void)state;
    on_every_device(resume_on);
}

/* A bad file changes neither the model, the optimizer, nor the generator. */
static void test_bad_files_change_nothing(void **state)
{
    (void)state;
    char model_only[64], other_shape[64];
    temp_path(model_only, sizeof model_only);
    temp_path(other_shape, sizeof other_shape);
    run r = run_new(cpu(), 5);
    double losses[2];
    train(&r, 2, losses);
    assert_int_equal(lt_checkpoint_save(model_only, r.model, NULL), LT_OK);
    lt_module *wide = lt_nn_sequential((lt_module *[]){lt_nn_linear(5, 17, true, cpu()), lt_nn_gelu(),
                                                       lt_nn_dropout(0.3), lt_nn_linear(17, 3, true, cpu())}, 4);

    lt_manual_seed(4242);
    lt_rand(LT_DIMS(3), LT_F32, cpu());
    uint64_t seed0, off0;
    lt_rng_get_state(&seed0, &off0);
    int n0;
    float *w0 = params_of(&r, &n0);
    lt_tensor *st[16];
    int ns = lt_optim_state(r.opt, st, NULL, 16);
    double *s0 = lt_test_values(st[0]);

    /* no optimizer state in the file */
    assert_int_equal(lt_checkpoint_load(model_only, r.model, r.opt), LT_ERR_IO);
    LT_EXPECT_ERROR(LT_ERR_IO, "has no tensor named \"optim.lr\"");
    /* another optimizer's state (SGD momentum, not Adam's moments) */
    lt_tensor *ps[4];
    lt_module_parameters(r.model, ps, NULL, 4);
    lt_optimizer *sgd = lt_optim_sgd(ps, 4, 0.5, 0.9, 0.0, false);
    assert_int_equal(lt_checkpoint_save(other_shape, r.model, sgd), LT_OK);
    lt_optim_free(sgd);
    assert_int_equal(lt_checkpoint_load(other_shape, r.model, r.opt), LT_ERR_IO);
    LT_EXPECT_ERROR(LT_ERR_IO, "has no tensor named \"optim.state.0.exp_avg\"");
    assert_int_equal(lt_checkpoint_save(other_shape, wide, NULL), LT_OK);
    /* wrong shapes */
    assert_int_equal(lt_checkpoint_load(other_shape, r.model, NULL), LT_ERR_SHAPE);
    LT_EXPECT_ERROR(LT_ERR_SHAPE, "tensor \"model.0.weight\" has shape [17, 5]");
    /* no file */
    assert_int_equal(lt_checkpoint_load("/nonexistent/ckpt.safetensors", r.model, r.opt), LT_ERR_IO);
    lt_clear_error();
    assert_int_equal(lt_checkpoint_load(NULL, r.model, r.opt), LT_ERR_NULL);
    LT_EXPECT_ERROR(LT_ERR_NULL, "checkpoint_load: path is NULL");
    assert_int_equal(lt_checkpoint_save(model_only, NULL, NULL), LT_ERR_NULL);
    LT_EXPECT_ERROR(LT_ERR_NULL, "checkpoint_save: module is NULL");

    uint64_t seed1, off1;
    lt_rng_get_state(&seed1, &off1);
    assert_true(seed1 == seed0 && off1 == off0);
    assert_true(lt_optim_lr(r.opt) == 0.01);
    int n1;
    float *w1 = params_of(&r, &n1);
    assert_memory_equal(w0, w1, sizeof(float) * (size_t)n0);
    double *s1 = lt_test_values(st[0]);
    assert_memory_equal(s0, s1, sizeof(double) * (size_t)lt_tensor_numel(st[0]));
    assert_true(ns == 12);

    /* the model-only file loads into the model alone, and sets the generator */
    assert_int_equal(lt_checkpoint_load(model_only, r.model, NULL), LT_OK);
    lt_rng_get_state(&seed1, &off1);
    assert_true(seed1 == 5 + 1000);
    free(w0);
    free(w1);
    free(s0);
    free(s1);
    lt_module_free(wide);
    run_free(&r);
    unlink(model_only);
    unlink(other_shape);
}

/* ---- lt_step_end_read ------------------------------------------------------------ */

static void read_on(lt_device dev)
{
    lt_tensor *a = lt_persist(lt_to(LT_T(LT_F32, LT_DIMS(4), 1, 2, 3, 4), dev));
    lt_tensor *b = lt_persist(lt_to(LT_T(LT_F32, LT_DIMS(4), 0, 0, 1, 2), dev));
    double v[3] = {-1, -1, -1};
    lt_step_begin();
    lt_tensor *mse = lt_mse_loss(a, b);           /* (1 + 4 + 4 + 4) / 4 */
    lt_tensor *total = lt_sum(a, NULL, 0, false); /* 10 */
    lt_tensor *hits = lt_sum(lt_gt(a, b), NULL, 0, true);
    lt_tensor *three[3] = {mse, total, lt_reshape(hits, LT_DIMS(1))};
    int depth = lt_scope_depth();
    assert_int_equal(lt_step_end_read(three, v, 3), LT_OK);
    assert_int_equal(lt_scope_depth(), depth - 1);
    assert_true(v[0] == 3.25 && v[1] == 10.0 && v[2] == 4.0);

    /* errors: nothing done, the step stays open */
    lt_step_begin();
    lt_tensor *vec = lt_add(a, b);
    double w[2] = {-1, -1};
    assert_int_equal(lt_step_end_read(&vec, w, 1), LT_ERR_SHAPE);
    LT_EXPECT_ERROR(LT_ERR_SHAPE, "step_end_read: tensor 0 has shape [4] (4 elements), expected one element");
    assert_int_equal(lt_step_end_read(NULL, w, 1), LT_ERR_NULL);
    LT_EXPECT_ERROR(LT_ERR_NULL, "step_end_read: scalars is NULL with n = 1");
    assert_int_equal(lt_step_end_read(&vec, w, -1), LT_ERR_ARGUMENT);
    lt_clear_error();
    assert_true(w[0] == -1);
    assert_int_equal(lt_step_end_read(NULL, NULL, 0), LT_OK); /* ends the step, reads nothing */
    assert_int_equal(lt_step_end_read(NULL, NULL, 0), LT_ERR_STATE);
    LT_EXPECT_ERROR(LT_ERR_STATE, "step_end_read: no step is open");
    lt_release(a);
    lt_release(b);
}

static void test_step_end_read(void **state)
{
    (void)state;
    on_every_device(read_on);
}

/* On the lazy device the read costs no sync of its own: one barrier, the
 * step's, computes the values. */
static void test_step_end_read_one_barrier(void **state)
{
    (void)state;
    assert_int_equal(lt_lazy_set_backend("interp"), LT_OK);
    lt_tensor *a = lt_persist(lt_to(LT_T(LT_F32, LT_DIMS(3), 1, 2, 3), lazy()));
    lt_metrics_reset();
    lt_step_begin();
    lt_tensor *s = lt_sum(lt_mul(a, a), NULL, 0, false);
    double v = 0;
    assert_int_equal(lt_step_end_read(&s, &v, 1), LT_OK);
    assert_true(v == 14.0);
    assert_int_equal(lt_metrics_counter("Barrier"), 1);
    assert_int_equal(lt_metrics_counter("MarkStep"), 1);
    lt_release(a);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        LT_TEST(test_resume_is_bit_identical),
        LT_TEST(test_bad_files_change_nothing),
        LT_TEST(test_step_end_read),
        LT_TEST(test_step_end_read_one_barrier),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
