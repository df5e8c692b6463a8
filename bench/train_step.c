/*
 * bench/train_step - one training step of two models, timed side by side:
 *   MLP 784-512-512-10, batch 128, SGD (lr 0.01), cross entropy;
 *   transformer block (d 256, 4 heads, ffn 1024, seq 128, batch 16),
 *   forward + backward + Adam, loss mean(y^2).
 * Columns: our eager cpu device, the lazy device with each backend that is
 * available, and PyTorch eager (Debian's python3-torch, bench/torch_step.py,
 * same thread count). Medians over repeats; the figures are informative:
 * the program always exits 0.
 *
 * usage: train_step [--quick] [--threads N]
 */
#include "lazytensor.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

typedef struct model {
    lt_module *layers[8];
    int n;
    lt_optimizer *opt;
    lt_tensor *x, *y; /* retained inputs */
    bool transformer;
} model;

static double now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec * 1e-6;
}

static int cmp(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static lt_optimizer *optimizer_for(model *m, bool adam)
{
    lt_tensor *params[64];
    int total = 0;
    for (int i = 0; i < m->n; i++)
        total += lt_module_parameters(m->layers[i], params + total, NULL, 64 - total);
    return adam ? lt_optim_adam(params, total, 1e-3, 0.9, 0.999, 1e-8, 0, false)
                : lt_optim_sgd(params, total, 0.01, 0, 0, false);
}

static void build_mlp(model *m, lt_device dev)
{
    lt_manual_seed(0);
    lt_module *l[] = {lt_nn_linear(784, 512, true, dev), lt_nn_relu(), lt_nn_linear(512, 512, true, dev),
                      lt_nn_relu(), lt_nn_linear(512, 10, true, dev)};
    m->layers[0] = lt_nn_sequential(l, 5);
    m->n = 1;
    m->transformer = false;
    m->opt = optimizer_for(m, false);
    m->x = lt_retain(lt_randn((int64_t[]){128, 784}, 2, LT_F32, dev));
    m->y = lt_retain(lt_randint(0, 10, (int64_t[]){128}, 1, LT_I64, dev));
}

/* layers: ln1, attention, ln2, fc1, fc2 */
static void build_block(model *m, lt_device dev)
{
    lt_manual_seed(0);
    m->layers[0] = lt_nn_layer_norm(256, 1e-5, dev);
    m->layers[1] = lt_nn_self_attention(256, 4, false, dev);
    m->layers[2] = lt_nn_layer_norm(256, 1e-5, dev);
    m->layers[3] = lt_nn_linear(256, 1024, true, dev);
    m->layers[4] = lt_nn_linear(1024, 256, true, dev);
    m->n = 5;
    m->transformer = true;
    m->opt = optimizer_for(m, true);
    m->x = lt_retain(lt_randn((int64_t[]){16, 128, 256}, 3, LT_F32, dev));
    m->y = NULL;
}

static lt_tensor *loss_of(model *m)
{
    if (!m->transformer)
        return lt_cross_entropy(lt_module_forward(m->layers[0], m->x), m->y, 0);
    lt_tensor *x = m->x;
    lt_tensor *h = lt_add(x, lt_module_forward(m->layers[1], lt_module_forward(m->layers[0], x)));
    lt_tensor *f = lt_module_forward(m->layers[4], lt_gelu(lt_module_forward(m->layers[3], lt_module_forward(m->layers[2], h))));
    lt_tensor *out = lt_add(h, f);
    return lt_mean(lt_mul(out, out), NULL, 0, false);
}

static bool step(model *m)
{
    lt_step_begin();
    lt_tensor *loss = loss_of(m);
    bool ok = loss && lt_backward(loss, NULL) == LT_OK && lt_optim_step(m->opt) == LT_OK &&
              lt_optim_zero_grad(m->opt) == LT_OK;
    ok = lt_step_end() == LT_OK && ok;
    if (!ok)
        fprintf(stderr, "train_step: %s\n", lt_last_error());
    return ok;
}

static void free_model(model *m)
{
    lt_optim_free(m->opt);
    for (int i = 0; i < m->n; i++)
        lt_module_free(m->layers[i]);
    lt_release(m->x);
    if (m->y)
        lt_release(m->y);
}

/* Median step time in ms on dev (backend selected beforehand), or -1. */
static double time_steps(bool transformer, lt_device dev, int repeats)
{
    model m;
    memset(&m, 0, sizeof m);
    if (transformer)
        build_block(&m, dev);
    else
        build_mlp(&m, dev);
    double *t = malloc(sizeof *t * (size_t)repeats);
    bool ok = t != NULL;
    for (int i = 0; ok && i < 3; i++) /* warm up: compiles and caches */
        ok = step(&m);
    for (int i = 0; ok && i < repeats; i++) {
        double t0 = now_ms();
        ok = step(&m);
        t[i] = now_ms() - t0;
    }
    double med = -1;
    if (ok) {
        qsort(t, (size_t)repeats, sizeof *t, cmp);
        med = t[repeats / 2];
    }
    free(t);
    free_model(&m);
    return med;
}

/* Runs bench/torch_step.py (next to this source file) and reads its two
 * medians; -1 when PyTorch is not available. */
static void torch_times(int threads, int repeats, double *mlp, double *block)
{
    *mlp = *block = -1;
    char dir[1024];
    snprintf(dir, sizeof dir, "%s", __FILE__);
    char *slash = strrchr(dir, '/');
    if (slash)
        *slash = '\0';
    else
        snprintf(dir, sizeof dir, "bench");
    char cmd[1400];
    snprintf(cmd, sizeof cmd,
             "OMP_NUM_THREADS=%d OMP_WAIT_POLICY=PASSIVE /usr/bin/python3 %s/torch_step.py %d %d 2>/dev/null",
             threads, dir, threads, repeats);
    FILE *p = popen(cmd, "r");
    if (!p)
        return;
    char name[64];
    double v;
    while (fscanf(p, "%63s %lf", name, &v) == 2) {
        if (!strcmp(name, "mlp"))
            *mlp = v;
        else if (!strcmp(name, "transformer"))
            *block = v;
    }
    pclose(p);
}

static void cell(double v)
{
    if (v < 0)
        printf("  %12s", "n/a");
    else
        printf("  %9.2f ms", v);
}

int main(int argc, char **argv)
{
    bool quick = false;
    int threads = 2;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--quick"))
            quick = true;
        else if (!strcmp(argv[i], "--threads") && i + 1 < argc)
            threads = atoi(argv[++i]);
        else {
            fprintf(stderr, "usage: train_step [--quick] [--threads N]\n");
            return 2;
        }
    }
    if (threads < 1)
        threads = 1;
    lt_set_num_threads(threads);
    int repeats = quick ? 5 : 30;
    const char *backends[] = {"interp", "cpu"};
    printf("training step, %d threads, medians of %d steps after 3 warm-up steps\n\n", threads, repeats);
    printf("%-22s  %12s", "model", "eager cpu");
    for (int b = 0; b < 2; b++)
        printf("  %9s %-2s", "lazy", backends[b]);
    printf("  %12s  %s\n", "pytorch", "lazy best / pytorch");
    double torch_mlp, torch_block;
    torch_times(threads, repeats, &torch_mlp, &torch_block);
    for (int mdl = 0; mdl < 2; mdl++) {
        bool tr = mdl == 1;
        printf("%-22s", tr ? "transformer block" : "MLP 784-512-512-10");
        cell(time_steps(tr, lt_device_parse("cpu"), tr ? repeats / 3 + 2 : repeats));
        double best = -1;
        for (int b = 0; b < 2; b++) {
            double v = -1;
            if (lt_lazy_set_backend(backends[b]) == LT_OK)
                v = time_steps(tr, lt_device_parse("lazy"), tr ? repeats / 3 + 2 : repeats);
            else
                lt_clear_error();
            cell(v);
            if (v > 0 && (best < 0 || v < best))
                best = v;
        }
        double ref = tr ? torch_block : torch_mlp;
        cell(ref);
        if (best > 0 && ref > 0)
            printf("  %.2fx %s\n", best / ref, best <= ref ? "(lazy faster)" : "(pytorch faster)");
        else
            printf("\n");
    }
    return 0;
}
