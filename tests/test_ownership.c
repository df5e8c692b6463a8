/*
 * test_ownership.c - long-lived tensors whatever the scope (lt_persist),
 * finding leaks (lt_live_tensors, lt_live_tensor_report, the LT_DEBUG
 * report at exit), the no-grad scope and lt_sub_scaled_.
 */
#include "lt_test.h"

#include <sys/wait.h>
#include <unistd.h>

static lt_device cpu(void) { return lt_device_cpu(); }
static lt_device lazy(void) { return lt_device_parse("lazy"); }

/* ---- lt_persist ------------------------------------------------------------------ */

static void test_persist_in_and_out_of_scopes(void **state)
{
    (void)state;
    int64_t live = lt_live_tensor_count();
    /* inside a scope: the scope's reference becomes the caller's */
    lt_tensor *w = lt_persist(lt_randn(LT_DIMS(2, 3), LT_F32, cpu()));
    assert_non_null(w);
    assert_int_equal(lt_tensor_refcount(w), 1);
    lt_scope_end();
    assert_int_equal(lt_tensor_refcount(w), 1); /* the scope did not drop it */
    /* no scope open: the reference is the caller's already */
    lt_tensor *v = lt_persist(lt_randn(LT_DIMS(4), LT_F32, cpu()));
    assert_int_equal(lt_tensor_refcount(v), 1);
    assert_int_equal(lt_live_tensor_count(), live + 2);
    lt_release(v);
    lt_release(w);
    assert_int_equal(lt_live_tensor_count(), live);
    lt_scope_begin();
    /* a nested call made in an outer scope is refused */
    lt_tensor *outer = lt_zeros(LT_DIMS(2), LT_F32, cpu());
    lt_scope_begin();
    assert_null(lt_persist(outer));
    LT_EXPECT_ERROR(LT_ERR_STATE, "persist: tensor");
    lt_scope_end();
    assert_int_equal(lt_tensor_refcount(outer), 1);
    /* NULL keeps the first error */
    assert_null(lt_persist(lt_reshape(outer, LT_DIMS(3))));
    LT_EXPECT_ERROR(LT_ERR_SHAPE, "reshape");
}

/* ---- leak queries ------------------------------------------------------------------- */

static void test_live_tensors_query_and_report(void **state)
{
    (void)state;
    lt_scope_end();
    int64_t before = lt_live_tensors(NULL, 0);
    lt_tensor *leak = lt_randn(LT_DIMS(2, 3), LT_F32, cpu()); /* no scope: ours to release */
    lt_tensor *lz = lt_ones(LT_DIMS(5), LT_F64, lazy());
    assert_int_equal(lt_live_tensors(NULL, 0), before + 2);
    lt_live_tensor list[64];
    int64_t n = lt_live_tensors(list, 64);
    assert_true(n <= 64);
    bool found_randn = false, found_ones = false;
    for (int64_t i = 0; i < n; i++) {
        if (list[i].id == 0)
            fail();
        if (strcmp(list[i].made_by, "randn") == 0 && list[i].ndim == 2 && list[i].shape[0] == 2 &&
            list[i].shape[1] == 3 && list[i].dtype == LT_F32 && list[i].device.kind == LT_DEVICE_CPU &&
            list[i].refcount == 1)
            found_randn = true;
        if (strcmp(list[i].made_by, "full") == 0 && list[i].device.kind == LT_DEVICE_LAZY && list[i].dtype == LT_F64)
            found_ones = true;
    }
    assert_true(found_randn && found_ones);
    char text[4096];
    int len = lt_live_tensor_report(text, sizeof text);
    assert_true(len > 0 && (size_t)len < sizeof text);
    assert_non_null(strstr(text, ": f32[2, 3] on cpu:0, 1 reference, made by randn\n"));
    assert_non_null(strstr(text, ": f64[5] on lazy:0, 1 reference, made by full\n"));
    char small[8];
    assert_int_equal(lt_live_tensor_report(small, sizeof small), len); /* snprintf semantics */
    assert_int_equal(strlen(small), 7);
    lt_release(leak);
    lt_release(lz);
    assert_int_equal(lt_live_tensors(NULL, 0), before);
    assert_int_equal(lt_live_tensors(NULL, -1), -1);
    LT_EXPECT_ERROR(LT_ERR_ARGUMENT, "live_tensors");
    assert_int_equal(lt_live_tensors(NULL, 3), -1);
    LT_EXPECT_ERROR(LT_ERR_NULL, "live_tensors: out is NULL with max = 3");
    lt_scope_begin();
}

/* Runs a child that leaks `leaks` tensors and exits with LT_DEBUG set to
 * `debug`; returns what it wrote on stderr (malloc'd). */
static char *child_stderr(int leaks, const char *debug)
{
    int fds[2];
    assert_int_equal(pipe(fds), 0);
    fflush(NULL);
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        dup2(fds[1], 2);
        close(fds[0]);
        setenv("LT_DEBUG", debug, 1);
        while (lt_scope_depth() > 0)
            lt_scope_end();
        for (int i = 0; i < leaks; i++)
            lt_randn(LT_DIMS(3, 4), LT_F32, cpu());
        exit(0);
    }
    close(fds[1]);
    size_t cap = 1 << 16, len = 0;
    char *out = calloc(cap, 1);
    ssize_t got;
    while ((got = read(fds[0], out + len, cap - 1 - len)) > 0)
        len += (size_t)got;
    close(fds[0]);
    int status = 0;
    waitpid(pid, &status, 0);
    assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
    return out;
}

static void test_leak_report_at_exit(void **state)
{
    (void)state;
    char *out = child_stderr(25, "1");
    assert_non_null(strstr(out, "lazytensor (LT_DEBUG): leak report at exit: 25 tensors alive\n"));
    assert_non_null(strstr(out, ": f32[3, 4] on cpu:0, 1 reference, made by randn\n"));
    assert_non_null(strstr(out, "  ... and 5 more\n"));
    free(out);
    out = child_stderr(0, "1");
    assert_null(strstr(out, "leak report"));
    free(out);
    out = child_stderr(2, "0");
    assert_null(strstr(out, "leak report"));
    free(out);
}

/* ---- no-grad scope ------------------------------------------------------------------ */

static void test_no_grad_scope(void **state)
{
    (void)state;
    lt_tensor *w = LT_OK_T(LT_T(LT_F32, LT_DIMS(3), 1, 2, 3));
    assert_int_equal(lt_set_requires_grad(w, true), LT_OK);
    assert_int_equal(lt_backward(lt_sum(lt_mul(w, w), NULL, 0, false), NULL), LT_OK);
    int64_t live = lt_live_tensor_count();
    int depth = lt_scope_depth();

    lt_no_grad_scope_begin();
    assert_false(lt_grad_enabled());
    assert_int_equal(lt_scope_depth(), depth + 1);
    lt_tensor *y = lt_mul_scalar(w, 2);
    assert_false(lt_requires_grad(y)); /* no tape inside */
    assert_non_null(lt_sub_scaled_(w, lt_grad(w), 0.5)); /* in place on a parameter: allowed */
    assert_int_equal(lt_no_grad_scope_end(), LT_OK);

    assert_true(lt_grad_enabled());
    assert_int_equal(lt_scope_depth(), depth);
    assert_int_equal(lt_live_tensor_count(), live); /* y and the grad reference died with the scope */
    LT_ASSERT_VALUES(w, 0, 0, 0, 0); /* w - 0.5 * 2w */
    assert_null(lt_sub_scaled_(w, w, 1.0)); /* grad mode is back on */
    LT_EXPECT_ERROR(LT_ERR_STATE, "");

    /* misuse: no scope open, a scope still open inside */
    assert_int_equal(lt_no_grad_scope_end(), LT_ERR_STATE);
    LT_EXPECT_ERROR(LT_ERR_STATE, "no_grad_scope_end: no no-grad scope is open");
    lt_no_grad_scope_begin();
    lt_scope_begin();
    assert_int_equal(lt_no_grad_scope_end(), LT_ERR_STATE);
    LT_EXPECT_ERROR(LT_ERR_STATE, "no_grad_scope_end: the scope depth is");
    assert_false(lt_grad_enabled()); /* nothing was closed */
    lt_scope_end();
    assert_int_equal(lt_no_grad_scope_end(), LT_OK);
    assert_true(lt_grad_enabled());
}

/* ---- lt_sub_scaled_ ----------------------------------------------------------------- */

static void sub_scaled_on(lt_device dev)
{
    lt_tensor *a = lt_to(LT_T(LT_F32, LT_DIMS(2, 2), 10, 20, 30, 40), dev);
    lt_tensor *b = lt_to(LT_T(LT_F32, LT_DIMS(2), 1, 2), dev);
    assert_ptr_equal(lt_sub_scaled_(a, b, 3.0), a); /* broadcast b over rows */
    LT_ASSERT_VALUES(a, 0, 7, 14, 27, 34);
    assert_ptr_equal(lt_sub_scaled_(a, b, -0.5), a);
    LT_ASSERT_VALUES(a, 0, 7.5, 15, 27.5, 35);
    /* it pairs with lt_add_scaled_: the two undo each other */
    lt_add_scaled_(lt_sub_scaled_(a, b, 2.0), b, 2.0);
    LT_ASSERT_VALUES(a, 0, 7.5, 15, 27.5, 35);
    lt_tensor *i = lt_to(LT_T(LT_I32, LT_DIMS(2), 5, 6), dev);
    assert_null(lt_sub_scaled_(i, b, 1.0));
    LT_EXPECT_ERROR(LT_ERR_DTYPE, "");
    assert_null(lt_sub_scaled_(b, a, 1.0));
    LT_EXPECT_ERROR(LT_ERR_SHAPE, "");
}

static void test_sub_scaled_(void **state)
{
    (void)state;
    sub_scaled_on(cpu());
    const char *backends[2] = {"interp", "cpu"};
    for (int k = 0; k < 2; k++) {
        if (lt_test_use_backend(backends[k]))
            sub_scaled_on(lazy());
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        LT_TEST(test_persist_in_and_out_of_scopes),
        LT_TEST(test_live_tensors_query_and_report),
        LT_TEST(test_leak_report_at_exit),
        LT_TEST(test_no_grad_scope),
        LT_TEST(test_sub_scaled_),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
