/* module.c - lazytensor._C: module init, errors, dtype and device objects,
 * argument parsing shared by the other files. */
#include "ltpy.h"

#include <string.h>

/* ---- errors ------------------------------------------------------------- */

static PyObject *exception_for(lt_status st)
{
    switch (st) {
    case LT_ERR_NULL:
    case LT_ERR_DTYPE:
        return PyExc_TypeError;
    case LT_ERR_ARGUMENT:
    case LT_ERR_SHAPE:
        return PyExc_ValueError;
    case LT_ERR_INDEX:
        return PyExc_IndexError;
    case LT_ERR_MEMORY:
        return PyExc_MemoryError;
    case LT_ERR_IO:
        return PyExc_OSError;
    default: /* device, released, state, unsupported */
        return PyExc_RuntimeError;
    }
}

PyObject *ltpy_raise(void)
{
    if (PyErr_Occurred()) { /* a Python error came first (a bad argument) */
        lt_clear_error();
        return NULL;
    }
    lt_status st = lt_last_status();
    const char *msg = lt_last_error();
    PyErr_SetString(exception_for(st), msg[0] ? msg : "lazytensor: operation failed");
    lt_clear_error();
    return NULL;
}

int ltpy_check(lt_status st)
{
    if (st == LT_OK)
        return 0;
    ltpy_raise();
    return -1;
}

/* ---- dtypes --------------------------------------------------------------- */

typedef struct {
    PyObject_HEAD
    lt_dtype dt;
} LtDType;

static const char *const dtype_names[LT_NUM_DTYPES] = {
    "float32", "float64", "int32", "int64", "uint8", "bool", "bfloat16", "float16",
};
static PyObject *dtype_objects[LT_NUM_DTYPES];

static PyObject *dtype_repr(PyObject *self)
{
    return PyUnicode_FromFormat("lazytensor.%s", dtype_names[((LtDType *)self)->dt]);
}

static PyObject *dtype_is_floating(PyObject *self, void *c)
{
    (void)c;
    return PyBool_FromLong(lt_dtype_is_floating(((LtDType *)self)->dt));
}

static PyObject *dtype_itemsize(PyObject *self, void *c)
{
    (void)c;
    return PyLong_FromSize_t(lt_dtype_size(((LtDType *)self)->dt));
}

static PyObject *dtype_code(PyObject *self, void *c)
{
    (void)c;
    return PyLong_FromLong(((LtDType *)self)->dt);
}

static PyGetSetDef dtype_getset[] = {
    {"is_floating_point", dtype_is_floating, NULL, "True for float32, float64, bfloat16, float16", NULL},
    {"itemsize", dtype_itemsize, NULL, "bytes per element", NULL},
    {"code", dtype_code, NULL, "the C library's lt_dtype value", NULL},
    {NULL, NULL, NULL, NULL, NULL},
};

PyTypeObject LtDType_Type = {
    PyVarObject_HEAD_INIT(NULL, 0).tp_name = "lazytensor.dtype",
    .tp_basicsize = sizeof(LtDType),
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_repr = dtype_repr,
    .tp_getset = dtype_getset,
    .tp_doc = "An element type (lazytensor.float32, ...).",
};

PyObject *ltpy_dtype_object(lt_dtype dt)
{
    if ((int)dt < 0 || dt >= LT_NUM_DTYPES) {
        PyErr_SetString(PyExc_RuntimeError, "invalid dtype");
        return NULL;
    }
    Py_INCREF(dtype_objects[dt]);
    return dtype_objects[dt];
}

int ltpy_parse_dtype(PyObject *o, lt_dtype dflt, lt_dtype *out)
{
    if (o == NULL || o == Py_None) {
        *out = dflt;
        return 0;
    }
    if (PyObject_TypeCheck(o, &LtDType_Type)) {
        *out = ((LtDType *)o)->dt;
        return 0;
    }
    if (PyUnicode_Check(o)) {
        const char *s = PyUnicode_AsUTF8(o);
        if (!s)
            return -1;
        for (int i = 0; i < LT_NUM_DTYPES; i++) {
            if (!strcmp(s, dtype_names[i]) || !strcmp(s, lt_dtype_name((lt_dtype)i))) {
                *out = (lt_dtype)i;
                return 0;
            }
        }
    }
    PyErr_Format(PyExc_TypeError, "expected a lazytensor dtype, got %R", o);
    return -1;
}

/* ---- devices -------------------------------------------------------------- */

typedef struct {
    PyObject_HEAD
    lt_device d;
} LtDevice;

int ltpy_parse_device(PyObject *o, lt_device *out)
{
    if (o == NULL || o == Py_None) {
        *out = lt_device_cpu();
        return 0;
    }
    if (PyObject_TypeCheck(o, &LtDevice_Type)) {
        *out = ((LtDevice *)o)->d;
        return 0;
    }
    if (!PyUnicode_Check(o)) {
        PyErr_Format(PyExc_TypeError, "expected a device or a device name such as 'cpu' or 'lazy', got %R", o);
        return -1;
    }
    const char *s = PyUnicode_AsUTF8(o);
    if (!s)
        return -1;
    *out = lt_device_parse(s);
    return out->kind == LT_DEVICE_INVALID ? (ltpy_raise(), -1) : 0;
}

static PyObject *device_new(PyTypeObject *type, PyObject *args, PyObject *kw)
{
    PyObject *spec;
    int index = -1;
    static char *kwlist[] = {"type", "index", NULL};
    if (!PyArg_ParseTupleAndKeywords(args, kw, "O|i:device", kwlist, &spec, &index))
        return NULL;
    lt_device d;
    if (ltpy_parse_device(spec, &d) < 0)
        return NULL;
    if (index >= 0)
        d.index = index;
    LtDevice *self = (LtDevice *)type->tp_alloc(type, 0);
    if (self)
        self->d = d;
    return (PyObject *)self;
}

static const char *kind_name(lt_device d) { return d.kind == LT_DEVICE_LAZY ? "lazy" : "cpu"; }

static PyObject *device_repr(PyObject *self)
{
    lt_device d = ((LtDevice *)self)->d;
    return PyUnicode_FromFormat("device(type='%s', index=%d)", kind_name(d), d.index);
}

static PyObject *device_str(PyObject *self)
{
    lt_device d = ((LtDevice *)self)->d;
    if (d.index == 0)
        return PyUnicode_FromString(kind_name(d));
    return PyUnicode_FromFormat("%s:%d", kind_name(d), d.index);
}

static PyObject *device_richcompare(PyObject *a, PyObject *b, int op)
{
    lt_device x = ((LtDevice *)a)->d, y;
    if ((op != Py_EQ && op != Py_NE) || (!PyUnicode_Check(b) && !PyObject_TypeCheck(b, &LtDevice_Type)))
        Py_RETURN_NOTIMPLEMENTED;
    if (ltpy_parse_device(b, &y) < 0) {
        PyErr_Clear();
        return PyBool_FromLong(op == Py_NE);
    }
    return PyBool_FromLong(lt_device_equal(x, y) == (op == Py_EQ));
}

static Py_hash_t device_hash(PyObject *self)
{
    lt_device d = ((LtDevice *)self)->d;
    return (Py_hash_t)(d.kind * 1000003 + d.index + 7);
}

static PyObject *device_type(PyObject *self, void *c)
{
    (void)c;
    return PyUnicode_FromString(kind_name(((LtDevice *)self)->d));
}

static PyObject *device_index(PyObject *self, void *c)
{
    (void)c;
    return PyLong_FromLong(((LtDevice *)self)->d.index);
}

static PyGetSetDef device_getset[] = {
    {"type", device_type, NULL, "'cpu' or 'lazy'", NULL},
    {"index", device_index, NULL, "device index", NULL},
    {NULL, NULL, NULL, NULL, NULL},
};

PyTypeObject LtDevice_Type = {
    PyVarObject_HEAD_INIT(NULL, 0).tp_name = "lazytensor.device",
    .tp_basicsize = sizeof(LtDevice),
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_new = device_new,
    .tp_repr = device_repr,
    .tp_str = device_str,
    .tp_richcompare = device_richcompare,
    .tp_hash = device_hash,
    .tp_getset = device_getset,
    .tp_doc = "device('cpu') or device('lazy'): where a tensor lives.",
};

PyObject *ltpy_device_object(lt_device d)
{
    LtDevice *o = PyObject_New(LtDevice, &LtDevice_Type);
    if (o)
        o->d = d;
    return (PyObject *)o;
}

/* ---- shapes and dims ------------------------------------------------------ */

static int parse_int64(PyObject *o, int64_t *out, const char *what)
{
    if (!PyIndex_Check(o) || PyBool_Check(o)) {
        PyErr_Format(PyExc_TypeError, "%s must be integers, got %R", what, o);
        return -1;
    }
    long long v = PyLong_AsLongLong(o);
    if (v == -1 && PyErr_Occurred()) {
        if (PyErr_ExceptionMatches(PyExc_TypeError)) { /* an __index__ object */
            PyErr_Clear();
            PyObject *i = PyNumber_Index(o);
            if (!i)
                return -1;
            v = PyLong_AsLongLong(i);
            Py_DECREF(i);
            if (v == -1 && PyErr_Occurred())
                return -1;
        } else {
            return -1;
        }
    }
    *out = v;
    return 0;
}

int ltpy_parse_shape(PyObject *o, int64_t *dims, int *ndim)
{
    if (PyIndex_Check(o) && !PyBool_Check(o)) {
        *ndim = 1;
        return parse_int64(o, dims, "sizes");
    }
    PyObject *seq = PySequence_Fast(o, "a shape must be an int or a sequence of ints");
    if (!seq)
        return -1;
    Py_ssize_t n = PySequence_Fast_GET_SIZE(seq);
    if (n > LT_MAX_DIMS) {
        Py_DECREF(seq);
        PyErr_Format(PyExc_ValueError, "a shape has at most %d dims, got %zd", LT_MAX_DIMS, n);
        return -1;
    }
    for (Py_ssize_t i = 0; i < n; i++) {
        if (parse_int64(PySequence_Fast_GET_ITEM(seq, i), &dims[i], "sizes") < 0) {
            Py_DECREF(seq);
            return -1;
        }
    }
    *ndim = (int)n;
    Py_DECREF(seq);
    return 0;
}

PyObject *ltpy_shape_tuple(lt_tensor *t)
{
    int nd = lt_tensor_ndim(t);
    const int64_t *s = lt_tensor_shape(t);
    if (nd < 0 || !s)
        return ltpy_raise();
    PyObject *tup = PyTuple_New(nd);
    for (int i = 0; tup && i < nd; i++) {
        PyObject *v = PyLong_FromLongLong(s[i]);
        if (!v) {
            Py_DECREF(tup);
            return NULL;
        }
        PyTuple_SET_ITEM(tup, i, v);
    }
    return tup;
}

/* ---- scalars as operands -------------------------------------------------- */

int ltpy_is_scalar(PyObject *o)
{
    return PyFloat_Check(o) || PyLong_Check(o) || (!ltpy_is_tensor(o) && PyIndex_Check(o)) ||
           (!ltpy_is_tensor(o) && Py_TYPE(o)->tp_as_number && Py_TYPE(o)->tp_as_number->nb_float &&
            !PySequence_Check(o));
}

static lt_dtype scalar_dtype(PyObject *s, lt_dtype like)
{
    bool like_float = lt_dtype_is_floating(like);
    if (PyBool_Check(s))
        return like;
    if (PyLong_Check(s) || PyIndex_Check(s))
        return like == LT_BOOL ? LT_I64 : like;
    return like_float ? like : LT_F32; /* a Python float */
}

lt_tensor *ltpy_scalar_tensor(PyObject *s, lt_tensor *like)
{
    lt_dtype dt = scalar_dtype(s, lt_tensor_dtype(like));
    double v = PyFloat_AsDouble(s);
    if (v == -1.0 && PyErr_Occurred())
        return NULL;
    lt_tensor *t = lt_scalar(v, dt, lt_tensor_device(like));
    if (!t)
        ltpy_raise();
    return t;
}

lt_tensor *ltpy_operand(PyObject *o, lt_tensor *like)
{
    if (ltpy_is_tensor(o))
        return lt_retain(LTPY_TENSOR(o));
    if (ltpy_is_scalar(o))
        return ltpy_scalar_tensor(o, like);
    PyErr_Format(PyExc_TypeError, "expected a Tensor or a number, got %.100s", Py_TYPE(o)->tp_name);
    return NULL;
}

lt_tensor **ltpy_tensor_list(PyObject *seq, int *n)
{
    PyObject *fast = PySequence_Fast(seq, "expected a sequence of tensors");
    if (!fast)
        return NULL;
    Py_ssize_t len = PySequence_Fast_GET_SIZE(fast);
    lt_tensor **ts = len > INT32_MAX ? (PyErr_SetString(PyExc_ValueError, "too many tensors"), NULL)
                                     : PyMem_Calloc((size_t)len + 1, sizeof *ts);
    for (Py_ssize_t i = 0; ts && i < len; i++) {
        if (!(ts[i] = ltpy_tensor_arg(PySequence_Fast_GET_ITEM(fast, i), "every element"))) {
            PyMem_Free(ts);
            ts = NULL;
        }
    }
    if (!ts && !PyErr_Occurred())
        PyErr_NoMemory();
    *n = (int)len;
    Py_DECREF(fast); /* the caller's sequence keeps the tensors */
    return ts;
}

lt_tensor *ltpy_tensor_arg(PyObject *o, const char *what)
{
    if (ltpy_is_tensor(o))
        return LTPY_TENSOR(o);
    PyErr_Format(PyExc_TypeError, "%s must be a Tensor, got %.100s", what, Py_TYPE(o)->tp_name);
    return NULL;
}

/* ---- the module ----------------------------------------------------------- */

static struct PyModuleDef module_def = {
    PyModuleDef_HEAD_INIT,
    .m_name = "lazytensor._C",
    .m_doc = "The C core of lazytensor (include/lazytensor.h) as a CPython extension.",
    .m_size = -1,
};

static int add_functions(PyObject *m, PyMethodDef *defs)
{
    return PyModule_AddFunctions(m, defs);
}

static int add_dtypes(PyObject *m)
{
    for (int i = 0; i < LT_NUM_DTYPES; i++) {
        LtDType *o = PyObject_New(LtDType, &LtDType_Type);
        if (!o)
            return -1;
        o->dt = (lt_dtype)i;
        dtype_objects[i] = (PyObject *)o;
        Py_INCREF(o);
        if (PyModule_AddObject(m, dtype_names[i], (PyObject *)o) < 0)
            return -1;
    }
    return 0;
}

static int add_type(PyObject *m, const char *name, PyTypeObject *type)
{
    if (PyType_Ready(type) < 0)
        return -1;
    Py_INCREF(type);
    return PyModule_AddObject(m, name, (PyObject *)type);
}

PyMODINIT_FUNC PyInit__C(void)
{
    PyObject *m = PyModule_Create(&module_def);
    if (!m)
        return NULL;
    if (add_type(m, "dtype", &LtDType_Type) < 0 || add_type(m, "device", &LtDevice_Type) < 0 ||
        add_type(m, "_TensorBase", &LtTensor_Type) < 0 || ltpy_ops_init(m) < 0 || add_dtypes(m) < 0 ||
        add_functions(m, ltpy_functions) < 0 || add_functions(m, ltpy_nn_functions) < 0 || ltpy_nn_init(m) < 0) {
        Py_DECREF(m);
        return NULL;
    }
    PyModule_AddStringConstant(m, "version", lt_version());
    return m;
}
