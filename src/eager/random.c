/*
 * random.c - eager kernels of RAND, RANDN and RANDINT, built on the
 * counter-based Philox4x32-10 generator (Salmon et al., "Parallel random
 * numbers: as easy as 1, 2, 3", SC 2011).
 *
 * A kernel is a pure function of its attributes: seed (f0 low 32 bits,
 * f1 high 32 bits), counter offset (f2), randint bounds (f3 low, f4 high),
 * shape and dtype. The lazy device can therefore replay the op from the
 * attributes alone, and results never depend on the thread count.
 *
 * Stream layout. Philox maps a 128-bit counter and a 64-bit key to four
 * 32-bit lanes (one "block"). Block b of an op uses
 *     counter = offset + b   (as a 128-bit number: ctr[0] low word ...),
 *     key     = {seed low 32 bits, seed high 32 bits}.
 * Each op packs a fixed number E of consecutive elements into a block;
 * element i lives in block i / E and takes lanes from slot i % E:
 *
 *   op      dtype            E  lanes of element slot s
 *   rand    f32, bf16, f16   4  lane s: (x >> 8) * 2^-24, 24 bits
 *   rand    f64              2  lanes 2s, 2s+1: (x0 >> 5, x1 >> 6) * 2^-53
 *   randn   f32, bf16, f16   4  Box-Muller on lanes (0,1) -> slots 0,1 and
 *                               on lanes (2,3) -> slots 2,3 (32-bit uniforms)
 *   randn   f64              2  Box-Muller on 52-bit (lanes 0,1) and 53-bit
 *                               (lanes 2,3) uniforms -> slots 0,1
 *   randint any              2  lanes 2s, 2s+1 as a 64-bit r: low + r % span
 *
 * An op on n elements consumes ceil(n / E) counters (lt_random_counters);
 * the public API advances the process offset by exactly that much.
 * randint's modulo is rejection free: its bias is at most span / 2^64,
 * below 2^-32 for spans under 2^32 and below 2^-10 for the largest allowed
 * span (2^54).
 */
#include "eager/eager.h"

#include <math.h>

/* ---- Philox4x32-10 ------------------------------------------------------ */

#define PHILOX_M0 0xD2511F53u /* round multipliers */
#define PHILOX_M1 0xCD9E8D57u
#define PHILOX_W0 0x9E3779B9u /* Weyl key increments (golden ratio, sqrt(3)-1) */
#define PHILOX_W1 0xBB67AE85u
#define PHILOX_ROUNDS 10

/* One Philox4x32-10 block: out = philox(ctr, key). */
static inline void philox4x32_10(const uint32_t ctr[4], const uint32_t key[2], uint32_t out[4])
{
    uint32_t c0 = ctr[0], c1 = ctr[1], c2 = ctr[2], c3 = ctr[3];
    uint32_t k0 = key[0], k1 = key[1];
    for (int round = 0; round < PHILOX_ROUNDS; round++) {
        uint64_t p0 = (uint64_t)PHILOX_M0 * c0;
        uint64_t p1 = (uint64_t)PHILOX_M1 * c2;
        c0 = (uint32_t)(p1 >> 32) ^ c1 ^ k0;
        c1 = (uint32_t)p1;
        c2 = (uint32_t)(p0 >> 32) ^ c3 ^ k1;
        c3 = (uint32_t)p0;
        k0 += PHILOX_W0;
        k1 += PHILOX_W1;
    }
    out[0] = c0;
    out[1] = c1;
    out[2] = c2;
    out[3] = c3;
}

/* The same, exported for the tests' known-answer checks. */
void lt_philox4x32_10(const uint32_t ctr[4], const uint32_t key[2], uint32_t out[4]);

void lt_philox4x32_10(const uint32_t ctr[4], const uint32_t key[2], uint32_t out[4])
{
    philox4x32_10(ctr, key, out);
}

/* ---- stream layout ------------------------------------------------------ */

/* Elements packed into one Philox block (E in the table above). */
static int elements_per_block(lt_op op, lt_dtype dt)
{
    if (op == LT_OP_RANDINT || dt == LT_F64)
        return 2;
    return 4;
}

/* Counters an op on numel elements consumes. Used by the public API to
 * advance the generator offset. */
int64_t lt_random_counters(lt_op op, lt_dtype dt, int64_t numel);

int64_t lt_random_counters(lt_op op, lt_dtype dt, int64_t numel)
{
    int64_t e = elements_per_block(op, dt);
    return numel <= 0 ? 0 : (numel - 1) / e + 1;
}

/* Everything a fill loop needs: where to write and which stream to read. */
typedef struct rng_job {
    lt_op op;         /* RAND, RANDN or RANDINT */
    uint32_t key[2];
    uint64_t offset;
    char *out;        /* contiguous output */
    int64_t numel;
    int per_block;    /* E */
    lt_dtype dtype;
    int64_t low;      /* randint */
    uint64_t span;    /* randint: high - low > 0 */
} rng_job;

/* Lanes of block b of the job's stream (128-bit counter offset + b). */
static inline void job_block(const rng_job *job, uint64_t b, uint32_t x[4])
{
    uint64_t lo = job->offset + b;
    uint32_t ctr[4] = {(uint32_t)lo, (uint32_t)(lo >> 32), lo < job->offset ? 1u : 0u, 0u};
    philox4x32_10(ctr, job->key, x);
}

/* Elements of block b that exist (the last block may be partial). */
static inline int block_count(const rng_job *job, int64_t b)
{
    int64_t left = job->numel - b * job->per_block;
    return left < job->per_block ? (int)left : job->per_block;
}

#define TWO_POW_M24 (1.0f / 16777216.0f)     /* 2^-24 */
#define TWO_POW_M32 (1.0 / 4294967296.0)     /* 2^-32 */
#define TWO_POW_M33 (1.0 / 8589934592.0)     /* 2^-33 */
#define TWO_POW_M53 (1.0 / 9007199254740992.0) /* 2^-53 */
#define TWO_PI 6.283185307179586476925286766559

/* Uniform in [0, 1) with 24 bits: exact in float. */
static inline float uniform24(uint32_t x) { return (float)(x >> 8) * TWO_POW_M24; }

/* Uniform in [0, 1) with 53 bits from two lanes: exact in double. */
static inline double uniform53(uint32_t a, uint32_t b)
{
    uint64_t m = ((uint64_t)(a >> 5) << 26) | (b >> 6);
    return (double)m * TWO_POW_M53;
}

/* Uniform in the open interval (0, 1) from 32 bits: (2x + 1) / 2^33, exact. */
static inline double open_uniform32(uint32_t x) { return (2.0 * (double)x + 1.0) * TWO_POW_M33; }

/* Uniform in (0, 1) from 52 bits of two lanes: (2m + 1) / 2^53, exact. */
static inline double open_uniform52(uint32_t a, uint32_t b)
{
    uint64_t m = ((uint64_t)(a >> 6) << 26) | (b >> 6);
    return (2.0 * (double)m + 1.0) * TWO_POW_M53;
}

/* Box-Muller: two independent standard normals from u1 in (0,1), u2 in [0,1). */
static inline void box_muller(double u1, double u2, double *z0, double *z1)
{
    double r = sqrt(-2.0 * log(u1));
    double theta = TWO_PI * u2;
    *z0 = r * cos(theta);
    *z1 = r * sin(theta);
}

/* Stores a uniform in [0, 1) as bf16/f16, never letting rounding reach
 * 1.0: the largest value below 1 is used instead. */
static inline uint16_t half_below_one(float u, lt_dtype dt)
{
    if (dt == LT_BF16) {
        uint16_t h = lt_f32_to_bf16(u);
        return h >= 0x3F80u ? (uint16_t)0x3F7Fu : h; /* 1.0 -> 1 - 2^-8 */
    }
    uint16_t h = lt_f32_to_f16(u);
    return h >= 0x3C00u ? (uint16_t)0x3BFFu : h;     /* 1.0 -> 1 - 2^-11 */
}

/* Stores value v at element i of the job's contiguous output. */
static inline void store(const rng_job *job, int64_t i, double v)
{
    switch (job->dtype) {
    case LT_F32: ((float *)job->out)[i] = (float)v; break;
    case LT_F64: ((double *)job->out)[i] = v; break;
    case LT_BF16: ((uint16_t *)job->out)[i] = lt_f32_to_bf16((float)v); break;
    case LT_F16: ((uint16_t *)job->out)[i] = lt_f32_to_f16((float)v); break;
    default: break;
    }
}

/* ---- the elements of one block ------------------------------------------- */

static inline void rand_block(const rng_job *job, int64_t i0, int n, const uint32_t x[4])
{
    if (job->dtype == LT_F32) {
        float *o = (float *)job->out + i0;
        for (int s = 0; s < n; s++)
            o[s] = uniform24(x[s]);
    } else if (job->dtype == LT_F64) {
        double *o = (double *)job->out + i0;
        for (int s = 0; s < n; s++)
            o[s] = uniform53(x[2 * s], x[2 * s + 1]);
    } else {
        uint16_t *o = (uint16_t *)job->out + i0;
        for (int s = 0; s < n; s++)
            o[s] = half_below_one(uniform24(x[s]), job->dtype);
    }
}

static inline void randn_block(const rng_job *job, int64_t i0, int n, const uint32_t x[4])
{
    double z[4];
    if (job->dtype == LT_F64) {
        box_muller(open_uniform52(x[0], x[1]), uniform53(x[2], x[3]), &z[0], &z[1]);
    } else {
        box_muller(open_uniform32(x[0]), (double)x[1] * TWO_POW_M32, &z[0], &z[1]);
        box_muller(open_uniform32(x[2]), (double)x[3] * TWO_POW_M32, &z[2], &z[3]);
    }
    for (int s = 0; s < n; s++)
        store(job, i0 + s, z[s]);
}

static inline void randint_block(const rng_job *job, int64_t i0, int n, const uint32_t x[4])
{
    for (int s = 0; s < n; s++) {
        uint64_t r = ((uint64_t)x[2 * s] << 32) | x[2 * s + 1];
        /* |low| <= 2^53 and span <= 2^54: the sum cannot overflow */
        int64_t v = job->low + (int64_t)(r % job->span);
        switch (job->dtype) {
        case LT_I64: ((int64_t *)job->out)[i0 + s] = v; break;
        case LT_I32: ((int32_t *)job->out)[i0 + s] = (int32_t)v; break;
        case LT_U8: ((uint8_t *)job->out)[i0 + s] = (uint8_t)v; break;
        default: store(job, i0 + s, (double)v); break;
        }
    }
}

/* Writes the elements of blocks [b0, b1). */
static void fill_blocks(const rng_job *job, int64_t b0, int64_t b1)
{
    for (int64_t b = b0; b < b1; b++) {
        uint32_t x[4];
        job_block(job, (uint64_t)b, x);
        int64_t i0 = b * job->per_block;
        int n = block_count(job, b);
        if (n > 4) /* never: tells the compiler lanes stay within x[4] */
            n = 4;
        switch (job->op) {
        case LT_OP_RAND: rand_block(job, i0, n, x); break;
        case LT_OP_RANDN: randn_block(job, i0, n, x); break;
        default: randint_block(job, i0, n, x); break;
        }
    }
}

/* Fills every block, split in contiguous block ranges per thread when the
 * tensor is large. Each block depends only on its index, so the result is
 * the same for any split. */
static void fill_chunk(void *ctx, int64_t b0, int64_t b1, int64_t chunk)
{
    (void)chunk;
    fill_blocks(ctx, b0, b1);
}

static void run_job(const rng_job *job)
{
    int64_t nblocks = job->numel <= 0 ? 0 : (job->numel - 1) / job->per_block + 1;
    int64_t grain = LT_PARALLEL_GRAIN / (job->per_block > 0 ? job->per_block : 1);
    lt_parallel_for(nblocks, grain > 0 ? grain : 1, 1, fill_chunk, (void *)job);
}

/* ---- attribute decoding ------------------------------------------------- */

#define TWO_POW_32 4294967296.0
#define TWO_POW_53 9007199254740992.0

/* True if v is an integer in [lo, hi] (so converting it is defined). */
static bool integral_in(double v, double lo, double hi)
{
    return v >= lo && v <= hi && v == floor(v);
}

/* Reads seed and offset (f0, f1, f2) into job. */
static lt_status decode_stream(const char *name, const lt_attrs *a, rng_job *job)
{
    if (!integral_in(a->f[0], 0, TWO_POW_32 - 1) || !integral_in(a->f[1], 0, TWO_POW_32 - 1))
        return lt_error(LT_ERR_ARGUMENT,
                        "%s: seed attributes (%g, %g) are not 32-bit unsigned integers", name,
                        a->f[0], a->f[1]);
    if (!integral_in(a->f[2], 0, TWO_POW_53))
        return lt_error(LT_ERR_ARGUMENT, "%s: counter offset attribute %g is not an integer in [0, 2^53]",
                        name, a->f[2]);
    job->key[0] = (uint32_t)a->f[0];
    job->key[1] = (uint32_t)a->f[1];
    job->offset = (uint64_t)a->f[2];
    return LT_OK;
}

/* Reads randint's bounds (f3 low, f4 high). The public API validates them
 * against the dtype; this guards the kernel's own arithmetic. */
static lt_status decode_bounds(const lt_attrs *a, rng_job *job)
{
    double low = a->f[3], high = a->f[4];
    if (!integral_in(low, -TWO_POW_53, TWO_POW_53) || !integral_in(high, -TWO_POW_53, TWO_POW_53) ||
        !(high > low))
        return lt_error(LT_ERR_ARGUMENT,
                        "randint: bounds [%.17g, %.17g) must be integers in [-2^53, 2^53] with high > low",
                        low, high);
    job->low = (int64_t)low;
    job->span = (uint64_t)((int64_t)high - job->low);
    return LT_OK;
}

/* ---- the kernel ---------------------------------------------------------- */

static lt_status k_random(lt_op op, lt_tensor *const *in, int nin, const lt_attrs *a,
                          const lt_meta *om, lt_tensor **out)
{
    (void)in, (void)nin;
    const char *name = lt_op_name(op);
    rng_job job = {0};
    lt_status st = decode_stream(name, a, &job);
    if (st == LT_OK && op == LT_OP_RANDINT)
        st = decode_bounds(a, &job);
    if (st != LT_OK)
        return st;
    job.dtype = (lt_dtype)om[0].dtype;
    job.numel = lt_shape_numel(om[0].shape, om[0].ndim);
    job.per_block = elements_per_block(op, job.dtype);
    /* Factory outputs are fresh and contiguous; a strided destination
     * would get its values through a contiguous temporary. */
    lt_tensor *dst = out[0];
    if (!lt_tensor_contiguous(dst)) {
        dst = lt_tensor_alloc(&om[0], out[0]->device, name);
        if (!dst)
            return lt_last_status();
    }
    job.out = lt_tensor_ptr(dst);
    job.op = op;
    run_job(&job);
    if (dst != out[0]) {
        lt_eager_copy(out[0], dst);
        lt_tensor_unref(dst);
    }
    return LT_OK;
}

void lt_eager_register_random(void)
{
    lt_eager_set_kernel(LT_OP_RAND, k_random);
    lt_eager_set_kernel(LT_OP_RANDN, k_random);
    lt_eager_set_kernel(LT_OP_RANDINT, k_random);
}
