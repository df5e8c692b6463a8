/*
 * api_int_scalar.c - tensor-with-integer-scalar forms: the C counterpart of
 * a Python int operand, so that `int_tensor + 2` stays an integer tensor as
 * in torch (the `_scalar` forms take a double, a Python float).
 *
 * The scalar becomes a 0-d tensor of the dtype torch's promotion gives a
 * Python int here: the tensor's own dtype, i64 for a bool tensor. A 0-d
 * operand never widens a tensor with dims, so the result has the tensor's
 * dtype (f32 stays f32, u8 stays u8). A value the dtype cannot hold wraps
 * into it, as in torch (`uint8_tensor + 300` adds 44).
 */
#include "api/api.h"

/* s as a 0-d tensor of the dtype a Python int takes next to t. */
static lt_tensor *int_operand(const char *name, lt_tensor *t, int64_t s)
{
    if (lt_check_tensor(name, t, 0) != LT_OK)
        return NULL;
    lt_dtype dt = lt_tensor_dtype(t);
    if (dt == LT_BOOL)
        dt = LT_I64;
    lt_device dev = lt_tensor_device(t);
    if (lt_dtype_is_floating(dt)) /* converted like a Python int: to the nearest value */
        return lt_scalar((double)s, dt, dev);
    union {
        int64_t i64;
        int32_t i32;
        uint8_t u8;
    } v;
    if (dt == LT_U8) /* wraps (modulo 2^8 / 2^32) */
        v.u8 = (uint8_t)(uint64_t)s;
    else if (dt == LT_I32)
        v.i32 = (int32_t)(uint32_t)(uint64_t)s;
    else
        v.i64 = s;
    return lt_from_data(&v, NULL, 0, dt, dev);
}

/* op(t, s) or op(s, t); the operand lives in the function's own scope. */
static lt_tensor *with_int(const char *name, lt_tensor *(*op)(lt_tensor *, lt_tensor *), lt_tensor *t, int64_t s,
                           bool reversed)
{
    lt_scope_begin();
    lt_tensor *w = int_operand(name, t, s);
    lt_tensor *r = w ? (reversed ? op(w, t) : op(t, w)) : NULL;
    if (r)
        r = lt_keep(r);
    lt_scope_end();
    return r;
}

/* In place: dst = op(dst, s); returns dst. */
static lt_tensor *with_int_(const char *name, lt_tensor *(*op)(lt_tensor *, lt_tensor *), lt_tensor *dst,
                            int64_t s)
{
    lt_scope_begin();
    lt_tensor *w = int_operand(name, dst, s);
    lt_tensor *r = w ? op(dst, w) : NULL;
    lt_scope_end();
    return r;
}

lt_tensor *lt_add_iscalar(lt_tensor *t, int64_t s) { return with_int("add_iscalar", lt_add, t, s, false); }
lt_tensor *lt_sub_iscalar(lt_tensor *t, int64_t s) { return with_int("sub_iscalar", lt_sub, t, s, false); }
lt_tensor *lt_rsub_iscalar(lt_tensor *t, int64_t s) { return with_int("rsub_iscalar", lt_sub, t, s, true); }
lt_tensor *lt_mul_iscalar(lt_tensor *t, int64_t s) { return with_int("mul_iscalar", lt_mul, t, s, false); }
lt_tensor *lt_remainder_iscalar(lt_tensor *t, int64_t s)
{
    return with_int("remainder_iscalar", lt_remainder, t, s, false);
}
lt_tensor *lt_floor_divide_iscalar(lt_tensor *t, int64_t s)
{
    return with_int("floor_divide_iscalar", lt_floor_divide, t, s, false);
}
lt_tensor *lt_maximum_iscalar(lt_tensor *t, int64_t s) { return with_int("maximum_iscalar", lt_maximum, t, s, false); }
lt_tensor *lt_minimum_iscalar(lt_tensor *t, int64_t s) { return with_int("minimum_iscalar", lt_minimum, t, s, false); }

lt_tensor *lt_pow_iscalar(lt_tensor *t, int64_t s)
{
    if (lt_check_tensor("pow_iscalar", t, 0) != LT_OK)
        return NULL;
    if (s < 0 && !lt_dtype_is_floating(lt_tensor_dtype(t))) { /* as torch, for a scalar exponent */
        lt_error(LT_ERR_ARGUMENT, "pow_iscalar: integers to negative integer powers are not allowed (%s tensor, "
                 "exponent %lld)", lt_dtype_name(lt_tensor_dtype(t)), (long long)s);
        return NULL;
    }
    return with_int("pow_iscalar", lt_pow, t, s, false);
}

lt_tensor *lt_add_iscalar_(lt_tensor *dst, int64_t s) { return with_int_("add_iscalar_", lt_add_, dst, s); }
lt_tensor *lt_sub_iscalar_(lt_tensor *dst, int64_t s) { return with_int_("sub_iscalar_", lt_sub_, dst, s); }
lt_tensor *lt_mul_iscalar_(lt_tensor *dst, int64_t s) { return with_int_("mul_iscalar_", lt_mul_, dst, s); }
