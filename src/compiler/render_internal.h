/*
 * render_internal.h - what the parts of the C renderer share: the string
 * builder, expression fragments, a kernel's own numbering of buffers and
 * scalars, and the rendering context. Private to src/compiler/render*.c.
 *
 *   render_util.c    the builders, types and conversions, local numbering
 *   render_expr.c    elementwise and factory expressions
 *   render_kernel.c  instructions, loops, reductions, kernel functions
 *   render.c         translation units, the entry point, kir_render
 */
#ifndef LT_COMPILER_RENDER_INTERNAL_H
#define LT_COMPILER_RENDER_INTERNAL_H

#include "compiler/kir.h"
#include "lazy/lazy.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* A parallel kernel's outermost loop is cut into chunks of about this many
 * element operations (at most 64 chunks; src/core/pool.h) */
#define PAR_CHUNK_WORK 8192
/* Kernels are functions of their own that the optimizer must not inline
 * into the entry point (that would make one huge function again, whose
 * compile time grows faster than its length), visible across the units of
 * a program but not exported from its shared object. */
#define KERNEL_LINKAGE "__attribute__((visibility(\"hidden\"), noinline))"
#define KERNEL_PARAMS "(void *const *restrict B, const double *restrict S, const lt_rt *rt)"
/* Stands for a kernel function's name while it is rendered: the name is
 * that of the first kernel with the function's text (kernel<j>), put in
 * when the text is written into its unit. */
#define FN_TOKEN "KFN"

/* Room for one rendered expression. */
#define X_CAP 1024

/* ---- string builder ----------------------------------------------------- */

typedef struct sb {
    char *s;
    size_t n, cap;
    bool failed;
} sb;

/* Appends to b; on failure (out of memory) b->failed is set and later
 * calls do nothing. */
void rd_printf(sb *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Four spaces per level. */
void rd_indent(sb *b, int depth);

/* snprintf for expression fragments: a fragment that does not fit sets
 * rd_fragment_truncated, and the rendering fails (never silently
 * truncated C). */
extern _Thread_local bool rd_fragment_truncated;
void rd_frag(char *dst, size_t cap, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

/* ---- types and conversions ---------------------------------------------- */

/* C type of a value, and of a buffer element. */
const char *rd_vtype(int dt);
const char *rd_stype(int dt);
static inline bool rd_is_half(int dt) { return dt == LT_BF16 || dt == LT_F16; }
/* Writes into out the expression x (of dtype from) converted to dtype to. */
void rd_cvt(char *out, size_t cap, const char *x, int from, int to);

/* ---- a kernel's own numbering of buffers and scalars ---------------------- */

/*
 * A kernel function refers to buffers and scalar parameters by its own
 * numbers, in the order it first uses them: its B[l] and S[l] are the
 * program's B[buf[l]] and S[slot[l]], gathered by the entry point for each
 * call. Kernels that differ only in which buffers and scalars they touch
 * (the same layer repeated, one optimizer update per parameter of a shape)
 * then render as the same text, and one function serves them all.
 */
typedef struct local_map {
    int *buf, nbuf, cap_buf;
    int *slot, nslot, cap_slot;
    bool failed;
} local_map;

/* The local number of a program buffer / scalar slot (added when new). */
int rd_local_buf(local_map *m, int buf);
int rd_local_slot(local_map *m, int slot);
/* The map of the kernel being rendered (kir_render runs on one thread, and
 * the expression builders reach scalar attributes without a context). */
extern _Thread_local local_map *rd_current_map;

/* A double literal that C reads back exactly. */
void rd_double_literal(char *out, size_t cap, double v);
/* Scalar attribute k of node n: a runtime parameter or a baked literal. */
void rd_attr_scalar(char *out, size_t cap, const lt_gnode *n, int k);

/* ---- rendering context -------------------------------------------------- */

typedef struct rctx {
    sb *b;
    const kir_plan *p;
    const kir_kernel *k;
    bool failed;
    /* column mode: the kernel's innermost domain loop (variable col_var)
     * runs in blocks of COL_BLOCK inside each reduction's loops, every
     * accumulator is an array over the block */
    bool col;
    int col_var;
    const char *linkage; /* of the kernel functions: KERNEL_LINKAGE */
} rctx;

#define COL_BLOCK 256

static inline const lt_gnode *rd_gnode(const rctx *c, uint32_t i) { return &c->p->g->nodes[i]; }
static inline void rd_var(char *out, size_t cap, int inst) { rd_frag(out, cap, "v%d", inst); }
/* Operand j of instruction in, converted to dtype to. */
void rd_operand(const rctx *c, const kir_inst *in, int j, int to, char *out, size_t cap);
/* The index expression of affine form `form` of the kernel. */
void rd_form_str(const rctx *c, int form, char *out, size_t cap);
/* The C condition "position `form` lies in [lo, hi) at a multiple of step
 * from lo": where a slice_scatter's (or select_scatter's) source is. */
void rd_range_cond(const rctx *c, int form, int64_t lo, int64_t hi, int64_t step, char *out, size_t cap);

/* ---- expressions (render_expr.c) ------------------------------------------ */

/* The C expression of an elementwise / factory instruction; false when the
 * op has no rendering (the plan then cannot be compiled). */
bool rd_ew_expr(const rctx *c, const kir_inst *in, char *e, size_t cap);
bool rd_factory_expr(const rctx *c, const kir_inst *in, char *e, size_t cap);

/* ---- kernel functions (render_kernel.c) ------------------------------------ */

/* A comment on kernel `index` (in the entry point, before its call). */
void rd_describe(rctx *c, int index);
/* The function of a pointwise / row kernel c->k. */
void rd_emit_pointwise(rctx *c);
void rd_emit_row(rctx *c);
/* Iterations of the loops over variables vars[0..n) of kernel k. */
int64_t rd_loops_work(const kir_kernel *k, const int8_t *vars, int n);

#endif
