/*
 * eager.c - benchmark of the eager CPU runtime (build/bench/eager).
 *
 * Run as `OMP_WAIT_POLICY=PASSIVE build/bench/eager [--quick]`. Prints one
 * table, every figure measured in this run, medians over repeats:
 *   1. dispatch cost per op on tiny (4-element) f32 tensors;
 *   2. elementwise bandwidth on 16M f32 against a plain OpenMP C loop, and
 *      a 4-op eager chain;
 *   3. matmul GFLOP/s against a direct cblas_sgemm call;
 *   4. conv2d forward GFLOP/s (informative).
 * Targets are printed next to the figures with PASS/MISS; the exit status is
 * 0 either way (timings never gate anything). Uses the public API only.
 */
#include "lazytensor.h"

#include "bench_util.h"

#include <cblas.h>
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define MAX_REPEATS 32

static int g_repeats = 7; /* repeats per measurement (--quick: 3) */

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static const char *verdict(int pass) { return pass ? "PASS" : "MISS"; }

/* Reports a failed library call once and returns 0 so sections go on. */
static int check(const lt_tensor *t, const char *what)
{
    if (t)
        return 1;
    printf("   %-28s n/a (error: %s)\n", what, lt_last_error());
    lt_clear_error();
    return 0;
}

/* A tensor of reproducible values in [-1, 1) made on the host. */
static lt_tensor *make_input(const int64_t *dims, int ndim, uint32_t seed)
{
    int64_t n = 1;
    for (int i = 0; i < ndim; i++)
        n *= dims[i];
    float *v = malloc((size_t)n * sizeof(float));
    if (!v)
        return NULL;
    uint32_t x = seed * 2654435761u + 1;
    for (int64_t i = 0; i < n; i++) {
        x = x * 1664525u + 1013904223u;
        v[i] = (float)(x >> 8) * (2.0f / 16777216.0f) - 1.0f;
    }
    lt_tensor *t = lt_from_data(v, dims, ndim, LT_F32, lt_device_cpu());
    free(v);
    return t;
}

/* ---- 1. dispatch cost ---------------------------------------------------- */

typedef enum tiny_op { TINY_ADD, TINY_MUL_SCALAR, TINY_RELU, TINY_SUM, TINY_VIEW, TINY_TRANSPOSE } tiny_op;

static lt_tensor *run_tiny(tiny_op op, lt_tensor *a, lt_tensor *b, lt_tensor *m)
{
    static const int64_t square[2] = {2, 2};
    switch (op) {
    case TINY_ADD: return lt_add(a, b);
    case TINY_MUL_SCALAR: return lt_mul_scalar(a, 2.0);
    case TINY_RELU: return lt_relu(a);
    case TINY_SUM: return lt_sum(a, NULL, 0, false);
    case TINY_VIEW: return lt_view(a, square, 2);
    default: return lt_transpose(m, 0, 1);
    }
}

/* Median ns per op of `op`, 1000 ops per scope. Returns -1 on error. */
static double time_tiny(tiny_op op, lt_tensor *a, lt_tensor *b, lt_tensor *m)
{
    enum { OPS_PER_SCOPE = 1000, SCOPES_PER_REPEAT = 20 };
    double samples[MAX_REPEATS];
    lt_scope_begin();
    lt_tensor *probe = run_tiny(op, a, b, m);
    lt_scope_end();
    if (!probe)
        return -1;
    for (int r = 0; r < g_repeats; r++) {
        double t0 = now_s();
        for (int s = 0; s < SCOPES_PER_REPEAT; s++) {
            lt_scope_begin();
            for (int i = 0; i < OPS_PER_SCOPE; i++)
                run_tiny(op, a, b, m);
            lt_scope_end();
        }
        samples[r] = (now_s() - t0) * 1e9 / (OPS_PER_SCOPE * SCOPES_PER_REPEAT);
    }
    return median(samples, g_repeats);
}

static void bench_dispatch(void)
{
    static const char *names[] = {"add(a, b)", "mul_scalar(a, 2)", "relu(a)", "sum(a)", "view(a, [2, 2])",
                                  "transpose(m, 0, 1)"};
    printf("\n1. Dispatch cost, tiny f32 tensors (4 elements), scope ended every 1000 ops\n");
    printf("   %-28s %10s   %-12s\n", "op", "ns/op", "target");
    const float data[4] = {1.0f, -2.0f, 3.0f, -4.0f};
    const int64_t four = 4, square[2] = {2, 2};
    lt_tensor *a = lt_from_data(data, &four, 1, LT_F32, lt_device_cpu());
    lt_tensor *b = lt_from_data(data, &four, 1, LT_F32, lt_device_cpu());
    lt_tensor *m = lt_from_data(data, square, 2, LT_F32, lt_device_cpu());
    if (!check(a, "inputs") || !check(b, "inputs") || !check(m, "inputs"))
        return;
    for (int op = TINY_ADD; op <= TINY_TRANSPOSE; op++) {
        double ns = time_tiny((tiny_op)op, a, b, m);
        if (ns < 0) {
            check(NULL, names[op]);
            continue;
        }
        printf("   %-28s %10.0f   %-12s %s\n", names[op], ns, "<= 1000 ns", verdict(ns <= 1000.0));
    }
    lt_release(a);
    lt_release(b);
    lt_release(m);
}

/* ---- 2. elementwise bandwidth ------------------------------------------- */

#define BW_N ((int64_t)16 << 20)

typedef enum bw_op { BW_ADD, BW_MUL_SCALAR, BW_RELU } bw_op;

static void plain_loop(bw_op op, const float *restrict a, const float *restrict b, float *restrict c)
{
    switch (op) {
    case BW_ADD:
#pragma omp parallel for simd schedule(static)
        for (int64_t i = 0; i < BW_N; i++)
            c[i] = a[i] + b[i];
        break;
    case BW_MUL_SCALAR:
#pragma omp parallel for simd schedule(static)
        for (int64_t i = 0; i < BW_N; i++)
            c[i] = a[i] * 2.0f;
        break;
    default:
#pragma omp parallel for simd schedule(static)
        for (int64_t i = 0; i < BW_N; i++)
            c[i] = a[i] > 0.0f ? a[i] : 0.0f;
        break;
    }
}

static lt_tensor *run_bw(bw_op op, lt_tensor *a, lt_tensor *b)
{
    switch (op) {
    case BW_ADD: return lt_add(a, b);
    case BW_MUL_SCALAR: return lt_mul_scalar(a, 2.0);
    default: return lt_relu(a);
    }
}

/* Times op in eager and as a plain loop, alternating, and prints a row. */
static void bench_bw_op(bw_op op, lt_tensor *a, lt_tensor *b, float *plain_out)
{
    static const char *names[] = {"add(a, b)", "mul_scalar(a, 2)", "relu(a)"};
    double bytes = (double)BW_N * sizeof(float) * (op == BW_ADD ? 3 : 2);
    double t_lt[MAX_REPEATS], t_plain[MAX_REPEATS];
    const float *pa = lt_tensor_data(a), *pb = lt_tensor_data(b);
    lt_scope_begin(); /* warm-up: fills the allocator cache */
    lt_tensor *probe = run_bw(op, a, b);
    lt_scope_end();
    if (!check(probe, names[op]))
        return;
    plain_loop(op, pa, pb, plain_out);
    for (int r = 0; r < g_repeats; r++) {
        lt_scope_begin();
        double t0 = now_s();
        run_bw(op, a, b);
        t_lt[r] = now_s() - t0;
        lt_scope_end();
        t0 = now_s();
        plain_loop(op, pa, pb, plain_out);
        t_plain[r] = now_s() - t0;
    }
    double gb_lt = bytes / median(t_lt, g_repeats) * 1e-9, gb_plain = bytes / median(t_plain, g_repeats) * 1e-9;
    double ratio = gb_lt / gb_plain;
    printf("   %-28s %8.1f GB/s %8.1f GB/s %7.2f   %-12s %s\n", names[op], gb_lt, gb_plain, ratio, ">= 0.70",
           verdict(ratio >= 0.70));
}

/* relu(a * b + c) * 0.5 as 4 eager ops, against one fused plain loop. */
static void bench_chain(lt_tensor *a, lt_tensor *b, lt_tensor *c, float *plain_out)
{
    double t_lt[MAX_REPEATS], t_plain[MAX_REPEATS];
    const float *pa = lt_tensor_data(a), *pb = lt_tensor_data(b), *pc = lt_tensor_data(c);
    lt_scope_begin();
    lt_tensor *probe = lt_mul_scalar(lt_relu(lt_add(lt_mul(a, b), c)), 0.5);
    lt_scope_end();
    if (!check(probe, "relu(a*b+c)*0.5"))
        return;
    for (int r = 0; r < g_repeats; r++) {
        lt_scope_begin();
        double t0 = now_s();
        lt_mul_scalar(lt_relu(lt_add(lt_mul(a, b), c)), 0.5);
        t_lt[r] = now_s() - t0;
        lt_scope_end();
        t0 = now_s();
#pragma omp parallel for simd schedule(static)
        for (int64_t i = 0; i < BW_N; i++) {
            float v = pa[i] * pb[i] + pc[i];
            plain_out[i] = (v > 0.0f ? v : 0.0f) * 0.5f;
        }
        t_plain[r] = now_s() - t0;
    }
    double ms_lt = median(t_lt, g_repeats) * 1e3, ms_plain = median(t_plain, g_repeats) * 1e3;
    /* eager traffic: mul 3N, add 3N, relu 2N, mul_scalar 2N floats */
    double gb_eager = (double)BW_N * sizeof(float) * 10 / (ms_lt * 1e-3) * 1e-9;
    printf("   %-28s %8.1f ms   (%5.1f GB/s of eager traffic); one fused plain loop: %.1f ms (informative)\n",
           "relu(a*b+c)*0.5, 4 ops", ms_lt, gb_eager, ms_plain);
}

static void bench_elementwise(void)
{
    printf("\n2. Elementwise, 16M f32 (GB/s = bytes read + written; outputs from the caching allocator)\n");
    printf("   %-28s %13s %13s %7s   %-12s\n", "op", "lazytensor", "plain loop", "ratio", "target");
    const int64_t n = BW_N;
    lt_tensor *a = make_input(&n, 1, 1), *b = make_input(&n, 1, 2), *c = make_input(&n, 1, 3);
    if (!check(a, "inputs") || !check(b, "inputs") || !check(c, "inputs"))
        return;
    float *plain_out = aligned_alloc(64, (size_t)BW_N * sizeof(float));
    if (!plain_out) {
        printf("   out of memory\n");
        return;
    }
    memset(plain_out, 0, (size_t)BW_N * sizeof(float)); /* pre-fault the pages */
    for (int op = BW_ADD; op <= BW_RELU; op++)
        bench_bw_op((bw_op)op, a, b, plain_out);
    bench_chain(a, b, c, plain_out);
    free(plain_out);
    lt_release(a);
    lt_release(b);
    lt_release(c);
}

/* ---- 3. matmul ----------------------------------------------------------- */

static void bench_matmul_size(int64_t n)
{
    int64_t dims[2] = {n, n};
    lt_tensor *a = make_input(dims, 2, 4), *b = make_input(dims, 2, 5);
    char label[32];
    snprintf(label, sizeof label, "%lld x %lld", (long long)n, (long long)n);
    if (!check(a, label) || !check(b, label))
        return;
    float *c = aligned_alloc(64, (size_t)(n * n) * sizeof(float));
    memset(c, 0, (size_t)(n * n) * sizeof(float));
    const float *pa = lt_tensor_data(a), *pb = lt_tensor_data(b);
    int repeats = n >= 2048 ? (g_repeats < 5 ? 2 : 5) : g_repeats;
    double t_lt[MAX_REPEATS], t_blas[MAX_REPEATS];
    lt_scope_begin(); /* warm-up */
    lt_tensor *probe = lt_matmul(a, b);
    lt_scope_end();
    if (check(probe, label)) {
        cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, (int)n, (int)n, (int)n, 1.0f, pa, (int)n, pb,
                    (int)n, 0.0f, c, (int)n);
        for (int r = 0; r < repeats; r++) {
            lt_scope_begin();
            double t0 = now_s();
            lt_matmul(a, b);
            t_lt[r] = now_s() - t0;
            lt_scope_end();
            t0 = now_s();
            cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, (int)n, (int)n, (int)n, 1.0f, pa, (int)n,
                        pb, (int)n, 0.0f, c, (int)n);
            t_blas[r] = now_s() - t0;
        }
        double flops = 2.0 * (double)n * (double)n * (double)n;
        double gf_lt = flops / median(t_lt, repeats) * 1e-9, gf_blas = flops / median(t_blas, repeats) * 1e-9;
        double ratio = gf_lt / gf_blas;
        printf("   %-28s %7.1f GFLOP/s %7.1f GFLOP/s %6.2f   %-12s %s\n", label, gf_lt, gf_blas, ratio, ">= 0.90",
               verdict(ratio >= 0.90));
    }
    free(c);
    lt_release(a);
    lt_release(b);
}

static void bench_matmul(void)
{
    printf("\n3. Matmul, square f32\n");
    printf("   %-28s %15s %15s %6s   %-12s\n", "size", "lt_matmul", "cblas_sgemm", "ratio", "target");
    static const int64_t sizes[] = {512, 1024, 2048};
    for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++)
        bench_matmul_size(sizes[i]);
}

/* ---- 4. conv2d ----------------------------------------------------------- */

static void bench_conv(void)
{
    printf("\n4. Conv2d forward, f32 (informative)\n");
    const int64_t xd[4] = {64, 32, 28, 28}, wd[4] = {64, 32, 3, 3}, bd[1] = {64};
    const int64_t pad[2] = {1, 1};
    lt_tensor *x = make_input(xd, 4, 6), *w = make_input(wd, 4, 7), *bias = make_input(bd, 1, 8);
    const char *label = "x[64,32,28,28] w[64,32,3,3] p1";
    if (!check(x, label) || !check(w, label) || !check(bias, label))
        return;
    lt_scope_begin();
    lt_tensor *probe = lt_conv2d(x, w, bias, NULL, pad, NULL, 1);
    lt_scope_end();
    if (check(probe, label)) {
        int repeats = g_repeats < 5 ? 2 : 5;
        double t[MAX_REPEATS];
        for (int r = 0; r < repeats; r++) {
            lt_scope_begin();
            double t0 = now_s();
            lt_conv2d(x, w, bias, NULL, pad, NULL, 1);
            t[r] = now_s() - t0;
            lt_scope_end();
        }
        double flops = 2.0 * 64 * 64 * 28 * 28 * 32 * 9;
        double ms = median(t, repeats) * 1e3;
        printf("   %-28s %7.1f GFLOP/s  (%.1f ms per call)\n", label, flops / (ms * 1e-3) * 1e-9, ms);
    }
    lt_release(x);
    lt_release(w);
    lt_release(bias);
}

int main(int argc, char **argv)
{
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--quick") == 0) {
            g_repeats = 3;
        } else {
            fprintf(stderr, "usage: %s [--quick]\n", argv[0]);
            return 2;
        }
    }
    const char *wait = getenv("OMP_WAIT_POLICY");
    printf("lazytensor %s eager benchmark: %d threads, OMP_WAIT_POLICY=%s, %d repeats (medians)%s\n", lt_version(),
           lt_get_num_threads(), wait ? wait : "(unset)", g_repeats, g_repeats < 7 ? ", --quick" : "");
    double t0 = now_s();
    bench_dispatch();
    bench_elementwise();
    bench_matmul();
    bench_conv();
    printf("\ntotal %.1f s\n", now_s() - t0);
    return 0;
}
