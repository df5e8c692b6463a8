/*
 * metrics.c - counters and timers of the lazy device.
 *
 * Counters are named int64 values; timers keep a count, a total, and the
 * last 4096 samples for percentiles. Both live in small fixed tables: the
 * set of names is small and known (per-op fallback counters add one each).
 */
#include "lazy/explain.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define MAX_COUNTERS 256
#define MAX_TIMERS 16
#define TIMER_SAMPLES 4096

typedef struct counter {
    char name[64];
    int64_t value;
} counter;

typedef struct timer {
    char name[32];
    int64_t count;
    double total, max;
    double samples[TIMER_SAMPLES];
} timer;

/* The hot counters: bumped on every lazy tensor made or dropped, so they are
 * plain atomics in fixed slots, with no lock and no lookup by name. */
static const char *const hot_names[LT_HOT_COUNT] = {"TensorsCreated", "TensorsDestroyed"};
static atomic_llong hot_values[LT_HOT_COUNT];

void lt_metric_bump(lt_hot_counter c) { atomic_fetch_add_explicit(&hot_values[c], 1, memory_order_relaxed); }

static int hot_index(const char *name)
{
    for (int i = 0; i < LT_HOT_COUNT; i++)
        if (strcmp(hot_names[i], name) == 0)
            return i;
    return -1;
}

static pthread_mutex_t metrics_lock = PTHREAD_MUTEX_INITIALIZER;
static counter counters[MAX_COUNTERS];
static int ncounters;
static timer *timers[MAX_TIMERS];
static int ntimers;

double lt_now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec * 1e-6;
}

static counter *find_counter(const char *name, bool create)
{
    for (int i = 0; i < ncounters; i++)
        if (strcmp(counters[i].name, name) == 0)
            return &counters[i];
    if (!create || ncounters == MAX_COUNTERS)
        return NULL;
    counter *c = &counters[ncounters++];
    snprintf(c->name, sizeof c->name, "%s", name);
    c->value = 0;
    return c;
}

void lt_metric_add(const char *name, int64_t delta)
{
    pthread_mutex_lock(&metrics_lock);
    counter *c = find_counter(name, true);
    if (c)
        c->value += delta;
    pthread_mutex_unlock(&metrics_lock);
}

void lt_metric_set(const char *name, int64_t value)
{
    pthread_mutex_lock(&metrics_lock);
    counter *c = find_counter(name, true);
    if (c)
        c->value = value;
    pthread_mutex_unlock(&metrics_lock);
}

int64_t lt_metrics_counter(const char *name)
{
    if (!name)
        return 0;
    int hot = hot_index(name);
    if (hot >= 0)
        return atomic_load_explicit(&hot_values[hot], memory_order_relaxed);
    pthread_mutex_lock(&metrics_lock);
    counter *c = find_counter(name, false);
    int64_t v = c ? c->value : 0;
    pthread_mutex_unlock(&metrics_lock);
    return v;
}

static timer *find_timer(const char *name, bool create)
{
    for (int i = 0; i < ntimers; i++)
        if (strcmp(timers[i]->name, name) == 0)
            return timers[i];
    if (!create || ntimers == MAX_TIMERS)
        return NULL;
    timer *t = calloc(1, sizeof *t);
    if (!t)
        return NULL;
    snprintf(t->name, sizeof t->name, "%s", name);
    timers[ntimers++] = t;
    return t;
}

void lt_metric_time(const char *name, double ms)
{
    pthread_mutex_lock(&metrics_lock);
    timer *t = find_timer(name, true);
    if (t) {
        t->samples[t->count % TIMER_SAMPLES] = ms;
        t->count++;
        t->total += ms;
        if (ms > t->max)
            t->max = ms;
    }
    pthread_mutex_unlock(&metrics_lock);
}

static int compare_doubles(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static double percentile(const double *sorted, int64_t n, double p)
{
    if (n == 0)
        return 0;
    int64_t k = (int64_t)ceil(p * (double)n) - 1;
    return sorted[k < 0 ? 0 : k >= n ? n - 1 : k];
}

lt_status lt_metrics_timer(const char *name, lt_timer_stats *out)
{
    if (!name || !out)
        return lt_error(LT_ERR_NULL, "metrics_timer: name and out must not be NULL");
    memset(out, 0, sizeof *out);
    pthread_mutex_lock(&metrics_lock);
    timer *t = find_timer(name, false);
    if (t && t->count) {
        int64_t n = t->count < TIMER_SAMPLES ? t->count : TIMER_SAMPLES;
        double *sorted = malloc(sizeof *sorted * (size_t)n);
        if (sorted) {
            memcpy(sorted, t->samples, sizeof *sorted * (size_t)n);
            qsort(sorted, (size_t)n, sizeof *sorted, compare_doubles);
            out->p50_ms = percentile(sorted, n, 0.50);
            out->p90_ms = percentile(sorted, n, 0.90);
            out->p99_ms = percentile(sorted, n, 0.99);
            free(sorted);
        }
        out->count = t->count;
        out->total_ms = t->total;
        out->max_ms = t->max;
    }
    pthread_mutex_unlock(&metrics_lock);
    return LT_OK;
}

void lt_metrics_reset(void)
{
    pthread_mutex_lock(&metrics_lock);
    ncounters = 0;
    for (int i = 0; i < LT_HOT_COUNT; i++)
        atomic_store(&hot_values[i], 0);
    for (int i = 0; i < ntimers; i++)
        free(timers[i]);
    ntimers = 0;
    pthread_mutex_unlock(&metrics_lock);
}

/* ---- the report ------------------------------------------------------------ */

/* "nonzero 3": the ops counted as fallbacks. */
static void fallback_names(char *buf, size_t cap)
{
    size_t used = 0;
    buf[0] = '\0';
    pthread_mutex_lock(&metrics_lock);
    for (int i = 0; i < ncounters && used < cap; i++)
        if (strncmp(counters[i].name, "Fallback.", 9) == 0 && counters[i].value)
            used += (size_t)snprintf(buf + used, cap - used, "%s%s %lld", used ? ", " : "", counters[i].name + 9,
                                     (long long)counters[i].value);
    pthread_mutex_unlock(&metrics_lock);
}

/* The usual problems of a lazy program, each flagged on a line. */
static void report_problems(lt_text *r)
{
    int64_t late = lt_metrics_counter("CompilesAfterWarmup"), steps = lt_metrics_counter("Steps");
    int64_t fallbacks = lt_metrics_counter("Fallback"), growth = lt_metrics_counter("GraphSizeWarnings");
    if (late <= 1 && fallbacks == 0 && growth == 0) {
        lt_text_put(r, "Problems: none\n");
        return;
    }
    lt_text_put(r, "Problems:\n");
    if (late > 1) {
        char cause[512];
        lt_lazy_last_compile_cause(cause, sizeof cause);
        lt_text_put(r,
                    "  recompiling: %lld compiles after the warm-up (the first %d of %lld steps); a steady loop "
                    "compiles at most once after it (a last, smaller batch). Latest cause: %s. Every cause: "
                    "LT_DEBUG=1 or lt_lazy_last_compile_cause\n",
                    (long long)late, lt_explain_warmup_steps(), (long long)steps,
                    cause[0] ? cause : "(the latest barrier hit the cache)");
    }
    if (fallbacks > 0) {
        char names[512];
        fallback_names(names, sizeof names);
        lt_text_put(r,
                    "  fallback: ops without a lowering ran eagerly on synced inputs (op and runs): %s; each run "
                    "cuts the graph in two\n",
                    names);
    }
    if (growth > 0)
        lt_text_put(r, "  growing graph: a graph grew past LT_GRAPH_WARN_NODES nodes without a barrier; end each "
                       "step with lt_mark_step() or lt_step_end() (or set LT_AUTO_BARRIER=1)\n");
}

int lt_metrics_report(char *buf, size_t cap)
{
    char names[MAX_TIMERS][32];
    int n = 0;
    lt_text r = {buf, cap, 0};
    lt_text_put(&r, "Counters:\n");
    for (int i = 0; i < LT_HOT_COUNT; i++) {
        long long v = atomic_load_explicit(&hot_values[i], memory_order_relaxed);
        if (v)
            lt_text_put(&r, "  %-28s %lld\n", hot_names[i], v);
    }
    pthread_mutex_lock(&metrics_lock);
    for (int i = 0; i < ncounters; i++)
        if (counters[i].value)
            lt_text_put(&r, "  %-28s %lld\n", counters[i].name, (long long)counters[i].value);
    for (int i = 0; i < ntimers; i++)
        snprintf(names[n++], sizeof names[0], "%s", timers[i]->name);
    pthread_mutex_unlock(&metrics_lock);
    lt_text_put(&r, "Timers (ms):\n");
    for (int i = 0; i < n; i++) {
        lt_timer_stats s;
        lt_metrics_timer(names[i], &s);
        if (s.count)
            lt_text_put(&r, "  %-22s count %-8lld total %10.3f  p50 %8.4f  p90 %8.4f  p99 %8.4f  max %8.4f\n",
                        names[i], (long long)s.count, s.total_ms, s.p50_ms, s.p90_ms, s.p99_ms, s.max_ms);
    }
    report_problems(&r);
    return (int)r.used;
}
