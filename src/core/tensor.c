/*
 * tensor.c - tensor handles, refcounted storage and scopes.
 *
 * Handles come from slabs and are never returned to the OS. A dead handle
 * is marked and put at the tail of a FIFO quarantine, and is reused only
 * once the quarantine is long, so a use after release finds the dead mark
 * and is reported instead of touching freed memory.
 */
#include "core/core.h"

#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define SLAB_HANDLES 1024
#define QUARANTINE_MIN 4096

typedef struct slab {
    struct slab *next;
    lt_tensor handles[SLAB_HANDLES];
} slab;

/*
 * The handle lock guards a few pointer moves per handle (and, rarely, a
 * slab allocation or a walk of all handles). Every op takes it twice, so it
 * is a spin lock: one atomic exchange to take, one store to give back,
 * where an uncontended mutex costs some fifty instructions per pair. A
 * thread that finds it held spins briefly, then yields the CPU, so a
 * holder that was preempted gets to run.
 */
static atomic_bool handle_lock_held;

static void lock_handles(void)
{
    int spins = 0;
    while (atomic_exchange_explicit(&handle_lock_held, true, memory_order_acquire)) {
        while (atomic_load_explicit(&handle_lock_held, memory_order_relaxed)) {
            if (++spins > 100)
                sched_yield();
        }
    }
}

static void unlock_handles(void) { atomic_store_explicit(&handle_lock_held, false, memory_order_release); }
static slab *slabs;
static int slab_used = SLAB_HANDLES; /* handles handed out of the newest slab */
static lt_tensor *quarantine_head, *quarantine_tail;
static int64_t quarantine_len;
static atomic_llong live_handles;
static atomic_ullong next_tensor_id = 1;
static lt_tensor_death_hook death_hooks[2];
static lt_autograd_release_hook autograd_hook;
static lt_device_guard_hook guard_hooks[2];

void lt_set_autograd_release_hook(lt_autograd_release_hook hook) { autograd_hook = hook; }

void lt_set_tensor_death_hook(lt_device_kind kind, lt_tensor_death_hook hook)
{
    if (kind == LT_DEVICE_CPU || kind == LT_DEVICE_LAZY)
        death_hooks[kind] = hook;
}

void lt_set_device_guard_hook(lt_device_kind kind, lt_device_guard_hook hook)
{
    if (kind == LT_DEVICE_CPU || kind == LT_DEVICE_LAZY)
        guard_hooks[kind] = hook;
}

/* May this thread drop a reference to t? (see lt_device_guard_hook) */
static lt_status guard_drop(const lt_tensor *t, const char *op)
{
    int kind = t->device.kind;
    if ((kind == LT_DEVICE_CPU || kind == LT_DEVICE_LAZY) && guard_hooks[kind])
        return guard_hooks[kind](op);
    return LT_OK;
}

/* The quarantine hands out handles released thousands of allocations ago,
 * long gone from the cache: fetch the next one while the caller works on
 * this one, so the next handle_get and its memset do not wait on memory. */
static inline void prefetch_handle(const lt_tensor *t)
{
#if defined(__GNUC__)
    if (t)
        for (size_t off = 0; off < sizeof *t; off += 64)
            __builtin_prefetch((const char *)t + off, 1);
#else
    (void)t;
#endif
}

static lt_tensor *handle_get(void)
{
    lt_tensor *t = NULL;
    lock_handles();
    if (quarantine_len > QUARANTINE_MIN) {
        t = quarantine_head;
        quarantine_head = t->next_free;
        if (!quarantine_head)
            quarantine_tail = NULL;
        quarantine_len--;
        prefetch_handle(quarantine_head);
    } else {
        if (slab_used == SLAB_HANDLES) {
            slab *s = calloc(1, sizeof *s);
            if (!s) {
                unlock_handles();
                lt_error(LT_ERR_MEMORY, "tensor: out of memory for tensor handles");
                return NULL;
            }
            s->next = slabs;
            slabs = s;
            slab_used = 0;
        }
        t = &slabs->handles[slab_used++];
    }
    unlock_handles();
    memset(t, 0, sizeof *t);
    return t;
}

static void handle_put(lt_tensor *t)
{
    t->magic = LT_TENSOR_DEAD;
    t->next_free = NULL;
    lock_handles();
    if (quarantine_tail)
        quarantine_tail->next_free = t;
    else
        quarantine_head = t;
    quarantine_tail = t;
    quarantine_len++;
    unlock_handles();
}

int64_t lt_live_tensor_count(void) { return atomic_load(&live_handles); }

void lt_tensor_foreach_live(void (*fn)(const lt_tensor *t, void *ctx), void *ctx)
{
    lock_handles();
    for (const slab *s = slabs; s; s = s->next) {
        int used = s == slabs ? slab_used : SLAB_HANDLES;
        for (int i = 0; i < used; i++)
            if (s->handles[i].magic == LT_TENSOR_MAGIC)
                fn(&s->handles[i], ctx);
    }
    unlock_handles();
}

static void set_meta(lt_tensor *t, const lt_meta *m, lt_device dev)
{
    t->magic = LT_TENSOR_MAGIC;
    atomic_init(&t->refcount, 1);
    atomic_init(&t->holds, 1); /* the one hold of all user references */
    t->dtype = m->dtype;
    t->ndim = m->ndim;
    lt_dims_copy_masked(t->shape, m->shape, m->ndim); /* sizes past ndim stay 0 */
    lt_contiguous_strides(t->shape, t->ndim, t->strides);
    t->device = dev;
    t->weak = m->weak;
    t->id = atomic_fetch_add(&next_tensor_id, 1);
    atomic_fetch_add(&live_handles, 1);
}

lt_tensor *lt_tensor_new_handle(const lt_meta *m, lt_device dev)
{
    lt_tensor *t = handle_get();
    if (t)
        set_meta(t, m, dev);
    return t;
}

lt_tensor *lt_tensor_alloc(const lt_meta *m, lt_device dev, const char *op)
{
    if (lt_check_shape(op, m->shape, m->ndim, (lt_dtype)m->dtype) != LT_OK)
        return NULL;
    size_t nbytes = (size_t)lt_shape_numel(m->shape, m->ndim) * lt_dtype_size((lt_dtype)m->dtype);
    lt_storage *s = lt_storage_new(nbytes, dev, op);
    if (!s)
        return NULL;
    lt_tensor *t = lt_tensor_new_handle(m, dev);
    if (!t) {
        lt_storage_unref(s);
        return NULL;
    }
    t->storage = s;
    return t;
}

void lt_tensor_swap_payload(lt_tensor *to, lt_tensor *from)
{
    lt_tensor keep = *to;
    memcpy(to->strides, from->strides, sizeof to->strides);
    to->offset = from->offset;
    to->device = from->device;
    to->storage = from->storage;
    to->lazy = from->lazy;
    memcpy(from->strides, keep.strides, sizeof from->strides);
    from->offset = keep.offset;
    from->device = keep.device;
    from->storage = keep.storage;
    from->lazy = keep.lazy;
}

lt_tensor *lt_tensor_view_of(lt_tensor *base, const int64_t *shape, const int64_t *strides,
                             int ndim, int64_t offset)
{
    lt_meta m = lt_meta_make((lt_dtype)base->dtype, shape, ndim);
    lt_tensor *t = lt_tensor_new_handle(&m, base->device);
    if (!t)
        return NULL;
    memcpy(t->strides, strides, sizeof(int64_t) * (size_t)ndim);
    t->offset = offset;
    t->storage = base->storage;
    if (t->storage)
        atomic_fetch_add(&t->storage->refcount, 1);
    return t;
}

lt_storage *lt_storage_new(size_t nbytes, lt_device dev, const char *op)
{
    lt_storage *s = malloc(sizeof *s);
    if (!s) {
        lt_error(LT_ERR_MEMORY, "%s: out of memory", op);
        return NULL;
    }
    s->data = lt_alloc(nbytes, op);
    if (!s->data) {
        free(s);
        return NULL;
    }
    atomic_init(&s->refcount, 1);
    atomic_init(&s->version, 0);
    s->nbytes = nbytes;
    s->device = dev;
    s->release = NULL;
    s->release_ctx = NULL;
    return s;
}

lt_storage *lt_storage_placeholder(size_t nbytes, const char *op)
{
    lt_storage *s = malloc(sizeof *s);
    if (!s) {
        lt_error(LT_ERR_MEMORY, "%s: out of memory", op);
        return NULL;
    }
    atomic_init(&s->refcount, 1);
    atomic_init(&s->version, 0);
    s->data = NULL;
    s->nbytes = nbytes;
    s->device = (lt_device){LT_DEVICE_INVALID, 0};
    s->release = NULL;
    s->release_ctx = NULL;
    return s;
}

void lt_storage_unref(lt_storage *s)
{
    if (s && atomic_fetch_sub(&s->refcount, 1) == 1) {
        if (s->release)
            s->release(s->release_ctx);
        else
            lt_free(s->data);
        free(s);
    }
}

void lt_tensor_unref(lt_tensor *t)
{
    if (atomic_fetch_sub(&t->refcount, 1) != 1)
        return;
    /* Dead for its user, whatever still holds it. The user's hold goes
     * once: a held handle whose user is gone may still be retained and
     * released again by the library (a barrier keeping its roots). */
    bool user_alive = t->magic == LT_TENSOR_MAGIC;
    t->magic = LT_TENSOR_DEAD;
    if (user_alive)
        lt_tensor_drop(t);
}

void lt_tensor_hold(lt_tensor *t) { atomic_fetch_add(&t->holds, 1); }

void lt_tensor_drop(lt_tensor *t)
{
    if (atomic_fetch_sub(&t->holds, 1) != 1)
        return;
    if (t->autograd && autograd_hook)
        autograd_hook(t);
    int kind = t->device.kind;
    if ((kind == LT_DEVICE_CPU || kind == LT_DEVICE_LAZY) && death_hooks[kind])
        death_hooks[kind](t);
    lt_storage_unref(t->storage);
    t->storage = NULL;
    atomic_fetch_sub(&live_handles, 1);
    handle_put(t);
}

lt_status lt_check_tensor_failed(const char *op, const lt_tensor *t, int arg_index)
{
    if (!t) {
        if (lt_error_pending())
            return lt_last_status(); /* keep the first message of a chain */
        return lt_error(LT_ERR_NULL, "%s: argument %d is NULL", op, arg_index);
    }
    if (t->magic == LT_TENSOR_DEAD)
        return lt_error(LT_ERR_RELEASED, "%s: argument %d was used after its last reference was released",
                        op, arg_index);
    if (t->magic != LT_TENSOR_MAGIC)
        return lt_error(LT_ERR_ARGUMENT, "%s: argument %d is not a tensor handle", op, arg_index);
    return LT_OK;
}

lt_meta lt_meta_make(lt_dtype dt, const int64_t *shape, int ndim)
{
    lt_meta m;
    memset(&m, 0, sizeof m); /* the padding too: metas may be compared or hashed whole */
    lt_meta_fill(&m, (int32_t)dt, shape, ndim, 0);
    return m;
}

bool lt_tensor_contiguous(const lt_tensor *t)
{
    int64_t expected = 1;
    for (int i = t->ndim - 1; i >= 0; i--) {
        if (t->shape[i] == 1)
            continue;
        if (t->shape[i] == 0)
            return true;
        if (t->strides[i] != expected)
            return false;
        expected *= t->shape[i];
    }
    return true;
}

/* ---- scopes ------------------------------------------------------------- */

typedef struct scope_entry {
    lt_tensor *t;
    uint64_t id; /* detects a handle released and reused behind the scope */
} scope_entry;

typedef struct scope_frame {
    scope_entry *items;
    int64_t count, cap;
} scope_frame;

static _Thread_local scope_frame *frames;
static _Thread_local int frame_count, frame_cap;
/* Scopes opened while no frame could be allocated: their tensors go to the
 * innermost real frame, and their ends only count down. */
static _Thread_local int frame_overflow;

static bool frame_push(scope_frame *f, lt_tensor *t)
{
    if (f->count == f->cap) {
        int64_t cap = f->cap ? f->cap * 2 : 64;
        scope_entry *items = realloc(f->items, sizeof *items * (size_t)cap);
        if (!items)
            return false;
        f->items = items;
        f->cap = cap;
    }
    f->items[f->count].t = t;
    f->items[f->count].id = t->id;
    f->count++;
    return true;
}

lt_tensor *lt_tensor_publish(lt_tensor *t)
{
    if (!t || frame_count == 0)
        return t;
    if (!frame_push(&frames[frame_count - 1], t)) {
        lt_tensor_unref(t);
        lt_error(LT_ERR_MEMORY, "scope: out of memory recording a tensor");
        return NULL;
    }
    return t;
}

void lt_scope_begin(void)
{
    if (frame_overflow > 0 || frame_count == frame_cap) {
        int cap = frame_cap ? frame_cap * 2 : 16;
        scope_frame *f = frame_overflow > 0 ? NULL : realloc(frames, sizeof *f * (size_t)cap);
        if (!f) {
            frame_overflow++;
            lt_error(LT_ERR_MEMORY, "scope_begin: out of memory: this scope's tensors stay in the "
                                    "enclosing scope");
            return;
        }
        memset(f + frame_cap, 0, sizeof *f * (size_t)(cap - frame_cap));
        frames = f;
        frame_cap = cap;
    }
    frames[frame_count++].count = 0;
}

lt_status lt_scope_end(void)
{
    if (frame_overflow > 0) {
        frame_overflow--;
        return LT_OK;
    }
    if (frame_count == 0)
        return lt_error(LT_ERR_STATE, "scope_end: no scope is open");
    scope_frame *f = &frames[--frame_count];
    bool over_released = false;
    int64_t refused = 0;
    for (int64_t i = 0; i < f->count; i++) {
        lt_tensor *t = f->items[i].t;
        if (t->magic != LT_TENSOR_MAGIC || t->id != f->items[i].id) {
            over_released = true;
            continue;
        }
        if (guard_drop(t, "scope_end") != LT_OK) {
            refused++; /* left alive: dropping it here would race its device's owner */
            continue;
        }
        lt_tensor_unref(t);
    }
    f->count = 0;
    if (frame_count == 0) { /* outermost scope closed: give memory back */
        for (int i = 0; i < frame_cap; i++)
            free(frames[i].items);
        free(frames);
        frames = NULL;
        frame_cap = 0;
    }
    if (refused > 0) {
        char why[512];
        snprintf(why, sizeof why, "%s", lt_last_error());
        return lt_error(LT_ERR_STATE, "scope_end: %lld tensors of this scope were not released: %s",
                        (long long)refused, why);
    }
    if (over_released)
        return lt_error(LT_ERR_RELEASED, "scope_end: a tensor owned by the scope had already been "
                                         "released with lt_release (one release too many)");
    return LT_OK;
}

int lt_scope_depth(void) { return frame_count + frame_overflow; }

/* Takes t's entry out of the innermost frame (the newest match: results are
 * pushed at the end, so it is usually the last one). */
static bool frame_take(scope_frame *f, const lt_tensor *t)
{
    for (int64_t i = f->count - 1; i >= 0; i--) {
        if (f->items[i].t != t || f->items[i].id != t->id)
            continue;
        memmove(&f->items[i], &f->items[i + 1], sizeof *f->items * (size_t)(f->count - i - 1));
        f->count--;
        return true;
    }
    return false;
}

lt_tensor *lt_persist(lt_tensor *t)
{
    if (lt_check_tensor("persist", t, 0) != LT_OK)
        return NULL;
    if (frame_count == 0) /* no scope: the reference is the caller's already */
        return t;
    if (frame_take(&frames[frame_count - 1], t))
        return t;
    lt_error(LT_ERR_STATE, "persist: tensor %llu is not owned by the innermost scope (pass the result of a "
             "call made in this scope; to share a tensor owned elsewhere use lt_retain)",
             (unsigned long long)t->id);
    return NULL;
}

lt_tensor *lt_retain(lt_tensor *t)
{
    if (!t || lt_check_tensor("retain", t, 0) != LT_OK)
        return NULL;
    atomic_fetch_add(&t->refcount, 1);
    return t;
}

void lt_release(lt_tensor *t)
{
    if (!t || lt_check_tensor("release", t, 0) != LT_OK || guard_drop(t, "release") != LT_OK)
        return;
    lt_tensor_unref(t);
}

lt_tensor *lt_keep(lt_tensor *t)
{
    if (lt_check_tensor("keep", t, 0) != LT_OK)
        return NULL;
    atomic_fetch_add(&t->refcount, 1);
    /* the parent of the innermost scope: the innermost real frame when that
     * scope could not get a frame of its own */
    int parent = frame_overflow > 0 ? frame_count - 1 : frame_count - 2;
    if (parent >= 0 && !frame_push(&frames[parent], t)) {
        lt_tensor_unref(t);
        lt_error(LT_ERR_MEMORY, "keep: out of memory");
        return NULL;
    }
    return t;
}

int lt_tensor_refcount(const lt_tensor *t)
{
    if (lt_check_tensor("tensor_refcount", t, 0) != LT_OK)
        return -1;
    return atomic_load(&((lt_tensor *)t)->refcount);
}
