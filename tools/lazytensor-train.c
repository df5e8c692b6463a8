/*
 * lazytensor-train - trains an MLP or a CNN on Fashion-MNIST, eagerly on
 * the cpu device or through the lazy device, with a live progress bar,
 * per-epoch test accuracy and a summary of step time, compiles, fallbacks
 * and memory. `--compare` runs the same steps on both devices and checks
 * that the losses agree.
 *
 * Started by `mpirun -np N`, it trains data-parallel: each rank takes
 * --batch-size samples of every global batch (lt_dataset_shard_batch), the
 * gradients are averaged over the ranks (lt_dp) and only rank 0 prints,
 * evaluates and saves. The summary adds communication time and bytes.
 */
#include "lazytensor.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define DEFAULT_DATA "/usr/share/datasets/fashion-mnist"
#define MNIST_MEAN 0.2860
#define MNIST_STD 0.3530

typedef struct options {
    const char *model, *device, *optimizer, *data, *save, *load;
    int epochs, compare_steps, threads;
    int64_t batch, max_steps;
    double lr, label_smoothing, bucket_mb;
    uint64_t seed;
    bool compare, quiet, print_losses;
} options;

static void usage(FILE *f)
{
    fprintf(f,
            "usage: lazytensor-train [options]\n"
            "  --model mlp|cnn          model (default mlp: 784-512-512-10)\n"
            "  --device cpu|lazy        device (default lazy)\n"
            "  --epochs N               epochs (default 2)\n"
            "  --batch-size N           batch size (default 128; per rank under mpirun)\n"
            "  --bucket-mb X            data-parallel gradient bucket size in MiB (default 25)\n"
            "  --optimizer sgd|adam|adamw  (default adam)\n"
            "  --lr X                   learning rate (default 1e-3 for adam, 0.05 for sgd)\n"
            "  --label-smoothing X      cross-entropy label smoothing in [0, 1) (default 0)\n"
            "  --seed N                 seed for initialization, shuffling, dropout (default 1)\n"
            "  --steps N                at most N steps per epoch (default: the whole epoch)\n"
            "  --threads N              OpenMP/OpenBLAS threads (default: all cores)\n"
            "  --data DIR               dataset directory (default " DEFAULT_DATA ")\n"
            "  --save FILE              save model and optimizer state (safetensors)\n"
            "  --load FILE              resume from a file written by --save\n"
            "  --compare                run --compare-steps steps on cpu and lazy, compare\n"
            "  --compare-steps N        steps for --compare (default 50)\n"
            "  --quiet                  no progress bar\n"
            "  --print-losses           print every step's loss (9 decimals) on stdout\n"
            "  --help                   this text\n");
}

static bool parse_int(const char *s, int64_t lo, int64_t hi, int64_t *out)
{
    char *end = NULL;
    errno = 0;
    long long v = strtoll(s, &end, 10);
    if (errno || !end || *end || end == s || v < lo || v > hi)
        return false;
    *out = v;
    return true;
}

static bool parse_double(const char *s, double lo, double hi, double *out)
{
    char *end = NULL;
    errno = 0;
    double v = strtod(s, &end);
    if (errno || !end || *end || end == s || !(v >= lo && v <= hi))
        return false;
    *out = v;
    return true;
}

static bool is_value_option(const char *a)
{
    static const char *const names[] = {"--model", "--device", "--optimizer", "--epochs", "--batch-size",
                                        "--steps", "--threads", "--compare-steps", "--seed", "--lr",
                                        "--label-smoothing", "--data", "--save", "--load", "--bucket-mb"};
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
        if (!strcmp(a, names[i]))
            return true;
    return false;
}

/* Parses argv into o; prints a message and returns false on bad input. */
static bool parse_args(int argc, char **argv, options *o)
{
    *o = (options){"mlp", "lazy", "adam", DEFAULT_DATA, NULL, NULL, 2, 50, 0, 128, -1, -1, 0, 0, 1, false, false, false};
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        const char *v = i + 1 < argc ? argv[i + 1] : NULL;
        int64_t n;
        bool ok = true, takes_value = true;
        if (!strcmp(a, "--help")) {
            usage(stdout);
            exit(0);
        } else if (!strcmp(a, "--compare")) {
            o->compare = true, takes_value = false;
        } else if (!strcmp(a, "--quiet")) {
            o->quiet = true, takes_value = false;
        } else if (!strcmp(a, "--print-losses")) {
            o->print_losses = true, takes_value = false;
        } else if (!is_value_option(a)) {
            fprintf(stderr, "lazytensor-train: unknown option %s (see --help)\n", a);
            return false;
        } else if (!v) {
            fprintf(stderr, "lazytensor-train: %s needs a value\n", a);
            return false;
        } else if (!strcmp(a, "--model")) {
            o->model = v, ok = !strcmp(v, "mlp") || !strcmp(v, "cnn");
        } else if (!strcmp(a, "--device")) {
            o->device = v, ok = !strcmp(v, "cpu") || !strcmp(v, "lazy");
        } else if (!strcmp(a, "--optimizer")) {
            o->optimizer = v, ok = !strcmp(v, "sgd") || !strcmp(v, "adam") || !strcmp(v, "adamw");
        } else if (!strcmp(a, "--epochs")) {
            ok = parse_int(v, 1, 1000, &n), o->epochs = (int)n;
        } else if (!strcmp(a, "--batch-size")) {
            ok = parse_int(v, 1, 65536, &o->batch);
        } else if (!strcmp(a, "--steps")) {
            ok = parse_int(v, 1, INT64_MAX, &o->max_steps);
        } else if (!strcmp(a, "--threads")) {
            ok = parse_int(v, 1, 1024, &n), o->threads = (int)n;
        } else if (!strcmp(a, "--compare-steps")) {
            ok = parse_int(v, 1, 100000, &n), o->compare_steps = (int)n;
        } else if (!strcmp(a, "--seed")) {
            ok = parse_int(v, 0, INT64_MAX, &n), o->seed = (uint64_t)n;
        } else if (!strcmp(a, "--lr")) {
            ok = parse_double(v, 1e-12, 100, &o->lr);
        } else if (!strcmp(a, "--label-smoothing")) {
            ok = parse_double(v, 0, 0.999, &o->label_smoothing);
        } else if (!strcmp(a, "--bucket-mb")) {
            ok = parse_double(v, 1.0 / 1024, 1 << 20, &o->bucket_mb);
        } else if (!strcmp(a, "--data")) {
            o->data = v;
        } else if (!strcmp(a, "--save")) {
            o->save = v;
        } else {
            o->load = v; /* --load: the last value option */
        }
        if (!ok) {
            fprintf(stderr, "lazytensor-train: bad value \"%s\" for %s (see --help)\n", v, a);
            return false;
        }
        if (takes_value)
            i++;
    }
    if (o->lr < 0)
        o->lr = !strcmp(o->optimizer, "sgd") ? 0.05 : 1e-3;
    return true;
}

/* ---- model -------------------------------------------------------------- */

static lt_module *build_model(const char *kind, lt_device dev)
{
    if (!strcmp(kind, "mlp")) {
        lt_module *layers[] = {lt_nn_flatten(),           lt_nn_linear(784, 512, true, dev), lt_nn_relu(),
                               lt_nn_linear(512, 512, true, dev), lt_nn_relu(),
                               lt_nn_linear(512, 10, true, dev)};
        return lt_nn_sequential(layers, 6);
    }
    lt_module *layers[] = {
        lt_nn_conv2d(1, 32, 3, 1, 1, 1, true, dev),  lt_nn_relu(), lt_nn_max_pool2d(2),
        lt_nn_conv2d(32, 64, 3, 1, 1, 1, true, dev), lt_nn_relu(), lt_nn_max_pool2d(2),
        lt_nn_flatten(),                             lt_nn_linear(3136, 128, true, dev), lt_nn_relu(),
        lt_nn_linear(128, 10, true, dev)};
    return lt_nn_sequential(layers, 10);
}

static lt_optimizer *build_optimizer(const options *o, lt_module *m)
{
    lt_tensor *params[64];
    int n = lt_module_parameters(m, params, NULL, 64);
    if (n < 0 || n > 64)
        return NULL;
    if (!strcmp(o->optimizer, "sgd"))
        return lt_optim_sgd(params, n, o->lr, 0.9, 0.0, false);
    return lt_optim_adam(params, n, o->lr, 0.9, 0.999, 1e-8, !strcmp(o->optimizer, "adamw") ? 0.01 : 0.0,
                         !strcmp(o->optimizer, "adamw"));
}

/* A checkpoint: the model's state as "model.<name>" and the optimizer's
 * as "optim.<name>", so training can resume where it stopped. */
#define MAX_STATE 256
typedef struct checkpoint {
    lt_tensor *tensors[MAX_STATE];
    const char *names[MAX_STATE];
    char storage[MAX_STATE][96];
    int count, model_count;
} checkpoint;

static bool add_prefixed(checkpoint *c, const char *prefix, lt_tensor *const *t, const char *const *names, int n)
{
    for (int i = 0; i < n; i++) {
        if (c->count == MAX_STATE)
            return false;
        snprintf(c->storage[c->count], sizeof c->storage[0], "%s.%s", prefix, names[i]);
        c->names[c->count] = c->storage[c->count];
        c->tensors[c->count++] = t[i];
    }
    return true;
}

static lt_status collect_state(lt_module *m, lt_optimizer *opt, checkpoint *c)
{
    lt_tensor *t[MAX_STATE];
    const char *names[MAX_STATE];
    c->count = 0;
    int n = lt_module_state(m, t, names, MAX_STATE);
    if (n < 0 || n > MAX_STATE || !add_prefixed(c, "model", t, names, n)) {
        fprintf(stderr, "lazytensor-train: the model has too many tensors for a checkpoint\n");
        return LT_ERR_ARGUMENT;
    }
    c->model_count = c->count;
    n = opt ? lt_optim_state(opt, t, names, MAX_STATE) : 0;
    if (n < 0 || n > MAX_STATE || !add_prefixed(c, "optim", t, names, n)) {
        fprintf(stderr, "lazytensor-train: the optimizer has too many tensors for a checkpoint\n");
        return LT_ERR_ARGUMENT;
    }
    return LT_OK;
}

static lt_status save_checkpoint(lt_module *m, lt_optimizer *opt, const char *path)
{
    checkpoint *c = malloc(sizeof *c);
    lt_status st = c ? collect_state(m, opt, c) : LT_ERR_MEMORY;
    if (st == LT_OK)
        st = lt_save_safetensors(path, c->tensors, c->names, c->count);
    free(c);
    return st;
}

/* Loads model and optimizer state; a file with only model tensors (or a
 * fresh optimizer) loads the model alone. */
static lt_status load_checkpoint(lt_module *m, lt_optimizer *opt, const char *path)
{
    checkpoint *c = malloc(sizeof *c);
    lt_status st = c ? collect_state(m, opt, c) : LT_ERR_MEMORY;
    if (st == LT_OK) {
        st = lt_load_safetensors(path, c->tensors, c->names, c->count);
        if (st != LT_OK && strstr(lt_last_error(), "no tensor named \"optim.")) {
            lt_clear_error();
            st = lt_load_safetensors(path, c->tensors, c->names, c->model_count);
            if (st == LT_OK)
                fprintf(stderr, "lazytensor-train: %s has no optimizer state: loaded the model only\n", path);
        }
    }
    free(c);
    return st;
}

/* ---- timing and progress ------------------------------------------------- */

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static int compare_doubles(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static double median(double *v, int64_t n)
{
    if (n <= 0)
        return 0;
    qsort(v, (size_t)n, sizeof *v, compare_doubles);
    return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

static void progress(const options *o, int epoch, int64_t step, int64_t steps, double elapsed, double loss)
{
    if (o->quiet)
        return;
    bool tty = isatty(STDERR_FILENO);
    if (!tty && step != steps && step % (steps / 10 > 0 ? steps / 10 : 1) != 0)
        return;
    int width = 30, filled = (int)(width * step / (steps ? steps : 1));
    double rate = elapsed > 0 ? (double)step / elapsed : 0;
    double eta = rate > 0 ? (double)(steps - step) / rate : 0;
    fprintf(stderr, "%sepoch %d/%d [", tty ? "\r" : "", epoch, o->epochs);
    for (int i = 0; i < width; i++)
        fputc(i < filled ? '=' : i == filled ? '>' : ' ', stderr);
    fprintf(stderr, "] %lld/%lld  %6.1f step/s  loss %.4f  ETA %d:%02d%s", (long long)step, (long long)steps,
            rate, loss, (int)eta / 60, (int)eta % 60, tty ? "" : "\n");
    fflush(stderr);
}

/* ---- training ------------------------------------------------------------- */

typedef struct trainer {
    options o;
    lt_device dev;
    lt_module *model;
    lt_optimizer *opt;
    lt_dataset train, test;
    lt_dp *dp;       /* data-parallel: NULL in a world of one */
    int rank, world;
} trainer;

/* One step; returns the loss (NAN on error). */
static double train_step(trainer *t, const int64_t *perm, int64_t index)
{
    lt_step_begin();
    lt_tensor *x = NULL, *y = NULL;
    double loss_value = NAN;
    int64_t b = t->dp ? lt_dataset_shard_batch(&t->train, perm, index, t->o.batch, t->rank, t->world, MNIST_MEAN,
                                               MNIST_STD, t->dev, &x, &y)
                      : lt_dataset_batch(&t->train, perm, index, t->o.batch, MNIST_MEAN, MNIST_STD, t->dev, &x, &y);
    lt_tensor *loss = b > 0 ? lt_cross_entropy(lt_module_forward(t->model, x), y, t->o.label_smoothing) : NULL;
    lt_tensor *kept = NULL;
    if (loss && lt_backward(loss, NULL) == LT_OK && (!t->dp || lt_dp_sync_grads(t->dp) == LT_OK) &&
        lt_optim_step(t->opt) == LT_OK && lt_optim_zero_grad(t->opt) == LT_OK)
        kept = lt_keep(lt_detach(loss)); /* the one extra output of the step */
    lt_status st = lt_step_end();
    if (kept && st == LT_OK && lt_item(kept, &loss_value) != LT_OK)
        loss_value = NAN;
    if (kept)
        lt_release(kept);
    return loss_value;
}

static double evaluate(trainer *t)
{
    lt_module_train(t->model, false);
    lt_no_grad_begin();
    int64_t correct = 0, seen = 0;
    for (int64_t i = 0;; i++) {
        lt_scope_begin();
        lt_tensor *x = NULL, *y = NULL;
        int64_t b = lt_dataset_batch(&t->test, NULL, i, 1000, MNIST_MEAN, MNIST_STD, t->dev, &x, &y);
        int64_t hits = 0;
        bool ok = b > 0 &&
                  lt_item_int(lt_sum(lt_eq(lt_argmax(lt_module_forward(t->model, x), 1, false), y), NULL, 0, false),
                              &hits) == LT_OK;
        lt_scope_end();
        if (!ok)
            break;
        correct += hits;
        seen += b;
    }
    lt_no_grad_end();
    lt_module_train(t->model, true);
    return seen ? (double)correct / (double)seen : 0;
}

static bool load_data(trainer *t)
{
    char img[1024], lbl[1024];
    snprintf(img, sizeof img, "%s/train-images-idx3-ubyte.gz", t->o.data);
    snprintf(lbl, sizeof lbl, "%s/train-labels-idx1-ubyte.gz", t->o.data);
    if (lt_dataset_load_idx(img, lbl, &t->train) != LT_OK)
        return false;
    snprintf(img, sizeof img, "%s/t10k-images-idx3-ubyte.gz", t->o.data);
    snprintf(lbl, sizeof lbl, "%s/t10k-labels-idx1-ubyte.gz", t->o.data);
    return lt_dataset_load_idx(img, lbl, &t->test) == LT_OK;
}

static bool setup(trainer *t, lt_device dev)
{
    t->dev = dev;
    lt_manual_seed(t->o.seed);
    t->model = build_model(t->o.model, dev);
    if (!t->model)
        return false;
    t->opt = build_optimizer(&t->o, t->model);
    if (!t->opt)
        return false;
    if (t->o.load && load_checkpoint(t->model, t->opt, t->o.load) != LT_OK)
        return false;
    if (t->world > 1) /* checks the models agree, then starts from rank 0's parameters */
        t->dp = lt_dp_new(t->model, (size_t)(t->o.bucket_mb * (1 << 20)));
    return t->world == 1 || t->dp;
}

static void teardown(trainer *t)
{
    lt_dp_free(t->dp);
    t->dp = NULL;
    lt_optim_free(t->opt);
    lt_module_free(t->model);
    t->opt = NULL;
    t->model = NULL;
}

/* Steps per epoch: under mpirun, global batches of batch * world samples
 * over the dataset padded to a multiple of world (lt_dataset_shard_batch). */
static int64_t steps_per_epoch(const trainer *t)
{
    int64_t count = t->train.count, world = t->world;
    int64_t padded = (count + world - 1) / world * world, global = t->o.batch * world;
    int64_t steps = (padded + global - 1) / global;
    return t->o.max_steps > 0 && t->o.max_steps < steps ? t->o.max_steps : steps;
}

static void print_summary(const trainer *t, double *step_ms, int64_t total, double elapsed, int64_t step_outputs,
                          const lt_dist_stats *comm)
{
    lt_mem_stats ms;
    lt_mem_stats_get(&ms);
    double first = step_ms[0], train_s = 0;
    for (int64_t s = 0; s < total; s++)
        train_s += step_ms[s] * 1e-3;
    printf("summary: device %s, model %s, %lld steps in %.2f s\n", t->o.device, t->o.model, (long long)total,
           elapsed);
    printf("  step time: median %.2f ms, first step %.2f ms\n", median(step_ms, total), first);
    printf("  programs: %lld built (%lld compiled by cc, %lld loaded from the disk cache), %lld cache hits, "
           "fallbacks: %lld\n",
           (long long)lt_metrics_counter("UncachedCompile"), (long long)lt_metrics_counter("DiskCacheMiss"),
           (long long)lt_metrics_counter("DiskCacheHit"), (long long)lt_metrics_counter("CachedCompile"),
           (long long)lt_metrics_counter("Fallback"));
    if (lt_metrics_counter("BackgroundCompiles") > 0) /* the tiered backend: see lt_lazy_set_backend */
        printf("  tiered: %lld runs on interp while %lld programs compiled in the background (%lld done, %lld "
               "failed)\n",
               (long long)lt_metrics_counter("InterpTierRuns"), (long long)lt_metrics_counter("BackgroundCompiles"),
               (long long)lt_metrics_counter("TierSwaps"), (long long)lt_metrics_counter("BackgroundCompileFailures"));
    printf("  program outputs per step: %lld, donated buffers: %lld\n", (long long)step_outputs,
           (long long)lt_metrics_counter("DonatedBuffers"));
    printf("  peak buffer memory: %.1f MB, OS allocations: %lld\n", (double)ms.peak_bytes / 1e6,
           (long long)ms.os_allocs);
    double samples = (double)total * (double)t->o.batch * t->world, med = median(step_ms, total);
    printf("  throughput: %.0f samples/s at the median step, %.0f over all steps (%d rank%s x batch %lld)\n",
           med > 0 ? (double)t->o.batch * t->world * 1e3 / med : 0, train_s > 0 ? samples / train_s : 0, t->world,
           t->world > 1 ? "s" : "", (long long)t->o.batch);
    if (!t->dp)
        return;
    double comm_ms = total ? comm->seconds * 1e3 / (double)total : 0;
    printf("  data-parallel: %d ranks, %d bucket%s, %.2f MB all-reduced per step (%lld collectives in all)\n",
           t->world, lt_dp_num_buckets(t->dp), lt_dp_num_buckets(t->dp) > 1 ? "s" : "",
           (double)lt_dp_bytes_per_sync(t->dp) / 1e6, (long long)comm->calls);
    printf("  communication: %.2f ms per step waited for (%.1f%% of the median step; waiting for other ranks "
           "included)\n",
           comm_ms, median(step_ms, total) > 0 ? 100 * comm_ms / median(step_ms, total) : 0);
    double span = 0, hidden = 0;
    lt_dp_overlap_stats(t->dp, &span, &hidden);
    if (span > 0)
        printf("  overlap: %.1f%% of all-reduce time hidden behind backward (%.2f of %.2f ms per step)\n",
               100 * hidden / span, hidden * 1e3 / (double)total, span * 1e3 / (double)total);
    else
        printf("  overlap: none (%s)\n", strcmp(t->o.device, "lazy") ? "no bucket was ready before the end of backward"
                                                                   : "the lazy device runs the all-reduces in the "
                                                                     "step program, after backward");
}

static int train(trainer *t)
{
    int64_t steps = steps_per_epoch(t);
    bool lead = t->rank == 0; /* only rank 0 prints, evaluates and saves */
    int64_t *perm = malloc(sizeof *perm * (size_t)t->train.count);
    double *step_ms = malloc(sizeof *step_ms * (size_t)(steps * t->o.epochs));
    if (!perm || !step_ms) {
        fprintf(stderr, "lazytensor-train: out of memory\n");
        free(perm);
        free(step_ms);
        return 1;
    }
    int64_t total = 0, step_outputs = 0;
    lt_dist_stats comm0, comm1;
    lt_dist_stats_get(&comm0);
    double train_start = now_s();
    for (int e = 1; e <= t->o.epochs; e++) {
        lt_dataset_shuffle(&t->train, t->o.seed + (uint64_t)e, perm);
        double start = now_s(), loss = NAN;
        for (int64_t s = 0; s < steps; s++) {
            double t0 = now_s();
            loss = train_step(t, perm, s);
            step_ms[total++] = (now_s() - t0) * 1e3;
            if (isnan(loss)) {
                fprintf(stderr, "\nlazytensor-train: rank %d: step %lld failed: %s\n", t->rank, (long long)s,
                        lt_last_error());
                free(perm);
                free(step_ms);
                return 1;
            }
            if (lead && t->o.print_losses)
                printf("epoch %d step %lld loss %.9f\n", e, (long long)s, loss);
            if (lead)
                progress(&t->o, e, s + 1, steps, now_s() - start, loss);
        }
        double epoch_s = now_s() - start;
        step_outputs = lt_metrics_counter("ProgramOutputs"); /* of the last training step */
        if (lead) {
            double acc = evaluate(t);
            printf("%sepoch %d: loss %.4f  test accuracy %.2f%%  epoch time %.2f s\n", t->o.quiet ? "" : "\n", e,
                   loss, acc * 100, epoch_s);
            fflush(stdout);
        }
    }
    lt_dist_stats_get(&comm1);
    comm1.bytes -= comm0.bytes, comm1.calls -= comm0.calls, comm1.seconds -= comm0.seconds;
    if (lead)
        print_summary(t, step_ms, total, now_s() - train_start, step_outputs, &comm1);
    free(perm);
    free(step_ms);
    if (lead && t->o.save && save_checkpoint(t->model, t->opt, t->o.save) != LT_OK)
        return 1;
    if (lead && t->o.save)
        printf("saved model to %s\n", t->o.save);
    return 0;
}

/* Runs n steps on dev from the same seed; fills losses and step times. */
static bool run_steps(trainer *t, lt_device dev, int n, double *losses, double *ms)
{
    int64_t *perm = malloc(sizeof *perm * (size_t)t->train.count);
    if (!perm || !setup(t, dev)) {
        free(perm);
        teardown(t);
        return false;
    }
    lt_dataset_shuffle(&t->train, t->o.seed, perm);
    int64_t steps = (t->train.count + t->o.batch - 1) / t->o.batch;
    bool ok = true;
    for (int s = 0; s < n && ok; s++) {
        double t0 = now_s();
        losses[s] = train_step(t, perm, s % steps);
        ms[s] = (now_s() - t0) * 1e3;
        ok = !isnan(losses[s]);
    }
    free(perm);
    teardown(t);
    return ok;
}

static int compare(trainer *t)
{
    int n = t->o.compare_steps;
    double *buf = calloc((size_t)n * 4, sizeof *buf);
    if (!buf)
        return 1;
    double *cpu_loss = buf, *lazy_loss = buf + n, *cpu_ms = buf + 2 * n, *lazy_ms = buf + 3 * n;
    if (!run_steps(t, lt_device_parse("cpu"), n, cpu_loss, cpu_ms) ||
        !run_steps(t, lt_device_parse("lazy"), n, lazy_loss, lazy_ms)) {
        fprintf(stderr, "lazytensor-train: compare failed: %s\n", lt_last_error());
        free(buf);
        return 1;
    }
    double worst = 0;
    for (int s = 0; s < n; s++) {
        double rel = fabs(cpu_loss[s] - lazy_loss[s]) / fmax(fabs(cpu_loss[s]), 1e-12);
        worst = fmax(worst, rel);
    }
    /* the first lazy steps include compilation: compare the steady state */
    int skip = n > 4 ? 2 : 0;
    double cpu_med = median(cpu_ms + skip, n - skip), lazy_med = median(lazy_ms + skip, n - skip);
    printf("compare: %d steps of %s, batch %lld\n", n, t->o.model, (long long)t->o.batch);
    printf("  final loss: cpu %.6f  lazy %.6f  max relative difference %.2e\n", cpu_loss[n - 1],
           lazy_loss[n - 1], worst);
    printf("  median step: cpu %.2f ms  lazy %.2f ms  speedup %.2fx\n", cpu_med, lazy_med,
           lazy_med > 0 ? cpu_med / lazy_med : 0);
    bool agree = worst <= 1e-4;
    printf("  losses %s (tolerance 1e-4 relative)\n", agree ? "agree" : "DISAGREE");
    free(buf);
    return agree ? 0 : 1;
}

int main(int argc, char **argv)
{
    trainer t;
    memset(&t, 0, sizeof t);
    if (!parse_args(argc, argv, &t.o)) {
        usage(stderr);
        return 2;
    }
    if (t.o.threads > 0)
        lt_set_num_threads(t.o.threads);
    if (lt_dist_init() != LT_OK) {
        fprintf(stderr, "lazytensor-train: %s\n", lt_last_error());
        return 1;
    }
    t.rank = lt_dist_rank();
    t.world = lt_dist_world_size();
    if (t.o.compare && t.world > 1) {
        fprintf(stderr, "lazytensor-train: --compare runs in one process (not under mpirun with %d ranks)\n",
                t.world);
        return 2;
    }
    if (!load_data(&t)) {
        fprintf(stderr, "lazytensor-train: %s\n", lt_last_error());
        return 1;
    }
    int rc;
    if (t.o.compare) {
        rc = compare(&t);
    } else if (!setup(&t, lt_device_parse(t.o.device))) {
        fprintf(stderr, "lazytensor-train: rank %d: %s\n", t.rank, lt_last_error());
        teardown(&t);
        rc = 1;
    } else {
        rc = train(&t);
        if (rc)
            fprintf(stderr, "lazytensor-train: rank %d: %s\n", t.rank, lt_last_error());
        teardown(&t);
    }
    lt_dataset_free(&t.train);
    lt_dataset_free(&t.test);
    if (lt_dist_finalize() != LT_OK) { /* a rank still training: the ranks ran different numbers of steps */
        fprintf(stderr, "lazytensor-train: rank %d: %s\n", t.rank, lt_last_error());
        rc = rc ? rc : 1;
    }
    return rc;
}
