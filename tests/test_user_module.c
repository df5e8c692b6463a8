/*
 * test_user_module.c - modules defined by the program (lt_module_new and
 * registration by name): dotted names, lookups, forward, train/eval,
 * zero_grad, freeing with the user's destructor, registration errors,
 * state dicts; and moving a model in place (lt_module_to, lt_to_) with an
 * optimizer made before the move.
 */
#include "lt_test.h"

#include <unistd.h>

static lt_device cpu(void) { return lt_device_cpu(); }
static lt_device lazy(void) { return lt_device_parse("lazy"); }

/* ---- a small GPT, written as user modules ------------------------------------ */

typedef struct block {
    lt_module *ln1, *attn, *ln2, *fc, *proj;
} block;

static lt_tensor *block_forward(lt_module *m, lt_tensor *x)
{
    block *b = lt_module_data(m);
    x = lt_add(x, lt_module_forward(b->attn, lt_module_forward(b->ln1, x)));
    lt_tensor *h = lt_gelu(lt_module_forward(b->fc, lt_module_forward(b->ln2, x)));
    return lt_add(x, lt_module_forward(b->proj, h));
}

static lt_module *block_new(int64_t d, int64_t heads, lt_device dev)
{
    block *b = calloc(1, sizeof *b);
    lt_module *m = lt_module_new("block", block_forward, b, free);
    b->ln1 = lt_module_add_child(m, "ln1", lt_nn_layer_norm(d, 1e-5, dev));
    b->attn = lt_module_add_child(m, "attn", lt_nn_self_attention(d, heads, true, dev));
    b->ln2 = lt_module_add_child(m, "ln2", lt_nn_layer_norm(d, 1e-5, dev));
    b->fc = lt_module_add_child(m, "fc", lt_nn_linear(d, 4 * d, true, dev));
    b->proj = lt_module_add_child(m, "proj", lt_nn_linear(4 * d, d, true, dev));
    return lt_module_finish(m);
}

typedef struct gpt {
    lt_module *wte, *blocks, *ln_f, *head;
    lt_tensor *wpe;  /* own parameter [T, D] */
    lt_tensor *seen; /* own buffer: forward calls in training mode */
    int nblocks;
} gpt;

/* idx [B, T] (i64) -> logits [B, T, V] */
static lt_tensor *gpt_forward(lt_module *m, lt_tensor *idx)
{
    gpt *g = lt_module_data(m);
    int64_t t = lt_tensor_size(idx, 1);
    lt_tensor *x = lt_add(lt_module_forward(g->wte, idx), lt_narrow(g->wpe, 0, 0, t));
    for (int i = 0; i < g->nblocks; i++) {
        char name[16];
        snprintf(name, sizeof name, "%d", i);
        x = lt_module_forward(lt_module_child(g->blocks, name), x);
    }
    if (lt_module_is_training(m)) {
        lt_no_grad_scope_begin();
        lt_add_scalar_(g->seen, 1.0);
        lt_no_grad_scope_end();
    }
    return lt_module_forward(g->head, lt_module_forward(g->ln_f, x));
}

static lt_module *gpt_new(int64_t vocab, int64_t ctx, int64_t d, int nblocks, lt_device dev)
{
    gpt *g = calloc(1, sizeof *g);
    g->nblocks = nblocks;
    lt_module *m = lt_module_new("gpt", gpt_forward, g, free);
    g->wte = lt_module_add_child(m, "wte", lt_nn_embedding(vocab, d, dev));
    g->wpe = lt_module_add_parameter(m, "wpe", lt_mul_scalar(lt_randn(LT_DIMS(ctx, d), LT_F32, dev), 0.02));
    g->seen = lt_module_add_buffer(m, "seen", lt_zeros(NULL, 0, LT_F32, dev));
    g->blocks = lt_module_add_child(m, "blocks", lt_module_new("list", NULL, NULL, NULL));
    for (int i = 0; i < nblocks; i++) {
        char name[16];
        snprintf(name, sizeof name, "%d", i);
        lt_module_add_child(g->blocks, name, block_new(d, 2, dev));
    }
    g->ln_f = lt_module_add_child(m, "ln_f", lt_nn_layer_norm(d, 1e-5, dev));
    g->head = lt_module_add_child(m, "head", lt_nn_linear(d, vocab, false, dev));
    return lt_module_finish(m);
}

static void test_dotted_names(void **state)
{
    (void)state;
    lt_module *g = gpt_new(11, 8, 8, 2, cpu());
    assert_non_null(g);
    const char *names[64];
    lt_tensor *ps[64];
    int np = lt_module_parameters(g, ps, names, 64);
    /* own first (wpe), then wte, blocks.0 (ln1 2, attn 4, ln2 2, fc 2, proj 2), blocks.1, ln_f 2, head 1 */
    assert_int_equal(np, 1 + 1 + 2 * 12 + 2 + 1);
    assert_string_equal(names[0], "wpe");
    assert_string_equal(names[1], "wte.weight");
    assert_string_equal(names[2], "blocks.0.ln1.weight");
    assert_string_equal(names[4], "blocks.0.attn.qkv.weight");
    assert_string_equal(names[7], "blocks.0.attn.out.bias");
    assert_string_equal(names[13], "blocks.0.proj.bias");
    assert_string_equal(names[14], "blocks.1.ln1.weight");
    assert_string_equal(names[np - 1], "head.weight");
    const char *snames[64];
    int ns = lt_module_state(g, NULL, snames, 64);
    assert_int_equal(ns, np + 1);
    assert_string_equal(snames[ns - 1], "seen");
    for (int i = 0; i < np; i++) {
        assert_ptr_equal(lt_module_tensor(g, names[i]), ps[i]);
        assert_true(lt_requires_grad(ps[i]));
    }
    assert_false(lt_requires_grad(lt_module_tensor(g, "seen")));
    assert_string_equal(lt_module_kind(lt_module_child(g, "blocks.1.attn")), "self_attention");
    assert_string_equal(lt_module_kind(lt_module_child(g, "blocks.1")), "block");
    LT_ASSERT_SHAPE(lt_module_tensor(g, "blocks.1.attn.qkv.weight"), 24, 8);
    assert_null(lt_module_tensor(g, "blocks.2.ln1.weight"));
    LT_EXPECT_ERROR(LT_ERR_ARGUMENT, "module_tensor: nn.gpt has no parameter or buffer named \"blocks.2.ln1.weight\"");
    assert_null(lt_module_child(g, "blocks.0.mlp"));
    LT_EXPECT_ERROR(LT_ERR_ARGUMENT, "module_child: nn.gpt has no child module named \"blocks.0.mlp\"");
    lt_module_free(g);
}

/* The block's forward equals the same computation done by hand with its
 * children, and the GPT's logits have the right shape. */
static void test_forward(void **state)
{
    (void)state;
    lt_manual_seed(3);
    lt_module *b = block_new(8, 2, cpu());
    lt_tensor *x = lt_randn(LT_DIMS(2, 5, 8), LT_F32, cpu());
    lt_tensor *y = LT_OK_T(lt_module_forward(b, x));
    lt_module *ln1 = lt_module_child(b, "ln1"), *attn = lt_module_child(b, "attn");
    lt_module *ln2 = lt_module_child(b, "ln2"), *fc = lt_module_child(b, "fc"), *proj = lt_module_child(b, "proj");
    lt_tensor *h = lt_add(x, lt_module_forward(attn, lt_module_forward(ln1, x)));
    lt_tensor *want = lt_add(h, lt_module_forward(proj, lt_gelu(lt_module_forward(fc, lt_module_forward(ln2, h)))));
    double *a = lt_test_values(y), *e = lt_test_values(want);
    for (int i = 0; i < 80; i++)
        assert_true(a[i] == e[i]);
    free(a);
    free(e);
    lt_module_free(b);

    lt_module *g = gpt_new(11, 8, 8, 2, cpu());
    lt_tensor *idx = lt_randint(0, 11, LT_DIMS(3, 6), LT_I64, cpu());
    LT_ASSERT_SHAPE(lt_module_forward(g, idx), 3, 6, 11);
    LT_ASSERT_VALUES(lt_module_tensor(g, "seen"), 0, 1);
    lt_module_train(g, false);
    LT_ASSERT_SHAPE(lt_module_forward(g, idx), 3, 6, 11);
    LT_ASSERT_VALUES(lt_module_tensor(g, "seen"), 0, 1); /* eval: the buffer is not counted */
    lt_module_free(g);
}

/* ---- train/eval, zero_grad, freeing --------------------------------------------- */

static int freed_states;
static void count_free(void *p)
{
    freed_states++;
    free(p);
}

typedef struct scaled {
    lt_tensor *scale, *shift;
    lt_module *drop;
} scaled;

/* y = dropout(x) * scale + shift */
static lt_tensor *scaled_forward(lt_module *m, lt_tensor *x)
{
    scaled *s = lt_module_data(m);
    return lt_add(lt_mul(lt_module_forward(s->drop, x), s->scale), s->shift);
}

static lt_module *scaled_new(double p)
{
    scaled *s = calloc(1, sizeof *s);
    lt_module *m = lt_module_new("scaled", scaled_forward, s, count_free);
    s->scale = lt_module_add_parameter(m, "scale", lt_from_data((float[]){1, 2, 3}, LT_DIMS(3), LT_F32, cpu()));
    s->shift = lt_module_add_parameter(m, "shift", lt_from_data((float[]){10, 20, 30}, LT_DIMS(3), LT_F32, cpu()));
    s->drop = lt_module_add_child(m, "drop", lt_nn_dropout(p));
    return lt_module_finish(m);
}

static void test_train_eval_zero_grad_free(void **state)
{
    (void)state;
    int64_t live = lt_live_tensor_count();
    freed_states = 0;
    lt_module *outer = lt_module_new("outer", NULL, NULL, NULL);
    lt_module *inner = lt_module_add_child(outer, "inner", scaled_new(1.0));
    assert_non_null(lt_module_finish(outer));
    lt_tensor *x = LT_T(LT_F32, LT_DIMS(2, 3), 1, 1, 1, 2, 2, 2);
    /* training: dropout p=1 zeroes x */
    LT_ASSERT_VALUES(lt_module_forward(inner, x), 0, 10, 20, 30, 10, 20, 30);
    lt_module_train(outer, false);
    assert_false(lt_module_is_training(lt_module_child(outer, "inner.drop")));
    LT_ASSERT_VALUES(lt_module_forward(inner, x), 0, 11, 22, 33, 12, 24, 36);
    lt_module_train(outer, true);
    assert_true(lt_module_is_training(lt_module_child(outer, "inner.drop")));

    lt_module_train(outer, false);
    lt_tensor *loss = lt_sum(lt_module_forward(inner, x), NULL, 0, false);
    assert_int_equal(lt_backward(loss, NULL), LT_OK);
    LT_ASSERT_VALUES(lt_grad(lt_module_tensor(outer, "inner.scale")), 0, 3, 3, 3);
    LT_ASSERT_VALUES(lt_grad(lt_module_tensor(outer, "inner.shift")), 0, 2, 2, 2);
    assert_int_equal(lt_module_zero_grad(outer), LT_OK);
    assert_null(lt_grad(lt_module_tensor(outer, "inner.scale")));
    assert_null(lt_grad(lt_module_tensor(outer, "inner.shift")));
    assert_int_equal(lt_last_status(), LT_OK);

    lt_module_free(inner); /* owned by outer: refused */
    LT_EXPECT_ERROR(LT_ERR_STATE, "module_free: this nn.scaled module is owned by an nn.outer container");
    assert_null(lt_module_forward(outer, x));
    LT_EXPECT_ERROR(LT_ERR_STATE, "module_forward: nn.outer has no forward function");
    lt_scope_end();
    lt_scope_begin();
    lt_module_free(outer);
    assert_int_equal(freed_states, 1);
    assert_int_equal(lt_live_tensor_count(), live);
}

/* Registration works with no scope open as inside one, and every failure
 * frees what was given (the destructor runs once). */
static void test_registration_contexts_and_errors(void **state)
{
    (void)state;
    lt_scope_end(); /* no scope open from here */
    int64_t live = lt_live_tensor_count();
    freed_states = 0;
    lt_module *m = scaled_new(0.5);
    assert_non_null(m);
    lt_module_free(m);
    assert_int_equal(freed_states, 1);
    assert_int_equal(lt_live_tensor_count(), live);

    /* duplicate name: the module is freed by lt_module_finish, nothing leaks */
    m = lt_module_new("dup", NULL, calloc(1, 8), count_free);
    assert_non_null(lt_module_add_parameter(m, "w", lt_zeros(LT_DIMS(2), LT_F32, cpu())));
    assert_null(lt_module_add_buffer(m, "w", lt_zeros(LT_DIMS(2), LT_F32, cpu())));
    assert_null(lt_module_add_child(m, "later", lt_nn_relu())); /* after a failure: freed, no new error */
    assert_null(lt_module_finish(m));
    LT_EXPECT_ERROR(LT_ERR_ARGUMENT, "nn.dup: the name \"w\" is already used by a parameter");
    assert_int_equal(freed_states, 2);
    assert_int_equal(lt_live_tensor_count(), live);

    m = lt_module_new("bad", NULL, NULL, NULL);
    assert_null(lt_module_add_parameter(m, "a.b", lt_zeros(LT_DIMS(2), LT_F32, cpu())));
    LT_EXPECT_ERROR(LT_ERR_ARGUMENT, "nn.bad: tensor name \"a.b\" is invalid");
    lt_module_free(m);
    m = lt_module_new("bad", NULL, NULL, NULL);
    assert_null(lt_module_add_parameter(m, "idx", lt_zeros(LT_DIMS(2), LT_I64, cpu())));
    LT_EXPECT_ERROR(LT_ERR_DTYPE, "");
    lt_module_free(m);
    m = lt_module_new("bad", NULL, NULL, NULL);
    assert_null(lt_module_add_parameter(m, "w", NULL));
    LT_EXPECT_ERROR(LT_ERR_NULL, "module_add_parameter: tensor \"w\" is NULL");
    lt_module_free(m);
    /* a child that belongs to another module is left to it */
    lt_module *a = lt_module_new("a", NULL, NULL, NULL), *b = lt_module_new("b", NULL, NULL, NULL);
    lt_module *relu = lt_module_add_child(a, "r", lt_nn_relu());
    assert_null(lt_module_add_child(b, "r", relu));
    LT_EXPECT_ERROR(LT_ERR_STATE, "nn.b: child \"r\" (nn.relu) already belongs to an nn.a module");
    assert_null(lt_module_add_child(relu, "loop", a));
    LT_EXPECT_ERROR(LT_ERR_ARGUMENT, "would contain itself");
    lt_module_free(b);
    lt_module_free(a);
    /* NULL module: what was given is freed */
    assert_null(lt_module_add_parameter(NULL, "w", lt_zeros(LT_DIMS(2), LT_F32, cpu())));
    LT_EXPECT_ERROR(LT_ERR_NULL, "module_add_parameter: module is NULL");
    assert_null(lt_module_new("", NULL, calloc(1, 8), count_free));
    LT_EXPECT_ERROR(LT_ERR_ARGUMENT, "module_new: kind is empty");
    assert_int_equal(freed_states, 3);
    assert_int_equal(lt_live_tensor_count(), live);

    lt_scope_begin();
    /* inside a scope: a tensor not owned by the innermost scope is refused */
    lt_tensor *outer_t = lt_zeros(LT_DIMS(2), LT_F32, cpu());
    lt_scope_begin();
    m = lt_module_new("scoped", NULL, NULL, NULL);
    assert_null(lt_module_add_parameter(m, "w", outer_t));
    LT_EXPECT_ERROR(LT_ERR_STATE, "is not owned by the innermost scope");
    lt_module_free(m);
    lt_scope_end();
    lt_scope_end();
    assert_int_equal(lt_live_tensor_count(), live);
    lt_scope_begin();
}

/* ---- state dict ------------------------------------------------------------------ */

static void test_state_dict_roundtrip(void **state)
{
    (void)state;
    char path[] = "/tmp/lt_user_module_XXXXXX";
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    lt_manual_seed(1);
    lt_module *a = gpt_new(11, 8, 8, 1, cpu());
    lt_manual_seed(2);
    lt_module *b = gpt_new(11, 8, 8, 1, lazy());
    lt_tensor *ta[64], *tb[64];
    const char *names[64];
    int n = lt_module_state(a, ta, names, 64);
    assert_int_equal(lt_module_state(b, tb, NULL, 64), n);
    lt_add_scalar_(lt_module_tensor(a, "seen"), 7);
    assert_int_equal(lt_save_safetensors(path, ta, names, n), LT_OK);
    assert_int_equal(lt_load_safetensors(path, tb, names, n), LT_OK);
    for (int i = 0; i < n; i++) {
        double *va = lt_test_values(ta[i]), *vb = lt_test_values(tb[i]);
        for (int64_t k = 0; k < lt_tensor_numel(ta[i]); k++)
            assert_true(va[k] == vb[k]);
        free(va);
        free(vb);
    }
    LT_ASSERT_VALUES(lt_module_tensor(b, "seen"), 0, 7);
    lt_module_free(a);
    lt_module_free(b);
    close(fd);
    unlink(path);
}

/* ---- moving in place ------------------------------------------------------------- */

static void test_to_inplace(void **state)
{
    (void)state;
    lt_tensor *t = lt_persist(LT_T(LT_F32, LT_DIMS(2, 2), 1, 2, 3, 4));
    assert_int_equal(lt_set_requires_grad(t, true), LT_OK);
    assert_int_equal(lt_backward(lt_sum(lt_mul_scalar(t, 3), NULL, 0, false), NULL), LT_OK);
    lt_tensor *cpu_view = lt_transpose(t, 0, 1);
    int refs = lt_tensor_refcount(t);
    assert_ptr_equal(lt_to_(t, lazy()), t);
    assert_int_equal(lt_tensor_device(t).kind, LT_DEVICE_LAZY);
    assert_int_equal(lt_tensor_refcount(t), refs);
    assert_true(lt_requires_grad(t));
    lt_tensor *g = lt_grad(t);
    assert_int_equal(lt_tensor_device(g).kind, LT_DEVICE_LAZY);
    LT_ASSERT_VALUES(g, 0, 3, 3, 3, 3);
    LT_ASSERT_VALUES(t, 0, 1, 2, 3, 4);
    LT_ASSERT_VALUES(cpu_view, 0, 1, 3, 2, 4); /* the old storage */
    /* a lazy view of t keeps its value when t moves back */
    lt_tensor *lazy_view = lt_transpose(t, 0, 1);
    lt_tensor *sum_before = lt_mul_scalar(lazy_view, 2); /* pending, reads the view */
    assert_null(lt_to_(lazy_view, cpu()));
    LT_EXPECT_ERROR(LT_ERR_STATE, "to_: tensor 0 is a view of another lazy tensor");
    assert_ptr_equal(lt_to_(t, cpu()), t);
    assert_int_equal(lt_tensor_device(t).kind, LT_DEVICE_CPU);
    assert_int_equal(lt_tensor_device(lt_grad(t)).kind, LT_DEVICE_CPU);
    LT_ASSERT_VALUES(t, 0, 1, 2, 3, 4);
    LT_ASSERT_VALUES(lazy_view, 0, 1, 3, 2, 4);
    LT_ASSERT_VALUES(sum_before, 0, 2, 6, 4, 8);
    assert_null(lt_to_(t, (lt_device){LT_DEVICE_CPU, 2}));
    LT_EXPECT_ERROR(LT_ERR_DEVICE, "to_: device cpu:2 is not available");
    assert_null(lt_to_(NULL, cpu()));
    LT_EXPECT_ERROR(LT_ERR_NULL, "to_: argument 0 is NULL");
    lt_release(t);
}

/* Trains a linear+tanh+linear model for `steps` SGD-momentum or Adam steps
 * on fixed data; the model is built on cpu, the optimizer made on cpu, and
 * the model moved to `train_on` before (move_first) or after the
 * optimizer is made. Returns the final parameters as doubles. */
static double *train(bool adam, bool move_first, lt_device train_on, int steps, int *count)
{
    lt_manual_seed(9);
    lt_module *m = lt_nn_sequential((lt_module *[]){lt_nn_linear(4, 6, true, cpu()), lt_nn_tanh(),
                                                    lt_nn_linear(6, 2, true, cpu())}, 3);
    lt_tensor *ps[4], *before[4];
    int n = lt_module_parameters(m, ps, NULL, 4);
    assert_int_equal(n, 4);
    if (move_first)
        assert_int_equal(lt_module_to(m, train_on), LT_OK);
    lt_optimizer *o = adam ? lt_optim_adam(ps, n, 0.05, 0.9, 0.999, 1e-8, 0.01, true)
                           : lt_optim_sgd(ps, n, 0.1, 0.9, 0.01, false);
    if (!move_first)
        assert_int_equal(lt_module_to(m, train_on), LT_OK);
    assert_int_equal(lt_module_parameters(m, before, NULL, 4), 4);
    for (int i = 0; i < 4; i++)
        assert_ptr_equal(before[i], ps[i]); /* the same handles */
    lt_tensor *x = lt_persist(lt_to(lt_randn(LT_DIMS(8, 4), LT_F32, cpu()), train_on));
    lt_tensor *y = lt_persist(lt_to(lt_randn(LT_DIMS(8, 2), LT_F32, cpu()), train_on));
    for (int s = 0; s < steps; s++) {
        lt_step_begin();
        lt_tensor *loss = lt_mse_loss(lt_module_forward(m, x), y);
        assert_int_equal(lt_backward(loss, NULL), LT_OK);
        assert_int_equal(lt_optim_step(o), LT_OK);
        assert_int_equal(lt_optim_zero_grad(o), LT_OK);
        assert_int_equal(lt_step_end(), LT_OK);
    }
    lt_tensor *st[16];
    int ns = lt_optim_state(o, st, NULL, 16);
    for (int i = 0; i < ns; i++) /* the state followed its parameters */
        assert_true(lt_device_equal(lt_tensor_device(st[i]), train_on));
    int total = 0;
    for (int i = 0; i < n; i++)
        total += (int)lt_tensor_numel(ps[i]);
    double *out = malloc(sizeof(double) * (size_t)total);
    int at = 0;
    for (int i = 0; i < n; i++) {
        double *v = lt_test_values(ps[i]);
        memcpy(out + at, v, sizeof(double) * (size_t)lt_tensor_numel(ps[i]));
        at += (int)lt_tensor_numel(ps[i]);
        free(v);
    }
    *count = total;
    lt_release(x);
    lt_release(y);
    lt_optim_free(o);
    lt_module_free(m);
    return out;
}

static void test_optimizer_made_before_move(void **state)
{
    (void)state;
    const char *backends[2] = {"interp", "cpu"};
    for (int adam = 0; adam < 2; adam++) {
        int n0, n1, n2, n3;
        double *start = train(adam, false, cpu(), 0, &n0);
        double *eager = train(adam, false, cpu(), 5, &n1);
        for (int b = 0; b < 2; b++) {
            if (!lt_test_use_backend(backends[b]))
                continue;
            double *moved_after = train(adam, false, lazy(), 5, &n2);
            double *moved_before = train(adam, true, lazy(), 5, &n3);
            assert_int_equal(n2, n1);
            int changed = 0;
            for (int i = 0; i < n1; i++) {
                changed += moved_after[i] != start[i];
                assert_true(fabs(moved_after[i] - moved_before[i]) <= 1e-5);
                assert_true(fabs(moved_after[i] - eager[i]) <= 1e-5);
            }
            assert_true(changed > n1 / 2); /* the optimizer did update the moved model */
            free(moved_after);
            free(moved_before);
        }
        free(start);
        free(eager);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        LT_TEST(test_dotted_names),
        LT_TEST(test_forward),
        LT_TEST(test_train_eval_zero_grad_free),
        LT_TEST(test_registration_contexts_and_errors),
        LT_TEST(test_state_dict_roundtrip),
        LT_TEST(test_to_inplace),
        LT_TEST(test_optimizer_made_before_move),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
