/* test_lazy_parity.c - every op run on the lazy device matches the eager
 * result on the same inputs, including views, in-place updates of views,
 * multi-output ops and chains that cross a fallback, on both backends:
 * interp (eager kernels node by node) and cpu (compiled, fused C). The
 * eager results themselves are checked against known values by the
 * per-area tests. */
#include "lt_test.h"

#include <unistd.h>

/* Deterministic inputs, created directly on the device under test. */
static lt_tensor *input(lt_device dev, const int64_t *dims, int ndim, lt_dtype dt, double scale, double shift)
{
    int64_t n = 1;
    for (int i = 0; i < ndim; i++)
        n *= dims[i];
    double *v = malloc(sizeof *v * (size_t)(n ? n : 1));
    for (int64_t i = 0; i < n; i++) {
        double x = sin((double)i * 0.731 + shift) * scale;
        v[i] = dt == LT_BOOL ? (x > 0) : lt_dtype_is_floating(dt) ? x : floor(x);
    }
    lt_tensor *c = lt_test_tensor(v, dims, ndim, dt);
    free(v);
    return lt_to(c, dev);
}

#define D(...) (const int64_t[]){__VA_ARGS__}, (int)(sizeof((const int64_t[]){__VA_ARGS__}) / sizeof(int64_t))
#define X input(dev, D(3, 4), LT_F32, 2.0, 0.1)
#define Y input(dev, D(3, 4), LT_F32, 1.5, 1.3)
#define ROW input(dev, D(4), LT_F32, 1.0, 2.2)
#define POS lt_add_scalar(lt_abs(X), 0.5)
#define XI input(dev, D(3, 4), LT_I64, 5.0, 0.4)
#define YI lt_add_scalar(lt_abs(input(dev, D(3, 4), LT_I64, 4.0, 0.9)), 1)
#define XB input(dev, D(3, 4), LT_BOOL, 1.0, 0.2)
#define IMG input(dev, D(2, 4, 6, 6), LT_F32, 1.0, 0.5)
#define KER input(dev, D(6, 2, 3, 3), LT_F32, 0.5, 0.3)
#define IDX lt_abs(input(dev, D(5), LT_I64, 3.0, 0.6))

typedef lt_tensor *(*case_fn)(lt_device dev);
#define CASE(name, expr) \
    static lt_tensor *case_##name(lt_device dev) { return (expr); }

/* elementwise */
CASE(neg, lt_neg(X))
CASE(abs, lt_abs(X))
CASE(exp, lt_exp(X))
CASE(log, lt_log(POS))
CASE(log1p, lt_log1p(POS))
CASE(expm1, lt_expm1(X))
CASE(sqrt, lt_sqrt(POS))
CASE(rsqrt, lt_rsqrt(POS))
CASE(sin, lt_sin(X))
CASE(cos, lt_cos(X))
CASE(tanh, lt_tanh(X))
CASE(sigmoid, lt_sigmoid(X))
CASE(relu, lt_relu(X))
CASE(gelu, lt_gelu(X))
CASE(silu, lt_silu(X))
CASE(erf, lt_erf(X))
CASE(sign, lt_sign(X))
CASE(floor, lt_floor(X))
CASE(ceil, lt_ceil(X))
CASE(round, lt_round(lt_mul_scalar(X, 3)))
CASE(reciprocal, lt_reciprocal(POS))
CASE(logical_not, lt_logical_not(XB))
CASE(add_bcast, lt_add(X, ROW))
CASE(sub_scaled, lt_sub_scaled(X, Y, 0.25))
CASE(add_scaled, lt_add_scaled(X, ROW, -2.0))
CASE(mul, lt_mul(X, Y))
CASE(div, lt_div(X, POS))
CASE(pow, lt_pow(POS, Y))
CASE(maximum, lt_maximum(X, Y))
CASE(minimum, lt_minimum(X, ROW))
CASE(remainder, lt_remainder(X, lt_add_scalar(lt_abs(Y), 0.5)))
CASE(remainder_int, lt_remainder(XI, YI))
CASE(eq, lt_eq(XI, lt_transpose(lt_transpose(XI, 0, 1), 0, 1)))
CASE(ne, lt_ne(X, Y))
CASE(lt, lt_lt(X, Y))
CASE(le, lt_le(X, ROW))
CASE(gt, lt_gt(XI, lt_scalar(0, LT_I64, dev)))
CASE(ge, lt_ge(X, Y))
CASE(logical_and, lt_logical_and(XB, lt_gt(X, Y)))
CASE(logical_or, lt_logical_or(XB, lt_gt(X, Y)))
CASE(where, lt_where(lt_gt(X, Y), X, ROW))
CASE(clamp, lt_clamp(X, -0.5, 0.75))
CASE(scalar_forms, lt_add(lt_rsub_scalar(lt_div_scalar(X, 3), 2), lt_rpow_scalar(ROW, 1.5)))
CASE(compare_scalar, lt_logical_or(lt_le_scalar(X, 0.1), lt_eq_scalar(XI, 2)))
CASE(int_times_float, lt_mul_scalar(XI, 2.5))
CASE(cast_chain, lt_to_dtype(lt_to_dtype(lt_mul_scalar(X, 10), LT_I32), LT_BF16))
CASE(f16_math, lt_to_dtype(lt_add_scalar(lt_to_dtype(X, LT_F16), 2.5), LT_F32))
/* reductions */
CASE(sum_all, lt_sum(X, NULL, 0, false))
CASE(sum_dims, lt_sum(IMG, (int[]){0, 2}, 2, true))
CASE(sum_int, lt_sum(XI, (int[]){1}, 1, false))
CASE(mean, lt_mean(X, (int[]){0}, 1, false))
CASE(prod, lt_prod(lt_add_scalar(X, 2), (int[]){-1}, 1, false))
CASE(amax, lt_amax(IMG, (int[]){1, 3}, 2, false))
CASE(amin, lt_amin(X, NULL, 0, false))
CASE(argmax, lt_argmax(X, 1, false))
CASE(argmin, lt_argmin(X, 0, true))
CASE(var, lt_var(X, (int[]){1}, 1, 1, false))
CASE(std, lt_std(X, NULL, 0, 0, false))
CASE(logsumexp, lt_logsumexp(X, (int[]){1}, 1, false))
CASE(all, lt_all(XB, (int[]){1}, 1, false))
CASE(any, lt_any(XB, (int[]){0}, 1, false))
CASE(cumsum, lt_cumsum(X, 1))
CASE(softmax, lt_softmax(X, 1))
CASE(log_softmax, lt_log_softmax(X, 0))
/* views */
CASE(view, lt_view(X, (int64_t[]){4, 3}, 2))
CASE(reshape_strided, lt_reshape(lt_transpose(X, 0, 1), (int64_t[]){12}, 1))
CASE(permute, lt_permute(IMG, (int[]){2, 0, 3, 1}, 4))
CASE(narrow, lt_narrow(X, 1, 1, 2))
CASE(slice_step, lt_slice(IMG, 2, 1, 6, 2))
CASE(select, lt_select(X, 0, -1))
CASE(squeeze_unsqueeze, lt_squeeze(lt_unsqueeze(X, 1), 1))
CASE(squeeze_all, lt_squeeze_all(lt_view(X, (int64_t[]){1, 3, 1, 4}, 4)))
CASE(expand, lt_add(lt_expand(lt_view(ROW, (int64_t[]){1, 4}, 2), (int64_t[]){3, 4}, 2), X))
CASE(flatten, lt_flatten(IMG, 1, 3))
CASE(diagonal, lt_diagonal(X, 1, 0, 1))
CASE(view_chain, lt_mul_scalar(lt_select(lt_slice(lt_permute(IMG, (int[]){1, 0, 2, 3}, 4), 2, 0, 5, 2), 0, 1), 2))
/* indexing and shaping */
CASE(cat, lt_cat((lt_tensor *[]){X, Y, lt_narrow(Y, 0, 0, 1)}, 3, 0))
CASE(stack, lt_stack((lt_tensor *[]){X, Y}, 2, 1))
CASE(index_select, lt_index_select(X, 0, IDX))
CASE(gather, lt_gather(X, 1, lt_remainder(lt_abs(XI), lt_scalar(4, LT_I64, dev))))
CASE(scatter, lt_scatter(lt_zeros_like(X), 1, lt_remainder(lt_abs(XI), lt_scalar(4, LT_I64, dev)), Y))
CASE(scatter_add, lt_scatter_add(X, 1, lt_remainder(lt_abs(XI), lt_scalar(4, LT_I64, dev)), Y))
CASE(masked_fill, lt_masked_fill(X, XB, -7.5))
CASE(one_hot, lt_one_hot(IDX, 4))
CASE(tril, lt_tril(X, 0))
CASE(triu, lt_triu(X, 1))
CASE(embedding, lt_embedding(X, lt_view(IDX, (int64_t[]){5, 1}, 2)))
/* linear algebra and nn */
CASE(matmul, lt_matmul(X, lt_transpose(Y, 0, 1)))
CASE(matmul_batched, lt_matmul(IMG, lt_transpose(IMG, 2, 3)))
CASE(matmul_vec, lt_matmul(X, ROW))
CASE(conv2d, lt_conv2d(IMG, KER, input(dev, D(6), LT_F32, 1, 0), (int64_t[]){1, 2}, (int64_t[]){1, 1}, NULL, 2))
CASE(max_pool2d, lt_max_pool2d(IMG, (int64_t[]){2, 2}, NULL, NULL, NULL))
CASE(avg_pool2d, lt_avg_pool2d(IMG, (int64_t[]){3, 3}, (int64_t[]){2, 2}, (int64_t[]){1, 1}, true))
/* factories and randomness */
CASE(factories, lt_add(lt_add(lt_arange(0, 12, 1, LT_F32, dev), lt_linspace(-1, 1, 12, LT_F32, dev)),
                       lt_view(lt_eye(3, 4, LT_F32, dev), (int64_t[]){12}, 1)))
CASE(full, lt_mul(lt_full((int64_t[]){3, 4}, 2, 2.5, LT_F32, dev), X))

/* in-place ops, on tensors and on views */
static lt_tensor *case_inplace(lt_device dev)
{
    lt_tensor *x = lt_clone(X);
    lt_add_(x, ROW);
    lt_mul_scalar_(x, 2);
    lt_clamp_(x, -1, 3);
    lt_relu_(x);
    lt_neg_(x);
    lt_sub_(x, lt_transpose(lt_transpose(x, 0, 1), 0, 1));
    lt_add_scaled_(x, Y, 0.5);
    lt_div_scalar_(x, 4);
    return x;
}

static lt_tensor *case_inplace_views(lt_device dev)
{
    lt_tensor *x = lt_clone(IMG);
    lt_fill_(lt_select(x, 1, 2), 3);
    lt_add_scalar_(lt_permute(x, (int[]){3, 1, 0, 2}, 4), 42);
    lt_mul_(lt_slice(lt_select(x, 0, 1), 1, 0, 6, 3), lt_narrow(input(dev, D(6, 2), LT_F32, 1, 0), 0, 0, 6));
    lt_copy_(lt_diagonal(lt_select(lt_select(x, 0, 0), 0, 0), 0, 0, 1), input(dev, D(6), LT_I32, 9, 0.3));
    lt_zero_(lt_narrow(lt_view(x, (int64_t[]){2, 144}, 2), 1, 10, 20));
    return x;
}

/* A chain through sort and topk (called by the compiled program) and a
 * fallback (nonzero), and back into the graph. */
static lt_tensor *case_fallback_chain(lt_device dev)
{
    lt_tensor *idx = NULL, *tidx = NULL;
    lt_tensor *s = lt_sort(lt_mul_scalar(X, 3), 1, true, &idx);
    lt_tensor *t = lt_topk(lt_add(s, lt_to_dtype(idx, LT_F32)), 2, 1, true, &tidx);
    return lt_add(lt_mul(t, lt_to_dtype(tidx, LT_F32)), lt_sum(lt_nonzero(lt_gt(X, Y)), NULL, 0, false));
}

static lt_tensor *case_max_dim_indices(lt_device dev)
{
    lt_tensor *idx = NULL, *idx2 = NULL;
    lt_tensor *m = lt_max_dim(X, 1, false, &idx);
    lt_tensor *n = lt_min_dim(Y, 0, true, &idx2);
    return lt_add(lt_add(m, lt_to_dtype(idx, LT_F32)), lt_sum(lt_add(n, lt_to_dtype(idx2, LT_F32)), NULL, 0, false));
}

static lt_tensor *case_split_chunk(lt_device dev)
{
    lt_tensor *parts[4], *chunks[4];
    int n = lt_split(X, 3, 1, parts, 4);
    int m = lt_chunk(Y, 3, 0, chunks, 4);
    if (n != 2 || m != 3)
        return NULL;
    return lt_cat((lt_tensor *[]){parts[1], lt_transpose(chunks[2], 0, 1)}, 2, 0);
}

static lt_tensor *case_rng(lt_device dev)
{
    lt_manual_seed(1234);
    lt_tensor *a = lt_rand((int64_t[]){3, 4}, 2, LT_F32, dev);
    lt_tensor *b = lt_randn((int64_t[]){3, 4}, 2, LT_F32, dev);
    lt_tensor *c = lt_randint(0, 10, (int64_t[]){3, 4}, 2, LT_I64, dev);
    return lt_add(lt_add(a, b), c);
}

static lt_tensor *case_item_mid_graph(lt_device dev)
{
    lt_tensor *x = X;
    double s = 0;
    for (int i = 0; i < 3; i++) {
        if (lt_item(lt_sum(x, NULL, 0, false), &s) != LT_OK)
            return NULL;
        x = s > 0 ? lt_sub_scalar(x, s) : lt_add_scalar(lt_mul_scalar(x, 2), 1);
    }
    return x;
}

typedef struct parity_case {
    const char *name;
    case_fn fn;
    double tol;
} parity_case;

#define C(name) {#name, case_##name, 1e-5}
#define CT(name, tol) {#name, case_##name, tol}
static const parity_case cases[] = {
    C(neg), C(abs), C(exp), C(log), C(log1p), C(expm1), C(sqrt), C(rsqrt), C(sin), C(cos), C(tanh),
    C(sigmoid), C(relu), C(gelu), C(silu), C(erf), C(sign), C(floor), C(ceil), C(round), C(reciprocal),
    C(logical_not), C(add_bcast), C(sub_scaled), C(add_scaled), C(mul), C(div), C(pow), C(maximum),
    C(minimum), C(remainder), C(remainder_int), C(eq), C(ne), C(lt), C(le), C(gt), C(ge), C(logical_and),
    C(logical_or), C(where), C(clamp), C(scalar_forms), C(compare_scalar), C(int_times_float),
    C(cast_chain), C(f16_math), C(sum_all), C(sum_dims), C(sum_int), C(mean), C(prod), C(amax), C(amin),
    C(argmax), C(argmin), C(var), C(std), C(logsumexp), C(all), C(any), C(cumsum), C(softmax),
    C(log_softmax), C(view), C(reshape_strided), C(permute), C(narrow), C(slice_step), C(select),
    C(squeeze_unsqueeze), C(squeeze_all), C(expand), C(flatten), C(diagonal), C(view_chain), C(cat),
    C(stack), C(index_select), C(gather), C(scatter), C(scatter_add), C(masked_fill), C(one_hot), C(tril),
    C(triu), C(embedding), CT(matmul, 1e-4), CT(matmul_batched, 1e-4), C(matmul_vec), CT(conv2d, 1e-4),
    C(max_pool2d), C(avg_pool2d), C(factories), C(full), C(inplace), C(inplace_views), C(fallback_chain),
    C(max_dim_indices), C(split_chunk), C(rng), C(item_mid_graph),
};

/* Runs one case on a device inside a scope; returns its values as f64 on
 * the host and its shape/dtype. */
static double *run_case(const parity_case *c, lt_device dev, lt_tensor **meta_out)
{
    lt_scope_begin();
    lt_tensor *r = c->fn(dev);
    if (!r) {
        print_error("case %s on %s failed: %s\n", c->name, dev.kind == LT_DEVICE_LAZY ? "lazy" : "cpu",
                    lt_last_error());
        lt_scope_end();
        return NULL;
    }
    lt_tensor *host = lt_to(r, lt_device_cpu());
    double *v = host ? lt_test_values(host) : NULL;
    *meta_out = host ? lt_keep(host) : NULL;
    lt_scope_end();
    return v;
}

/* Runs the case table with the lazy device on `backend`; returns failures. */
static int parity_on(const char *backend)
{
    int failures = 0;
    lt_device cpu = lt_device_cpu(), lazy = lt_device_parse("lazy");
    assert_int_equal(lt_lazy_set_backend(backend), LT_OK);
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
        const parity_case *c = &cases[k];
        lt_tensor *em = NULL, *lm = NULL;
        double *ev = run_case(c, cpu, &em);
        double *lv = run_case(c, lazy, &lm);
        bool ok = ev && lv && lt_tensor_dtype(em) == lt_tensor_dtype(lm) &&
                  lt_tensor_ndim(em) == lt_tensor_ndim(lm);
        for (int d = 0; ok && d < lt_tensor_ndim(em); d++)
            ok = lt_tensor_shape(em)[d] == lt_tensor_shape(lm)[d];
        int64_t n = ok ? lt_tensor_numel(em) : 0;
        for (int64_t i = 0; ok && i < n; i++) {
            double e = ev[i], l = lv[i];
            ok = (isnan(e) && isnan(l)) || e == l || fabs(e - l) <= c->tol * (1 + fabs(e));
            if (!ok)
                print_error("case %s: element %lld eager %.9g lazy %.9g\n", c->name, (long long)i, e, l);
        }
        if (!ok) {
            print_error("parity case %s FAILED on the %s backend\n", c->name, backend);
            failures++;
        }
        free(ev);
        free(lv);
        lt_clear_error(); /* em and lm belong to the test's scope */
    }
    print_message("%zu parity cases on the %s backend, %d failures\n", sizeof cases / sizeof cases[0], backend,
                  failures);
    return failures;
}

static void test_parity_interp(void **state)
{
    (void)state;
    assert_int_equal(parity_on("interp"), 0);
}

static void test_parity_cpu(void **state)
{
    (void)state;
    if (lt_lazy_set_backend("cpu") != LT_OK) {
        print_message("cpu backend unavailable (%s): skipped\n", lt_last_error());
        lt_clear_error();
        skip();
    }
    assert_int_equal(parity_on("cpu"), 0);
}

int main(void)
{
    /* compiled programs go to a private cache, never to ~/.cache */
    char dir[] = "/tmp/lt_parity_cache_XXXXXX";
    if (!mkdtemp(dir))
        return 1;
    setenv("LT_CACHE_DIR", dir, 1);
    const struct CMUnitTest tests[] = {LT_TEST(test_parity_interp), LT_TEST(test_parity_cpu)};
    int failed = cmocka_run_group_tests(tests, NULL, NULL);
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    if (system(cmd) != 0)
        failed++;
    return failed;
}
