/*
 * test_compiler_scatter.c - slice_scatter and select_scatter compiled as
 * elementwise ops (src/compiler/schedule.c, eval_view_scatter).
 *
 * The sum of scatters that assembles a qkv-shaped gradient from q, k and v
 * is one pointwise kernel with no call into the eager kernel, and gives
 * the concatenation. Every variant (a step, an empty or whole slice, a
 * negative dim, a 0-d source, integer and bf16 data, overlapping scatters,
 * sources and bases computed in the same graph) gives the same bits on the
 * lazy device, on both backends, as on the cpu device.
 */
#include "lt_test.h"

#include "api/api.h" /* lt_call: the scatters have no public wrapper */

static lt_device lazy(void) { return lt_device_parse("lazy"); }

static lt_tensor *slice_scatter(lt_tensor *base, lt_tensor *src, int dim, int64_t start, int64_t end, int64_t step)
{
    lt_attrs a = lt_attrs_init();
    a.i[0] = dim, a.i[1] = start, a.i[2] = end, a.i[3] = step, a.ni = 4;
    lt_tensor *in[2] = {base, src};
    return lt_call(LT_OP_SLICE_SCATTER, in, 2, &a, NULL);
}

static lt_tensor *select_scatter(lt_tensor *base, lt_tensor *src, int dim, int64_t index)
{
    lt_attrs a = lt_attrs_init();
    a.i[0] = dim, a.i[1] = index, a.ni = 2;
    lt_tensor *in[2] = {base, src};
    return lt_call(LT_OP_SELECT_SCATTER, in, 2, &a, NULL);
}

/* n values 1 + 0.25 i (times -1 every third) of dtype dt, on dev. */
static lt_tensor *seq(const int64_t *dims, int nd, lt_dtype dt, double shift, lt_device dev)
{
    int64_t n = lt_shape_numel(dims, nd);
    double *v = malloc(sizeof *v * (size_t)(n ? n : 1));
    assert_non_null(v);
    for (int64_t i = 0; i < n; i++)
        v[i] = (i % 3 == 0 ? -1.0 : 1.0) * (shift + 0.25 * (double)i);
    if (!lt_dtype_is_floating(dt))
        for (int64_t i = 0; i < n; i++)
            v[i] = floor(v[i]);
    lt_tensor *t = LT_OK_T(lt_to(LT_OK_T(lt_test_tensor(v, dims, nd, dt)), dev));
    free(v);
    return t;
}

static void test_scatter_sum_is_one_kernel(void **state)
{
    (void)state;
    assert_int_equal(lt_lazy_set_backend("cpu"), LT_OK);
    const int64_t part[3] = {2, 3, 5}, whole[3] = {2, 3, 15};
    lt_tensor *q = lt_persist(seq(part, 3, LT_F32, 1, lazy()));
    lt_tensor *k = lt_persist(seq(part, 3, LT_F32, 20, lazy()));
    lt_tensor *v = lt_persist(seq(part, 3, LT_F32, 40, lazy()));
    assert_int_equal(lt_mark_step(), LT_OK);
    lt_metrics_reset();
    lt_scope_begin();
    lt_tensor *zeros = lt_zeros(whole, 3, LT_F32, lazy());
    lt_tensor *sum = lt_add(lt_add(slice_scatter(zeros, q, 2, 0, 5, 1), slice_scatter(zeros, k, 2, 5, 10, 1)),
                            slice_scatter(zeros, v, -1, 10, 15, 1));
    lt_tensor *kept = lt_keep(LT_OK_T(sum));
    lt_scope_end();
    assert_int_equal(lt_mark_step(), LT_OK);
    assert_int_equal(lt_metrics_counter("Kernels"), 1);
    assert_int_equal(lt_metrics_counter("KernelCalls"), 0);
    double *got = lt_test_values(kept), *qs = lt_test_values(q), *ks = lt_test_values(k), *vs = lt_test_values(v);
    for (int64_t r = 0; r < 6; r++)
        for (int64_t j = 0; j < 15; j++) {
            const double *from = j < 5 ? qs : j < 10 ? ks : vs;
            assert_true(got[r * 15 + j] == from[r * 5 + j % 5]);
        }
    free(got), free(qs), free(ks), free(vs);
    lt_release(kept), lt_release(q), lt_release(k), lt_release(v);
}

/* Every variant on dev: the results, as doubles, one after another. */
static double *variants(lt_device dev, int64_t *count)
{
    lt_scope_begin();
    lt_tensor *out[9];
    /* a step of 3 along dim 1: positions 1, 4, 7, 10 */
    out[0] = slice_scatter(seq((int64_t[]){3, 11}, 2, LT_F32, 1, dev), seq((int64_t[]){3, 4}, 2, LT_F32, 50, dev), 1, 1,
                           11, 3);
    /* an empty slice, and a whole one */
    out[1] = slice_scatter(seq((int64_t[]){4, 5}, 2, LT_F32, 1, dev), seq((int64_t[]){0, 5}, 2, LT_F32, 9, dev), 0, 2,
                           2, 1);
    out[2] = slice_scatter(seq((int64_t[]){4, 5}, 2, LT_F32, 1, dev), seq((int64_t[]){4, 5}, 2, LT_F32, 9, dev), 0, 0,
                           4, 1);
    /* select_scatter on the last dim (negative), integers */
    out[3] = select_scatter(seq((int64_t[]){3, 4}, 2, LT_I64, 1, dev), seq((int64_t[]){3}, 1, LT_I64, 70, dev), -1, 2);
    /* a 0-d source */
    out[4] = select_scatter(seq((int64_t[]){5}, 1, LT_F32, 1, dev), lt_scalar(7.5, LT_F32, dev), 0, 4);
    /* bf16 */
    out[5] = slice_scatter(seq((int64_t[]){6, 4}, 2, LT_BF16, 1, dev), seq((int64_t[]){2, 4}, 2, LT_BF16, 3, dev), 0, 3,
                           5, 1);
    /* base and source computed in the same graph, the result used further */
    lt_tensor *x = seq((int64_t[]){4, 6}, 2, LT_F32, 2, dev);
    out[6] = lt_mul(slice_scatter(lt_mul_scalar(x, 2.0), lt_exp(lt_narrow(x, 1, 0, 2)), 1, 3, 5, 1), x);
    /* overlapping scatters into one base: the later one wins */
    lt_tensor *b = seq((int64_t[]){2, 8}, 2, LT_F32, 1, dev);
    out[7] = slice_scatter(slice_scatter(b, seq((int64_t[]){2, 4}, 2, LT_F32, 30, dev), 1, 0, 4, 1),
                           seq((int64_t[]){2, 3}, 2, LT_F32, 60, dev), 1, 2, 5, 1);
    /* a select of a slice_scatter on the middle dim of a 3-d base */
    out[8] = select_scatter(seq((int64_t[]){2, 3, 4}, 3, LT_F32, 1, dev), seq((int64_t[]){2, 4}, 2, LT_F32, 80, dev), 1,
                            1);
    for (int i = 0; i < 9; i++)
        LT_OK_T(out[i]);
    if (dev.kind == LT_DEVICE_LAZY)
        assert_int_equal(lt_mark_step(), LT_OK);
    int64_t n = 0;
    for (int i = 0; i < 9; i++)
        n += lt_tensor_numel(out[i]);
    double *all = malloc(sizeof *all * (size_t)n), *at = all;
    assert_non_null(all);
    for (int i = 0; i < 9; i++) {
        double *v = lt_test_values(out[i]);
        memcpy(at, v, sizeof *v * (size_t)lt_tensor_numel(out[i]));
        at += lt_tensor_numel(out[i]);
        free(v);
    }
    lt_scope_end();
    *count = n;
    return all;
}

static void test_variants_match_the_cpu_device(void **state)
{
    (void)state;
    int64_t n = 0, m = 0;
    double *want = variants(lt_device_cpu(), &n);
    const char *backends[2] = {"interp", "cpu"};
    for (int b = 0; b < 2; b++) {
        assert_int_equal(lt_lazy_set_backend(backends[b]), LT_OK);
        double *got = variants(lazy(), &m);
        assert_int_equal(m, n);
        for (int64_t i = 0; i < n; i++)
            if (!(got[i] == want[i]))
                fail_msg("lazy/%s: value %lld is %g, the cpu device gives %g", backends[b], (long long)i, got[i],
                         want[i]);
        free(got);
    }
    /* known values: row 0, column 10 of the first holds source value 3,
     * -(50 + 0.75), and column 9 the base's 1 + 0.25 * 9; the 0-d select
     * (after 33 + 20 + 20 + 12 values) wrote 7.5 at position 4 only */
    assert_true(want[10] == -50.75);
    assert_true(want[9] == -(1 + 0.25 * 9));
    assert_true(want[85 + 4] == 7.5);
    assert_true(want[85 + 3] == -1.75); /* the base, untouched */
    free(want);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        LT_TEST(test_scatter_sum_is_one_kernel),
        LT_TEST(test_variants_match_the_cpu_device),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
