/* functions.c - module-level functions of lazytensor._C: factories,
 * joining, grad mode, the lazy device (barriers, metrics, IR dumps) and
 * leak checks. Keyword handling lives in the Python package. */
#include "ltpy.h"

#include <stdlib.h>

/* ---- factories: (shape, [value,] dtype, device) -------------------------- */

typedef struct {
    int64_t dims[LT_MAX_DIMS];
    int nd;
    lt_dtype dt;
    lt_device dev;
} factory_args;

static int parse_factory(PyObject *shape, PyObject *dtype, PyObject *device, lt_dtype dflt, factory_args *a)
{
    if (ltpy_parse_shape(shape, a->dims, &a->nd) < 0 || ltpy_parse_dtype(dtype, dflt, &a->dt) < 0)
        return -1;
    return ltpy_parse_device(device, &a->dev);
}

typedef lt_tensor *(*factory_fn)(const int64_t *, int, lt_dtype, lt_device);
static PyObject *factory(PyObject *args, factory_fn f)
{
    PyObject *shape, *dtype, *device;
    factory_args a;
    if (!PyArg_ParseTuple(args, "OOO", &shape, &dtype, &device) || parse_factory(shape, dtype, device, LT_F32, &a) < 0)
        return NULL;
    return ltpy_wrap(f(a.dims, a.nd, a.dt, a.dev));
}

#define FACTORY(name)                                                 \
    static PyObject *f_##name(PyObject *self, PyObject *args)         \
    {                                                                 \
        (void)self;                                                   \
        return factory(args, lt_##name);                              \
    }
FACTORY(empty) FACTORY(zeros) FACTORY(ones) FACTORY(rand) FACTORY(randn)
#undef FACTORY

static PyObject *f_full(PyObject *self, PyObject *args)
{
    (void)self;
    PyObject *shape, *dtype, *device;
    double v;
    factory_args a;
    if (!PyArg_ParseTuple(args, "OdOO", &shape, &v, &dtype, &device) ||
        parse_factory(shape, dtype, device, LT_F32, &a) < 0)
        return NULL;
    return ltpy_wrap(lt_full(a.dims, a.nd, v, a.dt, a.dev));
}

static PyObject *f_randint(PyObject *self, PyObject *args)
{
    (void)self;
    long long lo, hi;
    PyObject *shape, *dtype, *device;
    factory_args a;
    if (!PyArg_ParseTuple(args, "LLOOO", &lo, &hi, &shape, &dtype, &device) ||
        parse_factory(shape, dtype, device, LT_I64, &a) < 0)
        return NULL;
    return ltpy_wrap(lt_randint(lo, hi, a.dims, a.nd, a.dt, a.dev));
}

static PyObject *f_arange(PyObject *self, PyObject *args)
{
    (void)self;
    double start, end, step;
    PyObject *dtype, *device;
    lt_dtype dt;
    lt_device dev;
    if (!PyArg_ParseTuple(args, "dddOO", &start, &end, &step, &dtype, &device) ||
        ltpy_parse_dtype(dtype, LT_F32, &dt) < 0 || ltpy_parse_device(device, &dev) < 0)
        return NULL;
    return ltpy_wrap(lt_arange(start, end, step, dt, dev));
}

static PyObject *f_linspace(PyObject *self, PyObject *args)
{
    (void)self;
    double start, end;
    long long steps;
    PyObject *dtype, *device;
    lt_dtype dt;
    lt_device dev;
    if (!PyArg_ParseTuple(args, "ddLOO", &start, &end, &steps, &dtype, &device) ||
        ltpy_parse_dtype(dtype, LT_F32, &dt) < 0 || ltpy_parse_device(device, &dev) < 0)
        return NULL;
    return ltpy_wrap(lt_linspace(start, end, steps, dt, dev));
}

static PyObject *f_eye(PyObject *self, PyObject *args)
{
    (void)self;
    long long n, m;
    PyObject *dtype, *device;
    lt_dtype dt;
    lt_device dev;
    if (!PyArg_ParseTuple(args, "LLOO", &n, &m, &dtype, &device) || ltpy_parse_dtype(dtype, LT_F32, &dt) < 0 ||
        ltpy_parse_device(device, &dev) < 0)
        return NULL;
    return ltpy_wrap(lt_eye(n, m, dt, dev));
}

static PyObject *f_manual_seed(PyObject *self, PyObject *arg)
{
    (void)self;
    unsigned long long s = PyLong_AsUnsignedLongLongMask(arg);
    if (PyErr_Occurred())
        return NULL;
    lt_manual_seed(s);
    Py_RETURN_NONE;
}

/* ---- joining and selecting ---------------------------------------------- */

typedef lt_tensor *(*join_fn)(lt_tensor *const *, int, int);
static PyObject *join(PyObject *args, join_fn f)
{
    PyObject *seq;
    int dim = 0;
    if (!PyArg_ParseTuple(args, "O|i", &seq, &dim))
        return NULL;
    PyObject *fast = PySequence_Fast(seq, "expected a sequence of tensors");
    if (!fast)
        return NULL;
    Py_ssize_t n = PySequence_Fast_GET_SIZE(fast);
    lt_tensor **ts = PyMem_Calloc((size_t)(n ? n : 1), sizeof *ts);
    PyObject *r = NULL;
    bool ok = ts != NULL;
    for (Py_ssize_t i = 0; ok && i < n; i++)
        ok = (ts[i] = ltpy_tensor_arg(PySequence_Fast_GET_ITEM(fast, i), "every element")) != NULL;
    if (ok && n > INT32_MAX)
        PyErr_SetString(PyExc_ValueError, "too many tensors");
    else if (ok)
        r = ltpy_wrap(f(ts, (int)n, dim));
    else if (!ts)
        PyErr_NoMemory();
    PyMem_Free(ts);
    Py_DECREF(fast);
    return r;
}
static PyObject *f_cat(PyObject *self, PyObject *args) { (void)self; return join(args, lt_cat); }
static PyObject *f_stack(PyObject *self, PyObject *args) { (void)self; return join(args, lt_stack); }

/* where(cond, a, b): a or b may be numbers (wrapped next to the other). */
static PyObject *f_where(PyObject *self, PyObject *args)
{
    (void)self;
    PyObject *c, *a, *b;
    if (!PyArg_ParseTuple(args, "OOO:where", &c, &a, &b))
        return NULL;
    lt_tensor *cond = ltpy_tensor_arg(c, "condition");
    if (!cond)
        return NULL;
    lt_tensor *like = ltpy_is_tensor(a) ? LTPY_TENSOR(a) : ltpy_is_tensor(b) ? LTPY_TENSOR(b) : NULL;
    lt_tensor *fallback = NULL;
    if (!like) /* two numbers: a 0-dim f32 (or i64) next to the condition */
        like = fallback = lt_scalar(0, PyFloat_Check(a) || PyFloat_Check(b) ? LT_F32 : LT_I64,
                                    lt_tensor_device(cond));
    lt_tensor *x = ltpy_operand(a, like), *y = x ? ltpy_operand(b, like) : NULL;
    PyObject *r = y ? ltpy_wrap(lt_where(cond, x, y)) : NULL;
    lt_release(x), lt_release(y), lt_release(fallback);
    return r;
}

static PyObject *f_multinomial(PyObject *self, PyObject *args)
{
    (void)self;
    PyObject *p;
    long long n;
    int replacement = 0;
    if (!PyArg_ParseTuple(args, "OL|p", &p, &n, &replacement))
        return NULL;
    lt_tensor *probs = ltpy_tensor_arg(p, "input");
    return probs ? ltpy_wrap(lt_multinomial(probs, n, replacement)) : NULL;
}

/* ---- grad mode ------------------------------------------------------------- */

static PyObject *f_no_grad_begin(PyObject *self, PyObject *unused)
{
    (void)self, (void)unused;
    lt_no_grad_begin();
    Py_RETURN_NONE;
}

static PyObject *f_no_grad_end(PyObject *self, PyObject *unused)
{
    (void)self, (void)unused;
    lt_no_grad_end();
    Py_RETURN_NONE;
}

static PyObject *f_is_grad_enabled(PyObject *self, PyObject *unused)
{
    (void)self, (void)unused;
    return PyBool_FromLong(lt_grad_enabled());
}

/* ---- the lazy device --------------------------------------------------------- */

static PyObject *f_mark_step(PyObject *self, PyObject *unused)
{
    (void)self, (void)unused;
    if (ltpy_check(lt_mark_step()) < 0)
        return NULL;
    Py_RETURN_NONE;
}

static PyObject *f_sync(PyObject *self, PyObject *unused)
{
    (void)self, (void)unused;
    if (ltpy_check(lt_barrier(true)) < 0)
        return NULL;
    Py_RETURN_NONE;
}

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

static PyObject *f_metrics_counter(PyObject *self, PyObject *arg)
{
    (void)self;
    const char *name = PyUnicode_AsUTF8(arg);
    return name ? PyLong_FromLongLong(lt_metrics_counter(name)) : NULL;
}

static PyObject *f_metrics_reset(PyObject *self, PyObject *unused)
{
    (void)self, (void)unused;
    lt_metrics_reset();
    Py_RETURN_NONE;
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
    PyObject *fast = PySequence_Fast(seq, "expected a sequence of tensors");
    if (!fast)
        return NULL;
    int n = (int)PySequence_Fast_GET_SIZE(fast);
    ir_request r = {PyMem_Calloc((size_t)(n ? n : 1), sizeof(lt_tensor *)), n, dot};
    PyObject *out = NULL;
    bool ok = r.ts != NULL;
    for (int i = 0; ok && i < n; i++)
        ok = (r.ts[i] = ltpy_tensor_arg(PySequence_Fast_GET_ITEM(fast, i), "every element")) != NULL;
    if (ok)
        out = c_text(ir_text, &r);
    PyMem_Free(r.ts);
    Py_DECREF(fast);
    return out;
}

static PyObject *f_set_backend(PyObject *self, PyObject *arg)
{
    (void)self;
    const char *name = PyUnicode_AsUTF8(arg);
    if (!name || ltpy_check(lt_lazy_set_backend(name)) < 0)
        return NULL;
    Py_RETURN_NONE;
}

static PyObject *f_backend(PyObject *self, PyObject *unused)
{
    (void)self, (void)unused;
    return PyUnicode_FromString(lt_lazy_backend());
}

static PyObject *f_wait_compiles(PyObject *self, PyObject *unused)
{
    (void)self, (void)unused;
    lt_lazy_wait_compiles();
    Py_RETURN_NONE;
}

static PyObject *f_lazy_discard(PyObject *self, PyObject *unused)
{
    (void)self, (void)unused;
    int64_t n = lt_lazy_discard();
    return n < 0 ? ltpy_raise() : PyLong_FromLongLong(n);
}

/* ---- process state ------------------------------------------------------------ */

static PyObject *f_live_tensor_count(PyObject *self, PyObject *unused)
{
    (void)self, (void)unused;
    return PyLong_FromLongLong(lt_live_tensor_count());
}

/* Tensors the user holds (lt_live_tensors), the count the C library's leak
 * checks use. */
static PyObject *f_live_tensors(PyObject *self, PyObject *unused)
{
    (void)self, (void)unused;
    int64_t n = lt_live_tensors(NULL, 0);
    return n < 0 ? ltpy_raise() : PyLong_FromLongLong(n);
}

static PyObject *f_set_num_threads(PyObject *self, PyObject *arg)
{
    (void)self;
    int n = PyLong_AsLong(arg);
    if (n == -1 && PyErr_Occurred())
        return NULL;
    lt_set_num_threads(n);
    Py_RETURN_NONE;
}

static PyObject *f_get_num_threads(PyObject *self, PyObject *unused)
{
    (void)self, (void)unused;
    return PyLong_FromLong(lt_get_num_threads());
}

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

/* _set_tensor_class(cls): results are made as instances of cls. */
static PyObject *f_set_tensor_class(PyObject *self, PyObject *cls)
{
    (void)self;
    if (!PyType_Check(cls) || !PyType_IsSubtype((PyTypeObject *)cls, &LtTensor_Type))
        return PyErr_Format(PyExc_TypeError, "expected a subclass of _TensorBase");
    Py_INCREF(cls);
    ltpy_tensor_class = (PyTypeObject *)cls;
    Py_RETURN_NONE;
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
    {"empty", f_empty, METH_VARARGS, NULL},
    {"zeros", f_zeros, METH_VARARGS, NULL},
    {"ones", f_ones, METH_VARARGS, NULL},
    {"rand", f_rand, METH_VARARGS, NULL},
    {"randn", f_randn, METH_VARARGS, NULL},
    {"full", f_full, METH_VARARGS, NULL},
    {"randint", f_randint, METH_VARARGS, NULL},
    {"arange", f_arange, METH_VARARGS, NULL},
    {"linspace", f_linspace, METH_VARARGS, NULL},
    {"eye", f_eye, METH_VARARGS, NULL},
    {"manual_seed", f_manual_seed, METH_O, NULL},
    {"cat", f_cat, METH_VARARGS, NULL},
    {"stack", f_stack, METH_VARARGS, NULL},
    {"where", f_where, METH_VARARGS, NULL},
    {"multinomial", f_multinomial, METH_VARARGS, NULL},
    {"no_grad_begin", f_no_grad_begin, METH_NOARGS, NULL},
    {"no_grad_end", f_no_grad_end, METH_NOARGS, NULL},
    {"is_grad_enabled", f_is_grad_enabled, METH_NOARGS, NULL},
    {"mark_step", f_mark_step, METH_NOARGS, "step barrier of the lazy device"},
    {"sync", f_sync, METH_NOARGS, "runs all pending work of the lazy device and waits for it"},
    {"metrics_report", f_metrics_report, METH_NOARGS, NULL},
    {"metrics_counter", f_metrics_counter, METH_O, NULL},
    {"metrics_reset", f_metrics_reset, METH_NOARGS, NULL},
    {"last_compile_cause", f_last_compile_cause, METH_NOARGS, NULL},
    {"ir", f_ir, METH_VARARGS, "ir(tensors, dot=False): the pending IR graph as text or DOT"},
    {"set_backend", f_set_backend, METH_O, NULL},
    {"backend", f_backend, METH_NOARGS, NULL},
    {"wait_compiles", f_wait_compiles, METH_NOARGS, NULL},
    {"lazy_discard", f_lazy_discard, METH_NOARGS, NULL},
    {"live_tensor_count", f_live_tensor_count, METH_NOARGS, "tensor handles alive in the process"},
    {"live_tensors", f_live_tensors, METH_NOARGS, "tensors whose user holds a reference"},
    {"live_tensor_report", f_live_tensor_report, METH_NOARGS, NULL},
    {"set_num_threads", f_set_num_threads, METH_O, NULL},
    {"get_num_threads", f_get_num_threads, METH_NOARGS, NULL},
    {"promote_types", f_promote_types, METH_VARARGS, NULL},
    {"_set_tensor_class", f_set_tensor_class, METH_O, NULL},
    {"_alias", f_alias, METH_VARARGS, NULL},
    {NULL, NULL, 0, NULL},
};
