/*
 * schedule.c - fusion: which values get a buffer, which kernel computes
 * each of them, and the lowering of every kernel to KIR instructions.
 *
 * A value is materialized (gets a buffer) when it is a leaf, a root, the
 * result of a call or a row op, the base of a call operand, a reduction
 * that cannot run inside its single consumer's loop, or an intermediate
 * with several consumers that is too costly to recompute. Everything else
 * is computed inline, at the index its consumer asks for: views are index
 * arithmetic, elementwise chains become one expression, a reduction becomes
 * a loop nest inside the kernel of its consumer.
 *
 * Kernels are formed in graph order. A materialized value of a pointwise
 * kind joins the latest pointwise kernel with the same domain (its shape)
 * that runs after everything it reads, as long as it reads that kernel's
 * own results only at the same index and the kernel is not full
 * (KERNEL_MAX_INS); otherwise it starts a new kernel. With inline
 * expressions bounded too (MAX_INLINE_NODES), a long chain becomes a
 * sequence of bounded kernels passing their results through temporaries,
 * so the C compiler's work grows linearly with the graph.
 * When a reduction turns out to be needed where it would be computed more
 * than once per result (broadcast back, or inside another reduction), it
 * is marked for materialization and the schedule is rebuilt; so is the
 * input of a reshape that index arithmetic cannot express.
 *
 * Reshapes: a run of reshapes reaching a buffer is the buffer's row-major
 * offset (no division); a materialized reshape of a computed value is
 * computed over that value's own shape and stored at row-major offsets.
 */
#include "compiler/kir.h"
#include "lazy/lazy.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Multi-consumer intermediates above this cost are materialized. */
#define RECOMPUTE_MAX_COST 8
#define RECOMPUTE_MAX_LOADS 3
/* An inline expression of more nodes than this (a node used twice counts
 * twice) is materialized: lowering recurses once per node, and a long
 * chain becomes several bounded pieces instead of one huge expression. */
#define MAX_INLINE_NODES 128
/* A pointwise kernel of this many instructions takes no further outputs;
 * the next one starts a new kernel. The C compiler's time per function
 * grows faster than its length (register allocation over every value
 * live in the loop, in particular), so bounded kernels keep the compile
 * time of a program linear in its size. Above the fused kernels of real
 * training steps (bench/peers_step: at most 221 instructions in the
 * transformer block's step), which fuse as before; only the GPT step's
 * optimizer update over many small (128-element) parameters reaches it and
 * is cut into several kernels. */
#define KERNEL_MAX_INS 256

enum { EV_ERROR = -1, EV_CONFLICT = -2, EV_RESTART = -3 };

static const lt_gnode *gnode(const kir_plan *p, uint32_t i) { return &p->g->nodes[i]; }

static lt_gvalue input_of(const kir_plan *p, const lt_gnode *n, uint32_t k)
{
    return p->g->inputs[n->first_input + k];
}

static uint32_t value_id(lt_gvalue v) { return KIR_VALUE(v.node, v.out); }

static const lt_meta *meta_of(const kir_plan *p, uint32_t value)
{
    return &p->g->nodes[value / LT_MAX_OUTPUTS].out[value % LT_MAX_OUTPUTS];
}

static int norm_dim(int64_t d, int nd) { return (int)(d < 0 ? d + nd : d); }

/* ======================================================================= */
/* Classification                                                           */
/* ======================================================================= */

lt_dtype kir_widen(lt_dtype dt) { return dt == LT_BF16 || dt == LT_F16 ? LT_F32 : dt; }

bool kir_is_predicate(lt_op op)
{
    switch (op) {
    case LT_OP_EQ: case LT_OP_NE: case LT_OP_LT: case LT_OP_LE: case LT_OP_GT: case LT_OP_GE:
    case LT_OP_LOGICAL_AND: case LT_OP_LOGICAL_OR: case LT_OP_LOGICAL_NOT:
    case LT_OP_ISNAN: case LT_OP_ISINF: case LT_OP_ISFINITE:
        return true;
    default:
        return false;
    }
}

lt_dtype kir_ew_work(const lt_graph *g, const lt_gnode *n)
{
    if (!kir_is_predicate((lt_op)n->op))
        return kir_widen((lt_dtype)n->out[0].dtype);
    lt_meta m[3];
    for (uint32_t k = 0; k < n->nin && k < 3; k++) {
        lt_gvalue v = g->inputs[n->first_input + k];
        m[k] = g->nodes[v.node].out[v.out];
    }
    return kir_widen(lt_result_type(m, (int)n->nin));
}

/* Mirrors the eager loop table (elementwise.c): which (op, working dtype)
 * pairs have a loop. Integer pow is left to the eager kernel, and so are
 * integer remainder, fmod and floor_divide, which check their divisor
 * first. */
static bool ew_has_loop(lt_op op, lt_dtype w)
{
    bool fl = w == LT_F32 || w == LT_F64, in = w == LT_I32 || w == LT_I64 || w == LT_U8, b = w == LT_BOOL;
    switch (op) {
    case LT_OP_NEG: case LT_OP_CLAMP:
        return fl || in;
    case LT_OP_ABS: case LT_OP_SIGN: case LT_OP_RELU: case LT_OP_FLOOR: case LT_OP_CEIL: case LT_OP_ROUND:
        return fl || in || b;
    case LT_OP_EXP: case LT_OP_LOG: case LT_OP_LOG1P: case LT_OP_EXPM1: case LT_OP_SQRT: case LT_OP_RSQRT:
    case LT_OP_SIN: case LT_OP_COS: case LT_OP_TANH: case LT_OP_SIGMOID: case LT_OP_GELU: case LT_OP_SILU:
    case LT_OP_ERF: case LT_OP_RECIPROCAL: case LT_OP_DIV:
    case LT_OP_TAN: case LT_OP_ASIN: case LT_OP_ACOS: case LT_OP_ATAN: case LT_OP_SINH: case LT_OP_COSH:
    case LT_OP_ASINH: case LT_OP_ACOSH: case LT_OP_ATANH: case LT_OP_LOG2: case LT_OP_LOG10: case LT_OP_EXP2:
    case LT_OP_FRAC: case LT_OP_SOFTPLUS: case LT_OP_MISH: case LT_OP_LOGSIGMOID: case LT_OP_SOFTSIGN:
    case LT_OP_ELU: case LT_OP_LEAKY_RELU: case LT_OP_HARDSIGMOID: case LT_OP_HARDSWISH: case LT_OP_GELU_TANH:
    case LT_OP_ATAN2: case LT_OP_HYPOT: case LT_OP_COPYSIGN: case LT_OP_XLOGY: case LT_OP_LOGADDEXP:
    case LT_OP_FMOD: case LT_OP_FLOOR_DIVIDE: /* integers: like remainder */
        return fl;
    case LT_OP_TRUNC:
        return fl || in;
    case LT_OP_SHIFT_LEFT: case LT_OP_SHIFT_RIGHT:
        return in;
    case LT_OP_BITWISE_NOT: case LT_OP_BITWISE_AND: case LT_OP_BITWISE_OR: case LT_OP_BITWISE_XOR:
        return in || b;
    case LT_OP_ADD: case LT_OP_MUL: case LT_OP_MAXIMUM: case LT_OP_MINIMUM:
        return fl || in || b;
    case LT_OP_SUB:
        return fl || in;
    case LT_OP_POW:
        return fl || b;
    case LT_OP_REMAINDER:
        return fl;
    default:
        return kir_is_predicate(op);
    }
}

bool kir_ew_supported(const lt_graph *g, const lt_gnode *n)
{
    lt_op op = (lt_op)n->op;
    if (op == LT_OP_CAST || op == LT_OP_WHERE || op == LT_OP_MASKED_FILL || op == LT_OP_TRIL || op == LT_OP_TRIU)
        return true;
    return ew_has_loop(op, kir_ew_work(g, n));
}

/* slice_scatter and select_scatter are elementwise over their output: the
 * source where the position along the dim is in the view, the base
 * elsewhere. Compiled this way, the sum of the scatters that put q, k and
 * v's gradients into zeros of the qkv shape is one pass, where calls to
 * the eager kernel each filled, copied and wrote a whole qkv-sized buffer. */
static bool is_view_scatter(lt_op op) { return op == LT_OP_SLICE_SCATTER || op == LT_OP_SELECT_SCATTER; }

static bool is_arg_reduce(lt_op op)
{
    return op == LT_OP_MAX_DIM || op == LT_OP_MIN_DIM || op == LT_OP_ARGMAX || op == LT_OP_ARGMIN;
}

void kir_reduce_mask(const lt_gnode *n, const lt_meta *in, bool *mask)
{
    for (int d = 0; d < LT_MAX_DIMS; d++)
        mask[d] = n->attrs.ni == 0 && d < in->ndim;
    for (int k = 0; k < n->attrs.ni && in->ndim > 0; k++)
        mask[norm_dim(n->attrs.i[k], in->ndim)] = true;
}

static int classify(const kir_plan *p, const lt_gnode *n)
{
    if (n->kind == LT_NODE_DATA)
        return NC_LEAF;
    if (n->kind == LT_NODE_SCALAR)
        return NC_SCALAR;
    lt_op op = (lt_op)n->op;
    switch (lt_op_infos[op].cls) {
    case LT_OPC_UNARY:
    case LT_OPC_BINARY:
    case LT_OPC_TERNARY:
        return kir_ew_supported(p->g, n) ? NC_EW : NC_CALL;
    case LT_OPC_VIEW:
        return NC_VIEW;
    case LT_OPC_FACTORY:
        return op == LT_OP_EMPTY || op == LT_OP_FULL || op == LT_OP_ARANGE || op == LT_OP_LINSPACE ||
                       op == LT_OP_EYE
                   ? NC_FACTORY
                   : NC_CALL;
    case LT_OPC_REDUCE: {
        /* reductions without an identity fail on zero elements: the eager
         * kernel reports that */
        const lt_meta *in = meta_of(p, value_id(input_of(p, n, 0)));
        bool mask[LT_MAX_DIMS];
        kir_reduce_mask(n, in, mask);
        int64_t nred = 1;
        for (int d = 0; d < in->ndim; d++)
            if (mask[d])
                nred *= in->shape[d];
        bool no_identity = is_arg_reduce(op) || op == LT_OP_AMAX || op == LT_OP_AMIN;
        return nred == 0 && no_identity ? NC_CALL : NC_REDUCE;
    }
    case LT_OPC_SCAN: {
        lt_dtype dt = (lt_dtype)n->out[0].dtype;
        bool ok = (op == LT_OP_SOFTMAX || op == LT_OP_LOG_SOFTMAX) && (dt == LT_F32 || dt == LT_F64) &&
                  n->out[0].ndim > 0;
        return ok ? NC_ROW : NC_CALL;
    }
    case LT_OPC_INDEX:
        return op == LT_OP_MASKED_FILL || op == LT_OP_TRIL || op == LT_OP_TRIU || is_view_scatter(op) ? NC_EW
                                                                                                       : NC_CALL;
    default:
        return NC_CALL;
    }
}

/* Compute cost of an op evaluated inline (a rough count of flops). */
static int op_cost(const lt_gnode *n)
{
    switch ((lt_op)n->op) {
    case LT_OP_EXP: case LT_OP_LOG: case LT_OP_LOG1P: case LT_OP_EXPM1: case LT_OP_SIN: case LT_OP_COS:
    case LT_OP_TANH: case LT_OP_SIGMOID: case LT_OP_GELU: case LT_OP_SILU: case LT_OP_ERF: case LT_OP_POW:
    case LT_OP_REMAINDER:
    case LT_OP_TAN: case LT_OP_ASIN: case LT_OP_ACOS: case LT_OP_ATAN: case LT_OP_SINH: case LT_OP_COSH:
    case LT_OP_ASINH: case LT_OP_ACOSH: case LT_OP_ATANH: case LT_OP_LOG2: case LT_OP_LOG10: case LT_OP_EXP2:
    case LT_OP_SOFTPLUS: case LT_OP_MISH: case LT_OP_LOGSIGMOID: case LT_OP_ELU: case LT_OP_GELU_TANH:
    case LT_OP_ATAN2: case LT_OP_HYPOT: case LT_OP_XLOGY: case LT_OP_LOGADDEXP: case LT_OP_FMOD:
    case LT_OP_FLOOR_DIVIDE:
        return 4;
    default:
        return lt_op_infos[n->op].cls == LT_OPC_VIEW ? 0 : 1;
    }
}

/* ======================================================================= */
/* Plan storage                                                             */
/* ======================================================================= */

static bool grow(void **ptr, int *cap, int need, size_t elem)
{
    if (need <= *cap)
        return true;
    int c = *cap ? *cap : 16;
    while (c < need)
        c *= 2;
    void *q = realloc(*ptr, elem * (size_t)c);
    if (!q)
        return false;
    *ptr = q;
    *cap = c;
    return true;
}

static void kernel_free(kir_kernel *k)
{
    for (int i = 0; i < k->nexprs; i++)
        free(k->exprs[i]);
    free(k->exprs);
    free(k->ins);
    free(k->forms);
    free(k->maps);
    free(k->cse);
}

void kir_remove_kernel(kir_plan *p, int j)
{
    kernel_free(&p->k[j]);
    memmove(p->k + j, p->k + j + 1, sizeof *p->k * (size_t)(p->nk - j - 1));
    p->nk--;
    for (int b = 0; b < p->nb; b++)
        if (p->b[b].def > j)
            p->b[b].def--;
    uint32_t nvalues = p->g->nnodes * LT_MAX_OUTPUTS;
    for (uint32_t v = 0; v < nvalues; v++)
        if (p->vkernel[v] > j)
            p->vkernel[v]--;
}

/* Drops kernels, buffers and calls (the schedule is rebuilt). */
static void plan_clear(kir_plan *p)
{
    for (int i = 0; i < p->nk; i++)
        kernel_free(&p->k[i]);
    for (int i = 0; i < p->ncalls; i++)
        free(p->calls[i].in);
    p->nk = p->nb = p->ncalls = 0;
    p->nouts = 0;
    uint32_t nv = p->vbuf && p->vkernel ? p->g->nnodes * LT_MAX_OUTPUTS : 0; /* none in a loaded plan */
    for (uint32_t v = 0; v < nv; v++) {
        p->vbuf[v] = -1;
        p->vkernel[v] = -1;
    }
}

void kir_plan_free(kir_plan *p)
{
    if (!p->g)
        return;
    plan_clear(p);
    free(p->k);
    free(p->b);
    free(p->calls);
    free(p->cls);
    free(p->uses);
    free(p->mat);
    free(p->forced);
    free(p->vbuf);
    free(p->vkernel);
    free(p->root_buf);
    lt_graph_free(p->g);
    memset(p, 0, sizeof *p);
}

static lt_status oom(void) { return lt_error(LT_ERR_MEMORY, "cpu compiler: out of memory"); }

static bool is_root(const kir_plan *p, uint32_t value)
{
    for (uint32_t r = 0; r < p->g->nroots; r++)
        if (value_id(p->g->roots[r]) == value)
            return true;
    return false;
}

/* The buffer of a materialized value (created on first request). */
static int value_buffer(kir_plan *p, uint32_t value)
{
    if (p->vbuf[value] >= 0)
        return p->vbuf[value];
    if (!grow((void **)&p->b, &p->cap_b, p->nb + 1, sizeof *p->b))
        return -1;
    kir_buf *b = &p->b[p->nb];
    memset(b, 0, sizeof *b);
    const lt_gnode *n = gnode(p, value / LT_MAX_OUTPUTS);
    b->value = value;
    b->meta = *meta_of(p, value);
    b->meta.weak = 0;
    b->nbytes = (size_t)lt_shape_numel(b->meta.shape, b->meta.ndim) * lt_dtype_size((lt_dtype)b->meta.dtype);
    b->def = b->last = -1;
    b->donor = -1;
    if (n->kind == LT_NODE_DATA) {
        b->kind = KB_LEAF;
        b->slot = n->slot;
    } else if (is_root(p, value)) {
        b->kind = KB_OUT;
        b->slot = p->nouts++;
    } else {
        b->kind = KB_TMP;
        b->slot = -1;
    }
    p->vbuf[value] = p->nb;
    return p->nb++;
}

/* ======================================================================= */
/* Kernels and instructions                                                 */
/* ======================================================================= */

static kir_kernel *kernel_new(kir_plan *p, int kind, uint32_t node, const lt_meta *dom)
{
    if (!grow((void **)&p->k, &p->cap_k, p->nk + 1, sizeof *p->k))
        return NULL;
    kir_kernel *k = &p->k[p->nk++];
    memset(k, 0, sizeof *k);
    k->kind = kind;
    k->node = node;
    k->scope = -1;
    k->call = -1;
    k->row_var = k->row_input = k->row_form = k->row_buf = -1;
    if (dom) {
        k->ndom = dom->ndim;
        memcpy(k->dom, dom->shape, sizeof(int64_t) * (size_t)dom->ndim);
        k->nvars = dom->ndim;
        for (int d = 0; d < dom->ndim; d++)
            k->ext[d] = dom->shape[d];
    }
    return k;
}

static int add_form(kir_kernel *k, const kir_aff *f)
{
    if (!grow((void **)&k->forms, &k->cap_forms, k->nforms + 1, sizeof *k->forms))
        return -1;
    k->forms[k->nforms] = *f;
    return k->nforms++;
}

static int add_inst(kir_kernel *k, int kind, int32_t dtype, uint32_t node)
{
    if (!grow((void **)&k->ins, &k->cap_ins, k->nins + 1, sizeof *k->ins))
        return EV_ERROR;
    kir_inst *in = &k->ins[k->nins];
    memset(in, 0, sizeof *in);
    in->kind = (uint8_t)kind;
    in->dtype = dtype;
    in->node = node;
    in->in[0] = in->in[1] = in->in[2] = -1;
    in->buf = in->form = in->guard = -1;
    in->scope = k->scope;
    in->body_end = -1;
    return k->nins++;
}

static int cse_find(const kir_kernel *k, uint32_t value, const kir_map *m, uint64_t h)
{
    for (int i = k->ncse - 1; i >= 0; i--) {
        const kir_cse *c = &k->cse[i];
        if (c->value == value && c->hash == h && (c->scope < 0 || c->scope == k->scope) &&
            kir_map_equal(&k->maps[c->map], m))
            return c->inst;
    }
    return -1;
}

static int cse_add(kir_kernel *k, uint32_t value, const kir_map *m, uint64_t h, int inst)
{
    if (inst < 0)
        return inst;
    if (!grow((void **)&k->maps, &k->cap_maps, k->nmaps + 1, sizeof *k->maps) ||
        !grow((void **)&k->cse, &k->cap_cse, k->ncse + 1, sizeof *k->cse))
        return EV_ERROR;
    k->maps[k->nmaps] = *m;
    kir_cse c = {value, h, k->nmaps++, inst, k->ins[inst].scope};
    k->cse[k->ncse++] = c;
    return inst;
}

/* A kernel's sizes, to undo a failed attempt to add an output. */
typedef struct kernel_mark {
    int nins, nforms, nexprs, nmaps, ncse, nvars;
} kernel_mark;

static kernel_mark kernel_save(const kir_kernel *k)
{
    kernel_mark m = {k->nins, k->nforms, k->nexprs, k->nmaps, k->ncse, k->nvars};
    return m;
}

static void kernel_restore(kir_kernel *k, kernel_mark m)
{
    for (int i = m.nexprs; i < k->nexprs; i++)
        free(k->exprs[i]);
    k->nins = m.nins;
    k->nforms = m.nforms;
    k->nexprs = m.nexprs;
    k->nmaps = m.nmaps;
    k->ncse = m.ncse;
    k->nvars = m.nvars;
    k->scope = -1;
}

/* Does m visit every element of a value of shape meta exactly once as the
 * kernel's domain loops run (each dim of size > 1 one distinct domain
 * variable of the same extent)? Then a reduction there is computed once
 * per output element. */
static bool is_bijective(const kir_kernel *k, const kir_map *m, const lt_meta *meta)
{
    if (k->kind != KK_POINTWISE || m->nd != meta->ndim ||
        lt_shape_numel(meta->shape, meta->ndim) != lt_shape_numel(k->dom, k->ndom))
        return false;
    if (lt_shape_numel(meta->shape, meta->ndim) == 0)
        return true; /* no element: nothing is computed twice */
    bool used[KIR_MAXV] = {false};
    for (int d = 0; d < m->nd; d++) {
        const kir_aff *f = &m->d[d];
        if (f->expr != -1 || f->c != 0)
            return false;
        int var = -1;
        for (int v = 0; v < KIR_MAXV; v++) {
            if (f->a[v] == 0)
                continue;
            if (var >= 0 || f->a[v] != 1)
                return false;
            var = v;
        }
        if (meta->shape[d] == 1 ? var >= 0 : var < 0 || var >= k->ndom || used[var] || k->ext[var] != meta->shape[d])
            return false;
        if (var >= 0)
            used[var] = true;
    }
    return true;
}

/* ======================================================================= */
/* Lowering: a value at an index map                                        */
/* ======================================================================= */

typedef struct lower_ctx {
    kir_plan *p;
    kir_kernel *k;
    int kidx;
    bool fresh; /* the kernel was created for this output */
} lower_ctx;

static int eval(lower_ctx *c, uint32_t value, const kir_map *m, bool compute);
static uint32_t view_base(const kir_plan *p, uint32_t v);
static uint32_t reshape_source(const kir_plan *p, uint32_t v);
static bool chain_offset(const kir_plan *p, kir_kernel *k, uint32_t v, uint32_t base, const kir_map *m0,
                         kir_aff *off);

static int eval_const(lower_ctx *c, uint32_t value)
{
    kir_map none = {0};
    int i = cse_find(c->k, value, &none, 0);
    if (i >= 0)
        return i;
    int saved = c->k->scope;
    c->k->scope = -1; /* constants live at the kernel's top */
    i = add_inst(c->k, KI_CONST, LT_F64, value / LT_MAX_OUTPUTS);
    i = cse_add(c->k, value, &none, 0, i);
    c->k->scope = saved;
    return i;
}

static int eval_load(lower_ctx *c, uint32_t value, const kir_map *m)
{
    int buf = c->p->vbuf[value];
    if (buf < 0)
        return EV_ERROR;
    kir_aff off = kir_map_offset(c->k, m, &c->p->b[buf].meta);
    int f = add_form(c->k, &off);
    int i = f < 0 ? EV_ERROR : add_inst(c->k, KI_LOAD, c->p->b[buf].meta.dtype, value / LT_MAX_OUTPUTS);
    if (i >= 0) {
        c->k->ins[i].buf = buf;
        c->k->ins[i].form = f;
    }
    return i;
}

/* Elementwise ops (and masked_fill, tril/triu): operands at broadcast
 * positions; tril/triu also use the row and column positions. */
static int eval_ew(lower_ctx *c, uint32_t node, const kir_map *m)
{
    const lt_gnode *n = gnode(c->p, node);
    int ops[3] = {-1, -1, -1};
    for (uint32_t k = 0; k < n->nin && k < 3; k++) {
        uint32_t v = value_id(input_of(c->p, n, k));
        kir_map mk;
        kir_map_broadcast(meta_of(c->p, v), &n->out[0], m, &mk);
        ops[k] = eval(c, v, &mk, false);
        if (ops[k] < 0)
            return ops[k];
    }
    int first = -1, nf = 0;
    if (n->op == LT_OP_TRIL || n->op == LT_OP_TRIU) {
        first = add_form(c->k, &m->d[m->nd - 2]);
        nf = add_form(c->k, &m->d[m->nd - 1]) < 0 || first < 0 ? -1 : 2;
        if (nf < 0)
            return EV_ERROR;
    }
    int i = add_inst(c->k, KI_OP, n->out[0].dtype, node);
    if (i < 0)
        return i;
    memcpy(c->k->ins[i].in, ops, sizeof ops);
    c->k->ins[i].form = first;
    c->k->ins[i].nforms = nf;
    return i;
}

/* The source's position along the scattered dim: (pos - start) / step, an
 * opaque form (it is negative, or not whole, where the guard is false). */
static kir_aff scatter_source_pos(kir_kernel *k, const kir_aff *pos, int64_t start, int64_t step)
{
    int n = kir_aff_str(k, pos, NULL, 0);
    char *p = malloc((size_t)n + 1), *text = malloc((size_t)n + 80);
    if (p && text) {
        kir_aff_str(k, pos, p, (size_t)n + 1);
        if (step == 1)
            snprintf(text, (size_t)n + 80, "(int64_t)(%s) - %lld", p, (long long)start);
        else
            snprintf(text, (size_t)n + 80, "((int64_t)(%s) - %lld) / %lld", p, (long long)start, (long long)step);
    } else {
        free(text);
        text = NULL;
    }
    free(p);
    return kir_aff_opaque(k, text);
}

/* slice_scatter / select_scatter at m: the base at m, the source (always
 * materialized: decide_materialized) read at the matching position, and
 * an op choosing between them by the position along the dim (its form).
 * A slice's source is read under a guard, since its index is out of range
 * outside the slice. */
static int eval_view_scatter(lower_ctx *c, uint32_t node, const kir_map *m)
{
    kir_plan *p = c->p;
    const lt_gnode *n = gnode(p, node);
    uint32_t base = value_id(input_of(p, n, 0)), src = value_id(input_of(p, n, 1));
    int d = norm_dim(n->attrs.i[0], n->out[0].ndim);
    bool scalar = p->cls[src / LT_MAX_OUTPUTS] == NC_SCALAR; /* a 0-d source: a constant */
    if (!scalar && (!p->mat[src] || p->vbuf[src] < 0)) {
        lt_error(LT_ERR_STATE, "cpu compiler: the source of %s %%%u has no buffer", lt_op_name((lt_op)n->op), node);
        return EV_ERROR; /* decide_materialized gives every source a buffer */
    }
    if (!scalar && p->vkernel[src] == c->kidx)
        return EV_CONFLICT; /* this kernel's own result at another index */
    int b = eval(c, base, m, false);
    if (b < 0)
        return b;
    int pos = add_form(c->k, &m->d[d]);
    if (pos < 0)
        return EV_ERROR;
    kir_map sm;
    int64_t lo, hi, step = 1;
    if (n->op == LT_OP_SELECT_SCATTER) {
        sm.nd = 0;
        for (int e = 0; e < m->nd; e++)
            if (e != d)
                sm.d[sm.nd++] = m->d[e];
        lo = n->attrs.i[1];
        hi = lo + 1;
    } else {
        lo = n->attrs.i[1], hi = n->attrs.i[2], step = n->attrs.i[3];
        sm = *m;
        sm.d[d] = scatter_source_pos(c->k, &m->d[d], lo, step);
    }
    int s = scalar ? eval_const(c, src) : eval_load(c, src, &sm);
    if (s < 0)
        return s;
    if (!scalar && n->op == LT_OP_SLICE_SCATTER) {
        kir_inst *load = &c->k->ins[s];
        load->guard = pos;
        load->guard_lo = lo, load->guard_hi = hi, load->guard_step = step;
    }
    int i = add_inst(c->k, KI_OP, n->out[0].dtype, node);
    if (i < 0)
        return i;
    kir_inst *in = &c->k->ins[i];
    in->in[0] = b, in->in[1] = s;
    in->form = pos;
    in->nforms = 1;
    return i;
}

/* Factories: functions of the position (one form per dim). */
static int eval_factory(lower_ctx *c, uint32_t node, const kir_map *m)
{
    const lt_gnode *n = gnode(c->p, node);
    int first = c->k->nforms;
    for (int d = 0; d < m->nd; d++)
        if (add_form(c->k, &m->d[d]) < 0)
            return EV_ERROR;
    int i = add_inst(c->k, KI_OP, n->out[0].dtype, node);
    if (i >= 0) {
        c->k->ins[i].form = m->nd ? first : -1;
        c->k->ins[i].nforms = m->nd;
    }
    return i;
}

/* A reduction at its kernel's own index: a loop nest over the reduced dims
 * (new loop variables) around the input's expression. */
static int eval_reduce(lower_ctx *c, uint32_t node, uint32_t out, const kir_map *m)
{
    kir_kernel *k = c->k;
    const lt_gnode *n = gnode(c->p, node);
    if (k->scope >= 0 || !is_bijective(k, m, &n->out[0])) {
        c->p->forced[KIR_VALUE(node, 0)] = 1; /* needed elsewhere: give it its own kernel */
        return EV_RESTART;
    }
    uint32_t in_value = value_id(input_of(c->p, n, 0));
    const lt_meta *in = meta_of(c->p, in_value);
    bool mask[LT_MAX_DIMS];
    kir_reduce_mask(n, in, mask);
    int nred = 0;
    for (int d = 0; d < in->ndim; d++)
        nred += mask[d];
    if (k->nvars + nred > KIR_MAXV) {
        if (!c->fresh)
            return EV_CONFLICT;
        c->p->forced[KIR_VALUE(node, 0)] = 1;
        return EV_RESTART;
    }
    int r = add_inst(k, KI_REDUCE, n->out[0].dtype, node);
    if (r < 0)
        return r;
    /* the input's position: reduced dims are new variables, kept dims
     * follow the output position (which has size-1 dims when keepdim) */
    bool keepdim = (n->attrs.flag & 1) != 0;
    kir_map im;
    im.nd = in->ndim;
    int kept = 0, nrv = 0;
    kir_aff flat = kir_aff_const(0);
    for (int d = 0; d < in->ndim; d++) {
        if (mask[d]) {
            int v = k->nvars++;
            k->ext[v] = in->shape[d];
            im.d[d] = kir_aff_var(k, v);
            k->ins[r].rv[nrv++] = (int8_t)v;
            flat = kir_aff_madd(k, &flat, in->shape[d], &im.d[d]);
        } else {
            im.d[d] = m->d[keepdim ? d : kept];
        }
        if (!mask[d] || keepdim)
            kept++;
    }
    k->ins[r].nrv = (int8_t)nrv;
    if (is_arg_reduce((lt_op)n->op)) {
        int f = add_form(k, &flat);
        if (f < 0)
            return EV_ERROR;
        k->ins[r].form = f;
    }
    int saved = k->scope;
    k->scope = r;
    int x = eval(c, in_value, &im, false);
    k->scope = saved;
    if (x < 0)
        return x;
    k->ins[r].in[0] = x;
    k->ins[r].body_end = k->nins;
    uint64_t h = kir_map_hash(m);
    if (cse_add(k, KIR_VALUE(node, 0), m, h, r) < 0)
        return EV_ERROR;
    if (n->nout < 2)
        return r;
    int s = add_inst(k, KI_SECOND, n->out[1].dtype, node);
    if (s < 0)
        return s;
    k->ins[s].in[0] = r;
    if (cse_add(k, KIR_VALUE(node, 1), m, h, s) < 0)
        return EV_ERROR;
    return out ? s : r;
}

static int eval(lower_ctx *c, uint32_t value, const kir_map *m, bool compute)
{
    kir_plan *p = c->p;
    uint32_t node = value / LT_MAX_OUTPUTS;
    int cls = p->cls[node];
    if (cls == NC_SCALAR)
        return eval_const(c, value);
    uint64_t h = kir_map_hash(m);
    int found = cse_find(c->k, value, m, h);
    if (found >= 0)
        return found;
    if (p->mat[value] && !compute) {
        if (p->vkernel[value] == c->kidx)
            return EV_CONFLICT; /* this kernel's own result at another index */
        return cse_add(c->k, value, m, h, eval_load(c, value, m));
    }
    const lt_gnode *n = gnode(p, node);
    switch (cls) {
    case NC_VIEW: {
        /* a view of a buffer: one load at the composed offset */
        uint32_t base = view_base(p, value_id(input_of(p, n, 0)));
        if (p->mat[base] && p->vkernel[base] != c->kidx && p->cls[base / LT_MAX_OUTPUTS] != NC_SCALAR) {
            kir_aff off;
            if (chain_offset(p, c->k, value, base, m, &off)) {
                int buf = p->vbuf[base];
                int f = buf < 0 ? -1 : add_form(c->k, &off);
                int i = f < 0 ? EV_ERROR : add_inst(c->k, KI_LOAD, p->b[buf].meta.dtype, base / LT_MAX_OUTPUTS);
                if (i >= 0) {
                    c->k->ins[i].buf = buf;
                    c->k->ins[i].form = f;
                }
                return cse_add(c->k, value, m, h, i);
            }
        }
        kir_map im;
        uint32_t in = value_id(input_of(p, n, 0));
        kir_map_view(c->k, n, meta_of(p, in), m, &im);
        for (int d = 0; d < im.nd; d++) {
            if (im.d[d].expr == -1)
                continue;
            /* a reshape that index arithmetic cannot express: the value
             * below its run of reshapes gets a buffer (the reshape is then
             * a plain offset) */
            uint32_t target = reshape_source(p, in);
            if (p->mat[target] || p->forced[target])
                target = in;
            if (p->mat[target] || p->forced[target]) {
                if (!c->fresh)
                    return EV_CONFLICT;
                lt_error(LT_ERR_STATE, "cpu compiler: cannot index the reshape %%%u", node);
                return EV_ERROR;
            }
            p->forced[target] = 1;
            return EV_RESTART;
        }
        int x = eval(c, in, &im, false);
        return x < 0 ? x : cse_add(c->k, value, m, h, x);
    }
    case NC_EW:
        if (is_view_scatter((lt_op)n->op))
            return cse_add(c->k, value, m, h, eval_view_scatter(c, node, m));
        return cse_add(c->k, value, m, h, eval_ew(c, node, m));
    case NC_FACTORY:
        return cse_add(c->k, value, m, h, eval_factory(c, node, m));
    case NC_REDUCE:
        return eval_reduce(c, node, value % LT_MAX_OUTPUTS, m);
    default:
        return EV_ERROR; /* leaves, rows and calls are always materialized */
    }
}

/* Appends "buffer of value = src at the kernel's own index", storing at
 * the row-major offset of that index (src is value itself, or the input
 * of a reshape chain ending at value: the same elements in the same
 * order). */
static int lower_output(lower_ctx *c, uint32_t value, uint32_t src)
{
    kir_map id = kir_map_identity(c->k, c->k->ndom);
    int x = eval(c, src, &id, src == value);
    if (x < 0)
        return x;
    int buf = value_buffer(c->p, value);
    if (buf < 0)
        return EV_ERROR;
    kir_kernel *k = c->k; /* value_buffer does not move kernels */
    kir_aff off = kir_map_offset(k, &id, meta_of(c->p, src));
    int f = add_form(k, &off);
    int s = f < 0 ? EV_ERROR : add_inst(k, KI_STORE, c->p->b[buf].meta.dtype, value / LT_MAX_OUTPUTS);
    if (s < 0)
        return s;
    k->ins[s].buf = buf;
    k->ins[s].form = f;
    k->ins[s].in[0] = x;
    c->p->vkernel[value] = c->kidx;
    c->p->b[buf].def = c->kidx;
    return s;
}

/* ======================================================================= */
/* Materialization decisions                                                */
/* ======================================================================= */

/* Walks v's view chain down to its first materialized value or non-view
 * node. */
static uint32_t view_base(const kir_plan *p, uint32_t v)
{
    while (!p->mat[v] && p->cls[v / LT_MAX_OUTPUTS] == NC_VIEW)
        v = value_id(input_of(p, gnode(p, v / LT_MAX_OUTPUTS), 0));
    return v;
}

/*
 * Offset form of value v at position m, read through its chain of views
 * from the buffer of `base` where the chain ends. A run of reshapes that
 * reaches the buffer is one row-major offset (no index division). False
 * when a view in between cannot be written as index arithmetic.
 */
static bool chain_offset(const kir_plan *p, kir_kernel *k, uint32_t v, uint32_t base, const kir_map *m0,
                         kir_aff *off)
{
    int nexprs = k->nexprs;
    kir_map m = *m0;
    uint32_t u = v;
    bool ok = true;
    while (ok && u != base) {
        const lt_gnode *n = gnode(p, u / LT_MAX_OUTPUTS);
        uint32_t w = u;
        while (w != base && gnode(p, w / LT_MAX_OUTPUTS)->op == LT_OP_VIEW)
            w = value_id(input_of(p, gnode(p, w / LT_MAX_OUTPUTS), 0));
        if (n->op == LT_OP_VIEW && w == base) { /* reshapes of the buffer: the same offsets */
            *off = kir_map_offset(k, &m, meta_of(p, u));
            ok = off->expr == -1;
            break;
        }
        uint32_t in = value_id(input_of(p, n, 0));
        kir_map im;
        kir_map_view(k, n, meta_of(p, in), &m, &im);
        for (int d = 0; d < im.nd; d++)
            ok = ok && im.d[d].expr == -1;
        m = im;
        u = in;
        if (ok && u == base) {
            *off = kir_map_offset(k, &m, meta_of(p, base));
            ok = off->expr == -1;
        }
    }
    if (u == v && v == base)
        *off = kir_map_offset(k, &m, meta_of(p, base));
    if (!ok) { /* drop the expressions of the failed attempt */
        for (int i = nexprs; i < k->nexprs; i++)
            free(k->exprs[i]);
        k->nexprs = nexprs;
    }
    return ok;
}

/* The strides/offset (elements) of value v as a strided view of the buffer
 * of `base` at the end of its view chain, or false. */
static bool strided_view(const kir_plan *p, uint32_t v, uint32_t base, int64_t *strides, int64_t *offset)
{
    const lt_meta *vm = meta_of(p, v);
    kir_kernel scratch;
    memset(&scratch, 0, sizeof scratch);
    scratch.nvars = vm->ndim;
    for (int d = 0; d < vm->ndim; d++)
        scratch.ext[d] = vm->shape[d] > 1 ? vm->shape[d] : 1;
    kir_map m = kir_map_identity(&scratch, vm->ndim);
    kir_aff off;
    bool ok = chain_offset(p, &scratch, v, base, &m, &off);
    for (int d = 0; ok && d < vm->ndim; d++)
        strides[d] = off.a[d];
    *offset = ok ? off.c : 0;
    kernel_free(&scratch);
    return ok;
}

/* Is root value v a view, with exactly its layout, of a leaf or of another
 * root? Then its result is that buffer itself (no copy). */
static bool root_is_alias(kir_plan *p, uint32_t v)
{
    uint32_t u = v;
    while (p->cls[u / LT_MAX_OUTPUTS] == NC_VIEW) {
        u = value_id(input_of(p, gnode(p, u / LT_MAX_OUTPUTS), 0));
        if (is_root(p, u))
            break;
    }
    if (u == v)
        return p->cls[u / LT_MAX_OUTPUTS] == NC_LEAF;
    if (p->cls[u / LT_MAX_OUTPUTS] != NC_LEAF && !is_root(p, u))
        return false;
    const lt_meta *vm = meta_of(p, v), *um = meta_of(p, u);
    if (lt_shape_numel(vm->shape, vm->ndim) != lt_shape_numel(um->shape, um->ndim))
        return false;
    int64_t strides[LT_MAX_DIMS], cs[LT_MAX_DIMS], offset, s = 1;
    if (!strided_view(p, v, u, strides, &offset) || offset != 0)
        return false;
    for (int d = vm->ndim - 1; d >= 0; d--) {
        cs[d] = s;
        s *= vm->shape[d];
    }
    for (int d = 0; d < vm->ndim; d++)
        if (vm->shape[d] > 1 && strides[d] != cs[d])
            return false;
    return true;
}

/* A call reads v as a strided view of a buffer: materialize the view's
 * base, or v itself when strides cannot express the chain. */
static void mark_call_operand(kir_plan *p, uint32_t v)
{
    if (p->cls[v / LT_MAX_OUTPUTS] == NC_SCALAR)
        return; /* passed as a scalar */
    uint32_t u = v;
    while (p->cls[u / LT_MAX_OUTPUTS] == NC_VIEW)
        u = value_id(input_of(p, gnode(p, u / LT_MAX_OUTPUTS), 0));
    int64_t strides[LT_MAX_DIMS], offset;
    if (u != v && (p->cls[u / LT_MAX_OUTPUTS] == NC_SCALAR || !strided_view(p, v, u, strides, &offset)))
        u = v;
    p->mat[u] = 1;
}

static void count_uses(kir_plan *p)
{
    const lt_graph *g = p->g;
    uint32_t nv = g->nnodes * LT_MAX_OUTPUTS;
    uint32_t *last = malloc(sizeof *last * (nv ? nv : 1));
    memset(p->uses, 0, sizeof *p->uses * nv);
    for (uint32_t v = 0; last && v < nv; v++)
        last[v] = UINT32_MAX;
    for (uint32_t i = 0; last && i < g->nnodes; i++) {
        const lt_gnode *n = &g->nodes[i];
        for (uint32_t k = 0; k < n->nin; k++) {
            uint32_t v = value_id(input_of(p, n, k));
            if (last[v] != i) {
                last[v] = i;
                p->uses[v]++;
            }
        }
    }
    for (uint32_t r = 0; r < g->nroots; r++)
        p->uses[value_id(g->roots[r])]++;
    free(last);
}

/* The only consumer node of value v (uses == 1, not a root), or UINT32_MAX. */
static uint32_t sole_consumer(const kir_plan *p, uint32_t v)
{
    if (p->uses[v] != 1 || is_root(p, v))
        return UINT32_MAX;
    for (uint32_t i = v / LT_MAX_OUTPUTS + 1; i < p->g->nnodes; i++) {
        const lt_gnode *n = gnode(p, i);
        for (uint32_t k = 0; k < n->nin; k++)
            if (value_id(input_of(p, n, k)) == v)
                return i;
    }
    return UINT32_MAX;
}

/* Inline cost of each value (flops, loads, whether it holds a reduction),
 * in graph order; intermediates with several consumers that are not cheap
 * are materialized. */
static lt_status decide_recompute(kir_plan *p)
{
    uint32_t nn = p->g->nnodes;
    int *cost = calloc(nn + 1, sizeof *cost), *loads = calloc(nn + 1, sizeof *loads);
    int *size = calloc(nn + 1, sizeof *size);
    bool *red = calloc(nn + 1, sizeof *red);
    if (!cost || !loads || !red || !size) {
        free(cost), free(loads), free(red), free(size);
        return oom();
    }
    for (uint32_t i = 0; i < nn; i++) {
        int cls = p->cls[i];
        const lt_gnode *n = gnode(p, i);
        if (cls != NC_EW && cls != NC_VIEW && cls != NC_FACTORY && cls != NC_REDUCE)
            continue;
        cost[i] = op_cost(n);
        size[i] = 1;
        red[i] = cls == NC_REDUCE;
        for (uint32_t k = 0; k < n->nin; k++) {
            uint32_t v = value_id(input_of(p, n, k)), u = v / LT_MAX_OUTPUTS;
            if (p->cls[u] == NC_SCALAR)
                continue;
            if (p->mat[v]) {
                loads[i]++;
                continue;
            }
            cost[i] += cost[u];
            loads[i] += loads[u];
            red[i] = red[i] || red[u];
            size[i] += size[u];
        }
        uint32_t v = KIR_VALUE(i, 0);
        if (p->mat[v] || cls == NC_REDUCE)
            continue;
        if ((p->uses[v] > 1 && (cost[i] > RECOMPUTE_MAX_COST || loads[i] > RECOMPUTE_MAX_LOADS || red[i])) ||
            size[i] >= MAX_INLINE_NODES) {
            p->mat[v] = 1;
            size[i] = 0;
        }
    }
    free(cost), free(loads), free(red), free(size);
    return LT_OK;
}

static lt_status decide_materialized(kir_plan *p)
{
    const lt_graph *g = p->g;
    uint32_t nv = g->nnodes * LT_MAX_OUTPUTS;
    memcpy(p->mat, p->forced, nv);
    for (uint32_t i = 0; i < g->nnodes; i++) {
        const lt_gnode *n = &g->nodes[i];
        int cls = p->cls[i];
        if (cls == NC_LEAF || cls == NC_CALL || cls == NC_ROW)
            for (int o = 0; o < n->nout; o++)
                p->mat[KIR_VALUE(i, o)] = 1;
        if (cls == NC_CALL)
            for (uint32_t k = 0; k < n->nin; k++)
                mark_call_operand(p, value_id(input_of(p, n, k)));
        if (cls == NC_EW && is_view_scatter((lt_op)n->op) && p->cls[input_of(p, n, 1).node] != NC_SCALAR)
            p->mat[value_id(input_of(p, n, 1))] = 1; /* one plain load per element (eval_view_scatter) */
    }
    for (uint32_t r = 0; r < g->nroots; r++) {
        uint32_t v = value_id(g->roots[r]);
        if (!root_is_alias(p, v))
            p->mat[v] = 1;
    }
    /* A reduction runs inside its consumer's kernel only when that single
     * consumer (past reshapes and permutations of the same size) is
     * elementwise over as many elements: each result is then used once.
     * Lowering checks the index map and falls back to materializing. */
    for (uint32_t i = 0; i < g->nnodes; i++) {
        const lt_gnode *n = &g->nodes[i];
        if (p->cls[i] != NC_REDUCE)
            continue;
        int64_t numel = lt_shape_numel(n->out[0].shape, n->out[0].ndim);
        for (int o = 0; o < n->nout; o++) {
            uint32_t v = KIR_VALUE(i, o);
            if (p->mat[v] || p->uses[v] == 0)
                continue;
            uint32_t c = n->nout == 1 ? sole_consumer(p, v) : UINT32_MAX;
            while (c != UINT32_MAX && p->cls[c] == NC_VIEW && !p->mat[KIR_VALUE(c, 0)] &&
                   lt_shape_numel(gnode(p, c)->out[0].shape, gnode(p, c)->out[0].ndim) == numel)
                c = sole_consumer(p, KIR_VALUE(c, 0));
            bool inline_ok = c != UINT32_MAX && p->cls[c] == NC_EW &&
                             lt_shape_numel(gnode(p, c)->out[0].shape, gnode(p, c)->out[0].ndim) == numel;
            if (!inline_ok)
                p->mat[v] = 1;
        }
    }
    return decide_recompute(p);
}

/* ======================================================================= */
/* Kernel formation                                                         */
/* ======================================================================= */

/* Latest kernel computing a materialized value that v's inline expression
 * reads (-1 when it reads only leaves). */
static int deps_kernel(kir_plan *p, uint32_t v, uint32_t *stamp, uint32_t walk)
{
    int best = -1;
    uint32_t node = v / LT_MAX_OUTPUTS;
    if (stamp[node] == walk)
        return -1;
    stamp[node] = walk;
    const lt_gnode *n = gnode(p, node);
    for (uint32_t k = 0; k < n->nin; k++) {
        uint32_t u = value_id(input_of(p, n, k));
        int d;
        if (p->cls[u / LT_MAX_OUTPUTS] == NC_SCALAR)
            continue;
        if (p->mat[u])
            d = p->vkernel[u];
        else
            d = deps_kernel(p, u, stamp, walk);
        best = d > best ? d : best;
    }
    return best;
}

/* The value a materialized reshape copies: down its run of reshapes to
 * the first value that is not one (not yet materialized). A reshape is
 * computed over that value's own shape and stored at row-major offsets,
 * so it needs no index division. */
static uint32_t reshape_source(const kir_plan *p, uint32_t v)
{
    uint32_t u = v;
    while (p->cls[u / LT_MAX_OUTPUTS] == NC_VIEW && gnode(p, u / LT_MAX_OUTPUTS)->op == LT_OP_VIEW) {
        uint32_t in = value_id(input_of(p, gnode(p, u / LT_MAX_OUTPUTS), 0));
        if (p->mat[in] || p->cls[in / LT_MAX_OUTPUTS] == NC_SCALAR)
            break;
        u = in;
    }
    return u;
}

static int place_pointwise(kir_plan *p, uint32_t v, uint32_t *stamp, uint32_t walk)
{
    uint32_t src = reshape_source(p, v);
    const lt_meta *dom = meta_of(p, src);
    int dep = deps_kernel(p, v, stamp, walk);
    for (int j = p->nk - 1; j >= 0 && j >= dep; j--) {
        kir_kernel *k = &p->k[j];
        if (k->kind != KK_POINTWISE || !lt_shape_equal(k->dom, k->ndom, dom->shape, dom->ndim))
            continue;
        if (k->nins >= KERNEL_MAX_INS)
            break; /* full */
        kernel_mark mark = kernel_save(k);
        lower_ctx c = {p, k, j, false};
        int r = lower_output(&c, v, src);
        if (r >= 0 || r == EV_RESTART || r == EV_ERROR)
            return r;
        kernel_restore(&p->k[j], mark);
        break; /* only the latest candidate is tried */
    }
    kir_kernel *k = kernel_new(p, KK_POINTWISE, v / LT_MAX_OUTPUTS, dom);
    if (!k)
        return EV_ERROR;
    lower_ctx c = {p, k, p->nk - 1, true};
    int r = lower_output(&c, v, src);
    return r == EV_CONFLICT ? EV_ERROR : r;
}

static int place_row(kir_plan *p, uint32_t node)
{
    const lt_gnode *n = gnode(p, node);
    uint32_t in = value_id(input_of(p, n, 0));
    kir_kernel *k = kernel_new(p, KK_ROW, node, &n->out[0]);
    if (!k)
        return EV_ERROR;
    k->ndom = 0; /* rows are not a pointwise domain: no reduction runs inline here */
    k->row_var = norm_dim(n->attrs.i[0], n->out[0].ndim);
    lower_ctx c = {p, k, p->nk - 1, true};
    kir_map id = kir_map_identity(k, n->out[0].ndim);
    int x = eval(&c, in, &id, false);
    if (x < 0)
        return x == EV_CONFLICT ? EV_ERROR : x;
    int buf = value_buffer(p, KIR_VALUE(node, 0));
    if (buf < 0)
        return EV_ERROR;
    k = &p->k[p->nk - 1];
    kir_aff off = kir_map_offset(k, &id, &p->b[buf].meta);
    int f = add_form(k, &off);
    if (f < 0)
        return EV_ERROR;
    k->row_input = x;
    k->row_buf = buf;
    k->row_form = f;
    p->vkernel[KIR_VALUE(node, 0)] = p->nk - 1;
    p->b[buf].def = p->nk - 1;
    return 0;
}

static int place_call(kir_plan *p, uint32_t node)
{
    const lt_gnode *n = gnode(p, node);
    if (!grow((void **)&p->calls, &p->cap_calls, p->ncalls + 1, sizeof *p->calls))
        return EV_ERROR;
    kir_call *call = &p->calls[p->ncalls];
    memset(call, 0, sizeof *call);
    call->node = node;
    call->acc_buf = -1;
    call->alpha_slot = -1;
    call->in = calloc(n->nin + 1, sizeof *call->in);
    if (!call->in)
        return EV_ERROR;
    p->ncalls++;
    call->nin = (int)n->nin;
    for (uint32_t k = 0; k < n->nin; k++) {
        uint32_t v = value_id(input_of(p, n, k));
        kir_arg *a = &call->in[k];
        a->meta = *meta_of(p, v);
        const lt_gnode *src = gnode(p, v / LT_MAX_OUTPUTS);
        if (src->kind == LT_NODE_SCALAR) {
            a->scalar = true;
            a->slot = src->slot;
            a->value = src->scalar;
            a->buf = -1;
            continue;
        }
        uint32_t base = view_base(p, v);
        a->buf = p->vbuf[base];
        if (a->buf < 0 || !strided_view(p, v, base, a->strides, &a->offset))
            return EV_ERROR;
    }
    kir_kernel *k = kernel_new(p, KK_CALL, node, NULL);
    if (!k)
        return EV_ERROR;
    k->call = p->ncalls - 1;
    call->nout = n->nout;
    for (int o = 0; o < n->nout; o++) {
        int buf = value_buffer(p, KIR_VALUE(node, o));
        if (buf < 0)
            return EV_ERROR;
        call->out[o] = buf;
        p->b[buf].def = p->nk - 1;
        p->vkernel[KIR_VALUE(node, o)] = p->nk - 1;
    }
    return 0;
}

/* Every leaf gets its buffer, in slot order (one pass over the nodes, not
 * one per leaf: a graph of many leaves stays linear). */
static int leaf_buffers(kir_plan *p)
{
    const lt_graph *g = p->g;
    uint32_t *node_of = malloc(sizeof *node_of * (g->nleaves + 1));
    if (!node_of)
        return EV_ERROR;
    for (uint32_t slot = 0; slot < g->nleaves; slot++)
        node_of[slot] = UINT32_MAX;
    for (uint32_t i = 0; i < g->nnodes; i++)
        if (g->nodes[i].kind == LT_NODE_DATA && g->nodes[i].slot >= 0 && (uint32_t)g->nodes[i].slot < g->nleaves)
            node_of[g->nodes[i].slot] = i;
    int r = 0;
    for (uint32_t slot = 0; slot < g->nleaves && r >= 0; slot++)
        if (node_of[slot] != UINT32_MAX && value_buffer(p, KIR_VALUE(node_of[slot], 0)) < 0)
            r = EV_ERROR;
    free(node_of);
    return r;
}

/* One pass of kernel formation; EV_RESTART when a reduction had to be
 * materialized after all. */
static int form_kernels(kir_plan *p)
{
    const lt_graph *g = p->g;
    uint32_t *stamp = calloc(g->nnodes + 1, sizeof *stamp), walk = 0;
    if (!stamp)
        return EV_ERROR;
    if (leaf_buffers(p) < 0) {
        free(stamp);
        return EV_ERROR;
    }
    int r = 0;
    for (uint32_t i = 0; i < g->nnodes && r >= 0; i++) {
        const lt_gnode *n = &g->nodes[i];
        int cls = p->cls[i];
        if (cls == NC_LEAF)
            continue;
        if (cls == NC_CALL) {
            r = place_call(p, i);
            continue;
        }
        if (cls == NC_ROW) {
            r = place_row(p, i);
            continue;
        }
        for (int o = 0; o < n->nout && r >= 0; o++) {
            uint32_t v = KIR_VALUE(i, o);
            if (p->mat[v] && p->vkernel[v] < 0)
                r = place_pointwise(p, v, stamp, ++walk);
        }
    }
    free(stamp);
    return r;
}

/* ======================================================================= */
/* Loop coalescing                                                          */
/* ======================================================================= */

/* Merges adjacent loops (outer u, inner w) when every index form of the
 * kernel sees them as one: a[u] == a[w] * ext[w]. Drops extent-1 loops;
 * an extent-0 loop stays (or absorbs its neighbours), so a nest over no
 * element runs no iteration. */
static int merge_loops(kir_kernel *k, int8_t *vars, int n)
{
    int m = 0;
    for (int i = 0; i < n; i++)
        if (k->ext[vars[i]] != 1)
            vars[m++] = vars[i];
    if (k->nexprs > 0)
        return m; /* opaque expressions name the variables: keep them */
    for (int i = m - 1; i > 0; i--) {
        int u = vars[i - 1], w = vars[i];
        bool ok = true;
        for (int f = 0; ok && f < k->nforms; f++)
            ok = k->forms[f].a[u] == k->forms[f].a[w] * k->ext[w];
        if (!ok)
            continue;
        k->ext[w] *= k->ext[u];
        for (int f = 0; f < k->nforms; f++)
            k->forms[f].a[u] = 0;
        k->ext[u] = 1;
        memmove(vars + i - 1, vars + i, sizeof *vars * (size_t)(m - i));
        m--;
    }
    return m;
}

/* Coalesces a loop nest; a nest with an extent-0 loop runs no iteration
 * at all, so that loop goes outermost: the loops around it (which may be
 * long) never start. */
static int coalesce(kir_kernel *k, int8_t *vars, int n)
{
    int m = merge_loops(k, vars, n);
    for (int i = 1; i < m; i++) {
        if (k->ext[vars[i]] == 0) {
            int8_t v = vars[i];
            memmove(vars + 1, vars, sizeof *vars * (size_t)i);
            vars[0] = v;
            break;
        }
    }
    return m;
}

static void coalesce_kernel(kir_kernel *k)
{
    if (k->kind == KK_CALL)
        return;
    int nd = k->kind == KK_ROW ? k->nvars : k->ndom, n = 0;
    for (int d = 0; d < nd; d++)
        if (d != k->row_var || k->kind != KK_ROW)
            k->loop[n++] = (int8_t)d;
    /* reductions first: their variables never merge with the domain's */
    for (int i = 0; i < k->nins; i++)
        if (k->ins[i].kind == KI_REDUCE)
            k->ins[i].nrv = (int8_t)coalesce(k, k->ins[i].rv, k->ins[i].nrv);
    k->nloop = coalesce(k, k->loop, n);
}

/* ======================================================================= */
/* Entry point                                                              */
/* ======================================================================= */

static lt_status plan_alloc(kir_plan *p, const lt_graph *g)
{
    memset(p, 0, sizeof *p);
    p->g = lt_graph_copy(g);
    uint32_t nn = g->nnodes ? g->nnodes : 1, nv = nn * LT_MAX_OUTPUTS;
    p->cls = calloc(nn, 1);
    p->uses = calloc(nv, sizeof *p->uses);
    p->mat = calloc(nv, 1);
    p->forced = calloc(nv, 1);
    p->vbuf = malloc(sizeof *p->vbuf * nv);
    p->vkernel = malloc(sizeof *p->vkernel * nv);
    p->root_buf = calloc(g->nroots + 1, sizeof *p->root_buf);
    if (!p->g || !p->cls || !p->uses || !p->mat || !p->forced || !p->vbuf || !p->vkernel || !p->root_buf) {
        if (!p->g) /* kir_plan_free needs the graph to know the plan exists */
            p->g = calloc(1, sizeof *p->g);
        kir_plan_free(p);
        return oom();
    }
    for (uint32_t v = 0; v < nv; v++)
        p->vbuf[v] = p->vkernel[v] = -1;
    return LT_OK;
}

/* Roots' buffers: their own output buffer, or the leaf they alias. */
static lt_status assign_roots(kir_plan *p)
{
    for (uint32_t r = 0; r < p->g->nroots; r++) {
        uint32_t v = value_id(p->g->roots[r]);
        /* a view with the exact layout of a leaf or another root
         * (root_is_alias): its buffer is that one's, found down the chain
         * past any temporary a view in between was materialized into
         * (the workspace is reused, so a root must never point there) */
        while (p->cls[v / LT_MAX_OUTPUTS] == NC_VIEW && (p->vbuf[v] < 0 || p->b[p->vbuf[v]].kind == KB_TMP))
            v = value_id(input_of(p, gnode(p, v / LT_MAX_OUTPUTS), 0));
        p->root_buf[r] = p->vbuf[v];
        if (p->root_buf[r] < 0)
            return lt_error(LT_ERR_STATE, "cpu compiler: root %u has no buffer", r);
        if (p->b[p->root_buf[r]].kind == KB_LEAF)
            p->b[p->root_buf[r]].aliased = true;
    }
    return LT_OK;
}

lt_status kir_schedule(kir_plan *p, const lt_graph *g)
{
    lt_status st = plan_alloc(p, g);
    if (st != LT_OK)
        return st;
    for (uint32_t i = 0; i < g->nnodes; i++)
        p->cls[i] = (uint8_t)classify(p, &g->nodes[i]);
    count_uses(p);
    for (uint32_t attempt = 0; attempt <= g->nnodes + 1; attempt++) {
        plan_clear(p);
        st = decide_materialized(p);
        if (st != LT_OK)
            break;
        int r = form_kernels(p);
        if (r == EV_RESTART)
            continue;
        if (r < 0) {
            st = r == EV_ERROR && lt_error_pending() ? lt_last_status() : oom();
            break;
        }
        for (int k = 0; k < p->nk; k++)
            coalesce_kernel(&p->k[k]);
        p->nfused_gemm = kir_fuse_gemm_updates(p);
        st = assign_roots(p);
        if (st == LT_OK) {
            for (int k = 0; k < p->nk; k++) {
                p->npointwise += p->k[k].kind == KK_POINTWISE;
                p->nrow += p->k[k].kind == KK_ROW;
            }
            return LT_OK;
        }
        break;
    }
    if (st == LT_OK)
        st = lt_error(LT_ERR_STATE, "cpu compiler: the schedule did not converge");
    kir_plan_free(p);
    return st;
}
