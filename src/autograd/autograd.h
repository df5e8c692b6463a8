/*
 * autograd.h - reverse-mode automatic differentiation.
 *
 * Every op on tensors that require grad (with grad mode on) records a tape
 * node holding the op, its attributes, its inputs (retained) and detached
 * aliases of its outputs. lt_backward walks the nodes reachable from a
 * root in reverse topological order, calling one gradient formula per op;
 * formulas use the public tensor API, so the backward pass runs eagerly or
 * is traced lazily like any other code.
 */
#ifndef LT_AUTOGRAD_H
#define LT_AUTOGRAD_H

#include "api/api.h"

typedef struct lt_ag_node lt_ag_node;

/* Autograd state of a tensor (t->autograd). */
typedef struct lt_ag {
    bool requires_grad;
    lt_tensor *grad;     /* leaves: accumulated gradient (retained) */
    lt_ag_node *node;    /* results: the producing node (one reference) */
    int out_index;
    int pending;         /* leaves, during lt_backward: tape nodes still to run that read it */
} lt_ag;

struct lt_ag_node {
    int refcount;        /* one per output tensor pointing here */
    uint16_t op;
    int nin, nout;
    lt_attrs attrs;
    lt_tensor **in;                  /* inputs, retained (values and routing) */
    lt_tensor *out[LT_MAX_OUTPUTS];  /* detached aliases of the outputs */
    uint64_t *versions;              /* of in[0..nin) then out[0..nout) when recorded */
    bool released;                   /* saved tensors dropped by backward */
    /* backward bookkeeping */
    lt_tensor *gout[LT_MAX_OUTPUTS];
    int dependents;
    bool visited;
};

/* What a gradient formula receives. in/out are the forward values (no
 * autograd state is recorded while formulas run); gout[k] is the gradient
 * of output k, NULL when output k received none; needs[i] tells whether
 * input i wants a gradient. */
typedef struct lt_grad_ctx {
    lt_op op;
    const lt_attrs *a;
    lt_tensor *const *in;
    int nin;
    lt_tensor *const *out;
    int nout;
    lt_tensor *const *gout;
    const bool *needs;
} lt_grad_ctx;

/*
 * Sets gin[i] to the gradient of input i (a tensor of the current scope)
 * for every i with needs[i]. The result may keep a broadcast shape or a
 * wider dtype: the engine sums it down to the input's shape and casts it.
 * Leaving gin[i] NULL means "zero".
 */
typedef lt_status (*lt_grad_fn)(const lt_grad_ctx *c, lt_tensor **gin);

void lt_grad_set(lt_op op, lt_grad_fn fn);

/* Called during lt_backward when a leaf's gradient is final: every tape
 * node that reads the leaf has run (data-parallel training starts a
 * bucket's all-reduce from it). One process-wide hook; NULL removes it. */
typedef void (*lt_grad_ready_fn)(lt_tensor *leaf, void *ctx);
void lt_ag_set_grad_ready_hook(lt_grad_ready_fn fn, void *ctx);
lt_grad_fn lt_grad_get(lt_op op);

/* Tape internals shared by autograd.c and engine.c. */
/* The version of t's values: bumped by every in-place write to them. */
uint64_t lt_ag_version_of(const lt_tensor *t);
void lt_ag_node_drop_saved(lt_ag_node *n);
void lt_ag_node_unref(lt_ag_node *n);
lt_status lt_ag_accumulate_leaf(lt_tensor *t, lt_tensor *g);

/* Formula registration per op group (grad_*.c). */
void lt_grad_register_elementwise(void);
void lt_grad_register_elementwise_ext(void);
void lt_grad_register_reduce(void);
void lt_grad_register_scan(void);
void lt_grad_register_shape(void);
void lt_grad_register_nn(void);
void lt_grad_register_collective(void);
void lt_grad_register_linalg(void);

/* Moves tensors ts[0..n) (and their gradients) to dev in place, keeping
 * their handles: all of them or, on error, none (move.c). op names the
 * public function in messages. */
lt_status lt_move_tensors(const char *op, lt_tensor *const *ts, int n, lt_device dev);

/* Helpers for formulas. */
/* Sums g over broadcast dims so it has shape `shape`. */
lt_tensor *lt_sum_to_shape(lt_tensor *g, const int64_t *shape, int ndim);
/* LT_OK if every gradient wanted by c (needs[i]) was produced in gin,
 * else the error status of the op that failed. */
lt_status lt_grad_done(const lt_grad_ctx *c, lt_tensor **gin);

#endif
