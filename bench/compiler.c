/*
 * bench/compiler - the cpu compiler backend, measured side by side:
 *   1. compile time of new graphs with an empty cache directory (cold: the
 *      C compiler runs) and again from the disk cache (warm: validate and
 *      dlopen), for a small chain, an MLP training step and a transformer
 *      block's training step (first, so that the cache really is cold);
 *   2. fused relu(a * b + c) * 0.5 on 16M f32 (one compiled kernel) against
 *      a hand-written OpenMP C loop: bandwidth (3 reads + 1 write per
 *      element) and its ratio;
 *   3. the same chain, lazy (compiled) against our eager device (4 passes);
 *   4. the kernel counts of a few patterns. Medians over repeats, 2 threads
 * unless --threads N. Targets are printed with PASS/MISS; the program exits
 * 0 either way (timings never gate anything). The training-step rows (MLP,
 * transformer block against PyTorch) are in bench/train_step.
 *
 * usage: compiler [--quick] [--threads N]
 */
#include "lazytensor.h"

#include "bench_util.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define MAX_REPEATS 64

static int repeats = 15;

static const char *verdict(int pass) { return pass ? "PASS" : "MISS"; }

/* ---- 1, 2: the fused chain ---------------------------------------------------------------- */

static void hand_loop(const float *restrict a, const float *restrict b, const float *restrict c, float *restrict y,
                      int64_t n)
{
#pragma omp parallel for schedule(static)
    for (int64_t i = 0; i < n; i++) {
        float s = a[i] * b[i] + c[i];
        y[i] = (s > 0 ? s : 0) * 0.5f;
    }
}

static lt_tensor *chain(lt_tensor *a, lt_tensor *b, lt_tensor *c)
{
    return lt_mul_scalar(lt_relu(lt_add(lt_mul(a, b), c)), 0.5);
}

/* Time of one lazy step computing the chain (the barrier: graph key, cache
 * lookup, execution). */
static double lazy_step_ms(lt_tensor *a, lt_tensor *b, lt_tensor *c)
{
    lt_scope_begin();
    lt_scope_begin();
    lt_keep(chain(a, b, c)); /* only the result outlives the inner scope */
    lt_scope_end();
    double t0 = now_ms();
    lt_status st = lt_mark_step();
    double t = now_ms() - t0;
    lt_scope_end();
    return st == LT_OK ? t : -1;
}

static double eager_chain_ms(lt_tensor *a, lt_tensor *b, lt_tensor *c)
{
    lt_scope_begin();
    double t0 = now_ms();
    lt_tensor *y = chain(a, b, c);
    double t = now_ms() - t0;
    lt_scope_end();
    return y ? t : -1;
}

static void bench_chain(int64_t n)
{
    size_t bytes = sizeof(float) * (size_t)n;
    float *ha = malloc(bytes), *hb = malloc(bytes), *hc = malloc(bytes), *hy = malloc(bytes);
    if (!ha || !hb || !hc || !hy) {
        printf("   out of memory\n");
        return;
    }
    for (int64_t i = 0; i < n; i++) {
        ha[i] = (float)((i % 1000) - 500) * 0.002f;
        hb[i] = (float)((i % 777) - 300) * 0.003f;
        hc[i] = (float)((i % 333) - 100) * 0.001f;
    }
    lt_device cpu = lt_device_cpu(), lazy = lt_device_parse("lazy");
    int64_t dims[1] = {n};
    lt_tensor *ea = lt_retain(lt_from_data(ha, dims, 1, LT_F32, cpu)), *eb = lt_retain(lt_from_data(hb, dims, 1, LT_F32, cpu)),
              *ec = lt_retain(lt_from_data(hc, dims, 1, LT_F32, cpu));
    lt_tensor *la = lt_retain(lt_to(ea, lazy)), *lb = lt_retain(lt_to(eb, lazy)), *lc = lt_retain(lt_to(ec, lazy));
    if (!ea || !eb || !ec || !la || !lb || !lc) {
        printf("   setup failed: %s\n", lt_last_error());
        return;
    }
    double th[MAX_REPEATS], tl[MAX_REPEATS], te[MAX_REPEATS];
    for (int w = 0; w < 3; w++) { /* warm up: page faults, the compile, the allocator's cache */
        hand_loop(ha, hb, hc, hy, n);
        lazy_step_ms(la, lb, lc);
        eager_chain_ms(ea, eb, ec);
    }
    int64_t kernels = lt_metrics_counter("Kernels");
    for (int r = 0; r < repeats; r++) { /* interleaved, so drift hits all three alike */
        double t0 = now_ms();
        hand_loop(ha, hb, hc, hy, n);
        th[r] = now_ms() - t0;
        tl[r] = lazy_step_ms(la, lb, lc);
        te[r] = eager_chain_ms(ea, eb, ec);
    }
    double mh = median(th, repeats), ml = median(tl, repeats), me = median(te, repeats);
    double gb = 16.0 * (double)n / 1e6; /* 3 reads + 1 write of 4 bytes, in MB -> GB/s with ms */
    printf("2. fused relu(a*b+c)*0.5, %lld f32, %d threads (%lld kernel)\n", (long long)n, lt_get_num_threads(),
           (long long)kernels);
    printf("   %-34s %9.3f ms %7.1f GB/s\n", "hand-written OpenMP loop", mh, gb / mh);
    printf("   %-34s %9.3f ms %7.1f GB/s\n", "lazy step (compiled kernel)", ml, gb / ml);
    printf("   %-34s %9.1f %%   target >= 90 %%  %s\n", "lazy bandwidth / hand loop", 100 * mh / ml,
           verdict(mh / ml >= 0.9));
    printf("3. same chain: lazy vs our eager (4 passes)\n");
    printf("   %-34s %9.3f ms\n", "eager, 4 ops", me);
    printf("   %-34s %9.2f x   target >= 2.5 x  %s\n", "eager time / lazy time", me / ml, verdict(me / ml >= 2.5));
    lt_release(la), lt_release(lb), lt_release(lc), lt_release(ea), lt_release(eb), lt_release(ec);
    free(ha), free(hb), free(hc), free(hy);
}

/* ---- 3: compile time ------------------------------------------------------------------------ */

/* Compile time (ms) of the graph the next barrier runs. */
static double compile_ms(lt_status (*run)(int64_t), int64_t size)
{
    lt_timer_stats before, after;
    lt_metrics_timer("CompileTime", &before);
    if (run(size) != LT_OK)
        return -1;
    lt_metrics_timer("CompileTime", &after);
    return after.count > before.count ? after.total_ms - before.total_ms : -1;
}

static lt_status run_chain(int64_t n)
{
    lt_device lazy = lt_device_parse("lazy");
    lt_scope_begin();
    lt_tensor *a = lt_full(&n, 1, 1.5, LT_F32, lazy), *b = lt_full(&n, 1, 2.5, LT_F32, lazy);
    double v;
    lt_status st = lt_item(lt_sum(chain(a, b, a), NULL, 0, false), &v);
    lt_scope_end();
    return st;
}

/* One SGD training step of an MLP 784-512-512-10 (batch `batch`): the
 * biggest graph here (matmuls, softmax, reductions, the update). */
static lt_status run_mlp(int64_t batch)
{
    lt_device lazy = lt_device_parse("lazy");
    lt_scope_begin();
    lt_manual_seed(1);
    lt_module *l[] = {lt_nn_linear(784, 512, true, lazy), lt_nn_relu(), lt_nn_linear(512, 512, true, lazy),
                      lt_nn_relu(), lt_nn_linear(512, 10, true, lazy)};
    lt_module *m = lt_nn_sequential(l, 5);
    lt_tensor *params[8];
    int np = lt_module_parameters(m, params, NULL, 8);
    lt_optimizer *o = lt_optim_sgd(params, np, 0.01, 0, 0, false);
    lt_tensor *x = lt_randn((int64_t[]){batch, 784}, 2, LT_F32, lazy);
    lt_tensor *y = lt_randint(0, 10, &batch, 1, LT_I64, lazy);
    lt_status st = lt_mark_step(); /* parameters and inputs first */
    if (st == LT_OK) {
        lt_step_begin();
        lt_tensor *loss = lt_cross_entropy(lt_module_forward(m, x), y, 0);
        st = loss ? lt_backward(loss, NULL) : lt_last_status();
        if (st == LT_OK)
            st = lt_optim_step(o);
        lt_status end = lt_step_end();
        st = st == LT_OK ? end : st;
    }
    lt_optim_free(o);
    lt_module_free(m);
    lt_scope_end();
    return st;
}

/* One Adam training step of a transformer block (d 256, 4 heads, ffn 1024,
 * batch `batch`, seq 32; loss mean(out^2)), as in bench/train_step: the
 * largest generated source here (about 50 kernels). */
static lt_status run_transformer(int64_t batch)
{
    lt_device lazy = lt_device_parse("lazy");
    lt_scope_begin();
    lt_manual_seed(1);
    lt_module *l[] = {lt_nn_layer_norm(256, 1e-5, lazy), lt_nn_self_attention(256, 4, false, lazy),
                      lt_nn_layer_norm(256, 1e-5, lazy), lt_nn_linear(256, 1024, true, lazy),
                      lt_nn_linear(1024, 256, true, lazy)};
    lt_tensor *params[64];
    int np = 0;
    for (int i = 0; i < 5; i++)
        np += lt_module_parameters(l[i], params + np, NULL, 64 - np);
    lt_optimizer *o = lt_optim_adam(params, np, 1e-3, 0.9, 0.999, 1e-8, 0, false);
    lt_tensor *x = lt_randn((int64_t[]){batch, 32, 256}, 3, LT_F32, lazy);
    lt_status st = lt_mark_step(); /* parameters and inputs first */
    if (st == LT_OK) {
        lt_step_begin();
        lt_tensor *h = lt_add(x, lt_module_forward(l[1], lt_module_forward(l[0], x)));
        lt_tensor *f = lt_module_forward(l[4], lt_gelu(lt_module_forward(l[3], lt_module_forward(l[2], h))));
        lt_tensor *out = lt_add(h, f);
        lt_tensor *loss = lt_mean(lt_mul(out, out), NULL, 0, false);
        st = loss ? lt_backward(loss, NULL) : lt_last_status();
        if (st == LT_OK)
            st = lt_optim_step(o);
        lt_status end = lt_step_end();
        st = st == LT_OK ? end : st;
    }
    lt_optim_free(o);
    for (int i = 0; i < 5; i++)
        lt_module_free(l[i]);
    lt_scope_end();
    return st;
}

static void bench_compile(void)
{
    enum { GRAPHS = 5 };
    printf("1. compile time (cache directory %s)\n", getenv("LT_CACHE_DIR"));
    const struct {
        const char *name;
        lt_status (*run)(int64_t);
        int64_t base;
    } g[3] = {{"relu chain + sum", run_chain, 1000},
              {"MLP SGD train step", run_mlp, 16},
              {"transformer Adam step", run_transformer, 2}};
    for (int k = 0; k < 3; k++) {
        double cold[GRAPHS], warm[GRAPHS];
        int n = k == 0 ? GRAPHS : 2;
        for (int i = 0; i < n; i++) /* new shapes: new programs, compiled */
            cold[i] = compile_ms(g[k].run, g[k].base + i);
        lt_lazy_set_cache_size(1); /* forget them in memory: the disk serves them */
        for (int i = 0; i < n; i++)
            warm[i] = compile_ms(g[k].run, g[k].base + i);
        lt_lazy_set_cache_size(1024);
        double mc = median(cold, n), mw = median(warm, n);
        printf("   %-22s cold %8.1f ms   disk-warm %7.2f ms   target cold <= 500 ms  %s\n", g[k].name, mc, mw,
               verdict(mc >= 0 && mc <= 500));
    }
    printf("   disk cache: %lld hits, %lld misses\n", (long long)lt_metrics_counter("DiskCacheHit"),
           (long long)lt_metrics_counter("DiskCacheMiss"));
}

/* ---- kernel counts ------------------------------------------------------------------------------ */

static void kernel_counts(void)
{
    lt_device lazy = lt_device_parse("lazy");
    int64_t n = 4096, d2[2] = {256, 512}, b = 64;
    printf("4. kernels per program\n");
    lt_scope_begin();
    lt_tensor *a = lt_randn(&n, 1, LT_F32, lazy), *x = lt_randn(d2, 2, LT_F32, lazy);
    lt_mark_step();
    struct {
        const char *name;
        int which;
    } rows[] = {{"relu(a*b+c)*0.5", 0}, {"softmax(x), x [256, 512]", 1}, {"layer norm of x (rows)", 2},
                {"MLP SGD train step (batch 64)", 3}};
    for (int r = 0; r < 4; r++) {
        lt_status st = LT_OK;
        if (rows[r].which == 3) {
            st = run_mlp(b);
        } else {
            lt_scope_begin();
            lt_tensor *y = NULL;
            int dim[1] = {1};
            if (rows[r].which == 0)
                y = chain(a, a, a);
            else if (rows[r].which == 1)
                y = lt_softmax(x, 1);
            else
                y = lt_mul(lt_sub(x, lt_mean(x, dim, 1, true)), lt_rsqrt(lt_add_scalar(lt_var(x, dim, 1, 0, true), 1e-5)));
            lt_keep(y);
            lt_scope_end();
            st = lt_mark_step();
        }
        printf("   %-34s %3lld kernels (%lld eager calls)%s\n", rows[r].name, (long long)lt_metrics_counter("Kernels"),
               (long long)lt_metrics_counter("KernelCalls"), st == LT_OK ? "" : " (failed)");
    }
    lt_scope_end();
}

int main(int argc, char **argv)
{
    int threads = 2;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--quick") == 0)
            repeats = 5;
        else if (strcmp(argv[i], "--threads") == 0 && i + 1 < argc)
            threads = atoi(argv[++i]);
    }
    lt_set_num_threads(threads > 0 ? threads : 2);
    char dir[] = "/tmp/lt_bench_cache_XXXXXX"; /* a fresh cache: the first compiles are cold */
    if (!mkdtemp(dir)) {
        printf("cannot create a cache directory\n");
        return 0;
    }
    setenv("LT_CACHE_DIR", dir, 1);
    if (lt_lazy_set_backend("cpu") != LT_OK) {
        printf("cpu backend unavailable: %s\n", lt_last_error());
        return 0;
    }
    printf("lazytensor cpu compiler benchmark (medians of %d repeats)\n", repeats);
    bench_compile();
    bench_chain((int64_t)16 << 20);
    kernel_counts();
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    if (system(cmd) != 0)
        printf("could not remove %s\n", dir);
    return 0;
}
