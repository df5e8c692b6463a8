/* infer_factory.c - shape rules of factory ops: shape and dtype come from
 * the attributes. */
#include "ops/ops.h"

/* The values full, arange and linspace write must fit the dtype: their
 * first and last values bound every other one. */
static lt_status check_values(lt_op op, const char *name, const lt_attrs *a)
{
    lt_dtype dt = (lt_dtype)a->dtype;
    int64_t n = a->ni > 0 ? a->i[0] : 0;
    lt_status st = LT_OK;
    if (op == LT_OP_FULL)
        st = lt_check_fill_value(name, a->f[0], dt);
    else if ((op == LT_OP_ARANGE || op == LT_OP_LINSPACE) && n > 0) {
        double last = op == LT_OP_ARANGE ? a->f[0] + (double)(n - 1) * a->f[1] : n > 1 ? a->f[1] : a->f[0];
        st = lt_check_fill_value(name, a->f[0], dt);
        if (st == LT_OK)
            st = lt_check_fill_value(name, last, dt);
    }
    return st;
}

static lt_status infer_factory(lt_op op, const lt_meta *in, int nin, const lt_attrs *a, lt_meta *out)
{
    (void)in;
    (void)nin;
    const char *name = lt_op_name(op);
    lt_status st = lt_check_shape(name, a->i, a->ni, (lt_dtype)a->dtype);
    if (st != LT_OK)
        return st;
    bool floating = lt_dtype_is_floating((lt_dtype)a->dtype);
    if ((op == LT_OP_RAND || op == LT_OP_RANDN) && !floating)
        return lt_error(LT_ERR_DTYPE, "%s: dtype %s is not floating (expected f32, f64, bf16 or f16)",
                        name, lt_dtype_name((lt_dtype)a->dtype));
    if ((st = check_values(op, name, a)) != LT_OK)
        return st;
    if (op == LT_OP_RANDINT && a->dtype == LT_BOOL)
        return lt_error(LT_ERR_DTYPE, "randint: dtype bool is not supported");
    out[0] = lt_meta_make((lt_dtype)a->dtype, a->i, a->ni);
    return LT_OK;
}

void lt_infer_register_factory(void)
{
    static const lt_op ops[] = {LT_OP_EMPTY, LT_OP_FULL, LT_OP_ARANGE, LT_OP_LINSPACE,
                                LT_OP_EYE, LT_OP_RAND, LT_OP_RANDN, LT_OP_RANDINT};
    for (size_t k = 0; k < sizeof ops / sizeof ops[0]; k++)
        lt_op_set_infer(ops[k], infer_factory);
}
