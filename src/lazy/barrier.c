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
#include "lazy/explain.h"
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

/* LT_TIERED=0 turns the tiered default off (graphs then wait for their
 * native compile, as with LT_BACKEND=cpu). */
static bool tiered_by_default(void)
{
    const char *env = getenv("LT_TIERED");
    return !env || strcmp(env, "0") != 0;
}

/* The backend in use. The first call picks the default: LT_BACKEND=interp,
 * cpu or tiered, else tiered (cpu with LT_TIERED=0) when a C compiler
 * works; without one, a one-time warning and the interp backend. */
static const lt_backend *backend(void)
{
    if (current_backend)
        return current_backend;
    const char *env = getenv("LT_BACKEND");
    if (env && strcmp(env, "interp") == 0) {
        current_backend = lt_backend_interp();
        return current_backend;
    }
    bool known = env && (strcmp(env, "cpu") == 0 || strcmp(env, "tiered") == 0);
    if (env && *env && !known)
        fprintf(stderr,
                "lazytensor: warning: unknown LT_BACKEND=\"%s\" (expected cpu, tiered or interp), using the default\n",
                env);
    bool tiered = known ? strcmp(env, "tiered") == 0 : tiered_by_default();
    char why[512];
    if (lt_cc_available(why, sizeof why)) {
        current_backend = tiered ? lt_backend_tiered() : lt_backend_cpu();
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

/* Compiles b's graph into the cache; `count`: a barrier's own program
 * (counted as UncachedCompile), not an index check's. */
static cache_entry *cache_compile(const lt_gbuild *b, bool count)
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
    if (count)
        lt_metric_add("UncachedCompile", 1);
    lt_metric_time("CompileTime", lt_now_ms() - start);
    return e;
}

/* ---- debugging hooks ---------------------------------------------------- */

static void debug_line(const char *why, const lt_gbuild *b, bool hit)
{
    if (lt_lazy_debug())
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

/*
 * A barrier is a transaction: either every root gets its new value, or
 * every tensor keeps the state it had before the barrier. A program fails
 * only in a kernel that checks its input values (DATAFAIL ops: an index out
 * of range) or when memory runs out. So a program holding a DATAFAIL op
 * donates only after its indices were checked (run_barrier): whatever
 * fails, no input buffer has been written, the backend frees the outputs,
 * and each root still has its pending value (an execution in flight gets
 * them back from its copy of the graph).
 */

/* One execution: its own copies of everything it reads, so that tracing
 * can go on (and the arena be reset) while it runs. */
typedef struct exec_job {
    bool done;            /* in flight: set by the executor when it has run */
    cache_entry *entry;
    lt_exec_args args;
    lt_storage **leaves;  /* retained */
    uint64_t *leaf_ids;   /* per leaf slot: its tensor's id */
    uint32_t nleaves;
    double *scalars;
    bool *donatable;
    lt_storage **outs;
    lt_tensor **roots;    /* in flight: held until their data is installed */
    lt_storage **last_data; /* in flight: per root, its data before the barrier (retained) or NULL */
    uint32_t nroots;
    lt_graph *graph;      /* the graph run: a copy when in flight */
    bool owns_graph;
    bool step;
    const char *why;      /* the call that forced the barrier (static text) */
    lt_status status;
    char error[1024];
} exec_job;

static exec_job *inflight;

static void job_free(exec_job *j)
{
    for (uint32_t i = 0; i < j->nleaves; i++)
        lt_storage_unref(j->leaves[i]);
    for (uint32_t r = 0; j->last_data && r < j->nroots; r++)
        lt_storage_unref(j->last_data[r]);
    if (j->owns_graph)
        lt_graph_free(j->graph);
    free(j->leaves);
    free(j->leaf_ids);
    free(j->scalars);
    free(j->donatable);
    free(j->outs);
    free(j->roots);
    free(j->last_data);
    free(j);
}

static exec_job *job_new(const lt_gbuild *b, cache_entry *e, bool step, bool donate, const char *why,
                         lt_tensor **roots)
{
    exec_job *j = calloc(1, sizeof *j);
    if (!j)
        return NULL;
    uint32_t nl = b->g.nleaves, ns = b->g.nscalars, nr = b->g.nroots;
    j->leaves = calloc(nl + 1, sizeof *j->leaves);
    j->leaf_ids = calloc(nl + 1, sizeof *j->leaf_ids);
    j->scalars = calloc(ns + 1, sizeof *j->scalars);
    j->donatable = calloc(nl + 1, sizeof *j->donatable);
    j->outs = calloc(nr + 1, sizeof *j->outs);
    j->roots = calloc(nr + 1, sizeof *j->roots);
    if (!j->leaves || !j->leaf_ids || !j->scalars || !j->donatable || !j->outs || !j->roots) {
        job_free(j);
        return NULL;
    }
    /* Donation (see run_barrier): a buffer held by nothing but the graph
     * cannot be observed by any live tensor any more. */
    for (uint32_t i = 0; i < nl; i++) {
        j->donatable[i] = donate && atomic_load(&b->leaves[i]->refcount) == 1;
        j->leaves[i] = b->leaves[i];
        atomic_fetch_add(&b->leaves[i]->refcount, 1);
    }
    j->nleaves = nl;
    if (nl)
        memcpy(j->leaf_ids, b->leaf_ids, sizeof *j->leaf_ids * nl);
    if (ns)
        memcpy(j->scalars, b->scalars, sizeof *j->scalars * ns);
    memcpy(j->roots, roots, sizeof *j->roots * nr);
    j->nroots = nr;
    j->entry = e;
    j->graph = (lt_graph *)&b->g; /* borrowed: execute() copies it for a job in flight */
    j->step = step;
    j->why = why;
    lt_exec_args args = {j->leaves, j->scalars, j->donatable, j->outs, 0, UINT32_MAX};
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

/* ---- the executor thread ------------------------------------------------------------ */

/* One long-lived thread runs the executions of lt_barrier(false), one at a
 * time. Long-lived, so that what the kernels' libraries keep per thread
 * (OpenBLAS's buffers) is set up once, not at every step. */
static struct {
    pthread_mutex_t lock;
    pthread_cond_t changed; /* a job was handed over, or finished */
    exec_job *job;          /* handed over, not yet finished */
    bool started;
} executor = {PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER, NULL, false};

static void *executor_main(void *arg)
{
    (void)arg;
    pthread_mutex_lock(&executor.lock);
    for (;;) {
        while (!executor.job || executor.job->done)
            pthread_cond_wait(&executor.changed, &executor.lock);
        exec_job *j = executor.job;
        pthread_mutex_unlock(&executor.lock);
        job_run(j);
        pthread_mutex_lock(&executor.lock);
        j->done = true;
        pthread_cond_broadcast(&executor.changed);
    }
    return NULL;
}

static void executor_forget(void)
{
    /* a forked child has no executor thread (and no job in flight of its own) */
    executor.started = false;
    executor.job = NULL;
    pthread_mutex_init(&executor.lock, NULL);
    pthread_cond_init(&executor.changed, NULL);
}

/* Hands j to the executor thread (started on first use); false if no
 * thread could be started. */
static bool executor_submit(exec_job *j)
{
    pthread_mutex_lock(&executor.lock);
    if (!executor.started) {
        static bool atfork_done;
        if (!atfork_done)
            atfork_done = pthread_atfork(NULL, NULL, executor_forget) == 0;
        pthread_t th;
        pthread_attr_t attr;
        pthread_attr_init(&attr);
        pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
        pthread_attr_setstacksize(&attr, 8u << 20); /* kernels keep index arrays on the stack */
        executor.started = pthread_create(&th, &attr, executor_main, NULL) == 0;
        pthread_attr_destroy(&attr);
        if (!executor.started) {
            pthread_mutex_unlock(&executor.lock);
            return false;
        }
    }
    j->done = false;
    executor.job = j;
    pthread_cond_broadcast(&executor.changed);
    pthread_mutex_unlock(&executor.lock);
    return true;
}

static void executor_wait(exec_job *j)
{
    pthread_mutex_lock(&executor.lock);
    while (!j->done)
        pthread_cond_wait(&executor.changed, &executor.lock);
    executor.job = NULL;
    pthread_mutex_unlock(&executor.lock);
}

/* Sets the error of a failed execution (see lt_explain_failure). */
static void report_failure(const exec_job *j)
{
    const lt_gnode *n = j->args.failed_node < j->graph->nnodes ? &j->graph->nodes[j->args.failed_node] : NULL;
    lt_explain_failure(j->status, n, j->error, j->step, j->why);
}

/* Records node i of the job's graph in the arena again (at[] maps graph
 * nodes to arena nodes). */
static lt_status rerecord_node(const exec_job *j, uint32_t i, uint32_t *at)
{
    const lt_graph *g = j->graph;
    const lt_gnode *n = &g->nodes[i];
    uint32_t node;
    if (n->kind == LT_NODE_DATA) {
        node = lt_ir_add_data(j->leaves[n->slot], &n->out[0], j->leaf_ids[n->slot]);
    } else if (n->kind == LT_NODE_SCALAR) {
        node = lt_ir_add_scalar(n->slot >= 0 ? j->scalars[n->slot] : n->scalar);
    } else {
        lt_value small[8], *in = n->nin <= 8 ? small : malloc(sizeof *in * n->nin);
        if (!in)
            return lt_error(LT_ERR_MEMORY, "lazy: out of memory restoring a failed step");
        for (uint32_t k = 0; k < n->nin; k++) {
            lt_gvalue v = g->inputs[n->first_input + k];
            in[k] = (lt_value){at[v.node], v.out};
        }
        lt_origin saved = lt_origin_set((lt_origin){n->origin, n->origin_backward});
        node = lt_ir_add_op((lt_op)n->op, in, n->nin, &n->attrs, n->out); /* attrs hold the values */
        lt_origin_restore(saved);
        if (in != small)
            free(in);
    }
    if (node == UINT32_MAX)
        return lt_last_status();
    at[i] = node;
    return LT_OK;
}

/* Root r's data before the barrier becomes its memoized leaf again, so
 * that lt_lazy_discard can go back to it. */
static lt_status restore_last_data(const exec_job *j, uint32_t r)
{
    lt_tensor *t = j->roots[r];
    if (!j->last_data[r] || t->storage)
        return LT_OK;
    lt_meta m = lt_tensor_meta(t);
    m.weak = 0;
    uint32_t node = lt_ir_add_data(j->last_data[r], &m, t->id);
    if (node == UINT32_MAX)
        return lt_last_status();
    lt_lazy *z = t->lazy;
    z->leaf_node = node;
    z->leaf_generation = lt_ir_generation();
    return LT_OK;
}

/* An execution in flight failed: its roots lost their pending values when
 * it started. The graph is recorded again and each root gets its value
 * back, so every tensor is as it was before the barrier. */
static lt_status restore_roots(const exec_job *j)
{
    const lt_graph *g = j->graph;
    uint32_t *at = malloc(sizeof *at * (g->nnodes ? g->nnodes : 1));
    if (!at)
        return lt_error(LT_ERR_MEMORY, "lazy: out of memory restoring a failed step");
    lt_status st = LT_OK;
    for (uint32_t i = 0; st == LT_OK && i < g->nnodes; i++)
        st = rerecord_node(j, i, at);
    for (uint32_t r = 0; st == LT_OK && r < j->nroots; r++) {
        lt_value v = {at[g->roots[r].node], g->roots[r].out};
        lt_lazy_set_pending(j->roots[r], v);
        st = restore_last_data(j, r);
    }
    free(at);
    return st;
}

/* Hands each root its buffer, or leaves every root as it was before the
 * barrier; reports the job's error if `report`; frees the job. */
static lt_status job_finish(exec_job *j, bool in_flight, bool report)
{
    /* The donated buffers' leaves are held by the job: only count them. */
    lt_metric_add("DonatedBuffers", j->args.donated);
    lt_status st = j->status;
    if (st != LT_OK) {
        lt_metric_add("FailedExecutions", 1);
        for (uint32_t r = 0; in_flight && r < j->nroots; r++) {
            ((lt_lazy *)j->roots[r]->lazy)->inflight = false;
            lt_lazy_fail_future(j->roots[r]);
        }
        lt_status restored = in_flight ? restore_roots(j) : LT_OK;
        if (report && restored == LT_OK)
            report_failure(j);
    }
    for (uint32_t r = 0; r < j->nroots; r++) {
        if (st == LT_OK)
            lt_lazy_fill_future(j->roots[r], j->outs[r]);
        if (in_flight)
            lt_tensor_drop(j->roots[r]);
    }
    job_free(j);
    return st;
}

/* Waits for the execution in flight, if any, and installs its results. */
static lt_status finish_inflight(bool report)
{
    exec_job *j = inflight;
    if (!j)
        return LT_OK;
    inflight = NULL;
    double start = lt_now_ms();
    executor_wait(j);
    lt_metric_time("WaitTime", lt_now_ms() - start);
    lt_metric_add("BarrierWaits", 1);
    return job_finish(j, true, report);
}

lt_status lt_lazy_wait(void) { return finish_inflight(true); }

static void wait_at_exit(void) { lt_lazy_wait(); }

/* Prepares a job to run in flight: its own copy of the graph, and each
 * root's data from before the barrier (to restore on failure); the roots
 * are held and marked until their data arrives. */
static bool job_detach(exec_job *j)
{
    j->graph = lt_graph_copy(j->graph);
    j->owns_graph = j->graph != NULL;
    j->last_data = calloc(j->nroots + 1, sizeof *j->last_data);
    if (!j->graph || !j->last_data)
        return false;
    uint64_t gen = lt_ir_generation();
    for (uint32_t r = 0; r < j->nroots; r++) {
        lt_tensor *t = j->roots[r];
        lt_lazy *z = t->lazy;
        const lt_node *leaf = z->leaf_generation == gen ? lt_ir_node(z->leaf_node) : NULL;
        if (!t->storage && !z->base && leaf && leaf->kind == LT_NODE_DATA && leaf->tensor_id == t->id) {
            j->last_data[r] = leaf->storage;
            atomic_fetch_add(&leaf->storage->refcount, 1);
        }
        lt_tensor_hold(t); /* a root its user released (a view's base) stays dead for the user */
        lt_lazy_clear_pending(t);
        z->inflight = true;
    }
    return true;
}

static lt_status execute(const lt_gbuild *b, cache_entry *e, bool step, bool donate, bool wait, const char *why,
                         lt_tensor **roots)
{
    exec_job *j = job_new(b, e, step, donate, why, roots);
    if (!j)
        return lt_error(LT_ERR_MEMORY, "lazy: out of memory preparing an execution");
    if (wait) {
        job_run(j);
        return job_finish(j, false, true);
    }
    if (!job_detach(j)) {
        j->nroots = 0; /* nothing held yet */
        job_free(j);
        return lt_error(LT_ERR_MEMORY, "lazy: out of memory preparing an execution");
    }
    static bool exit_hook;
    if (!exit_hook) /* a process that exits with a job in flight still joins it */
        exit_hook = atexit(wait_at_exit) == 0;
    if (!executor_submit(j)) {
        job_run(j); /* no thread available: run here */
        return job_finish(j, true, true);
    }
    lt_metric_add("AsyncExecutions", 1);
    inflight = j;
    return LT_OK;
}

lt_status lt_lazy_barrier_with(bool step, const char *why, lt_tensor *const *extra, int nextra)
{
    return lt_lazy_barrier_async(step, true, why, extra, nextra);
}

/* ---- index checks before donation ---------------------------------------- */

/*
 * A step program may donate buffers only if it cannot fail on its data. One
 * holding DATAFAIL ops (cross_entropy's gather and its gradient, say) is
 * made safe by checking the index operands first: those that are data are
 * read as they are, the others are computed by a program of their own
 * (views and casts of the labels, as a rule; anything heavier is not worth
 * it and the step runs without donation), and every element must lie in
 * [0, limit), exactly the check of the eager kernels.
 */

static bool any_donatable_leaf(const lt_gbuild *b)
{
    for (uint32_t i = 0; i < b->g.nleaves; i++)
        if (atomic_load(&b->leaves[i]->refcount) == 1)
            return true;
    return false;
}

/* Every element of index buffer s (meta m) in [0, limit)? */
static bool index_buffer_in_range(const lt_storage *s, const lt_meta *m, int64_t limit)
{
    int64_t n = lt_shape_numel(m->shape, m->ndim);
    size_t nbytes = (size_t)n * lt_dtype_size((lt_dtype)m->dtype);
    if ((m->dtype != LT_I64 && m->dtype != LT_I32) || nbytes > s->nbytes)
        return false;
    void *host = malloc(nbytes + 1);
    bool ok = host && backend()->copy_to_host(s, host, nbytes) == LT_OK;
    for (int64_t i = 0; ok && i < n; i++) {
        int64_t v = m->dtype == LT_I64 ? ((const int64_t *)host)[i] : ((const int32_t *)host)[i];
        ok = (uint64_t)v < (uint64_t)limit; /* negatives wrap to huge values */
    }
    free(host);
    return ok;
}

/* Views, casts and elementwise ops only: cheap to compute twice. */
static bool cheap_graph(const lt_graph *g)
{
    for (uint32_t i = 0; i < g->nnodes; i++) {
        const lt_gnode *n = &g->nodes[i];
        int cls = n->kind == LT_NODE_OP ? lt_op_infos[n->op].cls : -1;
        if (n->kind == LT_NODE_OP && cls != LT_OPC_VIEW && cls != LT_OPC_UNARY && cls != LT_OPC_BINARY &&
            cls != LT_OPC_TERNARY && cls != LT_OPC_FACTORY)
            return false;
    }
    return true;
}

/* Computes the index values (no donation) and checks them. */
static bool computed_indices_in_range(const lt_value *values, const int64_t *limits, uint32_t n)
{
    lt_gbuild cb;
    if (lt_gbuild_run(&cb, values, n) != LT_OK)
        return false;
    cache_entry *e = NULL;
    if (cheap_graph(&cb.g) && !(e = cache_find(cb.key)))
        e = cache_compile(&cb, false);
    lt_storage **outs = calloc(n + 1, sizeof *outs);
    bool ok = e && outs;
    if (ok) {
        lt_exec_args args = {cb.leaves, cb.scalars, NULL, outs, 0, UINT32_MAX};
        ok = e->backend->execute(e->exe, &args) == LT_OK;
    }
    for (uint32_t r = 0; ok && r < n; r++) {
        lt_gvalue root = cb.g.roots[r];
        ok = index_buffer_in_range(outs[r], &cb.g.nodes[root.node].out[root.out], limits[r]);
    }
    for (uint32_t r = 0; outs && r < n; r++)
        lt_storage_unref(outs[r]);
    free(outs);
    lt_gbuild_free(&cb);
    return ok;
}

static bool indices_checked(const lt_gbuild *b)
{
    if (b->unchecked_fail)
        return false;
    lt_metric_add("IndexChecks", 1);
    lt_value *values = malloc(sizeof *values * (b->nchecks + 1));
    int64_t *limits = malloc(sizeof *limits * (b->nchecks + 1));
    uint32_t n = 0;
    bool ok = values && limits;
    for (uint32_t k = 0; ok && k < b->nchecks; k++) {
        const lt_gcheck *c = &b->checks[k];
        const lt_node *node = lt_ir_node(c->index.node);
        if (node->kind == LT_NODE_DATA) {
            ok = index_buffer_in_range(node->storage, lt_ir_out(node, 0), c->limit);
        } else {
            values[n] = c->index;
            limits[n++] = c->limit;
        }
    }
    if (ok && n > 0)
        ok = computed_indices_in_range(values, limits, n);
    free(values);
    free(limits);
    if (!ok)
        lt_clear_error(); /* the step runs without donation and reports any failure itself */
    return ok;
}

/* One barrier over the collected roots. Donation: at step barriers, for a
 * program that cannot fail on its data (no DATAFAIL op, or its index
 * operands checked first). */
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
            bool donate = step && (!b.may_fail || (any_donatable_leaf(&b) && indices_checked(&b)));
            cache_entry *e = cache_find(b.key); /* after the checks, which may evict programs */
            debug_line(why, &b, e != NULL);
            dump_graph(why, &b);
            if (e) {
                lt_metric_add("CachedCompile", 1);
                lt_explain_cache_hit();
            } else if ((e = cache_compile(&b, true))) {
                lt_explain_compiled(&b.g, b.key, e->backend);
            }
            lt_metric_set("GraphNodes", b.g.nnodes);
            lt_metric_set("ProgramOutputs", b.g.nroots);
            st = e ? execute(&b, e, step, donate, wait, why, roots) : lt_last_status();
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
    lt_status st = lt_lazy_barrier(true, "lt_mark_step");
    if (lt_lazy_try_own()) /* not a step for a thread the device refused */
        lt_explain_step_done();
    return st;
}

lt_status lt_barrier(bool wait)
{
    lt_status st = lt_lazy_barrier_async(true, wait, "lt_barrier", NULL, 0);
    if (lt_lazy_try_own())
        lt_explain_step_done();
    return st;
}

/* A non-view tensor whose pending value is dropped goes back to its last
 * data (its memoized leaf, which an in-place update always records), or
 * says it was discarded. Its version moves on, so that views of it are
 * derived again. */
static void back_to_last_data(lt_tensor *t)
{
    lt_lazy *z = t->lazy;
    const lt_node *leaf = z->leaf_generation == lt_ir_generation() ? lt_ir_node(z->leaf_node) : NULL;
    if (!t->storage && leaf && leaf->kind == LT_NODE_DATA && leaf->tensor_id == t->id) {
        t->storage = leaf->storage;
        atomic_fetch_add(&t->storage->refcount, 1);
    } else if (!t->storage) {
        z->discarded = true;
    }
    z->version++;
}

int64_t lt_lazy_discard(void)
{
    lt_lazy_init();
    if (lt_lazy_enter("lazy_discard") != LT_OK) /* only the owning thread */
        return -1;
    finish_inflight(false); /* dropped like any pending value, its failure unreported */
    int64_t dropped = 0;
    for (lt_tensor *t = lt_lazy_registry_first(); t; t = lt_lazy_registry_next(t)) {
        lt_lazy *z = t->lazy;
        if (!z->pending)
            continue;
        if (!z->base && !z->is_scalar) { /* views and scalars are derived again on use */
            back_to_last_data(t);
            dropped++;
        }
        lt_lazy_clear_pending(t);
    }
    lt_lazy_reset_if_idle();
    lt_metric_add("DiscardedValues", dropped);
    return dropped;
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
    bool tiered = strcmp(name, "tiered") == 0;
    if (tiered || strcmp(name, "cpu") == 0) {
        char why[512];
        if (!lt_cc_available(why, sizeof why))
            return lt_error(LT_ERR_UNSUPPORTED, "lazy_set_backend: backend \"%s\" needs a working C compiler: %s",
                            name, why);
        current_backend = tiered ? lt_backend_tiered() : lt_backend_cpu();
        return LT_OK;
    }
    return lt_error(LT_ERR_ARGUMENT, "lazy_set_backend: unknown backend \"%s\" (available: cpu, tiered, interp)",
                    name);
}

/* Compiles run in the background only in backends that say so (wait_idle). */
lt_status lt_lazy_wait_compiles(void)
{
    const lt_backend *all[] = {lt_backend_tiered(), lt_backend_cpu(), lt_backend_interp()};
    for (size_t i = 0; i < sizeof all / sizeof all[0]; i++)
        if (all[i]->wait_idle)
            all[i]->wait_idle();
    return LT_OK;
}

const char *lt_lazy_backend(void) { return backend()->name; }

const lt_backend *lt_lazy_current_backend(void) { return backend(); }

lt_status lt_lazy_set_cache_size(int n)
{
    if (n < 1)
        return lt_error(LT_ERR_ARGUMENT, "lazy_set_cache_size: %d programs requested, expected >= 1", n);
    if (lt_lazy_enter("lazy_set_cache_size") != LT_OK)
        return lt_last_status();
    /* an execution in flight may be running a program about to be evicted */
    lt_status waited = lt_lazy_wait();
    cache_capacity = n;
    evict_to(n);
    return waited;
}
