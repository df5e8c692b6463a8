/*
 * bench/gemm_libs - the two sgemm libraries the library can call, side by
 * side on the products of the bench/peers workloads: OpenBLAS
 * (cblas_sgemm) and oneDNN (dnnl_sgemm), both single-threaded, as the
 * library calls them (its pool splits large products into blocks and
 * spreads batches of small ones over its threads, one call each).
 *
 * usage: gemm_libs [--quick]. For each shape M x N x K (C = A B^T, row-major,
 * as a linear layer's forward product), the best of 7 interleaved repeats
 * in GFLOP/s and the ratio. Figures only: exits 0.
 */
#include "bench_util.h"

#include <cblas.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#ifdef LT_HAVE_DNNL
#include <oneapi/dnnl/dnnl.h>
#include <omp.h>
#endif

typedef struct shape {
    int m, n, k;
    const char *what;
} shape;

static const shape shapes[] = {
    {64, 64, 32, "GPT attention scores, one head"},
    {64, 32, 64, "GPT attention values, one head"},
    {2048, 384, 128, "GPT qkv projection"},
    {2048, 128, 512, "GPT feed-forward down"},
    {2048, 96, 128, "GPT head (vocabulary)"},
    {128, 512, 784, "MLP layer 1"},
    {784, 512, 128, "MLP layer 1 weight gradient"},
    {2048, 1024, 256, "transformer feed-forward up"},
};

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static void openblas_call(const shape *s, const float *a, const float *b, float *c)
{
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, s->m, s->n, s->k, 1.0f, a, s->k, b, s->k, 0.0f, c, s->n);
}

#ifdef LT_HAVE_DNNL
static void dnnl_call(const shape *s, const float *a, const float *b, float *c)
{
    dnnl_sgemm('N', 'T', s->m, s->n, s->k, 1.0f, a, s->k, b, s->k, 0.0f, c, s->n);
}
#endif

/* Seconds per call over `calls` calls. */
static double time_calls(void (*fn)(const shape *, const float *, const float *, float *), const shape *s,
                        const float *a, const float *b, float *c, int calls)
{
    double t0 = now_s();
    for (int i = 0; i < calls; i++)
        fn(s, a, b, c);
    return (now_s() - t0) / calls;
}

static float *filled(size_t n, float step)
{
    float *p = malloc(sizeof *p * n);
    for (size_t i = 0; p && i < n; i++)
        p[i] = (float)(i % 13) * step - 0.5f;
    return p;
}

int main(int argc, char **argv)
{
    bool quick = argc > 1 && strcmp(argv[1], "--quick") == 0;
    int repeats = quick ? 2 : 7;
    openblas_set_num_threads(1);
#ifdef LT_HAVE_DNNL
    omp_set_num_threads(1);
    printf("gemm_libs: single-threaded sgemm, C = A B^T, best of %d interleaved repeats\n", repeats);
#else
    printf("gemm_libs: built without oneDNN (apt-get install libdnnl-dev): OpenBLAS alone\n");
#endif
    printf("   %-32s %-16s %10s %10s %7s\n", "product", "M x N x K", "OpenBLAS", "oneDNN", "ratio");
    for (size_t i = 0; i < sizeof shapes / sizeof shapes[0]; i++) {
        const shape *s = &shapes[i];
        float *a = filled((size_t)s->m * s->k, 0.01f), *b = filled((size_t)s->n * s->k, 0.02f);
        float *c = malloc(sizeof *c * (size_t)s->m * s->n);
        if (!a || !b || !c)
            return 1;
        double flop = 2.0 * s->m * s->n * s->k, ob = 1e30, dn = 1e30;
        int calls = (int)(0.05e9 / flop * (quick ? 1 : 4)) + 1;
        openblas_call(s, a, b, c); /* first calls apart: packing buffers, oneDNN's code generation */
#ifdef LT_HAVE_DNNL
        dnnl_call(s, a, b, c);
#endif
        for (int r = 0; r < repeats; r++) {
            double t = time_calls(openblas_call, s, a, b, c, calls);
            ob = t < ob ? t : ob;
#ifdef LT_HAVE_DNNL
            t = time_calls(dnnl_call, s, a, b, c, calls);
            dn = t < dn ? t : dn;
#endif
        }
        char dims[32];
        snprintf(dims, sizeof dims, "%d x %d x %d", s->m, s->n, s->k);
        printf("   %-32s %-16s %7.1f GF", s->what, dims, flop / ob * 1e-9);
        if (dn < 1e30)
            printf(" %7.1f GF %6.2fx\n", flop / dn * 1e-9, ob / dn);
        else
            printf(" %10s %7s\n", "n/a", "");
        free(a);
        free(b);
        free(c);
    }
    printf("   (ratio: OpenBLAS time / oneDNN time; above 1, oneDNN is faster)\n");
    return 0;
}
