/*
 * tiered.c - the "tiered" backend: a fast first tier while the optimized
 * program is built.
 *
 * Compiling a new graph with the cpu backend waits for the system C
 * compiler (`cc -O3`): a third of a second for an MLP step, seconds for a
 * transformer. The tiered backend hides that wait. For a graph it meets it
 * asks the cpu backend for the quick part of a compile (a plan-cache
 * lookup: compile_start). A program found there is used at once (no first
 * tier); schedule, memory plan and render are part of the slow part. Otherwise the graph runs
 * on the interp backend (eager kernels, no compile) from its first
 * execution on, and one background thread builds the native program
 * (compile_finish); once built, later executions use it.
 *
 * The swap is safe between executions: each execution reads the native
 * pointer once, when it starts, and runs entirely on the tier it found, so
 * an execution in flight on interp finishes on interp while the native
 * program is installed; the interp executable is freed once native took
 * over and the last run on it has ended. The background thread works on
 * the cpu executable alone (it owns a copy of the graph) and never touches
 * lazy-layer state.
 *
 * Scheduling: one worker thread, one build at a time (a build already runs
 * up to two compiler processes). A build starts once the first tier is
 * quiet (see IDLE_MS), so that the compiler does not slow down the result
 * the user waits for first. Among queued graphs it builds first the one
 * that has run most often on interp (ties: the most recent), so the
 * repeated training step overtakes one-off graphs such as initializers.
 *
 * Failure: a build that fails (a compile error, LT_CC_TIMEOUT) leaves the
 * graph on interp for good. The compiler driver counts it (CompileErrors)
 * as for the cpu backend; the first failure is also printed as a warning,
 * since no barrier is there to report it.
 *
 * Exit: an atexit handler drops the queued builds and joins the worker
 * after the build it is running (bounded by LT_CC_TIMEOUT), so nothing is
 * left running or leaked; that build still lands in the disk cache.
 *
 * Counters: "BackgroundCompiles" (native builds queued), "InterpTierRuns"
 * (executions on the interp tier while the native program was not ready),
 * "TierSwaps" (native programs installed by a background build),
 * "BackgroundCompileFailures"; timer "BackgroundCompileTime".
 */
#include "backend/backend.h"
#include "compiler/compiler.h"
#include "lazy/lazy.h"

#include <math.h>
#include <pthread.h>
#include <stdlib.h>
#include <time.h>

typedef struct tier_job tier_job;

/* The executable of one graph. */
typedef struct tier_exe {
    _Atomic(void *) native;  /* cpu executable, once it can run */
    void *first;             /* interp executable until native took over and no
                              * run uses it any more (under tier_lock) */
    int first_users;         /* runs on `first` now (under tier_lock) */
    atomic_llong first_runs; /* executions completed on the interp tier */
    tier_job *job;           /* its background build (under tier_lock) */
} tier_exe;

/* A background build of one cpu executable. */
struct tier_job {
    tier_exe *owner; /* NULL once the owner was released during the build */
    void *exe;       /* the cpu executable to finish */
    uint64_t seq;    /* queue order */
    tier_job *next;
};

static pthread_mutex_t tier_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t tier_wake = PTHREAD_COND_INITIALIZER; /* the worker: work or shutdown */
static pthread_cond_t tier_idle = PTHREAD_COND_INITIALIZER; /* waiters: a build ended */
static tier_job *queue;        /* builds not started */
static tier_job *running;      /* the build in progress */
static uint64_t next_seq;
static bool worker_started, shutting_down;
/* When builds may start. The compiler should not compete with the result
 * the user waits for first, which may take several executions (a step
 * barrier runs an index-check program, then the step). So a build waits
 * until the first tier is quiet: no interp execution and no quick compile
 * running, and none for IDLE_MS. A graph that has already run twice on
 * interp (a training loop, whose steps follow each other closer than that)
 * needs only the first condition, so its build cannot starve. */
#define IDLE_MS 5.0
static int first_active;    /* interp executions running */
static int quick_active;    /* tiered_compile calls running */
static double last_busy_ms; /* when the last of them ended (lt_now_ms) */
static pthread_t worker;

static const lt_backend *first_tier(void) { return lt_backend_interp(); }
static const lt_backend *second_tier(void) { return lt_backend_cpu(); }

/* ---- the worker ---------------------------------------------------------- */

/* May job j start at time now? (see IDLE_MS) */
static bool eligible_locked(const tier_job *j, double now)
{
    if (first_active > 0 || quick_active > 0)
        return false;
    return atomic_load(&j->owner->first_runs) >= 2 || now - last_busy_ms >= IDLE_MS;
}

/* The job to build next, unlinked (NULL: none may start yet): among those
 * eligible, the one run most often on interp, then the most recent. The
 * caller holds tier_lock. */
static tier_job *take_next_locked(void)
{
    tier_job **best = NULL;
    double now = lt_now_ms();
    for (tier_job **p = &queue; *p; p = &(*p)->next) {
        if (!eligible_locked(*p, now))
            continue;
        long long runs = atomic_load(&(*p)->owner->first_runs);
        long long best_runs = best ? atomic_load(&(*best)->owner->first_runs) : -1;
        if (runs > best_runs || (runs == best_runs && (*p)->seq > (*best)->seq))
            best = p;
    }
    if (!best)
        return NULL;
    tier_job *j = *best;
    *best = j->next;
    j->next = NULL;
    return j;
}

static void warn_failure(const char *why)
{
    static bool warned; /* under tier_lock */
    if (warned)
        return;
    warned = true;
    fprintf(stderr,
            "lazytensor: warning: a background compile failed; the graph keeps running on the interp tier "
            "(further failures are only counted, BackgroundCompileFailures): %s\n",
            why);
}

/* Counts and reports a failed build (on the thread that ran it, whose
 * error it is). Holds tier_lock. */
static void failed_locked(void)
{
    lt_metric_add("BackgroundCompileFailures", 1);
    warn_failure(lt_last_error());
    lt_clear_error();
}

/* Frees e's interp executable once the native one took over and no run
 * uses it any more (it can be large: a copy of the graph). Holds tier_lock. */
static void drop_first_if_unused_locked(tier_exe *e)
{
    if (!e->first || e->first_users > 0 || !atomic_load(&e->native))
        return;
    first_tier()->release(e->first);
    e->first = NULL;
}

/* Installs a finished build in its owner, or drops it. Holds tier_lock. */
static void complete_locked(tier_job *j, lt_status st)
{
    if (st != LT_OK)
        failed_locked();
    if (j->owner && st == LT_OK) {
        atomic_store(&j->owner->native, j->exe);
        lt_metric_add("TierSwaps", 1);
        drop_first_if_unused_locked(j->owner);
    } else {
        second_tier()->release(j->exe);
    }
    if (j->owner)
        j->owner->job = NULL;
    free(j);
}

/* Sleeps until something changes, or until the first tier has been quiet
 * for IDLE_MS when only that holds a build back. Holds tier_lock. */
static void wait_for_work_locked(void)
{
    if (!queue || first_active > 0 || quick_active > 0) {
        pthread_cond_wait(&tier_wake, &tier_lock);
        return;
    }
    double left_ms = last_busy_ms + IDLE_MS - lt_now_ms();
    struct timespec at;
    clock_gettime(CLOCK_REALTIME, &at); /* the condition variable's clock */
    long long ns = at.tv_nsec + (long long)(fmax(left_ms, 0.1) * 1e6);
    at.tv_sec += (time_t)(ns / 1000000000);
    at.tv_nsec = (long)(ns % 1000000000);
    pthread_cond_timedwait(&tier_wake, &tier_lock, &at);
}

static void *worker_main(void *arg)
{
    (void)arg;
    pthread_mutex_lock(&tier_lock);
    for (;;) {
        while (!shutting_down && !(running = take_next_locked()))
            wait_for_work_locked();
        if (!running) /* shutting down: the queue was dropped */
            break;
        pthread_mutex_unlock(&tier_lock);
        double start = lt_now_ms();
        lt_status st = second_tier()->compile_finish(running->exe); /* the slow part, unlocked */
        lt_metric_time("BackgroundCompileTime", lt_now_ms() - start);
        pthread_mutex_lock(&tier_lock);
        complete_locked(running, st);
        running = NULL;
        pthread_cond_broadcast(&tier_idle);
    }
    pthread_mutex_unlock(&tier_lock);
    return NULL;
}

/* At exit: queued builds are dropped (their graphs stay on interp), the
 * one running is finished, and the worker is joined. */
static void shutdown_worker(void)
{
    pthread_mutex_lock(&tier_lock);
    shutting_down = true;
    while (queue) {
        tier_job *j = queue;
        queue = j->next;
        if (j->owner)
            j->owner->job = NULL;
        second_tier()->release(j->exe);
        free(j);
    }
    pthread_cond_broadcast(&tier_wake);
    pthread_cond_broadcast(&tier_idle);
    bool join = worker_started;
    pthread_mutex_unlock(&tier_lock);
    if (join)
        pthread_join(worker, NULL);
}

/* fork() keeps the queue consistent (tier_lock is held across it). The
 * child has no worker: queued builds wait for the one its next build starts,
 * and a build the parent was running is abandoned there (its graph stays on
 * interp). Like any fork of a threaded process, the child may still find
 * a lock of the compiler driver taken; exec is the safe way on. */
static void before_fork(void) { pthread_mutex_lock(&tier_lock); }
static void after_fork_parent(void) { pthread_mutex_unlock(&tier_lock); }
static void after_fork_child(void)
{
    worker_started = false;
    running = NULL;
    first_active = quick_active = 0; /* other threads did not come along */
    pthread_cond_init(&tier_wake, NULL);
    pthread_cond_init(&tier_idle, NULL);
    pthread_mutex_unlock(&tier_lock);
}

/* Starts the worker on first use; false if no thread can be made (or the
 * process is exiting). The caller holds tier_lock. */
static bool worker_ready_locked(void)
{
    static bool hooks;
    if (worker_started || shutting_down)
        return worker_started && !shutting_down;
    if (pthread_create(&worker, NULL, worker_main, NULL) != 0)
        return false;
    worker_started = true;
    if (!hooks) {
        hooks = true;
        atexit(shutdown_worker); /* registered after the compiler's own exit cleanup, so it runs before it */
        pthread_atfork(before_fork, after_fork_parent, after_fork_child);
    }
    return true;
}

/* Queues the build of cpu executable `exe` for e; false if no worker. */
static bool queue_build(tier_exe *e, void *exe)
{
    tier_job *j = calloc(1, sizeof *j);
    if (!j)
        return false;
    pthread_mutex_lock(&tier_lock);
    bool ok = worker_ready_locked();
    if (ok) {
        j->owner = e;
        j->exe = exe;
        j->seq = next_seq++;
        j->next = queue;
        queue = j;
        e->job = j;
        pthread_cond_signal(&tier_wake);
    }
    pthread_mutex_unlock(&tier_lock);
    if (!ok)
        free(j);
    return ok;
}

/* ---- the backend ------------------------------------------------------------ */

static void tiered_release(void *exe)
{
    tier_exe *e = exe;
    if (!e)
        return;
    pthread_mutex_lock(&tier_lock);
    tier_job *j = e->job;
    if (j && j == running) {
        j->owner = NULL; /* the worker drops the result */
    } else if (j) {
        for (tier_job **p = &queue; *p; p = &(*p)->next) {
            if (*p == j) {
                *p = j->next;
                break;
            }
        }
        second_tier()->release(j->exe);
        free(j);
    }
    pthread_mutex_unlock(&tier_lock);
    first_tier()->release(e->first); /* no run uses it: the lazy layer releases idle programs only */
    second_tier()->release(atomic_load(&e->native));
    free(e);
}

/* No background thread available: the build runs while the caller waits;
 * a failure leaves the graph on interp, as in the background. */
static void build_here(tier_exe *e, void *exe)
{
    lt_status st = second_tier()->compile_finish(exe);
    pthread_mutex_lock(&tier_lock);
    if (st == LT_OK) {
        atomic_store(&e->native, exe);
    } else {
        failed_locked();
        second_tier()->release(exe);
    }
    pthread_mutex_unlock(&tier_lock);
}

/* Marks a quick compile running (see IDLE_MS). */
static void quick_begin(void)
{
    pthread_mutex_lock(&tier_lock);
    quick_active++;
    pthread_mutex_unlock(&tier_lock);
}

static void quick_end(void)
{
    pthread_mutex_lock(&tier_lock);
    quick_active--;
    last_busy_ms = lt_now_ms();
    pthread_cond_signal(&tier_wake);
    pthread_mutex_unlock(&tier_lock);
}

static void *compile_tiers(const lt_graph *g)
{
    tier_exe *e = calloc(1, sizeof *e);
    if (!e) {
        lt_error(LT_ERR_MEMORY, "tiered backend: out of memory");
        return NULL;
    }
    bool ready = false;
    void *exe = second_tier()->compile_start(g, &ready); /* its errors are the cpu backend's, as without tiers */
    if (exe && ready) {
        atomic_store(&e->native, exe);
        return e;
    }
    e->first = exe ? first_tier()->compile(g) : NULL;
    if (!e->first) {
        second_tier()->release(exe);
        free(e);
        return NULL;
    }
    if (queue_build(e, exe))
        lt_metric_add("BackgroundCompiles", 1);
    else
        build_here(e, exe);
    return e;
}

/* An execution reads the native pointer once and runs on that tier to the
 * end: the swap happens between executions. */
static void *tiered_compile(const lt_graph *g)
{
    quick_begin();
    void *e = compile_tiers(g);
    quick_end();
    return e;
}

static lt_status tiered_execute(void *exe, lt_exec_args *args)
{
    tier_exe *e = exe;
    void *native = atomic_load(&e->native);
    if (native)
        return second_tier()->execute(native, args);
    pthread_mutex_lock(&tier_lock);
    native = atomic_load(&e->native); /* installed meanwhile? */
    void *first = native ? NULL : e->first;
    if (first) {
        first_active++;
        e->first_users++;
    }
    pthread_mutex_unlock(&tier_lock);
    if (native)
        return second_tier()->execute(native, args);
    lt_metric_add("InterpTierRuns", 1);
    lt_status st = first_tier()->execute(first, args);
    pthread_mutex_lock(&tier_lock);
    first_active--;
    last_busy_ms = lt_now_ms();
    e->first_users--;
    atomic_fetch_add(&e->first_runs, 1);
    drop_first_if_unused_locked(e);
    pthread_cond_signal(&tier_wake); /* a build may start now */
    pthread_mutex_unlock(&tier_lock);
    return st;
}

static void tiered_wait_idle(void)
{
    pthread_mutex_lock(&tier_lock);
    while ((queue || running) && !shutting_down)
        pthread_cond_wait(&tier_idle, &tier_lock);
    pthread_mutex_unlock(&tier_lock);
}

const lt_backend *lt_backend_tiered(void)
{
    static const lt_backend tiered = {
        .name = "tiered",
        .compile = tiered_compile,
        .execute = tiered_execute,
        .release = tiered_release,
        .buffer_alloc = lt_host_buffer_alloc,
        .copy_to_host = lt_host_copy_to_host,
        .copy_from_host = lt_host_copy_from_host,
        .host_visible = true,
        .wait_idle = tiered_wait_idle,
    };
    return &tiered;
}
