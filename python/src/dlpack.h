/*
 * dlpack.h - the DLPack exchange structs (DLPack 0.8 ABI), written from
 * the layout the DLPack specification documents: a DLManagedTensor is
 * passed in a PyCapsule named "dltensor", renamed "used_dltensor" by the
 * consumer, which calls `deleter` once it no longer needs the memory.
 */
#ifndef LTPY_DLPACK_H
#define LTPY_DLPACK_H

#include <stdint.h>

enum { LTPY_DL_CPU = 1 };                          /* DLDeviceType kDLCPU */
enum {                                             /* DLDataTypeCode */
    LTPY_DL_INT = 0,
    LTPY_DL_UINT = 1,
    LTPY_DL_FLOAT = 2,
    LTPY_DL_BFLOAT = 4,
    LTPY_DL_BOOL = 6,
};

typedef struct {
    int32_t device_type;
    int32_t device_id;
} ltpy_dl_device;

typedef struct {
    uint8_t code;
    uint8_t bits;
    uint16_t lanes;
} ltpy_dl_dtype;

typedef struct {
    void *data;
    ltpy_dl_device device;
    int32_t ndim;
    ltpy_dl_dtype dtype;
    int64_t *shape;
    int64_t *strides; /* in elements; NULL means row-major contiguous */
    uint64_t byte_offset;
} ltpy_dl_tensor;

typedef struct ltpy_dl_managed {
    ltpy_dl_tensor dl_tensor;
    void *manager_ctx;
    void (*deleter)(struct ltpy_dl_managed *self);
} ltpy_dl_managed;

#endif
