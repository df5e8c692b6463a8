/*
 * gpt.c - a character-level GPT learns a text: 2 pre-LN blocks (d 128, 4
 * heads, feed-forward 512, causal attention), context 64, batch 32, AdamW
 * 1e-3, cross entropy on the next character; then it continues the text's
 * first 64 characters, sampling.
 *   build/examples/gpt [--steps 1000] [--device lazy|cpu] [--log-every 50]
 *                      [--text /usr/share/common-licenses/GPL-3]
 */
#include "example_util.h"

#include <lazytensor.h>
#include <stdio.h>
#include <string.h>

enum { LAYERS = 2, DIM = 128, HEADS = 4, FF = 512, CTX = 64, BATCH = 32, SAMPLE = 200 };

/* One pre-LN block: h + attn(ln1(h)), then h + mlp(h), mlp = ln2, fc1, gelu,
 * fc2. Plain C over lt_nn_* layers, one to one with a module of children. */
typedef struct block {
    lt_module *ln1, *attn, *mlp;
} block;

typedef struct gpt {
    lt_module *tokens, *positions, *ln_final, *head; /* embeddings; final norm, linear head */
    block blocks[LAYERS];
    lt_module *all[4 + 3 * LAYERS]; /* every module, for the optimizer and freeing */
    int count;
} gpt;

static lt_module *add(gpt *g, lt_module *m) { return g->all[g->count++] = m; }

static void gpt_init(gpt *g, int64_t vocab, lt_device dev)
{
    g->count = 0;
    g->tokens = add(g, lt_nn_embedding(vocab, DIM, dev));
    g->positions = add(g, lt_nn_embedding(CTX, DIM, dev));
    for (int l = 0; l < LAYERS; l++) {
        g->blocks[l].ln1 = add(g, lt_nn_layer_norm(DIM, 1e-5, dev));
        g->blocks[l].attn = add(g, lt_nn_self_attention(DIM, HEADS, true, dev));
        lt_module *mlp[] = {lt_nn_layer_norm(DIM, 1e-5, dev), lt_nn_linear(DIM, FF, true, dev), lt_nn_gelu(),
                            lt_nn_linear(FF, DIM, true, dev)};
        g->blocks[l].mlp = add(g, lt_nn_sequential(mlp, 4));
    }
    g->ln_final = add(g, lt_nn_layer_norm(DIM, 1e-5, dev));
    g->head = add(g, lt_nn_linear(DIM, vocab, false, dev));
}

static lt_tensor *block_forward(block *b, lt_tensor *h)
{
    h = lt_add(h, lt_module_forward(b->attn, lt_module_forward(b->ln1, h)));
    return lt_add(h, lt_module_forward(b->mlp, h));
}

/* tokens [B, CTX] (i64) -> logits [B, CTX, vocab] */
static lt_tensor *gpt_forward(gpt *g, lt_tensor *tokens)
{
    lt_tensor *where = lt_arange(0, CTX, 1, LT_I64, lt_tensor_device(tokens)); /* [CTX], broadcast over B */
    lt_tensor *h = lt_add(lt_module_forward(g->tokens, tokens), lt_module_forward(g->positions, where));
    for (int l = 0; l < LAYERS; l++)
        h = block_forward(&g->blocks[l], h);
    return lt_module_forward(g->head, lt_module_forward(g->ln_final, h));
}

/* Appends SAMPLE characters to the first CTX, each drawn from the model's
 * distribution given the CTX before it (the softmax of the logits). */
static void sample(gpt *g, const example_text *c, lt_device dev)
{
    int64_t seq[CTX + SAMPLE], n = CTX;
    memcpy(seq, c->ids, sizeof *seq * CTX);
    lt_no_grad_begin();
    for (; n < CTX + SAMPLE; n++) {
        lt_scope_begin();
        lt_tensor *logits = gpt_forward(g, lt_from_data(seq + n - CTX, (int64_t[]){1, CTX}, 2, LT_I64, dev));
        lt_tensor *last = lt_select(logits, 1, CTX - 1); /* [1, vocab] */
        lt_status st = lt_item_int(lt_multinomial(lt_softmax(last, 1), 1, true), &seq[n]);
        lt_scope_end();
        if (st != LT_OK)
            break;
    }
    lt_no_grad_end();
    for (int64_t i = 0; i < n; i++)
        putchar(c->byte_of[seq[i]]);
    putchar('\n');
}

int main(int argc, char **argv)
{
    example_args args = {1000, 50, lt_device_parse("lazy"), "/usr/share/common-licenses/GPL-3"};
    example_text text;
    if (!example_parse_args(argc, argv, "--text", &args))
        return 2;
    if (!example_text_load(&text, args.path, CTX))
        return 1;
    printf("%s: %lld characters, vocabulary %lld\n", args.path, (long long)text.n, (long long)text.vocab);
    lt_manual_seed(1);
    gpt model;
    gpt_init(&model, text.vocab, args.dev);
    lt_optimizer *opt = example_adam(model.all, model.count, 0.01);
    bool ok = opt != NULL;
    for (int step = 1; ok && step <= args.steps; step++) {
        lt_step_begin();
        lt_tensor *x, *y, *loss = NULL;
        if (example_text_batch(&text, BATCH, CTX, args.dev, &x, &y)) {
            lt_tensor *logits = gpt_forward(&model, x); /* [BATCH, CTX, vocab]: one row per position */
            loss = lt_cross_entropy(lt_reshape(logits, (int64_t[]){BATCH * CTX, text.vocab}, 2), y, 0);
        }
        ok = example_end_step(loss, opt, step, &args);
    }
    if (ok)
        sample(&model, &text, args.dev);
    else
        fprintf(stderr, "gpt: %s\n", lt_last_error());
    lt_optim_free(opt);
    for (int i = 0; i < model.count; i++)
        lt_module_free(model.all[i]);
    example_text_free(&text);
    return ok ? 0 : 1;
}
