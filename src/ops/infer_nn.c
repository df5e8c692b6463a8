/*
 * infer_nn.c - shape and dtype rules of the linear-algebra and nn ops:
 * matmul (torch.matmul semantics), conv2d, max_pool2d and avg_pool2d.
 *
 * Every attribute is validated here, so the eager kernels and a later lazy
 * device see only well-formed calls.
 */
#include "ops/ops.h"

/* Largest stride, padding, dilation or pooling window accepted: keeps all
 * window arithmetic far away from int64 overflow. */
#define MAX_WINDOW_ATTR 2147483647LL

static const char *shape_of(const lt_meta *m, char *buf, size_t cap)
{
    return lt_shape_str(m->shape, m->ndim, buf, cap);
}

/* ---- matmul ------------------------------------------------------------- */

/* Result dtype of matmul: the promoted dtype of both inputs; bool has no
 * matrix product (as in PyTorch). */
static lt_status matmul_dtype(const lt_meta *a, const lt_meta *b, lt_dtype *out)
{
    lt_dtype dt = lt_promote_types((lt_dtype)a->dtype, (lt_dtype)b->dtype);
    if (dt == LT_BOOL)
        return lt_error(LT_ERR_DTYPE, "matmul: bool inputs are not supported (got %s and %s)",
                        lt_dtype_name((lt_dtype)a->dtype), lt_dtype_name((lt_dtype)b->dtype));
    *out = dt;
    return LT_OK;
}

static lt_status infer_matmul(lt_op op, const lt_meta *in, int nin, const lt_attrs *attrs, lt_meta *out)
{
    (void)op, (void)nin, (void)attrs;
    const lt_meta *a = &in[0], *b = &in[1];
    char sa[160], sb[160];
    if (a->ndim == 0 || b->ndim == 0)
        return lt_error(LT_ERR_SHAPE, "matmul: both arguments need at least 1 dim, got shapes %s and %s",
                        shape_of(a, sa, sizeof sa), shape_of(b, sb, sizeof sb));
    lt_dtype dt = LT_F32;
    lt_status st = matmul_dtype(a, b, &dt);
    if (st != LT_OK)
        return st;
    /* A is [..., M, K] (1-D: K), B is [..., K, N] (1-D: K). */
    int64_t ka = a->shape[a->ndim - 1];
    int64_t kb = b->ndim == 1 ? b->shape[0] : b->shape[b->ndim - 2];
    if (ka != kb)
        return lt_error(LT_ERR_SHAPE,
                        "matmul: shapes %s and %s cannot be multiplied (inner dims %lld and %lld differ)",
                        shape_of(a, sa, sizeof sa), shape_of(b, sb, sizeof sb), (long long)ka,
                        (long long)kb);
    /* Broadcast the batch dims (all but the last two), NumPy style. */
    int nba = a->ndim > 2 ? a->ndim - 2 : 0, nbb = b->ndim > 2 ? b->ndim - 2 : 0;
    int nd = nba > nbb ? nba : nbb;
    int64_t shape[LT_MAX_DIMS];
    for (int d = 0; d < nd; d++) {
        int da = d - (nd - nba), db = d - (nd - nbb);
        int64_t za = da >= 0 ? a->shape[da] : 1, zb = db >= 0 ? b->shape[db] : 1;
        if (za != zb && za != 1 && zb != 1)
            return lt_error(LT_ERR_SHAPE, "matmul: batch dims of shapes %s and %s are not broadcastable "
                            "(%lld vs %lld)", shape_of(a, sa, sizeof sa), shape_of(b, sb, sizeof sb),
                            (long long)za, (long long)zb);
        shape[d] = za == 1 ? zb : za;
    }
    if (a->ndim >= 2)
        shape[nd++] = a->shape[a->ndim - 2];
    if (b->ndim >= 2)
        shape[nd++] = b->shape[b->ndim - 1];
    out[0] = lt_meta_make(dt, shape, nd);
    return LT_OK;
}

/* ---- shared window arithmetic ------------------------------------------ */

/*
 * Output size of a sliding window over `size` elements padded by `pad` on
 * both sides, window `kernel` with dilation `dil`, step `stride`. Returns
 * -1 when the dilated window does not fit in the padded input.
 */
static int64_t window_out_size(int64_t size, int64_t pad, int64_t dil, int64_t kernel, int64_t stride)
{
    int64_t span; /* dil * (kernel - 1) + 1 */
    if (__builtin_mul_overflow(dil, kernel - 1, &span) || __builtin_add_overflow(span, 1, &span))
        return -1;
    int64_t padded = size + 2 * pad; /* size <= 2^59 (LT_MAX_SPAN_BYTES), pad < 2^31 */
    if (padded < span)
        return -1;
    return (padded - span) / stride + 1;
}

/* Checks lo <= value[k] <= MAX_WINDOW_ATTR for a pair of attributes. */
static lt_status check_pair(const char *op, const char *what, const int64_t *v, int64_t lo)
{
    for (int k = 0; k < 2; k++) {
        if (v[k] < lo || v[k] > MAX_WINDOW_ATTR)
            return lt_error(LT_ERR_ARGUMENT, "%s: %s is (%lld, %lld), expected values in %lld..%lld", op, what,
                            (long long)v[0], (long long)v[1], (long long)lo, MAX_WINDOW_ATTR);
    }
    return LT_OK;
}

/* Result dtype of conv/pool ops: floating only. */
static lt_status floating_dtype(const char *op, const lt_meta *in, int nin, lt_dtype *out)
{
    lt_dtype dt = (lt_dtype)in[0].dtype;
    for (int i = 0; i < nin; i++) {
        if (!lt_dtype_is_floating((lt_dtype)in[i].dtype))
            return lt_error(LT_ERR_DTYPE, "%s: argument %d has dtype %s, expected a floating dtype "
                            "(f32, f64, bf16 or f16)", op, i, lt_dtype_name((lt_dtype)in[i].dtype));
        dt = lt_promote_types(dt, (lt_dtype)in[i].dtype);
    }
    *out = dt;
    return LT_OK;
}

/* ---- conv2d ------------------------------------------------------------- */

static lt_status check_conv_args(const lt_meta *in, int nin, const lt_attrs *a)
{
    const lt_meta *x = &in[0], *w = &in[1];
    char sx[160], sw[160];
    if (nin != 2 && nin != 3)
        return lt_error(LT_ERR_ARGUMENT, "conv2d: %d inputs given, expected 2 (x, w) or 3 (x, w, bias)", nin);
    if (x->ndim != 4)
        return lt_error(LT_ERR_SHAPE, "conv2d: input x has shape %s, expected 4 dims [N, C, H, W] (or 3: [C, H, W])",
                        shape_of(x, sx, sizeof sx));
    if (w->ndim != 4)
        return lt_error(LT_ERR_SHAPE, "conv2d: weight has shape %s, expected 4 dims [O, C/groups, kH, kW]",
                        shape_of(w, sw, sizeof sw));
    lt_status st;
    if ((st = check_pair("conv2d", "stride", &a->i[0], 1)) != LT_OK ||
        (st = check_pair("conv2d", "padding", &a->i[2], 0)) != LT_OK ||
        (st = check_pair("conv2d", "dilation", &a->i[4], 1)) != LT_OK)
        return st;
    int64_t groups = a->i[6];
    if (groups < 1)
        return lt_error(LT_ERR_ARGUMENT, "conv2d: groups is %lld, expected >= 1", (long long)groups);
    int64_t c = x->shape[1], o = w->shape[0];
    if (o < 1 || o % groups != 0)
        return lt_error(LT_ERR_SHAPE, "conv2d: weight %s has %lld output channels, expected a positive "
                        "multiple of groups = %lld", shape_of(w, sw, sizeof sw), (long long)o,
                        (long long)groups);
    if (c % groups != 0 || w->shape[1] != c / groups)
        return lt_error(LT_ERR_SHAPE, "conv2d: input %s has %lld channels but weight %s with groups = %lld "
                        "expects weight dim 1 times groups (%lld x %lld)", shape_of(x, sx, sizeof sx),
                        (long long)c, shape_of(w, sw, sizeof sw), (long long)groups,
                        (long long)w->shape[1], (long long)groups);
    if (w->shape[2] < 1 || w->shape[3] < 1)
        return lt_error(LT_ERR_SHAPE, "conv2d: weight %s has an empty kernel, expected kH, kW >= 1",
                        shape_of(w, sw, sizeof sw));
    if (nin == 3 && (in[2].ndim != 1 || in[2].shape[0] != o)) {
        char sbias[160];
        return lt_error(LT_ERR_SHAPE, "conv2d: bias has shape %s, expected [%lld] (weight %s)",
                        shape_of(&in[2], sbias, sizeof sbias), (long long)o, shape_of(w, sw, sizeof sw));
    }
    return LT_OK;
}

static lt_status infer_conv2d(lt_op op, const lt_meta *in, int nin, const lt_attrs *a, lt_meta *out)
{
    (void)op;
    lt_status st = check_conv_args(in, nin, a);
    if (st != LT_OK)
        return st;
    lt_dtype dt = LT_F32;
    if ((st = floating_dtype("conv2d", in, nin, &dt)) != LT_OK)
        return st;
    const lt_meta *x = &in[0], *w = &in[1];
    int64_t ho = window_out_size(x->shape[2], a->i[2], a->i[4], w->shape[2], a->i[0]);
    int64_t wo = window_out_size(x->shape[3], a->i[3], a->i[5], w->shape[3], a->i[1]);
    if (ho < 1 || wo < 1) {
        char sx[160], sw[160];
        return lt_error(LT_ERR_SHAPE,
                        "conv2d: padded input (%lld x %lld) of input %s is smaller than the dilated kernel "
                        "of weight %s (kernel %lld x %lld, dilation %lld x %lld)",
                        (long long)(x->shape[2] + 2 * a->i[2]), (long long)(x->shape[3] + 2 * a->i[3]),
                        shape_of(x, sx, sizeof sx), shape_of(w, sw, sizeof sw), (long long)w->shape[2],
                        (long long)w->shape[3], (long long)a->i[4], (long long)a->i[5]);
    }
    int64_t shape[4] = {x->shape[0], w->shape[0], ho, wo};
    out[0] = lt_meta_make(dt, shape, 4);
    return LT_OK;
}

/* The rules of conv2d's gradients: conv2d of x and w (rebuilt from the
 * gradient op's operands) must be valid and give gy's shape; out receives
 * `result` (x's or w's meta) in the promoted floating dtype. */
static lt_status check_conv_grad(const char *name, const lt_meta *x, const lt_meta *w, const lt_meta *gy,
                                 const lt_meta *in, const lt_attrs *a, const lt_meta *result, lt_meta *out)
{
    lt_meta fwd_in[2] = {*x, *w}, y;
    lt_status st = infer_conv2d(LT_OP_CONV2D, fwd_in, 2, a, &y);
    if (st != LT_OK)
        return st;
    if (y.shape[1] != gy->shape[1] || y.shape[2] != gy->shape[2] || y.shape[3] != gy->shape[3]) {
        char sg[160], sy[160];
        return lt_error(LT_ERR_SHAPE, "%s: grad %s, expected the conv2d output shape %s", name,
                        shape_of(gy, sg, sizeof sg), shape_of(&y, sy, sizeof sy));
    }
    lt_dtype dt = LT_F32;
    if ((st = floating_dtype(name, in, 2, &dt)) != LT_OK)
        return st;
    out[0] = lt_meta_make(dt, result->shape, 4);
    return LT_OK;
}

/* conv2d's weight gradient from x [N, C, H, W] and the output's gradient
 * gy [N, O, Ho, Wo]: the weight's shape [O, C/groups, kH, kW]. */
static lt_status infer_conv2d_weight_grad(lt_op op, const lt_meta *in, int nin, const lt_attrs *a, lt_meta *out)
{
    (void)op;
    const lt_meta *x = &in[0], *gy = &in[1];
    char sx[160], sg[160];
    if (nin != 2 || x->ndim != 4 || gy->ndim != 4 || gy->shape[0] != x->shape[0])
        return lt_error(LT_ERR_SHAPE, "conv2d_weight_grad: x %s and grad %s, expected [N, C, H, W] and "
                        "[N, O, Ho, Wo]", shape_of(x, sx, sizeof sx), shape_of(gy, sg, sizeof sg));
    int64_t groups = a->i[6];
    lt_meta w = lt_meta_make((lt_dtype)x->dtype, (int64_t[]){gy->shape[1], groups > 0 ? x->shape[1] / groups : 0,
                                                            a->i[7], a->i[8]}, 4);
    return check_conv_grad("conv2d_weight_grad", x, &w, gy, in, a, &w, out);
}

/* conv2d's input gradient from the output's gradient gy [N, O, Ho, Wo] and
 * the weight w [O, C/groups, kH, kW]: x's shape [N, C, H, W] (H, W from the
 * attributes: several input sizes give one output size). */
static lt_status infer_conv2d_input_grad(lt_op op, const lt_meta *in, int nin, const lt_attrs *a, lt_meta *out)
{
    (void)op;
    const lt_meta *gy = &in[0], *w = &in[1];
    char sg[160], sw[160];
    if (nin != 2 || gy->ndim != 4 || w->ndim != 4)
        return lt_error(LT_ERR_SHAPE, "conv2d_input_grad: grad %s and weight %s, expected [N, O, Ho, Wo] and "
                        "[O, C/groups, kH, kW]", shape_of(gy, sg, sizeof sg), shape_of(w, sw, sizeof sw));
    lt_meta x = lt_meta_make((lt_dtype)gy->dtype, (int64_t[]){gy->shape[0], w->shape[1] * a->i[6], a->i[7], a->i[8]}, 4);
    return check_conv_grad("conv2d_input_grad", &x, w, gy, in, a, &x, out);
}

/* ---- pooling ------------------------------------------------------------ */

static lt_status infer_pool2d(lt_op op, const lt_meta *in, int nin, const lt_attrs *a, lt_meta *out)
{
    (void)nin;
    const char *name = lt_op_name(op);
    const lt_meta *x = &in[0];
    char sx[160];
    if (x->ndim != 4 || x->shape[1] < 1 || x->shape[2] < 1 || x->shape[3] < 1)
        return lt_error(LT_ERR_SHAPE, "%s: input has shape %s, expected 4 dims [N, C, H, W] (or 3: "
                        "[C, H, W]) with C, H, W >= 1", name, shape_of(x, sx, sizeof sx));
    lt_status st;
    if ((st = check_pair(name, "kernel", &a->i[0], 1)) != LT_OK ||
        (st = check_pair(name, "stride", &a->i[2], 1)) != LT_OK ||
        (st = check_pair(name, "padding", &a->i[4], 0)) != LT_OK)
        return st;
    for (int k = 0; k < 2; k++) {
        if (a->i[4 + k] > a->i[k] / 2)
            return lt_error(LT_ERR_ARGUMENT, "%s: padding (%lld, %lld) must be at most half of the kernel "
                            "(%lld, %lld)", name, (long long)a->i[4], (long long)a->i[5],
                            (long long)a->i[0], (long long)a->i[1]);
    }
    lt_dtype dt = LT_F32;
    if ((st = floating_dtype(name, in, 1, &dt)) != LT_OK)
        return st;
    int64_t ho = window_out_size(x->shape[2], a->i[4], 1, a->i[0], a->i[2]);
    int64_t wo = window_out_size(x->shape[3], a->i[5], 1, a->i[1], a->i[3]);
    if (ho < 1 || wo < 1)
        return lt_error(LT_ERR_SHAPE, "%s: kernel (%lld, %lld) is larger than the padded input (%lld x %lld) "
                        "of input %s", name, (long long)a->i[0], (long long)a->i[1],
                        (long long)(x->shape[2] + 2 * a->i[4]), (long long)(x->shape[3] + 2 * a->i[5]),
                        shape_of(x, sx, sizeof sx));
    int64_t shape[4] = {x->shape[0], x->shape[1], ho, wo};
    out[0] = lt_meta_make(dt, shape, 4);
    if (op == LT_OP_MAX_POOL2D)
        out[1] = lt_meta_make(LT_I64, shape, 4);
    return LT_OK;
}

void lt_infer_register_nn(void)
{
    lt_op_set_infer(LT_OP_MATMUL, infer_matmul);
    lt_op_set_infer(LT_OP_CONV2D, infer_conv2d);
    lt_op_set_infer(LT_OP_CONV2D_WEIGHT_GRAD, infer_conv2d_weight_grad);
    lt_op_set_infer(LT_OP_CONV2D_INPUT_GRAD, infer_conv2d_input_grad);
    lt_op_set_infer(LT_OP_MAX_POOL2D, infer_pool2d);
    lt_op_set_infer(LT_OP_AVG_POOL2D, infer_pool2d);
}
