/* test_gradcheck.c - finite-difference checks of the gradient formulas of
 * the elementwise ops and the reductions/scans (every differentiable op of
 * those groups), on contiguous and non-contiguous inputs, with
 * broadcasting, scalar forms, keepdim on/off and multi-dim reductions;
 * a representative subset also runs on the lazy device. The harness is in
 * gradcheck.h; test_gradcheck_shape.c and test_gradcheck_nn.c cover the
 * other op groups. */
#include "gradcheck.h"

/* Input domains. */
enum { ANY, POS, AWAY };

static lt_tensor *make_input(int domain, const int64_t *dims, int nd)
{
    switch (domain) {
    case POS: return gc_uniform(dims, nd, 0.2, 2.0);
    case AWAY: return gc_away_from_zero(dims, nd, 0.1, 2.0);
    default: return gc_uniform(dims, nd, -2.0, 2.0);
    }
}

/* ======================================================================= */
/* Unary elementwise                                                        */
/* ======================================================================= */

typedef struct unary_case {
    const char *name;
    lt_tensor *(*op)(lt_tensor *);
    int domain;
} unary_case;

/* op applied to the transpose of x (a non-contiguous input). */
static lt_tensor *f_unary_transposed(lt_tensor *const *x, const void *ctx)
{
    const unary_case *k = ctx;
    return k->op(lt_transpose(x[0], 0, 1));
}

static lt_tensor *f_unary(lt_tensor *const *x, const void *ctx)
{
    const unary_case *k = ctx;
    return k->op(x[0]);
}

static const unary_case unary_cases[] = {
    {"neg", lt_neg, ANY},         {"abs", lt_abs, AWAY},         {"exp", lt_exp, ANY},
    {"log", lt_log, POS},         {"log1p", lt_log1p, POS},      {"expm1", lt_expm1, ANY},
    {"sqrt", lt_sqrt, POS},       {"rsqrt", lt_rsqrt, POS},      {"sin", lt_sin, ANY},
    {"cos", lt_cos, ANY},         {"tanh", lt_tanh, ANY},        {"sigmoid", lt_sigmoid, ANY},
    {"relu", lt_relu, AWAY},      {"gelu", lt_gelu, ANY},        {"silu", lt_silu, ANY},
    {"erf", lt_erf, ANY},         {"sign", lt_sign, AWAY},       {"floor", lt_floor, ANY},
    {"ceil", lt_ceil, ANY},       {"round", lt_round, ANY},      {"reciprocal", lt_reciprocal, AWAY},
};

static void test_unary(void **state)
{
    (void)state;
    for (size_t k = 0; k < sizeof unary_cases / sizeof unary_cases[0]; k++) {
        const unary_case *u = &unary_cases[k];
        GRADCHECK_NAMED(u->name, f_unary_transposed, u, GC_EAGER, make_input(u->domain, LT_DIMS(4, 3)));
        /* a 0-d input */
        GRADCHECK_NAMED(u->name, f_unary, u, GC_EAGER, make_input(u->domain, NULL, 0));
    }
    static const unary_case lazy_cases[] = {{"tanh", lt_tanh, ANY}, {"gelu", lt_gelu, ANY}, {"relu", lt_relu, AWAY}};
    for (size_t k = 0; k < 3; k++)
        GRADCHECK_NAMED(lazy_cases[k].name, f_unary_transposed, &lazy_cases[k], GC_BOTH,
                        make_input(lazy_cases[k].domain, LT_DIMS(4, 3)));
}

static lt_tensor *f_clamp(lt_tensor *const *x, const void *ctx)
{
    (void)ctx;
    return lt_add(lt_clamp(x[0], -0.5, 0.7), lt_clamp(x[0], -INFINITY, 0.2));
}

static lt_tensor *f_cast_f32(lt_tensor *const *x, const void *ctx)
{
    (void)ctx;
    return lt_to_dtype(lt_mul_scalar(x[0], 3.0), LT_F32);
}

static lt_tensor *f_cast_f64(lt_tensor *const *x, const void *ctx)
{
    (void)ctx;
    return lt_exp(lt_to_dtype(x[0], LT_F64));
}

static void test_clamp_and_cast(void **state)
{
    (void)state;
    GRADCHECK(f_clamp, NULL, GC_BOTH, GC_UNIFORM(-1.5, 1.5, 3, 5));
    GRADCHECK(f_cast_f64, NULL, GC_BOTH, GC_UNIFORM(-1, 1, 2, 3));
    /* through f32: f is linear, so a large step measures the slope exactly
     * up to f32 rounding */
    gc_opts coarse = {1e-2, 1e-4, true};
    GRADCHECK(f_cast_f32, NULL, coarse, GC_UNIFORM(-1, 1, 2, 3));
    /* the gradient of an f64 leaf through an f32 cast comes back as f64 */
    lt_tensor *x = LT_OK_T(lt_to(GC_UNIFORM(-1, 1, 2), lt_device_cpu()));
    assert_int_equal(lt_set_requires_grad(x, true), LT_OK);
    assert_int_equal(lt_backward(LT_OK_T(lt_sum(lt_to_dtype(x, LT_F32), NULL, 0, false)), NULL), LT_OK);
    lt_tensor *g = LT_OK_T(lt_grad(x));
    assert_int_equal(lt_tensor_dtype(g), LT_F64);
    LT_ASSERT_VALUES(g, 0, 1, 1);
}

/* ======================================================================= */
/* Binary and ternary elementwise                                           */
/* ======================================================================= */

typedef struct binary_case {
    const char *name;
    lt_tensor *(*op)(lt_tensor *, lt_tensor *);
    int domain_x, domain_y;
} binary_case;

static lt_tensor *f_binary(lt_tensor *const *x, const void *ctx)
{
    const binary_case *k = ctx;
    return k->op(x[0], x[1]);
}

/* The first operand transposed: [4, 3] -> [3, 4] against y. */
static lt_tensor *f_binary_transposed(lt_tensor *const *x, const void *ctx)
{
    const binary_case *k = ctx;
    return k->op(lt_transpose(x[0], 0, 1), x[1]);
}

static lt_tensor *add_alpha(lt_tensor *a, lt_tensor *b) { return lt_add_scaled(a, b, 2.5); }
static lt_tensor *sub_alpha(lt_tensor *a, lt_tensor *b) { return lt_sub_scaled(a, b, -0.75); }

static const binary_case binary_cases[] = {
    {"add", lt_add, ANY, ANY},          {"sub", lt_sub, ANY, ANY},
    {"add_scaled", add_alpha, ANY, ANY}, {"sub_scaled", sub_alpha, ANY, ANY},
    {"mul", lt_mul, ANY, ANY},          {"div", lt_div, ANY, AWAY},
    {"pow", lt_pow, POS, ANY},          {"maximum", lt_maximum, ANY, ANY},
    {"minimum", lt_minimum, ANY, ANY},  {"remainder", lt_remainder, ANY, AWAY},
};

static void test_binary_broadcast(void **state)
{
    (void)state;
    for (size_t k = 0; k < sizeof binary_cases / sizeof binary_cases[0]; k++) {
        const binary_case *b = &binary_cases[k];
        /* [3, 1] with [1, 4] */
        GRADCHECK_NAMED(b->name, f_binary, b, GC_EAGER, make_input(b->domain_x, LT_DIMS(3, 1)),
                        make_input(b->domain_y, LT_DIMS(1, 4)));
        /* transposed [4, 3] with [3] (leading dim added) */
        GRADCHECK_NAMED(b->name, f_binary_transposed, b, GC_EAGER, make_input(b->domain_x, LT_DIMS(4, 3)),
                        make_input(b->domain_y, LT_DIMS(4)));
        /* a 0-d tensor operand on either side */
        GRADCHECK_NAMED(b->name, f_binary, b, GC_EAGER, make_input(b->domain_x, NULL, 0),
                        make_input(b->domain_y, LT_DIMS(2, 3)));
        GRADCHECK_NAMED(b->name, f_binary, b, GC_EAGER, make_input(b->domain_x, LT_DIMS(2, 3)),
                        make_input(b->domain_y, NULL, 0));
    }
    GRADCHECK_NAMED("mul", f_binary, &binary_cases[4], GC_BOTH, GC_UNIFORM(-1, 1, 3, 1), GC_UNIFORM(-1, 1, 1, 4));
    GRADCHECK_NAMED("pow", f_binary, &binary_cases[6], GC_BOTH, GC_UNIFORM(0.2, 2, 3, 1), GC_UNIFORM(-1, 1, 4));
}

/* maximum/minimum of equal values: each side gets half (the central
 * difference of a kink between slopes 0 and 1 is exactly 1/2). */
static void test_binary_ties(void **state)
{
    (void)state;
    lt_tensor *x = GC_UNIFORM(-1, 1, 2, 3);
    GRADCHECK_NAMED("maximum", f_binary, &binary_cases[7], GC_BOTH, x, LT_OK_T(lt_clone(x)));
    GRADCHECK_NAMED("minimum", f_binary, &binary_cases[8], GC_EAGER, x, LT_OK_T(lt_clone(x)));
}

/* x * x: one input used twice accumulates both contributions. */
static lt_tensor *f_square_sum(lt_tensor *const *x, const void *ctx)
{
    (void)ctx;
    return lt_add(lt_mul(x[0], x[0]), lt_mul(lt_transpose(x[0], 0, 1), x[1]));
}

static void test_shared_input(void **state)
{
    (void)state;
    GRADCHECK(f_square_sum, NULL, GC_BOTH, GC_UNIFORM(-1, 1, 3, 3), GC_UNIFORM(-1, 1, 3));
}

typedef struct scalar_case {
    const char *name;
    lt_tensor *(*op)(lt_tensor *, double);
    double s;
    int domain;
} scalar_case;

static lt_tensor *f_scalar(lt_tensor *const *x, const void *ctx)
{
    const scalar_case *k = ctx;
    return k->op(lt_transpose(x[0], 0, 1), k->s);
}

static void test_scalar_forms(void **state)
{
    (void)state;
    static const scalar_case cases[] = {
        {"add_scalar", lt_add_scalar, 1.5, ANY},         {"sub_scalar", lt_sub_scalar, 0.5, ANY},
        {"rsub_scalar", lt_rsub_scalar, 2.0, ANY},       {"mul_scalar", lt_mul_scalar, -3.0, ANY},
        {"div_scalar", lt_div_scalar, 4.0, ANY},         {"pow_scalar", lt_pow_scalar, 3.0, ANY},
        {"pow_scalar", lt_pow_scalar, 0.5, POS},         {"pow_scalar", lt_pow_scalar, -1.5, POS},
        {"rpow_scalar", lt_rpow_scalar, 1.7, ANY},       {"maximum_scalar", lt_maximum_scalar, 0.1, ANY},
        {"minimum_scalar", lt_minimum_scalar, 0.1, ANY}, {"remainder_scalar", lt_remainder_scalar, 0.7, ANY},
        {"remainder_scalar", lt_remainder_scalar, -0.7, ANY},
    };
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++)
        GRADCHECK_NAMED(cases[k].name, f_scalar, &cases[k], GC_EAGER, make_input(cases[k].domain, LT_DIMS(4, 3)));
    GRADCHECK_NAMED("rpow_scalar", f_scalar, &cases[8], GC_BOTH, GC_UNIFORM(-1, 1, 2, 2));
}

/* where(x > 0, x, y) with y broadcast: the condition is not differentiated. */
static lt_tensor *f_where(lt_tensor *const *x, const void *ctx)
{
    (void)ctx;
    return lt_where(lt_gt_scalar(x[0], 0), x[0], x[1]);
}

/* where with an explicit bool input and a 0-d branch. */
static lt_tensor *f_where_mask(lt_tensor *const *x, const void *ctx)
{
    (void)ctx;
    return lt_where(x[2], x[1], lt_exp(x[0]));
}

static void test_where(void **state)
{
    (void)state;
    GRADCHECK(f_where, NULL, GC_BOTH, GC_AWAY(0.1, 2, 3, 4), GC_UNIFORM(-1, 1, 1, 4));
    lt_tensor *mask = LT_T(LT_BOOL, LT_DIMS(2, 3), 1, 0, 0, 1, 1, 0);
    GRADCHECK(f_where_mask, NULL, GC_BOTH, GC_UNIFORM(-1, 1, 2, 3), gc_uniform(NULL, 0, -1, 1), mask);
}

/* ======================================================================= */
/* Reductions and scans                                                     */
/* ======================================================================= */

typedef struct reduce_case {
    const char *name;
    lt_op op;
    int dims[3];
    int nd;
    bool keep;
    int64_t correction;
    bool transposed; /* input [2, 4, 3] permuted to [3, 4, 2] */
    bool lazy;
} reduce_case;

static lt_tensor *f_reduce(lt_tensor *const *x, const void *ctx)
{
    const reduce_case *k = ctx;
    static const int rev[3] = {2, 1, 0};
    lt_tensor *t = k->transposed ? lt_permute(x[0], rev, 3) : x[0];
    switch (k->op) {
    case LT_OP_SUM: return lt_sum(t, k->dims, k->nd, k->keep);
    case LT_OP_MEAN: return lt_mean(t, k->dims, k->nd, k->keep);
    case LT_OP_PROD: return lt_prod(t, k->dims, k->nd, k->keep);
    case LT_OP_AMAX: return lt_amax(t, k->dims, k->nd, k->keep);
    case LT_OP_AMIN: return lt_amin(t, k->dims, k->nd, k->keep);
    case LT_OP_MAX_DIM: return lt_max_dim(t, k->dims[0], k->keep, NULL);
    case LT_OP_MIN_DIM: return lt_min_dim(t, k->dims[0], k->keep, NULL);
    case LT_OP_VAR: return lt_var(t, k->dims, k->nd, k->correction, k->keep);
    case LT_OP_STD: return lt_std(t, k->dims, k->nd, k->correction, k->keep);
    case LT_OP_LOGSUMEXP: return lt_logsumexp(t, k->dims, k->nd, k->keep);
    case LT_OP_CUMSUM: return lt_cumsum(t, k->dims[0]);
    case LT_OP_SOFTMAX: return lt_softmax(t, k->dims[0]);
    case LT_OP_LOG_SOFTMAX: return lt_log_softmax(t, k->dims[0]);
    default: return NULL;
    }
}

static void test_reductions(void **state)
{
    (void)state;
    static const reduce_case cases[] = {
        {"sum all", LT_OP_SUM, {0}, 0, false, 0, false, true},
        {"sum 0,2 keep", LT_OP_SUM, {0, 2}, 2, true, 0, true, true},
        {"sum -2", LT_OP_SUM, {-2}, 1, false, 0, false, false},
        {"mean all keep", LT_OP_MEAN, {0}, 0, true, 0, false, false},
        {"mean 0,2", LT_OP_MEAN, {2, 0}, 2, false, 0, true, true},
        {"prod 1", LT_OP_PROD, {1}, 1, false, 0, true, false},
        {"prod all", LT_OP_PROD, {0}, 0, false, 0, false, false},
        {"amax 1", LT_OP_AMAX, {1}, 1, false, 0, true, true},
        {"amax all", LT_OP_AMAX, {0}, 0, false, 0, false, false},
        {"amin 0,2 keep", LT_OP_AMIN, {0, 2}, 2, true, 0, false, false},
        {"max_dim 1", LT_OP_MAX_DIM, {1}, 1, false, 0, true, true},
        {"max_dim 2 keep", LT_OP_MAX_DIM, {2}, 1, true, 0, false, false},
        {"min_dim -1", LT_OP_MIN_DIM, {-1}, 1, false, 0, false, true},
        {"min_dim 0 keep", LT_OP_MIN_DIM, {0}, 1, true, 0, true, false},
        {"var 1", LT_OP_VAR, {1}, 1, false, 1, false, true},
        {"var all", LT_OP_VAR, {0}, 0, false, 0, true, false},
        {"var 0,2 keep", LT_OP_VAR, {0, 2}, 2, true, 2, false, false},
        {"std 0,2 keep", LT_OP_STD, {0, 2}, 2, true, 1, true, true},
        {"std all", LT_OP_STD, {0}, 0, false, 0, false, false},
        {"logsumexp 1", LT_OP_LOGSUMEXP, {1}, 1, false, 0, true, true},
        {"logsumexp all keep", LT_OP_LOGSUMEXP, {0}, 0, true, 0, false, false},
        {"logsumexp 0,2", LT_OP_LOGSUMEXP, {0, 2}, 2, false, 0, false, false},
        {"cumsum 0", LT_OP_CUMSUM, {0}, 1, false, 0, false, true},
        {"cumsum 1", LT_OP_CUMSUM, {1}, 1, false, 0, true, false},
        {"softmax 1", LT_OP_SOFTMAX, {1}, 1, false, 0, true, true},
        {"softmax -1", LT_OP_SOFTMAX, {-1}, 1, false, 0, false, false},
        {"log_softmax 0", LT_OP_LOG_SOFTMAX, {0}, 1, false, 0, false, true},
        {"log_softmax 2", LT_OP_LOG_SOFTMAX, {2}, 1, false, 0, true, false},
    };
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
        const reduce_case *r = &cases[k];
        lt_tensor *x = r->op == LT_OP_PROD ? (r->transposed ? GC_UNIFORM(0.6, 1.4, 2, 4, 3)
                                                            : GC_AWAY(0.6, 1.4, 3, 4, 2))
                       : r->transposed ? GC_DISTINCT(2, 4, 3)
                                       : GC_DISTINCT(3, 4, 2);
        GRADCHECK_NAMED(r->name, f_reduce, r, r->lazy ? GC_BOTH : GC_EAGER, x);
    }
}

/* Reductions of a 0-d tensor and over a size-1 dim. */
static void test_reduction_edges(void **state)
{
    (void)state;
    static const reduce_case cases[] = {
        {"sum 0-d", LT_OP_SUM, {0}, 0, false, 0, false, false},
        {"mean 0-d", LT_OP_MEAN, {0}, 0, false, 0, false, false},
        {"softmax 0-d", LT_OP_SOFTMAX, {0}, 1, false, 0, false, false},
        {"logsumexp 0-d", LT_OP_LOGSUMEXP, {0}, 0, false, 0, false, false},
        {"cumsum 0-d", LT_OP_CUMSUM, {0}, 1, false, 0, false, false},
    };
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++)
        GRADCHECK_NAMED(cases[k].name, f_reduce, &cases[k], GC_EAGER, gc_uniform(NULL, 0, -1, 1));
    static const reduce_case size1[] = {
        {"amax size 1", LT_OP_AMAX, {1}, 1, false, 0, false, false},
        {"max_dim size 1", LT_OP_MAX_DIM, {1}, 1, true, 0, false, false},
        {"prod size 1", LT_OP_PROD, {1}, 1, false, 0, false, false},
    };
    for (size_t k = 0; k < sizeof size1 / sizeof size1[0]; k++)
        GRADCHECK_NAMED(size1[k].name, f_reduce, &size1[k], GC_EAGER, GC_AWAY(0.5, 1.5, 3, 1, 2));
}

/* prod with zeros: rows with none, one and two zeros. prod is linear in
 * each element, so central differences are exact even at 0. */
static void test_prod_zeros(void **state)
{
    (void)state;
    static const reduce_case rows = {"prod zeros", LT_OP_PROD, {1}, 1, false, 0, false, true};
    static const reduce_case all = {"prod zeros all", LT_OP_PROD, {0}, 0, false, 0, false, false};
    lt_tensor *x = LT_T(LT_F64, LT_DIMS(3, 4), 0.5, 2, -1.5, 1.2, 0.7, 0, 1.3, -0.8, 0, 1.1, 0, 0.9);
    GRADCHECK_NAMED(rows.name, f_reduce, &rows, GC_BOTH, x);
    GRADCHECK_NAMED(all.name, f_reduce, &all, GC_EAGER, LT_T(LT_F64, LT_DIMS(2, 2), 0.5, 0, 1.5, -2));
    /* the one-zero row's zero gets the product of the others */
    lt_tensor *leaf = LT_OK_T(lt_clone(x));
    assert_int_equal(lt_set_requires_grad(leaf, true), LT_OK);
    int dim = 1;
    assert_int_equal(lt_backward(LT_OK_T(lt_sum(lt_prod(leaf, &dim, 1, false), NULL, 0, false)), NULL), LT_OK);
    LT_ASSERT_VALUES(lt_grad(leaf), 1e-12, 2 * -1.5 * 1.2, 0.5 * -1.5 * 1.2, 0.5 * 2 * 1.2, 0.5 * 2 * -1.5,
                     0, 0.7 * 1.3 * -0.8, 0, 0, 0, 0, 0, 0);
}

/* amax/amin split the gradient evenly among ties (checked by central
 * differences for 2-way ties, and by value for a 3-way tie). */
static void test_extremum_ties(void **state)
{
    (void)state;
    static const reduce_case amax = {"amax ties", LT_OP_AMAX, {1}, 1, false, 0, false, true};
    static const reduce_case amin = {"amin ties", LT_OP_AMIN, {0}, 0, true, 0, false, false};
    GRADCHECK_NAMED(amax.name, f_reduce, &amax, GC_BOTH, LT_T(LT_F64, LT_DIMS(2, 3), 1, 3, 3, 2, 0.5, 2));
    GRADCHECK_NAMED(amin.name, f_reduce, &amin, GC_EAGER, LT_T(LT_F64, LT_DIMS(2, 2), 1, -3, 2, -3));
    lt_tensor *x = LT_T(LT_F64, LT_DIMS(4), 2, 5, 5, 5);
    assert_int_equal(lt_set_requires_grad(x, true), LT_OK);
    assert_int_equal(lt_backward(LT_OK_T(lt_amax(x, NULL, 0, false)), NULL), LT_OK);
    LT_ASSERT_VALUES(lt_grad(x), 1e-15, 0, 1.0 / 3, 1.0 / 3, 1.0 / 3);
}

/* max_dim/min_dim send the whole gradient to the first extremum. */
static void check_extremum_dim_ties(lt_device dev)
{
    lt_tensor *x = LT_OK_T(lt_to(LT_T(LT_F64, LT_DIMS(2, 3), 1, 3, 3, 2, 0, 0), dev));
    assert_int_equal(lt_set_requires_grad(x, true), LT_OK);
    lt_tensor *mx = LT_OK_T(lt_max_dim(x, 1, false, NULL));
    lt_tensor *mn = LT_OK_T(lt_min_dim(x, 1, true, NULL));
    lt_tensor *l = LT_OK_T(lt_add(lt_sum(lt_mul_scalar(mx, 2), NULL, 0, false), lt_sum(mn, NULL, 0, false)));
    assert_int_equal(lt_backward(l, NULL), LT_OK);
    LT_ASSERT_VALUES(lt_grad(x), 0, 1, 2, 0, 2, 1, 0);
}

static void test_extremum_dim_ties(void **state)
{
    (void)state;
    check_extremum_dim_ties(lt_device_cpu());
    check_extremum_dim_ties(lt_device_parse("lazy"));
}

/* std of a constant slice: the gradient there is 0 (as PyTorch), not NaN. */
static void test_std_constant(void **state)
{
    (void)state;
    lt_tensor *x = LT_T(LT_F64, LT_DIMS(2, 3), 2, 2, 2, 1, 2, 4);
    assert_int_equal(lt_set_requires_grad(x, true), LT_OK);
    int dim = 1;
    assert_int_equal(lt_backward(LT_OK_T(lt_sum(lt_std(x, &dim, 1, 1, false), NULL, 0, false)), NULL), LT_OK);
    double sd = sqrt(7.0 / 3.0); /* row 1: mean 7/3, var ((4/3)^2 + (1/3)^2 + (5/3)^2) / 2 */
    LT_ASSERT_VALUES(lt_grad(x), 1e-12, 0, 0, 0, (1 - 7.0 / 3) / (2 * sd), (2 - 7.0 / 3) / (2 * sd),
                     (4 - 7.0 / 3) / (2 * sd));
}

/* A chain of reductions and elementwise ops (a layer-norm-like
 * normalization), checked as a whole. */
static lt_tensor *f_normalize(lt_tensor *const *x, const void *ctx)
{
    (void)ctx;
    int dim = -1;
    lt_tensor *centered = lt_sub(x[0], lt_mean(x[0], &dim, 1, true));
    lt_tensor *scale = lt_rsqrt(lt_add_scalar(lt_var(x[0], &dim, 1, 0, true), 1e-5));
    return lt_add(lt_mul(lt_mul(centered, scale), x[1]), x[2]);
}

static void test_normalization_chain(void **state)
{
    (void)state;
    GRADCHECK(f_normalize, NULL, GC_BOTH, GC_UNIFORM(-1, 1, 3, 5), GC_UNIFORM(0.5, 1.5, 5),
              GC_UNIFORM(-1, 1, 5));
}

/* bf16/f16 leaves: the backward pass runs in their dtype (computing in
 * f32) and agrees with f64 within their precision. */
static lt_tensor *f_low_precision(lt_tensor *const *x, const void *ctx)
{
    (void)ctx;
    int dim = 1;
    lt_tensor *h = lt_log_softmax(lt_tanh(lt_matmul(x[0], x[1])), 1);
    return lt_mean(lt_mul(h, lt_amax(x[0], &dim, 1, true)), NULL, 0, false);
}

static void test_low_precision(void **state)
{
    (void)state;
    lt_tensor *a = GC_DISTINCT(3, 4), *b = GC_UNIFORM(-1, 1, 4, 2);
    double *expect[2] = {NULL, NULL};
    static const lt_dtype dts[3] = {LT_F64, LT_BF16, LT_F16};
    for (int pass = 0; pass < 3; pass++) {
        lt_tensor *x[2] = {LT_OK_T(lt_to_dtype(a, dts[pass])), LT_OK_T(lt_to_dtype(b, dts[pass]))};
        for (int i = 0; i < 2; i++)
            assert_int_equal(lt_set_requires_grad(x[i], true), LT_OK);
        assert_int_equal(lt_backward(LT_OK_T(f_low_precision(x, NULL)), NULL), LT_OK);
        for (int i = 0; i < 2; i++) {
            lt_tensor *g = LT_OK_T(lt_grad(x[i]));
            assert_int_equal(lt_tensor_dtype(g), dts[pass]);
            if (pass == 0)
                expect[i] = lt_test_values(g);
            else
                LT_ASSERT_ARRAY(g, expect[i], lt_tensor_numel(g), dts[pass] == LT_BF16 ? 3e-2 : 5e-3);
        }
    }
    free(expect[0]);
    free(expect[1]);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        LT_TEST(test_unary),           LT_TEST(test_clamp_and_cast),    LT_TEST(test_binary_broadcast),
        LT_TEST(test_binary_ties),     LT_TEST(test_shared_input),      LT_TEST(test_scalar_forms),
        LT_TEST(test_where),           LT_TEST(test_reductions),        LT_TEST(test_reduction_edges),
        LT_TEST(test_prod_zeros),      LT_TEST(test_extremum_ties),     LT_TEST(test_extremum_dim_ties),
        LT_TEST(test_std_constant),    LT_TEST(test_normalization_chain), LT_TEST(test_low_precision),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
