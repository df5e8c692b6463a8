/*
 * ewmath.h - per-element formulas of the activations and of the
 * elementwise ops that are more than one libm call (softplus, elu,
 * logaddexp, floor_divide, ...), shared by the eager kernels
 * (elementwise.c) and the C that the cpu compiler generates (render.c
 * pastes LT_EWMATH_SOURCE into every translation unit), so that both
 * devices evaluate the same expression.
 *
 * Each formula is written once, in LT_EWMATH_FUNS(T, F), and stamped out
 * for float (F = f: ltm_softplusf, libm's log1pf ...) and double (F empty:
 * ltm_softplus, log1p ...). The semantics follow PyTorch's CPU kernels,
 * edge cases included (noted per function).
 */
#ifndef LT_EAGER_EWMATH_H
#define LT_EAGER_EWMATH_H

#include <math.h>

/* softplus(x) = log(1 + exp(beta x)) / beta, linear above threshold
 * (beta x > threshold gives x, as torch).
 * mish(x) = x tanh(softplus(x)).
 * logsigmoid(x) = min(x, 0) - log1p(exp(-|x|)) (stable at both ends).
 * softsign(x) = x / (1 + |x|).
 * elu(x) = x > 0 ? scale x : scale alpha (exp(input_scale x) - 1); selu
 * and celu are elu with their constants.
 * leaky_relu(x) = x > 0 ? x : slope x (NaN stays NaN).
 * hardsigmoid(x) = min(max(x + 3, 0), 6) / 6, hardswish(x) = x
 * hardsigmoid(x): NaN propagates through both min and max as in torch's
 * std::min/std::max.
 * gelu_tanh(x) = x/2 (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3))).
 * frac(x) = x - trunc(x).
 * xlogy(x, y) = x log(y), 0 where x == 0 unless y is NaN.
 * logaddexp(a, b) = log(exp(a) + exp(b)); equal infinities give a.
 * floor_divide(a, b): torch's div_floor: (a - fmod(a, b)) / b corrected to
 * the floor; b == 0 gives a / b, a zero result keeps the sign of a / b. */
#define LT_EWMATH_FUNS(T, F)                                                              \
    static inline T ltm_softplus##F(T x, T beta, T threshold)                              \
    {                                                                                     \
        return x * beta > threshold ? x : log1p##F(exp##F(x * beta)) / beta;              \
    }                                                                                     \
    static inline T ltm_mish##F(T x) { return x * tanh##F(log1p##F(exp##F(x))); }          \
    static inline T ltm_logsigmoid##F(T x)                                                 \
    {                                                                                     \
        T m = x < (T)0 ? x : (T)0;                                                        \
        return x != x ? x : m - log1p##F(exp##F(-fabs##F(x)));                            \
    }                                                                                     \
    static inline T ltm_softsign##F(T x) { return x / ((T)1 + fabs##F(x)); }               \
    static inline T ltm_elu##F(T x, T alpha, T scale, T input_scale)                       \
    {                                                                                     \
        return x > (T)0 ? x * scale : expm1##F(x * input_scale) * (alpha * scale);        \
    }                                                                                     \
    static inline T ltm_leaky_relu##F(T x, T slope) { return x > (T)0 ? x : x * slope; }   \
    static inline T ltm_hardsigmoid##F(T x)                                                \
    {                                                                                     \
        T y = x + (T)3;                                                                   \
        y = y < (T)0 ? (T)0 : y;                                                          \
        y = (T)6 < y ? (T)6 : y;                                                          \
        return y / (T)6;                                                                  \
    }                                                                                     \
    static inline T ltm_hardswish##F(T x) { return x * ltm_hardsigmoid##F(x); }             \
    static inline T ltm_gelu_tanh##F(T x)                                                  \
    {                                                                                     \
        T inner = (T)0.7978845608028654 * (x + (T)0.044715 * (x * x * x));                \
        return x * ((T)1 + tanh##F(inner)) / (T)2;                                        \
    }                                                                                     \
    static inline T ltm_frac##F(T x) { return x - trunc##F(x); }                           \
    static inline T ltm_xlogy##F(T x, T y)                                                 \
    {                                                                                     \
        if (y != y)                                                                       \
            return y;                                                                     \
        return x == (T)0 ? (T)0 : x * log##F(y);                                          \
    }                                                                                     \
    static inline T ltm_logaddexp##F(T a, T b)                                             \
    {                                                                                     \
        if (isinf(a) && a == b)                                                           \
            return a;                                                                     \
        T m = a > b ? a : b;                                                              \
        return m + log1p##F(exp##F(-fabs##F(a - b)));                                     \
    }                                                                                     \
    static inline T ltm_floor_divide##F(T a, T b)                                          \
    {                                                                                     \
        if (b == (T)0)                                                                    \
            return a / b;                                                                 \
        T mod = fmod##F(a, b);                                                            \
        T div = (a - mod) / b;                                                            \
        if (mod != (T)0 && (b < (T)0) != (mod < (T)0))                                    \
            div -= (T)1;                                                                  \
        T fl;                                                                             \
        if (div != (T)0) {                                                                \
            fl = floor##F(div);                                                           \
            if ((T)2 * (div - fl) > (T)1) /* more than half: exact in binary */          \
                fl += (T)1;                                                               \
        } else {                                                                          \
            fl = copysign##F((T)0, a / b);                                                \
        }                                                                                 \
        return fl;                                                                        \
    }

#define LT_EWMATH_STR(...) #__VA_ARGS__
#define LT_EWMATH_XSTR(...) LT_EWMATH_STR(__VA_ARGS__)

/* The source text for the generated code (one line; needs <math.h>). */
#define LT_EWMATH_SOURCE LT_EWMATH_XSTR(LT_EWMATH_FUNS(float, f) LT_EWMATH_FUNS(double, ))

LT_EWMATH_FUNS(float, f)
LT_EWMATH_FUNS(double, )

#endif
