/*
 * lt_test.h - helpers shared by the cmocka test programs.
 *
 * Every test runs inside a scope opened by lt_test_setup and closed by
 * lt_test_teardown, which also asserts that no tensor handle outlived the
 * test (a leak check independent of the sanitizer build).
 */
#ifndef LT_TEST_H
#define LT_TEST_H

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lazytensor.h"
#include "core/core.h" /* internal helpers (half conversion) for white-box checks */

static int64_t lt_test_live_before;

static inline int lt_test_setup(void **state)
{
    (void)state;
    lt_clear_error();
    lt_test_live_before = lt_live_tensor_count();
    lt_scope_begin();
    return 0;
}

static inline int lt_test_teardown(void **state)
{
    (void)state;
    while (lt_scope_depth() > 0)
        lt_scope_end();
    if (lt_live_tensor_count() != lt_test_live_before) {
        fprintf(stderr, "leak: %lld tensors alive after the test, %lld before\n",
                (long long)lt_live_tensor_count(), (long long)lt_test_live_before);
        return -1;
    }
    return 0;
}

#define LT_TEST(fn) cmocka_unit_test_setup_teardown(fn, lt_test_setup, lt_test_teardown)

/* Fails the test with lt_last_error() if t is NULL. */
#define LT_OK_T(t) lt_test_ok((t), #t, __FILE__, __LINE__)
static inline lt_tensor *lt_test_ok(lt_tensor *t, const char *expr, const char *file, int line)
{
    if (!t) {
        print_error("%s:%d: %s returned NULL: %s\n", file, line, expr, lt_last_error());
        _fail(file, line);
    }
    return t;
}

/* Asserts that the last call failed with `status` and that the message
 * contains `needle`; clears the error. */
#define LT_EXPECT_ERROR(status, needle) lt_test_expect_error((status), (needle), __FILE__, __LINE__)
static inline void lt_test_expect_error(lt_status status, const char *needle, const char *file, int line)
{
    if (lt_last_status() != status || !strstr(lt_last_error(), needle)) {
        print_error("%s:%d: expected %s containing \"%s\", got %s: \"%s\"\n", file, line,
                    lt_status_name(status), needle, lt_status_name(lt_last_status()), lt_last_error());
        _fail(file, line);
    }
    lt_clear_error();
}

static inline lt_device lt_test_cpu(void) { return lt_device_cpu(); }

/* A tensor of dtype dt built from double values (converted). */
static inline lt_tensor *lt_test_tensor(const double *values, const int64_t *dims, int ndim, lt_dtype dt)
{
    lt_tensor *t64 = lt_from_data(values, dims, ndim, LT_F64, lt_device_cpu());
    if (!t64)
        return NULL;
    return dt == LT_F64 ? t64 : lt_to_dtype(t64, dt);
}

/* Reads every element of t (row-major) as doubles into a malloc'd array. */
static inline double *lt_test_values(lt_tensor *t)
{
    lt_tensor *d = lt_to_dtype(t, LT_F64);
    int64_t n = lt_tensor_numel(t);
    double *v = malloc(sizeof(double) * (size_t)(n > 0 ? n : 1));
    if (d && v)
        lt_copy_to_host(d, v, sizeof(double) * (size_t)n);
    return v;
}

/* Asserts t has the given shape. */
#define LT_ASSERT_SHAPE(t, ...) \
    lt_test_assert_shape((t), (const int64_t[]){__VA_ARGS__}, \
                         (int)(sizeof((const int64_t[]){__VA_ARGS__}) / sizeof(int64_t)), __FILE__, __LINE__)
static inline void lt_test_assert_shape(lt_tensor *t, const int64_t *dims, int ndim, const char *file, int line)
{
    if (!t || lt_tensor_ndim(t) != ndim) {
        print_error("%s:%d: expected %d dims, got %d\n", file, line, ndim, t ? lt_tensor_ndim(t) : -1);
        _fail(file, line);
    }
    for (int i = 0; i < ndim; i++) {
        if (lt_tensor_shape(t)[i] != dims[i]) {
            print_error("%s:%d: dim %d is %lld, expected %lld\n", file, line, i,
                        (long long)lt_tensor_shape(t)[i], (long long)dims[i]);
            _fail(file, line);
        }
    }
}

/* Asserts the elements of t equal expected within tol (absolute + relative);
 * NaN matches NaN, infinities must match exactly. */
static inline void lt_test_assert_values(lt_tensor *t, const double *expected, int64_t n, double tol,
                                         const char *file, int line)
{
    if (!t) {
        print_error("%s:%d: tensor is NULL: %s\n", file, line, lt_last_error());
        _fail(file, line);
    }
    if (lt_tensor_numel(t) != n) {
        print_error("%s:%d: %lld elements, expected %lld\n", file, line, (long long)lt_tensor_numel(t),
                    (long long)n);
        _fail(file, line);
    }
    double *v = lt_test_values(t);
    int64_t bad = -1;
    for (int64_t i = 0; i < n && bad < 0; i++) {
        double e = expected[i], g = v[i];
        bool ok = (isnan(e) && isnan(g)) || (isinf(e) && g == e) ||
                  (!isinf(e) && fabs(g - e) <= tol * (1.0 + fabs(e)));
        if (!ok) {
            print_error("%s:%d: element %lld is %.9g, expected %.9g (tol %g)\n", file, line, (long long)i, g,
                        e, tol);
            bad = i;
        }
    }
    free(v);
    if (bad >= 0)
        _fail(file, line);
}
#define LT_ASSERT_VALUES(t, tol, ...) \
    lt_test_assert_values((t), (const double[]){__VA_ARGS__}, \
                          (int64_t)(sizeof((const double[]){__VA_ARGS__}) / sizeof(double)), (tol), __FILE__, __LINE__)
#define LT_ASSERT_ARRAY(t, arr, n, tol) lt_test_assert_values((t), (arr), (n), (tol), __FILE__, __LINE__)

/* Selects the lazy backend `name`; false (with a message, the error
 * cleared) when this machine cannot run it, so the caller skips it. */
static inline bool lt_test_use_backend(const char *name)
{
    if (lt_lazy_set_backend(name) == LT_OK)
        return true;
    print_message("backend %s unavailable (%s): skipped\n", name, lt_last_error());
    lt_clear_error();
    return false;
}

/* Runs check on the lazy device once per backend this machine can run
 * (interp, then cpu), each time in a scope of its own. */
static inline void lt_test_each_lazy_backend(void (*check)(lt_device dev))
{
    const char *backends[] = {"interp", "cpu"};
    for (int b = 0; b < 2; b++) {
        if (!lt_test_use_backend(backends[b]))
            continue;
        lt_scope_begin();
        check(lt_device_parse("lazy"));
        assert_int_equal(lt_scope_end(), LT_OK);
    }
}

/* Every dtype, for tests that sweep them. */
static const lt_dtype lt_test_all_dtypes[] = {LT_F32, LT_F64, LT_I32, LT_I64, LT_U8, LT_BOOL, LT_BF16, LT_F16};
#define LT_TEST_N_DTYPES (int)(sizeof lt_test_all_dtypes / sizeof lt_test_all_dtypes[0])

/* A view of base with the given geometry (white-box: lt_tensor_view_of),
 * owned by the current scope. */
static inline lt_tensor *lt_test_view_of(lt_tensor *base, const int64_t *shape, const int64_t *strides, int ndim,
                                         int64_t offset)
{
    return lt_tensor_publish(lt_tensor_view_of(base, shape, strides, ndim, offset));
}

/* The transpose of a contiguous 2-d tensor, as a strided view. */
static inline lt_tensor *lt_test_transpose2d(lt_tensor *t)
{
    const int64_t *s = lt_tensor_shape(t);
    return lt_test_view_of(t, (int64_t[]){s[1], s[0]}, (int64_t[]){1, s[1]}, 2, 0);
}

/* Shorthand constructor: LT_T(LT_F32, LT_DIMS(2, 3), 1, 2, 3, 4, 5, 6). */
#define LT_DIMS(...) \
    (const int64_t[]){__VA_ARGS__}, (int)(sizeof((const int64_t[]){__VA_ARGS__}) / sizeof(int64_t))
#define LT_T(dt, dims, ...) lt_test_tensor_n((const double[]){__VA_ARGS__}, \
    (int64_t)(sizeof((const double[]){__VA_ARGS__}) / sizeof(double)), dims, (dt))
static inline lt_tensor *lt_test_tensor_n(const double *values, int64_t n, const int64_t *dims, int ndim,
                                          lt_dtype dt)
{
    int64_t numel = 1;
    for (int i = 0; i < ndim; i++)
        numel *= dims[i];
    if (numel != n) {
        fprintf(stderr, "LT_T: %lld values for %lld elements\n", (long long)n, (long long)numel);
        abort();
    }
    return lt_test_tensor(values, dims, ndim, dt);
}

#endif
