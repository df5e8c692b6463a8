/* ops.c - the op table, inference registry and inference helpers. */
#include "ops/ops.h"

#include <pthread.h>
#include <string.h>

const lt_op_info lt_op_infos[LT_OP_COUNT] = {
#define LT_OP(id, name, cls, nin, nout, flags) {#name, cls, nin, nout, flags},
#include "ops/ops.def"
#undef LT_OP
};

static lt_infer_fn infer_table[LT_OP_COUNT];
static pthread_once_t infer_once = PTHREAD_ONCE_INIT;

static void register_all(void)
{
    lt_infer_register_factory();
    lt_infer_register_elementwise();
    lt_infer_register_reduce();
    lt_infer_register_select();
    lt_infer_register_shape();
    lt_infer_register_nn();
    lt_infer_register_view_scatter();
    lt_infer_register_collective();
    lt_infer_register_linalg();
}

void lt_op_set_infer(lt_op op, lt_infer_fn fn) { infer_table[op] = fn; }

lt_attrs lt_attrs_init(void)
{
    lt_attrs a;
    memset(&a, 0, sizeof a);
    a.dtype = -1;
    return a;
}

lt_status lt_op_infer(lt_op op, const lt_meta *in, int nin, const lt_attrs *a, lt_meta *out)
{
    pthread_once(&infer_once, register_all);
    const lt_op_info *info = &lt_op_infos[op];
    if (info->nin >= 0 && nin != info->nin)
        return lt_error(LT_ERR_ARGUMENT, "%s: %d inputs given, expected %d", info->name, nin, info->nin);
    if (!infer_table[op])
        return lt_error(LT_ERR_UNSUPPORTED, "%s: no shape rule is registered for this op", info->name);
    return infer_table[op](op, in, nin, a, out);
}

lt_status lt_broadcast_shapes(const char *op, const lt_meta *a, const lt_meta *b, lt_meta *out)
{
    int nd = a->ndim > b->ndim ? a->ndim : b->ndim;
    int64_t shape[LT_MAX_DIMS];
    for (int i = 0; i < nd; i++) {
        int ia = a->ndim - nd + i, ib = b->ndim - nd + i;
        int64_t sa = ia >= 0 ? a->shape[ia] : 1;
        int64_t sb = ib >= 0 ? b->shape[ib] : 1;
        if (sa != sb && sa != 1 && sb != 1) {
            char s1[160], s2[160];
            return lt_error(LT_ERR_SHAPE,
                            "%s: shapes %s and %s are not broadcastable (dim %d: %lld vs %lld)", op,
                            lt_shape_str(a->shape, a->ndim, s1, sizeof s1),
                            lt_shape_str(b->shape, b->ndim, s2, sizeof s2), i - nd, (long long)sa,
                            (long long)sb);
        }
        shape[i] = sa == 1 ? sb : sa;
    }
    out->ndim = nd;
    memcpy(out->shape, shape, sizeof(int64_t) * (size_t)nd);
    return LT_OK;
}

int lt_dtype_category(lt_dtype dt)
{
    if (dt == LT_BOOL)
        return 0;
    return lt_dtype_is_floating(dt) ? 2 : 1;
}

/* Promotes within one priority level, remembering whether any was seen. */
static void promote_into(lt_dtype *acc, bool *seen, lt_dtype dt)
{
    *acc = *seen ? lt_promote_types(*acc, dt) : dt;
    *seen = true;
}

lt_dtype lt_result_type(const lt_meta *in, int n)
{
    lt_dtype dims = LT_BOOL, zero = LT_BOOL, weak = LT_BOOL;
    bool has_dims = false, has_zero = false, has_weak = false;
    for (int i = 0; i < n; i++) {
        lt_dtype dt = (lt_dtype)in[i].dtype;
        if (in[i].weak)
            promote_into(&weak, &has_weak, dt);
        else if (in[i].ndim > 0)
            promote_into(&dims, &has_dims, dt);
        else
            promote_into(&zero, &has_zero, dt);
    }
    /* A lower-priority group only matters if its category is higher. */
    lt_dtype result = has_dims ? dims : has_zero ? zero : weak;
    bool any = has_dims || has_zero;
    if (has_dims && has_zero && lt_dtype_category(zero) > lt_dtype_category(result))
        result = zero;
    if (any && has_weak && lt_dtype_category(weak) > lt_dtype_category(result))
        result = lt_dtype_category(weak) == 2 ? LT_F32 : LT_I64;
    return result;
}

lt_status lt_normalize_dim(const char *op, int64_t dim, int ndim, int *out)
{
    int range = ndim > 0 ? ndim : 1; /* a 0-d tensor accepts dim 0 / -1 */
    if (dim < -range || dim >= range)
        return lt_error(LT_ERR_INDEX, "%s: dim %lld out of range for a %d-d tensor (expected %d..%d)", op,
                        (long long)dim, ndim, -range, range - 1);
    *out = (int)(dim < 0 ? dim + range : dim);
    return LT_OK;
}

bool lt_can_cast(lt_dtype from, lt_dtype to)
{
    int cf = lt_dtype_category(from), ct = lt_dtype_category(to);
    return cf <= ct;
}
