/* factory.c - eager kernels of the deterministic factory ops (the random
 * ones live in random.c). */
#include "eager/eager.h"

#include <string.h>

static lt_status k_empty(lt_op op, lt_tensor *const *in, int nin, const lt_attrs *a,
                         const lt_meta *om, lt_tensor **out)
{
    (void)op, (void)in, (void)nin, (void)a, (void)om, (void)out;
    return LT_OK;
}

static lt_status k_full(lt_op op, lt_tensor *const *in, int nin, const lt_attrs *a,
                        const lt_meta *om, lt_tensor **out)
{
    (void)op, (void)in, (void)nin, (void)om;
    lt_eager_fill(out[0], a->f[0]);
    return LT_OK;
}

/* Writes value v at flat index i of a contiguous tensor. */
static void store_at(lt_tensor *t, int64_t i, double v)
{
    char *p = lt_tensor_ptr(t) + i * (int64_t)lt_dtype_size((lt_dtype)t->dtype);
    switch ((lt_dtype)t->dtype) {
    case LT_F32: LT_STORE_f32(p, v); break;
    case LT_F64: LT_STORE_f64(p, v); break;
    case LT_I32: LT_STORE_i32(p, v); break;
    case LT_I64: LT_STORE_i64(p, v); break;
    case LT_U8: LT_STORE_u8(p, v); break;
    case LT_BOOL: LT_STORE_b8(p, v); break;
    case LT_BF16: LT_STORE_bf16(p, v); break;
    case LT_F16: LT_STORE_f16(p, v); break;
    default: break;
    }
}

static lt_status k_arange(lt_op op, lt_tensor *const *in, int nin, const lt_attrs *a,
                          const lt_meta *om, lt_tensor **out)
{
    (void)op, (void)in, (void)nin;
    for (int64_t i = 0; i < om[0].shape[0]; i++)
        store_at(out[0], i, a->f[0] + (double)i * a->f[1]);
    return LT_OK;
}

/* Symmetric evaluation (from both ends) keeps the last value exact. */
static lt_status k_linspace(lt_op op, lt_tensor *const *in, int nin, const lt_attrs *a,
                            const lt_meta *om, lt_tensor **out)
{
    (void)op, (void)in, (void)nin;
    int64_t steps = om[0].shape[0];
    double start = a->f[0], end = a->f[1];
    double step = steps > 1 ? (end - start) / (double)(steps - 1) : 0.0;
    for (int64_t i = 0; i < steps; i++) {
        double v = 2 * i < steps ? start + step * (double)i : end - step * (double)(steps - 1 - i);
        store_at(out[0], i, v);
    }
    return LT_OK;
}

static lt_status k_eye(lt_op op, lt_tensor *const *in, int nin, const lt_attrs *a,
                       const lt_meta *om, lt_tensor **out)
{
    (void)op, (void)in, (void)nin, (void)a;
    int64_t n = om[0].shape[0], m = om[0].shape[1];
    lt_eager_fill(out[0], 0.0);
    for (int64_t i = 0; i < n && i < m; i++)
        store_at(out[0], i * m + i, 1.0);
    return LT_OK;
}

void lt_eager_register_factory(void)
{
    lt_eager_set_kernel(LT_OP_EMPTY, k_empty);
    lt_eager_set_kernel(LT_OP_FULL, k_full);
    lt_eager_set_kernel(LT_OP_ARANGE, k_arange);
    lt_eager_set_kernel(LT_OP_LINSPACE, k_linspace);
    lt_eager_set_kernel(LT_OP_EYE, k_eye);
    lt_eager_register_random();
    lt_eager_register_copy();
}
