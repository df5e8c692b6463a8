/*
 * quantile.c - CPU kernels of quantile (torch.quantile / nanquantile along
 * one dim) and of its gradient, quantile_grad.
 *
 * Per line, as PyTorch computes it: sort the values (NaN last; equal
 * values in index order), rank = q * (n - 1) in the input's precision,
 * where n counts the non-NaN values for nanquantile (rank 0 if there is
 * none), and a line holding a NaN takes rank n - 1 (a NaN) for quantile.
 * The interpolation mode then picks positions below/above the rank and a
 * weight: linear (rank - floor), lower (floor), higher (ceil), nearest
 * (round half to even) or midpoint (weight 0.5). The value is torch's lerp
 * of the two sorted values; the gradient sends (1 - w) g and w g to the
 * elements at those two positions.
 */
#include "eager/lines.h"

#include <math.h>
#include <stdlib.h>

enum { Q_LINEAR, Q_LOWER, Q_HIGHER, Q_NEAREST, Q_MIDPOINT };

/* Where one line's quantile comes from: sorted positions and the weight
 * of the upper one. */
typedef struct qpick {
    int64_t below, above;
    double w;
} qpick;

static qpick pick_positions(const pair_f64 *p, int64_t n, double q, int mode, bool ignore_nan, bool single)
{
    int64_t valid = n;
    while (valid > 0 && isnan(p[valid - 1].v))
        valid--;
    double rank;
    if (ignore_nan)
        rank = single ? (double)((float)q * (float)(valid - 1)) : q * (double)(valid - 1);
    else
        rank = valid < n ? (double)(n - 1) : single ? (double)((float)q * (float)(n - 1)) : q * (double)(n - 1);
    if (rank < 0)
        rank = 0;
    if (mode == Q_LOWER)
        rank = floor(rank);
    else if (mode == Q_HIGHER)
        rank = ceil(rank);
    else if (mode == Q_NEAREST)
        rank = nearbyint(rank); /* half to even, as torch's round */
    qpick k = {(int64_t)rank, (int64_t)ceil(rank), 0};
    if (mode == Q_LINEAR)
        k.w = single ? (double)((float)rank - (float)k.below) : rank - (double)k.below;
    else if (mode == Q_MIDPOINT)
        k.w = 0.5;
    return k;
}

/* torch's lerp, in float when single. */
static double lerp(double lo, double hi, double w, bool single)
{
    if (single) {
        float a = (float)lo, b = (float)hi, fw = (float)w, d = b - a;
        return fw < 0.5f ? a + fw * d : b - d * (1.0f - fw);
    }
    double d = hi - lo;
    return w < 0.5 ? lo + w * d : hi - d * (1.0 - w);
}

typedef struct qjob {
    const double *x, *g; /* g: quantile_grad only, one per line */
    double *y;           /* quantile: one per line; quantile_grad: x's shape */
    int64_t outer, len, stride;
    double q;
    int mode;
    bool ignore_nan, single, grad;
} qjob;

static lt_status run_lines(const qjob *j, const char *name)
{
    pair_f64 *p = malloc(sizeof *p * (size_t)j->len);
    if (!p)
        return lt_error(LT_ERR_MEMORY, "%s: out of memory for a line of %lld elements", name, (long long)j->len);
    for (int64_t l = 0; l < j->outer * j->stride; l++) {
        int64_t off = l / j->stride * j->len * j->stride + l % j->stride;
        for (int64_t i = 0; i < j->len; i++)
            p[i] = (pair_f64){j->x[off + i * j->stride], i};
        qsort(p, (size_t)j->len, sizeof *p, cmp_pair_f64);
        qpick k = pick_positions(p, j->len, j->q, j->mode, j->ignore_nan, j->single);
        if (!j->grad) {
            j->y[l] = k.below == k.above ? p[k.below].v : lerp(p[k.below].v, p[k.above].v, k.w, j->single);
            continue;
        }
        for (int64_t i = 0; i < j->len; i++)
            j->y[off + i * j->stride] = 0;
        double g = j->g[l];
        if (k.below == k.above) {
            j->y[off + p[k.below].i * j->stride] = g;
        } else {
            j->y[off + p[k.below].i * j->stride] = g * (1 - k.w);
            j->y[off + p[k.above].i * j->stride] = g * k.w;
        }
    }
    free(p);
    return LT_OK;
}

static lt_status k_quantile(lt_op op, lt_tensor *const *in, int nin, const lt_attrs *a, const lt_meta *om,
                            lt_tensor **out)
{
    const char *name = lt_op_name(op);
    int ndim = in[0]->ndim;
    int d = ndim == 0 ? 0 : (int)(a->i[0] < 0 ? a->i[0] + ndim : a->i[0]);
    lt_tensor *x = lt_eager_as_contiguous(in[0], LT_F64, name);
    lt_tensor *g = x && nin > 1 ? lt_eager_as_contiguous(in[1], LT_F64, name) : NULL;
    lt_meta m = om[0];
    m.dtype = LT_F64;
    m.weak = 0;
    lt_tensor *y = x && (nin < 2 || g) ? lt_tensor_alloc(&m, in[0]->device, name) : NULL;
    lt_status st = y ? LT_OK : lt_last_status();
    if (st == LT_OK) {
        qjob j = {(const double *)(void *)lt_tensor_ptr(x), g ? (const double *)(void *)lt_tensor_ptr(g) : NULL,
                  (double *)(void *)lt_tensor_ptr(y), 1, 1, 1, a->f[0], (int)a->i[1], (a->flag & 2) != 0,
                  in[0]->dtype == LT_F32, op == LT_OP_QUANTILE_GRAD};
        for (int k = 0; k < ndim; k++) {
            if (k < d)
                j.outer *= x->shape[k];
            else if (k == d)
                j.len = x->shape[k];
            else
                j.stride *= x->shape[k];
        }
        if (j.outer * j.len * j.stride > 0)
            st = run_lines(&j, name);
        if (st == LT_OK)
            lt_eager_copy(out[0], y);
    }
    lt_tensor *tmp[] = {x, g, y};
    for (int k = 0; k < 3; k++)
        if (tmp[k])
            lt_tensor_unref(tmp[k]);
    return st;
}

void lt_eager_register_quantile(void)
{
    lt_eager_set_kernel(LT_OP_QUANTILE, k_quantile);
    lt_eager_set_kernel(LT_OP_QUANTILE_GRAD, k_quantile);
}
