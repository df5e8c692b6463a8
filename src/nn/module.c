/*
 * module.c - the lt_module machinery shared by built-in layers and user
 * modules: creating modules, registering their parameters, buffers and
 * children by name, freeing them, and the generic forward entry point
 * lt_module_forward. Listing, lookups, train/eval, moving and zero_grad
 * are in module_tree.c.
 *
 * Registration in user code goes through lt_module_add_parameter / _buffer
 * / _child, which take over the reference they are given whatever the
 * scope (lt_persist), and record a failure in the module instead of making
 * the caller check each call: lt_module_finish frees a module whose
 * construction failed and returns NULL, with the first error still set.
 */
#include "nn/nn_internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- creation ------------------------------------------------------------ */

/* Drops a reference handed to a registration call that cannot use it (the
 * module is NULL or already failed): the scope's, or the caller's. */
static void drop_given(lt_tensor *t)
{
    if (t && lt_persist(t))
        lt_release(t);
}

static void drop_data(void *data, void (*free_data)(void *))
{
    if (data && free_data)
        free_data(data);
}

lt_module *lt_module_new(const char *kind, lt_module_forward_fn forward, void *data, void (*free_data)(void *data))
{
    if (!kind || !*kind) {
        drop_data(data, free_data);
        lt_error(LT_ERR_ARGUMENT, "module_new: kind is %s, expected a name such as \"block\"",
                 kind ? "empty" : "NULL");
        return NULL;
    }
    lt_module *m = calloc(1, sizeof *m);
    char *copy = strdup(kind);
    if (!m || !copy) {
        free(m);
        free(copy);
        drop_data(data, free_data);
        lt_error(LT_ERR_MEMORY, "nn.%s: out of memory", kind);
        return NULL;
    }
    m->kind = copy;
    m->forward = forward;
    m->data = data;
    m->free_data = free_data;
    m->training = true;
    return m;
}

lt_module *lt_nn_module_new(const char *kind, lt_nn_forward_fn forward)
{
    return lt_module_new(kind, forward, NULL, NULL);
}

void *lt_module_data(const lt_module *m)
{
    if (!m) {
        lt_error(LT_ERR_NULL, "module_data: module is NULL");
        return NULL;
    }
    return m->data;
}

const char *lt_module_kind(const lt_module *m)
{
    if (!m) {
        lt_error(LT_ERR_NULL, "module_kind: module is NULL");
        return NULL;
    }
    return m->kind;
}

/* ---- registration ---------------------------------------------------------- */

/* Drops the cached listings of m and every ancestor: their structure
 * changed. */
static void invalidate_listings(lt_module *m)
{
    for (; m; m = m->parent) {
        for (int i = 0; i < m->nentries; i++)
            free(m->entries[i].name);
        free(m->entries);
        m->entries = NULL;
        m->nentries = m->nparams = 0;
    }
}

/* A name is non-empty, has no '.' (dotted names are built from it) and is
 * not yet used by a tensor or child of m. */
static lt_status check_name(const lt_module *m, const char *name, const char *what)
{
    if (!name || !*name || strchr(name, '.'))
        return lt_error(LT_ERR_ARGUMENT, "nn.%s: %s name \"%s\" is invalid (expected a non-empty name without "
                        "'.')", m->kind, what, name ? name : "(NULL)");
    for (int i = 0; i < m->ntensors; i++)
        if (strcmp(m->tensors[i].name, name) == 0)
            return lt_error(LT_ERR_ARGUMENT, "nn.%s: the name \"%s\" is already used by a %s", m->kind, name,
                            m->tensors[i].buffer ? "buffer" : "parameter");
    for (int i = 0; i < m->nchildren; i++)
        if (strcmp(m->child_names[i], name) == 0)
            return lt_error(LT_ERR_ARGUMENT, "nn.%s: the name \"%s\" is already used by a child module (nn.%s)",
                            m->kind, name, m->children[i]->kind);
    return LT_OK;
}

static lt_status check_new_tensor(const lt_module *m, const char *name, const lt_tensor *t)
{
    if (check_name(m, name, "tensor") != LT_OK || lt_check_tensor("module_add", t, 0) != LT_OK)
        return lt_last_status();
    for (int i = 0; i < m->ntensors; i++)
        if (m->tensors[i].t == t)
            return lt_error(LT_ERR_ARGUMENT, "nn.%s: tensor \"%s\" is already registered as \"%s\"", m->kind,
                            name, m->tensors[i].name);
    return LT_OK;
}

static lt_status push_slot(lt_module *m, const char *name, lt_tensor *t, bool buffer)
{
    if (m->ntensors == m->tensor_cap) {
        int cap = m->tensor_cap ? 2 * m->tensor_cap : 4;
        lt_nn_slot *slots = realloc(m->tensors, sizeof *slots * (size_t)cap);
        if (!slots)
            return lt_error(LT_ERR_MEMORY, "nn.%s: out of memory", m->kind);
        m->tensors = slots;
        m->tensor_cap = cap;
    }
    char *copy = strdup(name);
    if (!copy)
        return lt_error(LT_ERR_MEMORY, "nn.%s: out of memory", m->kind);
    m->tensors[m->ntensors++] = (lt_nn_slot){t, copy, buffer};
    invalidate_listings(m);
    return LT_OK;
}

lt_status lt_nn_module_add_tensor(lt_module *m, const char *name, lt_tensor *t, bool buffer)
{
    if (!t)
        return lt_error_pending() ? lt_last_status()
                                  : lt_error(LT_ERR_NULL, "nn.%s: tensor \"%s\" is NULL", m->kind, name);
    lt_status st = check_new_tensor(m, name, t);
    if (st == LT_OK && !buffer)
        st = lt_set_requires_grad(t, true);
    if (st == LT_OK)
        st = push_slot(m, name, t, buffer);
    if (st != LT_OK)
        lt_release(t);
    return st;
}

/* The public registration of a tensor: takes over the given reference
 * (lt_persist), records a failure in m. */
static lt_tensor *add_given(lt_module *m, const char *name, lt_tensor *t, bool buffer, const char *op)
{
    if (!m || m->failed) {
        if (!m && !lt_error_pending())
            lt_error(LT_ERR_NULL, "%s: module is NULL", op);
        drop_given(t);
        return NULL;
    }
    lt_tensor *own = t ? lt_persist(t) : NULL;
    if (!own && !lt_error_pending())
        lt_error(LT_ERR_NULL, "%s: tensor \"%s\" is NULL", op, name ? name : "(NULL)");
    if (!own || lt_nn_module_add_tensor(m, name, own, buffer) != LT_OK) {
        m->failed = true;
        return NULL;
    }
    return own;
}

lt_tensor *lt_module_add_parameter(lt_module *m, const char *name, lt_tensor *t)
{
    return add_given(m, name, t, false, "module_add_parameter");
}

lt_tensor *lt_module_add_buffer(lt_module *m, const char *name, lt_tensor *t)
{
    return add_given(m, name, t, true, "module_add_buffer");
}

static bool is_self_or_ancestor(const lt_module *m, const lt_module *child)
{
    for (const lt_module *a = m; a; a = a->parent)
        if (a == child)
            return true;
    return false;
}

/* The child must be free (no parent) and not m or one of its ancestors. */
static lt_status check_new_child(const lt_module *m, const char *name, const lt_module *child)
{
    if (check_name(m, name, "child") != LT_OK)
        return lt_last_status();
    if (child->parent)
        return lt_error(LT_ERR_STATE, "nn.%s: child \"%s\" (nn.%s) already belongs to an nn.%s module", m->kind,
                        name, child->kind, child->parent->kind);
    if (is_self_or_ancestor(m, child))
        return lt_error(LT_ERR_ARGUMENT, "nn.%s: child \"%s\" would contain itself", m->kind, name);
    return LT_OK;
}

lt_status lt_nn_module_add_child(lt_module *m, const char *name, lt_module *child)
{
    if (!child)
        return lt_error_pending() ? lt_last_status()
                                  : lt_error(LT_ERR_NULL, "nn.%s: child \"%s\" is NULL", m->kind, name);
    lt_status st = check_new_child(m, name, child);
    if (st != LT_OK) {
        if (!child->parent && !is_self_or_ancestor(m, child))
            lt_module_free(child); /* taken over: a given child is never left to leak */
        return st;
    }
    lt_module **kids = realloc(m->children, sizeof *kids * (size_t)(m->nchildren + 1));
    if (kids)
        m->children = kids;
    char **names = realloc(m->child_names, sizeof *names * (size_t)(m->nchildren + 1));
    if (names)
        m->child_names = names;
    char *copy = strdup(name);
    if (!kids || !names || !copy) {
        free(copy);
        lt_module_free(child);
        return lt_error(LT_ERR_MEMORY, "nn.%s: out of memory", m->kind);
    }
    m->children[m->nchildren] = child;
    m->child_names[m->nchildren] = copy;
    m->nchildren++;
    child->parent = m;
    invalidate_listings(m);
    return LT_OK;
}

lt_module *lt_module_add_child(lt_module *m, const char *name, lt_module *child)
{
    if (!m || m->failed) {
        if (!m && !lt_error_pending())
            lt_error(LT_ERR_NULL, "module_add_child: module is NULL");
        if (child && !child->parent && child != m)
            lt_module_free(child);
        return NULL;
    }
    if (lt_nn_module_add_child(m, name, child) != LT_OK) {
        m->failed = true;
        return NULL;
    }
    return child;
}

lt_module *lt_module_finish(lt_module *m)
{
    if (!m) {
        if (!lt_error_pending())
            lt_error(LT_ERR_NULL, "module_finish: module is NULL");
        return NULL;
    }
    if (!m->failed)
        return m;
    lt_module_free(m);
    return NULL;
}

lt_status lt_nn_check_device(const char *op, lt_device dev) { return lt_device_check_available(op, dev); }

/* The first tensor owned by m or its descendants, or NULL. */
static lt_tensor *first_tensor(const lt_module *m)
{
    if (m->ntensors > 0)
        return m->tensors[0].t;
    for (int i = 0; i < m->nchildren; i++) {
        lt_tensor *t = first_tensor(m->children[i]);
        if (t)
            return t;
    }
    return NULL;
}

lt_status lt_nn_check_same_device(const lt_module *m, lt_tensor *x)
{
    lt_tensor *own = first_tensor(m);
    if (!own)
        return LT_OK;
    lt_device want = lt_tensor_device(own), got = lt_tensor_device(x);
    if (lt_device_equal(want, got))
        return LT_OK;
    char a[32], b[32];
    return lt_error(LT_ERR_DEVICE, "nn.%s: input is on %s but the module's parameters are on %s (move one "
                    "with lt_to or lt_module_to)", m->kind, lt_device_str(got, a, sizeof a),
                    lt_device_str(want, b, sizeof b));
}

/* ---- freeing ------------------------------------------------------------- */

/* Releases the tensors and children first, then the user's data (whose
 * destructor may still look at its own fields, never at the module). */
static void free_tree(lt_module *m)
{
    for (int i = 0; i < m->ntensors; i++) {
        lt_release(m->tensors[i].t);
        free(m->tensors[i].name);
    }
    for (int i = 0; i < m->nchildren; i++) {
        free_tree(m->children[i]);
        free(m->child_names[i]);
    }
    drop_data(m->data, m->free_data);
    m->parent = NULL;
    invalidate_listings(m);
    free(m->tensors);
    free(m->children);
    free(m->child_names);
    free(m->kind);
    free(m);
}

void lt_module_free(lt_module *m)
{
    if (!m)
        return;
    if (m->parent) {
        lt_error(LT_ERR_STATE, "module_free: this nn.%s module is owned by an nn.%s container; free the "
                 "container instead", m->kind, m->parent->kind);
        return;
    }
    free_tree(m);
}

/* ---- forward ------------------------------------------------------------- */

lt_tensor *lt_module_forward(lt_module *m, lt_tensor *x)
{
    if (!m) {
        if (!lt_error_pending())
            lt_error(LT_ERR_NULL, "module_forward: module is NULL");
        return NULL;
    }
    if (lt_check_tensor("module_forward", x, 1) != LT_OK)
        return NULL;
    if (!m->forward) {
        lt_error(LT_ERR_STATE, "module_forward: nn.%s has no forward function (a container: run its "
                 "children)", m->kind);
        return NULL;
    }
    /* A scope of its own drops the layer's temporaries at once; the result
     * is handed to the caller's scope. */
    lt_scope_begin();
    lt_tensor *y = m->forward(m, x);
    if (y)
        y = lt_keep(y);
    lt_scope_end();
    return y;
}
