/* test_gradcheck_shape.c - finite-difference checks of the gradient
 * formulas of the views (chains of views, views of non-contiguous
 * tensors, expand), the view-inverse scatters, and the indexing and
 * shaping ops (cat, index_select, gather, scatter, scatter_add,
 * masked_fill, tril, triu, sort, topk, embedding), eager and lazy. */
#include "gradcheck.h"

static lt_device dev_of(lt_tensor *t) { return lt_tensor_device(t); }

/* ======================================================================= */
/* Views                                                                    */
/* ======================================================================= */

/* view -> permute -> slice(step 2) -> select -> unsqueeze -> expand. */
static lt_tensor *f_view_chain(lt_tensor *const *x, const void *ctx)
{
    (void)ctx;
    static const int perm[3] = {2, 0, 1};
    lt_tensor *v = lt_view(x[0], LT_DIMS(2, 3, 4));
    v = lt_permute(v, perm, 3);           /* [4, 2, 3] */
    v = lt_slice(v, 0, 0, 4, 2);          /* [2, 2, 3] */
    v = lt_select(v, 2, -1);              /* [2, 2] */
    v = lt_unsqueeze(v, 1);               /* [2, 1, 2] */
    v = lt_expand(v, LT_DIMS(3, 2, 4, 2)); /* [3, 2, 4, 2] */
    return lt_mul(v, v);
}

/* reshape of a transposed tensor (a copy), flatten and squeeze. */
static lt_tensor *f_reshape_copy(lt_tensor *const *x, const void *ctx)
{
    (void)ctx;
    lt_tensor *t = lt_reshape(lt_transpose(x[0], 0, 1), LT_DIMS(-1));
    t = lt_squeeze(lt_unsqueeze(t, 0), 0);
    return lt_mul(lt_flatten(lt_view(t, LT_DIMS(3, 2, 2)), 1, 2), x[1]);
}

/* narrow, slice with a step and negative bounds, and a diagonal. */
static lt_tensor *f_slices(lt_tensor *const *x, const void *ctx)
{
    (void)ctx;
    lt_tensor *a = lt_slice(x[0], 1, -4, 5, 2);   /* [4, 2] */
    lt_tensor *b = lt_narrow(x[0], 0, 1, 2);      /* [2, 5] */
    lt_tensor *d = lt_diagonal(x[0], 1, 0, 1);    /* [4] */
    lt_tensor *e = lt_diagonal(lt_transpose(x[0], 0, 1), -2, 1, 0); /* [3] */
    lt_tensor *s1 = lt_sum(lt_mul(a, a), NULL, 0, false), *s2 = lt_sum(lt_exp(b), NULL, 0, false);
    lt_tensor *s3 = lt_sum(lt_mul(d, d), NULL, 0, false), *s4 = lt_sum(lt_sin(e), NULL, 0, false);
    return lt_add(lt_add(s1, s2), lt_add(s3, s4));
}

/* expand of a [3, 1] tensor and of a 0-d tensor (new leading dims). */
static lt_tensor *f_expand(lt_tensor *const *x, const void *ctx)
{
    (void)ctx;
    lt_tensor *a = lt_expand(x[0], LT_DIMS(2, 3, 4));
    lt_tensor *b = lt_expand(x[1], LT_DIMS(2, 3, 4));
    return lt_mul(a, lt_exp(b));
}

/* split, chunk and stack: views and cat together. */
static lt_tensor *f_split_stack(lt_tensor *const *x, const void *ctx)
{
    (void)ctx;
    lt_tensor *parts[3], *chunks[2];
    assert_int_equal(lt_split(x[0], 2, 1, parts, 3), 3);    /* [3,2] [3,2] [3,1] */
    assert_int_equal(lt_chunk(x[0], 2, 0, chunks, 2), 2);   /* [2,5] [1,5] */
    lt_tensor *st[2] = {lt_mul(parts[0], parts[1]), lt_transpose(lt_narrow(chunks[0], 1, 0, 3), 0, 1)};
    lt_tensor *s = lt_stack(st, 2, 0); /* [2, 3, 2] */
    return lt_add(s, lt_sum(parts[2], NULL, 0, false));
}

static void test_views(void **state)
{
    (void)state;
    GRADCHECK(f_view_chain, NULL, GC_BOTH, GC_UNIFORM(-1, 1, 6, 4));
    GRADCHECK(f_reshape_copy, NULL, GC_BOTH, GC_UNIFORM(-1, 1, 3, 4), GC_UNIFORM(-1, 1, 3, 4));
    GRADCHECK(f_slices, NULL, GC_BOTH, GC_UNIFORM(-1, 1, 4, 5));
    GRADCHECK(f_expand, NULL, GC_BOTH, GC_UNIFORM(-1, 1, 3, 1), gc_uniform(NULL, 0, -1, 1));
    GRADCHECK(f_split_stack, NULL, GC_BOTH, GC_UNIFORM(-1, 1, 3, 5));
}

/* ======================================================================= */
/* View-inverse scatters (no public wrappers: lt_call)                      */
/* ======================================================================= */

static lt_tensor *f_slice_scatter(lt_tensor *const *x, const void *ctx)
{
    (void)ctx;
    lt_attrs a = lt_attrs_init();
    a.i[0] = 1, a.i[1] = 1, a.i[2] = 5, a.i[3] = 2, a.ni = 4; /* dim 1, 1:5:2 */
    lt_tensor *in[2] = {lt_exp(x[0]), lt_mul(x[1], x[1])};
    return lt_call(LT_OP_SLICE_SCATTER, in, 2, &a, NULL);
}

static lt_tensor *f_select_scatter(lt_tensor *const *x, const void *ctx)
{
    (void)ctx;
    lt_attrs a = lt_attrs_init();
    a.i[0] = 0, a.i[1] = 2, a.ni = 2; /* dim 0, index 2 */
    lt_tensor *in[2] = {lt_transpose(x[0], 0, 1), lt_sin(x[1])};
    return lt_mul(lt_call(LT_OP_SELECT_SCATTER, in, 2, &a, NULL), lt_transpose(x[0], 0, 1));
}

static lt_tensor *f_diagonal_scatter(lt_tensor *const *x, const void *ctx)
{
    (void)ctx;
    lt_attrs a = lt_attrs_init();
    a.i[0] = -1, a.i[1] = 0, a.i[2] = 1, a.ni = 3; /* offset -1 */
    lt_tensor *in[2] = {x[0], x[1]};
    lt_tensor *r = lt_call(LT_OP_DIAGONAL_SCATTER, in, 2, &a, NULL);
    return lt_mul(r, r);
}

static void test_view_scatters(void **state)
{
    (void)state;
    GRADCHECK(f_slice_scatter, NULL, GC_BOTH, GC_UNIFORM(-1, 1, 3, 5), GC_UNIFORM(-1, 1, 3, 2));
    GRADCHECK(f_select_scatter, NULL, GC_BOTH, GC_UNIFORM(-1, 1, 4, 3), GC_UNIFORM(-1, 1, 4));
    GRADCHECK(f_diagonal_scatter, NULL, GC_EAGER, GC_UNIFORM(-1, 1, 4, 3), GC_UNIFORM(-1, 1, 3));
}

/* ======================================================================= */
/* Indexing and shaping                                                     */
/* ======================================================================= */

/* cat of three inputs along the last dim; the middle one is transposed
 * and one input is used twice. */
static lt_tensor *f_cat(lt_tensor *const *x, const void *ctx)
{
    (void)ctx;
    lt_tensor *parts[4] = {x[0], lt_transpose(x[1], 0, 1), x[2], x[0]};
    return lt_exp(lt_cat(parts, 4, -1));
}

/* cat along dim 0 with an input that does not require grad (an integer
 * tensor, promoted) and an empty one. */
static lt_tensor *f_cat_mixed(lt_tensor *const *x, const void *ctx)
{
    (void)ctx;
    lt_tensor *empty = lt_zeros(LT_DIMS(0, 2), LT_F64, dev_of(x[0]));
    lt_tensor *parts[4] = {x[1], x[0], empty, x[0]};
    return lt_cat(parts, 4, 0);
}

/* index_select with repeated indices along dims 0 and 1, and a 0-d index. */
static lt_tensor *f_index_select(lt_tensor *const *x, const void *ctx)
{
    (void)ctx;
    lt_tensor *a = lt_index_select(x[0], 1, x[1]);
    lt_tensor *b = lt_index_select(lt_transpose(x[0], 0, 1), 0, x[1]);
    lt_tensor *c = lt_index_select(x[0], 0, x[2]);
    return lt_add(lt_mul(a, lt_transpose(b, 0, 1)), lt_sum(c, NULL, 0, false));
}

static lt_tensor *f_gather(lt_tensor *const *x, const void *ctx)
{
    (void)ctx;
    return lt_mul(lt_gather(x[0], 1, x[1]), lt_gather(lt_transpose(x[0], 0, 1), 0, lt_transpose(x[1], 0, 1)));
}

/* scatter of src (larger than the index) into self, distinct targets. */
static lt_tensor *f_scatter(lt_tensor *const *x, const void *ctx)
{
    (void)ctx;
    return lt_exp(lt_scatter(x[0], 0, x[2], x[1]));
}

/* scatter_add with repeated targets; the index is narrower than src. */
static lt_tensor *f_scatter_add(lt_tensor *const *x, const void *ctx)
{
    (void)ctx;
    lt_tensor *r = lt_scatter_add(x[0], 1, x[2], x[1]);
    return lt_mul(r, r);
}

static lt_tensor *f_masked_fill(lt_tensor *const *x, const void *ctx)
{
    (void)ctx;
    return lt_mul(lt_masked_fill(lt_transpose(x[0], 0, 1), x[1], 2.5), x[0]);
}

static lt_tensor *f_triangles(lt_tensor *const *x, const void *ctx)
{
    (void)ctx;
    lt_tensor *lo = lt_tril(x[0], -1), *hi = lt_triu(lt_transpose(x[0], 1, 2), 1);
    return lt_add(lt_mul(lo, lo), lt_exp(hi));
}

static void test_indexing(void **state)
{
    (void)state;
    GRADCHECK(f_cat, NULL, GC_BOTH, GC_UNIFORM(-1, 1, 2, 3), GC_UNIFORM(-1, 1, 1, 2), GC_UNIFORM(-1, 1, 2, 1));
    GRADCHECK(f_cat_mixed, NULL, GC_BOTH, GC_UNIFORM(-1, 1, 2, 2), LT_T(LT_I64, LT_DIMS(1, 2), 3, 4));
    lt_tensor *idx = LT_T(LT_I64, LT_DIMS(5), 2, 0, 2, 3, 2);
    lt_tensor *idx0 = LT_T(LT_I32, LT_DIMS(1), 1);
    GRADCHECK(f_index_select, NULL, GC_BOTH, GC_UNIFORM(-1, 1, 5, 4), idx, LT_OK_T(lt_reshape(idx0, NULL, 0)));
    lt_tensor *gidx = LT_T(LT_I64, LT_DIMS(3, 3), 0, 0, 2, 1, 3, 3, 3, 3, 3);
    GRADCHECK(f_gather, NULL, GC_BOTH, GC_UNIFORM(-1, 1, 3, 4), gidx);
    /* self [4, 3], src [3, 4], index [2, 3] with distinct targets per column */
    lt_tensor *sidx = LT_T(LT_I64, LT_DIMS(2, 3), 3, 0, 1, 1, 2, 0);
    GRADCHECK(f_scatter, NULL, GC_BOTH, GC_UNIFORM(-1, 1, 4, 3), GC_UNIFORM(-1, 1, 3, 4), sidx);
    lt_tensor *aidx = LT_T(LT_I64, LT_DIMS(2, 3), 0, 0, 1, 2, 0, 2);
    GRADCHECK(f_scatter_add, NULL, GC_BOTH, GC_UNIFORM(-1, 1, 3, 3), GC_UNIFORM(-1, 1, 2, 4), aidx);
    lt_tensor *mask = LT_T(LT_BOOL, LT_DIMS(1, 3), 1, 0, 1);
    GRADCHECK(f_masked_fill, NULL, GC_BOTH, GC_UNIFORM(-1, 1, 3, 3), mask);
    GRADCHECK(f_triangles, NULL, GC_BOTH, GC_UNIFORM(-1, 1, 2, 3, 3));
}

typedef struct sort_case {
    const char *name;
    int dim;
    int64_t k; /* 0: sort */
    bool flag; /* descending / largest */
    bool transposed;
} sort_case;

static lt_tensor *f_sort(lt_tensor *const *x, const void *ctx)
{
    const sort_case *s = ctx;
    lt_tensor *t = s->transposed ? lt_transpose(x[0], 0, 1) : x[0];
    lt_tensor *idx = NULL;
    lt_tensor *r = s->k ? lt_topk(t, s->k, s->dim, s->flag, &idx) : lt_sort(t, s->dim, s->flag, &idx);
    /* the values are weighted by position, so the order matters */
    return lt_mul(r, lt_to_dtype(lt_add_scalar(idx, 1), LT_F64));
}

static void test_sort_topk(void **state)
{
    (void)state;
    static const sort_case cases[] = {
        {"sort asc", 1, 0, false, false}, {"sort desc", 0, 0, true, true},  {"sort -1", -1, 0, true, false},
        {"topk largest", 1, 2, true, true}, {"topk smallest", 0, 3, false, false},
    };
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++)
        GRADCHECK_NAMED(cases[k].name, f_sort, &cases[k], k < 2 || k == 3 ? GC_BOTH : GC_EAGER, GC_DISTINCT(4, 5));
}

/* embedding with repeated indices of shape [2, 3]. */
static lt_tensor *f_embedding(lt_tensor *const *x, const void *ctx)
{
    (void)ctx;
    lt_tensor *e = lt_embedding(x[0], x[1]);
    return lt_mul(e, lt_tanh(e));
}

/* embedding of a transposed weight with 1-D i32 indices. */
static lt_tensor *f_embedding_t(lt_tensor *const *x, const void *ctx)
{
    (void)ctx;
    return lt_exp(lt_embedding(lt_transpose(x[0], 0, 1), x[1]));
}

static void test_embedding(void **state)
{
    (void)state;
    GRADCHECK(f_embedding, NULL, GC_BOTH, GC_UNIFORM(-1, 1, 5, 3), LT_T(LT_I64, LT_DIMS(2, 3), 4, 0, 4, 2, 4, 0));
    GRADCHECK(f_embedding_t, NULL, GC_EAGER, GC_UNIFORM(-1, 1, 3, 4), LT_T(LT_I32, LT_DIMS(4), 1, 1, 3, 0));
}

/* The index output of sort is integer and carries no gradient: the values
 * path still does, and the tape of a second output does not leak. */
static void test_integer_outputs(void **state)
{
    (void)state;
    lt_tensor *x = LT_T(LT_F64, LT_DIMS(4), 3, 1, 4, 2);
    assert_int_equal(lt_set_requires_grad(x, true), LT_OK);
    lt_tensor *idx = NULL;
    lt_tensor *v = LT_OK_T(lt_sort(x, 0, false, &idx));
    assert_false(lt_requires_grad(idx));
    lt_tensor *w = LT_T(LT_F64, LT_DIMS(4), 1, 2, 3, 4);
    assert_int_equal(lt_backward(LT_OK_T(lt_sum(lt_mul(v, w), NULL, 0, false)), NULL), LT_OK);
    LT_ASSERT_VALUES(lt_grad(x), 0, 3, 1, 4, 2); /* x[k] lands at rank(x[k]) */
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        LT_TEST(test_views),     LT_TEST(test_view_scatters), LT_TEST(test_indexing),
        LT_TEST(test_sort_topk), LT_TEST(test_embedding),     LT_TEST(test_integer_outputs),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
