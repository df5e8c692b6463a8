/*
 * api_lapack.c - torch.linalg's LAPACK family: inv, solve, det, slogdet,
 * cholesky, qr, svd, svdvals, eigh and lstsq.
 *
 * Each is one op (src/eager/lapack.c) that runs eagerly; the lazy device
 * has no lowering for them, so it syncs the inputs, runs the kernel and
 * counts a fallback (like nonzero). The functions here check the arguments
 * under torch's names, broadcast the batch dims of solve and lstsq
 * (expand views, so autograd sums the gradients back), and handle torch's
 * vector right-hand side. det is sign * exp(log|det|) of slogdet.
 */
#include "api/api.h"
#include "api/compose.h"

#define SHAPE_BUF 160

/* t is a tensor with at least `min_dims` dims. */
static lt_status check_dims(const char *op, lt_tensor *t, int index, const char *name, int min_dims)
{
    lt_status st = lt_check_tensor(op, t, index);
    if (st != LT_OK || t->ndim >= min_dims)
        return st;
    char s[SHAPE_BUF];
    return lt_error(LT_ERR_SHAPE, "%s: %s has shape %s, expected at least %d dims", op, name,
                    lt_shape_str(t->shape, t->ndim, s, sizeof s), min_dims);
}

/* Runs op with its extra outputs going to *outs[k] where outs[k] is not
 * NULL (set to NULL on failure); the others are dropped with the scope. */
static lt_tensor *call_multi(lt_op op, lt_tensor *const *in, int nin, lt_tensor **const *outs, int nextra)
{
    lt_tensor *extra[2] = {NULL, NULL};
    lt_scope_begin();
    lt_attrs none = lt_attrs_init();
    lt_tensor *r = lt_call(op, in, nin, &none, extra);
    if (r)
        r = lt_keep(r);
    for (int k = 0; k < nextra; k++)
        if (outs[k])
            *outs[k] = r ? lt_keep(extra[k]) : NULL;
    lt_scope_end();
    return r;
}

lt_tensor *lt_linalg_inv(lt_tensor *a)
{
    if (check_dims("linalg_inv", a, 0, "A", 2) != LT_OK)
        return NULL;
    return lt_call1(LT_OP_LINALG_INV, a, NULL);
}

lt_tensor *lt_linalg_slogdet(lt_tensor *a, lt_tensor **logabsdet)
{
    if (check_dims("linalg_slogdet", a, 0, "A", 2) != LT_OK)
        return NULL;
    return call_multi(LT_OP_LINALG_SLOGDET, &a, 1, (lt_tensor **[]){logabsdet}, 1);
}

lt_tensor *lt_linalg_det(lt_tensor *a)
{
    const char *op = "linalg_det";
    if (check_dims(op, a, 0, "A", 2) != LT_OK)
        return NULL;
    lt_scope_begin();
    lt_origin caller = lt_origin_enter(op);
    lt_tensor *logabs = NULL;
    lt_tensor *sign = lt_linalg_slogdet(a, &logabs);
    return lt_scope_return_from(sign ? lt_mul(sign, lt_exp(logabs)) : NULL, caller);
}

lt_tensor *lt_linalg_cholesky(lt_tensor *a)
{
    if (check_dims("linalg_cholesky", a, 0, "A", 2) != LT_OK)
        return NULL;
    return lt_call1(LT_OP_LINALG_CHOLESKY, a, NULL);
}

lt_tensor *lt_linalg_qr(lt_tensor *a, lt_tensor **r)
{
    if (check_dims("linalg_qr", a, 0, "A", 2) != LT_OK)
        return NULL;
    return call_multi(LT_OP_LINALG_QR, &a, 1, (lt_tensor **[]){r}, 1);
}

/* One svd op: U (or Vh with `vh`) and S into *s when not NULL. */
static lt_tensor *svd_part(lt_tensor *a, bool vh, lt_tensor **s)
{
    lt_attrs at = lt_attrs_init();
    at.flag = vh ? 1 : 0;
    lt_tensor *extra[1] = {NULL};
    lt_tensor *r = lt_call(LT_OP_LINALG_SVD, &a, 1, &at, s ? extra : NULL);
    if (s)
        *s = r ? extra[0] : NULL;
    return r;
}

/* The op has two outputs (U or Vh, and S): Vh comes from a second run on
 * the same input, which LAPACK answers identically (consistent signs). */
lt_tensor *lt_linalg_svd(lt_tensor *a, lt_tensor **s, lt_tensor **vh)
{
    if (check_dims("linalg_svd", a, 0, "A", 2) != LT_OK)
        return NULL;
    lt_scope_begin();
    lt_tensor *sv = NULL;
    lt_tensor *u = svd_part(a, false, &sv);
    lt_tensor *v = u && vh ? svd_part(a, true, NULL) : NULL;
    bool ok = u && (!vh || v);
    if (s)
        *s = ok ? lt_keep(sv) : NULL;
    if (vh)
        *vh = ok ? lt_keep(v) : NULL;
    u = ok ? lt_keep(u) : NULL;
    lt_scope_end();
    return u;
}

lt_tensor *lt_linalg_svdvals(lt_tensor *a)
{
    if (check_dims("linalg_svdvals", a, 0, "A", 2) != LT_OK)
        return NULL;
    return lt_call1(LT_OP_LINALG_SVDVALS, a, NULL);
}

lt_tensor *lt_linalg_eigh(lt_tensor *a, lt_tensor **eigenvectors)
{
    if (check_dims("linalg_eigh", a, 0, "A", 2) != LT_OK)
        return NULL;
    return call_multi(LT_OP_LINALG_EIGH, &a, 1, (lt_tensor **[]){eigenvectors}, 1);
}

/* ---- solve, lstsq: broadcast batch dims, vector right-hand sides ----------------- */

/* torch's rules: B is a vector (or a batch of them) for solve when it is
 * 1-D or has A's shape without the last dim, for lstsq when it has one dim
 * less than A. */
static bool is_vector_rhs(lt_op opcode, const lt_tensor *a, const lt_tensor *b)
{
    if (opcode == LT_OP_LINALG_LSTSQ)
        return b->ndim == a->ndim - 1;
    if (b->ndim == 1)
        return true;
    if (b->ndim != a->ndim - 1)
        return false;
    for (int k = 0; k < b->ndim; k++)
        if (b->shape[k] != a->shape[k])
            return false;
    return true;
}

/* The broadcast of the batch dims of a and b (all but the last two). */
static lt_status batch_broadcast(const char *op, const lt_tensor *a, const lt_tensor *b, int64_t *batch, int *nb)
{
    int na = a->ndim - 2, nbb = b->ndim - 2;
    *nb = na > nbb ? na : nbb;
    for (int k = 1; k <= *nb; k++) {
        int64_t sa = k <= na ? a->shape[na - k] : 1, sb = k <= nbb ? b->shape[nbb - k] : 1;
        if (sa != sb && sa != 1 && sb != 1) {
            char s1[SHAPE_BUF], s2[SHAPE_BUF];
            return lt_error(LT_ERR_SHAPE, "%s: the batch dims of A %s and B %s do not broadcast", op,
                            lt_shape_str(a->shape, a->ndim, s1, sizeof s1),
                            lt_shape_str(b->shape, b->ndim, s2, sizeof s2));
        }
        batch[*nb - k] = sa == 1 ? sb : sa;
    }
    return LT_OK;
}

/* t expanded to batch dims `batch` followed by its own last two dims. */
static lt_tensor *expand_batch(lt_tensor *t, const int64_t *batch, int nb)
{
    int64_t shape[LT_MAX_DIMS + 2];
    for (int k = 0; k < nb; k++)
        shape[k] = batch[k];
    shape[nb] = t->shape[t->ndim - 2];
    shape[nb + 1] = t->shape[t->ndim - 1];
    return lt_expand(t, shape, nb + 2);
}

static lt_tensor *solve_like(lt_op opcode, const char *op, lt_tensor *a, lt_tensor *b)
{
    if (check_dims(op, a, 0, "A", 2) != LT_OK || check_dims(op, b, 1, "B", 1) != LT_OK)
        return NULL;
    bool vector = is_vector_rhs(opcode, a, b);
    lt_scope_begin();
    lt_origin caller = lt_origin_enter(op);
    lt_tensor *bm = vector ? lt_unsqueeze(b, -1) : b;
    int64_t batch[LT_MAX_DIMS];
    int nb = 0;
    lt_tensor *r = NULL;
    if (bm && batch_broadcast(op, a, bm, batch, &nb) == LT_OK) {
        lt_tensor *in[2] = {expand_batch(a, batch, nb), expand_batch(bm, batch, nb)};
        r = in[0] && in[1] ? lt_call2(opcode, in[0], in[1], NULL) : NULL;
        if (r && vector)
            r = lt_squeeze(r, -1);
    }
    return lt_scope_return_from(r, caller);
}

lt_tensor *lt_linalg_solve(lt_tensor *a, lt_tensor *b)
{
    return solve_like(LT_OP_LINALG_SOLVE, "linalg_solve", a, b);
}

lt_tensor *lt_linalg_lstsq(lt_tensor *a, lt_tensor *b)
{
    return solve_like(LT_OP_LINALG_LSTSQ, "linalg_lstsq", a, b);
}

/* ---- matrix norms from singular values -------------------------------------------- */

lt_tensor *lt_matrix_norm_singular(const char *name, lt_tensor *t, int d0, int d1, double ord, bool keepdim)
{
    lt_scope_begin();
    lt_origin caller = lt_origin_enter(name);
    int nd = t->ndim, src[2] = {d0, d1}, dst[2] = {nd - 2, nd - 1}, last = -1;
    lt_tensor *sv = lt_linalg_svdvals(lt_movedim(t, src, dst, 2));
    lt_tensor *r = NULL;
    if (sv)
        r = ord == 2 ? lt_amax(sv, &last, 1, false) : ord == -2 ? lt_amin(sv, &last, 1, false)
                                                                 : lt_sum(sv, &last, 1, false);
    if (r && keepdim) {
        r = lt_unsqueeze(r, d0 < d1 ? d0 : d1);
        r = lt_unsqueeze(r, d0 < d1 ? d1 : d0);
    }
    return lt_scope_return_from(r, caller);
}
