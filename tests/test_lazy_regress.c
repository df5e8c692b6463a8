/* test_lazy_regress.c - views on the lazy device behave like views on cpu:
 *
 *  - a released handle is dead for its user (LT_ERR_RELEASED on any use, a
 *    second release reported) even while views of it keep working;
 *  - a write through a view, or into its base, is seen by every later read
 *    of every view, whatever synced in between (reads of other tensors,
 *    step barriers, asynchronous barriers);
 *  - in-place writes into views of expanded tensors follow the cpu rule:
 *    allowed when no two elements of the destination share one element of
 *    the base, with the same values;
 *  - a failing in-place op on a view leaves every tensor untouched.
 *
 * Every case runs on the cpu device and on the lazy device with both
 * backends (interp and cpu); cpu results are checked against known values
 * where they are short, and serve as the oracle for the longer sequences. */
#include "lt_test.h"

#include <unistd.h>

typedef enum config { CFG_CPU, CFG_LAZY_INTERP, CFG_LAZY_CPU, CFG_COUNT } config;
static const char *const config_names[] = {"cpu", "lazy/interp", "lazy/cpu"};

/* Selects the device (and lazy backend) of a configuration; false when the
 * cpu backend cannot run here (no C compiler). */
static bool use_config(config c, lt_device *dev)
{
    if (c == CFG_CPU) {
        *dev = lt_device_cpu();
        return true;
    }
    *dev = lt_device_parse("lazy");
    if (lt_lazy_set_backend(c == CFG_LAZY_INTERP ? "interp" : "cpu") != LT_OK) {
        print_message("%s unavailable (%s): skipped\n", config_names[c], lt_last_error());
        lt_clear_error();
        return false;
    }
    return true;
}

/* 0, 1, ..., n-1 as f32 with the given shape on dev (a tensor of its own,
 * not a view). */
static lt_tensor *iota(lt_device dev, const int64_t *dims, int ndim)
{
    float v[64];
    int64_t n = 1;
    for (int i = 0; i < ndim; i++)
        n *= dims[i];
    assert_true(n <= 64);
    for (int64_t i = 0; i < n; i++)
        v[i] = (float)i;
    return lt_from_data(v, dims, ndim, LT_F32, dev);
}

/* Reads t itself (not a copy of it) as f32 values. */
static void read_f32(lt_tensor *t, float *out, int64_t n)
{
    assert_int_equal(lt_tensor_numel(t), n);
    assert_int_equal(lt_copy_to_host(t, out, sizeof(float) * (size_t)n), LT_OK);
}

#define ASSERT_F32(t, ...)                                                                       \
    do {                                                                                         \
        const float want_[] = {__VA_ARGS__};                                                     \
        int64_t n_ = (int64_t)(sizeof want_ / sizeof want_[0]);                                  \
        float got_[sizeof want_ / sizeof want_[0]];                                              \
        read_f32((t), got_, n_);                                                                 \
        for (int64_t i_ = 0; i_ < n_; i_++)                                                      \
            if (got_[i_] != want_[i_])                                                           \
                fail_msg("%s: element %lld is %g, expected %g", #t, (long long)i_, (double)got_[i_], \
                         (double)want_[i_]);                                                     \
    } while (0)

/* Forces a sync that is about another, new tensor. */
static void sync_other(lt_device dev)
{
    double x = 0;
    assert_int_equal(lt_item(lt_full(LT_DIMS(1), 3.0, LT_F32, dev), &x), LT_OK);
    assert_true(x == 3.0);
}

/* ---- 3: released handles stay dead while their views live ------------- */

static void test_release_base_of_view(void **state)
{
    (void)state;
    lt_scope_end(); /* the caller owns every reference below */
    for (config c = 0; c < CFG_COUNT; c++) {
        lt_device dev;
        if (!use_config(c, &dev))
            continue;
        int64_t live = lt_live_tensor_count();
        lt_tensor *a = LT_OK_T(lt_full(LT_DIMS(4), 2.0, LT_F32, dev));
        lt_tensor *v = LT_OK_T(lt_narrow(a, 0, 0, 2));
        assert_int_equal(lt_tensor_refcount(a), 1); /* the view holds no user reference */
        lt_release(a);
        assert_int_equal(lt_last_status(), LT_OK);
        lt_release(a); /* one release too many: reported, nothing touched */
        LT_EXPECT_ERROR(LT_ERR_RELEASED, "release: argument 0 was used after its last reference was released");
        assert_null(lt_add_scalar(a, 1));
        LT_EXPECT_ERROR(LT_ERR_RELEASED, "add: argument 0 was used after its last reference was released");
        assert_null(lt_add_scalar_(a, 1));
        LT_EXPECT_ERROR(LT_ERR_RELEASED, "was used after its last reference was released");
        assert_int_equal(lt_tensor_refcount(a), -1);
        LT_EXPECT_ERROR(LT_ERR_RELEASED, "tensor_refcount");
        assert_null(lt_narrow(a, 0, 1, 1));
        LT_EXPECT_ERROR(LT_ERR_RELEASED, "was used after its last reference was released");
        /* the view still reads and writes the base's elements */
        assert_ptr_equal(lt_add_scalar_(v, 1), v);
        ASSERT_F32(v, 3, 3);
        lt_tensor *w = LT_OK_T(lt_select(v, 0, 1));
        lt_release(v);
        lt_release(v);
        LT_EXPECT_ERROR(LT_ERR_RELEASED, "release");
        assert_ptr_equal(lt_mul_scalar_(w, 5), w);
        assert_int_equal(lt_mark_step(), LT_OK);
        ASSERT_F32(w, 15);
        lt_release(w);
        assert_int_equal(lt_last_status(), LT_OK);
        lt_release(w);
        LT_EXPECT_ERROR(LT_ERR_RELEASED, "release");
        assert_int_equal(lt_live_tensor_count(), live);
        lt_clear_error();
    }
    lt_scope_begin();
}

/* A base released while a write through its view is pending, with an
 * asynchronous barrier in between: the view's values come from the base's
 * last value, and everything is freed once the view goes. */
static void test_release_base_pending_async(void **state)
{
    (void)state;
    lt_scope_end();
    for (config c = 0; c < CFG_COUNT; c++) {
        lt_device dev;
        if (!use_config(c, &dev))
            continue;
        int64_t live = lt_live_tensor_count();
        lt_tensor *a = LT_OK_T(iota(dev, LT_DIMS(2, 3)));
        lt_tensor *t = LT_OK_T(lt_transpose(a, 0, 1)); /* [3, 2] */
        lt_tensor *v = LT_OK_T(lt_select(t, 1, 1));    /* a[1, :] */
        lt_release(t);
        assert_ptr_equal(lt_add_scalar_(v, 10), v);
        lt_release(a);
        assert_int_equal(lt_barrier(false), LT_OK);
        assert_ptr_equal(lt_mul_scalar_(v, 2), v);
        assert_null(lt_to(a, lt_device_cpu()));
        LT_EXPECT_ERROR(LT_ERR_RELEASED, "to: argument 0");
        ASSERT_F32(v, 26, 28, 30);
        lt_release(v);
        assert_int_equal(lt_live_tensor_count(), live);
    }
    lt_scope_begin();
}

/* A scope owning a base that a view outlives: the scope's end releases the
 * base for the user; the view kept with lt_keep still works. */
static void test_view_outlives_scope_of_base(void **state)
{
    (void)state;
    for (config c = 0; c < CFG_COUNT; c++) {
        lt_device dev;
        if (!use_config(c, &dev))
            continue;
        lt_scope_begin();
        lt_tensor *a = LT_OK_T(iota(dev, LT_DIMS(4)));
        lt_tensor *v = LT_OK_T(lt_keep(lt_narrow(a, 0, 1, 2)));
        assert_int_equal(lt_scope_end(), LT_OK);
        assert_null(lt_neg(a));
        LT_EXPECT_ERROR(LT_ERR_RELEASED, "neg: argument 0");
        assert_ptr_equal(lt_fill_(v, 8), v);
        ASSERT_F32(v, 8, 8);
    }
}

/* ---- 5: writes through views are seen by every later read ------------- */

/* The case of the report: a view read, then written, then a sync about
 * another tensor. */
static void test_view_write_seen_after_other_sync(void **state)
{
    (void)state;
    for (config c = 0; c < CFG_COUNT; c++) {
        lt_device dev;
        if (!use_config(c, &dev))
            continue;
        lt_tensor *a = LT_OK_T(lt_full(LT_DIMS(2, 4), 2.0, LT_F32, dev));
        lt_tensor *v = LT_OK_T(lt_select(a, 0, 1));
        ASSERT_F32(v, 2, 2, 2, 2);
        assert_ptr_equal(lt_fill_(v, 0), v);
        sync_other(dev);
        ASSERT_F32(v, 0, 0, 0, 0);
        ASSERT_F32(a, 2, 2, 2, 2, 0, 0, 0, 0);
        /* the same with a step barrier and with an asynchronous one */
        assert_ptr_equal(lt_fill_(v, 5), v);
        assert_int_equal(lt_mark_step(), LT_OK);
        ASSERT_F32(v, 5, 5, 5, 5);
        assert_ptr_equal(lt_add_scalar_(v, 1), v);
        assert_int_equal(lt_barrier(false), LT_OK);
        ASSERT_F32(v, 6, 6, 6, 6);
        ASSERT_F32(a, 2, 2, 2, 2, 6, 6, 6, 6);
    }
}

/* A view read early keeps no stale copy: after a write through a view of
 * it (a view of a view), once it has been derived again from the base and a
 * step barrier has materialized the base, it reads the written values. */
static void test_view_read_before_write_through_its_view(void **state)
{
    (void)state;
    for (config c = 0; c < CFG_COUNT; c++) {
        lt_device dev;
        if (!use_config(c, &dev))
            continue;
        lt_tensor *a = LT_OK_T(lt_full(LT_DIMS(2, 4), 2.0, LT_F32, dev));
        lt_tensor *v = LT_OK_T(lt_permute(a, (const int[]){0, 1}, 2));
        ASSERT_F32(v, 2, 2, 2, 2, 2, 2, 2, 2);
        lt_tensor *r = LT_OK_T(lt_select(v, 0, 0));
        assert_ptr_equal(lt_add_scalar_(r, 2), r);
        assert_ptr_equal(lt_fill_(r, 0), r);
        LT_OK_T(lt_le(r, v)); /* derives v from the base again */
        assert_int_equal(lt_mark_step(), LT_OK);
        ASSERT_F32(v, 0, 0, 0, 0, 2, 2, 2, 2);
        ASSERT_F32(a, 0, 0, 0, 0, 2, 2, 2, 2);
    }
}

/* View makers over a [3, 4] base. `writable`: in-place writes into the
 * view are allowed (no two of its elements share one base element). */
typedef lt_tensor *(*view_fn)(lt_tensor *a);
static lt_tensor *mk_narrow(lt_tensor *a) { return lt_narrow(a, 1, 1, 2); }
static lt_tensor *mk_slice_step(lt_tensor *a) { return lt_slice(a, 1, 0, 4, 2); }
static lt_tensor *mk_select(lt_tensor *a) { return lt_select(a, 0, 1); }
static lt_tensor *mk_permute(lt_tensor *a) { return lt_permute(a, (const int[]){1, 0}, 2); }
static lt_tensor *mk_transpose(lt_tensor *a) { return lt_transpose(a, 0, 1); }
static lt_tensor *mk_view(lt_tensor *a) { return lt_view(a, LT_DIMS(2, 6)); }
static lt_tensor *mk_diagonal(lt_tensor *a) { return lt_diagonal(a, 1, 0, 1); }
static lt_tensor *mk_squeeze(lt_tensor *a) { return lt_squeeze(lt_narrow(a, 0, 2, 1), 0); }
static lt_tensor *mk_unsqueeze(lt_tensor *a) { return lt_unsqueeze(a, 1); }
static lt_tensor *mk_flatten(lt_tensor *a) { return lt_flatten(a, 0, 1); }
static lt_tensor *mk_view_of_view(lt_tensor *a) { return lt_narrow(lt_transpose(a, 0, 1), 0, 1, 2); }
static lt_tensor *mk_expand_row(lt_tensor *a)
{ /* a row of an expanded row: writes reach a[2, :] */
    return lt_select(lt_expand(lt_narrow(a, 0, 2, 1), LT_DIMS(5, 4)), 0, 3);
}
static lt_tensor *mk_expand_diagonal(lt_tensor *a)
{ /* the diagonal of an expanded row: writes reach a[0, 0..2] */
    return lt_diagonal(lt_expand(lt_narrow(lt_narrow(a, 0, 0, 1), 1, 0, 3), LT_DIMS(3, 3)), 0, 0, 1);
}
static lt_tensor *mk_expand(lt_tensor *a) { return lt_expand(lt_unsqueeze(a, 0), LT_DIMS(2, 3, 4)); }

typedef struct view_case {
    const char *name;
    view_fn make;
    bool writable;
} view_case;

static const view_case view_cases[] = {
    {"narrow", mk_narrow, true},         {"slice_step", mk_slice_step, true},
    {"select", mk_select, true},         {"permute", mk_permute, true},
    {"transpose", mk_transpose, true},   {"view", mk_view, true},
    {"diagonal", mk_diagonal, true},     {"squeeze", mk_squeeze, true},
    {"unsqueeze", mk_unsqueeze, true},   {"flatten", mk_flatten, true},
    {"view_of_view", mk_view_of_view, true}, {"expand_row", mk_expand_row, true},
    {"expand_diagonal", mk_expand_diagonal, true}, {"expand", mk_expand, false},
};

/* A log of every value read during a sequence. */
typedef struct reads {
    float v[4096];
    int64_t n;
} reads;

static void log_read(reads *r, lt_tensor *t)
{
    int64_t n = lt_tensor_numel(t);
    assert_true(r->n + n <= (int64_t)(sizeof r->v / sizeof r->v[0]));
    read_f32(t, r->v + r->n, n);
    r->n += n;
}

/* The write of step k of a sequence: into the view when it may be written,
 * else into the base. */
static lt_tensor *write_target(const view_case *vc, lt_tensor *v, lt_tensor *a)
{
    return vc->writable ? v : a;
}

/* Reads and writes interleaved with syncs of every kind; every read goes
 * to the log. */
static void run_sequence(const view_case *vc, lt_device dev, reads *r)
{
    lt_scope_begin();
    lt_tensor *a = LT_OK_T(iota(dev, LT_DIMS(3, 4)));
    lt_tensor *v = LT_OK_T(vc->make(a));
    lt_tensor *w = LT_OK_T(lt_narrow(v, 0, 0, 1)); /* a view of the view */
    lt_tensor *u = LT_OK_T(lt_select(a, 1, 3));    /* another view of the base */
    /* write after a read, then a sync about another tensor */
    log_read(r, v);
    assert_non_null(lt_fill_(write_target(vc, v, a), 7));
    sync_other(dev);
    log_read(r, v);
    log_read(r, a);
    /* a write into the base after reading the view and the view of it */
    log_read(r, w);
    assert_non_null(lt_add_scalar_(a, 10));
    sync_other(dev);
    log_read(r, v);
    log_read(r, w);
    /* a write through the view of the view, then a step barrier */
    assert_non_null(lt_mul_scalar_(vc->writable ? w : a, 3));
    assert_int_equal(lt_mark_step(), LT_OK);
    log_read(r, v);
    log_read(r, a);
    /* a write through another view of the base */
    log_read(r, u);
    assert_non_null(lt_fill_(u, -1));
    sync_other(dev);
    log_read(r, v);
    log_read(r, w);
    /* writes on both sides of an asynchronous barrier */
    assert_non_null(lt_add_scalar_(write_target(vc, v, a), 1));
    assert_int_equal(lt_barrier(false), LT_OK);
    assert_non_null(lt_sub_scalar_(write_target(vc, w, a), 4));
    log_read(r, w);
    log_read(r, v);
    log_read(r, u);
    /* two writes with a read of the view between them */
    assert_non_null(lt_copy_(write_target(vc, v, a), lt_full(LT_DIMS(1), 2.5, LT_F64, dev)));
    log_read(r, v);
    assert_non_null(lt_add_(write_target(vc, v, a), write_target(vc, v, a)));
    log_read(r, a);
    log_read(r, v);
    assert_int_equal(lt_scope_end(), LT_OK);
}

static void test_view_writes_every_view_kind(void **state)
{
    (void)state;
    int failures = 0;
    for (size_t k = 0; k < sizeof view_cases / sizeof view_cases[0]; k++) {
        reads *oracle = calloc(1, sizeof *oracle), *got = calloc(1, sizeof *got);
        lt_device dev;
        use_config(CFG_CPU, &dev);
        run_sequence(&view_cases[k], dev, oracle);
        for (config c = CFG_LAZY_INTERP; c < CFG_COUNT; c++) {
            if (!use_config(c, &dev))
                continue;
            got->n = 0;
            run_sequence(&view_cases[k], dev, got);
            bool same = got->n == oracle->n;
            for (int64_t i = 0; same && i < got->n; i++) {
                if (got->v[i] != oracle->v[i]) {
                    print_error("%s on %s: value %lld read %g, cpu read %g\n", view_cases[k].name,
                                config_names[c], (long long)i, (double)got->v[i], (double)oracle->v[i]);
                    same = false;
                }
            }
            failures += !same;
        }
        free(oracle);
        free(got);
    }
    assert_int_equal(failures, 0);
}

/* ---- 20: in-place writes into views of expanded tensors --------------- */

static void test_inplace_into_expanded_views(void **state)
{
    (void)state;
    for (config c = 0; c < CFG_COUNT; c++) {
        lt_device dev;
        if (!use_config(c, &dev))
            continue;
        /* a row of an expanded row */
        lt_tensor *a = LT_OK_T(iota(dev, LT_DIMS(1, 4)));
        lt_tensor *e = LT_OK_T(lt_expand(a, LT_DIMS(3, 4)));
        lt_tensor *r = LT_OK_T(lt_select(e, 0, 1));
        assert_ptr_equal(lt_add_scalar_(r, 10), r);
        ASSERT_F32(a, 10, 11, 12, 13);
        ASSERT_F32(e, 10, 11, 12, 13, 10, 11, 12, 13, 10, 11, 12, 13);
        ASSERT_F32(r, 10, 11, 12, 13);
        /* a narrow keeping one expanded index (size 1, stride 0) */
        lt_tensor *n = LT_OK_T(lt_narrow(e, 0, 2, 1));
        assert_ptr_equal(lt_mul_scalar_(n, 2), n);
        ASSERT_F32(a, 20, 22, 24, 26);
        /* the diagonal of an expanded row touches each base element once */
        lt_tensor *b = LT_OK_T(iota(dev, LT_DIMS(1, 3)));
        lt_tensor *d = LT_OK_T(lt_diagonal(lt_expand(b, LT_DIMS(3, 3)), 0, 0, 1));
        assert_ptr_equal(lt_copy_(d, lt_from_data((const float[]){5, 6, 7}, LT_DIMS(3), LT_F32, dev)), d);
        ASSERT_F32(b, 5, 6, 7);
        /* an inserted, expanded middle dim, then a select of it */
        lt_tensor *m = LT_OK_T(iota(dev, LT_DIMS(2, 3)));
        lt_tensor *s = LT_OK_T(lt_select(lt_expand(lt_unsqueeze(m, 1), LT_DIMS(2, 5, 3)), 1, 4));
        assert_ptr_equal(lt_sub_scalar_(s, 1), s);
        ASSERT_F32(m, -1, 0, 1, 2, 3, 4);
        /* new leading dims, a transpose, and a cast from i64 */
        lt_tensor *t = LT_OK_T(lt_transpose(lt_select(lt_expand(m, LT_DIMS(4, 2, 3)), 0, 3), 0, 1));
        lt_tensor *src = LT_OK_T(lt_view(lt_arange(100, 106, 1, LT_I64, dev), LT_DIMS(3, 2)));
        assert_ptr_equal(lt_copy_(t, src), t);
        ASSERT_F32(m, 100, 102, 104, 101, 103, 105);
        /* an expanded view of a row of a larger base writes that row only */
        lt_tensor *g = LT_OK_T(iota(dev, LT_DIMS(3, 4)));
        lt_tensor *gr = LT_OK_T(lt_select(lt_expand(lt_narrow(g, 0, 1, 1), LT_DIMS(3, 4)), 0, 2));
        assert_ptr_equal(lt_fill_(gr, -1), gr);
        ASSERT_F32(g, 0, 1, 2, 3, -1, -1, -1, -1, 8, 9, 10, 11);
        /* with reads and a step barrier around the write */
        ASSERT_F32(gr, -1, -1, -1, -1);
        assert_ptr_equal(lt_add_(gr, lt_select(g, 0, 2)), gr);
        assert_int_equal(lt_mark_step(), LT_OK);
        ASSERT_F32(gr, 7, 8, 9, 10);
        ASSERT_F32(g, 0, 1, 2, 3, 7, 8, 9, 10, 8, 9, 10, 11);
        /* no elements at all */
        lt_tensor *z = LT_OK_T(lt_zeros(LT_DIMS(1, 0), LT_F32, dev));
        lt_tensor *zr = LT_OK_T(lt_select(lt_expand(z, LT_DIMS(3, 0)), 0, 1));
        assert_ptr_equal(lt_fill_(zr, 1), zr);
        assert_int_equal(lt_tensor_numel(lt_to(z, lt_device_cpu())), 0);
        /* overlapping destinations stay refused, and nothing changes */
        assert_null(lt_add_scalar_(lt_narrow(e, 0, 0, 2), 1));
        LT_EXPECT_ERROR(LT_ERR_UNSUPPORTED, "add_: in-place update of an expanded view is not supported");
        assert_null(lt_fill_(lt_diagonal(lt_expand(lt_view(b, LT_DIMS(1, 1, 3)), LT_DIMS(2, 3, 3)), 0, 1, 2), 0));
        LT_EXPECT_ERROR(LT_ERR_UNSUPPORTED, "fill_: in-place update of an expanded view is not supported");
        ASSERT_F32(a, 20, 22, 24, 26);
        ASSERT_F32(b, 5, 6, 7);
    }
}

/* Every dtype through a row of an expanded row, against the cpu device. */
static void test_inplace_into_expanded_views_dtypes(void **state)
{
    (void)state;
    for (int k = 0; k < LT_TEST_N_DTYPES; k++) {
        lt_dtype dt = lt_test_all_dtypes[k];
        double want[3] = {0};
        for (config c = 0; c < CFG_COUNT; c++) {
            lt_device dev;
            if (!use_config(c, &dev))
                continue;
            lt_tensor *a = LT_OK_T(lt_to(LT_T(dt, LT_DIMS(1, 3), 1, 0, 1), dev));
            lt_tensor *r = LT_OK_T(lt_select(lt_expand(a, LT_DIMS(2, 3)), 0, 1));
            lt_tensor *src = LT_OK_T(lt_to(LT_T(dt, LT_DIMS(3), 0, 1, 1), dev));
            assert_ptr_equal(lt_copy_(r, src), r);
            double *got = lt_test_values(a);
            if (c == CFG_CPU)
                memcpy(want, got, sizeof want);
            for (int i = 0; i < 3; i++)
                if (got[i] != want[i] || got[i] != (i == 0 ? 0.0 : 1.0))
                    fail_msg("%s on %s: element %d is %g", lt_dtype_name(dt), config_names[c], i, got[i]);
            free(got);
        }
    }
}

/* ---- on error, tensors are untouched ----------------------------------- */

static void test_failed_inplace_on_view_untouched(void **state)
{
    (void)state;
    for (config c = 0; c < CFG_COUNT; c++) {
        lt_device dev;
        if (!use_config(c, &dev))
            continue;
        lt_tensor *a = LT_OK_T(iota(dev, LT_DIMS(2, 3)));
        lt_tensor *v = LT_OK_T(lt_select(a, 0, 1));
        assert_ptr_equal(lt_add_scalar_(v, 1), v); /* a pending write before the failures */
        lt_tensor *ai = LT_OK_T(lt_to_dtype(a, LT_I32));
        lt_tensor *vi = LT_OK_T(lt_narrow(ai, 1, 0, 2));
        lt_scope_begin();
        lt_tensor *dead = LT_OK_T(lt_ones(LT_DIMS(3), LT_F32, dev));
        assert_int_equal(lt_scope_end(), LT_OK);
        assert_null(lt_add_(v, lt_ones(LT_DIMS(4), LT_F32, dev)));
        LT_EXPECT_ERROR(LT_ERR_SHAPE, "add");
        assert_null(lt_add_(v, lt_ones(LT_DIMS(2, 3), LT_F32, dev)));
        LT_EXPECT_ERROR(LT_ERR_SHAPE, "add_: result shape [2, 3] does not match the destination shape [3]");
        assert_null(lt_mul_scalar_(vi, 0.5));
        LT_EXPECT_ERROR(LT_ERR_DTYPE, "mul_: result dtype f32 cannot be written into a i32 destination");
        assert_null(lt_add_(v, dead));
        LT_EXPECT_ERROR(LT_ERR_RELEASED, "add_: argument 1");
        lt_device other = c == CFG_CPU ? lt_device_parse("lazy") : lt_device_cpu();
        assert_null(lt_copy_(v, lt_ones(LT_DIMS(3), LT_F32, other)));
        LT_EXPECT_ERROR(LT_ERR_DEVICE, "copy_");
        assert_null(lt_fill_(lt_expand(lt_unsqueeze(v, 0), LT_DIMS(2, 3)), 9));
        LT_EXPECT_ERROR(LT_ERR_UNSUPPORTED, "fill_");
        ASSERT_F32(v, 4, 5, 6);
        ASSERT_F32(a, 0, 1, 2, 4, 5, 6);
        assert_int_equal(lt_mark_step(), LT_OK);
        ASSERT_F32(a, 0, 1, 2, 4, 5, 6);
        ASSERT_F32(lt_to_dtype(vi, LT_F32), 0, 1, 4, 5);
    }
}

int main(void)
{
    /* compiled programs go to a private cache, never to ~/.cache */
    char dir[] = "/tmp/lt_regress_cache_XXXXXX";
    if (!mkdtemp(dir))
        return 1;
    setenv("LT_CACHE_DIR", dir, 1);
    const struct CMUnitTest tests[] = {
        LT_TEST(test_release_base_of_view),
        LT_TEST(test_release_base_pending_async),
        LT_TEST(test_view_outlives_scope_of_base),
        LT_TEST(test_view_write_seen_after_other_sync),
        LT_TEST(test_view_read_before_write_through_its_view),
        LT_TEST(test_view_writes_every_view_kind),
        LT_TEST(test_inplace_into_expanded_views),
        LT_TEST(test_inplace_into_expanded_views_dtypes),
        LT_TEST(test_failed_inplace_on_view_untouched),
    };
    int failed = cmocka_run_group_tests(tests, NULL, NULL);
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    if (system(cmd) != 0)
        fprintf(stderr, "could not remove %s\n", dir);
    return failed;
}
