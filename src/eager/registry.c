/* registry.c - the table of eager kernels, filled once per process. */
#include "eager/eager.h"

#include <pthread.h>

static lt_eager_fn kernels[LT_OP_COUNT];
static pthread_once_t kernels_once = PTHREAD_ONCE_INIT;

static void register_all(void)
{
    lt_eager_register_factory();
    lt_eager_register_elementwise();
    lt_eager_register_reduce();
    lt_eager_register_select();
    lt_eager_register_quantile();
    lt_eager_register_lapack();
    lt_eager_register_scan(); /* after reduce: replaces its generic scan kernel */
    lt_eager_register_shape();
    lt_eager_register_nn();
    lt_eager_register_view_scatter();
    lt_eager_register_collective();
}

void lt_eager_set_kernel(lt_op op, lt_eager_fn fn) { kernels[op] = fn; }

lt_eager_fn lt_eager_kernel(lt_op op)
{
    pthread_once(&kernels_once, register_all);
    return kernels[op];
}

lt_status lt_eager_run(lt_op op, lt_tensor *const *in, int nin, const lt_attrs *a, const lt_meta *om,
                       lt_tensor **out, lt_device dev)
{
    const lt_op_info *info = &lt_op_infos[op];
    lt_eager_fn fn = lt_eager_kernel(op);
    if (!fn)
        return lt_error(LT_ERR_UNSUPPORTED, "%s: no cpu kernel exists for this op", info->name);
    bool preallocate = info->cls != LT_OPC_VIEW && info->cls != LT_OPC_DATADEP;
    for (int k = 0; k < info->nout; k++) {
        if (out[k])
            continue; /* preallocated by the caller (donated buffer) */
        out[k] = preallocate ? lt_tensor_alloc(&om[k], dev, info->name) : NULL;
        if (preallocate && !out[k]) {
            for (int j = 0; j < k; j++)
                lt_tensor_unref(out[j]);
            return lt_last_status();
        }
    }
    lt_status st = fn(op, in, nin, a, om, out);
    if (st != LT_OK) {
        for (int k = 0; k < info->nout; k++) {
            if (out[k])
                lt_tensor_unref(out[k]);
            out[k] = NULL;
        }
    }
    return st;
}
