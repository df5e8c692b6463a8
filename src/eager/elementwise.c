/*
 * elementwise.c - eager kernels of the unary, binary and ternary
 * elementwise ops (everything of class UNARY/BINARY/TERNARY but cast).
 *
 * How a kernel runs:
 *  1. It picks the working dtype W: the result dtype for arithmetic ops, the
 *     promoted input dtype for comparisons and logical ops. bf16/f16 work in
 *     f32 (their results go through an f32 temporary).
 *  2. Inputs of another dtype are converted to W (cheap for 0-d scalars).
 *  3. Integer remainder, fmod and floor_divide check their divisor first,
 *     so an error leaves the output untouched.
 *  4. The strided iterator runs a typed inner loop. Every inner loop has a
 *     dense path (a plain indexed loop that gcc vectorizes), paths for an
 *     input broadcast with stride 0, and a generic strided path.
 *
 * The per-element semantics live in small inline functions <op>_<dtype>
 * (below); macros stamp out one inner loop per (op, dtype). Integer add,
 * sub, mul, neg and pow compute in the unsigned type so that overflow wraps
 * (as in PyTorch) instead of being undefined behaviour. An output may alias
 * input 0 exactly (in-place ops): every loop computes out[i] from in[i] of
 * the same index only.
 */
#include "eager/eager.h"
#include "eager/ewmath.h"
#include "eager/fastmath.h"

#include <math.h>
#include <stdatomic.h>

/* Scalar attributes, pre-converted for each working dtype. */
typedef struct ew_ctx {
    float alpha_f32, lo_f32, hi_f32;
    double alpha_f64, lo_f64, hi_f64;
    uint32_t alpha_i32; /* integer alphas are unsigned: wrapping arithmetic */
    int32_t lo_i32, hi_i32;
    uint64_t alpha_i64;
    int64_t lo_i64, hi_i64;
    uint8_t alpha_u8, lo_u8, hi_u8;
    bool alpha_b8;
    float p_f32[3]; /* attributes of softplus, elu, leaky_relu */
    double p_f64[3];
} ew_ctx;

/* ==== per-element functions ============================================== */

#define UNARY(name, sfx, T, expr) \
    static inline T name##_##sfx(T x, const ew_ctx *c) { (void)c; return (expr); }
#define BINARY(name, sfx, T, expr) \
    static inline T name##_##sfx(T a, T b, const ew_ctx *c) { (void)c; return (expr); }
#define PREDICATE(name, sfx, T, expr) \
    static inline bool name##_##sfx(T a, T b, const ew_ctx *c) { (void)c; return (expr); }

/* x < lo -> lo, x > hi -> hi; NaN stays NaN (lo <= hi is guaranteed). */
#define CLAMP_EXPR(sfx) (x < c->lo_##sfx ? c->lo_##sfx : x > c->hi_##sfx ? c->hi_##sfx : x)

/* Comparisons and logical ops: the same expression for every dtype. */
#define DEF_PREDICATES(sfx, T)                                   \
    PREDICATE(eq, sfx, T, a == b)                                \
    PREDICATE(ne, sfx, T, a != b)                                \
    PREDICATE(lt, sfx, T, a < b)                                 \
    PREDICATE(le, sfx, T, a <= b)                                \
    PREDICATE(gt, sfx, T, a > b)                                 \
    PREDICATE(ge, sfx, T, a >= b)                                \
    PREDICATE(logical_and, sfx, T, (a != 0) & (b != 0))          \
    PREDICATE(logical_or, sfx, T, (a != 0) | (b != 0))           \
    static inline bool logical_not_##sfx(T x, const ew_ctx *c)   \
    {                                                            \
        (void)c;                                                 \
        return x == 0;                                           \
    }                                                            \
    /* x - x is 0 exactly for finite x, NaN for inf and NaN (the \
     * generated code uses the same tests) */                   \
    static inline bool is_nan_##sfx(T x, const ew_ctx *c)        \
    {                                                            \
        (void)c;                                                 \
        return x != x;                                           \
    }                                                            \
    static inline bool is_inf_##sfx(T x, const ew_ctx *c)        \
    {                                                            \
        (void)c;                                                 \
        return x - x != 0 && x == x;                             \
    }                                                            \
    static inline bool is_finite_##sfx(T x, const ew_ctx *c)     \
    {                                                            \
        (void)c;                                                 \
        return x - x == 0;                                       \
    }

/* ---- floating point: f32 (libm's *f functions) and f64 ---- */
#define M_f32(fn) fn##f
#define M_f64(fn) fn
/* exp and erf: f32 uses fastmath.h's vectorizable versions, the very code
 * the compiler pastes into generated kernels (lazy == eager, bit for bit) */
#define X_f32(fn) lt_##fn##f
#define X_f64(fn) fn
#define DEF_FLOAT(sfx, T)                                                                 \
    UNARY(neg, sfx, T, -x)                                                                \
    UNARY(abs, sfx, T, M_##sfx(fabs)(x))                                                  \
    UNARY(exp, sfx, T, X_##sfx(exp)(x))                                                   \
    UNARY(log, sfx, T, M_##sfx(log)(x))                                                   \
    UNARY(log1p, sfx, T, M_##sfx(log1p)(x))                                               \
    UNARY(expm1, sfx, T, M_##sfx(expm1)(x))                                               \
    UNARY(sqrt, sfx, T, M_##sfx(sqrt)(x))                                                 \
    UNARY(rsqrt, sfx, T, (T)1 / M_##sfx(sqrt)(x))                                         \
    UNARY(sin, sfx, T, M_##sfx(sin)(x))                                                   \
    UNARY(cos, sfx, T, M_##sfx(cos)(x))                                                   \
    UNARY(tanh, sfx, T, M_##sfx(tanh)(x))                                                 \
    UNARY(sigmoid, sfx, T, (T)1 / ((T)1 + X_##sfx(exp)(-x)))                              \
    UNARY(relu, sfx, T, x <= 0 ? (T)0 : x) /* NaN stays NaN, -0 gives +0 */               \
    UNARY(gelu, sfx, T, x * (T)0.5 * ((T)1 + X_##sfx(erf)(x * (T)0.70710678118654752440))) \
    UNARY(silu, sfx, T, x / ((T)1 + X_##sfx(exp)(-x)))                                    \
    UNARY(erf, sfx, T, X_##sfx(erf)(x))                                                   \
    UNARY(sign, sfx, T, (T)((x > 0) - (x < 0))) /* NaN gives 0, like torch */             \
    UNARY(floor, sfx, T, M_##sfx(floor)(x))                                               \
    UNARY(ceil, sfx, T, M_##sfx(ceil)(x))                                                 \
    UNARY(round, sfx, T, M_##sfx(rint)(x)) /* default rounding mode: half to even */      \
    UNARY(reciprocal, sfx, T, (T)1 / x)                                                   \
    UNARY(clamp, sfx, T, CLAMP_EXPR(sfx))                                                 \
    UNARY(tan, sfx, T, M_##sfx(tan)(x))                                                   \
    UNARY(asin, sfx, T, M_##sfx(asin)(x))                                                 \
    UNARY(acos, sfx, T, M_##sfx(acos)(x))                                                 \
    UNARY(atan, sfx, T, M_##sfx(atan)(x))                                                 \
    UNARY(sinh, sfx, T, M_##sfx(sinh)(x))                                                 \
    UNARY(cosh, sfx, T, M_##sfx(cosh)(x))                                                 \
    UNARY(asinh, sfx, T, M_##sfx(asinh)(x))                                               \
    UNARY(acosh, sfx, T, M_##sfx(acosh)(x))                                               \
    UNARY(atanh, sfx, T, M_##sfx(atanh)(x))                                               \
    UNARY(log2, sfx, T, M_##sfx(log2)(x))                                                 \
    UNARY(log10, sfx, T, M_##sfx(log10)(x))                                               \
    UNARY(exp2, sfx, T, M_##sfx(exp2)(x))                                                 \
    UNARY(trunc, sfx, T, M_##sfx(trunc)(x))                                               \
    UNARY(frac, sfx, T, M_##sfx(ltm_frac)(x))                                              \
    UNARY(softplus, sfx, T, M_##sfx(ltm_softplus)(x, c->p_##sfx[0], c->p_##sfx[1]))       \
    UNARY(mish, sfx, T, M_##sfx(ltm_mish)(x))                                              \
    UNARY(logsigmoid, sfx, T, M_##sfx(ltm_logsigmoid)(x))                                  \
    UNARY(softsign, sfx, T, M_##sfx(ltm_softsign)(x))                                      \
    UNARY(elu, sfx, T, M_##sfx(ltm_elu)(x, c->p_##sfx[0], c->p_##sfx[1], c->p_##sfx[2]))   \
    UNARY(leaky_relu, sfx, T, M_##sfx(ltm_leaky_relu)(x, c->p_##sfx[0]))                   \
    UNARY(hardsigmoid, sfx, T, M_##sfx(ltm_hardsigmoid)(x))                                \
    UNARY(hardswish, sfx, T, M_##sfx(ltm_hardswish)(x))                                    \
    UNARY(gelu_tanh, sfx, T, M_##sfx(ltm_gelu_tanh)(x))                                    \
    BINARY(atan2, sfx, T, M_##sfx(atan2)(a, b))                                           \
    BINARY(hypot, sfx, T, M_##sfx(hypot)(a, b))                                           \
    BINARY(copysign, sfx, T, M_##sfx(copysign)(a, b))                                     \
    BINARY(xlogy, sfx, T, M_##sfx(ltm_xlogy)(a, b))                                        \
    BINARY(logaddexp, sfx, T, M_##sfx(ltm_logaddexp)(a, b))                                \
    BINARY(fmod, sfx, T, M_##sfx(fmod)(a, b))                                             \
    BINARY(floor_divide, sfx, T, M_##sfx(ltm_floor_divide)(a, b))                          \
    BINARY(add, sfx, T, a + b)                                                            \
    BINARY(adds, sfx, T, a + c->alpha_##sfx * b)                                          \
    BINARY(sub, sfx, T, a - b)                                                            \
    BINARY(subs, sfx, T, a - c->alpha_##sfx * b)                                          \
    BINARY(mul, sfx, T, a * b)                                                            \
    BINARY(div, sfx, T, a / b)                                                            \
    BINARY(pow, sfx, T, M_##sfx(pow)(a, b))                                               \
    BINARY(maximum, sfx, T, (a != a || a > b) ? a : b) /* NaN wins */                     \
    BINARY(minimum, sfx, T, (a != a || a < b) ? a : b)                                    \
    static inline T remainder_##sfx(T a, T b, const ew_ctx *c)                            \
    {                                                                                     \
        (void)c;                                                                          \
        T r = M_##sfx(fmod)(a, b);                                                        \
        if (r != 0 && ((r < 0) != (b < 0)))                                               \
            r += b; /* Python style: the sign of the divisor */                           \
        return r;                                                                         \
    }                                                                                     \
    DEF_PREDICATES(sfx, T)

DEF_FLOAT(f32, float)
DEF_FLOAT(f64, double)

/* ---- signed integers (i32, i64); U is the unsigned type of T ---- */
#define DEF_SIGNED(sfx, T, U)                                                        \
    UNARY(neg, sfx, T, (T)((U)0 - (U)x))                                             \
    UNARY(abs, sfx, T, x < 0 ? (T)((U)0 - (U)x) : x) /* abs(MIN) wraps to MIN */      \
    UNARY(relu, sfx, T, x < 0 ? 0 : x)                                               \
    UNARY(sign, sfx, T, (T)((x > 0) - (x < 0)))                                      \
    UNARY(floor, sfx, T, x)                                                          \
    UNARY(ceil, sfx, T, x)                                                           \
    UNARY(round, sfx, T, x)                                                          \
    UNARY(clamp, sfx, T, CLAMP_EXPR(sfx))                                            \
    BINARY(add, sfx, T, (T)((U)a + (U)b))                                            \
    BINARY(adds, sfx, T, (T)((U)a + c->alpha_##sfx * (U)b))                          \
    BINARY(sub, sfx, T, (T)((U)a - (U)b))                                            \
    BINARY(subs, sfx, T, (T)((U)a - c->alpha_##sfx * (U)b))                          \
    BINARY(mul, sfx, T, (T)((U)a * (U)b))                                            \
    BINARY(maximum, sfx, T, a > b ? a : b)                                           \
    BINARY(minimum, sfx, T, a < b ? a : b)                                           \
    UNARY(trunc, sfx, T, x)                                                          \
    UNARY(bitwise_not, sfx, T, (T)~(U)x)                                             \
    BINARY(bitwise_and, sfx, T, (T)((U)a & (U)b))                                    \
    BINARY(bitwise_or, sfx, T, (T)((U)a | (U)b))                                     \
    BINARY(bitwise_xor, sfx, T, (T)((U)a ^ (U)b))                                    \
    /* shifts by >= the width (or < 0) give 0, or the sign for >> (torch) */        \
    BINARY(shift_left, sfx, T, (U)b >= 8 * sizeof(T) ? 0 : (T)((U)a << (U)b))        \
    BINARY(shift_right, sfx, T, (U)b >= 8 * sizeof(T) ? (T)(a < 0 ? -1 : 0) : (T)(a >> b)) \
    /* b != 0 is checked before the loop; b == -1 avoids MIN % -1 (UB) */            \
    BINARY(fmod, sfx, T, b == 0 || b == -1 ? 0 : a % b)                              \
    static inline T floor_divide_##sfx(T a, T b, const ew_ctx *c)                    \
    {                                                                                \
        (void)c;                                                                     \
        if (b == 0)                                                                  \
            return 0;                                                                \
        if (b == -1)                                                                 \
            return (T)((U)0 - (U)a); /* MIN / -1 wraps, as in torch */              \
        T q = a / b;                                                                 \
        return (a % b != 0 && ((a < 0) != (b < 0))) ? q - 1 : q;                     \
    }                                                                                \
    /* a negative exponent gives 1 / a^-b truncated: 0, or +-1 for a = +-1 */      \
    static inline T pow_##sfx(T a, T b, const ew_ctx *c)                             \
    {                                                                                \
        (void)c;                                                                     \
        if (b < 0)                                                                   \
            return a == 1 ? 1 : a == -1 ? ((b & 1) ? -1 : 1) : 0;                    \
        U base = (U)a, result = 1;                                                   \
        for (uint64_t e = b > 0 ? (uint64_t)b : 0; e; e >>= 1) {                     \
            if (e & 1)                                                               \
                result *= base;                                                      \
            base *= base;                                                            \
        }                                                                            \
        return (T)result;                                                            \
    }                                                                                \
    /* b != 0 is checked before the loop; b == -1 avoids MIN % -1 (UB) */            \
    static inline T remainder_##sfx(T a, T b, const ew_ctx *c)                       \
    {                                                                                \
        (void)c;                                                                     \
        if (b == 0 || b == -1)                                                       \
            return 0;                                                                \
        T r = a % b;                                                                 \
        if (r != 0 && ((r < 0) != (b < 0)))                                          \
            r += b;                                                                  \
        return r;                                                                    \
    }                                                                                \
    DEF_PREDICATES(sfx, T)

DEF_SIGNED(i32, int32_t, uint32_t)
DEF_SIGNED(i64, int64_t, uint64_t)

/* ---- u8: arithmetic promotes to int, which cannot overflow here; the
 *      conversion back to uint8_t wraps (well defined for unsigned) ---- */
UNARY(neg, u8, uint8_t, (uint8_t)(0u - x))
UNARY(abs, u8, uint8_t, x)
UNARY(relu, u8, uint8_t, x)
UNARY(sign, u8, uint8_t, x != 0)
UNARY(floor, u8, uint8_t, x)
UNARY(ceil, u8, uint8_t, x)
UNARY(round, u8, uint8_t, x)
UNARY(clamp, u8, uint8_t, CLAMP_EXPR(u8))
BINARY(add, u8, uint8_t, (uint8_t)(a + b))
BINARY(adds, u8, uint8_t, (uint8_t)(a + c->alpha_u8 * b))
BINARY(sub, u8, uint8_t, (uint8_t)(a - b))
BINARY(subs, u8, uint8_t, (uint8_t)(a - c->alpha_u8 * b))
BINARY(mul, u8, uint8_t, (uint8_t)(a * b))
BINARY(maximum, u8, uint8_t, a > b ? a : b)
BINARY(minimum, u8, uint8_t, a < b ? a : b)
BINARY(remainder, u8, uint8_t, b == 0 ? 0 : a % b)
UNARY(trunc, u8, uint8_t, x)
UNARY(bitwise_not, u8, uint8_t, (uint8_t)~x)
BINARY(bitwise_and, u8, uint8_t, a & b)
BINARY(bitwise_or, u8, uint8_t, a | b)
BINARY(bitwise_xor, u8, uint8_t, a ^ b)
BINARY(shift_left, u8, uint8_t, b >= 8 ? 0 : (uint8_t)(a << b))
BINARY(shift_right, u8, uint8_t, b >= 8 ? 0 : a >> b)
BINARY(fmod, u8, uint8_t, b == 0 ? 0 : a % b)
BINARY(floor_divide, u8, uint8_t, b == 0 ? 0 : a / b)
static inline uint8_t pow_u8(uint8_t a, uint8_t b, const ew_ctx *c)
{
    (void)c;
    unsigned base = a, result = 1;
    for (unsigned e = b; e; e >>= 1) {
        if (e & 1)
            result = (result * base) & 0xffu;
        base = (base * base) & 0xffu;
    }
    return (uint8_t)result;
}
DEF_PREDICATES(u8, uint8_t)

/* ---- bool: add is "or", mul is "and" (as in PyTorch) ---- */
UNARY(abs, b8, bool, x)
UNARY(sign, b8, bool, x)
UNARY(relu, b8, bool, x)
UNARY(floor, b8, bool, x)
UNARY(ceil, b8, bool, x)
UNARY(round, b8, bool, x)
BINARY(add, b8, bool, a | b)
BINARY(adds, b8, bool, a | (c->alpha_b8 & b))
BINARY(mul, b8, bool, a & b)
BINARY(pow, b8, bool, a | !b)
BINARY(maximum, b8, bool, a | b)
BINARY(minimum, b8, bool, a & b)
UNARY(bitwise_not, b8, bool, !x)
BINARY(bitwise_and, b8, bool, a & b)
BINARY(bitwise_or, b8, bool, a | b)
BINARY(bitwise_xor, b8, bool, a ^ b)
DEF_PREDICATES(b8, bool)

/* ==== inner loops ========================================================= */

/* out = F(in) for F = name_sfx; TO/TI are the output/input C types. */
#define DEF_UNARY_LOOP(name, sfx, TO, TI)                                                   \
    static void loop_##name##_##sfx(int64_t n, char **p, const int64_t *s, const void *vc) \
    {                                                                                       \
        const ew_ctx c = *(const ew_ctx *)vc;                                               \
        if (s[0] == (int64_t)sizeof(TO) && s[1] == (int64_t)sizeof(TI)) {                   \
            TO *o = (TO *)p[0];                                                             \
            const TI *x = (const TI *)p[1];                                                 \
            for (int64_t k = 0; k < n; k++)                                                 \
                o[k] = name##_##sfx(x[k], &c);                                              \
        } else if (s[0] == (int64_t)sizeof(TO) && s[1] == 0) {                              \
            TO *o = (TO *)p[0];                                                             \
            const TO v = name##_##sfx(*(const TI *)p[1], &c);                               \
            for (int64_t k = 0; k < n; k++)                                                 \
                o[k] = v;                                                                   \
        } else {                                                                            \
            for (int64_t k = 0; k < n; k++)                                                 \
                *(TO *)(p[0] + k * s[0]) = name##_##sfx(*(const TI *)(p[1] + k * s[1]), &c); \
        }                                                                                   \
    }

/* out = F(a, b). */
#define DEF_BINARY_LOOP(name, sfx, TO, TI)                                                  \
    static void loop_##name##_##sfx(int64_t n, char **p, const int64_t *s, const void *vc) \
    {                                                                                       \
        const ew_ctx c = *(const ew_ctx *)vc;                                               \
        const int64_t so = (int64_t)sizeof(TO), si = (int64_t)sizeof(TI);                  \
        TO *o = (TO *)p[0];                                                                 \
        const TI *x = (const TI *)p[1], *y = (const TI *)p[2];                              \
        if (s[0] == so && s[1] == si && s[2] == si) {                                       \
            for (int64_t k = 0; k < n; k++)                                                 \
                o[k] = name##_##sfx(x[k], y[k], &c);                                        \
        } else if (s[0] == so && s[1] == si && s[2] == 0) {                                 \
            const TI b = *y;                                                                \
            for (int64_t k = 0; k < n; k++)                                                 \
                o[k] = name##_##sfx(x[k], b, &c);                                           \
        } else if (s[0] == so && s[1] == 0 && s[2] == si) {                                 \
            const TI a = *x;                                                                \
            for (int64_t k = 0; k < n; k++)                                                 \
                o[k] = name##_##sfx(a, y[k], &c);                                           \
        } else {                                                                            \
            for (int64_t k = 0; k < n; k++)                                                 \
                *(TO *)(p[0] + k * s[0]) = name##_##sfx(*(const TI *)(p[1] + k * s[1]),     \
                                                        *(const TI *)(p[2] + k * s[2]), &c); \
        }                                                                                   \
    }

/* out = cond ? a : b, on raw storage words of `bits` bits. */
#define DEF_WHERE_LOOP(bits)                                                               \
    static void loop_where_##bits(int64_t n, char **p, const int64_t *s, const void *vc)  \
    {                                                                                      \
        (void)vc;                                                                          \
        typedef uint##bits##_t T;                                                          \
        const int64_t w = (int64_t)sizeof(T);                                              \
        T *o = (T *)p[0];                                                                  \
        const uint8_t *m = (const uint8_t *)p[1]; /* bools as bytes: gcc vectorizes */     \
        const T *x = (const T *)p[2], *y = (const T *)p[3];                                \
        if (s[0] == w && s[1] == 1 && s[2] == w && s[3] == w) {                            \
            for (int64_t k = 0; k < n; k++) {                                              \
                const T a = x[k], b = y[k]; /* unconditional loads vectorize */            \
                o[k] = m[k] ? a : b;                                                       \
            }                                                                              \
        } else if (s[0] == w && s[1] == 1 && s[2] == w && s[3] == 0) {                     \
            const T b = *y;                                                                \
            for (int64_t k = 0; k < n; k++) {                                              \
                const T a = x[k];                                                          \
                o[k] = m[k] ? a : b;                                                       \
            }                                                                              \
        } else if (s[0] == w && s[1] == 1 && s[2] == 0 && s[3] == 0) {                     \
            const T a = *x, b = *y;                                                        \
            for (int64_t k = 0; k < n; k++)                                                \
                o[k] = m[k] ? a : b;                                                       \
        } else {                                                                           \
            for (int64_t k = 0; k < n; k++)                                                \
                *(T *)(p[0] + k * s[0]) = *(const uint8_t *)(p[1] + k * s[1])              \
                                              ? *(const T *)(p[2] + k * s[2])              \
                                              : *(const T *)(p[3] + k * s[3]);             \
        }                                                                                  \
    }

DEF_WHERE_LOOP(8)
DEF_WHERE_LOOP(16)
DEF_WHERE_LOOP(32)
DEF_WHERE_LOOP(64)

/* ---- every (op, working dtype) pair: X(ID, name, sfx) ---- */

/* add/sub with an alpha other than 1 have their own loops, stored in two
 * extra rows of the loop table. */
#define LT_OP_ADD_SCALED ((int)LT_OP_COUNT)
#define LT_OP_SUB_SCALED ((int)LT_OP_COUNT + 1)

#define FLOAT_UNARY_OPS(X, sfx)                                                            \
    X(NEG, neg, sfx) X(ABS, abs, sfx) X(EXP, exp, sfx) X(LOG, log, sfx) X(LOG1P, log1p, sfx) \
    X(EXPM1, expm1, sfx) X(SQRT, sqrt, sfx) X(RSQRT, rsqrt, sfx) X(SIN, sin, sfx)            \
    X(COS, cos, sfx) X(TANH, tanh, sfx) X(SIGMOID, sigmoid, sfx) X(RELU, relu, sfx)          \
    X(GELU, gelu, sfx) X(SILU, silu, sfx) X(ERF, erf, sfx) X(SIGN, sign, sfx)                \
    X(FLOOR, floor, sfx) X(CEIL, ceil, sfx) X(ROUND, round, sfx)                             \
    X(RECIPROCAL, reciprocal, sfx) X(CLAMP, clamp, sfx)                                      \
    X(TAN, tan, sfx) X(ASIN, asin, sfx) X(ACOS, acos, sfx) X(ATAN, atan, sfx) X(SINH, sinh, sfx) \
    X(COSH, cosh, sfx) X(ASINH, asinh, sfx) X(ACOSH, acosh, sfx) X(ATANH, atanh, sfx)        \
    X(LOG2, log2, sfx) X(LOG10, log10, sfx) X(EXP2, exp2, sfx) X(TRUNC, trunc, sfx)          \
    X(FRAC, frac, sfx) X(SOFTPLUS, softplus, sfx) X(MISH, mish, sfx)                         \
    X(LOGSIGMOID, logsigmoid, sfx) X(SOFTSIGN, softsign, sfx) X(ELU, elu, sfx)               \
    X(LEAKY_RELU, leaky_relu, sfx) X(HARDSIGMOID, hardsigmoid, sfx)                          \
    X(HARDSWISH, hardswish, sfx) X(GELU_TANH, gelu_tanh, sfx)
#define INT_UNARY_OPS(X, sfx)                                                                \
    X(NEG, neg, sfx) X(ABS, abs, sfx) X(RELU, relu, sfx) X(SIGN, sign, sfx)                  \
    X(FLOOR, floor, sfx) X(CEIL, ceil, sfx) X(ROUND, round, sfx) X(CLAMP, clamp, sfx)        \
    X(TRUNC, trunc, sfx) X(BITWISE_NOT, bitwise_not, sfx)
#define BOOL_UNARY_OPS(X, sfx) \
    X(ABS, abs, sfx) X(RELU, relu, sfx) X(FLOOR, floor, sfx) X(CEIL, ceil, sfx) X(ROUND, round, sfx) \
    X(BITWISE_NOT, bitwise_not, sfx) X(SIGN, sign, sfx)
#define COMMON_BINARY_OPS(X, sfx)                                                            \
    X(ADD, add, sfx) X(SUB, sub, sfx) X(MUL, mul, sfx) X(POW, pow, sfx)                      \
    X(MAXIMUM, maximum, sfx) X(MINIMUM, minimum, sfx) X(REMAINDER, remainder, sfx)           \
    X(ADD_SCALED, adds, sfx) X(SUB_SCALED, subs, sfx) X(FMOD, fmod, sfx)                     \
    X(FLOOR_DIVIDE, floor_divide, sfx)
#define INT_BINARY_OPS(X, sfx)                                                               \
    COMMON_BINARY_OPS(X, sfx) X(BITWISE_AND, bitwise_and, sfx) X(BITWISE_OR, bitwise_or, sfx) \
    X(BITWISE_XOR, bitwise_xor, sfx) X(SHIFT_LEFT, shift_left, sfx) X(SHIFT_RIGHT, shift_right, sfx)
#define FLOAT_BINARY_OPS(X, sfx)                                                             \
    COMMON_BINARY_OPS(X, sfx) X(DIV, div, sfx) X(ATAN2, atan2, sfx) X(HYPOT, hypot, sfx)     \
    X(COPYSIGN, copysign, sfx) X(XLOGY, xlogy, sfx) X(LOGADDEXP, logaddexp, sfx)
#define BOOL_BINARY_OPS(X, sfx)                                                              \
    X(ADD, add, sfx) X(MUL, mul, sfx) X(POW, pow, sfx) X(MAXIMUM, maximum, sfx)              \
    X(MINIMUM, minimum, sfx) X(ADD_SCALED, adds, sfx) X(BITWISE_AND, bitwise_and, sfx)       \
    X(BITWISE_OR, bitwise_or, sfx) X(BITWISE_XOR, bitwise_xor, sfx)
/* bool results */
#define PREDICATE_OPS(X, sfx)                                                               \
    X(EQ, eq, sfx) X(NE, ne, sfx) X(LT, lt, sfx) X(LE, le, sfx) X(GT, gt, sfx) X(GE, ge, sfx) \
    X(LOGICAL_AND, logical_and, sfx) X(LOGICAL_OR, logical_or, sfx)

/* unary, bool results */
#define TEST_OPS(X, sfx) \
    X(LOGICAL_NOT, logical_not, sfx) X(ISNAN, is_nan, sfx) X(ISINF, is_inf, sfx) X(ISFINITE, is_finite, sfx)

/* All loops, given a macro per kind: U unary, B binary, P binary with a
 * bool result, N unary with a bool result. */
#define LOOPS_OF(UNARY_OPS, BINARY_OPS, U, B, P, N, sfx) \
    UNARY_OPS(U, sfx) BINARY_OPS(B, sfx) PREDICATE_OPS(P, sfx) TEST_OPS(N, sfx)
#define ALL_LOOPS(U, B, P, N)                                           \
    LOOPS_OF(FLOAT_UNARY_OPS, FLOAT_BINARY_OPS, U, B, P, N, f32)        \
    LOOPS_OF(FLOAT_UNARY_OPS, FLOAT_BINARY_OPS, U, B, P, N, f64)        \
    LOOPS_OF(INT_UNARY_OPS, INT_BINARY_OPS, U, B, P, N, i32)            \
    LOOPS_OF(INT_UNARY_OPS, INT_BINARY_OPS, U, B, P, N, i64)            \
    LOOPS_OF(INT_UNARY_OPS, INT_BINARY_OPS, U, B, P, N, u8)             \
    LOOPS_OF(BOOL_UNARY_OPS, BOOL_BINARY_OPS, U, B, P, N, b8)

#define UNARY_LOOP(ID, name, sfx) DEF_UNARY_LOOP(name, sfx, LT_CTYPE_##sfx, LT_CTYPE_##sfx)
#define BINARY_LOOP(ID, name, sfx) DEF_BINARY_LOOP(name, sfx, LT_CTYPE_##sfx, LT_CTYPE_##sfx)
#define PREDICATE_LOOP(ID, name, sfx) DEF_BINARY_LOOP(name, sfx, bool, LT_CTYPE_##sfx)
#define NOT_LOOP(ID, name, sfx) DEF_UNARY_LOOP(name, sfx, bool, LT_CTYPE_##sfx)
ALL_LOOPS(UNARY_LOOP, BINARY_LOOP, PREDICATE_LOOP, NOT_LOOP)

/* ---- the loop table, filled once at registration ---- */

#define DT_f32 LT_F32
#define DT_f64 LT_F64
#define DT_i32 LT_I32
#define DT_i64 LT_I64
#define DT_u8 LT_U8
#define DT_b8 LT_BOOL

static lt_loop_fn loops[LT_OP_COUNT + 2][LT_NUM_DTYPES];

static void fill_loop_table(void)
{
#define SET(ID, name, sfx) loops[LT_OP_##ID][DT_##sfx] = loop_##name##_##sfx;
    ALL_LOOPS(SET, SET, SET, SET)
#undef SET
}

/* ==== kernels ============================================================== */

static bool returns_bool(lt_op op)
{
    switch (op) {
    case LT_OP_EQ: case LT_OP_NE: case LT_OP_LT: case LT_OP_LE: case LT_OP_GT: case LT_OP_GE:
    case LT_OP_LOGICAL_AND: case LT_OP_LOGICAL_OR: case LT_OP_LOGICAL_NOT:
    case LT_OP_ISNAN: case LT_OP_ISINF: case LT_OP_ISFINITE:
        return true;
    default:
        return false;
    }
}

static lt_dtype widen_half(lt_dtype dt) { return dt == LT_BF16 || dt == LT_F16 ? LT_F32 : dt; }

/* The dtype the inner loop computes in: the result dtype, or for ops with a
 * bool result the promoted input dtype. */
static lt_dtype working_dtype(lt_op op, lt_tensor *const *in, int nin, lt_dtype result)
{
    if (!returns_bool(op))
        return widen_half(result);
    lt_meta m[2];
    for (int i = 0; i < nin; i++)
        m[i] = lt_tensor_meta(in[i]);
    return widen_half(lt_result_type(m, nin));
}

static lt_loop_fn find_loop(lt_op op, lt_dtype work, const lt_attrs *a)
{
    bool scaled = a->nf > 0 && a->f[0] != 1.0;
    if (op == LT_OP_ADD && scaled)
        return loops[LT_OP_ADD_SCALED][work];
    if (op == LT_OP_SUB && scaled)
        return loops[LT_OP_SUB_SCALED][work];
    return loops[op][work];
}

/* A clamp bound for an integer dtype with range [min, max]: the lower bound
 * rounds up, the upper one down, both saturate. */
static int64_t int_bound(double v, bool lower, int64_t min, int64_t max)
{
    if (isnan(v))
        return lower ? min : max;
    if (v <= (double)min)
        return min;
    if (v >= (double)max)
        return max;
    return (int64_t)(lower ? ceil(v) : floor(v));
}

static void ctx_init(ew_ctx *c, lt_op op, const lt_attrs *a)
{
    double alpha = (op == LT_OP_ADD || op == LT_OP_SUB) && a->nf > 0 ? a->f[0] : 1.0;
    /* inference guarantees an integral alpha for integer results */
    int64_t ialpha = alpha > -9.2e18 && alpha < 9.2e18 ? (int64_t)alpha : 0;
    c->alpha_f32 = (float)alpha;
    c->alpha_f64 = alpha;
    c->alpha_i32 = (uint32_t)(uint64_t)ialpha;
    c->alpha_i64 = (uint64_t)ialpha;
    c->alpha_u8 = (uint8_t)(uint64_t)ialpha;
    c->alpha_b8 = alpha != 0;

    double lo = op == LT_OP_CLAMP ? a->f[0] : -INFINITY;
    double hi = op == LT_OP_CLAMP ? a->f[1] : INFINITY;
    c->lo_f32 = (float)lo;
    c->hi_f32 = (float)hi;
    c->lo_f64 = lo;
    c->hi_f64 = hi;
    /* when no integer lies in [lo, hi], every value becomes hi (as with
     * min(max(x, lo), hi)) */
    c->hi_i32 = (int32_t)int_bound(hi, false, INT32_MIN, INT32_MAX);
    c->lo_i32 = (int32_t)int_bound(lo, true, INT32_MIN, c->hi_i32);
    c->hi_i64 = int_bound(hi, false, INT64_MIN, INT64_MAX);
    c->lo_i64 = int_bound(lo, true, INT64_MIN, c->hi_i64);
    c->hi_u8 = (uint8_t)int_bound(hi, false, 0, UINT8_MAX);
    c->lo_u8 = (uint8_t)int_bound(lo, true, 0, c->hi_u8);
    for (int k = 0; k < 3; k++) {
        double v = k < a->nf ? a->f[k] : 0.0;
        c->p_f32[k] = (float)v;
        c->p_f64[k] = v;
    }
}

/* ---- operand checks of integer remainder and pow ---- */

#define DEF_SCAN(what, sfx, T, cond)                                                       \
    static void scan_##what##_##sfx(int64_t n, char **p, const int64_t *s, const void *vc) \
    {                                                                                      \
        bool hit = false;                                                                  \
        for (int64_t k = 0; k < n; k++) {                                                  \
            T v = *(const T *)(p[0] + k * s[0]);                                           \
            hit |= (cond);                                                                 \
        }                                                                                  \
        if (hit)                                                                           \
            atomic_store((atomic_bool *)vc, true);                                         \
    }
DEF_SCAN(zero, i32, int32_t, v == 0)
DEF_SCAN(zero, i64, int64_t, v == 0)
DEF_SCAN(zero, u8, uint8_t, v == 0)

/* True when scan finds its condition in some element of t. */
static bool any_element(lt_tensor *t, lt_loop_fn scan)
{
    lt_iter it;
    lt_iter_build(&it, t, NULL, 0);
    atomic_bool found;
    atomic_init(&found, false);
    lt_iter_run(&it, scan, &found);
    return atomic_load(&found);
}

/* Integer remainder, fmod and floor_divide by zero are errors (checked
 * before anything is written). */
static lt_status check_operands(lt_op op, lt_dtype work, lt_tensor *second)
{
    lt_loop_fn scan = NULL;
    if (op == LT_OP_REMAINDER || op == LT_OP_FMOD || op == LT_OP_FLOOR_DIVIDE)
        scan = work == LT_I32   ? scan_zero_i32
               : work == LT_I64 ? scan_zero_i64
               : work == LT_U8  ? scan_zero_u8
                                : NULL;
    if (!scan || !any_element(second, scan))
        return LT_OK;
    return lt_error(LT_ERR_ARGUMENT, "%s: integer division by zero", lt_op_name(op));
}

/* ---- inputs converted to the working dtype ---- */

typedef struct ew_inputs {
    lt_tensor *t[3];
    bool owned[3]; /* a converted copy this kernel must release */
    int n;
} ew_inputs;

static void inputs_release(ew_inputs *x)
{
    for (int i = 0; i < x->n; i++)
        if (x->owned[i])
            lt_tensor_unref(x->t[i]);
}

/* Converts in[first..nin) to dtype work where they differ (in[0] of where,
 * the condition, stays as it is). */
static lt_status inputs_convert(ew_inputs *x, lt_tensor *const *in, int nin, int first, lt_dtype work,
                                const char *name)
{
    for (int i = 0; i < nin; i++) {
        x->n = i;
        x->t[i] = in[i];
        x->owned[i] = false;
        if (i < first || in[i]->dtype == (int32_t)work)
            continue;
        x->t[i] = lt_eager_as_contiguous(in[i], work, name);
        if (!x->t[i]) {
            inputs_release(x);
            x->n = 0;
            return lt_last_status();
        }
        x->owned[i] = true;
    }
    x->n = nin;
    return LT_OK;
}

/* Every unary and binary op. */
static lt_status k_elementwise(lt_op op, lt_tensor *const *in, int nin, const lt_attrs *a,
                               const lt_meta *om, lt_tensor **out)
{
    const char *name = lt_op_name(op);
    lt_dtype work = working_dtype(op, in, nin, (lt_dtype)om[0].dtype);
    lt_loop_fn fn = find_loop(op, work, a);
    if (!fn)
        return lt_error(LT_ERR_DTYPE, "%s: dtype %s is not supported", name, lt_dtype_name(work));
    ew_inputs x;
    lt_status st = inputs_convert(&x, in, nin, 0, work, name);
    int64_t numel = lt_shape_numel(out[0]->shape, out[0]->ndim);
    if (st == LT_OK && nin == 2 && numel > 0) /* an empty result divides nothing */
        st = check_operands(op, work, x.t[1]);
    /* bf16/f16 results are computed into an f32 temporary */
    lt_dtype loop_out = returns_bool(op) ? LT_BOOL : work;
    lt_tensor *dst = out[0];
    if (st == LT_OK && dst->dtype != (int32_t)loop_out) {
        lt_meta m = lt_meta_make(loop_out, dst->shape, dst->ndim);
        dst = lt_tensor_alloc(&m, dst->device, name);
        st = dst ? LT_OK : lt_last_status();
    }
    if (st == LT_OK) {
        ew_ctx c;
        ctx_init(&c, op, a);
        lt_iter it;
        lt_iter_build(&it, dst, x.t, nin);
        lt_iter_run(&it, fn, &c);
        if (dst != out[0]) {
            lt_eager_copy(out[0], dst);
            lt_tensor_unref(dst);
        }
    }
    inputs_release(&x);
    return st;
}

/* where(cond, a, b): a selection of raw words, so every dtype (bf16 and f16
 * included) runs natively. */
static lt_status k_where(lt_op op, lt_tensor *const *in, int nin, const lt_attrs *a, const lt_meta *om,
                         lt_tensor **out)
{
    (void)a;
    lt_dtype dt = (lt_dtype)om[0].dtype;
    ew_inputs x;
    lt_status st = inputs_convert(&x, in, nin, 1, dt, lt_op_name(op));
    if (st != LT_OK)
        return st;
    size_t size = lt_dtype_size(dt);
    lt_loop_fn fn = size == 1   ? loop_where_8
                    : size == 2 ? loop_where_16
                    : size == 4 ? loop_where_32
                                : loop_where_64;
    lt_iter it;
    lt_iter_build(&it, out[0], x.t, nin);
    lt_iter_run(&it, fn, NULL);
    inputs_release(&x);
    return LT_OK;
}

void lt_eager_register_elementwise(void)
{
    fill_loop_table();
    for (int op = 0; op < LT_OP_COUNT; op++) {
        int cls = lt_op_infos[op].cls;
        if ((cls == LT_OPC_UNARY || cls == LT_OPC_BINARY) && op != LT_OP_CAST)
            lt_eager_set_kernel((lt_op)op, k_elementwise);
    }
    lt_eager_set_kernel(LT_OP_WHERE, k_where);
}
