/*
 * api_resample.c - adaptive pooling and interpolation, as compositions of
 * narrow, sum / max, cat and index_select:
 *
 *   adaptive pooling  output cell i of a dim of size n -> m covers
 *                     [floor(i*n/m), ceil((i+1)*n/m)). The dims are pooled
 *                     one after the other (the last first): a sum per
 *                     cell, divided once by the cells' areas; for max, the
 *                     row maximum of each cell row, then the maximum of
 *                     those, whose position is the first maximum in row-
 *                     major order, as torch reports it.
 *   interpolate       nearest: an index_select per dim with torch's source
 *                     index; (bi)linear: per dim, two index_selects mixed
 *                     with the weights 1 - l and l, the last dim first, so
 *                     that the sum has torch's association.
 *
 * The source positions and weights depend on the sizes only: they are
 * computed on the host in torch's precision (float for f32), and the ops
 * are traced and lowered on the lazy device and differentiable.
 */
#include "api/api.h"
#include "api/compose.h"

#include <math.h>
#include <stdlib.h>

/* x: floating, nsp + 1 or nsp + 2 dims, sizes after the batch not 0. */
static lt_status check_input(const char *name, lt_tensor *x, int nsp, bool need_batch)
{
    char sx[160];
    if (lt_check_tensor(name, x, 0) != LT_OK)
        return lt_last_status();
    bool ok = x->ndim == nsp + 2 || (!need_batch && x->ndim == nsp + 1);
    for (int i = x->ndim - nsp; ok && i < x->ndim; i++)
        ok = x->shape[i] > 0;
    if (!ok)
        return lt_error(LT_ERR_SHAPE, "%s: input has shape %s, expected %d dims [N, C, %s]%s with non-zero "
                        "spatial sizes", name, lt_shape_str(x->shape, x->ndim, sx, sizeof sx), nsp + 2,
                        nsp == 1 ? "L" : "H, W", need_batch ? "" : " (or without N)");
    if (!lt_dtype_is_floating(x->dtype))
        return lt_error(LT_ERR_DTYPE, "%s: input dtype %s, expected a floating dtype", name, lt_dtype_name(x->dtype));
    return LT_OK;
}

static lt_status check_sizes(const char *name, const int64_t *size, int n)
{
    if (!size)
        return lt_error(LT_ERR_NULL, "%s: output size is NULL, expected %d values", name, n);
    for (int i = 0; i < n; i++)
        if (size[i] < 1)
            return lt_error(LT_ERR_ARGUMENT, "%s: output size %lld, expected >= 1", name, (long long)size[i]);
    return LT_OK;
}

/* ---- adaptive pooling --------------------------------------------------------------- */

static int64_t cell_start(int64_t i, int64_t n, int64_t m) { return i * n / m; }
static int64_t cell_end(int64_t i, int64_t n, int64_t m) { return ((i + 1) * n + m - 1) / m; }

/* Sum (or, with pos, max and its position) of each cell of dim d into
 * m cells, concatenated along d. *pos: i64 positions along d. */
static lt_tensor *pool_cells(lt_tensor *x, int d, int64_t m, bool is_max, lt_tensor **pos)
{
    int64_t n = x->shape[d];
    lt_tensor *parts[64] = {NULL}, **cells = m <= 64 ? parts : malloc(sizeof(lt_tensor *) * (size_t)m);
    lt_tensor *pparts[64] = {NULL}, **where = m <= 64 ? pparts : malloc(sizeof(lt_tensor *) * (size_t)m);
    if (!cells || !where) {
        if (cells != parts)
            free(cells);
        if (where != pparts)
            free(where);
        lt_error(LT_ERR_MEMORY, "adaptive pooling: out of memory for %lld cells", (long long)m);
        return NULL;
    }
    for (int64_t i = 0; i < m; i++) {
        int64_t lo = cell_start(i, n, m);
        lt_tensor *cell = lt_narrow(x, d, lo, cell_end(i, n, m) - lo);
        if (is_max) {
            lt_tensor *at = NULL;
            cells[i] = lt_max_dim(cell, d, true, &at);
            where[i] = lt_add_iscalar(at, lo);
        } else {
            cells[i] = lt_sum(cell, &d, 1, true);
        }
    }
    lt_tensor *r = lt_cat(cells, (int)m, d);
    if (is_max)
        *pos = lt_cat(where, (int)m, d);
    if (cells != parts)
        free(cells);
    if (where != pparts)
        free(where);
    return r;
}

/* [m0, m1] (m0 = 1 for 1-D) of x's dtype: the area of each cell. */
static lt_tensor *cell_areas(int64_t n0, int64_t m0, int64_t n1, int64_t m1, lt_tensor *x)
{
    double *area = malloc(sizeof(double) * (size_t)(m0 * m1));
    if (!area) {
        lt_error(LT_ERR_MEMORY, "adaptive_avg_pool: out of memory");
        return NULL;
    }
    for (int64_t i = 0; i < m0; i++)
        for (int64_t j = 0; j < m1; j++)
            area[i * m1 + j] = (double)((cell_end(i, n0, m0) - cell_start(i, n0, m0)) *
                                        (cell_end(j, n1, m1) - cell_start(j, n1, m1)));
    int64_t dims[2] = {m0, m1};
    lt_tensor *r = lt_to_dtype(lt_from_data(area, dims, 2, LT_F64, x->device), x->dtype);
    free(area);
    return r;
}

lt_tensor *lt_adaptive_avg_pool2d(lt_tensor *x, const int64_t *output_size)
{
    if (check_input("adaptive_avg_pool2d", x, 2, false) != LT_OK ||
        check_sizes("adaptive_avg_pool2d", output_size, 2) != LT_OK)
        return NULL;
    lt_scope_begin();
    int h = x->ndim - 2, w = x->ndim - 1;
    lt_tensor *sums = pool_cells(pool_cells(x, w, output_size[1], false, NULL), h, output_size[0], false, NULL);
    lt_tensor *areas = cell_areas(x->shape[h], output_size[0], x->shape[w], output_size[1], x);
    return lt_scope_return(lt_div(sums, areas));
}

lt_tensor *lt_adaptive_avg_pool1d(lt_tensor *x, int64_t output_size)
{
    if (check_input("adaptive_avg_pool1d", x, 1, false) != LT_OK ||
        check_sizes("adaptive_avg_pool1d", &output_size, 1) != LT_OK)
        return NULL;
    lt_scope_begin();
    int d = x->ndim - 1;
    lt_tensor *sums = pool_cells(x, d, output_size, false, NULL);
    lt_tensor *areas = lt_squeeze(cell_areas(1, 1, x->shape[d], output_size, x), 0);
    return lt_scope_return(lt_div(sums, areas));
}

lt_tensor *lt_adaptive_max_pool1d(lt_tensor *x, int64_t output_size, lt_tensor **indices)
{
    if (indices)
        *indices = NULL;
    if (check_input("adaptive_max_pool1d", x, 1, false) != LT_OK ||
        check_sizes("adaptive_max_pool1d", &output_size, 1) != LT_OK)
        return NULL;
    lt_scope_begin();
    lt_tensor *pos = NULL;
    lt_tensor *y = pool_cells(x, x->ndim - 1, output_size, true, &pos);
    if (indices)
        *indices = pos;
    return lt_scope_return2(y, indices);
}

lt_tensor *lt_adaptive_max_pool2d(lt_tensor *x, const int64_t *output_size, lt_tensor **indices)
{
    if (indices)
        *indices = NULL;
    if (check_input("adaptive_max_pool2d", x, 2, false) != LT_OK ||
        check_sizes("adaptive_max_pool2d", output_size, 2) != LT_OK)
        return NULL;
    lt_scope_begin();
    int h = x->ndim - 2, w = x->ndim - 1;
    lt_tensor *col = NULL, *row = NULL;
    lt_tensor *rows = pool_cells(x, w, output_size[1], true, &col); /* [.., H, Wo] */
    lt_tensor *y = pool_cells(rows, h, output_size[0], true, &row);  /* [.., Ho, Wo] */
    if (indices && y) {
        /* the column of the winning row's maximum, from the row pass */
        int64_t n = x->shape[h], m = output_size[0];
        lt_tensor *parts[64] = {NULL}, **cols = m <= 64 ? parts : malloc(sizeof(lt_tensor *) * (size_t)m);
        if (!cols) {
            lt_error(LT_ERR_MEMORY, "adaptive_max_pool2d: out of memory");
            lt_scope_end();
            return NULL;
        }
        for (int64_t i = 0; i < m; i++) {
            int64_t lo = cell_start(i, n, m);
            lt_tensor *at = lt_sub_iscalar(lt_narrow(row, h, i, 1), lo);
            cols[i] = lt_gather(lt_narrow(col, h, lo, cell_end(i, n, m) - lo), h, at);
        }
        lt_tensor *winner_col = lt_cat(cols, (int)m, h);
        if (cols != parts)
            free(cols);
        *indices = lt_add(lt_mul_iscalar(row, x->shape[w]), winner_col);
    }
    return lt_scope_return2(y, indices);
}

/* ---- interpolate -------------------------------------------------------------------- */

/* torch's scale of one dim: given scale factor s > 0: 1 / s, else n / m. */
static double dim_scale(int64_t n, int64_t m, double s, bool single)
{
    if (s > 0)
        return single ? (double)(float)(1.0 / s) : 1.0 / s;
    return single ? (double)((float)n / (float)m) : (double)n / (double)m;
}

/* Nearest: source index min(floor(o * scale), n - 1) in torch's float. */
static int64_t nearest_source(int64_t o, int64_t n, int64_t m, double s)
{
    if (m == n)
        return o;
    if (m == 2 * n)
        return o >> 1;
    float scale = (float)dim_scale(n, m, s, true);
    int64_t i = (int64_t)floorf((float)o * scale);
    return i < n - 1 ? i : n - 1;
}

/* Linear: the two source indices and the weight of the second. */
typedef struct lin_tap {
    int64_t i0, i1;
    double l1;
} lin_tap;

static lin_tap linear_source(int64_t o, int64_t n, int64_t m, double s, bool align, bool single)
{
    lin_tap t = {o, o, 0.0};
    if (m == n)
        return t;
    double scale = align ? (m > 1 ? (single ? (double)((float)(n - 1) / (float)(m - 1)) : (double)(n - 1) / (double)(m - 1)) : 0.0)
                         : dim_scale(n, m, s, single);
    double src;
    if (single) {
        float f = align ? (float)scale * (float)o : (float)scale * ((float)o + 0.5f) - 0.5f;
        src = (double)(f < 0 && !align ? 0.0f : f);
    } else {
        src = align ? scale * (double)o : scale * ((double)o + 0.5) - 0.5;
        if (!align && src < 0)
            src = 0;
    }
    t.i0 = (int64_t)src;
    t.i1 = t.i0 + (t.i0 < n - 1 ? 1 : 0);
    t.l1 = single ? (double)((float)src - (float)t.i0) : src - (double)t.i0;
    return t;
}

/* A 1-D i64 tensor of n values from a host array, on dev. */
static lt_tensor *host_i64(const int64_t *v, int64_t n, lt_device dev) { return lt_from_data(v, &n, 1, LT_I64, dev); }

/* The weights [m] (or [m, 1] when d is not the last dim) of x's dtype. */
static lt_tensor *weights_along(const double *v, int64_t m, int d, lt_tensor *x)
{
    int64_t dims[2] = {m, 1};
    lt_tensor *t = lt_from_data(v, dims, d == x->ndim - 1 ? 1 : 2, LT_F64, x->device);
    return lt_to_dtype(t, x->dtype);
}

/* x resampled along dim d from n to m positions. */
static lt_tensor *resample_dim(lt_tensor *x, int d, int64_t m, double s, int mode, bool align)
{
    int64_t n = x->shape[d];
    bool single = x->dtype != LT_F64;
    int64_t *i0 = malloc(sizeof(int64_t) * (size_t)m * 2);
    double *w = malloc(sizeof(double) * (size_t)m * 2);
    if (!i0 || !w) {
        free(i0), free(w);
        lt_error(LT_ERR_MEMORY, "interpolate: out of memory");
        return NULL;
    }
    int64_t *i1 = i0 + m;
    for (int64_t o = 0; o < m; o++) {
        if (mode == LT_INTERP_NEAREST) {
            i0[o] = nearest_source(o, n, m, s);
            continue;
        }
        lin_tap t = linear_source(o, n, m, s, align, single);
        i0[o] = t.i0, i1[o] = t.i1, w[o] = single ? (double)(1.0f - (float)t.l1) : 1.0 - t.l1, w[m + o] = t.l1;
    }
    lt_tensor *r = lt_index_select(x, d, host_i64(i0, m, x->device));
    if (mode != LT_INTERP_NEAREST) {
        lt_tensor *b = lt_index_select(x, d, host_i64(i1, m, x->device));
        r = lt_add(lt_mul(r, weights_along(w, m, d, x)), lt_mul(b, weights_along(w + m, m, d, x)));
    }
    free(i0), free(w);
    return r;
}

static const char *mode_name(int mode)
{
    return mode == LT_INTERP_NEAREST ? "nearest" : mode == LT_INTERP_LINEAR ? "linear" : "bilinear";
}

/* Mode, rank and align_corners agree; size xor scale_factor given. */
static lt_status check_interp(lt_tensor *x, const int64_t *size, const double *scale_factor, int mode, bool align)
{
    if (mode < LT_INTERP_NEAREST || mode > LT_INTERP_BILINEAR)
        return lt_error(LT_ERR_ARGUMENT, "interpolate: mode %d, expected LT_INTERP_NEAREST, _LINEAR or _BILINEAR",
                        mode);
    int nsp = mode == LT_INTERP_LINEAR ? 1 : mode == LT_INTERP_BILINEAR ? 2 : x && x->ndim == 3 ? 1 : 2;
    if (check_input("interpolate", x, nsp, true) != LT_OK)
        return lt_last_status();
    if (align && mode == LT_INTERP_NEAREST)
        return lt_error(LT_ERR_ARGUMENT, "interpolate: align_corners applies to the linear modes only, not nearest");
    if (!size == !scale_factor)
        return lt_error(LT_ERR_ARGUMENT, "interpolate: expected either a size or a scale factor (%s given)",
                        size ? "both" : "neither");
    for (int i = 0; i < nsp; i++) {
        double out = size ? (double)size[i] : floor((double)x->shape[2 + i] * scale_factor[i]);
        if (!(out >= 1) || (scale_factor && !(scale_factor[i] > 0)))
            return lt_error(LT_ERR_ARGUMENT, "interpolate (%s): output size %g for input size %lld, expected >= 1 "
                            "(and a positive scale factor)", mode_name(mode), out, (long long)x->shape[2 + i]);
    }
    return LT_OK;
}

lt_tensor *lt_interpolate(lt_tensor *x, const int64_t *size, const double *scale_factor, int mode,
                          bool align_corners)
{
    if (check_interp(x, size, scale_factor, mode, align_corners) != LT_OK)
        return NULL;
    int nsp = x->ndim - 2;
    lt_scope_begin();
    lt_tensor *r = x;
    for (int i = nsp - 1; i >= 0 && r; i--) { /* the last dim first */
        int64_t m = size ? size[i] : (int64_t)floor((double)x->shape[2 + i] * scale_factor[i]);
        r = resample_dim(r, 2 + i, m, scale_factor ? scale_factor[i] : 0.0, mode, align_corners);
    }
    return lt_scope_return(r);
}
