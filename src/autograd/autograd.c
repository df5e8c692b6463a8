/*
 * autograd.c - autograd state of tensors, grad mode, recording tape nodes
 * (the dispatcher's hook), and the public requires-grad/detach API.
 */
#include "autograd/autograd.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

static _Thread_local int no_grad_depth;
static lt_grad_fn formulas[LT_OP_COUNT];
static pthread_once_t formulas_once = PTHREAD_ONCE_INIT;

static void register_all(void)
{
    lt_grad_register_elementwise();
    lt_grad_register_elementwise_ext();
    lt_grad_register_reduce();
    lt_grad_register_scan();
    lt_grad_register_shape();
    lt_grad_register_nn();
    lt_grad_register_collective();
    lt_grad_register_linalg();
}

void lt_grad_set(lt_op op, lt_grad_fn fn) { formulas[op] = fn; }

lt_grad_fn lt_grad_get(lt_op op)
{
    pthread_once(&formulas_once, register_all);
    return formulas[op];
}

void lt_no_grad_begin(void) { no_grad_depth++; }

void lt_no_grad_end(void)
{
    if (no_grad_depth > 0)
        no_grad_depth--;
    else
        lt_error(LT_ERR_STATE, "no_grad_end: no no-grad region is open");
}

bool lt_grad_enabled(void) { return no_grad_depth == 0; }

/* Scope depth right after each open lt_no_grad_scope_begin (innermost
 * last), so that its end closes the scope it opened. */
#define NO_GRAD_SCOPE_MAX 64
static _Thread_local int no_grad_scope_depths[NO_GRAD_SCOPE_MAX];
static _Thread_local int no_grad_scopes;

void lt_no_grad_scope_begin(void)
{
    lt_scope_begin();
    lt_no_grad_begin();
    if (no_grad_scopes < NO_GRAD_SCOPE_MAX)
        no_grad_scope_depths[no_grad_scopes] = lt_scope_depth();
    no_grad_scopes++;
}

lt_status lt_no_grad_scope_end(void)
{
    if (no_grad_scopes == 0)
        return lt_error(LT_ERR_STATE, "no_grad_scope_end: no no-grad scope is open (call "
                        "lt_no_grad_scope_begin first)");
    int want = no_grad_scopes <= NO_GRAD_SCOPE_MAX ? no_grad_scope_depths[no_grad_scopes - 1] : lt_scope_depth();
    if (lt_scope_depth() != want)
        return lt_error(LT_ERR_STATE, "no_grad_scope_end: the scope depth is %d, expected %d (close the "
                        "scopes opened inside the no-grad scope first, and not its own with lt_scope_end)",
                        lt_scope_depth(), want);
    no_grad_scopes--;
    lt_no_grad_end();
    return lt_scope_end();
}

static lt_ag *ag_of(const lt_tensor *t) { return (lt_ag *)t->autograd; }

static bool wants_grad(const lt_tensor *t) { return t->autograd && ag_of(t)->requires_grad; }

static lt_ag *ag_get_or_create(lt_tensor *t)
{
    if (!t->autograd)
        t->autograd = calloc(1, sizeof(lt_ag));
    if (!t->autograd)
        lt_error(LT_ERR_MEMORY, "autograd: out of memory");
    return t->autograd;
}

/* ---- node lifetime ------------------------------------------------------- */

/* Dropping a node releases its inputs, which may drop their nodes in turn:
 * a worklist keeps that iterative for arbitrarily long tapes. */
static _Thread_local lt_ag_node **dead_nodes;
static _Thread_local int dead_count, dead_cap;
static _Thread_local bool draining;

void lt_ag_node_drop_saved(lt_ag_node *n)
{
    if (n->released)
        return;
    n->released = true;
    for (int k = 0; k < n->nout; k++)
        if (n->out[k])
            lt_tensor_unref(n->out[k]), n->out[k] = NULL;
    for (int i = 0; i < n->nin; i++)
        if (n->in[i])
            lt_tensor_unref(n->in[i]), n->in[i] = NULL;
}

static void node_free(lt_ag_node *n)
{
    lt_ag_node_drop_saved(n);
    free(n->versions);
    for (int k = 0; k < LT_MAX_OUTPUTS; k++)
        if (n->gout[k])
            lt_tensor_unref(n->gout[k]);
    free(n->in);
    free(n);
}

void lt_ag_node_unref(lt_ag_node *n)
{
    if (--n->refcount > 0)
        return;
    if (dead_count == dead_cap) {
        int cap = dead_cap ? dead_cap * 2 : 64;
        lt_ag_node **d = realloc(dead_nodes, sizeof *d * (size_t)cap);
        if (!d) { /* cannot defer: free right away (recursion stays bounded by memory) */
            node_free(n);
            return;
        }
        dead_nodes = d;
        dead_cap = cap;
    }
    dead_nodes[dead_count++] = n;
    if (draining)
        return;
    draining = true;
    while (dead_count > 0)
        node_free(dead_nodes[--dead_count]);
    draining = false;
    free(dead_nodes);
    dead_nodes = NULL;
    dead_cap = 0;
}

static void on_tensor_death(lt_tensor *t)
{
    lt_ag *ag = ag_of(t);
    t->autograd = NULL;
    if (ag->grad)
        lt_tensor_unref(ag->grad);
    lt_ag_node *node = ag->node;
    free(ag);
    if (node)
        lt_ag_node_unref(node);
}

/* ---- recording ---------------------------------------------------------- */

uint64_t lt_ag_version_of(const lt_tensor *t)
{
    if (t->device.kind == LT_DEVICE_LAZY) {
        const lt_lazy *z = t->lazy;
        return z->base ? ((const lt_lazy *)z->base->lazy)->version : z->version;
    }
    return t->storage ? atomic_load(&t->storage->version) : 0;
}

/* A handle on t's values without autograd state (eager: shares storage). */
static lt_tensor *detached_alias(lt_tensor *t)
{
    if (t->device.kind == LT_DEVICE_LAZY)
        return lt_lazy_alias(t);
    return lt_tensor_view_of(t, t->shape, t->strides, t->ndim, t->offset);
}

static lt_status record(lt_op op, lt_tensor *const *in, int nin, const lt_attrs *a, lt_tensor **out)
{
    const lt_op_info *info = &lt_op_infos[op];
    bool any = false;
    for (int i = 0; i < nin; i++)
        any = any || wants_grad(in[i]);
    if (!any || no_grad_depth > 0 || !(info->flags & LT_OPF_DIFF))
        return LT_OK;
    lt_ag_node *n = calloc(1, sizeof *n);
    lt_tensor **saved = calloc((size_t)(nin ? nin : 1), sizeof *saved);
    if (!n || !saved) {
        free(n);
        free(saved);
        return lt_error(LT_ERR_MEMORY, "autograd: out of memory recording %s", info->name);
    }
    n->versions = calloc((size_t)(nin + info->nout), sizeof *n->versions);
    if (!n->versions) {
        free(n);
        free(saved);
        return lt_error(LT_ERR_MEMORY, "autograd: out of memory recording %s", info->name);
    }
    n->op = (uint16_t)op;
    n->nin = nin;
    n->nout = info->nout;
    n->attrs = *a;
    n->in = saved;
    for (int i = 0; i < nin; i++) {
        saved[i] = in[i];
        atomic_fetch_add(&in[i]->refcount, 1);
        n->versions[i] = lt_ag_version_of(in[i]);
    }
    for (int k = 0; k < info->nout; k++) {
        n->out[k] = detached_alias(out[k]); /* formulas may read any output */
        if (!n->out[k]) {
            node_free(n);
            return lt_last_status();
        }
        n->versions[nin + k] = lt_ag_version_of(n->out[k]);
        if (!lt_dtype_is_floating((lt_dtype)out[k]->dtype))
            continue; /* integer outputs (indices) carry no gradient */
        lt_ag *ag = ag_get_or_create(out[k]);
        if (!ag) {
            node_free(n);
            return lt_last_status();
        }
        ag->requires_grad = true;
        ag->node = n;
        ag->out_index = k;
        n->refcount++;
    }
    if (n->refcount == 0)
        node_free(n);
    return LT_OK;
}

static lt_status inplace_guard(const char *name, lt_tensor *dst, lt_tensor *const *in, int nin)
{
    if (no_grad_depth > 0)
        return LT_OK;
    bool any = wants_grad(dst);
    for (int i = 0; i < nin; i++)
        any = any || wants_grad(in[i]);
    if (!any)
        return LT_OK;
    return lt_error(LT_ERR_STATE,
                    "%s: in-place update involving a tensor that requires grad while grad mode is on "
                    "(wrap parameter updates in lt_no_grad_begin/lt_no_grad_end)",
                    name);
}

__attribute__((constructor)) static void autograd_register(void)
{
    static const lt_autograd_hooks hooks = {record, inplace_guard};
    lt_set_autograd_hooks(&hooks);
    lt_set_autograd_release_hook(on_tensor_death);
}

/* ---- public API ---------------------------------------------------------- */

lt_status lt_set_requires_grad(lt_tensor *t, bool requires)
{
    lt_status st = lt_check_tensor("set_requires_grad", t, 0);
    if (st != LT_OK)
        return st;
    if (requires && !lt_dtype_is_floating((lt_dtype)t->dtype))
        return lt_error(LT_ERR_DTYPE, "set_requires_grad: only floating tensors can require grad (got %s)",
                        lt_dtype_name((lt_dtype)t->dtype));
    if (t->autograd && ag_of(t)->node)
        return lt_error(LT_ERR_STATE, "set_requires_grad: only leaves can be marked (this tensor is the "
                                      "result of a recorded op; use lt_detach first)");
    if (!requires && !t->autograd)
        return LT_OK;
    lt_ag *ag = ag_get_or_create(t);
    if (!ag)
        return lt_last_status();
    ag->requires_grad = requires;
    return LT_OK;
}

bool lt_requires_grad(const lt_tensor *t)
{
    if (lt_check_tensor("requires_grad", t, 0) != LT_OK)
        return false;
    return wants_grad(t);
}

lt_tensor *lt_grad(lt_tensor *t)
{
    if (lt_check_tensor("grad", t, 0) != LT_OK)
        return NULL;
    if (!t->autograd || !ag_of(t)->grad)
        return NULL;
    lt_tensor *g = ag_of(t)->grad;
    atomic_fetch_add(&g->refcount, 1);
    return lt_tensor_publish(g);
}

lt_status lt_zero_grad(lt_tensor *t)
{
    lt_status st = lt_check_tensor("zero_grad", t, 0);
    if (st != LT_OK)
        return st;
    if (t->autograd && ag_of(t)->grad) {
        lt_tensor_unref(ag_of(t)->grad);
        ag_of(t)->grad = NULL;
    }
    return LT_OK;
}

lt_tensor *lt_detach(lt_tensor *t)
{
    if (lt_check_tensor("detach", t, 0) != LT_OK)
        return NULL;
    return lt_tensor_publish(detached_alias(t));
}

/* Adds g into leaf t's gradient (g is a tensor of the current scope). */
lt_status lt_ag_accumulate_leaf(lt_tensor *t, lt_tensor *g)
{
    lt_ag *ag = ag_of(t);
    /* A first gradient may be a broadcast or transposed view, or alias the
     * caller's grad_output: .grad always gets a dense tensor of its own. */
    bool own = g->device.kind == LT_DEVICE_LAZY && !((lt_lazy *)g->lazy)->base && lt_tensor_contiguous(g);
    lt_tensor *sum = ag->grad ? lt_add(ag->grad, g) : own ? g : lt_clone(g);
    if (!sum)
        return lt_last_status();
    atomic_fetch_add(&sum->refcount, 1);
    if (ag->grad)
        lt_tensor_unref(ag->grad);
    ag->grad = sum;
    return LT_OK;
}
