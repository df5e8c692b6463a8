/*
 * owner.c - the thread that owns the lazy device.
 *
 * The device's state (registry, IR arena, program cache, the execution in
 * flight) is not locked: it belongs to one thread at a time, the first that
 * uses it, until that thread calls lt_lazy_release_thread() or exits (a
 * thread-specific key's destructor hands it back). Threads are numbered
 * from 1 when they first ask, so a number is never reused; the owner's OS
 * thread id is kept for messages.
 */
#include "lazy/lazy.h"

#include <unistd.h>

static atomic_uint_least64_t owner_thread; /* 0: no owner */
static atomic_int owner_tid;
static atomic_uint_least64_t threads_numbered;
/* Read several times per traced op: the initial-exec model makes it one
 * load instead of a call into the dynamic loader (8 bytes of static TLS). */
static _Thread_local uint64_t this_thread __attribute__((tls_model("initial-exec")));
static pthread_key_t owner_key;
static pthread_once_t key_once = PTHREAD_ONCE_INIT;

static uint64_t thread_number(void)
{
    if (!this_thread)
        this_thread = atomic_fetch_add(&threads_numbered, 1) + 1;
    return this_thread;
}

/* Runs when a thread that owns the device exits. */
static void owner_exits(void *thread)
{
    uint_least64_t expected = (uint64_t)(uintptr_t)thread;
    atomic_compare_exchange_strong(&owner_thread, &expected, 0);
}

static void create_key(void) { pthread_key_create(&owner_key, owner_exits); }

bool lt_lazy_try_own(void)
{
    uint64_t me = thread_number();
    uint_least64_t owner = atomic_load_explicit(&owner_thread, memory_order_acquire);
    if (owner == me)
        return true;
    if (owner == 0 && atomic_compare_exchange_strong(&owner_thread, &owner, me)) {
        atomic_store(&owner_tid, (int)gettid());
        pthread_once(&key_once, create_key);
        pthread_setspecific(owner_key, (void *)(uintptr_t)me);
        return true;
    }
    return false;
}

lt_status lt_lazy_enter(const char *op)
{
    if (lt_lazy_try_own())
        return LT_OK;
    return lt_error(LT_ERR_STATE,
                    "%s: the lazy device is in use by thread %d (this is thread %d): it runs on one thread at a "
                    "time; the owning thread hands it over with lt_lazy_release_thread() or by exiting",
                    op, atomic_load(&owner_tid), (int)gettid());
}

lt_status lt_lazy_release_thread(void)
{
    uint_least64_t owner = atomic_load_explicit(&owner_thread, memory_order_acquire);
    if (owner == 0)
        return LT_OK;
    if (owner != thread_number())
        return lt_error(LT_ERR_STATE, "lazy_release_thread: the lazy device is owned by thread %d, not by this "
                                      "thread (%d)", atomic_load(&owner_tid), (int)gettid());
    lt_status st = lt_lazy_wait(); /* no execution in flight outlives the hand-over */
    pthread_setspecific(owner_key, NULL);
    atomic_store_explicit(&owner_thread, 0, memory_order_release);
    return st;
}
