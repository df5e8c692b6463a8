/*
 * checkpoint.c - the whole training state in one safetensors file: the
 * model's state dict ("model.<name>"), the optimizer's state
 * ("optim.<name>") and learning rate ("optim.lr", 0-d f64), and the random
 * generator ("rng.state", i64 [2]: seed and counter offset, as bits), so
 * that training resumed from it repeats, bit for bit, what the saved run
 * did next (dropout masks included).
 *
 * Loading goes through lt_load_safetensors, which validates the whole file
 * and every destination before writing any tensor; the learning rate and
 * the generator are set only after it succeeded, so a bad file leaves the
 * model, the optimizer and the generator as they were.
 */
#include "nn/nn_internal.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>

/* The tensors and names of a checkpoint (names malloc'd). */
typedef struct ckpt_list {
    lt_tensor **tensors;
    char **names;
    int count, cap;
} ckpt_list;

static void list_free(ckpt_list *l)
{
    for (int i = 0; i < l->count; i++)
        free(l->names[i]);
    free(l->tensors);
    free(l->names);
}

static lt_status list_add(ckpt_list *l, const char *prefix, const char *name, lt_tensor *t, const char *op)
{
    int len = snprintf(NULL, 0, "%s%s", prefix, name) + 1;
    char *full = l->count < l->cap ? malloc((size_t)len) : NULL;
    if (!full)
        return lt_error(LT_ERR_MEMORY, "%s: out of memory", op);
    snprintf(full, (size_t)len, "%s%s", prefix, name);
    l->tensors[l->count] = t;
    l->names[l->count++] = full;
    return LT_OK;
}

/* Adds the module's state, the optimizer's state (when o is given) and
 * the two host-side entries, whose destinations the caller provides. */
static lt_status collect(const char *op, lt_module *m, lt_optimizer *o, lt_tensor *lr, lt_tensor *rng,
                         ckpt_list *l)
{
    int nm = lt_module_state(m, NULL, NULL, 0);
    int no = o ? lt_optim_state(o, NULL, NULL, 0) : 0;
    if (nm < 0 || no < 0)
        return lt_last_status();
    l->cap = nm + no + 2;
    l->tensors = calloc((size_t)l->cap, sizeof *l->tensors);
    l->names = calloc((size_t)l->cap, sizeof *l->names);
    lt_tensor **ts = calloc((size_t)l->cap, sizeof *ts);
    const char **names = calloc((size_t)l->cap, sizeof *names);
    lt_status st = l->tensors && l->names && ts && names ? LT_OK : lt_error(LT_ERR_MEMORY, "%s: out of memory", op);
    if (st == LT_OK && lt_module_state(m, ts, names, nm) < 0)
        st = lt_last_status();
    for (int i = 0; i < nm && st == LT_OK; i++)
        st = list_add(l, "model.", names[i], ts[i], op);
    if (st == LT_OK && o && lt_optim_state(o, ts, names, no) < 0)
        st = lt_last_status();
    for (int i = 0; i < no && st == LT_OK; i++)
        st = list_add(l, "optim.", names[i], ts[i], op);
    if (st == LT_OK && o)
        st = list_add(l, "optim.", "lr", lr, op);
    if (st == LT_OK)
        st = list_add(l, "rng.", "state", rng, op);
    free(ts);
    free(names);
    return st;
}

static lt_status check_args(const char *op, const char *path, lt_module *m)
{
    if (!path)
        return lt_error(LT_ERR_NULL, "%s: path is NULL", op);
    if (!m)
        return lt_error(LT_ERR_NULL, "%s: module is NULL", op);
    return LT_OK;
}

lt_status lt_checkpoint_save(const char *path, lt_module *m, lt_optimizer *o)
{
    const char *op = "checkpoint_save";
    if (check_args(op, path, m) != LT_OK)
        return lt_last_status();
    uint64_t seed, offset;
    lt_rng_get_state(&seed, &offset);
    int64_t bits[2] = {(int64_t)seed, (int64_t)offset};
    int64_t two = 2;
    lt_scope_begin();
    lt_tensor *rng = lt_from_data(bits, &two, 1, LT_I64, lt_device_cpu());
    lt_tensor *lr = o ? lt_scalar(lt_optim_lr(o), LT_F64, lt_device_cpu()) : NULL;
    ckpt_list l = {0};
    lt_status st = rng && (lr || !o) ? collect(op, m, o, lr, rng, &l) : lt_last_status();
    if (st == LT_OK)
        st = lt_save_safetensors(path, l.tensors, (const char *const *)l.names, l.count);
    list_free(&l);
    lt_scope_end();
    return st;
}

/* Reads "optim.lr" alone first, so that a value lt_optim_set_lr would
 * refuse fails the load before any tensor is written. */
static lt_status read_lr(const char *path, lt_tensor *lr, double *value)
{
    const char *name = "optim.lr";
    if (lt_load_safetensors(path, &lr, &name, 1) != LT_OK || lt_item(lr, value) != LT_OK)
        return lt_last_status();
    if (!(*value >= 0.0 && isfinite(*value)))
        return lt_error(LT_ERR_ARGUMENT, "checkpoint_load: %s: optim.lr is %g, expected a finite value >= 0",
                        path, *value);
    return LT_OK;
}

lt_status lt_checkpoint_load(const char *path, lt_module *m, lt_optimizer *o)
{
    const char *op = "checkpoint_load";
    if (check_args(op, path, m) != LT_OK)
        return lt_last_status();
    int64_t two = 2;
    lt_scope_begin();
    lt_tensor *rng = lt_zeros(&two, 1, LT_I64, lt_device_cpu());
    lt_tensor *lr = o ? lt_scalar(0.0, LT_F64, lt_device_cpu()) : NULL;
    ckpt_list l = {0};
    lt_status st = rng && (lr || !o) ? collect(op, m, o, lr, rng, &l) : lt_last_status();
    double lr_value = 0.0;
    if (st == LT_OK && o)
        st = read_lr(path, lr, &lr_value);
    if (st == LT_OK)
        st = lt_load_safetensors(path, l.tensors, (const char *const *)l.names, l.count);
    int64_t bits[2] = {0, 0};
    if (st == LT_OK)
        st = lt_copy_to_host(rng, bits, sizeof bits);
    if (st == LT_OK && o)
        st = lt_optim_set_lr(o, lr_value); /* checked by read_lr: cannot fail */
    if (st == LT_OK)
        lt_rng_set_state((uint64_t)bits[0], (uint64_t)bits[1]);
    list_free(&l);
    lt_scope_end();
    return st;
}
