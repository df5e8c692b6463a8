/*
 * bench/tracing - what the lazy device costs per op before any kernel runs.
 *
 *   1. Recording: ns per tiny op (f32[4]) traced on the lazy device, with no
 *      barrier: 100,000 ops per repeat, as a chain (each op reads the last
 *      result, whose previous value is dropped) and as independent ops in
 *      scopes of 1,000. Our eager device's per-op cost for the same calls
 *      (kernels included) sits beside it. The lazy chain is also given in
 *      thread CPU time, which a busy machine disturbs less.
 *   2. Cached barrier: the same 1,000-node graph (a chain of adds and
 *      multiplications by a runtime scalar over f32[4]) traced again every
 *      iteration and cut by lt_barrier(true): after the first iteration
 *      every barrier is a cache hit. Printed: the cold first barrier
 *      (compile), then medians of the trace, the barrier alone and both,
 *      per backend, and the number of compiles after the first.
 *
 * usage: tracing [--quick]. Medians over repeats; figures only, exits 0.
 * Run it with a fresh LT_CACHE_DIR to make the cold barrier a real compile.
 * `tracing --count OP N` only records N ops for an instruction counter
 * (bench/tracing_instructions.sh: instructions per op, which unlike time
 * do not depend on what else the machine runs).
 */
#include "lazytensor.h"

#include "bench_util.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define MAX_REPEATS 64

enum { RECORD_OPS = 100000, SCOPE_OPS = 1000, GRAPH_NODES = 1000 };

typedef enum tiny_op { OP_ADD, OP_MUL_SCALAR, OP_RELU, OP_AFFINE, OP_COUNT } tiny_op;

static const char *const op_names[OP_COUNT] = {"add(x, b)", "mul_scalar(x, 0.5)", "relu(x)",
                                               "x * 1.0001 + 0.5"};
/* Names for --count. */
static const char *const op_keys[OP_COUNT] = {"add", "mul_scalar", "relu", "affine"};
/* Library ops per application: the affine step is a mul_scalar then an
 * add_scalar (the Python front end's overhead benchmark does the same). */
static const int op_calls[OP_COUNT] = {1, 1, 1, 2};

static double clock_ns(clockid_t clock)
{
    struct timespec ts;
    clock_gettime(clock, &ts);
    return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

static double now_ns(void) { return clock_ns(CLOCK_MONOTONIC); }

static lt_tensor *tiny_input(lt_device dev, float first)
{
    const float data[4] = {first, -2.0f, 3.0f, -4.0f};
    const int64_t four = 4;
    return lt_from_data(data, &four, 1, LT_F32, dev);
}

/* Inside a scope the intermediate belongs to the scope: releasing it too
 * would be one release too many. */
static lt_tensor *affine(lt_tensor *x)
{
    lt_tensor *y = lt_mul_scalar(x, 1.0001);
    lt_tensor *z = lt_add_scalar(y, 0.5);
    if (lt_scope_depth() == 0)
        lt_release(y);
    return z;
}

static lt_tensor *apply(tiny_op op, lt_tensor *x, lt_tensor *b)
{
    switch (op) {
    case OP_ADD: return lt_add(x, b);
    case OP_MUL_SCALAR: return lt_mul_scalar(x, 0.5);
    case OP_AFFINE: return affine(x);
    default: return lt_relu(x);
    }
}

/* ---- 1. recording --------------------------------------------------------- */

/* `applications` of op, each on the previous result; the old result is released
 * at once, so only the chain's end is live. On the lazy device nothing runs:
 * dropping the last tensor discards the graph. */
static bool chain_once(tiny_op op, lt_tensor *a, lt_tensor *b, int applications)
{
    lt_tensor *x = lt_retain(a);
    for (int i = 0; i < applications && x; i++) {
        lt_tensor *next = apply(op, x, b);
        lt_release(x);
        x = next;
    }
    bool ok = x != NULL;
    lt_release(x);
    return ok;
}

/* RECORD_OPS independent ops on the same inputs, a scope every SCOPE_OPS. */
static bool independent_once(tiny_op op, lt_tensor *a, lt_tensor *b)
{
    bool ok = true;
    int per_scope = SCOPE_OPS / op_calls[op];
    for (int s = 0; ok && s < RECORD_OPS / SCOPE_OPS; s++) {
        lt_scope_begin();
        for (int i = 0; ok && i < per_scope; i++)
            ok = apply(op, a, b) != NULL;
        lt_scope_end();
    }
    return ok;
}

/* Median ns per op of wall time, or -1 on error; *cpu_ns gets the median
 * of this thread's CPU time (time preempted left out: steadier on a busy
 * machine). */
static double ns_per_op(bool chain, tiny_op op, lt_device dev, int repeats, double *cpu_ns)
{
    lt_tensor *a = tiny_input(dev, 1.0f), *b = tiny_input(dev, 0.25f);
    double t[MAX_REPEATS], c[MAX_REPEATS];
    bool ok = a && b && (lt_device_equal(dev, lt_device_cpu()) || lt_mark_step() == LT_OK);
    for (int r = 0; ok && r < repeats; r++) {
        double t0 = now_ns(), c0 = clock_ns(CLOCK_THREAD_CPUTIME_ID);
        ok = chain ? chain_once(op, a, b, RECORD_OPS / op_calls[op]) : independent_once(op, a, b);
        c[r] = (clock_ns(CLOCK_THREAD_CPUTIME_ID) - c0) / RECORD_OPS;
        t[r] = (now_ns() - t0) / RECORD_OPS;
    }
    lt_release(a);
    lt_release(b);
    *cpu_ns = ok ? median(c, repeats) : -1;
    return ok ? median(t, repeats) : -1;
}

static void print_ns(double v)
{
    if (v < 0) {
        printf(" %12s", "error");
        lt_clear_error();
    } else {
        printf(" %12.0f", v);
    }
}

static void bench_recording(int repeats)
{
    lt_device lazy = lt_device_parse("lazy"), cpu = lt_device_cpu();
    printf("1. Recording tiny ops (f32[4]), %d ops per repeat, median ns/op of %d repeats\n", RECORD_OPS,
           repeats);
    printf("   %-20s %12s %12s %12s %12s %12s\n", "op", "lazy chain", "(CPU time)", "lazy indep.", "eager chain",
           "eager indep.");
    for (int op = 0; op < OP_COUNT; op++) {
        double cpu_ns, unused;
        printf("   %-20s", op_names[op]);
        print_ns(ns_per_op(true, (tiny_op)op, lazy, repeats, &cpu_ns));
        print_ns(cpu_ns);
        print_ns(ns_per_op(false, (tiny_op)op, lazy, repeats, &unused));
        print_ns(ns_per_op(true, (tiny_op)op, cpu, repeats, &unused));
        print_ns(ns_per_op(false, (tiny_op)op, cpu, repeats, &unused));
        printf("\n");
    }
    printf("   (lazy: recording only, nothing runs; eager: the op runs, kernel included; CPU time: this\n"
           "   thread's, without the time other programs had the core; instructions per op:\n"
           "   bench/tracing_instructions.sh)\n");
}

/* ---- 2. cached barrier ----------------------------------------------------- */

/* GRAPH_NODES ops over a: adds of b alternating with multiplications by a
 * scalar that changes every iteration (a runtime parameter, so the graph
 * and its cache key stay the same). Returns the chain's end. */
static lt_tensor *trace_graph(lt_tensor *a, lt_tensor *b, int iteration)
{
    lt_tensor *x = lt_retain(a);
    for (int i = 0; i < GRAPH_NODES && x; i++) {
        lt_tensor *next = i % 2 ? lt_mul_scalar(x, 0.5 + 1e-3 * iteration) : lt_add(x, b);
        lt_release(x);
        x = next;
    }
    return x;
}

typedef struct barrier_times {
    double cold_ms, trace_us, barrier_us, total_us;
    int64_t compiles_after_first;
} barrier_times;

/* One iteration: trace, then barrier; *trace_ns / *barrier_ns get the parts. */
static bool barrier_iteration(lt_tensor *a, lt_tensor *b, int it, double *trace_ns, double *barrier_ns)
{
    double t0 = now_ns();
    lt_tensor *x = trace_graph(a, b, it);
    double t1 = now_ns();
    bool ok = x && lt_barrier(true) == LT_OK;
    double t2 = now_ns();
    lt_release(x);
    *trace_ns = t1 - t0;
    *barrier_ns = t2 - t1;
    return ok;
}

static bool bench_barrier_backend(const char *backend, int repeats, barrier_times *out)
{
    if (lt_lazy_set_backend(backend) != LT_OK)
        return false;
    lt_device lazy = lt_device_parse("lazy");
    lt_tensor *a = tiny_input(lazy, 1.0f), *b = tiny_input(lazy, 0.25f);
    double trace[MAX_REPEATS], barrier[MAX_REPEATS], total[MAX_REPEATS], cold_trace, cold_barrier;
    bool ok = a && b && lt_mark_step() == LT_OK && barrier_iteration(a, b, 0, &cold_trace, &cold_barrier);
    int64_t compiles0 = lt_metrics_counter("UncachedCompile");
    for (int r = 0; ok && r < repeats; r++) {
        ok = barrier_iteration(a, b, r + 1, &trace[r], &barrier[r]);
        total[r] = trace[r] + barrier[r];
    }
    lt_release(a);
    lt_release(b);
    if (!ok)
        return false;
    out->cold_ms = cold_barrier * 1e-6;
    out->trace_us = median(trace, repeats) * 1e-3;
    out->barrier_us = median(barrier, repeats) * 1e-3;
    out->total_us = median(total, repeats) * 1e-3;
    out->compiles_after_first = lt_metrics_counter("UncachedCompile") - compiles0;
    return true;
}

static void bench_barrier(int repeats)
{
    static const char *const backends[] = {"cpu", "interp"};
    printf("\n2. Cached barrier over a %d-node graph (f32[4] chain of add / mul by a runtime scalar),\n"
           "   traced again every iteration; medians of %d iterations after the first\n",
           GRAPH_NODES, repeats);
    printf("   %-8s %14s %12s %14s %12s %18s\n", "backend", "cold barrier", "trace", "cached barrier", "total",
           "compiles (cached)");
    for (int i = 0; i < 2; i++) {
        barrier_times t;
        if (!bench_barrier_backend(backends[i], repeats, &t)) {
            printf("   %-8s n/a (%s)\n", backends[i], lt_last_error());
            lt_clear_error();
            continue;
        }
        printf("   %-8s %11.1f ms %9.1f us %11.1f us %9.1f us %18lld\n", backends[i], t.cold_ms, t.trace_us,
               t.barrier_us, t.total_us, (long long)t.compiles_after_first);
    }
    printf("   (the cached barrier hashes and canonicalizes the graph, finds the program and runs it)\n");
}

/* --count OP N: only N applications of OP recorded as a chain on the lazy
 * device, for an instruction counter run around the whole process
 * (bench/tracing_instructions.sh takes the difference of two N). */
static int count_only(const char *key, const char *count)
{
    int op = 0;
    while (op < OP_COUNT && strcmp(op_keys[op], key))
        op++;
    char *end;
    long n = strtol(count, &end, 10);
    if (op == OP_COUNT || *end || n < 1 || n > 100000000) {
        fprintf(stderr, "tracing --count: OP is add, mul_scalar, relu or affine; N from 1 to 1e8\n");
        return 2;
    }
    lt_device lazy = lt_device_parse("lazy");
    lt_tensor *a = tiny_input(lazy, 1.0f), *b = tiny_input(lazy, 0.25f);
    bool ok = a && b && lt_mark_step() == LT_OK && chain_once((tiny_op)op, a, b, (int)n);
    lt_release(a);
    lt_release(b);
    printf("%s x %ld: %s\n", op_names[op], n, ok ? "recorded" : lt_last_error());
    return ok ? 0 : 1;
}

int main(int argc, char **argv)
{
    if (argc == 4 && !strcmp(argv[1], "--count"))
        return count_only(argv[2], argv[3]);
    bool quick = argc == 2 && !strcmp(argv[1], "--quick");
    if (argc > 2 || (argc == 2 && !quick)) {
        fprintf(stderr, "usage: tracing [--quick] | tracing --count OP N\n");
        return 2;
    }
    int repeats = quick ? 3 : 15;
    printf("tracing: library %s, %d threads, lazy backend %s\n\n", lt_version(), lt_get_num_threads(),
           lt_lazy_backend());
    bench_recording(repeats);
    bench_barrier(quick ? 5 : 51);
    return 0;
}
