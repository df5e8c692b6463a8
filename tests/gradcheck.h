/*
 * gradcheck.h - the finite-difference gradient checker shared by the
 * test_gradcheck*.c programs.
 *
 * For a function f(inputs) -> tensor, the objective is L = sum(f(x) * W)
 * with a fixed random W of f's output shape. The analytic gradient of L
 * (lt_backward on the cpu device) must match central differences
 * (L(x + eps e_j) - L(x - eps e_j)) / (2 eps) for every element of every
 * floating input, within tol * (1 + |numeric|). Inputs are f64 CPU tensors
 * (integer and bool inputs, such as indices and masks, are passed along
 * and not differentiated). With `lazy` set, the same backward pass also
 * runs on the lazy device and its gradients must match the cpu ones.
 *
 * f receives the inputs on the device under test and must create any
 * constant it needs on that device (lt_tensor_device(x[0])).
 */
#ifndef LT_GRADCHECK_H
#define LT_GRADCHECK_H

#include "lt_test.h"

#include "api/api.h" /* lt_call, for ops without a public wrapper */

#define GC_MAX_INPUTS 8

typedef lt_tensor *(*gc_fn)(lt_tensor *const *x, const void *ctx);

/* Options of one check: step, tolerance, and whether lazy must agree. */
typedef struct gc_opts {
    double eps, tol;
    bool lazy;
} gc_opts;

static const gc_opts GC_EAGER = {1e-6, 1e-6, false};
static const gc_opts GC_BOTH = {1e-6, 1e-6, true};

/* ---- deterministic test data ------------------------------------------- */

static uint64_t gc_rng_state = 0x853c49e6748fea9bull;

/* Uniform in [0, 1) from a 64-bit LCG (independent of the library RNG). */
static inline double gc_urand(void)
{
    gc_rng_state = gc_rng_state * 6364136223846793005ull + 1442695040888963407ull;
    return (double)(gc_rng_state >> 11) * 0x1p-53;
}

static inline int64_t gc_numel(const int64_t *dims, int nd)
{
    int64_t n = 1;
    for (int d = 0; d < nd; d++)
        n *= dims[d];
    return n;
}

/* f64 tensor with values uniform in [lo, hi). */
static inline lt_tensor *gc_uniform(const int64_t *dims, int nd, double lo, double hi)
{
    int64_t n = gc_numel(dims, nd);
    double *v = malloc(sizeof(double) * (size_t)(n > 0 ? n : 1));
    for (int64_t k = 0; k < n; k++)
        v[k] = lo + (hi - lo) * gc_urand();
    lt_tensor *t = lt_from_data(v, dims, nd, LT_F64, lt_device_cpu());
    free(v);
    return LT_OK_T(t);
}

/* f64 tensor with values uniform in +-[lo, hi) (kept away from 0). */
static inline lt_tensor *gc_away_from_zero(const int64_t *dims, int nd, double lo, double hi)
{
    int64_t n = gc_numel(dims, nd);
    double *v = malloc(sizeof(double) * (size_t)(n > 0 ? n : 1));
    for (int64_t k = 0; k < n; k++)
        v[k] = (gc_urand() < 0.5 ? -1 : 1) * (lo + (hi - lo) * gc_urand());
    lt_tensor *t = lt_from_data(v, dims, nd, LT_F64, lt_device_cpu());
    free(v);
    return LT_OK_T(t);
}

/* f64 tensor of distinct values spaced at least 0.05 apart (a shuffled
 * ramp around 0 with small jitter): no ties, so max/sort are smooth. */
static inline lt_tensor *gc_distinct(const int64_t *dims, int nd)
{
    int64_t n = gc_numel(dims, nd);
    double *v = malloc(sizeof(double) * (size_t)(n > 0 ? n : 1));
    for (int64_t k = 0; k < n; k++)
        v[k] = 0.1 * (double)(k - n / 2) + 0.04 * gc_urand() + 0.003;
    for (int64_t k = n - 1; k > 0; k--) {
        int64_t j = (int64_t)(gc_urand() * (double)(k + 1));
        double s = v[k];
        v[k] = v[j];
        v[j] = s;
    }
    lt_tensor *t = lt_from_data(v, dims, nd, LT_F64, lt_device_cpu());
    free(v);
    return LT_OK_T(t);
}

#define GC_UNIFORM(lo, hi, ...) gc_uniform(LT_DIMS(__VA_ARGS__), (lo), (hi))
#define GC_AWAY(lo, hi, ...) gc_away_from_zero(LT_DIMS(__VA_ARGS__), (lo), (hi))
#define GC_DISTINCT(...) gc_distinct(LT_DIMS(__VA_ARGS__))

/* ---- the checker ---------------------------------------------------------- */

static inline bool gc_is_diff(lt_tensor *t) { return lt_dtype_is_floating(lt_tensor_dtype(t)); }

/* f(x) on the given inputs, failing the test with the error if NULL. */
static inline lt_tensor *gc_apply(gc_fn f, const void *ctx, lt_tensor *const *x, const char *name,
                                  const char *file, int line)
{
    lt_tensor *y = f(x, ctx);
    if (!y) {
        print_error("%s:%d: %s: forward failed: %s\n", file, line, name, lt_last_error());
        _fail(file, line);
    }
    return y;
}

/* L = sum(f(x) * w) as a double (inputs on the cpu, no grad). */
static inline double gc_objective(gc_fn f, const void *ctx, lt_tensor *const *x, lt_tensor *w, const char *name,
                                  const char *file, int line)
{
    lt_scope_begin();
    double v = NAN;
    lt_tensor *l = lt_sum(lt_mul(gc_apply(f, ctx, x, name, file, line), w), NULL, 0, false);
    if (!l || lt_item(l, &v) != LT_OK) {
        print_error("%s:%d: %s: objective failed: %s\n", file, line, name, lt_last_error());
        _fail(file, line);
    }
    lt_scope_end();
    return v;
}

/*
 * Analytic gradients of L on device dev: grads[i] receives a malloc'd
 * array (zeros when input i got no gradient) for every floating input.
 * *w is created (random, f64 cpu, kept by the caller's scope) when NULL.
 */
static inline void gc_analytic(gc_fn f, const void *ctx, lt_tensor *const *xs, int n, lt_device dev, lt_tensor **w,
                               double **grads, const char *name, const char *file, int line)
{
    lt_scope_begin();
    lt_tensor *leaves[GC_MAX_INPUTS];
    for (int i = 0; i < n; i++) {
        leaves[i] = LT_OK_T(lt_to(xs[i], dev));
        if (gc_is_diff(xs[i]))
            assert_int_equal(lt_set_requires_grad(leaves[i], true), LT_OK);
    }
    lt_tensor *y = gc_apply(f, ctx, leaves, name, file, line);
    if (!*w) {
        *w = lt_keep(gc_uniform(lt_tensor_shape(y), lt_tensor_ndim(y), -1.0, 1.0));
    }
    lt_tensor *l = lt_sum(lt_mul(y, lt_to(*w, dev)), NULL, 0, false);
    if (!l || lt_backward(l, NULL) != LT_OK) {
        print_error("%s:%d: %s: backward on %s failed: %s\n", file, line, name,
                    dev.kind == LT_DEVICE_LAZY ? "lazy" : "cpu", lt_last_error());
        _fail(file, line);
    }
    for (int i = 0; i < n; i++) {
        if (!gc_is_diff(xs[i]))
            continue;
        lt_tensor *g = lt_grad(leaves[i]);
        int64_t numel = lt_tensor_numel(xs[i]);
        if (g && (lt_tensor_ndim(g) != lt_tensor_ndim(xs[i]) ||
                  !lt_shape_equal(lt_tensor_shape(g), lt_tensor_ndim(g), lt_tensor_shape(xs[i]), lt_tensor_ndim(xs[i])))) {
            print_error("%s:%d: %s: gradient of input %d has the wrong shape\n", file, line, name, i);
            _fail(file, line);
        }
        grads[i] = g ? lt_test_values(g) : calloc((size_t)(numel > 0 ? numel : 1), sizeof(double));
    }
    lt_scope_end();
}

static inline bool gc_close(double a, double b, double tol) { return fabs(a - b) <= tol * (1.0 + fabs(b)); }

static inline void gc_check(const char *name, gc_fn f, const void *ctx, lt_tensor *const *xs, int n, gc_opts o,
                            const char *file, int line)
{
    assert_true(n <= GC_MAX_INPUTS);
    lt_scope_begin();
    lt_tensor *w = NULL;
    double *grads[GC_MAX_INPUTS] = {0};
    gc_analytic(f, ctx, xs, n, lt_device_cpu(), &w, grads, name, file, line);
    lt_tensor *args[GC_MAX_INPUTS];
    memcpy(args, xs, sizeof *args * (size_t)n);
    for (int i = 0; i < n; i++) {
        if (!gc_is_diff(xs[i]))
            continue;
        int64_t numel = lt_tensor_numel(xs[i]);
        double *v = lt_test_values(xs[i]);
        for (int64_t j = 0; j < numel; j++) {
            double orig = v[j], lp, lm;
            lt_scope_begin();
            v[j] = orig + o.eps;
            args[i] = lt_from_data(v, lt_tensor_shape(xs[i]), lt_tensor_ndim(xs[i]), LT_F64, lt_device_cpu());
            lp = gc_objective(f, ctx, args, w, name, file, line);
            v[j] = orig - o.eps;
            args[i] = lt_from_data(v, lt_tensor_shape(xs[i]), lt_tensor_ndim(xs[i]), LT_F64, lt_device_cpu());
            lm = gc_objective(f, ctx, args, w, name, file, line);
            lt_scope_end();
            v[j] = orig;
            double numeric = (lp - lm) / (2 * o.eps);
            if (!gc_close(grads[i][j], numeric, o.tol)) {
                print_error("%s:%d: %s: d/d input %d [element %lld]: analytic %.12g, numeric %.12g\n", file, line,
                            name, i, (long long)j, grads[i][j], numeric);
                _fail(file, line);
            }
        }
        args[i] = xs[i];
        free(v);
    }
    if (o.lazy) {
        double *lazy_grads[GC_MAX_INPUTS] = {0};
        gc_analytic(f, ctx, xs, n, lt_device_parse("lazy"), &w, lazy_grads, name, file, line);
        for (int i = 0; i < n; i++) {
            int64_t numel = gc_is_diff(xs[i]) ? lt_tensor_numel(xs[i]) : 0;
            for (int64_t j = 0; j < numel; j++) {
                if (!gc_close(lazy_grads[i][j], grads[i][j], 1e-10)) {
                    print_error("%s:%d: %s: lazy d/d input %d [element %lld] is %.12g, eager %.12g\n", file, line,
                                name, i, (long long)j, lazy_grads[i][j], grads[i][j]);
                    _fail(file, line);
                }
            }
            free(lazy_grads[i]);
        }
    }
    for (int i = 0; i < n; i++)
        free(grads[i]);
    lt_scope_end();
}

/* GRADCHECK_NAMED(name, f, ctx, opts, inputs...): checks f at the given
 * inputs (name appears in failure messages); GRADCHECK names it after f. */
#define GRADCHECK_NAMED(name, f, ctx, opts, ...)                                                                  \
    gc_check((name), (f), (ctx), (lt_tensor *const[]){__VA_ARGS__},                                             \
             (int)(sizeof((lt_tensor *const[]){__VA_ARGS__}) / sizeof(lt_tensor *)), (opts), __FILE__, __LINE__)
#define GRADCHECK(f, ctx, opts, ...) GRADCHECK_NAMED(#f, f, ctx, opts, __VA_ARGS__)

#endif
