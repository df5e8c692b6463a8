/* functions.c - module-level functions of lazytensor._C that are not rows
 * of the registry (ops.c): conversions from Python data, text reports
 * (metrics, live tensors, IR dumps), dtype promotion and the Tensor class. */
#include "ltpy.h"

#include <stdlib.h>

/* ---- the lazy device --------------------------------------------------------- */

/* A string from an snprintf-style C function of a text buffer. */
typedef int (*text_fn)(char *, size_t, void *);
static PyObject *c_text(text_fn f, void *ctx)
{
    char small[4096];
    int n = f(small, sizeof small, ctx);
    if (n < 0)
        return ltpy_raise();
    if ((size_t)n < sizeof small)
        return PyUnicode_FromStringAndSize(small, n);
    char *buf = malloc((size_t)n + 1);
    if (!buf)
        return PyErr_NoMemory();
    f(buf, (size_t)n + 1, ctx);
    PyObject *r = PyUnicode_FromStringAndSize(buf, n);
    free(buf);
    return r;
}

static int report_text(char *b, size_t c, void *x) { (void)x; return lt_metrics_report(b, c); }
static int live_text(char *b, size_t c, void *x) { (void)x; return lt_live_tensor_report(b, c); }
static int cause_text(char *b, size_t c, void *x) { (void)x; return lt_lazy_last_compile_cause(b, c); }

static PyObject *f_metrics_report(PyObject *self, PyObject *unused)
{
    (void)self, (void)unused;
    return c_text(report_text, NULL);
}

static PyObject *f_live_tensor_report(PyObject *self, PyObject *unused)
{
    (void)self, (void)unused;
    return c_text(live_text, NULL);
}

static PyObject *f_last_compile_cause(PyObject *self, PyObject *unused)
{
    (void)self, (void)unused;
    return c_text(cause_text, NULL);
}

typedef struct {
    lt_tensor **ts;
    int n;
    bool dot;
} ir_request;

static int ir_text(char *b, size_t c, void *x)
{
    ir_request *r = x;
    return r->dot ? lt_ir_dot(r->ts, r->n, b, c) : lt_ir_text(r->ts, r->n, b, c);
}

/* ir(tensors, dot): the pending graph behind tensors as text or DOT. */
static PyObject *f_ir(PyObject *self, PyObject *args)
{
    (void)self;
    PyObject *seq;
    int dot = 0;
    if (!PyArg_ParseTuple(args, "O|p", &seq, &dot))
        return NULL;
    ir_request r = {NULL, 0, dot};
    if (!(r.ts = ltpy_tensor_list(seq, &r.n)))
        return NULL;
    PyObject *out = c_text(ir_text, &r);
    PyMem_Free(r.ts);
    return out;
}

/* ---- process state ------------------------------------------------------------ */

static PyObject *f_promote_types(PyObject *self, PyObject *args)
{
    (void)self;
    PyObject *a, *b;
    lt_dtype x, y;
    if (!PyArg_ParseTuple(args, "OO", &a, &b) || ltpy_parse_dtype(a, LT_F32, &x) < 0 ||
        ltpy_parse_dtype(b, LT_F32, &y) < 0)
        return NULL;
    return ltpy_dtype_object(lt_promote_types(x, y));
}

/* The class dict entries that describe a Python class's layout, not its
 * behaviour: the copy below has its own. */
static bool layout_entry(PyObject *key)
{
    static const char *const names[] = {"__slots__", "__dict__", "__weakref__"};
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
        if (PyUnicode_CompareWithASCIIString(key, names[i]) == 0)
            return true;
    return false;
}

/*
 * _set_tensor_class(cls) -> the class every result is made of: cls (a
 * Python subclass of _TensorBase that adds methods only) remade as a type
 * whose instances the cycle collector does not track. A tensor holds no
 * Python reference, only its C handle, so it can take part in no cycle;
 * tracking it would only make the allocation count trigger collections,
 * which stall training loops. Subclasses of the result (nn.Parameter) are
 * ordinary Python classes again.
 */
static PyObject *f_set_tensor_class(PyObject *self, PyObject *cls)
{
    (void)self;
    PyTypeObject *py = (PyTypeObject *)cls;
    if (!PyType_Check(cls) || py->tp_base != &LtTensor_Type || py->tp_dictoffset || py->tp_weaklistoffset ||
        py->tp_basicsize != LtTensor_Type.tp_basicsize)
        return PyErr_Format(PyExc_TypeError, "expected a subclass of _TensorBase with __slots__ = ()");
    PyType_Slot no_slots[] = {{0, NULL}};
    PyType_Spec spec = {"lazytensor.Tensor", 0, 0, Py_TPFLAGS_DEFAULT | Py_TPFLAGS_BASETYPE, no_slots};
    PyObject *type = PyType_FromSpecWithBases(&spec, (PyObject *)&LtTensor_Type);
    PyObject *key, *value;
    Py_ssize_t pos = 0;
    while (type && PyDict_Next(py->tp_dict, &pos, &key, &value))
        if (!layout_entry(key) && PyObject_SetAttr(type, key, value) < 0)
            Py_CLEAR(type);
    if (!type)
        return NULL;
    ltpy_tensor_class = (PyTypeObject *)Py_NewRef(type);
    return type;
}

/* _alias(cls, tensor): a cls instance sharing tensor's values, without
 * autograd history (lt_detach): how nn.Parameter wraps its data. */
static PyObject *f_alias(PyObject *self, PyObject *args)
{
    (void)self;
    PyObject *cls, *src;
    if (!PyArg_ParseTuple(args, "OO", &cls, &src))
        return NULL;
    lt_tensor *t = ltpy_tensor_arg(src, "data");
    if (!t)
        return NULL;
    if (!PyType_Check(cls) || !PyType_IsSubtype((PyTypeObject *)cls, &LtTensor_Type))
        return PyErr_Format(PyExc_TypeError, "expected a subclass of _TensorBase");
    lt_tensor *d = lt_detach(t);
    if (!d)
        return ltpy_raise();
    LtTensor *o = (LtTensor *)((PyTypeObject *)cls)->tp_alloc((PyTypeObject *)cls, 0);
    if (!o) {
        lt_release(d);
        return NULL;
    }
    o->t = d;
    return (PyObject *)o;
}

PyMethodDef ltpy_functions[] = {
    {"tensor", ltpy_tensor_from_data, METH_VARARGS, "tensor(data, dtype, device): a copy of data"},
    {"from_numpy", ltpy_from_numpy, METH_O, "a cpu tensor sharing a numpy array's memory"},
    {"from_dlpack_capsule", ltpy_from_dlpack_capsule, METH_O, "a cpu tensor sharing a DLPack capsule's memory"},
    {"metrics_report", f_metrics_report, METH_NOARGS, NULL},
    {"last_compile_cause", f_last_compile_cause, METH_NOARGS, NULL},
    {"ir", f_ir, METH_VARARGS, "ir(tensors, dot=False): the pending IR graph as text or DOT"},
    {"live_tensor_report", f_live_tensor_report, METH_NOARGS, NULL},
    {"promote_types", f_promote_types, METH_VARARGS, NULL},
    {"_set_tensor_class", f_set_tensor_class, METH_O, NULL},
    {"_alias", f_alias, METH_VARARGS, NULL},
    {NULL, NULL, 0, NULL},
};
