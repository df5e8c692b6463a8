/*
 * api_reduce_ext.c - the reductions PyTorch defines on top of the basic
 * ones: nansum, nanmean, count_nonzero, aminmax, the `dtype=` forms of
 * sum/mean/prod/cumsum/cumprod, and the norms (vector_norm, matrix_norm,
 * norm, and their dtype= forms).
 *
 * Each is a composition of existing ops (elementwise ops, masked_fill,
 * casts and the reductions of ops.def), so on the lazy device it is traced
 * like any other call and the compiler fuses its elementwise prologue into
 * the reduction's loop nest; autograd differentiates it through the
 * gradients of its parts. Compositions run in a scope of their own, named
 * after the public function (lazy failures and compile causes name it).
 *
 * Arguments are validated here, under the public function's name, before
 * anything is traced, so that errors name the op the user called.
 */
#include "api/api.h"
#include "api/compose.h"

#include <math.h>

/* ---- argument checks ---------------------------------------------------- */

/* Checks t and the reduced dims (range, duplicates) under `name`. */
static lt_status check_reduce_args(const char *name, lt_tensor *t, const int *dims, int ndims)
{
    lt_status st = lt_check_tensor(name, t, 0);
    if (st != LT_OK)
        return st;
    if (ndims < 0 || ndims > LT_MAX_DIMS)
        return lt_error(LT_ERR_ARGUMENT, "%s: ndims is %d, expected 0..%d", name, ndims, LT_MAX_DIMS);
    if (ndims > 0 && !dims)
        return lt_error(LT_ERR_NULL, "%s: dims is NULL but ndims is %d", name, ndims);
    bool seen[LT_MAX_DIMS + 1] = {false};
    for (int k = 0; k < ndims; k++) {
        int d;
        st = lt_normalize_dim(name, dims[k], t->ndim, &d);
        if (st != LT_OK)
            return st;
        if (seen[d])
            return lt_error(LT_ERR_ARGUMENT, "%s: dim %d appears more than once in the reduced dims of a %d-d tensor",
                            name, dims[k], t->ndim);
        seen[d] = true;
    }
    return LT_OK;
}

static lt_status require_floating(const char *name, lt_tensor *t, const char *what)
{
    lt_dtype dt = lt_tensor_dtype(t);
    if (lt_dtype_is_floating(dt))
        return LT_OK;
    return lt_error(LT_ERR_DTYPE, "%s: input dtype %s is not supported, expected a floating dtype (%s)", name,
                    lt_dtype_name(dt), what);
}

static lt_status check_dtype_arg(const char *name, lt_dtype dt)
{
    if (lt_dtype_valid(dt))
        return LT_OK;
    return lt_error(LT_ERR_DTYPE, "%s: dtype %d is not a valid lt_dtype", name, (int)dt);
}

/* x with every NaN replaced by 0 (a new tensor; integers pass unchanged). */
static lt_tensor *zero_nans(lt_tensor *x)
{
    if (!lt_dtype_is_floating(lt_tensor_dtype(x)))
        return x;
    return lt_masked_fill(x, lt_isnan(x), 0);
}

/* ---- NaN-ignoring reductions, counting, aminmax ------------------------ */

lt_tensor *lt_nansum(lt_tensor *t, const int *dims, int ndims, bool keepdim)
{
    if (check_reduce_args("nansum", t, dims, ndims) != LT_OK)
        return NULL;
    lt_scope_begin();
    lt_origin caller = lt_origin_enter("nansum");
    return lt_scope_return_from(lt_sum(zero_nans(t), dims, ndims, keepdim), caller);
}

lt_tensor *lt_nanmean(lt_tensor *t, const int *dims, int ndims, bool keepdim)
{
    if (check_reduce_args("nanmean", t, dims, ndims) != LT_OK ||
        require_floating("nanmean", t, "torch.nanmean refuses integers too") != LT_OK)
        return NULL;
    lt_scope_begin();
    lt_origin caller = lt_origin_enter("nanmean");
    /* torch's definition: nansum / number of non-NaN elements (0/0 = NaN) */
    lt_tensor *count = lt_sum(lt_logical_not(lt_isnan(t)), dims, ndims, keepdim);
    lt_tensor *r = lt_div(lt_sum(zero_nans(t), dims, ndims, keepdim), count);
    return lt_scope_return_from(r, caller);
}

lt_tensor *lt_count_nonzero(lt_tensor *t, const int *dims, int ndims)
{
    if (check_reduce_args("count_nonzero", t, dims, ndims) != LT_OK)
        return NULL;
    lt_scope_begin();
    lt_origin caller = lt_origin_enter("count_nonzero");
    return lt_scope_return_from(lt_sum(lt_ne_scalar(t, 0), dims, ndims, false), caller);
}

lt_tensor *lt_aminmax(lt_tensor *t, const int *dims, int ndims, bool keepdim, lt_tensor **max)
{
    if (max)
        *max = NULL;
    if (!max) {
        lt_error(LT_ERR_NULL, "aminmax: max is NULL, expected a place for the maximum");
        return NULL;
    }
    if (ndims > 1) {
        lt_error(LT_ERR_ARGUMENT, "aminmax: %d dims given, expected 0 (every dim) or 1", ndims);
        return NULL;
    }
    if (check_reduce_args("aminmax", t, dims, ndims) != LT_OK)
        return NULL;
    lt_scope_begin();
    lt_origin caller = lt_origin_enter("aminmax");
    lt_tensor *lo = lt_amin(t, dims, ndims, keepdim);
    lt_tensor *hi = lo ? lt_amax(t, dims, ndims, keepdim) : NULL;
    if (hi)
        *max = lt_keep(hi);
    return lt_scope_return_from(hi ? lo : NULL, caller);
}

/* ---- dtype= forms: the input is cast to dtype first, as in torch -------- */

/* A reduction with lt_sum's signature. */
typedef lt_tensor *(*reduce_fn)(lt_tensor *, const int *, int, bool);

/* fn over t cast to dt, with the result in dt. */
static lt_tensor *reduce_in_dtype(const char *name, reduce_fn fn, lt_tensor *t, const int *dims, int ndims,
                                  bool keepdim, lt_dtype dt)
{
    if (check_reduce_args(name, t, dims, ndims) != LT_OK || check_dtype_arg(name, dt) != LT_OK)
        return NULL;
    lt_scope_begin();
    lt_origin caller = lt_origin_enter(name);
    /* integer sums and products run in i64; wrapping to a narrower
     * integer dtype afterwards gives the same bits as torch's narrower
     * accumulation (arithmetic modulo 2^k), and bool gives "any nonzero" */
    lt_tensor *r = fn(lt_to_dtype(t, dt), dims, ndims, keepdim);
    if (r && lt_tensor_dtype(r) != dt)
        r = lt_to_dtype(r, dt);
    return lt_scope_return_from(r, caller);
}

lt_tensor *lt_sum_dtype(lt_tensor *t, const int *dims, int ndims, bool keepdim, lt_dtype dtype)
{
    return reduce_in_dtype("sum_dtype", lt_sum, t, dims, ndims, keepdim, dtype);
}

lt_tensor *lt_prod_dtype(lt_tensor *t, const int *dims, int ndims, bool keepdim, lt_dtype dtype)
{
    return reduce_in_dtype("prod_dtype", lt_prod, t, dims, ndims, keepdim, dtype);
}

lt_tensor *lt_mean_dtype(lt_tensor *t, const int *dims, int ndims, bool keepdim, lt_dtype dtype)
{
    if (lt_dtype_valid(dtype) && !lt_dtype_is_floating(dtype)) {
        lt_error(LT_ERR_DTYPE, "mean_dtype: dtype %s is not supported, expected a floating dtype",
                 lt_dtype_name(dtype));
        return NULL;
    }
    return reduce_in_dtype("mean_dtype", lt_mean, t, dims, ndims, keepdim, dtype);
}

/* A scan with lt_cumsum's signature. */
typedef lt_tensor *(*scan_fn)(lt_tensor *, int);

/* fn along dim over t cast to dt, with the result in dt. */
static lt_tensor *scan_in_dtype(const char *name, scan_fn fn, lt_tensor *t, int dim, lt_dtype dt)
{
    if (check_reduce_args(name, t, &dim, 1) != LT_OK || check_dtype_arg(name, dt) != LT_OK)
        return NULL;
    if (dt == LT_BOOL) { /* torch has no bool cumsum or cumprod either */
        lt_error(LT_ERR_DTYPE, "%s: dtype bool is not supported, expected a numeric dtype", name);
        return NULL;
    }
    lt_scope_begin();
    lt_origin caller = lt_origin_enter(name);
    /* integer scans run in i64: wrapping to a narrower dtype afterwards
     * gives torch's bits (arithmetic modulo 2^k) */
    lt_tensor *r = fn(lt_to_dtype(t, dt), dim);
    if (r && lt_tensor_dtype(r) != dt)
        r = lt_to_dtype(r, dt);
    return lt_scope_return_from(r, caller);
}

lt_tensor *lt_cumsum_dtype(lt_tensor *t, int dim, lt_dtype dtype)
{
    return scan_in_dtype("cumsum_dtype", lt_cumsum, t, dim, dtype);
}

lt_tensor *lt_cumprod_dtype(lt_tensor *t, int dim, lt_dtype dtype)
{
    return scan_in_dtype("cumprod_dtype", lt_cumprod, t, dim, dtype);
}

/* ---- norms -------------------------------------------------------------- */

/* s ^ (1/p) with a zero gradient where s == 0 (torch's norms define the
 * gradient of a zero norm as 0; the plain root's is 0 * inf = NaN). */
static lt_tensor *safe_root(lt_tensor *s, double p)
{
    lt_tensor *zero = lt_eq_scalar(s, 0);
    lt_tensor *base = lt_masked_fill(s, zero, 1);
    lt_tensor *root = p == 2 ? lt_sqrt(base) : lt_pow_scalar(base, 1 / p);
    return lt_masked_fill(root, zero, 0);
}

/* |x| ^ p with a zero gradient at x == 0 (for p < 1 the plain power's is
 * inf * 0 = NaN there; torch's is 0). */
static lt_tensor *abs_pow(lt_tensor *x, double p)
{
    lt_tensor *a = lt_abs(x);
    if (p == 1)
        return a;
    if (p == 2)
        return lt_mul(x, x);
    /* p < 0: 0 ^ p = inf, with a zero gradient there too, as torch */
    lt_tensor *zero = lt_eq_scalar(a, 0);
    return lt_masked_fill(lt_pow_scalar(lt_masked_fill(a, zero, 1), p), zero, p < 0 ? INFINITY : 0);
}

/* Number of nonzero elements in t's own dtype, with a zero gradient. */
static lt_tensor *count_as_float(lt_tensor *x, const int *dims, int ndims, bool keepdim)
{
    /* 1 where x != 0 (NaN included), |x| * 0 = +0 elsewhere */
    lt_tensor *ind = lt_masked_fill(lt_mul_scalar(lt_abs(x), 0), lt_ne_scalar(x, 0), 1);
    return lt_sum(ind, dims, ndims, keepdim);
}

/* True if the reduced range of t over dims is empty. */
static bool empty_range(lt_tensor *t, const int *dims, int ndims)
{
    bool empty = false;
    if (ndims == 0)
        empty = lt_tensor_numel(t) == 0;
    for (int k = 0; k < ndims; k++) {
        int d = dims[k] < 0 ? dims[k] + t->ndim : dims[k];
        if (t->ndim > 0 && t->shape[d] == 0)
            empty = true;
    }
    return empty;
}

/* Errors for inf/-inf/negative orders over an empty reduced range. */
static lt_status check_norm_identity(const char *name, lt_tensor *t, const int *dims, int ndims, double ord)
{
    if ((ord >= 0 && !isinf(ord)) || !empty_range(t, dims, ndims))
        return LT_OK;
    char s[160];
    lt_shape_str(t->shape, t->ndim, s, sizeof s);
    return lt_error(LT_ERR_SHAPE,
                    "%s: cannot compute the %g norm over an empty range (input shape %s): the reduction "
                    "has no identity, expected a non-empty input",
                    name, ord, s);
}

static lt_tensor *vector_norm_of(lt_tensor *x, double ord, const int *dims, int ndims, bool keepdim)
{
    if (ord == 0)
        return count_as_float(x, dims, ndims, keepdim);
    if (isinf(ord))
        return ord > 0 ? lt_amax(lt_abs(x), dims, ndims, keepdim) : lt_amin(lt_abs(x), dims, ndims, keepdim);
    lt_tensor *s = lt_sum(abs_pow(x, ord), dims, ndims, keepdim);
    return ord == 1 ? s : safe_root(s, ord);
}

/* legacy_empty: torch.norm's rule, 0 for every order over an empty range
 * (linalg.vector_norm refuses inf, -inf and negative orders there). */
static lt_tensor *vector_norm_named(const char *name, lt_tensor *t, double ord, const int *dims, int ndims,
                                    bool keepdim, bool legacy_empty)
{
    if (check_reduce_args(name, t, dims, ndims) != LT_OK ||
        require_floating(name, t, "convert integers with lt_to_dtype first, as torch requires") != LT_OK)
        return NULL;
    if (isnan(ord)) {
        lt_error(LT_ERR_ARGUMENT, "%s: ord is NaN, expected a number or +-inf", name);
        return NULL;
    }
    bool zero = legacy_empty && empty_range(t, dims, ndims);
    if (!zero && check_norm_identity(name, t, dims, ndims, ord) != LT_OK)
        return NULL;
    lt_scope_begin();
    lt_origin caller = lt_origin_enter(name);
    lt_tensor *r = zero ? lt_sum(lt_mul_scalar(lt_abs(t), 0), dims, ndims, keepdim)
                        : vector_norm_of(t, ord, dims, ndims, keepdim);
    return lt_scope_return_from(r, caller);
}

lt_tensor *lt_vector_norm(lt_tensor *t, double ord, const int *dims, int ndims, bool keepdim)
{
    return vector_norm_named("vector_norm", t, ord, dims, ndims, keepdim, false);
}

lt_tensor *lt_norm(lt_tensor *t, double p, const int *dims, int ndims, bool keepdim)
{
    return vector_norm_named("norm", t, p, dims, ndims, keepdim, true);
}

/* Validates a matrix norm's input and fills its two normalized dims. */
static lt_status matrix_dims(const char *name, lt_tensor *t, const int *dims, int ndims, int *d0, int *d1)
{
    lt_status st = lt_check_tensor(name, t, 0);
    if (st == LT_OK)
        st = require_floating(name, t, "as torch.linalg.matrix_norm");
    if (st != LT_OK)
        return st;
    if (t->ndim < 2)
        return lt_error(LT_ERR_SHAPE, "%s: input has %d dims, expected a matrix or a batch of them (2 or more dims)",
                        name, t->ndim);
    if (ndims != 0 && ndims != 2)
        return lt_error(LT_ERR_ARGUMENT, "%s: %d dims given, expected 2 (or 0 for the last two)", name, ndims);
    if (ndims == 0) {
        *d0 = t->ndim - 2;
        *d1 = t->ndim - 1;
        return LT_OK;
    }
    if (!dims)
        return lt_error(LT_ERR_NULL, "%s: dims is NULL but ndims is 2", name);
    st = lt_normalize_dim(name, dims[0], t->ndim, d0);
    if (st == LT_OK)
        st = lt_normalize_dim(name, dims[1], t->ndim, d1);
    if (st == LT_OK && *d0 == *d1)
        return lt_error(LT_ERR_ARGUMENT, "%s: dims %d and %d name the same dim, expected two different dims", name,
                        dims[0], dims[1]);
    return st;
}

lt_tensor *lt_matrix_norm(lt_tensor *t, double ord, const int *dims, int ndims, bool keepdim)
{
    int d0, d1;
    if (matrix_dims("matrix_norm", t, dims, ndims, &d0, &d1) != LT_OK)
        return NULL;
    if (ord == 2 || ord == -2)
        return lt_matrix_norm_singular("matrix_norm", t, d0, d1, ord, keepdim);
    if (ord != 1 && ord != -1 && !isinf(ord)) {
        lt_error(LT_ERR_ARGUMENT,
                 "matrix_norm: ord %g is not supported, expected 1, -1, 2, -2, inf or -inf (lt_matrix_norm_fro "
                 "for 'fro', lt_matrix_norm_nuc for 'nuc')",
                 ord);
        return NULL;
    }
    /* ord +-1: extreme column sum (sum over d0, then max over d1);
     * ord +-inf: extreme row sum (sum over d1, then max over d0) */
    int sum_dim = fabs(ord) == 1 ? d0 : d1, ext_dim = fabs(ord) == 1 ? d1 : d0;
    if (t->shape[ext_dim] == 0) {
        char s[160];
        lt_shape_str(t->shape, t->ndim, s, sizeof s);
        lt_error(LT_ERR_SHAPE, "matrix_norm: the %g norm of matrices with a size-0 dim %d (input shape %s) has "
                 "no identity, expected a non-zero size", ord, ext_dim, s);
        return NULL;
    }
    lt_scope_begin();
    lt_origin caller = lt_origin_enter("matrix_norm");
    lt_tensor *sums = lt_sum(lt_abs(t), &sum_dim, 1, true);
    lt_tensor *r = ord > 0 ? lt_amax(sums, &ext_dim, 1, true) : lt_amin(sums, &ext_dim, 1, true);
    if (!keepdim) {
        r = lt_squeeze(r, d0 > d1 ? d0 : d1);
        r = lt_squeeze(r, d0 > d1 ? d1 : d0);
    }
    return lt_scope_return_from(r, caller);
}

lt_tensor *lt_matrix_norm_fro(lt_tensor *t, const int *dims, int ndims, bool keepdim)
{
    int d[2];
    if (matrix_dims("matrix_norm_fro", t, dims, ndims, &d[0], &d[1]) != LT_OK)
        return NULL;
    lt_scope_begin();
    lt_origin caller = lt_origin_enter("matrix_norm_fro");
    return lt_scope_return_from(vector_norm_of(t, 2, d, 2, keepdim), caller);
}

/* ---- dtype= of the norms ------------------------------------------------ */

/* The norms' dtype=: a floating input and a floating dtype it converts to
 * without narrowing (torch refuses the rest). */
static lt_status check_norm_dtype(const char *name, lt_tensor *t, lt_dtype dt)
{
    lt_status st = lt_check_tensor(name, t, 0);
    if (st == LT_OK)
        st = check_dtype_arg(name, dt);
    if (st == LT_OK)
        st = require_floating(name, t, "as torch.linalg's norms, which dtype= does not change");
    if (st != LT_OK)
        return st;
    if (lt_dtype_is_floating(dt) && lt_promote_types(t->dtype, dt) == dt)
        return LT_OK;
    return lt_error(LT_ERR_DTYPE, "%s: dtype %s for an input of dtype %s, expected a floating dtype the input "
                    "converts to without narrowing (as torch)", name, lt_dtype_name(dt), lt_dtype_name(t->dtype));
}

lt_tensor *lt_vector_norm_dtype(lt_tensor *t, double ord, const int *dims, int ndims, bool keepdim, lt_dtype dtype)
{
    if (check_norm_dtype("vector_norm_dtype", t, dtype) != LT_OK)
        return NULL;
    lt_scope_begin();
    return lt_scope_return(lt_vector_norm(lt_to_dtype(t, dtype), ord, dims, ndims, keepdim));
}

lt_tensor *lt_matrix_norm_dtype(lt_tensor *t, double ord, const int *dims, int ndims, bool keepdim, lt_dtype dtype)
{
    if (check_norm_dtype("matrix_norm_dtype", t, dtype) != LT_OK)
        return NULL;
    lt_scope_begin();
    return lt_scope_return(lt_matrix_norm(lt_to_dtype(t, dtype), ord, dims, ndims, keepdim));
}

lt_tensor *lt_matrix_norm_fro_dtype(lt_tensor *t, const int *dims, int ndims, bool keepdim, lt_dtype dtype)
{
    if (check_norm_dtype("matrix_norm_fro_dtype", t, dtype) != LT_OK)
        return NULL;
    lt_scope_begin();
    return lt_scope_return(lt_matrix_norm_fro(lt_to_dtype(t, dtype), dims, ndims, keepdim));
}

lt_tensor *lt_matrix_norm_nuc(lt_tensor *t, const int *dims, int ndims, bool keepdim)
{
    int d0, d1;
    if (matrix_dims("matrix_norm_nuc", t, dims, ndims, &d0, &d1) != LT_OK)
        return NULL;
    return lt_matrix_norm_singular("matrix_norm_nuc", t, d0, d1, 0, keepdim);
}
