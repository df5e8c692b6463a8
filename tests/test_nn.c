/* test_nn.c - matmul, conv2d, max_pool2d and avg_pool2d against plain
 * double-precision reference loops written here, plus bad-input checks. */
#include "lt_test.h"

#include "eager/eager.h" /* white-box: kernels writing into strided outputs */

/* ---- test data ---------------------------------------------------------- */

static uint64_t lcg_state;

static uint64_t lcg_next(void)
{
    lcg_state = lcg_state * 6364136223846793005ull + 1442695040888963407ull;
    return lcg_state >> 33;
}

/* A tensor of dtype dt with reproducible values: small integers for
 * integer dtypes, values in [-2, 2] (multiples of 1/500) for floats. */
static lt_tensor *make_tensor(lt_dtype dt, const int64_t *dims, int ndim, uint64_t seed)
{
    lcg_state = seed * 7919 + 17;
    int64_t n = 1;
    for (int i = 0; i < ndim; i++)
        n *= dims[i];
    double *v = malloc(sizeof(double) * (size_t)(n > 0 ? n : 1));
    for (int64_t i = 0; i < n; i++) {
        if (dt == LT_U8)
            v[i] = (double)(lcg_next() % 6);
        else if (!lt_dtype_is_floating(dt))
            v[i] = (double)(lcg_next() % 11) - 5.0;
        else
            v[i] = ((double)(lcg_next() % 2001) - 1000.0) / 500.0;
    }
    lt_tensor *t = lt_test_tensor(v, dims, ndim, dt);
    free(v);
    return t;
}
#define MAKE(dt, seed, ...) \
    LT_OK_T(make_tensor((dt), (const int64_t[]){__VA_ARGS__}, \
                        (int)(sizeof((const int64_t[]){__VA_ARGS__}) / sizeof(int64_t)), (seed)))

/* Unravels flat index i of shape into idx. */
static void unravel(int64_t i, const int64_t *shape, int nd, int64_t *idx)
{
    for (int d = nd - 1; d >= 0; d--) {
        idx[d] = i % shape[d];
        i /= shape[d];
    }
}

/* ---- matmul reference ---------------------------------------------------- */

/*
 * torch.matmul in double: a (shape as, na dims) times b. Writes the result
 * shape to out_shape/out_nd and returns the malloc'd values.
 */
static double *matmul_ref(const double *a, const int64_t *as, int na, const double *b, const int64_t *bs,
                          int nb, int64_t *out_shape, int *out_nd)
{
    int64_t m = na == 1 ? 1 : as[na - 2], k = as[na - 1];
    int64_t n = nb == 1 ? 1 : bs[nb - 1];
    int ba = na > 2 ? na - 2 : 0, bb = nb > 2 ? nb - 2 : 0;
    int nbat = ba > bb ? ba : bb;
    int64_t bshape[8], count = 1;
    for (int d = 0; d < nbat; d++) {
        int da = d - (nbat - ba), db = d - (nbat - bb);
        int64_t sa = da >= 0 ? as[da] : 1, sb = db >= 0 ? bs[db] : 1;
        bshape[d] = sa == 1 ? sb : sa;
        count *= bshape[d];
    }
    double *out = malloc(sizeof(double) * (size_t)(count * m * n > 0 ? count * m * n : 1));
    for (int64_t t = 0; t < count; t++) {
        int64_t idx[8];
        unravel(t, bshape, nbat, idx);
        int64_t ia = 0, ib = 0; /* flat batch index into a and b */
        for (int d = 0; d < nbat; d++) {
            int da = d - (nbat - ba), db = d - (nbat - bb);
            if (da >= 0)
                ia = ia * as[da] + (as[da] == 1 ? 0 : idx[d]);
            if (db >= 0)
                ib = ib * bs[db] + (bs[db] == 1 ? 0 : idx[d]);
        }
        for (int64_t i = 0; i < m; i++) {
            for (int64_t j = 0; j < n; j++) {
                double s = 0;
                for (int64_t p = 0; p < k; p++)
                    s += a[ia * m * k + i * k + p] * b[ib * k * n + p * n + j];
                out[(t * m + i) * n + j] = s;
            }
        }
    }
    int nd = 0;
    for (int d = 0; d < nbat; d++)
        out_shape[nd++] = bshape[d];
    if (na > 1)
        out_shape[nd++] = m;
    if (nb > 1)
        out_shape[nd++] = n;
    *out_nd = nd;
    return out;
}

/* Checks lt_matmul(a, b) against the reference, its dtype too. */
#define CHECK_MATMUL(a, b, dt, tol) check_matmul((a), (b), (dt), (tol), __FILE__, __LINE__)
static void check_matmul(lt_tensor *a, lt_tensor *b, lt_dtype expect_dt, double tol, const char *file,
                         int line)
{
    lt_tensor *c = lt_matmul(a, b);
    if (!c) {
        print_error("%s:%d: matmul failed: %s\n", file, line, lt_last_error());
        _fail(file, line);
    }
    if (lt_tensor_dtype(c) != expect_dt) {
        print_error("%s:%d: dtype %s, expected %s\n", file, line, lt_dtype_name(lt_tensor_dtype(c)),
                    lt_dtype_name(expect_dt));
        _fail(file, line);
    }
    double *av = lt_test_values(a), *bv = lt_test_values(b);
    int64_t shape[8];
    int nd;
    double *ref = matmul_ref(av, lt_tensor_shape(a), lt_tensor_ndim(a), bv, lt_tensor_shape(b),
                             lt_tensor_ndim(b), shape, &nd);
    free(av);
    free(bv);
    lt_test_assert_shape(c, shape, nd, file, line);
    lt_test_assert_values(c, ref, lt_tensor_numel(c), tol, file, line);
    free(ref);
}

static void test_matmul_shape_cases(void **state)
{
    (void)state;
    for (int f = 0; f < 2; f++) {
        lt_dtype dt = f ? LT_F64 : LT_F32;
        double tol = f ? 1e-12 : 1e-5;
        lt_tensor *dot = LT_OK_T(lt_matmul(MAKE(dt, 1, 5), MAKE(dt, 2, 5)));
        assert_int_equal(lt_tensor_ndim(dot), 0);
        CHECK_MATMUL(MAKE(dt, 1, 5), MAKE(dt, 2, 5), dt, tol);           /* 1-D . 1-D */
        CHECK_MATMUL(MAKE(dt, 3, 3), MAKE(dt, 4, 3, 4), dt, tol);        /* 1-D x 2-D */
        CHECK_MATMUL(MAKE(dt, 5, 4, 3), MAKE(dt, 6, 3), dt, tol);        /* 2-D x 1-D */
        CHECK_MATMUL(MAKE(dt, 7, 5, 7), MAKE(dt, 8, 7, 3), dt, tol);     /* 2-D x 2-D */
        CHECK_MATMUL(MAKE(dt, 9, 2, 3, 4), MAKE(dt, 10, 2, 4, 5), dt, tol); /* batched */
        CHECK_MATMUL(MAKE(dt, 11, 3, 4, 5), MAKE(dt, 12, 5, 2), dt, tol);   /* folded batch */
        CHECK_MATMUL(MAKE(dt, 13, 2, 1, 3, 4), MAKE(dt, 14, 3, 4, 2), dt, tol); /* broadcast batch */
        CHECK_MATMUL(MAKE(dt, 15, 4), MAKE(dt, 16, 2, 4, 3), dt, tol);   /* 1-D x 3-D */
        CHECK_MATMUL(MAKE(dt, 17, 2, 3, 4), MAKE(dt, 18, 4), dt, tol);   /* 3-D x 1-D */
        CHECK_MATMUL(MAKE(dt, 19, 1, 3, 4), MAKE(dt, 20, 2, 4, 3), dt, tol); /* size-1 batch of A */
        CHECK_MATMUL(MAKE(dt, 21, 4, 1, 2), MAKE(dt, 22, 2, 3), dt, tol);    /* M = 1 rows, folded */
        CHECK_MATMUL(MAKE(dt, 23, 1, 1), MAKE(dt, 24, 1, 1), dt, tol);
    }
    /* shape only: [2,1,M,K] x [3,K,N] -> [2,3,M,N] */
    LT_ASSERT_SHAPE(lt_matmul(MAKE(LT_F32, 1, 2, 1, 5, 6), MAKE(LT_F32, 2, 3, 6, 7)), 2, 3, 5, 7);
}

/* A hand-checked product (values verified with torch.matmul). */
static void test_matmul_known_values(void **state)
{
    (void)state;
    lt_tensor *a = LT_T(LT_F32, LT_DIMS(2, 3), 1, 2, 3, 4, 5, 6);
    lt_tensor *b = LT_T(LT_F32, LT_DIMS(3, 2), 7, 8, 9, 10, 11, 12);
    LT_ASSERT_VALUES(lt_matmul(a, b), 0, 58, 64, 139, 154);
    LT_ASSERT_VALUES(lt_matmul(LT_T(LT_I64, LT_DIMS(3), 1, 2, 3), LT_T(LT_I64, LT_DIMS(3), 4, 5, 6)), 0, 32);
}

/* Batched products of the kind attention uses, one gemm per item: q k^T
 * and p v on column slices of a packed [B, T, 3 * D] projection, every
 * transposition, both dtypes, 1 x 1 items and items over 128. */
static void test_matmul_batched_items(void **state)
{
    (void)state;
    for (int f = 0; f < 2; f++) {
        lt_dtype dt = f ? LT_F64 : LT_F32;
        double tol = f ? 1e-12 : 1e-5;
        lt_tensor *qkv = MAKE(dt, 1, 4, 16, 24); /* [B, T, 3 * D], D = 8 */
        lt_tensor *q = LT_OK_T(lt_narrow(qkv, 2, 0, 8)), *k = LT_OK_T(lt_narrow(qkv, 2, 8, 8));
        lt_tensor *v = LT_OK_T(lt_narrow(qkv, 2, 16, 8));
        lt_tensor *kt = LT_OK_T(lt_transpose(k, 1, 2));
        CHECK_MATMUL(q, kt, dt, tol);                                       /* B transposed */
        lt_tensor *p = MAKE(dt, 2, 4, 16, 16);
        CHECK_MATMUL(p, v, dt, tol);                                        /* plain, leading dim 24 */
        CHECK_MATMUL(LT_OK_T(lt_transpose(p, 1, 2)), v, dt, tol);           /* A transposed */
        CHECK_MATMUL(LT_OK_T(lt_transpose(p, 1, 2)), LT_OK_T(lt_transpose(MAKE(dt, 3, 4, 8, 16), 1, 2)), dt,
                     tol);                                                  /* both */
        CHECK_MATMUL(MAKE(dt, 4, 2, 3, 64, 32), MAKE(dt, 5, 2, 3, 32, 64), dt, tol); /* two batch dims */
        CHECK_MATMUL(MAKE(dt, 6, 3, 1, 1), MAKE(dt, 7, 3, 1, 5), dt, tol);  /* 1 x 1 items */
        CHECK_MATMUL(MAKE(dt, 8, 2, 129, 3), LT_OK_T(lt_transpose(MAKE(dt, 9, 2, 7, 3), 1, 2)), dt, tol);
        CHECK_MATMUL(MAKE(dt, 10, 2, 5, 130), MAKE(dt, 11, 2, 130, 4), dt, tol);
    }
}

static void test_matmul_strided_operands(void **state)
{
    (void)state;
    for (int f = 0; f < 2; f++) {
        lt_dtype dt = f ? LT_F64 : LT_F32;
        double tol = f ? 1e-12 : 1e-5;
        lt_tensor *at = LT_OK_T(lt_transpose(MAKE(dt, 1, 6, 5), 0, 1)); /* [5, 6] column-major */
        lt_tensor *bt = LT_OK_T(lt_transpose(MAKE(dt, 2, 4, 6), 0, 1)); /* [6, 4] column-major */
        CHECK_MATMUL(at, MAKE(dt, 3, 6, 4), dt, tol);
        CHECK_MATMUL(MAKE(dt, 4, 5, 6), bt, dt, tol);
        CHECK_MATMUL(at, bt, dt, tol);
        /* batched transposes: [2, K, M] -> [2, M, K] */
        lt_tensor *abt = LT_OK_T(lt_transpose(MAKE(dt, 5, 2, 6, 5), 1, 2));
        lt_tensor *bbt = LT_OK_T(lt_transpose(MAKE(dt, 6, 2, 4, 6), 1, 2));
        CHECK_MATMUL(abt, bbt, dt, tol);
        CHECK_MATMUL(abt, MAKE(dt, 7, 6, 3), dt, tol); /* cannot fold: loops */
        /* rows with padding (leading dim > cols): narrow the last dim */
        lt_tensor *wide = LT_OK_T(lt_narrow(MAKE(dt, 8, 5, 9), 1, 2, 6));
        CHECK_MATMUL(wide, MAKE(dt, 9, 6, 3), dt, tol);
        lt_tensor *wide3 = LT_OK_T(lt_narrow(MAKE(dt, 10, 3, 4, 9), 2, 1, 6));
        CHECK_MATMUL(wide3, MAKE(dt, 11, 6, 2), dt, tol);
        /* a stepped slice has no unit stride: copied first */
        lt_tensor *stepped = LT_OK_T(lt_slice(MAKE(dt, 12, 4, 12), 1, 0, 12, 2));
        CHECK_MATMUL(stepped, MAKE(dt, 13, 6, 2), dt, tol);
        CHECK_MATMUL(MAKE(dt, 14, 3, 4), LT_OK_T(lt_slice(MAKE(dt, 15, 4, 10), 1, 1, 10, 3)), dt, tol);
        /* strided 1-D operands */
        lt_tensor *v = LT_OK_T(lt_slice(MAKE(dt, 16, 12), 0, 0, 12, 2));
        CHECK_MATMUL(v, MAKE(dt, 17, 6, 3), dt, tol);
        CHECK_MATMUL(MAKE(dt, 18, 3, 6), v, dt, tol);
        CHECK_MATMUL(v, v, dt, tol);
        /* expanded batch (stride 0) and expanded inner dim */
        lt_tensor *eb = LT_OK_T(lt_expand(MAKE(dt, 19, 1, 3, 4), (int64_t[]){3, 3, 4}, 3));
        CHECK_MATMUL(eb, MAKE(dt, 20, 3, 4, 2), dt, tol);
        CHECK_MATMUL(MAKE(dt, 21, 3, 2, 3), eb, dt, tol);
        lt_tensor *ecol = LT_OK_T(lt_expand(MAKE(dt, 22, 3, 1), (int64_t[]){3, 5}, 2));
        CHECK_MATMUL(ecol, MAKE(dt, 23, 5, 2), dt, tol);
        CHECK_MATMUL(MAKE(dt, 24, 2, 3), ecol, dt, tol);
        /* a 0-stride batch of a folded A */
        lt_tensor *ea = LT_OK_T(lt_expand(MAKE(dt, 25, 1, 3, 4), (int64_t[]){2, 3, 4}, 3));
        CHECK_MATMUL(ea, MAKE(dt, 26, 4, 5), dt, tol);
    }
}

static void test_matmul_size_zero(void **state)
{
    (void)state;
    lt_tensor *c = LT_OK_T(lt_matmul(MAKE(LT_F32, 1, 0, 3), MAKE(LT_F32, 2, 3, 4)));
    LT_ASSERT_SHAPE(c, 0, 4);
    c = LT_OK_T(lt_matmul(MAKE(LT_F32, 1, 3, 0), MAKE(LT_F32, 2, 0, 4)));
    LT_ASSERT_SHAPE(c, 3, 4);
    LT_ASSERT_VALUES(c, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0);
    c = LT_OK_T(lt_matmul(MAKE(LT_I32, 1, 0), MAKE(LT_I32, 2, 0)));
    assert_int_equal(lt_tensor_ndim(c), 0);
    LT_ASSERT_VALUES(c, 0, 0);
    LT_ASSERT_SHAPE(lt_matmul(MAKE(LT_F64, 1, 3, 4), MAKE(LT_F64, 2, 4, 0)), 3, 0);
    LT_ASSERT_SHAPE(lt_matmul(MAKE(LT_F32, 1, 0, 2, 3), MAKE(LT_F32, 2, 3, 4)), 0, 2, 4);
    LT_ASSERT_SHAPE(lt_matmul(MAKE(LT_F32, 1, 2, 1, 1, 3), MAKE(LT_F32, 2, 0, 3, 4)), 2, 0, 1, 4);
    CHECK_MATMUL(MAKE(LT_BF16, 1, 2, 0), MAKE(LT_BF16, 2, 0, 3), LT_BF16, 0);
}

static void test_matmul_dtypes(void **state)
{
    (void)state;
    static const lt_dtype ints[] = {LT_I32, LT_I64, LT_U8};
    for (size_t i = 0; i < sizeof ints / sizeof ints[0]; i++) {
        lt_dtype dt = ints[i];
        CHECK_MATMUL(MAKE(dt, 1, 4, 3), MAKE(dt, 2, 3, 5), dt, 0);
        CHECK_MATMUL(MAKE(dt, 3, 2, 3, 4), MAKE(dt, 4, 4), dt, 0);
        CHECK_MATMUL(MAKE(dt, 5, 4), MAKE(dt, 6, 4), dt, 0);
        CHECK_MATMUL(LT_OK_T(lt_transpose(MAKE(dt, 7, 3, 2, 4), 1, 2)), MAKE(dt, 8, 3, 2, 3), dt, 0);
        CHECK_MATMUL(MAKE(dt, 9, 2, 1, 2, 3), MAKE(dt, 10, 3, 3, 2), dt, 0);
    }
    static const lt_dtype halves[] = {LT_BF16, LT_F16};
    for (size_t i = 0; i < 2; i++) {
        lt_dtype dt = halves[i];
        double tol = dt == LT_BF16 ? 1e-2 : 2e-3;
        CHECK_MATMUL(MAKE(dt, 1, 4, 7), MAKE(dt, 2, 7, 3), dt, tol);
        CHECK_MATMUL(MAKE(dt, 3, 2, 3, 7), LT_OK_T(lt_transpose(MAKE(dt, 4, 5, 7), 0, 1)), dt, tol);
        CHECK_MATMUL(MAKE(dt, 5, 7), MAKE(dt, 6, 7), dt, tol);
    }
    /* mixed dtypes promote */
    CHECK_MATMUL(MAKE(LT_I32, 1, 3, 4), MAKE(LT_F32, 2, 4, 2), LT_F32, 1e-5);
    CHECK_MATMUL(MAKE(LT_F32, 1, 3, 4), MAKE(LT_F64, 2, 4, 2), LT_F64, 1e-6);
    CHECK_MATMUL(MAKE(LT_BF16, 1, 3, 4), MAKE(LT_F16, 2, 4, 2), LT_F32, 1e-5);
    CHECK_MATMUL(MAKE(LT_U8, 1, 3, 4), MAKE(LT_I64, 2, 4, 2), LT_I64, 0);
}

/* Integer products wrap modulo 2^64 (and the i32 result modulo 2^32),
 * like PyTorch, without undefined behaviour. */
static void test_matmul_integer_wraparound(void **state)
{
    (void)state;
    int64_t big[2] = {(int64_t)1 << 62, (int64_t)1 << 62};
    int64_t four[2] = {4, 1};
    lt_tensor *a = LT_OK_T(lt_from_data(big, (int64_t[]){2}, 1, LT_I64, lt_test_cpu()));
    lt_tensor *b = LT_OK_T(lt_from_data(four, (int64_t[]){2}, 1, LT_I64, lt_test_cpu()));
    int64_t v = 0;
    /* 2^64 + 2^62 wraps to 2^62 */
    assert_int_equal(lt_item_int(LT_OK_T(lt_matmul(a, b)), &v), LT_OK);
    assert_true(v == (int64_t)1 << 62);
    /* same through a [1, 2] x [2, 2] product */
    int64_t bm[4] = {4, 4, 1, 0};
    lt_tensor *b2 = LT_OK_T(lt_from_data(bm, (int64_t[]){2, 2}, 2, LT_I64, lt_test_cpu()));
    lt_tensor *r = LT_OK_T(lt_matmul(a, b2));
    int64_t got[2];
    assert_int_equal(lt_copy_to_host(r, got, sizeof got), LT_OK);
    assert_true(got[0] == (int64_t)1 << 62);
    assert_true(got[1] == 0);
    int32_t x[2] = {65536, 3};
    lt_tensor *c = LT_OK_T(lt_from_data(x, (int64_t[]){1, 2}, 2, LT_I32, lt_test_cpu()));
    lt_tensor *d = LT_OK_T(lt_from_data(x, (int64_t[]){2, 1}, 2, LT_I32, lt_test_cpu()));
    assert_int_equal(lt_item_int(LT_OK_T(lt_matmul(c, d)), &v), LT_OK);
    assert_int_equal(v, 9); /* 2^32 + 9 modulo 2^32 */
    uint8_t u[2] = {16, 1};
    lt_tensor *e = LT_OK_T(lt_from_data(u, (int64_t[]){2}, 1, LT_U8, lt_test_cpu()));
    assert_int_equal(lt_item_int(LT_OK_T(lt_matmul(e, e)), &v), LT_OK);
    assert_int_equal(v, 1); /* 257 modulo 256 */
}

/* Sizes large enough for BLAS threads and the parallel integer loop. */
static void test_matmul_large(void **state)
{
    (void)state;
    CHECK_MATMUL(MAKE(LT_F32, 1, 70, 130), MAKE(LT_F32, 2, 130, 90), LT_F32, 1e-4);
    CHECK_MATMUL(MAKE(LT_F64, 3, 6, 40, 50), MAKE(LT_F64, 4, 50, 30), LT_F64, 1e-11);
    CHECK_MATMUL(MAKE(LT_I64, 5, 4, 40, 50), MAKE(LT_I64, 6, 4, 50, 30), LT_I64, 0);
}

static void test_matmul_bad_inputs(void **state)
{
    (void)state;
    assert_null(lt_matmul(MAKE(LT_F32, 1, 2, 3), MAKE(LT_F32, 2, 4, 5)));
    LT_EXPECT_ERROR(LT_ERR_SHAPE, "matmul: shapes [2, 3] and [4, 5] cannot be multiplied");
    assert_null(lt_matmul(MAKE(LT_F32, 1, 3), MAKE(LT_F32, 2, 4)));
    LT_EXPECT_ERROR(LT_ERR_SHAPE, "[3] and [4]");
    assert_null(lt_matmul(MAKE(LT_F32, 1, 2, 3, 4), MAKE(LT_F32, 2, 3, 4, 5)));
    LT_EXPECT_ERROR(LT_ERR_SHAPE, "batch dims of shapes [2, 3, 4] and [3, 4, 5] are not broadcastable");
    assert_null(lt_matmul(LT_OK_T(lt_scalar(2, LT_F32, lt_test_cpu())), MAKE(LT_F32, 2, 4)));
    LT_EXPECT_ERROR(LT_ERR_SHAPE, "at least 1 dim");
    lt_tensor *bools = LT_OK_T(lt_ones((int64_t[]){2, 2}, 2, LT_BOOL, lt_test_cpu()));
    assert_null(lt_matmul(bools, bools));
    LT_EXPECT_ERROR(LT_ERR_DTYPE, "matmul: bool");
    assert_null(lt_matmul(NULL, MAKE(LT_F32, 2, 4)));
    LT_EXPECT_ERROR(LT_ERR_NULL, "matmul: argument 0 is NULL");
    assert_null(lt_matmul(MAKE(LT_F32, 2, 4), NULL));
    LT_EXPECT_ERROR(LT_ERR_NULL, "argument 1");
}

/* ---- conv2d reference ---------------------------------------------------- */

typedef struct conv_case {
    int64_t n, c, h, w, o, kh, kw;
    int64_t stride[2], pad[2], dil[2], groups;
    bool bias;
} conv_case;

/* Direct convolution in double; returns malloc'd [n, o, ho, wo] values. */
static double *conv_ref(const double *x, const double *w, const double *bias, const conv_case *k, int64_t ho,
                        int64_t wo)
{
    int64_t cg = k->c / k->groups, og = k->o / k->groups;
    int64_t total = k->n * k->o * ho * wo;
    double *y = malloc(sizeof(double) * (size_t)(total > 0 ? total : 1));
    for (int64_t n = 0; n < k->n; n++)
        for (int64_t o = 0; o < k->o; o++)
            for (int64_t i = 0; i < ho; i++)
                for (int64_t j = 0; j < wo; j++) {
                    double s = bias ? bias[o] : 0;
                    int64_t g = o / og;
                    for (int64_t c = 0; c < cg; c++)
                        for (int64_t p = 0; p < k->kh; p++)
                            for (int64_t q = 0; q < k->kw; q++) {
                                int64_t ih = i * k->stride[0] - k->pad[0] + p * k->dil[0];
                                int64_t iw = j * k->stride[1] - k->pad[1] + q * k->dil[1];
                                if (ih < 0 || ih >= k->h || iw < 0 || iw >= k->w)
                                    continue;
                                s += x[((n * k->c + g * cg + c) * k->h + ih) * k->w + iw] *
                                     w[((o * cg + c) * k->kh + p) * k->kw + q];
                            }
                    y[((n * k->o + o) * ho + i) * wo + j] = s;
                }
    return y;
}

/* Runs conv2d on x/w/bias (any layout) and compares with the reference. */
static void check_conv_tensors(lt_tensor *x, lt_tensor *w, lt_tensor *b, const conv_case *k, lt_dtype out_dt,
                               double tol, int line)
{
    lt_tensor *y = lt_conv2d(x, w, b, k->stride, k->pad, k->dil, k->groups);
    if (!y) {
        print_error("line %d: conv2d failed: %s\n", line, lt_last_error());
        _fail(__FILE__, line);
    }
    assert_int_equal(lt_tensor_dtype(y), out_dt);
    int64_t ho = (k->h + 2 * k->pad[0] - k->dil[0] * (k->kh - 1) - 1) / k->stride[0] + 1;
    int64_t wo = (k->w + 2 * k->pad[1] - k->dil[1] * (k->kw - 1) - 1) / k->stride[1] + 1;
    lt_test_assert_shape(y, (const int64_t[]){k->n, k->o, ho, wo}, 4, __FILE__, line);
    double *xv = lt_test_values(x), *wv = lt_test_values(w), *bv = b ? lt_test_values(b) : NULL;
    double *ref = conv_ref(xv, wv, bv, k, ho, wo);
    lt_test_assert_values(y, ref, k->n * k->o * ho * wo, tol, __FILE__, line);
    free(xv), free(wv), free(bv), free(ref);
}

#define CHECK_CONV(k, dt, tol) check_conv((k), (dt), (tol), __LINE__)
static void check_conv(const conv_case *k, lt_dtype dt, double tol, int line)
{
    lt_tensor *x = MAKE(dt, 1, k->n, k->c, k->h, k->w);
    lt_tensor *w = MAKE(dt, 2, k->o, k->c / k->groups, k->kh, k->kw);
    lt_tensor *b = k->bias ? MAKE(dt, 3, k->o) : NULL;
    check_conv_tensors(x, w, b, k, dt, tol, line);
}

static const conv_case conv_cases[] = {
    {2, 3, 7, 6, 4, 3, 3, {1, 1}, {0, 0}, {1, 1}, 1, true},   /* plain 3x3 */
    {2, 3, 7, 6, 4, 3, 3, {1, 1}, {0, 0}, {1, 1}, 1, false},  /* no bias */
    {2, 3, 9, 8, 4, 3, 3, {2, 2}, {1, 1}, {1, 1}, 1, true},   /* stride 2, padding 1 */
    {1, 2, 9, 9, 3, 3, 3, {1, 1}, {2, 2}, {2, 2}, 1, true},   /* dilation 2 */
    {2, 4, 6, 6, 6, 3, 3, {1, 1}, {1, 1}, {1, 1}, 2, true},   /* groups 2 */
    {1, 6, 5, 5, 6, 3, 3, {1, 1}, {1, 1}, {1, 1}, 6, false},  /* depthwise */
    {2, 5, 4, 3, 3, 1, 1, {1, 1}, {0, 0}, {1, 1}, 1, true},   /* 1x1: no unfolding */
    {2, 4, 4, 3, 2, 1, 1, {1, 1}, {0, 0}, {1, 1}, 2, false},  /* 1x1 grouped */
    {1, 3, 7, 7, 2, 1, 1, {2, 2}, {0, 0}, {1, 1}, 1, false},  /* 1x1 stride 2 */
    {1, 2, 8, 7, 3, 3, 2, {2, 1}, {1, 0}, {1, 3}, 1, true},   /* asymmetric everything */
    {1, 2, 3, 3, 2, 5, 5, {3, 3}, {2, 2}, {1, 1}, 1, true},   /* kernel over all of the padded input */
    {4, 8, 20, 20, 8, 3, 3, {1, 1}, {1, 1}, {1, 1}, 1, true}, /* parallel im2col and bias */
    {3, 16, 100, 90, 2, 3, 3, {1, 1}, {1, 1}, {1, 1}, 1, true}, /* one image per im2col pass */
};

static void test_conv2d_configs(void **state)
{
    (void)state;
    for (size_t i = 0; i < sizeof conv_cases / sizeof conv_cases[0]; i++) {
        CHECK_CONV(&conv_cases[i], LT_F32, 5e-5);
        CHECK_CONV(&conv_cases[i], LT_F64, 1e-12);
    }
    CHECK_CONV(&conv_cases[2], LT_BF16, 2e-2);
    CHECK_CONV(&conv_cases[4], LT_F16, 4e-3);
}

/* The gradients of sum(conv2d(x, w) * gy) in double, straight from the
 * definition: dx [n, c, h, w] and dw [o, c/groups, kh, kw], malloc'd. */
static void conv_grads_ref(const double *x, const double *w, const double *gy, const conv_case *k, int64_t ho,
                           int64_t wo, double **dx_out, double **dw_out)
{
    int64_t cg = k->c / k->groups, og = k->o / k->groups;
    double *dx = calloc((size_t)(k->n * k->c * k->h * k->w + 1), sizeof(double));
    double *dw = calloc((size_t)(k->o * cg * k->kh * k->kw + 1), sizeof(double));
    for (int64_t n = 0; n < k->n; n++)
        for (int64_t o = 0; o < k->o; o++)
            for (int64_t i = 0; i < ho; i++)
                for (int64_t j = 0; j < wo; j++) {
                    double g = gy[((n * k->o + o) * ho + i) * wo + j];
                    for (int64_t c = 0; c < cg; c++)
                        for (int64_t p = 0; p < k->kh; p++)
                            for (int64_t q = 0; q < k->kw; q++) {
                                int64_t ih = i * k->stride[0] - k->pad[0] + p * k->dil[0];
                                int64_t iw = j * k->stride[1] - k->pad[1] + q * k->dil[1];
                                if (ih < 0 || ih >= k->h || iw < 0 || iw >= k->w)
                                    continue;
                                int64_t xi = ((n * k->c + o / og * cg + c) * k->h + ih) * k->w + iw;
                                int64_t wi = ((o * cg + c) * k->kh + p) * k->kw + q;
                                dx[xi] += g * w[wi];
                                dw[wi] += g * x[xi];
                            }
                }
    *dx_out = dx;
    *dw_out = dw;
}

/* conv2d's input and weight gradients (the conv2d_input_grad and
 * conv2d_weight_grad kernels, run through autograd) against the
 * definition, for every configuration of conv_cases. */
static void check_conv_grads(const conv_case *k, lt_dtype dt, double tol)
{
    int64_t ho = (k->h + 2 * k->pad[0] - k->dil[0] * (k->kh - 1) - 1) / k->stride[0] + 1;
    int64_t wo = (k->w + 2 * k->pad[1] - k->dil[1] * (k->kw - 1) - 1) / k->stride[1] + 1;
    lt_tensor *x = MAKE(dt, 1, k->n, k->c, k->h, k->w);
    lt_tensor *w = MAKE(dt, 2, k->o, k->c / k->groups, k->kh, k->kw);
    lt_tensor *gy = MAKE(dt, 3, k->n, k->o, ho, wo);
    assert_int_equal(lt_set_requires_grad(x, true), LT_OK);
    assert_int_equal(lt_set_requires_grad(w, true), LT_OK);
    lt_tensor *y = LT_OK_T(lt_conv2d(x, w, NULL, k->stride, k->pad, k->dil, k->groups));
    assert_int_equal(lt_backward(y, gy), LT_OK);
    double *xv = lt_test_values(x), *wv = lt_test_values(w), *gv = lt_test_values(gy), *dx, *dw;
    conv_grads_ref(xv, wv, gv, k, ho, wo, &dx, &dw);
    lt_test_assert_values(lt_grad(x), dx, k->n * k->c * k->h * k->w, tol, __FILE__, __LINE__);
    lt_test_assert_values(lt_grad(w), dw, k->o * (k->c / k->groups) * k->kh * k->kw, tol, __FILE__, __LINE__);
    free(xv), free(wv), free(gv), free(dx), free(dw);
}

static void test_conv2d_gradients(void **state)
{
    (void)state;
    for (size_t i = 0; i < sizeof conv_cases / sizeof conv_cases[0]; i++) {
        check_conv_grads(&conv_cases[i], LT_F32, 2e-4);
        check_conv_grads(&conv_cases[i], LT_F64, 1e-11);
    }
    check_conv_grads(&conv_cases[2], LT_BF16, 5e-2);
}

static void test_conv2d_known_values(void **state)
{
    (void)state;
    /* torch.nn.functional.conv2d(arange(16).view(1,1,4,4), ones(1,1,2,2),
     * bias=[1], stride=2) == [[[[11, 19], [43, 51]]]] */
    lt_tensor *x = LT_OK_T(lt_arange(0, 16, 1, LT_F32, lt_test_cpu()));
    x = LT_OK_T(lt_from_data(lt_tensor_data(x), (int64_t[]){1, 1, 4, 4}, 4, LT_F32, lt_test_cpu()));
    lt_tensor *w = LT_OK_T(lt_ones((int64_t[]){1, 1, 2, 2}, 4, LT_F32, lt_test_cpu()));
    lt_tensor *b = LT_T(LT_F32, LT_DIMS(1), 1);
    LT_ASSERT_VALUES(lt_conv2d(x, w, b, (int64_t[]){2, 2}, NULL, NULL, 1), 0, 11, 19, 43, 51);
    /* defaults: stride 1, no padding */
    LT_ASSERT_VALUES(lt_conv2d(x, w, NULL, NULL, NULL, NULL, 1), 0, 10, 14, 18, 26, 30, 34, 42, 46, 50);
}

static void test_conv2d_layouts_and_edges(void **state)
{
    (void)state;
    const conv_case k = {2, 3, 6, 6, 4, 3, 3, {1, 1}, {1, 1}, {1, 1}, 1, true};
    /* non-contiguous input, weight and bias */
    lt_tensor *x = LT_OK_T(lt_transpose(MAKE(LT_F32, 1, 2, 3, 6, 6), 2, 3));
    lt_tensor *w = LT_OK_T(lt_transpose(MAKE(LT_F32, 2, 4, 3, 3, 3), 2, 3));
    lt_tensor *b = LT_OK_T(lt_slice(MAKE(LT_F32, 3, 8), 0, 0, 8, 2));
    check_conv_tensors(x, w, b, &k, LT_F32, 1e-5, __LINE__);
    /* mixed float dtypes promote */
    check_conv_tensors(MAKE(LT_F32, 1, 2, 3, 6, 6), MAKE(LT_F64, 2, 4, 3, 3, 3), NULL, &k, LT_F64, 1e-6,
                       __LINE__);
    check_conv_tensors(MAKE(LT_BF16, 1, 2, 3, 6, 6), MAKE(LT_F32, 2, 4, 3, 3, 3), MAKE(LT_BF16, 3, 4), &k,
                       LT_F32, 1e-5, __LINE__);
    /* empty batch */
    lt_tensor *y = LT_OK_T(lt_conv2d(MAKE(LT_F32, 1, 0, 3, 6, 6), MAKE(LT_F32, 2, 4, 3, 3, 3), NULL, NULL,
                                     NULL, NULL, 1));
    LT_ASSERT_SHAPE(y, 0, 4, 4, 4);
    /* no input channels: the output is the bias */
    y = LT_OK_T(lt_conv2d(MAKE(LT_F32, 1, 1, 0, 3, 3), MAKE(LT_F32, 2, 2, 0, 2, 2),
                          LT_T(LT_F32, LT_DIMS(2), 1.5, -2), NULL, NULL, NULL, 1));
    LT_ASSERT_SHAPE(y, 1, 2, 2, 2);
    LT_ASSERT_VALUES(y, 0, 1.5, 1.5, 1.5, 1.5, -2, -2, -2, -2);
}

static void test_conv2d_bad_inputs(void **state)
{
    (void)state;
    lt_tensor *x = MAKE(LT_F32, 1, 1, 4, 5, 5), *w = MAKE(LT_F32, 2, 6, 4, 3, 3);
    assert_null(lt_conv2d(MAKE(LT_F32, 1, 5, 5), w, NULL, NULL, NULL, NULL, 1));
    LT_EXPECT_ERROR(LT_ERR_SHAPE, "conv2d: input x has shape [5, 5], expected 4 dims");
    assert_null(lt_conv2d(x, MAKE(LT_F32, 2, 6, 4, 3), NULL, NULL, NULL, NULL, 1));
    LT_EXPECT_ERROR(LT_ERR_SHAPE, "conv2d: weight has shape [6, 4, 3]");
    assert_null(lt_conv2d(x, w, NULL, NULL, NULL, NULL, 2));
    LT_EXPECT_ERROR(LT_ERR_SHAPE, "input [1, 4, 5, 5] has 4 channels but weight [6, 4, 3, 3] with groups = 2");
    assert_null(lt_conv2d(x, MAKE(LT_F32, 2, 5, 2, 3, 3), NULL, NULL, NULL, NULL, 2));
    LT_EXPECT_ERROR(LT_ERR_SHAPE, "5 output channels, expected a positive multiple of groups = 2");
    assert_null(lt_conv2d(x, w, NULL, NULL, NULL, NULL, 0));
    LT_EXPECT_ERROR(LT_ERR_ARGUMENT, "conv2d: groups is 0");
    assert_null(lt_conv2d(x, MAKE(LT_F32, 2, 6, 4, 7, 3), NULL, NULL, (int64_t[]){0, 1}, NULL, 1));
    LT_EXPECT_ERROR(LT_ERR_SHAPE, "padded input (5 x 7) of input [1, 4, 5, 5] is smaller than the dilated kernel");
    assert_null(lt_conv2d(x, w, NULL, NULL, NULL, (int64_t[]){3, 3}, 1));
    LT_EXPECT_ERROR(LT_ERR_SHAPE, "smaller than the dilated kernel");
    assert_null(lt_conv2d(x, w, NULL, (int64_t[]){0, 1}, NULL, NULL, 1));
    LT_EXPECT_ERROR(LT_ERR_ARGUMENT, "conv2d: stride is (0, 1)");
    assert_null(lt_conv2d(x, w, NULL, NULL, (int64_t[]){-1, 0}, NULL, 1));
    LT_EXPECT_ERROR(LT_ERR_ARGUMENT, "conv2d: padding is (-1, 0)");
    assert_null(lt_conv2d(x, w, NULL, NULL, NULL, (int64_t[]){1, 0}, 1));
    LT_EXPECT_ERROR(LT_ERR_ARGUMENT, "conv2d: dilation is (1, 0)");
    assert_null(lt_conv2d(x, w, MAKE(LT_F32, 3, 5), NULL, NULL, NULL, 1));
    LT_EXPECT_ERROR(LT_ERR_SHAPE, "conv2d: bias has shape [5], expected [6]");
    assert_null(lt_conv2d(MAKE(LT_BOOL, 1, 1, 4, 5, 5), MAKE(LT_BOOL, 2, 6, 4, 3, 3), NULL, NULL, NULL, NULL, 1));
    LT_EXPECT_ERROR(LT_ERR_DTYPE, "conv2d: argument 0 has dtype bool, expected a floating dtype");
    assert_null(lt_conv2d(x, MAKE(LT_I64, 2, 6, 4, 3, 3), NULL, NULL, NULL, NULL, 1));
    LT_EXPECT_ERROR(LT_ERR_DTYPE, "argument 1 has dtype i64");
    assert_null(lt_conv2d(NULL, w, NULL, NULL, NULL, NULL, 1));
    LT_EXPECT_ERROR(LT_ERR_NULL, "conv2d: argument 0 is NULL");
    assert_null(lt_conv2d(x, NULL, NULL, NULL, NULL, NULL, 1));
    LT_EXPECT_ERROR(LT_ERR_NULL, "conv2d: argument 1 is NULL");
}

/* ---- pooling reference --------------------------------------------------- */

typedef struct pool_case {
    int64_t n, c, h, w, k[2], s[2], p[2];
} pool_case;

static int64_t pool_out(int64_t size, int64_t k, int64_t s, int64_t p) { return (size + 2 * p - k) / s + 1; }

/* Max pooling in double with -inf padding; indices as flat h*W+w. The
 * scan order matches PyTorch: a later NaN replaces the current maximum. */
static void max_pool_ref(const double *x, const pool_case *k, double *y, double *idx)
{
    int64_t ho = pool_out(k->h, k->k[0], k->s[0], k->p[0]), wo = pool_out(k->w, k->k[1], k->s[1], k->p[1]);
    for (int64_t q = 0; q < k->n * k->c; q++)
        for (int64_t i = 0; i < ho; i++)
            for (int64_t j = 0; j < wo; j++) {
                double best = -INFINITY;
                int64_t at = -1;
                for (int64_t a = 0; a < k->k[0]; a++)
                    for (int64_t b = 0; b < k->k[1]; b++) {
                        int64_t ih = i * k->s[0] - k->p[0] + a, iw = j * k->s[1] - k->p[1] + b;
                        if (ih < 0 || ih >= k->h || iw < 0 || iw >= k->w)
                            continue;
                        double v = x[(q * k->h + ih) * k->w + iw];
                        if (at < 0 || v > best || isnan(v)) {
                            best = v;
                            at = ih * k->w + iw;
                        }
                    }
                y[(q * ho + i) * wo + j] = best;
                idx[(q * ho + i) * wo + j] = (double)at;
            }
}

static void avg_pool_ref(const double *x, const pool_case *k, bool include_pad, double *y)
{
    int64_t ho = pool_out(k->h, k->k[0], k->s[0], k->p[0]), wo = pool_out(k->w, k->k[1], k->s[1], k->p[1]);
    for (int64_t q = 0; q < k->n * k->c; q++)
        for (int64_t i = 0; i < ho; i++)
            for (int64_t j = 0; j < wo; j++) {
                double sum = 0;
                int64_t real = 0, padded = 0;
                for (int64_t a = 0; a < k->k[0]; a++)
                    for (int64_t b = 0; b < k->k[1]; b++) {
                        int64_t ih = i * k->s[0] - k->p[0] + a, iw = j * k->s[1] - k->p[1] + b;
                        if (ih >= k->h + k->p[0] || iw >= k->w + k->p[1])
                            continue; /* beyond the padded input: not in the window */
                        padded++;
                        if (ih < 0 || ih >= k->h || iw < 0 || iw >= k->w)
                            continue;
                        sum += x[(q * k->h + ih) * k->w + iw];
                        real++;
                    }
                y[(q * ho + i) * wo + j] = sum / (double)(include_pad ? padded : real);
            }
}

/* Compares max and avg pooling of x (any layout) with the references. */
static void check_pool_tensor(lt_tensor *x, const pool_case *k, double tol, int line)
{
    int64_t ho = pool_out(k->h, k->k[0], k->s[0], k->p[0]), wo = pool_out(k->w, k->k[1], k->s[1], k->p[1]);
    int64_t total = k->n * k->c * ho * wo;
    double *xv = lt_test_values(x);
    double *y = malloc(sizeof(double) * (size_t)(total + 1)), *idx = malloc(sizeof(double) * (size_t)(total + 1));
    lt_tensor *indices = NULL;
    lt_tensor *m = lt_max_pool2d(x, k->k, k->s, k->p, &indices);
    if (!m || !indices) {
        print_error("line %d: max_pool2d failed: %s\n", line, lt_last_error());
        _fail(__FILE__, line);
    }
    assert_int_equal(lt_tensor_dtype(m), lt_tensor_dtype(x));
    assert_int_equal(lt_tensor_dtype(indices), LT_I64);
    lt_test_assert_shape(m, (const int64_t[]){k->n, k->c, ho, wo}, 4, __FILE__, line);
    lt_test_assert_shape(indices, (const int64_t[]){k->n, k->c, ho, wo}, 4, __FILE__, line);
    max_pool_ref(xv, k, y, idx);
    lt_test_assert_values(m, y, total, 0, __FILE__, line);
    lt_test_assert_values(indices, idx, total, 0, __FILE__, line);
    for (int include = 0; include < 2; include++) {
        lt_tensor *a = lt_avg_pool2d(x, k->k, k->s, k->p, include);
        if (!a) {
            print_error("line %d: avg_pool2d failed: %s\n", line, lt_last_error());
            _fail(__FILE__, line);
        }
        avg_pool_ref(xv, k, include, y);
        lt_test_assert_values(a, y, total, tol, __FILE__, line);
    }
    free(xv), free(y), free(idx);
}

static const pool_case pool_cases[] = {
    {2, 3, 6, 6, {2, 2}, {2, 2}, {0, 0}},
    {2, 2, 7, 5, {3, 3}, {2, 2}, {1, 1}},
    {1, 3, 6, 7, {3, 2}, {1, 2}, {1, 1}},
    {1, 1, 5, 5, {5, 5}, {1, 1}, {2, 2}},
    {1, 2, 1, 1, {1, 1}, {1, 1}, {0, 0}},
    {3, 16, 24, 24, {3, 3}, {2, 2}, {1, 1}}, /* parallel over planes */
    /* unpadded: the vectorized max pooling, row blocks of 256 outputs */
    {1, 2, 3, 600, {2, 2}, {2, 2}, {0, 0}},
    {2, 3, 7, 9, {2, 3}, {3, 2}, {0, 0}},
    {1, 2, 6, 6, {3, 3}, {1, 1}, {0, 0}},
};

static void test_pool2d_configs(void **state)
{
    (void)state;
    for (size_t i = 0; i < sizeof pool_cases / sizeof pool_cases[0]; i++) {
        const pool_case *k = &pool_cases[i];
        check_pool_tensor(MAKE(LT_F32, i, k->n, k->c, k->h, k->w), k, 1e-6, __LINE__);
        check_pool_tensor(MAKE(LT_F64, i, k->n, k->c, k->h, k->w), k, 1e-14, __LINE__);
    }
    check_pool_tensor(MAKE(LT_BF16, 1, 2, 2, 7, 5), &pool_cases[1], 1e-2, __LINE__);
    check_pool_tensor(MAKE(LT_F16, 1, 2, 2, 7, 5), &pool_cases[1], 2e-3, __LINE__);
    /* non-contiguous input: transposed H and W */
    const pool_case t = {2, 2, 5, 7, {3, 3}, {2, 2}, {1, 1}};
    check_pool_tensor(LT_OK_T(lt_transpose(MAKE(LT_F32, 9, 2, 2, 7, 5), 2, 3)), &t, 1e-6, __LINE__);
}

static void test_pool2d_known_values(void **state)
{
    (void)state;
    lt_tensor *r = LT_OK_T(lt_arange(0, 16, 1, LT_F32, lt_test_cpu()));
    lt_tensor *x = LT_OK_T(lt_from_data(lt_tensor_data(r), (int64_t[]){1, 1, 4, 4}, 4, LT_F32, lt_test_cpu()));
    const int64_t k3[2] = {3, 3}, s2[2] = {2, 2}, p1[2] = {1, 1};
    /* values from torch.nn.functional.avg_pool2d / max_pool2d */
    LT_ASSERT_VALUES(lt_avg_pool2d(x, k3, s2, p1, true), 1e-6, 10.0 / 9, 24.0 / 9, 51.0 / 9, 10);
    LT_ASSERT_VALUES(lt_avg_pool2d(x, k3, s2, p1, false), 1e-6, 2.5, 4, 8.5, 10);
    lt_tensor *idx = NULL;
    LT_ASSERT_VALUES(lt_max_pool2d(x, k3, s2, p1, &idx), 0, 5, 7, 13, 15);
    LT_ASSERT_VALUES(idx, 0, 5, 7, 13, 15);
    /* stride NULL means kernel; indices may be omitted */
    LT_ASSERT_VALUES(lt_max_pool2d(x, (int64_t[]){2, 2}, NULL, NULL, NULL), 0, 5, 7, 13, 15);
    LT_ASSERT_VALUES(lt_avg_pool2d(x, (int64_t[]){2, 2}, NULL, NULL, true), 1e-6, 2.5, 4.5, 10.5, 12.5);
    /* NaN propagates and the last NaN of the window is reported (torch:
     * values [nan, nan], indices [3, 1]) */
    lt_tensor *n = LT_T(LT_F32, LT_DIMS(1, 1, 2, 3), 1, NAN, 3, NAN, 5, 6);
    lt_tensor *ni = NULL;
    LT_ASSERT_VALUES(lt_max_pool2d(n, (int64_t[]){2, 2}, (int64_t[]){1, 1}, NULL, &ni), 0, NAN, NAN);
    LT_ASSERT_VALUES(ni, 0, 3, 1);
    /* ties report the first maximum of the window (torch: indices [0, 2]) */
    lt_tensor *tie = LT_T(LT_F32, LT_DIMS(1, 1, 2, 4), 7, 7, 7, 7, 7, 7, 7, 7);
    lt_tensor *ti = NULL;
    LT_ASSERT_VALUES(lt_max_pool2d(tie, (int64_t[]){2, 2}, NULL, NULL, &ti), 0, 7, 7);
    LT_ASSERT_VALUES(ti, 0, 0, 2);
    /* an all -inf window reports its first real element */
    lt_tensor *inf = LT_T(LT_F64, LT_DIMS(1, 1, 2, 2), -INFINITY, -INFINITY, -INFINITY, -INFINITY);
    lt_tensor *ii = NULL;
    LT_ASSERT_VALUES(lt_max_pool2d(inf, (int64_t[]){2, 2}, NULL, (int64_t[]){1, 1}, &ii), 0, -INFINITY,
                     -INFINITY, -INFINITY, -INFINITY);
    LT_ASSERT_VALUES(ii, 0, 0, 1, 2, 3);
    /* empty batch */
    LT_ASSERT_SHAPE(lt_max_pool2d(MAKE(LT_F32, 1, 0, 2, 4, 4), (int64_t[]){2, 2}, NULL, NULL, NULL), 0, 2, 2, 2);
    LT_ASSERT_SHAPE(lt_avg_pool2d(MAKE(LT_F32, 1, 0, 2, 4, 4), (int64_t[]){2, 2}, NULL, NULL, true), 0, 2, 2, 2);
}

static void test_pool2d_bad_inputs(void **state)
{
    (void)state;
    lt_tensor *x = MAKE(LT_F32, 1, 1, 2, 5, 5);
    const int64_t k2[2] = {2, 2};
    lt_tensor *idx = (lt_tensor *)x; /* must be reset to NULL on error */
    assert_null(lt_max_pool2d(x, k2, NULL, (int64_t[]){2, 0}, &idx));
    assert_null(idx);
    LT_EXPECT_ERROR(LT_ERR_ARGUMENT, "max_pool2d: padding (2, 0) must be at most half of the kernel (2, 2)");
    assert_null(lt_max_pool2d(x, (int64_t[]){8, 2}, NULL, (int64_t[]){1, 0}, NULL));
    LT_EXPECT_ERROR(LT_ERR_SHAPE, "max_pool2d: kernel (8, 2) is larger than the padded input (7 x 5)");
    assert_null(lt_avg_pool2d(x, (int64_t[]){6, 6}, NULL, NULL, true));
    LT_EXPECT_ERROR(LT_ERR_SHAPE, "avg_pool2d: kernel (6, 6) is larger than the padded input (5 x 5) of input [1, 2, 5, 5]");
    assert_null(lt_max_pool2d(x, k2, (int64_t[]){0, 1}, NULL, NULL));
    LT_EXPECT_ERROR(LT_ERR_ARGUMENT, "max_pool2d: stride is (0, 1)");
    assert_null(lt_avg_pool2d(x, (int64_t[]){0, 2}, NULL, NULL, true));
    LT_EXPECT_ERROR(LT_ERR_ARGUMENT, "avg_pool2d: kernel is (0, 2)");
    assert_null(lt_max_pool2d(x, k2, NULL, (int64_t[]){-1, 0}, NULL));
    LT_EXPECT_ERROR(LT_ERR_ARGUMENT, "padding is (-1, 0)");
    assert_null(lt_max_pool2d(MAKE(LT_I64, 1, 1, 2, 5, 5), k2, NULL, NULL, NULL));
    LT_EXPECT_ERROR(LT_ERR_DTYPE, "max_pool2d: argument 0 has dtype i64");
    assert_null(lt_avg_pool2d(MAKE(LT_U8, 1, 1, 2, 5, 5), k2, NULL, NULL, true));
    LT_EXPECT_ERROR(LT_ERR_DTYPE, "avg_pool2d: argument 0 has dtype u8");
    assert_null(lt_max_pool2d(MAKE(LT_F32, 1, 5, 5), k2, NULL, NULL, NULL));
    LT_EXPECT_ERROR(LT_ERR_SHAPE, "max_pool2d: input has shape [5, 5], expected 4 dims");
    assert_null(lt_avg_pool2d(MAKE(LT_F32, 1, 1, 2, 0, 5), k2, NULL, NULL, true));
    LT_EXPECT_ERROR(LT_ERR_SHAPE, "avg_pool2d: input has shape [1, 2, 0, 5]");
    assert_null(lt_max_pool2d(x, NULL, NULL, NULL, NULL));
    LT_EXPECT_ERROR(LT_ERR_NULL, "max_pool2d: kernel is NULL");
    assert_null(lt_max_pool2d(NULL, k2, NULL, NULL, NULL));
    LT_EXPECT_ERROR(LT_ERR_NULL, "max_pool2d: argument 0 is NULL");
    assert_null(lt_avg_pool2d(NULL, k2, NULL, NULL, false));
    LT_EXPECT_ERROR(LT_ERR_NULL, "avg_pool2d: argument 0 is NULL");
}

/* The kernels also accept a preallocated, non-contiguous output (the lazy
 * backend hands buffers to lt_eager_run): each result must land in it. */
static lt_tensor *strided_output(const int64_t *dims, int ndim, lt_dtype dt)
{
    int64_t swapped[4];
    memcpy(swapped, dims, sizeof(int64_t) * (size_t)ndim);
    swapped[ndim - 1] = dims[ndim - 2], swapped[ndim - 2] = dims[ndim - 1];
    lt_tensor *base = lt_zeros(swapped, ndim, dt, lt_test_cpu());
    lt_tensor *view = LT_OK_T(lt_transpose(base, ndim - 2, ndim - 1));
    assert_false(lt_tensor_is_contiguous(view));
    return lt_retain(view); /* lt_eager_run takes this reference */
}

static void run_into_strided(lt_op op, lt_tensor **in, int nin, const lt_attrs *a, lt_tensor *expect,
                             lt_tensor *expect_idx)
{
    lt_meta im[3], om[2];
    for (int i = 0; i < nin; i++) {
        im[i] = lt_meta_make(lt_tensor_dtype(in[i]), lt_tensor_shape(in[i]), lt_tensor_ndim(in[i]));
    }
    assert_int_equal(lt_op_infer(op, im, nin, a, om), LT_OK);
    lt_tensor *out[2] = {strided_output(om[0].shape, om[0].ndim, (lt_dtype)om[0].dtype), NULL};
    if (expect_idx)
        out[1] = strided_output(om[1].shape, om[1].ndim, LT_I64);
    assert_int_equal(lt_eager_run(op, in, nin, a, om, out, lt_device_cpu()), LT_OK);
    double *e = lt_test_values(expect);
    LT_ASSERT_ARRAY(out[0], e, lt_tensor_numel(expect), 1e-6);
    free(e);
    lt_tensor_unref(out[0]);
    if (expect_idx) {
        double *ei = lt_test_values(expect_idx);
        LT_ASSERT_ARRAY(out[1], ei, lt_tensor_numel(expect_idx), 0);
        free(ei);
        lt_tensor_unref(out[1]);
    }
}

static void test_kernels_write_strided_outputs(void **state)
{
    (void)state;
    lt_tensor *a = MAKE(LT_F32, 1, 2, 3, 4), *b = MAKE(LT_F32, 2, 4, 5);
    lt_attrs none = lt_attrs_init();
    run_into_strided(LT_OP_MATMUL, (lt_tensor *[]){a, b}, 2, &none, LT_OK_T(lt_matmul(a, b)), NULL);
    lt_tensor *x = MAKE(LT_F32, 3, 2, 2, 5, 6), *w = MAKE(LT_F32, 4, 3, 2, 3, 3);
    lt_attrs conv = lt_attrs_init();
    int64_t conv_attrs[7] = {1, 1, 1, 1, 1, 1, 1};
    memcpy(conv.i, conv_attrs, sizeof conv_attrs);
    conv.ni = 7;
    run_into_strided(LT_OP_CONV2D, (lt_tensor *[]){x, w}, 2, &conv,
                     LT_OK_T(lt_conv2d(x, w, NULL, NULL, (int64_t[]){1, 1}, NULL, 1)), NULL);
    lt_attrs pool = lt_attrs_init();
    int64_t pool_attrs[6] = {3, 3, 2, 2, 1, 1};
    memcpy(pool.i, pool_attrs, sizeof pool_attrs);
    pool.ni = 6;
    lt_tensor *idx = NULL;
    lt_tensor *m = LT_OK_T(lt_max_pool2d(x, pool_attrs, pool_attrs + 2, pool_attrs + 4, &idx));
    run_into_strided(LT_OP_MAX_POOL2D, &x, 1, &pool, m, idx);
    pool.flag = 1;
    run_into_strided(LT_OP_AVG_POOL2D, &x, 1, &pool,
                     LT_OK_T(lt_avg_pool2d(x, pool_attrs, pool_attrs + 2, pool_attrs + 4, true)), NULL);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        LT_TEST(test_matmul_shape_cases),       LT_TEST(test_matmul_known_values),
        LT_TEST(test_matmul_strided_operands),  LT_TEST(test_matmul_size_zero),
        LT_TEST(test_matmul_batched_items),
        LT_TEST(test_matmul_dtypes),            LT_TEST(test_matmul_integer_wraparound),
        LT_TEST(test_matmul_large),             LT_TEST(test_matmul_bad_inputs),
        LT_TEST(test_conv2d_configs),           LT_TEST(test_conv2d_known_values),
        LT_TEST(test_conv2d_gradients),
        LT_TEST(test_conv2d_layouts_and_edges), LT_TEST(test_conv2d_bad_inputs),
        LT_TEST(test_pool2d_configs),           LT_TEST(test_pool2d_known_values),
        LT_TEST(test_pool2d_bad_inputs),        LT_TEST(test_kernels_write_strided_outputs),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
