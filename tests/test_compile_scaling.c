/* test_compile_scaling.c - what keeps a compile linear in the size of its
 * graph: a long elementwise chain is cut into several kernels of bounded
 * size and its program into several translation units (cold ones among
 * them), and it still computes what the eager device, the interp backend
 * and a double-precision reference compute; a program of several units
 * (kernels with much and with little work) is built, keyed by its units and
 * loaded again from the disk cache; a unit that fails to compile fails the
 * barrier with its log. No timing is asserted: speed lives in
 * bench/compile_scaling. */
#include "lt_test.h"

#include "compiler/compiler.h"

#include <stdint.h>
#include <sys/wait.h>
#include <unistd.h>

#define CHAIN_OPS 10000 /* x = x * MULT + OFFSET, CHAIN_OPS / 2 times */
#define MULT 1.0001
#define OFFSET 0.5

static lt_device lazy(void) { return lt_device_parse("lazy"); }

static const float chain_start[4] = {1.0f, -2.0f, 3.5f, 0.25f};

/* Step i of a chain: x * MULT + OFFSET or (x + OFFSET) * MULT, picked by
 * a fixed pseudo-random bit sequence. Kernels of the same ops in the same
 * order share one function (render.c), so a chain of one repeated step
 * would be one small function; this one has no two kernels alike, and its
 * program stays large. */
static bool add_first(int i) { return ((uint32_t)i * 2654435761u >> 13) & 1; }

static lt_tensor *chain_step(lt_tensor *x, int i)
{
    return add_first(i) ? lt_mul_scalar(lt_add_scalar(x, OFFSET), MULT) : lt_add_scalar(lt_mul_scalar(x, MULT), OFFSET);
}

static double chain_step_ref(double x, int i) { return add_first(i) ? (x + OFFSET) * MULT : x * MULT + OFFSET; }

/* The chain on dev: every intermediate released at once, so the barrier
 * sees one root. Returns the final values (4). */
static void run_chain(lt_device dev, float *out)
{
    const int64_t four = 4;
    lt_scope_begin();
    lt_tensor *x = lt_retain(LT_OK_T(lt_from_data(chain_start, &four, 1, LT_F32, dev)));
    for (int i = 0; i < CHAIN_OPS / 2; i++) {
        lt_scope_begin();
        lt_tensor *y = lt_retain(LT_OK_T(chain_step(x, i)));
        lt_scope_end();
        lt_release(x);
        x = y;
    }
    if (dev.kind == LT_DEVICE_LAZY)
        assert_int_equal(lt_mark_step(), LT_OK);
    assert_int_equal(lt_copy_to_host(x, out, 4 * sizeof *out), LT_OK);
    lt_release(x);
    lt_scope_end();
}

/* The chain, compiled: many bounded kernels, several units, all of them
 * cold (4 elements: nothing to gain from heavy optimization). The values
 * are the eager device's and interp's to the bit (the same f32 operations
 * in the same order), and within f32 rounding of the chain in double. */
static void test_long_chain_splits_and_matches(void **state)
{
    (void)state;
    float eager[4], interp[4], compiled[4];
    run_chain(lt_device_cpu(), eager);
    assert_int_equal(lt_lazy_set_backend("interp"), LT_OK);
    run_chain(lazy(), interp);
    assert_int_equal(lt_lazy_set_backend("cpu"), LT_OK);
    lt_metrics_reset();
    run_chain(lazy(), compiled);
    assert_int_equal(lt_metrics_counter("GraphNodes"), 2 * CHAIN_OPS + 1); /* ops, their scalars, x */
    int64_t kernels = lt_metrics_counter("Kernels"), units = lt_metrics_counter("TranslationUnits");
    assert_true(kernels >= CHAIN_OPS / 256); /* bounded kernels: about 128 ops each */
    assert_true(units >= 4 && units <= LT_CC_MAX_UNITS);
    assert_int_equal(lt_metrics_counter("ColdUnits"), units);
    assert_int_equal(lt_metrics_counter("KernelCalls"), 0);
    for (int e = 0; e < 4; e++) {
        double ref = chain_start[e];
        for (int i = 0; i < CHAIN_OPS / 2; i++)
            ref = chain_step_ref(ref, i);
        assert_memory_equal(&compiled[e], &eager[e], sizeof(float));
        assert_memory_equal(&interp[e], &eager[e], sizeof(float));
        assert_true(fabs(compiled[e] - ref) <= 1e-4 * fabs(ref)); /* 5,000 f32 roundings */
    }
}

/* A program with kernels of much work (softmax and elementwise ops over
 * 64 x 512) and of little (a chain over 4 elements): hot, warm and cold
 * units apart, same values as eager. */
static int64_t units, cold, warm; /* of mixed_program's program */

static void mixed_program(lt_device dev, double *big_out, float *small_out)
{
    const int64_t four = 4, dims[2] = {64, 512};
    lt_scope_begin();
    double *v = malloc(sizeof *v * 64 * 512);
    for (int i = 0; i < 64 * 512; i++)
        v[i] = sin(i * 0.37);
    lt_tensor *big = LT_OK_T(lt_to(LT_OK_T(lt_test_tensor(v, dims, 2, LT_F32)), dev));
    free(v);
    for (int k = 0; k < 24; k++) { /* each softmax is a kernel of its own, k + 1 steps of input each */
        for (int i = 0; i <= k; i++)
            big = chain_step(big, i);
        big = lt_softmax(lt_mul_scalar(big, 3.0 + k * 0.01), k % 2);
    }
    lt_tensor *small = LT_OK_T(lt_from_data(chain_start, &four, 1, LT_F32, dev));
    for (int i = 0; i < 1500; i++)
        small = chain_step(small, i);
    lt_keep(LT_OK_T(big));
    lt_keep(LT_OK_T(small));
    lt_scope_end();
    if (dev.kind == LT_DEVICE_LAZY) {
        assert_int_equal(lt_mark_step(), LT_OK);
        units = lt_metrics_counter("TranslationUnits");
        cold = lt_metrics_counter("ColdUnits");
        warm = lt_metrics_counter("WarmUnits");
    }
    double *values = lt_test_values(big);
    memcpy(big_out, values, sizeof *big_out * 64 * 512);
    free(values);
    assert_int_equal(lt_copy_to_host(small, small_out, 4 * sizeof *small_out), LT_OK);
    lt_release(big);
    lt_release(small);
}

static void test_hot_and_cold_units(void **state)
{
    (void)state;
    double *eager = malloc(sizeof *eager * 64 * 512), *compiled = malloc(sizeof *compiled * 64 * 512);
    float eager_small[4], compiled_small[4];
    mixed_program(lt_device_cpu(), eager, eager_small);
    lt_metrics_reset();
    mixed_program(lazy(), compiled, compiled_small);
    assert_true(cold >= 1);
    assert_true(warm >= 1);         /* the softmaxes beyond the hot quarter of the compile cost */
    assert_true(units > cold + warm); /* and at least one hot unit */
    for (int i = 0; i < 64 * 512; i++)
        assert_true(fabs(compiled[i] - eager[i]) <= 1e-6 * (1 + fabs(eager[i])));
    assert_memory_equal(compiled_small, eager_small, sizeof eager_small);
    free(eager);
    free(compiled);
}

/* ---- lt_cc_load with several units --------------------------------------------------------- */

/* A program of three units: two define a function each, the last the
 * entry point that calls both (the second unit cold). */
static const char three_units[] =
    "__attribute__((visibility(\"hidden\"))) int twice(int x) { return 2 * x; }\n"
    "__attribute__((visibility(\"hidden\"))) int plus_one(int x) { return x + 1; }\n"
    "int twice(int x);\n"
    "int plus_one(int x);\n"
    "int lt_program_entry(void *const *B, const double *S, const void *rt)\n"
    "{\n"
    "    (void)S, (void)rt;\n"
    "    *(int *)B[0] = plus_one(twice(*(int *)B[0]));\n"
    "    return 0;\n"
    "}\n";

static void split_three(lt_cc_unit *u)
{
    const char *second = strstr(three_units, "__attribute__((visibility(\"hidden\"))) int plus_one");
    const char *third = strstr(three_units, "int twice(int x);");
    size_t a = (size_t)(second - three_units), b = (size_t)(third - three_units);
    u[0] = (lt_cc_unit){0, a, LT_CC_HOT};
    u[1] = (lt_cc_unit){a, b, LT_CC_COLD};
    u[2] = (lt_cc_unit){b, sizeof three_units - 1, LT_CC_HOT};
}

static int run_entry(void *entry, int x)
{
    int (*fn)(void *const *, const double *, const void *) = (int (*)(void *const *, const double *, const void *))entry;
    void *B[1] = {&x};
    assert_int_equal(fn(B, NULL, NULL), 0);
    return x;
}

/* Built once, then loaded from the disk cache: same key, same code. The
 * same text cut differently, or with other flags, is another program. */
static void test_units_load_from_disk_cache(void **state)
{
    (void)state;
    if (!lt_cc_available(NULL, 0))
        skip();
    lt_cc_unit u[3];
    split_three(u);
    void *h1 = NULL, *e1 = NULL, *h2 = NULL, *e2 = NULL, *h3 = NULL, *e3 = NULL;
    char key1[33], key2[33], key3[33];
    lt_metrics_reset();
    assert_int_equal(lt_cc_load(three_units, u, 3, &h1, &e1, key1), LT_OK);
    assert_int_equal(lt_metrics_counter("DiskCacheMiss"), 1);
    assert_int_equal(run_entry(e1, 20), 41);
    assert_int_equal(lt_cc_load(three_units, u, 3, &h2, &e2, key2), LT_OK);
    assert_int_equal(lt_metrics_counter("DiskCacheHit"), 1);
    assert_int_equal(lt_metrics_counter("DiskCacheMiss"), 1);
    assert_string_equal(key1, key2);
    assert_int_equal(run_entry(e2, -3), -5);
    u[1].tier = LT_CC_WARM; /* other flags: another key */
    assert_int_equal(lt_cc_load(three_units, u, 3, &h3, &e3, key3), LT_OK);
    assert_string_not_equal(key1, key3);
    assert_int_equal(run_entry(e3, 1), 3);
    lt_cc_unload(h1);
    lt_cc_unload(h2);
    lt_cc_unload(h3);
    assert_int_equal(lt_metrics_counter("DiskCacheMiss"), 2);
}

static void test_bad_units_are_refused(void **state)
{
    (void)state;
    lt_cc_unit u[LT_CC_MAX_UNITS + 1] = {{0, 4, LT_CC_HOT}};
    void *h = NULL, *e = NULL;
    char key[33];
    assert_int_equal(lt_cc_load(three_units, u, 0, &h, &e, key), LT_ERR_ARGUMENT);
    assert_int_equal(lt_cc_load(three_units, u, LT_CC_MAX_UNITS + 1, &h, &e, key), LT_ERR_ARGUMENT);
    u[0] = (lt_cc_unit){5, 4, LT_CC_HOT};
    assert_int_equal(lt_cc_load(three_units, u, 1, &h, &e, key), LT_ERR_ARGUMENT);
    lt_clear_error();
}

/* ---- a failing unit ----------------------------------------------------------------------------- */

/* Child mode: cold units get a flag the compiler refuses, so a program
 * of several cold units fails; prints the status, the message and the
 * counters. */
static int child_bad_cold(void)
{
    lt_device lz = lazy();
    const int64_t four = 4;
    lt_scope_begin();
    lt_tensor *x = lt_from_data(chain_start, &four, 1, LT_F32, lz);
    for (int i = 0; i < 1500; i++)
        x = chain_step(x, i);
    lt_keep(x);
    lt_scope_end();
    lt_status st = lt_mark_step();
    printf("status=%d units=%lld errors=%lld\nmessage=%s\n", (int)st, (long long)lt_metrics_counter("TranslationUnits"),
           (long long)lt_metrics_counter("CompileErrors"), st == LT_OK ? "" : lt_last_error());
    return 0;
}

/* A unit that fails to compile fails the barrier with the compiler's log,
 * keeps that unit's source, and stops the other compiler runs. */
static void test_failing_unit_is_reported(void **state)
{
    (void)state;
    int fds[2];
    assert_int_equal(pipe(fds), 0);
    fflush(stdout);
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        dup2(fds[1], STDOUT_FILENO);
        dup2(fds[1], STDERR_FILENO);
        close(fds[0]);
        setenv("LT_TEST_CHILD", "bad_cold", 1);
        setenv("LT_TIERED", "0", 1); /* the compile error at the barrier, not in the background */
        setenv("LT_CFLAGS_COLD", "-O1 -fno-such-option-for-lazytensor", 1);
        execl("/proc/self/exe", "test_compile_scaling", (char *)NULL);
        _exit(127);
    }
    close(fds[1]);
    char out[8192];
    size_t n = 0;
    for (ssize_t got; (got = read(fds[0], out + n, sizeof out - 1 - n)) > 0;)
        n += (size_t)got;
    out[n] = '\0';
    close(fds[0]);
    int status = 0;
    waitpid(pid, &status, 0);
    assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
    char expect[32];
    snprintf(expect, sizeof expect, "status=%d ", (int)LT_ERR_UNSUPPORTED);
    if (!strstr(out, expect) || !strstr(out, "errors=1") || !strstr(out, "-part") ||
        !strstr(out, ".failed.c") || !strstr(out, "no-such-option")) {
        print_error("unexpected child output:\n%s\n", out);
        fail();
    }
}

int main(void)
{
    const char *mode = getenv("LT_TEST_CHILD");
    if (mode && strcmp(mode, "bad_cold") == 0)
        return child_bad_cold();
    char dir[] = "/tmp/lt_scaling_test_XXXXXX"; /* a fresh cache: every build is real */
    if (!mkdtemp(dir))
        return 1;
    setenv("LT_CACHE_DIR", dir, 1);
    unsetenv("LT_CC");
    unsetenv("LT_CFLAGS");
    unsetenv("LT_CFLAGS_COLD");
    unsetenv("LT_BACKEND");
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_long_chain_splits_and_matches),
        cmocka_unit_test(test_hot_and_cold_units),
        cmocka_unit_test(test_units_load_from_disk_cache),
        cmocka_unit_test(test_bad_units_are_refused),
        cmocka_unit_test(test_failing_unit_is_reported),
    };
    int failed = cmocka_run_group_tests(tests, NULL, NULL);
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    if (system(cmd) != 0)
        fprintf(stderr, "could not remove %s\n", dir);
    return failed;
}
