/*
 * conv.c - the eager conv2d kernels, forward and weight gradient: im2col +
 * gemm per (image, group).
 *
 * For each image n and group g, the input channels of the group are
 * unfolded into a column matrix cols [Cg*kH*kW, Ho*Wo] (zero where the
 * window hangs over the padding), and the group's output planes are
 * W_g [Og, Cg*kH*kW] x cols. A 1x1 kernel with stride 1 and no padding
 * needs no unfolding: the input planes already are that matrix. Images are
 * unfolded a few at a time (a bounded buffer, one parallel region per pass)
 * and the bias is added to each pass's planes while they are still in
 * cache. bf16/f16 compute in f32 and convert back.
 *
 * The weight gradient unfolds x the same way and accumulates, image by
 * image, dW_g += gy_(n, g) x cols_(n, g)^T: no strided gathers of x and no
 * patch matrix of the whole batch. The input gradient is the adjoint of
 * the forward pass: cols = W_g^T x gy_(n, g), folded back onto the input
 * planes (col2im), with no zero-padded or zero-spread copy of gy.
 *
 * The unfolding runs on the library's pool; BLAS is called outside it and
 * splits its own products there (lt_blas_gemm).
 */
#include "eager/nn_kernels.h"

#include <string.h>

/* Sizes of one conv2d call. */
typedef struct conv_geom {
    int64_t n, c, h, w;          /* input */
    int64_t o, kh, kw;           /* weight */
    int64_t ho, wo;              /* output plane */
    int64_t sh, sw, ph, pw, dh, dw, groups;
    int64_t cg, og;              /* channels per group: input, output */
    int64_t k;                   /* gemm inner size cg * kh * kw */
    int64_t p;                   /* output plane size ho * wo */
} conv_geom;

/* The geometry of a convolution of x with a kernel of o x kh x kw whose
 * output planes (y, or the output gradient) are ho x wo. */
static conv_geom geom_of(const lt_tensor *x, int64_t o, int64_t kh, int64_t kw, const lt_tensor *y, const lt_attrs *a)
{
    conv_geom g;
    g.n = x->shape[0], g.c = x->shape[1], g.h = x->shape[2], g.w = x->shape[3];
    g.o = o, g.kh = kh, g.kw = kw;
    g.ho = y->shape[2], g.wo = y->shape[3];
    g.sh = a->i[0], g.sw = a->i[1], g.ph = a->i[2], g.pw = a->i[3], g.dh = a->i[4], g.dw = a->i[5];
    g.groups = a->i[6];
    g.cg = g.c / g.groups, g.og = g.o / g.groups;
    g.k = g.cg * g.kh * g.kw;
    g.p = g.ho * g.wo;
    return g;
}

/* The output columns [lo, hi) whose input column ow*stride + off lies in
 * [0, size). */
static void valid_range(int64_t off, int64_t stride, int64_t size, int64_t count, int64_t *lo, int64_t *hi)
{
    int64_t first = off >= 0 ? 0 : (-off + stride - 1) / stride;
    int64_t last = size - 1 - off < 0 ? 0 : (size - 1 - off) / stride + 1;
    *hi = last < count ? last : count;
    *lo = first < *hi ? first : *hi;
}

/* A parallel loop over planes of g->p values. */
typedef struct conv_job {
    const void *src;
    void *dst;
    const conv_geom *g;
    int64_t first; /* index of the loop's first plane */
} conv_job;

/* Planes of g->p values per parallel chunk. */
static int64_t plane_grain(const conv_geom *g)
{
    return g->p > 0 && g->p < LT_PARALLEL_GRAIN ? LT_PARALLEL_GRAIN / g->p : 1;
}

/* Images unfolded per im2col pass: bounds the column buffer to about one
 * core's L2 cache, so that the columns are still cached when the gemm packs
 * them (or, for the input gradient, when col2im folds them); a pass holds
 * one image at least. Measured on the MNIST-example CNN step: 1 MB costs
 * 0.8x the CPU time of 8 MB. */
#define COLS_BUFFER_BYTES ((int64_t)1 << 20)

/* im2col of `images` whole images (all channels): x points at the first
 * image; col receives, per image and channel, kh * kw rows of ho * wo
 * values, so the rows of group g of image b start at row (b * groups + g) * k. */
#define DEF_IM2COL(T, sfx)                                                                      \
    static void im2col_rows_##sfx(void *ctx, int64_t r0, int64_t r1, int64_t chunk)             \
    {                                                                                           \
        const conv_job *j = ctx;                                                                \
        const T *x = j->src;                                                                    \
        T *col = j->dst;                                                                        \
        const conv_geom *g = j->g;                                                              \
        (void)chunk;                                                                            \
        for (int64_t r = r0; r < r1; r++) {                                                     \
            int64_t ki = (r / g->kw) % g->kh, kj = r % g->kw;                                    \
            const T *plane = x + r / (g->kh * g->kw) * g->h * g->w; /* image * c + channel */   \
            int64_t woff = kj * g->dw - g->pw, lo, hi;                                           \
            valid_range(woff, g->sw, g->w, g->wo, &lo, &hi);                                     \
            for (int64_t oh = 0; oh < g->ho; oh++) {                                             \
                T *dst = col + r * g->p + oh * g->wo;                                            \
                int64_t ih = oh * g->sh - g->ph + ki * g->dh;                                    \
                if (ih < 0 || ih >= g->h) {                                                      \
                    memset(dst, 0, sizeof(T) * (size_t)g->wo);                                   \
                    continue;                                                                   \
                }                                                                               \
                const T *src = plane + ih * g->w;                                                \
                for (int64_t ow = 0; ow < lo; ow++)                                              \
                    dst[ow] = 0;                                                                \
                if (g->sw == 1) {                                                               \
                    for (int64_t ow = lo; ow < hi; ow++)                                         \
                        dst[ow] = src[ow + woff];                                               \
                } else {                                                                        \
                    for (int64_t ow = lo; ow < hi; ow++)                                         \
                        dst[ow] = src[ow * g->sw + woff];                                       \
                }                                                                               \
                for (int64_t ow = hi; ow < g->wo; ow++)                                          \
                    dst[ow] = 0;                                                                \
            }                                                                                   \
        }                                                                                       \
    }                                                                                           \
    static void im2col_##sfx(const T *x, T *col, int64_t images, const conv_geom *g)             \
    {                                                                                           \
        conv_job j = {.src = x, .dst = col, .g = g};                                            \
        lt_parallel_for(images * g->c * g->kh * g->kw, plane_grain(g), 1, im2col_rows_##sfx, &j); \
    }
DEF_IM2COL(float, f32)
DEF_IM2COL(double, f64)

/* col2im, the adjoint of im2col: planes [q0, q1) (image * c + channel,
 * counted from j->first) of x receive the sum of their kh * kw rows of
 * columns, each row added at the positions im2col read it from. */
#define DEF_COL2IM(T, sfx)                                                                      \
    static void col2im_planes_##sfx(void *ctx, int64_t q0, int64_t q1, int64_t chunk)           \
    {                                                                                           \
        const conv_job *j = ctx;                                                                \
        const T *col = j->src;                                                                  \
        T *x = j->dst;                                                                          \
        const conv_geom *g = j->g;                                                              \
        (void)chunk;                                                                            \
        for (int64_t q = q0; q < q1; q++) {                                                     \
            T *plane = x + (j->first + q) * g->h * g->w;                                        \
            memset(plane, 0, sizeof(T) * (size_t)(g->h * g->w));                                \
            for (int64_t r = q * g->kh * g->kw; r < (q + 1) * g->kh * g->kw; r++) {             \
                int64_t ki = (r / g->kw) % g->kh, kj = r % g->kw;                                \
                int64_t woff = kj * g->dw - g->pw, lo, hi;                                       \
                valid_range(woff, g->sw, g->w, g->wo, &lo, &hi);                                 \
                for (int64_t oh = 0; oh < g->ho; oh++) {                                         \
                    int64_t ih = oh * g->sh - g->ph + ki * g->dh;                                \
                    if (ih < 0 || ih >= g->h)                                                    \
                        continue;                                                               \
                    const T *src = col + r * g->p + oh * g->wo;                                  \
                    T *dst = plane + ih * g->w + woff;                                           \
                    for (int64_t ow = lo; ow < hi; ow++)                                         \
                        dst[ow * g->sw] += src[ow];                                             \
                }                                                                               \
            }                                                                                   \
        }                                                                                       \
    }                                                                                           \
    static void col2im_##sfx(const T *col, T *x, int64_t first, int64_t images, const conv_geom *g) \
    {                                                                                           \
        conv_job j = {.src = col, .dst = x, .g = g, .first = first * g->c};                     \
        lt_parallel_for(images * g->c, plane_grain(g), 1, col2im_planes_##sfx, &j);             \
    }
DEF_COL2IM(float, f32)
DEF_COL2IM(double, f64)

/* Adds bias[o] to every element of output planes (n, o) of images
 * [first, first + images). */
#define DEF_ADD_BIAS(T, sfx)                                                                    \
    static void add_bias_planes_##sfx(void *ctx, int64_t q0, int64_t q1, int64_t chunk)          \
    {                                                                                           \
        const conv_job *j = ctx;                                                                \
        const T *bias = j->src;                                                                 \
        T *y = j->dst;                                                                          \
        const conv_geom *g = j->g;                                                              \
        (void)chunk;                                                                            \
        for (int64_t q = q0 + j->first; q < q1 + j->first; q++) {                               \
            T v = bias[q % g->o], *dst = y + q * g->p;                                           \
            for (int64_t i = 0; i < g->p; i++)                                                  \
                dst[i] += v;                                                                    \
        }                                                                                       \
    }                                                                                           \
    static void add_bias_##sfx(T *y, const T *bias, int64_t first, int64_t images, const conv_geom *g) \
    {                                                                                           \
        conv_job j = {.src = bias, .dst = y, .g = g, .first = first * g->o};                    \
        lt_parallel_for(images * g->o, plane_grain(g), 1, add_bias_planes_##sfx, &j);           \
    }
DEF_ADD_BIAS(float, f32)
DEF_ADD_BIAS(double, f64)

static void add_bias(lt_dtype dt, char *y, const lt_tensor *bias, int64_t first, int64_t images,
                     const conv_geom *g)
{
    if (!bias)
        return;
    if (dt == LT_F64)
        add_bias_f64((double *)y, (const double *)lt_tensor_ptr(bias), first, images, g);
    else
        add_bias_f32((float *)y, (const float *)lt_tensor_ptr(bias), first, images, g);
}

/* The gemms of images [first, first + images): B matrices come from the
 * unfolded columns, or straight from x for 1x1 kernels (direct). */
static void conv_gemms(const char *x, const char *w, const char *cols, char *y, int64_t first, int64_t images,
                       bool direct, lt_dtype dt, const conv_geom *g)
{
    size_t elem = lt_dtype_size(dt);
    for (int64_t b = 0; b < images; b++) {
        int64_t n = first + b;
        for (int64_t gi = 0; gi < g->groups; gi++) {
            const char *src = direct ? x + (size_t)((n * g->c + gi * g->cg) * g->p) * elem
                                     : cols + (size_t)((b * g->groups + gi) * g->k * g->p) * elem;
            const char *wg = w + (size_t)(gi * g->og * g->k) * elem;
            char *yg = y + (size_t)((n * g->o + gi * g->og) * g->p) * elem;
            lt_blas_gemm(dt, false, false, g->og, g->p, g->k, wg, g->k, src, g->p, yg, g->p);
        }
    }
}

/* Images per unfolding pass (all of them when no unfolding is needed);
 * 0 with an error if one image's columns do not fit in memory. */
static int64_t images_per_pass(bool direct, size_t elem, const conv_geom *g)
{
    int64_t image_bytes; /* unfolded columns of one image, all groups */
    if (__builtin_mul_overflow(g->k * g->groups, g->p * (int64_t)elem, &image_bytes)) {
        lt_error(LT_ERR_MEMORY, "conv2d: the unfolded input (%lld x %lld per image) does not fit in memory",
                 (long long)(g->k * g->groups), (long long)g->p);
        return 0;
    }
    int64_t chunk = direct ? g->n : COLS_BUFFER_BYTES / image_bytes;
    return chunk < 1 ? 1 : chunk > g->n ? g->n : chunk;
}

/* One of the three kernels at work: its operands (contiguous, dtype dt),
 * its output and the column buffer of a pass (NULL when direct: a 1x1
 * kernel with stride 1 and no padding needs no unfolding). */
typedef struct conv_pass {
    lt_dtype dt;
    const conv_geom *g;
    bool direct;
    const char *a, *b; /* forward: x, w; weight gradient: x, gy; input gradient: gy, w */
    const lt_tensor *bias;
    char *out, *cols;
} conv_pass;

/* im2col of images [first, first + images) of x (ps->a) into the columns. */
static void unfold(const conv_pass *ps, int64_t first, int64_t images)
{
    const conv_geom *g = ps->g;
    const char *xn = ps->a + (size_t)(first * g->c * g->h * g->w) * lt_dtype_size(ps->dt);
    if (ps->dt == LT_F64)
        im2col_f64((const double *)xn, (double *)ps->cols, images, g);
    else
        im2col_f32((const float *)xn, (float *)ps->cols, images, g);
}

/* Runs pass(ps, first, images) over the batch, a bounded number of images
 * at a time, with a column buffer for them unless the kernel is direct. */
static lt_status run_passes(conv_pass *ps, const char *name, void (*pass)(const conv_pass *, int64_t, int64_t))
{
    const conv_geom *g = ps->g;
    if (!lt_blas_fits(g->og) || !lt_blas_fits(g->p) || !lt_blas_fits(g->k))
        return lt_error(LT_ERR_UNSUPPORTED, "%s: gemm of %lld x %lld x %lld is too large for BLAS", name,
                        (long long)g->og, (long long)g->k, (long long)g->p);
    size_t elem = lt_dtype_size(ps->dt);
    ps->direct = g->kh == 1 && g->kw == 1 && g->sh == 1 && g->sw == 1 && g->ph == 0 && g->pw == 0;
    int64_t chunk = images_per_pass(ps->direct, elem, g);
    if (chunk == 0)
        return lt_last_status();
    ps->cols = NULL;
    if (!ps->direct && !(ps->cols = lt_alloc((size_t)(chunk * g->k * g->groups * g->p) * elem, name)))
        return lt_last_status();
    for (int64_t n0 = 0; n0 < g->n; n0 += chunk)
        pass(ps, n0, g->n - n0 < chunk ? g->n - n0 : chunk);
    if (ps->cols)
        lt_free(ps->cols);
    return LT_OK;
}

/* ---- forward ---- */

static void forward_pass(const conv_pass *ps, int64_t first, int64_t images)
{
    if (!ps->direct)
        unfold(ps, first, images);
    conv_gemms(ps->a, ps->b, ps->cols, ps->out, first, images, ps->direct, ps->dt, ps->g);
    add_bias(ps->dt, ps->out, ps->bias, first, images, ps->g);
}

/* The convolution proper on contiguous tensors of dtype dt (f32/f64). */
static lt_status conv_compute(const lt_tensor *x, const lt_tensor *w, const lt_tensor *bias, lt_tensor *y,
                              lt_dtype dt, const conv_geom *g)
{
    conv_pass ps = {.dt = dt, .g = g, .a = lt_tensor_ptr(x), .b = lt_tensor_ptr(w), .bias = bias,
                    .out = lt_tensor_ptr(y)};
    if (g->k == 0) { /* no input channels: only the bias remains */
        memset(ps.out, 0, (size_t)(g->n * g->o * g->p) * lt_dtype_size(dt));
        add_bias(dt, ps.out, bias, 0, g->n, g);
        return LT_OK;
    }
    return run_passes(&ps, "conv2d", forward_pass);
}

/* ---- weight gradient ---- */

/* dW_g [Og, k] += gy_(n, g) [Og, P] x cols_(b, g)^T for the pass's images,
 * in order (the sum's order depends on the shapes only). */
static void wgrad_pass(const conv_pass *ps, int64_t first, int64_t images)
{
    const conv_geom *g = ps->g;
    size_t elem = lt_dtype_size(ps->dt);
    if (!ps->direct)
        unfold(ps, first, images);
    for (int64_t b = 0; b < images; b++) {
        int64_t n = first + b;
        for (int64_t gi = 0; gi < g->groups; gi++) {
            const char *src = ps->direct ? ps->a + (size_t)((n * g->c + gi * g->cg) * g->p) * elem
                                         : ps->cols + (size_t)((b * g->groups + gi) * g->k * g->p) * elem;
            const char *gyg = ps->b + (size_t)((n * g->o + gi * g->og) * g->p) * elem;
            char *dwg = ps->out + (size_t)(gi * g->og * g->k) * elem;
            lt_blas_gemm_acc(ps->dt, false, true, g->og, g->k, g->p, gyg, g->p, src, g->p, dwg, g->k);
        }
    }
}

/* conv2d's weight gradient on contiguous tensors of dtype dt: x [N, C, H, W]
 * and gy [N, O, Ho, Wo] into dw [O, C/groups, kH, kW], unfolding x as the
 * forward pass does. */
static lt_status wgrad_compute(const lt_tensor *x, const lt_tensor *gy, lt_tensor *dw, lt_dtype dt,
                               const conv_geom *g)
{
    conv_pass ps = {.dt = dt, .g = g, .a = lt_tensor_ptr(x), .b = lt_tensor_ptr(gy), .out = lt_tensor_ptr(dw)};
    memset(ps.out, 0, (size_t)(g->o * g->k) * lt_dtype_size(dt));
    if (g->n == 0 || g->p == 0 || g->k == 0)
        return LT_OK;
    return run_passes(&ps, "conv2d backward", wgrad_pass);
}

/* ---- input gradient ---- */

/* cols_(b, g) [k, P] = W_g^T [k, Og] x gy_(n, g) [Og, P] for the pass's
 * images, folded back onto dx's planes (col2im); for a direct kernel the
 * product goes straight into the planes. */
static void igrad_pass(const conv_pass *ps, int64_t first, int64_t images)
{
    const conv_geom *g = ps->g;
    size_t elem = lt_dtype_size(ps->dt);
    for (int64_t b = 0; b < images; b++) {
        int64_t n = first + b;
        for (int64_t gi = 0; gi < g->groups; gi++) {
            char *dst = ps->direct ? ps->out + (size_t)((n * g->c + gi * g->cg) * g->p) * elem
                                   : ps->cols + (size_t)((b * g->groups + gi) * g->k * g->p) * elem;
            const char *gyg = ps->a + (size_t)((n * g->o + gi * g->og) * g->p) * elem;
            const char *wg = ps->b + (size_t)(gi * g->og * g->k) * elem;
            lt_blas_gemm(ps->dt, true, false, g->k, g->p, g->og, wg, g->k, gyg, g->p, dst, g->p);
        }
    }
    if (!ps->direct && ps->dt == LT_F64)
        col2im_f64((const double *)ps->cols, (double *)ps->out, first, images, g);
    else if (!ps->direct)
        col2im_f32((const float *)ps->cols, (float *)ps->out, first, images, g);
}

/* conv2d's input gradient on contiguous tensors of dtype dt: gy
 * [N, O, Ho, Wo] and w [O, C/groups, kH, kW] into dx [N, C, H, W]. */
static lt_status igrad_compute(const lt_tensor *gy, const lt_tensor *w, lt_tensor *dx, lt_dtype dt,
                               const conv_geom *g)
{
    conv_pass ps = {.dt = dt, .g = g, .a = lt_tensor_ptr(gy), .b = lt_tensor_ptr(w), .out = lt_tensor_ptr(dx)};
    if (g->p == 0 || g->k == 0 || g->og == 0) {
        memset(ps.out, 0, (size_t)(g->n * g->c * g->h * g->w) * lt_dtype_size(dt));
        return LT_OK;
    }
    return run_passes(&ps, "conv2d backward", igrad_pass);
}

/* Runs a conv kernel: its inputs made contiguous in the compute dtype
 * (f64 stays f64, every other floating dtype computes in f32), its result
 * computed into y directly or through a contiguous buffer of that dtype. */
static lt_status run_conv(lt_op op, lt_tensor *const *in, int nin, const lt_meta *om, lt_tensor *y,
                          const lt_attrs *a)
{
    lt_dtype dt = y->dtype == LT_F64 ? LT_F64 : LT_F32;
    const char *name = lt_op_name(op);
    lt_tensor *ops[3] = {NULL, NULL, NULL}, *c = y;
    lt_status st = LT_OK;
    for (int i = 0; i < nin && st == LT_OK; i++)
        if (!(ops[i] = lt_eager_as_contiguous(in[i], dt, name)))
            st = lt_last_status();
    if (st == LT_OK && (dt != (lt_dtype)y->dtype || !lt_tensor_contiguous(y))) {
        lt_meta m = om[0];
        m.dtype = (int32_t)dt;
        if (!(c = lt_tensor_alloc(&m, y->device, name)))
            st = lt_last_status();
    }
    if (st == LT_OK && op == LT_OP_CONV2D_WEIGHT_GRAD) {
        conv_geom g = geom_of(in[0], y->shape[0], y->shape[2], y->shape[3], in[1], a);
        st = wgrad_compute(ops[0], ops[1], c, dt, &g);
    } else if (st == LT_OK && op == LT_OP_CONV2D_INPUT_GRAD) {
        conv_geom g = geom_of(y, in[1]->shape[0], in[1]->shape[2], in[1]->shape[3], in[0], a);
        st = igrad_compute(ops[0], ops[1], c, dt, &g);
    } else if (st == LT_OK) {
        conv_geom g = geom_of(in[0], in[1]->shape[0], in[1]->shape[2], in[1]->shape[3], y, a);
        st = conv_compute(ops[0], ops[1], ops[2], c, dt, &g);
    }
    if (st == LT_OK && c != y)
        lt_eager_copy(y, c);
    if (c && c != y)
        lt_tensor_unref(c);
    for (int i = 0; i < nin; i++)
        if (ops[i])
            lt_tensor_unref(ops[i]);
    return st;
}

/* conv2d, its weight gradient and its input gradient (by op). */
lt_status lt_eager_conv2d(lt_op op, lt_tensor *const *in, int nin, const lt_attrs *a, const lt_meta *om,
                          lt_tensor **out)
{
    if (lt_shape_numel(out[0]->shape, out[0]->ndim) == 0)
        return LT_OK;
    return run_conv(op, in, nin, om, out[0], a);
}
