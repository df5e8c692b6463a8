/*
 * live.c - finding leaked tensors: the list of tensors whose user still
 * holds a reference (lt_live_tensors), a text report of it
 * (lt_live_tensor_report) and, when LT_DEBUG is set, that report on stderr
 * at exit if any tensor is still alive then.
 *
 * Handles that only the library still holds (a lazy view's base whose user
 * released it) are not listed: their user has done nothing wrong.
 */
#include "core/core.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* At most this many tensors are named in the at-exit report. */
#define EXIT_REPORT_MAX 20

typedef struct collect_ctx {
    lt_live_tensor *out;
    int64_t max, count;
} collect_ctx;

static void collect_one(const lt_tensor *t, void *ctx)
{
    collect_ctx *c = ctx;
    if (c->count < c->max) {
        lt_live_tensor *e = &c->out[c->count];
        memset(e, 0, sizeof *e);
        e->id = t->id;
        e->dtype = (lt_dtype)t->dtype;
        e->ndim = t->ndim;
        memcpy(e->shape, t->shape, sizeof(int64_t) * (size_t)t->ndim);
        e->device = t->device;
        e->refcount = atomic_load(&((lt_tensor *)t)->refcount);
        e->made_by = t->made_by ? t->made_by : "unknown";
    }
    c->count++;
}

int64_t lt_live_tensors(lt_live_tensor *out, int64_t max)
{
    if (max < 0 || (max > 0 && !out)) {
        lt_error(max < 0 ? LT_ERR_ARGUMENT : LT_ERR_NULL, "live_tensors: out is %s with max = %lld, expected "
                 "a buffer of max >= 0 entries", out ? "given" : "NULL", (long long)max);
        return -1;
    }
    collect_ctx c = {out, max, 0};
    lt_tensor_foreach_live(collect_one, &c);
    return c.count;
}

/* Appends printf-style text at buf + *len (snprintf semantics: *len
 * counts the full length even past cap). */
__attribute__((format(printf, 4, 5))) static void append(char *buf, size_t cap, size_t *len, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    char *at = buf && *len < cap ? buf + *len : NULL;
    int n = vsnprintf(at, at ? cap - *len : 0, fmt, ap);
    va_end(ap);
    if (n > 0)
        *len += (size_t)n;
}

/* One line per tensor, at most `limit` of them, then a count of the rest. */
static int format_report(const lt_live_tensor *ts, int64_t total, int64_t limit, char *buf, size_t cap)
{
    size_t len = 0;
    if (buf && cap > 0)
        buf[0] = '\0';
    append(buf, cap, &len, "%lld tensor%s alive\n", (long long)total, total == 1 ? "" : "s");
    for (int64_t i = 0; i < total && i < limit; i++) {
        char shape[160], dev[32];
        const lt_live_tensor *e = &ts[i];
        append(buf, cap, &len, "  tensor %llu: %s%s on %s, %d reference%s, made by %s\n",
               (unsigned long long)e->id, lt_dtype_name(e->dtype), lt_shape_str(e->shape, e->ndim, shape, sizeof shape),
               lt_device_str(e->device, dev, sizeof dev), e->refcount, e->refcount == 1 ? "" : "s", e->made_by);
    }
    if (total > limit)
        append(buf, cap, &len, "  ... and %lld more\n", (long long)(total - limit));
    return (int)len;
}

/* The live tensors in a malloc'd array (*count of them; NULL when there
 * are none or memory ran out). Tensors made between the two passes are
 * left out. */
static lt_live_tensor *snapshot(int64_t *count)
{
    int64_t n = lt_live_tensors(NULL, 0);
    lt_live_tensor *ts = n > 0 ? malloc(sizeof *ts * (size_t)n) : NULL;
    *count = ts ? lt_live_tensors(ts, n) : n;
    if (*count > n)
        *count = n;
    return ts;
}

int lt_live_tensor_report(char *buf, size_t cap)
{
    int64_t n = 0;
    lt_live_tensor *ts = snapshot(&n);
    if (n > 0 && !ts) {
        lt_error(LT_ERR_MEMORY, "live_tensor_report: out of memory");
        return -1;
    }
    int len = format_report(ts, n, n, buf, cap);
    free(ts);
    return len;
}

static bool debug_requested(void)
{
    const char *v = getenv("LT_DEBUG");
    return v && *v && strcmp(v, "0") != 0;
}

static void report_at_exit(void)
{
    if (!debug_requested())
        return;
    int64_t n = 0;
    lt_live_tensor *ts = snapshot(&n);
    if (n == 0 || !ts) {
        free(ts);
        return;
    }
    char text[4096];
    format_report(ts, n, EXIT_REPORT_MAX, text, sizeof text);
    fprintf(stderr, "lazytensor (LT_DEBUG): leak report at exit: %s", text);
    free(ts);
}

/* Registered when the library is loaded, so it runs after the atexit
 * handlers the program registers later (which may still release tensors). */
__attribute__((constructor)) static void register_exit_report(void) { atexit(report_at_exit); }
