/* test_elementwise_binary.c - binary elementwise ops: arithmetic,
 * comparisons and logical ops against formulas in double for every dtype,
 * type promotion, broadcasting, strided/expanded/0-d/size-0 operands, the
 * tensor-with-scalar forms, alpha, integer wraparound, remainder and pow
 * rules, NaN semantics, in-place ops (views, broadcasting, overlap, dtype and
 * shape errors) and bad input. */
#include "lt_test.h"

static lt_tensor *scalar(double v, lt_dtype dt) { return LT_OK_T(lt_scalar(v, dt, lt_test_cpu())); }

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

static double round_to(lt_dtype dt, double e)
{
    switch (dt) {
    case LT_F32: return (float)e;
    case LT_F16: return lt_f16_to_f32(lt_f32_to_f16((float)e));
    case LT_BF16: return lt_bf16_to_f32(lt_f32_to_bf16((float)e));
    case LT_U8: return fmod(fmod(e, 256.0) + 256.0, 256.0); /* u8 arithmetic wraps */
    case LT_BOOL: return e != 0;
    default: return e;
    }
}

typedef lt_tensor *(*binary_fn)(lt_tensor *, lt_tensor *);
typedef double (*ref2_fn)(double, double);

/* Compares got (a tensor of n elements) with expect, naming the case. */
static void expect_close(const char *what, lt_dtype dt, lt_tensor *got, const double *expect, int n,
                         double tol)
{
    if (!got)
        fail_msg("%s(%s) failed: %s", what, lt_dtype_name(dt), lt_last_error());
    assert_int_equal(lt_tensor_numel(got), n);
    double *g = lt_test_values(got);
    for (int i = 0; i < n; i++) {
        double e = expect[i];
        bool ok = (isnan(e) && isnan(g[i])) || (isinf(e) && g[i] == e) ||
                  (!isinf(e) && fabs(g[i] - e) <= tol * (1.0 + fabs(e)));
        if (!ok) {
            double v = g[i];
            free(g);
            fail_msg("%s(%s): element %d is %.9g, expected %.9g", what, lt_dtype_name(dt), i, v, e);
        }
    }
    free(g);
}

/* fn(a, b) on values of dt against ref applied to the stored values. */
static void check_binary(const char *name, binary_fn fn, ref2_fn ref, lt_dtype dt, const double *av,
                         const double *bv, int n, lt_dtype expect_dt)
{
    lt_tensor *a = LT_OK_T(lt_test_tensor(av, (int64_t[]){n}, 1, dt));
    lt_tensor *b = LT_OK_T(lt_test_tensor(bv, (int64_t[]){n}, 1, dt));
    double *as = lt_test_values(a), *bs = lt_test_values(b), expect[16];
    for (int i = 0; i < n; i++)
        expect[i] = round_to(expect_dt, ref(as[i], bs[i]));
    free(as);
    free(bs);
    lt_tensor *y = fn(a, b);
    if (y && lt_tensor_dtype(y) != expect_dt)
        fail_msg("%s(%s) gave dtype %s, expected %s", name, lt_dtype_name(dt),
                 lt_dtype_name(lt_tensor_dtype(y)), lt_dtype_name(expect_dt));
    expect_close(name, dt, y, expect, n, tol_of(expect_dt));
}

static double r_add(double a, double b) { return a + b; }
static double r_sub(double a, double b) { return a - b; }
static double r_mul(double a, double b) { return a * b; }
static double r_div(double a, double b) { return a / b; }
static double r_max(double a, double b) { return a > b ? a : b; }
static double r_min(double a, double b) { return a < b ? a : b; }
static double r_rem(double a, double b)
{
    double r = fmod(a, b);
    return r != 0 && ((r < 0) != (b < 0)) ? r + b : r;
}
static double r_eq(double a, double b) { return a == b; }
static double r_ne(double a, double b) { return a != b; }
static double r_lt(double a, double b) { return a < b; }
static double r_le(double a, double b) { return a <= b; }
static double r_gt(double a, double b) { return a > b; }
static double r_ge(double a, double b) { return a >= b; }
static double r_and(double a, double b) { return a != 0 && b != 0; }
static double r_or(double a, double b) { return a != 0 || b != 0; }
static double r_bool_pow(double a, double b) { return a != 0 || b == 0; }

static const struct {
    const char *name;
    binary_fn fn;
    ref2_fn ref;
} arith_ops[] = {
    {"add", lt_add, r_add}, {"sub", lt_sub, r_sub}, {"mul", lt_mul, r_mul}, {"div", lt_div, r_div},
    {"pow", lt_pow, pow}, {"maximum", lt_maximum, r_max}, {"minimum", lt_minimum, r_min},
    {"remainder", lt_remainder, r_rem},
};

static void test_arithmetic_every_dtype(void **state)
{
    (void)state;
    static const double fa[] = {-2.5, -1, 0, 0.5, 3, 7.25}, fb[] = {2, -0.5, 3, 0.25, -3, 2};
    static const double ia[] = {-7, -3, 0, 4, 9, 5}, ib[] = {2, -2, 3, 3, -4, 1};
    static const double ipow[] = {2, 3, 0, 1, 3, 2}; /* integer pow: no negative exponents */
    static const double ua[] = {7, 3, 0, 4, 9, 200}, ub[] = {2, 5, 3, 3, 4, 1};
    for (size_t k = 0; k < sizeof arith_ops / sizeof arith_ops[0]; k++) {
        for (int d = 0; d < LT_TEST_N_DTYPES; d++) {
            lt_dtype dt = lt_test_all_dtypes[d];
            if (dt == LT_BOOL)
                continue;
            bool is_pow = arith_ops[k].fn == lt_pow;
            const double *a = lt_dtype_is_floating(dt) ? fa : dt == LT_U8 ? ua : ia;
            const double *b = lt_dtype_is_floating(dt) ? fb : dt == LT_U8 ? ub : is_pow ? ipow : ib;
            lt_dtype out = arith_ops[k].fn == lt_div && !lt_dtype_is_floating(dt) ? LT_F32 : dt;
            check_binary(arith_ops[k].name, arith_ops[k].fn, arith_ops[k].ref, dt, a, b, 6, out);
        }
    }
    /* bool: add is or, mul is and, pow is a or not b */
    static const double ba[] = {0, 0, 1, 1}, bb[] = {0, 1, 0, 1};
    check_binary("add", lt_add, r_or, LT_BOOL, ba, bb, 4, LT_BOOL);
    check_binary("mul", lt_mul, r_and, LT_BOOL, ba, bb, 4, LT_BOOL);
    check_binary("maximum", lt_maximum, r_or, LT_BOOL, ba, bb, 4, LT_BOOL);
    check_binary("minimum", lt_minimum, r_and, LT_BOOL, ba, bb, 4, LT_BOOL);
    check_binary("pow", lt_pow, r_bool_pow, LT_BOOL, ba, bb, 4, LT_BOOL);
    check_binary("div", lt_div, r_div, LT_BOOL, ba, bb, 4, LT_F32);
}

static const struct {
    const char *name;
    binary_fn fn;
    ref2_fn ref;
} predicate_ops[] = {
    {"eq", lt_eq, r_eq}, {"ne", lt_ne, r_ne}, {"lt", lt_lt, r_lt}, {"le", lt_le, r_le},
    {"gt", lt_gt, r_gt}, {"ge", lt_ge, r_ge}, {"logical_and", lt_logical_and, r_and},
    {"logical_or", lt_logical_or, r_or},
};

static void test_comparisons_every_dtype(void **state)
{
    (void)state;
    static const double a[] = {1, 2, 3, 0, 5, 0}, b[] = {1, 3, 2, 0, 0, 4};
    static const double fa[] = {1, -2, 3, 0, NAN, 0.5}, fb[] = {1, 3, -2.5, -0.0, 0, NAN};
    static const double ba[] = {1, 0, 1, 0, 1, 0}, bb[] = {1, 1, 0, 0, 1, 0};
    for (size_t k = 0; k < sizeof predicate_ops / sizeof predicate_ops[0]; k++) {
        for (int d = 0; d < LT_TEST_N_DTYPES; d++) {
            lt_dtype dt = lt_test_all_dtypes[d];
            const double *x = dt == LT_BOOL ? ba : a, *y = dt == LT_BOOL ? bb : b;
            check_binary(predicate_ops[k].name, predicate_ops[k].fn, predicate_ops[k].ref, dt, x, y, 6,
                         LT_BOOL);
            if (lt_dtype_is_floating(dt)) /* NaN compares unequal and is "true" */
                check_binary(predicate_ops[k].name, predicate_ops[k].fn, predicate_ops[k].ref, dt, fa, fb, 6,
                             LT_BOOL);
        }
    }
    /* mixed dtypes compare in the promoted dtype */
    LT_ASSERT_VALUES(lt_lt(LT_T(LT_I32, LT_DIMS(3), 1, 2, 3), LT_T(LT_F32, LT_DIMS(3), 1.5, 1.5, 3)), 0, 1, 0,
                     0);
    LT_ASSERT_VALUES(lt_eq(LT_T(LT_U8, LT_DIMS(2), 255, 1), LT_T(LT_I64, LT_DIMS(2), 255, -255)), 0, 1, 0);
    LT_ASSERT_VALUES(lt_logical_and(LT_T(LT_F16, LT_DIMS(3), 0.5, 0, 2), LT_T(LT_BOOL, LT_DIMS(3), 1, 1, 0)),
                     0, 1, 0, 0);
}

static void test_type_promotion(void **state)
{
    (void)state;
    lt_tensor *i32 = LT_T(LT_I32, LT_DIMS(2), 1, 2), *f32 = LT_T(LT_F32, LT_DIMS(2), 0.5, 0.5);
    lt_tensor *u8 = LT_T(LT_U8, LT_DIMS(2), 250, 3), *i64 = LT_T(LT_I64, LT_DIMS(2), 3, -4);
    lt_tensor *r = LT_OK_T(lt_add(i32, f32));
    assert_int_equal(lt_tensor_dtype(r), LT_F32);
    LT_ASSERT_VALUES(r, 0, 1.5, 2.5);
    r = LT_OK_T(lt_add(u8, i32));
    assert_int_equal(lt_tensor_dtype(r), LT_I32);
    LT_ASSERT_VALUES(r, 0, 251, 5); /* no u8 wraparound: computed in i32 */
    r = LT_OK_T(lt_add(LT_T(LT_BOOL, LT_DIMS(2), 1, 0), LT_T(LT_BOOL, LT_DIMS(2), 1, 0)));
    assert_int_equal(lt_tensor_dtype(r), LT_BOOL);
    LT_ASSERT_VALUES(r, 0, 1, 0);
    r = LT_OK_T(lt_mul_scalar(i64, 2.5));
    assert_int_equal(lt_tensor_dtype(r), LT_F32);
    LT_ASSERT_VALUES(r, 0, 7.5, -10);
    r = LT_OK_T(lt_add_scalar(LT_T(LT_F16, LT_DIMS(2), 1, 2), 2.5));
    assert_int_equal(lt_tensor_dtype(r), LT_F16);
    LT_ASSERT_VALUES(r, 0, 3.5, 4.5);
    r = LT_OK_T(lt_add(i32, scalar(0.25, LT_F64))); /* a 0-d float tensor of higher category wins */
    assert_int_equal(lt_tensor_dtype(r), LT_F64);
    LT_ASSERT_VALUES(r, 0, 1.25, 2.25);
    r = LT_OK_T(lt_add(u8, scalar(300, LT_I64))); /* same category: the dimensioned tensor wins */
    assert_int_equal(lt_tensor_dtype(r), LT_U8);
    LT_ASSERT_VALUES(r, 0, (250 + 300) % 256, (3 + 300) % 256);
    r = LT_OK_T(lt_add_scalar(i32, 1)); /* a C double is a Python float */
    assert_int_equal(lt_tensor_dtype(r), LT_F32);
    r = LT_OK_T(lt_mul(LT_T(LT_BF16, LT_DIMS(1), 1.5), LT_T(LT_F16, LT_DIMS(1), 2)));
    assert_int_equal(lt_tensor_dtype(r), LT_F32);
    LT_ASSERT_VALUES(r, 0, 3);
    r = LT_OK_T(lt_sub(LT_T(LT_BF16, LT_DIMS(2), 1, 2), scalar(0.5, LT_F64)));
    assert_int_equal(lt_tensor_dtype(r), LT_BF16);
    LT_ASSERT_VALUES(r, 0, 0.5, 1.5);
    r = LT_OK_T(lt_div(i32, LT_T(LT_I64, LT_DIMS(2), 2, 4)));
    assert_int_equal(lt_tensor_dtype(r), LT_F32);
    LT_ASSERT_VALUES(r, 0, 0.5, 0.5);
    r = LT_OK_T(lt_maximum(LT_T(LT_U8, LT_DIMS(2), 1, 200), LT_T(LT_BOOL, LT_DIMS(2), 1, 1)));
    assert_int_equal(lt_tensor_dtype(r), LT_U8);
    LT_ASSERT_VALUES(r, 0, 1, 200);
    r = LT_OK_T(lt_eq(i32, scalar(2, LT_F64)));
    assert_int_equal(lt_tensor_dtype(r), LT_BOOL);
    LT_ASSERT_VALUES(r, 0, 0, 1);
    /* 0-d with 0-d: promote normally */
    r = LT_OK_T(lt_add(scalar(1, LT_I32), scalar(2, LT_I64)));
    assert_int_equal(lt_tensor_dtype(r), LT_I64);
    assert_int_equal(lt_tensor_ndim(r), 0);
    LT_ASSERT_VALUES(r, 0, 3);
}

static void test_broadcasting(void **state)
{
    (void)state;
    lt_tensor *m = LT_T(LT_F32, LT_DIMS(2, 3), 1, 2, 3, 4, 5, 6);
    lt_tensor *row = LT_T(LT_F32, LT_DIMS(3), 10, 20, 30);
    lt_tensor *r = LT_OK_T(lt_add(m, row));
    LT_ASSERT_SHAPE(r, 2, 3);
    LT_ASSERT_VALUES(r, 0, 11, 22, 33, 14, 25, 36);
    LT_ASSERT_VALUES(lt_sub(row, m), 0, 9, 18, 27, 6, 15, 24);
    lt_tensor *colv = LT_T(LT_I32, LT_DIMS(2, 1), 1, 2), *rowv = LT_T(LT_I32, LT_DIMS(1, 3), 10, 20, 30);
    r = LT_OK_T(lt_mul(colv, rowv));
    LT_ASSERT_SHAPE(r, 2, 3);
    LT_ASSERT_VALUES(r, 0, 10, 20, 30, 20, 40, 60);
    r = LT_OK_T(lt_mul(rowv, colv));
    LT_ASSERT_VALUES(r, 0, 10, 20, 30, 20, 40, 60);
    /* 0-d with n-d, both orders */
    lt_tensor *s = scalar(2, LT_F32);
    LT_ASSERT_VALUES(lt_pow(m, s), 0, 1, 4, 9, 16, 25, 36);
    r = LT_OK_T(lt_pow(s, m));
    LT_ASSERT_SHAPE(r, 2, 3);
    LT_ASSERT_VALUES(r, 0, 2, 4, 8, 16, 32, 64);
    r = LT_OK_T(lt_div(scalar(1, LT_F64), scalar(4, LT_F64)));
    assert_int_equal(lt_tensor_ndim(r), 0);
    LT_ASSERT_VALUES(r, 0, 0.25);
    /* size 1 against 0-d and n-d */
    r = LT_OK_T(lt_maximum(LT_T(LT_I64, LT_DIMS(1), 3), LT_T(LT_I64, LT_DIMS(2, 2), 1, 5, 3, 4)));
    LT_ASSERT_SHAPE(r, 2, 2);
    LT_ASSERT_VALUES(r, 0, 3, 5, 3, 4);
    r = LT_OK_T(lt_add(LT_T(LT_F32, LT_DIMS(1, 1, 1), 1), s));
    LT_ASSERT_SHAPE(r, 1, 1, 1);
    LT_ASSERT_VALUES(r, 0, 3);
    /* size-0 dims */
    lt_tensor *e = LT_OK_T(lt_zeros((int64_t[]){0, 3}, 2, LT_F32, lt_test_cpu()));
    LT_ASSERT_SHAPE(LT_OK_T(lt_add(e, row)), 0, 3);
    LT_ASSERT_SHAPE(LT_OK_T(lt_lt(row, e)), 0, 3);
    lt_tensor *e2 = LT_OK_T(lt_zeros((int64_t[]){2, 0}, 2, LT_I32, lt_test_cpu()));
    LT_ASSERT_SHAPE(LT_OK_T(lt_remainder(e2, colv)), 2, 0);
    /* an empty result divides nothing: a zero divisor is no error */
    LT_ASSERT_SHAPE(LT_OK_T(lt_remainder(LT_OK_T(lt_zeros((int64_t[]){0, 1}, 2, LT_I32, lt_test_cpu())),
                                         LT_T(LT_I32, LT_DIMS(2), 0, 1))), 0, 2);
    LT_ASSERT_SHAPE(LT_OK_T(lt_mul_scalar(e2, 3)), 2, 0);
    /* not broadcastable: the message names the op and both shapes */
    assert_null(lt_add(m, LT_T(LT_F32, LT_DIMS(2), 1, 2)));
    LT_EXPECT_ERROR(LT_ERR_SHAPE, "add: shapes [2, 3] and [2] are not broadcastable");
    assert_null(lt_eq(LT_T(LT_F32, LT_DIMS(3, 2), 1, 2, 3, 4, 5, 6), m));
    LT_EXPECT_ERROR(LT_ERR_SHAPE, "eq: shapes [3, 2] and [2, 3] are not broadcastable");
    assert_null(lt_add(e, e2));
    LT_EXPECT_ERROR(LT_ERR_SHAPE, "add: shapes [0, 3] and [2, 0]");
}

/* Strided, sliced, offset and expanded operands (every loop path). */
static void test_strided_operands(void **state)
{
    (void)state;
    lt_tensor *a = LT_T(LT_F32, LT_DIMS(2, 3), 1, 2, 3, 4, 5, 6);
    lt_tensor *b = LT_T(LT_F32, LT_DIMS(3, 2), 10, 20, 30, 40, 50, 60);
    lt_tensor *at = lt_test_transpose2d(a); /* [[1,4],[2,5],[3,6]] */
    LT_ASSERT_VALUES(lt_add(at, b), 0, 11, 24, 32, 45, 53, 66);
    lt_tensor *bt = lt_test_transpose2d(b); /* [[10,30,50],[20,40,60]] */
    LT_ASSERT_VALUES(lt_sub(a, bt), 0, -9, -28, -47, -16, -35, -54);
    LT_ASSERT_VALUES(lt_mul(at, b), 0, 10, 80, 60, 200, 150, 360);
    lt_tensor *ct = lt_test_transpose2d(LT_T(LT_F32, LT_DIMS(2, 3), 10, 20, 30, 40, 50, 60)); /* both strided */
    LT_ASSERT_VALUES(lt_mul(at, ct), 0, 10, 160, 40, 250, 90, 360);
    LT_ASSERT_VALUES(lt_gt(bt, LT_T(LT_F32, LT_DIMS(3), 15, 35, 55)), 0, 0, 0, 0, 1, 1, 1);
    /* every other element (stride 2) with an offset */
    lt_tensor *base = LT_T(LT_I64, LT_DIMS(8), 0, 1, 2, 3, 4, 5, 6, 7);
    lt_tensor *odd = lt_test_view_of(base, (int64_t[]){4}, (int64_t[]){2}, 1, 1);
    lt_tensor *even = lt_test_view_of(base, (int64_t[]){4}, (int64_t[]){2}, 1, 0);
    LT_ASSERT_VALUES(lt_mul(odd, even), 0, 0, 6, 20, 42);
    LT_ASSERT_VALUES(lt_remainder(odd, LT_T(LT_I64, LT_DIMS(4), 2, 2, -2, -2)), 0, 1, 1, -1, -1);
    /* expanded operands (stride 0): broadcast-scalar paths on both sides */
    lt_tensor *five = lt_test_view_of(base, (int64_t[]){4}, (int64_t[]){0}, 1, 5);
    lt_tensor *dense = LT_T(LT_I64, LT_DIMS(4), 1, 2, 3, 4);
    LT_ASSERT_VALUES(lt_sub(dense, five), 0, -4, -3, -2, -1);
    LT_ASSERT_VALUES(lt_sub(five, dense), 0, 4, 3, 2, 1);
    LT_ASSERT_VALUES(lt_le(five, dense), 0, 0, 0, 0, 0);
    LT_ASSERT_VALUES(lt_sub(five, five), 0, 0, 0, 0, 0);
    LT_ASSERT_VALUES(lt_sub(odd, five), 0, -4, -2, 0, 2);
    /* a half-precision transposed operand with a float scalar */
    lt_tensor *h = lt_test_transpose2d(LT_T(LT_BF16, LT_DIMS(2, 2), 1, 2, 3, 4));
    lt_tensor *hr = LT_OK_T(lt_mul_scalar(h, 0.5));
    assert_int_equal(lt_tensor_dtype(hr), LT_BF16);
    LT_ASSERT_VALUES(hr, 0, 0.5, 1.5, 1, 2);
}

/* Large operands go through the parallel iterator: check every element of
 * broadcast, transposed and scalar cases. */
static void test_large_parallel(void **state)
{
    (void)state;
    const int64_t R = 300, C = 257, n = R * C;
    double *x = malloc(sizeof(double) * (size_t)n), *expect = malloc(sizeof(double) * (size_t)n);
    double y[257], col[300];
    for (int64_t i = 0; i < n; i++)
        x[i] = (double)((i * 7919) % 1001) - 500.0;
    for (int64_t j = 0; j < C; j++)
        y[j] = (double)(j % 13) - 6.0;
    for (int64_t r = 0; r < R; r++)
        col[r] = (double)(r % 17) + 1.0;
    lt_tensor *X = LT_OK_T(lt_from_data(x, (int64_t[]){R, C}, 2, LT_F64, lt_test_cpu()));
    lt_tensor *Y = LT_OK_T(lt_from_data(y, (int64_t[]){C}, 1, LT_F64, lt_test_cpu()));
    lt_tensor *COL = LT_OK_T(lt_from_data(col, (int64_t[]){R, 1}, 2, LT_F64, lt_test_cpu()));
    for (int64_t i = 0; i < n; i++)
        expect[i] = x[i] * y[i % C];
    LT_ASSERT_ARRAY(lt_mul(X, Y), expect, n, 0);
    for (int64_t i = 0; i < n; i++)
        expect[i] = col[i / C] - y[i % C];
    LT_ASSERT_ARRAY(lt_sub(COL, Y), expect, n, 0);
    for (int64_t i = 0; i < n; i++)
        expect[i] = x[i] + 2.5;
    LT_ASSERT_ARRAY(lt_add_scalar(X, 2.5), expect, n, 0);
    /* transposed: result (j, r) is x[r][j] - col[r] */
    lt_tensor *XT = lt_test_transpose2d(X);
    lt_tensor *CT = LT_OK_T(lt_from_data(col, (int64_t[]){R}, 1, LT_F64, lt_test_cpu()));
    for (int64_t j = 0; j < C; j++)
        for (int64_t r = 0; r < R; r++)
            expect[j * R + r] = x[r * C + j] - col[r];
    LT_ASSERT_ARRAY(lt_sub(XT, CT), expect, n, 0);
    /* integer and comparison dtypes */
    lt_tensor *XI = LT_OK_T(lt_to_dtype(X, LT_I32));
    for (int64_t i = 0; i < n; i++)
        expect[i] = r_rem(x[i], col[i / C]);
    LT_ASSERT_ARRAY(lt_remainder(XI, LT_OK_T(lt_to_dtype(COL, LT_I32))), expect, n, 0);
    for (int64_t i = 0; i < n; i++)
        expect[i] = x[i] >= y[i % C];
    LT_ASSERT_ARRAY(lt_ge(XI, Y), expect, n, 0);
    /* f16 through the f32 temporary */
    lt_tensor *XH = LT_OK_T(lt_to_dtype(X, LT_F16));
    for (int64_t i = 0; i < n; i++)
        expect[i] = round_to(LT_F16, x[i] > y[i % C] ? x[i] : y[i % C]);
    LT_ASSERT_ARRAY(lt_maximum(XH, Y), expect, n, 0); /* f16 with a 1-d f64: f64 wins (both have dims) */
    lt_tensor *mx = LT_OK_T(lt_maximum(XH, LT_OK_T(lt_to_dtype(Y, LT_F16))));
    assert_int_equal(lt_tensor_dtype(mx), LT_F16);
    LT_ASSERT_ARRAY(mx, expect, n, 0);
    free(x);
    free(expect);
}

static void test_scalar_forms(void **state)
{
    (void)state;
    lt_tensor *f = LT_T(LT_F32, LT_DIMS(4), -2, 0.5, 3, 4);
    LT_ASSERT_VALUES(lt_add_scalar(f, 1), 0, -1, 1.5, 4, 5);
    LT_ASSERT_VALUES(lt_sub_scalar(f, 1), 0, -3, -0.5, 2, 3);
    LT_ASSERT_VALUES(lt_rsub_scalar(f, 1), 0, 3, 0.5, -2, -3);
    LT_ASSERT_VALUES(lt_mul_scalar(f, -2), 0, 4, -1, -6, -8);
    LT_ASSERT_VALUES(lt_div_scalar(f, 4), 0, -0.5, 0.125, 0.75, 1);
    LT_ASSERT_VALUES(lt_div_scalar(f, 0), 0, -INFINITY, INFINITY, INFINITY, INFINITY);
    LT_ASSERT_VALUES(lt_pow_scalar(f, 2), 0, 4, 0.25, 9, 16);
    LT_ASSERT_VALUES(lt_pow_scalar(f, 0.5), 1e-6, NAN, sqrt(0.5), sqrt(3), 2);
    LT_ASSERT_VALUES(lt_rpow_scalar(f, 2), 1e-6, 0.25, sqrt(2), 8, 16);
    LT_ASSERT_VALUES(lt_maximum_scalar(f, 1), 0, 1, 1, 3, 4);
    LT_ASSERT_VALUES(lt_minimum_scalar(f, 1), 0, -2, 0.5, 1, 1);
    LT_ASSERT_VALUES(lt_remainder_scalar(f, 3), 0, 1, 0.5, 0, 1);
    LT_ASSERT_VALUES(lt_remainder_scalar(f, -3), 0, -2, -2.5, 0, -2);
    LT_ASSERT_VALUES(lt_eq_scalar(f, 3), 0, 0, 0, 1, 0);
    LT_ASSERT_VALUES(lt_ne_scalar(f, 3), 0, 1, 1, 0, 1);
    LT_ASSERT_VALUES(lt_lt_scalar(f, 3), 0, 1, 1, 0, 0);
    LT_ASSERT_VALUES(lt_le_scalar(f, 3), 0, 1, 1, 1, 0);
    LT_ASSERT_VALUES(lt_gt_scalar(f, 3), 0, 0, 0, 0, 1);
    LT_ASSERT_VALUES(lt_ge_scalar(f, 3), 0, 0, 0, 1, 1);
    /* integer tensors: arithmetic gives f32, comparisons bool */
    lt_tensor *i = LT_T(LT_I32, LT_DIMS(3), -3, 1, 4);
    lt_tensor *r = LT_OK_T(lt_remainder_scalar(i, 2));
    assert_int_equal(lt_tensor_dtype(r), LT_F32);
    LT_ASSERT_VALUES(r, 0, 1, 1, 0);
    r = LT_OK_T(lt_rsub_scalar(i, 0.5));
    assert_int_equal(lt_tensor_dtype(r), LT_F32);
    LT_ASSERT_VALUES(r, 0, 3.5, -0.5, -3.5);
    r = LT_OK_T(lt_lt_scalar(i, 1.5));
    assert_int_equal(lt_tensor_dtype(r), LT_BOOL);
    LT_ASSERT_VALUES(r, 0, 1, 1, 0);
    r = LT_OK_T(lt_rpow_scalar(i, 2)); /* 2^x with an integer tensor: f32 */
    LT_ASSERT_VALUES(r, 0, 0.125, 2, 16);
    r = LT_OK_T(lt_pow_scalar(i, -1)); /* a float exponent: no integer-power error */
    LT_ASSERT_VALUES(r, 1e-7, -1.0 / 3, 1, 0.25);
    /* bool tensors: sub with a float scalar is fine (the result is f32) */
    r = LT_OK_T(lt_sub_scalar(LT_T(LT_BOOL, LT_DIMS(2), 1, 0), 0.5));
    LT_ASSERT_VALUES(r, 0, 0.5, -0.5);
    /* half dtypes keep their dtype */
    r = LT_OK_T(lt_div_scalar(LT_T(LT_BF16, LT_DIMS(2), 1, 3), 2));
    assert_int_equal(lt_tensor_dtype(r), LT_BF16);
    LT_ASSERT_VALUES(r, 0, 0.5, 1.5);
    /* 0-d tensor with a scalar stays 0-d; NULL tensors fail */
    r = LT_OK_T(lt_add_scalar(scalar(1, LT_F64), 1));
    assert_int_equal(lt_tensor_ndim(r), 0);
    LT_ASSERT_VALUES(r, 0, 2);
    assert_null(lt_add_scalar(NULL, 1));
    LT_EXPECT_ERROR(LT_ERR_NULL, "add: argument 0 is NULL");
    assert_null(lt_rpow_scalar(NULL, 1));
    LT_EXPECT_ERROR(LT_ERR_NULL, "pow");
}

static void test_alpha(void **state)
{
    (void)state;
    lt_tensor *a = LT_T(LT_F32, LT_DIMS(3), 1, 2, 3), *b = LT_T(LT_F32, LT_DIMS(3), 10, 20, 30);
    LT_ASSERT_VALUES(lt_add_scaled(a, b, 0.5), 0, 6, 12, 18);
    LT_ASSERT_VALUES(lt_sub_scaled(a, b, 0.5), 0, -4, -8, -12);
    LT_ASSERT_VALUES(lt_add_scaled(a, b, 1), 0, 11, 22, 33);
    LT_ASSERT_VALUES(lt_sub_scaled(a, b, -1), 0, 11, 22, 33);
    LT_ASSERT_VALUES(lt_add_scaled(LT_T(LT_F64, LT_DIMS(1), 1), scalar(3, LT_F64), -2), 0, -5);
    lt_tensor *h1 = LT_T(LT_F16, LT_DIMS(2), 1, 2), *h2 = LT_T(LT_F16, LT_DIMS(2), 4, 8);
    LT_ASSERT_VALUES(lt_add_scaled(h1, h2, 0.25), 0, 2, 4);
    lt_tensor *b1 = LT_T(LT_BF16, LT_DIMS(2), 1, 2), *b2 = LT_T(LT_BF16, LT_DIMS(2), 4, 8);
    LT_ASSERT_VALUES(lt_sub_scaled(b1, b2, 0.25), 0, 0, 0);
    /* integers: integral alpha, wrapping arithmetic */
    lt_tensor *i = LT_T(LT_I32, LT_DIMS(3), 1, 2, 3), *j = LT_T(LT_I32, LT_DIMS(3), 10, -20, 30);
    LT_ASSERT_VALUES(lt_add_scaled(i, j, 3), 0, 31, -58, 93);
    LT_ASSERT_VALUES(lt_sub_scaled(i, j, -2), 0, 21, -38, 63);
    LT_ASSERT_VALUES(lt_add_scaled(LT_T(LT_I64, LT_DIMS(2), 5, 6), LT_T(LT_I64, LT_DIMS(2), 1, 2), 1e12), 0,
                     1e12 + 5, 2e12 + 6);
    lt_tensor *u1 = LT_T(LT_U8, LT_DIMS(2), 5, 6), *u2 = LT_T(LT_U8, LT_DIMS(2), 1, 2);
    LT_ASSERT_VALUES(lt_add_scaled(u1, u2, -1), 0, 4, 4);
    LT_ASSERT_VALUES(lt_sub_scaled(LT_T(LT_U8, LT_DIMS(2), 5, 6), LT_T(LT_U8, LT_DIMS(2), 10, 2), 3), 0,
                     (5 + 256 - 30) % 256, 0);
    /* bool: a or (alpha and b) */
    lt_tensor *ba = LT_T(LT_BOOL, LT_DIMS(4), 0, 0, 1, 1), *bb = LT_T(LT_BOOL, LT_DIMS(4), 0, 1, 0, 1);
    LT_ASSERT_VALUES(lt_add_scaled(ba, bb, 2), 0, 0, 1, 1, 1);
    LT_ASSERT_VALUES(lt_add_scaled(ba, bb, 0), 0, 0, 0, 1, 1);
    /* a fractional alpha needs a floating result */
    assert_null(lt_add_scaled(i, j, 2.5));
    LT_EXPECT_ERROR(LT_ERR_ARGUMENT, "add: alpha 2.5 must be an integer for a i32 result");
    assert_null(lt_sub_scaled(i, j, NAN));
    LT_EXPECT_ERROR(LT_ERR_ARGUMENT, "sub: alpha nan must be an integer");
    assert_null(lt_add_scaled(ba, bb, 0.5));
    LT_EXPECT_ERROR(LT_ERR_ARGUMENT, "bool result");
    assert_null(lt_add_scaled_(LT_T(LT_I64, LT_DIMS(1), 1), LT_T(LT_I64, LT_DIMS(1), 1), 1e30));
    LT_EXPECT_ERROR(LT_ERR_ARGUMENT, "must be an integer");
    LT_ASSERT_VALUES(lt_add_scaled(i, a, 2.5), 0, 3.5, 7, 10.5); /* promoted to f32: fine */
}

static void test_integer_wraparound(void **state)
{
    (void)state;
    int32_t a32[4] = {INT32_MAX, INT32_MIN, 65536, -3};
    int32_t b32[4] = {1, 1, 65536, 3};
    lt_tensor *A = LT_OK_T(lt_from_data(a32, (int64_t[]){4}, 1, LT_I32, lt_test_cpu()));
    lt_tensor *B = LT_OK_T(lt_from_data(b32, (int64_t[]){4}, 1, LT_I32, lt_test_cpu()));
    int32_t o[4];
    assert_int_equal(lt_copy_to_host(LT_OK_T(lt_add(A, B)), o, sizeof o), LT_OK);
    assert_true(o[0] == INT32_MIN && o[1] == INT32_MIN + 1 && o[2] == 131072 && o[3] == 0);
    assert_int_equal(lt_copy_to_host(LT_OK_T(lt_sub(B, A)), o, sizeof o), LT_OK);
    assert_true(o[0] == INT32_MIN + 2 && o[1] == INT32_MIN + 1 && o[2] == 0 && o[3] == 6);
    assert_int_equal(lt_copy_to_host(LT_OK_T(lt_mul(A, B)), o, sizeof o), LT_OK);
    assert_true(o[0] == INT32_MAX && o[1] == INT32_MIN && o[2] == 0 && o[3] == -9);
    assert_int_equal(lt_copy_to_host(LT_OK_T(lt_pow(A, B)), o, sizeof o), LT_OK);
    assert_true(o[0] == INT32_MAX && o[1] == INT32_MIN && o[2] == 0 && o[3] == -27);
    lt_tensor *r = LT_OK_T(lt_pow(LT_T(LT_I32, LT_DIMS(3), 4, -2, 7), LT_T(LT_I32, LT_DIMS(3), 17, 31, 0)));
    LT_ASSERT_VALUES(r, 0, 0, INT32_MIN, 1);
    int64_t a64[3] = {INT64_MAX, INT64_MIN, 3}, b64[3] = {1, -1, 40};
    lt_tensor *A64 = LT_OK_T(lt_from_data(a64, (int64_t[]){3}, 1, LT_I64, lt_test_cpu()));
    lt_tensor *B64 = LT_OK_T(lt_from_data(b64, (int64_t[]){3}, 1, LT_I64, lt_test_cpu()));
    int64_t o64[3];
    assert_int_equal(lt_copy_to_host(LT_OK_T(lt_add(A64, B64)), o64, sizeof o64), LT_OK);
    assert_true(o64[0] == INT64_MIN && o64[1] == INT64_MAX && o64[2] == 43);
    assert_int_equal(lt_copy_to_host(LT_OK_T(lt_mul(A64, B64)), o64, sizeof o64), LT_OK);
    assert_true(o64[0] == INT64_MAX && o64[1] == INT64_MIN && o64[2] == 120);
    lt_tensor *p = LT_OK_T(lt_pow(LT_T(LT_I64, LT_DIMS(1), 3), LT_T(LT_I64, LT_DIMS(1), 41)));
    uint64_t want = 1;
    for (int k = 0; k < 41; k++)
        want *= 3u;
    assert_int_equal(lt_copy_to_host(p, o64, sizeof(int64_t)), LT_OK);
    assert_true((uint64_t)o64[0] == want);
    LT_ASSERT_VALUES(lt_add(LT_T(LT_U8, LT_DIMS(2), 200, 0), LT_T(LT_U8, LT_DIMS(2), 100, 0)), 0, 44, 0);
    LT_ASSERT_VALUES(lt_sub(LT_T(LT_U8, LT_DIMS(2), 0, 5), LT_T(LT_U8, LT_DIMS(2), 1, 5)), 0, 255, 0);
    LT_ASSERT_VALUES(lt_mul(LT_T(LT_U8, LT_DIMS(2), 16, 15), LT_T(LT_U8, LT_DIMS(2), 16, 17)), 0, 0, 255);
    LT_ASSERT_VALUES(lt_pow(LT_T(LT_U8, LT_DIMS(2), 3, 2), LT_T(LT_U8, LT_DIMS(2), 7, 8)), 0, 2187 % 256, 0);
}

static void test_remainder_and_pow_rules(void **state)
{
    (void)state;
    const lt_dtype ints[] = {LT_I32, LT_I64};
    for (int d = 0; d < 2; d++) {
        lt_tensor *a = LT_T(ints[d], LT_DIMS(5), 5, -5, 5, -5, 0);
        lt_tensor *b = LT_T(ints[d], LT_DIMS(5), 3, 3, -3, -3, -3);
        LT_ASSERT_VALUES(lt_remainder(a, b), 0, 2, 1, -1, -2, 0);
    }
    const lt_dtype floats[] = {LT_F32, LT_F64, LT_BF16, LT_F16};
    for (int d = 0; d < 4; d++) {
        lt_tensor *a = LT_T(floats[d], LT_DIMS(6), 5.5, -5.5, 5.5, -5.5, 1, -0.0);
        lt_tensor *b = LT_T(floats[d], LT_DIMS(6), 2, 2, -2, -2, 0, 3);
        LT_ASSERT_VALUES(lt_remainder(a, b), 0, 1.5, 0.5, -0.5, -1.5, NAN, 0);
    }
    LT_ASSERT_VALUES(lt_remainder(LT_T(LT_U8, LT_DIMS(2), 200, 7), LT_T(LT_U8, LT_DIMS(2), 7, 200)), 0, 4, 7);
    int32_t mn = INT32_MIN, m1 = -1;
    lt_tensor *r = LT_OK_T(lt_remainder(LT_OK_T(lt_from_data(&mn, NULL, 0, LT_I32, lt_test_cpu())),
                                        LT_OK_T(lt_from_data(&m1, NULL, 0, LT_I32, lt_test_cpu()))));
    LT_ASSERT_VALUES(r, 0, 0);
    /* integer division by zero, also through broadcasting and views */
    lt_tensor *a = LT_T(LT_I32, LT_DIMS(2, 2), 1, 2, 3, 4);
    assert_null(lt_remainder(a, LT_T(LT_I32, LT_DIMS(2), 1, 0)));
    LT_EXPECT_ERROR(LT_ERR_ARGUMENT, "remainder: integer division by zero");
    assert_null(lt_remainder(a, scalar(0, LT_I64)));
    LT_EXPECT_ERROR(LT_ERR_ARGUMENT, "remainder: integer division by zero");
    assert_null(lt_remainder(LT_T(LT_U8, LT_DIMS(1), 3), LT_T(LT_U8, LT_DIMS(1), 0)));
    LT_EXPECT_ERROR(LT_ERR_ARGUMENT, "remainder: integer division by zero");
    lt_tensor *zeros_col = lt_test_transpose2d(LT_T(LT_I64, LT_DIMS(2, 2), 1, 0, 1, 0)); /* [[1,1],[0,0]] */
    assert_null(lt_remainder(a, zeros_col));
    LT_EXPECT_ERROR(LT_ERR_ARGUMENT, "integer division by zero");
    lt_tensor *ones = lt_test_view_of(zeros_col, (int64_t[]){2}, (int64_t[]){2}, 1, 0); /* storage [0], [2] */
    LT_ASSERT_VALUES(lt_remainder(a, ones), 0, 0, 0, 0, 0);
    /* the error leaves no tensor behind (the test's leak check) and float
     * division by zero is fine */
    LT_ASSERT_VALUES(lt_remainder(a, scalar(0, LT_F32)), 0, NAN, NAN, NAN, NAN);
    /* integers to negative integer powers: 1 / a^-b truncated, as torch */
    lt_tensor *bases = LT_T(LT_I64, LT_DIMS(5), -2, -1, 0, 1, 2);
    LT_ASSERT_VALUES(lt_pow(bases, scalar(-3, LT_I64)), 0, 0, -1, 0, 1, 0);
    LT_ASSERT_VALUES(lt_pow(bases, scalar(-2, LT_I64)), 0, 0, 1, 0, 1, 0);
    LT_ASSERT_VALUES(lt_pow(LT_T(LT_I32, LT_DIMS(2), -1, 3), LT_T(LT_I32, LT_DIMS(2), INT32_MIN, -1)), 0, 1, 0);
    LT_ASSERT_VALUES(lt_pow(a, LT_T(LT_I32, LT_DIMS(2), 0, 3)), 0, 1, 8, 1, 64);
    LT_ASSERT_VALUES(lt_pow(a, scalar(-1, LT_F32)), 1e-7, 1, 0.5, 1.0 / 3, 0.25);
    lt_tensor *base3 = LT_T(LT_F32, LT_DIMS(3), 0, -8, 2), *exp3 = LT_T(LT_F32, LT_DIMS(3), 0, 1.0 / 3, -1);
    LT_ASSERT_VALUES(lt_pow(base3, exp3), 1e-7, 1, NAN, 0.5);
}

static void test_maximum_minimum_nan(void **state)
{
    (void)state;
    const lt_dtype floats[] = {LT_F32, LT_F64, LT_BF16, LT_F16};
    for (int d = 0; d < 4; d++) {
        lt_tensor *a = LT_T(floats[d], LT_DIMS(4), NAN, 1, NAN, -INFINITY);
        lt_tensor *b = LT_T(floats[d], LT_DIMS(4), 1, NAN, NAN, 2);
        LT_ASSERT_VALUES(lt_maximum(a, b), 0, NAN, NAN, NAN, 2);
        LT_ASSERT_VALUES(lt_minimum(a, b), 0, NAN, NAN, NAN, -INFINITY);
        LT_ASSERT_VALUES(lt_maximum_scalar(a, 0), 0, NAN, 1, NAN, 0);
        LT_ASSERT_VALUES(lt_minimum_scalar(a, NAN), 0, NAN, NAN, NAN, NAN);
    }
}

static void test_inplace_binary(void **state)
{
    (void)state;
    lt_tensor *t = LT_T(LT_F32, LT_DIMS(2, 2), 1, 2, 3, 4);
    lt_tensor *u = LT_T(LT_F32, LT_DIMS(2, 2), 4, 3, 2, 1);
    assert_ptr_equal(lt_add_(t, u), t);
    LT_ASSERT_VALUES(t, 0, 5, 5, 5, 5);
    assert_ptr_equal(lt_sub_(t, u), t);
    LT_ASSERT_VALUES(t, 0, 1, 2, 3, 4);
    assert_ptr_equal(lt_add_scaled_(t, u, -1), t);
    LT_ASSERT_VALUES(t, 0, -3, -1, 1, 3);
    assert_ptr_equal(lt_mul_(t, u), t);
    LT_ASSERT_VALUES(t, 0, -12, -3, 2, 3);
    assert_ptr_equal(lt_div_(t, u), t);
    LT_ASSERT_VALUES(t, 0, -3, -1, 1, 3);
    assert_ptr_equal(lt_pow_(t, LT_T(LT_F32, LT_DIMS(2), 2, 3)), t); /* broadcast other operand */
    LT_ASSERT_VALUES(t, 0, 9, -1, 1, 27);
    assert_ptr_equal(lt_maximum_(t, scalar(2, LT_F32)), t);
    LT_ASSERT_VALUES(t, 0, 9, 2, 2, 27);
    assert_ptr_equal(lt_minimum_(t, LT_T(LT_F32, LT_DIMS(2, 1), 5, 20)), t);
    LT_ASSERT_VALUES(t, 0, 5, 2, 2, 20);
    assert_ptr_equal(lt_add_scalar_(t, 1), t);
    assert_ptr_equal(lt_sub_scalar_(t, 0.5), t);
    assert_ptr_equal(lt_mul_scalar_(t, 2), t);
    assert_ptr_equal(lt_div_scalar_(t, 4), t);
    LT_ASSERT_VALUES(t, 0, 2.75, 1.25, 1.25, 10.25);
    assert_ptr_equal(lt_pow_scalar_(t, 2), t);
    LT_ASSERT_VALUES(t, 0, 7.5625, 1.5625, 1.5625, 105.0625);
    /* self as the other operand */
    lt_tensor *s = LT_T(LT_I64, LT_DIMS(3), 1, -2, 3);
    assert_ptr_equal(lt_add_(s, s), s);
    LT_ASSERT_VALUES(s, 0, 2, -4, 6);
    assert_ptr_equal(lt_mul_(s, s), s);
    LT_ASSERT_VALUES(s, 0, 4, 16, 36);
    /* integer destinations: an integer result of a wider dtype is written back */
    lt_tensor *i = LT_T(LT_I32, LT_DIMS(3), 1, 2, 3);
    assert_ptr_equal(lt_add_(i, LT_T(LT_I64, LT_DIMS(3), 10, 20, 30)), i);
    assert_int_equal(lt_tensor_dtype(i), LT_I32);
    LT_ASSERT_VALUES(i, 0, 11, 22, 33);
    lt_tensor *f = LT_T(LT_F32, LT_DIMS(2), 0.5, 1);
    assert_ptr_equal(lt_add_(f, LT_T(LT_I32, LT_DIMS(2), 1, 2)), f); /* int into float: fine */
    LT_ASSERT_VALUES(f, 0, 1.5, 3);
    /* half destinations */
    lt_tensor *h = LT_T(LT_F16, LT_DIMS(3), 1, 2, 3);
    assert_ptr_equal(lt_mul_scalar_(h, 1.5), h);
    assert_int_equal(lt_tensor_dtype(h), LT_F16);
    LT_ASSERT_VALUES(h, 0, 1.5, 3, 4.5);
    assert_ptr_equal(lt_add_(h, LT_T(LT_BF16, LT_DIMS(1), 0.5)), h); /* result f32, written as f16 */
    LT_ASSERT_VALUES(h, 0, 2, 3.5, 5);
    /* bool destination: logical results */
    lt_tensor *bd = LT_T(LT_BOOL, LT_DIMS(2), 0, 1);
    assert_ptr_equal(lt_add_(bd, LT_T(LT_BOOL, LT_DIMS(2), 1, 0)), bd);
    LT_ASSERT_VALUES(bd, 0, 1, 1);
}

static void test_inplace_views_and_errors(void **state)
{
    (void)state;
    /* in place on a column view updates the base */
    lt_tensor *base = LT_T(LT_F64, LT_DIMS(3, 3), 1, 2, 3, 4, 5, 6, 7, 8, 9);
    lt_tensor *col = lt_test_view_of(base, (int64_t[]){3}, (int64_t[]){3}, 1, 2); /* 3, 6, 9 */
    assert_ptr_equal(lt_add_scalar_(col, 100), col);
    LT_ASSERT_VALUES(base, 0, 1, 2, 103, 4, 5, 106, 7, 8, 109);
    assert_ptr_equal(lt_mul_(col, LT_T(LT_F64, LT_DIMS(3), 1, 0, -1)), col);
    LT_ASSERT_VALUES(base, 0, 1, 2, 103, 4, 5, 0, 7, 8, -109);
    /* on a transposed view, with a broadcast row */
    lt_tensor *bt = lt_test_transpose2d(base);
    assert_ptr_equal(lt_sub_(bt, LT_T(LT_F64, LT_DIMS(3), 1, 2, 3)), bt);
    /* bt[i][j] -= j+1, i.e. base[j][i] -= j+1 */
    LT_ASSERT_VALUES(base, 0, 0, 1, 102, 2, 3, -2, 4, 5, -112);
    /* an operand overlapping the destination: computed from the old values */
    lt_tensor *line = LT_T(LT_I32, LT_DIMS(4), 1, 2, 3, 4);
    lt_tensor *tail = lt_test_view_of(line, (int64_t[]){3}, (int64_t[]){1}, 1, 1);
    lt_tensor *head = lt_test_view_of(line, (int64_t[]){3}, (int64_t[]){1}, 1, 0);
    assert_ptr_equal(lt_add_(tail, head), tail);
    LT_ASSERT_VALUES(line, 0, 1, 3, 5, 7);
    /* the result shape must equal the destination's */
    lt_tensor *row = LT_T(LT_F32, LT_DIMS(3), 1, 2, 3);
    lt_tensor *m = LT_T(LT_F32, LT_DIMS(2, 3), 1, 1, 1, 1, 1, 1);
    assert_null(lt_add_(row, m));
    LT_EXPECT_ERROR(LT_ERR_SHAPE, "add_: result shape [2, 3] does not match the destination shape [3]");
    LT_ASSERT_VALUES(row, 0, 1, 2, 3);
    assert_null(lt_mul_(row, LT_T(LT_F32, LT_DIMS(2), 1, 2)));
    LT_EXPECT_ERROR(LT_ERR_SHAPE, "not broadcastable");
    /* a float result cannot go into an integer destination */
    lt_tensor *i = LT_T(LT_I32, LT_DIMS(3), 1, 2, 3);
    assert_null(lt_add_(i, row));
    LT_EXPECT_ERROR(LT_ERR_DTYPE, "add_: result dtype f32 cannot be written into a i32 destination");
    assert_null(lt_div_(i, LT_T(LT_I32, LT_DIMS(3), 1, 2, 3)));
    LT_EXPECT_ERROR(LT_ERR_DTYPE, "cannot be written into");
    assert_null(lt_mul_scalar_(i, 2));
    LT_EXPECT_ERROR(LT_ERR_DTYPE, "cannot be written into");
    assert_null(lt_add_(LT_T(LT_BOOL, LT_DIMS(1), 1), LT_T(LT_U8, LT_DIMS(1), 1)));
    LT_EXPECT_ERROR(LT_ERR_DTYPE, "result dtype u8 cannot be written into a bool destination");
    LT_ASSERT_VALUES(i, 0, 1, 2, 3);
    /* a negative integer power in place */
    LT_ASSERT_VALUES(lt_pow_(i, LT_T(LT_I32, LT_DIMS(3), 1, -1, 1)), 0, 1, 0, 3);
    LT_ASSERT_VALUES(i, 0, 1, 0, 3);
    assert_null(lt_sub_(LT_T(LT_BOOL, LT_DIMS(1), 1), LT_T(LT_BOOL, LT_DIMS(1), 1)));
    LT_EXPECT_ERROR(LT_ERR_DTYPE, "sub: bool inputs are not supported");
    assert_null(lt_add_(NULL, row));
    LT_EXPECT_ERROR(LT_ERR_NULL, "add_: argument 0 is NULL");
    assert_null(lt_add_(row, NULL));
    LT_EXPECT_ERROR(LT_ERR_NULL, "add_: argument 1 is NULL");
    assert_null(lt_sub_scalar_(NULL, 1));
    LT_EXPECT_ERROR(LT_ERR_NULL, "sub_");
}

static void test_binary_bad_input(void **state)
{
    (void)state;
    lt_tensor *a = LT_T(LT_F32, LT_DIMS(2), 1, 2);
    assert_null(lt_mul(NULL, a));
    LT_EXPECT_ERROR(LT_ERR_NULL, "mul: argument 0 is NULL");
    assert_null(lt_mul(a, NULL));
    LT_EXPECT_ERROR(LT_ERR_NULL, "mul: argument 1 is NULL");
    /* a chain fails once, with the first message */
    assert_null(lt_add(lt_sub(a, LT_T(LT_F32, LT_DIMS(3), 1, 2, 3)), a));
    LT_EXPECT_ERROR(LT_ERR_SHAPE, "sub: shapes [2] and [3] are not broadcastable");
    lt_tensor *b = LT_T(LT_BOOL, LT_DIMS(2), 1, 0);
    assert_null(lt_sub(b, b));
    LT_EXPECT_ERROR(LT_ERR_DTYPE, "sub: bool inputs are not supported");
    assert_null(lt_remainder(b, b));
    LT_EXPECT_ERROR(LT_ERR_DTYPE, "remainder: bool");
    assert_null(lt_rsub_scalar(NULL, 1));
    LT_EXPECT_ERROR(LT_ERR_NULL, "sub");
    assert_null(lt_logical_or(a, LT_T(LT_F32, LT_DIMS(2, 3), 1, 2, 3, 4, 5, 6)));
    LT_EXPECT_ERROR(LT_ERR_SHAPE, "logical_or: shapes [2] and [2, 3] are not broadcastable");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        LT_TEST(test_arithmetic_every_dtype),
        LT_TEST(test_comparisons_every_dtype),
        LT_TEST(test_type_promotion),
        LT_TEST(test_broadcasting),
        LT_TEST(test_strided_operands),
        LT_TEST(test_large_parallel),
        LT_TEST(test_scalar_forms),
        LT_TEST(test_alpha),
        LT_TEST(test_integer_wraparound),
        LT_TEST(test_remainder_and_pow_rules),
        LT_TEST(test_maximum_minimum_nan),
        LT_TEST(test_inplace_binary),
        LT_TEST(test_inplace_views_and_errors),
        LT_TEST(test_binary_bad_input),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
