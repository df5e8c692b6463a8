/*
 * api_nn.c - public linear-algebra and nn ops: lt_matmul, lt_conv2d,
 * lt_max_pool2d, lt_avg_pool2d. The wrappers only pack attributes (layout
 * in ops.def); the shape rules in ops/infer_nn.c validate them.
 *
 * Defaults for NULL arrays: conv2d stride 1, padding 0, dilation 1; pooling
 * stride = kernel, padding 0. The pooling kernel itself may not be NULL.
 *
 * An unbatched input [C, H, W] (torch accepts one) runs as a batch of one:
 * a size-1 dim is added in front and taken away from the results.
 *
 * Integer inputs, which torch accepts for conv2d (i32, i64, u8: sums wrap
 * like the type) and avg_pool2d (i64: the mean truncated toward zero), run
 * in f64 and convert back; the results are torch's while the sums stay
 * below 2^53 in magnitude.
 */
#include "api/api.h"
#include "api/compose.h"

/* True for a valid 3-D tensor (an unbatched image). */
static bool unbatched(lt_tensor *x) { return x && lt_check_tensor("nn", x, 0) == LT_OK && lt_tensor_ndim(x) == 3; }

/* r (and *extra when given) without their leading size-1 dim, handed to
 * the caller's scope; closes the scope the unbatched call opened. */
static lt_tensor *rebatch_close(lt_tensor *r, lt_tensor **extra)
{
    if (r)
        r = lt_keep(lt_squeeze(r, 0));
    if (extra && *extra)
        *extra = r ? lt_keep(lt_squeeze(*extra, 0)) : NULL;
    lt_scope_end();
    return r;
}

lt_tensor *lt_matmul(lt_tensor *a, lt_tensor *b) { return lt_call2(LT_OP_MATMUL, a, b, NULL); }

/* Copies a pair of values (or the default when v is NULL) into i[at..at+1]. */
static void put_pair(lt_attrs *a, int at, const int64_t *v, int64_t fallback)
{
    a->i[at] = v ? v[0] : fallback;
    a->i[at + 1] = v ? v[1] : fallback;
}

/* t is a valid tensor of dtype dt (no error is set either way). */
static bool has_dtype(lt_tensor *t, lt_dtype dt)
{
    return t && lt_check_tensor("nn", t, 0) == LT_OK && lt_tensor_dtype(t) == dt;
}

/* The integer dtype of x when x, w and bias (if any) share it; -1 otherwise. */
static int shared_integer_dtype(lt_tensor *x, lt_tensor *w, lt_tensor *bias)
{
    if (!x || lt_check_tensor("nn", x, 0) != LT_OK)
        return -1;
    lt_dtype dt = lt_tensor_dtype(x);
    if (dt != LT_I32 && dt != LT_I64 && dt != LT_U8)
        return -1;
    return has_dtype(w, dt) && (!bias || has_dtype(bias, dt)) ? (int)dt : -1;
}

static lt_tensor *as_f64(lt_tensor *t) { return t ? lt_to_dtype(t, LT_F64) : NULL; }

lt_tensor *lt_conv2d(lt_tensor *x, lt_tensor *w, lt_tensor *bias, const int64_t *stride,
                     const int64_t *padding, const int64_t *dilation, int64_t groups)
{
    int idt = shared_integer_dtype(x, w, bias);
    if (idt >= 0) {
        lt_scope_begin();
        lt_tensor *r = lt_conv2d(as_f64(x), as_f64(w), as_f64(bias), stride, padding, dilation, groups);
        return lt_scope_return(r ? lt_to_dtype(r, (lt_dtype)idt) : NULL);
    }
    if (unbatched(x)) {
        lt_scope_begin();
        return rebatch_close(lt_conv2d(lt_unsqueeze(x, 0), w, bias, stride, padding, dilation, groups), NULL);
    }
    lt_attrs a = lt_attrs_init();
    put_pair(&a, 0, stride, 1);
    put_pair(&a, 2, padding, 0);
    put_pair(&a, 4, dilation, 1);
    a.i[6] = groups;
    a.ni = 7;
    lt_tensor *in[3] = {x, w, bias};
    return lt_call(LT_OP_CONV2D, in, bias ? 3 : 2, &a, NULL);
}

/* conv2d's attributes followed by the pair `extra` (a kernel or an input
 * size), then the op on inputs a and b. */
static lt_tensor *conv_grad_call(lt_op op, lt_tensor *a, lt_tensor *b, const int64_t *extra, const int64_t *stride,
                                 const int64_t *padding, const int64_t *dilation, int64_t groups)
{
    if (!extra) {
        lt_error(LT_ERR_NULL, "%s: the %s is NULL, expected 2 sizes", lt_op_name(op),
                 op == LT_OP_CONV2D_WEIGHT_GRAD ? "kernel size" : "input size");
        return NULL;
    }
    lt_attrs at = lt_attrs_init();
    put_pair(&at, 0, stride, 1);
    put_pair(&at, 2, padding, 0);
    put_pair(&at, 4, dilation, 1);
    at.i[6] = groups;
    put_pair(&at, 7, extra, 0);
    at.ni = 9;
    lt_tensor *in[2] = {a, b};
    return lt_call(op, in, 2, &at, NULL);
}

lt_tensor *lt_conv2d_weight_grad(lt_tensor *x, lt_tensor *gy, const int64_t *kernel, const int64_t *stride,
                                 const int64_t *padding, const int64_t *dilation, int64_t groups)
{
    return conv_grad_call(LT_OP_CONV2D_WEIGHT_GRAD, x, gy, kernel, stride, padding, dilation, groups);
}

lt_tensor *lt_conv2d_input_grad(lt_tensor *gy, lt_tensor *w, const int64_t *input_size, const int64_t *stride,
                                const int64_t *padding, const int64_t *dilation, int64_t groups)
{
    return conv_grad_call(LT_OP_CONV2D_INPUT_GRAD, gy, w, input_size, stride, padding, dilation, groups);
}

/* Packs the pooling attributes; kernel NULL is an error. */
static bool pool_attrs(const char *name, lt_tensor *x, const int64_t *kernel, const int64_t *stride,
                       const int64_t *padding, lt_attrs *a)
{
    if (lt_check_tensor(name, x, 0) != LT_OK)
        return false;
    if (!kernel) {
        lt_error(LT_ERR_NULL, "%s: kernel is NULL, expected 2 sizes", name);
        return false;
    }
    put_pair(a, 0, kernel, 0);
    put_pair(a, 2, stride ? stride : kernel, 0);
    put_pair(a, 4, padding, 0);
    a->ni = 6;
    return true;
}

lt_tensor *lt_max_pool2d(lt_tensor *x, const int64_t *kernel, const int64_t *stride,
                         const int64_t *padding, lt_tensor **indices)
{
    if (indices)
        *indices = NULL;
    if (unbatched(x)) {
        lt_scope_begin();
        return rebatch_close(lt_max_pool2d(lt_unsqueeze(x, 0), kernel, stride, padding, indices), indices);
    }
    lt_attrs a = lt_attrs_init();
    if (!pool_attrs("max_pool2d", x, kernel, stride, padding, &a))
        return NULL;
    return lt_call(LT_OP_MAX_POOL2D, &x, 1, &a, indices);
}

lt_tensor *lt_avg_pool2d(lt_tensor *x, const int64_t *kernel, const int64_t *stride,
                         const int64_t *padding, bool count_include_pad)
{
    if (has_dtype(x, LT_I64)) { /* the conversion back truncates toward zero */
        lt_scope_begin();
        lt_tensor *r = lt_avg_pool2d(as_f64(x), kernel, stride, padding, count_include_pad);
        return lt_scope_return(r ? lt_to_dtype(r, LT_I64) : NULL);
    }
    if (unbatched(x)) {
        lt_scope_begin();
        return rebatch_close(lt_avg_pool2d(lt_unsqueeze(x, 0), kernel, stride, padding, count_include_pad), NULL);
    }
    lt_attrs a = lt_attrs_init();
    if (!pool_attrs("avg_pool2d", x, kernel, stride, padding, &a))
        return NULL;
    a.flag = count_include_pad ? 1 : 0;
    return lt_call(LT_OP_AVG_POOL2D, &x, 1, &a, NULL);
}
