/* iter.c - the strided, broadcasting elementwise iterator. */
#include "eager/eager.h"

#include <string.h>

/* Strides (bytes) of `t` seen through out's shape: right-aligned, 0 where t
 * is broadcast. */
static void broadcast_strides(const lt_tensor *t, const lt_tensor *out, int64_t *strides)
{
    int64_t elem = (int64_t)lt_dtype_size((lt_dtype)t->dtype);
    int shift = out->ndim - t->ndim;
    for (int d = 0; d < out->ndim; d++) {
        int td = d - shift;
        if (td < 0 || t->shape[td] == 1)
            strides[d] = 0;
        else
            strides[d] = t->strides[td] * elem;
    }
}

/* Drops size-1 dims and merges dim d into d+1 when every operand allows. */
static void coalesce(lt_iter *it)
{
    int nd = 0;
    for (int d = 0; d < it->ndim; d++) {
        if (it->shape[d] == 1)
            continue;
        it->shape[nd] = it->shape[d];
        for (int k = 0; k < it->nops; k++)
            it->strides[k][nd] = it->strides[k][d];
        nd++;
    }
    it->ndim = nd;
    if (nd == 0) {
        it->ndim = 1;
        it->shape[0] = 1;
        for (int k = 0; k < it->nops; k++)
            it->strides[k][0] = 0;
        return;
    }
    int w = 0;
    for (int d = 1; d < it->ndim; d++) {
        bool mergeable = true;
        for (int k = 0; k < it->nops; k++)
            if (it->strides[k][w] != it->strides[k][d] * it->shape[d])
                mergeable = false;
        if (mergeable) {
            it->shape[w] *= it->shape[d];
            for (int k = 0; k < it->nops; k++)
                it->strides[k][w] = it->strides[k][d];
        } else {
            w++;
            it->shape[w] = it->shape[d];
            for (int k = 0; k < it->nops; k++)
                it->strides[k][w] = it->strides[k][d];
        }
    }
    it->ndim = w + 1;
}

void lt_iter_build(lt_iter *it, lt_tensor *out, lt_tensor *const *ins, int nin)
{
    memset(it, 0, sizeof *it);
    it->nops = nin + 1;
    it->ndim = out->ndim;
    memcpy(it->shape, out->shape, sizeof(int64_t) * (size_t)out->ndim);
    it->numel = lt_shape_numel(out->shape, out->ndim);
    broadcast_strides(out, out, it->strides[0]);
    it->base[0] = lt_tensor_ptr(out);
    for (int k = 0; k < nin; k++) {
        broadcast_strides(ins[k], out, it->strides[k + 1]);
        it->base[k + 1] = lt_tensor_ptr(ins[k]);
    }
    coalesce(it);
}

/* Runs the flat element range [begin, end). */
static void run_range(const lt_iter *it, int64_t begin, int64_t end, lt_loop_fn fn, const void *ctx)
{
    int nd = it->ndim, nops = it->nops;
    int64_t idx[LT_MAX_DIMS];
    int64_t rem = begin;
    for (int d = nd - 1; d >= 0; d--) {
        idx[d] = rem % it->shape[d];
        rem /= it->shape[d];
    }
    char *ptrs[LT_ITER_MAX_OPS];
    int64_t inner_strides[LT_ITER_MAX_OPS];
    for (int k = 0; k < nops; k++)
        inner_strides[k] = it->strides[k][nd - 1];
    int64_t pos = begin;
    while (pos < end) {
        for (int k = 0; k < nops; k++) {
            int64_t off = 0;
            for (int d = 0; d < nd; d++)
                off += idx[d] * it->strides[k][d];
            ptrs[k] = it->base[k] + off;
        }
        int64_t n = it->shape[nd - 1] - idx[nd - 1];
        if (n > end - pos)
            n = end - pos;
        fn(n, ptrs, inner_strides, ctx);
        pos += n;
        idx[nd - 1] += n;
        for (int d = nd - 1; d > 0 && idx[d] == it->shape[d]; d--) {
            idx[d] = 0;
            idx[d - 1]++;
        }
    }
}

typedef struct iter_job {
    const lt_iter *it;
    lt_loop_fn fn;
    const void *ctx;
} iter_job;

static void iter_chunk(void *ctx, int64_t begin, int64_t end, int64_t chunk)
{
    (void)chunk;
    const iter_job *j = ctx;
    run_range(j->it, begin, end, j->fn, j->ctx);
}

void lt_iter_run(const lt_iter *it, lt_loop_fn fn, const void *ctx)
{
    iter_job j = {it, fn, ctx};
    /* chunks aligned to 16 elements keep vector loops whole */
    lt_parallel_for(it->numel, LT_PARALLEL_GRAIN, 16, iter_chunk, &j);
}
