/*
 * bench/compile_scaling - how the cold compile of a lazy graph grows with
 * its size: the first barrier of a long elementwise chain, with an empty
 * disk cache every time.
 *
 * The chain: x = x * 1.0001 + 0.5 on an f32[4] lazy tensor, repeated, then
 * one barrier (lt_mark_step). "ops" counts the elementwise ops (two per
 * repetition); each scalar is a graph node too, so the graph has about
 * twice as many nodes. For every chain length and repetition a child
 * process (this program with --child) runs with a fresh temporary
 * LT_CACHE_DIR, so every compile is cold, and reports:
 *   the first barrier's wall time (the C compiler's check of itself, a
 *   one-time cost of each process, is done before, by a one-op warm-up
 *   barrier, and printed apart as "cc check"), its time per graph node,
 *   the CPU time of the barrier in this process ("our CPU": tracing aside,
 *   the graph, schedule, memory plan and C rendering) and in the compiler
 *   processes ("cc CPU", which the machine's load changes much less than
 *   wall times), the generated C's size, the number of kernels, of
 *   translation units and of cold ones among them, the largest relative
 *   error of the values against the chain computed in double, and the
 *   compiled chain's execution time ("run": median of a few barriers that
 *   hit the program cache), the run-time price of a cheaper compile.
 * The ratio per-node(longest) / per-node(shortest) is the scaling figure:
 * linear compile time gives 1. The GPT training step of bench/peers_step
 * (run as a child, with a fresh cache too) adds its cold first step and the
 * size of its first program. Every measurement compiles synchronously
 * (LT_TIERED=0, unless the caller set LT_TIERED): this program measures the
 * C compiler's path; the tiered backend's first steps, which do not wait for
 * it, are bench/first_step.sh's. The chains are long on purpose, so the
 * large-graph warning is off (LT_GRAPH_WARN_NODES=0). Medians over the repetitions; targets are
 * printed as PASS/MISS, and the program exits 0 either way (timings never
 * gate anything).
 *
 * usage: compile_scaling [--repeats R] [--sizes N,N,...] [--no-gpt]
 *        compile_scaling --child N       (one measurement, one line)
 */
#include "lazytensor.h"

#include "bench_util.h"

#include <errno.h>
#include <math.h>
#include <spawn.h>
#include <sys/resource.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define MAX_SIZES 8
#define MAX_REPEATS 15
#define MULT 1.0001
#define OFFSET 0.5

extern char **environ;

/* ---- the child: one cold measurement -------------------------------------------------------------- */

/* Step i of the chain: x * MULT + OFFSET or (x + OFFSET) * MULT, picked by
 * a fixed pseudo-random bit sequence. Kernels of the same ops in the same
 * order share one compiled function, so a chain of one repeated step would
 * compile as one small function whatever its length; this chain has no two
 * kernels alike and measures the compiler itself. */
static bool add_first(int i) { return ((uint32_t)i * 2654435761u >> 13) & 1; }

/* The chain's steps, ops / 2 of them; returns the final x (the caller's
 * reference). Every intermediate is released at once, so the barrier has
 * one root. */
static lt_tensor *trace_chain(lt_tensor *x, int ops)
{
    lt_retain(x);
    for (int i = 0; i < ops / 2 && x; i++) {
        lt_scope_begin();
        lt_tensor *y = add_first(i) ? lt_mul_scalar(lt_add_scalar(x, OFFSET), MULT)
                                    : lt_add_scalar(lt_mul_scalar(x, MULT), OFFSET);
        if (y)
            lt_retain(y);
        lt_scope_end();
        lt_release(x);
        x = y;
    }
    return x;
}

/* Worst relative error of x's values against the chain in double. */
static double chain_error(lt_tensor *x, const float *start, int ops)
{
    float got[4];
    if (lt_copy_to_host(x, got, sizeof got) != LT_OK)
        return INFINITY;
    double worst = 0;
    for (int e = 0; e < 4; e++) {
        double v = start[e];
        for (int i = 0; i < ops / 2; i++)
            v = add_first(i) ? (v + OFFSET) * MULT : v * MULT + OFFSET;
        double err = fabs(got[e] - v) / fmax(1.0, fabs(v));
        worst = err > worst || isnan(err) ? err : worst;
    }
    return worst;
}

/* CPU seconds of this process (who = RUSAGE_SELF) or of its reaped
 * children (RUSAGE_CHILDREN: the compiler processes). */
static double cpu_s(int who)
{
    struct rusage ru;
    getrusage(who, &ru);
    return (double)ru.ru_utime.tv_sec + (double)ru.ru_stime.tv_sec +
           1e-6 * (double)(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec);
}

/* The compiled chain's execution time (ms, median of RUNS barriers that
 * hit the in-memory cache: the cost of the generated code at run time). */
#define RUNS 7
static double run_time_ms(lt_tensor *x0, int ops)
{
    lt_metrics_reset();
    for (int r = 0; r < RUNS; r++) {
        lt_tensor *x = trace_chain(x0, ops);
        if (!x || lt_mark_step() != LT_OK)
            return NAN;
        lt_release(x);
    }
    lt_timer_stats t;
    if (lt_metrics_timer("ExecuteTime", &t) != LT_OK || t.count != RUNS ||
        lt_metrics_counter("UncachedCompile") != 0)
        return NAN;
    return t.p50_ms;
}

static int child(int ops)
{
    lt_device lazy = lt_device_parse("lazy");
    const float start[4] = {1.0f, -2.0f, 3.5f, 0.25f};
    const int64_t four = 4, one = 1;
    lt_scope_begin();
    double t0 = now_ms(); /* warm-up: the toolchain check, on another graph */
    lt_tensor *w = lt_add_scalar(lt_full(&one, 1, 1.0, LT_F32, lazy), 2.0);
    double probe_ms = w && lt_mark_step() == LT_OK ? now_ms() - t0 : -1;
    lt_tensor *x0 = lt_from_data(start, &four, 1, LT_F32, lazy);
    lt_tensor *x = x0 ? trace_chain(x0, ops) : NULL;
    double self0 = cpu_s(RUSAGE_SELF), cc0 = cpu_s(RUSAGE_CHILDREN);
    t0 = now_ms();
    lt_status st = x ? lt_mark_step() : LT_ERR_STATE;
    double ms = now_ms() - t0;
    double self_ms = (cpu_s(RUSAGE_SELF) - self0) * 1e3, cc_ms = (cpu_s(RUSAGE_CHILDREN) - cc0) * 1e3;
    if (st != LT_OK || probe_ms < 0) {
        printf("error %s\n", lt_last_error());
        return 1;
    }
    long long nodes = lt_metrics_counter("GraphNodes"), bytes = lt_metrics_counter("ProgramBytes");
    long long kernels = lt_metrics_counter("Kernels"), units = lt_metrics_counter("TranslationUnits");
    long long cold = lt_metrics_counter("ColdUnits");
    double error = chain_error(x, start, ops), run_ms = run_time_ms(x0, ops);
    printf("ms %.3f self_cpu_ms %.1f cc_cpu_ms %.1f nodes %lld bytes %lld kernels %lld units %lld cold %lld probe_ms %.3f "
           "error %.3g run_ms %.4f\n",
           ms, self_ms, cc_ms, nodes, bytes, kernels, units, cold, probe_ms, error, run_ms);
    lt_release(x);
    lt_scope_end();
    return 0;
}

/* ---- the parent: children with fresh caches --------------------------------------------------------- */

/* Runs argv with LT_CACHE_DIR set to a fresh temporary directory (removed
 * afterwards) and its stdout in out; false if it could not run or failed. */
static bool run_cold(char *const argv[], char *out, size_t cap)
{
    char dir[] = "/tmp/lt_scaling_cache_XXXXXX";
    int fds[2];
    if (!mkdtemp(dir) || pipe(fds) != 0)
        return false;
    setenv("LT_CACHE_DIR", dir, 1);
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_adddup2(&fa, fds[1], STDOUT_FILENO);
    posix_spawn_file_actions_addclose(&fa, fds[0]);
    pid_t pid;
    int rc = posix_spawn(&pid, argv[0], &fa, NULL, argv, environ);
    posix_spawn_file_actions_destroy(&fa);
    close(fds[1]);
    size_t n = 0;
    for (ssize_t got; rc == 0 && n + 1 < cap && (got = read(fds[0], out + n, cap - 1 - n)) != 0;) {
        if (got < 0 && errno == EINTR)
            continue;
        if (got < 0)
            break;
        n += (size_t)got;
    }
    out[n] = '\0';
    close(fds[0]);
    int status = 1;
    if (rc == 0)
        while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
            ;
    char *rm[] = {"rm", "-rf", dir, NULL}; /* argv, no shell */
    pid_t rm_pid;
    if (posix_spawnp(&rm_pid, "rm", NULL, NULL, rm, environ) == 0)
        waitpid(rm_pid, NULL, 0);
    unsetenv("LT_CACHE_DIR");
    return rc == 0 && WIFEXITED(status) && WEXITSTATUS(status) == 0;
}

/* The value after `key ` in a line of `key value` pairs or JSON
 * (`"key": value`); NAN when absent. */
static double field(const char *text, const char *key)
{
    char pat[64];
    snprintf(pat, sizeof pat, "\"%s\": ", key);
    const char *p = strstr(text, pat);
    if (!p) {
        snprintf(pat, sizeof pat, "%s ", key);
        p = strstr(text, pat);
    }
    return p ? strtod(p + strlen(pat), NULL) : NAN;
}

typedef struct row {
    int ops;
    double ms, per_node_us, self_ms, cc_ms, nodes, bytes, kernels, units, cold, probe_ms, error, run_ms;
    bool ok;
} row;

static row measure_chain(const char *self, int ops, int repeats)
{
    row r = {.ops = ops, .ok = true};
    double ms[MAX_REPEATS], probe[MAX_REPEATS], own[MAX_REPEATS], cc[MAX_REPEATS];
    char arg[32], out[1024];
    snprintf(arg, sizeof arg, "%d", ops);
    char *argv[] = {(char *)self, "--child", arg, NULL};
    for (int i = 0; i < repeats && r.ok; i++) {
        r.ok = run_cold(argv, out, sizeof out) && !isnan(field(out, "ms"));
        ms[i] = field(out, "ms");
        probe[i] = field(out, "probe_ms");
        own[i] = field(out, "self_cpu_ms");
        cc[i] = field(out, "cc_cpu_ms");
        r.cold = field(out, "cold");
        r.run_ms = field(out, "run_ms");
        r.nodes = field(out, "nodes");
        r.bytes = field(out, "bytes");
        r.kernels = field(out, "kernels");
        r.units = field(out, "units");
        r.error = field(out, "error");
        if (!r.ok)
            printf("   chain of %d ops failed: %s", ops, out);
    }
    if (r.ok) {
        r.ms = median(ms, repeats);
        r.probe_ms = median(probe, repeats);
        r.self_ms = median(own, repeats);
        r.cc_ms = median(cc, repeats);
        r.per_node_us = r.ms * 1e3 / r.nodes;
    }
    return r;
}

/* The cold first step of bench/peers_step's GPT workload (next to this
 * program), with a fresh cache. */
static void measure_gpt(const char *self, int repeats)
{
    char path[1024];
    snprintf(path, sizeof path, "%s", self);
    char *slash = strrchr(path, '/');
    snprintf(slash ? slash + 1 : path, sizeof path - (size_t)(slash ? slash + 1 - path : 0), "peers_step");
    char *argv[] = {path, "--device", "lazy", "--workload", "gpt", "--steps", "1", NULL};
    double cold[MAX_REPEATS];
    char out[4096];
    for (int i = 0; i < repeats; i++) {
        if (!run_cold(argv, out, sizeof out) || isnan(field(out, "cold_ms"))) {
            printf("   GPT step (%s) failed: %s\n", path, out);
            return;
        }
        cold[i] = field(out, "cold_ms");
    }
    double m = median(cold, repeats);
    printf("   %-20s %6.0f ms %6.0f %29s %8.0f %7.0f %6.0f\n", "GPT step, cold", m, field(out, "cold_nodes"), "",
           field(out, "cold_program_bytes"), field(out, "cold_kernels"), field(out, "cold_units"));
    printf("   GPT step (bench/peers_step, first step with a fresh cache: compile + one step of %.0f ms): %.0f ms   "
           "target <= 1000 ms  %s\n",
           field(out, "median_ms"), m, m <= 1000 ? "PASS" : "MISS");
}

static int parse_sizes(const char *s, int *sizes)
{
    int n = 0;
    for (char *end; *s && n < MAX_SIZES; s = *end ? end + 1 : end) {
        long v = strtol(s, &end, 10);
        if (end == s || v < 2 || v > 1000000)
            return 0;
        sizes[n++] = (int)v;
    }
    return n;
}

int main(int argc, char **argv)
{
    int sizes[MAX_SIZES] = {100, 1000, 10000}, nsizes = 3, repeats = 3;
    bool gpt = true;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--child") && i + 1 < argc)
            return child(atoi(argv[i + 1]));
        if (!strcmp(argv[i], "--repeats") && i + 1 < argc)
            repeats = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--sizes") && i + 1 < argc)
            nsizes = parse_sizes(argv[++i], sizes);
        else if (!strcmp(argv[i], "--no-gpt"))
            gpt = false;
        else
            nsizes = 0;
    }
    if (nsizes == 0 || repeats < 1 || repeats > MAX_REPEATS) {
        fprintf(stderr, "usage: compile_scaling [--repeats 1..%d] [--sizes N,N,...] [--no-gpt]\n", MAX_REPEATS);
        return 2;
    }
    setenv("LT_TIERED", "0", 0); /* inherited by the children */
    setenv("LT_GRAPH_WARN_NODES", "0", 0);
    double load[3] = {0, 0, 0};
    getloadavg(load, 3);
    printf("lazytensor: cold compile vs graph size (chain of x = x * %g + %g or (x + %g) * %g in a fixed pseudo-random "
           "order, on f32[4]; fresh LT_CACHE_DIR per run; medians of %d)\n",
           MULT, OFFSET, OFFSET, MULT, repeats);
    printf("   %ld CPUs online, load average %.2f: wall times grow with the load, the CPU columns much less\n",
           sysconf(_SC_NPROCESSORS_ONLN), load[0]);
    printf("   %-20s %9s %6s %10s %8s %9s %8s %7s %10s %8s %8s %9s\n", "graph", "barrier", "nodes", "us/node", "our CPU",
           "cc CPU", "C bytes", "kernels", "units/cold", "max err", "cc check", "run");
    row rows[MAX_SIZES];
    for (int s = 0; s < nsizes; s++) {
        rows[s] = measure_chain(argv[0], sizes[s], repeats);
        const row *r = &rows[s];
        if (!r->ok)
            continue;
        char name[40];
        snprintf(name, sizeof name, "chain, %d ops", r->ops);
        printf("   %-20s %6.0f ms %6.0f %7.1f us %5.0f ms %6.0f ms %8.0f %7.0f %6.0f/%-3.0f %8.1e %5.0f ms %6.3f ms\n",
               name, r->ms, r->nodes, r->per_node_us, r->self_ms, r->cc_ms, r->bytes, r->kernels, r->units, r->cold,
               r->error, r->probe_ms, r->run_ms);
        fflush(stdout);
    }
    const row *lo = &rows[0], *hi = &rows[nsizes - 1];
    if (nsizes > 1 && lo->ok && hi->ok) {
        double ratio = hi->per_node_us / lo->per_node_us;
        printf("   per-node ratio (%d ops / %d ops): %.2f   target <= 2.00  %s\n", hi->ops, lo->ops, ratio,
               ratio <= 2.0 ? "PASS" : "MISS");
        if (hi->ops >= 10000)
            printf("   first barrier of %d ops: %.0f ms   target <= 3000 ms  %s\n", hi->ops, hi->ms,
                   hi->ms <= 3000 ? "PASS" : "MISS");
    }
    if (gpt)
        measure_gpt(argv[0], repeats);
    return 0;
}
