/* methods.c - Tensor methods that are not ops of the registry (ops.c):
 * conversions, value access, autograd, metadata and the interop protocols. */
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

/* ---- metadata ---------------------------------------------------------------- */

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

/* Address of the first element (cpu tensors). */
static PyObject *m_data_ptr(PyObject *self, PyObject *unused)
{
    (void)unused;
    if (lt_tensor_numel(SELF) == 0)
        return PyLong_FromLong(0);
    void *p = lt_tensor_data(SELF);
    return p ? PyLong_FromVoidPtr(p) : ltpy_raise();
}

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

PyMethodDef ltpy_tensor_methods[] = {
    {"_to_dtype", m_to_dtype, METH_O, NULL},
    {"_to_device", m_to_device, METH_O, NULL},
    {"_move_", m_move_, METH_O, NULL},
    {"item", m_item, METH_NOARGS, "the value of a one-element tensor as a Python number"},
    {"tolist", ltpy_tolist, METH_NOARGS, "the values as nested lists"},
    {"requires_grad_", m_requires_grad_, METH_VARARGS, NULL},
    {"size", m_size, METH_VARARGS, NULL},
    {"stride", m_stride, METH_VARARGS, NULL},
    {"data_ptr", m_data_ptr, METH_NOARGS, NULL},
    {"__dlpack__", (PyCFunction)(void (*)(void))ltpy_to_dlpack, METH_VARARGS | METH_KEYWORDS, NULL},
    {"__dlpack_device__", m_dlpack_device, METH_NOARGS, NULL},
    {NULL, NULL, 0, NULL},
};
