/*
 * barrier.c - the barrier and the program cache.
 *
 * A barrier collects every live lazy tensor with pending IR (in id order,
 * views excepted: they are re-derived from their base on demand), builds
 * the canonical graph and its key, looks the key up in an LRU cache of
 * compiled programs, compiles on a miss, runs the program and hands each
 * root tensor its result buffer.
 */
#include "compiler/compiler.h"
#include "lazy/graph.h"

#include <stdlib.h>
#include <string.h>

typedef struct cache_entry {
    uint64_t key[2];
    const lt_backend *backend;
    void *exe;
    struct cache_entry *prev, *next; /* LRU list, most recent first */
} cache_entry;

static cache_entry *lru_head, *lru_tail;
static int cache_count;
static int cache_capacity = -1;
static const lt_backend *current_backend;

/* The backend in use. The first call picks the default: LT_BACKEND=interp
 * or cpu, else cpu when a C compiler works; without one, a one-time warning
 * and the interp backend. */
static const lt_backend *backend(void)
{
    if (current_backend)
        return current_backend;
    const char *env = getenv("LT_BACKEND");
    if (env && strcmp(env, "interp") == 0) {
        current_backend = lt_backend_interp();
        return current_backend;
    }
    if (env && *env && strcmp(env, "cpu") != 0)
        fprintf(stderr, "lazytensor: warning: unknown LT_BACKEND=\"%s\" (expected cpu or interp), using the default\n",
                env);
    char why[512];
    if (lt_cc_available(why, sizeof why)) {
        current_backend = lt_backend_cpu();
    } else {
        fprintf(stderr, "lazytensor: warning: no working C compiler for the cpu backend (%s); the lazy device "
                        "uses the interp backend\n", why);
        current_backend = lt_backend_interp();
    }
    return current_backend;
}

static int capacity(void)
{
    if (cache_capacity < 0) {
        const char *env = getenv("LT_CACHE_SIZE");
        int v = env ? atoi(env) : 0;
        cache_capacity = v > 0 ? v : 1024;
    }
    return cache_capacity;
}

static void lru_unlink(cache_entry *e)
{
    if (e->prev)
        e->prev->next = e->next;
    else
        lru_head = e->next;
    if (e->next)
        e->next->prev = e->prev;
    else
        lru_tail = e->prev;
    e->prev = e->next = NULL;
}

static void lru_push_front(cache_entry *e)
{
    e->next = lru_head;
    e->prev = NULL;
    if (lru_head)
        lru_head->prev = e;
    lru_head = e;
    if (!lru_tail)
        lru_tail = e;
}

static void evict_to(int limit)
{
    while (cache_count > limit && lru_tail) {
        cache_entry *e = lru_tail;
        lru_unlink(e);
        e->backend->release(e->exe);
        free(e);
        cache_count--;
    }
}

static cache_entry *cache_find(const uint64_t key[2])
{
    for (cache_entry *e = lru_head; e; e = e->next) {
        if (e->key[0] == key[0] && e->key[1] == key[1] && e->backend == backend()) {
            lru_unlink(e);
            lru_push_front(e);
            return e;
        }
    }
    return NULL;
}

static cache_entry *cache_compile(const lt_gbuild *b)
{
    double start = lt_now_ms();
    cache_entry *e = calloc(1, sizeof *e);
    if (!e) {
        lt_error(LT_ERR_MEMORY, "lazy: out of memory caching a program");
        return NULL;
    }
    e->backend = backend();
    e->exe = e->backend->compile(&b->g);
    if (!e->exe) {
        free(e);
        if (!lt_error_pending())
            lt_error(LT_ERR_MEMORY, "lazy: backend %s failed to compile a graph", backend()->name);
        return NULL;
    }
    memcpy(e->key, b->key, sizeof e->key);
    lru_push_front(e);
    cache_count++;
    evict_to(capacity());
    lt_metric_add("UncachedCompile", 1);
    lt_metric_time("CompileTime", lt_now_ms() - start);
    return e;
}

/* ---- debugging hooks ---------------------------------------------------- */

static void debug_line(const char *why, const lt_gbuild *b, bool hit)
{
    static int enabled = -1;
    if (enabled < 0) {
        const char *v = getenv("LT_DEBUG");
        enabled = v && *v && strcmp(v, "0") != 0;
    }
    if (enabled)
        fprintf(stderr, "lazytensor: sync forced by %s%s: %u nodes, %u outputs, %s\n",
                strncmp(why, "lt_", 3) == 0 ? "" : "lt_", why, b->g.nnodes, b->g.nroots,
                hit ? "cache hit" : "cache miss (compiling)");
}

static void dump_graph(const char *why, const lt_gbuild *b)
{
    const char *path = getenv("LT_IR_DUMP");
    if (!path || !*path)
        return;
    int n = lt_graph_text(&b->g, b->scalars, NULL, 0);
    char *text = malloc((size_t)n + 1);
    FILE *f = fopen(path, "a");
    if (text && f) {
        lt_graph_text(&b->g, b->scalars, text, (size_t)n + 1);
        fprintf(f, "# sync forced by %s%s\n%s\n", strncmp(why, "lt_", 3) == 0 ? "" : "lt_", why, text);
    }
    if (f)
        fclose(f);
    free(text);
}

/* ---- the barrier ----------------------------------------------------------- */

static bool in_list(lt_tensor *t, lt_tensor *const *list, int n)
{
    for (int i = 0; i < n; i++)
        if (list[i] == t)
            return true;
    return false;
}

/* Roots: pending non-view tensors and the extra tensors, in id order (only
 * the extra ones when only_extra). */
static lt_status collect_roots(lt_tensor *const *extra, int nextra, bool only_extra, lt_tensor ***roots,
                               lt_value **values, uint32_t *count)
{
    uint32_t n = 0, cap = 64;
    lt_tensor **r = malloc(sizeof *r * cap);
    lt_value *v = malloc(sizeof *v * cap);
    for (lt_tensor *t = lt_lazy_registry_first(); r && v && t; t = lt_lazy_registry_next(t)) {
        lt_lazy *z = t->lazy;
        bool wanted = (!only_extra && z->pending && !z->base && !t->weak) || in_list(t, extra, nextra);
        if (!wanted)
            continue;
        if (n == cap) {
            cap *= 2;
            lt_tensor **r2 = realloc(r, sizeof *r * cap);
            lt_value *v2 = realloc(v, sizeof *v * cap);
            if (r2)
                r = r2;
            if (v2)
                v = v2;
            if (!r2 || !v2)
                break;
        }
        if (lt_lazy_value_of(t, &v[n]) != LT_OK) {
            free(r);
            free(v);
            return lt_last_status();
        }
        r[n++] = t;
    }
    if (!r || !v || n > cap) {
        free(r);
        free(v);
        return lt_error(LT_ERR_MEMORY, "lazy: out of memory collecting live tensors");
    }
    *roots = r;
    *values = v;
    *count = n;
    return LT_OK;
}

/* Every pending value not materialized now (views, wrapped scalars) is
 * dropped: it is re-derived on its next use. */
static void drop_remaining_pending(void)
{
    for (lt_tensor *t = lt_lazy_registry_first(); t;) {
        lt_tensor *next = lt_lazy_registry_next(t);
        lt_lazy *z = t->lazy;
        if (z->pending && (z->base || t->weak))
            lt_lazy_clear_pending(t);
        t = next;
    }
}

/* ---- execution, synchronous or in flight ------------------------------- */

/* One execution: its own copies of everything it reads, so that tracing
 * can go on (and the arena be reset) while it runs. */
typedef struct exec_job {
    pthread_t thread;
    cache_entry *entry;
    lt_exec_args args;
    lt_storage **leaves;  /* retained */
    uint32_t nleaves;
    double *scalars;
    bool *donatable;
    lt_storage **outs;
    lt_tensor **roots;    /* retained until their data is installed */
    uint32_t nroots;
    lt_status status;
    char error[1024];
} exec_job;

static exec_job *inflight;

static void job_free(exec_job *j)
{
    for (uint32_t i = 0; i < j->nleaves; i++)
        lt_storage_unref(j->leaves[i]);
    free(j->leaves);
    free(j->scalars);
    free(j->donatable);
    free(j->outs);
    free(j->roots);
    free(j);
}

static exec_job *job_new(const lt_gbuild *b, cache_entry *e, bool step, lt_tensor **roots)
{
    exec_job *j = calloc(1, sizeof *j);
    if (!j)
        return NULL;
    uint32_t nl = b->g.nleaves, ns = b->g.nscalars, nr = b->g.nroots;
    j->leaves = calloc(nl + 1, sizeof *j->leaves);
    j->scalars = calloc(ns + 1, sizeof *j->scalars);
    j->donatable = calloc(nl + 1, sizeof *j->donatable);
    j->outs = calloc(nr + 1, sizeof *j->outs);
    j->roots = calloc(nr + 1, sizeof *j->roots);
    if (!j->leaves || !j->scalars || !j->donatable || !j->outs || !j->roots) {
        job_free(j);
        return NULL;
    }
    /* Donation (step barriers only): a buffer held by nothing but the graph
     * cannot be observed by any live tensor any more. */
    for (uint32_t i = 0; i < nl; i++) {
        j->donatable[i] = step && atomic_load(&b->leaves[i]->refcount) == 1;
        j->leaves[i] = b->leaves[i];
        atomic_fetch_add(&b->leaves[i]->refcount, 1);
    }
    j->nleaves = nl;
    if (ns)
        memcpy(j->scalars, b->scalars, sizeof *j->scalars * ns);
    memcpy(j->roots, roots, sizeof *j->roots * nr);
    j->nroots = nr;
    j->entry = e;
    lt_exec_args args = {j->leaves, j->scalars, j->donatable, j->outs, 0};
    j->args = args;
    return j;
}

static void job_run(exec_job *j)
{
    double start = lt_now_ms();
    j->status = j->entry->backend->execute(j->entry->exe, &j->args);
    if (j->status != LT_OK)
        snprintf(j->error, sizeof j->error, "%s", lt_last_error());
    lt_metric_time("ExecuteTime", lt_now_ms() - start);
}

static void *job_thread(void *arg)
{
    job_run(arg);
    return NULL;
}

/* Hands each root its buffer (or reports the job's error) and frees it. */
static lt_status job_finish(exec_job *j, bool retained_roots)
{
    /* The donated buffers' leaves are held by the job: only count them. */
    lt_metric_add("DonatedBuffers", j->args.donated);
    lt_status st = j->status;
    for (uint32_t r = 0; r < j->nroots; r++) {
        if (st == LT_OK)
            lt_lazy_set_data(j->roots[r], j->outs[r]);
        else if (retained_roots)
            ((lt_lazy *)j->roots[r]->lazy)->inflight = false;
        if (retained_roots)
            lt_tensor_unref(j->roots[r]);
    }
    if (st != LT_OK)
        lt_error(st, "%s", j->error);
    job_free(j);
    return st;
}

lt_status lt_lazy_wait(void)
{
    exec_job *j = inflight;
    if (!j)
        return LT_OK;
    inflight = NULL;
    double start = lt_now_ms();
    pthread_join(j->thread, NULL);
    lt_metric_time("WaitTime", lt_now_ms() - start);
    lt_metric_add("BarrierWaits", 1);
    return job_finish(j, true);
}

static void wait_at_exit(void) { lt_lazy_wait(); }

static lt_status execute(const lt_gbuild *b, cache_entry *e, bool step, bool wait, lt_tensor **roots)
{
    exec_job *j = job_new(b, e, step, roots);
    if (!j)
        return lt_error(LT_ERR_MEMORY, "lazy: out of memory preparing an execution");
    if (wait) {
        job_run(j);
        return job_finish(j, false);
    }
    /* In flight: the roots are held (and marked) until their data arrives. */
    for (uint32_t r = 0; r < j->nroots; r++) {
        atomic_fetch_add(&roots[r]->refcount, 1);
        lt_lazy_clear_pending(roots[r]);
        ((lt_lazy *)roots[r]->lazy)->inflight = true;
    }
    static bool exit_hook;
    if (!exit_hook) /* a process that exits with a job in flight still joins it */
        exit_hook = atexit(wait_at_exit) == 0;
    if (pthread_create(&j->thread, NULL, job_thread, j) != 0) {
        job_run(j); /* no thread available: run here */
        return job_finish(j, true);
    }
    lt_metric_add("AsyncExecutions", 1);
    inflight = j;
    return LT_OK;
}

lt_status lt_lazy_barrier_with(bool step, const char *why, lt_tensor *const *extra, int nextra)
{
    return lt_lazy_barrier_async(step, true, why, extra, nextra);
}

/* One barrier over the collected roots. */
static lt_status run_barrier(bool step, bool wait, const char *why, lt_tensor *const *extra, int nextra,
                             bool only_extra, uint32_t *nroots_out)
{
    lt_metric_add("Barrier", 1);
    lt_tensor **roots = NULL;
    lt_value *values = NULL;
    uint32_t nroots = 0;
    lt_status st = collect_roots(extra, nextra, only_extra, &roots, &values, &nroots);
    if (st != LT_OK)
        return st;
    *nroots_out = nroots;
    if (nroots > 0) {
        lt_gbuild b;
        st = lt_gbuild_run(&b, values, nroots);
        if (st == LT_OK) {
            cache_entry *e = cache_find(b.key);
            debug_line(why, &b, e != NULL);
            dump_graph(why, &b);
            if (e)
                lt_metric_add("CachedCompile", 1);
            else
                e = cache_compile(&b);
            lt_metric_set("GraphNodes", b.g.nnodes);
            lt_metric_set("ProgramOutputs", b.g.nroots);
            st = e ? execute(&b, e, step, wait, roots) : lt_last_status();
            lt_gbuild_free(&b);
        }
    }
    free(roots);
    free(values);
    return st;
}

lt_status lt_lazy_barrier_async(bool step, bool wait, const char *why, lt_tensor *const *extra, int nextra)
{
    if (lt_lazy_enter(why) != LT_OK) /* only the owning thread (see lazy.h) */
        return lt_last_status();
    lt_status waited = lt_lazy_wait(); /* one execution in flight at a time */
    if (waited != LT_OK)
        return waited;
    uint32_t nroots = 0;
    lt_status st = run_barrier(step, wait, why, extra, nextra, false, &nroots);
    /* A read that failed because some other pending tensor cannot be
     * computed (say, an index out of range) retries with just the tensors
     * it needs, so one bad tensor does not block every read. */
    if (st != LT_OK && nextra > 0 && nroots > (uint32_t)nextra) {
        lt_clear_error();
        st = run_barrier(step, wait, why, extra, nextra, true, &nroots);
    }
    if (st == LT_OK)
        drop_remaining_pending();
    lt_lazy_reset_if_idle();
    return st;
}

lt_status lt_lazy_barrier(bool step, const char *why) { return lt_lazy_barrier_with(step, why, NULL, 0); }

/* ---- public API ---------------------------------------------------------------- */

lt_status lt_mark_step(void)
{
    lt_metric_add("MarkStep", 1);
    return lt_lazy_barrier(true, "lt_mark_step");
}

lt_status lt_barrier(bool wait)
{
    return lt_lazy_barrier_async(true, wait, "lt_barrier", NULL, 0);
}

lt_status lt_lazy_set_backend(const char *name)
{
    if (!name)
        return lt_error(LT_ERR_NULL, "lazy_set_backend: name is NULL");
    if (lt_lazy_enter("lazy_set_backend") != LT_OK)
        return lt_last_status();
    if (strcmp(name, "interp") == 0) {
        current_backend = lt_backend_interp();
        return LT_OK;
    }
    if (strcmp(name, "cpu") == 0) {
        char why[512];
        if (!lt_cc_available(why, sizeof why))
            return lt_error(LT_ERR_UNSUPPORTED, "lazy_set_backend: backend \"cpu\" needs a working C compiler: %s", why);
        current_backend = lt_backend_cpu();
        return LT_OK;
    }
    return lt_error(LT_ERR_ARGUMENT, "lazy_set_backend: unknown backend \"%s\" (available: cpu, interp)", name);
}

const char *lt_lazy_backend(void) { return backend()->name; }

const lt_backend *lt_lazy_current_backend(void) { return backend(); }

lt_status lt_lazy_set_cache_size(int n)
{
    if (n < 1)
        return lt_error(LT_ERR_ARGUMENT, "lazy_set_cache_size: %d programs requested, expected >= 1", n);
    if (lt_lazy_enter("lazy_set_cache_size") != LT_OK)
        return lt_last_status();
    cache_capacity = n;
    evict_to(n);
    return LT_OK;
}
