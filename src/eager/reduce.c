/*
 * reduce.c - eager kernels of the reduce group: reductions over dims (sum,
 * mean, prod, amax, amin, max_dim, min_dim, argmax, argmin, var, std,
 * logsumexp, all, any) and scans along one dim (cumsum, softmax,
 * log_softmax).
 *
 * Reductions share one engine (reduce_into). The input's dims are split
 * into kept dims (one output element per index) and reduced dims; each
 * group is coalesced, and the reduced dims are walked as "lines" along the
 * innermost reduced dim. Two loop shapes:
 *  - row mode (a reduced dim has the smallest stride, e.g. rows of [N, D]
 *    over dim 1): one output at a time; each line is one simple loop into a
 *    single accumulator;
 *  - column mode (a kept dim has the smallest stride, e.g. [N, D] over
 *    dim 0, a bias gradient; also any reduction of at most SHORT_LINE
 *    elements): a block of up to COL_BLOCK adjacent outputs accumulates
 *    whole rows, acc[j] += x[i][j].
 * The work is cut into (output range, reduced chunk) items run with OpenMP.
 * The cut depends only on the shape, never on the thread count, so results
 * are reproducible. One reduction kind (sum, prod, max, min, squared
 * deviation, sum of exp, first index equal to a value) is a `reducer`:
 * typed init/line/cols/combine functions generated per dtype by macros.
 * Composite ops run the engine more than once: mean = sum / n, var = sum of
 * squared deviations from the mean, logsumexp = max, then sum(exp(x - max)),
 * argmax = max, then the first index holding it (so ties give the first
 * occurrence and a NaN counts as the maximum).
 *
 * bf16/f16 inputs are converted to f32 first (they compute in f32), and
 * floating sums accumulate in double. Integer sums and products wrap
 * modulo 2^64 (computed in uint64_t), like PyTorch's int64 arithmetic.
 */
#include "eager/eager.h"
#include "eager/fastmath.h"

#include <math.h>
#include <string.h>

#define LT_PRAGMA(x) _Pragma(#x)

#define COL_BLOCK 256      /* outputs per column-mode task (accumulators stay in L1) */
#define UNIT_WORK 16384    /* input elements per parallel work item, roughly */
#define MIN_UNITS 64       /* below this many output units, split the reduced range too */
#define MAX_CHUNKS 1024    /* bound on reduced-range chunks (partial accumulator rows) */
#define SHORT_LINE 32      /* reductions at most this long always use column mode */
/* Column loops over a dense block of at most NARROW_COLS columns (e.g. [N, 4]
 * over dim 0) fold it as one flat array into NARROW_LANES accumulators, a
 * multiple of the column count wide, so that the loop vectorizes and no
 * accumulator waits on itself row after row. */
#define NARROW_COLS 16
#define NARROW_LANES 64

static int64_t min64(int64_t a, int64_t b) { return a < b ? a : b; }
static int64_t max64(int64_t a, int64_t b) { return a > b ? a : b; }
static int64_t ceil_div(int64_t a, int64_t b) { return (a + b - 1) / b; }

/* ========================================================================= */
/* Typed reducers                                                             */
/* ========================================================================= */

/* Reduction kinds and the element types the reducers are generated for
 * (bool is read as u8: its bytes are 0 or 1). */
enum { K_SUM, K_PROD, K_MAX, K_MIN, K_SQDEV, K_SUMEXP, K_FIRST, K_COUNT };
enum { T_F32, T_F64, T_I32, T_I64, T_U8, T_COUNT };

/* Sets n accumulators to the identity. */
typedef void (*init_fn)(void *acc, int64_t n);
/* Folds x[0], x[st], ... x[(n-1)*st] into one accumulator. prm points to
 * this output's parameter (or is NULL); r0 is the flat reduced index of
 * x[0] (for first-index searches). */
typedef void (*line_fn)(void *acc, const void *x, int64_t n, int64_t st, const void *prm, int64_t r0);
/* Folds nr rows (row i at x + i*rs) of nc columns (column j at j*cs) into
 * the nc accumulators acc[0..nc); prm points to nc parameters or is NULL;
 * row i has flat reduced index r0 + i. */
typedef void (*cols_fn)(void *acc, const void *x, int64_t nc, int64_t cs, int64_t nr, int64_t rs,
                        const void *prm, int64_t r0);
/* acc[j] = combine(acc[j], other[j]) for j < n. */
typedef void (*combine_fn)(void *acc, const void *other, int64_t n);

typedef struct reducer {
    init_fn init;
    line_fn line;
    cols_fn cols;
    combine_fn combine;
    size_t acc_size;
} reducer;

/* f32 exp (x - max in softmax and logsumexp) is fastmath.h's lt_expf:
 * vectorizable, and the same code the compiler pastes into generated row
 * kernels, so lazy and eager exponentials agree bit for bit. */

/* ---- folds: sum, prod, squared deviation, sum of exp --------------------- */

/* TERM(A, v, p): what one element v contributes; p points to the output's
 * parameter (the mean for squared deviations, the shift for exp). */
#define TERM_PLAIN(A, v, p) ((A)(v))
#define TERM_SQDEV(A, v, p) (((A)(v) - *(p)) * ((A)(v) - *(p)))
#define TERM_EXPF(A, v, p) ((A)lt_expf((v) - (float)*(p)))
#define TERM_EXP(A, v, p) ((A)exp((v) - *(p)))

#define DEF_FOLD(NAME, T, A, OP, ID, TERM)                                                         \
    static void NAME##_init(void *acc, int64_t n)                                                  \
    {                                                                                              \
        A *a = acc;                                                                                \
        for (int64_t j = 0; j < n; j++)                                                            \
            a[j] = (A)(ID);                                                                        \
    }                                                                                              \
    static void NAME##_line(void *acc, const void *xp, int64_t n, int64_t st, const void *pp,      \
                            int64_t r0)                                                            \
    {                                                                                              \
        (void)r0;                                                                                  \
        const T *x = xp;                                                                           \
        const double *prm = pp;                                                                    \
        (void)prm;                                                                                 \
        A s = *(A *)acc;                                                                           \
        if (st == 1) {                                                                             \
            LT_PRAGMA(omp simd reduction(OP : s))                                                  \
            for (int64_t j = 0; j < n; j++)                                                        \
                s = s OP TERM(A, x[j], prm);                                                       \
        } else {                                                                                   \
            for (int64_t j = 0; j < n; j++)                                                        \
                s = s OP TERM(A, x[j * st], prm);                                                  \
        }                                                                                          \
        *(A *)acc = s;                                                                             \
    }                                                                                              \
    static void NAME##_cols(void *acc, const void *xp, int64_t nc, int64_t cs, int64_t nr,         \
                            int64_t rs, const void *pp, int64_t r0)                                \
    {                                                                                              \
        (void)r0;                                                                                  \
        A *restrict a = acc;                                                                       \
        const double *prm = pp;                                                                    \
        (void)prm;                                                                                 \
        if (cs == 1 && rs == nc && nc <= NARROW_COLS) { /* see NARROW_COLS */                      \
            int64_t w = NARROW_LANES / nc * nc, total = nr * nc, f = 0;                            \
            A lane[NARROW_LANES];                                                                  \
            double lane_prm[NARROW_LANES];                                                         \
            (void)lane_prm;                                                                        \
            for (int64_t k = 0; k < w; k++) {                                                      \
                lane[k] = (A)(ID);                                                                 \
                if (prm)                                                                           \
                    lane_prm[k] = prm[k % nc];                                                     \
            }                                                                                      \
            const T *restrict x = xp;                                                              \
            for (; f + w <= total; f += w)                                                         \
                for (int64_t k = 0; k < w; k++)                                                    \
                    lane[k] = lane[k] OP TERM(A, x[f + k], (lane_prm + k));                        \
            for (int64_t k = 0; k < w; k++)                                                        \
                a[k % nc] = a[k % nc] OP lane[k];                                                  \
            for (; f < total; f++)                                                                 \
                a[f % nc] = a[f % nc] OP TERM(A, x[f], (prm + f % nc));                            \
            return;                                                                                \
        }                                                                                          \
        for (int64_t i = 0; i < nr; i++) {                                                         \
            const T *restrict x = (const T *)xp + i * rs;                                          \
            if (cs == 1) {                                                                         \
                for (int64_t j = 0; j < nc; j++)                                                   \
                    a[j] = a[j] OP TERM(A, x[j], (prm + j));                                       \
            } else {                                                                               \
                for (int64_t j = 0; j < nc; j++)                                                   \
                    a[j] = a[j] OP TERM(A, x[j * cs], (prm + j));                                  \
            }                                                                                      \
        }                                                                                          \
    }                                                                                              \
    static void NAME##_combine(void *acc, const void *other, int64_t n)                            \
    {                                                                                              \
        A *a = acc;                                                                                \
        const A *b = other;                                                                        \
        for (int64_t j = 0; j < n; j++)                                                            \
            a[j] = a[j] OP b[j];                                                                   \
    }

DEF_FOLD(sum_f32, float, double, +, 0, TERM_PLAIN)
DEF_FOLD(sum_f64, double, double, +, 0, TERM_PLAIN)
DEF_FOLD(sum_i32, int32_t, uint64_t, +, 0, TERM_PLAIN)
DEF_FOLD(sum_i64, int64_t, uint64_t, +, 0, TERM_PLAIN)
DEF_FOLD(sum_u8, uint8_t, uint64_t, +, 0, TERM_PLAIN)
DEF_FOLD(prod_f32, float, double, *, 1, TERM_PLAIN)
DEF_FOLD(prod_f64, double, double, *, 1, TERM_PLAIN)
DEF_FOLD(prod_i32, int32_t, uint64_t, *, 1, TERM_PLAIN)
DEF_FOLD(prod_i64, int64_t, uint64_t, *, 1, TERM_PLAIN)
DEF_FOLD(prod_u8, uint8_t, uint64_t, *, 1, TERM_PLAIN)
DEF_FOLD(sqdev_f32, float, double, +, 0, TERM_SQDEV)
DEF_FOLD(sqdev_f64, double, double, +, 0, TERM_SQDEV)
DEF_FOLD(sumexp_f32, float, double, +, 0, TERM_EXPF)
DEF_FOLD(sumexp_f64, double, double, +, 0, TERM_EXP)

/* ---- extrema: max and min, NaN propagating ------------------------------- */

#define IS_NAN_F(v) isnan(v)
#define IS_NAN_I(v) 0
#define BETTER_MAX(v, a) ((v) > (a))
#define BETTER_MIN(v, a) ((v) < (a))

/* The step keeps a NaN once seen: v replaces a if it is better or NaN, and
 * nothing compares better than a NaN accumulator. The contiguous line loop
 * is an OpenMP simd max/min reduction (which vectorizes) plus a NaN flag;
 * when the flag is set the line's first NaN becomes the result. */
/* Independent running extrema per line; 16 lanes fill an AVX-512 register of f32. */
#define EXTREMUM_LANES 16

#define DEF_EXTREMUM(NAME, T, BETTER, IS_NAN, ID)                                                  \
    static inline T NAME##_step(T a, T v) { return (BETTER(v, a) || IS_NAN(v)) ? v : a; }          \
    static void NAME##_init(void *acc, int64_t n)                                                  \
    {                                                                                              \
        T *a = acc;                                                                                \
        for (int64_t j = 0; j < n; j++)                                                            \
            a[j] = (ID);                                                                           \
    }                                                                                              \
    static void NAME##_line(void *acc, const void *xp, int64_t n, int64_t st, const void *pp,      \
                            int64_t r0)                                                            \
    {                                                                                              \
        (void)pp, (void)r0;                                                                        \
        const T *x = xp;                                                                           \
        T m = *(T *)acc;                                                                           \
        if (IS_NAN(m))                                                                             \
            return;                                                                                \
        int nan = 0;                                                                               \
        if (st == 1) {                                                                             \
            /* Explicit lanes seeded with the running value: an "omp simd                          \
             * reduction(min/max)" clause lets the compiler seed lanes with                         \
             * +-FLT_MAX, which is wrong for lines of infinities. */                                \
            T lane[EXTREMUM_LANES];                                                                \
            for (int k = 0; k < EXTREMUM_LANES; k++)                                               \
                lane[k] = m;                                                                       \
            int64_t j = 0;                                                                         \
            for (; j + EXTREMUM_LANES <= n; j += EXTREMUM_LANES) {                                 \
                for (int k = 0; k < EXTREMUM_LANES; k++) {                                         \
                    T v = x[j + k];                                                                \
                    lane[k] = BETTER(v, lane[k]) ? v : lane[k];                                    \
                    nan |= IS_NAN(v);                                                              \
                }                                                                                  \
            }                                                                                      \
            for (; j < n; j++) {                                                                   \
                T v = x[j];                                                                        \
                m = BETTER(v, m) ? v : m;                                                          \
                nan |= IS_NAN(v);                                                                  \
            }                                                                                      \
            for (int k = 0; k < EXTREMUM_LANES; k++)                                               \
                m = BETTER(lane[k], m) ? lane[k] : m;                                              \
        } else {                                                                                   \
            for (int64_t j = 0; j < n; j++) {                                                      \
                T v = x[j * st];                                                                   \
                m = BETTER(v, m) ? v : m;                                                          \
                nan |= IS_NAN(v);                                                                  \
            }                                                                                      \
        }                                                                                          \
        for (int64_t j = 0; nan && j < n; j++) {                                                   \
            if (IS_NAN(x[j * st])) {                                                               \
                m = x[j * st];                                                                     \
                break;                                                                             \
            }                                                                                      \
        }                                                                                          \
        *(T *)acc = m;                                                                             \
    }                                                                                              \
    static void NAME##_cols(void *acc, const void *xp, int64_t nc, int64_t cs, int64_t nr,         \
                            int64_t rs, const void *pp, int64_t r0)                                \
    {                                                                                              \
        (void)pp, (void)r0;                                                                        \
        T *restrict a = acc;                                                                       \
        if (cs == 1 && rs == nc && nc <= NARROW_COLS) { /* see NARROW_COLS */                      \
            int64_t w = NARROW_LANES / nc * nc, total = nr * nc, f = 0;                            \
            T lane[NARROW_LANES];                                                                  \
            for (int64_t k = 0; k < w; k++)                                                        \
                lane[k] = (ID);                                                                    \
            const T *restrict x = xp;                                                              \
            for (; f + w <= total; f += w)                                                         \
                for (int64_t k = 0; k < w; k++)                                                    \
                    lane[k] = NAME##_step(lane[k], x[f + k]);                                      \
            for (int64_t k = 0; k < w; k++)                                                        \
                a[k % nc] = NAME##_step(a[k % nc], lane[k]);                                       \
            for (; f < total; f++)                                                                 \
                a[f % nc] = NAME##_step(a[f % nc], x[f]);                                          \
            return;                                                                                \
        }                                                                                          \
        for (int64_t i = 0; i < nr; i++) {                                                         \
            const T *restrict x = (const T *)xp + i * rs;                                          \
            if (cs == 1) {                                                                         \
                for (int64_t j = 0; j < nc; j++)                                                   \
                    a[j] = NAME##_step(a[j], x[j]);                                                \
            } else {                                                                               \
                for (int64_t j = 0; j < nc; j++)                                                   \
                    a[j] = NAME##_step(a[j], x[j * cs]);                                           \
            }                                                                                      \
        }                                                                                          \
    }                                                                                              \
    static void NAME##_combine(void *acc, const void *other, int64_t n)                            \
    {                                                                                              \
        T *a = acc;                                                                                \
        const T *b = other;                                                                        \
        for (int64_t j = 0; j < n; j++)                                                            \
            a[j] = NAME##_step(a[j], b[j]);                                                        \
    }

DEF_EXTREMUM(max_f32, float, BETTER_MAX, IS_NAN_F, -INFINITY)
DEF_EXTREMUM(max_f64, double, BETTER_MAX, IS_NAN_F, -INFINITY)
DEF_EXTREMUM(max_i32, int32_t, BETTER_MAX, IS_NAN_I, INT32_MIN)
DEF_EXTREMUM(max_i64, int64_t, BETTER_MAX, IS_NAN_I, INT64_MIN)
DEF_EXTREMUM(max_u8, uint8_t, BETTER_MAX, IS_NAN_I, 0)
DEF_EXTREMUM(min_f32, float, BETTER_MIN, IS_NAN_F, INFINITY)
DEF_EXTREMUM(min_f64, double, BETTER_MIN, IS_NAN_F, INFINITY)
DEF_EXTREMUM(min_i32, int32_t, BETTER_MIN, IS_NAN_I, INT32_MAX)
DEF_EXTREMUM(min_i64, int64_t, BETTER_MIN, IS_NAN_I, INT64_MAX)
DEF_EXTREMUM(min_u8, uint8_t, BETTER_MIN, IS_NAN_I, UINT8_MAX)

/* ---- first index whose element equals the output's parameter ----------- */

/* The accumulator is an int64 flat reduced index, INT64_MAX until found;
 * chunks combine with min, so the first occurrence wins. A NaN parameter
 * matches the first NaN. */
#define DEF_FIRST(NAME, T, IS_NAN)                                                                 \
    static inline bool NAME##_match(T v, T t) { return v == t || (IS_NAN(t) && IS_NAN(v)); }       \
    static void NAME##_init(void *acc, int64_t n)                                                  \
    {                                                                                              \
        int64_t *a = acc;                                                                          \
        for (int64_t j = 0; j < n; j++)                                                            \
            a[j] = INT64_MAX;                                                                      \
    }                                                                                              \
    static void NAME##_line(void *acc, const void *xp, int64_t n, int64_t st, const void *pp,      \
                            int64_t r0)                                                            \
    {                                                                                              \
        int64_t *a = acc;                                                                          \
        if (*a != INT64_MAX) /* lines are walked in increasing order */                           \
            return;                                                                                \
        const T *x = xp;                                                                           \
        const T t = *(const T *)pp;                                                                \
        for (int64_t j = 0; j < n; j++) {                                                          \
            if (NAME##_match(x[j * st], t)) {                                                      \
                *a = r0 + j;                                                                       \
                return;                                                                            \
            }                                                                                      \
        }                                                                                          \
    }                                                                                              \
    static void NAME##_cols(void *acc, const void *xp, int64_t nc, int64_t cs, int64_t nr,         \
                            int64_t rs, const void *pp, int64_t r0)                                \
    {                                                                                              \
        int64_t *a = acc;                                                                          \
        const T *t = pp;                                                                           \
        for (int64_t i = 0; i < nr; i++) {                                                         \
            const T *x = (const T *)xp + i * rs;                                                   \
            for (int64_t j = 0; j < nc; j++)                                                       \
                if (a[j] == INT64_MAX && NAME##_match(x[j * cs], t[j]))                            \
                    a[j] = r0 + i;                                                                 \
        }                                                                                          \
    }                                                                                              \
    static void NAME##_combine(void *acc, const void *other, int64_t n)                            \
    {                                                                                              \
        int64_t *a = acc;                                                                          \
        const int64_t *b = other;                                                                  \
        for (int64_t j = 0; j < n; j++)                                                            \
            a[j] = b[j] < a[j] ? b[j] : a[j];                                                      \
    }

DEF_FIRST(first_f32, float, IS_NAN_F)
DEF_FIRST(first_f64, double, IS_NAN_F)
DEF_FIRST(first_i32, int32_t, IS_NAN_I)
DEF_FIRST(first_i64, int64_t, IS_NAN_I)
DEF_FIRST(first_u8, uint8_t, IS_NAN_I)

#define RD(NAME, A) {NAME##_init, NAME##_line, NAME##_cols, NAME##_combine, sizeof(A)}

static const reducer reducers[K_COUNT][T_COUNT] = {
    [K_SUM] = {RD(sum_f32, double), RD(sum_f64, double), RD(sum_i32, uint64_t), RD(sum_i64, uint64_t),
               RD(sum_u8, uint64_t)},
    [K_PROD] = {RD(prod_f32, double), RD(prod_f64, double), RD(prod_i32, uint64_t),
                RD(prod_i64, uint64_t), RD(prod_u8, uint64_t)},
    [K_MAX] = {RD(max_f32, float), RD(max_f64, double), RD(max_i32, int32_t), RD(max_i64, int64_t),
               RD(max_u8, uint8_t)},
    [K_MIN] = {RD(min_f32, float), RD(min_f64, double), RD(min_i32, int32_t), RD(min_i64, int64_t),
               RD(min_u8, uint8_t)},
    [K_SQDEV] = {RD(sqdev_f32, double), RD(sqdev_f64, double)},
    [K_SUMEXP] = {RD(sumexp_f32, double), RD(sumexp_f64, double)},
    [K_FIRST] = {RD(first_f32, int64_t), RD(first_f64, int64_t), RD(first_i32, int64_t),
                 RD(first_i64, int64_t), RD(first_u8, int64_t)},
};

static int type_index(lt_dtype dt)
{
    switch (dt) {
    case LT_F32: return T_F32;
    case LT_F64: return T_F64;
    case LT_I32: return T_I32;
    case LT_I64: return T_I64;
    default: return T_U8; /* u8 and bool */
    }
}

/* Dtype of the accumulators of `kind` over elements of dtype dt. */
static lt_dtype accum_dtype(int kind, lt_dtype dt)
{
    switch (kind) {
    case K_SUM:
    case K_PROD: return lt_dtype_is_floating(dt) ? LT_F64 : LT_I64;
    case K_MAX:
    case K_MIN: return dt;
    case K_FIRST: return LT_I64;
    default: return LT_F64;
    }
}

/* ========================================================================= */
/* The reduction engine                                                       */
/* ========================================================================= */

/* Kept and reduced dims of the input, each coalesced (strides in elements).
 * There is always at least one reduced dim (size 1 if nothing is reduced). */
typedef struct reduce_geom {
    int nk, nr;
    int64_t kshape[LT_MAX_DIMS], kstride[LT_MAX_DIMS];
    int64_t rshape[LT_MAX_DIMS], rstride[LT_MAX_DIMS];
    int64_t n_out, n_red;
    const char *base; /* element 0 of the input */
    size_t elem;
    lt_dtype dtype;
} reduce_geom;

/* Merges dim d into its outer neighbour when the strides allow it. */
static int coalesce_dims(int64_t *shape, int64_t *stride, int n)
{
    if (n == 0)
        return 0;
    int w = 0;
    for (int d = 1; d < n; d++) {
        if (stride[w] == stride[d] * shape[d]) {
            shape[w] *= shape[d];
            stride[w] = stride[d];
        } else {
            w++;
            shape[w] = shape[d];
            stride[w] = stride[d];
        }
    }
    return w + 1;
}

/* Stable sort of the reduced dims by decreasing stride, so the innermost
 * reduced dim is the densest one (order-free reductions only). */
static void sort_by_stride(int64_t *shape, int64_t *stride, int n)
{
    for (int i = 1; i < n; i++) {
        int64_t sh = shape[i], st = stride[i];
        int j = i - 1;
        for (; j >= 0 && stride[j] < st; j--) {
            shape[j + 1] = shape[j];
            stride[j + 1] = stride[j];
        }
        shape[j + 1] = sh;
        stride[j + 1] = st;
    }
}

/* keep_order: walk the reduced dims in row-major order (first-index
 * searches need it); otherwise they may be reordered for locality. */
static void geom_build(reduce_geom *g, const lt_tensor *x, const bool *mask, bool keep_order)
{
    memset(g, 0, sizeof *g);
    g->n_out = g->n_red = 1;
    for (int d = 0; d < x->ndim; d++) {
        int64_t size = x->shape[d];
        if (mask[d])
            g->n_red *= size;
        else
            g->n_out *= size;
        if (size == 1)
            continue; /* size-1 dims move nothing */
        if (mask[d]) {
            g->rshape[g->nr] = size;
            g->rstride[g->nr++] = x->strides[d];
        } else {
            g->kshape[g->nk] = size;
            g->kstride[g->nk++] = x->strides[d];
        }
    }
    if (!keep_order)
        sort_by_stride(g->rshape, g->rstride, g->nr);
    g->nk = coalesce_dims(g->kshape, g->kstride, g->nk);
    g->nr = coalesce_dims(g->rshape, g->rstride, g->nr);
    if (g->nr == 0) {
        g->nr = 1;
        g->rshape[0] = 1;
        g->rstride[0] = 0;
    }
    g->base = lt_tensor_ptr(x);
    g->elem = lt_dtype_size((lt_dtype)x->dtype);
    g->dtype = (lt_dtype)x->dtype;
}

/* Element offset of output o (row-major over the kept dims). */
static int64_t kept_offset(const reduce_geom *g, int64_t o)
{
    int64_t off = 0;
    for (int d = g->nk - 1; d >= 0; d--) {
        off += (o % g->kshape[d]) * g->kstride[d];
        o /= g->kshape[d];
    }
    return off;
}

/* The piece of the reduced range [r, re) that lies on one line: returns its
 * length and sets *off to the element offset of flat reduced index r. */
static int64_t reduced_piece(const reduce_geom *g, int64_t r, int64_t re, int64_t *off)
{
    int64_t len_line = g->rshape[g->nr - 1];
    int64_t line = r / len_line, pos = r - line * len_line;
    int64_t o = pos * g->rstride[g->nr - 1];
    for (int d = g->nr - 2; d >= 0; d--) {
        o += (line % g->rshape[d]) * g->rstride[d];
        line /= g->rshape[d];
    }
    *off = o;
    return min64(len_line - pos, re - r);
}

/* How the work is cut. A task is one output (row mode) or one block of up
 * to COL_BLOCK adjacent outputs of a row of the innermost kept dim (column
 * mode); a unit is per_unit consecutive tasks; each unit runs once per
 * chunk of the reduced range. */
typedef struct reduce_plan {
    const reduce_geom *g;
    const reducer *rd;
    const char *params;
    size_t psize;
    bool col, parallel;
    int64_t ncols, col_blocks;
    int64_t ntasks, per_unit, nunits, nchunks;
    int64_t row_bytes; /* stride of the partial rows, whole cache lines (no false sharing) */
} reduce_plan;

static void plan_build(reduce_plan *p, const reduce_geom *g)
{
    int64_t task_width = 1;
    /* short reductions also go by columns: one call per block of outputs
     * instead of one per output */
    p->col = g->nk > 0 && (g->n_red <= SHORT_LINE || g->kstride[g->nk - 1] < g->rstride[g->nr - 1]);
    if (p->col) {
        p->ncols = g->kshape[g->nk - 1];
        p->col_blocks = ceil_div(p->ncols, COL_BLOCK);
        p->ntasks = g->n_out / p->ncols * p->col_blocks;
        task_width = min64(p->ncols, COL_BLOCK);
    } else {
        p->ntasks = g->n_out;
    }
    p->per_unit = max64(1, UNIT_WORK / (task_width * g->n_red));
    p->nunits = ceil_div(p->ntasks, p->per_unit);
    int64_t total = g->n_out * g->n_red;
    p->nchunks = 1;
    if (total >= LT_PARALLEL_GRAIN && p->nunits < MIN_UNITS) {
        int64_t chunk_len = max64(1, UNIT_WORK / task_width);
        p->nchunks = min64(ceil_div(g->n_red, chunk_len), MAX_CHUNKS);
    }
    p->parallel = total >= LT_PARALLEL_GRAIN && p->nunits * p->nchunks > 1;
    p->row_bytes = (g->n_out * (int64_t)p->rd->acc_size + 63) / 64 * 64;
}

/* Runs task t over the reduced range [rb, re) into the accumulator row acc
 * (n_out accumulators). */
static void run_task(const reduce_plan *p, int64_t t, int64_t rb, int64_t re, char *acc)
{
    const reduce_geom *g = p->g;
    const reducer *rd = p->rd;
    int64_t o0 = t, nc = 1;
    if (p->col) {
        int64_t block = t % p->col_blocks;
        o0 = t / p->col_blocks * p->ncols + block * COL_BLOCK;
        nc = min64(COL_BLOCK, p->ncols - block * COL_BLOCK);
    }
    char *a = acc + o0 * (int64_t)rd->acc_size;
    const void *prm = p->params ? p->params + o0 * (int64_t)p->psize : NULL;
    const char *base = g->base + kept_offset(g, o0) * (int64_t)g->elem;
    int64_t rs = g->rstride[g->nr - 1];
    rd->init(a, nc);
    int64_t off, len;
    for (int64_t r = rb; r < re; r += len) {
        len = reduced_piece(g, r, re, &off);
        const char *x = base + off * (int64_t)g->elem;
        if (p->col)
            rd->cols(a, x, nc, g->kstride[g->nk - 1], len, rs, prm, r);
        else
            rd->line(a, x, len, rs, prm, r);
    }
}

typedef struct items_job {
    const reduce_plan *p;
    char *acc;
} items_job;

static void run_item_range(void *ctx, int64_t i0, int64_t i1, int64_t chunk)
{
    (void)chunk;
    const items_job *j = ctx;
    const reduce_plan *p = j->p;
    const reduce_geom *g = p->g;
    for (int64_t it = i0; it < i1; it++) {
        int64_t u = it / p->nchunks, c = it % p->nchunks;
        int64_t q = g->n_red / p->nchunks, rem = g->n_red % p->nchunks;
        int64_t rb = c * q + min64(c, rem), re = rb + q + (c < rem ? 1 : 0);
        int64_t t1 = min64((u + 1) * p->per_unit, p->ntasks);
        for (int64_t t = u * p->per_unit; t < t1; t++)
            run_task(p, t, rb, re, j->acc + c * p->row_bytes);
    }
}

/* Every item writes its own accumulators, so any split gives the same bits. */
static void run_items(const reduce_plan *p, char *acc)
{
    items_job j = {p, acc};
    int64_t items = p->nunits * p->nchunks;
    lt_parallel_for(items, p->parallel ? 1 : items, 1, run_item_range, &j);
}

/*
 * Reduces the input described by g with reducer `kind` into res: n_out
 * contiguous accumulators of accum_dtype(kind, g->dtype). params: n_out
 * per-output parameters of psize bytes, or NULL. Needs n_red > 0.
 */
static lt_status reduce_into(const reduce_geom *g, int kind, void *res, const void *params, size_t psize,
                             const char *name)
{
    if (g->n_out == 0)
        return LT_OK;
    reduce_plan p = {.g = g, .rd = &reducers[kind][type_index(g->dtype)], .params = params, .psize = psize};
    plan_build(&p, g);
    if (p.nchunks == 1) {
        run_items(&p, res);
        return LT_OK;
    }
    /* One row of partial accumulators per chunk, combined in chunk order. */
    char *partial = lt_alloc((size_t)(p.row_bytes * p.nchunks), name);
    if (!partial)
        return lt_last_status();
    run_items(&p, partial);
    memcpy(res, partial, (size_t)g->n_out * p.rd->acc_size);
    for (int64_t c = 1; c < p.nchunks; c++)
        p.rd->combine(res, partial + c * p.row_bytes, g->n_out);
    lt_free(partial);
    return LT_OK;
}

/* ========================================================================= */
/* Reduction kernels                                                          */
/* ========================================================================= */

/* A reference to x with dtype dt: x itself when it already has it, else a
 * contiguous converted copy. The caller unrefs it. */
static lt_tensor *with_dtype(lt_tensor *x, lt_dtype dt, const char *name)
{
    if (x->dtype == (int32_t)dt) {
        atomic_fetch_add(&x->refcount, 1);
        return x;
    }
    return lt_eager_as_contiguous(x, dt, name);
}

/* Where results of dtype dt go: out itself when it is contiguous with that
 * dtype, else a temporary that finish_result copies (converting) into out. */
static lt_tensor *result_buffer(lt_tensor *out, lt_dtype dt, const char *name)
{
    if (out->dtype == (int32_t)dt && lt_tensor_contiguous(out)) {
        atomic_fetch_add(&out->refcount, 1);
        return out;
    }
    lt_meta m = lt_tensor_meta(out);
    m.dtype = (int32_t)dt;
    m.weak = 0;
    return lt_tensor_alloc(&m, out->device, name);
}

static lt_status finish_result(lt_tensor *out, lt_tensor *res, lt_status st)
{
    if (st == LT_OK && res != out)
        lt_eager_copy(out, res);
    lt_tensor_unref(res);
    return st;
}

static double *f64_data(lt_tensor *t) { return (double *)(void *)lt_tensor_ptr(t); }

/* The dtype the kernels read: bf16/f16 compute in f32; logsumexp promotes
 * integers to f32; all/any look at truth values (bool). */
static lt_dtype compute_dtype(lt_op op, lt_dtype dt)
{
    if (op == LT_OP_ALL || op == LT_OP_ANY)
        return LT_BOOL;
    if (dt == LT_BF16 || dt == LT_F16 || (op == LT_OP_LOGSUMEXP && !lt_dtype_is_floating(dt)))
        return LT_F32;
    return dt;
}

/* Reduced-dim mask from the attrs (dims already validated by the shape
 * rule; ni == 0 reduces every dim). */
static void mask_from_attrs(const lt_tensor *x, const lt_attrs *a, bool *mask)
{
    for (int d = 0; d < LT_MAX_DIMS; d++)
        mask[d] = a->ni == 0 && d < x->ndim;
    for (int k = 0; k < a->ni && x->ndim > 0; k++) {
        int64_t d = a->i[k] < 0 ? a->i[k] + x->ndim : a->i[k];
        mask[d] = true;
    }
}

/* sum, prod, amax, amin, all, any: one pass. */
static lt_status reduce_plain(const reduce_geom *g, int kind, lt_tensor *out, const char *name)
{
    lt_tensor *res = result_buffer(out, accum_dtype(kind, g->dtype), name);
    if (!res)
        return lt_last_status();
    return finish_result(out, res, reduce_into(g, kind, lt_tensor_ptr(res), NULL, 0, name));
}

/* mean, var, std: the mean, then (var/std) the mean squared deviation. */
static lt_status reduce_moments(lt_op op, const reduce_geom *g, double correction, lt_tensor *out,
                                const char *name)
{
    lt_tensor *res = result_buffer(out, LT_F64, name);
    if (!res)
        return lt_last_status();
    double *r = f64_data(res);
    double n = (double)g->n_red;
    lt_status st = reduce_into(g, K_SUM, r, NULL, 0, name);
    for (int64_t o = 0; st == LT_OK && o < g->n_out; o++)
        r[o] /= n;
    if (st == LT_OK && op != LT_OP_MEAN) {
        double *mean = lt_alloc(sizeof(double) * (size_t)g->n_out, name);
        if (!mean)
            return finish_result(out, res, lt_last_status());
        memcpy(mean, r, sizeof(double) * (size_t)g->n_out);
        st = reduce_into(g, K_SQDEV, r, mean, sizeof(double), name);
        lt_free(mean);
        double divisor = n - correction > 0 ? n - correction : 0.0; /* <= 0: inf or NaN, as torch */
        for (int64_t o = 0; st == LT_OK && o < g->n_out; o++)
            r[o] = op == LT_OP_STD ? sqrt(r[o] / divisor) : r[o] / divisor;
    }
    return finish_result(out, res, st);
}

/* logsumexp = m + log(sum(exp(x - m))), m the max (0 where it is infinite,
 * so all -inf gives -inf and any +inf gives +inf). */
static lt_status reduce_logsumexp(const reduce_geom *g, lt_tensor *out, const char *name)
{
    size_t n = (size_t)g->n_out;
    double *shift = lt_alloc(sizeof(double) * n, name);
    void *mx = lt_alloc(g->elem * n, name);
    lt_tensor *res = shift && mx ? result_buffer(out, LT_F64, name) : NULL;
    lt_status st = res ? reduce_into(g, K_MAX, mx, NULL, 0, name) : lt_last_status();
    if (st == LT_OK) {
        for (size_t o = 0; o < n; o++) {
            double m = g->dtype == LT_F32 ? ((float *)mx)[o] : ((double *)mx)[o];
            shift[o] = isinf(m) ? 0.0 : m;
        }
        st = reduce_into(g, K_SUMEXP, f64_data(res), shift, sizeof(double), name);
    }
    if (st == LT_OK) {
        double *r = f64_data(res);
        for (size_t o = 0; o < n; o++)
            r[o] = log(r[o]) + shift[o];
    }
    if (shift)
        lt_free(shift);
    if (mx)
        lt_free(mx);
    return res ? finish_result(out, res, st) : st;
}

/* max_dim/min_dim (values, indices) and argmax/argmin (indices): the
 * extreme value, then the first flat reduced index holding it. */
static lt_status reduce_arg(lt_op op, const reduce_geom *g, lt_tensor **out, const char *name)
{
    bool want_values = op == LT_OP_MAX_DIM || op == LT_OP_MIN_DIM;
    int kind = op == LT_OP_MAX_DIM || op == LT_OP_ARGMAX ? K_MAX : K_MIN;
    lt_tensor *idx_out = want_values ? out[1] : out[0];
    lt_tensor *vals;
    if (want_values) {
        vals = result_buffer(out[0], g->dtype, name);
    } else {
        lt_meta m = lt_tensor_meta(idx_out);
        m.dtype = (int32_t)g->dtype;
        vals = lt_tensor_alloc(&m, idx_out->device, name);
    }
    if (!vals)
        return lt_last_status();
    lt_tensor *idx = result_buffer(idx_out, LT_I64, name);
    lt_status st = idx ? reduce_into(g, kind, lt_tensor_ptr(vals), NULL, 0, name) : lt_last_status();
    if (st == LT_OK)
        st = reduce_into(g, K_FIRST, lt_tensor_ptr(idx), lt_tensor_ptr(vals), g->elem, name);
    if (idx)
        st = finish_result(idx_out, idx, st);
    if (want_values)
        return finish_result(out[0], vals, st);
    lt_tensor_unref(vals);
    return st;
}

/* Value of a reduction over zero elements (ops without identity never get
 * here: their shape rule rejects empty reductions). */
static double empty_value(lt_op op)
{
    switch (op) {
    case LT_OP_PROD:
    case LT_OP_ALL: return 1.0;
    case LT_OP_MEAN:
    case LT_OP_VAR:
    case LT_OP_STD: return NAN;
    case LT_OP_LOGSUMEXP: return -INFINITY;
    default: return 0.0;
    }
}

static lt_status k_reduce(lt_op op, lt_tensor *const *in, int nin, const lt_attrs *a, const lt_meta *om,
                          lt_tensor **out)
{
    (void)nin, (void)om;
    const char *name = lt_op_name(op);
    lt_tensor *x = with_dtype(in[0], compute_dtype(op, (lt_dtype)in[0]->dtype), name);
    if (!x)
        return lt_last_status();
    bool mask[LT_MAX_DIMS];
    mask_from_attrs(in[0], a, mask);
    bool is_arg = op == LT_OP_MAX_DIM || op == LT_OP_MIN_DIM || op == LT_OP_ARGMAX || op == LT_OP_ARGMIN;
    reduce_geom g;
    geom_build(&g, x, mask, is_arg);
    lt_status st = LT_OK;
    if (g.n_out == 0) {
        /* nothing to compute */
    } else if (g.n_red == 0) {
        if (is_arg || op == LT_OP_AMAX || op == LT_OP_AMIN)
            st = lt_error(LT_ERR_SHAPE, "%s: cannot reduce over zero elements", name);
        else
            lt_eager_fill(out[0], empty_value(op));
    } else {
        switch (op) {
        case LT_OP_SUM: st = reduce_plain(&g, K_SUM, out[0], name); break;
        case LT_OP_PROD: st = reduce_plain(&g, K_PROD, out[0], name); break;
        case LT_OP_AMAX:
        case LT_OP_ANY: st = reduce_plain(&g, K_MAX, out[0], name); break;
        case LT_OP_AMIN:
        case LT_OP_ALL: st = reduce_plain(&g, K_MIN, out[0], name); break;
        case LT_OP_MEAN:
        case LT_OP_VAR:
        case LT_OP_STD: st = reduce_moments(op, &g, a->f[0], out[0], name); break;
        case LT_OP_LOGSUMEXP: st = reduce_logsumexp(&g, out[0], name); break;
        default: st = reduce_arg(op, &g, out, name); break;
        }
    }
    lt_tensor_unref(x);
    return st;
}

/* ========================================================================= */
/* Scans: cumsum, softmax, log_softmax                                        */
/* ========================================================================= */

/*
 * A scan sees its contiguous input as [outer, L, S]: L the scanned dim, S the
 * product of the dims after it. S == 1: each of the `outer` rows is one
 * contiguous line (row functions). S > 1: column functions handle nc <=
 * COL_BLOCK adjacent columns of an [L, S] block at once, streaming whole
 * rows (element (i, j) at x[i*S + j]).
 */
typedef void (*scan_row_fn)(const void *x, void *y, int64_t len);
typedef void (*scan_cols_fn)(const void *x, void *y, int64_t len, int64_t s, int64_t nc);

/* cumsum in accumulator type A (double for floats, uint64_t for i64). */
#define DEF_CUMSUM(NAME, T, A)                                                                     \
    static void NAME##_row(const void *xp, void *yp, int64_t len)                                  \
    {                                                                                              \
        const T *x = xp;                                                                           \
        T *y = yp;                                                                                 \
        A s = 0;                                                                                   \
        for (int64_t i = 0; i < len; i++) {                                                        \
            s += (A)x[i];                                                                          \
            y[i] = (T)s;                                                                           \
        }                                                                                          \
    }                                                                                              \
    static void NAME##_cols(const void *xp, void *yp, int64_t len, int64_t s, int64_t nc)          \
    {                                                                                              \
        A acc[COL_BLOCK];                                                                          \
        for (int64_t j = 0; j < nc; j++)                                                           \
            acc[j] = 0;                                                                            \
        for (int64_t i = 0; i < len; i++) {                                                        \
            const T *restrict x = (const T *)xp + i * s;                                           \
            T *restrict y = (T *)yp + i * s;                                                       \
            for (int64_t j = 0; j < nc; j++) {                                                     \
                acc[j] += (A)x[j];                                                                 \
                y[j] = (T)acc[j];                                                                  \
            }                                                                                      \
        }                                                                                          \
    }

DEF_CUMSUM(cumsum_f32, float, double)
DEF_CUMSUM(cumsum_f64, double, double)
DEF_CUMSUM(cumsum_i64, int64_t, uint64_t)

/* softmax / log_softmax in T, sums of exponentials in double. The row max
 * is subtracted first so exp never overflows; LOG selects log_softmax:
 * y = x - max - log(sum(exp(x - max))). */
#define DEF_SOFTMAX(NAME, T, EXP, MAXSTEP, MAXLINE, LOG)                                           \
    static void NAME##_row(const void *xp, void *yp, int64_t len)                                  \
    {                                                                                              \
        const T *restrict x = xp;                                                                  \
        T *restrict y = yp;                                                                        \
        T row_max = -INFINITY;                                                                     \
        MAXLINE(&row_max, x, len, 1, NULL, 0);                                                     \
        const T m = row_max; /* a copy that stores to y cannot alias */                            \
        double sum = 0;                                                                            \
        if (LOG) {                                                                                 \
            LT_PRAGMA(omp simd reduction(+ : sum))                                                 \
            for (int64_t i = 0; i < len; i++)                                                      \
                sum += EXP(x[i] - m);                                                              \
            T lse = (T)log(sum);                                                                   \
            for (int64_t i = 0; i < len; i++)                                                      \
                y[i] = x[i] - m - lse;                                                             \
        } else {                                                                                   \
            LT_PRAGMA(omp simd reduction(+ : sum))                                                 \
            for (int64_t i = 0; i < len; i++) {                                                    \
                T e = EXP(x[i] - m);                                                               \
                y[i] = e;                                                                          \
                sum += e;                                                                          \
            }                                                                                      \
            T inv = (T)(1.0 / sum);                                                                \
            for (int64_t i = 0; i < len; i++)                                                      \
                y[i] *= inv;                                                                       \
        }                                                                                          \
    }                                                                                              \
    static void NAME##_cols(const void *xp, void *yp, int64_t len, int64_t s, int64_t nc)          \
    {                                                                                              \
        T m[COL_BLOCK], f[COL_BLOCK];                                                              \
        double sum[COL_BLOCK];                                                                     \
        for (int64_t j = 0; j < nc; j++) {                                                         \
            m[j] = -INFINITY;                                                                      \
            sum[j] = 0;                                                                            \
        }                                                                                          \
        for (int64_t i = 0; i < len; i++) {                                                        \
            const T *x = (const T *)xp + i * s;                                                    \
            for (int64_t j = 0; j < nc; j++)                                                       \
                m[j] = MAXSTEP(m[j], x[j]);                                                        \
        }                                                                                          \
        for (int64_t i = 0; i < len; i++) {                                                        \
            const T *restrict x = (const T *)xp + i * s;                                           \
            T *restrict y = (T *)yp + i * s;                                                       \
            for (int64_t j = 0; j < nc; j++) {                                                     \
                T e = EXP(x[j] - m[j]);                                                            \
                if (!LOG)                                                                          \
                    y[j] = e;                                                                      \
                sum[j] += e;                                                                       \
            }                                                                                      \
        }                                                                                          \
        for (int64_t j = 0; j < nc; j++)                                                           \
            f[j] = LOG ? (T)log(sum[j]) : (T)(1.0 / sum[j]);                                       \
        for (int64_t i = 0; i < len; i++) {                                                        \
            const T *restrict x = (const T *)xp + i * s;                                           \
            T *restrict y = (T *)yp + i * s;                                                       \
            for (int64_t j = 0; j < nc; j++)                                                       \
                y[j] = LOG ? x[j] - m[j] - f[j] : y[j] * f[j];                                     \
        }                                                                                          \
    }

DEF_SOFTMAX(softmax_f32, float, lt_expf, max_f32_step, max_f32_line, 0)
DEF_SOFTMAX(softmax_f64, double, exp, max_f64_step, max_f64_line, 0)
DEF_SOFTMAX(log_softmax_f32, float, lt_expf, max_f32_step, max_f32_line, 1)
DEF_SOFTMAX(log_softmax_f64, double, exp, max_f64_step, max_f64_line, 1)

/* Picks the row/column functions of op for compute dtype dt. */
static void scan_fns(lt_op op, lt_dtype dt, scan_row_fn *row, scan_cols_fn *cols)
{
#define PICK(NAME) (*row = NAME##_row, *cols = NAME##_cols)
    bool f64 = dt == LT_F64;
    if (op == LT_OP_CUMSUM) {
        if (dt == LT_I64)
            PICK(cumsum_i64);
        else if (f64)
            PICK(cumsum_f64);
        else
            PICK(cumsum_f32);
    } else if (op == LT_OP_SOFTMAX) {
        if (f64)
            PICK(softmax_f64);
        else
            PICK(softmax_f32);
    } else {
        if (f64)
            PICK(log_softmax_f64);
        else
            PICK(log_softmax_f32);
    }
#undef PICK
}

typedef struct scan_job {
    scan_row_fn row;
    scan_cols_fn cols;
    const char *xb;
    char *yb;
    int64_t elem, blocks, len, s;
} scan_job;

static void scan_tasks(void *ctx, int64_t t0, int64_t t1, int64_t chunk)
{
    (void)chunk;
    const scan_job *j = ctx;
    for (int64_t t = t0; t < t1; t++) {
        int64_t o = t / j->blocks, b = t % j->blocks;
        int64_t off = (o * j->len * j->s + b * COL_BLOCK) * j->elem;
        if (j->s == 1)
            j->row(j->xb + off, j->yb + off, j->len);
        else
            j->cols(j->xb + off, j->yb + off, j->len, j->s, min64(COL_BLOCK, j->s - b * COL_BLOCK));
    }
}

/* Runs the scan over a contiguous x into a contiguous y of the same dtype
 * and shape, along dim d. */
static void scan_run(lt_op op, const lt_tensor *x, lt_tensor *y, int d)
{
    int64_t outer = 1, len = 1, s = 1;
    for (int k = 0; k < x->ndim; k++) {
        if (k < d)
            outer *= x->shape[k];
        else if (k == d)
            len = x->shape[k];
        else
            s *= x->shape[k];
    }
    int64_t numel = outer * len * s;
    if (numel == 0)
        return;
    scan_row_fn row;
    scan_cols_fn cols;
    scan_fns(op, (lt_dtype)x->dtype, &row, &cols);
    const char *xb = lt_tensor_ptr(x);
    char *yb = lt_tensor_ptr(y);
    int64_t elem = (int64_t)lt_dtype_size((lt_dtype)x->dtype);
    int64_t blocks = s == 1 ? 1 : ceil_div(s, COL_BLOCK);
    int64_t tasks = outer * blocks;
    bool parallel = numel >= LT_PARALLEL_GRAIN && tasks > 1;
    scan_job j = {row, cols, xb, yb, elem, blocks, len, s};
    lt_parallel_for(tasks, parallel ? 1 : tasks, 1, scan_tasks, &j);
}

static lt_status k_scan(lt_op op, lt_tensor *const *in, int nin, const lt_attrs *a, const lt_meta *om,
                        lt_tensor **out)
{
    (void)nin, (void)om;
    const char *name = lt_op_name(op);
    lt_dtype dt = (lt_dtype)in[0]->dtype;
    lt_dtype cdt = dt == LT_BF16 || dt == LT_F16 ? LT_F32 : lt_dtype_is_floating(dt) ? dt : LT_I64;
    int ndim = in[0]->ndim;
    int d = (int)(a->i[0] < 0 ? a->i[0] + (ndim > 0 ? ndim : 1) : a->i[0]);
    lt_tensor *x = lt_eager_as_contiguous(in[0], cdt, name);
    if (!x)
        return lt_last_status();
    lt_tensor *y = result_buffer(out[0], cdt, name);
    if (!y) {
        lt_tensor_unref(x);
        return lt_last_status();
    }
    scan_run(op, x, y, d);
    lt_tensor_unref(x);
    return finish_result(out[0], y, LT_OK);
}

void lt_eager_register_reduce(void)
{
    for (int op = 0; op < LT_OP_COUNT; op++) {
        if (lt_op_infos[op].cls == LT_OPC_REDUCE)
            lt_eager_set_kernel((lt_op)op, k_reduce);
        else if (lt_op_infos[op].cls == LT_OPC_SCAN)
            lt_eager_set_kernel((lt_op)op, k_scan);
    }
}
