/* test_hostile_shapes.c - sizes that overflow 64-bit arithmetic: every
 * factory, broadcast, view, cat/stack, matmul, conv2d and one_hot refuses
 * them with a clear error instead of multiplying past 2^63. A shape with a
 * 0 size has no elements, but its other sizes must still span at most
 * 2^59 bytes (strides and byte offsets of it and its views fit in 64
 * bits); shapes within that bound work. Each case runs on cpu and on the
 * lazy device with both backends (interp and cpu). */
#include "lt_test.h"

#include <unistd.h>

#define P(k) ((int64_t)1 << (k))
#define HUGE0 (const int64_t[]){P(62), P(62), 0}, 3 /* 0 elements, span 2^124 */
#define HUGE0_TEXT "shape [4611686018427387904, 4611686018427387904, 0]"
#define EMPTY_TOO_LARGE "has 0 elements but is too large"

typedef void (*device_case)(lt_device dev);

/* Runs body in a scope of its own (nothing it leaves pending reaches
 * the next device's barriers). */
static void run_scoped(device_case body, lt_device dev)
{
    lt_scope_begin();
    body(dev);
    lt_scope_end();
}

/* Runs body on cpu, lazy + interp and lazy + cpu (compiled). */
static void on_every_device(device_case body)
{
    run_scoped(body, lt_device_cpu());
    static const char *const backends[] = {"interp", "cpu"};
    for (int b = 0; b < 2; b++) {
        if (lt_lazy_set_backend(backends[b]) != LT_OK) {
            print_message("lazy backend %s unavailable (%s): skipped\n", backends[b], lt_last_error());
            lt_clear_error();
            continue;
        }
        run_scoped(body, lt_device_parse("lazy"));
    }
    assert_int_equal(lt_lazy_set_backend("interp"), LT_OK);
}

static void assert_item(lt_tensor *t, double expected)
{
    double v = -1;
    assert_int_equal(lt_item(LT_OK_T(t), &v), LT_OK);
    assert_true(v == expected);
}

/* ---- factories --------------------------------------------------------- */

static void factories_case(lt_device dev)
{
    assert_null(lt_empty(HUGE0, LT_F32, dev));
    LT_EXPECT_ERROR(LT_ERR_SHAPE, "empty: " HUGE0_TEXT " of f32 " EMPTY_TOO_LARGE);
    assert_null(lt_zeros(HUGE0, LT_F64, dev));
    LT_EXPECT_ERROR(LT_ERR_SHAPE, "full: " HUGE0_TEXT " of f64 " EMPTY_TOO_LARGE);
    assert_null(lt_ones(HUGE0, LT_I32, dev));
    LT_EXPECT_ERROR(LT_ERR_SHAPE, EMPTY_TOO_LARGE);
    assert_null(lt_full(HUGE0, 2.5, LT_F32, dev));
    LT_EXPECT_ERROR(LT_ERR_SHAPE, EMPTY_TOO_LARGE);
    assert_null(lt_rand(HUGE0, LT_F32, dev));
    LT_EXPECT_ERROR(LT_ERR_SHAPE, "rand: " HUGE0_TEXT);
    assert_null(lt_randn(HUGE0, LT_F32, dev));
    LT_EXPECT_ERROR(LT_ERR_SHAPE, "randn: " HUGE0_TEXT);
    assert_null(lt_randint(0, 5, HUGE0, LT_I64, dev));
    LT_EXPECT_ERROR(LT_ERR_SHAPE, "randint: " HUGE0_TEXT);
    assert_null(lt_from_data(NULL, HUGE0, LT_U8, dev));
    LT_EXPECT_ERROR(LT_ERR_SHAPE, "from_data: " HUGE0_TEXT " of u8 " EMPTY_TOO_LARGE);
    assert_null(lt_eye(P(62), 0, LT_F32, dev));
    LT_EXPECT_ERROR(LT_ERR_SHAPE, "eye: shape [4611686018427387904, 0] of f32 " EMPTY_TOO_LARGE);
    /* with elements, a product past 2^63 is named as such */
    assert_null(lt_empty((const int64_t[]){P(62), P(62), 1}, 3, LT_F32, dev));
    LT_EXPECT_ERROR(LT_ERR_MEMORY, "has more than 2^63 - 1 elements");
    assert_null(lt_linspace(0, 1, P(62), LT_F32, dev));
    LT_EXPECT_ERROR(LT_ERR_MEMORY, "linspace: shape [4611686018427387904] of f32 is larger");
    assert_null(lt_arange(-1e308, 1e308, 1e-300, LT_F64, dev));
    LT_EXPECT_ERROR(LT_ERR_MEMORY, "arange");
}

static void test_factories_refuse_overflowing_shapes(void **state)
{
    (void)state;
    on_every_device(factories_case);
}

/* 0 elements with a span of 2^52 bytes: representable, so accepted, and
 * every op on it handles the 0 (reductions give their identity). */
static void large_empty_case(lt_device dev)
{
    lt_tensor *t = LT_OK_T(lt_empty((const int64_t[]){P(40), P(10), 0}, 3, LT_F32, dev));
    assert_int_equal(lt_tensor_numel(t), 0);
    LT_ASSERT_SHAPE(t, P(40), P(10), 0);
    const int64_t *s = lt_tensor_strides(t);
    assert_true(s[0] == P(10) && s[1] == 1 && s[2] == 1);
    assert_int_equal(lt_tensor_ndim(LT_OK_T(lt_sum(t, NULL, 0, false))), 0);
    LT_ASSERT_SHAPE(lt_sum(t, (const int[]){0}, 1, false), P(10), 0);
    LT_ASSERT_SHAPE(lt_flatten(t, 0, 1), P(50), 0);
    LT_ASSERT_SHAPE(lt_clone(lt_transpose(t, 0, 2)), 0, P(10), P(40));
    /* reducing the 0 away leaves 2^50 elements: more than memory */
    assert_null(lt_sum(t, (const int[]){2}, 1, false));
    LT_EXPECT_ERROR(LT_ERR_MEMORY, "sum: shape [1099511627776, 1024] of f32 is larger than this machine's memory");
}

/* Reductions over empty tensors whose other sizes are large give their
 * identity at once (no program steps through the 2^50 nonzero positions). */
static void empty_values_case(lt_device dev)
{
    lt_tensor *t = LT_OK_T(lt_empty((const int64_t[]){P(40), P(10), 0}, 3, LT_F32, dev));
    assert_item(lt_sum(t, NULL, 0, false), 0.0);
    assert_item(lt_prod(lt_transpose(t, 0, 2), NULL, 0, false), 1.0);
    lt_tensor *a = LT_OK_T(lt_empty((const int64_t[]){P(40), 1, 0}, 3, LT_U8, dev));
    lt_tensor *b = LT_OK_T(lt_empty((const int64_t[]){1, P(10), 0}, 3, LT_U8, dev));
    assert_item(lt_sum(lt_add(a, b), NULL, 0, false), 0.0);
    assert_item(lt_sum(lt_expand(lt_to_dtype(a, LT_F32), (const int64_t[]){P(40), P(10), 0}, 3), NULL, 0, false), 0.0);
}

static void test_large_empty_shapes_work(void **state)
{
    (void)state;
    on_every_device(large_empty_case);
    on_every_device(empty_values_case);
}

/* ---- broadcasting -------------------------------------------------------- */

static void broadcast_case(lt_device dev)
{
    /* each input spans 2^31 bytes; their broadcast would span 2^62 */
    lt_tensor *a = LT_OK_T(lt_empty((const int64_t[]){P(31), 1, 0}, 3, LT_U8, dev));
    lt_tensor *b = LT_OK_T(lt_empty((const int64_t[]){1, P(31), 0}, 3, LT_U8, dev));
    assert_null(lt_add(a, b));
    LT_EXPECT_ERROR(LT_ERR_SHAPE, "add: shape [2147483648, 2147483648, 0] of u8 " EMPTY_TOO_LARGE);
    assert_null(lt_where(lt_eq(a, b), a, b));
    LT_EXPECT_ERROR(LT_ERR_SHAPE, EMPTY_TOO_LARGE);
    /* the inputs whose broadcast product overflows int64 cannot even exist */
    assert_null(lt_empty((const int64_t[]){P(62), 1, 0}, 3, LT_U8, dev));
    LT_EXPECT_ERROR(LT_ERR_SHAPE, EMPTY_TOO_LARGE);
    lt_tensor *c = LT_OK_T(lt_add(a, LT_OK_T(lt_empty((const int64_t[]){1, 4, 0}, 3, LT_U8, dev))));
    LT_ASSERT_SHAPE(c, P(31), 4, 0);
}

static void test_broadcast_refuses_overflowing_shapes(void **state)
{
    (void)state;
    on_every_device(broadcast_case);
}

/* ---- views ------------------------------------------------------------------ */

static void views_case(lt_device dev)
{
    lt_tensor *e = LT_OK_T(lt_empty((const int64_t[]){0}, 1, LT_F32, dev));
    assert_null(lt_reshape(e, HUGE0));
    LT_EXPECT_ERROR(LT_ERR_SHAPE, "reshape: " HUGE0_TEXT " of f32 " EMPTY_TOO_LARGE);
    assert_null(lt_view(e, HUGE0));
    LT_EXPECT_ERROR(LT_ERR_SHAPE, "view: " HUGE0_TEXT " of f32 " EMPTY_TOO_LARGE);
    assert_null(lt_reshape(e, (const int64_t[]){-1, P(61)}, 2));
    LT_EXPECT_ERROR(LT_ERR_SHAPE, "reshape: shape [0, 2305843009213693952] of f32 " EMPTY_TOO_LARGE);
    LT_ASSERT_SHAPE(lt_reshape(e, (const int64_t[]){-1, P(20)}, 2), 0, P(20));
    lt_tensor *six = LT_OK_T(lt_zeros((const int64_t[]){6}, 1, LT_F32, dev));
    assert_null(lt_reshape(six, (const int64_t[]){P(62), P(62)}, 2));
    LT_EXPECT_ERROR(LT_ERR_SHAPE, "shape [4611686018427387904, 4611686018427387904] is invalid for input of shape [6]");
    assert_null(lt_reshape(six, (const int64_t[]){-1, P(62), P(62)}, 3));
    LT_EXPECT_ERROR(LT_ERR_SHAPE, "is invalid for input of shape [6]");

    lt_tensor *x = LT_OK_T(lt_empty((const int64_t[]){1, 1, 0}, 3, LT_U8, dev));
    assert_null(lt_expand(x, HUGE0));
    LT_EXPECT_ERROR(LT_ERR_SHAPE, "expand: " HUGE0_TEXT " of u8 " EMPTY_TOO_LARGE);
    lt_tensor *big = LT_OK_T(lt_expand(x, (const int64_t[]){P(40), P(10), 0}, 3));
    LT_ASSERT_SHAPE(big, P(40), P(10), 0);
    LT_ASSERT_SHAPE(lt_unsqueeze(big, 0), 1, P(40), P(10), 0);
}

static void test_views_refuse_overflowing_shapes(void **state)
{
    (void)state;
    on_every_device(views_case);
}

/* ---- cat and stack --------------------------------------------------------------- */

static void cat_case(lt_device dev)
{
    lt_tensor *parts[32];
    for (int i = 0; i < 32; i++)
        parts[i] = LT_OK_T(lt_empty((const int64_t[]){P(58), 0}, 2, LT_U8, dev));
    /* 32 * 2^58 = 2^63: the sum itself overflows */
    assert_null(lt_cat(parts, 32, 0));
    LT_EXPECT_ERROR(LT_ERR_SHAPE, "cat: the sizes of 32 tensors along dim 0 add up to more than 2^63 - 1");
    assert_null(lt_cat(parts, 5, 0));
    LT_EXPECT_ERROR(LT_ERR_SHAPE, "cat: shape [1441151880758558720, 0] of u8 " EMPTY_TOO_LARGE);
    LT_ASSERT_SHAPE(lt_cat(parts, 2, 0), P(59), 0);
    lt_tensor *rows[16];
    for (int i = 0; i < 16; i++)
        rows[i] = LT_OK_T(lt_empty((const int64_t[]){P(56), 0}, 2, LT_U8, dev));
    assert_null(lt_stack(rows, 16, 0));
    LT_EXPECT_ERROR(LT_ERR_SHAPE, "stack: shape [16, 72057594037927936, 0] of u8 " EMPTY_TOO_LARGE);
    LT_ASSERT_SHAPE(lt_stack(rows, 4, 1), P(56), 4, 0);
}

static void test_cat_and_stack_refuse_overflowing_sizes(void **state)
{
    (void)state;
    on_every_device(cat_case);
}

/* ---- matmul, conv2d, one_hot ------------------------------------------------------ */

static void nn_case(lt_device dev)
{
    lt_tensor *a = LT_OK_T(lt_empty((const int64_t[]){P(30), 1, 0, 4}, 4, LT_F32, dev));
    lt_tensor *b = LT_OK_T(lt_empty((const int64_t[]){1, P(30), 4, 0}, 4, LT_F32, dev));
    assert_null(lt_matmul(a, b));
    LT_EXPECT_ERROR(LT_ERR_SHAPE, "matmul: shape [1073741824, 1073741824, 0, 0] of f32 " EMPTY_TOO_LARGE);
    lt_tensor *wide = LT_OK_T(lt_empty((const int64_t[]){P(40), 0}, 2, LT_F32, dev));
    assert_null(lt_matmul(wide, lt_transpose(wide, 0, 1)));
    LT_EXPECT_ERROR(LT_ERR_MEMORY, "matmul: shape [1099511627776, 1099511627776] of f32 is larger");

    lt_tensor *x = LT_OK_T(lt_empty((const int64_t[]){0, 1, P(28), P(28)}, 4, LT_F32, dev));
    lt_tensor *w = LT_OK_T(lt_zeros((const int64_t[]){P(20), 1, 1, 1}, 4, LT_F32, dev));
    assert_null(lt_conv2d(x, w, NULL, NULL, NULL, NULL, 1));
    LT_EXPECT_ERROR(LT_ERR_SHAPE, "conv2d: shape [0, 1048576, 268435456, 268435456] of f32 " EMPTY_TOO_LARGE);

    lt_tensor *idx = LT_OK_T(lt_empty((const int64_t[]){0}, 1, LT_I64, dev));
    assert_null(lt_one_hot(idx, P(62)));
    LT_EXPECT_ERROR(LT_ERR_SHAPE, "one_hot: shape [0, 4611686018427387904] of i64 " EMPTY_TOO_LARGE);
    LT_ASSERT_SHAPE(lt_one_hot(idx, P(40)), 0, P(40));
}

static void test_nn_shapes_refuse_overflow(void **state)
{
    (void)state;
    on_every_device(nn_case);
}

/* ---- the shape rule itself (white-box) ---------------------------------------------- */

static void test_shape_numel_never_overflows(void **state)
{
    (void)state;
    int64_t n = -1;
    assert_true(lt_shape_numel_checked((const int64_t[]){P(62), P(62), 0}, 3, &n));
    assert_int_equal(n, 0);
    assert_int_equal(lt_shape_numel((const int64_t[]){P(62), P(62), 0}, 3), 0);
    assert_false(lt_shape_numel_checked((const int64_t[]){P(62), P(62)}, 2, &n));
    assert_true(lt_shape_numel((const int64_t[]){P(62), P(62)}, 2) == INT64_MAX);
    assert_true(lt_shape_numel_checked((const int64_t[]){P(31), P(31)}, 2, &n) && n == P(62));
    /* the span limit is inclusive and counts the element size */
    assert_int_equal(lt_check_shape("t", (const int64_t[]){P(57), 0}, 2, LT_F32), LT_OK);
    assert_int_equal(lt_check_shape("t", (const int64_t[]){P(57), 0}, 2, LT_F64), LT_ERR_SHAPE);
    LT_EXPECT_ERROR(LT_ERR_SHAPE, "t: shape [144115188075855872, 0] of f64 " EMPTY_TOO_LARGE);
}

int main(void)
{
    /* compiled programs go to ctest's cache dir or a private one, never
     * to ~/.cache */
    char dir[] = "/tmp/lt_hostile_cache_XXXXXX";
    bool own_cache = !getenv("LT_CACHE_DIR");
    if (own_cache && !mkdtemp(dir))
        return 1;
    if (own_cache)
        setenv("LT_CACHE_DIR", dir, 1);
    const struct CMUnitTest tests[] = {
        LT_TEST(test_factories_refuse_overflowing_shapes),
        LT_TEST(test_large_empty_shapes_work),
        LT_TEST(test_broadcast_refuses_overflowing_shapes),
        LT_TEST(test_views_refuse_overflowing_shapes),
        LT_TEST(test_cat_and_stack_refuse_overflowing_sizes),
        LT_TEST(test_nn_shapes_refuse_overflow),
        LT_TEST(test_shape_numel_never_overflows),
    };
    int failed = cmocka_run_group_tests(tests, NULL, NULL);
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    if (own_cache && system(cmd) != 0)
        failed++;
    return failed;
}
