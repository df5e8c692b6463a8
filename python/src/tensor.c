/* tensor.c - the Tensor type: lifetime, attributes, repr, the number
 * protocol (operators with PyTorch's scalar promotion), comparisons and
 * the buffer protocol (zero-copy numpy views of cpu tensors). */
#include "ltpy.h"

#include <stdlib.h>
#include <string.h>

PyTypeObject *ltpy_tensor_class = &LtTensor_Type;

PyObject *ltpy_wrap(lt_tensor *t)
{
    if (!t)
        return ltpy_raise();
    PyTypeObject *cls = ltpy_tensor_class;
    LtTensor *o = (LtTensor *)cls->tp_alloc(cls, 0);
    if (!o) {
        lt_release(t);
        return NULL;
    }
    o->t = t;
    return (PyObject *)o;
}

static void tensor_dealloc(PyObject *self)
{
    lt_tensor *t = LTPY_TENSOR(self);
    if (t) {
        lt_release(t);
        lt_clear_error(); /* a release refused (another thread owns lazy) must not leak into later calls */
    }
    Py_TYPE(self)->tp_free(self); /* subtype_dealloc, which calls this, drops a heap type's reference */
}

static PyObject *tensor_new(PyTypeObject *type, PyObject *args, PyObject *kw)
{
    (void)type, (void)args, (void)kw;
    PyErr_SetString(PyExc_TypeError, "make tensors with lazytensor.tensor(), zeros(), ... ");
    return NULL;
}

/* ---- attributes ------------------------------------------------------------ */

static PyObject *get_shape(PyObject *self, void *c)
{
    (void)c;
    return ltpy_shape_tuple(LTPY_TENSOR(self));
}

static PyObject *get_dtype(PyObject *self, void *c)
{
    (void)c;
    return ltpy_dtype_object(lt_tensor_dtype(LTPY_TENSOR(self)));
}

static PyObject *get_device(PyObject *self, void *c)
{
    (void)c;
    lt_device d = lt_tensor_device(LTPY_TENSOR(self));
    return d.kind == LT_DEVICE_INVALID ? ltpy_raise() : ltpy_device_object(d);
}

static PyObject *get_requires_grad(PyObject *self, void *c)
{
    (void)c;
    return PyBool_FromLong(lt_requires_grad(LTPY_TENSOR(self)));
}

static int set_requires_grad(PyObject *self, PyObject *v, void *c)
{
    (void)c;
    int b = v ? PyObject_IsTrue(v) : 0;
    return b < 0 ? -1 : ltpy_check(lt_set_requires_grad(LTPY_TENSOR(self), b));
}

static PyObject *get_grad(PyObject *self, void *c)
{
    (void)c;
    lt_tensor *g = lt_grad(LTPY_TENSOR(self));
    if (!g) {
        if (lt_last_status() != LT_OK)
            return ltpy_raise();
        Py_RETURN_NONE;
    }
    return ltpy_wrap(g);
}

static int set_grad(PyObject *self, PyObject *v, void *c)
{
    (void)c;
    if (v && v != Py_None) {
        PyErr_SetString(PyExc_TypeError, "grad can only be cleared (t.grad = None): the C API sets gradients "
                                         "through backward()");
        return -1;
    }
    return ltpy_check(lt_zero_grad(LTPY_TENSOR(self)));
}

PyGetSetDef ltpy_tensor_getset[] = {
    {"shape", get_shape, NULL, "sizes as a tuple", NULL},
    {"dtype", get_dtype, NULL, "element type", NULL},
    {"device", get_device, NULL, "device", NULL},
    {"requires_grad", get_requires_grad, set_requires_grad, "whether autograd tracks this tensor", NULL},
    {"grad", get_grad, set_grad, "accumulated gradient (None if none)", NULL},
    {NULL, NULL, NULL, NULL, NULL},
};

/* ---- repr -------------------------------------------------------------- */

static PyObject *tensor_repr(PyObject *self)
{
    lt_tensor *t = LTPY_TENSOR(self);
    char small[2048];
    int n = lt_format(t, small, sizeof small);
    if (n < 0)
        return ltpy_raise();
    char *buf = small;
    if ((size_t)n >= sizeof small) {
        buf = malloc((size_t)n + 1);
        if (!buf)
            return PyErr_NoMemory();
        lt_format(t, buf, (size_t)n + 1);
    }
    PyObject *r;
    if (lt_requires_grad(t) && n > 0 && buf[n - 1] == ')') { /* torch names the grad_fn; the C API has none */
        buf[n - 1] = '\0';
        r = PyUnicode_FromFormat("%s, requires_grad=True)", buf);
    } else
        r = PyUnicode_FromStringAndSize(buf, n);
    if (buf != small)
        free(buf);
    return r;
}

static Py_hash_t tensor_hash(PyObject *self) { return (Py_hash_t)((uintptr_t)self >> 4); }

/* ---- binary operators ----------------------------------------------------- */

typedef lt_tensor *(*bin_fn)(lt_tensor *, lt_tensor *);
typedef lt_tensor *(*sca_fn)(lt_tensor *, double);

/* Whether t op s can use the C double-scalar form and still give PyTorch's
 * dtype: the double counts as a Python float, so it is exact next to a
 * floating tensor, and for ops whose result dtype does not depend on it. */
static bool scalar_form_exact(lt_tensor *t, PyObject *s, bool dtype_free)
{
    return !PyBool_Check(s) && (dtype_free || lt_dtype_is_floating(lt_tensor_dtype(t)));
}

/* t op s for a Python scalar s (reflected: s op t). */
static PyObject *with_scalar(lt_tensor *t, PyObject *s, bin_fn f, sca_fn fs, bool dtype_free, bool reflected)
{
    if (fs && scalar_form_exact(t, s, dtype_free)) {
        double v = PyFloat_AsDouble(s);
        if (v == -1.0 && PyErr_Occurred())
            return NULL;
        return ltpy_wrap(fs(t, v));
    }
    lt_tensor *st = ltpy_scalar_tensor(s, t);
    if (!st)
        return NULL;
    lt_tensor *r = reflected ? f(st, t) : f(t, st);
    lt_release(st);
    return ltpy_wrap(r);
}

/* The operator a op b. fs: t op double, rfs: double op t (either may be
 * NULL: the scalar is then wrapped as a 0-dim tensor). */
static PyObject *binary(PyObject *a, PyObject *b, bin_fn f, sca_fn fs, sca_fn rfs, bool dtype_free)
{
    bool ta = ltpy_is_tensor(a), tb = ltpy_is_tensor(b);
    if (ta && tb)
        return ltpy_wrap(f(LTPY_TENSOR(a), LTPY_TENSOR(b)));
    if (ta && ltpy_is_scalar(b))
        return with_scalar(LTPY_TENSOR(a), b, f, fs, dtype_free, false);
    if (tb && ltpy_is_scalar(a))
        return with_scalar(LTPY_TENSOR(b), a, f, rfs, dtype_free, true);
    Py_RETURN_NOTIMPLEMENTED;
}

static PyObject *nb_add(PyObject *a, PyObject *b) { return binary(a, b, lt_add, lt_add_scalar, lt_add_scalar, false); }
static PyObject *nb_sub(PyObject *a, PyObject *b) { return binary(a, b, lt_sub, lt_sub_scalar, lt_rsub_scalar, false); }
static PyObject *nb_mul(PyObject *a, PyObject *b) { return binary(a, b, lt_mul, lt_mul_scalar, lt_mul_scalar, false); }
static PyObject *nb_div(PyObject *a, PyObject *b) { return binary(a, b, lt_div, lt_div_scalar, NULL, true); }
static PyObject *nb_pow(PyObject *a, PyObject *b, PyObject *m)
{
    if (m != Py_None) {
        PyErr_SetString(PyExc_TypeError, "pow() with a modulus is not supported");
        return NULL;
    }
    return binary(a, b, lt_pow, lt_pow_scalar, lt_rpow_scalar, false);
}
static PyObject *nb_mod(PyObject *a, PyObject *b) { return binary(a, b, lt_remainder, lt_remainder_scalar, NULL, false); }

static PyObject *nb_matmul(PyObject *a, PyObject *b)
{
    if (!ltpy_is_tensor(a) || !ltpy_is_tensor(b))
        Py_RETURN_NOTIMPLEMENTED;
    return ltpy_wrap(lt_matmul(LTPY_TENSOR(a), LTPY_TENSOR(b)));
}

/* &, |, ^ exist for bool tensors only (the C API has logical, not bitwise,
 * ops). */
static PyObject *logical(PyObject *a, PyObject *b, bin_fn f, const char *op)
{
    if (!ltpy_is_tensor(a) && !ltpy_is_tensor(b))
        Py_RETURN_NOTIMPLEMENTED;
    lt_tensor *like = ltpy_is_tensor(a) ? LTPY_TENSOR(a) : LTPY_TENSOR(b);
    lt_tensor *x = ltpy_operand(a, like), *y = x ? ltpy_operand(b, like) : NULL;
    PyObject *r = NULL;
    if (x && y) {
        if (lt_tensor_dtype(x) != LT_BOOL || lt_tensor_dtype(y) != LT_BOOL)
            PyErr_Format(PyExc_TypeError, "%s is defined for bool tensors only (the C API has no bitwise ops)", op);
        else
            r = ltpy_wrap(f(x, y));
    }
    lt_release(x);
    lt_release(y);
    return r;
}

static lt_tensor *xor_fn(lt_tensor *a, lt_tensor *b) { return lt_ne(a, b); }
static PyObject *nb_and(PyObject *a, PyObject *b) { return logical(a, b, lt_logical_and, "&"); }
static PyObject *nb_or(PyObject *a, PyObject *b) { return logical(a, b, lt_logical_or, "|"); }
static PyObject *nb_xor(PyObject *a, PyObject *b) { return logical(a, b, xor_fn, "^"); }

/* ---- in-place operators: write into self, return self ------------------- */

static PyObject *inplace(PyObject *self, PyObject *b, bin_fn f, sca_fn fs)
{
    if (!ltpy_is_tensor(self))
        Py_RETURN_NOTIMPLEMENTED;
    lt_tensor *t = LTPY_TENSOR(self), *r;
    if (ltpy_is_tensor(b)) {
        r = f(t, LTPY_TENSOR(b));
    } else if (ltpy_is_scalar(b)) {
        if (fs && scalar_form_exact(t, b, false)) {
            double v = PyFloat_AsDouble(b);
            if (v == -1.0 && PyErr_Occurred())
                return NULL;
            r = fs(t, v);
        } else {
            lt_tensor *st = ltpy_scalar_tensor(b, t);
            if (!st)
                return NULL;
            r = f(t, st);
            lt_release(st);
        }
    } else {
        Py_RETURN_NOTIMPLEMENTED;
    }
    if (!r)
        return ltpy_raise();
    Py_INCREF(self);
    return self;
}

static PyObject *nb_iadd(PyObject *a, PyObject *b) { return inplace(a, b, lt_add_, lt_add_scalar_); }
static PyObject *nb_isub(PyObject *a, PyObject *b) { return inplace(a, b, lt_sub_, lt_sub_scalar_); }
static PyObject *nb_imul(PyObject *a, PyObject *b) { return inplace(a, b, lt_mul_, lt_mul_scalar_); }
static PyObject *nb_idiv(PyObject *a, PyObject *b) { return inplace(a, b, lt_div_, lt_div_scalar_); }
static PyObject *nb_ipow(PyObject *a, PyObject *b, PyObject *m)
{
    (void)m;
    return inplace(a, b, lt_pow_, lt_pow_scalar_);
}

/* ---- unary operators and conversions ------------------------------------ */

static PyObject *nb_neg(PyObject *a) { return ltpy_wrap(lt_neg(LTPY_TENSOR(a))); }
static PyObject *nb_abs(PyObject *a) { return ltpy_wrap(lt_abs(LTPY_TENSOR(a))); }
static PyObject *nb_pos(PyObject *a)
{
    Py_INCREF(a);
    return a;
}
static PyObject *nb_invert(PyObject *a)
{
    if (lt_tensor_dtype(LTPY_TENSOR(a)) != LT_BOOL) {
        PyErr_SetString(PyExc_TypeError, "~ is defined for bool tensors only (the C API has no bitwise ops)");
        return NULL;
    }
    return ltpy_wrap(lt_logical_not(LTPY_TENSOR(a)));
}

static int one_element(lt_tensor *t, const char *what)
{
    int64_t n = lt_tensor_numel(t);
    if (n == 1)
        return 0;
    if (n < 0)
        return ltpy_raise(), -1;
    PyErr_Format(PyExc_RuntimeError, "%s of a Tensor with %lld elements is ambiguous (expected one element)", what,
                 (long long)n);
    return -1;
}

static int nb_bool(PyObject *a)
{
    double v;
    if (one_element(LTPY_TENSOR(a), "the truth value") < 0 || ltpy_check(lt_item(LTPY_TENSOR(a), &v)) < 0)
        return -1;
    return v != 0;
}

static PyObject *nb_float(PyObject *a)
{
    double v;
    if (one_element(LTPY_TENSOR(a), "float()") < 0 || ltpy_check(lt_item(LTPY_TENSOR(a), &v)) < 0)
        return NULL;
    return PyFloat_FromDouble(v);
}

static PyObject *nb_int(PyObject *a)
{
    lt_tensor *t = LTPY_TENSOR(a);
    if (one_element(t, "int()") < 0)
        return NULL;
    if (lt_dtype_is_floating(lt_tensor_dtype(t))) {
        double v;
        if (ltpy_check(lt_item(t, &v)) < 0)
            return NULL;
        return PyLong_FromDouble(v);
    }
    int64_t v;
    return ltpy_check(lt_item_int(t, &v)) < 0 ? NULL : PyLong_FromLongLong(v);
}

static PyObject *nb_index(PyObject *a)
{
    lt_tensor *t = LTPY_TENSOR(a);
    lt_dtype dt = lt_tensor_dtype(t);
    if (lt_dtype_is_floating(dt) || dt == LT_BOOL) {
        PyErr_SetString(PyExc_TypeError, "only integer tensors of a single element can be converted to an index");
        return NULL;
    }
    return nb_int(a);
}

PyNumberMethods ltpy_tensor_as_number = {
    .nb_add = nb_add,
    .nb_subtract = nb_sub,
    .nb_multiply = nb_mul,
    .nb_true_divide = nb_div,
    .nb_remainder = nb_mod,
    .nb_power = nb_pow,
    .nb_matrix_multiply = nb_matmul,
    .nb_and = nb_and,
    .nb_or = nb_or,
    .nb_xor = nb_xor,
    .nb_inplace_add = nb_iadd,
    .nb_inplace_subtract = nb_isub,
    .nb_inplace_multiply = nb_imul,
    .nb_inplace_true_divide = nb_idiv,
    .nb_inplace_power = nb_ipow,
    .nb_negative = nb_neg,
    .nb_positive = nb_pos,
    .nb_absolute = nb_abs,
    .nb_invert = nb_invert,
    .nb_bool = nb_bool,
    .nb_float = nb_float,
    .nb_int = nb_int,
    .nb_index = nb_index,
};

/* ---- comparisons --------------------------------------------------------- */

PyObject *ltpy_tensor_richcompare(PyObject *a, PyObject *b, int op)
{
    static const bin_fn fns[] = {lt_lt, lt_le, lt_eq, lt_ne, lt_gt, lt_ge};
    static const sca_fn sfns[] = {lt_lt_scalar, lt_le_scalar, lt_eq_scalar,
                                  lt_ne_scalar, lt_gt_scalar, lt_ge_scalar};
    if (!ltpy_is_tensor(b) && !ltpy_is_scalar(b))
        Py_RETURN_NOTIMPLEMENTED;
    return binary(a, b, fns[op], sfns[op], NULL, true);
}

/* ---- buffer protocol: a numpy array over a cpu tensor's memory ------------ */

static const char *buffer_format(lt_dtype dt)
{
    switch (dt) {
    case LT_F32: return "f";
    case LT_F64: return "d";
    case LT_I32: return "i";
    case LT_I64: return "q";
    case LT_U8: return "B";
    case LT_BOOL: return "?";
    case LT_F16: return "e";
    default: return NULL; /* bf16 has no buffer format */
    }
}

/* What a buffer keeps: a handle sharing the tensor's storage (so a later
 * in-place move of the tensor cannot free the memory under the buffer) and
 * the shape and strides in Python's types. */
typedef struct {
    lt_tensor *alias;
    Py_ssize_t shape[LT_MAX_DIMS], strides[LT_MAX_DIMS];
} buffer_hold;

static int tensor_getbuffer(PyObject *self, Py_buffer *view, int flags)
{
    lt_tensor *t = LTPY_TENSOR(self);
    lt_dtype dt = lt_tensor_dtype(t);
    const char *fmt = buffer_format(dt);
    if (lt_tensor_device(t).kind != LT_DEVICE_CPU || !fmt) {
        PyErr_Format(PyExc_BufferError, "only cpu tensors of a dtype numpy knows (not bfloat16) export their memory");
        return -1;
    }
    buffer_hold *h = PyMem_Malloc(sizeof *h);
    if (!h)
        return PyErr_NoMemory(), -1;
    h->alias = lt_detach(t);
    void *data = h->alias ? lt_tensor_data(h->alias) : NULL;
    if (!data && lt_tensor_numel(t) != 0) {
        lt_release(h->alias);
        PyMem_Free(h);
        ltpy_raise();
        return -1;
    }
    int nd = lt_tensor_ndim(t);
    size_t es = lt_dtype_size(dt);
    for (int i = 0; i < nd; i++) {
        h->shape[i] = (Py_ssize_t)lt_tensor_shape(t)[i];
        h->strides[i] = (Py_ssize_t)(lt_tensor_strides(t)[i] * (int64_t)es);
    }
    if ((flags & PyBUF_STRIDES) != PyBUF_STRIDES && !lt_tensor_is_contiguous(t)) {
        lt_release(h->alias);
        PyMem_Free(h);
        PyErr_SetString(PyExc_BufferError, "the tensor is not contiguous: ask for a strided buffer");
        return -1;
    }
    view->buf = data;
    view->obj = Py_NewRef(self);
    view->len = (Py_ssize_t)(lt_tensor_numel(t) * (int64_t)es);
    view->readonly = 0;
    view->itemsize = (Py_ssize_t)es;
    view->format = (flags & PyBUF_FORMAT) ? (char *)fmt : NULL;
    view->ndim = nd;
    view->shape = (flags & PyBUF_ND) ? h->shape : NULL;
    view->strides = (flags & PyBUF_STRIDES) == PyBUF_STRIDES ? h->strides : NULL;
    view->suboffsets = NULL;
    view->internal = h;
    return 0;
}

static void tensor_releasebuffer(PyObject *self, Py_buffer *view)
{
    (void)self;
    buffer_hold *h = view->internal;
    if (h) {
        lt_release(h->alias);
        PyMem_Free(h);
    }
}

PyBufferProcs ltpy_tensor_as_buffer = {
    .bf_getbuffer = tensor_getbuffer,
    .bf_releasebuffer = tensor_releasebuffer,
};

/* ---- the type ----------------------------------------------------------- */

PyTypeObject LtTensor_Type = {
    PyVarObject_HEAD_INIT(NULL, 0).tp_name = "lazytensor._C._TensorBase",
    .tp_basicsize = sizeof(LtTensor),
    .tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_BASETYPE,
    .tp_new = tensor_new,
    .tp_dealloc = tensor_dealloc,
    .tp_repr = tensor_repr,
    .tp_hash = tensor_hash,
    .tp_as_number = &ltpy_tensor_as_number,
    .tp_as_mapping = &ltpy_tensor_as_mapping,
    .tp_as_buffer = &ltpy_tensor_as_buffer,
    .tp_richcompare = ltpy_tensor_richcompare,
    .tp_getset = ltpy_tensor_getset,
    .tp_methods = ltpy_tensor_methods, /* the ops of the registry are added by ltpy_ops_init */
    .tp_doc = "The C tensor handle behind lazytensor.Tensor.",
};
