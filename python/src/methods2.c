/* methods2.c - Tensor methods: conversions, value access, autograd,
 * metadata, gather/scatter-style ops and the interop protocols. */
#include "ltpy.h"

#define SELF LTPY_TENSOR(self)

/* ---- conversions ------------------------------------------------------------- */

static PyObject *m_to_dtype(PyObject *self, PyObject *arg)
{
    lt_dtype dt;
    if (ltpy_parse_dtype(arg, LT_F32, &dt) < 0)
        return NULL;
    if (dt == lt_tensor_dtype(SELF))
        return Py_NewRef(self); /* like torch: .to(same dtype) is the tensor itself */
    return ltpy_wrap(lt_to_dtype(SELF, dt));
}

static PyObject *m_to_device(PyObject *self, PyObject *arg)
{
    lt_device d;
    if (ltpy_parse_device(arg, &d) < 0)
        return NULL;
    if (lt_device_equal(d, lt_tensor_device(SELF)))
        return Py_NewRef(self);
    return ltpy_wrap(lt_to(SELF, d));
}

/* In-place move (the handle stays): for parameters in Module.to(). */
static PyObject *m_move_(PyObject *self, PyObject *arg)
{
    lt_device d;
    if (ltpy_parse_device(arg, &d) < 0)
        return NULL;
    return lt_to_(SELF, d) ? Py_NewRef(self) : ltpy_raise();
}

static PyObject *m_item(PyObject *self, PyObject *unused)
{
    (void)unused;
    lt_dtype dt = lt_tensor_dtype(SELF);
    if (lt_dtype_is_floating(dt)) {
        double v;
        return ltpy_check(lt_item(SELF, &v)) < 0 ? NULL : PyFloat_FromDouble(v);
    }
    int64_t v;
    if (ltpy_check(lt_item_int(SELF, &v)) < 0)
        return NULL;
    return dt == LT_BOOL ? PyBool_FromLong(v != 0) : PyLong_FromLongLong(v);
}

/* ---- autograd ------------------------------------------------------------- */

static PyObject *m_requires_grad_(PyObject *self, PyObject *args)
{
    int flag = 1;
    if (!PyArg_ParseTuple(args, "|p:requires_grad_", &flag))
        return NULL;
    return ltpy_check(lt_set_requires_grad(SELF, flag)) < 0 ? NULL : Py_NewRef(self);
}

static PyObject *m_backward(PyObject *self, PyObject *args, PyObject *kw)
{
    PyObject *grad = Py_None;
    static char *kwlist[] = {"gradient", NULL};
    if (!PyArg_ParseTupleAndKeywords(args, kw, "|O:backward", kwlist, &grad))
        return NULL;
    lt_tensor *g = NULL;
    if (grad != Py_None && !(g = ltpy_tensor_arg(grad, "gradient")))
        return NULL;
    if (ltpy_check(lt_backward(SELF, g)) < 0)
        return NULL;
    Py_RETURN_NONE;
}

/* ---- metadata ---------------------------------------------------------------- */

static PyObject *m_numel(PyObject *self, PyObject *unused)
{
    (void)unused;
    return PyLong_FromLongLong(lt_tensor_numel(SELF));
}

static PyObject *m_dim(PyObject *self, PyObject *unused)
{
    (void)unused;
    return PyLong_FromLong(lt_tensor_ndim(SELF));
}

static PyObject *m_size(PyObject *self, PyObject *args)
{
    PyObject *dim = Py_None;
    if (!PyArg_ParseTuple(args, "|O:size", &dim))
        return NULL;
    if (dim == Py_None)
        return ltpy_shape_tuple(SELF);
    int d = PyLong_AsLong(dim);
    if (d == -1 && PyErr_Occurred())
        return NULL;
    int64_t s = lt_tensor_size(SELF, d);
    return s < 0 ? (lt_last_status() == LT_ERR_ARGUMENT ? (lt_clear_error(),
                        PyErr_Format(PyExc_IndexError, "dimension %d out of range", d)) : ltpy_raise())
                 : PyLong_FromLongLong(s);
}

static PyObject *m_stride(PyObject *self, PyObject *args)
{
    PyObject *dim = Py_None;
    if (!PyArg_ParseTuple(args, "|O:stride", &dim))
        return NULL;
    int nd = lt_tensor_ndim(SELF);
    const int64_t *st = lt_tensor_strides(SELF);
    if (!st)
        return ltpy_raise();
    if (dim != Py_None) {
        int d = PyLong_AsLong(dim);
        if (d == -1 && PyErr_Occurred())
            return NULL;
        if (d < -nd || d >= nd)
            return PyErr_Format(PyExc_IndexError, "dimension %d out of range", d);
        return PyLong_FromLongLong(st[d < 0 ? d + nd : d]);
    }
    PyObject *tup = PyTuple_New(nd);
    for (int i = 0; tup && i < nd; i++)
        PyTuple_SET_ITEM(tup, i, PyLong_FromLongLong(st[i]));
    return tup;
}

static PyObject *m_is_contiguous(PyObject *self, PyObject *unused)
{
    (void)unused;
    return PyBool_FromLong(lt_tensor_is_contiguous(SELF));
}

static PyObject *m_storage_offset(PyObject *self, PyObject *unused)
{
    (void)unused;
    return PyLong_FromLongLong(lt_tensor_offset(SELF));
}

/* Address of the first element (cpu tensors). */
static PyObject *m_data_ptr(PyObject *self, PyObject *unused)
{
    (void)unused;
    if (lt_tensor_numel(SELF) == 0)
        return PyLong_FromLong(0);
    void *p = lt_tensor_data(SELF);
    return p ? PyLong_FromVoidPtr(p) : ltpy_raise();
}

static PyObject *m_shares_storage(PyObject *self, PyObject *other)
{
    lt_tensor *o = ltpy_tensor_arg(other, "other");
    return o ? PyBool_FromLong(lt_tensor_shares_storage(SELF, o)) : NULL;
}

/* The C reference count of the handle (for leak tests). */
static PyObject *m_c_refcount(PyObject *self, PyObject *unused)
{
    (void)unused;
    return PyLong_FromLong(lt_tensor_refcount(SELF));
}

/* ---- indexing-style ops --------------------------------------------------- */

typedef lt_tensor *(*dim_index_fn)(lt_tensor *, int, lt_tensor *);
static PyObject *dim_index(PyObject *self, PyObject *args, dim_index_fn f)
{
    int dim;
    PyObject *index;
    if (!PyArg_ParseTuple(args, "iO", &dim, &index))
        return NULL;
    lt_tensor *i = ltpy_tensor_arg(index, "index");
    return i ? ltpy_wrap(f(SELF, dim, i)) : NULL;
}
static lt_tensor *index_select_fn(lt_tensor *t, int d, lt_tensor *i) { return lt_index_select(t, d, i); }
static PyObject *m_index_select(PyObject *self, PyObject *a) { return dim_index(self, a, index_select_fn); }
static PyObject *m_gather(PyObject *self, PyObject *a) { return dim_index(self, a, lt_gather); }

typedef lt_tensor *(*scatter_fn)(lt_tensor *, int, lt_tensor *, lt_tensor *);
static PyObject *scatter(PyObject *self, PyObject *args, scatter_fn f)
{
    int dim;
    PyObject *index, *src;
    if (!PyArg_ParseTuple(args, "iOO", &dim, &index, &src))
        return NULL;
    lt_tensor *i = ltpy_tensor_arg(index, "index"), *s = i ? ltpy_operand(src, SELF) : NULL;
    if (!s)
        return NULL;
    if (lt_tensor_ndim(s) == 0) { /* a scalar value: one per index */
        lt_tensor *e = lt_expand(s, lt_tensor_shape(i), lt_tensor_ndim(i));
        lt_release(s);
        if (!(s = e))
            return ltpy_raise();
    }
    lt_tensor *r = f(SELF, dim, i, s);
    lt_release(s);
    return ltpy_wrap(r);
}
static PyObject *m_scatter(PyObject *self, PyObject *a) { return scatter(self, a, lt_scatter); }
static PyObject *m_scatter_add(PyObject *self, PyObject *a) { return scatter(self, a, lt_scatter_add); }

static PyObject *m_masked_fill(PyObject *self, PyObject *args)
{
    PyObject *mask;
    double v;
    if (!PyArg_ParseTuple(args, "Od:masked_fill", &mask, &v))
        return NULL;
    lt_tensor *m = ltpy_tensor_arg(mask, "mask");
    return m ? ltpy_wrap(lt_masked_fill(SELF, m, v)) : NULL;
}

typedef lt_tensor *(*tri_fn)(lt_tensor *, int64_t);
static PyObject *tri(PyObject *self, PyObject *args, tri_fn f)
{
    long long k = 0;
    return PyArg_ParseTuple(args, "|L", &k) ? ltpy_wrap(f(SELF, k)) : NULL;
}
static PyObject *m_tril(PyObject *self, PyObject *a) { return tri(self, a, lt_tril); }
static PyObject *m_triu(PyObject *self, PyObject *a) { return tri(self, a, lt_triu); }

/* ---- interop -------------------------------------------------------------- */

static PyObject *m_dlpack_device(PyObject *self, PyObject *unused)
{
    (void)unused;
    if (lt_tensor_device(SELF).kind != LT_DEVICE_CPU) {
        PyErr_SetString(PyExc_BufferError, "__dlpack_device__: only cpu tensors are exported");
        return NULL;
    }
    return Py_BuildValue("(ii)", 1, 0); /* kDLCPU, device 0 */
}

PyMethodDef ltpy_tensor_methods_more[] = {
    {"_to_dtype", m_to_dtype, METH_O, NULL},
    {"_to_device", m_to_device, METH_O, NULL},
    {"_move_", m_move_, METH_O, NULL},
    {"item", m_item, METH_NOARGS, "the value of a one-element tensor as a Python number"},
    {"tolist", ltpy_tolist, METH_NOARGS, "the values as nested lists"},
    {"requires_grad_", m_requires_grad_, METH_VARARGS, NULL},
    {"backward", (PyCFunction)(void (*)(void))m_backward, METH_VARARGS | METH_KEYWORDS, NULL},
    {"numel", m_numel, METH_NOARGS, NULL},
    {"dim", m_dim, METH_NOARGS, NULL},
    {"size", m_size, METH_VARARGS, NULL},
    {"stride", m_stride, METH_VARARGS, NULL},
    {"is_contiguous", m_is_contiguous, METH_NOARGS, NULL},
    {"storage_offset", m_storage_offset, METH_NOARGS, NULL},
    {"data_ptr", m_data_ptr, METH_NOARGS, NULL},
    {"shares_storage", m_shares_storage, METH_O, NULL},
    {"_c_refcount", m_c_refcount, METH_NOARGS, NULL},
    {"index_select", m_index_select, METH_VARARGS, NULL},
    {"gather", m_gather, METH_VARARGS, NULL},
    {"scatter", m_scatter, METH_VARARGS, NULL},
    {"scatter_add", m_scatter_add, METH_VARARGS, NULL},
    {"masked_fill", m_masked_fill, METH_VARARGS, NULL},
    {"tril", m_tril, METH_VARARGS, NULL},
    {"triu", m_triu, METH_VARARGS, NULL},
    {"__dlpack__", (PyCFunction)(void (*)(void))ltpy_to_dlpack, METH_VARARGS | METH_KEYWORDS, NULL},
    {"__dlpack_device__", m_dlpack_device, METH_NOARGS, NULL},
    {NULL, NULL, 0, NULL},
};
