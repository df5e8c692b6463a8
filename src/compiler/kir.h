/*
 * kir.h - the compiler's kernel IR: how a canonical graph is cut into
 * kernels (the schedule), what each kernel computes (a small loop-level IR
 * of SSA instructions over affine index forms), and where every value lives
 * (the buffer plan).
 *
 * Pipeline (compiler.c drives it):
 *   kir_schedule   classify nodes, decide which values get a buffer, group
 *                  them into kernels and lower each kernel to instructions
 *                  (schedule.c, index arithmetic in affine.c);
 *   kir_memplan    liveness, workspace offsets, donation (memplan.c);
 *   kir_render     C source: one translation unit, or several (at most
 *                  LT_CC_MAX_UNITS) when large (render.c; units.c cuts
 *                  them and picks each one's optimization tier).
 *
 * Index arithmetic. Every kernel has up to KIR_MAXV loop variables i0, i1,
 * ... (its output domain's dims, then the loop dims of each reduction in
 * it). A value is evaluated at an index map: for each of its dims, an
 * affine form c + sum a[v] * i_v. View ops transform maps (no copies),
 * broadcasting zeroes dims, and a buffer access is the map times the
 * buffer's contiguous strides. A reshape that no affine form can express
 * would need an opaque C expression (division and remainder); the
 * scheduler materializes the reshape's input instead, so generated code
 * only has affine indices, which lets adjacent loops merge (coalescing)
 * and inner loops vectorize.
 */
#ifndef LT_COMPILER_KIR_H
#define LT_COMPILER_KIR_H

#include "backend/backend.h"
#include "compiler/compiler.h"

#define KIR_MAXV 16 /* loop variables per kernel */

/* c + sum a[v] * i_v, or (expr >= 0) the kernel's C expression number expr. */
typedef struct kir_aff {
    int64_t c;
    int64_t a[KIR_MAXV];
    int32_t expr;
} kir_aff;

/* A position in a value's index space: one form per dim. */
typedef struct kir_map {
    int32_t nd;
    kir_aff d[LT_MAX_DIMS];
} kir_map;

/* Node classes, as the compiler sees them. */
enum {
    NC_LEAF,    /* device data: an input buffer */
    NC_SCALAR,  /* a wrapped C scalar: literal or runtime parameter */
    NC_EW,      /* elementwise (incl. cast, clamp, where, masked_fill, tril/triu,
                 * slice_scatter and select_scatter) */
    NC_VIEW,    /* view op: index arithmetic */
    NC_FACTORY, /* full, arange, linspace, eye, empty: a function of the index */
    NC_REDUCE,  /* reduction: a loop nest inside the consumer's kernel */
    NC_ROW,     /* softmax / log_softmax: a row kernel */
    NC_CALL     /* everything else: a call into the eager kernel */
};

/* Instructions. */
enum {
    KI_CONST,  /* scalar parameter or literal (f64) */
    KI_LOAD,   /* buf[form] */
    KI_OP,     /* elementwise / factory op of `node` over in[] */
    KI_REDUCE, /* reduction of `node`: loop body = instructions (this, body_end) */
    KI_SECOND, /* second output (indices) of the reduction in[0] */
    KI_STORE   /* buf[form] = in[0] */
};

typedef struct kir_inst {
    uint8_t kind;
    int8_t nrv;        /* REDUCE: loop variables, outer to inner */
    int8_t rv[LT_MAX_DIMS];
    int32_t dtype;     /* dtype of the value */
    uint32_t node;     /* graph node (LOAD/STORE: the value's node) */
    int32_t in[3];     /* operand instructions, -1 when unused */
    int32_t buf;       /* LOAD / STORE */
    int32_t form;      /* LOAD/STORE: offset; OP: first index form; REDUCE: flat index (arg ops) */
    int32_t nforms;    /* OP: index forms used (factories, tril/triu) */
    int32_t scope;     /* REDUCE whose loop body holds this instruction, -1 */
    int32_t body_end;  /* REDUCE: one past its last body instruction */
    /* LOAD: read only where the position form `guard` lies in
     * [guard_lo, guard_hi) at a multiple of guard_step from guard_lo (a
     * slice_scatter's source, whose index is out of range elsewhere); the
     * value is 0 where it does not, and memory is not touched. -1: always. */
    int32_t guard;
    int64_t guard_lo, guard_hi, guard_step;
} kir_inst;

/* Kernel kinds. */
enum {
    KK_POINTWISE, /* a loop nest over the outputs' shape (with nested reductions) */
    KK_ROW,       /* softmax / log_softmax: rows of the scanned dim */
    KK_CALL       /* one eager kernel through the runtime table */
};

typedef struct kir_cse {
    uint32_t value;    /* node * LT_MAX_OUTPUTS + out */
    uint64_t hash;     /* of the map */
    int32_t map;       /* index into the kernel's map pool */
    int32_t inst;
    int32_t scope;
} kir_cse;

typedef struct kir_kernel {
    int kind;
    uint32_t node;         /* ROW/CALL: the node; POINTWISE: first output node */
    int ndom;              /* domain (shape of every output) */
    int64_t dom[LT_MAX_DIMS];
    int nvars;
    int64_t ext[KIR_MAXV]; /* extent of each loop variable */
    int nloop;
    int8_t loop[KIR_MAXV]; /* domain loops after coalescing, outer to inner */
    /* ROW */
    int row_var, row_input, row_form, row_buf;
    /* CALL */
    int call;
    /* instructions and their pools */
    kir_inst *ins;
    int nins, cap_ins;
    kir_aff *forms;
    int nforms, cap_forms;
    char **exprs;
    int nexprs, cap_exprs;
    kir_map *maps;
    int nmaps, cap_maps;
    kir_cse *cse;
    int ncse, cap_cse;
    int scope; /* while lowering: the REDUCE being filled, -1 */
} kir_kernel;

/* Buffers: leaves (inputs), outputs (roots) and temporaries (workspace). */
enum { KB_LEAF, KB_OUT, KB_TMP };

typedef struct kir_buf {
    int kind;
    int32_t slot;   /* LEAF: leaf slot; OUT: output number */
    uint32_t value; /* node * LT_MAX_OUTPUTS + out */
    lt_meta meta;
    size_t nbytes;
    int32_t def, last; /* producing kernel (-1 for leaves), last reading kernel (-1: none) */
    int64_t offset;    /* TMP: byte offset in the workspace */
    int32_t donor;     /* OUT: leaf slot whose buffer it may take, -1 */
    bool aliased;      /* LEAF: handed out as a root's result (never donated) */
} kir_buf;

/* A CALL kernel's operand: a strided view of a buffer, or a scalar. */
typedef struct kir_arg {
    bool scalar;
    int32_t buf;
    lt_meta meta;
    int64_t strides[LT_MAX_DIMS], offset; /* elements */
    int32_t slot;  /* scalar: parameter slot, -1 when baked */
    double value;  /* scalar: the baked value */
} kir_arg;

typedef struct kir_call {
    uint32_t node;
    int nin;
    kir_arg *in;
    int nout;
    int32_t out[LT_MAX_OUTPUTS];
    /* A 2-D matmul fused with the update that was its only consumer
     * (fuse_gemm.c): out[0] = acc + alpha * (in[0] @ in[1]), run as one
     * accumulating gemm; acc_buf is -1 for a plain call. */
    int32_t acc_buf;
    int32_t alpha_slot; /* parameter slot of alpha, -1 when baked */
    double alpha;       /* the baked alpha (its sign included) */
    bool alpha_negated; /* alpha is minus the parameter (a subtraction) */
} kir_call;

typedef struct kir_plan {
    lt_graph *g;          /* own copy */
    uint8_t *cls;         /* per node: NC_* */
    uint32_t *uses;       /* per value: consumers (distinct nodes) + root references */
    uint8_t *mat;         /* per value: lives in a buffer */
    uint8_t *forced;      /* per value: materialized after a failed fusion */
    int32_t *vbuf;        /* per value: buffer, -1 */
    int32_t *vkernel;     /* per value: kernel that computes it, -1 */
    kir_kernel *k;
    int nk, cap_k;
    kir_buf *b;
    int nb, cap_b;
    kir_call *calls;
    int ncalls, cap_calls;
    int32_t *root_buf;    /* per root: buffer holding its result */
    int nouts;            /* OUT buffers */
    int64_t ws_size;      /* workspace bytes */
    int npointwise, nrow; /* kernel counts by kind */
    int nfused_gemm;      /* matmuls fused with their update (fuse_gemm.c) */
} kir_plan;

#define KIR_VALUE(node, out) ((uint32_t)(node) * LT_MAX_OUTPUTS + (uint32_t)(out))

/* ---- schedule.c ---------------------------------------------------------- */

/* Builds the schedule and every kernel's IR for g (copied). */
lt_status kir_schedule(kir_plan *p, const lt_graph *g);
void kir_plan_free(kir_plan *p);
/* bf16/f16 compute in f32. */
lt_dtype kir_widen(lt_dtype dt);
/* Ops with a bool result computed over promoted inputs. */
bool kir_is_predicate(lt_op op);
/* The dtype an elementwise node computes in (as the eager kernel does). */
lt_dtype kir_ew_work(const lt_graph *g, const lt_gnode *n);
/* Can the renderer emit this elementwise node (else it is a call)? */
bool kir_ew_supported(const lt_graph *g, const lt_gnode *n);
/* Reduced-dim mask of a reduction node (dims normalized). */
void kir_reduce_mask(const lt_gnode *n, const lt_meta *in, bool *mask);

/* Removes kernel j from the plan (its buffers keep their indices; kernel
 * numbers after j shift down by one). */
void kir_remove_kernel(kir_plan *p, int j);

/* ---- fuse_gemm.c --------------------------------------------------------- */

/* Folds each update x + alpha * (a @ b) (or x - alpha * ...) whose matmul
 * feeds nothing else into the matmul's call: one accumulating gemm writes
 * the update's output, with no product buffer and no pointwise pass.
 * Returns the number of updates fused. */
int kir_fuse_gemm_updates(kir_plan *p);

/* ---- memplan.c ----------------------------------------------------------- */

/* Liveness, workspace offsets, donation candidates. */
lt_status kir_memplan(kir_plan *p);

/* ---- render.c ------------------------------------------------------------ */

/* The C source of the plan (malloc'd, NUL-terminated, *len bytes), or
 * NULL: *nunits translation units, described in units[] (room for
 * LT_CC_MAX_UNITS), holding *nfunctions kernel functions (kernels with
 * the same text share one). */
char *kir_render(const kir_plan *p, size_t *len, lt_cc_unit *units, int *nunits, int *nfunctions);

/* ---- units.c ------------------------------------------------------------- */

/* Estimated compile cost of one translation unit: a program above it is
 * cut into several, which compiler processes build in parallel (cc.c). */
#define KIR_UNIT_COST 131072

/* The optimization tier of each of nk kernels' functions (units.c):
 * kernel_work[j] is kernel j's operations per run, cost[j] its function's
 * compile cost (0: it has none, and calls the function of kernel rep[j];
 * rep[j] == j for a function's owner, -1 for no function at all). False
 * when out of memory. */
bool kir_assign_tiers(int nk, const double *kernel_work, const size_t *cost, const int *rep, lt_cc_tier *tier);
/* Cuts the functions into units (at most LT_CC_MAX_UNITS, hot ones first,
 * each tier in units of about equal cost): unit[j] receives function j's
 * unit (-1 without a function), units[] the units' tiers; tier[] may be
 * changed (a tier too small for a unit of its own joins another). Returns
 * the number of units. */
int kir_plan_units(int nk, const size_t *cost, lt_cc_tier *tier, int *unit, lt_cc_unit *units);

/* ---- affine.c ------------------------------------------------------------ */

kir_aff kir_aff_const(int64_t c);
kir_aff kir_aff_var(const kir_kernel *k, int v);
/* x * m + y (either may be opaque). */
kir_aff kir_aff_madd(kir_kernel *k, const kir_aff *x, int64_t m, const kir_aff *y);
/* (x / p) % s, affine when the terms separate, else opaque. */
kir_aff kir_aff_divmod(kir_kernel *k, const kir_aff *x, int64_t p, int64_t s);
bool kir_aff_equal(const kir_aff *x, const kir_aff *y);
/* Writes x as a C expression over the loop variables (snprintf semantics). */
int kir_aff_str(const kir_kernel *k, const kir_aff *x, char *buf, size_t cap);
/* Stores an opaque expression; returns its number or -1. */
int kir_expr_add(kir_kernel *k, char *owned);
/* An opaque form: the C expression `text` (malloc'd, taken over; NULL: out
 * of memory, which the renderer then fails on). */
kir_aff kir_aff_opaque(kir_kernel *k, char *text);

kir_map kir_map_identity(const kir_kernel *k, int nd);
/* The map of a broadcast operand of shape in to an op of shape out. */
void kir_map_broadcast(const lt_meta *in, const lt_meta *out, const kir_map *m, kir_map *r);
/* The map of a view node's input, given the map of its output. */
void kir_map_view(kir_kernel *k, const lt_gnode *n, const lt_meta *in, const kir_map *out, kir_map *r);
/* Element offset of position m in a contiguous buffer of meta. */
kir_aff kir_map_offset(kir_kernel *k, const kir_map *m, const lt_meta *meta);
bool kir_map_equal(const kir_map *x, const kir_map *y);
uint64_t kir_map_hash(const kir_map *m);

#endif
