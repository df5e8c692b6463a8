/* test_fuse_gemm.c - a matmul fused with the update that consumes it
 * (src/compiler/fuse_gemm.c): w - lr * (a @ b) compiles, on the cpu
 * backend, to one accumulating gemm and no pointwise kernel; the result
 * matches the eager device, with operands in either layout, in place
 * (donation) or not, in f32 and f64, with a runtime or a baked alpha and
 * with empty dims. Updates that must not be fused (the product used
 * twice, an operand in the updated buffer, a broadcast start value) are
 * left alone and stay correct. */
#include "lt_test.h"

#include <cmocka.h>

typedef struct gemm_case {
    int64_t m, k, n;
    bool a_transposed, b_transposed; /* operands as transposed views */
    bool subtract, in_place;
    double alpha;
    lt_dtype dt;
} gemm_case;

/* A [rows, cols] tensor on dev with deterministic values (seeded by `salt`),
 * or the transposed view of a [cols, rows] one. */
static lt_tensor *matrix(lt_device dev, lt_dtype dt, int64_t rows, int64_t cols, bool transposed, int salt)
{
    int64_t r = transposed ? cols : rows, c = transposed ? rows : cols, numel = r * c;
    double *v = malloc(sizeof *v * (size_t)(numel > 0 ? numel : 1));
    for (int64_t i = 0; i < numel; i++)
        v[i] = 0.5 * sin(0.37 * (double)(i + 1) * (double)(salt + 2)) + 0.01 * (double)(i % 7);
    lt_tensor *t = LT_OK_T(lt_to(lt_test_tensor(v, (const int64_t[]){r, c}, 2, dt), dev));
    free(v);
    return transposed ? LT_OK_T(lt_transpose(t, 0, 1)) : t;
}

/* w +- alpha * (a @ b), in place or not, with the product dropped at once
 * (a live product would be a result of the step in its own right). */
static lt_tensor *apply_update(lt_tensor *w, lt_tensor *a, lt_tensor *b, double alpha, bool subtract,
                               bool in_place)
{
    lt_scope_begin();
    lt_tensor *p = LT_OK_T(lt_matmul(a, b)), *r;
    if (in_place)
        r = subtract ? lt_sub_scaled_(w, p, alpha) : lt_add_scaled_(w, p, alpha);
    else
        r = subtract ? lt_sub_scaled(w, p, alpha) : lt_add_scaled(w, p, alpha);
    r = lt_keep(LT_OK_T(r));
    assert_int_equal(lt_scope_end(), LT_OK);
    return r;
}

/* The update of case c on dev: its result (w itself when in place). */
static lt_tensor *update(const gemm_case *c, lt_device dev)
{
    lt_tensor *w = matrix(dev, c->dt, c->m, c->n, false, 1);
    lt_tensor *a = matrix(dev, c->dt, c->m, c->k, c->a_transposed, 2);
    lt_tensor *b = matrix(dev, c->dt, c->k, c->n, c->b_transposed, 3);
    if (lt_device_equal(dev, lt_device_parse("lazy")))
        assert_int_equal(lt_mark_step(), LT_OK); /* operands become device data */
    return apply_update(w, a, b, c->alpha, c->subtract, c->in_place);
}

/* Runs case c on cpu and on lazy (cpu backend); checks the values and how
 * many updates the compiled program fused. */
static void check_case(const gemm_case *c, int64_t expect_fused)
{
    lt_tensor *expected = update(c, lt_device_cpu());
    lt_tensor *got = update(c, lt_device_parse("lazy"));
    lt_metrics_reset();
    assert_int_equal(lt_mark_step(), LT_OK);
    if (lt_metrics_counter("FusedGemmUpdates") != expect_fused)
        fail_msg("case %lldx%lldx%lld: %lld fused updates, expected %lld", (long long)c->m, (long long)c->k,
                 (long long)c->n, (long long)lt_metrics_counter("FusedGemmUpdates"), (long long)expect_fused);
    double *want = lt_test_values(expected);
    LT_ASSERT_ARRAY(got, want, lt_tensor_numel(expected), c->dt == LT_F64 ? 1e-12 : 1e-5);
    free(want);
}

static void test_updates_are_fused_and_exact(void **state)
{
    (void)state;
    if (!lt_test_use_backend("cpu"))
        return;
    const gemm_case cases[] = {
        {33, 17, 21, false, false, true, false, 0.05, LT_F32},  /* w - lr * a b */
        {33, 17, 21, true, false, true, true, 0.05, LT_F32},    /* SGD's dW = dy^T x, in place */
        {40, 24, 16, false, true, false, true, -0.3, LT_F32},   /* b transposed, added */
        {40, 24, 16, true, true, true, false, 1.0, LT_F32},     /* alpha baked (1) */
        {9, 5, 7, true, false, true, true, 0.125, LT_F64},      /* f64 */
        {64, 128, 96, false, false, true, true, 2e-3, LT_F32},  /* large enough to split over threads */
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        lt_scope_begin();
        check_case(&cases[i], 1);
        assert_int_equal(lt_metrics_counter("Kernels"), 1); /* the gemm alone */
        /* in place, the gemm accumulates into w's own buffer */
        assert_int_equal(lt_metrics_counter("DonatedBuffers"), cases[i].in_place ? 1 : 0);
        lt_scope_end();
    }
}

static void test_empty_dims(void **state)
{
    (void)state;
    if (!lt_test_use_backend("cpu"))
        return;
    /* an empty inner dim leaves w as it was; empty outer dims give empty results */
    const gemm_case cases[] = {
        {6, 0, 5, false, false, true, true, 0.05, LT_F32},
        {0, 4, 5, false, false, true, false, 0.05, LT_F32},
        {6, 4, 0, true, false, true, true, 0.05, LT_F32},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        lt_scope_begin();
        lt_tensor *expected = update(&cases[i], lt_device_cpu());
        lt_tensor *got = update(&cases[i], lt_device_parse("lazy"));
        assert_int_equal(lt_mark_step(), LT_OK);
        double *want = lt_test_values(expected);
        LT_ASSERT_ARRAY(got, want, lt_tensor_numel(expected), 1e-6);
        free(want);
        lt_scope_end();
    }
}

/* The product also kept as a result: it needs its own buffer, so the
 * update stays a pointwise kernel. */
static void test_product_used_twice_is_not_fused(void **state)
{
    (void)state;
    if (!lt_test_use_backend("cpu"))
        return;
    lt_device devs[2] = {lt_device_cpu(), lt_device_parse("lazy")};
    lt_tensor *prod[2], *upd[2];
    for (int d = 0; d < 2; d++) {
        lt_tensor *w = matrix(devs[d], LT_F32, 8, 6, false, 1);
        lt_tensor *a = matrix(devs[d], LT_F32, 8, 5, false, 2), *b = matrix(devs[d], LT_F32, 5, 6, false, 3);
        if (d == 1)
            assert_int_equal(lt_mark_step(), LT_OK);
        prod[d] = LT_OK_T(lt_matmul(a, b));
        upd[d] = LT_OK_T(lt_sub_scaled(w, prod[d], 0.5));
    }
    lt_metrics_reset();
    assert_int_equal(lt_mark_step(), LT_OK);
    assert_int_equal(lt_metrics_counter("FusedGemmUpdates"), 0);
    for (int r = 0; r < 2; r++) {
        lt_tensor *e = r ? upd[0] : prod[0], *g = r ? upd[1] : prod[1];
        double *want = lt_test_values(e);
        LT_ASSERT_ARRAY(g, want, lt_tensor_numel(e), 1e-5);
        free(want);
    }
}

/* w -= lr * (w @ w): the gemm would read the buffer it writes when w is
 * donated, so it is not fused; and w + (a @ b) with w broadcast from a row
 * has no element-for-element start value. Both stay correct. */
static void test_unsafe_updates_are_not_fused(void **state)
{
    (void)state;
    if (!lt_test_use_backend("cpu"))
        return;
    lt_device devs[2] = {lt_device_cpu(), lt_device_parse("lazy")};
    lt_tensor *self[2], *bcast[2];
    for (int d = 0; d < 2; d++) {
        lt_tensor *w = matrix(devs[d], LT_F32, 7, 7, false, 1);
        lt_tensor *row = matrix(devs[d], LT_F32, 1, 6, false, 4);
        lt_tensor *a = matrix(devs[d], LT_F32, 7, 3, false, 2), *b = matrix(devs[d], LT_F32, 3, 6, false, 3);
        if (d == 1)
            assert_int_equal(lt_mark_step(), LT_OK);
        self[d] = apply_update(w, w, w, 0.1, true, true);
        bcast[d] = apply_update(row, a, b, 0.7, false, false);
    }
    lt_metrics_reset();
    assert_int_equal(lt_mark_step(), LT_OK);
    assert_int_equal(lt_metrics_counter("FusedGemmUpdates"), 0);
    double *want = lt_test_values(self[0]);
    LT_ASSERT_ARRAY(self[1], want, 49, 1e-5);
    free(want);
    want = lt_test_values(bcast[0]);
    LT_ASSERT_ARRAY(bcast[1], want, 42, 1e-5);
    free(want);
}

/* Ten SGD-like steps reuse one compiled program (the learning rate is a
 * runtime parameter) and keep matching the eager device. */
static void test_repeated_steps_match_eager(void **state)
{
    (void)state;
    if (!lt_test_use_backend("cpu"))
        return;
    lt_device devs[2] = {lt_device_cpu(), lt_device_parse("lazy")};
    lt_tensor *w[2];
    for (int d = 0; d < 2; d++)
        w[d] = lt_keep(matrix(devs[d], LT_F32, 24, 12, false, 1));
    assert_int_equal(lt_mark_step(), LT_OK);
    lt_metrics_reset();
    for (int step = 0; step < 10; step++) {
        double lr = 0.01 * (double)(step + 1);
        for (int d = 0; d < 2; d++) {
            lt_scope_begin();
            lt_tensor *a = matrix(devs[d], LT_F32, 24, 30, true, step + 5); /* dy^T */
            lt_tensor *b = matrix(devs[d], LT_F32, 30, 12, false, step + 9);
            apply_update(w[d], a, b, lr, true, true);
            lt_scope_end();
        }
        assert_int_equal(lt_mark_step(), LT_OK);
    }
    assert_int_equal(lt_metrics_counter("UncachedCompile"), 1);
    double *want = lt_test_values(w[0]);
    LT_ASSERT_ARRAY(w[1], want, 24 * 12, 1e-5);
    free(want);
    lt_release(w[0]);
    lt_release(w[1]);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        LT_TEST(test_updates_are_fused_and_exact),
        LT_TEST(test_empty_dims),
        LT_TEST(test_product_used_twice_is_not_fused),
        LT_TEST(test_unsafe_updates_are_not_fused),
        LT_TEST(test_repeated_steps_match_eager),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
