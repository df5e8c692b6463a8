/* view_scatter.c - eager kernels of the view-inverse ops: out = copy of
 * in[0], then in[1] copied into the view of out that the matching view op
 * selects (the view kernel itself computes the geometry). */
#include "eager/eager.h"

static lt_status k_view_scatter(lt_op op, lt_tensor *const *in, int nin, const lt_attrs *a,
                                const lt_meta *om, lt_tensor **out)
{
    (void)nin, (void)om;
    lt_op view_op = lt_view_of_scatter(op);
    lt_eager_copy(out[0], in[0]);
    lt_meta view_meta;
    lt_meta base_meta = lt_tensor_meta(out[0]);
    lt_status st = lt_op_infer(view_op, &base_meta, 1, a, &view_meta);
    if (st != LT_OK)
        return st;
    lt_tensor *view[LT_MAX_OUTPUTS] = {NULL};
    st = lt_eager_run(view_op, &out[0], 1, a, &view_meta, view, out[0]->device);
    if (st != LT_OK)
        return st;
    lt_eager_copy(view[0], in[1]);
    lt_tensor_unref(view[0]);
    return LT_OK;
}

void lt_eager_register_view_scatter(void)
{
    lt_eager_set_kernel(LT_OP_SLICE_SCATTER, k_view_scatter);
    lt_eager_set_kernel(LT_OP_SELECT_SCATTER, k_view_scatter);
    lt_eager_set_kernel(LT_OP_DIAGONAL_SCATTER, k_view_scatter);
}
