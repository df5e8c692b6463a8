/* api_tensor.c - public factories, conversions, copies and value access. */
#include "api/api.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static lt_tensor *factory(lt_op op, const int64_t *dims, int ndim, lt_dtype dt, lt_device dev,
                          lt_attrs *a)
{
    const char *name = lt_op_name(op);
    if (ndim < 0 || ndim > LT_MAX_DIMS)
        return lt_error(LT_ERR_SHAPE, "%s: %d dims requested, expected 0..%d", name, ndim, LT_MAX_DIMS), NULL;
    if (ndim > 0 && !dims)
        return lt_error(LT_ERR_NULL, "%s: dims is NULL but ndim is %d", name, ndim), NULL;
    if (ndim > 0)
        memcpy(a->i, dims, sizeof(int64_t) * (size_t)ndim);
    a->ni = ndim;
    a->dtype = (int32_t)dt;
    a->device = dev;
    if (dev.kind == LT_DEVICE_INVALID)
        return lt_error(LT_ERR_DEVICE, "%s: invalid device", name), NULL;
    return lt_call(op, NULL, 0, a, NULL);
}

lt_tensor *lt_empty(const int64_t *dims, int ndim, lt_dtype dt, lt_device dev)
{
    lt_attrs a = lt_attrs_init();
    return factory(LT_OP_EMPTY, dims, ndim, dt, dev, &a);
}

lt_tensor *lt_full(const int64_t *dims, int ndim, double value, lt_dtype dt, lt_device dev)
{
    lt_attrs a = lt_attrs_init();
    a.f[0] = value;
    a.nf = 1;
    return factory(LT_OP_FULL, dims, ndim, dt, dev, &a);
}

lt_tensor *lt_zeros(const int64_t *dims, int ndim, lt_dtype dt, lt_device dev)
{
    return lt_full(dims, ndim, 0.0, dt, dev);
}

lt_tensor *lt_ones(const int64_t *dims, int ndim, lt_dtype dt, lt_device dev)
{
    return lt_full(dims, ndim, 1.0, dt, dev);
}

lt_tensor *lt_scalar(double value, lt_dtype dt, lt_device dev) { return lt_full(NULL, 0, value, dt, dev); }

static lt_tensor *like(lt_tensor *t, const char *name, lt_op op, double value)
{
    if (lt_check_tensor(name, t, 0) != LT_OK)
        return NULL;
    lt_attrs a = lt_attrs_init();
    a.f[0] = value;
    a.nf = 1;
    return factory(op, t->shape, t->ndim, (lt_dtype)t->dtype, t->device, &a);
}

lt_tensor *lt_empty_like(lt_tensor *t) { return like(t, "empty_like", LT_OP_EMPTY, 0.0); }
lt_tensor *lt_zeros_like(lt_tensor *t) { return like(t, "zeros_like", LT_OP_FULL, 0.0); }
lt_tensor *lt_ones_like(lt_tensor *t) { return like(t, "ones_like", LT_OP_FULL, 1.0); }
lt_tensor *lt_full_like(lt_tensor *t, double value) { return like(t, "full_like", LT_OP_FULL, value); }

lt_tensor *lt_arange(double start, double end, double step, lt_dtype dt, lt_device dev)
{
    if (!isfinite(start) || !isfinite(end) || !isfinite(step))
        return lt_error(LT_ERR_ARGUMENT, "arange: start, end and step must be finite (got %g, %g, %g)",
                        start, end, step), NULL;
    if (step == 0.0)
        return lt_error(LT_ERR_ARGUMENT, "arange: step must be nonzero"), NULL;
    /* torch: integer dtypes take start and step truncated toward zero. The
     * length comes from the truncated bounds for i64, from the given ones
     * for i32 and u8 (torch's own distinction). */
    double len = ceil((end - start) / step), bound = end;
    if (!lt_dtype_is_floating(dt)) {
        start = trunc(start);
        step = trunc(step);
        bound = trunc(end);
        if (step == 0.0)
            return lt_error(LT_ERR_ARGUMENT, "arange: step truncates to 0 for dtype %s", lt_dtype_name(dt)),
                   NULL;
        if (dt == LT_I64)
            len = ceil((bound - start) / step);
    }
    if ((bound - start) / step < 0)
        return lt_error(LT_ERR_ARGUMENT, "arange: step %g goes away from end (start %g, end %g)", step,
                        start, end), NULL;
    if (len < 0) /* i32/u8: truncated bounds in order, given ones not (torch gives none) */
        len = 0;
    if (len > 9.0e15)
        return lt_error(LT_ERR_MEMORY, "arange: %g elements is too many", len), NULL;
    int64_t n = (int64_t)len;
    lt_attrs a = lt_attrs_init();
    a.f[0] = start;
    a.f[1] = step;
    a.nf = 2;
    return factory(LT_OP_ARANGE, &n, 1, dt, dev, &a);
}

lt_tensor *lt_linspace(double start, double end, int64_t steps, lt_dtype dt, lt_device dev)
{
    if (!isfinite(start) || !isfinite(end))
        return lt_error(LT_ERR_ARGUMENT, "linspace: start and end must be finite"), NULL;
    if (steps < 0)
        return lt_error(LT_ERR_ARGUMENT, "linspace: steps is %lld, expected >= 0", (long long)steps), NULL;
    lt_attrs a = lt_attrs_init();
    a.f[0] = start;
    a.f[1] = end;
    a.nf = 2;
    return factory(LT_OP_LINSPACE, &steps, 1, dt, dev, &a);
}

lt_tensor *lt_eye(int64_t n, int64_t m, lt_dtype dt, lt_device dev)
{
    int64_t dims[2] = {n, m};
    lt_attrs a = lt_attrs_init();
    return factory(LT_OP_EYE, dims, 2, dt, dev, &a);
}

lt_tensor *lt_from_data(const void *data, const int64_t *dims, int ndim, lt_dtype dt, lt_device dev)
{
    if (lt_check_shape("from_data", dims, ndim, dt) != LT_OK)
        return NULL;
    int64_t numel = lt_shape_numel(dims, ndim);
    if (!data && numel > 0)
        return lt_error(LT_ERR_NULL, "from_data: data is NULL for %lld elements", (long long)numel), NULL;
    if (dev.kind != LT_DEVICE_CPU && dev.kind != LT_DEVICE_LAZY) {
        char d[32];
        return lt_error(LT_ERR_DEVICE, "from_data: invalid device %s", lt_device_str(dev, d, sizeof d)), NULL;
    }
    lt_meta m = lt_meta_make(dt, dims, ndim);
    lt_tensor *t = lt_tensor_alloc(&m, lt_device_cpu(), "from_data");
    if (!t)
        return NULL;
    if (numel > 0)
        memcpy(lt_tensor_ptr(t), data, (size_t)numel * lt_dtype_size(dt));
    if (dev.kind == LT_DEVICE_LAZY) {
        lt_tensor *lazy = lt_lazy_from_cpu(t);
        lt_tensor_unref(t);
        t = lazy;
    }
    if (t)
        t->made_by = "from_data";
    return lt_tensor_publish(t);
}

/* Bytes from the first to past the last element of a non-negatively strided
 * layout; false when it overflows the span every shape must fit in. */
static bool external_span(const int64_t *dims, const int64_t *strides, int ndim, size_t elem, int64_t *bytes)
{
    int64_t last = 0;
    for (int i = 0; i < ndim; i++) {
        if (dims[i] == 0) {
            *bytes = 0;
            return true;
        }
        int64_t step;
        if (__builtin_mul_overflow(dims[i] - 1, strides[i], &step) || __builtin_add_overflow(last, step, &last))
            return false;
    }
    return !__builtin_mul_overflow(last + 1, (int64_t)elem, bytes) && *bytes <= LT_MAX_SPAN_BYTES;
}

static lt_status check_external(const void *data, const int64_t *dims, const int64_t *strides, int ndim,
                                lt_dtype dt, int64_t *bytes)
{
    if (lt_check_shape("from_external", dims, ndim, dt) != LT_OK)
        return lt_last_status();
    if (!data && lt_shape_numel(dims, ndim) > 0)
        return lt_error(LT_ERR_NULL, "from_external: data is NULL for a tensor with elements");
    size_t elem = lt_dtype_size(dt);
    if ((uintptr_t)data % elem != 0)
        return lt_error(LT_ERR_ARGUMENT, "from_external: data %p is not aligned to the %zu-byte elements of %s",
                        data, elem, lt_dtype_name(dt));
    for (int i = 0; strides && i < ndim; i++)
        if (strides[i] < 0)
            return lt_error(LT_ERR_UNSUPPORTED, "from_external: stride %lld of dim %d is negative (expected >= 0)",
                            (long long)strides[i], i);
    int64_t contiguous[LT_MAX_DIMS];
    lt_contiguous_strides(dims, ndim, contiguous);
    if (!external_span(dims, strides ? strides : contiguous, ndim, elem, bytes))
        return lt_error(LT_ERR_SHAPE, "from_external: the strides span more than 2^59 bytes");
    return LT_OK;
}

/* The release of external memory nobody needs to be told about. */
static void release_nothing(void *ctx) { (void)ctx; }

lt_tensor *lt_from_external(void *data, const int64_t *dims, int ndim, const int64_t *strides, lt_dtype dt,
                            void (*release)(void *ctx), void *ctx)
{
    int64_t bytes = 0;
    if (check_external(data, dims, strides, ndim, dt, &bytes) != LT_OK)
        return NULL;
    lt_storage *s = malloc(sizeof *s);
    if (!s)
        return lt_error(LT_ERR_MEMORY, "from_external: out of memory"), NULL;
    atomic_init(&s->refcount, 1);
    atomic_init(&s->version, 0);
    s->data = data;
    s->nbytes = (size_t)bytes;
    s->device = lt_device_cpu();
    s->release = release ? release : release_nothing; /* never lt_free'd */
    s->release_ctx = ctx;
    lt_meta m = lt_meta_make(dt, dims, ndim);
    lt_tensor *t = lt_tensor_new_handle(&m, lt_device_cpu());
    if (!t) {
        free(s); /* the caller keeps the memory: no release */
        return NULL;
    }
    if (strides)
        memcpy(t->strides, strides, sizeof(int64_t) * (size_t)ndim);
    t->storage = s;
    t->made_by = "from_external";
    return lt_tensor_publish(t);
}

/* ---- conversions and copies -------------------------------------------- */

lt_tensor *lt_to_dtype(lt_tensor *t, lt_dtype dt)
{
    lt_attrs a = lt_attrs_init();
    a.dtype = (int32_t)dt;
    return lt_call1(LT_OP_CAST, t, &a);
}

lt_tensor *lt_clone(lt_tensor *t)
{
    if (lt_check_tensor("clone", t, 0) != LT_OK)
        return NULL;
    return lt_to_dtype(t, (lt_dtype)t->dtype);
}

lt_tensor *lt_contiguous(lt_tensor *t)
{
    if (lt_check_tensor("contiguous", t, 0) != LT_OK)
        return NULL;
    if (lt_tensor_contiguous(t)) {
        atomic_fetch_add(&t->refcount, 1);
        return lt_tensor_publish(t);
    }
    return lt_clone(t);
}

lt_tensor *lt_to(lt_tensor *t, lt_device dev)
{
    if (lt_check_tensor("to", t, 0) != LT_OK)
        return NULL;
    if (dev.kind != LT_DEVICE_CPU && dev.kind != LT_DEVICE_LAZY) {
        char d[32];
        return lt_error(LT_ERR_DEVICE, "to: invalid target device %s", lt_device_str(dev, d, sizeof d)), NULL;
    }
    if (t->device.kind == dev.kind)
        return lt_clone(t);
    if (dev.kind == LT_DEVICE_LAZY) {
        lt_tensor *c = lt_lazy_from_cpu(t);
        if (c)
            c->made_by = "to";
        return lt_tensor_publish(c);
    }
    double start = lt_now_ms();
    lt_tensor *r = lt_readable("to", t);
    if (!r)
        return NULL;
    lt_tensor *c = lt_clone(r); /* r is a cpu alias: the clone runs eagerly */
    lt_tensor_unref(r);
    lt_metric_add("TransferFromDevice", 1);
    lt_metric_time("TransferTime", lt_now_ms() - start);
    return c;
}

lt_tensor *lt_copy_(lt_tensor *dst, lt_tensor *src)
{
    lt_attrs a = lt_attrs_init();
    lt_tensor *in[2] = {dst, src};
    return lt_call_inplace(LT_OP_COPY, dst, in, 2, &a);
}

lt_tensor *lt_fill_(lt_tensor *dst, double value)
{
    lt_attrs a = lt_attrs_init();
    a.f[0] = value;
    a.nf = 1;
    return lt_call_inplace(LT_OP_FILL, dst, &dst, 1, &a);
}

lt_tensor *lt_zero_(lt_tensor *dst) { return lt_fill_(dst, 0.0); }

/* ---- reading values ----------------------------------------------------- */

lt_tensor *lt_readable(const char *name, lt_tensor *t)
{
    if (lt_check_tensor(name, t, 0) != LT_OK)
        return NULL;
    if (t->device.kind == LT_DEVICE_LAZY)
        return lt_lazy_sync_to_cpu_alias(t, name);
    atomic_fetch_add(&t->refcount, 1);
    return t;
}

static lt_status check_one_element(const char *name, lt_tensor *t)
{
    if (lt_shape_numel(t->shape, t->ndim) != 1) {
        char sb[160];
        return lt_error(LT_ERR_SHAPE, "%s: tensor of shape %s has %lld elements, expected exactly 1", name,
                        lt_shape_str(t->shape, t->ndim, sb, sizeof sb),
                        (long long)lt_shape_numel(t->shape, t->ndim));
    }
    return LT_OK;
}

lt_status lt_item(lt_tensor *t, double *out)
{
    if (!out)
        return lt_check_tensor("item", t, 0) != LT_OK ? lt_last_status()
                                                       : lt_error(LT_ERR_NULL, "item: out is NULL");
    lt_status st = lt_check_tensor("item", t, 0);
    if (st == LT_OK)
        st = check_one_element("item", t);
    lt_tensor *r = st == LT_OK ? lt_readable("item", t) : NULL;
    if (!r)
        return lt_last_status();
    *out = lt_eager_get(r, 0);
    lt_tensor_unref(r);
    return LT_OK;
}

lt_status lt_item_int(lt_tensor *t, int64_t *out)
{
    lt_status st = lt_check_tensor("item_int", t, 0);
    if (st != LT_OK)
        return st;
    if (!out)
        return lt_error(LT_ERR_NULL, "item_int: out is NULL");
    if ((st = check_one_element("item_int", t)) != LT_OK)
        return st;
    if (lt_dtype_is_floating((lt_dtype)t->dtype))
        return lt_error(LT_ERR_DTYPE, "item_int: tensor has floating dtype %s (use lt_item)",
                        lt_dtype_name((lt_dtype)t->dtype));
    lt_tensor *r = lt_readable("item_int", t);
    if (!r)
        return lt_last_status();
    const char *p = lt_tensor_ptr(r);
    switch ((lt_dtype)t->dtype) {
    case LT_I64: *out = LT_LOAD_i64(p); break;
    case LT_I32: *out = LT_LOAD_i32(p); break;
    case LT_U8: *out = LT_LOAD_u8(p); break;
    default: *out = LT_LOAD_b8(p); break;
    }
    lt_tensor_unref(r);
    return LT_OK;
}

lt_status lt_copy_to_host(lt_tensor *t, void *dst, size_t cap)
{
    lt_status st = lt_check_tensor("copy_to_host", t, 0);
    if (st != LT_OK)
        return st;
    size_t need = (size_t)lt_shape_numel(t->shape, t->ndim) * lt_dtype_size((lt_dtype)t->dtype);
    if (!dst && need > 0)
        return lt_error(LT_ERR_NULL, "copy_to_host: dst is NULL");
    if (cap < need)
        return lt_error(LT_ERR_ARGUMENT, "copy_to_host: buffer of %zu bytes is too small, need %zu", cap,
                        need);
    if (need == 0)
        return LT_OK;
    lt_tensor *r = lt_readable("copy_to_host", t);
    if (!r)
        return lt_last_status();
    lt_tensor *c = lt_eager_as_contiguous(r, (lt_dtype)r->dtype, "copy_to_host");
    lt_tensor_unref(r);
    if (!c)
        return lt_last_status();
    memcpy(dst, lt_tensor_ptr(c), need);
    lt_tensor_unref(c);
    return LT_OK;
}
