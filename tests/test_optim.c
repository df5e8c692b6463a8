/* test_optim.c - optimizers (SGD, momentum, Nesterov, weight decay, Adam,
 * AdamW) against a plain-C double reimplementation of PyTorch's updates and
 * against trajectories recorded with torch 1.13; optimizer state and
 * resuming from it; the lazy device (same values, one compile per step
 * shape, program outputs); the step scope; LR schedules; bad input. */
#include "lt_test.h"

/* |got - expect| <= tol, in double (cmocka's float assert rounds to f32). */
#define assert_near(got, expect, tol) assert_near_at((got), (expect), (tol), __FILE__, __LINE__)
static void assert_near_at(double got, double expect, double tol, const char *file, int line)
{
    if (!(fabs(got - expect) <= tol)) {
        print_error("%s:%d: %.17g is not within %g of %.17g\n", file, line, got, tol, expect);
        _fail(file, line);
    }
}

static lt_device cpu(void) { return lt_device_cpu(); }
static lt_device lazy(void) { return lt_device_parse("lazy"); }

/* The tiny quadratic: loss = sum 0.5 * A (p - C)^2, gradient A (p - C). */
static const double P0[3] = {1.0, -2.0, 0.5};
static const double A[3] = {1.0, 2.0, 0.5};
static const double C[3] = {0.5, 1.0, -1.0};

typedef struct config {
    bool adam;
    double lr, momentum, weight_decay;
    bool nesterov;
    double beta1, beta2, eps;
    bool decoupled;
} config;

/* PyTorch's update rules in double, written out plainly (dampening 0;
 * SGD's first momentum step sets buf = g). lrs (optional) gives each step's
 * learning rate. */
static void reference(const config *c, const double *lrs, int steps, double *p)
{
    double buf[3] = {0}, m[3] = {0}, v[3] = {0};
    for (int i = 0; i < 3; i++)
        p[i] = P0[i];
    for (int s = 0; s < steps; s++) {
        double lr = lrs ? lrs[s] : c->lr;
        int t = s + 1;
        for (int i = 0; i < 3; i++) {
            double g = A[i] * (p[i] - C[i]);
            if (!c->adam) {
                g += c->weight_decay * p[i];
                if (c->momentum != 0) {
                    buf[i] = s == 0 ? g : c->momentum * buf[i] + g;
                    g = c->nesterov ? g + c->momentum * buf[i] : buf[i];
                }
                p[i] -= lr * g;
                continue;
            }
            if (c->decoupled)
                p[i] *= 1 - lr * c->weight_decay;
            else
                g += c->weight_decay * p[i];
            m[i] = c->beta1 * m[i] + (1 - c->beta1) * g;
            v[i] = c->beta2 * v[i] + (1 - c->beta2) * g * g;
            double mhat = m[i] / (1 - pow(c->beta1, t)), vhat = v[i] / (1 - pow(c->beta2, t));
            p[i] -= lr * mhat / (sqrt(vhat) + c->eps);
        }
    }
}

static lt_optimizer *make_optimizer(const config *c, lt_tensor *const *params, int n)
{
    if (c->adam)
        return lt_optim_adam(params, n, c->lr, c->beta1, c->beta2, c->eps, c->weight_decay, c->decoupled);
    return lt_optim_sgd(params, n, c->lr, c->momentum, c->weight_decay, c->nesterov);
}

/* One step on the quadratic: zero grads, backward, update. */
static void quadratic_step(lt_optimizer *o, lt_tensor *p, lt_tensor *a, lt_tensor *c)
{
    lt_scope_begin();
    assert_int_equal(lt_optim_zero_grad(o), LT_OK);
    lt_tensor *d = lt_sub(p, c);
    lt_tensor *loss = LT_OK_T(lt_mul(lt_mul_scalar(a, 0.5), lt_mul(d, d)));
    assert_int_equal(lt_backward(loss, lt_ones_like(loss)), LT_OK);
    assert_int_equal(lt_optim_step(o), LT_OK);
    lt_scope_end();
}

/* Runs `steps` steps on dev; writes the final parameter values. */
static void run_quadratic(lt_device dev, const config *c, const double *lrs, int steps, double *out)
{
    lt_tensor *p = LT_OK_T(lt_to(lt_test_tensor(P0, LT_DIMS(3), LT_F64), dev));
    assert_int_equal(lt_set_requires_grad(p, true), LT_OK);
    lt_tensor *a = lt_to(lt_test_tensor(A, LT_DIMS(3), LT_F64), dev);
    lt_tensor *ct = lt_to(lt_test_tensor(C, LT_DIMS(3), LT_F64), dev);
    lt_optimizer *o = make_optimizer(c, &p, 1);
    assert_non_null(o);
    for (int s = 0; s < steps; s++) {
        if (lrs)
            assert_int_equal(lt_optim_set_lr(o, lrs[s]), LT_OK);
        quadratic_step(o, p, a, ct);
        if (dev.kind == LT_DEVICE_LAZY)
            assert_int_equal(lt_mark_step(), LT_OK);
    }
    double *v = lt_test_values(p);
    memcpy(out, v, sizeof(double) * 3);
    free(v);
    lt_optim_free(o);
}

/* Relative comparison at 1e-6 (the brief's tolerance); in f64 the errors
 * are far smaller. */
static void assert_close(const double *got, const double *expect, int n)
{
    for (int i = 0; i < n; i++)
        if (fabs(got[i] - expect[i]) > 1e-6 * fmax(1.0, fabs(expect[i])))
            fail_msg("element %d is %.17g, expected %.17g", i, got[i], expect[i]);
}

static const config SGD_PLAIN = {.lr = 0.1};
static const config SGD_MOMENTUM_WD = {.lr = 0.1, .momentum = 0.9, .weight_decay = 0.01};
static const config SGD_NESTEROV = {.lr = 0.05, .momentum = 0.8, .weight_decay = 0.1, .nesterov = true};
static const config ADAM = {.adam = true, .lr = 0.1, .beta1 = 0.9, .beta2 = 0.999, .eps = 1e-8};
static const config ADAM_L2 = {.adam = true, .lr = 0.1, .beta1 = 0.8, .beta2 = 0.99, .eps = 1e-6,
                               .weight_decay = 0.1};
static const config ADAMW = {.adam = true, .lr = 0.1, .beta1 = 0.9, .beta2 = 0.999, .eps = 1e-8,
                             .weight_decay = 0.1, .decoupled = true};

/* Checks 5 steps on cpu against the C reference and torch's values. */
static void check_trajectory(const config *c, const double *torch_values)
{
    double got[3], expect[3];
    run_quadratic(cpu(), c, NULL, 5, got);
    reference(c, NULL, 5, expect);
    assert_close(got, expect, 3);
    assert_close(got, torch_values, 3);
    assert_close(expect, torch_values, 3);
}

static void test_sgd_trajectories(void **state)
{
    (void)state;
    /* torch 1.13: torch.optim.SGD on the same problem, 5 steps */
    check_trajectory(&SGD_PLAIN, (double[]){0.79524499999999998, 0.0169600000000001, 0.16067140625000001});
    check_trajectory(&SGD_MOMENTUM_WD, (double[]){0.47645974827814902, 2.7439879967850023, -0.3779443228083757});
    check_trajectory(&SGD_NESTEROV, (double[]){0.655777195514746, 0.90684110306287835, -0.0067623173464320466});
}

static void test_adam_trajectories(void **state)
{
    (void)state;
    check_trajectory(&ADAM, (double[]){0.52781445653074444, -1.501779456227287, 0.004358174697101716});
    check_trajectory(&ADAM_L2, (double[]){0.53367012934211411, -1.5033820540235274, 0.0088425931819105796});
    check_trajectory(&ADAMW, (double[]){0.49396356355173177, -1.4140583581685016, -0.010042724054482088});
}

static void test_changing_lr(void **state)
{
    (void)state;
    const double lrs[5] = {0.1, 0.05, 0.2, 0.01, 0.1};
    double got[3], expect[3];
    run_quadratic(cpu(), &ADAM, lrs, 5, got);
    reference(&ADAM, lrs, 5, expect);
    assert_close(got, expect, 3);
    assert_close(got, (double[]){0.56074158757834225, -1.5413530175300461, 0.043291889516668847}, 3);
}

static void test_lazy_equals_cpu(void **state)
{
    (void)state;
    const config *configs[4] = {&SGD_NESTEROV, &SGD_MOMENTUM_WD, &ADAM_L2, &ADAMW};
    for (int k = 0; k < 4; k++) {
        double on_cpu[3], on_lazy[3];
        run_quadratic(cpu(), configs[k], NULL, 5, on_cpu);
        run_quadratic(lazy(), configs[k], NULL, 5, on_lazy);
        for (int i = 0; i < 3; i++)
            assert_near(on_lazy[i], on_cpu[i], 1e-14);
    }
}

/* ---- state -------------------------------------------------------------------- */

static void test_state_and_skipping(void **state)
{
    (void)state;
    lt_tensor *p = lt_test_tensor(P0, LT_DIMS(3), LT_F64);
    lt_tensor *unused = LT_T(LT_F64, LT_DIMS(2), 7, 8);
    lt_set_requires_grad(p, true);
    lt_set_requires_grad(unused, true);
    lt_tensor *a = lt_test_tensor(A, LT_DIMS(3), LT_F64), *c = lt_test_tensor(C, LT_DIMS(3), LT_F64);
    lt_optimizer *o = make_optimizer(&ADAM, (lt_tensor *[]){p, unused}, 2);
    lt_tensor *st[6];
    const char *names[6];
    assert_int_equal(lt_optim_state(o, st, names, 6), 6);
    const char *expect_names[6] = {"state.0.exp_avg", "state.0.exp_avg_sq", "state.0.step",
                                   "state.1.exp_avg", "state.1.exp_avg_sq", "state.1.step"};
    for (int i = 0; i < 6; i++) {
        assert_string_equal(names[i], expect_names[i]);
        assert_false(lt_requires_grad(st[i]));
    }
    LT_ASSERT_SHAPE(st[0], 3);
    assert_int_equal(lt_tensor_ndim(st[2]), 0);
    assert_int_equal(lt_tensor_dtype(st[2]), LT_F64);
    int64_t live = lt_live_tensor_count();
    for (int s = 0; s < 3; s++)
        quadratic_step(o, p, a, c);
    assert_int_equal(lt_live_tensor_count(), live + 1); /* p's gradient, nothing else */
    /* the unused parameter has no gradient: skipped, its step stays 0 */
    LT_ASSERT_VALUES(unused, 0, 7, 8);
    LT_ASSERT_VALUES(st[2], 0, 3);
    LT_ASSERT_VALUES(st[5], 0, 0);
    LT_ASSERT_VALUES(st[3], 0, 0, 0);
    assert_true(lt_requires_grad(p));
    /* m after three steps, by the reference's recurrence */
    double pr[3], m[3] = {0};
    for (int i = 0; i < 3; i++)
        pr[i] = P0[i];
    for (int s = 0; s < 3; s++) {
        double g[3];
        for (int i = 0; i < 3; i++) {
            g[i] = A[i] * (pr[i] - C[i]);
            m[i] = 0.9 * m[i] + 0.1 * g[i];
        }
        reference(&ADAM, NULL, s + 1, pr);
    }
    LT_ASSERT_ARRAY(st[0], m, 3, 1e-12);
    /* max smaller than the count */
    assert_int_equal(lt_optim_state(o, NULL, names, 1), 6);
    assert_int_equal(lt_optim_state(o, NULL, NULL, 0), 6);
    lt_optim_free(o);

    /* SGD: one momentum buffer per parameter, none without momentum */
    lt_optimizer *sgd = make_optimizer(&SGD_MOMENTUM_WD, &p, 1);
    assert_int_equal(lt_optim_state(sgd, st, names, 6), 1);
    assert_string_equal(names[0], "state.0.momentum_buffer");
    lt_optim_free(sgd);
    sgd = make_optimizer(&SGD_PLAIN, &p, 1);
    assert_int_equal(lt_optim_state(sgd, st, names, 6), 0);
    assert_near(lt_optim_lr(sgd), 0.1, 0);
    assert_int_equal(lt_optim_set_lr(sgd, 0.25), LT_OK);
    assert_near(lt_optim_lr(sgd), 0.25, 0);
    lt_optim_free(sgd);
}

/* Copies every value of src into dst (no grad). */
static void copy_values(lt_tensor *dst, lt_tensor *src)
{
    lt_no_grad_begin();
    assert_non_null(lt_copy_(dst, src));
    lt_no_grad_end();
}

/* Three steps, then the parameters and optimizer state copied into a fresh
 * parameter and optimizer (as a checkpoint load does): two more steps on
 * both give the same values. */
static void check_resume(const config *cfg)
{
    lt_tensor *a = lt_test_tensor(A, LT_DIMS(3), LT_F64), *c = lt_test_tensor(C, LT_DIMS(3), LT_F64);
    lt_tensor *p = lt_test_tensor(P0, LT_DIMS(3), LT_F64), *q = lt_zeros(LT_DIMS(3), LT_F64, cpu());
    lt_set_requires_grad(p, true);
    lt_set_requires_grad(q, true);
    lt_optimizer *op = make_optimizer(cfg, &p, 1), *oq = make_optimizer(cfg, &q, 1);
    for (int s = 0; s < 3; s++)
        quadratic_step(op, p, a, c);
    copy_values(q, p);
    lt_tensor *sp[3], *sq[3];
    int n = lt_optim_state(op, sp, NULL, 3);
    assert_int_equal(lt_optim_state(oq, sq, NULL, 3), n);
    for (int i = 0; i < n; i++)
        copy_values(sq[i], sp[i]);
    for (int s = 0; s < 2; s++) {
        quadratic_step(op, p, a, c);
        quadratic_step(oq, q, a, c);
    }
    double expect[3];
    reference(cfg, NULL, 5, expect);
    LT_ASSERT_ARRAY(p, expect, 3, 1e-12);
    LT_ASSERT_ARRAY(q, expect, 3, 1e-12);
    lt_optim_free(op);
    lt_optim_free(oq);
}

static void test_resume_from_state(void **state)
{
    (void)state;
    check_resume(&ADAMW);
    check_resume(&SGD_NESTEROV);
}

/* ---- the lazy training step ---------------------------------------------------------- */

static void test_lazy_step_compiles_once(void **state)
{
    (void)state;
    lt_metrics_reset();
    lt_tensor *w = LT_OK_T(lt_to(lt_randn(LT_DIMS(4, 3), LT_F32, cpu()), lazy()));
    lt_tensor *b = LT_OK_T(lt_to(LT_T(LT_F32, LT_DIMS(3), 1, 2, 3), lazy()));
    lt_tensor *target = LT_OK_T(lt_to(lt_randn(LT_DIMS(4, 3), LT_F32, cpu()), lazy()));
    lt_set_requires_grad(w, true);
    lt_set_requires_grad(b, true);
    lt_optimizer *o = lt_optim_adam((lt_tensor *[]){w, b}, 2, 0.01, 0.9, 0.999, 1e-8, 0.01, true);
    int64_t uncached_after_two = -1, live_after_one = -1;
    double losses[10];
    for (int s = 0; s < 10; s++) {
        /* a changing learning rate is a runtime scalar: no recompile */
        lt_optim_set_lr(o, lt_lr_warmup(lt_lr_cosine(0.01, s, 10, 0.001), s, 3));
        lt_step_begin();
        lt_tensor *d = lt_sub(lt_add(w, b), target);
        lt_tensor *loss = lt_mul(d, d);
        assert_int_equal(lt_backward(loss, lt_ones_like(loss)), LT_OK);
        assert_int_equal(lt_optim_step(o), LT_OK);
        assert_int_equal(lt_optim_zero_grad(o), LT_OK);
        lt_tensor *kept = lt_keep(lt_sum(lt_detach(loss), NULL, 0, false));
        assert_int_equal(lt_step_end(), LT_OK);
        /* outputs: 2 parameters, 2 x (exp_avg, exp_avg_sq, step), the kept loss */
        assert_int_equal(lt_metrics_counter("ProgramOutputs"), 2 + 6 + 1);
        assert_int_equal(lt_item(kept, &losses[s]), LT_OK);
        if (s == 1)
            uncached_after_two = lt_metrics_counter("UncachedCompile");
        if (s == 0)
            live_after_one = lt_live_tensor_count();
        else
            assert_int_equal(lt_live_tensor_count(), live_after_one + s); /* only the kept losses */
    }
    assert_true(uncached_after_two >= 1 && uncached_after_two <= 2);
    assert_int_equal(lt_metrics_counter("UncachedCompile"), uncached_after_two);
    assert_int_equal(lt_metrics_counter("MarkStep"), 10);
    assert_int_equal(lt_metrics_counter("Fallback"), 0);
    assert_true(losses[9] < losses[0]);
    lt_optim_free(o);
}

/* Ten Adam steps of a small regression on dev, each ended by lt_step_end or
 * lt_step_end_async; the losses (read after the run) and the final w. */
static void regression_steps(lt_device dev, bool async, double *losses, double **w_out)
{
    lt_manual_seed(5);
    lt_tensor *w = LT_OK_T(lt_to(lt_randn(LT_DIMS(4, 3), LT_F32, cpu()), dev));
    lt_tensor *target = LT_OK_T(lt_to(lt_randn(LT_DIMS(4, 3), LT_F32, cpu()), dev));
    lt_set_requires_grad(w, true);
    lt_optimizer *o = lt_optim_adam((lt_tensor *[]){w}, 1, 0.05, 0.9, 0.999, 1e-8, 0.0, false);
    lt_tensor *kept[10];
    for (int s = 0; s < 10; s++) {
        lt_step_begin();
        lt_tensor *d = lt_sub(lt_mul(w, w), target);
        lt_tensor *loss = lt_sum(lt_mul(d, d), NULL, 0, false);
        assert_int_equal(lt_backward(loss, NULL), LT_OK);
        assert_int_equal(lt_optim_step(o), LT_OK);
        assert_int_equal(lt_optim_zero_grad(o), LT_OK);
        kept[s] = lt_keep(lt_detach(loss));
        assert_int_equal(async ? lt_step_end_async() : lt_step_end(), LT_OK);
    }
    for (int s = 0; s < 10; s++) {
        assert_int_equal(lt_item(kept[s], &losses[s]), LT_OK);
        lt_release(kept[s]);
    }
    *w_out = lt_test_values(w);
    lt_optim_free(o);
}

/* lt_step_end_async: on the lazy device each step's program runs while the
 * next one is traced, with the same results as lt_step_end; on the cpu
 * device it is lt_step_end; misuse is reported under its own name. */
static void test_async_step_end(void **state)
{
    (void)state;
    double sync_losses[10], async_losses[10], cpu_losses[10], *w_sync, *w_async, *w_cpu;
    regression_steps(lazy(), false, sync_losses, &w_sync);
    lt_metrics_reset();
    regression_steps(lazy(), true, async_losses, &w_async);
    assert_int_equal(lt_metrics_counter("AsyncExecutions"), 10);
    regression_steps(cpu(), true, cpu_losses, &w_cpu);
    for (int s = 0; s < 10; s++) {
        assert_true(async_losses[s] == sync_losses[s]);
        assert_near(cpu_losses[s], sync_losses[s], 1e-5 * (1 + fabs(sync_losses[s])));
    }
    for (int i = 0; i < 12; i++) {
        assert_true(w_async[i] == w_sync[i]);
        assert_near(w_cpu[i], w_sync[i], 1e-5);
    }
    assert_true(sync_losses[9] < sync_losses[0]);
    free(w_sync);
    free(w_async);
    free(w_cpu);
    assert_int_equal(lt_step_end_async(), LT_ERR_STATE);
    LT_EXPECT_ERROR(LT_ERR_STATE, "step_end_async: no step is open");
}

/* ---- whole models: cpu and lazy agree, one compile per step shape ------------------------ */

static lt_module *small_cnn(lt_device dev)
{
    lt_module *mods[] = {lt_nn_conv2d(1, 4, 3, 1, 1, 1, true, dev), lt_nn_batch_norm2d(4, 1e-5, dev),
                         lt_nn_relu(), lt_nn_max_pool2d(2), lt_nn_flatten(), lt_nn_dropout(0.1),
                         lt_nn_linear(16, 3, true, dev)};
    return lt_nn_sequential(mods, 7);
}

static lt_module *small_transformer(lt_device dev)
{
    lt_module *mods[] = {lt_nn_layer_norm(8, 1e-5, dev), lt_nn_self_attention(8, 2, true, dev),
                         lt_nn_gelu(), lt_nn_flatten(), lt_nn_linear(32, 3, true, dev)};
    return lt_nn_sequential(mods, 5);
}

/* Trains `model` for 8 steps (Adam, label smoothing) with the step scope;
 * writes the losses. On the lazy device, checks the compile count and the
 * program's outputs: parameters, buffers, optimizer state, the kept loss. */
static void train_model(lt_module *model, lt_tensor *x, lt_tensor *y, double *losses)
{
    lt_tensor *params[16];
    int np = lt_module_parameters(model, params, NULL, 16);
    int nstate = lt_module_state(model, NULL, NULL, 0);
    lt_optimizer *o = lt_optim_adam(params, np, 0.01, 0.9, 0.999, 1e-8, 0.0, false);
    bool is_lazy = lt_tensor_device(x).kind == LT_DEVICE_LAZY;
    lt_metrics_reset();
    int64_t uncached = 0;
    for (int s = 0; s < 8; s++) {
        lt_manual_seed(1000 + (uint64_t)s); /* the same dropout masks on both devices */
        lt_step_begin();
        lt_tensor *loss = LT_OK_T(lt_cross_entropy(lt_module_forward(model, x), y, 0.1));
        assert_int_equal(lt_backward(loss, NULL), LT_OK);
        assert_int_equal(lt_optim_step(o), LT_OK);
        assert_int_equal(lt_optim_zero_grad(o), LT_OK);
        lt_tensor *kept = lt_keep(lt_detach(loss));
        assert_int_equal(lt_step_end(), LT_OK);
        if (is_lazy)
            assert_int_equal(lt_metrics_counter("ProgramOutputs"), nstate + 3 * np + 1);
        if (s == 1)
            uncached = lt_metrics_counter("UncachedCompile");
        assert_int_equal(lt_item(kept, &losses[s]), LT_OK);
    }
    if (is_lazy) {
        assert_int_equal(lt_metrics_counter("UncachedCompile"), uncached);
        assert_int_equal(lt_metrics_counter("MarkStep"), 8);
    }
    assert_true(losses[7] < losses[0]);
    lt_optim_free(o);
}

static void check_model(lt_module *(*build)(lt_device), const int64_t *xdims, int xnd)
{
    lt_manual_seed(21);
    lt_tensor *x = lt_randn(xdims, xnd, LT_F32, cpu());
    lt_tensor *y = lt_randint(0, 3, xdims, 1, LT_I64, cpu());
    double on_cpu[8], on_lazy[8];
    lt_manual_seed(22);
    lt_module *mc = build(cpu());
    lt_manual_seed(22);
    lt_module *ml = build(lazy());
    train_model(mc, x, y, on_cpu);
    train_model(ml, lt_to(x, lazy()), lt_to(y, lazy()), on_lazy);
    for (int s = 0; s < 8; s++)
        assert_near(on_lazy[s], on_cpu[s], 1e-4);
    lt_tensor *tc[32], *tl[32];
    int n = lt_module_state(mc, tc, NULL, 32);
    assert_int_equal(lt_module_state(ml, tl, NULL, 32), n);
    for (int i = 0; i < n; i++) {
        double *expect = lt_test_values(tc[i]);
        LT_ASSERT_ARRAY(tl[i], expect, lt_tensor_numel(tc[i]), 1e-4);
        free(expect);
    }
    lt_module_free(mc);
    lt_module_free(ml);
}

static void test_model_training_cnn(void **state)
{
    (void)state;
    check_model(small_cnn, LT_DIMS(6, 1, 4, 4));
}

static void test_model_training_attention(void **state)
{
    (void)state;
    check_model(small_transformer, LT_DIMS(6, 4, 8));
}

static void test_step_scope(void **state)
{
    (void)state;
    /* cpu: closes the scope, no barrier */
    lt_metrics_reset();
    int64_t live = lt_live_tensor_count();
    lt_step_begin();
    lt_tensor *t = lt_ones(LT_DIMS(4), LT_F32, cpu());
    lt_tensor *kept = lt_keep(lt_mul_scalar(t, 2));
    assert_int_equal(lt_step_end(), LT_OK);
    assert_int_equal(lt_live_tensor_count(), live + 1);
    LT_ASSERT_VALUES(kept, 0, 2, 2, 2, 2);
    assert_int_equal(lt_metrics_counter("MarkStep"), 0);
    /* misuse */
    assert_int_equal(lt_step_end(), LT_ERR_STATE);
    LT_EXPECT_ERROR(LT_ERR_STATE, "step_end: no step is open");
    int depth = lt_scope_depth();
    lt_step_begin();
    lt_scope_begin();
    assert_int_equal(lt_step_end(), LT_ERR_STATE);
    LT_EXPECT_ERROR(LT_ERR_STATE, "step_end: 1 scope(s) opened inside the step are still open");
    lt_scope_end();
    assert_int_equal(lt_step_end(), LT_OK);
    assert_int_equal(lt_scope_depth(), depth);
    lt_step_begin();
    lt_scope_end();
    assert_int_equal(lt_step_end(), LT_ERR_STATE);
    LT_EXPECT_ERROR(LT_ERR_STATE, "step_end: the step's scope was already closed");
    assert_int_equal(lt_step_end(), LT_ERR_STATE);
    lt_clear_error();
    assert_int_equal(lt_scope_depth(), depth);
    /* lazy: a barrier materializes what outlives the step */
    lt_step_begin();
    lt_tensor *x = lt_keep(lt_add_scalar(lt_ones(LT_DIMS(2), LT_F32, lazy()), 1));
    assert_int_equal(lt_step_end(), LT_OK);
    assert_int_equal(lt_metrics_counter("MarkStep"), 1);
    assert_int_equal(lt_metrics_counter("ProgramOutputs"), 1);
    LT_ASSERT_VALUES(x, 0, 2, 2);
}

/* ---- schedules -------------------------------------------------------------------------- */

static void test_schedules(void **state)
{
    (void)state;
    for (int64_t s = 0; s < 12; s++)
        assert_near(lt_lr_step_decay(0.1, s, 3, 0.5), 0.1 * pow(0.5, (double)(s / 3)), 1e-15);
    assert_near(lt_lr_step_decay(0.1, 7, 3, 0.5), 0.025, 1e-15);
    for (int64_t s = 0; s < 15; s++) {
        double k = (double)(s < 10 ? s : 10);
        assert_near(lt_lr_cosine(1.0, s, 10, 0.1), 0.1 + 0.9 * (1 + cos(M_PI * k / 10)) / 2, 1e-15);
    }
    assert_near(lt_lr_cosine(1.0, 0, 10, 0.1), 1.0, 1e-15);
    assert_near(lt_lr_cosine(1.0, 5, 10, 0.1), 0.55, 1e-15);
    assert_near(lt_lr_cosine(1.0, 10, 10, 0.1), 0.1, 1e-15);
    assert_near(lt_lr_warmup(0.5, 0, 4), 0.125, 1e-15);
    assert_near(lt_lr_warmup(0.5, 2, 4), 0.375, 1e-15);
    assert_near(lt_lr_warmup(0.5, 3, 4), 0.5, 1e-15);
    assert_near(lt_lr_warmup(0.5, 100, 4), 0.5, 1e-15);
    assert_near(lt_lr_warmup(0.5, 0, 0), 0.5, 1e-15);
    assert_true(isnan(lt_lr_step_decay(0.1, 1, 0, 0.5)));
    LT_EXPECT_ERROR(LT_ERR_ARGUMENT, "lr_step_decay: step_size is 0, expected >= 1");
    assert_true(isnan(lt_lr_step_decay(0.1, -1, 2, 0.5)));
    LT_EXPECT_ERROR(LT_ERR_ARGUMENT, "lr_step_decay: step is -1, expected >= 0");
    assert_true(isnan(lt_lr_cosine(0.1, 1, 0, 0)));
    LT_EXPECT_ERROR(LT_ERR_ARGUMENT, "lr_cosine: total_steps is 0, expected >= 1");
    assert_true(isnan(lt_lr_warmup(0.1, 1, -2)));
    LT_EXPECT_ERROR(LT_ERR_ARGUMENT, "lr_warmup: warmup_steps is -2, expected >= 0");
}

/* ---- bad input ------------------------------------------------------------------------------ */

static void test_bad_input(void **state)
{
    (void)state;
    lt_tensor *p = lt_zeros(LT_DIMS(3), LT_F32, cpu());
    lt_tensor *ip = lt_zeros(LT_DIMS(3), LT_I64, cpu());
    int64_t live = lt_live_tensor_count();
    assert_null(lt_optim_sgd(NULL, 1, 0.1, 0, 0, false));
    LT_EXPECT_ERROR(LT_ERR_NULL, "optim_sgd: params is NULL");
    assert_null(lt_optim_sgd(&p, 0, 0.1, 0, 0, false));
    LT_EXPECT_ERROR(LT_ERR_ARGUMENT, "optim_sgd: n is 0, expected at least one parameter");
    assert_null(lt_optim_sgd((lt_tensor *[]){p, ip}, 2, 0.1, 0, 0, false));
    LT_EXPECT_ERROR(LT_ERR_DTYPE, "optim_sgd: parameter 1 has dtype i64, expected a floating dtype");
    assert_null(lt_optim_sgd((lt_tensor *[]){p, p}, 2, 0.1, 0, 0, false));
    LT_EXPECT_ERROR(LT_ERR_ARGUMENT, "optim_sgd: parameters 0 and 1 are the same tensor");
    assert_null(lt_optim_sgd((lt_tensor *[]){p, NULL}, 2, 0.1, 0, 0, false));
    LT_EXPECT_ERROR(LT_ERR_NULL, "optim_sgd: argument 1 is NULL");
    assert_null(lt_optim_sgd(&p, 1, -0.1, 0, 0, false));
    LT_EXPECT_ERROR(LT_ERR_ARGUMENT, "optim_sgd: lr is -0.1, expected a finite value >= 0");
    assert_null(lt_optim_sgd(&p, 1, NAN, 0, 0, false));
    LT_EXPECT_ERROR(LT_ERR_ARGUMENT, "optim_sgd: lr is nan");
    assert_null(lt_optim_sgd(&p, 1, 0.1, -0.5, 0, false));
    LT_EXPECT_ERROR(LT_ERR_ARGUMENT, "optim_sgd: momentum is -0.5");
    assert_null(lt_optim_sgd(&p, 1, 0.1, 0, 0, true));
    LT_EXPECT_ERROR(LT_ERR_ARGUMENT, "optim_sgd: momentum is 0, expected > 0 with nesterov");
    assert_null(lt_optim_sgd(&p, 1, 0.1, 0, -1, false));
    LT_EXPECT_ERROR(LT_ERR_ARGUMENT, "optim_sgd: weight_decay is -1");
    assert_null(lt_optim_adam(&p, 1, 0.1, 1.0, 0.999, 1e-8, 0, false));
    LT_EXPECT_ERROR(LT_ERR_ARGUMENT, "optim_adam: beta1 is 1, expected a value in [0, 1)");
    assert_null(lt_optim_adam(&p, 1, 0.1, 0.9, -0.1, 1e-8, 0, true));
    LT_EXPECT_ERROR(LT_ERR_ARGUMENT, "optim_adamw: beta2 is -0.1");
    assert_null(lt_optim_adam(&p, 1, 0.1, 0.9, 0.999, -1, 0, false));
    LT_EXPECT_ERROR(LT_ERR_ARGUMENT, "optim_adam: eps is -1");
    assert_int_equal(lt_live_tensor_count(), live);

    assert_int_equal(lt_optim_step(NULL), LT_ERR_NULL);
    LT_EXPECT_ERROR(LT_ERR_NULL, "optim_step: optimizer is NULL");
    assert_int_equal(lt_optim_zero_grad(NULL), LT_ERR_NULL);
    LT_EXPECT_ERROR(LT_ERR_NULL, "optim_zero_grad: optimizer is NULL");
    assert_true(isnan(lt_optim_lr(NULL)));
    LT_EXPECT_ERROR(LT_ERR_NULL, "optim_lr: optimizer is NULL");
    assert_int_equal(lt_optim_state(NULL, NULL, NULL, 0), -1);
    LT_EXPECT_ERROR(LT_ERR_NULL, "optim_state: optimizer is NULL");
    lt_optim_free(NULL);
    assert_int_equal(lt_last_status(), LT_OK);

    lt_optimizer *o = lt_optim_sgd(&p, 1, 0.1, 0.9, 0, false);
    assert_int_equal(lt_optim_set_lr(o, -1), LT_ERR_ARGUMENT);
    LT_EXPECT_ERROR(LT_ERR_ARGUMENT, "optim_set_lr: lr is -1");
    assert_near(lt_optim_lr(o), 0.1, 0);
    assert_int_equal(lt_optim_state(o, NULL, NULL, -1), -1);
    LT_EXPECT_ERROR(LT_ERR_ARGUMENT, "optim_state: max is -1");
    /* no gradient anywhere: nothing changes */
    assert_int_equal(lt_optim_step(o), LT_OK);
    LT_ASSERT_VALUES(p, 0, 0, 0, 0);
    lt_optim_free(o);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        LT_TEST(test_sgd_trajectories),    LT_TEST(test_adam_trajectories), LT_TEST(test_changing_lr),
        LT_TEST(test_lazy_equals_cpu),     LT_TEST(test_state_and_skipping), LT_TEST(test_resume_from_state),
        LT_TEST(test_lazy_step_compiles_once), LT_TEST(test_model_training_cnn),
        LT_TEST(test_model_training_attention), LT_TEST(test_step_scope),   LT_TEST(test_async_step_end),
        LT_TEST(test_schedules),
        LT_TEST(test_bad_input),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
