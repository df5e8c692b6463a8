/* test_nn_layers.c - nn layers (forward against independent formulas in
 * double), initialization, module listing and ownership, train/eval,
 * moving between devices, eager/lazy agreement, and the losses. */
#include "lt_test.h"

static lt_device cpu(void) { return lt_device_cpu(); }
static lt_device lazy(void) { return lt_device_parse("lazy"); }

/* A cpu f32 tensor of standard normal values. */
static lt_tensor *randn(const int64_t *dims, int ndim)
{
    return LT_OK_T(lt_randn(dims, ndim, LT_F32, cpu()));
}

/* Parameter or state tensor `name` of m (fails the test if absent). */
static lt_tensor *state_of(lt_module *m, const char *name)
{
    lt_tensor *t[32];
    const char *names[32];
    int n = lt_module_state(m, t, names, 32);
    for (int i = 0; i < n && i < 32; i++)
        if (strcmp(names[i], name) == 0)
            return t[i];
    fail_msg("module has no tensor \"%s\"", name);
    return NULL;
}

/* Copies values into a module tensor (which may require grad). */
static void set_values(lt_tensor *dst, const double *v)
{
    lt_tensor *src = LT_OK_T(lt_test_tensor(v, lt_tensor_shape(dst), lt_tensor_ndim(dst), LT_F64));
    lt_no_grad_begin();
    assert_non_null(lt_copy_(dst, lt_to(src, lt_tensor_device(dst))));
    lt_no_grad_end();
}

static void assert_same_values(lt_tensor *a, lt_tensor *b, double tol)
{
    assert_int_equal(lt_tensor_numel(a), lt_tensor_numel(b));
    double *expect = lt_test_values(b);
    LT_ASSERT_ARRAY(a, expect, lt_tensor_numel(b), tol);
    free(expect);
}

/* ---- linear ---------------------------------------------------------------- */

/* y[n][o] = sum_i x[n][i] W[o][i] + b[o], in double. */
static void linear_ref(const double *x, const double *w, const double *b, int64_t rows, int64_t in, int64_t out,
                       double *y)
{
    for (int64_t n = 0; n < rows; n++)
        for (int64_t o = 0; o < out; o++) {
            double s = b ? b[o] : 0.0;
            for (int64_t i = 0; i < in; i++)
                s += x[n * in + i] * w[o * in + i];
            y[n * out + o] = s;
        }
}

static void test_linear_forward(void **state)
{
    (void)state;
    lt_manual_seed(1);
    lt_module *lin = lt_nn_linear(3, 2, true, cpu());
    assert_non_null(lin);
    lt_tensor *params[2];
    const char *names[2];
    assert_int_equal(lt_module_parameters(lin, params, names, 2), 2);
    assert_string_equal(names[0], "weight");
    assert_string_equal(names[1], "bias");
    LT_ASSERT_SHAPE(params[0], 2, 3);
    LT_ASSERT_SHAPE(params[1], 2);
    assert_true(lt_requires_grad(params[0]) && lt_requires_grad(params[1]));
    double *w = lt_test_values(params[0]), *b = lt_test_values(params[1]);

    /* a transposed (non-contiguous) input [4, 3] */
    lt_tensor *x = lt_transpose(randn(LT_DIMS(3, 4)), 0, 1);
    lt_tensor *y = LT_OK_T(lt_module_forward(lin, x));
    LT_ASSERT_SHAPE(y, 4, 2);
    double *xv = lt_test_values(x), expect[8];
    linear_ref(xv, w, b, 4, 3, 2, expect);
    LT_ASSERT_ARRAY(y, expect, 8, 1e-5);
    free(xv);

    /* batch dims [2, 2, 3] and an empty batch [0, 3] */
    lt_tensor *x3 = randn(LT_DIMS(2, 2, 3));
    lt_tensor *y3 = LT_OK_T(lt_module_forward(lin, x3));
    LT_ASSERT_SHAPE(y3, 2, 2, 2);
    xv = lt_test_values(x3);
    linear_ref(xv, w, b, 4, 3, 2, expect);
    LT_ASSERT_ARRAY(y3, expect, 8, 1e-5);
    free(xv);
    LT_ASSERT_SHAPE(LT_OK_T(lt_module_forward(lin, lt_zeros(LT_DIMS(0, 3), LT_F32, cpu()))), 0, 2);
    free(w);
    free(b);
    lt_module_free(lin);

    /* without bias: one parameter, y = x W^T */
    lt_module *nob = lt_nn_linear(3, 2, false, cpu());
    assert_int_equal(lt_module_parameters(nob, params, names, 2), 1);
    w = lt_test_values(params[0]);
    xv = lt_test_values(x);
    linear_ref(xv, w, NULL, 4, 3, 2, expect);
    LT_ASSERT_ARRAY(lt_module_forward(nob, x), expect, 8, 1e-5);
    free(w);
    free(xv);
    lt_module_free(nob);
}

/* Every |v| <= bound, and the values spread over most of the range with a
 * mean near zero. */
static void check_uniform(lt_tensor *t, double bound)
{
    int64_t n = lt_tensor_numel(t);
    double *v = lt_test_values(t), lo = INFINITY, hi = -INFINITY, sum = 0;
    for (int64_t i = 0; i < n; i++) {
        assert_true(fabs(v[i]) <= bound * (1 + 1e-6));
        lo = fmin(lo, v[i]);
        hi = fmax(hi, v[i]);
        sum += v[i];
    }
    free(v);
    assert_true(lo < -0.9 * bound && hi > 0.9 * bound);
    assert_true(fabs(sum / (double)n) < 0.1 * bound);
}

static void test_init_bounds(void **state)
{
    (void)state;
    lt_manual_seed(2);
    lt_module *lin = lt_nn_linear(100, 50, true, cpu());
    check_uniform(state_of(lin, "weight"), 0.1);
    check_uniform(state_of(lin, "bias"), 0.1);
    lt_module_free(lin);
    /* conv: fan_in = in/groups * k * k = 8/2 * 3 * 3 = 36 */
    lt_module *conv = lt_nn_conv2d(8, 64, 3, 1, 0, 2, true, cpu());
    assert_non_null(conv);
    LT_ASSERT_SHAPE(state_of(conv, "weight"), 64, 4, 3, 3);
    check_uniform(state_of(conv, "weight"), 1.0 / 6.0);
    check_uniform(state_of(conv, "bias"), 1.0 / 6.0);
    lt_module_free(conv);
    /* norms: weight 1, bias 0, running mean 0, running var 1 */
    lt_module *ln = lt_nn_layer_norm(3, 1e-5, cpu());
    LT_ASSERT_VALUES(state_of(ln, "weight"), 0, 1, 1, 1);
    LT_ASSERT_VALUES(state_of(ln, "bias"), 0, 0, 0, 0);
    lt_module_free(ln);
    lt_module *bn = lt_nn_batch_norm2d(2, 1e-5, cpu());
    LT_ASSERT_VALUES(state_of(bn, "weight"), 0, 1, 1);
    LT_ASSERT_VALUES(state_of(bn, "bias"), 0, 0, 0);
    LT_ASSERT_VALUES(state_of(bn, "running_mean"), 0, 0, 0);
    LT_ASSERT_VALUES(state_of(bn, "running_var"), 0, 1, 1);
    assert_false(lt_requires_grad(state_of(bn, "running_var")));
    assert_true(lt_requires_grad(state_of(bn, "weight")));
    lt_module_free(bn);
    /* embedding: N(0, 1) */
    lt_module *emb = lt_nn_embedding(100, 40, cpu());
    double *v = lt_test_values(state_of(emb, "weight")), sum = 0, sq = 0;
    for (int i = 0; i < 4000; i++) {
        sum += v[i];
        sq += v[i] * v[i];
    }
    free(v);
    assert_true(fabs(sum / 4000) < 0.1 && fabs(sq / 4000 - 1) < 0.1);
    lt_module_free(emb);
}

static void test_same_seed_identical(void **state)
{
    (void)state;
    lt_manual_seed(42);
    lt_module *a = lt_nn_self_attention(8, 2, false, cpu());
    lt_manual_seed(42);
    lt_module *b = lt_nn_self_attention(8, 2, false, cpu());
    lt_manual_seed(43);
    lt_module *c = lt_nn_self_attention(8, 2, false, cpu());
    lt_tensor *pa[4], *pb[4], *pc[4];
    assert_int_equal(lt_module_parameters(a, pa, NULL, 4), 4);
    lt_module_parameters(b, pb, NULL, 4);
    lt_module_parameters(c, pc, NULL, 4);
    for (int i = 0; i < 4; i++) {
        assert_same_values(pa[i], pb[i], 0);
        double diff;
        assert_int_equal(lt_item(lt_sum(lt_abs(lt_sub(pa[i], pc[i])), NULL, 0, false), &diff), LT_OK);
        assert_true(diff > 0);
    }
    lt_module_free(a);
    lt_module_free(b);
    lt_module_free(c);
}

/* ---- conv2d, pooling, flatten, activations -------------------------------------- */

static void test_conv2d_layer(void **state)
{
    (void)state;
    lt_manual_seed(3);
    lt_module *conv = lt_nn_conv2d(4, 6, 3, 2, 1, 2, true, cpu());
    lt_tensor *x = randn(LT_DIMS(2, 4, 7, 7));
    lt_tensor *y = LT_OK_T(lt_module_forward(conv, x));
    LT_ASSERT_SHAPE(y, 2, 6, 4, 4);
    lt_tensor *expect = lt_conv2d(x, state_of(conv, "weight"), state_of(conv, "bias"), (int64_t[]){2, 2},
                                  (int64_t[]){1, 1}, NULL, 2);
    assert_same_values(y, expect, 0);
    lt_module_free(conv);

    /* 1x1 conv without bias is a per-pixel matrix product: check by hand */
    lt_module *pw = lt_nn_conv2d(2, 3, 1, 1, 0, 1, false, cpu());
    lt_tensor *params[2];
    assert_int_equal(lt_module_parameters(pw, params, NULL, 2), 1);
    double *w = lt_test_values(params[0]);
    lt_tensor *x2 = randn(LT_DIMS(1, 2, 2, 2));
    double *xv = lt_test_values(x2), ref[12];
    for (int o = 0; o < 3; o++)
        for (int p = 0; p < 4; p++)
            ref[o * 4 + p] = w[o * 2] * xv[p] + w[o * 2 + 1] * xv[4 + p];
    LT_ASSERT_ARRAY(lt_module_forward(pw, x2), ref, 12, 1e-5);
    free(w);
    free(xv);
    lt_module_free(pw);
}

static void test_pool_flatten(void **state)
{
    (void)state;
    double v[16];
    for (int i = 0; i < 16; i++)
        v[i] = (i * 7) % 16;
    lt_tensor *x = LT_OK_T(lt_test_tensor(v, LT_DIMS(1, 1, 4, 4), LT_F32));
    /* 0 7 14 5 / 12 3 10 1 / 8 15 6 13 / 4 11 2 9 */
    lt_module *mp = lt_nn_max_pool2d(2), *ap = lt_nn_avg_pool2d(2), *fl = lt_nn_flatten();
    lt_tensor *m = LT_OK_T(lt_module_forward(mp, x));
    LT_ASSERT_SHAPE(m, 1, 1, 2, 2);
    LT_ASSERT_VALUES(m, 0, 12, 14, 15, 13);
    LT_ASSERT_VALUES(lt_module_forward(ap, x), 1e-6, 5.5, 7.5, 9.5, 7.5);
    lt_tensor *f = LT_OK_T(lt_module_forward(fl, lt_reshape(x, LT_DIMS(2, 2, 4))));
    LT_ASSERT_SHAPE(f, 2, 8);
    LT_ASSERT_ARRAY(f, v, 16, 0);
    assert_null(lt_module_forward(fl, lt_zeros(LT_DIMS(5), LT_F32, cpu())));
    LT_EXPECT_ERROR(LT_ERR_SHAPE, "nn.flatten: input has shape [5], expected at least 2 dims");
    lt_module_free(mp);
    lt_module_free(ap);
    lt_module_free(fl);
    assert_null(lt_nn_max_pool2d(0));
    LT_EXPECT_ERROR(LT_ERR_ARGUMENT, "nn.max_pool2d: kernel is 0");
}

static void test_activations(void **state)
{
    (void)state;
    const double xs[5] = {-2, -0.5, 0, 0.7, 3};
    lt_tensor *x = LT_OK_T(lt_test_tensor(xs, LT_DIMS(5), LT_F64));
    lt_module *mods[4] = {lt_nn_relu(), lt_nn_gelu(), lt_nn_silu(), lt_nn_tanh()};
    for (int k = 0; k < 4; k++) {
        double expect[5];
        for (int i = 0; i < 5; i++) {
            double v = xs[i];
            expect[i] = k == 0 ? fmax(v, 0) : k == 1 ? 0.5 * v * (1 + erf(v / sqrt(2.0)))
                      : k == 2 ? v / (1 + exp(-v)) : tanh(v);
        }
        LT_ASSERT_ARRAY(lt_module_forward(mods[k], x), expect, 5, 1e-12);
        lt_module_free(mods[k]);
    }
}

/* ---- dropout ---------------------------------------------------------------------- */

static void test_dropout(void **state)
{
    (void)state;
    lt_manual_seed(4);
    lt_module *d = lt_nn_dropout(0.3);
    int64_t n = 200000;
    lt_tensor *x = lt_ones(&n, 1, LT_F32, cpu());
    lt_tensor *y = LT_OK_T(lt_module_forward(d, x));
    double *v = lt_test_values(y);
    int64_t zeros = 0;
    double sum = 0;
    for (int64_t i = 0; i < n; i++) {
        if (v[i] == 0)
            zeros++;
        else
            assert_float_equal(v[i], (double)(float)(1.0 / 0.7), 1e-6);
        sum += v[i];
    }
    free(v);
    assert_true(fabs((double)zeros / (double)n - 0.3) < 0.005);
    assert_true(fabs(sum / (double)n - 1.0) < 0.01);
    /* the same seed gives the same mask */
    lt_manual_seed(4);
    assert_same_values(lt_module_forward(d, x), y, 0);
    /* eval: identity */
    lt_module_train(d, false);
    lt_tensor *e = LT_OK_T(lt_module_forward(d, x));
    assert_same_values(e, x, 0);
    lt_module_free(d);
    /* p = 0 keeps everything, p = 1 drops everything */
    lt_module *d0 = lt_nn_dropout(0), *d1 = lt_nn_dropout(1);
    lt_tensor *small = LT_T(LT_F32, LT_DIMS(3), 1, -2, 3);
    LT_ASSERT_VALUES(lt_module_forward(d0, small), 0, 1, -2, 3);
    LT_ASSERT_VALUES(lt_module_forward(d1, small), 0, 0, 0, 0);
    lt_module_free(d0);
    lt_module_free(d1);
    assert_null(lt_nn_dropout(-0.1));
    LT_EXPECT_ERROR(LT_ERR_ARGUMENT, "nn.dropout: p is -0.1, expected a probability in [0, 1]");
    assert_null(lt_nn_dropout(1.5));
    LT_EXPECT_ERROR(LT_ERR_ARGUMENT, "nn.dropout: p is 1.5");
    assert_null(lt_nn_dropout(NAN));
    LT_EXPECT_ERROR(LT_ERR_ARGUMENT, "nn.dropout: p is nan");
}

/* ---- layer norm, batch norm -------------------------------------------------------- */

static void test_layer_norm(void **state)
{
    (void)state;
    lt_manual_seed(5);
    const int rows = 3, dim = 5;
    const double eps = 1e-3;
    lt_module *ln = lt_nn_layer_norm(dim, eps, cpu());
    const double w[5] = {1, 2, -1, 0.5, 3}, b[5] = {0, 1, 2, -1, 0.25};
    set_values(state_of(ln, "weight"), w);
    set_values(state_of(ln, "bias"), b);
    lt_tensor *x = randn(LT_DIMS(3, 5));
    double *xv = lt_test_values(x), expect[15];
    for (int r = 0; r < rows; r++) {
        double mean = 0, var = 0;
        for (int i = 0; i < dim; i++)
            mean += xv[r * dim + i] / dim;
        for (int i = 0; i < dim; i++)
            var += (xv[r * dim + i] - mean) * (xv[r * dim + i] - mean) / dim;
        for (int i = 0; i < dim; i++)
            expect[r * dim + i] = (xv[r * dim + i] - mean) / sqrt(var + eps) * w[i] + b[i];
    }
    free(xv);
    LT_ASSERT_ARRAY(lt_module_forward(ln, x), expect, 15, 1e-5);
    /* a transposed input gives the same rows */
    lt_tensor *xt = lt_transpose(lt_contiguous(lt_transpose(x, 0, 1)), 0, 1);
    assert_false(lt_tensor_is_contiguous(xt));
    LT_ASSERT_ARRAY(lt_module_forward(ln, xt), expect, 15, 1e-5);
    assert_null(lt_module_forward(ln, randn(LT_DIMS(3, 4))));
    LT_EXPECT_ERROR(LT_ERR_SHAPE, "nn.layer_norm: input has shape [3, 4], expected [..., 5]");
    lt_module_free(ln);
    assert_null(lt_nn_layer_norm(4, NAN, cpu()));
    LT_EXPECT_ERROR(LT_ERR_ARGUMENT, "nn.layer_norm: eps is nan");
}

/* Per-channel batch mean and biased / unbiased variance over (N, H, W). */
static void channel_stats(const double *x, int n, int c, int hw, int ch, double *mean, double *var_b,
                          double *var_u)
{
    double s = 0, sq = 0;
    int count = n * hw;
    for (int i = 0; i < n; i++)
        for (int p = 0; p < hw; p++)
            s += x[(i * c + ch) * hw + p];
    *mean = s / count;
    for (int i = 0; i < n; i++)
        for (int p = 0; p < hw; p++) {
            double d = x[(i * c + ch) * hw + p] - *mean;
            sq += d * d;
        }
    *var_b = sq / count;
    *var_u = sq / (count - 1);
}

static void test_batch_norm(void **state)
{
    (void)state;
    lt_manual_seed(6);
    const int N = 4, C = 3, HW = 4;
    const double eps = 1e-5;
    lt_module *bn = lt_nn_batch_norm2d(C, eps, cpu());
    const double w[3] = {1.5, -1, 0.5}, b[3] = {0.1, 0.2, -0.3};
    set_values(state_of(bn, "weight"), w);
    set_values(state_of(bn, "bias"), b);
    double rm[3] = {0, 0, 0}, rv[3] = {1, 1, 1};
    for (int round = 0; round < 2; round++) {
        lt_tensor *x = lt_add_scalar(randn(LT_DIMS(4, 3, 2, 2)), round + 1.0);
        double *xv = lt_test_values(x), expect[48];
        for (int ch = 0; ch < C; ch++) {
            double mean, vb, vu;
            channel_stats(xv, N, C, HW, ch, &mean, &vb, &vu);
            for (int i = 0; i < N; i++)
                for (int p = 0; p < HW; p++) {
                    int at = (i * C + ch) * HW + p;
                    expect[at] = (xv[at] - mean) / sqrt(vb + eps) * w[ch] + b[ch];
                }
            rm[ch] = 0.9 * rm[ch] + 0.1 * mean;
            rv[ch] = 0.9 * rv[ch] + 0.1 * vu;
        }
        free(xv);
        LT_ASSERT_ARRAY(lt_module_forward(bn, x), expect, 48, 1e-5);
        LT_ASSERT_ARRAY(state_of(bn, "running_mean"), rm, 3, 1e-6);
        LT_ASSERT_ARRAY(state_of(bn, "running_var"), rv, 3, 1e-6);
    }
    /* eval: the running statistics, which stay unchanged; one value per
     * channel is fine */
    lt_module_train(bn, false);
    lt_tensor *x = randn(LT_DIMS(1, 3, 1, 1));
    double *xv = lt_test_values(x), expect[3];
    for (int ch = 0; ch < C; ch++)
        expect[ch] = (xv[ch] - rm[ch]) / sqrt(rv[ch] + eps) * w[ch] + b[ch];
    free(xv);
    LT_ASSERT_ARRAY(lt_module_forward(bn, x), expect, 3, 1e-5);
    LT_ASSERT_ARRAY(state_of(bn, "running_mean"), rm, 3, 1e-6);
    /* training with one value per channel is refused, as in PyTorch */
    lt_module_train(bn, true);
    assert_null(lt_module_forward(bn, x));
    LT_EXPECT_ERROR(LT_ERR_SHAPE, "nn.batch_norm2d: input has shape [1, 3, 1, 1], expected more than 1 value");
    assert_null(lt_module_forward(bn, randn(LT_DIMS(2, 4, 2, 2))));
    LT_EXPECT_ERROR(LT_ERR_SHAPE, "nn.batch_norm2d: input has shape [2, 4, 2, 2], expected [N, 3, H, W]");
    /* listing: parameters, then buffers */
    lt_tensor *t[4];
    const char *names[4];
    assert_int_equal(lt_module_parameters(bn, t, names, 4), 2);
    assert_int_equal(lt_module_state(bn, t, names, 4), 4);
    assert_string_equal(names[2], "running_mean");
    assert_string_equal(names[3], "running_var");
    lt_module_free(bn);
}

/* ---- embedding --------------------------------------------------------------------- */

static void test_embedding(void **state)
{
    (void)state;
    lt_manual_seed(7);
    lt_module *emb = lt_nn_embedding(5, 3, cpu());
    double *w = lt_test_values(state_of(emb, "weight"));
    lt_tensor *idx = LT_T(LT_I64, LT_DIMS(2, 2), 0, 4, 2, 2);
    lt_tensor *y = LT_OK_T(lt_module_forward(emb, idx));
    LT_ASSERT_SHAPE(y, 2, 2, 3);
    const int rows[4] = {0, 4, 2, 2};
    double expect[12];
    for (int i = 0; i < 4; i++)
        for (int j = 0; j < 3; j++)
            expect[i * 3 + j] = w[rows[i] * 3 + j];
    LT_ASSERT_ARRAY(y, expect, 12, 0);
    LT_ASSERT_ARRAY(lt_module_forward(emb, lt_to_dtype(idx, LT_I32)), expect, 12, 0);
    free(w);
    assert_null(lt_module_forward(emb, LT_T(LT_F32, LT_DIMS(1), 1)));
    LT_EXPECT_ERROR(LT_ERR_DTYPE, "nn.embedding: indices have dtype f32, expected i64 or i32");
    assert_null(lt_module_forward(emb, LT_T(LT_I64, LT_DIMS(1), 5)));
    assert_int_equal(lt_last_status(), LT_ERR_INDEX);
    lt_clear_error();
    lt_module_free(emb);
}

/* ---- self-attention ----------------------------------------------------------------- */

/* Multi-head self-attention in double: x [B, T, D] -> y [B, T, D]. */
static void attention_ref(const double *x, int B, int T, int D, int H, bool causal, const double *wqkv,
                          const double *bqkv, const double *wo, const double *bo, double *y)
{
    int dh = D / H;
    double *qkv = malloc(sizeof(double) * (size_t)(B * T * 3 * D));
    double *ctx = malloc(sizeof(double) * (size_t)(B * T * D));
    linear_ref(x, wqkv, bqkv, B * T, D, 3 * D, qkv);
    for (int b = 0; b < B; b++)
        for (int h = 0; h < H; h++)
            for (int i = 0; i < T; i++) {
                double scores[16], mx = -INFINITY, total = 0;
                const double *q = &qkv[(b * T + i) * 3 * D + h * dh];
                for (int j = 0; j < T; j++) {
                    const double *k = &qkv[(b * T + j) * 3 * D + D + h * dh];
                    double s = 0;
                    for (int e = 0; e < dh; e++)
                        s += q[e] * k[e];
                    scores[j] = (causal && j > i) ? -INFINITY : s / sqrt((double)dh);
                    mx = fmax(mx, scores[j]);
                }
                for (int j = 0; j < T; j++)
                    total += (scores[j] = exp(scores[j] - mx));
                for (int e = 0; e < dh; e++) {
                    double s = 0;
                    for (int j = 0; j < T; j++)
                        s += scores[j] / total * qkv[(b * T + j) * 3 * D + 2 * D + h * dh + e];
                    ctx[(b * T + i) * D + h * dh + e] = s;
                }
            }
    linear_ref(ctx, wo, bo, B * T, D, D, y);
    free(qkv);
    free(ctx);
}

static void check_attention(bool causal)
{
    const int B = 2, T = 3, D = 4, H = 2;
    lt_module *att = lt_nn_self_attention(D, H, causal, cpu());
    assert_non_null(att);
    const char *names[4];
    lt_tensor *p[4];
    assert_int_equal(lt_module_parameters(att, p, names, 4), 4);
    assert_string_equal(names[0], "qkv.weight");
    assert_string_equal(names[1], "qkv.bias");
    assert_string_equal(names[2], "out.weight");
    assert_string_equal(names[3], "out.bias");
    LT_ASSERT_SHAPE(p[0], 12, 4);
    LT_ASSERT_SHAPE(p[2], 4, 4);
    double *w[4];
    for (int i = 0; i < 4; i++)
        w[i] = lt_test_values(p[i]);
    lt_tensor *x = randn(LT_DIMS(2, 3, 4));
    double *xv = lt_test_values(x), expect[24];
    attention_ref(xv, B, T, D, H, causal, w[0], w[1], w[2], w[3], expect);
    lt_tensor *y = LT_OK_T(lt_module_forward(att, x));
    LT_ASSERT_SHAPE(y, 2, 3, 4);
    LT_ASSERT_ARRAY(y, expect, 24, 1e-5);
    free(xv);
    for (int i = 0; i < 4; i++)
        free(w[i]);
    assert_null(lt_module_forward(att, randn(LT_DIMS(2, 3, 5))));
    LT_EXPECT_ERROR(LT_ERR_SHAPE, "nn.self_attention: input has shape [2, 3, 5], expected [B, T, 4]");
    lt_module_free(att);
}

static void test_self_attention(void **state)
{
    (void)state;
    lt_manual_seed(8);
    check_attention(false);
    check_attention(true);
    assert_null(lt_nn_self_attention(6, 4, false, cpu()));
    LT_EXPECT_ERROR(LT_ERR_ARGUMENT, "nn.self_attention: heads is 4, expected a positive divisor of dim");
}

/* ---- sequential, listing, ownership ---------------------------------------------------- */

static void test_sequential(void **state)
{
    (void)state;
    lt_manual_seed(9);
    lt_module *inner = lt_nn_sequential((lt_module *[]){lt_nn_linear(8, 8, true, cpu()), lt_nn_gelu()}, 2);
    lt_module *mods[4] = {lt_nn_linear(4, 8, true, cpu()), inner, lt_nn_batch_norm2d(2, 1e-5, cpu()),
                          lt_nn_tanh()};
    lt_module *seq = lt_nn_sequential(mods, 4);
    assert_non_null(seq);
    const char *names[16];
    lt_tensor *t[16];
    assert_int_equal(lt_module_parameters(seq, t, names, 16), 6);
    const char *expect_names[8] = {"0.weight", "0.bias",   "1.0.weight",      "1.0.bias",
                                   "2.weight", "2.bias",   "2.running_mean",  "2.running_var"};
    for (int i = 0; i < 6; i++)
        assert_string_equal(names[i], expect_names[i]);
    assert_int_equal(lt_module_state(seq, t, names, 16), 8);
    for (int i = 0; i < 8; i++)
        assert_string_equal(names[i], expect_names[i]);
    /* max smaller than the count: writes max entries, returns the count */
    const char *few[2] = {NULL, NULL};
    lt_tensor *sentinel[3] = {NULL, NULL, NULL};
    assert_int_equal(lt_module_parameters(seq, sentinel, few, 2), 6);
    assert_string_equal(few[1], "0.bias");
    assert_null(sentinel[2]);
    assert_int_equal(lt_module_state(seq, NULL, NULL, 0), 8);
    lt_module_free(seq);

    /* forward equals the layers applied one by one */
    lt_manual_seed(10);
    lt_module *a = lt_nn_linear(3, 5, true, cpu()), *b = lt_nn_relu(), *c = lt_nn_linear(5, 2, false, cpu());
    lt_tensor *x = randn(LT_DIMS(4, 3));
    lt_tensor *manual = lt_module_forward(c, lt_module_forward(b, lt_module_forward(a, x)));
    lt_module *s = lt_nn_sequential((lt_module *[]){a, b, c}, 3);
    assert_same_values(lt_module_forward(s, x), manual, 0);
    /* children belong to the container */
    lt_module_free(b);
    LT_EXPECT_ERROR(LT_ERR_STATE, "module_free: this nn.relu module is owned by an nn.sequential container");
    assert_null(lt_nn_sequential((lt_module *[]){b}, 1));
    LT_EXPECT_ERROR(LT_ERR_STATE, "nn.sequential: module 0 (nn.relu) already belongs to an nn.sequential");
    lt_module_free(s);

    /* an empty sequential is the identity */
    lt_module *empty = lt_nn_sequential(NULL, 0);
    assert_ptr_equal(lt_module_forward(empty, x), x);
    assert_int_equal(lt_module_parameters(empty, NULL, NULL, 0), 0);
    lt_module_free(empty);
}

static void test_sequential_failures_free(void **state)
{
    (void)state;
    int64_t live = lt_live_tensor_count();
    /* a failing constructor inside the list: the others are freed */
    lt_module *s = lt_nn_sequential((lt_module *[]){lt_nn_linear(4, 4, true, cpu()), lt_nn_linear(0, 4, true, cpu()),
                                                    lt_nn_relu()}, 3);
    assert_null(s);
    LT_EXPECT_ERROR(LT_ERR_ARGUMENT, "nn.linear: in_features is 0, expected >= 1");
    assert_int_equal(lt_live_tensor_count(), live);
    /* the same module twice: freed once */
    lt_module *lin = lt_nn_linear(2, 2, true, cpu());
    assert_null(lt_nn_sequential((lt_module *[]){lin, lin}, 2));
    LT_EXPECT_ERROR(LT_ERR_ARGUMENT, "nn.sequential: modules 0 and 1 are the same module");
    assert_int_equal(lt_live_tensor_count(), live);
    assert_null(lt_nn_sequential(NULL, 2));
    LT_EXPECT_ERROR(LT_ERR_NULL, "nn.sequential: mods is NULL with n = 2");
    assert_null(lt_nn_sequential(NULL, -1));
    LT_EXPECT_ERROR(LT_ERR_ARGUMENT, "nn.sequential: n is -1");
    assert_null(lt_nn_sequential((lt_module *[]){NULL}, 1));
    LT_EXPECT_ERROR(LT_ERR_NULL, "nn.sequential: module 0 is NULL");
}

static void test_train_eval_flag(void **state)
{
    (void)state;
    lt_manual_seed(11);
    lt_module *seq = lt_nn_sequential((lt_module *[]){lt_nn_dropout(0.5), lt_nn_relu()}, 2);
    lt_tensor *x = lt_ones(LT_DIMS(64), LT_F32, cpu());
    double sum;
    assert_int_equal(lt_item(lt_sum(lt_module_forward(seq, x), NULL, 0, false), &sum), LT_OK);
    assert_true(sum != 64.0); /* training: some dropped, the rest doubled */
    lt_module_train(seq, false);
    double ones[64];
    for (int i = 0; i < 64; i++)
        ones[i] = 1.0;
    LT_ASSERT_ARRAY(lt_module_forward(seq, x), ones, 64, 0);
    lt_module_free(seq);
}

/* Inputs of other floating dtypes: results follow type promotion with the
 * f32 parameters and match the f32 computation on the same values. */
static void test_input_dtypes(void **state)
{
    (void)state;
    lt_manual_seed(15);
    lt_module *lin = lt_nn_linear(4, 3, true, cpu()), *ln = lt_nn_layer_norm(4, 1e-5, cpu());
    lt_module *drop = lt_nn_dropout(0.5);
    lt_tensor *x = randn(LT_DIMS(2, 4));
    const lt_dtype dts[3] = {LT_F64, LT_BF16, LT_F16};
    for (int k = 0; k < 3; k++) {
        lt_tensor *xd = lt_to_dtype(x, dts[k]);
        lt_tensor *as_f32 = lt_to_dtype(xd, LT_F32); /* the same (rounded) values */
        lt_dtype want = dts[k] == LT_F64 ? LT_F64 : LT_F32;
        lt_tensor *y = LT_OK_T(lt_module_forward(lin, xd));
        assert_int_equal(lt_tensor_dtype(y), want);
        assert_same_values(y, lt_module_forward(lin, as_f32), 1e-5);
        lt_tensor *z = LT_OK_T(lt_module_forward(ln, xd));
        assert_int_equal(lt_tensor_dtype(z), want);
        /* half inputs: the statistics are computed in the input's dtype */
        assert_same_values(z, lt_module_forward(ln, as_f32), dts[k] == LT_F64 ? 1e-5 : 3e-2);
        /* dropout keeps the dtype; every element is 0 or 2x */
        lt_tensor *d = LT_OK_T(lt_module_forward(drop, xd));
        assert_int_equal(lt_tensor_dtype(d), dts[k]);
        double *dv = lt_test_values(d), *xv = lt_test_values(xd);
        for (int i = 0; i < 8; i++)
            assert_true(dv[i] == 0 || fabs(dv[i] - 2 * xv[i]) <= 1e-2 * fabs(xv[i]));
        free(dv);
        free(xv);
    }
    lt_module_free(lin);
    lt_module_free(ln);
    lt_module_free(drop);
}

/* ---- devices ----------------------------------------------------------------------------- */

/* A small CNN + MLP + attention; the same seed on cpu and lazy must give
 * the same forward. */
static lt_module *cnn(lt_device dev)
{
    lt_module *mods[] = {lt_nn_conv2d(2, 4, 3, 1, 1, 1, true, dev), lt_nn_batch_norm2d(4, 1e-5, dev),
                         lt_nn_relu(), lt_nn_max_pool2d(2), lt_nn_avg_pool2d(1), lt_nn_flatten(),
                         lt_nn_linear(16, 8, true, dev), lt_nn_layer_norm(8, 1e-5, dev), lt_nn_silu(),
                         lt_nn_dropout(0.25), lt_nn_linear(8, 3, true, dev)};
    return lt_nn_sequential(mods, (int)(sizeof mods / sizeof mods[0]));
}

static void test_eager_vs_lazy(void **state)
{
    (void)state;
    lt_manual_seed(12);
    lt_module *mc = cnn(cpu());
    lt_manual_seed(12);
    lt_module *ml = cnn(lazy());
    assert_non_null(mc);
    assert_non_null(ml);
    lt_tensor *tc[16], *tl[16];
    int n = lt_module_state(mc, tc, NULL, 16);
    assert_int_equal(lt_module_state(ml, tl, NULL, 16), n);
    for (int i = 0; i < n; i++) {
        assert_int_equal(lt_tensor_device(tl[i]).kind, LT_DEVICE_LAZY);
        assert_same_values(tl[i], tc[i], 0);
    }
    lt_tensor *x = randn(LT_DIMS(3, 2, 4, 4));
    lt_manual_seed(99); /* dropout masks: same generator state */
    lt_tensor *yc = LT_OK_T(lt_module_forward(mc, x));
    lt_manual_seed(99);
    lt_tensor *yl = LT_OK_T(lt_module_forward(ml, lt_to(x, lazy())));
    assert_int_equal(lt_tensor_device(yl).kind, LT_DEVICE_LAZY);
    assert_same_values(yl, yc, 1e-5);
    /* batch norm running statistics were updated alike */
    for (int i = 0; i < n; i++)
        assert_same_values(tl[i], tc[i], 1e-6);
    /* eval mode */
    lt_module_train(mc, false);
    lt_module_train(ml, false);
    assert_same_values(lt_module_forward(ml, lt_to(x, lazy())), lt_module_forward(mc, x), 1e-5);
    /* a cpu input into a lazy model */
    assert_null(lt_module_forward(ml, x));
    LT_EXPECT_ERROR(LT_ERR_DEVICE, "nn.conv2d: input is on cpu:0 but the module's parameters are on lazy:0");
    lt_module_free(mc);
    lt_module_free(ml);

    /* attention, causal, on both devices */
    lt_manual_seed(13);
    lt_module *ac = lt_nn_self_attention(8, 4, true, cpu());
    lt_manual_seed(13);
    lt_module *al = lt_nn_self_attention(8, 4, true, lazy());
    lt_tensor *xa = randn(LT_DIMS(2, 5, 8));
    assert_same_values(lt_module_forward(al, lt_to(xa, lazy())), lt_module_forward(ac, xa), 1e-5);
    lt_module_free(ac);
    lt_module_free(al);
}

static void test_module_to(void **state)
{
    (void)state;
    lt_manual_seed(14);
    lt_module *m = lt_nn_sequential((lt_module *[]){lt_nn_linear(3, 4, true, cpu()),
                                                    lt_nn_batch_norm2d(4, 1e-5, cpu())}, 2);
    lt_module *lin = lt_nn_linear(3, 2, true, cpu());
    lt_tensor *x = randn(LT_DIMS(5, 3));
    lt_tensor *yc = LT_OK_T(lt_module_forward(lin, x));
    assert_int_equal(lt_module_to(lin, lazy()), LT_OK);
    lt_tensor *p[2];
    const char *names[2];
    assert_int_equal(lt_module_parameters(lin, p, names, 2), 2);
    assert_string_equal(names[0], "weight");
    assert_int_equal(lt_tensor_device(p[0]).kind, LT_DEVICE_LAZY);
    assert_true(lt_requires_grad(p[0]) && lt_requires_grad(p[1]));
    assert_same_values(lt_module_forward(lin, lt_to(x, lazy())), yc, 1e-6);
    assert_int_equal(lt_module_to(lin, cpu()), LT_OK);
    assert_same_values(lt_module_forward(lin, x), yc, 1e-6);
    assert_int_equal(lt_module_to(m, lazy()), LT_OK);
    lt_tensor *st[6];
    assert_int_equal(lt_module_state(m, st, NULL, 6), 6);
    for (int i = 0; i < 6; i++)
        assert_int_equal(lt_tensor_device(st[i]).kind, LT_DEVICE_LAZY);
    assert_false(lt_requires_grad(st[5])); /* buffers stay without grad */
    assert_int_equal(lt_module_to(m, (lt_device){LT_DEVICE_INVALID, 0}), LT_ERR_DEVICE);
    LT_EXPECT_ERROR(LT_ERR_DEVICE, "module_to: device invalid:0 is not available");
    assert_int_equal(lt_module_to(NULL, cpu()), LT_ERR_NULL);
    lt_clear_error();
    lt_module_free(m);
    lt_module_free(lin);
}

/* ---- bad input ------------------------------------------------------------------------------ */

static void test_bad_input(void **state)
{
    (void)state;
    int64_t live = lt_live_tensor_count();
    assert_null(lt_nn_linear(3, -1, true, cpu()));
    LT_EXPECT_ERROR(LT_ERR_ARGUMENT, "nn.linear: out_features is -1, expected >= 1");
    assert_null(lt_nn_linear(3, 2, true, (lt_device){LT_DEVICE_CPU, 3}));
    LT_EXPECT_ERROR(LT_ERR_DEVICE, "nn.linear: device cpu:3 is not available");
    assert_null(lt_nn_conv2d(3, 4, 3, 1, 0, 2, true, cpu()));
    LT_EXPECT_ERROR(LT_ERR_ARGUMENT, "nn.conv2d: in_channels is 3, expected a positive multiple of groups (2)");
    assert_null(lt_nn_conv2d(4, 4, 3, 0, 0, 1, true, cpu()));
    LT_EXPECT_ERROR(LT_ERR_ARGUMENT, "nn.conv2d: stride is 0");
    assert_null(lt_nn_conv2d(4, 4, 3, 1, -1, 1, true, cpu()));
    LT_EXPECT_ERROR(LT_ERR_ARGUMENT, "nn.conv2d: padding is -1");
    assert_null(lt_nn_batch_norm2d(0, 1e-5, cpu()));
    LT_EXPECT_ERROR(LT_ERR_ARGUMENT, "nn.batch_norm2d: channels is 0");
    assert_null(lt_nn_embedding(0, 3, cpu()));
    LT_EXPECT_ERROR(LT_ERR_ARGUMENT, "nn.embedding: num is 0");
    assert_int_equal(lt_live_tensor_count(), live);

    lt_module *lin = lt_nn_linear(3, 2, true, cpu());
    assert_null(lt_module_forward(lin, LT_T(LT_I64, LT_DIMS(1, 3), 1, 2, 3)));
    LT_EXPECT_ERROR(LT_ERR_DTYPE, "nn.linear: input has dtype i64, expected a floating dtype");
    assert_null(lt_module_forward(lin, randn(LT_DIMS(2, 4))));
    LT_EXPECT_ERROR(LT_ERR_SHAPE, "nn.linear: input has shape [2, 4], expected [..., 3] (in_features)");
    assert_null(lt_module_forward(lin, lt_scalar(1, LT_F32, cpu())));
    LT_EXPECT_ERROR(LT_ERR_SHAPE, "nn.linear: input has shape [], expected [..., 3]");
    assert_null(lt_module_forward(lin, NULL));
    LT_EXPECT_ERROR(LT_ERR_NULL, "module_forward: argument 1 is NULL");
    assert_null(lt_module_forward(NULL, randn(LT_DIMS(2, 3))));
    LT_EXPECT_ERROR(LT_ERR_NULL, "module_forward: module is NULL");
    lt_scope_begin();
    lt_tensor *dead = randn(LT_DIMS(2, 3));
    lt_scope_end(); /* its only reference dropped */
    assert_null(lt_module_forward(lin, dead));
    LT_EXPECT_ERROR(LT_ERR_RELEASED, "module_forward: argument 1 was used after");
    assert_int_equal(lt_module_parameters(NULL, NULL, NULL, 0), -1);
    LT_EXPECT_ERROR(LT_ERR_NULL, "module_parameters: module is NULL");
    assert_int_equal(lt_module_parameters(lin, NULL, NULL, -1), -1);
    LT_EXPECT_ERROR(LT_ERR_ARGUMENT, "module_parameters: max is -1");
    assert_int_equal(lt_module_state(lin, NULL, NULL, 3), -1);
    LT_EXPECT_ERROR(LT_ERR_NULL, "module_state: tensors and names are both NULL");
    lt_module_train(NULL, true);
    LT_EXPECT_ERROR(LT_ERR_NULL, "module_train: module is NULL");
    lt_module_free(NULL);
    assert_int_equal(lt_last_status(), LT_OK);
    lt_module_free(lin);

    lt_module *conv = lt_nn_conv2d(2, 4, 3, 1, 0, 1, false, cpu());
    assert_null(lt_module_forward(conv, randn(LT_DIMS(1, 3, 5, 5))));
    LT_EXPECT_ERROR(LT_ERR_SHAPE, "nn.conv2d: input has shape [1, 3, 5, 5], expected [N, 2, H, W]");
    assert_null(lt_module_forward(conv, randn(LT_DIMS(2, 5, 5))));
    LT_EXPECT_ERROR(LT_ERR_SHAPE, "nn.conv2d: input has shape [2, 5, 5], expected [N, 2, H, W]");
    assert_null(lt_module_forward(conv, randn(LT_DIMS(1, 2, 2, 2))));
    LT_EXPECT_ERROR(LT_ERR_SHAPE, "conv2d:"); /* kernel larger than the input: the op's own message */
    lt_module_free(conv);
}

/* ---- losses ---------------------------------------------------------------------------------- */

static const double logits_v[12] = {1.0, 2.0, 0.5, -1.0, 0.0, 0.0, 3.0, 1.0, -2.0, 0.5, 0.25, 4.0};
static const int64_t targets_v[3] = {1, 0, 3};

/* Cross entropy in double, PyTorch's definition. */
static double cross_entropy_ref(double ls)
{
    double nll = 0, smooth = 0;
    for (int n = 0; n < 3; n++) {
        const double *row = &logits_v[n * 4];
        double mx = -INFINITY, s = 0;
        for (int c = 0; c < 4; c++)
            mx = fmax(mx, row[c]);
        for (int c = 0; c < 4; c++)
            s += exp(row[c] - mx);
        double lse = mx + log(s);
        nll += -(row[targets_v[n]] - lse) / 3;
        for (int c = 0; c < 4; c++)
            smooth += -(row[c] - lse) / 4 / 3;
    }
    return (1 - ls) * nll + ls * smooth;
}

static void check_losses(lt_device dev)
{
    lt_tensor *logits = lt_to(LT_OK_T(lt_test_tensor(logits_v, LT_DIMS(3, 4), LT_F64)), dev);
    lt_tensor *targets = lt_to(LT_OK_T(lt_from_data(targets_v, LT_DIMS(3), LT_I64, cpu())), dev);
    lt_tensor *ce = LT_OK_T(lt_cross_entropy(logits, targets, 0.0));
    assert_int_equal(lt_tensor_ndim(ce), 0);
    LT_ASSERT_VALUES(ce, 1e-12, cross_entropy_ref(0.0));
    LT_ASSERT_VALUES(lt_cross_entropy(logits, targets, 0.1), 1e-12, cross_entropy_ref(0.1));
    LT_ASSERT_VALUES(lt_cross_entropy(logits, lt_to_dtype(targets, LT_I32), 0.3), 1e-12, cross_entropy_ref(0.3));
    /* f32 logits */
    LT_ASSERT_VALUES(lt_cross_entropy(lt_to_dtype(logits, LT_F32), targets, 0.1), 1e-6, cross_entropy_ref(0.1));
    /* nll of log_softmax is the cross entropy */
    LT_ASSERT_VALUES(lt_nll_loss(lt_log_softmax(logits, 1), targets), 1e-12, cross_entropy_ref(0.0));
    /* nll on literal log-probabilities: -(a[0][1] + a[1][0]) / 2 */
    lt_tensor *lp = lt_to(LT_T(LT_F64, LT_DIMS(2, 2), -0.5, -2.0, -0.25, -1.5), dev);
    lt_tensor *t2 = lt_to(LT_T(LT_I64, LT_DIMS(2), 1, 0), dev);
    LT_ASSERT_VALUES(lt_nll_loss(lp, t2), 1e-15, 1.125);
    /* mse */
    lt_tensor *a = lt_to(LT_T(LT_F64, LT_DIMS(2, 2), 1, 2, 3, 4), dev);
    lt_tensor *b = lt_to(LT_T(LT_F64, LT_DIMS(2, 2), 0, 2, 5, 3.5), dev);
    LT_ASSERT_VALUES(lt_mse_loss(a, b), 1e-15, (1 + 0 + 4 + 0.25) / 4);
    /* non-contiguous operands */
    LT_ASSERT_VALUES(lt_mse_loss(lt_transpose(a, 0, 1), lt_transpose(b, 0, 1)), 1e-15, 5.25 / 4);
}

static void test_losses(void **state)
{
    (void)state;
    check_losses(cpu());
    check_losses(lazy());
}

static void test_loss_errors(void **state)
{
    (void)state;
    lt_tensor *logits = LT_OK_T(lt_test_tensor(logits_v, LT_DIMS(3, 4), LT_F32));
    lt_tensor *targets = LT_OK_T(lt_from_data(targets_v, LT_DIMS(3), LT_I64, cpu()));
    assert_null(lt_cross_entropy(lt_to_dtype(logits, LT_I32), targets, 0));
    LT_EXPECT_ERROR(LT_ERR_DTYPE, "cross_entropy: input has dtype i32, expected a floating dtype");
    assert_null(lt_cross_entropy(logits, lt_to_dtype(targets, LT_F32), 0));
    LT_EXPECT_ERROR(LT_ERR_DTYPE, "cross_entropy: targets have dtype f32, expected class indices");
    assert_null(lt_cross_entropy(lt_flatten(logits, 0, 1), targets, 0));
    LT_EXPECT_ERROR(LT_ERR_SHAPE, "cross_entropy: input has shape [12], expected 2 dims [N, C]");
    assert_null(lt_cross_entropy(logits, lt_narrow(targets, 0, 0, 2), 0));
    LT_EXPECT_ERROR(LT_ERR_SHAPE, "cross_entropy: targets have shape [2], expected [3] to match input [3, 4]");
    assert_null(lt_cross_entropy(logits, LT_T(LT_I64, LT_DIMS(3), 0, 4, 1), 0));
    LT_EXPECT_ERROR(LT_ERR_INDEX, "cross_entropy: target 4 at position 1 is out of range, expected a class in [0, 4)");
    assert_null(lt_nll_loss(logits, LT_T(LT_I32, LT_DIMS(3), 0, 1, -1)));
    LT_EXPECT_ERROR(LT_ERR_INDEX, "nll_loss: target -1 at position 2");
    assert_null(lt_cross_entropy(logits, targets, 1.0));
    LT_EXPECT_ERROR(LT_ERR_ARGUMENT, "cross_entropy: label_smoothing is 1, expected a value in [0, 1)");
    assert_null(lt_cross_entropy(logits, targets, -0.5));
    LT_EXPECT_ERROR(LT_ERR_ARGUMENT, "label_smoothing is -0.5");
    assert_null(lt_cross_entropy(NULL, targets, 0));
    LT_EXPECT_ERROR(LT_ERR_NULL, "cross_entropy: argument 0 is NULL");
    assert_null(lt_cross_entropy(logits, NULL, 0));
    LT_EXPECT_ERROR(LT_ERR_NULL, "cross_entropy: argument 1 is NULL");
    assert_null(lt_cross_entropy(lt_to(logits, lazy()), targets, 0));
    LT_EXPECT_ERROR(LT_ERR_DEVICE, "cross_entropy: input is on lazy:0 but targets are on cpu:0");
    assert_null(lt_mse_loss(logits, lt_transpose(logits, 0, 1)));
    LT_EXPECT_ERROR(LT_ERR_SHAPE, "mse_loss: input has shape [3, 4] and target [4, 3], expected equal shapes");
    assert_null(lt_mse_loss(logits, lt_to_dtype(logits, LT_I64)));
    LT_EXPECT_ERROR(LT_ERR_DTYPE, "mse_loss: input and target have dtypes f32 and i64, expected floating");
    /* an empty batch: the mean over nothing is NaN, as in PyTorch */
    lt_tensor *none = LT_OK_T(lt_cross_entropy(lt_zeros(LT_DIMS(0, 4), LT_F32, cpu()),
                                               lt_zeros(LT_DIMS(0), LT_I64, cpu()), 0.1));
    LT_ASSERT_VALUES(none, 0, NAN);
    /* on the lazy device an out-of-range target is found when the graph runs */
    lt_tensor *bad_targets = lt_to(LT_T(LT_I64, LT_DIMS(3), 0, 9, 1), lazy());
    lt_tensor *bad = LT_OK_T(lt_cross_entropy(lt_to(logits, lazy()), bad_targets, 0));
    double v;
    assert_int_not_equal(lt_item(bad, &v), LT_OK);
    assert_int_equal(lt_last_status(), LT_ERR_INDEX);
    lt_clear_error();
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        LT_TEST(test_linear_forward),   LT_TEST(test_init_bounds),     LT_TEST(test_same_seed_identical),
        LT_TEST(test_conv2d_layer),     LT_TEST(test_pool_flatten),    LT_TEST(test_activations),
        LT_TEST(test_dropout),          LT_TEST(test_layer_norm),      LT_TEST(test_batch_norm),
        LT_TEST(test_embedding),        LT_TEST(test_self_attention),  LT_TEST(test_sequential),
        LT_TEST(test_sequential_failures_free), LT_TEST(test_train_eval_flag),
        LT_TEST(test_input_dtypes), LT_TEST(test_eager_vs_lazy),
        LT_TEST(test_module_to),        LT_TEST(test_bad_input),       LT_TEST(test_losses),
        LT_TEST(test_loss_errors),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
