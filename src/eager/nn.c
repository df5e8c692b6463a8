/*
 * nn.c - eager kernels of 2-D pooling, and the registration of the whole
 * nn group (matmul lives in matmul.c, conv2d in conv.c).
 *
 * Pooling works on contiguous [N, C, H, W] data in f32 (also for bf16/f16,
 * converted) or f64, one (n, c) plane at a time, planes in parallel when the
 * work is large. Max pooling treats the padding as -inf, propagates NaN
 * (the last NaN of a window wins, like PyTorch) and records the flat index
 * h * W + w of the maximum within its plane. Average pooling divides by the
 * kernel size (count_include_pad) or by the number of real elements.
 */
#include "eager/nn_kernels.h"

#include <math.h>

/* Sizes of one pooling call; attributes as in ops.def. */
typedef struct pool_geom {
    int64_t planes, h, w, ho, wo;
    int64_t kh, kw, sh, sw, ph, pw;
    bool include_pad;
} pool_geom;

static pool_geom pool_geom_of(const lt_tensor *x, const lt_tensor *y, const lt_attrs *a)
{
    pool_geom g;
    g.planes = x->shape[0] * x->shape[1];
    g.h = x->shape[2], g.w = x->shape[3], g.ho = y->shape[2], g.wo = y->shape[3];
    g.kh = a->i[0], g.kw = a->i[1], g.sh = a->i[2], g.sw = a->i[3], g.ph = a->i[4], g.pw = a->i[5];
    g.include_pad = (a->flag & 1) != 0;
    return g;
}

/* The part [lo, hi) inside the input of the window of output position o
 * along one axis. (Without ceil mode a window never reaches past the
 * padding, so counting the padding always gives kernel elements.) */
typedef struct window {
    int64_t lo, hi;
} window;

static window window_at(int64_t o, int64_t stride, int64_t pad, int64_t kernel, int64_t size)
{
    window win;
    int64_t start = o * stride - pad;
    win.lo = start > 0 ? start : 0;
    win.hi = start + kernel < size ? start + kernel : size;
    return win;
}

/* Planes per parallel chunk: about LT_PARALLEL_GRAIN window reads each
 * (double: kernels may be huge). */
static int64_t planes_grain(const pool_geom *g)
{
    double per_plane = (double)(g->ho * g->wo) * (double)g->kh * (double)g->kw;
    return per_plane >= LT_PARALLEL_GRAIN ? 1 : per_plane < 1 ? LT_PARALLEL_GRAIN : (int64_t)(LT_PARALLEL_GRAIN / per_plane);
}

/* A pooling loop over planes. */
typedef struct pool_job {
    const void *x;
    void *y;
    int64_t *idx;
    const pool_geom *g;
} pool_job;

/* Outputs of one row handled at a time by the unpadded max pooling. */
#define POOL_ROW_BLOCK 256

/* Max pooling without padding: every window lies inside the input, so a
 * block of outputs of one row is built one window offset (ki, kj) at a
 * time, the outputs innermost: the compare and select vectorize, and the
 * position is kept as the offset's number (int32) until the block is done.
 * Each output still sees its window's elements in the generic loop's order
 * (ih, then iw, ascending), so maxima, indices and the NaN rule are the
 * same. 4x faster than the generic loop on 2x2 windows. */
#define DEF_MAX_POOL_UNPADDED(T, sfx)                                                           \
    static void max_pool_block_##sfx(const T *xp, int64_t top, int64_t count, T *y, int64_t *idx, \
                                     const pool_geom *g)                                        \
    {                                                                                           \
        T best[POOL_ROW_BLOCK];                                                                 \
        int32_t offset[POOL_ROW_BLOCK];                                                         \
        const int64_t sw = g->sw;                                                               \
        for (int64_t o = 0; o < count; o++) {                                                   \
            best[o] = -INFINITY;                                                                \
            offset[o] = 0;                                                                      \
        }                                                                                       \
        int32_t k = 0;                                                                          \
        for (int64_t ki = 0; ki < g->kh; ki++) {                                                \
            for (int64_t kj = 0; kj < g->kw; kj++, k++) {                                       \
                const T *src = xp + top + ki * g->w + kj;                                       \
                _Pragma("omp simd") for (int64_t o = 0; o < count; o++)                         \
                {                                                                               \
                    T v = src[o * sw];                                                          \
                    bool take = (v > best[o]) | (v != v);                                       \
                    best[o] = take ? v : best[o];                                               \
                    offset[o] = take ? k : offset[o];                                           \
                }                                                                               \
            }                                                                                   \
        }                                                                                       \
        for (int64_t o = 0; o < count; o++) {                                                   \
            y[o] = best[o];                                                                     \
            idx[o] = top + o * sw + offset[o] / g->kw * g->w + offset[o] % g->kw;               \
        }                                                                                       \
    }                                                                                           \
    static void max_pool_plane_unpadded_##sfx(const T *xp, T *y, int64_t *idx, const pool_geom *g) \
    {                                                                                           \
        for (int64_t oh = 0; oh < g->ho; oh++) {                                                \
            for (int64_t o0 = 0; o0 < g->wo; o0 += POOL_ROW_BLOCK) {                            \
                int64_t count = g->wo - o0 < POOL_ROW_BLOCK ? g->wo - o0 : POOL_ROW_BLOCK;      \
                int64_t out = oh * g->wo + o0;                                                  \
                max_pool_block_##sfx(xp, oh * g->sh * g->w + o0 * g->sw, count, y + out, idx + out, g); \
            }                                                                                   \
        }                                                                                       \
    }
DEF_MAX_POOL_UNPADDED(float, f32)
DEF_MAX_POOL_UNPADDED(double, f64)

#define DEF_MAX_POOL(T, sfx)                                                                    \
    static void max_pool_planes_##sfx(void *ctx, int64_t q0, int64_t q1, int64_t chunk)         \
    {                                                                                           \
        const pool_job *j = ctx;                                                                \
        const T *x = j->x;                                                                      \
        T *y = j->y;                                                                            \
        int64_t *idx = j->idx;                                                                  \
        const pool_geom *g = j->g;                                                              \
        (void)chunk;                                                                            \
        if (g->ph == 0 && g->pw == 0 && g->kh * g->kw <= INT32_MAX) {                          \
            for (int64_t q = q0; q < q1; q++)                                                   \
                max_pool_plane_unpadded_##sfx(x + q * g->h * g->w, y + q * g->ho * g->wo,        \
                                              idx + q * g->ho * g->wo, g);                      \
            return;                                                                             \
        }                                                                                       \
        for (int64_t q = q0; q < q1; q++) {                                                     \
            const T *xp = x + q * g->h * g->w;                                                  \
            int64_t out = q * g->ho * g->wo;                                                    \
            for (int64_t oh = 0; oh < g->ho; oh++) {                                            \
                window wh = window_at(oh, g->sh, g->ph, g->kh, g->h);                           \
                for (int64_t ow = 0; ow < g->wo; ow++, out++) {                                 \
                    window ww = window_at(ow, g->sw, g->pw, g->kw, g->w);                       \
                    T best = -INFINITY;                                                         \
                    int64_t best_at = wh.lo * g->w + ww.lo;                                     \
                    for (int64_t ih = wh.lo; ih < wh.hi; ih++) {                                \
                        for (int64_t iw = ww.lo; iw < ww.hi; iw++) {                            \
                            T v = xp[ih * g->w + iw];                                           \
                            if (v > best || isnan(v)) {                                         \
                                best = v;                                                       \
                                best_at = ih * g->w + iw;                                       \
                            }                                                                   \
                        }                                                                       \
                    }                                                                           \
                    y[out] = best;                                                              \
                    idx[out] = best_at;                                                         \
                }                                                                               \
            }                                                                                   \
        }                                                                                       \
    }                                                                                           \
    static void max_pool_##sfx(const T *x, T *y, int64_t *idx, const pool_geom *g)              \
    {                                                                                           \
        pool_job j = {x, y, idx, g};                                                            \
        lt_parallel_for(g->planes, planes_grain(g), 1, max_pool_planes_##sfx, &j);              \
    }
DEF_MAX_POOL(float, f32)
DEF_MAX_POOL(double, f64)

#define DEF_AVG_POOL(T, sfx)                                                                    \
    static void avg_pool_planes_##sfx(void *ctx, int64_t q0, int64_t q1, int64_t chunk)         \
    {                                                                                           \
        const pool_job *j = ctx;                                                                \
        const T *x = j->x;                                                                      \
        T *y = j->y;                                                                            \
        const pool_geom *g = j->g;                                                              \
        (void)chunk;                                                                            \
        for (int64_t q = q0; q < q1; q++) {                                                     \
            const T *xp = x + q * g->h * g->w;                                                  \
            int64_t out = q * g->ho * g->wo;                                                    \
            for (int64_t oh = 0; oh < g->ho; oh++) {                                            \
                window wh = window_at(oh, g->sh, g->ph, g->kh, g->h);                           \
                for (int64_t ow = 0; ow < g->wo; ow++, out++) {                                 \
                    window ww = window_at(ow, g->sw, g->pw, g->kw, g->w);                       \
                    double sum = 0;                                                             \
                    for (int64_t ih = wh.lo; ih < wh.hi; ih++)                                  \
                        for (int64_t iw = ww.lo; iw < ww.hi; iw++)                              \
                            sum += xp[ih * g->w + iw];                                          \
                    int64_t count = g->include_pad ? g->kh * g->kw                              \
                                                   : (wh.hi - wh.lo) * (ww.hi - ww.lo);         \
                    y[out] = (T)(sum / (double)count);                                          \
                }                                                                               \
            }                                                                                   \
        }                                                                                       \
    }                                                                                           \
    static void avg_pool_##sfx(const T *x, T *y, const pool_geom *g)                            \
    {                                                                                           \
        pool_job j = {x, y, NULL, g};                                                           \
        lt_parallel_for(g->planes, planes_grain(g), 1, avg_pool_planes_##sfx, &j);              \
    }
DEF_AVG_POOL(float, f32)
DEF_AVG_POOL(double, f64)

/* A contiguous tensor of dtype dt shaped like m for a kernel to write:
 * dst itself when it already is one (one more reference), else a new one. */
static lt_tensor *writable(lt_tensor *dst, lt_meta m, lt_dtype dt, const char *name)
{
    if (dst->dtype == (int32_t)dt && lt_tensor_contiguous(dst)) {
        atomic_fetch_add(&dst->refcount, 1);
        return dst;
    }
    m.dtype = (int32_t)dt;
    return lt_tensor_alloc(&m, dst->device, name);
}

/* Copies a kernel's buffer back into dst (if it is not dst) and drops it. */
static void write_back(lt_tensor *dst, lt_tensor *buf)
{
    if (buf != dst)
        lt_eager_copy(dst, buf);
    lt_tensor_unref(buf);
}

/* Shared driver: converts the input to the compute dtype, runs the pooling
 * into buffers of that dtype and converts back into the outputs. */
static lt_status k_pool2d(lt_op op, lt_tensor *const *in, int nin, const lt_attrs *a, const lt_meta *om,
                          lt_tensor **out)
{
    (void)nin;
    const char *name = lt_op_name(op);
    bool with_indices = op == LT_OP_MAX_POOL2D;
    if (lt_shape_numel(out[0]->shape, out[0]->ndim) == 0)
        return LT_OK;
    lt_dtype dt = out[0]->dtype == LT_F64 ? LT_F64 : LT_F32;
    pool_geom g = pool_geom_of(in[0], out[0], a);
    lt_tensor *x = lt_eager_as_contiguous(in[0], dt, name);
    lt_tensor *y = x ? writable(out[0], om[0], dt, name) : NULL;
    lt_tensor *idx = y && with_indices ? writable(out[1], om[1], LT_I64, name) : NULL;
    if (!x || !y || (with_indices && !idx)) {
        lt_status st = lt_last_status();
        if (x)
            lt_tensor_unref(x);
        if (y)
            lt_tensor_unref(y);
        return st;
    }
    void *yp = lt_tensor_ptr(y);
    const void *xp = lt_tensor_ptr(x);
    if (with_indices && dt == LT_F64)
        max_pool_f64(xp, yp, (int64_t *)lt_tensor_ptr(idx), &g);
    else if (with_indices)
        max_pool_f32(xp, yp, (int64_t *)lt_tensor_ptr(idx), &g);
    else if (dt == LT_F64)
        avg_pool_f64(xp, yp, &g);
    else
        avg_pool_f32(xp, yp, &g);
    write_back(out[0], y);
    if (idx)
        write_back(out[1], idx);
    lt_tensor_unref(x);
    return LT_OK;
}

void lt_eager_register_nn(void)
{
    lt_eager_set_kernel(LT_OP_MATMUL, lt_eager_matmul);
    lt_eager_set_kernel(LT_OP_CONV2D, lt_eager_conv2d);
    lt_eager_set_kernel(LT_OP_CONV2D_WEIGHT_GRAD, lt_eager_conv2d);
    lt_eager_set_kernel(LT_OP_CONV2D_INPUT_GRAD, lt_eager_conv2d);
    lt_eager_set_kernel(LT_OP_MAX_POOL2D, k_pool2d);
    lt_eager_set_kernel(LT_OP_AVG_POOL2D, k_pool2d);
}
