/*
 * dump.c - IR dumps: the paper's text form and Graphviz DOT.
 *
 *   IR {
 *     %0 = f32[2,4] device_data()
 *     %1 = f32[2,4] device_data()
 *     %2 = f32[2,4] mul(%0, %1)
 *     %3 = f32[2,4] add(%2, %1), ROOT=0
 *   }
 */
#include "lazy/graph.h"

#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

void lt_text_put(lt_text *o, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    bool room = o->buf && o->used < o->cap;
    int w = vsnprintf(room ? o->buf + o->used : NULL, room ? o->cap - o->used : 0, fmt, ap);
    va_end(ap);
    if (w > 0)
        o->used += (size_t)w;
}

static void put_meta(lt_text *o, const lt_meta *m)
{
    lt_text_put(o, "%s[", lt_dtype_name((lt_dtype)m->dtype));
    for (int d = 0; d < m->ndim; d++)
        lt_text_put(o, d ? ",%lld" : "%lld", (long long)m->shape[d]);
    lt_text_put(o, "]");
}

static const char *node_name(const lt_gnode *n)
{
    if (n->kind == LT_NODE_DATA)
        return "device_data";
    if (n->kind == LT_NODE_SCALAR)
        return "scalar";
    return lt_op_name((lt_op)n->op);
}

static void put_attrs(lt_text *o, const lt_gnode *n, const double *scalars)
{
    const lt_attrs *a = &n->attrs;
    if (n->kind == LT_NODE_SCALAR) {
        if (n->slot < 0)
            lt_text_put(o, ", value=%g", n->scalar);
        else
            lt_text_put(o, ", param=%d, value=%g", n->slot, scalars ? scalars[n->slot] : 0.0);
        return;
    }
    if (n->kind != LT_NODE_OP)
        return;
    if (a->ni) {
        lt_text_put(o, ", %s=(", n->op == LT_OP_PERMUTE ? "dims" : n->op == LT_OP_VIEW || n->op == LT_OP_EXPAND ? "size" : "i");
        for (int k = 0; k < a->ni; k++)
            lt_text_put(o, k ? ", %lld" : "%lld", (long long)a->i[k]);
        lt_text_put(o, ")");
    }
    for (int k = 0; k < a->nf; k++) {
        if (n->attr_param[k] >= 0)
            lt_text_put(o, ", f%d=param%d", k, n->attr_param[k]);
        else
            lt_text_put(o, ", f%d=%g", k, a->f[k]);
    }
    if (a->dtype >= 0)
        lt_text_put(o, ", dtype=%s", lt_dtype_name((lt_dtype)a->dtype));
    if (a->flag)
        lt_text_put(o, ", flag=%d", a->flag);
}

int lt_graph_text(const lt_graph *g, const double *scalars, char *buf, size_t cap)
{
    lt_text o = {buf, cap, 0};
    if (buf && cap)
        buf[0] = '\0';
    lt_text_put(&o, "IR {\n");
    for (uint32_t i = 0; i < g->nnodes; i++) {
        const lt_gnode *n = &g->nodes[i];
        lt_text_put(&o, "  %%%u = ", i);
        if (n->nout > 1)
            lt_text_put(&o, "(");
        for (int k = 0; k < n->nout; k++) {
            if (k)
                lt_text_put(&o, ", ");
            put_meta(&o, &n->out[k]);
        }
        lt_text_put(&o, n->nout > 1 ? ") %s(" : " %s(", node_name(n));
        for (uint32_t k = 0; k < n->nin; k++) {
            lt_gvalue v = g->inputs[n->first_input + k];
            const lt_gnode *src = &g->nodes[v.node];
            lt_text_put(&o, src->nout > 1 ? "%s%%%u.%u" : "%s%%%u", k ? ", " : "", v.node, v.out);
        }
        lt_text_put(&o, ")");
        put_attrs(&o, n, scalars);
        for (uint32_t r = 0; r < g->nroots; r++)
            if (g->roots[r].node == i)
                lt_text_put(&o, g->nodes[i].nout > 1 ? ", ROOT=%u(.%u)" : ", ROOT=%u", r, g->roots[r].out);
        lt_text_put(&o, "\n");
    }
    lt_text_put(&o, "}\n");
    return (int)o.used;
}

int lt_graph_dot(const lt_graph *g, const double *scalars, char *buf, size_t cap)
{
    (void)scalars;
    lt_text o = {buf, cap, 0};
    if (buf && cap)
        buf[0] = '\0';
    lt_text_put(&o, "digraph IR {\n  node [shape=box, fontname=monospace];\n");
    for (uint32_t i = 0; i < g->nnodes; i++) {
        const lt_gnode *n = &g->nodes[i];
        lt_text_put(&o, "  n%u [label=\"%%%u = %s\\n", i, i, node_name(n));
        put_meta(&o, &n->out[0]);
        lt_text_put(&o, "\"%s];\n", n->kind == LT_NODE_DATA ? ", style=filled, fillcolor=lightgrey" : "");
        for (uint32_t k = 0; k < n->nin; k++)
            lt_text_put(&o, "  n%u -> n%u;\n", g->inputs[n->first_input + k].node, i);
    }
    for (uint32_t r = 0; r < g->nroots; r++)
        lt_text_put(&o, "  root%u [label=\"ROOT=%u\", shape=ellipse];\n  n%u -> root%u;\n", r, r, g->roots[r].node, r);
    lt_text_put(&o, "}\n");
    return (int)o.used;
}

/* Builds the graph behind ts and formats it with fmt. */
static int ir_dump(lt_tensor *const *ts, int n, char *buf, size_t cap,
                   int (*fmt)(const lt_graph *, const double *, char *, size_t))
{
    if (n < 0 || (n > 0 && !ts))
        return lt_error(LT_ERR_NULL, "ir_text: the tensor list is NULL"), -1;
    lt_value *vals = malloc(sizeof *vals * (size_t)(n ? n : 1));
    if (!vals)
        return lt_error(LT_ERR_MEMORY, "ir_text: out of memory"), -1;
    lt_status st = LT_OK;
    for (int i = 0; i < n && st == LT_OK; i++) {
        st = lt_check_tensor("ir_text", ts[i], i);
        if (st == LT_OK && ts[i]->device.kind != LT_DEVICE_LAZY)
            st = lt_error(LT_ERR_DEVICE, "ir_text: argument %d is not a lazy tensor", i);
        if (st == LT_OK)
            st = lt_lazy_value_of(ts[i], &vals[i]);
    }
    int len = -1;
    lt_gbuild b;
    if (st == LT_OK && lt_gbuild_run(&b, vals, (uint32_t)n) == LT_OK) {
        len = fmt(&b.g, b.scalars, buf, cap);
        lt_gbuild_free(&b);
    }
    free(vals);
    return len;
}

int lt_ir_text(lt_tensor *const *ts, int n, char *buf, size_t cap) { return ir_dump(ts, n, buf, cap, lt_graph_text); }

int lt_ir_dot(lt_tensor *const *ts, int n, char *buf, size_t cap) { return ir_dump(ts, n, buf, cap, lt_graph_dot); }
