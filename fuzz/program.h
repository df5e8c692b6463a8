/*
 * program.h - the byte code of fuzz_program: how input bytes decode into
 * a sequence of tensor operations over a few tensor slots, and the state
 * one run of that sequence keeps on one device.
 *
 * A program is a list of steps. Each step starts with one op byte (mapped
 * to an op by a weighted table, prog_op_of_byte) followed by the op's
 * argument bytes; arguments are
 * read relative to the shapes of the operands (a dim byte picks one of
 * ndim + 2 values, one of them out of range), so every byte string is a
 * program and most steps are meaningful. Past the end of the input every
 * byte reads as 0 and the program stops.
 */
#ifndef LT_FUZZ_PROGRAM_H
#define LT_FUZZ_PROGRAM_H

#include "lazytensor.h"

#include <stdbool.h>
#include <stdint.h>

#define NSLOTS 6     /* tensors a program works on */
#define NDEAD 16     /* released handles kept for use-after-release */
#define MAX_STEPS 48 /* steps run per input */
#define MAX_NUMEL 512 /* larger results are dropped at once */
#define MAX_NEW_NUMEL 64 /* elements of a tensor made from bytes */

/* Ops. Their order and weights (program_ops.c) are part of the corpus
 * format: changing them changes what every stored input means. */
enum prog_op {
    P_NEW,           /* slot, dtype, shape, element bytes */
    P_FACTORY,       /* slot, kind, args: zeros/ones/full/arange/eye/linspace/scalar */
    P_UNARY,         /* dst, src, which */
    P_BINARY,        /* dst, a, b, which */
    P_SCALAR,        /* dst, src, which, scalar */
    P_CAST,          /* dst, src, dtype; also clone/contiguous/to */
    P_REDUCE,        /* dst, src, which, dims, keepdim */
    P_ROWWISE,       /* dst, src, which, dim: argmax/softmax/cumsum/... */
    P_NARROW,        /* dst, src, dim, start, length */
    P_SELECT,        /* dst, src, dim, index */
    P_PERMUTE,       /* dst, src, permutation */
    P_TRANSPOSE,     /* dst, src, dim0, dim1 */
    P_RESHAPE,       /* dst, src, view|reshape|flatten, shape */
    P_EXPAND,        /* dst, src, sizes */
    P_SQUEEZE,       /* dst, src, squeeze|squeeze_all|unsqueeze, dim */
    P_DIAGONAL,      /* dst, src, offset, dim1, dim2 */
    P_SLICE,         /* dst, src, dim, start, end, step */
    P_INPLACE,       /* dst, src, which: add_/sub_/mul_/div_/copy_/... */
    P_INPLACE_SCALAR,/* dst, which, scalar: fill_/add_scalar_/zero_/... */
    P_GATHER,        /* dst, src, dim, index shape and values */
    P_INDEX_SELECT,  /* dst, src, dim, index values */
    P_SCATTER,       /* dst, src, dim, add?, index values, value */
    P_MATMUL,        /* dst, a, b */
    P_CAT,           /* dst, a, b, dim, cat|stack */
    P_WHERE,         /* dst, cond source, a, b */
    P_RELEASE,       /* slot */
    P_USE_RELEASED,  /* which dead handle, what use */
    P_BARRIER,       /* mark_step | barrier(true) | barrier(false) */
    P_READ,          /* slot, copy_to_host | to(cpu) | item | item_int */
    P_CHAIN,         /* dst, src, length, links: an expression whose
                        intermediates die at once (the compiler fuses them) */
    P_NUM_OPS
};

/* Families of steps that FUZZ_PROGRAM_SKIP can turn off (comma-separated
 * names), so a known defect does not hide the rest. */
enum prog_family {
    F_SIZE0 = 1 << 0,         /* "size0": no size-0 dims are decoded */
    F_EMPTY_REDUCE = 1 << 1,  /* "empty_reduce": no reductions over 0 elements */
    F_RELEASE = 1 << 2,       /* "release": no release / use-after-release */
    F_VIEW_INPLACE = 1 << 3,  /* "view_inplace": no in-place op into a view */
    F_EXPAND_INPLACE = 1 << 4,/* "expand_inplace": no in-place op into a tensor with a 0 stride */
    F_ASYNC = 1 << 5,         /* "async": no lt_barrier(false) */
    F_INDEX = 1 << 6,         /* "index": no gather/index_select/scatter */
    F_MATMUL = 1 << 7,        /* "matmul" */
    F_BAD_INDEX = 1 << 8,     /* "bad_index": index values always in range */
    F_CAST = 1 << 9,          /* "cast": no float -> integer conversion of non-finite values */
    F_DEFERRED = 1 << 10,     /* "deferred": where cpu fails but the lazy op does not (an error
                                 deferred to the barrier), stop without checking that barrier */
    F_INF_EXTREMUM = 1 << 11, /* "inf_extremum": no max/min-based reduction (amax, amin,
                                 argmax, max_dim, logsumexp, softmax) of a tensor holding an
                                 infinity (decided on the cpu run's values) */
};

/* One tensor's values as the host sees them (f64, row-major). */
typedef struct prog_values {
    lt_dtype dt;
    int ndim;
    int64_t shape[LT_MAX_DIMS];
    int64_t numel;
    double *v;
} prog_values;

/* What one step did on one device. */
typedef struct step_result {
    int op;
    lt_status status;
    bool made;           /* a new tensor went into slot `dst` */
    bool inplace;        /* an in-place op on slot `dst` */
    bool dropped;        /* a result over MAX_NUMEL elements, released at once */
    int same_as;         /* the op returned the tensor of this slot (else -1) */
    int dst;             /* the slot written (-1: none) */
    lt_dtype dt;         /* of the new tensor */
    int ndim;
    int64_t shape[LT_MAX_DIMS];
    int64_t strides[LT_MAX_DIMS];
    bool barrier;        /* the step was lt_mark_step / lt_barrier */
    bool read;           /* the step read values: `values` */
    bool skipped;        /* left out by a skipped family, decided on cpu values */
    prog_values values;
} step_result;

/* The state of one run of a program on one device. */
typedef struct prog_run {
    lt_device dev;
    const uint8_t *bytes;
    size_t len, pos;
    unsigned skip; /* prog_family bits */
    bool trace;    /* print each step as C */
    bool force_skip; /* lazy runs: the cpu run left this step out (res.skipped) */
    lt_tensor *slot[NSLOTS];
    int family[NSLOTS]; /* slots sharing a base (views) share a family */
    bool is_view[NSLOTS];
    int next_family;
    lt_tensor *dead[NDEAD];
    int ndead;
    step_result res; /* of the current step */
} prog_run;

/* Op byte values: OP_BYTES of them, each op's share by its weight. */
#define OP_BYTES 64
int prog_op_of_byte(uint8_t b);
/* The first byte value that means op (for writing seeds). */
uint8_t prog_byte_of_op(int op);

/* Byte reading (0 past the end). */
uint8_t prog_byte(prog_run *r);
bool prog_done(const prog_run *r);

/* Runs one step (decoding its bytes) and fills r->res. */
void prog_step(prog_run *r);

/* Copies t's values to the host into *out (out->v malloc'd); the status. */
lt_status prog_read(lt_tensor *t, prog_values *out);
void prog_values_free(prog_values *v);

/* Releases every slot. */
void prog_release_all(prog_run *r);

#endif
