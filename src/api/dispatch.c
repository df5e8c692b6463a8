/* dispatch.c - validation, inference and device dispatch of every op. */
#include "api/api.h"

#include <stdlib.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>

#define SMALL_INPUTS 8

static lt_autograd_hooks autograd;

/* lt_attrs_init() as a constant (all cleared, dtype -1, cpu device), for
 * calls without attributes: no struct to build per op. */
static const lt_attrs no_attrs = {.dtype = -1};

/* "add_", "mul_", ...: names of the in-place forms, built once (formatting
 * them on every call would cost more than a tiny op). */
static char inplace_names[LT_OP_COUNT][48];
static pthread_once_t inplace_names_once = PTHREAD_ONCE_INIT;

static void build_inplace_names(void)
{
    for (int op = 0; op < LT_OP_COUNT; op++)
        snprintf(inplace_names[op], sizeof inplace_names[op], "%s_", lt_op_infos[op].name);
}

static const char *inplace_name(lt_op op)
{
    pthread_once(&inplace_names_once, build_inplace_names);
    return inplace_names[op];
}

void lt_set_autograd_hooks(const lt_autograd_hooks *hooks)
{
    if (hooks)
        autograd = *hooks;
}

static bool any_autograd_state(lt_tensor *const *in, int nin)
{
    for (int i = 0; i < nin; i++)
        if (in[i]->autograd)
            return true;
    return false;
}

/* Checks every input handle and that they share one device. */
static lt_status check_inputs(const char *name, lt_tensor *const *in, int nin, lt_device *dev)
{
    for (int i = 0; i < nin; i++) {
        lt_status st = lt_check_tensor(name, in[i], i);
        if (st != LT_OK)
            return st;
    }
    for (int i = 1; i < nin; i++) {
        if (!lt_device_equal(in[i]->device, in[0]->device)) {
            char d0[32], d1[32];
            return lt_error(LT_ERR_DEVICE,
                            "%s: mixed devices: argument 0 is on %s but argument %d is on %s "
                            "(use lt_to to move data explicitly)",
                            name, lt_device_str(in[0]->device, d0, sizeof d0), i,
                            lt_device_str(in[i]->device, d1, sizeof d1));
        }
    }
    if (nin > 0)
        *dev = in[0]->device;
    return LT_OK;
}

/* The device can run here: built in, and for the lazy device, owned by
 * this thread (checked before anything reads lazy state). */
static lt_status device_runnable(const char *name, lt_device dev)
{
    if (dev.kind == LT_DEVICE_LAZY)
        return lt_lazy_enter(name);
    if (dev.kind == LT_DEVICE_CPU)
        return LT_OK;
    char d[32];
    return lt_error(LT_ERR_UNSUPPORTED, "%s: device %s is not available in this build", name,
                    lt_device_str(dev, d, sizeof d));
}

/* Runs op on the inputs' device. */
static lt_status run_on_device(lt_op op, lt_tensor *const *in, int nin, const lt_attrs *a,
                               const lt_meta *om, lt_tensor **out, lt_device dev)
{
    if (dev.kind == LT_DEVICE_LAZY)
        return lt_lazy_run(op, in, nin, a, om, out);
    return lt_eager_run(op, in, nin, a, om, out, dev);
}

/* True if an input has o's dtype and shape: its tensor passed
 * lt_check_shape with them (every tensor does), so o would pass it too. */
static bool same_as_an_input(const lt_meta *o, const lt_meta *im, int nin)
{
    for (int i = 0; i < nin; i++)
        if (im[i].dtype == o->dtype && lt_shape_equal(im[i].shape, im[i].ndim, o->shape, o->ndim))
            return true;
    return false;
}

/* Refuses outputs too large for this machine before any device sees them
 * (the lazy device allocates nothing at trace time, so it relies on this). */
static lt_status check_output_sizes(lt_op op, const lt_meta *om, const lt_meta *im, int nin)
{
    const lt_op_info *info = &lt_op_infos[op];
    if (info->cls == LT_OPC_DATADEP)
        return LT_OK; /* sizes known only after running */
    for (int k = 0; k < info->nout; k++) {
        if (same_as_an_input(&om[k], im, nin))
            continue;
        lt_status st = lt_check_shape(info->name, om[k].shape, om[k].ndim, (lt_dtype)om[k].dtype);
        if (st != LT_OK)
            return st;
    }
    return LT_OK;
}

/* True if several elements of t share one memory location (a stride-0
 * dim of size > 1, as made by lt_expand): in-place writes to it are
 * ambiguous. */
static bool self_overlapping(const lt_tensor *t)
{
    for (int d = 0; d < t->ndim; d++)
        if (t->strides[d] == 0 && t->shape[d] > 1)
            return true;
    return false;
}

/* Fills metas for the inputs (heap-allocated for long variadic lists). */
static lt_meta *input_metas(lt_tensor *const *in, int nin, lt_meta *small)
{
    lt_meta *m = nin <= SMALL_INPUTS ? small : malloc(sizeof *m * (size_t)nin);
    if (!m) {
        lt_error(LT_ERR_MEMORY, "dispatch: out of memory");
        return NULL;
    }
    for (int i = 0; i < nin; i++)
        m[i] = lt_tensor_meta(in[i]);
    return m;
}

/* Names the outputs' maker, hands outputs after the first to extra (or
 * drops them) and publishes the first. */
static lt_tensor *publish_outputs(lt_op op, lt_tensor **out, lt_tensor **extra)
{
    const lt_op_info *info = &lt_op_infos[op];
    for (int k = 0; k < info->nout; k++)
        out[k]->made_by = info->name;
    for (int k = 1; k < info->nout; k++) {
        if (extra)
            extra[k - 1] = lt_tensor_publish(out[k]);
        else
            lt_tensor_unref(out[k]);
    }
    return lt_tensor_publish(out[0]);
}

lt_tensor *lt_call(lt_op op, lt_tensor *const *in, int nin, const lt_attrs *a, lt_tensor **extra)
{
    const lt_op_info *info = &lt_op_infos[op];
    if (!a) /* NULL: no attributes, as lt_call1 and lt_call2 take it */
        a = &no_attrs;
    lt_device dev = a->device;
    if (nin > 0 && !in)
        return lt_error(LT_ERR_NULL, "%s: the input list is NULL", info->name), NULL;
    if (check_inputs(info->name, in, nin, &dev) != LT_OK)
        return NULL;
    if (device_runnable(info->name, dev) != LT_OK)
        return NULL;
    lt_meta small[SMALL_INPUTS], om[LT_MAX_OUTPUTS];
    lt_meta *im = input_metas(in, nin, small);
    if (!im)
        return NULL;
    lt_status st = lt_op_infer(op, im, nin, a, om);
    if (st == LT_OK)
        st = check_output_sizes(op, om, im, nin);
    if (im != small)
        free(im);
    if (st != LT_OK)
        return NULL;
    lt_tensor *out[LT_MAX_OUTPUTS] = {NULL};
    if (run_on_device(op, in, nin, a, om, out, dev) != LT_OK)
        return NULL;
    if (autograd.record && any_autograd_state(in, nin) && autograd.record(op, in, nin, a, out) != LT_OK) {
        for (int k = 0; k < info->nout; k++)
            lt_tensor_unref(out[k]);
        return NULL;
    }
    return publish_outputs(op, out, extra);
}

/* True when a and b touch the same memory with different geometry, so an
 * elementwise kernel writing a while reading b could read clobbered data. */
static bool overlaps_unsafely(const lt_tensor *dst, const lt_tensor *src)
{
    if (!dst->storage || dst->storage != src->storage)
        return false;
    if (dst->offset != src->offset || dst->ndim != src->ndim)
        return true;
    for (int d = 0; d < dst->ndim; d++)
        if (dst->shape[d] != src->shape[d] || dst->strides[d] != src->strides[d])
            return true;
    return false;
}

lt_tensor *lt_call_inplace(lt_op op, lt_tensor *dst, lt_tensor *const *in, int nin, const lt_attrs *a)
{
    const char *name = inplace_name(op);
    if (lt_check_tensor(name, dst, 0) != LT_OK)
        return NULL;
    lt_device dev = dst->device; /* an op with no input runs where its destination is */
    if (check_inputs(name, in, nin, &dev) != LT_OK)
        return NULL;
    if (!lt_device_equal(dev, dst->device))
        return lt_error(LT_ERR_DEVICE, "%s: inputs and destination are on different devices", name), NULL;
    if (device_runnable(name, dev) != LT_OK)
        return NULL;
    if (autograd.inplace_guard && (dst->autograd || any_autograd_state(in, nin)) &&
        autograd.inplace_guard(name, dst, in, nin) != LT_OK)
        return NULL;
    if (self_overlapping(dst))
        return lt_error(LT_ERR_UNSUPPORTED,
                        "%s: in-place update of an expanded view is not supported (several elements of the "
                        "destination share one memory location)",
                        name), NULL;
    lt_meta small[SMALL_INPUTS], om[LT_MAX_OUTPUTS];
    lt_meta *im = input_metas(in, nin, small);
    if (!im)
        return NULL;
    lt_status st = lt_op_infer(op, im, nin, a, om);
    if (im != small)
        free(im);
    if (st != LT_OK)
        return NULL;
    if (!lt_shape_equal(om[0].shape, om[0].ndim, dst->shape, dst->ndim)) {
        char s1[160], s2[160];
        lt_error(LT_ERR_SHAPE, "%s: result shape %s does not match the destination shape %s", name,
                 lt_shape_str(om[0].shape, om[0].ndim, s1, sizeof s1),
                 lt_shape_str(dst->shape, dst->ndim, s2, sizeof s2));
        return NULL;
    }
    if (!lt_can_cast((lt_dtype)om[0].dtype, (lt_dtype)dst->dtype)) {
        lt_error(LT_ERR_DTYPE, "%s: result dtype %s cannot be written into a %s destination", name,
                 lt_dtype_name((lt_dtype)om[0].dtype), lt_dtype_name((lt_dtype)dst->dtype));
        return NULL;
    }
    if (dev.kind == LT_DEVICE_LAZY)
        return lt_lazy_run_inplace(op, dst, in, nin, a, om) == LT_OK ? dst : NULL;
    bool direct = om[0].dtype == dst->dtype;
    for (int i = 0; i < nin && direct; i++)
        if (in[i] != dst && overlaps_unsafely(dst, in[i]))
            direct = false;
    if (direct) {
        lt_tensor *out[LT_MAX_OUTPUTS] = {dst};
        atomic_fetch_add(&dst->refcount, 1); /* lt_eager_run drops outputs on failure */
        lt_status st = lt_eager_run(op, in, nin, a, om, out, dev);
        if (st == LT_OK) {
            atomic_fetch_add(&dst->storage->version, 1);
            lt_tensor_unref(dst);
        }
        return st == LT_OK ? dst : NULL;
    }
    lt_tensor *tmp[LT_MAX_OUTPUTS] = {NULL};
    if (lt_eager_run(op, in, nin, a, om, tmp, dev) != LT_OK)
        return NULL;
    lt_eager_copy(dst, tmp[0]);
    atomic_fetch_add(&dst->storage->version, 1);
    lt_tensor_unref(tmp[0]);
    return dst;
}

/* The meta of a wrapped C scalar: 0-d f64, weak. */
static lt_meta scalar_meta(void)
{
    lt_meta m;
    lt_meta_fill(&m, LT_F64, NULL, 0, 1);
    return m;
}

lt_tensor *lt_wrap_scalar(double v, lt_device dev)
{
    if (dev.kind == LT_DEVICE_LAZY)
        return lt_lazy_wrap_scalar(v);
    lt_meta m = scalar_meta();
    lt_tensor *t = lt_tensor_alloc(&m, dev, "scalar");
    if (t)
        *(double *)lt_tensor_ptr(t) = v;
    return t;
}

lt_tensor *lt_call1(lt_op op, lt_tensor *t, const lt_attrs *a)
{
    return lt_call(op, &t, 1, a ? a : &no_attrs, NULL);
}

lt_tensor *lt_call2(lt_op op, lt_tensor *x, lt_tensor *y, const lt_attrs *a)
{
    lt_tensor *in[2] = {x, y};
    return lt_call(op, in, 2, a ? a : &no_attrs, NULL);
}

/*
 * On the lazy device a scalar operand needs no tensor of its own: its value
 * becomes an IR scalar node, exactly the node its wrapper would record, and
 * the result is the same as lt_call over the wrapper's. The wrapper stays
 * where the op falls back to eager kernels (they need a tensor) and where
 * autograd records the op (its gradient keeps the operands).
 */
static bool lazy_scalar_direct(lt_op op, const lt_tensor *t)
{
    const lt_op_info *info = &lt_op_infos[op];
    return t->device.kind == LT_DEVICE_LAZY && !t->autograd && info->nin == 2 && info->cls != LT_OPC_VIEW &&
           !(info->flags & LT_OPF_NOLOWER);
}

static lt_tensor *lazy_call_scalar(lt_op op, lt_tensor *t, double s, bool reversed, const lt_attrs *a)
{
    if (!a)
        a = &no_attrs;
    lt_meta im[2], om[LT_MAX_OUTPUTS];
    im[reversed] = lt_tensor_meta(t);
    im[!reversed] = scalar_meta();
    if (lt_op_infer(op, im, 2, a, om) != LT_OK || check_output_sizes(op, om, im, 2) != LT_OK)
        return NULL;
    lt_tensor *out[LT_MAX_OUTPUTS] = {NULL};
    if (lt_lazy_run_scalar(op, t, s, reversed, a, om, out) != LT_OK)
        return NULL;
    return publish_outputs(op, out, NULL);
}

lt_tensor *lt_call_scalar(lt_op op, lt_tensor *t, double s, bool reversed, const lt_attrs *a)
{
    if (lt_check_tensor(lt_op_name(op), t, 0) != LT_OK || device_runnable(lt_op_name(op), t->device) != LT_OK)
        return NULL;
    if (lazy_scalar_direct(op, t))
        return lazy_call_scalar(op, t, s, reversed, a);
    lt_tensor *w = lt_wrap_scalar(s, t->device);
    if (!w)
        return NULL;
    lt_tensor *r = reversed ? lt_call2(op, w, t, a) : lt_call2(op, t, w, a);
    lt_tensor_unref(w);
    return r;
}

lt_tensor *lt_call_scalar_inplace(lt_op op, lt_tensor *dst, double s, const lt_attrs *a)
{
    const char *name = inplace_name(op);
    if (lt_check_tensor(name, dst, 0) != LT_OK || device_runnable(name, dst->device) != LT_OK)
        return NULL;
    lt_tensor *w = lt_wrap_scalar(s, dst->device);
    if (!w)
        return NULL;
    lt_attrs none = lt_attrs_init();
    lt_tensor *in[2] = {dst, w};
    lt_tensor *r = lt_call_inplace(op, dst, in, 2, a ? a : &none);
    lt_tensor_unref(w);
    return r;
}
