/*
 * api_linalg.c - the products PyTorch builds on matmul: outer, dot, vdot,
 * addmm, addbmm, baddbmm and kron.
 *
 * Each is a composition of matmul, broadcasting multiplies, sums and
 * views, so on the lazy device the scaling and the added input fuse into
 * one kernel after the product, and autograd differentiates the parts.
 * Arguments are validated here, under the public function's name, before
 * anything is traced; compositions run in a scope of their own named after
 * the function (lazy failures and compile causes name it).
 */
#include "api/api.h"
#include "api/compose.h"

#include <math.h>

#define SHAPE_BUF 160

static const char *shape_of(const lt_tensor *t, char *buf, size_t cap)
{
    return lt_shape_str(t->shape, t->ndim, buf, cap);
}

/* t (argument `index`) has `ndim` dims. */
static lt_status check_rank(const char *op, lt_tensor *t, int index, const char *name, int ndim)
{
    lt_status st = lt_check_tensor(op, t, index);
    if (st != LT_OK)
        return st;
    if (t->ndim == ndim)
        return LT_OK;
    char s[SHAPE_BUF];
    return lt_error(LT_ERR_SHAPE, "%s: %s has shape %s, expected %d dims", op, name, shape_of(t, s, sizeof s), ndim);
}

/* a and b have one dtype (torch does not promote in these products). */
static lt_status check_same_dtype(const char *op, const lt_tensor *a, const lt_tensor *b)
{
    if (a->dtype == b->dtype)
        return LT_OK;
    return lt_error(LT_ERR_DTYPE, "%s: the operands have dtypes %s and %s, expected one dtype", op,
                    lt_dtype_name(a->dtype), lt_dtype_name(b->dtype));
}

static lt_status check_scale(const char *op, const char *name, double v, lt_dtype dt)
{
    if (!lt_dtype_is_floating(dt) && (v != floor(v) || fabs(v) > 9007199254740992.0))
        return lt_error(LT_ERR_ARGUMENT, "%s: %s is %g, expected an integer for %s operands", op, name, v,
                        lt_dtype_name(dt));
    return LT_OK;
}

/* ---- vectors ------------------------------------------------------------ */

lt_tensor *lt_outer(lt_tensor *a, lt_tensor *b)
{
    const char *op = "outer";
    if (check_rank(op, a, 0, "a", 1) != LT_OK || check_rank(op, b, 1, "b", 1) != LT_OK)
        return NULL;
    lt_scope_begin();
    lt_origin caller = lt_origin_enter(op);
    return lt_scope_return_from(lt_mul(lt_unsqueeze(a, 1), lt_unsqueeze(b, 0)), caller);
}

lt_tensor *lt_dot(lt_tensor *a, lt_tensor *b)
{
    const char *op = "dot";
    if (check_rank(op, a, 0, "a", 1) != LT_OK || check_rank(op, b, 1, "b", 1) != LT_OK ||
        check_same_dtype(op, a, b) != LT_OK)
        return NULL;
    if (a->shape[0] != b->shape[0]) {
        lt_error(LT_ERR_SHAPE, "%s: a has %lld elements and b %lld, expected equal lengths", op,
                 (long long)a->shape[0], (long long)b->shape[0]);
        return NULL;
    }
    lt_scope_begin();
    lt_origin caller = lt_origin_enter(op);
    return lt_scope_return_from(lt_matmul(a, b), caller);
}

lt_tensor *lt_vdot(lt_tensor *a, lt_tensor *b)
{
    /* without complex dtypes, conjugating a changes nothing */
    return lt_dot(a, b);
}

/* ---- products with an added input ---------------------------------------- */

/* t * s, with an integer scale for integer tensors (which keeps their dtype). */
static lt_tensor *scale(lt_tensor *t, double s)
{
    if (s == 1 || !t)
        return t;
    return lt_dtype_is_floating(t->dtype) ? lt_mul_scalar(t, s) : lt_mul_iscalar(t, (int64_t)s);
}

/* beta * input + alpha * product; beta 0 ignores input (its NaNs too), as
 * torch does. */
static lt_tensor *scaled_sum(lt_tensor *input, lt_tensor *product, double beta, double alpha)
{
    lt_tensor *p = scale(product, alpha);
    return beta == 0 ? p : lt_add(scale(input, beta), p);
}

/* input broadcasts to `shape` (nd dims), and every operand has its dtype. */
static lt_status check_added_input(const char *op, lt_tensor *input, const int64_t *shape, int nd)
{
    bool fits = input->ndim <= nd;
    for (int k = 1; fits && k <= input->ndim; k++) {
        int64_t s = input->shape[input->ndim - k];
        fits = s == 1 || s == shape[nd - k];
    }
    if (fits)
        return LT_OK;
    char si[SHAPE_BUF], sp[SHAPE_BUF];
    return lt_error(LT_ERR_SHAPE, "%s: input has shape %s, expected a shape that broadcasts to the product's %s", op,
                    shape_of(input, si, sizeof si), lt_shape_str(shape, nd, sp, sizeof sp));
}

/* Checks shared by addmm, addbmm and baddbmm: input, m1 and m2 (of rank
 * `rank`, inner sizes and batch sizes matching), one dtype, integral
 * scales for integer operands. */
static lt_status check_add_product(const char *op, lt_tensor *input, lt_tensor *m1, lt_tensor *m2, int rank,
                                   double beta, double alpha)
{
    lt_status st = lt_check_tensor(op, input, 0);
    if (st != LT_OK || (st = check_rank(op, m1, 1, "the first matrix", rank)) != LT_OK ||
        (st = check_rank(op, m2, 2, "the second matrix", rank)) != LT_OK ||
        (st = check_same_dtype(op, m1, m2)) != LT_OK || (st = check_same_dtype(op, input, m1)) != LT_OK ||
        (st = check_scale(op, "beta", beta, m1->dtype)) != LT_OK ||
        (st = check_scale(op, "alpha", alpha, m1->dtype)) != LT_OK)
        return st;
    bool batch_ok = rank == 2 || m1->shape[0] == m2->shape[0];
    if (!batch_ok || m1->shape[rank - 1] != m2->shape[rank - 2]) {
        char s1[SHAPE_BUF], s2[SHAPE_BUF];
        return lt_error(LT_ERR_SHAPE, "%s: cannot multiply %s by %s", op, shape_of(m1, s1, sizeof s1),
                        shape_of(m2, s2, sizeof s2));
    }
    return LT_OK;
}

lt_tensor *lt_addmm(lt_tensor *input, lt_tensor *m1, lt_tensor *m2, double beta, double alpha)
{
    const char *op = "addmm";
    if (check_add_product(op, input, m1, m2, 2, beta, alpha) != LT_OK)
        return NULL;
    int64_t shape[2] = {m1->shape[0], m2->shape[1]};
    if (check_added_input(op, input, shape, 2) != LT_OK)
        return NULL;
    lt_scope_begin();
    lt_origin caller = lt_origin_enter(op);
    return lt_scope_return_from(scaled_sum(input, lt_matmul(m1, m2), beta, alpha), caller);
}

/* baddbmm (sum_batch false) and addbmm (true): beta * input + alpha *
 * b1 @ b2, the batched product kept or summed over the batch. */
static lt_tensor *batched_add_product(const char *op, lt_tensor *input, lt_tensor *b1, lt_tensor *b2, double beta,
                                      double alpha, bool sum_batch)
{
    if (check_add_product(op, input, b1, b2, 3, beta, alpha) != LT_OK)
        return NULL;
    int64_t shape[3] = {b1->shape[0], b1->shape[1], b2->shape[2]};
    int rank = sum_batch ? 2 : 3;
    if (check_added_input(op, input, shape + (3 - rank), rank) != LT_OK)
        return NULL;
    lt_scope_begin();
    lt_origin caller = lt_origin_enter(op);
    lt_tensor *product = lt_matmul(b1, b2);
    int batch = 0;
    if (sum_batch)
        product = lt_sum(product, &batch, 1, false);
    return lt_scope_return_from(scaled_sum(input, product, beta, alpha), caller);
}

lt_tensor *lt_baddbmm(lt_tensor *input, lt_tensor *b1, lt_tensor *b2, double beta, double alpha)
{
    return batched_add_product("baddbmm", input, b1, b2, beta, alpha, false);
}

lt_tensor *lt_addbmm(lt_tensor *input, lt_tensor *b1, lt_tensor *b2, double beta, double alpha)
{
    return batched_add_product("addbmm", input, b1, b2, beta, alpha, true);
}

/* ---- kron ----------------------------------------------------------------- */

lt_tensor *lt_kron(lt_tensor *a, lt_tensor *b)
{
    const char *op = "kron";
    if (lt_check_tensor(op, a, 0) != LT_OK || lt_check_tensor(op, b, 1) != LT_OK)
        return NULL;
    int nd = a->ndim > b->ndim ? a->ndim : b->ndim;
    if (2 * nd > LT_MAX_DIMS) {
        lt_error(LT_ERR_SHAPE, "%s: operands of %d and %d dims need %d interleaved dims, more than %d", op, a->ndim,
                 b->ndim, 2 * nd, LT_MAX_DIMS);
        return NULL;
    }
    /* a as [a0, 1, a1, 1, ...] and b as [1, b0, 1, b1, ...] (leading sizes
     * 1 where one has fewer dims): their product, read as [a0 b0, a1 b1,
     * ...], is the Kronecker product */
    int64_t sa[2 * LT_MAX_DIMS], sb[2 * LT_MAX_DIMS], out[LT_MAX_DIMS];
    for (int k = 0; k < nd; k++) {
        int ka = k - (nd - a->ndim), kb = k - (nd - b->ndim);
        int64_t da = ka >= 0 ? a->shape[ka] : 1, db = kb >= 0 ? b->shape[kb] : 1;
        sa[2 * k] = da, sa[2 * k + 1] = 1;
        sb[2 * k] = 1, sb[2 * k + 1] = db;
        if (__builtin_mul_overflow(da, db, &out[k])) {
            lt_error(LT_ERR_SHAPE, "%s: dim %d of the result (%lld x %lld) overflows", op, k, (long long)da,
                     (long long)db);
            return NULL;
        }
    }
    lt_scope_begin();
    lt_origin caller = lt_origin_enter(op);
    lt_tensor *r = lt_reshape(lt_mul(lt_reshape(a, sa, 2 * nd), lt_reshape(b, sb, 2 * nd)), out, nd);
    return lt_scope_return_from(r, caller);
}
