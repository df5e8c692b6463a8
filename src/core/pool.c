/*
 * pool.c - the worker pool behind lt_parallel_for (see pool.h for why the
 * library does not use OpenMP's).
 *
 * One loop runs at a time. The caller publishes a job (a struct on its
 * stack), bumps `generation` and works on chunks itself; workers claim
 * chunks from `next` until none is left. The caller returns once every
 * chunk is done and no worker still looks at the job. Waiting is a short
 * spin followed by a futex sleep, both on 32-bit words.
 */
#include "core/pool.h"

#include <limits.h>
#include <linux/futex.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

/* Loops never use more chunks than this, whatever the thread count, so
 * chunk boundaries (and per-chunk partial sums) do not depend on it. */
#define MAX_CHUNKS 64
#define MAX_THREADS 256
#define DEFAULT_SPIN_US 50

typedef struct job {
    lt_range_fn fn;
    void *ctx;
    int64_t n, chunk, nchunks;
    atomic_int_fast64_t next; /* next chunk to claim */
    atomic_uint done;         /* chunks finished (futex word of the caller) */
} job;

static struct {
    pthread_mutex_t busy;       /* held while a loop runs */
    pthread_mutex_t setup;      /* guards starting and stopping workers */
    atomic_int want;            /* threads asked for (0: default) */
    int nworkers;               /* running workers */
    pthread_t workers[MAX_THREADS];
    atomic_uint generation;     /* futex word of the workers */
    _Atomic(job *) current;     /* the job being run, NULL between jobs */
    atomic_int inside;          /* workers that may be reading `current` */
    atomic_int sleepers;        /* workers asleep on `generation` */
    atomic_bool stop;
    long spin_ns;
} pool = {.busy = PTHREAD_MUTEX_INITIALIZER, .setup = PTHREAD_MUTEX_INITIALIZER, .spin_ns = -1};

static _Thread_local bool in_worker;

static void futex_wait(atomic_uint *word, unsigned expected)
{
    syscall(SYS_futex, (void *)word, FUTEX_WAIT_PRIVATE, expected, NULL, NULL, 0);
}

static void futex_wake(atomic_uint *word, int count)
{
    syscall(SYS_futex, (void *)word, FUTEX_WAKE_PRIVATE, count, NULL, NULL, 0);
}

static inline void cpu_relax(void)
{
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#endif
}

static long now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1000000000L + ts.tv_nsec;
}

/* Spins until *word != seen or the spin budget is spent; true if it changed. */
static bool spin_until_changed(atomic_uint *word, unsigned seen)
{
    long deadline = 0;
    for (unsigned i = 1;; i++) {
        if (atomic_load_explicit(word, memory_order_acquire) != seen)
            return true;
        if ((i & 63) == 0) {
            long t = now_ns();
            if (deadline == 0)
                deadline = t + pool.spin_ns;
            else if (t >= deadline)
                return false;
        }
        cpu_relax();
    }
}

/* ---- running a job ------------------------------------------------------ */

static void run_chunk(job *j, int64_t c)
{
    int64_t begin = c * j->chunk, end = begin + j->chunk < j->n ? begin + j->chunk : j->n;
    j->fn(j->ctx, begin, end, c);
}

/* Claims and runs chunks until none is left; returns how many it ran. */
static unsigned work_on(job *j)
{
    unsigned ran = 0;
    for (;;) {
        int64_t c = atomic_fetch_add(&j->next, 1);
        if (c >= j->nchunks)
            return ran;
        run_chunk(j, c);
        ran++;
        if (atomic_fetch_add(&j->done, 1) + 1 == (unsigned)j->nchunks)
            futex_wake(&j->done, 1);
    }
}

static void *worker_main(void *arg)
{
    (void)arg;
    in_worker = true;
    unsigned seen = atomic_load(&pool.generation);
    /* A worker first scheduled after stop_workers bumped `generation` has
     * just read the bumped value, so no change would ever wake it: stop is
     * set before the bump, so checking it now is enough. */
    if (atomic_load(&pool.stop))
        return NULL;
    for (;;) {
        if (!spin_until_changed(&pool.generation, seen)) {
            atomic_fetch_add(&pool.sleepers, 1);
            futex_wait(&pool.generation, seen);
            atomic_fetch_sub(&pool.sleepers, 1);
        }
        unsigned gen = atomic_load(&pool.generation);
        if (atomic_load(&pool.stop))
            return NULL;
        if (gen == seen)
            continue; /* spurious wake-up */
        seen = gen;
        /* `inside` first, then the job: the caller clears the job before
         * waiting for `inside` to drop, so a late worker sees NULL. */
        atomic_fetch_add(&pool.inside, 1);
        job *j = atomic_load(&pool.current);
        if (j)
            work_on(j);
        atomic_fetch_sub(&pool.inside, 1);
    }
}

static void wait_all_done(job *j)
{
    for (;;) {
        unsigned d = atomic_load(&j->done);
        if (d == (unsigned)j->nchunks)
            break;
        if (!spin_until_changed(&j->done, d))
            futex_wait(&j->done, d);
    }
    atomic_store(&pool.current, NULL);
    while (atomic_load(&pool.inside) > 0)
        cpu_relax();
}

/* ---- thread count and workers -------------------------------------------- */

static int env_threads(const char *name)
{
    const char *v = getenv(name);
    if (!v || !*v)
        return 0;
    char *end;
    long n = strtol(v, &end, 10);
    return (*end == '\0' || *end == ',') && n > 0 ? (int)(n < MAX_THREADS ? n : MAX_THREADS) : 0;
}

static int detect_threads(void)
{
    int n = env_threads("LT_NUM_THREADS");
    if (!n)
        n = env_threads("OMP_NUM_THREADS");
    if (!n) {
        cpu_set_t set;
        n = sched_getaffinity(0, sizeof set, &set) == 0 ? CPU_COUNT(&set) : (int)sysconf(_SC_NPROCESSORS_ONLN);
    }
    return n < 1 ? 1 : n > MAX_THREADS ? MAX_THREADS : n;
}

static int default_threads(void)
{
    static atomic_int cached;
    int n = atomic_load(&cached);
    if (n == 0) {
        n = detect_threads();
        atomic_store(&cached, n);
    }
    return n;
}

static void read_spin(void)
{
    const char *v = getenv("LT_POOL_SPIN_US");
    long us = v && *v ? strtol(v, NULL, 10) : DEFAULT_SPIN_US;
    pool.spin_ns = (us < 0 ? 0 : us > 100000 ? 100000 : us) * 1000L;
}

static void stop_workers(void)
{
    atomic_store(&pool.stop, true);
    atomic_fetch_add(&pool.generation, 1);
    futex_wake(&pool.generation, INT_MAX);
    for (int i = 0; i < pool.nworkers; i++)
        pthread_join(pool.workers[i], NULL);
    pool.nworkers = 0;
    atomic_store(&pool.stop, false);
}

static void reset_after_fork(void)
{
    /* The child has only the forking thread: forget the workers. */
    pool.nworkers = 0;
    atomic_store(&pool.current, NULL);
    atomic_store(&pool.inside, 0);
    atomic_store(&pool.sleepers, 0);
    pthread_mutex_init(&pool.busy, NULL);
    pthread_mutex_init(&pool.setup, NULL);
}

/* Starts the workers the thread count asks for (caller holds `busy`). */
static void ensure_workers(void)
{
    static bool atfork_done;
    int want = lt_pool_threads() - 1;
    if (want == pool.nworkers)
        return;
    pthread_mutex_lock(&pool.setup);
    if (!atfork_done) {
        pthread_atfork(NULL, NULL, reset_after_fork);
        atfork_done = true;
    }
    if (pool.spin_ns < 0)
        read_spin();
    if (pool.nworkers > want)
        stop_workers();
    while (pool.nworkers < want) {
        pthread_attr_t attr;
        pthread_attr_init(&attr);
        pthread_attr_setstacksize(&attr, 8u << 20); /* kernels keep index arrays on the stack */
        int rc = pthread_create(&pool.workers[pool.nworkers], &attr, worker_main, NULL);
        pthread_attr_destroy(&attr);
        if (rc != 0)
            break; /* fewer threads: still correct */
        pool.nworkers++;
    }
    pthread_mutex_unlock(&pool.setup);
}

/* ---- public ---------------------------------------------------------------- */

int64_t lt_parallel_chunks(int64_t n, int64_t grain, int64_t align)
{
    if (n <= 0)
        return 0;
    if (grain < 1)
        grain = 1;
    int64_t nchunks = n / grain;
    if (nchunks < 2)
        return 1;
    if (nchunks > MAX_CHUNKS)
        nchunks = MAX_CHUNKS;
    int64_t chunk = (n + nchunks - 1) / nchunks;
    if (align > 1)
        chunk = (chunk + align - 1) / align * align;
    return (n + chunk - 1) / chunk;
}

static int64_t chunk_size(int64_t n, int64_t nchunks, int64_t align)
{
    int64_t chunk = (n + nchunks - 1) / nchunks;
    if (align > 1 && nchunks > 1)
        chunk = (chunk + align - 1) / align * align;
    return chunk;
}

void lt_parallel_for(int64_t n, int64_t grain, int64_t align, lt_range_fn fn, void *ctx)
{
    int64_t nchunks = lt_parallel_chunks(n, grain, align);
    if (nchunks == 0)
        return;
    job j = {.fn = fn, .ctx = ctx, .n = n, .chunk = chunk_size(n, nchunks, align), .nchunks = nchunks};
    bool parallel = nchunks > 1 && !in_worker && lt_pool_threads() > 1 && pthread_mutex_trylock(&pool.busy) == 0;
    if (!parallel) {
        for (int64_t c = 0; c < nchunks; c++)
            run_chunk(&j, c);
        return;
    }
    ensure_workers();
    atomic_store(&pool.current, &j);
    atomic_fetch_add(&pool.generation, 1);
    if (atomic_load(&pool.sleepers) > 0)
        futex_wake(&pool.generation, INT_MAX);
    work_on(&j);
    wait_all_done(&j);
    pthread_mutex_unlock(&pool.busy);
}

int lt_pool_threads(void)
{
    int want = atomic_load(&pool.want);
    return want > 0 ? want : default_threads();
}

void lt_pool_set_threads(int n) { atomic_store(&pool.want, n <= 0 ? 0 : n > MAX_THREADS ? MAX_THREADS : n); }
