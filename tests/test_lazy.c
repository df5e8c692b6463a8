/* test_lazy.c - the lazy device: golden IR of the paper's figures, the
 * program cache, barrier semantics, views and in-place updates, fallback,
 * donation, metrics and dumps. */
#include "lt_test.h"

static lt_device lazy(void) { return lt_device_parse("lazy"); }

/* The IR text behind t, into a static buffer. */
static const char *ir_of(lt_tensor *t)
{
    static char buf[8192];
    int n = lt_ir_text(&t, 1, buf, sizeof buf);
    assert_true(n > 0 && n < (int)sizeof buf);
    return buf;
}

static lt_tensor *lazy_data(const double *v, const int64_t *dims, int ndim)
{
    lt_tensor *c = LT_OK_T(lt_test_tensor(v, dims, ndim, LT_F32));
    return LT_OK_T(lt_to(c, lazy()));
}

static const double vals8[8] = {1, 2, 3, 4, 5, 6, 7, 8};

/* Figure 1: x * y + z on f32[2, 4]. */
static void test_golden_figure1(void **state)
{
    (void)state;
    int64_t dims[2] = {2, 4};
    lt_tensor *x = lazy_data(vals8, dims, 2), *y = lazy_data(vals8, dims, 2), *z = lazy_data(vals8, dims, 2);
    lt_tensor *r = LT_OK_T(lt_add(lt_mul(x, y), z));
    assert_string_equal(ir_of(r), "IR {\n"
                                  "  %0 = f32[2,4] device_data()\n"
                                  "  %1 = f32[2,4] device_data()\n"
                                  "  %2 = f32[2,4] mul(%0, %1)\n"
                                  "  %3 = f32[2,4] device_data()\n"
                                  "  %4 = f32[2,4] add(%2, %3), ROOT=0\n"
                                  "}\n");
    LT_ASSERT_VALUES(r, 0, 2, 6, 12, 20, 30, 42, 56, 72);
}

/* Figure 2: for i in 0..2: s = s + x (the loop unrolls into the graph). */
static void test_golden_figure2(void **state)
{
    (void)state;
    int64_t dims[2] = {2, 4};
    lt_tensor *x = lazy_data(vals8, dims, 2), *s = lazy_data(vals8, dims, 2);
    for (int i = 0; i < 2; i++)
        s = lt_add(s, x);
    assert_string_equal(ir_of(s), "IR {\n"
                                  "  %0 = f32[2,4] device_data()\n"
                                  "  %1 = f32[2,4] device_data()\n"
                                  "  %2 = f32[2,4] add(%0, %1)\n"
                                  "  %3 = f32[2,4] add(%2, %1), ROOT=0\n"
                                  "}\n");
    LT_ASSERT_VALUES(s, 0, 3, 6, 9, 12, 15, 18, 21, 24);
}

/* Figure 3: x.permute(1, 2, 0).add_(42) gives the permute and its inverse. */
static void test_golden_figure3(void **state)
{
    (void)state;
    double v[24];
    for (int i = 0; i < 24; i++)
        v[i] = i;
    lt_tensor *x = lazy_data(v, (int64_t[]){2, 3, 4}, 3);
    lt_tensor *p = LT_OK_T(lt_permute(x, (int[]){1, 2, 0}, 3));
    assert_ptr_equal(lt_add_scalar_(p, 42), p);
    assert_string_equal(ir_of(x), "IR {\n"
                                  "  %0 = f32[2,3,4] device_data()\n"
                                  "  %1 = f32[3,4,2] permute(%0), dims=(1, 2, 0)\n"
                                  "  %2 = f64[] scalar(), param=0, value=42\n"
                                  "  %3 = f32[3,4,2] add(%1, %2)\n"
                                  "  %4 = f32[2,3,4] permute(%3), dims=(2, 0, 1), ROOT=0\n"
                                  "}\n");
    double expect[24];
    for (int i = 0; i < 24; i++)
        expect[i] = i + 42;
    LT_ASSERT_ARRAY(x, expect, 24, 0);
    /* the view sees the update too: p[i][j][k] = x[k][i][j] */
    double pv[24];
    lt_tensor *pc = LT_OK_T(lt_to(p, lt_device_cpu()));
    assert_int_equal(lt_copy_to_host(lt_to_dtype(pc, LT_F64), pv, sizeof pv), LT_OK);
    assert_true(pv[0] == 42 && pv[1] == 54 && pv[2] == 43); /* x[0][0][0], x[1][0][0], x[0][0][1] */
}

/* One SGD-like step: w -= lr * (w * x). */
static void sgd_step(lt_tensor *w, lt_tensor *x, double lr)
{
    lt_scope_begin();
    lt_sub_(w, lt_mul_scalar(lt_mul(w, x), lr));
    lt_scope_end();
    assert_int_equal(lt_mark_step(), LT_OK);
}

static void test_training_loop_compiles_once(void **state)
{
    (void)state;
    lt_metrics_reset();
    int64_t dims[2] = {2, 4};
    lt_tensor *w = lazy_data(vals8, dims, 2), *x = lazy_data(vals8, dims, 2);
    double expect[8];
    memcpy(expect, vals8, sizeof expect);
    for (int step = 0; step < 20; step++) {
        double lr = 0.001 * (step + 2); /* a changing learning rate never recompiles */
        sgd_step(w, x, lr);
        for (int i = 0; i < 8; i++)
            expect[i] -= (double)(float)lr * expect[i] * vals8[i];
    }
    assert_int_equal(lt_metrics_counter("UncachedCompile"), 1);
    assert_int_equal(lt_metrics_counter("CachedCompile"), 19);
    assert_int_equal(lt_metrics_counter("MarkStep"), 20);
    LT_ASSERT_ARRAY(w, expect, 8, 1e-4);
}

static void test_shape_change_recompiles(void **state)
{
    (void)state;
    lt_metrics_reset();
    lt_tensor *a = lazy_data(vals8, (int64_t[]){2, 4}, 2);
    lt_tensor *b = lazy_data(vals8, (int64_t[]){8}, 1);
    sgd_step(a, a, 0.1);
    sgd_step(b, b, 0.1);
    sgd_step(a, a, 0.2);
    assert_int_equal(lt_metrics_counter("UncachedCompile"), 2);
    assert_int_equal(lt_metrics_counter("CachedCompile"), 1);
}

static void test_special_scalars_are_baked(void **state)
{
    (void)state;
    lt_metrics_reset();
    lt_tensor *a = lazy_data(vals8, (int64_t[]){8}, 1);
    double seen[3];
    double scalars[3] = {3.0, 1.0, 5.0}; /* 1 is baked, so it gets its own program */
    for (int i = 0; i < 3; i++) {
        lt_scope_begin();
        assert_int_equal(lt_item(lt_sum(lt_mul_scalar(a, scalars[i]), NULL, 0, false), &seen[i]), LT_OK);
        lt_scope_end();
    }
    assert_true(seen[0] == 108 && seen[1] == 36 && seen[2] == 180);
    assert_int_equal(lt_metrics_counter("UncachedCompile"), 2);
    assert_int_equal(lt_metrics_counter("CachedCompile"), 1);
}

static void test_operand_order_distinguishes_programs(void **state)
{
    (void)state;
    lt_metrics_reset();
    int64_t dims[1] = {8};
    lt_tensor *a = lazy_data(vals8, dims, 1), *b = lazy_data(vals8, dims, 1), *c = lazy_data(vals8, dims, 1);
    lt_fill_(c, 2);
    assert_int_equal(lt_mark_step(), LT_OK);
    lt_tensor *r1 = LT_OK_T(lt_add(lt_mul(a, b), c)); /* a*b + 2 */
    assert_int_equal(lt_mark_step(), LT_OK);
    lt_tensor *r2 = LT_OK_T(lt_add(lt_mul(a, c), b)); /* 2a + b */
    assert_int_equal(lt_mark_step(), LT_OK);
    assert_int_equal(lt_metrics_counter("UncachedCompile"), 3);
    LT_ASSERT_VALUES(r1, 0, 3, 6, 11, 18, 27, 38, 51, 66);
    LT_ASSERT_VALUES(r2, 0, 3, 6, 9, 12, 15, 18, 21, 24);
}

/* Data-dependent control flow reads a value mid-graph and matches eager. */
static double control_flow(lt_device dev)
{
    lt_scope_begin();
    lt_tensor *x = LT_OK_T(lt_to(LT_T(LT_F32, LT_DIMS(4), 1, -2, 3, -4), dev));
    double total = 0;
    for (int i = 0; i < 5; i++) {
        double s;
        assert_int_equal(lt_item(lt_sum(x, NULL, 0, false), &s), LT_OK);
        if (s > 0)
            x = lt_mul_scalar(x, -1.5);
        else
            x = lt_add_scalar(x, 2);
        total += s;
    }
    lt_scope_end();
    return total;
}

static void test_control_flow_matches_eager(void **state)
{
    (void)state;
    double eager = control_flow(lt_device_cpu()), lz = control_flow(lazy());
    assert_true(fabs(eager - lz) < 1e-6);
}

static void test_print_twice_applies_update_once(void **state)
{
    (void)state;
    lt_tensor *x = lazy_data(vals8, (int64_t[]){8}, 1);
    lt_add_scalar_(x, 1);
    double first, second;
    assert_int_equal(lt_item(lt_sum(x, NULL, 0, false), &first), LT_OK);
    char buf[256];
    assert_true(lt_format(x, buf, sizeof buf) > 0);
    assert_true(lt_format(x, buf, sizeof buf) > 0);
    assert_int_equal(lt_item(lt_sum(x, NULL, 0, false), &second), LT_OK);
    assert_true(first == 44 && second == 44);
}

static void test_released_tensors_are_not_computed(void **state)
{
    (void)state;
    lt_metrics_reset();
    lt_tensor *x = lazy_data(vals8, (int64_t[]){8}, 1);
    lt_scope_begin();
    lt_exp(lt_mul(x, x)); /* dropped with the scope */
    lt_scope_end();
    lt_tensor *kept = LT_OK_T(lt_neg(x));
    assert_int_equal(lt_mark_step(), LT_OK);
    assert_int_equal(lt_metrics_counter("ProgramOutputs"), 1);
    assert_int_equal(lt_metrics_counter("GraphNodes"), 2); /* data + neg */
    LT_ASSERT_VALUES(kept, 0, -1, -2, -3, -4, -5, -6, -7, -8);
}

static void test_donation_for_sgd_update(void **state)
{
    (void)state;
    lt_metrics_reset();
    lt_tensor *w = lazy_data(vals8, (int64_t[]){8}, 1), *g = lazy_data(vals8, (int64_t[]){8}, 1);
    lt_sub_(w, lt_mul_scalar(g, 0.5));
    assert_int_equal(lt_mark_step(), LT_OK);
    assert_int_equal(lt_metrics_counter("DonatedBuffers"), 1);
    LT_ASSERT_VALUES(w, 0, 0.5, 1, 1.5, 2, 2.5, 3, 3.5, 4);
}

/* Caveat 1: a sync that is not the step barrier never donates. */
static void test_no_donation_outside_step_barrier(void **state)
{
    (void)state;
    lt_metrics_reset();
    lt_tensor *w = lazy_data(vals8, (int64_t[]){8}, 1);
    lt_add_scalar_(w, 1);
    double s;
    assert_int_equal(lt_item(lt_sum(w, NULL, 0, false), &s), LT_OK);
    assert_int_equal(lt_item(lt_sum(w, NULL, 0, false), &s), LT_OK);
    assert_true(s == 44);
    assert_int_equal(lt_metrics_counter("DonatedBuffers"), 0);
}

/* Caveat 2: a buffer that a live tensor still holds is never donated. */
static void test_no_donation_when_buffer_observed(void **state)
{
    (void)state;
    lt_metrics_reset();
    lt_tensor *w = lazy_data(vals8, (int64_t[]){8}, 1);
    lt_tensor *old = LT_OK_T(lt_reshape(w, (int64_t[]){2, 4}, 2));
    float host[8]; /* reading the view itself materializes it on w's buffer */
    assert_int_equal(lt_copy_to_host(old, host, sizeof host), LT_OK);
    assert_true(host[7] == 8);
    lt_mul_scalar_(w, 3);
    assert_int_equal(lt_mark_step(), LT_OK);
    assert_int_equal(lt_metrics_counter("DonatedBuffers"), 0);
    LT_ASSERT_VALUES(w, 0, 3, 6, 9, 12, 15, 18, 21, 24);
    LT_ASSERT_VALUES(old, 0, 3, 6, 9, 12, 15, 18, 21, 24); /* a view follows its base */
    lt_tensor *snapshot = LT_OK_T(lt_clone(w));
    assert_int_equal(lt_mark_step(), LT_OK);
    lt_mul_scalar_(w, 2);
    assert_int_equal(lt_mark_step(), LT_OK);
    LT_ASSERT_VALUES(snapshot, 0, 3, 6, 9, 12, 15, 18, 21, 24);
    LT_ASSERT_VALUES(w, 0, 6, 12, 18, 24, 30, 36, 42, 48);
}

static void test_in_place_on_views(void **state)
{
    (void)state;
    double v[12];
    for (int i = 0; i < 12; i++)
        v[i] = i;
    lt_tensor *x = lazy_data(v, (int64_t[]){3, 4}, 2);
    lt_tensor *row = LT_OK_T(lt_select(x, 0, 1));           /* x[1] */
    lt_tensor *col = LT_OK_T(lt_slice(x, 1, 1, 4, 2));      /* x[:, 1::2] */
    lt_fill_(row, -1);
    lt_mul_scalar_(col, 10);
    LT_ASSERT_VALUES(x, 0, 0, 10, 2, 30, -1, -10, -1, -10, 8, 90, 10, 110);
    LT_ASSERT_VALUES(row, 0, -1, -10, -1, -10);
    lt_tensor *t = LT_OK_T(lt_transpose(x, 0, 1));
    lt_tensor *d = LT_OK_T(lt_narrow(t, 0, 0, 2)); /* view of a view */
    lt_add_scalar_(d, 0.5);
    LT_ASSERT_VALUES(x, 0, 0.5, 10.5, 2, 30, -0.5, -9.5, -1, -10, 8.5, 90.5, 10, 110);
}

/* sort and topk run inside the compiled program (as calls of their eager
 * kernels, with no sync); nonzero, whose result size depends on the data,
 * syncs and is counted as a fallback. */
static void test_sort_is_lowered_and_nonzero_falls_back(void **state)
{
    (void)state;
    lt_metrics_reset();
    lt_tensor *x = lazy_data((double[]){3, 1, 2, 5, 4, 0, 7, 6}, (int64_t[]){8}, 1);
    lt_tensor *idx = NULL, *top_idx = NULL;
    lt_tensor *s = LT_OK_T(lt_sort(lt_mul_scalar(x, 2), 0, false, &idx));
    lt_tensor *r = LT_OK_T(lt_add_scalar(s, 1));
    lt_tensor *top = LT_OK_T(lt_topk(lt_neg(x), 3, 0, true, &top_idx));
    LT_ASSERT_VALUES(r, 0, 1, 3, 5, 7, 9, 11, 13, 15);
    LT_ASSERT_VALUES(idx, 0, 5, 1, 2, 0, 4, 3, 7, 6);
    LT_ASSERT_VALUES(top, 0, 0, -1, -2);
    LT_ASSERT_VALUES(top_idx, 0, 5, 1, 2);
    assert_int_equal(lt_metrics_counter("Fallback"), 0);
    assert_int_equal(lt_tensor_device(r).kind, LT_DEVICE_LAZY);
    lt_tensor *nz = LT_OK_T(lt_nonzero(x));
    LT_ASSERT_SHAPE(nz, 7, 1);
    assert_int_equal(lt_metrics_counter("Fallback.nonzero"), 1);
    assert_int_equal(lt_metrics_counter("Fallback"), 1);
}

static void test_rng_matches_eager(void **state)
{
    (void)state;
    int64_t dims[1] = {16};
    lt_manual_seed(7);
    lt_tensor *e = LT_OK_T(lt_randn(dims, 1, LT_F32, lt_device_cpu()));
    lt_manual_seed(7);
    lt_tensor *l = LT_OK_T(lt_randn(dims, 1, LT_F32, lazy()));
    double ev[16];
    assert_int_equal(lt_copy_to_host(lt_to_dtype(e, LT_F64), ev, sizeof ev), LT_OK);
    LT_ASSERT_ARRAY(l, ev, 16, 0);
}

static void test_metrics_report_and_dumps(void **state)
{
    (void)state;
    lt_metrics_reset();
    lt_tensor *x = lazy_data(vals8, (int64_t[]){8}, 1);
    lt_tensor *y = LT_OK_T(lt_relu(lt_neg(x)));
    char dot[2048];
    int n = lt_ir_dot(&y, 1, dot, sizeof dot);
    assert_true(n > 0 && strstr(dot, "digraph IR") && strstr(dot, "relu") && strstr(dot, "ROOT=0"));
    assert_int_equal(lt_mark_step(), LT_OK);
    lt_timer_stats ts;
    assert_int_equal(lt_metrics_timer("ExecuteTime", &ts), LT_OK);
    assert_int_equal(ts.count, 1);
    assert_true(ts.total_ms >= 0 && ts.p50_ms <= ts.max_ms);
    char report[4096];
    n = lt_metrics_report(report, sizeof report);
    assert_true(n > 0 && strstr(report, "UncachedCompile") && strstr(report, "ExecuteTime"));
    assert_true(lt_metrics_counter("TransferToDevice") >= 1);
    assert_int_equal(lt_metrics_counter("NoSuchCounter"), 0);
    /* TracingTime samples one traced op in 16: 40 ops give 2 or 3 samples */
    lt_metrics_reset();
    lt_tensor *chain = x;
    for (int i = 0; i < 40; i++)
        chain = LT_OK_T(lt_neg(chain));
    assert_int_equal(lt_metrics_timer("TracingTime", &ts), LT_OK);
    assert_true(ts.count >= 2 && ts.count <= 3);
    assert_true(ts.p50_ms >= 0 && ts.p50_ms <= ts.max_ms);
    assert_int_equal(lt_metrics_counter("TensorsCreated"), 40);
    assert_int_equal(lt_mark_step(), LT_OK);
    assert_int_equal(lt_metrics_timer("ExecuteTime", &ts), LT_OK);
    assert_int_equal(ts.count, 1);
    /* tensors on the wrong device */
    lt_tensor *c = LT_OK_T(lt_zeros((int64_t[]){2}, 1, LT_F32, lt_device_cpu()));
    assert_int_equal(lt_ir_text(&c, 1, NULL, 0), -1);
    LT_EXPECT_ERROR(LT_ERR_DEVICE, "not a lazy tensor");
    assert_null(lt_add(c, x));
    LT_EXPECT_ERROR(LT_ERR_DEVICE, "mixed devices");
}

static void test_backend_and_cache_settings(void **state)
{
    (void)state;
    assert_int_equal(lt_lazy_set_backend("interp"), LT_OK);
    assert_string_equal(lt_lazy_backend(), "interp");
    assert_int_equal(lt_lazy_set_backend("tpu"), LT_ERR_ARGUMENT);
    LT_EXPECT_ERROR(LT_ERR_ARGUMENT, "unknown backend \"tpu\"");
    assert_int_equal(lt_lazy_set_cache_size(0), LT_ERR_ARGUMENT);
    LT_EXPECT_ERROR(LT_ERR_ARGUMENT, "expected >= 1");
    lt_metrics_reset();
    assert_int_equal(lt_lazy_set_cache_size(1), LT_OK);
    lt_tensor *a = lazy_data(vals8, (int64_t[]){8}, 1);
    lt_tensor *b = lazy_data(vals8, (int64_t[]){2, 4}, 2);
    for (int i = 0; i < 2; i++) { /* alternating graphs thrash a 1-entry cache */
        sgd_step(a, a, 0.1);
        sgd_step(b, b, 0.1);
    }
    assert_int_equal(lt_metrics_counter("UncachedCompile"), 4);
    /* shrinking the cache while a step runs waits for it: its program is
     * not evicted from under it */
    lt_tensor *c = lazy_data(vals8, (int64_t[]){8}, 1);
    assert_non_null(lt_mul_scalar_(c, 2));
    assert_int_equal(lt_barrier(false), LT_OK);
    assert_int_equal(lt_lazy_set_cache_size(1), LT_OK);
    double want[8];
    for (int i = 0; i < 8; i++)
        want[i] = 2 * vals8[i];
    LT_ASSERT_ARRAY(c, want, 8, 0);
    assert_int_equal(lt_lazy_set_cache_size(1024), LT_OK);
}

/* SGD update of a 64 MB parameter: donation keeps peak buffer bytes near
 * one parameter above the baseline; without it the old and new values
 * coexist. */
static int64_t sgd_peak_extra(bool step_barrier)
{
    int64_t n = 16 << 20; /* 16M f32 = 64 MB */
    lt_scope_begin();
    lt_tensor *w = LT_OK_T(lt_full(&n, 1, 1.0, LT_F32, lazy()));
    assert_int_equal(lt_mark_step(), LT_OK);
    lt_mem_stats before, after;
    lt_mem_stats_get(&before);
    lt_mem_reset_peak();
    lt_sub_scalar_(w, 0.5);
    if (step_barrier) {
        assert_int_equal(lt_mark_step(), LT_OK);
    } else {
        double v;
        assert_int_equal(lt_item(lt_select(w, 0, 0), &v), LT_OK);
    }
    lt_mem_stats_get(&after);
    lt_scope_end();
    return after.peak_bytes - before.bytes_in_use;
}

static void test_donation_halves_update_memory(void **state)
{
    (void)state;
    int64_t param = (int64_t)64 << 20;
    int64_t with = sgd_peak_extra(true), without = sgd_peak_extra(false);
    print_message("peak extra bytes: %lld with donation, %lld without (parameter %lld)\n", (long long)with,
                  (long long)without, (long long)param);
    assert_true(with < param / 8);       /* ~0 extra: the output reuses the input */
    assert_true(without >= param);       /* a second buffer of the parameter's size */
}

/* lt_barrier(false) returns with the program in flight; the next access
 * waits for it and sees the results. */
static void test_async_barrier(void **state)
{
    (void)state;
    lt_metrics_reset();
    int64_t n = 1 << 22;
    lt_tensor *w = LT_OK_T(lt_full(&n, 1, 2.0, LT_F32, lazy()));
    lt_tensor *x = LT_OK_T(lt_full(&n, 1, 3.0, LT_F32, lazy()));
    assert_int_equal(lt_mark_step(), LT_OK);
    for (int step = 0; step < 3; step++) {
        lt_scope_begin();
        lt_sub_(w, lt_mul_scalar(lt_exp(lt_mul(w, x)), 0.0));
        lt_add_scalar_(w, 1);
        lt_scope_end();
        assert_int_equal(lt_barrier(false), LT_OK);
        assert_int_equal(lt_metrics_counter("AsyncExecutions"), step + 1);
        /* host work here overlaps the execution */
    }
    double v;
    assert_int_equal(lt_item(lt_select(w, 0, n - 1), &v), LT_OK);
    assert_true(v == 5.0);
    assert_true(lt_metrics_counter("BarrierWaits") >= 3);
    assert_int_equal(lt_metrics_counter("UncachedCompile"), 3); /* 2 factories, the step, the read */
}

/* Values read mid-graph (syncs between forward and backward) leave the
 * tape usable: wrapped scalars saved on it are re-recorded. */
static void test_backward_after_reading_intermediates(void **state)
{
    (void)state;
    lt_tensor *x = lazy_data(vals8, (int64_t[]){8}, 1);
    assert_int_equal(lt_set_requires_grad(x, true), LT_OK);
    lt_tensor *y = LT_OK_T(lt_mul_scalar(lt_add_scalar(x, 0.5), 3));
    float host[8];
    assert_int_equal(lt_copy_to_host(y, host, sizeof host), LT_OK);
    assert_true(host[0] == 4.5f);
    lt_tensor *loss = LT_OK_T(lt_sum(lt_mul(y, lt_view(y, (int64_t[]){8}, 1)), NULL, 0, false));
    assert_int_equal(lt_mark_step(), LT_OK);
    assert_int_equal(lt_backward(loss, NULL), LT_OK);
    double expect[8];
    for (int i = 0; i < 8; i++)
        expect[i] = 2 * 3 * (vals8[i] + 0.5) * 3; /* d/dx (3(x+0.5))^2 */
    LT_ASSERT_ARRAY(lt_grad(x), expect, 8, 1e-5);
}

/* A pending tensor whose computation fails does not block reads of other
 * tensors; the step barrier reports it while it is alive. */
static void test_failing_tensor_does_not_block_reads(void **state)
{
    (void)state;
    lt_tensor *x = lazy_data(vals8, (int64_t[]){8}, 1);
    lt_tensor *idx = LT_OK_T(lt_to(LT_T(LT_I64, LT_DIMS(2), 1, 99), lazy()));
    lt_tensor *bad = LT_OK_T(lt_index_select(x, 0, idx)); /* fails when run */
    double v;
    assert_int_equal(lt_item(lt_sum(lt_mul_scalar(x, 2), NULL, 0, false), &v), LT_OK);
    assert_true(v == 72);
    assert_int_equal(lt_mark_step(), LT_ERR_INDEX);
    LT_EXPECT_ERROR(LT_ERR_INDEX, "index_select");
    assert_int_equal(lt_copy_to_host(bad, NULL, 0), LT_ERR_NULL); /* reading it: no buffer given */
    lt_clear_error();
    float host[2];
    assert_int_equal(lt_copy_to_host(bad, host, sizeof host), LT_ERR_INDEX);
    lt_clear_error();
}

/* Sizes are checked when an op is traced, not only when it runs. */
static void test_absurd_sizes_refused_at_trace_time(void **state)
{
    (void)state;
    lt_tensor *i = LT_OK_T(lt_to(LT_T(LT_I64, LT_DIMS(2), 0, 1), lazy()));
    assert_null(lt_one_hot(i, INT64_MAX));
    LT_EXPECT_ERROR(LT_ERR_MEMORY, "larger than this machine's memory");
    assert_null(lt_expand(lt_view(i, (int64_t[]){2, 1}, 2), (int64_t[]){2, INT64_MAX / 4}, 2));
    lt_clear_error();
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        LT_TEST(test_golden_figure1),
        LT_TEST(test_golden_figure2),
        LT_TEST(test_golden_figure3),
        LT_TEST(test_training_loop_compiles_once),
        LT_TEST(test_shape_change_recompiles),
        LT_TEST(test_special_scalars_are_baked),
        LT_TEST(test_operand_order_distinguishes_programs),
        LT_TEST(test_control_flow_matches_eager),
        LT_TEST(test_print_twice_applies_update_once),
        LT_TEST(test_released_tensors_are_not_computed),
        LT_TEST(test_donation_for_sgd_update),
        LT_TEST(test_no_donation_outside_step_barrier),
        LT_TEST(test_no_donation_when_buffer_observed),
        LT_TEST(test_in_place_on_views),
        LT_TEST(test_sort_is_lowered_and_nonzero_falls_back),
        LT_TEST(test_rng_matches_eager),
        LT_TEST(test_metrics_report_and_dumps),
        LT_TEST(test_backend_and_cache_settings),
        LT_TEST(test_donation_halves_update_memory),
        LT_TEST(test_async_barrier),
        LT_TEST(test_backward_after_reading_intermediates),
        LT_TEST(test_failing_tensor_does_not_block_reads),
        LT_TEST(test_absurd_sizes_refused_at_trace_time),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
