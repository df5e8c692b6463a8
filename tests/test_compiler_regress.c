/* test_compiler_regress.c - the compiled backend (lazy device, "cpu"
 * backend) computes what the cpu device computes, for op and dtype
 * combinations that the parity test does not reach: every integer dtype
 * (i32, i64, u8) and bool through clamp, min/max, arithmetic that wraps,
 * comparisons, casts, reductions and scans. The interp backend is checked
 * the same way. Where the cpu device refuses a combination, the lazy
 * device refuses it too.
 *
 * Then named regressions with size-0 dims, each run on the cpu device and
 * on the lazy device with both backends: loops over a size-0 dim dropped
 * (or left inside long loops), a program whose temporaries are all empty,
 * sums over an empty dim, gradients with an empty batch or an empty inner
 * dimension. The size-0 behaviour of every op is swept by
 * test_size_zero.c. */
#include "lt_test.h"

#include <unistd.h>

/* Values that exercise signs, wrap-around and the ends of each dtype's
 * range (converted to dt with the library's casting rules). */
static lt_tensor *ints(lt_device dev, lt_dtype dt, int variant)
{
    static const double a[12] = {-3, 7, 0, 250, -128, 2147483647, 5, -1, 100, 3, -2147483648.0, 1};
    static const double b[12] = {2, -4, 9, 10, 3, 1, -6, 255, 7, 0, 2, 1};
    const double *v = variant ? b : a;
    lt_tensor *t = lt_test_tensor(v, (int64_t[]){3, 4}, 2, LT_F64);
    t = t ? lt_to_dtype(t, dt) : NULL;
    return t ? lt_to(t, dev) : NULL;
}

#define A ints(dev, dt, 0)
#define B ints(dev, dt, 1)
#define ROWB lt_select(B, 0, 1)

typedef lt_tensor *(*case_fn)(lt_device dev, lt_dtype dt);
#define CASE(name, expr) \
    static lt_tensor *case_##name(lt_device dev, lt_dtype dt) { return (expr); }

CASE(identity, A)
CASE(neg, lt_neg(A))
CASE(abs, lt_abs(A))
CASE(sign, lt_sign(A))
CASE(relu, lt_relu(A))
CASE(floor_ceil_round, lt_add(lt_floor(A), lt_add(lt_ceil(B), lt_round(A))))
CASE(clamp, lt_clamp(A, -1, 2))
CASE(clamp_fractional, lt_clamp(A, -2.5, 6.5))
CASE(clamp_huge, lt_clamp(A, -1e30, 1e30))
CASE(clamp_crossed, lt_clamp(A, 3, 1))
CASE(clamp_inplace, lt_clamp_(lt_clone(A), 0, 100))
CASE(add, lt_add(A, B))
CASE(sub, lt_sub(A, B))
CASE(mul, lt_mul(A, B))
CASE(add_scaled, lt_add_scaled(A, ROWB, 3))
CASE(sub_scaled, lt_sub_scaled(A, B, -2))
CASE(maximum, lt_maximum(A, B))
CASE(minimum, lt_minimum(A, ROWB))
CASE(maximum_scalar, lt_maximum_scalar(A, 4))
CASE(minimum_scalar, lt_minimum_scalar(A, -1))
CASE(remainder, lt_remainder(A, lt_add_scalar(lt_abs(B), 1)))
CASE(div, lt_div(A, lt_add_scalar(lt_abs(B), 1)))
CASE(pow, lt_pow(lt_abs(A), lt_remainder_scalar(lt_abs(B), 3)))
CASE(compare, lt_logical_or(lt_lt(A, B), lt_logical_and(lt_ge(A, ROWB), lt_ne(A, B))))
CASE(compare_scalar, lt_logical_or(lt_eq_scalar(A, 7), lt_gt_scalar(A, 2.5)))
CASE(where, lt_where(lt_gt(A, B), A, B))
CASE(masked_fill, lt_masked_fill(A, lt_lt(A, B), 5))
CASE(add_scalar, lt_add_scalar(A, 2))
CASE(mul_float_scalar, lt_mul_scalar(A, 2.5))
CASE(to_i32, lt_to_dtype(A, LT_I32))
CASE(to_u8, lt_to_dtype(A, LT_U8))
CASE(to_bool, lt_to_dtype(A, LT_BOOL))
CASE(to_f32, lt_to_dtype(A, LT_F32))
CASE(to_bf16, lt_to_dtype(lt_clamp(lt_to_dtype(A, LT_F32), -200, 200), LT_BF16))
CASE(sum, lt_sum(A, (int[]){1}, 1, false))
CASE(sum_all, lt_sum(A, NULL, 0, false))
CASE(prod, lt_prod(lt_clamp(A, -3, 3), (int[]){0}, 1, true))
CASE(amax, lt_amax(A, (int[]){1}, 1, false))
CASE(amin, lt_amin(A, NULL, 0, false))
CASE(argmax, lt_argmax(A, 1, false))
CASE(argmin, lt_argmin(A, 0, true))
CASE(max_dim, lt_max_dim(A, 1, false, NULL))
CASE(all_any, lt_logical_and(lt_all(A, (int[]){1}, 1, false), lt_any(B, (int[]){1}, 1, false)))
CASE(cumsum, lt_cumsum(A, 1))
CASE(mean, lt_mean(lt_to_dtype(A, LT_F32), (int[]){1}, 1, false))
CASE(fused_chain, lt_add_scalar(lt_mul(lt_clamp(lt_add(A, B), -5, 5), lt_maximum(A, ROWB)), 1))
CASE(matmul, lt_matmul(A, lt_transpose(B, 0, 1)))

typedef struct rcase {
    const char *name;
    case_fn fn;
} rcase;

#define C(name) {#name, case_##name}
static const rcase cases[] = {
    C(identity), C(neg), C(abs), C(sign), C(relu), C(floor_ceil_round), C(clamp), C(clamp_fractional),
    C(clamp_huge), C(clamp_crossed), C(clamp_inplace), C(add), C(sub), C(mul), C(add_scaled), C(sub_scaled),
    C(maximum), C(minimum), C(maximum_scalar), C(minimum_scalar), C(remainder), C(div), C(pow), C(compare),
    C(compare_scalar), C(where), C(masked_fill), C(add_scalar), C(mul_float_scalar), C(to_i32), C(to_u8),
    C(to_bool), C(to_f32), C(to_bf16), C(sum), C(sum_all), C(prod), C(amax), C(amin), C(argmax), C(argmin),
    C(max_dim), C(all_any), C(cumsum), C(mean), C(fused_chain), C(matmul),
};

static const lt_dtype int_dtypes[] = {LT_I32, LT_I64, LT_U8, LT_BOOL};

typedef struct outcome {
    bool ok;
    char error[512];
    lt_dtype dtype;
    int ndim;
    int64_t shape[LT_MAX_DIMS];
    int64_t n;
    double *v;
} outcome;

static outcome run_case(const rcase *c, lt_device dev, lt_dtype dt)
{
    outcome o;
    memset(&o, 0, sizeof o);
    lt_clear_error();
    lt_scope_begin();
    lt_tensor *r = c->fn(dev, dt);
    if (r && dev.kind == LT_DEVICE_LAZY && lt_mark_step() != LT_OK)
        r = NULL;
    lt_tensor *host = r ? lt_to(r, lt_device_cpu()) : NULL;
    if (host) {
        o.ok = true;
        o.dtype = lt_tensor_dtype(host);
        o.ndim = lt_tensor_ndim(host);
        memcpy(o.shape, lt_tensor_shape(host), sizeof(int64_t) * (size_t)o.ndim);
        o.n = lt_tensor_numel(host);
        o.v = lt_test_values(host);
    } else {
        snprintf(o.error, sizeof o.error, "%s", lt_last_error());
    }
    lt_clear_error();
    lt_scope_end();
    return o;
}

/* Integer results must be equal; floating ones agree to rounding. */
static bool agree(const rcase *c, lt_dtype dt, const outcome *e, const outcome *l, const char *backend)
{
    const char *dn = lt_dtype_name(dt);
    if (e->ok != l->ok) {
        print_error("%s(%s) on lazy/%s: %s (cpu device: %s)\n", c->name, dn, backend,
                    l->ok ? "succeeded" : l->error, e->ok ? "succeeded" : e->error);
        return false;
    }
    if (!e->ok)
        return true;
    bool ok = e->dtype == l->dtype && e->ndim == l->ndim && e->n == l->n;
    for (int d = 0; ok && d < e->ndim; d++)
        ok = e->shape[d] == l->shape[d];
    if (!ok) {
        print_error("%s(%s) on lazy/%s: shape or dtype differs\n", c->name, dn, backend);
        return false;
    }
    double tol = lt_dtype_is_floating(e->dtype) ? 1e-6 : 0;
    for (int64_t i = 0; i < e->n; i++) {
        double x = e->v[i], y = l->v[i];
        if (!((isnan(x) && isnan(y)) || x == y || fabs(x - y) <= tol * (1 + fabs(x)))) {
            print_error("%s(%s) on lazy/%s: element %lld is %.17g, the cpu device gives %.17g\n", c->name, dn,
                        backend, (long long)i, y, x);
            return false;
        }
    }
    return true;
}

static int run_table(const char *backend)
{
    int failures = 0, refused = 0;
    lt_device lazy = lt_device_parse("lazy");
    assert_int_equal(lt_lazy_set_backend(backend), LT_OK);
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
        for (size_t j = 0; j < sizeof int_dtypes / sizeof int_dtypes[0]; j++) {
            outcome e = run_case(&cases[k], lt_device_cpu(), int_dtypes[j]);
            outcome l = run_case(&cases[k], lazy, int_dtypes[j]);
            failures += !agree(&cases[k], int_dtypes[j], &e, &l, backend);
            refused += !e.ok;
            free(e.v);
            free(l.v);
        }
    }
    print_message("%zu integer/bool cases on the %s backend (%d refused by every device), %d failures\n",
                  sizeof cases / sizeof cases[0] * (sizeof int_dtypes / sizeof int_dtypes[0]), backend, refused,
                  failures);
    return failures;
}

static void test_integer_ops_interp(void **state)
{
    (void)state;
    assert_int_equal(run_table("interp"), 0);
}

static void test_integer_ops_cpu(void **state)
{
    (void)state;
    if (lt_lazy_set_backend("cpu") != LT_OK) {
        print_message("cpu backend unavailable (%s): skipped\n", lt_last_error());
        lt_clear_error();
        skip();
    }
    assert_int_equal(run_table("cpu"), 0);
}

/* clamp of every integer dtype renders (its bounds' C text used to
 * overflow a fixed buffer: "could not render the generated C") and gives
 * the known values, on both backends; bool is refused everywhere. */
static void test_integer_clamp_known_values(void **state)
{
    (void)state;
    const char *backends[] = {"interp", "cpu"};
    lt_device lazy = lt_device_parse("lazy");
    for (int b = 0; b < 2; b++) {
        if (lt_lazy_set_backend(backends[b]) != LT_OK) {
            print_message("%s backend unavailable: skipped\n", backends[b]);
            lt_clear_error();
            continue;
        }
        for (int j = 0; j < 3; j++) {
            lt_dtype dt = int_dtypes[j];
            lt_tensor *x = LT_OK_T(lt_to_dtype(lt_arange(-3, 5, 1, LT_F32, lazy), dt));
            lt_tensor *c = LT_OK_T(lt_clamp(x, -1, 2));
            lt_tensor *f = LT_OK_T(lt_clamp(x, -1.5, 2.5)); /* fractional bounds: f32, as torch */
            if (dt == LT_U8) { /* -3..-1 are 253..255 */
                LT_ASSERT_VALUES(c, 0, 2, 2, 2, 0, 1, 2, 2, 2);
                LT_ASSERT_VALUES(f, 0, 2.5, 2.5, 2.5, 0, 1, 2, 2.5, 2.5);
            } else {
                LT_ASSERT_VALUES(c, 0, -1, -1, -1, 0, 1, 2, 2, 2);
                LT_ASSERT_VALUES(f, 0, -1.5, -1.5, -1, 0, 1, 2, 2.5, 2.5);
            }
            assert_int_equal(lt_tensor_dtype(c), dt);
            assert_int_equal(lt_tensor_dtype(f), LT_F32);
        }
        lt_tensor *xb = LT_OK_T(lt_gt_scalar(lt_arange(-3, 5, 1, LT_F32, lazy), 0));
        assert_null(lt_clamp(xb, 0, 1));
        LT_EXPECT_ERROR(LT_ERR_DTYPE, "bool");
    }
}

/* ---- defined float-to-integer conversion ------------------------------------- */

static int devices(lt_device *dev, const char **backend);
static const char *device_name(const char *backend);

/* Floats an integer dtype cannot hold convert as on x86 and in PyTorch:
 * the type's minimum for i32 and i64, the low byte of the i32 result for
 * u8. C leaves these casts undefined, so the cpu device used to rely on
 * the compiler (UBSan reported it) and generated code did the same. Known
 * values, on every device and from f32 and f64. */
static void test_float_to_int_out_of_range(void **state)
{
    (void)state;
    const double in[] = {NAN, INFINITY, -INFINITY, 3e38, -3e38, 2147483648.0, -2147483904.0,
                         300.7, -1.5, 1e19, -9.3e18, 42.9};
    const double i32_min = -2147483648.0, i64_min = -9223372036854775808.0;
    const double want_i32[] = {i32_min, i32_min, i32_min, i32_min, i32_min, i32_min,
                               i32_min, 300, -1, i32_min, i32_min, 42};
    const double want_i64[] = {i64_min, i64_min, i64_min, i64_min, i64_min, 2147483648.0,
                               -2147483904.0, 300, -1, i64_min, i64_min, 42};
    const double want_u8[] = {0, 0, 0, 0, 0, 0, 0, 44, 255, 0, 0, 42};
    const int64_t n = (int64_t)(sizeof in / sizeof in[0]);
    lt_device dev[3];
    const char *backend[3];
    int ndev = devices(dev, backend);
    for (int i = 0; i < ndev; i++) {
        if (backend[i])
            assert_int_equal(lt_lazy_set_backend(backend[i]), LT_OK);
        for (int f = 0; f < 2; f++) {
            lt_dtype from = f ? LT_F64 : LT_F32;
            print_message("on %s, from %s\n", device_name(backend[i]), lt_dtype_name(from));
            lt_tensor *x = LT_OK_T(lt_to(lt_test_tensor(in, &n, 1, from), dev[i]));
            /* an elementwise op first, so the compiled cast is fused */
            x = LT_OK_T(lt_mul_scalar(x, 1.0));
            lt_tensor *a = LT_OK_T(lt_to_dtype(x, LT_I32));
            lt_tensor *b = LT_OK_T(lt_to_dtype(x, LT_I64));
            lt_tensor *c = LT_OK_T(lt_to_dtype(x, LT_U8));
            assert_int_equal(lt_mark_step(), LT_OK);
            LT_ASSERT_ARRAY(a, want_i32, n, 0);
            LT_ASSERT_ARRAY(b, want_i64, n, 0);
            LT_ASSERT_ARRAY(c, want_u8, n, 0);
        }
    }
}

/* An f32 reduction widened to f64 keeps its f32 rounding: the compiled
 * kernel computes the mean in double and must round it to f32 before the
 * cast, as the cpu device does. 1/3 is not an f32, so the two differ. */
static void test_reduction_rounded_before_widening(void **state)
{
    (void)state;
    const float third = 1.0f / 3.0f; /* the mean of {0, 0, 1} in f32 */
    lt_device dev[3];
    const char *backend[3];
    int ndev = devices(dev, backend);
    for (int i = 0; i < ndev; i++) {
        if (backend[i])
            assert_int_equal(lt_lazy_set_backend(backend[i]), LT_OK);
        print_message("on %s\n", device_name(backend[i]));
        lt_tensor *x = LT_OK_T(lt_to(LT_T(LT_F32, LT_DIMS(2, 3), 0, 0, 1, 1, 0, 0), dev[i]));
        lt_tensor *m = LT_OK_T(lt_to_dtype(lt_mean(x, (int[]){1}, 1, false), LT_F64));
        lt_tensor *s = LT_OK_T(lt_to_dtype(lt_mean(x, NULL, 0, false), LT_F64));
        lt_tensor *v = LT_OK_T(lt_to_dtype(lt_var(lt_mul_scalar(x, 1.0), NULL, 0, 0.0, false), LT_F64));
        assert_int_equal(lt_mark_step(), LT_OK);
        LT_ASSERT_VALUES(m, 0, (double)third, (double)third);
        LT_ASSERT_VALUES(s, 0, (double)third);
        LT_ASSERT_VALUES(v, 0, (double)(2.0f / 9.0f));
    }
}

/* A root that is a view of a leaf, through a view that the program also
 * materializes into a workspace temporary (it feeds a reshape of a
 * reshape): the root must alias the leaf, not the temporary, whose memory
 * the workspace hands to other values (here the sum of |x|). Found by
 * fuzz_program: the root read back |x|. A read (not lt_mark_step, which
 * leaves views of leaves out) makes the view a root. */
static void test_view_root_never_aliases_a_temporary(void **state)
{
    (void)state;
    static const double xv[12] = {-2.5, -1, 0.5, 2, -8, -4, -8, -7.5, 5.5, -7.5, -6, -7};
    lt_device dev[3];
    const char *backend[3];
    int ndev = devices(dev, backend);
    for (int i = 0; i < ndev; i++) {
        if (backend[i])
            assert_int_equal(lt_lazy_set_backend(backend[i]), LT_OK);
        print_message("on %s\n", device_name(backend[i]));
        lt_scope_begin();
        lt_tensor *x = LT_OK_T(lt_to(lt_test_tensor(xv, (int64_t[]){3, 4}, 2, LT_F32), dev[i]));
        lt_tensor *e = LT_OK_T(lt_expand(x, (int64_t[]){-1, -1}, 2));
        lt_tensor *sums = lt_keep(LT_OK_T(lt_log(lt_transpose(
            lt_reshape(lt_sum(lt_abs(lt_unsqueeze(x, 0)), (int[]){0}, 1, false), (int64_t[]){6, 2}, 2), 0, -1))));
        lt_tensor *x2 = LT_OK_T(lt_expand(lt_expand(x, (int64_t[]){3, 4}, 2), (int64_t[]){3, 4}, 2));
        lt_tensor *doubled = lt_keep(LT_OK_T(lt_add(x2, x2)));
        lt_tensor *root = lt_keep(LT_OK_T(lt_expand(e, (int64_t[]){3, -1}, 2)));
        lt_tensor *twice = lt_keep(LT_OK_T(lt_neg(lt_neg(lt_reshape(lt_flatten(e, 0, -1), (int64_t[]){2, 6}, 2)))));
        lt_scope_end(); /* x and e are released: only the views keep x's data */
        float got[12]; /* this read is the sync: every live tensor is a root, the view too */
        assert_int_equal(lt_copy_to_host(root, got, sizeof got), LT_OK);
        for (int k = 0; k < 12; k++)
            assert_true(got[k] == (float)xv[k]);
        LT_ASSERT_ARRAY(twice, xv, 12, 0);
        lt_release(doubled);
        lt_release(sums);
        lt_release(root);
        lt_release(twice);
    }
}

/* Row r of softmax (log: log_softmax) of scale * x with columns past r
 * masked to -inf, in double. */
static void masked_softmax_ref(const double *x, int n, double scale, bool log_form, double *out)
{
    for (int r = 0; r < n; r++) {
        double m = -INFINITY, s = 0;
        for (int c = 0; c <= r; c++)
            m = fmax(m, scale * (double)(float)x[r * n + c]);
        for (int c = 0; c <= r; c++)
            s += exp(scale * (double)(float)x[r * n + c] - m);
        for (int c = 0; c < n; c++) {
            double z = c <= r ? scale * (double)(float)x[r * n + c] - m : -INFINITY;
            out[r * n + c] = log_form ? z - log(s) : exp(z) / s;
        }
    }
}

/* softmax and log_softmax of a row that is an expression (scaled scores
 * with a causal mask of -inf, as in attention), not a plain load: the
 * compiled kernel keeps the row in its output during the first pass and
 * reads it back. Each expression has one consumer, so it is computed
 * inside the row kernel. Values against the formula, on every device. */
static void test_softmax_of_a_masked_scaled_row(void **state)
{
    (void)state;
    enum { N = 6 };
    double xv[N * N], ref_sm[N * N], ref_lsm[N * N];
    for (int i = 0; i < N * N; i++)
        xv[i] = sin(0.7 * i) * 3.0;
    masked_softmax_ref(xv, N, 0.5, false, ref_sm);
    masked_softmax_ref(xv, N, 0.25, true, ref_lsm);
    lt_device dev[3];
    const char *backend[3];
    int ndev = devices(dev, backend);
    for (int i = 0; i < ndev; i++) {
        if (backend[i])
            assert_int_equal(lt_lazy_set_backend(backend[i]), LT_OK);
        print_message("on %s\n", device_name(backend[i]));
        lt_tensor *x = LT_OK_T(lt_to(lt_test_tensor(xv, (int64_t[]){N, N}, 2, LT_F32), dev[i]));
        assert_int_equal(lt_mark_step(), LT_OK);
        lt_scope_begin(); /* only the results outlive it: the scores are no roots */
        lt_tensor *above = LT_OK_T(lt_triu(LT_OK_T(lt_ones((int64_t[]){N, N}, 2, LT_BOOL, dev[i])), 1));
        lt_tensor *sm = lt_keep(LT_OK_T(lt_softmax(lt_masked_fill(lt_mul_scalar(x, 0.5), above, -INFINITY), 1)));
        lt_tensor *lsm =
            lt_keep(LT_OK_T(lt_log_softmax(lt_masked_fill(lt_mul_scalar(x, 0.25), above, -INFINITY), -1)));
        lt_scope_end();
        assert_int_equal(lt_mark_step(), LT_OK);
        double *got = lt_test_values(sm), *lgot = lt_test_values(lsm);
        for (int k = 0; k < N * N; k++) {
            assert_true(fabs(got[k] - ref_sm[k]) <= 1e-6);
            if (isinf(ref_lsm[k]))
                assert_true(isinf(lgot[k]) && lgot[k] < 0);
            else
                assert_true(fabs(lgot[k] - ref_lsm[k]) <= 1e-5);
        }
        free(got);
        free(lgot);
        lt_release(sm);
        lt_release(lsm);
    }
}

/* Loop-invariant values are computed before a kernel's loops: here
 * pow(0.9, step) from a 0-d tensor and its square root. An element read
 * at a fixed offset of the buffer the kernel writes (x += x * x[0], in
 * place) is not invariant: every element must see the old x[0]. Values
 * against the formula, on every device. */
static void test_loop_invariant_values(void **state)
{
    (void)state;
    enum { N = 40000 };
    lt_device dev[3];
    const char *backend[3];
    int ndev = devices(dev, backend);
    for (int i = 0; i < ndev; i++) {
        if (backend[i])
            assert_int_equal(lt_lazy_set_backend(backend[i]), LT_OK);
        print_message("on %s\n", device_name(backend[i]));
        lt_tensor *x = lt_persist(LT_OK_T(lt_to(lt_arange(1, N + 1, 1, LT_F32, lt_device_cpu()), dev[i])));
        lt_tensor *step = lt_persist(LT_OK_T(lt_to(lt_scalar(3, LT_F64, lt_device_cpu()), dev[i])));
        assert_int_equal(lt_mark_step(), LT_OK);
        lt_scope_begin();
        lt_tensor *correction = lt_sqrt(lt_rsub_scalar(lt_pow(lt_scalar(0.9, LT_F64, dev[i]), step), 1.0));
        lt_tensor *scaled = lt_keep(LT_OK_T(lt_div(x, lt_to_dtype(correction, LT_F32))));
        lt_add_(x, lt_mul(x, lt_select(x, 0, 0)));
        lt_scope_end();
        assert_int_equal(lt_mark_step(), LT_OK);
        double *xs = lt_test_values(x), *got = lt_test_values(scaled);
        double c = sqrt(1.0 - pow(0.9, 3));
        for (int k = 0; k < N; k++) {
            assert_true(xs[k] == 2.0 * (k + 1));
            assert_true(fabs(got[k] - (k + 1) / c) <= 1e-6 * (k + 1) / c);
        }
        free(xs);
        free(got);
        lt_release(x);
        lt_release(step);
        lt_release(scaled);
    }
}

/* ---- size 0 ----------------------------------------------------------------------- */

static bool cpu_backend_available(void)
{
    if (lt_lazy_set_backend("cpu") == LT_OK)
        return true;
    print_message("cpu backend unavailable (%s): skipped\n", lt_last_error());
    lt_clear_error();
    return false;
}


/* The devices every regression runs on: the cpu device, then the lazy
 * device on each backend available. Returns how many were set up. */
static int devices(lt_device *dev, const char **backend)
{
    int n = 0;
    dev[n] = lt_device_cpu(), backend[n++] = NULL;
    dev[n] = lt_device_parse("lazy"), backend[n++] = "interp";
    if (cpu_backend_available())
        dev[n] = lt_device_parse("lazy"), backend[n++] = "cpu";
    return n;
}

static const char *device_name(const char *backend) { return backend ? backend : "cpu device"; }

/* A size-0 dim in a generated loop nest: the loop over it must run no
 * iteration (it was dropped, and the kernel wrote 4*4*2 elements into an
 * empty buffer); so must a kernel computing a non-empty and an empty
 * result in one barrier. */
static void test_empty_dim_in_loop_nest(void **state)
{
    (void)state;
    lt_device dev[3];
    const char *backend[3];
    int n = devices(dev, backend);
    for (int i = 0; i < n; i++) {
        if (backend[i])
            assert_int_equal(lt_lazy_set_backend(backend[i]), LT_OK);
        print_message("on %s\n", device_name(backend[i]));
        lt_tensor *z = LT_OK_T(lt_neg(lt_zeros((int64_t[]){4, 0, 1, 4, 2}, 5, LT_F64, dev[i])));
        lt_tensor *e = LT_OK_T(lt_ones((int64_t[]){0, 64, 64}, 3, LT_F32, dev[i]));
        lt_tensor *a = LT_OK_T(lt_add_scalar(lt_ones((int64_t[]){4}, 1, LT_F32, dev[i]), 2));
        lt_tensor *s = LT_OK_T(lt_sum(lt_add_scalar(e, 1), (int[]){0}, 1, false));
        assert_int_equal(lt_mark_step(), LT_OK);
        LT_ASSERT_SHAPE(z, 4, 0, 1, 4, 2);
        LT_ASSERT_SHAPE(e, 0, 64, 64);
        LT_ASSERT_VALUES(a, 0, 3, 3, 3, 3);
        LT_ASSERT_SHAPE(s, 64, 64);
        double *v = lt_test_values(s);
        for (int j = 0; j < 64 * 64; j++)
            assert_true(v[j] == 0.0);
        free(v);
    }
}

/* A program whose only temporary holds no byte (the empty linspace read by
 * a matmul and updated in place) has a workspace to point into. */
static void test_empty_temporary(void **state)
{
    (void)state;
    lt_device dev[3];
    const char *backend[3];
    int n = devices(dev, backend);
    for (int i = 0; i < n; i++) {
        if (backend[i])
            assert_int_equal(lt_lazy_set_backend(backend[i]), LT_OK);
        print_message("on %s\n", device_name(backend[i]));
        lt_tensor *x = LT_OK_T(lt_linspace(-2, 1, 0, LT_F32, dev[i]));
        lt_tensor *y = LT_OK_T(lt_matmul(x, x));
        LT_OK_T(lt_div_scalar_(x, 2.5));
        assert_int_equal(lt_mark_step(), LT_OK);
        LT_ASSERT_SHAPE(x, 0);
        assert_int_equal(lt_tensor_ndim(y), 0);
        LT_ASSERT_VALUES(y, 0, 0);
    }
}

/* Reductions over an empty dim give their identity (or NaN), never what
 * one pass of a dropped loop would; the extremum reductions fail alike
 * everywhere. */
static void test_reduce_over_empty_dim(void **state)
{
    (void)state;
    lt_device dev[3];
    const char *backend[3];
    int n = devices(dev, backend);
    for (int i = 0; i < n; i++) {
        if (backend[i])
            assert_int_equal(lt_lazy_set_backend(backend[i]), LT_OK);
        print_message("on %s\n", device_name(backend[i]));
        lt_tensor *x = LT_OK_T(lt_ones((int64_t[]){3, 0}, 2, LT_F32, dev[i]));
        int d1[1] = {1};
        LT_ASSERT_VALUES(lt_sum(x, d1, 1, false), 0, 0, 0, 0);
        LT_ASSERT_VALUES(lt_prod(x, d1, 1, false), 0, 1, 1, 1);
        LT_ASSERT_VALUES(lt_mean(x, d1, 1, false), 0, NAN, NAN, NAN);
        LT_ASSERT_VALUES(lt_var(x, d1, 1, 1, false), 0, NAN, NAN, NAN);
        LT_ASSERT_VALUES(lt_std(x, d1, 1, 0, true), 0, NAN, NAN, NAN);
        LT_ASSERT_VALUES(lt_logsumexp(x, d1, 1, false), 0, -INFINITY, -INFINITY, -INFINITY);
        LT_ASSERT_VALUES(lt_all(x, d1, 1, false), 0, 1, 1, 1);
        LT_ASSERT_VALUES(lt_any(x, d1, 1, false), 0, 0, 0, 0);
        LT_ASSERT_VALUES(lt_sum(lt_to_dtype(x, LT_I32), d1, 1, false), 0, 0, 0, 0);
        LT_ASSERT_VALUES(lt_prod(lt_to_dtype(x, LT_I64), d1, 1, false), 0, 1, 1, 1);
        LT_ASSERT_SHAPE(LT_OK_T(lt_sum(x, (int[]){0}, 1, false)), 0);
        LT_ASSERT_SHAPE(LT_OK_T(lt_cumsum(x, 1)), 3, 0);
        LT_ASSERT_SHAPE(LT_OK_T(lt_softmax(x, 1)), 3, 0);
        /* a reduction feeding an elementwise op in the same kernel */
        LT_ASSERT_VALUES(lt_add_scalar(lt_sum(x, d1, 1, false), 2), 0, 2, 2, 2);
        lt_tensor *r = lt_amax(x, d1, 1, false);
        if (r) /* a lazy failure may surface at the read */
            r = lt_to(r, lt_device_cpu());
        assert_null(r);
        LT_EXPECT_ERROR(LT_ERR_SHAPE, "no identity");
        assert_null(lt_argmax(x, 1, false));
        LT_EXPECT_ERROR(LT_ERR_SHAPE, "size 0");
    }
}

/* The bias gradient of a linear layer on an empty batch is 0. */
static void test_linear_grad_empty_batch(void **state)
{
    (void)state;
    lt_device dev[3];
    const char *backend[3];
    int n = devices(dev, backend);
    for (int i = 0; i < n; i++) {
        if (backend[i])
            assert_int_equal(lt_lazy_set_backend(backend[i]), LT_OK);
        print_message("on %s\n", device_name(backend[i]));
        lt_module *lin = lt_nn_linear(3, 2, true, dev[i]);
        assert_non_null(lin);
        lt_tensor *p[2];
        assert_int_equal(lt_module_parameters(lin, p, NULL, 2), 2);
        lt_tensor *y = LT_OK_T(lt_module_forward(lin, lt_zeros((int64_t[]){0, 3}, 2, LT_F32, dev[i])));
        assert_int_equal(lt_backward(lt_sum(y, NULL, 0, false), NULL), LT_OK);
        LT_ASSERT_VALUES(lt_grad(p[0]), 0, 0, 0, 0, 0, 0, 0);
        LT_ASSERT_VALUES(lt_grad(p[1]), 0, 0, 0);
        lt_module_free(lin);
    }
}

/* The layer-norm gradient on an empty batch (the schedule used to loop,
 * materializing a reduction over no element again and again). */
static void test_layer_norm_grad_empty_batch(void **state)
{
    (void)state;
    lt_device dev[3];
    const char *backend[3];
    int n = devices(dev, backend);
    for (int i = 0; i < n; i++) {
        if (backend[i])
            assert_int_equal(lt_lazy_set_backend(backend[i]), LT_OK);
        print_message("on %s\n", device_name(backend[i]));
        lt_module *ln = lt_nn_layer_norm(1, 1e-5, dev[i]);
        assert_non_null(ln);
        lt_tensor *p[2];
        assert_int_equal(lt_module_parameters(ln, p, NULL, 2), 2);
        lt_tensor *x = LT_OK_T(lt_zeros((int64_t[]){0, 1}, 2, LT_F32, dev[i]));
        assert_int_equal(lt_set_requires_grad(x, true), LT_OK);
        lt_tensor *y = LT_OK_T(lt_module_forward(ln, x));
        assert_int_equal(lt_backward(lt_sum(y, NULL, 0, false), NULL), LT_OK);
        assert_int_equal(lt_mark_step(), LT_OK);
        LT_ASSERT_SHAPE(LT_OK_T(lt_grad(x)), 0, 1);
        LT_ASSERT_VALUES(lt_grad(p[0]), 0, 0);
        LT_ASSERT_VALUES(lt_grad(p[1]), 0, 0);
        lt_module_free(ln);
    }
}

/* matmul with an empty inner dimension: zeros forward, and empty
 * gradients of the inputs' shapes (for a batched a and a matrix b, too). */
static void test_matmul_grad_empty_inner_dim(void **state)
{
    (void)state;
    lt_device dev[3];
    const char *backend[3];
    int n = devices(dev, backend);
    for (int i = 0; i < n; i++) {
        if (backend[i])
            assert_int_equal(lt_lazy_set_backend(backend[i]), LT_OK);
        print_message("on %s\n", device_name(backend[i]));
        lt_tensor *a = LT_OK_T(lt_ones((int64_t[]){5, 5, 0}, 3, LT_F32, dev[i]));
        lt_tensor *b = LT_OK_T(lt_ones((int64_t[]){0, 5}, 2, LT_F32, dev[i]));
        assert_int_equal(lt_set_requires_grad(a, true), LT_OK);
        assert_int_equal(lt_set_requires_grad(b, true), LT_OK);
        lt_tensor *y = LT_OK_T(lt_matmul(a, b));
        LT_ASSERT_SHAPE(y, 5, 5, 5);
        double zeros[125] = {0};
        LT_ASSERT_ARRAY(y, zeros, 125, 0);
        assert_int_equal(lt_backward(lt_sum(y, NULL, 0, false), NULL), LT_OK);
        LT_ASSERT_SHAPE(LT_OK_T(lt_grad(a)), 5, 5, 0);
        LT_ASSERT_SHAPE(LT_OK_T(lt_grad(b)), 0, 5);
    }
}

/* An extent-0 loop inside a long one: the empty loop runs outermost, so
 * the long loop never starts (it used to spin through 2^40 empty
 * iterations); kernels with no output element are not run at all. */
static void test_empty_dim_inside_long_loop(void **state)
{
    (void)state;
    lt_device dev[3];
    const char *backend[3];
    int n = devices(dev, backend);
    int64_t big = (int64_t)1 << 40;
    alarm(120); /* a loop that spins kills the program instead of hanging */
    for (int i = 0; i < n; i++) {
        if (backend[i])
            assert_int_equal(lt_lazy_set_backend(backend[i]), LT_OK);
        print_message("on %s\n", device_name(backend[i]));
        lt_tensor *x = LT_OK_T(lt_zeros((int64_t[]){3, big, 0}, 3, LT_F32, dev[i]));
        LT_ASSERT_VALUES(lt_sum(x, (int[]){1, 2}, 2, false), 0, 0, 0, 0);
        LT_ASSERT_VALUES(lt_prod(lt_add_scalar(x, 1), (int[]){1, 2}, 2, false), 0, 1, 1, 1);
        lt_tensor *y = LT_OK_T(lt_softmax(lt_zeros((int64_t[]){big, 0}, 2, LT_F32, dev[i]), 1));
        lt_tensor *z = LT_OK_T(lt_neg(lt_permute(x, (int[]){2, 1, 0}, 3)));
        assert_int_equal(lt_mark_step(), LT_OK);
        LT_ASSERT_SHAPE(LT_OK_T(lt_to(y, lt_device_cpu())), big, 0);
        LT_ASSERT_SHAPE(LT_OK_T(lt_to(z, lt_device_cpu())), 0, big, 3);
    }
    alarm(0);
}

/* ---- random programs ----------------------------------------------------------------- */

/*
 * Random programs over shapes whose sizes are drawn from {0, 1, 2, 3, 5}:
 * chains of elementwise ops with broadcasting, reductions over random
 * dims, views, scans, softmax, matmul, reshapes and in-place updates of
 * views. Each program runs on the cpu device, then on the lazy device
 * (one step barrier for the whole program); every tensor it made must
 * agree, and a step the cpu device refuses must be refused on the lazy
 * device too. LT_FUZZ_PROGRAMS sets how many programs run per backend.
 */

typedef struct fuzz {
    uint64_t state;
    lt_device dev;
    lt_tensor *pool[8];
    int n;
    char log[2048];
    size_t used;
} fuzz;

static uint64_t fuzz_next(fuzz *f)
{
    f->state ^= f->state << 13;
    f->state ^= f->state >> 7;
    f->state ^= f->state << 17;
    return f->state;
}

static int fuzz_pick(fuzz *f, int n) { return n > 0 ? (int)(fuzz_next(f) % (uint64_t)n) : 0; }

static void fuzz_note(fuzz *f, const char *what, int a, int b)
{
    if (f->used < sizeof f->log)
        f->used += (size_t)snprintf(f->log + f->used, sizeof f->log - f->used, " %s(%d,%d)", what, a, b);
}

static int64_t fuzz_size(fuzz *f)
{
    static const int64_t sizes[] = {0, 1, 2, 3, 5};
    return sizes[fuzz_pick(f, 5)];
}

/* A fresh input of the given shape, values in [-2, 2]. */
static lt_tensor *fuzz_input(fuzz *f, const int64_t *shape, int nd)
{
    int64_t n = lt_shape_numel(shape, nd);
    double *v = malloc(sizeof *v * (size_t)(n ? n : 1));
    double phase = (double)fuzz_pick(f, 1000) * 0.01;
    if (!v)
        return NULL;
    for (int64_t i = 0; i < n; i++)
        v[i] = 2 * sin((double)i * 0.917 + phase);
    lt_tensor *t = lt_from_data(v, shape, nd, LT_F64, lt_device_cpu());
    free(v);
    t = t ? lt_to_dtype(t, LT_F32) : NULL;
    return t ? lt_to(t, f->dev) : NULL;
}

/* A fresh operand that broadcasts against a: some dims 1, some leading
 * dims dropped. */
static lt_tensor *fuzz_broadcast_operand(fuzz *f, lt_tensor *a)
{
    int nd = lt_tensor_ndim(a), drop = fuzz_pick(f, nd + 1);
    int64_t shape[LT_MAX_DIMS];
    for (int d = drop; d < nd; d++)
        shape[d - drop] = fuzz_pick(f, 3) == 0 ? 1 : lt_tensor_shape(a)[d];
    return fuzz_input(f, shape, nd - drop);
}

static lt_tensor *fuzz_elementwise(fuzz *f, lt_tensor *a)
{
    int op = fuzz_pick(f, 9);
    fuzz_note(f, "ew", op, 0);
    switch (op) {
    case 0: return lt_neg(a);
    case 1: return lt_exp(lt_clamp(a, -5, 5));
    case 2: return lt_tanh(a);
    case 3: return lt_sigmoid(a);
    case 4: return lt_relu(a);
    case 5: return lt_add(a, fuzz_broadcast_operand(f, a));
    case 6: return lt_mul(fuzz_broadcast_operand(f, a), a);
    case 7: return lt_maximum(a, fuzz_broadcast_operand(f, a));
    default: return lt_where(lt_gt_scalar(a, 0.1), a, fuzz_broadcast_operand(f, a));
    }
}

static lt_tensor *fuzz_reduce(fuzz *f, lt_tensor *a)
{
    int nd = lt_tensor_ndim(a), dims[LT_MAX_DIMS], n = 0, op = fuzz_pick(f, 8);
    bool keep = fuzz_pick(f, 2);
    for (int d = 0; d < nd; d++)
        if (fuzz_pick(f, 2))
            dims[n++] = d;
    if (n == 0 && nd > 0)
        dims[n++] = fuzz_pick(f, nd);
    fuzz_note(f, "reduce", op, n ? dims[0] : -1);
    switch (op) {
    case 0: return lt_sum(a, dims, n, keep);
    case 1: return lt_mean(a, dims, n, keep);
    case 2: return lt_prod(lt_clamp(a, -1.5, 1.5), dims, n, keep);
    case 3: return lt_amax(a, dims, n, keep);
    case 4: return lt_logsumexp(a, dims, n, keep);
    case 5: return lt_var(a, dims, n, 1, keep);
    case 6: return lt_argmax(a, n ? dims[0] : 0, keep);
    default: return lt_add(a, lt_mean(a, dims, n, true)); /* broadcast back */
    }
}

static lt_tensor *fuzz_view(fuzz *f, lt_tensor *a)
{
    int nd = lt_tensor_ndim(a), op = fuzz_pick(f, 8), d = fuzz_pick(f, nd);
    const int64_t *s = lt_tensor_shape(a);
    fuzz_note(f, "view", op, d);
    if (nd == 0)
        return lt_unsqueeze(a, 0);
    switch (op) {
    case 0: {
        int perm[LT_MAX_DIMS];
        for (int i = 0; i < nd; i++)
            perm[i] = i;
        for (int i = nd - 1; i > 0; i--) {
            int j = fuzz_pick(f, i + 1), t = perm[i];
            perm[i] = perm[j], perm[j] = t;
        }
        return lt_permute(a, perm, nd);
    }
    case 1: {
        int64_t start = fuzz_pick(f, (int)s[d] + 1);
        return lt_narrow(a, d, start, fuzz_pick(f, (int)(s[d] - start) + 1));
    }
    case 2: return s[d] > 0 ? lt_select(a, d, fuzz_pick(f, (int)s[d])) : lt_unsqueeze(a, d);
    case 3: return lt_unsqueeze(a, fuzz_pick(f, nd + 1));
    case 4: {
        int64_t shape[LT_MAX_DIMS];
        for (int i = 0; i < nd; i++)
            shape[i] = s[i] == 1 ? fuzz_size(f) : s[i];
        return lt_expand(a, shape, nd);
    }
    case 5: return lt_slice(a, d, fuzz_pick(f, 2), s[d], 1 + fuzz_pick(f, 2));
    case 6: return lt_flatten(a, 0, nd - 1);
    default: { /* a reshape into the same sizes in another order */
        int64_t shape[LT_MAX_DIMS];
        for (int i = 0; i < nd; i++)
            shape[i] = s[nd - 1 - i];
        return lt_reshape(a, shape, nd);
    }
    }
}

static lt_tensor *fuzz_other(fuzz *f, lt_tensor *a)
{
    int nd = lt_tensor_ndim(a), op = fuzz_pick(f, 9), d = fuzz_pick(f, nd);
    fuzz_note(f, "other", op, d);
    if (nd == 0)
        return lt_mul_scalar(a, 3);
    switch (op) {
    case 0: return lt_softmax(a, d);
    case 1: return lt_log_softmax(a, d);
    case 2: return lt_cumsum(a, d);
    case 3: {
        int64_t shape[2] = {lt_tensor_shape(a)[nd - 1], fuzz_size(f)};
        return lt_matmul(a, fuzz_input(f, shape, 2));
    }
    case 4: { /* an in-place update of a view of a copy */
        lt_tensor *c = lt_clone(a);
        int64_t len = lt_tensor_shape(a)[d];
        if (!c || !lt_add_scalar_(lt_narrow(c, d, len / 2, len - len / 2), 1.5))
            return NULL;
        return lt_mul_(c, fuzz_broadcast_operand(f, c)) ? c : NULL;
    }
    case 5: { /* with a piece of any size along d, 0 included */
        int64_t shape[LT_MAX_DIMS];
        memcpy(shape, lt_tensor_shape(a), sizeof(int64_t) * (size_t)nd);
        shape[d] = fuzz_size(f);
        return lt_cat((lt_tensor *[]){a, fuzz_input(f, shape, nd)}, 2, d);
    }
    case 6: { /* a scattered write through a select, then a read of the whole */
        lt_tensor *c = lt_clone(a);
        int64_t len = lt_tensor_shape(a)[d];
        if (!c || (len > 0 && !lt_fill_(lt_select(c, d, len - 1), -0.5)))
            return NULL;
        return lt_sum(c, NULL, 0, false);
    }
    case 7: return lt_to_dtype(lt_to_dtype(a, fuzz_pick(f, 2) ? LT_BF16 : LT_F64), LT_F32);
    default: return lt_contiguous(lt_transpose(a, 0, nd - 1));
    }
}

/* One step: a new tensor from a random member of the pool (NULL when the
 * op refused it). */
static lt_tensor *fuzz_step(fuzz *f)
{
    lt_tensor *a = f->pool[fuzz_pick(f, f->n)];
    switch (fuzz_pick(f, 4)) {
    case 0: return fuzz_elementwise(f, a);
    case 1: return fuzz_reduce(f, a);
    case 2: return fuzz_view(f, a);
    default: return fuzz_other(f, a);
    }
}

#define FUZZ_STEPS 10

/* Runs program `seed` on dev: its tensors (in pool order) and which steps
 * succeeded. */
static void fuzz_run(fuzz *f, uint64_t seed, lt_device dev, bool *ok)
{
    memset(f, 0, sizeof *f);
    f->state = seed * 0x9E3779B97F4A7C15ull + 1;
    f->dev = dev;
    for (int i = 0; i < 2; i++) {
        int nd = 1 + fuzz_pick(f, 4);
        int64_t shape[LT_MAX_DIMS];
        for (int d = 0; d < nd; d++)
            shape[d] = fuzz_size(f);
        f->pool[f->n++] = fuzz_input(f, shape, nd);
    }
    for (int s = 0; s < FUZZ_STEPS; s++) {
        lt_tensor *t = fuzz_step(f);
        ok[s] = t != NULL;
        lt_clear_error();
        if (!t)
            continue;
        if (f->n < 8)
            f->pool[f->n++] = t;
        else
            f->pool[fuzz_pick(f, 8)] = t;
    }
}

/* Compares program `seed` on the cpu device and on the lazy device. */
static bool fuzz_compare(uint64_t seed, const char *backend)
{
    fuzz e, l;
    bool eok[FUZZ_STEPS], lok[FUZZ_STEPS], ok = true;
    lt_scope_begin();
    fuzz_run(&e, seed, lt_device_cpu(), eok);
    fuzz_run(&l, seed, lt_device_parse("lazy"), lok);
    for (int s = 0; ok && s < FUZZ_STEPS; s++)
        ok = eok[s] == lok[s];
    if (ok && lt_mark_step() != LT_OK) {
        print_error("program %llu on lazy/%s: %s\n", (unsigned long long)seed, backend, lt_last_error());
        ok = false;
    }
    for (int i = 0; ok && i < e.n; i++) {
        lt_tensor *x = e.pool[i] && l.pool[i] ? lt_to(l.pool[i], lt_device_cpu()) : NULL;
        ok = x && lt_tensor_ndim(x) == lt_tensor_ndim(e.pool[i]) && lt_tensor_dtype(x) == lt_tensor_dtype(e.pool[i]);
        for (int d = 0; ok && d < lt_tensor_ndim(x); d++)
            ok = lt_tensor_shape(x)[d] == lt_tensor_shape(e.pool[i])[d];
        double *ev = ok ? lt_test_values(e.pool[i]) : NULL, *lv = ok ? lt_test_values(x) : NULL;
        ok = ok && ev && lv;
        for (int64_t k = 0; ok && k < lt_tensor_numel(x); k++)
            ok = (isnan(ev[k]) && isnan(lv[k])) || ev[k] == lv[k] || fabs(ev[k] - lv[k]) <= 1e-4 * (1 + fabs(ev[k]));
        free(ev);
        free(lv);
    }
    if (!ok)
        print_error("program %llu differs on lazy/%s (%s):%s\n", (unsigned long long)seed, backend,
                    lt_last_error(), e.log);
    lt_clear_error();
    lt_scope_end();
    return ok;
}

static int fuzz_programs(const char *backend)
{
    const char *env = getenv("LT_FUZZ_PROGRAMS");
    int n = env ? atoi(env) : 40, failures = 0;
    assert_int_equal(lt_lazy_set_backend(backend), LT_OK);
    for (int i = 0; i < n; i++)
        failures += !fuzz_compare((uint64_t)i + 1, backend);
    print_message("%d random programs on the %s backend, %d failures\n", n, backend, failures);
    return failures;
}

static void test_random_programs_interp(void **state)
{
    (void)state;
    assert_int_equal(fuzz_programs("interp"), 0);
}

static void test_random_programs_cpu(void **state)
{
    (void)state;
    if (!cpu_backend_available())
        skip();
    assert_int_equal(fuzz_programs("cpu"), 0);
}

int main(void)
{
    /* compiled programs go to a private cache, never to ~/.cache */
    char dir[] = "/tmp/lt_compiler_regress_cache_XXXXXX";
    if (!mkdtemp(dir))
        return 1;
    setenv("LT_CACHE_DIR", dir, 1);
    const struct CMUnitTest tests[] = {
        LT_TEST(test_integer_ops_interp),
        LT_TEST(test_integer_ops_cpu),
        LT_TEST(test_integer_clamp_known_values),
        LT_TEST(test_float_to_int_out_of_range),
        LT_TEST(test_reduction_rounded_before_widening),
        LT_TEST(test_view_root_never_aliases_a_temporary),
        LT_TEST(test_softmax_of_a_masked_scaled_row),
        LT_TEST(test_loop_invariant_values),
        LT_TEST(test_empty_dim_in_loop_nest),
        LT_TEST(test_empty_dim_inside_long_loop),
        LT_TEST(test_empty_temporary),
        LT_TEST(test_reduce_over_empty_dim),
        LT_TEST(test_linear_grad_empty_batch),
        LT_TEST(test_layer_norm_grad_empty_batch),
        LT_TEST(test_matmul_grad_empty_inner_dim),
        LT_TEST(test_random_programs_interp),
        LT_TEST(test_random_programs_cpu),
    };
    int failed = cmocka_run_group_tests(tests, NULL, NULL);
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    if (system(cmd) != 0)
        failed++;
    return failed;
}
