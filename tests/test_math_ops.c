/* test_math_ops.c - the math and activation ops of api_math.c: gradients
 * by finite differences (gradcheck.h, on cpu and, for a chain, on lazy
 * too), fusion (a chain of every new elementwise op on the lazy device with
 * the cpu backend is one kernel and calls no eager kernel), values of the
 * fused kernel against the eager device, and argument errors. Values
 * against PyTorch itself: tests/torch_diff (ctest torch_diff). */
#include "gradcheck.h"

#include <float.h>

/* ---- gradients ---------------------------------------------------------- */

enum { ANY, UNIT, BIG1, POS };

static lt_tensor *make_input(int domain, const int64_t *dims, int nd)
{
    switch (domain) {
    case UNIT: return gc_uniform(dims, nd, -0.8, 0.8);
    case BIG1: return gc_uniform(dims, nd, 1.2, 3.0);
    case POS: return gc_uniform(dims, nd, 0.2, 2.0);
    default: return gc_away_from_zero(dims, nd, 0.05, 2.5); /* kinks at 0 stay out of reach */
    }
}

typedef struct unary_case {
    const char *name;
    lt_tensor *(*op)(lt_tensor *);
    int domain;
} unary_case;

static lt_tensor *softplus2(lt_tensor *t) { return lt_softplus(t, 2.0, 1.5); }
static lt_tensor *elu07(lt_tensor *t) { return lt_elu(t, 0.7); }
static lt_tensor *celu2(lt_tensor *t) { return lt_celu(t, 2.0); }
static lt_tensor *leaky(lt_tensor *t) { return lt_leaky_relu(t, 0.1); }
static lt_tensor *hardtanh_1(lt_tensor *t) { return lt_hardtanh(t, -1.0, 1.5); }
static lt_tensor *glu_last(lt_tensor *t) { return lt_glu(t, -1); }

static const unary_case unary_cases[] = {
    {"tan", lt_tan, UNIT},           {"asin", lt_asin, UNIT},           {"acos", lt_acos, UNIT},
    {"atan", lt_atan, ANY},          {"sinh", lt_sinh, ANY},            {"cosh", lt_cosh, ANY},
    {"asinh", lt_asinh, ANY},        {"acosh", lt_acosh, BIG1},         {"atanh", lt_atanh, UNIT},
    {"log2", lt_log2, POS},          {"log10", lt_log10, POS},          {"exp2", lt_exp2, ANY},
    {"frac", lt_frac, POS},          {"softplus", softplus2, ANY},      {"mish", lt_mish, ANY},
    {"logsigmoid", lt_logsigmoid, ANY}, {"softsign", lt_softsign, ANY}, {"elu", elu07, ANY},
    {"selu", lt_selu, ANY},          {"celu", celu2, ANY},              {"leaky_relu", leaky, ANY},
    {"hardsigmoid", lt_hardsigmoid, UNIT}, {"hardswish", lt_hardswish, ANY}, {"gelu_tanh", lt_gelu_tanh, ANY},
    {"hardtanh", hardtanh_1, UNIT},  {"relu6", lt_relu6, POS},          {"glu", glu_last, ANY},
};

static lt_tensor *f_unary_transposed(lt_tensor *const *x, const void *ctx)
{
    const unary_case *k = ctx;
    return k->op(lt_transpose(x[0], 0, 1));
}

static void test_unary_gradients(void **state)
{
    (void)state;
    for (size_t k = 0; k < sizeof unary_cases / sizeof unary_cases[0]; k++)
        GRADCHECK_NAMED(unary_cases[k].name, f_unary_transposed, &unary_cases[k], GC_EAGER,
                        make_input(unary_cases[k].domain, LT_DIMS(4, 3)));
}

typedef struct binary_case {
    const char *name;
    lt_tensor *(*op)(lt_tensor *, lt_tensor *);
    int dx, dy;
} binary_case;

static lt_tensor *lerp_half(lt_tensor *a, lt_tensor *b) { return lt_lerp_scalar(a, b, 0.3); }
static lt_tensor *lerp_far(lt_tensor *a, lt_tensor *b) { return lt_lerp_scalar(a, b, 0.8); }

static const binary_case binary_cases[] = {
    {"atan2", lt_atan2, ANY, ANY},     {"hypot", lt_hypot, ANY, ANY},         {"copysign", lt_copysign, ANY, ANY},
    {"xlogy", lt_xlogy, ANY, POS},     {"logaddexp", lt_logaddexp, ANY, ANY}, {"fmod", lt_fmod, POS, POS},
    {"lerp_scalar 0.3", lerp_half, ANY, ANY}, {"lerp_scalar 0.8", lerp_far, ANY, ANY},
};

static lt_tensor *f_binary(lt_tensor *const *x, const void *ctx)
{
    const binary_case *k = ctx;
    return k->op(x[0], x[1]);
}

static void test_binary_gradients(void **state)
{
    (void)state;
    for (size_t k = 0; k < sizeof binary_cases / sizeof binary_cases[0]; k++) {
        const binary_case *b = &binary_cases[k];
        GRADCHECK_NAMED(b->name, f_binary, b, GC_EAGER, make_input(b->dx, LT_DIMS(3, 1)),
                        make_input(b->dy, LT_DIMS(1, 4)));
    }
}

static lt_tensor *f_ternary(lt_tensor *const *x, const void *ctx)
{
    (void)ctx;
    lt_tensor *l = lt_lerp(x[0], x[1], x[2]);
    lt_tensor *m = lt_addcmul(l, x[0], x[1], -0.5);
    return lt_addcdiv(m, x[2], lt_add_scalar(lt_abs(x[1]), 1), 2.0);
}

/* lerp with a tensor weight on both sides of 0.5, addcmul, addcdiv; and
 * the same chain's gradients on the lazy device. */
static void test_composite_gradients(void **state)
{
    (void)state;
    lt_tensor *w = gc_uniform(LT_DIMS(3, 4), -0.5, 1.5);
    GRADCHECK_NAMED("lerp/addcmul/addcdiv", f_ternary, NULL, GC_BOTH, GC_UNIFORM(-2, 2, 3, 4),
                    GC_UNIFORM(-2, 2, 4), w);
}

static lt_tensor *f_activation_chain(lt_tensor *const *x, const void *ctx)
{
    (void)ctx;
    lt_tensor *a = lt_mish(lt_softplus(x[0], 1, 20));
    lt_tensor *b = lt_hardswish(lt_elu(lt_atan2(x[0], x[1]), 1.0));
    return lt_logaddexp(lt_gelu_tanh(a), lt_logsigmoid(b));
}

static void test_chain_gradients_lazy(void **state)
{
    (void)state;
    GRADCHECK_NAMED("activation chain", f_activation_chain, NULL, GC_BOTH, GC_AWAY(0.1, 2, 3, 4),
                    GC_AWAY(0.1, 2, 4));
}

/* ---- fusion on the lazy device ------------------------------------------ */

static lt_tensor *float_chain(lt_tensor *x, lt_tensor *y)
{
    lt_tensor *u = lt_tanh(x); /* in (-1, 1) for the inverse functions */
    lt_tensor *t = lt_add(lt_add(lt_tan(u), lt_asin(u)), lt_add(lt_acos(u), lt_atan(x)));
    t = lt_add(t, lt_add(lt_sinh(u), lt_cosh(u)));
    t = lt_add(t, lt_add(lt_asinh(x), lt_acosh(lt_add_scalar(lt_abs(x), 1))));
    t = lt_add(t, lt_add(lt_atanh(lt_mul_scalar(u, 0.5)), lt_log2(lt_add_scalar(lt_abs(x), 0.5))));
    t = lt_add(t, lt_add(lt_log10(lt_add_scalar(lt_abs(y), 0.5)), lt_exp2(u)));
    t = lt_add(t, lt_add(lt_trunc(lt_mul_scalar(x, 3)), lt_frac(lt_mul_scalar(y, 3))));
    t = lt_add(t, lt_add(lt_softplus(x, 2, 1), lt_mish(y)));
    t = lt_add(t, lt_add(lt_logsigmoid(x), lt_softsign(y)));
    t = lt_add(t, lt_add(lt_elu(x, 0.5), lt_selu(y)));
    t = lt_add(t, lt_add(lt_celu(x, 2), lt_leaky_relu(y, 0.2)));
    t = lt_add(t, lt_add(lt_hardsigmoid(x), lt_hardswish(y)));
    t = lt_add(t, lt_add(lt_gelu_tanh(x), lt_hardtanh(y, -0.5, 0.5)));
    t = lt_add(t, lt_add(lt_relu6(lt_mul_scalar(x, 4)), lt_atan2(x, y)));
    t = lt_add(t, lt_add(lt_hypot(x, y), lt_copysign(x, y)));
    t = lt_add(t, lt_add(lt_xlogy(x, lt_abs(y)), lt_logaddexp(x, y)));
    t = lt_add(t, lt_add(lt_fmod(x, lt_add_scalar(lt_abs(y), 0.25)),
                         lt_floor_divide(x, lt_add_scalar(lt_abs(y), 0.25))));
    t = lt_addcmul(t, x, y, 0.5);
    t = lt_addcdiv(t, x, lt_add_scalar(lt_abs(y), 1), -0.25);
    t = lt_lerp(t, x, lt_sigmoid(y));
    lt_tensor *bad = lt_div(x, lt_mul_scalar(lt_round(lt_mul_scalar(y, 0.6)), 0)); /* inf and NaN */
    t = lt_add(t, lt_nan_to_num(bad, 0.5, 3, -3));
    t = lt_add(t, lt_to_dtype(lt_logical_or(lt_isnan(bad), lt_isinf(bad)), LT_F32));
    return lt_add(t, lt_to_dtype(lt_isfinite(bad), LT_F32));
}

static lt_tensor *int_chain(lt_tensor *i, lt_tensor *j)
{
    lt_tensor *seven = lt_scalar(7, LT_I64, lt_tensor_device(i)); /* shift counts in 0..7 */
    lt_tensor *s = lt_bitwise_and(i, j);
    s = lt_bitwise_xor(s, lt_bitwise_or(i, lt_bitwise_not(j)));
    s = lt_add(s, lt_bitwise_left_shift(i, lt_bitwise_and(j, seven)));
    return lt_add(s, lt_bitwise_right_shift(j, lt_bitwise_and(i, seven)));
}

/* [rows, cols] f32 / i64 values on dev. */
static lt_tensor *values_on(lt_device dev, lt_dtype dt, double scale, double shift)
{
    const int64_t dims[2] = {16, 33};
    double v[16 * 33];
    for (int k = 0; k < 16 * 33; k++) {
        double x = sin(0.37 * k + shift) * scale;
        v[k] = dt == LT_F32 ? x : floor(x);
    }
    return LT_OK_T(lt_to(LT_OK_T(lt_test_tensor(v, dims, 2, dt)), dev));
}

/* Both chains on one device. Only the results stay (in the caller's
 * scope): a live intermediate would be a program output of its own. */
static void run_chains(lt_device dev, lt_tensor **f, lt_tensor **i)
{
    lt_scope_begin();
    lt_tensor *x = values_on(dev, LT_F32, 2.0, 0.1), *y = values_on(dev, LT_F32, 1.5, 1.3);
    lt_tensor *a = values_on(dev, LT_I64, 40.0, 0.2), *b = values_on(dev, LT_I64, 30.0, 0.9);
    *f = lt_keep(LT_OK_T(float_chain(x, y)));
    *i = lt_keep(LT_OK_T(int_chain(a, b)));
    assert_int_equal(lt_scope_end(), LT_OK);
}

static void test_chain_is_one_kernel(void **state)
{
    (void)state;
    assert_int_equal(lt_lazy_set_backend("cpu"), LT_OK);
    lt_tensor *fe, *ie, *fl, *il;
    run_chains(lt_device_cpu(), &fe, &ie);
    lt_device lazy = lt_device_parse("lazy");
    run_chains(lazy, &fl, &il);
    lt_metrics_reset();
    assert_int_equal(lt_mark_step(), LT_OK);
    /* every op of both chains (same shape) in one kernel, no eager call */
    assert_int_equal(lt_metrics_counter("Kernels"), 1);
    assert_int_equal(lt_metrics_counter("KernelCalls"), 0);
    double *expect = lt_test_values(fe);
    LT_ASSERT_ARRAY(fl, expect, lt_tensor_numel(fe), 1e-5);
    free(expect);
    expect = lt_test_values(ie);
    LT_ASSERT_ARRAY(il, expect, lt_tensor_numel(ie), 0);
    free(expect);
    assert_int_equal(lt_tensor_dtype(il), LT_I64);
}

/* ---- values and errors ---------------------------------------------------- */

static void test_known_values(void **state)
{
    (void)state;
    lt_device cpu = lt_device_cpu();
    lt_tensor *x = LT_T(LT_F32, LT_DIMS(4), -7.5, -0.0, 2.5, 7.0);
    LT_ASSERT_ARRAY(lt_trunc(x), ((double[]){-7, -0.0, 2, 7}), 4, 0);
    LT_ASSERT_ARRAY(lt_frac(x), ((double[]){-0.5, 0, 0.5, 0}), 4, 0);
    LT_ASSERT_ARRAY(lt_floor_divide(x, LT_OK_T(lt_scalar(2, LT_F32, cpu))), ((double[]){-4, -0.0, 1, 3}), 4, 0);
    LT_ASSERT_ARRAY(lt_fmod(x, LT_OK_T(lt_scalar(-2, LT_F32, cpu))), ((double[]){-1.5, -0.0, 0.5, 1}), 4, 0);
    lt_tensor *i = LT_T(LT_I32, LT_DIMS(4), -7, 1, 12, -8);
    lt_tensor *k = LT_T(LT_I32, LT_DIMS(4), 2, 33, -1, 3);
    LT_ASSERT_ARRAY(lt_floor_divide(i, k), ((double[]){-4, 0, -12, -3}), 4, 0);
    LT_ASSERT_ARRAY(lt_bitwise_left_shift(i, k), ((double[]){-28, 0, 0, -64}), 4, 0);
    LT_ASSERT_ARRAY(lt_bitwise_right_shift(i, k), ((double[]){-2, 0, 0, -1}), 4, 0);
    LT_ASSERT_ARRAY(lt_hardtanh(x, 3, 1), ((double[]){1, 1, 1, 1}), 4, 0); /* min > max: max */
    LT_ASSERT_ARRAY(lt_nan_to_num(lt_div_scalar(LT_T(LT_F32, LT_DIMS(3), 1, -1, 0), 0), 9, INFINITY, -INFINITY),
                    ((double[]){FLT_MAX, -FLT_MAX, 9}), 3, 0);
}

static void expect_error(lt_tensor *r, lt_status st, const char *needle)
{
    assert_null(r);
    assert_int_equal(lt_last_status(), st);
    if (!strstr(lt_last_error(), needle))
        fail_msg("error \"%s\" does not mention \"%s\"", lt_last_error(), needle);
    lt_clear_error();
}

static void test_errors(void **state)
{
    (void)state;
    lt_tensor *f = LT_T(LT_F32, LT_DIMS(3), 1, 2, 3), *i = LT_T(LT_I64, LT_DIMS(3), 1, 0, 3);
    lt_tensor *b = LT_T(LT_BOOL, LT_DIMS(3), 1, 0, 1);
    expect_error(lt_bitwise_and(f, i), LT_ERR_DTYPE, "expected integer or bool");
    expect_error(lt_bitwise_left_shift(b, b), LT_ERR_DTYPE, "bool");
    expect_error(lt_frac(i), LT_ERR_DTYPE, "expected a floating dtype");
    expect_error(lt_hypot(i, i), LT_ERR_DTYPE, "expected a floating dtype");
    expect_error(lt_fmod(i, i), LT_ERR_ARGUMENT, "integer division by zero");
    expect_error(lt_floor_divide(i, i), LT_ERR_ARGUMENT, "integer division by zero");
    expect_error(lt_glu(f, 0), LT_ERR_SHAPE, "even");
    expect_error(lt_glu(f, 2), LT_ERR_ARGUMENT, "out of range");
    expect_error(lt_softplus(f, 0, 20), LT_ERR_ARGUMENT, "beta");
    expect_error(lt_celu(f, 0), LT_ERR_ARGUMENT, "alpha");
    expect_error(lt_hardtanh(f, NAN, 1), LT_ERR_ARGUMENT, "NaN");
    expect_error(lt_hardtanh(LT_T(LT_U8, LT_DIMS(1), 3), -1, 1), LT_ERR_ARGUMENT, "u8");
    expect_error(lt_addcdiv(f, i, i, 1), LT_ERR_DTYPE, "integer division");
    expect_error(lt_atan2(f, NULL), LT_ERR_NULL, "");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        LT_TEST(test_unary_gradients),     LT_TEST(test_binary_gradients),  LT_TEST(test_composite_gradients),
        LT_TEST(test_chain_gradients_lazy), LT_TEST(test_chain_is_one_kernel), LT_TEST(test_known_values),
        LT_TEST(test_errors),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
