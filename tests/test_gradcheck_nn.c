/* test_gradcheck_nn.c - finite-difference checks of the gradient formulas
 * of matmul (every rank combination, broadcast batch dims, transposed
 * operands), conv2d (stride, padding, dilation, groups, bias, both
 * input-gradient paths), max_pool2d and avg_pool2d (overlapping windows,
 * padding, count_include_pad), and of whole networks (an MLP and a small
 * CNN with log_softmax + nll written with public ops), eager and lazy. */
#include "gradcheck.h"

/* ======================================================================= */
/* matmul                                                                   */
/* ======================================================================= */

typedef struct matmul_case {
    const char *name;
    int64_t a[4], b[4];
    int na, nb;
    bool transpose_a; /* a is given with its last two dims swapped */
    bool lazy;
} matmul_case;

static lt_tensor *f_matmul(lt_tensor *const *x, const void *ctx)
{
    const matmul_case *m = ctx;
    lt_tensor *a = m->transpose_a ? lt_transpose(x[0], -1, -2) : x[0];
    return lt_matmul(a, x[1]);
}

static void test_matmul(void **state)
{
    (void)state;
    static const matmul_case cases[] = {
        {"1x1", {3}, {3}, 1, 1, false, true},
        {"1x2", {3}, {3, 4}, 1, 2, false, true},
        {"2x1", {2, 3}, {3}, 2, 1, false, true},
        {"2x2", {2, 3}, {3, 4}, 2, 2, false, true},
        {"2x2 transposed", {3, 2}, {3, 4}, 2, 2, true, false},
        {"1x3", {3}, {2, 3, 4}, 1, 3, false, false},
        {"3x1", {2, 2, 3}, {3}, 3, 1, false, true},
        {"3x2", {2, 2, 3}, {3, 4}, 3, 2, false, true},
        {"3x2 transposed", {2, 3, 2}, {3, 4}, 3, 2, true, false},
        {"2x3", {2, 3}, {2, 3, 4}, 2, 3, false, true},
        {"3x3", {2, 2, 3}, {2, 3, 2}, 3, 3, false, false},
        {"4x3 broadcast", {2, 1, 2, 3}, {3, 3, 2}, 4, 3, false, true},
        {"1x4", {3}, {2, 1, 3, 2}, 1, 4, false, false},
    };
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
        const matmul_case *m = &cases[k];
        GRADCHECK_NAMED(m->name, f_matmul, m, m->lazy ? GC_BOTH : GC_EAGER, gc_uniform(m->a, m->na, -1, 1),
                        gc_uniform(m->b, m->nb, -1, 1));
    }
}

/* ======================================================================= */
/* conv2d                                                                   */
/* ======================================================================= */

typedef struct conv_case {
    const char *name;
    int64_t x[4], w[4];
    int64_t stride[2], pad[2], dil[2], groups;
    bool bias, lazy;
} conv_case;

static lt_tensor *f_conv(lt_tensor *const *x, const void *ctx)
{
    const conv_case *k = ctx;
    return lt_conv2d(x[0], x[1], k->bias ? x[2] : NULL, k->stride, k->pad, k->dil, k->groups);
}

static void test_conv2d(void **state)
{
    (void)state;
    static const conv_case cases[] = {
        {"stride 1 pad 1", {2, 3, 5, 5}, {4, 3, 3, 3}, {1, 1}, {1, 1}, {1, 1}, 1, true, true},
        {"stride 2 pad 1", {1, 2, 6, 5}, {3, 2, 3, 3}, {2, 2}, {1, 1}, {1, 1}, 1, false, true},
        {"pad 2 dilation 2", {1, 2, 6, 6}, {2, 2, 3, 2}, {1, 2}, {2, 2}, {2, 2}, 1, true, false},
        {"groups 2", {2, 4, 5, 5}, {6, 2, 3, 3}, {1, 1}, {1, 1}, {1, 1}, 2, true, true},
        {"groups 2 strided dilated", {1, 4, 7, 7}, {4, 2, 2, 3}, {2, 1}, {1, 0}, {2, 1}, 2, false, false},
        {"1x1 pad 1", {1, 2, 3, 3}, {2, 2, 1, 1}, {1, 1}, {1, 1}, {1, 1}, 1, true, false},
        {"1x1 unpadded groups 2", {2, 4, 3, 3}, {6, 2, 1, 1}, {1, 1}, {0, 0}, {1, 1}, 2, false, true},
        {"1x1 stride 2", {1, 2, 5, 4}, {3, 2, 1, 1}, {2, 2}, {0, 0}, {1, 1}, 1, false, false},
        {"stride 2 leftover", {1, 1, 6, 6}, {1, 1, 3, 3}, {2, 2}, {0, 0}, {1, 1}, 1, false, false},
        {"groups 2 stride 2 leftover", {1, 2, 6, 6}, {2, 1, 3, 3}, {2, 2}, {0, 0}, {1, 1}, 2, false, false},
        {"depthwise", {1, 3, 4, 4}, {3, 1, 3, 3}, {1, 1}, {1, 1}, {1, 1}, 3, true, false},
        {"no padding", {2, 2, 4, 4}, {2, 2, 3, 3}, {1, 1}, {0, 0}, {1, 1}, 1, false, false},
    };
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
        const conv_case *c = &cases[k];
        gc_opts o = c->lazy ? GC_BOTH : GC_EAGER;
        lt_tensor *x = gc_uniform(c->x, 4, -1, 1), *w = gc_uniform(c->w, 4, -1, 1);
        if (c->bias)
            GRADCHECK_NAMED(c->name, f_conv, c, o, x, w, gc_uniform(&c->w[0], 1, -1, 1));
        else
            GRADCHECK_NAMED(c->name, f_conv, c, o, x, w);
    }
}

/* conv2d of a non-contiguous input (a permuted tensor) and weight. */
static lt_tensor *f_conv_strided_inputs(lt_tensor *const *x, const void *ctx)
{
    (void)ctx;
    static const int nhwc_to_nchw[4] = {0, 3, 1, 2};
    int64_t pad[2] = {1, 1};
    return lt_conv2d(lt_permute(x[0], nhwc_to_nchw, 4), lt_transpose(x[1], 0, 1), NULL, NULL, pad, NULL, 1);
}

static void test_conv2d_strided_inputs(void **state)
{
    (void)state;
    GRADCHECK(f_conv_strided_inputs, NULL, GC_BOTH, GC_UNIFORM(-1, 1, 1, 4, 4, 2), GC_UNIFORM(-1, 1, 2, 3, 3, 3));
}

/* ======================================================================= */
/* pooling                                                                  */
/* ======================================================================= */

typedef struct pool_case {
    const char *name;
    bool max;
    int64_t x[4];
    int64_t kernel[2], stride[2], pad[2];
    bool include_pad, lazy;
} pool_case;

static lt_tensor *f_pool(lt_tensor *const *x, const void *ctx)
{
    const pool_case *p = ctx;
    if (p->max)
        return lt_max_pool2d(x[0], p->kernel, p->stride, p->pad, NULL);
    return lt_avg_pool2d(x[0], p->kernel, p->stride, p->pad, p->include_pad);
}

static void test_pooling(void **state)
{
    (void)state;
    static const pool_case cases[] = {
        {"max 2x2", true, {2, 2, 4, 4}, {2, 2}, {2, 2}, {0, 0}, false, true},
        {"max 2x3 tiles", true, {1, 3, 4, 6}, {2, 3}, {2, 3}, {0, 0}, false, true},
        {"max 2x2 leftover", true, {1, 2, 5, 5}, {2, 2}, {2, 2}, {0, 0}, false, true},
        {"max 3x3 stride 2 pad 1", true, {1, 2, 5, 5}, {3, 3}, {2, 2}, {1, 1}, false, true},
        {"max 2x3 stride 1x2", true, {1, 1, 4, 5}, {2, 3}, {1, 2}, {0, 1}, false, false},
        {"avg 2x2 tiles", false, {2, 2, 4, 4}, {2, 2}, {2, 2}, {0, 0}, true, true},
        {"avg 2x2 leftover", false, {1, 2, 5, 5}, {2, 2}, {2, 2}, {0, 0}, true, false},
        {"avg 3x3 stride 1 pad 1", false, {1, 2, 4, 4}, {3, 3}, {1, 1}, {1, 1}, true, true},
        {"avg 3x3 stride 2 pad 1 exclude pad", false, {1, 2, 5, 5}, {3, 3}, {2, 2}, {1, 1}, false, true},
        {"avg 2x3 stride 1x2 pad 0x1", false, {1, 1, 4, 5}, {2, 3}, {1, 2}, {0, 1}, false, false},
        {"avg 4x4 stride 3 pad 2 include pad", false, {1, 1, 6, 6}, {4, 4}, {3, 3}, {2, 2}, true, false},
    };
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
        const pool_case *p = &cases[k];
        GRADCHECK_NAMED(p->name, f_pool, p, p->lazy ? GC_BOTH : GC_EAGER, gc_distinct(p->x, 4));
    }
}

/* max pooling of a transposed input: indices refer to the logical layout. */
static lt_tensor *f_pool_transposed(lt_tensor *const *x, const void *ctx)
{
    (void)ctx;
    int64_t k[2] = {2, 2};
    return lt_max_pool2d(lt_transpose(x[0], 2, 3), k, NULL, NULL, NULL);
}

static void test_pooling_transposed(void **state)
{
    (void)state;
    GRADCHECK(f_pool_transposed, NULL, GC_BOTH, GC_DISTINCT(1, 2, 4, 6));
}

/* ======================================================================= */
/* whole networks                                                           */
/* ======================================================================= */

/* mean over rows of -log_probs[row, target[row]] (nll with public ops). */
static lt_tensor *nll(lt_tensor *log_probs, lt_tensor *targets)
{
    lt_tensor *picked = lt_gather(log_probs, 1, lt_unsqueeze(targets, 1));
    return lt_neg(lt_mean(picked, NULL, 0, false));
}

/* x [4, 5] -> linear(5, 6) -> relu -> linear(6, 3) -> log_softmax -> nll.
 * Inputs: x, w1 [6, 5], b1 [6], w2 [3, 6], b2 [3], targets. */
static lt_tensor *f_mlp(lt_tensor *const *p, const void *ctx)
{
    (void)ctx;
    lt_tensor *h = lt_relu(lt_add(lt_matmul(p[0], lt_transpose(p[1], 0, 1)), p[2]));
    lt_tensor *logits = lt_add(lt_matmul(h, lt_transpose(p[3], 0, 1)), p[4]);
    return nll(lt_log_softmax(logits, -1), p[5]);
}

static void test_mlp(void **state)
{
    (void)state;
    lt_tensor *targets = LT_T(LT_I64, LT_DIMS(4), 2, 0, 1, 2);
    GRADCHECK(f_mlp, NULL, GC_BOTH, GC_UNIFORM(-1, 1, 4, 5), GC_UNIFORM(-0.5, 0.5, 6, 5), GC_UNIFORM(-0.5, 0.5, 6),
              GC_UNIFORM(-0.5, 0.5, 3, 6), GC_UNIFORM(-0.5, 0.5, 3), targets);
}

/* x [2, 1, 6, 6] -> conv(1->3, 3x3 pad 1) -> relu -> max_pool 2 -> flatten
 * -> linear(27, 4) -> log_softmax -> nll: the Fashion-MNIST CNN in small. */
static lt_tensor *f_cnn(lt_tensor *const *p, const void *ctx)
{
    (void)ctx;
    int64_t pad[2] = {1, 1}, k2[2] = {2, 2};
    lt_tensor *h = lt_relu(lt_conv2d(p[0], p[1], p[2], NULL, pad, NULL, 1));
    h = lt_flatten(lt_max_pool2d(h, k2, NULL, NULL, NULL), 1, -1);
    lt_tensor *logits = lt_add(lt_matmul(h, lt_transpose(p[3], 0, 1)), p[4]);
    return nll(lt_log_softmax(logits, 1), p[5]);
}

static void test_cnn(void **state)
{
    (void)state;
    lt_tensor *targets = LT_T(LT_I64, LT_DIMS(2), 3, 1);
    GRADCHECK(f_cnn, NULL, GC_BOTH, GC_UNIFORM(-1, 1, 2, 1, 6, 6), GC_UNIFORM(-0.5, 0.5, 3, 1, 3, 3),
              GC_UNIFORM(-0.5, 0.5, 3), GC_UNIFORM(-0.5, 0.5, 4, 27), GC_UNIFORM(-0.5, 0.5, 4), targets);
}

/* On the lazy device the CNN's backward pass is traced: no op falls back
 * to eager, and the gradients come out of one compiled program. */
static void test_lazy_backward_traced(void **state)
{
    (void)state;
    lt_device lazy = lt_device_parse("lazy");
    lt_tensor *host[6] = {GC_UNIFORM(-1, 1, 2, 1, 6, 6), GC_UNIFORM(-0.5, 0.5, 3, 1, 3, 3), GC_UNIFORM(-0.5, 0.5, 3),
                          GC_UNIFORM(-0.5, 0.5, 4, 27), GC_UNIFORM(-0.5, 0.5, 4), LT_T(LT_I64, LT_DIMS(2), 3, 1)};
    lt_tensor *p[6];
    for (int i = 0; i < 6; i++) {
        p[i] = LT_OK_T(lt_to(host[i], lazy));
        if (i > 0 && i < 5)
            assert_int_equal(lt_set_requires_grad(p[i], true), LT_OK);
    }
    assert_int_equal(lt_mark_step(), LT_OK);
    lt_metrics_reset();
    assert_int_equal(lt_backward(LT_OK_T(f_cnn(p, NULL)), NULL), LT_OK);
    lt_tensor *grads[4];
    for (int i = 0; i < 4; i++)
        grads[i] = LT_OK_T(lt_grad(p[i + 1]));
    assert_int_equal(lt_mark_step(), LT_OK);
    assert_int_equal(lt_metrics_counter("Fallback"), 0);
    assert_int_equal(lt_metrics_counter("UncachedCompile") + lt_metrics_counter("CachedCompile"), 1);
    double norm;
    assert_int_equal(lt_item(lt_sum(lt_abs(grads[1]), NULL, 0, false), &norm), LT_OK);
    assert_true(norm > 0);
}

/* The gradients of a conv layer in f32 agree with the f64 ones. */
static void test_conv_f32(void **state)
{
    (void)state;
    lt_tensor *x64 = GC_UNIFORM(-1, 1, 2, 3, 6, 6), *w64 = GC_UNIFORM(-1, 1, 4, 3, 3, 3);
    lt_tensor *g64 = GC_UNIFORM(-1, 1, 2, 4, 6, 6);
    int64_t pad[2] = {1, 1};
    double *expect[2] = {NULL, NULL};
    for (int pass = 0; pass < 2; pass++) {
        lt_dtype dt = pass == 0 ? LT_F64 : LT_F32;
        lt_tensor *x = LT_OK_T(lt_to_dtype(x64, dt)), *w = LT_OK_T(lt_to_dtype(w64, dt));
        assert_int_equal(lt_set_requires_grad(x, true), LT_OK);
        assert_int_equal(lt_set_requires_grad(w, true), LT_OK);
        lt_tensor *y = LT_OK_T(lt_conv2d(x, w, NULL, NULL, pad, NULL, 1));
        assert_int_equal(lt_backward(y, LT_OK_T(lt_to_dtype(g64, dt))), LT_OK);
        lt_tensor *gx = LT_OK_T(lt_grad(x)), *gw = LT_OK_T(lt_grad(w));
        assert_int_equal(lt_tensor_dtype(gx), dt);
        if (pass == 0) {
            expect[0] = lt_test_values(gx);
            expect[1] = lt_test_values(gw);
        } else {
            LT_ASSERT_ARRAY(gx, expect[0], lt_tensor_numel(gx), 1e-5);
            LT_ASSERT_ARRAY(gw, expect[1], lt_tensor_numel(gw), 1e-5);
        }
    }
    free(expect[0]);
    free(expect[1]);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        LT_TEST(test_matmul),  LT_TEST(test_conv2d),     LT_TEST(test_conv2d_strided_inputs),
        LT_TEST(test_pooling), LT_TEST(test_pooling_transposed), LT_TEST(test_mlp),
        LT_TEST(test_cnn),     LT_TEST(test_lazy_backward_traced), LT_TEST(test_conv_f32),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
