/*
 * example_util.h - what the examples share: their command line, an Adam
 * optimizer over a model's parameters, the end of a training step, and
 * their data: Fashion-MNIST batches and windows of a text. Each piece is a few calls of the public API,
 * the way README.md shows them.
 */
#ifndef EXAMPLE_UTIL_H
#define EXAMPLE_UTIL_H

#include <lazytensor.h>

/* Every example takes --steps N, --device cpu|lazy, --log-every N and one
 * input path (--data DIR or --text FILE). */
typedef struct example_args {
    int steps, log_every;
    lt_device dev;
    const char *path;
} example_args;

/* Parses argv into a (which holds the defaults); prints the usage and
 * returns false on a bad or unknown option. */
bool example_parse_args(int argc, char **argv, const char *path_option, example_args *a);

/* Adam with learning rate 1e-3 over every parameter of the n modules;
 * weight_decay > 0 gives AdamW (decoupled decay). NULL on error. */
lt_optimizer *example_adam(lt_module *const *mods, int n, double weight_decay);

/* Ends a step opened with lt_step_begin: backward from loss, optimizer
 * update, then lt_step_end (the barrier on the lazy device). Every
 * log_every steps (and at the last) prints "step N  loss X". Returns false
 * (with lt_last_error set) if any of it failed. */
bool example_end_step(lt_tensor *loss, lt_optimizer *opt, int step, const example_args *a);

/* Fashion-MNIST's training set (the Debian package dataset-fashion-mnist
 * installs it in /usr/share/datasets/fashion-mnist), reshuffled every
 * epoch. */
typedef struct example_fashion {
    lt_dataset train;
    int64_t *perm;
} example_fashion;

#define EXAMPLE_FASHION_DIR "/usr/share/datasets/fashion-mnist"

lt_status example_fashion_load(example_fashion *f, const char *dir);
/* Batch number `step` (0-based, wrapping over epochs) as normalized f32
 * images [batch, 1, 28, 28] and i64 labels [batch] on dev. */
bool example_fashion_batch(example_fashion *f, int step, int64_t batch, lt_device dev, lt_tensor **images,
                           lt_tensor **labels);
void example_fashion_free(example_fashion *f);

/* A text as token ids for a character-level model: each distinct byte
 * gets one, in byte order (byte_of maps them back). */
typedef struct example_text {
    int64_t *ids, n, vocab;
    unsigned char byte_of[256];
    uint64_t rng; /* picks the batches' windows */
} example_text;

/* Reads the file (at most 64 MiB); false, with a message on stderr, when
 * it cannot be read or is too short for one window of ctx + 1 bytes. */
bool example_text_load(example_text *t, const char *path, int64_t ctx);
/* batch random windows of ctx tokens: inputs [batch, ctx] and, for each
 * position, the token that follows it [batch * ctx] (i64, on dev). */
bool example_text_batch(example_text *t, int64_t batch, int64_t ctx, lt_device dev, lt_tensor **inputs,
                        lt_tensor **targets);
void example_text_free(example_text *t);

#endif
