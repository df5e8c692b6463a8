/* plan_graphs.h - small lazy graphs and plan-entry helpers shared by
 * tests/test_plan_cache.c and fuzz/fuzz_plan.c: a graph with an eager
 * call, a fused pointwise kernel, a runtime scalar and a leaf handed back
 * as a root; a graph whose update folds into one gemm; an entry's
 * checksum rewritten after a change; and what a decoded plan promises the
 * cpu backend. Static functions: each includer gets its own copy. */
#ifndef LT_TESTS_PLAN_GRAPHS_H
#define LT_TESTS_PLAN_GRAPHS_H

#include "compiler/cc_internal.h"
#include "compiler/plan_cache.h"
#include "lazy/lazy.h"

#include <string.h>

typedef struct small_graph {
    lt_gnode nodes[8];
    lt_gvalue inputs[8];
    lt_gvalue roots[2];
    lt_graph g;
} small_graph;

static inline uint32_t add_node(small_graph *s, uint8_t kind, lt_op op, const lt_meta *out, int nin, const uint32_t *in)
{
    lt_gnode *n = &s->nodes[s->g.nnodes];
    memset(n, 0, sizeof *n);
    n->kind = kind;
    n->op = (uint16_t)op;
    n->nout = 1;
    n->out[0] = *out;
    n->attrs = lt_attrs_init();
    for (int k = 0; k < LT_ATTR_FLOATS; k++)
        n->attr_param[k] = -1;
    n->slot = -1;
    n->nin = (uint32_t)nin;
    n->first_input = s->g.ninputs;
    for (int k = 0; k < nin; k++)
        s->inputs[s->g.ninputs++] = (lt_gvalue){in[k], 0};
    return s->g.nnodes++;
}

/* leaves a f32[4,3], b f32[3,2], c f32[4,2], scalar parameter s;
 * roots: relu((a @ b) * s) * c and a itself. */
static inline void make_graph(small_graph *s, int64_t rows)
{
    memset(s, 0, sizeof *s);
    s->g.nodes = s->nodes;
    s->g.inputs = s->inputs;
    s->g.roots = s->roots;
    int64_t sa[] = {rows, 3}, sb[] = {3, 2}, sc[] = {rows, 2};
    lt_meta ma = lt_meta_make(LT_F32, sa, 2), mb = lt_meta_make(LT_F32, sb, 2), mc = lt_meta_make(LT_F32, sc, 2);
    lt_meta ms = lt_meta_make(LT_F64, NULL, 0);
    ms.weak = 1;
    uint32_t a = add_node(s, LT_NODE_DATA, 0, &ma, 0, NULL);
    s->nodes[a].slot = 0;
    uint32_t b = add_node(s, LT_NODE_DATA, 0, &mb, 0, NULL);
    s->nodes[b].slot = 1;
    uint32_t c = add_node(s, LT_NODE_DATA, 0, &mc, 0, NULL);
    s->nodes[c].slot = 2;
    uint32_t sc_node = add_node(s, LT_NODE_SCALAR, 0, &ms, 0, NULL);
    s->nodes[sc_node].slot = 0;
    uint32_t in_mm[] = {a, b};
    uint32_t mm = add_node(s, LT_NODE_OP, LT_OP_MATMUL, &mc, 2, in_mm);
    uint32_t in_scale[] = {mm, sc_node};
    uint32_t scaled = add_node(s, LT_NODE_OP, LT_OP_MUL, &mc, 2, in_scale);
    uint32_t relu = add_node(s, LT_NODE_OP, LT_OP_RELU, &mc, 1, &scaled);
    uint32_t in_out[] = {relu, c};
    uint32_t out = add_node(s, LT_NODE_OP, LT_OP_MUL, &mc, 2, in_out);
    s->roots[0] = (lt_gvalue){out, 0};
    s->roots[1] = (lt_gvalue){a, 0};
    s->g.nroots = 2;
    s->g.nleaves = 3;
    s->g.nscalars = 1;
}

/* leaves w f32[rows,2], a f32[rows,3], b f32[3,2], scalar parameter lr;
 * root: w - lr * (a @ b), which the schedule folds into one gemm update. */
static inline void make_fused_graph(small_graph *s, int64_t rows)
{
    memset(s, 0, sizeof *s);
    s->g.nodes = s->nodes;
    s->g.inputs = s->inputs;
    s->g.roots = s->roots;
    int64_t sw[] = {rows, 2}, sa[] = {rows, 3}, sb[] = {3, 2};
    lt_meta mw = lt_meta_make(LT_F32, sw, 2), ma = lt_meta_make(LT_F32, sa, 2), mb = lt_meta_make(LT_F32, sb, 2);
    uint32_t w = add_node(s, LT_NODE_DATA, 0, &mw, 0, NULL);
    s->nodes[w].slot = 0;
    uint32_t a = add_node(s, LT_NODE_DATA, 0, &ma, 0, NULL);
    s->nodes[a].slot = 1;
    uint32_t b = add_node(s, LT_NODE_DATA, 0, &mb, 0, NULL);
    s->nodes[b].slot = 2;
    uint32_t in_mm[] = {a, b};
    uint32_t mm = add_node(s, LT_NODE_OP, LT_OP_MATMUL, &mw, 2, in_mm);
    uint32_t in_upd[] = {w, mm};
    uint32_t upd = add_node(s, LT_NODE_OP, LT_OP_SUB, &mw, 2, in_upd);
    s->nodes[upd].attrs.nf = 1;
    s->nodes[upd].attrs.f[0] = 0.05;
    s->nodes[upd].attr_param[0] = 0;
    s->roots[0] = (lt_gvalue){upd, 0};
    s->g.nroots = 1;
    s->g.nleaves = 3;
    s->g.nscalars = 1;
}

/* Rewrites the checksum of an entry (header: magic, length, sum, keys). */
static inline void plan_reseal(unsigned char *bytes, size_t len)
{
    uint64_t sum[2];
    lt_ir_hash_init(sum);
    cc_hash_bytes(sum, bytes + 32, 32);       /* entry key, object key */
    cc_hash_bytes(sum, bytes + 64, len - 64); /* body */
    memcpy(bytes + 16, sum, sizeof sum);
}

/* Everything a decoded plan promises the cpu backend. */
static inline bool plan_in_range(const kir_plan *p, const lt_graph *g)
{
    for (int b = 0; b < p->nb; b++) {
        const kir_buf *buf = &p->b[b];
        if (buf->kind != KB_LEAF && buf->kind != KB_OUT && buf->kind != KB_TMP)
            return false;
        if (buf->kind == KB_LEAF && !(buf->slot >= 0 && (uint32_t)buf->slot < g->nleaves))
            return false;
        if (buf->kind == KB_TMP && !(buf->offset >= 0 && buf->offset + (int64_t)buf->nbytes <= p->ws_size))
            return false;
        if (!(buf->donor >= -1 && buf->donor < (int32_t)g->nleaves))
            return false;
    }
    for (uint32_t r = 0; r < g->nroots; r++)
        if (!(p->root_buf[r] >= 0 && p->root_buf[r] < p->nb))
            return false;
    for (int c = 0; c < p->ncalls; c++) {
        const kir_call *call = &p->calls[c];
        if (call->node >= g->nnodes)
            return false;
        for (int k = 0; k < call->nin; k++)
            if (!call->in[k].scalar && !(call->in[k].buf >= 0 && call->in[k].buf < p->nb))
                return false;
        for (int o = 0; o < call->nout; o++)
            if (!(call->out[o] >= 0 && call->out[o] < p->nb))
                return false;
        if (call->acc_buf >= 0) { /* a fused update copies acc into out, then runs the gemm */
            if (call->acc_buf >= p->nb || call->acc_buf == call->out[0] ||
                p->b[call->acc_buf].nbytes != p->b[call->out[0]].nbytes || call->in[0].buf == call->acc_buf ||
                call->in[1].buf == call->acc_buf)
                return false;
        }
    }
    return true;
}

#endif
