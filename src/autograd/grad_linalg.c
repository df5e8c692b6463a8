/*
 * grad_linalg.c - gradient formulas of the LAPACK ops, PyTorch's, written
 * with differentiable public ops (matmul, transpose, tril, the LAPACK ops
 * themselves), so they run eagerly or traced like the forward pass and
 * can be differentiated again. qr, svd (the vectors) and lstsq have none;
 * eigh differentiates its eigenvalues (an eigenvector gradient is refused).
 */
#include "autograd/autograd.h"

#define A (c->in[0])
#define O (c->out[0])

static lt_tensor *mT(lt_tensor *t) { return t ? lt_transpose(t, -1, -2) : NULL; }

/* g broadcast over the last two dims: [...] -> [..., 1, 1]. */
static lt_tensor *as_matrix_scale(lt_tensor *g) { return lt_unsqueeze(lt_unsqueeze(g, -1), -1); }

/* inv: gA = -X^T g X^T with X = A^-1. */
static lt_status inv_grad(const lt_grad_ctx *c, lt_tensor **gin)
{
    lt_tensor *xt = mT(O);
    gin[0] = lt_neg(lt_matmul(lt_matmul(xt, c->gout[0]), xt));
    return lt_grad_done(c, gin);
}

/* solve: X = A^-1 B; gB = A^-T g, gA = -gB X^T. */
static lt_status solve_grad(const lt_grad_ctx *c, lt_tensor **gin)
{
    lt_tensor *in[2] = {mT(A), c->gout[0]};
    lt_tensor *gb = in[0] ? lt_call2(LT_OP_LINALG_SOLVE, in[0], in[1], NULL) : NULL;
    if (c->needs[0])
        gin[0] = gb ? lt_neg(lt_matmul(gb, mT(O))) : NULL;
    if (c->needs[1])
        gin[1] = gb;
    return lt_grad_done(c, gin);
}

/* slogdet: only log|det| has a gradient, g A^-T (the sign is constant). */
static lt_status slogdet_grad(const lt_grad_ctx *c, lt_tensor **gin)
{
    lt_tensor *g = c->gout[1];
    if (!g)
        return lt_grad_done(c, gin);
    gin[0] = lt_mul(as_matrix_scale(g), mT(lt_linalg_inv(A)));
    return lt_grad_done(c, gin);
}

/* Phi(X): the lower triangle of X with its diagonal halved. */
static lt_tensor *phi(lt_tensor *x)
{
    lt_tensor *strict = lt_tril(x, -1);
    return lt_add(strict, lt_mul_scalar(lt_sub(lt_tril(x, 0), strict), 0.5));
}

/* cholesky (A = L L^T): S = L^-T Phi(L^T g) L^-1, gA = (S + S^T) / 2. */
static lt_status cholesky_grad(const lt_grad_ctx *c, lt_tensor **gin)
{
    lt_tensor *linv = lt_linalg_inv(O);
    lt_tensor *s = lt_matmul(lt_matmul(mT(linv), phi(lt_matmul(mT(O), c->gout[0]))), linv);
    gin[0] = s ? lt_mul_scalar(lt_add(s, mT(s)), 0.5) : NULL;
    return lt_grad_done(c, gin);
}

/* svdvals: gA = U diag(g) V^T (U, V recomputed). */
static lt_status svdvals_grad(const lt_grad_ctx *c, lt_tensor **gin)
{
    lt_tensor *s = NULL, *vh = NULL;
    lt_tensor *u = lt_linalg_svd(A, &s, &vh);
    gin[0] = u ? lt_matmul(lt_mul(u, lt_unsqueeze(c->gout[0], -2)), vh) : NULL;
    return lt_grad_done(c, gin);
}

/* eigh: eigenvalues only, gA = V diag(g) V^T. */
static lt_status eigh_grad(const lt_grad_ctx *c, lt_tensor **gin)
{
    if (c->gout[1])
        return lt_error(LT_ERR_UNSUPPORTED, "linalg_eigh: the gradient through the eigenvectors is not "
                                            "supported, only through the eigenvalues");
    lt_tensor *v = c->nout > 1 ? c->out[1] : NULL;
    if (!v)
        lt_linalg_eigh(A, &v);
    if (c->gout[0] && v)
        gin[0] = lt_matmul(lt_mul(v, lt_unsqueeze(c->gout[0], -2)), mT(v));
    return lt_grad_done(c, gin);
}

void lt_grad_register_linalg(void)
{
    lt_grad_set(LT_OP_LINALG_INV, inv_grad);
    lt_grad_set(LT_OP_LINALG_SOLVE, solve_grad);
    lt_grad_set(LT_OP_LINALG_SLOGDET, slogdet_grad);
    lt_grad_set(LT_OP_LINALG_CHOLESKY, cholesky_grad);
    lt_grad_set(LT_OP_LINALG_SVDVALS, svdvals_grad);
    lt_grad_set(LT_OP_LINALG_EIGH, eigh_grad);
}
