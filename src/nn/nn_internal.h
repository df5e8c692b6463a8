/*
 * nn_internal.h - the lt_module machinery shared by src/nn/module.c (the
 * generic parts: ownership, listing, train/eval, moving, freeing) and
 * src/nn/layers.c (the concrete layers and their forward functions).
 *
 * A module has a kind name (used in error messages as "nn.<kind>"), a
 * forward function, the tensors it owns directly (parameters and buffers,
 * each with its short name such as "weight"), and named children. The
 * module owns one caller reference (lt_retain) on each of its tensors and
 * owns its children.
 */
#ifndef LT_NN_INTERNAL_H
#define LT_NN_INTERNAL_H

#include "lazytensor.h"
#include "core/core.h"

/* Most tensors a single layer owns itself (batch norm: 4). */
#define LT_NN_MAX_OWN 4

/* Runs the layer on x. Temporaries may be left in the current scope (the
 * caller, lt_module_forward, runs it inside a scope of its own); returns
 * the result (possibly x itself) or NULL with the error set. */
typedef lt_tensor *(*lt_nn_forward_fn)(lt_module *m, lt_tensor *x);

/* One entry of a module's flattened (recursive) listing. */
typedef struct lt_nn_entry {
    lt_module *owner; /* the module that owns the tensor */
    int slot;         /* index into owner->tensors */
    char *name;       /* dotted name, e.g. "0.weight" */
} lt_nn_entry;

struct lt_module {
    const char *kind;            /* "linear", "conv2d", ... */
    lt_nn_forward_fn forward;
    bool training;
    lt_module *parent;           /* the container that owns this module */

    int ntensors;
    lt_tensor *tensors[LT_NN_MAX_OWN];
    const char *tensor_names[LT_NN_MAX_OWN]; /* static strings */
    bool is_buffer[LT_NN_MAX_OWN];

    int nchildren;
    lt_module **children;
    char **child_names;

    int64_t cfg[8];              /* layer configuration (sizes, kernel, ...) */
    double fcfg[2];              /* eps, dropout probability */

    /* Flattened listing: every parameter (recursively), then every buffer;
     * built on first query (the structure never changes afterwards). */
    lt_nn_entry *entries;
    int nentries, nparams;
};

/* A new module of `kind` with no tensors or children (training mode), or
 * NULL with an error. */
lt_module *lt_nn_module_new(const char *kind, lt_nn_forward_fn forward);

/* Adds a tensor the module owns (takes one caller reference, already
 * retained by the caller). Parameters are marked as requiring grad. */
lt_status lt_nn_module_add_tensor(lt_module *m, const char *name, lt_tensor *t, bool buffer);

/* Adds a named child (takes ownership). */
lt_status lt_nn_module_add_child(lt_module *m, const char *name, lt_module *child);

/* Checks a device argument of a layer constructor (error names op). */
lt_status lt_nn_check_device(const char *op, lt_device dev);

/* Checks that x is on the device of the module's parameters (its first
 * tensor, or its first descendant's). */
lt_status lt_nn_check_same_device(const lt_module *m, lt_tensor *x);

#endif
