/*
 * api_scan.c - the scans beyond cumsum: cumprod, cummax, cummin,
 * logcumsumexp (lazytensor.h), and cumprod's gradient (api.h, for
 * autograd); the selections kthvalue, median and mode. Each is one op of
 * ops.def with an eager kernel (scan.c, select.c); on the lazy device it
 * is traced, and the compiler runs it as a call into that kernel inside
 * the compiled program.
 */
#include "api/api.h"

#include <math.h>

/* Validates t and dim under the op's name and packs the dim. */
static lt_status scan_attrs(lt_op op, lt_tensor *t, int dim, lt_attrs *a)
{
    const char *name = lt_op_name(op);
    lt_status st = lt_check_tensor(name, t, 0);
    if (st != LT_OK)
        return st;
    int d;
    st = lt_normalize_dim(name, dim, t->ndim, &d);
    if (st != LT_OK)
        return st;
    a->i[0] = d;
    a->ni = 1;
    return LT_OK;
}

static lt_tensor *scan_call(lt_op op, lt_tensor *t, int dim, lt_tensor **indices)
{
    if (indices)
        *indices = NULL;
    lt_attrs a = lt_attrs_init();
    if (scan_attrs(op, t, dim, &a) != LT_OK)
        return NULL;
    lt_tensor *extra[1] = {NULL};
    lt_tensor *r = lt_call(op, &t, 1, &a, indices ? extra : NULL);
    if (indices && r)
        *indices = extra[0];
    return r;
}

lt_tensor *lt_cumprod(lt_tensor *t, int dim) { return scan_call(LT_OP_CUMPROD, t, dim, NULL); }
lt_tensor *lt_logcumsumexp(lt_tensor *t, int dim) { return scan_call(LT_OP_LOGCUMSUMEXP, t, dim, NULL); }

lt_tensor *lt_cummax(lt_tensor *t, int dim, lt_tensor **indices)
{
    return scan_call(LT_OP_CUMMAX, t, dim, indices);
}

lt_tensor *lt_cummin(lt_tensor *t, int dim, lt_tensor **indices)
{
    return scan_call(LT_OP_CUMMIN, t, dim, indices);
}

lt_tensor *lt_cumprod_grad(lt_tensor *x, lt_tensor *g, int dim)
{
    lt_attrs a = lt_attrs_init();
    if (scan_attrs(LT_OP_CUMPROD_GRAD, x, dim, &a) != LT_OK)
        return NULL;
    lt_tensor *in[2] = {x, g};
    return lt_call(LT_OP_CUMPROD_GRAD, in, 2, &a, NULL);
}

/* ---- selections along one dim (kthvalue, median, mode) ------------------- */

static lt_tensor *select_call(lt_op op, lt_tensor *t, int64_t k, int dim, bool keepdim, lt_tensor **indices)
{
    if (indices)
        *indices = NULL;
    const char *name = lt_op_name(op);
    if (lt_check_tensor(name, t, 0) != LT_OK)
        return NULL;
    int d;
    if (lt_normalize_dim(name, dim, t->ndim, &d) != LT_OK)
        return NULL;
    lt_attrs a = lt_attrs_init();
    if (op == LT_OP_KTHVALUE) {
        a.i[0] = k;
        a.i[1] = d;
        a.ni = 2;
    } else {
        a.i[0] = d;
        a.ni = 1;
    }
    a.flag = keepdim ? 1 : 0;
    lt_tensor *extra[1] = {NULL};
    lt_tensor *r = lt_call(op, &t, 1, &a, indices ? extra : NULL);
    if (indices && r)
        *indices = extra[0];
    return r;
}

lt_tensor *lt_kthvalue(lt_tensor *t, int64_t k, int dim, bool keepdim, lt_tensor **indices)
{
    return select_call(LT_OP_KTHVALUE, t, k, dim, keepdim, indices);
}

lt_tensor *lt_median_dim(lt_tensor *t, int dim, bool keepdim, lt_tensor **indices)
{
    return select_call(LT_OP_MEDIAN_DIM, t, 0, dim, keepdim, indices);
}

lt_tensor *lt_mode(lt_tensor *t, int dim, bool keepdim, lt_tensor **indices)
{
    return select_call(LT_OP_MODE, t, 0, dim, keepdim, indices);
}

lt_tensor *lt_median(lt_tensor *t)
{
    if (lt_check_tensor("median", t, 0) != LT_OK)
        return NULL;
    lt_scope_begin();
    lt_origin caller = lt_origin_enter("median");
    int64_t flat = -1;
    lt_tensor *r;
    if (lt_tensor_numel(t) == 0 && lt_dtype_is_floating(lt_tensor_dtype(t))) /* torch: NaN, still differentiable */
        r = lt_add_scalar(lt_sum(t, NULL, 0, false), NAN);
    else
        r = lt_median_dim(lt_reshape(t, &flat, 1), 0, false, NULL);
    lt_origin_restore(caller);
    if (r)
        r = lt_keep(r);
    lt_scope_end();
    return r;
}

/* ---- quantile / nanquantile ------------------------------------------------ */

static lt_tensor *quantile_call(const char *name, lt_tensor *t, double q, const int *dim, bool keepdim, int mode,
                                bool ignore_nan)
{
    if (lt_check_tensor(name, t, 0) != LT_OK)
        return NULL;
    if (mode < LT_QUANTILE_LINEAR || mode > LT_QUANTILE_MIDPOINT) {
        lt_error(LT_ERR_ARGUMENT, "%s: interpolation %d is not one of LT_QUANTILE_LINEAR .. LT_QUANTILE_MIDPOINT",
                 name, mode);
        return NULL;
    }
    lt_dtype dt = lt_tensor_dtype(t);
    if (dt != LT_F32 && dt != LT_F64) { /* checked here too, to name nanquantile */
        lt_error(LT_ERR_DTYPE, "%s: input dtype %s is not supported, expected f32 or f64", name, lt_dtype_name(dt));
        return NULL;
    }
    if (!(q >= 0 && q <= 1)) {
        lt_error(LT_ERR_ARGUMENT, "%s: q is %g, expected a value in [0, 1]", name, q);
        return NULL;
    }
    int d = 0;
    if (dim && lt_normalize_dim(name, *dim, t->ndim, &d) != LT_OK)
        return NULL;
    lt_attrs a = lt_attrs_init();
    a.f[0] = q;
    a.nf = 1;
    a.i[0] = d;
    a.i[1] = mode;
    a.ni = 2;
    a.flag = (keepdim && dim ? 1 : 0) | (ignore_nan ? 2 : 0);
    if (dim)
        return lt_call(LT_OP_QUANTILE, &t, 1, &a, NULL);
    /* dim NULL: over the flattened tensor; keepdim gives t's rank of 1s */
    lt_scope_begin();
    lt_origin caller = lt_origin_enter(name);
    int64_t flat = -1, ones[LT_MAX_DIMS];
    lt_tensor *x = lt_reshape(t, &flat, 1);
    lt_tensor *r = x ? lt_call(LT_OP_QUANTILE, &x, 1, &a, NULL) : NULL;
    for (int k = 0; k < t->ndim; k++)
        ones[k] = 1;
    if (r && keepdim)
        r = lt_reshape(r, ones, t->ndim);
    lt_origin_restore(caller);
    if (r)
        r = lt_keep(r);
    lt_scope_end();
    return r;
}

lt_tensor *lt_quantile(lt_tensor *t, double q, const int *dim, bool keepdim, int interpolation)
{
    return quantile_call("quantile", t, q, dim, keepdim, interpolation, false);
}

lt_tensor *lt_nanquantile(lt_tensor *t, double q, const int *dim, bool keepdim, int interpolation)
{
    return quantile_call("nanquantile", t, q, dim, keepdim, interpolation, true);
}
