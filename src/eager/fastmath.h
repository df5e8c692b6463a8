/*
 * fastmath.h - vectorizable f32 exp and erf, shared by the eager kernels
 * (elementwise.c, reduce.c) and the C that the cpu compiler generates
 * (render.c pastes LT_FASTMATH_SOURCE into every translation unit).
 *
 * Why: libm's expf/erff are calls that gcc cannot vectorize; they were
 * 6-9% of a transformer train step. Why shared: the lazy and the eager
 * device must compute bit-identical values, or Adam turns ulp-level
 * gradient differences into lr-sized parameter differences.
 *
 * Bit-identical on both sides: the functions are written once, below, as
 * a macro whose text is both compiled here and stringified for the
 * generated code. Every multiply-add is an explicit fmaf, and no other
 * product feeds an addition directly, so the result does not depend on
 * -ffp-contract (the library builds as ISO C, contraction off; generated
 * code builds as GNU C, contraction on). With -march=native on an FMA
 * machine fmaf is one instruction and the loops vectorize; elsewhere it
 * is libm's correctly rounded fmaf, slower but with the same values.
 *
 * Accuracy, measured against double-precision exp/erf over every float:
 *   lt_expf: at most 1.01 ulp over the normal range; results below 2^-126
 *            (x < -87.34) are subnormal, rounded once; x > 88.72 gives
 *            +inf, -inf gives 0, NaN stays NaN.
 *   lt_erff: at most 2.6 ulp; erf(+-inf) =
 *            +-1, erf(-0) = -0, NaN stays NaN.
 * f64 keeps libm.
 */
#ifndef LT_EAGER_FASTMATH_H
#define LT_EAGER_FASTMATH_H

#include <math.h>
#include <stdint.h>
#include <string.h>

/* The definitions as one token list, expanded by LT_FASTMATH_DEFINE and
 * stringified by LT_FASTMATH_STRING (comments go away in both).
 *
 * lt_expf: x = n ln2 + r with |r| <= ln2/2 (ln2 in two parts, the first
 * with few bits so n * part is exact), exp(r) = 1 + r + r^2 P(r) (P of
 * degree 5, Cephes' expf coefficients), 2^n built in the exponent bits in
 * two halves 2^n1 2^n2 so that n from -150 to 128 works. n is rounded by
 * adding 1.5 2^23 and read back from the low bits: no float -> int
 * conversion and no branch, which would stop gcc from vectorizing.
 *
 * lt_erff: |x| < 0.9: x P(x^2) (P of degree 5); otherwise
 * 1 - exp(-x^2) Q(1 / (1 + |x|)) (Q of degree 7), with x^2 = x2 + lo
 * split exactly by an fma so that exp(-x^2) = exp(-x2) (1 - lo). Both are
 * least-squares fits of the relative error on Chebyshev nodes (below 2e-8);
 * the sign of x is put back at the end. */
#define LT_FASTMATH_TOKENS(X)                                                        \
    X(static inline float lt_expf(float x) {                                         \
        float xc = x > -104.0f ? x : -104.0f;                                        \
        xc = xc < 89.0f ? xc : 89.0f;                                                \
        float t = fmaf(xc, 1.44269504088896341f, 12582912.0f);                       \
        float n = t - 12582912.0f;                                                   \
        int32_t t_bits;                                                              \
        memcpy(&t_bits, &t, sizeof t_bits);                                          \
        int32_t ni = t_bits - 0x4B400000;                                            \
        int32_t n1 = ni / 2, n2 = ni - n1;                                           \
        uint32_t s1_bits = (uint32_t)(n1 + 127) << 23;                               \
        uint32_t s2_bits = (uint32_t)(n2 + 127) << 23;                               \
        float s1, s2;                                                                \
        memcpy(&s1, &s1_bits, sizeof s1);                                            \
        memcpy(&s2, &s2_bits, sizeof s2);                                            \
        float r = fmaf(n, -0.693359375f, xc);                                        \
        r = fmaf(n, 2.12194440e-4f, r);                                              \
        float p = 1.9875691500e-4f;                                                  \
        p = fmaf(p, r, 1.3981999507e-3f);                                            \
        p = fmaf(p, r, 8.3334519073e-3f);                                            \
        p = fmaf(p, r, 4.1665795894e-2f);                                            \
        p = fmaf(p, r, 1.6666665459e-1f);                                            \
        p = fmaf(p, r, 5.0000001201e-1f);                                            \
        float r2 = r * r;                                                            \
        float e = fmaf(p, r2, r);                                                    \
        e = e + 1.0f;                                                                \
        float y = e * s1;                                                            \
        y = y * s2;                                                                  \
        y = x > 88.72283935546875f ? INFINITY : y;                                   \
        return x != x ? x : y;                                                       \
    }                                                                                \
    static inline float lt_erff(float x) {                                           \
        float a = fabsf(x);                                                          \
        a = a < 4.5f ? a : 4.5f;                                                     \
        float x2 = a * a;                                                            \
        float p = -6.123280253e-04f;                                                 \
        p = fmaf(p, x2, 5.019127836e-03f);                                           \
        p = fmaf(p, x2, -2.678451402e-02f);                                          \
        p = fmaf(p, x2, 1.128232838e-01f);                                           \
        p = fmaf(p, x2, -3.761254759e-01f);                                          \
        p = fmaf(p, x2, 1.128379161e+00f);                                           \
        float small = a * p;                                                         \
        float u = 1.0f / (1.0f + a);                                                 \
        float q = -5.685407208e-01f;                                                 \
        q = fmaf(q, u, 1.225021547e+00f);                                            \
        q = fmaf(q, u, -5.438472623e-01f);                                           \
        q = fmaf(q, u, -6.684070747e-01f);                                           \
        q = fmaf(q, u, 4.389620008e-01f);                                            \
        q = fmaf(q, u, 5.328667531e-01f);                                            \
        q = fmaf(q, u, 5.674087494e-01f);                                            \
        q = fmaf(q, u, -1.363015459e-04f);                                           \
        float lo = fmaf(a, a, -x2);                                                  \
        float tail = lt_expf(-x2) * (1.0f - lo);                                     \
        float large = fmaf(-tail, q, 1.0f);                                          \
        float y = a < 0.9f ? small : large;                                          \
        y = x != x ? x : y;                                                          \
        return copysignf(y, x);                                                      \
    })

#define LT_FASTMATH_EXPAND(...) __VA_ARGS__
#define LT_FASTMATH_STRINGIFY(...) #__VA_ARGS__

/* The source text for the generated code: one line; render.c breaks it
 * into readable lines. It needs <math.h>, <stdint.h> and <string.h>. */
#define LT_FASTMATH_SOURCE LT_FASTMATH_TOKENS(LT_FASTMATH_STRINGIFY)

LT_FASTMATH_TOKENS(LT_FASTMATH_EXPAND)

#endif
