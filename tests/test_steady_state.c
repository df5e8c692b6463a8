/* test_steady_state.c - a steady-state training loop takes no fresh
 * buffers from the OS (the caching allocator reuses every one), on the
 * cpu device and through the lazy device. */
#include "lt_test.h"

static void train_steps(lt_device dev, int steps, lt_module *model, lt_optimizer *opt, lt_tensor *x, lt_tensor *y)
{
    for (int s = 0; s < steps; s++) {
        lt_step_begin();
        lt_tensor *loss = LT_OK_T(lt_cross_entropy(lt_module_forward(model, x), y, 0.1));
        assert_int_equal(lt_backward(loss, NULL), LT_OK);
        assert_int_equal(lt_optim_step(opt), LT_OK);
        assert_int_equal(lt_optim_zero_grad(opt), LT_OK);
        assert_int_equal(lt_step_end(), LT_OK);
    }
    (void)dev;
}

static void check_device(lt_device dev)
{
    lt_manual_seed(3);
    lt_module *layers[] = {lt_nn_linear(64, 128, true, dev), lt_nn_relu(), lt_nn_linear(128, 10, true, dev)};
    lt_module *model = lt_nn_sequential(layers, 3);
    assert_non_null(model);
    lt_tensor *params[8];
    int n = lt_module_parameters(model, params, NULL, 8);
    lt_optimizer *opt = lt_optim_adam(params, n, 1e-3, 0.9, 0.999, 1e-8, 0, false);
    assert_non_null(opt);
    lt_tensor *x = LT_OK_T(lt_randn((int64_t[]){32, 64}, 2, LT_F32, dev));
    lt_tensor *y = LT_OK_T(lt_randint(0, 10, (int64_t[]){32}, 1, LT_I64, dev));
    train_steps(dev, 3, model, opt, x, y); /* warm up: caches fill */
    /* the tiered backend (the lazy default) runs new graphs on interp until
     * their native programs are built: measure the native steady state */
    lt_lazy_wait_compiles();
    train_steps(dev, 2, model, opt, x, y);
    int64_t interp_runs = lt_metrics_counter("InterpTierRuns"), compiles = lt_metrics_counter("UncachedCompile");
    lt_mem_stats before, after;
    lt_mem_stats_get(&before);
    train_steps(dev, 20, model, opt, x, y);
    lt_mem_stats_get(&after);
    assert_int_equal(lt_metrics_counter("InterpTierRuns"), interp_runs);
    assert_int_equal(lt_metrics_counter("UncachedCompile"), compiles);
    print_message("%s: %lld OS allocations over 20 steady steps, %lld cache hits\n",
                  dev.kind == LT_DEVICE_LAZY ? "lazy" : "cpu", (long long)(after.os_allocs - before.os_allocs),
                  (long long)(after.cache_hits - before.cache_hits));
    assert_int_equal(after.os_allocs, before.os_allocs);
    assert_true(after.cache_hits > before.cache_hits);
    lt_optim_free(opt);
    lt_module_free(model);
}

static void test_cpu_steady_state(void **state)
{
    (void)state;
    check_device(lt_device_cpu());
}

static void test_lazy_steady_state(void **state)
{
    (void)state;
    check_device(lt_device_parse("lazy"));
}

int main(void)
{
    const struct CMUnitTest tests[] = {LT_TEST(test_cpu_steady_state), LT_TEST(test_lazy_steady_state)};
    return cmocka_run_group_tests(tests, NULL, NULL);
}
