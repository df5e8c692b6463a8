/*
 * nn_internal.h - the lt_module machinery shared by src/nn/module.c (the
 * generic parts: ownership, listing, train/eval, moving, freeing) and
 * src/nn/layers.c (the concrete layers and their forward functions).
 *
 * A module, built-in or the user's (lt_module_new), has a kind name (used
 * in error messages as "nn.<kind>"), a forward function, optional user
 * data, the tensors it owns directly (parameters and buffers, each with
 * its short name such as "weight"), and named children. The module owns
 * one caller reference on each of its tensors and owns its children.
 */
#ifndef LT_NN_INTERNAL_H
#define LT_NN_INTERNAL_H

#include "lazytensor.h"
#include "core/core.h"

/* Runs the layer on x (the public lt_module_forward_fn). Temporaries may be
 * left in the current scope (the caller, lt_module_forward, runs it inside
 * a scope of its own); returns the result (possibly x itself) or NULL with
 * the error set. */
typedef lt_module_forward_fn lt_nn_forward_fn;

/* A tensor a module owns directly. */
typedef struct lt_nn_slot {
    lt_tensor *t;   /* one caller reference, owned by the module */
    char *name;     /* short name, e.g. "weight" */
    bool buffer;    /* a buffer (state, no grad) rather than a parameter */
} lt_nn_slot;

/* One entry of a module's flattened (recursive) listing. */
typedef struct lt_nn_entry {
    lt_module *owner; /* the module that owns the tensor */
    int slot;         /* index into owner->tensors */
    char *name;       /* dotted name, e.g. "0.weight" */
} lt_nn_entry;

struct lt_module {
    char *kind;                  /* "linear", "conv2d", or the user's kind */
    lt_nn_forward_fn forward;    /* NULL for a pure container */
    void *data;                  /* the user's state (lt_module_data) */
    void (*free_data)(void *data);
    bool training;
    bool failed;                 /* a registration failed (lt_module_finish) */
    lt_module *parent;           /* the module that owns this one */

    int ntensors, tensor_cap;
    lt_nn_slot *tensors;

    int nchildren;
    lt_module **children;
    char **child_names;

    int64_t cfg[8];              /* built-in layers: sizes, kernel, ... */
    double fcfg[2];              /* built-in layers: eps, dropout probability */

    /* Flattened listing: every parameter (recursively), then every buffer;
     * built on first query, dropped (here and in every ancestor) when a
     * tensor or child is added. */
    lt_nn_entry *entries;
    int nentries, nparams;
};

/* A new module of `kind` with no tensors or children (training mode), or
 * NULL with an error (a built-in layer: no user data). */
lt_module *lt_nn_module_new(const char *kind, lt_nn_forward_fn forward);

/* Adds a tensor the module owns (takes one caller reference, already
 * retained by the caller, released on failure). Parameters are marked as
 * requiring grad. */
lt_status lt_nn_module_add_tensor(lt_module *m, const char *name, lt_tensor *t, bool buffer);

/* Adds a named child (takes ownership, even on failure). */
lt_status lt_nn_module_add_child(lt_module *m, const char *name, lt_module *child);

/* Checks the output arguments of a listing (lt_module_state,
 * lt_optim_state): max >= 0, and somewhere to write when max > 0. */
lt_status lt_nn_check_list_args(const char *op, lt_tensor **tensors, const char **names, int max);

/* Checks a device argument of a layer constructor (error names op). */
lt_status lt_nn_check_device(const char *op, lt_device dev);

/* Checks that x is on the device of the module's parameters (its first
 * tensor, or its first descendant's). */
lt_status lt_nn_check_same_device(const lt_module *m, lt_tensor *x);

#endif
