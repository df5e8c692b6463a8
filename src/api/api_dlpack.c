/*
 * api_dlpack.c - DLPack exchange (lt_to_dlpack, lt_from_dlpack): cpu
 * tensors shared with numpy, PyTorch and other DLPack libraries without a
 * copy.
 *
 * An export holds an alias of the tensor (lt_detach: the same storage), so
 * the memory outlives the tensor and an in-place move of it; the deleter
 * drops the alias. An import is lt_from_external with the producer's
 * deleter as the release callback.
 */
#include "api/api.h"

#include <stdlib.h>
#include <string.h>

typedef struct dl_export {
    lt_dl_managed_tensor managed; /* first: the consumer's pointer is the export's */
    lt_tensor *alias;
    int64_t shape[LT_MAX_DIMS], strides[LT_MAX_DIMS];
} dl_export;

static const lt_dl_dtype dl_dtypes[LT_NUM_DTYPES] = {
    [LT_F32] = {LT_DL_FLOAT, 32, 1}, [LT_F64] = {LT_DL_FLOAT, 64, 1},  [LT_I32] = {LT_DL_INT, 32, 1},
    [LT_I64] = {LT_DL_INT, 64, 1},   [LT_U8] = {LT_DL_UINT, 8, 1},     [LT_BOOL] = {LT_DL_BOOL, 8, 1},
    [LT_BF16] = {LT_DL_BFLOAT, 16, 1}, [LT_F16] = {LT_DL_FLOAT, 16, 1},
};

static void dl_export_delete(lt_dl_managed_tensor *m)
{
    dl_export *e = (dl_export *)m;
    lt_release(e->alias);
    free(e);
}

lt_dl_managed_tensor *lt_to_dlpack(lt_tensor *t)
{
    if (lt_check_tensor("to_dlpack", t, 0) != LT_OK)
        return NULL;
    char where[32];
    if (t->device.kind != LT_DEVICE_CPU)
        return lt_error(LT_ERR_DEVICE, "to_dlpack: only cpu tensors are exported, this one is on %s (lt_to it "
                        "to the cpu first)", lt_device_str(t->device, where, sizeof where)),
               NULL;
    dl_export *e = calloc(1, sizeof *e);
    if (!e)
        return lt_error(LT_ERR_MEMORY, "to_dlpack: out of memory"), NULL;
    lt_scope_begin(); /* the alias is the export's own reference, whatever scope the caller is in */
    lt_tensor *alias = lt_detach(t);
    e->alias = alias ? lt_retain(alias) : NULL;
    lt_scope_end();
    if (!e->alias) {
        free(e);
        return NULL;
    }
    lt_dl_tensor *d = &e->managed.dl_tensor;
    d->ndim = t->ndim;
    memcpy(e->shape, t->shape, sizeof *e->shape * (size_t)t->ndim);
    memcpy(e->strides, t->strides, sizeof *e->strides * (size_t)t->ndim);
    d->data = lt_tensor_data(e->alias);
    d->device = (lt_dl_device){LT_DL_CPU, 0};
    d->dtype = dl_dtypes[t->dtype];
    d->shape = e->shape;
    d->strides = e->strides;
    d->byte_offset = 0;
    e->managed.manager_ctx = e;
    e->managed.deleter = dl_export_delete;
    return &e->managed;
}

/* The lazytensor dtype of a DLPack dtype, or LT_NUM_DTYPES. */
static lt_dtype from_dl_dtype(lt_dl_dtype d)
{
    for (int i = 0; i < LT_NUM_DTYPES; i++)
        if (dl_dtypes[i].code == d.code && dl_dtypes[i].bits == d.bits && d.lanes == 1)
            return (lt_dtype)i;
    return LT_NUM_DTYPES;
}

static void dl_import_release(void *ctx)
{
    lt_dl_managed_tensor *m = ctx;
    if (m->deleter)
        m->deleter(m);
}

lt_tensor *lt_from_dlpack(lt_dl_managed_tensor *m)
{
    if (!m)
        return lt_error(LT_ERR_NULL, "from_dlpack: the managed tensor is NULL"), NULL;
    const lt_dl_tensor *d = &m->dl_tensor;
    if (d->device.device_type != LT_DL_CPU)
        return lt_error(LT_ERR_DEVICE, "from_dlpack: device type %d, only cpu tensors (%d) are imported",
                        d->device.device_type, LT_DL_CPU),
               NULL;
    lt_dtype dt = from_dl_dtype(d->dtype);
    if (dt == LT_NUM_DTYPES)
        return lt_error(LT_ERR_DTYPE, "from_dlpack: dtype code %d, %d bits, %d lanes has no lazytensor dtype",
                        d->dtype.code, d->dtype.bits, d->dtype.lanes),
               NULL;
    if (d->ndim < 0 || d->ndim > LT_MAX_DIMS)
        return lt_error(LT_ERR_SHAPE, "from_dlpack: %d dims, expected 0..%d", d->ndim, LT_MAX_DIMS), NULL;
    if (d->ndim > 0 && !d->shape)
        return lt_error(LT_ERR_NULL, "from_dlpack: the shape is NULL for %d dims", d->ndim), NULL;
    void *data = d->data ? (char *)d->data + d->byte_offset : NULL;
    return lt_from_external(data, d->shape, d->ndim, d->strides, dt, dl_import_release, m);
}
