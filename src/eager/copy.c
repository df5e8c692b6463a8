/* copy.c - dtype-converting strided copy, fill, and element access. */
#include "eager/eager.h"

#include <string.h>

/* One loop per (source, destination) dtype pair. */
#define DEF_CAST(S, D)                                                                       \
    static void cast_##S##_##D(int64_t n, char **p, const int64_t *st, const void *ctx)     \
    {                                                                                        \
        (void)ctx;                                                                           \
        if (LT_DENSE2(st, sizeof(LT_CTYPE_##D), sizeof(LT_CTYPE_##S))) {                     \
            LT_CTYPE_##D *o = (LT_CTYPE_##D *)p[0];                                          \
            const LT_CTYPE_##S *in = (const LT_CTYPE_##S *)p[1];                             \
            for (int64_t k = 0; k < n; k++)                                                  \
                LT_STORE_##D(o + k, LT_LOAD_##S(in + k));                                    \
        } else {                                                                             \
            for (int64_t k = 0; k < n; k++)                                                  \
                LT_STORE_##D(p[0] + k * st[0], LT_LOAD_##S(p[1] + k * st[1]));               \
        }                                                                                    \
    }
#define DEF_CAST_ROW(S, sfx, e) DEF_CAST(S, sfx)
#define DEF_CASTS_FROM(unused, S, e) LT_FOR_DTYPES_B(DEF_CAST_ROW, S)
LT_FOR_DTYPES_A(DEF_CASTS_FROM, _)

#define CAST_ENTRY(S, D, e) cast_##S##_##D,
#define CAST_ROW(unused, S, e) {LT_FOR_DTYPES_B(CAST_ENTRY, S)},
static const lt_loop_fn cast_loops[LT_NUM_DTYPES][LT_NUM_DTYPES] = {LT_FOR_DTYPES_A(CAST_ROW, _)};

/* A strided copy of n elements of type T (bit patterns: any dtype of that
 * size). Typed loads and stores, not a memcpy call per element: strided
 * copies (contiguous(), transposes, im2col's inverse) are a large part of
 * a convolution's step. */
#define DEF_STRIDED_COPY(T)                                                                  \
    static void strided_copy_##T(int64_t n, char *dst, int64_t ds, const char *src, int64_t ss) \
    {                                                                                        \
        for (int64_t k = 0; k < n; k++) {                                                    \
            T v;                                                                             \
            memcpy(&v, src + k * ss, sizeof v);                                              \
            memcpy(dst + k * ds, &v, sizeof v);                                              \
        }                                                                                    \
    }
DEF_STRIDED_COPY(uint8_t)
DEF_STRIDED_COPY(uint16_t)
DEF_STRIDED_COPY(uint32_t)
DEF_STRIDED_COPY(uint64_t)

/* Same dtype: one memcpy when dense, else a typed strided copy. */
static void copy_same(int64_t n, char **p, const int64_t *st, const void *ctx)
{
    size_t size = *(const size_t *)ctx;
    if (st[0] == (int64_t)size && st[1] == (int64_t)size) {
        memcpy(p[0], p[1], (size_t)n * size);
        return;
    }
    switch (size) {
    case 1: strided_copy_uint8_t(n, p[0], st[0], p[1], st[1]); return;
    case 2: strided_copy_uint16_t(n, p[0], st[0], p[1], st[1]); return;
    case 4: strided_copy_uint32_t(n, p[0], st[0], p[1], st[1]); return;
    case 8: strided_copy_uint64_t(n, p[0], st[0], p[1], st[1]); return;
    default:
        for (int64_t k = 0; k < n; k++)
            memcpy(p[0] + k * st[0], p[1] + k * st[1], size);
    }
}

void lt_eager_copy(lt_tensor *dst, lt_tensor *src)
{
    lt_iter it;
    lt_iter_build(&it, dst, &src, 1);
    if (dst->dtype == src->dtype) {
        size_t size = lt_dtype_size((lt_dtype)dst->dtype);
        lt_iter_run(&it, copy_same, &size);
    } else {
        lt_iter_run(&it, cast_loops[src->dtype][dst->dtype], NULL);
    }
}

#define DEF_FILL(unused, S, e)                                                               \
    static void fill_##S(int64_t n, char **p, const int64_t *st, const void *ctx)           \
    {                                                                                        \
        LT_CTYPE_##S v;                                                                      \
        LT_STORE_##S(&v, *(const double *)ctx);                                              \
        if (st[0] == (int64_t)sizeof v) {                                                    \
            LT_CTYPE_##S *o = (LT_CTYPE_##S *)p[0];                                          \
            for (int64_t k = 0; k < n; k++)                                                  \
                o[k] = v;                                                                    \
        } else {                                                                             \
            for (int64_t k = 0; k < n; k++)                                                  \
                memcpy(p[0] + k * st[0], &v, sizeof v);                                      \
        }                                                                                    \
    }
LT_FOR_DTYPES_A(DEF_FILL, _)
#define FILL_ENTRY(unused, S, e) fill_##S,
static const lt_loop_fn fill_loops[LT_NUM_DTYPES] = {LT_FOR_DTYPES_A(FILL_ENTRY, _)};

void lt_eager_fill(lt_tensor *dst, double value)
{
    lt_iter it;
    lt_iter_build(&it, dst, NULL, 0);
    lt_iter_run(&it, fill_loops[dst->dtype], &value);
}

lt_tensor *lt_eager_as_contiguous(lt_tensor *src, lt_dtype dt, const char *op)
{
    if (src->dtype == (int32_t)dt && lt_tensor_contiguous(src)) {
        atomic_fetch_add(&src->refcount, 1);
        return src;
    }
    lt_meta m = lt_tensor_meta(src);
    m.dtype = (int32_t)dt;
    m.weak = 0;
    lt_tensor *out = lt_tensor_alloc(&m, src->device, op);
    if (out)
        lt_eager_copy(out, src);
    return out;
}

int64_t lt_eager_offset_of(const lt_tensor *t, int64_t i)
{
    int64_t off = 0;
    for (int d = t->ndim - 1; d >= 0; d--) {
        int64_t size = t->shape[d];
        off += (i % size) * t->strides[d];
        i /= size;
    }
    return off * (int64_t)lt_dtype_size((lt_dtype)t->dtype);
}

double lt_eager_get(const lt_tensor *t, int64_t i)
{
    const char *p = lt_tensor_ptr(t) + lt_eager_offset_of(t, i);
    switch ((lt_dtype)t->dtype) {
    case LT_F32: return LT_LOAD_f32(p);
    case LT_F64: return LT_LOAD_f64(p);
    case LT_I32: return LT_LOAD_i32(p);
    case LT_I64: return (double)LT_LOAD_i64(p);
    case LT_U8: return LT_LOAD_u8(p);
    case LT_BOOL: return LT_LOAD_b8(p);
    case LT_BF16: return LT_LOAD_bf16(p);
    case LT_F16: return LT_LOAD_f16(p);
    default: return 0;
    }
}

/* ---- kernels of cast, copy and fill ------------------------------------ */

static lt_status k_cast(lt_op op, lt_tensor *const *in, int nin, const lt_attrs *a,
                        const lt_meta *om, lt_tensor **out)
{
    (void)op, (void)nin, (void)a, (void)om;
    lt_eager_copy(out[0], in[0]);
    return LT_OK;
}

/* copy(dst, src): in[0] is the destination, which the dispatcher passes as
 * out[0] (or a temporary when src overlaps it). */
static lt_status k_copy(lt_op op, lt_tensor *const *in, int nin, const lt_attrs *a,
                        const lt_meta *om, lt_tensor **out)
{
    (void)op, (void)nin, (void)a, (void)om;
    lt_eager_copy(out[0], in[1]);
    return LT_OK;
}

static lt_status k_fill(lt_op op, lt_tensor *const *in, int nin, const lt_attrs *a,
                        const lt_meta *om, lt_tensor **out)
{
    (void)op, (void)in, (void)nin, (void)om;
    lt_eager_fill(out[0], a->f[0]);
    return LT_OK;
}

void lt_eager_register_copy(void)
{
    lt_eager_set_kernel(LT_OP_CAST, k_cast);
    lt_eager_set_kernel(LT_OP_COPY, k_copy);
    lt_eager_set_kernel(LT_OP_FILL, k_fill);
}
