/*
 * nn_kernels.h - private declarations shared by the nn kernel files
 * (matmul.c, conv.c, nn.c). nn.c registers every kernel of the group.
 */
#ifndef LT_EAGER_NN_KERNELS_H
#define LT_EAGER_NN_KERNELS_H

#include "eager/eager.h"

#include <cblas.h>
#include <stdint.h>

/* matmul.c: torch.matmul semantics on OpenBLAS (floats) or a triple loop
 * (integers). */
lt_status lt_eager_matmul(lt_op op, lt_tensor *const *in, int nin, const lt_attrs *a,
                          const lt_meta *out_meta, lt_tensor **out);
/* conv.c: conv2d and its weight and input gradients (CONV2D,
 * CONV2D_WEIGHT_GRAD, CONV2D_INPUT_GRAD) as im2col/col2im + gemm per
 * (image, group). */
lt_status lt_eager_conv2d(lt_op op, lt_tensor *const *in, int nin, const lt_attrs *a,
                          const lt_meta *out_meta, lt_tensor **out);

/* True if v can be passed to BLAS as a size or leading dimension. */
static inline bool lt_blas_fits(int64_t v)
{
    return sizeof(blasint) >= sizeof(int64_t) || v <= (int64_t)INT32_MAX;
}

/*
 * Row-major C = op(A) * op(B) (alpha 1, beta 0) in f32 or f64 (dtype dt).
 * Sizes and leading dimensions must satisfy lt_blas_fits. Large products
 * are split into blocks of rows or columns run on the library's pool, each
 * a single-threaded BLAS call (matmul.c).
 */
void lt_blas_gemm(lt_dtype dt, bool trans_a, bool trans_b, int64_t m, int64_t n, int64_t k, const void *a,
                  int64_t lda, const void *b, int64_t ldb, void *c, int64_t ldc);
/* The same with beta 1: C += op(A) * op(B). */
void lt_blas_gemm_acc(lt_dtype dt, bool trans_a, bool trans_b, int64_t m, int64_t n, int64_t k, const void *a,
                      int64_t lda, const void *b, int64_t ldb, void *c, int64_t ldc);

/*
 * sgemm.c: row-major C = alpha op(A) op(B) + beta C in f32 on the calling
 * thread alone, by oneDNN or OpenBLAS, whichever this CPU runs faster
 * (LT_GEMM=openblas|onednn overrides). Nothing happens when m or n is 0.
 */
void lt_sgemm(bool trans_a, bool trans_b, int64_t m, int64_t n, int64_t k, float alpha, const float *a, int64_t lda,
              const float *b, int64_t ldb, float beta, float *c, int64_t ldc);
/* Zeroes the m x n matrix at c (leading dimension ldc, elements of elem bytes). */
void lt_zero_matrix(void *c, int64_t m, int64_t n, int64_t ldc, size_t elem);
/* "onednn" or "openblas": the library lt_sgemm uses in this process. */
const char *lt_sgemm_library(void);

#endif
