/*
 * collective.c - eager kernels of the collectives: they run the call at
 * once through the distributed runtime table (core/dist.h). The lazy
 * device's step programs run the same kernels (interp directly, compiled
 * programs through their runtime call), so every device reaches MPI through
 * that one table.
 */
#include "core/dist.h"
#include "eager/eager.h"

static const int dist_kind[] = {
    [LT_OP_ALL_REDUCE] = LT_DIST_ALL_REDUCE,
    [LT_OP_BROADCAST] = LT_DIST_BROADCAST,
    [LT_OP_ALL_GATHER] = LT_DIST_ALL_GATHER,
    [LT_OP_REDUCE_SCATTER] = LT_DIST_REDUCE_SCATTER,
};

static lt_status collective_kernel(lt_op op, lt_tensor *const *in, int nin, const lt_attrs *a, const lt_meta *om,
                                   lt_tensor **out)
{
    (void)nin, (void)om;
    const lt_dist_rt *rt = lt_dist_rt_get();
    const char *name = lt_op_name(op);
    if (a->i[2] != rt->size)
        return lt_error(LT_ERR_STATE,
                        "%s: recorded for a world of %lld ranks, run in a world of %d (was lt_dist_init called "
                        "after the tensor was recorded?)",
                        name, (long long)a->i[2], rt->size);
    lt_tensor *x = in[0];
    lt_dist_call c = {
        .who = name,
        .kind = dist_kind[op],
        .dtype = (lt_dtype)x->dtype,
        .numel = lt_shape_numel(x->shape, x->ndim),
        .ndim = x->ndim,
        .shape = x->shape,
        .arg = (int)(op == LT_OP_BROADCAST ? a->i[1] : a->i[0]),
    };
    if (op == LT_OP_ALL_REDUCE || op == LT_OP_BROADCAST) {
        lt_eager_copy(out[0], x);
        return op == LT_OP_ALL_REDUCE ? rt->all_reduce(&c, lt_tensor_ptr(out[0]))
                                      : rt->broadcast(&c, lt_tensor_ptr(out[0]));
    }
    lt_tensor *src = lt_eager_as_contiguous(x, (lt_dtype)x->dtype, name);
    if (!src)
        return lt_last_status();
    lt_status st = op == LT_OP_ALL_GATHER ? rt->all_gather(&c, lt_tensor_ptr(src), lt_tensor_ptr(out[0]))
                                          : rt->reduce_scatter(&c, lt_tensor_ptr(src), lt_tensor_ptr(out[0]));
    lt_tensor_unref(src);
    return st;
}

void lt_eager_register_collective(void)
{
    static const lt_op ops[] = {LT_OP_ALL_REDUCE, LT_OP_BROADCAST, LT_OP_ALL_GATHER, LT_OP_REDUCE_SCATTER};
    for (size_t k = 0; k < sizeof ops / sizeof ops[0]; k++)
        lt_eager_set_kernel(ops[k], collective_kernel);
}
