/*
 * lazytensor.h - the one public header of lazytensor.
 *
 * lazytensor is a C11 tensor library with eager semantics. On the "cpu"
 * device every call runs at once.  (A "lazy" device that records an IR graph
 * and compiles it at a barrier shares this same API.)
 *
 * ---------------------------------------------------------------------------
 * OWNERSHIP (refcount + scopes)
 * ---------------------------------------------------------------------------
 *  - Every function that returns a new `lt_tensor *` returns one reference.
 *    If a scope is open (lt_scope_begin), that reference belongs to the
 *    innermost open scope and is dropped by lt_scope_end. If no scope is
 *    open, the reference belongs to the caller, who must lt_release it.
 *  - lt_keep(t) gives `t` one extra reference owned by the parent scope (or
 *    by the caller if the current scope is the outermost one), so a result
 *    survives the end of the scope that made it.
 *  - lt_retain(t) adds a reference owned by the caller; lt_release(t) drops
 *    one caller-owned reference.
 *  - lt_persist(t) makes the reference a call just returned caller-owned,
 *    whatever the context: w = lt_persist(lt_randn(...)) gives exactly one
 *    reference to release later, inside a scope or not. (lt_retain of a
 *    fresh result is right inside a scope but leaks outside one.) Use it
 *    for long-lived tensors (parameters, optimizer state).
 *  - Leaks: lt_live_tensors / lt_live_tensor_report list the tensors still
 *    referenced, with the op that made each; with LT_DEBUG=1 in the
 *    environment the report is printed on stderr at exit when any is left.
 *  - Nested expressions such as lt_add(lt_mul(x, w), b) therefore leak
 *    nothing inside a scope.
 *  - In-place functions (names ending in '_') return their destination
 *    argument without adding a reference.
 *  - Views share storage with their base; storage lives while any tensor
 *    using it lives.
 *  - Using a tensor after its last reference is dropped is detected (the
 *    handle is quarantined before reuse) and reported as an error.
 *
 * ---------------------------------------------------------------------------
 * ERRORS
 * ---------------------------------------------------------------------------
 *  A failing call returns NULL (or a non-LT_OK lt_status) and sets a
 *  thread-local message, read with lt_last_error(): it names the op, the
 *  shapes and dtypes involved and what was expected. Any op given a NULL
 *  input returns NULL and keeps the first message, so a chain of calls fails
 *  once, cleanly. Setting the environment variable LT_ERRORS=abort, or
 *  installing a handler with lt_set_error_handler(), makes errors fatal or
 *  observable. User mistakes never abort the process otherwise.
 *
 * ---------------------------------------------------------------------------
 * CONVENTIONS
 * ---------------------------------------------------------------------------
 *  - Shapes are `const int64_t *dims, int ndim` (at most LT_MAX_DIMS dims).
 *  - Dimension arguments may be negative (counted from the end).
 *  - Binary ops broadcast like NumPy/PyTorch. Result dtypes follow PyTorch's
 *    type promotion: tensors with dimensions dominate zero-dim tensors,
 *    which dominate plain C scalars (the `_scalar` forms); a C double scalar
 *    counts as a Python float (an integer tensor times 2.5 gives f32).
 *  - Mixing devices in one op is an error; use lt_to() to move data.
 */
#ifndef LAZYTENSOR_H
#define LAZYTENSOR_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/** Maximum number of dimensions of a tensor. */
#define LT_MAX_DIMS 8

/** Opaque tensor handle. */
typedef struct lt_tensor lt_tensor;

/* ========================================================================= */
/* Status and errors                                                          */
/* ========================================================================= */

/** Result codes. LT_OK is 0; everything else is an error. */
typedef enum lt_status {
    LT_OK = 0,
    LT_ERR_NULL,        /**< a NULL tensor or pointer was given */
    LT_ERR_ARGUMENT,    /**< an argument is out of its valid range */
    LT_ERR_SHAPE,       /**< shapes do not match what the op expects */
    LT_ERR_DTYPE,       /**< a dtype the op does not accept */
    LT_ERR_DEVICE,      /**< mixed or unknown devices */
    LT_ERR_INDEX,       /**< an index is out of range */
    LT_ERR_MEMORY,      /**< allocation failed or size is absurd */
    LT_ERR_RELEASED,    /**< a tensor was used after its release */
    LT_ERR_STATE,       /**< API misuse (e.g. scope_end without begin) */
    LT_ERR_UNSUPPORTED, /**< valid request this build cannot perform */
    LT_ERR_IO,          /**< file or stream failure */
    LT_ERR_DIST         /**< a collective failed: ranks disagree, a rank was lost or timed out */
} lt_status;

/** Message of the last error on this thread ("" if none). Never NULL. */
const char *lt_last_error(void);
/** Status of the last error on this thread (LT_OK if none). */
lt_status lt_last_status(void);
/** Clears this thread's error state. */
void lt_clear_error(void);
/** Short name of a status code, e.g. "LT_ERR_SHAPE". */
const char *lt_status_name(lt_status s);

/** Called on every error with its status and message. */
typedef void (*lt_error_handler)(lt_status status, const char *message, void *user);
/**
 * Installs a process-wide error handler (NULL removes it). The handler runs
 * after the thread-local message is set. LT_ERRORS=abort in the environment
 * makes the library print the message and abort() on the first error.
 */
void lt_set_error_handler(lt_error_handler handler, void *user);

/* ========================================================================= */
/* Dtypes                                                                     */
/* ========================================================================= */

/** Element types. bf16 and f16 are storage types: ops compute in f32. */
typedef enum lt_dtype {
    LT_F32 = 0,
    LT_F64,
    LT_I32,
    LT_I64,
    LT_U8,
    LT_BOOL,
    LT_BF16,
    LT_F16,
    LT_NUM_DTYPES
} lt_dtype;

/** Name of a dtype ("f32", "bool", ...); "invalid" for bad values. */
const char *lt_dtype_name(lt_dtype dt);
/** Size in bytes of one element; 0 for invalid dtypes. */
size_t lt_dtype_size(lt_dtype dt);
/** True for f32, f64, bf16, f16. */
bool lt_dtype_is_floating(lt_dtype dt);
/** PyTorch's promote_types(a, b): the smallest type that holds both. */
lt_dtype lt_promote_types(lt_dtype a, lt_dtype b);

/* ========================================================================= */
/* Devices                                                                    */
/* ========================================================================= */

/*
 * THREADS
 *  - The cpu device may be used from several threads at once. Tensor
 *    handles, reference counts, the buffer cache, the random generator,
 *    metrics and the error handler are shared safely; errors, scopes and
 *    grad mode are per thread. Tensors themselves are plain data: several
 *    threads may read one at once, but none may write it (an in-place op,
 *    or dropping its last reference) while another thread uses it or a
 *    view of it. Autograd's tape is not locked: tensors that require grad,
 *    the results computed from them and their backward pass stay on one
 *    thread.
 *  - The lazy device belongs to one thread at a time: the first thread that
 *    uses it (an op on a lazy tensor, a transfer to or from it, a read, a
 *    barrier, lt_release or lt_scope_end of a lazy tensor) owns it until
 *    it calls lt_lazy_release_thread() or exits. A call from any other
 *    thread fails with LT_ERR_STATE ("the lazy device is in use by thread
 *    N") and changes nothing: lt_release and lt_scope_end leave that
 *    thread's lazy tensors alive. Metadata queries (shape, dtype, device,
 *    strides) and lt_retain work from any thread. To move the work to
 *    another thread, finish with it (release its lazy tensors or keep them
 *    for the next owner), call lt_lazy_release_thread(), and let the other
 *    thread start. The worker thread that runs lt_barrier(false) is
 *    internal and needs nothing from the caller.
 */

/** Device kinds. */
typedef enum lt_device_kind {
    LT_DEVICE_INVALID = -1,
    LT_DEVICE_CPU = 0,
    LT_DEVICE_LAZY = 1
} lt_device_kind;

/** A device is a plain value: kind and index. */
typedef struct lt_device {
    lt_device_kind kind;
    int index;
} lt_device;

/**
 * Parses "cpu", "cpu:0", "lazy", "lazy:0". On failure returns a device of
 * kind LT_DEVICE_INVALID and sets the error. Devices this build cannot run
 * on are reported as LT_ERR_UNSUPPORTED.
 */
lt_device lt_device_parse(const char *name);
/** The CPU device. */
lt_device lt_device_cpu(void);
/** True if both devices are the same kind and index. */
bool lt_device_equal(lt_device a, lt_device b);
/** Writes "cpu:0"-style text into buf (snprintf semantics); returns buf. */
const char *lt_device_str(lt_device d, char *buf, size_t cap);

/* ========================================================================= */
/* Lifetime: refcounts and scopes                                             */
/* ========================================================================= */

/** Adds a caller-owned reference; returns t (NULL-safe). */
lt_tensor *lt_retain(lt_tensor *t);
/** Drops a caller-owned reference (NULL-safe). Releasing an already dead
 *  handle sets LT_ERR_RELEASED. */
void lt_release(lt_tensor *t);
/** Opens a scope: tensors returned from now on belong to it. */
void lt_scope_begin(void);
/** Closes the innermost scope, dropping every reference it owns.
 *  Returns LT_ERR_STATE if no scope is open. */
lt_status lt_scope_end(void);
/** Number of open scopes on this thread. */
int lt_scope_depth(void);
/** Gives t one reference owned by the parent scope (or by the caller if
 *  the innermost scope is the outermost one); returns t. NULL-safe. */
lt_tensor *lt_keep(lt_tensor *t);
/** Number of references currently held on t (for tests and debugging). */
int lt_tensor_refcount(const lt_tensor *t);
/** Number of tensor handles alive in the process (for leak checks). */
int64_t lt_live_tensor_count(void);
/**
 * Makes the one reference that a call just returned on t owned by the
 * caller, whatever the context, and returns t. Inside a scope it takes t's
 * reference out of the innermost scope (t must be owned by it: the result
 * of a call made in this scope, else LT_ERR_STATE and NULL); with no scope
 * open the reference is the caller's already and t is returned as is.
 * NULL-safe (keeps the first error), so
 *     lt_tensor *w = lt_persist(lt_randn(dims, 2, LT_F32, dev));
 *     ...
 *     lt_release(w);
 * is right in every context.
 */
lt_tensor *lt_persist(lt_tensor *t);
/** A tensor whose user still holds a reference, as listed by
 *  lt_live_tensors. */
typedef struct lt_live_tensor {
    uint64_t id;             /**< unique, increasing with creation */
    lt_dtype dtype;
    int ndim;
    int64_t shape[LT_MAX_DIMS];
    lt_device device;
    int refcount;            /**< references held (scopes' and callers') */
    const char *made_by;     /**< op or function that made it, e.g. "randn" */
} lt_live_tensor;
/**
 * Lists the tensors whose user still holds a reference (handles only the
 * library holds, such as the base of a live lazy view, are left out), in
 * no particular order: writes at most max entries and returns the total
 * (-1 on error). For leak checks: a program that released everything
 * sees 0.
 */
int64_t lt_live_tensors(lt_live_tensor *out, int64_t max);
/**
 * The same list as text ("2 tensors alive\n  tensor 17: f32[2, 3] on
 * cpu:0, 1 reference, made by randn\n..."), snprintf semantics. When the
 * environment has LT_DEBUG set (not "0"), this report goes to stderr at
 * exit if any tensor is still alive then (at most 20 named).
 */
int lt_live_tensor_report(char *buf, size_t cap);

/* ========================================================================= */
/* Tensor metadata                                                            */
/* ========================================================================= */

/** Number of dimensions (-1 on error). */
int lt_tensor_ndim(const lt_tensor *t);
/** Pointer to the ndim sizes (valid while t lives); NULL on error. */
const int64_t *lt_tensor_shape(const lt_tensor *t);
/** Size of dimension dim (negative dims allowed); -1 on error. */
int64_t lt_tensor_size(const lt_tensor *t, int dim);
/** Pointer to the ndim strides, in elements; NULL on error. */
const int64_t *lt_tensor_strides(const lt_tensor *t);
/** Offset of the first element into storage, in elements; -1 on error. */
int64_t lt_tensor_offset(const lt_tensor *t);
/** Number of elements (product of sizes); -1 on error. */
int64_t lt_tensor_numel(const lt_tensor *t);
/** Element type (LT_NUM_DTYPES on error). */
lt_dtype lt_tensor_dtype(const lt_tensor *t);
/** Device (kind LT_DEVICE_INVALID on error). */
lt_device lt_tensor_device(const lt_tensor *t);
/** True if the elements are laid out densely in row-major order. */
bool lt_tensor_is_contiguous(const lt_tensor *t);
/** True if both tensors view the same storage. */
bool lt_tensor_shares_storage(const lt_tensor *a, const lt_tensor *b);
/**
 * Raw pointer to the first element of a CPU tensor (offset applied), for
 * interop with other libraries. Respect lt_tensor_strides() when reading.
 * NULL with an error for non-CPU tensors.
 */
void *lt_tensor_data(lt_tensor *t);

/* ========================================================================= */
/* Factories                                                                  */
/* ========================================================================= */

/** Uninitialized tensor. Sizes must be >= 0; the total size must fit in
 *  memory (absurd sizes give LT_ERR_MEMORY). A shape with a size 0 has no
 *  elements whatever its other sizes, but those must still span at most
 *  2^59 bytes (counting each 0 as 1), so that strides and byte offsets fit
 *  in 64 bits: [2^62, 2^62, 0] is refused with LT_ERR_SHAPE. Every op
 *  checks its result's shape by the same rules. */
lt_tensor *lt_empty(const int64_t *dims, int ndim, lt_dtype dt, lt_device dev);
/** Tensor filled with zeros. */
lt_tensor *lt_zeros(const int64_t *dims, int ndim, lt_dtype dt, lt_device dev);
/** Tensor filled with ones. */
lt_tensor *lt_ones(const int64_t *dims, int ndim, lt_dtype dt, lt_device dev);
/** Tensor filled with value (converted to dt). */
lt_tensor *lt_full(const int64_t *dims, int ndim, double value, lt_dtype dt, lt_device dev);
/** Zero-dim tensor holding value. */
lt_tensor *lt_scalar(double value, lt_dtype dt, lt_device dev);
/** Same shape, dtype and device as t, uninitialized / zeros / ones / value. */
lt_tensor *lt_empty_like(lt_tensor *t);
lt_tensor *lt_zeros_like(lt_tensor *t);
lt_tensor *lt_ones_like(lt_tensor *t);
lt_tensor *lt_full_like(lt_tensor *t, double value);
/** Values start, start+step, ... below end (above end if step < 0).
 *  step must be nonzero; length is ceil((end-start)/step). For integer
 *  dtypes, as torch, start and step are truncated toward zero first (a
 *  step that truncates to 0 is refused), and for i64 the end too. */
lt_tensor *lt_arange(double start, double end, double step, lt_dtype dt, lt_device dev);
/** steps values evenly spaced from start to end inclusive (steps >= 0). */
lt_tensor *lt_linspace(double start, double end, int64_t steps, lt_dtype dt, lt_device dev);
/** n x m matrix with ones on the main diagonal. */
lt_tensor *lt_eye(int64_t n, int64_t m, lt_dtype dt, lt_device dev);
/**
 * Tensor with a copy of host data laid out contiguously in row-major order
 * (numel * lt_dtype_size(dt) bytes are read). data may be NULL only if the
 * tensor has no elements.
 */
lt_tensor *lt_from_data(const void *data, const int64_t *dims, int ndim, lt_dtype dt, lt_device dev);

/**
 * A cpu tensor over memory the library does not own (zero-copy interop:
 * numpy arrays, DLPack tensors). dims/ndim give the shape; strides (in
 * elements, all >= 0; NULL for row-major contiguous) the layout from data,
 * which must be aligned to the element size. The memory must stay valid
 * and unchanged in size until release(ctx) is called, exactly once, when
 * the last tensor or view on it dies (release may be NULL). Writes through
 * the tensor change the memory. On error (NULL data with elements,
 * misalignment, negative strides, an absurd span) NULL is returned and
 * release is not called: the memory stays the caller's.
 */
lt_tensor *lt_from_external(void *data, const int64_t *dims, int ndim, const int64_t *strides, lt_dtype dt,
                            void (*release)(void *ctx), void *ctx);

/*
 * DLPack, the zero-copy exchange format of numpy, PyTorch and others: its
 * structs (ABI 0.8, laid out as the DLPack specification documents them),
 * and a DLPack view of a cpu tensor and a tensor over a DLPack producer's
 * memory. Strides are in elements; NULL strides mean row-major contiguous.
 */
enum { LT_DL_CPU = 1 }; /**< DLDeviceType kDLCPU, the one device exchanged */
enum { LT_DL_INT = 0, LT_DL_UINT = 1, LT_DL_FLOAT = 2, LT_DL_BFLOAT = 4, LT_DL_BOOL = 6 }; /**< DLDataTypeCode */
typedef struct lt_dl_device {
    int32_t device_type;
    int32_t device_id;
} lt_dl_device;
typedef struct lt_dl_dtype {
    uint8_t code;
    uint8_t bits;
    uint16_t lanes;
} lt_dl_dtype;
typedef struct lt_dl_tensor {
    void *data;
    lt_dl_device device;
    int32_t ndim;
    lt_dl_dtype dtype;
    int64_t *shape;
    int64_t *strides;
    uint64_t byte_offset;
} lt_dl_tensor;
typedef struct lt_dl_managed_tensor {
    lt_dl_tensor dl_tensor;
    void *manager_ctx;
    void (*deleter)(struct lt_dl_managed_tensor *self);
} lt_dl_managed_tensor;
/**
 * A DLPack view of cpu tensor t: its memory, shape, strides and dtype. The
 * consumer calls m->deleter(m) once when done; until then the memory stays
 * valid, even after t's release or an in-place move of t (lt_to_). NULL on
 * error: a tensor not on the cpu device (LT_ERR_DEVICE), out of memory.
 */
lt_dl_managed_tensor *lt_to_dlpack(lt_tensor *t);
/**
 * A cpu tensor over the memory of a DLPack producer's tensor m (no copy;
 * byte_offset applied). The library calls m->deleter(m) (if not NULL) once,
 * when the last tensor or view on it dies. Refused with NULL, leaving m
 * the caller's (the deleter is not called): a NULL m, a device other than
 * the cpu (LT_ERR_DEVICE), a dtype lazytensor lacks or with lanes != 1
 * (LT_ERR_DTYPE), more than LT_MAX_DIMS dims, and what lt_from_external
 * refuses (negative strides, misalignment).
 */
lt_tensor *lt_from_dlpack(lt_dl_managed_tensor *m);

/* ---- random numbers (Philox 4x32-10, counter based) -------------------- */

/**
 * Seeds the process-wide generator and resets its offset to 0. Every
 * random op consumes a counter range, so a seed gives reproducible numbers
 * whatever the thread count.
 */
void lt_manual_seed(uint64_t seed);
/** Reads the generator state (seed and counter offset); NULL-safe. */
void lt_rng_get_state(uint64_t *seed, uint64_t *offset);
/** Restores a generator state read with lt_rng_get_state. */
void lt_rng_set_state(uint64_t seed, uint64_t offset);
/** Uniform numbers in [0, 1). dt must be floating. */
lt_tensor *lt_rand(const int64_t *dims, int ndim, lt_dtype dt, lt_device dev);
/** Standard normal numbers. dt must be floating. */
lt_tensor *lt_randn(const int64_t *dims, int ndim, lt_dtype dt, lt_device dev);
/** Uniform integers in [low, high). high > low. */
lt_tensor *lt_randint(int64_t low, int64_t high, const int64_t *dims, int ndim, lt_dtype dt,
                      lt_device dev);
/**
 * Samples category indices (i64) from the rows of probs, torch.multinomial's
 * way: probs is [K] or [N, K] (floating), each row non-negative weights that
 * need not sum to 1; the result is [num_samples] or [N, num_samples].
 * With replacement every sample is drawn independently; without it the
 * samples of a row are distinct (num_samples <= K), in the order drawn.
 * Draws from the generator (lt_manual_seed), so results repeat for a seed,
 * on the same device. On the cpu the weights are checked (finite, >= 0, a
 * row with too few positive weights is an error); on the lazy device that
 * check would force a sync, and an invalid row gives indices that are in
 * range but meaningless.
 */
lt_tensor *lt_multinomial(lt_tensor *probs, int64_t num_samples, bool replacement);

/* ========================================================================= */
/* Unary elementwise ops (integer inputs of float ops give f32)               */
/* ========================================================================= */

lt_tensor *lt_neg(lt_tensor *t);        /**< -x */
lt_tensor *lt_abs(lt_tensor *t);        /**< |x| */
lt_tensor *lt_exp(lt_tensor *t);        /**< e^x */
lt_tensor *lt_log(lt_tensor *t);        /**< natural log */
lt_tensor *lt_log1p(lt_tensor *t);      /**< log(1+x) */
lt_tensor *lt_expm1(lt_tensor *t);      /**< e^x - 1 */
lt_tensor *lt_sqrt(lt_tensor *t);       /**< square root */
lt_tensor *lt_rsqrt(lt_tensor *t);      /**< 1/sqrt(x) */
lt_tensor *lt_sin(lt_tensor *t);        /**< sine */
lt_tensor *lt_cos(lt_tensor *t);        /**< cosine */
lt_tensor *lt_tanh(lt_tensor *t);       /**< hyperbolic tangent */
lt_tensor *lt_sigmoid(lt_tensor *t);    /**< 1/(1+e^-x) */
lt_tensor *lt_relu(lt_tensor *t);       /**< max(x, 0) (keeps dtype) */
lt_tensor *lt_gelu(lt_tensor *t);       /**< x*Phi(x), exact erf form */
lt_tensor *lt_silu(lt_tensor *t);       /**< x*sigmoid(x) */
lt_tensor *lt_erf(lt_tensor *t);        /**< error function */
lt_tensor *lt_sign(lt_tensor *t);       /**< -1, 0 or 1 (keeps dtype; bool: x) */
lt_tensor *lt_floor(lt_tensor *t);      /**< round down (keeps dtype) */
lt_tensor *lt_ceil(lt_tensor *t);       /**< round up (keeps dtype) */
lt_tensor *lt_round(lt_tensor *t);      /**< round half to even (keeps dtype) */
lt_tensor *lt_reciprocal(lt_tensor *t); /**< 1/x */
lt_tensor *lt_logical_not(lt_tensor *t);/**< !x, bool result */

/* ========================================================================= */
/* Binary and ternary elementwise ops (broadcasting)                          */
/* ========================================================================= */

lt_tensor *lt_add(lt_tensor *a, lt_tensor *b);                  /**< a + b */
lt_tensor *lt_sub(lt_tensor *a, lt_tensor *b);                  /**< a - b */
/** a + alpha*b (PyTorch's add with alpha). */
lt_tensor *lt_add_scaled(lt_tensor *a, lt_tensor *b, double alpha);
/** a - alpha*b. */
lt_tensor *lt_sub_scaled(lt_tensor *a, lt_tensor *b, double alpha);
lt_tensor *lt_mul(lt_tensor *a, lt_tensor *b);                  /**< a * b */
/** True division: integer inputs give f32. Division by zero follows IEEE
 *  for floats. */
lt_tensor *lt_div(lt_tensor *a, lt_tensor *b);
/** a ^ b. Integer a to a negative integer power b is 1 / a^-b truncated,
 *  as torch: 0, or 1 and -1 for a = 1 and -1 (and 0^-n is 0). */
lt_tensor *lt_pow(lt_tensor *a, lt_tensor *b);
lt_tensor *lt_maximum(lt_tensor *a, lt_tensor *b);              /**< elementwise max (NaN wins) */
lt_tensor *lt_minimum(lt_tensor *a, lt_tensor *b);              /**< elementwise min (NaN wins) */
/** Python-style remainder: the result has the sign of b. Integer division
 *  by zero is an error. */
lt_tensor *lt_remainder(lt_tensor *a, lt_tensor *b);
lt_tensor *lt_eq(lt_tensor *a, lt_tensor *b);                   /**< a == b, bool */
lt_tensor *lt_ne(lt_tensor *a, lt_tensor *b);                   /**< a != b, bool */
lt_tensor *lt_lt(lt_tensor *a, lt_tensor *b);                   /**< a < b, bool */
lt_tensor *lt_le(lt_tensor *a, lt_tensor *b);                   /**< a <= b, bool */
lt_tensor *lt_gt(lt_tensor *a, lt_tensor *b);                   /**< a > b, bool */
lt_tensor *lt_ge(lt_tensor *a, lt_tensor *b);                   /**< a >= b, bool */
lt_tensor *lt_logical_and(lt_tensor *a, lt_tensor *b);          /**< bool result */
lt_tensor *lt_logical_or(lt_tensor *a, lt_tensor *b);           /**< bool result */
/** cond ? a : b, elementwise; cond must be bool; all three broadcast. */
lt_tensor *lt_where(lt_tensor *cond, lt_tensor *a, lt_tensor *b);
/** min(max(x, lo), hi). Pass -INFINITY / INFINITY for no bound. As in
 *  torch, lo > hi gives hi everywhere (NaN stays NaN); NaN bounds are
 *  refused. An integer tensor keeps its dtype with integral bounds (a
 *  Python int to torch) and gives f32 with a fractional one (a Python
 *  float); lt_clamp_ refuses a fractional bound for an integer
 *  destination, as torch. */
lt_tensor *lt_clamp(lt_tensor *t, double lo, double hi);
/** clamp with tensor bounds (torch.clamp(x, min=lo, max=hi)): min(max(x,
 *  lo), hi) with broadcasting and type promotion; lo or hi may be NULL
 *  (not both). Composed of maximum and minimum (one fused kernel). */
lt_tensor *lt_clamp_tensor(lt_tensor *t, lt_tensor *lo, lt_tensor *hi);

/* ---- tensor-with-scalar forms (the scalar acts like a Python float) ----- */
lt_tensor *lt_add_scalar(lt_tensor *t, double s);   /**< t + s */
lt_tensor *lt_sub_scalar(lt_tensor *t, double s);   /**< t - s */
lt_tensor *lt_rsub_scalar(lt_tensor *t, double s);  /**< s - t */
lt_tensor *lt_mul_scalar(lt_tensor *t, double s);   /**< t * s */
lt_tensor *lt_div_scalar(lt_tensor *t, double s);   /**< t / s */
lt_tensor *lt_pow_scalar(lt_tensor *t, double s);   /**< t ^ s */
lt_tensor *lt_rpow_scalar(lt_tensor *t, double s);  /**< s ^ t */
lt_tensor *lt_maximum_scalar(lt_tensor *t, double s);
lt_tensor *lt_minimum_scalar(lt_tensor *t, double s);
lt_tensor *lt_remainder_scalar(lt_tensor *t, double s);
lt_tensor *lt_eq_scalar(lt_tensor *t, double s);
lt_tensor *lt_ne_scalar(lt_tensor *t, double s);
lt_tensor *lt_lt_scalar(lt_tensor *t, double s);
lt_tensor *lt_le_scalar(lt_tensor *t, double s);
lt_tensor *lt_gt_scalar(lt_tensor *t, double s);
lt_tensor *lt_ge_scalar(lt_tensor *t, double s);

/* ---- tensor with an integer scalar (the scalar acts like a Python int):
 *      the result keeps the tensor's dtype (a bool tensor gives i64), so
 *      int_tensor + 2 stays an integer tensor. A value the dtype cannot
 *      hold wraps into it, as in torch (u8 + 300 adds 44). --------------- */
lt_tensor *lt_add_iscalar(lt_tensor *t, int64_t s);       /**< t + s */
lt_tensor *lt_sub_iscalar(lt_tensor *t, int64_t s);       /**< t - s */
lt_tensor *lt_rsub_iscalar(lt_tensor *t, int64_t s);      /**< s - t */
lt_tensor *lt_mul_iscalar(lt_tensor *t, int64_t s);       /**< t * s */
lt_tensor *lt_remainder_iscalar(lt_tensor *t, int64_t s); /**< Python-style t % s */
lt_tensor *lt_floor_divide_iscalar(lt_tensor *t, int64_t s); /**< t // s */
lt_tensor *lt_maximum_iscalar(lt_tensor *t, int64_t s);
lt_tensor *lt_minimum_iscalar(lt_tensor *t, int64_t s);
/** t ^ s; a negative s with an integer tensor is refused, as torch. */
lt_tensor *lt_pow_iscalar(lt_tensor *t, int64_t s);
lt_tensor *lt_add_iscalar_(lt_tensor *dst, int64_t s);
lt_tensor *lt_sub_iscalar_(lt_tensor *dst, int64_t s);
lt_tensor *lt_mul_iscalar_(lt_tensor *dst, int64_t s);

/* ========================================================================= */
/* In-place ops: write into dst (which may be a view) and return dst.         */
/* The result is broadcast to dst's shape and must be castable to dst's       */
/* dtype without changing category (a float result cannot go into an int     */
/* tensor).                                                                   */
/* ========================================================================= */

lt_tensor *lt_add_(lt_tensor *dst, lt_tensor *b);
lt_tensor *lt_sub_(lt_tensor *dst, lt_tensor *b);
lt_tensor *lt_add_scaled_(lt_tensor *dst, lt_tensor *b, double alpha);
/** dst -= alpha * b (PyTorch's sub_ with alpha). */
lt_tensor *lt_sub_scaled_(lt_tensor *dst, lt_tensor *b, double alpha);
lt_tensor *lt_mul_(lt_tensor *dst, lt_tensor *b);
lt_tensor *lt_div_(lt_tensor *dst, lt_tensor *b);
lt_tensor *lt_pow_(lt_tensor *dst, lt_tensor *b);
lt_tensor *lt_maximum_(lt_tensor *dst, lt_tensor *b);
lt_tensor *lt_minimum_(lt_tensor *dst, lt_tensor *b);
lt_tensor *lt_add_scalar_(lt_tensor *dst, double s);
lt_tensor *lt_sub_scalar_(lt_tensor *dst, double s);
lt_tensor *lt_mul_scalar_(lt_tensor *dst, double s);
lt_tensor *lt_div_scalar_(lt_tensor *dst, double s);
lt_tensor *lt_pow_scalar_(lt_tensor *dst, double s);
lt_tensor *lt_clamp_(lt_tensor *dst, double lo, double hi);
lt_tensor *lt_neg_(lt_tensor *dst);
lt_tensor *lt_relu_(lt_tensor *dst);
/** Sets every element of dst to value. */
lt_tensor *lt_fill_(lt_tensor *dst, double value);
/** Sets every element of dst to zero. */
lt_tensor *lt_zero_(lt_tensor *dst);
/** Copies src into dst, broadcasting src to dst's shape and converting the
 *  dtype (any dtype to any dtype). Devices must match. */
lt_tensor *lt_copy_(lt_tensor *dst, lt_tensor *src);

/* ========================================================================= */
/* More math: trigonometric, logarithms, float tests, bitwise, activations    */
/* ========================================================================= */

/*
 * PyTorch's functions of the same names (docs/ops_torch.md maps them).
 * Unless noted, integer and bool inputs give f32 results, and the op is
 * differentiable. Each is one fused elementwise op on the lazy device.
 */
lt_tensor *lt_tan(lt_tensor *t);     /**< tangent */
lt_tensor *lt_asin(lt_tensor *t);    /**< arcsine (NaN outside [-1, 1]) */
lt_tensor *lt_acos(lt_tensor *t);    /**< arccosine (NaN outside [-1, 1]) */
lt_tensor *lt_atan(lt_tensor *t);    /**< arctangent */
lt_tensor *lt_sinh(lt_tensor *t);    /**< hyperbolic sine */
lt_tensor *lt_cosh(lt_tensor *t);    /**< hyperbolic cosine */
lt_tensor *lt_asinh(lt_tensor *t);   /**< inverse hyperbolic sine */
lt_tensor *lt_acosh(lt_tensor *t);   /**< inverse hyperbolic cosine (NaN below 1) */
lt_tensor *lt_atanh(lt_tensor *t);   /**< inverse hyperbolic tangent (+-inf at +-1) */
lt_tensor *lt_log2(lt_tensor *t);    /**< base-2 logarithm */
lt_tensor *lt_log10(lt_tensor *t);   /**< base-10 logarithm */
lt_tensor *lt_exp2(lt_tensor *t);    /**< 2^x */
/** Rounds toward zero; keeps the dtype (integers unchanged; bool refused).
 *  Its gradient is zero. */
lt_tensor *lt_trunc(lt_tensor *t);
/** x - trunc(x), floating inputs only; gradient 1. */
lt_tensor *lt_frac(lt_tensor *t);
/** True where x is NaN (bool result, any dtype; never for integers). */
lt_tensor *lt_isnan(lt_tensor *t);
/** True where x is +inf or -inf (bool result, any dtype). */
lt_tensor *lt_isinf(lt_tensor *t);
/** True where x is neither inf nor NaN (bool result, any dtype). */
lt_tensor *lt_isfinite(lt_tensor *t);
/**
 * Replaces NaN by nan, +inf by posinf and -inf by neginf. As in torch,
 * the default infinities replace by the dtype's largest / lowest finite
 * value: pass INFINITY / -INFINITY (or HUGE_VAL) for that default.
 * Integer and bool tensors come back as copies.
 */
lt_tensor *lt_nan_to_num(lt_tensor *t, double nan, double posinf, double neginf);

/** atan2(a, b): the angle of (b, a), in (-pi, pi]. Broadcasts. */
lt_tensor *lt_atan2(lt_tensor *a, lt_tensor *b);
/** sqrt(a^2 + b^2) without overflow; floating inputs only. */
lt_tensor *lt_hypot(lt_tensor *a, lt_tensor *b);
/** |a| with the sign of b (the sign bit: -0.0 counts as negative). */
lt_tensor *lt_copysign(lt_tensor *a, lt_tensor *b);
/** a * log(b), 0 where a == 0 (unless b is NaN). */
lt_tensor *lt_xlogy(lt_tensor *a, lt_tensor *b);
/** log(exp(a) + exp(b)) without overflow; floating inputs only. */
lt_tensor *lt_logaddexp(lt_tensor *a, lt_tensor *b);
/** C's fmod: a - trunc(a / b) * b, the sign of a. Keeps the promoted dtype;
 *  integer division by zero is an error (on the lazy device, of the step).
 *  Differentiable for floating inputs. */
lt_tensor *lt_fmod(lt_tensor *a, lt_tensor *b);
/** floor(a / b) in the promoted dtype (torch.floor_divide); integer
 *  division by zero is an error. Not differentiable. */
lt_tensor *lt_floor_divide(lt_tensor *a, lt_tensor *b);

/* Bitwise ops: integer and bool inputs only (promoted together; floating
 * inputs are refused). Not differentiable. */
lt_tensor *lt_bitwise_not(lt_tensor *t);                  /**< ~x (bool: !x) */
lt_tensor *lt_bitwise_and(lt_tensor *a, lt_tensor *b);    /**< a & b */
lt_tensor *lt_bitwise_or(lt_tensor *a, lt_tensor *b);     /**< a | b */
lt_tensor *lt_bitwise_xor(lt_tensor *a, lt_tensor *b);    /**< a ^ b */
/** a << b on integers (not bool); a shift by the width or more, or by a
 *  negative amount, gives 0 (as torch). */
lt_tensor *lt_bitwise_left_shift(lt_tensor *a, lt_tensor *b);
/** a >> b (arithmetic for signed types); a shift by the width or more, or
 *  by a negative amount, gives 0 or -1 (the sign). */
lt_tensor *lt_bitwise_right_shift(lt_tensor *a, lt_tensor *b);

/** start + weight * (end - start), in torch's two-sided form (exact at
 *  weight 0 and 1). Broadcasts; one fused kernel on the lazy device. */
lt_tensor *lt_lerp(lt_tensor *start, lt_tensor *end, lt_tensor *weight);
/** lt_lerp with a scalar weight. */
lt_tensor *lt_lerp_scalar(lt_tensor *start, lt_tensor *end, double weight);
/** t + value * t1 * t2 (broadcasting), computed in the dtype the three
 *  promote to, as torch: integer tensors keep their dtype, value then
 *  converted to it (truncated: 2.7 scales by 2). */
lt_tensor *lt_addcmul(lt_tensor *t, lt_tensor *t1, lt_tensor *t2, double value);
/** t + value * t1 / t2; t1 and t2 must not both be integer (as torch). */
lt_tensor *lt_addcdiv(lt_tensor *t, lt_tensor *t1, lt_tensor *t2, double value);

/* Activations (torch.nn.functional). Integer inputs give f32. */
/** x > 0 ? x : negative_slope * x. */
lt_tensor *lt_leaky_relu(lt_tensor *t, double negative_slope);
/** x > 0 ? x : alpha * (exp(x) - 1). */
lt_tensor *lt_elu(lt_tensor *t, double alpha);
/** scale * elu(x, alpha) with torch's constants alpha = 1.6732632...,
 *  scale = 1.0507009... */
lt_tensor *lt_selu(lt_tensor *t);
/** max(0, x) + min(0, alpha * (exp(x / alpha) - 1)); alpha != 0. */
lt_tensor *lt_celu(lt_tensor *t, double alpha);
/** log(1 + exp(beta x)) / beta, and x itself where beta x > threshold
 *  (torch's defaults: beta 1, threshold 20); beta != 0. */
lt_tensor *lt_softplus(lt_tensor *t, double beta, double threshold);
/** x / (1 + |x|). */
lt_tensor *lt_softsign(lt_tensor *t);
/** x * relu6(x + 3) / 6. */
lt_tensor *lt_hardswish(lt_tensor *t);
/** relu6(x + 3) / 6. */
lt_tensor *lt_hardsigmoid(lt_tensor *t);
/** x * tanh(softplus(x)). */
lt_tensor *lt_mish(lt_tensor *t);
/** log(sigmoid(x)), computed stably. */
lt_tensor *lt_logsigmoid(lt_tensor *t);
/** gelu with the tanh approximation (torch's approximate="tanh"):
 *  x/2 (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3))). */
lt_tensor *lt_gelu_tanh(lt_tensor *t);
/** Clamps to [min_val, max_val] keeping the dtype (an integer input takes
 *  the bounds truncated to integers, as torch converts them to its dtype);
 *  as in torch, min_val > max_val gives max_val everywhere. The gradient
 *  passes inside the range (at the bounds too). NaN bounds are refused. */
lt_tensor *lt_hardtanh(lt_tensor *t, double min_val, double max_val);
/** hardtanh(x, 0, 6). */
lt_tensor *lt_relu6(lt_tensor *t);
/** Gated linear unit: a * sigmoid(b) where a, b are the halves of dim
 *  (its size must be even). */
lt_tensor *lt_glu(lt_tensor *t, int dim);

/* ========================================================================= */
/* Conversion and copies                                                      */
/* ========================================================================= */

/** Converts to dtype dt (a new tensor, even if dt is already t's dtype). */
lt_tensor *lt_to_dtype(lt_tensor *t, lt_dtype dt);
/** A contiguous copy with its own storage. */
lt_tensor *lt_clone(lt_tensor *t);
/** t itself (one more reference) if contiguous, else a contiguous copy. */
lt_tensor *lt_contiguous(lt_tensor *t);
/** Copies t to device dev (a new tensor, even on the same device). */
lt_tensor *lt_to(lt_tensor *t, lt_device dev);
/**
 * Moves t to device dev in place and returns t (no reference added): the
 * handle stays the same (its references, its requires-grad flag, every
 * pointer to it), its data is copied to dev and the old buffer dropped,
 * like PyTorch's `param.data = param.data.to(dev)`. Its gradient, if any,
 * moves with it the same way. Views of t made before the move keep the
 * old values (on cpu they share the old storage; lazy views become
 * tensors of their own). A lazy view cannot move by itself
 * (LT_ERR_STATE): move its base. On error t's data is unchanged.
 */
lt_tensor *lt_to_(lt_tensor *t, lt_device dev);

/* ========================================================================= */
/* Reductions. dims/ndims select the reduced dimensions; ndims == 0 (dims     */
/* may be NULL) reduces all of them. Duplicate dims are an error.             */
/* ========================================================================= */

/** Sum. Integer and bool inputs sum to i64. */
lt_tensor *lt_sum(lt_tensor *t, const int *dims, int ndims, bool keepdim);
/** Mean. Floating inputs only. */
lt_tensor *lt_mean(lt_tensor *t, const int *dims, int ndims, bool keepdim);
/** Product. Integer and bool inputs multiply to i64. */
lt_tensor *lt_prod(lt_tensor *t, const int *dims, int ndims, bool keepdim);
/** Maximum value over dims (NaN propagates). Empty reductions are errors. */
lt_tensor *lt_amax(lt_tensor *t, const int *dims, int ndims, bool keepdim);
/** Minimum value over dims. */
lt_tensor *lt_amin(lt_tensor *t, const int *dims, int ndims, bool keepdim);
/** Max over one dim; if indices is not NULL it receives the i64 argmax
 *  (first occurrence). */
lt_tensor *lt_max_dim(lt_tensor *t, int dim, bool keepdim, lt_tensor **indices);
/** Min over one dim; indices as for lt_max_dim. */
lt_tensor *lt_min_dim(lt_tensor *t, int dim, bool keepdim, lt_tensor **indices);
/** Index (i64) of the first maximum over dim. */
lt_tensor *lt_argmax(lt_tensor *t, int dim, bool keepdim);
/** Index (i64) of the first minimum over dim. */
lt_tensor *lt_argmin(lt_tensor *t, int dim, bool keepdim);
/** Variance with divisor N - correction (correction 1 = unbiased). */
lt_tensor *lt_var(lt_tensor *t, const int *dims, int ndims, int64_t correction, bool keepdim);
/** Standard deviation, sqrt(var). */
lt_tensor *lt_std(lt_tensor *t, const int *dims, int ndims, int64_t correction, bool keepdim);
/** log(sum(exp(x))) computed stably. Floating inputs only. */
lt_tensor *lt_logsumexp(lt_tensor *t, const int *dims, int ndims, bool keepdim);
/** True where all elements are nonzero (bool). */
lt_tensor *lt_all(lt_tensor *t, const int *dims, int ndims, bool keepdim);
/** True where any element is nonzero (bool). */
lt_tensor *lt_any(lt_tensor *t, const int *dims, int ndims, bool keepdim);
/** Cumulative sum along dim (integer inputs give i64). */
lt_tensor *lt_cumsum(lt_tensor *t, int dim);
/** softmax along dim (floating). */
lt_tensor *lt_softmax(lt_tensor *t, int dim);
/** log(softmax) along dim, computed stably (floating). */
lt_tensor *lt_log_softmax(lt_tensor *t, int dim);

/** Cumulative product along dim (torch.cumprod): integer and bool inputs
 *  give i64 (wrapping), floating ones keep their dtype (f32 accumulates in
 *  double). Differentiable, zeros included. */
lt_tensor *lt_cumprod(lt_tensor *t, int dim);
/** Running maximum along dim (torch.cummax), any dtype. If indices is not
 *  NULL it receives the i64 index of each running maximum: the last one
 *  on ties, the latest NaN once a NaN is seen (NaN propagates). */
lt_tensor *lt_cummax(lt_tensor *t, int dim, lt_tensor **indices);
/** Running minimum along dim (torch.cummin); indices as lt_cummax. */
lt_tensor *lt_cummin(lt_tensor *t, int dim, lt_tensor **indices);
/** log(cumsum(exp(x))) along dim, computed stably (torch.logcumsumexp).
 *  Floating inputs only. */
lt_tensor *lt_logcumsumexp(lt_tensor *t, int dim);
/** The k-th smallest value (k = 1..size) along dim (torch.kthvalue); NaN
 *  counts as the largest value. If indices is not NULL it receives the
 *  i64 index (among equal values the smallest; torch leaves this
 *  unspecified). Not for bool; a size-0 dim is an error. */
lt_tensor *lt_kthvalue(lt_tensor *t, int64_t k, int dim, bool keepdim, lt_tensor **indices);
/** Lower median along dim (torch.median(t, dim)): the ((size - 1) / 2)-th
 *  smallest, or NaN at the first NaN's index if the line holds one.
 *  indices as lt_kthvalue. */
lt_tensor *lt_median_dim(lt_tensor *t, int dim, bool keepdim, lt_tensor **indices);
/** Lower median of all elements, 0-d (torch.median(t)); NaN for an empty
 *  floating tensor. */
lt_tensor *lt_median(lt_tensor *t);
/** Most frequent value along dim (torch.mode): the smallest of the most
 *  frequent values, and in *indices (if not NULL) the last index where it
 *  occurs. Any dtype; a size-0 dim is an error. */
lt_tensor *lt_mode(lt_tensor *t, int dim, bool keepdim, lt_tensor **indices);
/** Interpolation modes of lt_quantile (torch's interpolation=). */
enum {
    LT_QUANTILE_LINEAR,   /**< 'linear': between the two neighbours */
    LT_QUANTILE_LOWER,    /**< 'lower' */
    LT_QUANTILE_HIGHER,   /**< 'higher' */
    LT_QUANTILE_NEAREST,  /**< 'nearest' (ties to the even position) */
    LT_QUANTILE_MIDPOINT  /**< 'midpoint' */
};
/** The q-quantile (q in [0, 1]) along *dim, or of all elements if dim is
 *  NULL (keepdim then gives t's rank of 1s), as torch.quantile: f32/f64
 *  only, a non-empty input, a line holding a NaN gives NaN. interpolation
 *  is an LT_QUANTILE_* value. Differentiable (the gradient goes to the one
 *  or two elements interpolated). For several q, call once per q and
 *  lt_stack the results (torch puts the q dim first). */
lt_tensor *lt_quantile(lt_tensor *t, double q, const int *dim, bool keepdim, int interpolation);
/** lt_quantile ignoring NaNs (torch.nanquantile); an all-NaN line gives NaN. */
lt_tensor *lt_nanquantile(lt_tensor *t, double q, const int *dim, bool keepdim, int interpolation);

/* ---- more reductions (torch.nansum ... torch.linalg.matrix_norm). They are
 * compositions of the ops above: traced and fused on the lazy device, and
 * differentiable where torch's are. ---- */

/** Sum treating NaN as 0 (torch.nansum). Integer and bool inputs give i64;
 *  an empty reduction gives 0. */
lt_tensor *lt_nansum(lt_tensor *t, const int *dims, int ndims, bool keepdim);
/** Mean of the non-NaN elements (torch.nanmean): nansum / their count, so
 *  an all-NaN or empty range gives NaN. Floating inputs only. */
lt_tensor *lt_nanmean(lt_tensor *t, const int *dims, int ndims, bool keepdim);
/** Number (i64) of nonzero elements over dims (torch.count_nonzero; NaN
 *  counts, -0.0 does not). No keepdim, as in torch. Not differentiable. */
lt_tensor *lt_count_nonzero(lt_tensor *t, const int *dims, int ndims);
/** Minimum and maximum at once (torch.aminmax): returns the minimum and
 *  stores the maximum in *max (required). ndims is 0 (every dim) or 1.
 *  Empty reductions are errors. Differentiable (torch's is not), with the
 *  gradients of lt_amin / lt_amax. */
lt_tensor *lt_aminmax(lt_tensor *t, const int *dims, int ndims, bool keepdim, lt_tensor **max);
/** torch.sum(t, dims, keepdim, dtype=dtype): t is cast to dtype first and
 *  the result has that dtype (integer sums wrap modulo its width). */
lt_tensor *lt_sum_dtype(lt_tensor *t, const int *dims, int ndims, bool keepdim, lt_dtype dtype);
/** torch.mean(..., dtype=dtype): t cast to dtype, which must be floating. */
lt_tensor *lt_mean_dtype(lt_tensor *t, const int *dims, int ndims, bool keepdim, lt_dtype dtype);
/** torch.prod(..., dtype=dtype): t cast to dtype, result in dtype. */
lt_tensor *lt_prod_dtype(lt_tensor *t, const int *dims, int ndims, bool keepdim, lt_dtype dtype);
/** torch.cumsum(t, dim, dtype=dtype): t cast to dtype, result in dtype. */
lt_tensor *lt_cumsum_dtype(lt_tensor *t, int dim, lt_dtype dtype);
/** torch.cumprod(t, dim, dtype=dtype): t cast to dtype (not bool), result
 *  in dtype (integer products wrap modulo its width). */
lt_tensor *lt_cumprod_dtype(lt_tensor *t, int dim, lt_dtype dtype);
/** Vector norm over dims (torch.linalg.vector_norm; ndims 0: the flattened
 *  tensor): ord inf max|x|, -inf min|x|, 0 the count of nonzeros (in t's
 *  dtype), otherwise (sum |x|^ord)^(1/ord). Floating inputs only. inf,
 *  -inf and negative orders over an empty range are errors; the others
 *  give 0. The gradient at a zero norm (and, for ord < 1, at zero
 *  elements) is 0, as in torch. */
lt_tensor *lt_vector_norm(lt_tensor *t, double ord, const int *dims, int ndims, bool keepdim);
/** torch.norm(t, p, dims, keepdim) for a numeric p: lt_vector_norm (p 2
 *  over two dims is torch's 'fro'), except that an empty range gives 0
 *  for every p, as torch.norm does. */
lt_tensor *lt_norm(lt_tensor *t, double p, const int *dims, int ndims, bool keepdim);
/** Matrix norm over two dims (ndims 2, or 0 for the last two) of a
 *  floating tensor with >= 2 dims (torch.linalg.matrix_norm): ord 1 / -1
 *  the largest / smallest column sum of |x|, inf / -inf the largest /
 *  smallest row sum, 2 / -2 the largest / smallest singular value (f32 and
 *  f64 only, through lt_linalg_svdvals: a lazy fallback). A size-0 dim
 *  that the max runs over is an error, as in torch (lt_matrix_norm_nuc
 *  for 'nuc'). */
lt_tensor *lt_matrix_norm(lt_tensor *t, double ord, const int *dims, int ndims, bool keepdim);
/** Frobenius norm over two dims (torch.linalg.matrix_norm(ord='fro')). */
lt_tensor *lt_matrix_norm_fro(lt_tensor *t, const int *dims, int ndims, bool keepdim);
/** The norms with torch's dtype=: the input is cast to dtype first and the
 *  result has that dtype. As torch, the input must be floating and dtype a
 *  floating dtype it converts to without narrowing (f32 to f64, not f64 to
 *  f32). Differentiable (the gradient is cast back). */
lt_tensor *lt_vector_norm_dtype(lt_tensor *t, double ord, const int *dims, int ndims, bool keepdim, lt_dtype dtype);
lt_tensor *lt_matrix_norm_dtype(lt_tensor *t, double ord, const int *dims, int ndims, bool keepdim, lt_dtype dtype);
lt_tensor *lt_matrix_norm_fro_dtype(lt_tensor *t, const int *dims, int ndims, bool keepdim, lt_dtype dtype);

/* ========================================================================= */
/* Views: results share storage with t; writes through a view change t.       */
/* ========================================================================= */

/** Same elements in a new shape; one size may be -1 (inferred). Errors if
 *  the strides of t cannot express the shape without a copy. */
lt_tensor *lt_view(lt_tensor *t, const int64_t *dims, int ndim);
/** Like lt_view, but copies when a view is impossible. */
lt_tensor *lt_reshape(lt_tensor *t, const int64_t *dims, int ndim);
/** Reorders dimensions: result dim i is t's dim perm[i]. */
lt_tensor *lt_permute(lt_tensor *t, const int *perm, int ndim);
/** Swaps two dimensions. */
lt_tensor *lt_transpose(lt_tensor *t, int dim0, int dim1);
/** Elements start .. start+length-1 of dim. */
lt_tensor *lt_narrow(lt_tensor *t, int dim, int64_t start, int64_t length);
/** Python-style slice start:end:step of dim (step > 0). start/end may be
 *  negative and are clamped to the valid range like Python's. */
lt_tensor *lt_slice(lt_tensor *t, int dim, int64_t start, int64_t end, int64_t step);
/** Index `index` of dim, removing the dim (negative index counts back). */
lt_tensor *lt_select(lt_tensor *t, int dim, int64_t index);
/** Removes dim if its size is 1 (otherwise returns an unchanged view). */
lt_tensor *lt_squeeze(lt_tensor *t, int dim);
/** Removes every size-1 dim. */
lt_tensor *lt_squeeze_all(lt_tensor *t);
/** Inserts a size-1 dim at position dim (0..ndim). */
lt_tensor *lt_unsqueeze(lt_tensor *t, int dim);
/** Broadcasts size-1 dims to dims (-1 keeps a size); new leading dims may
 *  be added. The result has stride 0 on expanded dims: do not write to it. */
lt_tensor *lt_expand(lt_tensor *t, const int64_t *dims, int ndim);
/** Merges dims start_dim..end_dim into one (a view when possible, else a
 *  copy, like lt_reshape). */
lt_tensor *lt_flatten(lt_tensor *t, int start_dim, int end_dim);
/** Diagonal of the (dim1, dim2) plane, offset above (>0) or below (<0)
 *  the main diagonal, as the last dim. */
lt_tensor *lt_diagonal(lt_tensor *t, int64_t offset, int dim1, int dim2);

/* ========================================================================= */
/* Indexing and shaping                                                       */
/* ========================================================================= */

/** Concatenates n tensors along dim; all other sizes must match. Dtypes are
 *  promoted. As in torch, 1-D tensors of size 0 may join tensors of any
 *  shape (they add only their dtype). */
lt_tensor *lt_cat(lt_tensor *const *ts, int n, int dim);
/** Stacks n tensors of equal shape along a new dim. */
lt_tensor *lt_stack(lt_tensor *const *ts, int n, int dim);
/**
 * Splits t into views of split_size along dim (the last may be smaller).
 * Writes at most max_out handles to out and returns how many pieces there
 * are (-1 on error, or if max_out is too small: nothing is written then).
 */
int lt_split(lt_tensor *t, int64_t split_size, int dim, lt_tensor **out, int max_out);
/** Splits t into `chunks` views of ceil(size/chunks) along dim, like
 *  torch.chunk; returns the count (-1 on error). */
int lt_chunk(lt_tensor *t, int chunks, int dim, lt_tensor **out, int max_out);
/** Elements of t at positions index (1-D integer tensor) along dim. */
lt_tensor *lt_index_select(lt_tensor *t, int dim, lt_tensor *index);
/**
 * Advanced indexing, PyTorch's t[i0, i1, ...] with integer index tensors:
 * indices[d] (d < n <= ndim(t)) is an integer tensor indexing dim d of t, or
 * NULL where that dim is taken whole (as `:`); at least one is a tensor,
 * all on t's device. The index tensors broadcast together to a shape B,
 * and negative values count from the end. The result holds the selected
 * elements (a copy): t's shape with the indexed dims replaced by B, in
 * their place when they are adjacent, else first (torch's rule). An index
 * out of range is LT_ERR_INDEX (with several index tensors the range is
 * checked first, which reads them: a sync on the lazy device). A bool mask
 * indexes through the columns of lt_nonzero(mask), one per masked dim.
 *
 *     lt_tensor *rows = lt_index(t, (lt_tensor *[]){NULL, idx}, 2);  // t[:, idx]
 */
lt_tensor *lt_index(lt_tensor *t, lt_tensor *const *indices, int n);
/**
 * t[i0, i1, ...] = values, in place, with the indices of lt_index: values
 * (any dtype, converted to t's) broadcast to the shape lt_index would give.
 * Where an index repeats, one of the values lands. t may be a view: the
 * write reaches its base (lt_copy_). Returns t, or NULL on error.
 */
lt_tensor *lt_index_put_(lt_tensor *t, lt_tensor *const *indices, int n, lt_tensor *values);
/** out[i][j] = t[index[i][j]][j] (dim 0), etc.; index is i64/i32 with the
 *  same ndim as t (a 0-d t takes a 1-D index of zeros, as torch). */
lt_tensor *lt_gather(lt_tensor *t, int dim, lt_tensor *index);
/** A copy of t with src scattered into positions given by index along dim. */
lt_tensor *lt_scatter(lt_tensor *t, int dim, lt_tensor *index, lt_tensor *src);
/** A copy of t with src added into positions given by index along dim. */
lt_tensor *lt_scatter_add(lt_tensor *t, int dim, lt_tensor *index, lt_tensor *src);
/** A copy of t with value where mask (bool) is true. t and mask broadcast
 *  together: a mask with more dims gives their common shape, as torch. */
lt_tensor *lt_masked_fill(lt_tensor *t, lt_tensor *mask, double value);
/** One-hot encoding (i64) of integer class indices, with a trailing dim of
 *  num_classes. Indices must lie in [0, num_classes). */
lt_tensor *lt_one_hot(lt_tensor *indices, int64_t num_classes);
/** Lower triangle (j <= i + k) of the last two dims; the rest zeroed. */
lt_tensor *lt_tril(lt_tensor *t, int64_t k);
/** Upper triangle (j >= i + k) of the last two dims. */
lt_tensor *lt_triu(lt_tensor *t, int64_t k);
/** Sorts along dim (stable). indices (optional) receives i64 positions. */
lt_tensor *lt_sort(lt_tensor *t, int dim, bool descending, lt_tensor **indices);
/** The k largest (or smallest) elements along dim, sorted. */
lt_tensor *lt_topk(lt_tensor *t, int64_t k, int dim, bool largest, lt_tensor **indices);
/** Indices (i64, shape [count, ndim]) of the nonzero elements, in row-major
 *  order. Its shape depends on the data. */
lt_tensor *lt_nonzero(lt_tensor *t);
/** Rows of weight [num, dim] selected by integer indices of any shape;
 *  result shape is indices.shape + [dim]. */
lt_tensor *lt_embedding(lt_tensor *weight, lt_tensor *indices);

/* ---- rearranging (torch.flip ... torch.nn.functional.pad). Compositions of
 * the ops above (views, index_select, cat, expand): traced and lowered on the
 * lazy device, and differentiable. Each returns a new tensor except
 * lt_movedim, lt_unbind and lt_split_sizes, which return views. ---- */

/** t reversed along each of dims[0..ndims) (distinct dims; none: a copy),
 *  as torch.flip. */
lt_tensor *lt_flip(lt_tensor *t, const int *dims, int ndims);
/** t rolled by shifts[i] along dims[i] (torch.roll): element j moves to
 *  (j + shift) mod size. With ndims 0, one shift rolls the flattened tensor
 *  and the shape is kept. A dim given twice rolls twice. */
lt_tensor *lt_roll(lt_tensor *t, const int64_t *shifts, int nshifts, const int *dims, int ndims);
/** t rotated by k quarter turns in the plane of dims dim0 and dim1, from
 *  dim0 towards dim1 (torch.rot90); k may be negative. At least 2 dims. */
lt_tensor *lt_rot90(lt_tensor *t, int64_t k, int dim0, int dim1);
/** t repeated repeats[d] times along each dim (torch.Tensor.repeat): n >= the
 *  rank of t (t gains leading dims of size 1), counts >= 0. */
lt_tensor *lt_repeat(lt_tensor *t, const int64_t *repeats, int n);
/** torch.tile: lt_repeat where fewer reps than dims are padded with leading
 *  1s (and more give t leading dims of size 1). */
lt_tensor *lt_tile(lt_tensor *t, const int64_t *reps, int n);
/** Each slice of t along *dim repeated `repeats` times in a row
 *  (torch.repeat_interleave); with dim NULL, of the flattened tensor. */
lt_tensor *lt_repeat_interleave(lt_tensor *t, int64_t repeats, const int *dim);
/** lt_repeat_interleave with a count per slice: repeats is an integer tensor
 *  of one count per slice along *dim (or 0-d: one for all), counts >= 0. The
 *  result size depends on the counts, which are read (a sync on the lazy
 *  device); the gather itself is traced. */
lt_tensor *lt_repeat_interleave_tensor(lt_tensor *t, lt_tensor *repeats, const int *dim);
/** The slices of t along dim as views of rank ndim - 1 (torch.unbind).
 *  Writes them to out (at most max_out) and returns their count, or -1 on
 *  error (nothing written). */
int lt_unbind(lt_tensor *t, int dim, lt_tensor **out, int max_out);
/** A view of t with dims source[i] moved to positions destination[i], the
 *  other dims keeping their order (torch.movedim); distinct dims. */
lt_tensor *lt_movedim(lt_tensor *t, const int *source, const int *destination, int n);
/** Splits t along dim into n views of sizes[0..n) (torch.split with a list):
 *  sizes >= 0 summing to the dim's size. Returns n, or -1 on error. */
int lt_split_sizes(lt_tensor *t, const int64_t *sizes, int n, int dim, lt_tensor **out, int max_out);
/** Padding modes of lt_pad (torch.nn.functional.pad's mode=). */
enum {
    LT_PAD_CONSTANT,  /**< 'constant': the value */
    LT_PAD_REFLECT,   /**< 'reflect': mirrored, the edge not repeated */
    LT_PAD_REPLICATE, /**< 'replicate': the edge element repeated */
    LT_PAD_CIRCULAR   /**< 'circular': wrapped around */
};
/**
 * Pads the last npad/2 dims of t (torch.nn.functional.pad): pad holds
 * (before, after) for the last dim, then for the one before it, and so on.
 * LT_PAD_CONSTANT takes any dtype, fills with value (cast to t's dtype) and
 * accepts negative pads, which crop. The other modes follow torch's rules:
 * floating tensors (circular: any dtype); 1 to 3 padded dims on a tensor of one more dim (C, ...)
 * or two more (N, C, ...), circular only the latter; reflect pads smaller
 * than the dim, circular ones no larger, replicate a non-empty dim.
 */
lt_tensor *lt_pad(lt_tensor *t, const int64_t *pad, int npad, int mode, double value);

/* ---- indexing by tensors (torch.take ... torch.Tensor.masked_scatter).
 * Compositions of gather, scatter, scatter_add, index_select and where:
 * traced and lowered on the lazy device (masked_select syncs: its size
 * depends on the mask), differentiable in the input and the source. An
 * index out of range is LT_ERR_INDEX (on the lazy device when the step
 * runs). Indices are i64 (i32 is accepted too). ---- */

/** The elements of t, viewed as 1-D, at index (any shape; negative values
 *  count from the end), in index's shape (torch.take). */
lt_tensor *lt_take(lt_tensor *t, lt_tensor *index);
/** torch.take_along_dim: lt_gather along *dim after broadcasting t and
 *  indices (same rank) in every other dim; with dim NULL, the flattened t
 *  at the flattened indices. */
lt_tensor *lt_take_along_dim(lt_tensor *t, lt_tensor *indices, const int *dim);
/** A copy of t with alpha * source[..., i, ...] added to slice index[i] along
 *  dim (torch.index_add): index 0-d or 1-D with values in [0, size),
 *  source of t's dtype and shape except index's length along dim. Repeated
 *  indices add up. An integer t takes alpha truncated to an integer. */
lt_tensor *lt_index_add(lt_tensor *t, int dim, lt_tensor *index, lt_tensor *source, double alpha);
/** lt_index_add writing instead of adding (torch.index_copy); with repeated
 *  indices one of the slices lands. */
lt_tensor *lt_index_copy(lt_tensor *t, int dim, lt_tensor *index, lt_tensor *source);
/** A copy of t with the slices index (0-d or 1-D, negative from the end)
 *  along dim set to value (torch.index_fill). */
lt_tensor *lt_index_fill(lt_tensor *t, int dim, lt_tensor *index, double value);
/** Out-of-place lt_index_put_ (torch.index_put): a copy of t with values at
 *  the indices; with accumulate, values at repeated indices all add up. */
lt_tensor *lt_index_put(lt_tensor *t, lt_tensor *const *indices, int n, lt_tensor *values, bool accumulate);
/** lt_index_put_ adding the values (t[indices] += values with repeated
 *  indices adding up: torch's index_put_(accumulate=True)). Returns t. */
lt_tensor *lt_index_put_accumulate_(lt_tensor *t, lt_tensor *const *indices, int n, lt_tensor *values);
/** The elements of t where mask (bool; t and mask broadcast together) is
 *  true, as a 1-D tensor in row-major order (torch.masked_select). Its size
 *  depends on the mask: a sync on the lazy device. */
lt_tensor *lt_masked_select(lt_tensor *t, lt_tensor *mask);
/** A copy of t (broadcast with mask) whose masked positions, in row-major
 *  order, take source's first elements (torch.masked_scatter): source of
 *  t's dtype, any shape, with at least as many elements as the mask has
 *  true ones. */
lt_tensor *lt_masked_scatter(lt_tensor *t, lt_tensor *mask, lt_tensor *source);
/** Reductions of lt_scatter_reduce (torch.scatter_reduce's reduce=). */
enum {
    LT_SCATTER_SUM,  /**< 'sum' */
    LT_SCATTER_PROD, /**< 'prod' */
    LT_SCATTER_MEAN, /**< 'mean' (integers: floor division) */
    LT_SCATTER_AMAX, /**< 'amax' (NaN wins) */
    LT_SCATTER_AMIN  /**< 'amin' (NaN wins) */
};
/**
 * A copy of t where each position that index points at (along dim, as
 * lt_scatter) holds the reduction of the src elements sent to it, and of
 * its own value when include_self (torch.scatter_reduce). Positions no
 * index points at keep t's value. index (i64) and src have t's rank, index
 * no larger than src, nor than t outside dim; src has t's dtype (bool: sum
 * and amax are or, prod and amin and, mean is refused). Differentiable in t and src as torch (ties of amax/amin share the
 * gradient). prod, amax and amin compare every index with every position
 * along dim: O(size(dim)) work per source element, fused on the lazy
 * device.
 */
lt_tensor *lt_scatter_reduce(lt_tensor *t, int dim, lt_tensor *index, lt_tensor *src, int reduce, bool include_self);
/** In-place forms of lt_index_add, lt_index_copy, lt_index_fill,
 *  lt_masked_scatter (the mask must not broadcast beyond t) and
 *  lt_scatter_reduce: the result is written into t (which may be a view).
 *  Return t, or NULL on error (t unchanged). */
lt_tensor *lt_index_add_(lt_tensor *t, int dim, lt_tensor *index, lt_tensor *source, double alpha);
lt_tensor *lt_index_copy_(lt_tensor *t, int dim, lt_tensor *index, lt_tensor *source);
lt_tensor *lt_index_fill_(lt_tensor *t, int dim, lt_tensor *index, double value);
lt_tensor *lt_masked_scatter_(lt_tensor *t, lt_tensor *mask, lt_tensor *source);
lt_tensor *lt_scatter_reduce_(lt_tensor *t, int dim, lt_tensor *index, lt_tensor *src, int reduce, bool include_self);

/* ---- diagonals, grids, search and unique (torch.diag ... torch.unique).
 * Compositions: traced and lowered on the lazy device except
 * lt_where_indices and lt_unique, whose result sizes depend on the data
 * (they sync, through lt_nonzero). ---- */

/** A 1-D t on diagonal `offset` of a square matrix (zeros elsewhere), or the
 *  diagonal of a 2-D t as a new 1-D tensor (torch.diag). */
lt_tensor *lt_diag(lt_tensor *t, int64_t offset);
/** Each vector along t's last dim on diagonal `offset` of a new plane in
 *  dims dim1 (rows) and dim2 (columns) of a result of rank ndim + 1
 *  (torch.diag_embed); differentiable. */
lt_tensor *lt_diag_embed(lt_tensor *t, int64_t offset, int dim1, int dim2);
/** Sum of the main diagonal of a matrix (torch.trace); integer inputs give
 *  i64, bool is refused. */
lt_tensor *lt_trace(lt_tensor *t);
/** The [2, count] i64 coordinates, row by row, of the cells (r, c) of a row
 *  x col matrix with c - r <= offset (torch.tril_indices), made on dev. */
lt_tensor *lt_tril_indices(int64_t row, int64_t col, int64_t offset, lt_device dev);
/** As lt_tril_indices for c - r >= offset (torch.triu_indices). */
lt_tensor *lt_triu_indices(int64_t row, int64_t col, int64_t offset, lt_device dev);
/** torch.meshgrid of n 0-d or 1-D tensors of one dtype: n grids (expanded
 *  views) of shape [len0, len1, ...] ('ij'), or with indexing_xy the first
 *  two sizes swapped ('xy'). Writes them to out; returns n or -1. */
int lt_meshgrid(lt_tensor *const *ts, int n, bool indexing_xy, lt_tensor **out, int max_out);
/** The cartesian product of n 1-D tensors of one dtype: [prod(len), n]
 *  rows in lexicographic order (torch.cartesian_prod; n == 1: a copy). */
lt_tensor *lt_cartesian_prod(lt_tensor *const *ts, int n);
/** torch.where(t) with one argument (torch.nonzero(as_tuple=True)): one i64
 *  tensor of coordinates per dim of t (one for a 0-d t). Writes them to
 *  out; returns their count or -1. Syncs on the lazy device. */
int lt_where_indices(lt_tensor *t, lt_tensor **out, int max_out);
/** For each of values, the insertion point into the ascending last dim of
 *  sorted (torch.searchsorted): the first position whose element is >= the
 *  value, or > with right. sorted is 1-D or has values' leading dims; the
 *  result has values' shape, i64 (i32 with out_int32). A NaN value goes
 *  last; a sequence holding NaN is not sorted (torch's result then depends
 *  on its binary search, this one counts). Bool is refused. */
lt_tensor *lt_searchsorted(lt_tensor *sorted, lt_tensor *values, bool out_int32, bool right);
/** lt_searchsorted with torch's sorter= and side=: sorter (i64, sorted's
 *  shape; NULL: sorted is already ascending) holds, along the last dim, the
 *  positions that put sorted in ascending order (as lt_sort's indices give
 *  them); side is "left" (or NULL) or "right". A sorter index out of range
 *  is an error (torch does not check). */
lt_tensor *lt_searchsorted_sorter(lt_tensor *sorted, lt_tensor *values, lt_tensor *sorter, bool out_int32,
                                  const char *side);
/** The bucket of each element of t among 1-D ascending boundaries
 *  (torch.bucketize): lt_searchsorted(boundaries, t, out_int32, right). */
lt_tensor *lt_bucketize(lt_tensor *t, lt_tensor *boundaries, bool out_int32, bool right);
/** The distinct elements of t, ascending, as a 1-D tensor (torch.unique with
 *  sorted=True; for sorted=False torch 1.13 returns the iteration order
 *  of its hash set, torch >= 2.1 on the CPU sorts as here). *inverse (if not NULL) gets, in t's shape, each element's
 *  position in the result (i64), *counts (if not NULL) how often each
 *  occurs. NaNs are each distinct. Not differentiable; syncs on the lazy
 *  device (the result size depends on the data). */
lt_tensor *lt_unique(lt_tensor *t, lt_tensor **inverse, lt_tensor **counts);
/** The distinct slices of t along dim (torch.unique(t, dim=dim)), in
 *  lexicographic order of their elements (torch sorts them whatever its
 *  sorted= says): a tensor of t's shape but for size(dim). *inverse (if not
 *  NULL) gets each slice's position in the result (i64, [size(dim)]),
 *  *counts (if not NULL) how often each result slice occurs. Slices holding
 *  NaN are each distinct. Another dim of size 0 is refused (as torch). Not
 *  differentiable; syncs on the lazy device. */
lt_tensor *lt_unique_dim(lt_tensor *t, int dim, lt_tensor **inverse, lt_tensor **counts);
/** One element of each run of equal consecutive elements of the flattened t
 *  (torch.unique_consecutive), in their order; *inverse (t's shape) and
 *  *counts as for lt_unique. Not differentiable; syncs on the lazy device. */
lt_tensor *lt_unique_consecutive(lt_tensor *t, lt_tensor **inverse, lt_tensor **counts);
/** lt_unique_consecutive of the slices along dim (torch.unique_consecutive(
 *  t, dim=dim)); *inverse is [size(dim)], as for lt_unique_dim. */
lt_tensor *lt_unique_consecutive_dim(lt_tensor *t, int dim, lt_tensor **inverse, lt_tensor **counts);

/* ========================================================================= */
/* Linear algebra and neural-network ops                                      */
/* ========================================================================= */

/**
 * Matrix product with torch.matmul semantics: 1-D x 1-D is a dot product,
 * 2-D x 2-D a matrix product, 1-D operands get a dim prepended/appended and
 * removed again, and batch dims broadcast. Floating types use OpenBLAS.
 */
lt_tensor *lt_matmul(lt_tensor *a, lt_tensor *b);
/* Products built on matmul (torch's names and semantics; the operands of
 * one call share a dtype, as torch requires, and integer operands take
 * integral alpha and beta). On the lazy device the scaling and the added
 * input fuse after the product. */
/** Outer product of 1-D a [n] and b [m]: [n, m]. */
lt_tensor *lt_outer(lt_tensor *a, lt_tensor *b);
/** Dot product of two 1-D tensors of one length and dtype: a 0-d tensor. */
lt_tensor *lt_dot(lt_tensor *a, lt_tensor *b);
/** torch.vdot: the dot product with a conjugated (real dtypes: lt_dot). */
lt_tensor *lt_vdot(lt_tensor *a, lt_tensor *b);
/** beta * input + alpha * (m1 @ m2) for m1 [n, k], m2 [k, p] and input
 *  broadcasting to [n, p]; beta 0 ignores input, NaNs included. */
lt_tensor *lt_addmm(lt_tensor *input, lt_tensor *m1, lt_tensor *m2, double beta, double alpha);
/** beta * input + alpha * (b1 @ b2), batched: b1 [B, n, k], b2 [B, k, p],
 *  input broadcasting to [B, n, p]. */
lt_tensor *lt_baddbmm(lt_tensor *input, lt_tensor *b1, lt_tensor *b2, double beta, double alpha);
/** beta * input + alpha * sum over the batch of b1[i] @ b2[i]: b1 [B, n,
 *  k], b2 [B, k, p], input broadcasting to [n, p]. */
lt_tensor *lt_addbmm(lt_tensor *input, lt_tensor *b1, lt_tensor *b2, double beta, double alpha);
/** Kronecker product; the operand with fewer dims gets leading sizes of 1.
 *  At most LT_MAX_DIMS / 2 dims. */
lt_tensor *lt_kron(lt_tensor *a, lt_tensor *b);
/*
 * einsum and torch.linalg's LAPACK family.
 *
 * lt_einsum is a composition of diagonal views, sums, permutes, reshapes
 * and lt_matmul: traced, fused and differentiated like its parts.
 *
 * The lt_linalg_* functions take f32 or f64 matrices [..., m, n] (any
 * number of batch dims; a size-0 batch or matrix gives an empty or
 * identity-like result as in torch) and compute in f64 through the LAPACK
 * that OpenBLAS ships (f32 results are rounded from it). On the lazy
 * device they sync their inputs and run eagerly, counted as fallbacks in
 * the metrics (like lt_nonzero). Gradients, torch's formulas: inv, solve,
 * det, slogdet (log|det|), cholesky, svdvals and eigh (through the
 * eigenvalues; a gradient reaching the eigenvectors is an error). qr, svd
 * and lstsq are not differentiable (an error at backward).
 */
/**
 * torch.einsum: equation "ij,jk->ik" names each dim of the n operands with
 * a letter (a-z, A-Z; case matters), "..." stands for the leading or
 * middle dims an operand has beyond its letters (they broadcast, right
 * aligned). A letter repeated in one operand takes its diagonal; letters
 * missing from the output are summed. Without "->" the output is the
 * ellipsis dims then the letters used exactly once, in the order A-Z then
 * a-z. Size-1 dims broadcast against their letter's size. Spaces are
 * ignored. The operands share one dtype. Errors name the bad part of the
 * equation (an unknown character, a subscript count that does not match
 * an operand's dims, an output letter missing from the inputs or
 * repeated, sizes that do not broadcast, a stray '.').
 */
lt_tensor *lt_einsum(const char *equation, lt_tensor *const *operands, int n);
/** Inverse of square matrices (torch.linalg.inv); a singular matrix is an
 *  error naming the batch matrix. */
lt_tensor *lt_linalg_inv(lt_tensor *a);
/** Solves A X = B (torch.linalg.solve): A [..., n, n], B [..., n, k], or a
 *  vector right-hand side B [n] / A's shape without its last dim (then X
 *  has B's shape). Batch dims broadcast; a singular A is an error. */
lt_tensor *lt_linalg_solve(lt_tensor *a, lt_tensor *b);
/** Determinant [...] of square matrices (torch.linalg.det): sign * exp of
 *  log|det| from the LU factorization, 0 for a singular matrix. Its
 *  gradient needs an invertible matrix (a singular one gives inf/NaN). */
lt_tensor *lt_linalg_det(lt_tensor *a);
/** torch.linalg.slogdet: returns the sign (-1, 0 or 1) of the determinant
 *  and sets *logabsdet (when not NULL) to log|det| (-inf when singular). */
lt_tensor *lt_linalg_slogdet(lt_tensor *a, lt_tensor **logabsdet);
/** Lower Cholesky factor L (A = L L^T) of symmetric positive-definite
 *  matrices (torch.linalg.cholesky); only the lower triangle of A is read.
 *  A matrix that is not positive-definite is an error. */
lt_tensor *lt_linalg_cholesky(lt_tensor *a);
/** Reduced QR (torch.linalg.qr, mode 'reduced'): returns Q [..., m, k] and
 *  sets *r (when not NULL) to R [..., k, n], k = min(m, n); LAPACK's
 *  Householder signs, as torch. */
lt_tensor *lt_linalg_qr(lt_tensor *a, lt_tensor **r);
/** Reduced SVD (torch.linalg.svd, full_matrices=False): returns U [..., m,
 *  k] and sets *s (descending singular values [..., k]) and *vh ([..., k,
 *  n]) when not NULL. The signs of singular vectors are LAPACK's (gesdd). */
lt_tensor *lt_linalg_svd(lt_tensor *a, lt_tensor **s, lt_tensor **vh);
/** Singular values [..., min(m, n)], descending (torch.linalg.svdvals). */
lt_tensor *lt_linalg_svdvals(lt_tensor *a);
/** Eigen decomposition of symmetric matrices from their lower triangle
 *  (torch.linalg.eigh, UPLO='L'): returns the ascending eigenvalues [...,
 *  n] and sets *eigenvectors (columns, [..., n, n]) when not NULL. */
lt_tensor *lt_linalg_eigh(lt_tensor *a, lt_tensor **eigenvectors);
/** Least-squares solution X of A X = B (torch.linalg.lstsq(...).solution):
 *  A [..., m, n], B [..., m, k], or B with one dim less than A (a vector
 *  right-hand side, torch's rule for lstsq; X then has B's rank); the
 *  minimum-norm solution (LAPACK gelsd), singular values below eps(dtype)
 *  * max(m, n) * the largest counting as zero. Batch dims broadcast. */
lt_tensor *lt_linalg_lstsq(lt_tensor *a, lt_tensor *b);
/** Nuclear norm, the sum of the singular values, over two dims as
 *  lt_matrix_norm takes them (torch.linalg.matrix_norm(ord='nuc')); 0 for
 *  empty matrices. */
lt_tensor *lt_matrix_norm_nuc(lt_tensor *t, const int *dims, int ndims, bool keepdim);
/**
 * 2-D convolution (cross-correlation). x: [N, C, H, W]; w: [O, C/groups,
 * kH, kW]; bias: [O] or NULL. stride, padding, dilation: 2 values each
 * (NULL means 1, 0, 1). Output [N, O, Ho, Wo]. An unbatched x [C, H, W]
 * gives [O, Ho, Wo] (likewise for both poolings). Floating operands, or
 * integer ones of one dtype (i32, i64, u8) as torch accepts them: those
 * run in f64 and convert back (sums wrap like the type, as in torch;
 * exact while they stay below 2^53 in magnitude).
 */
lt_tensor *lt_conv2d(lt_tensor *x, lt_tensor *w, lt_tensor *bias, const int64_t *stride,
                     const int64_t *padding, const int64_t *dilation, int64_t groups);
/** Max pooling over [N, C, H, W] with -inf padding; stride NULL means
 *  kernel. indices (optional) receives i64 flat h*W+w positions. */
lt_tensor *lt_max_pool2d(lt_tensor *x, const int64_t *kernel, const int64_t *stride,
                         const int64_t *padding, lt_tensor **indices);
/** Average pooling over [N, C, H, W]; padded zeros count in the divisor
 *  when count_include_pad is true (PyTorch's default). Floating x, or i64
 *  (as torch: the mean truncated toward zero). */
lt_tensor *lt_avg_pool2d(lt_tensor *x, const int64_t *kernel, const int64_t *stride,
                         const int64_t *padding, bool count_include_pad);

/* ---- convolution, pooling and resampling beyond conv2d (torch.nn.functional
 * names and argument order). Each is a composition of conv2d's ops, views,
 * index_select / index_add and reductions: traced and lowered on the lazy
 * device and differentiable. Inputs are floating, or integer for the
 * convolutions as for lt_conv2d (transposed ones: i64 only, as torch); an
 * input without its batch dim gives a result without it, where torch
 * accepts one. ---- */

/** 1-D convolution: x [N, C, L] (or [C, L]), w [O, C/groups, k], bias [O]
 *  or NULL -> [N, O, Lo], Lo = (L + 2p - d(k-1) - 1) / stride + 1. */
lt_tensor *lt_conv1d(lt_tensor *x, lt_tensor *w, lt_tensor *bias, int64_t stride, int64_t padding,
                     int64_t dilation, int64_t groups);
/** 3-D convolution: x [N, C, D, H, W] (or [C, D, H, W]), w [O, C/groups,
 *  kD, kH, kW], bias [O] or NULL; stride, padding, dilation: 3 values each
 *  (NULL: 1, 0, 1). */
lt_tensor *lt_conv3d(lt_tensor *x, lt_tensor *w, lt_tensor *bias, const int64_t *stride, const int64_t *padding,
                     const int64_t *dilation, int64_t groups);
/** Transposed 2-D convolution (the adjoint of conv2d): x [N, Cin, H, W]
 *  (or [Cin, H, W]), w [Cin, Cout/groups, kH, kW], bias [Cout] or NULL ->
 *  [N, Cout, Ho, Wo], Ho = (H-1)*stride - 2*padding + dilation*(kH-1) +
 *  output_padding + 1. stride, padding, output_padding, dilation: 2 values
 *  each (NULL: 1, 0, 0, 1); output_padding must be below the stride or the
 *  dilation. */
lt_tensor *lt_conv_transpose2d(lt_tensor *x, lt_tensor *w, lt_tensor *bias, const int64_t *stride,
                               const int64_t *padding, const int64_t *output_padding, int64_t groups,
                               const int64_t *dilation);
/** Transposed 1-D convolution: x [N, Cin, L] (or [Cin, L]), w [Cin,
 *  Cout/groups, k]; rules as lt_conv_transpose2d. */
lt_tensor *lt_conv_transpose1d(lt_tensor *x, lt_tensor *w, lt_tensor *bias, int64_t stride, int64_t padding,
                               int64_t output_padding, int64_t groups, int64_t dilation);
/** im2col (torch.nn.functional.unfold): x [N, C, H, W] (or [C, H, W]) ->
 *  [N, C*kH*kW, L], L the number of window positions, row c*kH*kW + i*kW +
 *  j holding tap (i, j) of channel c. kernel: 2 values (not NULL);
 *  dilation, padding, stride: 2 values each (NULL: 1, 0, 1). */
lt_tensor *lt_unfold(lt_tensor *x, const int64_t *kernel, const int64_t *dilation, const int64_t *padding,
                     const int64_t *stride);
/** col2im (torch.nn.functional.fold), the adjoint of lt_unfold: x [N,
 *  C*kH*kW, L] (or without N) -> [N, C, output_size[0], output_size[1]],
 *  overlapping taps summed. L must be the number of window positions. */
lt_tensor *lt_fold(lt_tensor *x, const int64_t *output_size, const int64_t *kernel, const int64_t *dilation,
                   const int64_t *padding, const int64_t *stride);
/** [..., C*r*r, H, W] -> [..., C, H*r, W*r] (torch.nn.functional.pixel_shuffle). */
lt_tensor *lt_pixel_shuffle(lt_tensor *x, int64_t upscale_factor);
/** [..., C, H*r, W*r] -> [..., C*r*r, H, W], the inverse of lt_pixel_shuffle. */
lt_tensor *lt_pixel_unshuffle(lt_tensor *x, int64_t downscale_factor);
/** Max pooling with dilation and ceil_mode (then the last window may start
 *  in the input or its left padding and hang over the right edge); other
 *  arguments as lt_max_pool2d (dilation NULL: 1). Without dilation and
 *  without a window added by ceil_mode this is lt_max_pool2d. */
lt_tensor *lt_max_pool2d_ext(lt_tensor *x, const int64_t *kernel, const int64_t *stride, const int64_t *padding,
                             const int64_t *dilation, bool ceil_mode, lt_tensor **indices);
/** Average pooling with ceil_mode and divisor_override (0: none, else the
 *  divisor of every window), dividing as torch does; other arguments, and
 *  i64 inputs, as lt_avg_pool2d. */
lt_tensor *lt_avg_pool2d_ext(lt_tensor *x, const int64_t *kernel, const int64_t *stride, const int64_t *padding,
                             bool ceil_mode, bool count_include_pad, int64_t divisor_override);
/** 1-D max pooling over x [N, C, L] (or [C, L]); stride 0 means kernel.
 *  indices (optional) receives i64 positions along L. */
lt_tensor *lt_max_pool1d(lt_tensor *x, int64_t kernel, int64_t stride, int64_t padding, int64_t dilation,
                         bool ceil_mode, lt_tensor **indices);
/** 1-D average pooling over x [N, C, L] (or [C, L]); stride 0 means
 *  kernel. Floating x, or i64 as lt_avg_pool2d. */
lt_tensor *lt_avg_pool1d(lt_tensor *x, int64_t kernel, int64_t stride, int64_t padding, bool ceil_mode,
                         bool count_include_pad);
/** Adaptive average pooling of the last dim ([N, C, L] or [C, L]) to
 *  output_size cells; cell i covers [floor(i*L/n), ceil((i+1)*L/n)). */
lt_tensor *lt_adaptive_avg_pool1d(lt_tensor *x, int64_t output_size);
/** Adaptive average pooling of [N, C, H, W] (or [C, H, W]) to
 *  output_size[0] x output_size[1] cells. */
lt_tensor *lt_adaptive_avg_pool2d(lt_tensor *x, const int64_t *output_size);
/** Adaptive max pooling of the last dim; indices (optional): i64 positions. */
lt_tensor *lt_adaptive_max_pool1d(lt_tensor *x, int64_t output_size, lt_tensor **indices);
/** Adaptive max pooling of [N, C, H, W] (or [C, H, W]); indices
 *  (optional) receives the flat h * W + w position of each cell's first
 *  maximum. */
lt_tensor *lt_adaptive_max_pool2d(lt_tensor *x, const int64_t *output_size, lt_tensor **indices);
/** lt_interpolate's modes. */
enum {
    LT_INTERP_NEAREST = 0, /**< 'nearest': x [N, C, L] or [N, C, H, W] */
    LT_INTERP_LINEAR = 1,  /**< 'linear': x [N, C, L] */
    LT_INTERP_BILINEAR = 2 /**< 'bilinear': x [N, C, H, W] */
};
/** torch.nn.functional.interpolate: resamples the spatial dims to `size`
 *  (1 or 2 values) or by `scale_factor` (as many doubles > 0; the output is
 *  floor(in * factor) and the factor sets the source positions, as torch
 *  without recompute_scale_factor). Exactly one of them is given.
 *  align_corners (linear modes only) maps the corner pixels onto each
 *  other. */
lt_tensor *lt_interpolate(lt_tensor *x, const int64_t *size, const double *scale_factor, int mode,
                          bool align_corners);

/* ========================================================================= */
/* Reading values (IR-incompatible: they need concrete data)                  */
/* ========================================================================= */

/** The single element of a one-element tensor, as a double. */
lt_status lt_item(lt_tensor *t, double *out);
/** The single element of a one-element integer/bool tensor, exactly. */
lt_status lt_item_int(lt_tensor *t, int64_t *out);
/**
 * Copies the elements of t, in row-major order and in t's dtype, to dst.
 * cap is the size of dst in bytes; it must be at least numel * elem size.
 */
lt_status lt_copy_to_host(lt_tensor *t, void *dst, size_t cap);
/**
 * Formats t the way torch prints tensors ("tensor([[1., 2.], ...])"),
 * summarizing with "..." above 1000 elements. snprintf semantics: returns
 * the full length (or -1 on error) and writes at most cap bytes to buf.
 */
int lt_format(lt_tensor *t, char *buf, size_t cap);
/** Prints lt_format's text and a newline to stdout. */
lt_status lt_print(lt_tensor *t);

/* ========================================================================= */
/* The lazy device: barrier, metrics and IR dumps                             */
/* ========================================================================= */

/*
 * On the "lazy" device every op records an IR node and returns at once.
 * The barrier cuts the graph: every live lazy tensor with pending IR is
 * computed by one program, which is compiled once per distinct graph
 * (cached under a canonical key: structure, shapes, dtypes and each input's
 * position; the scalars 0 and 1 are part of the key, every other scalar is
 * a runtime parameter) and then executed. IR-incompatible calls (lt_item,
 * lt_copy_to_host, lt_format, lt_to to another device) run the barrier
 * first. Ops without a lowering run eagerly on synced inputs (counted as
 * fallbacks). At a step barrier only, an input buffer whose tensor receives
 * a new value and that no live tensor can still observe is reused for an
 * output (donation).
 */

/**
 * Step barrier: runs all pending IR of the lazy device and waits for it.
 * Counts a MarkStep. Buffers may be donated.
 *
 * A barrier is a transaction. If the program fails at run time (a pending
 * gather, index_select, embedding, scatter or cross_entropy met an index out
 * of range; integer remainder by zero), every tensor keeps the state it had
 * before the barrier: pending values stay pending (and can still be read
 * one by one: a read computes only what it needs), data stays data, no
 * in-place update is applied twice and no buffer is reused (a step with
 * such ops donates only after checking their indices). The message
 * names the public function that recorded the failing op, the op it was
 * lowered to and the call that forced the barrier, e.g. "lt_cross_entropy:
 * failed when run (lowered to gather: index 5 is out of range for dim 1 of
 * size 3 (expected 0..2)) (while running the lazy step forced by
 * lt_mark_step)"; a function that records one op of its own name (lt_gather)
 * is named by the kernel's message alone ("gather: index 5 ..."). The
 * failing values stay pending, so the next barrier
 * fails again until they die or lt_lazy_discard drops them.
 */
lt_status lt_mark_step(void);
/**
 * Barrier: runs all pending IR. With wait == false it may return before
 * execution ends, and ops recorded meanwhile may use its results without
 * waiting (the next step is traced while this one runs). Reading a result,
 * writing into one in place, or the next barrier waits for it and reports
 * its failure, if any, with every tensor as it was before the barrier (see
 * lt_mark_step); ops recorded from the failed results then fail at their
 * barrier until lt_lazy_discard drops them. Buffers may be donated (this
 * is a step barrier).
 */
lt_status lt_barrier(bool wait);
/**
 * Drops every pending computation of the lazy device, typically after a
 * failed step: each tensor with a pending value goes back to its last data
 * (a parameter updated in place gets the values it had before the step),
 * and a tensor that never had data becomes an error state (using it fails
 * with LT_ERR_STATE, "discarded by lt_lazy_discard"). An execution in
 * flight is waited for first; if it failed, its failure is dropped
 * unreported. Returns how many tensors (views and wrapped scalars aside)
 * lost a pending value, or -1 (LT_ERR_STATE) when another thread owns the
 * lazy device. Host-side state (optimizer settings, learning-rate
 * schedules, data loaders) is not rolled back.
 *
 *     if (lt_mark_step() != LT_OK) {   // one bad batch
 *         report(lt_last_error());
 *         lt_lazy_discard();          // parameters: as after the last good step
 *     }
 */
int64_t lt_lazy_discard(void);
/** Selects the lazy device's backend by name:
 *  "tiered" (the default when a C compiler works): a graph whose native
 *          program is ready (in memory, or in the disk cache: loaded at
 *          once) runs it; a new graph runs at once on "interp" while its
 *          native program is compiled on a background thread, and the
 *          executions after it is built use it (an execution never switches
 *          tiers half-way). A background compile that fails leaves the graph
 *          on "interp" (a warning, the CompileErrors and
 *          BackgroundCompileFailures counters). At exit, queued background
 *          compiles are dropped and the one running is finished;
 *  "cpu"   (the compiler: fused C kernels built with the system C compiler):
 *          every new graph waits for its native program. Tests and
 *          benchmarks that check compiled code select it (or call
 *          lt_lazy_wait_compiles);
 *  "interp" runs each node with the eager kernels.
 *  LT_BACKEND sets the initial choice; LT_TIERED=0 makes the default "cpu"
 *  instead of "tiered". The compiler is LT_CC with LT_CFLAGS (split into
 *  words like the shell does, never run through a shell); a compiler run
 *  longer than LT_CC_TIMEOUT seconds (default 120) is killed with a warning
 *  and graphs then run on "interp". Built programs are cached in
 *  LT_CACHE_DIR (default ~/.cache/lazytensor), which must be a directory
 *  of the user's, not a symlink, that nobody else can write; otherwise it
 *  is refused with a warning and programs are built in a private temporary
 *  directory. "cpu" and "tiered" fail with LT_ERR_UNSUPPORTED when no
 *  compiler works. */
lt_status lt_lazy_set_backend(const char *name);
/** Waits until no background compile of the "tiered" backend is queued or
 *  running: from then on every graph met so far runs its native program
 *  (or stays on "interp" for good if its compile failed). Any thread may
 *  call it; it touches no lazy tensor. Always LT_OK. */
lt_status lt_lazy_wait_compiles(void);
/** Name of the lazy device's current backend. */
const char *lt_lazy_backend(void);
/** Capacity of the compiled-program cache (LRU, default 1024 programs, env
 *  LT_CACHE_SIZE); n >= 1. */
lt_status lt_lazy_set_cache_size(int n);
/**
 * Gives up this thread's ownership of the lazy device (see THREADS under
 * Devices), after waiting for an execution in flight (whose failure is
 * returned), so that another thread may use it. LT_OK when nobody owns it;
 * LT_ERR_STATE when another thread does.
 */
lt_status lt_lazy_release_thread(void);

/** Why the lazy device compiled a graph (see lt_lazy_last_compile_cause). */
typedef enum lt_compile_cause {
    LT_COMPILE_NONE = 0,   /* the latest barrier found its program cached */
    LT_COMPILE_FIRST,      /* nothing compiled before to compare with */
    LT_COMPILE_SHAPE,      /* an input (or an op's result) has a new shape */
    LT_COMPILE_DTYPE,      /* ... a new dtype */
    LT_COMPILE_STRUCTURE,  /* another op, other operands or other attributes */
    LT_COMPILE_SCALAR,     /* a scalar became special: 0 and 1 are compiled in */
    LT_COMPILE_OUTPUTS,    /* the same ops, another set of live outputs */
    LT_COMPILE_EVICTED     /* the same graph, dropped from the program cache
                              (or compiled for another backend) */
} lt_compile_cause;
/**
 * Why the latest lazy barrier compiled its graph, as text (snprintf
 * semantics; "" when that barrier found its program cached). On a cache
 * miss the new graph is compared with the graphs compiled most recently
 * (the last 16, fewer when they are large), and the nearest one names the
 * first difference and the public function that recorded it (lt_<op> for
 * a function that records one op), e.g. "new shape: input 1 of the graph
 * (node 0, read by lt_matmul) is f32[104, 784], the cached graph's was
 * f32[128, 784]". LT_DEBUG=1 prints the same text under each cache miss;
 * each cause is counted ("CompileCauseFirst", "CompileCauseShape",
 * "CompileCauseDtype", "CompileCauseStructure", "CompileCauseScalar",
 * "CompileCauseOutputs", "CompileCauseEvicted"). Only barriers' own programs
 * count, not the small programs that check indices before a step. Any
 * thread may call it. Returns -1 (LT_ERR_NULL) if buf is NULL and cap > 0.
 */
int lt_lazy_last_compile_cause(char *buf, size_t cap);
/** The cause of lt_lazy_last_compile_cause as a value (LT_COMPILE_NONE
 *  after a cache hit). Any thread may call it. */
lt_compile_cause lt_lazy_last_compile_kind(void);

/** Value of a counter: "CachedCompile", "UncachedCompile", "MarkStep",
 *  "Barrier", "Fallback" (all ops), "Fallback.<op>", "TensorsCreated",
 *  "TensorsDestroyed", "TransferToDevice", "TransferFromDevice",
 *  "DonatedBuffers", "GraphNodes", "ProgramOutputs" (of the last program),
 *  "AsyncExecutions", "BarrierWaits", "FailedExecutions", "DiscardedValues"
 *  (tensors dropped by lt_lazy_discard), "IndexChecks" (index operands
 *  checked before a step that donates), "GraphSizeWarnings" and
 *  "AutoBarriers" (a graph grown past LT_GRAPH_WARN_NODES without a
 *  barrier: the warning, and the barriers LT_AUTO_BARRIER=1 inserted),
 *  "Steps" (step barriers: lt_mark_step, lt_barrier, lt_step_end),
 *  "CompilesAfterWarmup" (compiles once 2 steps have ended), and
 *  "CompileCause<Cause>" (see lt_lazy_last_compile_cause);
 *  with the cpu backend also "Kernels"
 *  (of the last compiled program), "KernelFunctions" (the functions its
 *  kernels share), "KernelCalls", "FusedGemmUpdates" (its matmuls
 *  that accumulate straight into an update such as w - lr * grad, with no
 *  product buffer and no pointwise pass), "ProgramBytes" (its
 *  generated C), "TranslationUnits", "ColdUnits", "DiskCacheHit",
 *  "DiskCacheMiss", "DiskCacheCorrupt", "DiskCacheEvicted", "CompileErrors";
 *  with the tiered backend also "BackgroundCompiles" (native programs
 *  queued for a background compile: graphs met with no native program in
 *  memory or on disk), "InterpTierRuns" (executions on the interp tier while
 *  the native program was not ready), "TierSwaps" (native programs a
 *  background compile installed) and "BackgroundCompileFailures".
 *  UncachedCompile counts each new graph once, whatever tier runs it.
 *  Unknown names give 0. */
int64_t lt_metrics_counter(const char *name);
/** Timer statistics in milliseconds ("CompileTime", "ExecuteTime",
 *  "TracingTime", "TransferTime"; with the tiered backend CompileTime is the
 *  part the barrier waits for, and "BackgroundCompileTime" the rest).
 *  TracingTime times one traced op in 16: its count is the number of
 *  sampled ops, its total and percentiles are per op. */
typedef struct lt_timer_stats {
    int64_t count;
    double total_ms, p50_ms, p90_ms, p99_ms, max_ms;
} lt_timer_stats;
/** Fills *out for timer `name` (zeros for an unknown or unused timer). */
lt_status lt_metrics_timer(const char *name, lt_timer_stats *out);
/** Resets every counter and timer. */
void lt_metrics_reset(void);
/**
 * A text report of every non-zero counter and timer, then a "Problems:"
 * section (snprintf semantics) that flags, each on a line of its own:
 *  - "recompiling": more than one compile after the warm-up (the first 2
 *    step barriers), with the latest compile's cause; a steady training
 *    loop compiles nothing after warm-up, or once (a last, smaller batch);
 *  - "fallback": ops without a lowering that ran eagerly, by name and
 *    count ("Fallback.<op>");
 *  - "growing graph": a graph grew past LT_GRAPH_WARN_NODES nodes without
 *    a barrier ("GraphSizeWarnings").
 * The section reads "Problems: none" when nothing is flagged.
 */
int lt_metrics_report(char *buf, size_t cap);

/**
 * The pending IR graph behind tensors ts[0..n) in the paper's text form
 * ("IR {\n  %0 = f32[2,4] device_data()\n ...}"), snprintf semantics.
 * Tensors without pending IR appear as device_data. Roots are marked
 * ", ROOT=<i>" in the order given.
 */
int lt_ir_text(lt_tensor *const *ts, int n, char *buf, size_t cap);
/** The same graph as Graphviz DOT. */
int lt_ir_dot(lt_tensor *const *ts, int n, char *buf, size_t cap);

/* ========================================================================= */
/* Autograd                                                                   */
/* ========================================================================= */

/*
 * Reverse-mode automatic differentiation. Ops on tensors that require grad
 * record a tape node (while grad mode is on); lt_backward walks the tape in
 * reverse and accumulates gradients into the leaves that require grad.
 * Every gradient formula is written with the public tensor ops, so on the
 * lazy device the backward pass is traced into the same graph as the
 * forward pass and the update.
 *
 * In-place ops on a tensor that requires grad are refused while grad mode
 * is on (use lt_no_grad_begin/end around parameter updates).
 */

/** Marks a floating-point tensor as requiring grad (a leaf). */
lt_status lt_set_requires_grad(lt_tensor *t, bool requires);
/** True if t requires grad (a leaf that was marked, or a result of ops on
 *  such tensors with grad mode on). */
bool lt_requires_grad(const lt_tensor *t);
/**
 * Computes gradients of `root` with respect to every leaf that requires
 * grad, adding them into the leaves' .grad. grad_output (same shape as
 * root) seeds the pass; it may be NULL only when root has one element. The
 * tape behind root is released afterwards: a second backward through it
 * is an error.
 */
lt_status lt_backward(lt_tensor *root, lt_tensor *grad_output);
/** The accumulated gradient of leaf t (a new reference), or NULL without
 *  error when it has none. */
lt_tensor *lt_grad(lt_tensor *t);
/** Drops t's accumulated gradient. */
lt_status lt_zero_grad(lt_tensor *t);
/** A tensor with t's values that does not require grad and records no
 *  tape. On cpu it shares t's storage (in-place writes to either show in
 *  both); on the lazy device it is a separate tensor holding t's current
 *  value. */
lt_tensor *lt_detach(lt_tensor *t);
/** Opens / closes a no-grad region (nestable, per thread): ops record no
 *  tape inside. */
void lt_no_grad_begin(void);
void lt_no_grad_end(void);
/** True when grad mode is on (no no-grad region is open). */
bool lt_grad_enabled(void);
/**
 * A scope that is also a no-grad region, PyTorch's `with torch.no_grad():`
 * in the scope idiom: lt_no_grad_scope_begin opens a scope and a no-grad
 * region; lt_no_grad_scope_end closes both. It returns LT_ERR_STATE (and
 * closes nothing) when no such scope is open or a scope opened inside it
 * is still open.
 *
 *     lt_no_grad_scope_begin();
 *     lt_sub_scaled_(w, lt_grad(w), lr);   // the grad's reference dies below
 *     lt_no_grad_scope_end();
 */
void lt_no_grad_scope_begin(void);
lt_status lt_no_grad_scope_end(void);

/* ========================================================================= */
/* Distributed: ranks and collectives (Open MPI)                              */
/* ========================================================================= */

/*
 * A program started by `mpirun -np N prog ...` runs as N processes (ranks)
 * that train one model together; mpirun alone sets everything up (rank,
 * world size and local rank come from its environment). Started without a
 * launcher, the world has one rank, no MPI is loaded or initialized, and
 * every collective is a cheap identity (a copy), so one program serves
 * both cases without a branch.
 *
 * Collectives are ops: on cpu they run at once; on the lazy device they are
 * traced, hashed and compiled like any op and run inside the step program
 * at the barrier. Every rank must make the same collective calls in the
 * same order, with the same dtype and shape (and root or reduction): before
 * each call the ranks exchange its signature, and a disagreement is an
 * LT_ERR_DIST error on every rank naming both calls and ranks. A rank that
 * does not answer within LT_DIST_TIMEOUT seconds (default 120) is reported
 * by rank number (LT_ERR_DIST), never a hang; after that the run cannot go
 * on. A step program that holds a collective does not donate buffers (a
 * collective can fail on a peer; the barrier stays a transaction).
 * Every dtype is accepted; bf16 and f16 are reduced in f32.
 */
typedef enum lt_reduce_op {
    LT_REDUCE_SUM = 0,  /**< sum over ranks (bool: logical or) */
    LT_REDUCE_MEAN = 1, /**< sum divided by the world size (floating dtypes only) */
    LT_REDUCE_MAX = 2   /**< largest value over ranks (bool: logical or); not differentiable */
} lt_reduce_op;

/**
 * Starts the distributed run: under a launcher (Open MPI's mpirun, or a
 * PMIx launcher) loads Open MPI (libmpi.so.40, or LT_MPI_LIBRARY) and
 * initializes it; without one, does nothing. Idempotent; collectives call
 * it themselves. An exit handler calls lt_dist_finalize if the program does
 * not. LT_ERR_UNSUPPORTED if the launcher is there but Open MPI is not.
 */
lt_status lt_dist_init(void);
/**
 * Ends the distributed run; every rank must call it (or exit normally).
 * A rank still calling collectives while another ends is reported on both
 * (LT_ERR_DIST: the ranks ran different numbers of steps). Later
 * collectives fail with LT_ERR_STATE. Idempotent.
 */
lt_status lt_dist_finalize(void);
/** This process's rank, 0..world_size-1 (0 without a launcher). */
int lt_dist_rank(void);
/** The number of ranks (1 without a launcher). */
int lt_dist_world_size(void);
/** The rank among the ranks on this machine (OMPI_COMM_WORLD_LOCAL_RANK). */
int lt_dist_local_rank(void);
/** "mpi" once Open MPI is in use, else "single". */
const char *lt_dist_backend(void);

/** Communication totals of this process since it started. */
typedef struct lt_dist_stats {
    int64_t bytes;   /**< bytes handed to collectives (input size; all_gather: output) */
    int64_t calls;   /**< collectives run */
    double seconds;  /**< time spent inside them (waiting for peers included) */
} lt_dist_stats;
void lt_dist_stats_get(lt_dist_stats *s);

/**
 * The reduction of t over all ranks, on every rank: same shape and dtype.
 * MEAN needs a floating dtype. Gradient: SUM -> all_reduce(SUM) of the
 * gradient, MEAN -> all_reduce(MEAN); MAX has none (backward fails).
 */
lt_tensor *lt_all_reduce(lt_tensor *t, lt_reduce_op op);
/** In place: t (which may be a view) receives the reduction. Returns t. */
lt_tensor *lt_all_reduce_(lt_tensor *t, lt_reduce_op op);
/**
 * Root's t on every rank (root in 0..world_size-1; every rank passes the
 * same shape and dtype). Gradient: the sum of every rank's gradient, on the
 * root; zero elsewhere.
 */
lt_tensor *lt_broadcast(lt_tensor *t, int root);
/** In place: t receives root's values. Returns t. */
lt_tensor *lt_broadcast_(lt_tensor *t, int root);
/**
 * Every rank's t stacked along dim 0 in rank order: [world * d0, ...] (a
 * 0-d t gives [world]). Gradient: reduce_scatter(SUM) of the gradient.
 */
lt_tensor *lt_all_gather(lt_tensor *t);
/**
 * The reduction over ranks of t, split in world_size blocks along dim 0;
 * rank r receives block r: [d0 / world, ...]. d0 must be divisible by the
 * world size. Gradient: all_gather of the gradient (MEAN: divided by the
 * world size); MAX has none.
 */
lt_tensor *lt_reduce_scatter(lt_tensor *t, lt_reduce_op op);
/** Waits until every rank has called it (with the same timeout). */
lt_status lt_barrier_all(void);

/* ========================================================================= */
/* nn: layers, losses, optimizers, schedules                                  */
/* ========================================================================= */

/*
 * MODULES
 *
 * A module is a built-in layer (lt_nn_linear, ...) or one of the user's
 * own: a kind name, a forward function, the user's state struct, and
 * parameters, buffers and child modules registered by name. Every module
 * then gets, from what it registered: dotted names in listings
 * ("blocks.0.attn.qkv.weight"), lt_module_to (tensors move in place: their
 * handles, kept in the user's struct or an optimizer, stay valid),
 * train/eval for the whole tree, lt_module_zero_grad, lt_module_free
 * (children, tensors, then the state through its destructor) and the state
 * dict for checkpoints (lt_module_state, lt_checkpoint_save).
 *
 * Registration takes over what it is given (a fresh result, inside a scope
 * or not; a child module) and remembers a failure instead of making each
 * call be checked: lt_module_finish returns the module, or frees it and
 * returns NULL with the first error set. A GPT block:
 *
 *     typedef struct block { lt_module *ln1, *attn, *ln2, *fc, *proj; } block;
 *
 *     static lt_tensor *block_forward(lt_module *m, lt_tensor *x)
 *     {
 *         block *b = lt_module_data(m);
 *         x = lt_add(x, lt_module_forward(b->attn, lt_module_forward(b->ln1, x)));
 *         lt_tensor *h = lt_gelu(lt_module_forward(b->fc, lt_module_forward(b->ln2, x)));
 *         return lt_add(x, lt_module_forward(b->proj, h));
 *     }
 *
 *     lt_module *block_new(int64_t d, int64_t heads, lt_device dev)
 *     {
 *         block *b = calloc(1, sizeof *b);
 *         lt_module *m = lt_module_new("block", block_forward, b, free);
 *         b->ln1 = lt_module_add_child(m, "ln1", lt_nn_layer_norm(d, 1e-5, dev));
 *         b->attn = lt_module_add_child(m, "attn", lt_nn_self_attention(d, heads, true, dev));
 *         b->ln2 = lt_module_add_child(m, "ln2", lt_nn_layer_norm(d, 1e-5, dev));
 *         b->fc = lt_module_add_child(m, "fc", lt_nn_linear(d, 4 * d, true, dev));
 *         b->proj = lt_module_add_child(m, "proj", lt_nn_linear(4 * d, d, true, dev));
 *         return lt_module_finish(m);
 *     }
 *
 * A parameter of one's own: `b->scale = lt_module_add_parameter(m, "scale",
 * lt_ones(&d, 1, LT_F32, dev));`. A list of blocks is a module without a
 * forward function whose children are named "0", "1", ...
 */

/** A layer or a container of layers. */
typedef struct lt_module lt_module;

/** A module's forward function: runs m on x. It may leave temporaries in
 *  the current scope (lt_module_forward runs it inside a scope of its own
 *  and keeps only the result); returns the result or NULL with the error
 *  set. */
typedef lt_tensor *(*lt_module_forward_fn)(lt_module *m, lt_tensor *x);

/**
 * A new user module named `kind` (used in messages as "nn.<kind>"), in
 * training mode, with no tensors or children. forward may be NULL for a
 * pure container (lt_module_forward then fails). data is the user's state,
 * returned by lt_module_data; free_data (may be NULL) is called on it once
 * when the module is freed, after its tensors and children, or at once if
 * this call fails. Returns NULL on error.
 */
lt_module *lt_module_new(const char *kind, lt_module_forward_fn forward, void *data, void (*free_data)(void *data));
/** The state given to lt_module_new (NULL for built-in layers). */
void *lt_module_data(const lt_module *m);
/** The module's kind ("linear", "block", ...); NULL on error. */
const char *lt_module_kind(const lt_module *m);
/**
 * Registers t as a parameter of m named `name` (non-empty, no '.', unique
 * among m's tensors and children) and marks it as requiring grad (it must
 * be floating). m takes over the reference t was returned with, as
 * lt_persist does: pass a fresh result (inside a scope: of a call made in
 * that scope). Returns t, which m owns (valid until lt_module_free, also
 * across lt_module_to), or NULL: then m is marked failed (see
 * lt_module_finish) and t is released (unless lt_persist refused to take
 * it: then it stays with its owner). A NULL m or t, or an m that already
 * failed, gives NULL and keeps the first error.
 */
lt_tensor *lt_module_add_parameter(lt_module *m, const char *name, lt_tensor *t);
/** Registers t as a buffer (state without gradient, e.g. running
 *  statistics): listed by lt_module_state, moved and checkpointed with
 *  the parameters. Same conventions as lt_module_add_parameter. */
lt_tensor *lt_module_add_buffer(lt_module *m, const char *name, lt_tensor *t);
/** Registers child as a child module of m named `name`; m owns it from
 *  now on, even on failure (a child that already belongs to another
 *  module is left to it). Returns child, or NULL (m is marked failed). */
lt_module *lt_module_add_child(lt_module *m, const char *name, lt_module *child);
/** Ends the construction of m: returns m if every registration succeeded,
 *  else frees m and returns NULL (the first error stays set). NULL-safe. */
lt_module *lt_module_finish(lt_module *m);
/** The parameter or buffer with dotted name `name` (as listed by
 *  lt_module_state), borrowed; NULL with LT_ERR_ARGUMENT if none. */
lt_tensor *lt_module_tensor(lt_module *m, const char *name);
/** The descendant module with dotted name `name` ("blocks.0.attn"),
 *  borrowed; NULL with LT_ERR_ARGUMENT if none. */
lt_module *lt_module_child(lt_module *m, const char *name);
/** True in training mode (see lt_module_train); for forward functions. */
bool lt_module_is_training(const lt_module *m);
/** Drops the gradient of every parameter of m and its children. */
lt_status lt_module_zero_grad(lt_module *m);

/** y = x W^T + b, W [out, in] and b [out] initialized like PyTorch
 *  (Kaiming-uniform: U(-1/sqrt(in), 1/sqrt(in))) from the global RNG. */
lt_module *lt_nn_linear(int64_t in_features, int64_t out_features, bool bias, lt_device dev);
/** 2-D convolution layer (weights [out, in/groups, k, k], Kaiming-uniform). */
lt_module *lt_nn_conv2d(int64_t in_channels, int64_t out_channels, int64_t kernel, int64_t stride,
                        int64_t padding, int64_t groups, bool bias, lt_device dev);
/** 1-D convolution layer (torch.nn.Conv1d): weight [out, in/groups, k],
 *  bias [out], Kaiming-uniform like PyTorch; input [N, in, L] or [in, L]. */
lt_module *lt_nn_conv1d(int64_t in_channels, int64_t out_channels, int64_t kernel, int64_t stride,
                        int64_t padding, int64_t groups, bool bias, lt_device dev);
/** Transposed 2-D convolution layer (torch.nn.ConvTranspose2d): weight [in,
 *  out/groups, k, k], bias [out], initialized like PyTorch (fan_in = out /
 *  groups * k * k); output_padding below the stride. */
lt_module *lt_nn_conv_transpose2d(int64_t in_channels, int64_t out_channels, int64_t kernel, int64_t stride,
                                  int64_t padding, int64_t output_padding, int64_t groups, bool bias, lt_device dev);
/** Max / average pooling layers (stride = kernel). */
lt_module *lt_nn_max_pool2d(int64_t kernel);
lt_module *lt_nn_avg_pool2d(int64_t kernel);
/** Flattens all dims after the first. */
lt_module *lt_nn_flatten(void);
/** Activations. */
lt_module *lt_nn_relu(void);
lt_module *lt_nn_gelu(void);
lt_module *lt_nn_silu(void);
lt_module *lt_nn_tanh(void);
/** Dropout with probability p in training mode (seeded by the global RNG);
 *  identity in eval mode. */
lt_module *lt_nn_dropout(double p);
/** Layer norm over the last dim of size `dim` (weight and bias). */
lt_module *lt_nn_layer_norm(int64_t dim, double eps, lt_device dev);
/** Batch norm over channels of [N, C, H, W] with running statistics
 *  (momentum 0.1) used in eval mode. */
lt_module *lt_nn_batch_norm2d(int64_t channels, double eps, lt_device dev);
/** Embedding table [num, dim] initialized N(0, 1). */
lt_module *lt_nn_embedding(int64_t num, int64_t dim, lt_device dev);
/** Multi-head self-attention over [B, T, D] (causal if `causal`). */
lt_module *lt_nn_self_attention(int64_t dim, int64_t heads, bool causal, lt_device dev);
/** Runs modules in order; takes ownership of the n modules. */
lt_module *lt_nn_sequential(lt_module *const *mods, int n);

/** Runs the module (the result belongs to the current scope). */
lt_tensor *lt_module_forward(lt_module *m, lt_tensor *x);
/**
 * Lists parameters (own ones first, then each child's, in the order they
 * were registered) and their dotted names such as "0.weight". Writes at
 * most max entries (names may be NULL); returns the total count. The
 * handles are borrowed and stay valid (also across lt_module_to) until
 * the module is freed; the names until it is freed or something is
 * registered in it or below it.
 */
int lt_module_parameters(lt_module *m, lt_tensor **params, const char **names, int max);
/** Lists every persistent tensor (parameters, then buffers such as batch
 *  norm running statistics), for checkpoints; same conventions. */
int lt_module_state(lt_module *m, lt_tensor **tensors, const char **names, int max);
/** Switches training / evaluation behaviour (dropout, batch norm) of m
 *  and all its children. */
void lt_module_train(lt_module *m, bool training);
/** Moves every parameter and buffer (and their gradients) to dev in place,
 *  as lt_to_ does: the handles stay the same, so pointers kept in user
 *  modules and optimizers made before the move keep working. All or
 *  nothing. */
lt_status lt_module_to(lt_module *m, lt_device dev);
/** Frees a module, its children and tensors, and its user state (through
 *  the destructor given to lt_module_new). NULL-safe; a module owned by
 *  another one is refused (LT_ERR_STATE): free the root. */
void lt_module_free(lt_module *m);

/** Cross-entropy of logits [N, C] against i64 class targets [N], mean over
 *  N, with label smoothing in [0, 1). */
lt_tensor *lt_cross_entropy(lt_tensor *logits, lt_tensor *targets, double label_smoothing);
/** Negative log-likelihood of log-probabilities [N, C], mean over N. */
lt_tensor *lt_nll_loss(lt_tensor *log_probs, lt_tensor *targets);
/** Mean squared error. */
lt_tensor *lt_mse_loss(lt_tensor *input, lt_tensor *target);

/** How a loss reduces its per-element values (torch's `reduction=`). */
typedef enum lt_loss_reduction {
    LT_LOSS_MEAN = 0,     /**< mean over all elements ('mean') */
    LT_LOSS_SUM = 1,      /**< sum over all elements ('sum') */
    LT_LOSS_NONE = 2,     /**< no reduction: one value per element ('none') */
    LT_LOSS_BATCHMEAN = 3 /**< sum divided by the size of dim 0 (lt_kl_div only: 'batchmean') */
} lt_loss_reduction;

/* The losses below are torch.nn.functional's, built from public ops (so
 * they run on every device, fuse on the lazy device and have gradients).
 * input and target are floating tensors of one shape (a mismatch is an
 * LT_ERR_SHAPE, where torch would warn and broadcast); NULL with the error
 * set on bad arguments. */

/** |input - target|, reduced. */
lt_tensor *lt_l1_loss(lt_tensor *input, lt_tensor *target, lt_loss_reduction reduction);
/** Smooth L1: 0.5 d^2 / beta where d = |input - target| < beta, else
 *  d - 0.5 beta; beta >= 0 (0 gives the L1 loss). */
lt_tensor *lt_smooth_l1_loss(lt_tensor *input, lt_tensor *target, lt_loss_reduction reduction, double beta);
/** Huber: 0.5 d^2 where d < delta, else delta (d - 0.5 delta); delta > 0. */
lt_tensor *lt_huber_loss(lt_tensor *input, lt_tensor *target, lt_loss_reduction reduction, double delta);
/** Binary cross entropy of probabilities in [0, 1] (each log clamped at
 *  -100, as torch does; values outside [0, 1] give NaN where torch raises).
 *  weight (NULL: none) broadcasts to the input's shape. */
lt_tensor *lt_binary_cross_entropy(lt_tensor *input, lt_tensor *target, lt_tensor *weight,
                                   lt_loss_reduction reduction);
/** Binary cross entropy of logits, computed without overflow; weight and
 *  pos_weight (the weight of positive targets, e.g. one per class) may be
 *  NULL and broadcast to the input's shape. */
lt_tensor *lt_binary_cross_entropy_with_logits(lt_tensor *input, lt_tensor *target, lt_tensor *weight,
                                               lt_tensor *pos_weight, lt_loss_reduction reduction);
/** Kullback-Leibler divergence of log-probabilities input from target
 *  (probabilities, or log-probabilities when log_target): target *
 *  (log target - input), 0 where target is 0. LT_LOSS_BATCHMEAN is the
 *  mathematically correct mean ('mean' averages over elements, as torch). */
lt_tensor *lt_kl_div(lt_tensor *input, lt_tensor *target, lt_loss_reduction reduction, bool log_target);
/** max(0, -y (x1 - x2) + margin), y of +-1 broadcasting to x1's shape. */
lt_tensor *lt_margin_ranking_loss(lt_tensor *x1, lt_tensor *x2, lt_tensor *y, double margin,
                                  lt_loss_reduction reduction);
/** Cosine embedding loss of x1, x2 [N, D] (or [D]) and y [N] (or 0-d) of
 *  +-1: 1 - cos where y is 1, max(0, cos - margin) where y is -1. */
lt_tensor *lt_cosine_embedding_loss(lt_tensor *x1, lt_tensor *x2, lt_tensor *y, double margin,
                                    lt_loss_reduction reduction);
/** Cosine similarity along dim of x1 and x2 (broadcast together):
 *  sum(x1 x2) / sqrt(max(|x1|^2 |x2|^2, eps^2)); torch's default eps is
 *  1e-8. */
lt_tensor *lt_cosine_similarity(lt_tensor *x1, lt_tensor *x2, int dim, double eps);
/** |x1 - x2 + eps|_p over the last dim (p >= 0; torch's defaults: p 2,
 *  eps 1e-6). */
lt_tensor *lt_pairwise_distance(lt_tensor *x1, lt_tensor *x2, double p, double eps, bool keepdim);
/** x / max(|x|_p along dim, eps) (torch's defaults: p 2, dim 1, eps 1e-12). */
lt_tensor *lt_normalize(lt_tensor *x, double p, int dim, double eps);

/* ---- torch.nn.functional with every option: class losses, normalizations,
 * dropout, attention and embedding. Compositions of public ops: they trace
 * and fuse on the lazy device and autograd differentiates them. NULL with
 * the error set on bad arguments. ---- */
/** torch.nn.functional.cross_entropy. input [N, C, d1, ...] or an
 *  unbatched [C] (logits; the class dim is 1, or 0 for [C]). target: class
 *  indices (i64 or i32) of the input's shape without the class dim, or
 *  probabilities of the input's shape and dtype. weight: NULL or [C] of the
 *  input's dtype. Targets equal to ignore_index (torch's default -100) add
 *  nothing, also to the mean's divisor (the sum of the targets' weights;
 *  NaN when every target is ignored, as torch). label_smoothing in [0, 1]
 *  mixes in the uniform distribution. With probability targets ignore_index
 *  must be negative (unused; torch refuses others) and the mean divides by
 *  numel / C. lt_cross_entropy stays the short form for [N, C] logits. */
lt_tensor *lt_cross_entropy_ext(lt_tensor *input, lt_tensor *target, lt_tensor *weight, int64_t ignore_index,
                                lt_loss_reduction reduction, double label_smoothing);
/** torch.nn.functional.nll_loss of log-probabilities [N, C, d1, ...] or
 *  [C] against class indices, with weight, ignore_index and reduction as
 *  lt_cross_entropy_ext. */
lt_tensor *lt_nll_loss_ext(lt_tensor *input, lt_tensor *target, lt_tensor *weight, int64_t ignore_index,
                           lt_loss_reduction reduction);
/** Layer normalization over the last ndims dims of x, which must equal
 *  normalized_shape (1 <= ndims <= LT_MAX_DIMS): (x - mean) / sqrt(var +
 *  eps) with the biased variance, times weight, plus bias (each NULL or of
 *  shape normalized_shape and x's dtype). */
lt_tensor *lt_layer_norm(lt_tensor *x, const int64_t *normalized_shape, int ndims, lt_tensor *weight,
                         lt_tensor *bias, double eps);
/** Group normalization of x [N, C, ...]: the C channels form num_groups
 *  groups (a divisor of C), normalized per sample and group; weight and
 *  bias NULL or [C]. */
lt_tensor *lt_group_norm(lt_tensor *x, int64_t num_groups, lt_tensor *weight, lt_tensor *bias, double eps);
/** Batch normalization of x [N, C, ...]. training: normalizes with the
 *  batch statistics per channel (biased variance; more than one value per
 *  channel required) and, when running_mean and running_var ([C], given
 *  together or both NULL) are given, updates them in place without
 *  gradient: r = (1 - momentum) r + momentum s, with the unbiased variance.
 *  Otherwise normalizes with the running statistics (required). weight and
 *  bias NULL or [C]. torch's defaults: momentum 0.1, eps 1e-5. */
lt_tensor *lt_batch_norm(lt_tensor *x, lt_tensor *running_mean, lt_tensor *running_var, lt_tensor *weight,
                         lt_tensor *bias, bool training, double momentum, double eps);
/** Instance normalization of x [N, C, L, ...]: use_input_stats normalizes
 *  each (sample, channel) over the spatial dims and updates the running
 *  statistics (if given) with the batch mean of those statistics, as torch;
 *  otherwise the running statistics normalize. Arguments as lt_batch_norm. */
lt_tensor *lt_instance_norm(lt_tensor *x, lt_tensor *running_mean, lt_tensor *running_var, lt_tensor *weight,
                            lt_tensor *bias, bool use_input_stats, double momentum, double eps);
/** Dropout of a floating x: when training, each element is kept with
 *  probability 1 - p and scaled by 1 / (1 - p) (zeros for p = 1), drawing
 *  from the global generator; otherwise (or p = 0) a copy of x. */
lt_tensor *lt_dropout(lt_tensor *x, double p, bool training);
/** Scaled dot-product attention, torch 2's
 *  F.scaled_dot_product_attention: softmax(q k^T * scale + bias) v for q
 *  [..., L, E], k [..., S, E], v [..., S, Ev] (batch dims broadcast) of one
 *  floating dtype. mask (NULL: none): bool, true where a position may
 *  attend, or additive of q's dtype, broadcasting to [..., L, S]. causal
 *  masks the positions above the diagonal (not together with a mask). A
 *  row with nothing to attend to is NaN. dropout_p > 0 drops attention
 *  weights (always, as torch). scale NAN means 1 / sqrt(E). */
lt_tensor *lt_scaled_dot_product_attention(lt_tensor *q, lt_tensor *k, lt_tensor *v, lt_tensor *mask,
                                           double dropout_p, bool causal, double scale);
/** The padding_idx of lt_embedding_ext that means none. */
#define LT_NO_PADDING INT64_MIN
/** torch.nn.functional.embedding: rows of weight [num, dim] selected by
 *  integer indices. padding_idx (in [-num, num), or LT_NO_PADDING): that
 *  row's gradient stays 0. max_norm (NAN: none): before the lookup, each
 *  referenced row whose norm_type-norm exceeds max_norm is scaled in place
 *  (no gradient) by max_norm / (norm + 1e-7), as torch. */
lt_tensor *lt_embedding_ext(lt_tensor *weight, lt_tensor *indices, int64_t padding_idx, double max_norm,
                            double norm_type);
/* Layers of these functions (lt_module_forward runs them; see the layers
 * above). */
/** GroupNorm: lt_group_norm of [N, channels, ...] in num_groups groups (a
 *  divisor of channels); affine adds weight (1) and bias (0), [channels]. */
lt_module *lt_nn_group_norm(int64_t num_groups, int64_t channels, double eps, bool affine, lt_device dev);
/** InstanceNorm1d/2d/3d with torch's default track_running_stats=False:
 *  each input [N, channels, L, ...] normalized by its own statistics;
 *  affine adds weight and bias ([channels]; torch's default is false). */
lt_module *lt_nn_instance_norm(int64_t channels, double eps, bool affine, lt_device dev);
/** Parameter-free activation layers (the functions above, torch.nn's
 *  LeakyReLU, ELU, SELU, CELU, Softplus, Softsign, Hardswish, Hardsigmoid,
 *  Mish, LogSigmoid, ReLU6, Hardtanh and Sigmoid); scalar arguments must be
 *  finite (celu's alpha and softplus's beta non-zero). */
lt_module *lt_nn_leaky_relu(double negative_slope);
lt_module *lt_nn_elu(double alpha);
lt_module *lt_nn_selu(void);
lt_module *lt_nn_celu(double alpha);
lt_module *lt_nn_softplus(double beta, double threshold);
lt_module *lt_nn_softsign(void);
lt_module *lt_nn_hardswish(void);
lt_module *lt_nn_hardsigmoid(void);
lt_module *lt_nn_mish(void);
lt_module *lt_nn_logsigmoid(void);
lt_module *lt_nn_relu6(void);
lt_module *lt_nn_hardtanh(double min_val, double max_val);
lt_module *lt_nn_sigmoid(void);

/** An optimizer over a list of parameters (which it retains). */
typedef struct lt_optimizer lt_optimizer;
/** SGD with momentum, Nesterov momentum and L2 weight decay (PyTorch's
 *  formulation). */
lt_optimizer *lt_optim_sgd(lt_tensor *const *params, int n, double lr, double momentum, double weight_decay,
                           bool nesterov);
/** Adam (decoupled == false: L2 weight decay) or AdamW (decoupled ==
 *  true), PyTorch's formulation with bias correction. */
lt_optimizer *lt_optim_adam(lt_tensor *const *params, int n, double lr, double beta1, double beta2, double eps,
                            double weight_decay, bool decoupled);
/* RMSprop, Adagrad, Adadelta and Adamax with torch.optim's formulas and
 * defaults noted; weight_decay adds weight_decay * p to the gradient (L2).
 * Each keeps a per-parameter step count ("state.<i>.step", 0-d f64) and
 * the state named as in torch's state_dict. Hyperparameters must be finite
 * and >= 0 (betas below 1, rho at most 1). */
/** RMSprop (lr 0.01, alpha 0.99, eps 1e-8): square_avg = alpha * square_avg
 *  + (1 - alpha) g^2; centered subtracts grad_avg^2 (grad_avg the same
 *  average of g); with momentum, buf = momentum * buf + g / (sqrt(.) + eps)
 *  and p -= lr * buf, else p -= lr * g / (sqrt(.) + eps). State:
 *  square_avg, momentum_buffer (momentum != 0), grad_avg (centered). */
lt_optimizer *lt_optim_rmsprop(lt_tensor *const *params, int n, double lr, double alpha, double eps,
                               double weight_decay, double momentum, bool centered);
/** Adagrad (lr 0.01, lr_decay 0, initial_accumulator_value 0, eps 1e-10):
 *  sum += g^2; p -= lr / (1 + (step - 1) lr_decay) * g / (sqrt(sum) +
 *  eps). State: sum (starting at initial_accumulator_value). */
lt_optimizer *lt_optim_adagrad(lt_tensor *const *params, int n, double lr, double lr_decay, double weight_decay,
                               double initial_accumulator_value, double eps);
/** Adadelta (lr 1, rho 0.9, eps 1e-6): square_avg = rho * square_avg + (1
 *  - rho) g^2; delta = sqrt(acc_delta + eps) / sqrt(square_avg + eps) * g;
 *  acc_delta = rho * acc_delta + (1 - rho) delta^2; p -= lr * delta.
 *  State: square_avg, acc_delta. */
lt_optimizer *lt_optim_adadelta(lt_tensor *const *params, int n, double lr, double rho, double eps,
                                double weight_decay);
/** Adamax (lr 0.002, betas 0.9 and 0.999, eps 1e-8): exp_avg = beta1 *
 *  exp_avg + (1 - beta1) g; exp_inf = max(beta2 * exp_inf, |g| + eps);
 *  p -= lr / (1 - beta1^step) * exp_avg / exp_inf. State: exp_avg,
 *  exp_inf. */
lt_optimizer *lt_optim_adamax(lt_tensor *const *params, int n, double lr, double beta1, double beta2, double eps,
                              double weight_decay);
/** Applies one update from the parameters' gradients (in place, no grad).
 *  Parameters without a gradient are skipped. */
lt_status lt_optim_step(lt_optimizer *o);
/** Drops every parameter's gradient. */
lt_status lt_optim_zero_grad(lt_optimizer *o);
/** Learning rate in use / sets it (a runtime scalar: no recompile). */
double lt_optim_lr(const lt_optimizer *o);
lt_status lt_optim_set_lr(lt_optimizer *o, double lr);
/** Lists the optimizer's state tensors (momentum, Adam moments; step count
 *  as a 0-d tensor) with names, for checkpoints; same conventions as
 *  lt_module_parameters. */
int lt_optim_state(lt_optimizer *o, lt_tensor **tensors, const char **names, int max);
/** Frees the optimizer (NULL-safe). */
void lt_optim_free(lt_optimizer *o);

/** Learning-rate schedules: pure functions of the step (0-based). */
double lt_lr_step_decay(double base, int64_t step, int64_t step_size, double gamma);
double lt_lr_cosine(double base, int64_t step, int64_t total_steps, double min_lr);
/** Linear warmup from 0 over warmup_steps, then `after` (the lr of another
 *  schedule at this step). */
double lt_lr_warmup(double after, int64_t step, int64_t warmup_steps);

/**
 * A training step scope. lt_step_begin opens a scope; lt_step_end closes
 * it (dropping the step's activations, tape and temporaries) and then runs
 * the step barrier, so the step's program outputs only what outlives the
 * step: parameters, optimizer state and what the caller kept with lt_keep.
 * On the cpu device lt_step_end only closes the scope.
 */
void lt_step_begin(void);
lt_status lt_step_end(void);
/**
 * lt_step_end with an asynchronous barrier (lt_barrier(false)): returns as
 * soon as the step's program is handed to the executing thread, so the
 * caller traces the next step while this one runs. The next barrier, or
 * the first read of one of the step's results, waits for it and reports
 * its failure, if any (see lt_barrier). On the cpu device it is lt_step_end.
 */
lt_status lt_step_end_async(void);
/**
 * lt_step_end that also returns the values of one-element tensors of the
 * step (a loss, an accuracy) as doubles: values[i] receives scalars[i]'s
 * value as computed by the step (on the lazy device: by the step's own
 * program, with no extra sync). The tensors may belong to the step's
 * scope. Replaces lt_keep(lt_detach(loss)), lt_step_end, lt_item and
 * lt_release:
 *
 *     lt_step_begin();
 *     lt_tensor *loss = lt_cross_entropy(lt_module_forward(model, x), y, 0.0);
 *     lt_backward(loss, NULL);
 *     lt_optim_step(opt);
 *     lt_optim_zero_grad(opt);
 *     double v;
 *     lt_step_end_read(&loss, &v, 1);
 *
 * A NULL, dead or non-scalar tensor is an error before anything is done
 * (the step stays open); values are written only when LT_OK is returned.
 */
lt_status lt_step_end_read(lt_tensor *const *scalars, double *values, int n);

/* ========================================================================= */
/* Checkpoints (safetensors) and datasets                                     */
/* ========================================================================= */

/**
 * Writes tensors with their names to `path` in the safetensors format
 * (readable by PyTorch and Hugging Face tools), atomically: into a new temp
 * file "<path>.tmp.<pid>.<random>" next to it (created exclusively,
 * never through a symlink, mode 0644 before the umask), then renamed over
 * path. Temp files of that pattern in the same directory whose writer
 * process no longer exists (a save killed part-way) are removed first.
 */
lt_status lt_save_safetensors(const char *path, lt_tensor *const *tensors, const char *const *names, int n);
/**
 * Loads `path` into existing tensors by name. Every name must be present
 * with the same dtype and shape; the file (a regular file) is fully
 * validated and every destination checked writable (an expanded view is
 * not: LT_ERR_UNSUPPORTED) before any tensor is written, so on error
 * (missing, truncated, corrupt, mismatched, unwritable) the tensors are
 * untouched.
 */
lt_status lt_load_safetensors(const char *path, lt_tensor *const *tensors, const char *const *names, int n);

/**
 * Saves the whole training state in one safetensors file (written as
 * lt_save_safetensors does): the module's state dict as "model.<name>"
 * (the names of lt_module_state), the optimizer's state as "optim.<name>"
 * (lt_optim_state) and its learning rate as "optim.lr", and the random
 * generator as "rng.state" (i64 [2]: seed and offset). o may be NULL
 * (model and generator only). Training resumed with lt_checkpoint_load
 * repeats what this run does next, bit for bit (dropout masks included).
 */
lt_status lt_checkpoint_save(const char *path, lt_module *m, lt_optimizer *o);
/**
 * Loads a file written by lt_checkpoint_save into m, o (NULL: only the
 * model) and the random generator. Every name must be present with the
 * same dtype and shape (the model and optimizer must be built as when
 * saved; they may be on another device). The file is fully validated
 * before anything is written: on error (missing file or name, wrong shape
 * or dtype, corrupt data) the module, the optimizer (learning rate
 * included) and the generator are untouched, and the message names the
 * offending entry.
 */
lt_status lt_checkpoint_load(const char *path, lt_module *m, lt_optimizer *o);

/** An in-memory labelled image dataset. */
typedef struct lt_dataset {
    int64_t count, rows, cols;
    uint8_t *images; /* count * rows * cols bytes */
    uint8_t *labels; /* count bytes */
} lt_dataset;

/**
 * Reads an IDX image file and its label file (gzip-compressed or not),
 * e.g. Fashion-MNIST's train-images-idx3-ubyte.gz. A missing file gives
 * LT_ERR_IO naming it (and the Debian package dataset-fashion-mnist when
 * it is under /usr/share/datasets/fashion-mnist). Header dims are checked
 * with overflow-checked arithmetic (at most 2^24 pixels per image, 2^36
 * bytes in all) and, for an uncompressed file, against its real size,
 * before anything is allocated. On error *out is zeroed.
 */
lt_status lt_dataset_load_idx(const char *images_path, const char *labels_path, lt_dataset *out);
/** Frees a dataset's buffers (NULL-safe). */
void lt_dataset_free(lt_dataset *d);
/** A permutation of 0..count-1 from seed (Fisher-Yates over Philox),
 *  written to perm. */
lt_status lt_dataset_shuffle(const lt_dataset *d, uint64_t seed, int64_t *perm);
/**
 * Batch `index` (of size batch, the last may be smaller) in the order
 * `perm` (NULL: identity): images as f32 [b, 1, rows, cols] normalized
 * (x/255 - mean)/std, labels as i64 [b], on dev. Returns the batch size
 * (0 past the end, -1 on error).
 */
int64_t lt_dataset_batch(const lt_dataset *d, const int64_t *perm, int64_t index, int64_t batch, double mean,
                         double std, lt_device dev, lt_tensor **images, lt_tensor **labels);
/**
 * This rank's part of global batch `index` of a data-parallel run: the
 * global batch holds the samples that batch `index` of size batch * world
 * would hold in one process, and rank r (0 <= r < world) gets its r-th
 * block of `batch` samples. Every rank must pass the same perm (from
 * lt_dataset_shuffle with the same seed). The order is padded to a multiple
 * of world by repeating its first samples, so every rank gets the same
 * number of batches and the last partial global batch is split in equal
 * parts (smaller than batch). Returns this rank's batch size (0 past the
 * end, -1 on error); images and labels as lt_dataset_batch.
 */
int64_t lt_dataset_shard_batch(const lt_dataset *d, const int64_t *perm, int64_t index, int64_t batch, int rank,
                               int world, double mean, double std, lt_device dev, lt_tensor **images,
                               lt_tensor **labels);

/* ========================================================================= */
/* Data-parallel training                                                     */
/* ========================================================================= */

/*
 * Data-parallel training: every rank holds the whole model, trains on its
 * own part of each batch (lt_dataset_shard_batch) and averages the
 * gradients with the other ranks before each optimizer step, so all ranks
 * keep identical parameters. Launch with `mpirun -np N program`; with one
 * process the same code trains alone. Typical step:
 *
 *     lt_dp *dp = lt_dp_new(model, 0);        // after building the model
 *     ...
 *     loss = lt_cross_entropy(lt_module_forward(model, x), y, 0);
 *     lt_backward(loss, NULL);
 *     lt_dp_sync_grads(dp);                   // average over ranks
 *     lt_optim_step(opt);
 *
 * Only rank 0 should log and write checkpoints (lt_dist_rank() == 0).
 */
typedef struct lt_dp lt_dp;

/** Default bucket size: 25 MiB of gradients per all-reduce. */
#define LT_DP_DEFAULT_BUCKET_BYTES ((size_t)25 << 20)
/** The bucket size lt_dp_new uses for 0: LT_DP_BUCKET_MB (MiB) from the
 *  environment, else LT_DP_DEFAULT_BUCKET_BYTES. */
size_t lt_dp_default_bucket_bytes(void);
/**
 * Starts data-parallel training of m's parameters (collective: every rank
 * calls it). Checks that every rank built the same model (the names,
 * dtypes and shapes of its parameters; a difference is LT_ERR_DIST naming
 * the rank), then copies rank 0's parameter values to every rank. The
 * gradients are averaged in buckets of at most bucket_bytes (0: the
 * default): runs of parameters of one dtype, last parameter first (the
 * order backward produces them), each packed into one buffer and reduced
 * by one all-reduce. Keeps a reference on each parameter.
 */
lt_dp *lt_dp_new(lt_module *m, size_t bucket_bytes);
/**
 * Replaces every parameter's gradient by its mean over all ranks
 * (collective; call it after lt_backward and before lt_optim_step). A
 * parameter without a gradient counts as zeros and gets the mean. Traced
 * into the step program on the lazy device.
 */
lt_status lt_dp_sync_grads(lt_dp *dp);
/**
 * Overlap of communication with backward (on by default in a world of more
 * than one rank; cpu device). While lt_backward runs, a bucket whose
 * gradients are all final has its all-reduce started at once
 * (non-blocking), so it proceeds during the rest of backward;
 * lt_dp_sync_grads then only waits for what is left. Needs one lt_backward
 * per lt_dp_sync_grads (a second one is reported by lt_dp_sync_grads):
 * turn it off to accumulate gradients over several passes. On the lazy
 * device the all-reduces are traced into the step program instead (no
 * overlap). One lt_dp at a time has it (the last one turned on).
 */
lt_status lt_dp_set_overlap(lt_dp *dp, bool on);
/**
 * Totals over the all-reduces started during backward: *comm_s from each
 * start to its end, *hidden_s the part of it that ran while the program
 * was not waiting for it (overlapped). 0 when none started.
 */
void lt_dp_overlap_stats(const lt_dp *dp, double *comm_s, double *hidden_s);
/** The number of buckets (all-reduces per lt_dp_sync_grads). */
int lt_dp_num_buckets(const lt_dp *dp);
/** Bytes of gradients all-reduced per lt_dp_sync_grads. */
int64_t lt_dp_bytes_per_sync(const lt_dp *dp);
/** Frees dp (NULL-safe); the parameters stay with their module. */
void lt_dp_free(lt_dp *dp);

/* ========================================================================= */
/* Memory and threads                                                         */
/* ========================================================================= */

/** Statistics of the caching buffer allocator (all devices' host memory). */
typedef struct lt_mem_stats {
    int64_t bytes_in_use;    /**< bytes held by live buffers (rounded) */
    int64_t peak_bytes;      /**< max of bytes_in_use since last reset */
    int64_t bytes_cached;    /**< freed bytes kept for reuse */
    int64_t os_allocs;       /**< buffers obtained from the OS, cumulative */
    int64_t os_frees;        /**< buffers returned to the OS, cumulative */
    int64_t cache_hits;      /**< allocations served from the cache */
    int64_t live_buffers;    /**< buffers currently in use */
} lt_mem_stats;

/** Fills *s (NULL-safe). */
void lt_mem_stats_get(lt_mem_stats *s);
/** Returns every cached (free) buffer to the OS. The allocator also does
 *  this by itself, and retries once, when the OS refuses an allocation. */
void lt_mem_trim(void);
/** Resets peak_bytes to the current bytes_in_use. */
void lt_mem_reset_peak(void);
/** Bounds the bytes kept in the cache (default 2 GiB, env
 *  LT_MEM_CACHE_LIMIT in bytes); beyond it freed buffers go back to the OS. */
void lt_mem_set_cache_limit(int64_t bytes);

/** Sets the thread count (the caller included) of the library's worker pool,
 *  which runs every parallel loop: eager kernels, compiled programs and the
 *  blocks of large matrix products (the BLAS library, oneDNN or OpenBLAS
 *  as LT_GEMM chooses, runs single-threaded in each block).
 *  n <= 0 restores the default: LT_NUM_THREADS, else OMP_NUM_THREADS, else
 *  the CPUs the process may run on. Idle workers spin for LT_POOL_SPIN_US
 *  microseconds (default 50), then sleep, so no OMP_* setting is needed. */
void lt_set_num_threads(int n);
/** Current thread count. */
int lt_get_num_threads(void);

/** Library version string, e.g. "0.1.0". */
const char *lt_version(void);

/* ========================================================================= */
/* Op registry: the API's calls by name                                       */
/* ========================================================================= */
/*
 * The calls of this header that a generic client makes by name (a language
 * binding, a fuzzer, a test harness) have one row each in a table: the
 * name, the arguments (kind, name, default) and the result. Tensor ops,
 * factories, layers, optimizers, schedules and the lazy device's barriers
 * are rows. lt_op_call runs a row on an array of tagged values, so that a
 * binding needs one converter per argument kind, not one wrapper per call.
 *
 *     const lt_op_desc *sum = lt_op_find("sum");
 *     lt_arg args[3], out[1];
 *     args[0] = (lt_arg){.kind = LT_ARG_TENSOR, .t = x};
 *     lt_op_default(sum, 1, &args[1]);   // dim=None: every dim
 *     lt_op_default(sum, 2, &args[2]);   // keepdim=false
 *     if (lt_op_call(sum, args, 3, out, 1) == 1) ...  // out[0].t as lt_sum returns it
 *
 * A row's name is that of its C function without the lt_ prefix
 * ("sum" is lt_sum, "nn_linear" lt_nn_linear); results follow the
 * function's own ownership rules (scopes included).
 */

/** The most arguments a row of the registry takes. */
#define LT_OP_MAX_ARGS 8

/** Kinds of values: of arguments, and of the results that lt_op_call writes. */
typedef enum lt_arg_kind {
    LT_ARG_TENSOR,     /**< .t, never NULL */
    LT_ARG_TENSOR_OPT, /**< .t or NULL (an optional tensor such as a bias) */
    LT_ARG_TENSORS,    /**< .tensors[0 .. n-1] */
    LT_ARG_INT,        /**< .i, any int64_t */
    LT_ARG_DIM,        /**< .i, an int-sized value (a dimension, a count) */
    LT_ARG_DOUBLE,     /**< .d */
    LT_ARG_BOOL,       /**< .b */
    LT_ARG_DIMS,       /**< .ints[0 .. n-1], n <= LT_MAX_DIMS, each int-sized; n == 0 often means every dim */
    LT_ARG_SHAPE,      /**< .ints[0 .. n-1], n <= LT_MAX_DIMS */
    LT_ARG_DTYPE,      /**< .dtype */
    LT_ARG_DEVICE,     /**< .device */
    LT_ARG_STRING,     /**< .s, never NULL */
    LT_ARG_MODULE,     /**< .module, never NULL */
    LT_ARG_OPTIMIZER,  /**< .optimizer, never NULL */
    LT_ARG_NUM_KINDS
} lt_arg_kind;

/** What a row gives back through lt_op_call's out array. */
typedef enum lt_result_kind {
    LT_RESULT_TENSOR,    /**< one new tensor */
    LT_RESULT_SELF,      /**< in place (names ending in '_'): argument 0, no reference added */
    LT_RESULT_PAIR,      /**< two new tensors: values and indices (max_dim, sort, topk) */
    LT_RESULT_TENSORS,   /**< a count known only after the call (split, chunk) */
    LT_RESULT_NONE,      /**< nothing: a void function */
    LT_RESULT_STATUS,    /**< nothing: an lt_status function, which fails when not LT_OK */
    LT_RESULT_INT,       /**< out[0].i; a negative value with an error pending is a failure */
    LT_RESULT_DOUBLE,    /**< out[0].d; NaN with an error pending is a failure */
    LT_RESULT_BOOL,      /**< out[0].b */
    LT_RESULT_STRING,    /**< out[0].s, owned by the library */
    LT_RESULT_MODULE,    /**< out[0].module, the caller frees it (lt_module_free) */
    LT_RESULT_OPTIMIZER  /**< out[0].optimizer, the caller frees it (lt_optim_free) */
} lt_result_kind;

/** One value, tagged with its kind. */
typedef struct lt_arg {
    lt_arg_kind kind;
    int n; /**< length of .tensors or .ints */
    union {
        lt_tensor *t;
        lt_tensor *const *tensors;
        const int64_t *ints;
        int64_t i;
        double d;
        bool b;
        lt_dtype dtype;
        lt_device device;
        const char *s;
        struct lt_module *module;
        struct lt_optimizer *optimizer;
    };
} lt_arg;

/** One row of the registry (read-only, valid for the life of the process). */
typedef struct lt_op_desc {
    const char *name; /**< lt_<name> is the C function */
    const char *doc;  /**< one line on what it does */
    lt_result_kind result;
    int nargs;
    lt_arg_kind args[LT_OP_MAX_ARGS];
    const char *arg_names[LT_OP_MAX_ARGS];
    /** The default as text ("None", "false", "-1", "inf", "f32", "cpu"),
     *  NULL for a required argument; lt_op_default turns it into a value. */
    const char *defaults[LT_OP_MAX_ARGS];
} lt_op_desc;

/** Number of rows in the registry. */
int lt_op_count(void);
/** Row i (0 <= i < lt_op_count()), or NULL with LT_ERR_INDEX. */
const lt_op_desc *lt_op_at(int i);
/** The row named name, or NULL with LT_ERR_ARGUMENT (NULL name: LT_ERR_NULL). */
const lt_op_desc *lt_op_find(const char *name);
/** Short name of a value kind ("tensor", "dims", ...); "invalid" for bad values. */
const char *lt_arg_kind_name(lt_arg_kind kind);
/**
 * The default of argument i of op as a value: "None" gives a NULL tensor
 * or an empty list. LT_ERR_ARGUMENT if the argument is required or i is
 * out of range, LT_ERR_NULL for a NULL op or out.
 */
lt_status lt_op_default(const lt_op_desc *op, int i, lt_arg *out);
/**
 * Runs op on args[0 .. nargs-1], which must match op->args in number and
 * kind (else LT_ERR_ARGUMENT naming the row, the argument and both kinds;
 * NULL where a tensor, string, module or optimizer is required is
 * LT_ERR_NULL; an int out of an LT_ARG_DIM's range, a list longer than
 * LT_MAX_DIMS or of the wrong fixed length (the 2 of a conv2d stride) is
 * LT_ERR_ARGUMENT). Writes the results to out (at most max_out) and returns
 * their count: 0, 1 or 2; for LT_RESULT_TENSORS, if the count exceeds
 * max_out nothing is written (the pieces are dropped) and the count is
 * returned, so that a caller can retry with a larger array. -1 on error,
 * with the function's own message when the function itself fails.
 */
int lt_op_call(const lt_op_desc *op, const lt_arg *args, int nargs, lt_arg *out, int max_out);

#ifdef __cplusplus
}
#endif

#endif /* LAZYTENSOR_H */
