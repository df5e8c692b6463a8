/*
 * eager.h - the eager CPU runtime: one kernel per op, the strided
 * elementwise iterator, and typed-loop helpers.
 *
 * A kernel receives validated inputs (same device, shapes already checked
 * by the op's inference rule), the attributes, the inferred output metadata
 * and output tensors. For every class except VIEW and DATADEP the outputs
 * are preallocated by the dispatcher (and may be strided views when an
 * in-place op writes straight into its destination); VIEW and DATADEP
 * kernels create out[k] themselves.
 */
#ifndef LT_EAGER_H
#define LT_EAGER_H

#include "core/pool.h"
#include "ops/ops.h"

typedef lt_status (*lt_eager_fn)(lt_op op, lt_tensor *const *in, int nin, const lt_attrs *a,
                                 const lt_meta *out_meta, lt_tensor **out);

void lt_eager_set_kernel(lt_op op, lt_eager_fn fn);
/*
 * Runs op's kernel on CPU tensors. Outputs that are NULL on entry are
 * allocated (for every class but VIEW and DATADEP, whose kernels make their
 * own); non-NULL entries are used as given. The caller owns the outputs; on
 * failure none survives and out[] is cleared.
 */
lt_status lt_eager_run(lt_op op, lt_tensor *const *in, int nin, const lt_attrs *a, const lt_meta *om,
                       lt_tensor **out, lt_device dev);
lt_eager_fn lt_eager_kernel(lt_op op);

/* Kernel registration, one function per group (each in its own file). */
void lt_eager_register_factory(void);
void lt_eager_register_elementwise(void);
void lt_eager_register_reduce(void);
void lt_eager_register_scan(void);
void lt_eager_register_select(void);
void lt_eager_register_quantile(void);
void lt_eager_register_lapack(void);
void lt_eager_register_shape(void);
void lt_eager_register_nn(void);
void lt_eager_register_random(void); /* called by lt_eager_register_factory */
void lt_eager_register_copy(void);
void lt_eager_register_view_scatter(void);   /* called by lt_eager_register_factory */
void lt_eager_register_collective(void);

/* ---- strided elementwise iterator -------------------------------------- */

#define LT_ITER_MAX_OPS 4

/*
 * Iterates the elements of out (operand 0) and of inputs broadcast to out's
 * shape. After lt_iter_build the dims are coalesced (size-1 dims dropped,
 * mergeable neighbours merged) so the innermost loop is as long as
 * possible. Strides are in bytes.
 */
typedef struct lt_iter {
    int ndim;
    int nops;
    int64_t numel;
    int64_t shape[LT_MAX_DIMS];
    int64_t strides[LT_ITER_MAX_OPS][LT_MAX_DIMS];
    char *base[LT_ITER_MAX_OPS];
} lt_iter;

/* Inner loop: n elements; ptrs[k] and strides[k] (bytes) per operand. */
typedef void (*lt_loop_fn)(int64_t n, char **ptrs, const int64_t *strides, const void *ctx);

void lt_iter_build(lt_iter *it, lt_tensor *out, lt_tensor *const *ins, int nin);
/* Runs fn over every element, in parallel (the library's pool, core/pool.h)
 * above LT_PARALLEL_GRAIN elements. */
void lt_iter_run(const lt_iter *it, lt_loop_fn fn, const void *ctx);

/* ---- random numbers (random.c) ----------------------------------------- */

/* One Philox4x32-10 block: out = philox(ctr, key). */
void lt_philox4x32_10(const uint32_t ctr[4], const uint32_t key[2], uint32_t out[4]);
/* Counters (Philox blocks) a random op on numel elements of dt consumes. */
int64_t lt_random_counters(lt_op op, lt_dtype dt, int64_t numel);

/* ---- view geometry (shape.c) ------------------------------------------- */

/* Strides that let a tensor of old_shape/old_strides be seen as new_shape
 * without a copy (PyTorch's view rule), or false if none exist. */
bool lt_view_strides(const int64_t *old_shape, const int64_t *old_strides, int old_nd,
                     const int64_t *new_shape, int new_nd, int64_t *new_strides);
/* Strides and offset (elements) of view op `op` on t with result meta om,
 * from metadata only (t needs no storage). Fails only for VIEW when t's
 * strides cannot express the new shape. */
lt_status lt_view_geometry(lt_op op, const lt_tensor *t, const lt_attrs *a, const lt_meta *om, int64_t *strides,
                           int64_t *offset);

/* ---- shared building blocks -------------------------------------------- */

/* Copies src (broadcast to dst's shape) into dst, converting dtypes. Both
 * are CPU tensors; they must not overlap partially. */
void lt_eager_copy(lt_tensor *dst, lt_tensor *src);
/* Sets every element of dst to value converted to dst's dtype. */
void lt_eager_fill(lt_tensor *dst, double value);
/* A new contiguous tensor with src's values converted to dt (src itself,
 * with one more reference, when it already is contiguous with dtype dt).
 * The caller owns the result (lt_tensor_unref). */
lt_tensor *lt_eager_as_contiguous(lt_tensor *src, lt_dtype dt, const char *op);
/* out += alpha * (a @ b) for 2-D a [m, k] and b [k, n] of any layout and a
 * contiguous f32/f64 out [m, n] (matmul.c): the compiler's matmul fused
 * with the update that consumes it (an optimizer step w - lr * grad).
 * Operands of another dtype or layout are copied first. */
lt_status lt_eager_matmul_acc(lt_tensor *a, lt_tensor *b, lt_tensor *out, double alpha);
/* Reads element i (row-major logical index) of t as a double. Slow; for
 * printing and tests. */
double lt_eager_get(const lt_tensor *t, int64_t i);
/* Byte offset of row-major logical index i in t. */
int64_t lt_eager_offset_of(const lt_tensor *t, int64_t i);

/* ---- typed-loop helpers ------------------------------------------------- */

/* Storage C type of each dtype, by suffix (b8 is bool: `bool` itself is a
 * macro); bf16/f16 are stored as uint16_t. */
#define LT_CTYPE_f32 float
#define LT_CTYPE_f64 double
#define LT_CTYPE_i32 int32_t
#define LT_CTYPE_i64 int64_t
#define LT_CTYPE_u8 uint8_t
#define LT_CTYPE_b8 bool
#define LT_CTYPE_bf16 uint16_t
#define LT_CTYPE_f16 uint16_t

/* Load a value (bf16/f16 widen to float) and store one (with conversion). */
#define LT_LOAD_f32(p) (*(const float *)(p))
#define LT_LOAD_f64(p) (*(const double *)(p))
#define LT_LOAD_i32(p) (*(const int32_t *)(p))
#define LT_LOAD_i64(p) (*(const int64_t *)(p))
#define LT_LOAD_u8(p) (*(const uint8_t *)(p))
#define LT_LOAD_b8(p) (*(const bool *)(p))
#define LT_LOAD_bf16(p) lt_bf16_to_f32(*(const uint16_t *)(p))
#define LT_LOAD_f16(p) lt_f16_to_f32(*(const uint16_t *)(p))
#define LT_STORE_f32(p, v) (*(float *)(p) = (float)(v))
#define LT_STORE_f64(p, v) (*(double *)(p) = (double)(v))
#define LT_STORE_i32(p, v) (*(int32_t *)(p) = LT_TO_INT(i32, v))
#define LT_STORE_i64(p, v) (*(int64_t *)(p) = LT_TO_INT(i64, v))
#define LT_STORE_u8(p, v) (*(uint8_t *)(p) = LT_TO_INT(u8, v))
/* A value to an integer dtype: floats through the defined conversions of
 * core.h, integers by C's (modular) conversion. */
#define LT_TO_INT(S, v)                                                                       \
    _Generic((v), float: lt_float_to_##S, double: lt_float_to_##S, default: lt_int_to_##S)(v)
static inline int32_t lt_int_to_i32(int64_t v) { return (int32_t)v; }
static inline int64_t lt_int_to_i64(int64_t v) { return v; }
static inline uint8_t lt_int_to_u8(int64_t v) { return (uint8_t)v; }
#define LT_STORE_b8(p, v) (*(bool *)(p) = ((v) != 0))
#define LT_STORE_bf16(p, v) (*(uint16_t *)(p) = lt_f32_to_bf16((float)(v)))
#define LT_STORE_f16(p, v) (*(uint16_t *)(p) = lt_f32_to_f16((float)(v)))

/* X-macro lists of dtypes: X(arg, suffix, LT_ENUM). Two copies so that they
 * can be nested. */
#define LT_FOR_DTYPES_A(X, arg) \
    X(arg, f32, LT_F32) X(arg, f64, LT_F64) X(arg, i32, LT_I32) X(arg, i64, LT_I64) \
    X(arg, u8, LT_U8) X(arg, b8, LT_BOOL) X(arg, bf16, LT_BF16) X(arg, f16, LT_F16)
#define LT_FOR_DTYPES_B(X, arg) \
    X(arg, f32, LT_F32) X(arg, f64, LT_F64) X(arg, i32, LT_I32) X(arg, i64, LT_I64) \
    X(arg, u8, LT_U8) X(arg, b8, LT_BOOL) X(arg, bf16, LT_BF16) X(arg, f16, LT_F16)

/* True when every operand of the inner loop is dense (stride == size). */
#define LT_DENSE2(s, sz0, sz1) ((s)[0] == (int64_t)(sz0) && (s)[1] == (int64_t)(sz1))

#endif
