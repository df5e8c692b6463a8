/*
 * matmul.c - the eager matmul kernel (torch.matmul semantics).
 *
 * Both operands are seen as batches of matrices: A [..., M, K] and
 * B [..., K, N], where a 1-D A is one row [1, K] and a 1-D B one column
 * [K, 1]; batch dims broadcast against the output's batch dims (stride 0).
 *
 *  - f32/f64 go to cblas_sgemm/dgemm. An operand whose matrix dims are
 *    row-major or column-major (a transposed view) is passed as is, with
 *    CblasTrans and its leading dimension; other strides are copied to a
 *    contiguous buffer first. When B is shared by every batch and A's rows
 *    are evenly spaced (a contiguous [..., M, K]), the whole batch folds into
 *    one gemm with M' = batch * M; otherwise one gemm runs per batch item,
 *    small items spread over the threads, one single-threaded gemm each.
 *  - bf16/f16 compute through f32 copies and convert the result back.
 *  - Integers use a plain i-k-j loop on int64 copies, accumulating with
 *    unsigned (wrapping) arithmetic so overflow is defined.
 */
#include "eager/nn_kernels.h"

#include <pthread.h>
#include <string.h>

/* ---- BLAS on the library's pool ------------------------------------------ */

/* Multiply-adds below which a product runs as one call: splitting it would
 * cost more in hand-off than it gains. */
#define GEMM_SPLIT_WORK ((int64_t)1 << 18)
/* At most this many blocks per product: every block packs its own copy of
 * the operand that is not split, so many small blocks spend their time
 * packing (measured on the MLP step: 64 blocks of 16 columns cost 1.6x the
 * CPU time of one call, 8 blocks 1.03x). */
#define GEMM_MAX_BLOCKS 8

typedef struct gemm_job {
    lt_dtype dt;
    bool ta, tb, by_rows, accumulate;
    double alpha;
    int64_t m, n, k, lda, ldb, ldc;
    const char *a, *b;
    char *c;
} gemm_job;

/* C = alpha op(A) op(B), or C += alpha op(A) op(B) when accumulate. */
static void gemm_call(lt_dtype dt, bool trans_a, bool trans_b, bool accumulate, double alpha, int64_t m, int64_t n,
                      int64_t k, const void *a, int64_t lda, const void *b, int64_t ldb, void *c, int64_t ldc)
{
    if (dt != LT_F64) {
        lt_sgemm(trans_a, trans_b, m, n, k, (float)alpha, (const float *)a, lda, (const float *)b, ldb,
                 accumulate ? 1.0f : 0.0f, (float *)c, ldc);
        return;
    }
    /* beta = 1 on zeros, as lt_sgemm does for OpenBLAS (sgemm.c) */
    if (!accumulate)
        lt_zero_matrix(c, m, n, ldc, sizeof(double));
    cblas_dgemm(CblasRowMajor, trans_a ? CblasTrans : CblasNoTrans, trans_b ? CblasTrans : CblasNoTrans, (blasint)m,
                (blasint)n, (blasint)k, alpha, (const double *)a, (blasint)lda, (const double *)b, (blasint)ldb, 1.0,
                (double *)c, (blasint)ldc);
}

/* Rows [r0, r1) of C (by_rows) or columns [r0, r1). */
static void gemm_block(void *ctx, int64_t r0, int64_t r1, int64_t chunk)
{
    (void)chunk;
    const gemm_job *g = ctx;
    size_t es = lt_dtype_size(g->dt);
    if (g->by_rows) {
        const char *a = g->a + (size_t)(g->ta ? r0 : r0 * g->lda) * es;
        gemm_call(g->dt, g->ta, g->tb, g->accumulate, g->alpha, r1 - r0, g->n, g->k, a, g->lda, g->b, g->ldb,
                  g->c + (size_t)(r0 * g->ldc) * es, g->ldc);
    } else {
        const char *b = g->b + (size_t)(g->tb ? r0 * g->ldb : r0) * es;
        gemm_call(g->dt, g->ta, g->tb, g->accumulate, g->alpha, g->m, r1 - r0, g->k, g->a, g->lda, b, g->ldb,
                  g->c + (size_t)r0 * es, g->ldc);
    }
}

/* BLAS itself runs single-threaded: the pool does the splitting, so that
 * one set of threads, whose waiting the library controls, runs everything.
 * The OpenBLAS linked is the pthreads build (CMakeLists.txt): unlike the
 * serial and OpenMP builds, it is safe to call from several non-OpenMP
 * threads at once, which the pool's blocks do. */
static void set_blas_single_threaded(void) { openblas_set_num_threads(1); }

static void blas_single_threaded(void)
{
    static pthread_once_t once = PTHREAD_ONCE_INIT;
    pthread_once(&once, set_blas_single_threaded);
}

/* The most blocks a product is split into. OpenBLAS rounds differently
 * for different block shapes, so its split depends on the shapes only
 * (GEMM_MAX_BLOCKS), never on the thread count. oneDNN computes every
 * element of C in the same order whatever block of rows or columns a call
 * is given (test_sgemm checks the bits with 1, 2, 3 and 5 threads), and
 * every block packs its own copy of the other operand: one block per
 * thread. Single-threaded, 2 blocks instead of 8 cut the MLP step's work
 * by 20% (2.79 -> 2.20 ms) and the GPT's and transformer block's by 2-3%. */
static int64_t max_gemm_blocks(lt_dtype dt)
{
    if (dt == LT_F64 || strcmp(lt_sgemm_library(), "onednn") != 0)
        return GEMM_MAX_BLOCKS;
    int threads = lt_pool_threads();
    return threads > 1 ? threads : 1;
}

/* C = alpha op(A) op(B), or C += alpha op(A) op(B) when accumulate, on the
 * pool. */
static void blas_gemm(lt_dtype dt, bool trans_a, bool trans_b, bool accumulate, double alpha, int64_t m, int64_t n,
                      int64_t k, const void *a, int64_t lda, const void *b, int64_t ldb, void *c, int64_t ldc)
{
    blas_single_threaded();
    double work = (double)m * (double)n * (double)(k > 0 ? k : 1); /* double: cannot overflow */
    /* Results must be the same bits with any number of threads: see
     * max_gemm_blocks. */
    if (work < 2.0 * GEMM_SPLIT_WORK) {
        gemm_call(dt, trans_a, trans_b, accumulate, alpha, m, n, k, a, lda, b, ldb, c, ldc);
        return;
    }
    /* Split the longer side, in blocks that keep BLAS' micro-kernels whole. */
    gemm_job g = {dt, trans_a, trans_b, m >= n, accumulate, alpha, m, n, k, lda, ldb, ldc, a, b, c};
    int64_t side = g.by_rows ? m : n;
    double per_line = work / (double)side;
    int64_t grain = (int64_t)((double)GEMM_SPLIT_WORK / per_line);
    int64_t max_blocks = max_gemm_blocks(dt);
    int64_t fewest = (side + max_blocks - 1) / max_blocks;
    grain = grain > fewest ? grain : fewest;
    lt_parallel_for(side, grain > 16 ? grain : 16, 16, gemm_block, &g);
}

void lt_blas_gemm(lt_dtype dt, bool trans_a, bool trans_b, int64_t m, int64_t n, int64_t k, const void *a,
                  int64_t lda, const void *b, int64_t ldb, void *c, int64_t ldc)
{
    blas_gemm(dt, trans_a, trans_b, false, 1.0, m, n, k, a, lda, b, ldb, c, ldc);
}

void lt_blas_gemm_acc(lt_dtype dt, bool trans_a, bool trans_b, int64_t m, int64_t n, int64_t k, const void *a,
                      int64_t lda, const void *b, int64_t ldb, void *c, int64_t ldc)
{
    blas_gemm(dt, trans_a, trans_b, true, 1.0, m, n, k, a, lda, b, ldb, c, ldc);
}

/* One operand seen as a batch of matrices. Strides are in elements. */
typedef struct mat_view {
    const char *base;        /* element (0, 0) of batch item 0 */
    size_t elem;             /* element size in bytes */
    int64_t rows, cols;
    int64_t row_stride, col_stride;
    int64_t batch_stride[LT_MAX_DIMS]; /* per output batch dim; 0: broadcast */
    bool trans;              /* BLAS layout: stored column-major */
    int64_t ld;              /* BLAS leading dimension */
} mat_view;

/* The output's batch dims: everything before the matrix dims. */
typedef struct batch_shape {
    int ndim;
    int64_t shape[LT_MAX_DIMS];
    int64_t count;
} batch_shape;

static batch_shape batch_of(const lt_tensor *a, const lt_tensor *b, const lt_tensor *out)
{
    batch_shape bs;
    bs.ndim = out->ndim - (a->ndim >= 2) - (b->ndim >= 2);
    memcpy(bs.shape, out->shape, sizeof(int64_t) * (size_t)bs.ndim);
    bs.count = lt_shape_numel(bs.shape, bs.ndim);
    return bs;
}

/* Describes t as operand A (is_a) or B, broadcast to the batch shape. */
static mat_view view_of(const lt_tensor *t, bool is_a, const batch_shape *bs)
{
    mat_view v;
    memset(&v, 0, sizeof v);
    v.base = lt_tensor_ptr(t);
    v.elem = lt_dtype_size((lt_dtype)t->dtype);
    if (t->ndim == 1) {
        v.rows = is_a ? 1 : t->shape[0];
        v.cols = is_a ? t->shape[0] : 1;
        v.row_stride = is_a ? 0 : t->strides[0];
        v.col_stride = is_a ? t->strides[0] : 0;
    } else {
        v.rows = t->shape[t->ndim - 2];
        v.cols = t->shape[t->ndim - 1];
        v.row_stride = t->strides[t->ndim - 2];
        v.col_stride = t->strides[t->ndim - 1];
    }
    int tb = t->ndim > 2 ? t->ndim - 2 : 0;
    for (int d = 0; d < bs->ndim; d++) {
        int td = d - (bs->ndim - tb);
        v.batch_stride[d] = td >= 0 && t->shape[td] != 1 ? t->strides[td] : 0;
    }
    return v;
}

/* Picks a BLAS layout for v: row-major (unit column stride) or
 * column-major (unit row stride) with a valid leading dimension. Strides of
 * size-1 dims do not matter. Returns false if neither fits. */
static bool choose_layout(mat_view *v)
{
    int64_t min_row_ld = v->cols > 1 ? v->cols : 1, min_col_ld = v->rows > 1 ? v->rows : 1;
    if ((v->cols == 1 || v->col_stride == 1) && (v->rows == 1 || v->row_stride >= min_row_ld)) {
        v->trans = false;
        v->ld = v->rows == 1 ? min_row_ld : v->row_stride;
    } else if ((v->rows == 1 || v->row_stride == 1) && (v->cols == 1 || v->col_stride >= min_col_ld)) {
        v->trans = true;
        v->ld = v->cols == 1 ? min_col_ld : v->col_stride;
    } else {
        return false;
    }
    return lt_blas_fits(v->ld);
}

/* Byte offset of batch item `index` of v. */
static int64_t batch_offset(const mat_view *v, const batch_shape *bs, int64_t index)
{
    int64_t off = 0;
    for (int d = bs->ndim - 1; d >= 0; d--) {
        off += (index % bs->shape[d]) * v->batch_stride[d];
        index /= bs->shape[d];
    }
    return off * (int64_t)v->elem;
}

/*
 * Whether every row of A over the whole batch is evenly spaced (and B is
 * the same for every item), so the batch folds into one gemm of
 * count * rows rows. *lda receives the spacing.
 */
static bool can_fold_batch(const mat_view *A, const mat_view *B, const batch_shape *bs, int64_t *lda)
{
    if (bs->count <= 1 || A->trans)
        return false;
    for (int d = 0; d < bs->ndim; d++)
        if (B->batch_stride[d] != 0)
            return false;
    int64_t stride = 0, count = 1;
    bool have = false;
    for (int d = bs->ndim; d >= 0; d--) { /* d == bs->ndim stands for the rows */
        int64_t size = d == bs->ndim ? A->rows : bs->shape[d];
        int64_t st = d == bs->ndim ? A->row_stride : A->batch_stride[d];
        if (size == 1)
            continue;
        if (!have) {
            stride = st;
            have = true;
        } else if (st != stride * count) {
            return false;
        }
        count *= size;
    }
    *lda = have ? stride : (A->cols > 1 ? A->cols : 1);
    return *lda >= (A->cols > 1 ? A->cols : 1) && lt_blas_fits(*lda) && lt_blas_fits(bs->count * A->rows);
}

/* Largest m * n * k of one gemm of a batch that runs on a single thread
 * with the batch items spread over the threads (a 128 x 128 x 256 product;
 * bigger ones are split by BLAS itself). */
#define SMALL_GEMM_WORK (128.0 * 128.0 * 256.0)

/* Makes *t a contiguous tensor of dtype dt (replacing the reference the
 * caller holds). */
static lt_status make_contiguous(lt_tensor **t, lt_dtype dt)
{
    lt_tensor *c = lt_eager_as_contiguous(*t, dt, "matmul");
    if (!c)
        return lt_last_status();
    lt_tensor_unref(*t);
    *t = c;
    return LT_OK;
}

/* Float path: a and b (owned references, f32 or f64 = dt) into c
 * (contiguous, dtype dt). May replace a and b with contiguous copies. */
/* One gemm per batch item, for items [i0, i1). */
typedef struct batch_job {
    const mat_view *A, *B;
    const batch_shape *bs;
    lt_dtype dt;
    int64_t m, n, k;
    char *out;
    size_t elem;
} batch_job;

static void gemm_items(void *ctx, int64_t i0, int64_t i1, int64_t chunk)
{
    (void)chunk;
    const batch_job *j = ctx;
    const mat_view *A = j->A, *B = j->B;
    for (int64_t i = i0; i < i1; i++) {
        const char *pa = A->base + batch_offset(A, j->bs, i), *pb = B->base + batch_offset(B, j->bs, i);
        lt_blas_gemm(j->dt, A->trans, B->trans, j->m, j->n, j->k, pa, A->ld, pb, B->ld,
                     j->out + (size_t)(i * j->m * j->n) * j->elem, j->n);
    }
}

static lt_status matmul_blas(lt_tensor **a, lt_tensor **b, lt_tensor *c, lt_dtype dt, const batch_shape *bs)
{
    mat_view A = view_of(*a, true, bs), B = view_of(*b, false, bs);
    lt_status st;
    if (!choose_layout(&A)) {
        if ((st = make_contiguous(a, dt)) != LT_OK)
            return st;
        A = view_of(*a, true, bs);
        choose_layout(&A);
    }
    if (!choose_layout(&B)) {
        if ((st = make_contiguous(b, dt)) != LT_OK)
            return st;
        B = view_of(*b, false, bs);
        choose_layout(&B);
    }
    int64_t m = A.rows, k = A.cols, n = B.cols;
    if (!lt_blas_fits(m) || !lt_blas_fits(n) || !lt_blas_fits(k) || !lt_blas_fits(A.ld) || !lt_blas_fits(B.ld))
        return lt_error(LT_ERR_UNSUPPORTED, "matmul: matrix of %lld x %lld x %lld is too large for BLAS",
                        (long long)m, (long long)k, (long long)n);
    char *out = lt_tensor_ptr(c);
    size_t elem = lt_dtype_size(dt);
    int64_t lda;
    if (can_fold_batch(&A, &B, bs, &lda)) {
        lt_blas_gemm(dt, false, B.trans, bs->count * m, n, k, A.base, lda, B.base, B.ld, out, n);
        return LT_OK;
    }
    /* Many small gemms: one thread per batch item beats every gemm being
     * split over all threads (OpenBLAS' OpenMP build runs a call made inside
     * a parallel region on the calling thread alone). */
    double item_work = (double)m * (double)n * (double)k;
    bool by_item = bs->count > 1 && item_work <= SMALL_GEMM_WORK &&
                   item_work * (double)bs->count >= LT_PARALLEL_GRAIN;
    batch_job j = {&A, &B, bs, dt, m, n, k, out, elem};
    lt_parallel_for(bs->count, by_item ? 1 : bs->count, 1, gemm_items, &j);
    return LT_OK;
}

/* Integer path: a and b are contiguous int64; c is contiguous int64. Sums
 * wrap modulo 2^64 like PyTorch's integer overflow. */
typedef struct int_job {
    mat_view A, B;
    const batch_shape *bs;
    int64_t m, n, k;
    uint64_t *out;
} int_job;

static void int_rows(void *ctx, int64_t r0, int64_t r1, int64_t chunk)
{
    (void)chunk;
    const int_job *j = ctx;
    int64_t m = j->m, n = j->n, k = j->k;
    for (int64_t r = r0; r < r1; r++) {
        int64_t item = r / m, i = r % m;
        const int64_t *pa = (const int64_t *)(j->A.base + batch_offset(&j->A, j->bs, item)) + i * j->A.row_stride;
        const int64_t *pb = (const int64_t *)(j->B.base + batch_offset(&j->B, j->bs, item));
        uint64_t *row = j->out + r * n;
        for (int64_t c = 0; c < n; c++)
            row[c] = 0;
        for (int64_t p = 0; p < k; p++) {
            uint64_t av = (uint64_t)pa[p * j->A.col_stride];
            const int64_t *brow = pb + p * j->B.row_stride;
            for (int64_t c = 0; c < n; c++)
                row[c] += av * (uint64_t)brow[c];
        }
    }
}

static void matmul_int(const lt_tensor *a, const lt_tensor *b, lt_tensor *c, const batch_shape *bs)
{
    int_job j = {.A = view_of(a, true, bs), .B = view_of(b, false, bs), .bs = bs};
    j.m = j.A.rows, j.k = j.A.cols, j.n = j.B.cols;
    j.out = (uint64_t *)lt_tensor_ptr(c);
    double row_work = (double)j.n * (double)(j.k > 0 ? j.k : 1); /* double: cannot overflow */
    int64_t grain = row_work >= LT_PARALLEL_GRAIN ? 1 : (int64_t)(LT_PARALLEL_GRAIN / row_work);
    lt_parallel_for(bs->count * j.m, grain, 1, int_rows, &j);
}

/* Dtype the product is computed in for result dtype dt. */
static lt_dtype compute_dtype(lt_dtype dt)
{
    if (dt == LT_F32 || dt == LT_F64)
        return dt;
    if (dt == LT_BF16 || dt == LT_F16)
        return LT_F32;
    return LT_I64;
}

/* Runs the product with owned operand references a, b into c (dtype cd). */
static lt_status matmul_compute(lt_tensor **a, lt_tensor **b, lt_tensor *c, lt_dtype cd, const batch_shape *bs)
{
    lt_status st;
    if ((*a)->dtype != (int32_t)cd && (st = make_contiguous(a, cd)) != LT_OK)
        return st;
    if ((*b)->dtype != (int32_t)cd && (st = make_contiguous(b, cd)) != LT_OK)
        return st;
    if (cd == LT_I64) {
        if ((st = make_contiguous(a, cd)) != LT_OK || (st = make_contiguous(b, cd)) != LT_OK)
            return st;
        matmul_int(*a, *b, c, bs);
        return LT_OK;
    }
    return matmul_blas(a, b, c, cd, bs);
}

lt_status lt_eager_matmul(lt_op op, lt_tensor *const *in, int nin, const lt_attrs *attrs,
                          const lt_meta *om, lt_tensor **out)
{
    (void)op, (void)nin, (void)attrs;
    lt_tensor *y = out[0];
    if (lt_shape_numel(y->shape, y->ndim) == 0)
        return LT_OK;
    int64_t k = in[0]->shape[in[0]->ndim - 1];
    if (k == 0) {
        lt_eager_fill(y, 0.0);
        return LT_OK;
    }
    batch_shape bs = batch_of(in[0], in[1], y);
    lt_dtype cd = compute_dtype((lt_dtype)y->dtype);
    lt_tensor *c = y; /* computed in place unless dtype or layout differ */
    if (cd != (lt_dtype)y->dtype || !lt_tensor_contiguous(y)) {
        lt_meta m = om[0];
        m.dtype = (int32_t)cd;
        if (!(c = lt_tensor_alloc(&m, y->device, "matmul")))
            return lt_last_status();
    }
    lt_tensor *a = in[0], *b = in[1];
    atomic_fetch_add(&a->refcount, 1);
    atomic_fetch_add(&b->refcount, 1);
    lt_status st = matmul_compute(&a, &b, c, cd, &bs);
    lt_tensor_unref(a);
    lt_tensor_unref(b);
    if (c != y) {
        if (st == LT_OK)
            lt_eager_copy(y, c);
        lt_tensor_unref(c);
    }
    return st;
}

/* ---- fused update: out += alpha * (a @ b) -------------------------------- */

/* Makes *t usable as a BLAS operand of dtype dt: a contiguous copy when its
 * dtype or layout does not fit (the reference held is replaced). */
static lt_status blas_operand(lt_tensor **t, lt_dtype dt, mat_view *v, const batch_shape *bs, bool is_a)
{
    *v = view_of(*t, is_a, bs);
    if ((lt_dtype)(*t)->dtype == dt && choose_layout(v))
        return LT_OK;
    lt_status st = make_contiguous(t, dt);
    if (st != LT_OK)
        return st;
    *v = view_of(*t, is_a, bs);
    choose_layout(v);
    return LT_OK;
}

lt_status lt_eager_matmul_acc(lt_tensor *a, lt_tensor *b, lt_tensor *out, double alpha)
{
    lt_dtype dt = (lt_dtype)out->dtype;
    bool shapes_fit = a->ndim == 2 && b->ndim == 2 && out->ndim == 2 && a->shape[1] == b->shape[0] &&
                      out->shape[0] == a->shape[0] && out->shape[1] == b->shape[1];
    if (!shapes_fit || (dt != LT_F32 && dt != LT_F64) || !lt_tensor_contiguous(out))
        return lt_error(LT_ERR_SHAPE, "matmul (fused update): expected 2-D operands [m, k] x [k, n] into a "
                                      "contiguous f32/f64 [m, n] output");
    int64_t m = out->shape[0], n = out->shape[1], k = a->shape[1];
    if (m == 0 || n == 0 || k == 0)
        return LT_OK; /* out += alpha * 0 */
    if (!lt_blas_fits(m) || !lt_blas_fits(n) || !lt_blas_fits(k))
        return lt_error(LT_ERR_UNSUPPORTED, "matmul (fused update): %lld x %lld x %lld is too large for BLAS",
                        (long long)m, (long long)k, (long long)n);
    batch_shape bs = {.ndim = 0, .count = 1};
    mat_view A, B;
    atomic_fetch_add(&a->refcount, 1);
    atomic_fetch_add(&b->refcount, 1);
    lt_status st = blas_operand(&a, dt, &A, &bs, true);
    if (st == LT_OK)
        st = blas_operand(&b, dt, &B, &bs, false);
    if (st == LT_OK)
        blas_gemm(dt, A.trans, B.trans, true, alpha, m, n, k, A.base, A.ld, B.base, B.ld, lt_tensor_ptr(out), n);
    lt_tensor_unref(a);
    lt_tensor_unref(b);
    return st;
}
