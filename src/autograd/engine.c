/*
 * engine.c - lt_backward: reverse-mode traversal of the tape.
 *
 * Nodes reachable from the root are ordered so that a node runs only after
 * every node that consumes its outputs has sent it gradients (a
 * dependents count). Each node's gradient formula turns the gradients of
 * its outputs into gradients of its inputs; those are summed down to the
 * input's shape (undoing broadcasting), cast to its dtype, and either
 * accumulated into a leaf's .grad or handed to the producing node. The tape
 * is released afterwards.
 */
#include "autograd/autograd.h"

#include <stdlib.h>
#include <string.h>


static lt_ag *ag_of(const lt_tensor *t) { return (lt_ag *)t->autograd; }

static lt_ag_node *producer(const lt_tensor *t)
{
    return t->autograd && ag_of(t)->requires_grad ? ag_of(t)->node : NULL;
}

typedef struct node_list {
    lt_ag_node **items;
    int count, cap;
} node_list;

static bool list_push(node_list *l, lt_ag_node *n)
{
    if (l->count == l->cap) {
        int cap = l->cap ? l->cap * 2 : 64;
        lt_ag_node **items = realloc(l->items, sizeof *items * (size_t)cap);
        if (!items)
            return false;
        l->items = items;
        l->cap = cap;
    }
    l->items[l->count++] = n;
    return true;
}

static lt_grad_ready_fn grad_ready;
static void *grad_ready_ctx;

void lt_ag_set_grad_ready_hook(lt_grad_ready_fn fn, void *ctx)
{
    grad_ready = fn;
    grad_ready_ctx = ctx;
}

/* A leaf that wants a gradient (no producer). */
static lt_ag *leaf_ag(const lt_tensor *t)
{
    return t && t->autograd && ag_of(t)->requires_grad && !ag_of(t)->node ? ag_of(t) : NULL;
}

/* Every node reachable from root, each once, with dependents counted (and
 * for each leaf, the nodes that read it). */
static lt_status collect(lt_ag_node *root, node_list *all)
{
    node_list stack = {0};
    root->visited = true;
    if (!list_push(all, root) || !list_push(&stack, root))
        goto oom;
    while (stack.count > 0) {
        lt_ag_node *n = stack.items[--stack.count];
        for (int i = 0; i < n->nin; i++) {
            lt_ag *leaf = leaf_ag(n->in[i]);
            if (leaf)
                leaf->pending++;
            lt_ag_node *p = n->in[i] ? producer(n->in[i]) : NULL;
            if (!p)
                continue;
            p->dependents++;
            if (!p->visited) {
                p->visited = true;
                if (!list_push(all, p) || !list_push(&stack, p))
                    goto oom;
            }
        }
    }
    free(stack.items);
    return LT_OK;
oom:
    free(stack.items);
    return lt_error(LT_ERR_MEMORY, "backward: out of memory walking the tape");
}

lt_tensor *lt_sum_to_shape(lt_tensor *g, const int64_t *shape, int ndim)
{
    int gd = lt_tensor_ndim(g);
    if (gd < 0)
        return NULL;
    int dims[LT_MAX_DIMS], nd = 0;
    const int64_t *gs = lt_tensor_shape(g);
    for (int d = 0; d < gd; d++) {
        int k = d - (gd - ndim);
        if (k < 0 || (shape[k] == 1 && gs[d] != 1))
            dims[nd++] = d;
    }
    lt_tensor *r = nd ? lt_sum(g, dims, nd, true) : g;
    if (!r)
        return NULL;
    if (lt_tensor_ndim(r) != ndim || nd)
        r = lt_reshape(r, shape, ndim);
    return r;
}

/* Gives input `t` the gradient g: reduced to t's shape and dtype, then
 * accumulated into a leaf or into its producer's output slot. */
static lt_status route(lt_tensor *t, lt_tensor *g)
{
    if (!lt_shape_equal(lt_tensor_shape(g), lt_tensor_ndim(g), t->shape, t->ndim))
        g = lt_sum_to_shape(g, t->shape, t->ndim);
    if (g && lt_tensor_dtype(g) != (lt_dtype)t->dtype)
        g = lt_to_dtype(g, (lt_dtype)t->dtype);
    if (!g)
        return lt_last_status();
    lt_ag *ag = ag_of(t);
    if (!ag->node)
        return lt_ag_accumulate_leaf(t, g);
    lt_ag_node *p = ag->node;
    lt_tensor **slot = &p->gout[ag->out_index];
    lt_tensor *sum = *slot ? lt_add(*slot, g) : g;
    if (!sum)
        return lt_last_status();
    atomic_fetch_add(&sum->refcount, 1);
    if (*slot)
        lt_tensor_unref(*slot);
    *slot = sum;
    return LT_OK;
}

/* A tensor the formula reads must still hold the values it had when the
 * op ran: an in-place write since then would make the gradient wrong. */
static lt_status check_versions(const lt_ag_node *n)
{
    for (int i = 0; i < n->nin + n->nout; i++) {
        const lt_tensor *t = i < n->nin ? n->in[i] : n->out[i - n->nin];
        if (t && lt_ag_version_of(t) != n->versions[i])
            return lt_error(LT_ERR_STATE,
                            "backward: %s %d of %s was modified by an in-place operation after %s used it "
                            "(its values are needed for the gradient)",
                            i < n->nin ? "input" : "output", i < n->nin ? i : i - n->nin,
                            lt_op_name((lt_op)n->op), lt_op_name((lt_op)n->op));
    }
    return LT_OK;
}

static lt_status run_node(lt_ag_node *n)
{
    bool any_gout = false;
    for (int k = 0; k < n->nout; k++)
        any_gout = any_gout || n->gout[k];
    if (!any_gout)
        return LT_OK;
    lt_status vst = check_versions(n);
    if (vst != LT_OK)
        return vst;
    lt_grad_fn fn = lt_grad_get((lt_op)n->op);
    if (!fn)
        return lt_error(LT_ERR_UNSUPPORTED, "backward: no gradient formula for op %s",
                        lt_op_name((lt_op)n->op));
    bool small_needs[8], *needs = n->nin <= 8 ? small_needs : calloc((size_t)n->nin, sizeof *needs);
    lt_tensor *small_gin[8], **gin = n->nin <= 8 ? small_gin : calloc((size_t)n->nin, sizeof *gin);
    if (!needs || !gin) {
        if (needs != small_needs)
            free(needs);
        if (gin != small_gin)
            free(gin);
        return lt_error(LT_ERR_MEMORY, "backward: out of memory");
    }
    for (int i = 0; i < n->nin; i++) {
        needs[i] = n->in[i]->autograd && ag_of(n->in[i])->requires_grad;
        gin[i] = NULL;
    }
    lt_grad_ctx c = {(lt_op)n->op, &n->attrs, n->in, n->nin, n->out, n->nout, n->gout, needs};
    /* a formula's ops count as the gradient of the public function that
     * recorded the forward op (run-time failures are reported under it) */
    lt_origin caller = lt_origin_enter_backward(n->out[0], (lt_op)n->op);
    lt_status st = fn(&c, gin);
    lt_origin_restore(caller);
    for (int i = 0; st == LT_OK && i < n->nin; i++)
        if (needs[i] && gin[i])
            st = route(n->in[i], gin[i]);
    if (needs != small_needs)
        free(needs);
    if (gin != small_gin)
        free(gin);
    return st;
}

/* Checks root and makes the seed gradient. */
static lt_tensor *seed_of(lt_tensor *root, lt_tensor *grad_output)
{
    if (!grad_output) {
        if (lt_shape_numel(root->shape, root->ndim) != 1) {
            char sb[160];
            lt_error(LT_ERR_SHAPE,
                     "backward: grad_output may be NULL only for a one-element root; root has shape %s",
                     lt_shape_str(root->shape, root->ndim, sb, sizeof sb));
            return NULL;
        }
        return lt_ones_like(root);
    }
    if (lt_check_tensor("backward", grad_output, 1) != LT_OK)
        return NULL;
    if (!lt_shape_equal(grad_output->shape, grad_output->ndim, root->shape, root->ndim)) {
        char s1[160], s2[160];
        lt_error(LT_ERR_SHAPE, "backward: grad_output shape %s differs from the root's %s",
                 lt_shape_str(grad_output->shape, grad_output->ndim, s1, sizeof s1),
                 lt_shape_str(root->shape, root->ndim, s2, sizeof s2));
        return NULL;
    }
    return lt_detach(grad_output);
}

static lt_status backward_nodes(lt_tensor *root, lt_tensor *seed)
{
    lt_ag_node *top = ag_of(root)->node;
    if (!top)
        return lt_ag_accumulate_leaf(root, seed);
    if (top->released)
        return lt_error(LT_ERR_STATE, "backward: the tape behind this tensor was already used by an "
                                      "earlier lt_backward (it is released after each pass)");
    node_list all = {0};
    lt_status st = collect(top, &all);
    if (st == LT_OK)
        st = route(root, seed);
    /* Ready nodes: every consumer has run. Process them in a worklist. */
    node_list ready = {0};
    if (st == LT_OK && !list_push(&ready, top))
        st = lt_error(LT_ERR_MEMORY, "backward: out of memory");
    while (st == LT_OK && ready.count > 0) {
        lt_ag_node *n = ready.items[--ready.count];
        st = run_node(n);
        for (int i = 0; st == LT_OK && i < n->nin; i++) { /* leaves whose gradient is now final */
            lt_ag *leaf = leaf_ag(n->in[i]);
            if (leaf && --leaf->pending == 0 && grad_ready)
                grad_ready(n->in[i], grad_ready_ctx);
        }
        for (int i = 0; st == LT_OK && i < n->nin; i++) {
            lt_ag_node *p = producer(n->in[i]);
            if (p && --p->dependents == 0 && !list_push(&ready, p))
                st = lt_error(LT_ERR_MEMORY, "backward: out of memory");
        }
        for (int k = 0; k < LT_MAX_OUTPUTS; k++)
            if (n->gout[k])
                lt_tensor_unref(n->gout[k]), n->gout[k] = NULL;
    }
    for (int i = 0; i < all.count; i++) { /* release the tape, reset marks */
        lt_ag_node *n = all.items[i];
        for (int k = 0; k < LT_MAX_OUTPUTS; k++)
            if (n->gout[k])
                lt_tensor_unref(n->gout[k]), n->gout[k] = NULL;
        for (int k = 0; k < n->nin; k++)
            if (leaf_ag(n->in[k]))
                leaf_ag(n->in[k])->pending = 0;
        n->visited = false;
        n->dependents = 0;
    }
    /* Dropping one node's saved inputs can free another collected node:
     * hold a reference on each while the tape is released. */
    for (int i = 0; i < all.count; i++)
        all.items[i]->refcount++;
    for (int i = 0; i < all.count; i++)
        lt_ag_node_drop_saved(all.items[i]);
    for (int i = 0; i < all.count; i++)
        lt_ag_node_unref(all.items[i]);
    free(all.items);
    free(ready.items);
    return st;
}

lt_status lt_backward(lt_tensor *root, lt_tensor *grad_output)
{
    lt_status st = lt_check_tensor("backward", root, 0);
    if (st != LT_OK)
        return st;
    if (!root->autograd || !((lt_ag *)root->autograd)->requires_grad)
        return lt_error(LT_ERR_STATE, "backward: the root does not require grad (mark leaves with "
                                      "lt_set_requires_grad before computing it)");
    lt_no_grad_begin();
    lt_scope_begin();
    lt_tensor *seed = seed_of(root, grad_output);
    st = seed ? backward_nodes(root, seed) : lt_last_status();
    lt_scope_end();
    lt_no_grad_end();
    return st;
}
