/* test_nnfunc.c - torch.nn.functional with every option (src/nn/loss_class.c,
 * functional.c, attention_fn.c), the optimizers RMSprop, Adagrad, Adadelta
 * and Adamax (src/nn/optim.c) and the layers of layers_ext.c: values worked
 * out by hand from PyTorch's formulas (tests/torch_diff compares with torch
 * itself on many more inputs), optimizer trajectories computed with
 * torch.optim 1.13, dropout by its statistics, the same results on the lazy
 * device with fused kernels and no eager call, and the argument errors. */
#include "lt_test.h"

#include <math.h>

static lt_tensor *on(lt_tensor *t, lt_device dev) { return LT_OK_T(lt_to(t, dev)); }

static const char *BACKENDS[3] = {NULL, "interp", "cpu"};

/* Device i of cpu, lazy/interp, lazy/cpu (selecting the backend). */
static lt_device device_at(int i)
{
    if (!BACKENDS[i])
        return lt_device_cpu();
    assert_int_equal(lt_lazy_set_backend(BACKENDS[i]), LT_OK);
    return lt_device_parse("lazy");
}

/* ---- cross_entropy and nll_loss ---------------------------------------------- */

/* logits [[0, 0], [ln 3, 0]]: log-probabilities [[-ln 2, -ln 2], [ln 3/4, ln 1/4]] */
#define LOGITS(dev) on(LT_T(LT_F32, LT_DIMS(2, 2), 0, 0, log(3.0), 0), dev)
#define TARGETS(dev, a, b) on(LT_T(LT_I64, LT_DIMS(2), a, b), dev)

static void check_class_losses(lt_device dev)
{
    double l2 = log(2.0), l4 = log(4.0), l43 = log(4.0 / 3.0);
    lt_tensor *x = LOGITS(dev), *y = TARGETS(dev, 0, 1), *w = on(LT_T(LT_F32, LT_DIMS(2), 1, 3), dev);
    LT_ASSERT_VALUES(lt_cross_entropy_ext(x, y, NULL, -100, LT_LOSS_NONE, 0.0), 1e-6, l2, l4);
    LT_ASSERT_VALUES(lt_cross_entropy_ext(x, y, NULL, -100, LT_LOSS_SUM, 0.0), 1e-6, l2 + l4);
    /* weights: the mean divides by the targets' weights 1 + 3 */
    LT_ASSERT_VALUES(lt_cross_entropy_ext(x, y, w, -100, LT_LOSS_MEAN, 0.0), 1e-6, (l2 + 3 * l4) / 4);
    /* ignoring class 1 leaves the first sample alone in the mean */
    LT_ASSERT_VALUES(lt_cross_entropy_ext(x, y, w, 1, LT_LOSS_MEAN, 0.0), 1e-6, l2);
    LT_ASSERT_VALUES(lt_cross_entropy_ext(x, y, NULL, 1, LT_LOSS_NONE, 0.0), 1e-6, l2, 0);
    /* smoothing 0.5: 0.5 nll + 0.25 * -(sum of the row's log-probabilities) */
    LT_ASSERT_VALUES(lt_cross_entropy_ext(x, y, NULL, -100, LT_LOSS_NONE, 0.5), 1e-6, l2,
                     0.5 * l4 + 0.25 * (l43 + l4));
    /* probability targets: -sum_c p_c logp_c */
    lt_tensor *p = on(LT_T(LT_F32, LT_DIMS(2, 2), 0.5, 0.5, 1, 0), dev);
    LT_ASSERT_VALUES(lt_cross_entropy_ext(x, p, NULL, -100, LT_LOSS_NONE, 0.0), 1e-6, l2, l43);
    LT_ASSERT_VALUES(lt_cross_entropy_ext(x, p, w, -100, LT_LOSS_MEAN, 0.0), 1e-6, (2 * l2 + l43) / 2);
    /* every target ignored: NaN, as torch */
    LT_ASSERT_VALUES(lt_cross_entropy_ext(x, TARGETS(dev, -100, -100), NULL, -100, LT_LOSS_MEAN, 0.0), 0, NAN);
    /* nll_loss takes the log-probabilities as they are */
    lt_tensor *logp = on(LT_T(LT_F32, LT_DIMS(2, 2), -1, -2, -3, -4), dev);
    LT_ASSERT_VALUES(lt_nll_loss_ext(logp, y, w, -100, LT_LOSS_MEAN), 1e-6, (1 + 3 * 4) / 4.0);
    LT_ASSERT_VALUES(lt_nll_loss_ext(logp, y, NULL, 0, LT_LOSS_SUM), 1e-6, 4);
}

/* The gradient of an ignored sample is 0; with no options the loss is
 * lt_cross_entropy's. */
static void check_class_gradient(lt_device dev)
{
    lt_tensor *x = LOGITS(dev);
    assert_int_equal(lt_set_requires_grad(x, true), LT_OK);
    lt_tensor *loss = LT_OK_T(lt_cross_entropy_ext(x, TARGETS(dev, 0, -100), NULL, -100, LT_LOSS_MEAN, 0.0));
    assert_int_equal(lt_backward(loss, NULL), LT_OK);
    /* d/dx of -logp[0, 0] = softmax - onehot = [-0.5, 0.5]; row 1 ignored */
    LT_ASSERT_VALUES(lt_grad(x), 1e-6, -0.5, 0.5, 0, 0);
    double a, b;
    assert_int_equal(lt_item(lt_cross_entropy_ext(x, TARGETS(dev, 1, 0), NULL, -100, LT_LOSS_MEAN, 0.1), &a), LT_OK);
    assert_int_equal(lt_item(lt_cross_entropy(x, TARGETS(dev, 1, 0), 0.1), &b), LT_OK);
    assert_true(fabs(a - b) <= 1e-6);
}

/* ---- normalizations --------------------------------------------------------------- */

static void check_norms(lt_device dev)
{
    double s = sqrt(1.5); /* [1, 2, 3]: mean 2, biased variance 2/3 */
    lt_tensor *x = on(LT_T(LT_F32, LT_DIMS(2, 3), 1, 2, 3, 4, 6, 8), dev); /* rows scale alike */
    int64_t last = 3;
    LT_ASSERT_VALUES(lt_layer_norm(x, &last, 1, NULL, NULL, 0.0), 1e-5, -s, 0, s, -s, 0, s);
    lt_tensor *w = on(LT_T(LT_F32, LT_DIMS(3), 2, 2, 2), dev), *b = on(LT_T(LT_F32, LT_DIMS(3), 1, 1, 1), dev);
    LT_ASSERT_VALUES(lt_layer_norm(x, &last, 1, w, b, 0.0), 1e-5, 1 - 2 * s, 1, 1 + 2 * s, 1 - 2 * s, 1, 1 + 2 * s);
    /* group norm of [1, 2, 3, 4] as one group of 2 channels x 2: mean 2.5, var 1.25 */
    lt_tensor *g = on(LT_T(LT_F32, LT_DIMS(1, 2, 2), 1, 2, 3, 4), dev);
    double r = 1 / sqrt(1.25);
    LT_ASSERT_VALUES(lt_group_norm(g, 1, NULL, NULL, 0.0), 1e-5, -1.5 * r, -0.5 * r, 0.5 * r, 1.5 * r);
    /* instance norm: each channel [1, 2] and [3, 4] alone */
    LT_ASSERT_VALUES(lt_instance_norm(g, NULL, NULL, NULL, NULL, true, 0.1, 0.0), 1e-5, -1, 1, -1, 1);
}

static void check_batch_norm(lt_device dev)
{
    /* one channel, values 1 and 3: mean 2, biased variance 1, unbiased 2 */
    lt_tensor *x = on(LT_T(LT_F32, LT_DIMS(2, 1), 1, 3), dev);
    lt_tensor *rm = on(LT_T(LT_F32, LT_DIMS(1), 0), dev), *rv = on(LT_T(LT_F32, LT_DIMS(1), 1), dev);
    LT_ASSERT_VALUES(lt_batch_norm(x, rm, rv, NULL, NULL, true, 0.1, 0.0), 1e-6, -1, 1);
    LT_ASSERT_VALUES(rm, 1e-6, 0.2);
    LT_ASSERT_VALUES(rv, 1e-6, 1.1);
    /* eval: (x - 0.2) / sqrt(1.1), running statistics unchanged */
    LT_ASSERT_VALUES(lt_batch_norm(x, rm, rv, NULL, NULL, false, 0.1, 0.0), 1e-5, 0.8 / sqrt(1.1), 2.8 / sqrt(1.1));
    LT_ASSERT_VALUES(rm, 1e-6, 0.2);
    /* instance norm: per-instance [1, 3] and [5, 9] (means 2 and 7, unbiased
     * variances 2 and 8): the running ones get their batch means 4.5 and 5 */
    lt_tensor *y = on(LT_T(LT_F32, LT_DIMS(2, 1, 2), 1, 3, 5, 9), dev);
    lt_tensor *im = on(LT_T(LT_F32, LT_DIMS(1), 0), dev), *iv = on(LT_T(LT_F32, LT_DIMS(1), 1), dev);
    LT_ASSERT_VALUES(lt_instance_norm(y, im, iv, NULL, NULL, true, 0.5, 0.0), 1e-6, -1, 1, -1, 1);
    LT_ASSERT_VALUES(im, 1e-6, 2.25);
    LT_ASSERT_VALUES(iv, 1e-6, 3);
}

/* ---- attention and embedding ------------------------------------------------------ */

static void check_attention(lt_device dev)
{
    /* zero queries and keys: uniform weights over the allowed positions */
    lt_tensor *q = on(lt_zeros(LT_DIMS(1, 2, 2), LT_F32, lt_device_cpu()), dev);
    lt_tensor *v = on(LT_T(LT_F32, LT_DIMS(1, 2, 2), 1, 2, 3, 4), dev);
    LT_ASSERT_VALUES(lt_scaled_dot_product_attention(q, q, v, NULL, 0.0, false, NAN), 1e-6, 2, 3, 2, 3);
    LT_ASSERT_VALUES(lt_scaled_dot_product_attention(q, q, v, NULL, 0.0, true, NAN), 1e-6, 1, 2, 2, 3);
    lt_tensor *keep = on(LT_T(LT_BOOL, LT_DIMS(2, 2), 0, 1, 1, 1), dev);
    LT_ASSERT_VALUES(lt_scaled_dot_product_attention(q, q, v, keep, 0.0, false, NAN), 1e-6, 3, 4, 2, 3);
    /* an additive mask of ln 3 triples the weight of position 0 */
    lt_tensor *bias = on(LT_T(LT_F32, LT_DIMS(2), log(3.0), 0), dev);
    LT_ASSERT_VALUES(lt_scaled_dot_product_attention(q, q, v, bias, 0.0, false, NAN), 1e-6, 1.5, 2.5, 1.5, 2.5);
    /* scale: q k^T = 1 for position 1 only; scale ln 3 gives weights 1/4, 3/4 */
    lt_tensor *q1 = on(LT_T(LT_F32, LT_DIMS(1, 1, 2), 1, 0), dev), *k1 = on(LT_T(LT_F32, LT_DIMS(1, 2, 2), 0, 0, 1, 0), dev);
    LT_ASSERT_VALUES(lt_scaled_dot_product_attention(q1, k1, v, NULL, 0.0, false, log(3.0)), 1e-6, 2.5, 3.5);
    /* dropout_p 1 drops every attention weight */
    LT_ASSERT_VALUES(lt_scaled_dot_product_attention(q, q, v, NULL, 1.0, false, NAN), 0, 0, 0, 0, 0);
}

static void check_embedding(lt_device dev)
{
    lt_tensor *w = on(LT_T(LT_F32, LT_DIMS(3, 2), 3, 4, 1, 1, 0.1, 0.2), dev);
    assert_int_equal(lt_set_requires_grad(w, true), LT_OK);
    lt_tensor *idx = on(LT_T(LT_I64, LT_DIMS(3), 0, 1, 1), dev);
    lt_tensor *out = LT_OK_T(lt_embedding_ext(w, idx, 1, NAN, 2.0));
    LT_ASSERT_VALUES(out, 1e-6, 3, 4, 1, 1, 1, 1);
    assert_int_equal(lt_backward(lt_sum(out, NULL, 0, false), NULL), LT_OK);
    /* the padding row 1 gets no gradient; row 2 is not used */
    LT_ASSERT_VALUES(lt_grad(w), 0, 1, 1, 0, 0, 0, 0);
    /* max_norm 1: row 0 (norm 5) and row 1 (norm sqrt 2) are scaled in place,
     * row 2 (not referenced) is not */
    lt_tensor *w2 = on(LT_T(LT_F32, LT_DIMS(3, 2), 3, 4, 1, 1, 3, 4), dev);
    LT_ASSERT_VALUES(lt_embedding_ext(w2, idx, LT_NO_PADDING, 1.0, 2.0), 1e-6, 0.6, 0.8, sqrt(0.5), sqrt(0.5),
                     sqrt(0.5), sqrt(0.5));
    LT_ASSERT_VALUES(w2, 1e-6, 0.6, 0.8, sqrt(0.5), sqrt(0.5), 3, 4);
}

static void test_values_on_every_device(void **state)
{
    (void)state;
    for (int i = 0; i < 3; i++) {
        lt_device dev = device_at(i);
        print_message("on %s\n", BACKENDS[i] ? BACKENDS[i] : "cpu device");
        lt_scope_begin();
        check_class_losses(dev);
        check_class_gradient(dev);
        check_norms(dev);
        check_batch_norm(dev);
        check_attention(dev);
        check_embedding(dev);
        assert_int_equal(lt_scope_end(), LT_OK);
    }
}

/* ---- dropout -------------------------------------------------------------------------- */

/* Each output is 0 or x / (1 - p); about p of them are 0; the gradient is
 * the same mask and scale. */
static void test_dropout_statistics(void **state)
{
    (void)state;
    const int64_t n = 20000;
    const double p = 0.3;
    for (int i = 0; i < 3; i++) {
        lt_device dev = device_at(i);
        lt_scope_begin();
        lt_manual_seed(7);
        lt_tensor *x = on(lt_full(&n, 1, 2.0, LT_F32, lt_device_cpu()), dev);
        assert_int_equal(lt_set_requires_grad(x, true), LT_OK);
        lt_tensor *y = LT_OK_T(lt_dropout(x, p, true));
        assert_int_equal(lt_backward(lt_sum(y, NULL, 0, false), NULL), LT_OK);
        double *out = lt_test_values(y), *grad = lt_test_values(lt_grad(x));
        int64_t zeros = 0;
        for (int64_t k = 0; k < n; k++) {
            bool dropped = out[k] == 0.0;
            zeros += dropped;
            assert_true(dropped || fabs(out[k] - 2.0 / (1 - p)) < 1e-5);
            assert_true(fabs(grad[k] - (dropped ? 0.0 : 1.0 / (1 - p))) < 1e-5);
        }
        free(out);
        free(grad);
        /* the fraction's standard deviation is sqrt(p (1 - p) / n) = 0.0032 */
        assert_true(fabs((double)zeros / (double)n - p) < 0.02);
        /* eval and p = 0 copy x; p = 1 gives zeros */
        LT_ASSERT_VALUES(lt_sum(lt_dropout(x, p, false), NULL, 0, false), 1e-3, 2.0 * (double)n);
        LT_ASSERT_VALUES(lt_sum(lt_dropout(x, 1.0, true), NULL, 0, false), 0, 0);
        assert_int_equal(lt_scope_end(), LT_OK);
    }
}

/* ---- optimizers --------------------------------------------------------------------------- */

/* Three steps from p = [1, -2, 0.5] with these gradients. */
static const double GRADS[3][3] = {{0.5, -1, 2}, {-0.3, 0.8, 0.1}, {1.5, 0.2, -0.7}};

typedef struct optim_case {
    const char *name;
    lt_optimizer *(*make)(lt_tensor *p);
    double expect[3]; /* torch.optim 1.13, f32 */
} optim_case;

static lt_optimizer *make_rmsprop(lt_tensor *p) { return lt_optim_rmsprop(&p, 1, 0.01, 0.9, 1e-8, 0.1, 0.5, true); }
static lt_optimizer *make_adagrad(lt_tensor *p) { return lt_optim_adagrad(&p, 1, 0.1, 0.05, 0.1, 0.2, 1e-10); }
static lt_optimizer *make_adadelta(lt_tensor *p) { return lt_optim_adadelta(&p, 1, 1.0, 0.9, 1e-6, 0.1); }
static lt_optimizer *make_adamax(lt_tensor *p) { return lt_optim_adamax(&p, 1, 0.01, 0.9, 0.999, 1e-8, 0.1); }

static const optim_case OPTIMS[4] = {
    {"rmsprop centered, momentum", make_rmsprop, {0.926054776, -1.96412396, 0.448635966}},
    {"adagrad", make_adagrad, {0.863599598, -1.94755542, 0.423184991}},
    {"adadelta", make_adadelta, {0.993986845, -1.99892426, 0.497944325}},
    {"adamax", make_adamax, {0.98262912, -1.9865725, 0.482813805}},
};

/* One step: the gradient g through backward of sum(p * g), the update,
 * and on the lazy device the barrier. */
static void optim_step(lt_optimizer *o, lt_tensor *p, const double *g, lt_device dev)
{
    lt_scope_begin();
    lt_tensor *gt = on(LT_T(LT_F32, LT_DIMS(3), g[0], g[1], g[2]), dev);
    gt = lt_reshape(gt, lt_tensor_shape(p), lt_tensor_ndim(p));
    assert_int_equal(lt_backward(lt_sum(lt_mul(p, gt), NULL, 0, false), NULL), LT_OK);
    assert_int_equal(lt_optim_step(o), LT_OK);
    assert_int_equal(lt_optim_zero_grad(o), LT_OK);
    assert_int_equal(lt_scope_end(), LT_OK);
    if (dev.kind != LT_DEVICE_CPU)
        assert_int_equal(lt_mark_step(), LT_OK);
}

static void test_optimizers_match_torch(void **state)
{
    (void)state;
    for (int i = 0; i < 3; i++) {
        lt_device dev = device_at(i);
        for (int c = 0; c < 4; c++) {
            print_message("%s on %s\n", OPTIMS[c].name, BACKENDS[i] ? BACKENDS[i] : "cpu device");
            lt_scope_begin();
            lt_tensor *p = on(LT_T(LT_F32, LT_DIMS(3), 1, -2, 0.5), dev);
            assert_int_equal(lt_set_requires_grad(p, true), LT_OK);
            lt_optimizer *o = OPTIMS[c].make(p);
            assert_non_null(o);
            for (int s = 0; s < 3; s++)
                optim_step(o, p, GRADS[s], dev);
            LT_ASSERT_ARRAY(p, OPTIMS[c].expect, 3, 1e-5);
            lt_tensor *st[4];
            const char *names[4];
            assert_true(lt_optim_state(o, st, names, 4) >= 2);
            assert_string_equal(names[0], "state.0.step");
            LT_ASSERT_VALUES(st[0], 0, 3);
            lt_optim_free(o);
            assert_int_equal(lt_scope_end(), LT_OK);
        }
    }
}

/* Sets p's gradient to g (through backward of sum(p * g)). */
static void set_grad(lt_tensor *p, const double *g, lt_device dev)
{
    lt_scope_begin();
    lt_tensor *gt = on(LT_T(LT_F32, LT_DIMS(3), g[0], g[1], g[2]), dev);
    gt = lt_reshape(gt, lt_tensor_shape(p), lt_tensor_ndim(p));
    assert_int_equal(lt_backward(lt_sum(lt_mul(p, gt), NULL, 0, false), NULL), LT_OK);
    assert_int_equal(lt_scope_end(), LT_OK);
}

/* On the lazy device an update is traced into the step: with the gradient
 * already computed, the update is at most three fused kernels (the 0-d
 * step count, a 0-d learning rate computed from it, the elementwise
 * update), no eager call, no fallback, and from the
 * second step on the same program (the step count is device data, not a
 * constant). */
static void test_lazy_update_fuses(void **state)
{
    (void)state;
    lt_device lazy = device_at(2);
    for (int c = 0; c < 4; c++) {
        lt_scope_begin();
        /* a shape of its own: test_optimizers_match_torch's programs are
         * cached in memory, and a cached program sets no "Kernels" */
        lt_tensor *p = on(LT_T(LT_F32, LT_DIMS(3, 1), 1, -2, 0.5), lazy);
        assert_int_equal(lt_set_requires_grad(p, true), LT_OK);
        lt_optimizer *o = OPTIMS[c].make(p);
        for (int s = 0; s < 3; s++) {
            set_grad(p, GRADS[s], lazy);
            assert_int_equal(lt_mark_step(), LT_OK);
            lt_metrics_reset();
            assert_int_equal(lt_optim_step(o), LT_OK);
            assert_int_equal(lt_optim_zero_grad(o), LT_OK);
            assert_int_equal(lt_mark_step(), LT_OK);
            if (s == 0) {
                /* "Kernels" is set when a program is compiled (or read from
                 * the plan cache): the first step */
                print_message("%s: %lld kernels\n", OPTIMS[c].name, (long long)lt_metrics_counter("Kernels"));
                assert_true(lt_metrics_counter("Kernels") >= 1 && lt_metrics_counter("Kernels") <= 3);
            }
            assert_int_equal(lt_metrics_counter("KernelCalls"), 0);
            assert_int_equal(lt_metrics_counter("Fallback"), 0);
            if (s == 2) /* the second update's program serves the third */
                assert_int_equal(lt_metrics_counter("UncachedCompile"), 0);
        }
        LT_ASSERT_ARRAY(p, OPTIMS[c].expect, 3, 1e-5);
        lt_optim_free(o);
        assert_int_equal(lt_scope_end(), LT_OK);
    }
}

/* A loss with every option and the normalizations trace into one program
 * on the lazy device: no fallback, a few kernels. */
static void test_lazy_functional_fuses(void **state)
{
    (void)state;
    lt_device lazy = device_at(2);
    lt_tensor *x = lt_persist(on(LT_T(LT_F32, LT_DIMS(2, 3), 0.5, -1, 2, 0, 1, -2), lazy));
    lt_tensor *y = lt_persist(on(LT_T(LT_I64, LT_DIMS(2), 2, -100), lazy));
    lt_tensor *w = lt_persist(on(LT_T(LT_F32, LT_DIMS(3), 1, 2, 3), lazy));
    assert_int_equal(lt_mark_step(), LT_OK);
    lt_metrics_reset();
    lt_scope_begin();
    int64_t last = 3;
    lt_tensor *total = lt_add(lt_cross_entropy_ext(lt_layer_norm(x, &last, 1, w, NULL, 1e-5), y, w, -100,
                                                   LT_LOSS_MEAN, 0.1),
                              lt_sum(lt_group_norm(lt_unsqueeze(x, 2), 1, NULL, NULL, 1e-5), NULL, 0, false));
    lt_keep(LT_OK_T(total));
    assert_int_equal(lt_scope_end(), LT_OK);
    assert_int_equal(lt_mark_step(), LT_OK);
    print_message("%lld kernels\n", (long long)lt_metrics_counter("Kernels"));
    /* the class gather and the weight lookup are library calls inside the
     * compiled program (as lt_cross_entropy's gather); nothing runs eagerly */
    assert_true(lt_metrics_counter("KernelCalls") <= 2);
    assert_int_equal(lt_metrics_counter("Fallback"), 0);
    /* layer_norm's mean and variance, log_softmax's max and sum, the gather
     * and weight lookups, the reductions of the loss and of group_norm */
    assert_true(lt_metrics_counter("Kernels") <= 8);
    lt_release(total);
    lt_release(x);
    lt_release(y);
    lt_release(w);
}

/* ---- layers ------------------------------------------------------------------------------------ */

static void test_layers(void **state)
{
    (void)state;
    lt_device cpu = lt_device_cpu();
    lt_tensor *x = LT_T(LT_F32, LT_DIMS(1, 2, 2), 1, 2, 3, 4);
    lt_module *gn = lt_nn_group_norm(1, 2, 0.0, true, cpu);
    assert_non_null(gn);
    assert_int_equal(lt_module_parameters(gn, NULL, NULL, 0), 2);
    double r = 1 / sqrt(1.25);
    LT_ASSERT_VALUES(lt_module_forward(gn, x), 1e-5, -1.5 * r, -0.5 * r, 0.5 * r, 1.5 * r);
    lt_module *in = lt_nn_instance_norm(2, 0.0, false, cpu);
    assert_non_null(in);
    assert_int_equal(lt_module_parameters(in, NULL, NULL, 0), 0);
    LT_ASSERT_VALUES(lt_module_forward(in, x), 1e-5, -1, 1, -1, 1);
    lt_tensor *v = LT_T(LT_F32, LT_DIMS(3), -2, 0, 8);
    lt_module *acts[6] = {lt_nn_leaky_relu(0.1), lt_nn_hardtanh(-1, 1), lt_nn_relu6(), lt_nn_elu(1.0),
                          lt_nn_softplus(1.0, 20.0), lt_nn_sigmoid()};
    LT_ASSERT_VALUES(lt_module_forward(acts[0], v), 1e-6, -0.2, 0, 8);
    LT_ASSERT_VALUES(lt_module_forward(acts[1], v), 1e-6, -1, 0, 1);
    LT_ASSERT_VALUES(lt_module_forward(acts[2], v), 1e-6, 0, 0, 6);
    LT_ASSERT_VALUES(lt_module_forward(acts[3], v), 1e-6, exp(-2.0) - 1, 0, 8);
    LT_ASSERT_VALUES(lt_module_forward(acts[4], v), 1e-6, log1p(exp(-2.0)), log(2.0), log1p(exp(8.0)));
    LT_ASSERT_VALUES(lt_module_forward(acts[5], v), 1e-6, 1 / (1 + exp(2.0)), 0.5, 1 / (1 + exp(-8.0)));
    lt_module *more[7] = {lt_nn_selu(), lt_nn_celu(1.0), lt_nn_softsign(), lt_nn_hardswish(),
                          lt_nn_hardsigmoid(), lt_nn_mish(), lt_nn_logsigmoid()};
    lt_tensor *(*fns[7])(lt_tensor *) = {lt_selu, NULL, lt_softsign, lt_hardswish, lt_hardsigmoid, lt_mish,
                                         lt_logsigmoid};
    for (int i = 0; i < 7; i++) {
        lt_tensor *want = fns[i] ? fns[i](v) : lt_celu(v, 1.0);
        double expect[3];
        double *e = lt_test_values(want);
        memcpy(expect, e, sizeof expect);
        free(e);
        LT_ASSERT_ARRAY(lt_module_forward(more[i], v), expect, 3, 0);
        lt_module_free(more[i]);
    }
    for (int i = 0; i < 6; i++)
        lt_module_free(acts[i]);
    /* the wrong channel count */
    assert_null(lt_module_forward(gn, LT_T(LT_F32, LT_DIMS(1, 3, 1), 1, 2, 3)));
    LT_EXPECT_ERROR(LT_ERR_SHAPE, "nn.group_norm: input has 3 dims and 3 channels, expected [N, 2, ...]");
    lt_module_free(gn);
    lt_module_free(in);
    assert_null(lt_nn_group_norm(3, 4, 1e-5, true, cpu));
    LT_EXPECT_ERROR(LT_ERR_ARGUMENT, "nn.group_norm: num_groups is 3, expected a positive divisor of channels");
    assert_null(lt_nn_softplus(0.0, 20));
    LT_EXPECT_ERROR(LT_ERR_ARGUMENT, "nn.softplus: beta is 0, expected a non-zero value");
    assert_null(lt_nn_leaky_relu(NAN));
    LT_EXPECT_ERROR(LT_ERR_ARGUMENT, "nn.leaky_relu: negative_slope is nan, expected a finite value");
}

/* ---- argument errors ------------------------------------------------------------------------------ */

static void test_class_loss_errors(void **state)
{
    (void)state;
    lt_device cpu = lt_device_cpu();
    lt_tensor *x = LOGITS(cpu), *y = TARGETS(cpu, 0, 1);
    assert_null(lt_cross_entropy_ext(x, TARGETS(cpu, 0, 2), NULL, -100, LT_LOSS_MEAN, 0));
    LT_EXPECT_ERROR(LT_ERR_INDEX, "cross_entropy: target 2 at flat position 1 is out of range, expected a class in "
                                  "[0, 2) or ignore_index -100");
    assert_null(lt_cross_entropy_ext(x, LT_T(LT_I64, LT_DIMS(3), 0, 1, 1), NULL, -100, LT_LOSS_MEAN, 0));
    LT_EXPECT_ERROR(LT_ERR_SHAPE, "cross_entropy: targets have shape [3], expected [2] for input [2, 2]");
    assert_null(lt_cross_entropy_ext(x, LT_T(LT_F32, LT_DIMS(2), 0, 1), NULL, -100, LT_LOSS_MEAN, 0));
    LT_EXPECT_ERROR(LT_ERR_SHAPE, "cross_entropy: probability targets have shape [2], expected the input's [2, 2]");
    assert_null(lt_cross_entropy_ext(x, LT_T(LT_F32, LT_DIMS(2, 2), 1, 0, 0, 1), NULL, 0, LT_LOSS_MEAN, 0));
    LT_EXPECT_ERROR(LT_ERR_ARGUMENT, "cross_entropy: ignore_index is 0 with probability targets");
    assert_null(lt_cross_entropy_ext(x, y, LT_T(LT_F32, LT_DIMS(3), 1, 1, 1), -100, LT_LOSS_MEAN, 0));
    LT_EXPECT_ERROR(LT_ERR_SHAPE, "cross_entropy: weight has shape [3], expected [2] (one per class)");
    assert_null(lt_cross_entropy_ext(x, y, LT_T(LT_F64, LT_DIMS(2), 1, 1), -100, LT_LOSS_MEAN, 0));
    LT_EXPECT_ERROR(LT_ERR_DTYPE, "cross_entropy: weight has dtype f64, expected the input's f32");
    assert_null(lt_cross_entropy_ext(x, y, NULL, -100, (lt_loss_reduction)3, 0));
    LT_EXPECT_ERROR(LT_ERR_ARGUMENT, "cross_entropy: reduction 3 is not one of LT_LOSS_MEAN, LT_LOSS_SUM");
    assert_null(lt_cross_entropy_ext(x, y, NULL, -100, LT_LOSS_MEAN, 1.5));
    LT_EXPECT_ERROR(LT_ERR_ARGUMENT, "cross_entropy: label_smoothing is 1.5, expected a value in [0, 1]");
    assert_null(lt_cross_entropy_ext(LT_T(LT_I64, LT_DIMS(2), 0, 1), y, NULL, -100, LT_LOSS_MEAN, 0));
    LT_EXPECT_ERROR(LT_ERR_DTYPE, "cross_entropy: input has dtype i64, expected a floating dtype");
    assert_null(lt_nll_loss_ext(x, LT_T(LT_F32, LT_DIMS(2, 2), 1, 0, 0, 1), NULL, -100, LT_LOSS_MEAN));
    LT_EXPECT_ERROR(LT_ERR_DTYPE, "nll_loss: targets have dtype f32, expected class indices (i64 or i32)");
    assert_null(lt_nll_loss_ext(NULL, y, NULL, -100, LT_LOSS_MEAN));
    LT_EXPECT_ERROR(LT_ERR_NULL, "nll_loss");
}

static void test_functional_errors(void **state)
{
    (void)state;
    lt_tensor *x = LT_T(LT_F32, LT_DIMS(2, 3), 1, 2, 3, 4, 5, 6), *c3 = LT_T(LT_F32, LT_DIMS(3), 1, 1, 1);
    int64_t two = 2;
    assert_null(lt_layer_norm(x, &two, 1, NULL, NULL, 1e-5));
    LT_EXPECT_ERROR(LT_ERR_SHAPE, "layer_norm: input has shape [2, 3], expected its last dims to be normalized_shape [2]");
    assert_null(lt_layer_norm(x, NULL, 1, NULL, NULL, 1e-5));
    LT_EXPECT_ERROR(LT_ERR_NULL, "layer_norm: normalized_shape has 1 dims and is NULL");
    assert_null(lt_group_norm(x, 2, NULL, NULL, 1e-5));
    LT_EXPECT_ERROR(LT_ERR_ARGUMENT, "group_norm: num_groups is 2, expected a positive divisor of the 3 channels");
    assert_null(lt_batch_norm(x, NULL, NULL, NULL, NULL, false, 0.1, 1e-5));
    LT_EXPECT_ERROR(LT_ERR_ARGUMENT, "batch_norm: running_mean and running_var are NULL, expected them");
    assert_null(lt_batch_norm(x, c3, NULL, NULL, NULL, true, 0.1, 1e-5));
    LT_EXPECT_ERROR(LT_ERR_ARGUMENT, "batch_norm: running_mean and running_var must be given together");
    assert_null(lt_batch_norm(x, NULL, NULL, LT_T(LT_F32, LT_DIMS(2), 1, 1), NULL, true, 0.1, 1e-5));
    LT_EXPECT_ERROR(LT_ERR_SHAPE, "batch_norm: weight has shape [2], expected [3]");
    assert_null(lt_batch_norm(LT_T(LT_F32, LT_DIMS(1, 3), 1, 2, 3), NULL, NULL, NULL, NULL, true, 0.1, 1e-5));
    LT_EXPECT_ERROR(LT_ERR_SHAPE, "batch_norm: input has shape [1, 3], expected more than 1 value per channel");
    assert_null(lt_batch_norm(x, NULL, NULL, NULL, NULL, true, 1.5, 1e-5));
    LT_EXPECT_ERROR(LT_ERR_ARGUMENT, "batch_norm: momentum is 1.5, expected a value in [0, 1]");
    assert_null(lt_instance_norm(x, NULL, NULL, NULL, NULL, true, 0.1, 1e-5));
    LT_EXPECT_ERROR(LT_ERR_SHAPE, "instance_norm: input has shape [2, 3], expected at least 3 dims");
    assert_null(lt_dropout(x, -0.1, true));
    LT_EXPECT_ERROR(LT_ERR_ARGUMENT, "dropout: p is -0.1, expected a probability in [0, 1]");
    lt_tensor *q = LT_T(LT_F32, LT_DIMS(1, 2, 3), 1, 2, 3, 4, 5, 6), *k4 = LT_T(LT_F32, LT_DIMS(1, 2, 4), 0, 0, 0, 0, 0, 0, 0, 0);
    assert_null(lt_scaled_dot_product_attention(q, k4, q, NULL, 0, false, NAN));
    LT_EXPECT_ERROR(LT_ERR_SHAPE, "scaled_dot_product_attention: query [1, 2, 3], key [1, 2, 4] and value [1, 2, 3]");
    lt_tensor *mask = LT_T(LT_BOOL, LT_DIMS(2, 2), 1, 1, 1, 1);
    assert_null(lt_scaled_dot_product_attention(q, q, q, mask, 0, true, NAN));
    LT_EXPECT_ERROR(LT_ERR_ARGUMENT, "scaled_dot_product_attention: a mask and causal were both given");
    assert_null(lt_scaled_dot_product_attention(q, q, q, LT_T(LT_BOOL, LT_DIMS(3), 1, 1, 1), 0, false, NAN));
    LT_EXPECT_ERROR(LT_ERR_SHAPE, "scaled_dot_product_attention: mask has shape [3], expected a shape that broadcasts");
    assert_null(lt_scaled_dot_product_attention(q, q, q, LT_T(LT_I32, LT_DIMS(2), 1, 1), 0, false, NAN));
    LT_EXPECT_ERROR(LT_ERR_DTYPE, "scaled_dot_product_attention: mask has dtype i32, expected bool or the query's f32");
    lt_tensor *w = LT_T(LT_F32, LT_DIMS(3, 2), 1, 2, 3, 4, 5, 6), *i = LT_T(LT_I64, LT_DIMS(2), 0, 1);
    assert_null(lt_embedding_ext(w, i, 3, NAN, 2));
    LT_EXPECT_ERROR(LT_ERR_ARGUMENT, "embedding: padding_idx is 3, expected a row in [-3, 3) or LT_NO_PADDING");
    assert_null(lt_embedding_ext(w, i, LT_NO_PADDING, -1, 2));
    LT_EXPECT_ERROR(LT_ERR_ARGUMENT, "embedding: max_norm is -1, expected a finite value >= 0 (NAN: none)");
    assert_null(lt_embedding_ext(w, x, LT_NO_PADDING, NAN, 2));
    LT_EXPECT_ERROR(LT_ERR_DTYPE, "embedding: indices have dtype f32, expected i64 or i32");
}

static void test_optimizer_errors(void **state)
{
    (void)state;
    lt_tensor *p = LT_T(LT_F32, LT_DIMS(2), 1, 2);
    assert_null(lt_optim_rmsprop(&p, 1, -0.1, 0.99, 1e-8, 0, 0, false));
    LT_EXPECT_ERROR(LT_ERR_ARGUMENT, "optim_rmsprop: lr is -0.1, expected a finite value >= 0");
    assert_null(lt_optim_adagrad(&p, 1, 0.01, -1, 0, 0, 1e-10));
    LT_EXPECT_ERROR(LT_ERR_ARGUMENT, "optim_adagrad: lr_decay is -1, expected a finite value >= 0");
    assert_null(lt_optim_adadelta(&p, 1, 1.0, 1.5, 1e-6, 0));
    LT_EXPECT_ERROR(LT_ERR_ARGUMENT, "optim_adadelta: rho is 1.5, expected a value in [0, 1]");
    assert_null(lt_optim_adamax(&p, 1, 0.002, 0.9, 1.0, 1e-8, 0));
    LT_EXPECT_ERROR(LT_ERR_ARGUMENT, "optim_adamax: beta2 is 1, expected a value in [0, 1)");
    assert_null(lt_optim_adamax(NULL, 1, 0.002, 0.9, 0.999, 1e-8, 0));
    LT_EXPECT_ERROR(LT_ERR_NULL, "optim_adamax: params is NULL");
    lt_tensor *ints = LT_T(LT_I64, LT_DIMS(2), 1, 2);
    assert_null(lt_optim_adagrad(&ints, 1, 0.01, 0, 0, 0, 1e-10));
    LT_EXPECT_ERROR(LT_ERR_DTYPE, "optim_adagrad: parameter 0 has dtype i64, expected a floating dtype");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        LT_TEST(test_values_on_every_device),
        LT_TEST(test_dropout_statistics),
        LT_TEST(test_optimizers_match_torch),
        LT_TEST(test_lazy_update_fuses),
        LT_TEST(test_lazy_functional_fuses),
        LT_TEST(test_layers),
        LT_TEST(test_class_loss_errors),
        LT_TEST(test_functional_errors),
        LT_TEST(test_optimizer_errors),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
