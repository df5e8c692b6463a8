/*
 * api_scan.c - the scans beyond cumsum: cumprod, cummax, cummin,
 * logcumsumexp (lazytensor.h), and cumprod's gradient (api.h, for
 * autograd). Each is one op of ops.def with an eager kernel (scan.c); on
 * the lazy device it is traced, and the compiler runs it as a call into
 * that kernel inside the compiled program.
 */
#include "api/api.h"

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
