/* test_print.c - lt_format and lt_print against the exact text of torch
 * 1.13's str(tensor). Every expected string below was produced by Debian's
 * torch 1.13 (/usr/bin/python3) from a tensor built the same way (values
 * made in f64, then cast), and is hard-coded here. */
#include "lt_test.h"

#include <fcntl.h>
#include <unistd.h>

/* Asserts lt_format's text of t equals expected (and its length). */
#define EXPECT_TEXT(t, expected) expect_text((t), (expected), __FILE__, __LINE__)
static void expect_text(lt_tensor *t, const char *expected, const char *file, int line)
{
    if (!t) {
        print_error("%s:%d: tensor is NULL: %s\n", file, line, lt_last_error());
        _fail(file, line);
    }
    int n = lt_format(t, NULL, 0);
    char *buf = malloc((size_t)(n > 0 ? n : 0) + 1);
    assert_non_null(buf);
    int m = lt_format(t, buf, (size_t)n + 1);
    if (n != (int)strlen(expected) || m != n || strcmp(buf, expected) != 0) {
        print_error("%s:%d: lt_format gave (%d bytes)\n%s\nexpected (%d bytes)\n%s\n", file, line, n,
                    buf, (int)strlen(expected), expected);
        free(buf);
        _fail(file, line);
    }
    free(buf);
}

/* A view of t's storage with the given geometry (published to the scope). */
static lt_tensor *view(lt_tensor *t, const int64_t *shape, const int64_t *strides, int ndim,
                       int64_t offset)
{
    return lt_tensor_publish(lt_tensor_view_of(t, shape, strides, ndim, offset));
}

/* t reshaped (contiguous) to dims, as a view. */
static lt_tensor *reshaped(lt_tensor *t, const int64_t *dims, int ndim)
{
    int64_t strides[LT_MAX_DIMS];
    lt_contiguous_strides(dims, ndim, strides);
    return view(t, dims, strides, ndim, lt_tensor_offset(t));
}

/* n values f(i) made in f64, cast to dt (as torch.tensor(..., float64).to(dt)). */
static lt_tensor *generated(int64_t n, double (*f)(int64_t), lt_dtype dt)
{
    double *v = malloc(sizeof(double) * (size_t)n);
    assert_non_null(v);
    for (int64_t i = 0; i < n; i++)
        v[i] = f(i);
    lt_tensor *t = lt_test_tensor(v, &n, 1, dt);
    free(v);
    return LT_OK_T(t);
}

static double half_i(int64_t i) { return (double)i * 0.5; }
static double quarter_i(int64_t i) { return (double)i * 0.25; }
static double i_mod_256(int64_t i) { return (double)(i % 256); }
static double sevenths(int64_t i) { return (double)i / 7.0; }
static double eighths_mod7(int64_t i) { return (double)(i % 7) * 0.125; }
static double half_minus_3(int64_t i) { return (double)i * 0.5 - 3.0; }
static double identity(int64_t i) { return (double)i; }
static double plus_1_5(int64_t i) { return (double)i + 1.5; }

/* ---- basic layouts ------------------------------------------------------- */

static void test_float_vectors_and_matrices(void **state)
{
    (void)state;
    EXPECT_TEXT(LT_T(LT_F32, LT_DIMS(3), 1, 2, 3), "tensor([1., 2., 3.])");
    EXPECT_TEXT(LT_T(LT_F32, LT_DIMS(2, 2), 1.5, 2, 3, 4),
        "tensor([[1.5000, 2.0000],\n"
        "        [3.0000, 4.0000]])");
    EXPECT_TEXT(LT_T(LT_F32, LT_DIMS(2), 0.1, 0.2), "tensor([0.1000, 0.2000])");
    EXPECT_TEXT(LT_T(LT_F32, LT_DIMS(3), 0, 0, 0), "tensor([0., 0., 0.])");
    EXPECT_TEXT(LT_T(LT_F32, LT_DIMS(2), -0.0, 1), "tensor([-0., 1.])");
    EXPECT_TEXT(LT_T(LT_F32, LT_DIMS(2), 100, -2), "tensor([100.,  -2.])");
    EXPECT_TEXT(LT_T(LT_F32, LT_DIMS(2, 1), 1, 2),
        "tensor([[1.],\n"
        "        [2.]])");
    EXPECT_TEXT(LT_T(LT_F32, LT_DIMS(1, 1, 1), 1), "tensor([[[1.]]])");
}

static void test_negative_alignment(void **state)
{
    (void)state;
    EXPECT_TEXT(LT_T(LT_F32, LT_DIMS(2, 2), -1.5, 2, 3, -40.25),
        "tensor([[ -1.5000,   2.0000],\n"
        "        [  3.0000, -40.2500]])");
    EXPECT_TEXT(LT_T(LT_I64, LT_DIMS(3), -1000, 5, 42), "tensor([-1000,     5,    42])");
    EXPECT_TEXT(LT_T(LT_F64, LT_DIMS(3), 1.5, 2.25, -3.0),
        "tensor([ 1.5000,  2.2500, -3.0000], dtype=torch.float64)");
}

static void test_scalars(void **state)
{
    (void)state;
    lt_device cpu = lt_test_cpu();
    EXPECT_TEXT(lt_scalar(3, LT_F32, cpu), "tensor(3.)");
    EXPECT_TEXT(lt_scalar(-2.5, LT_F32, cpu), "tensor(-2.5000)");
    EXPECT_TEXT(lt_scalar(1, LT_BOOL, cpu), "tensor(True)");
    EXPECT_TEXT(lt_scalar(5, LT_I32, cpu), "tensor(5, dtype=torch.int32)");
    EXPECT_TEXT(lt_scalar(-7, LT_I64, cpu), "tensor(-7)");
}

static void test_empty_tensors(void **state)
{
    (void)state;
    lt_device cpu = lt_test_cpu();
    EXPECT_TEXT(lt_zeros((int64_t[]){0, 3}, 2, LT_F32, cpu), "tensor([], size=(0, 3))");
    EXPECT_TEXT(lt_zeros((int64_t[]){0}, 1, LT_F32, cpu), "tensor([])");
    EXPECT_TEXT(lt_zeros((int64_t[]){0}, 1, LT_I64, cpu), "tensor([], dtype=torch.int64)");
    EXPECT_TEXT(lt_zeros((int64_t[]){2, 0, 1}, 3, LT_I32, cpu),
        "tensor([], size=(2, 0, 1), dtype=torch.int32)");
    EXPECT_TEXT(lt_zeros((int64_t[]){0}, 1, LT_BOOL, cpu), "tensor([], dtype=torch.bool)");
}

/* ---- dtypes ---------------------------------------------------------------- */

static void test_integer_and_bool_dtypes(void **state)
{
    (void)state;
    EXPECT_TEXT(LT_T(LT_I64, LT_DIMS(3), 1, 2, 3), "tensor([1, 2, 3])");
    EXPECT_TEXT(LT_T(LT_I32, LT_DIMS(3), 1, -2, 300), "tensor([  1,  -2, 300], dtype=torch.int32)");
    EXPECT_TEXT(LT_T(LT_U8, LT_DIMS(3), 0, 7, 255), "tensor([  0,   7, 255], dtype=torch.uint8)");
    EXPECT_TEXT(LT_T(LT_BOOL, LT_DIMS(2), 1, 0), "tensor([ True, False])");
    EXPECT_TEXT(LT_T(LT_BOOL, LT_DIMS(2, 3), 1, 0, 1, 0, 0, 1),
        "tensor([[ True, False,  True],\n"
        "        [False, False,  True]])");
    /* i64 values print exactly, even beyond 2^53 */
    int64_t extremes[2] = {INT64_MIN, INT64_MAX};
    EXPECT_TEXT(lt_from_data(extremes, (int64_t[]){2}, 1, LT_I64, lt_test_cpu()),
        "tensor([-9223372036854775808,  9223372036854775807])");
}

static void test_half_dtypes(void **state)
{
    (void)state;
    EXPECT_TEXT(LT_T(LT_BF16, LT_DIMS(3), 0.1, 1.0 / 3, 2.0),
        "tensor([0.1001, 0.3340, 2.0000], dtype=torch.bfloat16)");
    EXPECT_TEXT(LT_T(LT_F16, LT_DIMS(3), 0.1, 1.0 / 3, 1000.0),
        "tensor([9.9976e-02, 3.3325e-01, 1.0000e+03], dtype=torch.float16)");
    EXPECT_TEXT(LT_T(LT_F16, LT_DIMS(3), 0.5, -1.25, 3.0),
        "tensor([ 0.5000, -1.2500,  3.0000], dtype=torch.float16)");
}

/* ---- scientific notation and non-finite values ------------------------------ */

static void test_scientific_mode(void **state)
{
    (void)state;
    EXPECT_TEXT(LT_T(LT_F32, LT_DIMS(2), 1e-5, 1e5), "tensor([1.0000e-05, 1.0000e+05])");
    EXPECT_TEXT(LT_T(LT_F32, LT_DIMS(2), 1, 1e9), "tensor([1.0000e+00, 1.0000e+09])");
    EXPECT_TEXT(LT_T(LT_F32, LT_DIMS(2), 123456.789, 0.5), "tensor([1.2346e+05, 5.0000e-01])");
    EXPECT_TEXT(LT_T(LT_F64, LT_DIMS(2), 1e-300, 1),
        "tensor([1.0000e-300,  1.0000e+00], dtype=torch.float64)");
    EXPECT_TEXT(LT_T(LT_F32, LT_DIMS(3), 1e-8, -2.5, NAN),
        "tensor([ 1.0000e-08, -2.5000e+00,         nan])");
}

static void test_nan_and_inf(void **state)
{
    (void)state;
    EXPECT_TEXT(LT_T(LT_F32, LT_DIMS(3), NAN, INFINITY, -INFINITY), "tensor([nan, inf, -inf])");
    EXPECT_TEXT(LT_T(LT_F32, LT_DIMS(3), 1.5, NAN, -INFINITY), "tensor([1.5000,    nan,   -inf])");
    /* a NaN with its sign bit set still prints "nan", like Python */
    EXPECT_TEXT(LT_T(LT_F32, LT_DIMS(3), -NAN, INFINITY, -INFINITY), "tensor([nan, inf, -inf])");
}

/* ---- line wrapping and suffix placement ------------------------------------- */

static void test_line_wrapping(void **state)
{
    (void)state;
    EXPECT_TEXT(generated(30, sevenths, LT_F32),
        "tensor([0.0000, 0.1429, 0.2857, 0.4286, 0.5714, 0.7143, 0.8571, 1.0000, 1.1429,\n"
        "        1.2857, 1.4286, 1.5714, 1.7143, 1.8571, 2.0000, 2.1429, 2.2857, 2.4286,\n"
        "        2.5714, 2.7143, 2.8571, 3.0000, 3.1429, 3.2857, 3.4286, 3.5714, 3.7143,\n"
        "        3.8571, 4.0000, 4.1429])");
    EXPECT_TEXT(LT_OK_T(lt_arange(0, 100, 1, LT_I64, lt_test_cpu())),
        "tensor([ 0,  1,  2,  3,  4,  5,  6,  7,  8,  9, 10, 11, 12, 13, 14, 15, 16, 17,\n"
        "        18, 19, 20, 21, 22, 23, 24, 25, 26, 27, 28, 29, 30, 31, 32, 33, 34, 35,\n"
        "        36, 37, 38, 39, 40, 41, 42, 43, 44, 45, 46, 47, 48, 49, 50, 51, 52, 53,\n"
        "        54, 55, 56, 57, 58, 59, 60, 61, 62, 63, 64, 65, 66, 67, 68, 69, 70, 71,\n"
        "        72, 73, 74, 75, 76, 77, 78, 79, 80, 81, 82, 83, 84, 85, 86, 87, 88, 89,\n"
        "        90, 91, 92, 93, 94, 95, 96, 97, 98, 99])");
    EXPECT_TEXT(LT_T(LT_F64, LT_DIMS(9), 1.5, 2.5, 3.5, 4.5, 5.5, 6.5, 7.5, 8.5, 9.5),
        "tensor([1.5000, 2.5000, 3.5000, 4.5000, 5.5000, 6.5000, 7.5000, 8.5000, 9.5000],\n"
        "       dtype=torch.float64)");
    /* at the edge: 57 columns + ", " + suffix + 2 is 81 for bf16 (wraps) but
     * 80 for f16 (fits) */
    EXPECT_TEXT(lt_full((int64_t[]){10}, 1, 10, LT_BF16, lt_test_cpu()),
                "tensor([10., 10., 10., 10., 10., 10., 10., 10., 10., 10.],\n"
                "       dtype=torch.bfloat16)");
    EXPECT_TEXT(lt_full((int64_t[]){10}, 1, 10, LT_F16, lt_test_cpu()),
                "tensor([10., 10., 10., 10., 10., 10., 10., 10., 10., 10.], dtype=torch.float16)");
    EXPECT_TEXT(reshaped(generated(18, plus_1_5, LT_F64), (int64_t[]){2, 9}, 2),
        "tensor([[ 1.5000,  2.5000,  3.5000,  4.5000,  5.5000,  6.5000,  7.5000,  8.5000,\n"
        "          9.5000],\n"
        "        [10.5000, 11.5000, 12.5000, 13.5000, 14.5000, 15.5000, 16.5000, 17.5000,\n"
        "         18.5000]], dtype=torch.float64)");
}

/* ---- more dims and strided input --------------------------------------------- */

static void test_three_and_four_dims(void **state)
{
    (void)state;
    lt_tensor *a24 = LT_OK_T(lt_arange(0, 24, 1, LT_I64, lt_test_cpu()));
    EXPECT_TEXT(reshaped(a24, (int64_t[]){2, 3, 4}, 3),
        "tensor([[[ 0,  1,  2,  3],\n"
        "         [ 4,  5,  6,  7],\n"
        "         [ 8,  9, 10, 11]],\n"
        "\n"
        "        [[12, 13, 14, 15],\n"
        "         [16, 17, 18, 19],\n"
        "         [20, 21, 22, 23]]])");
    EXPECT_TEXT(reshaped(generated(12, half_minus_3, LT_F32), (int64_t[]){2, 2, 3}, 3),
        "tensor([[[-3.0000, -2.5000, -2.0000],\n"
        "         [-1.5000, -1.0000, -0.5000]],\n"
        "\n"
        "        [[ 0.0000,  0.5000,  1.0000],\n"
        "         [ 1.5000,  2.0000,  2.5000]]])");
    /* rows at indent 9 hold (80 - 9) / (4 + 2) = 11 four-digit numbers */
    lt_tensor *a1000 = LT_OK_T(lt_arange(1000, 1024, 1, LT_I64, lt_test_cpu()));
    EXPECT_TEXT(reshaped(a1000, (int64_t[]){2, 1, 12}, 3),
                "tensor([[[1000, 1001, 1002, 1003, 1004, 1005, 1006, 1007, 1008, 1009, 1010,\n"
                "          1011]],\n"
                "\n"
                "        [[1012, 1013, 1014, 1015, 1016, 1017, 1018, 1019, 1020, 1021, 1022,\n"
                "          1023]]])");
    lt_tensor *a16 = LT_OK_T(lt_arange(0, 16, 1, LT_I64, lt_test_cpu()));
    EXPECT_TEXT(reshaped(a16, (int64_t[]){2, 2, 2, 2}, 4),
        "tensor([[[[ 0,  1],\n"
        "          [ 2,  3]],\n"
        "\n"
        "         [[ 4,  5],\n"
        "          [ 6,  7]]],\n"
        "\n"
        "\n"
        "        [[[ 8,  9],\n"
        "          [10, 11]],\n"
        "\n"
        "         [[12, 13],\n"
        "          [14, 15]]]])");
}

static void test_non_contiguous_input(void **state)
{
    (void)state;
    lt_tensor *m = LT_T(LT_F32, LT_DIMS(2, 3), 0, 1, 2, 3, 4, 5);
    lt_tensor *t = view(m, (int64_t[]){3, 2}, (int64_t[]){1, 3}, 2, 0); /* m.t() */
    assert_false(lt_tensor_is_contiguous(t));
    EXPECT_TEXT(t,
        "tensor([[0., 3.],\n"
        "        [1., 4.],\n"
        "        [2., 5.]])");
    lt_tensor *r = generated(10, identity, LT_F32);
    EXPECT_TEXT(view(r, (int64_t[]){4}, (int64_t[]){3}, 1, 0),
        "tensor([0., 3., 6., 9.])");        /* r[::3] */
    EXPECT_TEXT(view(r, (int64_t[]){3}, (int64_t[]){3}, 1, 1),
        "tensor([1., 4., 7.])"); /* r[1::3] */
    lt_tensor *row = LT_T(LT_F32, LT_DIMS(2), 1.5, 2.5);
    EXPECT_TEXT(view(row, (int64_t[]){3, 2}, (int64_t[]){0, 1}, 2, 0),
        "tensor([[1.5000, 2.5000],\n"
        "        [1.5000, 2.5000],\n"
        "        [1.5000, 2.5000]])");
}

/* ---- summarization above 1000 elements --------------------------------------- */

static void test_summarized(void **state)
{
    (void)state;
    lt_device cpu = lt_test_cpu();
    EXPECT_TEXT(LT_OK_T(lt_arange(0, 2000, 1, LT_I64, cpu)),
        "tensor([   0,    1,    2,  ..., 1997, 1998, 1999])");
    EXPECT_TEXT(reshaped(generated(1600, half_i, LT_F32), (int64_t[]){40, 40}, 2),
        "tensor([[0.0000e+00, 5.0000e-01, 1.0000e+00,  ..., 1.8500e+01, 1.9000e+01,\n"
        "         1.9500e+01],\n"
        "        [2.0000e+01, 2.0500e+01, 2.1000e+01,  ..., 3.8500e+01, 3.9000e+01,\n"
        "         3.9500e+01],\n"
        "        [4.0000e+01, 4.0500e+01, 4.1000e+01,  ..., 5.8500e+01, 5.9000e+01,\n"
        "         5.9500e+01],\n"
        "        ...,\n"
        "        [7.4000e+02, 7.4050e+02, 7.4100e+02,  ..., 7.5850e+02, 7.5900e+02,\n"
        "         7.5950e+02],\n"
        "        [7.6000e+02, 7.6050e+02, 7.6100e+02,  ..., 7.7850e+02, 7.7900e+02,\n"
        "         7.7950e+02],\n"
        "        [7.8000e+02, 7.8050e+02, 7.8100e+02,  ..., 7.9850e+02, 7.9900e+02,\n"
        "         7.9950e+02]])");
    lt_tensor *cube = LT_OK_T(lt_arange(0, 11 * 11 * 11, 1, LT_I64, cpu));
    EXPECT_TEXT(reshaped(cube, (int64_t[]){11, 11, 11}, 3),
        "tensor([[[   0,    1,    2,  ...,    8,    9,   10],\n"
        "         [  11,   12,   13,  ...,   19,   20,   21],\n"
        "         [  22,   23,   24,  ...,   30,   31,   32],\n"
        "         ...,\n"
        "         [  88,   89,   90,  ...,   96,   97,   98],\n"
        "         [  99,  100,  101,  ...,  107,  108,  109],\n"
        "         [ 110,  111,  112,  ...,  118,  119,  120]],\n"
        "\n"
        "        [[ 121,  122,  123,  ...,  129,  130,  131],\n"
        "         [ 132,  133,  134,  ...,  140,  141,  142],\n"
        "         [ 143,  144,  145,  ...,  151,  152,  153],\n"
        "         ...,\n"
        "         [ 209,  210,  211,  ...,  217,  218,  219],\n"
        "         [ 220,  221,  222,  ...,  228,  229,  230],\n"
        "         [ 231,  232,  233,  ...,  239,  240,  241]],\n"
        "\n"
        "        [[ 242,  243,  244,  ...,  250,  251,  252],\n"
        "         [ 253,  254,  255,  ...,  261,  262,  263],\n"
        "         [ 264,  265,  266,  ...,  272,  273,  274],\n"
        "         ...,\n"
        "         [ 330,  331,  332,  ...,  338,  339,  340],\n"
        "         [ 341,  342,  343,  ...,  349,  350,  351],\n"
        "         [ 352,  353,  354,  ...,  360,  361,  362]],\n"
        "\n"
        "        ...,\n"
        "\n"
        "        [[ 968,  969,  970,  ...,  976,  977,  978],\n"
        "         [ 979,  980,  981,  ...,  987,  988,  989],\n"
        "         [ 990,  991,  992,  ...,  998,  999, 1000],\n"
        "         ...,\n"
        "         [1056, 1057, 1058,  ..., 1064, 1065, 1066],\n"
        "         [1067, 1068, 1069,  ..., 1075, 1076, 1077],\n"
        "         [1078, 1079, 1080,  ..., 1086, 1087, 1088]],\n"
        "\n"
        "        [[1089, 1090, 1091,  ..., 1097, 1098, 1099],\n"
        "         [1100, 1101, 1102,  ..., 1108, 1109, 1110],\n"
        "         [1111, 1112, 1113,  ..., 1119, 1120, 1121],\n"
        "         ...,\n"
        "         [1177, 1178, 1179,  ..., 1185, 1186, 1187],\n"
        "         [1188, 1189, 1190,  ..., 1196, 1197, 1198],\n"
        "         [1199, 1200, 1201,  ..., 1207, 1208, 1209]],\n"
        "\n"
        "        [[1210, 1211, 1212,  ..., 1218, 1219, 1220],\n"
        "         [1221, 1222, 1223,  ..., 1229, 1230, 1231],\n"
        "         [1232, 1233, 1234,  ..., 1240, 1241, 1242],\n"
        "         ...,\n"
        "         [1298, 1299, 1300,  ..., 1306, 1307, 1308],\n"
        "         [1309, 1310, 1311,  ..., 1317, 1318, 1319],\n"
        "         [1320, 1321, 1322,  ..., 1328, 1329, 1330]]])");
    EXPECT_TEXT(reshaped(generated(2000, quarter_i, LT_F32), (int64_t[]){2, 1000}, 2),
        "tensor([[0.0000e+00, 2.5000e-01, 5.0000e-01,  ..., 2.4925e+02, 2.4950e+02,\n"
        "         2.4975e+02],\n"
        "        [2.5000e+02, 2.5025e+02, 2.5050e+02,  ..., 4.9925e+02, 4.9950e+02,\n"
        "         4.9975e+02]])");
    EXPECT_TEXT(generated(1200, i_mod_256, LT_U8),
        "tensor([  0,   1,   2,  ..., 173, 174, 175], dtype=torch.uint8)");
    EXPECT_TEXT(generated(1100, eighths_mod7, LT_BF16),
        "tensor([0.0000, 0.1250, 0.2500,  ..., 0.6250, 0.7500, 0.0000],\n"
        "       dtype=torch.bfloat16)");
    /* the formatter only sees the shown elements: hidden outliers change
     * neither the width nor the mode */
    lt_tensor *ints = LT_OK_T(lt_arange(0, 2000, 1, LT_I64, cpu));
    ((int64_t *)lt_tensor_data(ints))[1000] = 1000000;
    EXPECT_TEXT(ints, "tensor([   0,    1,    2,  ..., 1997, 1998, 1999])");
    lt_tensor *ones = LT_OK_T(lt_ones((int64_t[]){2000}, 1, LT_F32, cpu));
    ((float *)lt_tensor_data(ones))[1000] = 0.5f;
    EXPECT_TEXT(ones, "tensor([1., 1., 1.,  ..., 1., 1., 1.])");
    lt_tensor *rows = LT_OK_T(lt_ones((int64_t[]){3, 1000}, 2, LT_F32, cpu));
    float *r = lt_tensor_data(rows);
    r[1 * 1000 + 500] = NAN;
    r[2 * 1000 + 2] = 2.5f;
    r[0 * 1000 + 700] = 1e-9f;
    EXPECT_TEXT(rows,
        "tensor([[1.0000, 1.0000, 1.0000,  ..., 1.0000, 1.0000, 1.0000],\n"
                      "        [1.0000, 1.0000, 1.0000,  ..., 1.0000, 1.0000, 1.0000],\n"
                      "        [1.0000, 1.0000, 2.5000,  ..., 1.0000, 1.0000, 1.0000]])");
    /* 1000 elements are printed in full (len(str(torch.zeros(1000)))), 1001 not */
    assert_int_equal(lt_format(LT_OK_T(lt_zeros((int64_t[]){1000}, 1, LT_F32, cpu)), NULL, 0), 4336);
    EXPECT_TEXT(lt_zeros((int64_t[]){1001}, 1, LT_F32, cpu),
        "tensor([0., 0., 0.,  ..., 0., 0., 0.])");
}

/* ---- the C contract: snprintf semantics, lt_print, bad input ---------------- */

static void test_snprintf_semantics(void **state)
{
    (void)state;
    lt_tensor *t = LT_T(LT_F32, LT_DIMS(3), 1, 2, 3);
    const char *full = "tensor([1., 2., 3.])";
    int len = (int)strlen(full);
    char buf[64];
    memset(buf, 'x', sizeof buf);
    assert_int_equal(lt_format(t, buf, 5), len);
    assert_string_equal(buf, "tens");
    assert_int_equal(buf[5], 'x'); /* nothing written past cap */
    assert_int_equal(lt_format(t, buf, 1), len);
    assert_string_equal(buf, "");
    memset(buf, 'x', sizeof buf);
    assert_int_equal(lt_format(t, buf, 0), len); /* cap 0: buf untouched */
    assert_int_equal(buf[0], 'x');
    assert_int_equal(lt_format(t, buf, (size_t)len), len); /* one short: truncated */
    assert_int_equal((int)strlen(buf), len - 1);
    assert_int_equal(lt_format(t, buf, (size_t)len + 1), len);
    assert_string_equal(buf, full);
    assert_int_equal(lt_last_status(), LT_OK);
}

static void test_format_does_not_modify(void **state)
{
    (void)state;
    lt_tensor *t = reshaped(generated(1600, half_i, LT_F32), (int64_t[]){40, 40}, 2);
    float before[1600], after[1600];
    assert_int_equal(lt_copy_to_host(t, before, sizeof before), LT_OK);
    int64_t live = lt_live_tensor_count();
    int refs = lt_tensor_refcount(t);
    char buf[2048];
    assert_true(lt_format(t, buf, sizeof buf) > 0);
    assert_int_equal(lt_copy_to_host(t, after, sizeof after), LT_OK);
    assert_memory_equal(before, after, sizeof before);
    assert_int_equal(lt_live_tensor_count(), live);
    assert_int_equal(lt_tensor_refcount(t), refs);
}

/* Runs lt_print(t) with stdout redirected to a file; returns what it wrote. */
static char *captured_print(lt_tensor *t, lt_status *st)
{
    char path[] = "/tmp/lt_test_print_XXXXXX";
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    fflush(stdout);
    int saved = dup(STDOUT_FILENO);
    assert_true(saved >= 0);
    assert_true(dup2(fd, STDOUT_FILENO) >= 0);
    *st = lt_print(t);
    fflush(stdout);
    assert_true(dup2(saved, STDOUT_FILENO) >= 0);
    close(saved);
    static char text[4096];
    ssize_t n = pread(fd, text, sizeof text - 1, 0);
    text[n > 0 ? n : 0] = '\0';
    close(fd);
    unlink(path);
    return text;
}

static void test_print_to_stdout(void **state)
{
    (void)state;
    lt_status st;
    char *out = captured_print(LT_T(LT_F32, LT_DIMS(2, 2), -1.5, 2, 3, -40.25), &st);
    assert_int_equal(st, LT_OK);
    assert_string_equal(out, "tensor([[ -1.5000,   2.0000],\n"
                "        [  3.0000, -40.2500]])" "\n");
}

static void test_lazy_tensor_is_synced_and_marked(void **state)
{
    (void)state;
    lt_device lazy = lt_device_parse("lazy");
    if (lazy.kind != LT_DEVICE_LAZY) { /* a build without the lazy device */
        LT_EXPECT_ERROR(LT_ERR_UNSUPPORTED, "lazy");
        skip();
    }
    lt_tensor *x = LT_OK_T(lt_to(LT_T(LT_F64, LT_DIMS(3), 1, 2.5, 3), lazy));
    lt_tensor *y = LT_OK_T(lt_mul_scalar(x, 2)); /* pending IR: format runs the barrier */
    /* torch puts the device suffix before the dtype */
    EXPECT_TEXT(y, "tensor([2., 5., 6.], device='lazy:0', dtype=torch.float64)");
    EXPECT_TEXT(lt_to(LT_T(LT_F32, LT_DIMS(2), 0.5, 1), lazy), "tensor([0.5000, 1.0000], device='lazy:0')");
}

static void test_bad_input(void **state)
{
    (void)state;
    char buf[16];
    assert_int_equal(lt_format(NULL, buf, sizeof buf), -1);
    LT_EXPECT_ERROR(LT_ERR_NULL, "format");
    assert_int_equal(lt_print(NULL), LT_ERR_NULL);
    LT_EXPECT_ERROR(LT_ERR_NULL, "print");
    lt_tensor *t = LT_T(LT_F32, LT_DIMS(2), 1, 2);
    assert_int_equal(lt_format(t, NULL, 10), -1);
    LT_EXPECT_ERROR(LT_ERR_NULL, "format: buf is NULL but cap is 10");
    /* a released handle */
    lt_tensor *dead = lt_retain(LT_T(LT_F32, LT_DIMS(1), 1));
    lt_scope_end();
    lt_release(dead);
    assert_int_equal(lt_format(dead, buf, sizeof buf), -1);
    LT_EXPECT_ERROR(LT_ERR_RELEASED, "format");
    lt_scope_begin();
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        LT_TEST(test_float_vectors_and_matrices),
        LT_TEST(test_negative_alignment),
        LT_TEST(test_scalars),
        LT_TEST(test_empty_tensors),
        LT_TEST(test_integer_and_bool_dtypes),
        LT_TEST(test_half_dtypes),
        LT_TEST(test_scientific_mode),
        LT_TEST(test_nan_and_inf),
        LT_TEST(test_line_wrapping),
        LT_TEST(test_three_and_four_dims),
        LT_TEST(test_non_contiguous_input),
        LT_TEST(test_summarized),
        LT_TEST(test_snprintf_semantics),
        LT_TEST(test_format_does_not_modify),
        LT_TEST(test_print_to_stdout),
        LT_TEST(test_lazy_tensor_is_synced_and_marked),
        LT_TEST(test_bad_input),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
