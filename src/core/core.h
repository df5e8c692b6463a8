/*
 * core.h - internal core of lazytensor: tensor handles, refcounted storage,
 * scopes, the caching allocator, dtypes, shapes and errors.
 *
 * Every other layer builds on this one; it depends on nothing but libc.
 */
#ifndef LT_CORE_H
#define LT_CORE_H

#include "lazytensor.h"

#include <stdatomic.h>
#include <stdarg.h>

/* ---- metadata ----------------------------------------------------------- */

/* Dtype and shape of a value: what inference produces. `weak` marks a
 * wrapped C scalar for type promotion. */
typedef struct lt_meta {
    int32_t dtype;
    int32_t ndim;
    int32_t weak;
    int64_t shape[LT_MAX_DIMS];
} lt_meta;

/* Product of the sizes (0 if any size is 0, however large the others);
 * INT64_MAX when it overflows, which lt_check_shape never lets through. */
int64_t lt_shape_numel(const int64_t *shape, int ndim);
/* The same product into *numel; false (and INT64_MAX) on overflow. */
bool lt_shape_numel_checked(const int64_t *shape, int ndim, int64_t *numel);
/* Largest span (bytes, sizes of 0 counted as 1) of any valid shape, so
 * strides, byte offsets and partial size products never overflow int64. */
#define LT_MAX_SPAN_BYTES ((int64_t)1 << 59)
bool lt_shape_equal(const int64_t *a, int an, const int64_t *b, int bn);
/* Writes "[2, 3]" into buf; returns buf. */
const char *lt_shape_str(const int64_t *shape, int ndim, char *buf, size_t cap);
/* Row-major contiguous strides (in elements) for shape. */
void lt_contiguous_strides(const int64_t *shape, int ndim, int64_t *strides);
/* Checks 0 <= ndim <= LT_MAX_DIMS, sizes >= 0, that the byte size fits in
 * memory and, for shapes with 0 elements, that the span fits in
 * LT_MAX_SPAN_BYTES; error names op. Every tensor's shape passes it. */
lt_status lt_check_shape(const char *op, const int64_t *shape, int ndim, lt_dtype dt);
bool lt_dtype_valid(int dt);
/* A meta with the given dtype and shape (weak = 0). */
lt_meta lt_meta_make(lt_dtype dt, const int64_t *shape, int ndim);

/* ---- errors ------------------------------------------------------------- */

/* Sets the thread-local error (printf format) and returns status. Runs the
 * handler and the LT_ERRORS=abort policy. */
lt_status lt_error(lt_status status, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
/* True if an error is pending on this thread. */
bool lt_error_pending(void);

/* ---- allocator (caching, size classes) ---------------------------------- */

/* Returns a 64-byte aligned buffer of at least nbytes, or NULL with an
 * LT_ERR_MEMORY error naming op. nbytes == 0 gives a valid unique pointer. */
void *lt_alloc(size_t nbytes, const char *op);
/* Returns a buffer from lt_alloc to the cache. */
void lt_free(void *ptr);
/* malloc / realloc that, when the OS refuses, empty the buffer cache
 * (lt_mem_trim) and try once more. For large host buffers outside it. */
void *lt_sys_malloc(size_t nbytes);
void *lt_sys_realloc(void *ptr, size_t nbytes);

/* ---- storage and tensors ------------------------------------------------ */

typedef struct lt_storage {
    atomic_int refcount;
    atomic_uint version; /* bumped by every in-place write (autograd checks it) */
    void *data;
    size_t nbytes;
    lt_device device;
    /* External memory (lt_from_external): released through this callback
     * instead of going back to the allocator. NULL for the library's own. */
    void (*release)(void *ctx);
    void *release_ctx;
} lt_storage;

#define LT_TENSOR_MAGIC 0x4c54544eu /* "LTTN" */
#define LT_TENSOR_DEAD 0xdeadbeefu

struct lt_tensor {
    uint32_t magic;
    atomic_int refcount;          /* the user's references */
    atomic_int holds;             /* internal holds, plus one while refcount > 0 */
    int32_t dtype;
    int32_t ndim;
    int64_t shape[LT_MAX_DIMS];
    int64_t strides[LT_MAX_DIMS]; /* in elements */
    int64_t offset;               /* in elements */
    lt_device device;
    lt_storage *storage;          /* NULL for tensors without data yet (lazy) */
    uint64_t id;                  /* unique, increasing */
    int32_t weak;                 /* wrapped C scalar (type promotion) */
    void *lazy;                   /* lazy-device state, owned by that layer */
    void *autograd;               /* autograd state, owned by that layer */
    struct lt_tensor *next_free;  /* handle quarantine list */
    const char *made_by;          /* op or function that made it (static; leak reports) */
};

/* A refcounted storage of nbytes (refcount 1), or NULL with an error. */
lt_storage *lt_storage_new(size_t nbytes, lt_device dev, const char *op);
/* A storage of nbytes with no buffer yet (data NULL, device kind
 * LT_DEVICE_INVALID until its owner gives it one), refcount 1; or NULL
 * with an error. */
lt_storage *lt_storage_placeholder(size_t nbytes, const char *op);
/* Drops one storage reference; frees the buffer at zero. NULL-safe. */
void lt_storage_unref(lt_storage *s);
/* Allocates a tensor with fresh contiguous storage (uninitialized). */
lt_tensor *lt_tensor_alloc(const lt_meta *m, lt_device dev, const char *op);
/* A new handle viewing t's storage with the given geometry. */
lt_tensor *lt_tensor_view_of(lt_tensor *t, const int64_t *shape, const int64_t *strides,
                             int ndim, int64_t offset);
/* A handle with no storage (for devices that attach data later). */
lt_tensor *lt_tensor_new_handle(const lt_meta *m, lt_device dev);
/* Registers a fresh reference (refcount 1) with the innermost scope, if
 * any. Every public function returning a new tensor calls this once. */
lt_tensor *lt_tensor_publish(lt_tensor *t);
/* Moves the device payload (device, storage, geometry, device state) of
 * `from` into `to` and the old payload of `to` into `from`, keeping each
 * handle's identity (id, references, autograd state). Both must have the
 * same dtype and shape. The caller fixes up device-layer bookkeeping that
 * points at handles (the lazy registry: lt_lazy_adopt). */
void lt_tensor_swap_payload(lt_tensor *to, lt_tensor *from);
/* Drops one reference. At zero the handle is dead for its user (every
 * later use is LT_ERR_RELEASED) and it is freed unless it is held. */
void lt_tensor_unref(lt_tensor *t);
/* Internal holds keep a handle's state (storage, device state) alive
 * without giving its user a reference: a lazy view holds its base, so the
 * base's user can release it (and is told when releasing it twice) while
 * the view keeps working. A handle is freed when its last user reference
 * and its last hold are both gone. */
void lt_tensor_hold(lt_tensor *t);
void lt_tensor_drop(lt_tensor *t);
/* Validates a public tensor argument: NULL -> keeps the first error (or
 * sets LT_ERR_NULL naming op); dead handle -> LT_ERR_RELEASED. A live
 * handle is checked inline (every op checks every input); the rest is
 * lt_check_tensor_failed, which reports what is wrong. */
lt_status lt_check_tensor_failed(const char *op, const lt_tensor *t, int arg_index);
static inline lt_status lt_check_tensor(const char *op, const lt_tensor *t, int arg_index)
{
    if (t && t->magic == LT_TENSOR_MAGIC)
        return LT_OK;
    return lt_check_tensor_failed(op, t, arg_index);
}
/* Fills m with dtype, ndim, weak and shape[0, ndim), the other sizes 0.
 * Inline and without libc calls: ops build several metas each. */
static inline void lt_meta_fill(lt_meta *m, int32_t dtype, const int64_t *shape, int ndim, int32_t weak)
{
    m->dtype = dtype;
    m->ndim = ndim;
    m->weak = weak;
    for (int d = 0; d < LT_MAX_DIMS; d++)
        m->shape[d] = d < ndim ? shape[d] : 0;
}
/* Sizes [0, ndim) of a full LT_MAX_DIMS array, the others 0: every entry
 * is read, so the copy needs no branch (and vectorizes). */
static inline void lt_dims_copy_masked(int64_t *to, const int64_t *from, int ndim)
{
    for (int d = 0; d < LT_MAX_DIMS; d++) {
        int64_t size = from[d];
        to[d] = d < ndim ? size : 0;
    }
}
/* The metadata of t. */
static inline lt_meta lt_tensor_meta(const lt_tensor *t)
{
    lt_meta m;
    m.dtype = t->dtype;
    m.ndim = t->ndim;
    m.weak = t->weak;
    lt_dims_copy_masked(m.shape, t->shape, t->ndim);
    return m;
}
/* Pointer to element 0 of a CPU tensor (storage + offset). */
static inline char *lt_tensor_ptr(const lt_tensor *t)
{
    return (char *)t->storage->data + t->offset * (int64_t)lt_dtype_size((lt_dtype)t->dtype);
}
bool lt_tensor_contiguous(const lt_tensor *t);

/* Calls fn on every handle whose user still holds a reference (under the
 * handle lock: fn must not create or drop tensors). */
void lt_tensor_foreach_live(void (*fn)(const lt_tensor *t, void *ctx), void *ctx);

/* Hook run when a tensor handle dies (the lazy layer unregisters it from
 * its device's live set). Set by upper layers at init. */
typedef void (*lt_tensor_death_hook)(lt_tensor *t);
void lt_set_tensor_death_hook(lt_device_kind kind, lt_tensor_death_hook hook);

/* Hook that says whether this thread may drop tensors of a device kind
 * (the lazy device belongs to one thread at a time): LT_OK, or an error
 * naming op. lt_release and lt_scope_end leave a refused tensor alive. */
typedef lt_status (*lt_device_guard_hook)(const char *op);
void lt_set_device_guard_hook(lt_device_kind kind, lt_device_guard_hook hook);

/* Set by the lazy layer when it is linked in and initialized. */
extern bool lt_lazy_device_available;
/* LT_OK for a device tensors can be made on (cpu:0, or lazy:0 when the
 * lazy layer is there), else LT_ERR_DEVICE naming op. */
lt_status lt_device_check_available(const char *op, lt_device dev);

/* Hook run when a tensor with autograd state dies (set by autograd). */
typedef void (*lt_autograd_release_hook)(lt_tensor *t);
void lt_set_autograd_release_hook(lt_autograd_release_hook hook);

/* ---- half-precision conversion ----------------------------------------- */

float lt_bf16_to_f32(uint16_t h);
uint16_t lt_f32_to_bf16(float f);
float lt_f16_to_f32(uint16_t h);
uint16_t lt_f32_to_f16(float f);

/* ---- float to integer conversion ---------------------------------------- */

/* C leaves a float-to-integer conversion undefined when the truncated value
 * does not fit (NaN, an infinity, 3e38 to i32). These give a defined result,
 * the one x86's truncating conversions give and PyTorch shows on CPU: the
 * type's minimum for i32 and i64; u8 takes the low byte of the i32 result
 * (300.0 -> 44, -1.0 -> 255). Eager kernels use them through LT_STORE_* and
 * generated code carries copies (compiler/render.c), so both agree. */
static inline int32_t lt_float_to_i32(double v)
{
    return (v > -2147483649.0 && v < 2147483648.0) ? (int32_t)v : INT32_MIN;
}
static inline int64_t lt_float_to_i64(double v)
{
    return (v >= -9223372036854775808.0 && v < 9223372036854775808.0) ? (int64_t)v : INT64_MIN;
}
static inline uint8_t lt_float_to_u8(double v) { return (uint8_t)(uint32_t)lt_float_to_i32(v); }

/* ---- threads ------------------------------------------------------------ */

/* Elements of elementwise work above which kernels go parallel. */
#define LT_PARALLEL_GRAIN 32768

#endif
