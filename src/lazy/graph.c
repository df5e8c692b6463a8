/*
 * graph.c - turns the IR reachable from a set of root values into a
 * canonical graph (post-order, inputs as indices, leaves and non-special
 * scalars as parameter slots) and computes its 128-bit key.
 *
 * The key covers each node's local hash (op, attributes with 0/1 baked and
 * other scalars as "parameter", output dtypes and shapes), its inputs'
 * canonical positions and the roots. Leaves are numbered in first-visit
 * order, so (a*b)+c and (a*c)+b get different keys although every leaf
 * hashes the same.
 */
#include "lazy/graph.h"

#include <stdlib.h>
#include <string.h>

static bool grow(void **p, uint32_t *cap, uint32_t need, size_t elem)
{
    if (need <= *cap)
        return true;
    uint32_t c = *cap ? *cap : 64;
    while (c < need)
        c *= 2;
    void *q = realloc(*p, elem * c);
    if (!q)
        return false;
    *p = q;
    *cap = c;
    return true;
}

void lt_gbuild_free(lt_gbuild *b)
{
    free(b->g.nodes);
    free(b->g.inputs);
    free(b->g.roots);
    free(b->leaves);
    free(b->leaf_ids);
    free(b->scalars);
    free(b->canon);
    free(b->checks);
    memset(b, 0, sizeof *b);
}

bool lt_gnode_may_fail(const lt_gnode *n)
{
    if (n->kind != LT_NODE_OP || !(lt_op_infos[n->op].flags & LT_OPF_DATAFAIL))
        return false;
    /* elementwise ones (remainder, fmod, floor_divide) fail only on integers */
    return lt_op_infos[n->op].cls != LT_OPC_BINARY || !lt_dtype_is_floating((lt_dtype)n->out[0].dtype);
}

static lt_status oom(void) { return lt_error(LT_ERR_MEMORY, "lazy: out of memory building the graph"); }

static int32_t add_scalar_param(lt_gbuild *b, double v)
{
    if (!grow((void **)&b->scalars, &b->scalar_cap, b->g.nscalars + 1, sizeof *b->scalars))
        return -2;
    b->scalars[b->g.nscalars] = v;
    return (int32_t)b->g.nscalars++;
}

/*
 * Notes the index check that DATAFAIL node n makes when it runs (the same
 * range check as its eager kernel), so that a step can check the indices
 * before a program that donates buffers. Failures it cannot express as an
 * index range (integer division by zero) mark the graph unchecked.
 */
static lt_status add_check(lt_gbuild *b, const lt_node *n)
{
    const lt_value *in = lt_ir_inputs(n);
    const lt_meta *first = n->nin > 0 ? lt_ir_out(lt_ir_node(in[0].node), (int)in[0].out) : NULL;
    const lt_attrs *a = lt_ir_attrs(n);
    lt_gcheck c;
    switch ((lt_op)n->op) {
    case LT_OP_GATHER: case LT_OP_INDEX_SELECT: case LT_OP_SCATTER: case LT_OP_SCATTER_ADD: {
        int64_t dim = a->i[0] < 0 ? a->i[0] + first->ndim : a->i[0];
        if (dim < 0 || dim >= first->ndim) {
            b->unchecked_fail = true;
            return LT_OK;
        }
        c = (lt_gcheck){in[1], first->shape[dim]};
        break;
    }
    case LT_OP_EMBEDDING:
        c = (lt_gcheck){in[1], first->ndim > 0 ? first->shape[0] : 0};
        break;
    case LT_OP_ONE_HOT:
        c = (lt_gcheck){in[0], a->i[0]};
        break;
    default:
        b->unchecked_fail = true;
        return LT_OK;
    }
    for (uint32_t k = 0; k < b->nchecks; k++) /* a forward op and its gradient share one */
        if (b->checks[k].index.node == c.index.node && b->checks[k].index.out == c.index.out &&
            b->checks[k].limit == c.limit)
            return LT_OK;
    if (!grow((void **)&b->checks, &b->check_cap, b->nchecks + 1, sizeof *b->checks))
        return oom();
    b->checks[b->nchecks++] = c;
    return LT_OK;
}

/* Appends arena node `index` (whose inputs are already placed). */
static lt_status emit(lt_gbuild *b, uint32_t index)
{
    const lt_node *n = lt_ir_node(index);
    if (!grow((void **)&b->g.nodes, &b->node_cap, b->g.nnodes + 1, sizeof *b->g.nodes) ||
        !grow((void **)&b->g.inputs, &b->input_cap, b->g.ninputs + n->nin, sizeof *b->g.inputs))
        return oom();
    lt_gnode *g = &b->g.nodes[b->g.nnodes];
    memset(g, 0, sizeof *g);
    g->kind = n->kind;
    g->nout = n->nout;
    g->op = n->op;
    g->nin = n->nin;
    g->first_input = b->g.ninputs;
    for (int k = 0; k < n->nout; k++) /* the others stay cleared */
        g->out[k] = *lt_ir_out(n, k);
    g->attrs = *lt_ir_attrs(n);
    g->slot = -1;
    g->origin = n->origin.name;
    g->origin_backward = n->origin.backward;
    if (lt_gnode_may_fail(g)) {
        b->may_fail = true;
        if (add_check(b, n) != LT_OK)
            return lt_last_status();
    }
    for (int k = 0; k < LT_ATTR_FLOATS; k++)
        g->attr_param[k] = -1;
    lt_ir_hash_u64(b->key, n->local_hash[0]);
    lt_ir_hash_u64(b->key, n->local_hash[1]);
    const lt_value *in = lt_ir_inputs(n);
    for (uint32_t k = 0; k < n->nin; k++) {
        lt_gvalue v = {b->canon[in[k].node], in[k].out};
        b->g.inputs[b->g.ninputs++] = v;
        lt_ir_hash_u64(b->key, ((uint64_t)v.node << 8) | v.out);
    }
    if (n->kind == LT_NODE_DATA) {
        if (lt_lazy_is_unfilled(n->storage))
            return lt_error(LT_ERR_STATE, "lazy: this graph reads tensor %llu as computed by an asynchronous "
                            "step that failed; call lt_lazy_discard() to drop what was recorded since",
                            (unsigned long long)n->tensor_id);
        if (!grow((void **)&b->leaves, &b->leaf_cap, b->g.nleaves + 1, sizeof *b->leaves) ||
            !grow((void **)&b->leaf_ids, &b->leaf_id_cap, b->g.nleaves + 1, sizeof *b->leaf_ids))
            return oom();
        b->leaves[b->g.nleaves] = n->storage;
        b->leaf_ids[b->g.nleaves] = n->tensor_id;
        g->slot = (int32_t)b->g.nleaves++; /* visit order; ranked by id below */
    } else if (n->kind == LT_NODE_SCALAR) {
        g->scalar = n->scalar;
        g->slot = lt_scalar_is_special(n->scalar) ? -1 : add_scalar_param(b, n->scalar);
    } else {
        for (int k = 0; k < g->attrs.nf; k++)
            if (!lt_scalar_is_special(g->attrs.f[k]))
                g->attr_param[k] = (int16_t)add_scalar_param(b, g->attrs.f[k]);
    }
    if (g->slot == -2)
        return oom();
    for (int k = 0; k < LT_ATTR_FLOATS; k++)
        if (g->attr_param[k] == -2)
            return oom();
    b->canon[index] = b->g.nnodes++;
    return LT_OK;
}

/* Iterative post-order DFS from one root. */
static lt_status visit(lt_gbuild *b, uint32_t root, uint32_t *stack, uint32_t *next_input)
{
    if (b->canon[root] != UINT32_MAX)
        return LT_OK;
    int64_t top = 0;
    stack[0] = root;
    next_input[0] = 0;
    while (top >= 0) {
        uint32_t index = stack[top];
        const lt_node *n = lt_ir_node(index);
        if (next_input[top] < n->nin) {
            uint32_t child = lt_ir_inputs(n)[next_input[top]++].node;
            if (b->canon[child] == UINT32_MAX) {
                stack[++top] = child;
                next_input[top] = 0;
            }
            continue;
        }
        if (b->canon[index] == UINT32_MAX) {
            lt_status st = emit(b, index);
            if (st != LT_OK)
                return st;
        }
        top--;
    }
    return LT_OK;
}

/*
 * Leaf slots are the rank of each leaf's tensor id among the graph's leaves
 * (ids grow with creation order, which a training loop repeats every step).
 * The key includes each leaf's slot, so graphs that bind the same tensors
 * to different positions, like (a*b)+c and (a*c)+b, get different programs.
 * Two leaves of one tensor (its buffer before and after it got new data,
 * both still in the arena) rank by visit order.
 */
static lt_status rank_leaves(lt_gbuild *b)
{
    uint32_t n = b->g.nleaves;
    uint32_t *rank = malloc(sizeof *rank * (n ? n : 1));
    lt_storage **sorted = malloc(sizeof *sorted * (n ? n : 1));
    uint64_t *sorted_ids = malloc(sizeof *sorted_ids * (n ? n : 1));
    if (!rank || !sorted || !sorted_ids) {
        free(rank);
        free(sorted);
        free(sorted_ids);
        return oom();
    }
    for (uint32_t i = 0; i < n; i++) { /* leaves are few: a quadratic rank is fine */
        rank[i] = 0;
        for (uint32_t j = 0; j < n; j++)
            if (b->leaf_ids[j] < b->leaf_ids[i] || (b->leaf_ids[j] == b->leaf_ids[i] && j < i))
                rank[i]++;
        sorted[rank[i]] = b->leaves[i];
        sorted_ids[rank[i]] = b->leaf_ids[i];
    }
    for (uint32_t k = 0; k < b->g.nnodes; k++) {
        lt_gnode *g = &b->g.nodes[k];
        if (g->kind == LT_NODE_DATA) {
            g->slot = (int32_t)rank[g->slot];
            lt_ir_hash_u64(b->key, 0x6c656166ull ^ ((uint64_t)k << 20) ^ (uint64_t)g->slot);
        }
    }
    if (n) {
        memcpy(b->leaves, sorted, sizeof *sorted * n);
        memcpy(b->leaf_ids, sorted_ids, sizeof *sorted_ids * n);
    }
    free(rank);
    free(sorted);
    free(sorted_ids);
    return LT_OK;
}

lt_status lt_gbuild_run(lt_gbuild *b, const lt_value *roots, uint32_t nroots)
{
    memset(b, 0, sizeof *b);
    lt_ir_hash_init(b->key);
    uint32_t count = lt_ir_node_count();
    b->canon = malloc(sizeof *b->canon * (count ? count : 1));
    uint32_t *stack = malloc(sizeof *stack * (count ? count : 1));
    uint32_t *next_input = malloc(sizeof *next_input * (count ? count : 1));
    b->g.roots = malloc(sizeof *b->g.roots * (nroots ? nroots : 1));
    lt_status st = LT_OK;
    if (!b->canon || !stack || !next_input || !b->g.roots)
        st = oom();
    for (uint32_t i = 0; st == LT_OK && i < count; i++)
        b->canon[i] = UINT32_MAX;
    for (uint32_t r = 0; st == LT_OK && r < nroots; r++)
        st = visit(b, roots[r].node, stack, next_input);
    for (uint32_t r = 0; st == LT_OK && r < nroots; r++) {
        lt_gvalue v = {b->canon[roots[r].node], roots[r].out};
        b->g.roots[r] = v;
        lt_ir_hash_u64(b->key, 0x726f6f74ull ^ ((uint64_t)v.node << 8) ^ v.out);
    }
    b->g.nroots = nroots;
    if (st == LT_OK)
        st = rank_leaves(b);
    free(stack);
    free(next_input);
    if (st != LT_OK)
        lt_gbuild_free(b);
    return st;
}
