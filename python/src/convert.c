/* convert.c - tensors from Python data (nested lists, the buffer protocol,
 * zero-copy numpy arrays, DLPack capsules) and back (tolist, DLPack). */
#include "ltpy.h"

#include <stdlib.h>
#include <string.h>

/* ---- buffer formats ------------------------------------------------------ */

/* The dtype of a buffer format ("f", "<d", "=q", ...), or -1. */
static int format_dtype(const char *fmt, Py_ssize_t itemsize)
{
    if (!fmt)
        return LT_U8;
    if (*fmt == '<' || *fmt == '=' || *fmt == '@')
        fmt++;
    if (fmt[0] == 0 || fmt[1] != 0)
        return -1;
    switch (fmt[0]) {
    case 'f': return LT_F32;
    case 'd': return LT_F64;
    case 'e': return LT_F16;
    case 'B': return LT_U8;
    case '?': return LT_BOOL;
    case 'i': case 'l': case 'q':
        return itemsize == 4 ? LT_I32 : itemsize == 8 ? LT_I64 : -1;
    default: return -1;
    }
}

static PyObject *converted(lt_tensor *t, lt_dtype want)
{
    if (!t || lt_tensor_dtype(t) == want)
        return ltpy_wrap(t);
    lt_tensor *c = lt_to_dtype(t, want);
    lt_release(t);
    return ltpy_wrap(c);
}

/* A copy of a C-contiguous buffer. */
static PyObject *from_buffer(Py_buffer *b, PyObject *dtype, lt_device dev)
{
    int dt = format_dtype(b->format, b->itemsize);
    if (dt < 0 || lt_dtype_size((lt_dtype)dt) != (size_t)b->itemsize) {
        PyErr_Format(PyExc_TypeError, "unsupported buffer format '%s'", b->format ? b->format : "?");
        return NULL;
    }
    int64_t dims[LT_MAX_DIMS];
    if (b->ndim > LT_MAX_DIMS) {
        PyErr_Format(PyExc_ValueError, "at most %d dims, got %d", LT_MAX_DIMS, b->ndim);
        return NULL;
    }
    for (int i = 0; i < b->ndim; i++)
        dims[i] = b->shape ? b->shape[i] : b->len / b->itemsize;
    lt_dtype want;
    if (ltpy_parse_dtype(dtype, (lt_dtype)dt, &want) < 0)
        return NULL;
    return converted(lt_from_data(b->buf, dims, b->ndim, (lt_dtype)dt, dev), want);
}

/* ---- nested sequences --------------------------------------------------- */

enum { KIND_BOOL, KIND_INT, KIND_FLOAT };

typedef struct {
    int64_t dims[LT_MAX_DIMS];
    int ndim, kind;
    int64_t n;     /* elements written */
    void *out;     /* double, int64_t or uint8_t buffer */
} flatten_state;

static int shape_of(PyObject *o, flatten_state *s)
{
    s->ndim = 0;
    s->kind = KIND_BOOL;
    while (PyList_Check(o) || PyTuple_Check(o) || ltpy_is_tensor(o)) {
        if (ltpy_is_tensor(o)) { /* a tensor inside a list: its sizes */
            lt_tensor *t = LTPY_TENSOR(o);
            for (int i = 0; i < lt_tensor_ndim(t) && s->ndim < LT_MAX_DIMS; i++)
                s->dims[s->ndim++] = lt_tensor_shape(t)[i];
            break;
        }
        if (s->ndim == LT_MAX_DIMS) {
            PyErr_Format(PyExc_ValueError, "at most %d nested levels", LT_MAX_DIMS);
            return -1;
        }
        Py_ssize_t n = PySequence_Size(o);
        s->dims[s->ndim++] = n;
        if (n == 0)
            break;
        o = PySequence_GetItem(o, 0);
        if (!o)
            return -1;
        Py_DECREF(o); /* the sequence still holds it */
    }
    return 0;
}

static int scalar_kind(PyObject *o)
{
    if (PyBool_Check(o))
        return KIND_BOOL;
    if (PyLong_Check(o) || (PyIndex_Check(o) && !ltpy_is_tensor(o)))
        return KIND_INT;
    return KIND_FLOAT;
}

/* Walks o checking its shape; fills s->out when it is not NULL, else only
 * finds the kind. */
static int walk(PyObject *o, int level, flatten_state *s)
{
    if (level == s->ndim) {
        if (ltpy_is_tensor(o) && lt_tensor_numel(LTPY_TENSOR(o)) != 1) {
            PyErr_SetString(PyExc_ValueError, "only one-element tensors can be elements of a list");
            return -1;
        }
        if (!ltpy_is_scalar(o) && !ltpy_is_tensor(o)) {
            PyErr_Format(PyExc_TypeError, "expected a number in the nested list, got %.100s", Py_TYPE(o)->tp_name);
            return -1;
        }
        if (!s->out) {
            int k = ltpy_is_tensor(o) ? (lt_dtype_is_floating(lt_tensor_dtype(LTPY_TENSOR(o))) ? KIND_FLOAT
                                                                                              : KIND_INT)
                                      : scalar_kind(o);
            s->kind = k > s->kind ? k : s->kind;
            return 0;
        }
        if (s->kind == KIND_FLOAT) {
            double v = PyFloat_AsDouble(o);
            ((double *)s->out)[s->n++] = v;
            return v == -1.0 && PyErr_Occurred() ? -1 : 0;
        }
        long long v = ltpy_is_tensor(o) ? (long long)PyFloat_AsDouble(o) : PyLong_AsLongLong(o);
        if (v == -1 && PyErr_Occurred())
            return -1;
        if (s->kind == KIND_INT)
            ((int64_t *)s->out)[s->n++] = v;
        else
            ((uint8_t *)s->out)[s->n++] = v != 0;
        return 0;
    }
    if (!PyList_Check(o) && !PyTuple_Check(o)) {
        PyErr_SetString(PyExc_ValueError, "nested lists must have a regular shape");
        return -1;
    }
    PyObject *seq = PySequence_Fast(o, "expected a sequence");
    if (!seq)
        return -1;
    Py_ssize_t n = PySequence_Fast_GET_SIZE(seq);
    int rc = n == s->dims[level] ? 0 : -1;
    if (rc < 0)
        PyErr_Format(PyExc_ValueError, "expected a sequence of length %lld at dim %d (got %zd)",
                     (long long)s->dims[level], level, n);
    for (Py_ssize_t i = 0; rc == 0 && i < n; i++)
        rc = walk(PySequence_Fast_GET_ITEM(seq, i), level + 1, s);
    Py_DECREF(seq);
    return rc;
}

static PyObject *from_nested(PyObject *data, PyObject *dtype, lt_device dev)
{
    flatten_state s = {0};
    if (shape_of(data, &s) < 0 || walk(data, 0, &s) < 0)
        return NULL;
    static const lt_dtype kind_dtype[] = {LT_BOOL, LT_I64, LT_F64};
    static const lt_dtype kind_default[] = {LT_BOOL, LT_I64, LT_F32};
    int64_t numel = 1;
    for (int i = 0; i < s.ndim; i++)
        numel *= s.dims[i];
    s.out = malloc((size_t)(numel > 0 ? numel : 1) * 8);
    if (!s.out)
        return PyErr_NoMemory();
    lt_dtype want;
    PyObject *r = NULL;
    if (walk(data, 0, &s) == 0 && ltpy_parse_dtype(dtype, kind_default[s.kind], &want) == 0)
        r = converted(lt_from_data(s.out, s.dims, s.ndim, kind_dtype[s.kind], dev), want);
    free(s.out);
    return r;
}

/* _C.tensor(data, dtype, device): a copy of data (nested lists and tuples
 * of numbers, a scalar, a buffer such as a numpy array, or a Tensor). */
PyObject *ltpy_tensor_from_data(PyObject *self, PyObject *args)
{
    (void)self;
    PyObject *data, *dtype, *device;
    lt_device dev;
    if (!PyArg_ParseTuple(args, "OOO:tensor", &data, &dtype, &device) || ltpy_parse_device(device, &dev) < 0)
        return NULL;
    if (ltpy_is_tensor(data)) {
        lt_dtype want;
        if (ltpy_parse_dtype(dtype, lt_tensor_dtype(LTPY_TENSOR(data)), &want) < 0)
            return NULL;
        return converted(lt_to(LTPY_TENSOR(data), dev), want);
    }
    if (PyObject_CheckBuffer(data) && !PyBytes_Check(data)) {
        Py_buffer b;
        if (PyObject_GetBuffer(data, &b, PyBUF_C_CONTIGUOUS | PyBUF_FORMAT) == 0) {
            PyObject *r = from_buffer(&b, dtype, dev);
            PyBuffer_Release(&b);
            return r;
        }
        PyErr_Clear(); /* strided: read it as nested sequences */
    }
    return from_nested(data, dtype, dev);
}

/* ---- zero-copy numpy ------------------------------------------------------ */

static void release_py_buffer(void *ctx)
{
    PyGILState_STATE g = PyGILState_Ensure();
    PyBuffer_Release(ctx);
    PyMem_RawFree(ctx);
    PyGILState_Release(g);
}

/* from_numpy(array): a cpu tensor sharing the array's memory (any layout
 * with non-negative strides), which stays alive while the tensor does. */
PyObject *ltpy_from_numpy(PyObject *self, PyObject *arr)
{
    (void)self;
    Py_buffer *b = PyMem_RawMalloc(sizeof *b);
    if (!b)
        return PyErr_NoMemory();
    if (PyObject_GetBuffer(arr, b, PyBUF_RECORDS) < 0) {
        PyErr_Clear();
        if (PyObject_GetBuffer(arr, b, PyBUF_RECORDS_RO) < 0) {
            PyMem_RawFree(b);
            return NULL;
        }
    }
    int dt = format_dtype(b->format, b->itemsize);
    int64_t dims[LT_MAX_DIMS], strides[LT_MAX_DIMS];
    const char *bad = dt < 0 ? "unsupported dtype" : b->ndim > LT_MAX_DIMS ? "too many dims" : NULL;
    for (int i = 0; !bad && i < b->ndim; i++) {
        dims[i] = b->shape[i];
        strides[i] = b->strides[i] / b->itemsize;
        if (b->strides[i] % b->itemsize != 0)
            bad = "strides that are not a multiple of the element size";
    }
    if (bad) {
        PyErr_Format(PyExc_TypeError, "from_numpy: %s (format '%s')", bad, b->format ? b->format : "B");
        PyBuffer_Release(b);
        PyMem_RawFree(b);
        return NULL;
    }
    lt_tensor *t = lt_from_external(b->buf, dims, b->ndim, strides, (lt_dtype)dt, release_py_buffer, b);
    if (!t) { /* refused: the buffer is still ours */
        PyBuffer_Release(b);
        PyMem_RawFree(b);
    }
    return ltpy_wrap(t);
}

/* ---- tolist --------------------------------------------------------------- */

static PyObject *build_list(const char *p, lt_dtype dt, const int64_t *dims, int nd, int64_t *pos)
{
    if (nd == 0) {
        int64_t i = (*pos)++;
        switch (dt) {
        case LT_F32: return PyFloat_FromDouble(((const float *)p)[i]);
        case LT_F64: return PyFloat_FromDouble(((const double *)p)[i]);
        case LT_I32: return PyLong_FromLong(((const int32_t *)p)[i]);
        case LT_I64: return PyLong_FromLongLong(((const int64_t *)p)[i]);
        case LT_U8: return PyLong_FromLong(((const uint8_t *)p)[i]);
        default: return PyBool_FromLong(((const uint8_t *)p)[i]);
        }
    }
    PyObject *list = PyList_New(dims[0]);
    for (int64_t i = 0; list && i < dims[0]; i++) {
        PyObject *item = build_list(p, dt, dims + 1, nd - 1, pos);
        if (!item) {
            Py_CLEAR(list);
            break;
        }
        PyList_SET_ITEM(list, i, item);
    }
    return list;
}

PyObject *ltpy_tolist(PyObject *self, PyObject *unused)
{
    (void)unused;
    lt_tensor *t = LTPY_TENSOR(self);
    lt_dtype dt = lt_tensor_dtype(t);
    bool half = dt == LT_F16 || dt == LT_BF16;
    lt_tensor *src = half ? lt_to_dtype(t, LT_F32) : lt_retain(t);
    if (!src)
        return ltpy_raise();
    dt = lt_tensor_dtype(src);
    size_t bytes = (size_t)lt_tensor_numel(src) * lt_dtype_size(dt);
    char *buf = malloc(bytes ? bytes : 1);
    PyObject *r = NULL;
    if (!buf)
        r = PyErr_NoMemory();
    else if (ltpy_check(lt_copy_to_host(src, buf, bytes)) == 0) {
        int64_t pos = 0;
        r = build_list(buf, dt, lt_tensor_shape(src), lt_tensor_ndim(src), &pos);
    }
    free(buf);
    lt_release(src);
    return r;
}

/* ---- DLPack: lt_to_dlpack / lt_from_dlpack in PyCapsules ---------------------- */

static void dl_capsule_destructor(PyObject *capsule)
{
    if (PyCapsule_IsValid(capsule, "dltensor")) { /* never consumed */
        lt_dl_managed_tensor *m = PyCapsule_GetPointer(capsule, "dltensor");
        if (m && m->deleter)
            m->deleter(m);
    }
}

/* A tensor that cannot be exchanged is a BufferError, as numpy's; other
 * failures keep their usual exception. */
static PyObject *dl_raise(void)
{
    lt_status st = lt_last_status();
    if (st != LT_ERR_DEVICE && st != LT_ERR_DTYPE && st != LT_ERR_SHAPE)
        return ltpy_raise();
    PyErr_SetString(PyExc_BufferError, lt_last_error());
    lt_clear_error();
    return NULL;
}

PyObject *ltpy_to_dlpack(PyObject *self, PyObject *args, PyObject *kw)
{
    PyObject *stream = Py_None;
    static char *kwlist[] = {"stream", NULL};
    if (!PyArg_ParseTupleAndKeywords(args, kw, "|O:__dlpack__", kwlist, &stream))
        return NULL;
    lt_dl_managed_tensor *m = lt_to_dlpack(LTPY_TENSOR(self));
    if (!m)
        return dl_raise();
    PyObject *cap = PyCapsule_New(m, "dltensor", dl_capsule_destructor);
    if (!cap)
        m->deleter(m);
    return cap;
}

/* An imported tensor keeps this around the producer's: its deleter (which
 * may touch Python objects) runs holding the GIL, whichever thread drops
 * the last tensor. */
typedef struct {
    lt_dl_managed_tensor outer;
    lt_dl_managed_tensor *producer;
} dl_import;

static void dl_import_delete(lt_dl_managed_tensor *m)
{
    dl_import *w = (dl_import *)m;
    if (w->producer->deleter) {
        PyGILState_STATE g = PyGILState_Ensure();
        w->producer->deleter(w->producer);
        PyGILState_Release(g);
    }
    PyMem_RawFree(w);
}

/* _C.from_dlpack(capsule): a cpu tensor sharing the producer's memory. */
PyObject *ltpy_from_dlpack_capsule(PyObject *self, PyObject *capsule)
{
    (void)self;
    lt_dl_managed_tensor *m = PyCapsule_GetPointer(capsule, "dltensor");
    dl_import *w = m ? PyMem_RawMalloc(sizeof *w) : NULL;
    if (!w)
        return m ? PyErr_NoMemory() : NULL;
    *w = (dl_import){{m->dl_tensor, w, dl_import_delete}, m};
    lt_tensor *t = lt_from_dlpack(&w->outer);
    if (!t) {
        PyMem_RawFree(w); /* the capsule keeps m: its destructor frees it */
        return dl_raise();
    }
    if (PyCapsule_SetName(capsule, "used_dltensor") < 0) {
        lt_release(t); /* calls the deleter */
        return NULL;
    }
    return ltpy_wrap(t);
}
