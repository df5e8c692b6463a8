/*
 * barrier.c - the barrier and the program cache.
 *
 * A barrier collects every live lazy tensor with pending IR (in id order,
 * views excepted: they are re-derived from their base on demand), builds
 * the canonical graph and its key, looks the key up in an LRU cache of
 * compiled programs, compiles on a miss, runs the program and hands each
 * root tensor its result buffer.
 */
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

static const lt_backend *backend(void)
{
    if (!current_backend)
        current_backend = lt_backend_interp();
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
        fprintf(stderr, "lazytensor: sync forced by %s: %u nodes, %u outputs, %s\n", why, b->g.nnodes,
                b->g.nroots, hit ? "cache hit" : "cache miss (compiling)");
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
        fprintf(f, "# sync forced by %s\n%s\n", why, text);
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

/* Roots: pending non-view tensors in id order, then the extra tensors. */
static lt_status collect_roots(lt_tensor *const *extra, int nextra, lt_tensor ***roots, lt_value **values,
                               uint32_t *count)
{
    uint32_t n = 0, cap = 64;
    lt_tensor **r = malloc(sizeof *r * cap);
    lt_value *v = malloc(sizeof *v * cap);
    for (lt_tensor *t = lt_lazy_registry_first(); r && v && t; t = lt_lazy_registry_next(t)) {
        lt_lazy *z = t->lazy;
        bool wanted = (z->pending && !z->base && !t->weak) || in_list(t, extra, nextra);
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

static lt_status execute(const lt_gbuild *b, cache_entry *e, bool step, lt_tensor **roots)
{
    lt_status st = LT_OK;
    bool *donatable = calloc(b->g.nleaves + 1, sizeof *donatable);
    lt_storage **outs = calloc(b->g.nroots + 1, sizeof *outs);
    if (!donatable || !outs)
        st = lt_error(LT_ERR_MEMORY, "lazy: out of memory");
    /* Donation (step barriers only): a buffer held by nothing but the graph
     * cannot be observed by any live tensor any more. */
    for (uint32_t i = 0; st == LT_OK && step && i < b->g.nleaves; i++)
        donatable[i] = atomic_load(&b->leaves[i]->refcount) == 1;
    lt_exec_args args = {b->leaves, b->scalars, donatable, outs, 0};
    double start = lt_now_ms();
    if (st == LT_OK)
        st = e->backend->execute(e->exe, &args);
    lt_metric_time("ExecuteTime", lt_now_ms() - start);
    lt_metric_add("DonatedBuffers", args.donated);
    for (uint32_t r = 0; st == LT_OK && r < b->g.nroots; r++)
        lt_lazy_set_data(roots[r], outs[r]);
    free(donatable);
    free(outs);
    return st;
}

lt_status lt_lazy_barrier_with(bool step, const char *why, lt_tensor *const *extra, int nextra)
{
    lt_lazy_init();
    lt_metric_add("Barrier", 1);
    lt_tensor **roots = NULL;
    lt_value *values = NULL;
    uint32_t nroots = 0;
    lt_status st = collect_roots(extra, nextra, &roots, &values, &nroots);
    if (st != LT_OK)
        return st;
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
            st = e ? execute(&b, e, step, roots) : lt_last_status();
            lt_gbuild_free(&b);
        }
    }
    free(roots);
    free(values);
    if (st == LT_OK)
        drop_remaining_pending();
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
    (void)wait; /* execution is synchronous: the barrier returns when it is done */
    return lt_lazy_barrier(true, "lt_barrier");
}

lt_status lt_lazy_set_backend(const char *name)
{
    if (!name)
        return lt_error(LT_ERR_NULL, "lazy_set_backend: name is NULL");
    if (strcmp(name, "interp") == 0) {
        current_backend = lt_backend_interp();
        return LT_OK;
    }
    return lt_error(LT_ERR_ARGUMENT, "lazy_set_backend: unknown backend \"%s\" (available: interp)", name);
}

const char *lt_lazy_backend(void) { return backend()->name; }

lt_status lt_lazy_set_cache_size(int n)
{
    if (n < 1)
        return lt_error(LT_ERR_ARGUMENT, "lazy_set_cache_size: %d programs requested, expected >= 1", n);
    cache_capacity = n;
    evict_to(n);
    return LT_OK;
}
