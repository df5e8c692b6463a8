/* test_reduce.c - reductions (sum ... any), cumsum, softmax and
 * log_softmax against plain-C double references, on contiguous and
 * strided inputs, every accepted dtype, empty and 0-d tensors, and bad
 * input. */
#include "lt_test.h"

/* ---- reference ---------------------------------------------------------- */

enum { R_SUM, R_MEAN, R_PROD, R_AMAX, R_AMIN, R_ARGMAX, R_ARGMIN, R_MAXV, R_MINV, R_VAR0, R_VAR1,
       R_STD0, R_STD1, R_LSE, R_ALL, R_ANY, R_NOPS };

static const char *op_names[R_NOPS] = {"sum", "mean", "prod", "amax", "amin", "argmax", "argmin",
                                       "max_dim", "min_dim", "var0", "var1", "std0", "std1",
                                       "logsumexp", "all", "any"};

static bool is_one_dim_op(int op) { return op >= R_ARGMAX && op <= R_MINV; }

/* Reduces the n values v (in reduced row-major order) in double. */
static double ref_fold(int op, const double *v, int64_t n)
{
    double s = 0, m = 0, best;
    int64_t arg = 0;
    switch (op) {
    case R_SUM:
    case R_MEAN:
        for (int64_t i = 0; i < n; i++)
            s += v[i];
        return op == R_SUM ? s : s / (double)n;
    case R_PROD:
        s = 1;
        for (int64_t i = 0; i < n; i++)
            s *= v[i];
        return s;
    case R_AMAX: case R_AMIN: case R_ARGMAX: case R_ARGMIN: case R_MAXV: case R_MINV: {
        bool want_max = op == R_AMAX || op == R_ARGMAX || op == R_MAXV;
        best = v[0];
        for (int64_t i = 1; i < n && !isnan(best); i++) {
            if (isnan(v[i]) || (want_max ? v[i] > best : v[i] < best)) {
                best = v[i];
                arg = i;
            }
        }
        return op == R_ARGMAX || op == R_ARGMIN ? (double)arg : best;
    }
    case R_VAR0: case R_VAR1: case R_STD0: case R_STD1: {
        for (int64_t i = 0; i < n; i++)
            m += v[i];
        m /= (double)n;
        for (int64_t i = 0; i < n; i++)
            s += (v[i] - m) * (v[i] - m);
        double var = s / (double)(n - (op == R_VAR1 || op == R_STD1));
        return op == R_STD0 || op == R_STD1 ? sqrt(var) : var;
    }
    case R_LSE:
        m = v[0];
        for (int64_t i = 1; i < n; i++)
            m = v[i] > m ? v[i] : m;
        for (int64_t i = 0; i < n; i++)
            s += exp(v[i] - m);
        return m + log(s);
    case R_ALL:
        for (int64_t i = 0; i < n; i++)
            if (v[i] == 0)
                return 0;
        return 1;
    case R_ANY:
        for (int64_t i = 0; i < n; i++)
            if (v[i] != 0)
                return 1;
        return 0;
    default:
        return NAN;
    }
}

/* Reference reduction of the row-major x over the dims marked in mask;
 * writes n_out results and returns n_out. */
static int64_t ref_reduce(int op, const double *x, const int64_t *shape, int ndim, const bool *mask,
                          double *out)
{
    int64_t n_out = 1, n_red = 1, numel = 1;
    for (int d = 0; d < ndim; d++) {
        numel *= shape[d];
        if (mask[d])
            n_red *= shape[d];
        else
            n_out *= shape[d];
    }
    double *grouped = malloc(sizeof(double) * (size_t)(numel > 0 ? numel : 1));
    for (int64_t i = 0; i < numel; i++) {
        int64_t rem = i, o = 0, r = 0, ostride = 1, rstride = 1;
        for (int d = ndim - 1; d >= 0; d--) {
            int64_t idx = rem % shape[d];
            rem /= shape[d];
            if (mask[d]) {
                r += idx * rstride;
                rstride *= shape[d];
            } else {
                o += idx * ostride;
                ostride *= shape[d];
            }
        }
        grouped[o * n_red + r] = x[i];
    }
    for (int64_t o = 0; o < n_out; o++)
        out[o] = ref_fold(op, grouped + o * n_red, n_red);
    free(grouped);
    return n_out;
}

/* ---- helpers ------------------------------------------------------------ */

static double gen(int64_t i) { return sin((double)i * 0.37) * 3.0; }

static lt_tensor *gen_tensor(const int64_t *dims, int ndim, lt_dtype dt)
{
    int64_t n = 1;
    for (int d = 0; d < ndim; d++)
        n *= dims[d];
    double *v = malloc(sizeof(double) * (size_t)(n > 0 ? n : 1));
    for (int64_t i = 0; i < n; i++)
        v[i] = gen(i);
    lt_tensor *t = lt_test_tensor(v, dims, ndim, dt);
    free(v);
    return t;
}

/* A published strided view of base (white-box: independent of the view
 * functions of the public API). */
static lt_tensor *make_view(lt_tensor *base, const int64_t *shape, const int64_t *strides, int ndim,
                            int64_t offset)
{
    return lt_tensor_publish(lt_tensor_view_of(base, shape, strides, ndim, offset));
}

static lt_tensor *call_op(int op, lt_tensor *t, const int *dims, int nd, bool keep)
{
    switch (op) {
    case R_SUM: return lt_sum(t, dims, nd, keep);
    case R_MEAN: return lt_mean(t, dims, nd, keep);
    case R_PROD: return lt_prod(t, dims, nd, keep);
    case R_AMAX: return lt_amax(t, dims, nd, keep);
    case R_AMIN: return lt_amin(t, dims, nd, keep);
    case R_ARGMAX: return lt_argmax(t, dims[0], keep);
    case R_ARGMIN: return lt_argmin(t, dims[0], keep);
    case R_MAXV: return lt_max_dim(t, dims[0], keep, NULL);
    case R_MINV: return lt_min_dim(t, dims[0], keep, NULL);
    case R_VAR0: return lt_var(t, dims, nd, 0, keep);
    case R_VAR1: return lt_var(t, dims, nd, 1, keep);
    case R_STD0: return lt_std(t, dims, nd, 0, keep);
    case R_STD1: return lt_std(t, dims, nd, 1, keep);
    case R_LSE: return lt_logsumexp(t, dims, nd, keep);
    case R_ALL: return lt_all(t, dims, nd, keep);
    case R_ANY: return lt_any(t, dims, nd, keep);
    default: return NULL;
    }
}

/* Result dtype the op must give for input dtype dt. */
static lt_dtype expected_dtype(int op, lt_dtype dt)
{
    switch (op) {
    case R_SUM:
    case R_PROD: return lt_dtype_is_floating(dt) ? dt : LT_I64;
    case R_ARGMAX:
    case R_ARGMIN: return LT_I64;
    case R_ALL:
    case R_ANY: return LT_BOOL;
    case R_LSE: return lt_dtype_is_floating(dt) ? dt : LT_F32;
    default: return dt;
    }
}

static int checks_run;

/* Runs op on t over dims and compares shape, dtype and values with the
 * reference computed from t's own (row-major) values. */
static void check_op(int op, lt_tensor *t, const int *dims, int nd, bool keep, double tol)
{
    int ndim = lt_tensor_ndim(t);
    const int64_t *shape = lt_tensor_shape(t);
    bool mask[LT_MAX_DIMS] = {false};
    for (int k = 0; k < nd; k++)
        mask[dims[k] < 0 ? dims[k] + ndim : dims[k]] = true;
    if (nd == 0)
        for (int d = 0; d < ndim; d++)
            mask[d] = true;
    int64_t eshape[LT_MAX_DIMS];
    int en = 0;
    for (int d = 0; d < ndim; d++)
        if (!mask[d] || keep)
            eshape[en++] = mask[d] ? 1 : shape[d];
    double *x = lt_test_values(t);
    double expected[256];
    int64_t n = ref_reduce(op, x, shape, ndim, mask, expected);
    free(x);
    lt_tensor *r = call_op(op, t, dims, nd, keep);
    if (!r)
        print_error("%s over %d dims failed: %s\n", op_names[op], nd, lt_last_error());
    LT_OK_T(r);
    lt_test_assert_shape(r, eshape, en, __FILE__, __LINE__);
    assert_int_equal(lt_tensor_dtype(r), expected_dtype(op, lt_tensor_dtype(t)));
    LT_ASSERT_ARRAY(r, expected, n, tol);
    checks_run++;
}

static const int dim_sets[][4] = {{0}, {1}, {2}, {-1}, {0, 2}, {-3, -1}, {2, 0}, {0, 1, 2}, {0}};
static const int dim_counts[] = {1, 1, 1, 1, 2, 2, 2, 3, 0};
#define N_DIM_SETS ((int)(sizeof dim_counts / sizeof dim_counts[0]))

/* Every float op over every dim set, keepdim on and off. */
static void check_all_float_ops(lt_tensor *t, double tol)
{
    for (int s = 0; s < N_DIM_SETS; s++) {
        for (int keep = 0; keep < 2; keep++) {
            for (int op = 0; op < R_NOPS; op++) {
                if (is_one_dim_op(op) && dim_counts[s] != 1)
                    continue;
                if (op == R_PROD) /* products of 20-60 values ~3 need a relative tolerance */
                    continue;
                check_op(op, t, dim_sets[s], dim_counts[s], keep, tol);
            }
        }
    }
}

/* ---- values on [3, 4, 5] ------------------------------------------------- */

static void test_float_ops_contiguous(void **state)
{
    (void)state;
    lt_tensor *t = LT_OK_T(gen_tensor(LT_DIMS(3, 4, 5), LT_F64));
    check_all_float_ops(t, 1e-12);
    lt_tensor *t32 = LT_OK_T(gen_tensor(LT_DIMS(3, 4, 5), LT_F32));
    check_all_float_ops(t32, 2e-6);
}

static void test_prod_values(void **state)
{
    (void)state;
    /* values near 1 keep products well scaled */
    double v[24];
    for (int i = 0; i < 24; i++)
        v[i] = 1.0 + 0.1 * gen(i);
    lt_tensor *t = LT_OK_T(lt_test_tensor(v, LT_DIMS(2, 3, 4), LT_F32));
    for (int s = 0; s < N_DIM_SETS; s++)
        for (int keep = 0; keep < 2; keep++)
            check_op(R_PROD, t, dim_sets[s], dim_counts[s], keep, 1e-6);
    LT_ASSERT_VALUES(lt_prod(LT_T(LT_F64, LT_DIMS(4), 2, -3, 0.5, 4), NULL, 0, false), 0, -12);
}

static void test_transposed_input(void **state)
{
    (void)state;
    lt_tensor *base = LT_OK_T(gen_tensor(LT_DIMS(5, 4, 3), LT_F32));
    lt_tensor *t = LT_OK_T(make_view(base, (const int64_t[]){3, 4, 5}, (const int64_t[]){1, 3, 12}, 3, 0));
    assert_false(lt_tensor_is_contiguous(t));
    check_all_float_ops(t, 2e-6);
}

static void test_sliced_input(void **state)
{
    (void)state;
    lt_tensor *base = LT_OK_T(gen_tensor(LT_DIMS(6, 4, 10), LT_F64));
    lt_tensor *t = LT_OK_T(make_view(base, (const int64_t[]){3, 4, 5}, (const int64_t[]){80, 10, 2}, 3, 41));
    double *v = lt_test_values(t);
    assert_true(fabs(v[0] - gen(41)) < 1e-12 && fabs(v[59] - gen(41 + 160 + 30 + 8)) < 1e-12);
    free(v);
    check_all_float_ops(t, 1e-12);
}

static void test_expanded_input(void **state)
{
    (void)state;
    lt_tensor *base = LT_OK_T(gen_tensor(LT_DIMS(3, 1, 5), LT_F64));
    lt_tensor *t = LT_OK_T(make_view(base, (const int64_t[]){3, 4, 5}, (const int64_t[]){5, 0, 1}, 3, 0));
    check_all_float_ops(t, 1e-12);
    /* a scalar expanded to [4, 6]: every stride 0 */
    lt_tensor *s = LT_OK_T(lt_scalar(2.5, LT_F32, lt_test_cpu()));
    lt_tensor *e = LT_OK_T(make_view(s, (const int64_t[]){4, 6}, (const int64_t[]){0, 0}, 2, 0));
    LT_ASSERT_VALUES(lt_sum(e, NULL, 0, false), 0, 60);
    LT_ASSERT_VALUES(lt_sum(e, (const int[]){0}, 1, false), 0, 10, 10, 10, 10, 10, 10);
    LT_ASSERT_VALUES(lt_amax(e, (const int[]){1}, 1, true), 0, 2.5, 2.5, 2.5, 2.5);
    LT_ASSERT_VALUES(lt_argmax(e, 1, false), 0, 0, 0, 0, 0);
}

static void check_softmax(lt_tensor *t, int dim, double tol);
static void check_cumsum(lt_tensor *t, int dim, lt_dtype want, double tol);

/* The same through the public view functions. */
static void test_public_views(void **state)
{
    (void)state;
    lt_tensor *t = LT_OK_T(gen_tensor(LT_DIMS(4, 6), LT_F32));
    lt_tensor *views[3] = {
        LT_OK_T(lt_transpose(t, 0, 1)),
        LT_OK_T(lt_slice(t, 1, 1, 6, 2)),
        LT_OK_T(lt_expand(LT_OK_T(lt_slice(t, 0, 2, 3, 1)), LT_DIMS(5, 6))),
    };
    const int ops[] = {R_SUM, R_MEAN, R_AMAX, R_ARGMIN, R_MAXV, R_VAR1, R_LSE, R_ANY};
    for (int v = 0; v < 3; v++) {
        assert_false(lt_tensor_is_contiguous(views[v]));
        for (int d = -1; d < 2; d++) {
            for (size_t k = 0; k < sizeof ops / sizeof ops[0]; k++)
                check_op(ops[k], views[v], &d, 1, d == 0, 1e-6);
        }
        check_op(R_SUM, views[v], NULL, 0, false, 1e-6);
        check_softmax(views[v], 0, 1e-6);
        check_softmax(views[v], -1, 1e-6);
        check_cumsum(views[v], 0, LT_F32, 1e-6);
        check_cumsum(views[v], 1, LT_F32, 1e-6);
    }
}

static void test_half_dtypes(void **state)
{
    (void)state;
    lt_dtype dts[2] = {LT_BF16, LT_F16};
    double tols[2] = {1e-2, 2e-3};
    for (int k = 0; k < 2; k++) {
        lt_tensor *t = LT_OK_T(gen_tensor(LT_DIMS(3, 4, 5), dts[k]));
        for (int s = 0; s < N_DIM_SETS; s++) {
            for (int op = 0; op < R_NOPS; op++) {
                if ((is_one_dim_op(op) && dim_counts[s] != 1) || op == R_PROD)
                    continue;
                check_op(op, t, dim_sets[s], dim_counts[s], s % 2 == 0, tols[k]);
            }
        }
    }
}

/* ---- integer and bool dtypes --------------------------------------------- */

static lt_tensor *int_tensor(lt_dtype dt)
{
    double v[60];
    for (int i = 0; i < 60; i++)
        v[i] = dt == LT_BOOL ? (i % 3 == 0) : dt == LT_U8 ? (i * 7) % 11 : (i * 7) % 11 - 5;
    return lt_test_tensor(v, LT_DIMS(3, 4, 5), dt);
}

static void test_int_and_bool_dtypes(void **state)
{
    (void)state;
    const int ops[] = {R_SUM, R_AMAX, R_AMIN, R_ARGMAX, R_ARGMIN, R_MAXV, R_MINV, R_ALL, R_ANY};
    lt_dtype dts[4] = {LT_I32, LT_I64, LT_U8, LT_BOOL};
    for (int k = 0; k < 4; k++) {
        lt_tensor *t = LT_OK_T(int_tensor(dts[k]));
        for (int s = 0; s < N_DIM_SETS; s++) {
            for (size_t j = 0; j < sizeof ops / sizeof ops[0]; j++) {
                if (is_one_dim_op(ops[j]) && dim_counts[s] != 1)
                    continue;
                check_op(ops[j], t, dim_sets[s], dim_counts[s], s % 2 == 1, 0);
            }
            check_op(R_LSE, t, dim_sets[s], dim_counts[s], false, 1e-6); /* promoted to f32 */
        }
        check_op(R_PROD, t, (const int[]){2}, 1, false, 0);
        check_op(R_PROD, t, (const int[]){0}, 1, true, 0);
    }
}

static void test_int64_exact(void **state)
{
    (void)state;
    lt_device cpu = lt_test_cpu();
    int64_t big[3] = {(int64_t)1 << 53, 1, 1};
    lt_tensor *t = LT_OK_T(lt_from_data(big, LT_DIMS(3), LT_I64, cpu));
    int64_t v = 0;
    assert_int_equal(lt_item_int(lt_sum(t, NULL, 0, false), &v), LT_OK);
    assert_true(v == ((int64_t)1 << 53) + 2);
    int64_t m[2] = {((int64_t)1 << 62) + 1, (int64_t)1 << 62};
    lt_tensor *mt = LT_OK_T(lt_from_data(m, LT_DIMS(2), LT_I64, cpu));
    assert_int_equal(lt_item_int(lt_amax(mt, NULL, 0, false), &v), LT_OK);
    assert_true(v == ((int64_t)1 << 62) + 1);
    assert_int_equal(lt_item_int(lt_argmin(mt, 0, false), &v), LT_OK);
    assert_int_equal(v, 1);
    /* products wrap modulo 2^64 like torch's int64 */
    int64_t w[2] = {(int64_t)1 << 62, 4};
    assert_int_equal(lt_item_int(lt_prod(LT_OK_T(lt_from_data(w, LT_DIMS(2), LT_I64, cpu)), NULL, 0, false), &v),
                     LT_OK);
    assert_int_equal(v, 0);
    /* i32 sums do not overflow: the result is i64 */
    int32_t i32[2] = {INT32_MAX, INT32_MAX};
    assert_int_equal(lt_item_int(lt_sum(LT_OK_T(lt_from_data(i32, LT_DIMS(2), LT_I32, cpu)), NULL, 0, false), &v),
                     LT_OK);
    assert_true(v == 2 * (int64_t)INT32_MAX);
    /* u8 sums widen too */
    uint8_t u8[3] = {200, 200, 200};
    lt_tensor *us = LT_OK_T(lt_sum(LT_OK_T(lt_from_data(u8, LT_DIMS(3), LT_U8, cpu)), NULL, 0, false));
    assert_int_equal(lt_tensor_dtype(us), LT_I64);
    LT_ASSERT_VALUES(us, 0, 600);
}

static void test_all_any_values(void **state)
{
    (void)state;
    lt_tensor *f = LT_T(LT_F32, LT_DIMS(2, 3), 0, NAN, 1, 2, -1, 0.5);
    LT_ASSERT_VALUES(lt_any(f, NULL, 0, false), 0, 1);
    LT_ASSERT_VALUES(lt_all(f, NULL, 0, false), 0, 0);
    LT_ASSERT_VALUES(lt_all(f, (const int[]){1}, 1, false), 0, 0, 1);
    LT_ASSERT_VALUES(lt_any(f, (const int[]){0}, 1, true), 0, 1, 1, 1);
    LT_ASSERT_VALUES(lt_all(LT_T(LT_F64, LT_DIMS(1), NAN), NULL, 0, false), 0, 1);
    lt_tensor *u = LT_T(LT_U8, LT_DIMS(3), 2, 3, 255);
    lt_tensor *ua = LT_OK_T(lt_all(u, NULL, 0, false));
    assert_int_equal(lt_tensor_dtype(ua), LT_BOOL);
    LT_ASSERT_VALUES(ua, 0, 1);
    LT_ASSERT_VALUES(lt_any(LT_T(LT_I32, LT_DIMS(2, 2), 0, 0, 0, -7), (const int[]){-1}, 1, false), 0, 0, 1);
}

/* ---- max_dim / argmax --------------------------------------------------- */

static void test_max_dim_indices_ties_nan(void **state)
{
    (void)state;
    lt_tensor *x = LT_T(LT_F32, LT_DIMS(3, 4), 1, 3, 3, 2, 5, 5, 1, 5, NAN, 2, NAN, 9);
    lt_tensor *idx = NULL;
    lt_tensor *v = LT_OK_T(lt_max_dim(x, 1, false, &idx));
    LT_ASSERT_VALUES(v, 0, 3, 5, NAN);
    assert_non_null(idx);
    assert_int_equal(lt_tensor_dtype(idx), LT_I64);
    LT_ASSERT_VALUES(idx, 0, 1, 0, 0);
    v = LT_OK_T(lt_min_dim(x, -1, true, &idx));
    LT_ASSERT_SHAPE(v, 3, 1);
    LT_ASSERT_SHAPE(idx, 3, 1);
    LT_ASSERT_VALUES(v, 0, 1, 1, NAN);
    LT_ASSERT_VALUES(idx, 0, 0, 2, 0);
    /* over dim 0 (column loops) */
    LT_ASSERT_VALUES(lt_argmax(x, 0, false), 0, 2, 1, 2, 2);
    LT_ASSERT_VALUES(lt_argmin(x, 0, false), 0, 2, 2, 2, 0);
    v = LT_OK_T(lt_max_dim(x, 0, false, &idx));
    LT_ASSERT_VALUES(v, 0, NAN, 5, NAN, 9);
    LT_ASSERT_VALUES(idx, 0, 2, 1, 2, 2);
    /* ties everywhere: the first occurrence */
    lt_tensor *ones = LT_OK_T(lt_ones(LT_DIMS(3, 3), LT_F64, lt_test_cpu()));
    LT_ASSERT_VALUES(lt_argmax(ones, 0, false), 0, 0, 0, 0);
    LT_ASSERT_VALUES(lt_argmin(ones, 1, false), 0, 0, 0, 0);
    /* NULL indices pointer: values only */
    LT_ASSERT_VALUES(lt_max_dim(x, 1, false, NULL), 0, 3, 5, NAN);
    /* integer values and indices */
    lt_tensor *xi = LT_T(LT_I32, LT_DIMS(2, 3), 4, -1, 4, -2, -2, -3);
    v = LT_OK_T(lt_max_dim(xi, 1, false, &idx));
    assert_int_equal(lt_tensor_dtype(v), LT_I32);
    LT_ASSERT_VALUES(v, 0, 4, -2);
    LT_ASSERT_VALUES(idx, 0, 0, 0);
    LT_ASSERT_VALUES(lt_argmin(xi, 1, false), 0, 1, 2);
}

/* Long rows (chunked parallel search) keep the first occurrence. */
static void test_argmax_long_rows(void **state)
{
    (void)state;
    int64_t n = 100000;
    double *v = calloc((size_t)n * 3, sizeof(double));
    v[500] = 7;
    v[90000] = 7;
    v[n - 1] = -3;
    lt_tensor *row = LT_OK_T(lt_test_tensor(v, &n, 1, LT_F32));
    LT_ASSERT_VALUES(lt_argmax(row, 0, false), 0, 500);
    LT_ASSERT_VALUES(lt_amax(row, NULL, 0, false), 0, 7);
    LT_ASSERT_VALUES(lt_argmin(row, 0, false), 0, (double)(n - 1));
    v[70000] = NAN;
    v[95000] = NAN;
    row = LT_OK_T(lt_test_tensor(v, &n, 1, LT_F32));
    LT_ASSERT_VALUES(lt_argmax(row, 0, false), 0, 70000);
    LT_ASSERT_VALUES(lt_argmin(row, 0, false), 0, 70000);
    LT_ASSERT_VALUES(lt_amin(row, NULL, 0, false), 0, NAN);
    /* [n, 3] over dim 0: column loops; column 1 gets maxima at rows 30000
     * and 80000, column 2 a NaN at row 99999 */
    memset(v, 0, sizeof(double) * (size_t)n * 3);
    v[30000 * 3 + 1] = 5;
    v[80000 * 3 + 1] = 5;
    v[99999 * 3 + 2] = NAN;
    v[12345 * 3 + 0] = -1;
    lt_tensor *m = LT_OK_T(lt_test_tensor(v, LT_DIMS(n, 3), LT_F64));
    LT_ASSERT_VALUES(lt_argmax(m, 0, false), 0, 0, 30000, 99999);
    LT_ASSERT_VALUES(lt_argmin(m, 0, false), 0, 12345, 0, 99999);
    LT_ASSERT_VALUES(lt_amax(m, (const int[]){0}, 1, false), 0, 0, 5, NAN);
    free(v);
}

static void test_nan_propagation(void **state)
{
    (void)state;
    /* row loops with lanes (40 elements) and a tail NaN */
    double v[40];
    for (int i = 0; i < 40; i++)
        v[i] = gen(i);
    for (int pos = 0; pos < 40; pos += 13) {
        double w[40];
        memcpy(w, v, sizeof w);
        w[pos] = NAN;
        lt_tensor *t = LT_OK_T(lt_test_tensor(w, LT_DIMS(40), LT_F32));
        LT_ASSERT_VALUES(lt_amax(t, NULL, 0, false), 0, NAN);
        LT_ASSERT_VALUES(lt_amin(t, NULL, 0, false), 0, NAN);
        LT_ASSERT_VALUES(lt_argmax(t, 0, false), 0, (double)pos);
        LT_ASSERT_VALUES(lt_sum(t, NULL, 0, false), 0, NAN);
    }
    lt_tensor *t = LT_T(LT_F64, LT_DIMS(2, 2), -INFINITY, -INFINITY, 1, INFINITY);
    LT_ASSERT_VALUES(lt_amax(t, (const int[]){1}, 1, false), 0, -INFINITY, INFINITY);
    LT_ASSERT_VALUES(lt_argmax(t, 1, false), 0, 0, 1);
}

/* Lines made only of one infinity: the running extremum must start at the
 * identity (an infinity), not at the largest finite value. 37 elements
 * cover the vector lanes and a tail, in f32 and f64. */
static void test_extrema_of_infinite_lines(void **state)
{
    (void)state;
    for (int dt = 0; dt < 2; dt++) {
        lt_dtype dtype = dt ? LT_F64 : LT_F32;
        for (int sign = -1; sign <= 1; sign += 2) {
            double v[37];
            for (int i = 0; i < 37; i++)
                v[i] = sign * INFINITY;
            lt_tensor *t = LT_OK_T(lt_test_tensor(v, LT_DIMS(37), dtype));
            LT_ASSERT_VALUES(lt_amax(t, NULL, 0, false), 0, sign * INFINITY);
            LT_ASSERT_VALUES(lt_amin(t, NULL, 0, false), 0, sign * INFINITY);
            LT_ASSERT_VALUES(lt_argmax(t, 0, false), 0, 0);
            LT_ASSERT_VALUES(lt_argmin(t, 0, false), 0, 0);
        }
    }
}

/* ---- var / std / mean --------------------------------------------------- */

static void test_var_std_correction(void **state)
{
    (void)state;
    lt_tensor *t = LT_T(LT_F64, LT_DIMS(4), 1, 2, 3, 4);
    LT_ASSERT_VALUES(lt_var(t, NULL, 0, 0, false), 1e-15, 1.25);
    LT_ASSERT_VALUES(lt_var(t, NULL, 0, 1, false), 1e-15, 5.0 / 3.0);
    LT_ASSERT_VALUES(lt_std(t, NULL, 0, 0, false), 1e-15, sqrt(1.25));
    LT_ASSERT_VALUES(lt_std(t, NULL, 0, 1, false), 1e-15, sqrt(5.0 / 3.0));
    LT_ASSERT_VALUES(lt_var(t, NULL, 0, 2, false), 1e-15, 2.5);
    /* N - correction <= 0: inf for a nonzero sum of squares, NaN for zero */
    LT_ASSERT_VALUES(lt_var(t, NULL, 0, 4, false), 0, INFINITY);
    LT_ASSERT_VALUES(lt_var(t, NULL, 0, 7, false), 0, INFINITY);
    LT_ASSERT_VALUES(lt_var(LT_T(LT_F32, LT_DIMS(1), 3), NULL, 0, 1, false), 0, NAN);
    LT_ASSERT_VALUES(lt_std(LT_T(LT_F32, LT_DIMS(3), 2, 2, 2), NULL, 0, 3, false), 0, NAN);
    /* large offset: the two-pass variance does not cancel */
    lt_tensor *off = LT_T(LT_F32, LT_DIMS(3), 10000.5, 10001.5, 10002.5);
    LT_ASSERT_VALUES(lt_var(off, NULL, 0, 1, false), 1e-6, 1.0);
    LT_ASSERT_VALUES(lt_mean(off, NULL, 0, false), 1e-7, 10001.5);
}

/* ---- logsumexp ---------------------------------------------------------- */

static void test_logsumexp_stable(void **state)
{
    (void)state;
    lt_tensor *t = LT_T(LT_F32, LT_DIMS(3, 2), 1000, 1000, -1000, -1000, 0, 0);
    LT_ASSERT_VALUES(lt_logsumexp(t, (const int[]){1}, 1, false), 1e-7, 1000 + log(2.0), -1000 + log(2.0),
                     log(2.0));
    LT_ASSERT_VALUES(lt_logsumexp(t, (const int[]){0}, 1, true), 1e-7, 1000, 1000);
    lt_tensor *inf = LT_T(LT_F64, LT_DIMS(3, 2), -INFINITY, -INFINITY, INFINITY, 1, NAN, 1);
    LT_ASSERT_VALUES(lt_logsumexp(inf, (const int[]){1}, 1, false), 0, -INFINITY, INFINITY, NAN);
    lt_tensor *ints = LT_T(LT_I64, LT_DIMS(2), 1, 2);
    lt_tensor *r = LT_OK_T(lt_logsumexp(ints, NULL, 0, false));
    assert_int_equal(lt_tensor_dtype(r), LT_F32);
    LT_ASSERT_VALUES(r, 1e-6, 2.0 + log(1.0 + exp(-1.0)));
}

/* ---- softmax / log_softmax ---------------------------------------------- */

/* Checks softmax and log_softmax of t along dim against exp(x - max)/sum. */
static void check_softmax(lt_tensor *t, int dim, double tol)
{
    int ndim = lt_tensor_ndim(t);
    const int64_t *shape = lt_tensor_shape(t);
    int d = dim < 0 ? dim + (ndim > 0 ? ndim : 1) : dim;
    int64_t outer = 1, len = 1, inner = 1;
    for (int k = 0; k < ndim; k++) {
        if (k < d)
            outer *= shape[k];
        else if (k == d)
            len = shape[k];
        else
            inner *= shape[k];
    }
    int64_t n = outer * len * inner;
    double *x = lt_test_values(t);
    double *sm = malloc(sizeof(double) * (size_t)n), *lsm = malloc(sizeof(double) * (size_t)n);
    for (int64_t o = 0; o < outer; o++) {
        for (int64_t j = 0; j < inner; j++) {
            double m = -INFINITY, s = 0;
            for (int64_t i = 0; i < len; i++)
                m = fmax(m, x[(o * len + i) * inner + j]);
            for (int64_t i = 0; i < len; i++)
                s += exp(x[(o * len + i) * inner + j] - m);
            for (int64_t i = 0; i < len; i++) {
                int64_t k = (o * len + i) * inner + j;
                sm[k] = exp(x[k] - m) / s;
                lsm[k] = x[k] - m - log(s);
            }
        }
    }
    lt_tensor *y = LT_OK_T(lt_softmax(t, dim));
    lt_test_assert_shape(y, shape, ndim, __FILE__, __LINE__);
    assert_int_equal(lt_tensor_dtype(y), lt_tensor_dtype(t));
    LT_ASSERT_ARRAY(y, sm, n, tol);
    LT_ASSERT_ARRAY(LT_OK_T(lt_log_softmax(t, dim)), lsm, n, tol);
    /* rows sum to 1 */
    int dims1[1] = {dim};
    double *ones = malloc(sizeof(double) * (size_t)(outer * inner > 0 ? outer * inner : 1));
    for (int64_t k = 0; k < outer * inner; k++)
        ones[k] = 1.0;
    if (ndim > 0)
        LT_ASSERT_ARRAY(lt_sum(y, dims1, 1, false), ones, outer * inner, tol * 10);
    free(ones);
    free(x);
    free(sm);
    free(lsm);
    checks_run++;
}

static void test_softmax_values(void **state)
{
    (void)state;
    lt_tensor *t64 = LT_OK_T(gen_tensor(LT_DIMS(3, 4, 5), LT_F64));
    lt_tensor *t32 = LT_OK_T(gen_tensor(LT_DIMS(3, 4, 5), LT_F32));
    lt_tensor *base = LT_OK_T(gen_tensor(LT_DIMS(5, 4, 3), LT_F32));
    lt_tensor *tr = LT_OK_T(make_view(base, (const int64_t[]){3, 4, 5}, (const int64_t[]){1, 3, 12}, 3, 0));
    for (int dim = -3; dim < 3; dim++) {
        check_softmax(t64, dim, 1e-13);
        check_softmax(t32, dim, 1e-6);
        check_softmax(tr, dim, 1e-6);
    }
    /* wide and long: parallel rows and column blocks */
    lt_tensor *big = LT_OK_T(gen_tensor(LT_DIMS(70, 600), LT_F32));
    check_softmax(big, 1, 1e-6);
    check_softmax(big, 0, 1e-6);
    /* a wide spread of exponents (down to exp(-180)) in f32 */
    double wide[400];
    for (int i = 0; i < 400; i++)
        wide[i] = 30.0 * gen(i);
    lt_tensor *spread = LT_OK_T(lt_test_tensor(wide, LT_DIMS(8, 50), LT_F32));
    check_softmax(spread, 1, 1e-6);
    check_softmax(spread, 0, 1e-6);
    lt_tensor *h = LT_OK_T(gen_tensor(LT_DIMS(4, 6), LT_BF16));
    check_softmax(h, 1, 1e-2);
    lt_tensor *f16 = LT_OK_T(gen_tensor(LT_DIMS(4, 6), LT_F16));
    check_softmax(f16, 0, 2e-3);
}

/* softmax([0, t])[1] = e^t / (1 + e^t): its relative accuracy shows the f32
 * exponential's, down to tiny results. */
static void test_softmax_f32_relative_accuracy(void **state)
{
    (void)state;
    enum { N = 240 };
    double v[2 * N];
    for (int i = 0; i < N; i++) {
        v[2 * i] = 0;
        v[2 * i + 1] = -86.0 + 86.0 * i / (N - 1) * (i % 2 ? 1.0 : 0.999);
    }
    lt_tensor *t = LT_OK_T(lt_test_tensor(v, LT_DIMS(N, 2), LT_F32));
    double *x = lt_test_values(t), *y = lt_test_values(LT_OK_T(lt_softmax(t, 1)));
    double worst = 0;
    for (int i = 0; i < N; i++) {
        double e = exp(x[2 * i + 1]) / (1.0 + exp(x[2 * i + 1]));
        worst = fmax(worst, fabs(y[2 * i + 1] - e) / e);
    }
    free(x);
    free(y);
    if (worst > 4e-7)
        print_error("worst relative error %g\n", worst);
    assert_true(worst <= 4e-7);
}

static void test_softmax_stable_and_special(void **state)
{
    (void)state;
    lt_tensor *t = LT_T(LT_F32, LT_DIMS(3), 1000, 0, -1000);
    LT_ASSERT_VALUES(lt_softmax(t, 0), 0, 1, 0, 0);
    LT_ASSERT_VALUES(lt_log_softmax(t, -1), 1e-7, 0, -1000, -2000);
    lt_tensor *cols = LT_T(LT_F64, LT_DIMS(3, 2), 1000, 1, 0, 1, -1000, 1);
    LT_ASSERT_VALUES(lt_log_softmax(cols, 0), 1e-12, 0, -log(3.0), -1000, -log(3.0), -2000, -log(3.0));
    /* non-finite rows behave as in torch: a NaN or +inf poisons the row,
     * an all -inf row is NaN, a -inf element alone gives 0 (log: -inf) */
    for (int k = 0; k < 2; k++) {
        lt_dtype dt = k == 0 ? LT_F32 : LT_F64;
        lt_tensor *rows = LT_T(dt, LT_DIMS(4, 2), INFINITY, 1, NAN, 1, -INFINITY, -INFINITY, -INFINITY, 0);
        LT_ASSERT_VALUES(lt_softmax(rows, 1), 0, NAN, NAN, NAN, NAN, NAN, NAN, 0, 1);
        LT_ASSERT_VALUES(lt_log_softmax(rows, 1), 0, NAN, NAN, NAN, NAN, NAN, NAN, -INFINITY, 0);
        LT_ASSERT_VALUES(lt_logsumexp(rows, (const int[]){1}, 1, false), 0, INFINITY, NAN, -INFINITY, 0);
        lt_tensor *cols = LT_T(dt, LT_DIMS(2, 4), INFINITY, NAN, -INFINITY, -INFINITY, 1, 1, -INFINITY, 0);
        LT_ASSERT_VALUES(lt_softmax(cols, 0), 0, NAN, NAN, NAN, 0, NAN, NAN, NAN, 1);
        LT_ASSERT_VALUES(lt_log_softmax(cols, 0), 0, NAN, NAN, NAN, -INFINITY, NAN, NAN, NAN, 0);
        LT_ASSERT_VALUES(lt_logsumexp(cols, (const int[]){0}, 1, false), 0, INFINITY, NAN, -INFINITY, 0);
    }
    /* 0-d input */
    lt_tensor *s = LT_OK_T(lt_scalar(3.0, LT_F32, lt_test_cpu()));
    lt_tensor *y = LT_OK_T(lt_softmax(s, 0));
    assert_int_equal(lt_tensor_ndim(y), 0);
    LT_ASSERT_VALUES(y, 0, 1);
    LT_ASSERT_VALUES(lt_log_softmax(s, -1), 0, 0);
    /* empty */
    lt_tensor *e = LT_OK_T(lt_zeros(LT_DIMS(0, 3), LT_F32, lt_test_cpu()));
    LT_ASSERT_SHAPE(lt_softmax(e, 0), 0, 3);
    LT_ASSERT_SHAPE(lt_log_softmax(e, 1), 0, 3);
}

/* ---- cumsum ------------------------------------------------------------- */

static void check_cumsum(lt_tensor *t, int dim, lt_dtype want, double tol)
{
    int ndim = lt_tensor_ndim(t);
    const int64_t *shape = lt_tensor_shape(t);
    int d = dim < 0 ? dim + (ndim > 0 ? ndim : 1) : dim;
    int64_t outer = 1, len = 1, inner = 1;
    for (int k = 0; k < ndim; k++) {
        if (k < d)
            outer *= shape[k];
        else if (k == d)
            len = shape[k];
        else
            inner *= shape[k];
    }
    int64_t n = outer * len * inner;
    double *x = lt_test_values(t);
    for (int64_t o = 0; o < outer; o++)
        for (int64_t j = 0; j < inner; j++)
            for (int64_t i = 1; i < len; i++)
                x[(o * len + i) * inner + j] += x[(o * len + i - 1) * inner + j];
    lt_tensor *y = LT_OK_T(lt_cumsum(t, dim));
    lt_test_assert_shape(y, shape, ndim, __FILE__, __LINE__);
    assert_int_equal(lt_tensor_dtype(y), want);
    LT_ASSERT_ARRAY(y, x, n, tol);
    free(x);
    checks_run++;
}

static void test_cumsum_values(void **state)
{
    (void)state;
    lt_tensor *t64 = LT_OK_T(gen_tensor(LT_DIMS(3, 4, 5), LT_F64));
    lt_tensor *base = LT_OK_T(gen_tensor(LT_DIMS(5, 4, 3), LT_F32));
    lt_tensor *tr = LT_OK_T(make_view(base, (const int64_t[]){3, 4, 5}, (const int64_t[]){1, 3, 12}, 3, 0));
    lt_tensor *i32 = LT_OK_T(int_tensor(LT_I32));
    lt_tensor *u8 = LT_OK_T(int_tensor(LT_U8));
    lt_tensor *b = LT_OK_T(int_tensor(LT_BOOL));
    lt_tensor *h = LT_OK_T(gen_tensor(LT_DIMS(3, 4, 5), LT_BF16));
    for (int dim = -3; dim < 3; dim++) {
        check_cumsum(t64, dim, LT_F64, 1e-13);
        check_cumsum(tr, dim, LT_F32, 1e-6);
        check_cumsum(i32, dim, LT_I64, 0);
        check_cumsum(u8, dim, LT_I64, 0);
        check_cumsum(b, dim, LT_I64, 0);
        check_cumsum(h, dim, LT_BF16, 2e-2);
    }
    lt_tensor *big = LT_OK_T(gen_tensor(LT_DIMS(300, 400), LT_F32));
    check_cumsum(big, 0, LT_F32, 1e-5);
    check_cumsum(big, 1, LT_F32, 1e-5);
    lt_tensor *s = LT_OK_T(lt_scalar(-2.0, LT_I32, lt_test_cpu()));
    lt_tensor *cs = LT_OK_T(lt_cumsum(s, 0));
    assert_int_equal(lt_tensor_ndim(cs), 0);
    assert_int_equal(lt_tensor_dtype(cs), LT_I64);
    LT_ASSERT_VALUES(cs, 0, -2);
    LT_ASSERT_SHAPE(lt_cumsum(LT_OK_T(lt_zeros(LT_DIMS(2, 0), LT_F32, lt_test_cpu())), 1), 2, 0);
}

/* ---- empty, size-1 and 0-d tensors -------------------------------------- */

static void test_empty_reductions(void **state)
{
    (void)state;
    lt_tensor *e = LT_OK_T(lt_zeros(LT_DIMS(2, 0, 3), LT_F32, lt_test_cpu()));
    const int d1[1] = {1}, d0[1] = {0};
    lt_tensor *r = LT_OK_T(lt_sum(e, d1, 1, false));
    LT_ASSERT_SHAPE(r, 2, 3);
    LT_ASSERT_VALUES(r, 0, 0, 0, 0, 0, 0, 0);
    LT_ASSERT_VALUES(lt_prod(e, d1, 1, false), 0, 1, 1, 1, 1, 1, 1);
    LT_ASSERT_VALUES(lt_mean(e, d1, 1, false), 0, NAN, NAN, NAN, NAN, NAN, NAN);
    LT_ASSERT_VALUES(lt_var(e, d1, 1, 1, false), 0, NAN, NAN, NAN, NAN, NAN, NAN);
    LT_ASSERT_VALUES(lt_logsumexp(e, d1, 1, false), 0, -INFINITY, -INFINITY, -INFINITY, -INFINITY, -INFINITY,
                     -INFINITY);
    LT_ASSERT_VALUES(lt_all(e, d1, 1, false), 0, 1, 1, 1, 1, 1, 1);
    LT_ASSERT_VALUES(lt_any(e, d1, 1, false), 0, 0, 0, 0, 0, 0, 0);
    LT_ASSERT_VALUES(lt_sum(e, NULL, 0, false), 0, 0);
    LT_ASSERT_VALUES(lt_sum(LT_OK_T(lt_zeros(LT_DIMS(0), LT_I32, lt_test_cpu())), NULL, 0, false), 0, 0);
    LT_ASSERT_SHAPE(lt_sum(e, d0, 1, true), 1, 0, 3);
    /* the output is empty but the reduced dim is not: fine */
    LT_ASSERT_SHAPE(lt_amax(e, d0, 1, false), 0, 3);
    LT_ASSERT_SHAPE(lt_argmax(e, 2, false), 2, 0);
    /* max-like reductions over an empty dim are errors */
    assert_null(lt_amax(e, d1, 1, false));
    LT_EXPECT_ERROR(LT_ERR_SHAPE, "amax: cannot reduce over dim 1 of size 0");
    assert_null(lt_amin(e, NULL, 0, false));
    LT_EXPECT_ERROR(LT_ERR_SHAPE, "amin: cannot reduce the empty tensor of shape [2, 0, 3]");
    assert_null(lt_argmax(e, 1, false));
    LT_EXPECT_ERROR(LT_ERR_SHAPE, "argmax");
    lt_tensor *idx = (lt_tensor *)1;
    assert_null(lt_max_dim(e, -2, false, &idx));
    assert_null(idx);
    LT_EXPECT_ERROR(LT_ERR_SHAPE, "max_dim");
    assert_null(lt_min_dim(e, 1, true, NULL));
    LT_EXPECT_ERROR(LT_ERR_SHAPE, "min_dim");
}

static void test_size_one_dims(void **state)
{
    (void)state;
    lt_tensor *t = LT_OK_T(gen_tensor(LT_DIMS(1, 5, 1), LT_F32));
    for (int s = 0; s < N_DIM_SETS; s++)
        for (int op = 0; op < R_NOPS; op++)
            if (!(is_one_dim_op(op) && dim_counts[s] != 1))
                check_op(op, t, dim_sets[s], dim_counts[s], s % 2 == 0, 1e-6);
    LT_ASSERT_VALUES(lt_argmax(t, 0, false), 0, 0, 0, 0, 0, 0);
    lt_tensor *r = LT_OK_T(lt_sum(t, (const int[]){0, 2}, 2, false));
    LT_ASSERT_SHAPE(r, 5);
    double expected[5] = {gen(0), gen(1), gen(2), gen(3), gen(4)};
    LT_ASSERT_ARRAY(r, expected, 5, 1e-6);
}

static void test_zero_dim(void **state)
{
    (void)state;
    lt_tensor *s = LT_OK_T(lt_scalar(4.5, LT_F64, lt_test_cpu()));
    lt_tensor *r = LT_OK_T(lt_sum(s, NULL, 0, false));
    assert_int_equal(lt_tensor_ndim(r), 0);
    LT_ASSERT_VALUES(r, 0, 4.5);
    r = LT_OK_T(lt_sum(s, (const int[]){-1}, 1, true));
    assert_int_equal(lt_tensor_ndim(r), 0);
    LT_ASSERT_VALUES(r, 0, 4.5);
    LT_ASSERT_VALUES(lt_mean(s, (const int[]){0}, 1, false), 0, 4.5);
    LT_ASSERT_VALUES(lt_amin(s, NULL, 0, false), 0, 4.5);
    LT_ASSERT_VALUES(lt_var(s, NULL, 0, 0, false), 0, 0);
    LT_ASSERT_VALUES(lt_std(s, NULL, 0, 1, false), 0, NAN);
    LT_ASSERT_VALUES(lt_logsumexp(s, NULL, 0, false), 1e-15, 4.5);
    LT_ASSERT_VALUES(lt_argmax(s, 0, false), 0, 0);
    lt_tensor *idx = NULL;
    LT_ASSERT_VALUES(lt_max_dim(s, -1, false, &idx), 0, 4.5);
    assert_int_equal(lt_tensor_ndim(idx), 0);
    LT_ASSERT_VALUES(idx, 0, 0);
    LT_ASSERT_VALUES(lt_cumsum(s, 0), 0, 4.5);
    LT_ASSERT_VALUES(lt_any(s, NULL, 0, false), 0, 1);
    assert_null(lt_sum(s, (const int[]){1}, 1, false));
    LT_EXPECT_ERROR(LT_ERR_INDEX, "sum: dim 1 out of range for a 0-d tensor");
    assert_null(lt_sum(s, (const int[]){0, -1}, 2, false));
    LT_EXPECT_ERROR(LT_ERR_ARGUMENT, "appears more than once");
}

/* ---- accuracy and large (parallel) shapes ------------------------------- */

static void test_large_sum_accuracy(void **state)
{
    (void)state;
    int64_t n = 1 << 20;
    float *v = malloc(sizeof(float) * (size_t)n);
    double ref = 0, ref_sq = 0;
    for (int64_t i = 0; i < n; i++) {
        v[i] = (float)(1.0 + 0.5 * sin((double)i * 0.37));
        ref += v[i];
    }
    double mean = ref / (double)n;
    for (int64_t i = 0; i < n; i++)
        ref_sq += (v[i] - mean) * (v[i] - mean);
    lt_tensor *t = LT_OK_T(lt_from_data(v, &n, 1, LT_F32, lt_test_cpu()));
    double got = 0;
    assert_int_equal(lt_item(lt_sum(t, NULL, 0, false), &got), LT_OK);
    assert_true(fabs(got - ref) <= 1e-6 * fabs(ref));
    assert_int_equal(lt_item(lt_mean(t, NULL, 0, false), &got), LT_OK);
    assert_true(fabs(got - mean) <= 1e-6 * fabs(mean));
    assert_int_equal(lt_item(lt_var(t, NULL, 0, 1, false), &got), LT_OK);
    assert_true(fabs(got - ref_sq / (double)(n - 1)) <= 1e-6 * (ref_sq / (double)n));
    /* the same values as [1024, 1024]: rows and columns */
    lt_tensor *m = LT_OK_T(lt_from_data(v, LT_DIMS(1024, 1024), LT_F32, lt_test_cpu()));
    double *rows = calloc(1024, sizeof(double)), *cols = calloc(1024, sizeof(double));
    for (int64_t i = 0; i < 1024; i++)
        for (int64_t j = 0; j < 1024; j++) {
            rows[i] += v[i * 1024 + j];
            cols[j] += v[i * 1024 + j];
        }
    LT_ASSERT_ARRAY(lt_sum(m, (const int[]){1}, 1, false), rows, 1024, 1e-7);
    LT_ASSERT_ARRAY(lt_sum(m, (const int[]){0}, 1, false), cols, 1024, 1e-7);
    free(rows);
    free(cols);
    free(v);
}

static void test_large_shapes_match_reference(void **state)
{
    (void)state;
    /* bias-gradient shape: [4096, 37] over dim 0 (column loops, chunked) */
    lt_tensor *a = LT_OK_T(gen_tensor(LT_DIMS(4096, 37), LT_F64));
    double *x = lt_test_values(a);
    double ref[4096];
    bool m0[2] = {true, false}, m1[2] = {false, true};
    const int ops[] = {R_SUM, R_AMAX, R_ARGMIN, R_VAR1, R_LSE};
    for (size_t k = 0; k < sizeof ops / sizeof ops[0]; k++) {
        int64_t no = ref_reduce(ops[k], x, (const int64_t[]){4096, 37}, 2, m0, ref);
        LT_ASSERT_ARRAY(call_op(ops[k], a, (const int[]){0}, 1, false), ref, no, 1e-12);
        no = ref_reduce(ops[k], x, (const int64_t[]){4096, 37}, 2, m1, ref);
        LT_ASSERT_ARRAY(call_op(ops[k], a, (const int[]){1}, 1, false), ref, no, 1e-12);
    }
    free(x);
    /* narrow dense columns: [20000, 3] and [7, 5] over dim 0 */
    const int64_t narrow_shapes[2][2] = {{20000, 3}, {7, 5}};
    const int narrow_ops[] = {R_SUM, R_MEAN, R_VAR1, R_LSE, R_AMIN, R_AMAX, R_ARGMAX};
    for (int k = 0; k < 2; k++) {
        /* columns with different means, so that each column's mean matters */
        int64_t numel = narrow_shapes[k][0] * narrow_shapes[k][1];
        x = malloc(sizeof(double) * (size_t)numel);
        for (int64_t i = 0; i < numel; i++)
            x[i] = gen(i) + 5.0 * (double)(i % narrow_shapes[k][1]);
        lt_tensor *nt = LT_OK_T(lt_test_tensor(x, narrow_shapes[k], 2, LT_F32));
        free(x);
        x = lt_test_values(nt);
        for (size_t j = 0; j < sizeof narrow_ops / sizeof narrow_ops[0]; j++) {
            int64_t no = ref_reduce(narrow_ops[j], x, narrow_shapes[k], 2, m0, ref);
            LT_ASSERT_ARRAY(call_op(narrow_ops[j], nt, (const int[]){0}, 1, false), ref, no, 1e-6);
        }
        free(x);
    }
    /* a transposed [600, 500] (column loops with a strided column) */
    lt_tensor *base = LT_OK_T(gen_tensor(LT_DIMS(500, 600), LT_F32));
    lt_tensor *tr = LT_OK_T(make_view(base, (const int64_t[]){600, 500}, (const int64_t[]){1, 600}, 2, 0));
    x = lt_test_values(tr);
    double *big = malloc(sizeof(double) * 600);
    int64_t no = ref_reduce(R_SUM, x, (const int64_t[]){600, 500}, 2, m1, big);
    LT_ASSERT_ARRAY(lt_sum(tr, (const int[]){1}, 1, false), big, no, 1e-6);
    no = ref_reduce(R_ARGMAX, x, (const int64_t[]){600, 500}, 2, m0, big);
    LT_ASSERT_ARRAY(lt_argmax(tr, 0, false), big, no, 0);
    free(big);
    free(x);
}

/* ---- bad input ---------------------------------------------------------- */

static void test_bad_input(void **state)
{
    (void)state;
    lt_tensor *t = LT_OK_T(gen_tensor(LT_DIMS(3, 4, 5), LT_F32));
    lt_tensor *ti = LT_OK_T(int_tensor(LT_I32));
    assert_null(lt_sum(t, (const int[]){3}, 1, false));
    LT_EXPECT_ERROR(LT_ERR_INDEX, "sum: dim 3 out of range for a 3-d tensor");
    assert_null(lt_mean(t, (const int[]){0, -4}, 2, false));
    LT_EXPECT_ERROR(LT_ERR_INDEX, "mean: dim -4 out of range for a 3-d tensor");
    assert_null(lt_argmax(t, 5, false));
    LT_EXPECT_ERROR(LT_ERR_INDEX, "argmax: dim 5 out of range for a 3-d tensor");
    lt_tensor *idx = (lt_tensor *)1;
    assert_null(lt_max_dim(t, -4, false, &idx));
    assert_null(idx);
    LT_EXPECT_ERROR(LT_ERR_INDEX, "max_dim: dim -4");
    assert_null(lt_softmax(t, 3));
    LT_EXPECT_ERROR(LT_ERR_INDEX, "softmax: dim 3 out of range for a 3-d tensor");
    assert_null(lt_cumsum(t, -4));
    LT_EXPECT_ERROR(LT_ERR_INDEX, "cumsum: dim -4");
    assert_null(lt_sum(t, (const int[]){1, -2}, 2, false));
    LT_EXPECT_ERROR(LT_ERR_ARGUMENT, "sum: dim 1 appears more than once");
    assert_null(lt_var(t, (const int[]){2, 0, 2}, 3, 1, false));
    LT_EXPECT_ERROR(LT_ERR_ARGUMENT, "var: dim 2 appears more than once");
    /* floating-only ops */
    assert_null(lt_mean(ti, NULL, 0, false));
    LT_EXPECT_ERROR(LT_ERR_DTYPE, "mean: input dtype i32 is not supported");
    assert_null(lt_var(ti, NULL, 0, 1, false));
    LT_EXPECT_ERROR(LT_ERR_DTYPE, "var: input dtype i32");
    assert_null(lt_std(int_tensor(LT_BOOL), NULL, 0, 1, false));
    LT_EXPECT_ERROR(LT_ERR_DTYPE, "std: input dtype bool");
    assert_null(lt_softmax(ti, 0));
    LT_EXPECT_ERROR(LT_ERR_DTYPE, "softmax: input dtype i32");
    assert_null(lt_log_softmax(int_tensor(LT_I64), 0));
    LT_EXPECT_ERROR(LT_ERR_DTYPE, "log_softmax: input dtype i64");
    /* arguments */
    assert_null(lt_sum(NULL, NULL, 0, false));
    LT_EXPECT_ERROR(LT_ERR_NULL, "sum");
    assert_null(lt_softmax(NULL, 0));
    LT_EXPECT_ERROR(LT_ERR_NULL, "softmax");
    assert_null(lt_sum(t, NULL, 2, false));
    LT_EXPECT_ERROR(LT_ERR_NULL, "sum: dims is NULL but ndims is 2");
    assert_null(lt_amax(t, (const int[]){0}, -1, false));
    LT_EXPECT_ERROR(LT_ERR_ARGUMENT, "amax: ndims is -1");
    assert_null(lt_prod(t, (const int[]){0, 1, 2, 0, 1, 2, 0, 1, 2}, 9, false));
    LT_EXPECT_ERROR(LT_ERR_ARGUMENT, "prod: ndims is 9");
    /* a failed input propagates the first error */
    assert_null(lt_sum(lt_mean(ti, NULL, 0, false), NULL, 0, false));
    LT_EXPECT_ERROR(LT_ERR_DTYPE, "mean");
    /* released handle */
    lt_scope_begin();
    lt_tensor *dead = LT_OK_T(lt_ones(LT_DIMS(2), LT_F32, lt_test_cpu()));
    lt_scope_end();
    assert_null(lt_sum(dead, NULL, 0, false));
    LT_EXPECT_ERROR(LT_ERR_RELEASED, "sum: argument 0 was used after");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        LT_TEST(test_float_ops_contiguous),
        LT_TEST(test_prod_values),
        LT_TEST(test_transposed_input),
        LT_TEST(test_sliced_input),
        LT_TEST(test_expanded_input),
        LT_TEST(test_public_views),
        LT_TEST(test_half_dtypes),
        LT_TEST(test_int_and_bool_dtypes),
        LT_TEST(test_int64_exact),
        LT_TEST(test_all_any_values),
        LT_TEST(test_max_dim_indices_ties_nan),
        LT_TEST(test_argmax_long_rows),
        LT_TEST(test_nan_propagation),
        LT_TEST(test_extrema_of_infinite_lines),
        LT_TEST(test_var_std_correction),
        LT_TEST(test_logsumexp_stable),
        LT_TEST(test_softmax_values),
        LT_TEST(test_softmax_f32_relative_accuracy),
        LT_TEST(test_softmax_stable_and_special),
        LT_TEST(test_cumsum_values),
        LT_TEST(test_empty_reductions),
        LT_TEST(test_size_one_dims),
        LT_TEST(test_zero_dim),
        LT_TEST(test_large_sum_accuracy),
        LT_TEST(test_large_shapes_match_reference),
        LT_TEST(test_bad_input),
    };
    int failed = cmocka_run_group_tests(tests, NULL, NULL);
    printf("reduce: %d value checks\n", checks_run);
    return failed;
}
