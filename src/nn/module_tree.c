/*
 * module_tree.c - what a module gets from its registered tensors and
 * children, for built-in layers and user modules alike: the flattened
 * listings with dotted names (lt_module_parameters, lt_module_state), lookups
 * by dotted name, train/eval, zero_grad and moving to another device.
 *
 * Listings: lt_module_parameters lists every parameter (own tensors first,
 * then each child's, recursively, in the order they were added) with names
 * "<child>.<...>.<name>"; lt_module_state lists the same parameters and then
 * every buffer in the same order. The handles are borrowed (no reference is
 * added). They stay valid until the module is freed, also across
 * lt_module_to, which moves each tensor in place (the handle is kept, its
 * data moves), so an optimizer made before a move keeps updating the
 * model. The names stay valid until the module is freed or a tensor or
 * child is added to it or one of its children.
 */
#include "autograd/autograd.h"
#include "nn/nn_internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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
    size_t len = strlen(prefix) + strlen(owner->tensors[slot].name) + 1;
    char *name = malloc(len);
    if (!name) {
        l->failed = true;
        return;
    }
    snprintf(name, len, "%s%s", prefix, owner->tensors[slot].name);
    l->items[l->count++] = (lt_nn_entry){owner, slot, name};
}

/* Appends m's parameters (buffers == false) or buffers, recursively. */
static void collect(lt_module *m, const char *prefix, bool buffers, entry_list *l)
{
    for (int i = 0; i < m->ntensors; i++)
        if (m->tensors[i].buffer == buffers)
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

/* Builds m->entries on first use (and after the structure changed). */
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

static lt_tensor *entry_tensor(const lt_nn_entry *e) { return e->owner->tensors[e->slot].t; }

/* Checks m and builds its listing; false with the error set. */
static bool listing_of(const char *op, lt_module *m)
{
    if (!m) {
        if (!lt_error_pending())
            lt_error(LT_ERR_NULL, "%s: module is NULL", op);
        return false;
    }
    return ensure_entries(m, op) == LT_OK;
}

lt_status lt_nn_check_list_args(const char *op, lt_tensor **tensors, const char **names, int max)
{
    if (max < 0)
        return lt_error(LT_ERR_ARGUMENT, "%s: max is %d, expected >= 0", op, max);
    if (max > 0 && !tensors && !names)
        return lt_error(LT_ERR_NULL, "%s: tensors and names are both NULL with max = %d", op, max);
    return LT_OK;
}

static int list_entries(const char *op, lt_module *m, bool with_buffers, lt_tensor **tensors,
                        const char **names, int max)
{
    if (!listing_of(op, m) || lt_nn_check_list_args(op, tensors, names, max) != LT_OK)
        return -1;
    int total = with_buffers ? m->nentries : m->nparams;
    for (int i = 0; i < total && i < max; i++) {
        if (tensors)
            tensors[i] = entry_tensor(&m->entries[i]);
        if (names)
            names[i] = m->entries[i].name;
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

/* ---- lookups ------------------------------------------------------------- */

lt_tensor *lt_module_tensor(lt_module *m, const char *name)
{
    if (!listing_of("module_tensor", m))
        return NULL;
    if (!name) {
        lt_error(LT_ERR_NULL, "module_tensor: name is NULL");
        return NULL;
    }
    for (int i = 0; i < m->nentries; i++)
        if (strcmp(m->entries[i].name, name) == 0)
            return entry_tensor(&m->entries[i]);
    lt_error(LT_ERR_ARGUMENT, "module_tensor: nn.%s has no parameter or buffer named \"%s\"", m->kind, name);
    return NULL;
}

/* The direct child of m named by the first `len` bytes of name, or NULL. */
static lt_module *child_named(const lt_module *m, const char *name, size_t len)
{
    for (int i = 0; i < m->nchildren; i++)
        if (strlen(m->child_names[i]) == len && strncmp(m->child_names[i], name, len) == 0)
            return m->children[i];
    return NULL;
}

lt_module *lt_module_child(lt_module *m, const char *name)
{
    if (!m || !name) {
        lt_error(LT_ERR_NULL, "module_child: %s is NULL", m ? "name" : "module");
        return NULL;
    }
    lt_module *at = m;
    for (const char *p = name; at;) {
        const char *dot = strchr(p, '.');
        size_t len = dot ? (size_t)(dot - p) : strlen(p);
        at = child_named(at, p, len);
        if (!dot)
            break;
        p = dot + 1;
    }
    if (!at)
        lt_error(LT_ERR_ARGUMENT, "module_child: nn.%s has no child module named \"%s\"", m->kind, name);
    return at;
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

bool lt_module_is_training(const lt_module *m)
{
    if (!m) {
        lt_error(LT_ERR_NULL, "module_is_training: module is NULL");
        return false;
    }
    return m->training;
}

lt_status lt_module_zero_grad(lt_module *m)
{
    if (!listing_of("module_zero_grad", m))
        return lt_last_status();
    for (int i = 0; i < m->nparams; i++)
        if (lt_zero_grad(entry_tensor(&m->entries[i])) != LT_OK)
            return lt_last_status();
    return LT_OK;
}

/* ---- moving -------------------------------------------------------------- */

lt_status lt_module_to(lt_module *m, lt_device dev)
{
    if (!m)
        return lt_error(LT_ERR_NULL, "module_to: module is NULL");
    if (lt_nn_check_device("module_to", dev) != LT_OK || !listing_of("module_to", m))
        return lt_last_status();
    lt_tensor **ts = malloc(sizeof *ts * (size_t)(m->nentries + 1));
    if (!ts)
        return lt_error(LT_ERR_MEMORY, "module_to: out of memory");
    for (int i = 0; i < m->nentries; i++)
        ts[i] = entry_tensor(&m->entries[i]);
    lt_status st = lt_move_tensors("module_to", ts, m->nentries, dev);
    free(ts);
    return st;
}
