/*
 * bench/peers_step - the training steps of bench/peers on our devices.
 *
 * Five workloads, the same models, shapes and hyper-parameters as the peer
 * scripts in bench/peers/ (torch eager, torch.compile, torch_xla, jax.jit):
 *   mlp_sgd      MLP 784-512-512-10, batch 128, cross entropy, SGD lr 0.01
 *   mlp_adam     the same MLP with Adam lr 1e-3
 *   transformer  block d256 h4 ffn1024 seq128 batch16, loss mean(y^2), Adam
 *   gpt          character-level GPT: 2 pre-LN layers, d128, 4 heads,
 *                context 64, batch 32, FF 512, vocabulary 96, causal
 *                attention, token + position embeddings, final LN + linear
 *                head (no bias), cross entropy over all positions, AdamW 1e-3
 *                (weight decay 0.01)
 *   mnist_cnn    PyTorch's MNIST example net (conv 32, conv 64, max pool,
 *                dropout 0.25, linear 9216-128, dropout 0.5, linear 128-10),
 *                log_softmax + nll, batch 64 of 1x28x28, Adam 1e-3
 * Inputs are synthetic (fixed seeds). Each step is fwd + bwd + update inside
 * lt_step_begin / lt_step_end, so on the lazy device it ends with the step
 * barrier and includes the wait for the program's execution.
 *
 * usage:
 *   peers_step --device lazy|cpu [--name NAME] [--threads N]
 *              [--backend tiered|cpu|interp] [--wait-compiles] [--metrics] [--async]
 *              (--serve | --workload W [--steps N])
 * On the lazy device the backend is the library's default (tiered when a C
 * compiler works, see lt_lazy_set_backend) unless --backend says otherwise.
 * --wait-compiles waits for the tiered backend's background compiles after
 * the two cold steps, so that the timed steps show the native steady state;
 * without it, timed steps may still run on the interp tier (counted in
 * "interp_tier_runs_in_timed_steps"). --metrics prints the library's
 * counters and timers (lt_metrics_report) to stderr at the end.
 * --async ends every step with lt_step_end_async (lt_barrier(false)): the
 * next step is traced while this one runs, and a step's time includes the
 * wait for the one before it; the default name is then "lazy-async".
 * bench/first_step.sh runs it cold, with a warm disk cache and steady, for
 * each backend. Run it with a fresh LT_CACHE_DIR for cold figures.
 * --serve reads commands from stdin, one a line, and answers each with one
 * JSON line on stdout (bench/peers/run.py drives it this way):
 *   run <workload> <steps> <warmup>   runs warmup + steps steps; the first
 *                                     step of a workload in this process is
 *                                     timed alone as its cold step
 *   quit
 * On the lazy device a run's JSON also describes the program the cold step
 * compiled: cold_nodes (graph nodes), cold_program_bytes (its C),
 * cold_kernels and cold_units (translation units). The last three are the
 * program counters of the barrier's compile, so with the tiered backend
 * (whose background builds set none) they describe the step's program
 * only when it came from the plan cache; LT_TIERED=0 (as
 * bench/compile_scaling runs it) always gives them.
 * On start it prints one line {"system": ..., "ready": true, ...}. Models
 * live until the process ends, so later rounds are warm. Without
 * --threads the library's default thread count is used (the driver runs it
 * that way with no OMP_* variable set too). Figures only: exits 0 unless the
 * command line is wrong.
 */
#include "lazytensor.h"

#include "bench_util.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define MAX_MODULES 16
#define MAX_PARAMS 64
#define MAX_STEPS 100000

typedef enum workload {
    W_MLP_SGD,
    W_MLP_ADAM,
    W_TRANSFORMER,
    W_GPT,
    W_MNIST_CNN,
    W_COUNT
} workload;

static const char *const workload_names[W_COUNT] = {"mlp_sgd", "mlp_adam", "transformer", "gpt", "mnist_cnn"};

/* GPT shapes */
enum { GPT_LAYERS = 2, GPT_DIM = 128, GPT_HEADS = 4, GPT_CTX = 64, GPT_BATCH = 32, GPT_FF = 512, GPT_VOCAB = 96 };

typedef struct model {
    workload kind;
    lt_module *mods[MAX_MODULES];
    int n;
    lt_optimizer *opt;
    lt_tensor *x, *y;      /* retained inputs and targets (y may be NULL) */
    lt_tensor *positions;  /* gpt: 0..ctx-1 */
    bool built, cold_done; /* cold_done: its first step has been timed */
} model;

typedef struct options {
    lt_device dev;
    const char *name;
    int threads; /* 0: library default */
    const char *backend;
    bool serve;
    int workload;
    int steps;
    bool wait_compiles; /* after the cold steps, wait for background compiles */
    bool metrics;       /* print lt_metrics_report to stderr at the end */
    bool async; /* steps end with lt_step_end_async */
} options;

/* --async: every step ends with lt_step_end_async instead of lt_step_end */
static bool async_steps;

static int workload_parse(const char *s)
{
    for (int i = 0; i < W_COUNT; i++)
        if (!strcmp(s, workload_names[i]))
            return i;
    return -1;
}

/* ---- models ------------------------------------------------------------- */

static void add_module(model *m, lt_module *mod) { m->mods[m->n++] = mod; }

static bool all_modules_built(const model *m)
{
    for (int i = 0; i < m->n; i++)
        if (!m->mods[i])
            return false;
    return m->n > 0;
}

static lt_optimizer *optimizer_for(model *m, bool adam, bool adamw)
{
    lt_tensor *params[MAX_PARAMS];
    int total = 0;
    for (int i = 0; i < m->n; i++)
        total += lt_module_parameters(m->mods[i], params + total, NULL, MAX_PARAMS - total);
    if (total > MAX_PARAMS)
        return NULL;
    if (adamw)
        return lt_optim_adam(params, total, 1e-3, 0.9, 0.999, 1e-8, 0.01, true);
    return adam ? lt_optim_adam(params, total, 1e-3, 0.9, 0.999, 1e-8, 0, false)
                : lt_optim_sgd(params, total, 0.01, 0, 0, false);
}

/* A host-made tensor moved to dev; the returned reference is the caller's. */
static lt_tensor *on_device(lt_tensor *cpu, lt_device dev)
{
    if (!cpu || dev.kind == LT_DEVICE_CPU)
        return cpu;
    lt_tensor *t = lt_to(cpu, dev);
    lt_release(cpu);
    return t;
}

static void build_mlp(model *m, lt_device dev)
{
    lt_module *l[] = {lt_nn_linear(784, 512, true, dev), lt_nn_relu(), lt_nn_linear(512, 512, true, dev),
                      lt_nn_relu(), lt_nn_linear(512, 10, true, dev)};
    add_module(m, lt_nn_sequential(l, 5));
    m->x = on_device(lt_randn((int64_t[]){128, 784}, 2, LT_F32, lt_device_cpu()), dev);
    m->y = on_device(lt_randint(0, 10, (int64_t[]){128}, 1, LT_I64, lt_device_cpu()), dev);
}

/* modules: ln1, attention, ln2, fc1, fc2 (as bench/train_step) */
static void build_transformer(model *m, lt_device dev)
{
    add_module(m, lt_nn_layer_norm(256, 1e-5, dev));
    add_module(m, lt_nn_self_attention(256, 4, false, dev));
    add_module(m, lt_nn_layer_norm(256, 1e-5, dev));
    add_module(m, lt_nn_linear(256, 1024, true, dev));
    add_module(m, lt_nn_linear(1024, 256, true, dev));
    m->x = on_device(lt_randn((int64_t[]){16, 128, 256}, 3, LT_F32, lt_device_cpu()), dev);
}

/* modules: token emb, position emb, per layer (ln1, attn, ln2, fc1, fc2),
 * final ln, head. Tokens: one random [batch, ctx + 1] sequence; inputs are
 * its first ctx columns, targets the next token at each position. */
static void build_gpt(model *m, lt_device dev)
{
    add_module(m, lt_nn_embedding(GPT_VOCAB, GPT_DIM, dev));
    add_module(m, lt_nn_embedding(GPT_CTX, GPT_DIM, dev));
    for (int l = 0; l < GPT_LAYERS; l++) {
        add_module(m, lt_nn_layer_norm(GPT_DIM, 1e-5, dev));
        add_module(m, lt_nn_self_attention(GPT_DIM, GPT_HEADS, true, dev));
        add_module(m, lt_nn_layer_norm(GPT_DIM, 1e-5, dev));
        add_module(m, lt_nn_linear(GPT_DIM, GPT_FF, true, dev));
        add_module(m, lt_nn_linear(GPT_FF, GPT_DIM, true, dev));
    }
    add_module(m, lt_nn_layer_norm(GPT_DIM, 1e-5, dev));
    add_module(m, lt_nn_linear(GPT_DIM, GPT_VOCAB, false, dev));
    lt_scope_begin();
    lt_tensor *tokens = lt_randint(0, GPT_VOCAB, (int64_t[]){GPT_BATCH, GPT_CTX + 1}, 2, LT_I64, lt_device_cpu());
    lt_tensor *x = lt_contiguous(lt_narrow(tokens, 1, 0, GPT_CTX));
    lt_tensor *y = lt_reshape(lt_contiguous(lt_narrow(tokens, 1, 1, GPT_CTX)), (int64_t[]){GPT_BATCH * GPT_CTX}, 1);
    m->x = x ? lt_retain(lt_to(x, dev)) : NULL;
    m->y = y ? lt_retain(lt_to(y, dev)) : NULL;
    m->positions = lt_retain(lt_arange(0, GPT_CTX, 1, LT_I64, dev));
    lt_scope_end();
}

static void build_mnist_cnn(model *m, lt_device dev)
{
    lt_module *l[] = {lt_nn_conv2d(1, 32, 3, 1, 0, 1, true, dev),
                      lt_nn_relu(),
                      lt_nn_conv2d(32, 64, 3, 1, 0, 1, true, dev),
                      lt_nn_relu(),
                      lt_nn_max_pool2d(2),
                      lt_nn_dropout(0.25),
                      lt_nn_flatten(),
                      lt_nn_linear(9216, 128, true, dev),
                      lt_nn_relu(),
                      lt_nn_dropout(0.5),
                      lt_nn_linear(128, 10, true, dev)};
    add_module(m, lt_nn_sequential(l, 11));
    m->x = on_device(lt_randn((int64_t[]){64, 1, 28, 28}, 4, LT_F32, lt_device_cpu()), dev);
    m->y = on_device(lt_randint(0, 10, (int64_t[]){64}, 1, LT_I64, lt_device_cpu()), dev);
}

static bool build_model(model *m, workload kind, lt_device dev)
{
    memset(m, 0, sizeof *m);
    m->kind = kind;
    lt_manual_seed(0);
    switch (kind) {
    case W_MLP_SGD:
    case W_MLP_ADAM: build_mlp(m, dev); break;
    case W_TRANSFORMER: build_transformer(m, dev); break;
    case W_GPT: build_gpt(m, dev); break;
    default: build_mnist_cnn(m, dev); break;
    }
    if (all_modules_built(m) && m->x && (kind == W_TRANSFORMER || m->y))
        m->opt = optimizer_for(m, kind != W_MLP_SGD, kind == W_GPT);
    m->built = m->opt != NULL && (kind != W_GPT || m->positions);
    return m->built;
}

static void free_model(model *m)
{
    lt_optim_free(m->opt);
    for (int i = 0; i < m->n; i++)
        lt_module_free(m->mods[i]);
    lt_release(m->x);
    lt_release(m->y);
    lt_release(m->positions);
    memset(m, 0, sizeof *m);
}

/* ---- losses ------------------------------------------------------------- */

static lt_tensor *fwd(model *m, int i, lt_tensor *x) { return lt_module_forward(m->mods[i], x); }

static lt_tensor *transformer_loss(model *m)
{
    lt_tensor *x = m->x;
    lt_tensor *h = lt_add(x, fwd(m, 1, fwd(m, 0, x)));
    lt_tensor *out = lt_add(h, fwd(m, 4, lt_gelu(fwd(m, 3, fwd(m, 2, h)))));
    return lt_mean(lt_mul(out, out), NULL, 0, false);
}

static lt_tensor *gpt_loss(model *m)
{
    lt_tensor *h = lt_add(fwd(m, 0, m->x), fwd(m, 1, m->positions)); /* [B,T,D] + [T,D] */
    for (int l = 0; l < GPT_LAYERS; l++) {
        int b = 2 + 5 * l; /* ln1, attn, ln2, fc1, fc2 */
        h = lt_add(h, fwd(m, b + 1, fwd(m, b, h)));
        h = lt_add(h, fwd(m, b + 4, lt_gelu(fwd(m, b + 3, fwd(m, b + 2, h)))));
    }
    int last = 2 + 5 * GPT_LAYERS;
    lt_tensor *logits = fwd(m, last + 1, fwd(m, last, h));
    lt_tensor *flat = lt_reshape(logits, (int64_t[]){GPT_BATCH * GPT_CTX, GPT_VOCAB}, 2);
    return lt_cross_entropy(flat, m->y, 0);
}

static lt_tensor *loss_of(model *m)
{
    switch (m->kind) {
    case W_MLP_SGD:
    case W_MLP_ADAM: return lt_cross_entropy(fwd(m, 0, m->x), m->y, 0);
    case W_TRANSFORMER: return transformer_loss(m);
    case W_GPT: return gpt_loss(m);
    default: return lt_nll_loss(lt_log_softmax(fwd(m, 0, m->x), 1), m->y);
    }
}

/* One training step; the time it took in ms, or -1 on error. */
static double timed_step(model *m)
{
    double t0 = now_ms();
    lt_step_begin();
    lt_tensor *loss = loss_of(m);
    bool ok = loss && lt_backward(loss, NULL) == LT_OK && lt_optim_step(m->opt) == LT_OK &&
              lt_optim_zero_grad(m->opt) == LT_OK;
    ok = (async_steps ? lt_step_end_async() : lt_step_end()) == LT_OK && ok;
    return ok ? now_ms() - t0 : -1;
}

/* ---- JSON output ---------------------------------------------------------- */

static void json_string(const char *s)
{
    putchar('"');
    for (; *s; s++) {
        if (*s == '"' || *s == '\\')
            printf("\\%c", *s);
        else if ((unsigned char)*s < 0x20)
            printf("\\u%04x", (unsigned char)*s);
        else
            putchar(*s);
    }
    putchar('"');
}

static void json_head(const options *o, const char *wl)
{
    printf("{\"system\": ");
    json_string(o->name);
    printf(", \"workload\": ");
    json_string(wl);
    printf(", \"threads\": %d", lt_get_num_threads());
    if (o->dev.kind == LT_DEVICE_LAZY)
        printf(", \"backend\": \"%s\"", lt_lazy_backend());
}

static void json_error(const options *o, const char *wl, const char *message)
{
    json_head(o, wl);
    printf(", \"error\": ");
    json_string(message);
    printf("}\n");
    fflush(stdout);
    lt_clear_error();
}

/* ---- running -------------------------------------------------------------- */

typedef struct run_result {
    double cold_ms, second_ms; /* < 0: not measured in this run */
    int64_t cold_nodes, cold_bytes, cold_kernels, cold_units; /* the cold step's program (lazy device) */
    double median_ms;
    int64_t compiles;    /* programs compiled during the timed steps */
    int64_t interp_runs; /* executions on the tiered backend's interp tier during them */
} run_result;

/* The first two steps of a fresh model, timed alone: the cold step and the
 * one after it (optimizer state exists from the second step on, so on the
 * lazy device it is a second program). */
static bool cold_steps(model *m, run_result *r)
{
    r->cold_ms = timed_step(m);
    r->cold_nodes = lt_metrics_counter("GraphNodes");
    r->cold_bytes = lt_metrics_counter("ProgramBytes");
    r->cold_kernels = lt_metrics_counter("Kernels");
    r->cold_units = lt_metrics_counter("TranslationUnits");
    r->second_ms = r->cold_ms < 0 ? -1 : timed_step(m);
    m->cold_done = true;
    return r->second_ms >= 0;
}

static bool run_steps(model *m, int steps, int warmup, bool wait_compiles, run_result *r)
{
    r->cold_ms = r->second_ms = -1;
    if (!m->cold_done && !cold_steps(m, r))
        return false;
    if (wait_compiles) /* the tiered backend's native programs, before the steady steps */
        lt_lazy_wait_compiles();
    for (int i = 0; i < warmup; i++)
        if (timed_step(m) < 0)
            return false;
    double *t = malloc(sizeof *t * (size_t)steps);
    if (!t)
        return false;
    int64_t compiles0 = lt_metrics_counter("UncachedCompile"), interp0 = lt_metrics_counter("InterpTierRuns");
    bool ok = true;
    for (int i = 0; ok && i < steps; i++)
        ok = (t[i] = timed_step(m)) >= 0;
    if (async_steps && lt_barrier(true) != LT_OK) /* the last step's execution, and its error */
        ok = false;
    r->compiles = lt_metrics_counter("UncachedCompile") - compiles0;
    r->interp_runs = lt_metrics_counter("InterpTierRuns") - interp0;
    if (ok)
        r->median_ms = median(t, steps);
    free(t);
    return ok;
}

static void run_command(const options *o, model *models, int wl, int steps, int warmup)
{
    model *m = &models[wl];
    const char *name = workload_names[wl];
    if (!m->built && !build_model(m, (workload)wl, o->dev)) {
        json_error(o, name, lt_last_error());
        free_model(m);
        return;
    }
    run_result r = {0};
    if (!run_steps(m, steps, warmup, o->wait_compiles, &r)) {
        json_error(o, name, lt_last_error());
        return;
    }
    json_head(o, name);
    printf(", \"steps\": %d, \"median_ms\": %.4f", steps, r.median_ms);
    if (r.cold_ms >= 0)
        printf(", \"cold_ms\": %.4f, \"second_ms\": %.4f", r.cold_ms, r.second_ms);
    if (o->dev.kind == LT_DEVICE_LAZY)
        printf(", \"compiles_in_timed_steps\": %lld, \"interp_tier_runs_in_timed_steps\": %lld", (long long)r.compiles,
               (long long)r.interp_runs);
    if (o->dev.kind == LT_DEVICE_LAZY && r.cold_ms >= 0)
        printf(", \"cold_nodes\": %lld, \"cold_program_bytes\": %lld, \"cold_kernels\": %lld, \"cold_units\": %lld",
               (long long)r.cold_nodes, (long long)r.cold_bytes, (long long)r.cold_kernels, (long long)r.cold_units);
    printf("}\n");
    fflush(stdout);
}

static void serve(const options *o, model *models)
{
    char line[256], cmd[32], wl[64];
    printf("{\"system\": ");
    json_string(o->name);
    printf(", \"ready\": true, \"lazytensor\": \"%s\", \"threads\": %d", lt_version(), lt_get_num_threads());
    if (o->dev.kind == LT_DEVICE_LAZY)
        printf(", \"backend\": \"%s\"", lt_lazy_backend());
    printf("}\n");
    fflush(stdout);
    while (fgets(line, sizeof line, stdin)) {
        int steps = 0, warmup = 0;
        int got = sscanf(line, "%31s %63s %d %d", cmd, wl, &steps, &warmup);
        if (got < 1)
            continue; /* blank line */
        if (!strcmp(cmd, "quit"))
            break;
        if (got < 3 || strcmp(cmd, "run") != 0) {
            json_error(o, "", "expected 'run <workload> <steps> <warmup>' or 'quit'");
            continue;
        }
        int w = workload_parse(wl);
        if (w < 0 || steps < 1 || steps > MAX_STEPS || warmup < 0 || warmup > MAX_STEPS)
            json_error(o, wl, "unknown workload or steps/warmup out of range (steps 1..100000)");
        else
            run_command(o, models, w, steps, warmup);
    }
}

static int usage(void)
{
    fprintf(stderr, "usage: peers_step --device lazy|cpu [--name NAME] [--threads N] [--backend tiered|cpu|interp]\n"
                    "                  [--wait-compiles] [--metrics] [--async] (--serve | --workload W [--steps N])\n"
                    "workloads: mlp_sgd mlp_adam transformer gpt mnist_cnn\n");
    return 2;
}

static bool parse_args(int argc, char **argv, options *o)
{
    const char *device = NULL;
    memset(o, 0, sizeof *o);
    o->workload = -1;
    o->steps = 20;
    for (int i = 1; i < argc; i++) {
        bool has_value = i + 1 < argc;
        if (!strcmp(argv[i], "--serve"))
            o->serve = true;
        else if (!strcmp(argv[i], "--device") && has_value)
            device = argv[++i];
        else if (!strcmp(argv[i], "--name") && has_value)
            o->name = argv[++i];
        else if (!strcmp(argv[i], "--threads") && has_value)
            o->threads = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--backend") && has_value)
            o->backend = argv[++i];
        else if (!strcmp(argv[i], "--workload") && has_value)
            o->workload = workload_parse(argv[++i]);
        else if (!strcmp(argv[i], "--steps") && has_value)
            o->steps = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--wait-compiles"))
            o->wait_compiles = true;
        else if (!strcmp(argv[i], "--metrics"))
            o->metrics = true;
        else if (!strcmp(argv[i], "--async"))
            o->async = true;
        else
            return false;
    }
    if (!device || (strcmp(device, "lazy") != 0 && strcmp(device, "cpu") != 0))
        return false;
    o->dev = lt_device_parse(device);
    if (!o->name)
        o->name = o->dev.kind == LT_DEVICE_LAZY ? (o->async ? "lazy-async" : "lazy") : "eager";
    return o->dev.kind != LT_DEVICE_INVALID && o->threads >= 0 && (o->serve || o->workload >= 0) &&
           o->steps >= 1 && o->steps <= MAX_STEPS;
}

int main(int argc, char **argv)
{
    options o;
    if (!parse_args(argc, argv, &o))
        return usage();
    if (o.threads > 0)
        lt_set_num_threads(o.threads);
    async_steps = o.async;
    if (o.backend && lt_lazy_set_backend(o.backend) != LT_OK) {
        fprintf(stderr, "peers_step: %s\n", lt_last_error());
        return 2;
    }
    static model models[W_COUNT];
    if (o.serve)
        serve(&o, models);
    else
        run_command(&o, models, o.workload, o.steps, 2);
    for (int i = 0; i < W_COUNT; i++)
        if (models[i].built)
            free_model(&models[i]);
    if (o.metrics) {
        static char report[16384];
        lt_metrics_report(report, sizeof report);
        fputs(report, stderr);
    }
    return 0;
}
