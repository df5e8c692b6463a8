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
    lt_eager_register_shape();
    lt_eager_register_nn();
}

void lt_eager_set_kernel(lt_op op, lt_eager_fn fn) { kernels[op] = fn; }

lt_eager_fn lt_eager_kernel(lt_op op)
{
    pthread_once(&kernels_once, register_all);
    return kernels[op];
}
