/*
 * select.c - CPU kernels of the selections along one dim: kthvalue,
 * median_dim and mode (values and i64 indices).
 *
 * Each line along the dim is copied into (value, index) pairs. kthvalue
 * runs PyTorch's quickselect on them (so ties give torch's index); median
 * and mode sort them by value, then by index, with NaN after every number
 * (the order of a stable sort). Semantics are PyTorch's:
 *  - kthvalue: the k-th pair (NaNs count as the largest values);
 *  - median_dim: the lower median, pair (n - 1) / 2, or, if the line holds
 *    a NaN, NaN at the index of the first NaN;
 *  - mode: the value of the longest run of equal values (the smallest such
 *    value on ties) and the last index at which it occurs.
 * Among equal values median returns the smallest index (torch leaves that
 * unspecified; its CPU kernel, std::nth_element, agreed on every tie the
 * differential suite tries).
 * Floating inputs are compared as f64 and integer ones as i64, both exact.
 */
#include "eager/lines.h"

#include <math.h>
#include <stdlib.h>


typedef struct pair_i64 {
    int64_t v;
    int64_t i;
} pair_i64;

static int cmp_i64(const void *pa, const void *pb)
{
    const pair_i64 *a = pa, *b = pb;
    if (a->v != b->v)
        return a->v < b->v ? -1 : 1;
    return (a->i > b->i) - (a->i < b->i);
}

/* Equal for mode's runs (NaNs form one run, as the sort puts them last). */
static bool same_f64(double a, double b) { return a == b || (isnan(a) && isnan(b)); }
static bool same_i64(int64_t a, int64_t b) { return a == b; }

/* Picks the result position of a sorted line p[0..n) of type T: writes
 * the value to *v and the index to *ix. DEF_PICK defines it for both
 * compute types. */
#define DEF_PICK(NAME, PAIR, T, SAME, HAS_NAN)                                                     \
    static void NAME(lt_op op, int64_t k, const PAIR *p, int64_t n, T *v, int64_t *ix)             \
    {                                                                                              \
        int64_t at;                                                                                \
        if (op == LT_OP_KTHVALUE) {                                                                \
            at = k - 1;                                                                            \
        } else if (op == LT_OP_MEDIAN_DIM) {                                                       \
            at = (n - 1) / 2;                                                                      \
            if (HAS_NAN(p[n - 1].v)) { /* the first NaN: smallest index among the NaNs */          \
                at = n - 1;                                                                        \
                while (at > 0 && HAS_NAN(p[at - 1].v))                                             \
                    at--;                                                                          \
            }                                                                                      \
        } else {                                                                                   \
            int64_t best = 0, best_len = 0;                                                        \
            for (int64_t s = 0; s < n;) {                                                          \
                int64_t e = s + 1;                                                                 \
                while (e < n && SAME(p[e].v, p[s].v))                                              \
                    e++;                                                                           \
                if (e - s > best_len) {                                                            \
                    best_len = e - s;                                                              \
                    best = e - 1; /* last index of the run */                                      \
                }                                                                                  \
                s = e;                                                                             \
            }                                                                                      \
            at = best;                                                                             \
        }                                                                                          \
        *v = p[at].v;                                                                              \
        *ix = p[at].i;                                                                             \
    }

static bool never_nan(int64_t v) { return (void)v, false; }
static bool is_nan(double v) { return isnan(v); }
DEF_PICK(pick_f64, pair_f64, double, same_f64, is_nan)
DEF_PICK(pick_i64, pair_i64, int64_t, same_i64, never_nan)

/* x > y with NaN above every number: torch's gt_or_nan. */
static bool gt_or_nan_f64(double x, double y) { return (isnan(x) && !isnan(y)) || x > y; }
static bool gt_i64(int64_t x, int64_t y) { return x > y; }

/*
 * kthvalue's selection: PyTorch's CPU quickselect (median-of-three pivot,
 * Hoare partition over values and indices together), reproduced step by
 * step so that among equal values the same index comes out. Leaves the
 * k-th smallest (0-based) at p[k].
 */
#define DEF_QUICKSELECT(NAME, PAIR, T, GT)                                                         \
    static void NAME(PAIR *p, int64_t n, int64_t k)                                                \
    {                                                                                              \
        int64_t lo = 0, hi = n - 1;                                                                \
        for (;;) {                                                                                 \
            if (hi <= lo)                                                                          \
                return;                                                                            \
            if (hi == lo + 1) {                                                                    \
                if (GT(p[lo].v, p[hi].v))                                                          \
                    SWAP(PAIR, p[lo], p[hi]);                                                      \
                return;                                                                            \
            }                                                                                      \
            int64_t mid = lo + (hi - lo) / 2;                                                      \
            SWAP(PAIR, p[mid], p[lo + 1]);                                                         \
            if (GT(p[lo + 1].v, p[hi].v))                                                          \
                SWAP(PAIR, p[lo + 1], p[hi]);                                                      \
            if (GT(p[lo].v, p[hi].v))                                                              \
                SWAP(PAIR, p[lo], p[hi]);                                                          \
            if (GT(p[lo + 1].v, p[lo].v))                                                          \
                SWAP(PAIR, p[lo + 1], p[lo]);                                                      \
            int64_t i = lo + 1, j = hi;                                                            \
            T piv = p[lo].v;                                                                       \
            for (;;) {                                                                             \
                do                                                                                 \
                    i++;                                                                           \
                while (GT(piv, p[i].v));                                                           \
                do                                                                                 \
                    j--;                                                                           \
                while (GT(p[j].v, piv));                                                           \
                if (j < i)                                                                         \
                    break;                                                                         \
                SWAP(PAIR, p[i], p[j]);                                                            \
            }                                                                                      \
            SWAP(PAIR, p[lo], p[j]);                                                               \
            if (j <= k)                                                                            \
                lo = i;                                                                            \
            if (j >= k)                                                                            \
                hi = j - 1;                                                                        \
        }                                                                                          \
    }
#define SWAP(PAIR, a, b)                                                                           \
    do {                                                                                           \
        PAIR tmp_ = (a);                                                                           \
        (a) = (b);                                                                                 \
        (b) = tmp_;                                                                                \
    } while (0)
DEF_QUICKSELECT(quickselect_f64, pair_f64, double, gt_or_nan_f64)
DEF_QUICKSELECT(quickselect_i64, pair_i64, int64_t, gt_i64)
#undef SWAP

/* Runs op over every line of the contiguous x (f64 or i64) into the
 * contiguous results vals (x's dtype) and idx (i64), one per line. */
static lt_status select_lines(lt_op op, int64_t k, const lt_tensor *x, line_walk w, void *vals, int64_t *idx)
{
    bool f64 = x->dtype == LT_F64;
    size_t psize = f64 ? sizeof(pair_f64) : sizeof(pair_i64);
    void *pairs = malloc(psize * (size_t)w.len);
    if (!pairs)
        return lt_error(LT_ERR_MEMORY, "%s: out of memory for a line of %lld elements", lt_op_name(op),
                        (long long)w.len);
    const void *xb = lt_tensor_ptr(x);
    for (int64_t l = 0; l < w.outer * w.stride; l++) {
        int64_t off = l / w.stride * w.len * w.stride + l % w.stride;
        for (int64_t i = 0; i < w.len; i++) {
            if (f64)
                ((pair_f64 *)pairs)[i] = (pair_f64){((const double *)xb)[off + i * w.stride], i};
            else
                ((pair_i64 *)pairs)[i] = (pair_i64){((const int64_t *)xb)[off + i * w.stride], i};
        }
        if (op != LT_OP_KTHVALUE)
            qsort(pairs, (size_t)w.len, psize, f64 ? cmp_pair_f64 : cmp_i64);
        else if (f64)
            quickselect_f64(pairs, w.len, k - 1);
        else
            quickselect_i64(pairs, w.len, k - 1);
        if (f64)
            pick_f64(op, k, pairs, w.len, (double *)vals + l, idx + l);
        else
            pick_i64(op, k, pairs, w.len, (int64_t *)vals + l, idx + l);
    }
    free(pairs);
    return LT_OK;
}

/* A contiguous buffer shaped like m in dtype dt. */
static lt_tensor *buffer_for(const lt_meta *m, lt_dtype dt, lt_device dev, const char *name)
{
    lt_meta b = *m;
    b.dtype = (int32_t)dt;
    b.weak = 0;
    return lt_tensor_alloc(&b, dev, name);
}

static lt_status k_select(lt_op op, lt_tensor *const *in, int nin, const lt_attrs *a, const lt_meta *om,
                          lt_tensor **out)
{
    (void)nin;
    const char *name = lt_op_name(op);
    lt_dtype cdt = lt_dtype_is_floating((lt_dtype)in[0]->dtype) ? LT_F64 : LT_I64;
    int ndim = in[0]->ndim;
    int64_t dim = op == LT_OP_KTHVALUE ? a->i[1] : a->i[0];
    int d = ndim == 0 ? 0 : (int)(dim < 0 ? dim + ndim : dim);
    lt_tensor *x = lt_eager_as_contiguous(in[0], cdt, name);
    lt_tensor *vals = x ? buffer_for(&om[0], cdt, in[0]->device, name) : NULL;
    lt_tensor *idx = vals ? buffer_for(&om[1], LT_I64, in[0]->device, name) : NULL;
    lt_status st = idx ? LT_OK : lt_last_status();
    if (st == LT_OK) {
        line_walk w = lines_of(x, d);
        if (w.outer * w.stride > 0)
            st = select_lines(op, a->i[0], x, w, lt_tensor_ptr(vals), (int64_t *)(void *)lt_tensor_ptr(idx));
    }
    if (st == LT_OK) {
        lt_eager_copy(out[0], vals);
        if (out[1])
            lt_eager_copy(out[1], idx);
    }
    lt_tensor *tmp[] = {x, vals, idx};
    for (int k = 0; k < 3; k++)
        if (tmp[k])
            lt_tensor_unref(tmp[k]);
    return st;
}

void lt_eager_register_select(void)
{
    lt_eager_set_kernel(LT_OP_KTHVALUE, k_select);
    lt_eager_set_kernel(LT_OP_MEDIAN_DIM, k_select);
    lt_eager_set_kernel(LT_OP_MODE, k_select);
}
