/*
 * api_random.c - the process-wide random generator state and the public
 * random factories (lt_rand, lt_randn, lt_randint).
 *
 * The generator is counter based (Philox4x32-10, see eager/random.c): its
 * whole state is a 64-bit seed and a 64-bit counter offset. Each call
 * reads the state, passes it to the op as attributes (f0 seed low 32 bits,
 * f1 seed high 32 bits, f2 offset), and advances the offset by the number
 * of counters the op consumes. The numbers of a call thus depend only on
 * (seed, offset, shape, dtype[, low, high]), never on the thread count.
 *
 * Without lt_manual_seed the seed is LT_RNG_DEFAULT_SEED (PyTorch's default
 * seed value, 67280421310721) with offset 0. The offset travels as a double
 * attribute, so it is kept within [0, 2^53]; that is 2^55 random numbers
 * per seed at least.
 */
#include "api/api.h"

#include <pthread.h>
#include <string.h>

#define LT_RNG_DEFAULT_SEED UINT64_C(67280421310721)
#define LT_RNG_MAX_OFFSET (UINT64_C(1) << 53)
/* Integers travel as double attributes: exact up to 2^53 in magnitude. */
#define LT_MAX_EXACT_INT (INT64_C(1) << 53)


static pthread_mutex_t rng_lock = PTHREAD_MUTEX_INITIALIZER;
static uint64_t rng_seed = LT_RNG_DEFAULT_SEED;
static uint64_t rng_offset = 0;

void lt_manual_seed(uint64_t seed)
{
    pthread_mutex_lock(&rng_lock);
    rng_seed = seed;
    rng_offset = 0;
    pthread_mutex_unlock(&rng_lock);
}

void lt_rng_get_state(uint64_t *seed, uint64_t *offset)
{
    pthread_mutex_lock(&rng_lock);
    if (seed)
        *seed = rng_seed;
    if (offset)
        *offset = rng_offset;
    pthread_mutex_unlock(&rng_lock);
}

void lt_rng_set_state(uint64_t seed, uint64_t offset)
{
    if (offset > LT_RNG_MAX_OFFSET) {
        lt_error(LT_ERR_ARGUMENT, "rng_set_state: offset %llu is above the maximum 2^53 = %llu",
                 (unsigned long long)offset, (unsigned long long)LT_RNG_MAX_OFFSET);
        return;
    }
    pthread_mutex_lock(&rng_lock);
    rng_seed = seed;
    rng_offset = offset;
    pthread_mutex_unlock(&rng_lock);
}

/* Reserves `counters` counters: writes the current seed and offset into
 * a's f0..f2 and advances the offset. Fails if the offset would pass the
 * maximum (nothing is reserved then). */
static lt_status reserve_counters(const char *name, int64_t counters, lt_attrs *a)
{
    lt_status st = LT_OK;
    pthread_mutex_lock(&rng_lock);
    if ((uint64_t)counters > LT_RNG_MAX_OFFSET - rng_offset) {
        st = lt_error(LT_ERR_STATE,
                      "%s: the generator offset %llu cannot advance by %lld counters past 2^53 "
                      "(reseed with lt_manual_seed)",
                      name, (unsigned long long)rng_offset, (long long)counters);
    } else {
        a->f[0] = (double)(uint32_t)rng_seed;
        a->f[1] = (double)(uint32_t)(rng_seed >> 32);
        a->f[2] = (double)rng_offset;
        rng_offset += (uint64_t)counters;
    }
    pthread_mutex_unlock(&rng_lock);
    return st;
}

/* Fills the factory attributes, validates them with the op's own shape
 * rule (so a failing call consumes no counters), reserves the counters and
 * runs the op. a->f[3..] are already set by the caller. */
static lt_tensor *random_factory(lt_op op, const int64_t *dims, int ndim, lt_dtype dt, lt_device dev,
                                 lt_attrs *a)
{
    const char *name = lt_op_name(op);
    if (ndim < 0 || ndim > LT_MAX_DIMS)
        return lt_error(LT_ERR_SHAPE, "%s: %d dims requested, expected 0..%d", name, ndim, LT_MAX_DIMS), NULL;
    if (ndim > 0 && !dims)
        return lt_error(LT_ERR_NULL, "%s: dims is NULL but ndim is %d", name, ndim), NULL;
    if (dev.kind == LT_DEVICE_INVALID)
        return lt_error(LT_ERR_DEVICE, "%s: invalid device", name), NULL;
    if (ndim > 0)
        memcpy(a->i, dims, sizeof(int64_t) * (size_t)ndim);
    a->ni = ndim;
    a->dtype = (int32_t)dt;
    a->device = dev;
    lt_meta om[LT_MAX_OUTPUTS];
    if (lt_op_infer(op, NULL, 0, a, om) != LT_OK)
        return NULL;
    int64_t counters = lt_random_counters(op, dt, lt_shape_numel(om[0].shape, om[0].ndim));
    if (reserve_counters(name, counters, a) != LT_OK)
        return NULL;
    return lt_call(op, NULL, 0, a, NULL);
}

lt_tensor *lt_rand(const int64_t *dims, int ndim, lt_dtype dt, lt_device dev)
{
    lt_attrs a = lt_attrs_init();
    a.nf = 3;
    return random_factory(LT_OP_RAND, dims, ndim, dt, dev, &a);
}

lt_tensor *lt_randn(const int64_t *dims, int ndim, lt_dtype dt, lt_device dev)
{
    lt_attrs a = lt_attrs_init();
    a.nf = 3;
    return random_factory(LT_OP_RANDN, dims, ndim, dt, dev, &a);
}

/* Smallest and largest value randint may produce in dt: the dtype's range,
 * or for floating dtypes the range of consecutive exact integers (like
 * PyTorch), and for every dtype at most 2^53 in magnitude because the
 * bounds travel as double attributes. Returns false for bad dtypes. */
static bool randint_value_range(lt_dtype dt, int64_t *lo, int64_t *hi)
{
    int digits;
    switch (dt) {
    case LT_U8: *lo = 0; *hi = UINT8_MAX; return true;
    case LT_I32: *lo = INT32_MIN; *hi = INT32_MAX; return true;
    case LT_I64: digits = 53; break;
    case LT_F64: digits = 53; break;
    case LT_F32: digits = 24; break;
    case LT_F16: digits = 11; break;
    case LT_BF16: digits = 8; break;
    default: return false;
    }
    *hi = INT64_C(1) << digits;
    *lo = -*hi;
    return true;
}

lt_tensor *lt_randint(int64_t low, int64_t high, const int64_t *dims, int ndim, lt_dtype dt,
                      lt_device dev)
{
    if (high <= low)
        return lt_error(LT_ERR_ARGUMENT, "randint: high (%lld) must be greater than low (%lld)",
                        (long long)high, (long long)low), NULL;
    int64_t lo, hi;
    if (randint_value_range(dt, &lo, &hi)) {
        /* high is exclusive: the largest value drawn is high - 1 */
        if (low < lo || high - 1 > hi || high > LT_MAX_EXACT_INT)
            return lt_error(LT_ERR_ARGUMENT,
                            "randint: range [%lld, %lld) does not fit dtype %s (values must lie in "
                            "[%lld, %lld]%s)",
                            (long long)low, (long long)high, lt_dtype_name(dt), (long long)lo,
                            (long long)(hi < LT_MAX_EXACT_INT ? hi : LT_MAX_EXACT_INT - 1),
                            dt == LT_I64 ? "; bounds are limited to 2^53 in magnitude" : ""),
                   NULL;
    }
    /* invalid and bool dtypes are reported by the shape rule */
    lt_attrs a = lt_attrs_init();
    a.f[3] = (double)low;
    a.f[4] = (double)high;
    a.nf = 5;
    return random_factory(LT_OP_RANDINT, dims, ndim, dt, dev, &a);
}
