/*
 * api_reduce.c - public reductions, scans and softmax (lt_sum ...
 * lt_log_softmax of lazytensor.h).
 *
 * Each wrapper validates its arguments, normalizes the dims (negative dims
 * count from the end) so that equal requests give equal attrs, and calls
 * the dispatcher. The shape rules (src/ops/infer_reduce.c) check the rest:
 * duplicate dims, dtypes, empty reductions without identity.
 *
 * Semantics follow PyTorch: ndims == 0 reduces every dim, keepdim keeps
 * reduced dims with size 1, integer/bool sums and products give i64,
 * bf16/f16 compute in f32 and keep their dtype. mean/var/std/softmax/
 * log_softmax need a floating input. Deviation from the header's "floating
 * inputs only": lt_logsumexp promotes integer and bool inputs to f32, as
 * torch.logsumexp does.
 */
#include "api/api.h"

/* Validates t and dims, and fills the dims, keepdim and arity of a. */
static lt_status reduce_attrs(const char *name, lt_tensor *t, const int *dims, int ndims, bool keepdim,
                              lt_attrs *a)
{
    lt_status st = lt_check_tensor(name, t, 0);
    if (st != LT_OK)
        return st;
    if (ndims < 0 || ndims > LT_MAX_DIMS)
        return lt_error(LT_ERR_ARGUMENT, "%s: ndims is %d, expected 0..%d", name, ndims, LT_MAX_DIMS);
    if (ndims > 0 && !dims)
        return lt_error(LT_ERR_NULL, "%s: dims is NULL but ndims is %d", name, ndims);
    for (int k = 0; k < ndims; k++) {
        int d;
        st = lt_normalize_dim(name, dims[k], t->ndim, &d);
        if (st != LT_OK)
            return st;
        a->i[k] = d;
    }
    a->ni = ndims;
    a->flag = keepdim ? 1 : 0;
    return LT_OK;
}

static lt_tensor *reduce_call(lt_op op, lt_tensor *t, const int *dims, int ndims, bool keepdim)
{
    lt_attrs a = lt_attrs_init();
    if (reduce_attrs(lt_op_name(op), t, dims, ndims, keepdim, &a) != LT_OK)
        return NULL;
    return lt_call(op, &t, 1, &a, NULL);
}

lt_tensor *lt_sum(lt_tensor *t, const int *dims, int ndims, bool keepdim)
{
    return reduce_call(LT_OP_SUM, t, dims, ndims, keepdim);
}

lt_tensor *lt_mean(lt_tensor *t, const int *dims, int ndims, bool keepdim)
{
    return reduce_call(LT_OP_MEAN, t, dims, ndims, keepdim);
}

lt_tensor *lt_prod(lt_tensor *t, const int *dims, int ndims, bool keepdim)
{
    return reduce_call(LT_OP_PROD, t, dims, ndims, keepdim);
}

lt_tensor *lt_amax(lt_tensor *t, const int *dims, int ndims, bool keepdim)
{
    return reduce_call(LT_OP_AMAX, t, dims, ndims, keepdim);
}

lt_tensor *lt_amin(lt_tensor *t, const int *dims, int ndims, bool keepdim)
{
    return reduce_call(LT_OP_AMIN, t, dims, ndims, keepdim);
}

lt_tensor *lt_logsumexp(lt_tensor *t, const int *dims, int ndims, bool keepdim)
{
    return reduce_call(LT_OP_LOGSUMEXP, t, dims, ndims, keepdim);
}

lt_tensor *lt_all(lt_tensor *t, const int *dims, int ndims, bool keepdim)
{
    return reduce_call(LT_OP_ALL, t, dims, ndims, keepdim);
}

lt_tensor *lt_any(lt_tensor *t, const int *dims, int ndims, bool keepdim)
{
    return reduce_call(LT_OP_ANY, t, dims, ndims, keepdim);
}

static lt_tensor *moment_call(lt_op op, lt_tensor *t, const int *dims, int ndims, int64_t correction,
                              bool keepdim)
{
    lt_attrs a = lt_attrs_init();
    if (reduce_attrs(lt_op_name(op), t, dims, ndims, keepdim, &a) != LT_OK)
        return NULL;
    a.f[0] = (double)correction;
    a.nf = 1;
    return lt_call(op, &t, 1, &a, NULL);
}

lt_tensor *lt_var(lt_tensor *t, const int *dims, int ndims, int64_t correction, bool keepdim)
{
    return moment_call(LT_OP_VAR, t, dims, ndims, correction, keepdim);
}

lt_tensor *lt_std(lt_tensor *t, const int *dims, int ndims, int64_t correction, bool keepdim)
{
    return moment_call(LT_OP_STD, t, dims, ndims, correction, keepdim);
}

/* One-dim ops: max_dim/min_dim (with optional indices), argmax/argmin. */
static lt_tensor *one_dim_call(lt_op op, lt_tensor *t, int dim, bool keepdim, lt_tensor **indices)
{
    if (indices)
        *indices = NULL;
    lt_attrs a = lt_attrs_init();
    if (reduce_attrs(lt_op_name(op), t, &dim, 1, keepdim, &a) != LT_OK)
        return NULL;
    lt_tensor *extra[1] = {NULL};
    lt_tensor *r = lt_call(op, &t, 1, &a, indices ? extra : NULL);
    if (indices && r)
        *indices = extra[0];
    return r;
}

lt_tensor *lt_max_dim(lt_tensor *t, int dim, bool keepdim, lt_tensor **indices)
{
    return one_dim_call(LT_OP_MAX_DIM, t, dim, keepdim, indices);
}

lt_tensor *lt_min_dim(lt_tensor *t, int dim, bool keepdim, lt_tensor **indices)
{
    return one_dim_call(LT_OP_MIN_DIM, t, dim, keepdim, indices);
}

lt_tensor *lt_argmax(lt_tensor *t, int dim, bool keepdim)
{
    return one_dim_call(LT_OP_ARGMAX, t, dim, keepdim, NULL);
}

lt_tensor *lt_argmin(lt_tensor *t, int dim, bool keepdim)
{
    return one_dim_call(LT_OP_ARGMIN, t, dim, keepdim, NULL);
}

/* Scans keep the shape; i0 is the dim. */
static lt_tensor *scan_call(lt_op op, lt_tensor *t, int dim)
{
    lt_attrs a = lt_attrs_init();
    if (reduce_attrs(lt_op_name(op), t, &dim, 1, false, &a) != LT_OK)
        return NULL;
    return lt_call(op, &t, 1, &a, NULL);
}

lt_tensor *lt_cumsum(lt_tensor *t, int dim) { return scan_call(LT_OP_CUMSUM, t, dim); }
lt_tensor *lt_softmax(lt_tensor *t, int dim) { return scan_call(LT_OP_SOFTMAX, t, dim); }
lt_tensor *lt_log_softmax(lt_tensor *t, int dim) { return scan_call(LT_OP_LOG_SOFTMAX, t, dim); }
