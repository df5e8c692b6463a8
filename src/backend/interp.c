/*
 * interp.c - the interp backend: executes a canonical graph node by node
 * with the eager kernels. It is the reference for every other backend and
 * the fallback when no compiler works.
 *
 * Memory: an intermediate is released right after its last use, and at a
 * step barrier a donatable input buffer is reused for a root output of the
 * same size once nothing later reads the input.
 */
#include "backend/backend.h"
#include "eager/eager.h"
#include "lazy/lazy.h"

#include <stdlib.h>
#include <string.h>

lt_graph *lt_graph_copy(const lt_graph *g)
{
    lt_graph *c = calloc(1, sizeof *c);
    if (!c)
        return NULL;
    *c = *g;
    c->nodes = malloc(sizeof *c->nodes * (g->nnodes ? g->nnodes : 1));
    c->inputs = malloc(sizeof *c->inputs * (g->ninputs ? g->ninputs : 1));
    c->roots = malloc(sizeof *c->roots * (g->nroots ? g->nroots : 1));
    if (!c->nodes || !c->inputs || !c->roots) {
        lt_graph_free(c);
        return NULL;
    }
    if (g->nnodes) /* empty arrays may be NULL in the source */
        memcpy(c->nodes, g->nodes, sizeof *c->nodes * g->nnodes);
    if (g->ninputs)
        memcpy(c->inputs, g->inputs, sizeof *c->inputs * g->ninputs);
    if (g->nroots)
        memcpy(c->roots, g->roots, sizeof *c->roots * g->nroots);
    return c;
}

void lt_graph_free(lt_graph *g)
{
    if (!g)
        return;
    free(g->nodes);
    free(g->inputs);
    free(g->roots);
    free(g);
}

/* The executable: the graph plus, per node, the index of its last use. */
typedef struct interp_exe {
    lt_graph *g;
    uint32_t *last_use;  /* per node: last consumer node index (or nnodes for roots) */
    int32_t *donor_leaf; /* per node: leaf slot whose buffer it may take, -1 */
} interp_exe;

static bool is_root(const lt_graph *g, uint32_t node)
{
    for (uint32_t r = 0; r < g->nroots; r++)
        if (g->roots[r].node == node)
            return true;
    return false;
}

/* Leaves read by a view-class node alias it, so they are never donated. */
static void plan_donation(interp_exe *e)
{
    const lt_graph *g = e->g;
    bool *aliased = calloc(g->nleaves + 1, sizeof *aliased);
    bool *taken = calloc(g->nleaves + 1, sizeof *taken);
    for (uint32_t i = 0; i < g->nnodes; i++) {
        e->donor_leaf[i] = -1;
        const lt_gnode *n = &g->nodes[i];
        if (n->kind != LT_NODE_OP || lt_op_infos[n->op].cls != LT_OPC_VIEW)
            continue;
        for (uint32_t k = 0; k < n->nin; k++) {
            const lt_gnode *src = &g->nodes[g->inputs[n->first_input + k].node];
            if (src->kind == LT_NODE_DATA)
                aliased[src->slot] = true;
        }
    }
    for (uint32_t i = 0; aliased && taken && i < g->nnodes; i++) {
        const lt_gnode *n = &g->nodes[i];
        int cls = n->kind == LT_NODE_OP ? lt_op_infos[n->op].cls : -1;
        if (n->kind != LT_NODE_OP || n->nout != 1 || cls == LT_OPC_VIEW || cls == LT_OPC_DATADEP ||
            !is_root(g, i))
            continue;
        size_t bytes = (size_t)lt_shape_numel(n->out[0].shape, n->out[0].ndim) *
                       lt_dtype_size((lt_dtype)n->out[0].dtype);
        for (uint32_t j = 0; j < g->nnodes; j++) {
            const lt_gnode *leaf = &g->nodes[j];
            if (leaf->kind != LT_NODE_DATA || aliased[leaf->slot] || taken[leaf->slot] ||
                e->last_use[j] > i)
                continue;
            /* read and written by the same node: only an elementwise op over
             * the same shape reads each element before writing it */
            bool elementwise = cls == LT_OPC_UNARY || cls == LT_OPC_BINARY || cls == LT_OPC_TERNARY;
            if (e->last_use[j] == i &&
                (!elementwise || !lt_shape_equal(leaf->out[0].shape, leaf->out[0].ndim, n->out[0].shape,
                                                 n->out[0].ndim)))
                continue;
            size_t leaf_bytes = (size_t)lt_shape_numel(leaf->out[0].shape, leaf->out[0].ndim) *
                                lt_dtype_size((lt_dtype)leaf->out[0].dtype);
            if (leaf_bytes == bytes && bytes > 0) {
                e->donor_leaf[i] = leaf->slot;
                taken[leaf->slot] = true;
                break;
            }
        }
    }
    free(aliased);
    free(taken);
}

static void *interp_compile(const lt_graph *g)
{
    interp_exe *e = calloc(1, sizeof *e);
    if (!e)
        return NULL;
    e->g = lt_graph_copy(g);
    e->last_use = calloc(g->nnodes + 1, sizeof *e->last_use);
    e->donor_leaf = calloc(g->nnodes + 1, sizeof *e->donor_leaf);
    if (!e->g || !e->last_use || !e->donor_leaf) {
        lt_graph_free(e->g);
        free(e->last_use);
        free(e->donor_leaf);
        free(e);
        return NULL;
    }
    for (uint32_t i = 0; i < g->nnodes; i++) {
        const lt_gnode *n = &g->nodes[i];
        for (uint32_t k = 0; k < n->nin; k++)
            e->last_use[g->inputs[n->first_input + k].node] = i;
    }
    for (uint32_t r = 0; r < g->nroots; r++)
        e->last_use[g->roots[r].node] = g->nnodes; /* roots live to the end */
    plan_donation(e);
    return e;
}

static void interp_release(void *exe)
{
    interp_exe *e = exe;
    if (!e)
        return;
    lt_graph_free(e->g);
    free(e->last_use);
    free(e->donor_leaf);
    free(e);
}

/* A CPU handle viewing storage s with meta m (contiguous). */
static lt_tensor *handle_on(lt_storage *s, const lt_meta *m)
{
    lt_tensor *t = lt_tensor_new_handle(m, lt_device_cpu());
    if (!t)
        return NULL;
    t->storage = s;
    atomic_fetch_add(&s->refcount, 1);
    return t;
}

static lt_status run_node(const interp_exe *e, uint32_t i, lt_tensor *(*vals)[LT_MAX_OUTPUTS],
                          lt_exec_args *args)
{
    const lt_graph *g = e->g;
    const lt_gnode *n = &g->nodes[i];
    if (n->kind == LT_NODE_DATA) {
        vals[i][0] = handle_on(args->leaves[n->slot], &n->out[0]);
        return vals[i][0] ? LT_OK : lt_last_status();
    }
    if (n->kind == LT_NODE_SCALAR) {
        lt_tensor *t = lt_tensor_alloc(&n->out[0], lt_device_cpu(), "scalar");
        if (!t)
            return lt_last_status();
        t->weak = 1;
        *(double *)lt_tensor_ptr(t) = n->slot >= 0 ? args->scalars[n->slot] : n->scalar;
        vals[i][0] = t;
        return LT_OK;
    }
    lt_attrs a = n->attrs;
    for (int k = 0; k < a.nf; k++)
        if (n->attr_param[k] >= 0)
            a.f[k] = args->scalars[n->attr_param[k]];
    lt_tensor *small[8], **in = n->nin <= 8 ? small : malloc(sizeof *in * n->nin);
    if (!in)
        return lt_error(LT_ERR_MEMORY, "interp: out of memory");
    for (uint32_t k = 0; k < n->nin; k++) {
        lt_gvalue v = g->inputs[n->first_input + k];
        in[k] = vals[v.node][v.out];
    }
    /* In the graph a view op is a pure function of its input's values, so a
     * VIEW of a value whose strides cannot express it is a reshape. */
    lt_tensor *reshaped = NULL;
    if (n->op == LT_OP_VIEW && !lt_tensor_contiguous(in[0])) {
        reshaped = lt_eager_as_contiguous(in[0], (lt_dtype)in[0]->dtype, "view");
        if (!reshaped) {
            if (in != small)
                free(in);
            return lt_last_status();
        }
        in[0] = reshaped;
    }
    lt_tensor *out[LT_MAX_OUTPUTS] = {NULL};
    int32_t donor = e->donor_leaf[i];
    if (donor >= 0 && args->donatable && args->donatable[donor]) {
        out[0] = handle_on(args->leaves[donor], &n->out[0]);
        args->donated++;
    }
    lt_status st = lt_eager_run((lt_op)n->op, in, (int)n->nin, &a, n->out, out, lt_device_cpu());
    if (reshaped)
        lt_tensor_unref(reshaped); /* the view keeps the storage alive */
    if (in != small)
        free(in);
    for (int k = 0; k < n->nout; k++)
        vals[i][k] = out[k];
    return st;
}

/* Drops the values whose last consumer was node i. */
static void release_dead_inputs(const interp_exe *e, uint32_t i, lt_tensor *(*vals)[LT_MAX_OUTPUTS])
{
    const lt_gnode *n = &e->g->nodes[i];
    for (uint32_t k = 0; k < n->nin; k++) {
        uint32_t src = e->g->inputs[n->first_input + k].node;
        if (e->last_use[src] != i)
            continue;
        for (int o = 0; o < LT_MAX_OUTPUTS; o++) {
            if (vals[src][o]) {
                lt_tensor_unref(vals[src][o]);
                vals[src][o] = NULL;
            }
        }
    }
}

/* The storage of a root value as a contiguous, offset-0 buffer. */
static lt_storage *root_storage(lt_tensor *t)
{
    if (t->offset == 0 && lt_tensor_contiguous(t) &&
        t->storage->nbytes == (size_t)lt_shape_numel(t->shape, t->ndim) * lt_dtype_size((lt_dtype)t->dtype)) {
        atomic_fetch_add(&t->storage->refcount, 1);
        return t->storage;
    }
    lt_tensor *c = lt_eager_as_contiguous(t, (lt_dtype)t->dtype, "interp");
    if (!c)
        return NULL;
    if (c == t) { /* contiguous but offset/size differ: force a copy */
        lt_tensor_unref(c);
        lt_meta m = lt_tensor_meta(t);
        m.weak = 0;
        c = lt_tensor_alloc(&m, lt_device_cpu(), "interp");
        if (!c)
            return NULL;
        lt_eager_copy(c, t);
    }
    lt_storage *s = c->storage;
    atomic_fetch_add(&s->refcount, 1);
    lt_tensor_unref(c);
    return s;
}

static lt_status interp_execute(void *exe, lt_exec_args *args)
{
    const interp_exe *e = exe;
    const lt_graph *g = e->g;
    lt_tensor *(*vals)[LT_MAX_OUTPUTS] = calloc(g->nnodes + 1, sizeof *vals);
    if (!vals)
        return lt_error(LT_ERR_MEMORY, "interp: out of memory");
    lt_status st = LT_OK;
    for (uint32_t i = 0; i < g->nnodes && st == LT_OK; i++) {
        st = run_node(e, i, vals, args);
        if (st == LT_OK)
            release_dead_inputs(e, i, vals);
        else
            args->failed_node = i; /* named in the barrier's message */
    }
    for (uint32_t r = 0; r < g->nroots; r++) {
        args->outputs[r] = NULL;
        if (st == LT_OK) {
            args->outputs[r] = root_storage(vals[g->roots[r].node][g->roots[r].out]);
            if (!args->outputs[r])
                st = lt_last_status();
        }
    }
    for (uint32_t i = 0; i < g->nnodes; i++)
        for (int o = 0; o < LT_MAX_OUTPUTS; o++)
            if (vals[i][o])
                lt_tensor_unref(vals[i][o]);
    free(vals);
    if (st != LT_OK)
        for (uint32_t r = 0; r < g->nroots; r++)
            if (args->outputs[r])
                lt_storage_unref(args->outputs[r]), args->outputs[r] = NULL;
    return st;
}

lt_storage *lt_host_buffer_alloc(size_t nbytes)
{
    lt_device lazy = {LT_DEVICE_LAZY, 0};
    return lt_storage_new(nbytes, lazy, "lazy buffer");
}

lt_status lt_host_copy_to_host(const lt_storage *s, void *dst, size_t nbytes)
{
    if (nbytes > s->nbytes)
        return lt_error(LT_ERR_ARGUMENT, "copy_to_host: %zu bytes requested from a %zu-byte buffer", nbytes,
                        s->nbytes);
    if (nbytes)
        memcpy(dst, s->data, nbytes);
    return LT_OK;
}

lt_status lt_host_copy_from_host(lt_storage *s, const void *src, size_t nbytes)
{
    if (nbytes > s->nbytes)
        return lt_error(LT_ERR_ARGUMENT, "copy_from_host: %zu bytes into a %zu-byte buffer", nbytes,
                        s->nbytes);
    if (nbytes)
        memcpy(s->data, src, nbytes);
    return LT_OK;
}

const lt_backend *lt_backend_interp(void)
{
    static const lt_backend interp = {
        .name = "interp",
        .compile = interp_compile,
        .execute = interp_execute,
        .release = interp_release,
        .buffer_alloc = lt_host_buffer_alloc,
        .copy_to_host = lt_host_copy_to_host,
        .copy_from_host = lt_host_copy_from_host,
        .host_visible = true,
    };
    return &interp;
}
