/* example_util.c - see example_util.h */
#include "example_util.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_PARAMS 256

static bool parse_count(const char *s, int *out)
{
    char *end;
    long v = strtol(s, &end, 10);
    *out = (int)v;
    return *s && !*end && v >= 1 && v <= 1000000000;
}

bool example_parse_args(int argc, char **argv, const char *path_option, example_args *a)
{
    bool ok = true;
    for (int i = 1; ok && i < argc; i++) {
        const char *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (!v) {
            ok = false;
        } else if (!strcmp(argv[i], "--steps")) {
            ok = parse_count(v, &a->steps);
        } else if (!strcmp(argv[i], "--log-every")) {
            ok = parse_count(v, &a->log_every);
        } else if (!strcmp(argv[i], "--device")) {
            a->dev = lt_device_parse(v);
            ok = !strcmp(v, "cpu") || !strcmp(v, "lazy");
        } else if (!strcmp(argv[i], path_option)) {
            a->path = v;
        } else {
            ok = false;
        }
        i++;
    }
    if (!ok)
        fprintf(stderr, "usage: %s [--steps N] [--device cpu|lazy] [--log-every N] [%s PATH]\n", argv[0],
                path_option);
    return ok;
}

lt_optimizer *example_adam(lt_module *const *mods, int n, double weight_decay)
{
    lt_tensor *params[MAX_PARAMS];
    int count = 0;
    for (int i = 0; i < n && count <= MAX_PARAMS; i++) {
        int got = lt_module_parameters(mods[i], params + count, NULL, MAX_PARAMS - count);
        if (got < 0)
            return NULL;
        count += got;
    }
    if (count > MAX_PARAMS) {
        fprintf(stderr, "example_adam: more than %d parameters\n", MAX_PARAMS);
        return NULL;
    }
    return lt_optim_adam(params, count, 1e-3, 0.9, 0.999, 1e-8, weight_decay, weight_decay > 0);
}

bool example_end_step(lt_tensor *loss, lt_optimizer *opt, int step, const example_args *a)
{
    lt_tensor *kept = NULL; /* the loss outlives the step: the program outputs it */
    if (loss && lt_backward(loss, NULL) == LT_OK && lt_optim_step(opt) == LT_OK && lt_optim_zero_grad(opt) == LT_OK)
        kept = lt_keep(lt_detach(loss));
    bool ok = lt_step_end() == LT_OK && kept;
    double value = 0;
    if (ok && (step % a->log_every == 0 || step == a->steps)) {
        ok = lt_item(kept, &value) == LT_OK;
        printf("step %d  loss %.4f\n", step, value);
        fflush(stdout);
    }
    lt_release(kept);
    return ok;
}

lt_status example_fashion_load(example_fashion *f, const char *dir)
{
    char images[1024], labels[1024];
    snprintf(images, sizeof images, "%s/train-images-idx3-ubyte.gz", dir);
    snprintf(labels, sizeof labels, "%s/train-labels-idx1-ubyte.gz", dir);
    lt_status st = lt_dataset_load_idx(images, labels, &f->train);
    f->perm = st == LT_OK ? malloc(sizeof *f->perm * (size_t)f->train.count) : NULL;
    if (st == LT_OK && !f->perm) {
        fprintf(stderr, "example_fashion_load: out of memory\n");
        lt_dataset_free(&f->train);
        return LT_ERR_MEMORY;
    }
    return st;
}

bool example_fashion_batch(example_fashion *f, int step, int64_t batch, lt_device dev, lt_tensor **images,
                           lt_tensor **labels)
{
    int64_t per_epoch = f->train.count / batch; /* whole batches only: every step has one shape */
    int64_t epoch = step / per_epoch, index = step % per_epoch;
    if (index == 0 && lt_dataset_shuffle(&f->train, (uint64_t)epoch + 1, f->perm) != LT_OK)
        return false;
    /* mean and standard deviation of Fashion-MNIST's pixels */
    return lt_dataset_batch(&f->train, f->perm, index, batch, 0.2860, 0.3530, dev, images, labels) == batch;
}

void example_fashion_free(example_fashion *f)
{
    lt_dataset_free(&f->train);
    free(f->perm);
}

#define TEXT_MAX (64 << 20)

/* the ids of text[0..n), and the vocabulary they use */
static void text_tokenize(example_text *t, const unsigned char *text)
{
    int64_t id_of[256] = {0};
    for (int64_t i = 0; i < t->n; i++)
        id_of[text[i]] = 1;
    t->vocab = 0;
    for (int ch = 0; ch < 256; ch++) {
        if (id_of[ch]) {
            t->byte_of[t->vocab] = (unsigned char)ch;
            id_of[ch] = t->vocab++;
        }
    }
    for (int64_t i = 0; i < t->n; i++)
        t->ids[i] = id_of[text[i]];
}

bool example_text_load(example_text *t, const char *path, int64_t ctx)
{
    memset(t, 0, sizeof *t);
    t->rng = 0x9e3779b97f4a7c15u;
    FILE *f = fopen(path, "rb");
    unsigned char *text = f ? malloc(TEXT_MAX) : NULL;
    size_t n = text ? fread(text, 1, TEXT_MAX, f) : 0;
    t->ids = n ? malloc(sizeof *t->ids * n) : NULL;
    t->n = (int64_t)n;
    if (t->ids)
        text_tokenize(t, text);
    free(text);
    if (f)
        fclose(f);
    if (t->n <= ctx || !t->ids) {
        fprintf(stderr, "cannot read a text of more than %lld bytes from %s\n", (long long)ctx, path);
        example_text_free(t);
        return false;
    }
    return true;
}

bool example_text_batch(example_text *t, int64_t batch, int64_t ctx, lt_device dev, lt_tensor **inputs,
                        lt_tensor **targets)
{
    int64_t *in = malloc(sizeof *in * (size_t)(batch * ctx)), *next = malloc(sizeof *next * (size_t)(batch * ctx));
    for (int64_t b = 0; in && next && b < batch; b++) {
        t->rng ^= t->rng << 13; /* xorshift64 */
        t->rng ^= t->rng >> 7;
        t->rng ^= t->rng << 17;
        int64_t start = (int64_t)(t->rng % (uint64_t)(t->n - ctx));
        memcpy(in + b * ctx, t->ids + start, sizeof *in * (size_t)ctx);
        memcpy(next + b * ctx, t->ids + start + 1, sizeof *next * (size_t)ctx);
    }
    *inputs = in && next ? lt_from_data(in, (int64_t[]){batch, ctx}, 2, LT_I64, dev) : NULL;
    *targets = in && next ? lt_from_data(next, (int64_t[]){batch * ctx}, 1, LT_I64, dev) : NULL;
    free(in);
    free(next);
    return *inputs && *targets;
}

void example_text_free(example_text *t)
{
    free(t->ids);
    t->ids = NULL;
    t->n = 0;
}
