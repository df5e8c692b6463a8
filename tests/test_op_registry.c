/* test_op_registry.c - the op registry (lt_op_*): every row well formed
 * and found by name, defaults as values, calls by name giving the same
 * values as the direct calls, in-place and multi-result ops, and every
 * misuse (argument count, kinds, ranges, foreign descriptors) reported
 * as an error naming the op and the argument. A sweep calls every op on
 * generic arguments: each call succeeds or fails cleanly. */
#include "lt_test.h"

static lt_arg tensor_arg(lt_tensor *t) { return (lt_arg){.kind = LT_ARG_TENSOR, .t = t}; }
static lt_arg int_arg(lt_arg_kind kind, int64_t v) { return (lt_arg){.kind = kind, .i = v}; }

/* args[i] = the default of argument i for every i >= from. */
static void fill_defaults(const lt_op_desc *op, lt_arg *args, int from)
{
    for (int i = from; i < op->nargs; i++)
        assert_int_equal(lt_op_default(op, i, &args[i]), LT_OK);
}

/* One tensor result of op by name on the given leading args and defaults. */
static lt_tensor *call1(const char *name, const lt_arg *lead, int nlead)
{
    const lt_op_desc *op = lt_op_find(name);
    assert_non_null(op);
    lt_arg args[LT_OP_MAX_ARGS];
    memcpy(args, lead, sizeof *lead * (size_t)nlead);
    fill_defaults(op, args, nlead);
    lt_arg out[2];
    assert_int_equal(lt_op_call(op, args, op->nargs, out, 2), 1);
    assert_int_equal(out[0].kind, LT_ARG_TENSOR);
    return out[0].t;
}

static void test_rows_are_well_formed(void **state)
{
    (void)state;
    assert_true(lt_op_count() > 100);
    for (int i = 0; i < lt_op_count(); i++) {
        const lt_op_desc *op = lt_op_at(i);
        assert_non_null(op);
        assert_ptr_equal(lt_op_find(op->name), op);
        assert_true(op->nargs >= 0 && op->nargs <= LT_OP_MAX_ARGS);
        assert_true(op->doc && op->doc[0]);
        for (int a = 0; a < op->nargs; a++) {
            assert_true(op->arg_names[a][0] != '\0');
            assert_string_not_equal(lt_arg_kind_name(op->args[a]), "invalid");
            lt_arg v;
            assert_int_equal(lt_op_default(op, a, &v) == LT_OK, op->defaults[a] != NULL);
            lt_clear_error();
            if (op->defaults[a])
                assert_int_equal(v.kind, op->args[a]);
        }
        /* in-place ops, and only they, end in '_' */
        size_t len = strlen(op->name);
        assert_int_equal(op->result == LT_RESULT_SELF, op->name[len - 1] == '_');
    }
}

static void test_defaults_as_values(void **state)
{
    (void)state;
    const lt_op_desc *clamp = lt_op_find("clamp"), *zeros = lt_op_find("zeros"), *sum = lt_op_find("sum");
    lt_arg v;
    assert_int_equal(lt_op_default(clamp, 1, &v), LT_OK);
    assert_true(isinf(v.d) && v.d < 0);
    assert_int_equal(lt_op_default(zeros, 1, &v), LT_OK);
    assert_int_equal(v.dtype, LT_F32);
    assert_int_equal(lt_op_default(zeros, 2, &v), LT_OK);
    assert_true(lt_device_equal(v.device, lt_device_cpu()));
    assert_int_equal(lt_op_default(sum, 1, &v), LT_OK);
    assert_int_equal(v.kind, LT_ARG_DIMS);
    assert_int_equal(v.n, 0);
    assert_int_equal(lt_op_default(lt_op_find("randint"), 3, &v), LT_OK);
    assert_int_equal(v.dtype, LT_I64);
    assert_int_equal(lt_op_default(lt_op_find("topk"), 3, &v), LT_OK);
    assert_true(v.b);
}

static void test_calls_match_direct_calls(void **state)
{
    (void)state;
    lt_tensor *x = LT_T(LT_F32, LT_DIMS(2, 3), 1, -2, 3, 4, 5, -6);
    LT_ASSERT_VALUES(call1("sum", (lt_arg[]){tensor_arg(x)}, 1), 0, 5);
    lt_arg dims = {.kind = LT_ARG_DIMS, .ints = (int64_t[]){1}, .n = 1};
    lt_arg keep = {.kind = LT_ARG_BOOL, .b = true};
    lt_tensor *rows = call1("sum", (lt_arg[]){tensor_arg(x), dims, keep}, 3);
    LT_ASSERT_SHAPE(rows, 2, 1);
    LT_ASSERT_VALUES(rows, 0, 2, 3);
    LT_ASSERT_VALUES(call1("relu", (lt_arg[]){tensor_arg(x)}, 1), 0, 1, 0, 3, 4, 5, 0);
    lt_arg lo = {.kind = LT_ARG_DOUBLE, .d = 0.5};
    LT_ASSERT_VALUES(call1("clamp", (lt_arg[]){tensor_arg(x), lo}, 2), 0, 1, 0.5, 3, 4, 5, 0.5);
    lt_tensor *y = LT_T(LT_F32, LT_DIMS(3, 1), 1, 2, 3);
    LT_ASSERT_VALUES(call1("matmul", (lt_arg[]){tensor_arg(x), tensor_arg(y)}, 2), 0, 6, -4);
    lt_arg shape = {.kind = LT_ARG_SHAPE, .ints = (int64_t[]){3, -1}, .n = 2};
    LT_ASSERT_SHAPE(call1("view", (lt_arg[]){tensor_arg(x), shape}, 2), 3, 2);
    lt_tensor *z = call1("zeros", (lt_arg[]){{.kind = LT_ARG_SHAPE, .ints = (int64_t[]){4}, .n = 1}}, 1);
    assert_int_equal(lt_tensor_dtype(z), LT_F32);
    LT_ASSERT_VALUES(z, 0, 0, 0, 0, 0);
    lt_arg both = {.kind = LT_ARG_TENSORS, .tensors = (lt_tensor *[]){y, y}, .n = 2};
    LT_ASSERT_SHAPE(call1("cat", (lt_arg[]){both}, 1), 6, 1);
    /* the result is lt_where's: dtype promotion included */
    lt_tensor *c = LT_T(LT_BOOL, LT_DIMS(3), 1, 0, 1), *i = LT_T(LT_I64, LT_DIMS(3), 7, 8, 9);
    lt_tensor *w = call1("where", (lt_arg[]){tensor_arg(c), tensor_arg(i), tensor_arg(lt_squeeze_all(y))}, 3);
    assert_int_equal(lt_tensor_dtype(w), lt_tensor_dtype(lt_where(c, i, lt_squeeze_all(y))));
    LT_ASSERT_VALUES(w, 0, 7, 2, 9);
}

static void test_in_place_and_pairs(void **state)
{
    (void)state;
    lt_tensor *x = LT_T(LT_F32, LT_DIMS(2, 2), 3, 1, 2, 4);
    lt_arg out[2];
    const lt_op_desc *fill = lt_op_find("fill_");
    lt_arg args[3] = {tensor_arg(x), {.kind = LT_ARG_DOUBLE, .d = 7}};
    assert_int_equal(lt_op_call(fill, args, 2, out, 1), 1);
    assert_ptr_equal(out[0].t, x);
    LT_ASSERT_VALUES(x, 0, 7, 7, 7, 7);
    lt_tensor *v = LT_T(LT_F32, LT_DIMS(2, 2), 3, 1, 2, 4);
    const lt_op_desc *max_dim = lt_op_find("max_dim");
    args[0] = tensor_arg(v), args[1] = int_arg(LT_ARG_DIM, 1);
    fill_defaults(max_dim, args, 2);
    assert_int_equal(lt_op_call(max_dim, args, 3, out, 2), 2);
    LT_ASSERT_VALUES(out[0].t, 0, 3, 4);
    LT_ASSERT_VALUES(out[1].t, 0, 0, 1);
}

static void test_pieces_count_then_fill(void **state)
{
    (void)state;
    lt_tensor *x = LT_T(LT_F32, LT_DIMS(5), 1, 2, 3, 4, 5);
    lt_arg out[3] = {{.t = NULL}};
    const lt_op_desc *split = lt_op_find("split");
    lt_arg args[3] = {tensor_arg(x), int_arg(LT_ARG_INT, 2)};
    fill_defaults(split, args, 2);
    int64_t live = lt_live_tensor_count();
    assert_int_equal(lt_op_call(split, args, 3, out, 1), 3); /* too small: the count, nothing written */
    assert_null(out[0].t);
    assert_int_equal(lt_live_tensor_count(), live);
    assert_int_equal(lt_op_call(split, args, 3, out, 3), 3);
    LT_ASSERT_VALUES(out[2].t, 0, 5);
    LT_ASSERT_VALUES(out[1].t, 0, 3, 4);
}

static void test_misuse_is_an_error(void **state)
{
    (void)state;
    lt_tensor *x = LT_T(LT_F32, LT_DIMS(2), 1, 2);
    lt_arg out[2];
    const lt_op_desc *sum = lt_op_find("sum"), *conv = lt_op_find("conv2d");
    lt_arg args[LT_OP_MAX_ARGS] = {tensor_arg(x)};
    fill_defaults(sum, args, 1);
    assert_int_equal(lt_op_call(sum, args, 2, out, 1), -1);
    LT_EXPECT_ERROR(LT_ERR_ARGUMENT, "sum: expected 3 arguments, got 2");
    args[0] = (lt_arg){.kind = LT_ARG_DOUBLE, .d = 1};
    assert_int_equal(lt_op_call(sum, args, 3, out, 1), -1);
    LT_EXPECT_ERROR(LT_ERR_ARGUMENT, "sum: argument 0 (input) must be a tensor, got a double");
    args[0] = tensor_arg(NULL);
    assert_int_equal(lt_op_call(sum, args, 3, out, 1), -1);
    LT_EXPECT_ERROR(LT_ERR_NULL, "sum: argument 0 (input) is NULL");
    args[0] = tensor_arg(x);
    args[1] = (lt_arg){.kind = LT_ARG_DIMS, .ints = (int64_t[]){(int64_t)1 << 40}, .n = 1};
    assert_int_equal(lt_op_call(sum, args, 3, out, 1), -1);
    LT_EXPECT_ERROR(LT_ERR_ARGUMENT, "out of int range");
    args[1].n = LT_MAX_DIMS + 1;
    assert_int_equal(lt_op_call(sum, args, 3, out, 1), -1);
    LT_EXPECT_ERROR(LT_ERR_ARGUMENT, "longer than LT_MAX_DIMS");
    lt_arg triple = {.kind = LT_ARG_SHAPE, .ints = (int64_t[]){1, 1, 1}, .n = 3};
    lt_arg cargs[7] = {tensor_arg(x), tensor_arg(x), {.kind = LT_ARG_TENSOR_OPT}, triple, triple, triple,
                       int_arg(LT_ARG_INT, 1)};
    assert_int_equal(lt_op_call(conv, cargs, 7, out, 1), -1);
    LT_EXPECT_ERROR(LT_ERR_ARGUMENT, "conv2d: argument 3 (stride, shape) must hold exactly 2 values");
    lt_op_desc forged = *sum;
    assert_int_equal(lt_op_call(&forged, args, 3, out, 1), -1);
    LT_EXPECT_ERROR(LT_ERR_ARGUMENT, "not a row of the registry");
    fill_defaults(sum, args, 1);
    assert_int_equal(lt_op_call(sum, args, 3, out, 0), -1);
    LT_EXPECT_ERROR(LT_ERR_ARGUMENT, "out has room for 0 results");
    assert_int_equal(lt_op_call(NULL, args, 3, out, 1), -1);
    LT_EXPECT_ERROR(LT_ERR_NULL, "op is NULL");
    /* the op's own failure, with its own message */
    const lt_op_desc *matmul = lt_op_find("matmul");
    lt_tensor *m = LT_T(LT_F32, LT_DIMS(3), 1, 2, 3);
    assert_int_equal(lt_op_call(matmul, (lt_arg[]){tensor_arg(x), tensor_arg(m)}, 2, out, 1), -1);
    assert_int_equal(lt_last_status(), LT_ERR_SHAPE);
    lt_clear_error();
}

static void test_lookups_that_fail(void **state)
{
    (void)state;
    assert_null(lt_op_find("no_such_op"));
    LT_EXPECT_ERROR(LT_ERR_ARGUMENT, "no op is named 'no_such_op'");
    assert_null(lt_op_find(NULL));
    LT_EXPECT_ERROR(LT_ERR_NULL, "name is NULL");
    assert_null(lt_op_at(lt_op_count()));
    LT_EXPECT_ERROR(LT_ERR_INDEX, "out of range");
    lt_arg v;
    assert_int_equal(lt_op_default(lt_op_find("sum"), 0, &v), LT_ERR_ARGUMENT);
    LT_EXPECT_ERROR(LT_ERR_ARGUMENT, "argument input of sum is required");
    assert_int_equal(lt_op_default(lt_op_find("sum"), 9, &v), LT_ERR_ARGUMENT);
    lt_clear_error();
    assert_string_equal(lt_arg_kind_name((lt_arg_kind)99), "invalid");
}

/* One value result of a row by name on the given arguments. */
static lt_arg value_of(const char *name, const lt_arg *args, int nargs)
{
    lt_arg out[1] = {{.kind = LT_ARG_NUM_KINDS}};
    assert_int_equal(lt_op_call(lt_op_find(name), args, nargs, out, 1), 1);
    return out[0];
}

static void test_calls_beyond_tensor_ops(void **state)
{
    (void)state;
    lt_arg sched[4] = {{.kind = LT_ARG_DOUBLE, .d = 1}, int_arg(LT_ARG_INT, 5), int_arg(LT_ARG_INT, 10),
                       {.kind = LT_ARG_DOUBLE, .d = 0}};
    lt_arg lr = value_of("lr_cosine", sched, 4);
    assert_int_equal(lr.kind, LT_ARG_DOUBLE);
    assert_true(fabs(lr.d - 0.5) < 1e-12); /* halfway down the cosine from 1 to 0 */
    sched[2].i = 0;
    lt_arg out[2];
    assert_int_equal(lt_op_call(lt_op_find("lr_cosine"), sched, 4, out, 1), -1);
    LT_EXPECT_ERROR(LT_ERR_ARGUMENT, "total_steps");
    /* a layer made, run and freed through the registry */
    lt_arg layer[4] = {int_arg(LT_ARG_INT, 3), int_arg(LT_ARG_INT, 2)};
    fill_defaults(lt_op_find("nn_linear"), layer, 2);
    lt_module *m = value_of("nn_linear", layer, 4).module;
    assert_non_null(m);
    lt_tensor *x = LT_T(LT_F32, LT_DIMS(4, 3), 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12);
    lt_tensor *y = value_of("module_forward", (lt_arg[]){{.kind = LT_ARG_MODULE, .module = m}, tensor_arg(x)}, 2).t;
    LT_ASSERT_SHAPE(y, 4, 2);
    lt_module_free(m);
    assert_int_equal(lt_op_call(lt_op_find("module_forward"), (lt_arg[]){{.kind = LT_ARG_MODULE}, tensor_arg(x)}, 2,
                                out, 1),
                     -1);
    LT_EXPECT_ERROR(LT_ERR_NULL, "module_forward: argument 0 (module) is NULL");
    /* state: grad mode and the lazy backend's name */
    assert_true(value_of("grad_enabled", NULL, 0).b);
    assert_int_equal(lt_op_call(lt_op_find("no_grad_begin"), NULL, 0, NULL, 0), 0);
    assert_false(value_of("grad_enabled", NULL, 0).b);
    assert_int_equal(lt_op_call(lt_op_find("no_grad_end"), NULL, 0, NULL, 0), 0);
    assert_string_equal(value_of("lazy_backend", NULL, 0).s, lt_lazy_backend());
    lt_arg bad_backend = {.kind = LT_ARG_STRING, .s = "no-such-backend"};
    assert_int_equal(lt_op_call(lt_op_find("lazy_set_backend"), &bad_backend, 1, NULL, 0), -1);
    assert_int_not_equal(lt_last_status(), LT_OK);
    lt_clear_error();
}

/* A generic value of kind k: a [2, 3] f32 tensor, small ints, dim 0. */
static lt_arg generic(lt_arg_kind k, lt_tensor *t, lt_tensor **list, lt_module *m, lt_optimizer *o)
{
    static const int64_t ints[2] = {2, 3}, dims[2] = {1, 0}; /* static: the values outlive this call */
    switch (k) {
    case LT_ARG_TENSOR:
    case LT_ARG_TENSOR_OPT: return (lt_arg){.kind = k, .t = t};
    case LT_ARG_TENSORS: return (lt_arg){.kind = k, .tensors = list, .n = 2};
    case LT_ARG_INT: return int_arg(k, 1);
    case LT_ARG_DIM: return int_arg(k, 0);
    case LT_ARG_DOUBLE: return (lt_arg){.kind = k, .d = 0.5};
    case LT_ARG_BOOL: return (lt_arg){.kind = k, .b = false};
    case LT_ARG_DIMS: return (lt_arg){.kind = k, .ints = dims, .n = 2};
    case LT_ARG_SHAPE: return (lt_arg){.kind = k, .ints = ints, .n = 2};
    case LT_ARG_DTYPE: return (lt_arg){.kind = k, .dtype = LT_F32};
    case LT_ARG_STRING: return (lt_arg){.kind = k, .s = "no-such-name"};
    case LT_ARG_MODULE: return (lt_arg){.kind = k, .module = m};
    case LT_ARG_OPTIMIZER: return (lt_arg){.kind = k, .optimizer = o};
    default: return (lt_arg){.kind = k, .device = lt_device_cpu()};
    }
}

/* A result has the kind its row promises; layers and optimizers made are freed. */
static void check_result(const lt_op_desc *op, const lt_arg *v)
{
    static const struct {
        lt_result_kind result;
        lt_arg_kind kind;
    } kinds[] = {{LT_RESULT_INT, LT_ARG_INT},       {LT_RESULT_DOUBLE, LT_ARG_DOUBLE},
                 {LT_RESULT_BOOL, LT_ARG_BOOL},     {LT_RESULT_STRING, LT_ARG_STRING},
                 {LT_RESULT_MODULE, LT_ARG_MODULE}, {LT_RESULT_OPTIMIZER, LT_ARG_OPTIMIZER}};
    lt_arg_kind expected = LT_ARG_TENSOR;
    for (size_t i = 0; i < sizeof kinds / sizeof kinds[0]; i++)
        if (kinds[i].result == op->result)
            expected = kinds[i].kind;
    assert_int_equal(v->kind, expected);
    if (expected == LT_ARG_MODULE)
        lt_module_free(v->module);
    else if (expected == LT_ARG_OPTIMIZER)
        lt_optim_free(v->optimizer);
    else if (expected == LT_ARG_TENSOR || expected == LT_ARG_STRING)
        assert_non_null(expected == LT_ARG_TENSOR ? (const void *)v->t : (const void *)v->s);
}

static void test_every_op_runs_or_fails_cleanly(void **state)
{
    (void)state;
    lt_tensor *t = LT_T(LT_F32, LT_DIMS(2, 3), 0.1, 0.2, 0.3, 0.4, 0.5, 0.6), *list[2] = {t, t};
    lt_tensor *w = lt_persist(lt_randn(LT_DIMS(3), LT_F32, lt_device_cpu()));
    lt_set_requires_grad(w, true);
    lt_module *m = lt_nn_linear(3, 2, true, lt_device_cpu());
    lt_optimizer *o = lt_optim_sgd(&w, 1, 0.1, 0, 0, false);
    int ran = 0;
    for (int i = 0; i < lt_op_count(); i++) {
        const lt_op_desc *op = lt_op_at(i);
        lt_arg args[LT_OP_MAX_ARGS], out[8];
        for (int a = 0; a < op->nargs; a++)
            args[a] = generic(op->args[a], op->result == LT_RESULT_SELF && a == 0 ? lt_clone(t) : t, list, m, o);
        int n = lt_op_call(op, args, op->nargs, out, 8);
        if (n < 0) { /* e.g. int-only ops on a float tensor: an error with a message */
            assert_true(lt_last_error()[0] != '\0');
            lt_clear_error();
            continue;
        }
        ran++;
        for (int k = 0; k < n; k++)
            check_result(op, &out[k]);
    }
    assert_true(lt_grad_enabled()); /* no_grad_begin and no_grad_end ran in turn */
    assert_true(ran > lt_op_count() * 3 / 4);
    lt_optim_free(o);
    lt_module_free(m);
    lt_release(w);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        LT_TEST(test_rows_are_well_formed),     LT_TEST(test_defaults_as_values),
        LT_TEST(test_calls_match_direct_calls), LT_TEST(test_in_place_and_pairs),
        LT_TEST(test_pieces_count_then_fill),   LT_TEST(test_misuse_is_an_error),
        LT_TEST(test_lookups_that_fail),        LT_TEST(test_calls_beyond_tensor_ops),
        LT_TEST(test_every_op_runs_or_fails_cleanly),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
