/* nn.c - the C library's layers (lt_module) and optimizers as Python
 * objects, safetensors and the IDX dataset loader. The calls on layers
 * and optimizers (nn_linear, module_forward, optim_step, ...) are rows of
 * the op registry (ops.c); this file gives them the objects to carry. */
#include "ltpy.h"

#include <stdlib.h>

/* ---- CModule: one C layer (or a tree of them) ------------------------- */

typedef struct {
    PyObject_HEAD
    lt_module *m;
} LtModule;

static void module_dealloc(PyObject *self)
{
    lt_module_free(((LtModule *)self)->m);
    lt_clear_error();
    Py_TYPE(self)->tp_free(self);
}

static PyTypeObject LtModule_Type;

PyObject *ltpy_wrap_module(lt_module *m)
{
    if (!m)
        return ltpy_raise();
    LtModule *o = PyObject_New(LtModule, &LtModule_Type);
    if (!o) {
        lt_module_free(m);
        return NULL;
    }
    o->m = m;
    return (PyObject *)o;
}

#define MOD(self) (((LtModule *)(self))->m)

/* A Python object of class cls for handle t, holding one new reference. */
static PyObject *instance(PyObject *cls, lt_tensor *t)
{
    LtTensor *o = (LtTensor *)((PyTypeObject *)cls)->tp_alloc((PyTypeObject *)cls, 0);
    if (o)
        o->t = lt_retain(t);
    return (PyObject *)o;
}

/* state(param_cls, buffer_cls): [(name, tensor, is_parameter)], the
 * module's own handles (so gradients land where Python sees them). */
static PyObject *module_state(PyObject *self, PyObject *args)
{
    PyObject *pcls, *bcls;
    if (!PyArg_ParseTuple(args, "OO", &pcls, &bcls))
        return NULL;
    if (!PyType_Check(pcls) || !PyType_Check(bcls) || !PyType_IsSubtype((PyTypeObject *)pcls, &LtTensor_Type) ||
        !PyType_IsSubtype((PyTypeObject *)bcls, &LtTensor_Type))
        return PyErr_Format(PyExc_TypeError, "expected tensor classes");
    int np = lt_module_parameters(MOD(self), NULL, NULL, 0), n = lt_module_state(MOD(self), NULL, NULL, 0);
    if (np < 0 || n < 0)
        return ltpy_raise();
    lt_tensor **ts = PyMem_Calloc((size_t)n + 1, sizeof *ts);
    const char **names = PyMem_Calloc((size_t)n + 1, sizeof *names);
    PyObject *list = ts && names ? PyList_New(0) : PyErr_NoMemory();
    if (list)
        lt_module_state(MOD(self), ts, names, n);
    for (int i = 0; list && i < n; i++) {
        PyObject *t = instance(i < np ? pcls : bcls, ts[i]);
        PyObject *item = t ? Py_BuildValue("(sNO)", names[i], t, i < np ? Py_True : Py_False) : NULL;
        if (!item || PyList_Append(list, item) < 0)
            Py_CLEAR(list);
        Py_XDECREF(item);
    }
    PyMem_Free(ts);
    PyMem_Free(names);
    return list;
}

static PyObject *module_kind(PyObject *self, void *c)
{
    (void)c;
    const char *k = lt_module_kind(MOD(self));
    return k ? PyUnicode_FromString(k) : ltpy_raise();
}

static PyMethodDef module_methods[] = {
    {"state", module_state, METH_VARARGS, NULL},
    {NULL, NULL, 0, NULL},
};

static PyGetSetDef module_getset[] = {
    {"kind", module_kind, NULL, NULL, NULL},
    {NULL, NULL, NULL, NULL, NULL},
};

static PyTypeObject LtModule_Type = {
    PyVarObject_HEAD_INIT(NULL, 0).tp_name = "lazytensor._C.CModule",
    .tp_basicsize = sizeof(LtModule),
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_dealloc = module_dealloc,
    .tp_methods = module_methods,
    .tp_getset = module_getset,
    .tp_doc = "A layer of the C library (lt_module).",
};

/* ---- optimizers -------------------------------------------------------------- */

typedef struct {
    PyObject_HEAD
    lt_optimizer *o;
} LtOptim;

static void optim_dealloc(PyObject *self)
{
    lt_optim_free(((LtOptim *)self)->o);
    Py_TYPE(self)->tp_free(self);
}


static PyTypeObject LtOptim_Type = {
    PyVarObject_HEAD_INIT(NULL, 0).tp_name = "lazytensor._C.COptimizer",
    .tp_basicsize = sizeof(LtOptim),
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_dealloc = optim_dealloc,
    .tp_doc = "An optimizer of the C library (lt_optimizer).",
};

lt_module *ltpy_module_arg(PyObject *o)
{
    if (PyObject_TypeCheck(o, &LtModule_Type))
        return MOD(o);
    PyErr_Format(PyExc_TypeError, "expected a C layer (CModule), got %.100s", Py_TYPE(o)->tp_name);
    return NULL;
}

lt_optimizer *ltpy_optimizer_arg(PyObject *o)
{
    if (PyObject_TypeCheck(o, &LtOptim_Type))
        return ((LtOptim *)o)->o;
    PyErr_Format(PyExc_TypeError, "expected a C optimizer (COptimizer), got %.100s", Py_TYPE(o)->tp_name);
    return NULL;
}

PyObject *ltpy_wrap_optimizer(lt_optimizer *o)
{
    if (!o)
        return ltpy_raise();
    LtOptim *p = PyObject_New(LtOptim, &LtOptim_Type);
    if (!p) {
        lt_optim_free(o);
        return NULL;
    }
    p->o = o;
    return (PyObject *)p;
}

/* ---- safetensors: (path, names, tensors) --------------------------------------- */

typedef lt_status (*st_fn)(const char *, lt_tensor *const *, const char *const *, int);
static PyObject *safetensors(PyObject *args, st_fn f)
{
    const char *path;
    PyObject *names, *tensors;
    int n;
    if (!PyArg_ParseTuple(args, "sOO", &path, &names, &tensors))
        return NULL;
    lt_tensor **ts = ltpy_tensor_list(tensors, &n);
    if (!ts)
        return NULL;
    const char **ns = PyMem_Calloc((size_t)n + 1, sizeof *ns);
    bool ok = ns && PySequence_Check(names) && PySequence_Size(names) == n;
    for (int i = 0; ok && i < n; i++) {
        PyObject *s = PySequence_GetItem(names, i);
        ns[i] = s ? PyUnicode_AsUTF8(s) : NULL; /* the list keeps the string alive */
        Py_XDECREF(s);
        ok = ns[i] != NULL;
    }
    PyObject *r = NULL;
    if (!ok && !PyErr_Occurred())
        PyErr_SetString(PyExc_ValueError, "names and tensors must have the same length");
    else if (ok && ltpy_check(f(path, ts, ns, n)) == 0)
        r = Py_NewRef(Py_None);
    PyMem_Free(ns);
    PyMem_Free(ts);
    return r;
}
static PyObject *n_save_safetensors(PyObject *s, PyObject *a) { (void)s; return safetensors(a, lt_save_safetensors); }
static PyObject *n_load_safetensors(PyObject *s, PyObject *a) { (void)s; return safetensors(a, lt_load_safetensors); }

/* ---- IDX datasets ------------------------------------------------------------- */

typedef struct {
    PyObject_HEAD
    lt_dataset d;
    int64_t *perm; /* NULL: in file order */
} LtDataset;

static void dataset_dealloc(PyObject *self)
{
    LtDataset *o = (LtDataset *)self;
    lt_dataset_free(&o->d);
    PyMem_Free(o->perm);
    Py_TYPE(self)->tp_free(self);
}

static PyObject *dataset_shuffle(PyObject *self, PyObject *arg)
{
    LtDataset *o = (LtDataset *)self;
    unsigned long long seed = PyLong_AsUnsignedLongLongMask(arg);
    if (PyErr_Occurred())
        return NULL;
    if (!o->perm && !(o->perm = PyMem_Calloc((size_t)o->d.count + 1, sizeof *o->perm)))
        return PyErr_NoMemory();
    if (ltpy_check(lt_dataset_shuffle(&o->d, seed, o->perm)) < 0)
        return NULL;
    Py_RETURN_NONE;
}

/* batch(index, size, mean, std, device) -> (images, labels) or None past the end */
static PyObject *dataset_batch(PyObject *self, PyObject *args)
{
    LtDataset *o = (LtDataset *)self;
    long long index, size;
    double mean, std;
    PyObject *dev;
    lt_device d;
    if (!PyArg_ParseTuple(args, "LLddO", &index, &size, &mean, &std, &dev) || ltpy_parse_device(dev, &d) < 0)
        return NULL;
    lt_tensor *x = NULL, *y = NULL;
    int64_t b = lt_dataset_batch(&o->d, o->perm, index, size, mean, std, d, &x, &y);
    if (b < 0)
        return ltpy_raise();
    if (b == 0)
        Py_RETURN_NONE;
    PyObject *px = ltpy_wrap(x), *py = px ? ltpy_wrap(y) : (lt_release(y), NULL);
    if (!py) {
        Py_XDECREF(px);
        return NULL;
    }
    return Py_BuildValue("(NN)", px, py);
}

static PyObject *dataset_len(PyObject *self, void *c)
{
    (void)c;
    return PyLong_FromLongLong(((LtDataset *)self)->d.count);
}

static PyMethodDef dataset_methods[] = {
    {"shuffle", dataset_shuffle, METH_O, "orders the batches by a permutation from seed"},
    {"batch", dataset_batch, METH_VARARGS, NULL},
    {NULL, NULL, 0, NULL},
};

static PyGetSetDef dataset_getset[] = {
    {"count", dataset_len, NULL, "number of examples", NULL},
    {NULL, NULL, NULL, NULL, NULL},
};

static PyTypeObject LtDataset_Type = {
    PyVarObject_HEAD_INIT(NULL, 0).tp_name = "lazytensor._C.IdxDataset",
    .tp_basicsize = sizeof(LtDataset),
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_dealloc = dataset_dealloc,
    .tp_methods = dataset_methods,
    .tp_getset = dataset_getset,
    .tp_doc = "An IDX image dataset in memory (lt_dataset).",
};

static PyObject *n_load_idx(PyObject *self, PyObject *args)
{
    (void)self;
    const char *images, *labels;
    if (!PyArg_ParseTuple(args, "ss", &images, &labels))
        return NULL;
    LtDataset *o = PyObject_New(LtDataset, &LtDataset_Type);
    if (!o)
        return NULL;
    o->perm = NULL;
    if (lt_dataset_load_idx(images, labels, &o->d) != LT_OK) {
        Py_DECREF(o); /* d was zeroed on error: freeing it is a no-op */
        return ltpy_raise();
    }
    return (PyObject *)o;
}

PyMethodDef ltpy_nn_functions[] = {
#define F(name) {#name, n_##name, METH_VARARGS, NULL},
    F(save_safetensors) F(load_safetensors) F(load_idx)
#undef F
    {NULL, NULL, 0, NULL},
};

int ltpy_nn_init(PyObject *module)
{
    PyTypeObject *types[] = {&LtModule_Type, &LtOptim_Type, &LtDataset_Type};
    for (int i = 0; i < 3; i++)
        if (PyType_Ready(types[i]) < 0)
            return -1;
    (void)module;
    return 0;
}
