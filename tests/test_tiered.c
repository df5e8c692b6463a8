/* test_tiered.c - the tiered backend: a new graph runs on interp at once
 * while its native program is compiled in the background, then the native
 * program takes over; results agree with the cpu backend and the eager cpu
 * device; a disk-cache hit skips the first tier; a failed or killed
 * background compile keeps the graph on interp with correct results; exit
 * with a compile running is clean. Child processes (this binary again, with
 * LT_TEST_CHILD set) cover what the environment decides once per process. */
#include "lt_test.h"

#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

static char test_dir[256];

/* ---- an MLP trained on any device ---------------------------------------- */

enum { IN = 64, HID = 96, OUT = 10, BATCH = 32, NPARAMS = 6, MAX_VALUES = 16384 };

typedef struct mlp {
    lt_module *model;
    lt_optimizer *opt;
    lt_tensor *params[NPARAMS];
    lt_tensor *x, *y;
} mlp;

/* The same initial values and data on every device: made on cpu, moved. */
static void mlp_make(mlp *m, lt_device dev, int batch)
{
    lt_manual_seed(11);
    lt_module *cpu_layers[] = {lt_nn_linear(IN, HID, true, lt_device_cpu()), lt_nn_relu(),
                               lt_nn_linear(HID, OUT, true, lt_device_cpu())};
    lt_module *cpu_model = lt_nn_sequential(cpu_layers, 3);
    lt_tensor *x = lt_randn((int64_t[]){batch, IN}, 2, LT_F32, lt_device_cpu());
    lt_tensor *y = lt_randint(0, OUT, (int64_t[]){batch}, 1, LT_I64, lt_device_cpu());
    lt_module *layers[] = {lt_nn_linear(IN, HID, true, dev), lt_nn_relu(), lt_nn_linear(HID, OUT, true, dev)};
    m->model = lt_nn_sequential(layers, 3);
    assert_non_null(cpu_model);
    assert_non_null(m->model);
    lt_tensor *init[8];
    assert_int_equal(lt_module_parameters(cpu_model, init, NULL, 8), 4);
    assert_int_equal(lt_module_parameters(m->model, m->params, NULL, NPARAMS), 4);
    lt_scope_begin();
    lt_no_grad_begin();
    for (int i = 0; i < 4; i++)
        assert_non_null(lt_copy_(m->params[i], lt_to(init[i], dev)));
    lt_no_grad_end();
    lt_scope_end();
    lt_module_free(cpu_model);
    m->opt = lt_optim_sgd(m->params, 4, 0.05, 0.9, 0, false);
    assert_non_null(m->opt);
    m->x = lt_retain(LT_OK_T(lt_to(x, dev)));
    m->y = lt_retain(LT_OK_T(lt_to(y, dev)));
}

static void mlp_free(mlp *m)
{
    lt_optim_free(m->opt);
    lt_module_free(m->model);
    lt_release(m->x);
    lt_release(m->y);
}

static void mlp_steps(mlp *m, int steps)
{
    for (int s = 0; s < steps; s++) {
        lt_step_begin();
        lt_tensor *loss = LT_OK_T(lt_cross_entropy(lt_module_forward(m->model, m->x), m->y, 0));
        assert_int_equal(lt_backward(loss, NULL), LT_OK);
        assert_int_equal(lt_optim_step(m->opt), LT_OK);
        assert_int_equal(lt_optim_zero_grad(m->opt), LT_OK);
        assert_int_equal(lt_step_end(), LT_OK);
    }
}

/* Every parameter's values, one after the other; returns how many. */
static int mlp_values(mlp *m, float *out)
{
    int n = 0;
    for (int i = 0; i < 4; i++) {
        int64_t k = lt_tensor_numel(m->params[i]);
        assert_true(n + k <= MAX_VALUES);
        assert_int_equal(lt_copy_to_host(m->params[i], out + n, (size_t)k * sizeof(float)), LT_OK);
        n += (int)k;
    }
    return n;
}

static void assert_close(const float *a, const float *b, int n, const char *what)
{
    double worst = 0;
    for (int i = 0; i < n; i++) {
        double d = fabs((double)a[i] - (double)b[i]) / fmax(1.0, fabs((double)b[i]));
        worst = fmax(worst, d);
    }
    print_message("%s: largest difference %.3g over %d values\n", what, worst, n);
    assert_true(worst <= 1e-5);
}

static int64_t counter(const char *name) { return lt_metrics_counter(name); }

/* ---- tiers ------------------------------------------------------------------ */

/* 50 steps: the first on the interp tier (cold cache), then, after the
 * background compiles, on native programs with no further compile; the
 * parameters agree with the cpu backend's and the eager device's. */
static void test_tiered_matches_native_and_eager(void **state)
{
    (void)state;
    static float tiered[MAX_VALUES], native[MAX_VALUES], eager[MAX_VALUES];
    lt_device lazy = lt_device_parse("lazy");
    assert_int_equal(lt_lazy_set_backend("tiered"), LT_OK);
    lt_metrics_reset();
    mlp m;
    mlp_make(&m, lazy, BATCH);
    mlp_steps(&m, 1);
    /* a new graph always runs first on interp: its build waits for that run */
    assert_true(counter("InterpTierRuns") >= 1);
    assert_true(counter("BackgroundCompiles") >= 1);
    assert_int_equal(counter("DiskCacheHit"), 0);
    mlp_steps(&m, 4);
    assert_int_equal(lt_lazy_wait_compiles(), LT_OK);
    assert_int_equal(counter("TierSwaps"), counter("BackgroundCompiles"));
    assert_int_equal(counter("BackgroundCompileFailures"), 0);
    int64_t interp = counter("InterpTierRuns"), compiles = counter("UncachedCompile");
    int64_t cached = counter("CachedCompile");
    mlp_steps(&m, 45);
    assert_int_equal(counter("InterpTierRuns"), interp); /* every step native now */
    assert_int_equal(counter("UncachedCompile"), compiles);
    assert_int_equal(counter("BackgroundCompiles"), counter("TierSwaps"));
    assert_true(counter("CachedCompile") >= cached + 45);
    int n = mlp_values(&m, tiered);
    mlp_free(&m);

    assert_int_equal(lt_lazy_set_backend("cpu"), LT_OK);
    mlp_make(&m, lazy, BATCH);
    mlp_steps(&m, 50);
    assert_int_equal(mlp_values(&m, native), n);
    mlp_free(&m);

    mlp_make(&m, lt_device_cpu(), BATCH);
    mlp_steps(&m, 50);
    assert_int_equal(mlp_values(&m, eager), n);
    mlp_free(&m);
    assert_close(tiered, native, n, "tiered vs cpu backend");
    assert_close(tiered, eager, n, "tiered vs eager");
    assert_int_equal(lt_lazy_set_backend("tiered"), LT_OK);
}

/* One step's loss on the interp tier equals the native program's. */
static void test_first_tier_loss_matches_native(void **state)
{
    (void)state;
    lt_device lazy = lt_device_parse("lazy");
    double loss[2];
    const char *backends[2] = {"tiered", "cpu"};
    for (int b = 0; b < 2; b++) {
        assert_int_equal(lt_lazy_set_backend(backends[b]), LT_OK);
        mlp m;
        mlp_make(&m, lazy, 17); /* a batch no other test uses: a new graph */
        int64_t interp = counter("InterpTierRuns");
        assert_int_equal(lt_item(lt_cross_entropy(lt_module_forward(m.model, m.x), m.y, 0), &loss[b]), LT_OK);
        if (b == 0)
            assert_true(counter("InterpTierRuns") > interp);
        mlp_free(&m);
    }
    assert_true(fabs(loss[0] - loss[1]) <= 1e-5 * fmax(1, fabs(loss[1])));
    assert_int_equal(lt_lazy_set_backend("tiered"), LT_OK);
    assert_int_equal(lt_lazy_wait_compiles(), LT_OK);
}

/* Programs on disk (built by the tests above) load at once: no step runs on
 * interp and nothing compiles in the background. */
static void test_warm_disk_cache_skips_first_tier(void **state)
{
    (void)state;
    assert_int_equal(lt_lazy_wait_compiles(), LT_OK);
    assert_int_equal(lt_lazy_set_cache_size(1), LT_OK); /* forget the programs in memory */
    assert_int_equal(lt_lazy_set_cache_size(1024), LT_OK);
    assert_int_equal(lt_lazy_set_backend("tiered"), LT_OK);
    lt_metrics_reset();
    mlp m;
    mlp_make(&m, lt_device_parse("lazy"), BATCH);
    mlp_steps(&m, 3);
    mlp_free(&m);
    assert_true(counter("DiskCacheHit") >= 1);
    assert_int_equal(counter("DiskCacheMiss"), 0);
    assert_int_equal(counter("InterpTierRuns"), 0);
    assert_int_equal(counter("BackgroundCompiles"), 0);
}

/* Asynchronous barriers: executions in flight on interp while the native
 * program is installed; the values are those of the closed form. */
static void test_swap_with_executions_in_flight(void **state)
{
    (void)state;
    assert_int_equal(lt_lazy_set_backend("tiered"), LT_OK);
    lt_device lazy = lt_device_parse("lazy");
    lt_tensor *x = lt_retain(LT_OK_T(lt_full((int64_t[]){3, 37}, 2, 5.0, LT_F32, lazy)));
    double expect = 5.0;
    for (int i = 0; i < 20; i++) {
        lt_scope_begin();
        assert_non_null(lt_add_scalar_(lt_mul_scalar_(x, 0.5), 1.0));
        lt_scope_end();
        expect = expect * 0.5 + 1.0;
        assert_int_equal(lt_barrier(false), LT_OK);
        if (i == 2)
            assert_int_equal(lt_lazy_wait_compiles(), LT_OK); /* while step 2 may be in flight */
    }
    float host[3 * 37];
    assert_int_equal(lt_copy_to_host(x, host, sizeof host), LT_OK);
    for (int i = 0; i < 3 * 37; i++)
        assert_true(fabs(host[i] - expect) <= 1e-6);
    lt_release(x);
}

/* A program evicted from the in-memory cache while its build is queued or
 * running is dropped cleanly; the graph still computes the right values. */
static void test_eviction_during_background_compile(void **state)
{
    (void)state;
    assert_int_equal(lt_lazy_set_backend("tiered"), LT_OK);
    lt_device lazy = lt_device_parse("lazy");
    for (int round = 0; round < 2; round++) {
        for (int64_t n = 101; n < 105; n++) {
            double v = 0;
            lt_tensor *t = lt_arange(0, (double)n, 1, LT_F32, lazy);
            assert_int_equal(lt_item(lt_sum(lt_mul_scalar(t, 3.0), NULL, 0, false), &v), LT_OK);
            assert_true(v == 3.0 * (double)(n * (n - 1) / 2));
            assert_int_equal(lt_lazy_set_cache_size(1), LT_OK); /* the graphs before it go */
        }
    }
    assert_int_equal(lt_lazy_set_cache_size(1024), LT_OK);
    assert_int_equal(lt_lazy_wait_compiles(), LT_OK);
}

/* A child forked after the worker started has no worker thread: its next
 * build starts one, and waiting for compiles there does not hang. */
static void test_fork_child_builds(void **state)
{
    (void)state;
    assert_int_equal(lt_lazy_set_backend("tiered"), LT_OK);
    assert_int_equal(lt_lazy_wait_compiles(), LT_OK);
    fflush(stdout);
    fflush(stderr);
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        int64_t swaps = counter("TierSwaps");
        double v = 0;
        lt_tensor *t = lt_arange(0, 77, 1, LT_F32, lt_device_parse("lazy"));
        lt_status st = lt_item(lt_sum(lt_mul_scalar(t, 5.0), NULL, 0, false), &v);
        lt_lazy_wait_compiles();
        _exit(st == LT_OK && v == 5.0 * 76 * 77 / 2 && counter("TierSwaps") == swaps + 1 ? 0 : 1);
    }
    int status = 0;
    assert_int_equal(waitpid(pid, &status, 0), pid);
    assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
}

static void test_backend_names(void **state)
{
    (void)state;
    assert_int_equal(lt_lazy_set_backend("tiered"), LT_OK);
    assert_string_equal(lt_lazy_backend(), "tiered");
    assert_int_equal(lt_lazy_set_backend("cpu"), LT_OK);
    assert_string_equal(lt_lazy_backend(), "cpu");
    assert_int_equal(lt_lazy_set_backend("tier"), LT_ERR_ARGUMENT);
    LT_EXPECT_ERROR(LT_ERR_ARGUMENT, "available: cpu, tiered, interp");
    assert_int_equal(lt_lazy_set_backend("tiered"), LT_OK);
}

/* ---- child processes ---------------------------------------------------------- */

typedef struct child_result {
    int status;
    char out[16384];
} child_result;

/* Runs this binary in child mode `mode` with a fresh cache directory and
 * the settings in env ("NAME=value", NULL-terminated). */
static void run_child(const char *mode, const char *const *env, child_result *r)
{
    static int serial;
    char cache[400];
    snprintf(cache, sizeof cache, "%s/child-cache-%d", test_dir, serial++);
    int fds[2];
    assert_int_equal(pipe(fds), 0);
    fflush(stdout);
    fflush(stderr);
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        dup2(fds[1], STDOUT_FILENO);
        dup2(fds[1], STDERR_FILENO);
        close(fds[0]);
        close(fds[1]);
        unsetenv("LT_BACKEND");
        unsetenv("LT_TIERED");
        setenv("LT_TEST_CHILD", mode, 1);
        setenv("LT_CACHE_DIR", cache, 1);
        for (int i = 0; env && env[i]; i++)
            putenv((char *)env[i]);
        execl("/proc/self/exe", "test_tiered", (char *)NULL);
        _exit(127);
    }
    close(fds[1]);
    size_t n = 0;
    ssize_t got;
    while ((got = read(fds[0], r->out + n, sizeof r->out - 1 - n)) > 0)
        n += (size_t)got;
    r->out[n] = '\0';
    close(fds[0]);
    int status = 0;
    waitpid(pid, &status, 0);
    r->status = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
    print_message("child %s (exit %d):\n%s", mode, r->status, r->out);
}

static long long field(const child_result *r, const char *name)
{
    const char *p = strstr(r->out, name);
    if (!p) {
        print_error("child output lacks %s:\n%s\n", name, r->out);
        fail();
    }
    return atoll(p + strlen(name));
}

/* A compiler that passes the toolchain check (--version and the probe
 * program, recognized by its sqrt loop) and then fails, or hangs, on every
 * real program. */
static void write_compiler(const char *path, const char *on_programs)
{
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fprintf(f,
            "#!/bin/sh\n"
            "for a in \"$@\"; do [ \"$a\" = --version ] && exec cc \"$@\"; done\n"
            "grep -q 'sqrt((double)i)' unit1.c 2>/dev/null && exec cc \"$@\"\n"
            "%s\n",
            on_programs);
    fclose(f);
    assert_int_equal(chmod(path, 0700), 0);
}

/* Child: two evaluations of a new graph (sum(relu(x - 10) * 2), x = 0..99)
 * around a wait for the background compiles, then a second graph. */
static int child_graphs(void)
{
    lt_device lazy = lt_device_parse("lazy");
    double v1 = 0, v2 = 0, v3 = 0;
    lt_tensor *x = lt_arange(0, 100, 1, LT_F32, lazy);
    lt_status st = lt_item(lt_sum(lt_mul_scalar(lt_relu(lt_sub_scalar(x, 10)), 2), NULL, 0, false), &v1);
    lt_lazy_wait_compiles();
    if (st == LT_OK)
        st = lt_item(lt_sum(lt_mul_scalar(lt_relu(lt_sub_scalar(x, 10)), 2), NULL, 0, false), &v2);
    long long compiles_after_first = (long long)counter("BackgroundCompiles");
    if (st == LT_OK)
        st = lt_item(lt_sum(lt_mul_scalar(x, 4), NULL, 0, false), &v3);
    lt_lazy_wait_compiles();
    printf("status=%d v1=%.17g v2=%.17g v3=%.17g backend=%s interp=%lld swaps=%lld failures=%lld errors=%lld "
           "queued_first=%lld queued=%lld\n",
           (int)st, v1, v2, v3, lt_lazy_backend(), (long long)counter("InterpTierRuns"), (long long)counter("TierSwaps"),
           (long long)counter("BackgroundCompileFailures"), (long long)counter("CompileErrors"), compiles_after_first,
           (long long)counter("BackgroundCompiles"));
    return st == LT_OK ? 0 : 1;
}

/* Child: a new graph whose build is queued or running when main returns. */
static int child_exit_while_compiling(void)
{
    mlp m;
    mlp_make(&m, lt_device_parse("lazy"), 23);
    mlp_steps(&m, 2);
    printf("queued=%lld\n", (long long)counter("BackgroundCompiles"));
    mlp_free(&m);
    return 0; /* the exit handler joins the build in progress */
}

static int child_main(const char *mode)
{
    lt_scope_begin();
    int rc = strcmp(mode, "exit") == 0 ? child_exit_while_compiling() : child_graphs();
    lt_scope_end();
    return rc;
}

static const double v_relu = 2.0 * (89.0 * 90.0 / 2.0), v_sum = 4.0 * (99.0 * 100.0 / 2.0);

static void test_default_backend_and_control(void **state)
{
    (void)state;
    child_result r;
    run_child("graphs", NULL, &r);
    assert_int_equal(r.status, 0);
    assert_non_null(strstr(r.out, "backend=tiered"));
    assert_true(field(&r, "interp=") >= 2); /* the first run of each of the two graphs */
    assert_int_equal(field(&r, "swaps="), field(&r, "queued="));
    const char *off[] = {"LT_TIERED=0", NULL};
    run_child("graphs", off, &r);
    assert_int_equal(r.status, 0);
    assert_non_null(strstr(r.out, "backend=cpu"));
    assert_int_equal(field(&r, "interp="), 0);
    assert_int_equal(field(&r, "queued="), 0);
    const char *named[] = {"LT_BACKEND=tiered", "LT_TIERED=0", NULL}; /* LT_BACKEND wins */
    run_child("graphs", named, &r);
    assert_non_null(strstr(r.out, "backend=tiered"));
}

/* Every real program fails to compile: results stay right, on interp. */
static void test_failed_background_compile(void **state)
{
    (void)state;
    char cc[400], env_cc[420];
    snprintf(cc, sizeof cc, "%s/failing-cc", test_dir);
    write_compiler(cc, "exit 1");
    snprintf(env_cc, sizeof env_cc, "LT_CC=%s", cc);
    const char *env[] = {env_cc, NULL};
    child_result r;
    run_child("graphs", env, &r);
    assert_int_equal(r.status, 0);
    assert_non_null(strstr(r.out, "backend=tiered"));
    assert_true(field(&r, "v1=") == v_relu && field(&r, "v2=") == v_relu && field(&r, "v3=") == v_sum);
    assert_int_equal(field(&r, "swaps="), 0);
    assert_int_equal(field(&r, "failures="), field(&r, "queued="));
    assert_true(field(&r, "failures=") >= 2);
    assert_true(field(&r, "errors=") >= 2);
    assert_true(field(&r, "interp=") >= 3); /* every run: no native program ever came */
    assert_non_null(strstr(r.out, "a background compile failed"));
    assert_null(strstr(r.out, "ERROR: "));
}

/* A compiler that hangs is killed at LT_CC_TIMEOUT; the graph stays on
 * interp and, the compiler being given up, later graphs queue no build. */
static void test_background_compile_timeout(void **state)
{
    (void)state;
    char cc[400], env_cc[420];
    snprintf(cc, sizeof cc, "%s/hanging-cc", test_dir);
    write_compiler(cc, "sleep 30");
    snprintf(env_cc, sizeof env_cc, "LT_CC=%s", cc);
    const char *env[] = {env_cc, "LT_CC_TIMEOUT=1", NULL};
    child_result r;
    run_child("graphs", env, &r);
    assert_int_equal(r.status, 0);
    assert_true(field(&r, "v1=") == v_relu && field(&r, "v2=") == v_relu && field(&r, "v3=") == v_sum);
    assert_int_equal(field(&r, "swaps="), 0);
    assert_int_equal(field(&r, "queued_first="), 1);
    assert_int_equal(field(&r, "queued="), 1); /* the second graph went straight to interp */
    assert_non_null(strstr(r.out, "LT_CC_TIMEOUT"));
}

/* Exit with a build queued or running: no crash, no leak (the ASan build
 * checks leaks at exit). */
static void test_exit_while_compiling(void **state)
{
    (void)state;
    child_result r;
    run_child("exit", NULL, &r);
    assert_int_equal(r.status, 0);
    assert_true(field(&r, "queued=") >= 1);
    assert_null(strstr(r.out, "ERROR: "));
}

int main(void)
{
    const char *mode = getenv("LT_TEST_CHILD");
    if (mode)
        return child_main(mode);
    char dir[] = "/tmp/lt_tiered_test_XXXXXX";
    if (!mkdtemp(dir))
        return 1;
    snprintf(test_dir, sizeof test_dir, "%s", dir);
    char cache[300];
    snprintf(cache, sizeof cache, "%s/cache", dir);
    setenv("LT_CACHE_DIR", cache, 1); /* cold: the first graphs take the first tier */
    unsetenv("LT_CC");
    unsetenv("LT_CFLAGS");
    unsetenv("LT_BACKEND");
    unsetenv("LT_TIERED");
    if (lt_lazy_set_backend("tiered") != LT_OK) {
        printf("no C compiler (%s): nothing to test\n", lt_last_error());
        return 0;
    }
    const struct CMUnitTest tests[] = {
        LT_TEST(test_tiered_matches_native_and_eager),
        LT_TEST(test_first_tier_loss_matches_native),
        LT_TEST(test_warm_disk_cache_skips_first_tier),
        LT_TEST(test_swap_with_executions_in_flight),
        LT_TEST(test_eviction_during_background_compile),
        LT_TEST(test_fork_child_builds),
        LT_TEST(test_backend_names),
        LT_TEST(test_default_backend_and_control),
        LT_TEST(test_failed_background_compile),
        LT_TEST(test_background_compile_timeout),
        LT_TEST(test_exit_while_compiling),
    };
    int failed = cmocka_run_group_tests(tests, NULL, NULL);
    char cmd[400];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    if (!failed && system(cmd) != 0)
        return 1;
    return failed;
}
