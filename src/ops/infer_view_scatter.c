/* infer_view_scatter.c - shape rules of the view-inverse ops
 * (slice_scatter, select_scatter, diagonal_scatter). */
#include "ops/ops.h"

/* The view op whose selection a scatter op writes into. */
lt_op lt_view_of_scatter(lt_op op)
{
    switch (op) {
    case LT_OP_SLICE_SCATTER: return LT_OP_SLICE;
    case LT_OP_SELECT_SCATTER: return LT_OP_SELECT;
    default: return LT_OP_DIAGONAL;
    }
}

static lt_status infer_view_scatter(lt_op op, const lt_meta *in, int nin, const lt_attrs *a, lt_meta *out)
{
    (void)nin;
    lt_meta view;
    lt_status st = lt_op_infer(lt_view_of_scatter(op), &in[0], 1, a, &view);
    if (st != LT_OK)
        return st;
    if (!lt_shape_equal(view.shape, view.ndim, in[1].shape, in[1].ndim) || view.dtype != in[1].dtype) {
        char s1[160], s2[160];
        return lt_error(LT_ERR_SHAPE, "%s: source %s %s does not match the view %s %s", lt_op_name(op),
                        lt_dtype_name((lt_dtype)in[1].dtype), lt_shape_str(in[1].shape, in[1].ndim, s1, sizeof s1),
                        lt_dtype_name((lt_dtype)view.dtype), lt_shape_str(view.shape, view.ndim, s2, sizeof s2));
    }
    out[0] = in[0];
    out[0].weak = 0;
    return LT_OK;
}

void lt_infer_register_view_scatter(void)
{
    lt_op_set_infer(LT_OP_SLICE_SCATTER, infer_view_scatter);
    lt_op_set_infer(LT_OP_SELECT_SCATTER, infer_view_scatter);
    lt_op_set_infer(LT_OP_DIAGONAL_SCATTER, infer_view_scatter);
}
