/* test_compiler.c - the cpu compiler backend: fusion asserted by kernel
 * counts, values of fused kernels against independent formulas, scalars as
 * runtime parameters, donation, every dtype through generated code, the
 * disk cache across processes (hits, corrupted and truncated files, two
 * processes compiling at once, eviction), compile errors, and the fallback
 * to interp when there is no compiler.
 *
 * Cache tests run this binary again (fork + exec of /proc/self/exe with
 * LT_TEST_CHILD set): a new process has an empty in-memory program cache,
 * so whatever it does not compile came from the disk cache. Every process
 * uses its own temporary LT_CACHE_DIR. */
#include "lt_test.h"

#include <dirent.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

static char test_dir[256]; /* this process's cache, under a private temporary dir */

static lt_device lazy(void) { return lt_device_parse("lazy"); }

/* A lazy f32 tensor of n values sin(0.37 i + shift) * scale (made on the host). */
static double seq_value(int64_t i, double scale, double shift) { return sin(0.37 * (double)i + shift) * scale; }

static lt_tensor *lazy_seq(const int64_t *dims, int nd, lt_dtype dt, double scale, double shift)
{
    int64_t n = 1;
    for (int d = 0; d < nd; d++)
        n *= dims[d];
    double *v = malloc(sizeof *v * (size_t)(n ? n : 1));
    for (int64_t i = 0; i < n; i++) {
        double x = seq_value(i, scale, shift);
        v[i] = dt == LT_BOOL ? x > 0 : lt_dtype_is_floating(dt) ? x : floor(x);
    }
    lt_tensor *t = LT_OK_T(lt_to(LT_OK_T(lt_test_tensor(v, dims, nd, dt)), lazy()));
    free(v);
    return t;
}

/* Runs the barrier for the tensors the caller kept and returns the kernel
 * count of the program it compiled. */
static int64_t step_kernels(void)
{
    assert_int_equal(lt_mark_step(), LT_OK);
    return lt_metrics_counter("Kernels");
}

/* ---- fusion: kernel counts and values ---------------------------------------------------- */

/* relu(a * b + c) * 0.5 is one kernel; its generated C takes 0.5 as a
 * runtime parameter. */
static void test_chain_is_one_kernel(void **state)
{
    (void)state;
    char dump[300];
    snprintf(dump, sizeof dump, "%s/dump", test_dir);
    setenv("LT_DUMP_KERNELS", dump, 1);
    int64_t n = 1000;
    lt_tensor *a = lazy_seq(&n, 1, LT_F32, 1, 0), *b = lazy_seq(&n, 1, LT_F32, 2, 1), *c = lazy_seq(&n, 1, LT_F32, 1, 2);
    lt_metrics_reset();
    lt_scope_begin();
    lt_tensor *y = lt_keep(LT_OK_T(lt_mul_scalar(lt_relu(lt_add(lt_mul(a, b), c)), 0.5)));
    lt_scope_end();
    assert_int_equal(step_kernels(), 1);
    assert_int_equal(lt_metrics_counter("KernelCalls"), 0);
    unsetenv("LT_DUMP_KERNELS");
    double *expect = malloc(sizeof *expect * (size_t)n);
    for (int64_t i = 0; i < n; i++) {
        float ab = (float)seq_value(i, 1, 0) * (float)seq_value(i, 2, 1);
        float s = ab + (float)seq_value(i, 1, 2);
        expect[i] = (s > 0 ? s : 0) * 0.5;
    }
    LT_ASSERT_ARRAY(y, expect, n, 1e-6);
    free(expect);
    /* the generated source: one kernel, the scalar read from S[] */
    DIR *d = opendir(dump);
    assert_non_null(d);
    bool found = false;
    for (struct dirent *e; (e = readdir(d));) {
        char path[600];
        snprintf(path, sizeof path, "%s/%s", dump, e->d_name);
        FILE *f = fopen(path, "r");
        if (!f)
            continue;
        static char src[1 << 16];
        size_t len = fread(src, 1, sizeof src - 1, f);
        src[len] = '\0';
        fclose(f);
        if (!strstr(src, "relu"))
            continue;
        found = true;
        assert_non_null(strstr(src, "1 kernels (1 pointwise, 0 row, 0 calls)"));
        assert_non_null(strstr(src, "S[0]"));
        assert_null(strstr(src, "0.5"));
        assert_non_null(strstr(src, "restrict"));
        assert_non_null(strstr(src, "int lt_program_entry("));
    }
    closedir(d);
    assert_true(found);
}

/* relu(x + s) * (s + 2) on the host, in f32 like the kernel. */
static float shifted_relu(float x, double s)
{
    float t = x + (float)s;
    return (t > 0 ? t : 0) * (float)(s + 2);
}

/* Kernels that differ only in their buffers and scalars share one
 * function: the same elementwise chain before and after a matmul, with
 * different runtime scalars, is two kernels and one function; a third
 * chain with a baked scalar (1, not a parameter) gets its own. */
static void test_shared_kernel_functions(void **state)
{
    (void)state;
    int64_t dims[2] = {16, 16};
    lt_tensor *x = lazy_seq(dims, 2, LT_F32, 1, 0), *w = lazy_seq(dims, 2, LT_F32, 0.25, 1);
    const double s1 = 0.3, s2 = 0.7;
    lt_metrics_reset();
    lt_scope_begin();
    lt_tensor *h = lt_mul_scalar(lt_relu(lt_add_scalar(x, s1)), s1 + 2);
    lt_tensor *z = lt_matmul(h, w);
    lt_tensor *y = lt_keep(LT_OK_T(lt_mul_scalar(lt_relu(lt_add_scalar(z, s2)), s2 + 2)));
    lt_scope_end();
    assert_int_equal(step_kernels(), 3);
    assert_int_equal(lt_metrics_counter("KernelCalls"), 1);
    assert_int_equal(lt_metrics_counter("KernelFunctions"), 1);
    float hv[256], expect_f[256];
    for (int i = 0; i < 256; i++)
        hv[i] = shifted_relu((float)seq_value(i, 1, 0), s1);
    double expect[256];
    for (int r = 0; r < 16; r++)
        for (int c = 0; c < 16; c++) {
            double acc = 0;
            for (int k = 0; k < 16; k++)
                acc += (double)hv[r * 16 + k] * (double)(float)seq_value(k * 16 + c, 0.25, 1);
            expect_f[r * 16 + c] = shifted_relu((float)acc, s2);
            expect[r * 16 + c] = expect_f[r * 16 + c];
        }
    LT_ASSERT_ARRAY(y, expect, 256, 1e-5);
    /* with the scalar 1 (baked into the text) the second chain differs */
    lt_metrics_reset();
    lt_scope_begin();
    lt_tensor *h2 = lt_mul_scalar(lt_relu(lt_add_scalar(x, s1)), s1 + 2);
    lt_keep(LT_OK_T(lt_mul_scalar(lt_relu(lt_add_scalar(lt_matmul(h2, w), 1.0)), 3.0)));
    lt_scope_end();
    assert_int_equal(step_kernels(), 3);
    assert_int_equal(lt_metrics_counter("KernelFunctions"), 2);
}

/* softmax and log_softmax over the rows of [N, D]: one kernel each. */
static void test_softmax_kernels(void **state)
{
    (void)state;
    int64_t dims[2] = {64, 100};
    lt_tensor *x = lazy_seq(dims, 2, LT_F32, 3, 0.5);
    for (int log_form = 0; log_form < 2; log_form++) {
        lt_scope_begin();
        lt_tensor *y = lt_keep(LT_OK_T(log_form ? lt_log_softmax(x, 1) : lt_softmax(x, -1)));
        lt_scope_end();
        int64_t k = step_kernels();
        assert_true(k >= 1 && k <= 2);
        double *v = lt_test_values(y);
        for (int64_t r = 0; r < dims[0]; r++) {
            double m = -INFINITY, s = 0;
            for (int64_t j = 0; j < dims[1]; j++)
                m = fmax(m, (float)seq_value(r * dims[1] + j, 3, 0.5));
            for (int64_t j = 0; j < dims[1]; j++)
                s += exp((float)seq_value(r * dims[1] + j, 3, 0.5) - m);
            for (int64_t j = 0; j < dims[1]; j++) {
                double xv = (float)seq_value(r * dims[1] + j, 3, 0.5);
                double e = log_form ? xv - m - log(s) : exp(xv - m) / s;
                assert_true(fabs(v[r * dims[1] + j] - e) <= 1e-5 * (1 + fabs(e)));
            }
        }
        free(v);
    }
}

/* Layer-norm: the row statistics (mean, variance) in one kernel, the
 * normalization in a second. */
static void test_layer_norm_two_kernels(void **state)
{
    (void)state;
    int64_t dims[2] = {32, 48};
    int row[1] = {1};
    lt_tensor *x = lazy_seq(dims, 2, LT_F32, 2, 0.1);
    lt_scope_begin();
    lt_tensor *mean = lt_mean(x, row, 1, true), *var = lt_var(x, row, 1, 0, true);
    lt_tensor *y = lt_keep(LT_OK_T(lt_mul(lt_sub(x, mean), lt_rsqrt(lt_add_scalar(var, 1e-5)))));
    lt_scope_end();
    assert_int_equal(step_kernels(), 2);
    double *v = lt_test_values(y);
    for (int64_t r = 0; r < dims[0]; r++) {
        double m = 0, q = 0;
        for (int64_t j = 0; j < dims[1]; j++)
            m += (float)seq_value(r * dims[1] + j, 2, 0.1);
        m /= (double)dims[1];
        for (int64_t j = 0; j < dims[1]; j++)
            q += pow((float)seq_value(r * dims[1] + j, 2, 0.1) - m, 2);
        double inv = 1 / sqrt(q / (double)dims[1] + 1e-5);
        for (int64_t j = 0; j < dims[1]; j++) {
            double e = ((float)seq_value(r * dims[1] + j, 2, 0.1) - m) * inv;
            assert_true(fabs(v[r * dims[1] + j] - e) <= 1e-5 * (1 + fabs(e)));
        }
    }
    free(v);
}

/* A reduction absorbs its elementwise producer and its epilogue. */
static void test_reduction_fuses_producer_and_epilogue(void **state)
{
    (void)state;
    int64_t dims[3] = {5, 7, 9};
    int red[2] = {0, 2};
    lt_tensor *x = lazy_seq(dims, 3, LT_F32, 1.5, 0.3);
    lt_scope_begin();
    lt_tensor *y = lt_keep(LT_OK_T(lt_add_scalar(lt_sqrt(lt_sum(lt_mul(x, x), red, 2, false)), 1)));
    lt_scope_end();
    assert_int_equal(step_kernels(), 1);
    double expect[7];
    for (int j = 0; j < 7; j++) {
        double s = 0;
        for (int i = 0; i < 5; i++)
            for (int k = 0; k < 9; k++) {
                float v = (float)seq_value((i * 7 + j) * 9 + k, 1.5, 0.3);
                s += (double)(v * v);
            }
        expect[j] = sqrt(s) + 1;
    }
    LT_ASSERT_ARRAY(y, expect, 7, 1e-6);
}

/* matmul runs as an eager call reading the transposed weight in place; the
 * bias add and relu that follow are one kernel. */
static void test_matmul_epilogue(void **state)
{
    (void)state;
    int64_t xd[2] = {8, 16}, wd[2] = {32, 16}, bd[1] = {32};
    lt_tensor *x = lazy_seq(xd, 2, LT_F32, 1, 0), *w = lazy_seq(wd, 2, LT_F32, 0.5, 1), *b = lazy_seq(bd, 1, LT_F32, 1, 2);
    lt_scope_begin();
    lt_tensor *y = lt_keep(LT_OK_T(lt_relu(lt_add(lt_matmul(x, lt_transpose(w, 0, 1)), b))));
    lt_scope_end();
    assert_int_equal(step_kernels(), 2);
    assert_int_equal(lt_metrics_counter("KernelCalls"), 1);
    double *v = lt_test_values(y);
    for (int i = 0; i < 8; i++)
        for (int o = 0; o < 32; o++) {
            double s = seq_value(o, 1, 2);
            for (int k = 0; k < 16; k++)
                s += (double)(float)seq_value(i * 16 + k, 1, 0) * (double)(float)seq_value(o * 16 + k, 0.5, 1);
            double e = s > 0 ? s : 0;
            assert_true(fabs(v[i * 32 + o] - e) <= 1e-4 * (1 + fabs(e)));
        }
    free(v);
}

/* Views are index arithmetic: permute, slice, select and expand feed one
 * kernel without copies. */
static void test_views_fuse(void **state)
{
    (void)state;
    int64_t dims[3] = {4, 6, 5};
    lt_tensor *x = lazy_seq(dims, 3, LT_F64, 1, 0);
    lt_scope_begin();
    lt_tensor *p = lt_slice(lt_permute(x, (int[]){2, 0, 1}, 3), 2, 1, 6, 2); /* [5, 4, 3] */
    lt_tensor *s = lt_expand(lt_unsqueeze(lt_select(x, 1, 3), 2), (int64_t[]){4, 5, 3}, 3);
    lt_tensor *y = lt_keep(LT_OK_T(lt_add(p, lt_permute(s, (int[]){1, 0, 2}, 3))));
    lt_scope_end();
    assert_int_equal(step_kernels(), 1);
    double expect[60];
    for (int a = 0; a < 5; a++)
        for (int b = 0; b < 4; b++)
            for (int c = 0; c < 3; c++)
                expect[(a * 4 + b) * 3 + c] = seq_value((b * 6 + (1 + 2 * c)) * 5 + a, 1, 0) +
                                              seq_value((b * 6 + 3) * 5 + a, 1, 0);
    LT_ASSERT_ARRAY(y, expect, 60, 1e-12);
}

/* An intermediate with two consumers: recomputed when cheap, materialized
 * when costly; either way the values are right. */
static void test_shared_intermediates(void **state)
{
    (void)state;
    int64_t n = 300;
    lt_tensor *x = lazy_seq(&n, 1, LT_F64, 1, 0);
    for (int costly = 0; costly < 2; costly++) {
        lt_scope_begin();
        lt_tensor *y = costly ? lt_exp(lt_add_scalar(lt_mul_scalar(lt_sin(lt_cos(x)), 3), 1))
                              : lt_add_scalar(lt_mul_scalar(x, 2), 1);
        lt_tensor *twice = lt_keep(lt_mul_scalar(y, 3));
        lt_tensor *total = lt_keep(lt_sum(y, NULL, 0, false));
        lt_scope_end();
        assert_int_equal(step_kernels(), 2);
        double sum = 0, *v = lt_test_values(twice), t;
        for (int64_t i = 0; i < n; i++) {
            double xv = seq_value(i, 1, 0), yv = costly ? exp(sin(cos(xv)) * 3 + 1) : xv * 2 + 1;
            sum += yv;
            assert_true(fabs(v[i] - 3 * yv) <= 1e-12 * (1 + fabs(yv)));
        }
        free(v);
        assert_int_equal(lt_item(total, &t), LT_OK);
        assert_true(fabs(t - sum) <= 1e-9 * fabs(sum));
    }
}

/* Reductions over the leading dim (column mode: blocks of outputs
 * accumulate whole rows) match eager for every reduction kind. */
static void test_column_reductions_match_eager(void **state)
{
    (void)state;
    int64_t dims[3] = {40, 3, 300};
    int lead[1] = {0}, outer[2] = {0, 1};
    for (int kind = 0; kind < 13; kind++) {
        lt_tensor *res[2];
        for (int dev = 0; dev < 2; dev++) {
            lt_scope_begin();
            lt_tensor *x = lazy_seq(dims, 3, LT_F32, 2, 0.7), *idx = NULL;
            if (dev == 0)
                x = lt_to(x, lt_device_cpu());
            lt_tensor *r = NULL;
            switch (kind) {
            case 0: r = lt_sum(x, lead, 1, false); break;
            case 1: r = lt_mean(x, outer, 2, true); break;
            case 2: r = lt_prod(lt_add_scalar(lt_mul_scalar(x, 0.1), 1), lead, 1, false); break;
            case 3: r = lt_amax(x, lead, 1, false); break;
            case 4: r = lt_amin(x, outer, 2, false); break;
            case 5: r = lt_var(x, lead, 1, 1, false); break;
            case 6: r = lt_std(x, outer, 2, 0, true); break;
            case 7: r = lt_logsumexp(x, lead, 1, false); break;
            case 8: r = lt_to_dtype(lt_argmax(x, 0, false), LT_F32); break;
            case 9: r = lt_to_dtype(lt_argmin(x, 0, true), LT_F32); break;
            case 10: r = lt_to_dtype(lt_all(lt_gt(x, lt_scalar(-1.9, LT_F32, lt_tensor_device(x))), lead, 1, false), LT_F32); break;
            case 11: r = lt_to_dtype(lt_any(lt_gt(x, lt_scalar(1.99, LT_F32, lt_tensor_device(x))), lead, 1, false), LT_F32); break;
            default:
                r = lt_max_dim(x, 0, false, &idx);
                r = r && idx ? lt_add(r, lt_to_dtype(idx, LT_F32)) : NULL;
                break;
            }
            res[dev] = lt_keep(LT_OK_T(lt_to(LT_OK_T(r), lt_device_cpu())));
            lt_scope_end();
        }
        int64_t n = lt_tensor_numel(res[0]);
        assert_int_equal(lt_tensor_numel(res[1]), n);
        double *e = lt_test_values(res[0]);
        LT_ASSERT_ARRAY(res[1], e, n, 1e-6);
        free(e);
    }
}

/* An MLP training step (forward, backward, SGD): matmuls are BLAS calls,
 * everything else is fused; no kernel only copies. */
static void test_mlp_step_kernels(void **state)
{
    (void)state;
    char dump[300];
    snprintf(dump, sizeof dump, "%s/mlp_dump", test_dir);
    setenv("LT_DUMP_KERNELS", dump, 1);
    lt_device dev = lazy();
    int64_t batch = 32;
    lt_manual_seed(5);
    lt_module *l[] = {lt_nn_linear(64, 48, true, dev), lt_nn_relu(), lt_nn_linear(48, 48, true, dev), lt_nn_relu(),
                      lt_nn_linear(48, 10, true, dev)};
    lt_module *m = lt_nn_sequential(l, 5);
    lt_tensor *params[8];
    int np = lt_module_parameters(m, params, NULL, 8);
    lt_optimizer *o = lt_optim_sgd(params, np, 0.01, 0, 0, false);
    lt_tensor *x = LT_OK_T(lt_randn((int64_t[]){batch, 64}, 2, LT_F32, dev));
    lt_tensor *y = LT_OK_T(lt_randint(0, 10, &batch, 1, LT_I64, dev));
    assert_int_equal(lt_mark_step(), LT_OK);
    lt_step_begin();
    lt_tensor *loss = LT_OK_T(lt_cross_entropy(lt_module_forward(m, x), y, 0));
    assert_int_equal(lt_backward(loss, NULL), LT_OK);
    assert_int_equal(lt_optim_step(o), LT_OK);
    assert_int_equal(lt_step_end(), LT_OK);
    unsetenv("LT_DUMP_KERNELS");
    int64_t kernels = lt_metrics_counter("Kernels"), calls = lt_metrics_counter("KernelCalls");
    print_message("MLP step: %lld kernels, %lld of them eager calls\n", (long long)kernels, (long long)calls);
    assert_true(kernels <= 23);
    /* the step's program: every compiled kernel computes something */
    DIR *d = opendir(dump);
    assert_non_null(d);
    int programs = 0;
    for (struct dirent *e; (e = readdir(d));) {
        char path[600];
        snprintf(path, sizeof path, "%s/%s", dump, e->d_name);
        FILE *f = fopen(path, "r");
        if (!f)
            continue;
        static char src[1 << 18];
        size_t len = fread(src, 1, sizeof src - 1, f);
        src[len] = '\0';
        fclose(f);
        if (!strstr(src, "matmul"))
            continue;
        programs++;
        for (const char *k = strstr(src, "/* kernel "); k; k = strstr(k + 1, "/* kernel ")) {
            const char *pw = strstr(k, "pointwise over "), *colon = strstr(k, "]: "), *arrow = strstr(k, " -> ");
            if (pw && arrow && pw < arrow && colon && colon < arrow)
                assert_true(arrow > colon + 2); /* "pointwise over [..]: <ops> -> B[..]" lists ops */
        }
    }
    closedir(d);
    assert_true(programs >= 1);
    lt_optim_free(o);
    lt_module_free(m);
}

/* ---- scalars, donation, dtypes, edge shapes ------------------------------------------------ */

/* A changing scalar is a runtime parameter: one compile, then cache hits. */
static void test_scalars_never_recompile(void **state)
{
    (void)state;
    int64_t n = 64;
    lt_tensor *x = lazy_seq(&n, 1, LT_F32, 1, 0);
    lt_metrics_reset();
    for (int step = 0; step < 5; step++) {
        double s = 0.3 + 0.1 * step, got;
        lt_scope_begin();
        assert_int_equal(lt_item(lt_sum(lt_mul_scalar(lt_clamp(x, -s, s), s + 2), NULL, 0, false), &got), LT_OK);
        lt_scope_end();
        double expect = 0;
        for (int64_t i = 0; i < n; i++)
            expect += fmin(fmax((float)seq_value(i, 1, 0), (float)-s), (float)s) * (float)(s + 2);
        assert_true(fabs(got - expect) <= 1e-5 * (1 + fabs(expect)));
    }
    assert_int_equal(lt_metrics_counter("UncachedCompile"), 1);
    assert_int_equal(lt_metrics_counter("CachedCompile"), 4);
}

/* An SGD update writes into the donated parameter buffer; an update that
 * reads the parameter at another position (a transpose) must not. */
static void test_donation(void **state)
{
    (void)state;
    int64_t dims[2] = {16, 16};
    lt_tensor *w = lazy_seq(dims, 2, LT_F32, 1, 0), *g = lazy_seq(dims, 2, LT_F32, 1, 1);
    lt_metrics_reset();
    lt_scope_begin();
    lt_sub_(w, lt_mul_scalar(g, 0.5));
    lt_scope_end();
    assert_int_equal(lt_mark_step(), LT_OK);
    assert_int_equal(lt_metrics_counter("DonatedBuffers"), 1);
    double expect[256];
    for (int i = 0; i < 256; i++)
        expect[i] = (float)seq_value(i, 1, 0) - (float)((float)seq_value(i, 1, 1) * 0.5f);
    LT_ASSERT_ARRAY(w, expect, 256, 1e-6);
    lt_metrics_reset();
    lt_scope_begin();
    lt_add_(w, lt_transpose(w, 0, 1));
    lt_scope_end();
    assert_int_equal(lt_mark_step(), LT_OK);
    assert_int_equal(lt_metrics_counter("DonatedBuffers"), 0);
    double sym[256];
    for (int i = 0; i < 16; i++)
        for (int j = 0; j < 16; j++)
            sym[i * 16 + j] = expect[i * 16 + j] + expect[j * 16 + i];
    LT_ASSERT_ARRAY(w, sym, 256, 1e-6);
}

/* Elementwise chains with a strided view in every dtype match eager. */
static void test_every_dtype_matches_eager(void **state)
{
    (void)state;
    const lt_dtype dts[] = {LT_F32, LT_F64, LT_I32, LT_I64, LT_U8, LT_BOOL, LT_BF16, LT_F16};
    int64_t dims[2] = {6, 5};
    for (size_t k = 0; k < sizeof dts / sizeof dts[0]; k++) {
        lt_dtype dt = dts[k];
        lt_tensor *res[2];
        for (int dev = 0; dev < 2; dev++) {
            lt_scope_begin();
            lt_tensor *x = lazy_seq(dims, 2, dt, 9, 0.2), *y = lazy_seq(dims, 2, dt, 7, 1.1);
            if (dev == 0) {
                x = lt_to(x, lt_device_cpu());
                y = lt_to(y, lt_device_cpu());
            }
            lt_tensor *t = lt_slice(lt_transpose(y, 0, 1), 0, 0, 5, 1); /* [5, 6] */
            lt_tensor *r = dt == LT_BOOL ? lt_logical_or(lt_logical_and(lt_transpose(x, 0, 1), t), lt_logical_not(t))
                                         : lt_maximum(lt_add(lt_mul(lt_transpose(x, 0, 1), t), t), lt_neg(t));
            res[dev] = lt_keep(LT_OK_T(lt_to(lt_to_dtype(r, LT_F64), lt_device_cpu())));
            lt_scope_end();
        }
        double *e = lt_test_values(res[0]);
        LT_ASSERT_ARRAY(res[1], e, 30, 0);
        free(e);
    }
}

/* Empty tensors, 0-d tensors and reductions over nothing. */
static void test_edge_shapes(void **state)
{
    (void)state;
    lt_tensor *e = LT_OK_T(lt_zeros((int64_t[]){0, 3}, 2, LT_F32, lazy()));
    lt_tensor *s = LT_OK_T(lt_to(LT_T(LT_F32, LT_DIMS(1), 2.5), lazy()));
    lt_tensor *z = LT_OK_T(lt_squeeze_all(s)); /* 0-d */
    lt_tensor *r1 = LT_OK_T(lt_relu(lt_add_scalar(e, 1)));
    lt_tensor *r2 = LT_OK_T(lt_sum(e, (int[]){0}, 1, false));
    lt_tensor *r3 = LT_OK_T(lt_mean(e, NULL, 0, false));
    lt_tensor *r4 = LT_OK_T(lt_mul(z, lt_exp(z)));
    assert_int_equal(lt_mark_step(), LT_OK);
    LT_ASSERT_SHAPE(r1, 0, 3);
    LT_ASSERT_VALUES(r2, 0, 0, 0, 0);
    double m;
    assert_int_equal(lt_item(r3, &m), LT_OK);
    assert_true(isnan(m));
    LT_ASSERT_SHAPE(r4);
    LT_ASSERT_VALUES(r4, 1e-6, 2.5 * exp(2.5));
}

/* The entry point runs a table of steps: a program whose only kernel has
 * no element to compute has no step at all, and one of eager calls only
 * (a matmul, then a product whose epilogue the next kernel takes) runs
 * them in order. */
static void test_entry_steps(void **state)
{
    (void)state;
    lt_tensor *e = LT_OK_T(lt_zeros((int64_t[]){0, 3}, 2, LT_F32, lazy()));
    lt_scope_begin();
    lt_tensor *r = lt_keep(LT_OK_T(lt_exp(lt_add_scalar(e, 2))));
    lt_scope_end();
    assert_int_equal(step_kernels(), 1);
    assert_int_equal(lt_metrics_counter("KernelFunctions"), 0);
    LT_ASSERT_SHAPE(r, 0, 3);
    int64_t dims[2] = {3, 2}, dims_t[2] = {2, 3};
    lt_tensor *a = lazy_seq(dims, 2, LT_F32, 1, 0), *b = lazy_seq(dims_t, 2, LT_F32, 1, 1);
    lt_scope_begin();
    lt_tensor *m = lt_keep(LT_OK_T(lt_matmul(lt_matmul(a, b), a)));
    lt_scope_end();
    assert_int_equal(step_kernels(), 2);
    assert_int_equal(lt_metrics_counter("KernelCalls"), 2);
    double ab[3][3], expect[6];
    for (int i = 0; i < 3; i++)
        for (int j = 0; j < 3; j++) {
            float acc = 0;
            for (int k = 0; k < 2; k++)
                acc += (float)seq_value(i * 2 + k, 1, 0) * (float)seq_value(k * 3 + j, 1, 1);
            ab[i][j] = acc;
        }
    for (int i = 0; i < 3; i++)
        for (int j = 0; j < 2; j++) {
            double acc = 0;
            for (int k = 0; k < 3; k++)
                acc += ab[i][k] * (float)seq_value(k * 2 + j, 1, 0);
            expect[i * 2 + j] = acc;
        }
    LT_ASSERT_ARRAY(m, expect, 6, 1e-5);
}

/* An eager call failing inside a compiled program reports its error. */
static void test_runtime_call_error(void **state)
{
    (void)state;
    lt_tensor *a = LT_OK_T(lt_to(LT_T(LT_I64, LT_DIMS(3), 7, 8, 9), lazy()));
    lt_tensor *b = LT_OK_T(lt_to(LT_T(LT_I64, LT_DIMS(3), 2, 0, 4), lazy()));
    double v;
    assert_int_equal(lt_item(lt_sum(lt_remainder(a, b), NULL, 0, false), &v), LT_ERR_ARGUMENT);
    LT_EXPECT_ERROR(LT_ERR_ARGUMENT, "division by zero");
}

static void test_backend_selection(void **state)
{
    (void)state;
    assert_int_equal(lt_lazy_set_backend("cpu"), LT_OK);
    assert_string_equal(lt_lazy_backend(), "cpu");
    assert_int_equal(lt_lazy_set_backend(NULL), LT_ERR_NULL);
    LT_EXPECT_ERROR(LT_ERR_NULL, "name is NULL");
    assert_int_equal(lt_lazy_set_backend("gpu"), LT_ERR_ARGUMENT);
    LT_EXPECT_ERROR(LT_ERR_ARGUMENT, "available: cpu, tiered, interp");
    assert_int_equal(lt_lazy_set_backend("interp"), LT_OK);
    assert_string_equal(lt_lazy_backend(), "interp");
    assert_int_equal(lt_lazy_set_backend("cpu"), LT_OK);
}

/* ---- the disk cache across processes -------------------------------------------------------- */

typedef struct child_result {
    char out[8192];
    int status;
} child_result;

typedef struct child {
    pid_t pid;
    int fd;
} child;

/* Starts this binary in child mode `mode` with LT_CACHE_DIR=dir and extra
 * "NAME=value" settings (NULL-terminated). */
static child start_child(const char *mode, const char *dir, const char *const *env)
{
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
        setenv("LT_TEST_CHILD", mode, 1);
        setenv("LT_CACHE_DIR", dir, 1);
        setenv("LT_TIERED", "0", 1); /* compiles before each run, not in the background */
        for (int i = 0; env && env[i]; i++)
            putenv((char *)env[i]);
        execl("/proc/self/exe", "test_compiler", (char *)NULL);
        _exit(127);
    }
    close(fds[1]);
    child c = {pid, fds[0]};
    return c;
}

static void finish_child(child c, child_result *r)
{
    size_t n = 0;
    ssize_t got;
    while ((got = read(c.fd, r->out + n, sizeof r->out - 1 - n)) > 0)
        n += (size_t)got;
    r->out[n] = '\0';
    close(c.fd);
    int status = 0;
    waitpid(c.pid, &status, 0);
    r->status = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

static void run_child(const char *mode, const char *dir, const char *const *env, child_result *r)
{
    finish_child(start_child(mode, dir, env), r);
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

/* The child's graph: sum(relu(x / 4 - 100) * x) over x = 0..4095. */
static double child_expect(void)
{
    double s = 0;
    for (int i = 0; i < 4096; i++)
        s += fmax(i * 0.25 - 100, 0) * i;
    return s;
}

static void assert_child_value(const child_result *r)
{
    const char *p = strstr(r->out, "value=");
    if (r->status != 0 || !p) {
        print_error("child failed (exit %d):\n%s\n", r->status, r->out);
        fail();
    }
    double v = atof(p + 6), e = child_expect();
    assert_true(fabs(v - e) <= 1e-6 * e);
}

static void fresh_dir(char *dir, size_t cap, const char *name)
{
    snprintf(dir, cap, "%s/%s", test_dir, name);
    assert_int_equal(mkdir(dir, 0700), 0);
}

/* Names of the cached objects in dir (up to max). */
static int cached_objects(const char *dir, char names[][300], int max)
{
    DIR *d = opendir(dir);
    int n = 0;
    for (struct dirent *e; d && (e = readdir(d));) {
        size_t len = strlen(e->d_name);
        if (len > 3 && strcmp(e->d_name + len - 3, ".so") == 0 && n < max)
            snprintf(names[n++], 300, "%s/%s", dir, e->d_name);
    }
    if (d)
        closedir(d);
    return n;
}

/* A second process compiles nothing: every program comes from disk. */
static void test_new_process_hits_disk_cache(void **state)
{
    (void)state;
    char dir[300];
    fresh_dir(dir, sizeof dir, "second_process");
    child_result r;
    run_child("run", dir, NULL, &r);
    assert_child_value(&r);
    long long misses = field(&r, "miss=");
    assert_true(misses >= 1);
    assert_int_equal(field(&r, "hit="), 0);
    run_child("run", dir, NULL, &r);
    assert_child_value(&r);
    assert_int_equal(field(&r, "miss="), 0);
    assert_int_equal(field(&r, "hit="), misses);
    assert_int_equal(field(&r, "errors="), 0);
}

/* Truncated and corrupted objects are detected, deleted and rebuilt. */
static void test_damaged_cache_is_rebuilt(void **state)
{
    (void)state;
    char dir[300], names[16][300];
    fresh_dir(dir, sizeof dir, "damaged");
    child_result r;
    run_child("run", dir, NULL, &r);
    assert_child_value(&r);
    long long programs = field(&r, "miss=");
    for (int damage = 0; damage < 2; damage++) {
        int n = cached_objects(dir, names, 16);
        assert_true(n >= programs);
        for (int i = 0; i < n; i++) {
            struct stat st;
            assert_int_equal(stat(names[i], &st), 0);
            if (damage == 0) { /* truncated to half */
                assert_int_equal(truncate(names[i], st.st_size / 2), 0);
            } else { /* one byte flipped in the middle */
                FILE *f = fopen(names[i], "r+b");
                assert_non_null(f);
                fseek(f, st.st_size / 2, SEEK_SET);
                int ch = fgetc(f);
                fseek(f, st.st_size / 2, SEEK_SET);
                fputc(ch ^ 0x5a, f);
                fclose(f);
            }
        }
        run_child("run", dir, NULL, &r);
        assert_child_value(&r);
        assert_true(field(&r, "corrupt=") >= 1);
        assert_true(field(&r, "miss=") >= 1);
    }
    run_child("run", dir, NULL, &r); /* rebuilt objects are good */
    assert_child_value(&r);
    assert_int_equal(field(&r, "miss="), 0);
    assert_int_equal(field(&r, "corrupt="), 0);
}

/* Three processes compiling the same graphs (the toolchain probe first)
 * into an empty cache at once: each renames its object into place, and one
 * may find the file it validates replaced by another's. Every process must
 * still load a program and stay on the cpu backend (a load that treated the
 * replaced file as damage deleted it, and the process fell back to interp
 * for good), and the next process finds everything on disk. */
static void test_concurrent_processes(void **state)
{
    (void)state;
    char dir[300];
    fresh_dir(dir, sizeof dir, "concurrent");
    child kids[3];
    for (int i = 0; i < 3; i++)
        kids[i] = start_child("run", dir, NULL);
    for (int i = 0; i < 3; i++) {
        child_result rk;
        finish_child(kids[i], &rk);
        assert_child_value(&rk);
        if (!strstr(rk.out, "backend=cpu")) {
            print_error("process %d left the cpu backend:\n%s\n", i, rk.out);
            fail();
        }
    }
    child_result r;
    run_child("run", dir, NULL, &r);
    assert_child_value(&r);
    assert_int_equal(field(&r, "miss="), 0);
    DIR *d = opendir(dir); /* no temporary left behind */
    for (struct dirent *e; d && (e = readdir(d));)
        assert_true(strncmp(e->d_name, "tmp-", 4) != 0);
    closedir(d);
}

/* The cache stays within LT_CACHE_MAX_MB, oldest objects first. */
static void test_cache_is_bounded(void **state)
{
    (void)state;
    char dir[300], names[64][300];
    fresh_dir(dir, sizeof dir, "bounded");
    const char *env[] = {"LT_CACHE_MAX_MB=0.05", NULL};
    child_result r;
    run_child("many", dir, env, &r);
    assert_int_equal(r.status, 0);
    assert_true(field(&r, "evicted=") >= 1);
    long long total = 0;
    int n = cached_objects(dir, names, 64);
    for (int i = 0; i < n; i++) {
        struct stat st;
        assert_int_equal(stat(names[i], &st), 0);
        total += st.st_size;
    }
    assert_true(total <= (long long)(0.05 * 1048576));
}

/* A compiler error comes back as an error with the compiler's log; the
 * source is kept for inspection. */
static void test_compile_error_is_reported(void **state)
{
    (void)state;
    char dir[300];
    fresh_dir(dir, sizeof dir, "compile_error");
    /* the probe program compiles; generated programs use lt_rt and do not */
    const char *env[] = {"LT_CFLAGS=-O1 -fPIC -shared -Dlt_rt=@broken@", NULL};
    child_result r;
    run_child("run", dir, env, &r);
    assert_true(field(&r, "errors=") >= 1); /* a failed read retries with its own subgraph */
    assert_true(field(&r, "status=") != 0);
    assert_non_null(strstr(r.out, "failed (exit"));
    assert_non_null(strstr(r.out, "source kept at"));
    assert_non_null(strstr(r.out, "@broken@"));
    DIR *d = opendir(dir);
    bool kept = false;
    for (struct dirent *e; d && (e = readdir(d));)
        kept = kept || strstr(e->d_name, ".failed.c") != NULL;
    closedir(d);
    assert_true(kept);
}

/* No compiler: one warning, the interp backend, correct results. */
static void test_no_compiler_falls_back(void **state)
{
    (void)state;
    char dir[300];
    fresh_dir(dir, sizeof dir, "no_compiler");
    const char *env[] = {"LT_CC=/nonexistent/cc", NULL};
    child_result r;
    run_child("run", dir, env, &r);
    assert_child_value(&r);
    assert_non_null(strstr(r.out, "backend=interp"));
    const char *w = strstr(r.out, "no working C compiler");
    assert_non_null(w);
    assert_null(strstr(w + 1, "no working C compiler")); /* warned once */
}

/* ---- child processes -------------------------------------------------------------------------- */

static int child_main(const char *mode)
{
    lt_device lz = lt_device_parse("lazy");
    if (strcmp(mode, "many") == 0) { /* distinct programs, to fill the cache */
        for (int i = 1; i <= 12; i++) {
            double v;
            lt_tensor *x = lt_arange(0, 100 + i, 1, LT_F32, lz);
            if (lt_item(lt_sum(lt_exp(lt_mul_scalar(x, 0.01)), NULL, 0, false), &v) != LT_OK)
                return 2;
        }
        printf("evicted=%lld\n", (long long)lt_metrics_counter("DiskCacheEvicted"));
        return 0;
    }
    lt_tensor *x = lt_arange(0, 4096, 1, LT_F32, lz);
    lt_tensor *y = lt_sum(lt_mul(lt_relu(lt_sub_scalar(lt_mul_scalar(x, 0.25), 100)), x), NULL, 0, false);
    double v = 0;
    lt_status st = lt_item(y, &v);
    printf("status=%d value=%.17g hit=%lld miss=%lld corrupt=%lld errors=%lld backend=%s\n", (int)st, v,
           (long long)lt_metrics_counter("DiskCacheHit"), (long long)lt_metrics_counter("DiskCacheMiss"),
           (long long)lt_metrics_counter("DiskCacheCorrupt"), (long long)lt_metrics_counter("CompileErrors"),
           lt_lazy_backend());
    if (st != LT_OK)
        printf("error=%s\n", lt_last_error());
    return 0;
}

/* A program whose kernels render to a lot of C is compiled as several
 * units in parallel and linked: same values as eager, and the dumped
 * source has several parts. */
static double *long_chain(lt_device dev, int64_t *n)
{
    lt_scope_begin();
    double v[64 * 32];
    for (int i = 0; i < 64 * 32; i++)
        v[i] = sin(i * 0.37);
    lt_tensor *x = LT_OK_T(lt_to(LT_OK_T(lt_test_tensor(v, (int64_t[]){64, 32}, 2, LT_F32)), dev));
    /* each softmax is a kernel of its own, and each has rows of its own
     * count (one fewer each time), so that no two share a function */
    for (int k = 0; k < 48; k++)
        x = lt_softmax(lt_add_scalar(lt_mul_scalar(lt_narrow(x, 0, 0, 64 - k), 3.0 + k * 0.01), 0.1 * k), k % 2);
    double *out = lt_test_values(LT_OK_T(x));
    *n = lt_tensor_numel(x);
    lt_scope_end();
    return out;
}

static void test_large_program_compiles_in_units(void **state)
{
    (void)state;
    char dir[] = "/tmp/lt_split_XXXXXX";
    assert_non_null(mkdtemp(dir));
    setenv("LT_DUMP_KERNELS", dir, 1);
    int64_t n = 0, m = 0;
    double *lazy_values = long_chain(lazy(), &n);
    unsetenv("LT_DUMP_KERNELS");
    double *eager_values = long_chain(lt_device_cpu(), &m);
    assert_int_equal(n, m);
    for (int64_t i = 0; i < n; i++)
        assert_true(fabs(lazy_values[i] - eager_values[i]) <= 1e-6 * (1 + fabs(eager_values[i])));
    free(lazy_values);
    free(eager_values);
    bool part1 = false, part2 = false;
    DIR *d = opendir(dir);
    for (struct dirent *e; d && (e = readdir(d));) {
        part1 = part1 || strstr(e->d_name, ".part1.c") != NULL;
        part2 = part2 || strstr(e->d_name, ".part2.c") != NULL;
        if (e->d_name[0] != '.') {
            char path[600];
            snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
            unlink(path);
        }
    }
    if (d)
        closedir(d);
    rmdir(dir);
    assert_true(part1 && part2);
}

int main(void)
{
    const char *mode = getenv("LT_TEST_CHILD");
    if (mode)
        return child_main(mode);
    char dir[] = "/tmp/lt_compiler_test_XXXXXX";
    if (!mkdtemp(dir))
        return 1;
    snprintf(test_dir, sizeof test_dir, "%s", dir);
    char cache[300];
    snprintf(cache, sizeof cache, "%s/cache", dir);
    setenv("LT_CACHE_DIR", cache, 1);
    unsetenv("LT_CC");
    unsetenv("LT_CFLAGS");
    unsetenv("LT_BACKEND");
    unsetenv("LT_CACHE_MAX_MB");
    if (lt_lazy_set_backend("cpu") != LT_OK) {
        printf("cpu backend unavailable (%s): nothing to test\n", lt_last_error());
        return 0;
    }
    const struct CMUnitTest tests[] = {
        LT_TEST(test_chain_is_one_kernel),
        LT_TEST(test_softmax_kernels),
        LT_TEST(test_layer_norm_two_kernels),
        LT_TEST(test_reduction_fuses_producer_and_epilogue),
        LT_TEST(test_matmul_epilogue),
        LT_TEST(test_views_fuse),
        LT_TEST(test_shared_intermediates),
        LT_TEST(test_column_reductions_match_eager),
        LT_TEST(test_mlp_step_kernels),
        LT_TEST(test_scalars_never_recompile),
        LT_TEST(test_donation),
        LT_TEST(test_every_dtype_matches_eager),
        LT_TEST(test_edge_shapes),
        LT_TEST(test_entry_steps),
        LT_TEST(test_runtime_call_error),
        LT_TEST(test_backend_selection),
        LT_TEST(test_shared_kernel_functions),
        LT_TEST(test_new_process_hits_disk_cache),
        LT_TEST(test_damaged_cache_is_rebuilt),
        LT_TEST(test_concurrent_processes),
        LT_TEST(test_cache_is_bounded),
        LT_TEST(test_compile_error_is_reported),
        LT_TEST(test_no_compiler_falls_back),
        LT_TEST(test_large_program_compiles_in_units),
    };
    int failed = cmocka_run_group_tests(tests, NULL, NULL);
    char cmd[400];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    if (system(cmd) != 0)
        failed++;
    return failed;
}
