/*
 * scan.c - CPU kernels of the scans beyond cumsum/softmax: cumprod,
 * cummax/cummin (values and i64 indices), logcumsumexp, and cumprod_grad
 * (the exact gradient of cumprod, zeros included).
 *
 * Each kernel converts its input to a contiguous tensor of its compute
 * dtype (f64 for floating inputs, i64 for integer and bool ones), walks
 * every line along the scanned dim (a line of `len` elements `stride`
 * apart), and copies its result, converted, into the output. Semantics are
 * PyTorch's:
 *  - cumprod accumulates floats in double (as torch's CPU kernel does for
 *    f32) and integers in wrapping 64-bit arithmetic;
 *  - cummax/cummin take a later element when it is >= (<=) the running
 *    extremum, so ties give the last index; a NaN always replaces the
 *    running value and nothing replaces a NaN (each new NaN's index wins);
 *  - logcumsumexp adds log1p(exp(min - max)) + max, and keeps x where both
 *    operands are the same infinity.
 */
#include "eager/lines.h"

#include <math.h>

/* ---- walking lines -------------------------------------------------------- */

static int64_t n_lines(line_walk w) { return w.outer * w.stride; }

/* Offset (in elements) of the first element of line l. */
static int64_t line_start(line_walk w, int64_t l) { return l / w.stride * w.len * w.stride + l % w.stride; }

/* ---- the scans, one line at a time --------------------------------------- */

static void cumprod_f64(const double *x, double *y, line_walk w)
{
    for (int64_t l = 0; l < n_lines(w); l++) {
        int64_t off = line_start(w, l);
        double p = 1;
        for (int64_t i = 0; i < w.len; i++) {
            p *= x[off + i * w.stride];
            y[off + i * w.stride] = p;
        }
    }
}

static void cumprod_i64(const int64_t *x, int64_t *y, line_walk w)
{
    for (int64_t l = 0; l < n_lines(w); l++) {
        int64_t off = line_start(w, l);
        uint64_t p = 1; /* wraps like torch's int64 product */
        for (int64_t i = 0; i < w.len; i++) {
            p *= (uint64_t)x[off + i * w.stride];
            y[off + i * w.stride] = (int64_t)p;
        }
    }
}

/* cummax (want_max) / cummin over doubles, NaN-aware as torch. */
static void cumext_f64(const double *x, double *y, int64_t *idx, line_walk w, bool want_max)
{
    for (int64_t l = 0; l < n_lines(w); l++) {
        int64_t off = line_start(w, l);
        double best = 0;
        int64_t at = 0;
        for (int64_t i = 0; i < w.len; i++) {
            double v = x[off + i * w.stride];
            bool take = i == 0 || isnan(v) || (!isnan(best) && (want_max ? v >= best : v <= best));
            if (take) {
                best = v;
                at = i;
            }
            y[off + i * w.stride] = best;
            idx[off + i * w.stride] = at;
        }
    }
}

static void cumext_i64(const int64_t *x, int64_t *y, int64_t *idx, line_walk w, bool want_max)
{
    for (int64_t l = 0; l < n_lines(w); l++) {
        int64_t off = line_start(w, l);
        int64_t best = 0, at = 0;
        for (int64_t i = 0; i < w.len; i++) {
            int64_t v = x[off + i * w.stride];
            if (i == 0 || (want_max ? v >= best : v <= best)) {
                best = v;
                at = i;
            }
            y[off + i * w.stride] = best;
            idx[off + i * w.stride] = at;
        }
    }
}

/* log(exp(x) + exp(acc)) as torch's log_add_exp_helper(x, acc). */
static double log_add_exp(double x, double acc)
{
    double lo = isnan(acc) ? acc : fmin(x, acc), hi = isnan(acc) ? acc : fmax(x, acc);
    if (isnan(x))
        lo = hi = x;
    if (lo != hi || isfinite(lo))
        return log1p(exp(lo - hi)) + hi;
    return x; /* both the same infinity */
}

static void logcumsumexp_f64(const double *x, double *y, line_walk w)
{
    for (int64_t l = 0; l < n_lines(w); l++) {
        int64_t off = line_start(w, l);
        double acc = -INFINITY;
        for (int64_t i = 0; i < w.len; i++) {
            acc = log_add_exp(x[off + i * w.stride], acc);
            y[off + i * w.stride] = acc;
        }
    }
}

/*
 * The gradient of y = cumprod(x) given g = dL/dy, per line: with z the
 * first zero of x (len if none),
 *   k <  z: (sum_{i=k}^{z-1} g_i y_i) / x_k   (y_i = 0 for i >= z)
 *   k == z: sum_{i>=z} g_i prod_{j<=i, j!=z} x_j
 *   k >  z: 0                                  (every product holds x_z)
 */
static void cumprod_grad_f64(const double *x, const double *g, double *out, line_walk w)
{
    for (int64_t l = 0; l < n_lines(w); l++) {
        int64_t off = line_start(w, l);
        int64_t s = w.stride, z = w.len;
        double p = 1; /* prod of x_0 .. x_{z-1} */
        for (int64_t i = 0; i < w.len && z == w.len; i++) {
            if (x[off + i * s] == 0)
                z = i;
            else
                p *= x[off + i * s];
        }
        double tail = 0, run = p; /* tail: sum_{i=k}^{z-1} g_i y_i; run: y_k */
        for (int64_t k = z - 1; k >= 0; k--) {
            tail += g[off + k * s] * run;
            out[off + k * s] = tail / x[off + k * s];
            run /= x[off + k * s];
        }
        if (z < w.len) {
            double q = p, sum = g[off + z * s] * p;
            for (int64_t i = z + 1; i < w.len; i++) {
                q *= x[off + i * s];
                sum += g[off + i * s] * q;
            }
            out[off + z * s] = sum;
            for (int64_t k = z + 1; k < w.len; k++)
                out[off + k * s] = 0;
        }
    }
}

/* ---- the kernel ------------------------------------------------------------ */

/* A contiguous buffer of t's shape in dtype dt on t's device. */
static lt_tensor *buffer_like(const lt_tensor *t, lt_dtype dt, const char *name)
{
    lt_meta m = lt_tensor_meta(t);
    m.dtype = (int32_t)dt;
    m.weak = 0;
    return lt_tensor_alloc(&m, t->device, name);
}

static void run_scan(lt_op op, lt_tensor *x, lt_tensor *x2, lt_tensor *y, lt_tensor *idx, line_walk w)
{
    void *xp = lt_tensor_ptr(x), *yp = lt_tensor_ptr(y);
    bool f64 = x->dtype == LT_F64;
    switch (op) {
    case LT_OP_CUMPROD:
        if (f64)
            cumprod_f64(xp, yp, w);
        else
            cumprod_i64(xp, yp, w);
        break;
    case LT_OP_CUMMAX:
    case LT_OP_CUMMIN:
        if (f64)
            cumext_f64(xp, yp, (void *)lt_tensor_ptr(idx), w, op == LT_OP_CUMMAX);
        else
            cumext_i64(xp, yp, (void *)lt_tensor_ptr(idx), w, op == LT_OP_CUMMAX);
        break;
    case LT_OP_LOGCUMSUMEXP:
        logcumsumexp_f64(xp, yp, w);
        break;
    default: /* LT_OP_CUMPROD_GRAD */
        cumprod_grad_f64(xp, (void *)lt_tensor_ptr(x2), yp, w);
        break;
    }
}

static lt_status k_scan_ext(lt_op op, lt_tensor *const *in, int nin, const lt_attrs *a, const lt_meta *om,
                            lt_tensor **out)
{
    (void)om;
    const char *name = lt_op_name(op);
    lt_dtype cdt = lt_dtype_is_floating((lt_dtype)in[0]->dtype) ? LT_F64 : LT_I64;
    int ndim = in[0]->ndim;
    int d = ndim == 0 ? 0 : (int)(a->i[0] < 0 ? a->i[0] + ndim : a->i[0]);
    lt_tensor *x = lt_eager_as_contiguous(in[0], cdt, name);
    lt_tensor *x2 = x && nin > 1 ? lt_eager_as_contiguous(in[1], cdt, name) : NULL;
    lt_tensor *y = x ? buffer_like(x, cdt, name) : NULL;
    bool two = op == LT_OP_CUMMAX || op == LT_OP_CUMMIN;
    lt_tensor *idx = two && y ? buffer_like(x, LT_I64, name) : NULL;
    lt_status st = LT_OK;
    if (!x || !y || (nin > 1 && !x2) || (two && !idx)) {
        st = lt_last_status();
    } else {
        line_walk w = lines_of(x, d);
        if (w.outer * w.len * w.stride > 0)
            run_scan(op, x, x2, y, idx, w);
        lt_eager_copy(out[0], y);
        if (two && out[1])
            lt_eager_copy(out[1], idx);
    }
    lt_tensor *tmp[] = {x, x2, y, idx};
    for (int k = 0; k < 4; k++)
        if (tmp[k])
            lt_tensor_unref(tmp[k]);
    return st;
}

void lt_eager_register_scan(void)
{
    const lt_op ops[] = {LT_OP_CUMPROD, LT_OP_CUMMAX, LT_OP_CUMMIN, LT_OP_LOGCUMSUMEXP, LT_OP_CUMPROD_GRAD};
    for (size_t k = 0; k < sizeof ops / sizeof ops[0]; k++)
        lt_eager_set_kernel(ops[k], k_scan_ext);
}
