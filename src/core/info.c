/* info.c - public tensor metadata getters, threads and version. */
#include "core/core.h"
#include "core/pool.h"

#include <string.h>

#define CHECK_OR(op, t, value)                                \
    do {                                                      \
        if (lt_check_tensor(op, t, 0) != LT_OK)               \
            return value;                                     \
    } while (0)

int lt_tensor_ndim(const lt_tensor *t)
{
    CHECK_OR("tensor_ndim", t, -1);
    return t->ndim;
}

const int64_t *lt_tensor_shape(const lt_tensor *t)
{
    CHECK_OR("tensor_shape", t, NULL);
    return t->shape;
}

int64_t lt_tensor_size(const lt_tensor *t, int dim)
{
    CHECK_OR("tensor_size", t, -1);
    int d = dim < 0 ? dim + t->ndim : dim;
    if (d < 0 || d >= t->ndim) {
        char sb[160];
        lt_error(LT_ERR_INDEX, "tensor_size: dim %d out of range for shape %s (expected %d..%d)", dim,
                 lt_shape_str(t->shape, t->ndim, sb, sizeof sb), -t->ndim, t->ndim - 1);
        return -1;
    }
    return t->shape[d];
}

const int64_t *lt_tensor_strides(const lt_tensor *t)
{
    CHECK_OR("tensor_strides", t, NULL);
    return t->strides;
}

int64_t lt_tensor_offset(const lt_tensor *t)
{
    CHECK_OR("tensor_offset", t, -1);
    return t->offset;
}

int64_t lt_tensor_numel(const lt_tensor *t)
{
    CHECK_OR("tensor_numel", t, -1);
    return lt_shape_numel(t->shape, t->ndim);
}

lt_dtype lt_tensor_dtype(const lt_tensor *t)
{
    CHECK_OR("tensor_dtype", t, LT_NUM_DTYPES);
    return (lt_dtype)t->dtype;
}

lt_device lt_tensor_device(const lt_tensor *t)
{
    lt_device invalid = {LT_DEVICE_INVALID, 0};
    CHECK_OR("tensor_device", t, invalid);
    return t->device;
}

bool lt_tensor_is_contiguous(const lt_tensor *t)
{
    CHECK_OR("tensor_is_contiguous", t, false);
    return lt_tensor_contiguous(t);
}

bool lt_tensor_shares_storage(const lt_tensor *a, const lt_tensor *b)
{
    CHECK_OR("tensor_shares_storage", a, false);
    if (lt_check_tensor("tensor_shares_storage", b, 1) != LT_OK)
        return false;
    return a->storage && a->storage == b->storage;
}

void *lt_tensor_data(lt_tensor *t)
{
    CHECK_OR("tensor_data", t, NULL);
    if (t->device.kind != LT_DEVICE_CPU || !t->storage) {
        lt_error(LT_ERR_DEVICE, "tensor_data: raw data pointers exist only for cpu tensors");
        return NULL;
    }
    return lt_tensor_ptr(t);
}

void lt_set_num_threads(int n) { lt_pool_set_threads(n); }

int lt_get_num_threads(void) { return lt_pool_threads(); }

const char *lt_version(void) { return "0.1.0"; }
