/*
 * infer_linalg.c - shape/dtype rules of the LAPACK ops (src/eager/lapack.c).
 * Inputs are f32 or f64 matrices [..., m, n]; inv, solve, slogdet,
 * cholesky and eigh want square ones; solve and lstsq take a second
 * operand [..., m, k] with the same batch dims (the public functions
 * broadcast them first). Outputs keep the input's dtype.
 */
#include "ops/ops.h"

#include <string.h>

#define SHAPE_BUF 160

static lt_status check_matrix(const char *name, const lt_meta *m, const char *what, bool square)
{
    char s[SHAPE_BUF];
    if (m->dtype != LT_F32 && m->dtype != LT_F64)
        return lt_error(LT_ERR_DTYPE, "%s: %s has dtype %s, expected f32 or f64", name, what,
                        lt_dtype_name((lt_dtype)m->dtype));
    if (m->ndim < 2)
        return lt_error(LT_ERR_SHAPE, "%s: %s has shape %s, expected a matrix or a batch of matrices (>= 2 dims)",
                        name, what, lt_shape_str(m->shape, m->ndim, s, sizeof s));
    if (square && m->shape[m->ndim - 1] != m->shape[m->ndim - 2])
        return lt_error(LT_ERR_SHAPE, "%s: %s has shape %s, expected square matrices", name, what,
                        lt_shape_str(m->shape, m->ndim, s, sizeof s));
    return LT_OK;
}

/* out = batch dims of m then the given trailing sizes. */
static lt_meta batch_shaped(const lt_meta *m, int lead, const int64_t *tail, int ntail)
{
    int64_t shape[LT_MAX_DIMS];
    memcpy(shape, m->shape, sizeof(int64_t) * (size_t)lead);
    if (ntail > 0)
        memcpy(shape + lead, tail, sizeof(int64_t) * (size_t)ntail);
    return lt_meta_make((lt_dtype)m->dtype, shape, lead + ntail);
}

/* B of solve/lstsq: the same dtype and batch dims as A, and m rows. */
static lt_status check_rhs(const char *name, const lt_meta *a, const lt_meta *b)
{
    lt_status st = check_matrix(name, b, "B", false);
    if (st != LT_OK)
        return st;
    char sa[SHAPE_BUF], sb[SHAPE_BUF];
    lt_shape_str(a->shape, a->ndim, sa, sizeof sa);
    lt_shape_str(b->shape, b->ndim, sb, sizeof sb);
    if (a->dtype != b->dtype)
        return lt_error(LT_ERR_DTYPE, "%s: A has dtype %s and B %s, expected one dtype", name,
                        lt_dtype_name((lt_dtype)a->dtype), lt_dtype_name((lt_dtype)b->dtype));
    bool same = a->ndim == b->ndim && b->shape[b->ndim - 2] == a->shape[a->ndim - 2];
    for (int k = 0; same && k < a->ndim - 2; k++)
        same = a->shape[k] == b->shape[k];
    if (!same)
        return lt_error(LT_ERR_SHAPE, "%s: A has shape %s and B %s, expected B [..., %lld, k] with A's batch dims",
                        name, sa, sb, (long long)a->shape[a->ndim - 2]);
    return LT_OK;
}

static lt_status infer_linalg(lt_op op, const lt_meta *in, int nin, const lt_attrs *a, lt_meta *out)
{
    (void)nin;
    const char *name = lt_op_name(op);
    bool square = op != LT_OP_LINALG_QR && op != LT_OP_LINALG_SVD && op != LT_OP_LINALG_SVDVALS &&
                  op != LT_OP_LINALG_LSTSQ;
    lt_status st = check_matrix(name, &in[0], "A", square);
    if (st != LT_OK)
        return st;
    int lead = in[0].ndim - 2;
    int64_t m = in[0].shape[lead], n = in[0].shape[lead + 1], k = m < n ? m : n;
    switch (op) {
    case LT_OP_LINALG_SOLVE:
    case LT_OP_LINALG_LSTSQ:
        if ((st = check_rhs(name, &in[0], &in[1])) != LT_OK)
            return st;
        out[0] = batch_shaped(&in[1], lead, (int64_t[]){n, in[1].shape[lead + 1]}, 2);
        return LT_OK;
    case LT_OP_LINALG_SLOGDET:
        out[0] = out[1] = batch_shaped(&in[0], lead, NULL, 0);
        return LT_OK;
    case LT_OP_LINALG_QR:
        out[0] = batch_shaped(&in[0], lead, (int64_t[]){m, k}, 2);
        out[1] = batch_shaped(&in[0], lead, (int64_t[]){k, n}, 2);
        return LT_OK;
    case LT_OP_LINALG_SVD: /* U [m, k] or, with flag 1, Vh [k, n]; S */
        out[0] = a->flag & 1 ? batch_shaped(&in[0], lead, (int64_t[]){k, n}, 2)
                             : batch_shaped(&in[0], lead, (int64_t[]){m, k}, 2);
        out[1] = batch_shaped(&in[0], lead, &k, 1);
        return LT_OK;
    case LT_OP_LINALG_SVDVALS:
        out[0] = batch_shaped(&in[0], lead, &k, 1);
        return LT_OK;
    case LT_OP_LINALG_EIGH:
        out[0] = batch_shaped(&in[0], lead, &n, 1);
        out[1] = in[0];
        return LT_OK;
    default: /* inv, cholesky */
        out[0] = in[0];
        return LT_OK;
    }
}

void lt_infer_register_linalg(void)
{
    lt_op linalg[] = {LT_OP_LINALG_INV,  LT_OP_LINALG_SOLVE, LT_OP_LINALG_SLOGDET,
                      LT_OP_LINALG_CHOLESKY, LT_OP_LINALG_QR, LT_OP_LINALG_SVD,
                      LT_OP_LINALG_SVDVALS, LT_OP_LINALG_EIGH,  LT_OP_LINALG_LSTSQ};
    for (size_t i = 0; i < sizeof linalg / sizeof linalg[0]; i++)
        lt_op_set_infer(linalg[i], infer_linalg);
}
