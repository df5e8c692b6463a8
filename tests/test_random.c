/* test_random.c - the Philox4x32-10 generator, the generator state, and
 * lt_rand / lt_randn / lt_randint: known answers, the documented stream
 * layout, reproducibility, thread-count invariance, distributions, every
 * dtype and bad input. */
#include "lt_test.h"
#include "eager/eager.h" /* white-box checks of the Philox block function */

#define N_STATS 1000000

static const lt_dtype float_dtypes[] = {LT_F32, LT_F64, LT_BF16, LT_F16};
static const lt_dtype randint_dtypes[] = {LT_I32, LT_I64, LT_U8, LT_F32, LT_F64, LT_BF16, LT_F16};

/* Reads t (any dtype) as doubles into a malloc'd array the caller frees. */
static double *values_of(lt_tensor *t)
{
    double *v = lt_test_values(t);
    assert_non_null(v);
    return v;
}

/* Raw bytes of t in a malloc'd buffer (for exact comparisons). */
static void *bytes_of(lt_tensor *t, size_t *size)
{
    *size = (size_t)lt_tensor_numel(t) * lt_dtype_size(lt_tensor_dtype(t));
    void *b = malloc(*size ? *size : 1);
    assert_non_null(b);
    assert_int_equal(lt_copy_to_host(t, b, *size), LT_OK);
    return b;
}

static void assert_same_bytes(lt_tensor *a, lt_tensor *b)
{
    size_t na, nb;
    void *pa = bytes_of(a, &na), *pb = bytes_of(b, &nb);
    assert_int_equal(na, nb);
    assert_memory_equal(pa, pb, na);
    free(pa);
    free(pb);
}

static uint64_t rng_offset(void)
{
    uint64_t offset = 0;
    lt_rng_get_state(NULL, &offset);
    return offset;
}

/* Lanes of block `counter` of the stream of `seed` (the documented
 * mapping: 128-bit counter with the low 64 bits in ctr[0..1]). */
static void stream_block(uint64_t seed, uint64_t counter, uint32_t x[4])
{
    uint32_t ctr[4] = {(uint32_t)counter, (uint32_t)(counter >> 32), 0, 0};
    uint32_t key[2] = {(uint32_t)seed, (uint32_t)(seed >> 32)};
    lt_philox4x32_10(ctr, key, x);
}

/* ---- Philox ---------------------------------------------------------------- */

static void test_philox_known_answers(void **state)
{
    (void)state;
    /* Random123 kat_vectors, philox4x32 10 (also re-derived with an
     * independent Python implementation of the published algorithm) */
    static const uint32_t cases[3][10] = {
        {0, 0, 0, 0, 0, 0, 0x6627e8d5, 0xe169c58d, 0xbc57ac4c, 0x9b00dbd8},
        {0xffffffff, 0xffffffff, 0xffffffff, 0xffffffff, 0xffffffff, 0xffffffff,
         0x408f276d, 0x41c83b0e, 0xa20bc7c6, 0x6d5451fd},
        {0x243f6a88, 0x85a308d3, 0x13198a2e, 0x03707344, 0xa4093822, 0x299f31d0,
         0xd16cfe09, 0x94fdcceb, 0x5001e420, 0x24126ea1},
    };
    for (int c = 0; c < 3; c++) {
        uint32_t out[4];
        lt_philox4x32_10(&cases[c][0], &cases[c][4], out);
        for (int k = 0; k < 4; k++)
            assert_int_equal(out[k], cases[c][6 + k]);
    }
}

/* ---- the documented stream layout ----------------------------------------- */

static void test_rand_f32_layout(void **state)
{
    (void)state;
    uint64_t seed = UINT64_C(0x0123456789abcdef), offset = 1000;
    lt_rng_set_state(seed, offset);
    lt_tensor *t = LT_OK_T(lt_rand((int64_t[]){2, 5}, 2, LT_F32, lt_test_cpu()));
    assert_true(rng_offset() == offset + 3); /* ceil(10 / 4) counters */
    float got[10];
    assert_int_equal(lt_copy_to_host(t, got, sizeof got), LT_OK);
    for (int i = 0; i < 10; i++) {
        uint32_t x[4];
        stream_block(seed, offset + (uint64_t)i / 4, x);
        float expect = (float)(x[i % 4] >> 8) / 16777216.0f;
        assert_true(got[i] == expect);
    }
}

static void test_rand_f64_and_randint_layout(void **state)
{
    (void)state;
    uint64_t seed = 7, offset = 5;
    lt_rng_set_state(seed, offset);
    lt_tensor *u = LT_OK_T(lt_rand((int64_t[]){5}, 1, LT_F64, lt_test_cpu()));
    assert_true(rng_offset() == offset + 3); /* two elements per counter */
    double got[5];
    assert_int_equal(lt_copy_to_host(u, got, sizeof got), LT_OK);
    for (int i = 0; i < 5; i++) {
        uint32_t x[4];
        stream_block(seed, offset + (uint64_t)i / 2, x);
        int s = i % 2;
        uint64_t m = ((uint64_t)(x[2 * s] >> 5) << 26) | (x[2 * s + 1] >> 6);
        assert_true(got[i] == (double)m / 9007199254740992.0);
    }
    lt_rng_set_state(seed, offset);
    lt_tensor *r = LT_OK_T(lt_randint(-1000, 123456789, (int64_t[]){3}, 1, LT_I64, lt_test_cpu()));
    assert_true(rng_offset() == offset + 2);
    int64_t ints[3];
    assert_int_equal(lt_copy_to_host(r, ints, sizeof ints), LT_OK);
    for (int i = 0; i < 3; i++) {
        uint32_t x[4];
        stream_block(seed, offset + (uint64_t)i / 2, x);
        int s = i % 2;
        uint64_t bits = ((uint64_t)x[2 * s] << 32) | x[2 * s + 1];
        assert_int_equal(ints[i], -1000 + (int64_t)(bits % (123456789 + 1000)));
    }
}

static void test_randn_layout(void **state)
{
    (void)state;
    uint64_t seed = 99, offset = 0;
    lt_rng_set_state(seed, offset);
    lt_tensor *z = LT_OK_T(lt_randn((int64_t[]){6}, 1, LT_F32, lt_test_cpu()));
    assert_true(rng_offset() == 2);
    double *got = values_of(z);
    for (int i = 0; i < 6; i++) {
        uint32_t x[4];
        stream_block(seed, (uint64_t)i / 4, x);
        int pair = (i % 4) / 2;
        double u1 = (2.0 * x[2 * pair] + 1.0) / 8589934592.0;
        double u2 = x[2 * pair + 1] / 4294967296.0;
        double r = sqrt(-2.0 * log(u1)), th = 2.0 * M_PI * u2;
        double expect = i % 2 == 0 ? r * cos(th) : r * sin(th);
        assert_true(fabs(got[i] - expect) <= 1e-6 * (1.0 + fabs(expect)));
    }
    free(got);
}

static void test_counters_consumed(void **state)
{
    (void)state;
    /* f32 uses one lane per element, f64 and randint two */
    assert_int_equal(lt_random_counters(LT_OP_RAND, LT_F32, 0), 0);
    assert_int_equal(lt_random_counters(LT_OP_RAND, LT_F32, 1), 1);
    assert_int_equal(lt_random_counters(LT_OP_RAND, LT_BF16, 9), 3);
    assert_int_equal(lt_random_counters(LT_OP_RANDN, LT_F16, 8), 2);
    assert_int_equal(lt_random_counters(LT_OP_RAND, LT_F64, 9), 5);
    assert_int_equal(lt_random_counters(LT_OP_RANDN, LT_F64, 4), 2);
    assert_int_equal(lt_random_counters(LT_OP_RANDINT, LT_U8, 3), 2);
    /* the public calls advance the offset by exactly that */
    lt_manual_seed(1);
    LT_OK_T(lt_randn((int64_t[]){3, 3}, 2, LT_F64, lt_test_cpu()));
    assert_true(rng_offset() == 5);
    LT_OK_T(lt_rand(NULL, 0, LT_F32, lt_test_cpu())); /* 0-d: one element */
    assert_true(rng_offset() == 6);
    LT_OK_T(lt_rand((int64_t[]){0, 4}, 2, LT_F32, lt_test_cpu())); /* empty */
    assert_true(rng_offset() == 6);
}

/* ---- reproducibility ------------------------------------------------------- */

static void test_same_seed_same_values(void **state)
{
    (void)state;
    int64_t dims[2] = {37, 29};
    for (size_t k = 0; k < sizeof float_dtypes / sizeof float_dtypes[0]; k++) {
        lt_manual_seed(42);
        lt_tensor *a = LT_OK_T(lt_rand(dims, 2, float_dtypes[k], lt_test_cpu()));
        lt_tensor *an = LT_OK_T(lt_randn(dims, 2, float_dtypes[k], lt_test_cpu()));
        lt_manual_seed(42);
        lt_tensor *b = LT_OK_T(lt_rand(dims, 2, float_dtypes[k], lt_test_cpu()));
        lt_tensor *bn = LT_OK_T(lt_randn(dims, 2, float_dtypes[k], lt_test_cpu()));
        assert_same_bytes(a, b);
        assert_same_bytes(an, bn);
    }
    lt_manual_seed(3);
    lt_tensor *a = LT_OK_T(lt_randint(0, 10, dims, 2, LT_I64, lt_test_cpu()));
    lt_manual_seed(3);
    lt_tensor *b = LT_OK_T(lt_randint(0, 10, dims, 2, LT_I64, lt_test_cpu()));
    assert_same_bytes(a, b);
    /* a different seed gives different numbers */
    lt_manual_seed(4);
    lt_tensor *c = LT_OK_T(lt_rand(dims, 2, LT_F64, lt_test_cpu()));
    lt_manual_seed(3);
    lt_tensor *d = LT_OK_T(lt_rand(dims, 2, LT_F64, lt_test_cpu()));
    double *vc = values_of(c), *vd = values_of(d);
    int same = 0;
    for (int i = 0; i < 37 * 29; i++)
        same += vc[i] == vd[i];
    assert_int_equal(same, 0);
    free(vc);
    free(vd);
}

static void test_consecutive_calls_differ(void **state)
{
    (void)state;
    lt_manual_seed(5);
    assert_true(rng_offset() == 0);
    lt_tensor *a = LT_OK_T(lt_rand((int64_t[]){1000}, 1, LT_F32, lt_test_cpu()));
    assert_true(rng_offset() == 250);
    lt_tensor *b = LT_OK_T(lt_rand((int64_t[]){1000}, 1, LT_F32, lt_test_cpu()));
    assert_true(rng_offset() == 500);
    double *va = values_of(a), *vb = values_of(b);
    int same = 0;
    for (int i = 0; i < 1000; i++)
        same += va[i] == vb[i];
    assert_true(same <= 2); /* 24-bit values: a coincidence is very unlikely */
    free(va);
    free(vb);
}

static void test_state_save_and_replay(void **state)
{
    (void)state;
    lt_manual_seed(UINT64_C(0xfeedfacecafebeef));
    LT_OK_T(lt_randn((int64_t[]){11}, 1, LT_F32, lt_test_cpu()));
    uint64_t seed = 0, offset = 0;
    lt_rng_get_state(&seed, &offset);
    assert_true(seed == UINT64_C(0xfeedfacecafebeef));
    assert_true(offset == 3);
    lt_tensor *a = LT_OK_T(lt_randn((int64_t[]){4, 4}, 2, LT_F64, lt_test_cpu()));
    lt_tensor *ai = LT_OK_T(lt_randint(-5, 5, (int64_t[]){9}, 1, LT_I32, lt_test_cpu()));
    lt_rng_set_state(seed, offset);
    lt_tensor *b = LT_OK_T(lt_randn((int64_t[]){4, 4}, 2, LT_F64, lt_test_cpu()));
    lt_tensor *bi = LT_OK_T(lt_randint(-5, 5, (int64_t[]){9}, 1, LT_I32, lt_test_cpu()));
    assert_same_bytes(a, b);
    assert_same_bytes(ai, bi);
    lt_rng_get_state(NULL, NULL); /* NULL-safe */
    assert_int_equal(lt_last_status(), LT_OK);
}

static void test_same_result_for_any_thread_count(void **state)
{
    (void)state;
    int saved = lt_get_num_threads();
    int64_t n = 3 * LT_PARALLEL_GRAIN + 7; /* parallel, with a partial last block */
    lt_tensor *r[2][4];
    for (int pass = 0; pass < 2; pass++) {
        lt_set_num_threads(pass == 0 ? 1 : 2);
        lt_manual_seed(2024);
        r[pass][0] = LT_OK_T(lt_rand(&n, 1, LT_F32, lt_test_cpu()));
        r[pass][1] = LT_OK_T(lt_randn(&n, 1, LT_F64, lt_test_cpu()));
        r[pass][2] = LT_OK_T(lt_randn(&n, 1, LT_BF16, lt_test_cpu()));
        r[pass][3] = LT_OK_T(lt_randint(-7, 1000, &n, 1, LT_I64, lt_test_cpu()));
    }
    lt_set_num_threads(saved);
    for (int k = 0; k < 4; k++)
        assert_same_bytes(r[0][k], r[1][k]);
    /* and element i is the same as in a small tensor at the same counter */
    lt_manual_seed(2024);
    lt_tensor *head = LT_OK_T(lt_rand((int64_t[]){8}, 1, LT_F32, lt_test_cpu()));
    double *vh = values_of(head), *vl = values_of(r[1][0]);
    for (int i = 0; i < 8; i++)
        assert_true(vh[i] == vl[i]);
    free(vh);
    free(vl);
}

/* ---- distributions ----------------------------------------------------------- */

static void test_rand_uniform_statistics(void **state)
{
    (void)state;
    lt_manual_seed(11);
    int64_t n = N_STATS;
    for (size_t k = 0; k < sizeof float_dtypes / sizeof float_dtypes[0]; k++) {
        lt_dtype dt = float_dtypes[k];
        lt_tensor *t = LT_OK_T(lt_rand(&n, 1, dt, lt_test_cpu()));
        double *v = values_of(t);
        double sum = 0, sq = 0, lo = 1, hi = 0;
        for (int64_t i = 0; i < n; i++) {
            assert_true(v[i] >= 0.0 && v[i] < 1.0);
            sum += v[i];
            lo = v[i] < lo ? v[i] : lo;
            hi = v[i] > hi ? v[i] : hi;
        }
        double mean = sum / (double)n;
        for (int64_t i = 0; i < n; i++)
            sq += (v[i] - mean) * (v[i] - mean);
        double var = sq / (double)(n - 1);
        /* 5 sigma: sd(mean) = sqrt(1/12/n), sd(var) = sqrt((1/80 - 1/144)/n);
         * half types get their rounding step as extra slack */
        double slack = dt == LT_BF16 ? 2e-3 : dt == LT_F16 ? 3e-4 : 0;
        assert_true(fabs(mean - 0.5) < 5 * sqrt(1.0 / 12 / (double)n) + slack);
        assert_true(fabs(var - 1.0 / 12) < 5 * sqrt((1.0 / 80 - 1.0 / 144) / (double)n) + slack);
        assert_true(lo < 1e-3 && hi > 1 - 1e-2);
        if (dt == LT_BF16) /* rounding up to 1.0 is clamped to 1 - 2^-8 */
            assert_true(hi == 1.0 - 1.0 / 256);
        if (dt == LT_F16)
            assert_true(hi == 1.0 - 1.0 / 2048);
        free(v);
    }
}

static void test_randn_normal_statistics(void **state)
{
    (void)state;
    lt_manual_seed(12);
    int64_t n = N_STATS;
    for (size_t k = 0; k < sizeof float_dtypes / sizeof float_dtypes[0]; k++) {
        lt_dtype dt = float_dtypes[k];
        lt_tensor *t = LT_OK_T(lt_randn(&n, 1, dt, lt_test_cpu()));
        double *v = values_of(t);
        double sum = 0, sq = 0;
        int64_t in1 = 0, in2 = 0;
        for (int64_t i = 0; i < n; i++) {
            assert_true(isfinite(v[i]));
            sum += v[i];
            in1 += fabs(v[i]) < 1.0;
            in2 += fabs(v[i]) < 2.0;
        }
        double mean = sum / (double)n;
        for (int64_t i = 0; i < n; i++)
            sq += (v[i] - mean) * (v[i] - mean);
        double sd = sqrt(sq / (double)(n - 1));
        double slack = dt == LT_BF16 ? 8e-3 : dt == LT_F16 ? 1e-3 : 0;
        assert_true(fabs(mean) < 5.0 / sqrt((double)n) + slack);
        assert_true(fabs(sd - 1.0) < 5.0 * sqrt(0.5 / (double)n) + slack);
        /* P(|z| < 1) = 0.682689, P(|z| < 2) = 0.954500; 5 sigma binomial */
        double p1 = (double)in1 / (double)n, p2 = (double)in2 / (double)n;
        assert_true(fabs(p1 - 0.682689) < 5 * sqrt(0.682689 * 0.317311 / (double)n) + slack);
        assert_true(fabs(p2 - 0.954500) < 5 * sqrt(0.9545 * 0.0455 / (double)n) + slack);
        free(v);
    }
}

static void test_randint_range_and_histogram(void **state)
{
    (void)state;
    lt_manual_seed(13);
    int64_t n = 200000;
    lt_tensor *t = LT_OK_T(lt_randint(-3, 7, &n, 1, LT_I64, lt_test_cpu()));
    assert_int_equal(lt_tensor_dtype(t), LT_I64);
    int64_t *v = malloc(sizeof(int64_t) * (size_t)n);
    assert_non_null(v);
    assert_int_equal(lt_copy_to_host(t, v, sizeof(int64_t) * (size_t)n), LT_OK);
    int64_t hist[10] = {0};
    for (int64_t i = 0; i < n; i++) {
        assert_true(v[i] >= -3 && v[i] < 7);
        hist[v[i] + 3]++;
    }
    free(v);
    /* each bin: binomial(n, 1/10), 5 sigma */
    double expect = (double)n / 10, sd = sqrt((double)n * 0.1 * 0.9);
    for (int b = 0; b < 10; b++)
        assert_true(fabs((double)hist[b] - expect) < 5 * sd);
}

static void test_randint_every_dtype(void **state)
{
    (void)state;
    lt_manual_seed(14);
    int64_t n = 20000;
    for (size_t k = 0; k < sizeof randint_dtypes / sizeof randint_dtypes[0]; k++) {
        lt_dtype dt = randint_dtypes[k];
        /* the widest range each dtype allows */
        int64_t low, high;
        switch (dt) {
        case LT_U8: low = 0, high = 256; break;
        case LT_I32: low = INT32_MIN, high = (int64_t)INT32_MAX + 1; break;
        case LT_BF16: low = -256, high = 257; break;
        case LT_F16: low = -2048, high = 2049; break;
        case LT_F32: low = -(1 << 24), high = (1 << 24) + 1; break;
        default: low = -(INT64_C(1) << 53), high = INT64_C(1) << 53; break;
        }
        lt_tensor *t = LT_OK_T(lt_randint(low, high, &n, 1, dt, lt_test_cpu()));
        assert_int_equal(lt_tensor_dtype(t), dt);
        double *v = values_of(t);
        double lo = INFINITY, hi = -INFINITY;
        for (int64_t i = 0; i < n; i++) {
            assert_true(v[i] == floor(v[i]));
            assert_true(v[i] >= (double)low && v[i] < (double)high);
            lo = v[i] < lo ? v[i] : lo;
            hi = v[i] > hi ? v[i] : hi;
        }
        /* both halves of the range are reached */
        double mid = ((double)low + (double)high) / 2, quarter = ((double)high - (double)low) / 4;
        assert_true(lo < mid - quarter && hi > mid + quarter);
        free(v);
        /* a tiny range of one value */
        double *five = values_of(LT_OK_T(lt_randint(5, 6, (int64_t[]){3}, 1, dt, lt_test_cpu())));
        assert_true(five[0] == 5 && five[1] == 5 && five[2] == 5);
        free(five);
    }
    /* u8 over its full range: every value 0..255 appears */
    int64_t m = 100000;
    double *v = values_of(LT_OK_T(lt_randint(0, 256, &m, 1, LT_U8, lt_test_cpu())));
    int seen[256] = {0};
    for (int64_t i = 0; i < m; i++)
        seen[(int)v[i]] = 1;
    for (int k = 0; k < 256; k++)
        assert_int_equal(seen[k], 1);
    free(v);
}

static void test_shapes_and_dtypes(void **state)
{
    (void)state;
    lt_tensor *s = LT_OK_T(lt_rand(NULL, 0, LT_F64, lt_test_cpu()));
    assert_int_equal(lt_tensor_ndim(s), 0);
    double x = -1;
    assert_int_equal(lt_item(s, &x), LT_OK);
    assert_true(x >= 0 && x < 1);
    lt_tensor *e = LT_OK_T(lt_randn((int64_t[]){3, 0, 2}, 3, LT_F16, lt_test_cpu()));
    LT_ASSERT_SHAPE(e, 3, 0, 2);
    lt_tensor *one = LT_OK_T(lt_randint(0, 3, (int64_t[]){1, 1, 1}, 3, LT_U8, lt_test_cpu()));
    LT_ASSERT_SHAPE(one, 1, 1, 1);
    assert_int_equal(lt_tensor_dtype(one), LT_U8);
    for (size_t k = 0; k < sizeof float_dtypes / sizeof float_dtypes[0]; k++) {
        lt_tensor *t = LT_OK_T(lt_randn((int64_t[]){2, 3, 4}, 3, float_dtypes[k], lt_test_cpu()));
        LT_ASSERT_SHAPE(t, 2, 3, 4);
        assert_int_equal(lt_tensor_dtype(t), float_dtypes[k]);
        assert_true(lt_tensor_is_contiguous(t));
    }
}

/* ---- bad input ---------------------------------------------------------------- */

static void test_bad_input(void **state)
{
    (void)state;
    lt_device cpu = lt_test_cpu();
    lt_manual_seed(0);
    assert_null(lt_rand((int64_t[]){3}, 1, LT_I32, cpu));
    LT_EXPECT_ERROR(LT_ERR_DTYPE, "rand: dtype i32 is not floating");
    assert_null(lt_randn((int64_t[]){3}, 1, LT_BOOL, cpu));
    LT_EXPECT_ERROR(LT_ERR_DTYPE, "randn: dtype bool is not floating");
    assert_null(lt_rand((int64_t[]){3}, 1, (lt_dtype)42, cpu));
    LT_EXPECT_ERROR(LT_ERR_DTYPE, "invalid dtype 42");
    assert_null(lt_randint(0, 2, (int64_t[]){3}, 1, LT_BOOL, cpu));
    LT_EXPECT_ERROR(LT_ERR_DTYPE, "randint: dtype bool is not supported");
    assert_null(lt_randint(5, 5, (int64_t[]){3}, 1, LT_I64, cpu));
    LT_EXPECT_ERROR(LT_ERR_ARGUMENT, "randint: high (5) must be greater than low (5)");
    assert_null(lt_randint(5, -1, (int64_t[]){3}, 1, LT_I64, cpu));
    LT_EXPECT_ERROR(LT_ERR_ARGUMENT, "greater than low");
    assert_null(lt_randint(0, 257, (int64_t[]){3}, 1, LT_U8, cpu));
    LT_EXPECT_ERROR(LT_ERR_ARGUMENT, "randint: range [0, 257) does not fit dtype u8");
    assert_null(lt_randint(-1, 10, (int64_t[]){3}, 1, LT_U8, cpu));
    LT_EXPECT_ERROR(LT_ERR_ARGUMENT, "does not fit dtype u8 (values must lie in [0, 255])");
    assert_null(lt_randint(0, (int64_t)INT32_MAX + 2, (int64_t[]){3}, 1, LT_I32, cpu));
    LT_EXPECT_ERROR(LT_ERR_ARGUMENT, "does not fit dtype i32");
    assert_null(lt_randint(0, 258, (int64_t[]){3}, 1, LT_BF16, cpu));
    LT_EXPECT_ERROR(LT_ERR_ARGUMENT, "does not fit dtype bf16 (values must lie in [-256, 256])");
    assert_null(lt_randint(0, INT64_MAX, (int64_t[]){3}, 1, LT_I64, cpu));
    LT_EXPECT_ERROR(LT_ERR_ARGUMENT, "bounds are limited to 2^53");
    assert_null(lt_randint(INT64_MIN, 0, (int64_t[]){3}, 1, LT_F64, cpu));
    LT_EXPECT_ERROR(LT_ERR_ARGUMENT, "does not fit dtype f64");
    assert_null(lt_rand((int64_t[]){2, -3}, 2, LT_F32, cpu));
    LT_EXPECT_ERROR(LT_ERR_SHAPE, "rand: negative size -3 at dim 1 of shape [2, -3]");
    assert_null(lt_randint(0, 3, (int64_t[]){-1}, 1, LT_I64, cpu));
    LT_EXPECT_ERROR(LT_ERR_SHAPE, "randint: negative size -1");
    assert_null(lt_randn((int64_t[]){INT64_C(1) << 40, INT64_C(1) << 40}, 2, LT_F32, cpu));
    LT_EXPECT_ERROR(LT_ERR_MEMORY, "randn: shape [1099511627776, 1099511627776] of f32 is larger");
    assert_null(lt_rand((int64_t[]){1, 1, 1, 1, 1, 1, 1, 1, 1}, 9, LT_F32, cpu));
    LT_EXPECT_ERROR(LT_ERR_SHAPE, "rand: 9 dims requested, expected 0..8");
    assert_null(lt_rand(NULL, -1, LT_F32, cpu));
    LT_EXPECT_ERROR(LT_ERR_SHAPE, "rand: -1 dims requested");
    assert_null(lt_randn(NULL, 2, LT_F32, cpu));
    LT_EXPECT_ERROR(LT_ERR_NULL, "randn: dims is NULL but ndim is 2");
    lt_device bad = {LT_DEVICE_INVALID, 0};
    assert_null(lt_rand((int64_t[]){2}, 1, LT_F32, bad));
    LT_EXPECT_ERROR(LT_ERR_DEVICE, "rand: invalid device");
    /* failed calls consume no counters */
    assert_true(rng_offset() == 0);
}

static void test_offset_limits(void **state)
{
    (void)state;
    uint64_t limit = UINT64_C(1) << 53;
    lt_manual_seed(9);
    lt_rng_set_state(1, limit + 1);
    LT_EXPECT_ERROR(LT_ERR_ARGUMENT, "rng_set_state: offset 9007199254740993 is above the maximum");
    uint64_t seed, offset;
    lt_rng_get_state(&seed, &offset);
    assert_true(seed == 9 && offset == 0); /* unchanged */
    lt_rng_set_state(1, limit - 1);
    assert_null(lt_rand((int64_t[]){8}, 1, LT_F32, lt_test_cpu())); /* needs 2 counters */
    LT_EXPECT_ERROR(LT_ERR_STATE, "rand: the generator offset 9007199254740991 cannot advance by 2");
    assert_true(rng_offset() == limit - 1);
    LT_OK_T(lt_rand((int64_t[]){4}, 1, LT_F32, lt_test_cpu())); /* exactly the last one */
    assert_true(rng_offset() == limit);
    lt_manual_seed(9);
    assert_true(rng_offset() == 0);
}

int main(void)
{
    /* must run before any other random call: the initial state */
    uint64_t seed = 0, offset = 1;
    lt_rng_get_state(&seed, &offset);
    if (seed != UINT64_C(67280421310721) || offset != 0) {
        fprintf(stderr, "unexpected initial generator state %llu/%llu\n", (unsigned long long)seed,
                (unsigned long long)offset);
        return 1;
    }
    const struct CMUnitTest tests[] = {
        LT_TEST(test_philox_known_answers),
        LT_TEST(test_rand_f32_layout),
        LT_TEST(test_rand_f64_and_randint_layout),
        LT_TEST(test_randn_layout),
        LT_TEST(test_counters_consumed),
        LT_TEST(test_same_seed_same_values),
        LT_TEST(test_consecutive_calls_differ),
        LT_TEST(test_state_save_and_replay),
        LT_TEST(test_same_result_for_any_thread_count),
        LT_TEST(test_rand_uniform_statistics),
        LT_TEST(test_randn_normal_statistics),
        LT_TEST(test_randint_range_and_histogram),
        LT_TEST(test_randint_every_dtype),
        LT_TEST(test_shapes_and_dtypes),
        LT_TEST(test_bad_input),
        LT_TEST(test_offset_limits),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
