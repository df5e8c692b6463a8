/*
 * sgemm.c - the f32 matrix product behind matmul, linear and convolution:
 * oneDNN's dnnl_sgemm on CPUs with AVX-512, OpenBLAS's cblas_sgemm
 * elsewhere.
 *
 * Why both. Debian 12's OpenBLAS (0.3.21) runs its 256-bit kernels on AMD
 * CPUs with AVX-512 (Zen 4), while oneDNN generates AVX-512 code for the
 * CPU it runs on. Single-threaded, on the bench/peers workloads' shapes,
 * on a 2-core AMD EPYC with AVX-512 (best of 20): 128x512x784 0.93 ms
 * with OpenBLAS against 0.48 ms with oneDNN, 2048x1024x256 9.4 against
 * 4.8 ms, 576x64x288 (a conv product per image) 0.19 against 0.09 ms:
 * about 2x everywhere. On an AVX2-only CPU the two measured within a few
 * percent of each other on whole steps, and oneDNN's first call in a
 * process spends tens of milliseconds generating code, so OpenBLAS stays
 * there. LT_GEMM=openblas or LT_GEMM=onednn overrides the choice.
 *
 * oneDNN's Debian build threads with OpenMP. Every call here is made from
 * one of the library's pool threads (src/eager/matmul.c splits large
 * products into blocks), so each calling thread asks OpenMP for one thread
 * once: oneDNN then runs the product on the caller, creating no team. The
 * function is looked up at run time (libdnnl pulls libgomp in) so that
 * nothing here is compiled or linked against one OpenMP runtime in
 * particular.
 */
#include "eager/nn_kernels.h"

#include <dlfcn.h>
#include <dnnl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { GEMM_UNDECIDED, GEMM_OPENBLAS, GEMM_ONEDNN };

static _Atomic int gemm_library = GEMM_UNDECIDED;

static int choose_library(void)
{
    const char *env = getenv("LT_GEMM");
    if (env && strcmp(env, "openblas") == 0)
        return GEMM_OPENBLAS;
    if (env && strcmp(env, "onednn") == 0)
        return GEMM_ONEDNN;
    if (env && *env)
        fprintf(stderr, "lazytensor: warning: unknown LT_GEMM=\"%s\" (expected openblas or onednn), using the default\n",
                env);
    __builtin_cpu_init();
    return __builtin_cpu_supports("avx512f") ? GEMM_ONEDNN : GEMM_OPENBLAS;
}

/* The library of this process, decided on first use. */
static int library(void)
{
    int lib = atomic_load(&gemm_library);
    if (lib == GEMM_UNDECIDED) {
        int chosen = choose_library();
        /* threads deciding at once choose the same library (and may each warn) */
        atomic_compare_exchange_strong(&gemm_library, &lib, chosen);
        lib = atomic_load(&gemm_library);
    }
    return lib;
}

const char *lt_sgemm_library(void) { return library() == GEMM_ONEDNN ? "onednn" : "openblas"; }

/* Makes oneDNN run on the calling thread alone (see the top of the file). */
static void onednn_single_threaded(void)
{
    static _Thread_local bool done;
    if (done)
        return;
    done = true;
    void (*set_threads)(int) = (void (*)(int))dlsym(RTLD_DEFAULT, "omp_set_num_threads");
    if (set_threads)
        set_threads(1);
}

void lt_zero_matrix(void *c, int64_t m, int64_t n, int64_t ldc, size_t elem)
{
    if (ldc == n) {
        memset(c, 0, (size_t)(m * n) * elem);
        return;
    }
    for (int64_t i = 0; i < m; i++)
        memset((char *)c + (size_t)(i * ldc) * elem, 0, (size_t)n * elem);
}

/* For beta = 0, OpenBLAS zeroes C with a loop about 4x slower than memset
 * before it accumulates into it (a 288x576x64 sgemm: 303 us with beta 0,
 * 248 us with beta 1 after a 13 us memset of C), so C is zeroed here and
 * the product runs with beta 1: the same bits, since the kernel adds its
 * product to zeros either way. oneDNN takes beta 0 as it is (no slower). */
static void openblas_sgemm(bool ta, bool tb, int64_t m, int64_t n, int64_t k, float alpha, const float *a,
                           int64_t lda, const float *b, int64_t ldb, float beta, float *c, int64_t ldc)
{
    if (beta == 0.0f) {
        lt_zero_matrix(c, m, n, ldc, sizeof(float));
        beta = 1.0f;
    }
    cblas_sgemm(CblasRowMajor, ta ? CblasTrans : CblasNoTrans, tb ? CblasTrans : CblasNoTrans, (blasint)m,
                (blasint)n, (blasint)k, alpha, a, (blasint)lda, b, (blasint)ldb, beta, c, (blasint)ldc);
}

void lt_sgemm(bool trans_a, bool trans_b, int64_t m, int64_t n, int64_t k, float alpha, const float *a, int64_t lda,
              const float *b, int64_t ldb, float beta, float *c, int64_t ldc)
{
    if (m <= 0 || n <= 0)
        return;
    if (k <= 0 || library() != GEMM_ONEDNN) {
        openblas_sgemm(trans_a, trans_b, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
        return;
    }
    onednn_single_threaded();
    dnnl_status_t st = dnnl_sgemm(trans_a ? 'T' : 'N', trans_b ? 'T' : 'N', m, n, k, alpha, a, lda, b, ldb, beta,
                                  c, ldc);
    /* oneDNN refuses only arguments BLAS accepts too (such as a leading
     * dimension below 1 for an empty operand): let OpenBLAS have those */
    if (st != dnnl_success)
        openblas_sgemm(trans_a, trans_b, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
}
