/* test_elementwise.c - unary elementwise ops, clamp, logical_not and where:
 * values against C math.h formulas in double for every dtype, integer
 * wraparound, special values (NaN, inf, -0), rounding half to even,
 * strided/expanded/0-d/size-0 inputs, in-place unary ops on views, and
 * bad input. Binary ops are in test_elementwise_binary.c. */
#include "lt_test.h"

/* Tolerance (absolute + relative) for results stored in dt. */
static double tol_of(lt_dtype dt)
{
    switch (dt) {
    case LT_F64: return 1e-12;
    case LT_F32: return 3e-6;
    case LT_F16: return 2e-3;
    case LT_BF16: return 1e-2;
    default: return 0;
    }
}

/* Test values representable in dt (u8 has no negatives, bool is 0/1). */
static int values_for(lt_dtype dt, double *v)
{
    static const double floats[] = {-2.5, -1.0, -0.25, 0.0, 0.5, 1.0, 3.0};
    static const double ints[] = {-3, -1, 0, 1, 2, 5};
    static const double u8s[] = {0, 1, 2, 5, 200};
    static const double bools[] = {0, 1, 1, 0};
    const double *src = lt_dtype_is_floating(dt) ? floats : dt == LT_U8 ? u8s : dt == LT_BOOL ? bools : ints;
    int n = lt_dtype_is_floating(dt) ? 7 : dt == LT_U8 ? 5 : dt == LT_BOOL ? 4 : 6;
    memcpy(v, src, sizeof(double) * (size_t)n);
    return n;
}

/* e rounded to dtype dt (so that overflow to inf is expected too). */
static double round_to(lt_dtype dt, double e)
{
    switch (dt) {
    case LT_F32: return (float)e;
    case LT_F16: return lt_f16_to_f32(lt_f32_to_f16((float)e));
    case LT_BF16: return lt_bf16_to_f32(lt_f32_to_bf16((float)e));
    default: return e;
    }
}

typedef lt_tensor *(*unary_fn)(lt_tensor *);
typedef double (*ref_fn)(double);

/* Runs fn on values of dt and compares with ref (in double) applied to the
 * values as stored; the result must have dtype expect_dt. */
static void check_unary(const char *name, unary_fn fn, ref_fn ref, lt_dtype dt, lt_dtype expect_dt)
{
    double vals[8], expect[8];
    int n = values_for(dt, vals);
    lt_tensor *x = LT_OK_T(lt_test_tensor(vals, (int64_t[]){n}, 1, dt));
    double *stored = lt_test_values(x);
    for (int i = 0; i < n; i++)
        expect[i] = round_to(expect_dt, ref(stored[i]));
    free(stored);
    lt_tensor *y = fn(x);
    if (!y)
        fail_msg("%s(%s) failed: %s", name, lt_dtype_name(dt), lt_last_error());
    if (lt_tensor_dtype(y) != expect_dt)
        fail_msg("%s(%s) gave dtype %s, expected %s", name, lt_dtype_name(dt),
                 lt_dtype_name(lt_tensor_dtype(y)), lt_dtype_name(expect_dt));
    LT_ASSERT_SHAPE(y, n);
    double *got = lt_test_values(y), tol = tol_of(expect_dt);
    for (int i = 0; i < n; i++) {
        double e = expect[i], g = got[i];
        bool ok = (isnan(e) && isnan(g)) || (isinf(e) && g == e) ||
                  (!isinf(e) && fabs(g - e) <= tol * (1.0 + fabs(e)));
        if (!ok) {
            free(got);
            fail_msg("%s(%s): element %d (input %g) is %.9g, expected %.9g", name, lt_dtype_name(dt), i,
                     vals[i], g, e);
        }
    }
    free(got);
}

static double r_rsqrt(double x) { return 1.0 / sqrt(x); }
static double r_sigmoid(double x) { return 1.0 / (1.0 + exp(-x)); }
static double r_gelu(double x) { return 0.5 * x * (1.0 + erf(x / sqrt(2.0))); }
static double r_silu(double x) { return x / (1.0 + exp(-x)); }
static double r_reciprocal(double x) { return 1.0 / x; }
static double r_neg(double x) { return -x; }
static double r_relu(double x) { return x > 0 ? x : 0; }
static double r_sign(double x) { return (x > 0) - (x < 0); }
static double r_not(double x) { return x == 0; }

static const struct {
    const char *name;
    unary_fn fn;
    ref_fn ref;
} float_ops[] = {
    {"exp", lt_exp, exp},       {"log", lt_log, log},         {"log1p", lt_log1p, log1p},
    {"expm1", lt_expm1, expm1}, {"sqrt", lt_sqrt, sqrt},      {"rsqrt", lt_rsqrt, r_rsqrt},
    {"sin", lt_sin, sin},       {"cos", lt_cos, cos},         {"tanh", lt_tanh, tanh},
    {"sigmoid", lt_sigmoid, r_sigmoid}, {"gelu", lt_gelu, r_gelu}, {"silu", lt_silu, r_silu},
    {"erf", lt_erf, erf},       {"reciprocal", lt_reciprocal, r_reciprocal},
};

static void test_float_ops_every_dtype(void **state)
{
    (void)state;
    for (size_t k = 0; k < sizeof float_ops / sizeof float_ops[0]; k++) {
        for (int d = 0; d < LT_TEST_N_DTYPES; d++) {
            lt_dtype dt = lt_test_all_dtypes[d];
            lt_dtype out = lt_dtype_is_floating(dt) ? dt : LT_F32; /* integers give f32 */
            check_unary(float_ops[k].name, float_ops[k].fn, float_ops[k].ref, dt, out);
        }
    }
}

static const struct {
    const char *name;
    unary_fn fn;
    ref_fn ref;
    bool bool_ok;
} keep_ops[] = {
    {"neg", lt_neg, r_neg, false},       {"abs", lt_abs, fabs, true},     {"relu", lt_relu, r_relu, true},
    {"sign", lt_sign, r_sign, false},    {"floor", lt_floor, floor, true}, {"ceil", lt_ceil, ceil, true},
    {"round", lt_round, nearbyint, true},
};

static double r_neg_u8(double x) { return fmod(256.0 - x, 256.0); }

static void test_dtype_keeping_ops_every_dtype(void **state)
{
    (void)state;
    for (size_t k = 0; k < sizeof keep_ops / sizeof keep_ops[0]; k++) {
        for (int d = 0; d < LT_TEST_N_DTYPES; d++) {
            lt_dtype dt = lt_test_all_dtypes[d];
            if (dt == LT_BOOL && !keep_ops[k].bool_ok)
                continue;
            ref_fn ref = keep_ops[k].fn == lt_neg && dt == LT_U8 ? r_neg_u8 : keep_ops[k].ref;
            check_unary(keep_ops[k].name, keep_ops[k].fn, ref, dt, dt);
        }
    }
    /* known values */
    LT_ASSERT_VALUES(lt_neg(LT_T(LT_U8, LT_DIMS(3), 1, 0, 255)), 0, 255, 0, 1);
    LT_ASSERT_VALUES(lt_sign(LT_T(LT_U8, LT_DIMS(2), 0, 3)), 0, 0, 1);
    lt_tensor *sb = LT_OK_T(lt_sign(LT_T(LT_BOOL, LT_DIMS(2), 0, 1))); /* bool keeps its values, as torch */
    assert_int_equal(lt_tensor_dtype(sb), LT_BOOL);
    LT_ASSERT_VALUES(sb, 0, 0, 1);
    LT_ASSERT_VALUES(lt_floor(LT_T(LT_F32, LT_DIMS(3), -1.5, 1.5, 2.0)), 0, -2, 1, 2);
    LT_ASSERT_VALUES(lt_ceil(LT_T(LT_F64, LT_DIMS(3), -1.5, 1.5, 2.0)), 0, -1, 2, 2);
}

static void test_logical_not_every_dtype(void **state)
{
    (void)state;
    for (int d = 0; d < LT_TEST_N_DTYPES; d++)
        check_unary("logical_not", lt_logical_not, r_not, lt_test_all_dtypes[d], LT_BOOL);
    /* NaN is "true", so its negation is false */
    LT_ASSERT_VALUES(lt_logical_not(LT_T(LT_F32, LT_DIMS(3), NAN, 0.0, -0.0)), 0, 0, 1, 1);
}

static void test_round_half_to_even(void **state)
{
    (void)state;
    const lt_dtype dts[] = {LT_F32, LT_F64, LT_BF16, LT_F16};
    for (int d = 0; d < 4; d++) {
        lt_tensor *x = LT_T(dts[d], LT_DIMS(8), 0.5, 1.5, 2.5, -0.5, -1.5, -2.5, 3.5, 2.25);
        lt_tensor *r = LT_OK_T(lt_round(x));
        assert_int_equal(lt_tensor_dtype(r), dts[d]);
        LT_ASSERT_VALUES(r, 0, 0, 2, 2, -0.0, -2, -2, 4, 2);
    }
    LT_ASSERT_VALUES(lt_round(LT_T(LT_F64, LT_DIMS(2), 2.4999999, 1e15 + 0.5)), 0, 2, 1e15);
    LT_ASSERT_VALUES(lt_round(LT_T(LT_I64, LT_DIMS(2), -7, 9)), 0, -7, 9);
}

static void test_special_values(void **state)
{
    (void)state;
    lt_tensor *x = LT_T(LT_F32, LT_DIMS(5), -INFINITY, -100, 0, 100, INFINITY);
    LT_ASSERT_VALUES(lt_exp(x), 1e-6, 0, 0, 1, INFINITY, INFINITY);
    LT_ASSERT_VALUES(lt_sigmoid(x), 1e-6, 0, 0, 0.5, 1, 1);
    LT_ASSERT_VALUES(lt_tanh(x), 1e-6, -1, -1, 0, 1, 1);
    LT_ASSERT_VALUES(lt_silu(LT_T(LT_F32, LT_DIMS(3), -100, 0, 100)), 1e-6, 0, 0, 100);
    LT_ASSERT_VALUES(lt_log(LT_T(LT_F64, LT_DIMS(3), 0, -1, INFINITY)), 0, -INFINITY, NAN, INFINITY);
    LT_ASSERT_VALUES(lt_sqrt(LT_T(LT_F32, LT_DIMS(2), -1, 4)), 0, NAN, 2);
    LT_ASSERT_VALUES(lt_reciprocal(LT_T(LT_F32, LT_DIMS(2), 0, -0.0)), 0, INFINITY, -INFINITY);
    LT_ASSERT_VALUES(lt_rsqrt(LT_T(LT_F16, LT_DIMS(2), 0, 4)), 0, INFINITY, 0.5);
    /* NaN: relu and abs keep it, sign gives 0 (like torch) */
    lt_tensor *n = LT_T(LT_F32, LT_DIMS(2), NAN, -NAN);
    LT_ASSERT_VALUES(lt_relu(n), 0, NAN, NAN);
    LT_ASSERT_VALUES(lt_abs(n), 0, NAN, NAN);
    LT_ASSERT_VALUES(lt_sign(n), 0, 0, 0);
    LT_ASSERT_VALUES(lt_floor(n), 0, NAN, NAN);
    /* relu(-0) is +0 */
    float r = 1;
    lt_tensor *z = LT_OK_T(lt_relu(LT_T(LT_F32, LT_DIMS(1), -0.0)));
    assert_int_equal(lt_copy_to_host(z, &r, sizeof r), LT_OK);
    assert_true(r == 0 && !signbit(r));
    /* gelu at known points (torch.nn.functional.gelu) */
    LT_ASSERT_VALUES(lt_gelu(LT_T(LT_F32, LT_DIMS(3), -1, 0.5, 3)), 1e-6, -0.15865525, 0.34573123,
                     2.99595031);
}

static void test_integer_wraparound_unary(void **state)
{
    (void)state;
    int32_t v32[3] = {INT32_MIN, INT32_MAX, -5};
    lt_tensor *t32 = LT_OK_T(lt_from_data(v32, (int64_t[]){3}, 1, LT_I32, lt_test_cpu()));
    int32_t o32[3];
    assert_int_equal(lt_copy_to_host(LT_OK_T(lt_neg(t32)), o32, sizeof o32), LT_OK);
    assert_true(o32[0] == INT32_MIN && o32[1] == -INT32_MAX && o32[2] == 5);
    assert_int_equal(lt_copy_to_host(LT_OK_T(lt_abs(t32)), o32, sizeof o32), LT_OK);
    assert_true(o32[0] == INT32_MIN && o32[1] == INT32_MAX && o32[2] == 5);
    int64_t v64[3] = {INT64_MIN, INT64_MAX, -7};
    lt_tensor *t64 = LT_OK_T(lt_from_data(v64, (int64_t[]){3}, 1, LT_I64, lt_test_cpu()));
    int64_t o64[3];
    assert_int_equal(lt_copy_to_host(LT_OK_T(lt_neg(t64)), o64, sizeof o64), LT_OK);
    assert_true(o64[0] == INT64_MIN && o64[1] == -INT64_MAX && o64[2] == 7);
    assert_int_equal(lt_copy_to_host(LT_OK_T(lt_abs(t64)), o64, sizeof o64), LT_OK);
    assert_true(o64[0] == INT64_MIN && o64[1] == INT64_MAX && o64[2] == 7);
    assert_int_equal(lt_copy_to_host(LT_OK_T(lt_sign(t64)), o64, sizeof o64), LT_OK);
    assert_true(o64[0] == -1 && o64[1] == 1 && o64[2] == -1);
    assert_int_equal(lt_copy_to_host(LT_OK_T(lt_relu(t64)), o64, sizeof o64), LT_OK);
    assert_true(o64[0] == 0 && o64[1] == INT64_MAX && o64[2] == 0);
}

static void test_clamp(void **state)
{
    (void)state;
    lt_tensor *f = LT_T(LT_F32, LT_DIMS(5), -3, -0.5, 0.25, 2, NAN);
    LT_ASSERT_VALUES(lt_clamp(f, -1, 1), 0, -1, -0.5, 0.25, 1, NAN);
    LT_ASSERT_VALUES(lt_clamp(f, -INFINITY, 0), 0, -3, -0.5, 0, 0, NAN);
    LT_ASSERT_VALUES(lt_clamp(f, 0.5, INFINITY), 0, 0.5, 0.5, 0.5, 2, NAN);
    LT_ASSERT_VALUES(lt_clamp(f, 1, 1), 0, 1, 1, 1, 1, NAN);
    const lt_dtype floats[] = {LT_F64, LT_BF16, LT_F16};
    for (int d = 0; d < 3; d++) {
        lt_tensor *c = LT_OK_T(lt_clamp(LT_T(floats[d], LT_DIMS(4), -3, -0.5, 0.25, 2), -1, 1));
        assert_int_equal(lt_tensor_dtype(c), floats[d]);
        LT_ASSERT_VALUES(c, 0, -1, -0.5, 0.25, 1);
    }
    /* integers keep their dtype with integral bounds; a fractional bound is
     * a Python float to torch: the result is f32 */
    lt_tensor *i = LT_T(LT_I32, LT_DIMS(5), -5, -1, 0, 2, 9);
    lt_tensor *ci = LT_OK_T(lt_clamp(i, -1.5, 2.5));
    assert_int_equal(lt_tensor_dtype(ci), LT_F32);
    LT_ASSERT_VALUES(ci, 0, -1.5, -1, 0, 2, 2.5);
    ci = LT_OK_T(lt_clamp(i, -1e300, 1e300));
    assert_int_equal(lt_tensor_dtype(ci), LT_I32);
    LT_ASSERT_VALUES(ci, 0, -5, -1, 0, 2, 9);
    LT_ASSERT_VALUES(lt_clamp(i, 0.25, 0.75), 0, 0.25, 0.25, 0.25, 0.75, 0.75);
    LT_ASSERT_VALUES(lt_clamp(LT_T(LT_I64, LT_DIMS(3), -5, 3, 7), -INFINITY, 4), 0, -5, 3, 4);
    LT_ASSERT_VALUES(lt_clamp(LT_T(LT_U8, LT_DIMS(3), 0, 100, 250), -10, 200), 0, 0, 100, 200);
    LT_ASSERT_VALUES(lt_clamp(LT_T(LT_U8, LT_DIMS(2), 0, 100), 300, 400), 0, 255, 255);
    /* bad bounds and dtypes */
    /* lo > hi: hi everywhere, NaN stays (torch's min(max(x, lo), hi)) */
    LT_ASSERT_VALUES(lt_clamp(LT_T(LT_F32, LT_DIMS(3), -5, NAN, 5), 2, 1), 0, 1, NAN, 1);
    LT_ASSERT_VALUES(lt_clamp(LT_T(LT_I64, LT_DIMS(2), -5, 5), 2, 1), 0, 1, 1);
    assert_null(lt_clamp(f, NAN, 1));
    LT_EXPECT_ERROR(LT_ERR_ARGUMENT, "clamp: bounds must not be NaN");
    assert_null(lt_clamp(LT_T(LT_BOOL, LT_DIMS(1), 1), 0, 1));
    LT_EXPECT_ERROR(LT_ERR_DTYPE, "clamp: bool");
    assert_null(lt_clamp_(f, NAN, 0));
    LT_EXPECT_ERROR(LT_ERR_ARGUMENT, "clamp");
}

/* Unary ops read strided, expanded and offset views correctly. */
static void test_unary_strided_inputs(void **state)
{
    (void)state;
    lt_tensor *m = LT_T(LT_F32, LT_DIMS(2, 3), 1, 2, 3, 4, 5, 6);
    lt_tensor *mt = lt_test_transpose2d(m); /* [[1,4],[2,5],[3,6]] */
    lt_tensor *e = LT_OK_T(lt_neg(mt));
    LT_ASSERT_SHAPE(e, 3, 2);
    assert_true(lt_tensor_is_contiguous(e));
    LT_ASSERT_VALUES(e, 0, -1, -4, -2, -5, -3, -6);
    LT_ASSERT_VALUES(lt_sqrt(mt), 1e-6, 1, 2, sqrt(2), sqrt(5), sqrt(3), sqrt(6));
    /* a column (stride 3, offset 1) */
    lt_tensor *col = lt_test_view_of(m, (int64_t[]){2}, (int64_t[]){3}, 1, 1);
    LT_ASSERT_VALUES(lt_exp(col), 1e-6, exp(2), exp(5));
    /* an expanded row (stride 0): the broadcast-scalar path */
    lt_tensor *rep = lt_test_view_of(m, (int64_t[]){4, 3}, (int64_t[]){0, 1}, 2, 3);
    LT_ASSERT_VALUES(lt_abs(lt_neg(rep)), 0, 4, 5, 6, 4, 5, 6, 4, 5, 6, 4, 5, 6);
    lt_tensor *one = lt_test_view_of(m, (int64_t[]){5}, (int64_t[]){0}, 1, 5);
    LT_ASSERT_VALUES(lt_relu(one), 0, 6, 6, 6, 6, 6);
    /* an integer transposed input of a float op, and half dtypes */
    lt_tensor *mi = lt_test_transpose2d(LT_T(LT_I32, LT_DIMS(2, 2), 1, 2, 3, 4));
    LT_ASSERT_VALUES(lt_reciprocal(mi), 1e-7, 1, 1.0 / 3, 0.5, 0.25);
    lt_tensor *mh = lt_test_transpose2d(LT_T(LT_F16, LT_DIMS(2, 2), 1, 2, 3, 4));
    LT_ASSERT_VALUES(lt_neg(mh), 0, -1, -3, -2, -4);
}

/* Large inputs go through the parallel iterator; check every element. */
static void test_unary_large_parallel(void **state)
{
    (void)state;
    const int64_t rows = 300, cols = 257; /* 77100 elements > LT_PARALLEL_GRAIN */
    int64_t n = rows * cols;
    double *v = malloc(sizeof(double) * (size_t)n);
    double *expect = malloc(sizeof(double) * (size_t)n);
    for (int64_t i = 0; i < n; i++)
        v[i] = (double)(i % 1000) / 100.0 - 5.0;
    lt_tensor *x = LT_OK_T(lt_from_data(v, (int64_t[]){rows, cols}, 2, LT_F64, lt_test_cpu()));
    for (int64_t i = 0; i < n; i++)
        expect[i] = tanh(v[i]);
    LT_ASSERT_ARRAY(lt_tanh(x), expect, n, 1e-12);
    /* transposed: element (r, c) of the result is x[c][r] */
    lt_tensor *xt = lt_test_transpose2d(x);
    for (int64_t r = 0; r < cols; r++)
        for (int64_t c = 0; c < rows; c++)
            expect[r * rows + c] = floor(v[c * cols + r]);
    LT_ASSERT_ARRAY(lt_floor(xt), expect, n, 0);
    /* f16 via the f32 temporary */
    lt_tensor *h = LT_OK_T(lt_to_dtype(x, LT_F16));
    double *hv = lt_test_values(h);
    for (int64_t i = 0; i < n; i++)
        expect[i] = hv[i] > 0 ? hv[i] : 0;
    LT_ASSERT_ARRAY(lt_relu(h), expect, n, 0);
    free(hv);
    free(v);
    free(expect);
}

static void test_unary_zero_dim_and_empty(void **state)
{
    (void)state;
    lt_tensor *s = LT_OK_T(lt_scalar(-2, LT_F32, lt_test_cpu()));
    lt_tensor *a = LT_OK_T(lt_abs(s));
    assert_int_equal(lt_tensor_ndim(a), 0);
    LT_ASSERT_VALUES(a, 0, 2);
    lt_tensor *si = LT_OK_T(lt_scalar(3, LT_I64, lt_test_cpu()));
    lt_tensor *e = LT_OK_T(lt_exp(si));
    assert_int_equal(lt_tensor_ndim(e), 0);
    assert_int_equal(lt_tensor_dtype(e), LT_F32);
    LT_ASSERT_VALUES(e, 1e-6, exp(3));
    lt_tensor *empty = LT_OK_T(lt_zeros((int64_t[]){0, 3}, 2, LT_F16, lt_test_cpu()));
    lt_tensor *r = LT_OK_T(lt_sigmoid(empty));
    LT_ASSERT_SHAPE(r, 0, 3);
    assert_int_equal(lt_tensor_dtype(r), LT_F16);
    lt_tensor *ri = LT_OK_T(lt_sqrt(LT_OK_T(lt_zeros((int64_t[]){2, 0}, 2, LT_I32, lt_test_cpu()))));
    LT_ASSERT_SHAPE(ri, 2, 0);
    assert_int_equal(lt_tensor_dtype(ri), LT_F32);
    LT_ASSERT_SHAPE(LT_OK_T(lt_logical_not(empty)), 0, 3);
    /* size-1 dims */
    LT_ASSERT_VALUES(lt_neg(LT_T(LT_I32, LT_DIMS(1, 1, 2), 4, -4)), 0, -4, 4);
}

static void test_unary_inplace(void **state)
{
    (void)state;
    lt_tensor *t = LT_T(LT_F32, LT_DIMS(2, 3), -1, 2, -3, 4, -5, 6);
    assert_ptr_equal(lt_neg_(t), t);
    LT_ASSERT_VALUES(t, 0, 1, -2, 3, -4, 5, -6);
    assert_ptr_equal(lt_relu_(t), t);
    LT_ASSERT_VALUES(t, 0, 1, 0, 3, 0, 5, 0);
    assert_ptr_equal(lt_clamp_(t, 2, 4), t);
    LT_ASSERT_VALUES(t, 0, 2, 2, 3, 2, 4, 2);
    /* on a strided view: only the viewed elements of the base change */
    lt_tensor *base = LT_T(LT_I32, LT_DIMS(3, 3), -1, -2, -3, -4, -5, -6, -7, -8, -9);
    lt_tensor *col = lt_test_view_of(base, (int64_t[]){3}, (int64_t[]){3}, 1, 1); /* column 1 */
    assert_ptr_equal(lt_neg_(col), col);
    LT_ASSERT_VALUES(base, 0, -1, 2, -3, -4, 5, -6, -7, 8, -9);
    lt_tensor *bt = lt_test_transpose2d(base);
    assert_ptr_equal(lt_relu_(bt), bt);
    LT_ASSERT_VALUES(base, 0, 0, 2, 0, 0, 5, 0, 0, 8, 0);
    assert_ptr_equal(lt_clamp_(bt, 3, 6), bt);
    LT_ASSERT_VALUES(base, 0, 3, 3, 3, 3, 5, 3, 3, 6, 3);
    /* half dtypes (computed through f32) and u8 wraparound */
    lt_tensor *h = LT_T(LT_BF16, LT_DIMS(3), -1.5, 0, 2);
    assert_ptr_equal(lt_neg_(h), h);
    LT_ASSERT_VALUES(h, 0, 1.5, 0, -2);
    lt_tensor *hbase = LT_T(LT_F16, LT_DIMS(2, 2), 1, 2, 3, 4);
    lt_tensor *ht = lt_test_transpose2d(hbase); /* a strided half view: temporary, then a strided copy back */
    assert_ptr_equal(lt_clamp_(ht, 1.5, 3.5), ht);
    LT_ASSERT_VALUES(hbase, 0, 1.5, 2, 3, 3.5);
    lt_tensor *hodd = lt_test_view_of(hbase, (int64_t[]){2}, (int64_t[]){2}, 1, 1);
    assert_ptr_equal(lt_neg_(hodd), hodd);
    LT_ASSERT_VALUES(hbase, 0, 1.5, -2, 3, -3.5);
    lt_tensor *u = LT_T(LT_U8, LT_DIMS(2), 1, 0);
    assert_ptr_equal(lt_neg_(u), u);
    LT_ASSERT_VALUES(u, 0, 255, 0);
    /* errors leave the destination alone */
    lt_tensor *b = LT_T(LT_BOOL, LT_DIMS(2), 1, 0);
    assert_null(lt_neg_(b));
    LT_EXPECT_ERROR(LT_ERR_DTYPE, "neg: bool inputs are not supported");
    LT_ASSERT_VALUES(b, 0, 1, 0);
    assert_null(lt_relu_(NULL));
    LT_EXPECT_ERROR(LT_ERR_NULL, "relu_");
}

static void test_where(void **state)
{
    (void)state;
    lt_tensor *cond = LT_T(LT_BOOL, LT_DIMS(2, 3), 1, 0, 1, 0, 0, 1);
    for (int d = 0; d < LT_TEST_N_DTYPES; d++) {
        lt_dtype dt = lt_test_all_dtypes[d];
        bool is_bool = dt == LT_BOOL;
        lt_tensor *a = is_bool ? LT_T(dt, LT_DIMS(2, 3), 1, 1, 0, 1, 1, 0)
                               : LT_T(dt, LT_DIMS(2, 3), 1, 2, 3, 4, 5, 6);
        lt_tensor *b = is_bool ? LT_T(dt, LT_DIMS(2, 3), 0, 1, 1, 0, 0, 0)
                               : LT_T(dt, LT_DIMS(2, 3), 10, 20, 30, 40, 50, 60);
        lt_tensor *w = LT_OK_T(lt_where(cond, a, b));
        assert_int_equal(lt_tensor_dtype(w), dt);
        if (dt == LT_BOOL)
            LT_ASSERT_VALUES(w, 0, 1, 1, 0, 0, 0, 0);
        else
            LT_ASSERT_VALUES(w, 0, 1, 20, 3, 40, 50, 6);
    }
    /* broadcasting of all three, and promotion of the values */
    lt_tensor *c2 = LT_T(LT_BOOL, LT_DIMS(2, 1), 1, 0);
    lt_tensor *row = LT_T(LT_I32, LT_DIMS(1, 3), 1, 2, 3);
    lt_tensor *zero = LT_OK_T(lt_scalar(-0.5, LT_F32, lt_test_cpu()));
    lt_tensor *w = LT_OK_T(lt_where(c2, row, zero));
    LT_ASSERT_SHAPE(w, 2, 3);
    assert_int_equal(lt_tensor_dtype(w), LT_F32);
    LT_ASSERT_VALUES(w, 0, 1, 2, 3, -0.5, -0.5, -0.5);
    lt_tensor *wf = LT_OK_T(lt_where(c2, LT_T(LT_F16, LT_DIMS(3), 1, 2, 3), LT_T(LT_BF16, LT_DIMS(1), 7)));
    assert_int_equal(lt_tensor_dtype(wf), LT_F32);
    LT_ASSERT_VALUES(wf, 0, 1, 2, 3, 7, 7, 7);
    /* both values 0-d (the two-scalar path), and u8 values */
    lt_tensor *w2 = LT_OK_T(lt_where(cond, LT_OK_T(lt_scalar(7, LT_U8, lt_test_cpu())),
                                     LT_OK_T(lt_scalar(9, LT_U8, lt_test_cpu()))));
    assert_int_equal(lt_tensor_dtype(w2), LT_U8);
    LT_ASSERT_VALUES(w2, 0, 7, 9, 7, 9, 9, 7);
    /* strided condition and values */
    lt_tensor *ct = lt_test_transpose2d(cond); /* [[1,0],[0,0],[1,1]] */
    lt_tensor *vt = lt_test_transpose2d(LT_T(LT_F64, LT_DIMS(2, 3), 1, 2, 3, 4, 5, 6));
    LT_ASSERT_VALUES(lt_where(ct, vt, LT_OK_T(lt_scalar(0, LT_F64, lt_test_cpu()))), 0, 1, 0, 0, 0, 3, 6);
    /* large, parallel, with a scalar branch */
    int64_t n = 100000;
    lt_tensor *big = LT_OK_T(lt_arange(0, (double)n, 1, LT_I64, lt_test_cpu()));
    lt_tensor *zero_f = LT_OK_T(lt_scalar(0, LT_F32, lt_test_cpu()));
    lt_tensor *even = LT_OK_T(lt_eq(lt_remainder_scalar(big, 2), zero_f));
    lt_tensor *sel = LT_OK_T(lt_where(even, big, LT_OK_T(lt_scalar(-1, LT_I64, lt_test_cpu()))));
    assert_int_equal(lt_tensor_dtype(sel), LT_I64);
    int64_t *out = malloc(sizeof(int64_t) * (size_t)n);
    assert_int_equal(lt_copy_to_host(sel, out, sizeof(int64_t) * (size_t)n), LT_OK);
    for (int64_t i = 0; i < n; i++)
        if (out[i] != (i % 2 == 0 ? i : -1))
            fail_msg("where: element %lld is %lld", (long long)i, (long long)out[i]);
    free(out);
    /* 0-d and empty */
    lt_tensor *s = LT_OK_T(lt_where(LT_OK_T(lt_scalar(0, LT_BOOL, lt_test_cpu())), zero, zero));
    assert_int_equal(lt_tensor_ndim(s), 0);
    lt_tensor *no_rows = LT_OK_T(lt_zeros((int64_t[]){0, 1}, 2, LT_BOOL, lt_test_cpu()));
    LT_ASSERT_SHAPE(LT_OK_T(lt_where(no_rows, row, zero)), 0, 3);
    /* bad input */
    assert_null(lt_where(LT_T(LT_I32, LT_DIMS(1), 1), row, zero));
    LT_EXPECT_ERROR(LT_ERR_DTYPE, "where: condition has dtype i32, expected bool");
    assert_null(lt_where(cond, LT_T(LT_F32, LT_DIMS(4), 1, 2, 3, 4), zero));
    LT_EXPECT_ERROR(LT_ERR_SHAPE, "where: shapes [2, 3] and [4] are not broadcastable");
    assert_null(lt_where(cond, NULL, zero));
    LT_EXPECT_ERROR(LT_ERR_NULL, "where: argument 1 is NULL");
}

static void test_unary_bad_input(void **state)
{
    (void)state;
    assert_null(lt_exp(NULL));
    LT_EXPECT_ERROR(LT_ERR_NULL, "exp: argument 0 is NULL");
    /* a failed call's NULL keeps the first message */
    assert_null(lt_sqrt(lt_neg(LT_T(LT_BOOL, LT_DIMS(1), 1))));
    LT_EXPECT_ERROR(LT_ERR_DTYPE, "neg: bool inputs are not supported");
    lt_scope_begin();
    lt_tensor *t = LT_OK_T(lt_ones((int64_t[]){2}, 1, LT_F32, lt_test_cpu()));
    lt_scope_end(); /* t dies with its scope */
    assert_null(lt_tanh(t));
    LT_EXPECT_ERROR(LT_ERR_RELEASED, "tanh: argument 0 was used after its last reference was released");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        LT_TEST(test_float_ops_every_dtype),
        LT_TEST(test_dtype_keeping_ops_every_dtype),
        LT_TEST(test_logical_not_every_dtype),
        LT_TEST(test_round_half_to_even),
        LT_TEST(test_special_values),
        LT_TEST(test_integer_wraparound_unary),
        LT_TEST(test_clamp),
        LT_TEST(test_unary_strided_inputs),
        LT_TEST(test_unary_large_parallel),
        LT_TEST(test_unary_zero_dim_and_empty),
        LT_TEST(test_unary_inplace),
        LT_TEST(test_where),
        LT_TEST(test_unary_bad_input),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
