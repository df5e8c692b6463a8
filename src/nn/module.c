/*
 * module.c - the lt_module machinery: creating modules, owning their
 * parameters, buffers and children, listing them with dotted names,
 * train/eval switching, moving to another device, freeing, and the
 * generic forward entry point lt_module_forward.
 *
 * Listings: lt_module_parameters lists every parameter (own tensors first,
 * then each child's, recursively, in the order they were added) with names
 * "<child>.<...>.<name>"; lt_module_state lists the same parameters and then
 * every buffer in the same order. The handles are borrowed (no reference is
 * added); they and the names stay valid until the module is freed or moved
 * with lt_module_to (which replaces the tensors, keeping the names).
 *
 * lt_module_to copies each tensor not yet on the target device, all or
 * nothing, and releases the old ones: an optimizer created before the move
 * still holds (and would update) the old tensors, so move a model before
 * building its optimizer. Gradients are not carried over.
 */
#include "nn/nn_internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- creation ------------------------------------------------------------ */

lt_module *lt_nn_module_new(const char *kind, lt_nn_forward_fn forward)
{
    lt_module *m = calloc(1, sizeof *m);
    if (!m) {
        lt_error(LT_ERR_MEMORY, "nn.%s: out of memory", kind);
        return NULL;
    }
    m->kind = kind;
    m->forward = forward;
    m->training = true;
    return m;
}

lt_status lt_nn_module_add_tensor(lt_module *m, const char *name, lt_tensor *t, bool buffer)
{
    if (!t)
        return lt_error_pending() ? lt_last_status()
                                  : lt_error(LT_ERR_NULL, "nn.%s: tensor \"%s\" is NULL", m->kind, name);
    if (m->ntensors == LT_NN_MAX_OWN) {
        lt_release(t);
        return lt_error(LT_ERR_STATE, "nn.%s: more than %d tensors", m->kind, LT_NN_MAX_OWN);
    }
    m->tensors[m->ntensors] = t;
    m->tensor_names[m->ntensors] = name;
    m->is_buffer[m->ntensors] = buffer;
    m->ntensors++;
    return buffer ? LT_OK : lt_set_requires_grad(t, true);
}

lt_status lt_nn_module_add_child(lt_module *m, const char *name, lt_module *child)
{
    if (!child)
        return lt_error_pending() ? lt_last_status()
                                  : lt_error(LT_ERR_NULL, "nn.%s: child \"%s\" is NULL", m->kind, name);
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
    return LT_OK;
}

lt_status lt_nn_check_device(const char *op, lt_device dev)
{
    bool ok = dev.index == 0 &&
              (dev.kind == LT_DEVICE_CPU || (dev.kind == LT_DEVICE_LAZY && lt_lazy_device_available));
    if (ok)
        return LT_OK;
    char buf[32];
    return lt_error(LT_ERR_DEVICE, "%s: device %s is not available (expected cpu:0 or lazy:0)", op,
                    lt_device_str(dev, buf, sizeof buf));
}

/* The first tensor owned by m or its descendants, or NULL. */
static lt_tensor *first_tensor(const lt_module *m)
{
    if (m->ntensors > 0)
        return m->tensors[0];
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

static void free_tree(lt_module *m)
{
    for (int i = 0; i < m->ntensors; i++)
        lt_release(m->tensors[i]);
    for (int i = 0; i < m->nchildren; i++) {
        free_tree(m->children[i]);
        free(m->child_names[i]);
    }
    for (int i = 0; i < m->nentries; i++)
        free(m->entries[i].name);
    free(m->entries);
    free(m->children);
    free(m->child_names);
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

/* ---- listing ------------------------------------------------------------- */

typedef struct entry_list {
    lt_nn_entry *items;
    int count, cap;
    bool failed;
} entry_list;

static void entry_push(entry_list *l, lt_module *owner, int slot, const char *prefix)
{
    if (l->failed)
        return;
    if (l->count == l->cap) {
        int cap = l->cap ? 2 * l->cap : 8;
        lt_nn_entry *items = realloc(l->items, sizeof *items * (size_t)cap);
        if (!items) {
            l->failed = true;
            return;
        }
        l->items = items;
        l->cap = cap;
    }
    size_t len = strlen(prefix) + strlen(owner->tensor_names[slot]) + 1;
    char *name = malloc(len);
    if (!name) {
        l->failed = true;
        return;
    }
    snprintf(name, len, "%s%s", prefix, owner->tensor_names[slot]);
    l->items[l->count++] = (lt_nn_entry){owner, slot, name};
}

/* Appends m's parameters (buffers == false) or buffers, recursively. */
static void collect(lt_module *m, const char *prefix, bool buffers, entry_list *l)
{
    for (int i = 0; i < m->ntensors; i++)
        if (m->is_buffer[i] == buffers)
            entry_push(l, m, i, prefix);
    for (int c = 0; c < m->nchildren && !l->failed; c++) {
        size_t len = strlen(prefix) + strlen(m->child_names[c]) + 2;
        char *sub = malloc(len);
        if (!sub) {
            l->failed = true;
            return;
        }
        snprintf(sub, len, "%s%s.", prefix, m->child_names[c]);
        collect(m->children[c], sub, buffers, l);
        free(sub);
    }
}

/* Builds m->entries on first use. */
static lt_status ensure_entries(lt_module *m, const char *op)
{
    if (m->entries || (m->ntensors == 0 && m->nchildren == 0))
        return LT_OK;
    entry_list l = {0};
    collect(m, "", false, &l);
    int nparams = l.count;
    collect(m, "", true, &l);
    if (l.failed) {
        for (int i = 0; i < l.count; i++)
            free(l.items[i].name);
        free(l.items);
        return lt_error(LT_ERR_MEMORY, "%s: out of memory", op);
    }
    m->entries = l.items;
    m->nentries = l.count;
    m->nparams = nparams;
    return LT_OK;
}

static int list_entries(const char *op, lt_module *m, bool with_buffers, lt_tensor **tensors,
                        const char **names, int max)
{
    if (!m) {
        if (!lt_error_pending())
            lt_error(LT_ERR_NULL, "%s: module is NULL", op);
        return -1;
    }
    if (max < 0) {
        lt_error(LT_ERR_ARGUMENT, "%s: max is %d, expected >= 0", op, max);
        return -1;
    }
    if (max > 0 && !tensors && !names) {
        lt_error(LT_ERR_NULL, "%s: tensors and names are both NULL with max = %d", op, max);
        return -1;
    }
    if (ensure_entries(m, op) != LT_OK)
        return -1;
    int total = with_buffers ? m->nentries : m->nparams;
    for (int i = 0; i < total && i < max; i++) {
        const lt_nn_entry *e = &m->entries[i];
        if (tensors)
            tensors[i] = e->owner->tensors[e->slot];
        if (names)
            names[i] = e->name;
    }
    return total;
}

int lt_module_parameters(lt_module *m, lt_tensor **params, const char **names, int max)
{
    return list_entries("module_parameters", m, false, params, names, max);
}

int lt_module_state(lt_module *m, lt_tensor **tensors, const char **names, int max)
{
    return list_entries("module_state", m, true, tensors, names, max);
}

/* ---- behaviour ----------------------------------------------------------- */

void lt_module_train(lt_module *m, bool training)
{
    if (!m) {
        lt_error(LT_ERR_NULL, "module_train: module is NULL");
        return;
    }
    m->training = training;
    for (int i = 0; i < m->nchildren; i++)
        lt_module_train(m->children[i], training);
}

lt_tensor *lt_module_forward(lt_module *m, lt_tensor *x)
{
    if (!m) {
        if (!lt_error_pending())
            lt_error(LT_ERR_NULL, "module_forward: module is NULL");
        return NULL;
    }
    if (lt_check_tensor("module_forward", x, 1) != LT_OK)
        return NULL;
    /* A scope of its own drops the layer's temporaries at once; the result
     * is handed to the caller's scope. */
    lt_scope_begin();
    lt_tensor *y = m->forward(m, x);
    if (y)
        y = lt_keep(y);
    lt_scope_end();
    return y;
}

/* ---- moving -------------------------------------------------------------- */

/* Copies every tensor not yet on dev into moved[i] (retained), or leaves
 * moved[i] NULL when it is already there. All or nothing. */
static lt_status copy_all(lt_module *m, lt_device dev, lt_tensor **moved)
{
    lt_status status = LT_OK;
    lt_no_grad_begin();
    lt_scope_begin();
    for (int i = 0; i < m->nentries && status == LT_OK; i++) {
        lt_tensor *t = m->entries[i].owner->tensors[m->entries[i].slot];
        if (lt_device_equal(lt_tensor_device(t), dev))
            continue;
        moved[i] = lt_retain(lt_to(t, dev));
        if (!moved[i])
            status = lt_last_status();
    }
    lt_scope_end();
    lt_no_grad_end();
    if (status != LT_OK)
        for (int i = 0; i < m->nentries; i++)
            lt_release(moved[i]);
    return status;
}

lt_status lt_module_to(lt_module *m, lt_device dev)
{
    if (!m)
        return lt_error(LT_ERR_NULL, "module_to: module is NULL");
    if (lt_nn_check_device("module_to", dev) != LT_OK || ensure_entries(m, "module_to") != LT_OK)
        return lt_last_status();
    if (m->nentries == 0)
        return LT_OK;
    lt_tensor **moved = calloc((size_t)m->nentries, sizeof *moved);
    if (!moved)
        return lt_error(LT_ERR_MEMORY, "module_to: out of memory");
    lt_status status = copy_all(m, dev, moved);
    for (int i = 0; i < m->nentries && status == LT_OK; i++) {
        if (!moved[i])
            continue;
        lt_nn_entry *e = &m->entries[i];
        if (!e->owner->is_buffer[e->slot])
            lt_set_requires_grad(moved[i], true);
        lt_release(e->owner->tensors[e->slot]);
        e->owner->tensors[e->slot] = moved[i];
    }
    free(moved);
    return status;
}
