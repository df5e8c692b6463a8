/* test_lapack.c - einsum and the LAPACK family (inv, solve, det, slogdet,
 * cholesky, qr, svd, svdvals, eigh, lstsq, matrix_norm 2 / -2 / nuc):
 * values worked out by hand on cpu and on lazy with both backends, that
 * einsum traces without a fallback while the LAPACK ops count one each,
 * finite-difference gradients, and argument errors. tests/torch_diff
 * (specs_lapack.py) compares many more samples with torch. */
#include "gradcheck.h"

#include <math.h>

/* Values to a relative 1e-6 (lt_test.h). */
#define EXPECT(t, ...) LT_ASSERT_VALUES((t), 1e-6, __VA_ARGS__)

/* ---- known values ------------------------------------------------------- */

static void check_einsum(lt_device dev)
{
    lt_tensor *a = lt_to(LT_T(LT_F32, LT_DIMS(2, 2), 1, 2, 3, 4), dev);
    lt_tensor *b = lt_to(LT_T(LT_F32, LT_DIMS(2, 2), 5, 6, 7, 8), dev);
    lt_tensor *ab[] = {a, b};
    EXPECT(lt_einsum("ij,jk->ik", ab, 2), 19, 22, 43, 50);
    EXPECT(lt_einsum("ij,jk", ab, 2), 19, 22, 43, 50);         /* implicit: i, k */
    EXPECT(lt_einsum("ij,kj->ik", ab, 2), 17, 23, 39, 53);     /* a b^T */
    EXPECT(lt_einsum("ij,ij->", ab, 2), 70);                    /* Frobenius product */
    EXPECT(lt_einsum("ii->i", &a, 1), 1, 4);                    /* diagonal */
    EXPECT(lt_einsum("ii", &a, 1), 5);                          /* trace */
    EXPECT(lt_einsum("ji", &a, 1), 1, 3, 2, 4);                 /* implicit: sorted, a transpose */
    EXPECT(lt_einsum("i,j->ij", (lt_tensor *[]){lt_select(a, 0, 0), lt_select(b, 0, 1)}, 2), 7, 8, 14, 16);
    lt_tensor *batch = lt_to(LT_T(LT_F32, LT_DIMS(2, 1, 2), 1, 1, 2, -1), dev);
    lt_tensor *r = lt_einsum("...ij,jk->...ik", (lt_tensor *[]){batch, a}, 2);
    LT_ASSERT_SHAPE(r, 2, 1, 2);
    EXPECT(r, 4, 6, -1, 0);
}

static void check_factorizations(lt_device dev)
{
    lt_tensor *a = lt_to(LT_T(LT_F64, LT_DIMS(2, 2), 4, 7, 2, 6), dev);
    EXPECT(lt_linalg_inv(a), 0.6, -0.7, -0.2, 0.4);
    EXPECT(lt_linalg_det(a), 10);
    EXPECT(lt_linalg_solve(a, lt_to(LT_T(LT_F64, LT_DIMS(2), 11, 8), dev)), 1, 1);
    lt_tensor *logabs = NULL;
    lt_tensor *swap = lt_to(LT_T(LT_F32, LT_DIMS(2, 2), 0, 2, 2, 0), dev);
    EXPECT(lt_linalg_slogdet(swap, &logabs), -1);
    EXPECT(logabs, log(4.0));
    lt_tensor *singular = lt_to(LT_T(LT_F32, LT_DIMS(2, 2), 1, 2, 2, 4), dev);
    EXPECT(lt_linalg_slogdet(singular, &logabs), 0);
    EXPECT(logabs, -INFINITY);
    EXPECT(lt_linalg_det(singular), 0);
    /* the upper triangle (99) is not read */
    EXPECT(lt_linalg_cholesky(lt_to(LT_T(LT_F32, LT_DIMS(2, 2), 4, 99, 2, 3), dev)), 2, 0, 1, sqrt(2.0));
    lt_tensor *rr = NULL;
    lt_tensor *q = lt_linalg_qr(lt_to(LT_T(LT_F32, LT_DIMS(2, 1), 3, 4), dev), &rr);
    EXPECT(q, -0.6, -0.8); /* Householder signs: R's diagonal is -|a| */
    EXPECT(rr, -5);
    lt_tensor *d = lt_to(LT_T(LT_F32, LT_DIMS(2, 2), 3, 0, 0, -4), dev);
    EXPECT(lt_linalg_svdvals(d), 4, 3);
    lt_tensor *s = NULL, *vh = NULL;
    lt_tensor *u = lt_linalg_svd(d, &s, &vh);
    /* U diag(S) Vh gives d back */
    EXPECT(lt_matmul(lt_mul(u, lt_unsqueeze(s, 0)), vh), 3, 0, 0, -4);
    lt_tensor *vecs = NULL;
    EXPECT(lt_linalg_eigh(lt_to(LT_T(LT_F64, LT_DIMS(2, 2), 2, 1, 1, 2), dev), &vecs), 1, 3);
    EXPECT(lt_abs(vecs), M_SQRT1_2, M_SQRT1_2, M_SQRT1_2, M_SQRT1_2);
    lt_tensor *tall = lt_to(LT_T(LT_F64, LT_DIMS(3, 2), 1, 0, 0, 1, 1, 1), dev);
    EXPECT(lt_linalg_lstsq(tall, lt_to(LT_T(LT_F64, LT_DIMS(3), 1, 2, 3), dev)), 1, 2);
    EXPECT(lt_matrix_norm(d, 2, NULL, 0, false), 4);
    EXPECT(lt_matrix_norm(d, -2, NULL, 0, false), 3);
    EXPECT(lt_matrix_norm_nuc(d, NULL, 0, false), 7);
    /* batched: two matrices at once */
    lt_tensor *two = lt_to(LT_T(LT_F32, LT_DIMS(2, 2, 2), 2, 0, 0, 2, 1, 1, 0, 1), dev);
    EXPECT(lt_linalg_det(two), 4, 1);
    EXPECT(lt_linalg_inv(two), 0.5, 0, 0, 0.5, 1, -1, 0, 1);
    /* empty matrices, as torch: det 1, a zero least-squares solution */
    EXPECT(lt_linalg_det(lt_zeros(LT_DIMS(2, 0, 0), LT_F32, dev)), 1, 1);
    LT_ASSERT_SHAPE(lt_linalg_inv(lt_zeros(LT_DIMS(0, 3, 3), LT_F64, dev)), 0, 3, 3);
    EXPECT(lt_linalg_lstsq(lt_zeros(LT_DIMS(0, 2), LT_F64, dev), lt_zeros(LT_DIMS(0, 1), LT_F64, dev)), 0, 0);
    LT_ASSERT_SHAPE(lt_linalg_lstsq(lt_zeros(LT_DIMS(3, 2), LT_F64, dev), lt_zeros(LT_DIMS(3, 0), LT_F64, dev)), 2,
                    0);
    LT_ASSERT_SHAPE(lt_linalg_svdvals(lt_zeros(LT_DIMS(3, 0), LT_F32, dev)), 0);
    LT_ASSERT_SHAPE(lt_linalg_qr(lt_zeros(LT_DIMS(3, 0), LT_F32, dev), NULL), 3, 0);
    LT_ASSERT_SHAPE(lt_linalg_eigh(lt_zeros(LT_DIMS(0, 0), LT_F32, dev), NULL), 0);
    EXPECT(lt_matrix_norm_nuc(lt_zeros(LT_DIMS(2, 0, 3), LT_F32, dev), NULL, 0, false), 0, 0);
}

static void check_all(lt_device dev)
{
    check_einsum(dev);
    check_factorizations(dev);
}

static void test_known_values_cpu(void **state)
{
    (void)state;
    check_all(lt_device_cpu());
}

static void test_known_values_lazy(void **state)
{
    (void)state;
    lt_test_each_lazy_backend(check_all);
}

/* ---- lazy: einsum traces, the LAPACK ops fall back --------------------------- */

static void test_lazy_fallbacks(void **state)
{
    (void)state;
    if (!lt_test_use_backend("cpu"))
        return;
    lt_device lazy = lt_device_parse("lazy");
    lt_tensor *a = lt_to(LT_T(LT_F32, LT_DIMS(2, 2), 4, 7, 2, 6), lazy);
    assert_int_equal(lt_mark_step(), LT_OK);
    lt_metrics_reset();
    lt_tensor *e = lt_einsum("ij,jk,kl->il", (lt_tensor *[]){a, a, a}, 3);
    assert_non_null(e);
    assert_int_equal(lt_metrics_counter("Fallback"), 0);
    assert_int_equal(lt_metrics_counter("Barrier"), 0);
    lt_tensor *inv = lt_linalg_inv(lt_add(a, a));
    assert_non_null(inv);
    assert_int_equal(lt_metrics_counter("Fallback"), 1);
    assert_int_equal(lt_metrics_counter("Fallback.linalg_inv"), 1);
    assert_non_null(lt_linalg_det(a));
    assert_int_equal(lt_metrics_counter("Fallback.linalg_slogdet"), 1);
    assert_int_equal(lt_mark_step(), LT_OK);
    EXPECT(inv, 0.3, -0.35, -0.1, 0.2);
    EXPECT(e, 260, 630, 180, 440);
}

/* ---- gradients ------------------------------------------------------------------ */

/* x + shift * I: keeps random matrices well conditioned. */
static lt_tensor *shifted(lt_tensor *x, double shift)
{
    int64_t n = lt_tensor_size(x, -1);
    return lt_add(x, lt_mul_scalar(lt_eye(n, n, lt_tensor_dtype(x), lt_tensor_device(x)), shift));
}

/* x x^T + I: symmetric positive-definite. */
static lt_tensor *spd(lt_tensor *x) { return shifted(lt_matmul(x, lt_transpose(x, -1, -2)), 1); }

static lt_tensor *einsum_fn(lt_tensor *const *x, const void *ctx)
{
    return lt_einsum((const char *)ctx, x, 2);
}

static lt_tensor *inv_fn(lt_tensor *const *x, const void *ctx)
{
    (void)ctx;
    return lt_linalg_inv(shifted(x[0], 3));
}

static lt_tensor *solve_fn(lt_tensor *const *x, const void *ctx)
{
    (void)ctx;
    return lt_linalg_solve(shifted(x[0], 3), x[1]);
}

static lt_tensor *det_fn(lt_tensor *const *x, const void *ctx)
{
    (void)ctx;
    return lt_linalg_det(shifted(x[0], 2));
}

static lt_tensor *logabsdet_fn(lt_tensor *const *x, const void *ctx)
{
    (void)ctx;
    lt_tensor *logabs = NULL;
    return lt_linalg_slogdet(shifted(x[0], -3), &logabs) ? logabs : NULL;
}

static lt_tensor *cholesky_fn(lt_tensor *const *x, const void *ctx)
{
    (void)ctx;
    return lt_linalg_cholesky(spd(x[0]));
}

static lt_tensor *svdvals_fn(lt_tensor *const *x, const void *ctx)
{
    (void)ctx;
    return lt_linalg_svdvals(x[0]);
}

static lt_tensor *eigvals_fn(lt_tensor *const *x, const void *ctx)
{
    (void)ctx;
    return lt_linalg_eigh(lt_add(x[0], lt_transpose(x[0], -1, -2)), NULL);
}

static lt_tensor *nuc_fn(lt_tensor *const *x, const void *ctx)
{
    (void)ctx;
    return lt_matrix_norm_nuc(x[0], (const int[]){0, 2}, 2, true);
}

static void test_gradients(void **state)
{
    (void)state;
    GRADCHECK_NAMED("einsum bij,bjk", einsum_fn, "bij,bjk->bik", GC_BOTH, GC_UNIFORM(-1, 1, 2, 3, 4),
                    GC_UNIFORM(-1, 1, 2, 4, 2));
    GRADCHECK_NAMED("einsum ii,i...", einsum_fn, "ii,i...->...", GC_BOTH, GC_UNIFORM(-1, 1, 3, 3),
                    GC_UNIFORM(-1, 1, 3, 2));
    GRADCHECK(inv_fn, NULL, GC_BOTH, GC_UNIFORM(-1, 1, 2, 3, 3));
    GRADCHECK(solve_fn, NULL, GC_BOTH, GC_UNIFORM(-1, 1, 2, 3, 3), GC_UNIFORM(-1, 1, 3, 2));
    GRADCHECK(det_fn, NULL, GC_BOTH, GC_UNIFORM(-1, 1, 3, 3));
    GRADCHECK(logabsdet_fn, NULL, GC_BOTH, GC_UNIFORM(-1, 1, 2, 3, 3));
    GRADCHECK(cholesky_fn, NULL, GC_BOTH, GC_UNIFORM(-1, 1, 2, 3, 3));
    GRADCHECK(svdvals_fn, NULL, GC_BOTH, GC_DISTINCT(3, 2));
    GRADCHECK(eigvals_fn, NULL, GC_BOTH, GC_DISTINCT(3, 3));
    GRADCHECK(nuc_fn, NULL, GC_BOTH, GC_DISTINCT(2, 2, 3));
}

/* ---- errors -------------------------------------------------------------------- */

static void test_einsum_errors(void **state)
{
    (void)state;
    lt_tensor *x = LT_T(LT_F32, LT_DIMS(2, 3), 1, 2, 3, 4, 5, 6);
    lt_tensor *two[] = {x, x};
    assert_null(lt_einsum("ij,jk->ik", two, 2));
    LT_EXPECT_ERROR(LT_ERR_SHAPE, "subscript 'j' has size 2 in operand 1, which does not broadcast with size 3");
    assert_null(lt_einsum("ij->ik", &x, 1));
    LT_EXPECT_ERROR(LT_ERR_ARGUMENT, "output subscript 'k' does not appear in any operand");
    assert_null(lt_einsum("ij->ii", &x, 1));
    LT_EXPECT_ERROR(LT_ERR_ARGUMENT, "subscript 'i' appears more than once in the output");
    assert_null(lt_einsum("ij", two, 2));
    LT_EXPECT_ERROR(LT_ERR_ARGUMENT, "has 1 operand subscripts, but 2 operands were given");
    assert_null(lt_einsum("ij,ij,ij", two, 2));
    LT_EXPECT_ERROR(LT_ERR_ARGUMENT, "more operand subscripts than the 2 operands given");
    assert_null(lt_einsum("ijk", &x, 1));
    LT_EXPECT_ERROR(LT_ERR_SHAPE, "operand 0 has shape [2, 3] but its subscripts name 3 dims");
    assert_null(lt_einsum("i.j", &x, 1));
    LT_EXPECT_ERROR(LT_ERR_ARGUMENT, "a '.' that is not part of an ellipsis");
    assert_null(lt_einsum("i1", &x, 1));
    LT_EXPECT_ERROR(LT_ERR_ARGUMENT, "has the character '1'");
    assert_null(lt_einsum("ii", &x, 1));
    LT_EXPECT_ERROR(LT_ERR_SHAPE, "subscript 'i' is repeated in operand 0 with sizes 2 and 3");
    assert_null(lt_einsum("ij->i->j", &x, 1));
    LT_EXPECT_ERROR(LT_ERR_ARGUMENT, "more than one '->'");
    assert_null(lt_einsum("...i...", &x, 1));
    LT_EXPECT_ERROR(LT_ERR_ARGUMENT, "more than one ellipsis");
    assert_null(lt_einsum("ij,ij", (lt_tensor *[]){x, lt_to_dtype(x, LT_F64)}, 2));
    LT_EXPECT_ERROR(LT_ERR_DTYPE, "operand 1 has dtype f64 and operand 0 f32");
    assert_null(lt_einsum(NULL, &x, 1));
    LT_EXPECT_ERROR(LT_ERR_ARGUMENT, "the equation is NULL");
    assert_null(lt_einsum("ij", &x, 0));
    LT_EXPECT_ERROR(LT_ERR_ARGUMENT, "0 operands");
    assert_null(lt_einsum("ij,ij", (lt_tensor *[]){x, NULL}, 2));
    lt_clear_error();
}

static void test_linalg_errors(void **state)
{
    (void)state;
    lt_tensor *rect = LT_T(LT_F32, LT_DIMS(2, 3), 1, 2, 3, 4, 5, 6);
    lt_tensor *singular = LT_T(LT_F32, LT_DIMS(2, 2), 1, 2, 2, 4);
    assert_null(lt_linalg_inv(rect));
    LT_EXPECT_ERROR(LT_ERR_SHAPE, "linalg_inv: A has shape [2, 3], expected square matrices");
    assert_null(lt_linalg_inv(singular));
    LT_EXPECT_ERROR(LT_ERR_ARGUMENT, "linalg_inv: batch matrix 0 is singular");
    assert_null(lt_linalg_inv(LT_T(LT_I64, LT_DIMS(1, 1), 2)));
    LT_EXPECT_ERROR(LT_ERR_DTYPE, "linalg_inv: A has dtype i64, expected f32 or f64");
    assert_null(lt_linalg_det(LT_T(LT_F32, LT_DIMS(2), 1, 2)));
    LT_EXPECT_ERROR(LT_ERR_SHAPE, "linalg_det: A has shape [2], expected at least 2 dims");
    assert_null(lt_linalg_cholesky(singular));
    LT_EXPECT_ERROR(LT_ERR_ARGUMENT, "linalg_cholesky: batch matrix 0 is not positive-definite");
    assert_null(lt_linalg_solve(singular, rect));
    LT_EXPECT_ERROR(LT_ERR_ARGUMENT, "linalg_solve: batch matrix 0 is singular");
    assert_null(lt_linalg_solve(singular, LT_T(LT_F32, LT_DIMS(3, 1), 1, 2, 3)));
    LT_EXPECT_ERROR(LT_ERR_SHAPE, "linalg_solve: A has shape [2, 2] and B [3, 1]");
    lt_tensor *batch3 = lt_zeros(LT_DIMS(3, 2, 2), LT_F32, lt_device_cpu());
    assert_null(lt_linalg_solve(lt_zeros(LT_DIMS(2, 2, 2), LT_F32, lt_device_cpu()), lt_unsqueeze(batch3, 0)));
    assert_null(lt_linalg_lstsq(rect, LT_T(LT_F64, LT_DIMS(2, 1), 1, 2)));
    LT_EXPECT_ERROR(LT_ERR_DTYPE, "linalg_lstsq: A has dtype f32 and B f64");
    assert_null(lt_matrix_norm_nuc(rect, (const int[]){0, 0}, 2, false));
    LT_EXPECT_ERROR(LT_ERR_ARGUMENT, "matrix_norm_nuc: dims 0 and 0 name the same dim");
    assert_null(lt_linalg_qr(NULL, NULL));
    /* the eigenvectors have no gradient */
    lt_tensor *x = lt_persist(LT_T(LT_F64, LT_DIMS(2, 2), 2, 1, 1, 2));
    lt_set_requires_grad(x, true);
    lt_tensor *vecs = NULL;
    assert_non_null(lt_linalg_eigh(x, &vecs));
    assert_int_not_equal(lt_backward(lt_sum(vecs, NULL, 0, false), NULL), LT_OK);
    LT_EXPECT_ERROR(LT_ERR_UNSUPPORTED, "gradient through the eigenvectors is not supported");
    lt_release(x);
    lt_clear_error();
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        LT_TEST(test_known_values_cpu), LT_TEST(test_known_values_lazy), LT_TEST(test_lazy_fallbacks),
        LT_TEST(test_gradients),        LT_TEST(test_einsum_errors),     LT_TEST(test_linalg_errors),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
