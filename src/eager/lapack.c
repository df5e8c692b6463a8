/*
 * lapack.c - eager kernels of the LAPACK ops: inv, solve, slogdet,
 * cholesky, qr, svd, svdvals, eigh and lstsq, through the LAPACK that
 * Debian's OpenBLAS ships (its Fortran entry points, declared below).
 *
 * Each batch matrix is copied into a column-major f64 buffer (f32 inputs
 * are widened: one code path, and results at least as accurate as an f32
 * factorization), factorized, and copied back row-major into f64 outputs
 * that lt_eager_copy casts to the result dtype. The routines are those
 * PyTorch uses (getrf/getrs, potrf, geqrf/orgqr, gesdd, syevd, gelsd), so
 * the sign conventions of Q, R, U, V agree with torch's.
 */
#include "eager/eager.h"

#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

/* LAPACK, Fortran calling convention (trailing hidden string lengths). */
void dgetrf_(const int *m, const int *n, double *a, const int *lda, int *ipiv, int *info);
void dgetrs_(const char *trans, const int *n, const int *nrhs, const double *a, const int *lda, const int *ipiv,
             double *b, const int *ldb, int *info, size_t trans_len);
void dpotrf_(const char *uplo, const int *n, double *a, const int *lda, int *info, size_t uplo_len);
void dgeqrf_(const int *m, const int *n, double *a, const int *lda, double *tau, double *work, const int *lwork,
             int *info);
void dorgqr_(const int *m, const int *n, const int *k, double *a, const int *lda, const double *tau, double *work,
             const int *lwork, int *info);
void dgesdd_(const char *jobz, const int *m, const int *n, double *a, const int *lda, double *s, double *u,
             const int *ldu, double *vt, const int *ldvt, double *work, const int *lwork, int *iwork, int *info,
             size_t jobz_len);
void dsyevd_(const char *jobz, const char *uplo, const int *n, double *a, const int *lda, double *w, double *work,
             const int *lwork, int *iwork, const int *liwork, int *info, size_t jobz_len, size_t uplo_len);
void dgelsd_(const int *m, const int *n, const int *nrhs, double *a, const int *lda, double *b, const int *ldb,
             double *s, const double *rcond, int *rank, double *work, const int *lwork, int *iwork, int *info);

/* One job: the op, its name, the batch count and the matrix sizes. */
typedef struct {
    lt_op op;
    const char *name;
    int64_t batch;
    int m, n;     /* A is m x n */
    int k;        /* columns of B (solve, lstsq) */
    bool single;  /* the input was f32 (lstsq's rcond follows it) */
    bool want_vh; /* svd: output 0 is Vh rather than U */
} lapack_job;

/* Row-major m x n at src into column-major dst (leading dimension ld). */
static void to_colmajor(const double *src, int m, int n, double *dst, int ld)
{
    for (int i = 0; i < m; i++)
        for (int j = 0; j < n; j++)
            dst[i + (size_t)j * (size_t)ld] = src[(size_t)i * (size_t)n + (size_t)j];
}

/* Column-major m x n at src (leading dimension ld) into row-major dst. */
static void from_colmajor(const double *src, int ld, int m, int n, double *dst)
{
    for (int i = 0; i < m; i++)
        for (int j = 0; j < n; j++)
            dst[(size_t)i * (size_t)n + (size_t)j] = src[i + (size_t)j * (size_t)ld];
}

static int max_int(int a, int b) { return a > b ? a : b; }
static int min_int(int a, int b) { return a < b ? a : b; }

/* Workspace of `count` doubles / ints, grown as needed (freed by the caller). */
typedef struct {
    double *d;
    size_t nd;
    int *i;
    size_t ni;
} workspace;

static lt_status reserve(workspace *w, size_t nd, size_t ni, const char *name)
{
    if (nd > w->nd) {
        double *p = realloc(w->d, sizeof(double) * nd);
        if (!p)
            return lt_error(LT_ERR_MEMORY, "%s: out of memory for a %zu-double workspace", name, nd);
        w->d = p, w->nd = nd;
    }
    if (ni > w->ni) {
        int *p = realloc(w->i, sizeof(int) * ni);
        if (!p)
            return lt_error(LT_ERR_MEMORY, "%s: out of memory for a %zu-int workspace", name, ni);
        w->i = p, w->ni = ni;
    }
    return LT_OK;
}

static lt_status lapack_failed(const lapack_job *j, int64_t b, const char *routine, int info)
{
    return lt_error(LT_ERR_ARGUMENT, "%s: LAPACK %s failed on batch matrix %lld (info %d)", j->name, routine,
                    (long long)b, info);
}

/* ---- inv, solve ------------------------------------------------------------------ */

/* X = A^-1 B for one n x n A and n x k B (row-major); identity B for inv. */
static lt_status solve_one(const lapack_job *j, int64_t b, const double *a, const double *rhs, double *x,
                           workspace *w)
{
    int n = j->n, k = j->op == LT_OP_LINALG_INV ? n : j->k, ld = max_int(n, 1), info = 0;
    lt_status st = reserve(w, (size_t)ld * (size_t)(n + k), (size_t)ld, j->name);
    if (st != LT_OK)
        return st;
    double *lu = w->d, *xb = w->d + (size_t)ld * (size_t)n;
    to_colmajor(a, n, n, lu, ld);
    if (rhs)
        to_colmajor(rhs, n, k, xb, ld);
    else
        for (int r = 0; r < n; r++)
            for (int c = 0; c < n; c++)
                xb[r + (size_t)c * (size_t)ld] = r == c;
    dgetrf_(&n, &n, lu, &ld, w->i, &info);
    if (info > 0)
        return lt_error(LT_ERR_ARGUMENT, "%s: batch matrix %lld is singular (U[%d, %d] of its LU factorization is "
                        "zero), expected an invertible matrix", j->name, (long long)b, info - 1, info - 1);
    if (info < 0)
        return lapack_failed(j, b, "getrf", info);
    dgetrs_("N", &n, &k, lu, &ld, w->i, xb, &ld, &info, 1);
    if (info != 0)
        return lapack_failed(j, b, "getrs", info);
    from_colmajor(xb, ld, n, k, x);
    return LT_OK;
}

/* ---- slogdet ------------------------------------------------------------------ */

static lt_status slogdet_one(const lapack_job *j, int64_t b, const double *a, double *sign, double *logabs,
                             workspace *w)
{
    int n = j->n, ld = max_int(n, 1), info = 0;
    lt_status st = reserve(w, (size_t)ld * (size_t)n, (size_t)ld, j->name);
    if (st != LT_OK)
        return st;
    to_colmajor(a, n, n, w->d, ld);
    dgetrf_(&n, &n, w->d, &ld, w->i, &info);
    if (info < 0)
        return lapack_failed(j, b, "getrf", info);
    double s = 1, l = 0;
    for (int i = 0; i < n; i++) {
        double d = w->d[i + (size_t)i * (size_t)ld];
        if (w->i[i] != i + 1)
            s = -s;
        if (d < 0)
            s = -s;
        l += log(fabs(d));
    }
    bool singular = info > 0;
    *sign = singular ? 0 : s;
    *logabs = singular ? -INFINITY : l;
    return LT_OK;
}

/* ---- cholesky -------------------------------------------------------------------- */

static lt_status cholesky_one(const lapack_job *j, int64_t b, const double *a, double *l, workspace *w)
{
    int n = j->n, ld = max_int(n, 1), info = 0;
    lt_status st = reserve(w, (size_t)ld * (size_t)n, 0, j->name);
    if (st != LT_OK)
        return st;
    to_colmajor(a, n, n, w->d, ld);
    dpotrf_("L", &n, w->d, &ld, &info, 1);
    if (info > 0)
        return lt_error(LT_ERR_ARGUMENT, "%s: batch matrix %lld is not positive-definite (the leading minor of "
                        "order %d is not), expected a symmetric positive-definite matrix", j->name, (long long)b,
                        info);
    if (info < 0)
        return lapack_failed(j, b, "potrf", info);
    from_colmajor(w->d, ld, n, n, l);
    for (int r = 0; r < n; r++)
        for (int c = r + 1; c < n; c++)
            l[(size_t)r * (size_t)n + (size_t)c] = 0;
    return LT_OK;
}

/* ---- qr -------------------------------------------------------------------------- */

static lt_status qr_one(const lapack_job *j, int64_t b, const double *a, double *q, double *r, workspace *w)
{
    int m = j->m, n = j->n, k = min_int(m, n), ld = max_int(m, 1), info = 0, lwork = -1;
    if (k == 0) { /* Q [m, 0], R [0, n]: nothing to write */
        return LT_OK;
    }
    double query = 0;
    dgeqrf_(&m, &n, NULL, &ld, NULL, &query, &lwork, &info);
    int lw1 = (int)query;
    dorgqr_(&m, &k, &k, NULL, &ld, NULL, &query, &lwork, &info);
    lwork = max_int(max_int(lw1, (int)query), max_int(n, 1));
    lt_status st = reserve(w, (size_t)ld * (size_t)n + (size_t)k + (size_t)lwork, 0, j->name);
    if (st != LT_OK)
        return st;
    double *f = w->d, *tau = f + (size_t)ld * (size_t)n, *work = tau + k;
    to_colmajor(a, m, n, f, ld);
    dgeqrf_(&m, &n, f, &ld, tau, work, &lwork, &info);
    if (info != 0)
        return lapack_failed(j, b, "geqrf", info);
    for (int i = 0; i < k; i++) /* R: the upper triangle of the first k rows */
        for (int c = 0; c < n; c++)
            r[(size_t)i * (size_t)n + (size_t)c] = c >= i ? f[i + (size_t)c * (size_t)ld] : 0;
    dorgqr_(&m, &k, &k, f, &ld, tau, work, &lwork, &info);
    if (info != 0)
        return lapack_failed(j, b, "orgqr", info);
    from_colmajor(f, ld, m, k, q);
    return LT_OK;
}

/* ---- svd, svdvals ---------------------------------------------------------------- */

/* Reduced SVD of one m x n matrix: the values s, and u or vh when not
 * NULL (both NULL: the values only). */
static lt_status svd_one(const lapack_job *j, int64_t b, const double *a, double *u_out, double *s,
                         double *vh, workspace *w)
{
    int m = j->m, n = j->n, k = min_int(m, n), lda = max_int(m, 1), info = 0, lwork = -1;
    if (k == 0)
        return LT_OK;
    bool u = u_out || vh;
    const char *jobz = u ? "S" : "N";
    int ldu = max_int(m, 1), ldvt = max_int(k, 1);
    double query = 0;
    dgesdd_(jobz, &m, &n, NULL, &lda, NULL, NULL, &ldu, NULL, &ldvt, &query, &lwork, NULL, &info, 1);
    lwork = max_int((int)query, 1);
    size_t mats = (size_t)lda * (size_t)n + (u ? (size_t)ldu * (size_t)k + (size_t)ldvt * (size_t)n : 0);
    lt_status st = reserve(w, mats + (size_t)k + (size_t)lwork, 8 * (size_t)k, j->name);
    if (st != LT_OK)
        return st;
    double *f = w->d, *uc = f + (size_t)lda * (size_t)n, *vc = u ? uc + (size_t)ldu * (size_t)k : uc;
    double *sv = u ? vc + (size_t)ldvt * (size_t)n : uc, *work = sv + k;
    to_colmajor(a, m, n, f, lda);
    dgesdd_(jobz, &m, &n, f, &lda, sv, u ? uc : NULL, &ldu, u ? vc : NULL, &ldvt, work, &lwork, w->i, &info, 1);
    if (info > 0)
        return lt_error(LT_ERR_ARGUMENT, "%s: the SVD of batch matrix %lld did not converge (its input may hold "
                        "NaN or inf)", j->name, (long long)b);
    if (info < 0)
        return lapack_failed(j, b, "gesdd", info);
    memcpy(s, sv, sizeof(double) * (size_t)k);
    if (u_out)
        from_colmajor(uc, ldu, m, k, u_out);
    if (vh)
        from_colmajor(vc, ldvt, k, n, vh);
    return LT_OK;
}

/* ---- eigh ------------------------------------------------------------------------ */

static lt_status eigh_one(const lapack_job *j, int64_t b, const double *a, double *vals, double *vecs,
                          workspace *w)
{
    int n = j->n, ld = max_int(n, 1), info = 0, lwork = -1, liwork = -1, iquery = 0;
    if (n == 0)
        return LT_OK;
    double query = 0;
    dsyevd_("V", "L", &n, NULL, &ld, NULL, &query, &lwork, &iquery, &liwork, &info, 1, 1);
    lwork = max_int((int)query, 1);
    liwork = max_int(iquery, 1);
    lt_status st = reserve(w, (size_t)ld * (size_t)n + (size_t)lwork, (size_t)liwork, j->name);
    if (st != LT_OK)
        return st;
    double *f = w->d, *work = f + (size_t)ld * (size_t)n;
    to_colmajor(a, n, n, f, ld);
    dsyevd_("V", "L", &n, f, &ld, vals, work, &lwork, w->i, &liwork, &info, 1, 1);
    if (info > 0)
        return lt_error(LT_ERR_ARGUMENT, "%s: the eigendecomposition of batch matrix %lld did not converge (its "
                        "input may hold NaN or inf)", j->name, (long long)b);
    if (info < 0)
        return lapack_failed(j, b, "syevd", info);
    from_colmajor(f, ld, n, n, vecs);
    return LT_OK;
}

/* ---- lstsq ----------------------------------------------------------------------- */

/* Minimum-norm least-squares solution X [n, k] of A [m, n] X = B [m, k];
 * singular values below rcond * the largest count as zero (rcond: the
 * input dtype's epsilon times max(m, n), torch's default). */
static lt_status lstsq_one(const lapack_job *j, int64_t b, const double *a, const double *rhs, double *x,
                           workspace *w)
{
    int m = j->m, n = j->n, k = j->k, lda = max_int(m, 1), ldb = max_int(max_int(m, n), 1), info = 0;
    int lwork = -1, rank = 0, iquery = 0;
    if (m == 0 || n == 0 || k == 0) { /* an empty system: X is zero (when it has elements) */
        if ((size_t)n * (size_t)k > 0)
            memset(x, 0, sizeof(double) * (size_t)n * (size_t)k);
        return LT_OK;
    }
    double rcond = (j->single ? FLT_EPSILON : DBL_EPSILON) * max_int(m, n), query = 0;
    dgelsd_(&m, &n, &k, NULL, &lda, NULL, &ldb, NULL, &rcond, &rank, &query, &lwork, &iquery, &info);
    lwork = max_int((int)query, 1);
    size_t nd = (size_t)lda * (size_t)n + (size_t)ldb * (size_t)k + (size_t)min_int(m, n) + (size_t)lwork;
    lt_status st = reserve(w, nd, (size_t)max_int(iquery, 1), j->name);
    if (st != LT_OK)
        return st;
    double *f = w->d, *xb = f + (size_t)lda * (size_t)n, *sv = xb + (size_t)ldb * (size_t)k;
    double *work = sv + min_int(m, n);
    to_colmajor(a, m, n, f, lda);
    memset(xb, 0, sizeof(double) * (size_t)ldb * (size_t)k);
    to_colmajor(rhs, m, k, xb, ldb);
    dgelsd_(&m, &n, &k, f, &lda, xb, &ldb, sv, &rcond, &rank, work, &lwork, w->i, &info);
    if (info > 0)
        return lt_error(LT_ERR_ARGUMENT, "%s: the SVD of batch matrix %lld did not converge (its input may hold "
                        "NaN or inf)", j->name, (long long)b);
    if (info < 0)
        return lapack_failed(j, b, "gelsd", info);
    from_colmajor(xb, ldb, n, k, x);
    return LT_OK;
}

/* ---- the kernel ------------------------------------------------------------------ */

#define MAX_IO 2 /* inputs and outputs per op */

static const double *matrix(lt_tensor *t, int64_t b)
{
    int64_t per = t->ndim >= 2 ? t->shape[t->ndim - 1] * t->shape[t->ndim - 2] : 1;
    return (const double *)(void *)lt_tensor_ptr(t) + b * per;
}

static double *slot(lt_tensor *t, int64_t b)
{
    int64_t per = 1;
    for (int k = t->ndim - 1; k >= 0 && k >= t->ndim - 2; k--)
        per *= t->shape[k];
    return (double *)(void *)lt_tensor_ptr(t) + b * per;
}

/* Runs the job's routine on batch matrix b. */
static lt_status run_one(const lapack_job *j, int64_t b, lt_tensor *const *x, lt_tensor *const *y,
                         workspace *w)
{
    const double *a = matrix(x[0], b);
    switch (j->op) {
    case LT_OP_LINALG_INV:
        return solve_one(j, b, a, NULL, slot(y[0], b), w);
    case LT_OP_LINALG_SOLVE:
        return solve_one(j, b, a, matrix(x[1], b), slot(y[0], b), w);
    case LT_OP_LINALG_SLOGDET:
        return slogdet_one(j, b, a, (double *)(void *)lt_tensor_ptr(y[0]) + b,
                           (double *)(void *)lt_tensor_ptr(y[1]) + b, w);
    case LT_OP_LINALG_CHOLESKY:
        return cholesky_one(j, b, a, slot(y[0], b), w);
    case LT_OP_LINALG_QR:
        return qr_one(j, b, a, slot(y[0], b), slot(y[1], b), w);
    case LT_OP_LINALG_SVD:
        return svd_one(j, b, a, j->want_vh ? NULL : slot(y[0], b),
                       (double *)(void *)lt_tensor_ptr(y[1]) + b * min_int(j->m, j->n),
                       j->want_vh ? slot(y[0], b) : NULL, w);
    case LT_OP_LINALG_SVDVALS:
        return svd_one(j, b, a, NULL, (double *)(void *)lt_tensor_ptr(y[0]) + b * min_int(j->m, j->n), NULL, w);
    case LT_OP_LINALG_EIGH:
        return eigh_one(j, b, a, (double *)(void *)lt_tensor_ptr(y[0]) + b * j->n, slot(y[1], b), w);
    case LT_OP_LINALG_LSTSQ:
        return lstsq_one(j, b, a, matrix(x[1], b), slot(y[0], b), w);
    default:
        return lt_error(LT_ERR_ARGUMENT, "%s: not a LAPACK op", j->name);
    }
}

static lt_status check_int_sizes(const lapack_job *j, const lt_tensor *a)
{
    int64_t m = a->shape[a->ndim - 2], n = a->shape[a->ndim - 1];
    if (m > 46340 || n > 46340) /* LAPACK's int leading dimensions and m * n */
        return lt_error(LT_ERR_SHAPE, "%s: matrices of %lld x %lld are larger than the LAPACK build allows", j->name,
                        (long long)m, (long long)n);
    return LT_OK;
}

static lt_status k_lapack(lt_op op, lt_tensor *const *in, int nin, const lt_attrs *a, const lt_meta *om,
                          lt_tensor **out)
{
    const char *name = lt_op_name(op);
    int nout = lt_op_infos[op].nout;
    lt_tensor *x[MAX_IO] = {NULL, NULL}, *y[MAX_IO] = {NULL, NULL};
    lapack_job j = {op, name, 1, 0, 0, 0, in[0]->dtype == LT_F32, (a->flag & 1) != 0};
    lt_status st = check_int_sizes(&j, in[0]);
    for (int i = 0; i < nin && st == LT_OK; i++)
        if (!(x[i] = lt_eager_as_contiguous(in[i], LT_F64, name)))
            st = lt_last_status();
    for (int k = 0; k < nout && st == LT_OK; k++) {
        lt_meta m = om[k];
        m.dtype = LT_F64;
        m.weak = 0;
        if (!(y[k] = lt_tensor_alloc(&m, in[0]->device, name)))
            st = lt_last_status();
    }
    if (st == LT_OK) {
        int nd = in[0]->ndim;
        j.m = (int)in[0]->shape[nd - 2], j.n = (int)in[0]->shape[nd - 1];
        j.k = nin > 1 ? (int)in[1]->shape[nd - 1] : 0;
        for (int d = 0; d < nd - 2; d++)
            j.batch *= in[0]->shape[d];
        workspace w = {NULL, 0, NULL, 0};
        for (int64_t b = 0; b < j.batch && st == LT_OK; b++)
            st = run_one(&j, b, x, y, &w);
        free(w.d);
        free(w.i);
    }
    for (int k = 0; k < nout && st == LT_OK; k++)
        lt_eager_copy(out[k], y[k]);
    for (int i = 0; i < MAX_IO; i++) {
        if (x[i])
            lt_tensor_unref(x[i]);
        if (y[i])
            lt_tensor_unref(y[i]);
    }
    return st;
}

void lt_eager_register_lapack(void)
{
    lt_op ops[] = {LT_OP_LINALG_INV,     LT_OP_LINALG_SOLVE, LT_OP_LINALG_SLOGDET,
                   LT_OP_LINALG_CHOLESKY, LT_OP_LINALG_QR,   LT_OP_LINALG_SVD,
                   LT_OP_LINALG_SVDVALS,  LT_OP_LINALG_EIGH, LT_OP_LINALG_LSTSQ};
    for (size_t i = 0; i < sizeof ops / sizeof ops[0]; i++)
        lt_eager_set_kernel(ops[i], k_lapack);
}
