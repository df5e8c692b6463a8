/*
 * ops.c - the C library's op registry (lt_op_*) as Python callables.
 *
 * Each row of the registry becomes one Op object: a function of
 * lazytensor._C (_C.sum, _C.nn_linear, _C.mark_step) and, when its first
 * argument is a tensor named "input", a method of Tensor too. One generic
 * call serves them all: it binds positional and keyword arguments to the
 * row's argument names, fills what is missing (or None) from the row's
 * defaults, converts each Python value by its kind and runs lt_op_call.
 * No op has glue of its own.
 *
 * Python conventions on top of the row: a Python number where a tensor is
 * expected becomes a 0-dim tensor with PyTorch's scalar dtype rules, next
 * to the first non-bool tensor argument (so where(cond, x, 0.5) follows x);
 * extra positional ints at the end of a shape or dims argument are that
 * list (x.view(2, 3), x.permute(1, 0)).
 */
#include "ltpy.h"

#include <stddef.h>
#include <string.h>

typedef struct {
    PyObject_HEAD
    const lt_op_desc *op;
    lt_arg defaults[LT_OP_MAX_ARGS];
    vectorcallfunc vectorcall;
} LtOp;

/* What the converted arguments point into, until the call returns. */
typedef struct {
    int64_t ints[LT_OP_MAX_ARGS][LT_MAX_DIMS];
    lt_tensor *scalars[LT_OP_MAX_ARGS]; /* Python numbers made tensors (owned) */
    lt_tensor **lists[LT_OP_MAX_ARGS];  /* arrays of LT_ARG_TENSORS (PyMem) */
    PyObject *tail;                     /* extra positional ints as one tuple */
} call_state;

static void state_free(call_state *st, int n)
{
    for (int i = 0; i < n; i++) {
        lt_release(st->scalars[i]);
        PyMem_Free(st->lists[i]);
    }
    Py_XDECREF(st->tail);
}

/* ---- binding arguments to the row's names --------------------------------- */

static bool is_list_kind(lt_arg_kind k) { return k == LT_ARG_SHAPE || k == LT_ARG_DIMS; }

static int bind_keywords(const lt_op_desc *op, PyObject *const *values, PyObject *kwnames, PyObject **slots)
{
    for (Py_ssize_t k = 0; kwnames && k < PyTuple_GET_SIZE(kwnames); k++) {
        const char *key = PyUnicode_AsUTF8(PyTuple_GET_ITEM(kwnames, k));
        if (!key)
            return -1;
        int i = 0;
        while (i < op->nargs && strcmp(op->arg_names[i], key))
            i++;
        if (i == op->nargs) {
            PyErr_Format(PyExc_TypeError, "%s() got an unexpected keyword argument '%s'", op->name, key);
            return -1;
        }
        if (slots[i]) {
            PyErr_Format(PyExc_TypeError, "%s() got multiple values for argument '%s'", op->name, key);
            return -1;
        }
        slots[i] = values[k];
    }
    return 0;
}

/* slots[i]: the Python value given for argument i (NULL if none). */
static int bind(const lt_op_desc *op, PyObject *const *args, Py_ssize_t n, PyObject *kwnames, PyObject **slots,
                call_state *st)
{
    int last = op->nargs - 1, given = (int)(n < op->nargs ? n : op->nargs);
    if (n > op->nargs && !(last >= 0 && is_list_kind(op->args[last]))) {
        PyErr_Format(PyExc_TypeError, "%s() takes at most %d arguments (%zd given)", op->name, op->nargs, n);
        return -1;
    }
    if (n > op->nargs) { /* view(2, 3): the ints from the last argument on are the list */
        if (!(st->tail = PyTuple_New(n - last)))
            return -1;
        for (Py_ssize_t k = last; k < n; k++)
            PyTuple_SET_ITEM(st->tail, k - last, Py_NewRef(args[k]));
        given = last;
        slots[last] = st->tail;
    }
    for (int i = 0; i < given; i++)
        slots[i] = args[i];
    return bind_keywords(op, args + n, kwnames, slots);
}

/* ---- converting values by kind ---------------------------------------------- */

/* The tensor that Python numbers in tensor arguments are made next to. */
static lt_tensor *scalar_partner(const lt_op_desc *op, PyObject **slots)
{
    lt_tensor *any = NULL;
    for (int i = 0; i < op->nargs; i++) {
        if (!slots[i] || !ltpy_is_tensor(slots[i]))
            continue;
        if (lt_tensor_dtype(LTPY_TENSOR(slots[i])) != LT_BOOL)
            return LTPY_TENSOR(slots[i]);
        any = any ? any : LTPY_TENSOR(slots[i]);
    }
    return any;
}

static int to_tensor(const lt_op_desc *op, int i, PyObject *o, PyObject **slots, call_state *st, lt_tensor **out)
{
    if (ltpy_is_tensor(o)) {
        *out = LTPY_TENSOR(o);
        return 0;
    }
    lt_tensor *like = ltpy_is_scalar(o) ? scalar_partner(op, slots) : NULL;
    if (!like) {
        PyErr_Format(PyExc_TypeError, "%s(): %s must be a Tensor, got %.100s", op->name, op->arg_names[i],
                     Py_TYPE(o)->tp_name);
        return -1;
    }
    return (*out = st->scalars[i] = ltpy_scalar_tensor(o, like)) ? 0 : -1;
}

static int to_int(PyObject *o, int64_t *out)
{
    *out = PyLong_AsLongLong(o);
    return *out == -1 && PyErr_Occurred() ? -1 : 0;
}

static int to_double(PyObject *o, double *out)
{
    *out = PyFloat_AsDouble(o);
    return *out == -1.0 && PyErr_Occurred() ? -1 : 0;
}

static int to_bool(PyObject *o, bool *out)
{
    int b = PyObject_IsTrue(o);
    *out = b > 0;
    return b < 0 ? -1 : 0;
}

static int convert(LtOp *self, int i, PyObject **slots, call_state *st, lt_arg *out)
{
    const lt_op_desc *op = self->op;
    PyObject *o = slots[i];
    if (!o || (o == Py_None && op->defaults[i])) {
        if (!op->defaults[i]) {
            PyErr_Format(PyExc_TypeError, "%s() missing required argument '%s'", op->name, op->arg_names[i]);
            return -1;
        }
        *out = self->defaults[i];
        return 0;
    }
    *out = (lt_arg){.kind = op->args[i]};
    switch (op->args[i]) {
    case LT_ARG_TENSOR_OPT:
        if (o == Py_None)
            return 0;
        return to_tensor(op, i, o, slots, st, &out->t);
    case LT_ARG_TENSOR: return to_tensor(op, i, o, slots, st, &out->t);
    case LT_ARG_TENSORS: return (out->tensors = st->lists[i] = ltpy_tensor_list(o, &out->n)) ? 0 : -1;
    case LT_ARG_INT:
    case LT_ARG_DIM: return to_int(o, &out->i);
    case LT_ARG_DOUBLE: return to_double(o, &out->d);
    case LT_ARG_BOOL: return to_bool(o, &out->b);
    case LT_ARG_DTYPE: return ltpy_parse_dtype(o, LT_F32, &out->dtype);
    case LT_ARG_DEVICE: return ltpy_parse_device(o, &out->device);
    case LT_ARG_STRING: return (out->s = PyUnicode_AsUTF8(o)) ? 0 : -1;
    case LT_ARG_MODULE: return (out->module = ltpy_module_arg(o)) ? 0 : -1;
    case LT_ARG_OPTIMIZER: return (out->optimizer = ltpy_optimizer_arg(o)) ? 0 : -1;
    default: out->ints = st->ints[i]; return ltpy_parse_shape(o, st->ints[i], &out->n);
    }
}

/* ---- results ---------------------------------------------------------------- */

/* A result value as a Python object (a new handle is taken over). */
static PyObject *to_python(const lt_arg *v)
{
    switch (v->kind) {
    case LT_ARG_TENSOR: return ltpy_wrap(v->t);
    case LT_ARG_INT: return PyLong_FromLongLong(v->i);
    case LT_ARG_DOUBLE: return PyFloat_FromDouble(v->d);
    case LT_ARG_BOOL: return PyBool_FromLong(v->b);
    case LT_ARG_STRING: return PyUnicode_FromString(v->s);
    case LT_ARG_MODULE: return ltpy_wrap_module(v->module);
    default: return ltpy_wrap_optimizer(v->optimizer);
    }
}

/* A tuple of n results (taken over: the rest released on failure). */
static PyObject *result_tuple(const lt_arg *values, int n)
{
    PyObject *tup = PyTuple_New(n);
    for (int i = 0; i < n; i++) {
        PyObject *o = tup ? to_python(&values[i]) : (lt_release(values[i].t), NULL);
        if (tup && !o)
            Py_CLEAR(tup);
        else if (o)
            PyTuple_SET_ITEM(tup, i, o);
    }
    return tup;
}

/* split and chunk: as many results as pieces, retried when more than fit. */
static PyObject *call_pieces(const lt_op_desc *op, const lt_arg *values)
{
    lt_arg small[16], *out = small;
    int n = lt_op_call(op, values, op->nargs, out, 16);
    if (n > 16) {
        if (!(out = PyMem_Calloc((size_t)n, sizeof *out)))
            return PyErr_NoMemory();
        n = lt_op_call(op, values, op->nargs, out, n);
    }
    PyObject *r = n < 0 ? ltpy_raise() : result_tuple(out, n);
    if (out != small)
        PyMem_Free(out);
    return r;
}

static PyObject *call_op(const lt_op_desc *op, const lt_arg *values, PyObject *self_arg)
{
    if (op->result == LT_RESULT_TENSORS)
        return call_pieces(op, values);
    lt_arg out[2];
    int n = lt_op_call(op, values, op->nargs, out, 2);
    if (n < 0)
        return ltpy_raise();
    if (op->result == LT_RESULT_SELF)
        return Py_NewRef(self_arg);
    if (n == 0)
        Py_RETURN_NONE;
    return n == 2 ? result_tuple(out, 2) : to_python(&out[0]);
}

static PyObject *op_vectorcall(PyObject *callable, PyObject *const *args, size_t nargsf, PyObject *kwnames)
{
    LtOp *self = (LtOp *)callable;
    const lt_op_desc *op = self->op;
    PyObject *slots[LT_OP_MAX_ARGS] = {NULL};
    lt_arg values[LT_OP_MAX_ARGS];
    call_state st;
    memset(st.scalars, 0, sizeof st.scalars);
    memset(st.lists, 0, sizeof st.lists);
    st.tail = NULL;
    PyObject *r = NULL;
    if (bind(op, args, PyVectorcall_NARGS(nargsf), kwnames, slots, &st) == 0) {
        int i = 0;
        while (i < op->nargs && convert(self, i, slots, &st, &values[i]) == 0)
            i++;
        if (i == op->nargs)
            r = call_op(op, values, slots[0]);
    }
    state_free(&st, op->nargs);
    return r;
}

/* ---- the Op type: a function, and a method when looked up on a tensor -------- */

static PyObject *op_get(PyObject *self, PyObject *obj, PyObject *type)
{
    (void)type;
    return obj && obj != Py_None ? PyMethod_New(self, obj) : Py_NewRef(self);
}

static PyObject *op_name(PyObject *self, void *c)
{
    (void)c;
    return PyUnicode_FromString(((LtOp *)self)->op->name);
}

/* "sum(input, dim=None, keepdim=false): sum" */
static PyObject *op_doc(PyObject *self, void *c)
{
    (void)c;
    const lt_op_desc *op = ((LtOp *)self)->op;
    PyObject *parts = PyList_New(0);
    for (int i = 0; parts && i < op->nargs; i++) {
        PyObject *s = op->defaults[i] ? PyUnicode_FromFormat("%s=%s", op->arg_names[i], op->defaults[i])
                                      : PyUnicode_FromString(op->arg_names[i]);
        if (!s || PyList_Append(parts, s) < 0)
            Py_CLEAR(parts);
        Py_XDECREF(s);
    }
    PyObject *sep = parts ? PyUnicode_FromString(", ") : NULL;
    PyObject *joined = sep ? PyUnicode_Join(sep, parts) : NULL;
    PyObject *doc = joined ? PyUnicode_FromFormat("%s(%U): %s", op->name, joined, op->doc) : NULL;
    Py_XDECREF(parts), Py_XDECREF(sep), Py_XDECREF(joined);
    return doc;
}

static PyObject *op_repr(PyObject *self)
{
    return PyUnicode_FromFormat("<lazytensor op %s>", ((LtOp *)self)->op->name);
}

static PyGetSetDef op_getset[] = {
    {"__name__", op_name, NULL, NULL, NULL},
    {"__doc__", op_doc, NULL, NULL, NULL},
    {NULL, NULL, NULL, NULL, NULL},
};

static PyTypeObject LtOp_Type = {
    PyVarObject_HEAD_INIT(NULL, 0).tp_name = "lazytensor._C.Op",
    .tp_basicsize = sizeof(LtOp),
    /* METHOD_DESCRIPTOR: x.op(...) calls op(x, ...) without a bound method */
    .tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_HAVE_VECTORCALL | Py_TPFLAGS_METHOD_DESCRIPTOR,
    .tp_vectorcall_offset = offsetof(LtOp, vectorcall),
    .tp_call = PyVectorcall_Call,
    .tp_descr_get = op_get,
    .tp_repr = op_repr,
    .tp_getset = op_getset,
    .tp_doc = "An op of the C library's registry (lt_op_desc).",
};

static PyObject *make_op(const lt_op_desc *op)
{
    LtOp *o = PyObject_New(LtOp, &LtOp_Type);
    if (!o)
        return NULL;
    o->op = op;
    o->vectorcall = op_vectorcall;
    for (int i = 0; i < op->nargs; i++) {
        if (op->defaults[i] && lt_op_default(op, i, &o->defaults[i]) != LT_OK) {
            Py_DECREF(o);
            return ltpy_raise();
        }
    }
    return (PyObject *)o;
}

/* op as a method of Tensor, unless the type has an attribute of that name
 * of its own (the requires_grad property). */
static int add_method(const char *name, PyObject *op)
{
    PyObject *key = PyUnicode_FromString(name);
    int rc = key && PyDict_SetDefault(LtTensor_Type.tp_dict, key, op) ? 0 : -1;
    Py_XDECREF(key);
    return rc;
}

int ltpy_ops_init(PyObject *module)
{
    if (PyType_Ready(&LtOp_Type) < 0)
        return -1;
    for (int i = 0; i < lt_op_count(); i++) {
        const lt_op_desc *op = lt_op_at(i);
        PyObject *o = make_op(op);
        bool method = op->nargs > 0 && op->args[0] == LT_ARG_TENSOR && !strcmp(op->arg_names[0], "input");
        int rc = o ? PyModule_AddObjectRef(module, op->name, o) : -1;
        if (rc == 0 && method)
            rc = add_method(op->name, o);
        Py_XDECREF(o);
        if (rc < 0)
            return -1;
    }
    PyType_Modified(&LtTensor_Type);
    return 0;
}
