/*
 * ops.h - the op table (derived from ops.def) and shape/dtype inference.
 *
 * This layer knows every op's name, class, arity, attributes and output
 * metadata. It is shared by the eager runtime, by tracing (a lazy tensor knows
 * its shape without running anything) and by the compiler. It depends only
 * on core.
 */
#ifndef LT_OPS_H
#define LT_OPS_H

#include "core/core.h"

typedef enum lt_op {
#define LT_OP(id, name, cls, nin, nout, flags) LT_OP_##id,
#include "ops/ops.def"
#undef LT_OP
    LT_OP_COUNT
} lt_op;

/* Op classes. */
enum {
    LT_OPC_FACTORY,  /* no tensor inputs */
    LT_OPC_UNARY,    /* elementwise, one input */
    LT_OPC_BINARY,   /* elementwise, two broadcast inputs */
    LT_OPC_TERNARY,  /* elementwise, three broadcast inputs */
    LT_OPC_INPLACE,  /* writes into its first input */
    LT_OPC_REDUCE,   /* reduction over dims */
    LT_OPC_SCAN,     /* same-shape op along one dim (cumsum, softmax) */
    LT_OPC_VIEW,     /* output shares the input's storage */
    LT_OPC_INDEX,    /* indexing and shaping */
    LT_OPC_DATADEP,  /* output shape depends on the data */
    LT_OPC_MATMUL,
    LT_OPC_CONV,
    LT_OPC_COLLECTIVE
};

/* Op flags. */
enum {
    LT_OPF_DIFF = 1u << 0,    /* differentiable */
    LT_OPF_INPLACE = 1u << 1, /* has a public in-place form */
    LT_OPF_ZERO = 1u << 2,    /* elementwise with f(0) == 0 */
    LT_OPF_NOLOWER = 1u << 3, /* no compiler lowering: lazy falls back */
    LT_OPF_DATAFAIL = 1u << 4 /* its kernel can fail on input values (see ops.def) */
};

#define LT_ATTR_INTS 16
#define LT_MAX_OUTPUTS 2
#define LT_ATTR_FLOATS 6

/* Attributes of one op call, stored inline (no allocation). The meaning of
 * each slot per op is documented in ops.def. */
typedef struct lt_attrs {
    int64_t i[LT_ATTR_INTS];
    double f[LT_ATTR_FLOATS];
    int32_t ni, nf;
    int32_t dtype;   /* target dtype (cast, factories); -1 when unused */
    int32_t flag;    /* bit flags: keepdim, descending, largest, ... */
    lt_device device; /* factories only */
} lt_attrs;

/* Static description of an op. */
typedef struct lt_op_info {
    const char *name;
    int cls;
    int nin;  /* -1: variadic */
    int nout;
    unsigned flags;
} lt_op_info;

extern const lt_op_info lt_op_infos[LT_OP_COUNT];

static inline const char *lt_op_name(lt_op op) { return lt_op_infos[op].name; }

/* Attributes with every slot cleared and dtype = -1. */
lt_attrs lt_attrs_init(void);

/*
 * Shape/dtype inference of one op. `in` describes the inputs (a weak
 * flag on a meta marks a wrapped C scalar for type promotion). Fills
 * out[0..nout). Returns LT_OK, or sets the error (naming the op, shapes and
 * dtypes) and returns its status. For LT_OPC_DATADEP ops the data-dependent
 * dims are reported as -1.
 */
typedef lt_status (*lt_infer_fn)(lt_op op, const lt_meta *in, int nin, const lt_attrs *a,
                                 lt_meta *out);

/* Runs the registered inference of op (after generic arity checks). */
lt_status lt_op_infer(lt_op op, const lt_meta *in, int nin, const lt_attrs *a, lt_meta *out);

/* Inference registration, one function per op group (infer_*.c). */
void lt_op_set_infer(lt_op op, lt_infer_fn fn);
void lt_infer_register_elementwise(void);
void lt_infer_register_reduce(void);
void lt_infer_register_select(void);
void lt_infer_register_shape(void);
void lt_infer_register_nn(void);
void lt_infer_register_factory(void);
void lt_infer_register_view_scatter(void);
void lt_infer_register_collective(void);
void lt_infer_register_linalg(void);
/* The view op (SLICE, SELECT, DIAGONAL) matching a *_SCATTER op. */
lt_op lt_view_of_scatter(lt_op op);

/* ---- helpers shared by the inference rules ------------------------------ */

/* Broadcasts a and b (NumPy rules) into out; error names op on failure. */
lt_status lt_broadcast_shapes(const char *op, const lt_meta *a, const lt_meta *b, lt_meta *out);
/* Checks that a fill value (full, fill_, masked_fill) converts to dtype dt
 * without undefined behaviour: NaN, infinities and out-of-range values are
 * refused for integer dtypes, finite overflow for f32/bf16/f16 (PyTorch
 * refuses them the same way). The error names op. */
lt_status lt_check_fill_value(const char *op, double v, lt_dtype dt);
/* PyTorch result_type over n metas: dimensioned tensors > zero-dim tensors
 * > weak scalars, by category (bool < integer < floating). */
lt_dtype lt_result_type(const lt_meta *in, int n);
/* Normalizes dim against ndim (negative counts from the end); error names op. */
lt_status lt_normalize_dim(const char *op, int64_t dim, int ndim, int *out);
/* Can a value of dtype `from` be written into `to` by an in-place op
 * (PyTorch's can_cast: no float -> integer, no non-bool -> bool)? */
bool lt_can_cast(lt_dtype from, lt_dtype to);
/* Category rank: 0 bool, 1 integer, 2 floating. */
int lt_dtype_category(lt_dtype dt);

#endif
